//! The send buffer and the receive buffer with out-of-order reassembly.
//!
//! Both hold real bytes and count positions as 64-bit *data offsets* (0 is the first byte of
//! the stream; the SYN is not counted), so nothing here wraps.
//!
//! - [`SendBuffer`]: what the application wrote and the peer has not acknowledged. Bytes leave
//!   only when they are acknowledged, so any of them can be copied out again for a
//!   retransmission (RFC 9293 §3.8.1).
//! - [`ReceiveBuffer`]: in-order bytes the application has not read, plus out-of-order chunks
//!   waiting for a hole to fill (RFC 9293 §3.10.7.4, "seventh, process the segment text"). The
//!   free space is the receive window; out-of-order bytes sit inside it, so memory never
//!   exceeds the configured size. The merged out-of-order ranges are what SACK reports.
//!
//! Simplification: the buffers allocate as they fill, up to their size, and never shrink;
//! Linux's memory accounting (`sk_rmem_alloc`, per-skb overhead, `tcp_adv_win_scale`) is not
//! modelled, so the whole buffer is offered as window where Linux offers about half.

use std::collections::{BTreeMap, VecDeque};

/// Bytes the application wrote, from the first unacknowledged byte to the last written.
#[derive(Clone, Debug)]
pub(crate) struct SendBuffer {
    data: VecDeque<u8>,
    capacity: usize,
    /// Data offset of `data[0]`.
    start: u64,
}

impl SendBuffer {
    /// An empty buffer holding at most `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> SendBuffer {
        SendBuffer {
            data: VecDeque::new(),
            capacity,
            start: 0,
        }
    }

    /// Append as much of `bytes` as fits; returns how many were taken.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> usize {
        let n = bytes.len().min(self.free());
        self.data.extend(&bytes[..n]);
        n
    }

    /// Room left, in bytes.
    pub(crate) fn free(&self) -> usize {
        self.capacity - self.data.len()
    }

    /// Bytes held.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    /// The buffer size.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Data offset one past the last byte written.
    pub(crate) fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }

    /// Append the `len` bytes starting at data offset `from` to `out`.
    ///
    /// Panics if the range is not held: the connection only asks for bytes between the
    /// cumulative ACK and the end of what was written, which is exactly what is held.
    pub(crate) fn copy_out(&self, from: u64, len: usize, out: &mut Vec<u8>) {
        let skip = usize::try_from(from - self.start).expect("send buffer offset fits usize");
        assert!(skip + len <= self.data.len(), "send buffer range not held");
        let (a, b) = self.data.as_slices();
        if skip < a.len() {
            let take = len.min(a.len() - skip);
            out.extend_from_slice(&a[skip..skip + take]);
            out.extend_from_slice(&b[..len - take]);
        } else {
            let skip = skip - a.len();
            out.extend_from_slice(&b[skip..skip + len]);
        }
    }

    /// Drop every byte before data offset `to` (they were acknowledged).
    pub(crate) fn release_to(&mut self, to: u64) {
        if to <= self.start {
            return;
        }
        let n = usize::try_from(to - self.start)
            .unwrap_or(usize::MAX)
            .min(self.data.len());
        self.data.drain(..n);
        self.start += n as u64;
    }
}

/// What [`ReceiveBuffer::insert`] did with a segment's bytes.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub(crate) struct Insert {
    /// Bytes that became readable in order (including reassembled ones).
    pub(crate) advanced: u64,
    /// Some new bytes were stored beyond a hole.
    pub(crate) out_of_order: bool,
    /// Nothing new: every byte was already received or lies outside the window.
    pub(crate) duplicate: bool,
    /// The segment filled (part of) a hole in front of out-of-order data.
    pub(crate) filled_hole: bool,
}

/// Received bytes: the readable in-order part and out-of-order chunks.
#[derive(Clone, Debug)]
pub(crate) struct ReceiveBuffer {
    readable: VecDeque<u8>,
    capacity: usize,
    /// Data offset of the next in-order byte expected (RCV.NXT, less the SYN).
    next: u64,
    /// Out-of-order bytes by start offset; chunks never overlap.
    chunks: BTreeMap<u64, Vec<u8>>,
    /// The same bytes as merged ranges (start → end), for SACK.
    ranges: BTreeMap<u64, u64>,
}

