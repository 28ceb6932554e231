//! Every key a session file may hold, table by table: one declaration per verbs call (and per
//! nested table) listing its keys, how each is read, its range or default, and what it means.
//! The parser takes from here the keys it accepts (an unknown one is refused with this list),
//! the ranges it checks integers against (the refusal names them) and the defaults it fills
//! in, and [`markdown`] renders the declarations as the key reference of
//! `scenarios/verbs/README.md` (a test checks that the README holds it as rendered).
//!
//! This file is a table of data (docs/ARCHITECTURE.md §6).

use std::fmt::Write;

use super::read::Want;
use super::vocab::Vocab;
use crate::session::plan::limits;

/// How a key's value is read.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ty {
    /// A host of `hosts`.
    Host,
    /// An array of host names.
    Hosts,
    /// A handle an earlier step defined, of this kind.
    Handle(Want),
    /// A new handle's name: the step's output.
    Out,
    /// An array of new handle names, one per host (`connect`).
    Outs,
    /// An integer in `lo..=hi`.
    Int { lo: u64, hi: u64 },
    /// An integer in `lo..=hi`, or `"none"`.
    IntOrNone { lo: u64, hi: u64 },
    /// A handle of this kind, or a raw integer in `lo..=hi` (a QPN, an rkey).
    HandleOrInt { want: Want, lo: u64, hi: u64 },
    /// A path MTU in bytes: an integer in 0..=65536 (so another type or a larger number is
    /// refused as for any integer), then one of 256, 512, 1024, 2048, 4096.
    Mtu,
    /// A probability, 0.0 to 1.0.
    Prob,
    /// `true` or `false`.
    Bool,
    /// A duration with a unit (`"10us"`), more than 0, at most `limits::MAX_STEP_TIME`.
    Duration,
    /// One name of a vocabulary.
    Name(Vocab),
    /// A name or a list of names of a vocabulary (flags).
    Names(Vocab),
    /// A return code: `0`, `"ok"` or an errno name.
    Ret,
    /// Bytes as UTF-8 text, or as hex digits.
    Bytes,
    /// A table with these keys.
    Table(&'static [Key]),
    /// A table or an array of tables with these keys.
    Tables(&'static [Key]),
    /// A table whose keys are names the session defines (hosts, QP handles).
    Map,
}

/// Whether a key must be given, and what it is when not.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Need {
    /// The table is refused without it.
    Required,
    /// Absent means none (or what `doc` says).
    Optional,
    /// An integer key's default.
    Int(u64),
    /// A boolean key's default.
    Bool(bool),
}

/// One key of a table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key {
    /// Its name in the file.
    pub name: &'static str,
    /// How its value is read.
    pub ty: Ty,
    /// Required, optional or its default.
    pub need: Need,
    /// What it means.
    pub doc: &'static str,
}

impl Key {
    /// The kind of handle the key names.
    pub(crate) fn want(&self) -> Want {
        match self.ty {
            Ty::Handle(w) | Ty::HandleOrInt { want: w, .. } => w,
            _ => panic!("`{}` is not declared as a handle", self.name),
        }
    }

    /// The integer range the key's value must lie in, if it is an integer key.
    pub(crate) fn range(&self) -> Option<(u64, u64)> {
        match self.ty {
            Ty::Int { lo, hi } | Ty::IntOrNone { lo, hi } | Ty::HandleOrInt { lo, hi, .. } => {
                Some((lo, hi))
            }
            Ty::Mtu => Some((0, 65_536)),
            _ => None,
        }
    }
}

/// A table of declarations, one per line (a macro, so rustfmt leaves the lines as they are).
macro_rules! decl {
    ($($e:expr),* $(,)?) => {
        &[$($e),*]
    };
}

/// Declares a key (a `const fn`, so the tables are constants).
const fn k(name: &'static str, ty: Ty, need: Need, doc: &'static str) -> Key {
    Key {
        name,
        ty,
        need,
        doc,
    }
}

/// An integer key in `lo..=hi`.
const fn int(name: &'static str, lo: u64, hi: u64, need: Need, doc: &'static str) -> Key {
    k(name, Ty::Int { lo, hi }, need, doc)
}

/// One verbs call (or session action) a step may make.
#[derive(Debug)]
pub(crate) struct CallDecl {
    /// The `call = "..."` name.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// Its keys, as slices of tables: [`STEP_COMMON`], its own, and for a post the WR table's
    /// (whose keys may sit in the step itself).
    pub keys: &'static [&'static [Key]],
}

