//! The RoCEv2 congestion notification packet (CNP) body: a BTH with opcode `0x81` and 16
//! reserved bytes.
//!
//! Follows the IBTA RoCEv2 annex (A17, "congestion notification packet") as summarised in
//! `verbs-spec.md` §6. When a receiver gets a packet marked ECN CE it sends a CNP to the
//! sender's QP (DCQCN's "notification point"); the sender cuts its rate. The destination QP is
//! the flow's source QP; BECN is set, as NICs do, because the notification travels backwards.
//!
//! Simplification: the BTH fields a CNP does not use (SE, MigReq, pad count, AckReq, PSN) are
//! emitted as zero and ignored when parsed; the 16 reserved bytes are emitted as zero and not
//! checked.

use super::{Opcode, bth};
use crate::{Error, Result};

pub(crate) mod field {
    use crate::Field;
    pub const BTH: Field = 0..12;
    pub const RESERVED: Field = 12..28;
}

/// Length of the reserved bytes after the BTH.
pub const RESERVED_LEN: usize = field::RESERVED.end - field::RESERVED.start;
/// Length of a CNP's BTH plus reserved bytes (the ICRC follows).
pub const HEADER_LEN: usize = field::RESERVED.end;

/// A read view of a CNP: BTH then reserved bytes.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds BTH and reserved bytes.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("CNP"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// A view of the BTH.
    pub fn bth(&self) -> bth::Packet<&[u8]> {
        bth::Packet::new_unchecked(&self.buffer.as_ref()[field::BTH])
    }

    /// The 16 reserved bytes.
    pub fn reserved(&self) -> &[u8] {
        &self.buffer.as_ref()[field::RESERVED]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// A writable view of the BTH.
    pub fn bth_mut(&mut self) -> bth::Packet<&mut [u8]> {
        bth::Packet::new_unchecked(&mut self.buffer.as_mut()[field::BTH])
    }

    /// The reserved bytes, writable.
    pub fn reserved_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::RESERVED]
    }
}

/// A parsed CNP: the BTH fields that mean something in a congestion notification.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Partition key.
    pub pkey: u16,
    /// The QP being told to slow down (the source QP of the marked flow), 24 bits.
    pub dest_qp: u32,
    /// FECN bit.
    pub fecn: bool,
    /// BECN bit (set by NICs in every CNP).
    pub becn: bool,
}

impl Repr {
    /// A CNP for `dest_qp` as NICs send it: default P_Key, BECN set.
    pub const fn new(dest_qp: u32) -> Repr {
        Repr {
            pkey: super::DEFAULT_PKEY,
            dest_qp,
            fecn: false,
            becn: true,
        }
    }

    /// Read a CNP; the opcode must be `0x81`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let bth = bth::Repr::parse(&packet.bth())?;
        if !bth.opcode.is_cnp() {
            return Err(Error::Malformed("CNP with an opcode other than 0x81"));
        }
        Ok(Repr {
            pkey: bth.pkey,
            dest_qp: bth.dest_qp,
            fecn: bth.fecn,
            becn: bth.becn,
        })
    }

    /// The BTH this CNP is sent with.
    pub const fn bth(&self) -> bth::Repr {
        bth::Repr {
            opcode: Opcode::CNP,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            pkey: self.pkey,
            fecn: self.fecn,
            becn: self.becn,
            dest_qp: self.dest_qp,
            ack_req: false,
            psn: 0,
        }
    }

    /// Always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: [`HEADER_LEN`].
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Write BTH and zeroed reserved bytes into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        self.bth().emit(&mut packet.bth_mut());
        packet.reserved_mut().fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // CNP to QP 0x11, P_Key 0xffff, BECN; 16 reserved zero bytes.
    static BYTES: [u8; 28] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, // BTH
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
    ];

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.bth().opcode(), 0x81);
        assert_eq!(p.bth().dest_qp(), 0x11);
        assert!(p.bth().becn());
        assert!(!p.bth().fecn());
        assert_eq!(p.reserved(), &[0; 16]);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 28];
        let mut p = Packet::new_unchecked(&mut bytes);
        Repr::new(0x11).bth().emit(&mut p.bth_mut());
        p.reserved_mut().fill(0);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr::new(0x11));
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 28];
        Repr::new(0x11).emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated_and_wrong_opcode() {
        assert_eq!(
            Packet::new_checked(&BYTES[..27]),
            Err(Error::Truncated("CNP"))
        );
        let mut bytes = BYTES;
        bytes[0] = 0x04;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert!(matches!(Repr::parse(&p), Err(Error::Malformed(_))));
    }

    proptest! {
        #[test]
        fn round_trip(pkey in any::<u16>(), qp in 0..=super::super::U24_MASK,
                      fecn in any::<bool>(), becn in any::<bool>()) {
            let r = Repr { pkey, dest_qp: qp, fecn, becn };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
