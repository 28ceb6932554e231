//! The UDP header.
//!
//! Follows RFC 768. The checksum covers the IPv4 pseudo-header, the UDP header and the payload;
//! over IPv4 a checksum of zero means "not computed". RoCEv2 NICs send zero (the ICRC protects
//! the packet instead), so [`Repr::emit`] writes zero and [`Packet::fill_checksum`] is there
//! for anyone who wants a real one.

use crate::checksum;
use crate::ipv4::{Ipv4Address, Protocol};
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = field::CHECKSUM.end;

/// A read (and, for mutable buffers, write) view of a UDP header and its payload.
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

    /// Check that the buffer holds the header and the `len` bytes the length field announces.
    pub fn check_len(&self) -> Result<()> {
        let buffer_len = self.buffer.as_ref().len();
        if buffer_len < HEADER_LEN {
            return Err(Error::Truncated("UDP header"));
        }
        let len = usize::from(self.len());
        if len < HEADER_LEN {
            return Err(Error::Malformed("UDP length shorter than its header"));
        }
        if buffer_len < len {
            return Err(Error::Truncated("UDP payload"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The source port.
    pub fn src_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// The destination port.
    pub fn dst_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DST_PORT)
    }

    /// The length field: header plus payload.
    pub fn len(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::LENGTH)
    }

    /// Whether the length field announces no payload.
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }

    /// The checksum field (0 = not computed).
    pub fn checksum(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Whether the checksum is absent (zero) or right for the given pseudo-header addresses.
    pub fn verify_checksum(&self, src: Ipv4Address, dst: Ipv4Address) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let len = self.len();
        let pseudo = checksum::ipv4_pseudo_header(src, dst, Protocol::UDP, len);
        let data = checksum::sum(&self.buffer.as_ref()[..usize::from(len)]);
        checksum::combine(pseudo, data) == 0xffff
    }

    /// The payload, up to the length field.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the source port.
    pub fn set_src_port(&mut self, port: u16) {
        be::set_u16(self.buffer.as_mut(), field::SRC_PORT, port);
    }

    /// Set the destination port.
    pub fn set_dst_port(&mut self, port: u16) {
        be::set_u16(self.buffer.as_mut(), field::DST_PORT, port);
    }

    /// Set the length field.
    pub fn set_len(&mut self, len: u16) {
        be::set_u16(self.buffer.as_mut(), field::LENGTH, len);
    }

    /// Set the checksum field to a given value.
    pub fn set_checksum(&mut self, checksum: u16) {
        be::set_u16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Compute the checksum over pseudo-header, header and payload and store it. A computed
    /// zero is sent as `0xffff`, because zero on the wire means "no checksum".
    pub fn fill_checksum(&mut self, src: Ipv4Address, dst: Ipv4Address) {
        self.set_checksum(0);
        let len = self.len();
        let pseudo = checksum::ipv4_pseudo_header(src, dst, Protocol::UDP, len);
        let data = checksum::sum(&self.buffer.as_ref()[..usize::from(len)]);
        let sum = !checksum::combine(pseudo, data);
        self.set_checksum(if sum == 0 { 0xffff } else { sum });
    }

    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// A parsed UDP header.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port (4791 for RoCEv2).
    pub dst_port: u16,
    /// Payload length in bytes.
    pub payload_len: u16,
}

