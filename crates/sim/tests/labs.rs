//! The fabric labs do what their pages say: every outcome below is read from a run.

use rdmalab::labs::{LabResult, parse_params, run};
use serde_json::{Value, json};

fn lab(id: &str, params: Value) -> LabResult {
    let p = parse_params(id, &params).unwrap_or_else(|e| panic!("{id} {params}: {e:?}"));
    run(id, &p).unwrap_or_else(|e| panic!("{id} {params}: {e}"))
}

fn fig(r: &LabResult, id: &str) -> f64 {
    r.figure_value(id)
        .unwrap_or_else(|| panic!("{}: no figure {id}", r.lab))
}

fn verdict(r: &LabResult, k: &str) -> Value {
    r.verdict.get(k).cloned().unwrap_or(Value::Null)
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
    assert_eq!(
        verdict(&stuck, "deadlocked"),
        json!(true),
        "{:?}",
        stuck.verdict
    );
    assert_eq!(verdict(&stuck, "completed"), json!(false));
    let stalled = verdict(&stuck, "stalled_for_us").as_f64().unwrap();
    let threshold = verdict(&stuck, "stall_threshold_us").as_f64().unwrap();
    assert!(stalled >= threshold, "{stalled} < {threshold}");
    // Nothing is lost and nothing moves: a deadlock, not a slow network.
    assert_eq!(verdict(&stuck, "drops"), json!(0));
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
    assert_eq!(
        verdict(&fixed, "completed"),
        json!(true),
        "{:?}",
        fixed.verdict
    );
    assert_eq!(verdict(&fixed, "deadlocked"), json!(false));
    assert!(fig(&fixed, "watchdog_drops") > 0.0);
    assert!(fig(&fixed, "delivered_mb") > fig(&stuck, "delivered_mb") * 4.0);
}

#[test]
fn a_larger_ring_deadlocks_too() {
    let r = lab("deadlock", json!({"switches": 8, "duration_us": 2000}));
    assert_eq!(verdict(&r, "deadlocked"), json!(true), "{:?}", r.verdict);
}

#[test]
fn the_watchdog_contains_a_pfc_storm() {
    let free = lab("storm", json!({"watchdog": false}));
    let before = fig(&free, "victim_gbps_before");
    assert!(before > 90.0, "{before}");
    // Without the watchdog the storm reaches the victim through the trunk.
    assert!(fig(&free, "victim_gbps_during") < 0.1 * before);
    assert_eq!(verdict(&free, "contained"), json!(false));
    assert_eq!(free.figure_value("watchdog_at_us"), None);
    assert!(fig(&free, "storm_pauses") > 0.0);

    let wd = lab("storm", json!({"watchdog": true}));
    assert_eq!(verdict(&wd, "contained"), json!(true), "{:?}", wd.verdict);
    let at = fig(&wd, "watchdog_at_us");
    // It acts one detection time after the queue to the stalled host was paused.
    assert!((300.0..400.0).contains(&at), "{at}");
    assert!(fig(&wd, "watchdog_drops") > 0.0);
    assert!(verdict(&wd, "victim_gbps_late").as_f64().unwrap() > 0.9 * before);
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
    assert!(verdict(&pfc, "victim_paused_pct").as_f64().unwrap() > 30.0);
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
    let lossy = lab(
        "incast",
        json!({"dcqcn": "off", "ecn": false, "pfc": false, "duration_us": 1000}),
    );
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
    assert_eq!(verdict(&rnr, "status"), json!("RNR_RETRY_EXC_ERR"));
    assert!(counter(&rnr, "h0", "rnr_nak_retry_err") > 0);
    assert_eq!(
        counter(&rnr, "h1", "out_of_buffer"),
        counter(&rnr, "h0", "rnr_nak_retry_err")
    );
    assert_eq!(counter(&rnr, "h0", "req_rnr_retries_exceeded"), 1);
    assert_eq!(fig(&rnr, "completions_ok"), 4.0);

    let gone = lab("trouble", json!({"case": "peer_gone"}));
    assert_eq!(verdict(&gone, "status"), json!("RETRY_EXC_ERR"));
    // retry_cnt 7: the first try and seven retries all time out.
    assert_eq!(counter(&gone, "h0", "local_ack_timeout_err"), 8);
    assert_eq!(counter(&gone, "h0", "packet_seq_err"), 0);
    assert_eq!(counter(&gone, "h1", "out_of_sequence"), 0);

    let prio = lab("trouble", json!({"case": "pfc_priority"}));
    assert_eq!(verdict(&prio, "status"), json!("SUCCESS"));
    assert!(counter(&prio, "switch", "egress_discards") > 0);
    assert!(counter(&prio, "h1", "out_of_sequence") > 0);
    assert!(counter(&prio, "h0", "packet_seq_err") > 0);
    assert_eq!(counter(&prio, "h0", "rx_prio3_pause"), 0);
    assert_eq!(counter(&prio, "switch", "pause_frames_sent"), 0);
    assert!(fig(&prio, "goodput_gbps") < 60.0);

    let mtu = lab("trouble", json!({"case": "mtu"}));
    assert_eq!(verdict(&mtu, "status"), json!("RETRY_EXC_ERR"));
    assert_eq!(fig(&mtu, "completions_ok"), 4.0);
    assert!(counter(&mtu, "switch", "mtu_discards") > 0);
    assert_eq!(counter(&mtu, "h0", "local_ack_timeout_err"), 8);
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
