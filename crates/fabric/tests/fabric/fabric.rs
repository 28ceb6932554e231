//! What a user of the fabric sees: timing from first principles, PFC and drops under incast,
//! the ECN curve, ECMP spread, fat-tree scale, determinism and bad configurations.

use engine::{
    Budget, Observer, PacketClass, PacketStage, Scheduler, TraceHasher, TraceRecord, Tracer,
    VecObserver, run,
};
use fabric::{
    EcnConfig, Fabric, FabricConfig, FabricEvent, Forwarding, PfcConfig, RawFlow, SwitchConfig,
    Topology,
};
use std::collections::{BTreeMap, BTreeSet};
use units::{Bandwidth, PortId, Priority, Probability, SimDuration, SimTime};

use crate::support;
use support::{flow, link};

/// Runs the fabric until all flows finish or nothing is left to do.
fn drive(fab: &mut Fabric) {
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    run(
        fab,
        &mut sched,
        &Budget {
            sim_time: SimDuration::from_secs(1),
            ..Budget::default()
        },
    )
    .expect("within budget");
}

fn pfc_switch(buffer: u64, xoff: u64, xon: u64) -> SwitchConfig {
    SwitchConfig {
        buffer_bytes: buffer,
        pfc: Some(PfcConfig::new(1 << 3, xoff, xon)),
        ..SwitchConfig::default()
    }
}

#[test]
fn one_frame_arrives_when_physics_says() {
    // A 4096-byte frame (FCS included) back to back over 100 Gb/s and 3 m of cable:
    // (4096 + 8 preamble/SFD + 12 IFG) B × 8 bit/B × 10 ps/bit + 3 m × 5 ns/m.
    let expect_ps = (4096 + 20) * 8 * 10 + 3 * 5_000;
    assert_eq!(expect_ps, 344_280);
    let topo = Topology::back_to_back(link(3)).unwrap();
    let mut fab = Fabric::new(&topo, FabricConfig::default()).unwrap();
    let h = fab.hosts();
    fab.add_flow(flow(h[0], h[1], 4096 - 62, 4096 - 62))
        .unwrap();
    drive(&mut fab);
    let r = fab.flow_results()[0];
    assert_eq!(r.frames_sent, 1);
    assert_eq!(r.finish, Some(SimTime::from_ps(expect_ps)));
}

