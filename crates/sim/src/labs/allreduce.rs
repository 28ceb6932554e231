//! AI training all-reduce: a ring all-reduce of gradients (`rdmalab collective all_reduce`,
//! [`crate::collective`]) between `hosts` GPU servers, one 100 Gb/s NIC each, on a leaf-spine
//! with one host per leaf and `spines` uplinks of `spine_gbps` from every leaf. It runs the same
//! point twice: with `qps` QPs per connection (`NCCL_IB_QPS_PER_CONNECTION`) and with one
//! more, and shows busbw against the ideal (line-rate) busbw, every leaf→spine uplink's load and
//! the flows on it, what the extra QP buys, and the PAUSE frames, ECN marks and
//! retransmissions. The verdict names what held busbw below the ideal, from the run.
//!
//! ECMP: the fabric hashes the 5-tuple (source and destination IP, protocol, UDP ports) with a
//! CRC-16, which each switch folds with its own seed (`switch.ecmp_hash = "crc16"`) or passes
//! through a mixing function (`"mixed"`); the hash fields are fixed (RoCE's only entropy is the
//! UDP source port, which follows the QP number). What the lab exposes is the hash function
//! and the run's `seed`, from which every switch's ECMP seed derives.
//!
//! The reduction is charged nothing (`reduce_ps_per_kib = 0`): GPUs sum in their own memory,
//! so the run is the fabric's.

use super::{LabError, LabResult, Params, Series, Verdict, chart};
use crate::collective::flows::LinkFlows;
use crate::collective::{self, Config, SizeRow};
use serde::Serialize;

/// Every host's link, Gb/s (the fabric labs' rate).
const HOST_GBPS: u64 = super::LINK_GBPS;
/// The sizes offered, per rank, as nccl-tests spells them.
pub(super) const SIZES: [&str; 4] = ["1M", "4M", "8M", "16M"];
/// busbw at least this share of the ideal is "at line rate" (the ideal is a lower bound on
/// time that leaves out every latency).
/// assumption: 90%, below what the smallest offered size reaches on a non-blocking fabric.
const NEAR_IDEAL: f64 = 0.90;
/// A run below this share of what its paths allow ([`paths_share`]) lost the rest to
/// something else than the paths: with DCQCN on and at least one ECN mark per flow (so the
/// average flow's rate was cut at least once), its rate cuts.
/// assumption: 80%, below the share the paths' bound leaves to PFC's pauses in this lab's
/// runs (about 90%).
const SHORT_OF_PATHS: f64 = 0.80;
/// Uplinks the uplink chart shows at most (the busiest).
const SHOWN: usize = 8;

/// What held busbw below the ideal, and the fabric's numbers the page's sentence quotes. Each
/// value is the run with the asked QPs per connection's unless it says "one more QP".
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AllreduceVerdict {
    /// busbw as a share of the ideal (line-rate) busbw, % to 1 decimal.
    pub busbw_pct: f64,
    /// Uplinks that carried more flows than an even spread of their leaf's flows would put on
    /// any (⌈flows / spines⌉): the hash's collisions.
    pub collided_uplinks: u32,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// Flows leaving each leaf: channels × QPs per connection.
    pub flows_per_leaf: u32,
    /// What one more QP per connection changed busbw by, % of the asked run's busbw to 1
    /// decimal (negative when it cost busbw).
    pub gain_pct: f64,
    /// Every host's link rate, Gb/s.
    pub host_gbps: u64,
    /// What held busbw back.
    pub limit: AllreduceLimit,
    /// What held busbw back with one more QP per connection.
    pub limit_more: AllreduceLimit,
    /// The most flows one uplink carried.
    pub max_flows: u32,
    /// With one more QP per connection, the share of the ideal busbw the flows' paths allow,
    /// % to 1 decimal.
    pub paths_more_pct: f64,
    /// The share of the ideal busbw the flows' paths allow (each flow at the uplink rate over
    /// the most flows any uplink carried, a leaf at most at the host's line rate), % to 1
    /// decimal.
    pub paths_pct: f64,
    /// QPs per connection asked for.
    pub qps: u32,
    /// Each uplink's rate, Gb/s.
    pub spine_gbps: u64,
    /// Uplinks per leaf (one to each spine).
    pub spines: u32,
}

