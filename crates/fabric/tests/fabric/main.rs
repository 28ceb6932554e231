//! The `fabric` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file.
//! `steady_state_alloc.rs` stays a binary of its own: it installs a counting global
//! allocator, which would count every other test's allocations here.

mod fabric;
mod partitioned;
mod pcap;
mod pfc_failures;
mod support;
