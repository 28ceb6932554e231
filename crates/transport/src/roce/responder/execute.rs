//! A request in PSN order: the checks in the order IBTA gives them, then the SEND, WRITE, READ
//! or atomic itself, and the NAKs that end it when a check fails.

use super::transmit::Outgoing;
use super::{
    Message, RecvFailure, RecvState, RemoteOp, Resource, Responder, ResponderEnv, ResponderEvent,
};
use crate::roce::config::Service;
use crate::roce::packet::RocePacket;
use crate::roce::psn::{self, Psn};
use wire::ib::Operation;
use wire::ib::aeth::{CREDITS_UNLIMITED, NakCode, Syndrome};

impl Responder {
    /// Executes request `p` in PSN order. `placed`: selective repeat already placed its
    /// bytes when it arrived early; everything else (checks, message state, completions)
    /// happens now.
    pub(super) fn execute(
        &mut self,
        p: Psn,
        op: Operation,
        pkt: &RocePacket,
        payload: &[u8],
        env: &mut impl ResponderEnv,
        placed: bool,
    ) {
        use Operation::*;
        let o = pkt.bth.opcode;
        let pmtu = self.cfg.pmtu;
        let len = pkt.payload_len;
        // Packet length rules (C9-92): FIRST/MIDDLE exactly one PMTU, LAST 1..=PMTU, ONLY ≤ PMTU.
        let bad_len = ((o.is_first() || o.is_middle()) && len != pmtu)
            || (o.is_last() && (len == 0 || len > pmtu))
            || (o.is_only() && len > pmtu);
        // Opcode sequence: MIDDLE/LAST continue a message of the same kind; FIRST/ONLY start one.
        let continuing = o.is_middle() || o.is_last();
        let seq_ok = match (self.msg, continuing) {
            (Some(Message::Send { .. }), true) => {
                matches!(op, SendMiddle | SendLast | SendLastWithImmediate)
            }
            (Some(Message::Write { .. }), true) => {
                matches!(
                    op,
                    RdmaWriteMiddle | RdmaWriteLast | RdmaWriteLastWithImmediate
                )
            }
            (None, true) => false,
            (Some(_), false) => false,
            (None, false) => true,
        };
        if !seq_ok || (o.has_payload() && bad_len) {
            self.fatal(NakCode::InvalidRequest, env);
            return;
        }
        match op {
            SendFirst
            | SendOnly
            | SendOnlyWithImmediate
            | SendMiddle
            | SendLast
            | SendLastWithImmediate => {
                if o.is_first() || o.is_only() {
                    if !env.start_recv() {
                        self.rnr(p);
                        return;
                    }
                    self.msg = Some(Message::Send { offset: 0 });
                }
                let Some(Message::Send { offset, .. }) = self.msg else {
                    unreachable!("checked above")
                };
                let placing = if placed {
                    Ok(())
                } else {
                    env.place_recv(
                        offset,
                        len as u64,
                        &payload[..payload.len().min(len as usize)],
                    )
                };
                if let Err(why) = placing {
                    if self.cfg.service == Service::Uc {
                        // A receive too small on UC: dropped, no completion (rxe class D).
                        let _ = why;
                        self.fatal(NakCode::InvalidRequest, env);
                        return;
                    }
                    env.fail_recv(why);
                    self.msg = None;
                    self.fatal(
                        match why {
                            RecvFailure::TooLong => NakCode::InvalidRequest,
                            RecvFailure::BadWqe => NakCode::RemoteOperationalError,
                        },
                        env,
                    );
                    return;
                }
                let total = offset + len as u64;
                self.msg = Some(Message::Send { offset: total });
                if o.is_last() || o.is_only() {
                    let imm = pkt.ext.immdt.map(|i| i.imm);
                    env.finish_recv(total, imm, false, pkt.bth.solicited);
                    self.recv_sn = self.recv_sn.wrapping_add(1);
                    self.msg = None;
                    self.msn = (self.msn + 1) & psn::MASK;
                }
            }
            RdmaWriteFirst
            | RdmaWriteOnly
            | RdmaWriteOnlyWithImmediate
            | RdmaWriteMiddle
            | RdmaWriteLast
            | RdmaWriteLastWithImmediate => {
                if o.is_first() || o.is_only() {
                    let Some(reth) = pkt.ext.reth else {
                        self.fatal(NakCode::InvalidRequest, env);
                        return;
                    };
                    if !env.qp_allows(RemoteOp::Write) {
                        self.fatal(NakCode::InvalidRequest, env);
                        return;
                    }
                    // A zero-length WRITE needs no valid key (C9-88).
                    if reth.dma_len > 0
                        && !env.check_rkey(reth.rkey, reth.va, reth.dma_len as u64, RemoteOp::Write)
                    {
                        self.fatal(NakCode::RemoteAccessError, env);
                        return;
                    }
                    self.msg = Some(Message::Write {
                        va: reth.va,
                        rkey: reth.rkey,
                        offset: 0,
                        len: reth.dma_len as u64,
                    });
                }
                let Some(Message::Write {
                    va,
                    rkey,
                    offset,
                    len: total,
                }) = self.msg
                else {
                    unreachable!("checked above")
                };
                if offset + len as u64 > total {
                    self.fatal(NakCode::InvalidRequest, env);
                    return;
                }
                // The first packet checked the whole message; each later one is checked again,
                // as a NIC translates every packet's DMA through the key: an MR deregistered
                // (or its rkey invalidated) mid-message ends the message with an access NAK
                // instead of writing into memory the key no longer grants.
                if !(o.is_first() || o.is_only())
                    && len > 0
                    && !env.check_rkey(rkey, va + offset, len as u64, RemoteOp::Write)
                {
                    self.fatal(NakCode::RemoteAccessError, env);
                    return;
                }
                let with_imm =
                    matches!(op, RdmaWriteOnlyWithImmediate | RdmaWriteLastWithImmediate);
                if with_imm && !env.start_recv() {
                    // Nothing of this packet is placed; the requester resends it after the wait,
                    // so an ONLY must find no message open when it comes again.
                    if o.is_only() {
                        self.msg = None;
                    }
                    self.rnr(p);
                    return;
                }
                if len > 0 && !placed {
                    env.write_remote(
                        rkey,
                        va + offset,
                        len as u64,
                        &payload[..payload.len().min(len as usize)],
                    );
                }
                self.msg = Some(Message::Write {
                    va,
                    rkey,
                    offset: offset + len as u64,
                    len: total,
                });
                if o.is_last() || o.is_only() {
                    if with_imm {
                        let imm = pkt.ext.immdt.map(|i| i.imm);
                        env.finish_recv(total, imm, true, pkt.bth.solicited);
                        self.recv_sn = self.recv_sn.wrapping_add(1);
                    }
                    self.msg = None;
                    self.msn = (self.msn + 1) & psn::MASK;
                }
            }
            RdmaReadRequest => {
                let Some(reth) = pkt.ext.reth else {
                    self.fatal(NakCode::InvalidRequest, env);
                    return;
                };
                if !env.qp_allows(RemoteOp::Read) || self.cfg.max_dest_rd_atomic == 0 {
                    self.fatal(NakCode::InvalidRequest, env);
                    return;
                }
                let len = reth.dma_len as u64;
                if len > 0 && !env.check_rkey(reth.rkey, reth.va, len, RemoteOp::Read) {
                    self.fatal(NakCode::RemoteAccessError, env);
                    return;
                }
                let npsn = (len.div_ceil(pmtu as u64)).max(1) as u32;
                self.remember(Resource::Read {
                    first_psn: p,
                    npsn,
                    va: reth.va,
                    rkey: reth.rkey,
                    len,
                });
                self.msn = (self.msn + 1) & psn::MASK;
                self.out.push_back(Outgoing::Read {
                    psn: p,
                    va: reth.va,
                    rkey: reth.rkey,
                    remaining: len,
                    first: true,
                    msn: self.msn,
                });
                self.epsn = p.add(npsn);
                return;
            }
            CompareSwap | FetchAdd => {
                let Some(a) = pkt.ext.atomic_eth else {
                    self.fatal(NakCode::InvalidRequest, env);
                    return;
                };
                if !env.qp_allows(RemoteOp::Atomic)
                    || self.cfg.max_dest_rd_atomic == 0
                    || a.va % 8 != 0
                {
                    self.fatal(NakCode::InvalidRequest, env);
                    return;
                }
                if !env.check_rkey(a.rkey, a.va, 8, RemoteOp::Atomic) {
                    self.fatal(NakCode::RemoteAccessError, env);
                    return;
                }
                let orig = if op == CompareSwap {
                    env.atomic(a.rkey, a.va, Some((a.compare, a.swap_add)), 0)
                } else {
                    env.atomic(a.rkey, a.va, None, a.swap_add)
                };
                self.remember(Resource::Atomic { psn: p, orig });
                self.msn = (self.msn + 1) & psn::MASK;
                self.out.push_back(Outgoing::AtomicAck {
                    psn: p,
                    orig,
                    msn: self.msn,
                });
                self.epsn = p.add(1);
                return;
            }
            _ => {
                self.fatal(NakCode::InvalidRequest, env);
                return;
            }
        }
        self.epsn = p.add(1);
        if pkt.bth.ack_req {
            self.push_ack(
                p,
                Syndrome::Ack {
                    credits: CREDITS_UNLIMITED,
                },
            );
        }
    }

