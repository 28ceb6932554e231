//! Request packets: a work request cut into PMTU-sized packets with the opcodes and
//! extension headers each carries, and the counters and timers that go with sending one.

use super::{Requester, RetransmitReason, Timer, WorkOp};
use crate::roce::config::Service;
use crate::roce::packet::{DataRef, RocePacket, Transmit, rc_bth};
use crate::roce::psn::Psn;
use units::SimTime;
use wire::ExtHeaders;
use wire::ib::{Opcode, Operation, Transport, atomic_eth, deth, immdt, irn, reth};

impl Requester {
    /// Packet `idx` (PSN `p`) of request `i`, first sent or again, with the counters and
    /// timers that go with sending it. Returns it and whether it is the request's last.
    pub(super) fn build(&mut self, i: usize, idx: u32, p: Psn, now: SimTime) -> (Transmit, bool) {
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
            let reason = match self.recovery.timeout_cover {
                Some(end) if p < end => RetransmitReason::Timeout,
                _ => self.recovery.reason,
            };
            self.counters.retransmitted_by_reason[reason as usize] += 1;
        } else {
            self.recovery.timeout_cover = None;
            self.counters.first_transmissions += 1;
            self.counters.inflight_sum += (p.distance_from(self.una) + 1).max(1) as u64;
            if self.cfg.adaptive_min.is_some() && self.rtt.sent.len() < 4096 {
                self.rtt.sent.push_back((p, now));
            }
        }
        if !unreliable && self.timers.get(Timer::Ack).is_none() {
            let at = self.ack_timeout().map(|d| now + d);
            self.timers.put(Timer::Ack, at);
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
