//! The canonical order's promise (`engine::sched` module docs), checked on a toy fabric: a run
//! split into partitions that each handle their own nodes' events, exchanging what crosses
//! between them at the end of each window of the lookahead, gives every node exactly the
//! events, in exactly the order, of one queue running everything — for any split, and
//! whatever order the partitions' outboxes are handed over in (each outbox in its own
//! partition's order, which keeps every link's messages in the order they were sent) — and
//! the engine's runner (`engine::run_partitioned`) gives the same on one, two and four
//! threads. This is the scheme of the parallel engine (issue 24, `docs/ARCHITECTURE.md` §9).
//!
//! The toy: nodes joined by links of at least the lookahead's delay; each event mixes its
//! token into its node's state, and that state decides what the node does next: nothing, a
//! local event after 0, 1 or 2 ns, and/or a message over one of its links. Delays are whole
//! nanoseconds, so many events share an instant.

use engine::{Budget, Model, Partitioned, Scheduler, Step, Tie};
use proptest::prelude::*;
use units::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Ev {
    node: u32,
    token: u64,
    ttl: u8,
    /// The receiving port (2 × link + direction), for an arrival over a link.
    via: Option<u32>,
    /// Break ties first in, first out instead (every tie 0), to show what goes wrong.
    fifo: bool,
}

/// The fabric's rule: local work first (0), arrivals by port.
impl Tie for Ev {
    fn tie(&self) -> u64 {
        match self.via {
            Some(p) if !self.fifo => u64::from(p) + 1,
            _ => 0,
        }
    }
}

struct Net {
    /// Per node: (neighbour, delay, receiving port at the neighbour).
    links: Vec<Vec<(u32, SimDuration, u32)>>,
}

impl Net {
    fn random(nodes: u32, chords: &[(u32, u32, u8)], lookahead_ns: u64) -> Net {
        let mut links = vec![Vec::new(); nodes as usize];
        let mut k = 0;
        let mut join =
            |a: u32, b: u32, extra: u8, links: &mut Vec<Vec<(u32, SimDuration, u32)>>| {
                let d = SimDuration::from_ns(lookahead_ns + u64::from(extra % 3) * lookahead_ns);
                links[a as usize].push((b, d, 2 * k + 1));
                links[b as usize].push((a, d, 2 * k));
                k += 1;
            };
        for a in 0..nodes {
            if nodes > 1 {
                join(a, (a + 1) % nodes, a as u8, &mut links);
            }
        }
        for &(a, b, e) in chords {
            let (a, b) = (a % nodes, b % nodes);
            if a != b {
                join(a, b, e, &mut links);
            }
        }
        Net { links }
    }
}

/// The nodes one queue (or one partition) runs: their state and what they saw.
struct Part<'a> {
    net: &'a Net,
    /// Partition of each node, and this one's number.
    part_of: &'a [u32],
    me: u32,
    state: Vec<u64>,
    log: Vec<Vec<(SimTime, Ev)>>,
    /// Events for other partitions' nodes, handed over at the window's end.
    outbox: Vec<(SimTime, Ev)>,
}

impl Model for Part<'_> {
    type Event = Ev;
    fn handle(&mut self, ev: Ev, s: &mut Scheduler<Ev>) -> Step {
        let n = ev.node as usize;
        assert_eq!(self.part_of[n], self.me, "an event for another partition");
        let mixed = (self.state[n] ^ ev.token ^ s.now().as_ps())
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
        self.state[n] = mixed;
        self.log[n].push((s.now(), ev));
        if ev.ttl == 0 {
            return Step::Continue;
        }
        if mixed & 1 == 1 {
            let d = SimDuration::from_ns((mixed >> 1) % 3);
            let local = Ev {
                token: mixed >> 8,
                ttl: ev.ttl - 1,
                via: None,
                ..ev
            };
            s.schedule_at(s.now() + d, local);
        }
        let links = &self.net.links[n];
        if mixed & 6 != 0 && !links.is_empty() {
            let (to, d, port) = links[((mixed >> 4) % links.len() as u64) as usize];
            let msg = Ev {
                node: to,
                token: mixed >> 12,
                ttl: ev.ttl - 1,
                via: Some(port),
                fifo: ev.fifo,
            };
            if self.part_of[to as usize] == self.me {
                s.schedule_at(s.now() + d, msg);
            } else {
                self.outbox.push((s.now() + d, msg));
            }
        }
        Step::Continue
    }
}

impl Partitioned for Part<'_> {
    type Parcel = Ev;
    fn drain_outbox(&mut self, out: &mut Vec<(usize, SimTime, Ev)>) {
        let part_of = self.part_of;
        out.extend(
            self.outbox
                .drain(..)
                .map(|(at, ev)| (part_of[ev.node as usize] as usize, at, ev)),
        );
    }
    fn deliver(&mut self, at: SimTime, ev: Ev, sched: &mut Scheduler<Ev>) {
        sched.schedule_at(at, ev);
    }
}

