//! The requester: work requests in, request packets out; responses in, completions out. RC
//! as below; UC and UD ([`Service`]) send the same packets without AckReq, keep no timers
//! and complete a request when its last packet leaves.
//!
//! Follows IBTA Vol. 1 §9.7 (requester side) as research/verbs-spec.md §5–§6 summarise it,
//! with rxe's `rxe_req.c` and `rxe_comp.c` as the reading of what the text leaves open:
//!
//! - Each message takes `max(1, ceil(len / PMTU))` PSNs; a READ takes as many PSNs as it has
//!   response packets, atomics one. FIRST/MIDDLE/LAST/ONLY opcodes; RETH on the first WRITE
//!   packet and on READ requests; ImmDt on the last packet; AckReq on the last packet of every
//!   message and at least every `ack_req_every` packets (and twice per `max_unacked_psns`).
//! - ACKs are cumulative: an ACK for PSN `p` acknowledges every PSN up to `p`. Completions are
//!   reported in posting order. A READ completes when its last response arrives; an ACK past a
//!   READ or atomic still waiting for its response means the response was lost, so the request
//!   is resent instead of completed (rxe `check_psn`).
//! - Go-back-N: a PSN-sequence NAK, a local ACK timeout, or a gap in READ responses sends
//!   everything again from the first PSN the responder is missing. Timeouts and sequence NAKs
//!   share `retry_cnt`; RNR NAKs count against `rnr_retry` (7 = forever) and pause sending for
//!   the RNR timer. Any ACK that makes progress restores both counters.
//! - Selective repeat ([`RetransmitMode::SelectiveRepeat`], IRN) instead of go-back-N: a SACK
//!   NAK marks what the responder holds and only the missing PSNs go again, once per recovery
//!   (a resend overtaken by later packets that arrived is sent again); a timeout resends the
//!   oldest missing PSN only; at most `max_unacked_psns` are in flight; IRN's two timeouts
//!   (see `RcConfig::timeout` for which timeout applies when).
//! - A NAK for an invalid request, a remote access error or a remote operational error fails
//!   the request it names; the requester then stops ([`Requester::is_failed`]) and the verbs
//!   layer flushes the rest (research/verbs-spec.md §2).

