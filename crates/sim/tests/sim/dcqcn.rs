//! DCQCN on a 2→1 incast at 100 Gb/s with ECN on, under both parameter profiles: CNPs never
//! closer than the minimum spacing, both flows settle near half the bottleneck, α and the rate
//! on the trace, and the switch queue held near the ECN thresholds without PFC.

use crate::support;

use fabric::{EcnConfig, PfcConfig};
use rdmalab::incast::{IncastConfig, IncastReport, run};
use transport::roce::dcqcn::DcqcnParams;
use units::{Probability, SimDuration};

/// The switch of the DCQCN validation study: Kmin 10 KB, Kmax 100 KB, Pmax 1%, marking on
/// dequeue so the notification is as fresh as the queue.
/// source: research/figures.md §6.2, sc20anonymous/DCQCN-validation README (Kmin 10 KB in one
/// revision, Kmax 100 KB, Pmax 0.01); marking on dequeue as htsim's ECN queue does.
fn validation_switch(on_dequeue: bool) -> EcnConfig {
    EcnConfig {
        priorities: 1 << 3,
        kmin_bytes: 10_000,
        kmax_bytes: 100_000,
        pmax: Probability::from_ratio(1, 100),
        on_dequeue,
    }
}

fn incast(params: DcqcnParams, on_dequeue: bool) -> IncastReport {
    run(&IncastConfig {
        senders: 2,
        link_gbps: 100,
        dcqcn: Some(params),
        ecn: Some(validation_switch(on_dequeue)),
        // PFC on RoCE's priority as the backstop, XOFF well above where ECN works.
        pfc: Some(PfcConfig::new(1 << 3, 2 << 20, (2 << 20) - 4096)),
        duration: SimDuration::from_ms(10),
        window: SimDuration::from_ms(1),
        observe: true,
    })
    .unwrap()
}

/// Runs 10 ms of the incast and checks it; `settle_ms`: from when both flows must stay within
/// 50 ± 10 points of the bottleneck, in every 1 ms window.
fn check(name: &str, params: DcqcnParams, settle_ms: usize) {
    let r = incast(params, true);
    let min_gap = r
        .cnp_times
        .iter()
        .flat_map(|t| t.windows(2).map(|p| p[1] - p[0]))
        .min()
        .unwrap();
    let cnps: usize = r.cnp_times.iter().map(Vec::len).sum();
    eprintln!(
        "{name}: {} events, CNPs {cnps} (min gap {min_gap:?}), {} rate changes, pauses {}",
        r.events,
        r.rates.len(),
        r.pauses
    );
    for (i, (w, q)) in r.goodput_gbps.iter().zip(&r.peak_queue_bytes).enumerate() {
        eprintln!(
            "  {:>2} ms: {:6.2} {:6.2} Gb/s, queue ≤ {q} B",
            i + 1,
            w[0],
            w[1]
        );
    }
    assert!(
        r.cnp_times.iter().all(|t| t.len() > 5),
        "{name}: CNPs reached both senders"
    );
    assert!(
        min_gap >= params.cnp_interval,
        "{name}: CNP spacing {min_gap:?}"
    );
    for s in 0..2 {
        let alphas: Vec<f64> = r.rates.iter().filter(|x| x.1 == s).map(|x| x.3).collect();
        assert!(
            alphas.len() > 5 && alphas.iter().any(|&a| a > 0.0 && a < 1.0),
            "{name}: sender {s}'s α and rate on the trace"
        );
    }
    let b = r.bottleneck_gbps;
    for (i, w) in r.goodput_gbps.iter().enumerate().skip(settle_ms) {
        for (f, &g) in w.iter().enumerate() {
            assert!(
                (0.4 * b..=0.6 * b).contains(&g),
                "{name}: flow {f} at {g:.1} Gb/s in ms {} (settled from {settle_ms} ms), not 50 ± 10% of {b:.1}",
                i + 1
            );
        }
    }
    let peak = r
        .peak_queue_bytes
        .iter()
        .skip(settle_ms)
        .max()
        .copied()
        .unwrap();
    assert!(
        peak <= 2 * validation_switch(true).kmax_bytes,
        "{name}: queue held near the ECN thresholds: {peak} B"
    );
    assert_eq!(r.pauses, 0, "{name}: ECN held the queue below PFC's XOFF");
}

