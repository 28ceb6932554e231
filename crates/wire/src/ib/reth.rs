//! The RDMA extended transport header (RETH), 16 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: virtual address (u64), R_Key (u32) and
//! DMA length (u32), all big-endian. It names the remote memory of an RDMA WRITE (first or
//! only packet), a READ request, a FLUSH and an ATOMIC WRITE. The DMA length is that of the
//! whole message, not of this packet.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const VA: Field = 0..8;
    pub const RKEY: Field = 8..12;
    pub const DMA_LEN: Field = 12..16;
}

/// Length of the RETH.
pub const HEADER_LEN: usize = field::DMA_LEN.end;

/// A read (and, for mutable buffers, write) view of a RETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole RETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("RETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The remote virtual address.
    pub fn va(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::VA)
    }

    /// The remote key of the memory region.
    pub fn rkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::RKEY)
    }

    /// The length of the whole transfer in bytes.
    pub fn dma_len(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::DMA_LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the remote virtual address.
    pub fn set_va(&mut self, va: u64) {
        be::set_u64(self.buffer.as_mut(), field::VA, va);
    }

    /// Set the remote key.
    pub fn set_rkey(&mut self, rkey: u32) {
        be::set_u32(self.buffer.as_mut(), field::RKEY, rkey);
    }

    /// Set the DMA length.
    pub fn set_dma_len(&mut self, len: u32) {
        be::set_u32(self.buffer.as_mut(), field::DMA_LEN, len);
    }
}

/// A parsed RETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Length of the whole transfer in bytes.
    pub dma_len: u32,
}

impl Repr {
    /// Read a RETH; every bit pattern is valid.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            va: packet.va(),
            rkey: packet.rkey(),
            dma_len: packet.dma_len(),
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

    /// Write the RETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_va(self.va);
        packet.set_rkey(self.rkey);
        packet.set_dma_len(self.dma_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::reth_repr;
    use proptest::prelude::*;

    // The RETH of the WRITE_ONLY ICRC test vector: VA 0x7f0000001000, R_Key 0x1234, 32 bytes.
    static BYTES: [u8; 16] = [
        0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00,
        0x20,
    ];

    fn repr() -> Repr {
        Repr {
            va: 0x7f00_0000_1000,
            rkey: 0x1234,
            dma_len: 32,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.va(), 0x7f00_0000_1000);
        assert_eq!(p.rkey(), 0x1234);
        assert_eq!(p.dma_len(), 32);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 16];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_va(0x7f00_0000_1000);
        p.set_rkey(0x1234);
        p.set_dma_len(32);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 16];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..15]),
            Err(Error::Truncated("RETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(r in reth_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
