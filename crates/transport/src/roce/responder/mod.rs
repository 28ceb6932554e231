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
//!
//! # Driving it
//!
//! Sans-IO and timer-free: the host calls [`handle_request`](Responder::handle_request) for
//! each request packet (the responder checks, places through its [`ResponderEnv`] and queues
//! its answers), then [`poll_transmit`](Responder::poll_transmit) until `None` (queued
//! answers in order; a READ response yields one packet per call), then
//! [`poll_event`](Responder::poll_event). [`RecvState`] says what the next packet meets.
//!
//! # Files
//!
//! - this file: the environment trait, events, counters, the PSN check and duplicates, UD.
//! - `execute`: one request in PSN order, its checks and the NAKs they give.
//! - `selective`: selective repeat's early placement, SACKs and the held packets.
//! - `transmit`: the queue of answers and the packets they become.

mod execute;
mod selective;
mod transmit;

use crate::roce::config::{RcConfig, RetransmitMode, Service};
use crate::roce::packet::RocePacket;
use crate::roce::psn::{self, Psn};
use std::collections::VecDeque;
use transmit::Outgoing;
use units::SimTime;
use wire::ib::Operation;
use wire::ib::aeth::{CREDITS_UNLIMITED, NakCode, Syndrome};

/// The remote access a request needs: one type with the verbs layer, which checks it.
pub use units::RemoteOp;

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
    /// Writes the packet's `len` WRITE payload bytes to memory at `va` through `rkey` (just
    /// checked by `check_rkey`: the whole message at its first packet, each later packet's own
    /// range before it); `data` as for
    /// [`place_recv`](Self::place_recv).
    fn write_remote(&mut self, rkey: u32, va: u64, len: u64, data: &[u8]);
    /// Executes an atomic on the 8 bytes at `va` through `rkey` (checked by `check_rkey`)
    /// and returns the value before it.
    fn atomic(&mut self, rkey: u32, va: u64, compare_swap: Option<(u64, u64)>, add: u64) -> u64;
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
    Send {
        offset: u64,
    },
    Write {
        va: u64,
        rkey: u32,
        offset: u64,
        len: u64,
    },
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

/// Bytes a UD receive buffer starts with: the GRH area (IBTA: a 40-byte GRH, or for RoCEv2
/// over IPv4 20 unused bytes and the IPv4 header), before the payload.
// source: research/verbs-spec.md §5 (ibv_post_recv.3: "the actual data … will start at an offset of 40 bytes")
pub const UD_GRH_BYTES: u64 = 40;

/// Where the responder is: what it does with the next request packet.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RecvState {
    /// Taking requests at the expected PSN.
    Ready,
    /// RC, go-back-N: a PSN sequence NAK went for the current gap; packets past it are
    /// dropped without another NAK until the expected PSN arrives (rxe `sent_psn_nak`).
    SequenceError,
    /// UC: the message in progress was dropped; its later packets are dropped too, until a
    /// FIRST or ONLY packet starts the next one.
    Dropping,
    /// RC: a fatal NAK went; the QP is in the error state and drops every request.
    Error,
}

/// The responder half of an RC QP.
#[derive(Debug)]
pub struct Responder {
    cfg: RcConfig,
    epsn: Psn,
    msn: u32,
    /// Taking requests, recovering from a gap or a dropped message, or failed.
    state: RecvState,
    msg: Option<Message>,
    /// Selective repeat: entry `i` holds the headers of PSN `epsn + i` if it arrived early
    /// and was placed (entry 0 is never held).
    early: VecDeque<Option<RocePacket>>,
    /// Receive WQEs consumed so far, so an early SEND finds the WQE its IRN header names.
    recv_sn: u32,
    resources: VecDeque<Resource>,
    out: VecDeque<Outgoing>,
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
            state: RecvState::Ready,
            msg: None,
            early: VecDeque::new(),
            recv_sn: 0,
            resources: VecDeque::new(),
            out: VecDeque::new(),
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
        self.state == RecvState::Error
    }
    /// Taking requests, recovering from a gap or a dropped message, or failed.
    pub fn state(&self) -> RecvState {
        self.state
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
        if self.state == RecvState::Error {
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
            if self.state == RecvState::Dropping || p != self.epsn {
                if p != self.epsn {
                    self.counters.out_of_sequence += 1;
                }
                if !(o.is_first() || o.is_only()) {
                    if self.state != RecvState::Dropping {
                        self.counters.dropped_messages += 1;
                    }
                    self.state = RecvState::Dropping;
                    self.msg = None;
                    return;
                }
                self.state = RecvState::Ready;
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
                if self.state != RecvState::SequenceError {
                    self.state = RecvState::SequenceError;
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
        self.state = RecvState::Ready;
        self.execute(p, op, pkt, payload, env, false);
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
                        rkey,
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
}

#[cfg(test)]
mod tests;