#[test]
fn cut_through_and_store_and_forward_latency() {
    let ser_ps: u64 = (4096 + 20) * 8 * 10;
    let prop_ps: u64 = 2 * 5_000;
    let latency = SimDuration::from_ns(300);
    for (fwd, expect) in [
        // The head is forwarded after the pipeline latency; the tail follows one frame time later.
        (
            Forwarding::CutThrough,
            2 * prop_ps + latency.as_ps() + ser_ps,
        ),
        // The whole frame is received, then sent again.
        (
            Forwarding::StoreAndForward,
            2 * (ser_ps + prop_ps) + latency.as_ps(),
        ),
    ] {
        let topo = Topology::star(2, link(2)).unwrap();
        let cfg = FabricConfig {
            switch: SwitchConfig {
                forwarding: fwd,
                latency,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut fab = Fabric::new(&topo, cfg).unwrap();
        let h = fab.hosts();
        fab.add_flow(flow(h[0], h[1], 4096 - 62, 4096)).unwrap();
        drive(&mut fab);
        assert_eq!(
            fab.flow_results()[0].finish,
            Some(SimTime::from_ps(expect)),
            "{fwd:?}"
        );
    }
}

#[test]
fn back_to_back_stream_runs_at_line_rate() {
    // 1000 frames of 4096 B: the last arrives 1000 frame times + propagation after the start.
    let topo = Topology::back_to_back(link(3)).unwrap();
    let mut fab = Fabric::new(&topo, FabricConfig::default()).unwrap();
    let h = fab.hosts();
    fab.add_flow(flow(h[0], h[1], 1000 * (4096 - 62), 4096 - 62))
        .unwrap();
    drive(&mut fab);
    assert_eq!(
        fab.flow_results()[0].finish,
        Some(SimTime::from_ps(1000 * 329_280 + 15_000))
    );
}

/// Rebuilds each switch ingress count from the trace and checks every PFC decision against it.
#[derive(Default)]
struct PfcAudit {
    switch: u32,
    xoff: u64,
    xon: u64,
    ingress: BTreeMap<u16, u64>,
    arrived_on: BTreeMap<u64, (u16, u64)>,
    pauses: u64,
    resumes: u64,
    violations: Vec<String>,
}

impl Observer for PfcAudit {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        match *rec {
            TraceRecord::Packet {
                stage: PacketStage::Arrived,
                node,
                port,
                pkt,
                ..
            } if node.0 == self.switch && pkt.class != PacketClass::Pause => {
                *self.ingress.entry(port.0).or_default() += pkt.bytes as u64;
                self.arrived_on.insert(pkt.uid, (port.0, pkt.bytes as u64));
            }
            TraceRecord::Dropped { node, pkt, .. }
            | TraceRecord::Packet {
                stage: PacketStage::Dequeued,
                node,
                pkt,
                ..
            } if node.0 == self.switch => {
                if let Some((p, b)) = self.arrived_on.remove(&pkt.uid) {
                    *self.ingress.get_mut(&p).unwrap() -= b;
                }
            }
            TraceRecord::PauseSent {
                node, port, quanta, ..
            } if node.0 == self.switch => {
                let count = self.ingress.get(&port.0).copied().unwrap_or(0);
                if quanta > 0 {
                    self.pauses += 1;
                    if count < self.xoff {
                        self.violations
                            .push(format!("{at}: PAUSE on p{} at {count} B < XOFF", port.0));
                    }
                } else {
                    self.resumes += 1;
                    if count > self.xon {
                        self.violations
                            .push(format!("{at}: RESUME on p{} at {count} B > XON", port.0));
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn incast_drops_without_pfc_and_pauses_with_it() {
    let topo = Topology::incast(2, link(3)).unwrap();
    let receiver = topo.hosts()[0];
    let senders = &topo.hosts()[1..];
    // Without PFC, a small buffer overflows: two line-rate senders into one port.
    let lossy = SwitchConfig {
        buffer_bytes: 256 << 10,
        queue_cap_bytes: 128 << 10,
        ..Default::default()
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch: lossy,
            ..Default::default()
        },
    )
    .unwrap();
    for &s in senders {
        fab.add_flow(flow(s, receiver, 2 << 20, 4096 - 62)).unwrap();
    }
    drive(&mut fab);
    let c = fab.counters();
    assert!(c.drops_buffer > 0, "{c:?}");
    assert_eq!(c.pauses_sent, 0);
    assert!(fab.flow_results().iter().any(|r| r.finish.is_none()));

    // With PFC and enough headroom, the same incast loses nothing.
    let (xoff, xon) = (40_000, 20_000);
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch: pfc_switch(256 << 10, xoff, xon),
            ..Default::default()
        },
    )
    .unwrap();
    let sw = topo.switches()[0];
    fab.set_tracer(Tracer::new(PfcAudit {
        switch: sw.0,
        xoff,
        xon,
        ..Default::default()
    }));
    for &s in senders {
        fab.add_flow(flow(s, receiver, 2 << 20, 4096 - 62)).unwrap();
    }
    drive(&mut fab);
    let c = fab.counters();
    assert_eq!(c.drops(), 0, "{c:?}");
    assert!(
        fab.flow_results()
            .iter()
            .all(|r| r.delivered == 2 << 20 && r.finish.is_some())
    );
    let audit = fab.tracer_mut().take::<PfcAudit>().unwrap();
    assert!(
        audit.violations.is_empty(),
        "{:?}",
        &audit.violations[..audit.violations.len().min(5)]
    );
    assert!(
        audit.pauses > 0 && audit.resumes > 0,
        "pauses {} resumes {}",
        audit.pauses,
        audit.resumes
    );
    assert_eq!(audit.pauses, c.pauses_sent);
    // The senders' NICs received the pauses; the receiver never did.
    for &s in senders {
        assert!(fab.port_stats(s, PortId(0)).unwrap().pfc_received > 0);
    }
    assert_eq!(fab.port_stats(receiver, PortId(0)).unwrap().pfc_received, 0);
    // With PFC the bottleneck stays busy: 4 MiB over 100 Gb/s takes ≥ 335.5 µs; allow 5% slack.
    let last = fab
        .flow_results()
        .iter()
        .filter_map(|r| r.finish)
        .max()
        .unwrap();
    let ideal = SimDuration::from_ps((4u64 << 20) * 8 * 10);
    assert!(
        last.since_start() < ideal + ideal / 20,
        "{last} vs ideal {ideal}"
    );
}

/// Pairs every enqueue at one egress port with whether it was marked.
#[derive(Default)]
struct EcnSamples {
    node: u32,
    port: u16,
    marked: BTreeSet<u64>,
    samples: Vec<(u64, bool)>,
}

impl Observer for EcnSamples {
    fn record(&mut self, _at: SimTime, rec: &TraceRecord) {
        match *rec {
            TraceRecord::EcnMarked {
                node, port, pkt, ..
            } if node.0 == self.node && port.0 == self.port => {
                self.marked.insert(pkt.uid);
            }
            TraceRecord::Packet {
                stage: PacketStage::Enqueued,
                node,
                port,
                pkt,
                queue_bytes,
            } if node.0 == self.node && port.0 == self.port => {
                let before = queue_bytes - pkt.bytes as u64;
                self.samples.push((before, self.marked.contains(&pkt.uid)));
            }
            _ => {}
        }
    }
}

#[test]
fn ecn_marking_follows_the_configured_curve() {
    // 8→1 incast with a deep buffer: the receiver's queue grows to megabytes while every
    // arriving frame samples the marking curve at the depth it sees.
    let ecn = EcnConfig {
        priorities: 1 << 3,
        kmin_bytes: 100_000,
        kmax_bytes: 900_000,
        pmax: Probability::from_f64(0.8).unwrap(),
        on_dequeue: false,
    };
    let switch = SwitchConfig {
        buffer_bytes: 64 << 20,
        queue_cap_bytes: 32 << 20,
        ecn: Some(ecn),
        ..Default::default()
    };
    let topo = Topology::incast(8, link(3)).unwrap();
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: 11,
            ..Default::default()
        },
    )
    .unwrap();
    let receiver = topo.hosts()[0];
    // The receiver is the switch's first port: it was cabled first.
    fab.set_tracer(Tracer::new(EcnSamples {
        node: topo.switches()[0].0,
        port: 0,
        ..Default::default()
    }));
    for &s in &topo.hosts()[1..] {
        fab.add_flow(flow(s, receiver, 1 << 20, 1024)).unwrap();
    }
    drive(&mut fab);
    let s = fab.tracer_mut().take::<EcnSamples>().unwrap();
    assert!(s.samples.len() > 7_000, "{}", s.samples.len());
    assert_eq!(s.marked.len() as u64, fab.counters().ecn_marks);
    // Bin by depth; in each bin the marked count must match the curve within 4.5 binomial sd.
    let mut bins: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new(); // (Σp, Σp(1-p), marks)
    for &(q, m) in &s.samples {
        let p = ecn.mark_probability(q).as_f64();
        let b = bins.entry(q / 100_000).or_default();
        b.0 += p;
        b.1 += p * (1.0 - p);
        b.2 += m as u64;
    }
    let mut checked = 0;
    for (bin, (expect, var, got)) in &bins {
        if *bin == 0 {
            assert_eq!(*got, 0, "no marks below Kmin");
        }
        if *bin >= 9 {
            assert!(
                (*got as f64 - expect).abs() < 0.5,
                "every frame above Kmax is marked"
            );
        }
        let tol = 4.5 * var.sqrt() + 1.0;
        assert!(
            (*got as f64 - expect).abs() <= tol,
            "bin {bin}: {got} marks, expected {expect:.1} ± {tol:.1}"
        );
        checked += 1;
    }
    assert!(
        checked >= 10,
        "the queue explored the whole curve: {checked} bins"
    );
}

#[test]
fn ecmp_spreads_flows_over_uplinks() {
    // Two leaves, four spines; 1000 one-frame flows from leaf 0's hosts to leaf 1's hosts.
    let topo = Topology::leaf_spine(2, 4, 10, link(3), link(3)).unwrap();
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    let hosts = fab.hosts();
    for i in 0..1000u32 {
        let src = hosts[(i % 10) as usize];
        let dst = hosts[10 + (i / 10 % 10) as usize];
        fab.add_flow(flow(src, dst, 100, 100)).unwrap();
    }
    drive(&mut fab);
    assert!(fab.all_flows_done());
    let leaf0 = topo.switches()[0];
    // leaf0's ports: 10 hosts (0..10), then the 4 spines (10..14).
    let per_uplink: Vec<u64> = (10..14)
        .map(|p| fab.port_stats(leaf0, PortId(p)).unwrap().tx_frames)
        .collect();
    assert_eq!(per_uplink.iter().sum::<u64>(), 1000);
    for n in &per_uplink {
        assert!(
            (200..=300).contains(n),
            "uplink loads {per_uplink:?} not within ±20% of 250"
        );
    }
}

/// Records which port every flow's frames leave each node by.
#[derive(Default)]
struct PathTap(BTreeMap<(u32, units::NodeId), BTreeSet<PortId>>);

impl fabric::Tap for PathTap {
    fn on_transmit(&mut self, _: SimTime, node: units::NodeId, port: PortId, pkt: &fabric::Packet) {
        self.0.entry((pkt.flow.0, node)).or_default().insert(port);
    }
}

/// Runs a fabric without the prefetch hints (the engine's default hooks do nothing).
struct WithoutPrefetch<'a>(&'a mut Fabric);

impl engine::Model for WithoutPrefetch<'_> {
    type Event = FabricEvent;
    fn handle(&mut self, ev: FabricEvent, sched: &mut Scheduler<FabricEvent>) -> engine::Step {
        engine::Model::handle(self.0, ev, sched)
    }
}

