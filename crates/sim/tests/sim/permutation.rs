//! The fat-tree permutation (issue 9's workload) at 16 hosts: every flow completes intact
//! without a drop under PFC, no shortcut path (an event per packet per link, and per data packet at each NIC), the same seed
//! gives the same run, and the pcap decodes in tshark with a PSN on every RoCE frame.

use crate::support;

use rdmalab::fleet::Outputs;
use rdmalab::permutation::{derangement, run_plan};

fn plan(sets: &[&str]) -> scenario::Plan {
    let text = include_str!("../../../../scenarios/fattree-permutation-16.toml");
    scenario::parse_with(text, sets).unwrap()
}

#[test]
fn derangements_have_no_fixed_point_and_hit_every_host_once() {
    for n in [2, 16, 1024] {
        let p = derangement(n, 7);
        let mut seen = vec![false; n];
        for (i, &d) in p.iter().enumerate() {
            assert_ne!(i, d, "host {i} writes to itself");
            assert!(!seen[d], "host {d} receives twice");
            seen[d] = true;
        }
    }
}

#[test]
fn sixteen_hosts_complete_intact_deterministic_and_without_shortcuts() {
    let a = run_plan(&plan(&[]), &Default::default(), &Outputs::threads(1)).unwrap();
    assert_eq!(a.hosts, 16);
    assert_eq!(a.completed, 16, "every flow completes");
    assert_eq!(a.intact, 16, "every byte of every flow arrived, as sent");
    assert_eq!(a.mismatched_bytes, 0);
    assert!(a.bytes_received >= 16 * 2_000_000);
    assert_eq!(a.drops, 0, "PFC drops nothing");
    assert!(a.pauses > 0, "the permutation congested something");
    // No shortcut: every packet on every link is an arrival event, and every data packet is
    // also a pipeline exit at its sender and a pipeline exit at its receiver. (A port that
    // is idle when a frame comes starts it at once, with no completion event of its own, so
    // there is no second event per link to count on.)
    assert!(
        a.events >= a.packet_hops + 2 * a.data_packets,
        "{} events for {} packet-links and {} data packets",
        a.events,
        a.packet_hops,
        a.data_packets
    );
    let ideal = a.ideal_fct_ps;
    assert!(
        a.fct_quantile(0.0).unwrap() >= ideal * 9 / 10,
        "nothing beats the line rate"
    );
    // The same seed, the same run, bit for bit; another seed, another permutation.
    let b = run_plan(&plan(&[]), &Default::default(), &Outputs::threads(1)).unwrap();
    assert_eq!(
        (a.fct_ps.clone(), a.events, a.pauses),
        (b.fct_ps, b.events, b.pauses)
    );
    let c = run_plan(
        &plan(&["seed=2"]),
        &Default::default(),
        &Outputs::threads(1),
    )
    .unwrap();
    assert_ne!(a.fct_ps, c.fct_ps);
}

/// Issue 24: the same permutation on 1, 2 and 4 threads (the 16-host tree split into as many
/// partitions, whole pods each) is the same run: every flow's completion time, the events,
/// the frames, the drops and pauses.
#[test]
fn the_permutation_is_the_same_run_on_any_number_of_threads() {
    let one = run_plan(&plan(&[]), &Default::default(), &Outputs::threads(1)).unwrap();
    assert_eq!(one.parallel.partitions, 1);
    for threads in [2, 4] {
        let many = run_plan(&plan(&[]), &Default::default(), &Outputs::threads(threads)).unwrap();
        assert_eq!(many.parallel.partitions, threads, "{:?}", many.parallel);
        assert_eq!(many.parallel.lookahead_ps, Some(1_000_000));
        assert_eq!(many.fct_ps, one.fct_ps, "{threads} threads");
        assert_eq!(
            (many.events, many.data_packets, many.drops, many.pauses),
            (one.events, one.data_packets, one.drops, one.pauses),
            "{threads} threads"
        );
        assert_eq!(
            (many.completed, many.intact, many.bytes_received),
            (one.completed, one.intact, one.bytes_received)
        );
    }
}

