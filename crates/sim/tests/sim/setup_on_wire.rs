//! RDMA's connection setup needs ordinary TCP (lesson 4): `connect_rc` swaps QPN, PSN and GID
//! over a simulated TCP connection before RTR. The handshake and the two 34-byte messages are
//! in the pcap (tshark decodes them as TCP), the exchange is on the timeline as setup, and the
//! QPs are connected with what the bytes said.

use crate::support;

use engine::{ExecUnit, TraceRecord, Tracer, VecObserver};
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{ConnInfo, RcOptions, World};
use units::Bandwidth;
use verbs::{NicProfile, types::QpState};
use wire::PcapReader;

#[test]
fn the_qp_exchange_runs_over_tcp_in_the_pcap_and_on_the_timeline() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-setup-wire-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("setup.pcap");
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap();
    w.set_tracer(Tracer::new(VecObserver::default()));
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    let t0 = w.now();
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    // Each host runs five firmware commands (create CQ, create QP, three modify_qp) in order;
    // the two hosts run theirs side by side, so the whole setup takes one host's share plus
    // the exchange, not both hosts' shares added up.
    let took = w.now() - t0;
    let fw = host::HostProfile::default().control.firmware_command;
    assert!(
        took >= fw * 5 && took < fw * 7,
        "setup took {took:?}, firmware command {fw:?}"
    );
    w.finish_pcap().unwrap();
    for e in [a, b] {
        assert_eq!(w.verbs(e.host).qp_state(e.qpn).unwrap(), QpState::Rts);
    }

    // The exact bytes each side sent are in the capture, inside TCP segments.
    let frames: Vec<Vec<u8>> = PcapReader::new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .map(|r| r.unwrap().data)
        .collect();
    let carries = |needle: &[u8]| {
        frames
            .iter()
            .filter(|f| f.windows(needle.len()).any(|w| w == needle))
            .count()
    };
    for (me, host) in [(a, 0u8), (b, 1u8)] {
        let sent = ConnInfo {
            qpn: me.qpn.get(),
            gid: verbs::types::Gid::from_ipv4(fabric::packet::host_ip(host as u32)).0,
            ..ConnInfo::default()
        }
        .emit();
        assert_eq!(
            carries(&sent),
            1,
            "host {host}'s QP info is in exactly one frame"
        );
    }
    assert!(
        frames.len() >= 5,
        "SYN, SYN-ACK, ACK and two data segments: {}",
        frames.len()
    );

    // Every stage of the exchange counted as setup; none leaked into the data path.
    let t = w.tracer_mut().take::<VecObserver>().unwrap();
    let stage = |want_setup: bool| -> Vec<&str> {
        t.records
            .iter()
            .filter_map(|(_, r)| match r {
                TraceRecord::Stage {
                    stage,
                    setup,
                    unit: ExecUnit::Cpu(_),
                    ..
                } if *setup == want_setup => Some(stage.name()),
                _ => None,
            })
            .collect()
    };
    let setup = stage(true);
    for s in [
        "socket+listen+accept",
        "write() syscall entry",
        "read() syscall entry",
        "copy user→kernel",
        "copy kernel→user",
    ] {
        assert!(setup.contains(&s), "missing setup stage {s}: {setup:?}");
    }
    assert!(
        stage(false).is_empty(),
        "nothing on the data path yet: {:?}",
        stage(false)
    );
    for h in [0, 1] {
        let acc = w.host(h).cpu().account();
        assert!(
            acc.by_stage.is_empty() && acc.data_path == units::SimDuration::ZERO,
            "host {h}: {acc:?}"
        );
    }

    let Some(text) = support::tshark(&[
        "-r",
        path.to_str().unwrap(),
        "-Y",
        "tcp",
        "-T",
        "fields",
        "-e",
        "tcp.flags.str",
        "-e",
        "tcp.len",
        "-e",
        "tcp.options.timestamp.tsval",
        "-e",
        "tcp.options.timestamp.tsecr",
    ]) else {
        return;
    };
    let rows: Vec<&str> = text.lines().collect();
    assert!(
        rows.iter().any(|r| r.contains("S") && !r.contains("A")),
        "a SYN: {rows:?}"
    );
    let cols: Vec<Vec<&str>> = rows.iter().map(|r| r.split('\t').collect()).collect();
    let data: Vec<&Vec<&str>> = cols.iter().filter(|c| c[1] == "34").collect();
    assert_eq!(data.len(), 2, "two 34-byte messages: {rows:?}");
    // RFC 7323 §4.3: the passive side echoes the TSval of the handshake's final (pure) ACK.
    let final_ack = &cols[2];
    assert_eq!(final_ack[1], "0", "third segment is the bare ACK: {rows:?}");
    assert!(
        data.iter().any(|c| c[3] == final_ack[2]),
        "the passive side's data echoes the final ACK's TSval {}: {rows:?}",
        final_ack[2]
    );
}