/// What held busbw below the ideal, in the order the verdict checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AllreduceLimit {
    /// Nothing: busbw is at least 90% of the ideal, and a leaf's uplinks together are at
    /// least as fast as its host.
    LineRate,
    /// Nothing but the uplinks: busbw is at least 90% of an ideal that a leaf's uplinks,
    /// together slower than its host, already lower.
    Oversubscribed,
    /// The fabric dropped frames, and their packets were sent again.
    Drops,
    /// DCQCN's rate cuts: with at least one ECN mark per flow, busbw fell below 80% of what
    /// the paths allow.
    Dcqcn,
    /// The paths allow 90% of the ideal or more: the rest is time the ideal leaves out (each
    /// step's latency, the pipeline filling and draining, PAUSE and ECN).
    Latency,
    /// The hash put more flows on an uplink than an even spread would.
    Ecmp,
    /// Fewer flows per leaf than uplinks, each slower than the host: each flow rides one.
    FewFlows,
    /// The flows cannot divide evenly over the uplinks.
    Uneven,
}

/// Most gradient bytes a run may hold, all servers' buffers together (hosts × size): 16
/// servers of 8 MiB or 8 of 16 MiB. The lab's slowest corners (one spine, 4 × 4 QPs, PFC off)
/// take about 3 s of CPU at 256 MiB on the 2-core box and half that here; `rdmalab
/// collective` runs any size.
pub(super) const MAX_TOTAL_BYTES: u64 = 128 << 20;

/// All servers' buffers together, as [`super::cross_check`] bounds them.
pub(super) fn total_bytes(p: &Params) -> u64 {
    p.int("hosts").max(0) as u64 * bytes(p.choice("size"))
}

/// Bytes of a size choice (`16M` = 16 MiB).
pub(super) fn bytes(size: &str) -> u64 {
    size.trim_end_matches('M').parse::<u64>().unwrap_or(8) << 20
}

fn plan(p: &Params) -> Result<scenario::Plan, LabError> {
    let mut plan = scenario::Plan::default();
    let on = |b: bool| if b { "true" } else { "false" };
    let sets = [
        "workload.pattern=\"collective\"".to_string(),
        "topology.kind=\"leaf_spine\"".to_string(),
        format!("topology.hosts={}", p.int("hosts")),
        format!("topology.link_gbps={HOST_GBPS}"),
        format!("topology.spines={}", p.int("spines")),
        format!("topology.spine_gbps={}", p.choice("spine_gbps")),
        format!("switch.ecmp_hash=\"{}\"", p.choice("hash")),
        format!("seed={}", p.int("seed")),
        format!("lossless.enabled={}", on(p.flag("pfc"))),
        // DCQCN reacts to ECN marks: the switches mark when it is on.
        format!("switch.ecn={}", on(p.flag("dcqcn"))),
        format!("rdma.dcqcn={}", on(p.flag("dcqcn"))),
    ];
    for s in &sets {
        plan.set(s).map_err(LabError::sim)?;
    }
    Ok(plan)
}

/// One run: the size's row and its leaf→spine uplinks.
struct Run {
    qps: u32,
    row: SizeRow,
    uplinks: Vec<LinkFlows>,
}

fn run_one(plan: &scenario::Plan, p: &Params, qps: u32) -> Result<Run, LabError> {
    let cfg = Config {
        channels: p.int("channels") as u32,
        qps,
        reduce_ps_per_kib: 0,
        sizes: vec![bytes(p.choice("size"))],
        ..Config::default()
    };
    let (mut rep, mut links) =
        collective::run_plan_traced(plan, &Default::default(), &cfg).map_err(LabError::sim)?;
    let row = rep
        .rows
        .pop()
        .ok_or_else(|| LabError::sim("the collective gave no row"))?;
    let uplinks = links
        .pop()
        .unwrap_or_default()
        .into_iter()
        .filter(|l| {
            l.from.starts_with("leaf") && !l.from.contains('-') && l.to.starts_with("spine")
        })
        .collect();
    Ok(Run { qps, row, uplinks })
}

/// What the uplinks of one run say about ECMP.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Spread {
    /// Flows leaving each leaf (channels × QPs per connection: a ring sends one connection
    /// per channel out of every leaf).
    per_leaf: u32,
    /// The most flows one uplink carried.
    max: u32,
    /// Uplinks that carried more than one flow.
    shared: u32,
    /// Uplinks that carried more flows than an even spread of the leaf's flows would put on
    /// any (⌈flows / spines⌉): the hash's collisions.
    collided: u32,
}

fn spread(uplinks: &[LinkFlows], per_leaf: u32, spines: u32) -> Spread {
    let even = per_leaf.div_ceil(spines.max(1));
    Spread {
        per_leaf,
        max: uplinks.iter().map(|l| l.flows).max().unwrap_or(0),
        shared: uplinks.iter().filter(|l| l.flows > 1).count() as u32,
        collided: uplinks.iter().filter(|l| l.flows > even).count() as u32,
    }
}

