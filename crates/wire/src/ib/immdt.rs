//! The immediate data (ImmDt), 4 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: one
//! big-endian u32, carried by the SEND and RDMA WRITE opcodes named `*_WITH_IMMEDIATE`. An
//! RDMA WRITE with immediate consumes a receive WQE at the target, which is how the value
//! reaches the remote application.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const IMM: Field = 0..4;
}

/// Length of the ImmDt.
pub const HEADER_LEN: usize = field::IMM.end;

/// A read (and, for mutable buffers, write) view of an ImmDt.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole ImmDt.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("ImmDt"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The 32-bit immediate value; the receiver finds it in its work completion.
    pub fn imm(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::IMM)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the value.
    pub fn set_imm(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::IMM, v);
    }
}

/// A parsed ImmDt.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// The 32-bit immediate value; the receiver finds it in its work completion.
    pub imm: u32,
}

impl Repr {
    /// Read an ImmDt; every bit pattern is valid.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr { imm: packet.imm() })
    }

    /// Always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: [`HEADER_LEN`].
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Write the ImmDt into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_imm(self.imm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static BYTES: [u8; 4] = [0xde, 0xad, 0xbe, 0xef];

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.imm(), 0xdeadbeef);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 4];
        Packet::new_unchecked(&mut bytes).set_imm(0xdeadbeef);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr { imm: 0xdeadbeef });
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        Repr { imm: 0xdeadbeef }.emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..3]),
            Err(Error::Truncated("ImmDt"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(v in any::<u32>()) {
            let r = Repr { imm: v };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