#[test]
fn prefetching_changes_no_frames_path() {
    // Eight hosts under leaf 0 send to one host under leaf 1, so arrivals at leaf 0 for one
    // destination alternate between flows whose hashes pick different spines. The route an
    // arrival's prefetch finds and remembers for its hop must be that frame's own: with and
    // without the prefetch hints every flow takes the same ports, and its frames one path.
    let topo = Topology::leaf_spine(2, 4, 8, link(3), link(3)).unwrap();
    let paths = |prefetch: bool| {
        let mut fab = Fabric::new(
            &topo,
            FabricConfig {
                seed: 5,
                ..Default::default()
            },
        )
        .unwrap();
        let hosts = fab.hosts();
        for &src in &hosts[..8] {
            fab.add_flow(flow(src, hosts[8], 40_000, 1000)).unwrap();
        }
        fab.set_tap(PathTap::default());
        let mut sched: Scheduler<FabricEvent> = Scheduler::new();
        fab.schedule_flows(&mut sched);
        if prefetch {
            run(&mut fab, &mut sched, &Budget::default()).unwrap();
        } else {
            run(
                &mut WithoutPrefetch(&mut fab),
                &mut sched,
                &Budget::default(),
            )
            .unwrap();
        }
        assert!(fab.all_flows_done());
        fab.take_tap::<PathTap>().unwrap().0
    };
    let with = paths(true);
    assert_eq!(with, paths(false));
    for ((f, node), ports) in &with {
        assert_eq!(ports.len(), 1, "flow {f} left {node:?} by {ports:?}");
    }
    let leaf0 = topo.switches()[0];
    let uplinks: BTreeSet<&PortId> = with
        .iter()
        .filter(|((_, node), _)| *node == leaf0)
        .flat_map(|(_, ports)| ports)
        .collect();
    assert!(uplinks.len() >= 2, "the flows spread: {uplinks:?}");
}

