//! Run budgets: how far a run may go before it is stopped with an error.
//!
//! A budget protects the machine (a scenario from a stranger must not run forever) without
//! ever producing a result that depends on the machine's speed: a run that exhausts any limit
//! returns [`BudgetExceeded`] and no metrics at all.

use std::time::Duration;
use units::SimDuration;

/// Limits for one run. The defaults fit every lesson preset with a wide margin.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Budget {
    /// Simulated time the run may cover.
    pub sim_time: SimDuration,
    /// Events the run may process.
    pub events: u64,
    /// Wall-clock time the run may take on this machine.
    pub wall: Duration,
    /// Bytes the run's state may hold, as the model counts it ([`crate::Model::held_bytes`]:
    /// records kept, packets in flight, buffers) plus the event queue. Counted, not measured,
    /// so that the limit is deterministic like the others.
    pub memory_bytes: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            sim_time: SimDuration::from_secs(10),
            events: 500_000_000,
            wall: Duration::from_secs(300),
            memory_bytes: u64::MAX,
        }
    }
}

impl Budget {
    /// No limits at all, for tests and benchmarks that bound themselves.
    pub const UNLIMITED: Budget = Budget {
        sim_time: SimDuration::MAX,
        events: u64::MAX,
        wall: Duration::MAX,
        memory_bytes: u64::MAX,
    };
}

/// The budget a run ran out of. The run's results are discarded.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
pub enum BudgetExceeded {
    /// The next event lies beyond the simulated-time budget.
    #[error(
        "the run needs more than its simulated-time budget of {limit} (scenario key \
         `budget.max_sim_time_ms`); raise it if the scenario really runs that long"
    )]
    SimTime {
        /// The budget.
        limit: SimDuration,
    },
    /// More events than the event budget.
    #[error(
        "the run needs more than its budget of {limit} events (scenario key \
         `budget.max_events`); raise it or shrink the workload"
    )]
    Events {
        /// The budget.
        limit: u64,
    },
    /// The run's state grew past the memory budget.
    #[error(
        "the run needs more than its memory budget of {} MB (scenario key \
         `budget.max_memory_mb`); raise it or shrink the workload", limit_bytes >> 20
    )]
    Memory {
        /// The budget, bytes.
        limit_bytes: u64,
    },
    /// The run took longer on this machine than the wall-time budget.
    #[error(
        "the run took longer than its wall-time budget of {limit:?} after {events} events \
         (scenario key `budget.max_wall_s`); raise it or shrink the workload"
    )]
    Wall {
        /// The budget.
        limit: Duration,
        /// Events processed when the budget ran out.
        events: u64,
    },
}
