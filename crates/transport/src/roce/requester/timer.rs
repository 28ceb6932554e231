//! The requester's timers as a table of deadlines, in the TCP side's style
//! ([`crate::tcp::TimerTable`]): arming one overwrites its deadline, stopping it clears it,
//! and [`Requester::poll_timeout`] is the earliest. Nothing is scheduled anywhere else, so a
//! host re-reads `poll_timeout` after each call into the requester and never cancels.
//!
//! | Timer | Armed | On expiry |
//! |---|---|---|
//! | [`Timer::Ack`], the local ACK timeout (`timeout`, IBTA C9-140) | when an RC packet leaves with none armed; again from now when an ACK makes progress, after a sequence NAK's or an RNR NAK's go-back and after a timeout; stopped when nothing is outstanding and when the requester fails | with nothing outstanding, nothing. Otherwise one `retry_cnt` is spent (none left: the oldest request fails with `RetryExceeded`), the backoff of adaptive retransmission doubles, and go-back-N resends from the oldest unacknowledged PSN (or a READ's first missing response); selective repeat resends the oldest missing PSN only |
//! | [`Timer::Rnr`], the RNR wait | an RNR NAK: now + the NAK's RNR timer (IBTA Table 45) | the requester is [`SendState::Ready`] again and the go-back the NAK set up resends |
//!
//!
//! With DCQCN the reaction point ([`pacing`](super::pacing)) adds its own deadlines to
//! `poll_timeout`, kept in [`Rp`](crate::roce::dcqcn::Rp) rather than in this table:
//!
//! | Deadline | Armed | On expiry |
//! |---|---|---|
//! | α update | the first CNP of an episode, then every `alpha_period` | α decays (or grows after a period with a CNP) |
//! | rate increase | a rate cut, then every `timer` until line rate | one timer stage of fast recovery / additive / hyper increase |
//! | pacing | a request packet left, while requests remain | the next request may go (`poll_transmit` yields it) |
//!
//! Simultaneous expiries: the RNR wait ends first, then the ACK timer is looked at, then the
//! reaction point's timers (which run on after the requester fails).

use super::{ReqStatus, Requester, RequesterEvent, RetransmitReason, SendState};
use crate::roce::config::{IRN_RTO_HIGH, IRN_RTO_LOW, IRN_RTO_LOW_MAX_INFLIGHT};
use units::{SimDuration, SimTime};

/// One of the requester's timers.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Timer {
    /// The local ACK timeout: packets outstanding and nothing heard for this long.
    Ack = 0,
    /// The wait an RNR NAK asked for before sending again.
    Rnr = 1,
}

/// The deadline of each [`Timer`], or `None` when it is not armed.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct TimerTable {
    data: [Option<SimTime>; 2],
}

impl TimerTable {
    /// Arms `timer` to expire at `at`, replacing any earlier deadline.
    pub fn set(&mut self, timer: Timer, at: SimTime) {
        self.data[timer as usize] = Some(at);
    }

    /// Arms `timer` at `at`, or stops it when `at` is `None`.
    pub fn put(&mut self, timer: Timer, at: Option<SimTime>) {
        self.data[timer as usize] = at;
    }

    /// The deadline of `timer`.
    pub fn get(&self, timer: Timer) -> Option<SimTime> {
        self.data[timer as usize]
    }

    /// Disarms `timer`.
    pub fn stop(&mut self, timer: Timer) {
        self.data[timer as usize] = None;
    }

    /// Whether `timer` is armed and due at `now`.
    pub fn expired(&self, timer: Timer, now: SimTime) -> bool {
        self.get(timer).is_some_and(|t| t <= now)
    }

    /// The earliest deadline of all.
    pub fn next(&self) -> Option<SimTime> {
        self.data.iter().flatten().copied().min()
    }
}

