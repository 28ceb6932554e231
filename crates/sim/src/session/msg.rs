//! Stable message ids: every sentence a session report or a session refusal carries, as an
//! id plus its arguments, so a reader in another language renders it from its own table
//! instead of pattern-matching the English (issue 19, item 7).
//!
//! Each [`MsgId`] has a stable dotted name (`refusal.out_of_range`), used in the JSON, and an
//! English template with `{name}` placeholders, from which [`Msg::text`] writes the English the
//! CLI prints and `--json` keeps in its `text` fields. The arguments are identifiers, numbers
//! and values as the English shows them (`0x101`, `1.5 µs`), lists, or other messages (a
//! refusal's "step 3 (reg_mr)" context, a handle's kind), which a translation renders in turn.
//! [`MsgId::ALL`] lists every id, so a test can check that a page's tables cover exactly them.
//!
//! A few arguments carry text from outside rdmalab that has no id (the `toml` crate's syntax
//! errors, a world error): their ids say so (`detail`), and a translation quotes them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::SerializeMap;

/// Declares [`MsgId`] from `Variant = "id" => "English template"` lines.
macro_rules! msg_ids {
    ($($(#[$doc:meta])* $v:ident = $id:literal => $en:literal,)*) => {
        /// One kind of message. Each variant's English template is in [`MsgId::en`]; the
        /// dotted id in [`MsgId::id`]. Variants are grouped by where they appear: results
        /// (`result.*`), notes (`note.*`), skipped and failed steps and aborts (`skip.*`,
        /// `failed.*`, `abort.*`), refusals (`refusal.*`) and the parts other messages quote
        /// (`ctx.*`, `kind.*`, `type.*`, `vocab.*`, `why.*`).
        #[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
        pub enum MsgId {
            $($(#[$doc])* #[doc = concat!("English: `` ", $en, " ``")] $v,)*
        }

        impl MsgId {
            /// Every id, in declaration order.
            pub const ALL: &'static [MsgId] = &[$(MsgId::$v,)*];

            /// The stable dotted name (`refusal.out_of_range`).
            pub const fn id(self) -> &'static str {
                match self {
                    $(MsgId::$v => $id,)*
                }
            }

            /// The English template, `{name}` marking each argument.
            pub const fn en(self) -> &'static str {
                match self {
                    $(MsgId::$v => $en,)*
                }
            }
        }
    };
}

/// A message: an id and its named arguments.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Msg {
    /// Which message.
    pub id: MsgId,
    /// Its arguments by placeholder name.
    pub args: BTreeMap<&'static str, Arg>,
}

/// One argument of a message.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Arg {
    /// A number.
    Int(i128),
    /// An identifier or a value as the English writes it (`qp_a`, `0x101`, `1.5 µs`).
    Str(String),
    /// Items the English joins with ", " (a translation with its own separator).
    List(Vec<Arg>),
    /// A message quoted inside another.
    Msg(Box<Msg>),
}

impl Msg {
    /// A message with no arguments yet.
    pub fn new(id: MsgId) -> Msg {
        Msg {
            id,
            args: BTreeMap::new(),
        }
    }

    /// Adds argument `name`.
    pub fn arg(mut self, name: &'static str, value: impl Into<Arg>) -> Msg {
        self.args.insert(name, value.into());
        self
    }

    /// The message in English: the id's template with each `{name}` replaced (`{{` and `}}`
    /// stand for literal braces).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.id.en().len() + 16);
        let mut used = std::collections::BTreeSet::new();
        for piece in pieces(self.id.en()) {
            match piece {
                Piece::Lit(s) => out.push_str(s),
                Piece::Arg(name) => match self.args.get_key_value(name) {
                    Some((k, a)) => {
                        used.insert(*k);
                        a.write_en(&mut out);
                    }
                    None => {
                        debug_assert!(false, "{}: no argument `{name}`", self.id.id());
                        out.push_str(name);
                    }
                },
            }
        }
        debug_assert!(
            used.len() == self.args.len(),
            "{}: arguments the template does not use: {:?}",
            self.id.id(),
            self.args
                .keys()
                .filter(|k| !used.contains(*k))
                .collect::<Vec<_>>()
        );
        out
    }
}

/// A template's parts: literal text and placeholders.
enum Piece<'a> {
    Lit(&'a str),
    Arg(&'a str),
}

/// Splits a template at its placeholders; `{{` and `}}` are literal braces.
fn pieces(t: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let Some(i) = rest.find(['{', '}']) else {
            out.push(Piece::Lit(rest));
            break;
        };
        if i > 0 {
            out.push(Piece::Lit(&rest[..i]));
        }
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push(Piece::Lit(&tail[..1]));
            rest = &tail[2..];
        } else if let Some(after) = tail.strip_prefix('{')
            && let Some(close) = after.find('}')
        {
            out.push(Piece::Arg(&after[..close]));
            rest = &after[close + 1..];
        } else {
            // A lone brace: tests::templates_are_well_formed refuses it in a template.
            out.push(Piece::Lit(&tail[..1]));
            rest = &tail[1..];
        }
    }
    out
}

/// The placeholder names of a template, in order (repeats kept).
pub fn placeholders(template: &str) -> Vec<&str> {
    pieces(template)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Arg(a) => Some(a),
            Piece::Lit(_) => None,
        })
        .collect()
}

impl Arg {
    fn write_en(&self, out: &mut String) {
        match self {
            Arg::Int(n) => out.push_str(&n.to_string()),
            Arg::Str(s) => out.push_str(s),
            Arg::List(items) => {
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    a.write_en(out);
                }
            }
            Arg::Msg(m) => out.push_str(&m.text()),
        }
    }
}

impl Serialize for Msg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("id", self.id.id())?;
        m.serialize_entry("args", &self.args)?;
        m.end()
    }
}

impl Serialize for Arg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // Within ±2^53 a JSON number stays exact in a browser; larger ones (u64::MAX as
            // a range's end) go as their digits.
            Arg::Int(n) if n.unsigned_abs() < 1 << 53 => s.serialize_i64(*n as i64),
            Arg::Int(n) => s.serialize_str(&n.to_string()),
            Arg::Str(x) => s.serialize_str(x),
            Arg::List(v) => v.serialize(s),
            Arg::Msg(m) => m.serialize(s),
        }
    }
}

macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(n: $t) -> Arg {
                Arg::Int(n as i128)
            }
        }
    )*};
}
int_arg!(i128, i64, u64, u32, u16, u8, usize, i32);

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Str(s.to_string())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Str(s)
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Arg {
        Arg::Str(s.clone())
    }
}

impl From<Msg> for Arg {
    fn from(m: Msg) -> Arg {
        Arg::Msg(Box::new(m))
    }
}

impl From<MsgId> for Msg {
    fn from(id: MsgId) -> Msg {
        Msg::new(id)
    }
}

impl From<MsgId> for Arg {
    fn from(id: MsgId) -> Arg {
        Arg::Msg(Box::new(Msg::new(id)))
    }
}

impl<T: Into<Arg>> From<Vec<T>> for Arg {
    fn from(v: Vec<T>) -> Arg {
        Arg::List(v.into_iter().map(Into::into).collect())
    }
}

