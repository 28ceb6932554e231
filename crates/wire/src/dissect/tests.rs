//! Field-by-field layouts checked against the bytes, verdicts on bad frames, and every kind and
//! field naming its defining section.

use super::*;
use crate::ib::{DEFAULT_PKEY, Operation};
use crate::{ExtHeaders, Frame, Ip, Link, PfcFrame, RoceFrame, TcpFrame, strategies};
use proptest::prelude::*;

const MAC_A: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);
const MAC_B: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x02]);
const IP_A: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
const IP_B: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

fn write_only(payload_len: u16) -> RoceFrame {
    let mut link = Link::new(MAC_A, MAC_B);
    link.vlan = Some(vlan::Tag {
        pcp: Priority::of(3),
        dei: false,
        vid: 0,
    });
    let bth = bth::Repr {
        opcode: Opcode::rc(Operation::RdmaWriteOnly),
        solicited: false,
        mig_req: false,
        pad_count: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp: 0x11,
        ack_req: true,
        psn: 101,
    };
    let ext = ExtHeaders {
        reth: Some(reth::Repr {
            va: 0x7f00_0000_1000,
            rkey: 0x1234,
            dma_len: payload_len.into(),
        }),
        ..ExtHeaders::NONE
    };
    RoceFrame::new(link, Ip::new(IP_A, IP_B), 0xc001, bth, ext, payload_len)
}

fn find<'a>(d: &'a Dissection, kind: Kind, name: &str) -> &'a FieldView {
    d.headers
        .iter()
        .filter(|h| h.kind == kind)
        .flat_map(|h| &h.fields)
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no {name} in {kind:?}"))
}

/// The bits `[at, at + width)` of `bytes`, most significant first, as a number.
fn bits(bytes: &[u8], at: usize, width: usize) -> u64 {
    (at..at + width).fold(0u64, |v, i| {
        v << 1 | u64::from(bytes[i / 8] >> (7 - i % 8) & 1)
    })
}

/// Every numeric field's value is the bits at its position, and the fields of each header
/// tile it from its first bit to its last, in order, with no gap or overlap: the layout
/// the inspector draws is the layout the getters read.
fn check_layout(bytes: &[u8], d: &Dissection) {
    for h in &d.headers {
        let mut next = 0;
        for f in &h.fields {
            assert_eq!(
                f.bit_offset, next,
                "{:?} {} starts where the last ended",
                h.kind, f.name
            );
            next = f.bit_offset + f.bit_width;
            if let Value::Uint(v) = f.value
                && f.bit_width <= 64
            {
                let got = bits(bytes, h.start * 8 + f.bit_offset, f.bit_width);
                assert_eq!(
                    got, v,
                    "{:?} {} value is the bits at its place",
                    h.kind, f.name
                );
            }
        }
        assert_eq!(next, h.len * 8, "{:?} fields cover the header", h.kind);
    }
    // The headers cover the frame, in order.
    let mut at = 0;
    for h in &d.headers {
        assert_eq!(h.start, at, "{:?} follows the header before", h.kind);
        at = h.start + h.len;
    }
    if d.stopped.is_none() {
        assert_eq!(at, bytes.len(), "the headers cover the frame");
    }
}

