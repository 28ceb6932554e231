//! rdmalab as a library: the simulator facade the CLI and the web lab stand on.
//!
//! [`world`] puts hosts (verbs, NIC, PCIe, CPU), transports (RoCE RC/UC/UD, kernel TCP) and
//! the fabric into one event loop; [`report`] runs a scenario plan's TCP and RDMA paths
//! through it and compares them (DESIGN.md §2, §3.7); [`session`] runs verbs session files;
//! [`perftest`], [`incast`], [`permutation`] and [`collective`] are the experiments the CLI
//! names; [`labs`] are the web lab's fabric labs; [`validate`] compares the model's figures
//! with published ones; [`output`] writes result files atomically; [`demo`] is the small tour.
//! The foundation crates are re-exported. `docs/ARCHITECTURE.md` maps the layers and a packet's route.

pub mod collective;
pub mod demo;
pub mod fleet;
pub mod incast;
pub mod labs;
pub mod matrix;
pub mod nvmf;
pub mod output;
pub mod perftest;
pub mod permutation;
pub mod report;
pub mod session;
pub mod validate;
pub mod world;

/// `len` bytes of xorshift64 output from `seed` (one byte per step): the "pattern" fill of
/// session files and the messages the report sends, so a receiver can check every byte.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    PatternGen::new(seed).fill(&mut v);
    v
}

/// [`pattern`]'s bytes a piece at a time: a sender and a receiver of a long message each run
/// one, so neither holds the whole message (memory stays what is in flight, not what moved).
#[derive(Clone, Debug)]
pub struct PatternGen {
    x: u64,
}

impl PatternGen {
    /// The stream [`pattern`] gives for `seed`.
    pub fn new(seed: u64) -> PatternGen {
        PatternGen { x: seed | 1 }
    }

    /// The next `out.len()` bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for b in out {
            self.x ^= self.x << 13;
            self.x ^= self.x >> 7;
            self.x ^= self.x << 17;
            *b = self.x as u8;
        }
    }
}

pub use engine;
pub use fabric;
pub use host;
pub use scenario;
pub use transport;
pub use units;
pub use verbs;
pub use wire;

#[cfg(test)]
mod tests {
    #[test]
    fn a_pattern_in_pieces_is_the_whole_pattern() {
        let whole = super::pattern(7, 1000);
        let mut g = super::PatternGen::new(7);
        let mut pieces = vec![0u8; 1000];
        for chunk in pieces.chunks_mut(37) {
            g.fill(chunk);
        }
        assert_eq!(whole, pieces);
    }
}
