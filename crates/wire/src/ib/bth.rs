//! The InfiniBand base transport header (BTH), 12 bytes, first in every RoCEv2 packet.
//!
//! Follows IBTA Vol. 1 §9.2 and the layout in `verbs-spec.md` §6 (Linux rxe `struct rxe_bth`):
//!
//! | byte  | contents                                                               |
//! |-------|------------------------------------------------------------------------|
//! | 0     | opcode                                                                 |
//! | 1     | SE (0x80), MigReq (0x40), PadCnt (bits 5:4), TVer (bits 3:0, must be 0) |
//! | 2–3   | P_Key                                                                  |
//! | 4     | FECN (0x80), BECN (0x40), 6 reserved bits                              |
//! | 5–7   | destination QP (24 bits)                                               |
//! | 8     | AckReq (0x80), rdmalab's IRN mark (0x40), 6 reserved bits              |
//! | 9–11  | PSN (24 bits)                                                          |
//!
//! Byte 4 is the one the ICRC masks: switches may set FECN/BECN in flight. Reserved bits are
//! written as zero and ignored on receive, except 0x40 of byte 8, which says an IRN extension
//! header ([`crate::ib::irn`]) follows: a capture from another stack with that bit set would
//! be read with one. A transport version other than 0 is refused, as rxe
//! refuses it.

use super::{Opcode, U24_MASK};
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::{Field, Rest};
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const PKEY: Field = 2..4;
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: Field = 5..8;
    pub const ACK_REQ: usize = 8;
    pub const PSN: Field = 9..12;
    pub const PAYLOAD: Rest = 12..;
}

/// Length of the BTH.
pub const HEADER_LEN: usize = field::PSN.end;

pub(crate) const SE: u8 = 0x80;
pub(crate) const MIG_REQ: u8 = 0x40;
const PAD_SHIFT: u8 = 4;
pub(crate) const PAD_MASK: u8 = 0x30;
pub(crate) const TVER_MASK: u8 = 0x0f;
pub(crate) const FECN: u8 = 0x80;
pub(crate) const BECN: u8 = 0x40;
pub(crate) const ACK_REQ: u8 = 0x80;