#[test]
fn fat_tree_k16_builds_with_routes() {
    let topo = Topology::fat_tree(16, link(3)).unwrap();
    let fab = Fabric::new(&topo, FabricConfig::default()).unwrap();
    assert_eq!(fab.hosts().len(), 1024);
    assert_eq!(topo.switches().len(), 320);
    assert_eq!(fab.ports().count(), 1024 + 320 * 16);
    assert_eq!(fab.ports().count(), 2 * topo.links.len());
}

#[test]
fn fat_tree_permutation_is_lossless_within_headroom() {
    let topo = Topology::fat_tree(4, link(20)).unwrap();
    let (xoff, xon) = (30_000, 15_000);
    let mut switch = pfc_switch(1 << 20, xoff, xon);
    // A port takes 400 ns to act on a PAUSE; the headroom formula accounts for it.
    switch.pfc.as_mut().unwrap().response_time = SimDuration::from_ns(400);
    // Random-like ECMP, so that flows collide on some uplinks (the CRC hash happens to route
    // this permutation without a collision).
    switch.ecmp_hash = fabric::EcmpHash::Mixed;
    let cfg = FabricConfig {
        switch,
        seed: 3,
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, cfg).unwrap();
    let hosts = fab.hosts();
    let n = hosts.len();
    // A fixed derangement: host i sends to host (i·5 + 3) mod n, with 2 flows each so that
    // ECMP collisions congest some uplinks.
    for i in 0..n {
        let j = (i * 5 + 3) % n;
        let j = if j == i { (j + 1) % n } else { j };
        for _ in 0..2 {
            fab.add_flow(flow(hosts[i], hosts[j], 512 << 10, 4096 - 62))
                .unwrap();
        }
    }
    drive(&mut fab);
    let c = fab.counters();
    assert_eq!(c.drops(), 0, "{c:?}");
    assert!(
        c.pauses_sent > 0,
        "the permutation congested something: {c:?}"
    );
    assert!(fab.all_flows_done());
    let mut worst = (0u64, 0u64);
    for (node, port, _, st) in fab.ports() {
        let over = st.peak_over_xoff[3];
        let room = fab.headroom(node, port).unwrap();
        assert!(
            over <= room,
            "{node}:{port}: {over} B above XOFF > headroom {room} B"
        );
        if over > worst.0 {
            worst = (over, room);
        }
    }
    eprintln!(
        "worst excess above XOFF: {} B of {} B headroom",
        worst.0, worst.1
    );
    assert!(worst.0 > 0, "some port went above XOFF");
}

