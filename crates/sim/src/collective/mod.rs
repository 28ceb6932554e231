//! Collectives between N hosts (one NIC each) on any topology, as NCCL runs them over its IB
//! transport (RC QPs, RDMA WRITE with immediate) or its socket transport (kernel TCP), and
//! reported as nccl-tests reports them (issue 23).
//!
//! - [`schedule`]: the algorithms as pure step plans (ring, halving-doubling; all-reduce,
//!   all-gather, reduce-scatter, all-to-all).
//! - [`chunks`]: a schedule cut into chunks per channel, and which chunk may leave.
//! - `rc.rs`: the RC executor; `tcp.rs`: the socket executor.
//! - [`report`]: one row per size, and nccl-tests' table.
//!
//! Simplifications a test could observe: every rank starts at the same instant (no launch
//! skew); a sender keeps at most [`DEPTH`] chunks of one step in flight (NCCL's buffer
//! slots), counted until their send completion rather than by the receiver's credit; the
//! application polls its CQs and sockets every [`POLL`] of simulated time, so a landing is
//! seen up to that late; a GPU is not modelled — the reduction runs on the host's cores at
//! [`Config::reduce_ps_per_kib`].

pub mod chunks;
pub mod flows;
mod rc;
pub mod report;
pub mod schedule;
mod tcp;
pub mod verify;

pub use report::{CollectiveReport, SizeRow};
pub use schedule::{Algorithm, Op};

use crate::world::{World, WorldError};
use scenario::Plan;
use units::SimDuration;

/// Chunks of one step a sender keeps in flight. Source: NCCL's `NCCL_STEPS` (8, NCCL
/// `src/include/device.h`), the slots of a connection's buffer.
pub const DEPTH: u32 = 8;

/// How often the application looks at its CQs and sockets.
// assumption: 500 ns, well under a 512 KiB chunk's 42 µs at 100 Gb/s, so a landing seen late
// delays the pipeline by under 2% per step; NCCL's proxy thread polls continuously.
pub const POLL: SimDuration = SimDuration::from_ns(500);

/// Default chunk bytes. Source: NCCL's `DEFAULT_BUFFSIZE` (1 << 22 = 4 MiB, NCCL
/// `src/init.cc`, the default of `NCCL_BUFFSIZE`) over its 8 steps: 512 KiB per step.
pub const DEF_CHUNK_BYTES: u64 = 512 << 10;

/// Default reduction cost, ps per KiB summed (one float32 add per element, reading two
/// inputs and writing one).
// assumption: 8 GB/s on one core, the single-thread bandwidth limit of research/figures.md
// (10 line-fill buffers × 64 B / 79 ns); 1 KiB at 8 GB/s = 128 ns. A GPU reduces in its own
// memory; set 0 to model that.
pub const DEF_REDUCE_PS_PER_KIB: u64 = 128_000;

/// Largest buffer per rank: 8 GiB.
pub const MAX_BYTES: u64 = 8 << 30;
/// Bounds of the other knobs: hosts, channels, QPs per connection, chunk bytes.
pub const HOSTS: std::ops::RangeInclusive<u32> = 2..=1024;
/// Channels (parallel rings).
pub const CHANNELS: std::ops::RangeInclusive<u32> = 1..=16;
/// QPs (or sockets) per connection.
pub const QPS: std::ops::RangeInclusive<u32> = 1..=16;
/// Chunk bytes.
pub const CHUNK: std::ops::RangeInclusive<u64> = 4096..=(64 << 20);
/// Reduction cost, ps per KiB (0..=10 µs per KiB).
pub const REDUCE: std::ops::RangeInclusive<u64> = 0..=10_000_000;
/// Most chunks one size may cut (every rank's sends): about 40 bytes of bookkeeping each.
pub const MAX_CHUNKS: u64 = 4 << 20;
/// Buffers at most this large (per rank, every copy, all ranks) hold real bytes and are
/// checked; larger runs use synthetic buffers (no bytes stored, no check).
pub const MAX_CHECKED_BYTES: u64 = 96 << 20;

/// Which transport carries the collective.
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// RC QPs, RDMA WRITE with immediate (NCCL's IB transport).
    Rdma,
    /// Kernel TCP sockets (NCCL's socket transport).
    Tcp,
}

impl Transport {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Rdma => "rdma",
            Transport::Tcp => "tcp",
        }
    }
}