/// A read (and, for mutable buffers, write) view of a BTH and the bytes after it.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole BTH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("BTH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The opcode byte, defined or not (see [`Opcode::from_u8`]).
    pub fn opcode(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE]
    }

    /// Solicited event: the responder should raise a completion event.
    pub fn solicited_event(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & SE != 0
    }

    /// Migration request (automatic path migration state).
    pub fn mig_req(&self) -> bool {
        self.buffer.as_ref()[field::FLAGS] & MIG_REQ != 0
    }

    /// Pad count: bytes (0–3) added after the payload to reach a multiple of four.
    pub fn pad_count(&self) -> u8 {
        (self.buffer.as_ref()[field::FLAGS] & PAD_MASK) >> PAD_SHIFT
    }

    /// Transport header version (0 is the only one defined).
    pub fn transport_version(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS] & TVER_MASK
    }

    /// Partition key.
    pub fn pkey(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::PKEY)
    }

    /// Forward explicit congestion notification (set by an InfiniBand switch).
    pub fn fecn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN] & FECN != 0
    }

    /// Backward explicit congestion notification (set in a RoCEv2 CNP).
    pub fn becn(&self) -> bool {
        self.buffer.as_ref()[field::FECN_BECN] & BECN != 0
    }

    /// Destination queue pair number (24 bits).
    pub fn dest_qp(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::DEST_QP)
    }

    /// Acknowledge request: the responder must ACK this packet.
    pub fn ack_req(&self) -> bool {
        self.buffer.as_ref()[field::ACK_REQ] & ACK_REQ != 0
    }

    /// rdmalab's IRN extension mark, a reserved bit of byte 8 ([`super::irn`]).
    pub fn irn_mark(&self) -> bool {
        self.buffer.as_ref()[field::ACK_REQ] & super::irn::MARK != 0
    }

    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::PSN)
    }

    /// The bytes after the BTH.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_bit(&mut self, index: usize, bit: u8, on: bool) {
        let b = &mut self.buffer.as_mut()[index];
        *b = if on { *b | bit } else { *b & !bit };
    }

    /// Set the opcode byte.
    pub fn set_opcode(&mut self, opcode: u8) {
        self.buffer.as_mut()[field::OPCODE] = opcode;
    }

    /// Set the solicited event bit.
    pub fn set_solicited_event(&mut self, on: bool) {
        self.set_bit(field::FLAGS, SE, on);
    }

    /// Set the migration request bit.
    pub fn set_mig_req(&mut self, on: bool) {
        self.set_bit(field::FLAGS, MIG_REQ, on);
    }

    /// Set the pad count (0–3).
    pub fn set_pad_count(&mut self, pad: u8) {
        debug_assert!(pad <= 3, "pad count {pad} does not fit in 2 bits");
        let b = &mut self.buffer.as_mut()[field::FLAGS];
        *b = (*b & !PAD_MASK) | ((pad << PAD_SHIFT) & PAD_MASK);
    }

    /// Set the transport header version (4 bits).
    pub fn set_transport_version(&mut self, version: u8) {
        let b = &mut self.buffer.as_mut()[field::FLAGS];
        *b = (*b & !TVER_MASK) | (version & TVER_MASK);
    }

    /// Set the partition key.
    pub fn set_pkey(&mut self, pkey: u16) {
        be::set_u16(self.buffer.as_mut(), field::PKEY, pkey);
    }

    /// Set FECN; the reserved bits of byte 4 are left as they are ([`Repr::emit`] clears
    /// them).
    pub fn set_fecn(&mut self, on: bool) {
        self.set_bit(field::FECN_BECN, FECN, on);
    }

    /// Set BECN.
    pub fn set_becn(&mut self, on: bool) {
        self.set_bit(field::FECN_BECN, BECN, on);
    }

    /// Set the destination QP (24 bits).
    pub fn set_dest_qp(&mut self, qp: u32) {
        debug_assert!(qp <= U24_MASK, "QP {qp:#x} does not fit in 24 bits");
        be::set_u24(self.buffer.as_mut(), field::DEST_QP, qp & U24_MASK);
    }

    /// Set the acknowledge request bit.
    pub fn set_ack_req(&mut self, on: bool) {
        self.set_bit(field::ACK_REQ, ACK_REQ, on);
    }

    /// Set rdmalab's IRN extension mark ([`super::irn`]).
    pub fn set_irn_mark(&mut self, on: bool) {
        self.set_bit(field::ACK_REQ, super::irn::MARK, on);
    }

    /// Set the PSN (24 bits).
    pub fn set_psn(&mut self, psn: u32) {
        debug_assert!(psn <= U24_MASK, "PSN {psn:#x} does not fit in 24 bits");
        be::set_u24(self.buffer.as_mut(), field::PSN, psn & U24_MASK);
    }

    /// The bytes after the BTH, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// A parsed BTH.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// The opcode: transport and operation.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited: bool,
    /// Migration request.
    pub mig_req: bool,
    /// Pad bytes after the payload, 0–3. In a whole frame it must equal
    /// `(4 - payload_len % 4) % 4`.
    pub pad_count: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward ECN.
    pub fecn: bool,
    /// Backward ECN.
    pub becn: bool,
    /// Destination QP, 24 bits.
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Packet sequence number, 24 bits.
    pub psn: u32,
}

