//! TOML text → [`Session`] in one pass ("parse, don't validate").
//!
//! The document is read with `toml`'s spanned tree ([`DeTable`]), so every error can point at
//! the key or value at fault: [`ParseError`] carries the line and column, and its message names
//! the key and what is allowed. Handles are resolved while reading: a step may only name
//! handles that earlier steps defined, of the kind it needs, on the host it runs on.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};
use units::SimDuration;
use verbs::types::{Mtu, QpState, QpType};
use verbs::{AccessFlags, Errno, NicProfile, QpAttr, QpAttrMask, QpCap, SendFlags, SendOpcode};
use verbs::{WcOpcode, WcStatus};

use super::msg::{Arg, Msg, MsgId, list, msg};
use super::plan::{
    AttrPlan, Call, DataForm, DropPlan, EventExpect, Expect, FabricPlan, Fill, HandleId,
    HandleInfo, HandleKind, HostId, KeyRef, MemExpect, MemRef, PerProfile, QpRef, Recovery,
    RecvWrPlan, RemotePlan, Ret, SendWrPlan, Session, SgePlan, Step, TopologyKind, UdPlan,
    WcExpect, limits,
};
use crate::world::RcOptions;

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

/// 1-based (line, column) of byte offset `at` in `src`.
pub(crate) fn line_col(src: &str, at: usize) -> (usize, usize) {
    LineIndex::new(src).line_col(src, at)
}

/// The byte offset where each line starts, to find lines without rescanning the file.
struct LineIndex {
    starts: Vec<usize>,
    /// The last position asked for and its column: columns further along the same line are
    /// counted from there (a file may hold every step on one long line).
    last: std::cell::Cell<(usize, usize)>,
}

impl LineIndex {
    fn new(src: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            starts,
            last: std::cell::Cell::new((0, 1)),
        }
    }

    fn line_col(&self, src: &str, at: usize) -> (usize, usize) {
        let at = at.min(src.len());
        let line = self.starts.partition_point(|&s| s <= at);
        let start = self.starts[line - 1];
        let (last_at, last_col) = self.last.get();
        let (from, col) = if last_at >= start && last_at <= at {
            (last_at, last_col)
        } else {
            (start, 1)
        };
        // Characters, not bytes: count the bytes that start a UTF-8 sequence.
        let column = col
            + src.as_bytes()[from..at]
                .iter()
                .filter(|&&b| b & 0xC0 != 0x80)
                .count();
        self.last.set((at, column));
        (line, column)
    }
}

/// Parses a session file.
pub fn parse(src: &str) -> std::result::Result<Session, ParseError> {
    if src.len() > limits::MAX_FILE_BYTES {
        return Err(error_at(
            src,
            0..0,
            msg!(
                RefusalFileTooLarge,
                bytes = src.len(),
                max = limits::MAX_FILE_BYTES
            ),
        ));
    }
    let doc = DeTable::parse(src).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let msg = e.message().trim_end().to_string();
        error_at(
            src,
            span,
            msg!(RefusalInvalidToml, why = super::syntax::toml_syntax(&msg)),
        )
    })?;
    let mut p = Parser {
        src,
        lines: LineIndex::new(src),
        hosts: Vec::new(),
        handles: Vec::new(),
        by_name: BTreeMap::new(),
        total_buffers: 0,
        total_time: SimDuration::ZERO,
        total_read: 0,
        qps_per_host: Vec::new(),
    };
    p.document(&doc)
}

fn error_at(src: &str, span: Range<usize>, msg: Msg) -> ParseError {
    let (line, column) = line_col(src, span.start);
    ParseError {
        line,
        column,
        span,
        message: msg.text(),
        msg,
    }
}

type Result<T> = std::result::Result<T, ParseError>;
type Val<'i> = Spanned<DeValue<'i>>;

const TOP_KEYS: &[&str] = &["fabric", "hosts", "profile", "seed", "step"];
const FABRIC_KEYS: &[&str] = &["cable_m", "drop", "loss", "rate_gbps", "topology"];
const DROP_KEYS: &[&str] = &["count", "from", "nth"];
const CALLS: &[&str] = &[
    "alloc_pd",
    "alloc",
    "reg_mr",
    "create_cq",
    "create_qp",
    "modify_qp",
    "query_qp",
    "post_send",
    "post_recv",
    "poll_cq",
    "connect",
    "run",
    "write_memory",
    "read_memory",
    "destroy_qp",
    "destroy_cq",
    "dereg_mr",
    "dealloc_pd",
    "create_comp_channel",
    "destroy_comp_channel",
    "req_notify_cq",
    "get_cq_event",
    "ack_cq_events",
    "get_async_event",
    "ack_async_event",
];
const STEP_COMMON: &[&str] = &["call", "expect", "expect_no_completion"];
const SEND_WR_KEYS: &[&str] = &[
    "add", "compare", "flags", "imm", "opcode", "remote", "sge", "swap", "ud", "wr_id",
];
const UD_KEYS: &[&str] = &["qkey", "qp"];
const RECV_WR_KEYS: &[&str] = &["sge", "wr_id"];
const SGE_KEYS: &[&str] = &["len", "lkey", "mr", "offset"];
const REMOTE_KEYS: &[&str] = &["buf", "mr", "offset", "rkey"];
const EVENT_KEYS: &[&str] = &["cq", "qp", "type"];
const EXPECT_KEYS: &[&str] = &[
    "bad_wr",
    "completions",
    "event",
    "memory",
    "qp_states",
    "ret",
    "sq_draining",
    "state",
    "wc",
];
const WC_KEYS: &[&str] = &[
    "byte_len", "grh", "imm_data", "opcode", "qp", "src_qp", "status", "wr_id",
];
const MEM_KEYS: &[&str] = &["buf", "hex", "mr", "offset", "text", "u64"];
const ERRNOS: &[Errno] = &Errno::ALL;
const OPCODES: &[SendOpcode] = &[
    SendOpcode::Send,
    SendOpcode::SendWithImm,
    SendOpcode::RdmaWrite,
    SendOpcode::RdmaWriteWithImm,
    SendOpcode::RdmaRead,
    SendOpcode::AtomicCmpAndSwp,
    SendOpcode::AtomicFetchAndAdd,
];
/// Every `ibv_wc_status`, in verbs.h order.
pub(crate) const WC_STATUSES: &[WcStatus] = &WcStatus::ALL;
const WC_OPCODES: &[WcOpcode] = &[
    WcOpcode::Send,
    WcOpcode::RdmaWrite,
    WcOpcode::RdmaRead,
    WcOpcode::CompSwap,
    WcOpcode::FetchAdd,
    WcOpcode::Recv,
    WcOpcode::RecvRdmaWithImm,
];

/// The `modify_qp` attribute keys and the mask bit each belongs to.
pub(crate) const ATTR_KEYS: &[(&str, QpAttrMask)] = &[
    ("state", QpAttrMask::STATE),
    ("cur_state", QpAttrMask::CUR_STATE),
    ("en_sqd_async_notify", QpAttrMask::EN_SQD_ASYNC_NOTIFY),
    ("access", QpAttrMask::ACCESS_FLAGS),
    ("pkey_index", QpAttrMask::PKEY_INDEX),
    ("port", QpAttrMask::PORT),
    ("qkey", QpAttrMask::QKEY),
    ("av", QpAttrMask::AV),
    ("path_mtu", QpAttrMask::PATH_MTU),
    ("timeout", QpAttrMask::TIMEOUT),
    ("retry_cnt", QpAttrMask::RETRY_CNT),
    ("rnr_retry", QpAttrMask::RNR_RETRY),
    ("rq_psn", QpAttrMask::RQ_PSN),
    ("max_rd_atomic", QpAttrMask::MAX_QP_RD_ATOMIC),
    ("min_rnr_timer", QpAttrMask::MIN_RNR_TIMER),
    ("sq_psn", QpAttrMask::SQ_PSN),
    ("max_dest_rd_atomic", QpAttrMask::MAX_DEST_RD_ATOMIC),
    ("path_mig_state", QpAttrMask::PATH_MIG_STATE),
    ("dest_qp", QpAttrMask::DEST_QPN),
];

/// The short name of a work-completion status (`"WR_FLUSH_ERR"`).
pub(crate) fn status_name(s: WcStatus) -> &'static str {
    s.const_name().trim_start_matches("IBV_WC_")
}

/// The short name of a work-completion opcode (`"RECV"`).
pub(crate) fn wc_opcode_name(o: WcOpcode) -> &'static str {
    o.const_name().trim_start_matches("IBV_WC_")
}

/// The short name of a send opcode (`"RDMA_WRITE"`).
pub(crate) fn opcode_name(o: SendOpcode) -> &'static str {
    o.const_name().trim_start_matches("IBV_WR_")
}

/// Names as a list argument (the English joins them with ", ").
fn join<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> Arg {
    list(items.into_iter().map(|s| s.as_ref().to_string()))
}

/// A TOML value's type, as a message argument ("found a string").
fn found(v: &DeValue<'_>) -> MsgId {
    match v {
        DeValue::String(_) => MsgId::TypeString,
        DeValue::Integer(_) => MsgId::TypeInteger,
        DeValue::Float(_) => MsgId::TypeFloat,
        DeValue::Boolean(_) => MsgId::TypeBoolean,
        DeValue::Datetime(_) => MsgId::TypeDatetime,
        DeValue::Array(_) => MsgId::TypeArray,
        DeValue::Table(_) => MsgId::TypeTable,
    }
}

