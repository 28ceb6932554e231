//! The BTH opcode: which transport a packet belongs to and what operation it performs.
//!
//! Follows IBTA Vol. 1 §9.2 (base transport header, opcode field) and the constants of Linux
//! `include/rdma/ib_pack.h`, reproduced in `verbs-spec.md` §6. The upper three bits select
//! the transport (RC `0x00`, UC `0x20`, RD `0x40`, UD `0x60`, CNP `0x80`), the lower five the
//! operation. Not every transport supports every operation: UC has only SEND and RDMA WRITE,
//! UD only SEND_ONLY (with or without immediate), and the only CNP opcode is `0x81`.
//!
//! [`Opcode`] can only hold a defined opcode, so anything built from one can be emitted;
//! reserved and vendor opcodes parse as [`Error::UnknownOpcode`]. The `has_*` methods say which
//! extension headers follow the BTH (the "headers present per opcode" table of
//! `verbs-spec.md` §6; RD per IBTA §9.2: RDETH on every packet, DETH on requests).
//!
//! Simplification: the RD FLUSH header order (RDETH, DETH, FETH, RETH) is inferred from the
//! RC FLUSH layout; no implementation of RD exists to check it against.

use core::fmt;

use super::{aeth, atomic_ack_eth, atomic_eth, bth, deth, feth, ieth, immdt, rdeth, reth};
use crate::{Error, Result};

/// The transport service an opcode belongs to, in opcode-base order.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Transport {
    /// Reliable connection (opcodes 0x00–0x1f).
    Rc,
    /// Unreliable connection (0x20–0x3f).
    Uc,
    /// Reliable datagram (0x40–0x5f).
    Rd,
    /// Unreliable datagram (0x60–0x7f).
    Ud,
    /// RoCEv2 congestion notification (0x80–0x9f; only 0x81 is defined).
    Cnp,
}

impl Transport {
    /// The opcode base: the upper three bits of every opcode of this transport.
    pub const fn base(self) -> u8 {
        match self {
            Transport::Rc => 0x00,
            Transport::Uc => 0x20,
            Transport::Rd => 0x40,
            Transport::Ud => 0x60,
            Transport::Cnp => 0x80,
        }
    }

    /// The abbreviation used in the specification and by Wireshark ("RC", "UD", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
        }
    }
}

/// The operation part of an opcode (its low five bits), in code order.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum Operation {
    /// First packet of a multi-packet SEND.
    SendFirst = 0x00,
    /// Middle packet of a SEND.
    SendMiddle = 0x01,
    /// Last packet of a SEND.
    SendLast = 0x02,
    /// Last packet of a SEND, with immediate data (ImmDt).
    SendLastWithImmediate = 0x03,
    /// A SEND that fits in one packet.
    SendOnly = 0x04,
    /// A one-packet SEND with immediate data (ImmDt).
    SendOnlyWithImmediate = 0x05,
    /// First packet of an RDMA WRITE (carries the RETH).
    RdmaWriteFirst = 0x06,
    /// Middle packet of an RDMA WRITE.
    RdmaWriteMiddle = 0x07,
    /// Last packet of an RDMA WRITE.
    RdmaWriteLast = 0x08,
    /// Last packet of an RDMA WRITE with immediate (consumes a receive WQE).
    RdmaWriteLastWithImmediate = 0x09,
    /// A one-packet RDMA WRITE (RETH).
    RdmaWriteOnly = 0x0a,
    /// A one-packet RDMA WRITE with immediate (RETH, ImmDt).
    RdmaWriteOnlyWithImmediate = 0x0b,
    /// RDMA READ request (RETH; no payload).
    RdmaReadRequest = 0x0c,
    /// First packet of a READ response (AETH).
    RdmaReadResponseFirst = 0x0d,
    /// Middle packet of a READ response.
    RdmaReadResponseMiddle = 0x0e,
    /// Last packet of a READ response (AETH).
    RdmaReadResponseLast = 0x0f,
    /// A one-packet READ response (AETH).
    RdmaReadResponseOnly = 0x10,
    /// ACK or NAK (AETH).
    Acknowledge = 0x11,
    /// Response to an atomic (AETH, AtomicAckETH).
    AtomicAcknowledge = 0x12,
    /// Atomic compare-and-swap request (AtomicETH).
    CompareSwap = 0x13,
    /// Atomic fetch-and-add request (AtomicETH).
    FetchAdd = 0x14,
    /// Last packet of a SEND that invalidates a remote key (IETH).
    SendLastWithInvalidate = 0x16,
    /// A one-packet SEND that invalidates a remote key (IETH).
    SendOnlyWithInvalidate = 0x17,
    /// FLUSH to persistence or global visibility (FETH, RETH).
    Flush = 0x1c,
    /// ATOMIC WRITE of 8 bytes (RETH, 8-byte payload).
    AtomicWrite = 0x1d,
}

