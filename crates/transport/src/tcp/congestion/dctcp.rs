//! DCTCP congestion control (RFC 8257), with α in fixed point.
//!
//! Read RFC 8257 §3.3 (the sender): over each window of data (one RTT, from the sequence
//! number sent when the window opened until it is acknowledged) count the bytes acknowledged
//! and those acknowledged with ECN-Echo; at the end of the window update
//!
//! ```text
//! α ← (1 − g)·α + g·F,   F = marked bytes / acknowledged bytes,   g = 1/16
//! ```
//!
//! and on an ECN-Echo (at most once per window, which the connection's CWR state enforces)
//! cut the window to `cwnd·(1 − α/2)`. Losses and timeouts get the standard NewReno response
//! (RFC 8257 §3.5), and growth is NewReno's. The receiver side, which echoes CE marks exactly
//! with the delayed-ACK state machine of RFC 8257 §3.2, is in the connection.
//!
//! α is a fraction with 32 fractional bits (`ALPHA_ONE` = 2^32 is 1.0); Linux keeps 10 bits
//! (`DCTCP_MAX_ALPHA` = 1024), which floors α at 15/1024 because `α >> 4` rounds to zero below
//! 16; with 32 bits the floor is negligible. α starts at 1, Linux's `dctcp_alpha_on_init`
//! default, so the first marked window halves the window like classic ECN.
//!
//! Simplifications: the cut is applied at once when the first ECN-Echo of a window arrives
//! (Linux spreads it with PRR), and no growth happens until the data outstanding at the cut is
//! acknowledged (Linux's CWR state); ECN++ (ECT on SYNs) is not modelled.

use units::Probability;

use super::reno::{NewReno, half_flight};
use super::{Ack, AckEvent, CongestionEvent, Controller};

/// α = 1.0 in fixed point.
const ALPHA_ONE: u64 = 1 << 32;
/// g = 1/16 (RFC 8257 §4.2, Linux `dctcp_shift_g` = 4) as a shift.
const G_SHIFT: u32 = 4;

/// DCTCP: NewReno growth, cuts in proportion to the fraction of marked bytes.
#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: NewReno,
    mss: u64,
    /// α with 32 fractional bits.
    alpha: u64,
    /// The sequence offset whose acknowledgment closes the current observation window.
    window_end: Option<u64>,
    acked_bytes: u64,
    marked_bytes: u64,
}

impl Dctcp {
    /// A controller for `mss`-byte segments starting at `initial_window` bytes.
    pub fn new(mss: u64, initial_window: u64) -> Dctcp {
        Dctcp {
            reno: NewReno::new(mss, initial_window),
            mss,
            alpha: ALPHA_ONE,
            window_end: None,
            acked_bytes: 0,
            marked_bytes: 0,
        }
    }

    /// The current estimate α of the fraction of marked bytes.
    pub fn alpha(&self) -> Probability {
        Probability::from_ratio(self.alpha, ALPHA_ONE)
    }

    /// Close an observation window: α ← α − α·g + F·g.
    fn update_alpha(&mut self) {
        let fraction = if self.acked_bytes == 0 {
            0
        } else {
            ((u128::from(self.marked_bytes) << 32) / u128::from(self.acked_bytes)) as u64
        };
        self.alpha = (self.alpha - (self.alpha >> G_SHIFT) + (fraction >> G_SHIFT)).min(ALPHA_ONE);
        self.acked_bytes = 0;
        self.marked_bytes = 0;
    }
}

impl Controller for Dctcp {
    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }

    fn on_ack(&mut self, ack: &Ack) {
        self.reno.on_ack(ack);
    }

    fn on_ack_event(&mut self, event: &AckEvent) {
        self.acked_bytes += event.delivered_bytes;
        if event.ece {
            self.marked_bytes += event.delivered_bytes;
        }
        match self.window_end {
            Some(end) if event.snd_una < end => {}
            Some(_) => {
                self.update_alpha();
                self.window_end = Some(event.snd_nxt);
            }
            None => self.window_end = Some(event.snd_nxt),
        }
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        if !event.is_ecn {
            self.reno
                .set_window(half_flight(event.flight_size, self.mss));
            return;
        }
        let cwnd = self.reno.window();
        let cut = ((u128::from(cwnd) * u128::from(self.alpha)) >> 33) as u64;
        self.reno.set_window((cwnd - cut).max(2 * self.mss));
    }

    fn on_rto(&mut self, event: &CongestionEvent) {
        self.reno.on_rto(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::SimTime;

    fn ack(dc: &mut Dctcp, una: u64, nxt: u64, bytes: u64, ece: bool) {
        dc.on_ack_event(&AckEvent {
            now: SimTime::ZERO,
            delivered_bytes: bytes,
            ece,
            snd_una: una,
            snd_nxt: nxt,
        });
    }

    fn ecn_cut(dc: &mut Dctcp) {
        dc.on_congestion_event(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: true,
            flight_size: 0,
        });
    }

    #[test]
    fn alpha_follows_the_marked_fraction() {
        let mut dc = Dctcp::new(1000, 100_000);
        assert_eq!(dc.alpha(), Probability::ONE);
        // Open a window, then acknowledge windows with no marks: α decays by 15/16 each.
        ack(&mut dc, 0, 10_000, 0, false);
        let mut una = 0;
        for _ in 0..10 {
            una += 10_000;
            ack(&mut dc, una, una + 10_000, 10_000, false);
        }
        let expected = (15.0f64 / 16.0).powi(10);
        assert!((dc.alpha().as_f64() - expected).abs() < 1e-6);
        // Windows with a quarter of the bytes marked converge α to 1/4.
        for _ in 0..200 {
            una += 10_000;
            ack(&mut dc, una - 5_000, una + 10_000, 7_500, false);
            ack(&mut dc, una, una + 10_000, 2_500, true);
        }
        assert!((dc.alpha().as_f64() - 0.25).abs() < 1e-3, "{}", dc.alpha());
        // The cut is α/2 = 12.5%.
        ecn_cut(&mut dc);
        assert_eq!(dc.window(), 87_500);
    }

    #[test]
    fn first_mark_halves_and_loss_halves() {
        let mut dc = Dctcp::new(1000, 100_000);
        ecn_cut(&mut dc);
        assert_eq!(dc.window(), 50_000);
        dc.on_congestion_event(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 40_000,
        });
        assert_eq!(dc.window(), 20_000);
    }
}
