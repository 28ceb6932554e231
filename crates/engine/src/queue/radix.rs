//! The far-future half of [`EventQueue`](super::EventQueue): a monotone radix queue.
//!
//! Keys are `u64` picoseconds and never go below the last popped key (the *origin*). An event
//! is filed at the level of the highest 8-bit digit in which its time differs from the origin,
//! in the slot named by its own digit at that level: level 0 holds events *at* one instant,
//! level `k` events less than `256^(k+1)` picoseconds away. When level 0 is empty, the earliest
//! slot of the lowest occupied level is refiled against its own minimum, into the levels below,
//! which are empty at that moment. This is a radix heap with 256-way digits (Ahuja, Mehlhorn,
//! Orlin and Tarjan 1990), or equally a hierarchical timing wheel whose origin is the last pop.
//!
//! Ties stay FIFO without a sequence number: every slot lists its events in push order, because
//! a push appends the newest event and a refile reads one slot in order and appends to slots
//! that were empty. A level-0 slot holds a single instant and is drained from the front.
//!
//! Costs: push `O(1)`; pop `O(1)` amortised, each event moving at most once per level it
//! descends (at most 7 times; `O(log_256 Δ)` for an event `Δ` picoseconds ahead of the origin).
//! No tuning, and any `u64` key works, up to and including `u64::MAX`.

use std::collections::VecDeque;
use std::mem;

/// Bits of the key consumed per level.
const DIGIT_BITS: u32 = 8;
/// Slots per level.
const SLOTS: usize = 1 << DIGIT_BITS;
/// The slot digit of a level, once shifted down.
const DIGIT_MASK: u64 = SLOTS as u64 - 1;
/// Levels needed to cover every `u64` key.
const LEVELS: usize = (u64::BITS as usize).div_ceil(DIGIT_BITS as usize);
/// Bitmap words per level.
const WORDS: usize = SLOTS / 64;
/// An emptied slot keeps room for at most this many events, or `len / 64` if more, so a
/// burst's memory is given back instead of being held by every slot it passed through, and a
/// steady load reuses its buffers.
pub(super) const RETAINED_SLOT_CAPACITY: usize = 64;

const _: () = assert!(WORDS * 64 == SLOTS && WORDS <= 64, "bitmap layout");
const _: () = assert!(LEVELS <= u32::BITS as usize, "level mask is a u32");

/// Events keyed by `u64` time, popped in (time, push order); keys never go below the last pop.
pub(super) struct RadixQueue<E> {
    /// The last popped key (or the value given to [`RadixQueue::rebase`]). Every pending event
    /// is at or after it and sits at the level of the highest digit in which it differs from it.
    origin: u64,
    /// Level 0: slot `s` holds events at exactly `(origin & !DIGIT_MASK) | s`, in push order.
    now: Box<[VecDeque<E>]>,
    /// Levels 1 and up, flattened as `(level - 1) * SLOTS + slot`.
    upper: Box<[Slot<E>]>,
    /// Occupied slots of each level.
    occupied: [Bitmap; LEVELS],
    /// Bit `k` is set when level `k` has an occupied slot.
    occupied_levels: u32,
    len: usize,
}

/// A slot of level 1 or above.
struct Slot<E> {
    /// Earliest key in `events`; `u64::MAX` when empty.
    min: u64,
    /// `(key, event)` in push order.
    events: Vec<(u64, E)>,
}

