//! A PFC deadlock on a ring. `switches` switches in a ring, one host on each; every host
//! writes [`FLOW_BYTES`] to the host two switches clockwise, whose only shortest path goes
//! through the next switch. Each ring link carries two flows at line rate, so queues build
//! and pauses spread around the ring; at a switch, frames that continue clockwise wait
//! behind the pause from the next switch, while frames for the local host drain. Once the
//! frames that continue fill an ingress count above XON, no pause on the ring can ever be
//! lifted: every switch waits for the next one, a cyclic buffer dependency. No frame is
//! lost and nothing moves; the requesters' ACK timers fire, but their resends wait behind
//! the same pauses.
//!
//! With `fix = "watchdog"` the switches run a PFC watchdog: a ring queue paused with frames
//! in it for [`DETECT`] is dropped and its pauses ignored for a while, the cycle breaks, and
//! go-back-N resends what was dropped. Routing that never closes a cycle (up–down routing on
//! a tree of the ring) or keeping the traffic lossy avoid it in the first place; the lab's
//! text discusses them.

use super::fabric_view::ViewRecorder;
use super::streams::Streams;
use super::{LINK_GBPS, LabError, LabResult, PRIO, Params, Series, Verdict, chart, lab_pfc};
use crate::world::RcOptions;
use fabric::{FabricConfig, LinkConfig, PfcWatchdog, Topology};
use serde::Serialize;
use units::{Bandwidth, SimDuration};

const WINDOWS: u64 = 50;
/// What each host writes.
pub(crate) const FLOW_BYTES: u64 = 2 << 20;
/// The watchdog's detection time in this lab (a lab choice so the run stays short; SONiC's
/// default is 200 ms).
const DETECT: SimDuration = SimDuration::from_us(50);
/// How long every flow must have stood still, with every ring link paused over queued frames
/// and nothing dropped, before the lab calls it a deadlock. The shortest run allowed
/// (`duration_us`) is longer.
pub(crate) const STALL: SimDuration = SimDuration::from_us(200);

