//! What the `scenario_toml` fuzz target checks (`fuzz/`), replayed by `cargo test` over its
//! corpus and crash inputs (`tests/fuzz_regressions.rs`): a scenario file from anyone parses
//! to a plan or to an error with a position, never a panic; a plan it accepts converts to a
//! fabric, host and TCP configuration that validate.

/// One input, as the text of a scenario file (invalid UTF-8 is an error before parsing).
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(plan) = crate::parse_with(text, &[]) else {
        return;
    };
    // Accepted plans build valid configurations (or a topology error, never a panic).
    let _ = plan.topology();
    let _ = plan.fabric_config().validate();
    let _ = plan.host_profile().validate();
    let _ = plan.tcp_config().validate();
}
