//! One QP or many over a leaf-spine: `rdmalab perftest ib_write_bw` on a two-leaf fabric with
//! `spines` equal-cost paths of `spine_gbps` each, PFC on, once with one QP and once with
//! `qps`. ECMP picks a spine per QP from the 5-tuple, whose UDP source port follows the QP
//! number: one QP is held to one spine link however fast the host link is; several QPs
//! spread, evenly with the CRC-16 ASICs use, like random throws with the `mixed` hash.

use super::{LabError, LabResult, Params, Series, chart};
use crate::perftest::{self, BwRow, Options, Rows, Test};
use std::collections::BTreeMap;

/// perftest's default message size for bandwidth tests.
const SIZE: u64 = 65_536;
/// WRITEs each run posts in all (split over the QPs).
const MESSAGES: u64 = 1_600;

fn bw(qps: u32, p: &Params) -> Result<BwRow, LabError> {
    let sets = [
        "topology.kind=\"leaf_spine\"".to_string(),
        format!("topology.spines={}", p.int("spines")),
        format!("topology.spine_gbps={}", p.choice("spine_gbps")),
        "lossless.enabled=true".to_string(),
        format!("switch.ecmp_hash=\"{}\"", p.choice("hash")),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let preset =
        scenario::preset("lesson1").ok_or_else(|| LabError::sim("preset lesson1 is missing"))?;
    let plan = scenario::parse_with(preset.toml, &sets).map_err(LabError::sim)?;
    let o = Options {
        test: Test::WriteBw,
        sizes: vec![SIZE],
        iters: (MESSAGES / qps as u64).max(50),
        tx_depth: 128,
        bidirectional: false,
        inline: 0,
        cq_mod: 1,
        qps,
    };
    match perftest::run(&plan, &BTreeMap::new(), &o).map_err(LabError::sim)? {
        Rows::Bw(mut rows) if !rows.is_empty() => Ok(rows.remove(0)),
        _ => Err(LabError::sim("ib_write_bw gave no row")),
    }
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let n = p.int("qps") as u32;
    let one = bw(1, p)?;
    let many = bw(n, p)?;
    let mut r = LabResult::new("qps", p);
    let labels: Vec<String> = (0..one.uplink_share.len().max(many.uplink_share.len()))
        .map(|i| format!("spine{i}"))
        .collect();
    let shares = |row: &BwRow| -> Vec<[f64; 2]> {
        row.uplink_share
            .iter()
            .enumerate()
            .map(|(i, s)| [i as f64, s * 100.0])
            .collect()
    };
    let many_name = format!("{n} QPs");
    r.charts.push(chart(
        "paths",
        "bar",
        ("", "%"),
        vec![
            Series {
                name: "1 QP".into(),
                points: shares(&one),
                labels: labels.clone(),
            },
            Series {
                name: many_name.clone(),
                points: shares(&many),
                labels,
            },
        ],
    ));
    let g1 = one.avg_bps * 8.0 / 1e9;
    let gn = many.avg_bps * 8.0 / 1e9;
    r.charts.push(chart(
        "throughput",
        "bar",
        ("", "Gb/s"),
        vec![Series {
            name: "ib_write_bw".into(),
            points: vec![[0.0, g1], [1.0, gn]],
            labels: vec!["1 QP".into(), many_name],
        }],
    ));
    let max = |row: &BwRow| row.uplink_share.iter().copied().fold(0.0, f64::max) * 100.0;
    r.figure("gbps_one", Some(g1), "Gb/s");
    r.figure("gbps_many", Some(gn), "Gb/s");
    r.figure("max_share_one", Some(max(&one)), "%");
    r.figure("max_share_many", Some(max(&many)), "%");
    Ok(r)
}
