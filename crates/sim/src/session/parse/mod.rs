//! TOML text → [`Session`] in one pass ("parse, don't validate").
//!
//! The document is read with `toml`'s spanned tree through the toolkit scenario files share
//! ([`scenario::spanned`]), so every error can point at the key or value at fault:
//! [`ParseError`] carries the line and column, and its message names the key and what is
//! allowed. Which keys each table and each call takes, their ranges and defaults, are declared
//! once in `keys.rs`. Handles are resolved while reading: a step may only name handles that
//! earlier steps defined, of the kind it needs, on the host it runs on.
//!
//! - this file: the document, the fabric, the hosts, and a step's dispatch to its call;
//! - `keys.rs`: the declarations; `read.rs`: the generic readers (integers in declared ranges,
//!   hosts, handles, durations); `vocab.rs`: names from the verbs vocabularies, byte literals;
//! - `calls.rs`: the object calls and `connect`; `post.rs`: `post_send` and `post_recv` with
//!   their WRs and SGEs; `expect.rs`: a step's expectations.

mod calls;
mod expect;
pub(crate) mod keys;
mod post;
mod read;
mod vocab;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use scenario::spanned::{self, LineIndex};
use toml::Spanned;
use toml::de::DeTable;
use units::SimDuration;
use verbs::NicProfile;

use super::msg::{Msg, MsgId, msg};
use super::plan::{
    Call, DropPlan, Expect, FabricPlan, HandleId, HandleInfo, HandleKind, HostId, MemRef, Session,
    Step, TopologyKind, limits,
};
use read::{Fields, Val, Want, found, join};
use vocab::Vocab;

pub use keys::markdown as keys_markdown;
pub(crate) use vocab::{ATTR_KEYS, opcode_name, status_name, wc_opcode_name};

/// A malformed session file: where, and what is wrong.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// Byte range of the offending text.
    pub span: Range<usize>,
    /// What is wrong, naming the key and what is allowed (`msg` in English).
    pub message: String,
    /// The same as a message id and its arguments, for readers in another language.
    pub msg: Msg,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a session file.
pub fn parse(src: &str) -> std::result::Result<Session, ParseError> {
    let mut p = Parser {
        lines: LineIndex::new(src),
        hosts: Vec::new(),
        handles: Vec::new(),
        by_name: BTreeMap::new(),
        total_buffers: 0,
        total_time: SimDuration::ZERO,
        total_read: 0,
        qps_per_host: Vec::new(),
    };
    if src.len() > limits::MAX_FILE_BYTES {
        return p.err(
            0..0,
            msg!(
                RefusalFileTooLarge,
                bytes = src.len(),
                max = limits::MAX_FILE_BYTES
            ),
        );
    }
    let doc = match spanned::document(src) {
        Ok(doc) => doc,
        Err((span, why)) => {
            let why = super::syntax::toml_syntax(&why);
            return p.err(span, msg!(RefusalInvalidToml, why));
        }
    };
    p.document(&doc)
}

type Result<T> = std::result::Result<T, ParseError>;

/// The state of one pass over a file: the hosts and handles defined so far and the totals the
/// limits bound.
struct Parser<'s> {
    lines: LineIndex<'s>,
    hosts: Vec<String>,
    handles: Vec<HandleInfo>,
    by_name: BTreeMap<String, HandleId>,
    total_buffers: u64,
    total_time: SimDuration,
    /// Bytes the `read_memory` steps so far show.
    total_read: u64,
    qps_per_host: Vec<usize>,
}

