//! Responses in: ACKs, NAKs, READ responses and atomic ACKs, and the go-back, resend and
//! failure each can cause.

use super::{
    Placement, ReqStatus, Requester, RequesterEvent, RetransmitReason, SendState, Timer,
    TimerTable, WorkOp,
};
use crate::roce::packet::RocePacket;
use crate::roce::psn::Psn;
use units::SimTime;
use wire::ib::Operation;
use wire::ib::aeth::{NakCode, Syndrome, rnr_timeout};

impl Requester {
    /// Handles a response packet (ACK, NAK, READ response, atomic ACK) and says where its
    /// payload goes.
    pub fn handle_response(&mut self, now: SimTime, pkt: &RocePacket) -> Placement {
        if self.state == SendState::Error {
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
                        self.timers.set(Timer::Rnr, now + rnr_timeout(timer));
                        self.state = SendState::RnrWait;
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

    pub(super) fn read_response(&mut self, now: SimTime, p: Psn, op: Operation) -> Placement {
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
        self.recovery.response_gap = None;
        self.progress(p, now);
        Placement::ReadData {
            id: w.req.id,
            offset,
        }
    }

    /// The first PSN still unanswered of a READ or atomic queued before request `i`, if any.
    pub(super) fn earlier_unanswered(&self, i: usize) -> Option<Psn> {
        self.wqes.iter().take(i).find_map(|w| {
            (w.req.op.is_read_or_atomic() && !w.done)
                .then(|| w.first_psn.map(|f| f.add(w.received)))
                .flatten()
        })
    }

    /// Responses are missing from PSN `expected` on: resend from there, once per gap (the
    /// ACK timeout covers a lost re-request).
    pub(super) fn response_gap(&mut self, expected: Psn) {
        if self.recovery.response_gap != Some(expected) {
            self.recovery.response_gap = Some(expected);
            self.resend_from(expected, RetransmitReason::ResponseGap);
        }
    }

    /// Recovers from `p`: go-back-N resends everything from there; selective repeat asks
    /// for `p` alone (a READ from its first missing response) ahead of anything else queued.
    pub(super) fn resend_from(&mut self, p: Psn, reason: RetransmitReason) {
        if !self.selective() {
            self.go_back(p, reason);
            return;
        }
        if self.resendable(p).is_some() && !self.sr.resend.contains(&p) {
            self.sr.resend.push_front(p);
            self.recovery.reason = reason;
            self.events.push_back(RequesterEvent::Resend {
                first_psn: p.get(),
                count: 1,
                reason,
            });
        }
    }

    /// Marks PSNs up to and including `p` acknowledged.
    pub(super) fn ack_through(&mut self, p: Psn, now: SimTime) {
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
            && self.recovery.response_gap != Some(r)
        {
            self.recovery.response_gap = Some(r);
            self.resend_from(r, RetransmitReason::ResponseGap);
        }
    }

    /// PSN `p` has been answered: move the unacknowledged edge and restore the retry budgets.
    pub(super) fn progress(&mut self, p: Psn, now: SimTime) {
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
            self.recovery.response_gap = None;
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
        (self.timers.get(Timer::Ack).is_some()
            && self.outstanding_psns()
            && self.state != SendState::Error)
            .then_some(self.last_activity)
    }

    /// Reports completions at the head of the queue, in order.
    pub(super) fn complete_in_order(&mut self) {
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
    pub(super) fn go_back(&mut self, p: Psn, reason: RetransmitReason) {
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
        self.recovery.reason = reason;
        if reason == RetransmitReason::Timeout {
            self.recovery.timeout_cover = Some(self.hw_psn);
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
        self.state = SendState::Error;
        self.timers = TimerTable::default();
        self.events
            .push_back(RequesterEvent::Completed { id, status });
    }

    /// Fails the request holding PSN `p` (everything before it has completed) and stops.
    pub(super) fn fail_at(&mut self, p: Psn, status: ReqStatus) {
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
        self.state = SendState::Error;
        self.timers = TimerTable::default();
        self.events
            .push_back(RequesterEvent::Completed { id, status });
    }
}
