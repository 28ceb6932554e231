//! Unreliable datagram QPs through the world: one SEND ONLY per message to the QP its work
//! request names, a DETH with the Q_Key and the source QP, a 40-byte GRH area before the
//! payload in the receive buffer; Q_Key mismatches, missing receives and oversized messages
//! vanish silently (research/verbs-spec.md §5, rxe's UD branches).

use crate::support;

use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{Endpoint, World};
use units::{Bandwidth, SimDuration};
use verbs::{
    AccessFlags, NicProfile, QpAttr, QpAttrMask as M, WcFlags, WcStatus,
    types::{AhAttr, Gid, QpState, QpType},
    wr::{RecvWr, SendWr, Sge},
};

const QKEY: u32 = 0x1111_2222;

fn ud_endpoint(w: &mut World, h: u32) -> Endpoint {
    let e = support::endpoint(w, h, QpType::Ud);
    let qpn = e.qpn;
    let init = QpAttr {
        qp_state: QpState::Init,
        port_num: 1,
        qkey: QKEY,
        ..QpAttr::default()
    };
    w.modify_qp(h, qpn, &init, M::STATE | M::PKEY_INDEX | M::PORT | M::QKEY)
        .unwrap();
    let rtr = QpAttr {
        qp_state: QpState::Rtr,
        ..QpAttr::default()
    };
    w.modify_qp(h, qpn, &rtr, M::STATE).unwrap();
    let rts = QpAttr {
        qp_state: QpState::Rts,
        ..QpAttr::default()
    };
    w.modify_qp(h, qpn, &rts, M::STATE | M::SQ_PSN).unwrap();
    e
}

fn mr(w: &mut World, e: &Endpoint, len: u64) -> (u64, verbs::Mr) {
    support::mr(w, e, len, AccessFlags::LOCAL_WRITE)
}

fn run(w: &mut World, us: u64) {
    let until = w.now() + SimDuration::from_us(us);
    w.run_until(until, &Budget::default()).unwrap();
}

/// research/verbs-spec.md §7 C33 (a Q_Key mismatch: sender SUCCESS, silent drop, the receive
/// WQE stays posted) and C34 (100 B into a 140 B receive WQE: data at offset 40, `src_qp`,
/// `IBV_WC_GRH`), plus the oversized and no-receive cases, under every profile.
#[test]
fn datagrams_arrive_with_a_grh_and_the_rest_vanish_silently() {
    for profile in [NicProfile::Mlx5, NicProfile::Rxe, NicProfile::Ibta] {
        datagrams_under(profile);
    }
}

