//! Writes a pcap of a 2→1 incast with PFC and ECN marking: `cargo run -p fabric --example
//! incast_pcap -- out.pcap`, then open it in Wireshark or `tshark -r out.pcap`.

use engine::{Budget, Scheduler, run};
use fabric::capture::{CaptureAt, PcapTap};
use fabric::{
    EcnConfig, Fabric, FabricConfig, FabricEvent, LinkConfig, PfcConfig, RawFlow, SwitchConfig,
    Topology,
};
use std::io::BufWriter;
use units::{Bandwidth, Priority, SimTime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "incast.pcap".into());
    let topo = Topology::incast(2, LinkConfig::new(Bandwidth::gbps(100), 3))?;
    let switch = SwitchConfig {
        pfc: Some(PfcConfig::new(1 << 3, 40_000, 20_000)),
        ecn: Some(EcnConfig {
            kmin_bytes: 10_000,
            ..EcnConfig::dcqcn_paper(1 << 3)
        }),
        ..Default::default()
    };
    let mut fab = Fabric::new(
        &topo,
        FabricConfig {
            switch,
            seed: 4,
            ..Default::default()
        },
    )?;
    let out = BufWriter::new(std::fs::File::create(&path)?);
    fab.set_tap(PcapTap::new(out, &fab, CaptureAt::All)?);
    let h = topo.hosts();
    for &src in &h[1..] {
        fab.add_flow(RawFlow {
            src,
            dst: h[0],
            bytes: 400 * 4000,
            payload_mtu: 4000,
            priority: Priority::of(3),
            start: SimTime::ZERO,
            ecn_capable: true,
        })?;
    }
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    run(&mut fab, &mut sched, &Budget::default())?;
    let tap = fab
        .take_tap::<PcapTap<BufWriter<std::fs::File>>>()
        .ok_or("tap missing")?;
    let frames = tap.frames();
    tap.finish()?;
    let c = fab.counters();
    println!(
        "wrote {frames} frames to {path}: {} PAUSE, {} RESUME, {} ECN marks",
        c.pauses_sent, c.resumes_sent, c.ecn_marks
    );
    Ok(())
}
