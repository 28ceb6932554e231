//! What a fio run reports, as fio reports it: IOPS, bandwidth, completion latency and its
//! percentiles, and CPU per IO split into user and system time, per side.

use super::FioConfig;
use serde::Serialize;

/// Completion latencies of a run, in picoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// IOs measured.
    pub ios: u64,
    /// Shortest.
    pub min_ps: u64,
    /// Mean.
    pub mean_ps: u64,
    /// Median.
    pub p50_ps: u64,
    /// 99th percentile.
    pub p99_ps: u64,
    /// 99.9th percentile.
    pub p999_ps: u64,
    /// Longest.
    pub max_ps: u64,
}

impl LatencySummary {
    /// The summary of `lat` (sorted here). Percentiles are nearest-rank (the smallest value
    /// with at least that share of IOs at or below it), as fio's are.
    pub fn of(mut lat: Vec<u64>) -> LatencySummary {
        if lat.is_empty() {
            return LatencySummary::default();
        }
        lat.sort_unstable();
        let n = lat.len();
        let rank = |per_mille: usize| lat[(n * per_mille).div_ceil(1000).clamp(1, n) - 1];
        LatencySummary {
            ios: n as u64,
            min_ps: lat[0],
            mean_ps: (lat.iter().map(|&x| x as u128).sum::<u128>() / n as u128) as u64,
            p50_ps: rank(500),
            p99_ps: rank(990),
            p999_ps: rank(999),
            max_ps: lat[n - 1],
        }
    }
}

/// CPU time per IO on one side, split as `top` would show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuSplit {
    /// User-space time per IO, ns.
    pub usr_ns: f64,
    /// Kernel time per IO, ns.
    pub sys_ns: f64,
}

impl CpuSplit {
    /// usr + sys.
    pub fn total_ns(&self) -> f64 {
        self.usr_ns + self.sys_ns
    }
}

/// How busy each resource that can set a run's pace was over the data phase, as a share of
/// what it could do (0 to 1). A closed loop with none of them near 1 is held back by its queue
/// depth (Little's law: IOPS = IOs in flight / latency), not by a resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Utilisation {
    /// The device's parallel units: the counted IOs' service time over units × elapsed.
    pub device: f64,
    /// The target's busiest core (the application thread's, or the softirq core's).
    pub target_core: f64,
    /// The busiest core of the busiest initiator.
    pub initiator_core: f64,
    /// The target's link in its busier direction: wire bytes (frames with their preamble and
    /// inter-frame gap) over the line rate.
    pub target_link: f64,
}

/// One fio run's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioReport {
    /// What ran.
    pub config: FioConfig,
    /// IOs completed (and counted).
    pub ios: u64,
    /// Reads among them.
    pub reads: u64,
    /// Writes among them.
    pub writes: u64,
    /// IOs counted per initiator, in host order.
    pub ios_per_initiator: Vec<u64>,
    /// Simulated time measured over, ps.
    pub elapsed_ps: u64,
    /// IOs per second of simulated time.
    pub iops: f64,
    /// Bytes per second of simulated time.
    pub bandwidth_bps: f64,
    /// Completion latency (submission by fio to its reaping of the completion).
    pub clat: LatencySummary,
    /// CPU per IO, summed over the initiators.
    pub cpu_initiator: CpuSplit,
    /// CPU per IO on the target.
    pub cpu_target: CpuSplit,
    /// The same workload on the device inside the initiator (no fabric), at the same queue
    /// depth: the local-device latency beside the fabric's. `None` for a local run.
    pub local: Option<LatencySummary>,
    /// One IO's device service time alone (media + transfer, no queueing), ps.
    pub device_service_ps: u64,
    /// Highest queue at the switch port towards the target, bytes.
    pub target_port_peak_queue_bytes: u64,
    /// Highest queue at the target's own port (towards the switch), bytes.
    pub target_tx_peak_queue_bytes: u64,
    /// Most commands the device held at once (queued + in service).
    pub device_peak_outstanding: u64,
    /// How busy the device, the cores and the target's link were.
    pub utilisation: Utilisation,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// PAUSE frames sent.
    pub pauses: u64,
    /// Events simulated.
    pub events: u64,
    /// Wall time of the data phase, ns.
    pub wall_ns: u64,
    /// Threads and partitions the run used, or why one thread.
    pub parallel: crate::world::Parallelism,
}

