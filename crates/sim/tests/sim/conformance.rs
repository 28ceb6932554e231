//! Conformance cases of research/verbs-spec.md §7 that need packets on a wire, run end to end
//! through the world under the NIC profiles they concern. (The cases without packets are in
//! crates/verbs/tests/verbs/conformance.rs; scenarios/verbs/ holds sessions for more.)

use crate::support;

use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{Endpoint, World};
use units::{Bandwidth, SimDuration};
use verbs::{
    AccessFlags, Errno, NicProfile, QpAttr, QpAttrMask as M, WcStatus,
    qp::{QpCap, QpInitAttr},
    types::{AhAttr, Gid, Mtu, QpState, QpType},
    wr::{RecvWr, SendWr, Sge},
};

fn world(profile: NicProfile) -> World {
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    World::new(&topo, FabricConfig::default(), Default::default(), profile).unwrap()
}

/// A one-element SGE list.
fn sges(addr: u64, length: u32, lkey: u32) -> Vec<Sge> {
    vec![Sge { addr, length, lkey }]
}

/// A PD, a CQ and an RC QP in RESET on host `h`.
fn endpoint(w: &mut World, h: u32) -> Endpoint {
    endpoint_with(w, h, None)
}

/// As [`endpoint`], with the CQ reporting to `channel`.
fn endpoint_with(w: &mut World, h: u32, channel: Option<verbs::types::ChannelHandle>) -> Endpoint {
    let pd = w.verbs(h).alloc_pd().unwrap();
    let (cq, _) = w.create_cq(h, 64, channel).unwrap();
    let cap = QpCap {
        max_send_wr: 16,
        max_recv_wr: 16,
        max_send_sge: 2,
        max_recv_sge: 2,
        max_inline_data: 64,
    };
    let qpn = w
        .create_qp(
            h,
            pd,
            &QpInitAttr {
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                cap,
                sq_sig_all: false,
            },
        )
        .unwrap()
        .qpn;
    Endpoint {
        host: h.into(),
        pd,
        cq,
        qpn,
    }
}

/// Moves `e` up to `target` (INIT, RTR or RTS), pointed at `peer`.
fn bring(w: &mut World, e: &Endpoint, peer: &Endpoint, target: QpState, rnr_retry: u8) {
    let access = AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
    let init = QpAttr {
        qp_state: QpState::Init,
        qp_access_flags: access,
        port_num: 1,
        ..QpAttr::default()
    };
    w.modify_qp(
        e.host,
        e.qpn,
        &init,
        M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
    )
    .unwrap();
    if target == QpState::Init {
        return;
    }
    let rtr = QpAttr {
        qp_state: QpState::Rtr,
        ah_attr: AhAttr::roce(Gid::from_ipv4(rdmalab::fabric::packet::host_ip(
            peer.host.get(),
        ))),
        path_mtu: Mtu::Mtu1024,
        dest_qp_num: peer.qpn.get(),
        max_dest_rd_atomic: 1,
        min_rnr_timer: 1,
        ..QpAttr::default()
    };
    let m = M::STATE
        | M::AV
        | M::PATH_MTU
        | M::DEST_QPN
        | M::RQ_PSN
        | M::MAX_DEST_RD_ATOMIC
        | M::MIN_RNR_TIMER;
    w.modify_qp(e.host, e.qpn, &rtr, m).unwrap();
    if target == QpState::Rtr {
        return;
    }
    let rts = QpAttr {
        qp_state: QpState::Rts,
        timeout: 4,
        retry_cnt: 2,
        rnr_retry,
        max_rd_atomic: 1,
        ..QpAttr::default()
    };
    w.modify_qp(
        e.host,
        e.qpn,
        &rts,
        M::STATE | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::SQ_PSN | M::MAX_QP_RD_ATOMIC,
    )
    .unwrap();
}

fn mr(w: &mut World, e: &Endpoint, len: u64) -> (u64, verbs::Mr) {
    support::mr(
        w,
        e,
        len,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
    )
}

fn run(w: &mut World, us: u64) {
    let t = w.now() + SimDuration::from_us(us);
    w.run_until(t, &Budget::default()).unwrap();
}

fn statuses(w: &mut World, e: &Endpoint) -> Vec<(u64, WcStatus)> {
    w.poll_cq(e.host, e.cq, 16)
        .unwrap()
        .iter()
        .map(|c| (c.wr_id, c.status))
        .collect()
}

