//! Ethernet II framing, MAC addresses and the frame-size constants a link model needs.
//!
//! Follows IEEE 802.3-2018 §3.2 with the Length/Type field read as an EtherType (values of
//! 0x0600 and above). An optional IEEE 802.1Q tag sits between the source address and the
//! EtherType of the payload; [`Repr`] carries it as `Option<vlan::Tag>` so that one parse gives
//! the payload's real EtherType whether or not the frame is tagged.
//!
//! Bytes here never include the preamble, the start-of-frame delimiter or the FCS: a pcap file
//! holds frames without them, and the simulator accounts for them with [`on_wire_len`].
//! IEEE 802.3 length-encoded (LLC) frames are not modelled and parse as
//! [`Error::Unsupported`].

use core::fmt;

use crate::vlan;
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::{Field, Rest};
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: Rest = 14..;
}

/// Length of an untagged Ethernet II header.
pub const HEADER_LEN: usize = field::PAYLOAD.start;
/// The shortest frame a MAC sends, without the FCS; shorter frames are padded with zeros.
pub const MIN_FRAME_LEN: usize = 60;
/// Frame check sequence (CRC-32) length. Not part of the bytes this crate emits.
pub const FCS_LEN: usize = 4;
/// Preamble and start-of-frame delimiter, sent before every frame.
pub const PREAMBLE_LEN: usize = 8;
/// The minimum inter-frame gap, expressed in byte times.
pub const IFG_LEN: usize = 12;

/// The bytes of link time a frame of `frame_len` bytes (as emitted by this crate, without
/// FCS) occupies: padding to [`MIN_FRAME_LEN`], FCS, preamble and the inter-frame gap. A
/// 60-byte frame costs 84 byte times, which is why small packets cannot reach line rate.
pub const fn on_wire_len(frame_len: usize) -> usize {
    let padded = if frame_len < MIN_FRAME_LEN {
        MIN_FRAME_LEN
    } else {
        frame_len
    };
    padded + FCS_LEN + PREAMBLE_LEN + IFG_LEN
}

/// A 48-bit IEEE MAC address; displays as `aa:bb:cc:dd:ee:ff`.
#[derive(Clone, Copy, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    /// The broadcast address `ff:ff:ff:ff:ff:ff`.
    pub const BROADCAST: EthernetAddress = EthernetAddress([0xff; 6]);

    /// The address whose bytes are `bytes`, or `None` if `bytes` is not six bytes long.
    pub fn from_bytes(bytes: &[u8]) -> Option<EthernetAddress> {
        <[u8; 6]>::try_from(bytes).ok().map(EthernetAddress)
    }

    /// The six bytes, first transmitted first.
    pub const fn as_bytes(&self) -> &[u8; 6] {
        &self.0
    }

    /// Whether the group bit (least significant bit of the first byte) is set.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    /// Whether this is the broadcast address.
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }
}

impl fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl fmt::Debug for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EthernetAddress({self})")
    }
}

/// The 16-bit type of an Ethernet payload. Kept open (a newtype, not an enum) so that any
/// value can be carried; the constants name the ones rdmalab uses.
#[derive(Clone, Copy, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct EtherType(pub u16);

impl EtherType {
    /// Internet Protocol version 4.
    pub const IPV4: EtherType = EtherType(0x0800);
    /// Internet Protocol version 6 (recognised by value only; not parsed).
    pub const IPV6: EtherType = EtherType(0x86dd);
    /// An IEEE 802.1Q tag follows (the TPID).
    pub const VLAN: EtherType = EtherType(0x8100);
    /// IEEE 802.3 MAC control: PAUSE and PFC frames.
    pub const MAC_CONTROL: EtherType = EtherType(0x8808);
    /// Values below this are IEEE 802.3 lengths, not types.
    pub const MIN_TYPE: u16 = 0x0600;
}

impl fmt::Display for EtherType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#06x}", self.0)
    }
}

impl fmt::Debug for EtherType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            Self::IPV4 => "IPv4",
            Self::IPV6 => "IPv6",
            Self::VLAN => "VLAN",
            Self::MAC_CONTROL => "MAC control",
            _ => return write!(f, "EtherType({:#06x})", self.0),
        };
        write!(f, "EtherType({name})")
    }
}

/// A read (and, for mutable buffers, write) view of an Ethernet II header and what follows.
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

    /// Wrap `buffer` after checking that it holds a whole untagged header.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("Ethernet header"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The destination address.
    pub fn dst_addr(&self) -> EthernetAddress {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DESTINATION]);
        EthernetAddress(a)
    }

    /// The source address.
    pub fn src_addr(&self) -> EthernetAddress {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SOURCE]);
        EthernetAddress(a)
    }

    /// The EtherType field: [`EtherType::VLAN`] when a tag follows.
    pub fn ethertype(&self) -> EtherType {
        EtherType(be::u16_at(self.buffer.as_ref(), field::ETHERTYPE))
    }

    /// The bytes after the EtherType field (the VLAN tag, if there is one, comes first).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the destination address.
    pub fn set_dst_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&addr.0);
    }

    /// Set the source address.
    pub fn set_src_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&addr.0);
    }

    /// Set the EtherType field.
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        be::set_u16(self.buffer.as_mut(), field::ETHERTYPE, ethertype.0);
    }

    /// The bytes after the EtherType field, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

/// A parsed Ethernet II header, with its 802.1Q tag if it has one.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Destination address.
    pub dst_addr: EthernetAddress,
    /// Source address.
    pub src_addr: EthernetAddress,
    /// The 802.1Q tag, if the frame is tagged.
    pub vlan: Option<vlan::Tag>,
    /// The EtherType of the payload (after the tag, if any); never [`EtherType::VLAN`] for a
    /// single-tagged frame.
    pub ethertype: EtherType,
}

