//! What a collective run reports, per size: nccl-tests' columns (size, count, type, time,
//! algbw, busbw, #wrong) and what the simulation sees besides — CPU per GB on each host, link
//! utilisation, PAUSE frames, ECN marks, retransmissions, and the ideal (line-rate) time
//! computed from the topology.

use super::{Config, Op, Transport};
use crate::world::World;
use scenario::{Plan, TopologyKind};
use serde::Serialize;
use std::fmt::Write as _;

/// Every size of one run.
#[derive(Clone, Debug, Serialize)]
pub struct CollectiveReport {
    /// Ranks.
    pub hosts: u32,
    /// The knobs.
    pub config: Config,
    /// The topology's kind.
    pub topology: String,
    /// Host link rate, Gb/s.
    pub link_gbps: u64,
    /// One row per size.
    pub rows: Vec<SizeRow>,
    /// Threads and partitions the runs used (with the wall times, the only part of the report
    /// that depends on `--threads`).
    pub parallel: crate::world::Parallelism,
}

/// One size.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SizeRow {
    /// Bytes per rank (nccl-tests' size).
    pub bytes: u64,
    /// Elements (float32).
    pub count: u64,
    /// Simulated time from the start (every rank at once) to the last landing, ps.
    pub time_ps: u64,
    /// Size over time, GB/s (10⁹ bytes).
    pub algbw_gbs: f64,
    /// algbw × the operation's bus factor, GB/s.
    pub busbw_gbs: f64,
    /// Elements that differ from the expected result; `None` when the buffers were synthetic
    /// (not checked).
    pub wrong: Option<u64>,
    /// CRC-32 of rank 0's result buffer, when checked.
    pub crc32: Option<u32>,
    /// The ideal time: every rank's bytes in full frames at its bottleneck rate ([`ideal_ps`]), ps.
    pub ideal_ps: u64,
    /// busbw at the ideal time, GB/s.
    pub ideal_busbw_gbs: f64,
    /// Per host: data-path CPU busy time over the run per GB of buffer, ms/GB.
    pub cpu_ms_per_gb: Vec<f64>,
    /// The busiest link direction's utilisation over the run (0..1).
    pub link_util_max: f64,
    /// The mean utilisation of the link directions that carried data.
    pub link_util_mean: f64,
    /// The busiest link directions, most used first (at most [`BUSIEST`]): where ECMP put
    /// colliding connections shows here.
    pub busiest_links: Vec<LinkLoad>,
    /// PAUSE frames sent (switches and hosts).
    pub pauses: u64,
    /// Frames marked CE.
    pub ecn_marks: u64,
    /// Packets (RC) or segments (TCP) sent again.
    pub retransmissions: u64,
    /// Frames dropped.
    pub drops: u64,
    /// Events of the data phase.
    pub events: u64,
    /// Wall time of the data phase, ms.
    pub wall_ms: f64,
}

impl SizeRow {
    /// Mean CPU per GB over hosts, ms/GB.
    pub fn cpu_ms_per_gb_mean(&self) -> f64 {
        let n = self.cpu_ms_per_gb.len().max(1) as f64;
        self.cpu_ms_per_gb.iter().sum::<f64>() / n
    }
}

/// Link directions [`SizeRow::busiest_links`] lists.
pub const BUSIEST: usize = 6;

/// One direction of one link over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkLoad {
    /// The sending node's name (`h3`, `leaf2`, `spine0`, ...).
    pub from: String,
    /// The receiving node's name.
    pub to: String,
    /// Frame bytes sent over the run's time at the link's rate (0..1).
    pub util: f64,
}

/// The counters a row is the difference of.
pub(super) struct Snapshot {
    cpu_ps: Vec<u64>,
    tx_bytes: Vec<u64>,
    fabric: fabric::Counters,
    events: u64,
    wall: std::time::Instant,
    pub(super) start: units::SimTime,
}

impl Snapshot {
    pub(super) fn take(w: &World) -> Snapshot {
        Snapshot {
            cpu_ps: (0..w.host_count())
                .map(|h| w.host(h).cpu().account().data_path.as_ps())
                .collect(),
            tx_bytes: w.joined().ports().map(|(.., s)| s.tx_bytes).collect(),
            fabric: w.joined().counters(),
            events: w.events_processed(),
            wall: std::time::Instant::now(),
            start: w.now(),
        }
    }

