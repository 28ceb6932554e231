//! `rdmalab verbs run`: exit codes 0/1/2, the `--json` document, `--pcap` and `--profile`,
//! and the older commands still in place.

use std::path::PathBuf;

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin_cmd;

fn rdmalab() -> Command {
    cargo_bin_cmd!("rdmalab")
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/verbs")
        .join(name)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const WRONG: &str = r#"# A session whose expectation is wrong.
hosts = ["a", "b"]

[[step]]
call = "connect"
hosts = ["a", "b"]
pd = ["pd_a", "pd_b"]
cq = ["cq_a", "cq_b"]
qp = ["qp_a", "qp_b"]

[[step]]
call = "query_qp"
qp = "qp_b"
expect.state = "RTR"
"#;

#[test]
fn a_passing_session_exits_0_and_lists_every_step() {
    let out = rdmalab()
        .args(["verbs", "run"])
        .arg(example("send.toml"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("profile mlx5"), "{text}");
    assert!(text.contains("[  7]"), "{text}");
    assert!(
        text.contains("post_send(qp_a, [SEND wr_id 1 SIGNALED"),
        "{text}"
    );
    assert!(
        text.contains("wc wr_id 1 SUCCESS (success), opcode SEND"),
        "{text}"
    );
    assert!(
        text.contains("✓ memory(inbox+0): \"hello, RDMA\""),
        "{text}"
    );
    assert!(text.contains("PASS: 10 steps"), "{text}");
}

#[test]
fn a_failed_expectation_exits_1_and_says_which() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("wrong.toml");
    std::fs::write(&path, WRONG).unwrap();
    let out = rdmalab()
        .args(["verbs", "run"])
        .arg(&path)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("✗ state(qp_b): expected RTR, got RTS"),
        "{text}"
    );
    assert!(text.contains("FAIL: 1 of 3 expectations failed"), "{text}");
    assert!(
        text.contains("wrong.toml:11: step 2 (query_qp) state(qp_b): expected RTR, got RTS"),
        "{text}"
    );
    // In JSON mode the document says passed: false and stderr says why the status is 1.
    let out = rdmalab()
        .args(["verbs", "run", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["passed"], false);
    assert!(
        stderr(&out).contains("step 2 state(qp_b): expected RTR, got RTS"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_malformed_file_exits_2_with_file_line_column() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("malformed.toml");
    std::fs::write(
        &path,
        WRONG.replace("call = \"query_qp\"", "call = \"query_qp\"\nqpn = 3"),
    )
    .unwrap();
    let out = rdmalab()
        .args(["verbs", "run"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let want = format!(
        "{}:13:1: unknown key `qpn` in step 2 (query_qp); allowed keys:",
        path.display()
    );
    assert!(err.starts_with(&want), "{err}");
    assert!(stdout(&out).is_empty());
    // A missing file and a bad flag are bad input too.
    let out = rdmalab()
        .args(["verbs", "run", "/nonexistent/session.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("/nonexistent/session.toml: "));
    let out = rdmalab()
        .args(["verbs", "run", "--profile", "cx7"])
        .arg(example("send.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn json_has_the_documented_fields() {
    let out = rdmalab()
        .args(["verbs", "run", "--json"])
        .arg(example("rnr.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["passed"], true);
    assert_eq!(doc["profile"], "mlx5");
    assert_eq!(doc["topology"], "back_to_back");
    assert!(doc["file"].as_str().unwrap().ends_with("rnr.toml"));
    assert_eq!(doc["hosts"], serde_json::json!(["a", "b"]));
    assert!(doc["aborted"].is_null());
    let summary = &doc["summary"];
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["expectations"], summary["passed"]);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(summary["steps"], steps.len());
    let mut last_time = 0;
    for s in steps {
        for k in [
            "index",
            "line",
            "time_ps",
            "call",
            "text",
            "result",
            "notes",
            "expectations",
        ] {
            assert!(s.get(k).is_some(), "step lacks {k}: {s}");
        }
        let t = s["time_ps"].as_u64().unwrap();
        assert!(t >= last_time, "time goes forward");
        last_time = t;
        let kind = s["result"]["kind"].as_str().unwrap();
        assert!(
            ["ok", "error", "completions", "skipped", "failed"].contains(&kind),
            "{kind}"
        );
        for c in s["expectations"].as_array().unwrap() {
            for k in ["what", "expected", "got", "passed", "implicit"] {
                assert!(c.get(k).is_some(), "expectation lacks {k}: {c}");
            }
        }
    }
    // The RNR failure, with the ibv status string.
    let wc = steps
        .iter()
        .filter(|s| s["result"]["kind"] == "completions")
        .flat_map(|s| s["result"]["completions"].as_array().unwrap())
        .find(|w| w["wr_id"] == 1)
        .unwrap();
    assert_eq!(wc["status"], "RNR_RETRY_EXC_ERR");
    assert_eq!(wc["status_str"], "RNR retry counter exceeded");
    assert!(wc["opcode"].is_null(), "not valid in an error completion");
    assert_eq!(wc["qp"], "qp_a");
}

#[test]
fn profile_flag_overrides_the_file() {
    let out = rdmalab()
        .args(["verbs", "run", "--json", "--profile", "rxe"])
        .arg(example("post_before_rts.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["profile"], "rxe");
    let post = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["call"] == "post_send")
        .unwrap();
    assert_eq!(post["result"]["kind"], "error");
    assert_eq!(post["result"]["errno"], "EINVAL");
    assert_eq!(post["result"]["code"], 22);
    assert!(
        post["result"]["text"]
            .as_str()
            .unwrap()
            .contains("QP is in RTR, must be RTS"),
        "{post}"
    );
}

#[test]
fn pcap_holds_the_frames() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("write.pcap");
    let out = rdmalab()
        .args(["verbs", "run", "--pcap"])
        .arg(&path)
        .arg(example("drop_nth.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut r = wire::PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let mut frames = 0;
    while r.next_record().unwrap().is_some() {
        frames += 1;
    }
    // 8 WRITE packets, a NAK, the go-back-N resends and the final ACK.
    assert!(frames >= 10, "{frames} frames");
    // Issue 21: a pcap path that cannot be created is an I/O failure (exit 1) naming it.
    let out = rdmalab()
        .args(["verbs", "run", "--pcap", "/nonexistent/dir/x.pcap"])
        .arg(example("send.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/nonexistent/dir/x.pcap"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn help_lists_verbs_and_demo_still_runs() {
    let out = rdmalab().arg("--help").output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("verbs") && text.contains("demo"), "{text}");
    let out = rdmalab()
        .args(["demo", "--senders", "2", "--kib", "16"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("2→1 incast"));
    let out = rdmalab().args(["demo", "--gbps", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