/// The knobs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    /// The operation.
    pub op: Op,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Transport.
    pub transport: Transport,
    /// Parallel rings (NCCL's channels), each with its own QPs.
    pub channels: u32,
    /// QPs per connection (`NCCL_IB_QPS_PER_CONNECTION`): each chunk is split over them, so a
    /// connection's bytes take as many UDP source ports (ECMP paths). Sockets per connection
    /// over TCP.
    pub qps: u32,
    /// Bytes per chunk.
    pub chunk_bytes: u64,
    /// Host reduction cost, ps per KiB.
    pub reduce_ps_per_kib: u64,
    /// Buffer sizes, bytes per rank (nccl-tests' "size").
    pub sizes: Vec<u64>,
    /// Threads the run may use ([`World::new_partitioned`]): the result is the same for any
    /// count, so it is not part of the report.
    #[serde(skip)]
    pub threads: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            op: Op::AllReduce,
            algorithm: Algorithm::Ring,
            transport: Transport::Rdma,
            channels: 1,
            qps: 1,
            chunk_bytes: DEF_CHUNK_BYTES,
            reduce_ps_per_kib: DEF_REDUCE_PS_PER_KIB,
            sizes: vec![8 << 20],
            threads: 1,
        }
    }
}

impl Config {
    /// The first knob out of range, named with its allowed range.
    pub fn check(&self, hosts: u32) -> Result<(), String> {
        let out = |name: &str, v: u64, range: String| Err(format!("{name} = {v}: allowed {range}"));
        if !HOSTS.contains(&hosts) {
            return out("hosts", hosts.into(), format!("{HOSTS:?}"));
        }
        if !CHANNELS.contains(&self.channels) {
            return out("channels", self.channels.into(), format!("{CHANNELS:?}"));
        }
        if !QPS.contains(&self.qps) {
            return out("qps_per_connection", self.qps.into(), format!("{QPS:?}"));
        }
        if !CHUNK.contains(&self.chunk_bytes) {
            return out("chunk_bytes", self.chunk_bytes, format!("{CHUNK:?}"));
        }
        if !REDUCE.contains(&self.reduce_ps_per_kib) {
            return out(
                "reduce_ps_per_kib",
                self.reduce_ps_per_kib,
                format!("{REDUCE:?}"),
            );
        }
        for &s in &self.sizes {
            let min = u64::from(hosts) * u64::from(self.channels) * chunks::ELEM_BYTES;
            if s < min || s > MAX_BYTES {
                return out(
                    "size",
                    s,
                    format!("{min}..={MAX_BYTES} bytes (one float per host and channel)"),
                );
            }
        }
        schedule::Schedule::new(self.op, self.algorithm, hosts).map_err(|e| e.to_string())?;
        // The bookkeeping is per chunk: bound it (memory), naming the knob that shrinks it.
        let n = u64::from(hosts);
        for &s in &self.sizes {
            let (num, den) = self.op.bus_factor(hosts);
            let piece = s / (n * u64::from(self.channels));
            let per_piece = piece.div_ceil(self.chunk_bytes).max(1);
            let chunks = (s * num / den * n).div_ceil(self.chunk_bytes);
            let slots = n * n * u64::from(self.channels) * per_piece;
            if chunks > MAX_CHUNKS || slots > MAX_CHUNKS * 8 {
                return Err(format!(
                    "chunk_bytes = {}: size {s} on {hosts} hosts cuts {chunks} chunks; at most {MAX_CHUNKS} (raise chunk_bytes or lower the size)",
                    self.chunk_bytes
                ));
            }
        }
        Ok(())
    }
}

impl Config {
    /// The collective a plan's `[collective]` table and `workload.message_bytes` describe
    /// (`workload.pattern = "collective"`: `rdmalab run` and `rdmalab sweep`).
    pub fn from_plan(plan: &Plan) -> Config {
        let c = &plan.collective;
        Config {
            op: match c.op {
                scenario::CollectiveOp::AllGather => Op::AllGather,
                scenario::CollectiveOp::AllReduce => Op::AllReduce,
                scenario::CollectiveOp::AllToAll => Op::AllToAll,
                scenario::CollectiveOp::ReduceScatter => Op::ReduceScatter,
            },
            algorithm: match c.algorithm {
                scenario::CollectiveAlgorithm::HalvingDoubling => Algorithm::HalvingDoubling,
                scenario::CollectiveAlgorithm::Ring => Algorithm::Ring,
            },
            transport: match c.transport {
                scenario::CollectiveTransport::Rdma => Transport::Rdma,
                scenario::CollectiveTransport::Tcp => Transport::Tcp,
            },
            // The plan bounds these (schema), so the narrowing keeps every value.
            channels: c.channels as u32,
            qps: c.qps_per_connection as u32,
            chunk_bytes: c.chunk_bytes,
            reduce_ps_per_kib: c.reduce_ps_per_kib,
            sizes: vec![plan.workload.message_bytes],
            threads: 1,
        }
    }
}

