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
            $($(#[$doc])* #[doc = $en] $v,)*
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

    // ---- refusals of a session file (`refusal.*`; parse.rs) ----
    RefusalFileTooLarge = "refusal.file_too_large" => "the file has {bytes} bytes; a session file may have at most {max}",
    RefusalInvalidToml = "refusal.invalid_toml" => "invalid TOML: {detail}",
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
            include_str!("exec.rs"),
            include_str!("parse.rs"),
            include_str!("report.rs"),
        ]
        .concat();
        for id in MsgId::ALL {
            let name = format!("{id:?}");
            let used = src.match_indices(name.as_str()).any(|(i, _)| {
                let after = src[i + name.len()..].chars().next().unwrap_or(' ');
                let before = src[..i].chars().last().unwrap_or(' ');
                !after.is_ascii_alphanumeric() && !before.is_ascii_alphanumeric()
            });
            assert!(used, "{} ({name}) is never sent", id.id());
        }
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
