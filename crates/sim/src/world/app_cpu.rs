//! Application work that is not a verbs call or a syscall: the stages an application charges
//! to its own cores — an NVMe initiator building a command, a target parsing one
//! (`crate::nvmf`), a collective summing what it received (`crate::collective`).

use super::HostIx;
use super::{APP_CORE, World};
use engine::Stage;
use host::CpuWork;
use units::{SimDuration, SimTime};

impl World {
    /// Runs `cost` of `stage` on host `h`'s application thread ([`APP_CORE`]), after its earlier
    /// blocking calls and stages; returns (start, end). Later socket calls start after it
    /// (the thread is busy until `end`), and so do verbs calls' CPU stages (the core is).
    pub fn app_work(
        &mut self,
        h: impl Into<HostIx>,
        cost: SimDuration,
        stage: Stage,
    ) -> (SimTime, SimTime) {
        let h: HostIx = h.into();
        self.focus_host(h);
        let ready = self.sched.now().max(self.state.hosts[h.index()].app_ready);
        let r = self.core_work(h, APP_CORE, ready, cost, stage);
        self.state.hosts[h.index()].app_ready = r.1;
        r
    }

    /// Runs `cost` of `stage` on host `h`'s `core` (clamped to the host's cores) from now,
    /// after whatever that core runs already, without holding the application thread (a
    /// worker thread's work); returns when it ends. The time counts in the host's data-path
    /// CPU account like every other stage.
    pub fn run_app_work(
        &mut self,
        h: impl Into<HostIx>,
        core: u16,
        cost: SimDuration,
        stage: Stage,
    ) -> SimTime {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        self.core_work(h, core, now, cost, stage).1
    }

    fn core_work(
        &mut self,
        h: HostIx,
        core: u16,
        ready: SimTime,
        cost: SimDuration,
        stage: Stage,
    ) -> (SimTime, SimTime) {
        let now = self.sched.now();
        let work = CpuWork {
            core,
            ready,
            cost,
            stage,
            setup: false,
        };
        self.state.hosts[h.index()]
            .cpu
            .run(&mut self.state.tracer, now, work)
    }
}