/// The 2015 paper's parameters settle within a millisecond.
#[test]
fn incast_settles_under_the_2015_paper_profile() {
    check("paper", DcqcnParams::PAPER, 1);
}

/// NVIDIA's defaults cut harder at the start (a cut every 4 µs while the queue drains) and
/// take 3 ms to settle.
#[test]
fn incast_settles_under_the_nvidia_profile() {
    check("nvidia", DcqcnParams::NVIDIA, 3);
}

/// Marked as frames join the queue, the notification is one queueing delay old when it
/// arrives: NVIDIA's 4 µs cuts keep coming while the queue drains, and the rate collapses to
/// a few Gb/s before it recovers. Same seed, same switch, only the marking point differs.
#[test]
fn marking_on_enqueue_delays_the_signal_and_the_nvidia_profile_overshoots() {
    let late = incast(DcqcnParams::NVIDIA, false);
    let fresh = incast(DcqcnParams::NVIDIA, true);
    let low = |r: &IncastReport| {
        r.goodput_gbps
            .iter()
            .take(3)
            .flat_map(|w| w.iter().copied())
            .fold(f64::MAX, f64::min)
    };
    let slowest = |r: &IncastReport| r.rates.iter().map(|x| x.2).min().unwrap_or(u64::MAX);
    eprintln!(
        "lowest 1 ms goodput in the first 3 ms: enqueue {:.2} Gb/s, dequeue {:.2}; slowest rate {} vs {} kb/s",
        low(&late),
        low(&fresh),
        slowest(&late),
        slowest(&fresh)
    );
    assert!(
        slowest(&late) * 4 < slowest(&fresh),
        "the late signal cuts deeper"
    );
    assert!(low(&late) < low(&fresh));
}

/// ⑤b with DCQCN through the comparison report: the report's DCQCN row counts the CNPs, and
/// each CNP is on the wire as a 0x81 packet to the sender's QP with BECN set, which tshark
/// decodes.
#[test]
fn cnps_in_the_report_and_on_the_wire() {
    use rdmalab::report::{RunOptions, run_plan_with};
    use wire::{Frame, PcapReader, parse_frame};
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-dcqcn-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let p = scenario::preset("lesson5b").unwrap();
    let plan = scenario::parse_with(
        p.toml,
        &[
            "switch.ecn=true",
            "switch.ecn_on_dequeue=true",
            "rdma.dcqcn=true",
        ],
    )
    .unwrap();
    let opts = RunOptions {
        pcap: Some(dir.join("run.pcap")),
        ..Default::default()
    };
    let r = run_plan_with(&plan, &opts).unwrap();
    let d = r
        .rdma
        .as_ref()
        .unwrap()
        .recovery
        .clone()
        .unwrap()
        .dcqcn
        .unwrap();
    assert_eq!(d.profile, "nvidia");
    assert!(d.cnps_sent > 0 && d.cnps_sent <= d.marked, "{d:?}");
    assert_eq!(
        d.cnps_handled, d.cnps_sent,
        "CNPs travel in a lossless, strict class"
    );
    assert!(d.cuts > 0 && d.cuts <= d.cnps_handled, "{d:?}");
    let row = r.rows().into_iter().find(|x| x.0 == "DCQCN").unwrap();
    assert!(row.2.contains(&format!("{} CNPs", d.cnps_sent)), "{row:?}");
    let path = dir.join("run-rdma.pcap");
    let mut cnps = 0;
    for rec in PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap() {
        if let Ok((Frame::Cnp(f), _)) = parse_frame(&rec.unwrap().data) {
            assert!(f.cnp.becn);
            cnps += 1;
        }
    }
    // Each CNP is captured on both links it crosses.
    assert_eq!(cnps, 2 * d.cnps_sent, "CNP frames in the pcap");
    let Some(out) = support::tshark(&[
        "-r",
        path.to_str().unwrap(),
        "-Y",
        "infiniband.bth.opcode == 129",
    ]) else {
        return;
    };
    let lines = out.lines().count() as u64;
    assert_eq!(lines, 2 * d.cnps_sent, "tshark decodes every CNP");
}
