//! Packet sequence numbers: 24 bits that wrap.
//!
//! IBTA compares PSNs within half the space; rxe's `psn_compare` computes `(s32)((a - b) << 8)`
//! (research/verbs-spec.md §6). [`Psn`] does the same in safe integer arithmetic, and is the
//! only place in the RoCE transport that wraps or compares PSNs: the requester and responder
//! keep every PSN as a `Psn` and meet plain `u32`s only at their edges (the BTH, the
//! configuration, the events and accessors other crates read).
//!
//! Like TCP's [`SeqNumber`](crate::tcp::SeqNumber), the order is not total: two PSNs exactly
//! 2^23 apart are unordered (`partial_cmp` is `None`). Within a QP no two PSNs compared are
//! that far apart: at most `max_unacked_psns` (2^22 by default) are outstanding.

use core::cmp::Ordering;
use core::fmt;

/// The PSN field mask.
pub const MASK: u32 = 0x00ff_ffff;

/// A 24-bit packet sequence number, ordered modulo 2^24.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Psn(u32);

impl Psn {
    /// The PSN of a 32-bit value: its low 24 bits (a BTH field, a configured `sq_psn`).
    #[inline]
    pub const fn new(v: u32) -> Psn {
        Psn(v & MASK)
    }

    /// The 24-bit value, for the BTH and for callers outside the transport.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The PSN `n` later, wrapped to 24 bits.
    #[inline]
    pub const fn add(self, n: u32) -> Psn {
        Psn(self.0.wrapping_add(n) & MASK)
    }

    /// The PSN before this one (the last PSN an ACK for "expected `self`" acknowledges).
    #[inline]
    pub const fn prev(self) -> Psn {
        self.add(MASK)
    }

    /// How far `self` is ahead of `earlier` (negative if behind), in −2^23 ..= 2^23 − 1.
    #[inline]
    pub const fn distance_from(self, earlier: Psn) -> i32 {
        ((self.0.wrapping_sub(earlier.0) << 8) as i32) >> 8
    }

    /// Whether `self` is one of the `n` PSNs from `first` on.
    #[inline]
    pub const fn in_run(self, first: Psn, n: u32) -> bool {
        let d = self.distance_from(first);
        d >= 0 && (d as u32) < n
    }
}

impl PartialOrd for Psn {
    fn partial_cmp(&self, other: &Psn) -> Option<Ordering> {
        match self.distance_from(*other) {
            d if d == -(1 << 23) => None,
            d => Some(d.cmp(&0)),
        }
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_at_two_to_the_24() {
        let last = Psn::new(MASK);
        assert_eq!(last.add(1), Psn::new(0));
        assert_eq!(Psn::new(0).prev(), last);
        assert_eq!(Psn::new(0).distance_from(last), 1);
        assert_eq!(last.distance_from(Psn::new(0)), -1);
        assert!(Psn::new(2) > Psn::new(MASK - 3), "after the wrap is later");
        assert_eq!(
            Psn::new(1 << 24 | 5),
            Psn::new(5),
            "high bits are not a PSN's"
        );
        assert_eq!(Psn::new(5).partial_cmp(&Psn::new(5)), Some(Ordering::Equal));
        assert_eq!(
            Psn::new(0).partial_cmp(&Psn::new(1 << 23)),
            None,
            "half apart"
        );
        assert!(Psn::new(MASK - 1).in_run(Psn::new(MASK - 1), 3));
        assert!(
            Psn::new(0).in_run(Psn::new(MASK - 1), 3),
            "a run across the wrap"
        );
        assert!(!Psn::new(1).in_run(Psn::new(MASK - 1), 3));
        assert!(!Psn::new(MASK - 2).in_run(Psn::new(MASK - 1), 3));
    }

    proptest! {
        #[test]
        fn add_then_distance_round_trips(a in 0u32..=MASK, n in 0u32..(1 << 23)) {
            let (a, b) = (Psn::new(a), Psn::new(a).add(n));
            prop_assert!(b.get() <= MASK);
            prop_assert_eq!(b.distance_from(a), n as i32);
            prop_assert_eq!(a.distance_from(b), -(n as i32));
            prop_assert_eq!(b > a, n > 0);
            prop_assert_eq!(b.in_run(a, n + 1), true);
            prop_assert_eq!(b.in_run(a, n), false);
        }

        #[test]
        fn comparison_is_antisymmetric(a in 0u32..=MASK, b in 0u32..=MASK) {
            let (a, b) = (Psn::new(a), Psn::new(b));
            match a.partial_cmp(&b) {
                None => prop_assert_eq!(b.partial_cmp(&a), None),
                Some(o) => prop_assert_eq!(b.partial_cmp(&a), Some(o.reverse())),
            }
        }
    }
}