#[test]
fn congestion_draw_drops_when_lossy_and_pauses_when_lossless() {
    let topo = Topology::star(2, link(3)).unwrap();
    let h = topo.hosts();
    let p = Probability::from_f64(0.01).unwrap();
    let frames = 20_000u64;
    // Lossless off: about 1% of frames dropped.
    let switch = SwitchConfig {
        congestion_drop: p,
        ..Default::default()
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: 9,
            ..Default::default()
        },
    )
    .unwrap();
    fab.add_flow(flow(h[0], h[1], frames * 1000, 1000)).unwrap();
    drive(&mut fab);
    let c = fab.counters();
    // Binomial(20000, 0.01): sd ≈ 14; 5 sd.
    assert!((130..=270).contains(&c.drops_congestion), "{c:?}");
    // Lossless on: nothing dropped, each draw sent a real PAUSE upstream and a RESUME later.
    let switch = SwitchConfig {
        congestion_drop: p,
        ..pfc_switch(16 << 20, 40_000, 20_000)
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: 9,
            ..Default::default()
        },
    )
    .unwrap();
    fab.add_flow(flow(h[0], h[1], frames * 1000, 1000)).unwrap();
    drive(&mut fab);
    let c = fab.counters();
    assert_eq!(c.drops(), 0, "{c:?}");
    assert!((130..=270).contains(&c.congestion_draws_paused), "{c:?}");
    assert!(
        c.pauses_sent >= c.congestion_draws_paused / 2 && c.resumes_sent > 0,
        "{c:?}"
    );
    assert!(fab.port_stats(h[0], PortId(0)).unwrap().pfc_received > 0);
    assert!(fab.all_flows_done());
}