#[test]
fn write_only_field_by_field() {
    let bytes = write_only(32).to_bytes(&[b'W'; 32]).unwrap();
    let d = dissect(&bytes);
    let kinds: Vec<Kind> = d.headers.iter().map(|h| h.kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::Ethernet,
            Kind::Vlan,
            Kind::Ipv4,
            Kind::Udp,
            Kind::Bth,
            Kind::Reth,
            Kind::Payload,
            Kind::Icrc
        ]
    );
    assert_eq!(d.stopped, None);
    assert_eq!(d.frame_check, Some(Ok(())));
    let op = find(&d, Kind::Bth, "OpCode");
    assert_eq!(op.value, Value::Uint(0x0a));
    assert_eq!(
        op.meaning,
        Some(Meaning::Opcode(Opcode::rc(Operation::RdmaWriteOnly)))
    );
    assert_eq!((op.bit_offset, op.bit_width), (0, 8));
    let qp = find(&d, Kind::Bth, "DestQP");
    assert_eq!(
        (qp.bit_offset, qp.bit_width, qp.value),
        (40, 24, Value::Uint(0x11))
    );
    let psn = find(&d, Kind::Bth, "PSN");
    assert_eq!(
        (psn.bit_offset, psn.bit_width, psn.value),
        (72, 24, Value::Uint(101))
    );
    let a = find(&d, Kind::Bth, "A");
    assert_eq!(
        (a.bit_offset, a.bit_width, a.value),
        (64, 1, Value::Uint(1))
    );
    assert_eq!(find(&d, Kind::Reth, "R_Key").value, Value::Uint(0x1234));
    assert_eq!(find(&d, Kind::Vlan, "PCP").value, Value::Uint(3));
    assert_eq!(
        find(&d, Kind::Udp, "Destination Port").meaning,
        Some(Meaning::RoceV2Port)
    );
    assert_eq!(
        find(&d, Kind::Icrc, "ICRC").meaning,
        Some(Meaning::Check(Verdict::Good))
    );
    assert_eq!(
        find(&d, Kind::Ipv4, "Header Checksum").meaning,
        Some(Meaning::Check(Verdict::Good))
    );
    check_layout(&bytes, &d);
}

#[test]
fn a_bad_icrc_is_shown_not_refused() {
    let mut bytes = write_only(32).to_bytes(&[b'W'; 32]).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0xff; // a payload byte
    let d = dissect(&bytes);
    assert_eq!(d.stopped, None, "the dissection goes on to the ICRC");
    assert!(matches!(
        find(&d, Kind::Icrc, "ICRC").meaning,
        Some(Meaning::Check(Verdict::Bad { .. }))
    ));
    assert!(matches!(d.frame_check, Some(Err(Error::Icrc { .. }))));
}

#[test]
fn a_truncated_frame_stops_at_the_header_it_cuts() {
    let bytes = write_only(32).to_bytes(&[]).unwrap();
    // Five bytes into the BTH: the IPv4 header announces more than there is.
    let cut = 18 + 20 + 8 + 5;
    let d = dissect(&bytes[..cut]);
    assert_eq!(d.headers.last().map(|h| h.kind), Some(Kind::Vlan));
    assert!(
        matches!(d.stopped, Some(Error::Truncated(_))),
        "{:?}",
        d.stopped
    );
    let d = dissect(&[0u8; 3]);
    assert!(d.headers.is_empty());
    assert!(matches!(d.stopped, Some(Error::Truncated(_))));
}

#[test]
fn an_elided_payload_keeps_the_layout_and_leaves_the_icrc_unchecked() {
    let payload: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let bytes = write_only(1000).to_bytes(&payload).unwrap();
    let (short, gap) = elide_payload(&bytes, 32);
    let gap = gap.expect("a 1000-byte payload is elided");
    assert_eq!(short.len(), bytes.len() - 968);
    assert_eq!(gap.len(), 968);
    // Put the zeros back, as a reader of the short copy does.
    let mut whole = short[..gap.start].to_vec();
    whole.resize(gap.end, 0);
    whole.extend_from_slice(&short[gap.start..]);
    let d = dissect_elided(&whole, Some(gap.clone()));
    assert_eq!(d.frame_check, None);
    assert_eq!(d.elided, Some(gap));
    let p = d.headers.iter().find(|h| h.kind == Kind::Payload).unwrap();
    assert_eq!(p.len, 1000);
    assert_eq!(&whole[p.start..p.start + 32], &payload[..32]);
    assert_eq!(
        find(&d, Kind::Icrc, "ICRC").meaning,
        Some(Meaning::Check(Verdict::Unchecked))
    );
    // A short payload is sent whole.
    let small = write_only(16).to_bytes(&[]).unwrap();
    assert_eq!(elide_payload(&small, 32), (small.clone(), None));
}

