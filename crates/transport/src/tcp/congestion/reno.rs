//! NewReno congestion control (RFC 5681 §3.1, RFC 6582).
//!
//! Slow start adds every acknowledged byte to the window until it reaches `ssthresh`;
//! congestion avoidance adds one SMSS each time a window's worth of bytes has been acknowledged
//! (RFC 5681 §3.1, the byte-counting form of RFC 3465 that Linux's `tcp_cong_avoid_ai` also
//! uses, so delayed ACKs do not slow growth). A loss sets `ssthresh = max(FlightSize/2,
//! 2·SMSS)` (RFC 5681 eq. 4) and the window to `ssthresh`; an RTO sets the window to one segment
//! (the loss window). The partial-ACK and window-inflation parts of RFC 6582 live in the
//! connection, which handles recovery for every controller.
//!
//! Simplifications: no undo of a reduction found spurious later (Linux's
//! `tcp_undo_cwnd_reduction`, driven by DSACK or timestamps), and the slow-start increase per
//! ACK is not capped at 2·SMSS (RFC 3465 L = 2; Linux does not cap it either), so a stretch ACK
//! grows the window by everything it acknowledges.

use super::{Ack, CongestionEvent, Controller};

/// RFC 5681 §3.1 slow start: grow `cwnd` by the acknowledged bytes, at most up to `ssthresh`.
/// Returns the acknowledged bytes left over for congestion avoidance.
pub(crate) fn slow_start(cwnd: &mut u64, ssthresh: u64, acked: u64) -> u64 {
    if *cwnd >= ssthresh {
        return acked;
    }
    let grow = acked.min(ssthresh - *cwnd);
    *cwnd += grow;
    acked - grow
}

/// The loss threshold of RFC 5681 eq. (4): half the flight, at least two segments.
pub(crate) fn half_flight(flight_size: u64, mss: u64) -> u64 {
    (flight_size / 2).max(2 * mss)
}

/// NewReno: additive increase by one segment per window, halving on loss.
#[derive(Clone, Debug)]
pub struct NewReno {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    /// Bytes acknowledged in congestion avoidance since the window last grew.
    acked_since_growth: u64,
}

impl NewReno {
    /// A controller for `mss`-byte segments starting at `initial_window` bytes.
    pub fn new(mss: u64, initial_window: u64) -> NewReno {
        NewReno {
            cwnd: initial_window,
            ssthresh: u64::MAX,
            mss,
            acked_since_growth: 0,
        }
    }

    /// Congestion avoidance: one SMSS per `cwnd` bytes acknowledged.
    pub(crate) fn avoid_congestion(&mut self, acked: u64) {
        self.acked_since_growth += acked;
        if self.acked_since_growth >= self.cwnd {
            let steps = self.acked_since_growth / self.cwnd;
            self.acked_since_growth -= steps * self.cwnd;
            self.cwnd += steps * self.mss;
        }
    }

    /// Set the window and threshold after a reduction computed elsewhere (DCTCP).
    pub(crate) fn set_window(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
        self.ssthresh = cwnd;
        self.acked_since_growth = 0;
    }
}

impl Controller for NewReno {
    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_ack(&mut self, ack: &Ack) {
        let rest = slow_start(&mut self.cwnd, self.ssthresh, ack.acked_bytes);
        if rest > 0 {
            self.avoid_congestion(rest);
        }
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        let target = half_flight(event.flight_size, self.mss);
        self.set_window(target);
    }

    fn on_rto(&mut self, event: &CongestionEvent) {
        self.ssthresh = half_flight(event.flight_size, self.mss);
        self.cwnd = self.mss;
        self.acked_since_growth = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::SimTime;

    fn ack(bytes: u64) -> Ack {
        Ack {
            now: SimTime::ZERO,
            acked_bytes: bytes,
            min_rtt: None,
        }
    }

    #[test]
    fn slow_start_then_one_segment_per_window() {
        let mut r = NewReno::new(100, 1000);
        r.on_congestion_event(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 3000,
        });
        assert_eq!((r.window(), r.ssthresh()), (1500, 1500));
        // A whole window acknowledged in congestion avoidance adds one segment.
        for _ in 0..15 {
            r.on_ack(&ack(100));
        }
        assert_eq!(r.window(), 1600);
        // After an RTO slow start climbs back to ssthresh, then avoidance takes over.
        r.on_rto(&CongestionEvent {
            now: SimTime::ZERO,
            is_ecn: false,
            flight_size: 1600,
        });
        assert_eq!((r.window(), r.ssthresh()), (100, 800));
        r.on_ack(&ack(1000));
        // 700 bytes of slow start reach ssthresh; 300 more are counted toward avoidance.
        assert_eq!(r.window(), 800);
        r.on_ack(&ack(500));
        assert_eq!(r.window(), 900);
    }

    #[test]
    fn loss_threshold_is_at_least_two_segments() {
        assert_eq!(half_flight(100, 100), 200);
        assert_eq!(half_flight(10_000, 100), 5000);
    }
}
