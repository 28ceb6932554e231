//! Pending events in exact canonical order: by time, then among events at one instant by the
//! tie-break each event carries ([`Tie`]), then first in, first out. A calendar wheel over a
//! radix queue.
//!
//! # Structure
//!
//! Time is cut into *blocks* of `2^shift` picoseconds, and the queue into three parts:
//!
//! 1. The *current block*: a *run* sorted by descending (time, tie, push order) and popped
//!    from its end, plus a binary heap of *late* events ordered by (time, tie, sequence
//!    number). A push into the current block (or, once its last event was popped, into the
//!    rest of it) is inserted into the run after every queued event at its time and tie, so
//!    a zero-delay event pops after the events already waiting at that instant with its tie
//!    or a lower one, and before everything later (the insertion moves the events that pop
//!    before it: a few, in a block of a few). Only when it would move many (a crowded block)
//!    does the push go to the heap instead, and then so does every later push into the
//!    block, until both are empty. The current block is empty only
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
//! and sorted stably by (time, tie), and overflow events that now fall inside the wheel move
//! into it.
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
//! # Exact ties
//!
//! Events at one instant pop by their [`Tie`], which the event computes from itself, so it
//! costs nothing to store and is read only when two times are equal (rare at picosecond
//! resolution). Among equal ties, first in, first out: in the heap of late events a sequence
//! number breaks ties. Everywhere else order holds by construction: a push into the run goes
//! after every event at its time and tie; the run's events were all pushed before the heap's
//! (once the heap has an event, the block's pushes go there), so they win ties; a wheel slot
//! lists its events in push order and is sorted stably; the radix queue pops equal times in
//! push order; and events at one time never sit in two of the parts 1 to 3, since a block
//! enters the wheel (taking its overflow events along) before any push reaches its slot, and
//! a slot becomes current before any push reaches its block.
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

/// What orders an event among the events at the same instant: lower ties pop first, equal ties
/// first in, first out. It must be a function of the event alone, never of when or by whom it
/// was pushed: that is what makes the order of a run independent of the order in which its
/// parts did their work (the scheduler's module docs say why that holds). The default, 0 for
/// every event, is plain first in, first out.
pub trait Tie {
    /// The event's tie-break.
    #[inline]
    fn tie(&self) -> u64 {
        0
    }
}

impl Tie for u8 {}
impl Tie for u32 {}
impl Tie for u64 {}
impl Tie for &str {}
impl Tie for String {}

/// `(time, tie)` of a queued event: the order's key.
#[inline(always)]
fn key<E: Tie>(&(at, ref ev): &(u64, E)) -> (u64, u64) {
    (at, ev.tie())
}

/// Whether queued `a` pops after `b`: a later time, or the same time and a higher tie (read
/// only then).
#[inline(always)]
fn after<E: Tie>(a: &(u64, E), b_at: u64, b_tie: u64) -> bool {
    a.0 > b_at || (a.0 == b_at && a.1.tie() > b_tie)
}

/// Pending events, popped in (time, [`Tie`], insertion) order.
///
/// Times must never go backwards: each push is at or after the time of the last pop (before
/// the first pop, any time is allowed). Events at the same time pop by tie, and those with
/// equal ties in the order they were pushed, including events pushed at exactly the time of
/// the last pop, which pop after every event already queued at that time with their tie or a
/// lower one.
pub struct EventQueue<E> {
    /// The current block's events (and any pushed since before it), sorted by descending
    /// (time, tie, push order): the next event is at the end, unless `late` has an earlier
    /// one.
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

/// An event pushed into a crowded current block, with its tie-break read once.
struct Late<E> {
    at: u64,
    tie: u64,
    seq: u64,
    ev: E,
}

impl<E> Late<E> {
    fn key(&self) -> Reverse<(u64, u64, u64)> {
        Reverse((self.at, self.tie, self.seq))
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
    /// Reversed, so that the max-heap pops the earliest (time, tie, sequence) first.
    fn cmp(&self, other: &Self) -> cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl<E: Tie> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Tie> fmt::Debug for EventQueue<E> {
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

impl<E: Tie> EventQueue<E> {
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

    /// The earliest event (at one time: the lowest tie, then the one pushed first).
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
    /// heap's top (the run's on equal time and tie: it was pushed first).
    #[inline(never)]
    fn pop_late_or_run(&mut self) -> Option<(SimTime, E)> {
        let from_run = match (self.run.last(), self.late.peek()) {
            (Some(r), Some(l)) => !after(r, l.at, l.tie),
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
            (Some(r), Some(l)) => Some(if !after(r, l.at, l.tie) { &r.1 } else { &l.ev }),
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

    /// Insert into the run after every event at or before (`at`, its tie), or into the heap
    /// when that would move many run events or the heap already holds some of the block's.
    #[inline(always)]
    fn file_in_run(&mut self, at: u64, ev: E) {
        if self.late.is_empty() {
            // Before (popping after) the events at or before its key, which sit at the end:
            // those later than `at`, then (rarely any) those at `at` with a higher tie.
            let mut i = self.run.partition_point(|&(t, _)| t > at);
            if self.run.get(i).is_some_and(|&(t, _)| t == at) {
                let tie = ev.tie();
                i += self.run[i..].partition_point(|e| after(e, at, tie));
            }
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
        let tie = ev.tie();
        self.late.push(Late { at, tie, seq, ev });
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
            // (time, tie, push order): reversed, then stably sorted by descending (time, tie),
            // the tie read only between equal times.
            mem::swap(&mut self.run, &mut self.slots[i]);
            match self.run.as_mut_slice() {
                [] | [_] => {}
                [a, b] => {
                    if a.0 < b.0 || (a.0 == b.0 && a.1.tie() <= b.1.tie()) {
                        mem::swap(a, b);
                    }
                }
                run => {
                    run.reverse();
                    run.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| y.1.tie().cmp(&x.1.tie())));
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
        // equal times and ties.
        let mut late = mem::take(&mut self.late).into_sorted_vec();
        late.reverse();
        let mut late = late.into_iter().peekable();
        while let Some(r) = self.run.last() {
            let (r_at, r_tie) = key(r);
            while let Some(l) = late.peek() {
                if (l.at, l.tie) >= (r_at, r_tie) {
                    break;
                }
                all.extend(late.next().map(|l| (l.at, l.ev)));
            }
            all.extend(self.run.pop());
        }
        all.extend(late.map(|l| (l.at, l.ev)));
        for d in 1..=self.mask {
            let i = ((self.block + d) & self.mask) as usize;
            if self.occupied.remove(i) {
                let mut events = mem::take(&mut self.slots[i]);
                // Stable: equal times and ties keep their push order.
                events.sort_by(|x, y| x.0.cmp(&y.0).then_with(|| x.1.tie().cmp(&y.1.tie())));
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
        // In (time, tie, push order) within each part, so equal keys keep their order (the
        // overflow's events, in (time, push order), are sorted by tie when their block becomes
        // current).
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
mod tests;
