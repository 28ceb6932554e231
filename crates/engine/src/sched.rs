//! The scheduler and the event loop.
//!
//! A [`Model`] is the whole simulated world (a fabric, hosts, transports) behind one `handle`
//! method. The [`Scheduler`] owns the clock and the [`EventQueue`]; models schedule new events
//! through it and never see the queue itself. [`run`] pops events in canonical order until the
//! queue empties or the model says [`Step::Stop`], enforcing a [`Budget`].
//!
//! # The canonical order
//!
//! Events pop by time; at one instant by their [`Tie`]; with equal ties, first in, first out.
//! The simulator's ties (`fabric::FabricEvent`'s) are 0 for every event but a frame arriving
//! over a link, which gets its port's number plus one: at one instant the work on each side
//! goes first, in the order it was scheduled, then the arrivals, port by port, each port's in
//! the order its one peer sent them. That makes the order a function of the run alone, not of
//! which node got to do its work first — what lets a parallel engine (issue 24) split a
//! fabric into partitions that each handle their own events and reproduce the
//! single-threaded run exactly. Why it holds, given that a link is the only way one node's
//! work reaches another's (no handler schedules a non-arrival event for another node):
//! - Events with tie 0 at a node are scheduled by its own partition, in that partition's
//!   order of work; a single-threaded run interleaves other partitions' tie-0 events among
//!   them, but nothing at one instant connects the two, so each partition sees its own in the
//!   same order either way.
//! - Arrivals at a port are scheduled only by the node at the link's far end, in its order of
//!   work, and at one instant they are ordered by port, never by which partition pushed first.
//!
//! Until issue 24 every tie was decided by global push order, which no partitioned run can
//! reproduce. A fixed rule has a fixed bias: two frames arriving at one switch at the same
//! picosecond from two ports are taken lower port first (a hardware arbiter would alternate;
//! exact ties come from identical links and frame sizes).
//!
//! The model's state and its scheduler are two values: a handler takes `&mut self` and
//! `&mut Scheduler` side by side, so a model never holds its own clock. A world that keeps the
//! two in one struct (as the simulator's `World` does, for its API between runs) is driven
//! through [`Simulation`], which borrows them apart for each event and can look at the whole
//! after each one ([`run_simulation`]); [`run`] and [`run_until`] drive a model and a
//! scheduler given separately.
//!
//! There are no globals: two simulations in one process (a sweep on rayon, a web server
//! running requests in parallel) share nothing.

use crate::{Budget, BudgetExceeded, EventQueue, Tie};
use std::time::{Duration, Instant};
use units::{SimDuration, SimTime};

/// Whether the run goes on after an event.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Step {
    /// Keep processing events.
    Continue,
    /// The model has what it wanted (e.g. every flow finished); end the run now.
    Stop,
}

/// A simulated world driven by events.
pub trait Model {
    /// The events this world schedules for itself. For a run whose order does not depend on
    /// which part of the model worked first, their [`Tie`] must set apart the events that can
    /// be scheduled by another part (a frame arriving over a link), by where they arrive
    /// (module docs). The default tie (0) is plain first in, first out.
    type Event: Tie;
    /// Processes one event at `sched.now()`.
    fn handle(&mut self, ev: Self::Event, sched: &mut Scheduler<Self::Event>) -> Step;
    /// Called with the event that comes after the one about to be handled (as the queue
    /// stands before that one runs): a chance to [`prefetch`](fn@crate::prefetch) what it will
    /// read, including lines found by reading the ones [`prefetch_ahead`](Model::prefetch_ahead)
    /// asked for an event earlier. It must not change anything; by default it does nothing.
    #[inline]
    fn prefetch(&self, _next: &Self::Event) {}
    /// Called with a guess at the event after that one ([`EventQueue::peek_after_next`]): a
    /// chance to prefetch the lines its handling starts from, without reading anything cold
    /// (reading would stall the loop on the very miss being avoided). By default nothing.
    #[inline]
    fn prefetch_ahead(&self, _after_next: &Self::Event) {}
    /// Bytes the model's state holds, as it counts them (records it keeps, packets in
    /// flight, buffers): checked against [`Budget::memory_bytes`] every few thousand events.
    /// By default nothing.
    fn held_bytes(&self) -> u64 {
        0
    }
}

