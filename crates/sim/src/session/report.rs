//! What running a session recorded: one [`StepRecord`] per step with the simulated time, the
//! call, its result and every expectation's verdict. Serialises to the JSON document that
//! `rdmalab verbs run --json` prints (schema in `scenarios/verbs/README.md`).

use serde::Serialize;

use super::msg::Msg;

/// The record of one session run.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The NIC profile the session ran under.
    pub profile: String,
    /// `back_to_back` or `switch`.
    pub topology: String,
    /// The hosts, in order.
    pub hosts: Vec<String>,
    /// True when every expectation passed and the session ran to its end.
    pub passed: bool,
    /// Why the session stopped early (a budget ran out), if it did.
    pub aborted: Option<String>,
    /// `aborted` as a message id and its arguments (`abort.stopped`), for readers that
    /// render it in another language; left out of the JSON when the session ran to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted_msg: Option<Msg>,
    /// Simulated time when the session ended, in picoseconds.
    pub end_time_ps: u64,
    /// Expectation totals.
    pub summary: Summary,
    /// One record per step that ran, in order.
    pub steps: Vec<StepRecord>,
}

impl Report {
    /// The failed expectations, with the step each belongs to.
    pub fn failures(&self) -> impl Iterator<Item = (&StepRecord, &Check)> {
        self.steps.iter().flat_map(|s| {
            s.expectations
                .iter()
                .filter(|c| !c.passed)
                .map(move |c| (s, c))
        })
    }
}

/// Expectation totals.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq, Serialize)]
pub struct Summary {
    /// Steps run.
    pub steps: usize,
    /// Expectations checked (implicit `ret = ok` ones included).
    pub expectations: usize,
    /// Expectations that passed.
    pub passed: usize,
    /// Expectations that failed.
    pub failed: usize,
}

/// What one step did.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// 1-based position in the file's steps.
    pub index: usize,
    /// 1-based line of the step in the file.
    pub line: usize,
    /// Simulated time when the step started, in picoseconds.
    pub time_ps: u64,
    /// The host the call ran on (none for `run`).
    pub host: Option<String>,
    /// The call's name (`post_send`).
    pub call: String,
    /// The call with its arguments, readable (`post_send(qp_a, [SEND wr_id=1 ...])`).
    pub text: String,
    /// What the call returned.
    pub result: Outcome,
    /// Remarks: attributes the mask ignores, PSN warnings, time spent waiting.
    pub notes: Vec<String>,
    /// The same remarks as message ids and arguments, one per note, in order.
    pub note_msgs: Vec<Msg>,
    /// Every expectation checked after the step, in order.
    pub expectations: Vec<Check>,
    /// The verbs objects as they stand after the step: QPs with their queues, CQs with the
    /// completions waiting in them, MRs.
    pub state: StepState,
    /// The frames hosts put on the wire while the step ran, in time order (the first
    /// [`limits::MAX_FRAMES_LISTED`](super::limits::MAX_FRAMES_LISTED)).
    pub frames: Vec<FrameRecord>,
    /// Frames of the step beyond those listed.
    pub frames_more: usize,
}

/// The session's verbs objects at one moment (what a debugger attached to both hosts shows).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StepState {
    /// Every QP the session created and has not destroyed, in creation order.
    pub qps: Vec<QpView>,
    /// Every CQ, in creation order.
    pub cqs: Vec<CqView>,
    /// Every registered MR, in registration order.
    pub mrs: Vec<MrView>,
    /// Every completion channel, in creation order (left out of the JSON when the session
    /// has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelView>,
    /// Every allocated buffer's bytes as the playground's memory view shows them, in
    /// allocation order (the first [`limits::MAX_LISTED`](super::limits::MAX_LISTED); left
    /// out of the JSON when the session has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buffers: Vec<BufferView>,
}