impl Requester {
    /// The local ACK timeout now: the static 4.096 µs × 2^timeout, or with adaptive
    /// retransmission (once a round trip has been measured) max(floor, SRTT + 4·RTTVAR)
    /// doubled per timeout in a row, capped at the static value.
    pub(super) fn ack_timeout(&self) -> Option<SimDuration> {
        let fixed = self.cfg.ack_timeout();
        let Some(min) = self.cfg.adaptive_min else {
            if self.selective() && self.cfg.ack_timeout_override.is_none() {
                // IRN's two timeouts: short when too few packets are in flight to be SACKed.
                let inflight = self.next_psn.distance_from(self.una).max(0) as u32;
                return Some(if inflight <= IRN_RTO_LOW_MAX_INFLIGHT {
                    IRN_RTO_LOW
                } else {
                    IRN_RTO_HIGH
                });
            }
            return fixed;
        };
        // Until the first sample the static timeout stands: a floor of a few µs would fire
        // before the first ACK of a long message could arrive.
        let Some(srtt) = self.rtt.srtt else {
            return fixed;
        };
        let base = (srtt + 4 * self.rtt.rttvar).max(min.as_ps());
        let t = base.saturating_mul(1u64 << self.rtt.backoff.min(30));
        Some(SimDuration::from_ps(match fixed {
            Some(f) => t.min(f.as_ps()),
            None => t,
        }))
    }

    /// (Re)arms the local ACK timer from `now` while anything is outstanding, or stops it.
    pub(super) fn arm_ack_timer(&mut self, now: SimTime) {
        let at = if self.outstanding_psns() {
            self.ack_timeout().map(|d| now + d)
        } else {
            None
        };
        self.timers.put(Timer::Ack, at);
    }

    /// Handles expired timers: the transport's, then the reaction point's (which run on while
    /// the requester has failed, as the QP's rate does).
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.expire_transport_timers(now);
        self.expire_dcqcn_timers(now);
    }

    fn expire_transport_timers(&mut self, now: SimTime) {
        if self.state == SendState::Error {
            return;
        }
        if self.timers.expired(Timer::Rnr, now) {
            self.timers.stop(Timer::Rnr);
            self.state = SendState::Ready;
        }
        if self.timers.expired(Timer::Ack, now) {
            self.timers.stop(Timer::Ack);
            if !self.outstanding_psns() {
                return;
            }
            self.counters.timeouts += 1;
            self.counters.timeout_wait_ps +=
                now.saturating_duration_since(self.last_activity).as_ps();
            self.rtt.backoff += 1;
            if self.retry_left == 0 {
                let una = self.una;
                self.fail_at(una, ReqStatus::RetryExceeded);
                return;
            }
            self.retry_left -= 1;
            let una = self.read_owed().unwrap_or(self.una);
            if self.selective() {
                // Resend the oldest missing packet only: whatever answers it (an ACK, or a
                // SACK NAK when the responder still has a hole) says what else is missing,
                // and a lost ACK costs one duplicate instead of a window of them.
                self.sr.resend.clear();
                let mut q = una;
                while q < self.hw_psn && (self.is_sacked(q) || self.resendable(q).is_none()) {
                    q = q.add(1);
                }
                if q < self.hw_psn {
                    self.sr.resend.push_back(q);
                    self.recovery.reason = RetransmitReason::Timeout;
                    self.recovery.timeout_cover = Some(q.add(1));
                    self.events.push_back(RequesterEvent::Resend {
                        first_psn: q.get(),
                        count: 1,
                        reason: RetransmitReason::Timeout,
                    });
                }
            } else {
                self.go_back(una, RetransmitReason::Timeout);
            }
            self.arm_ack_timer(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_yields_the_earliest_deadline() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::Ack, SimTime::from_ps(30));
        t.set(Timer::Rnr, SimTime::from_ps(20));
        assert_eq!(t.next(), Some(SimTime::from_ps(20)));
        assert!(t.expired(Timer::Rnr, SimTime::from_ps(20)));
        assert!(!t.expired(Timer::Ack, SimTime::from_ps(29)));
        t.stop(Timer::Rnr);
        assert_eq!(t.next(), Some(SimTime::from_ps(30)));
        t.put(Timer::Ack, None);
        assert_eq!(t.next(), None);
    }
}