/// Issue 24: the trace of a split run is the single run's trace, record for record, in the
/// one order `World::take_trace` defines (time, then node): host stages (setup included),
/// every frame at every port, on 1, 2 and 4 threads.
#[test]
fn the_permutation_trace_is_the_same_on_one_two_and_four_threads() {
    let p = plan(&["workload.message_bytes=16384"]);
    let traced = |threads| {
        let sink = std::sync::Mutex::new(rdmalab::world::WholeTrace::default());
        let out = Outputs {
            pcap: None,
            trace: Some(&sink),
            threads,
        };
        let r = run_plan(&p, &Default::default(), &out).unwrap();
        assert_eq!(r.completed, 16);
        assert_eq!(r.parallel.partitions, threads, "{:?}", r.parallel);
        let kept = sink.into_inner().unwrap();
        assert_eq!(kept.skipped, 0, "nothing cut at 16 hosts");
        kept.records
    };
    let one = traced(1);
    // Every host's setup and data-path stages, and every data frame's arrival at every node
    // of its path: 16 flows of four 4 KiB frames, 2 to 6 links each.
    let stages = one
        .iter()
        .filter(|(_, r)| matches!(r, engine::TraceRecord::Stage { .. }))
        .count();
    let arrivals = one
        .iter()
        .filter(|(_, r)| {
            matches!(
                r,
                engine::TraceRecord::Packet {
                    stage: engine::PacketStage::Arrived,
                    pkt: engine::PacketRef {
                        class: engine::PacketClass::RoceData,
                        ..
                    },
                    ..
                }
            )
        })
        .count();
    assert!(stages > 16 * 4, "{stages} stage records");
    assert!(
        (16 * 4 * 2..=16 * 4 * 6).contains(&arrivals),
        "{arrivals} data-frame arrivals"
    );
    assert!(
        one.windows(2)
            .all(|w| (w[0].0, w[0].1.node()) <= (w[1].0, w[1].1.node())),
        "in (time, node) order"
    );
    for threads in [2, 4] {
        let many = traced(threads);
        assert_eq!(many.len(), one.len(), "{threads} threads");
        if let Some(i) = (0..one.len()).find(|&i| many[i] != one[i]) {
            panic!(
                "{threads} threads: record {i} differs: {:?} vs {:?}",
                many[i], one[i]
            );
        }
    }
}

