//! Running a plan's two paths and reading the report rows out of the runs.

use super::stagelog::{Phase, Rec, StageLog, StageTotal};
use super::{
    Costs, FrameHops, Interval, LIGHT_MAX_CPU_NS_PER_MESSAGE, Latency, MAX_LADDER_FRAMES,
    MAX_TIMELINE_INTERVALS, Outcome, Participation, PathReport, Recovery, Report, RunError,
    RunOptions, ScenarioSummary, Sides, StageCount, StageSpan, stream,
};
use crate::output::Output;
use crate::world::{
    Bringup, BufferSpec, ConnectStep, Endpoint, HostBuffer, RcOptions, TcpOptions, World,
    WorldError,
};
use crate::{PatternGen, pattern};
use engine::{
    Budget, Domain, ExecUnit, FirstObserver, PacketClass, PacketStage, Stage, TraceRecord, Tracer,
};
use scenario::{Operation, Paths, Plan};
use std::collections::BTreeMap;
use std::path::Path;
use units::{NodeId, SimDuration, SimTime};
use verbs::{
    AccessFlags, WcStatus,
    wr::{RecvWr, SendWr, Sge},
};

/// How long (simulated) a message may take before the run gives up on it.
const MESSAGE_DEADLINE: SimDuration = SimDuration::from_secs(2);

/// (side, unit, stage) of a breakdown group.
type GroupKey = (usize, &'static str, &'static str);
/// (runs, busy, first start, last end) of a breakdown group.
type GroupVal = (u64, SimDuration, SimTime, SimTime);

/// Per-host counters snapshot taken when setup ends.
#[derive(Clone, Debug, Default)]
struct Snap {
    dma: [u64; 2],
    copies: [u64; 2],
    copied: [u64; 2],
    syscalls: [u64; 2],
    cpu_data: [SimDuration; 2],
    fabric: fabric::Counters,
    /// The first frame a host port refused as longer than its MTU, if any yet.
    oversize: Option<fabric::OversizeDrop>,
    at: SimTime,
}

/// Lets the work setup left behind (delayed ACKs of a handshake or of the out-of-band
/// exchange) finish, for at most 1 ms, so that it is not counted as data path.
fn settle(w: &mut World) -> Result<(), RunError> {
    let limit = w.now() + SimDuration::from_ms(1);
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    while let Some(t) = w.next_event_at() {
        if t > limit {
            break;
        }
        w.run_until(t.max(w.now() + SimDuration::from_ps(1)), &budget)?;
    }
    let ready = w.app_ready(0).max(w.app_ready(1));
    if ready > w.now() && ready <= limit {
        w.run_until(ready, &budget)?;
    }
    Ok(())
}

fn snap(w: &World) -> Snap {
    let mut s = Snap {
        fabric: w.fabric().counters(),
        oversize: w.fabric().oversize(),
        at: w.now(),
        ..Default::default()
    };
    for h in 0..2 {
        let st = w.socket_stats(h as u32);
        s.dma[h] = w.host(h as u32).dma_bytes();
        s.copies[h] = st.copies;
        s.copied[h] = st.copied_bytes;
        s.syscalls[h] = st.syscall_count();
        s.cpu_data[h] = w.host(h as u32).cpu().account().data_path;
    }
    s
}

/// What one path's driver measured for the first message and overall.
struct Measured {
    outcome: Outcome,
    delivered: u64,
    /// First message: started, delivered, placed at remote, local completion.
    first: Option<(SimTime, SimTime, Option<SimTime>, SimTime)>,
    retransmitted_bytes: u64,
    setup_start: SimTime,
    /// When the setup calls returned (before [`settle`] lets stray ACKs finish).
    setup_end: SimTime,
    /// Where the run's whole trace goes (`rdmalab trace`).
    trace: Option<super::TraceSink>,
    /// Where the run's packet view goes (`run_plan_packets`).
    frames: Option<super::packets::ViewSink>,
    /// Where the run's fabric view goes (`run_plan_fabric`).
    fabric: Option<FabricSink>,
    /// When no message got through: when the first attempt started and when the run gave
    /// up on it (its stages and frames are drawn as [`super::FailedAttempt`]).
    attempt: Option<(SimTime, SimTime)>,
}

/// Runs `plan`'s paths and builds the report.
pub fn run_plan(plan: &Plan) -> Result<Report, RunError> {
    run_plan_with(plan, &RunOptions::default())
}

/// [`run_plan`] with [`RunOptions`]: calibrated host constants, pcap capture.
pub fn run_plan_with(plan: &Plan, opts: &RunOptions) -> Result<Report, RunError> {
    run_plan_tapped(plan, opts, None)
}

/// [`run_plan_with`], and each main run's packet view ([`super::packets::view`]: the frames
/// around its first drop), TCP's then RDMA's. Same plan, same report and same views.
pub fn run_plan_packets(
    plan: &Plan,
    opts: &RunOptions,
) -> Result<(Report, Vec<super::packets::View>), RunError> {
    let sink = super::packets::ViewSink::default();
    let report = run_plan_tapped(plan, opts, Some(sink.clone()))?;
    let views = std::mem::take(&mut *sink.lock().expect("no panic holds the sink"));
    Ok((report, views))
}