#[test]
fn pfc_quanta_and_priorities() {
    let f = PfcFrame::new(MAC_A, pfc::Repr::pfc([Priority::of(3)], 0xffff));
    let bytes = f.to_bytes().unwrap();
    let d = dissect(&bytes);
    assert_eq!(d.stopped, None);
    assert_eq!(
        find(&d, Kind::Ethernet, "EtherType").meaning,
        Some(Meaning::EtherType(EtherType::MAC_CONTROL))
    );
    assert_eq!(
        find(&d, Kind::MacControl, "class_enable_vector").meaning,
        Some(Meaning::ClassEnable(0b1000))
    );
    assert_eq!(
        find(&d, Kind::MacControl, "time[3]").meaning,
        Some(Meaning::Quanta {
            quanta: 0xffff,
            bit_times: 0xffff * 512
        })
    );
    assert_eq!(d.headers.last().map(|h| h.kind), Some(Kind::EthernetPad));
    check_layout(&bytes, &d);
}

#[test]
fn tcp_options_field_by_field() {
    let mut repr = tcp::Repr {
        src_port: 40000,
        dst_port: 5001,
        seq: 1000,
        ack: 2000,
        flags: tcp::Flags::ACK,
        window: 512,
        urgent: 0,
        mss: None,
        window_scale: None,
        sack_permitted: false,
        sack_ranges: [None; tcp::MAX_SACK_BLOCKS],
        timestamp: Some(tcp::Timestamp { tsval: 7, tsecr: 9 }),
        payload_len: 100,
    };
    repr.sack_ranges[0] = Some((3000, 4000));
    let f = TcpFrame {
        link: Link::new(MAC_A, MAC_B),
        ip: Ip::new(IP_A, IP_B),
        tcp: repr,
    };
    let bytes = f.to_bytes(&[1; 100]).unwrap();
    let d = dissect(&bytes);
    assert_eq!(d.stopped, None);
    assert_eq!(find(&d, Kind::Tcp, "ACK").value, Value::Uint(1));
    assert_eq!(find(&d, Kind::Tcp, "SYN").value, Value::Uint(0));
    assert_eq!(find(&d, Kind::Tcp, "TSval").value, Value::Uint(7));
    assert_eq!(find(&d, Kind::Tcp, "Left Edge").value, Value::Uint(3000));
    // Each option's fields cite the option's RFC, the ECN flags RFC 3168.
    assert_eq!(find(&d, Kind::Tcp, "TSval").spec, "RFC 7323 §3");
    assert_eq!(find(&d, Kind::Tcp, "Left Edge").spec, "RFC 2018 §3");
    assert_eq!(find(&d, Kind::Tcp, "ECE").spec, "RFC 3168 §6.1");
    assert_eq!(find(&d, Kind::Tcp, "Window").spec, "RFC 9293 §3.1");
    let payload = d.headers.iter().find(|h| h.kind == Kind::Payload).unwrap();
    assert_eq!(payload.spec, "RFC 9293 §3.1", "a TCP payload is not IBTA's");
    assert_eq!(
        find(&d, Kind::Tcp, "Checksum").meaning,
        Some(Meaning::Check(Verdict::Good))
    );
    check_layout(&bytes, &d);
}

#[test]
fn every_kind_has_an_id_a_name_and_a_section() {
    let mut ids: Vec<&str> = Kind::ALL.iter().map(|k| k.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), Kind::ALL.len(), "ids are distinct");
    assert!(
        Kind::ALL
            .iter()
            .all(|k| !k.name().is_empty() && !k.spec().is_empty())
    );
}

