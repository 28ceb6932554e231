//! Replays the committed inputs of the fuzz target(s) `wire_frame`, `wire_headers` (`fuzz/corpus/` and the crash
//! inputs in `fuzz/regressions/`) through the same checks the fuzzer runs: none may panic.

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

#[test]
fn wire_frame_inputs_replay_without_panic() {
    let corpus = inputs("corpus", "wire_frame");
    assert!(!corpus.is_empty(), "fuzz/corpus/wire_frame holds the seeds");
    for (name, data) in corpus
        .iter()
        .chain(inputs("regressions", "wire_frame").iter())
    {
        let r = std::panic::catch_unwind(|| wire::fuzz::frame(data));
        assert!(r.is_ok(), "wire_frame: input {name} panicked");
    }
}

#[test]
fn wire_headers_inputs_replay_without_panic() {
    let corpus = inputs("corpus", "wire_headers");
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/wire_headers holds the seeds"
    );
    for (name, data) in corpus
        .iter()
        .chain(inputs("regressions", "wire_headers").iter())
    {
        let r = std::panic::catch_unwind(|| wire::fuzz::headers(data));
        assert!(r.is_ok(), "wire_headers: input {name} panicked");
    }
}
