//! Runs a [`Session`] against a [`World`] and records every step.
//!
//! Calls happen at the world's current simulated time; only `run`, `poll_cq` with `wait` and
//! `expect_no_completion` advance it. Every advance runs under an [`engine::Budget`] whose
//! event and wall-clock allowances are shared by the whole session, so a session stops with a
//! named budget rather than running on.

use crate::pattern;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::{Duration, Instant};

use engine::{Budget, BudgetExceeded, Observer, TraceRecord, Tracer};
use fabric::Payload;
use fabric::packet::host_ip;
use fabric::{DropRule, FabricConfig, LinkConfig, Topology};
use units::{Bandwidth, FlowId, Probability, SimDuration, SimTime};
use verbs::types::{AhAttr, Gid};
use verbs::wr::{RecvWr, SendWr, Sge};
use verbs::{
    ChannelHandle, CqHandle, Errno, Mr, NicProfile, NotifyArm, PdHandle, QpInitAttr, QpNum, Wc,
    WqeState,
};
use wire::ib::{Opcode, aeth::Syndrome, irn};

use super::msg::{Msg, MsgId, msg};
use super::parse::{opcode_name, status_name, wc_opcode_name};
use super::plan::{
    Call, DataForm, Expect, Fill, HandleId, HandleKind, HostId, KeyRef, MemRef, QpRef, Recovery,
    Ret, Session, SgePlan, Step, TopologyKind, limits,
};
use super::report::{
    AethView, BufferView, ChannelView, Check, CqView, FrameRecord, MrView, NotifyView, Outcome,
    QpView, Report, RethView, RqEntry, SackView, SqEntry, StepRecord, StepState, Summary, WcRecord,
};
use crate::world::{World, WorldError};

/// How to run a session.
#[derive(Default)]
pub struct RunOptions {
    /// Run under this NIC profile instead of the file's.
    pub profile: Option<NicProfile>,
    /// Write every frame to this pcap.
    pub pcap: Option<Box<dyn Write>>,
    /// Process at most this many events (never more than [`limits::MAX_EVENTS`]); a caller
    /// such as a web server may want a smaller budget per request.
    pub max_events: Option<u64>,
}

/// Why a session could not run at all (its steps' failures are in the [`Report`]).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The world could not be built from the session's fabric.
    #[error("cannot build the world: {0}")]
    World(#[from] WorldError),
    /// The pcap could not be written.
    #[error("cannot write the pcap: {0}")]
    Pcap(#[from] std::io::Error),
}

/// Runs `session` and records every step.
pub fn run(session: &Session, options: RunOptions) -> Result<Report, RunError> {
    let profile = options.profile.unwrap_or(session.profile);
    let mut world = build_world(session, profile)?;
    // The report lists each step's frames, and marks the ones the fabric dropped.
    world.log_frames();
    world.fabric_mut().set_tracer(Tracer::new(Drops::default()));
    let capturing = options.pcap.is_some();
    if let Some(out) = options.pcap {
        world.capture_pcap(out)?;
    }
    let events_budget = options
        .max_events
        .map_or(limits::MAX_EVENTS, |n| n.min(limits::MAX_EVENTS));
    let mut x = Exec {
        s: session,
        world,
        profile,
        names: BTreeMap::new(),
        bound: vec![None; session.handles.len()],
        failed_at: vec![None; session.handles.len()],
        destroyed: vec![None; session.handles.len()],
        async_taken: vec![Vec::new(); session.hosts.len()],
        events_left: events_budget,
        events_budget,
        started: Instant::now(),
        mem_seen: vec![None; session.handles.len()],
    };
    let mut steps = Vec::new();
    let mut aborted = None;
    for (i, step) in session.steps.iter().enumerate() {
        let (mut record, stop) = x.step(i + 1, step);
        let (mut frames, skipped) = x.frames();
        record.frames_more = frames.len().saturating_sub(limits::MAX_FRAMES_LISTED) + skipped;
        frames.truncate(limits::MAX_FRAMES_LISTED);
        record.frames = frames;
        record.state = x.snapshot();
        record.state.buffers = x.memory_views();
        steps.push(record);
        if let Some(why) = stop {
            aborted = Some(msg!(AbortStopped, step = i + 1, line = step.line, why));
            break;
        }
    }
    if capturing {
        x.world.finish_pcap()?;
    }
    if let Some(drops) = x.world.fabric_mut().tracer_mut().take::<Drops>() {
        for f in steps.iter_mut().flat_map(|s| s.frames.iter_mut()) {
            f.dropped = drops.0.contains(&f.uid);
        }
    }
    let mut summary = Summary {
        steps: steps.len(),
        ..Summary::default()
    };
    for c in steps.iter().flat_map(|s: &StepRecord| &s.expectations) {
        summary.expectations += 1;
        if c.passed {
            summary.passed += 1;
        } else {
            summary.failed += 1;
        }
    }
    Ok(Report {
        profile: profile.name().to_string(),
        topology: session.fabric.topology.name().to_string(),
        hosts: session.hosts.clone(),
        passed: summary.failed == 0 && aborted.is_none(),
        aborted: aborted.as_ref().map(Msg::text),
        aborted_msg: aborted,
        end_time_ps: x.world.now().as_ps(),
        summary,
        steps,
    })
}

/// Remembers which packets the fabric dropped (by uid), to mark them in the steps' frames.
#[derive(Default)]
struct Drops(BTreeSet<u64>);

impl Observer for Drops {
    fn record(&mut self, _at: SimTime, rec: &TraceRecord) {
        if let TraceRecord::Dropped { pkt, .. } = rec {
            self.0.insert(pkt.uid);
        }
    }
}

/// The flow id the world gives frames sent by QP `qpn` of host `h` (`World::tx_out`).
fn world_flow(h: usize, qpn: u32) -> FlowId {
    FlowId(h as u32 * 0x1_0000 + (qpn & 0xffff))
}

/// The first QPN a verbs context hands out (`verbs::context`, "QPNs").
const FIRST_QPN: u32 = 0x11;

fn build_world(s: &Session, profile: NicProfile) -> Result<World, WorldError> {
    let f = &s.fabric;
    let mut base = LinkConfig::new(Bandwidth::gbps(f.rate_gbps), f.cable_m);
    base.loss.corruption = Probability::from_f64(f.loss).unwrap_or(Probability::ZERO);
    // Drop rules count the frames of each QP of the sending host. QPNs are handed out from
    // 0x11 in creation order, so the n QPs the session creates on a host have QPNs below
    // 0x11 + n whatever fails.
    let rules_from = |h: HostId| -> Vec<DropRule> {
        let qps = s
            .handles
            .iter()
            .filter(|x| x.host == h && matches!(x.kind, HandleKind::Qp { .. }))
            .count() as u32;
        f.drops
            .iter()
            .filter(|d| d.from == h)
            .flat_map(|d| {
                (0..qps).map(move |k| DropRule {
                    flow: world_flow(h.0, FIRST_QPN + k),
                    nth: d.nth,
                    count: d.count,
                })
            })
            .collect()
    };
    let mut topo = Topology::new(f.topology.name());
    let nodes: Vec<_> = s.hosts.iter().map(|n| topo.add_host(n.clone())).collect();
    match f.topology {
        TopologyKind::BackToBack => {
            let mut link = base.clone();
            for h in 0..s.hosts.len() {
                link.loss.rules.extend(rules_from(HostId(h)));
            }
            link.validate()?;
            topo.connect(nodes[0], nodes[1], link);
        }
        TopologyKind::Switch => {
            let sw = topo.add_switch("sw0");
            for (h, &node) in nodes.iter().enumerate() {
                let mut link = base.clone();
                link.loss.rules = rules_from(HostId(h));
                link.validate()?;
                topo.connect(node, sw, link);
            }
        }
    }
    let config = FabricConfig {
        seed: s.seed,
        ..FabricConfig::default()
    };
    World::new(&topo, config, Default::default(), profile)
}

/// What a handle stands for once its step ran.
#[derive(Clone, Copy, Debug)]
enum Bound {
    Buffer { va: u64 },
    Channel(ChannelHandle),
    Cq(CqHandle),
    Mr(Mr),
    Pd(PdHandle),
    Qp(QpNum),
}

/// What a call produced, before the expectations are checked.
#[derive(Default)]
struct Done {
    outcome: Option<Outcome>,
    ret: Option<Ret>,
    bad_wr: Option<usize>,
    wcs: Option<Vec<Wc>>,
    /// `get_cq_event`: the CQ the event names.
    event_cq: Option<CqHandle>,
    /// `get_async_event`: the event.
    async_event: Option<verbs::AsyncEvent>,
    /// `query_qp`: `sq_draining`.
    sq_draining: Option<bool>,
    notes: Vec<Msg>,
    /// The simulation cannot go on.
    stop: Option<Msg>,
}

impl Done {
    fn ok(m: Msg) -> Done {
        Done::ok_all(vec![m])
    }
    /// A result of several pieces (the English joins them with "; ").
    fn ok_all(msgs: Vec<Msg>) -> Done {
        Done {
            outcome: Some(Outcome::ok(msgs)),
            ret: Some(Ret::Ok),
            ..Done::default()
        }
    }
    fn verbs_err(e: &verbs::VerbsError) -> Done {
        Done {
            outcome: Some(Outcome::Error {
                errno: e.errno().name().to_string(),
                code: e.errno().code(),
                text: e.explain(),
                msg: super::verbs_msg::verbs_error(e),
                bad_wr: None,
                posted: None,
            }),
            ret: Some(Ret::Err(e.errno())),
            ..Done::default()
        }
    }
    fn post_err(e: &verbs::PostError) -> Done {
        Done {
            outcome: Some(Outcome::Error {
                errno: e.errno.name().to_string(),
                code: e.errno.code(),
                text: e.explain(),
                msg: super::verbs_msg::post_error(e),
                bad_wr: e.bad_wr,
                posted: Some(e.posted),
            }),
            ret: Some(Ret::Err(e.errno)),
            bad_wr: e.bad_wr,
            ..Done::default()
        }
    }
    /// Nothing to return within the step's `wait`: what a non-blocking channel fd returns.
    fn would_block(why: Msg) -> Done {
        let msg = msg!(VerrErrno, errno = Errno::EAGAIN.name(), why);
        Done {
            outcome: Some(Outcome::Error {
                errno: Errno::EAGAIN.name().to_string(),
                code: Errno::EAGAIN.code(),
                text: msg.text(),
                msg,
                bad_wr: None,
                posted: None,
            }),
            ret: Some(Ret::Err(Errno::EAGAIN)),
            ..Done::default()
        }
    }
    fn failed(why: Msg) -> Done {
        Done {
            outcome: Some(Outcome::Failed {
                text: why.text(),
                msg: why.clone(),
            }),
            stop: Some(why),
            ..Done::default()
        }
    }
}

/// `query_qp`'s attribute line `m`; in SQD it also says whether the send queue still drains.
fn sqd_state(sqd: bool, draining: bool, m: Msg) -> Msg {
    if !sqd {
        return m;
    }
    let why = if draining {
        MsgId::WhySqdInFlight
    } else {
        MsgId::WhySqdDrained
    };
    Msg {
        id: MsgId::ResultQueryQpSqd,
        ..m
    }
    .arg("draining", u8::from(draining))
    .arg("why", why)
}

/// The kinds of objects completions and queries name.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
enum NameKind {
    Cq,
    Qp,
}

struct Exec<'a> {
    s: &'a Session,
    /// (host, kind, raw id) → the handle that names it, for reports.
    names: BTreeMap<(u32, NameKind, u32), HandleId>,
    world: World,
    profile: NicProfile,
    bound: Vec<Option<Bound>>,
    /// For handles whose step failed: that step's line.
    failed_at: Vec<Option<usize>>,
    /// For handles a teardown call freed: that step's index and line. The handle stays bound
    /// (its numbers are what a peer kept: a stale rkey, a QPN), but local use is refused.
    destroyed: Vec<Option<(usize, usize)>>,
    /// Per host: the async events `get_async_event` took and `ack_async_event` has not yet
    /// acknowledged, oldest first (what a program holds as `struct ibv_async_event`s).
    async_taken: Vec<Vec<verbs::AsyncEvent>>,
    events_left: u64,
    /// The session's whole event budget.
    events_budget: u64,
    started: Instant,
    /// Per buffer handle: the compared bytes and the window offset of the last memory view.
    mem_seen: Vec<Option<(Vec<u8>, u64)>>,
}

