//! Unreliable connected QPs through the world: no ACK, no retransmission, completion when the
//! last packet leaves, a lost packet drops its message silently and the responder starts
//! again at the next FIRST or ONLY packet (research/verbs-spec.md §4–5, rxe's UC branches).

use crate::support;

use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{Endpoint, World};
use units::{Bandwidth, SimDuration};
use verbs::{
    AccessFlags, NicProfile, QpAttr, QpAttrMask as M, WcStatus,
    types::{AhAttr, Gid, Mtu, QpState, QpType},
    wr::{RecvWr, SendWr, Sge},
};

/// Two hosts through a switch; host 0's link carries `link`'s loss rules.
fn world_with(link: LinkConfig, profile: NicProfile) -> World {
    let mut topo = Topology::new("UC pair");
    let sw = topo.add_switch("sw");
    let h0 = topo.add_host("h0");
    let h1 = topo.add_host("h1");
    topo.connect(h0, sw, link);
    topo.connect(h1, sw, LinkConfig::new(Bandwidth::gbps(100), 3));
    World::new(&topo, FabricConfig::default(), Default::default(), profile).unwrap()
}

fn uc_endpoint(w: &mut World, h: u32) -> Endpoint {
    support::endpoint(w, h, QpType::Uc)
}

/// RESET → INIT → RTR → RTS with UC's masks (no RNR or atomic fields, no timeout or retries).
fn bring_up(w: &mut World, e: &Endpoint, peer: &Endpoint) {
    let init = QpAttr {
        qp_state: QpState::Init,
        qp_access_flags: AccessFlags::REMOTE_WRITE,
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
    let rtr = QpAttr {
        qp_state: QpState::Rtr,
        ah_attr: AhAttr::roce(Gid::from_ipv4(rdmalab::fabric::packet::host_ip(
            peer.host.get(),
        ))),
        path_mtu: Mtu::Mtu1024,
        dest_qp_num: peer.qpn.get(),
        ..QpAttr::default()
    };
    w.modify_qp(
        e.host,
        e.qpn,
        &rtr,
        M::STATE | M::AV | M::PATH_MTU | M::DEST_QPN | M::RQ_PSN,
    )
    .unwrap();
    let rts = QpAttr {
        qp_state: QpState::Rts,
        ..QpAttr::default()
    };
    w.modify_qp(e.host, e.qpn, &rts, M::STATE | M::SQ_PSN)
        .unwrap();
}

fn mr(w: &mut World, e: &Endpoint, len: u64) -> (u64, verbs::Mr) {
    support::mr(
        w,
        e,
        len,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    )
}

fn run(w: &mut World, us: u64) {
    let until = w.now() + SimDuration::from_us(us);
    w.run_until(until, &Budget::default()).unwrap();
}

fn pair(link: LinkConfig) -> (World, Endpoint, Endpoint) {
    pair_with(link, NicProfile::Mlx5)
}

fn pair_with(link: LinkConfig, profile: NicProfile) -> (World, Endpoint, Endpoint) {
    let mut w = world_with(link, profile);
    let a = uc_endpoint(&mut w, 0);
    let b = uc_endpoint(&mut w, 1);
    bring_up(&mut w, &a, &b);
    bring_up(&mut w, &b, &a);
    (w, a, b)
}

#[test]
fn uc_write_places_data_without_acks_and_a_read_completes_loc_qp_op_err() {
    let (mut w, a, b) = pair(LinkConfig::new(Bandwidth::gbps(100), 3));
    let (src, smr) = mr(&mut w, &a, 8192);
    let (dst, dmr) = mr(&mut w, &b, 8192);
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
    w.verbs(0).memory_mut().write(src, &data).unwrap();
    let wr = SendWr::write(
        1,
        vec![Sge {
            addr: src,
            length: 8192,
            lkey: smr.lkey,
        }],
        dst,
        dmr.rkey,
    )
    .signaled();
    w.post_send(0, a.qpn, &[wr]).unwrap();
    run(&mut w, 50);
    let wcs = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(wcs.len(), 1);
    assert_eq!(wcs[0].status, WcStatus::Success);
    let mut got = vec![0u8; 8192];
    w.verbs(1).memory().read(dst, &mut got).unwrap();
    assert_eq!(got, data, "8 packets of 1 KiB placed in order");
    // No acknowledgement crossed the wire, and nothing was resent.
    let r = w.host(1).responder_counters(b.qpn).unwrap();
    assert_eq!(r.acks, 0);
    let q = w.host(0).requester_counters(a.qpn).unwrap();
    assert_eq!((q.acks, q.packets_retransmitted), (0, 0));
    assert_eq!(q.packets_sent, 8);
    // UC has no READ. mlx5 takes the post and completes it LOC_QP_OP_ERR when the NIC picks
    // it up (the verbs model's sourced behaviour); no READ request reaches the wire.
    let rd = SendWr::read(
        2,
        vec![Sge {
            addr: src,
            length: 8,
            lkey: smr.lkey,
        }],
        dst,
        dmr.rkey,
    )
    .signaled();
    let frames = w.fabric().counters().delivered_frames;
    w.post_send(0, a.qpn, &[rd]).unwrap();
    run(&mut w, 20);
    let wcs = w.poll_cq(0, a.cq, 4).unwrap();
    assert_eq!(wcs.len(), 1);
    assert_eq!(wcs[0].status, WcStatus::LocQpOpErr);
    assert_eq!(
        w.fabric().counters().delivered_frames,
        frames,
        "no READ request on the wire"
    );
}

#[test]
fn a_lost_packet_drops_its_message_silently_and_the_next_one_arrives() {
    for profile in [NicProfile::Mlx5, NicProfile::Rxe, NicProfile::Ibta] {
        lost_packet_under(profile);
    }
}

fn lost_packet_under(profile: NicProfile) {
    // Drop the 2nd frame of A's UC flow: the middle of the first 3-packet SEND.
    let probe = pair_with(LinkConfig::new(Bandwidth::gbps(100), 3), profile)
        .1
        .qpn;
    let mut link = LinkConfig::new(Bandwidth::gbps(100), 3);
    link.loss.rules.push(fabric::DropRule {
        flow: World::flow_of(0, probe),
        nth: 2,
        count: 1,
    });
    let (mut w, a, b) = pair_with(link, profile);
    assert_eq!(a.qpn, probe);
    let (src, smr) = mr(&mut w, &a, 3072);
    let (dst, dmr) = mr(&mut w, &b, 3072);
    for i in 0..2 {
        w.post_recv(
            1,
            b.qpn,
            &[RecvWr::new(
                10 + i,
                vec![Sge {
                    addr: dst,
                    length: 3072,
                    lkey: dmr.lkey,
                }],
            )],
        )
        .unwrap();
    }
    w.verbs(0).memory_mut().write(src, &[0xab; 3072]).unwrap();
    for id in [1, 2] {
        let s = SendWr::send(
            id,
            vec![Sge {
                addr: src,
                length: 3072,
                lkey: smr.lkey,
            }],
        )
        .signaled();
        w.post_send(0, a.qpn, &[s]).unwrap();
    }
    run(&mut w, 100);
    // The sender completes both: nothing tells it the first was lost.
    let sent = w.poll_cq(0, a.cq, 8).unwrap();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|c| c.status == WcStatus::Success));
    // The responder dropped the first message (no completion, no error, QP still RTS) and
    // received the second into the first receive WQE, which the dropped message never used up.
    let got = w.poll_cq(1, b.cq, 8).unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0].wr_id, got[0].status, got[0].byte_len),
        (10, WcStatus::Success, 3072)
    );
    assert_eq!(w.verbs(1).qp_state(b.qpn).unwrap(), QpState::Rts);
    let r = w.host(1).responder_counters(b.qpn).unwrap();
    assert_eq!((r.dropped_messages, r.acks, r.sequence_naks), (1, 0, 0));
    let mut buf = vec![0u8; 3072];
    w.verbs(1).memory().read(dst, &mut buf).unwrap();
    assert!(buf.iter().all(|&x| x == 0xab));
}
