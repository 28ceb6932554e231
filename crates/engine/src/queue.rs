//! Pending events in exact (time, insertion sequence) order: a calendar wheel over a radix
//! queue.
//!
//! # Structure
//!
//! Time is cut into *blocks* of `2^shift` picoseconds, and the queue into three parts:
//!
//! 1. The *current block*: a *run* sorted by descending (time, push order) and popped from
//!    its end, plus a binary heap of *late* events ordered by (time, sequence number). A push
//!    into the current block (or, once its last event was popped, into the rest of it) is
//!    inserted into the run after every queued event at its time, so zero-delay events pop
//!    after the events already waiting at that instant and before everything later (the
//!    insertion moves the events that pop before it: a few, in a block of a few). Only when it
//!    would move many (a crowded block) does the push go to the heap instead, and then so does
//!    every later push into the block, until both are empty. The current block is empty only
//!    when the whole queue is.
//! 2. The *wheel*: `2^k` slots, one for each of the `2^k - 1` blocks after the current one
//!    (slot = block mod `2^k`, as in a calendar queue, but a slot only ever holds one block, so
//!    there is no "year" to check). A slot is an unsorted list in push order; a two-level
//!    bitmap finds the next occupied one.
//! 3. The *overflow*: everything beyond the wheel, in a radix queue (`radix.rs`: a radix heap with
//!    256-way digits), which orders any `u64` times exactly in `O(1)` amortised steps with no
//!    tuning: a 200 ms timer among nanosecond events, a 24-hour horizon and `u64::MAX` are
//!    ordinary keys there.
//!
//! Each part holds only later events than the part before. A push lands in one part by its
//! time. When the run empties, the next occupied slot becomes the current block (or, when
//! the wheel is empty, the block of the overflow's minimum): its list is swapped in as the run
//! and sorted stably by time, and overflow events that now fall inside the wheel move into it.
//!
//! # Why this structure
//!
//! A binary heap over every pending event does `O(log n)` unpredictable comparisons per
//! operation (10–12 M events/s here). A calendar queue does `O(1)` work per event when its
//! bucket width suits the event density, and degrades badly when it does not. A radix queue is
//! never bad, but moves each event once per level it descends (two or three times at simulator
//! time scales), about 300 instructions per hold here. This design keeps the calendar queue's
//! fast path and the radix queue's guarantees:
//!
//! - In steady state an event is written once into a wheel slot, its slot becomes the run by a
//!   swap and a sort of a few events, and a pop takes the run's last entry with no other part
//!   to look at. The next event and the one after it are the run's last two entries, so a
//!   simulator can prefetch for both.
//! - A badly sized wheel costs speed, never order: events beyond the wheel wait in the radix
//!   queue, and a block of `m` events costs `O(log m)` per event (a sort, a binary search, or
//!   the heap). There is no scan over empty years.
//! - Adaptation is deterministic (it depends only on the operations) and cheap: at the end of
//!   every epoch of `max(2 × len, 8192)` pops, the slot count becomes the power of two at or
//!   above `len / 2` if that is more, or less than a quarter, within `2^8 ..= 2^11`; and the
//!   block width becomes the power of two at or above the larger of the mean time between pops
//!   and the usual spread of pending events (`2 × len` such gaps) over the slot count, unless
//!   it is already within `[1, 4]` times that. So blocks hold a few events and the wheel spans
//!   the pending ones. A change rebuilds the queue in order, `O(len log len)`, paid for by the
//!   epoch.
//!
//! (An earlier version kept zero-delay events in a FIFO and every late push in the heap, beside
//! the run; choosing among the three on every pop and peek was about a fifth of a 1024-host fat
//! tree's queue instructions, and its wall time fell by a fifth without them. Inserting into
//! the run alone, with no heap, moved 412 events per late push on average there: a few blocks
//! hold thousands.)
//!
//! # Exact FIFO ties
//!
//! In the heap of late events a sequence number breaks ties. Everywhere else order holds by
//! construction: a push into the run goes after every event at its time; the run's events were
//! all pushed before the heap's (once the heap has an event, the block's pushes go there), so
//! they win ties; a wheel slot lists its events in push order and is sorted stably; the radix
//! queue pops equal times in push order; and events at one time never sit in two of the parts
//! 1 to 3, since a block enters the wheel (taking its overflow events along) before any push
//! reaches its slot, and a slot becomes current before any push reaches its block.
//!
//! # Costs
//!
//! Push and pop are `O(1)` amortised for any distribution whose blocks hold `O(1)` events, and
//! `O(log m)` per event for blocks of `m`. Neither allocates in steady state: run, heap, slots
//! and radix queue reuse their buffers, and a buffer emptied with room for far more than usual
//! shrinks back, so memory follows the number of pending events. The fixed cost is the slot
//! headers (24 bytes per slot: 6 to 48 KiB) and the radix queue's 2,048 (about 64 KiB).
//!
//! Scheduling before the last pop breaks the contract and trips a `debug_assert!`; in release
//! builds such an event is still delivered, but its place in the order is unspecified.

