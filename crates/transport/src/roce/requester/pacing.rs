//! DCQCN's reaction point inside the requester: the QP's rate decides when its next request
//! packet may leave, CNPs cut the rate, and the reaction point's timers recover it. The
//! requester owns it so that [`Requester::poll_transmit`] and [`Requester::poll_timeout`] are
//! complete: a host never asks DCQCN itself whether a packet may go.
//!
//! Only requests are paced; READ responses go as the responder makes them (see
//! [`dcqcn`](crate::roce::dcqcn)'s simplifications).

use super::Requester;
use crate::roce::dcqcn::{RateEvent, Rp};
use crate::roce::packet::{RocePacket, Transmit};
use units::SimTime;

/// The reaction point and how many bytes a packet takes on the wire (the framing is the
/// link's, so the host says).
#[derive(Debug)]
pub(super) struct Pacing {
    rp: Rp,
    frame_bytes: fn(&RocePacket) -> u64,
}

impl Requester {
    /// DCQCN: pace this QP's requests with reaction point `rp` from now on; `frame_bytes`
    /// gives a packet's length on the wire, which the rate is charged.
    pub fn set_reaction_point(&mut self, rp: Rp, frame_bytes: fn(&RocePacket) -> u64) {
        self.pacing = Some(Pacing { rp, frame_bytes });
    }

    /// The reaction point, when DCQCN runs.
    pub fn reaction_point(&self) -> Option<&Rp> {
        self.pacing.as_ref().map(|p| &p.rp)
    }

    /// Whether DCQCN's rate holds requests back at `now`.
    pub fn is_paced(&self, now: SimTime) -> bool {
        self.pacing.as_ref().is_some_and(|p| p.rp.next_send() > now)
    }

    /// A CNP for this QP arrived: the reaction point cuts the rate. False without DCQCN.
    pub fn handle_cnp(&mut self, now: SimTime) -> bool {
        match self.pacing.as_mut() {
            Some(p) => {
                p.rp.on_cnp(now);
                true
            }
            None => false,
        }
    }

    /// The next change of the QP's rate, for the trace.
    pub fn poll_rate_change(&mut self) -> Option<RateEvent> {
        self.pacing.as_mut()?.rp.poll_change()
    }

    /// A request packet left: the rate is charged its wire bytes.
    pub(super) fn on_sent(&mut self, now: SimTime, t: &Transmit) {
        if let Some(p) = self.pacing.as_mut() {
            let bytes = (p.frame_bytes)(&t.pkt);
            p.rp.on_sent(now, bytes);
        }
    }

    /// The reaction point's next deadline: its α and rate-increase timers, and while
    /// requests wait on the rate, when the next may go.
    pub(super) fn dcqcn_timeout(&self, now: SimTime) -> Option<SimTime> {
        let p = self.pacing.as_ref()?;
        let next_send = p.rp.next_send();
        let pacing = (next_send > now && self.outstanding() > 0).then_some(next_send);
        match (p.rp.poll_timeout(), pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the reaction point's timers that are due.
    pub(super) fn expire_dcqcn_timers(&mut self, now: SimTime) {
        if let Some(p) = self.pacing.as_mut()
            && p.rp.poll_timeout().is_some_and(|t| t <= now)
        {
            p.rp.handle_timeout(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roce::config::RcConfig;
    use crate::roce::dcqcn::DcqcnParams;
    use crate::roce::requester::{SendRequest, WorkOp};
    use units::SimDuration;

    /// 1,000 bytes on the wire per packet, whatever it carries.
    fn thousand(_: &RocePacket) -> u64 {
        1000
    }

    fn send(id: u64) -> SendRequest {
        SendRequest {
            id,
            op: WorkOp::Send { imm: None },
            len: 100,
            solicited: false,
            fence: false,
            ud: None,
        }
    }

    #[test]
    fn the_requester_paces_itself_at_its_rate_and_says_when_it_may_go_again() {
        let mut r = Requester::new(RcConfig {
            timeout: 14,
            ..RcConfig::default()
        });
        // 8 Gbit/s: 1,000 bytes take 1 µs.
        r.set_reaction_point(Rp::new(DcqcnParams::NVIDIA, 8_000_000), thousand);
        r.post(send(1));
        r.post(send(2));
        let t0 = SimTime::ZERO;
        assert!(r.poll_transmit(t0).is_some());
        assert!(r.is_paced(t0));
        assert!(
            r.poll_transmit(t0).is_none(),
            "the second waits for the rate"
        );
        let next = t0 + SimDuration::from_us(1);
        assert_eq!(
            r.poll_timeout(t0),
            Some(next),
            "the pacing deadline, before the ACK timer"
        );
        assert!(!r.is_paced(next));
        assert!(r.poll_transmit(next).is_some());
        // A CNP cuts the rate; the trace hears of it.
        assert!(r.handle_cnp(next));
        let change = r.poll_rate_change().expect("a cut");
        assert!(change.rate_kbps < 8_000_000);
        assert!(r.reaction_point().is_some_and(|rp| rp.counters().cnps == 1));
        // Without DCQCN nothing is paced and a CNP means nothing.
        let mut plain = Requester::new(RcConfig::default());
        assert!(!plain.handle_cnp(t0));
        assert!(!plain.is_paced(t0));
        assert_eq!(plain.poll_rate_change(), None);
    }
}
