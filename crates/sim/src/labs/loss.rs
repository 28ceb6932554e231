//! Go-back-N, selective repeat and TCP over a loss sweep: the comparison report's stream
//! (preset ①'s hosts, switch and 100 Gb/s links, a [`STREAM_US`] stream) with independent
//! per-frame corruption on every link at three rates up to `max_loss_pct`. Each point is one
//! run of the report, so goodput, drops and resends are what `rdmalab run` gives for the same
//! `--set`s; the loss-free point is the report's own baseline run. A path that delivered
//! nothing for the last millisecond (go-back-N waiting out its 67 ms local ACK timeout after a
//! lost NAK or tail packet) has no goodput point (a gap, JSON null), and the verdict names the
//! lowest loss rate at which each path stalled. The second chart is the bytes each path resent
//! per byte it delivered.

use super::{LabError, LabResult, Params, Series, Verdict, chart};
use crate::report::{PathReport, run_plan};
use serde::Serialize;

/// Stream length, µs: the shortest the report measures throughput from (75 µs warm-up and
/// ten batches of 100 µs; `rdmalab run` says so for shorter streams) plus a margin.
const STREAM_US: u64 = 1_400;
/// The sweep's points as fractions of the largest rate (three, so the default run stays
/// within the labs' 300 ms: each point is two report runs, each with its loss-free baseline).
const STEPS: [f64; 3] = [0.25, 0.5, 1.0];

/// Where each path stalled.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossVerdict {
    /// The lowest loss rate of the sweep at which each path stalled.
    pub stalled_at_pct: LossStalledAt,
}

/// Per path, the lowest loss rate of the sweep at which it delivered nothing for at least the
/// last millisecond of its measurement window, %; `None` (null) when it never stalled. The keys
/// are the paths' series names, in alphabetical order (capitals first).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LossStalledAt {
    /// TCP over the same switch.
    #[serde(rename = "TCP")]
    pub tcp: Option<f64>,
    /// RoCE with go-back-N.
    #[serde(rename = "go-back-N")]
    pub go_back_n: Option<f64>,
    /// RoCE with selective repeat.
    #[serde(rename = "selective repeat")]
    pub selective_repeat: Option<f64>,
}

fn point(
    loss: f64,
    retx: &str,
    paths: &str,
    adaptive: bool,
) -> Result<crate::report::Report, LabError> {
    let sets = [
        format!("loss.corruption={loss}"),
        format!("workload.stream_us={STREAM_US}"),
        format!("rdma.retransmission=\"{retx}\""),
        format!("workload.paths=\"{paths}\""),
        format!("nic.adaptive_retransmission={adaptive}"),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let preset =
        scenario::preset("lesson1").ok_or_else(|| LabError::sim("preset lesson1 is missing"))?;
    let plan = scenario::parse_with(preset.toml, &sets).map_err(LabError::sim)?;
    run_plan(&plan).map_err(LabError::sim)
}

/// What one path did at one loss rate.
struct Measured {
    /// Goodput over the measurement window, Gb/s.
    gbps: f64,
    /// Bytes resent as a share of bytes delivered, %.
    resent_pct: Option<f64>,
    /// The same stream without loss, Gb/s.
    baseline: Option<f64>,
    /// Nothing delivered for at least [`STALL_NS`] before the window's end: the path is
    /// waiting for a timeout.
    stalled: bool,
}

/// How long without a delivery counts as a stall here: nearly the whole 1.05 ms window.
const STALL_NS: f64 = 1e6;

fn measure(p: Option<&PathReport>) -> Measured {
    let t = p.and_then(|p| p.throughput.as_ref());
    Measured {
        gbps: t.map_or(0.0, |t| t.gbps),
        resent_pct: p
            .filter(|p| p.bytes_delivered > 0)
            .map(|p| p.retransmitted_bytes as f64 / p.bytes_delivered as f64 * 100.0),
        baseline: t.and_then(|t| t.baseline_gbps),
        stalled: t.is_some_and(|t| t.stalled_ns >= STALL_NS),
    }
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let max: f64 = p.choice("max_loss_pct").parse().unwrap_or(2.0);
    let adaptive = p.flag("adaptive");
    let mut r = LabResult::new("loss", p);
    let names = ["go-back-N", "selective repeat", "TCP"];
    let mut good: Vec<Series> = names.iter().map(|n| Series::new(*n)).collect();
    let mut resent = good.clone();
    let mut last = [0.0f64; 3];
    let mut base = [None::<f64>; 3];
    let mut stalled_at = [None::<f64>; 3];
    for (k, step) in STEPS.iter().enumerate() {
        let pct = max * step;
        let loss = pct / 100.0;
        let gbn = point(loss, "go_back_n", "both", adaptive)?;
        let sr = point(loss, "selective", "rdma", adaptive)?;
        let m = [
            measure(gbn.rdma.as_ref()),
            measure(sr.rdma.as_ref()),
            measure(gbn.tcp.as_ref()),
        ];
        for (i, m) in m.into_iter().enumerate() {
            if k == 0 {
                // The loss-free point: the report's baseline run of the same stream.
                base[i] = m.baseline;
                good[i].points.push([0.0, m.baseline.unwrap_or(0.0)]);
                resent[i].points.push([0.0, 0.0]);
            }
            // A stalled path has no goodput to speak of: a gap (JSON null), not a zero.
            good[i]
                .points
                .push([pct, if m.stalled { f64::NAN } else { m.gbps }]);
            if m.stalled {
                stalled_at[i].get_or_insert(pct);
            }
            resent[i]
                .points
                .push([pct, m.resent_pct.unwrap_or(f64::NAN)]);
            last[i] = m.gbps;
        }
    }
    let [go_back_n, selective_repeat, tcp] = stalled_at;
    r.verdict = Verdict::Loss(LossVerdict {
        stalled_at_pct: LossStalledAt {
            tcp,
            go_back_n,
            selective_repeat,
        },
    });
    let retention = |i: usize| base[i].filter(|b| *b > 0.0).map(|b| last[i] / b);
    r.figure("gbn_retention", retention(0), "");
    r.figure("sr_retention", retention(1), "");
    r.figure("tcp_retention", retention(2), "");
    r.charts.push(chart("goodput", "line", ("%", "Gb/s"), good));
    r.charts.push(chart("resent", "line", ("%", "%"), resent));
    Ok(r)
}
