//! Verbs sessions: a TOML file of verbs calls, run against the simulated world
//! (DESIGN.md §1.3, "the same sessions run from a file on the command line").
//!
//! A session names a NIC profile, a small fabric (two hosts back to back, or hosts on one
//! switch), the hosts, and an ordered list of steps. Each step is a verbs call (`alloc_pd`,
//! `reg_mr`, `create_qp`, `modify_qp`, `post_send`, `poll_cq`, ...) or a session action
//! (`connect`, `run`, `write_memory`, `read_memory`), with user-chosen handle names: a step
//! says `as = "mr_a"` and later steps say `mr = "mr_a"`. Steps may carry expectations: the
//! return code, the completions, QP states, bytes in memory, and "no completion within T".
//! `scenarios/verbs/README.md` documents every key; the files beside it are examples.
//!
//! # Modules
//!
//! - [`parse`](mod@parse): the TOML text → [`Session`] in one pass. Unknown keys, wrong types,
//!   unknown handles, opcodes, flags and states, and out-of-range values are [`ParseError`]s
//!   with the line and column and a message that names the key and what is allowed. Every
//!   key, its type, range and default is declared once (`parse/keys.rs`), and
//!   [`parse::keys_markdown`] renders the declarations as the README's key reference.
//! - [`plan`]: the typed session ([`Session`], [`Step`], [`Call`], [`Expect`]) and its
//!   [`limits`].
//! - [`exec`]: [`run`] builds the world and executes the steps, recording each.
//! - [`report`]: [`Report`], [`StepRecord`], [`Outcome`], [`Check`]; serialises to the JSON of
//!   `rdmalab verbs run --json`. Each step also records the verbs objects after it (QPs with
//!   their send and receive queues, CQs with their waiting completions, MRs) and the frames
//!   the hosts sent while it ran, for the web lab's playground.
//! - [`model`](mod@model): the state table, attribute keys, statuses and errnos as data.
//!
//! # Example
//!
//! ```
//! use rdmalab::session::{self, RunOptions};
//!
//! let src = r#"
//! hosts = ["a", "b"]
//!
//! [[step]]
//! call = "connect"
//! hosts = ["a", "b"]
//! pd = ["pd_a", "pd_b"]
//! cq = ["cq_a", "cq_b"]
//! qp = ["qp_a", "qp_b"]
//!
//! [[step]]
//! call = "query_qp"
//! qp = "qp_a"
//! expect = { state = "RTS" }
//! "#;
//! let plan = session::parse(src).unwrap();
//! let report = session::run(&plan, RunOptions::default()).unwrap();
//! assert!(report.passed);
//! ```
//!
//! # Simplifications
//!
//! - UD work requests name their destination QP (`ud = { qp, qkey }`); its host's address is
//!   the address handle, and there is no `create_ah` step.
//! - `fabric.drop` rules count the frames of each QP of the sending host (requests, ACKs and
//!   READ responses alike), because the fabric's rules match flows and the world gives every
//!   QP its own flow.
//! - `poll_cq` with `wait` advances time in slices of max(1 µs, wait / 10 000), so the time a
//!   completion is noticed is rounded up to a slice.

pub mod exec;
#[doc(hidden)]
pub mod fuzz;
pub mod model;
pub mod msg;
pub mod parse;
pub mod plan;
pub mod report;
pub mod syntax;
pub mod verbs_msg;

pub use exec::{RunError, RunOptions, run};
pub use parse::{ParseError, parse};
pub use plan::{Call, Expect, Session, Step, limits};
pub use report::{Check, Outcome, Report, StepRecord, Summary, WcRecord};