#[test]
fn link_loss_rules_drop_exactly_the_nth_frame() {
    let mut l = link(3);
    l.loss.rules.push(fabric::DropRule {
        flow: units::FlowId(0),
        nth: 3,
        count: 1,
    });
    let topo = Topology::back_to_back(l).unwrap();
    let mut fab = Fabric::new(&topo, FabricConfig::default()).unwrap();
    let h = fab.hosts();
    fab.set_tracer(Tracer::new(VecObserver::default()));
    fab.add_flow(flow(h[0], h[1], 5 * 1000, 1000)).unwrap();
    drive(&mut fab);
    assert_eq!(fab.counters().drops_rule, 1);
    assert_eq!(fab.flow_results()[0].delivered, 4000);
    let v = fab.tracer_mut().take::<VecObserver>().unwrap();
    let dropped: Vec<u64> = v
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            TraceRecord::Dropped {
                pkt,
                reason: engine::DropReason::Rule,
                ..
            } => Some(pkt.uid),
            _ => None,
        })
        .collect();
    // Uids count per sender: host 0's third frame is 2 × 2 nodes + node 0.
    assert_eq!(dropped, vec![4], "the third frame (uid 4) is the one lost");
}

fn hashed_run(seed: u64) -> (u64, u64) {
    let mut l = link(10);
    l.loss.corruption = Probability::from_f64(0.001).unwrap();
    let topo = Topology::fat_tree(4, l).unwrap();
    let cfg = FabricConfig {
        switch: SwitchConfig {
            ecn: Some(EcnConfig::dcqcn_paper(1 << 3)),
            ..pfc_switch(1 << 20, 30_000, 15_000)
        },
        seed,
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, cfg).unwrap();
    fab.set_tracer(Tracer::new(TraceHasher::default()));
    let hosts = fab.hosts();
    for i in 0..hosts.len() {
        fab.add_flow(flow(
            hosts[i],
            hosts[(i + 7) % hosts.len()],
            256 << 10,
            4096 - 62,
        ))
        .unwrap();
    }
    drive(&mut fab);
    let h = fab.tracer_mut().take::<TraceHasher>().unwrap();
    (h.hash(), h.records())
}

#[test]
fn same_seed_same_trace_hash() {
    let a = hashed_run(42);
    let b = hashed_run(42);
    assert_eq!(a, b);
    assert!(a.1 > 10_000, "the run traced something: {} records", a.1);
    assert_ne!(
        a.0,
        hashed_run(43).0,
        "the seed reaches the loss and ECN draws"
    );
}

#[test]
fn nonsense_configurations_are_typed_errors() {
    let topo = Topology::star(2, link(3)).unwrap();
    let bad = |switch: SwitchConfig| {
        Fabric::new(
            &topo,
            FabricConfig {
                switch,
                ..Default::default()
            },
        )
        .err()
        .unwrap()
    };
    let e = bad(pfc_switch(1 << 20, 10_000, 20_000));
    assert_eq!(e.field, "switch.pfc.xon_bytes");
    let e = bad(SwitchConfig {
        ecn: Some(EcnConfig {
            kmin_bytes: 9,
            kmax_bytes: 1,
            ..EcnConfig::dcqcn_paper(8)
        }),
        ..Default::default()
    });
    assert_eq!(e.field, "switch.ecn.kmin_bytes");
    let e = bad(pfc_switch(20_000, 15_000, 10_000));
    assert_eq!(e.field, "switch.buffer_bytes");
    assert!(e.to_string().contains("headroom"), "{e}");
    assert_eq!(
        Topology::fat_tree(5, link(3)).unwrap_err().field,
        "topology.k"
    );
    assert_eq!(
        Topology::back_to_back(link(1_000_000)).unwrap_err().field,
        "link.cable_m"
    );
    assert!(Bandwidth::from_bps(0).is_err());
    assert!(Probability::from_f64(1.01).is_err());
    assert!(Probability::from_f64(-0.5).is_err());
    let mut fab = Fabric::new(&topo, FabricConfig::default()).unwrap();
    let sw = topo.switches()[0];
    let h = topo.hosts();
    assert_eq!(
        fab.add_flow(flow(sw, h[0], 10, 10)).unwrap_err().field,
        "flow.src"
    );
    assert_eq!(
        fab.add_flow(flow(h[0], h[0], 10, 10)).unwrap_err().field,
        "flow.dst"
    );
    assert_eq!(
        fab.add_flow(flow(h[0], h[1], 10, 9_000)).unwrap_err().field,
        "flow.payload_mtu"
    );
}