fn datagrams_under(profile: NicProfile) {
    let link = LinkConfig::new(Bandwidth::gbps(100), 3);
    let topo = Topology::star(2, link).unwrap();
    let mut w = World::new(&topo, FabricConfig::default(), Default::default(), profile).unwrap();
    let a = ud_endpoint(&mut w, 0);
    let b = ud_endpoint(&mut w, 1);
    let (src, smr) = mr(&mut w, &a, 4096);
    let (dst, dmr) = mr(&mut w, &b, 4096);
    let msg: Vec<u8> = (0..100u8).collect();
    w.verbs(0).memory_mut().write(src, &msg).unwrap();
    let ah = AhAttr::roce(Gid::from_ipv4(rdmalab::fabric::packet::host_ip(1)));
    let send = |id: u64, len: u32, qkey: u32| {
        SendWr::send(
            id,
            vec![Sge {
                addr: src,
                length: len,
                lkey: smr.lkey,
            }],
        )
        .signaled()
        .to_ud(ah, b.qpn, qkey)
    };
    let recv = |w: &mut World, id: u64| {
        w.post_recv(
            1,
            b.qpn,
            &[RecvWr::new(
                id,
                vec![Sge {
                    addr: dst,
                    length: 140,
                    lkey: dmr.lkey,
                }],
            )],
        )
        .unwrap();
    };

    // One datagram: GRH area + payload, the source QP and the GRH flag in the completion.
    recv(&mut w, 100);
    w.post_send(0, a.qpn, &[send(1, 100, QKEY)]).unwrap();
    run(&mut w, 20);
    let s = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!((s.len(), s[0].status), (1, WcStatus::Success));
    let r = w.poll_cq(1, b.cq, 4).unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        (r[0].wr_id, r[0].status, r[0].byte_len),
        (100, WcStatus::Success, 140)
    );
    assert_eq!(r[0].src_qp, Some(a.qpn));
    assert!(r[0].wc_flags.contains(WcFlags::GRH));
    let mut got = vec![0u8; 140];
    w.verbs(1).memory().read(dst, &mut got).unwrap();
    assert_eq!(
        &got[40..],
        &msg[..],
        "the payload after the 40-byte GRH area"
    );
    assert_eq!(got[20], 0x45, "an IPv4 header in the GRH's last 20 bytes");
    assert_eq!(
        &got[32..36],
        &rdmalab::fabric::packet::host_ip(0),
        "its source address"
    );
    let sent = |w: &World| w.host(0).requester_counters(a.qpn).unwrap().packets_sent;
    assert_eq!(sent(&w), 1);

    // A wrong Q_Key: sent, SUCCESS, and dropped at the receiver without a trace.
    recv(&mut w, 101);
    w.post_send(0, a.qpn, &[send(2, 100, QKEY ^ 1)]).unwrap();
    run(&mut w, 20);
    assert_eq!(w.poll_cq(0, a.cq, 4).unwrap()[0].status, WcStatus::Success);
    assert!(w.poll_cq(1, b.cq, 4).unwrap().is_empty());
    assert_eq!(sent(&w), 2);

    // Longer than the path MTU: nothing is sent, SUCCESS all the same, and the datagram
    // takes its PSN as rxe's requester does ("fake a successful UD send").
    let psn = |w: &World| w.host(0).requester_next_psn(a.qpn).unwrap();
    let before = psn(&w);
    w.post_send(0, a.qpn, &[send(3, 4096, QKEY)]).unwrap();
    run(&mut w, 20);
    assert_eq!(w.poll_cq(0, a.cq, 4).unwrap()[0].status, WcStatus::Success);
    assert_eq!(sent(&w), 2, "no packet for an oversized datagram");
    assert_eq!(
        psn(&w),
        (before + 1) & 0xff_ffff,
        "{profile:?}: its PSN is used"
    );

    // The receive posted for the dropped one is still there and takes the next datagram.
    w.post_send(0, a.qpn, &[send(4, 10, QKEY)]).unwrap();
    run(&mut w, 20);
    let r = w.poll_cq(1, b.cq, 4).unwrap();
    assert_eq!((r.len(), r[0].wr_id, r[0].byte_len), (1, 101, 50));
    // No receive WQE left: the next datagram is dropped (UD has no RNR), the sender succeeds.
    w.post_send(0, a.qpn, &[send(5, 10, QKEY)]).unwrap();
    run(&mut w, 20);
    assert_eq!(w.poll_cq(0, a.cq, 8).unwrap().len(), 2);
    assert!(w.poll_cq(1, b.cq, 4).unwrap().is_empty());
    let resp = w.host(1).responder_counters(b.qpn).unwrap();
    assert_eq!((resp.dropped_messages, resp.acks, resp.rnr_naks), (2, 0, 0));
    assert_eq!(w.verbs(1).qp_state(b.qpn).unwrap(), QpState::Rts);

    // An RDMA WRITE on UD: every profile takes the post, and the WQE completes
    // LOC_QP_OP_ERR when the send queue reaches it; nothing goes on the wire.
    let write = SendWr::write(
        6,
        vec![Sge {
            addr: src,
            length: 10,
            lkey: smr.lkey,
        }],
        dst,
        dmr.rkey,
    )
    .signaled()
    .to_ud(ah, b.qpn, QKEY);
    w.post_send(0, a.qpn, &[write]).unwrap();
    run(&mut w, 20);
    let c = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(
        (c.len(), c[0].wr_id, c[0].status),
        (1, 6, WcStatus::LocQpOpErr),
        "{profile:?}"
    );
    // A send-side error completion moves the QP to ERR (verbs-spec §2), UD included.
    assert_eq!(
        w.verbs(0).qp_state(a.qpn).unwrap(),
        QpState::Err,
        "{profile:?}"
    );
    assert!(w.poll_cq(1, b.cq, 4).unwrap().is_empty(), "nothing arrived");
}
