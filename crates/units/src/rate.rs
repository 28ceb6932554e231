//! Link and NIC rates.
//!
//! A [`Bandwidth`] is an integer number of bits per second. The one question the simulator asks
//! of it is "how long does this many bytes take on the wire?", answered by
//! [`Bandwidth::serialization_time`] exactly: `ceil(bytes × 8 × 10^12 / bps)` picoseconds,
//! computed in 128-bit integers and rounded up, so a frame never finishes before its last bit.

use crate::{ByteLen, Overflow, SimDuration};
use core::fmt;

/// A rate in bits per second. Never zero (see [`Bandwidth::from_bps`]).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Bandwidth(u64);

/// A rate of zero was given where a link or NIC needs one.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[error("bandwidth must be greater than 0 b/s")]
pub struct ZeroBandwidth;

impl Bandwidth {
    /// A rate of `bps` bits per second; zero is refused because nothing could ever be sent.
    pub const fn from_bps(bps: u64) -> Result<Self, ZeroBandwidth> {
        if bps == 0 {
            Err(ZeroBandwidth)
        } else {
            Ok(Bandwidth(bps))
        }
    }
    /// `gbps` × 10^9 bits per second. For constants: panics on zero or overflow.
    pub const fn gbps(gbps: u64) -> Self {
        assert!(
            gbps > 0 && gbps <= u64::MAX / 1_000_000_000,
            "Bandwidth::gbps out of range"
        );
        Bandwidth(gbps * 1_000_000_000)
    }
    /// `mbps` × 10^6 bits per second. For constants: panics on zero or overflow.
    pub const fn mbps(mbps: u64) -> Self {
        assert!(
            mbps > 0 && mbps <= u64::MAX / 1_000_000,
            "Bandwidth::mbps out of range"
        );
        Bandwidth(mbps * 1_000_000)
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to clock `len` bytes onto the wire, rounded up to a whole picosecond.
    pub fn serialization_time(self, len: ByteLen) -> SimDuration {
        self.checked_serialization_time(len)
            .expect("serialization time overflow: frame lengths are bounded far below this")
    }
    /// As [`serialization_time`](Self::serialization_time), or an error past 2^64 ps.
    pub fn checked_serialization_time(self, len: ByteLen) -> Result<SimDuration, Overflow> {
        let bits = len.bytes() as u128 * 8;
        let ps = (bits * 1_000_000_000_000).div_ceil(self.0 as u128);
        u64::try_from(ps)
            .map(SimDuration::from_ps)
            .map_err(|_| Overflow("serialization time"))
    }
    /// Bytes that fit in `d` at this rate, rounded down.
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        let bytes = d.as_ps() as u128 * self.0 as u128 / 8 / 1_000_000_000_000;
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }
    /// Gigabits per second as a float, for reports only.
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (unit, div) = match self.0 {
            b if b >= 1_000_000_000_000 => ("Tb/s", 1_000_000_000_000u64),
            b if b >= 1_000_000_000 => ("Gb/s", 1_000_000_000),
            b if b >= 1_000_000 => ("Mb/s", 1_000_000),
            b if b >= 1_000 => ("kb/s", 1_000),
            _ => return write!(f, "{} b/s", self.0),
        };
        if self.0.is_multiple_of(div) {
            write!(f, "{} {unit}", self.0 / div)
        } else {
            let v = self.0 as f64 / div as f64;
            let s = format!("{v:.3}");
            write!(
                f,
                "{} {unit}",
                s.trim_end_matches('0').trim_end_matches('.')
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_exact_and_rounded_up() {
        // 1500 B at 100 Gb/s = 12000 bits / 1e11 b/s = 120 ns exactly.
        let t = Bandwidth::gbps(100).serialization_time(ByteLen::new(1500));
        assert_eq!(t, SimDuration::from_ns(120));
        // 1 B at 3 b/s = 8/3 s = 2.666..e12 ps, rounded up.
        let t = Bandwidth::from_bps(3)
            .unwrap()
            .serialization_time(ByteLen::new(1));
        assert_eq!(t.as_ps(), 2_666_666_666_667);
        // 4174 B (a 4 KiB RoCE frame incl. preamble+IFG) at 100G: figures.md says ~334 ns.
        let t = Bandwidth::gbps(100).serialization_time(ByteLen::new(4174));
        assert_eq!(t.as_ps(), 333_920);
    }

    #[test]
    fn zero_refused() {
        assert_eq!(Bandwidth::from_bps(0), Err(ZeroBandwidth));
    }

    #[test]
    fn overflow_is_an_error() {
        let slow = Bandwidth::from_bps(1).unwrap();
        assert!(
            slow.checked_serialization_time(ByteLen::new(u64::MAX))
                .is_err()
        );
    }

    #[test]
    fn bytes_in_inverts() {
        let bw = Bandwidth::gbps(100);
        assert_eq!(bw.bytes_in(SimDuration::from_ns(120)), 1500);
    }

    #[test]
    fn display() {
        assert_eq!(Bandwidth::gbps(100).to_string(), "100 Gb/s");
        assert_eq!(Bandwidth::mbps(2_500).to_string(), "2.5 Gb/s");
        assert_eq!(Bandwidth::mbps(5).to_string(), "5 Mb/s");
        assert_eq!(Bandwidth::from_bps(999).unwrap().to_string(), "999 b/s");
    }
}