/// A scenario conflict's reason ([`scenario::Why`]) as a message: the rule's id is a
/// `scenario.*` [`MsgId`] with the same English template; `None` only if a rule lacks its
/// id here, which `tests::scenario_rules_match_the_scenario_crate` refuses.
pub fn from_why(w: &scenario::Why) -> Option<Msg> {
    let id = *MsgId::ALL.iter().find(|m| m.id() == w.rule.id())?;
    let mut m = Msg::new(id);
    for (name, a) in &w.args {
        let a = match a {
            scenario::RuleArg::Int(n) => Arg::from(*n),
            scenario::RuleArg::Str(s) => Arg::from(s),
            scenario::RuleArg::Why(inner) => Arg::Msg(Box::new(from_why(inner)?)),
        };
        m = m.arg(name, a);
    }
    Some(m)
}

/// A list argument from anything that yields arguments.
pub fn list<T: Into<Arg>>(items: impl IntoIterator<Item = T>) -> Arg {
    Arg::List(items.into_iter().map(Into::into).collect())
}

/// `msg!(Id, name = value, other)`: a [`Msg`]; a bare `name` passes the variable of that name.
macro_rules! msg {
    ($v:ident $(, $k:ident $(= $e:expr)?)* $(,)?) => {
        $crate::session::msg::Msg::new($crate::session::msg::MsgId::$v)
            $(.arg(stringify!($k), msg!(@val $k $($e)?)))*
    };
    (@val $k:ident $e:expr) => { $e };
    (@val $k:ident) => { $k };
}
pub(crate) use msg;

