//! `rdmalab collective`: nccl-tests' columns, `--json`, and bad flags refused by name.

use assert_cmd::Command;

fn collective(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("rdmalab")
        .unwrap()
        .arg("collective")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_table_has_nccl_tests_columns_and_one_checked_row_per_size() {
    let out = collective(&[
        "all_reduce",
        "-b",
        "64K",
        "-e",
        "256K",
        "-f",
        "2",
        "--hosts",
        "4",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text
        .lines()
        .find(|l| l.contains("algbw"))
        .expect("a column header");
    let cols: Vec<&str> = header.trim_start_matches('#').split_whitespace().collect();
    assert_eq!(
        &cols[..8],
        [
            "size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"
        ]
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    let sizes: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(sizes, ["65536", "131072", "262144"]);
    for r in &rows {
        assert_eq!(r[2], "float");
        assert_eq!(r[3], "sum");
        assert_eq!(r[7], "0", "checked, nothing wrong: {r:?}");
        let algbw: f64 = r[5].parse().unwrap();
        let busbw: f64 = r[6].parse().unwrap();
        // All-reduce on 4 hosts: busbw = algbw × 2(n−1)/n = 1.5 × algbw (rounded to 0.01).
        assert!((busbw - 1.5 * algbw).abs() < 0.02, "{r:?}");
    }
}

#[test]
fn json_reports_every_size_and_the_ideal() {
    let out = collective(&[
        "all_gather",
        "-b",
        "96K",
        "-e",
        "96K",
        "--hosts",
        "3",
        "--transport",
        "tcp",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["bytes"], 98304);
    assert_eq!(row["wrong"], 0);
    assert!(row["ideal_ps"].as_u64().unwrap() > 0);
    assert!(row["time_ps"].as_u64().unwrap() > row["ideal_ps"].as_u64().unwrap());
    assert_eq!(v["config"]["transport"], "tcp");
}

#[test]
fn a_bad_flag_is_refused_with_its_name_and_range() {
    for (args, want) in [
        (
            &["all_reduce", "--qps", "0"][..],
            "--qps: qps_per_connection = 0: allowed 1..=16",
        ),
        (
            &["all_reduce", "--hosts", "1025"][..],
            "--hosts: hosts = 1025: allowed 2..=1024",
        ),
        (
            &["all_reduce", "--channels", "17"][..],
            "--channels: channels = 17: allowed 1..=16",
        ),
        (
            &["all_reduce", "--chunk", "1K"][..],
            "--chunk: chunk_bytes = 1024: allowed 4096..=67108864",
        ),
        (
            &["all_reduce", "-b", "9G", "-e", "9G"][..],
            "-b/-e: size = 9663676416",
        ),
        (
            &["all_reduce", "-f", "1"][..],
            "-f 1: the step factor is 2..=16",
        ),
        (
            &["allreduce"][..],
            "unknown operation \"allreduce\": one of all_gather, all_reduce, alltoall, reduce_scatter",
        ),
        (
            &[
                "all_reduce",
                "--hosts",
                "6",
                "--algorithm",
                "halving_doubling",
            ][..],
            "power-of-two",
        ),
        (
            &["all_reduce", "--transport", "ib"][..],
            "--transport \"ib\": rdma or tcp",
        ),
        (
            &[
                "all_reduce",
                "-b",
                "8G",
                "-e",
                "8G",
                "--hosts",
                "64",
                "--chunk",
                "4K",
            ][..],
            "--chunk: chunk_bytes = 4096: size 8589934592 on 64 hosts cuts",
        ),
    ] {
        let out = collective(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("rdmalab collective: "), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn run_and_sweep_drive_the_collective_from_scenario_keys() {
    let run = Command::cargo_bin("rdmalab")
        .unwrap()
        .args([
            "run",
            "../../scenarios/collective-allreduce-8.toml",
            "--set",
            "workload.message_bytes=262144",
            "--set",
            "collective.transport=\"tcp\"",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(v["hosts"], 8);
    assert_eq!(v["config"]["transport"], "tcp");
    assert_eq!(v["rows"][0]["bytes"], 262144);
    assert_eq!(v["rows"][0]["wrong"], 0);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("c.csv");
    let out = Command::cargo_bin("rdmalab")
        .unwrap()
        .args([
            "sweep",
            "../../scenarios/collective-allreduce-8.toml",
            "--vary",
            "collective.qps_per_connection=1,4",
            "--set",
            "workload.message_bytes=4194304",
            "--set",
            "topology.spine_gbps=25",
            "-o",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0]
            .starts_with("point,collective.qps_per_connection,bytes,time_us,algbw_gbs,busbw_gbs")
    );
    let busbw = |l: &str| l.split(',').nth(5).unwrap().parse::<f64>().unwrap();
    // Four QPs spread each connection over the 25 Gb/s spines; one rides one of them.
    assert!(busbw(lines[2]) > 2.0 * busbw(lines[1]), "{text}");
    // A collective key outside the collective pattern is refused by name.
    let bad = Command::cargo_bin("rdmalab")
        .unwrap()
        .args(["run", "lesson1", "--set", "collective.channels=2"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("collective.channels needs workload.pattern = \"collective\"")
    );
}

/// Issue 24: a 16-host ring all-reduce on a leaf-spine (a host per leaf) is the same run on 1,
/// 2, 4 and 16 threads (its fabric split into 1, 2, 4 and 16 partitions of whole leaves,
/// spines spread): the same `--json`, wall time aside. Over RDMA and over kernel TCP.
#[test]
fn a_sixteen_host_all_reduce_is_the_same_on_one_two_four_and_sixteen_threads() {
    for transport in ["rdma", "tcp"] {
        let run = |threads: &str| {
            let out = collective(&[
                "all_reduce",
                "-b",
                "256K",
                "-e",
                "256K",
                "--hosts",
                "16",
                "--topology",
                "leaf_spine",
                "--transport",
                transport,
                "--json",
                "--threads",
                threads,
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            strip_wall(&mut v);
            let parallel = v.as_object_mut().unwrap().remove("parallel").unwrap();
            assert_eq!(parallel["partitions"].to_string(), threads, "{parallel}");
            v
        };
        let one = run("1");
        assert_eq!(one["rows"][0]["wrong"], 0, "{transport}");
        for t in ["2", "4", "16"] {
            assert_eq!(run(t), one, "{transport} on {t} threads");
        }
    }
}

/// Removes the fields that measure the machine (`wall*`) at any depth.
fn strip_wall(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.starts_with("wall"));
            m.values_mut().for_each(strip_wall);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_wall),
        _ => {}
    }
}
