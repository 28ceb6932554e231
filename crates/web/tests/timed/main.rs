//! The web lab's timed tests: the browser walk (`browser.rs`, headless Chromium through every
//! page) and the load test (`load.rs`, 200 clients). Their speed checks need the machine to
//! themselves, so they are a binary apart from the API tests (`tests/web/`), and within it
//! take turns through [`ONE_HEAVY`].

/// The lab is served as `rdmalab serve` serves it, with mimalloc (crates/cli/src/main.rs): under
/// the system allocator every run's large buffers (a lesson-6 megabyte, the loss lab's socket
/// buffers) come from fresh mappings the kernel zeroes again, and the browser tests' speed checks
/// would time that instead of the lab.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One timed test at a time: two Chromiums, or a browser beside 200 load clients, on two cores
/// would make the speed checks lie.
static ONE_HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

mod browser;
mod load;
