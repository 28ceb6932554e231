//! The `cli` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file.

mod calibrate;
mod collective;
mod fio;
mod lab;
mod outputs;
mod perftest;
mod run;
mod serve;
mod sweep;
mod trace;
mod verbs;
