//! The FLUSH extended transport header (FETH), 4 bytes.
//!
//! Follows the IBTA FLUSH annex as Linux rxe encodes it (`rxe_hdr.h` `feth_init`): a
//! big-endian 32-bit word whose bits 3:0 are the placement type (bit 0 global visibility,
//! bit 1 persistence) and bits 5:4 the selectivity level (0 = the memory range of the RETH,
//! 1 = the whole memory region); the other bits are reserved. It precedes the RETH in a FLUSH.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const BITS: Field = 0..4;
}

/// Length of the FETH.
pub const HEADER_LEN: usize = field::BITS.end;

pub(crate) const PLT_MASK: u32 = 0x0000_000f;
pub(crate) const SEL_MASK: u32 = 0x0000_0030;
const SEL_SHIFT: u32 = 4;

/// A read (and, for mutable buffers, write) view of a FETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole FETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("FETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The placement type (4 bits).
    pub fn placement_type(&self) -> u8 {
        (be::u32_at(self.buffer.as_ref(), field::BITS) & PLT_MASK) as u8
    }

    /// The selectivity level (2 bits).
    pub fn selectivity_level(&self) -> u8 {
        ((be::u32_at(self.buffer.as_ref(), field::BITS) & SEL_MASK) >> SEL_SHIFT) as u8
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write both fields at once; reserved bits become zero.
    pub fn set_fields(&mut self, selectivity_level: u8, placement_type: u8) {
        debug_assert!(selectivity_level <= 3 && placement_type <= 0xf);
        let v = ((u32::from(selectivity_level) << SEL_SHIFT) & SEL_MASK)
            | (u32::from(placement_type) & PLT_MASK);
        be::set_u32(self.buffer.as_mut(), field::BITS, v);
    }
}

/// A parsed FETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Selectivity level, 0–3.
    pub selectivity_level: u8,
    /// Placement type bits, 0–15.
    pub placement_type: u8,
}

impl Repr {
    /// Read a FETH; reserved bits are ignored.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            selectivity_level: packet.selectivity_level(),
            placement_type: packet.placement_type(),
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

    /// Write the FETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_fields(self.selectivity_level, self.placement_type);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Selectivity level 1 (whole MR), placement type 2 (persistence).
    static BYTES: [u8; 4] = [0x00, 0x00, 0x00, 0x12];

    fn repr() -> Repr {
        Repr {
            selectivity_level: 1,
            placement_type: 2,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.selectivity_level(), 1);
        assert_eq!(p.placement_type(), 2);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 4];
        Packet::new_unchecked(&mut bytes).set_fields(1, 2);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..3]),
            Err(Error::Truncated("FETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(sel in 0u8..4, plt in 0u8..16) {
            let r = Repr { selectivity_level: sel, placement_type: plt };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
