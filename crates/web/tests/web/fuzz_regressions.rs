//! Replays the committed inputs of the fuzz target(s) `api_body` through the same checks the
//! fuzzer runs (`fuzz/README.md`): none may panic.

#[path = "../../../../fuzz/replay.rs"]
mod replay;

#[test]
fn api_body_inputs_replay_without_panic() {
    replay::replay("api_body", |d| {
        web::api::fuzz::run_body(d);
        web::api::fuzz::lab_body(d);
    });
}
