//! PFC's failure modes, with raw flows: a storm from a host that stops draining, the PFC
//! watchdog that contains it, a deadlock on a ring and the watchdog that breaks it, and a
//! port MTU that drops what does not fit.

use engine::{Budget, Scheduler, run};
use fabric::{Fabric, FabricConfig, FabricEvent, PfcConfig, PfcWatchdog, SwitchConfig, Topology};
use units::{NodeId, PortId, SimDuration, SimTime};

use crate::support;
use support::{flow, link, with_switch};

fn switch(watchdog: Option<SimDuration>) -> SwitchConfig {
    SwitchConfig {
        pfc: Some(PfcConfig::new(1 << 3, 256 << 10, (256 << 10) - 8_400)),
        pfc_watchdog: watchdog.map(|d| PfcWatchdog {
            detect: d,
            restore: d * 2,
        }),
        ..SwitchConfig::default()
    }
}

/// The port of `node` whose cable leads to `peer`.
fn port_towards(_: &Topology, fab: &Fabric, node: NodeId, peer: NodeId) -> PortId {
    fab.port_to(node, peer).expect("cabled")
}

/// Runs for `d` of simulated time (a deadlock or a storm never runs out of events).
fn drive_for(fab: &mut Fabric, sched: &mut Scheduler<FabricEvent>, d: SimDuration) {
    fab.schedule_flows(sched);
    run(
        fab,
        sched,
        &Budget {
            sim_time: d,
            ..Budget::default()
        },
    )
    .map(|_| ())
    .or_else(|e| match e {
        engine::BudgetExceeded::SimTime { .. } => Ok(()),
        e => Err(e),
    })
    .expect("only the time budget ends the run");
}

/// h0 stops draining at 20 µs; h1 writes to h0 and to h2 through one switch.
fn storm(watchdog: Option<SimDuration>) -> (Topology, Fabric, SimTime) {
    let topo = Topology::star(3, link(3)).unwrap();
    let h = topo.hosts();
    let mut fab = with_switch(&topo, switch(watchdog));
    fab.add_flow(flow(h[1], h[0], 8 << 20, 4096)).unwrap();
    fab.add_flow(flow(h[1], h[2], 4 << 20, 4096)).unwrap();
    let mut sched = Scheduler::new();
    let at = SimTime::ZERO + SimDuration::from_us(20);
    fab.stall_host(h[0], at, &mut sched).unwrap();
    drive_for(&mut fab, &mut sched, SimDuration::from_ms(2));
    (topo, fab, at)
}

#[test]
fn a_host_that_stops_draining_pauses_its_switch_and_then_its_senders() {
    let (topo, fab, at) = storm(None);
    let h = topo.hosts();
    let sw = topo.switches()[0];
    let end = SimTime::ZERO + SimDuration::from_ms(2);
    // The stalled NIC keeps refreshing its pause for ever.
    let nic = port_towards(&topo, &fab, h[0], sw);
    let stats = fab.port_stats(h[0], nic).unwrap();
    assert!(stats.pauses_sent >= 5, "{stats:?}");
    let (_, tx) = fab.pause_time(h[0], nic, 3, end);
    assert_eq!(tx, (end - at).as_ps(), "it has paused since the stall");
    // The switch's port to it has been held ever since.
    let to_h0 = port_towards(&topo, &fab, sw, h[0]);
    assert!(fab.is_paused(sw, to_h0, 3, end));
    let (rx, _) = fab.pause_time(sw, to_h0, 3, end);
    assert!(rx > (end - at).as_ps() * 99 / 100, "{rx}");
    // The queue behind it filled past XOFF, so the switch paused h1 too: h1's flow to h2,
    // whose own path is idle, stops as well. Nothing is dropped.
    let r = fab.flow_results();
    assert!(r[1].finish.is_none(), "{r:?}");
    let from_h1 = port_towards(&topo, &fab, h[1], sw);
    assert!(fab.is_paused(h[1], from_h1, 3, end));
    assert_eq!(fab.counters().drops(), 0);
}

#[test]
fn the_watchdog_contains_the_storm_at_the_stalled_port() {
    let detect = SimDuration::from_us(100);
    let (topo, fab, at) = storm(Some(detect));
    let c = fab.counters();
    assert_eq!(c.watchdog_storms, 1, "{c:?}");
    let first = c.first_watchdog_storm.expect("a storm was detected");
    // One detection time after the switch's port to h0 was paused (the pause takes a frame
    // time to arrive).
    assert!(
        first >= at + detect && first < at + detect + SimDuration::from_us(5),
        "{first:?}"
    );
    assert!(c.drops_watchdog > 0);
    // The frames for h0 are dropped at the switch; h1 is free again and its flow to h2 ends.
    let r = fab.flow_results();
    assert!(r[0].finish.is_none());
    assert_eq!(r[1].delivered, 4 << 20, "{r:?}");
    assert!(r[1].finish.is_some());
    let sw = topo.switches()[0];
    let to_h0 = port_towards(&topo, &fab, sw, topo.hosts()[0]);
    assert!(fab.pfc_stats(sw, to_h0).unwrap().watchdog_drops > 0);
}

