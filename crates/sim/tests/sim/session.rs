//! Verbs sessions: every example in `scenarios/verbs/` passes under every NIC profile; the
//! parser names the line, column, key and what is allowed; the executor records failures,
//! skipped steps and "no completion" checks, and is deterministic.

use std::path::PathBuf;

use rdmalab::session::{self, Outcome, Report, RunOptions};
use rdmalab::verbs::NicProfile;

/// Examples that expect what real hardware does but that the simulator cannot produce yet
/// (scenarios/verbs/README.md lists them with the reason). None today.
const KNOWN_FAILING: &[&str] = &[];

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/verbs")
}

fn run_src(src: &str, profile: Option<NicProfile>) -> Report {
    let plan = session::parse(src).unwrap_or_else(|e| panic!("parse: {e}"));
    session::run(
        &plan,
        RunOptions {
            profile,
            ..RunOptions::default()
        },
    )
    .unwrap()
}

fn describe_failures(r: &Report) -> String {
    let mut s = String::new();
    for (step, c) in r.failures() {
        s.push_str(&format!(
            "\n  step {} (line {}) {}: {}: expected {}, got {}",
            step.index, step.line, step.text, c.what, c.expected, c.got
        ));
    }
    if let Some(a) = &r.aborted {
        s.push_str(&format!("\n  aborted: {a}"));
    }
    s
}

