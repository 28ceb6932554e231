//! Packet sequence numbers: 24 bits that wrap.
//!
//! IBTA compares PSNs within half the space; rxe's `psn_compare` computes `(s32)((a - b) << 8)`
//! (research/verbs-spec.md §6). These helpers do the same in safe integer arithmetic.

use core::cmp::Ordering;

/// The PSN field mask.
pub const MASK: u32 = 0x00ff_ffff;

/// `a + n`, wrapped to 24 bits.
#[inline]
pub const fn add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & MASK
}

/// The signed distance `a - b` in PSN space, in −2^23 ..= 2^23 − 1.
#[inline]
pub const fn diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

/// Orders `a` against `b` as "before", "same" or "after" in the 24-bit window.
#[inline]
pub fn cmp(a: u32, b: u32) -> Ordering {
    diff(a, b).cmp(&0)
}

/// True when `a` is strictly after `b`.
#[inline]
pub fn after(a: u32, b: u32) -> bool {
    diff(a, b) > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps() {
        assert_eq!(add(MASK, 1), 0);
        assert_eq!(diff(0, MASK), 1);
        assert_eq!(diff(MASK, 0), -1);
        assert!(after(2, MASK - 3));
        assert_eq!(cmp(5, 5), Ordering::Equal);
    }

    proptest! {
        #[test]
        fn add_then_diff_round_trips(a in 0u32..=MASK, n in 0u32..(1 << 23)) {
            let b = add(a, n);
            prop_assert!(b <= MASK);
            prop_assert_eq!(diff(b, a), n as i32);
            prop_assert_eq!(diff(a, b), -(n as i32));
            prop_assert_eq!(after(b, a), n > 0);
        }

        #[test]
        fn comparison_is_antisymmetric(a in 0u32..=MASK, b in 0u32..=MASK) {
            prop_assume!(diff(a, b) != -(1 << 23));
            prop_assert_eq!(cmp(a, b), cmp(b, a).reverse());
        }
    }
}