/// A main run's fabric view, with its path's name (`tcp`, `rdma`).
pub type PathFabricView = (&'static str, crate::labs::fabric_view::FabricView);

/// Where each main run's fabric view goes (`run_plan_fabric`).
pub type FabricSink = std::sync::Arc<std::sync::Mutex<Vec<PathFabricView>>>;

/// [`run_plan_with`], and each main run's fabric view ([`crate::labs::fabric_view`]: every
/// link of the plan's topology, sampled from the data path's start to the run's end), TCP's
/// then RDMA's, each with its path's name. Same plan, same report: the views only watch, and
/// their last samples are taken when the report's counts are, so a view's PAUSE frames and
/// drops add up to its path's `pfc_pauses` and `drops` (cross-traffic bursts' drops, which a
/// path's `drops` leaves out, are counted apart in the view's `raw_drops`).
pub fn run_plan_fabric(
    plan: &Plan,
    opts: &RunOptions,
) -> Result<(Report, Vec<PathFabricView>), RunError> {
    let sink = FabricSink::default();
    let report = run_plan_taps(plan, opts, None, Some(sink.clone()))?;
    let views = std::mem::take(&mut *sink.lock().expect("no panic holds the sink"));
    Ok((report, views))
}

fn run_plan_tapped(
    plan: &Plan,
    opts: &RunOptions,
    frames: Option<super::packets::ViewSink>,
) -> Result<Report, RunError> {
    run_plan_taps(plan, opts, frames, None)
}

fn run_plan_taps(
    plan: &Plan,
    opts: &RunOptions,
    frames: Option<super::packets::ViewSink>,
    fabric: Option<FabricSink>,
) -> Result<Report, RunError> {
    let host = &opts.host;
    let pcap = |path: &str| {
        opts.pcap
            .as_ref()
            .map(|p| p.with_file_name(format!("{}-{path}.pcap", stem(p))))
    };
    if let Some(what) = not_modelled(plan) {
        return Err(RunError::Unsupported(what));
    }
    let streaming = plan.stream_duration().is_some();
    if streaming && plan.rdma.operation != Operation::Write {
        return Err(RunError::Unsupported(format!(
            "stream mode with rdma.operation = {} (stream mode streams RDMA WRITEs)",
            plan.rdma.operation.name()
        )));
    }
    let lossy = plan.loss.congestion_drop > 0.0
        || plan.loss.corruption > 0.0
        || plan.cross_traffic.burst_bytes > 0;
    // The baseline: the same stream with no drawn loss, no corruption and no cross traffic.
    let mut loss_free = plan.clone();
    loss_free.loss.congestion_drop = 0.0;
    loss_free.loss.corruption = 0.0;
    loss_free.cross_traffic.burst_bytes = 0;
    // Retention = this run's throughput over the same stream's without loss.
    let with_baseline = |mut r: PathReport, base: Option<PathReport>| {
        if let (Some(t), Some(b)) = (r.throughput.as_mut(), base.and_then(|b| b.throughput)) {
            t.baseline_gbps = Some(b.gbps);
            t.retention = (b.gbps > 0.0).then(|| t.gbps / b.gbps);
            t.retention_ci95 = t
                .ci95_gbps
                .filter(|_| b.gbps > 0.0)
                .map(|(lo, hi)| (lo / b.gbps, hi / b.gbps));
            let ceiling = stream::cross_traffic_ceiling(plan, b.gbps);
            if let Some(c) = r.cross_traffic.as_mut() {
                c.ceiling = Some(ceiling);
            }
            let (gbps, window) = (t.gbps, t.window_ns);
            if let Some(m) = t.model.as_mut() {
                m.predict_within(b.gbps, ceiling, gbps, window);
            }
        }
        r
    };
    // One path: its run (captured and traced) and, for a lossy stream, its loss-free rerun.
    type Runner = fn(
        &Plan,
        &BTreeMap<String, u64>,
        Option<PcapSink>,
        Option<super::TraceSink>,
        Option<super::packets::ViewSink>,
        Option<FabricSink>,
    ) -> Result<PathReport, RunError>;
    // Each capture is written to a temporary file and renamed into place only once the whole
    // report succeeded (crate::output): a failed run leaves no pcap under the final name.
    let outputs = std::cell::RefCell::new(Vec::new());
    let path = |name: &str, run: Runner| -> Result<PathReport, RunError> {
        let sink = match pcap(name) {
            None => None,
            Some(p) => {
                let o = Output::create(&p).map_err(|e| RunError::Pcap(e.to_string()))?;
                let w = o.writer().map_err(|e| RunError::Pcap(e.to_string()))?;
                outputs.borrow_mut().push(o);
                Some(Box::new(w) as PcapSink)
            }
        };
        let r = run(
            plan,
            host,
            sink,
            opts.trace.clone(),
            frames.clone(),
            fabric.clone(),
        )?;
        let base = if streaming && lossy {
            Some(run(&loss_free, host, None, None, None, None)?)
        } else {
            None
        };
        Ok(with_baseline(r, base))
    };
    let p = plan.workload.paths;
    let tcp = matches!(p, Paths::Both | Paths::Tcp)
        .then(|| path("tcp", run_tcp))
        .transpose()?;
    let rdma = matches!(p, Paths::Both | Paths::Rdma)
        .then(|| path("rdma", run_rdma))
        .transpose()?;
    let lat = |p: &Option<PathReport>| p.as_ref()?.latency.as_ref().map(|l| l.delivered_ns);
    let ratio = match (lat(&tcp), lat(&rdma)) {
        (Some(t), Some(r)) if t > 0.0 => Some(r / t),
        _ => None,
    };
    for o in outputs.into_inner() {
        o.commit().map_err(|e| RunError::Pcap(e.to_string()))?;
    }
    Ok(Report {
        schema: "rdmalab.report/1",
        scenario: ScenarioSummary {
            seed: plan.seed,
            message_bytes: plan.workload.message_bytes,
            messages: plan.workload.messages,
            operation: plan.rdma.operation.name().to_string(),
            link_gbps: plan.topology.link_gbps,
            mode: if streaming { "stream" } else { "count" },
            stream_us: plan.workload.stream_us,
            pfc: super::PfcSummary::of(plan),
        },
        tcp,
        rdma,
        rdma_over_tcp_latency: ratio,
    })
}

/// Settings the schema accepts but this report does not model yet: refused by name rather
/// than silently run as something else.
fn not_modelled(plan: &Plan) -> Option<String> {
    use scenario::{Completion, QpKind};
    let r = &plan.rdma;
    if r.qp_type != QpKind::Rc {
        return Some(format!(
            "rdma.qp_type = {} (the comparison report runs RC; UC runs in verbs sessions, UC and UD in the library's World)",
            r.qp_type.name()
        ));
    }
    if r.completion == Completion::Event && r.operation != scenario::Operation::Send {
        return Some(
            "rdma.completion = event with a one-sided operation (event completions are modelled for the SEND/RECV receiver)"
                .into(),
        );
    }
    if plan.workload.pattern == scenario::Pattern::Permutation {
        return Some(
            "workload.pattern = permutation (the comparison report runs one pair of hosts; `rdmalab run` runs the permutation and reports flow completion times)"
                .into(),
        );
    }
    if plan.workload.pattern == scenario::Pattern::Matrix {
        return Some(
            "workload.pattern = matrix (the comparison report runs one pair of hosts; `rdmalab run` reads the connection matrix file and reports flow completion times)"
                .into(),
        );
    }
    if plan.workload.pattern == scenario::Pattern::Collective {
        return Some(
            "workload.pattern = collective (the comparison report runs one pair of hosts; `rdmalab collective` runs the collective)"
                .into(),
        );
    }
    if plan.workload.concurrency > 1 {
        return Some(format!(
            "workload.concurrency = {} (the report runs one connection and one QP)",
            plan.workload.concurrency
        ));
    }
    None
}

/// Selective repeat's in-flight cap, in packets: twice the path's bandwidth-delay product.
/// IRN caps in-flight packets at the BDP (research/figures.md §5); twice leaves room for the
/// responder acknowledging every half window, so a loss-free stream still fills the link.
/// The round trip counts, each way, every link's propagation and the store-and-forward of
/// one full frame per link, and the NIC pipeline at both ends.
fn selective_window(plan: &Plan, profile: &host::HostProfile) -> u32 {
    use scenario::TopologyKind;
    let t = &plan.topology;
    let links: u64 = match t.kind {
        TopologyKind::BackToBack => 1,
        TopologyKind::Switch => 2,
        TopologyKind::LeafSpine => 4,
        TopologyKind::FatTree => 6,
    };
    let mtu = plan.rdma.mtu_bytes.max(256);
    // Frame on the wire: payload plus Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and gap.
    let frame_bits = (mtu + 98) * 8;
    let gbps = t.link_gbps.max(1);
    let ser_ps = frame_bits * 1_000 / gbps;
    let prop_ps = t.cable_m * 5_000; // 5 ns/m, as topology.cable_m says
    let extra_ps = t.extra_delay_us * 1_000_000; // topology.extra_delay_us, one way
    let one_way = links * (prop_ps + ser_ps) + extra_ps + 2 * profile.nic.pipeline.as_ps();
    let rtt_ps = 2 * one_way;
    let bdp_bytes = rtt_ps.saturating_mul(gbps) / 8_000;
    (2 * bdp_bytes.div_ceil(mtu)).clamp(4, 1 << 14) as u32
}

/// `run.pcap` → `run`; a path without a file name → `capture`.
fn stem(p: &Path) -> String {
    p.file_stem().map_or_else(
        || "capture".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// What a plan sets on a new World beyond its topology and profiles, for every experiment
/// built from a plan (the report, perftest, the permutation): the run budget, RoCE's
/// priority, adaptive retransmission, DCQCN and selective repeat.
pub(crate) fn configure(w: &mut World, plan: &Plan, profile: &host::HostProfile) {
    w.set_run_budget(plan.budget());
    // RoCE travels in the priority the plan's PFC settings name.
    w.set_roce_priority(units::Priority::of(plan.lossless.priority));
    w.set_adaptive_retransmission(plan.nic.adaptive_retransmission);
    if plan.rdma.dcqcn {
        use transport::roce::dcqcn::DcqcnParams;
        w.set_dcqcn(Some(match plan.rdma.dcqcn_profile {
            scenario::DcqcnProfile::Nvidia => DcqcnParams::NVIDIA,
            scenario::DcqcnProfile::Paper => DcqcnParams::PAPER,
        }));
    }
    if plan.rdma.retransmission == scenario::Retransmission::Selective {
        w.set_selective_repeat(Some(selective_window(plan, profile)));
    }
}

/// Where a run's frames go: a writer onto a capture file (see [`run_plan_with`]).
type PcapSink = Box<dyn std::io::Write>;

fn new_world(
    plan: &Plan,
    host: &BTreeMap<String, u64>,
    pcap: Option<PcapSink>,
    trace: bool,
    frames: bool,
) -> Result<World, RunError> {
    let topo = plan.topology()?;
    let mut profile = plan.host_profile();
    profile
        .apply_overrides(host)
        .map_err(|e| RunError::HostProfile(e.to_string()))?;
    let mut w = World::new(&topo, plan.fabric_config(), profile, plan.nic_profile())?;
    configure(&mut w, plan, &profile);
    // The host stages the report reads: counted, and kept only for the setup and the first
    // message (stagelog.rs), so memory does not grow with the bytes a run moves.
    w.set_tracer(Tracer::new(if trace {
        StageLog::with_everything(super::MAX_TRACE_RECORDS)
    } else {
        StageLog::default()
    }));
    if trace {
        // The whole run's fabric events (the ladder reads its window from them too).
        w.fabric_mut()
            .set_tracer(Tracer::new(FirstObserver::new(super::MAX_TRACE_RECORDS)));
    } else if frames {
        // The packet view's inputs: the fabric's records and the frames hosts send, from
        // the start (both bounded: packets.rs).
        w.fabric_mut().set_tracer(Tracer::new(FirstObserver::new(
            super::packets::RECORDS_KEPT,
        )));
    }
    if frames {
        w.log_frames();
    }
    if let Some(out) = pcap {
        w.capture_pcap(out)
            .map_err(|e| RunError::Pcap(e.to_string()))?;
    }
    Ok(w)
}

/// The socket options a plan's `[tcp]` table chooses (the rest as Linux defaults them).
pub(crate) fn tcp_options(plan: &Plan) -> TcpOptions {
    TcpOptions {
        config: plan.tcp_config(),
        tso: plan.tcp.tso,
        gro: plan.tcp.gro,
        busy_poll: plan.tcp.busy_poll,
        coalesce_frames: plan.tcp.rx_frames,
        coalesce_usecs: SimDuration::from_us(plan.tcp.rx_usecs),
        ..TcpOptions::default()
    }
}

fn run_tcp(
    plan: &Plan,
    host: &BTreeMap<String, u64>,
    pcap: Option<PcapSink>,
    trace: Option<super::TraceSink>,
    frames: Option<super::packets::ViewSink>,
    fabric: Option<FabricSink>,
) -> Result<PathReport, RunError> {
    let mut w = new_world(plan, host, pcap, trace.is_some(), frames.is_some())?;
    let opts = tcp_options(plan);
    let setup_start = w.now();
    let (sa, sb) = w.tcp_connect(0, 1, &opts)?;
    let setup_end = w.now();
    settle(&mut w)?;
    let before = snap(&w);
    stage_log(&mut w).data_path_begins(before.at);
    ladder_from_here(&mut w, plan);
    fabric_view_from_here(&mut w, plan, fabric.is_some())?;
    let len = plan.workload.message_bytes as usize;
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let mut m = Measured {
        outcome: Outcome::Success,
        delivered: 0,
        first: None,
        retransmitted_bytes: 0,
        setup_start,
        setup_end,
        trace: trace.clone(),
        frames: frames.clone(),
        fabric: fabric.clone(),
        attempt: None,
    };
    if let Some(d) = plan.stream_duration() {
        // A stream's report draws no message: nothing of the data path is kept.
        stage_log(&mut w).first_message_over(before.at);
        let (bytes, thr, failed) = stream::tcp(&mut w, sa, sb, plan, d)?;
        m.delivered = bytes / plan.workload.message_bytes.max(1);
        if let Some(o) = failed {
            m.outcome = o;
        }
        let (recovery, resent) = tcp_recovery(&w, sa, sb);
        m.retransmitted_bytes = resent;
        let labels = ("read() returned the data", "write() returned");
        let mut r = finish(
            &mut w,
            plan,
            "tcp",
            "write() / read() stream".to_string(),
            m,
            &before,
            labels,
        )?;
        r.throughput = Some(thr);
        r.recovery = Some(recovery);
        r.cross_traffic = stream::cross_traffic_report(&w, plan);
        return Ok(r);
    }
    // The message is generated as the socket takes it and checked as it is read, a piece at
    // a time (PatternGen), so the runner holds at most a socket buffer's worth of it: what a
    // run holds grows with what is in flight, not with the message. Each write offers what
    // the socket can take and each read asks for what is readable, exactly the amounts a
    // whole-message buffer would give, so the calls (and the results) are the same.
    let (mut tx_buf, mut rx_buf, mut expect) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..plan.workload.messages {
        let mut tx = PatternGen::new(plan.seed ^ (i + 1));
        let mut rx = tx.clone();
        // Small messages: generated once, sent from and checked against the whole.
        let whole = (len as u64 <= WHOLE_LEN).then(|| pattern(plan.seed ^ (i + 1), len));
        tx_buf.clear();
        let mut tx_off = 0usize;
        let mut corrupt = false;
        let t0 = w.now().max(w.app_ready(0));
        if t0 > w.now() {
            w.run_until(t0, &budget)?;
        }
        let deadline = t0 + MESSAGE_DEADLINE;
        let (mut sent, mut got) = (0usize, 0usize);
        let mut blocked = false;
        let mut write_done = t0;
        loop {
            let now = w.now();
            if sent < len && now >= w.app_ready(0) && w.tcp_writable(sa) > 0 {
                let want = (len - sent).min(w.tcp_writable(sa));
                if let Some(m) = &whole {
                    sent += w.tcp_write(0, sa, &m[sent..sent + want]);
                    if sent == len {
                        write_done = w.app_ready(0);
                    }
                    continue;
                }
                if tx_buf.len() - tx_off < want {
                    tx_buf.drain(..tx_off);
                    tx_off = 0;
                    let at = tx_buf.len();
                    tx_buf.resize(want, 0);
                    tx.fill(&mut tx_buf[at..]);
                }
                let n = w.tcp_write(0, sa, &tx_buf[tx_off..tx_off + want]);
                tx_off += n;
                sent += n;
                if sent == len {
                    write_done = w.app_ready(0);
                }
                continue;
            }
            if now >= w.tcp_ready_at(sb) && (!blocked || w.tcp_bytes_readable(sb) > 0) {
                let ask = (len - got).min(w.tcp_bytes_readable(sb));
                if rx_buf.len() < ask {
                    rx_buf.resize(ask, 0);
                    expect.resize(ask, 0);
                }
                let n = w.tcp_read(1, sb, &mut rx_buf[..ask]);
                blocked = n == 0;
                corrupt |= match &whole {
                    Some(m) => rx_buf[..n] != m[got..got + n],
                    None => {
                        rx.fill(&mut expect[..n]);
                        rx_buf[..n] != expect[..n]
                    }
                };
                got += n;
                if got == len {
                    break;
                }
                continue;
            }
            let mut next = w.next_event_at().unwrap_or(SimTime::MAX);
            for t in [w.app_ready(0), w.tcp_ready_at(sb)] {
                if t > now {
                    next = next.min(t);
                }
            }
            if next == SimTime::MAX || next > deadline {
                m.outcome = Outcome::Failed {
                    verb: "read".to_string(),
                    code: "no data".to_string(),
                    at: "host 1 (receiver)".to_string(),
                    why: format!(
                        "message {i}: {got} of {len} bytes arrived before the run stalled"
                    ),
                };
                break;
            }
            w.run_until(next.max(now + SimDuration::from_ps(1)), &budget)?;
        }
        if got < len {
            break;
        }
        if corrupt {
            m.outcome = Outcome::Failed {
                verb: "read".to_string(),
                code: "corrupt".to_string(),
                at: "host 1 (receiver)".to_string(),
                why: format!("message {i}: the bytes read differ from the bytes written"),
            };
            break;
        }
        m.delivered += 1;
        if m.first.is_none() {
            m.first = Some((t0, w.app_ready(1), None, write_done));
            let end = w.app_ready(1).max(write_done);
            stage_log(&mut w).first_message_over(end);
        }
    }
    let (recovery, resent) = tcp_recovery(&w, sa, sb);
    m.retransmitted_bytes = resent;
    let mut r = finish(
        &mut w,
        plan,
        "tcp",
        "write() / blocking read()".to_string(),
        m,
        &before,
        ("read() returned the data", "write() returned"),
    )?;
    r.recovery = Some(recovery);
    Ok(r)
}

/// Sets up an RC QP pair, stopping at `plan.rdma.qp_state`; returns the endpoints and, per
/// host, (buffer address, lkey, rkey).
type RdmaSetup = ((Endpoint, Endpoint), [(u64, u32, u32); 2]);

/// `channel`: host 1's CQ reports to this completion channel (`rdma.completion = "event"`).
/// The world's one bring-up ([`World::connect_rc_with`]) with the lesson's choices: a message
/// buffer per host, registered or not, and the QP state to stop at.
fn rdma_setup(
    w: &mut World,
    plan: &Plan,
    channel: Option<verbs::types::ChannelHandle>,
) -> Result<RdmaSetup, Outcome> {
    let how = Bringup {
        opts: RcOptions {
            mtu: plan.rdma_mtu(),
            timeout: plan.rdma.timeout,
            retry_cnt: plan.rdma.retry_cnt,
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            ..RcOptions::default()
        },
        channels: [None, channel],
        stop_at: plan.qp_state(),
        buffer: Some(BufferSpec {
            len: plan.workload.message_bytes,
            seed: plan.seed,
            register: plan.rdma.memory_registered,
        }),
    };
    let c = w.connect_rc_with(0, 1, &how).map_err(|e| {
        let (code, at) = match (&e.source, e.step) {
            (_, ConnectStep::Exchange) => ("lost".to_string(), "hosts 0 and 1".to_string()),
            (WorldError::Verbs(v), _) => (format!("{:?}", v.errno()), format!("host {}", e.host)),
            (_, ConnectStep::Malloc) => ("ENOMEM".to_string(), format!("host {}", e.host)),
            _ => ("failed".to_string(), format!("host {}", e.host)),
        };
        Outcome::Failed {
            verb: e.step.verb().to_string(),
            code,
            at,
            why: e.source.to_string(),
        }
    })?;
    let buf = |b: HostBuffer| (b.va, b.lkey, b.rkey);
    Ok((c.ends, [buf(c.bufs[0]), buf(c.bufs[1])]))
}

fn cq_ready(w: &World, e: &Endpoint) -> bool {
    w.host(e.host).verbs.cq(e.cq).is_some_and(|c| !c.is_empty())
}

fn run_rdma(
    plan: &Plan,
    host: &BTreeMap<String, u64>,
    pcap: Option<PcapSink>,
    trace: Option<super::TraceSink>,
    frames: Option<super::packets::ViewSink>,
    fabric: Option<FabricSink>,
) -> Result<PathReport, RunError> {
    let mut w = new_world(plan, host, pcap, trace.is_some(), frames.is_some())?;
    let op = plan.rdma.operation;
    let op_name = match op {
        Operation::Write => "RDMA WRITE",
        Operation::Read => "RDMA READ",
        Operation::Send => "SEND / RECV",
    };
    let setup_start = w.now();
    let mut m = Measured {
        outcome: Outcome::Success,
        delivered: 0,
        first: None,
        retransmitted_bytes: 0,
        setup_start,
        setup_end: setup_start,
        trace: trace.clone(),
        frames: frames.clone(),
        fabric: fabric.clone(),
        attempt: None,
    };
    // Both hosts set up side by side, as two applications would.
    // Event completions: the receiving application sleeps on a completion channel.
    let channel = (plan.rdma.completion == scenario::Completion::Event)
        .then(|| w.verbs(1).create_comp_channel());
    // Each host's message buffer is real memory up to Memory::MAX_REAL_LEN: a run whose
    // budget cannot hold them stops before allocating them.
    if plan.workload.message_bytes <= verbs::Memory::MAX_REAL_LEN {
        w.reserve(2 * plan.workload.message_bytes)?;
    }
    let setup = rdma_setup(&mut w, plan, channel);
    m.setup_end = w.now();
    settle(&mut w)?;
    let before = snap(&w);
    stage_log(&mut w).data_path_begins(before.at);
    ladder_from_here(&mut w, plan);
    fabric_view_from_here(&mut w, plan, fabric.is_some())?;
    let labels = match op {
        Operation::Write => ("data placed in remote memory", "local CQE written"),
        Operation::Send if channel.is_some() => (
            "the woken receiver got its CQ event (interrupt + wake-up)",
            "local CQE written",
        ),
        Operation::Send => ("receive CQE in the remote CQ", "local CQE written"),
        Operation::Read => ("READ data placed in local memory", "local CQE written"),
    };
    let ((a, b), bufs) = match setup {
        Ok(s) => s,
        Err(o) => {
            m.outcome = o;
            return finish(
                &mut w,
                plan,
                "rdma",
                op_name.to_string(),
                m,
                &before,
                labels,
            );
        }
    };
    if let Some(d) = plan.stream_duration() {
        // A stream's report draws no message: nothing of the data path is kept.
        stage_log(&mut w).first_message_over(before.at);
        // Every streamed WRITE carries this message; the stream checks that it arrives whole.
        let len = plan.workload.message_bytes;
        let expected = if len <= verbs::Memory::MAX_REAL_LEN {
            let msg = pattern(plan.seed ^ 1, len as usize);
            let written = w.verbs(0).memory_mut().write(bufs[0].0, &msg);
            // The buffer was allocated with this length by rdma_setup.
            debug_assert!(
                written.is_ok(),
                "the stream's source buffer holds one message"
            );
            msg
        } else {
            Vec::new()
        };
        let (bytes, thr, failed) = stream::rdma(
            &mut w,
            a,
            ((bufs[0].0, bufs[0].1), (bufs[1].0, bufs[1].2)),
            &expected,
            plan,
            d,
        )?;
        m.delivered = bytes / plan.workload.message_bytes.max(1);
        if let Some(o) = failed {
            m.outcome = o;
        }
        let (recovery, resent) = rdma_recovery(&w, a, b);
        m.retransmitted_bytes = resent;
        let mut r = finish(
            &mut w,
            plan,
            "rdma",
            format!("{op_name} stream"),
            m,
            &before,
            labels,
        )?;
        r.throughput = Some(thr);
        r.recovery = Some(recovery);
        r.cross_traffic = stream::cross_traffic_report(&w, plan);
        return Ok(r);
    }
    let len = plan.workload.message_bytes;
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let synthetic = len > verbs::Memory::MAX_REAL_LEN;
    let mut first_t0 = None;
    for i in 0..plan.workload.messages {
        // The source of the bytes: host 0 for WRITE/SEND, host 1 for READ. The message is
        // written into it a piece at a time (and checked so at the destination), so the
        // runner never holds a second copy of a large message.
        let seed = plan.seed ^ (i + 1);
        let src_host = if op == Operation::Read { 1 } else { 0 };
        // A message up to WHOLE_LEN is generated once and kept for the check; a larger one is
        // regenerated for it a piece at a time instead of being held twice.
        let msg = (!synthetic && len <= WHOLE_LEN).then(|| pattern(seed, len as usize));
        let written = match &msg {
            Some(m) => w
                .verbs(src_host)
                .memory_mut()
                .write(bufs[src_host as usize].0, m),
            None if synthetic => Ok(()),
            None => write_pattern(&mut w, src_host, bufs[src_host as usize].0, seed, len),
        };
        if let Err(e) = written {
            m.outcome = Outcome::Failed {
                verb: "memory write".to_string(),
                code: "EFAULT".to_string(),
                at: format!("host {src_host}"),
                why: e.to_string(),
            };
            break;
        }
        if op == Operation::Send {
            let rwr = RecvWr::new(
                i,
                vec![Sge {
                    addr: bufs[1].0,
                    length: len as u32,
                    lkey: bufs[1].1,
                }],
            );
            if let Err(e) = w.post_recv(1, b.qpn, &[rwr]) {
                m.outcome = post_failed("ibv_post_recv", 1, &e, &w, b);
                break;
            }
        }
        let t0 = w.now().max(w.app_ready(0));
        first_t0.get_or_insert(t0);
        if t0 > w.now() {
            w.run_until(t0, &budget)?;
        }
        let sge = vec![Sge {
            addr: bufs[0].0,
            length: len as u32,
            lkey: bufs[0].1,
        }];
        let wr = match op {
            Operation::Write => SendWr::write(i, sge, bufs[1].0, bufs[1].2),
            Operation::Read => SendWr::read(i, sge, bufs[1].0, bufs[1].2),
            Operation::Send => SendWr::send(i, sge),
        }
        .signaled();
        if let Err(e) = w.post_send(0, a.qpn, &[wr]) {
            m.outcome = post_failed("ibv_post_send", 0, &e, &w, a);
            break;
        }
        let deadline = t0 + MESSAGE_DEADLINE;
        // SEND: the receive completion first (the remote application's view).
        let mut remote_cqe = None;
        if op == Operation::Send {
            if channel.is_some() {
                // Arm, sleep; the CQE raises an interrupt, the interrupt wakes the thread.
                w.req_notify_cq(1, b.cq, false)
                    .map_err(crate::world::WorldError::from)?;
            }
            w.run_until_cond(deadline, &budget, |w| cq_ready(w, &b))?;
            if let Some(ch) = channel {
                // Blocking ibv_get_cq_event: returns when the wake-up has run.
                if let Some(t) = w.cq_event_at(1, ch).filter(|t| *t > w.now()) {
                    w.run_until(t, &budget)?;
                }
                let woke = w
                    .get_cq_event(1, ch)
                    .map_err(crate::world::WorldError::from)?
                    .is_some();
                if woke {
                    w.verbs(1)
                        .ack_cq_events(b.cq, 1)
                        .map_err(crate::world::WorldError::from)?;
                }
            }
            if cq_ready(&w, &b) {
                remote_cqe = Some(w.now());
                let wcs = w
                    .poll_cq(1, b.cq, 16)
                    .map_err(crate::world::WorldError::from)?;
                if let Some(wc) = wcs.iter().find(|c| c.status != WcStatus::Success) {
                    m.outcome = wc_failed(wc.status, 1, "receive", &w, b);
                    break;
                }
            }
        }
        w.run_until_cond(deadline, &budget, |w| cq_ready(w, &a))?;
        if !cq_ready(&w, &a) {
            let state = w
                .host(0)
                .verbs
                .qp_state(a.qpn)
                .map(|s| s.name().to_string())
                .unwrap_or_default();
            m.outcome = Outcome::Failed {
                verb: "ibv_poll_cq".to_string(),
                code: "no completion".to_string(),
                at: format!("host 0, QP {}", a.qpn.get()),
                why: format!(
                    "ibv_post_send returned 0 but no completion arrived within {} ms of simulated time; the QP is in {state}",
                    MESSAGE_DEADLINE.as_ns() / 1_000_000
                ),
            };
            break;
        }
        let local_cqe = w.now();
        let wcs = w
            .poll_cq(0, a.cq, 16)
            .map_err(crate::world::WorldError::from)?;
        if let Some(wc) = wcs.iter().find(|c| c.status != WcStatus::Success) {
            m.outcome = wc_failed(wc.status, 0, "send", &w, a);
            break;
        }
        // The bytes arrived intact: compared directly, or for a synthetic buffer (over
        // MAX_REAL_LEN) by the memory's own position check of every placed byte.
        let dst_host = if op == Operation::Read { 0 } else { 1 };
        let dst_va = bufs[dst_host as usize].0;
        let intact = if synthetic {
            w.verbs(dst_host)
                .memory()
                .synthetic_stats(dst_va)
                .is_some_and(|st| st.mismatched_bytes == 0)
        } else if let Some(m) = &msg {
            w.host(dst_host).verbs.memory().holds(dst_va, m)
        } else {
            holds_pattern(&w, dst_host, dst_va, seed, len)
        };
        if !intact {
            m.outcome = Outcome::Failed {
                verb: "memory check".to_string(),
                code: "corrupt".to_string(),
                at: format!("host {dst_host}"),
                why: format!("message {i}: the destination buffer differs from the source"),
            };
            break;
        }
        let remote_cqe = match (op, remote_cqe) {
            (Operation::Send, None) => {
                m.outcome = Outcome::Failed {
                    verb: "ibv_poll_cq".to_string(),
                    code: "no completion".to_string(),
                    at: format!("host 1, QP {}", b.qpn.get()),
                    why: format!(
                        "message {i}: the send completed but no receive completion reached host 1"
                    ),
                };
                break;
            }
            (_, t) => t.unwrap_or(local_cqe),
        };
        m.delivered += 1;
        if m.first.is_none() {
            m.first = Some((t0, remote_cqe, None, local_cqe));
            stage_log(&mut w).first_message_over(remote_cqe.max(local_cqe));
        }
    }
    if m.first.is_none() {
        m.attempt = first_t0.map(|t| (t, w.now()));
    }
    let (recovery, resent) = rdma_recovery(&w, a, b);
    m.retransmitted_bytes = resent;
    let mut r = finish(
        &mut w,
        plan,
        "rdma",
        op_name.to_string(),
        m,
        &before,
        labels,
    )?;
    r.recovery = Some(recovery);
    Ok(r)
}

/// TCP's loss recovery and retransmitted bytes, both directions added.
fn tcp_recovery(
    w: &World,
    sa: crate::world::SocketId,
    sb: crate::world::SocketId,
) -> (Recovery, u64) {
    let (x, y) = (
        w.tcp_connection(sa).counters(),
        w.tcp_connection(sb).counters(),
    );
    let r = Recovery {
        loss_events: x.fast_recoveries + y.fast_recoveries,
        timeouts: x.rtos + y.rtos,
        tail_probes: x.tlp_probes + y.tlp_probes,
        mean_inflight_packets: None,
        selective: false,
        resent_packets: 0,
        dcqcn: None,
    };
    (r, x.retransmitted_bytes + y.retransmitted_bytes)
}

/// The RC requesters' loss recovery: sequence NAKs, ACK timeouts, and the mean in-flight
/// window (what each go-back-N recovery resends); and the bytes resent.
fn rdma_recovery(w: &World, a: Endpoint, b: Endpoint) -> (Recovery, u64) {
    let cs: Vec<_> = [(0, a), (1, b)]
        .iter()
        .filter_map(|(h, e)| w.host(*h).requester_counters(e.qpn))
        .collect();
    let sum = |f: &dyn Fn(&transport::roce::requester::RequesterCounters) -> u64| {
        cs.iter().map(f).sum::<u64>()
    };
    let first = sum(&|c| c.first_transmissions);
    let r = Recovery {
        loss_events: sum(&|c| c.sequence_naks),
        timeouts: sum(&|c| c.timeouts),
        tail_probes: 0,
        mean_inflight_packets: (first > 0).then(|| sum(&|c| c.inflight_sum) as f64 / first as f64),
        selective: w.selective_repeat(),
        resent_packets: sum(&|c| c.packets_retransmitted),
        dcqcn: dcqcn_summary(w, a, b),
    };
    (r, sum(&|c| c.bytes_retransmitted))
}

/// What DCQCN did on the path's two QPs, if it ran.
fn dcqcn_summary(w: &World, a: Endpoint, b: Endpoint) -> Option<super::DcqcnSummary> {
    let (rate, _, _, rp_a) = w.dcqcn_state(a.host, a.qpn)?;
    let rp_b = w
        .dcqcn_state(b.host, b.qpn)
        .map(|x| x.3)
        .unwrap_or_default();
    let np = |e: Endpoint| w.np_counters(e.host, e.qpn).unwrap_or((0, 0));
    let (na, nb) = (np(a), np(b));
    Some(super::DcqcnSummary {
        profile: w.dcqcn_params()?.name,
        marked: na.0 + nb.0,
        cnps_sent: na.1 + nb.1,
        cnps_handled: rp_a.cnps + rp_b.cnps,
        cuts: rp_a.cuts + rp_b.cuts,
        final_rate_gbps: rate as f64 / 1e6,
    })
}

fn post_failed(verb: &str, h: u32, e: &verbs::PostError, w: &World, ep: Endpoint) -> Outcome {
    let state = w
        .host(h)
        .verbs
        .qp_state(ep.qpn)
        .map(|s| s.name().to_string())
        .unwrap_or_default();
    Outcome::Failed {
        verb: verb.to_string(),
        code: format!("{:?}", e.errno),
        at: format!("host {h}, QP {} (in {state})", ep.qpn.get()),
        why: e.to_string(),
    }
}

fn wc_failed(status: WcStatus, h: u32, queue: &str, w: &World, ep: Endpoint) -> Outcome {
    let state = w
        .host(h)
        .verbs
        .qp_state(ep.qpn)
        .map(|s| s.name().to_string())
        .unwrap_or_default();
    Outcome::Failed {
        verb: "ibv_poll_cq".to_string(),
        code: format!(
            "{} ({}, {})",
            status.const_name(),
            status.value(),
            status.as_str()
        ),
        at: format!(
            "host {h}, {queue} completion of QP {} (now in {state})",
            ep.qpn.get()
        ),
        why: format!("the work request completed with status \"{status}\""),
    }
}

fn ns(d: SimDuration) -> f64 {
    d.as_ps() as f64 / 1000.0
}

/// The box a stage lights on the path drawing (see [`Interval::lane`]).
fn lane(r: &Rec) -> &'static str {
    match r.unit {
        ExecUnit::Cpu(_) if r.stage.domain() == Domain::User || r.stage.is_syscall_edge() => "app",
        ExecUnit::Cpu(_) => "kernel",
        ExecUnit::Nic | ExecUnit::Pcie => "nic",
    }
}

fn frame_kind(c: PacketClass) -> &'static str {
    match c {
        PacketClass::RoceData => "RoCE data",
        PacketClass::RoceAck => "RoCE ACK",
        PacketClass::RoceCnp => "CNP",
        PacketClass::Tcp => "TCP",
        PacketClass::Pause => "PFC",
        PacketClass::Raw => "raw",
    }
}

/// Joins the runs of one stage in one box that overlap or touch (a pipelined DMA per frame,
/// the switch busy with back-to-back frames) into one interval counting them: the box is lit
/// over exactly the same time, and a 1 MiB message draws in hundreds of intervals, not
/// thousands.
fn merge_runs(mut v: Vec<Interval>) -> Vec<Interval> {
    v.sort_by(|a, b| {
        (a.side, a.lane, &a.stage)
            .cmp(&(b.side, b.lane, &b.stage))
            .then(a.start_ns.total_cmp(&b.start_ns))
    });
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for i in v {
        match out.last_mut() {
            Some(o)
                if o.side == i.side
                    && o.lane == i.lane
                    && o.stage == i.stage
                    && i.start_ns <= o.end_ns =>
            {
                o.end_ns = o.end_ns.max(i.end_ns);
                o.runs += i.runs;
            }
            _ => out.push(i),
        }
    }
    out
}

/// The first message's intervals by box and its frames hop by hop, from the stage records
/// `first` and the packet records of `trace` between `t0` and `end`.
fn drawing(
    trace: &[(SimTime, TraceRecord)],
    first: &[&Rec],
    nodes: [NodeId; 2],
    (t0, end): (SimTime, SimTime),
    link_gbps: u64,
    path: &str,
) -> Drawing {
    // The path's own frames: the RDMA world also carries the out-of-band exchange's TCP
    // connection (setup), whose last segments may still be on the wire.
    let ours = |c: PacketClass| match path {
        "tcp" => c == PacketClass::Tcp,
        _ => c != PacketClass::Tcp && c != PacketClass::Raw,
    };
    let rel = |t: SimTime| ns(t.saturating_duration_since(t0));
    let mut timeline: Vec<Interval> = first
        .iter()
        .map(|r| Interval {
            side: if r.host == nodes[0] {
                "local"
            } else {
                "remote"
            },
            lane: lane(r),
            stage: std::borrow::Cow::Borrowed(r.stage.name()),
            start_ns: rel(r.start),
            end_ns: rel(r.end),
            runs: 1,
        })
        .collect();
    // Frames: follow each packet uid through Dequeued (at its sender host), Arrived/Dequeued
    // at the switch, Arrived at the far host.
    let mut by_uid: BTreeMap<u64, FrameHops> = BTreeMap::new();
    for (t, r) in trace {
        if *t < t0 || *t > end {
            continue;
        }
        let (node, pkt, stage) = match *r {
            TraceRecord::Packet {
                node, pkt, stage, ..
            } => (node, pkt, Some(stage)),
            TraceRecord::Dropped { node, pkt, .. } => (node, pkt, None),
            _ => continue,
        };
        if !ours(pkt.class) {
            continue;
        }
        let at_host = nodes.contains(&node);
        let f = by_uid.entry(pkt.uid).or_insert_with(|| FrameHops {
            kind: frame_kind(pkt.class),
            forward: node == nodes[0],
            bytes: pkt.bytes,
            sent_ns: rel(*t),
            at_switch_ns: None,
            left_switch_ns: None,
            arrived_ns: None,
            dropped: false,
        });
        match (stage, at_host) {
            (None, _) => f.dropped = true,
            (Some(PacketStage::Dequeued), true) if f.at_switch_ns.is_none() => {
                f.sent_ns = rel(*t);
                f.forward = node == nodes[0];
            }
            (Some(PacketStage::Arrived), false) => f.at_switch_ns = Some(rel(*t)),
            (Some(PacketStage::Dequeued), false) => f.left_switch_ns = Some(rel(*t)),
            (Some(PacketStage::Arrived), true) => f.arrived_ns = Some(rel(*t)),
            _ => {}
        }
    }
    // The switch holds a frame from its first bit in to its last bit out: the records mark
    // the last bit's arrival and the first bit's departure, so widen by one serialization
    // time (frame + preamble, SFD, FCS and inter-frame gap) on each side.
    for f in by_uid.values() {
        if let (Some(a), Some(b)) = (f.at_switch_ns, f.left_switch_ns) {
            let ser = (f.bytes as f64 + 24.0) * 8.0 / link_gbps as f64;
            timeline.push(Interval {
                side: "fabric",
                lane: "switch",
                stage: std::borrow::Cow::Owned(format!("{} frame", f.kind)),
                start_ns: (a - ser).max(f.sent_ns),
                end_ns: b + ser,
                runs: 1,
            });
        }
    }
    let mut timeline = merge_runs(timeline);
    timeline.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
    // A huge first message (hundreds of MiB at a small MTU) has hundreds of thousands of
    // intervals; the drawing shows the first ones and says how many more there were.
    let timeline_truncated = timeline.len().saturating_sub(MAX_TIMELINE_INTERVALS) as u64;
    timeline.truncate(MAX_TIMELINE_INTERVALS);
    let frames_truncated = by_uid.len() > MAX_LADDER_FRAMES;
    let frames = by_uid.into_values().take(MAX_LADDER_FRAMES).collect();
    Drawing {
        timeline,
        timeline_truncated,
        frames,
        frames_truncated,
    }
}

/// The first message's drawing: its intervals (at most [`MAX_TIMELINE_INTERVALS`]) and its
/// frames (at most [`MAX_LADDER_FRAMES`]), with how many of each were left out.
struct Drawing {
    timeline: Vec<Interval>,
    timeline_truncated: u64,
    frames: Vec<FrameHops>,
    frames_truncated: bool,
}

/// Packet records kept for the first message's ladder: enough for a 1 MiB message's frames
/// and ACKs several times over, a bound whatever the workload.
const LADDER_RECORDS: usize = 16_384;

/// The first sample window of a run's fabric view: a stream's duration over
/// [`RUN_SAMPLES`](crate::labs::fabric_view::RUN_SAMPLES); a count-mode run, whose length is
/// not known, 100 ns (the view doubles it as the run goes on).
fn fabric_first_window(plan: &Plan) -> SimDuration {
    match plan.stream_duration() {
        Some(d) => SimDuration::from_ps(
            (d.as_ps() / crate::labs::fabric_view::RUN_SAMPLES as u64).max(1_000),
        ),
        None => SimDuration::from_ns(100),
    }
}

/// From here (the data path's start, where the report's counts start) the fabric view, when
/// one is asked for, records every link.
fn fabric_view_from_here(w: &mut World, plan: &Plan, on: bool) -> Result<(), RunError> {
    if on {
        let topo = plan.topology()?;
        w.watch_fabric(
            &topo,
            fabric_first_window(plan),
            usize::from(plan.lossless.priority),
        );
    }
    Ok(())
}

/// From here (the data path's start) the fabric's packet records feed the ladder; count
/// mode only (a stream has no "first message" to draw).
fn ladder_from_here(w: &mut World, plan: &Plan) {
    if plan.stream_duration().is_none() && !w.fabric_mut().tracer_mut().enabled() {
        w.fabric_mut()
            .set_tracer(Tracer::new(FirstObserver::new(LADDER_RECORDS)));
    }
}

fn unit_name(u: ExecUnit) -> &'static str {
    match u {
        ExecUnit::Cpu(_) => "cpu",
        ExecUnit::Nic => "nic",
        ExecUnit::Pcie => "pcie",
    }
}