impl ReceiveBuffer {
    /// An empty buffer of `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> ReceiveBuffer {
        ReceiveBuffer {
            readable: VecDeque::new(),
            capacity,
            next: 0,
            chunks: BTreeMap::new(),
            ranges: BTreeMap::new(),
        }
    }

    /// Free space: the receive window, in bytes.
    pub(crate) fn window(&self) -> usize {
        self.capacity - self.readable.len()
    }

    /// The buffer size.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Data offset one past the last byte the buffer can take.
    pub(crate) fn right_edge(&self) -> u64 {
        self.next + self.window() as u64
    }

    /// Data offset of the next in-order byte expected.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// Bytes ready for the application.
    pub(crate) fn readable_len(&self) -> usize {
        self.readable.len()
    }

    /// Whether any out-of-order data is waiting.
    pub(crate) fn has_out_of_order(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// The merged out-of-order ranges (start, end), highest first.
    pub(crate) fn ranges_from_top(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().rev().map(|(&s, &e)| (s, e))
    }

    /// The merged out-of-order range holding data offset `at`.
    pub(crate) fn range_containing(&self, at: u64) -> Option<(u64, u64)> {
        let (&start, &end) = self.ranges.range(..=at).next_back()?;
        (end > at).then_some((start, end))
    }

    /// Store the bytes of a segment whose first byte is at data offset `offset`. Bytes before
    /// [`next`](Self::next) or past [`right_edge`](Self::right_edge) are dropped.
    pub(crate) fn insert(&mut self, offset: u64, data: &[u8]) -> Insert {
        let end = offset + data.len() as u64;
        let lo = offset.max(self.next);
        let hi = end.min(self.right_edge());
        if lo >= hi {
            return Insert {
                duplicate: true,
                ..Insert::default()
            };
        }
        let bytes = |from: u64, to: u64| &data[(from - offset) as usize..(to - offset) as usize];
        if lo > self.next {
            let stored = self.store_out_of_order(lo, hi, bytes(lo, hi));
            return Insert {
                out_of_order: stored,
                duplicate: !stored,
                ..Insert::default()
            };
        }
        let had_holes = self.has_out_of_order();
        let first_ooo = self.ranges.keys().next().copied().unwrap_or(u64::MAX);
        let in_order_end = hi.min(first_ooo);
        self.readable.extend(bytes(lo, in_order_end));
        let before = self.next;
        self.next = in_order_end;
        if in_order_end < hi {
            // The rest overlaps data already held out of order; keep any bytes it adds.
            self.store_out_of_order(in_order_end, hi, bytes(in_order_end, hi));
        }
        self.pull_in_order();
        Insert {
            advanced: self.next - before,
            filled_hole: had_holes,
            ..Insert::default()
        }
    }

    /// Copy readable bytes into `buf`; returns how many.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.readable.len());
        let (a, b) = self.readable.as_slices();
        let from_a = n.min(a.len());
        buf[..from_a].copy_from_slice(&a[..from_a]);
        buf[from_a..n].copy_from_slice(&b[..n - from_a]);
        self.readable.drain(..n);
        n
    }

    /// Store the parts of `[lo, hi)` not held yet; returns whether anything was new.
    fn store_out_of_order(&mut self, lo: u64, hi: u64, data: &[u8]) -> bool {
        // Ranges that overlap or touch [lo, hi), in order.
        let mut touching: Vec<(u64, u64)> = Vec::new();
        if let Some((&s, &e)) = self.ranges.range(..lo).next_back()
            && e >= lo
        {
            touching.push((s, e));
        }
        touching.extend(self.ranges.range(lo..=hi).map(|(&s, &e)| (s, e)));
        // Copy the gaps between held ranges.
        let mut cursor = lo;
        let mut stored = false;
        for &(s, e) in &touching {
            if s > cursor {
                let to = s.min(hi);
                self.chunks.insert(
                    cursor,
                    data[(cursor - lo) as usize..(to - lo) as usize].to_vec(),
                );
                stored = true;
            }
            cursor = cursor.max(e);
            if cursor >= hi {
                break;
            }
        }
        if cursor < hi {
            self.chunks
                .insert(cursor, data[(cursor - lo) as usize..].to_vec());
            stored = true;
        }
        // Merge the ranges.
        let start = touching.first().map_or(lo, |&(s, _)| s.min(lo));
        let end = touching.last().map_or(hi, |&(_, e)| e.max(hi));
        for (s, _) in touching {
            self.ranges.remove(&s);
        }
        self.ranges.insert(start, end);
        stored
    }

    /// Move out-of-order chunks that now continue the in-order data into the readable part.
    fn pull_in_order(&mut self) {
        while let Some(entry) = self.chunks.first_entry() {
            let start = *entry.key();
            if start > self.next {
                break;
            }
            let chunk = entry.remove();
            let end = start + chunk.len() as u64;
            if end > self.next {
                self.readable.extend(&chunk[(self.next - start) as usize..]);
                self.next = end;
            }
        }
        while let Some(entry) = self.ranges.first_entry() {
            if *entry.get() > self.next {
                // Chunks cover every range exactly, so no range can straddle `next`.
                debug_assert!(*entry.key() > self.next, "range straddles RCV.NXT");
                break;
            }
            entry.remove();
        }
    }

    /// The merged out-of-order ranges, lowest first.
    #[cfg(test)]
    pub(crate) fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(from: u64, to: u64) -> Vec<u8> {
        (from..to).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn send_buffer_wraps_and_copies() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write(&bytes(0, 8)), 8);
        b.release_to(6);
        assert_eq!(b.write(&bytes(8, 20)), 8);
        assert_eq!(b.free(), 0);
        assert_eq!(b.end(), 16);
        let mut out = Vec::new();
        b.copy_out(6, 10, &mut out);
        assert_eq!(out, bytes(6, 16));
        out.clear();
        b.copy_out(9, 3, &mut out);
        assert_eq!(out, bytes(9, 12));
    }

    #[test]
    fn reassembles_out_of_order() {
        let mut r = ReceiveBuffer::new(100);
        let ins = r.insert(20, &bytes(20, 30));
        assert!(ins.out_of_order);
        assert_eq!(r.ranges(), vec![(20, 30)]);
        r.insert(40, &bytes(40, 50));
        r.insert(30, &bytes(30, 35));
        assert_eq!(r.ranges(), vec![(20, 35), (40, 50)]);
        assert_eq!(r.range_containing(34), Some((20, 35)));
        assert_eq!(r.range_containing(35), None);
        // A duplicate of held out-of-order data.
        assert!(r.insert(22, &bytes(22, 28)).duplicate);
        // The hole fills: everything up to 35 becomes readable.
        let ins = r.insert(0, &bytes(0, 20));
        assert_eq!(ins.advanced, 35);
        assert!(ins.filled_hole);
        assert_eq!(r.ranges(), vec![(40, 50)]);
        // Overlapping segment bridging into the remaining range.
        let ins = r.insert(33, &bytes(33, 45));
        assert_eq!(ins.advanced, 15);
        assert_eq!(r.next(), 50);
        assert!(r.ranges().is_empty());
        let mut out = vec![0; 100];
        assert_eq!(r.read(&mut out), 50);
        assert_eq!(&out[..50], &bytes(0, 50)[..]);
    }

    #[test]
    fn window_limits_what_is_kept() {
        let mut r = ReceiveBuffer::new(10);
        let ins = r.insert(0, &bytes(0, 15));
        assert_eq!(ins.advanced, 10);
        assert_eq!(r.window(), 0);
        assert!(r.insert(10, &bytes(10, 12)).duplicate);
        let mut out = [0; 4];
        r.read(&mut out);
        assert_eq!(r.window(), 4);
        assert_eq!(r.right_edge(), 14);
    }

    #[test]
    fn out_of_order_gaps_are_filled_piecewise() {
        let mut r = ReceiveBuffer::new(100);
        r.insert(10, &bytes(10, 12));
        r.insert(14, &bytes(14, 16));
        // Covers both ranges and the gaps around them.
        let ins = r.insert(5, &bytes(5, 20));
        assert!(ins.out_of_order);
        assert_eq!(r.ranges(), vec![(5, 20)]);
        r.insert(0, &bytes(0, 5));
        let mut out = vec![0; 20];
        assert_eq!(r.read(&mut out), 20);
        assert_eq!(out, bytes(0, 20));
    }
}
