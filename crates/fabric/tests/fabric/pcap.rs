//! A fabric run written to pcap: PFC frames and ECN marks as Wireshark (tshark) decodes them.
//!
//! Without tshark on PATH the tshark half fails when `CI` is set and otherwise prints a loud
//! warning; the crate's own reader always re-parses every frame (checking IPv4 checksums and
//! ICRCs).

#[path = "../../../../testing/tshark.rs"]
mod tshark_run;

use engine::{Budget, Scheduler, run};
use fabric::capture::{CaptureAt, PcapTap};
use fabric::{
    EcnConfig, Fabric, FabricConfig, FabricEvent, LinkConfig, PfcConfig, RawFlow, SwitchConfig,
    Topology,
};
use std::fs::File;
use std::io::BufWriter;
use units::{Bandwidth, Priority, SimTime};
use wire::{Ecn, Frame, PcapReader, parse_frame, pfc};

#[test]
fn incast_capture_shows_pfc_frames_and_ecn_marks() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-fabric-pcap-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("incast.pcap");

    let topo = Topology::incast(2, LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let switch = SwitchConfig {
        buffer_bytes: 1 << 20,
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
    )
    .unwrap();
    let out = BufWriter::new(File::create(&path).unwrap());
    fab.set_tap(PcapTap::new(out, &fab, CaptureAt::All).unwrap());
    let h = topo.hosts();
    for &s in &h[1..] {
        fab.add_flow(RawFlow {
            src: s,
            dst: h[0],
            bytes: 400 * 4000,
            payload_mtu: 4000,
            priority: Priority::of(3),
            start: SimTime::ZERO,
            ecn_capable: true,
        })
        .unwrap();
    }
    let mut sched: Scheduler<FabricEvent> = Scheduler::new();
    fab.schedule_flows(&mut sched);
    run(&mut fab, &mut sched, &Budget::default()).unwrap();
    let tap = fab.take_tap::<PcapTap<BufWriter<File>>>().unwrap();
    let written = tap.frames();
    tap.finish()
        .unwrap()
        .into_inner()
        .unwrap()
        .sync_all()
        .unwrap();
    let c = fab.counters();
    assert!(c.pauses_sent > 0 && c.ecn_marks > 0, "{c:?}");
    // Each data frame crosses two links; PFC frames one.
    let pfc_frames = c.pauses_sent + c.resumes_sent;
    assert_eq!(written, 2 * 800 + pfc_frames);

    // Our own reader: every frame parses, ICRCs and checksums verify.
    let mut ce = 0;
    let mut pauses = 0;
    let mut resumes = 0;
    let mut last_ns = 0;
    for rec in PcapReader::new(File::open(&path).unwrap()).unwrap() {
        let rec = rec.unwrap();
        let (frame, _) = parse_frame(&rec.data).unwrap();
        match frame {
            Frame::Roce(r) => ce += (r.ip.ecn == Ecn::Ce) as u64,
            Frame::Pfc(p) => match p.control {
                pfc::Repr::Pfc {
                    class_enable: 0x08,
                    quanta,
                } if quanta[3] > 0 => pauses += 1,
                pfc::Repr::Pfc {
                    class_enable: 0x08, ..
                } => resumes += 1,
                other => panic!("unexpected MAC control frame {other:?}"),
            },
            other => panic!("unexpected frame {other:?}"),
        }
        last_ns = last_ns.max(rec.time_ns);
    }
    assert_eq!((pauses, resumes), (c.pauses_sent, c.resumes_sent));
    assert_eq!(ce, c.ecn_marks);
    assert!(
        last_ns > 100_000,
        "timestamps are simulated nanoseconds: last {last_ns}"
    );

    // tshark, an independent decoder.
    let fields = |filter: &str, field: &str| -> Option<Vec<String>> {
        let text = tshark_run::tshark(&[
            "-r",
            path.to_str().unwrap(),
            "-Y",
            filter,
            "-T",
            "fields",
            "-e",
            field,
        ])?;
        Some(text.lines().map(str::to_owned).collect())
    };
    let Some(enbv) = fields("macc.opcode == 0x0101", "macc.cbfc.enbv") else {
        return;
    };
    assert_eq!(enbv.len() as u64, pfc_frames);
    assert!(
        enbv.iter().all(|v| v == "0x0008"),
        "class-enable vector: priority 3 only: {enbv:?}"
    );
    let c3 = fields("macc.opcode == 0x0101", "macc.cbfc.pause_time.c3").expect("tshark ran above");
    assert_eq!(
        c3.iter().filter(|v| *v == "65535").count() as u64,
        c.pauses_sent
    );
    assert_eq!(
        c3.iter().filter(|v| *v == "0").count() as u64,
        c.resumes_sent
    );
    assert_eq!(
        fields("ip.dsfield.ecn == 3", "frame.number")
            .expect("tshark ran above")
            .len() as u64,
        c.ecn_marks
    );
    let prio = fields("infiniband", "vlan.priority").expect("tshark ran above");
    assert_eq!(prio.len(), 1600);
    assert!(prio.iter().all(|p| p == "3"));
    let ops = fields("infiniband", "infiniband.bth.opcode").expect("tshark ran above");
    assert!(ops.iter().all(|o| o == "4"), "RC SEND_ONLY");
}
