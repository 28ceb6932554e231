//! What a user of scenario files sees: presets, defaults, every error kind, `--set`.

use proptest::prelude::*;
use scenario::plan::{KEYS, allowed_keys, get, schema_markdown};
use scenario::{
    ErrorKind, Operation, Origin, Plan, QpStateKind, parse, parse_with, preset, presets,
};

fn err(text: &str) -> scenario::ScenarioError {
    parse(text).expect_err("should fail")
}

#[test]
fn every_preset_parses_and_states_every_key() {
    // ①–⑥ in order, with ⑤b after ⑤.
    let keys: Vec<String> = presets()
        .iter()
        .map(|p| format!("{}{}", p.number, p.variant))
        .collect();
    assert_eq!(keys, ["1", "2", "3", "4", "5", "5b", "6"]);
    for p in presets() {
        let plan = p.plan().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(p.name, format!("lesson{}{}", p.number, p.variant));
        for alias in [format!("{}{}", p.number, p.variant), p.name.to_uppercase()] {
            assert_eq!(preset(&alias).map(|x| x.name), Some(p.name), "{alias}");
        }
        assert!(p.toml.starts_with("# Preset "), "{} has no header", p.name);
        assert!(p.toml.contains("DESIGN.md §3.8"), "{}", p.name);
        assert!(p.toml.contains("Course lesson"), "{}", p.name);
        for k in KEYS {
            let (table, name) = k.path.split_once('.').unwrap_or(("", k.path));
            let header = format!("[{table}]");
            let in_table = if table.is_empty() {
                p.toml.split("\n[").next().unwrap_or("")
            } else {
                p.toml
                    .split(&header)
                    .nth(1)
                    .unwrap_or("")
                    .split("\n[")
                    .next()
                    .unwrap_or("")
            };
            assert!(
                in_table
                    .lines()
                    .any(|l| l.starts_with(&format!("{name} = "))),
                "{} does not state {}",
                p.name,
                k.path
            );
        }
        let _ = plan;
    }
}

#[test]
fn presets_demonstrate_their_lessons() {
    let base = preset("lesson1").unwrap().plan().unwrap();
    assert_eq!(base, Plan::default());
    assert_eq!(base.workload.message_bytes, 4096);
    assert_eq!(base.topology.link_gbps, 100);
    assert_eq!(base.rdma.operation, Operation::Write);
    assert_eq!(base.topology().unwrap().switches().len(), 1);
    assert!(base.fabric_config().switch.congestion_drop.is_zero());

    let two = preset("2").unwrap().plan().unwrap();
    assert_eq!(two.rdma.operation, Operation::Send);
    let mut back = two.clone();
    back.set("rdma.operation=write").unwrap();
    assert_eq!(back, base);

    assert!(
        !preset("lesson3")
            .unwrap()
            .plan()
            .unwrap()
            .rdma
            .memory_registered
    );
    assert_eq!(
        preset("④").unwrap().plan().unwrap().rdma.qp_state,
        QpStateKind::Rtr
    );

    let five = preset(" Lesson5 ").unwrap().plan().unwrap();
    assert_eq!(five.loss.congestion_drop, 0.01);
    assert!(!five.lossless.enabled);
    assert!(five.stream_duration().is_some());
    assert!(five.fabric_config().switch.pfc.is_none());
    let on = parse_with(preset("5").unwrap().toml, &["lossless.enabled=true"]).unwrap();
    let pfc = on.fabric_config().switch.pfc.expect("PFC on");
    assert!(pfc.covers(3) && !pfc.covers(0), "RoCE lossless, TCP lossy");
    on.fabric_config().validate().unwrap();

    let six = preset("lesson6").unwrap().plan().unwrap();
    assert_eq!(six.workload.message_bytes, 1 << 20);
    let small = parse_with(preset("6").unwrap().toml, &["workload.message_bytes=4096"]).unwrap();
    assert_eq!(small, base);

    assert!(preset("lesson7").is_none());
    assert!(preset("0").is_none());
}

