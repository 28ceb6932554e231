//! Wall time of the 128-host fat-tree permutation (scenarios/fattree-permutation-128.toml):
//! QP setup and the whole data phase, through `rdmalab::permutation`, on one thread and on
//! two (the fabric split into two partitions of whole pods, issue 24; the same run).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let text = include_str!("../../../scenarios/fattree-permutation-128.toml");
    let plan = scenario::parse_with(text, &[]).expect("the scenario parses");
    let mut g = c.benchmark_group("fattree_permutation");
    g.sample_size(10);
    for threads in [1, 2] {
        // The first name is the one the README's benchmark table has always quoted.
        let name = if threads == 1 {
            "k8_128_hosts".to_string()
        } else {
            format!("k8_128_hosts_{threads}_threads")
        };
        g.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    rdmalab::permutation::run_plan(
                        &plan,
                        &Default::default(),
                        &rdmalab::fleet::Outputs::threads(threads),
                    )
                    .expect("runs"),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(fattree_benches, benches);
criterion_main!(fattree_benches);