/// Whether the ring deadlocked, and how its flows stood at the end. Times are µs from the
/// flows' start, read at the end of the sample window (a fiftieth of the run) they fell in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadlockVerdict {
    /// Every flow delivered all it writes (2 MiB each) within the run.
    pub completed: bool,
    /// When the last flow's bytes had all arrived, µs; `None` (null) when not every flow
    /// completed.
    pub completed_at_us: Option<f64>,
    /// A deadlock, not a slow network: the flows did not complete, nothing was delivered for
    /// at least `stall_threshold_us`, every ring link stayed paused over queued frames through
    /// the samples of that last stretch, and no frame was dropped.
    pub deadlocked: bool,
    /// Frames the fabric dropped, for any reason (the watchdog's included).
    pub drops: u64,
    /// Ring links paused at the end of the run (the `paused` chart's last point), links.
    pub paused_links_at_end: f64,
    /// How long every flow must have stood still to count as a deadlock, µs (the lab's
    /// `STALL`).
    pub stall_threshold_us: f64,
    /// How long nothing was delivered, up to the end of the run, µs; `None` (null) when every
    /// flow completed.
    pub stalled_for_us: Option<f64>,
    /// When a flow last delivered (the end of the last window with a delivery), µs; `None`
    /// (null) when every flow completed.
    pub stalled_since_us: Option<f64>,
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let n = p.int("switches") as u64;
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let watchdog = p.choice("fix") == "watchdog";
    let mut r = LabResult::new("deadlock", p);
    r.note_pfc(LINK_GBPS);

    let link = LinkConfig::new(Bandwidth::gbps(LINK_GBPS), 3);
    let topo = Topology::ring(n, link).map_err(LabError::sim)?;
    let mut cfg = FabricConfig::default();
    cfg.switch.pfc = Some(lab_pfc());
    cfg.switch.pfc_watchdog = watchdog.then_some(PfcWatchdog {
        detect: DETECT,
        restore: DETECT * 2,
    });
    let flows: Vec<(u32, u32)> = (0..n as u32).map(|i| (i, (i + 2) % n as u32)).collect();
    // A 0.5 ms local ACK timeout (4.096 µs × 2^7) so a resend after a watchdog drop at the
    // tail of a flow comes within the run.
    let o = RcOptions {
        timeout: 7,
        ..RcOptions::default()
    };
    let mut s = Streams::new(topo, cfg, &flows, &o)?;
    for i in 0..flows.len() {
        s.post(i, FLOW_BYTES)?;
    }
    let ring_ports: Vec<_> = (0..n)
        .filter_map(|i| s.port(&format!("sw{i}"), &format!("sw{}", (i + 1) % n)))
        .collect();
    let mut delivered: Vec<Series> = flows
        .iter()
        .map(|(a, b)| Series::new(format!("h{a} → h{b}")))
        .collect();
    let mut paused = Series::new("ring links paused");
    // Whether every ring link was paused over queued frames, at each sample.
    let mut all_held = Vec::new();
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let mut view = ViewRecorder::attach(s.w.fabric_mut(), &s.topo, s.start, window);
    let mut last_progress = SimDuration::ZERO;
    let mut completed_at = None;
    let total = FLOW_BYTES * flows.len() as u64;
    for k in 1..=WINDOWS {
        let t = window * k;
        let x = t.as_us_f64();
        let got = s.run_to(t)?;
        view.sample(s.w.fabric_mut(), t);
        if got.iter().any(|&b| b > 0) {
            last_progress = t;
        }
        for (i, series) in delivered.iter_mut().enumerate() {
            series.points.push([x, s.delivered[i] as f64 / 1e6]);
        }
        let now = s.w.now();
        let f = s.w.fabric();
        let held = ring_ports
            .iter()
            .filter(|&&(node, port)| f.is_paused(node, port, PRIO, now))
            .count();
        paused.points.push([x, held as f64]);
        all_held.push(ring_ports.iter().all(|&(node, port)| {
            f.is_paused(node, port, PRIO, now) && f.queue_bytes(node, port, PRIO) > 0
        }));
        if completed_at.is_none() && s.delivered.iter().sum::<u64>() >= total {
            completed_at = Some(t);
        }
    }
    let delivered_total: u64 = s.delivered.iter().sum();
    let completed = delivered_total >= total;
    let stalled_for = d.saturating_sub(last_progress);
    let threshold = STALL;
    let c = s.w.fabric().counters();
    // A deadlock, not a slow network: over the last `threshold` every ring link stayed
    // paused with frames behind it, nothing moved and nothing was dropped.
    let tail = (threshold.as_ps().div_ceil(window.as_ps()) as usize).max(1);
    let held_throughout = all_held.len() >= tail && all_held.iter().rev().take(tail).all(|&h| h);
    let deadlocked = !completed && stalled_for >= threshold && held_throughout && c.drops() == 0;
    let paused_at_end = paused.points.last().map_or(0.0, |p| p[1]);
    r.figure("delivered_mb", Some(delivered_total as f64 / 1e6), "MB");
    r.figure(
        "stalled_for_us",
        (!completed).then(|| stalled_for.as_us_f64()),
        "µs",
    );
    r.figure("watchdog_drops", Some(c.drops_watchdog as f64), "frames");
    // Only a run that did not complete has stood still.
    let unless_completed = |v: SimDuration| (!completed).then(|| v.as_us_f64());
    r.verdict = Verdict::Deadlock(DeadlockVerdict {
        completed,
        completed_at_us: completed_at.map(|t| t.as_us_f64()),
        deadlocked,
        drops: c.drops(),
        paused_links_at_end: paused_at_end,
        stall_threshold_us: threshold.as_us_f64(),
        stalled_for_us: unless_completed(stalled_for),
        stalled_since_us: unless_completed(last_progress),
    });
    r.charts
        .push(chart("delivered", "line", ("µs", "MB"), delivered));
    r.charts
        .push(chart("paused", "step", ("µs", "links"), vec![paused]));
    r.fabric = Some(view.finish(s.w.fabric_mut()));
    r.events = Some(s.events);
    Ok(r)
}
