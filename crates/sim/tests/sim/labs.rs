//! The fabric labs do what their pages say: every outcome below is read from a run.

use rdmalab::labs::{
    DeadlockVerdict, LabResult, LossVerdict, StormVerdict, Symptom, TroubleStatus, TroubleVerdict,
    parse_params, run,
};
use serde_json::{Value, json};
use verbs::{Errno, WcStatus};

fn lab(id: &str, params: Value) -> LabResult {
    let p = parse_params(id, &params).unwrap_or_else(|e| panic!("{id} {params}: {e:?}"));
    run(id, &p).unwrap_or_else(|e| panic!("{id} {params}: {e}"))
}

fn fig(r: &LabResult, id: &str) -> f64 {
    r.figure_value(id)
        .unwrap_or_else(|| panic!("{}: no figure {id}", r.lab))
}

fn deadlock(r: &LabResult) -> &DeadlockVerdict {
    r.verdict.deadlock().expect("a deadlock verdict")
}

fn storm(r: &LabResult) -> &StormVerdict {
    r.verdict.storm().expect("a storm verdict")
}

fn trouble(r: &LabResult) -> &TroubleVerdict {
    r.verdict.trouble().expect("a troubleshooting verdict")
}

fn loss(r: &LabResult) -> &LossVerdict {
    r.verdict.loss().expect("a loss verdict")
}

/// A completion's status, as the troubleshooting verdict holds it.
fn wc(s: WcStatus) -> TroubleStatus {
    TroubleStatus::Completion(s)
}

fn counter(r: &LabResult, host: &str, name: &str) -> u64 {
    r.counters
        .iter()
        .find(|c| c.host == host && c.name == name)
        .unwrap_or_else(|| panic!("no counter {host}/{name}"))
        .value
}

/// The JSON of a result without its wall-clock time.
fn stable(r: &LabResult) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("wall_ms");
    v
}

#[test]
fn the_ring_deadlocks_without_a_fix_and_completes_with_the_watchdog() {
    let stuck = lab("deadlock", json!({}));
    let v = deadlock(&stuck);
    assert!(v.deadlocked, "{v:?}");
    assert!(!v.completed);
    let stalled = v.stalled_for_us.unwrap();
    let threshold = v.stall_threshold_us;
    assert!(stalled >= threshold, "{stalled} < {threshold}");
    // Nothing is lost and nothing moves: a deadlock, not a slow network.
    assert_eq!(v.drops, 0);
    let delivered = &stuck.chart("delivered").unwrap().series;
    for s in delivered {
        let tail: Vec<f64> = s.points.iter().rev().take(10).map(|p| p[1]).collect();
        assert!(
            tail.windows(2).all(|w| w[0] == w[1]),
            "{} moved: {tail:?}",
            s.name
        );
    }
    // Every ring link is paused at the end.
    let paused = &stuck.chart("paused").unwrap().series[0].points;
    assert_eq!(paused.last().unwrap()[1], 5.0);

    let fixed = lab("deadlock", json!({"fix": "watchdog"}));
    let v = deadlock(&fixed);
    assert!(v.completed, "{v:?}");
    assert!(!v.deadlocked);
    assert_eq!(v.stalled_for_us, None);
    assert!(fig(&fixed, "watchdog_drops") > 0.0);
    assert!(fig(&fixed, "delivered_mb") > fig(&stuck, "delivered_mb") * 4.0);
}

#[test]
fn a_larger_ring_deadlocks_too() {
    let r = lab("deadlock", json!({"switches": 8, "duration_us": 2000}));
    let v = deadlock(&r);
    assert_eq!(v.paused_links_at_end, 8.0);
    assert!(v.deadlocked, "{v:?}");
}

#[test]
fn the_watchdog_contains_a_pfc_storm() {
    let free = lab("storm", json!({"watchdog": false}));
    let before = fig(&free, "victim_gbps_before");
    assert!(before > 90.0, "{before}");
    // Without the watchdog the storm reaches the victim through the trunk.
    assert!(fig(&free, "victim_gbps_during") < 0.1 * before);
    assert!(!storm(&free).contained);
    assert_eq!(free.figure_value("watchdog_at_us"), None);
    assert!(fig(&free, "storm_pauses") > 0.0);

    let wd = lab("storm", json!({"watchdog": true}));
    assert!(storm(&wd).contained, "{:?}", wd.verdict);
    let at = fig(&wd, "watchdog_at_us");
    // It acts one detection time after the queue to the stalled host was paused.
    assert!((300.0..400.0).contains(&at), "{at}");
    assert!(fig(&wd, "watchdog_drops") > 0.0);
    assert!(storm(&wd).victim_gbps_late > 0.9 * before);
    // The flow into the stalled host stays stopped.
    let into = &wd.chart("flows").unwrap().series[0].points;
    assert_eq!(into.last().unwrap()[1], 0.0);
}

