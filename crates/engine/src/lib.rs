//! The deterministic discrete-event engine under every rdmalab simulation.
//!
//! Map of the crate:
//! - [`queue`]: [`EventQueue`], pending events in exact (time, [`Tie`], insertion) order.
//! - [`sched`]: [`Scheduler`], which owns the queue and the clock, and [`run`], the event loop
//!   that drives a [`Model`] under a [`Budget`] (the model's state and its scheduler apart;
//!   [`run_simulation`] for a [`Simulation`] that holds both).
//! - [`parallel`]: [`run_partitioned`], a conservative parallel run of a model split into
//!   [`Partitioned`] parts, in windows of the lookahead, the same for any thread count.
//! - [`budget`]: limits on simulated time, event count and wall time; hitting one is an error
//!   that names it ([`BudgetExceeded`]), never a partial result.
//! - [`rng`]: [`RngStreams`], one independent seeded stream per component, all derived from the
//!   scenario's single seed.
//! - [`arena`]: [`Arena`], a slab with `Copy` handles, so packets travel as 4-byte handles and
//!   their slots are reused (no allocation per packet in steady state).
//! - [`prefetch`](mod@prefetch): a cache hint the event loop gives for the next events.
//! - [`stage`]: [`Stage`], the closed set of timed host stages, each with its [`Domain`]
//!   (user space, kernel, NIC, PCIe).
//! - [`trace`]: typed [`TraceRecord`]s, the [`Observer`] trait and a [`Tracer`] that costs a
//!   single untaken branch when nobody observes; [`TraceHasher`] folds a run into one hash.
//!
//! Determinism rules, enforced by construction: time is integer picoseconds; events at one
//! instant pop by their [`Tie`], then in insertion order (the canonical order: [`sched`]);
//! randomness comes only from [`RngStreams`]; nothing iterates a `HashMap`.
//! The engine reads the wall clock only to enforce the wall-time budget, and a run that hits
//! it fails as a whole.

pub mod arena;
pub mod budget;
pub mod parallel;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod sched;
pub mod stage;
pub mod trace;

pub use arena::{Arena, Handle};
pub use budget::{Budget, BudgetExceeded};
pub use parallel::{Partitioned, PartitionedStats, Workers, run_partitioned};
pub use prefetch::prefetch;
pub use queue::{EventQueue, Tie};
pub use rng::{Rng, RngStreams, StreamId};
pub use sched::{Model, RunStats, Scheduler, Simulation, Step, run, run_simulation, run_until};
pub use stage::{Domain, Stage};
pub use trace::{
    DropReason, ExecUnit, FirstObserver, Observer, PacketClass, PacketRef, PacketStage,
    TraceHasher, TraceRecord, Tracer, VecObserver,
};
