//! Wall time of each lesson preset through the whole report (both paths, setup, and for ⑤
//! the loss-free reruns): the web lab answers slider moves with these runs.
//! Targets (issue 5): presets ①–④ and ⑥ ≤ 20 ms each, ⑤ ≤ 200 ms.

use criterion::{Criterion, criterion_group, criterion_main};
use rdmalab::report::run_plan;
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("preset");
    g.sample_size(10);
    for p in scenario::presets() {
        let plan = p.plan().expect("presets parse");
        g.bench_function(p.name, |b| {
            b.iter(|| black_box(run_plan(&plan).expect("runs")))
        });
    }
    g.finish();
}

criterion_group!(preset_benches, benches);
criterion_main!(preset_benches);
