//! The atomic acknowledge extended transport header (AtomicAckETH), 8 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: the original remote value (u64,
//! big-endian) that a COMPARE_SWAP or FETCH_ADD read before changing it. It follows the AETH
//! in an ATOMIC_ACKNOWLEDGE, and the requester writes it into its local 8-byte buffer.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const ORIG_REMOTE_DATA: Field = 0..8;
}

/// Length of the AtomicAckETH.
pub const HEADER_LEN: usize = field::ORIG_REMOTE_DATA.end;

/// A read (and, for mutable buffers, write) view of an AtomicAckETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole AtomicAckETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("AtomicAckETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The value the remote 8 bytes held before the atomic operation.
    pub fn orig_remote_data(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::ORIG_REMOTE_DATA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the original remote value.
    pub fn set_orig_remote_data(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::ORIG_REMOTE_DATA, v);
    }
}

/// A parsed AtomicAckETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// The remote value before the atomic operation.
    pub orig_remote_data: u64,
}

impl Repr {
    /// Read an AtomicAckETH; every bit pattern is valid.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            orig_remote_data: packet.orig_remote_data(),
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

    /// Write the AtomicAckETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_orig_remote_data(self.orig_remote_data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static BYTES: [u8; 8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];

    fn repr() -> Repr {
        Repr {
            orig_remote_data: 0x0123_4567_89ab_cdef,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.orig_remote_data(), 0x0123_4567_89ab_cdef);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 8];
        Packet::new_unchecked(&mut bytes).set_orig_remote_data(0x0123_4567_89ab_cdef);
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
            Err(Error::Truncated("AtomicAckETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(v in any::<u64>()) {
            let r = Repr { orig_remote_data: v };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
