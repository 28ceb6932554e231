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
//! The threads are a pool kept between windows and between runs ([`Workers`]): a thread
//! started per window cost more than many windows take (its allocator began on fresh pages,
//! which the kernel zeroes), and a caller that runs a window at a time (a fleet's loop that
//! looks at its completions every microsecond) would start one per window.

use crate::{Budget, BudgetExceeded, Model, Scheduler, Tie};
use std::sync::Arc;
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

/// Threads to run partitions on, kept from one window (and one run) to the next.
pub struct Workers {
    pool: Option<Arc<rayon_core::ThreadPool>>,
    threads: usize,
    /// Windows after one of fewer events run on the caller's thread.
    from_events: u64,
    /// The events the last window of the last run handled (a caller that runs one window
    /// per call is judged by its last call's).
    last_window: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Workers({})", self.threads)
    }
}

impl Workers {
    /// `threads` threads (1 or 0: none, everything runs on the caller's). If the system
    /// cannot start them, the caller's thread does the work alone: the results are the same.
    pub fn new(threads: usize) -> Workers {
        if threads <= 1 {
            return Workers {
                pool: None,
                threads: 1,
                from_events: PARALLEL_FROM_EVENTS,
                last_window: Default::default(),
            };
        }
        match rayon_core::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("rdmalab-partition-{i}"))
            .build()
        {
            Ok(pool) => Workers {
                pool: Some(Arc::new(pool)),
                threads,
                from_events: PARALLEL_FROM_EVENTS,
                last_window: Default::default(),
            },
            Err(_) => Workers {
                pool: None,
                threads: 1,
                from_events: PARALLEL_FROM_EVENTS,
                last_window: Default::default(),
            },
        }
    }

    /// [`Workers::new`] that runs every window on the workers, however little it holds (a
    /// test of the threads' hand-over on small models).
    pub fn eager(threads: usize) -> Workers {
        Workers {
            from_events: 0,
            ..Workers::new(threads)
        }
    }

    /// The threads that run windows.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

