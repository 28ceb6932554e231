//! The responder: requests in PSN order, data placed through its environment, ACK/NAK,
//! READ responses and atomic ACKs out. RC as below; on UC every error (a PSN gap, a bad key,
//! no receive WQE) drops the message silently and the QP starts again at the next FIRST or
//! ONLY packet, with no ACK, NAK or RNR; UD takes single-packet SENDs with the right Q_Key
//! and puts [`UD_GRH_BYTES`] of GRH before the payload.
//!
//! Follows IBTA Vol. 1 §9.7 (responder side) as research/verbs-spec.md §4–§6 summarise it,
//! with rxe's `rxe_resp.c` for what the text leaves open:
//!
//! - Expected PSN. A request with the expected PSN is executed. One ahead of it means a packet
//!   was lost: exactly one NAK (PSN sequence error, carrying the expected PSN) is sent per gap
//!   and later packets are dropped until the expected PSN arrives (`check_psn`, `sent_psn_nak`).
//!   One behind it is a duplicate: SEND and WRITE are re-acknowledged without executing again
//!   (C9-105); READ and atomics are answered again from the responder resources (`duplicate_request`).
//! - Checks in the order the spec gives: opcode sequence and packet lengths (FIRST/MIDDLE carry
//!   exactly one PMTU, C9-92) and the QP's access flags → NAK invalid request; R_Key, PD, range
//!   and MR access → NAK remote access error; no receive WQE for a SEND or WRITE_WITH_IMM → RNR NAK
//!   carrying `min_rnr_timer` (the QP stays usable); a SEND longer than its receive buffer → NAK
//!   invalid request. The invalid-request, access and operational NAKs move an RC QP to the
//!   error state ([`Responder::is_failed`]).
//! - ACKs only for packets with AckReq set; a queued ACK not yet sent is replaced by a newer one
//!   (coalescing, as a NIC's ACK engine does). NAKs, READ responses and atomic ACKs always go.
//! - The MSN counts completed request messages; a READ counts when it is accepted (C9-148).
//! - Selective repeat ([`RetransmitMode::SelectiveRepeat`], IRN): a SEND or WRITE packet past a
//!   gap is placed at once, by the placement every packet carries ([`wire::ib::irn`]), and
//!   held; each one is answered with a SACK NAK (the expected PSN and a map of what is held).
//!   When the gap fills, the held packets are executed in PSN order without placing their
//!   bytes again (message state, receive completions, MSN), and an ACK follows. A READ or
//!   atomic past a gap is dropped: it is answered in order, when it comes again. A packet
//!   that cannot be placed early (no receive WQE yet, a bad key) is dropped the same way, so
//!   the in-order path gives its error.

use super::config::{RcConfig, RetransmitMode, Service};
use super::packet::{DataRef, RocePacket, Transmit, rc_bth};
use super::psn::{self, Psn};
use std::collections::VecDeque;
use units::SimTime;
use wire::ExtHeaders;
use wire::ib::aeth::{self, CREDITS_UNLIMITED, NakCode, Syndrome};
use wire::ib::{Opcode, Operation, atomic_ack_eth, irn};

/// The remote access a request needs.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RemoteOp {
    /// RDMA WRITE (REMOTE_WRITE).
    Write,
    /// RDMA READ (REMOTE_READ).
    Read,
    /// Atomics (REMOTE_ATOMIC).
    Atomic,
}

/// Why a receive WQE could not take a SEND's data.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RecvFailure {
    /// The message is longer than the receive buffer.
    TooLong,
    /// The receive WQE's SGE is not valid memory (bad lkey, PD, range or access).
    BadWqe,
}

