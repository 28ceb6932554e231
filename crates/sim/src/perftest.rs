//! perftest- and netperf-style measurements over the simulated fabric (`rdmalab perftest`):
//! the same tests engineers run on real NICs, with their flags and their output's meaning, so
//! a simulated figure sits beside a measured one.
//!
//! What each test measures (all times simulated, from the application's call):
//! - `ib_write_lat`: one WRITE at a time; post_send → the last byte placed in the responder's
//!   memory (one way; perftest's RTT/2 also counts the responder noticing the byte and posting
//!   its reply, a few hundred ns more).
//! - `ib_read_lat`, `ib_atomic_lat`: one READ (fetch-and-add) at a time; post_send → its CQE
//!   landed in the requester's CQ (a full round trip, as perftest reports it).
//! - `ib_send_lat`: one SEND at a time to pre-posted receives; post_send → the receive CQE
//!   landed in the responder's CQ (one way).
//! - `ib_*_bw`: `tx_depth` WRs kept in flight (SEND: receives kept posted), every `cq_mod`th
//!   one (and the last) signaled, as perftest's CQ moderation; bytes over the time from the
//!   first post to the last completion; the peak is the best of ten
//!   equal batches of completions; `-b` runs both directions at once and adds them.
//! - `tcp_rr`: netperf TCP_RR, request and response of `size` bytes, one transaction at a time;
//!   `tcp_stream`: netperf TCP_STREAM, back-to-back `write()`s of `size` bytes, throughput and
//!   each host's CPU utilisation (busy time ÷ elapsed time of every core, and of the busiest).

use crate::world::{Endpoint, RcOptions, SocketId, World, WorldError};
use engine::{Budget, ExecUnit, Stage, TraceRecord, Tracer, VecObserver};
use scenario::Plan;
use std::collections::BTreeMap;
use units::{SimDuration, SimTime};
use verbs::wr::{RecvWr, SendWr, Sge};
use verbs::{AccessFlags, WcStatus};

/// Most iterations of `ib_send_bw` (its receives are all posted up front).
pub const MAX_SEND_BW_ITERS: u64 = 8192;

/// The `max_inline_data` the tests' QPs ask for and every NIC profile grants.
pub const MAX_INLINE_DATA: u32 = 256;

/// perftest's CQ moderation bounds (`MIN_CQ_MOD`, `MAX_CQ_MOD`) and default (`DEF_CQ_MOD`).
pub const CQ_MOD_RANGE: std::ops::RangeInclusive<u64> = 1..=1024;
/// perftest's default CQ moderation.
pub const DEF_CQ_MOD: u64 = 100;

/// The tests.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Test {
    /// `ib_write_lat`.
    WriteLat,
    /// `ib_write_bw`.
    WriteBw,
    /// `ib_read_lat`.
    ReadLat,
    /// `ib_read_bw`.
    ReadBw,
    /// `ib_send_lat`.
    SendLat,
    /// `ib_send_bw`.
    SendBw,
    /// `ib_atomic_lat`.
    AtomicLat,
    /// netperf `TCP_RR`.
    TcpRr,
    /// netperf `TCP_STREAM`.
    TcpStream,
}

impl Test {
    /// Every test with its command-line name.
    pub const ALL: [(&'static str, Test); 9] = [
        ("ib_write_lat", Test::WriteLat),
        ("ib_write_bw", Test::WriteBw),
        ("ib_read_lat", Test::ReadLat),
        ("ib_read_bw", Test::ReadBw),
        ("ib_send_lat", Test::SendLat),
        ("ib_send_bw", Test::SendBw),
        ("ib_atomic_lat", Test::AtomicLat),
        ("tcp_rr", Test::TcpRr),
        ("tcp_stream", Test::TcpStream),
    ];

    /// The test named `s`.
    pub fn parse(s: &str) -> Option<Test> {
        Test::ALL.iter().find(|(n, _)| *n == s).map(|x| x.1)
    }

    /// perftest's inline size when `-I` is not given: latency tests inline WRITEs up to 220
    /// bytes (`DEF_INLINE_WRITE`) and RC SENDs up to 236 (`DEF_INLINE_SEND_RC_UC`); READ,
    /// atomic and bandwidth tests never inline. Clamped to the QPs' [`MAX_INLINE_DATA`].
    pub fn default_inline(self) -> u32 {
        let def = match self {
            Test::WriteLat => 220,
            Test::SendLat => 236,
            _ => 0,
        };
        def.min(MAX_INLINE_DATA)
    }

    /// WRITE or SEND: a test whose payload may go inline.
    pub fn is_inlinable(self) -> bool {
        matches!(
            self,
            Test::WriteLat | Test::WriteBw | Test::SendLat | Test::SendBw
        )
    }

    /// A latency test (rows of percentiles) rather than a bandwidth test.
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            Test::WriteLat | Test::ReadLat | Test::SendLat | Test::AtomicLat | Test::TcpRr
        )
    }
}