/// Runs `parts` (partition `i` with scheduler `scheds[i]`; borrowed, so a caller whose
/// partitions live apart need not gather them) in windows of `lookahead` until no
/// event is pending or the next lies after `until`, on `workers` (`None`: in turn on the
/// caller's thread). `budget.sim_time` and `budget.events` hold for the run as a whole.
///
/// Panics if `parts` and `scheds` differ in length, if `lookahead` is zero, or if a partition
/// hands over an event for a partition that does not exist or due inside the window it was
/// scheduled in (a model that broke the contract: the run would not be reproducible).
pub fn run_partitioned<M>(
    parts: &mut [&mut M],
    scheds: &mut [&mut Scheduler<M::Event>],
    lookahead: SimDuration,
    until: SimTime,
    workers: Option<&Workers>,
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
    let n = parts.len();
    let limit_time = SimTime::ZERO
        .checked_add(budget.sim_time)
        .unwrap_or(SimTime::MAX);
    let pool = workers
        .and_then(|w| w.pool.as_deref().map(|p| (p, w.from_events)))
        .filter(|_| n > 1);
    let mut stats = PartitionedStats::default();
    let mut mail = Mail::new(n);
    // The events the last window handled: a window after a quiet one (a setup's exchange,
    // a run's tail) is run in turn on the caller's thread, where it costs less than waking
    // the workers. Which thread runs a window changes nothing in the run.
    use std::sync::atomic::Ordering::Relaxed;
    let mut last_window = workers.map_or(0, |w| w.last_window.load(Relaxed));
    let result = loop {
        let Some(start) = scheds.iter().filter_map(|s| s.peek_time()).min() else {
            break Ok(());
        };
        if start > until {
            break Ok(());
        }
        if start > limit_time {
            break Err(BudgetExceeded::SimTime {
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
        let on = pool
            .filter(|(_, from)| last_window >= *from)
            .map(|(p, _)| p);
        let results = run_window(parts, scheds, &mut mail, end, on, &window);
        let mut failed = None;
        last_window = 0;
        for r in results {
            match r {
                Ok((r, crossed)) => {
                    last_window += r.events;
                    stats.crossed += crossed;
                }
                // A window's budget is what the run had left: the error names the run's.
                Err(BudgetExceeded::Events { .. }) => {
                    failed.get_or_insert(BudgetExceeded::Events {
                        limit: budget.events,
                    });
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        stats.events += last_window;
        stats.windows += 1;
        if let Some(e) = failed {
            break Err(e);
        }
        if stats.events > budget.events {
            break Err(BudgetExceeded::Events {
                limit: budget.events,
            });
        }
    };
    if let Some(w) = workers {
        w.last_window.store(last_window, Relaxed);
    }
    // Between runs every pending event is in its partition's queue (a window that failed
    // may have left some posted).
    mail.deliver_all(parts, scheds);
    result.map(|()| stats)
}

/// A window whose predecessor handled fewer events than this runs on the caller's thread.
// source: measured on the 2-core box, 2026-12-06: a 256-host ring all-reduce (64 MiB, 1 µs
// lookahead, its windows 500 ns of CQ polling with some hundreds to a few thousand events)
// took 15.0 s wall on two threads from 2,048 events and 9.4 s from 256 (12.6 s on one); from
// 0, 13.3 s (windows of a handful of events cost more on the workers than they take). The
// 1024-host permutation, 6 ABBA pairs: 1.66 s from 256 against 1.73 s from 2,048.
const PARALLEL_FROM_EVENTS: u64 = 256;

/// The parcels between partitions of one window: what partition `s` made for `d` waits in
/// `boxes[s * n + d]` until every partition has run the window, then `d` takes it (on its
/// own thread), oldest source first.
struct Mail<P> {
    n: usize,
    boxes: Vec<Mailbox<P>>,
}

/// Parcels from one partition to another: (due, parcel), in the order they were made.
type Mailbox<P> = std::sync::Mutex<Vec<(SimTime, P)>>;

impl<P> Mail<P> {
    fn new(n: usize) -> Mail<P> {
        Mail {
            n,
            boxes: (0..n * n).map(|_| Mailbox::default()).collect(),
        }
    }

    /// Hands any parcel still waiting to its partition (a window that failed part way).
    fn deliver_all<M>(&mut self, parts: &mut [&mut M], scheds: &mut [&mut Scheduler<M::Event>])
    where
        M: Partitioned<Parcel = P>,
    {
        for (d, (m, s)) in parts.iter_mut().zip(scheds.iter_mut()).enumerate() {
            take_mail(&self.boxes, self.n, d, &mut **m, &mut **s);
        }
    }
}

/// Partition `d` takes its parcels from `side`, source by source, each source's in order.
fn take_mail<M: Partitioned>(
    side: &[Mailbox<M::Parcel>],
    n: usize,
    d: usize,
    model: &mut M,
    sched: &mut Scheduler<M::Event>,
) {
    for s in 0..n {
        let mut b = side[s * n + d].lock().expect("a mailbox is not poisoned");
        for (at, parcel) in b.drain(..) {
            model.deliver(at, parcel, sched);
        }
    }
}

/// Partition `s` puts what it made in the window ending at `end` on `side`; returns how many
/// parcels and the earliest's time. Each destination's parcels go in with one lock, in the
/// order they were made.
fn post_mail<M: Partitioned>(
    side: &[Mailbox<M::Parcel>],
    n: usize,
    s: usize,
    model: &mut M,
    end: SimTime,
) -> (u64, Option<SimTime>) {
    let mut out = Vec::new();
    model.drain_outbox(&mut out);
    let count = out.len() as u64;
    let mut earliest: Option<SimTime> = None;
    let mut by_dest: Vec<Vec<(SimTime, M::Parcel)>> = (0..n).map(|_| Vec::new()).collect();
    for (d, at, parcel) in out {
        assert!(d < n, "a parcel for partition {d} of {n}");
        assert!(at > end, "an event handed over inside its own window");
        earliest = Some(earliest.map_or(at, |e| e.min(at)));
        by_dest[d].push((at, parcel));
    }
    for (d, parcels) in by_dest.into_iter().enumerate() {
        if !parcels.is_empty() {
            let mut b = side[s * n + d].lock().expect("a mailbox is not poisoned");
            if b.is_empty() {
                *b = parcels;
            } else {
                b.extend(parcels);
            }
        }
    }
    (count, earliest)
}

/// A partition lent to a worker for one window.
struct Slot<'a, M: Model> {
    index: usize,
    model: &'a mut M,
    sched: &'a mut Scheduler<M::Event>,
}

/// One window: every partition runs to `end` and posts what it made for others; once all
/// have posted, every partition takes what was posted for it (source by source). Each
/// partition on a thread of `pool`, the two halves apart by a barrier (or all in turn). Per
/// partition: the run's stats and the parcels it posted.
fn run_window<M>(
    parts: &mut [&mut M],
    scheds: &mut [&mut Scheduler<M::Event>],
    mail: &mut Mail<M::Parcel>,
    end: SimTime,
    pool: Option<&rayon_core::ThreadPool>,
    budget: &Budget,
) -> Vec<Result<(crate::RunStats, u64), BudgetExceeded>>
where
    M: Partitioned + Send,
    M::Event: Tie + Send,
{
    let n = parts.len();
    let boxes = &mail.boxes;
    let Some(pool) = pool else {
        let done: Vec<_> = parts
            .iter_mut()
            .zip(scheds.iter_mut())
            .enumerate()
            .map(|(i, (m, s))| {
                let r = crate::run_until(&mut **m, &mut **s, budget, end);
                let (crossed, _) = post_mail(boxes, n, i, &mut **m, end);
                r.map(|r| (r, crossed))
            })
            .collect();
        for (d, (m, s)) in parts.iter_mut().zip(scheds.iter_mut()).enumerate() {
            take_mail(boxes, n, d, &mut **m, &mut **s);
        }
        return done;
    };
    // Partition `i` always runs on worker `i % threads` (a broadcast, not work stealing):
    // its state stays in that thread's caches and its allocations in that thread's heap.
    let threads = pool.current_num_threads().max(1);
    let mut shares: Vec<Vec<Slot<'_, M>>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, (m, s)) in parts.iter_mut().zip(scheds.iter_mut()).enumerate() {
        shares[i % threads].push(Slot {
            index: i,
            model: m,
            sched: s,
        });
    }
    let shares: Vec<std::sync::Mutex<Vec<Slot<'_, M>>>> =
        shares.into_iter().map(std::sync::Mutex::new).collect();
    let posted = SpinBarrier::new(threads);
    let done: Vec<_> = pool
        .broadcast(|ctx| {
            let mut mine = shares[ctx.index()]
                .lock()
                .expect("a share is taken by one thread");
            // A panic (a model's bug, a broken contract) must not leave the other threads
            // waiting at the barrier for ever: it is held until every thread has passed it,
            // then raised again (the broadcast passes it on to the caller).
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                mine.iter_mut()
                    .map(|slot| {
                        let r = crate::run_until(&mut *slot.model, &mut *slot.sched, budget, end);
                        let (crossed, _) = post_mail(boxes, n, slot.index, &mut *slot.model, end);
                        (slot.index, r.map(|r| (r, crossed)))
                    })
                    .collect::<Vec<_>>()
            }));
            posted.wait();
            let ran = ran.unwrap_or_else(|p| std::panic::resume_unwind(p));
            for slot in mine.iter_mut() {
                take_mail(boxes, n, slot.index, &mut *slot.model, &mut *slot.sched);
            }
            ran
        })
        .into_iter()
        .flatten()
        .collect();
    let mut results: Vec<Option<Result<(crate::RunStats, u64), BudgetExceeded>>> =
        (0..n).map(|_| None).collect();
    for (i, r) in done {
        results[i] = Some(r);
    }
    results
        .into_iter()
        .map(|r| r.expect("every partition's share of the window ran"))
        .collect()
}

/// A barrier for a few threads that each arrive within microseconds of the others: it spins
/// (a futex sleep and wake-up would take longer than most waits), then yields.
struct SpinBarrier {
    threads: usize,
    arrived: std::sync::atomic::AtomicUsize,
}

impl SpinBarrier {
    fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads,
            arrived: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Returns once all `threads` have called it (each calls it once).
    fn wait(&self) {
        use std::sync::atomic::Ordering::{AcqRel, Acquire};
        self.arrived.fetch_add(1, AcqRel);
        let mut spins = 0u32;
        while self.arrived.load(Acquire) < self.threads {
            if spins < 10_000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}
