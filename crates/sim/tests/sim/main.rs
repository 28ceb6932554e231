//! The `sim` crate's integration tests, one binary with a module per area (as ripgrep
//! does): a test build links this crate's dependencies once, not once per file.

mod canonical_order;
mod collective;
mod conformance;
mod dcqcn;
mod fuzz_regressions;
mod labs;
mod labs_allreduce;
mod labs_nvmf;
mod nvmf;
mod partitioned;
mod permutation;
mod rdma;
mod rdma_pcap;
mod report;
mod selective;
mod session;
mod setup_on_wire;
mod support;
mod tcp_path;
mod uc;
mod ud;