#[test]
fn every_example_passes_under_every_profile() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "expected the 20 example sessions, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if KNOWN_FAILING.contains(&name.as_str()) {
            continue;
        }
        let src = std::fs::read_to_string(path).unwrap();
        assert!(
            src.starts_with('#'),
            "{name} must open with a comment header saying what it teaches"
        );
        let plan = match session::parse(&src) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}:{e}"));
                continue;
            }
        };
        for profile in NicProfile::ALL {
            let r = session::run(
                &plan,
                RunOptions {
                    profile: Some(profile),
                    ..RunOptions::default()
                },
            )
            .unwrap();
            if !r.passed {
                failures.push(format!("{name} under {profile}:{}", describe_failures(&r)));
            }
            assert!(
                r.summary.expectations > r.summary.steps / 2,
                "{name} checks too little"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn same_session_same_report() {
    let src = std::fs::read_to_string(examples_dir().join("drop_nth.toml")).unwrap();
    let a = serde_json::to_value(run_src(&src, None)).unwrap();
    let b = serde_json::to_value(run_src(&src, None)).unwrap();
    assert_eq!(a, b);
}

// ---- parser errors: line, column, key, what is allowed ----

/// Two hosts and a connected pair; lines 1–8.
const HEAD: &str = r#"hosts = ["a", "b"]

[[step]]
call = "connect"
hosts = ["a", "b"]
pd = ["pd_a", "pd_b"]
cq = ["cq_a", "cq_b"]
qp = ["qp_a", "qp_b"]
"#;

fn parse_err(tail: &str) -> session::ParseError {
    let src = format!("{HEAD}{tail}");
    match session::parse(&src) {
        Ok(_) => panic!("parsed, but should not have:\n{src}"),
        Err(e) => e,
    }
}

#[track_caller]
fn assert_err(tail: &str, line: usize, column: usize, needles: &[&str]) {
    let e = parse_err(tail);
    assert_eq!((e.line, e.column), (line, column), "{e}");
    for n in needles {
        assert!(e.message.contains(n), "message lacks {n:?}: {e}");
    }
    assert!(
        e.to_string().starts_with(&format!("{line}:{column}: ")),
        "{e}"
    );
}

#[test]
fn unknown_key_names_the_key_and_the_allowed_ones() {
    assert_err(
        "\n[[step]]\ncall = \"run\"\nfor = \"10us\"\ncolour = \"red\"\n",
        13,
        1,
        &[
            "unknown key `colour`",
            "step 2 (run)",
            "allowed keys: call, expect, expect_no_completion, for",
        ],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect = { ret = \"ok\", wcs = [] }\n",
        13,
        24,
        &[
            "unknown key `wcs`",
            "`expect`",
            "allowed keys: bad_wr, completions",
        ],
    );
    let e = session::parse("hosts = [\"a\", \"b\"]\nprofiel = \"rxe\"\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 1), "{e}");
    assert!(e.message.contains("unknown key `profiel`"), "{e}");
    assert!(e.message.contains("profile"), "{e}");
}

/// The README's key reference is the parser's declarations as rendered, and what it says a
/// key allows is what the parser enforces.
#[test]
fn readme_key_reference() {
    let reference = session::parse::keys_markdown();
    let readme = std::fs::read_to_string(examples_dir().join("README.md")).unwrap();
    assert!(
        readme.contains(&reference),
        "scenarios/verbs/README.md's \"Every key\" section is stale; regenerate it from \
         rdmalab::session::parse::keys_markdown()"
    );
    // create_cq's `cqe`: the reference's range and default are the refusal's and the plan's.
    let row = "| `cqe` | integer, 0 to 2^23 | 16 | Entries asked for. |";
    assert!(reference.contains(row), "{reference}");
    assert_err(
        "\n[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_x\"\ncqe = 8388609\n",
        14,
        7,
        &["`cqe` is out of range: allowed 0..=8388608"],
    );
    let plan = session::parse(&format!(
        "{HEAD}\n[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_x\"\n"
    ))
    .unwrap();
    let cqe = plan.steps.iter().find_map(|s| match s.call {
        session::Call::CreateCq { cqe, .. } => Some(cqe),
        _ => None,
    });
    assert_eq!(cqe, Some(16));
}

#[test]
fn unknown_handle_lists_the_known_ones() {
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_x\"\n",
        12,
        6,
        &["unknown handle `cq_x` in `cq`", "a CQ wanted", "cq_a, cq_b"],
    );
    // A handle of the wrong kind.
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"pd_a\"\n",
        12,
        6,
        &["`cq` must name a CQ", "`pd_a` is a PD (defined at line 6)"],
    );
    // A handle used before the step that defines it.
    assert_err(
        "\n[[step]]\ncall = \"reg_mr\"\npd = \"pd_a\"\nbuf = \"later\"\nas = \"mr\"\n\n[[step]]\ncall = \"alloc\"\nhost = \"a\"\nas = \"later\"\nlen = 8\n",
        13,
        7,
        &["unknown handle `later`", "no earlier step defines it"],
    );
}

#[test]
fn bad_duration_shows_the_format() {
    assert_err(
        "\n[[step]]\ncall = \"run\"\nfor = \"10 parsecs\"\n",
        12,
        7,
        &[
            "bad duration \"10 parsecs\" for `for`",
            "unknown unit",
            "e.g. \"10us\"",
        ],
    );
    assert_err(
        "\n[[step]]\ncall = \"run\"\nfor = 10\n",
        12,
        7,
        &["`for` must be a duration string", "\"10us\""],
    );
    assert_err(
        "\n[[step]]\ncall = \"run\"\nfor = \"20s\"\n",
        12,
        7,
        &["too long", "10 s per step"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect_no_completion = \"1.0000001ns\"\n",
        13,
        24,
        &["finer than 1 ps"],
    );
}

#[test]
fn bad_opcode_flag_state_and_status_list_the_allowed_names() {
    assert_err(
        "\n[[step]]\ncall = \"post_send\"\nqp = \"qp_a\"\nopcode = \"SND\"\n",
        13,
        10,
        &[
            "unknown opcode `SND` in `opcode`",
            "SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD",
        ],
    );
    assert_err(
        "\n[[step]]\ncall = \"post_send\"\nqp = \"qp_a\"\nopcode = \"SEND\"\nflags = [\"SIGNALLED\"]\n",
        14,
        10,
        &[
            "unknown send flag `SIGNALLED`",
            "FENCE, SIGNALED, SOLICITED, INLINE",
        ],
    );
    assert_err(
        "\n[[step]]\ncall = \"modify_qp\"\nqp = \"qp_a\"\nstate = \"READY\"\nmask = [\"STATE\"]\n",
        13,
        9,
        &[
            "unknown QP state `READY`",
            "RESET, INIT, RTR, RTS, SQD, SQE, ERR",
        ],
    );
    assert_err(
        "\n[[step]]\ncall = \"modify_qp\"\nqp = \"qp_a\"\nstate = \"ERR\"\nmask = [\"STATE\", \"DEST_QP\"]\n",
        14,
        18,
        &["unknown mask bit `DEST_QP`", "DEST_QPN"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect.wc = [{ status = \"OK\" }]\n",
        13,
        25,
        &["unknown completion status `OK`", "SUCCESS", "WR_FLUSH_ERR"],
    );
    assert_err(
        "\n[[step]]\ncall = \"frobnicate\"\n",
        11,
        8,
        &["unknown call `frobnicate`", "alloc_pd", "read_memory"],
    );
}

#[test]
fn wrong_type_says_what_was_found() {
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nmax = \"many\"\n",
        13,
        7,
        &["`max` must be an integer, found string"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nmax = 1.5\n",
        13,
        7,
        &["`max` must be an integer, found float"],
    );
    assert_err(
        "\n[[step]]\ncall = \"create_qp\"\npd = \"pd_a\"\ncq = \"cq_a\"\nas = \"q\"\nsq_sig_all = \"yes\"\n",
        15,
        14,
        &["`sq_sig_all` must be true or false, found string"],
    );
}

#[test]
fn other_mistakes_are_located_too() {
    // Out of range.
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nmax = 0\n",
        13,
        7,
        &["`max` is out of range: allowed 1..=4096"],
    );
    // Invalid TOML.
    assert_err("\n[[step]\ncall = \"run\"\n", 10, 8, &["invalid TOML"]);
    // Unknown host, duplicate handle, per-profile table with a bad profile.
    assert_err(
        "\n[[step]]\ncall = \"alloc_pd\"\nhost = \"c\"\nas = \"x\"\n",
        12,
        8,
        &["unknown host `c`", "the hosts are: a, b"],
    );
    assert_err(
        "\n[[step]]\ncall = \"alloc_pd\"\nhost = \"a\"\nas = \"pd_a\"\n",
        13,
        6,
        &["handle `pd_a` is already defined at line 6"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect = { ret = { mlx5 = \"ok\", cx7 = \"ok\" } }\n",
        13,
        33,
        &["`cx7` is not a profile", "mlx5, rxe, ibta"],
    );
    // An expectation that does not apply to the call.
    assert_err(
        "\n[[step]]\ncall = \"run\"\nfor = \"1us\"\nexpect = { completions = 1 }\n",
        13,
        12,
        &["`expect.completions` does not apply to run"],
    );
    // A step without `call`.
    assert_err(
        "\n[[step]]\nfor = \"1us\"\n",
        10,
        1,
        &["step 2 has no `call`"],
    );
    // Missing remote for a WRITE.
    assert_err(
        "\n[[step]]\ncall = \"post_send\"\nqp = \"qp_a\"\nopcode = \"RDMA_WRITE\"\n",
        13,
        10,
        &["RDMA_WRITE needs `remote`", "out of band"],
    );
    // post_send on a UD QP without a destination.
    assert_err(
        "\n[[step]]\ncall = \"create_qp\"\npd = \"pd_a\"\ncq = \"cq_a\"\nas = \"ud\"\ntype = \"UD\"\n\n[[step]]\ncall = \"post_send\"\nqp = \"ud\"\nopcode = \"SEND\"\n",
        17,
        1,
        &["needs `ud`", "Q_Key"],
    );
    // A destination on a connected QP.
    assert_err(
        "\n[[step]]\ncall = \"post_send\"\nqp = \"qp_a\"\nopcode = \"SEND\"\nud = { qp = \"qp_b\", qkey = 1 }\n",
        10,
        1,
        &["`ud` is for UD QPs"],
    );
}

#[test]
fn limits_bound_time_size_and_steps() {
    let runs = "\n[[step]]\ncall = \"run\"\nfor = \"10s\"\n".repeat(4);
    assert_err(&runs, 24, 7, &["would reach 40 s", "at most 30 s"]);
    let big = format!("{HEAD}# {}\n", "x".repeat(session::limits::MAX_FILE_BYTES));
    let e = session::parse(&big).unwrap_err();
    assert!(e.message.contains("at most 1048576"), "{e}");
    assert_err(
        "\n[[step]]\ncall = \"alloc\"\nhost = \"a\"\nas = \"huge\"\nlen = 1073741824\n",
        14,
        7,
        &["`len` is out of range: allowed 1..=16777216"],
    );
}

// ---- the executor ----

#[test]
fn a_wrong_expectation_fails_with_expected_and_got() {
    let src =
        format!("{HEAD}\n[[step]]\ncall = \"query_qp\"\nqp = \"qp_a\"\nexpect.state = \"INIT\"\n");
    let r = run_src(&src, None);
    assert!(!r.passed);
    let fails: Vec<_> = r.failures().collect();
    assert_eq!(fails.len(), 1);
    let (step, c) = fails[0];
    assert_eq!((step.index, step.line), (2, 10));
    assert_eq!(
        (c.what.as_str(), c.expected.as_str(), c.got.as_str()),
        ("state(qp_a)", "INIT", "RTS")
    );
    assert_eq!((r.summary.failed, r.summary.passed), (1, 2));
}

#[test]
fn a_failed_call_without_expect_fails_and_its_handle_skips_later_steps() {
    // REMOTE_WRITE without LOCAL_WRITE: reg_mr gives EINVAL; nothing expected that, so the
    // implicit `ret = ok` fails, and the step that uses the MR cannot run.
    let src = format!(
        "{HEAD}
[[step]]
call = \"alloc\"
host = \"b\"
as = \"buf\"
len = 64

[[step]]
call = \"reg_mr\"
pd = \"pd_b\"
buf = \"buf\"
as = \"mr\"
access = [\"REMOTE_WRITE\"]

[[step]]
call = \"post_recv\"
qp = \"qp_b\"
sge = {{ mr = \"mr\" }}
"
    );
    let r = run_src(&src, None);
    assert!(!r.passed);
    let reg = &r.steps[2];
    match &reg.result {
        Outcome::Error {
            errno, code, text, ..
        } => {
            assert_eq!((errno.as_str(), *code), ("EINVAL", 22));
            assert!(text.contains("LOCAL_WRITE must be set too"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert!(reg.expectations[0].implicit && !reg.expectations[0].passed);
    let post = &r.steps[3];
    match &post.result {
        Outcome::Skipped { text, .. } => {
            assert!(
                text.contains("`mr` was not created (its step at line 16 failed)"),
                "{text}"
            )
        }
        other => panic!("{other:?}"),
    }
    // Saying the error is expected makes the reg_mr step pass.
    let fixed = src.replace(
        "access = [\"REMOTE_WRITE\"]",
        "access = [\"REMOTE_WRITE\"]\nexpect.ret = \"EINVAL\"",
    );
    let r = run_src(&fixed, None);
    assert!(r.steps[2].expectations.iter().all(|c| c.passed));
    assert!(!r.passed, "the post_recv step is still skipped");
}

#[test]
fn no_completion_is_checked_over_simulated_time() {
    // A WRITE completes within 100 µs, so "no completion" fails; the time still passes.
    let src = format!(
        "{HEAD}
[[step]]
call = \"alloc\"
host = \"a\"
as = \"src\"
len = 64

[[step]]
call = \"reg_mr\"
pd = \"pd_a\"
buf = \"src\"
as = \"mr_a\"
access = [\"LOCAL_WRITE\", \"REMOTE_WRITE\"]

[[step]]
call = \"post_send\"
qp = \"qp_a\"
opcode = \"RDMA_WRITE\"
flags = [\"SIGNALED\"]
sge = {{ mr = \"mr_a\", len = 8 }}
remote = {{ mr = \"mr_a\", offset = 32 }}
expect_no_completion = \"100us\"
"
    );
    let r = run_src(&src, None);
    let c = r.steps[3].expectations.last().unwrap();
    assert!(
        c.what.starts_with("no completion within 100 µs (cq_a)"),
        "{c:?}"
    );
    assert!(!c.passed);
    assert_eq!(c.got, "cq_a gained 1");
    // The session ran 100 µs past the post (setup verbs before it took their own time).
    assert_eq!(r.end_time_ps, r.steps[3].time_ps + 100_000_000);
}

#[test]
fn report_serialises_with_the_documented_fields() {
    let src = std::fs::read_to_string(examples_dir().join("send.toml")).unwrap();
    let v = serde_json::to_value(run_src(&src, None)).unwrap();
    for k in [
        "profile",
        "topology",
        "hosts",
        "passed",
        "aborted",
        "end_time_ps",
        "summary",
        "steps",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    let step = &v["steps"][7];
    for k in [
        "index",
        "line",
        "time_ps",
        "host",
        "call",
        "text",
        "result",
        "notes",
        "expectations",
    ] {
        assert!(step.get(k).is_some(), "missing steps[].{k}");
    }
    assert_eq!(step["call"], "poll_cq");
    assert_eq!(step["result"]["kind"], "completions");
    let wc = &step["result"]["completions"][0];
    assert_eq!(wc["status"], "SUCCESS");
    assert_eq!(wc["status_str"], "success");
    assert_eq!(wc["opcode"], "SEND");
    let e = &step["expectations"][0];
    for k in ["what", "expected", "got", "passed", "implicit"] {
        assert!(e.get(k).is_some(), "missing expectations[].{k}");
    }
}

#[test]
fn a_budget_stops_the_session_and_names_itself() {
    let src = std::fs::read_to_string(examples_dir().join("rnr.toml")).unwrap();
    let plan = session::parse(&src).unwrap();
    let r = session::run(
        &plan,
        RunOptions {
            max_events: Some(50),
            ..RunOptions::default()
        },
    )
    .unwrap();
    assert!(!r.passed);
    let why = r.aborted.as_deref().unwrap();
    assert!(why.contains("stopped at step"), "{why}");
    assert!(why.contains("used up its budget of 50 events"), "{why}");
    let last = r.steps.last().unwrap();
    assert!(
        matches!(last.result, Outcome::Failed { .. }),
        "{:?}",
        last.result
    );
    assert!(r.steps.len() < plan.steps.len());
}

/// Each step records the objects after it and the frames it put on the wire; the frame the
/// drop rule took is marked, and the resend and the NAK that recovered it follow.
#[test]
fn steps_record_queues_completions_and_frames() {
    let src = std::fs::read_to_string(examples_dir().join("drop_nth.toml")).unwrap();
    let r = run_src(&src, None);
    assert!(r.passed);
    // After connect: two QPs in RTS with empty queues, two empty CQs.
    let first = &r.steps[0].state;
    assert_eq!(first.qps.len(), 2);
    assert!(
        first
            .qps
            .iter()
            .all(|q| q.state == "RTS" && q.sq.is_empty())
    );
    assert_eq!(first.cqs.len(), 2);
    // The connect step's frames are the out-of-band exchange over TCP.
    assert!(r.steps[0].frames.iter().any(|f| f.kind == "tcp"));
    let frames: Vec<_> = r.steps.iter().flat_map(|s| &s.frames).collect();
    let roce: Vec<_> = frames.iter().filter(|f| f.kind == "roce").collect();
    let dropped: Vec<_> = roce.iter().filter(|f| f.dropped).collect();
    assert_eq!(dropped.len(), 1, "{roce:#?}");
    let lost = dropped[0];
    assert!(lost.opcode.contains("RDMA_WRITE"), "{}", lost.opcode);
    assert_eq!((lost.src.as_str(), lost.dst.as_str()), ("a", "b"));
    // The responder NAKs the gap and the same PSN goes again.
    assert!(
        roce.iter()
            .any(|f| f.src == "b" && f.opcode.starts_with("NAK"))
    );
    assert!(
        roce.iter()
            .filter(|f| f.psn == lost.psn && f.src == "a")
            .count()
            >= 2
    );
    // Every packet of the WRITE, its resend, and the NAK and ACK that answer it belong to
    // the one WR the session posted; the exchange's TCP frames to none.
    let wr = r
        .steps
        .iter()
        .find_map(|s| match &s.result {
            Outcome::Completions { completions } => completions.first().map(|c| c.wr_id),
            _ => None,
        })
        .expect("the example polls its completion");
    assert!(roce.iter().all(|f| f.wr_id == Some(wr)), "{roce:#?}");
    assert!(
        frames
            .iter()
            .filter(|f| f.kind == "tcp")
            .all(|f| f.wr_id.is_none())
    );
    // Frames are in time order within each step.
    for s in &r.steps {
        assert!(s.frames.windows(2).all(|w| w[0].t_ps <= w[1].t_ps));
    }
    // A posted WR shows in the SQ until it completes, and its CQE waits in the CQ until
    // polled.
    let post = r
        .steps
        .iter()
        .position(|s| s.call == "post_send")
        .expect("the example posts");
    let qa = r.steps[post]
        .state
        .qps
        .iter()
        .find(|q| q.name == "qp_a")
        .unwrap();
    assert_eq!(qa.sq.len(), 1);
    assert_eq!(qa.sq[0].opcode, "RDMA_WRITE");
    let mr = &r.steps[post].state.mrs;
    assert!(
        mr.iter()
            .any(|m| m.access.contains(&"REMOTE_WRITE".to_string()))
    );
}

/// The model the playground draws is the table `modify_qp` checks.
#[test]
fn the_model_serialises_the_state_table() {
    let m = serde_json::to_value(session::model::model()).unwrap();
    let t = m["transitions"].as_array().unwrap();
    assert!(t.iter().any(|x| {
        x["from"] == "RTR"
            && x["to"] == "RTS"
            && x["rc"]["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b == "SQ_PSN")
    }));
    assert_eq!(m["wc_status"].as_array().unwrap().len(), 22);
}

/// A READ: its request and every response packet name the READ's WR.
#[test]
fn frames_name_the_work_request_they_belong_to() {
    let src = std::fs::read_to_string(examples_dir().join("read.toml")).unwrap();
    let r = run_src(&src, None);
    assert!(r.passed);
    let roce: Vec<_> = r
        .steps
        .iter()
        .flat_map(|s| &s.frames)
        .filter(|f| f.kind == "roce")
        .collect();
    assert!(!roce.is_empty());
    assert!(roce.iter().all(|f| f.wr_id.is_some()), "{roce:#?}");
    // READ responses carry the READ's WR.
    let req = roce
        .iter()
        .find(|f| f.opcode.contains("READ_REQUEST"))
        .expect("a READ request");
    assert!(
        roce.iter()
            .filter(|f| f.opcode.contains("READ_RESPONSE"))
            .all(|f| f.wr_id == req.wr_id)
    );
}

/// Three WRITEs go out, the QP is reset and brought up again counting PSNs from 0, and a
/// fourth WRITE goes: every frame names the WR it carries or answers, the fourth's packets
/// included (its PSNs are the ones the first WRs used). The example is `reset_discards.toml`
/// with time to send before the reset.
#[test]
fn frames_keep_their_work_requests_across_a_reset() {
    let src = std::fs::read_to_string(examples_dir().join("reset_discards.toml")).unwrap();
    // Let WRs 1–3 leave before the reset (the example resets at once, so none do).
    let src = src.replacen(
        "[[step]]\ncall = \"modify_qp\"\nqp = \"qp_a\"\nstate = \"RESET\"",
        "[[step]]\ncall = \"run\"\nfor = \"20us\"\n\n[[step]]\ncall = \"modify_qp\"\nqp = \"qp_a\"\nstate = \"RESET\"",
        1,
    );
    assert!(
        src.contains("for = \"20us\""),
        "the example changed: adapt this test"
    );
    let r = run_src(&src, None);
    let reset = r
        .steps
        .iter()
        .position(|s| s.text.contains("RESET"))
        .expect("a reset step");
    let roce = |range: std::ops::Range<usize>| -> Vec<_> {
        r.steps[range]
            .iter()
            .flat_map(|s| &s.frames)
            .filter(|f| f.kind == "roce")
            .cloned()
            .collect()
    };
    let before = roce(0..reset);
    let after = roce(reset..r.steps.len());
    // Before: three WRITE ONLYs with consecutive PSNs and wr_ids 1, 2, 3, each ACK naming
    // the WR it acknowledges.
    let writes: Vec<_> = before.iter().filter(|f| f.src == "a").collect();
    assert_eq!(
        writes.iter().map(|f| f.wr_id).collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3)],
        "{before:#?}"
    );
    for ack in before.iter().filter(|f| f.src == "b") {
        let w = writes.iter().rev().find(|w| w.psn <= ack.psn).unwrap();
        assert_eq!(ack.wr_id, w.wr_id, "{ack:?}");
    }
    // After: PSN 0 again, and every packet is WR 4's.
    assert!(!after.is_empty());
    assert!(after.iter().all(|f| f.wr_id == Some(4)), "{after:#?}");
    assert!(after.iter().any(|f| f.src == "a" && f.psn == Some(0)));
}

// ---- teardown ----

/// The errno a step returned, or "ok".
fn ret_of(r: &Report, i: usize) -> String {
    match &r.steps[i].result {
        Outcome::Error { errno, .. } => errno.clone(),
        Outcome::Ok { .. } | Outcome::Completions { .. } => "ok".to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn destroying_in_use_objects_is_ebusy_and_changes_nothing() {
    let src = format!(
        "{HEAD}
[[step]]
call = \"alloc\"
host = \"a\"
as = \"buf\"
len = 64

[[step]]
call = \"reg_mr\"
pd = \"pd_a\"
buf = \"buf\"
as = \"mr\"

[[step]]
call = \"dealloc_pd\"
pd = \"pd_a\"
expect.ret = \"EBUSY\"

[[step]]
call = \"destroy_cq\"
cq = \"cq_a\"
expect.ret = \"EBUSY\"

[[step]]
call = \"destroy_qp\"
qp = \"qp_a\"

[[step]]
call = \"dealloc_pd\"
pd = \"pd_a\"
expect.ret = \"EBUSY\"

[[step]]
call = \"destroy_cq\"
cq = \"cq_a\"

[[step]]
call = \"dereg_mr\"
mr = \"mr\"

[[step]]
call = \"dealloc_pd\"
pd = \"pd_a\"
"
    );
    for p in NicProfile::ALL {
        let r = run_src(&src, Some(p));
        assert!(r.passed, "{p}:{}", describe_failures(&r));
        let rets: Vec<String> = (3..10).map(|i| ret_of(&r, i)).collect();
        assert_eq!(
            rets,
            ["EBUSY", "EBUSY", "ok", "EBUSY", "ok", "ok", "ok"],
            "{p}"
        );
        match &r.steps[3].result {
            Outcome::Error { code, text, .. } => {
                assert_eq!(*code, 16);
                assert!(text.contains("still used by 2 MR(s)/QP(s)"), "{text}");
            }
            other => panic!("{other:?}"),
        }
        // A refused destroy leaves the object where it was: the CQ is still listed, and
        // disappears only when destroyed.
        assert!(r.steps[4].state.cqs.iter().any(|c| c.name == "cq_a"));
        assert!(!r.steps[5].state.qps.iter().any(|q| q.name == "qp_a"));
        assert!(!r.steps[7].state.cqs.iter().any(|c| c.name == "cq_a"));
        assert!(r.steps[7].state.mrs.iter().any(|m| m.name == "mr"));
        assert!(!r.steps[8].state.mrs.iter().any(|m| m.name == "mr"));
        // Each successful destroy is a control-path verb: it takes time.
        assert!(r.steps[6].time_ps > r.steps[5].time_ps, "{p}");
    }
}

#[test]
fn a_destroyed_handle_cannot_be_used_again() {
    let src = format!(
        "{HEAD}
[[step]]
call = \"destroy_qp\"
qp = \"qp_b\"

[[step]]
call = \"query_qp\"
qp = \"qp_b\"

[[step]]
call = \"destroy_qp\"
qp = \"qp_b\"
"
    );
    let r = run_src(&src, None);
    assert!(!r.passed);
    for i in [2, 3] {
        match &r.steps[i].result {
            Outcome::Skipped { text, .. } => assert!(
                text.contains("`qp_b` was freed by step 2 (line 10, destroy_qp)")
                    && text.contains("dangling"),
                "{text}"
            ),
            other => panic!("step {}: {other:?}", i + 1),
        }
        assert!(!r.steps[i].expectations[0].passed);
    }
}

#[test]
fn a_destroyed_peer_qp_drops_what_arrives_and_the_sender_times_out() {
    // b's QP is destroyed while a's SEND is on its way: b's NIC drops the request (no QP
    // with that number), a resends until retry_cnt runs out.
    let src = format!(
        "{HEAD}
[[step]]
call = \"alloc\"
host = \"a\"
as = \"buf\"
len = 64

[[step]]
call = \"reg_mr\"
pd = \"pd_a\"
buf = \"buf\"
as = \"mr\"

[[step]]
call = \"destroy_qp\"
qp = \"qp_b\"

[[step]]
call = \"post_send\"
qp = \"qp_a\"
wr_id = 7
opcode = \"SEND\"
flags = [\"SIGNALED\"]
sge = {{ mr = \"mr\", len = 8 }}

[[step]]
call = \"poll_cq\"
cq = \"cq_a\"
wait = \"1s\"
expect.wc = [{{ wr_id = 7, status = \"RETRY_EXC_ERR\" }}]
expect.qp_states = {{ qp_a = \"ERR\", qp_b = \"RTS\" }}
"
    );
    let r = run_src(&src, None);
    let poll = &r.steps[5];
    assert!(
        poll.expectations
            .iter()
            .filter(|c| c.what.starts_with("wc"))
            .all(|c| c.passed),
        "{}",
        describe_failures(&r)
    );
    let st = poll
        .expectations
        .iter()
        .find(|c| c.what == "state(qp_b)")
        .unwrap();
    assert_eq!(st.got, "no such QP (destroyed)");
    // Every RoCE frame is a's request to b; nothing came back.
    let roce: Vec<_> = poll.frames.iter().filter(|f| f.kind == "roce").collect();
    assert!(roce.iter().all(|f| f.src == "a"), "{roce:?}");
    assert!(roce.len() >= 2, "the SEND was resent: {roce:?}");
}

#[test]
fn teardown_calls_name_their_handle_kind() {
    assert_err(
        "\n[[step]]\ncall = \"destroy_cq\"\ncq = \"qp_a\"\n",
        12,
        6,
        &["`cq` must name a CQ, but `qp_a` is a QP"],
    );
    assert_err("\n[[step]]\ncall = \"dereg_mr\"\n", 10, 1, &["`mr`"]);
    assert_err(
        "\n[[step]]\ncall = \"dealloc_pd\"\npd = \"pd_a\"\nhost = \"b\"\n",
        13,
        8,
        &["`host` = \"b\", but the step's handles live on host a"],
    );
}

// ---- completion channels ----

/// `HEAD` with b's CQ on a completion channel, a 64-byte MR on each side and b's receives
/// posted; lines 1–40.
const CHANNEL_HEAD: &str = r#"hosts = ["a", "b"]

[[step]]
call = "create_comp_channel"
host = "b"
as = "ch"

[[step]]
call = "connect"
hosts = ["a", "b"]
pd = ["pd_a", "pd_b"]
cq = ["cq_a", "cq_b"]
qp = ["qp_a", "qp_b"]
channel = { b = "ch" }

[[step]]
call = "alloc"
host = "a"
as = "buf_a"
len = 64

[[step]]
call = "reg_mr"
pd = "pd_a"
buf = "buf_a"
as = "mr_a"

[[step]]
call = "alloc"
host = "b"
as = "buf_b"
len = 64

[[step]]
call = "reg_mr"
pd = "pd_b"
buf = "buf_b"
as = "mr_b"
access = ["LOCAL_WRITE"]
"#;

#[test]
fn get_cq_event_blocks_until_the_wake_up_and_unacked_events_keep_the_cq() {
    let src = format!(
        "{CHANNEL_HEAD}
[[step]]
call = \"req_notify_cq\"
cq = \"cq_b\"

[[step]]
call = \"post_recv\"
qp = \"qp_b\"
wr_id = 9
sge = {{ mr = \"mr_b\" }}

[[step]]
call = \"post_send\"
qp = \"qp_a\"
opcode = \"SEND\"
sge = {{ mr = \"mr_a\", len = 8 }}

[[step]]
call = \"get_cq_event\"
channel = \"ch\"
wait = \"1ms\"
expect.event = {{ cq = \"cq_b\" }}

[[step]]
call = \"destroy_qp\"
qp = \"qp_b\"

[[step]]
call = \"destroy_comp_channel\"
channel = \"ch\"
expect.ret = \"EBUSY\"

[[step]]
call = \"destroy_cq\"
cq = \"cq_b\"
expect.ret = \"EBUSY\"

[[step]]
call = \"ack_cq_events\"
cq = \"cq_b\"
n = 2
expect.ret = \"EINVAL\"

[[step]]
call = \"ack_cq_events\"
cq = \"cq_b\"

[[step]]
call = \"destroy_cq\"
cq = \"cq_b\"

[[step]]
call = \"destroy_comp_channel\"
channel = \"ch\"
"
    );
    for p in NicProfile::ALL {
        let r = run_src(&src, Some(p));
        assert!(r.passed, "{p}:{}", describe_failures(&r));
        let ev = &r.steps[9];
        // It returned after the SEND crossed the wire, its CQE, the interrupt and the wake-up.
        assert!(
            ev.notes[0].starts_with("blocked for "),
            "{p}: {:?}",
            ev.notes
        );
        assert!(r.steps[10].time_ps > ev.time_ps + 1_000_000, "{p}");
        match &r.steps[12].result {
            Outcome::Error { text, .. } => {
                assert!(
                    text.contains("not acknowledged with ack_cq_events"),
                    "{text}"
                )
            }
            other => panic!("{other:?}"),
        }
        let cq = |i: usize| {
            r.steps[i]
                .state
                .cqs
                .iter()
                .find(|c| c.name == "cq_b")
                .and_then(|c| c.notify.clone())
                .map(|n| (n.armed, n.events_unacked))
        };
        assert_eq!(cq(6), Some((Some("any".to_string()), 0)), "{p}: armed");
        assert_eq!(cq(9), Some((None, 1)), "{p}: the arm is used up");
        assert_eq!(cq(14), Some((None, 0)), "{p}");
        assert!(r.steps[16].state.channels.is_empty(), "{p}: closed");
    }
}

#[test]
fn a_flush_raises_the_event_and_an_unarmed_cq_raises_none() {
    let src = format!(
        "{CHANNEL_HEAD}
[[step]]
call = \"post_recv\"
qp = \"qp_b\"
wr_id = 9
sge = {{ mr = \"mr_b\" }}

[[step]]
call = \"modify_qp\"
qp = \"qp_b\"
state = \"ERR\"
mask = [\"STATE\"]

[[step]]
call = \"get_cq_event\"
channel = \"ch\"
wait = \"100us\"
expect.ret = \"EAGAIN\"

[[step]]
call = \"req_notify_cq\"
cq = \"cq_b\"
solicited_only = true

[[step]]
call = \"post_recv\"
qp = \"qp_b\"
wr_id = 10
sge = {{ mr = \"mr_b\" }}

[[step]]
call = \"get_cq_event\"
channel = \"ch\"
wait = \"100us\"
expect.event = {{ cq = \"cq_b\" }}

[[step]]
call = \"poll_cq\"
cq = \"cq_b\"
expect.wc = [{{ wr_id = 9, status = \"WR_FLUSH_ERR\" }}, {{ wr_id = 10, status = \"WR_FLUSH_ERR\" }}]
"
    );
    for p in NicProfile::ALL {
        let r = run_src(&src, Some(p));
        assert!(r.passed, "{p}:{}", describe_failures(&r));
        // Not armed: the first flush raised nothing, and the call waited the whole 100 µs.
        assert_eq!(r.steps[9].time_ps - r.steps[8].time_ps, 100_000_000, "{p}");
        match &r.steps[8].result {
            Outcome::Error { code, .. } => assert_eq!(*code, 11),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn notify_without_a_channel_follows_the_profile() {
    let src = format!(
        "{HEAD}
[[step]]
call = \"req_notify_cq\"
cq = \"cq_a\"
expect.ret = {{ mlx5 = \"ok\", rxe = \"ok\", ibta = \"EINVAL\" }}
"
    );
    for p in NicProfile::ALL {
        let r = run_src(&src, Some(p));
        assert!(r.passed, "{p}:{}", describe_failures(&r));
    }
}

#[test]
fn channel_keys_are_checked() {
    assert_err(
        "\n[[step]]\ncall = \"get_cq_event\"\nchannel = \"ch\"\n",
        12,
        11,
        &["unknown handle `ch`", "a completion channel"],
    );
    assert_err(
        "\n[[step]]\ncall = \"create_comp_channel\"\nhost = \"a\"\nas = \"ch\"\n\n[[step]]\ncall = \"create_cq\"\nhost = \"b\"\nas = \"cq\"\nchannel = \"ch\"\n",
        19,
        11,
        &["`channel` = `ch` lives on host a, but the CQ is on host b"],
    );
    assert_err(
        "\n[[step]]\ncall = \"create_comp_channel\"\nhost = \"a\"\nas = \"ch\"\n\n[[step]]\ncall = \"get_cq_event\"\nchannel = \"ch\"\n",
        15,
        1,
        &["needs the key `wait`"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect.event = { cq = \"cq_a\" }\n",
        13,
        8,
        &["`expect.event` does not apply to poll_cq"],
    );
    assert_err(
        "\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nexpect.sq_draining = true\n",
        13,
        8,
        &["`expect.sq_draining` does not apply to poll_cq: only query_qp reports sq_draining"],
    );
    assert_err(
        "\n[[step]]\ncall = \"req_notify_cq\"\ncq = \"cq_a\"\nsolicited_only = 1\n",
        13,
        18,
        &["`solicited_only` must be true or false"],
    );
}

#[test]
fn retransmission_keys_are_checked() {
    assert_err(
        "retransmission = \"sack\"\n",
        9,
        18,
        &["unknown `retransmission` `sack`", "go_back_n, selective"],
    );
    assert_err(
        "window = 16\n",
        9,
        10,
        &[
            "`window` caps selective repeat",
            "retransmission = \"selective\"",
        ],
    );
    assert_err(
        "retransmission = \"selective\"\nwindow = 0\n",
        10,
        10,
        &["`window` is out of range: allowed 1..=16384"],
    );
}

/// The request PSNs a step's frames carry, in order (ACKs and NAKs left out).
fn request_psns(r: &Report, steps: std::ops::Range<usize>) -> Vec<u32> {
    r.steps[steps]
        .iter()
        .flat_map(|s| &s.frames)
        .filter(|f| f.src == "a" && f.kind == "roce")
        .filter_map(|f| f.psn)
        .collect()
}

#[test]
fn selective_repeat_resends_only_the_lost_psn() {
    let src = std::fs::read_to_string(examples_dir().join("selective.toml")).unwrap();
    let r = run_src(&src, None);
    assert!(r.passed, "{}", describe_failures(&r));
    assert_eq!(request_psns(&r, 6..10), [0, 1, 2, 3, 4, 5, 6, 7, 1]);
    let naks: Vec<_> = r.steps[7]
        .frames
        .iter()
        .filter_map(|f| f.sack.as_ref().map(|s| (f.psn, s.trigger, s.held.len())))
        .collect();
    // One NAK per packet past the gap, each naming PSN 1 and holding one more.
    let want: Vec<_> = (2..8).map(|t| (Some(1), t, t as usize - 1)).collect();
    assert_eq!(naks, want);
    // The same file with go-back-N is drop_nth: PSNs 1 to 7 again.
    let gbn = src.replace("retransmission = \"selective\"", "");
    let r = run_src(&gbn.replace("for = \"2800ns\"", "for = \"100us\""), None);
    let psns = request_psns(&r, 6..10);
    assert_eq!(psns[8..], [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn selective_repeat_is_per_connection() {
    // A selective pair first, then selective.toml's own pair with the default: the world's
    // setting is put back after the first connect, so the WRITE goes back N.
    let src = std::fs::read_to_string(examples_dir().join("selective.toml")).unwrap();
    let first = "[[step]]\ncall = \"connect\"\n";
    let extra = "[[step]]\ncall = \"connect\"\nhosts = [\"a\", \"b\"]\npd = [\"pd_s\", \"pd_t\"]\n\
                 cq = [\"cq_s\", \"cq_t\"]\nqp = [\"qp_s\", \"qp_t\"]\n\
                 retransmission = \"selective\"\nwindow = 16\n\n";
    let src = src
        .replacen(first, &format!("{extra}{first}"), 1)
        .replace("retransmission = \"selective\"\n\n", "\n");
    let r = run_src(&src, None);
    match &r.steps[0].result {
        Outcome::Ok { text, .. } => assert!(text.ends_with("at most 16 PSNs in flight"), "{text}"),
        other => panic!("{other:?}"),
    }
    match &r.steps[1].result {
        Outcome::Ok { text, .. } => assert!(text.ends_with("both RTS"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(request_psns(&r, 7..11)[8..], [1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn an_acknowledged_async_event_lets_the_qp_go() {
    // async_events.toml under mlx5: EBUSY before the ack, then destroy_qp succeeds.
    let src = std::fs::read_to_string(examples_dir().join("async_events.toml")).unwrap();
    let src =
        format!("{src}\n[[step]]\ncall = \"destroy_qp\"\nqp = \"qp_b\"\nexpect.ret = \"ok\"\n");
    let r = run_src(&src, Some(NicProfile::Mlx5));
    assert!(r.passed, "{}", describe_failures(&r));
    assert!(
        format!("{:?}", r.steps[25].result).contains("EBUSY"),
        "{:?}",
        r.steps[25].result
    );
}
