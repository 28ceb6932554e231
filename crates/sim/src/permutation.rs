//! A random permutation on a k-ary fat tree: every host writes one message over RC to another
//! host, each host receives exactly one, and the run goes on until every message has
//! completed. The scale workload (issue 9): 1024 hosts at k = 16, 2 MB each.
//!
//! Every flow is a real RC QP pair through the same World, switches, PFC and transport code
//! the lessons use; its buffers are synthetic (generated content, no bytes stored), and the
//! receiver's memory keeps a CRC-32 of everything written to it, so integrity is checked
//! without holding 2 GB.

use crate::fleet::{self, FleetWorld, Flow};
use crate::world::WorldError;
use scenario::Plan;
use scenario::matrix::Start;
use serde::Serialize;

/// What happened.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PermutationReport {
    /// Hosts (= flows).
    pub hosts: usize,
    /// Flows that completed successfully.
    pub completed: usize,
    /// Flow completion times, ps, in host order.
    pub fct_ps: Vec<u64>,
    /// The ideal FCT: the message at line rate plus one unloaded round of the longest path, ps.
    pub ideal_fct_ps: u64,
    /// Events of the data phase.
    pub events: u64,
    /// Simulated time of the data phase, ps.
    pub sim_ps: u64,
    /// Wall time of the setup (QP connections), ns.
    pub setup_wall_ns: u64,
    /// Wall time of the data phase, ns.
    pub wall_ns: u64,
    /// Request packets sent (first transmissions and resends).
    pub data_packets: u64,
    /// Σ over flows of their request packets × the links of their path (2 under one edge
    /// switch, 4 within a pod, 6 across the core): a lower bound on fabric events (every
    /// frame arrives on every link; a switch port that starts a frame at once has no
    /// completion event for it).
    pub packet_hops: u64,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// PAUSE frames sent.
    pub pauses: u64,
    /// Bytes written at the receivers, and how many of them differ from what was sent.
    pub bytes_received: u64,
    /// Bytes that differ from the sender's generated content (0 when intact).
    pub mismatched_bytes: u64,
    /// Peak resident memory of the process when the run ended, bytes (Linux), if known.
    pub peak_rss_bytes: Option<u64>,
    /// Receivers that got every byte of their message, each one the sender's (writes by
    /// reference are checked against the generator's seed and offset, which fixes every byte;
    /// writes of real bytes also feed the buffer's CRC-32).
    pub intact: usize,
    /// Threads and partitions the run used (the only part of the report that depends on
    /// `--threads`, with the wall times).
    pub parallel: crate::world::Parallelism,
}

impl PermutationReport {
    /// Events per second of wall time in the data phase.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / (self.wall_ns.max(1) as f64 / 1e9)
    }
    /// Data packets simulated per second of wall time.
    pub fn packets_per_s(&self) -> f64 {
        self.data_packets as f64 / (self.wall_ns.max(1) as f64 / 1e9)
    }

    /// The report as text.
    pub fn text(&self, name: &str) -> String {
        let us = |ps: u64| ps as f64 / 1e6;
        let q = |x: f64| {
            self.fct_quantile(x)
                .map_or("–".to_string(), |ps| format!("{:.1} µs", us(ps)))
        };
        format!(
            "{name}: {} hosts, random permutation, one RC WRITE per host\n\
             flows completed      {} of {} ({} intact, {} bytes differ)\n\
             flow completion      p50 {}, p99 {}, max {} (ideal {:.1} µs)\n\
             simulated            {:.3} ms, {} data packets, {} drops, {} PAUSE frames\n\
             wall (data phase)    {:.3} s ({:.3} s more to connect the QPs)\n\
             events               {} ({:.2} M/s), {:.2} M data packets/s\n\
             parallel             {}\n\
             peak memory          {}\n",
            self.hosts,
            self.completed,
            self.hosts,
            self.intact,
            self.mismatched_bytes,
            q(0.5),
            q(0.99),
            q(1.0),
            us(self.ideal_fct_ps),
            self.sim_ps as f64 / 1e9,
            self.data_packets,
            self.drops,
            self.pauses,
            self.wall_ns as f64 / 1e9,
            self.setup_wall_ns as f64 / 1e9,
            self.events,
            self.events_per_s() / 1e6,
            self.packets_per_s() / 1e6,
            self.parallel.line(),
            self.peak_rss_bytes
                .map_or("unknown".to_string(), |b| format!("{} MB", b >> 20)),
        )
    }

    /// The `q`-quantile of the FCTs (0..=1), ps; `None` when no flow completed.
    pub fn fct_quantile(&self, q: f64) -> Option<u64> {
        let mut v = self.fct_ps.clone();
        v.sort_unstable();
        let last = v.len().checked_sub(1)?;
        let i = (last as f64 * q.clamp(0.0, 1.0)).round() as usize;
        v.get(i).copied()
    }
}