/// Five switches in a ring, each host writing 2 MiB to the host two switches on.
fn ring(watchdog: Option<SimDuration>) -> (Topology, Fabric) {
    let topo = Topology::ring(5, link(3)).unwrap();
    let h = topo.hosts();
    let mut fab = with_switch(&topo, switch(watchdog));
    for i in 0..5 {
        fab.add_flow(flow(h[i], h[(i + 2) % 5], 2 << 20, 4096))
            .unwrap();
    }
    let mut sched = Scheduler::new();
    drive_for(&mut fab, &mut sched, SimDuration::from_ms(3));
    (topo, fab)
}

#[test]
fn a_ring_of_lossless_switches_deadlocks() {
    let (topo, fab) = ring(None);
    let end = SimTime::ZERO + SimDuration::from_ms(3);
    let r = fab.flow_results();
    assert!(r.iter().all(|f| f.finish.is_none()), "{r:?}");
    // Each flow stopped far short of its 2 MiB, nothing was dropped, and every ring link is
    // paused: a cycle of switches each waiting for the next.
    assert!(r.iter().all(|f| f.delivered < 1 << 20), "{r:?}");
    assert_eq!(fab.counters().drops(), 0);
    let sw = topo.switches();
    for i in 0..5 {
        let p = port_towards(&topo, &fab, sw[i], sw[(i + 1) % 5]);
        assert!(fab.is_paused(sw[i], p, 3, end), "sw{i} → sw{}", (i + 1) % 5);
    }
}

#[test]
fn the_watchdog_breaks_the_ring_deadlock() {
    let (_, stuck) = ring(None);
    let (_, fab) = ring(Some(SimDuration::from_us(50)));
    let frames = (2u64 << 20) / 4096;
    // Deadlocked: the senders are held with frames unsent, and frames sit in the ring's
    // buffers for ever, neither delivered nor dropped.
    for f in stuck.flow_results() {
        assert!(f.frames_sent < frames, "{f:?}");
        assert!(
            f.delivered / 4096 + f.frames_dropped < f.frames_sent,
            "{f:?}"
        );
    }
    // With the watchdog every frame leaves its sender and nothing stays in the fabric: what
    // is not delivered was dropped by the watchdog (raw flows do not resend; RC does, see
    // the deadlock lab).
    let c = fab.counters();
    assert!(c.watchdog_storms > 0, "{c:?}");
    for f in fab.flow_results() {
        assert_eq!(f.frames_sent, frames, "{f:?}");
        assert_eq!(f.delivered / 4096 + f.frames_dropped, frames, "{f:?}");
    }
    assert_eq!(
        c.drops_watchdog,
        fab.flow_results()
            .iter()
            .map(|f| f.frames_dropped)
            .sum::<u64>()
    );
}

#[test]
fn a_port_mtu_drops_frames_that_do_not_fit() {
    let topo = Topology::star(2, link(3)).unwrap();
    let h = topo.hosts();
    let cfg = FabricConfig {
        switch: SwitchConfig {
            mtu_bytes: Some(1_500),
            ..SwitchConfig::default()
        },
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, cfg.clone()).unwrap();
    fab.add_flow(flow(h[0], h[1], 64 << 10, 4096)).unwrap();
    fab.add_flow(flow(h[1], h[0], 64 << 10, 1024)).unwrap();
    let mut sched = Scheduler::new();
    drive_for(&mut fab, &mut sched, SimDuration::from_ms(1));
    let r = fab.flow_results();
    assert_eq!(r[0].delivered, 0);
    assert_eq!(r[1].delivered, 64 << 10);
    assert_eq!(fab.counters().drops_oversize, 16);
    // The MTU is checked: an IP packet below IPv4's minimum is refused.
    let mut bad = cfg;
    bad.switch.mtu_bytes = Some(100);
    assert!(Fabric::new(&topo, bad).is_err());
}