mod radix;

use std::cmp::{self, Reverse};
use std::collections::BinaryHeap;
use std::{fmt, mem};

use units::SimTime;

use radix::RadixQueue;

/// log2 of the block width a new queue starts with: 1.024 ns.
const INITIAL_SHIFT: u32 = 10;
/// log2 of the slot count a new queue starts with.
const INITIAL_SLOTS_LOG2: u32 = 8;
/// Fewest and most wheel slots, log2. The slot a push writes to was last written about one
/// turn of the wheel earlier, so the turn's buffers should stay in cache: with 8,192 slots the
/// 1024-host fat tree's writes into slots were a tenth of its time, and 2,048 (wider blocks,
/// the same span) ran it about 5% faster with 2% fewer cache misses.
const MIN_SLOTS_LOG2: u32 = 8;
const MAX_SLOTS_LOG2: u32 = 11;
/// Widest block, log2 ps (about 1.1 s).
const MAX_SHIFT: u32 = 40;
/// Shortest adaptation epoch, in pops.
const MIN_EPOCH: u64 = 8192;
/// The run, emptied with room for more events than this or two blocks' worth (`2 × len /
/// slots`), shrinks back before it becomes a slot's buffer.
const RETAINED_SLOT_CAPACITY: usize = 32;
/// The heap of late events, emptied with room for more events than this, shrinks back to it.
const RETAINED_HEAP_CAPACITY: usize = 1024;
/// Most run events a push into the current block may move; past that it goes to the heap.
const MAX_INSERT_MOVES: usize = 8;

const _: () = assert!(MIN_SLOTS_LOG2 >= 6 && MAX_SLOTS_LOG2 <= 18, "bitmap layout");

/// A block's events: `(time in ps, event)`.
type Block<E> = Vec<(u64, E)>;

/// Pending events, popped in (time, insertion order).
///
/// Times must never go backwards: each push is at or after the time of the last pop (before
/// the first pop, any time is allowed). Events at the same time pop in the order they were
/// pushed, including events pushed at exactly the time of the last pop, which pop after every
/// event already queued at that time.
pub struct EventQueue<E> {
    /// The current block's events (and any pushed since before it), sorted by descending
    /// (time, push order): the next event is at the end, unless `late` has an earlier one.
    run: Block<E>,
    /// Pushes into the current block that would have moved many run events, and every push
    /// into the block after them. Usually empty.
    late: BinaryHeap<Late<E>>,
    /// Sequence number for the next event entering `late`.
    late_seq: u64,
    /// The current block: every event in the wheel or the overflow is in a later one.
    block: u64,
    /// log2 of the block width in picoseconds.
    shift: u32,
    /// Wheel slot `b & mask` holds the events of block `b`, for `block < b <= block + mask`,
    /// in push order.
    slots: Box<[Block<E>]>,
    /// `slots.len() - 1`.
    mask: u64,
    /// Occupied wheel slots.
    occupied: Bitmap,
    /// Events after the wheel.
    overflow: RadixQueue<E>,
    /// Pending events.
    len: usize,
    /// Time of the last pop, in picoseconds (zero before the first).
    last_pop: u64,
    /// Adaptation: pops so far in this epoch, `last_pop` when it started, and its length.
    epoch_pops: u64,
    epoch_start: u64,
    epoch_len: u64,
}

/// An event pushed into a crowded current block.
struct Late<E> {
    at: u64,
    seq: u64,
    ev: E,
}

impl<E> Late<E> {
    fn key(&self) -> Reverse<(u64, u64)> {
        Reverse((self.at, self.seq))
    }
}

impl<E> PartialEq for Late<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Late<E> {}

impl<E> PartialOrd for Late<E> {
    fn partial_cmp(&self, other: &Self) -> Option<cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Late<E> {
    /// Reversed, so that the max-heap pops the earliest (time, sequence) first.
    fn cmp(&self, other: &Self) -> cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> fmt::Debug for EventQueue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventQueue")
            .field("len", &self.len)
            .field("last_pop", &SimTime::from_ps(self.last_pop))
            .field("next", &self.peek_time())
            .field("block_ps", &(1u64 << self.shift))
            .field("slots", &self.slots.len())
            .field("overflow", &self.overflow.len())
            .finish_non_exhaustive()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_geometry(INITIAL_SLOTS_LOG2, INITIAL_SHIFT, MIN_EPOCH)
    }

    /// An empty queue with `2^slots_log2` wheel slots of `2^shift` ps, adapting every
    /// `min_epoch` pops or more.
    fn with_geometry(slots_log2: u32, shift: u32, min_epoch: u64) -> Self {
        let slots = 1usize << slots_log2;
        EventQueue {
            run: Vec::new(),
            late: BinaryHeap::new(),
            late_seq: 0,
            block: 0,
            shift,
            slots: (0..slots).map(|_| Vec::new()).collect(),
            mask: slots as u64 - 1,
            occupied: Bitmap::new(),
            overflow: RadixQueue::new(),
            len: 0,
            last_pop: 0,
            epoch_pops: 0,
            epoch_start: 0,
            epoch_len: min_epoch,
        }
    }