#[test]
fn pfc_makes_a_victim_of_a_flow_to_an_idle_port() {
    let pfc = lab("hol", json!({}));
    assert!(fig(&pfc, "slowdown") > 2.0, "{:?}", pfc.figures);
    assert!(fig(&pfc, "victim_alone_gbps") > 90.0);
    assert!(fig(&pfc, "pauses") > 0.0);
    assert_eq!(fig(&pfc, "drops"), 0.0);
    let hol = pfc.verdict.hol().expect("a hol verdict");
    assert!(hol.victim_paused_pct > 30.0);
    // Lossy: the incast is dropped at its own port and the victim runs free.
    let lossy = lab("hol", json!({"pfc": false}));
    assert!(fig(&lossy, "slowdown") < 1.1, "{:?}", lossy.figures);
    assert!(fig(&lossy, "drops") > 0.0);
    assert_eq!(fig(&lossy, "pauses"), 0.0);
}

#[test]
fn incast_with_pfc_pauses_and_without_it_drops() {
    let pfc = lab(
        "incast",
        json!({"dcqcn": "off", "ecn": false, "duration_us": 1000}),
    );
    assert!(fig(&pfc, "pauses") > 0.0);
    assert_eq!(fig(&pfc, "drops"), 0.0);
    let g = fig(&pfc, "goodput_gbps");
    assert!((90.0..=100.0).contains(&g), "{g}");
    assert!(fig(&pfc, "fairness") > 0.95);
    // The lab says what its PFC is: its XOFF/XON, the headroom above XOFF, each PAUSE.
    let p = pfc
        .pfc
        .as_ref()
        .expect("PFC on: the lab reports its thresholds");
    assert_eq!(
        (p.xoff_bytes, p.xon_bytes),
        (256 << 10, (256 << 10) - 8_400)
    );
    assert_eq!((p.pause_quanta, p.pause_duration_ns), (0xffff, 335_539.2));
    assert!(p.headroom_bytes > 4_178, "{p:?}");
    let lossy = lab(
        "incast",
        json!({"dcqcn": "off", "ecn": false, "pfc": false, "duration_us": 1000}),
    );
    assert!(lossy.pfc.is_none());
    assert!(fig(&lossy, "drops") > 0.0);
    assert_eq!(fig(&lossy, "pauses"), 0.0);
    // DCQCN: marks become CNPs and rate cuts, the queue stays below XOFF.
    let dcqcn = lab("incast", json!({}));
    assert!(fig(&dcqcn, "cnps") > 0.0);
    assert_eq!(fig(&dcqcn, "pauses"), 0.0);
    let rates = &dcqcn.chart("dcqcn_rate").unwrap().series;
    assert_eq!(rates.len(), 4);
    assert!(rates[0].points.iter().any(|p| p[1] < 50.0));
    assert!(pfc.chart("dcqcn_rate").unwrap().series.is_empty());
}

#[test]
fn one_qp_is_held_to_one_spine_and_eight_spread() {
    let r = lab("qps", json!({}));
    // One spine carries it all (the others see a few control frames at most).
    assert!(fig(&r, "max_share_one") > 99.9);
    assert!(fig(&r, "max_share_many") < 26.0);
    assert!(fig(&r, "gbps_one") < 25.0);
    assert!(fig(&r, "gbps_many") > 3.5 * fig(&r, "gbps_one"));
    let paths = r.chart("paths").unwrap();
    assert_eq!(paths.series[0].labels.len(), 4);
}

#[test]
fn selective_repeat_keeps_more_than_go_back_n_under_loss() {
    let r = lab("loss", json!({"max_loss_pct": "1"}));
    let gbn = fig(&r, "gbn_retention");
    let sr = fig(&r, "sr_retention");
    assert!(sr > gbn, "sr {sr} gbn {gbn}");
    assert!(sr > 0.5, "{sr}");
    let goodput = r.chart("goodput").unwrap();
    assert_eq!(goodput.series.len(), 3);
    // Four points each: loss-free, then the three rates.
    assert!(goodput.series.iter().all(|s| s.points.len() == 4));
    assert_eq!(goodput.series[0].points.last().unwrap()[0], 1.0);
}

