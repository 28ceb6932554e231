//! NVMe-oF, RDMA against TCP: the same fio job (`rdmalab fio`, [`crate::nvmf`]) over NVMe/RDMA
//! and NVMe/TCP at every power-of-two queue depth up to the one asked for, from `initiators`
//! hosts to one target. The charts are latency (p50, p99) against IOPS as the depth rises,
//! CPU per IO (usr/sys, initiator and target) at the asked depth, and the peak queues on the
//! target's link; the verdict says which transport completes more IOs at that depth, by how
//! much, and what held each one back (the device, a core, the link, or only the queue depth).
//!
//! NVMe/TCP's digests are not a knob here: the host model charges no CPU for a CRC32C (a run
//! with them differs by 4 bytes per PDU), while the simulator computing each one over the data
//! would cost this page most of its wall time at large blocks.
//!
//! Bounded: each point is a `number_ios` run (every IO completed) of at least [`MIN_IOS`] IOs
//! and [`ROUNDS`] times the IOs in flight, so the deepest queue still turns over several times
//! and the whole lab stays a few tens of thousands of IOs at most.

use super::{LabError, LabResult, Params, Series, Verdict, chart};
use crate::nvmf::workload::RwMode;
use crate::nvmf::{self, FioConfig, FioReport, IoEngine, Limit};
use serde::Serialize;

/// The queue depths a run may end at (and the points of its curves).
pub(super) const DEPTHS: [&str; 8] = ["1", "2", "4", "8", "16", "32", "64", "128"];
/// The block sizes offered, as fio spells them.
pub(super) const SIZES: [&str; 4] = ["4k", "16k", "64k", "128k"];

/// Fewest IOs a point runs (so its p99 is the 99th of at least 200, not the maximum), unless
/// its blocks are large: then at least [`MIN_POINT_BYTES`] of them.
const MIN_IOS: u64 = 200;
/// Fewest bytes a point of large blocks moves (32 IOs of 128 KiB).
const MIN_POINT_BYTES: u64 = 4 << 20;
/// Each point runs this many times the IOs in flight (queue depth × initiators): the opening
/// burst, when every slot starts at once, is one round in eight.
const ROUNDS: u64 = 8;
/// Rounds of the points with more than [`DEEP_IOS`] IOs or [`DEEP_BYTES`] bytes in flight,
/// which are the lab's slowest (a few thousand IOs each).
const DEEP_ROUNDS: u64 = 4;
const DEEP_IOS: u64 = 128;
const DEEP_BYTES: u64 = 2 << 20;
/// Most IOs a run may keep in flight (queue depth × initiators). With the bytes' bound below,
/// it keeps the slowest corner of the lab near 0.3 s on this machine; `rdmalab fio` runs any.
pub(super) const MAX_IN_FLIGHT_IOS: u64 = 512;
/// Most bytes a run may keep in flight (queue depth × initiators × block size).
pub(super) const MAX_IN_FLIGHT_BYTES: u64 = 4 << 20;
/// A resource this busy sets the pace of a closed loop.
/// assumption: 85%. Below it a queue rarely forms in front of the resource, so adding IOs in
/// flight still raises IOPS; at 85% and above the next IO mostly waits for it.
const BUSY: f64 = 0.85;
/// A median this much above QD 1's means IOs wait for something although nothing is
/// [`BUSY`] on average: they arrive together (a closed loop's IOs with the same device time
/// move in a convoy) and queue for the busiest resource in bursts.
/// assumption: 10%, well above the run-to-run spread of a flat curve (under 1% here).
const QUEUED: f64 = 1.10;

/// Which transport completes more IOs at the asked queue depth, by how much, and what held
/// each one back there. Every value is read at that depth unless it says QD 1.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NvmfVerdict {
    /// How busy NVMe/RDMA's busiest resource (the device, the target's or the initiator's
    /// core, the target's link) was, % rounded to a whole.
    pub busy_rdma_pct: u64,
    /// The same for NVMe/TCP, %.
    pub busy_tcp_pct: u64,
    /// NVMe/TCP's CPU time per IO (initiator and target, usr and sys) over NVMe/RDMA's, to 2
    /// decimals.
    pub cpu_ratio: f64,
    /// Frames the fabric dropped in the NVMe/TCP run.
    pub drops_tcp: u64,
    /// The queue depth asked for: the sweep's deepest point.
    pub iodepth: u32,
    /// NVMe/RDMA's IOPS over NVMe/TCP's, to 2 decimals.
    pub iops_ratio: f64,
    /// NVMe/RDMA's median completion latency over its median at QD 1, to 2 decimals.
    pub latency_growth_rdma: f64,
    /// The same for NVMe/TCP.
    pub latency_growth_tcp: f64,
    /// What held NVMe/RDMA back.
    pub limit_rdma: NvmfLimit,
    /// How it held NVMe/RDMA back.
    pub limit_rdma_kind: NvmfLimitKind,
    /// What held NVMe/TCP back.
    pub limit_tcp: NvmfLimit,
    /// How it held NVMe/TCP back.
    pub limit_tcp_kind: NvmfLimitKind,
    /// PAUSE frames sent in the NVMe/RDMA run.
    pub pauses_rdma: u64,
    /// The transport that completed more IOs (a tie within 1%).
    pub winner: NvmfWinner,
}