    /// Schedule `ev` at `at`; `at` must not be earlier than the last popped time.
    #[inline]
    pub fn push(&mut self, at: SimTime, ev: E) {
        debug_assert!(
            at.as_ps() >= self.last_pop,
            "event scheduled in the past: {at} < last pop {}",
            SimTime::from_ps(self.last_pop)
        );
        self.file(at.as_ps(), ev);
    }

    /// The earliest event (ties: the one pushed first).
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if !self.late.is_empty() {
            return self.pop_late_or_run();
        }
        let (at, ev) = self.run.pop()?;
        self.len -= 1;
        self.last_pop = at;
        if self.run.is_empty() {
            self.next_block();
        }
        self.epoch_pops += 1;
        if self.epoch_pops >= self.epoch_len {
            self.adapt();
        }
        Some((SimTime::from_ps(at), ev))
    }

    /// Pop when the current block has late events: the earlier of the run's last and the
    /// heap's top (the run's on a tie: it was pushed first).
    #[inline(never)]
    fn pop_late_or_run(&mut self) -> Option<(SimTime, E)> {
        let from_run = match (self.run.last(), self.late.peek()) {
            (Some(&(r, _)), Some(l)) => r <= l.at,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let (at, ev) = if from_run {
            self.run.pop()?
        } else {
            self.late.pop().map(|l| (l.at, l.ev))?
        };
        self.len -= 1;
        self.last_pop = at;
        if self.run.is_empty() && self.late.is_empty() {
            if self.late.capacity() > RETAINED_HEAP_CAPACITY {
                self.late.shrink_to(RETAINED_HEAP_CAPACITY);
            }
            self.next_block();
        }
        self.epoch_pops += 1;
        if self.epoch_pops >= self.epoch_len {
            self.adapt();
        }
        Some((SimTime::from_ps(at), ev))
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let run = self.run.last().map(|&(at, _)| at);
        if self.late.is_empty() {
            return run.map(SimTime::from_ps);
        }
        let late = self.late.peek().map(|l| l.at);
        match (run, late) {
            (Some(r), Some(l)) => Some(r.min(l)),
            (r, l) => r.or(l),
        }
        .map(SimTime::from_ps)
    }

    /// The earliest event (the one [`pop`](Self::pop) returns next), without removing it.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        if self.late.is_empty() {
            return self.run.last().map(|(_, ev)| ev);
        }
        match (self.run.last(), self.late.peek()) {
            (Some((r, ev)), Some(l)) => Some(if *r <= l.at { ev } else { &l.ev }),
            (Some((_, ev)), None) => Some(ev),
            (None, l) => l.map(|l| &l.ev),
        }
    }

    /// A guess at the event after the next, for prefetching: the run's second to last.
    /// It is exact unless the next event is the last of its block (then `None`), the block
    /// has late events, or an event pushed after this call comes between.
    #[inline]
    pub fn peek_after_next(&self) -> Option<&E> {
        let n = self.run.len();
        (n >= 2).then(|| &self.run[n - 2].1)
    }

    /// Pending events.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// No pending events.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Count and file an event by its block.
    #[inline(always)]
    fn file(&mut self, at: u64, ev: E) {
        let b = at >> self.shift;
        // Whether the current block has events (if not, neither do the wheel or the overflow).
        let current = !self.run.is_empty() || !self.late.is_empty();
        if b > self.block && current {
            if b - self.block <= self.mask {
                self.file_in_wheel(b, at, ev);
            } else {
                self.overflow.push(at, ev);
            }
        } else {
            // The current block or an earlier one (still before everything in the wheel), or
            // the first event of an empty queue, which starts a new current block.
            self.block = self.block.max(b);
            self.file_in_run(at, ev);
        }
        self.len += 1;
    }

    #[inline(always)]
    fn file_in_wheel(&mut self, b: u64, at: u64, ev: E) {
        let i = (b & self.mask) as usize;
        self.slots[i].push((at, ev));
        self.occupied.insert(i);
    }

    /// Insert into the run after every event at or before `at`, or into the heap when that
    /// would move many run events or the heap already holds some of the block's.
    #[inline(always)]
    fn file_in_run(&mut self, at: u64, ev: E) {
        if self.late.is_empty() {
            // Before (popping after) the events at or before `at`, which sit at the end.
            let i = self.run.partition_point(|&(t, _)| t > at);
            if self.run.len() - i <= MAX_INSERT_MOVES {
                self.run.insert(i, (at, ev));
                return;
            }
        }
        self.file_late(at, ev);
    }

    #[cold]
    fn file_late(&mut self, at: u64, ev: E) {
        let seq = self.late_seq;
        self.late_seq += 1;
        self.late.push(Late { at, seq, ev });
    }

    /// The current block ran dry: give back a burst's memory, and if events remain, make the
    /// next occupied block current.
    #[inline(never)]
    fn next_block(&mut self) {
        // The run's buffer is about to become a slot's: keep room for two blocks' worth. (Keeping
        // up to four times that saved no instructions and held 20 MB more in the 1024-host
        // run's wheel.)
        let blocks_worth = (2 * self.len) >> self.slots.len().trailing_zeros();
        self.run.shrink_to(RETAINED_SLOT_CAPACITY.max(blocks_worth));
        if self.len == 0 {
            return;
        }
        let here = (self.block & self.mask) as usize;
        let block = match self.occupied.next_after(here, self.slots.len()) {
            Some(i) => self.block + ((i as u64).wrapping_sub(here as u64) & self.mask),
            // The wheel is empty, so the overflow is not.
            None => {
                self.overflow
                    .peek()
                    .expect("a non-empty queue has a next event")
                    >> self.shift
            }
        };
        self.block = block;
        let i = (block & self.mask) as usize;
        if self.occupied.remove(i) {
            // The slot's list becomes the run (and the empty run its list), sorted by descending
            // (time, push order): reversed, then stably sorted by descending time.
            mem::swap(&mut self.run, &mut self.slots[i]);
            match self.run.as_mut_slice() {
                [] | [_] => {}
                [a, b] => {
                    if a.0 <= b.0 {
                        mem::swap(a, b);
                    }
                }
                run => {
                    run.reverse();
                    run.sort_by_key(|&(at, _)| Reverse(at));
                }
            }
        }
        // Overflow events inside the extended wheel move in. Their blocks are after the old
        // wheel's end, so their slots are ones just passed over, all empty, or, when the wheel
        // was empty, the new current block itself (in order, after an empty run).
        while let Some(at) = self.overflow.peek() {
            let b = at >> self.shift;
            if b - block > self.mask {
                break;
            }
            let (at, ev) = self.overflow.pop().expect("peeked");
            if b == block {
                self.file_in_run(at, ev);
            } else {
                self.file_in_wheel(b, at, ev);
            }
        }
        debug_assert!(!self.run.is_empty(), "no next block");
    }

    /// End of an epoch: retune the block width and slot count if they drifted.
    #[inline(never)]
    fn adapt(&mut self) {
        let gap = self.last_pop.saturating_sub(self.epoch_start) / self.epoch_pops;
        self.epoch_pops = 0;
        self.epoch_start = self.last_pop;
        self.epoch_len = MIN_EPOCH.max(2 * self.len as u64);
        // A slot per two events (shrink only when four times too many), and blocks at least as
        // wide as the mean gap between pops and wide enough for the wheel to span twice `len`
        // such gaps (the pending events' usual spread): a few events per block, which measured
        // faster than one (fewer, fuller slots miss the cache less).
        let want = (self.len / 2).next_power_of_two().trailing_zeros();
        let have = self.slots.len().trailing_zeros();
        let slots_log2 = if want > have || want + 2 < have {
            want
        } else {
            have
        };
        let slots_log2 = slots_log2.clamp(MIN_SLOTS_LOG2, MAX_SLOTS_LOG2);
        let span = gap.saturating_mul(2 * self.len as u64);
        let target = gap.max(span >> slots_log2).clamp(1, 1 << MAX_SHIFT);
        let width = 1u64 << self.shift;
        let shift = if target <= width && width <= target.saturating_mul(4) {
            self.shift
        } else {
            target.next_power_of_two().trailing_zeros()
        };
        if shift != self.shift || slots_log2 != have {
            self.rebuild(slots_log2, shift);
        }
    }

    /// Take every event out in order and file it again under a new geometry.
    fn rebuild(&mut self, slots_log2: u32, shift: u32) {
        let mut all: Vec<(u64, E)> = Vec::with_capacity(self.len);
        // The current block: the run and the late events, merged with the run first among
        // equal times.
        let mut late = mem::take(&mut self.late).into_sorted_vec();
        late.reverse();
        let mut late = late.into_iter().map(|l| (l.at, l.ev)).peekable();
        while let Some(&(r, _)) = self.run.last() {
            while let Some((l, _)) = late.peek() {
                if *l >= r {
                    break;
                }
                all.extend(late.next());
            }
            all.extend(self.run.pop());
        }
        all.extend(late);
        for d in 1..=self.mask {
            let i = ((self.block + d) & self.mask) as usize;
            if self.occupied.remove(i) {
                let mut events = mem::take(&mut self.slots[i]);
                // Stable: equal times keep their push order.
                events.sort_by_key(|&(at, _)| at);
                all.append(&mut events);
            }
        }
        while let Some(e) = self.overflow.pop() {
            all.push(e);
        }
        let slots = 1usize << slots_log2;
        if slots != self.slots.len() {
            self.slots = (0..slots).map(|_| Vec::new()).collect();
            self.mask = slots as u64 - 1;
        }
        self.shift = shift;
        self.block = self.last_pop >> shift;
        self.overflow.rebase(self.last_pop);
        self.len = 0;
        // In (time, push order), so equal times keep their order.
        for (at, ev) in all {
            self.file(at, ev);
        }
    }
}

