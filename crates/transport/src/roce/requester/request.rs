//! What the requester is given and what it reports: work requests, completions, events,
//! counters, and its record of each request in flight.

use crate::roce::psn::Psn;

/// What a work request asks the responder to do.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum WorkOp {
    /// SEND (with immediate data if `imm` is set): consumes a receive WQE at the responder.
    Send {
        /// Immediate data.
        imm: Option<u32>,
    },
    /// RDMA WRITE to `va` under `rkey` (WITH_IMM if `imm` is set, which consumes a receive).
    Write {
        /// Remote address.
        va: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data.
        imm: Option<u32>,
    },
    /// RDMA READ from `va` under `rkey`.
    Read {
        /// Remote address.
        va: u64,
        /// Remote key.
        rkey: u32,
    },
    /// 8-byte compare-and-swap at `va`.
    CompareSwap {
        /// Remote address (8-byte aligned).
        va: u64,
        /// Remote key.
        rkey: u32,
        /// Value to compare with.
        compare: u64,
        /// Value written if equal.
        swap: u64,
    },
    /// 8-byte fetch-and-add at `va`.
    FetchAdd {
        /// Remote address (8-byte aligned).
        va: u64,
        /// Remote key.
        rkey: u32,
        /// Value added.
        add: u64,
    },
}

impl WorkOp {
    pub(super) fn is_read_or_atomic(self) -> bool {
        matches!(
            self,
            WorkOp::Read { .. } | WorkOp::CompareSwap { .. } | WorkOp::FetchAdd { .. }
        )
    }
}

/// A work request as the transport sees it.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct SendRequest {
    /// The caller's identifier (the verbs layer uses its WQE index).
    pub id: u64,
    /// The operation.
    pub op: WorkOp,
    /// Message length in bytes (8 for atomics).
    pub len: u32,
    /// Solicited-event bit on the last packet.
    pub solicited: bool,
    /// Wait until every earlier READ and atomic has completed (IBV_SEND_FENCE).
    pub fence: bool,
    /// UD: where this datagram goes.
    pub ud: Option<UdDest>,
}

/// A UD work request's destination (`ibv_send_wr.wr.ud`).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct UdDest {
    /// The remote QP.
    pub qpn: u32,
    /// The Q_Key the datagram carries.
    pub qkey: u32,
    /// The caller's number for the address handle (the world: the destination host).
    pub ah: u32,
}

/// How a request ended, as the requester learns it.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ReqStatus {
    /// Acknowledged (or, for READ and atomics, answered).
    Success,
    /// NAK invalid request: IBV_WC_REM_INV_REQ_ERR.
    RemoteInvalidRequest,
    /// NAK remote access error: IBV_WC_REM_ACCESS_ERR.
    RemoteAccess,
    /// NAK remote operational error: IBV_WC_REM_OP_ERR.
    RemoteOperational,
    /// No progress after `retry_cnt` retries: IBV_WC_RETRY_EXC_ERR.
    RetryExceeded,
    /// RNR NAKs beyond `rnr_retry`: IBV_WC_RNR_RETRY_EXC_ERR.
    RnrRetryExceeded,
    /// A response that fits no outstanding request: IBV_WC_BAD_RESP_ERR.
    BadResponse,
    /// The NIC could not read the request's local buffer (bad lkey or range):
    /// IBV_WC_LOC_PROT_ERR.
    LocalProtection,
    /// The request could not be executed by this QP: IBV_WC_LOC_QP_OP_ERR.
    LocalQpOperation,
}

/// Why the requester went back and resent (the discriminant indexes
/// [`RequesterCounters::retransmitted_by_reason`]).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RetransmitReason {
    /// A PSN-sequence NAK.
    SequenceNak,
    /// The local ACK timer expired.
    Timeout,
    /// An RNR NAK (after its timer).
    Rnr,
    /// READ responses arrived with a gap, or an ACK passed an unanswered READ/atomic.
    ResponseGap,
}

impl RetransmitReason {
    /// How the trace names it.
    pub fn name(self) -> &'static str {
        match self {
            RetransmitReason::SequenceNak => "sequence NAK",
            RetransmitReason::Timeout => "ACK timeout",
            RetransmitReason::Rnr => "RNR NAK",
            RetransmitReason::ResponseGap => "response gap",
        }
    }
}

