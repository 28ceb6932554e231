//! The `web` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file. The tests
//! that time the lab (the browser walk and the load test) are the `timed` binary: run here,
//! beside the API tests' simulations on two cores, their speed checks would time the neighbours.

mod api;
mod fuzz_regressions;
mod zh_errors;
