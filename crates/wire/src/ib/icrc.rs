//! The RoCEv2 invariant CRC (ICRC): four bytes at the end of every RoCEv2 packet.
//!
//! Follows the IBTA RoCEv2 annex as Linux rxe implements it (`rxe_icrc.c`) and as
//! `verbs-spec.md` §6 and `ecosystem.md` ("ICRC recipe") describe it. The CRC is the
//! standard reflected CRC-32 (IEEE 802.3, the one zlib and `crc32fast` compute) over:
//!
//! 1. eight `0xff` bytes, standing in for the InfiniBand LRH that RoCEv2 does not have;
//! 2. the IPv4 header, with TOS (DSCP+ECN), TTL and header checksum set to all ones;
//! 3. the UDP header, with the checksum set to all ones;
//! 4. the BTH, with byte 4 (FECN, BECN, reserved) set to all ones;
//! 5. the extension headers, the payload and the pad bytes.
//!
//! The masked fields are exactly those a router or switch may rewrite in flight (ECN marking,
//! TTL decrement, FECN/BECN), so the CRC stays valid end to end: "invariant". The result is
//! written **little-endian** (rxe stores the host-order `u32` on an x86 host); Wireshark shows
//! those four bytes read big-endian as "Invariant CRC". A NIC silently drops a packet whose
//! ICRC is wrong.
//!
//! Simplification: IPv4 only. Computing does not allocate: the masked headers are copied to a
//! small stack buffer.

use crate::{Error, Result};

use super::{ICRC_LEN, bth};
use crate::{ipv4, udp};

/// Offsets of the masked bytes, relative to the start of each header.
mod mask {
    /// IPv4 TOS byte.
    pub const IPV4_TOS: usize = 1;
    /// IPv4 TTL byte.
    pub const IPV4_TTL: usize = 8;
    /// IPv4 header checksum.
    pub const IPV4_CHECKSUM: core::ops::Range<usize> = 10..12;
    /// UDP checksum.
    pub const UDP_CHECKSUM: core::ops::Range<usize> = 6..8;
    /// BTH byte 4: FECN, BECN and six reserved bits.
    pub const BTH_FECN_BECN: usize = 4;
}

/// The ICRC of a RoCEv2 packet given as the bytes from the first byte of the IPv4 header to
/// the last pad byte (the ICRC itself excluded), in wire order.
///
/// Fails if the slice does not start with an IPv4 header (version 4, IHL of at least 5) or is
/// too short to hold the IPv4, UDP and BTH headers.
pub fn compute(ip_to_pad: &[u8]) -> Result<[u8; 4]> {
    let Some(&ver_ihl) = ip_to_pad.first() else {
        return Err(Error::Truncated("IPv4 header (ICRC)"));
    };
    if ver_ihl >> 4 != 4 {
        return Err(Error::Unsupported("ICRC over a non-IPv4 packet"));
    }
    let ihl = usize::from(ver_ihl & 0x0f) * 4;
    if ihl < ipv4::HEADER_LEN {
        return Err(Error::Malformed("IPv4 IHL below 5"));
    }
    let headers_len = ihl + udp::HEADER_LEN + bth::HEADER_LEN;
    if ip_to_pad.len() < headers_len {
        return Err(Error::Truncated("RoCEv2 headers (ICRC)"));
    }
    // At most 60 + 8 + 12 bytes: the masked copy fits on the stack.
    let mut masked = [0u8; ipv4::MAX_HEADER_LEN + udp::HEADER_LEN + bth::HEADER_LEN];
    let masked = &mut masked[..headers_len];
    masked.copy_from_slice(&ip_to_pad[..headers_len]);
    masked[mask::IPV4_TOS] = 0xff;
    masked[mask::IPV4_TTL] = 0xff;
    masked[mask::IPV4_CHECKSUM].fill(0xff);
    let udp = &mut masked[ihl..];
    udp[mask::UDP_CHECKSUM].fill(0xff);
    let bth = &mut udp[udp::HEADER_LEN..];
    bth[mask::BTH_FECN_BECN] = 0xff;

    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&[0xff; 8]);
    hasher.update(masked);
    hasher.update(&ip_to_pad[headers_len..]);
    Ok(hasher.finalize().to_le_bytes())
}

