//! A run's budget across many calls: `engine::run_until` enforces one call's budget, while a
//! scenario, session or lab drives the world through hundreds of short calls (a socket loop,
//! one verbs step each), so the world keeps the whole run's simulated time, events, wall time
//! and memory here (`TotalBudget`) and narrows each call to what is left (`within_total`,
//! `count_total`). The memory count (`held_bytes`, `reserve`) is computed from lengths and
//! capacities, so the same run always counts the same.

use super::{World, WorldError};
use engine::{Budget, BudgetExceeded, Model, RunStats};
use units::{SimDuration, SimTime};

/// A run's budget and what it has used.
#[derive(Clone, Debug)]
pub(super) struct TotalBudget {
    budget: Budget,
    started: std::time::Instant,
    sim_start: SimTime,
    events: u64,
    /// The run's event count when its memory was last checked between calls.
    memory_checked_at: std::cell::Cell<u64>,
}

impl World {
    /// Bytes the run's growing state holds, as counted for the memory budget
    /// (`budget.max_memory_mb`): the trace records the observers keep, the fabric's packets
    /// in flight and the bytes of every host's buffers. Counted from lengths and capacities,
    /// so the same run always counts the same.
    pub fn held_bytes(&self) -> u64 {
        self.states().iter().map(|s| s.held_bytes()).sum()
    }

    /// Whether the run's memory budget has room for `extra` more bytes of state (say, a
    /// buffer about to be allocated): checked before a large allocation, so that a run that
    /// cannot fit stops with the budget error before it takes the memory.
    pub fn reserve(&self, extra: u64) -> Result<(), WorldError> {
        let Some(t) = &self.total_budget else {
            return Ok(());
        };
        if self.held_bytes().saturating_add(extra) > t.budget.memory_bytes {
            return Err(BudgetExceeded::Memory {
                limit_bytes: t.budget.memory_bytes,
            }
            .into());
        }
        Ok(())
    }

    /// Keeps the error of a run a verbs call made (`control_path`, `in_parallel`) for the
    /// caller's next `run_until*`: the verbs API returns verbs errors, and a budget that ran
    /// out is the run's to report. The first one is kept.
    pub(super) fn defer_error(&mut self, r: Result<RunStats, WorldError>) {
        if let Err(e) = r {
            debug_assert!(
                matches!(e, WorldError::Budget(_)),
                "a run to a verbs call's end fails only on its budget: {e}"
            );
            self.deferred_error.get_or_insert(e);
        }
    }

    /// The default budget ([`Budget::default`]) counted from now rather than from time zero:
    /// what a setup step's own loop (a socket handshake, an exchange, a CM round) may use,
    /// so a world whose setup has already run for a while (thousands of connections) can
    /// still set up one more. The run's budget, if set, bounds it as well.
    pub(super) fn step_budget(&self) -> Budget {
        let d = Budget::default();
        Budget {
            sim_time: SimDuration::from_ps(self.now().as_ps().saturating_add(d.sim_time.as_ps())),
            ..d
        }
    }

    /// Gives the whole run a budget (simulated time from now, events and wall time across
    /// every later `run_until*` call); each call then runs within what is left of it as well
    /// as within its own budget.
    pub fn set_run_budget(&mut self, b: Budget) {
        self.total_budget = Some(TotalBudget {
            budget: b,
            memory_checked_at: std::cell::Cell::new(0),
            started: std::time::Instant::now(),
            sim_start: self.sched.now(),
            events: 0,
        });
    }

    /// `call` narrowed to what the run's budget has left (and which of simulated time, events
    /// and wall time the run's budget set), or the budget it ran out of.
    pub(super) fn within_total(&self, call: &Budget) -> Result<(Budget, [bool; 3]), WorldError> {
        let Some(t) = &self.total_budget else {
            return Ok((*call, [false; 3]));
        };
        let events = t.budget.events.saturating_sub(t.events);
        if events == 0 {
            return Err(BudgetExceeded::Events {
                limit: t.budget.events,
            }
            .into());
        }
        // The engine checks memory every 16,384 events of one call; a run made of many short
        // calls (a TCP sender's loop of write()s, one per segment) never reaches that within
        // a call, so the run's own count decides here. Found by the web's heavy load test:
        // a 256 MiB message at MTU 576 held 1.6 GB under a 256 MB budget.
        if t.budget.memory_bytes != u64::MAX
            && t.events.saturating_sub(t.memory_checked_at.get())
                >= engine::sched::BUDGET_CHECK_EVERY
        {
            t.memory_checked_at.set(t.events);
            if self.held_bytes() > t.budget.memory_bytes {
                return Err(BudgetExceeded::Memory {
                    limit_bytes: t.budget.memory_bytes,
                }
                .into());
            }
        }
        let wall = t.budget.wall.saturating_sub(t.started.elapsed());
        if wall.is_zero() {
            return Err(BudgetExceeded::Wall {
                limit: t.budget.wall,
                events: t.events,
            }
            .into());
        }
        let end = t
            .sim_start
            .checked_add(t.budget.sim_time)
            .unwrap_or(SimTime::MAX);
        // The engine measures a budget's simulated time from time zero, so the run's end is
        // passed as an absolute time, not as what is left from now.
        let sim_time = end.saturating_duration_since(SimTime::ZERO);
        Ok((
            Budget {
                sim_time: call.sim_time.min(sim_time),
                events: call.events.min(events),
                wall: call.wall.min(wall),
                memory_bytes: call.memory_bytes.min(t.budget.memory_bytes),
            },
            [
                sim_time < call.sim_time,
                events < call.events,
                wall < call.wall,
            ],
        ))
    }

    /// Adds a call's events to the run's budget, and names the run's own limit when the
    /// narrowed call ran out of it.
    pub(super) fn count_total(
        &mut self,
        r: Result<RunStats, BudgetExceeded>,
        from_total: [bool; 3],
    ) -> Result<RunStats, BudgetExceeded> {
        let Some(t) = &mut self.total_budget else {
            return r;
        };
        match r {
            Ok(st) => {
                t.events += st.events;
                Ok(st)
            }
            Err(BudgetExceeded::SimTime { .. }) if from_total[0] => Err(BudgetExceeded::SimTime {
                limit: t.budget.sim_time,
            }),
            Err(BudgetExceeded::Events { .. }) if from_total[1] => Err(BudgetExceeded::Events {
                limit: t.budget.events,
            }),
            Err(BudgetExceeded::Wall { events, .. }) if from_total[2] => {
                Err(BudgetExceeded::Wall {
                    limit: t.budget.wall,
                    events: t.events + events,
                })
            }
            Err(e) => Err(e),
        }
    }
}
