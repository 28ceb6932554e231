//! CPU cores and the accounting of what ran on them.
//!
//! A stage runs on one core for a modelled time; a core runs one stage at a time, so a busy
//! core delays the next stage assigned to it (that is how a single stream becomes CPU-bound).
//! Every stage is traced with its start and end, and its time is added to the host's busy
//! time, by stage name and split into data path and setup.

use engine::{ExecUnit, Stage, TraceRecord, Tracer};
use std::collections::BTreeMap;
use units::{NodeId, SimDuration, SimTime};

/// CPU time spent, by stage and in total (stages iterate in name order).
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct CpuAccount {
    /// Busy time on the data path.
    pub data_path: SimDuration,
    /// Busy time on setup (registration, QP creation, connection exchange).
    pub setup: SimDuration,
    /// Data-path busy time and count per stage name.
    pub by_stage: BTreeMap<Stage, (SimDuration, u64)>,
    /// Setup busy time and count per stage name, kept apart so a data-path breakdown is not
    /// mixed with one-off connection work that happens to use the same stage names.
    pub setup_by_stage: BTreeMap<Stage, (SimDuration, u64)>,
}

impl CpuAccount {
    fn add(&mut self, name: Stage, cost: SimDuration, setup: bool) {
        let (total, map) = if setup {
            (&mut self.setup, &mut self.setup_by_stage)
        } else {
            (&mut self.data_path, &mut self.by_stage)
        };
        *total += cost;
        let e = map.entry(name).or_default();
        e.0 += cost;
        e.1 += 1;
    }
}

/// The cores of one host.
#[derive(Clone, Debug)]
pub struct Cpu {
    host: NodeId,
    free_at: Vec<SimTime>,
    /// Busy time run on each core so far.
    busy: Vec<SimDuration>,
    /// While set, every stage counts as setup (e.g. the TCP exchange before RDMA's RTR).
    setup_mode: bool,
    account: CpuAccount,
}

/// One stage of CPU work for [`Cpu::run`].
#[derive(Clone, Copy, Debug)]
pub struct CpuWork {
    /// The core it runs on (the application's or the interrupt's); clamped to the host's.
    pub core: u16,
    /// It starts no earlier than this (and no earlier than the core is free).
    pub ready: SimTime,
    /// How long it keeps the core.
    pub cost: SimDuration,
    /// The stage, as traced and counted (a user-space or kernel one).
    pub stage: Stage,
    /// It serves connection setup rather than the data path (also while the CPU is in setup
    /// mode, whatever this says).
    pub setup: bool,
}

/// Time a spinning thread spent on a core, for [`Cpu::charge_spin`].
#[derive(Clone, Copy, Debug)]
pub struct Spin {
    /// The core it spun on.
    pub core: u16,
    /// When it started spinning and when it stopped.
    pub from: SimTime,
    /// See `from`.
    pub to: SimTime,
    /// The time the spin itself took (the window less the other stages run in it).
    pub cost: SimDuration,
    /// The stage, as traced and counted (a user-space or kernel one).
    pub stage: Stage,
}

impl Cpu {
    /// `cores` idle cores of `host`.
    pub fn new(host: NodeId, cores: u16) -> Self {
        let n = cores.max(1) as usize;
        Cpu {
            host,
            free_at: vec![SimTime::ZERO; n],
            busy: vec![SimDuration::ZERO; n],
            setup_mode: false,
            account: CpuAccount::default(),
        }
    }

    /// Runs `work` (no earlier than its `ready`, on its core); returns (start, end). The trace
    /// record is emitted at `now`, the time the stage is decided.
    pub fn run(&mut self, tracer: &mut Tracer, now: SimTime, work: CpuWork) -> (SimTime, SimTime) {
        let CpuWork {
            core,
            ready,
            cost,
            stage,
            setup,
        } = work;
        debug_assert!(stage.domain().is_cpu(), "{stage} does not run on a CPU");
        let c = (core as usize).min(self.free_at.len() - 1);
        let start = ready.max(self.free_at[c]);
        let end = start + cost;
        self.free_at[c] = end;
        self.busy[c] += cost;
        let setup = setup || self.setup_mode;
        self.account.add(stage, cost, setup);
        let host = self.host;
        tracer.emit(now, || TraceRecord::Stage {
            host,
            unit: ExecUnit::Cpu(c as u16),
            stage,
            setup,
            start,
            end,
        });
        (start, end)
    }