#[test]
fn each_troubleshooting_case_shows_its_own_counters() {
    let rnr = lab("trouble", json!({"case": "rnr"}));
    assert_eq!(trouble(&rnr).status, wc(WcStatus::RnrRetryExcErr));
    assert!(counter(&rnr, "h0", "rnr_nak_retry_err") > 0);
    assert_eq!(
        counter(&rnr, "h1", "out_of_buffer"),
        counter(&rnr, "h0", "rnr_nak_retry_err")
    );
    assert_eq!(counter(&rnr, "h0", "req_rnr_retries_exceeded"), 1);
    assert_eq!(fig(&rnr, "completions_ok"), 4.0);

    let gone = lab("trouble", json!({"case": "peer_gone"}));
    assert_eq!(trouble(&gone).status, wc(WcStatus::RetryExcErr));
    // retry_cnt 7: the first try and seven retries all time out.
    assert_eq!(counter(&gone, "h0", "local_ack_timeout_err"), 8);
    assert_eq!(counter(&gone, "h0", "packet_seq_err"), 0);
    assert_eq!(counter(&gone, "h1", "out_of_sequence"), 0);

    let prio = lab("trouble", json!({"case": "pfc_priority"}));
    assert_eq!(trouble(&prio).status, wc(WcStatus::Success));
    assert!(counter(&prio, "switch", "egress_discards") > 0);
    assert!(counter(&prio, "h1", "out_of_sequence") > 0);
    assert!(counter(&prio, "h0", "packet_seq_err") > 0);
    assert_eq!(counter(&prio, "h0", "rx_prio3_pause"), 0);
    assert_eq!(counter(&prio, "switch", "pause_frames_sent"), 0);
    assert!(fig(&prio, "goodput_gbps") < 60.0);

    let mtu = lab("trouble", json!({"case": "mtu"}));
    assert_eq!(trouble(&mtu).status, wc(WcStatus::RetryExcErr));
    assert_eq!(fig(&mtu, "completions_ok"), 4.0);
    assert!(counter(&mtu, "switch", "mtu_discards") > 0);
    assert_eq!(counter(&mtu, "h0", "local_ack_timeout_err"), 8);
}

#[test]
fn cnps_in_a_lossy_class_arrive_late_and_pfc_pauses_instead() {
    let r = lab("trouble", json!({"case": "cnp_class"}));
    let v = trouble(&r);
    assert_eq!(v.status, wc(WcStatus::Success));
    assert_eq!(v.symptom, Symptom::PausesMultiply);
    let sent = counter(&r, "h4", "np_cnp_sent");
    let handled: u64 = (0..4)
        .map(|h| counter(&r, &format!("h{h}"), "rp_cnp_handled"))
        .sum();
    assert!(sent > 0);
    // Small CNPs still fit the full lossy queue: delayed, not lost, so the counts agree.
    assert_eq!(v.cnp_sent, Some(sent));
    assert_eq!(v.cnp_handled, Some(handled));
    // The lossy class drops (the bulk traffic), RoCE's and the CNP class do not.
    assert!(counter(&r, "switch", "prio0_discards") > 0);
    assert_eq!(counter(&r, "switch", "prio3_discards"), 0);
    assert_eq!(counter(&r, "switch", "prio6_discards"), 0);
    // DCQCN reacts late: PFC pauses, where CNPs in their strict class need none.
    let pauses = counter(&r, "switch", "pause_frames_sent");
    assert!(pauses > 0);
    assert_eq!(v.pauses, Some(pauses));
    let right = v.pauses_strict_cnp_class.unwrap();
    assert!(pauses > right, "{pauses} vs {right}");
    assert!(counter(&r, "h0", "rx_prio3_pause") > 0);
}

#[test]
fn a_roce_v1_gid_in_a_routed_fabric_reaches_nobody() {
    let r = lab("trouble", json!({"case": "gid_v1"}));
    assert_eq!(trouble(&r).status, wc(WcStatus::RetryExcErr));
    assert_eq!(fig(&r, "completions_ok"), 0.0);
    assert!(counter(&r, "switch", "non_ip_discards") > 0);
    assert_eq!(counter(&r, "switch", "mtu_discards"), 0);
    assert_eq!(counter(&r, "h0", "local_ack_timeout_err"), 8);
    assert_eq!(counter(&r, "h0", "req_transport_retries_exceeded"), 1);
    assert_eq!(trouble(&r).responder_packets, Some(0));
}

