//! The AI training all-reduce lab (`allreduce`) shows what its page says: busbw against the
//! ideal, the flows on every leaf→spine uplink, what one more QP per connection changes, and a
//! verdict naming the limit, each read from the lab's two runs.

use rdmalab::labs::{AllreduceLimit, AllreduceVerdict, LabResult, Series, parse_params, run};
use serde_json::{Value, json};

fn lab(params: Value) -> LabResult {
    let p = parse_params("allreduce", &params).unwrap_or_else(|e| panic!("{params}: {e:?}"));
    run("allreduce", &p).unwrap_or_else(|e| panic!("{params}: {e}"))
}

fn fig(r: &LabResult, id: &str) -> f64 {
    r.figure_value(id)
        .unwrap_or_else(|| panic!("no figure {id}"))
}

fn verdict(r: &LabResult) -> &AllreduceVerdict {
    r.verdict.allreduce().expect("an allreduce verdict")
}

fn series<'a>(r: &'a LabResult, chart: &str, name: &str) -> &'a Series {
    r.chart(chart)
        .unwrap_or_else(|| panic!("no chart {chart}"))
        .series
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{chart}: no series {name}"))
}

/// busbw over the ideal, as the page's percentage says it.
fn share(r: &LabResult) -> f64 {
    fig(r, "busbw_gbs") / fig(r, "ideal_busbw_gbs")
}

/// The uplinks a series of the spread chart counts with `flows` flows.
fn uplinks_with(r: &LabResult, name: &str, flows: usize) -> f64 {
    series(r, "spread", name)
        .points
        .get(flows)
        .map_or(0.0, |p| p[1])
}

#[test]
fn defaults_one_qp_per_connection_rides_one_25g_uplink_per_flow_and_one_more_qp_nearly_doubles_busbw()
 {
    let r = lab(json!({}));
    // 8 servers, 2 channels × 1 QP: two flows leave each leaf over four 25 Gb/s uplinks, so
    // the paths allow half of the host's 100 Gb/s.
    let v = verdict(&r);
    assert_eq!(v.limit, AllreduceLimit::FewFlows);
    assert_eq!(v.flows_per_leaf, 2);
    assert_eq!(v.paths_pct, 50.0);
    let s = share(&r);
    assert!(s > 0.40 && s <= 0.50, "busbw {s} of the ideal");
    assert_eq!(v.busbw_pct, (s * 1000.0).round() / 10.0);
    // The spread chart: of 8 × 4 uplinks, half carried one flow and half none.
    assert_eq!(uplinks_with(&r, "1 QP", 0), 16.0);
    assert_eq!(uplinks_with(&r, "1 QP", 1), 16.0);
    // Two QPs: four flows, CRC-16 puts one on every uplink; busbw nearly doubles.
    assert_eq!(uplinks_with(&r, "2 QPs", 1), 32.0);
    let (one, two) = (fig(&r, "busbw_gbs"), fig(&r, "busbw_more_gbs"));
    assert!(two > 1.8 * one, "1 QP {one} GB/s, 2 QPs {two} GB/s");
    assert!((fig(&r, "gain_gbs") - (two - one)).abs() < 0.011);
    // The busbw chart says the same three numbers.
    let bars: Vec<f64> = series(&r, "busbw", "busbw")
        .points
        .iter()
        .map(|p| p[1])
        .collect();
    assert_eq!(bars, [one, two, fig(&r, "ideal_busbw_gbs")]);
    // The busiest uplinks are leaf→spine, each with its one flow, near full.
    let up = series(&r, "uplinks", "1 QP");
    assert!(
        up.labels
            .iter()
            .all(|l| l.starts_with("leaf") && l.contains("→spine") && l.ends_with(" · 1 flow"))
    );
    assert!(up.points[0][1] > 85.0, "{:?}", up.points);
    // PFC pauses the servers that push 100 Gb/s into a 25 Gb/s uplink.
    assert!(fig(&r, "pauses") > 0.0);
}

#[test]
fn busbw_is_near_the_ideal_on_a_non_blocking_fabric_with_enough_qps() {
    // Uplinks as fast as the host: one flow per connection already runs at line rate.
    let r = lab(json!({"spine_gbps": "100"}));
    assert_eq!(verdict(&r).limit, AllreduceLimit::LineRate);
    assert!(share(&r) > 0.95, "{}", share(&r));
    // Four 25 Gb/s uplinks need four flows per leaf: 2 channels × 2 QPs, spread evenly.
    let r = lab(json!({"qps": 2, "size": "16M"}));
    let v = verdict(&r);
    assert_eq!(v.limit, AllreduceLimit::LineRate);
    assert!(share(&r) > 0.90, "{}", share(&r));
    assert_eq!(v.collided_uplinks, 0);
    assert_eq!(v.max_flows, 1);
}

#[test]
fn an_ecmp_collision_with_one_qp_holds_the_whole_ring_to_a_quarter() {
    // The random-like hash puts two of a leaf's flows on one 25 Gb/s uplink: each gets
    // 12.5 Gb/s, and every step of the ring waits for it.
    let r = lab(json!({"hash": "mixed"}));
    let v = verdict(&r);
    assert_eq!(v.limit, AllreduceLimit::Ecmp);
    assert_eq!(v.max_flows, 2);
    let collided = u64::from(v.collided_uplinks);
    assert!(collided >= 1);
    assert_eq!(uplinks_with(&r, "1 QP", 2), collided as f64);
    assert_eq!(fig(&r, "shared_uplinks"), collided as f64);
    assert_eq!(v.paths_pct, 25.0);
    let s = share(&r);
    assert!(s > 0.22 && s <= 0.25, "busbw {s} of the ideal");
    // The same fabric and hash with CRC-16 has no collision and twice the busbw.
    let crc = lab(json!({}));
    assert!(fig(&crc, "busbw_gbs") > 1.8 * fig(&r, "busbw_gbs"));
    // The uplink chart names the collided uplinks.
    let up = series(&r, "uplinks", "1 QP");
    assert_eq!(
        up.labels
            .iter()
            .filter(|l| l.ends_with(" · 2 flows"))
            .count() as u64,
        collided
    );
}