/// Check the ICRC of a RoCEv2 packet given as the bytes from the IPv4 header to the end of the
/// ICRC. Returns [`Error::Icrc`] with both values if they differ.
pub fn verify(ip_to_icrc: &[u8]) -> Result<()> {
    let Some(split) = ip_to_icrc.len().checked_sub(ICRC_LEN) else {
        return Err(Error::Truncated("ICRC"));
    };
    let (covered, carried) = ip_to_icrc.split_at(split);
    let computed = compute(covered)?;
    let mut found = [0; ICRC_LEN];
    found.copy_from_slice(carried);
    if computed != found {
        return Err(Error::Icrc { computed, found });
    }
    Ok(())
}

/// Compute the ICRC of the bytes from the IPv4 header to the end of the pad and write it into
/// the last four bytes of `ip_to_icrc`.
pub fn fill(ip_to_icrc: &mut [u8]) -> Result<()> {
    let Some(split) = ip_to_icrc.len().checked_sub(ICRC_LEN) else {
        return Err(Error::Truncated("ICRC"));
    };
    let (covered, icrc) = ip_to_icrc.split_at_mut(split);
    icrc.copy_from_slice(&compute(covered)?);
    Ok(())
}

/// The ICRC as Wireshark displays it ("Invariant CRC: 0x58f6225f"): the four wire bytes read
/// big-endian.
pub const fn as_displayed(wire: [u8; 4]) -> u32 {
    u32::from_be_bytes(wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The IPv4 + UDP + BTH of the SEND_ONLY test vector of `ecosystem.md`, then the payload;
    /// written out by hand. IPv4: 10.0.0.1 -> 10.0.0.2, TOS 0x02 (ECT(0)), total length 60,
    /// id 1, DF, TTL 64, UDP, checksum 0x26ac. UDP 49152 -> 4791, length 40, checksum 0. BTH:
    /// SEND_ONLY, P_Key 0xffff, QP 0x11, AckReq, PSN 100.
    fn send_only_packet() -> Vec<u8> {
        let mut p = vec![
            0x45, 0x02, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0xac, 10, 0, 0, 1,
            10, 0, 0, 2, // IPv4
            0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // UDP
            0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x64, // BTH
        ];
        p.extend_from_slice(b"hello rdma send!");
        p
    }

    #[test]
    fn send_only_vector() {
        let packet = send_only_packet();
        assert_eq!(compute(&packet), Ok([0x58, 0xf6, 0x22, 0xa0]));
        assert_eq!(as_displayed([0x58, 0xf6, 0x22, 0xa0]), 0x58f6_22a0);
    }

    #[test]
    fn masked_fields_do_not_change_the_icrc() {
        let base = compute(&send_only_packet()).unwrap();
        let mut p = send_only_packet();
        p[1] = 0x03; // ECN rewritten to CE
        p[8] = 17; // TTL decremented many times
        p[10] = 0x12; // checksum changed accordingly (value irrelevant here)
        p[20 + 6] = 0xab; // UDP checksum filled in
        p[28 + 4] = 0x40; // BECN set
        assert_eq!(compute(&p), Ok(base));
        // An unmasked byte does change it.
        p[28 + 11] ^= 1;
        assert_ne!(compute(&p), Ok(base));
    }

    #[test]
    fn verify_and_fill() {
        let mut p = send_only_packet();
        p.extend_from_slice(&[0; 4]);
        assert!(matches!(verify(&p), Err(Error::Icrc { .. })));
        fill(&mut p).unwrap();
        assert_eq!(&p[p.len() - 4..], &[0x58, 0xf6, 0x22, 0xa0]);
        assert_eq!(verify(&p), Ok(()));
        let n = p.len();
        p[n - 1] ^= 0x5f ^ 0xa0; // the corruption ecosystem.md shows tshark not noticing
        assert_eq!(
            verify(&p),
            Err(Error::Icrc {
                computed: [0x58, 0xf6, 0x22, 0xa0],
                found: [0x58, 0xf6, 0x22, 0x5f]
            })
        );
    }

    #[test]
    fn short_or_foreign_input() {
        assert_eq!(compute(&[]), Err(Error::Truncated("IPv4 header (ICRC)")));
        assert!(matches!(compute(&[0x60; 60]), Err(Error::Unsupported(_))));
        assert!(matches!(compute(&[0x44; 60]), Err(Error::Malformed(_))));
        assert!(matches!(
            compute(&send_only_packet()[..39]),
            Err(Error::Truncated(_))
        ));
        assert_eq!(verify(&[0x45, 0, 0]), Err(Error::Truncated("ICRC")));
        assert_eq!(fill(&mut [0x45, 0, 0]), Err(Error::Truncated("ICRC")));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = compute(&bytes);
            let _ = verify(&bytes);
        }
    }
}
