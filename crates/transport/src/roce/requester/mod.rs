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
//!
//! # Driving it
//!
//! Sans-IO, like [`tcp::Connection`](crate::tcp::Connection): the host calls in with the
//! time and reads what to do, in this order after anything happens:
//!
//! 1. [`post`](Requester::post) work requests; [`handle_response`](Requester::handle_response)
//!    for each response packet; [`handle_timeout`](Requester::handle_timeout) once
//!    [`poll_timeout`](Requester::poll_timeout)'s deadline has passed.
//! 2. [`poll_transmit`](Requester::poll_transmit) until it returns `None`: in
//!    [`SendState::Ready`] it yields selective repeat's queued resends first, then the packet
//!    at the cursor (a go-back moves the cursor back), while the window
//!    (`max_unacked_psns`), `max_rd_atomic` and fences allow.
//! 3. [`poll_event`](Requester::poll_event) for completions (in posting order) and recoveries.
//! 4. [`poll_timeout`](Requester::poll_timeout) again: the earliest deadline of the
//!    [`TimerTable`] (see [`Timer`] for what each does); nothing else is ever scheduled.
//!
//! # Files
//!
//! - `request`: work requests, statuses, events, counters, the per-request record.
//! - `segment`: a request cut into packets (opcodes, headers, AckReq) and the accounting of
//!   each send.
//! - `response`: ACK/NAK/READ response/atomic ACK handling, go-back and failure.
//! - `selective`: selective repeat's scoreboard and resends.
//! - `timer`: the timer table, the local ACK timeout's length and what expiry does.
//! - `rtt`: adaptive retransmission's round-trip estimate.

mod pacing;
mod request;
mod response;
mod rtt;
mod segment;
mod selective;
mod timer;

pub use request::{
    Placement, ReqStatus, RequesterCounters, RequesterEvent, RetransmitReason, SendRequest, UdDest,
    WorkOp,
};
pub use timer::{Timer, TimerTable};

use request::Wqe;

use crate::roce::config::{RcConfig, RetransmitMode, Service};
use crate::roce::packet::Transmit;
use crate::roce::psn::Psn;
use pacing::Pacing;
use rtt::AdaptiveRtt;
use selective::Scoreboard;
use std::collections::VecDeque;
use units::{SimDuration, SimTime};

/// Whether the requester may send: the send queue's state as the transport sees it (the
/// verbs layer keeps the QP state; an [`Error`](SendState::Error) here is what moves it to
/// IBV_QPS_ERR).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum SendState {
    /// Sending whatever the window, `max_rd_atomic` and fences allow.
    Ready,
    /// An RNR NAK arrived: nothing is sent until [`Timer::Rnr`] expires.
    RnrWait,
    /// A request failed (a fatal NAK, retries exhausted, a local error): nothing more is
    /// sent or timed, and the verbs layer flushes what is left.
    Error,
}