/// Model-fidelity issue, item 4: a frame longer than its own port's MTU is a recorded drop at
/// that port, counted and explained, never a silent free; a jumbo port takes a jumbo frame.
#[test]
fn a_frame_longer_than_the_hosts_mtu_is_a_recorded_drop() {
    use fabric::{Ecn, EtherType, PacketSpec, Payload};
    let topo = Topology::star(2, link(3)).unwrap();
    let h = topo.hosts();
    let frame = |len_bytes| PacketSpec {
        flow: units::FlowId(0),
        dst: h[1],
        priority: units::Priority::of(0),
        ecn: Ecn::NotEct,
        len_bytes,
        ecmp_hash: 0,
        ethertype: EtherType::MacControl,
        payload: Payload::Pause {
            class_enable: 0,
            quanta: [0; 8],
        },
    };
    let cfg = FabricConfig {
        mtu_bytes: 1_500,
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, cfg).unwrap();
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.send(h[0], frame(1_522), &mut sched).unwrap();
    assert_eq!(fab.counters().drops_oversize, 0, "1500 + 22 bytes fits");
    assert!(fab.oversize().is_none());
    fab.send(h[0], frame(9_000), &mut sched).unwrap();
    assert_eq!(fab.counters().drops_oversize, 1);
    let why = fab.oversize().unwrap().to_string();
    assert!(
        why.contains("9000-byte frame") && why.contains("IP MTU is 1500 bytes"),
        "{why}"
    );
    // A 9216-byte port takes it; anything larger is refused as a configuration.
    let jumbo = FabricConfig {
        mtu_bytes: 9_216,
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, jumbo.clone()).unwrap();
    fab.send(h[0], frame(9_000), &mut sched).unwrap();
    assert_eq!(fab.counters().drops_oversize, 0);
    let e = Fabric::new(
        &topo,
        FabricConfig {
            mtu_bytes: 9_217,
            ..jumbo
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.field, "fabric.mtu_bytes");
}

#[test]
fn the_mtu_counts_the_ip_packet_exactly() {
    // A raw frame is the payload plus 62 bytes (`RAW_FRAME_OVERHEAD`), 22 of them outside
    // the IP packet (Ethernet, 802.1Q, FCS): 1460 bytes of payload make a 1500-byte packet.
    let ip = |payload: u32| payload + fabric::packet::RAW_FRAME_OVERHEAD - 22;
    assert_eq!(ip(1460), 1500);
    let topo = Topology::star(2, link(3)).unwrap();
    let h = topo.hosts();
    let cfg = FabricConfig {
        switch: SwitchConfig {
            mtu_bytes: Some(1_500),
            ..SwitchConfig::default()
        },
        ..Default::default()
    };
    let mut fab = Fabric::new(&topo, cfg).unwrap();
    fab.add_flow(flow(h[0], h[1], 1460 * 8, 1460)).unwrap();
    fab.add_flow(flow(h[1], h[0], 1461 * 8, 1461)).unwrap();
    let mut sched = Scheduler::new();
    drive_for(&mut fab, &mut sched, SimDuration::from_us(100));
    let r = fab.flow_results();
    assert_eq!(r[0].delivered, 1460 * 8, "a 1500-byte packet fits");
    assert_eq!(r[1].delivered, 0, "a 1501-byte one does not");
    assert_eq!(fab.counters().drops_oversize, 8);
}

#[test]
fn a_refreshed_pause_keeps_the_port_closed_through_the_response_time() {
    // A stalled host refreshes its pause every half pause time. With a response time, the
    // refresh takes effect later than it arrives; the port must not reopen in between.
    let topo = Topology::star(2, link(3)).unwrap();
    let h = topo.hosts();
    let mut sw = switch(None);
    sw.pfc.as_mut().unwrap().response_time = SimDuration::from_us(1);
    let mut fab = with_switch(&topo, sw);
    fab.add_flow(flow(h[1], h[0], 64 << 20, 4096)).unwrap();
    let mut sched = Scheduler::new();
    let at = SimTime::ZERO + SimDuration::from_us(10);
    fab.stall_host(h[0], at, &mut sched).unwrap();
    fab.schedule_flows(&mut sched);
    let s = topo.switches()[0];
    let to_h0 = fab.port_to(s, h[0]).unwrap();
    let budget = Budget::default();
    // Once the first pause has taken effect (and the frame on the wire finished) ...
    let closed = at + SimDuration::from_us(3);
    engine::run_until(&mut fab, &mut sched, &budget, closed).unwrap();
    let sent_then = fab.port_stats(s, to_h0).unwrap().tx_frames;
    let end = SimTime::ZERO + SimDuration::from_ms(2);
    engine::run_until(&mut fab, &mut sched, &budget, end).unwrap();
    // ... several refreshes arrive, and not one more frame leaves the port.
    let st = fab.port_stats(s, to_h0).unwrap();
    assert!(st.pfc_received >= 5, "{st:?}");
    assert_eq!(st.tx_frames, sent_then, "frames left a paused port");
    // The port was held from the first pause to the end without a gap.
    let (rx, _) = fab.pause_time(s, to_h0, 3, end);
    let first = at + SimDuration::from_us(1);
    let stretch = (end - first).as_ps();
    assert!(
        rx <= stretch && rx + SimDuration::from_us(2).as_ps() >= stretch,
        "held {rx} ps of {stretch}"
    );
}
