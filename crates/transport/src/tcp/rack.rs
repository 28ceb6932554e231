//! RACK: time-based loss detection (RFC 8985 §6).
//!
//! Read RFC 8985 §6.2: on every ACK, remember the transmit time of the most recently *sent*
//! segment that was delivered (RACK.xmit_ts, RACK.end_seq) and the RTT it measured (RACK.rtt);
//! any segment sent before it that is still unacknowledged after RACK.rtt plus a reordering
//! window (`reo_wnd`) is lost. Because a retransmission gets a fresh transmit time, a lost
//! retransmission is detected the same way as a lost original, with no RTO. Segments whose time
//! has not yet run out arm the reorder timer.
//!
//! `reo_wnd` is RFC 8985 §6.2 step 4: zero while no reordering has been seen and the sender is
//! already in recovery or has DupThresh segments SACKed, otherwise min(min_RTT/4, SRTT).
//!
//! Simplifications and what they cost:
//! - No DSACK (RFC 2883): the reordering-window multiplier (RACK.reo_wnd_mult) stays at 1, so a
//!   path that reorders by more than min_RTT/4 causes spurious retransmissions Linux would
//!   learn to avoid.
//! - Segments are scanned in sequence order rather than kept in a transmit-time-ordered list
//!   (Linux's `tsorted_sent_queue`): the same decisions, O(segments in flight) per ACK while
//!   SACKed data is outstanding.

use units::{SimDuration, SimTime};

use super::scoreboard::{DUP_THRESH, Scoreboard, SentSegment};

/// RFC 8985 `RACK_sent_after`: whether (t1, seq1) was sent after (t2, seq2); ties in time are
/// broken by sequence.
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// The RACK state of one sender.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// Transmit time and end of the most recently sent delivered segment.
    xmit_time: Option<SimTime>,
    end_seq: u64,
    /// The RTT measured by that segment.
    rtt: SimDuration,
    /// Highest delivered sequence end (RACK.fack).
    fack: u64,
    /// A never-retransmitted segment was delivered below `fack`.
    reordering_seen: bool,
}

impl Rack {
    /// RFC 8985 §6.2 steps 2 and 3 for one newly delivered segment, in ascending `end` order.
    /// `echo_at_or_after(t)` tells whether the ACK's timestamp echo dates from `t` or later
    /// (`None` without timestamps).
    pub(crate) fn on_delivered(
        &mut self,
        seg: &SentSegment,
        now: SimTime,
        min_rtt: Option<SimDuration>,
        echo_at_or_after: impl Fn(SimTime) -> Option<bool>,
    ) {
        // Step 3: reordering.
        if seg.end() > self.fack {
            self.fack = seg.end();
        } else if seg.end() < self.fack && !seg.ever_retransmitted {
            self.reordering_seen = true;
        }
        // Step 2: the most recently sent delivered segment.
        let rtt = now.saturating_duration_since(seg.xmit_time);
        if seg.ever_retransmitted {
            // The ACK may be for the original transmission: trust it only if the timestamp
            // echo says it is for the retransmission, or the RTT is plausible.
            if echo_at_or_after(seg.xmit_time) == Some(false) {
                return;
            }
            if min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
        }
        let newer = match self.xmit_time {
            None => true,
            Some(t) => sent_after(seg.xmit_time, seg.end(), t, self.end_seq),
        };
        if newer {
            self.xmit_time = Some(seg.xmit_time);
            self.end_seq = seg.end();
            self.rtt = rtt;
        }
    }