/// What the responder needs from the verbs layer and memory. The responder calls it while
/// handling a packet; nothing here involves time.
pub trait ResponderEnv {
    /// Whether the QP's access flags allow `op` (checked before the memory key).
    fn qp_allows(&self, op: RemoteOp) -> bool;
    /// Whether `rkey` grants `op` on `[va, va + len)` (key valid, same PD, access, range).
    fn check_rkey(&mut self, rkey: u32, va: u64, len: u64, op: RemoteOp) -> bool;
    /// Claims the next receive WQE for a new incoming message; false if none is posted.
    fn start_recv(&mut self) -> bool;
    /// Writes the packet's `len` payload bytes at `offset` of the claimed receive WQE's buffer.
    /// `data` holds them, or is empty when the payload travels by reference (synthetic memory)
    /// and the environment knows where it comes from.
    fn place_recv(&mut self, offset: u64, len: u64, data: &[u8]) -> Result<(), RecvFailure>;
    /// Selective repeat: writes bytes of a message that arrived early into the receive WQE
    /// `index` places behind the next one to complete (0: that one, claimed or not), without
    /// claiming it. An environment that cannot address receive WQEs this way refuses (the
    /// default), and the packet is dropped to come again in its turn.
    fn place_recv_at(
        &mut self,
        index: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), RecvFailure> {
        let _ = (index, offset, len, data);
        Err(RecvFailure::BadWqe)
    }
    /// Completes the claimed receive WQE successfully.
    fn finish_recv(
        &mut self,
        byte_len: u64,
        imm: Option<u32>,
        write_with_imm: bool,
        solicited: bool,
    );
    /// Completes the claimed receive WQE with an error.
    fn fail_recv(&mut self, why: RecvFailure);
    /// Writes the packet's `len` WRITE payload bytes to memory at `va` (already checked by
    /// `check_rkey`); `data` as for [`place_recv`](Self::place_recv).
    fn write_remote(&mut self, va: u64, len: u64, data: &[u8]);
    /// Executes an atomic on the 8 bytes at `va` and returns the value before it.
    fn atomic(&mut self, va: u64, compare_swap: Option<(u64, u64)>, add: u64) -> u64;
    /// UD: the 40 bytes that go before a datagram's payload in the receive buffer (RoCEv2:
    /// 20 zero bytes, then the packet's IPv4 header). Zeros unless the host knows better.
    fn ud_grh(&self) -> [u8; UD_GRH_BYTES as usize] {
        [0; UD_GRH_BYTES as usize]
    }
    /// UD: the receive completion of a datagram from `src_qp` (`byte_len` includes the GRH
    /// area, and the completion carries `IBV_WC_GRH`).
    fn finish_ud_recv(&mut self, byte_len: u64, imm: Option<u32>, src_qp: u32, solicited: bool) {
        let _ = src_qp;
        self.finish_recv(byte_len, imm, false, solicited);
    }
}

/// What the responder tells the host.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ResponderEvent {
    /// The responder NAKed with a fatal code and moved to the error state.
    Failed {
        /// The NAK it sent.
        nak: NakCode,
    },
    /// A request arrived out of order and was dropped (with or without a NAK).
    OutOfSequence {
        /// The PSN that arrived.
        psn: u32,
        /// The PSN expected.
        expected: u32,
    },
    /// A duplicate request was answered without executing it again.
    Duplicate {
        /// Its PSN.
        psn: u32,
    },
    /// An RNR NAK was sent.
    ReceiverNotReady {
        /// The PSN refused.
        psn: u32,
    },
}

/// Counters for the lab (named like mlx5's where one exists).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct ResponderCounters {
    /// Requests dropped because their PSN was ahead of the expected one (mlx5
    /// `out_of_sequence`).
    pub out_of_sequence: u64,
    /// PSN-sequence NAKs sent (mlx5 `packet_seq_err` counts them at the requester).
    pub sequence_naks: u64,
    /// Duplicate requests seen.
    pub duplicates: u64,
    /// RNR NAKs sent (mlx5 `rnr_nak_retry_err` counts the requester's give-ups).
    pub rnr_naks: u64,
    /// ACKs sent.
    pub acks: u64,
    /// UC messages dropped silently (a PSN gap, an error, no receive WQE).
    pub dropped_messages: u64,
    /// Selective repeat: packets placed although they arrived after a gap.
    pub placed_early: u64,
    /// Selective repeat: SACK NAKs sent (also counted in `sequence_naks`).
    pub sacks: u64,
}

#[derive(Clone, Copy, Debug)]
enum Message {
    Send { offset: u64 },
    Write { va: u64, offset: u64, len: u64 },
}

#[derive(Clone, Copy, Debug)]
enum Resource {
    Read {
        first_psn: Psn,
        npsn: u32,
        va: u64,
        rkey: u32,
        len: u64,
    },
    Atomic {
        psn: Psn,
        orig: u64,
    },
}

#[derive(Clone, Copy, Debug)]
enum Outgoing {
    Ack {
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
        sack: Option<irn::Repr>,
    },
    Read {
        psn: Psn,
        va: u64,
        remaining: u64,
        first: bool,
        msn: u32,
    },
    AtomicAck {
        psn: Psn,
        orig: u64,
        msn: u32,
    },
}

/// Bytes a UD receive buffer starts with: the GRH area (IBTA: a 40-byte GRH, or for RoCEv2
/// over IPv4 20 unused bytes and the IPv4 header), before the payload.
// source: research/verbs-spec.md §5 (ibv_post_recv.3: "the actual data … will start at an offset of 40 bytes")
pub const UD_GRH_BYTES: u64 = 40;

