//! Event queue throughput on the hold model, against the binary heap it replaced.
//!
//! The hold model (Jones 1986, the standard priority-queue benchmark for simulators): fill the
//! queue with [`PENDING`] events at uniform times in `[0, 10 µs]`, then repeat "pop the earliest
//! event, push one at its time plus a uniform `[0, 10 µs]`". The queue size stays constant, so
//! each hold is one simulated event; throughput is reported in events (holds) per second.
//! Each queue lives across iterations, so what is measured is the steady state (the event
//! queue settles its block width and slot count within the warm-up).
//!
//! Run: `cargo bench -p engine --bench event_queue -- --warm-up-time 1 --measurement-time 3`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use engine::queue::{EventQueue, Tie};
use units::SimTime;

/// Pending events in the hold model.
const PENDING: usize = 10_000;
/// Holds per measured iteration.
const HOLDS: u64 = 100_000;
/// Upper bound of the uniform scheduling delay: 10 µs in picoseconds.
const MAX_DELAY_PS: u64 = 10_000_000;

/// A 16-byte event, shaped like the simulator's: a tag and a few handles or a timer id.
#[derive(Clone, Copy)]
enum Event16 {
    Arrive { packet: u32, node: u32, port: u32 },
    Timer(u64),
}

/// An 8-byte event.
#[derive(Clone, Copy)]
enum Event8 {
    Arrive { packet: u32 },
    Timer(u32),
}

const _: () = assert!(size_of::<Event16>() == 16 && size_of::<Event8>() == 8);

/// Ties as the simulator's: an arrival by its port, everything else 0.
impl Tie for Event16 {
    fn tie(&self) -> u64 {
        match *self {
            Event16::Arrive { port, .. } => u64::from(port) + 1,
            Event16::Timer(_) => 0,
        }
    }
}

impl Tie for Event8 {}

trait Payload: Copy + Tie {
    fn make(r: u64) -> Self;
    /// A value read from the event, as a handler would.
    fn read(self) -> u64;
}

impl Payload for Event16 {
    fn make(r: u64) -> Self {
        if r & 1 == 0 {
            Event16::Arrive {
                packet: r as u32,
                node: (r >> 32) as u32,
                port: 3,
            }
        } else {
            Event16::Timer(r)
        }
    }
    fn read(self) -> u64 {
        match self {
            Event16::Arrive { packet, node, port } => u64::from(packet ^ node ^ port),
            Event16::Timer(id) => id,
        }
    }
}

impl Payload for Event8 {
    fn make(r: u64) -> Self {
        if r & 1 == 0 {
            Event8::Arrive { packet: r as u32 }
        } else {
            Event8::Timer(r as u32)
        }
    }
    fn read(self) -> u64 {
        match self {
            Event8::Arrive { packet } => u64::from(packet),
            Event8::Timer(id) => u64::from(id),
        }
    }
}

/// The operations the hold model needs, for both queues.
trait Queue<E> {
    fn push(&mut self, at: SimTime, ev: E);
    fn pop(&mut self) -> Option<(SimTime, E)>;
}

impl<E: Tie> Queue<E> for EventQueue<E> {
    #[inline]
    fn push(&mut self, at: SimTime, ev: E) {
        EventQueue::push(self, at, ev);
    }
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, E)> {
        EventQueue::pop(self)
    }
}

/// The baseline: the binary heap the engine started with, ordered by (time, push sequence).
struct Heap<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
}

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

impl<E> Queue<E> for Heap<E> {
    #[inline]
    fn push(&mut self, at: SimTime, ev: E) {
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Reverse(Entry { at, seq, ev }));
    }
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|Reverse(e)| (e.at, e.ev))
    }
}

/// splitmix64: small, fast and deterministic.
struct SplitMix(u64);

impl SplitMix {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, n]`.
    #[inline]
    fn up_to(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n + 1)) >> 64) as u64
    }
}

/// Fill `q` for the hold model.
fn fill<E: Payload>(q: &mut impl Queue<E>, rng: &mut SplitMix) {
    for _ in 0..PENDING {
        let r = rng.next();
        q.push(SimTime::from_ps(rng.up_to(MAX_DELAY_PS)), E::make(r));
    }
}

/// `n` holds; returns a value that depends on every popped event, so none can be skipped.
#[inline(never)]
fn hold<E: Payload>(q: &mut impl Queue<E>, rng: &mut SplitMix, n: u64) -> u64 {
    let mut acc = 0u64;
    for _ in 0..n {
        let (at, ev) = q.pop().expect("the hold model keeps the queue full");
        acc = acc.wrapping_add(at.as_ps() ^ ev.read());
        let r = rng.next();
        let delay = ((u128::from(r) * u128::from(MAX_DELAY_PS + 1)) >> 64) as u64;
        q.push(SimTime::from_ps(at.as_ps() + delay), E::make(r));
    }
    acc
}

fn bench_payload<E: Payload>(c: &mut Criterion, payload: &str) {
    let mut group = c.benchmark_group(format!("hold_10k_uniform_10us/{payload}"));
    group.throughput(Throughput::Elements(HOLDS));
    group.sample_size(30);

    let mut rng = SplitMix(0x5eed);
    let mut q = EventQueue::<E>::new();
    fill(&mut q, &mut rng);
    group.bench_function(BenchmarkId::from_parameter("event_queue"), |b| {
        b.iter(|| black_box(hold(&mut q, &mut rng, HOLDS)));
    });

    let mut rng = SplitMix(0x5eed);
    let mut q = Heap::<E> {
        heap: BinaryHeap::with_capacity(PENDING + 1),
        seq: 0,
    };
    fill(&mut q, &mut rng);
    group.bench_function(BenchmarkId::from_parameter("binary_heap"), |b| {
        b.iter(|| black_box(hold(&mut q, &mut rng, HOLDS)));
    });

    group.finish();
}

fn hold_model(c: &mut Criterion) {
    bench_payload::<Event16>(c, "16_byte_event");
    bench_payload::<Event8>(c, "8_byte_event");
}

criterion_group!(benches, hold_model);
criterion_main!(benches);
