//! The comparison report run on the lesson presets: every assertion reads what the model
//! produced for that preset.

use rdmalab::report::{Outcome, Participation, PathReport, Report, run_plan};

fn run(name: &str, sets: &[&str]) -> Report {
    let p = scenario::preset(name).expect("preset");
    let plan = scenario::parse_with(p.toml, sets).expect("plan");
    run_plan(&plan).expect("run")
}

fn paths(r: &Report) -> (&PathReport, &PathReport) {
    (r.tcp.as_ref().unwrap(), r.rdma.as_ref().unwrap())
}

#[test]
fn baseline_tcp_costs_two_copies_and_rdma_write_none() {
    let r = run("lesson1", &[]);
    let (t, d) = paths(&r);
    assert_eq!(t.outcome, Outcome::Success);
    assert_eq!(d.outcome, Outcome::Success);
    assert_eq!((t.data_path.copies, t.data_path.syscalls), (2, 2));
    assert!(t.data_path.kernel_local && t.data_path.kernel_remote);
    assert_eq!(t.transport_in, "kernel software");
    assert_eq!(t.remote_cpu, Participation::Full);
    assert_eq!((d.data_path.copies, d.data_path.syscalls), (0, 0));
    assert!(!d.data_path.kernel_local && !d.data_path.kernel_remote);
    assert_eq!(d.transport_in, "NIC hardware");
    assert_eq!(d.remote_cpu, Participation::None);
    let ratio = r.rdma_over_tcp_latency.unwrap();
    eprintln!("lesson1 RDMA/TCP latency ratio {ratio:.3}");
    assert!(ratio <= 1.0 / 3.0, "ratio {ratio}");
    // WRITE has both views: data placed at the remote, then the local CQE.
    let l = d.latency.as_ref().unwrap();
    let placed = l.placed_at_remote_ns.unwrap();
    assert!(placed > 0.0 && placed <= l.local_completion_ns);
    assert!(
        l.breakdown
            .iter()
            .any(|s| s.stage == "DMA write payload" && s.side == "remote")
    );
    assert!(
        l.breakdown
            .iter()
            .any(|s| s.stage == "DMA write CQE" && s.side == "local")
    );
    // Setup is separated: RDMA's registration and QP transitions are ioctls.
    assert!(d.setup.syscalls > 0 && t.setup.syscalls > 0);
    assert!(
        d.setup
            .cpu_stages_local
            .iter()
            .any(|s| s.name == "ioctl reg_mr")
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["schema"], "rdmalab.report/1");
    assert_eq!(json["rdma"]["remote_cpu"], "none");
    assert_eq!(json["rdma"]["outcome"]["status"], "success");
}

#[test]
fn send_recv_makes_the_remote_cpu_light() {
    let r = run("lesson2", &[]);
    let (_, d) = paths(&r);
    assert_eq!(d.outcome, Outcome::Success);
    assert_eq!(d.remote_cpu, Participation::Light, "{}", d.remote_cpu_why);
    assert_eq!((d.data_path.copies, d.data_path.syscalls), (0, 0));
    let names: Vec<&str> = d
        .data_path
        .cpu_stages_remote
        .iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"post_recv (write WQE)") && names.contains(&"poll_cq"));
}

#[test]
fn unregistered_memory_fails_rdma_while_tcp_delivers() {
    let r = run("lesson3", &[]);
    let (t, d) = paths(&r);
    assert_eq!(t.outcome, Outcome::Success);
    let Outcome::Failed { verb, code, .. } = &d.outcome else {
        panic!("RDMA should fail: {:?}", d.outcome)
    };
    eprintln!("lesson3: {verb} → {code}");
    assert_eq!(d.messages_delivered, 0);
}

#[test]
fn qp_below_rts_fails_rdma_while_tcp_delivers() {
    let r = run("lesson4", &[]);
    let (t, d) = paths(&r);
    assert_eq!(t.outcome, Outcome::Success);
    let Outcome::Failed {
        verb,
        code,
        at,
        why,
    } = &d.outcome
    else {
        panic!("RDMA should fail: {:?}", d.outcome)
    };
    eprintln!("lesson4: {verb} → {code} at {at}: {why}");
    assert!(why.contains("Rtr") || at.contains("Rtr"));
}

#[test]
fn large_messages_dilute_the_latency_ratio_but_not_the_cpu_savings() {
    let big = run("lesson6", &[]);
    let small = run("lesson6", &["workload.message_bytes=4096"]);
    let (rb, rs) = (
        big.rdma_over_tcp_latency.unwrap(),
        small.rdma_over_tcp_latency.unwrap(),
    );
    eprintln!("lesson6 ratio: 1 MiB {rb:.3}, 4 KiB {rs:.3}");
    assert!((1.0 - rb).abs() < (1.0 - rs).abs());
    let ((tb, db), (ts, ds)) = (paths(&big), paths(&small));
    assert!(tb.data_path.cpu_ns_per_message_local > ts.data_path.cpu_ns_per_message_local);
    assert!(tb.data_path.cpu_ns_per_message_remote > ts.data_path.cpu_ns_per_message_remote);
    assert_eq!(
        db.data_path.cpu_ns_per_message_local,
        ds.data_path.cpu_ns_per_message_local
    );
    for side in [
        db.memory_bus_bytes_per_delivered_byte.local,
        db.memory_bus_bytes_per_delivered_byte.remote,
    ] {
        assert!((0.95..1.1).contains(&side), "RDMA bus bytes {side}");
    }
    for side in [
        tb.memory_bus_bytes_per_delivered_byte.local,
        tb.memory_bus_bytes_per_delivered_byte.remote,
    ] {
        assert!((2.9..3.2).contains(&side), "TCP bus bytes {side}");
    }
}
