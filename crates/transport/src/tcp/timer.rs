//! The connection's timers as a table of deadlines (after quinn-proto's `connection/timer.rs`).
//!
//! Every timer is an entry in [`TimerTable`]; arming one overwrites its deadline, stopping it
//! clears it, and [`Connection::poll_timeout`](super::Connection::poll_timeout) is the earliest
//! deadline. Nothing is scheduled anywhere else, so nothing ever needs cancelling in the host's
//! event queue: a host re-reads `poll_timeout` after each call into the connection.

use units::SimTime;

/// One of the connection's timers.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Timer {
    /// Delayed ACK: acknowledge received data that no second segment or outgoing data has
    /// acknowledged yet (RFC 5681 §4.2, RFC 9293 §3.8.6.3).
    DelayedAck = 0,
    /// Tail loss probe timeout, PTO (RFC 8985 §7.2).
    LossProbe = 1,
    /// Zero-window probe (RFC 9293 §3.8.6.1).
    Persist = 2,
    /// RACK reordering timer: re-check segments whose reordering window had not yet run out
    /// (RFC 8985 §6.2 step 5).
    Reorder = 3,
    /// Retransmission timeout, RTO (RFC 6298 §5); also retransmits an unanswered SYN.
    Retransmit = 4,
    /// TIME-WAIT: 2·MSL after both FINs are acknowledged (RFC 9293 §3.6.1).
    TimeWait = 5,
}

impl Timer {
    /// Every timer, in the order [`Connection::handle_timeout`](super::Connection::handle_timeout)
    /// processes simultaneous expiries (the RTO first, so it preempts a PTO due at the same time).
    pub const VALUES: [Timer; 6] = [
        Timer::Retransmit,
        Timer::LossProbe,
        Timer::Reorder,
        Timer::Persist,
        Timer::DelayedAck,
        Timer::TimeWait,
    ];
}

/// The deadline of each [`Timer`], or `None` when it is not armed.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct TimerTable {
    data: [Option<SimTime>; 6],
}

impl TimerTable {
    /// Arm `timer` to expire at `at`, replacing any earlier deadline.
    pub fn set(&mut self, timer: Timer, at: SimTime) {
        self.data[timer as usize] = Some(at);
    }

    /// The deadline of `timer`.
    pub fn get(&self, timer: Timer) -> Option<SimTime> {
        self.data[timer as usize]
    }

    /// Disarm `timer`.
    pub fn stop(&mut self, timer: Timer) {
        self.data[timer as usize] = None;
    }

    /// Whether `timer` is armed.
    pub fn is_armed(&self, timer: Timer) -> bool {
        self.data[timer as usize].is_some()
    }

    /// The earliest deadline of any armed timer.
    pub fn next_timeout(&self) -> Option<SimTime> {
        // A plain loop: hosts call this after every input, and iterator adapters are slow in
        // unoptimised builds.
        let mut next = SimTime::MAX;
        let mut any = false;
        for slot in &self.data {
            if let Some(at) = *slot {
                any = true;
                if at < next {
                    next = at;
                }
            }
        }
        if any { Some(next) } else { None }
    }

    /// Whether `timer` is armed with a deadline at or before `now`.
    pub fn is_expired(&self, timer: Timer, now: SimTime) -> bool {
        self.data[timer as usize].is_some_and(|at| at <= now)
    }

    /// Disarm every timer.
    pub fn stop_all(&mut self) {
        self.data = [None; 6];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::SimDuration;

    #[test]
    fn earliest_deadline_wins() {
        let mut t = TimerTable::default();
        assert_eq!(t.next_timeout(), None);
        let at = |ms| SimTime::ZERO + SimDuration::from_ms(ms);
        t.set(Timer::Retransmit, at(200));
        t.set(Timer::DelayedAck, at(40));
        assert_eq!(t.next_timeout(), Some(at(40)));
        assert!(t.is_expired(Timer::DelayedAck, at(40)));
        assert!(!t.is_expired(Timer::Retransmit, at(40)));
        t.stop(Timer::DelayedAck);
        assert_eq!(t.next_timeout(), Some(at(200)));
        t.stop_all();
        assert!(!t.is_armed(Timer::Retransmit));
    }
}
