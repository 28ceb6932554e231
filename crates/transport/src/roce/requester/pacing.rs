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
