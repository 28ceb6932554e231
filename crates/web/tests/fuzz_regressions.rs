//! Replays the committed inputs of the fuzz target(s) `api_body` (`fuzz/corpus/` and the crash
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
fn api_body_inputs_replay_without_panic() {
    let corpus = inputs("corpus", "api_body");
    assert!(!corpus.is_empty(), "fuzz/corpus/api_body holds the seeds");
    for (name, data) in corpus
        .iter()
        .chain(inputs("regressions", "api_body").iter())
    {
        let r = std::panic::catch_unwind(|| web::api::fuzz::run_body(data));
        assert!(r.is_ok(), "api_body: input {name} panicked");
    }
}
