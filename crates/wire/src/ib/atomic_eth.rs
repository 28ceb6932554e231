//! The atomic extended transport header (AtomicETH), 28 bytes.
//!
//! Follows IBTA Vol. 1 §9.3 and `verbs-spec.md` §6: virtual address (u64), R_Key (u32),
//! swap-or-add data (u64) and compare data (u64), big-endian. A COMPARE_SWAP writes `swap_add`
//! if the 8 bytes at `va` equal `compare`; a FETCH_ADD adds `swap_add` and ignores `compare`.
//! Either way the original value comes back in the AtomicAckETH. `va` must be 8-byte aligned;
//! that is the responder's check, not the wire format's.

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const VA: Field = 0..8;
    pub const RKEY: Field = 8..12;
    pub const SWAP_ADD: Field = 12..20;
    pub const COMPARE: Field = 20..28;
}

/// Length of the AtomicETH.
pub const HEADER_LEN: usize = field::COMPARE.end;

/// A read (and, for mutable buffers, write) view of an AtomicETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole AtomicETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("AtomicETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The remote virtual address of the 8-byte operand.
    pub fn va(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::VA)
    }

    /// The remote key.
    pub fn rkey(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::RKEY)
    }

    /// The value to swap in (COMPARE_SWAP) or to add (FETCH_ADD).
    pub fn swap_add(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::SWAP_ADD)
    }

    /// The value to compare with (COMPARE_SWAP only).
    pub fn compare(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::COMPARE)
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

    /// Set the swap or add value.
    pub fn set_swap_add(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::SWAP_ADD, v);
    }

    /// Set the compare value.
    pub fn set_compare(&mut self, v: u64) {
        be::set_u64(self.buffer.as_mut(), field::COMPARE, v);
    }
}

/// A parsed AtomicETH.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Remote virtual address (8-byte aligned).
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Swap value (COMPARE_SWAP) or addend (FETCH_ADD).
    pub swap_add: u64,
    /// Compare value (COMPARE_SWAP; zero for FETCH_ADD).
    pub compare: u64,
}

impl Repr {
    /// Read an AtomicETH; every bit pattern is valid.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            va: packet.va(),
            rkey: packet.rkey(),
            swap_add: packet.swap_add(),
            compare: packet.compare(),
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

    /// Write the AtomicETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_va(self.va);
        packet.set_rkey(self.rkey);
        packet.set_swap_add(self.swap_add);
        packet.set_compare(self.compare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::atomic_eth_repr;
    use proptest::prelude::*;

    // FETCH_ADD of 5 at VA 0x1000 with R_Key 0xabcd (compare unused, zero).
    static BYTES: [u8; 28] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, // VA
        0x00, 0x00, 0xab, 0xcd, // R_Key
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, // add
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // compare
    ];

    fn repr() -> Repr {
        Repr {
            va: 0x1000,
            rkey: 0xabcd,
            swap_add: 5,
            compare: 0,
        }
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(p.va(), 0x1000);
        assert_eq!(p.rkey(), 0xabcd);
        assert_eq!(p.swap_add(), 5);
        assert_eq!(p.compare(), 0);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 28];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_va(0x1000);
        p.set_rkey(0xabcd);
        p.set_swap_add(5);
        p.set_compare(0);
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_parse() {
        let p = Packet::new_checked(&BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 28];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&BYTES[..27]),
            Err(Error::Truncated("AtomicETH"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(r in atomic_eth_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