use super::config::{
    IRN_RTO_HIGH, IRN_RTO_LOW, IRN_RTO_LOW_MAX_INFLIGHT, RcConfig, RetransmitMode, Service,
};
use super::packet::{DataRef, RocePacket, Transmit, rc_bth};
use super::psn::Psn;
use std::collections::VecDeque;
use units::{SimDuration, SimTime};
use wire::ExtHeaders;
use wire::ib::aeth::{NakCode, Syndrome, rnr_timeout};
use wire::ib::{Opcode, Operation, Transport, atomic_eth, deth, immdt, irn, reth};

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
    fn is_read_or_atomic(self) -> bool {
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
struct Wqe {
    req: SendRequest,
    /// First PSN, once the request has started.
    first_psn: Option<Psn>,
    /// PSNs the request uses.
    npsn: u32,
    /// READ: response packets received in order; atomics: 1 once answered.
    received: u32,
    /// Highest packet index ever sent + 1 (to tell retransmissions).
    sent_hw: u32,
    /// Every PSN acknowledged (SEND/WRITE) or every response received (READ/atomic).
    done: bool,
    /// The receive WQE this message consumes, counted from 0 (SENDs and WRITEs with
    /// immediate); selective repeat tells the responder with every SEND packet.
    recv_sn: u32,
    /// UD: PSNs taken after this request's by datagrams posted behind it that sent nothing
    /// ([`Requester::skip_psn`]).
    skip_after: u32,
}

impl Wqe {
    fn last_psn(&self) -> Option<Psn> {
        self.first_psn.map(|f| f.add(self.npsn - 1))
    }
    fn contains(&self, p: Psn) -> bool {
        self.first_psn.is_some_and(|f| p.in_run(f, self.npsn))
    }
}

/// The requester half of an RC QP.
#[derive(Debug)]
pub struct Requester {
    cfg: RcConfig,
    wqes: VecDeque<Wqe>,
    next_psn: Psn,
    una: Psn,
    cur: usize,
    cur_pkt: u32,
    retry_left: u8,
    rnr_left: u8,
    ack_timer: Option<SimTime>,
    /// The last packet sent or ACK that made progress (for `timeout_wait_ps`).
    last_activity: SimTime,
    rnr_until: Option<SimTime>,
    since_ack_req: u32,
    rd_atomic_outstanding: u32,
    gap_recovery: Option<Psn>,
    last_reason: RetransmitReason,
    /// One past the highest PSN ever sent.
    hw_psn: Psn,
    /// While resending after a timeout: one past the highest PSN that timeout covers.
    timeout_cover: Option<Psn>,
    failed: bool,
    events: VecDeque<RequesterEvent>,
    counters: RequesterCounters,
    /// Adaptive retransmission: the round-trip estimate and the backoff (see
    /// [`RcConfig::adaptive_min`]).
    rtt: AdaptiveRtt,
    /// Messages posted that consume a receive WQE.
    next_recv_sn: u32,
    /// Selective repeat's scoreboard.
    sr: Scoreboard,
}

/// What selective repeat knows beyond the cumulative acknowledgement.
#[derive(Clone, Debug, Default)]
struct Scoreboard {
    /// Entry `i`: PSN `una + i` has reached the responder (SACKed).
    sacked: VecDeque<bool>,
    /// PSNs to resend, oldest first.
    resend: VecDeque<Psn>,
    /// One past the highest PSN the current recovery has looked at: each missing PSN is
    /// queued once per recovery, and again only after a timeout or once its resend is
    /// known lost.
    examined: Option<Psn>,
    /// Resends in flight: the PSN and one past the highest PSN sent when it went. A SACK for
    /// a packet sent after the resend, with the resent PSN still missing, means the resend
    /// was lost too (one path keeps order), so it goes again without waiting for the timer
    /// (the idea of RACK, RFC 8985, on PSNs).
    resent: VecDeque<(Psn, Psn)>,
}

/// The most PSNs past `una` the scoreboard tracks (16 MiB of 1 KiB packets).
const SCOREBOARD_MAX: usize = 1 << 14;

/// The round-trip estimate behind adaptive retransmission: first transmissions still
/// unacknowledged with their send times (Karn: resent PSNs are never sampled), SRTT and
/// RTTVAR as RFC 6298 keeps them, in integer picoseconds, and the timeouts in a row.
#[derive(Clone, Debug, Default)]
struct AdaptiveRtt {
    sent: VecDeque<(Psn, SimTime)>,
    srtt: Option<u64>,
    rttvar: u64,
    backoff: u32,
}

impl AdaptiveRtt {
    fn sample(&mut self, r: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
    }

    /// The acknowledgement of every PSN before `una`: one sample from the oldest of them, how
    /// long a packet waited for its acknowledgement. The responder acknowledges a run of
    /// packets at once (AckReq every few dozen), so the timer must cover that wait, not just
    /// the wire's round trip: sampling the newest packet would time out between ACKs.
    fn acked(&mut self, una: Psn, now: SimTime) {
        let mut oldest = None;
        while let Some(&(p, at)) = self.sent.front() {
            if una <= p {
                break;
            }
            oldest.get_or_insert(at);
            self.sent.pop_front();
        }
        if let Some(at) = oldest {
            self.sample(now.saturating_duration_since(at).as_ps());
        }
        self.backoff = 0;
    }
}

impl Requester {
    /// A requester starting at `cfg.sq_psn`.
    pub fn new(cfg: RcConfig) -> Self {
        Requester {
            cfg,
            wqes: VecDeque::new(),
            next_psn: Psn::new(cfg.sq_psn),
            una: Psn::new(cfg.sq_psn),
            cur: 0,
            cur_pkt: 0,
            retry_left: cfg.retry_cnt,
            rnr_left: cfg.rnr_retry,
            ack_timer: None,
            last_activity: SimTime::ZERO,
            rnr_until: None,
            since_ack_req: 0,
            rd_atomic_outstanding: 0,
            gap_recovery: None,
            last_reason: RetransmitReason::SequenceNak,
            hw_psn: Psn::new(cfg.sq_psn),
            timeout_cover: None,
            failed: false,
            events: VecDeque::new(),
            counters: RequesterCounters::default(),
            rtt: AdaptiveRtt::default(),
            next_recv_sn: 0,
            sr: Scoreboard::default(),
        }
    }

    fn selective(&self) -> bool {
        self.cfg.mode == RetransmitMode::SelectiveRepeat && self.cfg.service == Service::Rc
    }

    /// The local ACK timeout now: the static 4.096 µs × 2^timeout, or with adaptive
    /// retransmission (once a round trip has been measured) max(floor, SRTT + 4·RTTVAR)
    /// doubled per timeout in a row, capped at the static value.
    fn ack_timeout(&self) -> Option<SimDuration> {
        let fixed = self.cfg.ack_timeout();
        let Some(min) = self.cfg.adaptive_min else {
            if self.selective() && self.cfg.ack_timeout_override.is_none() {
                // IRN's two timeouts: short when too few packets are in flight to be SACKed.
                let inflight = self.next_psn.distance_from(self.una).max(0) as u32;
                return Some(if inflight <= IRN_RTO_LOW_MAX_INFLIGHT {
                    IRN_RTO_LOW
                } else {
                    IRN_RTO_HIGH
                });
            }
            return fixed;
        };
        // Until the first sample the static timeout stands: a floor of a few µs would fire
        // before the first ACK of a long message could arrive.
        let Some(srtt) = self.rtt.srtt else {
            return fixed;
        };
        let base = (srtt + 4 * self.rtt.rttvar).max(min.as_ps());
        let t = base.saturating_mul(1u64 << self.rtt.backoff.min(30));
        Some(SimDuration::from_ps(match fixed {
            Some(f) => t.min(f.as_ps()),
            None => t,
        }))
    }

    /// The current round-trip estimate of adaptive retransmission, if it has a sample.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt.map(SimDuration::from_ps)
    }

    /// The configuration.
    pub fn config(&self) -> &RcConfig {
        &self.cfg
    }
    /// Counters so far.
    pub fn counters(&self) -> RequesterCounters {
        self.counters
    }
    /// True once a request has failed; nothing more is sent.
    pub fn is_failed(&self) -> bool {
        self.failed
    }
    /// The PSN the next new packet gets.
    pub fn next_psn(&self) -> u32 {
        self.next_psn.get()
    }
    /// The id of the request whose PSNs include `psn` (requests still outstanding only).
    pub fn request_of(&self, psn: u32) -> Option<u64> {
        let psn = Psn::new(psn);
        self.wqes.iter().find(|w| w.contains(psn)).map(|w| w.req.id)
    }
    /// Requests posted and not yet completed.
    pub fn outstanding(&self) -> usize {
        self.wqes.len()
    }
    /// The ids of requests not yet completed, oldest first (the verbs layer flushes them
    /// when the QP enters the error state).
    pub fn unfinished(&self) -> impl Iterator<Item = u64> + '_ {
        self.wqes.iter().map(|w| w.req.id)
    }
    /// Forgets every request (QP reset or flush).
    pub fn clear(&mut self) {
        self.wqes.clear();
        self.cur = 0;
        self.cur_pkt = 0;
        self.ack_timer = None;
        self.rnr_until = None;
        self.rd_atomic_outstanding = 0;
        self.sr = Scoreboard::default();
    }

    /// Queues a work request; it is sent by [`poll_transmit`](Self::poll_transmit).
    pub fn post(&mut self, req: SendRequest) {
        let npsn = match req.op {
            WorkOp::CompareSwap { .. } | WorkOp::FetchAdd { .. } => 1,
            _ => req.len.div_ceil(self.cfg.pmtu).max(1),
        };
        let recv_sn = self.next_recv_sn;
        if matches!(
            req.op,
            WorkOp::Send { .. } | WorkOp::Write { imm: Some(_), .. }
        ) {
            self.next_recv_sn = self.next_recv_sn.wrapping_add(1);
        }
        self.wqes.push_back(Wqe {
            req,
            first_psn: None,
            npsn,
            received: 0,
            sent_hw: 0,
            done: false,
            recv_sn,
            skip_after: 0,
        });
    }

    /// UD: a datagram the NIC does not send (longer than the path MTU) still takes a PSN, in
    /// post order, as rxe's requester does (`rxe_req.c`, IBTA C10-93.1.1, "fake a successful
    /// UD send": `qp->req.psn = (qp->req.psn + 1) & BTH_PSN_MASK`). Behind requests not yet
    /// started the PSN is taken when the last of them has its own.
    pub fn skip_psn(&mut self) {
        match self.wqes.back_mut() {
            Some(w) if w.first_psn.is_none() => w.skip_after += 1,
            _ => {
                self.next_psn = self.next_psn.add(1);
                if self.cfg.service != Service::Rc {
                    // Nothing will acknowledge it, as a datagram that left.
                    self.una = self.next_psn;
                }
            }
        }
    }

    /// The next deadline: the local ACK timer or the end of an RNR wait.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match (self.ack_timer, self.rnr_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<RequesterEvent> {
        self.events.pop_front()
    }

    fn outstanding_psns(&self) -> bool {
        self.next_psn > self.una || self.read_owed().is_some()
    }

    /// The first missing response of a READ or atomic below `una`, if any: an ACK for a later
    /// request moves `una` past a READ whose responses were lost (the responder ran it; the
    /// data did not arrive), and that READ must still be asked for again and timed.
    fn read_owed(&self) -> Option<Psn> {
        for w in &self.wqes {
            let (Some(first), Some(last)) = (w.first_psn, w.last_psn()) else {
                break;
            };
            if last >= self.una {
                break;
            }
            if w.req.op.is_read_or_atomic() && !w.done {
                return Some(first.add(w.received));
            }
        }
        None
    }

    fn arm_ack_timer(&mut self, now: SimTime) {
        self.ack_timer = if self.outstanding_psns() {
            self.ack_timeout().map(|d| now + d)
        } else {
            None
        };
    }

    /// Handles expired timers.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if self.failed {
            return;
        }
        if self.rnr_until.is_some_and(|t| t <= now) {
            self.rnr_until = None;
        }
        if self.ack_timer.is_some_and(|t| t <= now) {
            self.ack_timer = None;
            if !self.outstanding_psns() {
                return;
            }
            self.counters.timeouts += 1;
            self.counters.timeout_wait_ps +=
                now.saturating_duration_since(self.last_activity).as_ps();
            self.rtt.backoff += 1;
            if self.retry_left == 0 {
                let una = self.una;
                self.fail_at(una, ReqStatus::RetryExceeded);
                return;
            }
            self.retry_left -= 1;
            let una = self.read_owed().unwrap_or(self.una);
            if self.selective() {
                // Resend the oldest missing packet only: whatever answers it (an ACK, or a
                // SACK NAK when the responder still has a hole) says what else is missing,
                // and a lost ACK costs one duplicate instead of a window of them.
                self.sr.resend.clear();
                let mut q = una;
                while q < self.hw_psn && (self.is_sacked(q) || self.resendable(q).is_none()) {
                    q = q.add(1);
                }
                if q < self.hw_psn {
                    self.sr.resend.push_back(q);
                    self.last_reason = RetransmitReason::Timeout;
                    self.timeout_cover = Some(q.add(1));
                    self.events.push_back(RequesterEvent::Resend {
                        first_psn: q.get(),
                        count: 1,
                        reason: RetransmitReason::Timeout,
                    });
                }
            } else {
                self.go_back(una, RetransmitReason::Timeout);
            }
            self.arm_ack_timer(now);
        }
    }

    /// Whether PSN `q` (at or after `una`) has been SACKed.
    fn is_sacked(&self, q: Psn) -> bool {
        let d = q.distance_from(self.una);
        d >= 0 && self.sr.sacked.get(d as usize).copied().unwrap_or(false)
    }

    /// Records that the responder holds PSN `q` (ignored unless sent and unacknowledged).
    fn mark_sacked(&mut self, q: Psn) {
        let d = q.distance_from(self.una);
        if d < 0 || q >= self.next_psn || d as usize >= SCOREBOARD_MAX {
            return;
        }
        let d = d as usize;
        if self.sr.sacked.len() <= d {
            self.sr.sacked.resize(d + 1, false);
        }
        self.sr.sacked[d] = true;
    }

    /// Where the requester itself sends PSN `q` and may need to again (the request and the
    /// packet index): every PSN of a SEND or WRITE; the request PSN of a READ or atomic
    /// still unanswered (its other PSNs are the responder's responses).
    fn resendable(&self, q: Psn) -> Option<(usize, u32)> {
        let i = self.wqes.iter().position(|w| w.contains(q))?;
        let w = &self.wqes[i];
        let d = q.distance_from(w.first_psn?) as u32;
        match w.req.op {
            WorkOp::Send { .. } | WorkOp::Write { .. } => Some((i, d)),
            // A READ is asked for again from its first missing response.
            _ => (!w.done && d == w.received).then_some((i, w.received)),
        }
    }

    /// Queues every resendable PSN in `[from, to)` not SACKed, once per recovery.
    fn queue_missing(&mut self, from: Psn, to: Psn, reason: RetransmitReason) {
        let from = match self.sr.examined {
            Some(e) if e > from => e,
            _ => from,
        };
        let mut q = from;
        let mut first = None;
        let mut count = 0;
        while q < to {
            if !self.is_sacked(q) && self.resendable(q).is_some() {
                self.sr.resend.push_back(q);
                first.get_or_insert(q);
                count += 1;
            }
            q = q.add(1);
        }
        if self.sr.examined.is_none_or(|e| to > e) {
            self.sr.examined = Some(to);
        }
        if let Some(first_psn) = first {
            self.last_reason = reason;
            self.events.push_back(RequesterEvent::Resend {
                first_psn: first_psn.get(),
                count,
                reason,
            });
        }
    }

    /// A SACK NAK: the responder expects `cum` (everything before it arrived) and holds the
    /// PSNs the IRN extension names. Every PSN below the highest one held that is neither
    /// acknowledged nor held was lost (one path keeps packets in order).
    fn sacked(&mut self, cum: Psn, sack: Option<irn::Repr>) {
        self.counters.sacks += 1;
        let (trigger, map) = match sack {
            Some(irn::Repr::Sack { psn, received }) => (Psn::new(psn), received),
            _ => (cum, 0),
        };
        let next = self.next_psn;
        let mut high: Option<Psn> = None;
        let mut note = |q: Psn| {
            if q > cum && q < next && high.is_none_or(|h| q > h) {
                high = Some(q);
            }
        };
        note(trigger);
        for i in 0..64 {
            if map >> i & 1 == 1 {
                note(cum.add(i + 1));
            }
        }
        // A trigger equal to the cumulative PSN says "nothing new held" (the packet that
        // caused the NAK could not be placed early): it is the PSN still missing.
        if trigger > cum {
            self.mark_sacked(trigger);
        }
        for i in 0..64 {
            if map >> i & 1 == 1 {
                self.mark_sacked(cum.add(i + 1));
            }
        }
        if let Some(h) = high {
            let una = self.una;
            self.queue_missing(una, h, RetransmitReason::SequenceNak);
            // Resends overtaken by a later packet that arrived: lost again.
            let mut again = Vec::new();
            self.sr.resent.retain(|&(q, sent_hw)| {
                if h < sent_hw {
                    return true; // nothing sent after it has been heard of yet
                }
                again.push(q);
                false
            });
            for q in again {
                if q >= self.una && !self.is_sacked(q) && !self.sr.resend.contains(&q) {
                    self.sr.resend.push_back(q);
                    self.events.push_back(RequesterEvent::Resend {
                        first_psn: q.get(),
                        count: 1,
                        reason: RetransmitReason::SequenceNak,
                    });
                }
            }
        }
    }

    /// Selective repeat: the next PSN queued for resending that is still missing.
    fn poll_resend(&mut self, now: SimTime) -> Option<Transmit> {
        while let Some(q) = self.sr.resend.pop_front() {
            // Below `una` only a READ's re-request can still be owed (see `read_owed`).
            if (q < self.una && self.read_owed() != Some(q)) || self.is_sacked(q) {
                continue;
            }
            let Some((i, idx)) = self.resendable(q) else {
                continue;
            };
            let t = self.build(i, idx, q, now).0;
            // Karn: nothing from a resent PSN on is sampled (its ACK may answer either send,
            // and the ACKs behind it waited for it).
            self.rtt.sent.retain(|&(p, _)| p < q);
            self.sr.resent.retain(|&(r, _)| r != q);
            if self.sr.resent.len() < SCOREBOARD_MAX {
                self.sr.resent.push_back((q, self.hw_psn));
            }
            return Some(t);
        }
        None
    }

    /// The next request packet to send, if any may go now.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if self.failed || self.rnr_until.is_some() {
            return None;
        }
        if self.selective()
            && let Some(t) = self.poll_resend(now)
        {
            return Some(t);
        }
        let w = *self.wqes.get(self.cur)?;
        let first_psn = match w.first_psn {
            Some(p) => p,
            None => {
                // A request that has never been sent: check the limits on starting it.
                if w.req.op.is_read_or_atomic()
                    && self.rd_atomic_outstanding >= self.cfg.max_rd_atomic as u32
                {
                    return None;
                }
                if w.req.fence
                    && self
                        .wqes
                        .iter()
                        .take(self.cur)
                        .any(|e| e.req.op.is_read_or_atomic())
                {
                    return None;
                }
                let p = self.next_psn;
                self.next_psn = p.add(w.npsn + w.skip_after);
                if w.req.op.is_read_or_atomic() {
                    self.rd_atomic_outstanding += 1;
                }
                self.wqes[self.cur].first_psn = Some(p);
                p
            }
        };
        let idx = match w.req.op {
            WorkOp::Read { .. } => w.received,
            WorkOp::CompareSwap { .. } | WorkOp::FetchAdd { .. } => 0,
            _ => self.cur_pkt,
        };
        let p = first_psn.add(idx);
        if p.distance_from(self.una) >= self.cfg.max_unacked_psns as i32 {
            return None;
        }
        let (t, last) = self.build(self.cur, idx, p, now);
        if last {
            self.cur += 1;
            self.cur_pkt = 0;
        } else {
            self.cur_pkt += 1;
        }
        if self.cfg.service != Service::Rc {
            // Nothing will acknowledge it: a UC or UD request is done when its last packet
            // leaves.
            self.una = p.add(1);
            if last {
                let done = self.cur - 1;
                self.una = self.una.add(self.wqes[done].skip_after);
                self.wqes[done].done = true;
                self.complete_in_order();
            }
        }
        Some(t)
    }

    /// Packet `idx` (PSN `p`) of request `i`, first sent or again, with the counters and
    /// timers that go with sending it. Returns it and whether it is the request's last.
    fn build(&mut self, i: usize, idx: u32, p: Psn, now: SimTime) -> (Transmit, bool) {
        let pmtu = self.cfg.pmtu;
        let w = self.wqes[i];
        let selective = self.selective();
        let dest = w.req.ud.map_or(self.cfg.dest_qpn, |u| u.qpn);
        let (opcode, ext, payload_len, data, last) = match w.req.op {
            WorkOp::Send { imm } | WorkOp::Write { imm, .. } => {
                let n = w.npsn;
                let offset = idx as u64 * pmtu as u64;
                let len = (w.req.len as u64 - offset.min(w.req.len as u64)).min(pmtu as u64) as u32;
                let first = idx == 0;
                let last = idx + 1 == n;
                let is_write = matches!(w.req.op, WorkOp::Write { .. });
                let op = message_operation(is_write, first, last, imm.is_some());
                let mut ext = ExtHeaders::NONE;
                match w.req.op {
                    WorkOp::Write { va, rkey, .. } if first => {
                        ext.reth = Some(reth::Repr {
                            va,
                            rkey,
                            dma_len: w.req.len,
                        });
                    }
                    // Selective repeat: every packet says where it goes (IRN).
                    WorkOp::Write { va, rkey, .. } if selective => {
                        ext.irn = Some(irn::Repr::Write(reth::Repr {
                            va: va + offset,
                            rkey,
                            dma_len: len,
                        }));
                    }
                    WorkOp::Send { .. } if selective => {
                        ext.irn = Some(irn::Repr::Send {
                            wqe_sn: w.recv_sn,
                            offset: offset as u32,
                        });
                    }
                    _ => {}
                }
                if last {
                    ext.immdt = imm.map(|imm| immdt::Repr { imm });
                }
                let data = if len > 0 {
                    DataRef::Request {
                        id: w.req.id,
                        offset,
                    }
                } else {
                    DataRef::None
                };
                (op, ext, len, data, last)
            }
            WorkOp::Read { va, rkey } => {
                // Resume after the responses already received (a go-back in the middle of a READ).
                let offset = (idx as u64 * pmtu as u64).min(w.req.len as u64);
                let ext = ExtHeaders {
                    reth: Some(reth::Repr {
                        va: va + offset,
                        rkey,
                        dma_len: w.req.len - offset as u32,
                    }),
                    ..ExtHeaders::NONE
                };
                (Operation::RdmaReadRequest, ext, 0, DataRef::None, true)
            }
            WorkOp::CompareSwap {
                va,
                rkey,
                compare,
                swap,
            } => {
                let ext = ExtHeaders {
                    atomic_eth: Some(atomic_eth::Repr {
                        va,
                        rkey,
                        swap_add: swap,
                        compare,
                    }),
                    ..ExtHeaders::NONE
                };
                (Operation::CompareSwap, ext, 0, DataRef::None, true)
            }
            WorkOp::FetchAdd { va, rkey, add } => {
                let ext = ExtHeaders {
                    atomic_eth: Some(atomic_eth::Repr {
                        va,
                        rkey,
                        swap_add: add,
                        compare: 0,
                    }),
                    ..ExtHeaders::NONE
                };
                (Operation::FetchAdd, ext, 0, DataRef::None, true)
            }
        };
        // UC and UD: no acknowledgement is ever asked for (rxe `init_req_packet`), and a
        // request is done once sent.
        let unreliable = self.cfg.service != Service::Rc;
        self.since_ack_req += 1;
        // Ask at least twice per window, or a window smaller than `ack_req_every` would wait
        // for a timeout before anything acknowledged it.
        let every = self
            .cfg
            .ack_req_every
            .min((self.cfg.max_unacked_psns / 2).max(1));
        let ack_req = !unreliable && (last || self.since_ack_req >= every);
        if ack_req {
            self.since_ack_req = 0;
        }
        let code = match self.cfg.service {
            Service::Rc => Opcode::rc(opcode),
            Service::Uc => Opcode::new(Transport::Uc, opcode).unwrap_or(Opcode::rc(opcode)),
            Service::Ud => Opcode::new(Transport::Ud, opcode).unwrap_or(Opcode::rc(opcode)),
        };
        let mut ext = ext;
        if let Some(u) = w.req.ud {
            ext.deth = Some(deth::Repr {
                qkey: u.qkey,
                src_qp: self.cfg.local_qpn,
            });
        }
        let mut bth = rc_bth(code, dest, p, ack_req);
        bth.solicited = last && w.req.solicited;
        let wq = &mut self.wqes[i];
        let retransmission = idx < wq.sent_hw;
        wq.sent_hw = wq.sent_hw.max(idx + 1);
        self.counters.packets_sent += 1;
        if p.add(1) > self.hw_psn {
            self.hw_psn = p.add(1);
        }
        if retransmission {
            self.counters.packets_retransmitted += 1;
            self.counters.bytes_retransmitted += payload_len as u64;
            // A timeout resends everything sent since `una`; packets in that range count as
            // timeout resends even if a NAK interrupts the resend.
            let reason = match self.timeout_cover {
                Some(end) if p < end => RetransmitReason::Timeout,
                _ => self.last_reason,
            };
            self.counters.retransmitted_by_reason[reason as usize] += 1;
        } else {
            self.timeout_cover = None;
            self.counters.first_transmissions += 1;
            self.counters.inflight_sum += (p.distance_from(self.una) + 1).max(1) as u64;
            if self.cfg.adaptive_min.is_some() && self.rtt.sent.len() < 4096 {
                self.rtt.sent.push_back((p, now));
            }
        }
        if !unreliable && self.ack_timer.is_none() {
            self.ack_timer = self.ack_timeout().map(|d| now + d);
        }
        self.last_activity = now;
        let t = Transmit {
            pkt: RocePacket {
                bth,
                ext,
                payload_len,
            },
            data,
            ud_ah: w.req.ud.map(|u| u.ah),
        };
        (t, last)
    }

    /// Handles a response packet (ACK, NAK, READ response, atomic ACK) and says where its
    /// payload goes.
    pub fn handle_response(&mut self, now: SimTime, pkt: &RocePacket) -> Placement {
        if self.failed {
            return Placement::None;
        }
        let p = Psn::new(pkt.bth.psn);
        let Some(op) = pkt.bth.opcode.operation() else {
            return Placement::None;
        };
        let placement = match op {
            Operation::Acknowledge => {
                let Some(aeth) = pkt.ext.aeth else {
                    return Placement::None;
                };
                match aeth.syndrome {
                    Syndrome::Ack { .. } => {
                        self.counters.acks += 1;
                        self.ack_through(p, now);
                    }
                    Syndrome::RnrNak { timer } => {
                        self.counters.rnr_naks += 1;
                        self.ack_through(p.prev(), now);
                        if self.cfg.rnr_retry != 7 {
                            if self.rnr_left == 0 {
                                self.fail_at(p, ReqStatus::RnrRetryExceeded);
                                return Placement::None;
                            }
                            self.rnr_left -= 1;
                        }
                        self.rnr_until = Some(now + rnr_timeout(timer));
                        self.go_back(p, RetransmitReason::Rnr);
                        self.arm_ack_timer(now);
                    }
                    Syndrome::Nak(NakCode::PsnSequenceError)
                        if self.selective() && pkt.ext.irn.is_some() =>
                    {
                        // A SACK: no retry is spent, only what is missing goes again.
                        self.counters.sequence_naks += 1;
                        self.ack_through(p.prev(), now);
                        self.sacked(p, pkt.ext.irn);
                    }
                    Syndrome::Nak(NakCode::PsnSequenceError) => {
                        self.counters.sequence_naks += 1;
                        self.ack_through(p.prev(), now);
                        if self.retry_left == 0 {
                            self.fail_at(p, ReqStatus::RetryExceeded);
                            return Placement::None;
                        }
                        self.retry_left -= 1;
                        self.go_back(p, RetransmitReason::SequenceNak);
                        self.arm_ack_timer(now);
                    }
                    Syndrome::Nak(code) => {
                        self.ack_through(p.prev(), now);
                        let status = match code {
                            NakCode::RemoteAccessError => ReqStatus::RemoteAccess,
                            NakCode::RemoteOperationalError => ReqStatus::RemoteOperational,
                            _ => ReqStatus::RemoteInvalidRequest,
                        };
                        self.fail_at(p, status);
                    }
                }
                Placement::None
            }
            Operation::RdmaReadResponseFirst
            | Operation::RdmaReadResponseMiddle
            | Operation::RdmaReadResponseLast
            | Operation::RdmaReadResponseOnly => self.read_response(now, p, op),
            Operation::AtomicAcknowledge => {
                let Some(i) = self.wqes.iter().position(|w| w.contains(p)) else {
                    return Placement::None;
                };
                let w = self.wqes[i];
                if !matches!(
                    w.req.op,
                    WorkOp::CompareSwap { .. } | WorkOp::FetchAdd { .. }
                ) || w.done
                {
                    return Placement::None;
                }
                if let Some(gap) = self.earlier_unanswered(i) {
                    self.response_gap(gap);
                    return Placement::None;
                }
                let orig = pkt
                    .ext
                    .atomic_ack_eth
                    .map(|a| a.orig_remote_data)
                    .unwrap_or(0);
                self.ack_through(p.prev(), now);
                self.wqes[i].received = 1;
                self.wqes[i].done = true;
                self.progress(p, now);
                self.complete_in_order();
                Placement::AtomicResult { id: w.req.id, orig }
            }
            _ => Placement::None,
        };
        self.complete_in_order();
        placement
    }

    fn read_response(&mut self, now: SimTime, p: Psn, op: Operation) -> Placement {
        let Some(i) = self
            .wqes
            .iter()
            .position(|w| w.contains(p) && matches!(w.req.op, WorkOp::Read { .. }))
        else {
            return Placement::None; // a duplicate of a READ already completed
        };
        // Responses are taken strictly in PSN order: if an earlier READ or atomic is still
        // waiting for its response, this one arrived past a loss and is dropped.
        if let Some(gap) = self.earlier_unanswered(i) {
            self.response_gap(gap);
            return Placement::None;
        }
        let w = self.wqes[i];
        let first = w.first_psn.expect("contains() implies a first PSN");
        let expected = first.add(w.received);
        match p.distance_from(expected) {
            0 => {}
            d if d > 0 => {
                // A response packet was lost: ask again from the first missing one, once.
                self.response_gap(expected);
                return Placement::None;
            }
            _ => return Placement::None, // duplicate
        }
        // Responses imply that every earlier request arrived.
        self.ack_through(first.prev(), now);
        let offset = w.received as u64 * self.cfg.pmtu as u64;
        let wq = &mut self.wqes[i];
        wq.received += 1;
        if matches!(
            op,
            Operation::RdmaReadResponseLast | Operation::RdmaReadResponseOnly
        ) || wq.received == wq.npsn
        {
            wq.done = true;
        }
        self.gap_recovery = None;
        self.progress(p, now);
        Placement::ReadData {
            id: w.req.id,
            offset,
        }
    }

    /// The first PSN still unanswered of a READ or atomic queued before request `i`, if any.
    fn earlier_unanswered(&self, i: usize) -> Option<Psn> {
        self.wqes.iter().take(i).find_map(|w| {
            (w.req.op.is_read_or_atomic() && !w.done)
                .then(|| w.first_psn.map(|f| f.add(w.received)))
                .flatten()
        })
    }

    /// Responses are missing from PSN `expected` on: resend from there, once per gap (the
    /// ACK timeout covers a lost re-request).
    fn response_gap(&mut self, expected: Psn) {
        if self.gap_recovery != Some(expected) {
            self.gap_recovery = Some(expected);
            self.resend_from(expected, RetransmitReason::ResponseGap);
        }
    }

    /// Recovers from `p`: go-back-N resends everything from there; selective repeat asks
    /// for `p` alone (a READ from its first missing response) ahead of anything else queued.
    fn resend_from(&mut self, p: Psn, reason: RetransmitReason) {
        if !self.selective() {
            self.go_back(p, reason);
            return;
        }
        if self.resendable(p).is_some() && !self.sr.resend.contains(&p) {
            self.sr.resend.push_front(p);
            self.last_reason = reason;
            self.events.push_back(RequesterEvent::Resend {
                first_psn: p.get(),
                count: 1,
                reason,
            });
        }
    }

    /// Marks PSNs up to and including `p` acknowledged.
    fn ack_through(&mut self, p: Psn, now: SimTime) {
        if p < self.una {
            return; // old news
        }
        // Never acknowledge beyond what was sent.
        if p >= self.next_psn {
            return;
        }
        let mut resend = None;
        for w in self.wqes.iter_mut() {
            let Some(last) = w.last_psn() else { break };
            if last > p {
                break;
            }
            if w.req.op.is_read_or_atomic() {
                if !w.done && resend.is_none() {
                    resend = Some(w.first_psn.expect("started").add(w.received));
                }
            } else {
                w.done = true;
            }
        }
        self.progress(p, now);
        if let Some(r) = resend
            && self.gap_recovery != Some(r)
        {
            self.gap_recovery = Some(r);
            self.resend_from(r, RetransmitReason::ResponseGap);
        }
    }

    /// PSN `p` has been answered: move the unacknowledged edge and restore the retry budgets.
    fn progress(&mut self, p: Psn, now: SimTime) {
        let new_una = p.add(1);
        if new_una > self.una {
            let moved = new_una.distance_from(self.una) as usize;
            if moved >= self.sr.sacked.len() {
                self.sr.sacked.clear();
            } else {
                self.sr.sacked.drain(..moved);
            }
            self.una = new_una;
            // Selective repeat's bookkeeping below the new una is done with: without this it
            // fills its bound, and after the 24-bit PSN wraps an old mark would look ahead.
            if self.sr.examined.is_some_and(|e| e <= new_una) {
                self.sr.examined = None;
            }
            self.sr.resent.retain(|&(q, _)| q >= new_una);
            if self.cfg.adaptive_min.is_some() {
                self.rtt.acked(new_una, now);
            }
            self.gap_recovery = None;
            self.retry_left = self.cfg.retry_cnt;
            self.rnr_left = self.cfg.rnr_retry;
            self.last_activity = now;
            self.arm_ack_timer(now);
        }
    }

    /// While the local ACK timer runs with packets outstanding: when the requester last did
    /// anything (sent, or saw progress). A report measuring a window that ends during a stall
    /// adds the wait so far with this.
    pub fn waiting_since(&self) -> Option<SimTime> {
        (self.ack_timer.is_some() && self.outstanding_psns() && !self.failed)
            .then_some(self.last_activity)
    }

    /// Reports completions at the head of the queue, in order.
    fn complete_in_order(&mut self) {
        while let Some(w) = self.wqes.front() {
            if !w.done {
                break;
            }
            let w = self.wqes.pop_front().expect("front exists");
            if w.req.op.is_read_or_atomic() {
                self.rd_atomic_outstanding -= 1;
            }
            self.cur = self.cur.saturating_sub(1);
            self.events.push_back(RequesterEvent::Completed {
                id: w.req.id,
                status: ReqStatus::Success,
            });
        }
    }

    /// Resends from PSN `p`: the cursor moves to the request holding it.
    fn go_back(&mut self, p: Psn, reason: RetransmitReason) {
        // Everything from p on goes again: none of it may be sampled (Karn).
        self.rtt.sent.clear();
        self.sr.resend.clear();
        self.sr.examined = None;
        let Some(i) = self.wqes.iter().position(|w| w.contains(p)) else {
            return;
        };
        let first = self.wqes[i]
            .first_psn
            .expect("contains() implies a first PSN");
        self.cur = i;
        self.cur_pkt = match self.wqes[i].req.op {
            WorkOp::Send { .. } | WorkOp::Write { .. } => p.distance_from(first) as u32,
            _ => 0,
        };
        self.last_reason = reason;
        if reason == RetransmitReason::Timeout {
            self.timeout_cover = Some(self.hw_psn);
        }
        self.events.push_back(RequesterEvent::GoBack {
            from_psn: p.get(),
            reason,
        });
    }

    /// Fails request `id` before (or while) it is sent, e.g. when the NIC could not gather its
    /// payload (a bad lkey): it completes with `status` and the requester stops.
    pub fn fail_request(&mut self, id: u64, status: ReqStatus) {
        self.complete_in_order();
        if let Some(i) = self.wqes.iter().position(|w| w.req.id == id) {
            self.wqes.remove(i);
            self.cur = self.cur.min(self.wqes.len());
        }
        self.failed = true;
        self.ack_timer = None;
        self.rnr_until = None;
        self.events
            .push_back(RequesterEvent::Completed { id, status });
    }

    /// Fails the request holding PSN `p` (everything before it has completed) and stops.
    fn fail_at(&mut self, p: Psn, status: ReqStatus) {
        self.complete_in_order();
        let id = match self.wqes.iter().position(|w| w.contains(p)) {
            Some(i) => self.wqes[i].req.id,
            None => match self.wqes.front() {
                Some(w) => w.req.id,
                None => return,
            },
        };
        // The failing request leaves the queue; the rest stay for the verbs layer to flush.
        if let Some(i) = self.wqes.iter().position(|w| w.req.id == id) {
            self.wqes.remove(i);
        }
        self.failed = true;
        self.ack_timer = None;
        self.rnr_until = None;
        self.events
            .push_back(RequesterEvent::Completed { id, status });
    }
}