impl Operation {
    /// Every operation, in code order.
    pub const ALL: [Operation; 25] = [
        Operation::SendFirst,
        Operation::SendMiddle,
        Operation::SendLast,
        Operation::SendLastWithImmediate,
        Operation::SendOnly,
        Operation::SendOnlyWithImmediate,
        Operation::RdmaWriteFirst,
        Operation::RdmaWriteMiddle,
        Operation::RdmaWriteLast,
        Operation::RdmaWriteLastWithImmediate,
        Operation::RdmaWriteOnly,
        Operation::RdmaWriteOnlyWithImmediate,
        Operation::RdmaReadRequest,
        Operation::RdmaReadResponseFirst,
        Operation::RdmaReadResponseMiddle,
        Operation::RdmaReadResponseLast,
        Operation::RdmaReadResponseOnly,
        Operation::Acknowledge,
        Operation::AtomicAcknowledge,
        Operation::CompareSwap,
        Operation::FetchAdd,
        Operation::SendLastWithInvalidate,
        Operation::SendOnlyWithInvalidate,
        Operation::Flush,
        Operation::AtomicWrite,
    ];

    /// The five-bit operation code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The operation with code `code` (low five bits of an opcode), if one is defined.
    pub const fn from_code(code: u8) -> Option<Operation> {
        use Operation::*;
        Some(match code {
            0x00 => SendFirst,
            0x01 => SendMiddle,
            0x02 => SendLast,
            0x03 => SendLastWithImmediate,
            0x04 => SendOnly,
            0x05 => SendOnlyWithImmediate,
            0x06 => RdmaWriteFirst,
            0x07 => RdmaWriteMiddle,
            0x08 => RdmaWriteLast,
            0x09 => RdmaWriteLastWithImmediate,
            0x0a => RdmaWriteOnly,
            0x0b => RdmaWriteOnlyWithImmediate,
            0x0c => RdmaReadRequest,
            0x0d => RdmaReadResponseFirst,
            0x0e => RdmaReadResponseMiddle,
            0x0f => RdmaReadResponseLast,
            0x10 => RdmaReadResponseOnly,
            0x11 => Acknowledge,
            0x12 => AtomicAcknowledge,
            0x13 => CompareSwap,
            0x14 => FetchAdd,
            0x16 => SendLastWithInvalidate,
            0x17 => SendOnlyWithInvalidate,
            0x1c => Flush,
            0x1d => AtomicWrite,
            _ => return None,
        })
    }

    /// The specification's name, as in `ib_pack.h` ("SEND_ONLY", "RDMA_READ_REQUEST", ...).
    pub const fn name(self) -> &'static str {
        use Operation::*;
        match self {
            SendFirst => "SEND_FIRST",
            SendMiddle => "SEND_MIDDLE",
            SendLast => "SEND_LAST",
            SendLastWithImmediate => "SEND_LAST_WITH_IMMEDIATE",
            SendOnly => "SEND_ONLY",
            SendOnlyWithImmediate => "SEND_ONLY_WITH_IMMEDIATE",
            RdmaWriteFirst => "RDMA_WRITE_FIRST",
            RdmaWriteMiddle => "RDMA_WRITE_MIDDLE",
            RdmaWriteLast => "RDMA_WRITE_LAST",
            RdmaWriteLastWithImmediate => "RDMA_WRITE_LAST_WITH_IMMEDIATE",
            RdmaWriteOnly => "RDMA_WRITE_ONLY",
            RdmaWriteOnlyWithImmediate => "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            RdmaReadRequest => "RDMA_READ_REQUEST",
            RdmaReadResponseFirst => "RDMA_READ_RESPONSE_FIRST",
            RdmaReadResponseMiddle => "RDMA_READ_RESPONSE_MIDDLE",
            RdmaReadResponseLast => "RDMA_READ_RESPONSE_LAST",
            RdmaReadResponseOnly => "RDMA_READ_RESPONSE_ONLY",
            Acknowledge => "ACKNOWLEDGE",
            AtomicAcknowledge => "ATOMIC_ACKNOWLEDGE",
            CompareSwap => "COMPARE_SWAP",
            FetchAdd => "FETCH_ADD",
            SendLastWithInvalidate => "SEND_LAST_WITH_INVALIDATE",
            SendOnlyWithInvalidate => "SEND_ONLY_WITH_INVALIDATE",
            Flush => "FLUSH",
            AtomicWrite => "ATOMIC_WRITE",
        }
    }
}

