//! CUBIC congestion control (RFC 9438), in integers.
//!
//! Read RFC 9438 §4.2 (the window function W_cubic(t) = C·(t − K)³ + W_max with C = 0.4 and
//! K = ∛((W_max − cwnd_epoch)/C)), §4.3 (the Reno-friendly region, W_est with
//! α_cubic = 3(1 − β)/(1 + β)), §4.4–4.5 (concave and convex growth toward
//! W_cubic(t + RTT), clamped to [cwnd, 1.5·cwnd]), §4.6 (β = 0.7), §4.7 (fast convergence) and
//! §4.8 (timeouts).
//!
//! Fixed point, as Linux's `tcp_cubic.c` does it: time is counted in ticks of 1/1024 s
//! (Linux's `BICTCP_HZ` = 10), windows in bytes, and
//!
//! ```text
//! K [ticks]       = ∛((W_max − cwnd_epoch)/SMSS · 2^30 / C)        with 1/C = 10/4
//! W_cubic(t) − W_max = C · SMSS · (t − K)³ / 2^30                  [bytes]
//! ```
//!
//! The cube root is [`cube_root`], an integer Newton iteration (Linux's `cubic_root` uses a
//! table lookup then one Newton step; both give ⌊∛a⌋ or within one of it). No floating point is
//! used anywhere, so runs do not depend on libm.
//!
//! Simplifications and what they cost:
//! - No HyStart (Linux enables HyStart++-like delay detection by default): slow start runs until
//!   the first loss, so it overshoots more on a deep-buffered path and the first recovery is
//!   larger.
//! - "RTT" in W_cubic(t + RTT) is the minimum RTT, as in Linux (`delay_min`); RFC 9438 uses the
//!   smoothed RTT. The difference is the queueing delay, one term inside a cube of seconds.
//! - The window-limited check (RFC 9438 §5.8, app-limited epochs) is the connection's generic
//!   cwnd-limited test; the epoch is not restarted after an idle period.

use units::{SimDuration, SimTime};

use super::reno::slow_start;
use super::{Ack, CongestionEvent, Controller};

/// β_cubic = 0.7 (RFC 9438 §4.6) as 7/10.
const BETA_NUM: u64 = 7;
const BETA_DEN: u64 = 10;
/// C = 0.4 (RFC 9438 §5) as 4/10.
const C_NUM: u128 = 4;
const C_DEN: u128 = 10;
/// α_cubic = 3(1 − β)/(1 + β) = 0.9/1.7 = 9/17 (RFC 9438 §4.3).
const ALPHA_NUM: u128 = 9;
const ALPHA_DEN: u128 = 17;
/// Ticks per second: time is measured in 2^-10 s.
const TICK_SHIFT: u32 = 10;
/// |t − K| is capped at 2^16 ticks (64 s) so the cube stays well inside 128 bits.
const MAX_OFFSET_TICKS: u64 = 1 << 16;