/// Payload bytes delivered per flow up to the moment the first flow finishes.
#[derive(Default)]
struct DeliveredUntilFirstDone {
    per_flow: BTreeMap<u32, u64>,
    totals: BTreeMap<u32, u64>,
    stopped: bool,
}

impl Observer for DeliveredUntilFirstDone {
    fn record(&mut self, _at: SimTime, rec: &TraceRecord) {
        if let TraceRecord::Packet {
            stage: PacketStage::Delivered,
            pkt,
            ..
        } = rec
            && !self.stopped
        {
            let got = self.per_flow.entry(pkt.flow.0).or_default();
            *got += pkt.bytes as u64 - 62;
            if *got == self.totals[&pkt.flow.0] {
                self.stopped = true;
            }
        }
    }
}

fn two_class_share(scheduling: fabric::Scheduling) -> (u64, u64) {
    // Hosts 1 and 2 send the same amount to host 0, in priorities 1 and 6.
    let topo = Topology::incast(2, link(3)).unwrap();
    let switch = SwitchConfig {
        scheduling,
        ..pfc_switch(8 << 20, 1 << 20, 1 << 19)
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            ..Default::default()
        },
    )
    .unwrap();
    let h = topo.hosts();
    let bytes = 2000 * 1000;
    for (src, prio) in [(h[1], 1u8), (h[2], 6u8)] {
        fab.add_flow(RawFlow {
            priority: Priority::of(prio),
            ..flow(src, h[0], bytes, 1000)
        })
        .unwrap();
    }
    let totals = [(0, bytes), (1, bytes)].into_iter().collect();
    fab.set_tracer(Tracer::new(DeliveredUntilFirstDone {
        totals,
        ..Default::default()
    }));
    drive(&mut fab);
    let d = fab.tracer_mut().take::<DeliveredUntilFirstDone>().unwrap();
    let got = |f: u32| d.per_flow.get(&f).copied().unwrap_or(0);
    (got(0), got(1))
}

#[test]
fn egress_scheduling_strict_and_dwrr() {
    // DWRR 1:3 between priority 1 and priority 6: while both are backlogged, priority 6 gets
    // three quarters of the port.
    let mut weights = [1; 8];
    weights[6] = 3;
    let (low, high) = two_class_share(fabric::Scheduling {
        strict_mask: 0,
        dwrr_weights: weights,
    });
    let share = low as f64 / high as f64;
    assert!(
        (share - 1.0 / 3.0).abs() < 0.05,
        "low/high = {low}/{high} = {share:.3}"
    );
    // Equal weights: equal shares.
    let (low, high) = two_class_share(fabric::Scheduling::dwrr_equal());
    assert!(
        (low as f64 / high as f64 - 1.0).abs() < 0.05,
        "{low} vs {high}"
    );
    // Strict priority 6: priority 1 gets only what slipped through before the queue built up.
    let (low, high) = two_class_share(fabric::Scheduling::roce_default());
    assert!(low < high / 50, "{low} vs {high}");
}