fn stage_counts(stages: &[(Stage, StageTotal)]) -> Vec<StageCount> {
    stages
        .iter()
        .map(|&(stage, t)| StageCount {
            stage,
            count: t.count,
            busy_ns: ns(t.busy),
            kernel: stage.domain() == Domain::Kernel,
        })
        .collect()
}

/// A runner's pieces of a message: big enough to copy fast, small beside any buffer.
const PIECE: usize = 64 << 10;

/// The largest message a runner generates whole (and keeps for its check): above it, a piece
/// at a time, so a run of 1 GiB messages does not hold two more copies of each.
const WHOLE_LEN: u64 = 16 << 20;

/// Writes [`crate::pattern`]`(seed, len)` into host `h`'s memory at `va`, a piece at a time.
fn write_pattern(
    w: &mut World,
    h: u32,
    va: u64,
    seed: u64,
    len: u64,
) -> Result<(), verbs::memory::MemoryError> {
    let mut g = PatternGen::new(seed);
    let mut piece = vec![0u8; PIECE.min(len as usize)];
    let mut off = 0u64;
    while off < len {
        let n = PIECE.min((len - off) as usize);
        g.fill(&mut piece[..n]);
        w.verbs(h).memory_mut().write(va + off, &piece[..n])?;
        off += n as u64;
    }
    Ok(())
}

