//! TCP sequence numbers and the 64-bit offsets the connection keeps internally.
//!
//! Follows RFC 9293 §3.4 ("Sequence Numbers"): a sequence number is a 32-bit value and every
//! comparison is made modulo 2^32, so `a < b` means "`b` is less than 2^31 ahead of `a`".
//! [`SeqNumber`] implements exactly that.
//!
//! Inside a [`Connection`](super::Connection) each direction counts positions as a `u64`
//! *offset* from its initial sequence number (offset 0 is the SYN, offset 1 the first data
//! byte), so the send queue, the SACK scoreboard and the reassembly buffer never see a wrap.
//! `SeqSpace` converts between the two at the edge: on the way out by truncation, on the way
//! in by taking the offset nearest to a recent reference point.
//!
//! Simplification: an offset is assumed to stay within 2^31 of the reference point it is
//! resolved against, which the window sizes (at most 2^30 bytes, RFC 7323 §2.3) guarantee.

use core::cmp::Ordering;
use core::fmt;

/// A 32-bit TCP sequence number, ordered modulo 2^32 (RFC 9293 §3.4).
///
/// The order is not total: two numbers exactly 2^31 apart compare as `None`. Within a
/// connection every pair compared is closer than that.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct SeqNumber(pub u32);

impl SeqNumber {
    /// The number `n` positions later, wrapping past 2^32.
    pub const fn add(self, n: u32) -> SeqNumber {
        SeqNumber(self.0.wrapping_add(n))
    }

    /// How far `self` is ahead of `earlier` (negative if it is behind), as RFC 9293 §3.4
    /// compares: the 32-bit difference read as a signed number.
    pub const fn distance_from(self, earlier: SeqNumber) -> i32 {
        self.0.wrapping_sub(earlier.0) as i32
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &SeqNumber) -> Option<Ordering> {
        match self.distance_from(*other) {
            i32::MIN => None,
            d => Some(d.cmp(&0)),
        }
    }
}

impl fmt::Display for SeqNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One direction's sequence space: wire sequence numbers against 64-bit offsets from the
/// initial sequence number.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub(crate) struct SeqSpace {
    /// The wire value of offset 0 (the ISN, carried by the SYN).
    initial: SeqNumber,
}

impl SeqSpace {
    /// The space whose offset 0 is `isn`.
    pub(crate) const fn new(isn: u32) -> SeqSpace {
        SeqSpace {
            initial: SeqNumber(isn),
        }
    }

    /// The wire sequence number of `offset` (truncated modulo 2^32).
    pub(crate) const fn seq(self, offset: u64) -> u32 {
        self.initial.add(offset as u32).0
    }

    /// The offset of wire value `seq` nearest to the offset `near`, or `None` if that offset
    /// would lie before the ISN.
    pub(crate) fn offset(self, seq: u32, near: u64) -> Option<u64> {
        let d = SeqNumber(seq).distance_from(SeqNumber(self.seq(near)));
        near.checked_add_signed(i64::from(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_wraps() {
        let a = SeqNumber(u32::MAX - 1);
        let b = a.add(5);
        assert_eq!(b, SeqNumber(3));
        assert!(a < b);
        assert!(b > a);
        assert_eq!(b.distance_from(a), 5);
        assert_eq!(a.distance_from(b), -5);
        assert_eq!(SeqNumber(0).partial_cmp(&SeqNumber(1 << 31)), None);
    }

    #[test]
    fn offsets_round_trip_across_the_wrap() {
        let space = SeqSpace::new(u32::MAX - 10);
        assert_eq!(space.seq(0), u32::MAX - 10);
        assert_eq!(space.seq(11), 0);
        for off in [0u64, 10, 11, 12, 5_000_000_000, 5_000_000_123] {
            let seq = space.seq(off);
            assert_eq!(space.offset(seq, off), Some(off));
            assert_eq!(space.offset(seq, off.saturating_sub(1000)), Some(off));
            assert_eq!(space.offset(seq, off + 1000), Some(off));
        }
        // A value just before the ISN has no offset.
        assert_eq!(space.offset(space.seq(0).wrapping_sub(1), 0), None);
    }
}