/// How to run a test.
#[derive(Clone, Debug)]
pub struct Options {
    /// The test.
    pub test: Test,
    /// Message sizes, one row each.
    pub sizes: Vec<u64>,
    /// Iterations per size.
    pub iters: u64,
    /// WRs in flight for bandwidth tests (perftest's `-t`, default 128).
    pub tx_depth: u64,
    /// Both directions at once (bandwidth tests).
    pub bidirectional: bool,
    /// Send WRITEs and SENDs of at most this many bytes inline (`-I`; 0: never).
    pub inline: u32,
    /// Bandwidth tests: signal every this many WRs (perftest's `--cq_mod`; 1: every WR).
    /// Clamped to `tx_depth`, as perftest does.
    pub cq_mod: u64,
    /// Queue pairs for bandwidth tests (`-q`), each with its own buffers and `iters`
    /// messages; the NIC serves the QPs with work round robin.
    pub qps: u32,
}

/// One latency row, µs.
#[derive(Clone, Debug, PartialEq)]
pub struct LatRow {
    /// Message bytes.
    pub bytes: u64,
    /// Iterations.
    pub iters: u64,
    /// Smallest.
    pub t_min: f64,
    /// Largest.
    pub t_max: f64,
    /// The median (perftest's "typical").
    pub t_typical: f64,
    /// Mean.
    pub t_avg: f64,
    /// Standard deviation.
    pub t_stdev: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
}

/// One bandwidth row.
#[derive(Clone, Debug, PartialEq)]
pub struct BwRow {
    /// Message bytes.
    pub bytes: u64,
    /// Iterations (messages per direction).
    pub iters: u64,
    /// Best of ten batches of completions per sending host, summed over the hosts, bytes per
    /// second; `None` where the tool reports no peak (netperf's tcp_stream).
    pub peak_bps: Option<f64>,
    /// Over the whole run, bytes per second.
    pub avg_bps: f64,
    /// Messages per second, millions.
    pub msg_rate_mpps: f64,
    /// `tcp_stream`: CPU utilisation of (sender, receiver) as a share of all cores.
    pub cpu_util: Option<(f64, f64)>,
    /// `tcp_stream`: the busiest core of (sender, receiver), share of the elapsed time.
    pub busiest_core: Option<(f64, f64)>,
    /// Share of the bytes host 0's first switch sent on each of its other ports (on a
    /// `leaf_spine` fabric: the uplinks to the spines, one per equal-cost path).
    pub uplink_share: Vec<f64>,
}

/// Bytes sent on each port of host 0's first switch except the one toward host 0, as
/// shares of their sum.
fn uplink_share(w: &World) -> Vec<f64> {
    let h0 = w.host(0).node;
    let ports: Vec<_> = w.fabric().ports().collect();
    let Some(link) = ports.iter().find(|p| p.0 == h0).map(|p| p.2) else {
        return Vec::new();
    };
    let Some(&(sw, toward_host, _, _)) = ports.iter().find(|p| p.2 == link && p.0 != h0) else {
        return Vec::new();
    };
    let bytes: Vec<u64> = ports
        .iter()
        .filter(|p| p.0 == sw && p.1 != toward_host)
        .map(|p| p.3.tx_bytes)
        .collect();
    let total: u64 = bytes.iter().sum();
    bytes
        .iter()
        .map(|b| {
            if total == 0 {
                0.0
            } else {
                *b as f64 / total as f64
            }
        })
        .collect()
}

/// A test's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Rows {
    /// Latency rows.
    Lat(Vec<LatRow>),
    /// Bandwidth rows.
    Bw(Vec<BwRow>),
}

