//! Application work that is not a verbs call or a syscall: the stages an application charges
//! to its own thread (an NVMe initiator building a command, a target parsing one).

use super::World;
use engine::Stage;
use host::CpuWork;
use units::{SimDuration, SimTime};

impl World {
    /// Runs `cost` of `stage` on host `h`'s application thread (core 0), after its earlier
    /// blocking calls and stages; returns (start, end). Later socket calls start after it
    /// (the thread is busy until `end`), and so do verbs calls' CPU stages (the core is).
    pub fn app_work(&mut self, h: u32, cost: SimDuration, stage: Stage) -> (SimTime, SimTime) {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let ready = now.max(host.app_ready);
        let r = host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: 0,
                ready,
                cost,
                stage,
                setup: false,
            },
        );
        host.app_ready = r.1;
        r
    }
}
