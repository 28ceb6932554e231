//! The IEEE 802.1Q VLAN tag.
//!
//! Follows IEEE 802.1Q-2018 §9.6: after the two address fields a tagged frame carries the TPID
//! `0x8100` (where an untagged frame has its EtherType), then the 16-bit tag control
//! information (TCI) and then the EtherType of the payload. The TCI holds the priority code
//! point (PCP, 3 bits), the drop eligible indicator (DEI, 1 bit) and the VLAN identifier
//! (VID, 12 bits).
//!
//! In a RoCE fabric the PCP is what PFC pauses: a switch maps it to one of eight traffic
//! classes. A [`Packet`] here views the four bytes *after* the TPID (TCI + EtherType); the TPID
//! itself is the EtherType field of the [`ethernet`](crate::ethernet) header.
//!
//! Simplifications: one tag only (no 802.1ad Q-in-Q); VID 0 ("priority tagged") and 0xfff are
//! carried like any other value.

use units::Priority;

use crate::{Error, EtherType, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const TCI: Field = 0..2;
    pub const ETHERTYPE: Field = 2..4;
    pub const PAYLOAD: crate::Rest = 4..;
}

/// Length of the tag after the TPID: TCI and encapsulated EtherType.
pub const HEADER_LEN: usize = field::ETHERTYPE.end;
/// The largest VLAN identifier (12 bits).
pub const VID_MAX: u16 = 0x0fff;

pub(crate) const PCP_SHIFT: u16 = 13;
pub(crate) const DEI_BIT: u16 = 0x1000;

/// A read (and, for mutable buffers, write) view of a VLAN tag: TCI then EtherType.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking its length; getters panic if it is shorter than
    /// [`HEADER_LEN`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole tag.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("802.1Q tag"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The priority code point, 0–7.
    pub fn pcp(&self) -> Priority {
        let tci = be::u16_at(self.buffer.as_ref(), field::TCI);
        // Three bits after the shift, so the value is always 0..=7 and `of` cannot panic.
        Priority::of((tci >> PCP_SHIFT) as u8)
    }

    /// The drop eligible indicator (formerly CFI).
    pub fn dei(&self) -> bool {
        be::u16_at(self.buffer.as_ref(), field::TCI) & DEI_BIT != 0
    }

    /// The VLAN identifier, 0–4095.
    pub fn vid(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::TCI) & VID_MAX
    }

    /// The EtherType of the payload that follows the tag.
    pub fn ethertype(&self) -> EtherType {
        EtherType(be::u16_at(self.buffer.as_ref(), field::ETHERTYPE))
    }

    /// The bytes after the tag.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the priority code point.
    pub fn set_pcp(&mut self, pcp: Priority) {
        let data = self.buffer.as_mut();
        let tci = be::u16_at(data, field::TCI) & !(0x7 << PCP_SHIFT);
        be::set_u16(data, field::TCI, tci | (u16::from(pcp.get()) << PCP_SHIFT));
    }

    /// Set the drop eligible indicator.
    pub fn set_dei(&mut self, dei: bool) {
        let data = self.buffer.as_mut();
        let tci = be::u16_at(data, field::TCI) & !DEI_BIT;
        be::set_u16(data, field::TCI, if dei { tci | DEI_BIT } else { tci });
    }

    /// Set the VLAN identifier; bits above the low 12 are dropped.
    pub fn set_vid(&mut self, vid: u16) {
        debug_assert!(vid <= VID_MAX, "VID {vid} does not fit in 12 bits");
        let data = self.buffer.as_mut();
        let tci = be::u16_at(data, field::TCI) & !VID_MAX;
        be::set_u16(data, field::TCI, tci | (vid & VID_MAX));
    }

    /// Set the EtherType of the payload.
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        be::set_u16(self.buffer.as_mut(), field::ETHERTYPE, ethertype.0);
    }

    /// The bytes after the tag, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// The contents of a tag's TCI: what a switch reads to classify and pause a frame.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Tag {
    /// Priority code point: the 802.1p priority PFC acts on.
    pub pcp: Priority,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0–4095.
    pub vid: u16,
}

/// A parsed VLAN tag: the TCI and the EtherType of what follows.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// The tag control information.
    pub tag: Tag,
    /// The EtherType of the payload after the tag.
    pub ethertype: EtherType,
}

impl Repr {
    /// Read a tag. Every bit pattern is a valid tag, so this fails only on a short buffer.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            tag: Tag {
                pcp: packet.pcp(),
                dei: packet.dei(),
                vid: packet.vid(),
            },
            ethertype: packet.ethertype(),
        })
    }

    /// The length of the tag after the TPID: always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: the same as [`header_len`](Self::header_len).
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Write the tag into the first [`HEADER_LEN`] bytes of `packet`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        // Write the whole TCI at once so no stale bit survives from the buffer.
        be::set_u16(packet.buffer.as_mut(), field::TCI, 0);
        packet.set_pcp(self.tag.pcp);
        packet.set_dei(self.tag.dei);
        packet.set_vid(self.tag.vid);
        packet.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::vlan_repr;
    use proptest::prelude::*;

    // PCP 3, DEI 1, VID 100 (0x064): TCI = 011 1 0000 0110 0100 = 0x7064; then IPv4.
    static TAG_BYTES: [u8; 6] = [0x70, 0x64, 0x08, 0x00, 0xaa, 0xbb];

    fn repr() -> Repr {
        Repr {
            tag: Tag {
                pcp: Priority::of(3),
                dei: true,
                vid: 100,
            },
            ethertype: EtherType::IPV4,
        }
    }

    #[test]
    fn test_deconstruct() {
        let packet = Packet::new_checked(&TAG_BYTES[..]).unwrap();
        assert_eq!(packet.pcp(), Priority::of(3));
        assert!(packet.dei());
        assert_eq!(packet.vid(), 100);
        assert_eq!(packet.ethertype(), EtherType::IPV4);
        assert_eq!(packet.payload(), &[0xaa, 0xbb]);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 6];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_pcp(Priority::of(3));
        packet.set_dei(true);
        packet.set_vid(100);
        packet.set_ethertype(EtherType::IPV4);
        packet.payload_mut().copy_from_slice(&[0xaa, 0xbb]);
        assert_eq!(bytes, TAG_BYTES);
    }

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&TAG_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, TAG_BYTES[..4]);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&TAG_BYTES[..3]),
            Err(Error::Truncated("802.1Q tag"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(r in vlan_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..8)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
