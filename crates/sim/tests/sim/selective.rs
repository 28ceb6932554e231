//! Selective repeat (IRN-style) against go-back-N on the same lossy links: only what was
//! lost goes again, and every byte arrives (issue 7's acceptance for selective repeat).

use crate::support;

use engine::{Budget, PacketClass, PacketStage, TraceRecord, Tracer};
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::pattern;
use rdmalab::world::{Endpoint, RcOptions, World};
use units::{Bandwidth, Probability, SimDuration, SimTime};
use verbs::{
    AccessFlags, Mr, NicProfile, WcStatus,
    wr::{RecvWr, SendWr, Sge},
};

/// Request frames host 0 sent that the fabric dropped (host 0 only sends requests here).
#[derive(Default)]
struct Lost {
    host: u32,
    from_host0: std::collections::BTreeSet<u64>,
    lost: u64,
}
impl engine::Observer for Lost {
    fn record(&mut self, _at: SimTime, rec: &TraceRecord) {
        match rec {
            TraceRecord::Packet {
                stage: PacketStage::Dequeued,
                node,
                pkt,
                ..
            } if node.0 == self.host && pkt.class == PacketClass::RoceData => {
                self.from_host0.insert(pkt.uid);
            }
            TraceRecord::Dropped { pkt, .. } if self.from_host0.contains(&pkt.uid) => {
                self.lost += 1;
            }
            _ => {}
        }
    }
}

fn buffer(w: &mut World, e: &Endpoint, len: u64) -> (u64, Mr) {
    let v = w.verbs(e.host);
    let va = v.memory_mut().alloc(len).unwrap();
    let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
    let mr = v.reg_mr(e.pd, va, len, access).unwrap();
    (va, mr)
}

struct Outcome {
    lost_packets: u64,
    resent_packets: u64,
    resent_bytes: u64,
    placed_early: u64,
    mean_inflight: f64,
}

/// 16 MiB of WRITEs, 4 MiB of READs and 4 MiB of SENDs from host 0 to host 1 over links that
/// lose `loss` of the frames in each direction; checks every byte and completion.
fn transfer(loss: f64, selective: bool, seed: u64) -> Outcome {
    const MIB: u64 = 1 << 20;
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.corruption = Probability::from_f64(loss).unwrap();
    let topo = Topology::star(2, link).unwrap();
    let cfg = FabricConfig {
        seed,
        ..Default::default()
    };
    let mut w = World::new(&topo, cfg, Default::default(), NicProfile::Mlx5).unwrap();
    let host = w.host(0).node.0;
    w.fabric_mut().set_tracer(Tracer::new(Lost {
        host,
        ..Default::default()
    }));
    // Twice a bandwidth-delay product of 4 KiB packets on this path (as the report sizes it).
    w.set_selective_repeat(selective.then_some(16));
    let o = RcOptions {
        timeout: 12,
        rd_atomic: 2,
        ..Default::default()
    };
    let (a, b) = w.connect_rc(0, 1, &o).unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 24 * MIB);
    let (bbuf, bmr) = buffer(&mut w, &b, 24 * MIB);
    let data = pattern(seed, (16 * MIB) as usize);
    let sends = pattern(seed + 1, (4 * MIB) as usize);
    w.verbs(0).memory_mut().write(abuf, &data).unwrap();
    w.verbs(0)
        .memory_mut()
        .write(abuf + 20 * MIB, &sends)
        .unwrap();
    let recvs: Vec<RecvWr> = (0..4u64)
        .map(|i| {
            let sge = Sge {
                addr: bbuf + 16 * MIB + i * MIB,
                length: MIB as u32,
                lkey: bmr.lkey,
            };
            RecvWr::new(500 + i, vec![sge])
        })
        .collect();
    w.post_recv(1, b.qpn, &recvs).unwrap();
    let sge = |addr, len: u64| {
        vec![Sge {
            addr,
            length: len as u32,
            lkey: amr.lkey,
        }]
    };
    let mut wrs = Vec::new();
    for i in 0..16u64 {
        wrs.push(SendWr::write(i, sge(abuf + i * MIB, MIB), bbuf + i * MIB, bmr.rkey).signaled());
        if i % 4 == 3 {
            let k = i / 4;
            // Read back the MiB just written into [16, 20) MiB of A, and send one.
            wrs.push(
                SendWr::read(
                    100 + k,
                    sge(abuf + (16 + k) * MIB, MIB),
                    bbuf + i * MIB,
                    bmr.rkey,
                )
                .signaled(),
            );
            wrs.push(SendWr::send(200 + k, sge(abuf + (20 + k) * MIB, MIB)).signaled());
        }
    }
    w.post_send(0, a.qpn, &wrs).unwrap();
    let until = w.now() + SimDuration::from_ms(200);
    let n = wrs.len();
    w.run_until_cond(until, &Budget::default(), |w| {
        w.host(0).verbs.cq(a.cq).is_some_and(|c| c.len() >= n)
    })
    .unwrap();
    let wcs = w.poll_cq(0, a.cq, 100).unwrap();
    assert_eq!(
        wcs.len(),
        wrs.len(),
        "every WR completes once (selective {selective}, loss {loss})"
    );
    assert!(
        wcs.iter().all(|c| c.status == WcStatus::Success),
        "selective {selective} loss {loss} seed {seed}: {:?} {:?}",
        wcs.iter().map(|c| c.status).collect::<Vec<_>>(),
        w.host(0).requester_counters(a.qpn)
    );
    let read = |w: &mut World, h: u32, va: u64, len: u64| {
        let mut v = vec![0; len as usize];
        w.verbs(h).memory().read(va, &mut v).unwrap();
        v
    };
    assert!(
        read(&mut w, 1, bbuf, 16 * MIB) == data,
        "WRITE data byte-identical"
    );
    for k in 0..4u64 {
        let want = &data[((4 * k + 3) * MIB) as usize..((4 * k + 4) * MIB) as usize];
        assert!(
            read(&mut w, 0, abuf + (16 + k) * MIB, MIB) == want,
            "READ {k} byte-identical"
        );
    }
    assert!(
        read(&mut w, 1, bbuf + 16 * MIB, 4 * MIB) == sends,
        "SEND data byte-identical"
    );
    let rc = w.host(0).requester_counters(a.qpn).unwrap();
    let placed_early = w
        .host(1)
        .responder_counters(b.qpn)
        .map_or(0, |c| c.placed_early);
    let lost = w
        .fabric_mut()
        .tracer_mut()
        .take::<Lost>()
        .map_or(0, |o| o.lost);
    Outcome {
        lost_packets: lost,
        resent_packets: rc.packets_retransmitted,
        resent_bytes: rc.bytes_retransmitted,
        placed_early,
        mean_inflight: rc.mean_inflight(),
    }
}

