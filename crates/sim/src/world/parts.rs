//! A world split into partitions for a parallel run (issue 24; the design is
//! `docs/ARCHITECTURE.md` §9).
//!
//! Each partition is a whole [`State`] built from the same topology and settings, with a
//! scheduler of its own, and lives only for the nodes the [`Partitioning`] gives it: its
//! fabric's share (`fabric::Fabric::own_share`) and its hosts. The other hosts' entries in
//! its tables stay as built and are never touched, because no event for them ever reaches it:
//! a host's events are all its own NIC's, application's or port's, and a frame reaches another
//! partition only over a cut link, as a [`Crossing`] handed over at a window's end with the
//! payload bytes it carries (the pool entry moves with it).
//!
//! Between runs one partition is *in front* (`World::state` and `World::sched`) and the
//! others are parked here. A call on a host brings that host's partition to the front first
//! (`World::focus_host`), so the verbs and socket code reads and writes `self.state` as it
//! does in a world of one partition; a setting that holds for every host is applied to every
//! partition; a reading that spans hosts (counters, the next event) looks at all of them.
//! Every partition's clock reads the same time between runs.
//!
//! A run to a time ([`World::run_until`]) goes window by window (`engine::run_partitioned`)
//! on up to the threads asked for; a run to a condition goes instant by instant, the condition
//! looked at once every partition has finished the instant (what a single queue would have
//! done by then in any order: the partitions share no state).

use super::{Event, HostIx, PoolData, State, World, WorldError, store_data};
use engine::{Budget, BudgetExceeded, Partitioned, RunStats, Scheduler};
use fabric::partition::Partitioning;
use fabric::{Crossing, DataHandle, FabricConfig, Joined, Payload, Topology};
use host::HostProfile;
use units::{SimDuration, SimTime};
use verbs::NicProfile;

/// A partitioned world's partitions other than the one in front, and how it is split.
pub(super) struct Parts {
    /// The partition in `World::state` and `World::sched` now.
    focus: usize,
    /// Every partition but the one in front (`None` at `focus`).
    parked: Vec<Option<Parked>>,
    /// Partition of each host, by ordinal.
    of_host: Vec<u32>,
    split: Partitioning,
    lookahead: SimDuration,
    /// The threads windows run on, kept between runs.
    workers: engine::Workers,
}

struct Parked {
    state: State,
    sched: Scheduler<Event>,
}

impl Parts {
    /// Moves the parked partitions' clocks on to `t`.
    pub(super) fn advance_parked(&mut self, t: SimTime) {
        for p in self.parked.iter_mut().flatten() {
            if p.sched.now() < t {
                p.sched.advance_to(t);
            }
        }
    }
}

/// How a world runs: on how many threads, split how (the report's `parallel` section).
#[derive(Clone, Debug, Default, Eq, PartialEq, serde::Serialize)]
pub struct Parallelism {
    /// Threads the runs use at most.
    pub threads: u32,
    /// Partitions the fabric is split into (1: not split).
    pub partitions: u32,
    /// The shortest delay of a link between partitions, ps: how far each runs alone.
    pub lookahead_ps: Option<u64>,
    /// Links between partitions.
    pub cut_links: usize,
    /// Why the run is on one thread although more were asked for.
    pub single_because: Option<String>,
}

impl Parallelism {
    /// One line for a report: `2 threads, 2 partitions (512 cut links, lookahead 1.000 µs)`,
    /// or `1 thread` with the reason when more were asked for.
    pub fn line(&self) -> String {
        match (self.partitions, self.lookahead_ps, &self.single_because) {
            (p, Some(l), _) if p > 1 => format!(
                "{} threads, {} partitions ({} cut links, lookahead {:.3} µs)",
                self.threads,
                p,
                self.cut_links,
                l as f64 / 1e6
            ),
            (_, _, Some(why)) => format!("1 thread: {why}"),
            _ => "1 thread".to_string(),
        }
    }
}

/// The most threads a run takes unless asked for more: every partition holds a whole copy of
/// the world's tables (about 170 MB more per partition at 8,192 hosts, which no memory budget
/// counts), so a many-core machine's default stays within a few GB.
pub const DEFAULT_THREADS_MAX: u32 = 8;

/// The threads a run uses unless told: the cores available, at most [`DEFAULT_THREADS_MAX`].
pub fn default_threads() -> u32 {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get() as u32)
        .min(DEFAULT_THREADS_MAX)
}

