//! Unit tests of [`queue`](super), in a file of their own so the model reads in one screen.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;
use units::SimDuration;

use super::*;

/// The specification: a binary heap ordered by (time, tie, push sequence). The payload of
/// the queue under test is the push sequence and its tie, so comparing pops checks payload
/// identity too.
#[derive(Default)]
struct Oracle {
    heap: BinaryHeap<Reverse<(SimTime, u64, u64)>>,
    pushed: u64,
}

impl Oracle {
    /// Push at `at` with a tie `ties` gives the push; returns the payload to give the queue
    /// under test.
    fn push(&mut self, at: SimTime, ties: Ties) -> Tied {
        let seq = self.pushed;
        self.pushed += 1;
        let tie = ties.of(seq);
        self.heap.push(Reverse((at, tie, seq)));
        Tied { seq, tie }
    }
    fn pop(&mut self) -> Option<(SimTime, Tied)> {
        self.heap
            .pop()
            .map(|Reverse((at, tie, seq))| (at, Tied { seq, tie }))
    }
    fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((at, ..))| *at)
    }
}

/// A test payload: its push sequence and the tie it carries.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
struct Tied {
    seq: u64,
    tie: u64,
}

impl Tie for Tied {
    fn tie(&self) -> u64 {
        self.tie
    }
}

/// How the tests give ties.
#[derive(Clone, Copy, Debug)]
enum Ties {
    /// All 0: first in, first out.
    Fifo,
    /// One of five (scrambled from the push sequence), as a model's entities: at one
    /// instant, events pop by tie first, then in push order.
    Entities,
}

impl Ties {
    fn of(self, seq: u64) -> u64 {
        match self {
            Ties::Fifo => 0,
            Ties::Entities => seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 5,
        }
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
    queue: EventQueue<Tied>,
    oracle: Oracle,
    ties: Ties,
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
            ties: Ties::Fifo,
            now: 0,
        }
    }
    fn push_at(&mut self, at: u64) {
        let ev = self.oracle.push(SimTime::from_ps(at), self.ties);
        self.queue.push(SimTime::from_ps(at), ev);
        self.check();
    }
    fn push_after(&mut self, delta_ps: u64) {
        self.push_at(self.now.saturating_add(delta_ps));
    }
    fn pop(&mut self) -> Option<(SimTime, Tied)> {
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
            "pop after {} pushes ({:?} ties)",
            self.oracle.pushed,
            self.ties
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

/// Replay `ops` from `start` against the oracle, under every geometry, with and without
/// ties.
fn run(start: u64, ops: &[Op]) {
    for (g, ties) in GEOMETRIES
        .into_iter()
        .flat_map(|g| [(g, Ties::Fifo), (g, Ties::Entities)])
    {
        let mut p = Pair::with_geometry(g);
        p.ties = ties;
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

// The payloads of the examples above: first in, first out at one instant.
impl Tie for i32 {}
impl Tie for () {}