/// The most PSNs past the expected one selective repeat holds.
const EARLY_MAX: usize = 1 << 14;

/// The responder half of an RC QP.
#[derive(Debug)]
pub struct Responder {
    cfg: RcConfig,
    epsn: Psn,
    msn: u32,
    nak_sent: bool,
    /// UC: the message in progress was dropped; later packets of it are dropped too, until
    /// a FIRST or ONLY packet starts the next one.
    drop_msg: bool,
    msg: Option<Message>,
    /// Selective repeat: entry `i` holds the headers of PSN `epsn + i` if it arrived early
    /// and was placed (entry 0 is never held).
    early: VecDeque<Option<RocePacket>>,
    /// Receive WQEs consumed so far, so an early SEND finds the WQE its IRN header names.
    recv_sn: u32,
    resources: VecDeque<Resource>,
    out: VecDeque<Outgoing>,
    failed: bool,
    events: VecDeque<ResponderEvent>,
    counters: ResponderCounters,
}

impl Responder {
    /// A responder expecting `cfg.rq_psn`.
    pub fn new(cfg: RcConfig) -> Self {
        Responder {
            cfg,
            epsn: Psn::new(cfg.rq_psn),
            msn: 0,
            nak_sent: false,
            drop_msg: false,
            msg: None,
            early: VecDeque::new(),
            recv_sn: 0,
            resources: VecDeque::new(),
            out: VecDeque::new(),
            failed: false,
            events: VecDeque::new(),
            counters: ResponderCounters::default(),
        }
    }

    /// Counters so far.
    pub fn counters(&self) -> ResponderCounters {
        self.counters
    }
    /// The PSN expected next.
    pub fn expected_psn(&self) -> u32 {
        self.epsn.get()
    }
    /// True after a fatal NAK: the QP is in the error state and drops requests.
    pub fn is_failed(&self) -> bool {
        self.failed
    }
    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<ResponderEvent> {
        self.events.pop_front()
    }

    /// Handles one request packet and its payload bytes.
    pub fn handle_request(
        &mut self,
        _now: SimTime,
        pkt: &RocePacket,
        payload: &[u8],
        env: &mut impl ResponderEnv,
    ) {
        if self.failed {
            return;
        }
        let Some(op) = pkt.bth.opcode.operation() else {
            return;
        };
        if !pkt.bth.opcode.is_request() {
            return;
        }
        let p = Psn::new(pkt.bth.psn);
        if self.cfg.service == Service::Ud {
            self.datagram(op, pkt, payload, env);
            return;
        }
        if self.cfg.service == Service::Uc {
            // UC (rxe `check_psn`): a gap or a dropped message discards packets until a
            // FIRST or ONLY packet, which starts a message at whatever PSN it carries.
            let o = pkt.bth.opcode;
            if self.drop_msg || p != self.epsn {
                if p != self.epsn {
                    self.counters.out_of_sequence += 1;
                }
                if !(o.is_first() || o.is_only()) {
                    if !self.drop_msg {
                        self.counters.dropped_messages += 1;
                    }
                    self.drop_msg = true;
                    self.msg = None;
                    return;
                }
                self.drop_msg = false;
                self.msg = None;
                self.epsn = p;
            }
            self.execute(p, op, pkt, payload, env, false);
            return;
        }
        if self.cfg.mode == RetransmitMode::SelectiveRepeat {
            self.selective(p, op, pkt, payload, env);
            return;
        }
        match p.distance_from(self.epsn) {
            0 => {}
            d if d > 0 => {
                self.counters.out_of_sequence += 1;
                self.events.push_back(ResponderEvent::OutOfSequence {
                    psn: p.get(),
                    expected: self.epsn.get(),
                });
                if !self.nak_sent {
                    self.nak_sent = true;
                    self.counters.sequence_naks += 1;
                    self.push_ack(self.epsn, Syndrome::Nak(NakCode::PsnSequenceError));
                }
                return;
            }
            _ => {
                self.duplicate(p, op, pkt, env);
                return;
            }
        }
        self.nak_sent = false;
        self.execute(p, op, pkt, payload, env, false);
    }