    /// The row for `bytes` that ended at `end`, with the transport's retransmissions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        &self,
        w: &World,
        topo: &fabric::Topology,
        plan: &Plan,
        cfg: &Config,
        bytes: u64,
        end: units::SimTime,
        retransmissions: u64,
    ) -> SizeRow {
        let n = w.host_count();
        let time_ps = (end - self.start).as_ps().max(1);
        let secs = time_ps as f64 / 1e12;
        let (fnum, fden) = cfg.op.bus_factor(n);
        let factor = fnum as f64 / fden as f64;
        let algbw = bytes as f64 / secs / 1e9;
        let gb = bytes as f64 / 1e9;
        let cpu_ms_per_gb = (0..n)
            .map(|h| {
                let d = w.host(h).cpu().account().data_path.as_ps() - self.cpu_ps[h as usize];
                d as f64 / 1e9 / gb
            })
            .collect();
        let mut utils = Vec::new();
        let mut loads = Vec::new();
        let name = |n: units::NodeId| {
            topo.nodes
                .get(n.0 as usize)
                .map_or_else(|| format!("node{}", n.0), |x| x.name.clone())
        };
        for ((node, _, link, s), before) in w.joined().ports().zip(&self.tx_bytes) {
            let sent = s.tx_bytes - before;
            let Some(l) = w.fabric().link(link) else {
                continue;
            };
            let cap_bits = l.bandwidth.bps() as f64 * secs;
            if sent > 0 && cap_bits > 0.0 {
                let util = sent as f64 * 8.0 / cap_bits;
                utils.push(util);
                let far = topo
                    .links
                    .get(link.0 as usize)
                    .map(|x| if x.a == node { x.b } else { x.a });
                loads.push((util, node, far));
            }
        }
        // Most used first; ties in link order (deterministic).
        loads.sort_by(|a, b| b.0.total_cmp(&a.0));
        let busiest_links = loads
            .iter()
            .take(BUSIEST)
            .map(|&(util, from, to)| LinkLoad {
                from: name(from),
                to: to.map_or_else(String::new, name),
                util,
            })
            .collect();
        let c = w.joined().counters();
        let ideal_ps = ideal_ps(plan, cfg.op, cfg.transport, n, bytes);
        let ideal_secs = ideal_ps.max(1) as f64 / 1e12;
        SizeRow {
            bytes,
            count: bytes / super::chunks::ELEM_BYTES,
            time_ps,
            algbw_gbs: algbw,
            busbw_gbs: algbw * factor,
            wrong: None,
            crc32: None,
            ideal_ps,
            ideal_busbw_gbs: bytes as f64 / ideal_secs / 1e9 * factor,
            cpu_ms_per_gb,
            link_util_max: utils.iter().copied().fold(0.0, f64::max),
            link_util_mean: utils.iter().sum::<f64>() / utils.len().max(1) as f64,
            busiest_links,
            pauses: c.pauses_sent - self.fabric.pauses_sent,
            ecn_marks: c.ecn_marks - self.fabric.ecn_marks,
            retransmissions,
            drops: c.drops() - self.fabric.drops(),
            events: w.events_processed() - self.events,
            wall_ms: self.wall.elapsed().as_secs_f64() * 1e3,
        }
    }
}

/// The line-rate time of `op` on `n` ranks of `bytes` over `transport`: each rank sends the
/// bus factor's share of its buffer in full frames at its bottleneck — the host link, or on a
/// leaf-spine the leaf's uplinks when they are slower. With more hosts per leaf a ring still
/// leaves each leaf on one edge per channel, so the bound is the same; the extra cross-leaf
/// traffic of halving-doubling and all-to-all is not counted, so theirs stays a lower bound
/// on the time but a looser one. RoCE frames carry
/// the path MTU with 82 bytes around it (Ethernet 14, FCS 4, preamble and gap 20, IPv4 20,
/// UDP 8, BTH 12, ICRC 4; a message's RETH and ImmDt are left out, so this stays a lower
/// bound); TCP segments carry the path MTU less 52 (IPv4 20, TCP 20, timestamps 12) with 90
/// bytes around. Latency is not counted.
pub fn ideal_ps(plan: &Plan, op: Op, transport: Transport, n: u32, bytes: u64) -> u64 {
    let t = &plan.topology;
    let host_bps = t.link_gbps.max(1) * 1_000_000_000;
    let bottleneck_bps = match t.kind {
        TopologyKind::LeafSpine => {
            let spine = if t.spine_gbps == 0 {
                t.link_gbps
            } else {
                t.spine_gbps
            };
            host_bps.min(t.spines.max(1) * spine * 1_000_000_000)
        }
        _ => host_bps,
    };
    let (num, den) = op.bus_factor(n);
    let sent = bytes * num / den;
    let (payload, overhead) = match transport {
        Transport::Rdma => (plan.rdma.mtu_bytes.max(256), 82),
        Transport::Tcp => (plan.tcp_path_mtu_bytes().saturating_sub(52).max(1), 90),
    };
    let wire_bits = (sent + sent.div_ceil(payload) * overhead) * 8;
    (wire_bits as u128 * 1_000_000_000_000 / u128::from(bottleneck_bps)) as u64
}