const U32: u64 = u32::MAX as u64;
const I64: u64 = i64::MAX as u64;
/// Offsets into buffers and MRs: far past any buffer a session can allocate, so a file can
/// name offsets past the end on purpose (an assumption, not a verbs limit).
const OFFSET_MAX: u64 = 1 << 40;
const DEPTH: u64 = limits::MAX_QUEUE_DEPTH as u64;
const CQE: u64 = limits::MAX_CQE as u64;
const POLL: u64 = limits::MAX_POLL as u64;

const HOST: Key = k(
    "host",
    Ty::Host,
    Need::Required,
    "The host the call runs on.",
);
const HOST_AGREES: Key = k(
    "host",
    Ty::Host,
    Need::Optional,
    "For readability: must agree with the host the step's handles are on.",
);
const AS: Key = k(
    "as",
    Ty::Out,
    Need::Required,
    "The handle the call creates.",
);
const fn handle(name: &'static str, want: Want, need: Need, doc: &'static str) -> Key {
    k(name, Ty::Handle(want), need, doc)
}
const OFFSET: Key = int(
    "offset",
    0,
    OFFSET_MAX,
    Need::Int(0),
    "Bytes from the buffer's or MR's start.",
);
const TEXT: Key = k(
    "text",
    Ty::Bytes,
    Need::Optional,
    "UTF-8 bytes, at most `limits::MAX_LITERAL_BYTES`.",
);
const HEX: Key = k(
    "hex",
    Ty::Bytes,
    Need::Optional,
    "Bytes as pairs of hex digits (spaces, `_`, `:` and a `0x` allowed).",
);
const U64: Key = int(
    "u64",
    0,
    u64::MAX,
    Need::Optional,
    "8 bytes, little-endian.",
);
const BUF: Key = handle(
    "buf",
    Want::Buffer,
    Need::Optional,
    "A buffer (or give `mr`).",
);
const MR: Key = handle("mr", Want::Mr, Need::Optional, "An MR (or give `buf`).");
const ACCESS: Key = k(
    "access",
    Ty::Names(Vocab::Access),
    Need::Optional,
    "Access flags (`IBV_ACCESS_` prefix optional); none: local read only.",
);
const WR_ID: Key = int(
    "wr_id",
    0,
    u64::MAX,
    Need::Int(0),
    "Returned in the completion.",
);

/// The top level of a session file.
pub(crate) const TOP: &[Key] = decl! {
    k("fabric", Ty::Table(FABRIC), Need::Optional, "The network."),
    k("hosts", Ty::Hosts, Need::Required, "The hosts, in order: 2 back to back, 2 to `limits::MAX_HOSTS` on a switch."),
    k("profile", Ty::Name(Vocab::Profile), Need::Optional, "NIC profile, `mlx5` when not given."),
    int("seed", 0, I64, Need::Int(1), "Seed of every random draw."),
    k("step", Ty::Tables(STEP_COMMON), Need::Required, "The steps."),
};

/// `[fabric]`.
pub(crate) const FABRIC: &[Key] = decl! {
    int("cable_m", 0, fabric::config::MAX_CABLE_M, Need::Int(3), "Cable length of every link, metres."),
    k("drop", Ty::Tables(DROP), Need::Optional, "Deterministic losses."),
    k("loss", Ty::Prob, Need::Optional, "Chance a frame is corrupted on every link, 0.0 when not given."),
    int("rate_gbps", 1, 1_600, Need::Int(100), "Line rate of every link, Gb/s."),
    k("topology", Ty::Name(Vocab::Topology), Need::Optional, "`back_to_back` (when not given) or `switch`."),
};

/// A `fabric.drop` rule.
pub(crate) const DROP: &[Key] = decl! {
    int("count", 1, 1 << 32, Need::Int(1), "Frames dropped in a row."),
    k("from", Ty::Host, Need::Required, "The host whose QPs' frames are counted."),
    int("nth", 1, 1 << 32, Need::Required, "The first frame dropped, counting from 1 per QP."),
};

/// The keys every step may have.
pub(crate) const STEP_COMMON: &[Key] = decl! {
    k("call", Ty::Name(Vocab::Call), Need::Required, "The verbs call or session action."),
    k("expect", Ty::Table(EXPECT), Need::Optional, "What the outcome must be."),
    k("expect_no_completion", Ty::Duration, Need::Optional, "Run this long after the call and require no completion in the step's CQs."),
};

