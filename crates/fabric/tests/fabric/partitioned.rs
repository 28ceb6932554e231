//! The fabric split across partitions (issue 24, `docs/ARCHITECTURE.md` §9): every partition a
//! whole fabric living for its own nodes, frames crossing between them at window boundaries
//! (`engine::run_partitioned`). Over random small topologies, raw-flow workloads and switch
//! settings (PFC, ECN, congestion draws, lossy links, small buffers), a run split into 2, 3 or
//! 4 partitions on 1 to 4 threads gives exactly the single fabric's run: the same events,
//! every node's trace records in the same order at the same times, every port's counters, the
//! fabric's counters and every flow's outcome.

use engine::{Budget, Model, Scheduler, Step, TraceRecord, VecObserver, run_partitioned};
use fabric::partition::Partitioning;
use fabric::{
    EcnConfig, Fabric, FabricConfig, FabricEvent, Joined, LinkConfig, LossConfig, PfcConfig,
    RawFlow, SwitchConfig, Topology,
};
use proptest::prelude::*;
use std::collections::BTreeMap;
use units::{Bandwidth, NodeId, Priority, Probability, SimDuration, SimTime};

/// The single fabric, run to the end of the window whatever its flows do (a fabric alone stops
/// when its last flow is done; a partition cannot know that, so neither may the reference).
struct Whole(Fabric);

impl Model for Whole {
    type Event = FabricEvent;
    fn handle(&mut self, ev: FabricEvent, sched: &mut Scheduler<FabricEvent>) -> Step {
        self.0.handle(ev, sched);
        Step::Continue
    }
}

/// What the tests vary.
#[derive(Clone, Debug)]
struct Case {
    shape: u8,
    size: u64,
    cable_m: u64,
    gbps: u64,
    pfc: bool,
    ecn: bool,
    small_buffer: bool,
    draws: bool,
    corruption: bool,
    flows: Vec<(usize, usize, u64, bool, u64, bool)>,
    parts: u32,
    threads: usize,
}

fn topology(c: &Case) -> Topology {
    let mut link = LinkConfig::new(Bandwidth::gbps(c.gbps), c.cable_m);
    if c.corruption {
        link.loss = LossConfig {
            corruption: Probability::from_f64(0.01).unwrap(),
            ..Default::default()
        };
    }
    match c.shape {
        0 => Topology::fat_tree(4, link),
        1 => Topology::leaf_spine(2 + c.size, 1 + c.size % 3, 2, link.clone(), link),
        2 => Topology::ring(3 + c.size, link),
        _ => Topology::dumbbell(1 + c.size, link.clone(), link),
    }
    .expect("a valid topology")
}

fn config(c: &Case) -> FabricConfig {
    let mut switch = SwitchConfig::default();
    if c.pfc {
        switch.pfc = Some(PfcConfig::new(1 << 3, 20_000, 10_000));
    }
    if c.ecn {
        switch.ecn = Some(EcnConfig::dcqcn_paper(1 << 3));
    }
    if c.small_buffer {
        switch.buffer_bytes = 600_000;
        switch.queue_cap_bytes = 30_000;
    }
    if c.draws {
        switch.congestion_drop = Probability::from_f64(0.02).unwrap();
    }
    FabricConfig {
        switch,
        ..Default::default()
    }
}

/// A fabric of the case with its flows added (a flow from a host to itself is left out) and a
/// tracer keeping every record.
fn build(c: &Case, topo: &Topology) -> Fabric {
    let mut f = Fabric::new(topo, config(c)).expect("a valid configuration");
    let hosts = f.hosts();
    for &(s, d, bytes, lossless, start_ns, ecn) in &c.flows {
        let (src, dst) = (hosts[s % hosts.len()], hosts[d % hosts.len()]);
        if src == dst {
            continue;
        }
        f.add_flow(RawFlow {
            src,
            dst,
            bytes,
            payload_mtu: 1024,
            priority: Priority::of(if lossless { 3 } else { 0 }),
            start: SimTime::ZERO + SimDuration::from_ns(start_ns),
            ecn_capable: ecn,
        })
        .expect("a valid flow");
    }
    f.set_tracer(engine::Tracer::new(VecObserver::default()));
    f
}

/// Every node's records in order, with their times.
fn by_node(records: &[(SimTime, TraceRecord)]) -> BTreeMap<NodeId, Vec<(SimTime, TraceRecord)>> {
    let mut m: BTreeMap<NodeId, Vec<_>> = BTreeMap::new();
    for (t, r) in records {
        let node = match r {
            TraceRecord::Packet { node, .. }
            | TraceRecord::Dropped { node, .. }
            | TraceRecord::EcnMarked { node, .. }
            | TraceRecord::PauseSent { node, .. }
            | TraceRecord::PauseReceived { node, .. } => *node,
            other => panic!("a fabric record names its node: {other:?}"),
        };
        m.entry(node).or_default().push((*t, r.clone()));
    }
    m
}