/// ⌊∛a⌋ in integers: Newton's iteration x ← (2x + a/x²)/3 started above the root, which
/// decreases monotonically to the floor of the root.
pub fn cube_root(a: u64) -> u64 {
    if a < 8 {
        return u64::from(a > 0);
    }
    let bits = 64 - a.leading_zeros();
    // 2^ceil(bits/3) ≥ ∛(2^bits) > ∛a.
    let mut x = 1u64 << bits.div_ceil(3);
    loop {
        let y = (2 * x + a / (x * x)) / 3;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// Ticks of 1/1024 s in `d`, rounded down.
fn ticks(d: SimDuration) -> u64 {
    ((u128::from(d.as_ps()) << TICK_SHIFT) / 1_000_000_000_000) as u64
}

/// CUBIC: cubic window growth around the last maximum, β = 0.7.
#[derive(Clone, Debug)]
pub struct Cubic {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    /// W_max: the window just before the last reduction (after fast convergence), in bytes.
    w_max: u64,
    /// cwnd before the last reduction (`cwnd_prior`), in bytes.
    cwnd_prior: u64,
    /// Start of the current congestion-avoidance epoch.
    epoch_start: Option<SimTime>,
    /// K, in ticks.
    k_ticks: u64,
    /// The window the cubic function is centred on for this epoch (W_max, or cwnd when the
    /// epoch starts above W_max).
    origin: u64,
    /// W_est, the Reno-friendly estimate, in bytes, and its fractional remainder.
    w_est: u64,
    w_est_rem: u128,
    /// Fractional remainder of concave/convex growth, in bytes × cwnd.
    grow_rem: u128,
}

impl Cubic {
    /// A controller for `mss`-byte segments starting at `initial_window` bytes.
    pub fn new(mss: u64, initial_window: u64) -> Cubic {
        Cubic {
            cwnd: initial_window,
            ssthresh: u64::MAX,
            mss,
            w_max: 0,
            cwnd_prior: 0,
            epoch_start: None,
            k_ticks: 0,
            origin: 0,
            w_est: 0,
            w_est_rem: 0,
            grow_rem: 0,
        }
    }

    /// W_max, in bytes (0 before the first congestion event).
    pub fn w_max(&self) -> u64 {
        self.w_max
    }

    /// K of the current epoch, in ticks of 1/1024 s.
    pub fn k_ticks(&self) -> u64 {
        self.k_ticks
    }

    /// W_cubic at `t` ticks into the epoch, in bytes (RFC 9438 eq. 1).
    fn w_cubic(&self, t: u64) -> u64 {
        let (offset, below) = if t < self.k_ticks {
            (self.k_ticks - t, true)
        } else {
            (t - self.k_ticks, false)
        };
        let offset = u128::from(offset.min(MAX_OFFSET_TICKS));
        let delta =
            C_NUM * u128::from(self.mss) * offset * offset * offset / (C_DEN << (3 * TICK_SHIFT));
        let delta = u64::try_from(delta).unwrap_or(u64::MAX);
        if below {
            self.origin.saturating_sub(delta)
        } else {
            self.origin.saturating_add(delta)
        }
    }

    /// Start a congestion-avoidance epoch (RFC 9438 §4.2): compute K and reset W_est.
    fn start_epoch(&mut self, now: SimTime) {
        self.epoch_start = Some(now);
        if self.cwnd < self.w_max {
            let segments_scaled = (u128::from(self.w_max - self.cwnd) * C_DEN) << (3 * TICK_SHIFT);
            let a = segments_scaled / (C_NUM * u128::from(self.mss));
            self.k_ticks = cube_root(u64::try_from(a).unwrap_or(u64::MAX));
            self.origin = self.w_max;
        } else {
            self.k_ticks = 0;
            self.origin = self.cwnd;
        }
        self.w_est = self.cwnd;
        self.w_est_rem = 0;
        self.grow_rem = 0;
    }

    /// The multiplicative decrease shared by losses, ECN and timeouts (RFC 9438 §4.6–4.7).
    fn reduce(&mut self) {
        self.epoch_start = None;
        self.cwnd_prior = self.cwnd;
        // Fast convergence: release bandwidth when the maximum is falling.
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (BETA_DEN + BETA_NUM) / (2 * BETA_DEN)
        } else {
            self.cwnd
        };
        self.ssthresh = (self.cwnd * BETA_NUM / BETA_DEN).max(2 * self.mss);
    }
}

impl Controller for Cubic {
    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &Ack) {
        let acked = slow_start(&mut self.cwnd, self.ssthresh, ack.acked_bytes);
        if acked == 0 {
            return;
        }
        let epoch_start = match self.epoch_start {
            Some(t) => t,
            None => {
                self.start_epoch(ack.now);
                ack.now
            }
        };
        let t = ticks(ack.now.saturating_duration_since(epoch_start));
        let rtt = ticks(ack.min_rtt.unwrap_or(SimDuration::ZERO));

        // Reno-friendly estimate (RFC 9438 §4.3), in bytes.
        let (a_num, a_den) = if self.w_est >= self.cwnd_prior {
            (1, 1)
        } else {
            (ALPHA_NUM, ALPHA_DEN)
        };
        self.w_est_rem += a_num * u128::from(self.mss) * u128::from(acked);
        let per = a_den * u128::from(self.cwnd);
        let inc = self.w_est_rem / per;
        self.w_est_rem -= inc * per;
        self.w_est += inc as u64;

        if self.w_cubic(t) < self.w_est {
            // Reno-friendly region.
            self.cwnd = self.cwnd.max(self.w_est);
            return;
        }
        // Concave or convex region: approach W_cubic(t + RTT) (RFC 9438 §4.4, §4.5).
        let target = self
            .w_cubic(t + rtt)
            .clamp(self.cwnd, self.cwnd + self.cwnd / 2);
        self.grow_rem += u128::from(target - self.cwnd) * u128::from(acked);
        let inc = self.grow_rem / u128::from(self.cwnd);
        self.grow_rem -= inc * u128::from(self.cwnd);
        self.cwnd += inc as u64;
    }

    fn on_congestion_event(&mut self, _event: &CongestionEvent) {
        self.reduce();
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, _event: &CongestionEvent) {
        self.reduce();
        self.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_root_is_exact_floor() {
        for a in (0u64..5000).chain([u64::MAX, u64::MAX - 1, 1 << 63, 27, 26, 28]) {
            let r = cube_root(a);
            assert!(u128::from(r).pow(3) <= u128::from(a), "a = {a}, r = {r}");
            assert!(u128::from(r + 1).pow(3) > u128::from(a), "a = {a}, r = {r}");
        }
        for r in [1u64, 2, 1000, 2_642_245] {
            assert_eq!(cube_root(r * r * r), r);
            assert_eq!(cube_root(r * r * r - 1), r - 1);
        }
    }

    #[test]
    fn k_matches_rfc_formula() {
        // W_max = 100 segments, β = 0.7: K = ∛(100 · 0.3 / 0.4) = ∛75 ≈ 4.217 s ≈ 4318 ticks.
        let mss = 1000;
        let mut c = Cubic::new(mss, 100 * mss);
        c.on_congestion_event(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 100 * mss,
        });
        assert_eq!(c.window(), 70 * mss);
        assert_eq!(c.w_max(), 100 * mss);
        c.on_ack(&Ack {
            now: SimTime::ZERO,
            acked_bytes: mss,
            min_rtt: None,
        });
        assert!((4316..=4319).contains(&c.k_ticks()), "K = {}", c.k_ticks());
        // At t = K the cubic function is back at W_max.
        assert_eq!(c.w_cubic(c.k_ticks()), 100 * mss);
        // One second after K it is W_max + 0.4 segments.
        assert_eq!(c.w_cubic(c.k_ticks() + 1024), 100 * mss + 400);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mss = 1000;
        let mut c = Cubic::new(mss, 100 * mss);
        let ev = CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 0,
        };
        c.on_congestion_event(&ev);
        assert_eq!(c.w_max(), 100 * mss);
        // A second loss below W_max: W_max = 70 · (1 + 0.7)/2 = 59.5 segments.
        c.on_congestion_event(&ev);
        assert_eq!(c.w_max(), 59_500);
        assert_eq!(c.window(), 49_000);
    }

    #[test]
    fn grows_back_toward_w_max_then_beyond() {
        let mss = 1000;
        let mut c = Cubic::new(mss, 100 * mss);
        c.on_congestion_event(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 0,
        });
        // Feed one window of ACKs every 100 ms RTT for 10 s.
        let rtt = SimDuration::from_ms(100);
        let mut now = SimTime::ZERO;
        let mut at_k = 0;
        for round in 0..100 {
            let w = c.window();
            for _ in 0..w / mss {
                c.on_ack(&Ack {
                    now,
                    acked_bytes: mss,
                    min_rtt: Some(rtt),
                });
            }
            now += rtt;
            if round == 42 {
                at_k = c.window();
            }
        }
        // Near K (≈ 4.2 s) the window plateaus near W_max, then it probes beyond.
        assert!((95_000..=106_000).contains(&at_k), "at K: {at_k}");
        assert!(c.window() > 110_000, "after 10 s: {}", c.window());
    }
}