    /// Selective repeat's receive path (see the module doc).
    fn selective(
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
        if self.failed {
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
            if self.failed {
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
    fn advance_early(&mut self, before: Psn) {
        let moved = self.epsn.distance_from(before).max(0) as usize;
        if moved >= self.early.len() {
            self.early.clear();
        } else {
            self.early.drain(..moved);
        }
    }

    /// Places a packet that arrived past a gap, if its own headers say where and the memory
    /// allows it.
    fn place_early(
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
        env.write_remote(va, len, data);
        true
    }

    /// A SACK NAK: the expected PSN, the PSN that triggered it, and the map of the 64 PSNs
    /// after the expected one that are held.
    fn push_sack(&mut self, trigger: Psn) {
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

    /// A UD datagram: SEND ONLY with a DETH whose Q_Key matches, into the next receive WQE
    /// after a 40-byte GRH area. Anything else is dropped silently: no NAK, no RNR, no error.
    fn datagram(
        &mut self,
        op: Operation,
        pkt: &RocePacket,
        payload: &[u8],
        env: &mut impl ResponderEnv,
    ) {
        let len = pkt.payload_len;
        let ok = matches!(op, Operation::SendOnly | Operation::SendOnlyWithImmediate)
            && pkt.ext.deth.is_some_and(|d| d.qkey == self.cfg.qkey)
            && len <= self.cfg.pmtu;
        if !ok || !env.start_recv() {
            self.counters.dropped_messages += 1;
            return;
        }
        let grh = env.ud_grh();
        let data = &payload[..payload.len().min(len as usize)];
        let g = UD_GRH_BYTES;
        if env.place_recv(0, g, &grh).is_err() || env.place_recv(g, len as u64, data).is_err() {
            // A receive buffer too small for GRH + payload: dropped (rxe class D), no CQE.
            self.counters.dropped_messages += 1;
            return;
        }
        let src_qp = pkt.ext.deth.map_or(0, |d| d.src_qp);
        let imm = pkt.ext.immdt.map(|i| i.imm);
        env.finish_ud_recv(UD_GRH_BYTES + len as u64, imm, src_qp, pkt.bth.solicited);
        self.msn = (self.msn + 1) & psn::MASK;
    }

    fn duplicate(&mut self, p: Psn, op: Operation, pkt: &RocePacket, env: &mut impl ResponderEnv) {
        self.counters.duplicates += 1;
        self.events
            .push_back(ResponderEvent::Duplicate { psn: p.get() });
        match op {
            Operation::RdmaReadRequest => {
                let Some(reth) = pkt.ext.reth else { return };
                let found = self.resources.iter().find_map(|r| match *r {
                    Resource::Read {
                        first_psn,
                        npsn,
                        va,
                        rkey,
                        len,
                    } => p.in_run(first_psn, npsn).then_some((va, rkey, len)),
                    _ => None,
                });
                // Class D: no resource, no answer. Re-validate the range asked for.
                if let Some((va, rkey, len)) = found
                    && reth.va >= va
                    && reth.va + reth.dma_len as u64 <= va + len
                    && env.check_rkey(rkey, reth.va, reth.dma_len as u64, RemoteOp::Read)
                {
                    self.out.push_back(Outgoing::Read {
                        psn: p,
                        va: reth.va,
                        remaining: reth.dma_len as u64,
                        first: true,
                        msn: self.msn,
                    });
                }
            }
            Operation::CompareSwap | Operation::FetchAdd => {
                let orig = self.resources.iter().find_map(|r| match *r {
                    Resource::Atomic { psn, orig } if psn == p => Some(orig),
                    _ => None,
                });
                if let Some(orig) = orig {
                    self.out.push_back(Outgoing::AtomicAck {
                        psn: p,
                        orig,
                        msn: self.msn,
                    });
                }
            }
            // SEND/WRITE: acknowledge again with the PSN before the expected one.
            _ => self.push_ack(
                self.epsn.prev(),
                Syndrome::Ack {
                    credits: CREDITS_UNLIMITED,
                },
            ),
        }
    }

    /// Executes request `p` in PSN order. `placed`: selective repeat already placed its
    /// bytes when it arrived early; everything else (checks, message state, completions)
    /// happens now.
    fn execute(
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
                        offset: 0,
                        len: reth.dma_len as u64,
                    });
                }
                let Some(Message::Write {
                    va,
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
                        va + offset,
                        len as u64,
                        &payload[..payload.len().min(len as usize)],
                    );
                }
                self.msg = Some(Message::Write {
                    va,
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
                    env.atomic(a.va, Some((a.compare, a.swap_add)), 0)
                } else {
                    env.atomic(a.va, None, a.swap_add)
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

    fn remember(&mut self, r: Resource) {
        if self.resources.len() >= self.cfg.max_dest_rd_atomic.max(1) as usize {
            self.resources.pop_front();
        }
        self.resources.push_back(r);
    }

    fn rnr(&mut self, p: Psn) {
        if self.cfg.service == Service::Uc {
            // No receive WQE on UC: no RNR, the message is dropped.
            self.msg = None;
            self.drop_msg = true;
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

    fn fatal(&mut self, nak: NakCode, _env: &mut impl ResponderEnv) {
        if self.cfg.service == Service::Uc {
            // UC errors are silent (class D/E in rxe): the message is dropped, the QP goes on.
            self.msg = None;
            self.drop_msg = true;
            self.counters.dropped_messages += 1;
            return;
        }
        self.push_ack(self.epsn, Syndrome::Nak(nak));
        self.failed = true;
        self.msg = None;
        self.events.push_back(ResponderEvent::Failed { nak });
    }

    fn push_ack(&mut self, psn: Psn, syndrome: Syndrome) {
        if self.cfg.service == Service::Uc {
            return; // UC has no acknowledgements
        }
        let msn = self.msn;
        if let (
            Syndrome::Ack { .. },
            Some(Outgoing::Ack {
                syndrome: Syndrome::Ack { .. },
                ..
            }),
        ) = (syndrome, self.out.back())
        {
            // Coalesce: a newer cumulative ACK replaces one still waiting to go.
            self.out.pop_back();
        }
        self.out.push_back(Outgoing::Ack {
            psn,
            syndrome,
            msn,
            sack: None,
        });
    }

    /// The next response packet to send, if any.
    pub fn poll_transmit(&mut self, _now: SimTime) -> Option<Transmit> {
        let pmtu = self.cfg.pmtu as u64;
        let dest = self.cfg.dest_qpn;
        let item = self.out.front_mut()?;
        let t = match *item {
            Outgoing::Ack {
                psn,
                syndrome,
                msn,
                sack,
            } => {
                self.out.pop_front();
                if matches!(syndrome, Syndrome::Ack { .. }) {
                    self.counters.acks += 1;
                }
                let ext = ExtHeaders {
                    aeth: Some(aeth::Repr { syndrome, msn }),
                    irn: sack,
                    ..ExtHeaders::NONE
                };
                Transmit {
                    pkt: RocePacket {
                        bth: rc_bth(Opcode::rc(Operation::Acknowledge), dest, psn, false),
                        ext,
                        payload_len: 0,
                    },
                    data: DataRef::None,
                    ud_ah: None,
                }
            }
            Outgoing::AtomicAck { psn, orig, msn } => {
                self.out.pop_front();
                let ext = ExtHeaders {
                    aeth: Some(aeth::Repr {
                        syndrome: Syndrome::Ack {
                            credits: CREDITS_UNLIMITED,
                        },
                        msn,
                    }),
                    atomic_ack_eth: Some(atomic_ack_eth::Repr {
                        orig_remote_data: orig,
                    }),
                    ..ExtHeaders::NONE
                };
                Transmit {
                    pkt: RocePacket {
                        bth: rc_bth(Opcode::rc(Operation::AtomicAcknowledge), dest, psn, false),
                        ext,
                        payload_len: 0,
                    },
                    data: DataRef::None,
                    ud_ah: None,
                }
            }
            Outgoing::Read {
                psn: p,
                va,
                remaining,
                first,
                msn,
            } => {
                let len = remaining.min(pmtu);
                let last = remaining <= pmtu;
                let op = match (first, last) {
                    (true, true) => Operation::RdmaReadResponseOnly,
                    (true, false) => Operation::RdmaReadResponseFirst,
                    (false, false) => Operation::RdmaReadResponseMiddle,
                    (false, true) => Operation::RdmaReadResponseLast,
                };
                let aeth = (first || last).then_some(aeth::Repr {
                    syndrome: Syndrome::Ack {
                        credits: CREDITS_UNLIMITED,
                    },
                    msn,
                });
                if last {
                    self.out.pop_front();
                } else {
                    *item = Outgoing::Read {
                        psn: p.add(1),
                        va: va + len,
                        remaining: remaining - len,
                        first: false,
                        msn,
                    };
                }
                Transmit {
                    pkt: RocePacket {
                        bth: rc_bth(Opcode::rc(op), dest, p, false),
                        ext: ExtHeaders {
                            aeth,
                            ..ExtHeaders::NONE
                        },
                        payload_len: len as u32,
                    },
                    data: if len > 0 {
                        DataRef::Remote { va }
                    } else {
                        DataRef::None
                    },
                    ud_ah: None,
                }
            }
        };
        Some(t)
    }
}
