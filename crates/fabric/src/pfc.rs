//! PFC arithmetic: pause quanta, the thresholds a lossless receive buffer uses, the response
//! time the standard allows, and the headroom a lossless port needs.
//!
//! IEEE 802.1Qbb pause times count quanta of 512 bit times at the port's speed (5.12 ns at
//! 100 Gb/s, so the maximum 0xffff quanta is 335.5 µs; research/figures.md §6.3); the
//! conversion is `wire::pfc::pause_duration`.
//!
//! # Thresholds ([`mlx5_thresholds`])
//! Linux's mlx5 driver derives a lossless receive buffer's thresholds from the link speed, the
//! cable length and the MTU (`drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c`,
//! `calculate_xoff` and `update_xoff_threshold`; research/figures.md §6.3). Its `xoff` term is
//! `(301 + 2.16 · cable m) · speed Gb/s + 2.72 · MTU B` with the speed taken as at least
//! 40 Gb/s, computed in integers; XON sits one "max MTU" (the netdev's largest MTU, at least
//! 9216 B) below XOFF. In the driver that term is the room kept above the XOFF point of a buffer
//! whose size the firmware chose (XOFF point = size − term). rdmalab's switch keeps that room
//! separately, as [`headroom_bytes`] derived below, so `lossless.xoff_bytes = "auto"` takes the
//! driver's term as the XOFF threshold itself (assumption: a lossless ingress allowance of one
//! such term before pausing, the reading of research/figures.md §6.3), and XON one max MTU
//! lower, never below one MTU.
//!
//! # Headroom ([`headroom_bytes`])
//! Headroom is the buffer a switch must keep above XOFF for one ingress port and priority,
//! because frames keep arriving after the count crosses XOFF until the upstream port has heard
//! the PAUSE and finished the frame it was sending. The worst case is the sum of IEEE 802.1Qbb
//! Annex N's delay terms (the same decomposition as Cisco's "Priority Flow Control: Build
//! Reliable Layer 2 Infrastructure" white paper):
//!
//! 1. the frame that crossed XOFF, by up to one maximum frame;
//! 2. the PAUSE waiting for the frame this port is sending upstream (≤ one maximum frame time);
//! 3. the PAUSE's own 64 + 20 bytes on the wire;
//! 4. propagation to the upstream port, the upstream's response time ([`response_time`]), and
//! 5. the frame the upstream is in the middle of sending (one maximum frame), and
//! 6. propagation of that frame's last bit back.
//!
//! Steps 2–6 are time during which the upstream sends at line rate. The maximum frame follows
//! the port's MTU, so a 9216-byte jumbo port needs more headroom than a 1500-byte one.

use crate::config::{LinkConfig, PREAMBLE_IFG_BYTES};
use crate::packet::MIN_FRAME_BYTES;
use units::{Bandwidth, ByteLen, SimDuration};

/// The smallest "max MTU" mlx5 assumes when it places XON below XOFF, bytes.
/// source: port_buffer.c `MINIMUM_MAX_MTU` (9216), used as `max(netdev max_mtu, 9216)`.
pub const MLX5_MINIMUM_MAX_MTU: u64 = 9_216;

/// The slowest speed mlx5's formula counts, Gb/s (slower links are sized as 40 Gb/s).
/// source: port_buffer.c `calculate_xoff` ("minimum speed value is 40Gbps").
const MLX5_MIN_SPEED_GBPS: u64 = 40;

/// XOFF and XON of one lossless priority of one port, bytes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Thresholds {
    /// Ingress bytes at which a PAUSE goes upstream.
    pub xoff_bytes: u64,
    /// Ingress bytes at or below which a RESUME goes upstream.
    pub xon_bytes: u64,
}

/// mlx5's `xoff` term for a port of `bandwidth`, `cable_m` metres of cable and an IP MTU of
/// `mtu_bytes`, bytes, with the driver's integer rounding (2.16 and 2.72 as 216/100 and
/// 272/100, the speed in Mb/s divided by 1000).
pub fn mlx5_xoff_bytes(bandwidth: Bandwidth, cable_m: u64, mtu_bytes: u64) -> u64 {
    let speed_mbps = (bandwidth.bps() / 1_000_000).max(MLX5_MIN_SPEED_GBPS * 1_000);
    (301 + 216 * cable_m / 100) * speed_mbps / 1_000 + 272 * mtu_bytes / 100
}

/// The thresholds `lossless.xoff_bytes = "auto"` uses: XOFF as mlx5's term, XON one max MTU
/// (at least [`MLX5_MINIMUM_MAX_MTU`]) below it, and never below one MTU.
pub fn mlx5_thresholds(bandwidth: Bandwidth, cable_m: u64, mtu_bytes: u64) -> Thresholds {
    let xoff_bytes = mlx5_xoff_bytes(bandwidth, cable_m, mtu_bytes);
    Thresholds {
        xoff_bytes,
        xon_bytes: mlx5_xon_bytes(xoff_bytes, mtu_bytes),
    }
}