#[test]
fn c15_a_responder_in_init_drops_requests_and_the_requester_retries_out() {
    for profile in [NicProfile::Mlx5, NicProfile::Rxe] {
        let mut w = world(profile);
        let (a, b) = (endpoint(&mut w, 0), endpoint(&mut w, 1));
        bring(&mut w, &a, &b, QpState::Rts, 7);
        bring(&mut w, &b, &a, QpState::Init, 7);
        let (abuf, amr) = mr(&mut w, &a, 4096);
        let (bbuf, bmr) = mr(&mut w, &b, 4096);
        // post_recv in INIT is accepted (C15).
        w.post_recv(1, b.qpn, &[RecvWr::new(9, sges(bbuf, 4096, bmr.lkey))])
            .unwrap();
        w.post_send(0, a.qpn, &[SendWr::send(1, sges(abuf, 100, amr.lkey))])
            .unwrap();
        run(&mut w, 1_000);
        assert_eq!(
            statuses(&mut w, &a),
            vec![(1, WcStatus::RetryExcErr)],
            "{profile:?}"
        );
        assert!(statuses(&mut w, &b).is_empty(), "INIT does not receive");
        assert_eq!(w.verbs(0).qp_state(a.qpn).unwrap(), QpState::Err);
        assert_eq!(w.verbs(1).qp_state(b.qpn).unwrap(), QpState::Init);
    }
}

#[test]
fn c16_a_responder_in_rtr_receives_but_cannot_send() {
    for (profile, post_result) in [
        (NicProfile::Mlx5, None),
        (NicProfile::Rxe, Some(Errno::EINVAL)),
    ] {
        let mut w = world(profile);
        let (a, b) = (endpoint(&mut w, 0), endpoint(&mut w, 1));
        bring(&mut w, &a, &b, QpState::Rts, 7);
        bring(&mut w, &b, &a, QpState::Rtr, 7);
        let (abuf, amr) = mr(&mut w, &a, 4096);
        let (bbuf, bmr) = mr(&mut w, &b, 4096);
        w.post_recv(1, b.qpn, &[RecvWr::new(9, sges(bbuf, 4096, bmr.lkey))])
            .unwrap();
        let r = w.post_send(1, b.qpn, &[SendWr::send(7, sges(bbuf + 2048, 8, bmr.lkey))]);
        assert_eq!(
            r.err().map(|e| e.errno),
            post_result,
            "{profile:?}: post_send in RTR"
        );
        w.post_send(
            0,
            a.qpn,
            &[SendWr::send(1, sges(abuf, 100, amr.lkey)).signaled()],
        )
        .unwrap();
        run(&mut w, 100);
        assert_eq!(
            statuses(&mut w, &a),
            vec![(1, WcStatus::Success)],
            "the RTR responder ACKed"
        );
        assert_eq!(
            statuses(&mut w, &b),
            vec![(9, WcStatus::Success)],
            "and received"
        );
        assert_eq!(w.verbs(1).qp_state(b.qpn).unwrap(), QpState::Rtr);
    }
}

#[test]
fn c28_a_receive_wqe_from_another_pd_gives_rem_op_err() {
    for (profile, recv_status) in [
        (NicProfile::Mlx5, WcStatus::LocProtErr),
        (NicProfile::Rxe, WcStatus::LocQpOpErr),
    ] {
        let mut w = world(profile);
        let (a, b) = (endpoint(&mut w, 0), endpoint(&mut w, 1));
        bring(&mut w, &a, &b, QpState::Rts, 7);
        bring(&mut w, &b, &a, QpState::Rts, 7);
        let (abuf, amr) = mr(&mut w, &a, 4096);
        // The receive buffer is registered in a different PD from b's QP.
        let other_pd = w.verbs(1).alloc_pd().unwrap();
        let bbuf = w.verbs(1).memory_mut().alloc(4096).unwrap();
        let bmr = w
            .reg_mr(1, other_pd, bbuf, 4096, AccessFlags::LOCAL_WRITE)
            .unwrap();
        w.post_recv(1, b.qpn, &[RecvWr::new(9, sges(bbuf, 4096, bmr.lkey))])
            .unwrap();
        w.post_send(0, a.qpn, &[SendWr::send(1, sges(abuf, 100, amr.lkey))])
            .unwrap();
        run(&mut w, 100);
        assert_eq!(
            statuses(&mut w, &a),
            vec![(1, WcStatus::RemOpErr)],
            "{profile:?}"
        );
        assert_eq!(statuses(&mut w, &b), vec![(9, recv_status)], "{profile:?}");
        assert_eq!(w.verbs(0).qp_state(a.qpn).unwrap(), QpState::Err);
        assert_eq!(w.verbs(1).qp_state(b.qpn).unwrap(), QpState::Err);
    }
}

