//! Byte counts.

use core::fmt;
use core::ops::{Add, AddAssign};

/// A number of bytes. Prints in binary units (`4 KiB`, `1.5 MiB`) as the course does.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct ByteLen(u64);

impl ByteLen {
    /// Zero bytes.
    pub const ZERO: ByteLen = ByteLen(0);
    /// `n` bytes.
    pub const fn new(n: u64) -> Self {
        ByteLen(n)
    }
    /// `n` KiB (1024 bytes each).
    pub const fn kib(n: u64) -> Self {
        ByteLen(n * 1024)
    }
    /// `n` MiB.
    pub const fn mib(n: u64) -> Self {
        ByteLen(n * 1024 * 1024)
    }
    /// The byte count.
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl From<u64> for ByteLen {
    fn from(n: u64) -> Self {
        ByteLen(n)
    }
}
impl From<usize> for ByteLen {
    fn from(n: usize) -> Self {
        ByteLen(n as u64)
    }
}
impl Add for ByteLen {
    type Output = ByteLen;
    fn add(self, o: ByteLen) -> ByteLen {
        ByteLen(self.0.checked_add(o.0).expect("ByteLen overflow"))
    }
}
impl AddAssign for ByteLen {
    fn add_assign(&mut self, o: ByteLen) {
        *self = *self + o;
    }
}

impl fmt::Display for ByteLen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 4] = [
            ("TiB", 1 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ];
        for (unit, div) in UNITS {
            if self.0 >= div {
                if self.0.is_multiple_of(div) {
                    return write!(f, "{} {unit}", self.0 / div);
                }
                let s = format!("{:.2}", self.0 as f64 / div as f64);
                return write!(
                    f,
                    "{} {unit}",
                    s.trim_end_matches('0').trim_end_matches('.')
                );
            }
        }
        write!(f, "{} B", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(ByteLen::new(17).to_string(), "17 B");
        assert_eq!(ByteLen::kib(4).to_string(), "4 KiB");
        assert_eq!(ByteLen::new(1536 * 1024).to_string(), "1.5 MiB");
        assert_eq!(ByteLen::mib(1024).to_string(), "1 GiB");
        assert_eq!(ByteLen::new(4174).to_string(), "4.08 KiB");
    }
}
