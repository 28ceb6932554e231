//! One kernel TCP connection streaming 1 GiB at 100 Gb/s, back to back, TSO and GRO on, 1 MiB
//! `write()`s and 1 MiB `read()`s, with real payload bytes checked at the receiver.
//! Target (issue "Kernel TCP path and host cost model"): ≤ 1 s wall; reports packets/s.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{TcpOptions, World};
use std::hint::black_box;
use units::{Bandwidth, SimTime};
use verbs::NicProfile;

const CHUNK: usize = 1 << 20;
const TOTAL: u64 = 1 << 30;

/// Runs the stream; returns (frames delivered, simulated time in ps).
fn stream() -> (u64, u64) {
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).expect("valid");
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .expect("valid");
    let (sa, sb) = w
        .tcp_connect(0, 1, &TcpOptions::default())
        .expect("connect");
    let src: Vec<u8> = (0..CHUNK).map(|i| (i * 7 + i / 4093) as u8).collect();
    let mut buf = vec![0u8; CHUNK];
    let budget = Budget::default();
    let (mut sent, mut got) = (0u64, 0u64);
    let start = w.now();
    while got < TOTAL {
        let now = w.now();
        if sent < TOTAL && now >= w.app_ready(0) && w.tcp_writable(sa) > 0 {
            let off = (sent % CHUNK as u64) as usize;
            let n = w.tcp_write(0, sa, &src[off..]);
            sent += n as u64;
        }
        if now >= w.app_ready(1) {
            let n = w.tcp_read(1, sb, &mut buf);
            if n > 0 {
                let off = (got % CHUNK as u64) as usize;
                let (a, b) = buf[..n].split_at(n.min(CHUNK - off));
                assert!(a == &src[off..off + a.len()] && b == &src[..b.len()]);
                got += n as u64;
                continue;
            }
        }
        if got >= TOTAL {
            break;
        }
        // Wait for the next thing either application can do, without stepping event by event.
        let mut wait = SimTime::MAX;
        if sent < TOTAL && w.tcp_writable(sa) > 0 && w.app_ready(0) > now {
            wait = wait.min(w.app_ready(0));
        }
        if w.tcp_bytes_readable(sb) > 0 && w.tcp_ready_at(sb) > now {
            wait = wait.min(w.tcp_ready_at(sb));
        }
        if wait != SimTime::MAX {
            w.run_until(wait, &budget).expect("run");
        } else {
            let want_write = sent < TOTAL;
            let st = w
                .run_until_cond(SimTime::MAX, &budget, |w| {
                    (want_write && w.tcp_writable(sa) > 0) || w.tcp_bytes_readable(sb) > 0
                })
                .expect("run");
            assert!(st.events > 0, "stalled");
        }
    }
    (
        w.fabric().counters().delivered_frames,
        (w.now() - start).as_ps(),
    )
}

fn benches(c: &mut Criterion) {
    let t = std::time::Instant::now();
    let (frames, sim_ps) = stream();
    let wall = t.elapsed().as_secs_f64();
    eprintln!(
        "1 GiB TCP stream: {frames} frames delivered in {} µs simulated ({:.1} Gb/s goodput); \
         {wall:.2} s wall, {:.0} packets/s",
        sim_ps / 1_000_000,
        TOTAL as f64 * 8.0 / (sim_ps as f64 / 1e12) / 1e9,
        frames as f64 / wall
    );
    let mut g = c.benchmark_group("tcp");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames));
    g.bench_function("stream_1GiB_tso_gro", |b| b.iter(|| black_box(stream())));
    g.finish();
}

criterion_group!(tcp_benches, benches);
criterion_main!(tcp_benches);
