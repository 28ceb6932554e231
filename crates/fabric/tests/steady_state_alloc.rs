//! The fabric allocates nothing per packet once a run has reached its steady state: packets
//! live in an arena whose slots are reused, queues keep their capacity, and events are plain
//! values. Measured with a counting global allocator, in a test binary of its own so no other
//! test's allocations are counted.

// A global allocator must be an `unsafe impl`; it only counts and forwards to the system one.
#![allow(unsafe_code)]

use engine::{Budget, Scheduler, run};
use fabric::{
    Fabric, FabricConfig, FabricEvent, LinkConfig, PfcConfig, RawFlow, SwitchConfig, Topology,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use units::{Bandwidth, Priority, SimTime};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call unchanged to `System`, which upholds the GlobalAlloc contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made while running a 4→1 incast with PFC of `frames_per_sender` frames each.
fn allocations_for(frames_per_sender: u64) -> u64 {
    let topo = Topology::incast(4, LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let switch = SwitchConfig {
        pfc: Some(PfcConfig::new(1 << 3, 64_000, 32_000)),
        ..Default::default()
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            ..Default::default()
        },
    )
    .unwrap();
    let h = fab.hosts();
    for &s in &h[1..] {
        fab.add_flow(RawFlow {
            src: s,
            dst: h[0],
            bytes: frames_per_sender * 4000,
            payload_mtu: 4000,
            priority: Priority::of(3),
            start: SimTime::ZERO,
            ecn_capable: false,
        })
        .unwrap();
    }
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    let before = ALLOCS.load(Ordering::Relaxed);
    run(&mut fab, &mut sched, &Budget::UNLIMITED).unwrap();
    let after = ALLOCS.load(Ordering::Relaxed);
    assert!(fab.all_flows_done());
    assert!(fab.counters().pauses_sent > 0, "the incast exercised PFC");
    after - before
}

#[test]
fn no_allocation_per_packet_in_steady_state() {
    // 4 senders × (32,000 − 8,000) more frames, each crossing two links with PFC pauses in
    // between. One allocation per frame (or per hop) would add ≥ 96,000; the engine's event
    // queue may retune its wheel a few times as the horizon grows (measured: +177), so the
    // bound allows 1 allocation per 200 extra frames.
    let small = allocations_for(8_000);
    let large = allocations_for(32_000);
    let extra_frames = 4 * (32_000 - 8_000);
    assert!(
        large - small < extra_frames / 200,
        "{small} allocations for 32k frames, {large} for 128k"
    );
}
