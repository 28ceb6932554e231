//! Verbs driven against the simulated fabric: bytes in memory, completions, loss recovery,
//! timing stages and a pcap that tshark decodes.

use engine::{Budget, ExecUnit, TraceRecord, Tracer, VecObserver};
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::pattern;
use rdmalab::world::{Endpoint, RcOptions, World};
use units::{Bandwidth, Probability, SimDuration, SimTime};
use verbs::{
    AccessFlags, Mr, NicProfile, WcStatus,
    wr::{RecvWr, SendWr, Sge},
};

fn world(loss: f64) -> World {
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.corruption = Probability::from_f64(loss).unwrap();
    let topo = Topology::star(2, link).unwrap();
    World::new(
        &topo,
        FabricConfig {
            seed: 7,
            ..Default::default()
        },
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap()
}

/// Two hosts through a switch; host 0's link is `link` (with its loss rules), host 1's clean.
fn pair_with_lossy_first_link(link: LinkConfig) -> World {
    let mut topo = Topology::new("pair with a lossy first link");
    let sw = topo.add_switch("sw");
    let h0 = topo.add_host("h0");
    let h1 = topo.add_host("h1");
    topo.connect(h0, sw, link);
    topo.connect(h1, sw, LinkConfig::new(Bandwidth::gbps(100), 3));
    World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap()
}

fn buffer(w: &mut World, e: &Endpoint, len: u64) -> (u64, Mr) {
    let v = w.verbs(e.host);
    let va = v.memory_mut().alloc(len).unwrap();
    let access = AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC;
    let mr = v.reg_mr(e.pd, va, len, access).unwrap();
    (va, mr)
}

fn run(w: &mut World, us: u64) {
    let until = w.now() + SimDuration::from_us(us);
    w.run_until(until, &Budget::default()).unwrap();
}

#[test]
fn rdma_write_places_bytes_and_completes_with_timed_stages() {
    let mut w = world(0.0);
    w.set_tracer(Tracer::new(VecObserver::default()));
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    let (src, smr) = buffer(&mut w, &a, 1 << 20);
    let (dst, dmr) = buffer(&mut w, &b, 1 << 20);
    let data = pattern(1, 64 << 10);
    w.verbs(0).memory_mut().write(src, &data).unwrap();
    let wr = SendWr::write(
        42,
        vec![Sge {
            addr: src,
            length: data.len() as u32,
            lkey: smr.lkey,
        }],
        dst,
        dmr.rkey,
    )
    .signaled();
    w.post_send(0, a.qpn, &[wr]).unwrap();
    run(&mut w, 100);
    let wcs = w.poll_cq(0, a.cq, 16).unwrap();
    assert_eq!(wcs.len(), 1);
    assert_eq!((wcs[0].wr_id, wcs[0].status), (42, WcStatus::Success));
    let mut got = vec![0; data.len()];
    w.verbs(1).memory().read(dst, &mut got).unwrap();
    assert!(
        got == data,
        "the responder's memory holds the written bytes"
    );
    assert!(
        w.poll_cq(1, b.cq, 16).unwrap().is_empty(),
        "a plain WRITE makes no receive completion"
    );
    // The path was timed: doorbell, payload DMA reads, NIC pipeline, DMA writes, CQE.
    let t = w.tracer_mut().take::<VecObserver>().unwrap();
    let stages: Vec<&str> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            TraceRecord::Stage { stage, .. } => Some(stage.name()),
            _ => None,
        })
        .collect();
    for s in [
        "post_send (write WQE)",
        "MMIO doorbell + WQE (BlueFlame)",
        "DMA read payload",
        "NIC TX pipeline",
        "NIC RX pipeline",
        "DMA write payload",
        "DMA write CQE",
    ] {
        assert!(stages.contains(&s), "missing stage {s}: {stages:?}");
    }
    let cpu_stages = t
        .records
        .iter()
        .filter(|(_, r)| {
            matches!(
                r,
                TraceRecord::Stage {
                    unit: ExecUnit::Cpu(_),
                    setup: false,
                    ..
                }
            )
        })
        .count();
    // post_send on the requester, and each application's own poll_cq: RDMA bypasses the kernel.
    assert_eq!(cpu_stages, 3);
    // Setup went through the kernel: three modify_qp ioctls per side, each a firmware command.
    let setup: Vec<&str> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            TraceRecord::Stage {
                stage,
                setup: true,
                unit: ExecUnit::Cpu(_),
                ..
            } => Some(stage.name()),
            _ => None,
        })
        .collect();
    assert_eq!(
        setup.iter().filter(|s| **s == "ioctl modify_qp").count(),
        6,
        "{setup:?}"
    );
    assert_eq!(setup.iter().filter(|s| **s == "ioctl create_qp").count(), 2);
    let responder = w.host(1).cpu().account();
    let data_path: Vec<&str> = responder.by_stage.keys().map(|s| s.name()).collect();
    assert_eq!(
        data_path,
        vec!["poll_cq"],
        "the responder's CPU only polled; the NIC placed the data"
    );
    assert!(
        responder
            .setup_by_stage
            .contains_key(&engine::Stage::IoctlCreateQp)
            && responder
                .setup_by_stage
                .contains_key(&engine::Stage::WriteEntry),
        "setup holds the verbs ioctls and the TCP exchange: {:?}",
        responder.setup_by_stage.keys().collect::<Vec<_>>()
    );
    assert!(
        responder.setup > responder.data_path,
        "setup cost more CPU than the data path"
    );
}

