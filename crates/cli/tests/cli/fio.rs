//! `rdmalab fio`: fio's report layout for both transports, `--json`, a pcap, and bad flags
//! (exit 2, naming the flag and its range).

use assert_cmd::Command;
use assert_cmd::cargo::cargo_bin_cmd;

fn rdmalab() -> Command {
    cargo_bin_cmd!("rdmalab")
}

fn fio(args: &[&str]) -> String {
    let out = rdmalab().arg("fio").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The number after `key=` on the first line that has it.
fn field(s: &str, key: &str) -> f64 {
    let at = s.find(key).unwrap_or_else(|| panic!("no {key} in:\n{s}")) + key.len();
    s[at..]
        .trim_start_matches(['[', '='])
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("{key} has no number in:\n{s}"))
}

#[test]
fn both_transports_print_fio_shaped_reports_and_rdma_wins_on_cpu() {
    let base = [
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "32",
        "--runtime",
        "2ms",
    ];
    let rdma = fio(&[&["--ioengine", "nvmf-rdma"][..], &base].concat());
    let tcp = fio(&[&["--ioengine", "nvmf-tcp"][..], &base].concat());
    for s in [&rdma, &tcp] {
        assert!(s.contains("rw=randread, bs=(R) 4096B-4096B"), "{s}");
        assert!(s.contains("iodepth=32"), "{s}");
        assert!(s.contains("clat percentiles (usec): 50.00th=["), "{s}");
        assert!(s.contains("99.90th=["), "{s}");
        assert!(s.contains("local device (same job, no fabric)"), "{s}");
        assert!(s.contains("target port: peak queue"), "{s}");
    }
    assert!(field(&rdma, "IOPS=") > field(&tcp, "IOPS="));
    // The initiator's CPU line: usr then sys then total, ns per IO.
    let cpu = |s: &str| {
        let line = s
            .lines()
            .find(|l| l.contains("cpu per IO: initiator"))
            .unwrap();
        (field(line, "sys="), field(line, "total="))
    };
    let (rdma_sys, rdma_total) = cpu(&rdma);
    let (tcp_sys, tcp_total) = cpu(&tcp);
    assert_eq!(rdma_sys, 0.0, "NVMe/RDMA stays in user space");
    assert!(
        tcp_sys > 0.0 && tcp_total > 3.0 * rdma_total,
        "{tcp_total} vs {rdma_total}"
    );
}

#[test]
fn json_carries_the_same_figures_and_a_pcap_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("fio.pcap");
    let args = [
        "--ioengine",
        "nvmf-rdma",
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--number_ios",
        "50",
        "--iodepth",
        "4",
        "--initiators",
        "2",
    ];
    let text = fio(&args);
    let mut with_json = args.to_vec();
    with_json.extend(["--json", "--pcap", pcap.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&fio(&with_json)).unwrap();
    assert_eq!(v["ios"], 100, "50 per job, 2 initiators");
    assert_eq!(v["ios_per_initiator"], serde_json::json!([50, 50]));
    assert_eq!(
        v["reads"].as_u64().unwrap() + v["writes"].as_u64().unwrap(),
        100
    );
    assert_eq!(v["config"]["ioengine"], "nvmf-rdma");
    assert_eq!(v["config"]["limit"]["number_ios"], 50);
    let p50 = v["clat"]["p50_ps"].as_f64().unwrap() / 1e6;
    assert!(
        text.contains(&format!("50.00th=[{p50:.2}]")),
        "{p50} in\n{text}"
    );
    assert!(v["local"]["p50_ps"].as_u64().unwrap() < v["clat"]["p50_ps"].as_u64().unwrap());
    assert!(std::fs::metadata(&pcap).unwrap().len() > 1000);
}

/// `--threads` is taken, and says why the run stays on one thread: the initiators and the
/// target are one rack. The report is otherwise the same, byte for byte.
#[test]
fn threads_are_taken_and_the_run_says_why_it_is_on_one() {
    let args = [
        "--ioengine",
        "nvmf-tcp",
        "--number_ios",
        "40",
        "--iodepth",
        "4",
    ];
    let one = fio(&args);
    let mut two = args.to_vec();
    two.extend(["--threads", "2"]);
    let two = fio(&two);
    let said = "  simulator: 1 thread: the topology has one rack (hosts stay with their switch)\n";
    assert!(two.ends_with(said), "{two}");
    assert!(one.ends_with("  simulator: 1 thread\n"), "{one}");
    let body = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("simulator:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&one), body(&two));
    let mut json = args.to_vec();
    json.extend(["--threads", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&fio(&json)).unwrap();
    assert_eq!(v["parallel"]["threads"], 1);
    let out = rdmalab().args(["fio", "--threads", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'--threads <N>': 0 is not in 1..=256"),
        "{err}"
    );
    assert_eq!(
        v["parallel"]["single_because"],
        "the topology has one rack (hosts stay with their switch)"
    );
}

#[test]
fn bad_flags_are_refused_naming_the_flag_and_its_range() {
    for (args, want) in [
        (
            vec!["--ioengine", "spdk"],
            "--ioengine \"spdk\" is not an engine",
        ),
        (vec!["--rw", "trim"], "--rw \"trim\" is not a mode"),
        (
            vec!["--bs", "1000"],
            "--bs 1000 B is not a multiple of the 512 B block",
        ),
        (
            vec!["--bs", "2m"],
            "--bs 2097152 B is out of range: allowed 512 B–1048576 B",
        ),
        (vec!["--bs", "lots"], "--bs \"lots\" is not a size"),
        (
            vec!["--iodepth", "0"],
            "--iodepth 0 is out of range: allowed 1–256",
        ),
        (
            vec!["--iodepth", "5000000000"],
            "--iodepth 5000000000 is out of range",
        ),
        (
            vec!["--numjobs", "17"],
            "--numjobs 17 is out of range: allowed 1–16",
        ),
        (
            vec!["--initiators", "33"],
            "--initiators 33 is out of range: allowed 1–32",
        ),
        (
            vec!["--rwmixread", "101"],
            "--rwmixread 101 is out of range: allowed 0–100",
        ),
        (
            vec!["--runtime", "2s"],
            "--runtime 2000000 us is out of range",
        ),
        (
            vec!["--runtime", "soon"],
            "--runtime \"soon\" is not a duration",
        ),
        (
            vec!["--number_ios", "0"],
            "--number_ios 0 is out of range: allowed 1–1000000",
        ),
        (vec!["--size", "1k"], "--size 1024 B is out of range"),
        (
            vec!["--number_ios", "1000000", "--numjobs", "16"],
            "= 16000000 IOs: allowed at most 10000000",
        ),
        (
            vec!["--link-gbps", "0"],
            "--link-gbps 0 is out of range: allowed 1–800",
        ),
        (vec!["--pfc", "maybe"], "--pfc \"maybe\" is not on or off"),
        (
            vec!["--inline", "32k"],
            "--inline 32768 B is out of range: allowed 0 B–16384 B",
        ),
        (
            vec!["--device-read-us", "0"],
            "--device-read-us 0 is out of range: allowed 1–10000",
        ),
        (
            vec!["--device-parallel", "0"],
            "--device-parallel 0 is out of range",
        ),
    ] {
        let mut all = vec!["fio"];
        if !args.contains(&"--ioengine") {
            all.extend(["--ioengine", "nvmf-tcp"]);
        }
        all.extend(&args);
        let out = rdmalab().args(&all).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rdmalab fio: ") && err.contains(want),
            "{args:?}: {err}"
        );
    }
}