impl<E> RadixQueue<E> {
    pub(super) fn new() -> Self {
        RadixQueue {
            origin: 0,
            now: (0..SLOTS).map(|_| VecDeque::new()).collect(),
            upper: (0..SLOTS * (LEVELS - 1))
                .map(|_| Slot {
                    min: u64::MAX,
                    events: Vec::new(),
                })
                .collect(),
            occupied: [Bitmap::EMPTY; LEVELS],
            occupied_levels: 0,
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Restart an empty queue at `origin`, so that keys down to it may be pushed again.
    pub(super) fn rebase(&mut self, origin: u64) {
        assert!(self.len == 0, "rebase of a non-empty radix queue");
        self.origin = origin;
    }

    /// File `ev` at `at`, which must not be below the origin.
    pub(super) fn push(&mut self, at: u64, ev: E) {
        debug_assert!(
            at >= self.origin,
            "radix key {at} below origin {}",
            self.origin
        );
        self.place(at, ev);
        self.len += 1;
    }

    /// The earliest key.
    pub(super) fn peek(&self) -> Option<u64> {
        let level = self.occupied_levels.trailing_zeros() as usize;
        let slot = self.occupied.get(level)?.first()?;
        Some(if level == 0 {
            (self.origin & !DIGIT_MASK) | slot as u64
        } else {
            self.upper[(level - 1) * SLOTS + slot].min
        })
    }

    /// The earliest event (ties: the one pushed first).
    pub(super) fn pop(&mut self) -> Option<(u64, E)> {
        loop {
            let level = self.occupied_levels.trailing_zeros() as usize;
            let slot = self.occupied.get(level)?.first()?;
            if level == 0 {
                let events = &mut self.now[slot];
                let ev = events.pop_front()?;
                if events.is_empty() {
                    events.shrink_to(RETAINED_SLOT_CAPACITY.max(self.len / 64));
                    self.vacate(0, slot);
                }
                self.origin = (self.origin & !DIGIT_MASK) | slot as u64;
                self.len -= 1;
                return Some((self.origin, ev));
            }
            let s = &mut self.upper[(level - 1) * SLOTS + slot];
            if s.events.len() == 1 {
                // A lone event is the earliest: pop it without refiling.
                let (at, ev) = s.events.pop()?;
                s.min = u64::MAX;
                self.vacate(level, slot);
                self.origin = at;
                self.len -= 1;
                return Some((at, ev));
            }
            self.refile(level, slot);
        }
    }

    /// File an event relative to the origin, without counting it.
    fn place(&mut self, at: u64, ev: E) {
        // The highest bit in which `at` differs from the origin picks the level; `| 1` maps
        // "no difference" (an event at the origin itself) to level 0.
        let level = (63 - ((at ^ self.origin) | 1).leading_zeros()) / DIGIT_BITS;
        let slot = ((at >> (level * DIGIT_BITS)) & DIGIT_MASK) as usize;
        let level = level as usize;
        if level == 0 {
            self.now[slot].push_back(ev);
        } else {
            let s = &mut self.upper[(level - 1) * SLOTS + slot];
            s.events.push((at, ev));
            s.min = s.min.min(at);
        }
        self.occupied[level].insert(slot);
        self.occupied_levels |= 1 << level;
    }

    /// Levels below `level` are empty: move the origin to the minimum of `slot` at `level` and
    /// refile that slot's events against it.
    fn refile(&mut self, level: usize, slot: usize) {
        self.vacate(level, slot);
        let s = &mut self.upper[(level - 1) * SLOTS + slot];
        // Every pending event is at or after this minimum: lower levels are empty, later slots
        // of this level and higher levels hold later digits. So it may become the origin, and
        // the events outside this slot keep their places relative to it.
        self.origin = mem::replace(&mut s.min, u64::MAX);
        let mut events = mem::take(&mut s.events);
        // Each event now differs from the origin only below `level`, so it lands in a lower
        // level, all of which were empty: each slot receives events in push order.
        for (at, ev) in events.drain(..) {
            self.place(at, ev);
        }
        events.shrink_to(RETAINED_SLOT_CAPACITY.max(self.len / 64));
        self.upper[(level - 1) * SLOTS + slot].events = events;
    }

    /// Mark a slot empty.
    fn vacate(&mut self, level: usize, slot: usize) {
        let bits = &mut self.occupied[level];
        bits.remove(slot);
        if bits.is_empty() {
            self.occupied_levels &= !(1 << level);
        }
    }

    /// Largest capacity kept by any slot (for tests of the memory policy).
    #[cfg(test)]
    pub(super) fn max_slot_capacity(&self) -> usize {
        let now = self.now.iter().map(VecDeque::capacity);
        now.chain(self.upper.iter().map(|s| s.events.capacity()))
            .max()
            .unwrap_or(0)
    }
}

/// One bit per slot of a level, plus one bit per non-zero word.
#[derive(Clone, Copy)]
struct Bitmap {
    words: [u64; WORDS],
    nonzero: u64,
}

impl Bitmap {
    const EMPTY: Bitmap = Bitmap {
        words: [0; WORDS],
        nonzero: 0,
    };

    fn insert(&mut self, slot: usize) {
        self.words[slot / 64] |= 1 << (slot % 64);
        self.nonzero |= 1 << (slot / 64);
    }

    fn remove(&mut self, slot: usize) {
        let w = &mut self.words[slot / 64];
        *w &= !(1 << (slot % 64));
        if *w == 0 {
            self.nonzero &= !(1 << (slot / 64));
        }
    }

    fn is_empty(&self) -> bool {
        self.nonzero == 0
    }

    /// The lowest occupied slot.
    fn first(&self) -> Option<usize> {
        if self.nonzero == 0 {
            return None;
        }
        let w = self.nonzero.trailing_zeros() as usize;
        Some(w * 64 + self.words[w].trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    use super::*;

    /// Drive a radix queue and a (key, push sequence) heap together through `deltas`: each
    /// `Some(d)` pushes at (last pop + d), saturating; each `None` pops. Then drain both.
    fn check(start: u64, deltas: &[Option<u64>]) {
        let mut q = RadixQueue::new();
        let mut heap = BinaryHeap::new();
        q.rebase(start);
        let (mut now, mut seq) = (start, 0u64);
        for d in deltas
            .iter()
            .copied()
            .chain(std::iter::repeat_n(None, deltas.len()))
        {
            match d {
                Some(d) => {
                    let at = now.saturating_add(d);
                    q.push(at, seq);
                    heap.push(Reverse((at, seq)));
                    seq += 1;
                }
                None => {
                    let got = q.pop();
                    assert_eq!(got, heap.pop().map(|Reverse(e)| e));
                    if let Some((at, _)) = got {
                        now = at;
                    }
                }
            }
            assert_eq!(q.len(), heap.len());
            assert_eq!(q.peek(), heap.peek().map(|Reverse((at, _))| *at));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn digit_boundaries_and_u64_max() {
        let mut deltas = Vec::new();
        for level in (1..8u32).rev() {
            let b = 1u64 << (level * DIGIT_BITS);
            deltas.extend([Some(b + 1), Some(b), Some(b - 1), Some(b)]);
        }
        check(0, &deltas);
        check(
            u64::MAX - 5,
            &[Some(5), Some(3), Some(u64::MAX), None, Some(0), Some(1)],
        );
    }

    #[test]
    fn emptied_slots_give_memory_back() {
        let mut q = RadixQueue::new();
        for i in 0..10_000u64 {
            q.push((1 << 30) | (i % 3), i);
        }
        while q.pop().is_some() {}
        assert!(q.max_slot_capacity() <= 10_000 / 64);
        // Light traffic through the same level-0 slot gives the rest back.
        q.push((1 << 30) | 2, 0);
        q.pop();
        let mut level_0 = q.now.iter().map(VecDeque::capacity);
        assert!(level_0.nth(2).is_some_and(|c| c <= RETAINED_SLOT_CAPACITY));
    }

    fn delta() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![
            2 => Just(None),
            1 => Just(Some(0)),
            1 => (0..300u64).prop_map(Some),
            1 => (0..1u64 << 24).prop_map(Some),
            1 => any::<u64>().prop_map(Some),
        ]
    }

    proptest! {
        #[test]
        fn matches_heap(
            start in prop_oneof![Just(0), Just(u64::MAX - 1000), any::<u64>()],
            deltas in prop::collection::vec(delta(), 0..400),
        ) {
            check(start, &deltas);
        }
    }
}
