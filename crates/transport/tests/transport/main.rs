//! The `transport` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file.

mod rc_pair;
mod rc_states;
mod tcp_pair;
mod tcp_states;
