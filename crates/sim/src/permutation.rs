//! A random permutation on a k-ary fat tree: every host writes one message over RC to another
//! host, each host receives exactly one, and the run goes on until every message has
//! completed. The scale workload (issue 9): 1024 hosts at k = 16, 2 MB each.
//!
//! Every flow is a real RC QP pair through the same World, switches, PFC and transport code
//! the lessons use; its buffers are synthetic (generated content, no bytes stored), and the
//! receiver's memory keeps a CRC-32 of everything written to it, so integrity is checked
//! without holding 2 GB.

use crate::world::{Endpoint, RcOptions, World, WorldError};
use engine::Budget;
use scenario::Plan;
use serde::Serialize;
use units::SimDuration;
use verbs::{
    AccessFlags,
    wr::{SendWr, Sge},
};

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
    let why = if plan.rdma.operation != scenario::Operation::Write {
        "rdma.operation: the permutation posts one RDMA WRITE per host (allowed: write)"
    } else if plan.rdma.qp_type != scenario::QpKind::Rc {
        "rdma.qp_type: the permutation runs RC QPs (allowed: rc)"
    } else if w.messages != 1 {
        "workload.messages: the permutation sends one message per host (allowed: 1)"
    } else if w.stream_us != 0 {
        "workload.stream_us: the permutation runs until every flow completes (allowed: 0)"
    } else if w.concurrency != 1 {
        "workload.concurrency: the permutation runs one QP per host (allowed: 1)"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// Runs the permutation a plan describes (`workload.pattern = "permutation"` on a `fat_tree`):
/// its topology, links, switches (PFC from `lossless`, ECMP from `switch.ecmp_hash`), NIC
/// profile and seed; `message_bytes` per flow at `rdma.mtu_bytes`, RC with `rdma.timeout` and
/// `rdma.retry_cnt`. `pcap`: write every frame there.
pub fn run_plan(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    pcap: Option<&std::path::Path>,
) -> Result<PermutationReport, WorldError> {
    if let Some(why) = unsupported(plan) {
        return Err(WorldError::Setup(why));
    }
    let topo = plan.topology()?;
    let cfg = plan.fabric_config();
    let mut profile = plan.host_profile();
    profile
        .apply_overrides(host)
        .map_err(|e| WorldError::Setup(format!("host profile: {e}")))?;
    let mut w = World::new(&topo, cfg, profile, plan.nic_profile())?;
    crate::report::run::configure(&mut w, plan, &profile);
    // Written to a temporary file and renamed into place once the run is done
    // (crate::output): a failed run leaves no pcap under the final name.
    let capture = match pcap {
        None => None,
        Some(path) => {
            let o = crate::output::Output::create(path)
                .map_err(|e| WorldError::Setup(e.to_string()))?;
            let out = o.writer().map_err(|e| WorldError::Setup(e.to_string()))?;
            w.capture_pcap(Box::new(out))
                .map_err(|e| WorldError::Setup(e.to_string()))?;
            Some(o)
        }
    };
    let c = Settings {
        flow_bytes: plan.workload.message_bytes,
        mtu: plan.rdma.mtu_bytes as u32,
        link_gbps: plan.topology.link_gbps,
        cable_m: plan.topology.cable_m,
        seed: plan.seed,
    };
    let n = w.host_count() as usize;
    let dst = derangement(n, c.seed);
    let o = RcOptions {
        mtu: plan.rdma_mtu(),
        timeout: plan.rdma.timeout,
        retry_cnt: plan.rdma.retry_cnt,
        ..RcOptions::default()
    };
    let setup = std::time::Instant::now();
    let mut pairs: Vec<(Endpoint, Endpoint)> = Vec::with_capacity(n);
    for (s, &d) in dst.iter().enumerate() {
        pairs.push(w.connect_rc(s as u32, d as u32, &o)?);
    }
    // Buffers: a synthetic source per sender, a synthetic sink per receiver.
    fn err(e: impl std::fmt::Display) -> WorldError {
        WorldError::Setup(e.to_string())
    }
    let len = c.flow_bytes.max(1);
    let mut posts = Vec::with_capacity(n);
    for (i, (a, b)) in pairs.iter().enumerate() {
        let src = w
            .verbs(a.host)
            .memory_mut()
            .alloc_synthetic(len, c.seed ^ (i as u64 + 1))
            .map_err(err)?;
        let smr = w
            .reg_mr(a.host, a.pd, src, len, AccessFlags::LOCAL_WRITE)
            .map_err(err)?;
        let sink = w
            .verbs(b.host)
            .memory_mut()
            .alloc_synthetic(len, c.seed ^ (i as u64 + 1))
            .map_err(err)?;
        let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        let dmr = w.reg_mr(b.host, b.pd, sink, len, access).map_err(err)?;
        posts.push((src, smr.lkey, sink, dmr.rkey));
    }
    let setup_wall_ns = setup.elapsed().as_nanos() as u64;
    let intact_len = len;
    let wall = std::time::Instant::now();
    let start = w.now();
    for ((a, _), &(src, lkey, sink, rkey)) in pairs.iter().zip(&posts) {
        let sge = vec![Sge {
            addr: src,
            length: len as u32,
            lkey,
        }];
        w.post_send(
            a.host,
            a.qpn,
            &[SendWr::write(1, sge, sink, rkey).signaled()],
        )
        .map_err(err)?;
    }
    let mut rep = PermutationReport {
        hosts: n,
        setup_wall_ns,
        ..Default::default()
    };
    let mut fct = vec![None; n];
    let mut remaining = n;
    // The plan's run budget (set above) bounds simulated time, events and wall time.
    let budget = Budget::default();
    // Completions are collected every microsecond of simulated time (the FCTs' resolution):
    // looking at every CQ after every event would cost more than the events themselves.
    let step = SimDuration::from_us(1);
    let mut t = start;
    let mut seen = w.send_completions();
    while remaining > 0 {
        t += step;
        let st = w.run_until(t, &budget)?;
        rep.events += st.events;
        let now = t;
        if w.send_completions() == seen {
            if st.events == 0 && w.pending_events() == 0 {
                break;
            }
            continue;
        }
        seen = w.send_completions();
        for (i, (a, _)) in pairs.iter().enumerate() {
            if fct[i].is_some() || w.host(a.host).verbs.cq(a.cq).is_none_or(|q| q.is_empty()) {
                continue;
            }
            for wc in w.poll_cq(a.host, a.cq, 4).map_err(err)? {
                fct[i] = Some((now - start, wc.status));
                remaining -= 1;
            }
        }
        if st.events == 0 && w.pending_events() == 0 {
            break;
        }
    }
    rep.wall_ns = wall.elapsed().as_nanos() as u64;
    rep.sim_ps = (w.now() - start).as_ps();
    for (d, status) in fct.iter().flatten() {
        {
            rep.fct_ps.push(d.as_ps());
            if *status == verbs::WcStatus::Success {
                rep.completed += 1;
            }
        }
    }
    let half = (plan.topology.k / 2).max(1) as usize;
    let links = |s: usize, d: usize| -> u64 {
        if s / half == d / half {
            2
        } else if s / (half * half) == d / (half * half) {
            4
        } else {
            6
        }
    };
    for (i, (a, b)) in pairs.iter().enumerate() {
        if let Some(r) = w.host(a.host).requester_counters(a.qpn) {
            rep.data_packets += r.packets_sent;
            rep.packet_hops += r.packets_sent * links(i, dst[i]);
        }
        let sink = posts[i].2;
        if let Some(s) = w.verbs(b.host).memory().synthetic_stats(sink) {
            rep.bytes_received += s.bytes_written;
            rep.mismatched_bytes += s.mismatched_bytes;
            if s.mismatched_bytes == 0 && s.bytes_written >= intact_len {
                rep.intact += 1;
            }
        }
    }
    rep.drops = w.fabric.counters().drops();
    rep.pauses = w.fabric.ports().map(|(.., s)| s.pauses_sent).sum();
    // Ideal: the message's frames at line rate, plus one frame's trip over the longest path
    // (6 links in a three-tier fat tree).
    let frame = (c.mtu as u64 + 98) * 8 * 1_000 / c.link_gbps.max(1);
    let packets = len.div_ceil(c.mtu as u64);
    rep.ideal_fct_ps = packets * frame + 6 * (frame + c.cable_m * 5_000);
    if let Some(o) = capture {
        w.finish_pcap()
            .map_err(|e| WorldError::Setup(e.to_string()))?;
        o.commit().map_err(|e| WorldError::Setup(e.to_string()))?;
    }
    rep.peak_rss_bytes = peak_rss_bytes();
    Ok(rep)
}

/// The plan's numbers the run needs.
struct Settings {
    flow_bytes: u64,
    mtu: u32,
    link_gbps: u64,
    cable_m: u64,
    seed: u64,
}

/// Peak resident memory of this process, bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
