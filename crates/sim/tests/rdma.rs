//! Verbs driven against the simulated fabric: bytes in memory, completions, loss recovery,
//! timing stages and a pcap that tshark decodes.

use engine::{Budget, ExecUnit, TraceRecord, Tracer, VecObserver};
use fabric::{FabricConfig, LinkConfig, Topology};
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

fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
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
            TraceRecord::Stage { stage, .. } => Some(*stage),
            _ => None,
        })
        .collect();
    for s in [
        "post_send (write WQE)",
        "MMIO doorbell + WQE (BlueFlame)",
        "DMA read payload",
        "NIC TX pipeline",
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
                    ..
                }
            )
        })
        .count();
    // post_send on the requester, and each application's own poll_cq: RDMA bypasses the kernel.
    assert_eq!(cpu_stages, 3);
    let responder: Vec<&str> = w.host(1).cpu().account().by_stage.keys().copied().collect();
    assert_eq!(
        responder,
        vec!["poll_cq"],
        "the responder's CPU only polled; the NIC placed the data"
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
fn sixteen_mib_survive_one_percent_loss() {
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
    let len: u64 = 16 << 20;
    let (abuf, amr) = buffer(&mut w, &a, 2 * len);
    let (bbuf, bmr) = buffer(&mut w, &b, 2 * len);
    let data = pattern(9, len as usize);
    w.verbs(0).memory_mut().write(abuf, &data).unwrap();
    // 16 WRITEs of 1 MiB, then READ the whole region back into the second half.
    let mut wrs = Vec::new();
    for i in 0..16u64 {
        let off = i << 20;
        wrs.push(
            SendWr::write(
                i,
                vec![Sge {
                    addr: abuf + off,
                    length: 1 << 20,
                    lkey: amr.lkey,
                }],
                bbuf + off,
                bmr.rkey,
            )
            .signaled(),
        );
    }
    for i in 0..16u64 {
        let off = i << 20;
        wrs.push(
            SendWr::read(
                100 + i,
                vec![Sge {
                    addr: abuf + len + off,
                    length: 1 << 20,
                    lkey: amr.lkey,
                }],
                bbuf + off,
                bmr.rkey,
            )
            .signaled(),
        );
    }
    w.post_send(0, a.qpn, &wrs).unwrap();
    run(&mut w, 200_000);
    let wcs = w.poll_cq(0, a.cq, 100).unwrap();
    assert_eq!(wcs.len(), 32, "every WR completes exactly once");
    assert!(
        wcs.iter().all(|c| c.status == WcStatus::Success),
        "{:?}",
        wcs.iter().map(|c| c.status).collect::<Vec<_>>()
    );
    let mut got = vec![0; len as usize];
    w.verbs(1).memory().read(bbuf, &mut got).unwrap();
    assert!(got == data, "WRITE data intact");
    w.verbs(0).memory().read(abuf + len, &mut got).unwrap();
    assert!(got == data, "READ data intact");
    let rc = w.host(0).requester_counters(a.qpn).unwrap();
    assert!(
        rc.packets_retransmitted > 0 && rc.sequence_naks > 0,
        "{rc:?}"
    );
    assert!(w.fabric.counters().drops_corruption > 0);
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
        w.fabric
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
        let h = w.fabric.tracer_mut().take::<engine::TraceHasher>().unwrap();
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
    let mut w = world(1.0); // every frame is lost
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
    w.post_send(0, a.qpn, &wrs).unwrap();
    run(&mut w, 2_000);
    let wcs = w.poll_cq(0, a.cq, 16).unwrap();
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
    // 4.096 µs × 2^4 = 65.5 µs per timeout, three timeouts before giving up.
    assert!(w.now() >= SimTime::ZERO + SimDuration::from_ps(3 * 65_536_000));
}
