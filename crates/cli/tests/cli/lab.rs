//! `rdmalab lab`: the list, a run as tables and as JSON, and bad input (exit 2, naming the
//! parameter and what is allowed).

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin_cmd;

fn rdmalab() -> Command {
    cargo_bin_cmd!("rdmalab")
}

#[test]
fn list_names_every_lab_and_its_parameters() {
    let out = rdmalab().args(["lab", "list"]).output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for id in [
        "incast",
        "hol",
        "storm",
        "deadlock",
        "loss",
        "qps",
        "trouble",
        "nvmf",
        "allreduce",
    ] {
        assert!(s.lines().any(|l| l == id), "{id} missing:\n{s}");
    }
    assert!(
        s.contains("--set fix=  none|watchdog (default none)"),
        "{s}"
    );
}

#[test]
fn a_lab_runs_as_tables_and_as_json() {
    let out = rdmalab()
        .args(["lab", "deadlock", "--set", "duration_us=1000"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    let row = s
        .lines()
        .find(|l| l.contains("deadlocked"))
        .unwrap_or_else(|| panic!("no deadlocked row:\n{s}"));
    assert!(row.contains("true"), "{row}");
    assert!(s.contains("ring links paused"), "{s}");

    let out = rdmalab()
        .args(["lab", "trouble", "--set", "case=mtu", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["lab"], "trouble");
    assert_eq!(v["verdict"]["status"], "RETRY_EXC_ERR");
    assert!(v["counters"].as_array().unwrap().len() > 20);
}

#[test]
fn bad_input_exits_2_and_says_what_is_allowed() {
    for (args, needle) in [
        (vec!["lab", "nope"], "no lab \"nope\" (allowed: incast, hol"),
        (
            vec!["lab", "incast", "--set", "senders=99"],
            "allowed: an integer in 2..=16",
        ),
        (
            vec!["lab", "incast", "--set", "senders"],
            "expected NAME=VALUE",
        ),
        (
            vec!["lab", "hol", "--set", "speed=9"],
            "lab hol has no parameter \"speed\"",
        ),
    ] {
        let out = rdmalab().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(needle), "{args:?}: {e}");
    }
}