/// mlx5's XON for an XOFF of `xoff_bytes` on a port of IP MTU `mtu_bytes`: one max MTU (at
/// least [`MLX5_MINIMUM_MAX_MTU`]) lower, kept between one MTU and XOFF.
pub fn mlx5_xon_bytes(xoff_bytes: u64, mtu_bytes: u64) -> u64 {
    let max_mtu = mtu_bytes.max(MLX5_MINIMUM_MAX_MTU);
    xoff_bytes
        .saturating_sub(max_mtu)
        .max(mtu_bytes.min(xoff_bytes))
}

/// The longest a port may take, after a PAUSE's last bit arrives, to stop starting frames:
/// IEEE 802.3 Table 31B–1 "PAUSE reaction timing", in bit times (10G 60 quanta, 25G 80,
/// 40G 118, 100G 394, 400G 905; one quantum is 512 bit times).
/// source: IEEE Std 802.3 Annex 31B Table 31B–1, as quoted with IEEE 802.1Qbb Annex N's delay
/// model in "How to Compute Headroom for Lossless Ethernet Links" (besthub.dev, the D-Resp row).
/// A speed the table does not list takes the bit times of the next faster listed speed, which
/// is the larger count (assumption; 800G and 1.6T take 400G's).
pub fn response_time(bandwidth: Bandwidth) -> SimDuration {
    const TABLE: [(u64, u64); 5] = [
        (10, 60 * 512),
        (25, 80 * 512),
        (40, 118 * 512),
        (100, 394 * 512),
        (400, 905 * 512),
    ];
    let gbps = bandwidth.bps().div_ceil(1_000_000_000);
    let bits = TABLE
        .iter()
        .find(|&&(g, _)| gbps <= g)
        .map_or(TABLE[4].1, |&(_, b)| b);
    // bits / (bps) seconds, in picoseconds, rounded up.
    SimDuration::from_ps(
        (bits as u128 * 1_000_000_000_000).div_ceil(bandwidth.bps() as u128) as u64,
    )
}

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

    #[test]
    fn headroom_grows_with_mtu_and_response() {
        let link = LinkConfig::new(Bandwidth::gbps(100), 3);
        let r = response_time(link.bandwidth);
        let std = headroom_bytes(&link, 1_522, r);
        let jumbo = headroom_bytes(&link, 9_238, r);
        // Three maximum frames more (the crossing one, and two frame times at line rate).
        assert!(
            (jumbo - std).abs_diff(3 * (9_238 - 1_522)) <= 2,
            "{std} {jumbo}"
        );
        // The response adds its bytes at line rate: 201,728 bit times = 25,216 B.
        let none = headroom_bytes(&link, 1_522, SimDuration::ZERO);
        assert!((std - none).abs_diff(25_216) <= 1, "{none} {std}");
    }

    #[test]
    fn response_times_follow_the_table() {
        // 394 quanta at 100G: 201,728 bit times = 2.01728 µs.
        assert_eq!(
            response_time(Bandwidth::gbps(100)),
            SimDuration::from_ps(2_017_280)
        );
        // 80 quanta at 25G: 40,960 bit times = 1.6384 µs; 905 at 400G: 1.1584 µs.
        assert_eq!(
            response_time(Bandwidth::gbps(25)),
            SimDuration::from_ps(1_638_400)
        );
        assert_eq!(
            response_time(Bandwidth::gbps(400)),
            SimDuration::from_ps(1_158_400)
        );
        // 200G is not listed: 400G's bit times at 200G.
        assert_eq!(
            response_time(Bandwidth::gbps(200)),
            SimDuration::from_ps(2_316_800)
        );
    }

    #[test]
    fn mlx5_formula_as_the_driver_rounds_it() {
        // research/figures.md §6.3: 100G, 3 m, MTU 1500 ≈ 34.8 KB; 100 m ≈ 55.8 KB.
        let t = mlx5_thresholds(Bandwidth::gbps(100), 3, 1_500);
        assert_eq!(t.xoff_bytes, (301 + 6) * 100 + 4_080);
        assert_eq!(t.xon_bytes, t.xoff_bytes - 9_216);
        assert_eq!(
            mlx5_xoff_bytes(Bandwidth::gbps(100), 100, 1_500),
            517 * 100 + 4_080
        );
        // Below 40G the speed counts as 40G.
        assert_eq!(
            mlx5_xoff_bytes(Bandwidth::gbps(25), 3, 1_500),
            mlx5_xoff_bytes(Bandwidth::gbps(40), 3, 1_500)
        );
        // XON never falls below one MTU, nor above XOFF.
        let small = mlx5_thresholds(Bandwidth::gbps(40), 0, 9_000);
        assert!(small.xon_bytes <= small.xoff_bytes);
        assert!(small.xon_bytes >= 9_000.min(small.xoff_bytes));
    }
}