/// The partitions of `part_of` (`parts` of them) over `net`, each node seeded with one
/// event at time zero living `ttl` generations.
fn partitions<'a>(
    net: &'a Net,
    part_of: &'a [u32],
    parts: u32,
    ttl: u8,
    fifo: bool,
) -> (Vec<Part<'a>>, Vec<Scheduler<Ev>>) {
    let n = net.links.len();
    let models = (0..parts)
        .map(|me| Part {
            net,
            part_of,
            me,
            state: vec![0; n],
            log: vec![Vec::new(); n],
            outbox: Vec::new(),
        })
        .collect();
    let mut scheds: Vec<Scheduler<Ev>> = (0..parts).map(|_| Scheduler::new()).collect();
    for node in 0..n as u32 {
        let seed = Ev {
            node,
            token: u64::from(node) + 1,
            ttl,
            via: None,
            fifo,
        };
        scheds[part_of[node as usize] as usize].schedule_at(SimTime::ZERO, seed);
    }
    (models, scheds)
}

/// Each node's events under `split` through the engine's own runner, on `threads` threads.
fn run_engine(net: &Net, split: &Split, ttl: u8, threads: usize) -> Vec<Vec<(SimTime, Ev)>> {
    let n = net.links.len();
    let (mut models, mut scheds) = partitions(net, split.part_of, split.parts, ttl, false);
    let st = engine::run_partitioned(
        &mut models.iter_mut().collect::<Vec<_>>(),
        &mut scheds.iter_mut().collect::<Vec<_>>(),
        split.lookahead,
        SimTime::MAX,
        Some(&engine::Workers::eager(threads)),
        &Budget::UNLIMITED,
    )
    .unwrap();
    let logs: Vec<_> = (0..n)
        .map(|i| std::mem::take(&mut models[split.part_of[i] as usize].log[i]))
        .collect();
    assert_eq!(st.events as usize, logs.iter().map(Vec::len).sum::<usize>());
    logs
}

/// How a run is split and driven.
struct Split<'a> {
    /// Partition of each node.
    part_of: &'a [u32],
    parts: u32,
    lookahead: SimDuration,
    /// Hand the partitions' outboxes over last partition first.
    reverse: bool,
}

/// Each node's events, in the order it handled them, under `split`, every event living
/// `ttl` generations; ties first in, first out if `fifo`.
fn run(net: &Net, split: &Split, ttl: u8, fifo: bool) -> Vec<Vec<(SimTime, Ev)>> {
    let Split {
        part_of,
        parts,
        lookahead,
        reverse,
    } = *split;
    let n = net.links.len();
    let (mut models, mut scheds) = partitions(net, part_of, parts, ttl, fifo);
    while let Some(start) = scheds.iter().filter_map(|s| s.peek_time()).min() {
        // Every event before `start + lookahead` is safe: nothing sent in the window lands
        // sooner.
        let until = start + lookahead - SimDuration::from_ps(1);
        for (m, s) in models.iter_mut().zip(scheds.iter_mut()) {
            engine::run_until(m, s, &Budget::UNLIMITED, until).unwrap();
        }
        let mut outboxes: Vec<Vec<(SimTime, Ev)>> = models
            .iter_mut()
            .map(|m| std::mem::take(&mut m.outbox))
            .collect();
        if reverse {
            outboxes.reverse();
        }
        let crossing = outboxes.into_iter().flatten();
        for (at, ev) in crossing {
            assert!(at > until, "a crossing inside the window it was sent in");
            scheds[part_of[ev.node as usize] as usize].schedule_at(at, ev);
        }
    }
    (0..n)
        .map(|i| std::mem::take(&mut models[part_of[i] as usize].log[i]))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_partitioned_run_gives_every_node_the_single_queues_order(
        nodes in 2u32..12,
        chords in prop::collection::vec((0u32..12, 0u32..12, any::<u8>()), 0..10),
        split in prop::collection::vec(0u32..4, 12),
        lookahead_ns in 1u64..6,
        ttl in 6u8..14,
        reverse in any::<bool>(),
    ) {
        let net = Net::random(nodes, &chords, lookahead_ns);
        let lookahead = SimDuration::from_ns(lookahead_ns);
        let one = vec![0u32; nodes as usize];
        let alone = run(&net, &Split { part_of: &one, parts: 1, lookahead, reverse: false }, ttl, false);
        let part_of = &split[..nodes as usize];
        let parts = part_of.iter().copied().max().unwrap() + 1;
        let together = run(&net, &Split { part_of, parts, lookahead, reverse }, ttl, false);
        let events: usize = alone.iter().map(Vec::len).sum();
        prop_assert!(events > nodes as usize, "the toy did something: {} events", events);
        prop_assert_eq!(&alone, &together);
        // The engine's runner, on one, two and four threads.
        for threads in [1, 2, 4] {
            let split = Split { part_of, parts, lookahead, reverse: false };
            prop_assert_eq!(&alone, &run_engine(&net, &split, ttl, threads));
        }
    }
}