/// A handle's kind with its article ("a QP"), as a message argument.
fn kind_msg(k: HandleKind) -> MsgId {
    match k {
        HandleKind::Buffer { .. } => MsgId::KindBuffer,
        HandleKind::Channel => MsgId::KindChannel,
        HandleKind::Cq => MsgId::KindCq,
        HandleKind::Mr => MsgId::KindMr,
        HandleKind::Pd => MsgId::KindPd,
        HandleKind::Qp { .. } => MsgId::KindQp,
    }
}

/// Which kinds of handle a key accepts.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Want {
    Buffer,
    Channel,
    Cq,
    Mr,
    Pd,
    Qp,
}

impl Want {
    fn accepts(self, k: HandleKind) -> bool {
        matches!(
            (self, k),
            (Want::Buffer, HandleKind::Buffer { .. })
                | (Want::Cq, HandleKind::Cq)
                | (Want::Mr, HandleKind::Mr)
                | (Want::Pd, HandleKind::Pd)
                | (Want::Channel, HandleKind::Channel)
                | (Want::Qp, HandleKind::Qp { .. })
        )
    }
    fn describe(self) -> MsgId {
        match self {
            Want::Buffer => MsgId::WantBuffer,
            Want::Cq => MsgId::KindCq,
            Want::Mr => MsgId::KindMr,
            Want::Pd => MsgId::KindPd,
            Want::Channel => MsgId::WantChannel,
            Want::Qp => MsgId::KindQp,
        }
    }
}

/// A table of the document with the text that names it in messages.
struct Fields<'a, 'i> {
    table: &'a DeTable<'i>,
    span: Range<usize>,
    what: Msg,
}

impl<'a, 'i> Fields<'a, 'i> {
    fn get(&self, key: &str) -> Option<&'a Val<'i>> {
        self.table.get(key)
    }
    fn has(&self, key: &str) -> bool {
        self.table.get(key).is_some()
    }
    /// The span of `key` itself (not its value).
    fn key_span(&self, key: &str) -> Range<usize> {
        self.table
            .get_key_value(key)
            .map_or(self.span.clone(), |(k, _)| k.span())
    }
}