/// Why a test could not run.
#[derive(Debug, thiserror::Error)]
pub enum PerftestError {
    /// The world would not build or run.
    #[error(transparent)]
    World(#[from] WorldError),
    /// A verb failed (the message says which and why).
    #[error("{0}")]
    Verb(String),
    /// The topology could not be built.
    #[error(transparent)]
    Fabric(#[from] fabric::ConfigError),
}

fn world(plan: &Plan, host: &BTreeMap<String, u64>) -> Result<World, PerftestError> {
    let topo = plan.topology()?;
    let mut profile = plan.host_profile();
    profile
        .apply_overrides(host)
        .map_err(|e| PerftestError::Verb(format!("host profile: {e}")))?;
    let mut w = World::new(&topo, plan.fabric_config(), profile, plan.nic_profile())?;
    crate::report::run::configure(&mut w, plan, &profile);
    Ok(w)
}

fn verb<T>(r: Result<T, impl std::fmt::Display>, what: &str) -> Result<T, PerftestError> {
    r.map_err(|e| PerftestError::Verb(format!("{what}: {e}")))
}

/// Runs a test on `plan`'s fabric and host/NIC profiles.
pub fn run(plan: &Plan, host: &BTreeMap<String, u64>, o: &Options) -> Result<Rows, PerftestError> {
    let mut lat = Vec::new();
    let mut bw = Vec::new();
    for &size in &o.sizes {
        let mut w = world(plan, host)?;
        match o.test {
            Test::TcpRr => lat.push(tcp_rr(&mut w, plan, size, o.iters)?),
            Test::TcpStream => bw.push(tcp_stream(&mut w, plan, size, o.iters)?),
            t if t.is_latency() => lat.push(rdma_lat(&mut w, plan, t, size, o)?),
            t => bw.push(rdma_bw(&mut w, plan, t, size, o)?),
        }
    }
    Ok(if o.test.is_latency() {
        Rows::Lat(lat)
    } else {
        Rows::Bw(bw)
    })
}

/// Percentiles of samples in ns, as µs.
fn lat_row(bytes: u64, mut ns: Vec<f64>) -> LatRow {
    if ns.is_empty() {
        // No iteration ran (`iters` = 0): a row of zeros rather than an index out of range.
        ns.push(0.0);
    }
    ns.sort_by(f64::total_cmp);
    let n = ns.len().max(1) as f64;
    let at = |q: f64| ns[((q * n).ceil() as usize).clamp(1, ns.len()) - 1] / 1e3;
    let avg = ns.iter().sum::<f64>() / n;
    let var = ns.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n;
    LatRow {
        bytes,
        iters: ns.len() as u64,
        t_min: ns[0] / 1e3,
        t_max: ns[ns.len() - 1] / 1e3,
        t_typical: at(0.5),
        t_avg: avg / 1e3,
        t_stdev: var.sqrt() / 1e3,
        p99: at(0.99),
        p999: at(0.999),
    }
}

/// A registered buffer: (address, lkey, rkey).
type Buf = (u64, u32, u32);

/// One direction of one QP in a bandwidth test: (sender, receiver, sender's buffer, the
/// receiver's buffer).
type Stream = (Endpoint, Endpoint, Buf, Buf);

struct Rdma {
    a: Endpoint,
    b: Endpoint,
    /// (va, lkey, rkey) of each host's buffer.
    buf: [(u64, u32, u32); 2],
}

fn rdma_setup(w: &mut World, plan: &Plan, size: u64, qps: u32) -> Result<Vec<Rdma>, PerftestError> {
    let d = RcOptions::default();
    let o = RcOptions {
        mtu: plan.rdma_mtu(),
        timeout: plan.rdma.timeout,
        retry_cnt: plan.rdma.retry_cnt,
        cap: verbs::qp::QpCap {
            max_recv_wr: MAX_SEND_BW_ITERS as u32,
            max_inline_data: MAX_INLINE_DATA,
            ..d.cap
        },
        cqe: 2 * MAX_SEND_BW_ITERS as u32,
        ..d
    };
    let access = AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC;
    let len = size.max(8);
    let mut out = Vec::new();
    for _ in 0..qps.max(1) {
        let (a, b) = w.connect_rc(0, 1, &o).map_err(WorldError::from)?;
        let mut buf = [(0, 0, 0); 2];
        for (i, e) in [a, b].iter().enumerate() {
            let mem = w.verbs(e.host).memory_mut();
            let va = if len <= verbs::Memory::MAX_REAL_LEN {
                mem.alloc(len)
            } else {
                mem.alloc_synthetic(len, plan.seed)
            };
            let va = verb(va, "malloc")?;
            let mr = verb(w.reg_mr(e.host, e.pd, va, len, access), "ibv_reg_mr")?;
            buf[i] = (va, mr.lkey, mr.rkey);
        }
        out.push(Rdma { a, b, buf });
    }
    Ok(out)
}

fn wr(
    t: Test,
    id: u64,
    size: u64,
    inline: u32,
    signaled: bool,
    from: (u64, u32, u32),
    to: (u64, u32, u32),
) -> SendWr {
    let sge = vec![Sge {
        addr: from.0,
        length: if t == Test::AtomicLat { 8 } else { size as u32 },
        lkey: from.1,
    }];
    let x = match t {
        Test::WriteLat | Test::WriteBw => SendWr::write(id, sge, to.0, to.2),
        Test::ReadLat | Test::ReadBw => SendWr::read(id, sge, to.0, to.2),
        Test::SendLat | Test::SendBw => SendWr::send(id, sge),
        _ => SendWr::fetch_and_add(id, sge, to.0, to.2, 1),
    };
    let x = if signaled { x.signaled() } else { x };
    if t.is_inlinable() && size <= inline as u64 {
        x.with_flags(verbs::SendFlags::INLINE)
    } else {
        x
    }
}

fn recv(
    w: &mut World,
    e: Endpoint,
    id: u64,
    size: u64,
    buf: (u64, u32, u32),
) -> Result<(), PerftestError> {
    let r = RecvWr::new(
        id,
        vec![Sge {
            addr: buf.0,
            length: size as u32,
            lkey: buf.1,
        }],
    );
    verb(w.post_recv(e.host, e.qpn, &[r]), "ibv_post_recv").map(|_| ())
}

/// Polls `e`'s CQ until `n` completions arrived (each checked for success); returns when the
/// last one landed.
fn wait_cqes(w: &mut World, e: Endpoint, n: usize) -> Result<SimTime, PerftestError> {
    let budget = Budget::default();
    let mut got = 0;
    let deadline = w.now() + SimDuration::from_secs(2);
    while got < n {
        let cq = e.cq;
        w.run_until_cond(deadline, &budget, |w| {
            w.host(e.host).verbs.cq(cq).is_some_and(|c| !c.is_empty())
        })?;
        let wcs = verb(w.poll_cq(e.host, e.cq, 64), "ibv_poll_cq")?;
        if wcs.is_empty() {
            return Err(PerftestError::Verb(format!(
                "no completion on host {} within 2 s of simulated time",
                e.host
            )));
        }
        if let Some(bad) = wcs.iter().find(|c| c.status != WcStatus::Success) {
            return Err(PerftestError::Verb(format!(
                "a work request completed with {:?} on host {}",
                bad.status, e.host
            )));
        }
        got += wcs.len();
    }
    Ok(w.now())
}

/// Forgets the trace records so far (the next [`stage_end`] looks only at what follows).
fn clear_stages(w: &mut World) {
    w.set_tracer(Tracer::new(VecObserver::default()));
}

/// The end of the last `stage` on `host` among the trace records since the last call.
fn stage_end(w: &mut World, host_node: units::NodeId, stage: Stage) -> Option<SimTime> {
    let recs = w.tracer_mut().take::<VecObserver>()?.records;
    clear_stages(w);
    recs.iter()
        .filter_map(|(_, r)| match r {
            TraceRecord::Stage {
                host,
                unit: ExecUnit::Pcie,
                stage: s,
                end,
                ..
            } if *host == host_node && *s == stage => Some(*end),
            _ => None,
        })
        .max()
}

fn rdma_lat(
    w: &mut World,
    plan: &Plan,
    t: Test,
    size: u64,
    o: &Options,
) -> Result<LatRow, PerftestError> {
    let iters = o.iters;
    let r = rdma_setup(w, plan, size, 1)?.remove(0);
    let mut samples = Vec::with_capacity(iters as usize);
    let b_node = w.host(1).node;
    w.set_tracer(Tracer::new(VecObserver::default()));
    for i in 0..iters {
        if t == Test::SendLat {
            recv(w, r.b, i, size, r.buf[1])?;
        }
        let t0 = w.now().max(w.app_ready(0));
        if t0 > w.now() {
            w.run_until(t0, &Budget::default())?;
        }
        clear_stages(w);
        verb(
            w.post_send(
                0,
                r.a.qpn,
                &[wr(t, i, size, o.inline, true, r.buf[0], r.buf[1])],
            ),
            "ibv_post_send",
        )?;
        let end = match t {
            Test::SendLat => wait_cqes(w, r.b, 1)?,
            _ => wait_cqes(w, r.a, 1)?,
        };
        let end = if t == Test::WriteLat {
            stage_end(w, b_node, Stage::DmaWritePayload).unwrap_or(end)
        } else {
            end
        };
        if t == Test::SendLat {
            wait_cqes(w, r.a, 1)?;
        }
        samples.push(end.saturating_duration_since(t0).as_ps() as f64 / 1e3);
    }
    Ok(lat_row(size, samples))
}

fn rdma_bw(
    w: &mut World,
    plan: &Plan,
    t: Test,
    size: u64,
    o: &Options,
) -> Result<BwRow, PerftestError> {
    let pairs = rdma_setup(w, plan, size, o.qps)?;
    let budget = Budget::default();
    // One stream per QP and direction: (sender, its buffer, the peer's buffer).
    let mut dirs: Vec<Stream> = Vec::new();
    for r in &pairs {
        dirs.push((r.a, r.b, r.buf[0], r.buf[1]));
        if o.bidirectional {
            dirs.push((r.b, r.a, r.buf[1], r.buf[0]));
        }
    }
    let depth = o.tx_depth.clamp(1, 1000);
    let cq_mod = o.cq_mod.clamp(1, depth);
    let mut posted = vec![0u64; dirs.len()];
    let mut done = vec![0u64; dirs.len()];
    // Per stream, the WRs up to and including the last signaled one posted.
    let mut signaled_upto = vec![0u64; dirs.len()];
    // Completion times by sending host (each host's link caps its own stream).
    let mut marks: [Vec<SimTime>; 2] = [Vec::new(), Vec::new()];
    let total = o.iters * dirs.len() as u64;
    let start = w.now().max(w.app_ready(0)).max(w.app_ready(1));
    w.run_until(start, &budget)?;
    if t == Test::SendBw {
        // Every receive posted before the first send (the receive queue holds them all).
        for (_, to, _, theirs) in &dirs {
            for i in 0..o.iters {
                recv(w, *to, i, size, *theirs)?;
            }
        }
    }
    let deadline = start + SimDuration::from_secs(10);
    while done.iter().sum::<u64>() < total {
        for (d, (from, _, mine, theirs)) in dirs.iter().enumerate() {
            while posted[d] < o.iters
                && posted[d] - done[d] < depth
                && w.now() >= w.app_ready(from.host)
            {
                // Every cq_mod-th WR and the last are signaled; a CQE retires every WR
                // posted up to it (an RC send queue completes in order).
                let n = posted[d] + 1;
                let signaled = n.is_multiple_of(cq_mod) || n == o.iters;
                let x = wr(t, posted[d], size, o.inline, signaled, *mine, *theirs);
                verb(w.post_send(from.host, from.qpn, &[x]), "ibv_post_send")?;
                posted[d] = n;
                if signaled {
                    signaled_upto[d] = n;
                }
            }
            let wcs = verb(w.poll_cq(from.host, from.cq, 64), "ibv_poll_cq")?;
            for c in &wcs {
                if c.status != WcStatus::Success {
                    return Err(PerftestError::Verb(format!(
                        "a work request completed with {:?}",
                        c.status
                    )));
                }
                // A host's CQ also takes the receives of the other direction: count sends.
                if matches!(c.opcode, Some(verbs::WcOpcode::Recv)) {
                    continue;
                }
                let retired = c.wr_id + 1 - done[d];
                done[d] = c.wr_id + 1;
                let m = &mut marks[from.host.index().min(1)];
                m.extend(std::iter::repeat_n(w.now(), retired as usize));
            }
        }
        if done.iter().sum::<u64>() >= total {
            break;
        }
        if w.now() > deadline {
            return Err(PerftestError::Verb(
                "the test did not finish within 10 s of simulated time".into(),
            ));
        }
        // A stream with room whose WRs in flight are all unsignaled (the ones after a
        // moderated CQE) would never wake the wait below: post into its room first, as
        // perftest's busy loop would. Streams with a signaled WR in flight wait for its CQE.
        let stuck = dirs.iter().enumerate().any(|(d, (from, ..))| {
            posted[d] < o.iters
                && posted[d] - done[d] < depth
                && signaled_upto[d] <= done[d]
                && w.now() >= w.app_ready(from.host)
        });
        if stuck {
            continue;
        }
        let cqs: Vec<(u32, verbs::CqHandle)> = dirs
            .iter()
            .map(|(f, _, _, _)| (f.host.get(), f.cq))
            .collect();
        let st = w.run_until_cond(deadline, &budget, |w| {
            cqs.iter()
                .any(|(h, cq)| w.host(*h).verbs.cq(*cq).is_some_and(|c| !c.is_empty()))
        })?;
        if st.events == 0 {
            let now = w.now();
            w.run_until(now + SimDuration::from_ns(1), &budget)?;
        }
    }
    let end = w.now();
    let secs = end.saturating_duration_since(start).as_ps() as f64 / 1e12;
    let bytes = (total * size) as f64;
    // Peak: per sending host, the best of ten equal batches of its completions; summed
    // over the hosts (with -b each direction has its own link).
    let peak: f64 = marks
        .iter_mut()
        .map(|m| {
            m.sort();
            let per = (m.len() / 10).max(1);
            let mut best: f64 = 0.0;
            let (mut prev, mut i) = (start, 0);
            while i < m.len() {
                // A batch ends where the time moves on: completions at one instant (one ACK
                // covering several WRs) fall into one batch, not across two.
                let mut end = (i + per).min(m.len()) - 1;
                while end + 1 < m.len() && m[end + 1] == m[end] {
                    end += 1;
                }
                let s = m[end].saturating_duration_since(prev).as_ps() as f64 / 1e12;
                if s > 0.0 {
                    best = best.max((end + 1 - i) as f64 * size as f64 / s);
                }
                prev = m[end];
                i = end + 1;
            }
            best
        })
        .sum();
    Ok(BwRow {
        bytes: size,
        iters: o.iters,
        peak_bps: Some(peak.max(bytes / secs)),
        avg_bps: bytes / secs,
        msg_rate_mpps: total as f64 / secs / 1e6,
        cpu_util: None,
        busiest_core: None,
        uplink_share: uplink_share(w),
    })
}

fn tcp_pair(w: &mut World, plan: &Plan) -> Result<(SocketId, SocketId), PerftestError> {
    let opts = crate::report::run::tcp_options(plan);
    Ok(w.tcp_connect(0, 1, &opts)?)
}

/// Writes all of `data` on `sock` from host `h`, waiting while the send buffer is full.
fn write_all(w: &mut World, h: u32, sock: SocketId, data: &[u8]) -> Result<(), PerftestError> {
    let budget = Budget::default();
    let mut sent = 0;
    while sent < data.len() {
        if !w.tcp_wait(sock, true, &budget)? {
            return Err(PerftestError::Verb("the connection closed".into()));
        }
        sent += w.tcp_write(h, sock, &data[sent..]);
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes on `sock` into host `h`'s buffer.
///
/// The thread calls `read()` before the data is there and blocks in it, as netperf's
/// `recv()` loop and `rdmalab run`'s reader do: without busy-poll the arriving data raises an
/// interrupt and wakes the thread (`wake-up (context switch)`); with it the spinning reader
/// polls the ring (no interrupt, no wake-up, the spin charged to its core).
fn read_exact(w: &mut World, h: u32, sock: SocketId, buf: &mut [u8]) -> Result<(), PerftestError> {
    let budget = Budget::default();
    let mut got = w.tcp_read(h, sock, buf);
    while got < buf.len() {
        if !w.tcp_wait(sock, false, &budget)? {
            return Err(PerftestError::Verb("the connection closed".into()));
        }
        got += w.tcp_read(h, sock, &mut buf[got..]);
        if got < buf.len() {
            // Block again for the rest.
            got += w.tcp_read(h, sock, &mut buf[got..]);
        }
    }
    Ok(())
}

fn tcp_rr(w: &mut World, plan: &Plan, size: u64, iters: u64) -> Result<LatRow, PerftestError> {
    let (sa, sb) = tcp_pair(w, plan)?;
    let msg = vec![0x5au8; size.max(1) as usize];
    let mut buf = vec![0u8; msg.len()];
    let mut samples = Vec::with_capacity(iters as usize);
    for _ in 0..iters {
        let t0 = w.now().max(w.app_ready(0));
        write_all(w, 0, sa, &msg)?;
        read_exact(w, 1, sb, &mut buf)?;
        write_all(w, 1, sb, &msg)?;
        read_exact(w, 0, sa, &mut buf)?;
        let end = w.now().max(w.app_ready(0));
        samples.push(end.saturating_duration_since(t0).as_ps() as f64 / 1e3);
    }
    Ok(lat_row(size, samples))
}

fn tcp_stream(w: &mut World, plan: &Plan, size: u64, iters: u64) -> Result<BwRow, PerftestError> {
    let (sa, sb) = tcp_pair(w, plan)?;
    let budget = Budget::default();
    let msg = vec![0xa5u8; size.max(1) as usize];
    let total = size.max(1) * iters;
    let mut buf = vec![0u8; 1 << 20];
    let cores = |w: &World, h: u32| -> Vec<SimDuration> {
        let c = w.host(h).cpu();
        (0..c.cores()).map(|i| c.core_busy(i)).collect()
    };
    let start = w.now().max(w.app_ready(0));
    w.run_until(start, &budget)?;
    let busy0 = [cores(w, 0), cores(w, 1)];
    let (mut sent, mut got) = (0u64, 0u64);
    while got < total {
        if sent < total && w.tcp_writable(sa) > 0 && w.now() >= w.app_ready(0) {
            let off = (sent % msg.len() as u64) as usize;
            let n = (total - sent).min((msg.len() - off) as u64) as usize;
            sent += w.tcp_write(0, sa, &msg[off..off + n]) as u64;
            continue;
        }
        if w.tcp_bytes_readable(sb) > 0 && w.now() >= w.tcp_ready_at(sb) {
            got += w.tcp_read(1, sb, &mut buf) as u64;
            continue;
        }
        let now = w.now();
        let mut wait = now + SimDuration::from_ms(100);
        if w.tcp_writable(sa) > 0 && sent < total {
            wait = wait.min(w.app_ready(0).max(now));
        }
        if w.tcp_bytes_readable(sb) > 0 {
            wait = wait.min(w.tcp_ready_at(sb).max(now));
        }
        let st = w.run_until_cond(wait, &budget, |w| {
            (w.tcp_writable(sa) > 0 && sent < total) || w.tcp_bytes_readable(sb) > 0
        })?;
        if st.events == 0 && w.now() == now {
            w.run_until(wait.max(now + SimDuration::from_ps(1)), &budget)?;
        }
    }
    let end = w.now();
    let el = end.saturating_duration_since(start);
    let secs = el.as_ps() as f64 / 1e12;
    let util = |h: usize| {
        let now = cores(w, h as u32);
        let busy: Vec<f64> = now
            .iter()
            .zip(&busy0[h])
            .map(|(a, b)| a.saturating_sub(*b).as_ps() as f64 / el.as_ps().max(1) as f64)
            .collect();
        (
            busy.iter().sum::<f64>() / busy.len().max(1) as f64,
            busy.iter().cloned().fold(0.0, f64::max).min(1.0),
        )
    };
    let (u0, m0) = util(0);
    let (u1, m1) = util(1);
    Ok(BwRow {
        bytes: size,
        iters,
        // netperf reports no peak.
        peak_bps: None,
        avg_bps: total as f64 / secs,
        msg_rate_mpps: iters as f64 / secs / 1e6,
        cpu_util: Some((u0, u1)),
        busiest_core: Some((m0, m1)),
        uplink_share: uplink_share(w),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_order_statistics() {
        let r = lat_row(2, (1..=1000).map(|x| x as f64 * 1000.0).collect());
        assert_eq!((r.t_min, r.t_max), (1.0, 1000.0));
        assert_eq!((r.t_typical, r.p99, r.p999), (500.0, 990.0, 999.0));
        assert!((r.t_avg - 500.5).abs() < 1e-9);
        assert_eq!(Test::parse("ib_read_bw"), Some(Test::ReadBw));
        assert_eq!(Test::parse("ib_nope"), None);
    }
}
