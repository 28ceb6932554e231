//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! Read RFC 6298 §2 (SRTT, RTTVAR and RTO), §3 (Karn's algorithm: no samples from retransmitted
//! segments, which [`Connection`](super::Connection) enforces before calling
//! [`RttEstimator::on_sample`]) and §5.5 (exponential backoff). All arithmetic is on integer
//! picoseconds: α = 1/8 and β = 1/4 become shifts of the 64-bit values, so no precision is lost
//! to the clock granularity.
//!
//! Simplifications and what they cost:
//! - The clock granularity G of RFC 6298 §2 is 1 µs (the timestamp tick); with picosecond
//!   samples it only matters when RTTVAR collapses to zero on a perfectly regular path.
//! - RTO = SRTT + max(G, 4·RTTVAR), clamped to [min_rto, max_rto] as RFC 6298 writes it. Linux
//!   instead floors the variance term at `rto_min` (RTO ≥ SRTT + 200 ms); on a 1 ms path
//!   Linux's RTO is 201 ms where ours is 200 ms.
//! - The minimum RTT kept for RACK is the minimum over the connection's life, not Linux's
//!   5-minute windowed minimum; runs are shorter than the window.

use units::SimDuration;

/// The clock granularity G of RFC 6298 §2.
const CLOCK_GRANULARITY: SimDuration = SimDuration::from_us(1);

/// The most doublings of the RTO tracked (2^32 × any RTO is far past `max_rto`).
const MAX_BACKOFF: u32 = 32;

/// SRTT, RTTVAR, the minimum RTT and the backed-off RTO of one connection.
#[derive(Clone, Debug)]
pub(crate) struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    min_rtt: Option<SimDuration>,
    latest: Option<SimDuration>,
    initial_rto: SimDuration,
    min_rto: SimDuration,
    max_rto: SimDuration,
    backoff: u32,
}

impl RttEstimator {
    /// An estimator with no samples yet.
    pub(crate) fn new(
        initial_rto: SimDuration,
        min_rto: SimDuration,
        max_rto: SimDuration,
    ) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            min_rtt: None,
            latest: None,
            initial_rto,
            min_rto,
            max_rto,
            backoff: 0,
        }
    }

    /// Feed one RTT measurement (RFC 6298 §2.2 and §2.3).
    pub(crate) fn on_sample(&mut self, rtt: SimDuration) {
        self.latest = Some(rtt);
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = if srtt > rtt { srtt - rtt } else { rtt - srtt };
                // RTTVAR <- (1 - 1/4) RTTVAR + 1/4 |SRTT - R|, with the old SRTT.
                self.rttvar = SimDuration::from_ps((3 * self.rttvar.as_ps() + err.as_ps()) / 4);
                // SRTT <- (1 - 1/8) SRTT + 1/8 R.
                self.srtt = Some(SimDuration::from_ps((7 * srtt.as_ps() + rtt.as_ps()) / 8));
            }
        }
    }

    /// The smoothed RTT, once there is a sample.
    pub(crate) fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }

    /// The RTT variation estimate.
    pub(crate) fn rttvar(&self) -> SimDuration {
        self.rttvar
    }

    /// The smallest RTT seen.
    pub(crate) fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// The most recent sample.
    pub(crate) fn latest(&self) -> Option<SimDuration> {
        self.latest
    }

    /// The RTO without backoff: SRTT + max(G, 4·RTTVAR) clamped, or the initial RTO.
    pub(crate) fn base_rto(&self) -> SimDuration {
        let Some(srtt) = self.srtt else {
            return self.initial_rto;
        };
        let var = (self.rttvar * 4).max(CLOCK_GRANULARITY);
        srtt.checked_add(var)
            .unwrap_or(SimDuration::MAX)
            .clamp(self.min_rto, self.max_rto)
    }

    /// The RTO with the current backoff applied, at most `max_rto` (RFC 6298 §5.5).
    pub(crate) fn rto(&self) -> SimDuration {
        self.base_rto()
            .checked_mul(1u64 << self.backoff)
            .unwrap_or(SimDuration::MAX)
            .min(self.max_rto)
    }

    /// Double the RTO (RFC 6298 §5.5).
    pub(crate) fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }

    /// Collapse the backoff once new data is acknowledged (RFC 6298 §5.7).
    pub(crate) fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// How many times the RTO has doubled.
    pub(crate) fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            SimDuration::from_secs(1),
            SimDuration::from_ms(200),
            SimDuration::from_secs(120),
        )
    }

    #[test]
    fn first_sample_and_smoothing() {
        let mut e = est();
        assert_eq!(e.rto(), SimDuration::from_secs(1));
        e.on_sample(SimDuration::from_ms(100));
        assert_eq!(e.srtt(), Some(SimDuration::from_ms(100)));
        assert_eq!(e.rttvar(), SimDuration::from_ms(50));
        // 100 + 4 * 50 = 300 ms.
        assert_eq!(e.rto(), SimDuration::from_ms(300));
        e.on_sample(SimDuration::from_ms(200));
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5.
        assert_eq!(e.rttvar(), SimDuration::from_us(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_us(112_500)));
        assert_eq!(e.min_rtt(), Some(SimDuration::from_ms(100)));
    }

    #[test]
    fn min_clamp_and_backoff() {
        let mut e = est();
        e.on_sample(SimDuration::from_us(10));
        assert_eq!(e.rto(), SimDuration::from_ms(200));
        e.back_off();
        assert_eq!(e.rto(), SimDuration::from_ms(400));
        for _ in 0..40 {
            e.back_off();
        }
        assert_eq!(e.rto(), SimDuration::from_secs(120));
        e.reset_backoff();
        assert_eq!(e.rto(), SimDuration::from_ms(200));
    }
}