#[test]
fn sixteen_host_pcap_decodes_with_psns_in_tshark() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-ft16-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("ft16.pcap");
    // 64 KiB per flow keeps the capture small.
    let r = run_plan(
        &plan(&["workload.message_bytes=65536"]),
        &Default::default(),
        &Outputs {
            pcap: Some(&path),
            trace: None,
            threads: 1,
        },
    )
    .unwrap();
    assert_eq!(r.completed, 16);
    let Some(out) = support::tshark(&[
        "-r",
        path.to_str().unwrap(),
        "-Y",
        "infiniband.bth.opcode <= 8",
        "-T",
        "fields",
        "-e",
        "infiniband.bth.opcode",
        "-e",
        "infiniband.bth.psn",
    ]) else {
        return;
    };
    let rows: Vec<(u32, u32)> = out
        .lines()
        .map(|l| {
            let mut f = l.split('\t').map(|x| x.parse::<u32>().unwrap());
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    // 16 flows of 16 packets each, captured on every link of their paths (2 to 6).
    assert!(rows.len() >= 16 * 16 * 2, "{} WRITE frames", rows.len());
    for psn in 0..16 {
        assert!(rows.iter().any(|r| r.1 == psn), "PSN {psn} on the wire");
    }
    assert!(rows.iter().all(|r| r.1 < 16), "PSNs 0..16 of each flow");
}

/// A connection matrix (csg-htsim's `.cm` format) that writes the built-in permutation's flows
/// runs the same flows: the same FCTs, events and PAUSE frames, bit for bit.
#[test]
fn a_matrix_of_the_permutation_runs_exactly_the_permutation() {
    let p = plan(&[]);
    let dst = derangement(16, p.seed);
    let mut text = format!("Nodes 16\nConnections {}\n", dst.len());
    for (s, d) in dst.iter().enumerate() {
        text += &format!("{s}->{d} id {} start 0 size 2000000\n", s + 1);
    }
    let m = scenario::matrix::parse(&text).unwrap();
    let mp = plan(&[
        "workload.pattern=matrix",
        "workload.matrix=perm.cm",
        "workload.message_bytes=4096",
    ]);
    let a = run_plan(&p, &Default::default(), &Outputs::threads(1)).unwrap();
    let b = rdmalab::matrix::run_plan(
        &mp,
        &m,
        &Default::default(),
        &rdmalab::fleet::Outputs::threads(1),
    )
    .unwrap();
    let fct: Vec<u64> = b.flows.iter().map(|f| f.fct_ps.unwrap()).collect();
    assert_eq!((a.fct_ps, a.events, a.pauses), (fct, b.events, b.pauses));
    assert_eq!((b.completed, b.intact, b.never_started), (16, 16, 0));
}

/// The committed ring all-reduce matrix: 480 flows chained by 464 triggers. Every hop starts
/// only after the previous hop's bytes landed, so each chunk's 30 hops run one after another:
/// the chain's last flow starts after 29 earlier FCTs have passed.
#[test]
fn a_triggered_matrix_chains_its_flows_and_completes() {
    let text = include_str!("../../../../scenarios/matrices/ring-allreduce-16.cm");
    let m = scenario::matrix::parse(text).unwrap();
    let p = scenario::parse(include_str!("../../../../scenarios/fattree-matrix-16.toml")).unwrap();
    let r = rdmalab::matrix::run_plan(
        &p,
        &m,
        &Default::default(),
        &rdmalab::fleet::Outputs::threads(1),
    )
    .unwrap();
    assert_eq!(r.flows.len(), 480);
    assert_eq!(
        (r.completed, r.intact, r.never_started, r.drops),
        (480, 480, 0, 0)
    );
    // Chunk 0's chain is flows 1..=30 (lines 8..=37): each starts after the one before it
    // started and at least its ideal later.
    let chain = &r.flows[..30];
    for w in chain.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            b.start_ps.unwrap() >= a.start_ps.unwrap() + a.ideal_fct_ps * 9 / 10,
            "line {} starts {:?} ps, its trigger's flow (line {}) started {:?} ps",
            b.line,
            b.start_ps,
            a.line,
            a.start_ps
        );
    }
    assert_eq!(chain[0].start_ps, Some(0));
    // A barrier that never gets its count leaves its flows unstarted, and says so.
    let stuck = scenario::matrix::parse(
        "Nodes 16\nConnections 2\nTriggers 1\n0->1 start 0 size 4096 send_done_trigger 1\n\
         2->3 trigger 1 size 4096\ntrigger id 1 barrier count 2\n",
    )
    .unwrap();
    let s = rdmalab::matrix::run_plan(
        &p,
        &stuck,
        &Default::default(),
        &rdmalab::fleet::Outputs::threads(1),
    )
    .unwrap();
    assert_eq!((s.completed, s.never_started), (1, 1));
    assert_eq!(s.flows[1].start_ps, None);
    assert!(
        s.text("t", "stuck.cm")
            .contains("1 never started: their trigger never fired")
    );
}

/// A pcap keeps the permutation on one thread, and the report says why instead of taking the
/// thread count in silence.
#[test]
fn a_pcap_keeps_the_run_on_one_thread_and_says_so() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-ft16-threads-")
        .tempdir()
        .unwrap();
    let path = tmp.path().join("ft16.pcap");
    let r = run_plan(
        &plan(&["workload.message_bytes=4096"]),
        &Default::default(),
        &Outputs {
            pcap: Some(&path),
            trace: None,
            threads: 2,
        },
    )
    .unwrap();
    assert_eq!(r.parallel.partitions, 1);
    assert!(
        r.parallel
            .line()
            .contains("a pcap is written by a world on one thread"),
        "{}",
        r.parallel.line()
    );
}