#[test]
fn an_ipv6_gid_against_an_ipv4_peer_never_connects() {
    let r = lab("trouble", json!({"case": "gid_ipv6"}));
    let v = trouble(&r);
    assert_eq!(v.status, TroubleStatus::Errno(Errno::EINVAL));
    assert_eq!(v.failed_call, Some("ibv_modify_qp INIT→RTR"));
    let e = v.error.as_deref().unwrap();
    assert!(e.contains("sgid_index 1"), "{e}");
    // Nothing was ever sent: no timeouts, no discards.
    assert_eq!(counter(&r, "h0", "local_ack_timeout_err"), 0);
    assert_eq!(counter(&r, "switch", "non_ip_discards"), 0);
    assert_eq!(fig(&r, "completions_err"), 0.0);
}

#[test]
fn a_lab_gives_the_same_result_on_every_run() {
    for (id, p) in [
        ("storm", json!({"duration_us": 600})),
        ("trouble", json!({"case": "pfc_priority"})),
        ("incast", json!({"duration_us": 500})),
    ] {
        assert_eq!(stable(&lab(id, p.clone())), stable(&lab(id, p)), "{id}");
    }
}

#[test]
fn parameters_that_contradict_each_other_are_refused() {
    let e = parse_params("incast", &json!({"ecn": false})).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("dcqcn"), "{e:?}");
    assert!(parse_params("incast", &json!({"ecn": false, "dcqcn": "off"})).is_ok());
    let e = parse_params(
        "storm",
        &json!({"stall_at_us": 1000, "detect_us": 100, "duration_us": 1000}),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("stall_at_us"), "{e:?}");
    // One lab's parameters do not run another.
    let p = parse_params("hol", &json!({})).unwrap();
    assert!(run("storm", &p).is_err());
}

#[test]
fn a_stalled_path_is_a_gap_not_a_zero() {
    let r = lab("loss", json!({}));
    // With the 67 ms ACK timeout, go-back-N stalls within the 1.4 ms stream at 2% loss.
    let gbn = loss(&r).stalled_at_pct.go_back_n.expect("go-back-N stalls");
    let json = serde_json::to_value(&r).unwrap();
    let points = &json["charts"][0]["series"][0]["points"];
    let at = points
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0].as_f64() == Some(gbn))
        .unwrap();
    assert!(at[1].is_null(), "{at}");
    // Adaptive retransmission does not wait 67 ms: no stall.
    let adaptive = lab("loss", json!({"adaptive": true}));
    assert_eq!(loss(&adaptive).stalled_at_pct.go_back_n, None);
}

/// The NIC's counters are the host's, not the QP's: destroying the QP keeps them.
#[test]
fn counters_outlive_the_qp() {
    use rdmalab::world::{RcOptions, World};
    use verbs::wr::{SendWr, Sge};
    let link = fabric::LinkConfig::new(units::Bandwidth::gbps(100), 3);
    let topo = fabric::Topology::back_to_back(link).unwrap();
    let mut w = World::new(
        &topo,
        Default::default(),
        Default::default(),
        Default::default(),
    )
    .unwrap();
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    let va = w.verbs(0).memory_mut().alloc(64).unwrap();
    let mr = w
        .verbs(0)
        .reg_mr(a.pd, va, 64, verbs::AccessFlags::LOCAL_WRITE)
        .unwrap();
    // A SEND with no receive posted: RNR NAKs, retried for ever (rnr_retry 7).
    let sge = vec![Sge {
        addr: va,
        length: 64,
        lkey: mr.lkey,
    }];
    w.post_send(0, a.qpn, &[SendWr::send(1, sge)]).unwrap();
    let until = w.now() + units::SimDuration::from_us(500);
    w.run_until(until, &engine::Budget::default()).unwrap();
    let before = w.host(1).roce_counters();
    assert!(before.out_of_buffer > 0, "{before:?}");
    w.vanish_qp(1, b.qpn).unwrap();
    assert_eq!(w.host(1).roce_counters(), before);
}

