//! Event queue ordered by (time, insertion sequence). PLACEHOLDER: binary heap; to be replaced
//! by a calendar/ladder queue with the same API.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use units::SimTime;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    ev: E,
}
impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Pending events, popped in (time, insertion order).
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
    last: SimTime,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, last: SimTime::ZERO }
    }
    /// Schedule `ev` at `at`; `at` must not be earlier than the last popped time.
    pub fn push(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.last, "event scheduled in the past");
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Reverse(Entry { at, seq, ev }));
    }
    /// The earliest event (ties: the one pushed first).
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let Reverse(e) = self.heap.pop()?;
        self.last = e.at;
        Some((e.at, e.ev))
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }
    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// No pending events.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}