#[test]
fn selective_repeat_resends_what_was_lost_and_go_back_n_a_window_per_loss() {
    for loss in [0.001, 0.01] {
        let (mut sr_lost, mut sr_resent, mut sr_bytes, mut early) = (0, 0, 0, 0);
        let (mut gbn_lost, mut gbn_resent, mut window) = (0, 0, 0.0);
        for seed in 1..=2 {
            let s = transfer(loss, true, seed);
            let g = transfer(loss, false, seed);
            sr_lost += s.lost_packets;
            sr_resent += s.resent_packets;
            sr_bytes += s.resent_bytes;
            early += s.placed_early;
            gbn_lost += g.lost_packets;
            gbn_resent += g.resent_packets;
            window += g.mean_inflight / 2.0;
        }
        eprintln!(
            "loss {loss}: selective {sr_resent} packets ({sr_bytes} B) resent for {sr_lost} lost, {early} placed early; go-back-N {gbn_resent} resent for {gbn_lost} lost, window {window:.1}"
        );
        assert!(
            sr_lost > 0 && gbn_lost > 0,
            "the links lost request packets"
        );
        assert!(early > 0, "packets after a gap were placed at once");
        assert!(
            sr_resent as f64 <= 1.2 * sr_lost as f64,
            "selective repeat resent {sr_resent} packets for {sr_lost} lost"
        );
        assert!(
            sr_bytes <= (1.2 * sr_lost as f64 * 4096.0) as u64,
            "resent bytes within 1.2 × the lost packets' payload"
        );
        let per_loss = gbn_resent as f64 / gbn_lost as f64;
        if loss < 0.005 {
            // Losses far apart: each go-back resends the window behind the lost packet.
            assert!(
                (0.5 * window..=1.5 * window).contains(&per_loss),
                "go-back-N resends about its window per loss: {per_loss:.1} per loss, window {window:.1}"
            );
        } else {
            // Several losses per window: one go-back covers them, still tens of packets each.
            assert!(
                per_loss >= 20.0,
                "go-back-N resends {per_loss:.1} packets per loss"
            );
        }
    }
}

