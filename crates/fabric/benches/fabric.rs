//! Fabric throughput benchmarks (criterion).
//!
//! - `one_hop_1GiB`: 1 GiB in 4096-byte frames from one host through one switch to another
//!   (262,144 frames). Target: ≥ 5 M simulated frames per second of wall time.
//! - `fat_tree_k8_permutation_1MB`: 128 hosts (k = 8 fat tree), each sending 1 MB raw flows to a
//!   random permutation partner with PFC on; the baseline the scale work improves on. Reports
//!   events per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::{Budget, RngStreams, Scheduler, StreamId, run};
use fabric::{
    Fabric, FabricConfig, FabricEvent, LinkConfig, PfcConfig, RawFlow, SwitchConfig, Topology,
};
use std::hint::black_box;
use units::{Bandwidth, Priority, SimTime};

const FRAME: u32 = 4096;
const PAYLOAD: u32 = FRAME - 62;
const FRAMES_1GIB: u64 = (1 << 30) / FRAME as u64;

fn one_hop() -> (u64, u64) {
    let topo = Topology::star(2, LinkConfig::new(Bandwidth::gbps(100), 3)).expect("valid");
    let mut fab = Fabric::new(&topo, FabricConfig::default()).expect("valid");
    let h = fab.hosts();
    fab.add_flow(RawFlow {
        src: h[0],
        dst: h[1],
        bytes: FRAMES_1GIB * PAYLOAD as u64,
        payload_mtu: PAYLOAD,
        priority: Priority::of(3),
        start: SimTime::ZERO,
        ecn_capable: true,
    })
    .expect("valid");
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    let st = run(&mut fab, &mut sched, &Budget::UNLIMITED).expect("no budget");
    assert!(fab.all_flows_done());
    (fab.counters().delivered_frames, st.events)
}

fn permutation_k8() -> u64 {
    let topo = Topology::fat_tree(8, LinkConfig::new(Bandwidth::gbps(100), 20)).expect("valid");
    let switch = SwitchConfig {
        buffer_bytes: 4 << 20,
        pfc: Some(PfcConfig::new(1 << 3, 60_000, 40_000)),
        ..SwitchConfig::default()
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: 1,
            ..Default::default()
        },
    )
    .expect("valid");
    let hosts = fab.hosts();
    let mut perm: Vec<usize> = (0..hosts.len()).collect();
    // A random derangement, drawn from the seed.
    let mut rng = RngStreams::new(1).stream(StreamId::new("bench-permutation", 0));
    loop {
        rng.shuffle(&mut perm);
        if perm.iter().enumerate().all(|(i, &j)| i != j) {
            break;
        }
    }
    for (i, &j) in perm.iter().enumerate() {
        fab.add_flow(RawFlow {
            src: hosts[i],
            dst: hosts[j],
            bytes: 1_000_000,
            payload_mtu: PAYLOAD,
            priority: Priority::of(3),
            start: SimTime::ZERO,
            ecn_capable: true,
        })
        .expect("valid");
    }
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    let st = run(&mut fab, &mut sched, &Budget::UNLIMITED).expect("no budget");
    assert!(fab.all_flows_done());
    assert_eq!(fab.counters().drops(), 0);
    st.events
}

fn benches(c: &mut Criterion) {
    let (frames, _) = one_hop();
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames));
    g.bench_function("one_hop_1GiB_frames", |b| b.iter(|| black_box(one_hop())));
    let events = permutation_k8();
    g.throughput(Throughput::Elements(events));
    g.bench_function("fat_tree_k8_permutation_1MB_events", |b| {
        b.iter(|| black_box(permutation_k8()))
    });
    g.finish();
}

criterion_group!(fabric_benches, benches);
criterion_main!(fabric_benches);
