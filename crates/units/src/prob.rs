//! Probabilities as fixed-point fractions.
//!
//! Loss and marking decisions feed back into the simulation, so they must not depend on float
//! rounding. A [`Probability`] is `k / 2^32` with `0 ≤ k ≤ 2^32`; a draw is "true" when a
//! uniform 32-bit random number is below `k`. Floats are converted once, when a scenario is
//! read.

use core::fmt;

/// A probability in [0, 1], stored as `k / 2^32`.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Probability(u64);

/// A probability outside [0, 1] (or NaN).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("probability {0} is out of range: allowed 0.0..=1.0")]
pub struct BadProbability(pub f64);

const ONE: u64 = 1 << 32;

impl Probability {
    /// Never.
    pub const ZERO: Probability = Probability(0);
    /// Always.
    pub const ONE: Probability = Probability(ONE);

    /// `p`, rounded to the nearest multiple of 2^-32. NaN and values outside [0, 1] are errors.
    pub fn from_f64(p: f64) -> Result<Self, BadProbability> {
        if !(0.0..=1.0).contains(&p) {
            return Err(BadProbability(p));
        }
        Ok(Probability((p * ONE as f64).round() as u64))
    }
    /// `num / den` exactly (rounded down), for probabilities computed in integers.
    pub fn from_ratio(num: u64, den: u64) -> Self {
        if den == 0 || num >= den {
            return Probability::ONE;
        }
        Probability(((num as u128) << 32).div_euclid(den as u128) as u64)
    }
    /// The raw numerator over 2^32.
    pub const fn raw(self) -> u64 {
        self.0
    }
    /// Whether a uniform 32-bit draw `r` falls inside this probability.
    pub const fn hit(self, r: u32) -> bool {
        (r as u64) < self.0
    }
    /// `self × num / den`, rounded down (used for RED's linear ramp).
    pub fn scale(self, num: u64, den: u64) -> Self {
        if den == 0 {
            return self;
        }
        Probability(((self.0 as u128 * num as u128) / den as u128).min(ONE as u128) as u64)
    }
    /// The value as a float, for reports only.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / ONE as f64
    }
    /// True when this can never hit.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Probability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert!(Probability::from_f64(-0.1).is_err());
        assert!(Probability::from_f64(1.5).is_err());
        assert!(Probability::from_f64(f64::NAN).is_err());
        assert_eq!(Probability::from_f64(1.0).unwrap(), Probability::ONE);
        assert!(Probability::ONE.hit(u32::MAX));
        assert!(!Probability::ZERO.hit(0));
    }

    #[test]
    fn ratio_and_scale() {
        assert_eq!(Probability::from_ratio(1, 2).raw(), 1 << 31);
        assert_eq!(Probability::ONE.scale(1, 4).raw(), 1 << 30);
        assert_eq!(Probability::from_ratio(5, 0), Probability::ONE);
    }
}
