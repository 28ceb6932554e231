//! Units for the rdmalab simulator.
//!
//! Everything that decides what happens in a simulation is an integer:
//!
//! - [`time`]: [`SimTime`] (an instant) and [`SimDuration`] (a span), both counting
//!   **picoseconds** in a `u64` (htsim's `simtime_picosec`). A `u64` of picoseconds covers
//!   213 days of simulated time, far beyond any run budget.
//! - [`rate`]: [`Bandwidth`] in bits per second, with serialization times rounded **up** to
//!   the next picosecond in integer arithmetic, so a frame never leaves early.
//! - [`bytes`]: [`ByteLen`], a byte count that prints as B/KiB/MiB/GiB.
//! - [`ids`]: `Copy` handles ([`NodeId`], [`PortId`], [`FlowId`], ...) that index arenas.
//! - [`prob`]: [`Probability`], a fixed-point fraction so that random draws compare integers.
//! - [`access`]: [`RemoteOp`], the access right a remote request needs (shared by the
//!   transport, which reads it off the opcode, and verbs, which checks it).
//!
//! Floats appear only at the edges: parsing user input and printing reports.

pub mod access;
pub mod bytes;
pub mod ids;
pub mod prob;
pub mod rate;
pub mod time;

pub use access::RemoteOp;
pub use bytes::ByteLen;
pub use ids::{FlowId, LinkId, NodeId, PortId, Priority};
pub use prob::Probability;
pub use rate::Bandwidth;
pub use time::{SimDuration, SimTime};

/// An arithmetic result that does not fit in 64 bits.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[error("{0} overflows a 64-bit picosecond/bit count")]
pub struct Overflow(pub &'static str);
