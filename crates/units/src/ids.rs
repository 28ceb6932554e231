//! Handles that index arenas: small `Copy` newtypes instead of references.

use core::fmt;

macro_rules! id {
    ($(#[$m:meta])* $name:ident($ty:ty), $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
        pub struct $name(pub $ty);
        impl $name {
            /// The index this handle stands for.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id!(
    /// A host or switch in a topology.
    NodeId(u32), "n"
);
id!(
    /// A port of one node, numbered from 0 on that node.
    PortId(u16), "p"
);
id!(
    /// A full-duplex link between two ports.
    LinkId(u32), "l"
);
id!(
    /// A flow: one connection or QP pair's traffic in one direction, as the fabric sees it.
    FlowId(u32), "f"
);

/// An 802.1p priority / traffic class, 0–7.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Priority(u8);

/// A priority outside 0–7.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[error("priority {0} is out of range: allowed 0..=7")]
pub struct BadPriority(pub u8);

impl Priority {
    /// The number of priorities an Ethernet port has.
    pub const COUNT: usize = 8;
    /// Priority `p`, which must be 0–7.
    pub const fn new(p: u8) -> Result<Self, BadPriority> {
        if p < 8 {
            Ok(Priority(p))
        } else {
            Err(BadPriority(p))
        }
    }
    /// For constants: panics when `p > 7`.
    pub const fn of(p: u8) -> Self {
        assert!(p < 8, "priority out of range");
        Priority(p)
    }
    /// The priority number.
    pub const fn get(self) -> u8 {
        self.0
    }
    /// The priority as an array index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// All eight priorities, 0 first.
    pub fn all() -> impl Iterator<Item = Priority> {
        (0..8).map(Priority)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "prio{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_bounds() {
        assert!(Priority::new(7).is_ok());
        assert_eq!(Priority::new(8), Err(BadPriority(8)));
        assert_eq!(Priority::all().count(), 8);
        assert_eq!(NodeId(3).to_string(), "n3");
    }
}
