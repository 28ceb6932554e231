//! Issue 21: outputs are never half-written and never replace what is not theirs; a closed
//! standard output ends a command quietly; I/O problems exit 1 with the path, bad input 2.

use assert_cmd::Command;
use std::path::Path;
use std::process::Stdio;

fn rdmalab() -> Command {
    Command::cargo_bin("rdmalab").unwrap()
}

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("rdmalab-out-")
        .tempdir()
        .unwrap()
}

/// A one-point sweep writing its CSV to `out`: (exit code, stderr).
fn sweep_to(out: &Path) -> (Option<i32>, String) {
    let o = rdmalab()
        .args(["sweep", "lesson1", "--vary", "seed=1"])
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_symlinked_output_stays_a_link_and_its_target_gets_the_csv() {
    let d = tmp();
    let real = d.path().join("real.csv");
    let link = d.path().join("link.csv");
    std::fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, err) = sweep_to(&link);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .starts_with("point,")
    );
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
}

#[test]
fn a_fifo_output_is_written_through_and_stays_a_fifo() {
    let d = tmp();
    let fifo = d.path().join("out.csv");
    if !std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("no mkfifo: skipped");
        return;
    }
    let reader = {
        let f = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(f).unwrap())
    };
    let (code, err) = sweep_to(&fifo);
    assert_eq!(code, Some(0), "{err}");
    assert!(reader.join().unwrap().starts_with("point,"));
    use std::os::unix::fs::FileTypeExt as _;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no row log beside a FIFO: {names:?}");
}

#[test]
fn a_device_is_not_replaced_and_its_write_error_names_it() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let (code, err) = sweep_to(Path::new("/dev/full"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/dev/full"), "{err}");
    use std::os::unix::fs::FileTypeExt as _;
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device(),
        "/dev/full is still the device"
    );
    assert!(
        !Path::new("/dev/full.partial").exists(),
        "no row log in /dev"
    );
}

#[test]
fn a_directory_or_a_missing_directory_is_refused_before_the_sweep_runs() {
    let d = tmp();
    let (code, err) = sweep_to(d.path());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("a directory"), "{err}");
    let missing = d.path().join("nowhere/x.csv");
    let (code, err) = sweep_to(&missing);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!d.path().join(".x.csv.rdmalab-partial").exists());
}

#[test]
fn capture_paths_that_cannot_be_written_exit_1_with_the_path() {
    let d = tmp();
    let bad = d.path().join("nowhere/x.pcap");
    for args in [
        vec!["run", "lesson1", "--pcap"],
        vec!["trace", "lesson1", "--pcap"],
        vec!["trace", "lesson1", "--trace"],
    ] {
        let o = rdmalab().args(&args).arg(&bad).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("nowhere"), "{args:?}: {err}");
    }
    let o = rdmalab()
        .args([
            "verbs",
            "run",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/verbs/write.toml"
            ),
            "--pcap",
        ])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nowhere"));
}

#[test]
fn a_killed_trace_leaves_nothing_under_the_final_name_and_the_next_one_cleans_up() {
    let d = tmp();
    let pcap = d.path().join("t.pcap");
    let bin = assert_cmd::cargo::cargo_bin("rdmalab");
    let mut child = std::process::Command::new(&bin)
        .args(["trace", "lesson5", "--pcap"])
        .arg(&pcap)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once its capture has started.
    let start = std::time::Instant::now();
    while std::fs::read_dir(d.path()).unwrap().count() == 0
        && start.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!pcap.exists(), "no cut-off pcap under the final name");
    rdmalab()
        .args(["trace", "lesson1", "--pcap"])
        .arg(&pcap)
        .assert()
        .success();
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["t.pcap"], "the killed run's parts are gone");
}

