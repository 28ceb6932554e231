//! A PFC storm and the watchdog that contains it. The hol lab's dumbbell (a fast trunk, so
//! nothing congests at first) with three flows: `l-h0 → r-h0`, `l-h1 → r-h1` (the victim) and
//! `r-h2 → l-h2` (the other direction). At `stall_at_us`, `r-h0`'s NIC stops draining its
//! receive buffer and sends PAUSE for ever (a stuck PCIe or driver). The right switch's queue
//! to it fills, its ingress count from the trunk passes XOFF and it pauses the trunk; the left
//! switch's queues fill in turn and it pauses its hosts: the victim stops although nothing on
//! its path is congested. A PFC watchdog on the switches sees a queue paused with frames in it
//! for `detect_us`, drops what that queue holds and ignores its pauses until they stop: the
//! storm stays at the host that caused it.

use super::fabric_view::ViewRecorder;
use super::streams::{Streams, gbps};
use super::{LINK_GBPS, LabError, LabResult, Params, Series, Verdict, chart, lab_pfc};
use crate::world::RcOptions;
use fabric::{FabricConfig, LinkConfig, PfcWatchdog, Topology};
use serde::Serialize;
use units::{Bandwidth, NodeId, PortId, SimDuration};

const WINDOWS: u64 = 60;

/// Whether the storm stayed at the host that caused it, and what it did to the victim
/// (`l-h1 → r-h1`, whose path is never congested).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StormVerdict {
    /// The watchdog acted and the victim ended the run at 80% or more of its rate before the
    /// stall.
    pub contained: bool,
    /// Storms the PFC watchdog detected, over every switch port.
    pub storms: u64,
    /// The victim's goodput over the last quarter of the run, Gb/s.
    pub victim_gbps_late: f64,
    /// Share of the run the victim's sender (`l-h1`'s port to the left switch) was held by
    /// PAUSE, %.
    pub victim_sender_paused_pct: f64,
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let stall_at = SimDuration::from_us(p.int("stall_at_us") as u64);
    let detect = SimDuration::from_us(p.int("detect_us") as u64);
    let watchdog = p.flag("watchdog");
    let mut r = LabResult::new("storm", p);
    r.note_pfc(LINK_GBPS);

    let link = LinkConfig::new(Bandwidth::gbps(LINK_GBPS), 3);
    let trunk = LinkConfig::new(Bandwidth::gbps(4 * LINK_GBPS), 3);
    let topo = Topology::dumbbell(3, link, trunk).map_err(LabError::sim)?;
    let mut cfg = FabricConfig::default();
    cfg.switch.pfc = Some(lab_pfc());
    // Trusted again after twice the detection time without a PAUSE, and never sooner than
    // one PAUSE's own duration: the stalled NIC refreshes its pause every half of that, and
    // a shorter restore would end the storm between two refreshes and find it again (a lab
    // choice; SONiC's pfcwd takes both times from its configuration).
    let pfc = lab_pfc();
    let one_pause = wire::pfc::pause_duration(pfc.pause_quanta, Bandwidth::gbps(LINK_GBPS));
    cfg.switch.pfc_watchdog = watchdog.then_some(PfcWatchdog {
        detect,
        restore: (detect * 2).max(one_pause),
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
    let mut flows_s: Vec<Series> = names.iter().map(|n| Series::new(*n)).collect();
    let watched: Vec<(&str, Option<(NodeId, PortId)>)> = vec![
        ("r-h0 (the stalled NIC)", s.port("r-h0", "right")),
        ("right switch → trunk", s.port("right", "left")),
        ("left switch → l-h0", s.port("left", "l-h0")),
        ("left switch → l-h1", s.port("left", "l-h1")),
    ];
    let mut pauses: Vec<Series> = watched.iter().map(|(n, _)| Series::new(*n)).collect();
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let mut view = ViewRecorder::attach(s.w.fabric_mut(), &s.topo, s.start, window);
    let (mut before, mut late) = (0u64, 0u64);
    // The victim's bytes per window, to average over the storm once its end is known.
    let mut victim = Vec::new();
    for k in 1..=WINDOWS {
        let t = window * k;
        let x = t.as_us_f64();
        let got = s.run_to(t)?;
        view.sample(s.w.fabric_mut(), t);
        for (i, b) in got.iter().enumerate() {
            flows_s[i].points.push([x, gbps(*b, window)]);
        }
        if t <= stall_at {
            before += got[1];
        }
        victim.push((t, got[1]));
        if k > WINDOWS * 3 / 4 {
            late += got[1];
        }
        for (i, &(_, port)) in watched.iter().enumerate() {
            pauses[i].points.push([x, s.pauses_sent(&[port]) as f64]);
        }
    }
    let c = s.w.fabric().counters();
    // Whole windows before the stall (the parameters keep the stall inside the run).
    let before_windows = (stall_at.as_ps() / window.as_ps()).clamp(1, WINDOWS);
    let v_before = gbps(before, window * before_windows);
    // During the storm: the windows from the stall until the watchdog acted (or the end).
    let contained_at = c
        .first_watchdog_storm
        .map_or(d, |t| t.saturating_duration_since(s.start));
    let storm: Vec<u64> = victim
        .iter()
        .filter(|&&(t, _)| t > stall_at && t <= contained_at.max(stall_at + window))
        .map(|&(_, b)| b)
        .collect();
    let v_during = gbps(storm.iter().sum(), window * (storm.len().max(1) as u64));
    let v_late = gbps(late, window * (WINDOWS - WINDOWS * 3 / 4));
    let storm_pauses = s.pauses_sent(&[watched[0].1]);
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
    r.verdict = Verdict::Storm(StormVerdict {
        contained,
        storms: c.watchdog_storms,
        victim_gbps_late: v_late,
        victim_sender_paused_pct: s.paused_pct(s.port("l-h1", "left"), d),
    });
    r.charts
        .push(chart("flows", "line", ("µs", "Gb/s"), flows_s));
    r.charts
        .push(chart("pauses", "step", ("µs", "frames"), pauses));
    r.fabric = Some(view.finish(s.w.fabric_mut()));
    r.events = Some(s.events);
    Ok(r)
}
