//! PFC arithmetic: pause quanta and the headroom a lossless port needs.
//!
//! IEEE 802.1Qbb pause times count quanta of 512 bit times at the port's speed (5.12 ns at
//! 100 Gb/s, so the maximum 0xffff quanta is 335.5 µs; research/figures.md §6.3); the
//! conversion is `wire::pfc::pause_duration`.
//!
//! Headroom is the buffer a switch must keep above XOFF for one ingress port and priority,
//! because frames keep arriving after the count crosses XOFF until the upstream port has heard
//! the PAUSE and finished the frame it was sending. In this model the worst case is:
//!
//! 1. the frame that crossed XOFF, by up to one maximum frame;
//! 2. the PAUSE waiting for the frame this port is sending upstream (≤ one maximum frame time);
//! 3. the PAUSE's own 64 + 20 bytes on the wire;
//! 4. propagation to the upstream port, the upstream's response time, and
//! 5. the frame the upstream is in the middle of sending (one maximum frame), and
//! 6. propagation of that frame's last bit back.
//!
//! Steps 2–6 are time during which the upstream sends at line rate. This is the same
//! decomposition as mlx5's buffer formula (research/figures.md §6.3, cable term plus MTU terms),
//! derived here from our own model so tests can check the bound exactly.

use crate::config::{LinkConfig, PREAMBLE_IFG_BYTES};
use crate::packet::MIN_FRAME_BYTES;
use units::{ByteLen, SimDuration};

/// Headroom in bytes for one ingress port and priority on `link`, for frames of at most
/// `max_frame_bytes` and an upstream that takes `response` to act on a PAUSE.
pub fn headroom_bytes(link: &LinkConfig, max_frame_bytes: u64, response: SimDuration) -> u64 {
    let bw = link.bandwidth;
    let frame_time = bw.serialization_time(ByteLen::new(max_frame_bytes + PREAMBLE_IFG_BYTES));
    let pause_time =
        bw.serialization_time(ByteLen::new(MIN_FRAME_BYTES as u64 + PREAMBLE_IFG_BYTES));
    let window = frame_time + pause_time + link.propagation() * 2 + response + frame_time;
    // (1) the crossing frame + what arrives at line rate during the window (2–6), rounded up.
    max_frame_bytes + bw.bytes_in(window) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    use units::Bandwidth;
    use wire::pfc::pause_duration;

    #[test]
    fn quanta_at_100g() {
        // research/figures.md §6.3: 5.12 ns per quantum, 335.5 µs for 0xffff at 100G.
        let bw = Bandwidth::gbps(100);
        assert_eq!(pause_duration(1, bw), SimDuration::from_ps(5_120));
        assert_eq!(pause_duration(0xffff, bw).as_ps(), 335_539_200);
    }

    #[test]
    fn headroom_grows_with_cable() {
        let short = headroom_bytes(
            &LinkConfig::new(Bandwidth::gbps(100), 3),
            4178,
            SimDuration::ZERO,
        );
        let long = headroom_bytes(
            &LinkConfig::new(Bandwidth::gbps(100), 100),
            4178,
            SimDuration::ZERO,
        );
        // 97 m more cable, both ways, at 12.5 B/ns: 97 × 10 ns × 12.5 B/ns = 12,125 B.
        assert_eq!(long - short, 12_125);
        // 3 m, 4178 B frames: 4178 + 12.5 × (335.84 + 6.72 + 30 + 335.84) ns ≈ 13,033 B.
        assert!((13_000..13_100).contains(&short), "{short}");
    }
}
