//! A PFC storm and the watchdog that contains it. The hol lab's dumbbell (a fast trunk, so
//! nothing congests at first) with three flows: `l-h0 → r-h0`, `l-h1 → r-h1` (the victim) and
//! `r-h2 → l-h2` (the other direction). At `stall_at_us`, `r-h0`'s NIC stops draining its
//! receive buffer and sends PAUSE for ever (a stuck PCIe or driver). The right switch's queue
//! to it fills, its ingress count from the trunk passes XOFF and it pauses the trunk; the left
//! switch's queues fill in turn and it pauses its hosts: the victim stops although nothing on
//! its path is congested. A PFC watchdog on the switches sees a queue paused with frames in it
//! for `detect_us`, drops what that queue holds and ignores its pauses until they stop: the
//! storm stays at the host that caused it.

use super::hol::lab_pfc;
use super::streams::{Streams, gbps};
use super::{Chart, LabError, LabResult, Params, Series};
use crate::world::RcOptions;
use fabric::{FabricConfig, LinkConfig, PfcWatchdog, Topology};
use units::{Bandwidth, NodeId, PortId, SimDuration};

const LINK_GBPS: u64 = 100;
const WINDOWS: u64 = 60;
const PRIO: usize = 3;

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let stall_at = SimDuration::from_us(p.int("stall_at_us") as u64);
    let detect = SimDuration::from_us(p.int("detect_us") as u64);
    let watchdog = p.flag("watchdog");
    let mut r = LabResult::new("storm", p);

    let link = LinkConfig::new(Bandwidth::gbps(LINK_GBPS), 3);
    let trunk = LinkConfig::new(Bandwidth::gbps(4 * LINK_GBPS), 3);
    let topo = Topology::dumbbell(3, link, trunk).map_err(LabError::sim)?;
    let mut cfg = FabricConfig::default();
    cfg.switch.pfc = Some(lab_pfc());
    cfg.switch.pfc_watchdog = watchdog.then_some(PfcWatchdog {
        detect,
        // Trusted again after twice the detection time without a PAUSE.
        restore: detect * 2,
    });
    // Hosts: l-h0..l-h2 are 0..=2, r-h0..r-h2 are 3..=5.
    let flows = [(0, 3), (1, 4), (5, 2)];
    let mut s = Streams::new(topo, cfg, &flows, &RcOptions::default())?;
    s.post_all_for(LINK_GBPS, d)?;
    let at = s.start + stall_at;
    s.w.stall_host(3, at).map_err(LabError::sim)?;

    let names = [
        "l-h0 → r-h0 (the host that stalls)",
        "l-h1 → r-h1",
        "r-h2 → l-h2",
    ];
    let mut flows_s: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: (*n).into(),
            points: vec![],
            labels: vec![],
        })
        .collect();
    let watched: Vec<(&str, Option<(NodeId, PortId)>)> = vec![
        ("r-h0 (the stalled NIC)", s.port("r-h0", "right")),
        ("right switch → trunk", s.port("right", "left")),
        ("left switch → l-h0", s.port("left", "l-h0")),
        ("left switch → l-h1", s.port("left", "l-h1")),
    ];
    let mut pauses: Vec<Series> = watched
        .iter()
        .map(|(n, _)| Series {
            name: (*n).into(),
            points: vec![],
            labels: vec![],
        })
        .collect();
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let (mut before, mut during, mut late) = (0u64, 0u64, 0u64);
    for k in 1..=WINDOWS {
        let t = window * k;
        let x = t.as_us_f64();
        let got = s.run_to(t)?;
        for (i, b) in got.iter().enumerate() {
            flows_s[i].points.push([x, gbps(*b, window)]);
        }
        if t <= stall_at {
            before += got[1];
        } else {
            during += got[1];
        }
        if k > WINDOWS * 3 / 4 {
            late += got[1];
        }
        for (i, (_, port)) in watched.iter().enumerate() {
            let n = port
                .and_then(|(n, p)| s.w.fabric.port_stats(n, p))
                .map_or(0, |st| st.pauses_sent);
            pauses[i].points.push([x, n as f64]);
        }
    }
    // Whole windows before and after the stall.
    let before_windows = (stall_at.as_ps() / window.as_ps()).max(1);
    let after_windows = (WINDOWS - before_windows.min(WINDOWS)).max(1);
    let v_before = gbps(before, window * before_windows);
    let v_during = gbps(during, window * after_windows);
    let v_late = gbps(late, window * (WINDOWS - WINDOWS * 3 / 4));
    let c = s.w.fabric.counters();
    let storm_pauses = watched[0]
        .1
        .and_then(|(n, p)| s.w.fabric.port_stats(n, p))
        .map_or(0, |st| st.pauses_sent);
    r.figure("victim_gbps_before", Some(v_before), "Gb/s");
    r.figure("victim_gbps_during", Some(v_during), "Gb/s");
    r.figure("storm_pauses", Some(storm_pauses as f64), "frames");
    r.figure(
        "watchdog_at_us",
        c.first_watchdog_storm
            .map(|t| t.saturating_duration_since(s.start).as_us_f64()),
        "µs",
    );
    r.figure("watchdog_drops", Some(c.drops_watchdog as f64), "frames");
    // Contained: the watchdog acted and the victim ends the run near its rate before the
    // stall.
    let contained = c.watchdog_storms > 0 && v_late >= 0.8 * v_before;
    r.verdict("contained", contained);
    r.verdict("victim_gbps_late", v_late);
    r.verdict("storms", c.watchdog_storms);
    // How long the victim's sender was held by pauses.
    let held = s
        .port("l-h1", "left")
        .map_or(0, |(n, p)| s.w.fabric.pause_time(n, p, PRIO, s.w.now()).0);
    r.verdict(
        "victim_sender_paused_pct",
        (held as f64 / d.as_ps() as f64 * 100.0).min(100.0),
    );
    r.charts.push(Chart {
        id: "flows",
        kind: "line",
        x_unit: "µs",
        y_unit: "Gb/s",
        series: flows_s,
    });
    r.charts.push(Chart {
        id: "pauses",
        kind: "step",
        x_unit: "µs",
        y_unit: "frames",
        series: pauses,
    });
    r.events = Some(s.events);
    Ok(r)
}
