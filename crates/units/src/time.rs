//! Simulated time as integer picoseconds.
//!
//! [`SimTime`] is an instant since the start of a run; [`SimDuration`] is a span. Instants minus
//! instants give spans; instants plus spans give instants. The operators panic on overflow (a
//! broken invariant: run budgets keep simulated time far below 2^64 ps); the `checked_*`
//! methods return `None` instead, for code that handles user-supplied values.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

const PS_PER_NS: u64 = 1_000;
const PS_PER_US: u64 = 1_000_000;
const PS_PER_MS: u64 = 1_000_000_000;
const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct SimTime(u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The latest representable instant; used as "never" by timers.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// An instant `ps` picoseconds after the start.
    pub const fn from_ps(ps: u64) -> Self {
        SimTime(ps)
    }
    /// Picoseconds since the start.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// The span since the start of the run.
    pub const fn since_start(self) -> SimDuration {
        SimDuration(self.0)
    }
    /// `self + d`, or `None` past `u64::MAX` picoseconds.
    pub const fn checked_add(self, d: SimDuration) -> Option<SimTime> {
        match self.0.checked_add(d.0) {
            Some(v) => Some(SimTime(v)),
            None => None,
        }
    }
    /// `self - earlier`, or `None` if `earlier` is later than `self`.
    pub const fn checked_duration_since(self, earlier: SimTime) -> Option<SimDuration> {
        match self.0.checked_sub(earlier.0) {
            Some(v) => Some(SimDuration(v)),
            None => None,
        }
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The longest representable span.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// A span of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }
    /// A span of `ns` nanoseconds (panics on overflow, checked at compile time in consts).
    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(
            ns.checked_mul(PS_PER_NS)
                .expect("SimDuration::from_ns overflow"),
        )
    }
    /// A span of `us` microseconds.
    pub const fn from_us(us: u64) -> Self {
        SimDuration(
            us.checked_mul(PS_PER_US)
                .expect("SimDuration::from_us overflow"),
        )
    }
    /// A span of `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Self {
        SimDuration(
            ms.checked_mul(PS_PER_MS)
                .expect("SimDuration::from_ms overflow"),
        )
    }
    /// A span of `s` seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(
            s.checked_mul(PS_PER_S)
                .expect("SimDuration::from_secs overflow"),
        )
    }
    /// A span from a value in nanoseconds that may not fit (user input).
    pub const fn checked_from_ns(ns: u64) -> Option<Self> {
        match ns.checked_mul(PS_PER_NS) {
            Some(v) => Some(SimDuration(v)),
            None => None,
        }
    }
    /// Picoseconds in this span.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds in this span (truncated).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    /// Nanoseconds as a float, for reports only.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / PS_PER_NS as f64
    }
    /// Microseconds as a float, for reports only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    /// Seconds as a float, for reports only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// `self + other`, or `None` on overflow.
    pub const fn checked_add(self, other: SimDuration) -> Option<SimDuration> {
        match self.0.checked_add(other.0) {
            Some(v) => Some(SimDuration(v)),
            None => None,
        }
    }
    /// `self - other`, or `None` if `other` is longer.
    pub const fn checked_sub(self, other: SimDuration) -> Option<SimDuration> {
        match self.0.checked_sub(other.0) {
            Some(v) => Some(SimDuration(v)),
            None => None,
        }
    }
    /// `self - other`, or zero if `other` is longer.
    pub const fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
    /// `self × n`, or `None` on overflow.
    pub const fn checked_mul(self, n: u64) -> Option<SimDuration> {
        match self.0.checked_mul(n) {
            Some(v) => Some(SimDuration(v)),
            None => None,
        }
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        // Budgets bound simulated time far below u64::MAX ps (213 days): overflow is a bug.
        self.checked_add(d)
            .expect("simulated time overflowed u64 picoseconds")
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.checked_duration_since(earlier)
            .expect("subtracted a later SimTime from an earlier one")
    }
}
impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.checked_sub(d.0).expect("SimTime went below zero"))
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        self.checked_add(o).expect("SimDuration overflow")
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, o: SimDuration) {
        *self = *self + o;
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, o: SimDuration) -> SimDuration {
        self.checked_sub(o).expect("SimDuration went below zero")
    }
}
impl SubAssign for SimDuration {
    fn sub_assign(&mut self, o: SimDuration) {
        *self = *self - o;
    }
}
impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, n: u64) -> SimDuration {
        self.checked_mul(n).expect("SimDuration overflow")
    }
}
impl Div<u64> for SimDuration {
    type Output = SimDuration;
    fn div(self, n: u64) -> SimDuration {
        SimDuration(self.0 / n)
    }
}

/// Prints picoseconds with the largest unit that keeps the value ≥ 1: `750 ps`, `1.336 ns`,
/// `12.5 µs`, `3.000 ms`, `1.25 s`. Exact integers print without decimals.
fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (unit, div) = if ps >= PS_PER_S {
        ("s", PS_PER_S)
    } else if ps >= PS_PER_MS {
        ("ms", PS_PER_MS)
    } else if ps >= PS_PER_US {
        ("µs", PS_PER_US)
    } else if ps >= PS_PER_NS {
        ("ns", PS_PER_NS)
    } else {
        return write!(f, "{ps} ps");
    };
    let whole = ps / div;
    let frac = ps % div;
    if frac == 0 {
        return write!(f, "{whole} {unit}");
    }
    // Three significant decimals, trailing zeros trimmed; integer math so output is exact.
    let milli = (frac as u128 * 1000 / div as u128) as u64;
    let mut s = format!("{milli:03}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.is_empty() {
        write!(f, "{whole} {unit}")
    } else {
        write!(f, "{whole}.{s} {unit}")
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t=")?;
        fmt_ps(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_agree() {
        assert_eq!(SimDuration::from_ns(1).as_ps(), 1_000);
        assert_eq!(SimDuration::from_us(1), SimDuration::from_ns(1_000));
        assert_eq!(SimDuration::from_ms(1), SimDuration::from_us(1_000));
        assert_eq!(SimDuration::from_secs(1), SimDuration::from_ms(1_000));
    }

    #[test]
    fn arithmetic() {
        let t = SimTime::ZERO + SimDuration::from_ns(5);
        assert_eq!(t.as_ps(), 5_000);
        assert_eq!(t - SimTime::ZERO, SimDuration::from_ns(5));
        assert_eq!(SimTime::MAX.checked_add(SimDuration::from_ps(1)), None);
        assert_eq!(SimTime::ZERO.checked_duration_since(t), None);
        assert_eq!(SimDuration::from_ns(3) * 2, SimDuration::from_ns(6));
        assert_eq!(SimDuration::checked_from_ns(u64::MAX), None);
    }

    #[test]
    #[should_panic(expected = "later SimTime")]
    fn negative_span_panics() {
        let _ = SimTime::ZERO - SimTime::from_ps(1);
    }

    #[test]
    fn display() {
        assert_eq!(SimDuration::from_ps(750).to_string(), "750 ps");
        assert_eq!(SimDuration::from_ps(1_336).to_string(), "1.336 ns");
        assert_eq!(SimDuration::from_ns(12_500).to_string(), "12.5 µs");
        assert_eq!(SimDuration::from_ms(3).to_string(), "3 ms");
        assert_eq!(SimDuration::from_ms(1_250).to_string(), "1.25 s");
        assert_eq!(SimDuration::from_ps(1_000_400).to_string(), "1 µs");
        assert_eq!(SimTime::from_ps(2_000).to_string(), "t=2 ns");
    }
}
