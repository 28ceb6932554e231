//! The NVMe-oF lab (`nvmf`) shows what its page says: every figure, curve, bar and verdict
//! below is read from a run of both transports.

use rdmalab::labs::{
    LabResult, NvmfLimit, NvmfLimitKind, NvmfVerdict, NvmfWinner, Series, parse_params, run,
};
use serde_json::{Value, json};

fn lab(params: Value) -> LabResult {
    let p = parse_params("nvmf", &params).unwrap_or_else(|e| panic!("{params}: {e:?}"));
    run("nvmf", &p).unwrap_or_else(|e| panic!("{params}: {e}"))
}

fn fig(r: &LabResult, id: &str) -> f64 {
    r.figure_value(id)
        .unwrap_or_else(|| panic!("no figure {id}"))
}

fn verdict(r: &LabResult) -> &NvmfVerdict {
    r.verdict.nvmf().expect("an nvmf verdict")
}

fn series<'a>(r: &'a LabResult, chart: &str, name: &str) -> &'a Series {
    r.chart(chart)
        .unwrap_or_else(|| panic!("no chart {chart}"))
        .series
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{chart}: no series {name}"))
}

/// The y values of a series, in the order the lab ran them (shallowest queue first).
fn ys(s: &Series) -> Vec<f64> {
    s.points.iter().map(|p| p[1]).collect()
}

#[test]
fn nvme_tcp_costs_more_cpu_per_io_and_the_verdict_says_how_much() {
    let r = lab(json!({}));
    let (rdma, tcp) = (fig(&r, "cpu_rdma_ns"), fig(&r, "cpu_tcp_ns"));
    assert!(
        tcp > 3.0 * rdma,
        "NVMe/TCP {tcp} ns per IO, NVMe/RDMA {rdma} ns"
    );
    let said = verdict(&r).cpu_ratio;
    assert!(
        (said - tcp / rdma).abs() <= 0.01,
        "{said} against {tcp}/{rdma}"
    );
    // The bars add up to the figures, and NVMe/RDMA never enters the kernel.
    let bars = |name| ys(series(&r, "cpu", name)).iter().sum::<f64>();
    assert!((bars("NVMe/RDMA") - rdma).abs() <= 2.0);
    assert!((bars("NVMe/TCP") - tcp).abs() <= 2.0);
    let rdma_bars = ys(series(&r, "cpu", "NVMe/RDMA"));
    assert_eq!((rdma_bars[1], rdma_bars[3]), (0.0, 0.0), "sys time");
    let tcp_bars = ys(series(&r, "cpu", "NVMe/TCP"));
    assert!(
        tcp_bars[1] > tcp_bars[0] && tcp_bars[3] > tcp_bars[2],
        "NVMe/TCP is mostly sys on both ends: {tcp_bars:?}"
    );
}

#[test]
fn latency_rises_with_the_queue_depth_and_iops_with_it_until_a_limit() {
    let r = lab(json!({"iodepth": "128"}));
    for e in ["NVMe/RDMA", "NVMe/TCP"] {
        let p50 = series(&r, "latency", &format!("{e} p50"));
        let p99 = ys(series(&r, "latency", &format!("{e} p99")));
        assert_eq!(p50.points.len(), 8, "QD 1 to 128");
        let lat = ys(p50);
        assert!(lat[7] > 1.5 * lat[0], "{e}: p50 {lat:?}");
        assert!(
            lat.iter().zip(&p99).all(|(a, b)| b >= a),
            "{e}: p99 under p50"
        );
        // x is IOPS, in the order the depths ran: doubling the depth raised it every time.
        let iops: Vec<f64> = p50.points.iter().map(|p| p[0]).collect();
        assert!(iops.windows(2).all(|w| w[1] > w[0]), "{e}: {iops:?}");
    }
    // At 128 the device is full for NVMe/RDMA and a core of the target for NVMe/TCP.
    let v = verdict(&r);
    assert_eq!(v.limit_rdma, NvmfLimit::Device, "{v:?}");
    assert_eq!(v.limit_tcp, NvmfLimit::TargetCpu, "{v:?}");
    assert_eq!(v.limit_rdma_kind, NvmfLimitKind::Saturated);
    assert!(v.busy_rdma_pct >= 85);
}