#[test]
fn defaults_round_trip() {
    let d = Plan::default();
    assert_eq!(parse("").unwrap(), d);
    assert_eq!(parse(&d.to_toml()).unwrap(), d);
    let five = preset("5").unwrap().plan().unwrap();
    assert_eq!(parse(&five.to_toml()).unwrap(), five);
}

#[test]
fn conversions_feed_the_other_crates() {
    let p = Plan::default();
    p.fabric_config().validate().unwrap();
    p.host_profile().validate().unwrap();
    p.tcp_config().validate().unwrap();
    p.link_config().validate().unwrap();
    assert_eq!(p.topology().unwrap().hosts().len(), 2);
    assert_eq!(p.rdma_mtu().bytes(), 4096);
    assert_eq!(p.tcp_config().mss, 1460);
    assert_eq!(p.nic_profile(), verbs::NicProfile::Mlx5);
    // Extremes of every range still make valid configs.
    let mut hi = Plan::default();
    for s in [
        "tcp.mtu_bytes=9216",
        "tcp.min_rto_us=1000000",
        "tcp.send_buffer_bytes=1073725440",
        "topology.link_gbps=1600",
        "topology.cable_m=100000",
        "host.pcie_generation=6",
        "lossless.priority=7",
        "topology.kind=back_to_back",
    ] {
        hi.set(s).unwrap_or_else(|e| panic!("{e}"));
    }
    hi.fabric_config().validate().unwrap();
    hi.host_profile().validate().unwrap();
    hi.tcp_config().validate().unwrap();
    assert_eq!(hi.topology().unwrap().switches().len(), 0);
    let mut ecn = Plan::default();
    ecn.set_all(&[
        "switch.ecn=true",
        "switch.ecn_pmax=1.0",
        "lossless.enabled=true",
    ])
    .unwrap();
    ecn.fabric_config().validate().unwrap();
}

/// The model-fidelity issue, item 3 ("no silent knobs"): a non-default value for a key that
/// cannot change the run is refused, naming the key and why; its default still passes.
#[test]
fn keys_that_cannot_apply_are_refused_by_name() {
    let five = preset("lesson5").unwrap().toml;
    let e = scenario::parse_with(five, &["topology.kind=back_to_back"]).unwrap_err();
    assert_eq!(e.kind, scenario::ErrorKind::Inapplicable);
    assert_eq!(e.key, "loss.congestion_drop");
    assert!(
        e.to_string()
            .contains("loss.congestion_drop needs a switch: topology.kind = back_to_back has none"),
        "{e}"
    );
    let one = preset("lesson1").unwrap().toml;
    for (sets, key, why) in [
        (
            &["topology.kind=back_to_back", "switch.latency_ns=1"][..],
            "switch.latency_ns",
            "needs a switch",
        ),
        (
            &["topology.spines=2"][..],
            "topology.spines",
            "needs topology.kind = leaf_spine",
        ),
        (
            &["topology.spine_gbps=25"][..],
            "topology.spine_gbps",
            "needs topology.kind = leaf_spine",
        ),
        (
            &["topology.k=8"][..],
            "topology.k",
            "needs topology.kind = fat_tree",
        ),
        (
            &["topology.hosts_per_leaf=2"][..],
            "topology.hosts_per_leaf",
            "needs topology.kind = leaf_spine",
        ),
        (
            &["switch.ecmp_hash=mixed"][..],
            "switch.ecmp_hash",
            "needs equal-cost paths",
        ),
        (
            &["switch.ecn_kmin_bytes=1"][..],
            "switch.ecn_kmin_bytes",
            "needs switch.ecn = true",
        ),
        (
            &["switch.pfc_watchdog_us=50"][..],
            "switch.pfc_watchdog_us",
            "needs lossless.enabled",
        ),
        (
            &["rdma.dcqcn_profile=paper"][..],
            "rdma.dcqcn_profile",
            "needs rdma.dcqcn = true",
        ),
        (
            &["cross_traffic.senders=2"][..],
            "cross_traffic.senders",
            "needs cross_traffic.burst_bytes",
        ),
        (
            &["workload.paths=rdma", "tcp.busy_poll=true"][..],
            "tcp.busy_poll",
            "tcp.busy_poll needs the TCP path: workload.paths = \"rdma\" runs only RDMA",
        ),
        (
            &["workload.paths=tcp", "rdma.mtu_bytes=1024"][..],
            "rdma.mtu_bytes",
            "rdma.mtu_bytes needs the RDMA path: workload.paths = \"tcp\" runs only TCP",
        ),
        (
            &[
                "topology.kind=fat_tree",
                "workload.pattern=permutation",
                "tcp.sack=false",
            ][..],
            "tcp.sack",
            "runs RDMA WRITEs only",
        ),
    ] {
        let e = scenario::parse_with(one, sets).unwrap_err();
        assert_eq!(
            (e.kind, e.key.as_str()),
            (scenario::ErrorKind::Inapplicable, key),
            "{sets:?}"
        );
        assert!(e.to_string().contains(why), "{sets:?}: {e}");
    }
    // Where the key applies it passes, and every default passes on every topology.
    for sets in [
        &[
            "topology.kind=leaf_spine",
            "topology.spines=2",
            "switch.ecmp_hash=mixed",
        ][..],
        &["switch.ecn=true", "switch.ecn_kmin_bytes=1"][..],
        &["topology.kind=back_to_back"][..],
        &["topology.kind=fat_tree", "topology.k=8"][..],
        &["workload.paths=tcp", "tcp.busy_poll=true"][..],
        &["workload.paths=rdma", "rdma.mtu_bytes=1024"][..],
    ] {
        scenario::parse_with(one, sets).unwrap_or_else(|e| panic!("{sets:?}: {e}"));
    }
}