fn message_operation(write: bool, first: bool, last: bool, imm: bool) -> Operation {
    use Operation::*;
    match (write, first, last, imm) {
        (false, true, true, false) => SendOnly,
        (false, true, true, true) => SendOnlyWithImmediate,
        (false, true, false, _) => SendFirst,
        (false, false, false, _) => SendMiddle,
        (false, false, true, false) => SendLast,
        (false, false, true, true) => SendLastWithImmediate,
        (true, true, true, false) => RdmaWriteOnly,
        (true, true, true, true) => RdmaWriteOnlyWithImmediate,
        (true, true, false, _) => RdmaWriteFirst,
        (true, false, false, _) => RdmaWriteMiddle,
        (true, false, true, false) => RdmaWriteLast,
        (true, false, true, true) => RdmaWriteLastWithImmediate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(id: u64, op: WorkOp, len: u32) -> SendRequest {
        SendRequest {
            id,
            op,
            len,
            solicited: false,
            fence: false,
            ud: None,
        }
    }

    fn drain(r: &mut Requester) -> Vec<Transmit> {
        std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO)).collect()
    }

    proptest! {
        /// Every length around PMTU multiples segments into the right opcodes and lengths.
        #[test]
        fn segmentation(k in 0u32..5, delta in -2i64..=2, pmtu_exp in 8u32..=12, write: bool, imm: bool) {
            let pmtu = 1u32 << pmtu_exp;
            let len = (k as i64 * pmtu as i64 + delta).max(0) as u32;
            let mut r = Requester::new(RcConfig { pmtu, sq_psn: crate::roce::psn::MASK - 1, ..RcConfig::default() });
            let imm = imm.then_some(7);
            let op = if write { WorkOp::Write { va: 0x1000, rkey: 9, imm } } else { WorkOp::Send { imm } };
            r.post(req(1, op, len));
            let pkts = drain(&mut r);
            prop_assert_eq!(pkts.len() as u32, len.div_ceil(pmtu).max(1));
            let total: u32 = pkts.iter().map(|t| t.pkt.payload_len).sum();
            prop_assert_eq!(total, len);
            for (i, t) in pkts.iter().enumerate() {
                let o = t.pkt.bth.opcode;
                let (first, last) = (i == 0, i + 1 == pkts.len());
                prop_assert_eq!(t.pkt.bth.psn, Psn::new(crate::roce::psn::MASK - 1).add(i as u32).get(), "PSNs wrap");
                prop_assert_eq!(o.is_first() || o.is_only(), first);
                prop_assert_eq!(o.is_last() || o.is_only(), last);
                prop_assert_eq!(t.pkt.ext.reth.is_some(), write && first);
                prop_assert_eq!(t.pkt.ext.immdt.is_some(), imm.is_some() && last);
                prop_assert!(t.pkt.ext.matches(o));
                prop_assert_eq!(t.pkt.bth.ack_req, last);
                if !last {
                    prop_assert_eq!(t.pkt.payload_len, pmtu, "FIRST/MIDDLE carry exactly one PMTU");
                }
            }
        }
    }

    #[test]
    fn a_skipped_datagram_takes_its_psn_in_post_order() {
        // rxe's "fake a successful UD send": the suppressed datagram uses one PSN.
        let mut r = Requester::new(RcConfig {
            service: Service::Ud,
            sq_psn: 10,
            ..RcConfig::default()
        });
        r.skip_psn();
        assert_eq!(r.next_psn(), 11, "nothing queued: taken at once");
        r.post(req(1, WorkOp::Send { imm: None }, 10));
        r.skip_psn();
        r.post(req(2, WorkOp::Send { imm: None }, 10));
        let psns: Vec<u32> = drain(&mut r).iter().map(|t| t.pkt.bth.psn).collect();
        assert_eq!(
            psns,
            [11, 13],
            "the skipped one took 12, after the request before it"
        );
        assert_eq!(r.next_psn(), 14);
        assert_eq!(r.outstanding(), 0, "datagrams are done when they leave");
    }

    #[test]
    fn read_reserves_its_response_psns() {
        let mut r = Requester::new(RcConfig {
            pmtu: 1024,
            sq_psn: 100,
            max_rd_atomic: 4,
            ..RcConfig::default()
        });
        r.post(req(1, WorkOp::Read { va: 0, rkey: 1 }, 3000));
        r.post(req(2, WorkOp::Send { imm: None }, 10));
        let p = drain(&mut r);
        assert_eq!(p[0].pkt.bth.psn, 100);
        assert_eq!(p[0].pkt.ext.reth.unwrap().dma_len, 3000);
        assert_eq!(
            p[1].pkt.bth.psn, 103,
            "READ of 3 packets took PSNs 100..=102"
        );
    }

    #[test]
    fn ack_completes_in_order_and_timeout_retries_then_fails() {
        let cfg = RcConfig {
            timeout: 1,
            retry_cnt: 2,
            ..RcConfig::default()
        };
        let mut r = Requester::new(cfg);
        r.post(req(1, WorkOp::Send { imm: None }, 100));
        r.post(req(2, WorkOp::Send { imm: None }, 100));
        assert_eq!(drain(&mut r).len(), 2);
        let t0 = r.poll_timeout().unwrap();
        assert_eq!(t0.as_ps(), 8_192_000, "4.096 µs × 2^1");
        // Two timeouts resend both packets; the third fails the first request.
        for round in 1..=2 {
            r.handle_timeout(r.poll_timeout().unwrap());
            let again = drain(&mut r);
            assert_eq!(again.len(), 2, "round {round}");
            assert_eq!(again[0].pkt.bth.psn, 0);
        }
        r.handle_timeout(r.poll_timeout().unwrap());
        assert!(r.is_failed());
        let evs: Vec<_> = std::iter::from_fn(|| r.poll_event()).collect();
        assert!(evs.contains(&RequesterEvent::Completed {
            id: 1,
            status: ReqStatus::RetryExceeded
        }));
        assert_eq!(
            r.unfinished().collect::<Vec<_>>(),
            vec![2],
            "left for the flush"
        );
        assert_eq!(r.counters().timeouts, 3);
        assert_eq!(r.counters().packets_retransmitted, 4);
    }

    #[test]
    fn adaptive_timeout_starts_at_its_floor_doubles_and_is_capped() {
        let cfg = RcConfig {
            timeout: 3, // static: 32.768 µs, the cap
            retry_cnt: 7,
            adaptive_min: Some(SimDuration::from_us(4)),
            ..RcConfig::default()
        };
        let mut r = Requester::new(cfg);
        r.post(req(1, WorkOp::Send { imm: None }, 100));
        drain(&mut r);
        // No round trip measured yet: the static timeout.
        assert_eq!(r.poll_timeout().unwrap().as_ps(), 32_768_000);
        // A measured 0.5 µs (below the floor): the floor, then doubling per timeout.
        r.rtt.sample(500_000);
        r.rtt.rttvar = 0;
        r.ack_timer = None;
        r.arm_ack_timer(SimTime::ZERO);
        assert_eq!(r.poll_timeout().unwrap().as_ps(), 4_000_000);
        let mut expect = 4_000_000u64;
        for _ in 0..5 {
            let t = r.poll_timeout().unwrap();
            r.handle_timeout(t);
            drain(&mut r);
            expect = (expect * 2).min(32_768_000);
            assert_eq!((r.poll_timeout().unwrap() - t).as_ps(), expect);
        }
        // The estimator: RFC 6298's first sample and smoothing, in picoseconds.
        let mut e = AdaptiveRtt::default();
        e.sample(3_000_000);
        assert_eq!((e.srtt, e.rttvar), (Some(3_000_000), 1_500_000));
        e.sample(5_000_000);
        assert_eq!(e.srtt, Some(3_250_000));
        assert_eq!(e.rttvar, (3 * 1_500_000 + 2_000_000) / 4);
        e.sent
            .push_back((Psn::new(10), SimTime::from_ps(1_000_000)));
        e.sent
            .push_back((Psn::new(11), SimTime::from_ps(2_000_000)));
        e.backoff = 3;
        e.acked(Psn::new(12), SimTime::from_ps(4_000_000)); // PSNs 10 and 11: the oldest waited 3 µs
        assert_eq!((e.sent.len(), e.backoff), (0, 0));
        assert_eq!(e.srtt, Some((7 * 3_250_000 + 3_000_000) / 8));
    }
}