/// Bits of the largest wheel.
const BITMAP_WORDS: usize = 1 << (MAX_SLOTS_LOG2 - 6);
const SUMMARY_WORDS: usize = BITMAP_WORDS.div_ceil(64);

/// One bit per wheel slot, plus one bit per non-zero word, sized for the largest wheel.
/// Indexes are masked to the arrays, so no bounds checks remain. (With at most 4,096 slots the
/// summary is one word and its mask a modulo by one, which clippy flags; the code stays
/// written for any size.)
struct Bitmap {
    words: Box<[u64; BITMAP_WORDS]>,
    nonzero: [u64; SUMMARY_WORDS],
}

impl Bitmap {
    fn new() -> Self {
        Bitmap {
            words: Box::new([0; BITMAP_WORDS]),
            nonzero: [0; SUMMARY_WORDS],
        }
    }

    #[inline(always)]
    #[allow(clippy::modulo_one)]
    fn insert(&mut self, i: usize) {
        let w = i / 64 % BITMAP_WORDS;
        self.words[w] |= 1 << (i % 64);
        self.nonzero[w / 64 % SUMMARY_WORDS] |= 1 << (w % 64);
    }

    /// Clear bit `i`; whether it was set.
    #[inline]
    #[allow(clippy::modulo_one)]
    fn remove(&mut self, i: usize) -> bool {
        let w = i / 64 % BITMAP_WORDS;
        let word = &mut self.words[w];
        let was = *word & (1 << (i % 64)) != 0;
        *word &= !(1 << (i % 64));
        if *word == 0 {
            self.nonzero[w / 64 % SUMMARY_WORDS] &= !(1 << (w % 64));
        }
        was
    }