#[test]
fn readme_documents_every_key() {
    let readme = include_str!("../../../../scenarios/README.md");
    assert!(
        readme.contains(&schema_markdown()),
        "scenarios/README.md's key table is stale; regenerate it from plan::schema_markdown()"
    );
    for p in presets() {
        assert!(readme.contains(&format!("`{}`", p.name)));
    }
}

#[test]
fn unknown_key_lists_the_allowed_keys() {
    let e = err("[rdma]\nmtu = 4096\n");
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert_eq!((e.line, e.column), (2, 1));
    assert_eq!(e.key, "rdma.mtu");
    assert!(
        e.allowed.contains("mtu_bytes") && e.allowed.contains("qp_state"),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("2:1: unknown key `rdma.mtu`"),
        "{e}"
    );

    let e = err("seed = 3\nsede = 4\n");
    assert_eq!((e.line, e.column, e.key.as_str()), (2, 1, "sede"));
    assert!(e.allowed.contains("seed, host, nic"), "{e}");

    let e = err("[wrkload]\nmessages = 1\n");
    assert_eq!((e.line, e.column, e.key.as_str()), (1, 2, "wrkload"));
    assert_eq!(
        allowed_keys(""),
        e.allowed
            .trim_end_matches(" (top level)")
            .split(", ")
            .collect::<Vec<_>>()
    );
}

#[test]
fn wrong_type_names_the_type() {
    let e = err("[workload]\nmessage_bytes = \"4k\"\n");
    assert_eq!(e.kind, ErrorKind::WrongType);
    assert_eq!((e.line, e.column), (2, 17));
    assert_eq!(e.key, "workload.message_bytes");
    assert_eq!(e.value, "\"4k\"");
    assert!(
        e.allowed
            .starts_with("an integer (1..=1073741824), found string"),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("2:17: workload.message_bytes = \"4k\" has the wrong type"),
        "{e}"
    );
    let e = err("rdma = 3\n");
    assert_eq!((e.kind, e.key.as_str()), (ErrorKind::WrongType, "rdma"));
    let e = err("[tcp]\ntso = 1\n");
    assert_eq!((e.kind, e.column), (ErrorKind::WrongType, 7));
}

