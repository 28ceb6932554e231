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
//! Bounded: at most [`MAX_INTERVALS`] disjoint intervals are kept (touching ones merge). When a
//! booking would exceed that, the earliest interval is forgotten: a later booking that starts
//! before it ends could overlap it, which needs a transfer booked that far (hundreds of
//! intervals) behind the rest.

use std::collections::VecDeque;

use units::{SimDuration, SimTime};

/// Disjoint intervals kept per calendar. Assumption: bookings out of order reach back a few
/// intervals (a doorbell microseconds ahead of the NIC's reads), far fewer than this.
pub const MAX_INTERVALS: usize = 256;

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
        for k in 0..(MAX_INTERVALS as u64 * 3) {
            c.book(t(10 * k), d(1));
        }
        assert_eq!(c.busy.len(), MAX_INTERVALS);
        assert_eq!(c.free_from(), t(10 * (MAX_INTERVALS as u64 * 3 - 1) + 1));
    }
}