/// Every field of every header the inspector can show names the section that defines it:
/// thousands of frames of every kind the crate emits (every opcode with its extension
/// headers, the IRN forms, CNPs, PAUSE and PFC, TCP with options), and the known header
/// kinds all among them. A field added without a citation fails here.
#[test]
fn every_field_has_a_section() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    let mut fields = 0;
    for _ in 0..3000 {
        let frame = strategies::frame().new_tree(&mut runner).unwrap().current();
        let bytes = frame.to_bytes(&[0x5a; 40]).unwrap();
        let d = dissect(&bytes);
        for h in &d.headers {
            seen.insert(h.kind.id());
            assert!(!h.spec.is_empty(), "{:?} has no section", h.kind);
            for f in &h.fields {
                fields += 1;
                assert!(
                    !f.spec.is_empty(),
                    "{:?} {} has no section (add it to field_spec)",
                    h.kind,
                    f.name
                );
            }
        }
    }
    assert!(fields > 30_000, "{fields} fields looked at");
    // Only a pad the payload never needs, or a kind that a random frame does not reach,
    // may be missing; the headers themselves must all have been seen.
    for k in Kind::ALL {
        // A MAD and its CM message are only in CM frames (`cm_frames_dissect_field_by_field`).
        if !matches!(
            k,
            Kind::Pad
                | Kind::EthernetPad
                | Kind::Payload
                | Kind::Mad
                | Kind::CmReq
                | Kind::CmRep
                | Kind::CmRtu
        ) {
            assert!(seen.contains(k.id()), "no {:?} among the frames", k);
        }
    }
    // The PAUSE and PFC bodies cite their own annexes, not each other's.
    let pfc = PfcFrame::new(MAC_A, pfc::Repr::pfc([Priority::of(3)], 7))
        .to_bytes()
        .unwrap();
    let pause = PfcFrame::new(MAC_A, pfc::Repr::Pause { quanta: 7 })
        .to_bytes()
        .unwrap();
    let body = |b: &[u8]| {
        dissect(b)
            .headers
            .into_iter()
            .find(|h| h.kind == Kind::MacControl)
            .unwrap()
            .spec
    };
    assert_eq!(body(&pause), "IEEE 802.3 Annex 31B");
    assert_eq!(body(&pfc), "IEEE 802.3 Annex 31D; IEEE 802.1Qbb");
}

proptest! {
    /// Whatever frame the crate emits, its dissection covers it, agrees with the getters
    /// and with parse_frame, and finds the opcode the frame was built with.
    #[test]
    fn any_emitted_frame_dissects(frame in strategies::frame(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
        let bytes = frame.to_bytes(&payload).unwrap();
        let d = dissect(&bytes);
        prop_assert_eq!(d.stopped, None);
        prop_assert_eq!(d.frame_check, Some(Ok(())));
        check_layout(&bytes, &d);
        if let Frame::Roce(r) = frame {
            prop_assert_eq!(
                find(&d, Kind::Bth, "OpCode").meaning,
                Some(Meaning::Opcode(r.bth.opcode))
            );
        }
    }

    /// Arbitrary bytes never panic the dissector.
    #[test]
    fn arbitrary_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = dissect(&bytes);
    }
}

