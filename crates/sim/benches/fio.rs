//! fio's 4 KiB random read at queue depth 32 for 30 ms of simulated time, one initiator, over
//! NVMe/RDMA and over NVMe/TCP (each run also runs the local-device baseline beside it).
//! Target (issue 23 item 5): each within 2 s of wall time on the 2-core development box.

use criterion::{Criterion, criterion_group, criterion_main};
use rdmalab::nvmf::{FioConfig, IoEngine, run};
use std::hint::black_box;

fn job(e: IoEngine) -> FioConfig {
    let mut c = FioConfig::new(e);
    c.iodepth = 32;
    c
}

/// The queue-depth table of the note: 4 KiB randread, 30 ms, both transports.
fn table() {
    eprintln!(
        "engine     QD     IOPS   clat p50   p99  p99.9 (µs)  CPU/IO init usr+sys  target usr+sys (ns)"
    );
    for e in [IoEngine::Rdma, IoEngine::Tcp] {
        for qd in [1, 2, 4, 8, 16, 32, 64, 128] {
            let mut c = job(e);
            c.iodepth = qd;
            let r = run(&c, None).expect("runs");
            let us = |ps: u64| ps as f64 / 1e6;
            eprintln!(
                "{:<9} {qd:>3} {:>8.0} {:>10.2} {:>6.2} {:>6.2}  {:>6.0}+{:<6.0} {:>6.0}+{:<6.0}",
                e.name(),
                r.iops,
                us(r.clat.p50_ps),
                us(r.clat.p99_ps),
                us(r.clat.p999_ps),
                r.cpu_initiator.usr_ns,
                r.cpu_initiator.sys_ns,
                r.cpu_target.usr_ns,
                r.cpu_target.sys_ns,
            );
        }
    }
    let l = run(&job(IoEngine::Local), None).expect("runs").clat.p50_ps;
    eprintln!("local device, QD32: clat p50 {:.2} µs", l as f64 / 1e6);
}

fn benches(c: &mut Criterion) {
    if std::env::var_os("FIO_TABLE").is_some() {
        table();
    }
    let mut g = c.benchmark_group("fio");
    g.sample_size(10);
    for (name, e) in [
        ("randread_4k_qd32_30ms_rdma", IoEngine::Rdma),
        ("randread_4k_qd32_30ms_tcp", IoEngine::Tcp),
    ] {
        let r = run(&job(e), None).expect("runs");
        eprintln!(
            "{name}: {:.0} IOPS simulated, {} events, {:.3} s wall",
            r.iops,
            r.events,
            r.wall_ns as f64 / 1e9
        );
        g.bench_function(name, |b| {
            b.iter(|| black_box(run(&job(e), None).expect("runs")))
        });
    }
    g.finish();
}

criterion_group!(fio_benches, benches);
criterion_main!(fio_benches);