struct Parser<'s> {
    src: &'s str,
    lines: LineIndex,
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
    fn err<T>(&self, span: Range<usize>, msg: Msg) -> Result<T> {
        let (line, column) = self.lines.line_col(self.src, span.start);
        Err(ParseError {
            line,
            column,
            span,
            message: msg.text(),
            msg,
        })
    }

    fn line(&self, span: &Range<usize>) -> usize {
        self.lines.line_col(self.src, span.start).0
    }

    // ---- generic value readers ----

    fn fields<'a, 'i>(&self, v: &'a Val<'i>, what: impl Into<Msg>) -> Result<Fields<'a, 'i>> {
        let what = what.into();
        match v.get_ref() {
            DeValue::Table(t) => Ok(Fields {
                table: t,
                span: v.span(),
                what,
            }),
            other => self.err(v.span(), msg!(RefusalNotTable, what, found = found(other))),
        }
    }

    /// Refuses keys outside `allowed`, pointing at the first one in the file.
    fn check_keys(&self, f: &Fields<'_, '_>, allowed: &[&str]) -> Result<()> {
        let mut unknown: Vec<(Range<usize>, &str)> = f
            .table
            .iter()
            .filter(|(k, _)| !allowed.contains(&k.get_ref().as_ref()))
            .map(|(k, _)| (k.span(), k.get_ref().as_ref()))
            .collect();
        unknown.sort_by_key(|(s, _)| s.start);
        if let Some((span, key)) = unknown.first() {
            let mut sorted: Vec<&str> = allowed.to_vec();
            sorted.sort_unstable();
            return self.err(
                span.clone(),
                msg!(
                    RefusalUnknownKey,
                    key = *key,
                    what = f.what.clone(),
                    allowed = join(sorted)
                ),
            );
        }
        Ok(())
    }

    fn req<'a, 'i>(&self, f: &Fields<'a, 'i>, key: &str) -> Result<&'a Val<'i>> {
        match f.get(key) {
            Some(v) => Ok(v),
            None => self.err(
                f.span.clone(),
                msg!(RefusalNeedsKey, what = f.what.clone(), key),
            ),
        }
    }

    fn str_of<'a>(&self, v: &'a Val<'_>, key: &str) -> Result<&'a str> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.as_ref()),
            other => self.err(v.span(), msg!(RefusalWantString, key, found = found(other))),
        }
    }

    fn int_of(&self, v: &Val<'_>, key: &str, lo: i128, hi: i128) -> Result<i128> {
        let n = match v.get_ref() {
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix()).ok(),
            other => {
                return self.err(
                    v.span(),
                    msg!(RefusalWantInteger, key, found = found(other)),
                );
            }
        };
        match n {
            Some(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => self.err(v.span(), msg!(RefusalOutOfRange, key, lo, hi)),
        }
    }

    fn u64_of(&self, v: &Val<'_>, key: &str, lo: u64, hi: u64) -> Result<u64> {
        Ok(self.int_of(v, key, lo.into(), hi.into())? as u64)
    }

    fn u32_of(&self, v: &Val<'_>, key: &str, lo: u32, hi: u32) -> Result<u32> {
        Ok(self.int_of(v, key, lo.into(), hi.into())? as u32)
    }

    fn opt_u64(
        &self,
        f: &Fields<'_, '_>,
        key: &str,
        lo: u64,
        hi: u64,
        default: u64,
    ) -> Result<u64> {
        f.get(key)
            .map_or(Ok(default), |v| self.u64_of(v, key, lo, hi))
    }

    fn opt_u32(
        &self,
        f: &Fields<'_, '_>,
        key: &str,
        lo: u32,
        hi: u32,
        default: u32,
    ) -> Result<u32> {
        f.get(key)
            .map_or(Ok(default), |v| self.u32_of(v, key, lo, hi))
    }

    fn opt_u8(&self, f: &Fields<'_, '_>, key: &str, default: u8) -> Result<u8> {
        Ok(self.opt_u32(f, key, 0, u8::MAX.into(), default.into())? as u8)
    }

    fn bool_of(&self, v: &Val<'_>, key: &str) -> Result<bool> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            other => self.err(v.span(), msg!(RefusalWantBool, key, found = found(other))),
        }
    }

    fn array_of<'a, 'i>(&self, v: &'a Val<'i>, key: &str) -> Result<&'a [Val<'i>]> {
        match v.get_ref() {
            DeValue::Array(a) => Ok(a),
            other => self.err(v.span(), msg!(RefusalWantArray, key, found = found(other))),
        }
    }

    /// A string, or an array of strings, from a fixed vocabulary (`prefix` optional).
    fn names_of<'a>(&self, v: &'a Val<'_>, key: &str) -> Result<Vec<(&'a str, Range<usize>)>> {
        match v.get_ref() {
            DeValue::String(s) => Ok(vec![(s.as_ref(), v.span())]),
            DeValue::Array(a) => a
                .iter()
                .map(|e| Ok((self.str_of(e, key)?, e.span())))
                .collect(),
            other => self.err(v.span(), msg!(RefusalWantNames, key, found = found(other))),
        }
    }

    fn duration_of(&self, v: &Val<'_>, key: &str) -> Result<SimDuration> {
        let s = self
            .str_of(v, key)
            .map_err(|_| error_at(self.src, v.span(), msg!(RefusalWantDuration, key)))?;
        let d = parse_duration(s).map_err(|why| {
            error_at(
                self.src,
                v.span(),
                msg!(
                    RefusalBadDuration,
                    value = s,
                    key,
                    why = match why {
                        "no unit" => MsgId::WhyDurNoUnit,
                        "unknown unit" => MsgId::WhyDurUnknownUnit,
                        "too large" => MsgId::WhyDurTooLarge,
                        "finer than 1 ps" => MsgId::WhyDurFiner,
                        _ => MsgId::WhyDurNotNumber,
                    }
                ),
            )
        })?;
        if d == SimDuration::ZERO {
            return self.err(v.span(), msg!(RefusalMoreThanZero, key));
        }
        if d > limits::MAX_STEP_TIME {
            return self.err(
                v.span(),
                msg!(
                    RefusalStepTooLong,
                    key,
                    value = s,
                    max = limits::MAX_STEP_TIME.to_string()
                ),
            );
        }
        Ok(d)
    }

    fn add_time(&mut self, d: SimDuration, span: Range<usize>) -> Result<()> {
        let total = self.total_time.checked_add(d).unwrap_or(SimDuration::MAX);
        if total > limits::MAX_SESSION_TIME {
            return self.err(
                span,
                msg!(
                    RefusalSessionTooLong,
                    total = total.to_string(),
                    max = limits::MAX_SESSION_TIME.to_string()
                ),
            );
        }
        self.total_time = total;
        Ok(())
    }

    fn name_of(&self, v: &Val<'_>, key: &str) -> Result<String> {
        let s = self.str_of(v, key)?;
        let ok_first = s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let ok_rest = s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok_first || !ok_rest || s.len() > limits::MAX_NAME_LEN {
            return self.err(
                v.span(),
                msg!(RefusalBadName, key, value = s, max = limits::MAX_NAME_LEN),
            );
        }
        Ok(s.to_string())
    }

    fn host_of(&self, v: &Val<'_>, key: &str) -> Result<HostId> {
        let s = self.str_of(v, key)?;
        match self.hosts.iter().position(|h| h == s) {
            Some(i) => Ok(HostId(i)),
            None => self.err(
                v.span(),
                msg!(RefusalUnknownHost, name = s, key, hosts = join(&self.hosts)),
            ),
        }
    }

    /// A handle defined by an earlier step, of a kind `want` accepts.
    fn handle_of(&self, v: &Val<'_>, key: &str, want: Want) -> Result<HandleId> {
        let s = self.str_of(v, key)?;
        let Some(&id) = self.by_name.get(s) else {
            let known: Vec<&str> = self
                .handles
                .iter()
                .filter(|h| want.accepts(h.kind))
                .map(|h| h.name.as_str())
                .collect();
            let known = if known.is_empty() {
                msg!(CtxNoneDefined)
            } else {
                msg!(CtxDefinedSoFar, names = join(known))
            };
            return self.err(
                v.span(),
                msg!(
                    RefusalUnknownHandle,
                    name = s,
                    key,
                    want = want.describe(),
                    known
                ),
            );
        };
        let h = &self.handles[id.0];
        if !want.accepts(h.kind) {
            return self.err(
                v.span(),
                msg!(
                    RefusalWrongKind,
                    key,
                    want = want.describe(),
                    name = s,
                    kind = kind_msg(h.kind),
                    line = h.line
                ),
            );
        }
        Ok(id)
    }

    fn same_host(
        &self,
        id: HandleId,
        host: HostId,
        v: &Val<'_>,
        key: &str,
        why: MsgId,
    ) -> Result<()> {
        let h = &self.handles[id.0];
        if h.host != host {
            return self.err(
                v.span(),
                msg!(
                    RefusalOtherHost,
                    key,
                    name = &h.name,
                    host = &self.hosts[h.host.0],
                    other = why,
                    other_host = &self.hosts[host.0]
                ),
            );
        }
        Ok(())
    }

    /// The handle the step acts on: `key` names it (required), and an optional `host`
    /// must agree with its host.
    fn step_handle(&self, f: &Fields<'_, '_>, key: &str, want: Want) -> Result<HandleId> {
        let id = self.handle_of(self.req(f, key)?, key, want)?;
        self.check_host(f, self.handles[id.0].host)?;
        Ok(id)
    }

    /// Reserves a new handle name (the step's output).
    fn define(
        &mut self,
        v: &Val<'_>,
        key: &str,
        kind: HandleKind,
        host: HostId,
    ) -> Result<HandleId> {
        let name = self.name_of(v, key)?;
        if let Some(&old) = self.by_name.get(&name) {
            return self.err(
                v.span(),
                msg!(
                    RefusalHandleTwice,
                    name = &name,
                    line = self.handles[old.0].line
                ),
            );
        }
        if self.hosts.contains(&name) {
            return self.err(v.span(), msg!(RefusalHandleIsHost, name = &name));
        }
        let id = HandleId(self.handles.len());
        self.handles.push(HandleInfo {
            name: name.clone(),
            kind,
            host,
            line: self.line(&v.span()),
        });
        self.by_name.insert(name, id);
        Ok(id)
    }

    /// `host = "..."`, required.
    fn step_host(&self, f: &Fields<'_, '_>) -> Result<HostId> {
        self.host_of(self.req(f, "host")?, "host")
    }

    /// An optional `host` that must agree with the host the step's handles imply.
    fn check_host(&self, f: &Fields<'_, '_>, implied: HostId) -> Result<()> {
        if let Some(v) = f.get("host") {
            let h = self.host_of(v, "host")?;
            if h != implied {
                return self.err(
                    v.span(),
                    msg!(
                        RefusalHostDisagrees,
                        host = &self.hosts[h.0],
                        implied = &self.hosts[implied.0]
                    ),
                );
            }
        }
        Ok(())
    }

    /// A value that may differ per NIC profile: `X` or `{ mlx5 = X, rxe = Y, ibta = Z }`.
    fn per_profile<T: Clone>(
        &self,
        v: &Val<'_>,
        key: &str,
        leaf: impl Fn(&Self, &Val<'_>) -> Result<T>,
    ) -> Result<PerProfile<T>> {
        let DeValue::Table(t) = v.get_ref() else {
            return Ok(PerProfile::all(leaf(self, v)?));
        };
        let mut out = PerProfile::none();
        if t.is_empty() {
            return self.err(v.span(), msg!(RefusalEmptyPerProfile, key));
        }
        for (k, val) in t.iter() {
            let Some(p) = NicProfile::ALL
                .into_iter()
                .find(|p| p.name() == k.get_ref().as_ref())
            else {
                return self.err(
                    k.span(),
                    msg!(RefusalNotProfile, key, name = k.get_ref().to_string()),
                );
            };
            out.set(p, leaf(self, val)?);
        }
        Ok(out)
    }

    // ---- vocabularies ----

    fn access_of(&self, v: &Val<'_>, key: &str) -> Result<AccessFlags> {
        let mut flags = AccessFlags::empty();
        for (name, span) in self.names_of(v, key)? {
            let bare = name.trim_start_matches("IBV_ACCESS_");
            match AccessFlags::NAMED.iter().find(|(n, _)| *n == bare) {
                Some((_, f)) => flags |= *f,
                None => {
                    return self.err(
                        span,
                        msg!(
                            RefusalUnknownPrefixed,
                            what = MsgId::VocabAccessFlag,
                            name,
                            key,
                            allowed = join(AccessFlags::NAMED.iter().map(|(n, _)| *n)),
                            prefix = "IBV_ACCESS_"
                        ),
                    );
                }
            }
        }
        Ok(flags)
    }

    fn send_flags_of(&self, v: &Val<'_>, key: &str) -> Result<SendFlags> {
        let mut flags = SendFlags::empty();
        for (name, span) in self.names_of(v, key)? {
            let bare = name.trim_start_matches("IBV_SEND_");
            match SendFlags::NAMED.iter().find(|(n, _)| *n == bare) {
                Some((_, f)) => flags |= *f,
                None => {
                    return self.err(
                        span,
                        msg!(
                            RefusalUnknownPrefixed,
                            what = MsgId::VocabSendFlag,
                            name,
                            key,
                            allowed = join(SendFlags::NAMED.iter().map(|(n, _)| *n)),
                            prefix = "IBV_SEND_"
                        ),
                    );
                }
            }
        }
        Ok(flags)
    }

    fn mask_of(&self, v: &Val<'_>, key: &str) -> Result<QpAttrMask> {
        let mut mask = QpAttrMask::empty();
        for (name, span) in self.names_of(v, key)? {
            let bare = name.trim_start_matches("IBV_QP_");
            match QpAttrMask::NAMED.iter().find(|(n, _)| *n == bare) {
                Some((_, f)) => mask |= *f,
                None => {
                    return self.err(
                        span,
                        msg!(
                            RefusalUnknownPrefixed,
                            what = MsgId::VocabMaskBit,
                            name,
                            key,
                            allowed = join(QpAttrMask::NAMED.iter().map(|(n, _)| *n)),
                            prefix = "IBV_QP_"
                        ),
                    );
                }
            }
        }
        Ok(mask)
    }

    fn state_of(&self, v: &Val<'_>, key: &str) -> Result<QpState> {
        let s = self.str_of(v, key)?;
        let bare = s.trim_start_matches("IBV_QPS_");
        match QpState::ALL.into_iter().find(|q| q.name() == bare) {
            Some(q) => Ok(q),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownName,
                    what = MsgId::VocabQpState,
                    name = s,
                    key,
                    allowed = join(QpState::ALL.iter().map(|q| q.name()))
                ),
            ),
        }
    }

    fn async_name_of(&self, v: &Val<'_>, key: &str) -> Result<&'static str> {
        let s = self.str_of(v, key)?;
        let bare = s.trim_start_matches("IBV_EVENT_");
        match verbs::AsyncEvent::NAMES.iter().find(|n| **n == bare) {
            Some(n) => Ok(n),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownPrefixed,
                    what = MsgId::VocabAsyncEvent,
                    name = s,
                    key,
                    allowed = join(verbs::AsyncEvent::NAMES.iter().copied()),
                    prefix = "IBV_EVENT_"
                ),
            ),
        }
    }

    fn opcode_of(&self, v: &Val<'_>, key: &str) -> Result<SendOpcode> {
        let s = self.str_of(v, key)?;
        let bare = s.trim_start_matches("IBV_WR_");
        match OPCODES.iter().find(|o| opcode_name(**o) == bare) {
            Some(o) => Ok(*o),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownPrefixed,
                    what = MsgId::VocabOpcode,
                    name = s,
                    key,
                    allowed = join(OPCODES.iter().map(|o| opcode_name(*o))),
                    prefix = "IBV_WR_"
                ),
            ),
        }
    }

    fn ret_of(&self, v: &Val<'_>, key: &str) -> Result<Ret> {
        if let DeValue::Integer(_) = v.get_ref()
            && self.int_of(v, key, 0, 0).is_ok()
        {
            return Ok(Ret::Ok);
        }
        let s = self.str_of(v, key)?;
        if s.eq_ignore_ascii_case("ok") {
            return Ok(Ret::Ok);
        }
        match ERRNOS.iter().find(|e| e.name() == s) {
            Some(e) => Ok(Ret::Err(*e)),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownName,
                    what = MsgId::VocabReturnCode,
                    name = s,
                    key,
                    allowed = join(std::iter::once("ok").chain(ERRNOS.iter().map(|e| e.name())))
                ),
            ),
        }
    }

    fn status_of(&self, v: &Val<'_>, key: &str) -> Result<WcStatus> {
        let s = self.str_of(v, key)?;
        let bare = s.trim_start_matches("IBV_WC_");
        match WC_STATUSES.iter().find(|w| status_name(**w) == bare) {
            Some(w) => Ok(*w),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownPrefixed,
                    what = MsgId::VocabWcStatus,
                    name = s,
                    key,
                    allowed = join(WC_STATUSES.iter().map(|w| status_name(*w))),
                    prefix = "IBV_WC_"
                ),
            ),
        }
    }

    fn wc_opcode_of(&self, v: &Val<'_>, key: &str) -> Result<WcOpcode> {
        let s = self.str_of(v, key)?;
        let bare = s.trim_start_matches("IBV_WC_");
        match WC_OPCODES.iter().find(|w| wc_opcode_name(**w) == bare) {
            Some(w) => Ok(*w),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownPrefixed,
                    what = MsgId::VocabWcOpcode,
                    name = s,
                    key,
                    allowed = join(WC_OPCODES.iter().map(|w| wc_opcode_name(*w))),
                    prefix = "IBV_WC_"
                ),
            ),
        }
    }

    /// Which of `text`, `hex`, `u64` the table gives (at most one).
    fn data_key(&self, f: &Fields<'_, '_>) -> Result<Option<&'static str>> {
        let given: Vec<&'static str> = ["text", "hex", "u64"]
            .into_iter()
            .filter(|k| f.has(k))
            .collect();
        if given.len() > 1 {
            return self.err(
                f.key_span(given[1]),
                msg!(
                    RefusalDataTwice,
                    what = f.what.clone(),
                    a = given[0],
                    b = given[1]
                ),
            );
        }
        Ok(given.first().copied())
    }

    /// The bytes of one `text`, `hex` or `u64` value.
    fn data_value(&self, v: &Val<'_>, key: &str) -> Result<Vec<u8>> {
        let bytes = match key {
            "text" => self.str_of(v, key)?.as_bytes().to_vec(),
            "hex" => self.hex_of(v, key)?,
            _ => (self.int_of(v, key, 0, u64::MAX.into())? as u64)
                .to_le_bytes()
                .to_vec(),
        };
        if bytes.len() > limits::MAX_LITERAL_BYTES {
            return self.err(
                v.span(),
                msg!(
                    RefusalLiteralTooLong,
                    key,
                    n = bytes.len(),
                    max = limits::MAX_LITERAL_BYTES
                ),
            );
        }
        if bytes.is_empty() {
            return self.err(v.span(), msg!(RefusalEmpty, key));
        }
        Ok(bytes)
    }

    /// Bytes written as `text`, `hex` or `u64`; `None` if the table has none of them.
    fn data_of(&self, f: &Fields<'_, '_>) -> Result<Option<(Vec<u8>, Range<usize>)>> {
        let Some(key) = self.data_key(f)? else {
            return Ok(None);
        };
        let v = f.get(key).expect("key just seen");
        Ok(Some((self.data_value(v, key)?, v.span())))
    }

    fn hex_of(&self, v: &Val<'_>, key: &str) -> Result<Vec<u8>> {
        let s = self.str_of(v, key)?;
        let digits: Vec<char> = s
            .trim()
            .trim_start_matches("0x")
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '_' | ':'))
            .collect();
        if !digits.len().is_multiple_of(2) || !digits.iter().all(char::is_ascii_hexdigit) {
            return self.err(v.span(), msg!(RefusalBadHex, key));
        }
        Ok(digits
            .chunks(2)
            .map(|p| {
                let hi = p[0].to_digit(16).expect("checked hex digit");
                let lo = p[1].to_digit(16).expect("checked hex digit");
                (hi * 16 + lo) as u8
            })
            .collect())
    }

    /// A buffer or MR plus `offset`, from a table with `buf` or `mr`.
    fn mem_ref(&self, f: &Fields<'_, '_>) -> Result<(MemRef, Range<usize>)> {
        let (key, v) = match (f.get("buf"), f.get("mr")) {
            (Some(_), Some(m)) => {
                return self.err(m.span(), msg!(RefusalBufAndMr, what = f.what.clone()));
            }
            (Some(b), None) => ("buf", b),
            (None, Some(m)) => ("mr", m),
            (None, None) => {
                return self.err(
                    f.span.clone(),
                    msg!(RefusalNeedsBufOrMr, what = f.what.clone()),
                );
            }
        };
        let want = if key == "buf" { Want::Buffer } else { Want::Mr };
        let handle = self.handle_of(v, key, want)?;
        let offset = self.opt_u64(f, "offset", 0, 1 << 40, 0)?;
        Ok((MemRef { handle, offset }, v.span()))
    }

    // ---- the document ----

    fn document(&mut self, doc: &Spanned<DeTable<'_>>) -> Result<Session> {
        let root = Fields {
            table: doc.get_ref(),
            span: doc.span(),
            what: msg!(CtxTop),
        };
        self.check_keys(&root, TOP_KEYS)?;
        let profile = match root.get("profile") {
            None => NicProfile::Mlx5,
            Some(v) => {
                let s = self.str_of(v, "profile")?;
                match NicProfile::ALL.into_iter().find(|p| p.name() == s) {
                    Some(p) => p,
                    None => {
                        return self.err(
                            v.span(),
                            msg!(
                                RefusalUnknownName,
                                what = MsgId::VocabProfile,
                                name = s,
                                key = "profile",
                                allowed = join(NicProfile::ALL.iter().map(|p| p.name()))
                            ),
                        );
                    }
                }
            }
        };
        let seed = self.opt_u64(&root, "seed", 0, i64::MAX as u64, 1)?;
        let fabric_v = root.get("fabric");
        let topology = match fabric_v {
            Some(v) => {
                let f = self.fields(v, MsgId::CtxFabric)?;
                match f.get("topology") {
                    None => TopologyKind::BackToBack,
                    Some(t) => match self.str_of(t, "topology")? {
                        "back_to_back" => TopologyKind::BackToBack,
                        "switch" => TopologyKind::Switch,
                        other => {
                            return self.err(
                                t.span(),
                                msg!(
                                    RefusalUnknownName,
                                    what = MsgId::VocabTopology,
                                    name = other,
                                    key = "topology",
                                    allowed = join(["back_to_back", "switch"])
                                ),
                            );
                        }
                    },
                }
            }
            None => TopologyKind::BackToBack,
        };
        self.hosts_of(&root, topology)?;
        let fabric = match fabric_v {
            Some(v) => self.fabric(v, topology)?,
            None => FabricPlan {
                topology,
                rate_gbps: 100,
                cable_m: 3,
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
        let f = self.fields(v, MsgId::CtxFabric)?;
        self.check_keys(&f, FABRIC_KEYS)?;
        let rate_gbps = self.opt_u64(&f, "rate_gbps", 1, 1_600, 100)?;
        let cable_m = self.opt_u64(&f, "cable_m", 0, fabric::config::MAX_CABLE_M, 3)?;
        let loss = match f.get("loss") {
            None => 0.0,
            Some(l) => {
                let p = match l.get_ref() {
                    DeValue::Float(x) => x.as_str().parse::<f64>().ok(),
                    DeValue::Integer(_) => self.int_of(l, "loss", 0, 1).ok().map(|n| n as f64),
                    other => {
                        return self.err(l.span(), msg!(RefusalLossNumber, found = found(other)));
                    }
                };
                match p {
                    Some(p) if (0.0..=1.0).contains(&p) => p,
                    _ => {
                        return self.err(l.span(), msg!(RefusalLossRange));
                    }
                }
            }
        };
        let mut drops = Vec::new();
        if let Some(d) = f.get("drop") {
            for item in self.array_of(d, "drop")? {
                let df = self.fields(item, MsgId::CtxDrop)?;
                self.check_keys(&df, DROP_KEYS)?;
                let from = self.host_of(self.req(&df, "from")?, "from")?;
                let nth = self.u64_of(self.req(&df, "nth")?, "nth", 1, 1 << 32)?;
                let count = self.opt_u64(&df, "count", 1, 1 << 32, 1)?;
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
        let f = self.fields(v, msg!(CtxStep, step = index))?;
        let Some(call_v) = f.get("call") else {
            return self.err(
                f.span.clone(),
                msg!(RefusalNoCall, step = index, allowed = join(CALLS)),
            );
        };
        let call_name = self.str_of(call_v, "call")?;
        if !CALLS.contains(&call_name) {
            return self.err(
                call_v.span(),
                msg!(RefusalUnknownCall, name = call_name, allowed = join(CALLS)),
            );
        }
        let f = Fields {
            what: msg!(CtxStepCall, step = index, call = call_name),
            ..f
        };
        let (line, column) = self.lines.line_col(self.src, f.span.start);
        let extra: &[&str] = match call_name {
            "alloc_pd" => &["host", "as"],
            "alloc" => &["host", "as", "len", "text", "hex", "u64", "fill", "pattern"],
            "reg_mr" => &["host", "as", "pd", "buf", "offset", "len", "access"],
            "create_cq" => &["host", "as", "cqe", "channel"],
            "create_qp" => &[
                "host",
                "as",
                "pd",
                "type",
                "cq",
                "send_cq",
                "recv_cq",
                "max_send_wr",
                "max_recv_wr",
                "max_send_sge",
                "max_recv_sge",
                "max_inline_data",
                "sq_sig_all",
            ],
            "modify_qp" => &[
                "host",
                "qp",
                "mask",
                "state",
                "cur_state",
                "en_sqd_async_notify",
                "access",
                "pkey_index",
                "port",
                "qkey",
                "av",
                "path_mtu",
                "timeout",
                "retry_cnt",
                "rnr_retry",
                "rq_psn",
                "max_rd_atomic",
                "min_rnr_timer",
                "sq_psn",
                "max_dest_rd_atomic",
                "path_mig_state",
                "dest_qp",
            ],
            "query_qp" => &["host", "qp"],
            "post_send" => &[
                "host", "qp", "wr", "add", "compare", "flags", "imm", "opcode", "remote", "sge",
                "swap", "ud", "wr_id",
            ],
            "post_recv" => &["host", "qp", "wr", "sge", "wr_id"],
            "poll_cq" => &["host", "cq", "max", "wait"],
            "connect" => &[
                "hosts",
                "channel",
                "pd",
                "cq",
                "qp",
                "mtu",
                "timeout",
                "retry_cnt",
                "rnr_retry",
                "min_rnr_timer",
                "rd_atomic",
                "access",
                "max_send_wr",
                "max_recv_wr",
                "max_send_sge",
                "max_recv_sge",
                "max_inline_data",
                "cqe",
                "retransmission",
                "window",
            ],
            "run" => &["for"],
            "destroy_qp" => &["host", "qp"],
            "destroy_cq" => &["host", "cq"],
            "dereg_mr" => &["host", "mr"],
            "dealloc_pd" => &["host", "pd"],
            "create_comp_channel" => &["host", "as"],
            "destroy_comp_channel" => &["host", "channel"],
            "req_notify_cq" => &["host", "cq", "solicited_only"],
            "get_cq_event" => &["host", "channel", "wait"],
            "ack_cq_events" => &["host", "cq", "n"],
            "get_async_event" => &["host", "wait"],
            "ack_async_event" => &["host"],
            "write_memory" => &["host", "buf", "mr", "offset", "text", "hex", "u64"],
            "read_memory" => &["host", "buf", "mr", "offset", "len"],
            _ => unreachable!("checked against CALLS"),
        };
        let allowed: Vec<&str> = STEP_COMMON.iter().chain(extra).copied().collect();
        self.check_keys(&f, &allowed)?;
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
                let cqe = self.opt_u32(&f, "cqe", 0, limits::MAX_CQE, 16)?;
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
                let qp = self.handle_of(self.req(&f, "qp")?, "qp", Want::Qp)?;
                self.check_host(&f, self.handles[qp.0].host)?;
                Call::QueryQp { qp }
            }
            "post_send" => self.post_send(&f)?,
            "post_recv" => self.post_recv(&f)?,
            "poll_cq" => {
                let cq = self.handle_of(self.req(&f, "cq")?, "cq", Want::Cq)?;
                self.check_host(&f, self.handles[cq.0].host)?;
                let max = self.opt_u32(&f, "max", 1, limits::MAX_POLL, 16)?;
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
                qp: self.step_handle(&f, "qp", Want::Qp)?,
            },
            "destroy_cq" => Call::DestroyCq {
                cq: self.step_handle(&f, "cq", Want::Cq)?,
            },
            "dereg_mr" => Call::DeregMr {
                mr: self.step_handle(&f, "mr", Want::Mr)?,
            },
            "dealloc_pd" => Call::DeallocPd {
                pd: self.step_handle(&f, "pd", Want::Pd)?,
            },
            "create_comp_channel" => {
                let host = self.step_host(&f)?;
                let out = self.define(self.req(&f, "as")?, "as", HandleKind::Channel, host)?;
                Call::CreateCompChannel { host, out }
            }
            "destroy_comp_channel" => Call::DestroyCompChannel {
                channel: self.step_handle(&f, "channel", Want::Channel)?,
            },
            "req_notify_cq" => {
                let cq = self.step_handle(&f, "cq", Want::Cq)?;
                let solicited_only = match f.get("solicited_only") {
                    Some(v) => self.bool_of(v, "solicited_only")?,
                    None => false,
                };
                Call::ReqNotifyCq { cq, solicited_only }
            }
            "get_cq_event" => {
                let channel = self.step_handle(&f, "channel", Want::Channel)?;
                let v = self.req(&f, "wait")?;
                let wait = self.duration_of(v, "wait")?;
                self.add_time(wait, v.span())?;
                Call::GetCqEvent { channel, wait }
            }
            "ack_cq_events" => {
                let cq = self.step_handle(&f, "cq", Want::Cq)?;
                let n = self.opt_u32(&f, "n", 1, u32::MAX, 1)?;
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
                let lv = self.req(&f, "len")?;
                let len = self.u64_of(lv, "len", 1, limits::MAX_READ_BYTES)?;
                self.check_fits(at, len, lv.span())?;
                // Each shown byte costs a few in the report (hex and text): the sum is bounded
                // so a session's answer stays small whatever its steps.
                let total = self.total_read.saturating_add(len);
                if total > limits::MAX_READ_TOTAL_BYTES {
                    return self.err(
                        lv.span(),
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

    fn alloc(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let host = self.step_host(f)?;
        let lv = self.req(f, "len")?;
        let len = self.u64_of(lv, "len", 1, limits::MAX_BUFFER_BYTES)?;
        self.total_buffers += len;
        if self.total_buffers > limits::MAX_TOTAL_BUFFER_BYTES {
            return self.err(
                lv.span(),
                msg!(
                    RefusalBuffersTotal,
                    total = self.total_buffers,
                    max = limits::MAX_TOTAL_BUFFER_BYTES
                ),
            );
        }
        let data = self.data_of(f)?;
        let fills: Vec<&str> = ["fill", "pattern"]
            .into_iter()
            .filter(|k| f.has(k))
            .collect();
        if fills.len() + usize::from(data.is_some()) > 1 {
            return self.err(
                f.span.clone(),
                msg!(RefusalFillTwice, what = f.what.clone()),
            );
        }
        let fill = if let Some((bytes, span)) = data {
            if bytes.len() as u64 > len {
                return self.err(span, msg!(RefusalBytesDoNotFit, n = bytes.len(), len));
            }
            Fill::Bytes(bytes)
        } else if let Some(v) = f.get("fill") {
            Fill::Byte(self.u32_of(v, "fill", 0, 255)? as u8)
        } else if let Some(v) = f.get("pattern") {
            Fill::Pattern(self.u64_of(v, "pattern", 0, i64::MAX as u64)?)
        } else {
            Fill::Zero
        };
        let out = self.define(self.req(f, "as")?, "as", HandleKind::Buffer { len }, host)?;
        Ok(Call::Alloc {
            host,
            out,
            len,
            fill,
        })
    }

    fn reg_mr(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let pd_v = self.req(f, "pd")?;
        let pd = self.handle_of(pd_v, "pd", Want::Pd)?;
        let host = self.handles[pd.0].host;
        let buf_v = self.req(f, "buf")?;
        let buf = self.handle_of(buf_v, "buf", Want::Buffer)?;
        self.same_host(buf, host, buf_v, "buf", MsgId::WhyThePd)?;
        self.check_host(f, host)?;
        let HandleKind::Buffer { len: blen } = self.handles[buf.0].kind else {
            unreachable!("handle_of checked the kind")
        };
        let offset = self.opt_u64(f, "offset", 0, 1 << 40, 0)?;
        let len = self.opt_u64(f, "len", 0, 1 << 40, blen.saturating_sub(offset))?;
        let access = match f.get("access") {
            Some(v) => self.access_of(v, "access")?,
            None => AccessFlags::empty(),
        };
        let out = self.define(self.req(f, "as")?, "as", HandleKind::Mr, host)?;
        Ok(Call::RegMr {
            pd,
            buf,
            offset,
            len,
            access,
            out,
        })
    }

    fn create_qp(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let pd_v = self.req(f, "pd")?;
        let pd = self.handle_of(pd_v, "pd", Want::Pd)?;
        let host = self.handles[pd.0].host;
        self.check_host(f, host)?;
        let qp_type = match f.get("type") {
            None => QpType::Rc,
            Some(v) => {
                let s = self.str_of(v, "type")?;
                match QpType::ALL.into_iter().find(|t| t.name() == s) {
                    Some(t) => t,
                    None => {
                        return self.err(
                            v.span(),
                            msg!(
                                RefusalUnknownName,
                                what = MsgId::VocabQpType,
                                name = s,
                                key = "type",
                                allowed = join(["RC", "UC", "UD"])
                            ),
                        );
                    }
                }
            }
        };
        let (send_cq, recv_cq) = match (f.get("cq"), f.get("send_cq"), f.get("recv_cq")) {
            (Some(c), None, None) => {
                let cq = self.handle_of(c, "cq", Want::Cq)?;
                self.same_host(cq, host, c, "cq", MsgId::WhyThePd)?;
                (cq, cq)
            }
            (None, Some(s), Some(r)) => {
                let s_id = self.handle_of(s, "send_cq", Want::Cq)?;
                self.same_host(s_id, host, s, "send_cq", MsgId::WhyThePd)?;
                let r_id = self.handle_of(r, "recv_cq", Want::Cq)?;
                self.same_host(r_id, host, r, "recv_cq", MsgId::WhyThePd)?;
                (s_id, r_id)
            }
            _ => {
                return self.err(f.span.clone(), msg!(RefusalNeedsCq, what = f.what.clone()));
            }
        };
        let depth = limits::MAX_QUEUE_DEPTH;
        let cap = QpCap {
            max_send_wr: self.opt_u32(f, "max_send_wr", 0, depth, 16)?,
            max_recv_wr: self.opt_u32(f, "max_recv_wr", 0, depth, 16)?,
            max_send_sge: self.opt_u32(f, "max_send_sge", 0, 1_024, 1)?,
            max_recv_sge: self.opt_u32(f, "max_recv_sge", 0, 1_024, 1)?,
            max_inline_data: self.opt_u32(f, "max_inline_data", 0, 65_536, 0)?,
        };
        let sq_sig_all = match f.get("sq_sig_all") {
            Some(v) => self.bool_of(v, "sq_sig_all")?,
            None => false,
        };
        let as_v = self.req(f, "as")?;
        self.count_qp(host, as_v.span())?;
        let out = self.define(as_v, "as", HandleKind::Qp { qp_type }, host)?;
        Ok(Call::CreateQp {
            pd,
            send_cq,
            recv_cq,
            qp_type,
            cap,
            sq_sig_all,
            out,
        })
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

    fn modify_qp(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp = self.handle_of(self.req(f, "qp")?, "qp", Want::Qp)?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let mask_v = self.req(f, "mask")?;
        let mask = self.mask_of(mask_v, "mask")?;
        let mut attr = QpAttr::default();
        let mut dest_qp = None;
        let mut av = None;
        let mut ignored = Vec::new();
        let mut given = Vec::new();
        for &(key, bit) in ATTR_KEYS {
            let Some(v) = f.get(key) else { continue };
            given.push(key);
            if !mask.contains(bit) {
                ignored.push(key);
            }
            match key {
                "state" => attr.qp_state = self.state_of(v, key)?,
                "cur_state" => attr.cur_qp_state = self.state_of(v, key)?,
                "en_sqd_async_notify" => attr.en_sqd_async_notify = self.bool_of(v, key)?,
                "access" => attr.qp_access_flags = self.access_of(v, key)?,
                "pkey_index" => attr.pkey_index = self.u32_of(v, key, 0, u16::MAX.into())? as u16,
                "port" => attr.port_num = self.u32_of(v, key, 0, 255)? as u8,
                "qkey" => attr.qkey = self.u32_of(v, key, 0, u32::MAX)?,
                "av" => av = Some(self.host_of(v, key)?),
                "path_mtu" => {
                    let n = self.u32_of(v, key, 0, 65_536)?;
                    match Mtu::ALL.into_iter().find(|m| m.bytes() == n) {
                        Some(m) => attr.path_mtu = m,
                        None => {
                            return self.err(v.span(), msg!(RefusalPathMtu));
                        }
                    }
                }
                "timeout" => attr.timeout = self.u32_of(v, key, 0, 255)? as u8,
                "retry_cnt" => attr.retry_cnt = self.u32_of(v, key, 0, 255)? as u8,
                "rnr_retry" => attr.rnr_retry = self.u32_of(v, key, 0, 255)? as u8,
                "rq_psn" => attr.rq_psn = self.u32_of(v, key, 0, u32::MAX)?,
                "max_rd_atomic" => attr.max_rd_atomic = self.u32_of(v, key, 0, 255)? as u8,
                "min_rnr_timer" => attr.min_rnr_timer = self.u32_of(v, key, 0, 255)? as u8,
                "sq_psn" => attr.sq_psn = self.u32_of(v, key, 0, u32::MAX)?,
                "max_dest_rd_atomic" => {
                    attr.max_dest_rd_atomic = self.u32_of(v, key, 0, 255)? as u8;
                }
                "path_mig_state" => attr.path_mig_state = self.u32_of(v, key, 0, 255)? as u8,
                "dest_qp" => {
                    dest_qp = Some(match v.get_ref() {
                        DeValue::Integer(_) => QpRef::Number(self.u32_of(v, key, 0, u32::MAX)?),
                        _ => QpRef::Handle(self.handle_of(v, key, Want::Qp)?),
                    });
                }
                _ => unreachable!("ATTR_KEYS lists the keys handled here"),
            }
        }
        if mask.contains(QpAttrMask::STATE) && !f.has("state") {
            return self.err(
                mask_v.span(),
                msg!(RefusalMaskStateNoState, what = f.what.clone()),
            );
        }
        Ok(Call::ModifyQp {
            qp,
            attr: AttrPlan {
                attr,
                dest_qp,
                av,
                given,
                ignored,
            },
            mask,
        })
    }

    fn sge_list(&self, v: &Val<'_>, host: HostId) -> Result<Vec<SgePlan>> {
        let items: Vec<&Val<'_>> = match v.get_ref() {
            DeValue::Table(_) => vec![v],
            DeValue::Array(a) => a.iter().collect(),
            other => {
                return self.err(v.span(), msg!(RefusalSgeShape, found = found(other)));
            }
        };
        if items.len() > limits::MAX_SGES {
            return self.err(
                v.span(),
                msg!(RefusalTooManySges, n = items.len(), max = limits::MAX_SGES),
            );
        }
        let mut out = Vec::new();
        for item in items {
            let f = self.fields(item, MsgId::CtxSge)?;
            self.check_keys(&f, SGE_KEYS)?;
            let mr_v = self.req(&f, "mr")?;
            let mr = self.handle_of(mr_v, "mr", Want::Mr)?;
            self.same_host(mr, host, mr_v, "mr", MsgId::WhyTheQp)?;
            let offset = self.opt_u64(&f, "offset", 0, 1 << 40, 0)?;
            let len = match f.get("len") {
                Some(l) => Some(self.u32_of(l, "len", 0, u32::MAX)?),
                None => None,
            };
            let lkey = match f.get("lkey") {
                Some(k) => Some(self.u32_of(k, "lkey", 0, u32::MAX)?),
                None => None,
            };
            out.push(SgePlan {
                mr,
                offset,
                len,
                lkey,
            });
        }
        Ok(out)
    }

    /// The WR tables of a post step: `wr = [...]`, or the step itself for a single WR.
    fn wr_tables<'a, 'i>(&self, f: &Fields<'a, 'i>, keys: &[&str]) -> Result<Vec<Fields<'a, 'i>>> {
        let Some(w) = f.get("wr") else {
            return Ok(vec![Fields {
                table: f.table,
                span: f.span.clone(),
                what: f.what.clone(),
            }]);
        };
        if let Some(k) = keys.iter().find(|k| f.has(k)) {
            return self.err(
                f.key_span(k),
                msg!(RefusalWrAndKey, what = f.what.clone(), key = *k),
            );
        }
        let items = self.array_of(w, "wr")?;
        if items.is_empty() || items.len() > limits::MAX_CHAIN {
            return self.err(w.span(), msg!(RefusalChainLength, max = limits::MAX_CHAIN));
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let wf = self.fields(item, msg!(CtxWr, n = i, what = f.what.clone()))?;
            self.check_keys(&wf, keys)?;
            out.push(wf);
        }
        Ok(out)
    }

    fn post_send(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp_v = self.req(f, "qp")?;
        let qp = self.handle_of(qp_v, "qp", Want::Qp)?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let is_ud = matches!(
            self.handles[qp.0].kind,
            HandleKind::Qp {
                qp_type: QpType::Ud
            }
        );
        let mut wrs = Vec::new();
        for wf in self.wr_tables(f, SEND_WR_KEYS)? {
            let w = self.send_wr(&wf, host)?;
            match (is_ud, w.ud.is_some()) {
                (true, false) => {
                    return self.err(
                        wf.span,
                        msg!(RefusalUdNeedsUd, name = &self.handles[qp.0].name),
                    );
                }
                (false, true) => {
                    return self.err(
                        wf.span,
                        msg!(RefusalUdOnConnected, name = &self.handles[qp.0].name),
                    );
                }
                _ => {}
            }
            wrs.push(w);
        }
        Ok(Call::PostSend { qp, wrs })
    }

    fn send_wr(&self, f: &Fields<'_, '_>, host: HostId) -> Result<SendWrPlan> {
        let op_v = self.req(f, "opcode")?;
        let opcode = self.opcode_of(op_v, "opcode")?;
        let wr_id = self.opt_u64(f, "wr_id", 0, u64::MAX, 0)?;
        let flags = match f.get("flags") {
            Some(v) => self.send_flags_of(v, "flags")?,
            None => SendFlags::empty(),
        };
        let sges = match f.get("sge") {
            Some(v) => self.sge_list(v, host)?,
            None => Vec::new(),
        };
        let needs_remote = !matches!(opcode, SendOpcode::Send | SendOpcode::SendWithImm);
        let remote = match (f.get("remote"), needs_remote) {
            (Some(v), true) => Some(self.remote(v)?),
            (None, true) => {
                return self.err(
                    op_v.span(),
                    msg!(RefusalNeedsRemote, opcode = opcode_name(opcode)),
                );
            }
            (Some(v), false) => {
                return self.err(
                    v.span(),
                    msg!(RefusalNoRemote, opcode = opcode_name(opcode)),
                );
            }
            (None, false) => None,
        };
        let only = |key: &str, ok: bool, who: &str| -> Result<()> {
            if f.has(key) && !ok {
                return self.err(
                    f.key_span(key),
                    match who.split_once(" and ") {
                        Some((a, b)) => msg!(
                            RefusalOnlyUsedByTwo,
                            key,
                            a,
                            b,
                            opcode = opcode_name(opcode)
                        ),
                        None => msg!(RefusalOnlyUsedBy, key, who, opcode = opcode_name(opcode)),
                    },
                );
            }
            Ok(())
        };
        only(
            "imm",
            opcode.has_imm(),
            "SEND_WITH_IMM and RDMA_WRITE_WITH_IMM",
        )?;
        only(
            "compare",
            opcode == SendOpcode::AtomicCmpAndSwp,
            "ATOMIC_CMP_AND_SWP",
        )?;
        only(
            "swap",
            opcode == SendOpcode::AtomicCmpAndSwp,
            "ATOMIC_CMP_AND_SWP",
        )?;
        only(
            "add",
            opcode == SendOpcode::AtomicFetchAndAdd,
            "ATOMIC_FETCH_AND_ADD",
        )?;
        let imm = self.opt_u32(f, "imm", 0, u32::MAX, 0)?;
        let compare_add = if opcode == SendOpcode::AtomicFetchAndAdd {
            self.opt_u64(f, "add", 0, u64::MAX, 0)?
        } else {
            self.opt_u64(f, "compare", 0, u64::MAX, 0)?
        };
        let swap = self.opt_u64(f, "swap", 0, u64::MAX, 0)?;
        let ud = match f.get("ud") {
            Some(v) => {
                let uf = self.fields(v, MsgId::CtxUd)?;
                self.check_keys(&uf, UD_KEYS)?;
                let qp = self.handle_of(self.req(&uf, "qp")?, "qp", Want::Qp)?;
                let qkey = self.u32_of(self.req(&uf, "qkey")?, "qkey", 0, u32::MAX)?;
                Some(UdPlan { qp, qkey })
            }
            None => None,
        };
        Ok(SendWrPlan {
            line: self.line(&f.span),
            wr_id,
            opcode,
            flags,
            sges,
            remote,
            imm,
            compare_add,
            swap,
            ud,
        })
    }

    fn remote(&self, v: &Val<'_>) -> Result<RemotePlan> {
        let f = self.fields(v, MsgId::CtxRemote)?;
        self.check_keys(&f, REMOTE_KEYS)?;
        let (at, _) = self.mem_ref(&f)?;
        let rkey = match f.get("rkey") {
            Some(k) => match k.get_ref() {
                DeValue::Integer(_) => KeyRef::Raw(self.u32_of(k, "rkey", 0, u32::MAX)?),
                _ => KeyRef::Mr(self.handle_of(k, "rkey", Want::Mr)?),
            },
            None => match self.handles[at.handle.0].kind {
                HandleKind::Mr => KeyRef::Mr(at.handle),
                _ => {
                    return self.err(f.span.clone(), msg!(RefusalRemoteNeedsRkey));
                }
            },
        };
        Ok(RemotePlan {
            target: at.handle,
            offset: at.offset,
            rkey,
        })
    }

    fn post_recv(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp = self.handle_of(self.req(f, "qp")?, "qp", Want::Qp)?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let mut wrs = Vec::new();
        for wf in self.wr_tables(f, RECV_WR_KEYS)? {
            let wr_id = self.opt_u64(&wf, "wr_id", 0, u64::MAX, 0)?;
            let sges = match wf.get("sge") {
                Some(v) => self.sge_list(v, host)?,
                None => Vec::new(),
            };
            wrs.push(RecvWrPlan { wr_id, sges });
        }
        Ok(Call::PostRecv { qp, wrs })
    }

    fn connect(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let hv = self.req(f, "hosts")?;
        let items = self.array_of(hv, "hosts")?;
        if items.len() != 2 {
            return self.err(hv.span(), msg!(RefusalConnectTwoHosts));
        }
        let a = self.host_of(&items[0], "hosts")?;
        let b = self.host_of(&items[1], "hosts")?;
        if a == b {
            return self.err(hv.span(), msg!(RefusalConnectSameHost));
        }
        let d = RcOptions::default();
        let mtu = match f.get("mtu") {
            None => d.mtu,
            Some(v) => {
                let n = self.u32_of(v, "mtu", 0, 65_536)?;
                match Mtu::ALL.into_iter().find(|m| m.bytes() == n) {
                    Some(m) => m,
                    None => {
                        return self.err(v.span(), msg!(RefusalMtu));
                    }
                }
            }
        };
        let depth = limits::MAX_QUEUE_DEPTH;
        let options = RcOptions {
            mtu,
            timeout: self.opt_u8(f, "timeout", d.timeout)?,
            retry_cnt: self.opt_u8(f, "retry_cnt", d.retry_cnt)?,
            rnr_retry: self.opt_u8(f, "rnr_retry", d.rnr_retry)?,
            min_rnr_timer: self.opt_u8(f, "min_rnr_timer", d.min_rnr_timer)?,
            rd_atomic: self.opt_u8(f, "rd_atomic", d.rd_atomic)?,
            access: match f.get("access") {
                Some(v) => self.access_of(v, "access")?,
                None => d.access,
            },
            cap: QpCap {
                max_send_wr: self.opt_u32(f, "max_send_wr", 0, depth, d.cap.max_send_wr)?,
                max_recv_wr: self.opt_u32(f, "max_recv_wr", 0, depth, d.cap.max_recv_wr)?,
                max_send_sge: self.opt_u32(f, "max_send_sge", 0, 1_024, d.cap.max_send_sge)?,
                max_recv_sge: self.opt_u32(f, "max_recv_sge", 0, 1_024, d.cap.max_recv_sge)?,
                max_inline_data: self.opt_u32(
                    f,
                    "max_inline_data",
                    0,
                    65_536,
                    d.cap.max_inline_data,
                )?,
            },
            cqe: self.opt_u32(f, "cqe", 1, limits::MAX_CQE, d.cqe)?,
        };
        let names = |key: &str, kind: HandleKind, p: &mut Self| -> Result<[HandleId; 2]> {
            let v = p.req(f, key)?;
            let items = p.array_of(v, key)?;
            if items.len() != 2 {
                return p.err(v.span(), msg!(RefusalConnectTwoNames, key));
            }
            if matches!(kind, HandleKind::Qp { .. }) {
                p.count_qp(a, items[0].span())?;
                p.count_qp(b, items[1].span())?;
            }
            Ok([
                p.define(&items[0], key, kind, a)?,
                p.define(&items[1], key, kind, b)?,
            ])
        };
        // `channel = { b = "ch_b" }`: the CQ connect creates on that host reports to that
        // completion channel.
        let mut channels = [None, None];
        if let Some(v) = f.get("channel") {
            let t = self.fields(v, MsgId::CtxConnectChannel)?;
            let mut entries: Vec<_> = t.table.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            for (k, val) in entries {
                let key_val = Spanned::new(k.span(), DeValue::String(k.get_ref().clone()));
                let h = self.host_of(&key_val, "channel")?;
                let Some(i) = [a, b].iter().position(|&x| x == h) else {
                    return self.err(k.span(), msg!(RefusalChannelHost, host = &self.hosts[h.0]));
                };
                let ch = self.handle_of(val, "channel", Want::Channel)?;
                self.same_host(ch, h, val, "channel", MsgId::WhyTheCq)?;
                channels[i] = Some(ch);
            }
        }
        let recovery = self.recovery(f)?;
        let pd = names("pd", HandleKind::Pd, self)?;
        let cq = names("cq", HandleKind::Cq, self)?;
        let qp = names(
            "qp",
            HandleKind::Qp {
                qp_type: QpType::Rc,
            },
            self,
        )?;
        Ok(Call::Connect {
            hosts: [a, b],
            pd,
            cq,
            qp,
            channels,
            options,
            recovery,
        })
    }

    /// connect's `retransmission` and `window`. The default window, 64 PSNs, is the reach of
    /// the SACK NAK's bitmap: every packet the responder can hold past a gap is one the NAK
    /// can report.
    fn recovery(&self, f: &Fields<'_, '_>) -> Result<Recovery> {
        let selective = match f.get("retransmission") {
            None => false,
            Some(v) => match self.str_of(v, "retransmission")? {
                "go_back_n" => false,
                "selective" => true,
                s => {
                    return self.err(
                        v.span(),
                        msg!(
                            RefusalUnknownRetransmission,
                            name = s,
                            allowed = join(["go_back_n", "selective"])
                        ),
                    );
                }
            },
        };
        match f.get("window") {
            Some(v) if !selective => self.err(v.span(), msg!(RefusalWindowNeedsSelective)),
            w if selective => Ok(Recovery::Selective {
                window: w.map_or(Ok(64), |v| self.u32_of(v, "window", 1, 1 << 14))?,
            }),
            _ => Ok(Recovery::GoBackN),
        }
    }

    // ---- expectations ----

    fn expect(&self, v: &Val<'_>, call: &Call) -> Result<Expect> {
        let f = self.fields(v, MsgId::CtxExpect)?;
        self.check_keys(&f, EXPECT_KEYS)?;
        let mut e = Expect::default();
        let name = call.name();
        let refuse = |key: &str, ok: bool, why: MsgId| -> Result<()> {
            if f.has(key) && !ok {
                return self.err(
                    f.key_span(key),
                    msg!(RefusalExpectNotApply, key, call = name, why),
                );
            }
            Ok(())
        };
        let is_post = matches!(call, Call::PostSend { .. } | Call::PostRecv { .. });
        let is_poll = matches!(call, Call::PollCq { .. });
        refuse(
            "ret",
            !matches!(call, Call::Run { .. }),
            MsgId::WhyRunReturnsNothing,
        )?;
        refuse("bad_wr", is_post, MsgId::WhyOnlyPostsBadWr)?;
        refuse("completions", is_poll, MsgId::WhyOnlyPollCompletions)?;
        refuse("wc", is_poll, MsgId::WhyOnlyPollCompletions)?;
        refuse(
            "event",
            matches!(call, Call::GetCqEvent { .. } | Call::GetAsyncEvent { .. }),
            MsgId::WhyOnlyEventCalls,
        )?;
        refuse(
            "sq_draining",
            matches!(call, Call::QueryQp { .. }),
            MsgId::WhyOnlyQueryQpDraining,
        )?;
        let step_qp = match call {
            Call::ModifyQp { qp, .. }
            | Call::QueryQp { qp }
            | Call::PostSend { qp, .. }
            | Call::PostRecv { qp, .. } => Some(*qp),
            _ => None,
        };
        refuse("state", step_qp.is_some(), MsgId::WhyNoQpUseQpStates)?;
        if let Some(v) = f.get("ret") {
            e.ret = Some(self.per_profile(v, "ret", |p, v| p.ret_of(v, "ret"))?);
        }
        if let Some(v) = f.get("bad_wr") {
            e.bad_wr = Some(self.per_profile(v, "bad_wr", |p, v| match v.get_ref() {
                DeValue::String(s) if s.as_ref() == "none" => Ok(None),
                DeValue::Integer(_) => Ok(Some(p.int_of(v, "bad_wr", 0, 1 << 20)? as usize)),
                other => p.err(v.span(), msg!(RefusalBadWrShape, found = found(other))),
            })?);
        }
        if let Some(v) = f.get("sq_draining") {
            e.sq_draining =
                Some(self.per_profile(v, "sq_draining", |p, v| p.bool_of(v, "sq_draining"))?);
        }
        if let Some(v) = f.get("completions") {
            e.completions = Some(self.per_profile(v, "completions", |p, v| {
                Ok(p.int_of(v, "completions", 0, limits::MAX_POLL.into())? as usize)
            })?);
        }
        if let Some(v) = f.get("wc") {
            let mut list = Vec::new();
            for item in self.array_of(v, "wc")? {
                list.push(self.wc_expect(item)?);
            }
            e.wc = Some(list);
        }
        if let (Some(v), Some(qp)) = (f.get("state"), step_qp) {
            let s = self.per_profile(v, "state", |p, v| p.state_of(v, "state"))?;
            e.qp_states.push((qp, s));
        }
        if let Some(v) = f.get("qp_states") {
            let t = self.fields(v, MsgId::CtxQpStates)?;
            let mut entries: Vec<_> = t.table.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            for (k, val) in entries {
                let key_val = Spanned::new(k.span(), DeValue::String(k.get_ref().clone()));
                let qp = self.handle_of(&key_val, "qp_states", Want::Qp)?;
                let s = self.per_profile(val, "qp_states", |p, v| p.state_of(v, "qp_states"))?;
                e.qp_states.push((qp, s));
            }
        }
        if let Some(v) = f.get("event") {
            let ef = self.fields(v, MsgId::CtxEvent)?;
            self.check_keys(&ef, EVENT_KEYS)?;
            let mut ev = EventExpect::default();
            if let Some(c) = ef.get("cq") {
                ev.cq = Some(self.handle_of(c, "cq", Want::Cq)?);
            }
            let is_async = matches!(call, Call::GetAsyncEvent { .. });
            for key in ["qp", "type"] {
                if ef.has(key) && !is_async {
                    return self.err(ef.key_span(key), msg!(RefusalEventKeyAsyncOnly, key));
                }
            }
            if let Some(q) = ef.get("qp") {
                ev.qp = Some(self.handle_of(q, "qp", Want::Qp)?);
            }
            if let Some(t) = ef.get("type") {
                ev.kind = Some(self.per_profile(t, "type", |p, v| p.async_name_of(v, "type"))?);
            }
            e.event = Some(ev);
        }
        if let Some(v) = f.get("memory") {
            let items: Vec<&Val<'_>> = match v.get_ref() {
                DeValue::Table(_) => vec![v],
                _ => self.array_of(v, "memory")?.iter().collect(),
            };
            for item in items {
                let mf = self.fields(item, MsgId::CtxExpectMemory)?;
                self.check_keys(&mf, MEM_KEYS)?;
                let (at, _) = self.mem_ref(&mf)?;
                let Some(key) = self.data_key(&mf)? else {
                    return self.err(mf.span.clone(), msg!(RefusalExpectMemoryNeedsData));
                };
                let dv = mf.get(key).expect("key just seen");
                let bytes = self.per_profile(dv, key, |p, v| {
                    let b = p.data_value(v, key)?;
                    p.check_fits(at, b.len() as u64, v.span())?;
                    Ok(b)
                })?;
                e.memory.push(MemExpect {
                    at,
                    bytes,
                    shown_as: data_form(key),
                });
            }
        }
        Ok(e)
    }

    fn wc_expect(&self, v: &Val<'_>) -> Result<WcExpect> {
        let f = self.fields(v, MsgId::CtxExpectWc)?;
        self.check_keys(&f, WC_KEYS)?;
        let mut w = WcExpect::default();
        if let Some(v) = f.get("wr_id") {
            w.wr_id = Some(self.per_profile(v, "wr_id", |p, v| {
                Ok(p.int_of(v, "wr_id", 0, u64::MAX.into())? as u64)
            })?);
        }
        if let Some(v) = f.get("status") {
            w.status = Some(self.per_profile(v, "status", |p, v| p.status_of(v, "status"))?);
        }
        if let Some(v) = f.get("opcode") {
            w.opcode = Some(self.per_profile(v, "opcode", |p, v| p.wc_opcode_of(v, "opcode"))?);
        }
        if let Some(v) = f.get("byte_len") {
            w.byte_len =
                Some(self.per_profile(v, "byte_len", |p, v| p.u32_of(v, "byte_len", 0, u32::MAX))?);
        }
        if let Some(v) = f.get("imm_data") {
            w.imm_data = Some(self.per_profile(v, "imm_data", |p, v| match v.get_ref() {
                DeValue::String(s) if s.as_ref() == "none" => Ok(None),
                _ => Ok(Some(p.u32_of(v, "imm_data", 0, u32::MAX)?)),
            })?);
        }
        if let Some(v) = f.get("qp") {
            w.qp = Some(self.handle_of(v, "qp", Want::Qp)?);
        }
        if let Some(v) = f.get("src_qp") {
            w.src_qp = Some(self.handle_of(v, "src_qp", Want::Qp)?);
        }
        if let Some(v) = f.get("grh") {
            w.grh = Some(self.bool_of(v, "grh")?);
        }
        Ok(w)
    }
}

fn data_form(key: &str) -> DataForm {
    match key {
        "text" => DataForm::Text,
        "hex" => DataForm::Hex,
        _ => DataForm::U64,
    }
}

/// Parses "10us", "1.5 ms", "250ns", "3s", "100ps" into a duration.
pub(crate) fn parse_duration(s: &str) -> std::result::Result<SimDuration, &'static str> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or("no unit")?;
    let (num, unit) = s.split_at(split);
    let unit_ps: u64 = match unit.trim() {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return Err("unknown unit"),
    };
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) => (w, f),
        None => (num, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a number");
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 12 {
        return Err("not a number");
    }
    let whole: u64 = whole.parse().map_err(|_| "too large")?;
    let mut ps = whole.checked_mul(unit_ps).ok_or("too large")?;
    let mut scale = unit_ps;
    for d in frac.bytes() {
        scale /= 10;
        let digit = u64::from(d - b'0');
        if scale == 0 {
            if digit != 0 {
                return Err("finer than 1 ps");
            }
            continue;
        }
        ps = ps.checked_add(digit * scale).ok_or("too large")?;
    }
    Ok(SimDuration::from_ps(ps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10us"), Ok(SimDuration::from_us(10)));
        assert_eq!(parse_duration("1.5 ms"), Ok(SimDuration::from_us(1_500)));
        assert_eq!(parse_duration("250ns"), Ok(SimDuration::from_ns(250)));
        assert_eq!(parse_duration("3µs"), Ok(SimDuration::from_us(3)));
        assert_eq!(parse_duration("7ps"), Ok(SimDuration::from_ps(7)));
        assert_eq!(parse_duration("1.0001ps"), Err("finer than 1 ps"));
        assert_eq!(parse_duration("10"), Err("no unit"));
        assert_eq!(parse_duration("10 parsecs"), Err("unknown unit"));
        assert_eq!(parse_duration(".5us"), Err("not a number"));
    }

    #[test]
    fn line_and_column() {
        let src = "a = 1\nbb = 2\n  c = 3";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 6), (2, 1));
        assert_eq!(line_col(src, 15), (3, 3));
    }
}