#[test]
fn one_more_qp_can_cost_busbw_when_the_flows_cannot_split_evenly() {
    let r = lab(json!({"channels": 1, "qps": 4}));
    // Four flows on four uplinks, then five: one uplink carries two.
    assert_eq!(uplinks_with(&r, "4 QPs", 1), 32.0);
    assert_eq!(uplinks_with(&r, "5 QPs", 2), 8.0);
    let v = verdict(&r);
    assert_eq!(v.limit_more, AllreduceLimit::Uneven);
    assert_eq!(v.paths_more_pct, 62.5);
    assert!(fig(&r, "gain_gbs") < 0.0);
    assert!(v.gain_pct < -20.0);
}

#[test]
fn oversubscribed_uplinks_lower_the_ideal_and_enough_qps_reach_it() {
    let full = lab(json!({"qps": 2}));
    let r = lab(json!({"spines": 2, "qps": 2}));
    assert_eq!(verdict(&r).limit, AllreduceLimit::Oversubscribed);
    let (ideal, ideal_full) = (fig(&r, "ideal_busbw_gbs"), fig(&full, "ideal_busbw_gbs"));
    assert!(
        (ideal - ideal_full / 2.0).abs() < 0.011,
        "{ideal} vs {ideal_full}"
    );
    assert!(share(&r) > 0.9);
}

#[test]
fn without_pfc_dcqcn_s_rate_cuts_are_the_limit_and_without_both_the_paths_are() {
    let r = lab(json!({"pfc": false}));
    assert_eq!(fig(&r, "pauses"), 0.0);
    assert!(fig(&r, "ecn_marks") >= 16.0);
    assert_eq!(verdict(&r).limit, AllreduceLimit::Dcqcn);
    assert!(share(&r) < 0.25, "{}", share(&r));
    let r = lab(json!({"pfc": false, "dcqcn": false}));
    assert_eq!((fig(&r, "pauses"), fig(&r, "ecn_marks")), (0.0, 0.0));
    assert_eq!(verdict(&r).limit, AllreduceLimit::FewFlows);
    assert!(share(&r) > 0.40, "{}", share(&r));
}

#[test]
fn every_knob_out_of_range_is_refused_naming_the_field_and_what_is_allowed() {
    for (body, field, allowed) in [
        (json!({"hosts": 1}), "hosts", "an integer in 2..=16"),
        (json!({"hosts": 17}), "hosts", "an integer in 2..=16"),
        (json!({"size": "32M"}), "size", "one of 1M, 4M, 8M, 16M"),
        (json!({"channels": 0}), "channels", "an integer in 1..=4"),
        (json!({"channels": 5}), "channels", "an integer in 1..=4"),
        (json!({"qps": 0}), "qps", "an integer in 1..=4"),
        (json!({"qps": 5}), "qps", "an integer in 1..=4"),
        (json!({"hash": "xor"}), "hash", "one of crc16, mixed"),
        (json!({"seed": -1}), "seed", "an integer in 0..=65535"),
        (json!({"seed": 65_536}), "seed", "an integer in 0..=65535"),
        (json!({"spines": 0}), "spines", "an integer in 1..=8"),
        (json!({"spines": 9}), "spines", "an integer in 1..=8"),
        (
            json!({"spine_gbps": "40"}),
            "spine_gbps",
            "one of 25, 50, 100",
        ),
        (json!({"pfc": "maybe"}), "pfc", "true or false"),
        (json!({"dcqcn": 1}), "dcqcn", "true or false"),
    ] {
        let e = parse_params("allreduce", &body).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{body}");
        assert_eq!(e.allowed.as_deref(), Some(allowed), "{body}");
        assert!(e.message.starts_with(field), "{body}: {}", e.message);
        assert!(e.msg.is_some() && e.allowed_msg.is_some(), "{body}");
    }
}

#[test]
fn the_spread_chart_counts_every_uplink_and_every_flow_once() {
    let r = lab(json!({"hosts": 4, "hash": "mixed", "channels": 3, "qps": 2, "size": "1M"}));
    for (name, per_leaf) in [("2 QPs", 6.0), ("3 QPs", 9.0)] {
        let pts = &series(&r, "spread", name).points;
        let uplinks: f64 = pts.iter().map(|p| p[1]).sum();
        let flows: f64 = pts.iter().map(|p| p[0] * p[1]).sum();
        assert_eq!(uplinks, 4.0 * 4.0, "{name}");
        assert_eq!(flows, 4.0 * per_leaf, "{name}");
    }
}

#[test]
fn more_gradient_bytes_than_the_page_answers_fast_are_refused_naming_the_bound() {
    let e = parse_params("allreduce", &json!({"hosts": 16, "size": "16M"})).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("size"));
    assert_eq!(e.allowed.as_deref(), Some("hosts × size ≤ 128 MiB"));
    assert_eq!(
        e.msg.as_ref().map(|m| m.id.id()),
        Some("lab.allreduce_bytes")
    );
    assert!(
        e.message.starts_with("hosts × size = 256 MiB"),
        "{}",
        e.message
    );
    // At the bound both ways round.
    parse_params("allreduce", &json!({"hosts": 16, "size": "8M"})).unwrap();
    parse_params("allreduce", &json!({"hosts": 8, "size": "16M"})).unwrap();
}