/// What held a transport's run back: its busiest resource, or only the queue depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmfLimit {
    /// The NVMe device.
    Device,
    /// The target's core.
    TargetCpu,
    /// The initiator's core.
    InitiatorCpu,
    /// The target's link.
    Link,
    /// Nothing is busy and IOs do not wait: more IOs in flight would raise IOPS.
    QueueDepth,
}

/// How the [`NvmfLimit`] held the run back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NvmfLimitKind {
    /// The resource is busy 85% of the time or more.
    Saturated,
    /// IOs wait for it although it is not busy on average: the median is 10% or more above
    /// QD 1's.
    Bursts,
    /// Nothing is busy and IOs do not wait: the limit is the queue depth.
    Depth,
}

/// The transport that completed more IOs, as `rdmalab fio` names its engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NvmfWinner {
    /// NVMe/RDMA.
    #[serde(rename = "nvmf-rdma")]
    Rdma,
    /// NVMe/TCP.
    #[serde(rename = "nvmf-tcp")]
    Tcp,
    /// Their IOPS within 1% of each other.
    #[serde(rename = "tie")]
    Tie,
}

/// One transport's runs.
struct Sweep {
    engine: IoEngine,
    /// (queue depth, report), shallowest first; the last is the depth asked for.
    points: Vec<(u32, FioReport)>,
}

impl Sweep {
    fn last(&self) -> &FioReport {
        &self.points[self.points.len() - 1].1
    }

    fn label(&self) -> &'static str {
        match self.engine {
            IoEngine::Rdma => "NVMe/RDMA",
            IoEngine::Tcp => "NVMe/TCP",
            IoEngine::Local => "local",
        }
    }
}

fn bytes(bs: &str) -> u32 {
    bs.trim_end_matches('k').parse::<u32>().unwrap_or(4) * 1024
}

/// The fio job of this lab's parameters at queue depth `qd` over `engine`.
fn config(engine: IoEngine, p: &Params, qd: u32) -> FioConfig {
    let initiators = p.int("initiators") as u32;
    let mix = p.int("rwmixread") as u8;
    let mut c = FioConfig::new(engine);
    c.rw = match mix {
        100 => RwMode::RandRead,
        0 => RwMode::RandWrite,
        _ => RwMode::RandRw,
    };
    c.rwmixread = mix;
    c.bs = bytes(p.choice("bs"));
    c.iodepth = qd;
    c.initiators = initiators;
    c.link_gbps = p.choice("link_gbps").parse().unwrap_or(100);
    let in_flight = qd as u64 * initiators as u64;
    let rounds = if in_flight > DEEP_IOS || in_flight * c.bs as u64 > DEEP_BYTES {
        DEEP_ROUNDS
    } else {
        ROUNDS
    };
    let least = MIN_IOS.min(MIN_POINT_BYTES / c.bs as u64);
    let total = (rounds * in_flight).max(least);
    c.limit = Limit::Ios(total.div_ceil(initiators as u64));
    c
}

fn sweep(engine: IoEngine, p: &Params, depth: u32) -> Result<Sweep, LabError> {
    let mut points = Vec::new();
    let mut qd = 1;
    while qd <= depth {
        let rep = nvmf::run(&config(engine, p, qd), None).map_err(LabError::sim)?;
        points.push((qd, rep));
        qd *= 2;
    }
    Ok(Sweep { engine, points })
}

/// The IOs in flight and their bytes at the lab's deepest point, as [`super::cross_check`]
/// bounds them.
pub(super) fn in_flight(p: &Params) -> (u64, u64) {
    let qd: u64 = p.choice("iodepth").parse().unwrap_or(1);
    let ios = qd * p.int("initiators").max(1) as u64;
    (ios, ios * bytes(p.choice("bs")) as u64)
}