/// What the requester remembers of its latest recovery. Three separate facts, not one
/// state: a sequence NAK can interrupt a timeout's resend, and a READ's response gap can
/// open during either.
#[derive(Clone, Copy, Debug)]
struct Recovery {
    /// Why the latest go-back or resend happened: retransmissions are counted under it.
    reason: RetransmitReason,
    /// After a timeout: one past the highest PSN the timeout covers. Retransmissions below
    /// it count as timeout resends even if a NAK interrupts; the next first transmission
    /// clears it.
    timeout_cover: Option<Psn>,
    /// The READ or atomic response PSN already asked for again: one re-request per gap (the
    /// ACK timer covers a lost one); progress clears it.
    response_gap: Option<Psn>,
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
    /// The last packet sent or ACK that made progress (for `timeout_wait_ps`).
    last_activity: SimTime,
    since_ack_req: u32,
    rd_atomic_outstanding: u32,
    /// One past the highest PSN ever sent.
    hw_psn: Psn,
    /// Ready, waiting out an RNR NAK, or failed.
    state: SendState,
    /// The local ACK timer and the RNR wait (see [`timer`]).
    timers: TimerTable,
    /// The latest recovery: why, and what it covers.
    recovery: Recovery,
    events: VecDeque<RequesterEvent>,
    counters: RequesterCounters,
    /// Adaptive retransmission: the round-trip estimate and the backoff (see
    /// [`RcConfig::adaptive_min`]).
    rtt: AdaptiveRtt,
    /// Messages posted that consume a receive WQE.
    next_recv_sn: u32,
    /// Selective repeat's scoreboard.
    sr: Scoreboard,
    /// DCQCN's reaction point, when the NICs run it (see [`pacing`]).
    pacing: Option<Pacing>,
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
            last_activity: SimTime::ZERO,
            since_ack_req: 0,
            rd_atomic_outstanding: 0,
            hw_psn: Psn::new(cfg.sq_psn),
            state: SendState::Ready,
            timers: TimerTable::default(),
            recovery: Recovery {
                reason: RetransmitReason::SequenceNak,
                timeout_cover: None,
                response_gap: None,
            },
            events: VecDeque::new(),
            counters: RequesterCounters::default(),
            rtt: AdaptiveRtt::default(),
            next_recv_sn: 0,
            sr: Scoreboard::default(),
            pacing: None,
        }
    }

    fn selective(&self) -> bool {
        self.cfg.mode == RetransmitMode::SelectiveRepeat && self.cfg.service == Service::Rc
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
        self.state == SendState::Error
    }
    /// Ready, waiting out an RNR NAK, or failed.
    pub fn state(&self) -> SendState {
        self.state
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
        self.timers = TimerTable::default();
        if self.state == SendState::RnrWait {
            self.state = SendState::Ready;
        }
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

    /// The next deadline at `now`: the local ACK timer, the end of an RNR wait, and with
    /// DCQCN the reaction point's timers and, while requests wait on the rate, when the next
    /// may go (a pacing deadline already reached is none: the host polls anyway).
    pub fn poll_timeout(&self, now: SimTime) -> Option<SimTime> {
        let transport = self.timers.next();
        let dcqcn = self.dcqcn_timeout(now);
        match (transport, dcqcn) {
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

    /// The next request packet to send, if any may go now: nothing while DCQCN's rate holds
    /// the QP back (see [`is_paced`](Self::is_paced)); a packet that goes counts against it.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if self.is_paced(now) {
            return None;
        }
        let t = self.next_transmit(now)?;
        self.on_sent(now, &t);
        Some(t)
    }

    /// The next request packet the transport would send, DCQCN aside.
    fn next_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        if self.state != SendState::Ready {
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
        let t0 = r.poll_timeout(SimTime::ZERO).unwrap();
        assert_eq!(t0.as_ps(), 8_192_000, "4.096 µs × 2^1");
        // Two timeouts resend both packets; the third fails the first request.
        for round in 1..=2 {
            r.handle_timeout(r.poll_timeout(SimTime::ZERO).unwrap());
            let again = drain(&mut r);
            assert_eq!(again.len(), 2, "round {round}");
            assert_eq!(again[0].pkt.bth.psn, 0);
        }
        r.handle_timeout(r.poll_timeout(SimTime::ZERO).unwrap());
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
        assert_eq!(r.poll_timeout(SimTime::ZERO).unwrap().as_ps(), 32_768_000);
        // A measured 0.5 µs (below the floor): the floor, then doubling per timeout.
        r.rtt.sample(500_000);
        r.rtt.rttvar = 0;
        r.timers.stop(Timer::Ack);
        r.arm_ack_timer(SimTime::ZERO);
        assert_eq!(r.poll_timeout(SimTime::ZERO).unwrap().as_ps(), 4_000_000);
        let mut expect = 4_000_000u64;
        for _ in 0..5 {
            let t = r.poll_timeout(SimTime::ZERO).unwrap();
            r.handle_timeout(t);
            drain(&mut r);
            expect = (expect * 2).min(32_768_000);
            assert_eq!((r.poll_timeout(SimTime::ZERO).unwrap() - t).as_ps(), expect);
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
