//! The engine's integration tests, one binary with a module per area (as ripgrep does).

mod partitioned;
