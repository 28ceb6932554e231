//! The invalidate extended transport header (IETH), 4 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: one
//! big-endian u32, carried by SEND_LAST_WITH_INVALIDATE and SEND_ONLY_WITH_INVALIDATE. After
//! the SEND the responder invalidates the memory region or window this R_Key names, so the
//! requester's access to it ends.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const RKEY: Field = 0..4;
}

/// Length of the IETH.
pub const HEADER_LEN: usize = field::RKEY.end;

/// A read (and, for mutable buffers, write) view of an IETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole IETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("IETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The R_Key the responder invalidates once the SEND completes.
    pub fn rkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::RKEY)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the value.
    pub fn set_rkey(&mut self, v: u32) {
        be::set_u32(self.buffer.as_mut(), field::RKEY, v);
    }
}

/// A parsed IETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// The R_Key the responder invalidates once the SEND completes.
    pub rkey: u32,
}

impl Repr {
    /// Read an IETH; every bit pattern is valid.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            rkey: packet.rkey(),
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

    /// Write the IETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_rkey(self.rkey);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static BYTES: [u8; 4] = [0x00, 0xc0, 0xff, 0xee];

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.rkey(), 0x00c0ffee);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 4];
        Packet::new_unchecked(&mut bytes).set_rkey(0x00c0ffee);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), Repr { rkey: 0x00c0ffee });
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        Repr { rkey: 0x00c0ffee }.emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..3]),
            Err(Error::Truncated("IETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(v in any::<u32>()) {
            let r = Repr { rkey: v };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
