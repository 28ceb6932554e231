//! A busy calendar for one serial resource (a PCIe direction) whose bookings arrive out of time
//! order.
//!
//! The simulator books a transfer when it decides on it, not when it happens: a CPU core that
//! runs ahead of simulated time books its doorbell write for when its work ends, microseconds
//! from now, while the NIC books a DMA read for now. A single "busy until" clock would make the
//! read wait behind the later doorbell — the link idle in between, and a TCP sender with a
//! large buffer held to a quarter of the link (model-fidelity issue, item 4). A calendar keeps
//! the booked intervals instead, so each transfer takes the first free gap at or after the time
//! it can start: in time order, the link is work-conserving and serial as before; out of order,
//! an early transfer goes in the gap before a later one.
//!
//! Bounded: intervals that ended [`HORIZON`] before the latest booking are forgotten, and at
//! most [`MAX_INTERVALS`] are kept (touching ones merge); a booking that starts before a
//! forgotten interval ended could overlap it, which needs a transfer booked that far behind the
//! rest. A booking after every other one (the usual case) costs O(1).

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

/// Disjoint intervals kept per calendar at most (a memory bound).
pub const MAX_INTERVALS: usize = 4096;

/// How far behind the latest booking a booking may still start. Assumption: bookings out of
/// order reach back microseconds (a core's work booked ahead of simulated time: a doorbell after
/// a 64 KiB copy, a batch of posted WRs), far less than this; intervals older than that are
/// forgotten.
pub const HORIZON: SimDuration = SimDuration::from_us(100);

/// Booked intervals of one resource, sorted, disjoint and not touching.
#[derive(Clone, Debug, Default)]
pub struct Calendar {
    busy: VecDeque<(SimTime, SimTime)>,
}

impl Calendar {
    /// An empty calendar: the resource is free at every time.
    pub fn new() -> Self {
        Calendar::default()
    }

    /// Books `dur` at the first free gap starting at or after `at`; returns (start, end).
    pub fn book(&mut self, at: SimTime, dur: SimDuration) -> (SimTime, SimTime) {
        // The common case, in time order: after every booking so far.
        match self.busy.back_mut() {
            None => {}
            Some(last) if at == last.1 => {
                last.1 = at + dur;
                return (at, at + dur);
            }
            Some(last) if at > last.1 => {
                if dur > SimDuration::ZERO {
                    self.busy.push_back((at, at + dur));
                    self.forget_before(at);
                }
                return (at, at + dur);
            }
            Some(_) => {}
        }
        // The first interval that ends after `at`: everything before it is over by then.
        let mut i = self.busy.partition_point(|&(_, end)| end <= at);
        let mut start = at;
        while let Some(&(s, e)) = self.busy.get(i) {
            if start + dur <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        let end = start + dur;
        if dur > SimDuration::ZERO {
            self.insert(i, start, end);
        }
        (start, end)
    }

    /// The end of the last booking (when the resource is free for good), for tests and
    /// diagnostics.
    pub fn free_from(&self) -> SimTime {
        self.busy.back().map_or(SimTime::ZERO, |&(_, e)| e)
    }

    /// Drops intervals that ended [`HORIZON`] before `now` (and the oldest beyond
    /// [`MAX_INTERVALS`]): no booking reaches back that far.
    fn forget_before(&mut self, now: SimTime) {
        while let Some(&(_, e)) = self.busy.front() {
            if e + HORIZON >= now && self.busy.len() <= MAX_INTERVALS {
                break;
            }
            self.busy.pop_front();
        }
    }

    /// Inserts [start, end) before interval `i` (which starts at or after `end`), merging with
    /// neighbours it touches.
    fn insert(&mut self, i: usize, start: SimTime, end: SimTime) {
        let touches_prev = i > 0 && self.busy[i - 1].1 == start;
        let touches_next = self.busy.get(i).is_some_and(|&(s, _)| s == end);
        match (touches_prev, touches_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => {
                self.busy.insert(i, (start, end));
                if self.busy.len() > MAX_INTERVALS {
                    self.busy.pop_front();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_ns(ns)
    }

    fn d(ns: u64) -> SimDuration {
        SimDuration::from_ns(ns)
    }

    #[test]
    fn in_order_bookings_queue_behind_each_other() {
        let mut c = Calendar::new();
        assert_eq!(c.book(t(0), d(10)), (t(0), t(10)));
        assert_eq!(c.book(t(5), d(10)), (t(10), t(20)));
        assert_eq!(c.book(t(30), d(5)), (t(30), t(35)));
        assert_eq!(c.free_from(), t(35));
        // Touching intervals merged: [0, 20) and [30, 35).
        assert_eq!(c.busy.len(), 2);
    }

    #[test]
    fn an_early_booking_fills_the_gap_before_a_later_one() {
        let mut c = Calendar::new();
        // A doorbell booked for when the CPU's work ends, 5 µs ahead.
        assert_eq!(c.book(t(5_000), d(1)), (t(5_000), t(5_001)));
        // A read the NIC starts now does not wait for it.
        assert_eq!(c.book(t(100), d(50)), (t(100), t(150)));
        // One that does not fit before it goes after it.
        assert_eq!(c.book(t(4_990), d(20)), (t(5_001), t(5_021)));
        assert_eq!(c.busy.len(), 2);
    }

    #[test]
    fn the_calendar_stays_bounded() {
        let mut c = Calendar::new();
        // One booking every 10 ns: only the last 100 µs of them are kept.
        for k in 0..100_000u64 {
            c.book(t(10 * k), d(1));
        }
        assert!(c.busy.len() <= MAX_INTERVALS + 1, "{}", c.busy.len());
        assert_eq!(c.free_from(), t(10 * 99_999 + 1));
        // Sparse bookings: the count bound holds too.
        let mut c = Calendar::new();
        for k in 0..(MAX_INTERVALS as u64 * 3) {
            c.book(t(k), d(0) + SimDuration::from_ps(1));
        }
        assert!(c.busy.len() <= MAX_INTERVALS + 1);
    }
}
