//! A conservative parallel run over partitions (issue 24; design in `docs/ARCHITECTURE.md` §9):
//! each partition is a [`Model`] with a [`Scheduler`] of its own, and time advances in
//! *windows* of the lookahead `L`, the least delay of anything one partition can cause in
//! another. In a window starting at `W` (the earliest pending event anywhere) every partition
//! handles its events before `W + L` alone, on whichever thread runs it; what it scheduled for
//! other partitions waits in its outbox, and at the window's end the outboxes are handed over
//! in partition order. Nothing handed over can be due before `W + L`, so no partition ever
//! receives an event in its past.
//!
//! Why windows and not null messages: the fabrics this serves have one lookahead everywhere (a
//! hop's propagation delay), large against the work in it, so a barrier per window is cheap
//! and there is nothing to gain from each pair of partitions advancing at its own pace.
//!
//! The result is the same for any number of threads by construction: a partition's work in a
//! window depends only on its own state and queue, the hand-over order is fixed, and the
//! queue's canonical order ([`sched`](crate::sched) module docs) makes where a handed-over event
//! lands among the local ones a function of the event, not of the hand-over. The model must
//! keep its side of that bargain: only events that carry their own tie (a fabric's link
//! arrivals) may cross, each partition's outbox in the order it scheduled them.
//!
//! Threads are scoped to each window (spawned and joined per window: a few tens of
//! microseconds, small against windows that each hold thousands of events); the calling
//! thread runs one share itself.

use crate::{Budget, BudgetExceeded, Model, Scheduler, Tie};
use units::{SimDuration, SimTime};

/// A partition of a model split for [`run_partitioned`].
pub trait Partitioned: Model {
    /// What one partition hands another: an event with whatever state travels with it (a
    /// fabric's frame crossing a link carries the frame, which the receiving partition keeps
    /// in its own packet store).
    type Parcel: Send;

    /// Moves what this partition made for others since the last call into `out`, as
    /// (destination partition, time, parcel), in the order it made them. Each is due at least
    /// the lookahead after the event whose handling made it.
    fn drain_outbox(&mut self, out: &mut Vec<(usize, SimTime, Self::Parcel)>);

    /// Takes a parcel another partition made, due at `at`: schedules its event(s) on `sched`,
    /// none before `at`.
    fn deliver(&mut self, at: SimTime, parcel: Self::Parcel, sched: &mut Scheduler<Self::Event>);
}

/// What a partitioned run did.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct PartitionedStats {
    /// Events handled, every partition together.
    pub events: u64,
    /// Windows run.
    pub windows: u64,
    /// Events handed from one partition to another.
    pub crossed: u64,
}

/// Runs `parts` (partition `i` with scheduler `scheds[i]`; borrowed, so a caller whose
/// partitions live apart need not gather them) in windows of `lookahead` until no
/// event is pending or the next lies after `until`, on up to `threads` threads (1 runs them in
/// turn on the caller's). `budget.sim_time` and `budget.events` hold for the run as a whole.
///
/// Panics if `parts` and `scheds` differ in length, if `lookahead` is zero, or if a partition
/// hands over an event for a partition that does not exist or due inside the window it was
/// scheduled in (a model that broke the contract: the run would not be reproducible).
pub fn run_partitioned<M>(
    parts: &mut [&mut M],
    scheds: &mut [&mut Scheduler<M::Event>],
    lookahead: SimDuration,
    until: SimTime,
    threads: usize,
    budget: &Budget,
) -> Result<PartitionedStats, BudgetExceeded>
where
    M: Partitioned + Send,
    M::Event: Tie + Send,
{
    assert_eq!(parts.len(), scheds.len(), "a scheduler per partition");
    assert!(
        lookahead > SimDuration::ZERO,
        "a zero lookahead allows no window"
    );
    let limit_time = SimTime::ZERO
        .checked_add(budget.sim_time)
        .unwrap_or(SimTime::MAX);
    let threads = threads.clamp(1, parts.len().max(1));
    let mut stats = PartitionedStats::default();
    let mut crossing = Vec::new();
    while let Some(start) = scheds.iter().filter_map(|s| s.peek_time()).min() {
        if start > until {
            break;
        }
        if start > limit_time {
            return Err(BudgetExceeded::SimTime {
                limit: budget.sim_time,
            });
        }
        // The window's last instant (`start + lookahead` is the first a crossing may land on).
        let end = start
            .checked_add(lookahead - SimDuration::from_ps(1))
            .unwrap_or(SimTime::MAX)
            .min(until);
        // What the run has left, for each partition's share of the window (a window that
        // together runs past it fails after it, below).
        let window = Budget {
            events: budget.events.saturating_sub(stats.events),
            sim_time: budget.sim_time,
            ..Budget::UNLIMITED
        };
        let results = run_window(parts, scheds, end, threads, &window);
        for r in results {
            match r {
                Ok(r) => stats.events += r.events,
                // A window's budget is what the run had left: the error names the run's.
                Err(BudgetExceeded::Events { .. }) => {
                    return Err(BudgetExceeded::Events {
                        limit: budget.events,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        stats.windows += 1;
        for p in parts.iter_mut() {
            p.drain_outbox(&mut crossing);
        }
        stats.crossed += crossing.len() as u64;
        for (dest, at, parcel) in crossing.drain(..) {
            assert!(at > end, "an event handed over inside its own window");
            parts[dest].deliver(at, parcel, scheds[dest]);
        }
        if stats.events > budget.events {
            return Err(BudgetExceeded::Events {
                limit: budget.events,
            });
        }
    }
    Ok(stats)
}

/// One window: every partition to `end`, `threads` at a time.
fn run_window<M>(
    parts: &mut [&mut M],
    scheds: &mut [&mut Scheduler<M::Event>],
    end: SimTime,
    threads: usize,
    budget: &Budget,
) -> Vec<Result<crate::RunStats, BudgetExceeded>>
where
    M: Partitioned + Send,
    M::Event: Tie + Send,
{
    if threads == 1 {
        return parts
            .iter_mut()
            .zip(scheds.iter_mut())
            .map(|(m, s)| crate::run_until(&mut **m, &mut **s, budget, end))
            .collect();
    }
    let share = parts.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let mut pairs = parts
            .chunks_mut(share)
            .zip(scheds.chunks_mut(share))
            .map(|(ms, ss)| {
                move || {
                    ms.iter_mut()
                        .zip(ss.iter_mut())
                        .map(|(m, s)| crate::run_until(&mut **m, &mut **s, budget, end))
                        .collect::<Vec<_>>()
                }
            });
        let mine = pairs.next();
        let others: Vec<_> = pairs.map(|work| scope.spawn(work)).collect();
        let mut out = mine.map(|mut work| work()).unwrap_or_default();
        for h in others {
            out.extend(h.join().expect("a partition's thread panicked"));
        }
        out
    })
}