/// Fabrics with fewer hosts run on one thread unless asked otherwise: their windows hold too
/// little work to gain, and their setup is slower split.
// source: the 2-core box. 2026-12-04, `cargo bench --bench fattree`: the 128-host permutation
// took 118.9 ms on one thread and 138.9 ms on two. 2026-12-06, with windows on the threads
// from 256 events: its data phase 117 / 115 ms (10 ABBA pairs; the split setup is slower
// still), the 256-host all-reduce 1.20–1.32× faster on two, the 1024-host permutation 1.70×.
pub const SPLIT_FROM_HOSTS: u64 = 256;

/// [`default_threads`] for a fabric of `hosts` hosts (one below [`SPLIT_FROM_HOSTS`]).
pub fn default_threads_for(hosts: u64) -> u32 {
    if hosts < SPLIT_FROM_HOSTS {
        1
    } else {
        default_threads()
    }
}

/// Runs with fewer pending events than this, or shorter than an eighth of the lookahead, go
/// on the calling thread alone: waking the workers for them costs more than they take
/// (setup's exchanges run an instant at a time). A collective's 500 ns polls on a 1 µs
/// lookahead are long enough.
// source: the 2-core box, 2026-12-06, with `engine`'s PARALLEL_FROM_EVENTS (its measurements):
// 256 here and there ran the 256-host all-reduce in 9.4 s on two threads, 1,024 and 2,048 in
// 15.0 s. Results do not depend on it (any thread count gives the same run).
const THREADED_FROM_EVENTS: usize = 256;

impl World {
    /// A world on `topology` as [`World::new`] builds it, split to run on up to `threads`
    /// threads: into as many partitions (fewer if the topology has fewer racks), each owning
    /// whole racks. One partition (a star, a topology whose racks are joined by zero-delay
    /// links, or `threads` ≤ 1) is [`World::new`]'s world, and [`World::parallelism`] says
    /// why. Same scenario, same seed: the same run for any `threads`.
    pub fn new_partitioned(
        topology: &Topology,
        fabric: FabricConfig,
        profile: HostProfile,
        nic: NicProfile,
        threads: u32,
    ) -> Result<World, WorldError> {
        let split = Partitioning::new(topology, threads.max(1));
        let why = if threads <= 1 {
            None
        } else if split.parts <= 1 {
            Some("the topology has one rack (hosts stay with their switch)".to_string())
        } else if split.lookahead.is_none_or(|l| l == SimDuration::ZERO) {
            Some("a link between racks has no propagation delay (no lookahead)".to_string())
        } else {
            None
        };
        let lookahead = match split.lookahead {
            Some(l) if split.parts > 1 && l > SimDuration::ZERO => l,
            _ => {
                let mut w = World::new(topology, fabric, profile, nic)?;
                w.single_because = why;
                return Ok(w);
            }
        };
        let mut states = Vec::with_capacity(split.parts as usize);
        for p in 0..split.parts {
            let mut s = State::build(topology, fabric.clone(), profile, nic)?;
            s.fabric.own_share(&split, p)?;
            states.push(s);
        }
        let of_host = states[0]
            .host_nodes
            .iter()
            .map(|n| split.part(*n))
            .collect();
        let mut states = states.into_iter();
        let front = states.next().expect("at least two partitions");
        let parked = std::iter::once(None)
            .chain(states.map(|state| {
                Some(Parked {
                    state,
                    sched: Scheduler::new(),
                })
            }))
            .collect();
        Ok(World {
            sched: Scheduler::new(),
            state: front,
            total_budget: None,
            defer_control: false,
            deferred_error: None,
            single_because: None,
            parts: Some(Box::new(Parts {
                focus: 0,
                parked,
                of_host,
                workers: engine::Workers::new((threads as usize).min(split.parts as usize)),
                split,
                lookahead,
            })),
        })
    }

    /// Records why this world runs on one thread although more were asked for (a capture that
    /// needs the whole fabric), for [`World::parallelism`] to say.
    pub fn run_single_because(&mut self, why: &str) {
        self.single_because = Some(why.to_string());
    }

    /// How this world runs: threads, partitions, lookahead, and why it is on one thread when
    /// more were asked for.
    pub fn parallelism(&self) -> Parallelism {
        match &self.parts {
            None => Parallelism {
                threads: 1,
                partitions: 1,
                lookahead_ps: None,
                cut_links: 0,
                single_because: self.single_because.clone(),
            },
            Some(p) => Parallelism {
                threads: p.workers.threads() as u32,
                partitions: p.split.parts,
                lookahead_ps: Some(p.lookahead.as_ps()),
                cut_links: p.split.cut_links,
                single_because: None,
            },
        }
    }

