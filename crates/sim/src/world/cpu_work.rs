//! Application work the experiments charge to a host's cores beyond the verbs and socket
//! calls: a collective's reduction of received data (`crate::collective`).

use super::World;
use host::CpuWork;
use units::{SimDuration, SimTime};

impl World {
    /// Runs `cost` of `stage` on host `h`'s `core` (clamped to the host's cores) from now,
    /// after whatever that core runs already; returns when it ends. The time counts in the
    /// host's data-path CPU account like every other stage.
    pub fn run_app_work(
        &mut self,
        h: u32,
        core: u16,
        cost: SimDuration,
        stage: &'static str,
    ) -> SimTime {
        let now = self.sched.now();
        let host = &mut self.hosts[h as usize];
        let (_, end) = host.cpu.run(
            &mut self.tracer,
            now,
            CpuWork {
                core,
                ready: now,
                cost,
                stage,
                setup: false,
            },
        );
        end
    }
}