/// One buffer's bytes after a step: a window of hex, and which bytes the step changed.
#[derive(Clone, Debug, Serialize)]
pub struct BufferView {
    /// The session's name for it.
    pub name: String,
    /// Its host.
    pub host: String,
    /// Its virtual address.
    pub va: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Offset in the buffer of the window `hex` shows (16-byte aligned).
    pub offset: u64,
    /// The window's bytes as lowercase hex (at most
    /// [`limits::MEMORY_VIEW_BYTES`](super::limits::MEMORY_VIEW_BYTES)); null when neither the
    /// window nor its bytes changed since the previous step's view (the page keeps that one).
    pub hex: Option<String>,
    /// Byte ranges `[offset, end)` in the buffer that this step changed, found by comparing
    /// the first [`limits::MEMORY_COMPARE_BYTES`](super::limits::MEMORY_COMPARE_BYTES) with
    /// the previous step (at most `MEMORY_MAX_RANGES`).
    pub changed: Vec<[u64; 2]>,
    /// Changed ranges beyond those listed.
    pub changed_more: usize,
}

/// One completion channel.
#[derive(Clone, Debug, Serialize)]
pub struct ChannelView {
    /// The session's name for it.
    pub name: String,
    /// Its host.
    pub host: String,
    /// Completion events raised and not yet taken with `get_cq_event`.
    pub events: usize,
}

/// How a CQ reports to a completion channel.
#[derive(Clone, Debug, Serialize)]
pub struct NotifyView {
    /// The channel's name, if the CQ has one.
    pub channel: Option<String>,
    /// `any`, `solicited` or null (not armed: the next completion raises no event).
    pub armed: Option<String>,
    /// Events taken with `get_cq_event` and not yet acknowledged.
    pub events_unacked: u32,
}

/// One QP and its queues.
#[derive(Clone, Debug, Serialize)]
pub struct QpView {
    /// The session's name for it.
    pub name: String,
    /// Its host.
    pub host: String,
    /// Its QP number.
    pub qpn: u32,
    /// `RC`, `UC` or `UD`.
    pub qp_type: String,
    /// Its state (`RTS`).
    pub state: String,
    /// Send WRs posted and not yet retired, oldest first (the first
    /// [`limits::MAX_LISTED`](super::limits::MAX_LISTED)).
    pub sq: Vec<SqEntry>,
    /// Send WRs beyond those listed.
    pub sq_more: usize,
    /// Receive WRs posted and not yet consumed, oldest first (the first `MAX_LISTED`).
    pub rq: Vec<RqEntry>,
    /// Receive WRs beyond those listed.
    pub rq_more: usize,
}

/// A send WR in the send queue.
#[derive(Clone, Debug, Serialize)]
pub struct SqEntry {
    /// Its `wr_id`.
    pub wr_id: u64,
    /// Its opcode without the `IBV_WR_` prefix.
    pub opcode: String,
    /// `posted` (not yet taken by the NIC), `started` (packets may be on the wire) or `done`
    /// (completed, waiting for an older WR before it retires).
    pub stage: String,
}

/// A receive WR in the receive queue.
#[derive(Clone, Debug, Serialize)]
pub struct RqEntry {
    /// Its `wr_id`.
    pub wr_id: u64,
}

/// One CQ and the completions waiting in it.
#[derive(Clone, Debug, Serialize)]
pub struct CqView {
    /// The session's name for it.
    pub name: String,
    /// Its host.
    pub host: String,
    /// Its capacity.
    pub cqe: u32,
    /// Completions waiting to be polled, oldest first (the first `MAX_LISTED`).
    pub entries: Vec<WcRecord>,
    /// Completions beyond those listed.
    pub entries_more: usize,
    /// Its channel, arm and unacknowledged events; left out of the JSON for a CQ that has no
    /// channel, was never armed and has no unacknowledged event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<NotifyView>,
}

/// One registered memory region.
#[derive(Clone, Debug, Serialize)]
pub struct MrView {
    /// The session's name for it.
    pub name: String,
    /// Its host.
    pub host: String,
    /// The local key.
    pub lkey: u32,
    /// The remote key.
    pub rkey: u32,
    /// Registered length in bytes.
    pub len: u64,
    /// Access flags (`LOCAL_WRITE`, ...).
    pub access: Vec<String>,
}

/// A RETH as a frame record shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RethView {
    /// Remote virtual address.
    pub va: u64,
    /// The R_Key.
    pub rkey: u32,
    /// DMA length: the whole message's bytes, not this packet's.
    pub len: u32,
}