/// With every tie first in, first out, splitting the same toy changes what some node sees:
/// an arrival from another partition lands among the local work of its instant by when it
/// was handed over, not by a rule.
#[test]
fn with_first_in_first_out_ties_a_split_changes_what_nodes_see() {
    let lookahead = SimDuration::from_ns(2);
    let mut differ = 0;
    for chord in 0..8u32 {
        let net = Net::random(8, &[(chord, chord + 3, 1), (chord + 1, chord + 5, 2)], 2);
        let one = Split {
            part_of: &[0; 8],
            parts: 1,
            lookahead,
            reverse: false,
        };
        let halves = Split {
            part_of: &[0, 0, 0, 0, 1, 1, 1, 1],
            parts: 2,
            lookahead,
            reverse: true,
        };
        differ += usize::from(run(&net, &one, 12, true) != run(&net, &halves, 12, true));
        // With the fabric's ties the same split changes nothing.
        let (alone, split) = (run(&net, &one, 12, false), run(&net, &halves, 12, false));
        assert_eq!(alone, split, "chord {chord}");
    }
    assert!(
        differ > 0,
        "first-in-first-out ties never mattered in 8 toys"
    );
}

/// The run's event budget holds across partitions: exceeded, the run fails naming it.
#[test]
fn the_event_budget_counts_every_partition() {
    let net = Net::random(6, &[], 2);
    let part_of = [0, 0, 0, 1, 1, 1];
    let (mut models, mut scheds) = partitions(&net, &part_of, 2, 12, false);
    let budget = Budget {
        events: 20,
        ..Budget::UNLIMITED
    };
    let e = engine::run_partitioned(
        &mut models.iter_mut().collect::<Vec<_>>(),
        &mut scheds.iter_mut().collect::<Vec<_>>(),
        SimDuration::from_ns(2),
        SimTime::MAX,
        Some(&engine::Workers::eager(2)),
        &budget,
    )
    .unwrap_err();
    assert_eq!(e, engine::BudgetExceeded::Events { limit: 20 });
}

/// The run's simulated-time budget holds inside a window too: no partition handles an event
/// past it.
#[test]
fn the_sim_time_budget_holds_inside_a_window() {
    let net = Net::random(6, &[], 5);
    let part_of = [0, 0, 0, 1, 1, 1];
    let (mut models, mut scheds) = partitions(&net, &part_of, 2, 40, false);
    let budget = Budget {
        sim_time: SimDuration::from_ns(7),
        ..Budget::UNLIMITED
    };
    let e = engine::run_partitioned(
        &mut models.iter_mut().collect::<Vec<_>>(),
        &mut scheds.iter_mut().collect::<Vec<_>>(),
        SimDuration::from_ns(5),
        SimTime::MAX,
        Some(&engine::Workers::eager(2)),
        &budget,
    )
    .unwrap_err();
    assert_eq!(
        e,
        engine::BudgetExceeded::SimTime {
            limit: SimDuration::from_ns(7)
        }
    );
    let last = models
        .iter()
        .flat_map(|m| m.log.iter().flatten())
        .map(|(t, _)| *t)
        .max()
        .unwrap();
    assert!(last <= SimTime::ZERO + SimDuration::from_ns(7), "{last}");
}

/// A model whose partition 0 has a bug that panics at its first event, beside a partition 1
/// that works through a long chain of events.
struct Buggy {
    bug: bool,
    left: u32,
}

impl Model for Buggy {
    type Event = u32;
    fn handle(&mut self, ev: u32, s: &mut Scheduler<u32>) -> Step {
        assert!(!self.bug, "a model's bug");
        if self.left > 0 {
            self.left -= 1;
            s.schedule_in(SimDuration::from_ns(1), ev + 1);
        }
        Step::Continue
    }
}

impl Partitioned for Buggy {
    type Parcel = ();
    fn drain_outbox(&mut self, _: &mut Vec<(usize, SimTime, ())>) {}
    fn deliver(&mut self, _: SimTime, _: (), _: &mut Scheduler<u32>) {}
}

/// A partition that panics on a worker fails the run with its panic; the other worker is not
/// left waiting at the window's barrier for ever. A watchdog ends the test binary if it hangs.
#[test]
fn a_panic_on_one_worker_fails_the_run_instead_of_hanging_it() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut models = [
        Buggy { bug: true, left: 0 },
        Buggy {
            bug: false,
            left: 100_000,
        },
    ];
    let mut scheds = [Scheduler::new(), Scheduler::new()];
    for s in &mut scheds {
        s.schedule_at(SimTime::ZERO, 0);
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for _ in 0..600 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if done.load(Ordering::Acquire) {
                    return;
                }
            }
            eprintln!("run_partitioned hung after a worker's panic");
            std::process::exit(101);
        });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine::run_partitioned(
                &mut models.iter_mut().collect::<Vec<_>>(),
                &mut scheds.iter_mut().collect::<Vec<_>>(),
                SimDuration::from_us(1),
                SimTime::MAX,
                Some(&engine::Workers::eager(2)),
                &Budget::UNLIMITED,
            )
        }));
        done.store(true, Ordering::Release);
        let panic = r.expect_err("the bug panics");
        let msg = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("");
        assert!(msg.contains("a model's bug"), "{msg}");
    });
}
