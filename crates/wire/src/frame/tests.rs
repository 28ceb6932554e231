//! Round trips, literal bytes and the parser's refusals for every frame kind.

use super::*;
use crate::ib::aeth::{NakCode, Syndrome};
use crate::ib::{DEFAULT_PKEY, Operation};
use crate::strategies;
use proptest::prelude::*;
use units::Priority;

const MAC_A: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);
const MAC_B: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x02]);
const IP_A: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
const IP_B: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

/// The SEND_ONLY frame of `ecosystem.md`, byte by byte (scapy and tshark agree on it).
static SEND_ONLY_FRAME: [u8; 74] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08,
    0x00, // Ethernet
    0x45, 0x02, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0xac, 0x0a, 0x00, 0x00, 0x01,
    0x0a, 0x00, 0x00, 0x02, // IPv4: ECT(0), len 60, id 1, DF, TTL 64, UDP
    0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // UDP 49152 -> 4791, len 40, csum 0
    0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x64, // BTH
    b'h', b'e', b'l', b'l', b'o', b' ', b'r', b'd', b'm', b'a', b' ', b's', b'e', b'n', b'd',
    b'!', // payload
    0x58, 0xf6, 0x22, 0xa0, // ICRC
];

/// The WRITE_ONLY frame of `ecosystem.md`.
fn write_only_frame() -> Vec<u8> {
    let mut f = vec![
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45,
        0x02, 0x00, 0x5c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0x8c, 0x0a, 0x00, 0x00, 0x01,
        0x0a, 0x00, 0x00, 0x02, // IPv4, len 92
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x48, 0x00, 0x00, // UDP, len 72
        0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x65, // BTH
        0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00,
        0x20, // RETH
    ];
    f.extend_from_slice(&[b'W'; 32]);
    f.extend_from_slice(&[0xec, 0xfc, 0xf3, 0xa6]);
    f
}

fn vector_ip() -> Ip {
    Ip {
        ecn: Ecn::Ect0,
        ident: 1,
        ..Ip::new(IP_A, IP_B)
    }
}

fn vector_bth(op: Operation, psn: u32) -> bth::Repr {
    bth::Repr {
        opcode: Opcode::rc(op),
        solicited: false,
        mig_req: false,
        pad_count: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp: 0x11,
        ack_req: true,
        psn,
    }
}

fn send_only() -> RoceFrame {
    RoceFrame::new(
        Link::new(MAC_A, MAC_B),
        vector_ip(),
        49152,
        vector_bth(Operation::SendOnly, 100),
        ExtHeaders::NONE,
        16,
    )
}

fn write_only() -> RoceFrame {
    let ext = ExtHeaders {
        reth: Some(reth::Repr {
            va: 0x7f00_0000_1000,
            rkey: 0x1234,
            dma_len: 32,
        }),
        ..ExtHeaders::NONE
    };
    RoceFrame::new(
        Link::new(MAC_A, MAC_B),
        vector_ip(),
        49152,
        vector_bth(Operation::RdmaWriteOnly, 101),
        ext,
        32,
    )
}

