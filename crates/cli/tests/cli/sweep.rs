//! `rdmalab sweep`: the grid's CSV, sharding and merging, the chart, bad input.

use assert_cmd::Command;

fn rdmalab() -> Command {
    Command::cargo_bin("rdmalab").unwrap()
}

const GRID: [&str; 4] = [
    "--vary",
    "workload.message_bytes=64,4096,65536",
    "--vary",
    "rdma.operation=write,send",
];

#[test]
fn three_shards_merged_equal_the_whole_sweep_byte_for_byte() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let whole = dir.path().join("whole.csv");
    rdmalab()
        .args(["sweep", "lesson1"])
        .args(GRID)
        .arg("-o")
        .arg(&whole)
        .assert()
        .success();
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 6, "{text}");
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(
        &header[..3],
        ["point", "workload.message_bytes", "rdma.operation"]
    );
    for col in [
        "tcp.latency_delivered_ns",
        "rdma.copies",
        "rdma.cpu_ns_per_message_remote",
        "rdma.setup_duration_ns",
        "rdma_over_tcp_latency",
    ] {
        assert!(header.contains(&col), "{col} in {header:?}");
    }
    // First key slowest; the operation shows in the values; RDMA never copies, TCP does
    // (a copy per chunk of the socket buffer: more for bigger messages).
    assert!(lines[1].starts_with("0,64,write,") && lines[2].starts_with("1,64,send,"));
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f[col("rdma.copies")], "0");
        assert!(f[col("tcp.copies")].parse::<u64>().unwrap() >= 2, "{l}");
    }
    // Larger messages take longer: the latency column grows down the write rows.
    let lat = |i: usize| -> f64 {
        lines[i]
            .split(',')
            .nth(col("rdma.latency_delivered_ns"))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(lat(1) < lat(3) && lat(3) < lat(5));

    let mut parts = Vec::new();
    for i in 1..=3 {
        let p = dir.path().join(format!("part{i}.csv"));
        rdmalab()
            .args(["sweep", "1"])
            .args(GRID)
            .args(["--shard", &format!("{i}/3"), "-o"])
            .arg(&p)
            .assert()
            .success();
        let t = std::fs::read_to_string(&p).unwrap();
        assert_eq!(t.lines().count(), 1 + 2, "shard {i}: {t}");
        parts.push(p);
    }
    let merged = dir.path().join("merged.csv");
    // Shards in any order.
    rdmalab()
        .args(["sweep", "merge", "-o"])
        .arg(&merged)
        .arg(&parts[2])
        .arg(&parts[0])
        .arg(&parts[1])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    // Overlapping shards are refused.
    let out = rdmalab()
        .args(["sweep", "merge", "-o"])
        .arg(dir.path().join("dup.csv"))
        .arg(&parts[0])
        .arg(&parts[0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("twice"));
    // A missing shard leaves holes: named, refused.
    let out = rdmalab()
        .args(["sweep", "merge", "-o"])
        .arg(dir.path().join("holes.csv"))
        .arg(&parts[0])
        .arg(&parts[2])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 point(s)") && err.contains(": 1, 4") && err.contains("shard"),
        "{err}"
    );
    // Issue 21: a far point number costs neither memory nor an endless message: the holes
    // are counted, the first ten named; a number past any grid is refused.
    let text = std::fs::read_to_string(&parts[0]).unwrap();
    let head = text.lines().next().unwrap();
    let row = text.lines().nth(1).unwrap();
    let far = dir.path().join("far.csv");
    let rest = &row[row.find(',').unwrap()..];
    std::fs::write(&far, format!("{head}\n99999{rest}\n")).unwrap();
    let out = rdmalab()
        .args(["sweep", "merge", "-o"])
        .arg(dir.path().join("far-out.csv"))
        .arg(&far)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("99999 point(s)") && err.contains("and 99989 more") && err.len() < 400,
        "{err}"
    );
    std::fs::write(&far, format!("{head}\n100000000{rest}\n")).unwrap();
    let out = rdmalab()
        .args(["sweep", "merge", "-o"])
        .arg(dir.path().join("far-out.csv"))
        .arg(&far)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("numbered 0..100000"));
}

#[test]
fn the_chart_has_one_series_per_path_and_transport_setting() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let csv = dir.path().join("loss.csv");
    let svg = dir.path().join("loss.svg");
    rdmalab()
        .args([
            "sweep",
            "lesson5",
            "--vary",
            "loss.congestion_drop=0.003,0.01",
            "--vary",
            "lossless.enabled=false,true",
            "-o",
        ])
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .assert()
        .success();
    let s = std::fs::read_to_string(&svg).unwrap();
    let labels = [
        "TCP lossless.enabled=false",
        "TCP lossless.enabled=true",
        "RDMA lossless.enabled=false",
        "RDMA lossless.enabled=true",
    ];
    for l in labels {
        assert!(s.contains(l), "legend {l}");
    }
    // One line per series (plus the legend's samples).
    assert!(s.matches("<polyline").count() >= labels.len(), "{s}");
    assert!(s.contains("retention"));
    // PNG, when a font is there.
    if std::path::Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").exists() {
        let png = dir.path().join("loss.png");
        rdmalab()
            .args([
                "sweep",
                "1",
                "--vary",
                "workload.message_bytes=64,4096",
                "-o",
            ])
            .arg(dir.path().join("size.csv"))
            .arg("--plot")
            .arg(&png)
            .assert()
            .success();
        let b = std::fs::read(&png).unwrap();
        assert_eq!(&b[1..4], b"PNG");
    }
}