/// A 12-packet WRITE under selective repeat with its 4th packet dropped, captured to pcap:
/// every packet after the first carries the IRN RETH for its own bytes and the BTH mark, the
/// responder's NAK carries a SACK map of what it placed, only the lost packet goes again, and
/// tshark decodes every frame as RoCE with the mark in BTH byte 8.
#[test]
fn irn_extension_on_the_wire_and_in_tshark() {
    use wire::{Frame, PcapReader, ib::irn, parse_frame};
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-sr-pcap-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("sr.pcap");
    let probe = {
        let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
        let mut w = World::new(
            &topo,
            Default::default(),
            Default::default(),
            NicProfile::Mlx5,
        )
        .unwrap();
        w.connect_rc(0, 1, &RcOptions::default()).unwrap().0.qpn
    };
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    // The setup exchange's frames travel on their own flow; this counts the QP's frames only.
    link.loss.rules.push(fabric::DropRule {
        flow: World::flow_of(0, probe),
        nth: 4,
        count: 1,
    });
    // One cable, so the capture holds each frame once.
    let topo = Topology::back_to_back(link).unwrap();
    let mut w = World::new(
        &topo,
        Default::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap();
    w.set_selective_repeat(Some(64));
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    assert_eq!(a.qpn, probe);
    let (abuf, amr) = buffer(&mut w, &a, 1 << 16);
    let (bbuf, bmr) = buffer(&mut w, &b, 1 << 16);
    let data = pattern(3, 12 * 4096);
    w.verbs(0).memory_mut().write(abuf, &data).unwrap();
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    w.fabric_mut()
        .set_tracer(Tracer::new(engine::VecObserver::default()));
    let sge = vec![Sge {
        addr: abuf,
        length: data.len() as u32,
        lkey: amr.lkey,
    }];
    w.post_send(
        0,
        a.qpn,
        &[SendWr::write(1, sge, bbuf, bmr.rkey).signaled()],
    )
    .unwrap();
    let until = w.now() + SimDuration::from_us(200);
    w.run_until(until, &Budget::default()).unwrap();
    w.finish_pcap().unwrap();
    let wcs = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(wcs.len(), 1);
    assert_eq!(wcs[0].status, WcStatus::Success);
    let mut got = vec![0; data.len()];
    w.verbs(1).memory().read(bbuf, &mut got).unwrap();
    assert!(got == data, "the WRITE arrived byte-identical");

    // The trace marks the same frames: every request after the first leaves host 0 marked.
    let host0 = w.host(0).node;
    let obs = w
        .fabric_mut()
        .tracer_mut()
        .take::<engine::VecObserver>()
        .unwrap();
    let marked_out = obs
        .records
        .iter()
        .filter(|(_, r)| {
            matches!(r, TraceRecord::Packet { stage: PacketStage::Dequeued, node, pkt, .. }
                if *node == host0 && pkt.class == PacketClass::RoceData && pkt.irn_ext)
        })
        .count();
    assert_eq!(
        marked_out, 12,
        "11 MIDDLE/LAST packets and the resend, marked in the trace"
    );

    let mut requests = Vec::new();
    let mut sacks = Vec::new();
    for rec in PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap() {
        let bytes = rec.unwrap().data;
        let Ok((Frame::Roce(f), _)) = parse_frame(&bytes) else {
            continue;
        };
        if f.bth.opcode.is_request() {
            requests.push((f.bth.psn, f.ext));
        } else if let Some(irn::Repr::Sack { psn, received }) = f.ext.irn {
            sacks.push((f.bth.psn, psn, received));
        }
    }
    let first = requests[0].0;
    let psns: Vec<u32> = requests.iter().map(|r| r.0 - first).collect();
    // The capture sees the dropped frame leave; it goes again once, after the SACKs for the
    // packets behind it, and nothing else does.
    for p in 0..12 {
        let n = psns.iter().filter(|&&q| q == p).count();
        assert_eq!(n, if p == 3 { 2 } else { 1 }, "PSN {p} in {psns:?}");
    }
    let again = psns.iter().rposition(|&q| q == 3).unwrap();
    assert!(
        again > psns.iter().position(|&q| q == 5).unwrap(),
        "{psns:?}"
    );
    for (psn, ext) in &requests {
        let i = (psn - first) as u64;
        if i == 0 {
            assert!(
                ext.reth.is_some() && ext.irn.is_none(),
                "FIRST has its RETH"
            );
        } else {
            let Some(irn::Repr::Write(r)) = ext.irn else {
                panic!("packet {i} without its IRN RETH: {ext:?}");
            };
            assert_eq!((r.va, r.rkey, r.dma_len), (bbuf + i * 4096, bmr.rkey, 4096));
        }
    }
    // Each packet after the gap is answered with the expected PSN (3) and a growing map.
    let sent = w.host(1).responder_counters(b.qpn).unwrap().sacks;
    assert!(sacks.len() as u64 == sent && sent >= 2, "{sacks:?}");
    for (k, &(cum, trigger, map)) in sacks.iter().enumerate() {
        let t = trigger - first;
        assert_eq!((cum - first, t), (3, 4 + k as u32), "{sacks:?}");
        assert_eq!(map, (1u64 << (t - 3)) - 1, "PSNs 4..={t} held");
    }

    let Some(out) = support::tshark(&[
        "-r",
        path.to_str().unwrap(),
        "-Y",
        "infiniband",
        "-T",
        "fields",
        "-e",
        "infiniband.bth.opcode",
        "-e",
        "infiniband.bth.reserved7",
        "-e",
        "_ws.expert.message",
    ]) else {
        return;
    };
    let rows: Vec<Vec<String>> = out
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    let marked = |op: &str| rows.iter().filter(|r| r[0] == op && r[1] == "64").count();
    assert_eq!(
        marked("7") + marked("8"),
        12,
        "MIDDLE and LAST packets marked: {rows:?}"
    );
    assert_eq!(marked("6"), 0, "FIRST needs no mark");
    assert_eq!(marked("17"), sacks.len(), "SACK NAKs marked");
    assert!(
        rows.iter().all(|r| r.get(2).is_none_or(|m| m.is_empty())),
        "no expert warnings: {rows:?}"
    );
}
