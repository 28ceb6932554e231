//! The IPv4 header.
//!
//! Follows RFC 791 §3.1 for the layout, RFC 2474 for the DSCP (the upper six bits of the old
//! TOS byte) and RFC 3168 §5 for the two ECN bits below it. RoCEv2 marks congestion here: a
//! switch rewrites ECT(0)/ECT(1) to CE, and the receiving NIC answers with a CNP (DCQCN).
//!
//! Simplifications: options are accepted and skipped on parse (IHL above 5) but never
//! emitted ([`Repr::emit`] always writes IHL 5); fragments are described, not reassembled.

use core::fmt;

use crate::checksum;
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLAGS_FRAG: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// Length of a header without options (IHL 5).
pub const HEADER_LEN: usize = field::DST_ADDR.end;
/// Length of a header with the most options IHL can describe (IHL 15).
pub const MAX_HEADER_LEN: usize = 60;

pub(crate) const FLAG_DF: u16 = 0x4000;
pub(crate) const FLAG_MF: u16 = 0x2000;
pub(crate) const FRAG_OFFSET_MASK: u16 = 0x1fff;
/// The largest DSCP value (six bits).
pub const DSCP_MAX: u8 = 0x3f;

/// An IPv4 address; displays in dotted-quad form.
#[derive(Clone, Copy, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Ipv4Address(pub [u8; 4]);

impl Ipv4Address {
    /// The address `a.b.c.d`.
    pub const fn new(a: u8, b: u8, c: u8, d: u8) -> Ipv4Address {
        Ipv4Address([a, b, c, d])
    }

    /// The four bytes, most significant first.
    pub const fn as_bytes(&self) -> &[u8; 4] {
        &self.0
    }
}

impl fmt::Display for Ipv4Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.0;
        write!(f, "{a}.{b}.{c}.{d}")
    }
}

impl fmt::Debug for Ipv4Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ipv4Address({self})")
    }
}

/// The IP protocol number of the payload. Open, like [`EtherType`](crate::EtherType).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Protocol(pub u8);

impl Protocol {
    /// ICMP.
    pub const ICMP: Protocol = Protocol(1);
    /// TCP.
    pub const TCP: Protocol = Protocol(6);
    /// UDP (RoCEv2 rides on it).
    pub const UDP: Protocol = Protocol(17);
}

/// The ECN codepoint of RFC 3168 §5, in codepoint order.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub enum Ecn {
    /// `00`: the sender does not support ECN; a congested switch drops instead of marking.
    #[default]
    NotEct = 0,
    /// `01`: ECN-capable transport, codepoint 1 (L4S uses it).
    Ect1 = 1,
    /// `10`: ECN-capable transport, codepoint 0 (what RoCEv2 NICs send).
    Ect0 = 2,
    /// `11`: congestion experienced, set by a switch.
    Ce = 3,
}

