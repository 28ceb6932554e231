//! rdmalab as a library: the simulator facade the CLI and the web lab stand on.
//!
//! [`world`] puts hosts (verbs, NIC, PCIe, CPU), transports (RoCE RC/UC/UD, kernel TCP) and
//! the fabric into one event loop; [`report`] runs a scenario plan's TCP and RDMA paths
//! through it and compares them (DESIGN.md §2, §3.7); [`session`] runs verbs session files;
//! [`perftest`], [`incast`] and [`permutation`] are the experiments the CLI names; [`demo`] is
//! the small tour. The foundation crates are re-exported.

pub mod demo;
pub mod incast;
pub mod labs;
pub mod perftest;
pub mod permutation;
pub mod report;
pub mod session;
pub mod world;

/// `len` bytes of xorshift64 output from `seed` (one byte per step): the "pattern" fill of
/// session files and the messages the report sends, so a receiver can check every byte.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

pub use engine;
pub use fabric;
pub use host;
pub use scenario;
pub use transport;
pub use units;
pub use verbs;
pub use wire;