/// A send WR: the WR tables of `post_send`'s `wr`, or the step itself.
pub(crate) const SEND_WR: &[Key] = decl! {
    int("add", 0, u64::MAX, Need::Int(0), "ATOMIC_FETCH_AND_ADD's addend."),
    int("compare", 0, u64::MAX, Need::Int(0), "ATOMIC_CMP_AND_SWP's compare value."),
    k("flags", Ty::Names(Vocab::SendFlag), Need::Optional, "Send flags (`IBV_SEND_` prefix optional); none when not given."),
    int("imm", 0, U32, Need::Int(0), "Immediate data of the `*_WITH_IMM` opcodes."),
    k("opcode", Ty::Name(Vocab::Opcode), Need::Required, "The operation (`IBV_WR_` prefix optional)."),
    k("remote", Ty::Table(REMOTE), Need::Optional, "The peer's address and rkey: required for RDMA and atomics, refused for SEND."),
    k("sge", Ty::Tables(SGE), Need::Optional, "Local buffers, at most `limits::MAX_SGES`."),
    int("swap", 0, u64::MAX, Need::Int(0), "ATOMIC_CMP_AND_SWP's swap value."),
    k("ud", Ty::Table(UD), Need::Optional, "A datagram's destination: required on UD QPs, refused on RC and UC."),
    WR_ID,
};

/// `ud = { qp, qkey }`.
pub(crate) const UD: &[Key] = decl! {
    int("qkey", 0, U32, Need::Required, "The Q_Key to send."),
    handle("qp", Want::Qp, Need::Required, "The remote QP (its host's address is the address handle)."),
};

/// A receive WR.
pub(crate) const RECV_WR: &[Key] = decl! {
    k("sge", Ty::Tables(SGE), Need::Optional, "Local buffers, at most `limits::MAX_SGES`."),
    WR_ID,
};

/// An SGE (`struct ibv_sge`).
pub(crate) const SGE: &[Key] = decl! {
    int("len", 0, U32, Need::Optional, "Length; the rest of the MR when not given."),
    int("lkey", 0, U32, Need::Optional, "A raw lkey instead of the MR's."),
    handle("mr", Want::Mr, Need::Required, "The MR on the QP's host: the address and the lkey."),
    int("offset", 0, OFFSET_MAX, Need::Int(0), "Bytes from the MR's start (past its end is allowed, to provoke errors)."),
};

/// A send WR's `remote`.
pub(crate) const REMOTE: &[Key] = decl! {
    BUF,
    MR,
    OFFSET,
    k("rkey", Ty::HandleOrInt {want: Want::Mr, lo: 0, hi: U32,}, Need::Optional, "Another MR's rkey, or a raw one; required with `buf`."),
};

/// `expect.event`.
pub(crate) const EVENT: &[Key] = decl! {
    handle("cq", Want::Cq, Need::Optional, "The CQ the event names."),
    handle("qp", Want::Qp, Need::Optional, "The QP an async event names."),
    k("type", Ty::Name(Vocab::AsyncEvent), Need::Optional, "The async event's type (`IBV_EVENT_` prefix optional)."),
};

/// `expect`.
pub(crate) const EXPECT: &[Key] = decl! {
    k("bad_wr", Ty::IntOrNone {lo: 0, hi: 1 << 20}, Need::Optional, "The index of the WR a failed post stopped at, or `none`."),
    int("completions", 0, POLL, Need::Optional, "How many completions the poll returns."),
    k("event", Ty::Table(EVENT), Need::Optional, "The event a `get_cq_event` or `get_async_event` returns."),
    k("memory", Ty::Tables(MEM), Need::Optional, "Bytes in memory after the step."),
    k("qp_states", Ty::Map, Need::Optional, "QP handle = state, for any QPs."),
    k("ret", Ty::Ret, Need::Optional, "The return code (`ok` for every verbs call when not given)."),
    k("sq_draining", Ty::Bool, Need::Optional, "In SQD, whether the send queue still drains (`query_qp`)."),
    k("state", Ty::Name(Vocab::QpState), Need::Optional, "The state of the step's QP after it."),
    k("wc", Ty::Tables(WC), Need::Optional, "The completions the poll returns, in order."),
};