/// A defined BTH opcode. The byte inside is always one the specification assigns, so every
/// `Opcode` can be emitted and parses back to itself.
#[derive(Clone, Copy, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Opcode(u8);

impl Opcode {
    /// The RoCEv2 congestion notification packet, `0x81`.
    pub const CNP: Opcode = Opcode(0x81);
    /// UD SEND_ONLY, `0x64`.
    pub const UD_SEND_ONLY: Opcode = Opcode(0x64);
    /// UD SEND_ONLY_WITH_IMMEDIATE, `0x65`.
    pub const UD_SEND_ONLY_WITH_IMMEDIATE: Opcode = Opcode(0x65);

    /// The RC opcode for `op`. RC supports every operation, so this cannot fail.
    pub const fn rc(op: Operation) -> Opcode {
        Opcode(Transport::Rc.base() | op.code())
    }

    /// The opcode for `op` on `transport`, or `None` if that transport does not define it
    /// (UC READ, UD SEND_FIRST, any operation on CNP, ...).
    pub const fn new(transport: Transport, op: Operation) -> Option<Opcode> {
        let defined = match transport {
            Transport::Rc => true,
            Transport::Uc => op.code() <= Operation::RdmaWriteOnlyWithImmediate.code(),
            Transport::Rd => {
                op.code() <= Operation::FetchAdd.code() || matches!(op, Operation::Flush)
            }
            Transport::Ud => {
                matches!(op, Operation::SendOnly | Operation::SendOnlyWithImmediate)
            }
            Transport::Cnp => false,
        };
        if defined {
            Some(Opcode(transport.base() | op.code()))
        } else {
            None
        }
    }

