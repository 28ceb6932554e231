//! Shared by the crates' `tests/fuzz_regressions.rs` (each includes this file with
//! `#[path]`): replays a fuzz target's committed inputs, `fuzz/corpus/TARGET/` and the crash
//! inputs in `fuzz/regressions/TARGET/`, through the target's own check.

/// Every file under `fuzz/<dir>/<target>/`, in name order.
fn inputs(dir: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let path = format!("{}/../../fuzz/{dir}/{target}", env!("CARGO_MANIFEST_DIR"));
    let Ok(entries) = std::fs::read_dir(&path) else {
        return Vec::new();
    };
    let mut v: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Runs `check` on every committed input of `target`; none may panic.
pub fn replay(target: &str, check: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let corpus = inputs("corpus", target);
    assert!(!corpus.is_empty(), "fuzz/corpus/{target} holds the seeds");
    for (name, data) in corpus.iter().chain(inputs("regressions", target).iter()) {
        let r = std::panic::catch_unwind(|| check(data));
        assert!(r.is_ok(), "{target}: input {name} panicked");
    }
}