/// Something the verbs layer and the trace need to know.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RequesterEvent {
    /// Request `id` finished with `status` (reported in posting order).
    Completed {
        /// The request.
        id: u64,
        /// How it ended.
        status: ReqStatus,
    },
    /// The requester went back to `from_psn` and will resend from there.
    GoBack {
        /// First PSN resent.
        from_psn: u32,
        /// Why.
        reason: RetransmitReason,
    },
    /// Selective repeat: `count` PSNs from `first_psn` on are missing and will be resent,
    /// nothing else.
    Resend {
        /// The first of them.
        first_psn: u32,
        /// How many.
        count: u32,
        /// Why (a SACK NAK or a timeout).
        reason: RetransmitReason,
    },
}

/// Where the payload of a response goes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Placement {
    /// Nothing to place.
    None,
    /// READ response bytes for request `id` at message offset `offset`.
    ReadData {
        /// The READ.
        id: u64,
        /// Offset in the READ's local buffer.
        offset: u64,
    },
    /// The original remote value of atomic `id`, to write into its 8-byte local buffer.
    AtomicResult {
        /// The atomic.
        id: u64,
        /// The value before the operation.
        orig: u64,
    },
}

/// Counters for the lab and the tests.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct RequesterCounters {
    /// Request packets sent, first transmissions and retransmissions.
    pub packets_sent: u64,
    /// Of those, retransmissions.
    pub packets_retransmitted: u64,
    /// Payload bytes in retransmitted packets.
    pub bytes_retransmitted: u64,
    /// Local ACK timeouts that fired with packets outstanding.
    pub timeouts: u64,
    /// PSN-sequence NAKs received.
    pub sequence_naks: u64,
    /// RNR NAKs received.
    pub rnr_naks: u64,
    /// ACKs received (including implicit ones carried by responses).
    pub acks: u64,
    /// Sum over first transmissions of the PSNs in flight when the packet left (sent and not
    /// yet acknowledged, itself included): with `first_transmissions`, the mean in-flight
    /// window, which is what each go-back-N recovery resends.
    pub inflight_sum: u64,
    /// First transmissions of request packets.
    pub first_transmissions: u64,
    /// Retransmitted packets by the recovery that caused them: after a sequence NAK, an ACK
    /// timeout, an RNR NAK, a READ response gap.
    pub retransmitted_by_reason: [u64; 4],
    /// Idle time spent waiting for local ACK timeouts: for each timeout, the time from the
    /// requester's last activity (a packet sent or an ACK that made progress) to the timeout,
    /// ps. A loss nobody NAKs (the tail of a burst, or a lost NAK: the responder NAKs a
    /// sequence error once) costs this much dead time.
    pub timeout_wait_ps: u64,
    /// Selective repeat: SACK NAKs received.
    pub sacks: u64,
}

impl RequesterCounters {
    /// The mean number of PSNs in flight when a packet was first sent.
    pub fn mean_inflight(&self) -> f64 {
        self.inflight_sum as f64 / self.first_transmissions.max(1) as f64
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Wqe {
    pub(super) req: SendRequest,
    /// First PSN, once the request has started.
    pub(super) first_psn: Option<Psn>,
    /// PSNs the request uses.
    pub(super) npsn: u32,
    /// READ: response packets received in order; atomics: 1 once answered.
    pub(super) received: u32,
    /// Highest packet index ever sent + 1 (to tell retransmissions).
    pub(super) sent_hw: u32,
    /// Every PSN acknowledged (SEND/WRITE) or every response received (READ/atomic).
    pub(super) done: bool,
    /// The receive WQE this message consumes, counted from 0 (SENDs and WRITEs with
    /// immediate); selective repeat tells the responder with every SEND packet.
    pub(super) recv_sn: u32,
    /// UD: PSNs taken after this request's by datagrams posted behind it that sent nothing
    /// ([`Requester::skip_psn`]).
    pub(super) skip_after: u32,
}

impl Wqe {
    pub(super) fn last_psn(&self) -> Option<Psn> {
        self.first_psn.map(|f| f.add(self.npsn - 1))
    }
    pub(super) fn contains(&self, p: Psn) -> bool {
        self.first_psn.is_some_and(|f| p.in_run(f, self.npsn))
    }
}
