//! The congestion lab: an N→1 incast of RDMA WRITE streams through one switch
//! ([`crate::incast`]), with PFC, ECN marking and DCQCN each on or off. The switch is the
//! DCQCN validation study's (Kmin 10 KB, Kmax 100 KB, Pmax 1%; research/figures.md §6.2) with
//! PFC as the backstop at the labs' XOFF.

use super::{LabError, LabResult, Params, Series, Verdict, chart, jain, lab_pfc};
use crate::incast::{IncastConfig, run_with_view};
use fabric::EcnConfig;
use serde::Serialize;
use transport::roce::dcqcn::DcqcnParams;
use units::{Probability, SimDuration};

const WINDOWS: u64 = 50;

/// The ceiling the incast's goodput is read against.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IncastVerdict {
    /// The payload rate of the receiver's link in 4 KiB packets (its line rate less the
    /// headers each packet carries), Gb/s: the most the senders together can deliver.
    pub bottleneck_gbps: f64,
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let senders = p.int("senders") as u32;
    let link_gbps: u64 = p.choice("link_gbps").parse().unwrap_or(100);
    let d = SimDuration::from_us(p.int("duration_us") as u64);
    let window = SimDuration::from_ps(d.as_ps() / WINDOWS);
    let dcqcn = match p.choice("dcqcn") {
        "paper" => Some(DcqcnParams::PAPER),
        "nvidia" => Some(DcqcnParams::NVIDIA),
        _ => None,
    };
    let ecn = p.flag("ecn").then_some(EcnConfig {
        priorities: 1 << 3,
        kmin_bytes: 10_000,
        kmax_bytes: 100_000,
        pmax: Probability::from_ratio(1, 100),
        on_dequeue: p.flag("ecn_on_dequeue"),
    });
    let (rep, view) = run_with_view(&IncastConfig {
        senders,
        link_gbps,
        dcqcn,
        ecn,
        pfc: p.flag("pfc").then(lab_pfc),
        duration: d,
        window,
        observe: true,
    })
    .map_err(LabError::sim)?;
    let mut r = LabResult::new("incast", p);
    if p.flag("pfc") {
        r.note_pfc(link_gbps);
    }
    let x = |k: usize| (window * (k as u64 + 1)).as_us_f64();
    r.charts.push(chart(
        "queue",
        "line",
        ("µs", "KB"),
        vec![Series {
            name: "switch → receiver (deepest per window)".into(),
            points: rep
                .peak_queue_bytes
                .iter()
                .enumerate()
                .map(|(k, b)| [x(k), *b as f64 / 1e3])
                .collect(),
            labels: vec![],
        }],
    ));
    let per_sender = |s: usize| -> Vec<[f64; 2]> {
        rep.delivered_gbps
            .iter()
            .enumerate()
            .map(|(k, w)| [x(k), w.get(s).copied().unwrap_or(0.0)])
            .collect()
    };
    let rates = (0..senders as usize)
        .map(|s| Series {
            points: per_sender(s),
            ..Series::new(format!("h{s} → h{senders}"))
        })
        .collect();
    r.charts.push(chart("rate", "line", ("µs", "Gb/s"), rates));
    // Each sender's DCQCN rate: line rate until its first change, then every change.
    let mut dcq = Vec::new();
    if dcqcn.is_some() {
        for s in 0..senders {
            let mut pts = vec![[0.0, link_gbps as f64]];
            for &(t, who, kbps, _) in &rep.rates {
                if who == s {
                    let at = t.saturating_duration_since(rep.start).as_us_f64();
                    pts.push([at, kbps as f64 / 1e6]);
                }
            }
            let last = pts.last().map_or(link_gbps as f64, |p| p[1]);
            pts.push([d.as_us_f64(), last]);
            dcq.push(Series {
                name: format!("h{s}"),
                points: pts,
                labels: vec![],
            });
        }
    }
    r.charts
        .push(chart("dcqcn_rate", "step", ("µs", "Gb/s"), dcq));
    r.charts.push(chart(
        "pauses",
        "step",
        ("µs", "frames"),
        vec![Series {
            name: "PAUSE frames sent".into(),
            points: rep
                .pauses_cum
                .iter()
                .enumerate()
                .map(|(k, n)| [x(k), *n as f64])
                .collect(),
            labels: vec![],
        }],
    ));
    let windows = rep.delivered_gbps.len().max(1) as f64;
    let means: Vec<f64> = (0..senders as usize)
        .map(|s| rep.delivered_gbps.iter().map(|w| w[s]).sum::<f64>() / windows)
        .collect();
    r.figure("goodput_gbps", Some(means.iter().sum()), "Gb/s");
    r.figure("fairness", Some(jain(&means)), "");
    r.figure("pauses", Some(rep.pauses as f64), "frames");
    r.figure(
        "cnps",
        Some(rep.cnp_times.iter().map(Vec::len).sum::<usize>() as f64),
        "",
    );
    r.figure("drops", Some(rep.drops as f64), "frames");
    r.figure(
        "peak_queue_kb",
        Some(rep.peak_queue_bytes.iter().copied().max().unwrap_or(0) as f64 / 1e3),
        "KB",
    );
    r.verdict = Verdict::Incast(IncastVerdict {
        bottleneck_gbps: rep.bottleneck_gbps,
    });
    r.fabric = Some(view);
    r.events = Some(rep.events);
    Ok(r)
}
