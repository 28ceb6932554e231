//! The kernel TCP socket path end to end: copies, syscalls, kernel stages on both hosts, the
//! offload and interrupt options, CPU-bound throughput, integrity under loss, pcap decoding in
//! tshark and determinism. Every number is read from a run of the model.
//!
//! Without tshark on PATH the pcap test fails when `CI` is set and otherwise warns loudly.

use crate::support;

use engine::{Budget, ExecUnit, TraceRecord, Tracer, VecObserver};
use fabric::{DropRule, FabricConfig, LinkConfig, Topology};
use host::HostProfile;
use rdmalab::world::{SocketId, TcpOptions, World};
use units::{Bandwidth, Probability, SimDuration, SimTime};
use verbs::NicProfile;

fn world_with(link: LinkConfig, profile: HostProfile, seed: u64) -> World {
    let topo = Topology::back_to_back(link).unwrap();
    let cfg = FabricConfig {
        seed,
        ..FabricConfig::default()
    };
    World::new(&topo, cfg, profile, NicProfile::Mlx5).unwrap()
}

fn world() -> World {
    world_with(
        LinkConfig::new(Bandwidth::gbps(100), 3),
        HostProfile::default(),
        1,
    )
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 251) as u8).collect()
}

/// What a transfer did.
struct Transfer {
    received: Vec<u8>,
    writes: u64,
    reads: u64,
    /// (time, bytes received so far) after each read.
    progress: Vec<(SimTime, usize)>,
}

/// The sender writes `msg` in `chunk`-byte writes as fast as its thread allows; the receiver
/// reads with a `read_buf`-byte buffer (blocking reads: a read that finds nothing blocks and is
/// completed by the next call after the wake-up).
fn transfer(
    w: &mut World,
    (a, sa): (u32, SocketId),
    (b, sb): (u32, SocketId),
    msg: &[u8],
    chunk: usize,
    read_buf: usize,
) -> Transfer {
    let budget = Budget::default();
    let mut t = Transfer {
        received: Vec::with_capacity(msg.len()),
        writes: 0,
        reads: 0,
        progress: Vec::new(),
    };
    let mut sent = 0;
    let mut buf = vec![0u8; read_buf];
    let mut steps = 0u64;
    while t.received.len() < msg.len() {
        steps += 1;
        assert!(steps < 50_000_000, "transfer did not finish");
        let now = w.now();
        if sent < msg.len() && now >= w.app_ready(a) && w.tcp_writable(sa) > 0 {
            let end = (sent + chunk).min(msg.len());
            let n = w.tcp_write(a, sa, &msg[sent..end]);
            if n > 0 {
                t.writes += 1;
                sent += n;
            }
        }
        if now >= w.app_ready(b) {
            let n = w.tcp_read(b, sb, &mut buf);
            if n > 0 {
                t.reads += 1;
                t.received.extend_from_slice(&buf[..n]);
                t.progress.push((w.now(), t.received.len()));
                continue;
            }
        }
        let mut next = w.next_event_at().unwrap_or(SimTime::MAX);
        for h in [a, b] {
            if w.app_ready(h) > now {
                next = next.min(w.app_ready(h));
            }
        }
        assert!(next != SimTime::MAX, "nothing left to do before the end");
        w.run_until(next.max(now + SimDuration::from_ps(1)), &budget)
            .unwrap();
    }
    t
}

fn cpu_stages(w: &World, h: u32) -> Vec<&'static str> {
    w.host(h)
        .cpu()
        .account()
        .by_stage
        .keys()
        .map(|s| s.name())
        .collect()
}