/// The share of the ideal busbw the flows' paths allow: every step of a ring waits for its
/// slowest transfer, a connection's chunk is split evenly over its QPs, and flows that share an
/// uplink share its rate; so each flow goes at most at `spine_gbps` over the most flows any
/// uplink carried, and a leaf sends its flows at that rate, at most the host's line rate. The
/// ideal's own bottleneck is the host link or, when slower, all of a leaf's uplinks.
fn paths_share(p: &Params, s: Spread) -> f64 {
    let spines = p.int("spines") as f64;
    let spine = p
        .choice("spine_gbps")
        .parse::<f64>()
        .unwrap_or(HOST_GBPS as f64);
    let host = HOST_GBPS as f64;
    let per_flow = spine / f64::from(s.max.max(1));
    let leaf = host.min(f64::from(s.per_leaf) * per_flow);
    leaf / host.min(spines * spine)
}

/// What held busbw back, checked in [`AllreduceLimit`]'s order.
fn limit(p: &Params, r: &Run, s: Spread) -> AllreduceLimit {
    let spines = p.int("spines") as u64;
    let spine_gbps: u64 = p.choice("spine_gbps").parse().unwrap_or(HOST_GBPS);
    let ratio = r.row.busbw_gbs / r.row.ideal_busbw_gbs.max(1e-9);
    let paths = paths_share(p, s);
    if ratio >= NEAR_IDEAL {
        return if spines * spine_gbps < HOST_GBPS {
            AllreduceLimit::Oversubscribed
        } else {
            AllreduceLimit::LineRate
        };
    }
    if r.row.drops > 0 {
        AllreduceLimit::Drops
    } else if p.flag("dcqcn")
        && r.row.ecn_marks >= u64::from(s.per_leaf) * p.int("hosts") as u64
        && ratio < SHORT_OF_PATHS * paths
    {
        AllreduceLimit::Dcqcn
    } else if paths >= NEAR_IDEAL {
        AllreduceLimit::Latency
    } else if s.collided > 0 {
        AllreduceLimit::Ecmp
    } else if spine_gbps < HOST_GBPS && u64::from(s.per_leaf) < spines {
        AllreduceLimit::FewFlows
    } else {
        AllreduceLimit::Uneven
    }
}

fn qps_name(q: u32) -> String {
    if q == 1 {
        "1 QP".into()
    } else {
        format!("{q} QPs")
    }
}

