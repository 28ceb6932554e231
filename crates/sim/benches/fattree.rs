//! Wall time of the 128-host fat-tree permutation (scenarios/fattree-permutation-128.toml):
//! QP setup and the whole data phase, through `rdmalab::permutation`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let text = include_str!("../../../scenarios/fattree-permutation-128.toml");
    let plan = scenario::parse_with(text, &[]).expect("the scenario parses");
    let mut g = c.benchmark_group("fattree_permutation");
    g.sample_size(10);
    g.bench_function("k8_128_hosts", |b| {
        b.iter(|| {
            black_box(
                rdmalab::permutation::run_plan(&plan, &Default::default(), None, 1).expect("runs"),
            )
        })
    });
    g.finish();
}

criterion_group!(fattree_benches, benches);
criterion_main!(fattree_benches);
