//! Fuzz target `scenario_toml`: `cargo fuzz run --sanitizer none scenario_toml` (see fuzz/README.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scenario::fuzz::scenario(data);
});