    /// The opcode whose byte is `byte`, or [`Error::UnknownOpcode`].
    pub const fn from_u8(byte: u8) -> Result<Opcode> {
        if byte == Opcode::CNP.0 {
            return Ok(Opcode::CNP);
        }
        let transport = match byte >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            _ => return Err(Error::UnknownOpcode(byte)),
        };
        let Some(op) = Operation::from_code(byte & 0x1f) else {
            return Err(Error::UnknownOpcode(byte));
        };
        match Opcode::new(transport, op) {
            Some(opcode) => Ok(opcode),
            None => Err(Error::UnknownOpcode(byte)),
        }
    }

    /// Every defined opcode, in byte order.
    pub fn all() -> impl Iterator<Item = Opcode> {
        (0..=u8::MAX).filter_map(|b| Opcode::from_u8(b).ok())
    }

    /// The opcode byte.
    pub const fn as_u8(self) -> u8 {
        self.0
    }

    /// The transport this opcode belongs to.
    pub const fn transport(self) -> Transport {
        match self.0 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            _ => Transport::Cnp,
        }
    }

    /// The operation, or `None` for a CNP.
    pub const fn operation(self) -> Option<Operation> {
        if self.is_cnp() {
            return None;
        }
        Operation::from_code(self.0 & 0x1f)
    }

    /// Whether this is the congestion notification opcode.
    pub const fn is_cnp(self) -> bool {
        self.0 == Opcode::CNP.0
    }

    /// Whether a reliable datagram extended transport header follows the BTH (every RD
    /// packet).
    pub const fn has_rdeth(self) -> bool {
        matches!(self.transport(), Transport::Rd)
    }

    /// Whether a datagram extended transport header (Q_Key, source QP) follows: every UD
    /// packet and every RD request.
    pub const fn has_deth(self) -> bool {
        match self.transport() {
            Transport::Ud => true,
            Transport::Rd => !self.is_response(),
            _ => false,
        }
    }

    /// Whether a FLUSH extended transport header follows.
    pub const fn has_feth(self) -> bool {
        matches!(self.operation(), Some(Operation::Flush))
    }

    /// Whether an RDMA extended transport header (VA, R_Key, DMA length) follows: the first
    /// or only packet of a WRITE, a READ request, FLUSH and ATOMIC WRITE.
    pub const fn has_reth(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(
                RdmaWriteFirst
                    | RdmaWriteOnly
                    | RdmaWriteOnlyWithImmediate
                    | RdmaReadRequest
                    | Flush
                    | AtomicWrite
            )
        )
    }

    /// Whether an atomic extended transport header follows (compare-swap, fetch-add).
    pub const fn has_atomic_eth(self) -> bool {
        matches!(
            self.operation(),
            Some(Operation::CompareSwap | Operation::FetchAdd)
        )
    }

    /// Whether an ACK extended transport header (syndrome, MSN) follows: ACK/NAK, atomic ACK,
    /// and the first, last and only READ response packets.
    pub const fn has_aeth(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(
                RdmaReadResponseFirst
                    | RdmaReadResponseLast
                    | RdmaReadResponseOnly
                    | Acknowledge
                    | AtomicAcknowledge
            )
        )
    }

    /// Whether an atomic ACK extended transport header (the original remote value) follows.
    pub const fn has_atomic_ack_eth(self) -> bool {
        matches!(self.operation(), Some(Operation::AtomicAcknowledge))
    }

    /// Whether immediate data follows.
    pub const fn has_immdt(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(
                SendLastWithImmediate
                    | SendOnlyWithImmediate
                    | RdmaWriteLastWithImmediate
                    | RdmaWriteOnlyWithImmediate
            )
        )
    }

    /// Whether an invalidate extended transport header (the R_Key to invalidate) follows.
    pub const fn has_ieth(self) -> bool {
        matches!(
            self.operation(),
            Some(Operation::SendLastWithInvalidate | Operation::SendOnlyWithInvalidate)
        )
    }

    /// Whether the packet carries a payload: SENDs, WRITEs, READ responses and ATOMIC WRITE.
    /// READ requests, atomics, FLUSH, ACKs and CNPs carry none.
    pub const fn has_payload(self) -> bool {
        use Operation::*;
        !matches!(
            self.operation(),
            None | Some(
                RdmaReadRequest | Acknowledge | AtomicAcknowledge | CompareSwap | FetchAdd | Flush
            )
        )
    }

    /// Whether this is the first packet of a multi-packet message.
    pub const fn is_first(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(SendFirst | RdmaWriteFirst | RdmaReadResponseFirst)
        )
    }

    /// Whether this is a middle packet of a multi-packet message.
    pub const fn is_middle(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(SendMiddle | RdmaWriteMiddle | RdmaReadResponseMiddle)
        )
    }

    /// Whether this is the last packet of a multi-packet message.
    pub const fn is_last(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(
                SendLast
                    | SendLastWithImmediate
                    | SendLastWithInvalidate
                    | RdmaWriteLast
                    | RdmaWriteLastWithImmediate
                    | RdmaReadResponseLast
            )
        )
    }

    /// Whether this packet is a whole message by itself: the `*_ONLY` opcodes and the
    /// one-packet operations (READ request, atomics, FLUSH, ATOMIC WRITE, ACK, atomic ACK).
    /// Every opcode but CNP is exactly one of first, middle, last or only.
    pub const fn is_only(self) -> bool {
        self.operation().is_some() && !self.is_first() && !self.is_middle() && !self.is_last()
    }

    /// Whether a responder sends this packet: READ responses, ACK/NAK and atomic ACKs.
    pub const fn is_response(self) -> bool {
        use Operation::*;
        matches!(
            self.operation(),
            Some(
                RdmaReadResponseFirst
                    | RdmaReadResponseMiddle
                    | RdmaReadResponseLast
                    | RdmaReadResponseOnly
                    | Acknowledge
                    | AtomicAcknowledge
            )
        )
    }

    /// Whether a requester sends this packet. CNPs are neither requests nor responses.
    pub const fn is_request(self) -> bool {
        self.operation().is_some() && !self.is_response()
    }

    /// The bytes of extension headers this opcode puts between the BTH and the payload (for a
    /// CNP, its 16 reserved bytes).
    pub const fn ext_headers_len(self) -> usize {
        if self.is_cnp() {
            return super::cnp::RESERVED_LEN;
        }
        let mut len = 0;
        if self.has_rdeth() {
            len += rdeth::HEADER_LEN;
        }
        if self.has_deth() {
            len += deth::HEADER_LEN;
        }
        if self.has_feth() {
            len += feth::HEADER_LEN;
        }
        if self.has_reth() {
            len += reth::HEADER_LEN;
        }
        if self.has_atomic_eth() {
            len += atomic_eth::HEADER_LEN;
        }
        if self.has_aeth() {
            len += aeth::HEADER_LEN;
        }
        if self.has_atomic_ack_eth() {
            len += atomic_ack_eth::HEADER_LEN;
        }
        if self.has_immdt() {
            len += immdt::HEADER_LEN;
        }
        if self.has_ieth() {
            len += ieth::HEADER_LEN;
        }
        len
    }

    /// BTH plus extension headers.
    pub const fn transport_header_len(self) -> usize {
        bth::HEADER_LEN + self.ext_headers_len()
    }
}

