//! Wall time of 10 ms of a 2→1 DCQCN incast at 100 Gb/s (issue 7's target: ≤ 0.2 s), under
//! both parameter profiles, without observers.

use criterion::{Criterion, criterion_group, criterion_main};
use fabric::{EcnConfig, PfcConfig};
use rdmalab::incast::{IncastConfig, run};
use std::hint::black_box;
use transport::roce::dcqcn::DcqcnParams;
use units::{Probability, SimDuration};

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("dcqcn_incast_2to1_10ms");
    g.sample_size(10);
    for p in [DcqcnParams::PAPER, DcqcnParams::NVIDIA] {
        let cfg = IncastConfig {
            senders: 2,
            link_gbps: 100,
            dcqcn: Some(p),
            ecn: Some(EcnConfig {
                priorities: 1 << 3,
                kmin_bytes: 10_000,
                kmax_bytes: 100_000,
                pmax: Probability::from_ratio(1, 100),
                on_dequeue: true,
            }),
            pfc: Some(PfcConfig::new(1 << 3, 2 << 20, (2 << 20) - 4096)),
            duration: SimDuration::from_ms(10),
            window: SimDuration::from_ms(1),
            observe: false,
        };
        g.bench_function(p.name, |b| b.iter(|| black_box(run(&cfg).expect("runs"))));
    }
    g.finish();
}

criterion_group!(dcqcn_benches, benches);
criterion_main!(dcqcn_benches);