    /// Makes every stage count as setup while `on` (work that serves connection setup, such as
    /// the out-of-band exchange over TCP, though it runs through the data-path code).
    pub fn set_setup_mode(&mut self, on: bool) {
        self.setup_mode = on;
    }

    /// Whether stages currently count as setup.
    pub fn setup_mode(&self) -> bool {
        self.setup_mode
    }

    /// Cores of this host.
    pub fn cores(&self) -> u16 {
        self.free_at.len() as u16
    }

    /// When `core` is free of every stage booked on it so far.
    pub fn free_at(&self, core: u16) -> SimTime {
        self.free_at[(core as usize).min(self.free_at.len() - 1)]
    }

    /// Busy time run on `core` so far (stages scheduled, including ones still to come).
    pub fn core_busy(&self, core: u16) -> SimDuration {
        self.busy.get(core as usize).copied().unwrap_or_default()
    }

    /// Charges `spin.cost` to its core over `[spin.from, spin.to]` without moving the core's
    /// timeline: for a thread that was spinning in the gaps between other stages (busy-poll),
    /// whose time the core spent but no later stage has to wait for.
    pub fn charge_spin(&mut self, tracer: &mut Tracer, now: SimTime, spin: Spin) {
        let Spin {
            core,
            from,
            to,
            cost,
            stage,
        } = spin;
        let c = (core as usize).min(self.free_at.len() - 1);
        self.busy[c] += cost;
        let setup = self.setup_mode;
        self.account.add(stage, cost, setup);
        let host = self.host;
        tracer.emit(now, || TraceRecord::Stage {
            host,
            unit: ExecUnit::Cpu(c as u16),
            stage,
            setup,
            start: from,
            end: to,
        });
    }

    /// What ran so far.
    pub fn account(&self) -> &CpuAccount {
        &self.account
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::VecObserver;

    #[test]
    fn a_busy_core_delays_the_next_stage_and_everything_is_counted() {
        let mut t = Tracer::new(VecObserver::default());
        let mut cpu = Cpu::new(NodeId(1), 2);
        let (_, e1) = cpu.run(
            &mut t,
            SimTime::ZERO,
            CpuWork {
                core: 0,
                ready: SimTime::ZERO,
                cost: SimDuration::from_ns(100),
                stage: Stage::CopyUserToKernel,
                setup: false,
            },
        );
        let (s2, e2) = cpu.run(
            &mut t,
            SimTime::ZERO,
            CpuWork {
                core: 0,
                ready: SimTime::ZERO,
                cost: SimDuration::from_ns(50),
                stage: Stage::WriteEntry,
                setup: false,
            },
        );
        assert_eq!(s2, e1, "core 0 was busy");
        assert_eq!(e2.as_ps(), 150_000);
        let (s3, _) = cpu.run(
            &mut t,
            SimTime::ZERO,
            CpuWork {
                core: 1,
                ready: SimTime::ZERO,
                cost: SimDuration::from_ns(10),
                stage: Stage::IoctlRegMr,
                setup: true,
            },
        );
        assert_eq!(s3, SimTime::ZERO, "core 1 was free");
        let a = cpu.account();
        assert_eq!(a.data_path, SimDuration::from_ns(150));
        assert_eq!(a.setup, SimDuration::from_ns(10));
        assert_eq!(
            a.by_stage[&Stage::CopyUserToKernel],
            (SimDuration::from_ns(100), 1)
        );
        assert_eq!(a.setup_by_stage.len(), 1, "setup stages are kept apart");
        assert!(!a.by_stage.keys().any(|k| a.setup_by_stage.contains_key(k)));
        assert_eq!(t.take::<VecObserver>().unwrap().records.len(), 3);
        cpu.set_setup_mode(true);
        cpu.run(
            &mut t,
            SimTime::ZERO,
            CpuWork {
                core: 0,
                ready: SimTime::ZERO,
                cost: SimDuration::from_ns(7),
                stage: Stage::CopyUserToKernel,
                setup: false,
            },
        );
        let a = cpu.account();
        assert_eq!(
            a.setup,
            SimDuration::from_ns(17),
            "setup mode turns stages into setup"
        );
        assert_eq!(
            a.setup_by_stage[&Stage::CopyUserToKernel],
            (SimDuration::from_ns(7), 1)
        );
        assert_eq!(
            a.by_stage[&Stage::CopyUserToKernel],
            (SimDuration::from_ns(100), 1)
        );
    }
}