#[test]
fn out_of_range_names_key_value_and_range() {
    let e = err("[topology]\nlink_gbps = 0\n");
    assert_eq!(e.kind, ErrorKind::OutOfRange);
    assert_eq!((e.line, e.column), (2, 13));
    assert_eq!(
        e.to_string(),
        "2:13: topology.link_gbps = 0 is out of range: allowed 1..=1600"
    );
    let e = err("[loss]\ncongestion_drop = 1.5\n");
    assert_eq!(
        e.to_string(),
        "2:19: loss.congestion_drop = 1.5 is out of range: allowed 0.0..=1.0"
    );
    let e = err("[rdma]\nmtu_bytes = 1500\n");
    assert_eq!(e.allowed, "one of 256, 512, 1024, 2048, 4096");
    let e = err("[workload]\nmessage_bytes = -1\n");
    assert_eq!((e.kind, e.value.as_str()), (ErrorKind::OutOfRange, "-1"));
    for (text, key) in [
        ("[workload]\nmessages = 1_000_001", "workload.messages"),
        ("[workload]\nstream_us = 10_000_001", "workload.stream_us"),
        ("[tcp]\nrecv_buffer_bytes = 0", "tcp.recv_buffer_bytes"),
        ("[topology]\ncable_m = 100001", "topology.cable_m"),
        ("[loss]\ncorruption = -0.1", "loss.corruption"),
        (
            "[switch]\nbuffer_bytes = 1099511627777",
            "switch.buffer_bytes",
        ),
    ] {
        let e = err(text);
        assert_eq!(
            (e.kind, e.key.as_str(), e.line),
            (ErrorKind::OutOfRange, key, 2),
            "{e}"
        );
    }
}

#[test]
fn bad_enum_lists_the_names() {
    let e = err("[rdma]\noperation = \"atomic\"\n");
    assert_eq!(e.kind, ErrorKind::BadEnum);
    assert_eq!(
        (e.line, e.column, e.key.as_str()),
        (2, 13, "rdma.operation")
    );
    assert_eq!(
        e.to_string(),
        "2:13: rdma.operation = \"atomic\" is not a known value: allowed one of \"write\", \"read\", \"send\""
    );
}

#[test]
fn conflicts_point_at_the_key() {
    let e = err("[rdma]\nqp_type = \"ud\"\noperation = \"write\"\n");
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(
        (e.line, e.column, e.key.as_str()),
        (3, 13, "rdma.operation")
    );
    let e = err("[lossless]\nxon_bytes = 300000\n");
    assert_eq!((e.key.as_str(), e.line), ("lossless.xon_bytes", 2));
    // XOFF "auto" at 100 Gb/s, 2 m and the default port MTU 4192 (RoCE at 4096, Linux's rule):
    // (301 + 216 × 2 / 100) × 100 + 272 × 4192 / 100 = 30,500 + 11,402 B, as mlx5 rounds.
    assert!(
        e.allowed.contains("at most lossless.xoff_bytes (41902)"),
        "{e}"
    );
    assert!(e.allowed.contains("mlx5's rule"), "{e}");
    let e = err("[lossless]\nxoff_bytes = 1000\nxon_bytes = 2000\n");
    assert!(
        e.allowed.contains("at most lossless.xoff_bytes (1000)") && !e.allowed.contains("mlx5"),
        "{e}"
    );
    // "auto" is a value of its own, from a file and from --set; other strings are not.
    let mut p = Plan::default();
    p.set("lossless.xoff_bytes=5000").unwrap();
    assert_eq!(p.pfc_thresholds().xoff_bytes, 5_000);
    // XON "auto" below a given XOFF: one max MTU lower, but never below one port MTU.
    assert_eq!(p.pfc_thresholds().xon_bytes, 4_192);
    p.set("lossless.xoff_bytes=auto").unwrap();
    assert_eq!(p.pfc_thresholds().xoff_bytes, 41_902);
    assert_eq!(p.pfc_thresholds().xon_bytes, 41_902 - 9_216);
    let e = err("[lossless]\nxoff_bytes = \"big\"\n");
    assert!(e.allowed.contains("\"auto\" or 1..="), "{e}");
    let e = err("[rdma]\ndcqcn = true\n");
    assert_eq!(e.key, "rdma.dcqcn");
    let e = err("[workload]\nmessage_bytes = 1073741824\nmessages = 1_000_000\n");
    assert_eq!((e.key.as_str(), e.line), ("workload.messages", 3));
}

