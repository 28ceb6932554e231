//! Fuzz target `api_body`: `cargo fuzz run --sanitizer none api_body` (see fuzz/README.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    web::api::fuzz::run_body(data);
    web::api::fuzz::lab_body(data);
});
