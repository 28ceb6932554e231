//! The reliable datagram extended transport header (RDETH), 4 bytes.
//!
//! Follows IBTA Vol. 1 §9.3: a reserved byte and the end-to-end context (EE-context, 24
//! bits) that an RD packet travels on. It comes right after the BTH on every RD packet. RD is
//! in the specification and in Linux `ib_pack.h` but no RoCE NIC implements it; it is here so
//! that every defined opcode can be parsed.

use super::U24_MASK;
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const RESERVED: usize = 0;
    pub const EE_CONTEXT: Field = 1..4;
}

/// Length of the RDETH.
pub const HEADER_LEN: usize = field::EE_CONTEXT.end;

/// A read (and, for mutable buffers, write) view of an RDETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole RDETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("RDETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The end-to-end context (24 bits).
    pub fn ee_context(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::EE_CONTEXT)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the end-to-end context (24 bits) and clear the reserved byte.
    pub fn set_ee_context(&mut self, ee: u32) {
        debug_assert!(ee <= U24_MASK, "EE context {ee:#x} does not fit in 24 bits");
        let data = self.buffer.as_mut();
        data[field::RESERVED] = 0;
        be::set_u24(data, field::EE_CONTEXT, ee & U24_MASK);
    }
}

/// A parsed RDETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// End-to-end context, 24 bits.
    pub ee_context: u32,
}

impl Repr {
    /// Read an RDETH; the reserved byte is ignored.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            ee_context: packet.ee_context(),
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

    /// Write the RDETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_ee_context(self.ee_context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static BYTES: [u8; 4] = [0x00, 0x00, 0xab, 0xcd];

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.ee_context(), 0xabcd);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 4];
        Packet::new_unchecked(&mut bytes).set_ee_context(0xabcd);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr { ee_context: 0xabcd });
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        Repr { ee_context: 0xabcd }.emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..3]),
            Err(Error::Truncated("RDETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(ee in 0..=U24_MASK) {
            let r = Repr { ee_context: ee };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