impl TryFrom<u8> for Opcode {
    type Error = Error;
    fn try_from(byte: u8) -> Result<Opcode> {
        Opcode::from_u8(byte)
    }
}

impl From<Opcode> for u8 {
    fn from(opcode: Opcode) -> u8 {
        opcode.0
    }
}

impl fmt::Display for Opcode {
    /// `RC SEND_ONLY`, `UD SEND_ONLY_WITH_IMMEDIATE`, `CNP`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operation() {
            Some(op) => write!(f, "{} {}", self.transport().name(), op.name()),
            None => f.write_str("CNP"),
        }
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Opcode({self} {:#04x})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Operation::*;

    /// The defined opcodes are exactly Linux's (`include/rdma/ib_pack.h`: `IB_OPCODE(RC, ...)`
    /// and the rest, each transport's base plus the operation), with the RoCEv2 CNP's
    /// `b'10000001` from Annex A17 Figure 6. Note RD FLUSH is 0x40 + 0x1C = 0x5c.
    #[test]
    fn opcodes_are_linux_ib_pack_h() {
        let mut want: Vec<u8> = (0x00..=0x14).chain([0x16, 0x17, 0x1c, 0x1d]).collect();
        want.extend(0x20..=0x2b);
        want.extend((0x40..=0x54).chain([0x5c]));
        want.extend([0x64, 0x65, 0x81]);
        let got: Vec<u8> = Opcode::all().map(Opcode::as_u8).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn table_bytes() {
        assert_eq!(Opcode::rc(SendOnly).as_u8(), 0x04);
        assert_eq!(Opcode::rc(RdmaWriteOnly).as_u8(), 0x0a);
        assert_eq!(Opcode::rc(AtomicWrite).as_u8(), 0x1d);
        assert_eq!(Opcode::new(Transport::Uc, SendOnly).unwrap().as_u8(), 0x24);
        assert_eq!(Opcode::new(Transport::Rd, Flush).unwrap().as_u8(), 0x5c);
        assert_eq!(
            Opcode::new(Transport::Ud, SendOnly),
            Some(Opcode::UD_SEND_ONLY)
        );
        assert_eq!(Opcode::UD_SEND_ONLY.as_u8(), 0x64);
        assert_eq!(Opcode::UD_SEND_ONLY_WITH_IMMEDIATE.as_u8(), 0x65);
        assert_eq!(Opcode::CNP.as_u8(), 0x81);
    }

    #[test]
    fn defined_opcodes_count() {
        // RC 25, UC 12, RD 22, UD 2, CNP 1 (ib_pack.h plus CNP).
        let all: Vec<Opcode> = Opcode::all().collect();
        assert_eq!(all.len(), 25 + 12 + 22 + 2 + 1);
        let count = |t| all.iter().filter(|o| o.transport() == t).count();
        assert_eq!(count(Transport::Rc), 25);
        assert_eq!(count(Transport::Uc), 12);
        assert_eq!(count(Transport::Rd), 22);
        assert_eq!(count(Transport::Ud), 2);
        assert_eq!(count(Transport::Cnp), 1);
    }

    #[test]
    fn unknown_opcodes_are_errors() {
        for byte in [
            0x15, 0x18, 0x1e, 0x2c, 0x35, 0x55, 0x60, 0x66, 0x80, 0x82, 0xc0, 0xff,
        ] {
            assert_eq!(
                Opcode::from_u8(byte),
                Err(Error::UnknownOpcode(byte)),
                "{byte:#x}"
            );
        }
        assert_eq!(Opcode::new(Transport::Uc, RdmaReadRequest), None);
        assert_eq!(Opcode::new(Transport::Ud, SendFirst), None);
        assert_eq!(Opcode::new(Transport::Cnp, SendOnly), None);
    }

    #[test]
    fn every_byte_round_trips_or_errors() {
        for byte in 0..=u8::MAX {
            if let Ok(op) = Opcode::from_u8(byte) {
                assert_eq!(op.as_u8(), byte);
                assert_eq!(Opcode::try_from(u8::from(op)), Ok(op));
                match op.operation() {
                    Some(o) => assert_eq!(Opcode::new(op.transport(), o), Some(op)),
                    None => assert!(op.is_cnp()),
                }
            }
        }
    }

    #[test]
    fn headers_per_opcode_table() {
        // verbs-spec.md §6 "Headers present per opcode", as total extension bytes.
        let rc = |op| Opcode::rc(op).ext_headers_len();
        assert_eq!(rc(SendFirst), 0);
        assert_eq!(rc(SendOnlyWithImmediate), 4);
        assert_eq!(rc(SendOnlyWithInvalidate), 4);
        assert_eq!(rc(RdmaWriteFirst), 16);
        assert_eq!(rc(RdmaWriteOnlyWithImmediate), 20);
        assert_eq!(rc(RdmaWriteMiddle), 0);
        assert_eq!(rc(RdmaWriteLastWithImmediate), 4);
        assert_eq!(rc(RdmaReadRequest), 16);
        assert_eq!(rc(RdmaReadResponseFirst), 4);
        assert_eq!(rc(RdmaReadResponseMiddle), 0);
        assert_eq!(rc(Acknowledge), 4);
        assert_eq!(rc(AtomicAcknowledge), 12);
        assert_eq!(rc(CompareSwap), 28);
        assert_eq!(rc(FetchAdd), 28);
        assert_eq!(rc(Flush), 20);
        assert_eq!(rc(AtomicWrite), 16);
        assert_eq!(Opcode::UD_SEND_ONLY.ext_headers_len(), 8);
        assert_eq!(Opcode::UD_SEND_ONLY_WITH_IMMEDIATE.ext_headers_len(), 12);
        assert_eq!(Opcode::CNP.ext_headers_len(), 16);
        let rd = |op| Opcode::new(Transport::Rd, op).unwrap();
        assert_eq!(rd(SendOnly).ext_headers_len(), 4 + 8);
        assert_eq!(rd(Acknowledge).ext_headers_len(), 4 + 4);
        assert_eq!(rd(RdmaReadRequest).ext_headers_len(), 4 + 8 + 16);
        assert!(
            Opcode::new(Transport::Uc, RdmaWriteFirst)
                .unwrap()
                .has_reth()
        );
        assert!(!Opcode::new(Transport::Uc, SendOnly).unwrap().has_deth());
    }

    #[test]
    fn position_and_direction() {
        for op in Opcode::all() {
            let positions = [op.is_first(), op.is_middle(), op.is_last(), op.is_only()];
            let n = positions.iter().filter(|&&b| b).count();
            if op.is_cnp() {
                assert_eq!(n, 0);
                assert!(!op.is_request() && !op.is_response() && !op.has_payload());
            } else {
                assert_eq!(n, 1, "{op}");
                assert_ne!(op.is_request(), op.is_response(), "{op}");
            }
        }
        assert!(Opcode::rc(SendOnly).is_only() && Opcode::rc(SendOnly).has_payload());
        assert!(Opcode::rc(RdmaReadResponseMiddle).is_middle());
        assert!(Opcode::rc(RdmaReadResponseLast).is_response());
        assert!(Opcode::rc(FetchAdd).is_only() && !Opcode::rc(FetchAdd).has_payload());
        assert!(Opcode::rc(AtomicWrite).has_payload());
        assert!(!Opcode::rc(Acknowledge).has_payload());
    }

    #[test]
    fn display() {
        assert_eq!(Opcode::rc(SendOnly).to_string(), "RC SEND_ONLY");
        assert_eq!(
            Opcode::UD_SEND_ONLY_WITH_IMMEDIATE.to_string(),
            "UD SEND_ONLY_WITH_IMMEDIATE"
        );
        assert_eq!(Opcode::CNP.to_string(), "CNP");
        assert_eq!(
            format!("{:?}", Opcode::rc(Acknowledge)),
            "Opcode(RC ACKNOWLEDGE 0x11)"
        );
        for (i, op) in Operation::ALL.iter().enumerate() {
            assert_eq!(Operation::from_code(op.code()), Some(*op));
            if i > 0 {
                assert!(Operation::ALL[i - 1].code() < op.code());
            }
        }
    }
}
