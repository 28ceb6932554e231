//! The `verbs` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file.

mod common;
mod conformance;
mod props;
mod transport;
