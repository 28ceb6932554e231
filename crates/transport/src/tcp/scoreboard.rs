//! The sender's record of every segment in flight: the SACK scoreboard of RFC 6675.
//!
//! Read RFC 6675 §2 (definitions: SACKed, IsLost, pipe), §4 (the scoreboard and `SetPipe`) and
//! §5 (`NextSeg` rules 1 and 2), and RFC 8985 §6 for the per-segment transmit times RACK reads.
//!
//! Each [`SentSegment`] keeps the sequence range it was first sent with, its latest transmit
//! time and four flags, with running byte totals as Linux keeps `packets_out`, `sacked_out`,
//! `lost_out` and `retrans_out`, so `pipe` costs O(1):
//!
//! ```text
//! pipe = in flight − SACKed − lost + retransmitted      (RFC 6675 §4, SetPipe)
//! ```
//!
//! Simplifications and what they cost:
//! - Segment boundaries never change: a retransmission resends exactly the original segment,
//!   and a SACK block marks only segments it covers completely. Our receiver always reports
//!   whole segments, so only a peer that SACKs part of a segment would see a difference (the
//!   segment is resent whole).
//! - IsLost counts SACKed *segments* above a hole (≥ DupThresh) or SACKed bytes
//!   (> (DupThresh − 1)·SMSS), which is RFC 6675 §4 with a segment standing for a
//!   "discontiguous sequence". DupThresh is fixed at 3; Linux's adaptive reordering degree is
//!   not modelled.
//! - NextSeg rules 3 and 4 (rescue retransmissions) are not implemented; RACK-TLP covers the
//!   cases they exist for.
//! - SACK reneging (RFC 2018 §8) is not handled: a SACKed segment is never resent unless an RTO
//!   fires and the cumulative ACK still has not covered it.

use std::collections::VecDeque;

use units::SimTime;

/// RFC 6675 §2: the number of SACKed segments above a hole that declare it lost.
pub(crate) const DUP_THRESH: u64 = 3;

/// One segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) struct SentSegment {
    /// Sequence offset of the first byte (or of the FIN, for a bare FIN).
    pub(crate) start: u64,
    /// Sequence space used: payload bytes plus one for a FIN.
    pub(crate) len: u32,
    /// Whether the segment carries the FIN.
    pub(crate) fin: bool,
    /// Whether it was sent with PSH (kept on retransmissions, as Linux keeps the skb's flags).
    pub(crate) push: bool,
    /// When it was last (re)transmitted.
    pub(crate) xmit_time: SimTime,
    /// Covered by a SACK block.
    pub(crate) sacked: bool,
    /// Presumed lost (RFC 6675 IsLost, RACK or an RTO).
    pub(crate) lost: bool,
    /// A retransmission of it is in flight and not itself presumed lost.
    pub(crate) retrans: bool,
    /// Retransmitted at least once (Karn's algorithm, RFC 6298 §3).
    pub(crate) ever_retransmitted: bool,
}

impl SentSegment {
    /// A segment sent for the first time at `now`.
    pub(crate) fn new(start: u64, len: u32, fin: bool, now: SimTime) -> SentSegment {
        SentSegment {
            start,
            len,
            fin,
            push: false,
            xmit_time: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retransmitted: false,
        }
    }

    /// Sequence offset one past the segment.
    pub(crate) fn end(&self) -> u64 {
        self.start + u64::from(self.len)
    }

    /// Payload bytes (the FIN takes sequence space but no byte).
    pub(crate) fn payload_len(&self) -> u32 {
        self.len - u32::from(self.fin)
    }
}

/// Every segment in flight, oldest sequence first, with the RFC 6675 running totals.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    segs: VecDeque<SentSegment>,
    /// Sequence space of all segments.
    total: u64,
    /// ... of SACKed segments.
    sacked: u64,
    /// ... of segments lost and not SACKed.
    lost: u64,
    /// ... of segments with a retransmission in flight, not SACKed.
    retrans: u64,
    /// Segments lost, not SACKed and not being retransmitted: what `NextSeg` rule 1 picks from.
    to_retransmit: usize,
    /// Number of SACKed segments.
    sacked_segments: usize,
    /// Everything below this offset has been through the IsLost marking pass.
    marked_below: u64,
}

