//! A PFC deadlock on a ring. `switches` switches in a ring, one host on each; every host
//! writes [`FLOW_BYTES`] to the host two switches clockwise, whose only shortest path goes
//! through the next switch. Each ring link carries two flows at line rate, so queues build
//! and pauses spread around the ring; at a switch, frames that continue clockwise wait
//! behind the pause from the next switch, while frames for the local host drain. Once the
//! frames that continue fill an ingress count above XON, no pause on the ring can ever be
//! lifted: every switch waits for the next one, a cyclic buffer dependency. No frame is
//! lost, no timer fires, nothing moves.
//!
//! With `fix = "watchdog"` the switches run a PFC watchdog: a ring queue paused with frames
//! in it for [`DETECT`] is dropped and its pauses ignored for a while, the cycle breaks, and
//! go-back-N resends what was dropped. Routing that never closes a cycle (up–down routing on
//! a tree of the ring) or keeping the traffic lossy avoid it in the first place; the lab's
//! text discusses them.

use super::hol::lab_pfc;
use super::streams::Streams;
use super::{Chart, LabError, LabResult, Params, Series};
use crate::world::RcOptions;
use fabric::{FabricConfig, LinkConfig, PfcWatchdog, Topology};
use units::{Bandwidth, SimDuration};

const LINK_GBPS: u64 = 100;
const WINDOWS: u64 = 50;
const PRIO: usize = 3;
/// What each host writes.
pub(crate) const FLOW_BYTES: u64 = 2 << 20;
/// The watchdog's detection time in this lab (a lab choice so the run stays short; SONiC's
/// default is 200 ms).
const DETECT: SimDuration = SimDuration::from_us(50);
/// No progress for this long (or a tenth of the run, if longer) while data waits is a
/// deadlock.
const STALL: SimDuration = SimDuration::from_us(200);

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let n = p.int("switches") as u64;
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let watchdog = p.choice("fix") == "watchdog";
    let mut r = LabResult::new("deadlock", p);

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
        .map(|(a, b)| Series {
            name: format!("h{a} → h{b}"),
            points: vec![],
            labels: vec![],
        })
        .collect();
    let mut paused = Series {
        name: "ring links paused".into(),
        points: vec![],
        labels: vec![],
    };
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let mut last_progress = SimDuration::ZERO;
    let mut completed_at = None;
    let total = FLOW_BYTES * flows.len() as u64;
    for k in 1..=WINDOWS {
        let t = window * k;
        let x = t.as_us_f64();
        let got = s.run_to(t)?;
        if got.iter().any(|&b| b > 0) {
            last_progress = t;
        }
        for (i, series) in delivered.iter_mut().enumerate() {
            series.points.push([x, s.delivered[i] as f64 / 1e6]);
        }
        let now = s.w.now();
        let held = ring_ports
            .iter()
            .filter(|&&(node, port)| s.w.fabric.is_paused(node, port, PRIO, now))
            .count();
        paused.points.push([x, held as f64]);
        if completed_at.is_none() && s.delivered.iter().sum::<u64>() >= total {
            completed_at = Some(t);
        }
    }
    let delivered_total: u64 = s.delivered.iter().sum();
    let completed = delivered_total >= total;
    let stalled_for = d.saturating_sub(last_progress);
    let threshold = STALL.max(SimDuration::from_ps(d.as_ps() / 10));
    let deadlocked = !completed && stalled_for >= threshold;
    let c = s.w.fabric.counters();
    r.figure("delivered_mb", Some(delivered_total as f64 / 1e6), "MB");
    r.figure(
        "stalled_for_us",
        (!completed).then(|| stalled_for.as_us_f64()),
        "µs",
    );
    r.figure("watchdog_drops", Some(c.drops_watchdog as f64), "frames");
    r.verdict("deadlocked", deadlocked);
    r.verdict("completed", completed);
    r.verdict(
        "completed_at_us",
        completed_at
            .map(|t| t.as_us_f64())
            .map_or(serde_json::Value::Null, Into::into),
    );
    r.verdict(
        "stalled_since_us",
        if completed {
            serde_json::Value::Null
        } else {
            last_progress.as_us_f64().into()
        },
    );
    r.verdict("stalled_for_us", stalled_for.as_us_f64());
    r.verdict("stall_threshold_us", threshold.as_us_f64());
    r.verdict("drops", c.drops());
    r.charts.push(Chart {
        id: "delivered",
        kind: "line",
        x_unit: "µs",
        y_unit: "MB",
        series: delivered,
    });
    r.charts.push(Chart {
        id: "paused",
        kind: "step",
        x_unit: "µs",
        y_unit: "links",
        series: vec![paused],
    });
    r.events = Some(s.events);
    Ok(r)
}