impl Repr {
    /// Read the header and, if the EtherType is [`EtherType::VLAN`], the tag after it.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let outer = packet.ethertype();
        let (vlan, ethertype) = if outer == EtherType::VLAN {
            let tag = vlan::Repr::parse(&vlan::Packet::new_checked(packet.payload())?)?;
            (Some(tag.tag), tag.ethertype)
        } else {
            (None, outer)
        };
        if ethertype.0 < EtherType::MIN_TYPE {
            return Err(Error::Unsupported(
                "IEEE 802.3 length field (not Ethernet II)",
            ));
        }
        Ok(Repr {
            dst_addr: packet.dst_addr(),
            src_addr: packet.src_addr(),
            vlan,
            ethertype,
        })
    }

    /// Header length: 14 bytes, or 18 with a VLAN tag.
    pub const fn header_len(&self) -> usize {
        match self.vlan {
            Some(_) => HEADER_LEN + vlan::HEADER_LEN,
            None => HEADER_LEN,
        }
    }

    /// The bytes [`emit`](Self::emit) writes: the same as [`header_len`](Self::header_len).
    pub const fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Write the header (and tag) into the first [`header_len`](Self::header_len) bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_dst_addr(self.dst_addr);
        packet.set_src_addr(self.src_addr);
        match self.vlan {
            Some(tag) => {
                packet.set_ethertype(EtherType::VLAN);
                let repr = vlan::Repr {
                    tag,
                    ethertype: self.ethertype,
                };
                repr.emit(&mut vlan::Packet::new_unchecked(packet.payload_mut()));
            }
            None => packet.set_ethertype(self.ethertype),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ethernet_repr;
    use proptest::prelude::*;
    use units::Priority;

    static UNTAGGED_BYTES: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // destination
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // source
        0x08, 0x00, // IPv4
        0x45, 0x00, 0x00, 0x14, // payload (start of an IPv4 header)
    ];

    static TAGGED_BYTES: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // destination
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // source
        0x81, 0x00, // TPID
        0x60, 0x0a, // PCP 3, DEI 0, VID 10
        0x08, 0x00, // IPv4
    ];

    const DST: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x02]);
    const SRC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);

    fn untagged() -> Repr {
        Repr {
            dst_addr: DST,
            src_addr: SRC,
            vlan: None,
            ethertype: EtherType::IPV4,
        }
    }

    fn tagged() -> Repr {
        Repr {
            vlan: Some(vlan::Tag {
                pcp: Priority::of(3),
                dei: false,
                vid: 10,
            }),
            ..untagged()
        }
    }

    #[test]
    fn test_deconstruct() {
        let packet = Packet::new_checked(&UNTAGGED_BYTES[..]).unwrap();
        assert_eq!(packet.dst_addr(), DST);
        assert_eq!(packet.src_addr(), SRC);
        assert_eq!(packet.ethertype(), EtherType::IPV4);
        assert_eq!(packet.payload(), &[0x45, 0x00, 0x00, 0x14]);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 18];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_dst_addr(DST);
        packet.set_src_addr(SRC);
        packet.set_ethertype(EtherType::IPV4);
        packet
            .payload_mut()
            .copy_from_slice(&[0x45, 0x00, 0x00, 0x14]);
        assert_eq!(bytes, UNTAGGED_BYTES);
    }

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&UNTAGGED_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet).unwrap(), untagged());
        let packet = Packet::new_checked(&TAGGED_BYTES[..]).unwrap();
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(repr, tagged());
        assert_eq!(repr.header_len(), 18);
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 14];
        untagged().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, UNTAGGED_BYTES[..14]);
        let mut bytes = vec![0xa5; 18];
        tagged().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, TAGGED_BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&UNTAGGED_BYTES[..13]),
            Err(Error::Truncated("Ethernet header"))
        );
        // The outer header is whole but the tag is cut short.
        let packet = Packet::new_checked(&TAGGED_BYTES[..16]).unwrap();
        assert_eq!(Repr::parse(&packet), Err(Error::Truncated("802.1Q tag")));
    }

    #[test]
    fn test_length_field_is_unsupported() {
        let mut bytes = UNTAGGED_BYTES;
        bytes[12..14].copy_from_slice(&[0x00, 0x2e]);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert!(matches!(Repr::parse(&packet), Err(Error::Unsupported(_))));
    }

    #[test]
    fn test_display() {
        let a = EthernetAddress([0xaa, 0xbb, 0xcc, 0x0d, 0x0e, 0x0f]);
        assert_eq!(a.to_string(), "aa:bb:cc:0d:0e:0f");
        assert!(!a.is_multicast());
        assert!(EthernetAddress([0x01, 0x80, 0xc2, 0, 0, 1]).is_multicast());
        assert!(EthernetAddress::BROADCAST.is_broadcast());
        assert_eq!(EthernetAddress::from_bytes(&[1, 2, 3]), None);
        assert_eq!(EtherType::MAC_CONTROL.to_string(), "0x8808");
    }

    #[test]
    fn test_on_wire_len() {
        assert_eq!(on_wire_len(42), 84);
        assert_eq!(on_wire_len(60), 84);
        assert_eq!(on_wire_len(1514), 1538);
    }

    proptest! {
        #[test]
        fn round_trip(r in ethernet_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(Repr::parse(&packet), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
            if let Ok(p) = Packet::new_checked(&bytes[..])
                && let Ok(r) = Repr::parse(&p)
            {
                prop_assert!(r.header_len() <= bytes.len());
            }
        }
    }
}