    /// Brings partition `p` to the front (nothing to do with one partition).
    fn focus(&mut self, p: usize) {
        let Some(parts) = self.parts.as_mut() else {
            return;
        };
        if parts.focus == p {
            return;
        }
        let incoming = parts.parked[p].take().expect("a parked partition");
        let state = std::mem::replace(&mut self.state, incoming.state);
        let sched = std::mem::replace(&mut self.sched, incoming.sched);
        parts.parked[parts.focus] = Some(Parked { state, sched });
        parts.focus = p;
    }

    /// Brings host `h`'s partition to the front: every call that changes a host starts here.
    pub(super) fn focus_host(&mut self, h: HostIx) {
        if let Some(p) = self.parts.as_ref().and_then(|p| p.of_host.get(h.index())) {
            self.focus(*p as usize);
        }
    }

    /// The state that lives for host `h` (the one in front, with one partition).
    pub(super) fn state_of(&self, h: HostIx) -> &State {
        match &self.parts {
            Some(p) => match p.of_host.get(h.index()) {
                Some(&o) if o as usize != p.focus => {
                    &p.parked[o as usize].as_ref().expect("parked").state
                }
                _ => &self.state,
            },
            None => &self.state,
        }
    }

    /// Every partition's state, in partition order.
    pub(super) fn states(&self) -> Vec<&State> {
        match &self.parts {
            None => vec![&self.state],
            Some(p) => p
                .parked
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    Some(s) => &s.state,
                    None if i == p.focus => &self.state,
                    None => unreachable!("only the front partition is not parked"),
                })
                .collect(),
        }
    }

    /// Every partition's scheduler.
    pub(super) fn scheds(&self) -> Vec<&Scheduler<Event>> {
        let mut v = vec![&self.sched];
        if let Some(p) = &self.parts {
            v.extend(p.parked.iter().flatten().map(|s| &s.sched));
        }
        v
    }

    /// Applies `f` to every partition's state: a setting that holds for every host.
    pub(super) fn each_state(&mut self, mut f: impl FnMut(&mut State)) {
        f(&mut self.state);
        if let Some(p) = self.parts.as_mut() {
            for s in p.parked.iter_mut().flatten() {
                f(&mut s.state);
            }
        }
    }

    /// The fabric as one: every partition's share read together (the one fabric, with one).
    pub fn joined(&self) -> Joined<'_> {
        Joined::new(self.states().into_iter().map(|s| &s.fabric).collect())
    }

    /// Whether this world is split into partitions.
    pub(super) fn is_partitioned(&self) -> bool {
        self.parts.is_some()
    }

    /// Every partition and its scheduler, borrowed apart, in partition order.
    /// With them, the lookahead and the threads the world may use.
    fn all_parts(
        &mut self,
    ) -> (
        Vec<&mut State>,
        Vec<&mut Scheduler<Event>>,
        (SimDuration, &engine::Workers),
    ) {
        let World {
            state,
            sched,
            parts,
            ..
        } = self;
        let parts = parts.as_mut().expect("a partitioned world");
        let knobs = (parts.lookahead, &parts.workers);
        let mut front = Some((state, sched));
        let mut states = Vec::with_capacity(parts.parked.len());
        let mut scheds = Vec::with_capacity(parts.parked.len());
        for (i, slot) in parts.parked.iter_mut().enumerate() {
            match slot {
                Some(p) => {
                    states.push(&mut p.state);
                    scheds.push(&mut p.sched);
                }
                None => {
                    debug_assert_eq!(i, parts.focus);
                    let (s, q) = front.take().expect("one partition in front");
                    states.push(s);
                    scheds.push(q);
                }
            }
        }
        (states, scheds, knobs)
    }

    /// Sets every partition's clock to the latest of them (and at least `at`): between runs
    /// the world has one time.
    fn align_clocks(scheds: &mut [&mut Scheduler<Event>], at: SimTime) -> SimTime {
        let t = scheds.iter().map(|s| s.now()).max().unwrap_or(at).max(at);
        for s in scheds.iter_mut() {
            if s.now() < t {
                s.advance_to(t);
            }
        }
        t
    }

    /// [`World::run_until`] of a partitioned world: window by window, on the threads asked
    /// for when there is enough to do.
    pub(super) fn run_parts_until(
        &mut self,
        until: SimTime,
        budget: &Budget,
    ) -> Result<RunStats, BudgetExceeded> {
        let started = std::time::Instant::now();
        let (mut states, mut scheds, (lookahead, workers)) = self.all_parts();
        let pending: usize = scheds.iter().map(|s| s.pending()).sum();
        // A run to the next instant (a socket call waiting for its segment) is at most one
        // short window: handing it to the workers would cost more than it takes.
        let span = until.saturating_duration_since(scheds[0].now());
        let workers = (pending >= THREADED_FROM_EVENTS && span >= lookahead / 8).then_some(workers);
        let before: u64 = scheds.iter().map(|s| s.events_processed()).sum();
        let r =
            engine::run_partitioned(&mut states, &mut scheds, lookahead, until, workers, budget);
        let after: u64 = scheds.iter().map(|s| s.events_processed()).sum();
        let end = Self::align_clocks(&mut scheds, SimTime::ZERO);
        r?;
        Ok(RunStats {
            events: after - before,
            end_time: end,
            stopped_by_model: false,
            wall: started.elapsed(),
        })
    }

    /// [`World::run_until_cond`] of a partitioned world: instant by instant, `stop` looked at
    /// once every partition has handled the instant.
    pub(super) fn run_parts_until_cond(
        &mut self,
        until: SimTime,
        budget: &Budget,
        stop: &mut dyn FnMut(&World) -> bool,
    ) -> Result<RunStats, BudgetExceeded> {
        let started = std::time::Instant::now();
        let mut events = 0u64;
        let limit_time = SimTime::ZERO
            .checked_add(budget.sim_time)
            .unwrap_or(SimTime::MAX);
        loop {
            let (mut states, mut scheds, _) = self.all_parts();
            let Some(next) = scheds.iter().filter_map(|s| s.peek_time()).min() else {
                break;
            };
            if next > until {
                break;
            }
            if next > limit_time {
                return Err(BudgetExceeded::SimTime {
                    limit: budget.sim_time,
                });
            }
            let left = Budget {
                events: budget.events.saturating_sub(events),
                ..*budget
            };
            let mut failed = None;
            for (s, q) in states.iter_mut().zip(scheds.iter_mut()) {
                match engine::run_until(&mut **s, &mut **q, &left, next) {
                    Ok(r) => events += r.events,
                    Err(e) => {
                        failed.get_or_insert(match e {
                            BudgetExceeded::Events { .. } => BudgetExceeded::Events {
                                limit: budget.events,
                            },
                            e => e,
                        });
                    }
                }
            }
            // Even a run that fails leaves every crossing frame in its partition's queue.
            hand_over(&mut states, &mut scheds);
            Self::align_clocks(&mut scheds, next);
            if let Some(e) = failed {
                return Err(e);
            }
            if events > budget.events {
                return Err(BudgetExceeded::Events {
                    limit: budget.events,
                });
            }
            if stop(self) {
                return Ok(RunStats {
                    events,
                    end_time: next,
                    stopped_by_model: true,
                    wall: started.elapsed(),
                });
            }
        }
        let (_, mut scheds, _) = self.all_parts();
        let end = Self::align_clocks(&mut scheds, SimTime::ZERO);
        Ok(RunStats {
            events,
            end_time: end,
            stopped_by_model: false,
            wall: started.elapsed(),
        })
    }
}

