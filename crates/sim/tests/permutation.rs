//! The fat-tree permutation (issue 9's workload) at 16 hosts: every flow completes intact
//! without a drop under PFC, no shortcut path (an event per packet per link, and per data packet at each NIC), the same seed
//! gives the same run, and the pcap decodes in tshark with a PSN on every RoCE frame.

mod support;

use rdmalab::permutation::{derangement, run_plan};

fn plan(sets: &[&str]) -> scenario::Plan {
    let text = include_str!("../../../scenarios/fattree-permutation-16.toml");
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
    let a = run_plan(&plan(&[]), &Default::default(), None).unwrap();
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
    let b = run_plan(&plan(&[]), &Default::default(), None).unwrap();
    assert_eq!(
        (a.fct_ps.clone(), a.events, a.pauses),
        (b.fct_ps, b.events, b.pauses)
    );
    let c = run_plan(&plan(&["seed=2"]), &Default::default(), None).unwrap();
    assert_ne!(a.fct_ps, c.fct_ps);
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
        Some(&path),
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
