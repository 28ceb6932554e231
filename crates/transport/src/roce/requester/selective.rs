//! Selective repeat (IRN): the scoreboard of what the responder holds beyond the cumulative
//! acknowledgement, and the resends it decides.

use super::{Requester, RequesterEvent, RetransmitReason, WorkOp};
use crate::roce::packet::Transmit;
use crate::roce::psn::Psn;
use std::collections::VecDeque;
use units::SimTime;
use wire::ib::irn;

/// What selective repeat knows beyond the cumulative acknowledgement.
#[derive(Clone, Debug, Default)]
pub(super) struct Scoreboard {
    /// Entry `i`: PSN `una + i` has reached the responder (SACKed).
    pub(super) sacked: VecDeque<bool>,
    /// PSNs to resend, oldest first.
    pub(super) resend: VecDeque<Psn>,
    /// One past the highest PSN the current recovery has looked at: each missing PSN is
    /// queued once per recovery, and again only after a timeout or once its resend is
    /// known lost.
    pub(super) examined: Option<Psn>,
    /// Resends in flight: the PSN and one past the highest PSN sent when it went. A SACK for
    /// a packet sent after the resend, with the resent PSN still missing, means the resend
    /// was lost too (one path keeps order), so it goes again without waiting for the timer
    /// (the idea of RACK, RFC 8985, on PSNs).
    pub(super) resent: VecDeque<(Psn, Psn)>,
}

/// The most PSNs past `una` the scoreboard tracks (16 MiB of 1 KiB packets).
pub(super) const SCOREBOARD_MAX: usize = 1 << 14;

impl Requester {
    /// Whether PSN `q` (at or after `una`) has been SACKed.
    pub(super) fn is_sacked(&self, q: Psn) -> bool {
        let d = q.distance_from(self.una);
        d >= 0 && self.sr.sacked.get(d as usize).copied().unwrap_or(false)
    }

    /// Records that the responder holds PSN `q` (ignored unless sent and unacknowledged).
    pub(super) fn mark_sacked(&mut self, q: Psn) {
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
    pub(super) fn resendable(&self, q: Psn) -> Option<(usize, u32)> {
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
    pub(super) fn queue_missing(&mut self, from: Psn, to: Psn, reason: RetransmitReason) {
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
            self.recovery.reason = reason;
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
    pub(super) fn sacked(&mut self, cum: Psn, sack: Option<irn::Repr>) {
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
    pub(super) fn poll_resend(&mut self, now: SimTime) -> Option<Transmit> {
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
}