    /// RFC 8985 §6.2 step 4.
    pub(crate) fn reo_wnd(
        &self,
        in_recovery: bool,
        sacked_segments: usize,
        min_rtt: Option<SimDuration>,
        srtt: Option<SimDuration>,
    ) -> SimDuration {
        if !self.reordering_seen && (in_recovery || sacked_segments as u64 >= DUP_THRESH) {
            return SimDuration::ZERO;
        }
        let quarter = min_rtt.map_or(SimDuration::ZERO, |m| m / 4);
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// RFC 8985 §6.2 step 5: mark segments lost whose time ran out; returns how many were
    /// marked and when the reorder timer should fire for the rest.
    pub(crate) fn detect_loss(
        &self,
        board: &mut Scoreboard,
        now: SimTime,
        reo_wnd: SimDuration,
    ) -> (usize, Option<SimTime>) {
        let Some(rack_time) = self.xmit_time else {
            return (0, None);
        };
        let mut marked = 0;
        let mut timer: Option<SimTime> = None;
        for i in 0..board.len() {
            let seg = *board.get(i);
            if seg.sacked || (seg.lost && !seg.retrans) {
                continue;
            }
            if !sent_after(rack_time, self.end_seq, seg.xmit_time, seg.end()) {
                continue;
            }
            let deadline = seg.xmit_time + self.rtt + reo_wnd;
            if deadline <= now {
                board.set_lost(i, true);
                marked += 1;
            } else {
                timer = Some(timer.map_or(deadline, |t| t.max(deadline)));
            }
        }
        (marked, timer)
    }

    /// Whether reordering has been observed.
    #[cfg(test)]
    pub(crate) fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_us(us)
    }

    fn board(times_us: &[u64]) -> Scoreboard {
        let mut b = Scoreboard::default();
        for (i, &t) in times_us.iter().enumerate() {
            b.push(SentSegment::new(1 + 100 * i as u64, 100, false, at(t)));
        }
        b
    }

    #[test]
    fn marks_only_segments_sent_before_the_delivered_one() {
        // Segments sent at 0, 1, 2, 3 µs; the one sent at 3 µs is SACKed at 103 µs.
        let mut b = board(&[0, 1, 2, 3]);
        let mut rack = Rack::default();
        let mut delivered = None;
        b.sack(301, 401, |s| delivered = Some(*s));
        rack.on_delivered(&delivered.unwrap(), at(103), None, |_| None);
        // With a 10 µs window nothing is lost yet; the timer covers the oldest deadline.
        let (n, timer) = rack.detect_loss(&mut b, at(103), SimDuration::from_us(10));
        assert_eq!(n, 0);
        assert_eq!(timer, Some(at(2 + 100 + 10)));
        // At 111 µs the first two are past 0/1 + 100 + 10 µs.
        let (n, timer) = rack.detect_loss(&mut b, at(111), SimDuration::from_us(10));
        assert_eq!(n, 2);
        assert_eq!(timer, Some(at(112)));
        assert!(b.get(0).lost && b.get(1).lost && !b.get(2).lost);
    }

    #[test]
    fn a_lost_retransmission_is_detected() {
        // Segments sent at 0, 1, 2 µs; segment 0 is lost and resent at 50 µs; new data (a
        // fourth segment) goes out at 60 µs and is SACKed at 160 µs.
        let mut b = board(&[0, 1, 2]);
        b.set_lost(0, false);
        b.on_retransmit(0, at(50));
        b.push(SentSegment::new(301, 100, false, at(60)));
        let mut rack = Rack::default();
        let mut delivered = None;
        b.sack(301, 401, |s| delivered = Some(*s));
        rack.on_delivered(
            &delivered.unwrap(),
            at(160),
            Some(SimDuration::from_us(100)),
            |_| None,
        );
        let (n, timer) = rack.detect_loss(&mut b, at(160), SimDuration::ZERO);
        // The retransmission of segment 0 (sent at 50 µs) and segments 1 and 2 are lost.
        assert_eq!(n, 3);
        assert_eq!(timer, None);
        // Segment 0 may be resent again.
        assert_eq!(b.next_to_retransmit(), Some(0));
    }

    #[test]
    fn reordering_window() {
        let mut rack = Rack::default();
        let m = Some(SimDuration::from_us(100));
        assert_eq!(rack.reo_wnd(false, 0, m, m), SimDuration::from_us(25));
        assert_eq!(rack.reo_wnd(true, 0, m, m), SimDuration::ZERO);
        assert_eq!(rack.reo_wnd(false, 3, m, m), SimDuration::ZERO);
        let seg = |start: u64| SentSegment::new(start, 100, false, SimTime::ZERO);
        rack.on_delivered(&seg(201), at(10), None, |_| None);
        rack.on_delivered(&seg(1), at(10), None, |_| None);
        assert!(rack.reordering_seen());
        assert_eq!(rack.reo_wnd(true, 3, m, m), SimDuration::from_us(25));
    }
}