#[test]
fn a_4k_message_costs_two_copies_two_syscalls_and_both_kernels() {
    let mut w = world();
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    let before = (w.socket_stats(0), w.socket_stats(1));
    let msg = pattern(4096);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 65536);
    assert_eq!(t.received, msg, "bytes differ at the receiver");
    let (s0, s1) = (w.socket_stats(0), w.socket_stats(1));
    eprintln!(
        "4 KiB: read returned at {:?}; sender {s0:?}; receiver {s1:?}",
        t.progress[0].0
    );
    assert_eq!(s0.copies - before.0.copies, 1, "one copy on the sender");
    assert_eq!(s1.copies - before.1.copies, 1, "one copy on the receiver");
    assert_eq!(s0.copied_bytes - before.0.copied_bytes, 4096);
    assert_eq!(s1.copied_bytes - before.1.copied_bytes, 4096);
    assert_eq!(s0.syscalls.get("write"), Some(&1));
    assert_eq!(s1.syscalls.get("read"), Some(&1));
    assert_eq!(s0.syscall_count() + s1.syscall_count(), 2);
    assert!(s1.interrupts >= 1 && s1.softirq_runs >= 1);
    assert!(s1.context_switches >= 1, "the blocked reader was woken");
    for (h, need) in [
        (
            0,
            &[
                "write() syscall entry",
                "copy user→kernel",
                "TCP/IP TX (TSO super-segment)",
                "driver TX + doorbell",
                "write() syscall exit",
            ][..],
        ),
        (
            1,
            &[
                "hard interrupt",
                "softirq (NAPI poll)",
                "TCP/IP RX (softirq)",
                "TCP TX (ACK)",
                "wake-up (context switch)",
                "read() syscall entry",
                "copy kernel→user",
                "read() syscall exit",
            ][..],
        ),
    ] {
        let stages = cpu_stages(&w, h);
        for s in need {
            assert!(stages.contains(s), "host {h} lacks stage {s}: {stages:?}");
        }
    }
    // The sender's kernel also ran: it took the ACK in softirq.
    assert!(cpu_stages(&w, 0).contains(&"TCP/IP RX (softirq)"));
}

#[test]
fn a_1k_read_buffer_needs_four_reads_for_4k() {
    let mut w = world();
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    let msg = pattern(4096);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 1024);
    assert_eq!(t.received, msg);
    assert_eq!(t.reads, 4);
    assert_eq!(w.socket_stats(1).syscalls.get("read"), Some(&4));
}

#[test]
fn a_message_larger_than_the_send_buffer_needs_several_writes() {
    let mut w = world();
    let mut o = TcpOptions::default();
    o.config.send_buffer = 64 << 10;
    let (sa, sb) = w.tcp_connect(0, 1, &o).unwrap();
    let msg = pattern(256 << 10);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, msg.len(), 1 << 20);
    assert_eq!(t.received, msg);
    assert!(t.writes >= 2, "writes = {}", t.writes);
    assert_eq!(w.socket_stats(0).syscalls.get("write"), Some(&t.writes));
}

fn rx_counts(o: &TcpOptions) -> (u64, u64) {
    let mut w = world();
    let (sa, sb) = w.tcp_connect(0, 1, o).unwrap();
    let before = w.socket_stats(1);
    let msg = pattern(1 << 20);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 1 << 20, 1 << 20);
    assert_eq!(t.received, msg);
    let s = w.socket_stats(1);
    (
        s.softirq_runs - before.softirq_runs,
        s.stack_segments - before.stack_segments,
    )
}

#[test]
fn gro_and_coalescing_change_interrupt_and_softirq_counts() {
    let base = TcpOptions::default();
    let (_, stack_gro) = rx_counts(&base);
    let (_, stack_nogro) = rx_counts(&TcpOptions {
        gro: false,
        ..base.clone()
    });
    // 1 MiB is about 720 wire segments: GRO hands the stack far fewer.
    assert!(
        stack_nogro >= 700 && stack_gro * 4 <= stack_nogro,
        "GRO: {stack_gro} stack segments vs {stack_nogro} without"
    );
    // Coalescing matters when segments arrive spread out (a stream keeps NAPI polling and
    // needs few interrupts either way): 64 one-segment messages, 2 µs apart.
    let (irq_1, softirq_1) = sparse_counts(&TcpOptions {
        coalesce_frames: 1,
        coalesce_usecs: SimDuration::ZERO,
        ..base.clone()
    });
    let (irq_16, softirq_16) = sparse_counts(&TcpOptions {
        coalesce_frames: 16,
        coalesce_usecs: SimDuration::from_us(100),
        ..base.clone()
    });
    eprintln!(
        "GRO stack segments {stack_gro} vs {stack_nogro}; interrupts {irq_16} vs {irq_1}, \
         softirqs {softirq_16} vs {softirq_1}"
    );
    assert!(irq_1 >= 60, "one interrupt per segment: {irq_1}");
    assert!(
        irq_16 * 8 <= irq_1,
        "coalescing: {irq_16} interrupts vs {irq_1} with one per segment"
    );
    assert!(softirq_16 * 8 <= softirq_1, "{softirq_16} vs {softirq_1}");
}

