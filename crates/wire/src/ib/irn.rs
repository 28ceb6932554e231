//! rdmalab's IRN extension header: the per-packet information selective repeat needs.
//!
//! Not part of the InfiniBand specification. Selective repeat as IRN describes it (Mittal et
//! al., "Revisiting Network Support for RDMA", SIGCOMM 2018, research/figures.md §5) lets the
//! responder place a packet that arrives after a gap, so every packet must say where its bytes
//! go, and lets the responder's NAK say what it holds beyond the gap. Standard RoCE carries
//! the placement only on the first packet of a message, so IRN adds it to the others.
//!
//! A packet that carries the extension sets bit 0x40 of BTH byte 8 (a reserved bit beside
//! AckReq; Wireshark shows it as a non-zero "Reserved" field) and puts the header after the
//! standard extension headers, before the payload. Its layout follows from the opcode:
//!
//! | opcode                          | header                  | bytes |
//! |---------------------------------|-------------------------|-------|
//! | RC RDMA WRITE MIDDLE/LAST (imm) | a RETH for this packet  | 16    |
//! | RC SEND (any)                   | receive WQE SN, offset  | 8     |
//! | RC ACKNOWLEDGE (a NAK)          | trigger PSN, 64-bit map | 12    |
//!
//! The SACK map is rdmalab's addition to IRN's NAK (which names only the PSN that triggered
//! it): bit `i` says PSN `cumulative + 1 + i` has arrived, so a lost NAK costs no spurious
//! resend, for the same reason TCP repeats its SACK blocks (RFC 2018 §4).

use super::{Opcode, Operation, Transport, U24_MASK, reth};
use crate::{Error, Result, be};

/// The BTH byte-8 bit that says the IRN extension is present.
pub const MARK: u8 = 0x40;
/// Length of the SEND form.
pub const SEND_LEN: usize = 8;
/// Length of the SACK form.
pub const SACK_LEN: usize = 12;

/// Which form an opcode's IRN header takes, if it can carry one.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Kind {
    /// A RETH (WRITE MIDDLE/LAST).
    Write,
    /// Receive WQE sequence number and offset (SEND).
    Send,
    /// Selective acknowledgement (ACKNOWLEDGE).
    Sack,
}

impl Kind {
    /// The form `opcode` carries, or `None` when the opcode takes no IRN header.
    pub fn of(opcode: Opcode) -> Option<Kind> {
        use Operation::*;
        if opcode.transport() != Transport::Rc {
            return None;
        }
        match opcode.operation()? {
            RdmaWriteMiddle | RdmaWriteLast | RdmaWriteLastWithImmediate => Some(Kind::Write),
            SendFirst
            | SendMiddle
            | SendLast
            | SendLastWithImmediate
            | SendOnly
            | SendOnlyWithImmediate => Some(Kind::Send),
            Acknowledge => Some(Kind::Sack),
            _ => None,
        }
    }

    /// Bytes of this form on the wire.
    pub const fn wire_len(self) -> usize {
        match self {
            Kind::Write => reth::HEADER_LEN,
            Kind::Send => SEND_LEN,
            Kind::Sack => SACK_LEN,
        }
    }
}

/// A parsed IRN extension header.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Repr {
    /// Where this WRITE packet's bytes go: its own address, the message's R_Key, its length.
    Write(reth::Repr),
    /// Which receive WQE a SEND packet fills (counted from 0 since the QP started, 32 bits)
    /// and where in its buffer this packet's bytes go.
    Send {
        /// Receive WQE sequence number.
        wqe_sn: u32,
        /// Byte offset of this packet within the message.
        offset: u32,
    },
    /// A NAK's selective acknowledgement.
    Sack {
        /// The PSN whose out-of-order arrival sent this NAK (24 bits).
        psn: u32,
        /// Bit `i`: PSN `cumulative + 1 + i` has arrived (the cumulative PSN is the NAK's).
        received: u64,
    },
}

impl Repr {
    /// The form of this header.
    pub const fn kind(&self) -> Kind {
        match self {
            Repr::Write(_) => Kind::Write,
            Repr::Send { .. } => Kind::Send,
            Repr::Sack { .. } => Kind::Sack,
        }
    }

    /// Bytes on the wire.
    pub const fn buffer_len(&self) -> usize {
        self.kind().wire_len()
    }