/// Runs every size of `cfg` on a fresh world built from `plan` (topology, links, switches,
/// NIC and host profiles, RC options, TCP options, seed).
pub fn run_plan(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    cfg: &Config,
) -> Result<CollectiveReport, WorldError> {
    run_sizes(plan, host, cfg, false, None).map(|(r, _)| r)
}

/// [`run_plan`], with every size's first [`crate::report::MAX_TRACE_RECORDS`] trace records
/// (host stages, fabric events, setup included) and how many were left out, size after size,
/// each in the order [`World::take_trace`] gives for any number of threads.
pub fn run_plan_with_trace(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    cfg: &Config,
) -> Result<(CollectiveReport, crate::world::WholeTrace), WorldError> {
    let mut trace = crate::world::WholeTrace::default();
    let (r, _) = run_sizes(plan, host, cfg, false, Some(&mut trace))?;
    Ok((r, trace))
}

/// [`run_plan`], and per size every link direction that carried bytes with the RoCE flows on
/// it ([`flows`]): the all-reduce lab's collisions. The tap only observes; the report is the
/// same as [`run_plan`]'s.
pub fn run_plan_traced(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    cfg: &Config,
) -> Result<(CollectiveReport, Vec<Vec<flows::LinkFlows>>), WorldError> {
    run_sizes(plan, host, cfg, true, None)
}

fn run_sizes(
    plan: &Plan,
    host: &std::collections::BTreeMap<String, u64>,
    cfg: &Config,
    traced: bool,
    mut trace: Option<&mut crate::world::WholeTrace>,
) -> Result<(CollectiveReport, Vec<Vec<flows::LinkFlows>>), WorldError> {
    let topo = plan.topology()?;
    let n = topo.hosts().len() as u32;
    cfg.check(n).map_err(WorldError::Setup)?;
    let mut profile = plan.host_profile();
    profile
        .apply_overrides(host)
        .map_err(|e| WorldError::Setup(format!("host profile: {e}")))?;
    let sched = schedule::Schedule::new(cfg.op, cfg.algorithm, n)
        .map_err(|e| WorldError::Setup(e.to_string()))?;
    let mut rows = Vec::new();
    let mut links = Vec::new();
    let mut parallel = crate::world::Parallelism::default();
    for &size in &cfg.sizes {
        // Whole elements per host and channel, as nccl-tests rounds its counts.
        let unit = u64::from(n) * u64::from(cfg.channels) * chunks::ELEM_BYTES;
        let size = size / unit * unit;
        // A traced run's tap sees the frames one fabric puts on its wires: it stays whole.
        let threads = if traced { 1 } else { cfg.threads };
        let mut w = World::new_partitioned(
            &topo,
            plan.fabric_config(),
            profile,
            plan.nic_profile(),
            threads,
        )?;
        crate::report::run::configure(&mut w, plan, &profile);
        parallel = w.parallelism();
        if traced {
            w.fabric_mut().set_tap(flows::FlowTap::default());
        }
        if trace.is_some() {
            w.keep_trace(crate::report::MAX_TRACE_RECORDS);
        }
        let row = match cfg.transport {
            Transport::Rdma => rc::run(&mut w, &topo, plan, cfg, &sched, size)?,
            Transport::Tcp => tcp::run(&mut w, &topo, plan, cfg, &sched, size)?,
        };
        if let Some(t) = trace.as_deref_mut() {
            t.append(w.take_trace());
        }
        if traced && let Some(tap) = w.fabric_mut().take_tap::<flows::FlowTap>() {
            links.push(flows::collect(&w, &topo, &tap, row.time_ps));
        }
        rows.push(row);
    }
    Ok((
        CollectiveReport {
            hosts: n,
            config: cfg.clone(),
            topology: plan.topology.kind.name().to_string(),
            link_gbps: plan.topology.link_gbps,
            rows,
            parallel,
        },
        links,
    ))
}
