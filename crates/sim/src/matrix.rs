//! `workload.pattern = "matrix"`: the flows of a csg-htsim connection matrix
//! ([`scenario::matrix`]) on a fat tree, each an RC WRITE through the [`crate::fleet`], reported
//! per flow and as flow-completion-time quantiles beside each flow's ideal. The file's host ids
//! are the fat tree's (htsim numbers hosts edge switch by edge switch, pod by pod, as rdmalab
//! does), so an htsim workload runs here unchanged.

use std::collections::BTreeMap;

use crate::fleet::{self, FleetWorld, Flow};
use crate::permutation::{peak_rss_bytes, unsupported};
use crate::world::WorldError;
use scenario::Plan;
use scenario::matrix::Matrix;
use serde::Serialize;

/// One flow of the report.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FlowRow {
    /// The file's line.
    pub line: usize,
    /// The file's flow id, if any.
    pub id: Option<u32>,
    /// Sender.
    pub src: u32,
    /// Receiver.
    pub dst: u32,
    /// Bytes.
    pub bytes: u64,
    /// When it was posted, ps after the data phase began; `None`: its trigger never fired.
    pub start_ps: Option<u64>,
    /// Its completion time, ps (post to sender completion); `None`: it did not complete.
    pub fct_ps: Option<u64>,
    /// Its ideal: the bytes at line rate plus one frame's trip over its path.
    pub ideal_fct_ps: u64,
    /// The completion's status (`IBV_WC_SUCCESS`, ...), if it completed.
    pub status: Option<String>,
    /// Every byte arrived, each one the sender's.
    pub intact: bool,
}

/// What the matrix run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MatrixReport {
    /// The file's `Nodes`.
    pub nodes: u32,
    /// Hosts of the fat tree.
    pub hosts: u32,
    /// Every flow, in file order.
    pub flows: Vec<FlowRow>,
    /// Flows that completed with success.
    pub completed: usize,
    /// Flows whose trigger never fired.
    pub never_started: usize,
    /// Events of the data phase.
    pub events: u64,
    /// Simulated time of the data phase, ps.
    pub sim_ps: u64,
    /// Wall time of the setup, ns.
    pub setup_wall_ns: u64,
    /// Wall time of the data phase, ns.
    pub wall_ns: u64,
    /// Request packets sent (first transmissions and resends).
    pub data_packets: u64,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// PAUSE frames sent.
    pub pauses: u64,
    /// Flows whose every byte arrived intact.
    pub intact: usize,
    /// Bytes that differ from the senders' content.
    pub mismatched_bytes: u64,
    /// Peak resident memory of the process when the run ended, bytes (Linux), if known.
    pub peak_rss_bytes: Option<u64>,
    /// Threads and partitions the run used (the only part of the report that depends on
    /// `--threads`, with the wall times).
    pub parallel: crate::world::Parallelism,
}

impl MatrixReport {
    /// The `q` quantile (0..=1, nearest rank) of the completed flows' FCTs, ps.
    pub fn fct_quantile(&self, q: f64) -> Option<u64> {
        let mut v: Vec<u64> = self.flows.iter().filter_map(|f| f.fct_ps).collect();
        quantile(&mut v, q)
    }

    /// The `q` quantile of the completed flows' slowdowns (FCT ÷ ideal), in thousandths.
    pub fn slowdown_quantile_milli(&self, q: f64) -> Option<u64> {
        let mut v: Vec<u64> = self
            .flows
            .iter()
            .filter_map(|f| Some(f.fct_ps? * 1_000 / f.ideal_fct_ps.max(1)))
            .collect();
        quantile(&mut v, q)
    }

