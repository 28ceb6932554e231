//! Fuzz target `verbs_session`: `cargo fuzz run --sanitizer none verbs_session` (see fuzz/README.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    rdmalab::session::fuzz::session(data);
});