impl Parser<'_> {
    /// The error `msg` at `span`.
    fn error(&self, span: Range<usize>, msg: Msg) -> ParseError {
        let (line, column) = self.lines.line_col(span.start);
        ParseError {
            line,
            column,
            span,
            message: msg.text(),
            msg,
        }
    }

    fn err<T>(&self, span: Range<usize>, msg: Msg) -> Result<T> {
        Err(self.error(span, msg))
    }

    fn line(&self, span: &Range<usize>) -> usize {
        self.lines.line_col(span.start).0
    }

    // ---- the document ----

    fn document(&mut self, doc: &Spanned<DeTable<'_>>) -> Result<Session> {
        let root = Fields {
            table: doc.get_ref(),
            span: doc.span(),
            what: msg!(CtxTop),
            keys: &[keys::TOP],
        };
        self.check_keys(&root)?;
        let profile = match root.get("profile") {
            None => NicProfile::Mlx5,
            Some(v) => NicProfile::ALL[self.name_in(v, "profile", Vocab::Profile)?],
        };
        let seed = self.opt_int(&root, "seed")?;
        let fabric_v = root.get("fabric");
        let topology = match fabric_v {
            Some(v) => {
                let f = self.fields(v, MsgId::CtxFabric, &[keys::FABRIC])?;
                match f.get("topology") {
                    None => TopologyKind::BackToBack,
                    Some(t) => {
                        // In the order of `Vocab::Topology`'s names.
                        let kinds = [TopologyKind::BackToBack, TopologyKind::Switch];
                        kinds[self.name_in(t, "topology", Vocab::Topology)?]
                    }
                }
            }
            None => TopologyKind::BackToBack,
        };
        self.hosts_of(&root, topology)?;
        let fabric = match fabric_v {
            Some(v) => self.fabric(v, topology)?,
            None => FabricPlan {
                topology,
                rate_gbps: keys::default_int(keys::FABRIC, "rate_gbps"),
                cable_m: keys::default_int(keys::FABRIC, "cable_m"),
                loss: 0.0,
                drops: Vec::new(),
            },
        };
        let Some(steps_v) = root.get("step") else {
            return self.err(0..0, msg!(RefusalNoStepsAdd));
        };
        let items = self.array_of(steps_v, "step")?;
        if items.len() > limits::MAX_STEPS {
            return self.err(
                steps_v.span(),
                msg!(
                    RefusalTooManySteps,
                    n = items.len(),
                    max = limits::MAX_STEPS
                ),
            );
        }
        let mut steps = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            steps.push(self.step(item, i + 1)?);
        }
        if steps.is_empty() {
            return self.err(steps_v.span(), msg!(RefusalNoSteps));
        }
        Ok(Session {
            profile,
            seed,
            fabric,
            hosts: std::mem::take(&mut self.hosts),
            handles: std::mem::take(&mut self.handles),
            steps,
        })
    }

    fn hosts_of(&mut self, root: &Fields<'_, '_>, topology: TopologyKind) -> Result<()> {
        let v = self.req(root, "hosts")?;
        let items = self.array_of(v, "hosts")?;
        let (lo, hi) = match topology {
            TopologyKind::BackToBack => (2, 2),
            TopologyKind::Switch => (2, limits::MAX_HOSTS),
        };
        if !(lo..=hi).contains(&items.len()) {
            return self.err(
                v.span(),
                msg!(
                    RefusalHostCount,
                    n = items.len(),
                    topology = topology.name(),
                    takes = if lo == hi {
                        msg!(CtxExactly, n = lo)
                    } else {
                        msg!(CtxRange, lo, hi)
                    }
                ),
            );
        }
        for item in items {
            let name = self.name_of(item, "hosts")?;
            if self.hosts.contains(&name) {
                return self.err(item.span(), msg!(RefusalHostTwice, name = &name));
            }
            self.hosts.push(name);
        }
        self.qps_per_host = vec![0; self.hosts.len()];
        Ok(())
    }

    fn fabric(&self, v: &Val<'_>, topology: TopologyKind) -> Result<FabricPlan> {
        let f = self.fields(v, MsgId::CtxFabric, &[keys::FABRIC])?;
        self.check_keys(&f)?;
        let rate_gbps = self.opt_int(&f, "rate_gbps")?;
        let cable_m = self.opt_int(&f, "cable_m")?;
        let loss = match f.get("loss") {
            None => 0.0,
            Some(l) => match spanned::probability(l.get_ref()) {
                Ok(p) => p,
                Err(spanned::Fault::WrongType(_)) => {
                    return self.err(
                        l.span(),
                        msg!(RefusalLossNumber, found = found(l.get_ref())),
                    );
                }
                Err(spanned::Fault::OutOfRange) => {
                    return self.err(l.span(), msg!(RefusalLossRange));
                }
            },
        };
        let mut drops = Vec::new();
        if let Some(d) = f.get("drop") {
            for item in self.array_of(d, "drop")? {
                let df = self.fields(item, MsgId::CtxDrop, &[keys::DROP])?;
                self.check_keys(&df)?;
                let from = self.host_of(self.req(&df, "from")?, "from")?;
                let (nth, _) = self.req_int(&df, "nth")?;
                let count = self.opt_int(&df, "count")?;
                drops.push(DropPlan { from, nth, count });
            }
        }
        Ok(FabricPlan {
            topology,
            rate_gbps,
            cable_m,
            loss,
            drops,
        })
    }

    // ---- steps ----

    fn step(&mut self, v: &Val<'_>, index: usize) -> Result<Step> {
        let f = self.fields(v, msg!(CtxStep, step = index), &[keys::STEP_COMMON])?;
        let Some(call_v) = f.get("call") else {
            return self.err(
                f.span.clone(),
                msg!(
                    RefusalNoCall,
                    step = index,
                    allowed = join(Vocab::Call.names())
                ),
            );
        };
        let decl = &keys::CALLS[self.name_in(call_v, "call", Vocab::Call)?];
        let call_name = decl.name;
        let f = Fields {
            what: msg!(CtxStepCall, step = index, call = call_name),
            keys: decl.keys,
            ..f
        };
        let (line, column) = self.lines.line_col(f.span.start);
        self.check_keys(&f)?;
        let call = match call_name {
            "alloc_pd" => {
                let host = self.step_host(&f)?;
                let out = self.define(self.req(&f, "as")?, "as", HandleKind::Pd, host)?;
                Call::AllocPd { host, out }
            }
            "alloc" => self.alloc(&f)?,
            "reg_mr" => self.reg_mr(&f)?,
            "create_cq" => {
                let host = self.step_host(&f)?;
                let cqe = self.opt_int(&f, "cqe")? as u32;
                let channel = match f.get("channel") {
                    Some(v) => {
                        let ch = self.handle_of(v, "channel", Want::Channel)?;
                        self.same_host(ch, host, v, "channel", MsgId::WhyTheCq)?;
                        Some(ch)
                    }
                    None => None,
                };
                let out = self.define(self.req(&f, "as")?, "as", HandleKind::Cq, host)?;
                Call::CreateCq {
                    host,
                    cqe,
                    channel,
                    out,
                }
            }
            "create_qp" => self.create_qp(&f)?,
            "modify_qp" => self.modify_qp(&f)?,
            "query_qp" => {
                let qp = self.req_handle(&f, "qp")?;
                self.check_host(&f, self.handles[qp.0].host)?;
                Call::QueryQp { qp }
            }
            "post_send" => self.post_send(&f)?,
            "post_recv" => self.post_recv(&f)?,
            "poll_cq" => {
                let cq = self.req_handle(&f, "cq")?;
                self.check_host(&f, self.handles[cq.0].host)?;
                let max = self.opt_int(&f, "max")? as u32;
                let wait = match f.get("wait") {
                    Some(w) => {
                        let d = self.duration_of(w, "wait")?;
                        self.add_time(d, w.span())?;
                        Some(d)
                    }
                    None => None,
                };
                Call::PollCq { cq, max, wait }
            }
            "connect" => self.connect(&f)?,
            "destroy_qp" => Call::DestroyQp {
                qp: self.step_handle(&f, "qp")?,
            },
            "destroy_cq" => Call::DestroyCq {
                cq: self.step_handle(&f, "cq")?,
            },
            "dereg_mr" => Call::DeregMr {
                mr: self.step_handle(&f, "mr")?,
            },
            "dealloc_pd" => Call::DeallocPd {
                pd: self.step_handle(&f, "pd")?,
            },
            "create_comp_channel" => {
                let host = self.step_host(&f)?;
                let out = self.define(self.req(&f, "as")?, "as", HandleKind::Channel, host)?;
                Call::CreateCompChannel { host, out }
            }
            "destroy_comp_channel" => Call::DestroyCompChannel {
                channel: self.step_handle(&f, "channel")?,
            },
            "req_notify_cq" => {
                let cq = self.step_handle(&f, "cq")?;
                let solicited_only = self.opt_bool(&f, "solicited_only")?;
                Call::ReqNotifyCq { cq, solicited_only }
            }
            "get_cq_event" => {
                let channel = self.step_handle(&f, "channel")?;
                let v = self.req(&f, "wait")?;
                let wait = self.duration_of(v, "wait")?;
                self.add_time(wait, v.span())?;
                Call::GetCqEvent { channel, wait }
            }
            "ack_cq_events" => {
                let cq = self.step_handle(&f, "cq")?;
                let n = self.opt_int(&f, "n")? as u32;
                Call::AckCqEvents { cq, n }
            }
            "get_async_event" => {
                let host = self.step_host(&f)?;
                let v = self.req(&f, "wait")?;
                let wait = self.duration_of(v, "wait")?;
                self.add_time(wait, v.span())?;
                Call::GetAsyncEvent { host, wait }
            }
            "ack_async_event" => Call::AckAsyncEvent {
                host: self.step_host(&f)?,
            },
            "run" => {
                let v = self.req(&f, "for")?;
                let duration = self.duration_of(v, "for")?;
                self.add_time(duration, v.span())?;
                Call::Run { duration }
            }
            "write_memory" => {
                let (at, _) = self.mem_ref(&f)?;
                self.check_host(&f, self.handles[at.handle.0].host)?;
                let Some((data, span)) = self.data_of(&f)? else {
                    return self.err(
                        f.span.clone(),
                        msg!(RefusalNeedsBytes, what = f.what.clone()),
                    );
                };
                self.check_fits(at, data.len() as u64, span)?;
                Call::WriteMemory { at, data }
            }
            "read_memory" => {
                let (at, _) = self.mem_ref(&f)?;
                self.check_host(&f, self.handles[at.handle.0].host)?;
                let (len, len_span) = self.req_int(&f, "len")?;
                self.check_fits(at, len, len_span.clone())?;
                // Each shown byte costs a few in the report (hex and text): the sum is bounded
                // so a session's answer stays small whatever its steps.
                let total = self.total_read.saturating_add(len);
                if total > limits::MAX_READ_TOTAL_BYTES {
                    return self.err(
                        len_span,
                        msg!(
                            RefusalReadTotal,
                            len,
                            total,
                            max = limits::MAX_READ_TOTAL_BYTES
                        ),
                    );
                }
                self.total_read = total;
                Call::ReadMemory { at, len }
            }
            _ => unreachable!("checked against CALLS"),
        };
        let no_completion = match f.get("expect_no_completion") {
            Some(v) => {
                let d = self.duration_of(v, "expect_no_completion")?;
                let has_cq = matches!(
                    call,
                    Call::PollCq { .. }
                        | Call::ModifyQp { .. }
                        | Call::QueryQp { .. }
                        | Call::PostSend { .. }
                        | Call::PostRecv { .. }
                );
                if !has_cq {
                    return self.err(v.span(), msg!(RefusalNoCompletionCall, call = call_name));
                }
                self.add_time(d, v.span())?;
                Some(d)
            }
            None => None,
        };
        let expect = match f.get("expect") {
            Some(v) => self.expect(v, &call)?,
            None => Expect::default(),
        };
        Ok(Step {
            line,
            column,
            span: f.span.clone(),
            call,
            expect,
            no_completion,
        })
    }

    /// For buffer handles (whose length is known), refuses accesses past the end.
    fn check_fits(&self, at: MemRef, len: u64, span: Range<usize>) -> Result<()> {
        if let HandleKind::Buffer { len: blen } = self.handles[at.handle.0].kind
            && at.offset.saturating_add(len) > blen
        {
            return self.err(
                span,
                msg!(
                    RefusalPastEnd,
                    len,
                    offset = at.offset,
                    name = &self.handles[at.handle.0].name,
                    blen
                ),
            );
        }
        Ok(())
    }

    fn count_qp(&mut self, host: HostId, span: Range<usize>) -> Result<()> {
        self.qps_per_host[host.0] += 1;
        if self.qps_per_host[host.0] > limits::MAX_QPS_PER_HOST {
            return self.err(
                span,
                msg!(
                    RefusalTooManyQps,
                    host = &self.hosts[host.0],
                    max = limits::MAX_QPS_PER_HOST
                ),
            );
        }
        Ok(())
    }
}