impl Ecn {
    /// The codepoint held in the low two bits of `bits`.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0x3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two-bit codepoint.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// Whether a switch may mark this packet CE instead of dropping it.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// A read (and, for mutable buffers, write) view of an IPv4 header and its payload.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Check that the buffer holds the fixed header, that IHL and total length are coherent,
    /// and that the buffer holds `total_len` bytes. Bytes after `total_len` (Ethernet padding)
    /// are allowed and ignored. After this succeeds no getter panics.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated("IPv4 header"));
        }
        let header_len = self.header_len();
        if header_len < HEADER_LEN {
            return Err(Error::Malformed("IPv4 IHL below 5"));
        }
        if usize::from(self.total_len()) < header_len {
            return Err(Error::Malformed(
                "IPv4 total length shorter than its header",
            ));
        }
        if len < header_len {
            return Err(Error::Truncated("IPv4 options"));
        }
        if len < usize::from(self.total_len()) {
            return Err(Error::Truncated("IPv4 payload"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The version field (4 for IPv4).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// The header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// The differentiated services codepoint (upper six bits of the old TOS byte).
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }

    /// The ECN codepoint (low two bits of the old TOS byte).
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.buffer.as_ref()[field::DSCP_ECN])
    }

    /// The total length: header plus payload, in bytes.
    pub fn total_len(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// The identification field.
    pub fn ident(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::IDENT)
    }

    /// The don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        be::u16_at(self.buffer.as_ref(), field::FLAGS_FRAG) & FLAG_DF != 0
    }

    /// The more-fragments flag.
    pub fn more_frags(&self) -> bool {
        be::u16_at(self.buffer.as_ref(), field::FLAGS_FRAG) & FLAG_MF != 0
    }

    /// The fragment offset, in units of 8 bytes.
    pub fn frag_offset(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::FLAGS_FRAG) & FRAG_OFFSET_MASK
    }

    /// Time to live (hop limit).
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// The payload's protocol number.
    pub fn protocol(&self) -> Protocol {
        Protocol(self.buffer.as_ref()[field::PROTOCOL])
    }

    /// The header checksum field.
    pub fn checksum(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The source address.
    pub fn src_addr(&self) -> Ipv4Address {
        let b = &self.buffer.as_ref()[field::SRC_ADDR];
        Ipv4Address([b[0], b[1], b[2], b[3]])
    }

    /// The destination address.
    pub fn dst_addr(&self) -> Ipv4Address {
        let b = &self.buffer.as_ref()[field::DST_ADDR];
        Ipv4Address([b[0], b[1], b[2], b[3]])
    }

    /// The option bytes between the fixed header and the payload.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len()]
    }

    /// Whether the header checksum is right: the sum over the header, checksum included, is
    /// all ones.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(&self.buffer.as_ref()[..self.header_len()]) == 0xffff
    }

    /// The payload: from the end of the header to `total_len`.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the version field.
    pub fn set_version(&mut self, version: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (version << 4);
    }

    /// Set the header length in bytes; it must be a multiple of 4 between 20 and 60.
    pub fn set_header_len(&mut self, len: usize) {
        debug_assert!(len.is_multiple_of(4) && (HEADER_LEN..=MAX_HEADER_LEN).contains(&len));
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | ((len / 4) as u8 & 0x0f);
    }

    /// Set the DSCP (six bits).
    pub fn set_dscp(&mut self, dscp: u8) {
        debug_assert!(dscp <= DSCP_MAX, "DSCP {dscp} does not fit in 6 bits");
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0x03) | (dscp << 2);
    }

    /// Set the ECN codepoint.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0xfc) | ecn.bits();
    }

    /// Set the total length.
    pub fn set_total_len(&mut self, len: u16) {
        be::set_u16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Set the identification field.
    pub fn set_ident(&mut self, ident: u16) {
        be::set_u16(self.buffer.as_mut(), field::IDENT, ident);
    }

    fn set_flag(&mut self, flag: u16, on: bool) {
        let data = self.buffer.as_mut();
        let v = be::u16_at(data, field::FLAGS_FRAG) & !flag;
        be::set_u16(data, field::FLAGS_FRAG, if on { v | flag } else { v });
    }

    /// Set the don't-fragment flag.
    pub fn set_dont_frag(&mut self, on: bool) {
        self.set_flag(FLAG_DF, on);
    }

    /// Set the more-fragments flag.
    pub fn set_more_frags(&mut self, on: bool) {
        self.set_flag(FLAG_MF, on);
    }

    /// Write the whole flags/fragment-offset word: DF, MF, the offset (8-byte units) and a
    /// zero reserved bit.
    pub fn set_flags_and_frag_offset(&mut self, dont_frag: bool, more_frags: bool, offset: u16) {
        debug_assert!(offset <= FRAG_OFFSET_MASK);
        let mut v = offset & FRAG_OFFSET_MASK;
        if dont_frag {
            v |= FLAG_DF;
        }
        if more_frags {
            v |= FLAG_MF;
        }
        be::set_u16(self.buffer.as_mut(), field::FLAGS_FRAG, v);
    }

    /// Set the fragment offset (8-byte units), keeping the flags.
    pub fn set_frag_offset(&mut self, offset: u16) {
        debug_assert!(offset <= FRAG_OFFSET_MASK);
        let data = self.buffer.as_mut();
        let v = be::u16_at(data, field::FLAGS_FRAG) & !FRAG_OFFSET_MASK;
        be::set_u16(data, field::FLAGS_FRAG, v | (offset & FRAG_OFFSET_MASK));
    }

    /// Set the time to live.
    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::TTL] = ttl;
    }

    /// Set the protocol number.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.buffer.as_mut()[field::PROTOCOL] = protocol.0;
    }

    /// Set the checksum field to a given value.
    pub fn set_checksum(&mut self, checksum: u16) {
        be::set_u16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Set the source address.
    pub fn set_src_addr(&mut self, addr: Ipv4Address) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&addr.0);
    }

    /// Set the destination address.
    pub fn set_dst_addr(&mut self, addr: Ipv4Address) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&addr.0);
    }

    /// Compute the header checksum over the header as it stands and store it. Call it last,
    /// after every other header field is set (a switch marking CE must call it again).
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let len = self.header_len();
        let sum = checksum::sum(&self.buffer.as_ref()[..len]);
        self.set_checksum(!sum);
    }

    /// The payload, writable (from the end of the header to `total_len`).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let range = self.header_len()..usize::from(self.total_len());
        &mut self.buffer.as_mut()[range]
    }
}