/// An AETH as a frame record shows it (IBTA Vol. 1 chapter 9; `wire::ib::aeth`).
#[derive(Clone, Debug, Serialize)]
pub struct AethView {
    /// `ACK`, `RNR_NAK` or `NAK`.
    pub syndrome: &'static str,
    /// An ACK's five-bit end-to-end credit code, not a count (`wire::ib::aeth::credit_count`
    /// gives the credits it announces; 31 announces none, so the requester is not limited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credits: Option<u8>,
    /// An RNR NAK's timer code (0–31; `wire::ib::aeth::rnr_timeout` gives the wait it stands for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rnr_timer: Option<u8>,
    /// A NAK's code (`PsnSequenceError`, `InvalidRequest`, `RemoteAccessError`,
    /// `RemoteOperationalError`, `InvalidRdRequest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nak: Option<String>,
    /// The message sequence number: how many messages the responder has completed.
    pub msn: u32,
}

/// A SACK as a frame record shows it: the NAK's PSN is the one the responder expects.
#[derive(Clone, Debug, Serialize)]
pub struct SackView {
    /// The PSN whose out-of-order arrival sent this NAK.
    pub trigger: u32,
    /// The PSNs after the expected one that the responder holds, in order (from a 64-bit
    /// map on the wire).
    pub held: Vec<u32>,
}

/// One frame a host sent.
#[derive(Clone, Debug, Serialize)]
pub struct FrameRecord {
    /// When its first bit left, in picoseconds.
    pub t_ps: u64,
    /// The sending host.
    pub src: String,
    /// The destination host (a PFC frame's peer for pause frames).
    pub dst: String,
    /// `roce`, `cnp`, `pfc`, `tcp` or `other`.
    pub kind: String,
    /// What it is, as the playground's ladder labels it: a RoCE packet's transport and
    /// operation as Linux names the opcode (`RC RDMA_WRITE_ONLY` for
    /// `IB_OPCODE_RC_RDMA_WRITE_ONLY` in `include/rdma/ib_pack.h`, `RC ACKNOWLEDGE`, `CNP`),
    /// identifiers a learner reads in code; a NAK as `NAK` and its [`AethView::nak`] id
    /// (`NAK PsnSequenceError`) or `RNR NAK`; `PAUSE`, `TCP`, `raw`. Wireshark's words for the
    /// opcode (`RDMA WRITE Only`) are the packet inspector's, from the frame's bytes.
    pub opcode: String,
    /// The BTH's PSN (RoCE).
    pub psn: Option<u32>,
    /// The BTH's destination QP (RoCE).
    pub qpn: Option<u32>,
    /// Frame length in bytes as a MAC counts it, destination address to FCS and at least 64:
    /// [`wire`](Self::wire)'s bytes (with any left-out payload) plus the 4-byte FCS, which
    /// `wire`, like a pcap, does not carry. The inspector says both.
    pub len: u32,
    /// The fabric dropped it on the way (a drop rule, loss or a full buffer).
    pub dropped: bool,
    /// The send WR it carries or answers (RoCE request and response packets), when the
    /// session knows it: requests go in post order, responses carry the request's PSN.
    pub wr_id: Option<u64>,
    /// The RDMA extended header (WRITE first/only, READ request): what a ladder labels a
    /// request with. Absent when the packet has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reth: Option<RethView>,
    /// The ACK extended header (ACK, NAK, RNR NAK, READ responses, atomic ACK).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aeth: Option<AethView>,
    /// The immediate data (SEND/WRITE with immediate), as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imm: Option<u32>,
    /// A selective-repeat NAK's SACK (rdmalab's IRN extension header, `wire::ib::irn`):
    /// what a ladder needs to show that the NAK reports what arrived, not only what is
    /// missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack: Option<SackView>,
    /// The frame's bytes as they left the host (lowercase hex, no FCS: [`len`](Self::len) less
    /// 4, less any [`wire_elided`](Self::wire_elided) bytes), its payload cut to
    /// the first [`WIRE_PAYLOAD_SHOWN`](crate::world::WIRE_PAYLOAD_SHOWN) (64) bytes: what the web lab's packet inspector
    /// decodes (`POST /api/frame/dissect`). Empty if the packet could not be encoded.
    pub wire: String,
    /// The payload bytes left out of `wire`, as `[start, end)` offsets in the whole frame;
    /// absent when the frame is whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_elided: Option<[usize; 2]>,
    /// The packet's number in the run, to match it with the fabric's drops.
    #[serde(skip)]
    pub(crate) uid: u64,
}