msg_ids! {
    // ---- results of calls (`result.*`): the pieces of an ok result, in order ----
    ResultPd = "result.pd" => "{pd}",
    ResultAlloc = "result.alloc" => "{len} bytes at {va}",
    ResultRegMr = "result.reg_mr" => "lkey {lkey}, rkey {rkey}, {len} bytes at {va}, {pages} page(s) pinned",
    ResultCompChannel = "result.comp_channel" => "{channel} (a file descriptor to read events from)",
    ResultClosed = "result.closed" => "{name} closed",
    ResultArmedAny = "result.armed_any" => "armed: the next completion raises one event",
    ResultArmedSolicited = "result.armed_solicited" => "armed: the next solicited or error completion raises one event",
    ResultAsyncAcked = "result.async_acked" => "IBV_EVENT_{event} on {on} acknowledged",
    ResultEventsAcked = "result.events_acked" => "{n} event(s) acknowledged",
    ResultCq = "result.cq" => "{cq} with {size} entries",
    ResultQp = "result.qp" => "{qp_type} QP number {qpn} in RESET",
    ResultCaps = "result.caps" => "caps granted: max_send_wr {max_send_wr}, max_recv_wr {max_recv_wr}, max_send_sge {max_send_sge}, max_recv_sge {max_recv_sge}, max_inline_data {max_inline_data}",
    ResultTransition = "result.transition" => "{from} → {to}",
    ResultDiscarded = "result.discarded" => "discarded {send} send and {recv} receive WQE(s) without completions",
    ResultFlushed = "result.flushed" => "flushed {send} send and {recv} receive WQE(s) with WR_FLUSH_ERR",
    ResultEnteredRtr = "result.entered_rtr" => "the responder now accepts requests",
    ResultEnteredRts = "result.entered_rts" => "send WQEs may start",
    ResultDraining = "result.draining" => "draining started WQEs",
    ResultQueryQp = "result.query_qp" => "state {state}, dest_qp {dest_qp}, sq_psn {sq_psn}, rq_psn {rq_psn}, path_mtu {path_mtu}, timeout {timeout}, retry_cnt {retry_cnt}, rnr_retry {rnr_retry}, min_rnr_timer {min_rnr_timer}, max_rd_atomic {max_rd_atomic}, max_dest_rd_atomic {max_dest_rd_atomic}, access {access}",
    ResultQueryQpSqd = "result.query_qp_sqd" => "state {state} (sq_draining {draining}: {why}), dest_qp {dest_qp}, sq_psn {sq_psn}, rq_psn {rq_psn}, path_mtu {path_mtu}, timeout {timeout}, retry_cnt {retry_cnt}, rnr_retry {rnr_retry}, min_rnr_timer {min_rnr_timer}, max_rd_atomic {max_rd_atomic}, max_dest_rd_atomic {max_dest_rd_atomic}, access {access}",
    WhySqdInFlight = "why.sqd_in_flight" => "WQEs still in flight",
    WhySqdDrained = "why.sqd_drained" => "drained",
    ResultQpInit = "result.qp_init" => "{qp_type} send_cq {send_cq} recv_cq {recv_cq}",
    ResultPosted = "result.posted" => "{n} WR(s) posted",
    ResultConnected = "result.connected" => "{qp_a} (QP {qpn_a} on {host_a}) ⇄ {qp_b} (QP {qpn_b} on {host_b}), both RTS",
    ResultConnectedSelective = "result.connected_selective" => "{qp_a} (QP {qpn_a} on {host_a}) ⇄ {qp_b} (QP {qpn_b} on {host_b}), both RTS, selective repeat with at most {window} PSNs in flight",
    ResultQpDestroyed = "result.qp_destroyed" => "QP {qpn} destroyed",
    ResultWqesVanished = "result.wqes_vanished" => "{send} send and {recv} receive WQE(s) vanished without completions",
    ResultCqesRemoved = "result.cqes_removed" => "{n} of its completion(s) removed from {cqs} unpolled",
    ResultCqesRemovedTwo = "result.cqes_removed_two" => "{n} of its completion(s) removed from {cq_a} and {cq_b} unpolled",
    ResultDestroyed = "result.destroyed" => "{name} destroyed",
    ResultDeregMr = "result.dereg_mr" => "lkey {lkey} and rkey {rkey} are invalid from now on",
    ResultFreed = "result.freed" => "{name} freed",
    ResultRan = "result.ran" => "ran {duration} of simulated time ({events} events)",
    ResultNow = "result.now" => "now {time}",
    ResultWrote = "result.wrote" => "wrote {n} byte(s) at {va}",
    ResultRead = "result.read" => "{at} = hex {hex} = text \"{text}\"",
    ResultCqEvent = "result.cq_event" => "event for {cq} (not yet acknowledged)",
    ResultAsyncEvent = "result.async_event" => "IBV_EVENT_{event} on {on} (not yet acknowledged)",
    ResultTheDevice = "result.the_device" => "the device",

    // ---- notes beside a result (`note.*`) ----
    NoteIgnored = "note.ignored" => "`{key}` is not in the mask, so modify_qp ignores it (as ibv_modify_qp does)",
    NotePsnMasked = "note.psn_masked" => "{field} {given} has more than 24 bits; stored as {stored}",
    NoteBusyPolled = "note.busy_polled" => "busy-polled for {time} waiting for {n} completion(s)",
    NoteBlockedWake = "note.blocked_wake" => "blocked for {time} until the wake-up",
    NoteBlocked = "note.blocked" => "blocked for {time}",
    NoteNoCompletion = "note.no_completion" => "expect_no_completion: {why}",

    // ---- steps that did not run, runs that stopped ----
    SkipNotCreated = "skip.not_created" => "`{name}` was not created",
    SkipNotCreatedFailed = "skip.not_created_failed" => "`{name}` was not created (its step at line {line} failed)",
    SkipFreed = "skip.freed" => "`{name}` was freed by step {step} (line {line}, {call}); its handle is a dangling pointer now (using it is undefined behaviour in C), so this step does not run",
    FailedEvents = "failed.events" => "the session used up its budget of {budget} events (budget `max_events`; a verbs session may process at most {max}): shorten the runs or the traffic",
    FailedWall = "failed.wall" => "the session took more than its wall-clock budget of {secs} s on this machine (budget `max_wall_time`): shorten the runs or the traffic",
    FailedWorld = "failed.world" => "{detail}",
    AbortStopped = "abort.stopped" => "stopped at step {step} (line {line}): {why}",

    // ---- expectations' values in words (`check.*`; a Check's `what_msg`, `expected_msg`, `got_msg`) ----
    CheckStepRan = "check.step_ran" => "step ran",
    CheckRan = "check.ran" => "ran",
    CheckSkipped = "check.skipped" => "skipped: {why}",
    CheckDidNotComplete = "check.did_not_complete" => "none (the call did not complete)",
    CheckPostSucceeded = "check.post_succeeded" => "none (the post succeeded)",
    CheckNone = "check.none" => "none",
    CheckNoCompletion = "check.no_completion" => "no completion",
    CheckOpcodeInError = "check.opcode_in_error" => "none (not valid in an error completion)",
    CheckNeverCreated = "check.never_created" => "{name} (never created)",
    CheckNoEvent = "check.no_event" => "no event",
    CheckQueryFailed = "check.query_failed" => "none (query_qp failed)",
    CheckQpDestroyed = "check.qp_destroyed" => "no such QP (destroyed)",
    CheckQpNotCreated = "check.qp_not_created" => "no such QP (it was not created)",
    CheckBufferNotCreated = "check.buffer_not_created" => "nothing (the buffer or MR was not created)",
    CheckUnreadable = "check.unreadable" => "unreadable: {detail}",
    CheckNoCompletionWithin = "check.no_completion_within" => "no completion within {d} ({cqs})",
    CheckNoNewCompletion = "check.no_new_completion" => "no new completion",
    CheckGained = "check.gained" => "{cq} gained {n}",
    CheckGainedList = "check.gained_list" => "{cqs}",

    // ---- refusals of a session file (`refusal.*`; parse.rs) ----
    RefusalFileTooLarge = "refusal.file_too_large" => "the file has {bytes} bytes; a session file may have at most {max}",
    RefusalInvalidToml = "refusal.invalid_toml" => "invalid TOML: {why}",
    RefusalNotTable = "refusal.not_table" => "{what} must be a table, found {found}",
    RefusalUnknownKey = "refusal.unknown_key" => "unknown key `{key}` in {what}; allowed keys: {allowed}",
    RefusalNeedsKey = "refusal.needs_key" => "{what} needs the key `{key}`",
    RefusalWantString = "refusal.want_string" => "`{key}` must be a string, found {found}",
    RefusalWantInteger = "refusal.want_integer" => "`{key}` must be an integer, found {found}",
    RefusalOutOfRange = "refusal.out_of_range" => "`{key}` is out of range: allowed {lo}..={hi}",
    RefusalWantBool = "refusal.want_bool" => "`{key}` must be true or false, found {found}",
    RefusalWantArray = "refusal.want_array" => "`{key}` must be an array, found {found}",
    RefusalWantNames = "refusal.want_names" => "`{key}` must be a list of names, found {found}",
    RefusalWantDuration = "refusal.want_duration" => "`{key}` must be a duration string such as \"10us\" or \"2ms\" (units: ps, ns, us, µs, ms, s)",
    RefusalBadDuration = "refusal.bad_duration" => "bad duration \"{value}\" for `{key}`: {why}; write a number and a unit (ps, ns, us, µs, ms, s), e.g. \"10us\"",
    RefusalMoreThanZero = "refusal.more_than_zero" => "`{key}` must be more than 0",
    RefusalStepTooLong = "refusal.step_too_long" => "`{key}` = \"{value}\" is too long: at most {max} per step",
    RefusalSessionTooLong = "refusal.session_too_long" => "the session's simulated time would reach {total}; a session may cover at most {max}",
    RefusalBadName = "refusal.bad_name" => "`{key}` = \"{value}\" is not a valid name: use a letter or _ first, then letters, digits, _, - or . (at most {max} characters)",
    RefusalUnknownHost = "refusal.unknown_host" => "unknown host `{name}` in `{key}`; the hosts are: {hosts}",
    RefusalUnknownHandle = "refusal.unknown_handle" => "unknown handle `{name}` in `{key}`: no earlier step defines it with `as` ({want} wanted; {known})",
    RefusalWrongKind = "refusal.wrong_kind" => "`{key}` must name {want}, but `{name}` is {kind} (defined at line {line})",
    RefusalOtherHost = "refusal.other_host" => "`{key}` = `{name}` lives on host {host}, but {other} is on host {other_host}",
    RefusalHandleTwice = "refusal.handle_twice" => "handle `{name}` is already defined at line {line}; pick another name",
    RefusalHandleIsHost = "refusal.handle_is_host" => "`{name}` is a host name; give the handle another name",
    RefusalHostDisagrees = "refusal.host_disagrees" => "`host` = \"{host}\", but the step's handles live on host {implied}",
    RefusalEmptyPerProfile = "refusal.empty_per_profile" => "`{key}` is an empty table; give a value, or one per profile (mlx5, rxe, ibta)",
    RefusalNotProfile = "refusal.not_profile" => "`{key}` as a table gives one value per NIC profile; `{name}` is not a profile (allowed: mlx5, rxe, ibta)",
    RefusalUnknownPrefixed = "refusal.unknown_prefixed" => "unknown {what} `{name}` in `{key}`; allowed: {allowed} (the {prefix} prefix is optional)",
    RefusalUnknownName = "refusal.unknown_name" => "unknown {what} `{name}` in `{key}`; allowed: {allowed}",
    RefusalUnknownRetransmission = "refusal.unknown_retransmission" => "unknown `retransmission` `{name}`; allowed: {allowed}",
    RefusalDataTwice = "refusal.data_twice" => "{what} gives both `{a}` and `{b}`; give one of text, hex, u64",
    RefusalLiteralTooLong = "refusal.literal_too_long" => "`{key}` holds {n} bytes; at most {max} are allowed",
    RefusalEmpty = "refusal.empty" => "`{key}` is empty",
    RefusalBadHex = "refusal.bad_hex" => "`{key}` must be pairs of hex digits (spaces, _ and : may separate them), e.g. \"de ad be ef\"",
    RefusalBufAndMr = "refusal.buf_and_mr" => "{what} names both `buf` and `mr`; give one",
    RefusalNeedsBufOrMr = "refusal.needs_buf_or_mr" => "{what} needs `buf` (a buffer) or `mr` (an MR)",
    RefusalNoStepsAdd = "refusal.no_steps_add" => "the session has no steps; add [[step]] tables (see scenarios/verbs/README.md)",
    RefusalNoSteps = "refusal.no_steps" => "the session has no steps",
    RefusalTooManySteps = "refusal.too_many_steps" => "the session has {n} steps; at most {max} are allowed",
    RefusalHostCount = "refusal.host_count" => "`hosts` has {n} names; the {topology} topology takes {takes}",
    RefusalHostTwice = "refusal.host_twice" => "host `{name}` is listed twice in `hosts`",
    RefusalLossNumber = "refusal.loss_number" => "`loss` must be a number, found {found}",
    RefusalLossRange = "refusal.loss_range" => "`loss` is a per-frame probability: allowed 0.0..=1.0",
    RefusalNoCall = "refusal.no_call" => "step {step} has no `call`; allowed calls: {allowed}",
    RefusalUnknownCall = "refusal.unknown_call" => "unknown call `{name}`; allowed calls: {allowed}",
    RefusalNeedsBytes = "refusal.needs_bytes" => "{what} needs the bytes to write: `text`, `hex` or `u64`",
    RefusalReadTotal = "refusal.read_total" => "`len` = {len}: the session's `read_memory` steps would show {total} bytes; a session may show at most {max} in all",
    RefusalNoCompletionCall = "refusal.no_completion_call" => "`expect_no_completion` needs a step with a `cq` (poll_cq) or a `qp` (modify_qp, query_qp, post_send, post_recv), not {call}",
    RefusalPastEnd = "refusal.past_end" => "{len} bytes at offset {offset} run past the end of `{name}` ({blen} bytes)",
    RefusalBuffersTotal = "refusal.buffers_total" => "the session's buffers would total {total} bytes; at most {max} are allowed",
    RefusalFillTwice = "refusal.fill_twice" => "{what} gives more than one initial content; give at most one of text, hex, u64, fill, pattern",
    RefusalBytesDoNotFit = "refusal.bytes_do_not_fit" => "{n} bytes do not fit a buffer of {len} bytes",
    RefusalNeedsCq = "refusal.needs_cq" => "{what} needs either `cq` (one CQ for both queues) or both `send_cq` and `recv_cq`",
    RefusalTooManyQps = "refusal.too_many_qps" => "host {host} would have more than {max} QPs",
    RefusalMaskStateNoState = "refusal.mask_state_no_state" => "{what}: the mask has STATE but no `state` says which state to move to",
    RefusalSgeShape = "refusal.sge_shape" => "`sge` must be a table {{ mr = \"...\", offset = 0, len = 8 }} or an array of them, found {found}",
    RefusalTooManySges = "refusal.too_many_sges" => "`sge` has {n} entries; at most {max}",
    RefusalWrAndKey = "refusal.wr_and_key" => "{what} has both `wr` (a chain) and `{key}`; put every WR's keys inside `wr`",
    RefusalChainLength = "refusal.chain_length" => "`wr` must hold 1 to {max} WRs",
    RefusalUdNeedsUd = "refusal.ud_needs_ud" => "post_send on UD QP `{name}` needs `ud` = {{ qp = \"remote_qp\", qkey = 0x11111111 }} in each WR: the destination QP (its host gives the address handle) and the Q_Key",
    RefusalUdOnConnected = "refusal.ud_on_connected" => "`ud` is for UD QPs; `{name}` is connected and sends to its peer",
    RefusalNeedsRemote = "refusal.needs_remote" => "{opcode} needs `remote` = {{ mr = \"peer_mr\", offset = 0 }}: the peer's address and rkey, exchanged out of band",
    RefusalNoRemote = "refusal.no_remote" => "{opcode} takes no `remote` (it goes to a receive WQE)",
    RefusalOnlyUsedBy = "refusal.only_used_by" => "`{key}` is only used by {who}, not {opcode}",
    RefusalOnlyUsedByTwo = "refusal.only_used_by_two" => "`{key}` is only used by {a} and {b}, not {opcode}",
    RefusalRemoteNeedsRkey = "refusal.remote_needs_rkey" => "`remote` with `buf` needs `rkey`: the peer MR's name (or a raw number)",
    RefusalConnectTwoHosts = "refusal.connect_two_hosts" => "`hosts` of connect must name exactly two hosts",
    RefusalConnectSameHost = "refusal.connect_same_host" => "connect needs two different hosts",
    RefusalConnectTwoNames = "refusal.connect_two_names" => "`{key}` of connect must give two names: one for each host",
    RefusalMtu = "refusal.mtu" => "`mtu` must be 256, 512, 1024, 2048 or 4096",
    RefusalPathMtu = "refusal.path_mtu" => "`path_mtu` must be 256, 512, 1024, 2048 or 4096",
    RefusalChannelHost = "refusal.channel_host" => "`channel` names host {host}, which is not one of connect's `hosts`",
    RefusalWindowNeedsSelective = "refusal.window_needs_selective" => "`window` caps selective repeat's packets in flight; it needs `retransmission = \"selective\"`",
    RefusalExpectNotApply = "refusal.expect_not_apply" => "`expect.{key}` does not apply to {call}: {why}",
    RefusalBadWrShape = "refusal.bad_wr_shape" => "`bad_wr` must be the index of the failing WR (0 = first) or \"none\", found {found}",
    RefusalEventKeyAsyncOnly = "refusal.event_key_async_only" => "`expect.event.{key}` is for get_async_event; a completion event names only its `cq`",
    RefusalExpectMemoryNeedsData = "refusal.expect_memory_needs_data" => "an `expect.memory` entry needs `text`, `hex` or `u64`",

    // ---- the web lab server's answers that are not refusals of a file (`server.*`; crates/web
    // sends them in an error's `msg` and `allowed_msg`, so a page writes them in its language) ----
    ServerBusy = "server.busy" => "the server is busy: every core runs a simulation and {waiting} more wait; try again in a second",
    ServerStopping = "server.stopping" => "the server is stopping",
    ServerRequestTimeout = "server.request_timeout" => "the request took longer than {secs} s (a slow upload, or a queue of runs ahead of it)",
    ServerSimTooSlow = "server.sim_too_slow" => "the simulation took longer than {secs} s; try a shorter stream or fewer messages",
    ServerRunTooSlow = "server.run_too_slow" => "the run took longer than {secs} s",
    ServerPanic = "server.panic" => "the simulation stopped on an internal error (a bug in rdmalab): please file the report below",
    ServerSessionPanic = "server.session_panic" => "the session stopped on an internal error (a bug in rdmalab): {detail}",
    ServerRunFailed = "server.run_failed" => "the run failed: {detail}",
    ServerBudgetSimTime = "server.budget_sim_time" => "the simulation stopped: the run needs more than its simulated-time budget of {limit} (scenario key `budget.max_sim_time_ms`); raise it if the scenario really runs that long",
    ServerBudgetEvents = "server.budget_events" => "the simulation stopped: the run needs more than its budget of {limit} events (scenario key `budget.max_events`); raise it or shrink the workload",
    ServerBudgetMemory = "server.budget_memory" => "the simulation stopped: the run needs more than its memory budget of {mb} MB (scenario key `budget.max_memory_mb`); raise it or shrink the workload",
    ServerBudgetWall = "server.budget_wall" => "the simulation stopped: the run took longer than its wall-time budget of {limit} after {events} events (scenario key `budget.max_wall_s`); raise it or shrink the workload",
    ServerBudgetAllowed = "server.budget_allowed" => "a larger value, within the key's range (the web lab caps budget.max_wall_s at {wall} s and budget.max_memory_mb at {mb} MB)",
    ServerAnswerTooLarge = "server.answer_too_large" => "the answer would be {mib} MiB, more than the web lab sends ({max} MiB): ask for fewer steps, smaller memory dumps or a smaller run (the CLI has no such cap)",
    ServerMoreThanWebRuns = "server.more_than_web_runs" => "{field} = {value} is more than the web lab runs",
    ServerAtMostStream = "server.at_most_stream" => "at most {max} µs here (the CLI runs longer streams)",
    ServerAtMost = "server.at_most" => "at most {max} here",
    ServerAtMostBytes = "server.at_most_bytes" => "at most {n} messages of {bytes} B here ({mib} MiB in all)",
    ServerAtMostK = "server.at_most_k" => "at most 6 here (k³/4 hosts, at most {max})",
    ServerScenarioSyntax = "server.scenario_syntax" => "invalid TOML: {why}",
    ServerScenarioUnknownKey = "server.scenario_unknown_key" => "unknown key `{key}`: allowed keys are {allowed}",
    ServerScenarioWrongType = "server.scenario_wrong_type" => "{key} = {value} has the wrong type: allowed {allowed}",
    ServerScenarioOutOfRange = "server.scenario_out_of_range" => "{key} = {value} is out of range: allowed {allowed}",
    ServerScenarioBadEnum = "server.scenario_bad_enum" => "{key} = {value} is not a known value: allowed {allowed}",
    ServerScenarioCannotApply = "server.scenario_cannot_apply" => "{key} = {value} cannot apply: {allowed}",
    ServerScenarioConflict = "server.scenario_conflict" => "{key} = {value} clashes with another key: allowed {allowed}",

    // ---- a failed verb's rule (`verr.*`, `vpost.*`; verbs_msg.rs): what the verbs crate explains ----
    VerrErrno = "verr.errno" => "{errno}: {why}",
    VerrNoSuch = "verr.no_such" => "{what} does not exist",
    VerrNoSuchMr = "verr.no_such_mr" => "{mr} does not exist (deregistered, or never registered)",
    VerrPdInUse = "verr.pd_in_use" => "dealloc_pd: {pd} is still used by {n} MR(s)/QP(s); destroy them first",
    VerrCqInUse = "verr.cq_in_use" => "destroy_cq: {cq} is still used by {n} QP queue(s); destroy the QPs first",
    VerrCqEventsUnacked = "verr.cq_events_unacked" => "destroy_cq: {cq} has {n} completion event(s) not acknowledged with ack_cq_events (ibv_destroy_cq would block forever)",
    VerrCqAsyncUnacked = "verr.cq_async_unacked" => "destroy_cq: {cq} has {n} async event(s) not acknowledged with ack_async_event (ibv_destroy_cq would block forever)",
    VerrQpAsyncUnacked = "verr.qp_async_unacked" => "destroy_qp: {qp} has {n} async event(s) not acknowledged with ack_async_event (ibv_destroy_qp would block forever)",
    VerrAsyncAckWithoutEvent = "verr.async_ack_without_event" => "ack_async_event: no {event} event about that object is taken and unacknowledged",
    VerrAckTooMany = "verr.ack_too_many" => "ack_cq_events: {cq} has {unacked} unacknowledged event(s), cannot acknowledge {acked}",
    VerrChannelInUse = "verr.channel_in_use" => "destroy_comp_channel: {channel} is still used by {n} CQ(s)",
    VerrNotifyWithoutChannel = "verr.notify_without_channel" => "req_notify_cq: {cq} has no completion channel, so no event could be delivered",
    VerrCqSize = "verr.cq_size" => "create_cq: cqe {requested} must be between 1 and the device's max_cqe {max}",
    VerrQpCapTooLarge = "verr.qp_cap_too_large" => "create_qp: {field} {requested} is above the device limit {max}",
    VerrTooMany = "verr.too_many" => "{what}: the device supports at most {max}",
    VerrNoSuchWqe = "verr.no_such_wqe" => "{qp}: WQE {id} is not outstanding (flushed or discarded by a state change?)",
    VerrMrLocalWrite = "verr.mr_local_write" => "reg_mr: access {access} asks for remote write or atomic access without LOCAL_WRITE; \"If IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC is set, then IBV_ACCESS_LOCAL_WRITE must be set too\" (ibv_reg_mr.3)",
    VerrMrUnknownBits = "verr.mr_unknown_bits" => "reg_mr: access {access} has bits verbs.h does not define",
    VerrMrZeroLength = "verr.mr_zero_length" => "reg_mr: length 0 (rdmalab refuses zero-length registrations)",
    VerrMrTooLarge = "verr.mr_too_large" => "reg_mr: length {len} is above the device's max_mr_size {max}",
    VerrMrUnmapped = "verr.mr_unmapped" => "reg_mr: {va}..{end} is not inside one allocated buffer, so its pages cannot be pinned",
    VerrMemUnmapped = "verr.mem_unmapped" => "address range {va}..{end} ({len} bytes) is not inside one allocated buffer",
    VerrMemZeroLength = "verr.mem_zero_length" => "cannot allocate a zero-length buffer",
    VerrMemTooLarge = "verr.mem_too_large" => "a real buffer of {len} bytes exceeds the {max}-byte limit; use a synthetic buffer",
    VerrMemOutOfSpace = "verr.mem_out_of_space" => "virtual address space exhausted",
    VerrMemNotABuffer = "verr.mem_not_a_buffer" => "{va} does not start an allocated buffer",
    VerrModCurState = "verr.mod_cur_state" => "modify_qp: CUR_STATE is only accepted when the current state is RTR, RTS, SQD or SQE, not {cur} (ib_modify_qp_is_ok)",
    VerrModIllegal = "verr.mod_illegal" => "modify_qp {from}→{to}: not a legal transition (from {from} the legal targets are {targets})",
    VerrModMissing = "verr.mod_missing" => "modify_qp {from}→{to}: missing required attribute{s} {missing} ({qp_type} requires {required})",
    VerrModNotAllowed = "verr.mod_not_allowed" => "modify_qp {from}→{to}: attribute{s} {extra} not allowed for {qp_type} (allowed: {allowed})",
    VerrModPort = "verr.mod_port" => "modify_qp: port {port} does not exist (the device has port 1)",
    VerrModPkeyIndex = "verr.mod_pkey_index" => "modify_qp: pkey_index {index} is outside the P_Key table ({len} entries)",
    VerrModAltPath = "verr.mod_alt_path" => "modify_qp: ALT_PATH is not supported on RoCE (_ib_modify_qp: \"ban them in roce mode\")",
    VerrModNotGlobal = "verr.mod_not_global" => "modify_qp: RoCE needs a global address vector (ah_attr.is_global = 1 with a GRH and a destination GID)",
    VerrModSgidIndex = "verr.mod_sgid_index" => "modify_qp: sgid_index {index} is outside the GID table ({len} entries)",
    VerrModGidFamily = "verr.mod_gid_family" => "modify_qp: sgid_index {index} is {sgid}, an {sgid_family} address, but the destination GID {dgid} is {dgid_family}: the destination MAC cannot be resolved",
    VerrModTimeout = "verr.mod_timeout" => "modify_qp: timeout {value} is above 31 (the local ACK timeout is 4.096 µs × 2^timeout, a 5-bit field)",
    VerrModRetryCnt = "verr.mod_retry_cnt" => "modify_qp: retry_cnt {value} is above 7 (a 3-bit field)",
    VerrModRnrRetry = "verr.mod_rnr_retry" => "modify_qp: rnr_retry {value} is above 7 (a 3-bit field; 7 means retry forever)",
    VerrModMinRnrTimer = "verr.mod_min_rnr_timer" => "modify_qp: min_rnr_timer {value} is above 31 (a 5-bit RNR timer code)",
    VerrModPathMtu = "verr.mod_path_mtu" => "modify_qp: path_mtu {requested} is above the port's max MTU {max}",
    VerrModMaxRdAtomic = "verr.mod_max_rd_atomic" => "modify_qp: max_rd_atomic {requested} is above the device's max_qp_init_rd_atom {max}",
    VerrModMaxDestRdAtomic = "verr.mod_max_dest_rd_atomic" => "modify_qp: max_dest_rd_atomic {requested} is above the device's max_qp_rd_atom {max}",
    VerrModDestQpn = "verr.mod_dest_qpn" => "modify_qp: dest_qp_num {value} needs more than 24 bits",
    VerrModSqDraining = "verr.mod_sq_draining" => "modify_qp SQD→{to}: the send queue is still draining; only ERR is accepted until it drains (rxe_qp_chk_attr)",
    VerrModNoMlx5 = "verr.mod_no_mlx5" => "modify_qp {from}→{to}: the kernel's table allows it, but the mlx5 driver has no firmware command for it (no {from}→{to} entry in the optab of __mlx5_ib_modify_qp, drivers/infiniband/hw/mlx5/qp.c); rxe implements SQD",
    VerrNoCqEvent = "verr.no_cq_event" => "get_cq_event: no completion event reached {channel} within {wait}; a blocking call would still be waiting, a non-blocking channel fd returns EAGAIN",
    VerrNoAsyncEvent = "verr.no_async_event" => "get_async_event: no asynchronous event on {host} within {wait}; a blocking call would still be waiting, a non-blocking async fd returns EAGAIN",
    VpostAny = "vpost.any" => "{op} → {errno}: {why}",
    VpostWr = "vpost.wr" => "{op} → {errno}: WR #{i} of the chain: {why}",
    VpostStateRxe = "vpost.state_rxe" => "QP is in {state}, must be RTS; the {n} WR(s) were written to the send queue but the doorbell failed (rxe_post_send: \"qp not ready to send\"); they run if the QP reaches RTS",
    VpostState = "vpost.state" => "QP is in {state}, must be RTS (IBTA C10-96: immediate error)",
    VpostRecvStateRxe = "vpost.recv_state_rxe" => "QP is in {state}; receive WRs need INIT or later (rxe_post_recv refuses RESET)",
    VpostRecvState = "vpost.recv_state" => "QP is in {state}; receive WRs need INIT or later (IBTA C10-96)",
    VpostQueueFull = "vpost.queue_full" => "the work queue is full ({depth} WRs outstanding; completions free slots)",
    VpostTooManySge = "vpost.too_many_sge" => "{n} SGEs, the QP allows {max}",
    VpostInlineTooLong = "vpost.inline_too_long" => "inline payload of {len} bytes, the QP's max_inline_data is {max}",
    VpostInlineNotAllowed = "vpost.inline_not_allowed" => "IBV_SEND_INLINE on {opcode}; inline is valid only for SEND and RDMA WRITE",
    VpostInlineUnmapped = "vpost.inline_unmapped" => "inline SGE {addr}+{len} is not mapped memory (a real provider would crash copying it)",
    VpostAtomicExact = "vpost.atomic_exact" => "atomic with {len} bytes of SGE; an atomic needs exactly 8",
    VpostAtomicAtLeast = "vpost.atomic_at_least" => "atomic with {len} bytes of SGE; rxe needs at least 8",
    VpostAtomicAlign = "vpost.atomic_align" => "atomic remote_addr {addr} is not 8-byte aligned",
    VpostMissingUd = "vpost.missing_ud" => "a UD send WR needs wr.ud (address handle, remote QPN, Q_Key)",

    // ---- TOML syntax errors (`toml.*`; syntax.rs): the `toml` crate's descriptions ----
    TomlExpected = "toml.expected" => "{what}, expected {expected}",
    TomlOther = "toml.other" => "{detail}",
    TomlUnclosedArray = "toml.unclosed_array" => "unclosed array",
    TomlUnclosedArrayTable = "toml.unclosed_array_table" => "unclosed array table",
    TomlUnclosedTable = "toml.unclosed_table" => "unclosed table",
    TomlUnclosedInlineTable = "toml.unclosed_inline_table" => "unclosed inline table",
    TomlUnquotedString = "toml.unquoted_string" => "string values must be quoted",
    TomlDuplicateKey = "toml.duplicate_key" => "duplicate key",
    TomlInvalidBasicString = "toml.invalid_basic_string" => "invalid basic string",
    TomlInvalidLiteralString = "toml.invalid_literal_string" => "invalid literal string",
    TomlInvalidString = "toml.invalid_string" => "invalid string",
    TomlKeyNoValue = "toml.key_no_value" => "key with no value",
    TomlMissingValue = "toml.missing_value" => "missing value for key",
    TomlInvalidValue = "toml.invalid_value" => "invalid value",
    TomlUnexpectedContent = "toml.unexpected_content" => "unexpected key or value",
    TomlMissingCommaArray = "toml.missing_comma_array" => "missing comma between array elements",
    TomlMissingCommaInline = "toml.missing_comma_inline" => "missing comma between key-value pairs",
    TomlExtraComma = "toml.extra_comma" => "extra comma in array",
    TomlMissingAssignment = "toml.missing_assignment" => "missing assignment between key-value pairs",
    TomlExtraAssignment = "toml.extra_assignment" => "extra assignment between key-value pairs",
    TomlInvalidKey = "toml.invalid_key" => "invalid unquoted key",
    TomlLeadingZero = "toml.leading_zero" => "unexpected leading zero",
    TomlMissingQuote = "toml.missing_quote" => "missing opening quote",

    // ---- parts other messages quote ----
    CtxTop = "ctx.top" => "the top level",
    CtxFabric = "ctx.fabric" => "[fabric]",
    CtxDrop = "ctx.drop" => "a `drop` rule",
    CtxStep = "ctx.step" => "step {step}",
    CtxStepCall = "ctx.step_call" => "step {step} ({call})",
    CtxSge = "ctx.sge" => "an `sge` entry",
    CtxWr = "ctx.wr" => "WR #{n} of {what}",
    CtxUd = "ctx.ud" => "`ud`",
    CtxRemote = "ctx.remote" => "`remote`",
    CtxConnectChannel = "ctx.connect_channel" => "`channel` of connect",
    CtxExpect = "ctx.expect" => "`expect`",
    CtxQpStates = "ctx.qp_states" => "`expect.qp_states`",
    CtxEvent = "ctx.event" => "`expect.event`",
    CtxExpectMemory = "ctx.expect_memory" => "an `expect.memory` entry",
    CtxExpectWc = "ctx.expect_wc" => "an `expect.wc` entry",
    CtxExactly = "ctx.exactly" => "exactly {n}",
    CtxRange = "ctx.range" => "{lo} to {hi}",
    CtxNoneDefined = "ctx.none_defined" => "none is defined yet",
    CtxDefinedSoFar = "ctx.defined_so_far" => "defined so far: {names}",
    KindBuffer = "kind.buffer" => "a buffer",
    KindChannel = "kind.channel" => "a completion channel",
    KindCq = "kind.cq" => "a CQ",
    KindMr = "kind.mr" => "an MR",
    KindPd = "kind.pd" => "a PD",
    KindQp = "kind.qp" => "a QP",
    WantBuffer = "kind.want_buffer" => "a buffer (from `alloc`)",
    WantChannel = "kind.want_channel" => "a completion channel (from `create_comp_channel`)",
    TypeString = "type.string" => "string",
    TypeInteger = "type.integer" => "integer",
    TypeFloat = "type.float" => "float",
    TypeBoolean = "type.boolean" => "boolean",
    TypeDatetime = "type.datetime" => "datetime",
    TypeArray = "type.array" => "array",
    TypeTable = "type.table" => "table",
    VocabAccessFlag = "vocab.access_flag" => "access flag",
    VocabSendFlag = "vocab.send_flag" => "send flag",
    VocabMaskBit = "vocab.mask_bit" => "mask bit",
    VocabQpState = "vocab.qp_state" => "QP state",
    VocabAsyncEvent = "vocab.async_event" => "async event",
    VocabOpcode = "vocab.opcode" => "opcode",
    VocabWcStatus = "vocab.wc_status" => "completion status",
    VocabWcOpcode = "vocab.wc_opcode" => "completion opcode",
    VocabReturnCode = "vocab.return_code" => "return code",
    VocabProfile = "vocab.profile" => "profile",
    VocabTopology = "vocab.topology" => "topology",
    VocabQpType = "vocab.qp_type" => "QP type",
    WhyThePd = "why.the_pd" => "the PD",
    WhyTheCq = "why.the_cq" => "the CQ",
    WhyTheQp = "why.the_qp" => "the QP",
    WhyDurNoUnit = "why.dur_no_unit" => "no unit",
    WhyDurUnknownUnit = "why.dur_unknown_unit" => "unknown unit",
    WhyDurNotNumber = "why.dur_not_number" => "not a number",
    WhyDurTooLarge = "why.dur_too_large" => "too large",
    WhyDurFiner = "why.dur_finer" => "finer than 1 ps",
    WhyRunReturnsNothing = "why.run_returns_nothing" => "run returns nothing",
    WhyOnlyPostsBadWr = "why.only_posts_bad_wr" => "only post_send and post_recv set bad_wr",
    WhyOnlyPollCompletions = "why.only_poll_completions" => "only poll_cq returns completions",
    WhyOnlyEventCalls = "why.only_event_calls" => "only get_cq_event and get_async_event return an event",
    WhyOnlyQueryQpDraining = "why.only_query_qp_draining" => "only query_qp reports sq_draining",
    WhyNoQpUseQpStates = "why.no_qp_use_qp_states" => "it names no `qp`; use `qp_states = {{ qp_x = \"RTS\" }}`",

    // ---- a scenario's conflicts and inapplicable keys (`scenario.*`): the same ids and
    // templates as scenario::Rule (tests::scenario_rules_match_the_scenario_crate) ----
    ScenarioBackToBackHosts = "scenario.conflict.back_to_back_hosts" => "2 when topology.kind = \"back_to_back\"",
    ScenarioFatTreeKEven = "scenario.conflict.fat_tree_k_even" => "an even number when topology.kind = \"fat_tree\"",
    ScenarioHostsPerLeafDivides = "scenario.conflict.hosts_per_leaf_divides" => "a divisor of topology.hosts ({hosts}), so that every leaf holds as many hosts",
    ScenarioFleetNeedsFatTree = "scenario.conflict.fleet_needs_fat_tree" => "\"pair\" unless topology.kind = \"fat_tree\"",
    ScenarioMatrixNeedsFile = "scenario.conflict.matrix_needs_file" => "the path of a csg-htsim .cm file when workload.pattern = \"matrix\"",
    ScenarioSwitchMtu = "scenario.conflict.switch_mtu" => "0 (no limit) or 576..=9216 (IPv4's smallest MTU up)",
    ScenarioEcnKminAboveKmax = "scenario.conflict.ecn_kmin_above_kmax" => "at most switch.ecn_kmax_bytes ({kmax})",
    ScenarioXonAboveXoff = "scenario.conflict.xon_above_xoff" => "at most lossless.xoff_bytes ({xoff})",
    ScenarioXonAboveAutoXoff = "scenario.conflict.xon_above_auto_xoff" => "at most lossless.xoff_bytes ({xoff}) (XOFF \"auto\": mlx5's rule for topology.link_gbps, topology.cable_m and the port MTU; set lossless.xoff_bytes to choose another)",
    ScenarioXoffNotBelowBuffer = "scenario.conflict.xoff_not_below_buffer" => "below switch.buffer_bytes ({buffer})",
    ScenarioAutoXoffNotBelowBuffer = "scenario.conflict.auto_xoff_not_below_buffer" => "below switch.buffer_bytes ({buffer}) (XOFF \"auto\": mlx5's rule for topology.link_gbps, topology.cable_m and the port MTU; set lossless.xoff_bytes to choose another)",
    ScenarioCrossNeedsStream = "scenario.conflict.cross_needs_stream" => "0 unless workload.stream_us > 0 (cross traffic runs beside a stream)",
    ScenarioCrossNeedsSwitch = "scenario.conflict.cross_needs_switch" => "0 unless topology.kind = \"switch\" (the bursts share one switch's egress queue with the path; {kind} does not build that switch)",
    ScenarioCrossNeedsHosts = "scenario.conflict.cross_needs_hosts" => "at least {hosts} on a switch with cross_traffic.senders = {senders} (hosts 0 and 1 carry the path, 2.. send the bursts)",
    ScenarioCrossTotalBytes = "scenario.conflict.cross_total_bytes" => "at most {max} with {senders} sender(s) and {bursts} bursts (1 TiB in total)",
    ScenarioCrossTooManyBursts = "scenario.conflict.cross_too_many_bursts" => "at least {min} µs for a {stream} µs stream (at most {max_bursts} bursts)",
    ScenarioUdSendOnly = "scenario.conflict.ud_send_only" => "\"send\" when rdma.qp_type = \"ud\"",
    ScenarioUcNoRead = "scenario.conflict.uc_no_read" => "\"write\" or \"send\" when rdma.qp_type = \"uc\"",
    ScenarioUdMessageAboveMtu = "scenario.conflict.ud_message_above_mtu" => "at most rdma.mtu_bytes ({mtu}) when rdma.qp_type = \"ud\"",
    ScenarioDcqcnNeedsEcn = "scenario.conflict.dcqcn_needs_ecn" => "false unless switch.ecn = true",
    ScenarioDctcpNeedsEcn = "scenario.conflict.dctcp_needs_ecn" => "\"cubic\" or \"newreno\" unless tcp.ecn = true",
    ScenarioTotalBytes = "scenario.conflict.total_bytes" => "at most {max} with {bytes}-byte messages (1 TiB in total)",
    ScenarioLeaveDefault = "scenario.inapplicable.leave_default" => "{why}; leave it at {default}",
    ScenarioNeedsSwitch = "scenario.inapplicable.needs_switch" => "{key} needs a switch: topology.kind = back_to_back has none",
    ScenarioFleetRunsNoTcp = "scenario.inapplicable.fleet_runs_no_tcp" => "{key} needs the TCP path: workload.pattern = {pattern} runs RDMA WRITEs only",
    ScenarioMatrixOnly = "scenario.inapplicable.matrix_only" => "workload.matrix is read by workload.pattern = \"matrix\" only (this plan runs {pattern})",
    ScenarioMatrixGivesSizes = "scenario.inapplicable.matrix_gives_sizes" => "workload.message_bytes: the connection matrix gives each flow's size",
    ScenarioRdmaOnly = "scenario.inapplicable.rdma_only" => "{key} needs the TCP path: workload.paths = \"rdma\" runs only RDMA",
    ScenarioTcpOnly = "scenario.inapplicable.tcp_only" => "{key} needs the RDMA path: workload.paths = \"tcp\" runs only TCP",
    ScenarioNeedsCollective = "scenario.inapplicable.needs_collective" => "{key} needs workload.pattern = \"collective\"",
    ScenarioNeedsLeafSpine = "scenario.inapplicable.needs_leaf_spine" => "{key} needs topology.kind = leaf_spine: {kind} has no spines",
    ScenarioKNeedsFatTree = "scenario.inapplicable.k_needs_fat_tree" => "topology.k needs topology.kind = fat_tree: {kind} has no radix to set",
    ScenarioFatTreeHosts = "scenario.inapplicable.fat_tree_hosts" => "topology.hosts does not size a fat_tree: topology.k does (k³/4 hosts)",
    ScenarioPairHosts = "scenario.inapplicable.pair_hosts" => "the pair pattern uses {used} hosts (0 and 1, and one per cross-traffic sender); topology.hosts = {hosts} would leave the rest idle",
    ScenarioEcmpOneSwitch = "scenario.inapplicable.ecmp_one_switch" => "switch.ecmp_hash needs equal-cost paths: topology.kind = switch has one switch",
    ScenarioNeedsEcn = "scenario.inapplicable.needs_ecn" => "{key} needs switch.ecn = true: no switch marks",
    ScenarioWatchdogNeedsPfc = "scenario.inapplicable.watchdog_needs_pfc" => "switch.pfc_watchdog_us needs lossless.enabled = true: nothing sends PAUSE",
    ScenarioProfileNeedsDcqcn = "scenario.inapplicable.profile_needs_dcqcn" => "rdma.dcqcn_profile needs rdma.dcqcn = true: no NIC runs DCQCN",
    ScenarioNeedsBursts = "scenario.inapplicable.needs_bursts" => "{key} needs cross_traffic.burst_bytes > 0: no host bursts",

    // ---- a lab's parameter errors (`lab.*`, crates/sim/src/labs/mod.rs parse_params) ----
    LabUnknown = "lab.unknown" => "no lab {id}",
    LabNotObject = "lab.not_object" => "the parameters must be a JSON object",
    LabNoParam = "lab.no_param" => "lab {lab} has no parameter {name}",
    LabValue = "lab.value" => "{name} = {value}",
    LabAllowedInt = "lab.allowed_int" => "an integer in {min}..={max}",
    LabAllowedBool = "lab.allowed_bool" => "true or false",
    LabAllowedChoice = "lab.allowed_choice" => "one of {choices}",
    LabDcqcnNeedsEcn = "lab.dcqcn_needs_ecn" => "dcqcn = {dcqcn} with ecn = false: DCQCN reacts to ECN marks, and nothing marks",
    LabAllowedDcqcn = "lab.allowed_dcqcn" => "off, unless ecn = true",
    LabStormTooLate = "lab.storm_too_late" => "stall_at_us + detect_us = {sum} µs is not before duration_us = {duration} µs: the run would end before the watchdog could act",
    LabNvmfIos = "lab.nvmf_ios" => "iodepth × initiators = {ios} IOs in flight: this lab allows at most {max} (so it answers in well under a second; `rdmalab fio` runs any)",
    LabNvmfBytes = "lab.nvmf_bytes" => "iodepth × initiators × bs = {mib} MiB in flight: this lab allows at most {max} MiB (so it answers in well under a second; `rdmalab fio` runs any)",
    LabAllreduceBytes = "lab.allreduce_bytes" => "hosts × size = {mib} MiB of gradients: this lab allows at most {max} MiB (so it answers within a couple of seconds; `rdmalab collective` runs any)",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_dotted() {
        let mut seen = std::collections::BTreeSet::new();
        for id in MsgId::ALL {
            let name = id.id();
            assert!(seen.insert(name), "{name} twice");
            let (family, rest) = name.split_once('.').expect("a dotted id");
            assert!(!family.is_empty() && !rest.is_empty(), "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._".contains(c)),
                "{name}"
            );
        }
    }

    #[test]
    fn templates_are_well_formed() {
        for id in MsgId::ALL {
            let t = id.en();
            let bare = t.replace("{{", "").replace("}}", "");
            let (mut depth, mut n) = (0, 0);
            for c in bare.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        n += 1;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
                assert!((0..=1).contains(&depth), "{}: {t}", id.id());
            }
            assert_eq!(depth, 0, "{}: {t}", id.id());
            assert_eq!(placeholders(t).len(), n, "{}: {t}", id.id());
            for p in placeholders(t) {
                assert!(
                    !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{}: placeholder {p:?}",
                    id.id()
                );
            }
        }
    }

    /// Every id is one the session code writes: an id no code sends would only be a line
    /// more in each page table.
    #[test]
    fn every_id_is_used() {
        let src = [
            include_str!("exec/mod.rs"),
            include_str!("exec/call.rs"),
            include_str!("exec/check.rs"),
            include_str!("exec/describe.rs"),
            include_str!("exec/view.rs"),
            include_str!("parse/mod.rs"),
            include_str!("parse/calls.rs"),
            include_str!("parse/expect.rs"),
            include_str!("parse/post.rs"),
            include_str!("parse/read.rs"),
            include_str!("parse/vocab.rs"),
            include_str!("report.rs"),
            include_str!("syntax.rs"),
            include_str!("verbs_msg.rs"),
            include_str!("../labs/mod.rs"),
        ]
        .concat();
        // The web server's answers are sent by crates/web (its error.rs tests them); the
        // scenario crate's reasons are checked by scenario_rules_match_the_scenario_crate.
        for id in MsgId::ALL
            .iter()
            .filter(|m| !m.id().starts_with("server.") && !m.id().starts_with("scenario."))
        {
            let name = format!("{id:?}");
            let used = src.match_indices(name.as_str()).any(|(i, _)| {
                let after = src[i + name.len()..].chars().next().unwrap_or(' ');
                let before = src[..i].chars().last().unwrap_or(' ');
                !after.is_ascii_alphanumeric() && !before.is_ascii_alphanumeric()
            });
            assert!(used, "{} ({name}) is never sent", id.id());
        }
    }

    /// Every `scenario.*` id is a scenario::Rule with the same English template, and every rule
    /// has its id here, so the page's tables cover every conflict the CLI can print.
    #[test]
    fn scenario_rules_match_the_scenario_crate() {
        for r in scenario::Rule::ALL {
            let m = MsgId::ALL.iter().find(|m| m.id() == r.id());
            let m = m.unwrap_or_else(|| panic!("{} has no MsgId", r.id()));
            assert_eq!(m.en(), r.en(), "{}", r.id());
        }
        for m in MsgId::ALL
            .iter()
            .filter(|m| m.id().starts_with("scenario."))
        {
            assert!(
                scenario::Rule::ALL.iter().any(|r| r.id() == m.id()),
                "{} is no scenario rule",
                m.id()
            );
        }
        let w = scenario::Why::new(scenario::Rule::LeaveDefault)
            .arg(
                "why",
                scenario::Why::new(scenario::Rule::NeedsEcn).arg("key", "switch.ecn_pmax"),
            )
            .arg("default", "0.2");
        let m = from_why(&w).expect("every rule has an id");
        assert_eq!(m.text(), w.text());
    }

    #[test]
    fn text_and_json() {
        let m = msg!(
            AbortStopped,
            step = 3,
            line = 12usize,
            why = msg!(FailedWorld, detail = "x")
        );
        assert_eq!(m.text(), "stopped at step 3 (line 12): x");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"id":"abort.stopped","args":{"line":12,"step":3,"why":{"id":"failed.world","args":{"detail":"x"}}}}"#
        );
        let big = Msg::new(MsgId::FailedWorld).arg("detail", u64::MAX);
        assert_eq!(
            serde_json::to_string(&big).unwrap(),
            r#"{"id":"failed.world","args":{"detail":"18446744073709551615"}}"#
        );
    }
}
