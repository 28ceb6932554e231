//! Responses out: ACKs (coalesced), NAKs, READ responses cut into PMTU-sized packets, and
//! atomic ACKs, in the order they were queued.

use super::Responder;
use crate::roce::config::Service;
use crate::roce::packet::{DataRef, RocePacket, Transmit, rc_bth};
use crate::roce::psn::Psn;
use units::SimTime;
use wire::ExtHeaders;
use wire::ib::aeth::{self, CREDITS_UNLIMITED, Syndrome};
use wire::ib::{Opcode, Operation, atomic_ack_eth, irn};

#[derive(Clone, Copy, Debug)]
pub(super) enum Outgoing {
    Ack {
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
        sack: Option<irn::Repr>,
    },
    Read {
        psn: Psn,
        va: u64,
        rkey: u32,
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

impl Responder {
    pub(super) fn push_ack(&mut self, psn: Psn, syndrome: Syndrome) {
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
                rkey,
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
                        rkey,
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
                        DataRef::Remote { va, rkey }
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