/// A permutation of `0..n` with no fixed point, from `seed` (Sattolo's algorithm on a
/// xorshift generator: deterministic, no libm).
pub fn derangement(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in (1..n).rev() {
        let j = (next() % i as u64) as usize;
        p.swap(i, j);
    }
    p
}

/// The plan keys a permutation run cannot honour, with the value it would need: the
/// workload is one RC WRITE per host, counted (not streamed), one QP per host.
pub fn unsupported(plan: &Plan) -> Option<String> {
    let w = &plan.workload;
    let what = match w.pattern {
        scenario::Pattern::Matrix => "the connection matrix",
        _ => "the permutation",
    };
    let why = if plan.rdma.operation != scenario::Operation::Write {
        format!("rdma.operation: {what} posts one RDMA WRITE per flow (allowed: write)")
    } else if plan.rdma.qp_type != scenario::QpKind::Rc {
        format!("rdma.qp_type: {what} runs RC QPs (allowed: rc)")
    } else if w.messages != 1 {
        format!("workload.messages: {what} sends one message per flow (allowed: 1)")
    } else if w.stream_us != 0 {
        format!("workload.stream_us: {what} runs until every flow completes (allowed: 0)")
    } else if w.concurrency != 1 {
        format!("workload.concurrency: {what} runs one QP per flow (allowed: 1)")
    } else {
        return None;
    };
    Some(why)
}

/// Runs the permutation a plan describes (`workload.pattern = "permutation"` on a `fat_tree`):
/// its topology, links, switches (PFC from `lossless`, ECMP from `switch.ecmp_hash`), NIC
/// profile and seed; `message_bytes` per flow at `rdma.mtu_bytes`, RC with `rdma.timeout` and
/// `rdma.retry_cnt`. `out`: the pcap, the trace and the threads.
pub fn run_plan(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    out: &fleet::Outputs,
) -> Result<PermutationReport, WorldError> {
    if let Some(why) = unsupported(plan) {
        return Err(WorldError::Setup(why));
    }
    let mut fw = FleetWorld::new(plan, host, out)?;
    let n = fw.world.host_count() as usize;
    let dst = derangement(n, plan.seed);
    let len = plan.workload.message_bytes.max(1);
    let flows: Vec<Flow> = dst
        .iter()
        .enumerate()
        .map(|(s, &d)| Flow {
            src: s as u32,
            dst: d as u32,
            bytes: len,
            start: Start::At(0),
            send_done: None,
            recv_done: None,
        })
        .collect();
    let o = fleet::run(&mut fw.world, plan, &flows, &Default::default())?;
    let mut rep = PermutationReport {
        hosts: n,
        setup_wall_ns: o.setup_wall_ns,
        wall_ns: o.wall_ns,
        sim_ps: o.sim_ps,
        events: o.events,
        drops: o.drops,
        pauses: o.pauses,
        ..Default::default()
    };
    let k = plan.topology.k;
    for (f, r) in flows.iter().zip(&o.flows) {
        if let Some((fct, status)) = r.fct {
            rep.fct_ps.push(fct);
            if status == verbs::WcStatus::Success {
                rep.completed += 1;
            }
        }
        rep.data_packets += r.packets_sent;
        rep.packet_hops += r.packets_sent * fleet::fat_tree_links(k, f.src, f.dst);
        rep.bytes_received += r.bytes_received;
        rep.mismatched_bytes += r.mismatched_bytes;
        rep.intact += usize::from(r.intact);
    }
    // Ideal: the message's frames at line rate, plus one frame's trip over the longest path
    // (6 links in a three-tier fat tree).
    let t = &plan.topology;
    rep.ideal_fct_ps =
        fleet::ideal_fct_ps(len, plan.rdma.mtu_bytes as u32, t.link_gbps, t.cable_m, 6);
    rep.parallel = fw.world.parallelism();
    fw.finish()?;
    rep.peak_rss_bytes = peak_rss_bytes();
    Ok(rep)
}

/// Peak resident memory of this process, bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
