//! The datagram extended transport header (DETH), 8 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: Q_Key (u32), a reserved byte and the
//! source QP (24 bits). Every UD packet carries one (and every RD request): a datagram has no
//! connection, so the receiver learns the sender's QP from here and checks the Q_Key, dropping
//! the packet silently on a mismatch.

use super::U24_MASK;
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const QKEY: Field = 0..4;
    pub const RESERVED: usize = 4;
    pub const SRC_QP: Field = 5..8;
}

/// Length of the DETH.
pub const HEADER_LEN: usize = field::SRC_QP.end;

/// A read (and, for mutable buffers, write) view of a DETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole DETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("DETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The queue key the receiving QP must match.
    pub fn qkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::QKEY)
    }

    /// The sender's QP number (24 bits).
    pub fn src_qp(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::SRC_QP)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the queue key.
    pub fn set_qkey(&mut self, qkey: u32) {
        be::set_u32(self.buffer.as_mut(), field::QKEY, qkey);
    }

    /// Set the source QP (24 bits) and clear the reserved byte before it.
    pub fn set_src_qp(&mut self, qp: u32) {
        debug_assert!(qp <= U24_MASK, "QP {qp:#x} does not fit in 24 bits");
        let data = self.buffer.as_mut();
        data[field::RESERVED] = 0;
        be::set_u24(data, field::SRC_QP, qp & U24_MASK);
    }
}

/// A parsed DETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Queue key.
    pub qkey: u32,
    /// Source QP, 24 bits.
    pub src_qp: u32,
}

impl Repr {
    /// Read a DETH; the reserved byte is ignored.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            qkey: packet.qkey(),
            src_qp: packet.src_qp(),
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

    /// Write the DETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_qkey(self.qkey);
        packet.set_src_qp(self.src_qp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::deth_repr;
    use proptest::prelude::*;

    // Q_Key 0x11111111 (the pyverbs default), source QP 0x000022.
    static BYTES: [u8; 8] = [0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x22];

    fn repr() -> Repr {
        Repr {
            qkey: 0x1111_1111,
            src_qp: 0x22,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.qkey(), 0x1111_1111);
        assert_eq!(p.src_qp(), 0x22);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 8];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_qkey(0x1111_1111);
        p.set_src_qp(0x22);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 8];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..7]),
            Err(Error::Truncated("DETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(r in deth_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