impl Repr {
    /// Read a BTH: the opcode must be defined and the transport version 0.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let opcode = Opcode::from_u8(packet.opcode())?;
        if packet.transport_version() != 0 {
            return Err(Error::Unsupported(
                "BTH transport header version other than 0",
            ));
        }
        Ok(Repr {
            opcode,
            solicited: packet.solicited_event(),
            mig_req: packet.mig_req(),
            pad_count: packet.pad_count(),
            pkey: packet.pkey(),
            fecn: packet.fecn(),
            becn: packet.becn(),
            dest_qp: packet.dest_qp(),
            ack_req: packet.ack_req(),
            psn: packet.psn(),
        })
    }

    /// Always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: [`HEADER_LEN`].
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Write the BTH into the first [`HEADER_LEN`] bytes, reserved bits zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        let data = packet.buffer.as_mut();
        // Bytes holding flags plus reserved bits are cleared first so no stale bit survives.
        data[field::FLAGS] = 0;
        data[field::FECN_BECN] = 0;
        data[field::ACK_REQ] = 0;
        packet.set_opcode(self.opcode.as_u8());
        packet.set_solicited_event(self.solicited);
        packet.set_mig_req(self.mig_req);
        packet.set_pad_count(self.pad_count & 0x3);
        packet.set_transport_version(0);
        packet.set_pkey(self.pkey);
        packet.set_fecn(self.fecn);
        packet.set_becn(self.becn);
        packet.set_dest_qp(self.dest_qp);
        packet.set_ack_req(self.ack_req);
        packet.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ib::Operation;
    use crate::strategies::bth_repr;
    use proptest::prelude::*;

    // The BTH of the SEND_ONLY ICRC test vector: P_Key 0xffff, QP 0x11, AckReq, PSN 100.
    static SEND_ONLY_BYTES: [u8; 12] = [
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x64,
    ];
    // RDMA_WRITE_FIRST, SE, MigReq, pad 2, P_Key 0x8001, BECN, QP 0x123456, AckReq,
    // PSN 0xabcdef.
    static FLAGS_BYTES: [u8; 12] = [
        0x06, 0xe0, 0x80, 0x01, 0x40, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
    ];

    fn send_only() -> Repr {
        Repr {
            opcode: Opcode::rc(Operation::SendOnly),
            solicited: false,
            mig_req: false,
            pad_count: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: true,
            psn: 100,
        }
    }

    fn flags() -> Repr {
        Repr {
            opcode: Opcode::rc(Operation::RdmaWriteFirst),
            solicited: true,
            mig_req: true,
            pad_count: 2,
            pkey: 0x8001,
            fecn: false,
            becn: true,
            dest_qp: 0x12_3456,
            ack_req: true,
            psn: 0xab_cdef,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&FLAGS_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), 0x06);
        assert!(p.solicited_event());
        assert!(p.mig_req());
        assert_eq!(p.pad_count(), 2);
        assert_eq!(p.transport_version(), 0);
        assert_eq!(p.pkey(), 0x8001);
        assert!(!p.fecn());
        assert!(p.becn());
        assert_eq!(p.dest_qp(), 0x12_3456);
        assert!(p.ack_req());
        assert_eq!(p.psn(), 0xab_cdef);
        assert!(p.payload().is_empty());
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 12];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_opcode(0x06);
        p.set_solicited_event(true);
        p.set_mig_req(true);
        p.set_pad_count(2);
        p.set_transport_version(0);
        p.set_pkey(0x8001);
        p.set_fecn(false);
        p.set_becn(true);
        p.set_dest_qp(0x12_3456);
        p.set_ack_req(true);
        p.set_psn(0xab_cdef);
        // The setters leave reserved bits alone; clear them as the wire format requires.
        bytes[4] &= 0xc0;
        bytes[8] &= 0x80;
        assert_eq!(bytes, FLAGS_BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&SEND_ONLY_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), send_only());
        let p = Packet::new_checked(&FLAGS_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), flags());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 12];
        send_only().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, SEND_ONLY_BYTES);
        let mut bytes = vec![0xa5; 12];
        flags().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, FLAGS_BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&SEND_ONLY_BYTES[..11]),
            Err(Error::Truncated("BTH"))
        );
    }

    #[test]
    fn test_unknown_opcode_and_version() {
        let mut bytes = SEND_ONLY_BYTES;
        bytes[0] = 0x15;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&p), Err(Error::UnknownOpcode(0x15)));
        let mut bytes = SEND_ONLY_BYTES;
        bytes[1] = 0x01;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert!(matches!(Repr::parse(&p), Err(Error::Unsupported(_))));
    }

    proptest! {
        #[test]
        fn round_trip(r in bth_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