/// Rounded to 1 decimal (the percentages the verdict states).
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Rounded to 2 decimals (GB/s the verdict states).
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let plan = plan(p)?;
    let q = p.int("qps") as u32;
    let channels = p.int("channels") as u32;
    let spines = p.int("spines") as u32;
    let asked = run_one(&plan, p, q)?;
    let more = run_one(&plan, p, q + 1)?;
    let mut r = LabResult::new("allreduce", p);
    let (a, b) = (&asked.row, &more.row);

    r.charts.push(chart(
        "busbw",
        "bar",
        ("", "GB/s"),
        vec![Series {
            name: "busbw".into(),
            points: vec![
                [0.0, r2(a.busbw_gbs)],
                [1.0, r2(b.busbw_gbs)],
                [2.0, r2(a.ideal_busbw_gbs)],
            ],
            labels: vec![
                qps_name(asked.qps),
                qps_name(more.qps),
                "ideal (line rate)".into(),
            ],
        }],
    ));

    // The busiest uplinks of the asked run, each named with the flows it carried: the most
    // flows first (the collisions), then the most used; ties in port order.
    let mut busiest: Vec<&LinkFlows> = asked.uplinks.iter().collect();
    busiest.sort_by(|x, y| y.flows.cmp(&x.flows).then(y.util.total_cmp(&x.util)));
    busiest.truncate(SHOWN);
    r.charts.push(chart(
        "uplinks",
        "bar",
        ("", "%"),
        vec![Series {
            name: qps_name(asked.qps),
            points: busiest
                .iter()
                .enumerate()
                .map(|(i, l)| [i as f64, r1(l.util * 100.0)])
                .collect(),
            labels: busiest
                .iter()
                .map(|l| {
                    let f = if l.flows == 1 { "flow" } else { "flows" };
                    format!("{}→{} · {} {f}", l.from, l.to, l.flows)
                })
                .collect(),
        }],
    ));

    // How many uplinks carried 0, 1, 2, ... flows, in both runs (every leaf's uplinks: the
    // ones no flow took count as 0).
    let all_uplinks = p.int("hosts") as usize * spines as usize;
    let hist = |run: &Run| -> Vec<usize> {
        let carried = run.uplinks.iter().filter(|l| l.flows > 0);
        let mut h = vec![0usize; 1 + carried.clone().map(|l| l.flows as usize).max().unwrap_or(0)];
        for l in carried {
            h[l.flows as usize] += 1;
        }
        h[0] = all_uplinks - h[1..].iter().sum::<usize>().min(all_uplinks);
        h
    };
    let (ha, hb) = (hist(&asked), hist(&more));
    let cats = ha.len().max(hb.len());
    let labels: Vec<String> = (0..cats)
        .map(|f| {
            if f == 1 {
                "1 flow".to_string()
            } else {
                format!("{f} flows")
            }
        })
        .collect();
    let series = |name: String, h: &[usize]| Series {
        name,
        points: (0..cats)
            .map(|f| [f as f64, h.get(f).copied().unwrap_or(0) as f64])
            .collect(),
        labels: labels.clone(),
    };
    r.charts.push(chart(
        "spread",
        "bar",
        ("", "uplinks"),
        vec![
            series(qps_name(asked.qps), &ha),
            series(qps_name(more.qps), &hb),
        ],
    ));

    let pct = 100.0 * a.busbw_gbs / a.ideal_busbw_gbs.max(1e-9);
    let gain = b.busbw_gbs - a.busbw_gbs;
    r.figure("busbw_gbs", Some(r2(a.busbw_gbs)), "GB/s");
    r.figure("ideal_busbw_gbs", Some(r2(a.ideal_busbw_gbs)), "GB/s");
    r.figure("busbw_pct", Some(r1(pct)), "%");
    r.figure("busbw_more_gbs", Some(r2(b.busbw_gbs)), "GB/s");
    r.figure("gain_gbs", Some(r2(gain)), "GB/s");
    r.figure("time_us", Some(r1(a.time_ps as f64 / 1e6)), "µs");
    let sa = spread(&asked.uplinks, channels * q, spines);
    let sb = spread(&more.uplinks, channels * (q + 1), spines);
    r.figure("shared_uplinks", Some(sa.shared.into()), "uplinks");
    r.figure(
        "busiest_uplink_pct",
        Some(r1(asked
            .uplinks
            .iter()
            .map(|l| l.util * 100.0)
            .fold(0.0, f64::max))),
        "%",
    );
    r.figure("pauses", Some(a.pauses as f64), "frames");
    r.figure("ecn_marks", Some(a.ecn_marks as f64), "frames");
    r.figure("retransmissions", Some(a.retransmissions as f64), "packets");

    let spine_gbps: u64 = p.choice("spine_gbps").parse().unwrap_or(HOST_GBPS);
    r.verdict = Verdict::Allreduce(AllreduceVerdict {
        busbw_pct: r1(pct),
        collided_uplinks: sa.collided,
        drops: a.drops,
        flows_per_leaf: sa.per_leaf,
        gain_pct: r1(100.0 * gain / a.busbw_gbs.max(1e-9)),
        host_gbps: HOST_GBPS,
        limit: limit(p, &asked, sa),
        limit_more: limit(p, &more, sb),
        max_flows: sa.max,
        paths_more_pct: r1(100.0 * paths_share(p, sb)),
        paths_pct: r1(100.0 * paths_share(p, sa)),
        qps: q,
        spine_gbps,
        spines,
    });
    r.events = Some(a.events + b.events);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(flows: u32) -> LinkFlows {
        LinkFlows {
            from: "leaf0".into(),
            to: "spine0".into(),
            util: 0.5,
            flows,
        }
    }

    #[test]
    fn sizes_are_mebibytes() {
        assert_eq!(SIZES.map(bytes), [1 << 20, 4 << 20, 8 << 20, 16 << 20]);
    }

    #[test]
    fn a_collision_is_more_flows_than_an_even_spread_puts_on_an_uplink() {
        // 4 flows on 4 uplinks: 2 on one is a collision.
        let s = spread(&[link(2), link(1), link(1)], 4, 4);
        assert_eq!((s.max, s.shared, s.collided), (2, 1, 1));
        // 6 flows on 4 uplinks: 2 on two of them is as even as it gets.
        let s = spread(&[link(2), link(2), link(1), link(1)], 6, 4);
        assert_eq!((s.shared, s.collided), (2, 0));
    }
}
