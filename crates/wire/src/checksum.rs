//! The Internet checksum (RFC 1071) and the IPv4 pseudo-header of RFC 9293 §3.1 and RFC 768.
//!
//! A checksum is the one's-complement of the one's-complement sum of the covered 16-bit words.
//! Helpers here return the folded **sum**; callers complement it when writing a checksum field,
//! and a receiver checks that the sum over the data *including* the checksum field is `0xffff`.

use crate::ipv4::{Ipv4Address, Protocol};

/// The folded one's-complement sum of `data` read as big-endian 16-bit words; an odd last byte
/// is padded with a zero byte on the right, as RFC 1071 §4.1 does.
pub fn sum(data: &[u8]) -> u16 {
    // A u64 accumulator cannot overflow for any slice that fits in memory on a 64-bit host
    // (2^48 words of at most 2^16 each), so folding once at the end is enough.
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    fold(acc)
}

/// One's-complement addition of two folded sums.
pub fn combine(a: u16, b: u16) -> u16 {
    fold(u64::from(a) + u64::from(b))
}

/// The folded sum of the IPv4 pseudo-header that TCP and UDP checksums cover: source and
/// destination address, a zero byte, the protocol and the segment length (`len_bytes` is the
/// TCP or UDP header plus payload).
pub fn ipv4_pseudo_header(
    src: Ipv4Address,
    dst: Ipv4Address,
    protocol: Protocol,
    len_bytes: u16,
) -> u16 {
    let mut acc = combine(sum(&src.0), sum(&dst.0));
    acc = combine(acc, u16::from(protocol.0));
    combine(acc, len_bytes)
}

fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    // The loop leaves at most 16 significant bits.
    acc as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3 worked example: the words 0001 f203 f4f5 f6f7 sum to ddf2.
        assert_eq!(
            sum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0xddf2
        );
    }

    #[test]
    fn odd_length_pads_right() {
        assert_eq!(sum(&[0x12]), 0x1200);
        assert_eq!(sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }

    #[test]
    fn carries_wrap_around() {
        assert_eq!(combine(0xffff, 0x0001), 0x0001);
        assert_eq!(sum(&[0xff, 0xff, 0x00, 0x02]), 0x0002);
    }

    #[test]
    fn pseudo_header_sum() {
        let s = ipv4_pseudo_header(
            Ipv4Address([10, 0, 0, 1]),
            Ipv4Address([10, 0, 0, 2]),
            Protocol::UDP,
            8,
        );
        // 0a00 + 0001 + 0a00 + 0002 + 0011 + 0008 = 141c
        assert_eq!(s, 0x141c);
    }
}
