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

mod finish;
mod rdma;
mod tcp;

use finish::*;
use rdma::*;
use tcp::*;

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
type PcapSink = Box<dyn std::io::Write + Send>;

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