impl CollectiveReport {
    /// nccl-tests' table (its columns, out-of-place only), with the simulation's columns.
    pub fn text(&self) -> String {
        let c = &self.config;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# rdmalab collective {} (simulated): {} hosts on {} at {} Gb/s, {} over {}, {} channel(s), {} QP(s) per connection, chunk {} B",
            c.op.name(),
            self.hosts,
            self.topology,
            self.link_gbps,
            c.algorithm.name(),
            c.transport.name(),
            c.channels,
            c.qps,
            c.chunk_bytes
        );
        let _ = writeln!(
            s,
            "#{:>11} {:>12} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7} {:>10} {:>8} {:>9} {:>7} {:>7} {:>6} {:>7}",
            "size",
            "count",
            "type",
            "redop",
            "time",
            "algbw",
            "busbw",
            "#wrong",
            "ideal",
            "ideal_bw",
            "cpu/GB",
            "linkmax",
            "pause",
            "ecn",
            "retx"
        );
        let _ = writeln!(
            s,
            "#{:>11} {:>12} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7} {:>10} {:>8} {:>9} {:>7} {:>7} {:>6} {:>7}",
            "(B)",
            "(elements)",
            "",
            "",
            "(us)",
            "(GB/s)",
            "(GB/s)",
            "",
            "(us)",
            "(GB/s)",
            "(ms)",
            "(%)",
            "",
            "",
            ""
        );
        let redop = if matches!(c.op, Op::AllReduce | Op::ReduceScatter) {
            "sum"
        } else {
            "none"
        };
        for r in &self.rows {
            let wrong = r.wrong.map_or("N/A".to_string(), |w| w.to_string());
            let _ = writeln!(
                s,
                "{:>12} {:>12} {:>8} {:>6} {:>10.1} {:>8.2} {:>8.2} {:>7} {:>10.1} {:>8.2} {:>9.2} {:>7.1} {:>7} {:>6} {:>7}",
                r.bytes,
                r.count,
                "float",
                redop,
                r.time_ps as f64 / 1e6,
                r.algbw_gbs,
                r.busbw_gbs,
                wrong,
                r.ideal_ps as f64 / 1e6,
                r.ideal_busbw_gbs,
                r.cpu_ms_per_gb_mean(),
                r.link_util_max * 100.0,
                r.pauses,
                r.ecn_marks,
                r.retransmissions
            );
        }
        for r in &self.rows {
            let l: Vec<String> = r
                .busiest_links
                .iter()
                .take(3)
                .map(|l| format!("{}→{} {:.0}%", l.from, l.to, l.util * 100.0))
                .collect();
            let _ = writeln!(s, "# {} B busiest links: {}", r.bytes, l.join(", "));
        }
        let rows = self.rows.len().max(1) as f64;
        let avg = self.rows.iter().map(|r| r.busbw_gbs).sum::<f64>() / rows;
        let _ = writeln!(s, "# Avg bus bandwidth    : {avg:.3} GB/s (simulated)");
        let _ = writeln!(s, "# Simulator threads    : {}", self.parallel.line());
        let _ = writeln!(
            s,
            "# time: first post to the last landing; cpu/GB: data-path CPU per GB of buffer, mean over hosts; #wrong N/A: synthetic buffers, not checked"
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ideal_is_every_rank_s_share_in_frames_at_the_bottleneck() {
        let mut p = Plan::default();
        p.set("workload.pattern=\"collective\"").unwrap();
        let rdma = |p: &Plan, op| ideal_ps(p, op, Transport::Rdma, 2, 8 << 20);
        // 2 hosts, 8 MiB: each sends 8 MiB · 2(n−1)/n = 8 MiB, 2048 frames of 4096 + 82 B,
        // at 100 Gb/s: 68 452 352 bits = 684.52352 µs.
        assert_eq!(rdma(&p, Op::AllReduce), 684_523_520);
        // All-gather sends (n−1)/n: half as much.
        assert_eq!(rdma(&p, Op::AllGather), 342_261_760);
        // TCP at MTU 1500: 1448-byte segments with 90 bytes around: 5794 segments.
        let tcp = ideal_ps(&p, Op::AllReduce, Transport::Tcp, 2, 8 << 20);
        assert_eq!(tcp, (8_388_608 + 5_794 * 90) * 8 * 10);
        // Four spines at 10 Gb/s under a 100 Gb/s host: 40 Gb/s is the bottleneck.
        for s in [
            "topology.kind=\"leaf_spine\"",
            "topology.spines=4",
            "topology.spine_gbps=10",
        ] {
            p.set(s).unwrap();
        }
        assert_eq!(rdma(&p, Op::AllReduce), 684_523_520 * 100 / 40);
    }
}