#[test]
fn send_read_and_atomics_move_the_right_bytes() {
    let mut w = world(0.0);
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 1 << 20);
    let (bbuf, bmr) = buffer(&mut w, &b, 1 << 20);
    let msg = pattern(2, 10_000);
    w.verbs(0).memory_mut().write(abuf, &msg).unwrap();
    let remote = pattern(3, 20_000);
    w.verbs(1)
        .memory_mut()
        .write(bbuf + 100_000, &remote)
        .unwrap();
    w.verbs(1)
        .memory_mut()
        .write_u64(bbuf + 500_000, 5)
        .unwrap();
    w.post_recv(
        1,
        b.qpn,
        &[RecvWr::new(
            7,
            vec![Sge {
                addr: bbuf,
                length: 16_384,
                lkey: bmr.lkey,
            }],
        )],
    )
    .unwrap();
    let wrs = [
        SendWr::send_with_imm(
            1,
            vec![Sge {
                addr: abuf,
                length: 10_000,
                lkey: amr.lkey,
            }],
            0x1234,
        )
        .signaled(),
        SendWr::read(
            2,
            vec![Sge {
                addr: abuf + 200_000,
                length: 20_000,
                lkey: amr.lkey,
            }],
            bbuf + 100_000,
            bmr.rkey,
        )
        .signaled(),
        SendWr::cmp_and_swp(
            3,
            vec![Sge {
                addr: abuf + 300_000,
                length: 8,
                lkey: amr.lkey,
            }],
            bbuf + 500_000,
            bmr.rkey,
            5,
            9,
        )
        .signaled(),
        SendWr::fetch_and_add(
            4,
            vec![Sge {
                addr: abuf + 300_008,
                length: 8,
                lkey: amr.lkey,
            }],
            bbuf + 500_000,
            bmr.rkey,
            3,
        )
        .signaled(),
    ];
    w.post_send(0, a.qpn, &wrs).unwrap();
    run(&mut w, 200);
    let wcs = w.poll_cq(0, a.cq, 16).unwrap();
    let got: Vec<(u64, WcStatus)> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        got,
        vec![
            (1, WcStatus::Success),
            (2, WcStatus::Success),
            (3, WcStatus::Success),
            (4, WcStatus::Success)
        ]
    );
    let rwc = w.poll_cq(1, b.cq, 16).unwrap();
    assert_eq!(rwc.len(), 1);
    assert_eq!(
        (rwc[0].wr_id, rwc[0].byte_len, rwc[0].imm_data),
        (7, 10_000, Some(0x1234))
    );
    let mut recv = vec![0; 10_000];
    w.verbs(1).memory().read(bbuf, &mut recv).unwrap();
    assert!(recv == msg, "SEND landed in the receive buffer");
    let mut read = vec![0; 20_000];
    w.verbs(0).memory().read(abuf + 200_000, &mut read).unwrap();
    assert!(read == remote, "READ brought the remote bytes");
    let m0 = w.verbs(0).memory();
    assert_eq!(
        m0.read_u64(abuf + 300_000).unwrap(),
        5,
        "CAS returns the original"
    );
    assert_eq!(
        m0.read_u64(abuf + 300_008).unwrap(),
        9,
        "FADD saw the swapped value"
    );
    assert_eq!(w.verbs(1).memory().read_u64(bbuf + 500_000).unwrap(), 12);
}