/// The byte ranges `[start, end)` where `old` and `new` differ (`old` shorter counts as
/// different past its end).
fn changed_ranges(old: &[u8], new: &[u8]) -> Vec<[u64; 2]> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, b) in new.iter().enumerate() {
        let diff = old.get(i) != Some(b);
        match (diff, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push([s as u64, i as u64]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push([s as u64, new.len() as u64]);
    }
    out
}

impl Exec<'_> {
    fn host_of(&self, id: HandleId) -> u32 {
        self.s.handle(id).host.0 as u32
    }

    fn va(&self, id: HandleId) -> u64 {
        match self.bound[id.0] {
            Some(Bound::Buffer { va }) => va,
            Some(Bound::Mr(mr)) => mr.va,
            _ => 0,
        }
    }

    fn addr(&self, at: MemRef) -> u64 {
        self.va(at.handle).wrapping_add(at.offset)
    }

    fn mr(&self, id: HandleId) -> Mr {
        match self.bound[id.0] {
            Some(Bound::Mr(mr)) => mr,
            _ => unreachable!("the parser made this an MR handle and the step checked it is bound"),
        }
    }

    fn qpn(&self, id: HandleId) -> QpNum {
        match self.bound[id.0] {
            Some(Bound::Qp(q)) => q,
            _ => unreachable!("the parser made this a QP handle and the step checked it is bound"),
        }
    }

    fn cq(&self, id: HandleId) -> CqHandle {
        match self.bound[id.0] {
            Some(Bound::Cq(c)) => c,
            _ => unreachable!("the parser made this a CQ handle and the step checked it is bound"),
        }
    }

    fn channel(&self, id: HandleId) -> ChannelHandle {
        match self.bound[id.0] {
            Some(Bound::Channel(c)) => c,
            _ => unreachable!(
                "the parser made this a channel handle and the step checked it is bound"
            ),
        }
    }

    fn pd(&self, id: HandleId) -> PdHandle {
        match self.bound[id.0] {
            Some(Bound::Pd(p)) => p,
            _ => unreachable!("the parser made this a PD handle and the step checked it is bound"),
        }
    }

    /// Records what handle `id` stands for now that its step succeeded.
    fn bind(&mut self, id: HandleId, b: Bound) {
        let host = self.s.handle(id).host.0 as u32;
        match b {
            Bound::Qp(q) => {
                self.names.insert((host, NameKind::Qp, q.get()), id);
            }
            Bound::Cq(c) => {
                self.names.insert((host, NameKind::Cq, c.0), id);
            }
            _ => {}
        }
        self.bound[id.0] = Some(b);
    }

    /// The session's name for QP `qpn` of host `h`.
    fn qp_name(&self, h: u32, qpn: QpNum) -> String {
        self.names
            .get(&(h, NameKind::Qp, qpn.get()))
            .map_or_else(|| format!("{qpn}"), |&id| self.s.name(id).to_string())
    }

    /// The session's name for channel `ch` of host `h`.
    fn channel_name(&self, h: u32, ch: ChannelHandle) -> String {
        self.s
            .handles
            .iter()
            .enumerate()
            .find(|(i, info)| {
                info.host.0 as u32 == h
                    && matches!(self.bound[*i], Some(Bound::Channel(c)) if c == ch)
            })
            .map_or_else(|| format!("{ch}"), |(_, info)| info.name.clone())
    }

    /// The session's name for CQ `cq` of host `h`.
    fn cq_name(&self, h: u32, cq: CqHandle) -> String {
        self.names
            .get(&(h, NameKind::Cq, cq.0))
            .map_or_else(|| format!("{cq}"), |&id| self.s.name(id).to_string())
    }

    /// Advances simulated time by `d` under the session's remaining budget.
    fn advance(&mut self, d: SimDuration) -> Result<u64, Msg> {
        let until = self.world.now() + d;
        let wall =
            Duration::from_secs(limits::MAX_WALL_SECS).saturating_sub(self.started.elapsed());
        let budget = Budget {
            sim_time: limits::MAX_SESSION_TIME,
            events: self.events_left,
            wall,
            // A session's state is bounded by its file's limits (buffers, steps, QPs).
            memory_bytes: u64::MAX,
        };
        match self.world.run_until(until, &budget) {
            Ok(stats) => {
                self.events_left -= stats.events;
                Ok(stats.events)
            }
            Err(e) => Err(self.budget_message(e)),
        }
    }

    /// What a session says when the world stops on `e` (a budget, usually).
    fn budget_message(&self, e: WorldError) -> Msg {
        match e {
            WorldError::Budget(BudgetExceeded::Events { .. }) => msg!(
                FailedEvents,
                budget = self.events_budget,
                max = limits::MAX_EVENTS
            ),
            WorldError::Budget(BudgetExceeded::Wall { .. }) => {
                msg!(FailedWall, secs = limits::MAX_WALL_SECS)
            }
            e => msg!(FailedWorld, detail = e.to_string()),
        }
    }

    fn step(&mut self, index: usize, step: &Step) -> (StepRecord, Option<Msg>) {
        let time_ps = self.world.now().as_ps();
        let host = step_host(self.s, &step.call).map(|h| self.s.host_name(h).to_string());
        let mut record = StepRecord {
            index,
            line: step.line,
            time_ps,
            host,
            call: step.call.name().to_string(),
            text: describe(self.s, &step.call),
            result: Outcome::ok(Vec::new()),
            notes: Vec::new(),
            note_msgs: Vec::new(),
            expectations: Vec::new(),
            state: StepState::default(),
            frames: Vec::new(),
            frames_more: 0,
        };
        let missing: Vec<HandleId> = step
            .call
            .uses()
            .into_iter()
            .filter(|h| self.bound[h.0].is_none())
            .collect();
        if let Some(&m) = missing.first() {
            let name = self.s.name(m);
            let why = match self.failed_at[m.0] {
                Some(line) => msg!(SkipNotCreatedFailed, name, line),
                None => msg!(SkipNotCreated, name),
            };
            self.mark_failed_outputs(step);
            record.result = Outcome::skipped(why.clone());
            record.expectations.push(skipped_check(why));
            return (record, None);
        }
        let remote = step.call.remote_uses();
        let freed = step
            .call
            .uses()
            .into_iter()
            .filter(|h| !remote.contains(h))
            .find_map(|h| self.destroyed[h.0].map(|at| (h, at)));
        if let Some((h, (at, line))) = freed {
            let why = msg!(
                SkipFreed,
                name = self.s.name(h),
                step = at,
                line,
                call = self.s.steps[at - 1].call.name()
            );
            record.result = Outcome::skipped(why.clone());
            record.expectations.push(skipped_check(why));
            return (record, None);
        }
        let mut done = Done::default();
        let mut no_completion = None;
        if let (Call::PollCq { cq, .. }, Some(d)) = (&step.call, step.no_completion) {
            // Wait first, then poll: the poll shows what the wait left in the CQ.
            let h = self.host_of(*cq);
            let c = self.cq(*cq);
            match self.watch(&[(h, c)], d) {
                Ok(c) => no_completion = Some(c),
                Err(why) => done = Done::failed(why),
            }
        }
        if done.stop.is_none() {
            done = self.call(step);
        }
        if done.stop.is_none()
            && let Some(d) = step.no_completion
            && no_completion.is_none()
        {
            let cqs = self.step_cqs(&step.call);
            match self.watch(&cqs, d) {
                Ok(c) => no_completion = Some(c),
                Err(why) => {
                    done.notes.push(msg!(NoteNoCompletion, why = why.clone()));
                    done.stop = Some(why);
                }
            }
        }
        if done.ret != Some(Ret::Ok) {
            self.mark_failed_outputs(step);
        } else if let Some(h) = step.call.destroys() {
            self.destroyed[h.0] = Some((index, step.line));
        }
        record.result = done
            .outcome
            .take()
            .unwrap_or_else(|| Outcome::ok(Vec::new()));
        record.notes = done.notes.iter().map(Msg::text).collect();
        record.note_msgs = std::mem::take(&mut done.notes);
        record.expectations = self.check(step, &done);
        if let Some(c) = no_completion {
            record.expectations.push(c);
        }
        (record, done.stop)
    }

    /// The verbs objects the session has created, as they stand now.
    fn snapshot(&self) -> StepState {
        let mut st = StepState::default();
        for (i, info) in self.s.handles.iter().enumerate() {
            let id = HandleId(i);
            let h = info.host.0 as u32;
            let name = self.s.name(id).to_string();
            let host = self.s.host_name(info.host).to_string();
            let verbs = &self.world.host(h).verbs;
            match self.bound[i] {
                Some(Bound::Qp(qpn)) => {
                    let (Ok((attr, init)), Ok(q)) = (verbs.query_qp(qpn), verbs.qp_queues(qpn))
                    else {
                        continue; // destroyed
                    };
                    st.qps.push(QpView {
                        name,
                        host,
                        qpn: qpn.get(),
                        qp_type: init.qp_type.name().to_string(),
                        state: attr.qp_state.name().to_string(),
                        sq_more: q.send.len().saturating_sub(limits::MAX_LISTED),
                        rq_more: q.recv.len().saturating_sub(limits::MAX_LISTED),
                        sq: q
                            .send
                            .iter()
                            .take(limits::MAX_LISTED)
                            .map(|&(wr_id, op, stage)| SqEntry {
                                wr_id,
                                opcode: opcode_name(op).to_string(),
                                stage: match stage {
                                    WqeState::Posted => "posted",
                                    WqeState::Started => "started",
                                    WqeState::Done(_) => "done",
                                }
                                .to_string(),
                            })
                            .collect(),
                        rq: q
                            .recv
                            .iter()
                            .take(limits::MAX_LISTED)
                            .map(|&wr_id| RqEntry { wr_id })
                            .collect(),
                    });
                }
                Some(Bound::Channel(ch)) => {
                    let Some(c) = verbs.channel(ch) else { continue };
                    st.channels.push(ChannelView {
                        name,
                        host,
                        events: c.pending(),
                    });
                }
                Some(Bound::Cq(c)) => {
                    let Some(cq) = verbs.cq(c) else { continue };
                    let notify =
                        (cq.channel().is_some() || cq.arm().is_some() || cq.events_unacked() > 0)
                            .then(|| NotifyView {
                                channel: cq.channel().map(|ch| self.channel_name(h, ch)),
                                armed: cq.arm().map(|a| {
                                    match a {
                                        NotifyArm::Any => "any",
                                        NotifyArm::SolicitedOnly => "solicited",
                                    }
                                    .to_string()
                                }),
                                events_unacked: cq.events_unacked(),
                            });
                    st.cqs.push(CqView {
                        notify,
                        name,
                        host,
                        cqe: cq.cqe(),
                        entries: cq
                            .entries()
                            .take(limits::MAX_LISTED)
                            .map(|w| self.wc_record(h, w))
                            .collect(),
                        entries_more: cq.len().saturating_sub(limits::MAX_LISTED),
                    });
                }
                Some(Bound::Mr(mr)) => {
                    if verbs.mr(mr.handle()).is_none() {
                        continue; // deregistered
                    }
                    st.mrs.push(MrView {
                        name,
                        host,
                        lkey: mr.lkey,
                        rkey: mr.rkey,
                        len: mr.len,
                        access: mr.access.iter_names().map(str::to_string).collect(),
                    });
                }
                _ => {}
            }
        }
        st
    }

    /// Every buffer's memory view after a step: the first `MEMORY_COMPARE_BYTES` compared with
    /// the previous view, a `MEMORY_VIEW_BYTES` window placed at the first change (else where
    /// it was), its hex only when the window or its bytes changed. Bounded: at most
    /// `MAX_LISTED` buffers, 4 KiB read and compared per buffer.
    fn memory_views(&mut self) -> Vec<BufferView> {
        let mut out = Vec::new();
        for (i, info) in self.s.handles.iter().enumerate() {
            let Some(Bound::Buffer { va }) = self.bound[i] else {
                continue;
            };
            if out.len() >= limits::MAX_LISTED {
                break;
            }
            let h = info.host.0 as u32;
            let mem = self.world.host(h).verbs.memory();
            let Some(buf) = mem.buffer_at(va).filter(|b| b.start == va) else {
                continue; // freed
            };
            let n = buf.len.min(limits::MEMORY_COMPARE_BYTES);
            let Ok(now) = mem.read_vec(va, n) else {
                continue;
            };
            let (old, old_off) = match &self.mem_seen[i] {
                Some((b, o)) => (Some(b.as_slice()), *o),
                None => (None, 0),
            };
            let mut changed = match old {
                Some(old) => changed_ranges(old, &now),
                None => Vec::new(),
            };
            let view = limits::MEMORY_VIEW_BYTES.min(n);
            let offset = match changed.first() {
                Some(&[start, _]) => (start / 16 * 16).min(n - view),
                None => old_off,
            };
            let window = |b: &[u8]| {
                b.get(offset as usize..(offset + view) as usize)
                    .map(<[u8]>::to_vec)
            };
            let fresh = old.is_none_or(|o| offset != old_off || window(o) != window(&now));
            let hex = fresh.then(|| {
                now[offset as usize..(offset + view) as usize]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            });
            let changed_more = changed.len().saturating_sub(limits::MEMORY_MAX_RANGES);
            changed.truncate(limits::MEMORY_MAX_RANGES);
            out.push(BufferView {
                name: self.s.name(HandleId(i)).to_string(),
                host: self.s.host_name(info.host).to_string(),
                va,
                len: buf.len,
                offset,
                hex,
                changed,
                changed_more,
            });
            self.mem_seen[i] = Some((now, offset));
        }
        out
    }

    /// The frames hosts sent since the last call, and how many more the log left out.
    fn frames(&mut self) -> (Vec<FrameRecord>, usize) {
        let (log, skipped) = self.world.take_frame_log();
        let frames = log
            .into_iter()
            .map(|logged| {
                let (at, pkt, wr_id) = (logged.at, logged.pkt, logged.wr_id);
                let name = |node: units::NodeId| {
                    self.world.host_of_node(node).map_or_else(
                        || format!("node {}", node.0),
                        |h| self.s.hosts[h as usize].clone(),
                    )
                };
                let (mut reth, mut aeth, mut imm, mut sack) = (None, None, None, None);
                let (kind, opcode, psn, qpn) = match pkt.payload {
                    Payload::Roce { hdr, .. } => {
                        reth = hdr.ext.reth.map(|r| RethView {
                            va: r.va,
                            rkey: r.rkey,
                            len: r.dma_len,
                        });
                        aeth = hdr.ext.aeth.map(|a| {
                            let mut v = AethView {
                                syndrome: "ACK",
                                credits: None,
                                rnr_timer: None,
                                nak: None,
                                msn: a.msn,
                            };
                            match a.syndrome {
                                Syndrome::Ack { credits } => v.credits = Some(credits),
                                Syndrome::RnrNak { timer } => {
                                    v.syndrome = "RNR_NAK";
                                    v.rnr_timer = Some(timer);
                                }
                                Syndrome::Nak(code) => {
                                    v.syndrome = "NAK";
                                    v.nak = Some(format!("{code:?}"));
                                }
                            }
                            v
                        });
                        imm = hdr.ext.immdt.map(|i| i.imm);
                        if let Some(irn::Repr::Sack { psn, received }) = hdr.ext.irn {
                            let base = hdr.bth.psn;
                            sack = Some(SackView {
                                trigger: psn,
                                held: (0..64u32)
                                    .filter(|i| received >> i & 1 == 1)
                                    .map(|i| (base + 1 + i) & 0xff_ffff)
                                    .collect(),
                            });
                        }
                        let op = hdr.bth.opcode;
                        let what = match hdr.ext.aeth.map(|a| a.syndrome) {
                            Some(Syndrome::RnrNak { .. }) => "RNR NAK".to_string(),
                            Some(Syndrome::Nak(code)) => format!("NAK {code:?}"),
                            _ => op.to_string(),
                        };
                        let kind = if op == Opcode::CNP { "cnp" } else { "roce" };
                        (kind, what, Some(hdr.bth.psn), Some(hdr.bth.dest_qp))
                    }
                    Payload::Pause { .. } => ("pfc", "PAUSE".to_string(), None, None),
                    Payload::Tcp { .. } => ("tcp", "TCP".to_string(), None, None),
                    Payload::Raw { .. } => ("other", "raw".to_string(), None, None),
                };
                FrameRecord {
                    t_ps: at.as_ps(),
                    src: name(pkt.src),
                    dst: name(pkt.dst),
                    kind: kind.to_string(),
                    opcode,
                    psn,
                    qpn,
                    len: pkt.len_bytes,
                    dropped: false,
                    wr_id,
                    reth,
                    aeth,
                    imm,
                    sack,
                    wire: logged.wire_hex(),
                    wire_elided: logged.wire_elided.map(|r| [r.start, r.end]),
                    uid: pkt.uid,
                }
            })
            .collect();
        (frames, skipped)
    }

    fn mark_failed_outputs(&mut self, step: &Step) {
        for id in outputs(&step.call) {
            if self.bound[id.0].is_none() {
                self.failed_at[id.0] = Some(step.line);
            }
        }
    }

    /// The CQs of the step's QP (send and receive).
    fn step_cqs(&mut self, call: &Call) -> Vec<(u32, CqHandle)> {
        let qp = match call {
            Call::ModifyQp { qp, .. }
            | Call::QueryQp { qp }
            | Call::PostSend { qp, .. }
            | Call::PostRecv { qp, .. } => *qp,
            _ => return Vec::new(),
        };
        let h = self.host_of(qp);
        let qpn = self.qpn(qp);
        let Ok((_, init)) = self.world.verbs(h).query_qp(qpn) else {
            return Vec::new();
        };
        let mut v = vec![(h, init.send_cq)];
        if init.recv_cq != init.send_cq {
            v.push((h, init.recv_cq));
        }
        v
    }

    /// Runs the world for `d` and checks that none of `cqs` gains a completion.
    fn watch(&mut self, cqs: &[(u32, CqHandle)], d: SimDuration) -> Result<Check, Msg> {
        let len =
            |x: &mut Self, (h, c): (u32, CqHandle)| x.world.verbs(h).cq(c).map_or(0, |q| q.len());
        let before: Vec<usize> = cqs.iter().map(|&c| len(self, c)).collect();
        self.advance(d)?;
        let mut gained = Vec::new();
        for (&c, b) in cqs.iter().zip(before) {
            let n = len(self, c).saturating_sub(b);
            if n > 0 {
                gained.push(msg!(CheckGained, cq = self.cq_name(c.0, c.1), n));
            }
        }
        let names: Vec<String> = cqs.iter().map(|&(h, c)| self.cq_name(h, c)).collect();
        let what = msg!(CheckNoCompletionWithin, d = d.to_string(), cqs = names);
        let passed = gained.is_empty();
        let got = if passed {
            msg!(CheckNoNewCompletion)
        } else {
            msg!(CheckGainedList, cqs = gained)
        };
        Ok(Check {
            passed,
            ..check(what, msg!(CheckNoNewCompletion), got, false)
        })
    }

    fn call(&mut self, step: &Step) -> Done {
        let s = self.s;
        match &step.call {
            Call::AllocPd { host, out } => match self.world.verbs(host.0 as u32).alloc_pd() {
                Ok(pd) => {
                    self.bind(*out, Bound::Pd(pd));
                    Done::ok(msg!(ResultPd, pd = pd.to_string()))
                }
                Err(e) => Done::verbs_err(&e),
            },
            Call::Alloc {
                host,
                out,
                len,
                fill,
            } => {
                let mem = self.world.verbs(host.0 as u32).memory_mut();
                let va = match mem.alloc(*len) {
                    Ok(va) => va,
                    Err(e) => return Done::verbs_err(&e.into()),
                };
                let bytes = match fill {
                    Fill::Zero => None,
                    Fill::Bytes(b) => Some(b.clone()),
                    Fill::Byte(b) => Some(vec![*b; *len as usize]),
                    Fill::Pattern(seed) => Some(pattern(*seed, *len as usize)),
                };
                if let Some(b) = bytes
                    && let Err(e) = mem.write(va, &b)
                {
                    return Done::verbs_err(&e.into());
                }
                self.bind(*out, Bound::Buffer { va });
                Done::ok(msg!(ResultAlloc, len = *len, va = format!("{va:#x}")))
            }
            Call::RegMr {
                pd,
                buf,
                offset,
                len,
                access,
                out,
            } => {
                let h = self.host_of(*pd);
                let (pd, va) = (self.pd(*pd), self.va(*buf).wrapping_add(*offset));
                match self.world.reg_mr(h, pd, va, *len, *access) {
                    Ok(mr) => {
                        self.bind(*out, Bound::Mr(mr));
                        Done::ok(msg!(
                            ResultRegMr,
                            lkey = format!("{:#x}", mr.lkey),
                            rkey = format!("{:#x}", mr.rkey),
                            len = mr.len,
                            va = format!("{:#x}", mr.va),
                            pages = mr.pages
                        ))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateCompChannel { host, out } => {
                let ch = self.world.verbs(host.0 as u32).create_comp_channel();
                self.bind(*out, Bound::Channel(ch));
                Done::ok(msg!(ResultCompChannel, channel = ch.to_string()))
            }
            Call::DestroyCompChannel { channel } => {
                let h = self.host_of(*channel);
                let ch = self.channel(*channel);
                match self.world.verbs(h).destroy_comp_channel(ch) {
                    Ok(()) => Done::ok(msg!(ResultClosed, name = s.name(*channel))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::ReqNotifyCq { cq, solicited_only } => {
                let h = self.host_of(*cq);
                match self.world.req_notify_cq(h, self.cq(*cq), *solicited_only) {
                    Ok(()) => Done::ok(if *solicited_only {
                        msg!(ResultArmedSolicited)
                    } else {
                        msg!(ResultArmedAny)
                    }),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::GetCqEvent { channel, wait } => self.get_cq_event(*channel, *wait),
            Call::GetAsyncEvent { host, wait } => self.get_async_event(*host, *wait),
            Call::AckAsyncEvent { host } => {
                let h = host.0 as u32;
                let Some(&e) = self.async_taken[host.0].first() else {
                    return Done::verbs_err(&verbs::VerbsError::AsyncAckWithoutEvent {
                        event: "async",
                    });
                };
                match self.world.verbs(h).ack_async_event(e) {
                    Ok(()) => {
                        self.async_taken[host.0].remove(0);
                        Done::ok(msg!(
                            ResultAsyncAcked,
                            event = e.name(),
                            on = self.async_on(h, e)
                        ))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::AckCqEvents { cq, n } => {
                let (h, c) = (self.host_of(*cq), self.cq(*cq));
                match self.world.verbs(h).ack_cq_events(c, *n) {
                    Ok(()) => Done::ok(msg!(ResultEventsAcked, n = *n)),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateCq {
                host,
                cqe,
                channel,
                out,
            } => {
                let ch = channel.map(|c| self.channel(c));
                match self.world.create_cq(host.0 as u32, *cqe, ch) {
                    Ok((cq, size)) => {
                        self.bind(*out, Bound::Cq(cq));
                        Done::ok(msg!(ResultCq, cq = cq.to_string(), size))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateQp {
                pd,
                send_cq,
                recv_cq,
                qp_type,
                cap,
                sq_sig_all,
                out,
            } => {
                let h = self.host_of(*pd);
                let init = QpInitAttr {
                    qp_type: *qp_type,
                    send_cq: self.cq(*send_cq),
                    recv_cq: self.cq(*recv_cq),
                    cap: *cap,
                    sq_sig_all: *sq_sig_all,
                };
                let pd = self.pd(*pd);
                match self.world.create_qp(h, pd, &init) {
                    Ok(q) => {
                        self.bind(*out, Bound::Qp(q.qpn));
                        let c = q.cap;
                        Done::ok_all(vec![
                            msg!(
                                ResultQp,
                                qp_type = qp_type.to_string(),
                                qpn = format!("{:#x}", q.qpn.get())
                            ),
                            msg!(
                                ResultCaps,
                                max_send_wr = c.max_send_wr,
                                max_recv_wr = c.max_recv_wr,
                                max_send_sge = c.max_send_sge,
                                max_recv_sge = c.max_recv_sge,
                                max_inline_data = c.max_inline_data
                            ),
                        ])
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::ModifyQp { qp, attr, mask } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let mut a = attr.attr;
                match attr.dest_qp {
                    Some(QpRef::Handle(d)) => a.dest_qp_num = self.qpn(d).get(),
                    Some(QpRef::Number(n)) => a.dest_qp_num = n,
                    None => {}
                }
                if let Some(peer) = attr.av {
                    a.ah_attr = AhAttr::roce(Gid::from_ipv4(host_ip(peer.0 as u32)));
                }
                let mut notes: Vec<Msg> = attr
                    .ignored
                    .iter()
                    .map(|k| msg!(NoteIgnored, key = k.to_string()))
                    .collect();
                let mut done = match self.world.modify_qp(h, qpn, &a, *mask) {
                    Ok(out) => {
                        let mut text = vec![msg!(
                            ResultTransition,
                            from = out.from.to_string(),
                            to = out.to.to_string()
                        )];
                        for e in &out.effects {
                            text.extend(match e {
                                verbs::ModifyEffect::Reset(r) => {
                                    Some(msg!(ResultDiscarded, send = r.send, recv = r.recv))
                                }
                                verbs::ModifyEffect::Flushed(r) => {
                                    Some(msg!(ResultFlushed, send = r.send, recv = r.recv))
                                }
                                verbs::ModifyEffect::EnteredRtr => Some(msg!(ResultEnteredRtr)),
                                verbs::ModifyEffect::EnteredRts => Some(msg!(ResultEnteredRts)),
                                verbs::ModifyEffect::EnteredSqd { draining: true } => {
                                    Some(msg!(ResultDraining))
                                }
                                verbs::ModifyEffect::EnteredSqd { draining: false } => None,
                            });
                        }
                        notes.extend(out.warnings.iter().map(|w| match w {
                            verbs::ModifyWarning::PsnMasked {
                                field,
                                given,
                                stored,
                            } => msg!(
                                NotePsnMasked,
                                field = *field,
                                given = format!("{given:#x}"),
                                stored = format!("{stored:#08x}")
                            ),
                        }));
                        Done::ok_all(text)
                    }
                    Err(e) => Done::verbs_err(&e),
                };
                done.notes = notes;
                done
            }
            Call::QueryQp { qp } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                match self.world.verbs(h).query_qp(qpn) {
                    Ok((a, init)) => Done {
                        sq_draining: Some(a.sq_draining),
                        ..Done::ok_all(vec![
                            sqd_state(
                                a.qp_state == verbs::QpState::Sqd,
                                a.sq_draining,
                                msg!(
                                    ResultQueryQp,
                                    state = a.qp_state.to_string(),
                                    dest_qp = format!("{:#x}", a.dest_qp_num),
                                    sq_psn = format!("{:#x}", a.sq_psn),
                                    rq_psn = format!("{:#x}", a.rq_psn),
                                    path_mtu = a.path_mtu.to_string(),
                                    timeout = a.timeout,
                                    retry_cnt = a.retry_cnt,
                                    rnr_retry = a.rnr_retry,
                                    min_rnr_timer = a.min_rnr_timer,
                                    max_rd_atomic = a.max_rd_atomic,
                                    max_dest_rd_atomic = a.max_dest_rd_atomic,
                                    access = a.qp_access_flags.to_string()
                                ),
                            ),
                            msg!(
                                ResultQpInit,
                                qp_type = init.qp_type.to_string(),
                                send_cq = self.cq_name(h, init.send_cq),
                                recv_cq = self.cq_name(h, init.recv_cq)
                            ),
                        ])
                    },
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::PostSend { qp, wrs } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let list: Vec<SendWr> = wrs
                    .iter()
                    .map(|w| {
                        let (remote_addr, rkey) = match &w.remote {
                            Some(r) => {
                                let rkey = match r.rkey {
                                    KeyRef::Mr(m) => self.mr(m).rkey,
                                    KeyRef::Raw(k) => k,
                                };
                                (self.va(r.target).wrapping_add(r.offset), rkey)
                            }
                            None => (0, 0),
                        };
                        SendWr {
                            wr_id: w.wr_id,
                            opcode: w.opcode,
                            send_flags: w.flags,
                            sg_list: self.sges(&w.sges),
                            imm_data: w.imm,
                            remote_addr,
                            rkey,
                            compare_add: w.compare_add,
                            swap: w.swap,
                            ud: w.ud.map(|u| verbs::wr::UdDest {
                                ah: AhAttr::roce(Gid::from_ipv4(host_ip(self.host_of(u.qp)))),
                                remote_qpn: self.qpn(u.qp).get(),
                                remote_qkey: u.qkey,
                            }),
                        }
                    })
                    .collect();
                match self.world.post_send(h, qpn, &list) {
                    Ok(_) => Done::ok(msg!(ResultPosted, n = list.len())),
                    Err(e) => Done::post_err(&e),
                }
            }
            Call::PostRecv { qp, wrs } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let list: Vec<RecvWr> = wrs
                    .iter()
                    .map(|w| RecvWr::new(w.wr_id, self.sges(&w.sges)))
                    .collect();
                match self.world.post_recv(h, qpn, &list) {
                    Ok(_) => Done::ok(msg!(ResultPosted, n = list.len())),
                    Err(e) => Done::post_err(&e),
                }
            }
            Call::PollCq { cq, max, wait } => {
                let h = self.host_of(*cq);
                let c = self.cq(*cq);
                let mut notes = Vec::new();
                if let Some(wait) = wait {
                    let want = wanted_completions(&step.expect, self.profile).min(*max as usize);
                    let start = self.world.now();
                    let deadline = start + *wait;
                    let slice =
                        SimDuration::from_us(1).max(SimDuration::from_ps(wait.as_ps() / 10_000));
                    loop {
                        let have = self.world.verbs(h).cq(c).map_or(0, |q| q.len());
                        if have >= want || self.world.now() >= deadline {
                            break;
                        }
                        let step_to = (self.world.now() + slice).min(deadline);
                        if let Err(why) = self.advance(step_to - self.world.now()) {
                            return Done::failed(why);
                        }
                    }
                    notes.push(msg!(
                        NoteBusyPolled,
                        time = (self.world.now() - start).to_string(),
                        n = want
                    ));
                }
                match self.world.poll_cq(h, c, *max as usize) {
                    Ok(wcs) => {
                        let completions = wcs.iter().map(|w| self.wc_record(h, w)).collect();
                        Done {
                            outcome: Some(Outcome::Completions { completions }),
                            ret: Some(Ret::Ok),
                            wcs: Some(wcs),
                            notes,
                            ..Done::default()
                        }
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::Connect {
                hosts,
                pd,
                cq,
                qp,
                channels,
                options,
                recovery,
            } => {
                let (a, b) = (hosts[0].0 as u32, hosts[1].0 as u32);
                let chans = channels.map(|c| c.map(|c| self.channel(c)));
                // The world's setting applies to QPs as they reach RTR: set it for this pair
                // only, and put back what other connections use.
                let before = self.world.selective_window();
                let window = match recovery {
                    Recovery::GoBackN => None,
                    Recovery::Selective { window } => Some(*window),
                };
                self.world.set_selective_repeat(window);
                let r = self.world.connect_rc_with_channels(a, b, options, chans);
                self.world.set_selective_repeat(before);
                match r {
                    Ok((ea, eb)) => {
                        for (i, e) in [ea, eb].into_iter().enumerate() {
                            self.bind(pd[i], Bound::Pd(e.pd));
                            self.bind(cq[i], Bound::Cq(e.cq));
                            self.bind(qp[i], Bound::Qp(e.qpn));
                        }
                        let text = msg!(
                            ResultConnected,
                            qp_a = s.name(qp[0]),
                            qpn_a = format!("{:#x}", ea.qpn.get()),
                            host_a = s.host_name(hosts[0]),
                            qp_b = s.name(qp[1]),
                            qpn_b = format!("{:#x}", eb.qpn.get()),
                            host_b = s.host_name(hosts[1])
                        );
                        Done::ok(match window {
                            Some(w) => Msg {
                                id: MsgId::ResultConnectedSelective,
                                ..text
                            }
                            .arg("window", w),
                            None => text,
                        })
                    }
                    Err(crate::world::ConnectError {
                        source: WorldError::Verbs(e),
                        ..
                    }) => Done::verbs_err(&e),
                    Err(e) => Done::failed(msg!(FailedWorld, detail = e.source.to_string())),
                }
            }
            Call::DestroyQp { qp } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let (_, init) = match self.world.verbs(h).query_qp(qpn) {
                    Ok(q) => q,
                    Err(e) => return Done::verbs_err(&e),
                };
                match self.world.destroy_qp(h, qpn) {
                    Ok(r) => {
                        let mut text =
                            vec![msg!(ResultQpDestroyed, qpn = format!("{:#x}", qpn.get()))];
                        if r.send_wqes + r.recv_wqes > 0 {
                            text.push(msg!(
                                ResultWqesVanished,
                                send = r.send_wqes,
                                recv = r.recv_wqes
                            ));
                        }
                        if r.cqes_removed > 0 {
                            let n = r.cqes_removed;
                            let cq_a = self.cq_name(h, init.send_cq);
                            text.push(if init.recv_cq != init.send_cq {
                                let cq_b = self.cq_name(h, init.recv_cq);
                                msg!(ResultCqesRemovedTwo, n, cq_a, cq_b)
                            } else {
                                msg!(ResultCqesRemoved, n, cqs = cq_a)
                            });
                        }
                        Done::ok_all(text)
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DestroyCq { cq } => {
                let h = self.host_of(*cq);
                match self.world.destroy_cq(h, self.cq(*cq)) {
                    Ok(()) => Done::ok(msg!(ResultDestroyed, name = s.name(*cq))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DeregMr { mr } => {
                let h = self.host_of(*mr);
                let m = self.mr(*mr);
                match self.world.dereg_mr(h, m.handle()) {
                    Ok(()) => Done::ok(msg!(
                        ResultDeregMr,
                        lkey = format!("{:#x}", m.lkey),
                        rkey = format!("{:#x}", m.rkey)
                    )),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DeallocPd { pd } => {
                let h = self.host_of(*pd);
                match self.world.dealloc_pd(h, self.pd(*pd)) {
                    Ok(()) => Done::ok(msg!(ResultFreed, name = s.name(*pd))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::Run { duration } => match self.advance(*duration) {
                Ok(events) => Done::ok_all(vec![
                    msg!(ResultRan, duration = duration.to_string(), events),
                    msg!(ResultNow, time = self.world.now().to_string()),
                ]),
                Err(why) => Done::failed(why),
            },
            Call::WriteMemory { at, data } => {
                let h = self.host_of(at.handle);
                let va = self.addr(*at);
                match self.world.verbs(h).memory_mut().write(va, data) {
                    Ok(()) => Done::ok(msg!(ResultWrote, n = data.len(), va = format!("{va:#x}"))),
                    Err(e) => Done::verbs_err(&e.into()),
                }
            }
            Call::ReadMemory { at, len } => {
                let h = self.host_of(at.handle);
                let va = self.addr(*at);
                match self.world.verbs(h).memory().read_vec(va, *len) {
                    Ok(bytes) => Done::ok(msg!(
                        ResultRead,
                        at = mem_name(self.s, *at),
                        hex = hex(&bytes),
                        text = printable(&bytes)
                    )),
                    Err(e) => Done::verbs_err(&e.into()),
                }
            }
        }
    }

    /// `get_cq_event` blocks: the world runs until a completion event has reached the
    /// application on `channel` (the interrupt and the wake-up have run) or `wait` has passed.
    fn get_cq_event(&mut self, channel: HandleId, wait: SimDuration) -> Done {
        let h = self.host_of(channel);
        let ch = self.channel(channel);
        let start = self.world.now();
        let deadline = start + wait;
        if let Err(why) = self.advance_until(deadline, |w| w.cq_event_at(h, ch).is_some()) {
            return Done::failed(why);
        }
        // The event is queued at the interrupt; the call returns when the wake-up ends.
        if let Some(t) = self.world.cq_event_at(h, ch)
            && t > self.world.now()
            && t <= deadline
            && let Err(why) = self.advance(t - self.world.now())
        {
            return Done::failed(why);
        }
        let blocked = self.world.now() - start;
        match self.world.get_cq_event(h, ch) {
            Ok(Some(cq)) => {
                let mut d = Done::ok(msg!(ResultCqEvent, cq = self.cq_name(h, cq)));
                d.event_cq = Some(cq);
                d.notes
                    .push(msg!(NoteBlockedWake, time = blocked.to_string()));
                d
            }
            Ok(None) => {
                if self.world.now() < deadline
                    && let Err(why) = self.advance(deadline - self.world.now())
                {
                    return Done::failed(why);
                }
                Done::would_block(msg!(
                    VerrNoCqEvent,
                    channel = self.s.name(channel),
                    wait = wait.to_string()
                ))
            }
            Err(e) => Done::verbs_err(&e),
        }
    }

    /// `ibv_get_async_event` with a time limit. The event is readable as soon as the device
    /// raises it: no interrupt or wake-up is charged (an assumption; completion events are).
    fn get_async_event(&mut self, host: HostId, wait: SimDuration) -> Done {
        let h = host.0 as u32;
        let start = self.world.now();
        let deadline = start + wait;
        if let Err(why) = self.advance_until(deadline, |w| w.verbs_ref(h).async_event_pending()) {
            return Done::failed(why);
        }
        let blocked = self.world.now() - start;
        match self.world.verbs(h).get_async_event() {
            Some(e) => {
                self.async_taken[host.0].push(e);
                let mut d = Done::ok(msg!(
                    ResultAsyncEvent,
                    event = e.name(),
                    on = self.async_on(h, e)
                ));
                d.async_event = Some(e);
                d.notes.push(msg!(NoteBlocked, time = blocked.to_string()));
                d
            }
            None => Done::would_block(msg!(
                VerrNoAsyncEvent,
                host = self.s.host_name(host),
                wait = wait.to_string()
            )),
        }
    }

    /// The QP or CQ an async event names, by its handle name.
    fn async_element(&self, h: u32, e: verbs::AsyncEvent) -> String {
        match (e.qp(), e.cq()) {
            (Some(q), _) => self.qp_name(h, q),
            (None, Some(c)) => self.cq_name(h, c),
            (None, None) => "the device".to_string(),
        }
    }

    /// What an async event names, as a message argument: the handle's name, or "the device".
    fn async_on(&self, h: u32, e: verbs::AsyncEvent) -> super::msg::Arg {
        match (e.qp(), e.cq()) {
            (None, None) => msg!(ResultTheDevice).into(),
            _ => self.async_element(h, e).into(),
        }
    }

    /// Runs the world until `stop` holds (checked after each event) or until `deadline`,
    /// under the session's budget.
    fn advance_until(
        &mut self,
        deadline: SimTime,
        stop: impl FnMut(&World) -> bool,
    ) -> Result<(), Msg> {
        if self.world.now() >= deadline {
            return Ok(());
        }
        let wall =
            Duration::from_secs(limits::MAX_WALL_SECS).saturating_sub(self.started.elapsed());
        let budget = Budget {
            sim_time: limits::MAX_SESSION_TIME,
            events: self.events_left,
            wall,
            memory_bytes: u64::MAX,
        };
        match self.world.run_until_cond(deadline, &budget, stop) {
            Ok(stats) => {
                self.events_left -= stats.events;
                Ok(())
            }
            Err(e) => Err(self.budget_message(e)),
        }
    }

    fn sges(&self, list: &[SgePlan]) -> Vec<Sge> {
        list.iter()
            .map(|g| {
                let mr = self.mr(g.mr);
                let len = g
                    .len
                    .unwrap_or_else(|| mr.len.saturating_sub(g.offset).min(u32::MAX.into()) as u32);
                Sge::new(mr.va.wrapping_add(g.offset), len, g.lkey.unwrap_or(mr.lkey))
            })
            .collect()
    }

    fn wc_record(&self, h: u32, w: &Wc) -> WcRecord {
        WcRecord {
            wr_id: w.wr_id,
            status: status_name(w.status).to_string(),
            status_str: w.status.as_str().to_string(),
            opcode: w.opcode.map(|o| wc_opcode_name(o).to_string()),
            byte_len: w.byte_len,
            imm_data: w.imm_data,
            qp: self.qp_name(h, w.qp_num),
            qp_num: w.qp_num.get(),
        }
    }

    /// Checks the step's expectations against what the call did and the world's state now.
    fn check(&mut self, step: &Step, done: &Done) -> Vec<Check> {
        let p = self.profile;
        let e = &step.expect;
        let mut out = Vec::new();
        let got_ret = || -> Shown {
            done.ret
                .map_or(msg!(CheckDidNotComplete).into(), |r| r.name().into())
        };
        let is_call = !matches!(step.call, Call::Run { .. });
        match &e.ret {
            Some(want) => {
                if let Some(want) = want.get(p) {
                    out.push(check("ret", want.name(), got_ret(), false));
                }
            }
            None if is_call => out.push(check("ret", "ok", got_ret(), true)),
            None => {}
        }
        if let Some(want) = e.bad_wr.as_ref().and_then(|w| w.get(p)) {
            let show = |b: &Option<usize>| -> Shown {
                b.map_or(msg!(CheckNone).into(), |i| i.to_string().into())
            };
            let got = if done.ret == Some(Ret::Ok) {
                msg!(CheckPostSucceeded).into()
            } else {
                show(&done.bad_wr)
            };
            let passed = done.ret != Some(Ret::Ok) && done.bad_wr == *want;
            out.push(Check {
                passed,
                ..check("bad_wr", show(want), got, false)
            });
        }
        let wcs = done.wcs.as_deref().unwrap_or(&[]);
        let count_want = e
            .completions
            .as_ref()
            .and_then(|c| c.get(p).copied())
            .or_else(|| e.wc.as_ref().map(Vec::len));
        if let Some(n) = count_want {
            out.push(check(
                "completions",
                n.to_string(),
                wcs.len().to_string(),
                false,
            ));
        }
        if let Some(list) = &e.wc {
            let h = match &step.call {
                Call::PollCq { cq, .. } => self.host_of(*cq),
                _ => 0,
            };
            for (i, w) in list.iter().enumerate() {
                let got = wcs.get(i);
                let mut field = |name: &str, want: Option<Shown>, got_v: Option<Shown>| {
                    if let Some(want) = want {
                        let got_v = got_v.unwrap_or_else(|| msg!(CheckNoCompletion).into());
                        out.push(check(format!("wc[{i}].{name}"), want, got_v, false));
                    }
                };
                field(
                    "wr_id",
                    w.wr_id
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|v| v.to_string().into()),
                    got.map(|g| g.wr_id.to_string().into()),
                );
                field(
                    "status",
                    w.status
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|s| status_name(*s).into()),
                    got.map(|g| status_name(g.status).into()),
                );
                field(
                    "opcode",
                    w.opcode
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|o| wc_opcode_name(*o).into()),
                    got.map(|g| {
                        g.opcode.map_or(msg!(CheckOpcodeInError).into(), |o| {
                            wc_opcode_name(o).into()
                        })
                    }),
                );
                field(
                    "byte_len",
                    w.byte_len
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|v| v.to_string().into()),
                    got.map(|g| g.byte_len.to_string().into()),
                );
                let imm =
                    |v: Option<u32>| v.map_or(msg!(CheckNone).into(), |x| format!("{x:#x}").into());
                field(
                    "imm_data",
                    w.imm_data.as_ref().and_then(|v| v.get(p)).map(|v| imm(*v)),
                    got.map(|g| imm(g.imm_data)),
                );
                let want_qp = w.qp.map(|q| self.s.name(q).into());
                let got_qp = got.map(|g| self.qp_name(h, g.qp_num).into());
                field("qp", want_qp, got_qp);
                let qpn_of = |n: Option<QpNum>| -> Shown {
                    n.map_or(msg!(CheckNone).into(), |n| {
                        format!("QPN {:#x}", n.get()).into()
                    })
                };
                if let Some(q) = w.src_qp {
                    // The expected QP may never have been created (its step failed).
                    let n = match self.bound[q.0] {
                        Some(Bound::Qp(n)) => Some(n),
                        _ => None,
                    };
                    let want: Shown = match n {
                        Some(n) => format!("{} (QPN {:#x})", self.s.name(q), n.get()).into(),
                        None => msg!(CheckNeverCreated, name = self.s.name(q)).into(),
                    };
                    let got_src = got.map(|g| {
                        if n.is_some() && g.src_qp == n {
                            want.clone()
                        } else {
                            qpn_of(g.src_qp)
                        }
                    });
                    field("src_qp", Some(want), got_src);
                }
                field(
                    "grh",
                    w.grh.map(|b| b.to_string().into()),
                    got.map(|g| g.wc_flags.contains(verbs::WcFlags::GRH).to_string().into()),
                );
            }
        }
        if let Some(ev) = e.event.as_ref()
            && let Some(kind) = &ev.kind
            && let Some(want) = kind.get(p)
        {
            let h = step_host(self.s, &step.call).map_or(0, |x| x.0 as u32);
            let got = done.async_event;
            let no_event = || -> Shown { msg!(CheckNoEvent).into() };
            out.push(check(
                "event.type",
                *want,
                got.map_or_else(no_event, |g| g.name().into()),
                false,
            ));
            if let Some(q) = ev.qp {
                let got = got.map_or_else(no_event, |g| self.async_element(h, g).into());
                out.push(check("event.qp", self.s.name(q), got, false));
            }
            if let Some(c) = ev.cq {
                let got = got.map_or_else(no_event, |g| self.async_element(h, g).into());
                out.push(check("event.cq", self.s.name(c), got, false));
            }
        } else if let Some(want) = e.event.as_ref().and_then(|ev| ev.cq) {
            let h = self.host_of(want);
            let got: Shown = done
                .event_cq
                .map_or(msg!(CheckNoEvent).into(), |c| self.cq_name(h, c).into());
            out.push(check("event.cq", self.s.name(want), got, false));
        }
        if let Some(want) = e.sq_draining.as_ref().and_then(|w| w.get(p)) {
            let got: Shown = done
                .sq_draining
                .map_or(msg!(CheckQueryFailed).into(), |d| d.to_string().into());
            out.push(check("sq_draining", want.to_string(), got, false));
        }
        for (qp, want) in &e.qp_states {
            let Some(want) = want.get(p) else { continue };
            let what = format!("state({})", self.s.name(*qp));
            let got: Shown = match self.bound[qp.0] {
                Some(_) if self.destroyed[qp.0].is_some() => msg!(CheckQpDestroyed).into(),
                Some(Bound::Qp(qpn)) => {
                    let h = self.host_of(*qp);
                    match self.world.verbs(h).qp_state(qpn) {
                        Ok(s) => s.name().into(),
                        Err(e) => msg!(CheckUnreadable, detail = e.to_string()).into(),
                    }
                }
                _ => msg!(CheckQpNotCreated).into(),
            };
            out.push(check(what, want.name(), got, false));
        }
        for m in &e.memory {
            let Some(bytes) = m.bytes.get(p) else {
                continue;
            };
            let what = format!("memory({})", mem_name(self.s, m.at));
            let expected = show_bytes(bytes, m.shown_as);
            let got: Shown = if self.bound[m.at.handle.0].is_none() {
                msg!(CheckBufferNotCreated).into()
            } else {
                let h = self.host_of(m.at.handle);
                let va = self.addr(m.at);
                match self
                    .world
                    .verbs(h)
                    .memory()
                    .read_vec(va, bytes.len() as u64)
                {
                    Ok(b) => show_bytes(&b, m.shown_as).into(),
                    Err(e) => msg!(CheckUnreadable, detail = e.to_string()).into(),
                }
            };
            out.push(check(what, expected, got, false));
        }
        out
    }
}

/// A value an expectation names: an identifier, a number or bytes shown as they are
/// (`IBV_WC_SUCCESS`, `0x1`), or words, which carry a message id so a page translates them.
#[derive(Clone)]
enum Shown {
    /// Shown as it is, in every language.
    As(String),
    /// Words: the English is the message's text.
    Said(Msg),
}

impl From<&str> for Shown {
    fn from(s: &str) -> Shown {
        Shown::As(s.to_string())
    }
}

impl From<String> for Shown {
    fn from(s: String) -> Shown {
        Shown::As(s)
    }
}

impl From<&String> for Shown {
    fn from(s: &String) -> Shown {
        Shown::As(s.clone())
    }
}

impl From<Msg> for Shown {
    fn from(m: Msg) -> Shown {
        Shown::Said(m)
    }
}

impl Shown {
    fn split(self) -> (String, Option<Msg>) {
        match self {
            Shown::As(s) => (s, None),
            Shown::Said(m) => (m.text(), Some(m)),
        }
    }
}

/// An expectation's verdict: passed when the two values read the same.
fn check(
    what: impl Into<Shown>,
    expected: impl Into<Shown>,
    got: impl Into<Shown>,
    implicit: bool,
) -> Check {
    let (what, what_msg) = what.into().split();
    let (expected, expected_msg) = expected.into().split();
    let (got, got_msg) = got.into().split();
    Check {
        passed: expected == got,
        what,
        expected,
        got,
        implicit,
        what_msg,
        expected_msg,
        got_msg,
    }
}

/// The verdict of a step that did not run: every step is expected to run.
fn skipped_check(why: Msg) -> Check {
    Check {
        passed: false,
        ..check(
            msg!(CheckStepRan),
            msg!(CheckRan),
            msg!(CheckSkipped, why),
            true,
        )
    }
}

/// How many completions a `poll_cq` with `wait` waits for: what the expectations name, else 1.
fn wanted_completions(e: &Expect, p: NicProfile) -> usize {
    e.completions
        .as_ref()
        .and_then(|c| c.get(p).copied())
        .or_else(|| e.wc.as_ref().map(Vec::len))
        .unwrap_or(1)
        .max(1)
}

/// The handles a call defines.
fn outputs(call: &Call) -> Vec<HandleId> {
    match call {
        Call::AllocPd { out, .. }
        | Call::Alloc { out, .. }
        | Call::RegMr { out, .. }
        | Call::CreateCq { out, .. }
        | Call::CreateQp { out, .. }
        | Call::CreateCompChannel { out, .. } => vec![*out],
        Call::Connect { pd, cq, qp, .. } => vec![pd[0], pd[1], cq[0], cq[1], qp[0], qp[1]],
        _ => Vec::new(),
    }
}

/// The host a call runs on (`connect` runs on its first host).
pub(crate) fn step_host(s: &Session, call: &Call) -> Option<HostId> {
    match call {
        Call::AllocPd { host, .. }
        | Call::Alloc { host, .. }
        | Call::CreateCq { host, .. }
        | Call::CreateCompChannel { host, .. } => Some(*host),
        Call::ReqNotifyCq { cq, .. } | Call::AckCqEvents { cq, .. } => Some(s.handle(*cq).host),
        Call::GetAsyncEvent { host, .. } | Call::AckAsyncEvent { host } => Some(*host),
        Call::GetCqEvent { channel, .. } | Call::DestroyCompChannel { channel } => {
            Some(s.handle(*channel).host)
        }
        Call::RegMr { pd, .. } | Call::CreateQp { pd, .. } => Some(s.handle(*pd).host),
        Call::ModifyQp { qp, .. }
        | Call::QueryQp { qp }
        | Call::PostSend { qp, .. }
        | Call::PostRecv { qp, .. } => Some(s.handle(*qp).host),
        Call::PollCq { cq, .. } | Call::DestroyCq { cq } => Some(s.handle(*cq).host),
        Call::DestroyQp { qp } => Some(s.handle(*qp).host),
        Call::DeregMr { mr } => Some(s.handle(*mr).host),
        Call::DeallocPd { pd } => Some(s.handle(*pd).host),
        Call::Connect { hosts, .. } => Some(hosts[0]),
        Call::Run { .. } => None,
        Call::WriteMemory { at, .. } | Call::ReadMemory { at, .. } => {
            Some(s.handle(at.handle).host)
        }
    }
}

fn mem_name(s: &Session, at: MemRef) -> String {
    format!("{}+{}", s.name(at.handle), at.offset)
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn printable(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if (0x20..0x7f).contains(&c) {
                c as char
            } else {
                '.'
            }
        })
        .collect()
}

fn show_bytes(b: &[u8], form: DataForm) -> String {
    match form {
        DataForm::Text => format!("{:?}", String::from_utf8_lossy(b)),
        DataForm::Hex => hex(b),
        DataForm::U64 => {
            let mut w = [0u8; 8];
            let n = b.len().min(8);
            w[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(w).to_string()
        }
    }
}

/// The call with its arguments, as the report shows it.
pub(crate) fn describe(s: &Session, call: &Call) -> String {
    let n = |h: HandleId| s.name(h).to_string();
    let sges = |list: &[SgePlan]| -> String {
        let v: Vec<String> = list
            .iter()
            .map(|g| {
                let mut t = format!("{}+{}", n(g.mr), g.offset);
                if let Some(l) = g.len {
                    t.push_str(&format!(" len {l}"));
                }
                if let Some(k) = g.lkey {
                    t.push_str(&format!(" lkey {k:#x}"));
                }
                t
            })
            .collect();
        format!("[{}]", v.join(", "))
    };
    match call {
        Call::AllocPd { host, out } => format!("alloc_pd({}) as {}", s.host_name(*host), n(*out)),
        Call::Alloc { host, out, len, .. } => {
            format!("alloc({}, {len} bytes) as {}", s.host_name(*host), n(*out))
        }
        Call::RegMr {
            pd,
            buf,
            offset,
            len,
            access,
            out,
        } => format!(
            "reg_mr({}, {}+{offset}, {len}, {access}) as {}",
            n(*pd),
            n(*buf),
            n(*out)
        ),
        Call::CreateCq {
            host,
            cqe,
            channel,
            out,
        } => match channel {
            Some(ch) => format!(
                "create_cq({}, cqe {cqe}, channel {}) as {}",
                s.host_name(*host),
                n(*ch),
                n(*out)
            ),
            None => format!(
                "create_cq({}, cqe {cqe}) as {}",
                s.host_name(*host),
                n(*out)
            ),
        },
        Call::CreateCompChannel { host, out } => {
            format!("create_comp_channel({}) as {}", s.host_name(*host), n(*out))
        }
        Call::DestroyCompChannel { channel } => format!("destroy_comp_channel({})", n(*channel)),
        Call::ReqNotifyCq { cq, solicited_only } => {
            format!(
                "req_notify_cq({}, solicited_only {})",
                n(*cq),
                u8::from(*solicited_only)
            )
        }
        Call::GetCqEvent { channel, wait } => {
            format!("get_cq_event({}, block up to {wait})", n(*channel))
        }
        Call::AckCqEvents { cq, n: k } => format!("ack_cq_events({}, {k})", n(*cq)),
        Call::GetAsyncEvent { host, wait } => {
            format!(
                "get_async_event({}, block up to {wait})",
                s.host_name(*host)
            )
        }
        Call::AckAsyncEvent { host } => format!("ack_async_event({})", s.host_name(*host)),
        Call::CreateQp {
            pd,
            send_cq,
            recv_cq,
            qp_type,
            cap,
            sq_sig_all,
            out,
        } => format!(
            "create_qp({}, {qp_type}, send_cq {}, recv_cq {}, max_send_wr {}, max_recv_wr {}, max_send_sge {}, max_recv_sge {}, max_inline_data {}{}) as {}",
            n(*pd),
            n(*send_cq),
            n(*recv_cq),
            cap.max_send_wr,
            cap.max_recv_wr,
            cap.max_send_sge,
            cap.max_recv_sge,
            cap.max_inline_data,
            if *sq_sig_all { ", sq_sig_all" } else { "" },
            n(*out)
        ),
        Call::ModifyQp { qp, attr, mask } => {
            let mut t = format!("modify_qp({}", n(*qp));
            if mask.contains(verbs::QpAttrMask::STATE) {
                t.push_str(&format!(" → {}", attr.attr.qp_state));
            }
            if let Some(d) = attr.dest_qp {
                match d {
                    QpRef::Handle(h) => t.push_str(&format!(", dest_qp {}", n(h))),
                    QpRef::Number(q) => t.push_str(&format!(", dest_qp {q:#x}")),
                }
            }
            if let Some(h) = attr.av {
                t.push_str(&format!(", av → {}", s.host_name(h)));
            }
            let a = &attr.attr;
            for key in &attr.given {
                let value = match *key {
                    "cur_state" => a.cur_qp_state.to_string(),
                    "en_sqd_async_notify" => a.en_sqd_async_notify.to_string(),
                    "access" => a.qp_access_flags.to_string(),
                    "pkey_index" => a.pkey_index.to_string(),
                    "port" => a.port_num.to_string(),
                    "qkey" => format!("{:#x}", a.qkey),
                    "path_mtu" => a.path_mtu.to_string(),
                    "timeout" => a.timeout.to_string(),
                    "retry_cnt" => a.retry_cnt.to_string(),
                    "rnr_retry" => a.rnr_retry.to_string(),
                    "rq_psn" => a.rq_psn.to_string(),
                    "max_rd_atomic" => a.max_rd_atomic.to_string(),
                    "min_rnr_timer" => a.min_rnr_timer.to_string(),
                    "sq_psn" => a.sq_psn.to_string(),
                    "max_dest_rd_atomic" => a.max_dest_rd_atomic.to_string(),
                    "path_mig_state" => a.path_mig_state.to_string(),
                    // state, dest_qp and av are shown above.
                    _ => continue,
                };
                t.push_str(&format!(", {key} {value}"));
            }
            t.push_str(&format!(", mask {mask})"));
            t
        }
        Call::QueryQp { qp } => format!("query_qp({})", n(*qp)),
        Call::PostSend { qp, wrs } => {
            let v: Vec<String> = wrs
                .iter()
                .map(|w| {
                    let mut t = format!("{} wr_id {}", opcode_name(w.opcode), w.wr_id);
                    if !w.flags.is_empty() {
                        t.push_str(&format!(" {}", w.flags));
                    }
                    t.push_str(&format!(" sge {}", sges(&w.sges)));
                    if let Some(r) = &w.remote {
                        let key = match r.rkey {
                            KeyRef::Mr(m) => n(m),
                            KeyRef::Raw(k) => format!("{k:#x}"),
                        };
                        t.push_str(&format!(" → {}+{} rkey {key}", n(r.target), r.offset));
                    }
                    if let Some(u) = &w.ud {
                        t.push_str(&format!(" → {} qkey {:#x}", n(u.qp), u.qkey));
                    }
                    if w.opcode.has_imm() {
                        t.push_str(&format!(" imm {:#x}", w.imm));
                    }
                    match w.opcode {
                        verbs::SendOpcode::AtomicCmpAndSwp => {
                            t.push_str(&format!(" compare {} swap {}", w.compare_add, w.swap))
                        }
                        verbs::SendOpcode::AtomicFetchAndAdd => {
                            t.push_str(&format!(" add {}", w.compare_add))
                        }
                        _ => {}
                    }
                    t
                })
                .collect();
            format!("post_send({}, [{}])", n(*qp), v.join("; "))
        }
        Call::PostRecv { qp, wrs } => {
            let v: Vec<String> = wrs
                .iter()
                .map(|w| format!("wr_id {} sge {}", w.wr_id, sges(&w.sges)))
                .collect();
            format!("post_recv({}, [{}])", n(*qp), v.join("; "))
        }
        Call::PollCq { cq, max, wait } => match wait {
            Some(w) => format!("poll_cq({}, max {max}, wait up to {w})", n(*cq)),
            None => format!("poll_cq({}, max {max})", n(*cq)),
        },
        Call::Connect { hosts, qp, .. } => format!(
            "connect({} ⇄ {}) as {} / {}",
            s.host_name(hosts[0]),
            s.host_name(hosts[1]),
            n(qp[0]),
            n(qp[1])
        ),
        Call::DestroyQp { qp } => format!("destroy_qp({})", n(*qp)),
        Call::DestroyCq { cq } => format!("destroy_cq({})", n(*cq)),
        Call::DeregMr { mr } => format!("dereg_mr({})", n(*mr)),
        Call::DeallocPd { pd } => format!("dealloc_pd({})", n(*pd)),
        Call::Run { duration } => format!("run {duration}"),
        Call::WriteMemory { at, data } => {
            format!("write_memory({}, {} byte(s))", mem_name(s, *at), data.len())
        }
        Call::ReadMemory { at, len } => format!("read_memory({}, {len})", mem_name(s, *at)),
    }
}