    /// The first set bit after `i` among the first `bits`, wrapping around to `i` itself.
    #[inline]
    fn next_after(&self, i: usize, bits: usize) -> Option<usize> {
        self.first_from(i + 1, bits)
            .or_else(|| self.first_from(0, bits))
    }

    /// The first set bit at or after `i`, below `bits`.
    fn first_from(&self, i: usize, bits: usize) -> Option<usize> {
        if i >= bits {
            return None;
        }
        let w = i / 64 % BITMAP_WORDS;
        let word = self.words[w] & (!0 << (i % 64));
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        // The next non-zero word after `w`, from the summary (bits beyond the wheel are never
        // set, so the search may run to the end of the arrays).
        let w = w + 1;
        let mut s = w / 64;
        let mut summary = *self.nonzero.get(s)? & (!0 << (w % 64));
        while summary == 0 {
            s += 1;
            summary = *self.nonzero.get(s)?;
        }
        let w = (s * 64 + summary.trailing_zeros() as usize) % BITMAP_WORDS;
        Some(w * 64 + self.words[w].trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;
    use units::SimDuration;

    use super::*;

    /// The specification: a binary heap ordered by (time, push sequence). The payload of the
    /// queue under test is the push sequence, so comparing pops checks payload identity too.
    #[derive(Default)]
    struct Oracle {
        heap: BinaryHeap<Reverse<(SimTime, u64)>>,
        pushed: u64,
    }

    impl Oracle {
        /// Push at `at`; returns the payload (push sequence) to give the queue under test.
        fn push(&mut self, at: SimTime) -> u64 {
            let seq = self.pushed;
            self.pushed += 1;
            self.heap.push(Reverse((at, seq)));
            seq
        }
        fn pop(&mut self) -> Option<(SimTime, u64)> {
            self.heap.pop().map(|Reverse(e)| e)
        }
        fn peek_time(&self) -> Option<SimTime> {
            self.heap.peek().map(|Reverse((at, _))| *at)
        }
    }

    /// Queue geometries under test: the default, and ones that force every path (a tiny
    /// wheel of 1 ps blocks, so nearly everything overflows; coarse 1 µs blocks, so blocks
    /// hold many events; and adaptation every 16 pops, so rebuilds happen constantly).
    const GEOMETRIES: [(u32, u32, u64); 4] = [
        (INITIAL_SLOTS_LOG2, INITIAL_SHIFT, MIN_EPOCH),
        (8, 0, u64::MAX),
        (8, 20, u64::MAX),
        (8, 4, 16),
    ];

    /// A queue and its oracle driven in lock step; every operation compares them.
    struct Pair {
        queue: EventQueue<u64>,
        oracle: Oracle,
        /// Time of the last pop: the earliest time a push may use.
        now: u64,
    }

    impl Default for Pair {
        fn default() -> Self {
            Pair::with_geometry(GEOMETRIES[0])
        }
    }

    impl Pair {
        fn with_geometry((slots_log2, shift, epoch): (u32, u32, u64)) -> Self {
            let queue = EventQueue::with_geometry(slots_log2, shift, epoch);
            Pair {
                queue,
                oracle: Oracle::default(),
                now: 0,
            }
        }
        fn push_at(&mut self, at: u64) {
            let seq = self.oracle.push(SimTime::from_ps(at));
            self.queue.push(SimTime::from_ps(at), seq);
            self.check();
        }
        fn push_after(&mut self, delta_ps: u64) {
            self.push_at(self.now.saturating_add(delta_ps));
        }
        fn pop(&mut self) -> Option<(SimTime, u64)> {
            let peeked = self.queue.peek().copied();
            let got = self.queue.pop();
            assert_eq!(
                peeked,
                got.map(|(_, ev)| ev),
                "peek names the event pop returns"
            );
            assert_eq!(
                got,
                self.oracle.pop(),
                "pop after {} pushes",
                self.oracle.pushed
            );
            if let Some((at, _)) = got {
                self.now = at.as_ps();
            }
            self.check();
            got
        }
        fn drain(&mut self) {
            while self.pop().is_some() {}
        }
        fn check(&self) {
            assert_eq!(self.queue.len(), self.oracle.heap.len());
            assert_eq!(self.queue.is_empty(), self.oracle.heap.is_empty());
            assert_eq!(self.queue.peek_time(), self.oracle.peek_time());
        }
    }

    /// Run `scenario` once per geometry.
    fn each_geometry(scenario: impl Fn(&mut Pair)) {
        for g in GEOMETRIES {
            let mut p = Pair::with_geometry(g);
            scenario(&mut p);
            p.drain();
        }
    }

    /// splitmix64, for the deterministic tests.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
        }
    }