#[test]
fn sixty_four_mib_of_writes_reads_and_sends_survive_one_percent_loss() {
    let mut w = world(0.01);
    // Two READs in flight: go-back-N re-requests every later READ after a lost response, so a
    // deep READ pipeline under 1% loss spends most of its time resending (the lab shows that).
    let o = RcOptions {
        timeout: 8,
        rd_atomic: 2,
        ..Default::default()
    };
    let (a, b) = w.connect_rc(0, 1, &o).unwrap();
    const MIB: u64 = 1 << 20;
    let (abuf, amr) = buffer(&mut w, &a, 64 * MIB);
    let (bbuf, bmr) = buffer(&mut w, &b, 64 * MIB);
    // A's memory: [0, 24) MiB written to B, [24, 48) MiB read back from B, [48, 64) MiB sent.
    let data = pattern(9, (24 * MIB) as usize);
    let sends = pattern(10, (16 * MIB) as usize);
    w.verbs(0).memory_mut().write(abuf, &data).unwrap();
    w.verbs(0)
        .memory_mut()
        .write(abuf + 48 * MIB, &sends)
        .unwrap();
    let mut recvs = Vec::new();
    for i in 0..16u64 {
        let sge = Sge {
            addr: bbuf + 24 * MIB + i * MIB,
            length: MIB as u32,
            lkey: bmr.lkey,
        };
        recvs.push(RecvWr::new(500 + i, vec![sge]));
    }
    w.post_recv(1, b.qpn, &recvs).unwrap();
    let mut wrs = Vec::new();
    for i in 0..24u64 {
        let sge = Sge {
            addr: abuf + i * MIB,
            length: MIB as u32,
            lkey: amr.lkey,
        };
        wrs.push(SendWr::write(i, vec![sge], bbuf + i * MIB, bmr.rkey).signaled());
    }
    for i in 0..24u64 {
        let sge = Sge {
            addr: abuf + 24 * MIB + i * MIB,
            length: MIB as u32,
            lkey: amr.lkey,
        };
        wrs.push(SendWr::read(100 + i, vec![sge], bbuf + i * MIB, bmr.rkey).signaled());
    }
    for i in 0..16u64 {
        let sge = Sge {
            addr: abuf + 48 * MIB + i * MIB,
            length: MIB as u32,
            lkey: amr.lkey,
        };
        wrs.push(SendWr::send(200 + i, vec![sge]).signaled());
    }
    w.post_send(0, a.qpn, &wrs).unwrap();
    run(&mut w, 400_000);
    let wcs = w.poll_cq(0, a.cq, 100).unwrap();
    assert_eq!(wcs.len(), 64, "every WR completes exactly once");
    let mut ids: Vec<u64> = wcs.iter().map(|c| c.wr_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 64);
    assert!(
        wcs.iter().all(|c| c.status == WcStatus::Success),
        "{:?}",
        wcs.iter().map(|c| c.status).collect::<Vec<_>>()
    );
    let rwcs = w.poll_cq(1, b.cq, 100).unwrap();
    assert_eq!(
        rwcs.iter()
            .map(|c| (c.wr_id, c.byte_len))
            .collect::<Vec<_>>(),
        (0..16).map(|i| (500 + i, MIB as u32)).collect::<Vec<_>>()
    );
    let read = |w: &mut World, h: u32, va: u64, len: u64| {
        let mut v = vec![0; len as usize];
        w.verbs(h).memory().read(va, &mut v).unwrap();
        v
    };
    assert!(
        read(&mut w, 1, bbuf, 24 * MIB) == data,
        "WRITE data byte-identical"
    );
    assert!(
        read(&mut w, 0, abuf + 24 * MIB, 24 * MIB) == data,
        "READ data byte-identical"
    );
    assert!(
        read(&mut w, 1, bbuf + 24 * MIB, 16 * MIB) == sends,
        "SEND data byte-identical"
    );
    let rc = w.host(0).requester_counters(a.qpn).unwrap();
    assert!(
        rc.packets_retransmitted > 0 && rc.sequence_naks > 0,
        "{rc:?}"
    );
}