    /// Events per second of wall time in the data phase.
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / (self.wall_ns.max(1) as f64 / 1e9)
    }

    /// The report as text.
    pub fn text(&self, name: &str, file: &str) -> String {
        let us = |ps: u64| format!("{:.1} µs", ps as f64 / 1e6);
        let q = |x: f64| self.fct_quantile(x).map_or("–".into(), us);
        let sd = |x: f64| {
            self.slowdown_quantile_milli(x)
                .map_or("–".into(), |m| format!("{:.2}×", m as f64 / 1e3))
        };
        let mut s = format!(
            "{name}: {} flows of {file} (Nodes {}) on a {}-host fat tree, one RC WRITE each\n\
             completed {}/{}{}; intact {}; drops {}; PAUSE frames {}\n\
             FCT p50 {}  p99 {}  max {}   slowdown vs ideal p50 {}  p99 {}  max {}\n\
             simulated {}; {} events in {:.3} s wall ({:.2} M events/s); setup {:.3} s{}\n\
             parallel: {}\n",
            self.flows.len(),
            self.nodes,
            self.hosts,
            self.completed,
            self.flows.len(),
            if self.never_started > 0 {
                format!(
                    " ({} never started: their trigger never fired)",
                    self.never_started
                )
            } else {
                String::new()
            },
            self.intact,
            self.drops,
            self.pauses,
            q(0.5),
            q(0.99),
            q(1.0),
            sd(0.5),
            sd(0.99),
            sd(1.0),
            us(self.sim_ps),
            self.events,
            self.wall_ns as f64 / 1e9,
            self.events_per_s() / 1e6,
            self.setup_wall_ns as f64 / 1e9,
            self.peak_rss_bytes
                .map_or(String::new(), |b| format!("; peak memory {} MB", b >> 20)),
            self.parallel.line(),
        );
        // The slowest flows, with where they are in the file.
        let mut slow: Vec<&FlowRow> = self.flows.iter().collect();
        slow.sort_by_key(|f| (std::cmp::Reverse(f.fct_ps.unwrap_or(u64::MAX)), f.line));
        s.push_str("slowest flows:\n  line    flow       bytes      start        FCT      ideal\n");
        for f in slow.iter().take(5) {
            s.push_str(&format!(
                "  {:<6}  {:<9}  {:>9}  {:>9}  {:>9}  {:>9}{}\n",
                f.line,
                format!("{}->{}", f.src, f.dst),
                f.bytes,
                f.start_ps.map_or("never".into(), us),
                f.fct_ps.map_or("–".into(), us),
                us(f.ideal_fct_ps),
                f.status
                    .as_deref()
                    .filter(|s| *s != verbs::WcStatus::Success.const_name())
                    .map_or(String::new(), |s| format!("  {s}")),
            ));
        }
        s
    }
}

fn quantile(v: &mut [u64], q: f64) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// Runs `matrix` on the plan's fat tree (the plan's `workload.pattern` is `matrix`; its
/// transport keys apply as in the permutation). `out`: the pcap, the trace and the threads.
pub fn run_plan(
    plan: &Plan,
    matrix: &Matrix,
    host: &BTreeMap<String, u64>,
    out: &fleet::Outputs,
) -> Result<MatrixReport, WorldError> {
    if let Some(why) = unsupported(plan) {
        return Err(WorldError::Setup(why));
    }
    let mut fw = FleetWorld::new(plan, host, out)?;
    let hosts = fw.world.host_count();
    if matrix.nodes > hosts {
        return Err(WorldError::Setup(format!(
            "the matrix is written for {} nodes; this fat tree (topology.k = {}) has {hosts} hosts: \
             set topology.k so that k³/4 ≥ {}",
            matrix.nodes, plan.topology.k, matrix.nodes
        )));
    }
    let flows: Vec<Flow> = matrix
        .connections
        .iter()
        .map(|c| Flow {
            src: c.src,
            dst: c.dst,
            bytes: c.size,
            start: c.start,
            send_done: c.send_done,
            recv_done: c.recv_done,
        })
        .collect();
    let o = fleet::run(&mut fw.world, plan, &flows, &matrix.triggers)?;
    let t = &plan.topology;
    let mtu = plan.rdma.mtu_bytes as u32;
    let mut rep = MatrixReport {
        nodes: matrix.nodes,
        hosts,
        events: o.events,
        sim_ps: o.sim_ps,
        setup_wall_ns: o.setup_wall_ns,
        wall_ns: o.wall_ns,
        drops: o.drops,
        pauses: o.pauses,
        ..Default::default()
    };
    for (c, r) in matrix.connections.iter().zip(&o.flows) {
        let links = fleet::fat_tree_links(t.k, c.src, c.dst);
        let ok = matches!(r.fct, Some((_, verbs::WcStatus::Success)));
        rep.completed += usize::from(ok);
        rep.never_started += usize::from(r.started_ps.is_none());
        rep.intact += usize::from(r.intact);
        rep.data_packets += r.packets_sent;
        rep.mismatched_bytes += r.mismatched_bytes;
        rep.flows.push(FlowRow {
            line: c.line,
            id: c.id,
            src: c.src,
            dst: c.dst,
            bytes: c.size,
            start_ps: r.started_ps,
            fct_ps: r.fct.map(|(f, _)| f),
            ideal_fct_ps: fleet::ideal_fct_ps(c.size, mtu, t.link_gbps, t.cable_m, links),
            status: r.fct.map(|(_, s)| s.const_name().to_string()),
            intact: r.intact,
        });
    }
    rep.parallel = fw.world.parallelism();
    fw.finish()?;
    rep.peak_rss_bytes = peak_rss_bytes();
    Ok(rep)
}
