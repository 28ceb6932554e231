//! Adaptive retransmission's round-trip estimate (RFC 6298 in integer picoseconds).

use crate::roce::psn::Psn;
use std::collections::VecDeque;
use units::SimTime;

/// The round-trip estimate behind adaptive retransmission: first transmissions still
/// unacknowledged with their send times (Karn: resent PSNs are never sampled), SRTT and
/// RTTVAR as RFC 6298 keeps them, in integer picoseconds, and the timeouts in a row.
#[derive(Clone, Debug, Default)]
pub(super) struct AdaptiveRtt {
    pub(super) sent: VecDeque<(Psn, SimTime)>,
    pub(super) srtt: Option<u64>,
    pub(super) rttvar: u64,
    pub(super) backoff: u32,
}

impl AdaptiveRtt {
    pub(super) fn sample(&mut self, r: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
    }

    /// The acknowledgement of every PSN before `una`: one sample from the oldest of them, how
    /// long a packet waited for its acknowledgement. The responder acknowledges a run of
    /// packets at once (AckReq every few dozen), so the timer must cover that wait, not just
    /// the wire's round trip: sampling the newest packet would time out between ACKs.
    pub(super) fn acked(&mut self, una: Psn, now: SimTime) {
        let mut oldest = None;
        while let Some(&(p, at)) = self.sent.front() {
            if una <= p {
                break;
            }
            oldest.get_or_insert(at);
            self.sent.pop_front();
        }
        if let Some(at) = oldest {
            self.sample(now.saturating_duration_since(at).as_ps());
        }
        self.backoff = 0;
    }
}