/// Receiver interrupts and softirq runs for 64 one-segment messages sent 2 µs apart.
fn sparse_counts(o: &TcpOptions) -> (u64, u64) {
    let mut w = world();
    let (sa, sb) = w.tcp_connect(0, 1, o).unwrap();
    let before = w.socket_stats(1);
    let msg = pattern(1000);
    for _ in 0..64 {
        assert_eq!(w.tcp_write(0, sa, &msg), msg.len());
        let t = w.now() + SimDuration::from_us(2);
        w.run_until(t, &Budget::default()).unwrap();
    }
    w.run_until(w.now() + SimDuration::from_ms(1), &Budget::default())
        .unwrap();
    assert_eq!(w.tcp_connection(sb).bytes_readable(), 64 * 1000);
    let s = w.socket_stats(1);
    (
        s.interrupts - before.interrupts,
        s.softirq_runs - before.softirq_runs,
    )
}

#[test]
fn msg_zerocopy_removes_the_send_copy() {
    let run = |zc: bool| {
        let mut w = world();
        let o = TcpOptions {
            msg_zerocopy: zc,
            ..TcpOptions::default()
        };
        let (sa, sb) = w.tcp_connect(0, 1, &o).unwrap();
        let before = [w.socket_stats(0), w.socket_stats(1)];
        let msg = pattern(4096);
        let t = transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 65536);
        assert_eq!(t.received, msg);
        // Let the ACK (and the zerocopy completion) arrive.
        w.run_until(w.now() + SimDuration::from_ms(1), &Budget::default())
            .unwrap();
        let after = [w.socket_stats(0), w.socket_stats(1)];
        let copies: u64 = (0..2).map(|i| after[i].copies - before[i].copies).sum();
        let bus: u64 = (0..2)
            .map(|i| after[i].memory_bus_bytes() - before[i].memory_bus_bytes())
            .sum();
        (copies, bus, after[0].zerocopy_notifications)
    };
    let (c_copy, bus_copy, n_copy) = run(false);
    let (c_zc, bus_zc, n_zc) = run(true);
    assert_eq!((c_copy, c_zc), (2, 1));
    assert_eq!(bus_copy - bus_zc, 2 * 4096, "a copy reads and writes 4 KiB");
    assert_eq!((n_copy, n_zc), (0, 1));
}

/// Receiver throughput in bytes/s between 25% and 75% of a transfer.
fn stream_rate(copy_ps_per_byte: u64) -> f64 {
    let mut p = HostProfile::default();
    p.socket.copy.per_byte_ps = copy_ps_per_byte;
    let mut w = world_with(LinkConfig::new(Bandwidth::gbps(100), 3), p, 1);
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    let msg = pattern(8 << 20);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 256 << 10, 256 << 10);
    assert_eq!(t.received, msg);
    let at = |bytes: usize| *t.progress.iter().find(|p| p.1 >= bytes).unwrap();
    let (t1, b1) = at(2 << 20);
    let (t2, b2) = at(6 << 20);
    let span = t2 - t1;
    assert!(span >= SimDuration::from_ms(1), "steady state {span:?}");
    (b2 - b1) as f64 / span.as_secs_f64()
}