/// One completion of `expect.wc`.
pub(crate) const WC: &[Key] = decl! {
    int("byte_len", 0, U32, Need::Optional, "Bytes received."),
    k("grh", Ty::Bool, Need::Optional, "Whether a GRH came first."),
    k("imm_data", Ty::IntOrNone {lo: 0, hi: U32}, Need::Optional, "The immediate data, or `none`."),
    k("opcode", Ty::Name(Vocab::WcOpcode), Need::Optional, "The completion's opcode (`IBV_WC_` prefix optional)."),
    handle("qp", Want::Qp, Need::Optional, "The QP it belongs to."),
    handle("src_qp", Want::Qp, Need::Optional, "The sending QP (UD)."),
    k("status", Ty::Name(Vocab::WcStatus), Need::Optional, "The status (`IBV_WC_` prefix optional)."),
    int("wr_id", 0, u64::MAX, Need::Optional, "The WR's id."),
};

/// One `expect.memory` range.
pub(crate) const MEM: &[Key] = &[BUF, HEX, MR, OFFSET, TEXT, U64];

const ALLOC_PD: &[Key] = &[HOST, AS];
const ALLOC: &[Key] = decl! {
    HOST,
    AS,
    int("len", 1, limits::MAX_BUFFER_BYTES, Need::Required, "Size in bytes (all buffers together at most `limits::MAX_TOTAL_BUFFER_BYTES`)."),
    TEXT,
    HEX,
    U64,
    int("fill", 0, 255, Need::Optional, "Every byte this value."),
    int("pattern", 0, I64, Need::Optional, "Every byte from a xorshift64 generator seeded with this value."),
};
const REG_MR: &[Key] = decl! {
    HOST_AGREES,
    AS,
    handle("pd", Want::Pd, Need::Required, "The protection domain (fixes the host)."),
    handle("buf", Want::Buffer, Need::Required, "The memory, on the PD's host."),
    int("offset", 0, OFFSET_MAX, Need::Int(0), "First registered byte, from the buffer's start."),
    int("len", 0, OFFSET_MAX, Need::Optional, "Registered length; the rest of the buffer when not given."),
    ACCESS,
};
const CREATE_CQ: &[Key] = decl! {
    HOST,
    AS,
    int("cqe", 0, CQE, Need::Int(16), "Entries asked for."),
    handle("channel", Want::Channel, Need::Optional, "The completion channel its events go to, on the same host."),
};
const CREATE_QP: &[Key] = decl! {
    HOST_AGREES,
    AS,
    handle("pd", Want::Pd, Need::Required, "The protection domain (fixes the host)."),
    k("type", Ty::Name(Vocab::QpType), Need::Optional, "Transport, `RC` when not given."),
    handle("cq", Want::Cq, Need::Optional, "One CQ for both queues (or give `send_cq` and `recv_cq`)."),
    handle("send_cq", Want::Cq, Need::Optional, "The send queue's CQ."),
    handle("recv_cq", Want::Cq, Need::Optional, "The receive queue's CQ."),
    int("max_send_wr", 0, DEPTH, Need::Int(16), "Send queue depth asked for."),
    int("max_recv_wr", 0, DEPTH, Need::Int(16), "Receive queue depth asked for."),
    int("max_send_sge", 0, 1_024, Need::Int(1), "SGEs per send WR."),
    int("max_recv_sge", 0, 1_024, Need::Int(1), "SGEs per receive WR."),
    int("max_inline_data", 0, 65_536, Need::Int(0), "Largest inline payload, bytes."),
    k("sq_sig_all", Ty::Bool, Need::Bool(false), "Every send WR makes a completion."),
};
/// `modify_qp`'s attributes default to `QpAttr::default()`'s, so none has a default here.
const MODIFY_QP: &[Key] = decl! {
    HOST_AGREES,
    handle("qp", Want::Qp, Need::Required, "The QP (fixes the host)."),
    k("mask", Ty::Names(Vocab::Mask), Need::Required, "The attribute mask (`IBV_QP_` prefix optional)."),
    k("state", Ty::Name(Vocab::QpState), Need::Optional, "Target state; required with `STATE`."),
    k("cur_state", Ty::Name(Vocab::QpState), Need::Optional, "The state the caller believes the QP is in."),
    k("en_sqd_async_notify", Ty::Bool, Need::Optional, "Raise SQ_DRAINED in SQD."),
    ACCESS,
    int("pkey_index", 0, u16::MAX as u64, Need::Optional, "P_Key table index."),
    int("port", 0, 255, Need::Optional, "Port number."),
    int("qkey", 0, U32, Need::Optional, "UD Q_Key."),
    k("av", Ty::Host, Need::Optional, "Address vector: a global route to that host's GID."),
    k("path_mtu", Ty::Mtu, Need::Optional, "Path MTU, bytes."),
    int("timeout", 0, 255, Need::Optional, "Local ACK timeout exponent."),
    int("retry_cnt", 0, 255, Need::Optional, "Retries after timeouts."),
    int("rnr_retry", 0, 255, Need::Optional, "Retries after RNR NAKs."),
    int("rq_psn", 0, U32, Need::Optional, "First PSN the responder expects."),
    int("max_rd_atomic", 0, 255, Need::Optional, "READs and atomics outstanding as requester."),
    int("min_rnr_timer", 0, 255, Need::Optional, "RNR timer code sent in RNR NAKs."),
    int("sq_psn", 0, U32, Need::Optional, "First PSN the requester sends."),
    int("max_dest_rd_atomic", 0, 255, Need::Optional, "READs and atomics served as responder."),
    int("path_mig_state", 0, 255, Need::Optional, "Path migration state."),
    k("dest_qp", Ty::HandleOrInt {want: Want::Qp, lo: 0, hi: U32,}, Need::Optional, "The peer's QPN: a QP handle or a raw number."),
};
const QP_ONLY: &[Key] = decl! {
    HOST_AGREES,
    handle("qp", Want::Qp, Need::Required, "The QP."),
};
const POST_SEND: &[Key] = decl! {
    HOST_AGREES,
    handle("qp", Want::Qp, Need::Required, "The QP."),
    k("wr", Ty::Tables(SEND_WR), Need::Optional, "A chain of WRs (then no WR key sits in the step)."),
};
const POST_RECV: &[Key] = decl! {
    HOST_AGREES,
    handle("qp", Want::Qp, Need::Required, "The QP."),
    k("wr", Ty::Tables(RECV_WR), Need::Optional, "A chain of WRs (then no WR key sits in the step)."),
};
const POLL_CQ: &[Key] = decl! {
    HOST_AGREES,
    handle("cq", Want::Cq, Need::Required, "The CQ."),
    int("max", 1, POLL, Need::Int(16), "Most completions returned."),
    k("wait", Ty::Duration, Need::Optional, "Busy-poll until the expected completions are there, at most this long."),
};
/// `connect`'s defaults are `RcOptions::default()`'s (a test checks they agree).
pub(crate) const CONNECT: &[Key] = decl! {
    k("hosts", Ty::Hosts, Need::Required, "The two ends, different hosts."),
    k("channel", Ty::Map, Need::Optional, "Host = completion channel the CQ created there reports to."),
    k("pd", Ty::Outs, Need::Required, "The two PDs' handles."),
    k("cq", Ty::Outs, Need::Required, "The two CQs' handles."),
    k("qp", Ty::Outs, Need::Required, "The two QPs' handles."),
    k("mtu", Ty::Mtu, Need::Int(4_096), "Path MTU, bytes."),
    int("timeout", 0, 255, Need::Int(14), "Local ACK timeout exponent."),
    int("retry_cnt", 0, 255, Need::Int(7), "Transport retries."),
    int("rnr_retry", 0, 255, Need::Int(7), "RNR retries (7 = forever)."),
    int("min_rnr_timer", 0, 255, Need::Int(12), "RNR timer code."),
    int("rd_atomic", 0, 255, Need::Int(16), "`max_rd_atomic` and `max_dest_rd_atomic`."),
    k("access", Ty::Names(Vocab::Access), Need::Optional, "QP access flags; REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC when not given."),
    int("max_send_wr", 0, DEPTH, Need::Int(1_024), "Send queue depth."),
    int("max_recv_wr", 0, DEPTH, Need::Int(1_024), "Receive queue depth."),
    int("max_send_sge", 0, 1_024, Need::Int(4), "SGEs per send WR."),
    int("max_recv_sge", 0, 1_024, Need::Int(4), "SGEs per receive WR."),
    int("max_inline_data", 0, 65_536, Need::Int(256), "Inline limit, bytes."),
    int("cqe", 1, CQE, Need::Int(4_096), "CQ entries."),
    k("retransmission", Ty::Name(Vocab::Retransmission), Need::Optional, "`go_back_n` (when not given) or `selective`."),
    int("window", 1, 1 << 14, Need::Int(64), "Selective repeat's cap on PSNs in flight; only with `selective`."),
};
const RUN: &[Key] = decl! {
    k("for", Ty::Duration, Need::Required, "How long simulated time advances."),
};
const DESTROY_CQ: &[Key] = decl! {
    HOST_AGREES,
    handle("cq", Want::Cq, Need::Required, "The CQ."),
};
const DEREG_MR: &[Key] = decl! {
    HOST_AGREES,
    handle("mr", Want::Mr, Need::Required, "The MR."),
};
const DEALLOC_PD: &[Key] = decl! {
    HOST_AGREES,
    handle("pd", Want::Pd, Need::Required, "The PD."),
};
const CREATE_COMP_CHANNEL: &[Key] = &[HOST, AS];
const DESTROY_COMP_CHANNEL: &[Key] = decl! {
    HOST_AGREES,
    handle("channel", Want::Channel, Need::Required, "The channel."),
};
const REQ_NOTIFY_CQ: &[Key] = decl! {
    HOST_AGREES,
    handle("cq", Want::Cq, Need::Required, "The CQ to arm."),
    k("solicited_only", Ty::Bool, Need::Bool(false), "Only a solicited receive or an error raises the event."),
};
const GET_CQ_EVENT: &[Key] = decl! {
    HOST_AGREES,
    handle("channel", Want::Channel, Need::Required, "The channel."),
    k("wait", Ty::Duration, Need::Required, "How long the call may block."),
};
const ACK_CQ_EVENTS: &[Key] = decl! {
    HOST_AGREES,
    handle("cq", Want::Cq, Need::Required, "The CQ."),
    int("n", 1, U32, Need::Int(1), "Events acknowledged."),
};
const GET_ASYNC_EVENT: &[Key] = decl! {
    HOST,
    k("wait", Ty::Duration, Need::Required, "How long the call may block."),
};
const ACK_ASYNC_EVENT: &[Key] = &[HOST];
const WRITE_MEMORY: &[Key] = &[HOST_AGREES, BUF, MR, OFFSET, TEXT, HEX, U64];
const READ_MEMORY: &[Key] = decl! {
    HOST_AGREES,
    BUF,
    MR,
    OFFSET,
    int("len", 1, limits::MAX_READ_BYTES, Need::Required, "Bytes shown; must fit a buffer."),
};