/// Whether host `h`'s memory at `va` holds [`crate::pattern`]`(seed, len)`, compared a piece
/// at a time.
fn holds_pattern(w: &World, h: u32, va: u64, seed: u64, len: u64) -> bool {
    let mut g = PatternGen::new(seed);
    let mut want = vec![0u8; PIECE.min(len as usize)];
    let mut off = 0u64;
    while off < len {
        let n = PIECE.min((len - off) as usize);
        g.fill(&mut want[..n]);
        if !w.host(h).verbs.memory().holds(va + off, &want[..n]) {
            return false;
        }
        off += n as u64;
    }
    true
}

/// The report's stage log attached to `w` (new_world attaches one to every world it builds).
fn stage_log(w: &mut World) -> &mut StageLog {
    w.tracer_mut()
        .get_mut::<StageLog>()
        .expect("new_world attaches a StageLog")
}

#[allow(clippy::too_many_arguments)]
fn finish(
    w: &mut World,
    plan: &Plan,
    path: &'static str,
    operation: String,
    m: Measured,
    before: &Snap,
    labels: (&'static str, &'static str),
) -> Result<PathReport, RunError> {
    w.finish_pcap().map_err(|e| RunError::Pcap(e.to_string()))?;
    // The view's last sample now, when the report's own counts are read (below).
    if let (Some(sink), Some(v)) = (&m.fabric, w.finish_fabric_view()) {
        sink.lock()
            .expect("no panic holds the sink")
            .push((path, v));
    }
    let nodes = [w.host(0).node, w.host(1).node];
    let mut log = w
        .tracer_mut()
        .take::<StageLog>()
        .map(|l| *l)
        .unwrap_or_default();
    let packets = w
        .fabric_mut()
        .tracer_mut()
        .take::<FirstObserver>()
        .map(|t| t.records)
        .unwrap_or_default();
    if let Some(sink) = &m.frames {
        let (log, skipped) = w.take_frame_log();
        let v = super::packets::view(path, &log, &packets, nodes, skipped > 0);
        sink.lock().expect("no panic holds the sink").push(v);
    }
    if let Some(sink) = &m.trace {
        // Host stages and fabric events of the whole run, merged in time order (stable: a
        // host record before a fabric record at the same instant).
        let mut all: Vec<(&'static str, SimTime, TraceRecord)> = log
            .take_everything()
            .into_iter()
            .chain(packets.iter().cloned())
            .take(super::MAX_TRACE_RECORDS)
            .map(|(t, r)| (path, t, r))
            .collect();
        all.sort_by_key(|x| x.1);
        sink.lock().expect("no panic holds the sink").extend(all);
    }
    let recs: &[Rec] = log.kept();
    let is_setup = |r: &Rec| log.is_setup(r);
    // Every CPU stage of a host in a phase, counted over the whole run.
    let cpu = |host: NodeId, phase: Phase| -> Vec<(Stage, StageTotal)> {
        log.cpu_stages(host, phase).collect()
    };
    let after = snap(w);
    let delivered = m.delivered.max(1) as f64;
    let bytes = m.delivered * plan.workload.message_bytes;
    // Data path.
    let dl = cpu(nodes[0], Phase::Data);
    let dr = cpu(nodes[1], Phase::Data);
    let ioctls = |v: &[(Stage, StageTotal)]| {
        v.iter()
            .filter(|(stage, _)| stage.is_ioctl())
            .map(|(_, t)| t.count)
            .sum::<u64>()
    };
    let kernel = |v: &[(Stage, StageTotal)]| v.iter().any(|(s, _)| s.domain() == Domain::Kernel);
    let sum = |a: [u64; 2], b: [u64; 2]| (a[0] - b[0]) + (a[1] - b[1]);
    let data_path = Costs {
        copies: sum(after.copies, before.copies),
        copied_bytes: sum(after.copied, before.copied),
        syscalls: sum(after.syscalls, before.syscalls) + ioctls(&dl) + ioctls(&dr),
        kernel_local: kernel(&dl),
        kernel_remote: kernel(&dr),
        cpu_stages_local: stage_counts(&dl),
        cpu_stages_remote: stage_counts(&dr),
        cpu_ns_local: ns(after.cpu_data[0] - before.cpu_data[0]),
        cpu_ns_remote: ns(after.cpu_data[1] - before.cpu_data[1]),
        cpu_ns_per_message_local: ns(after.cpu_data[0] - before.cpu_data[0]) / delivered,
        cpu_ns_per_message_remote: ns(after.cpu_data[1] - before.cpu_data[1]) / delivered,
        duration_ns: 0.0,
    };
    // Setup.
    let sl = cpu(nodes[0], Phase::Setup);
    let sr = cpu(nodes[1], Phase::Setup);
    let socket_setup: u64 = (0..2)
        .map(|h| w.socket_stats(h).setup_syscalls.values().sum::<u64>())
        .sum();
    let setup = Costs {
        copies: before.copies[0] + before.copies[1],
        copied_bytes: before.copied[0] + before.copied[1],
        // Socket setup calls, the exchange's read()/write() (every socket call before the
        // data path began) and the verbs ioctls.
        syscalls: socket_setup
            + before.syscalls[0]
            + before.syscalls[1]
            + ioctls(&sl)
            + ioctls(&sr),
        kernel_local: kernel(&sl),
        kernel_remote: kernel(&sr),
        cpu_stages_local: stage_counts(&sl),
        cpu_stages_remote: stage_counts(&sr),
        cpu_ns_local: ns(w.host(0).cpu().account().setup + before.cpu_data[0]),
        cpu_ns_remote: ns(w.host(1).cpu().account().setup + before.cpu_data[1]),
        cpu_ns_per_message_local: 0.0,
        cpu_ns_per_message_remote: 0.0,
        duration_ns: ns(m.setup_end.saturating_duration_since(m.setup_start)),
    };
    let transport_in = if dl
        .iter()
        .chain(dr.iter())
        .any(|(stage, _)| stage.is_tcp_stack())
    {
        "kernel software"
    } else {
        "NIC hardware"
    };
    let (remote_cpu, remote_cpu_why) = participation(&data_path, delivered);
    let latency = m.first.map(|(t0, done, _, local)| {
        let end = done.max(local);
        let first: Vec<&Rec> = recs
            .iter()
            .filter(|r| !is_setup(r) && r.start >= t0 && r.start <= end)
            .collect();
        let placed = first
            .iter()
            .filter(|r| r.host == nodes[1] && r.stage == Stage::DmaWritePayload)
            .map(|r| r.end)
            .max();
        // The local CQE landed when its DMA write ended: the application (one thread here,
        // which may have been waiting on the remote first) can only notice it later.
        let local = first
            .iter()
            .filter(|r| r.host == nodes[0] && r.stage == Stage::DmaWriteCqe)
            .map(|r| r.end)
            .max()
            .map_or(local, |t| t.min(local));
        let rel = |t: SimTime| ns(t.saturating_duration_since(t0));
        let mut groups: BTreeMap<GroupKey, GroupVal> = BTreeMap::new();
        for r in &first {
            let side = if r.host == nodes[0] { 0 } else { 1 };
            let e = groups
                .entry((side, unit_name(r.unit), r.stage.name()))
                .or_insert((0, SimDuration::ZERO, r.start, r.end));
            e.0 += 1;
            e.1 += r.end.saturating_duration_since(r.start);
            e.2 = e.2.min(r.start);
            e.3 = e.3.max(r.end);
        }
        let mut breakdown: Vec<StageSpan> = groups
            .into_iter()
            .map(|((side, unit, stage), (count, busy, s, e))| StageSpan {
                side: if side == 0 { "local" } else { "remote" },
                unit,
                stage,
                count,
                busy_ns: ns(busy),
                start_ns: rel(s),
                end_ns: rel(e),
            })
            .collect();
        breakdown.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
        let Drawing {
            timeline,
            timeline_truncated,
            frames,
            frames_truncated,
        } = drawing(
            &packets,
            &first,
            nodes,
            (t0, end),
            plan.topology.link_gbps.max(1),
            path,
        );
        let delivered_at = if path == "rdma" && plan.rdma.operation == Operation::Write {
            placed.unwrap_or(done)
        } else {
            done
        };
        Latency {
            delivered_ns: rel(delivered_at),
            delivered_at: labels.0,
            placed_at_remote_ns: placed.map(rel),
            local_completion_ns: rel(local),
            local_completion_at: labels.1,
            breakdown,
            timeline,
            timeline_truncated,
            frames,
            frames_truncated,
        }
    });
    // A path whose first message never got through: what its attempt did, for the drawing.
    let failed_attempt = match (&latency, m.attempt) {
        (None, Some((t0, end))) => {
            let tried: Vec<&Rec> = recs
                .iter()
                .filter(|r| !is_setup(r) && r.start >= t0 && r.start <= end)
                .collect();
            let Drawing {
                timeline,
                timeline_truncated,
                frames,
                frames_truncated,
            } = drawing(
                &packets,
                &tried,
                nodes,
                (t0, end),
                plan.topology.link_gbps.max(1),
                path,
            );
            Some(super::FailedAttempt {
                timeline,
                timeline_truncated,
                frames,
                frames_truncated,
                gave_up_ns: ns(end.saturating_duration_since(t0)),
            })
        }
        _ => None,
    };
    let bus = |h: usize| {
        let dma = after.dma[h] - before.dma[h];
        let copied = after.copied[h] - before.copied[h];
        if bytes == 0 {
            0.0
        } else {
            (dma + 2 * copied) as f64 / bytes as f64
        }
    };
    let f = after.fabric;
    let b = before.fabric;
    let cross_drops: u64 = w
        .fabric()
        .flow_results()
        .iter()
        .map(|r| r.frames_dropped)
        .sum();
    let oversize_drops = f.drops_oversize - b.drops_oversize;
    let oversize = (oversize_drops > 0).then(|| {
        let (path_key, path_mtu_bytes) = if path == "rdma" {
            ("rdma.mtu_bytes", plan.rdma.mtu_bytes)
        } else {
            ("tcp.mtu_bytes", plan.tcp.mtu_bytes)
        };
        let (port, port_key, port_mtu, first_frame_bytes) = match after.oversize {
            Some(o) => (
                format!("host {}", o.host.0),
                "max(tcp.mtu_bytes, rdma.mtu_bytes + 96)",
                u64::from(o.mtu_bytes),
                Some(o.frame_bytes),
            ),
            None => (
                "switch".to_string(),
                "switch.mtu_bytes",
                plan.switch.mtu_bytes,
                None,
            ),
        };
        super::Oversize {
            drops: oversize_drops,
            port,
            port_key,
            port_mtu_bytes: port_mtu,
            frame_limit_bytes: port_mtu + fabric::config::L2_BYTES,
            first_frame_bytes,
            path_key,
            path_mtu_bytes,
        }
    });
    Ok(PathReport {
        path,
        operation,
        outcome: m.outcome,
        messages_delivered: m.delivered,
        bytes_delivered: bytes,
        data_path,
        setup,
        transport_in,
        remote_cpu,
        remote_cpu_why,
        latency,
        memory_bus_bytes_per_delivered_byte: Sides {
            local: bus(0),
            remote: bus(1),
        },
        retransmitted_bytes: m.retransmitted_bytes,
        // The path's own frames: cross-traffic bursts (the world's only raw flows) apart.
        drops: f.drops() - b.drops() - cross_drops,
        pfc_pauses: f.pauses_sent - b.pauses_sent,
        pfc_watchdog_drops: f.drops_watchdog - b.drops_watchdog,
        oversize,
        drawn_overflows_paused: f.congestion_draws_paused - b.congestion_draws_paused,
        throughput: None,
        recovery: None,
        cross_traffic: None,
        failed_attempt,
        ecn_marks: f.ecn_marks - b.ecn_marks,
    })
}

/// Applies the documented thresholds (module docs) to the remote's data-path CPU stages.
fn participation(c: &Costs, messages: f64) -> (Participation, String) {
    let stages = &c.cpu_stages_remote;
    if stages.is_empty() {
        return (
            Participation::None,
            "no CPU stage ran on the remote".to_string(),
        );
    }
    let per_msg = c.cpu_ns_remote / messages;
    let mut heavy = Vec::new();
    for s in stages {
        let allowed_once = s.stage.is_completion_wakeup() && (s.count as f64) <= messages;
        if s.kernel && !allowed_once {
            heavy.push(s.stage.name());
        }
    }
    if heavy.is_empty() && per_msg <= LIGHT_MAX_CPU_NS_PER_MESSAGE {
        let names: Vec<&str> = stages.iter().map(|s| s.stage.name()).collect();
        (
            Participation::Light,
            format!(
                "{} per message: {}",
                super::format_ns(per_msg),
                names.join(", ")
            ),
        )
    } else if heavy.is_empty() {
        (
            Participation::Full,
            format!(
                "{} of remote CPU per message, above the {} light threshold",
                super::format_ns(per_msg),
                super::format_ns(LIGHT_MAX_CPU_NS_PER_MESSAGE)
            ),
        )
    } else {
        (
            Participation::Full,
            format!(
                "kernel work on the remote, {} per message: {}",
                super::format_ns(per_msg),
                heavy.join(", ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21: the RDMA stream compares what landed with what was sent. A source buffer
    /// holding one wrong byte (as a NIC that placed damaged data would leave) fails the stream
    /// as corrupt; the same world with the right bytes streams intact.
    #[test]
    fn a_streamed_write_that_lands_corrupt_fails_the_stream() {
        let preset = scenario::preset("lesson5").expect("preset ⑤");
        let plan = scenario::parse_with(
            preset.toml,
            &["loss.congestion_drop=0", "workload.stream_us=1400"],
        )
        .expect("a valid plan");
        let mut w = new_world(&plan, &BTreeMap::new(), None, false, false).expect("a world");
        let ((a, _), bufs) =
            rdma_setup(&mut w, &plan, None).unwrap_or_else(|o| panic!("setup failed: {o:?}"));
        settle(&mut w).expect("settles");
        let len = plan.workload.message_bytes as usize;
        let msg = pattern(plan.seed ^ 1, len);
        let ends = ((bufs[0].0, bufs[0].1), (bufs[1].0, bufs[1].2));
        let d = SimDuration::from_us(1400);
        w.verbs(0).memory_mut().write(bufs[0].0, &msg).unwrap();
        let (bytes, _, failed) = stream::rdma(&mut w, a, ends, &msg, &plan, d).unwrap();
        assert!(failed.is_none(), "{failed:?}");
        assert!(bytes > 0);
        let mut damaged = msg.clone();
        damaged[len / 2] ^= 0x5a;
        w.verbs(0).memory_mut().write(bufs[0].0, &damaged).unwrap();
        let (_, _, failed) = stream::rdma(&mut w, a, ends, &msg, &plan, d).unwrap();
        match failed {
            Some(Outcome::Failed { code, why, .. }) => {
                assert_eq!(code, "corrupt");
                assert!(why.contains("differs from the message sent"), "{why}");
            }
            other => panic!("the damaged message was not caught: {other:?}"),
        }
    }
}
