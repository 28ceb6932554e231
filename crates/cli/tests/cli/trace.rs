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

/// Issue 24: a fat-tree permutation traced on 1, 2, 4 and 16 threads writes the same JSON
/// Lines, byte for byte, and says how it was split; with a pcap it stays on one thread and
/// says so, and the pcap decodes as RoCEv2.
#[test]
fn a_fat_tree_trace_is_the_same_file_on_one_two_four_and_sixteen_threads() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let file = format!(
        "{}/../../scenarios/fattree-permutation-128.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let trace = |threads: &str, pcap: bool| {
        let jsonl = dir.path().join(format!("ft128-{threads}.jsonl"));
        let mut cmd = Command::cargo_bin("rdmalab").unwrap();
        cmd.args([
            "trace",
            &file,
            "--set",
            "workload.message_bytes=32768",
            "--threads",
            threads,
            "--trace",
        ])
        .arg(&jsonl);
        if pcap {
            cmd.arg("--pcap").arg(dir.path().join("ft128.pcap"));
        }
        let out = cmd.assert().success().get_output().clone();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        (std::fs::read(&jsonl).unwrap(), err)
    };
    let (one, err) = trace("1", false);
    assert!(
        err.contains("128 of 128 flows completed; simulator: 1 thread"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&one);
    let mut last = (0u64, 0u64);
    let (mut stages, mut arrivals) = (0, 0);
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["path"], "rdma", "{l}");
        let node = v["node"].as_u64().or(v["host"].as_u64()).expect("a node");
        let at = (v["t_ps"].as_u64().unwrap(), node);
        assert!(at >= last, "not in (time, node) order: {l}");
        last = at;
        stages += usize::from(v["kind"] == "stage");
        arrivals += usize::from(v["kind"] == "packet" && v["event"] == "arrived");
    }
    // 128 flows of eight 4 KiB frames over 2 to 6 links each, and their ACKs.
    assert!(arrivals > 128 * 8 * 2, "{arrivals} arrivals");
    assert!(stages > 128 * 8, "{stages} stages");
    for t in ["2", "4", "16"] {
        let (many, err) = trace(t, false);
        assert!(
            err.contains(&format!("simulator: {t} threads, {t} partitions")),
            "{err}"
        );
        assert!(many == one, "--threads {t}: the trace differs");
    }
    let (with_pcap, err) = trace("2", true);
    assert!(
        err.contains("simulator: 1 thread: a pcap is written by a world on one thread"),
        "{err}"
    );
    assert!(
        with_pcap == one,
        "the trace of the run that wrote a pcap differs"
    );
    let Some(lines) = tshark_run::tshark(&[
        "-r",
        dir.path().join("ft128.pcap").to_str().unwrap(),
        "-Y",
        "infiniband.bth.opcode >= 6 && infiniband.bth.opcode <= 8",
        "-T",
        "fields",
        "-e",
        "infiniband.bth.psn",
    ]) else {
        return;
    };
    // RDMA WRITE First, Middle and Last, each frame at every link it crosses.
    let writes = lines.lines().count();
    assert!(
        writes >= 128 * 8 * 2,
        "{writes} RDMA WRITE frames in the pcap"
    );
}

/// A collective traced on 1 and 4 threads (an 8-host leaf-spine all-reduce over RDMA and
/// over TCP) writes the same JSON Lines; it writes no pcap and says so.
#[test]
fn a_collective_trace_is_the_same_file_on_one_and_four_threads() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let file = format!(
        "{}/../../scenarios/collective-allreduce-8.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    for transport in ["rdma", "tcp"] {
        let trace = |threads: &str| {
            let jsonl = dir.path().join(format!("c-{transport}-{threads}.jsonl"));
            let out = Command::cargo_bin("rdmalab")
                .unwrap()
                .args(["trace", &file, "--set", "workload.message_bytes=262144"])
                .args(["--set", &format!("collective.transport=\"{transport}\"")])
                .args(["--threads", threads, "--trace"])
                .arg(&jsonl)
                .assert()
                .success()
                .get_output()
                .clone();
            let err = String::from_utf8_lossy(&out.stderr).to_string();
            (std::fs::read_to_string(&jsonl).unwrap(), err)
        };
        let (one, err) = trace("1");
        assert!(err.contains("all_reduce over 8 hosts"), "{err}");
        assert!(err.contains("simulator: 1 thread"), "{err}");
        let tag = format!("\"path\":\"{transport}\"");
        assert!(
            one.lines().all(|l| l.contains(&tag)),
            "every record tagged {tag}"
        );
        let data = if transport == "rdma" {
            "roce_data"
        } else {
            "tcp"
        };
        assert!(
            one.lines()
                .any(|l| l.contains(&format!("\"class\":\"{data}\""))),
            "{data} frames in the trace"
        );
        let (four, err) = trace("4");
        assert!(err.contains("simulator: 4 threads, 4 partitions"), "{err}");
        assert!(four == one, "{transport}: the trace on 4 threads differs");
    }
    let out = Command::cargo_bin("rdmalab")
        .unwrap()
        .args(["trace", &file, "--pcap"])
        .arg(dir.path().join("c.pcap"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--pcap: a collective writes no capture"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
