//! Scenario files for rdmalab: a TOML schema parsed into a typed, bounded [`Plan`]
//! (DESIGN.md §3.8 "Scenarios and presets"; the file format of §4 "Interfaces").
//!
//! A scenario states the host and NIC profiles, the topology and fabric (switch buffer, ECN,
//! PFC), loss and lossless, the RDMA side (operation, QP type, retransmission, ACK timeout, MTU,
//! memory registered or not, the QP state reached, completion mode, DCQCN), the TCP side
//! (congestion control, MTU, TSO/GRO, buffers, busy-poll, min RTO), the workload and the seed.
//! Every key, its unit, default and range is in [`plan::KEYS`] and `scenarios/README.md`.
//!
//! - [`parse()`] reads a file; unknown keys, wrong types, out-of-range values and conflicting
//!   values are a [`ScenarioError`] with line, column, key path, value and what is allowed
//!   (`LINE:COL: key = value is out of range: allowed ...`).
//! - [`Plan::set`] / [`parse_with`] apply CLI `--set key.path=value` overrides, checked the same
//!   way.
//! - [`presets()`] / [`preset`] give the six lesson presets ①–⑥ (DESIGN.md §3.8), embedded from
//!   `scenarios/presets/lessonN.toml`.
//! - [`spanned`] is the spanned-TOML toolkit scenario and verbs-session files share: line and
//!   column of a span, typed readers with range faults, unknown-key search.
//! - [`matrix::parse`] reads csg-htsim's connection matrices (`.cm`), the flows of
//!   `workload.pattern = "matrix"`.
//! - `Plan::fabric_config`, `topology`, `host_profile`, `nic_profile`, `tcp_config`, ... build
//!   the other crates' configuration types (§3.2–§3.6); the metrics the run reports from them are
//!   §3.7's.

pub mod convert;
#[doc(hidden)]
pub mod fuzz;
pub mod matrix;
pub mod parse;
pub mod plan;
pub mod presets;
pub mod rule;
pub mod spanned;

pub use parse::{ErrorKind, MAX_FILE_BYTES, Origin, ScenarioError, parse, parse_with};
pub use plan::{
    Auto, CollectiveAlgorithm, CollectiveOp, CollectivePlan, CollectiveTransport, Completion,
    Congestion, DcqcnProfile, EcmpKind, ForwardingKind, KEYS, KeySpec, Kind, NicKind, Operation,
    Paths, Pattern, Plan, QpKind, QpStateKind, Retransmission, TopologyKind, Value,
};
pub use presets::{Preset, preset, preset_names, presets};
pub use rule::{Rule, RuleArg, Why};