/// The clock and the pending events of one simulation.
pub struct Scheduler<E> {
    queue: EventQueue<E>,
    now: SimTime,
    processed: u64,
}

impl<E: Tie> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Tie> Scheduler<E> {
    /// A scheduler at time zero with nothing pending.
    pub fn new() -> Self {
        Scheduler {
            queue: EventQueue::new(),
            now: SimTime::ZERO,
            processed: 0,
        }
    }
    /// The current simulated time: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Schedules `ev` at `at`, which must not be in the past (a bug in the caller otherwise).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, ev: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        self.queue.push(at, ev);
    }
    /// Schedules `ev` after `delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimDuration, ev: E) {
        self.queue.push(self.now + delay, ev);
    }
    /// Time of the next pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.queue.peek_time()
    }
    /// Moves the clock forward to `t` with nothing happening, so that calls made next (an
    /// application posting work between runs) happen at `t`. Never moves backwards or past a
    /// pending event.
    pub fn advance_to(&mut self, t: SimTime) {
        let limit = self.queue.peek_time().unwrap_or(SimTime::MAX);
        self.now = self.now.max(t.min(limit));
    }
    /// Events waiting.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
    /// Events processed since the scheduler was created.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }
}

/// What a finished run did.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RunStats {
    /// Events processed by this call to [`run`].
    pub events: u64,
    /// Simulated time when the run ended.
    pub end_time: SimTime,
    /// True when the model stopped the run; false when the queue ran dry.
    pub stopped_by_model: bool,
    /// Wall-clock time the run took (machine-dependent: report it, never compare it).
    pub wall: Duration,
}