/// Departure times of frames leaving host `host`, and request frames lost on the wire.
#[derive(Default)]
struct LossLog {
    host: u32,
    departed: std::collections::BTreeMap<u64, SimTime>,
    drops: Vec<(SimTime, u64)>,
}
impl engine::Observer for LossLog {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        match rec {
            TraceRecord::Packet {
                stage: engine::PacketStage::Dequeued,
                node,
                pkt,
                ..
            } if node.0 == self.host => {
                self.departed.insert(pkt.uid, at);
            }
            TraceRecord::Dropped { pkt, .. } if pkt.class == engine::PacketClass::RoceData => {
                self.drops.push((at, pkt.uid));
            }
            _ => {}
        }
    }
}

#[test]
fn go_back_n_resends_about_one_window_per_loss() {
    // Go-back-N's cost: a lost request packet is noticed when the next one reaches the
    // responder, whose NAK then travels back; by then the requester has sent the rest of its
    // window after the lost packet, and resends it all. Losses are placed deterministically on
    // the request direction only (every 400th frame of A's flow on A's link), so every loss is
    // recovered by exactly one NAK and no ACK or NAK is lost. The window is measured per loss:
    // the time from the lost frame leaving A's port to A acting on the NAK, in frame times, plus
    // the frames the NIC had gathered ahead of its port (its request budget, full while it
    // streams, and the frames queued at the port) and the lost frame itself.
    // Expected resends = NAKs × window, within ±25%.
    let qpn = world(0.0)
        .connect_rc(0, 1, &RcOptions::default())
        .unwrap()
        .0
        .qpn;
    let flow = World::flow_of(0, qpn);
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.rules = (1..=40)
        .map(|k| fabric::DropRule {
            flow,
            nth: 400 * k,
            count: 1,
        })
        .collect();
    let mut w = pair_with_lossy_first_link(link);
    let (a, b) = w
        .connect_rc(
            0,
            1,
            &RcOptions {
                timeout: 8,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(a.qpn, qpn, "QP numbers are deterministic");
    let host_a = w.host(0).node.0;
    w.fabric_mut().set_tracer(Tracer::new(LossLog {
        host: host_a,
        ..Default::default()
    }));
    w.set_tracer(Tracer::new(VecObserver::default()));
    let len: u64 = 64 << 20;
    let src = w.verbs(0).memory_mut().alloc_synthetic(len, 3).unwrap();
    let smr = w
        .verbs(0)
        .reg_mr(a.pd, src, len, AccessFlags::LOCAL_WRITE)
        .unwrap();
    let dst = w.verbs(1).memory_mut().alloc_synthetic(len, 3).unwrap();
    let dmr = w
        .verbs(1)
        .reg_mr(
            b.pd,
            dst,
            len,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let wrs: Vec<SendWr> = (0..64u64)
        .map(|i| {
            SendWr::write(
                i,
                vec![Sge {
                    addr: src + (i << 20),
                    length: 1 << 20,
                    lkey: smr.lkey,
                }],
                dst + (i << 20),
                dmr.rkey,
            )
            .signaled()
        })
        .collect();
    w.post_send(0, a.qpn, &wrs).unwrap();
    run(&mut w, 200_000);
    assert_eq!(w.poll_cq(0, a.cq, 100).unwrap().len(), 64);
    let stats = w.verbs(1).memory().synthetic_stats(dst).unwrap();
    assert_eq!(
        stats.mismatched_bytes, 0,
        "every byte placed where it belongs"
    );
    let log = w.fabric_mut().tracer_mut().take::<LossLog>().unwrap();
    let naks: Vec<SimTime> = w
        .tracer_mut()
        .take::<VecObserver>()
        .unwrap()
        .records
        .iter()
        .filter_map(|(t, r)| {
            matches!(
                r,
                TraceRecord::Retransmit {
                    reason: "sequence NAK",
                    ..
                }
            )
            .then_some(*t)
        })
        .collect();
    assert_eq!(log.drops.len(), 40);
    assert_eq!(naks.len(), 40, "one NAK per loss");
    let mut delays = Vec::new();
    for (&g, &(_, uid)) in naks.iter().zip(&log.drops) {
        delays.push((g - log.departed[&uid]).as_ps());
    }
    let frame_ps = ((4096 + 58 + 20) * 80) as f64; // a 4 KiB-payload frame at 100 Gb/s
    let mean_delay = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
    let frame_bytes = (4096 + 58) as f64;
    let ahead = w.host(0).nic_tx().limit() as f64 / frame_bytes + host::PORT_AHEAD_FRAMES as f64;
    let window = 1.0 + ahead + mean_delay / frame_ps;
    let rc = w.host(0).requester_counters(a.qpn).unwrap();
    let expect = naks.len() as f64 * window;
    let got = rc.packets_retransmitted as f64;
    eprintln!(
        "40 losses, loss-to-NAK {:.2} µs, window {window:.1} frames: expected {expect:.0} resent, got {got}",
        mean_delay / 1e6
    );
    assert_eq!(rc.timeouts, 0);
    assert!(
        (got - expect).abs() <= 0.25 * expect,
        "resent {got}, go-back-N expectation {expect:.0}"
    );
}

#[test]
fn same_seed_same_result() {
    let once = || {
        let mut w = world(0.01);
        let (a, b) = w
            .connect_rc(
                0,
                1,
                &RcOptions {
                    timeout: 8,
                    ..Default::default()
                },
            )
            .unwrap();
        let (abuf, amr) = buffer(&mut w, &a, 4 << 20);
        let (bbuf, bmr) = buffer(&mut w, &b, 4 << 20);
        w.fabric_mut()
            .set_tracer(Tracer::new(engine::TraceHasher::default()));
        let wr = SendWr::write(
            1,
            vec![Sge {
                addr: abuf,
                length: 4 << 20,
                lkey: amr.lkey,
            }],
            bbuf,
            bmr.rkey,
        )
        .signaled();
        w.post_send(0, a.qpn, &[wr]).unwrap();
        run(&mut w, 10_000);
        let h = w
            .fabric_mut()
            .tracer_mut()
            .take::<engine::TraceHasher>()
            .unwrap();
        (
            h.hash(),
            h.records(),
            w.now(),
            w.host(0).requester_counters(a.qpn).unwrap(),
        )
    };
    assert_eq!(once(), once());
}

#[test]
fn unreachable_peer_exhausts_retries_then_flushes() {
    // Every frame of A's QP is lost (the connection exchange before it got through).
    let qpn = world(0.0)
        .connect_rc(0, 1, &RcOptions::default())
        .unwrap()
        .0
        .qpn;
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.rules.push(fabric::DropRule {
        flow: World::flow_of(0, qpn),
        nth: 1,
        count: 1 << 40,
    });
    let mut w = pair_with_lossy_first_link(link);
    let (a, _b) = w
        .connect_rc(
            0,
            1,
            &RcOptions {
                timeout: 4,
                retry_cnt: 2,
                ..Default::default()
            },
        )
        .unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 1 << 16);
    let wrs = [
        SendWr::send(
            1,
            vec![Sge {
                addr: abuf,
                length: 100,
                lkey: amr.lkey,
            }],
        ),
        SendWr::send(
            2,
            vec![Sge {
                addr: abuf,
                length: 100,
                lkey: amr.lkey,
            }],
        ),
    ];
    let t0 = w.now();
    w.post_send(0, a.qpn, &wrs).unwrap();
    // Poll every microsecond until something completes.
    let mut wcs = Vec::new();
    while wcs.is_empty() && w.now() < t0 + SimDuration::from_ms(2) {
        run(&mut w, 1);
        wcs = w.poll_cq(0, a.cq, 16).unwrap();
    }
    let waited = w.now() - t0;
    // 4.096 µs × 2^4 = 65.5 µs per timeout: the first try and two retries time out, and the
    // third timeout gives up.
    assert!(waited >= SimDuration::from_ps(3 * 65_536_000), "{waited}");
    assert!(waited < SimDuration::from_ps(4 * 65_536_000), "{waited}");
    let got: Vec<(u64, WcStatus)> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
    // Unsignaled, yet errors always complete (IBA 10.7.3.1); the next WR is flushed.
    assert_eq!(
        got,
        vec![(1, WcStatus::RetryExcErr), (2, WcStatus::WrFlushErr)]
    );
    assert_eq!(
        w.verbs(0).qp_state(a.qpn).unwrap(),
        verbs::types::QpState::Err
    );
}

#[test]
fn lost_retransmission_waits_for_the_local_ack_timeout() {
    // Frame 10 of A's flow is lost; frame 11 makes the responder NAK; the resend of the lost
    // packet falls in frames 20..60, which are lost too. The responder NAKs once per gap, so only
    // the local ACK timer (4.096 µs × 2^10 ≈ 4.2 ms) recovers; the trace shows the wait.
    let qpn = world(0.0)
        .connect_rc(0, 1, &RcOptions::default())
        .unwrap()
        .0
        .qpn;
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    let flow = World::flow_of(0, qpn);
    link.loss.rules.push(fabric::DropRule {
        flow,
        nth: 10,
        count: 1,
    });
    link.loss.rules.push(fabric::DropRule {
        flow,
        nth: 20,
        count: 41,
    });
    let mut w = pair_with_lossy_first_link(link);
    w.set_tracer(Tracer::new(VecObserver::default()));
    let (a, b) = w
        .connect_rc(
            0,
            1,
            &RcOptions {
                timeout: 10,
                ..Default::default()
            },
        )
        .unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 1 << 20);
    let (bbuf, bmr) = buffer(&mut w, &b, 1 << 20);
    let data = pattern(5, 100 * 4096);
    w.verbs(0).memory_mut().write(abuf, &data).unwrap();
    let wr = SendWr::write(
        1,
        vec![Sge {
            addr: abuf,
            length: data.len() as u32,
            lkey: amr.lkey,
        }],
        bbuf,
        bmr.rkey,
    )
    .signaled();
    w.post_send(0, a.qpn, &[wr]).unwrap();
    run(&mut w, 20_000);
    let wcs = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(
        wcs.iter().map(|c| c.status).collect::<Vec<_>>(),
        vec![WcStatus::Success]
    );
    let mut got = vec![0; data.len()];
    w.verbs(1).memory().read(bbuf, &mut got).unwrap();
    assert!(got == data);
    let t = w.tracer_mut().take::<VecObserver>().unwrap();
    let retx: Vec<(SimTime, &str)> = t
        .records
        .iter()
        .filter_map(|(at, r)| match r {
            TraceRecord::Retransmit { reason, .. } => Some((*at, *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(retx[0].1, "sequence NAK");
    let timeout = retx
        .iter()
        .find(|r| r.1 == "ACK timeout")
        .expect("the timeout recovered the lost retransmission");
    let waited = timeout.0 - retx[0].0;
    assert!(
        waited >= SimDuration::from_ps(4_096_000 << 10) - SimDuration::from_us(10),
        "waited {waited}"
    );
    assert_eq!(w.host(0).requester_counters(a.qpn).unwrap().timeouts, 1);
}

/// A QP moved to ERR while a received message's CQE is still crossing PCIe: that SUCCESS
/// completion comes before the flush completions of the receives behind it, as the message
/// was received before the error.
#[test]
fn a_receive_completion_in_flight_lands_before_the_flush() {
    let mut w = world(0.0);
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 4096);
    let (bbuf, bmr) = buffer(&mut w, &b, 4096);
    let msg = pattern(11, 64);
    w.verbs(0).memory_mut().write(abuf, &msg).unwrap();
    let recv = |id: u64, off: u64| {
        RecvWr::new(
            id,
            vec![Sge {
                addr: bbuf + off,
                length: 1024,
                lkey: bmr.lkey,
            }],
        )
    };
    w.post_recv(1, b.qpn, &[recv(1, 0), recv(2, 1024)]).unwrap();
    let send = SendWr::send(
        9,
        vec![Sge {
            addr: abuf,
            length: 64,
            lkey: amr.lkey,
        }],
    )
    .signaled();
    w.post_send(0, a.qpn, &[send]).unwrap();
    // Step until the payload is in B's memory while B's CQ is still empty: the CQE is on its
    // way.
    let mut got = vec![0u8; 64];
    let mut caught = false;
    for _ in 0..100_000 {
        let t = w.now() + SimDuration::from_ns(1);
        w.run_until(t, &Budget::default()).unwrap();
        w.verbs(1).memory().read(bbuf, &mut got).unwrap();
        if got == msg {
            caught = w.host(1).verbs.cq(b.cq).is_some_and(|c| c.is_empty());
            break;
        }
    }
    assert!(caught, "the payload landed before its CQE");
    let err = verbs::QpAttr {
        qp_state: verbs::types::QpState::Err,
        ..Default::default()
    };
    w.modify_qp(1, b.qpn, &err, verbs::QpAttrMask::STATE)
        .unwrap();
    run(&mut w, 10);
    let wcs = w.poll_cq(1, b.cq, 8).unwrap();
    let got: Vec<(u64, WcStatus)> = wcs.iter().map(|c| (c.wr_id, c.status)).collect();
    assert_eq!(
        got,
        vec![(1, WcStatus::Success), (2, WcStatus::WrFlushErr)],
        "the received message first, then the flush"
    );
}

/// `ib_write_bw -s 65536` of one RC QP on preset ①'s fabric with `sets`, Gb/s of payload over
/// the run (perftest's BW average), summed over the directions.
fn write_bw_gbps(sets: &[&str], bidirectional: bool) -> f64 {
    let plan = scenario::preset("lesson1")
        .unwrap()
        .plan()
        .and_then(|mut p| p.set_all(sets).map(|()| p))
        .unwrap();
    let o = rdmalab::perftest::Options {
        test: rdmalab::perftest::Test::WriteBw,
        sizes: vec![65536],
        iters: 1000,
        tx_depth: 128,
        bidirectional,
        inline: 0,
        cq_mod: rdmalab::perftest::DEF_CQ_MOD,
        qps: 1,
    };
    match rdmalab::perftest::run(&plan, &Default::default(), &o).unwrap() {
        rdmalab::perftest::Rows::Bw(r) => r[0].avg_bps * 8.0 / 1e9,
        rows => panic!("a bandwidth test gave {rows:?}"),
    }
}

/// The link's goodput for WRITE payload at RoCE MTU `mtu`: each full packet carries `mtu`
/// bytes in a frame of `mtu` + 62 bytes (Ethernet, IPv4, UDP, BTH, ICRC, FCS) plus 20 bytes
/// of preamble and inter-frame gap on the wire.
fn goodput_gbps(link_gbps: f64, mtu: f64) -> f64 {
    link_gbps * mtu / (mtu + 62.0 + 20.0)
}

#[test]
fn one_qp_fills_100g_at_every_common_mtu_both_ways() {
    // The NIC keeps many payload reads in flight (its budget covers a read round trip at line
    // rate), so one QP is not bound by a window of frames each paying the round trip.
    for mtu in [1024u32, 2048, 4096] {
        let m = format!("rdma.mtu_bytes={mtu}");
        let sets = ["topology.link_gbps=100", "host.pcie_generation=3", &m];
        let want = 0.95 * goodput_gbps(100.0, mtu as f64);
        let uni = write_bw_gbps(&sets, false);
        assert!(uni >= want, "MTU {mtu}: {uni:.2} Gb/s, want ≥ {want:.2}");
        // Both ways: ACKs have their own budget and take no data frame's room.
        let bi = write_bw_gbps(&sets, true);
        assert!(
            bi >= 2.0 * want,
            "MTU {mtu} -b: {bi:.2} Gb/s, want ≥ {:.2}",
            2.0 * want
        );
    }
}

#[test]
fn one_qp_reaches_90_percent_at_200g_gen4_and_400g_gen5() {
    for (gbps, gen_) in [(200u32, 4u32), (400, 5)] {
        for mtu in [1024u32, 4096] {
            let sets = [
                format!("topology.link_gbps={gbps}"),
                format!("host.pcie_generation={gen_}"),
                format!("rdma.mtu_bytes={mtu}"),
            ];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let want = 0.90 * goodput_gbps(gbps as f64, mtu as f64);
            let got = write_bw_gbps(&sets, false);
            assert!(
                got >= want,
                "{gbps}G Gen{gen_} x16 MTU {mtu}: {got:.2} Gb/s, want ≥ {want:.2}"
            );
        }
    }
}

#[test]
fn fewer_pcie_lanes_still_cap_one_qp() {
    // Gen3 carries 57.88 Gb/s per 8 lanes after encoding and DLL overhead (figures.md §3): the
    // payload reads cannot go faster, whatever the NIC keeps in flight.
    for (lanes, cap) in [(8u32, 57.88), (4, 28.94)] {
        let l = format!("host.pcie_lanes={lanes}");
        let got = write_bw_gbps(&["topology.link_gbps=100", &l], false);
        assert!(
            got <= cap && got >= 0.95 * cap,
            "Gen3 x{lanes}: {got:.2} Gb/s, the PCIe cap is {cap}"
        );
    }
}

/// The longest RoCEv2 packet at the path MTU 4096 — a WRITE ONLY with immediate, RETH and
/// ImmDt beside 4096 bytes of payload, a 4,160-byte IP packet — passes a switch whose ports
/// have the default IP MTU (4,192: what Linux requires of a RoCE interface at that path MTU),
/// and the receiver's CQE carries the immediate. (With the ports at 4,156, as a RETH-only
/// allowance gave, this WRITE was dropped as oversize and ended in RETRY_EXC_ERR.)
#[test]
fn a_full_mtu_write_with_immediate_passes_the_default_port_mtu() {
    assert_eq!(fabric::config::DEFAULT_PORT_MTU_BYTES, 4_096 + 96);
    let mut w = world(0.0);
    let o = RcOptions::default();
    let (a, b) = w.connect_rc(0, 1, &o).unwrap();
    let (abuf, amr) = buffer(&mut w, &a, 8192);
    let (bbuf, bmr) = buffer(&mut w, &b, 8192);
    let msg = pattern(9, 4096);
    w.verbs(0).memory_mut().write(abuf, &msg).unwrap();
    w.post_recv(1, b.qpn, &[RecvWr::new(5, vec![])]).unwrap();
    let sge = vec![Sge {
        addr: abuf,
        length: 4096,
        lkey: amr.lkey,
    }];
    w.post_send(
        0,
        a.qpn,
        &[SendWr::write_with_imm(1, sge, bbuf, bmr.rkey, 0xabcd).signaled()],
    )
    .unwrap();
    run(&mut w, 100);
    let sent = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status, WcStatus::Success, "{sent:?}");
    let got = w.poll_cq(1, b.cq, 4).unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].status, got[0].imm_data),
        (WcStatus::Success, Some(0xabcd))
    );
    let mut placed = vec![0u8; 4096];
    w.verbs(1).memory().read(bbuf, &mut placed).unwrap();
    assert_eq!(placed, msg);
    assert_eq!(w.fabric().counters().drops(), 0);
}