    /// Read the form `opcode` carries from the start of `buffer`.
    pub fn parse(opcode: Opcode, buffer: &[u8]) -> Result<Repr> {
        let kind = Kind::of(opcode).ok_or(Error::Malformed(
            "IRN extension mark on an opcode that carries none",
        ))?;
        if buffer.len() < kind.wire_len() {
            return Err(Error::Truncated("IRN extension"));
        }
        Ok(match kind {
            Kind::Write => Repr::Write(reth::Repr::parse(&reth::Packet::new_checked(buffer)?)?),
            Kind::Send => Repr::Send {
                wqe_sn: be::u32_at(buffer, 0..4),
                offset: be::u32_at(buffer, 4..8),
            },
            Kind::Sack => {
                let psn = be::u32_at(buffer, 0..4);
                if psn > U24_MASK {
                    return Err(Error::Malformed("IRN SACK PSN above 24 bits"));
                }
                let hi = be::u32_at(buffer, 4..8) as u64;
                let lo = be::u32_at(buffer, 8..12) as u64;
                Repr::Sack {
                    psn,
                    received: hi << 32 | lo,
                }
            }
        })
    }

    /// Write the header at the start of `buffer` (at least [`buffer_len`](Self::buffer_len)
    /// bytes); returns the bytes written.
    pub fn emit(&self, buffer: &mut [u8]) -> usize {
        match *self {
            Repr::Write(r) => r.emit(&mut reth::Packet::new_unchecked(&mut buffer[..])),
            Repr::Send { wqe_sn, offset } => {
                be::set_u32(buffer, 0..4, wqe_sn);
                be::set_u32(buffer, 4..8, offset);
            }
            Repr::Sack { psn, received } => {
                be::set_u32(buffer, 0..4, psn & U24_MASK);
                be::set_u32(buffer, 4..8, (received >> 32) as u32);
                be::set_u32(buffer, 8..12, received as u32);
            }
        }
        self.buffer_len()
    }

    /// Refuse a form that does not go with `opcode`, or values that do not fit.
    pub fn check(&self, opcode: Opcode) -> Result<()> {
        if Kind::of(opcode) != Some(self.kind()) {
            return Err(Error::Malformed(
                "IRN extension form does not match the opcode",
            ));
        }
        self.check_fields()
    }

    /// Refuse values that do not fit their wire fields (the SACK's 24-bit PSN).
    pub fn check_fields(&self) -> Result<()> {
        if let Repr::Sack { psn, .. } = *self
            && psn > U24_MASK
        {
            return Err(Error::Malformed("IRN SACK PSN above 24 bits"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// parse(emit(x)) == x for every form.
        #[test]
        fn round_trip(va: u64, rkey: u32, dma_len: u32, sn: u32, off: u32, psn in 0u32..=U24_MASK, map: u64, which in 0u8..3) {
            let (op, r) = match which {
                0 => (Operation::RdmaWriteMiddle, Repr::Write(reth::Repr { va, rkey, dma_len })),
                1 => (Operation::SendMiddle, Repr::Send { wqe_sn: sn, offset: off }),
                _ => (Operation::Acknowledge, Repr::Sack { psn, received: map }),
            };
            let opcode = Opcode::rc(op);
            prop_assert!(r.check(opcode).is_ok());
            let mut buf = [0u8; 16];
            let n = r.emit(&mut buf);
            prop_assert_eq!(n, r.buffer_len());
            prop_assert_eq!(Repr::parse(opcode, &buf[..n]).unwrap(), r);
            prop_assert!(Repr::parse(opcode, &buf[..n - 1]).is_err(), "truncated");
        }
    }

    #[test]
    fn only_the_opcodes_that_need_it_carry_it() {
        assert_eq!(Kind::of(Opcode::rc(Operation::RdmaWriteFirst)), None);
        assert_eq!(Kind::of(Opcode::rc(Operation::RdmaReadRequest)), None);
        assert_eq!(Kind::of(Opcode::rc(Operation::SendOnly)), Some(Kind::Send));
        let uc = Opcode::new(Transport::Uc, Operation::SendOnly).unwrap();
        assert_eq!(Kind::of(uc), None, "RC only");
        let s = Repr::Send {
            wqe_sn: 1,
            offset: 0,
        };
        assert!(s.check(Opcode::rc(Operation::Acknowledge)).is_err());
    }
}