    pub(super) fn remember(&mut self, r: Resource) {
        if self.resources.len() >= self.cfg.max_dest_rd_atomic.max(1) as usize {
            self.resources.pop_front();
        }
        self.resources.push_back(r);
    }

    pub(super) fn rnr(&mut self, p: Psn) {
        if self.cfg.service == Service::Uc {
            // No receive WQE on UC: no RNR, the message is dropped.
            self.msg = None;
            self.state = RecvState::Dropping;
            self.counters.dropped_messages += 1;
            return;
        }
        self.counters.rnr_naks += 1;
        self.events
            .push_back(ResponderEvent::ReceiverNotReady { psn: p.get() });
        self.push_ack(
            p,
            Syndrome::RnrNak {
                timer: self.cfg.min_rnr_timer & 0x1f,
            },
        );
    }

    pub(super) fn fatal(&mut self, nak: NakCode, _env: &mut impl ResponderEnv) {
        if self.cfg.service == Service::Uc {
            // UC errors are silent (class D/E in rxe): the message is dropped, the QP goes on.
            self.msg = None;
            self.state = RecvState::Dropping;
            self.counters.dropped_messages += 1;
            return;
        }
        self.push_ack(self.epsn, Syndrome::Nak(nak));
        self.state = RecvState::Error;
        self.msg = None;
        self.events.push_back(ResponderEvent::Failed { nak });
    }
}
