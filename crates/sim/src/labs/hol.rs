//! PFC's head-of-line victim. Two switches joined by a fast trunk (as fast as all the left
//! hosts together, so the trunk is never the bottleneck); on the left, `senders` hosts write to one host on the right
//! (`r-h0`, the congested port) and one more left host (`l-h0`) writes to an idle right host
//! (`r-h1`). With PFC the right switch pauses the whole trunk when its ingress count from it
//! passes XOFF, and the victim's frames wait behind the pause although their own egress port
//! is idle. Without PFC the incast's frames are dropped instead and the victim runs free. The
//! same victim alone gives the baseline.

use super::fabric_view::ViewRecorder;
use super::streams::{Streams, gbps};
use super::{LINK_GBPS, LabError, LabResult, Params, Series, Verdict, chart, lab_pfc};
use crate::world::RcOptions;
use fabric::{FabricConfig, LinkConfig, Topology};
use serde::Serialize;
use units::{Bandwidth, SimDuration};

/// Sample windows per run.
const WINDOWS: u64 = 50;

/// How much the victim waited behind someone else's pauses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HolVerdict {
    /// Share of the run the left switch's trunk egress, where the victim's frames wait, was
    /// held by the right switch's PAUSE, % (0 without PFC).
    pub victim_paused_pct: f64,
}

fn build(senders: u64, pfc: bool, with_incast: bool) -> Result<Streams, LabError> {
    let link = LinkConfig::new(Bandwidth::gbps(LINK_GBPS), 3);
    // Faster than every left host together: the trunk never congests by itself.
    let trunk = LinkConfig::new(Bandwidth::gbps((senders + 1) * LINK_GBPS), 3);
    let topo = Topology::dumbbell(senders + 1, link, trunk).map_err(LabError::sim)?;
    let mut cfg = FabricConfig::default();
    cfg.switch.pfc = pfc.then(lab_pfc);
    // Left hosts are ordinals 0..=senders, right hosts follow.
    let right = senders as u32 + 1;
    let mut flows = vec![(0, right + 1)];
    if with_incast {
        flows.extend((1..=senders as u32).map(|h| (h, right)));
    }
    Streams::new(topo, cfg, &flows, &RcOptions::default())
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let senders = p.int("senders") as u64;
    let pfc = p.flag("pfc");
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let mut r = LabResult::new("hol", p);
    if pfc {
        r.note_pfc(LINK_GBPS);
    }

    let mut with = build(senders, pfc, true)?;
    let mut alone = build(senders, pfc, false)?;
    with.post_all_for(LINK_GBPS, d)?;
    alone.post_all_for(LINK_GBPS, d)?;
    let mut view = ViewRecorder::attach(with.w.fabric_mut(), &with.topo, with.start, window);
    let trunk_in = with.port("right", "left");
    let to_r0 = with.port("right", "r-h0");
    let trunk_out = with.port("left", "right");
    let mut victim = Series::new("with incast");
    let mut victim_alone = Series::new("alone");
    let mut q_r0 = Series::new("right → r-h0 (congested port)");
    let mut q_trunk = Series::new("left → trunk (where the victim waits)");
    let mut pauses_trunk = Series::new("right → left (trunk)");
    let mut pauses_hosts = Series::new("left → its hosts");
    let left_host_ports: Vec<_> = (0..=senders)
        .map(|i| with.port("left", &format!("l-h{i}")))
        .collect();
    for k in 1..=WINDOWS {
        let t = window * k;
        let x = t.as_us_f64();
        let dw = with.run_to(t)?;
        view.sample(with.w.fabric_mut(), t);
        let da = alone.run_to(t)?;
        victim.points.push([x, gbps(dw[0], window)]);
        victim_alone.points.push([x, gbps(da[0], window)]);
        q_r0.points.push([x, with.queue_kb(to_r0)]);
        q_trunk.points.push([x, with.queue_kb(trunk_out)]);
        pauses_trunk
            .points
            .push([x, with.pauses_sent(&[trunk_in]) as f64]);
        pauses_hosts
            .points
            .push([x, with.pauses_sent(&left_host_ports) as f64]);
    }
    let v = gbps(with.delivered[0], d);
    let va = gbps(alone.delivered[0], d);
    r.figure("victim_gbps", Some(v), "Gb/s");
    r.figure("victim_alone_gbps", Some(va), "Gb/s");
    r.figure("slowdown", (v > 0.0).then(|| va / v), "×");
    let c = with.w.fabric().counters();
    r.figure("pauses", Some(c.pauses_sent as f64), "frames");
    r.figure("drops", Some(c.drops() as f64), "frames");
    r.verdict = Verdict::Hol(HolVerdict {
        victim_paused_pct: with.paused_pct(trunk_out, d),
    });
    r.charts.push(chart(
        "victim",
        "line",
        ("µs", "Gb/s"),
        vec![victim, victim_alone],
    ));
    r.charts
        .push(chart("queue", "line", ("µs", "KB"), vec![q_r0, q_trunk]));
    r.charts.push(chart(
        "pauses",
        "step",
        ("µs", "frames"),
        vec![pauses_trunk, pauses_hosts],
    ));
    r.fabric = Some(view.finish(with.w.fabric_mut()));
    r.events = Some(with.events + alone.events);
    Ok(r)
}