const fn call(name: &'static str, doc: &'static str, keys: &'static [&'static [Key]]) -> CallDecl {
    CallDecl { name, doc, keys }
}

/// Every call, in the order the refusals list them.
pub(crate) const CALLS: &[CallDecl] = decl! {
    call("alloc_pd", "`ibv_alloc_pd`.", &[STEP_COMMON, ALLOC_PD]),
    call("alloc", "A buffer of host memory.", &[STEP_COMMON, ALLOC]),
    call("reg_mr", "`ibv_reg_mr`.", &[STEP_COMMON, REG_MR]),
    call("create_cq", "`ibv_create_cq`.", &[STEP_COMMON, CREATE_CQ]),
    call("create_qp", "`ibv_create_qp`; the QP starts in RESET.", &[STEP_COMMON, CREATE_QP]),
    call("modify_qp", "`ibv_modify_qp`.", &[STEP_COMMON, MODIFY_QP]),
    call("query_qp", "`ibv_query_qp`.", &[STEP_COMMON, QP_ONLY]),
    call("post_send", "`ibv_post_send` of one WR or a chain.", &[STEP_COMMON, POST_SEND, SEND_WR]),
    call("post_recv", "`ibv_post_recv` of one WR or a chain.", &[STEP_COMMON, POST_RECV, RECV_WR]),
    call("poll_cq", "`ibv_poll_cq`.", &[STEP_COMMON, POLL_CQ]),
    call("connect", "The whole RC bring-up between two hosts.", &[STEP_COMMON, CONNECT]),
    call("run", "Advance simulated time.", &[STEP_COMMON, RUN]),
    call("write_memory", "The application writes bytes into memory.", &[STEP_COMMON, WRITE_MEMORY]),
    call("read_memory", "Show bytes of memory.", &[STEP_COMMON, READ_MEMORY]),
    call("destroy_qp", "`ibv_destroy_qp`.", &[STEP_COMMON, QP_ONLY]),
    call("destroy_cq", "`ibv_destroy_cq`.", &[STEP_COMMON, DESTROY_CQ]),
    call("dereg_mr", "`ibv_dereg_mr`.", &[STEP_COMMON, DEREG_MR]),
    call("dealloc_pd", "`ibv_dealloc_pd`.", &[STEP_COMMON, DEALLOC_PD]),
    call("create_comp_channel", "`ibv_create_comp_channel`.", &[STEP_COMMON, CREATE_COMP_CHANNEL]),
    call("destroy_comp_channel", "`ibv_destroy_comp_channel`.", &[STEP_COMMON, DESTROY_COMP_CHANNEL]),
    call("req_notify_cq", "`ibv_req_notify_cq`.", &[STEP_COMMON, REQ_NOTIFY_CQ]),
    call("get_cq_event", "`ibv_get_cq_event`.", &[STEP_COMMON, GET_CQ_EVENT]),
    call("ack_cq_events", "`ibv_ack_cq_events`.", &[STEP_COMMON, ACK_CQ_EVENTS]),
    call("get_async_event", "`ibv_get_async_event`.", &[STEP_COMMON, GET_ASYNC_EVENT]),
    call("ack_async_event", "`ibv_ack_async_event`.", &[STEP_COMMON, ACK_ASYNC_EVENT]),
};