fn records(f: &mut Fabric) -> Vec<(SimTime, TraceRecord)> {
    f.tracer_mut()
        .take::<VecObserver>()
        .expect("the test's observer")
        .records
}

const UNTIL: SimTime = SimTime::from_ps(200_000_000);

fn check(c: &Case) -> Result<(), TestCaseError> {
    let topo = topology(c);
    let parts = Partitioning::new(&topo, c.parts);
    let Some(lookahead) = parts.lookahead else {
        return Ok(()); // one partition: nothing to compare
    };
    let budget = Budget::default();

    let mut whole = Whole(build(c, &topo));
    let mut sched = Scheduler::new();
    whole.0.schedule_flows(&mut sched);
    let one = engine::run_until(&mut whole, &mut sched, &budget, UNTIL).unwrap();

    let mut fabrics: Vec<Fabric> = (0..parts.parts)
        .map(|me| {
            let mut f = build(c, &topo);
            f.own_share(&parts, me).unwrap();
            f
        })
        .collect();
    let mut scheds: Vec<Scheduler<FabricEvent>> = fabrics
        .iter()
        .map(|f| {
            let mut s = Scheduler::new();
            f.schedule_flows(&mut s);
            s
        })
        .collect();
    let many = run_partitioned(
        &mut fabrics.iter_mut().collect::<Vec<_>>(),
        &mut scheds.iter_mut().collect::<Vec<_>>(),
        lookahead,
        UNTIL,
        Some(&engine::Workers::eager(c.threads)),
        &budget,
    )
    .unwrap();

    prop_assert_eq!(many.events, one.events, "events handled");
    let joined = Joined::new(fabrics.iter().collect());
    prop_assert_eq!(joined.flow_results(), whole.0.flow_results());
    prop_assert_eq!(joined.counters(), whole.0.counters());
    prop_assert_eq!(joined.all_flows_done(), whole.0.all_flows_done());
    prop_assert_eq!(
        joined.packets_in_flight(),
        whole.0.packets_in_flight().0,
        "packets alive at the end"
    );
    for (a, b) in joined.ports().zip(whole.0.ports()) {
        prop_assert_eq!(a, b);
    }
    let mut split: Vec<(SimTime, TraceRecord)> = Vec::new();
    for f in &mut fabrics {
        split.extend(records(f));
    }
    let expect = by_node(&records(&mut whole.0));
    let got = by_node(&split);
    prop_assert_eq!(got.len(), expect.len(), "nodes with records");
    for (node, want) in &expect {
        let seen = &got[node];
        prop_assert_eq!(seen.len(), want.len(), "records at node {}", node.0);
        for (i, (a, b)) in seen.iter().zip(want).enumerate() {
            prop_assert_eq!(a, b, "record {} at node {}", i, node.0);
        }
    }
    Ok(())
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            0u8..4,
            0u64..3,
            prop::sample::select(vec![20u64, 100, 300]),
            prop::sample::select(vec![25u64, 100]),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        prop::collection::vec(
            (
                0usize..64,
                0usize..64,
                1u64..150_000,
                any::<bool>(),
                0u64..20_000,
                any::<bool>(),
            ),
            1..12,
        ),
        2u32..5,
        1usize..5,
    )
        .prop_map(
            |(
                (shape, size, cable_m, gbps),
                (pfc, ecn, small_buffer, draws, corruption),
                flows,
                parts,
                threads,
            )| Case {
                shape,
                size,
                cable_m,
                gbps,
                pfc,
                ecn,
                small_buffer,
                draws,
                corruption,
                flows,
                parts,
                threads,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The split run is the single run, node by node.
    #[test]
    fn a_partitioned_fabric_runs_as_the_whole_one(c in case()) {
        check(&c)?;
    }
}

/// The 16-host fat tree under an all-to-one burst with PFC: pauses cross partitions both ways
/// (a PAUSE is a frame on a cut link like any other), and the split run still matches.
#[test]
fn pauses_cross_partitions_like_frames() {
    let flows = (1..16)
        .map(|s| (s, 0, 120_000, true, 0, true))
        .collect::<Vec<_>>();
    for threads in [1, 2, 4] {
        let c = Case {
            shape: 0,
            size: 0,
            cable_m: 200,
            gbps: 100,
            pfc: true,
            ecn: false,
            small_buffer: false,
            draws: false,
            corruption: false,
            flows: flows.clone(),
            parts: 4,
            threads,
        };
        check(&c).unwrap();
        // The case did what it is for: PAUSE frames went out.
        let topo = topology(&c);
        let mut f = Whole(build(&c, &topo));
        let mut s = Scheduler::new();
        f.0.schedule_flows(&mut s);
        engine::run_until(&mut f, &mut s, &Budget::default(), UNTIL).unwrap();
        assert!(f.0.counters().pauses_sent > 0, "{:?}", f.0.counters());
        let parts = Partitioning::new(&topo, 4);
        assert_eq!(parts.parts, 4);
        assert_eq!(parts.lookahead, Some(SimDuration::from_ns(1_000)));
    }
}