/// Every subcommand that prints: with its standard output closed by the reader, it ends
/// quietly (exit 0, no panic), as `rdmalab lab list | head -1` needs.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let d = tmp();
    let profile = d.path().join("p.toml");
    let profile = profile.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["presets"],
        vec!["lab", "list"],
        vec!["lab", "trouble", "--set", "case=mtu"],
        vec!["run", "lesson1"],
        vec!["run", "lesson1", "--json"],
        vec!["perftest", "ib_write_lat", "-n", "5"],
        vec![
            "verbs",
            "run",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/verbs/write.toml"
            ),
        ],
        vec!["demo", "--senders", "2", "--kib", "64"],
        vec!["calibrate", "--quick", "--out", profile],
    ];
    let bin = assert_cmd::cargo::cargo_bin("rdmalab");
    for args in commands {
        let mut child = std::process::Command::new(&bin)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before anything is read.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn flag_errors_name_the_flag_typed() {
    let o = rdmalab()
        .args(["run", "lesson1", "--profile", "mlx5", "--profile", "rxe"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("--profile mlx5") && err.contains("--profile rxe"),
        "{err}"
    );
    let o = rdmalab().args(["demo", "--kib", "0"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("--kib") && !err.contains("bytes_per_sender"),
        "{err}"
    );
}

#[test]
fn a_huge_input_file_is_refused_before_it_is_read() {
    let d = tmp();
    let big = d.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    // Sparse: 1 GB on paper, nothing on disk; reading it whole would take the memory.
    f.set_len(1 << 30).unwrap();
    for args in [vec!["run"], vec!["run", "lesson1", "--profile"]] {
        let o = rdmalab().args(&args).arg(&big).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("larger than"), "{args:?}: {err}");
        assert!(err.len() < 1000, "the message does not repeat the file");
    }
}

/// Kills `args` (which write `target`) once its output has been opened, then checks that
/// nothing is under the final name; runs `again` to completion and checks that only the
/// finished outputs `want` are left in `dir`.
fn killed_then_rerun(dir: &Path, args: &[&str], target: &Path, again: &[&str], want: &[&str]) {
    let bin = assert_cmd::cargo::cargo_bin("rdmalab");
    let mut child = std::process::Command::new(&bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_dir(dir).unwrap().count() == 0
        && start.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SIGKILL: no destructor runs, nothing is cleaned up by the process itself.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !target.exists(),
        "{args:?}: a cut-off output under the final name"
    );
    rdmalab().args(again).assert().success();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names, want,
        "{args:?}: the killed run's temporaries are gone"
    );
}

#[test]
fn kill_9_during_run_and_verbs_run_leaves_no_pcap_and_no_temporaries() {
    let d = tmp();
    let pcap = d.path().join("r.pcap");
    let p = pcap.to_str().unwrap();
    killed_then_rerun(
        d.path(),
        &["run", "lesson5", "--pcap", p],
        &d.path().join("r-tcp.pcap"),
        &["run", "lesson1", "--pcap", p],
        &["r-rdma.pcap", "r-tcp.pcap"],
    );
    let d = tmp();
    // A session busy for a while: a 16 MiB WRITE over a lossy link, waited for.
    let session = d.path().join("long.toml");
    std::fs::write(
        &session,
        "hosts = [\"a\", \"b\"]\n[fabric]\nloss = 0.01\n\
         [[step]]\ncall = \"connect\"\nhosts = [\"a\", \"b\"]\npd = [\"pa\", \"pb\"]\ncq = [\"ca\", \"cb\"]\nqp = [\"qa\", \"qb\"]\n\
         [[step]]\ncall = \"alloc\"\nhost = \"a\"\nas = \"s\"\nlen = 16777216\n\
         [[step]]\ncall = \"reg_mr\"\npd = \"pa\"\nbuf = \"s\"\nas = \"ms\"\n\
         [[step]]\ncall = \"alloc\"\nhost = \"b\"\nas = \"t\"\nlen = 16777216\n\
         [[step]]\ncall = \"reg_mr\"\npd = \"pb\"\nbuf = \"t\"\nas = \"mt\"\naccess = [\"LOCAL_WRITE\", \"REMOTE_WRITE\"]\n\
         [[step]]\ncall = \"post_send\"\nqp = \"qa\"\nwr_id = 1\nopcode = \"RDMA_WRITE\"\nflags = [\"SIGNALED\"]\nsge = { mr = \"ms\" }\nremote = { mr = \"mt\" }\n\
         [[step]]\ncall = \"poll_cq\"\ncq = \"ca\"\nwait = \"5s\"\nexpect.completions = 1\n",
    )
    .unwrap();
    let out = tmp();
    let pcap = out.path().join("v.pcap");
    let p = pcap.to_str().unwrap();
    let s = session.to_str().unwrap();
    let write = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/verbs/write.toml"
    );
    killed_then_rerun(
        out.path(),
        &["verbs", "run", s, "--pcap", p],
        &pcap,
        &["verbs", "run", write, "--pcap", p],
        &["v.pcap"],
    );
}