/// Racks of hosts on a leaf-spine: `hosts / hosts_per_leaf` leaves, numbered leaf by leaf; a
/// count that does not divide the hosts is refused by name.
#[test]
fn a_leaf_spine_takes_several_hosts_per_leaf() {
    let leaf_spine = "[workload]\npattern = \"collective\"\n[topology]\nkind = \"leaf_spine\"\nhosts = 16\nspines = 2\n";
    let p = scenario::parse_with(&format!("{leaf_spine}hosts_per_leaf = 4\n"), &[]).unwrap();
    let t = p.topology().unwrap();
    assert_eq!((t.hosts().len(), t.switches().len()), (16, 4 + 2));
    let one = scenario::parse_with(leaf_spine, &[]).unwrap();
    assert_eq!(one.topology().unwrap().switches().len(), 16 + 2);
    let e = err(&format!("{leaf_spine}hosts_per_leaf = 5\n"));
    assert_eq!(e.key, "topology.hosts_per_leaf");
    assert!(
        e.allowed.contains("a divisor of topology.hosts (16)"),
        "{e}"
    );
    assert_eq!(e.kind, ErrorKind::Conflict);
}

#[test]
fn cross_traffic_needs_a_stream_hosts_to_send_from_and_a_bounded_burst_count() {
    // Count mode: no stream for the bursts to run beside.
    let e = err("[cross_traffic]\nburst_bytes = 4096\n");
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(e.key, "cross_traffic.burst_bytes");
    assert!(e.allowed.contains("workload.stream_us"), "{e}");
    // Two hosts carry the path: a sender needs a third.
    let stream = "[workload]\nstream_us = 2000\n";
    let e = err(&format!("{stream}[cross_traffic]\nburst_bytes = 4096\n"));
    assert_eq!(e.key, "topology.hosts");
    assert!(e.allowed.contains("at least 3"), "{e}");
    let e = err(&format!(
        "[topology]\nhosts = 3\n{stream}[cross_traffic]\nburst_bytes = 4096\nsenders = 2\n"
    ));
    assert!(e.allowed.contains("at least 4"), "{e}");
    // 10 s of stream at one burst per µs is more than 100 000 bursts.
    let e = err(
        "[topology]\nhosts = 3\n[workload]\nstream_us = 10_000_000\n\
         [cross_traffic]\nburst_bytes = 64\nperiod_us = 1\n",
    );
    assert_eq!(e.key, "cross_traffic.period_us");
    assert!(e.allowed.contains("at least 100 µs"), "{e}");
    let ok = parse(&format!(
        "[topology]\nhosts = 3\n{stream}[cross_traffic]\nburst_bytes = 4096\n"
    ))
    .unwrap();
    assert_eq!(ok.cross_traffic.burst_bytes, 4096);
    // `back_to_back` has no switch to share, and `leaf_spine` not the one the bursts need:
    // the message names the topology, not a host count already large enough.
    for topology in [
        "kind = \"back_to_back\"",
        "kind = \"leaf_spine\"\nhosts = 4",
    ] {
        let e = err(&format!(
            "[topology]\n{topology}\n{stream}[cross_traffic]\nburst_bytes = 1\n"
        ));
        assert_eq!(e.key, "cross_traffic.burst_bytes", "{e}");
        assert!(
            e.allowed.contains("0 unless topology.kind = \"switch\""),
            "{e}"
        );
    }
}

#[test]
fn syntax_errors_have_a_position() {
    let e = err("seed = \n");
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert_eq!(e.line, 1);
    let big = "#".repeat(scenario::MAX_FILE_BYTES + 1);
    assert_eq!(err(&big).kind, ErrorKind::OutOfRange);
}

#[test]
fn set_overrides() {
    let mut p = Plan::default();
    p.set("rdma.operation=send").unwrap();
    p.set(" rdma.qp_state = \"init\" ").unwrap();
    p.set("loss.congestion_drop=0.25").unwrap();
    p.set("workload.message_bytes=0x100000").unwrap();
    p.set("seed=42").unwrap();
    assert_eq!(p.rdma.operation, Operation::Send);
    assert_eq!(p.rdma.qp_state, QpStateKind::Init);
    assert_eq!(p.loss.congestion_drop, 0.25);
    assert_eq!(p.workload.message_bytes, 1 << 20);
    assert_eq!(p.fabric_config().seed, 42);
    for k in KEYS {
        let v = get(&p, k.path).unwrap().to_toml();
        let mut q = p.clone();
        q.set(&format!("{}={v}", k.path)).unwrap();
        assert_eq!(q, p, "{}", k.path);
    }
}

