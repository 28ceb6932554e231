//! Replays the committed inputs of the fuzz target(s) `scenario_toml` (`fuzz/corpus/` and the crash
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
fn scenario_toml_inputs_replay_without_panic() {
    let corpus = inputs("corpus", "scenario_toml");
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/scenario_toml holds the seeds"
    );
    for (name, data) in corpus
        .iter()
        .chain(inputs("regressions", "scenario_toml").iter())
    {
        let r = std::panic::catch_unwind(|| scenario::fuzz::scenario(data));
        assert!(r.is_ok(), "scenario_toml: input {name} panicked");
    }
}
