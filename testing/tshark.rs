//! Running tshark from tests, shared by the crates whose tests decode pcaps (included with
//! `#[path]`, as `fuzz/replay.rs` is).

/// Runs tshark with `args` and returns its standard output, or `None` when tshark is not on
/// PATH (the test then skips its tshark half, loudly; under CI a missing tshark fails).
pub fn tshark(args: &[&str]) -> Option<String> {
    if std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark not found on PATH and CI is set: apt-get install tshark"
        );
        eprintln!("\n*** SKIPPED the tshark half: tshark not found (apt-get install tshark) ***\n");
        return None;
    }
    let out = std::process::Command::new("tshark")
        .args(args)
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("tshark prints UTF-8"))
}