#[test]
fn c36_write_with_imm_needs_a_receive_but_plain_write_does_not() {
    let mut w = world(NicProfile::Mlx5);
    let (a, b) = (endpoint(&mut w, 0), endpoint(&mut w, 1));
    bring(&mut w, &a, &b, QpState::Rts, 0); // rnr_retry 0: the first RNR NAK is fatal
    bring(&mut w, &b, &a, QpState::Rts, 0);
    let (abuf, amr) = mr(&mut w, &a, 4096);
    let (bbuf, bmr) = mr(&mut w, &b, 4096);
    // (b) a plain WRITE consumes no receive WQE and makes no receive completion.
    let sge = Sge {
        addr: abuf,
        length: 64,
        lkey: amr.lkey,
    };
    w.post_send(
        0,
        a.qpn,
        &[SendWr::write(1, vec![sge], bbuf, bmr.rkey).signaled()],
    )
    .unwrap();
    run(&mut w, 100);
    assert_eq!(statuses(&mut w, &a), vec![(1, WcStatus::Success)]);
    assert!(statuses(&mut w, &b).is_empty());
    // (a) WRITE_WITH_IMM with no receive posted: RNR NAK, and with rnr_retry 0 the WR fails.
    w.post_send(
        0,
        a.qpn,
        &[SendWr::write_with_imm(2, vec![sge], bbuf, bmr.rkey, 5).signaled()],
    )
    .unwrap();
    run(&mut w, 100);
    assert_eq!(statuses(&mut w, &a), vec![(2, WcStatus::RnrRetryExcErr)]);
    assert_eq!(w.verbs(0).qp_state(a.qpn).unwrap(), QpState::Err);
    assert_eq!(
        w.verbs(1).qp_state(b.qpn).unwrap(),
        QpState::Rts,
        "an RNR leaves the responder usable"
    );
    assert_eq!(w.host(1).responder_counters(b.qpn).unwrap().rnr_naks, 1);
}

#[test]
fn completion_channel_costs_an_interrupt_and_a_wake_up_and_honours_solicited() {
    let mut w = world(NicProfile::Mlx5);
    w.set_tracer(engine::Tracer::new(engine::VecObserver::default()));
    let a = endpoint(&mut w, 0);
    // b's CQ reports to a completion channel.
    let ch = w.verbs(1).create_comp_channel();
    let b = endpoint_with(&mut w, 1, Some(ch));
    bring(&mut w, &a, &b, QpState::Rts, 7);
    bring(&mut w, &b, &a, QpState::Rts, 7);
    let (abuf, amr) = mr(&mut w, &a, 4096);
    let (bbuf, bmr) = mr(&mut w, &b, 4096);
    let recv = |i: u64| RecvWr::new(i, sges(bbuf, 4096, bmr.lkey));
    w.post_recv(1, b.qpn, &[recv(1), recv(2)]).unwrap();
    let send = |id: u64| SendWr::send(id, sges(abuf, 64, amr.lkey));

    // Armed for solicited events only: an unsolicited SEND completes but raises no event.
    w.req_notify_cq(1, b.cq, true).unwrap();
    w.post_send(0, a.qpn, &[send(10)]).unwrap();
    run(&mut w, 50);
    assert_eq!(w.get_cq_event(1, ch).unwrap(), None);
    // A solicited SEND raises it.
    w.post_send(
        0,
        a.qpn,
        &[send(11).with_flags(verbs::SendFlags::SOLICITED)],
    )
    .unwrap();
    let t0 = w.now();
    let mut got = None;
    while got.is_none() && w.now() < t0 + SimDuration::from_us(50) {
        let t = w.now() + SimDuration::from_ns(100);
        w.run_until(t, &Budget::default()).unwrap();
        got = w.get_cq_event(1, ch).unwrap();
    }
    assert_eq!(got, Some(b.cq));
    assert_eq!(
        statuses(&mut w, &b),
        vec![(1, WcStatus::Success), (2, WcStatus::Success)]
    );
    // The wake-up went through an interrupt on core 1 and a context switch on core 0.
    let t = w.tracer_mut().take::<engine::VecObserver>().unwrap();
    let stages: Vec<(&str, units::SimTime, units::SimTime)> = t
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            engine::TraceRecord::Stage {
                host,
                stage,
                start,
                end,
                ..
            } if host.0 == w.host(1).node.0 => Some((stage.name(), *start, *end)),
            _ => None,
        })
        .collect();
    let irq = stages
        .iter()
        .find(|s| s.0 == "completion interrupt")
        .expect("an interrupt");
    let wake = stages
        .iter()
        .find(|s| s.0 == "wake-up (context switch)")
        .expect("a wake-up");
    assert_eq!(
        wake.1, irq.2,
        "the thread wakes when the interrupt handler is done"
    );
    assert_eq!(
        wake.2 - wake.1,
        SimDuration::from_ns(1_070),
        "research/figures.md §3 context switch"
    );
    assert_eq!(
        stages
            .iter()
            .filter(|s| s.0 == "completion interrupt")
            .count(),
        1,
        "one event, one interrupt"
    );
}