/// The default of integer key `name` of `table`.
pub(crate) fn default_int(table: &'static [Key], name: &str) -> u64 {
    match find(&[table], name).map(|k| k.need) {
        Some(Need::Int(d)) => d,
        other => panic!("`{name}` has no integer default ({other:?})"),
    }
}

/// The declaration of key `name` among `tables`.
pub(crate) fn find(tables: &[&'static [Key]], name: &str) -> Option<&'static Key> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|k| k.name == name)
}

/// A number as the reference writes it: the powers of two the limits use by name.
fn num(n: u64) -> String {
    match n {
        u64::MAX => "2^64−1".to_string(),
        I64 => "2^63−1".to_string(),
        U32 => "2^32−1".to_string(),
        _ if n >= 1 << 20 && n.is_power_of_two() => format!("2^{}", n.trailing_zeros()),
        _ => n.to_string(),
    }
}

/// What a value of type `ty` is, as the reference's "type" column says it.
fn type_text(ty: Ty) -> String {
    let names = |v: Vocab| {
        let n = v.names();
        n.iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let want = |w: Want| match w {
        Want::Buffer => "buffer",
        Want::Channel => "channel",
        Want::Cq => "CQ",
        Want::Mr => "MR",
        Want::Pd => "PD",
        Want::Qp => "QP",
    };
    match ty {
        Ty::Host => "host name".to_string(),
        Ty::Hosts => "array of host names".to_string(),
        Ty::Handle(w) => format!("{} handle", want(w)),
        Ty::Out => "new handle name".to_string(),
        Ty::Outs => "two new handle names".to_string(),
        Ty::Int { lo, hi } => format!("integer, {} to {}", num(lo), num(hi)),
        Ty::IntOrNone { lo, hi } => format!("integer, {} to {}, or `\"none\"`", num(lo), num(hi)),
        Ty::HandleOrInt { want: w, lo, hi } => {
            format!("{} handle, or integer {} to {}", want(w), num(lo), num(hi))
        }
        Ty::Mtu => "integer: 256, 512, 1024, 2048 or 4096".to_string(),
        Ty::Prob => "float, 0.0 to 1.0".to_string(),
        Ty::Bool => "bool".to_string(),
        Ty::Duration => "duration".to_string(),
        Ty::Name(v) => format!("one of {}", names(v)),
        Ty::Names(v) => format!("name or list of names: {}", names(v)),
        Ty::Ret => "`\"ok\"`, 0 or an errno name".to_string(),
        Ty::Bytes => "string".to_string(),
        Ty::Table(_) => "table".to_string(),
        Ty::Tables(_) => "table or array of tables".to_string(),
        Ty::Map => "table of names".to_string(),
    }
}

/// The heading of the top-level table; the tables it holds are named by their key alone.
const TOP_TITLE: &str = "top level";

/// The names of a table's keys, joined: which tables were rendered already.
fn id(keys: &[Key]) -> String {
    keys.iter().map(|k| k.name).collect::<Vec<_>>().join(",")
}

/// Renders `keys` (at `path`) as a table, then the nested tables their keys hold, each once.
fn table_md(out: &mut String, path: &str, about: &str, keys: &[&[Key]], done: &mut Vec<String>) {
    let _ = write!(
        out,
        "#### {path}{about}\n\n| key | type | default | meaning |\n|---|---|---|---|\n"
    );
    let all = || keys.iter().flat_map(|t| t.iter());
    for k in all() {
        let need = match k.need {
            Need::Required => "required".to_string(),
            Need::Optional => String::new(),
            Need::Int(d) => num(d),
            Need::Bool(b) => b.to_string(),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {need} | {} |",
            k.name,
            type_text(k.ty),
            k.doc
        );
    }
    out.push('\n');
    for k in all() {
        if let Ty::Table(inner) | Ty::Tables(inner) = k.ty
            && !done.contains(&id(inner))
        {
            done.push(id(inner));
            let path = match path.trim_matches('`') {
                TOP_TITLE => format!("`{}`", k.name),
                parent => format!("`{parent}.{}`", k.name),
            };
            table_md(out, &path, "", &[inner], done);
        }
    }
}

/// The key reference of `scenarios/verbs/README.md`: every table and every call with its
/// keys, their types, ranges, defaults and meanings, as the parser reads them.
pub fn markdown() -> String {
    let mut out = String::new();
    // A step's keys and a post's WR keys are rendered with the step and the call.
    let mut done = vec![id(STEP_COMMON), id(SEND_WR), id(RECV_WR)];
    table_md(&mut out, &format!("`{TOP_TITLE}`"), "", &[TOP], &mut done);
    table_md(
        &mut out,
        "`step`",
        ": every step",
        &[STEP_COMMON],
        &mut done,
    );
    for c in CALLS {
        let about = format!(" — {}", c.doc);
        let path = format!("`{}`", c.name);
        table_md(&mut out, &path, &about, &c.keys[1..], &mut done);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::RcOptions;

    /// `connect`'s defaults, as declared, are the world's bring-up defaults.
    #[test]
    fn connect_defaults_are_rc_options() {
        let d = RcOptions::default();
        let c = |n| default_int(CONNECT, n);
        assert_eq!(c("mtu"), u64::from(d.mtu.bytes()));
        assert_eq!(c("timeout"), u64::from(d.timeout));
        assert_eq!(c("retry_cnt"), u64::from(d.retry_cnt));
        assert_eq!(c("rnr_retry"), u64::from(d.rnr_retry));
        assert_eq!(c("min_rnr_timer"), u64::from(d.min_rnr_timer));
        assert_eq!(c("rd_atomic"), u64::from(d.rd_atomic));
        assert_eq!(c("max_send_wr"), u64::from(d.cap.max_send_wr));
        assert_eq!(c("max_recv_wr"), u64::from(d.cap.max_recv_wr));
        assert_eq!(c("max_send_sge"), u64::from(d.cap.max_send_sge));
        assert_eq!(c("max_recv_sge"), u64::from(d.cap.max_recv_sge));
        assert_eq!(c("max_inline_data"), u64::from(d.cap.max_inline_data));
        assert_eq!(c("cqe"), u64::from(d.cqe));
    }

    /// No table declares a key twice, and every default lies in its key's range.
    #[test]
    fn tables_are_consistent() {
        let nested = [
            TOP,
            FABRIC,
            DROP,
            STEP_COMMON,
            SEND_WR,
            UD,
            RECV_WR,
            SGE,
            REMOTE,
            EVENT,
            EXPECT,
            WC,
            MEM,
        ];
        let calls = CALLS.iter().map(|c| {
            let keys: Vec<Key> = c.keys.iter().flat_map(|t| t.iter().copied()).collect();
            (c.name, keys)
        });
        let all = nested.iter().map(|t| ("", t.to_vec())).chain(calls);
        for (call, keys) in all {
            for (i, key) in keys.iter().enumerate() {
                assert!(
                    keys[..i].iter().all(|o| o.name != key.name),
                    "{call}: {} declared twice",
                    key.name
                );
                if let (Need::Int(d), Some((lo, hi))) = (key.need, key.range()) {
                    assert!((lo..=hi).contains(&d), "{call}.{}: default {d}", key.name);
                }
                assert!(!key.doc.is_empty());
            }
        }
    }
}