/// CRC-32 (IEEE, reflected, polynomial 0xedb88320) one bit at a time: an implementation
/// that shares nothing with `crc32fast`.
fn crc32_bitwise(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The ICRC of an emitted RoCEv2 frame, found and masked by hand from the raw bytes.
fn icrc_by_hand(frame: &[u8]) -> [u8; 4] {
    let l2 = if frame[12..14] == [0x81, 0x00] {
        18
    } else {
        14
    };
    let ihl = usize::from(frame[l2] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([frame[l2 + 2], frame[l2 + 3]]));
    let mut covered = vec![0xff; 8];
    covered.extend_from_slice(&frame[l2..l2 + total - 4]);
    let ip = 8;
    covered[ip + 1] = 0xff; // TOS
    covered[ip + 8] = 0xff; // TTL
    covered[ip + 10] = 0xff; // header checksum
    covered[ip + 11] = 0xff;
    covered[ip + ihl + 6] = 0xff; // UDP checksum
    covered[ip + ihl + 7] = 0xff;
    covered[ip + ihl + 8 + 4] = 0xff; // BTH FECN/BECN/reserved
    crc32_bitwise(&covered).to_le_bytes()
}

fn icrc_on_wire(frame: &[u8]) -> [u8; 4] {
    let l2 = if frame[12..14] == [0x81, 0x00] {
        18
    } else {
        14
    };
    let total = usize::from(u16::from_be_bytes([frame[l2 + 2], frame[l2 + 3]]));
    let end = l2 + total;
    [
        frame[end - 4],
        frame[end - 3],
        frame[end - 2],
        frame[end - 1],
    ]
}

#[test]
fn bitwise_crc_check_value() {
    // The standard CRC-32 check value.
    assert_eq!(crc32_bitwise(b"123456789"), 0xcbf4_3926);
}

#[test]
fn icrc_vector_send_only() {
    let bytes = send_only().to_bytes(b"hello rdma send!").unwrap();
    assert_eq!(bytes, SEND_ONLY_FRAME);
    assert_eq!(icrc_by_hand(&bytes), [0x58, 0xf6, 0x22, 0xa0]);
    let (frame, payload) = RoceFrame::parse(&bytes).unwrap();
    assert_eq!(frame, send_only());
    assert_eq!(payload, b"hello rdma send!");
}

#[test]
fn icrc_vector_write_only() {
    let bytes = write_only().to_bytes(&[b'W'; 32]).unwrap();
    assert_eq!(bytes, write_only_frame());
    assert_eq!(icrc_by_hand(&bytes), [0xec, 0xfc, 0xf3, 0xa6]);
    let (frame, payload) = parse_frame(&bytes).unwrap();
    assert_eq!(frame, Frame::Roce(write_only()));
    assert_eq!(payload, &[b'W'; 32]);
}

#[test]
fn test_emit_writes_only_its_bytes() {
    let mut buffer = vec![0xa5; 100];
    let len = send_only().emit(b"hello rdma send!", &mut buffer).unwrap();
    assert_eq!(len, 74);
    assert_eq!(buffer[..74], SEND_ONLY_FRAME);
    assert!(buffer[74..].iter().all(|&b| b == 0xa5));
    assert_eq!(
        send_only().emit(b"", &mut [0; 73]),
        Err(Error::Truncated("output buffer"))
    );
}

#[test]
fn every_covered_byte_is_protected() {
    // Flip each byte the ICRC covers without masking (all but BTH byte 4) and each byte of
    // the IPv4 header: parsing must fail, through a checksum, the ICRC or a field check.
    for (frame, payload) in [
        (send_only(), &b"hello rdma send!"[..]),
        (write_only(), &[b'W'; 32][..]),
    ] {
        let bytes = frame.to_bytes(payload).unwrap();
        let bth_byte4 = 14 + 20 + 8 + 4;
        for i in 14..bytes.len() {
            if i == bth_byte4 {
                continue;
            }
            for flip in [0x01, 0x80] {
                let mut bad = bytes.clone();
                bad[i] ^= flip;
                assert!(
                    parse_frame(&bad).is_err(),
                    "byte {i} ^ {flip:#x} went unnoticed"
                );
            }
        }
        // BTH byte 4 is masked: BECN can be set in flight and the ICRC still holds.
        let mut becn = bytes.clone();
        becn[bth_byte4] |= 0x40;
        let (parsed, _) = RoceFrame::parse(&becn).unwrap();
        assert!(parsed.bth.becn);
    }
}

#[test]
fn ce_marking_keeps_the_icrc() {
    let before = send_only().to_bytes(b"hello rdma send!").unwrap();
    let mut marked = Frame::Roce(send_only());
    let ip = marked.ip_mut().unwrap();
    ip.ecn = Ecn::Ce;
    ip.ttl -= 1;
    let after = marked.to_bytes(b"hello rdma send!").unwrap();
    assert_ne!(before[14..34], after[14..34]);
    assert_eq!(icrc_on_wire(&before), icrc_on_wire(&after));
    let (parsed, _) = parse_frame(&after).unwrap();
    assert_eq!(parsed.ip().unwrap().ecn, Ecn::Ce);
}

#[test]
fn ack_nak_and_atomic_frames() {
    let link = Link::new(MAC_B, MAC_A);
    let ip = Ip::new(IP_B, IP_A);
    let ack = |op, ext, len| RoceFrame::new(link, ip, 49153, vector_bth(op, 100), ext, len);
    let nak = ack(
        Operation::Acknowledge,
        ExtHeaders {
            aeth: Some(aeth::Repr {
                syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                msn: 7,
            }),
            ..ExtHeaders::NONE
        },
        0,
    );
    let bytes = nak.to_bytes(&[]).unwrap();
    // 14 + 20 + 8 + 12 + 4 + 4: above the Ethernet minimum, no padding.
    assert_eq!(bytes.len(), 62);
    assert_eq!(parse_frame(&bytes).unwrap(), (Frame::Roce(nak), &[][..]));

    let atomic_ack = ack(
        Operation::AtomicAcknowledge,
        ExtHeaders {
            aeth: Some(aeth::Repr {
                syndrome: Syndrome::Ack { credits: 0x1f },
                msn: 8,
            }),
            atomic_ack_eth: Some(atomic_ack_eth::Repr {
                orig_remote_data: 41,
            }),
            ..ExtHeaders::NONE
        },
        0,
    );
    let bytes = atomic_ack.to_bytes(&[]).unwrap();
    assert_eq!(bytes.len(), 70);
    assert_eq!(icrc_by_hand(&bytes), icrc_on_wire(&bytes));
    assert_eq!(RoceFrame::parse(&bytes).unwrap().0, atomic_ack);
}

#[test]
fn odd_payload_gets_padding() {
    let mut frame = send_only();
    frame.set_payload_len(5);
    assert_eq!(frame.bth.pad_count, 3);
    let bytes = frame.to_bytes(b"hello").unwrap();
    // BTH byte 1 carries the pad count in bits 5:4.
    assert_eq!(bytes[14 + 20 + 8 + 1], 0x30);
    assert_eq!(&bytes[54..59], b"hello");
    assert_eq!(&bytes[59..62], &[0, 0, 0]);
    let (parsed, payload) = RoceFrame::parse(&bytes).unwrap();
    assert_eq!(parsed.payload_len, 5);
    assert_eq!(payload, b"hello");
}

#[test]
fn emit_refuses_inconsistent_frames() {
    let mut f = send_only();
    f.bth.pad_count = 1;
    assert!(matches!(f.to_bytes(&[]), Err(Error::Malformed(_))));

    let mut f = send_only();
    f.ext.reth = write_only().ext.reth;
    assert_eq!(
        f.to_bytes(&[]),
        Err(Error::Malformed(
            "extension headers do not match the opcode"
        ))
    );

    let mut f = write_only();
    f.bth.opcode = Opcode::rc(Operation::RdmaReadRequest);
    assert_eq!(
        f.to_bytes(&[]),
        Err(Error::Malformed("payload on an opcode that carries none"))
    );

    let mut f = send_only();
    f.bth.opcode = Opcode::CNP;
    assert!(matches!(f.to_bytes(&[]), Err(Error::Unsupported(_))));

    let mut f = send_only();
    f.bth.psn = 1 << 24;
    assert!(matches!(f.to_bytes(&[]), Err(Error::Malformed(_))));

    let mut f = send_only();
    f.set_payload_len(65_500);
    assert!(matches!(f.to_bytes(&[]), Err(Error::Malformed(_))));

    let mut f = send_only();
    f.ip.dscp = 64;
    assert_eq!(f.to_bytes(&[]), Err(Error::Malformed("DSCP above 63")));

    let mut f = send_only();
    f.link.vlan = Some(vlan::Tag {
        pcp: Priority::of(3),
        dei: false,
        vid: 4096,
    });
    assert!(matches!(f.to_bytes(&[]), Err(Error::Malformed(_))));
}

#[test]
fn cnp_frame_layout() {
    let cnp = CnpFrame {
        link: Link::new(MAC_B, MAC_A),
        ip: Ip {
            dscp: 48,
            ..Ip::new(IP_B, IP_A)
        },
        udp_src_port: 49152,
        cnp: cnp::Repr::new(0x22),
    };
    let bytes = cnp.to_bytes().unwrap();
    assert_eq!(bytes.len(), 14 + 20 + 8 + 12 + 16 + 4);
    assert_eq!(bytes[14 + 1], 48 << 2);
    assert_eq!(bytes[42], 0x81);
    assert_eq!(bytes[42 + 4], 0x40); // BECN
    assert_eq!(&bytes[54..70], &[0; 16]);
    assert_eq!(icrc_by_hand(&bytes), icrc_on_wire(&bytes));
    assert_eq!(parse_frame(&bytes).unwrap(), (Frame::Cnp(cnp), &[][..]));
    assert_eq!(CnpFrame::parse(&bytes), Ok(cnp));
    assert!(matches!(
        RoceFrame::parse(&bytes),
        Err(Error::Unsupported(_))
    ));
}

#[test]
fn tcp_and_pfc_frames_are_padded_to_60() {
    let tcp = TcpFrame {
        link: Link::new(MAC_A, MAC_B),
        ip: Ip::new(IP_A, IP_B),
        tcp: tcp::Repr {
            src_port: 5001,
            dst_port: 40000,
            seq: 1,
            ack: 2,
            flags: tcp::Flags::ACK,
            window: 512,
            ..tcp::Repr::default()
        },
    };
    let bytes = tcp.to_bytes(&[]).unwrap();
    assert_eq!(bytes.len(), 60);
    assert_eq!(&bytes[54..], &[0; 6]);
    assert_eq!(parse_frame(&bytes).unwrap(), (Frame::Tcp(tcp), &[][..]));

    let pfc = PfcFrame::new(MAC_A, pfc::Repr::pfc([Priority::of(3)], 0xffff));
    let bytes = pfc.to_bytes().unwrap();
    assert_eq!(bytes.len(), 60);
    assert_eq!(&bytes[..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
    assert_eq!(&bytes[12..16], &[0x88, 0x08, 0x01, 0x01]);
    assert_eq!(PfcFrame::parse(&bytes), Ok(pfc));
    assert_eq!(Frame::Pfc(pfc).payload_len(), 0);
}

#[test]
fn foreign_frames_are_unsupported() {
    let mut bytes = SEND_ONLY_FRAME;
    bytes[12..14].copy_from_slice(&[0x86, 0xdd]);
    assert_eq!(parse_frame(&bytes), Err(Error::Unsupported("IPv6")));
    bytes[12..14].copy_from_slice(&[0x08, 0x06]); // ARP
    assert!(matches!(parse_frame(&bytes), Err(Error::Unsupported(_))));

    // UDP to port 4792: a valid datagram, not RoCEv2.
    let mut bytes = SEND_ONLY_FRAME;
    bytes[14 + 20 + 3] = 0xb8;
    assert_eq!(
        parse_frame(&bytes),
        Err(Error::Unsupported("UDP destination port other than 4791"))
    );

    // A fragment (MF set), with the checksum fixed so that only the fragment is wrong.
    let mut bytes = SEND_ONLY_FRAME;
    bytes[14 + 6] = 0x20;
    ipv4::Packet::new_unchecked(&mut bytes[14..34]).fill_checksum();
    assert_eq!(
        parse_frame(&bytes),
        Err(Error::Unsupported("IPv4 fragment"))
    );
}

#[test]
fn bad_icrc_is_reported() {
    let mut bytes = SEND_ONLY_FRAME;
    bytes[73] = 0x5f;
    assert_eq!(
        parse_frame(&bytes),
        Err(Error::Icrc {
            computed: [0x58, 0xf6, 0x22, 0xa0],
            found: [0x58, 0xf6, 0x22, 0x5f]
        })
    );
}

#[test]
fn representations_stay_small() {
    // The simulator moves these by value for every packet; keep an eye on their size.
    use core::mem::size_of;
    // Measured at 208 (RoceFrame, the largest variant; 184 before the IRN extension), 120,
    // 40 and 34 bytes.
    assert!(size_of::<Frame>() <= 208);
    assert!(size_of::<TcpFrame>() <= 128);
    assert!(size_of::<CnpFrame>() <= 48);
    assert!(size_of::<bth::Repr>() <= 20);
}

/// The length of a frame before Ethernet padding: any shorter prefix must not parse.
fn unpadded_len(frame: &Frame) -> usize {
    let l2 = frame.link().header_len();
    match frame {
        Frame::Roce(f) => l2 + f.ip_len(),
        Frame::Cnp(f) => l2 + f.ip_len(),
        Frame::Tcp(f) => l2 + f.ip_len(),
        Frame::Pfc(f) => l2 + f.control.header_len(),
    }
}

proptest! {
    #[test]
    fn roce_round_trip(frame in strategies::roce_frame(), fill in any::<u8>()) {
        let payload = vec![fill; usize::from(frame.payload_len)];
        let bytes = frame.to_bytes(&payload).unwrap();
        prop_assert_eq!(bytes.len(), frame.buffer_len());
        let (parsed, got) = RoceFrame::parse(&bytes).unwrap();
        prop_assert_eq!(parsed, frame);
        prop_assert_eq!(got, &payload[..]);
    }

    #[test]
    fn icrc_matches_independent_crc(frame in strategies::roce_frame(), seed in any::<u8>()) {
        let payload: Vec<u8> = (0..frame.payload_len).map(|i| (i as u8) ^ seed).collect();
        let bytes = frame.to_bytes(&payload).unwrap();
        prop_assert_eq!(icrc_by_hand(&bytes), icrc_on_wire(&bytes));
    }

    #[test]
    fn cnp_icrc_matches_independent_crc(frame in strategies::cnp_frame()) {
        let bytes = frame.to_bytes().unwrap();
        prop_assert_eq!(icrc_by_hand(&bytes), icrc_on_wire(&bytes));
    }

    #[test]
    fn any_frame_round_trips(frame in strategies::frame(), fill in any::<u8>()) {
        let payload = vec![fill; frame.payload_len()];
        let bytes = frame.to_bytes(&payload).unwrap();
        prop_assert!(bytes.len() >= ethernet::MIN_FRAME_LEN);
        let (parsed, got) = parse_frame(&bytes).unwrap();
        prop_assert_eq!(parsed, frame);
        prop_assert_eq!(got, &payload[..]);
    }

    #[test]
    fn truncated_frames_never_panic(frame in strategies::frame()) {
        let bytes = frame.to_bytes(&[]).unwrap();
        let unpadded = unpadded_len(&frame);
        for cut in 0..bytes.len() {
            let result = parse_frame(&bytes[..cut]);
            if cut < unpadded {
                prop_assert!(result.is_err(), "prefix of {} bytes parsed", cut);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_frame(&bytes);
        let _ = RoceFrame::parse(&bytes);
        let _ = CnpFrame::parse(&bytes);
        let _ = TcpFrame::parse(&bytes);
        let _ = PfcFrame::parse(&bytes);
    }

    #[test]
    fn corrupted_frames_never_panic(
        frame in strategies::frame(),
        index in any::<prop::sample::Index>(),
        xor in 1u8..=255,
    ) {
        let mut bytes = frame.to_bytes(&[]).unwrap();
        let i = index.index(bytes.len());
        bytes[i] ^= xor;
        let _ = parse_frame(&bytes);
    }

    #[test]
    fn plausible_headers_never_panic(
        frame in strategies::roce_frame(),
        tail in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        // Valid Ethernet/IPv4/UDP headers in front of random transport bytes.
        let mut bytes = frame.to_bytes(&[]).unwrap();
        let l2 = frame.link.header_len();
        bytes.truncate(l2 + ipv4::HEADER_LEN + udp::HEADER_LEN);
        bytes.extend_from_slice(&tail);
        let ip_len = (bytes.len() - l2) as u16;
        let mut ip = ipv4::Packet::new_unchecked(&mut bytes[l2..]);
        ip.set_total_len(ip_len);
        ip.fill_checksum();
        let mut udp = udp::Packet::new_unchecked(&mut bytes[l2 + ipv4::HEADER_LEN..]);
        udp.set_len(ip_len - ipv4::HEADER_LEN as u16);
        let _ = parse_frame(&bytes);
    }
}
