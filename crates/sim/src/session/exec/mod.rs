//! Runs a [`Session`] against a [`World`] and records every step.
//!
//! Calls happen at the world's current simulated time; only `run`, `poll_cq` with `wait` and
//! `expect_no_completion` advance it. Every advance runs under an [`engine::Budget`] whose
//! event and wall-clock allowances are shared by the whole session, so a session stops with a
//! named budget rather than running on.
//!
//! - this file: building the world, the session loop, the handles' bindings, a step's frame;
//! - `call.rs`: each call against the world; `check.rs`: the expectations;
//! - `view.rs`: the objects, buffers and frames each step records; `describe.rs`: the call as
//!   the report writes it.

mod call;
mod check;
mod describe;
mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::time::{Duration, Instant};

use engine::{Budget, BudgetExceeded, Observer, TraceRecord, Tracer};
use fabric::{DropRule, FabricConfig, LinkConfig, Topology};
use units::{Bandwidth, FlowId, Probability, SimDuration, SimTime};
use verbs::{ChannelHandle, CqHandle, Errno, Mr, NicProfile, PdHandle, QpNum, Wc};

use super::msg::{Msg, MsgId, msg};
use super::plan::{
    Call, HandleId, HandleKind, HostId, MemRef, Ret, Session, Step, TopologyKind, limits,
};
use super::report::{Outcome, Report, StepRecord, StepState, Summary};
use crate::world::{World, WorldError};
use check::skipped_check;
pub(crate) use describe::{describe, step_host};

/// How to run a session.
#[derive(Default)]
pub struct RunOptions {
    /// Run under this NIC profile instead of the file's.
    pub profile: Option<NicProfile>,
    /// Write every frame to this pcap.
    pub pcap: Option<Box<dyn Write + Send>>,
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
}