/// Issue 20: on a loss-free fabric each side's 34 bytes go once. Both messages leave before
/// the other arrives, so neither is acknowledged until a delayed ACK (40 ms); the exchange's
/// socket has Linux's 200 ms minimum RTO, so nothing is resent meanwhile (it was 1 ms, and
/// both messages went again at ~1.0 and ~1.4 ms).
#[test]
fn the_qp_exchange_sends_each_message_once_on_a_clean_fabric() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-setup-once-")
        .tempdir()
        .unwrap();
    let path = tmp.path().join("setup.pcap");
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap();
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    let (a, b) = w.connect_rc(0, 1, &RcOptions::default()).unwrap();
    // 10 ms more: past the old 1 ms RTO and its backed-off retry, short of the delayed ACK.
    let until = w.now() + units::SimDuration::from_ms(10);
    w.run_until(until, &engine::Budget::default()).unwrap();
    w.finish_pcap().unwrap();
    let frames: Vec<Vec<u8>> = PcapReader::new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .map(|r| r.unwrap().data)
        .collect();
    for (me, host) in [(a, 0u32), (b, 1u32)] {
        let sent = ConnInfo {
            qpn: me.qpn.get(),
            gid: verbs::types::Gid::from_ipv4(fabric::packet::host_ip(host)).0,
            ..ConnInfo::default()
        }
        .emit();
        let n = frames
            .iter()
            .filter(|f| f.windows(sent.len()).any(|w| w == sent))
            .count();
        assert_eq!(n, 1, "host {host}'s 34 bytes were sent {n} times");
    }
}