/// A CM exchange's three frames (UD SEND Only to QP1, DETH Q_Key 0x80010000 from QP1): the
/// MAD header and the message come out field by field with their IBTA sections, the values
/// the message was built with, and parse_frame takes the same frame back.
#[test]
fn cm_frames_dissect_field_by_field() {
    use crate::ib::cm::{self, IpCmHeader, Message, PathRepr, RepRepr, ReqRepr, RtuRepr};
    let ip_cm = IpCmHeader {
        src_port: 0xc001,
        src_addr: IP_A,
        dst_addr: IP_B,
    };
    let mapped = |a: Ipv4Address| {
        let mut g = [0u8; 16];
        g[10] = 0xff;
        g[11] = 0xff;
        g[12..].copy_from_slice(a.as_bytes());
        g
    };
    let req = ReqRepr {
        local_comm_id: 7,
        service_id: cm::ip_cm_service_id(Protocol::TCP, 4420),
        local_ca_guid: 0x0200_00ff_fe00_0001,
        local_qkey: 0,
        local_qpn: 0x11,
        responder_resources: 16,
        initiator_depth: 16,
        remote_cm_response_timeout: 20,
        transport: cm::TransportService::Rc,
        end_to_end_flow_control: true,
        starting_psn: 0x1234,
        local_cm_response_timeout: 20,
        retry_count: 7,
        pkey: DEFAULT_PKEY,
        path_mtu: 5,
        rnr_retry_count: 7,
        max_cm_retries: 15,
        srq: false,
        primary: PathRepr {
            local_lid: 0xffff,
            remote_lid: 0xffff,
            local_gid: mapped(IP_A),
            remote_gid: mapped(IP_B),
            flow_label: 0,
            packet_rate: 0,
            traffic_class: 0,
            hop_limit: 64,
            sl: 0,
            subnet_local: false,
            local_ack_timeout: 14,
        },
        private_data: ip_cm.private_data(&[0, 0, 1, 0, 32, 0, 31, 0]).unwrap(),
    };
    let rep = RepRepr {
        local_comm_id: 8,
        remote_comm_id: 7,
        local_qkey: 0,
        local_qpn: 0x12,
        starting_psn: 0x5678,
        responder_resources: 16,
        initiator_depth: 16,
        target_ack_delay: 15,
        failover_accepted: 0,
        end_to_end_flow_control: true,
        rnr_retry_count: 7,
        srq: false,
        local_ca_guid: 0x0200_00ff_fe00_0002,
        private_data: [0; cm::REP_PRIVATE_LEN],
    };
    let rtu = RtuRepr {
        local_comm_id: 7,
        remote_comm_id: 8,
        private_data: [0; cm::RTU_PRIVATE_LEN],
    };
    for (msg, kind, qpn_field) in [
        (
            Message::Req(req),
            Kind::CmReq,
            Some(("LocalQPN", 0x11, "StartingPSN", 0x1234)),
        ),
        (
            Message::Rep(rep),
            Kind::CmRep,
            Some(("LocalQPN", 0x12, "StartingPSN", 0x5678)),
        ),
        (Message::Rtu(rtu), Kind::CmRtu, None),
    ] {
        let mad_bytes = msg.to_mad(0x2a).unwrap();
        let frame = RoceFrame::gsi_mad(Link::new(MAC_A, MAC_B), Ip::new(IP_A, IP_B), 0xc000, 3);
        assert!(frame.is_gsi_mad());
        let bytes = frame.to_bytes(&mad_bytes).unwrap();
        let d = dissect(&bytes);
        assert_eq!(d.stopped, None);
        assert_eq!(d.frame_check, Some(Ok(())));
        let kinds: Vec<Kind> = d.headers.iter().map(|h| h.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Ethernet,
                Kind::Ipv4,
                Kind::Udp,
                Kind::Bth,
                Kind::Deth,
                Kind::Mad,
                kind,
                Kind::Icrc
            ]
        );
        assert_eq!(find(&d, Kind::Bth, "DestQP").value, Value::Uint(1));
        assert_eq!(
            find(&d, Kind::Deth, "Q_Key").value,
            Value::Uint(0x8001_0000)
        );
        assert_eq!(find(&d, Kind::Deth, "SrcQP").value, Value::Uint(1));
        assert_eq!(find(&d, Kind::Mad, "MgmtClass").value, Value::Uint(7));
        assert_eq!(find(&d, Kind::Mad, "Method").value, Value::Uint(3));
        assert_eq!(
            find(&d, Kind::Mad, "TransactionID").value,
            Value::Uint(0x2a)
        );
        assert_eq!(
            find(&d, Kind::Mad, "AttributeID").value,
            Value::Uint(msg.attribute().id().into())
        );
        if let Some((q, qv, p, pv)) = qpn_field {
            assert_eq!(find(&d, kind, q).value, Value::Uint(qv));
            assert_eq!(find(&d, kind, p).value, Value::Uint(pv));
        }
        if kind == Kind::CmReq {
            assert_eq!(
                find(&d, kind, "ServiceID").value,
                Value::Uint(0x0000_0000_0106_1144)
            );
            assert_eq!(find(&d, kind, "PathMTU").value, Value::Uint(5));
            assert_eq!(
                find(&d, kind, "PrimaryLocalACKTimeout").value,
                Value::Uint(14)
            );
        }
        assert_eq!(
            find(&d, Kind::Mad, "BaseVersion").spec,
            "IBTA Vol 1 §13.4.2"
        );
        for h in &d.headers {
            for f in &h.fields {
                assert!(!f.spec.is_empty(), "{:?} {} has no section", h.kind, f.name);
            }
        }
        check_layout(&bytes, &d);
        // parse_frame takes the frame and the MAD back.
        let (Frame::Roce(back), payload) = crate::parse_frame(&bytes).unwrap() else {
            panic!("a RoCE frame");
        };
        assert_eq!(back, frame);
        assert_eq!(Message::parse_mad(payload).unwrap().1, msg);
    }
}