#[test]
fn doubling_the_copy_cost_halves_a_cpu_bound_stream() {
    // 1 ns/B (1 GB/s) copies make the copy the bottleneck well below 100 Gb/s.
    let r1 = stream_rate(1_000);
    let r2 = stream_rate(2_000);
    let ratio = r1 / r2;
    eprintln!(
        "copy 1 ns/B: {:.3} GB/s; 2 ns/B: {:.3} GB/s; ratio {ratio:.3}",
        r1 / 1e9,
        r2 / 1e9
    );
    assert!(
        (1.8..=2.2).contains(&ratio),
        "{:.2} GB/s vs {:.2} GB/s: ratio {ratio:.3}",
        r1 / 1e9,
        r2 / 1e9
    );
    assert!(r1 < 1.05e9, "bounded by the 1 GB/s copy: {r1}");
}

#[test]
fn sixty_four_mib_survive_one_percent_loss_byte_identical() {
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.corruption = Probability::from_f64(0.01).unwrap();
    let mut w = world_with(link, HostProfile::default(), 7);
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    let msg = pattern(64 << 20);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 1 << 20, 1 << 20);
    assert!(t.received == msg, "bytes differ");
    let c = w.tcp_connection(sa).counters();
    assert!(
        c.retransmitted_segments > 0,
        "1% loss must cost retransmits"
    );
}

#[test]
fn same_seed_same_trace_hash() {
    let run = |seed: u64| {
        let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
        link.loss.corruption = Probability::from_f64(0.01).unwrap();
        let mut w = world_with(link, HostProfile::default(), seed);
        w.set_tracer(Tracer::new(engine::TraceHasher::default()));
        w.fabric_mut()
            .set_tracer(Tracer::new(engine::TraceHasher::default()));
        let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
        let msg = pattern(1 << 20);
        let t = transfer(&mut w, (0, sa), (1, sb), &msg, 1 << 20, 1 << 20);
        assert_eq!(t.received, msg);
        let a = w.tracer_mut().take::<engine::TraceHasher>().unwrap();
        let b = w
            .fabric_mut()
            .tracer_mut()
            .take::<engine::TraceHasher>()
            .unwrap();
        (a.hash(), a.records(), b.hash(), w.now())
    };
    let x = run(3);
    assert!(x.1 > 1000);
    assert_eq!(x, run(3));
    assert_ne!(x, run(4), "a different seed draws different losses");
}

#[test]
fn stages_are_traced_on_cores_nic_and_pcie() {
    let mut w = world();
    w.set_tracer(Tracer::new(VecObserver::default()));
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    let msg = pattern(4096);
    transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 4096);
    let recs = w.tracer_mut().take::<VecObserver>().unwrap().records;
    let mut units = std::collections::BTreeSet::new();
    for (_, r) in &recs {
        if let TraceRecord::Stage {
            unit,
            stage,
            start,
            end,
            ..
        } = r
        {
            assert!(start <= end, "{stage}");
            units.insert(match unit {
                ExecUnit::Cpu(0) => "core0",
                ExecUnit::Cpu(_) => "core1",
                ExecUnit::Pcie => "pcie",
                ExecUnit::Nic => "nic",
            });
        }
    }
    for u in ["core0", "core1", "pcie", "nic"] {
        assert!(units.contains(u), "{u} missing: {units:?}");
    }
}

#[test]
fn busy_poll_replaces_interrupts_and_wakeups() {
    let run = |busy: bool| {
        let mut w = world();
        let o = TcpOptions {
            busy_poll: busy,
            ..TcpOptions::default()
        };
        let (sa, sb) = w.tcp_connect(0, 1, &o).unwrap();
        let before = w.socket_stats(1);
        let msg = pattern(4096);
        let t = transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 65536);
        assert_eq!(t.received, msg);
        let s = w.socket_stats(1);
        // The spinning is CPU time on the reader's host, as a stage of its own.
        let charged = w
            .host(1)
            .cpu()
            .account()
            .by_stage
            .get(&engine::Stage::BusyPoll)
            .map_or(SimDuration::ZERO, |e| e.0);
        (
            s.interrupts - before.interrupts,
            s.context_switches - before.context_switches,
            s.busy_poll_time,
            charged,
        )
    };
    let (irq, cs, spin, charged) = run(false);
    assert!(irq >= 1 && cs >= 1 && spin == SimDuration::ZERO && charged == SimDuration::ZERO);
    let (irq, cs, spin, charged) = run(true);
    assert_eq!((irq, cs), (0, 0));
    assert!(spin > SimDuration::ZERO);
    assert_eq!(charged, spin, "the spin is accounted as CPU time");
}