impl Scoreboard {
    /// Record a segment just sent for the first time; it must follow the last one.
    pub(crate) fn push(&mut self, seg: SentSegment) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.start));
        self.total += u64::from(seg.len);
        self.segs.push_back(seg);
    }

    /// Sequence space in flight (RFC 5681 FlightSize): sent and not cumulatively acknowledged.
    pub(crate) fn flight_size(&self) -> u64 {
        self.total
    }

    /// RFC 6675 `pipe`: the sender's estimate of bytes still in the network.
    pub(crate) fn pipe(&self) -> u64 {
        self.total - self.sacked - self.lost + self.retrans
    }

    /// Sequence space SACKed.
    #[cfg(test)]
    pub(crate) fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    /// Sequence space presumed lost and not SACKed.
    #[cfg(test)]
    pub(crate) fn lost_bytes(&self) -> u64 {
        self.lost
    }

    /// Number of SACKed segments.
    pub(crate) fn sacked_segments(&self) -> usize {
        self.sacked_segments
    }

    /// Whether some lost segment waits for a retransmission.
    pub(crate) fn has_pending_retransmission(&self) -> bool {
        self.to_retransmit > 0
    }

    /// Number of segments held.
    pub(crate) fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether nothing is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// The segment at `i` (0 is the oldest).
    pub(crate) fn get(&self, i: usize) -> &SentSegment {
        &self.segs[i]
    }

    /// Remove every segment wholly below sequence offset `ack`, calling `delivered` for each
    /// one that had not been SACKed; a segment `ack` falls inside is trimmed to start at `ack`.
    pub(crate) fn ack_to(&mut self, ack: u64, mut delivered: impl FnMut(&SentSegment)) {
        while let Some(seg) = self.segs.front().copied() {
            if seg.end() <= ack {
                self.segs.pop_front();
                self.forget(&seg);
                if !seg.sacked {
                    delivered(&seg);
                }
                continue;
            }
            if seg.start < ack {
                // A partial ACK of one segment: keep the rest with the same flags.
                let cut = (ack - seg.start) as u32;
                let mut rest = seg;
                rest.start = ack;
                rest.len -= cut;
                self.forget(&seg);
                self.count(&rest);
                self.segs[0] = rest;
            }
            break;
        }
        self.marked_below = self.marked_below.max(ack);
    }

    /// Mark the segments inside the SACK block `[left, right)` (sequence offsets) as SACKed,
    /// calling `delivered` for each newly SACKed one; returns whether any was new.
    pub(crate) fn sack(
        &mut self,
        left: u64,
        right: u64,
        mut delivered: impl FnMut(&SentSegment),
    ) -> bool {
        let first = self.segs.partition_point(|s| s.start < left);
        let mut any = false;
        for i in first..self.segs.len() {
            let seg = self.segs[i];
            if seg.end() > right {
                break;
            }
            if seg.sacked {
                continue;
            }
            self.forget(&seg);
            let sacked = SentSegment {
                sacked: true,
                ..seg
            };
            self.segs[i] = sacked;
            self.count(&sacked);
            delivered(&seg);
            any = true;
        }
        any
    }

    /// RFC 6675 IsLost over the segments not yet examined: every segment with DupThresh SACKed
    /// segments, or more than (DupThresh − 1)·SMSS SACKed bytes, above it is marked lost.
    /// Returns how many were newly marked.
    pub(crate) fn mark_lost_by_dupthresh(&mut self, smss: u64) -> usize {
        if self.sacked_segments == 0 {
            return 0;
        }
        // Walk down from the newest segment until enough SACKed data lies above.
        let (mut count, mut bytes) = (0u64, 0u64);
        let mut boundary = None;
        for i in (0..self.segs.len()).rev() {
            let seg = &self.segs[i];
            if seg.end() <= self.marked_below {
                break;
            }
            if count >= DUP_THRESH || bytes > (DUP_THRESH - 1) * smss {
                boundary = Some(i);
                break;
            }
            if seg.sacked {
                count += 1;
                bytes += u64::from(seg.len);
            }
        }
        let Some(boundary) = boundary else {
            return 0;
        };
        let first = self.segs.partition_point(|s| s.end() <= self.marked_below);
        let mut marked = 0;
        for i in first..=boundary {
            let seg = self.segs[i];
            if !seg.sacked && !seg.lost {
                self.set_lost(i, false);
                marked += 1;
            }
        }
        self.marked_below = self.segs[boundary].end();
        marked
    }

    /// Presume segment `i` lost. `retransmission_lost` also declares its retransmission lost
    /// (RACK and RTO do; RFC 6675 IsLost does not), making it eligible to be resent.
    pub(crate) fn set_lost(&mut self, i: usize, retransmission_lost: bool) {
        let seg = self.segs[i];
        if seg.sacked {
            return;
        }
        self.forget(&seg);
        let s = &mut self.segs[i];
        s.lost = true;
        if retransmission_lost {
            s.retrans = false;
        }
        let s = *s;
        self.count(&s);
    }

    /// After an RTO: every segment not SACKed is lost, retransmissions included (RFC 6675 §5.1,
    /// RFC 8985 §6.3).
    pub(crate) fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.set_lost(i, true);
        }
        self.marked_below = self.segs.back().map_or(self.marked_below, |s| s.end());
    }

    /// `NextSeg` rule 1 (RFC 6675 §4): the oldest segment lost, not SACKed and not being
    /// retransmitted.
    pub(crate) fn next_to_retransmit(&self) -> Option<usize> {
        if self.to_retransmit == 0 {
            return None;
        }
        self.segs
            .iter()
            .position(|s| s.lost && !s.retrans && !s.sacked)
    }

    /// Record that segment `i` was retransmitted at `now`.
    pub(crate) fn on_retransmit(&mut self, i: usize, now: SimTime) {
        let seg = self.segs[i];
        self.forget(&seg);
        let s = &mut self.segs[i];
        s.retrans = true;
        s.ever_retransmitted = true;
        s.xmit_time = now;
        let s = *s;
        self.count(&s);
    }

    /// Record that the last segment was sent again at `now` as a tail loss probe: its
    /// retransmission is in flight, but it is not presumed lost.
    pub(crate) fn on_probe_retransmit(&mut self, i: usize, now: SimTime) {
        let s = &mut self.segs[i];
        s.ever_retransmitted = true;
        s.xmit_time = now;
    }

    /// Remove a segment's contribution from the totals.
    fn forget(&mut self, seg: &SentSegment) {
        let len = u64::from(seg.len);
        self.total -= len;
        if seg.sacked {
            self.sacked -= len;
            self.sacked_segments -= 1;
            return;
        }
        if seg.lost {
            self.lost -= len;
            if !seg.retrans {
                self.to_retransmit -= 1;
            }
        }
        if seg.retrans {
            self.retrans -= len;
        }
    }

    /// Add a segment's contribution to the totals.
    fn count(&mut self, seg: &SentSegment) {
        let len = u64::from(seg.len);
        self.total += len;
        if seg.sacked {
            self.sacked += len;
            self.sacked_segments += 1;
            return;
        }
        if seg.lost {
            self.lost += len;
            if !seg.retrans {
                self.to_retransmit += 1;
            }
        }
        if seg.retrans {
            self.retrans += len;
        }
    }

    /// Recompute the totals from scratch (tests check the running ones against this).
    #[cfg(test)]
    fn check_totals(&self) {
        let mut fresh = Scoreboard::default();
        for s in &self.segs {
            fresh.count(s);
        }
        assert_eq!(
            (
                fresh.total,
                fresh.sacked,
                fresh.lost,
                fresh.retrans,
                fresh.to_retransmit,
                fresh.sacked_segments
            ),
            (
                self.total,
                self.sacked,
                self.lost,
                self.retrans,
                self.to_retransmit,
                self.sacked_segments
            )
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 100;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(SentSegment::new(
                1 + i * MSS,
                MSS as u32,
                false,
                SimTime::ZERO,
            ));
        }
        b
    }

    fn seg_start(i: u64) -> u64 {
        1 + i * MSS
    }

    #[test]
    fn pipe_follows_rfc6675() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 1000);
        // Segments 3..6 SACKed: segment 0..=2 have three SACKed segments above.
        assert!(b.sack(seg_start(3), seg_start(6), |_| {}));
        assert_eq!(b.pipe(), 700);
        assert_eq!(b.mark_lost_by_dupthresh(MSS), 3);
        assert_eq!(b.pipe(), 400);
        assert_eq!(b.next_to_retransmit(), Some(0));
        b.on_retransmit(0, SimTime::ZERO);
        assert_eq!(b.pipe(), 500);
        assert_eq!(b.next_to_retransmit(), Some(1));
        b.check_totals();
        // Marking again finds nothing new.
        assert_eq!(b.mark_lost_by_dupthresh(MSS), 0);
        // The cumulative ACK covers 0..=2 and the SACKed block.
        let mut delivered = 0;
        b.ack_to(seg_start(6), |_| delivered += 1);
        assert_eq!(delivered, 3);
        assert_eq!(b.pipe(), 400);
        assert_eq!(b.sacked_bytes(), 0);
        b.check_totals();
    }

    #[test]
    fn two_sacked_segments_are_not_enough() {
        let mut b = board(10);
        b.sack(seg_start(4), seg_start(6), |_| {});
        assert_eq!(b.mark_lost_by_dupthresh(MSS), 0);
        b.sack(seg_start(7), seg_start(8), |_| {});
        // Now 0..=3 have three SACKed segments above; 6 has one only.
        assert_eq!(b.mark_lost_by_dupthresh(MSS), 4);
        assert!(!b.get(6).lost);
        b.check_totals();
    }

    #[test]
    fn rto_marks_everything_and_partial_ack_trims() {
        let mut b = board(4);
        b.sack(seg_start(2), seg_start(3), |_| {});
        b.mark_all_lost();
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.lost_bytes(), 300);
        b.ack_to(seg_start(1) + 50, |_| {});
        assert_eq!(b.get(0).start, seg_start(1) + 50);
        assert_eq!(b.get(0).len, 50);
        // Segment 1 keeps its last 50 bytes, segment 3 all 100; segment 2 is SACKed.
        assert_eq!(b.lost_bytes(), 150);
        b.check_totals();
    }
}