#[test]
fn bad_input_exits_2_naming_the_problem() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let o = dir.path().join("bad.csv");
    let long: String = (1..=100)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let seeds = format!("seed={long}");
    let sizes = format!("workload.messages={long}");
    let drops = format!("loss.congestion_drop=0,{}", vec!["0.001"; 99].join(","));
    let cases: [(&[&str], &str); 7] = [
        (&["--vary", "rdma.bogus=1,2"], "rdma.bogus"),
        (
            &["--vary", "workload.message_bytes=0,64"],
            "workload.message_bytes",
        ),
        (&["--vary", "seed=1,2", "--shard", "4/3"], "--shard"),
        (&["--vary", "seed=1,,2"], "empty"),
        (&["--vary", "seed=1", "--plot", "chart.jpg"], "--plot"),
        (
            &[
                "--vary",
                "seed=1",
                "--metric",
                "happiness",
                "--plot",
                "x.svg",
            ],
            "--metric",
        ),
        // 100 × 100 × 100 points: refused before the grid is built.
        (
            &["--vary", &seeds, "--vary", &sizes, "--vary", &drops],
            "100 × 100 × 100",
        ),
    ];
    for (args, needle) in cases {
        let out = rdmalab()
            .args(["sweep", "lesson1"])
            .args(args)
            .arg("-o")
            .arg(&o)
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// Issue 11: a sweep killed mid-way keeps the rows it finished (OUT.partial, flushed per row),
/// `--resume` runs only the rest, and the final CSV is byte for byte the uninterrupted one.
#[test]
fn a_killed_sweep_resumes_to_the_same_csv() {
    let dir = tempfile::Builder::new()
        .prefix("rdmalab-cli-")
        .tempdir()
        .unwrap();
    let grid = [
        "--vary",
        "loss.congestion_drop=0,0.001,0.002,0.004,0.006,0.008,0.01,0.02",
    ];
    let whole = dir.path().join("resume-whole.csv");
    rdmalab()
        .args(["sweep", "lesson5"])
        .args(grid)
        .arg("-o")
        .arg(&whole)
        .assert()
        .success();
    let out = dir.path().join("resume.csv");
    let partial = dir.path().join("resume.csv.partial");
    let bin = assert_cmd::cargo::cargo_bin("rdmalab");
    let mut child = std::process::Command::new(&bin)
        .args(["sweep", "lesson5"])
        .args(grid)
        .arg("-o")
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for two finished rows, then kill it.
    let start = std::time::Instant::now();
    loop {
        let rows = std::fs::read_to_string(&partial)
            .map(|t| t.lines().count().saturating_sub(2))
            .unwrap_or(0);
        if rows >= 2 || start.elapsed() > std::time::Duration::from_secs(120) {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            panic!("the sweep finished before it could be interrupted");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.exists(), "no final CSV from an interrupted sweep");
    let kept = std::fs::read_to_string(&partial).unwrap();
    let kept_rows = kept.lines().count() - 2;
    assert!((2..8).contains(&kept_rows), "{kept}");
    assert!(kept.starts_with("# rdmalab sweep partial "), "{kept}");
    // Without --resume the leftover is not overwritten.
    let refused = rdmalab()
        .args(["sweep", "lesson5"])
        .args(grid)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    // Another grid may not resume these rows.
    let other = rdmalab()
        .args(["sweep", "lesson5", "--resume", "--vary", "seed=7,8"])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("another sweep"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    // Issue 21: a damaged kept row (a column lost) is refused by name, not glued on.
    let row0 = kept.lines().nth(2).unwrap().to_string();
    let short = row0[..row0.rfind(',').unwrap()].to_string();
    std::fs::write(&partial, kept.replacen(&row0, &short, 1)).unwrap();
    let damaged = rdmalab()
        .args(["sweep", "lesson5", "--resume"])
        .args(grid)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(damaged.status.code(), Some(2));
    let why = String::from_utf8_lossy(&damaged.stderr);
    assert!(
        why.contains("line 3") && why.contains("damaged row"),
        "{why}"
    );
    // A kept row is not run again: mark one and see the mark survive. Issue 21: a row the
    // kill cut short (no newline: here half of a row) is dropped, not glued to the next.
    let lead = &row0[..row0.rfind(',').unwrap() + 1];
    let marked = format!("{lead}12345");
    let cut_row = kept.lines().last().unwrap();
    let cut = format!(
        "{}{}",
        kept.replacen(&row0, &marked, 1),
        &cut_row[..cut_row.len() / 2]
    );
    std::fs::write(&partial, &cut).unwrap();
    rdmalab()
        .args(["sweep", "lesson5", "--resume"])
        .args(grid)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let resumed = std::fs::read_to_string(&out).unwrap();
    assert!(
        resumed.contains(&marked),
        "the kept row was reused, not rerun"
    );
    assert_eq!(
        resumed.replacen(&marked, &row0, 1),
        std::fs::read_to_string(&whole).unwrap(),
        "resumed CSV equals the uninterrupted one (the marked row aside)"
    );
    assert!(
        !partial.exists(),
        "the partial file is gone once the CSV is whole"
    );
}