#[test]
fn the_fabric_view_agrees_with_the_labs_counters_and_shows_the_pause_climbing() {
    let r = lab("storm", json!({}));
    let v = r.fabric.as_ref().expect("storm has a fabric view");
    assert_eq!((v.nodes.len(), v.links.len()), (8, 7));
    let name = |i: u32| v.nodes[i as usize].name.as_str();
    // When each direction first sent PAUSE: the window's counter agrees with the frame's time.
    let mut first: Vec<(u64, &str, &str)> = v
        .links
        .iter()
        .flat_map(|l| l.dirs.iter())
        .filter_map(|d| {
            let k = d.pauses.iter().position(|&p| p > 0);
            assert_eq!(k.is_some(), d.first_pause_ps.is_some());
            let t = d.first_pause_ps?;
            // The counter counts a PAUSE when the port decides to send it, the frame's time is
            // when it goes on the wire (after the frame in progress): the same window or the next.
            let kt = (t / v.window_ps) as usize;
            assert!(
                kt == k? || kt == k? + 1,
                "PAUSE at {t} ps, counted in window {k:?}"
            );
            Some((t, name(d.from), name(d.to)))
        })
        .collect();
    first.sort();
    // From the stalled receiver up: r-h0 pauses the right switch, which pauses the trunk, and
    // the left switch pauses its senders, each hop after the one before.
    assert_eq!((first[0].1, first[0].2), ("r-h0", "right"), "{first:?}");
    assert_eq!((first[1].1, first[1].2), ("right", "left"), "{first:?}");
    assert!(first[2..].iter().all(|f| f.1 == "left"), "{first:?}");
    let stalled = v
        .links
        .iter()
        .flat_map(|l| l.dirs.iter())
        .find(|d| name(d.from) == "r-h0")
        .unwrap();
    assert_eq!(
        *stalled.pauses.last().unwrap() as f64,
        fig(&r, "storm_pauses")
    );

    // Every PAUSE the fabric counted is on some link's card.
    let r = lab("hol", json!({}));
    let v = r.fabric.as_ref().unwrap();
    let all: u64 = v
        .links
        .iter()
        .flat_map(|l| l.dirs.iter())
        .map(|d| *d.pauses.last().unwrap())
        .sum();
    assert_eq!(all as f64, fig(&r, "pauses"));
    assert_eq!(v.links.len(), 11);

    // The watchdog's drops are on the ring's links.
    let r = lab("deadlock", json!({"fix": "watchdog"}));
    let v = r.fabric.as_ref().unwrap();
    let drops: u64 = v.links.iter().map(|l| *l.drops.last().unwrap()).sum();
    assert!(fig(&r, "watchdog_drops") > 0.0);
    assert!(drops as f64 >= fig(&r, "watchdog_drops"), "{drops}");
    // The incast's view counts what its report counts, and its own switch log still saw
    // every record beside the recorder (the queue it reports, the CNPs).
    let r = lab("incast", json!({"dcqcn": "off", "ecn": false}));
    let v = r.fabric.as_ref().expect("incast has a fabric view");
    // Four senders, the receiver and the switch.
    assert_eq!((v.nodes.len(), v.links.len()), (6, 5));
    assert_eq!(v.t_ps.len(), 50);
    let all: u64 = v
        .links
        .iter()
        .flat_map(|l| l.dirs.iter())
        .map(|d| *d.pauses.last().unwrap())
        .sum();
    assert!(all > 0);
    assert_eq!(all as f64, fig(&r, "pauses"));
    assert!(fig(&r, "peak_queue_kb") > 0.0);
    let lossy = lab(
        "incast",
        json!({"dcqcn": "off", "ecn": false, "pfc": false}),
    );
    let v2 = lossy.fabric.as_ref().unwrap();
    let drops: u64 = v2.links.iter().map(|l| *l.drops.last().unwrap()).sum();
    assert!(drops > 0);
    assert_eq!(drops as f64, fig(&lossy, "drops"));
    let marked = lab("incast", json!({}));
    assert!(fig(&marked, "cnps") > 0.0);
    let marks: u64 = marked
        .fabric
        .as_ref()
        .unwrap()
        .links
        .iter()
        .flat_map(|l| l.dirs.iter())
        .map(|d| *d.ecn_marks.last().unwrap())
        .sum();
    assert!(marks > 0);

    // Every listed frame carries its bytes: no FCS, the payload cut to 64 bytes.
    let frames: Vec<_> = v.links.iter().flat_map(|l| l.frames.iter()).collect();
    assert!(frames.len() <= rdmalab::labs::fabric_view::MAX_FRAMES);
    let pause = frames
        .iter()
        .find(|f| f.kind == "pause")
        .expect("a PAUSE listed");
    // 802.1Qbb: to 01:80:c2:00:00:01, MAC control (0x8808), opcode 0x0101.
    assert!(pause.wire.starts_with("0180c2000001"), "{}", pause.wire);
    assert_eq!(&pause.wire[24..32], "88080101");
    for f in &frames {
        assert!(!f.wire.is_empty(), "{f:?}");
        let elided = f.wire_elided.map_or(0, |[a, b]| b - a);
        assert_eq!(f.wire.len() / 2 + elided + 4, f.bytes as usize, "{f:?}");
        if f.kind == "roce" {
            assert!(
                f.wire.len() / 2 <= 14 + 4 + 20 + 8 + 12 + 16 + 64 + 4,
                "{f:?}"
            );
        }
    }
    // Labs on other machinery have none.
    assert!(lab("trouble", json!({})).fabric.is_none());
}
