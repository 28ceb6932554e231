//! Fuzz target `wire_frame`: `cargo fuzz run --sanitizer none wire_frame` (see fuzz/README.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    wire::fuzz::frame(data);
});
