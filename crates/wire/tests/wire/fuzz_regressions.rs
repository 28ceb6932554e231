//! Replays the committed inputs of the fuzz target(s) `wire_frame`, `wire_headers` through the same checks the
//! fuzzer runs (`fuzz/README.md`): none may panic.

#[path = "../../../../fuzz/replay.rs"]
mod replay;

#[test]
fn wire_frame_inputs_replay_without_panic() {
    replay::replay("wire_frame", wire::fuzz::frame);
}

#[test]
fn wire_headers_inputs_replay_without_panic() {
    replay::replay("wire_headers", wire::fuzz::headers);
}
