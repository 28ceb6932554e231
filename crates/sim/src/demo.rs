//! The fabric demo: an N→1 incast run four ways on the same fabric.
//!
//! N senders stream the same amount of data at line rate to one receiver through one switch,
//! so the switch port towards the receiver is oversubscribed N times. The four runs differ only
//! in the switch: a lossy drop-tail buffer, the same buffer with PFC on the senders' priority,
//! PFC with ECN marking (which nobody reacts to yet: the transports come later), and PFC with
//! lesson ⑤'s 1% congestion-drop draw. Every figure comes from running the fabric model.

use engine::{Budget, BudgetExceeded, Scheduler, run};
use fabric::{
    ConfigError, EcnConfig, Fabric, FabricConfig, FabricEvent, LinkConfig, PfcConfig, RawFlow,
    SwitchConfig, Topology,
};
use units::{Bandwidth, ByteLen, Priority, Probability, SimDuration, SimTime};

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DemoParams {
    /// Senders in the incast (1..=64).
    pub senders: u64,
    /// Payload bytes each sender sends (1 KiB ..= 64 MiB).
    pub bytes_per_sender: u64,
    /// Link rate.
    pub link: Bandwidth,
    /// Cable length of every link, metres.
    pub cable_m: u64,
    /// Shared switch buffer, bytes.
    pub buffer_bytes: u64,
    /// Scenario seed.
    pub seed: u64,
}

impl Default for DemoParams {
    fn default() -> Self {
        DemoParams {
            senders: 4,
            bytes_per_sender: 4 << 20,
            link: Bandwidth::gbps(100),
            cable_m: 3,
            buffer_bytes: 1 << 20,
            seed: 1,
        }
    }
}

/// One run's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoRow {
    /// Which switch configuration.
    pub variant: &'static str,
    /// Payload bytes that reached the receiver.
    pub delivered_bytes: u64,
    /// Payload bytes sent.
    pub sent_bytes: u64,
    /// Flows that delivered every byte.
    pub flows_complete: u64,
    /// When the last byte arrived (or the run ended, if some never did).
    pub last_arrival: SimTime,
    /// Frames dropped, any reason.
    pub drops: u64,
    /// PAUSE frames sent by the switch.
    pub pauses: u64,
    /// RESUME frames sent by the switch.
    pub resumes: u64,
    /// Frames marked CE.
    pub ecn_marks: u64,
    /// Highest shared-buffer occupancy.
    pub peak_buffer_bytes: u64,
    /// Events the engine processed.
    pub events: u64,
    /// Wall-clock time of the run (machine-dependent).
    pub wall: std::time::Duration,
}

/// Why the demo could not run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A parameter is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A run exceeded its budget.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
}

/// The ideal completion time: all payload through the receiver's link at line rate, ignoring
/// headers — a lower bound every variant is compared against.
pub fn ideal_time(p: &DemoParams) -> SimDuration {
    p.link
        .serialization_time(ByteLen::new(p.senders * p.bytes_per_sender))
}

/// Runs the four variants.
pub fn run_demo(p: &DemoParams) -> Result<Vec<DemoRow>, DemoError> {
    // Named as the CLI's flags are: `--kib` is the payload in KiB.
    fabric::config::check_range("--senders", p.senders, 1, 64)?;
    fabric::config::check_range("--kib", p.bytes_per_sender / 1024, 1, 65_536)?;
    if !p.bytes_per_sender.is_multiple_of(1024) {
        return Err(
            fabric::config::ConfigError::new("--kib", p.bytes_per_sender, "whole KiB").into(),
        );
    }
    let prio = Priority::of(3);
    let base = SwitchConfig {
        buffer_bytes: p.buffer_bytes,
        queue_cap_bytes: p.buffer_bytes,
        ..Default::default()
    };
    // XOFF/XON leave room for the headroom the fabric reserves per lossless port.
    let pfc = PfcConfig::new(1 << prio.get(), p.buffer_bytes / 16, p.buffer_bytes / 32);
    let variants = [
        ("drop-tail (lossy)", base),
        (
            "PFC (lossless)",
            SwitchConfig {
                pfc: Some(pfc),
                ..base
            },
        ),
        (
            "PFC + ECN marking",
            SwitchConfig {
                pfc: Some(pfc),
                ecn: Some(EcnConfig::dcqcn_paper(1 << prio.get())),
                ..base
            },
        ),
        (
            "PFC + 1% congestion draw",
            SwitchConfig {
                pfc: Some(pfc),
                congestion_drop: Probability::from_ratio(1, 100),
                ..base
            },
        ),
    ];
    variants
        .iter()
        .map(|&(name, switch)| run_one(p, name, switch, prio))
        .collect()
}

fn run_one(
    p: &DemoParams,
    variant: &'static str,
    switch: SwitchConfig,
    prio: Priority,
) -> Result<DemoRow, DemoError> {
    let topo = Topology::incast(p.senders, LinkConfig::new(p.link, p.cable_m))?;
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: p.seed,
            ..Default::default()
        },
    )?;
    let hosts = fab.hosts();
    for &src in &hosts[1..] {
        fab.add_flow(RawFlow {
            src,
            dst: hosts[0],
            bytes: p.bytes_per_sender,
            payload_mtu: 4096,
            priority: prio,
            start: SimTime::ZERO,
            ecn_capable: true,
        })?;
    }
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    let budget = Budget {
        sim_time: SimDuration::from_secs(1),
        ..Budget::default()
    };
    let st = run(&mut fab, &mut sched, &budget)?;
    let results = fab.flow_results();
    let c = fab.counters();
    Ok(DemoRow {
        variant,
        delivered_bytes: results.iter().map(|r| r.delivered).sum(),
        sent_bytes: p.senders * p.bytes_per_sender,
        flows_complete: results.iter().filter(|r| r.finish.is_some()).count() as u64,
        last_arrival: if fab.all_flows_done() {
            results
                .iter()
                .filter_map(|r| r.finish)
                .max()
                .unwrap_or(st.end_time)
        } else {
            st.end_time
        },
        drops: c.drops(),
        pauses: c.pauses_sent,
        resumes: c.resumes_sent,
        ecn_marks: c.ecn_marks,
        peak_buffer_bytes: c.peak_buffer_bytes,
        events: st.events,
        wall: st.wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_variants_deliver_everything_and_lossy_does_not() {
        let p = DemoParams {
            senders: 3,
            bytes_per_sender: 1 << 20,
            ..Default::default()
        };
        let rows = run_demo(&p).unwrap();
        assert_eq!(rows.len(), 4);
        let lossy = &rows[0];
        assert!(
            lossy.drops > 0 && lossy.delivered_bytes < lossy.sent_bytes,
            "{lossy:?}"
        );
        for r in &rows[1..] {
            assert_eq!(r.drops, 0, "{r:?}");
            assert_eq!(r.delivered_bytes, r.sent_bytes);
            assert!(r.pauses > 0);
            assert!(r.last_arrival.since_start() >= ideal_time(&p));
        }
        assert!(rows[2].ecn_marks > 0);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = run_demo(&DemoParams {
            senders: 0,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--senders"), "{e}");
        // Issue 21: the payload is named by the flag a user types, in its unit.
        let e = run_demo(&DemoParams {
            bytes_per_sender: 0,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--kib"), "{e}");
        assert!(!e.to_string().contains("bytes_per_sender"), "{e}");
    }
}
