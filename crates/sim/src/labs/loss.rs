//! Go-back-N, selective repeat and TCP over a loss sweep: the comparison report's stream
//! (preset ①'s hosts, switch and 100 Gb/s links, a [`STREAM_US`] stream) with independent
//! per-frame corruption on every link at three rates up to `max_loss_pct`. Each point is one
//! run of the report, so goodput, drops and resends are what `rdmalab run` gives for the same
//! `--set`s; the loss-free point is the report's own baseline run.

use super::{Chart, LabError, LabResult, Params, Series};
use crate::report::{PathReport, run_plan};

/// Stream length, µs: the shortest the report measures throughput from (75 µs warm-up and
/// ten batches of 100 µs; `rdmalab run` says so for shorter streams) plus a margin.
const STREAM_US: u64 = 1_400;
/// The sweep's points as fractions of the largest rate (three, so the default run stays
/// within the labs' 300 ms: each point is two report runs, each with its loss-free baseline).
const STEPS: [f64; 3] = [0.25, 0.5, 1.0];

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

/// (goodput Gb/s, resent ÷ lost, baseline Gb/s) of a path.
fn measure(p: Option<&PathReport>) -> (f64, Option<f64>, Option<f64>) {
    let Some(p) = p else {
        return (0.0, None, None);
    };
    let t = p.throughput.as_ref();
    let resent = p.recovery.as_ref().map(|r| r.resent_packets);
    let ratio = match (resent, p.drops) {
        (Some(r), d) if d > 0 => Some(r as f64 / d as f64),
        _ => None,
    };
    (
        t.map_or(0.0, |t| t.gbps),
        ratio,
        t.and_then(|t| t.baseline_gbps),
    )
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let max: f64 = p.choice("max_loss_pct").parse().unwrap_or(2.0);
    let adaptive = p.flag("adaptive");
    let mut r = LabResult::new("loss", p);
    let names = ["go-back-N", "selective repeat", "TCP"];
    let mut good: Vec<Series> = names
        .iter()
        .map(|n| Series {
            name: (*n).into(),
            points: vec![],
            labels: vec![],
        })
        .collect();
    let mut resent = good.clone();
    let mut last = [0.0f64; 3];
    let mut base = [None::<f64>; 3];
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
        for (i, (g, ratio, b)) in m.into_iter().enumerate() {
            if k == 0 {
                // The loss-free point: the report's baseline run of the same stream.
                base[i] = b;
                good[i].points.push([0.0, b.unwrap_or(0.0)]);
            }
            good[i].points.push([pct, g]);
            if let Some(x) = ratio {
                resent[i].points.push([pct, x]);
            }
            last[i] = g;
        }
    }
    let retention = |i: usize| base[i].filter(|b| *b > 0.0).map(|b| last[i] / b);
    r.figure("gbn_retention", retention(0), "");
    r.figure("sr_retention", retention(1), "");
    r.figure("tcp_retention", retention(2), "");
    r.charts.push(Chart {
        id: "goodput",
        kind: "line",
        x_unit: "%",
        y_unit: "Gb/s",
        series: good,
    });
    r.charts.push(Chart {
        id: "resent",
        kind: "line",
        x_unit: "%",
        y_unit: "resent ÷ lost",
        series: resent,
    });
    Ok(r)
}
