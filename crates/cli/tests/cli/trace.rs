//! `rdmalab trace`: one pcap tshark decodes (RoCEv2, TCP and PFC frames for ⑤ with lossless
//! on) and JSON Lines that follow the documented schema.

#[path = "../../../../testing/tshark.rs"]
mod tshark_run;

use assert_cmd::Command;
use std::collections::BTreeMap;

#[test]
fn lesson5_lossless_trace_has_roce_tcp_and_pfc_frames_and_a_jsonl_trace() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let (pcap, jsonl) = (dir.path().join("l5.pcap"), dir.path().join("l5.jsonl"));
    Command::cargo_bin("rdmalab")
        .unwrap()
        .args([
            "trace",
            "lesson5",
            "--set",
            "lossless.enabled=true",
            "--set",
            "workload.stream_us=1400",
            "--pcap",
        ])
        .arg(&pcap)
        .arg("--trace")
        .arg(&jsonl)
        .assert()
        .success();
    // No temporary capture left behind.
    let left: Vec<_> = std::fs::read_dir(pcap.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("rdmalab-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // The JSON Lines: every kind documented, stages and packets of both paths, PAUSEs.
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let mut kinds: BTreeMap<(String, String), usize> = BTreeMap::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["t_ps"].is_u64(), "{l}");
        let k = (
            v["path"].as_str().unwrap().to_string(),
            v["kind"].as_str().unwrap().to_string(),
        );
        match k.1.as_str() {
            "stage" => assert!(v["start_ps"].as_u64() <= v["end_ps"].as_u64(), "{l}"),
            "packet" => assert!(v["event"].is_string() && v["class"].is_string(), "{l}"),
            "pause_sent" | "pause_received" => assert!(v["quanta"].is_u64(), "{l}"),
            "dropped" | "ecn_marked" | "retransmit" => {}
            other => panic!("undocumented kind {other}: {l}"),
        }
        *kinds.entry(k).or_default() += 1;
    }
    for k in [
        ("tcp", "stage"),
        ("tcp", "packet"),
        ("rdma", "stage"),
        ("rdma", "packet"),
        ("rdma", "pause_sent"),
    ] {
        assert!(
            kinds.contains_key(&(k.0.to_string(), k.1.to_string())),
            "{k:?} in {kinds:?}"
        );
    }
    let pauses = kinds[&("rdma".to_string(), "pause_sent".to_string())];

    // The pcap in tshark.
    let Some(lines) = tshark_run::tshark(&[
        "-r",
        pcap.to_str().expect("a UTF-8 temp path"),
        "-T",
        "fields",
        "-e",
        "frame.protocols",
        "-e",
        "eth.type",
    ]) else {
        return;
    };
    let count = |f: &dyn Fn(&str) -> bool| lines.lines().filter(|l| f(l)).count();
    let roce = count(&|l| l.contains(":infiniband"));
    let tcp = count(&|l| l.contains(":tcp"));
    let pfc = count(&|l| l.contains("0x8808"));
    assert!(roce > 1000 && tcp > 1000, "roce {roce} tcp {tcp}");
    // Every PAUSE (and its RESUME) the switch decided to send is a frame on the wire.
    assert_eq!(pfc, pauses, "PFC frames in the pcap vs pause_sent records");
}

#[test]
fn trace_needs_an_output_and_a_known_scenario() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let out = Command::cargo_bin("rdmalab")
        .unwrap()
        .args(["trace", "lesson1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pcap"));
    let out = Command::cargo_bin("rdmalab")
        .unwrap()
        .args(["trace", "lesson9", "--trace"])
        .arg(dir.path().join("x.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lesson9"));
}