/// What held a run back.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pace {
    /// The busiest resource, or the queue depth when nothing is busy and IOs do not wait.
    limit: NvmfLimit,
    /// Saturated (the resource is [`BUSY`]), bursts (IOs wait for it although it is not busy
    /// on average) or depth.
    kind: NvmfLimitKind,
    /// The busiest resource's busy share.
    busy: f64,
    /// The median latency over QD 1's.
    growth: f64,
}

fn pace(r: &FioReport, qd1: &FioReport) -> Pace {
    let u = &r.utilisation;
    let (name, busy) = [
        (NvmfLimit::Device, u.device),
        (NvmfLimit::TargetCpu, u.target_core),
        (NvmfLimit::InitiatorCpu, u.initiator_core),
        (NvmfLimit::Link, u.target_link),
    ]
    .into_iter()
    .fold(
        (NvmfLimit::Device, f64::MIN),
        |a, b| if b.1 > a.1 { b } else { a },
    );
    let growth = r.clat.p50_ps as f64 / qd1.clat.p50_ps.max(1) as f64;
    let (limit, kind) = if busy >= BUSY {
        (name, NvmfLimitKind::Saturated)
    } else if growth >= QUEUED {
        (name, NvmfLimitKind::Bursts)
    } else {
        (NvmfLimit::QueueDepth, NvmfLimitKind::Depth)
    };
    Pace {
        limit,
        kind,
        busy,
        growth,
    }
}

fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// Rounded to 2 decimals (ratios the verdict states and the page repeats).
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let depth: u32 = p.choice("iodepth").parse().unwrap_or(32);
    let rdma = sweep(IoEngine::Rdma, p, depth)?;
    let tcp = sweep(IoEngine::Tcp, p, depth)?;
    let mut r = LabResult::new("nvmf", p);
    let both = [&rdma, &tcp];

    let mut curves = Vec::new();
    for s in both {
        for (pct, pick) in [
            (
                "p50",
                (|r: &FioReport| r.clat.p50_ps) as fn(&FioReport) -> u64,
            ),
            ("p99", |r: &FioReport| r.clat.p99_ps),
        ] {
            curves.push(Series {
                name: format!("{} {pct}", s.label()),
                points: s
                    .points
                    .iter()
                    .map(|(_, rep)| [rep.iops.round(), us(pick(rep))])
                    .collect(),
                labels: vec![],
            });
        }
    }
    r.charts
        .push(chart("latency", "line", ("IOPS", "µs"), curves));

    // "host" is NVMe's word for the initiator, and short enough for a phone's bar labels.
    let cats = ["host usr", "host sys", "target usr", "target sys"];
    let cpu = both
        .iter()
        .map(|s| {
            let l = s.last();
            let v = [
                l.cpu_initiator.usr_ns,
                l.cpu_initiator.sys_ns,
                l.cpu_target.usr_ns,
                l.cpu_target.sys_ns,
            ];
            Series {
                name: s.label().into(),
                points: v
                    .iter()
                    .enumerate()
                    .map(|(i, ns)| [i as f64, ns.round()])
                    .collect(),
                labels: cats.iter().map(|c| c.to_string()).collect(),
            }
        })
        .collect();
    r.charts.push(chart("cpu", "bar", ("", "ns"), cpu));

    let mut queues = Vec::new();
    for (side, pick) in [
        (
            "switch → target",
            (|r: &FioReport| r.target_port_peak_queue_bytes) as fn(&FioReport) -> u64,
        ),
        ("target → switch", |r: &FioReport| {
            r.target_tx_peak_queue_bytes
        }),
    ] {
        for s in both {
            queues.push(Series {
                name: format!("{}: {side}", s.label()),
                points: s
                    .points
                    .iter()
                    .map(|(qd, rep)| [*qd as f64, pick(rep) as f64 / 1e3])
                    .collect(),
                labels: vec![],
            });
        }
    }
    r.charts.push(chart("queue", "line", ("QD", "KB"), queues));

    let (a, b) = (rdma.last(), tcp.last());
    r.figure("iops_rdma", Some(a.iops.round()), "IOPS");
    r.figure("iops_tcp", Some(b.iops.round()), "IOPS");
    r.figure("p99_rdma_us", Some(us(a.clat.p99_ps)), "µs");
    r.figure("p99_tcp_us", Some(us(b.clat.p99_ps)), "µs");
    let cpu_a = a.cpu_initiator.total_ns() + a.cpu_target.total_ns();
    let cpu_b = b.cpu_initiator.total_ns() + b.cpu_target.total_ns();
    r.figure("cpu_rdma_ns", Some(cpu_a.round()), "ns");
    r.figure("cpu_tcp_ns", Some(cpu_b.round()), "ns");
    // QD 1: the device alone, and what each fabric adds to it at the median.
    let qd1 = |s: &Sweep| -> (u64, u64) {
        let rep = &s.points[0].1;
        let local = rep.local.as_ref().map_or(0, |l| l.p50_ps);
        (local, rep.clat.p50_ps.saturating_sub(local))
    };
    let (local, adds_rdma) = qd1(&rdma);
    let (_, adds_tcp) = qd1(&tcp);
    r.figure("local_qd1_us", Some(us(local)), "µs");
    r.figure("fabric_qd1_rdma_us", Some(us(adds_rdma)), "µs");
    r.figure("fabric_qd1_tcp_us", Some(us(adds_tcp)), "µs");

    let ratio = a.iops / b.iops.max(1.0);
    let winner = if (ratio - 1.0).abs() < 0.01 {
        NvmfWinner::Tie
    } else if ratio > 1.0 {
        NvmfWinner::Rdma
    } else {
        NvmfWinner::Tcp
    };
    let (pa, pt) = (pace(a, &rdma.points[0].1), pace(b, &tcp.points[0].1));
    let pct = |p: &Pace| (p.busy * 100.0).round() as u64;
    r.verdict = Verdict::Nvmf(NvmfVerdict {
        busy_rdma_pct: pct(&pa),
        busy_tcp_pct: pct(&pt),
        cpu_ratio: r2(cpu_b / cpu_a.max(1.0)),
        drops_tcp: b.drops,
        iodepth: depth,
        iops_ratio: r2(ratio),
        latency_growth_rdma: r2(pa.growth),
        latency_growth_tcp: r2(pt.growth),
        limit_rdma: pa.limit,
        limit_rdma_kind: pa.kind,
        limit_tcp: pt.limit,
        limit_tcp_kind: pt.kind,
        pauses_rdma: a.pauses,
        winner,
    });
    r.events = Some(
        both.iter()
            .flat_map(|s| s.points.iter().map(|(_, rep)| rep.events))
            .sum(),
    );
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvmf::Utilisation;

    #[test]
    fn the_winner_is_named_as_fio_names_its_engine() {
        for (w, e) in [
            (NvmfWinner::Rdma, IoEngine::Rdma),
            (NvmfWinner::Tcp, IoEngine::Tcp),
        ] {
            assert_eq!(serde_json::to_value(w).unwrap(), e.name());
        }
    }

    #[test]
    fn block_sizes_are_kibibytes() {
        assert_eq!(SIZES.map(bytes), [4096, 16_384, 65_536, 131_072]);
    }

    #[test]
    fn the_busiest_resource_is_the_limit_when_it_is_busy_or_ios_wait() {
        let one = |qd| {
            let mut c = FioConfig::new(IoEngine::Local);
            c.iodepth = qd;
            c.limit = Limit::Ios(64);
            nvmf::run(&c, None).unwrap()
        };
        let (qd1, mut rep) = (one(1), one(8));
        rep.utilisation = Utilisation {
            device: 0.5,
            target_core: 0.9,
            initiator_core: 0.2,
            target_link: 0.1,
        };
        let p = pace(&rep, &qd1);
        assert_eq!(
            (p.limit, p.kind, p.busy),
            (NvmfLimit::TargetCpu, NvmfLimitKind::Saturated, 0.9)
        );
        // Nothing busy and a flat median (8 IOs on 64 units): the depth is the limit.
        rep.utilisation.target_core = 0.6;
        let p = pace(&rep, &qd1);
        assert_eq!(
            (p.limit, p.kind),
            (NvmfLimit::QueueDepth, NvmfLimitKind::Depth)
        );
        assert!((p.growth - 1.0).abs() < 0.01, "{p:?}");
        // The median 20% above QD 1's: IOs queue for the busiest in bursts.
        rep.clat.p50_ps = qd1.clat.p50_ps * 6 / 5;
        assert_eq!(pace(&rep, &qd1).kind, NvmfLimitKind::Bursts);
    }

    #[test]
    fn a_point_turns_its_queue_over_and_stays_bounded() {
        let p = super::super::parse_params("nvmf", &serde_json::json!({"initiators": 4})).unwrap();
        let ios = |qd| match config(IoEngine::Rdma, &p, qd).limit {
            Limit::Ios(n) => n * 4,
            Limit::Runtime(_) => 0,
        };
        assert_eq!(ios(1), 200);
        assert_eq!(ios(32), 8 * 128);
        assert_eq!(ios(128), 4 * 512);
    }
}