impl Repr {
    /// Read a header; a non-zero checksum must be right for the pseudo-header `src`/`dst`.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        packet: &Packet<&T>,
        src: Ipv4Address,
        dst: Ipv4Address,
    ) -> Result<Repr> {
        packet.check_len()?;
        if !packet.verify_checksum(src, dst) {
            return Err(Error::Checksum("UDP"));
        }
        Ok(Repr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            // check_len guarantees len >= HEADER_LEN.
            payload_len: packet.len() - HEADER_LEN as u16,
        })
    }

    /// The header length: always 8.
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header plus payload.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }

    /// Write the header with checksum zero (as RoCEv2 does) into the first 8 bytes of
    /// `packet`; the payload is not touched. `payload_len` must be at most 65527.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        debug_assert!(usize::from(self.payload_len) <= usize::from(u16::MAX) - HEADER_LEN);
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_len(self.payload_len.wrapping_add(HEADER_LEN as u16));
        packet.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::udp_repr;
    use proptest::prelude::*;

    const SRC: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
    const DST: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

    // RoCEv2 style: 49152 -> 4791, length 12, checksum 0, then 4 payload bytes.
    static ROCE_BYTES: [u8; 12] = [
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0c, 0x00, 0x00, 0x61, 0x62, 0x63, 0x64,
    ];
    // 1234 -> 5678, payload "abcd", checksum computed over the 10.0.0.1 -> 10.0.0.2
    // pseudo-header (worked out by hand with RFC 1071 sums).
    static CHECKSUMMED_BYTES: [u8; 12] = [
        0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0c, 0x0c, 0x0d, 0x61, 0x62, 0x63, 0x64,
    ];

    fn repr() -> Repr {
        Repr {
            src_port: 49152,
            dst_port: 4791,
            payload_len: 4,
        }
    }

    #[test]
    fn test_deconstruct() {
        let packet = Packet::new_checked(&ROCE_BYTES[..]).unwrap();
        assert_eq!(packet.src_port(), 49152);
        assert_eq!(packet.dst_port(), 4791);
        assert_eq!(packet.len(), 12);
        assert_eq!(packet.checksum(), 0);
        assert_eq!(packet.payload(), b"abcd");
        assert!(packet.verify_checksum(SRC, DST));
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 12];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_src_port(1234);
        packet.set_dst_port(5678);
        packet.set_len(12);
        packet.payload_mut().copy_from_slice(b"abcd");
        packet.fill_checksum(SRC, DST);
        assert_eq!(bytes, CHECKSUMMED_BYTES);
    }

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&ROCE_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet, SRC, DST).unwrap(), repr());
        let packet = Packet::new_checked(&CHECKSUMMED_BYTES[..]).unwrap();
        assert!(packet.verify_checksum(SRC, DST));
        assert_eq!(Repr::parse(&packet, SRC, DST).unwrap().src_port, 1234);
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 12];
        let mut packet = Packet::new_unchecked(&mut bytes);
        repr().emit(&mut packet);
        packet.payload_mut().copy_from_slice(b"abcd");
        assert_eq!(bytes, ROCE_BYTES);
    }

    #[test]
    fn test_bad_checksum() {
        let mut bytes = CHECKSUMMED_BYTES;
        bytes[11] ^= 0x01;
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&packet, SRC, DST), Err(Error::Checksum("UDP")));
        // The same bytes checked against another destination fail too.
        let packet = Packet::new_checked(&CHECKSUMMED_BYTES[..]).unwrap();
        assert!(!packet.verify_checksum(SRC, Ipv4Address::new(10, 0, 0, 3)));
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&ROCE_BYTES[..7]),
            Err(Error::Truncated("UDP header"))
        );
        assert_eq!(
            Packet::new_checked(&ROCE_BYTES[..11]),
            Err(Error::Truncated("UDP payload"))
        );
        let mut bytes = ROCE_BYTES;
        bytes[4..6].copy_from_slice(&[0, 7]);
        assert!(matches!(
            Packet::new_checked(&bytes[..]),
            Err(Error::Malformed(_))
        ));
    }

    proptest! {
        #[test]
        fn round_trip(r in udp_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(Repr::parse(&packet, SRC, DST), Ok(r));
        }

        #[test]
        fn checksum_round_trip(payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = vec![0xa5; HEADER_LEN + payload.len()];
            let mut packet = Packet::new_unchecked(&mut bytes);
            Repr { src_port: 1, dst_port: 2, payload_len: payload.len() as u16 }.emit(&mut packet);
            packet.payload_mut().copy_from_slice(&payload);
            packet.fill_checksum(SRC, DST);
            prop_assert_ne!(packet.checksum(), 0);
            prop_assert!(packet.verify_checksum(SRC, DST));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = p.payload();
                let _ = Repr::parse(&p, SRC, DST);
            }
        }
    }
}
