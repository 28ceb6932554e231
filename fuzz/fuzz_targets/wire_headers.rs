//! Fuzz target `wire_headers`: `cargo fuzz run --sanitizer none wire_headers` (see fuzz/README.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wire::fuzz::headers(data);
});