/// A parsed IPv4 header. Options are not kept.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Source address.
    pub src_addr: Ipv4Address,
    /// Destination address.
    pub dst_addr: Ipv4Address,
    /// Protocol of the payload.
    pub protocol: Protocol,
    /// Payload length in bytes (total length minus the header).
    pub payload_len: u16,
    /// Differentiated services codepoint, 0–63.
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag (RoCEv2 NICs set it).
    pub dont_frag: bool,
    /// More-fragments flag.
    pub more_frags: bool,
    /// Fragment offset in 8-byte units, 0–8191.
    pub frag_offset: u16,
    /// Time to live.
    pub ttl: u8,
}

impl Repr {
    /// Read a header: the version must be 4 and the checksum right.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.version() != 4 {
            return Err(Error::Malformed("IP version is not 4"));
        }
        if !packet.verify_checksum() {
            return Err(Error::Checksum("IPv4 header"));
        }
        // check_len guarantees total_len >= header_len, and header_len <= 60.
        let payload_len = packet.total_len() - packet.header_len() as u16;
        Ok(Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len,
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            ttl: packet.ttl(),
        })
    }

    /// The header length emitted: always 20 (no options).
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus payload.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }

    /// Write the header (IHL 5, checksum computed) into the first 20 bytes of `packet`. The
    /// payload bytes are not touched. `payload_len` must be at most 65515.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        debug_assert!(usize::from(self.payload_len) <= usize::from(u16::MAX) - HEADER_LEN);
        packet.set_version(4);
        packet.set_header_len(HEADER_LEN);
        packet.buffer.as_mut()[field::DSCP_ECN] = 0;
        packet.set_dscp(self.dscp & DSCP_MAX);
        packet.set_ecn(self.ecn);
        packet.set_total_len(self.payload_len.wrapping_add(HEADER_LEN as u16));
        packet.set_ident(self.ident);
        packet.set_flags_and_frag_offset(self.dont_frag, self.more_frags, self.frag_offset);
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::ipv4_repr;
    use proptest::prelude::*;

    // DSCP 26 (AF31), ECT(0); total length 60; id 0x1234; DF; TTL 64; UDP; 10.0.0.1 -> 10.0.0.2.
    static HEADER_BYTES: [u8; 20] = [
        0x45, 0x6a, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x11, 10, 0, 0, 1, 10, 0,
        0, 2,
    ];

    // IHL 6 with a Router Alert option; MF set, fragment offset 3; TTL 1; TCP; total length 32.
    static OPTIONS_BYTES: [u8; 32] = [
        0x46, 0x00, 0x00, 0x20, 0x00, 0x07, 0x20, 0x03, 0x01, 0x06, 0x81, 0x76, 192, 168, 1, 1,
        192, 168, 1, 2, 0x94, 0x04, 0x00, 0x00, // option
        1, 2, 3, 4, 5, 6, 7, 8, // payload
    ];

    fn repr() -> Repr {
        Repr {
            src_addr: Ipv4Address::new(10, 0, 0, 1),
            dst_addr: Ipv4Address::new(10, 0, 0, 2),
            protocol: Protocol::UDP,
            payload_len: 40,
            dscp: 26,
            ecn: Ecn::Ect0,
            ident: 0x1234,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
            ttl: 64,
        }
    }

    fn header_with_payload() -> Vec<u8> {
        let mut bytes = HEADER_BYTES.to_vec();
        bytes.resize(60, 0x00);
        bytes
    }

    #[test]
    fn test_deconstruct() {
        let bytes = header_with_payload();
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(packet.version(), 4);
        assert_eq!(packet.header_len(), 20);
        assert_eq!(packet.dscp(), 26);
        assert_eq!(packet.ecn(), Ecn::Ect0);
        assert_eq!(packet.total_len(), 60);
        assert_eq!(packet.ident(), 0x1234);
        assert!(packet.dont_frag());
        assert!(!packet.more_frags());
        assert_eq!(packet.frag_offset(), 0);
        assert_eq!(packet.ttl(), 64);
        assert_eq!(packet.protocol(), Protocol::UDP);
        assert_eq!(packet.checksum(), 0x1411);
        assert_eq!(packet.src_addr(), Ipv4Address::new(10, 0, 0, 1));
        assert_eq!(packet.dst_addr(), Ipv4Address::new(10, 0, 0, 2));
        assert!(packet.verify_checksum());
        assert_eq!(packet.payload().len(), 40);
    }

    #[test]
    fn test_deconstruct_options() {
        let packet = Packet::new_checked(&OPTIONS_BYTES[..]).unwrap();
        assert_eq!(packet.header_len(), 24);
        assert_eq!(packet.options(), &[0x94, 0x04, 0x00, 0x00]);
        assert!(packet.more_frags());
        assert!(!packet.dont_frag());
        assert_eq!(packet.frag_offset(), 3);
        assert_eq!(packet.payload(), &[1, 2, 3, 4, 5, 6, 7, 8]);
        let repr = Repr::parse(&packet).unwrap();
        assert_eq!(repr.payload_len, 8);
        assert_eq!(repr.protocol, Protocol::TCP);
        assert_eq!(repr.frag_offset, 3);
        assert!(repr.more_frags);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 20];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_version(4);
        packet.set_header_len(20);
        packet.set_dscp(26);
        packet.set_ecn(Ecn::Ect0);
        packet.set_total_len(60);
        packet.set_ident(0x1234);
        // Clears the reserved bit the 0xa5 filler set; then the single-field setters.
        packet.set_flags_and_frag_offset(false, true, 5);
        packet.set_more_frags(false);
        packet.set_frag_offset(0);
        packet.set_dont_frag(true);
        packet.set_ttl(64);
        packet.set_protocol(Protocol::UDP);
        packet.set_src_addr(Ipv4Address::new(10, 0, 0, 1));
        packet.set_dst_addr(Ipv4Address::new(10, 0, 0, 2));
        packet.fill_checksum();
        assert_eq!(bytes, HEADER_BYTES);
    }

    #[test]
    fn test_parse() {
        let bytes = header_with_payload();
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&packet).unwrap(), repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 20];
        repr().emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, HEADER_BYTES);
    }

    #[test]
    fn test_bad_checksum() {
        let mut bytes = header_with_payload();
        bytes[8] = 63; // TTL decremented without fixing the checksum
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&packet), Err(Error::Checksum("IPv4 header")));
    }

    #[test]
    fn test_truncated_and_malformed() {
        let bytes = header_with_payload();
        assert_eq!(
            Packet::new_checked(&bytes[..19]),
            Err(Error::Truncated("IPv4 header"))
        );
        assert_eq!(
            Packet::new_checked(&bytes[..59]),
            Err(Error::Truncated("IPv4 payload"))
        );
        assert_eq!(
            Packet::new_checked(&OPTIONS_BYTES[..22]),
            Err(Error::Truncated("IPv4 options"))
        );
        let mut bad = bytes.clone();
        bad[0] = 0x44;
        assert_eq!(
            Packet::new_checked(&bad[..]),
            Err(Error::Malformed("IPv4 IHL below 5"))
        );
        let mut bad = bytes.clone();
        bad[2..4].copy_from_slice(&[0, 10]);
        assert!(matches!(
            Packet::new_checked(&bad[..]),
            Err(Error::Malformed(_))
        ));
        let mut v6 = bytes;
        v6[0] = 0x65;
        let packet = Packet::new_checked(&v6[..]).unwrap();
        assert_eq!(
            Repr::parse(&packet),
            Err(Error::Malformed("IP version is not 4"))
        );
    }

    #[test]
    fn test_trailing_padding_ignored() {
        let mut bytes = header_with_payload();
        bytes.extend_from_slice(&[0; 6]);
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(packet.payload().len(), 40);
        assert_eq!(Repr::parse(&packet).unwrap(), repr());
    }

    #[test]
    fn test_ecn_codepoints() {
        for (bits, ecn) in [
            (0, Ecn::NotEct),
            (1, Ecn::Ect1),
            (2, Ecn::Ect0),
            (3, Ecn::Ce),
        ] {
            assert_eq!(Ecn::from_bits(bits), ecn);
            assert_eq!(ecn.bits(), bits);
        }
        assert!(Ecn::Ect0.is_ect() && Ecn::Ect1.is_ect());
        assert!(!Ecn::Ce.is_ect() && !Ecn::NotEct.is_ect());
        assert_eq!(Ipv4Address::new(192, 168, 0, 1).to_string(), "192.168.0.1");
    }

    proptest! {
        #[test]
        fn round_trip(r in ipv4_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(Repr::parse(&packet), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = p.options();
                let _ = p.payload();
                let _ = Repr::parse(&p);
            }
        }
    }
}
