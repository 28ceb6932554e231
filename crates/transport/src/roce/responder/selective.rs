//! Selective repeat (IRN) at the responder: packets past a gap placed at once and held,
//! SACK NAKs saying what is held, and the held packets executed in order once the gap fills.

use super::transmit::Outgoing;
use super::{RecvState, RemoteOp, Responder, ResponderEnv, ResponderEvent};
use crate::roce::packet::RocePacket;
use crate::roce::psn::Psn;
use wire::ib::aeth::{CREDITS_UNLIMITED, NakCode, Syndrome};
use wire::ib::{Operation, irn};

/// The most PSNs past the expected one selective repeat holds.
pub(super) const EARLY_MAX: usize = 1 << 14;

impl Responder {
    /// Selective repeat's receive path (see the module doc).
    pub(super) fn selective(
        &mut self,
        p: Psn,
        op: Operation,
        pkt: &RocePacket,
        payload: &[u8],
        env: &mut impl ResponderEnv,
    ) {
        let d = p.distance_from(self.epsn);
        if d < 0 {
            self.duplicate(p, op, pkt, env);
            return;
        }
        if d > 0 {
            self.counters.out_of_sequence += 1;
            self.events.push_back(ResponderEvent::OutOfSequence {
                psn: p.get(),
                expected: self.epsn.get(),
            });
            let d = d as usize;
            let held = matches!(self.early.get(d), Some(Some(_)));
            let trigger = if held {
                p
            } else if d < EARLY_MAX && self.place_early(op, pkt, payload, env) {
                if self.early.len() <= d {
                    self.early.resize(d + 1, None);
                }
                self.early[d] = Some(*pkt);
                self.counters.placed_early += 1;
                p
            } else {
                self.epsn // nothing new held; the NAK still tells what is
            };
            self.push_sack(trigger);
            return;
        }
        let before = self.epsn;
        self.execute(p, op, pkt, payload, env, false);
        if self.state == RecvState::Error {
            self.early.clear();
            return;
        }
        self.advance_early(before);
        let mut drained = false;
        while let Some(Some(held)) = self.early.front().copied() {
            self.early.pop_front();
            let at = self.epsn;
            let op = held.bth.opcode.operation().unwrap_or(Operation::SendOnly);
            self.execute(Psn::new(held.bth.psn), op, &held, &[], env, true);
            if self.state == RecvState::Error {
                self.early.clear();
                return;
            }
            if self.epsn == at {
                // Not taken (an RNR: a WRITE with immediate or a SEND found no receive). Its
                // slot stays, empty, so the entries behind keep their PSNs; its resend fills it.
                self.early.push_front(None);
                break;
            }
            drained = true;
            // Held packets are SENDs and WRITEs: each moves the expected PSN by one.
            self.advance_early(at.add(1));
        }
        if self.early.iter().any(Option::is_some) {
            // Still a hole behind what is held: say so at once (the trigger is the expected
            // PSN itself: nothing new arrived), or the requester learns of it only by timing
            // out.
            if drained || pkt.bth.ack_req {
                let epsn = self.epsn;
                self.push_sack(epsn);
            }
        } else if drained {
            self.push_ack(
                self.epsn.prev(),
                Syndrome::Ack {
                    credits: CREDITS_UNLIMITED,
                },
            );
        }
    }

    /// The expected PSN moved from `before` to `epsn`: drop the entries of the early
    /// buffer it passed (entry 0 stays aligned with `epsn`).
    pub(super) fn advance_early(&mut self, before: Psn) {
        let moved = self.epsn.distance_from(before).max(0) as usize;
        if moved >= self.early.len() {
            self.early.clear();
        } else {
            self.early.drain(..moved);
        }
    }

    /// Places a packet that arrived past a gap, if its own headers say where and the memory
    /// allows it.
    pub(super) fn place_early(
        &mut self,
        op: Operation,
        pkt: &RocePacket,
        payload: &[u8],
        env: &mut impl ResponderEnv,
    ) -> bool {
        use Operation::*;
        let len = pkt.payload_len as u64;
        let data = &payload[..payload.len().min(len as usize)];
        let target = match (op, pkt.ext.irn) {
            (RdmaWriteFirst | RdmaWriteOnly | RdmaWriteOnlyWithImmediate, _) => {
                pkt.ext.reth.map(|r| (r.va, r.rkey))
            }
            (
                RdmaWriteMiddle | RdmaWriteLast | RdmaWriteLastWithImmediate,
                Some(irn::Repr::Write(r)),
            ) => Some((r.va, r.rkey)),
            (
                SendFirst
                | SendMiddle
                | SendLast
                | SendLastWithImmediate
                | SendOnly
                | SendOnlyWithImmediate,
                Some(irn::Repr::Send { wqe_sn, offset }),
            ) => {
                let index = wqe_sn.wrapping_sub(self.recv_sn);
                return index < EARLY_MAX as u32
                    && env.place_recv_at(index, offset as u64, len, data).is_ok();
            }
            _ => None,
        };
        let Some((va, rkey)) = target else {
            return false;
        };
        if len == 0 {
            return true;
        }
        if !env.qp_allows(RemoteOp::Write) || !env.check_rkey(rkey, va, len, RemoteOp::Write) {
            return false;
        }
        env.write_remote(rkey, va, len, data);
        true
    }

    /// A SACK NAK: the expected PSN, the PSN that triggered it, and the map of the 64 PSNs
    /// after the expected one that are held.
    pub(super) fn push_sack(&mut self, trigger: Psn) {
        let mut received = 0u64;
        for (i, e) in self.early.iter().skip(1).take(64).enumerate() {
            if e.is_some() {
                received |= 1 << i;
            }
        }
        self.counters.sequence_naks += 1;
        self.counters.sacks += 1;
        let sack = irn::Repr::Sack {
            psn: trigger.get(),
            received,
        };
        if let Some(Outgoing::Ack {
            syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
            sack: Some(_),
            ..
        }) = self.out.back()
        {
            // A newer SACK knows all an unsent older one does.
            self.out.pop_back();
        }
        let msn = self.msn;
        self.out.push_back(Outgoing::Ack {
            psn: self.epsn,
            syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
            msn,
            sack: Some(sack),
        });
    }
}
