//! One RC QP streaming 1 GiB as 1 MiB RDMA WRITEs at 100 Gb/s, MTU 4096, back to back, with
//! synthetic memory on both sides (content generated from a seed, integrity checked by the
//! receiver's running comparison). Target (issue "verbs and RC"): ≤ 0.5 s wall.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{RcOptions, World};
use std::hint::black_box;
use units::{Bandwidth, SimDuration};
use verbs::{
    AccessFlags, NicProfile,
    wr::{SendWr, Sge},
};

const MSG: u64 = 1 << 20;
const COUNT: u64 = 1024;

/// Runs the stream; returns (events, frames delivered, simulated time in ps).
fn stream() -> (u64, u64, u64) {
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).expect("valid");
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .expect("valid");
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).expect("connect");
    let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    let src = w
        .verbs(0)
        .memory_mut()
        .alloc_synthetic(MSG * COUNT, 7)
        .expect("alloc");
    let smr = w
        .verbs(0)
        .reg_mr(a.pd, src, MSG * COUNT, access)
        .expect("reg");
    let dst = w
        .verbs(1)
        .memory_mut()
        .alloc_synthetic(MSG * COUNT, 7)
        .expect("alloc");
    let dmr = w
        .verbs(1)
        .reg_mr(b.pd, dst, MSG * COUNT, access)
        .expect("reg");
    let wrs: Vec<SendWr> = (0..COUNT)
        .map(|i| {
            let sge = Sge {
                addr: src + i * MSG,
                length: MSG as u32,
                lkey: smr.lkey,
            };
            SendWr::write(i, vec![sge], dst + i * MSG, dmr.rkey).signaled()
        })
        .collect();
    w.post_send(0, a.qpn, &wrs).expect("post");
    let st = w
        .run_until(w.now() + SimDuration::from_ms(200), &Budget::default())
        .expect("run");
    let wcs = w.poll_cq(0, a.cq, COUNT as usize + 1).expect("poll");
    assert_eq!(wcs.len() as u64, COUNT);
    let stats = w.verbs(1).memory().synthetic_stats(dst).expect("synthetic");
    assert_eq!(stats.bytes_written, MSG * COUNT);
    assert_eq!(stats.mismatched_bytes, 0);
    (
        st.events,
        w.fabric().counters().delivered_frames,
        w.now().as_ps(),
    )
}

fn benches(c: &mut Criterion) {
    let (events, frames, sim_ps) = stream();
    eprintln!(
        "1 GiB stream: {events} events, {frames} frames delivered, {} µs simulated",
        sim_ps / 1_000_000
    );
    let mut g = c.benchmark_group("rc");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames));
    g.bench_function("write_1GiB_as_1MiB_frames", |b| {
        b.iter(|| black_box(stream()))
    });
    g.finish();
}

criterion_group!(rc_benches, benches);
criterion_main!(rc_benches);