#[test]
fn the_verdict_names_the_winner_and_the_limits_the_figures_show() {
    let r = lab(json!({}));
    let (a, b) = (fig(&r, "iops_rdma"), fig(&r, "iops_tcp"));
    assert!(a > b, "{a} {b}");
    let v = verdict(&r);
    assert_eq!(v.winner, NvmfWinner::Rdma);
    assert_eq!(v.iodepth, 32);
    let ratio = v.iops_ratio;
    assert!((ratio - a / b).abs() <= 0.01, "{ratio} against {a}/{b}");
    // The figures are the last points of the curves.
    let last = |name: &str| *series(&r, "latency", name).points.last().unwrap();
    assert_eq!(last("NVMe/RDMA p99"), [a, fig(&r, "p99_rdma_us")]);
    assert_eq!(last("NVMe/TCP p99"), [b, fig(&r, "p99_tcp_us")]);
    // At 32 NVMe/RDMA's median has not moved from QD 1's and nothing is busy: the depth
    // limits it. NVMe/TCP's median has risen.
    assert_eq!(v.limit_rdma, NvmfLimit::QueueDepth, "{v:?}");
    assert!(v.latency_growth_rdma < 1.1 && v.busy_rdma_pct < 85);
    assert!(v.latency_growth_tcp >= 1.1, "{v:?}");
    let p50 = ys(series(&r, "latency", "NVMe/TCP p50"));
    assert!((p50[p50.len() - 1] / p50[0] - v.latency_growth_tcp).abs() <= 0.01);
}

#[test]
fn at_queue_depth_one_the_latency_is_the_device_plus_the_fabric() {
    let r = lab(json!({"iodepth": "1"}));
    let local = fig(&r, "local_qd1_us");
    for (e, adds) in [
        ("NVMe/RDMA", "fabric_qd1_rdma_us"),
        ("NVMe/TCP", "fabric_qd1_tcp_us"),
    ] {
        let p50 = ys(series(&r, "latency", &format!("{e} p50")));
        assert_eq!(p50.len(), 1);
        assert!((p50[0] - (local + fig(&r, adds))).abs() < 1e-6, "{e}");
    }
    let (a, b) = (fig(&r, "fabric_qd1_rdma_us"), fig(&r, "fabric_qd1_tcp_us"));
    assert!(a > 0.0 && b > 2.0 * a, "RDMA adds {a} µs, TCP {b} µs");
}

#[test]
fn large_writes_fill_the_link_and_several_writers_queue_at_the_target() {
    let r = lab(json!({"bs": "128k", "rwmixread": 0, "iodepth": "16"}));
    assert_eq!(verdict(&r).limit_rdma, NvmfLimit::Link, "{:?}", r.verdict);
    // An incast of writes: the switch port towards the target queues more with four writers.
    let peak = |r: &LabResult, e: &str| {
        let q = ys(series(r, "queue", &format!("{e}: switch → target")));
        q[q.len() - 1]
    };
    let four = lab(json!({"bs": "16k", "rwmixread": 0, "iodepth": "8", "initiators": 4}));
    let one = lab(json!({"bs": "16k", "rwmixread": 0, "iodepth": "8"}));
    for e in ["NVMe/RDMA", "NVMe/TCP"] {
        assert!(peak(&four, e) > 2.0 * peak(&one, e), "{e}");
    }
}

#[test]
fn a_run_too_large_for_the_page_is_refused_naming_the_bound() {
    let e = parse_params("nvmf", &json!({"iodepth": "128", "initiators": 8})).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("iodepth"), "{e:?}");
    assert!(e.message.contains("1024 IOs in flight"), "{}", e.message);
    assert_eq!(e.allowed.as_deref(), Some("iodepth × initiators ≤ 512"));
    let e = parse_params("nvmf", &json!({"iodepth": "64", "bs": "128k"})).unwrap_err();
    assert!(e.message.contains("= 8 MiB in flight"), "{}", e.message);
    let e = parse_params("nvmf", &json!({"rwmixread": 101})).unwrap_err();
    assert_eq!(e.allowed.as_deref(), Some("an integer in 0..=100"));
}

#[test]
fn the_same_parameters_give_the_same_result() {
    let p = json!({"iodepth": "8", "rwmixread": 70, "initiators": 2, "link_gbps": "25"});
    let a = serde_json::to_value(lab(p.clone())).unwrap();
    let b = serde_json::to_value(lab(p)).unwrap();
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("wall_ms");
        v
    };
    assert_eq!(strip(a), strip(b));
}
