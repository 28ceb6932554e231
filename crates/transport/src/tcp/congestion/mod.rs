//! Congestion control as a trait with default no-op hooks and enum dispatch (after smoltcp's
//! `socket/tcp/congestion.rs` and quinn-proto's `congestion.rs`).
//!
//! The connection owns loss detection and recovery; a [`Controller`] owns only the congestion
//! window and the slow-start threshold, both in bytes (RFC 5681 §2), and is told what happened
//! through its hooks:
//!
//! - [`Controller::on_ack`]: new data was cumulatively acknowledged while the window may grow
//!   (not in fast recovery or CWR, and the sender was using its window: RFC 7661 §4.1's
//!   "cwnd-limited" test, simplified).
//! - [`Controller::on_ack_event`]: every acknowledgment, with its ECN-Echo bit (DCTCP counts
//!   marked bytes here).
//! - [`Controller::on_congestion_event`]: the start of a fast recovery, a TLP-repaired loss, or
//!   an ECN-Echo (`is_ecn`), at most once per window of data.
//! - [`Controller::on_rto`]: a retransmission timeout.
//! - [`Controller::on_recovery_exit`]: the recovery point was acknowledged.
//!
//! [`AnyController`] dispatches over the three implementations with a `match`, no `Box<dyn>`:
//! [`NewReno`] (RFC 5681, RFC 6582), [`Cubic`] (RFC 9438) and [`Dctcp`] (RFC 8257). Every one
//! computes in integers; CUBIC's cube root is an integer Newton iteration.

pub mod cubic;
pub mod dctcp;
pub mod reno;

pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use reno::NewReno;

use units::{SimDuration, SimTime};

use super::config::CongestionControl;

/// An acknowledgment that lets the window grow.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Ack {
    /// When it arrived.
    pub now: SimTime,
    /// Sequence space it newly acknowledged cumulatively, in bytes.
    pub acked_bytes: u64,
    /// The smallest RTT measured so far (CUBIC's "t + RTT"), if any.
    pub min_rtt: Option<SimDuration>,
}

/// Any acknowledgment, for controllers that measure (DCTCP's fraction of marked bytes).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct AckEvent {
    /// When it arrived.
    pub now: SimTime,
    /// Bytes it newly acknowledged, cumulatively or by SACK.
    pub delivered_bytes: u64,
    /// Whether it carried ECN-Echo.
    pub ece: bool,
    /// The cumulative acknowledgment after it, as a sequence offset from the ISN.
    pub snd_una: u64,
    /// The next new sequence offset to be sent.
    pub snd_nxt: u64,
}

/// A loss or an ECN-Echo that calls for a smaller window.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CongestionEvent {
    /// When it was detected.
    pub now: SimTime,
    /// An ECN-Echo rather than a loss.
    pub is_ecn: bool,
    /// Sequence space outstanding when it was detected (RFC 5681 FlightSize), in bytes.
    pub flight_size: u64,
}

/// A congestion controller: the window and the threshold, and hooks that move them.
pub trait Controller {
    /// The congestion window, in bytes.
    fn window(&self) -> u64;

    /// The slow-start threshold, in bytes (`u64::MAX` until the first congestion event).
    fn ssthresh(&self) -> u64;

    /// New data was acknowledged and the window may grow.
    fn on_ack(&mut self, ack: &Ack) {
        let _ = ack;
    }

    /// Any acknowledgment arrived.
    fn on_ack_event(&mut self, event: &AckEvent) {
        let _ = event;
    }

    /// A loss (fast recovery, TLP-repaired loss) or an ECN-Echo.
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        let _ = event;
    }

    /// The retransmission timer expired.
    fn on_rto(&mut self, event: &CongestionEvent) {
        let _ = event;
    }

    /// Fast recovery ended: everything outstanding at its start is acknowledged.
    fn on_recovery_exit(&mut self, now: SimTime) {
        let _ = now;
    }
}

/// One of the built-in controllers, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum AnyController {
    /// CUBIC.
    Cubic(Cubic),
    /// DCTCP.
    Dctcp(Dctcp),
    /// NewReno.
    NewReno(NewReno),
}

impl AnyController {
    /// A controller of `kind` for segments of `mss` payload bytes, starting from
    /// `initial_window` bytes.
    pub fn new(kind: CongestionControl, mss: u64, initial_window: u64) -> AnyController {
        match kind {
            CongestionControl::Cubic => AnyController::Cubic(Cubic::new(mss, initial_window)),
            CongestionControl::Dctcp => AnyController::Dctcp(Dctcp::new(mss, initial_window)),
            CongestionControl::NewReno => AnyController::NewReno(NewReno::new(mss, initial_window)),
        }
    }

    /// Which controller this is.
    pub fn kind(&self) -> CongestionControl {
        match self {
            AnyController::Cubic(_) => CongestionControl::Cubic,
            AnyController::Dctcp(_) => CongestionControl::Dctcp,
            AnyController::NewReno(_) => CongestionControl::NewReno,
        }
    }

    fn inner(&self) -> &dyn Controller {
        match self {
            AnyController::Cubic(c) => c,
            AnyController::Dctcp(c) => c,
            AnyController::NewReno(c) => c,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn Controller {
        match self {
            AnyController::Cubic(c) => c,
            AnyController::Dctcp(c) => c,
            AnyController::NewReno(c) => c,
        }
    }
}

impl Controller for AnyController {
    fn window(&self) -> u64 {
        self.inner().window()
    }
    fn ssthresh(&self) -> u64 {
        self.inner().ssthresh()
    }
    fn on_ack(&mut self, ack: &Ack) {
        self.inner_mut().on_ack(ack);
    }
    fn on_ack_event(&mut self, event: &AckEvent) {
        self.inner_mut().on_ack_event(event);
    }
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.inner_mut().on_congestion_event(event);
    }
    fn on_rto(&mut self, event: &CongestionEvent) {
        self.inner_mut().on_rto(event);
    }
    fn on_recovery_exit(&mut self, now: SimTime) {
        self.inner_mut().on_recovery_exit(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_reaches_the_controller() {
        for kind in [
            CongestionControl::Cubic,
            CongestionControl::Dctcp,
            CongestionControl::NewReno,
        ] {
            let mut c = AnyController::new(kind, 1000, 10_000);
            assert_eq!(c.kind(), kind);
            assert_eq!(c.window(), 10_000);
            assert_eq!(c.ssthresh(), u64::MAX);
            c.on_ack(&Ack {
                now: SimTime::ZERO,
                acked_bytes: 2000,
                min_rtt: None,
            });
            assert_eq!(c.window(), 12_000, "{kind} slow start");
            c.on_rto(&CongestionEvent {
                now: SimTime::ZERO,
                is_ecn: false,
                flight_size: 12_000,
            });
            assert_eq!(c.window(), 1000, "{kind} loss window");
        }
    }
}