#[test]
fn set_rejects_unknown_keys_and_bad_values() {
    let before = Plan::default();
    let mut p = before.clone();
    let e = p.set("rdma.mtu=4096").unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert_eq!(e.origin, Origin::Set("rdma.mtu=4096".into()));
    assert!(e.allowed.contains("mtu_bytes"), "{e}");
    assert!(
        e.to_string()
            .starts_with("--set rdma.mtu=4096: 1:1: unknown key"),
        "{e}"
    );
    let e = p.set("nope=1").unwrap_err();
    assert!(e.allowed.contains("workload"), "{e}");
    let e = p.set("topology.link_gbps=2000").unwrap_err();
    assert_eq!((e.kind, e.column), (ErrorKind::OutOfRange, 20));
    assert_eq!(
        e.to_string(),
        "--set topology.link_gbps=2000: 1:20: topology.link_gbps = 2000 is out of range: allowed 1..=1600"
    );
    let e = p.set("rdma.operation=atomic").unwrap_err();
    assert_eq!(
        (e.kind, e.column, e.value.as_str()),
        (ErrorKind::BadEnum, 16, "atomic")
    );
    let e = p.set("tcp.tso=yes").unwrap_err();
    assert_eq!(e.kind, ErrorKind::WrongType);
    let e = p.set("seed").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    let e = p.set("rdma.dcqcn=true").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(p, before, "failed overrides leave the plan unchanged");
    let e = parse_with("", &["seed=1", "tcp.gro=2"]).unwrap_err();
    assert_eq!(e.key, "tcp.gro");
    // Rules between keys hold for the set as a whole, in either order.
    for sets in [
        ["rdma.dcqcn=true", "switch.ecn=true"],
        ["switch.ecn=true", "rdma.dcqcn=true"],
    ] {
        let plan = parse_with("", &sets).unwrap();
        assert!(plan.rdma.dcqcn && plan.switch.ecn, "{sets:?}");
    }
    let e = parse_with("", &["seed=2", "rdma.dcqcn=true"]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(e.origin, Origin::Set("rdma.dcqcn=true".into()), "{e}");
}

fn soup() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(KEYS.iter().map(|k| k.path.to_string()).collect::<Vec<_>>()),
        "[a-z_]{1,8}(\\.[a-z_]{1,8}){0,2}",
    ];
    let value = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        "\"[a-z_]{0,10}\"",
        "[ -~]{0,12}",
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
    ];
    prop::collection::vec((key, value), 0..12).prop_map(|kv| {
        kv.into_iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect::<String>()
    })
}

proptest! {
    #[test]
    fn random_soup_never_panics(text in soup(), sets in prop::collection::vec("[ -~]{0,30}", 0..4)) {
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        if let Ok(plan) = parse_with(&text, &sets) {
            prop_assert_eq!(parse(&plan.to_toml()).unwrap(), plan.clone());
            let _ = plan.topology();
            let _ = plan.fabric_config();
        } else if let Err(e) = parse(&text) {
            prop_assert!(e.line >= 1 && e.column >= 1);
            let _ = e.to_string();
        }
    }
}

/// A probability may be written as an integer, 0 or 1, in any form TOML allows, and is read
/// through the spanned-TOML toolkit the session files share; 2 is out of range.
#[test]
fn integer_probabilities_are_read_as_integers() {
    for (text, want) in [("1", 1.0), ("+1", 1.0), ("-0", 0.0), ("0", 0.0)] {
        let plan = parse(&format!("[loss]\ncorruption = {text}\n")).unwrap();
        assert_eq!(plan.loss.corruption, want, "{text}");
    }
    let e = err("[loss]\ncorruption = 2\n");
    assert_eq!(e.kind, ErrorKind::OutOfRange);
    assert_eq!(
        e.to_string(),
        "2:14: loss.corruption = 2 is out of range: allowed 0.0..=1.0"
    );
}
