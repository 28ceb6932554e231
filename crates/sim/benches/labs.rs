//! Wall time of each fabric lab's default run (issue 10's target: ≤ 300 ms each, so the lab
//! pages answer as the learner moves a control).

use criterion::{Criterion, criterion_group, criterion_main};
use rdmalab::labs::{catalogue, parse_params, run};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("lab_default_run");
    g.sample_size(10);
    for lab in catalogue() {
        let p = parse_params(lab.id, &serde_json::Value::Null).expect("defaults parse");
        g.bench_function(lab.id, |b| {
            b.iter(|| black_box(run(lab.id, &p).expect("runs")))
        });
    }
    g.finish();
}

criterion_group!(lab_benches, benches);
criterion_main!(lab_benches);
