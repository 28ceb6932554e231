//! rdmalab as a library: the simulator facade the CLI and the web lab stand on.
//!
//! Today this crate re-exports the foundation ([`units`], [`engine`], [`fabric`]) and offers the
//! [`demo`] that `cargo run --release` shows until the web lab exists. Later it grows the
//! `Sim` built from a scenario plan, the hosts, transports and the comparison report
//! (DESIGN.md §2, §3.7).

pub mod demo;
pub mod incast;
pub mod perftest;
pub mod permutation;
pub mod report;
pub mod session;
pub mod world;

pub use engine;
pub use fabric;
pub use host;
pub use scenario;
pub use transport;
pub use units;
pub use verbs;
pub use wire;
