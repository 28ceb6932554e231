//! Replays the committed inputs of the fuzz target(s) `verbs_session` through the same checks the
//! fuzzer runs (`fuzz/README.md`): none may panic.

#[path = "../../../../fuzz/replay.rs"]
mod replay;

#[test]
fn verbs_session_inputs_replay_without_panic() {
    replay::replay("verbs_session", rdmalab::session::fuzz::session);
}