#[test]
fn io_uring_batches_writes_into_fewer_syscalls() {
    let mut w = world();
    let o = TcpOptions {
        io_uring_batch: 8,
        ..TcpOptions::default()
    };
    let (sa, sb) = w.tcp_connect(0, 1, &o).unwrap();
    let msg = pattern(64 << 10);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 4096, 1 << 20);
    assert_eq!(t.received, msg);
    assert_eq!(t.writes, 16);
    let s = w.socket_stats(0);
    assert_eq!(s.syscalls.get("io_uring_enter"), Some(&2));
    assert_eq!(s.syscalls.get("write"), None);
}

#[test]
fn tcp_frames_decode_in_tshark_with_seq_ack_options_and_sack() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-tcp-pcap-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("tcp.pcap");
    // Drop the client's 6th and 7th frames (SYN and handshake ACK are 1 and 2): the receiver
    // SACKs the data that follows the hole.
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.rules.push(DropRule {
        flow: World::tcp_flow_of(0, SocketId(0)),
        nth: 6,
        count: 2,
    });
    let mut w = world_with(link, HostProfile::default(), 1);
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    let (sa, sb) = w.tcp_connect(0, 1, &TcpOptions::default()).unwrap();
    assert_eq!(sa, SocketId(0));
    let msg = pattern(64 << 10);
    let t = transfer(&mut w, (0, sa), (1, sb), &msg, 64 << 10, 1 << 20);
    assert_eq!(t.received, msg);
    w.finish_pcap().unwrap();
    let Some(text) = support::tshark(&[
        "-r",
        path.to_str().unwrap(),
        "-o",
        "tcp.relative_sequence_numbers:FALSE",
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-e",
        "tcp.srcport",
        "-e",
        "tcp.seq",
        "-e",
        "tcp.ack",
        "-e",
        "tcp.flags",
        "-e",
        "tcp.options.mss_val",
        "-e",
        "tcp.options.wscale.shift",
        "-e",
        "tcp.options.sack_perm",
        "-e",
        "tcp.options.sack_le",
        "-e",
        "tcp.len",
        "-e",
        "tcp.checksum.status",
        "-o",
        "tcp.check_checksum:TRUE",
    ]) else {
        return;
    };
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert!(rows.len() > 50, "{text}");
    let syn = rows.iter().find(|r| r[3] == "0x0002").expect("a SYN");
    assert_eq!(syn[4], "1460", "MSS option");
    assert!(!syn[5].is_empty(), "window scale option");
    assert!(!syn[6].is_empty(), "SACK permitted option");
    let isn: u64 = syn[1].parse().unwrap();
    let synack = rows.iter().find(|r| r[3] == "0x0012").expect("a SYN-ACK");
    assert_eq!(synack[2].parse::<u64>().unwrap(), (isn + 1) % (1 << 32));
    assert!(
        rows.iter().any(|r| !r[7].is_empty()),
        "no SACK block after the drop"
    );
    // Data sequence numbers are absolute and advance by the payload length.
    let data: Vec<(u64, u64)> = rows
        .iter()
        .filter(|r| r[0] == "40000" && r[8] != "0")
        .map(|r| (r[1].parse().unwrap(), r[8].parse().unwrap()))
        .collect();
    assert!(data.len() >= 45);
    assert_eq!(data[0].0, (isn + 1) % (1 << 32));
    assert!(
        rows.iter().all(|r| r[9].is_empty() || r[9] == "1"),
        "bad TCP checksum: {text}"
    );
}