impl RunStats {
    /// Events per wall-clock second.
    pub fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// How many events pass between two checks of the wall clock and of the memory a run holds
/// (a model whose runs are many short calls checks at the same interval across them).
pub const BUDGET_CHECK_EVERY: u64 = 1 << 14;

/// What one queued event costs the memory budget, bytes: its time, sequence and payload (a
/// world's events are 16 bytes, held at compile time) plus the queue's own bookkeeping.
const QUEUED_EVENT_BYTES: u64 = 32;

/// A model and its scheduler held in one value, as a world that answers calls between runs
/// keeps them (its API reads the clock and schedules events): [`run_simulation`] borrows the two
/// apart for each event, and after each one asks the whole whether the run is done, with the
/// clock at the event just handled.
pub trait Simulation {
    /// The state the events change.
    type Model: Model;
    /// The model and its scheduler, borrowed apart (two fields of one value: no copy, no
    /// indirection beyond the reference to the whole).
    fn parts(
        &mut self,
    ) -> (
        &mut Self::Model,
        &mut Scheduler<<Self::Model as Model>::Event>,
    );
    /// Whether the run ends after the event just handled, asked with the whole in view (the
    /// scheduler's `now()` is that event's time). By default never.
    #[inline]
    fn done(&mut self) -> bool {
        false
    }
}

/// A model and a scheduler given separately, as [`run`] and [`run_until`] take them.
impl<M: Model> Simulation for (&mut M, &mut Scheduler<M::Event>) {
    type Model = M;
    #[inline]
    fn parts(&mut self) -> (&mut M, &mut Scheduler<M::Event>) {
        (&mut *self.0, &mut *self.1)
    }
}

/// Runs `model` until its queue is empty or it returns [`Step::Stop`].
///
/// Fails, discarding the run, when the next event lies beyond `budget.sim_time` (measured from
/// time zero), when more than `budget.events` events would be processed, or when the run takes
/// longer than `budget.wall` on this machine.
pub fn run<M: Model>(
    model: &mut M,
    sched: &mut Scheduler<M::Event>,
    budget: &Budget,
) -> Result<RunStats, BudgetExceeded> {
    run_until(model, sched, budget, SimTime::MAX)
}

/// As [`run`], but also stops (successfully) before the first event later than `until`, which
/// stays queued.
pub fn run_until<M: Model>(
    model: &mut M,
    sched: &mut Scheduler<M::Event>,
    budget: &Budget,
    until: SimTime,
) -> Result<RunStats, BudgetExceeded> {
    run_simulation(&mut (model, sched), budget, until)
}

/// As [`run_until`], for a model and scheduler held together: the run also ends (as stopped by
/// the model) when [`Simulation::done`] says so after an event.
pub fn run_simulation<S: Simulation>(
    sim: &mut S,
    budget: &Budget,
    until: SimTime,
) -> Result<RunStats, BudgetExceeded> {
    let started = Instant::now();
    let limit_time = SimTime::ZERO
        .checked_add(budget.sim_time)
        .unwrap_or(SimTime::MAX);
    let mut events = 0u64;
    let mut stopped_by_model = false;
    loop {
        let (model, sched) = sim.parts();
        // `run` (no end time) skips this check; the peeks below for prefetching stay.
        if until != SimTime::MAX && sched.queue.peek_time().is_none_or(|next| next > until) {
            break;
        }
        let Some((at, ev)) = sched.queue.pop() else {
            break;
        };
        if at > limit_time {
            return Err(BudgetExceeded::SimTime {
                limit: budget.sim_time,
            });
        }
        if events == budget.events {
            return Err(BudgetExceeded::Events {
                limit: budget.events,
            });
        }
        events += 1;
        if events & (BUDGET_CHECK_EVERY - 1) == 0 {
            if started.elapsed() > budget.wall {
                return Err(BudgetExceeded::Wall {
                    limit: budget.wall,
                    events,
                });
            }
            if budget.memory_bytes != u64::MAX {
                let queued = sched.queue.len() as u64 * QUEUED_EVENT_BYTES;
                if model.held_bytes().saturating_add(queued) > budget.memory_bytes {
                    return Err(BudgetExceeded::Memory {
                        limit_bytes: budget.memory_bytes,
                    });
                }
            }
        }
        sched.now = at;
        sched.processed += 1;
        // Two events deep: the first lines of the one after next, then what the next one
        // reads behind its first lines (a port's queue head, a packet's payload).
        if let Some(after) = sched.queue.peek_after_next() {
            model.prefetch_ahead(after);
        }
        if let Some(next) = sched.queue.peek() {
            model.prefetch(next);
        }
        if model.handle(ev, sched) == Step::Stop || sim.done() {
            stopped_by_model = true;
            break;
        }
    }
    Ok(RunStats {
        events,
        end_time: sim.parts().1.now,
        stopped_by_model,
        wall: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ping-pong: each event schedules the next `gap` later until `left` runs out.
    struct Chain {
        gap: SimDuration,
        left: u64,
        seen: Vec<(SimTime, u32)>,
    }

    impl Model for Chain {
        type Event = u32;
        fn handle(&mut self, ev: u32, s: &mut Scheduler<u32>) -> Step {
            self.seen.push((s.now(), ev));
            if self.left == 0 {
                return Step::Continue;
            }
            self.left -= 1;
            s.schedule_in(self.gap, ev + 1);
            Step::Continue
        }
    }

    fn chain(left: u64) -> (Chain, Scheduler<u32>) {
        let mut s = Scheduler::new();
        s.schedule_at(SimTime::ZERO, 0);
        (
            Chain {
                gap: SimDuration::from_ns(1),
                left,
                seen: vec![],
            },
            s,
        )
    }

    #[test]
    fn runs_to_empty_queue() {
        let (mut m, mut s) = chain(9);
        let st = run(&mut m, &mut s, &Budget::UNLIMITED).unwrap();
        assert_eq!(st.events, 10);
        assert_eq!(st.end_time, SimTime::ZERO + SimDuration::from_ns(9));
        assert!(!st.stopped_by_model);
        assert_eq!(m.seen.last(), Some(&(SimTime::from_ps(9_000), 9)));
    }

    #[test]
    fn sim_time_budget_names_itself() {
        let (mut m, mut s) = chain(1_000);
        let b = Budget {
            sim_time: SimDuration::from_ns(100),
            ..Budget::UNLIMITED
        };
        let e = run(&mut m, &mut s, &b).unwrap_err();
        assert_eq!(
            e,
            BudgetExceeded::SimTime {
                limit: SimDuration::from_ns(100)
            }
        );
        assert!(
            e.to_string().contains("simulated-time budget of 100 ns"),
            "{e}"
        );
    }

    #[test]
    fn event_budget_names_itself() {
        let (mut m, mut s) = chain(1_000);
        let b = Budget {
            events: 50,
            ..Budget::UNLIMITED
        };
        let e = run(&mut m, &mut s, &b).unwrap_err();
        assert_eq!(e, BudgetExceeded::Events { limit: 50 });
        assert!(e.to_string().contains("50 events"));
        // Exactly at the budget is fine.
        let (mut m, mut s) = chain(49);
        assert_eq!(run(&mut m, &mut s, &b).unwrap().events, 50);
    }

    #[test]
    fn wall_budget_names_itself() {
        let (mut m, mut s) = chain(10_000_000);
        let b = Budget {
            wall: Duration::ZERO,
            ..Budget::UNLIMITED
        };
        let e = run(&mut m, &mut s, &b).unwrap_err();
        assert!(matches!(e, BudgetExceeded::Wall { .. }), "{e:?}");
        assert!(e.to_string().contains("wall-time budget"));
    }

    #[test]
    fn model_can_stop() {
        struct StopAt3;
        impl Model for StopAt3 {
            type Event = u8;
            fn handle(&mut self, ev: u8, s: &mut Scheduler<u8>) -> Step {
                s.schedule_in(SimDuration::from_ns(1), ev + 1);
                if ev == 3 { Step::Stop } else { Step::Continue }
            }
        }
        let mut s = Scheduler::new();
        s.schedule_at(SimTime::ZERO, 0u8);
        let st = run(&mut StopAt3, &mut s, &Budget::UNLIMITED).unwrap();
        assert!(st.stopped_by_model);
        assert_eq!(st.events, 4);
        assert_eq!(s.pending(), 1);
    }

    /// A chain and its scheduler in one value, done once the clock reaches `at`: `done` sees
    /// the clock of the event just handled.
    struct Held {
        chain: Chain,
        sched: Scheduler<u32>,
        at: SimTime,
        clocks: Vec<SimTime>,
    }

    impl Simulation for Held {
        type Model = Chain;
        fn parts(&mut self) -> (&mut Chain, &mut Scheduler<u32>) {
            (&mut self.chain, &mut self.sched)
        }
        fn done(&mut self) -> bool {
            self.clocks.push(self.sched.now());
            self.sched.now() >= self.at
        }
    }

    #[test]
    fn a_simulation_is_done_by_its_own_clock() {
        let (chain, sched) = chain(100);
        let mut h = Held {
            chain,
            sched,
            at: SimTime::from_ps(4_500),
            clocks: vec![],
        };
        let st = run_simulation(&mut h, &Budget::UNLIMITED, SimTime::MAX).unwrap();
        assert!(st.stopped_by_model);
        assert_eq!(st.events, 6, "events at 0..=5 ns");
        assert_eq!(st.end_time, SimTime::from_ps(5_000));
        let want: Vec<_> = (0..6).map(|i| SimTime::from_ps(i * 1_000)).collect();
        assert_eq!(h.clocks, want);
        assert_eq!(
            h.sched.pending(),
            1,
            "the next link of the chain stays queued"
        );
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn past_events_are_a_bug() {
        let mut s: Scheduler<u8> = Scheduler::new();
        s.schedule_at(SimTime::from_ps(10), 0);
        let _ = s.queue.pop();
        s.now = SimTime::from_ps(10);
        s.schedule_at(SimTime::from_ps(9), 1);
    }
}