impl FioReport {
    /// The report as fio prints it (group line, IOPS and bandwidth, clat, percentiles, cpu).
    pub fn text(&self) -> String {
        let c = &self.config;
        let us = |ps: u64| ps as f64 / 1e6;
        let dir = match (self.reads > 0, self.writes > 0) {
            (true, false) => "read",
            (false, true) => "write",
            _ => "mixed",
        };
        let mib = |b: f64| b / (1u64 << 20) as f64;
        let total_bytes = self.ios as f64 * c.bs as f64;
        let bs = c.bs;
        let mut s = format!(
            "{}: (g=0): rw={}, bs=(R) {bs}B-{bs}B, (W) {bs}B-{bs}B, ioengine={}, iodepth={}, numjobs={}, initiators={} (simulated)\n",
            c.ioengine.name(),
            c.rw.name(),
            c.ioengine.name(),
            c.iodepth,
            c.numjobs,
            c.initiators,
        );
        s += &format!(
            "  {dir}: IOPS={:.0}, BW={:.1}MiB/s ({:.1}MB/s)({:.1}MiB/{:.3}ms)\n",
            self.iops,
            mib(self.bandwidth_bps),
            self.bandwidth_bps / 1e6,
            mib(total_bytes),
            self.elapsed_ps as f64 / 1e9,
        );
        let l = &self.clat;
        s += &format!(
            "    clat (usec): min={:.2}, max={:.2}, avg={:.2}\n",
            us(l.min_ps),
            us(l.max_ps),
            us(l.mean_ps)
        );
        s += &format!(
            "     clat percentiles (usec): 50.00th=[{:.2}], 99.00th=[{:.2}], 99.90th=[{:.2}]\n",
            us(l.p50_ps),
            us(l.p99_ps),
            us(l.p999_ps)
        );
        let cpu = |x: &CpuSplit| {
            format!(
                "usr={:.0}ns, sys={:.0}ns, total={:.0}ns",
                x.usr_ns,
                x.sys_ns,
                x.total_ns()
            )
        };
        if c.ioengine == super::IoEngine::Local {
            s += &format!("  cpu per IO: {}\n", cpu(&self.cpu_initiator));
        } else {
            s += &format!("  cpu per IO: initiator {}\n", cpu(&self.cpu_initiator));
            s += &format!("              target    {}\n", cpu(&self.cpu_target));
        }
        s += &format!(
            "  device: service {:.2} us per IO alone, peak {} commands outstanding\n",
            us(self.device_service_ps),
            self.device_peak_outstanding
        );
        if let Some(local) = &self.local {
            s += &format!(
                "  local device (same job, no fabric): clat 50.00th=[{:.2}], 99.00th=[{:.2}] usec; fabric adds {:.2} usec at the median\n",
                us(local.p50_ps),
                us(local.p99_ps),
                us(self.clat.p50_ps.saturating_sub(local.p50_ps)),
            );
        }
        if c.ioengine != super::IoEngine::Local {
            s += &format!(
                "  target port: peak queue {:.1} KiB towards the target, {:.1} KiB at its own egress; {} drops, {} PAUSE frames\n",
                self.target_port_peak_queue_bytes as f64 / 1024.0,
                self.target_tx_peak_queue_bytes as f64 / 1024.0,
                self.drops,
                self.pauses,
            );
        }
        s += &format!("  simulator: {}\n", self.parallel.line());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let l = LatencySummary::of((1..=1000).rev().collect());
        assert_eq!(
            (l.min_ps, l.p50_ps, l.p99_ps, l.p999_ps, l.max_ps),
            (1, 500, 990, 999, 1000)
        );
        assert_eq!(l.mean_ps, 500);
        let one = LatencySummary::of(vec![7]);
        assert_eq!((one.p50_ps, one.p999_ps), (7, 7));
        assert_eq!(LatencySummary::of(vec![]).ios, 0);
    }
}