/// `connect_rc_cm` connects with RDMA-CM's REQ → REP → RTU instead: three MADs between the
/// hosts' QP1s in the pcap (UD SEND Only, DETH Q_Key 0x80010000, source QP 1), each parsed
/// back by the wire crate with the QPN and starting PSN of the QP it set up; no TCP; the QPs
/// end in RTS toward each other; the kernel's CM stages are setup time on both hosts; and a
/// SEND then crosses the new connection.
#[test]
fn rdma_cm_connects_with_three_mads_in_the_pcap_and_kernel_stages_as_setup() {
    use rdmalab::world::CmParams;
    use wire::ib::cm::Message;
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-setup-cm-")
        .tempdir()
        .unwrap();
    let path = tmp.path().join("cm.pcap");
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap();
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    let bad = CmParams {
        service_port: 4420,
        req_private: vec![0; 57],
        rep_private: vec![],
    };
    let e = w
        .connect_rc_cm(0, 1, &RcOptions::default(), &bad)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("cm.req_private is 57 bytes: allowed 0–56"),
        "{e}"
    );
    let params = CmParams {
        service_port: 4420,
        req_private: vec![0xab; 8],
        rep_private: vec![0xcd; 4],
    };
    let c = w
        .connect_rc_cm(0, 1, &RcOptions::default(), &params)
        .unwrap();
    assert_eq!(
        c.req_private, [0xab; 8],
        "the passive side read the REQ's bytes"
    );
    assert_eq!(c.rep_private, [0xcd; 4], "the active side read the REP's");
    w.finish_pcap().unwrap();
    for e in [c.active, c.passive] {
        assert_eq!(w.verbs(e.host).qp_state(e.qpn).unwrap(), QpState::Rts);
    }
    // Five firmware commands per host (create CQ, create QP, INIT, RTR, RTS), the passive
    // side's RTR and RTS and the active side's two between three one-way MAD trips.
    let fw = host::HostProfile::default().control.firmware_command;
    assert!(
        c.took >= fw * 4 && c.took < fw * 5,
        "exchange took {:?}",
        c.took
    );

    let frames: Vec<Vec<u8>> = PcapReader::new(std::fs::File::open(&path).unwrap())
        .unwrap()
        .map(|r| r.unwrap().data)
        .collect();
    let mut msgs = Vec::new();
    for f in &frames {
        let (frame, payload) = wire::parse_frame(f).unwrap();
        let wire::Frame::Roce(r) = frame else {
            panic!("no TCP in an RDMA-CM setup: {frame:?}");
        };
        assert!(r.is_gsi_mad(), "only MADs to QP1 before any data: {r:?}");
        msgs.push(Message::parse_mad(payload).unwrap().1);
    }
    // Each captured at both hops of the back-to-back link's one switch-less hop: once here.
    msgs.dedup();
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    let (Message::Req(req), Message::Rep(rep), Message::Rtu(rtu)) = (msgs[0], msgs[1], msgs[2])
    else {
        panic!("REQ, REP, RTU in order: {msgs:?}");
    };
    assert_eq!(req.local_qpn, c.active.qpn.get());
    assert_eq!(rep.local_qpn, c.passive.qpn.get());
    assert_eq!(
        req.service_id, 0x0000_0000_0106_1144,
        "RDMA IP CM service, TCP 4420"
    );
    assert_eq!(
        (rtu.local_comm_id, rtu.remote_comm_id),
        (req.local_comm_id, rep.local_comm_id)
    );
    // The QPs were set up from those PSNs: each requester starts where the peer expects.
    assert_eq!(
        w.host(0).requester_next_psn(c.active.qpn),
        Some(req.starting_psn)
    );
    assert_eq!(
        w.host(1).responder_expected_psn(c.passive.qpn),
        Some(req.starting_psn)
    );
    assert_eq!(
        w.host(1).requester_next_psn(c.passive.qpn),
        Some(rep.starting_psn)
    );
    // The CM is the kernel's: its stages are setup on both hosts, none on the data path.
    for h in 0..2 {
        let acct = w.host(h).cpu().account();
        assert!(acct.by_stage.is_empty(), "host {h}: {:?}", acct.by_stage);
        for stage in [
            engine::Stage::DriverTx,
            engine::Stage::CompletionInterrupt,
            engine::Stage::DriverRx,
            engine::Stage::WakeUp,
        ] {
            assert!(
                acct.setup_by_stage.contains_key(&stage),
                "host {h} has no {stage} in setup: {:?}",
                acct.setup_by_stage
            );
        }
    }
    // And the connection carries a message, byte for byte.
    use verbs::wr::{RecvWr, SendWr, Sge};
    let access = verbs::AccessFlags::LOCAL_WRITE;
    let (src, smr) = support::mr(&mut w, &c.active, 64, access);
    let (dst, dmr) = support::mr(&mut w, &c.passive, 64, access);
    let msg: Vec<u8> = (0..64u8).collect();
    w.verbs(0).memory_mut().write(src, &msg).unwrap();
    let sge = |addr, lkey| Sge {
        addr,
        length: 64,
        lkey,
    };
    w.post_recv(
        1,
        c.passive.qpn,
        &[RecvWr::new(1, vec![sge(dst, dmr.lkey)])],
    )
    .unwrap();
    w.post_send(
        0,
        c.active.qpn,
        &[SendWr::send(2, vec![sge(src, smr.lkey)]).signaled()],
    )
    .unwrap();
    let until = w.now() + units::SimDuration::from_us(50);
    w.run_until(until, &engine::Budget::default()).unwrap();
    let r = w.poll_cq(1, c.passive.cq, 4).unwrap();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].status, verbs::WcStatus::Success);
    let mut got = vec![0; 64];
    w.verbs(1).memory_mut().read(dst, &mut got).unwrap();
    assert_eq!(got, msg);
}
