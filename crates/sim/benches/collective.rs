//! Wall time of the 16-host 1 GiB ring all-reduce on a leaf-spine (issue 23 item 5): QP
//! setup and the whole data phase, through `rdmalab::collective`, over RC with the default
//! knobs (one channel, one QP per connection, 512 KiB chunks).

use criterion::{Criterion, criterion_group, criterion_main};
use rdmalab::collective::{self, Config};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let mut plan = scenario::Plan::default();
    for s in [
        "workload.pattern=\"collective\"",
        "topology.kind=\"leaf_spine\"",
        "topology.hosts=16",
    ] {
        plan.set(s).expect("a valid key");
    }
    let cfg = Config {
        sizes: vec![1 << 30],
        ..Config::default()
    };
    let mut g = c.benchmark_group("collective");
    g.sample_size(10);
    g.bench_function("all_reduce_ring_16_hosts_1GiB_leaf_spine", |b| {
        b.iter(|| black_box(collective::run_plan(&plan, &Default::default(), &cfg).expect("runs")))
    });
    g.finish();
}

criterion_group!(collective_benches, benches);
criterion_main!(collective_benches);