/// Delivers every partition's outbox to its destinations, in partition order (as
/// `engine::run_partitioned` does at a window's end).
fn hand_over(states: &mut [&mut State], scheds: &mut [&mut Scheduler<Event>]) {
    let mut out = Vec::new();
    for s in states.iter_mut() {
        s.drain_outbox(&mut out);
    }
    for (to, at, parcel) in out {
        states[to].deliver(at, parcel, scheds[to]);
    }
}

/// A partition's state is a partition of the model: the frames that cross carry their
/// payload's bytes from one pool to the other.
impl Partitioned for State {
    type Parcel = (Crossing, Option<PoolData>);

    fn drain_outbox(&mut self, out: &mut Vec<(usize, SimTime, Self::Parcel)>) {
        let mut crossings = Vec::new();
        self.fabric.drain_crossings(&mut crossings);
        for (to, at, mut c) in crossings {
            let bytes = match c.payload_mut() {
                Payload::Roce { data, .. } | Payload::Tcp { data, .. } => {
                    let d = std::mem::replace(data, DataHandle::NONE);
                    self.take_data(d)
                }
                _ => None,
            };
            out.push((to, at, (c, bytes)));
        }
    }

    fn deliver(&mut self, at: SimTime, (mut c, bytes): Self::Parcel, sched: &mut Scheduler<Event>) {
        if let Some(b) = bytes {
            let h = store_data(&mut self.pool, b);
            if let Payload::Roce { data, .. } | Payload::Tcp { data, .. } = c.payload_mut() {
                *data = h;
            }
        }
        self.fabric.accept(at, c, sched);
    }
}