/// The result of a call.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The call succeeded.
    Ok {
        /// What it returned or did: the pieces of `msgs` in English, joined by "; ".
        text: String,
        /// The same as message ids and arguments, one per piece (none when the call says
        /// nothing beyond "ok").
        msgs: Vec<Msg>,
    },
    /// The verb failed with an errno.
    Error {
        /// The errno's name (`EINVAL`).
        errno: String,
        /// Its number (22).
        code: i32,
        /// The rule broken, as the verbs layer explains it.
        text: String,
        /// The same as a message id and its arguments (`verr.*`, `vpost.*`), so a page
        /// explains the rule in its own language.
        msg: Msg,
        /// For posts: the index of `*bad_wr`, if the provider set it.
        bad_wr: Option<usize>,
        /// For posts: WRs of the chain posted before the failure.
        posted: Option<usize>,
    },
    /// `poll_cq` returned these completions (possibly none).
    Completions {
        /// The completions, oldest first.
        completions: Vec<WcRecord>,
    },
    /// The step could not run: a handle it needs was never created.
    Skipped {
        /// Why.
        text: String,
        /// Why, as a message id and its arguments.
        msg: Msg,
    },
    /// The simulation could not go on (a budget ran out).
    Failed {
        /// Why.
        text: String,
        /// Why, as a message id and its arguments.
        msg: Msg,
    },
}

impl Outcome {
    /// A successful call's result from its pieces.
    pub fn ok(msgs: Vec<Msg>) -> Outcome {
        Outcome::Ok {
            text: msgs.iter().map(Msg::text).collect::<Vec<_>>().join("; "),
            msgs,
        }
    }

    /// A step that could not run, and why.
    pub fn skipped(why: Msg) -> Outcome {
        Outcome::Skipped {
            text: why.text(),
            msg: why,
        }
    }

    /// A one-line summary.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Ok { text, .. } => format!("ok: {text}"),
            Outcome::Error { text, .. } => text.clone(),
            Outcome::Completions { completions } => match completions.len() {
                0 => "0 completions".to_string(),
                1 => "1 completion".to_string(),
                n => format!("{n} completions"),
            },
            Outcome::Skipped { text, .. } => format!("skipped: {text}"),
            Outcome::Failed { text, .. } => format!("failed: {text}"),
        }
    }
}

/// One work completion as `ibv_poll_cq` returned it.
#[derive(Clone, Debug, Eq, PartialEq, Serialize)]
pub struct WcRecord {
    /// `wr_id`.
    pub wr_id: u64,
    /// The status without the `IBV_WC_` prefix (`WR_FLUSH_ERR`).
    pub status: String,
    /// `ibv_wc_status_str` of the status (`Work Request Flushed Error`).
    pub status_str: String,
    /// The opcode without the `IBV_WC_` prefix; absent in error completions, where it is not
    /// valid.
    pub opcode: Option<String>,
    /// `byte_len` (0 in error completions).
    pub byte_len: u32,
    /// `imm_data`, when `IBV_WC_WITH_IMM` is set.
    pub imm_data: Option<u32>,
    /// The QP's handle name (or its number if the session has no name for it).
    pub qp: String,
    /// `qp_num`.
    pub qp_num: u32,
}

/// One expectation's verdict.
#[derive(Clone, Debug, Eq, PartialEq, Serialize)]
pub struct Check {
    /// What was checked (`ret`, `wc[0].status`, `state(qp_a)`, `memory(buf_b+0)`, ...).
    pub what: String,
    /// The value wanted.
    pub expected: String,
    /// The value found.
    pub got: String,
    /// True if they agree.
    pub passed: bool,
    /// True for the `ret = ok` every call expects when the file says nothing.
    pub implicit: bool,
    /// `what` as a message id, when it is words (`no completion within 10 µs (cq_a)`) rather
    /// than a key of the file (`wc[0].status`), so a page writes it in its own language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_msg: Option<Msg>,
    /// `expected` as a message id, when it is words rather than an identifier or a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_msg: Option<Msg>,
    /// `got` as a message id, when it is words (`none (the post succeeded)`) rather than an
    /// identifier or a value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got_msg: Option<Msg>,
}
