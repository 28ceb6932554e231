//! Replays the committed inputs of the fuzz target(s) `scenario_toml` through the same checks the
//! fuzzer runs (`fuzz/README.md`): none may panic.

#[path = "../../../../fuzz/replay.rs"]
mod replay;

#[test]
fn scenario_toml_inputs_replay_without_panic() {
    replay::replay("scenario_toml", scenario::fuzz::scenario);
}