    #[test]
    fn empty_queue() {
        let mut q = EventQueue::<u8>::new();
        assert_eq!((q.len(), q.is_empty(), q.peek_time()), (0, true, None));
        assert_eq!(q.pop(), None);
        assert!(EventQueue::<u8>::default().is_empty());
    }

    #[test]
    fn ties_pop_in_push_order() {
        let mut q = EventQueue::new();
        let t = SimTime::from_ps(7_000);
        let other = |i: u32| u64::from(i) * 1_000_003 % 50_000;
        for i in 0..1_000u32 {
            q.push(t, i);
            // Interleave other times, before and after, in the current block, the wheel and
            // the overflow.
            q.push(SimTime::from_ps(other(i)), 10_000 + i);
            q.push(SimTime::from_ps(other(i) << 20), 20_000 + i);
        }
        let ties: Vec<u32> = std::iter::from_fn(|| q.pop())
            .filter(|(at, _)| *at == t)
            .map(|(_, e)| e)
            .collect();
        let mut pushed_order = Vec::new();
        for i in 0..1_000u32 {
            pushed_order.push(i);
            if other(i) == 7_000 {
                pushed_order.push(10_000 + i);
            }
        }
        assert_eq!(ties, pushed_order);
    }

    #[test]
    fn push_at_now_pops_after_queued_ties_and_before_later_events() {
        let mut q = EventQueue::new();
        let t = SimTime::from_ps(5_000_000);
        q.push(t, "a");
        q.push(t, "b");
        q.push(t + SimDuration::from_ps(1), "later");
        q.push(t, "c");
        assert_eq!(q.pop(), Some((t, "a")));
        q.push(t, "d"); // at exactly the current time
        assert_eq!(q.peek_time(), Some(t));
        assert_eq!(q.pop(), Some((t, "b")));
        assert_eq!(q.pop(), Some((t, "c")));
        q.push(t, "e");
        assert_eq!(q.pop(), Some((t, "d")));
        assert_eq!(q.pop(), Some((t, "e")));
        assert_eq!(q.pop(), Some((t + SimDuration::from_ps(1), "later")));
        let now = t + SimDuration::from_ps(1);
        q.push(now + SimDuration::from_ms(1), "far");
        q.push(now, "now");
        assert_eq!(q.pop(), Some((now, "now")));
        assert_eq!(q.pop(), Some((now + SimDuration::from_ms(1), "far")));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn push_at_now_after_a_jump() {
        // The pop that jumps far ahead (to the overflow's minimum) must leave room for pushes
        // at that time, which pop after the events already there.
        each_geometry(|p| {
            p.push_at(1 << 40);
            p.push_at(1 << 40);
            p.push_at((1 << 40) + 3);
            p.push_at(1 << 41);
            p.pop();
            p.push_after(0);
            p.push_after(0);
            p.push_after(2);
            p.pop();
            p.push_after(0);
        });
    }

    #[test]
    fn far_future_timer_among_nanosecond_events() {
        // A 200 ms timer waits while a hold model of events a few nanoseconds to microseconds
        // apart runs past it (about 400 000 pops).
        each_geometry(|p| {
            let mut rng = SplitMix(1);
            p.push_at(SimDuration::from_ms(200).as_ps());
            for _ in 0..10 {
                p.push_after(rng.below(2_000_000));
            }
            while p.now < SimDuration::from_ms(201).as_ps() {
                p.pop();
                let spread = [10_000, 10_000_000][rng.below(2) as usize];
                p.push_after(rng.below(spread));
            }
        });
    }

    #[test]
    fn twenty_four_hour_horizon() {
        each_geometry(|p| {
            let mut rng = SplitMix(2);
            let day = SimDuration::from_secs(86_400).as_ps();
            for _ in 0..3_000 {
                match rng.below(4) {
                    0 => p.push_after(rng.below(day)),
                    1 => p.push_after(rng.below(1_000)),
                    2 => p.push_after(rng.below(10_000_000)),
                    _ => {
                        p.pop();
                    }
                }
            }
        });
    }

    #[test]
    fn times_near_u64_max() {
        each_geometry(|p| {
            let max = u64::MAX;
            for at in [
                max,
                max - 1,
                max,
                max - 256,
                max - (1 << 56),
                max - 255,
                max,
            ] {
                p.push_at(at);
            }
            for _ in 0..3 {
                p.pop();
            }
            p.push_after(0);
            p.push_at(max);
            p.drain();
            assert_eq!(p.now, max);
            p.push_at(max);
            p.push_at(max);
        });
    }

    #[test]
    fn drain_and_refill() {
        each_geometry(|p| {
            let mut rng = SplitMix(3);
            for round in 0..60u64 {
                let spread = 1 << (round % 50);
                for _ in 0..rng.below(300) {
                    p.push_after(rng.below(spread));
                }
                p.drain();
                assert_eq!(p.queue.pop(), None);
                assert_eq!(p.queue.peek_time(), None);
                // Refill starting at exactly the last popped time.
                p.push_after(0);
            }
        });
    }

    #[test]
    fn block_and_wheel_boundaries() {
        // Times just below, at and above every power of two, pushed in reverse, twice each.
        each_geometry(|p| {
            for bit in (1..64u32).rev() {
                let b = 1u64 << bit;
                for at in [b + 1, b, b - 1] {
                    p.push_at(at);
                    p.push_at(at);
                }
            }
        });
    }

    #[test]
    fn overflow_events_enter_the_wheel_before_pushes_reach_their_slot() {
        // 256 slots of 1 ps. An event at 267 waits in the overflow while the current block is
        // 1; when block 12 becomes current, 267 is exactly at the wheel's end, so it must move
        // into the wheel then, ahead of a later push at the same time.
        let mut p = Pair::with_geometry((8, 0, u64::MAX));
        p.push_at(1);
        p.push_at(12);
        p.push_at(267);
        assert_eq!(p.queue.overflow.len(), 1);
        p.pop();
        assert_eq!(p.queue.overflow.len(), 0);
        p.push_at(267);
        p.drain();
    }

    #[test]
    fn regime_changes_retune_and_keep_order() {
        // Dense, then sparse, then dense again, with adaptation at its real epoch length: the
        // geometry follows and the order stays exact.
        let mut p = Pair::default();
        let mut rng = SplitMix(4);
        for phase_spread in [10_000_000u64, 1 << 40, 1_000, 10_000_000] {
            for _ in 0..1_000 {
                p.push_after(rng.below(phase_spread));
            }
            for _ in 0..40_000 {
                p.pop();
                p.push_after(rng.below(phase_spread));
            }
        }
        p.drain();
    }

    #[test]
    fn hold_model_settles_on_a_fitting_geometry() {
        // 10 000 events over 10 µs: about one per nanosecond.
        let mut q = EventQueue::new();
        let mut rng = SplitMix(5);
        for i in 0..10_000 {
            q.push(SimTime::from_ps(rng.below(10_000_000)), i);
        }
        for i in 0..200_000 {
            let (at, _) = q.pop().expect("full");
            q.push(at + SimDuration::from_ps(rng.below(10_000_000)), i);
        }
        // The most slots (a slot per two events would be more), each block a few times the
        // mean gap between pops wide, so that the wheel spans twice `len` gaps.
        let block_ps = 1u64 << q.shift;
        assert_eq!(q.slots.len(), 1 << MAX_SLOTS_LOG2);
        assert!((4096..=16384).contains(&block_ps), "block {block_ps} ps");
        assert!(
            q.overflow.len() < 100,
            "{} events overflowed",
            q.overflow.len()
        );
    }

    #[test]
    fn burst_memory_is_given_back() {
        let mut p = Pair::default();
        // A burst at one instant in the wheel, one spread over a few blocks, and one in the
        // overflow, drained, then light traffic.
        for i in 0..5_000 {
            p.push_at(50_000);
            p.push_at(60_000 + i % 3_000);
            p.push_at(1 << 40);
        }
        p.drain();
        for _ in 0..5_000 {
            p.push_after(0);
        }
        p.drain();
        for _ in 0..1_000 {
            p.push_after(1_000);
            p.pop();
        }
        let q = &p.queue;
        // Each slot was handed the run's buffer when the queue held at most 15 000 events.
        let bound = RETAINED_SLOT_CAPACITY.max(2 * 15_000 / q.slots.len());
        assert!(q.slots.iter().all(|s| s.capacity() <= bound));
        assert!(q.run.capacity() <= RETAINED_SLOT_CAPACITY);
        assert!(q.late.capacity() <= RETAINED_HEAP_CAPACITY);
        // The overflow held at most 5 000.
        let bound = radix::RETAINED_SLOT_CAPACITY.max(5_000 / 64);
        assert!(q.overflow.max_slot_capacity() <= bound);
    }

    #[test]
    fn a_crowded_block_takes_late_pushes_in_a_heap_and_keeps_order() {
        // Blocks of about 1 µs: 100 events in one block, then pushes into it that would pop
        // after dozens of its events (an insertion would move them all) mixed with zero-delay
        // pushes and ties, which must still pop in (time, push) order.
        let mut p = Pair::with_geometry((8, 20, u64::MAX));
        for i in 0..100 {
            p.push_at(1_000 + i * 5);
        }
        p.pop();
        let mut used_heap = false;
        for i in 0..60 {
            p.push_after(200 + i % 3);
            used_heap |= !p.queue.late.is_empty();
            p.push_after(0);
            p.push_after(5);
            p.pop();
        }
        assert!(used_heap, "a push past many run events went to the heap");
        p.drain();
        assert!(p.queue.late.is_empty());
    }

    #[test]
    fn after_next_names_the_second_event_of_a_sorted_block() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(1), 0u32);
        // A later block in the wheel, pushed out of order: it becomes the sorted run after the
        // first pop.
        for (at, ev) in [(100_002, 3), (100_000, 1), (100_001, 2)] {
            q.push(SimTime::from_ps(at), ev);
        }
        assert_eq!(q.pop().map(|(_, e)| e), Some(0));
        assert_eq!((q.peek(), q.peek_after_next()), (Some(&1), Some(&2)));
        assert_eq!(q.pop().map(|(_, e)| e), Some(1));
        assert_eq!((q.peek(), q.peek_after_next()), (Some(&2), Some(&3)));
        q.pop();
        assert_eq!((q.peek(), q.peek_after_next()), (Some(&3), None));
    }

    #[test]
    fn owned_payloads_move_through() {
        let mut q = EventQueue::new();
        for i in 0..600u64 {
            q.push(
                SimTime::from_ps((i * 7_919 % 10_007) << (i % 40)),
                format!("e{i}"),
            );
        }
        let mut last = SimTime::ZERO;
        let mut seen = 0;
        while let Some((at, ev)) = q.pop() {
            assert!(at >= last);
            assert!(ev.starts_with('e'));
            last = at;
            seen += 1;
        }
        assert_eq!(seen, 600);
        // Dropping a non-empty queue drops its payloads.
        q.push(last, String::from("left behind"));
        q.push(last + SimDuration::from_secs(1), String::from("far behind"));
        drop(q);
    }

    #[test]
    fn debug_shows_len_and_next() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(42), ());
        let s = format!("{q:?}");
        assert!(s.contains("len: 1"), "{s}");
        assert!(s.contains("next: Some"), "{s}");
    }

    /// One step of a random workload.
    #[derive(Clone, Debug)]
    enum Op {
        /// Push at (time of last pop + delta), saturating at `u64::MAX`.
        Push(u64),
        /// Push this many events at one instant (last pop + delta).
        Burst(u8, u64),
        Pop,
    }

    fn ops(delta: impl Strategy<Value = u64> + Clone) -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            6 => delta.clone().prop_map(Op::Push),
            1 => (1..40u8, delta).prop_map(|(n, d)| Op::Burst(n, d)),
            5 => Just(Op::Pop),
        ];
        prop::collection::vec(op, 0..600)
    }

    /// Where the first event goes (and so where time starts).
    fn start() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0),
            Just(u64::MAX - (1 << 36)),
            Just(u64::MAX - 300),
            any::<u64>()
        ]
    }

    fn mixed_delta() -> impl Strategy<Value = u64> + Clone {
        prop_oneof![
            Just(0u64),
            0..256u64,
            0..10_000_000u64,
            0..(1u64 << 44),
            any::<u64>()
        ]
    }

    /// Replay `ops` from `start` against the oracle, under every geometry.
    fn run(start: u64, ops: &[Op]) {
        for g in GEOMETRIES {
            let mut p = Pair::with_geometry(g);
            p.push_at(start);
            p.pop();
            for op in ops {
                match *op {
                    Op::Push(d) => p.push_after(d),
                    Op::Burst(n, d) => (0..n).for_each(|_| p.push_after(d)),
                    Op::Pop => {
                        p.pop();
                    }
                }
            }
            p.drain();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn matches_oracle_with_ties_only(start in start(), ops in ops(Just(0u64))) {
            run(start, &ops);
        }

        #[test]
        fn matches_oracle_with_small_steps(start in start(), ops in ops(0..64u64)) {
            run(start, &ops);
        }

        #[test]
        fn matches_oracle_with_hold_steps(start in start(), ops in ops(0..10_000_000u64)) {
            run(start, &ops);
        }

        #[test]
        fn matches_oracle_with_huge_steps(start in start(), ops in ops(any::<u64>())) {
            run(start, &ops);
        }

        #[test]
        fn matches_oracle_with_mixed_steps(start in start(), ops in ops(mixed_delta())) {
            run(start, &ops);
        }
    }
}
