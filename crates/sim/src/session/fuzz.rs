//! What the `verbs_session` fuzz target checks (`fuzz/`), replayed by `cargo test` over its
//! corpus and crash inputs (`tests/fuzz_regressions.rs`): a session file from anyone parses
//! to a session or to an error with a line and column, never a panic.

/// One input, as the text of a session file.
pub fn session(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = super::parse(text) {
        // The error names a place in the file (1-based, within it).
        let lines = text.lines().count().max(1) + 1;
        assert!(
            e.line >= 1 && e.line <= lines && e.column >= 1,
            "{}:{}: {e}",
            e.line,
            e.column
        );
    }
}
