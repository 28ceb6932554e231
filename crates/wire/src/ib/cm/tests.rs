use super::*;
use crate::ib::mad;
use proptest::prelude::*;

fn path() -> PathRepr {
    PathRepr {
        local_lid: 0xffff,
        remote_lid: 0xffff,
        local_gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2],
        remote_gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1],
        flow_label: 0x1_2345,
        packet_rate: 0x2a,
        traffic_class: 0x68,
        hop_limit: 64,
        sl: 3,
        subnet_local: false,
        local_ack_timeout: 14,
    }
}

fn req() -> ReqRepr {
    let ip = IpCmHeader {
        src_port: 0xc123,
        src_addr: Ipv4Address::new(10, 0, 0, 2),
        dst_addr: Ipv4Address::new(10, 0, 0, 1),
    };
    ReqRepr {
        local_comm_id: 0x1122_3344,
        service_id: ip_cm_service_id(Protocol::TCP, 4420),
        local_ca_guid: 0x0102_0304_0506_0708,
        local_qkey: 0,
        local_qpn: 0x00_0011,
        responder_resources: 16,
        initiator_depth: 16,
        remote_cm_response_timeout: 20,
        transport: TransportService::Rc,
        end_to_end_flow_control: true,
        starting_psn: 0xab_cdef,
        local_cm_response_timeout: 20,
        retry_count: 7,
        pkey: 0xffff,
        path_mtu: 5,
        rnr_retry_count: 7,
        max_cm_retries: 15,
        srq: false,
        primary: path(),
        private_data: ip.private_data(&[0, 0, 1, 0, 32, 0, 31, 0]).unwrap(),
    }
}

/// The REQ above as bytes, written out field by field from IBTA Vol. 1 §12.6.5.
fn req_bytes() -> Vec<u8> {
    let mut b = vec![0u8; MESSAGE_LEN];
    b[0..4].copy_from_slice(&[0x11, 0x22, 0x33, 0x44]);
    // Service ID: Annex A11's prefix 0x0000000001, protocol 6 (TCP), port 4420 (0x1144).
    b[8..16].copy_from_slice(&[0, 0, 0, 0, 0x01, 0x06, 0x11, 0x44]);
    b[16..24].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    b[32..36].copy_from_slice(&[0x00, 0x00, 0x11, 16]);
    b[39] = 16;
    b[43] = (20 << 3) | 1; // remote CM timeout 20, RC (0), end-to-end flow control
    b[44..48].copy_from_slice(&[0xab, 0xcd, 0xef, (20 << 3) | 7]);
    b[48..50].copy_from_slice(&[0xff, 0xff]);
    b[50] = (5 << 4) | 7; // MTU 4096, RNR retry 7
    b[51] = 15 << 4; // max CM retries 15
    b[52..56].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    b[66..72].copy_from_slice(&[0xff, 0xff, 10, 0, 0, 2]);
    b[82..88].copy_from_slice(&[0xff, 0xff, 10, 0, 0, 1]);
    b[88..92].copy_from_slice(&[0x12, 0x34, 0x50, 0x2a]); // flow label 0x12345, rate 0x2a
    b[92..96].copy_from_slice(&[0x68, 64, 3 << 4, 14 << 3]);
    // Private data: IP CM header (version 0.0, IPv4, port 0xc123, 10.0.0.2 → 10.0.0.1) then
    // NVMe/RDMA's recfmt 0, qid 1, hrqsize 32, hsqsize 31 (little-endian).
    b[141] = 0x40;
    b[142..144].copy_from_slice(&[0xc1, 0x23]);
    b[156..160].copy_from_slice(&[10, 0, 0, 2]);
    b[172..176].copy_from_slice(&[10, 0, 0, 1]);
    b[176..184].copy_from_slice(&[0, 0, 1, 0, 32, 0, 31, 0]);
    b
}

fn rep() -> RepRepr {
    let mut private_data = [0; REP_PRIVATE_LEN];
    private_data[2] = 32;
    RepRepr {
        local_comm_id: 0x5566_7788,
        remote_comm_id: 0x1122_3344,
        local_qkey: 0,
        local_qpn: 0x00_0012,
        starting_psn: 0x12_3456,
        responder_resources: 16,
        initiator_depth: 8,
        target_ack_delay: 15,
        failover_accepted: 0,
        end_to_end_flow_control: true,
        rnr_retry_count: 7,
        srq: false,
        local_ca_guid: 0x1112_1314_1516_1718,
        private_data,
    }
}

fn rep_bytes() -> Vec<u8> {
    let mut b = vec![0u8; MESSAGE_LEN];
    b[0..8].copy_from_slice(&[0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44]);
    b[12..15].copy_from_slice(&[0x00, 0x00, 0x12]);
    b[20..23].copy_from_slice(&[0x12, 0x34, 0x56]);
    b[24..28].copy_from_slice(&[16, 8, (15 << 3) | 1, 7 << 5]);
    b[28..36].copy_from_slice(&[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]);
    b[38] = 32; // nvme_rdma_cm_rep: recfmt 0, crqsize 32
    b
}

#[test]
fn req_deconstructs_and_parses_from_literal_bytes() {
    let bytes = req_bytes();
    let p = Packet::new_checked(&bytes[..]).unwrap();
    assert_eq!(p.local_comm_id(), 0x1122_3344);
    assert_eq!(p.req_service_id(), 0x0000_0000_0106_1144);
    assert_eq!(p.req_local_qpn(), 0x11);
    assert_eq!(p.req_starting_psn(), 0xab_cdef);
    assert_eq!(p.req_path_mtu(), 5);
    assert_eq!(p.req_primary_remote_gid()[12..], [10, 0, 0, 1]);
    assert_eq!(ReqRepr::parse(&p).unwrap(), req());
    let (ip, consumer) = IpCmHeader::parse(p.req_private_data()).unwrap();
    assert_eq!(ip.src_port, 0xc123);
    assert_eq!(ip.dst_addr, Ipv4Address::new(10, 0, 0, 1));
    assert_eq!(consumer[..8], [0, 0, 1, 0, 32, 0, 31, 0]);
    assert_eq!(consumer.len(), 56);
}

#[test]
fn req_emits_into_a_poisoned_buffer() {
    let mut bytes = vec![0xa5; MESSAGE_LEN];
    req().emit(&mut Packet::new_unchecked(&mut bytes));
    assert_eq!(bytes, req_bytes());
}

#[test]
fn rep_and_rtu_from_literal_bytes_and_into_poisoned_buffers() {
    let bytes = rep_bytes();
    let p = Packet::new_checked(&bytes[..]).unwrap();
    assert_eq!(p.rep_local_qpn(), 0x12);
    assert_eq!(p.rep_starting_psn(), 0x12_3456);
    assert_eq!(p.remote_comm_id(), 0x1122_3344);
    assert_eq!(RepRepr::parse(&p).unwrap(), rep());
    let mut out = vec![0xa5; MESSAGE_LEN];
    rep().emit(&mut Packet::new_unchecked(&mut out));
    assert_eq!(out, bytes);

    let rtu = RtuRepr {
        local_comm_id: 0x1122_3344,
        remote_comm_id: 0x5566_7788,
        private_data: [0; RTU_PRIVATE_LEN],
    };
    let mut out = vec![0xa5; MESSAGE_LEN];
    rtu.emit(&mut Packet::new_unchecked(&mut out));
    assert_eq!(out[..8], [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    assert!(out[8..].iter().all(|&b| b == 0));
    assert_eq!(
        RtuRepr::parse(&Packet::new_checked(&out[..]).unwrap()),
        Ok(rtu)
    );
}

#[test]
fn a_whole_mad_carries_the_message_and_its_attribute() {
    let m = Message::Req(req());
    let bytes = m.to_mad(0x0000_0001_0000_0007).unwrap();
    assert_eq!(
        bytes[..4],
        [0x01, 0x07, 0x02, 0x03],
        "base 1, class CM, version 2, Send"
    );
    assert_eq!(bytes[16..18], [0x00, 0x10], "attribute REQ");
    assert_eq!(bytes[24..], req_bytes()[..]);
    let (hdr, back) = Message::parse_mad(&bytes).unwrap();
    assert_eq!(hdr.transaction_id, 0x0000_0001_0000_0007);
    assert_eq!(back, m);
    assert_eq!(back.attribute().name(), "ConnectRequest");
    // A REP's attribute is 0x0013, an RTU's 0x0014.
    assert_eq!(Message::Rep(rep()).to_mad(1).unwrap()[16..18], [0x00, 0x13]);
    let mut other = bytes;
    other[1] = 0x03;
    assert_eq!(
        Message::parse_mad(&other),
        Err(Error::Unsupported("MAD class other than CM"))
    );
}

#[test]
fn out_of_range_fields_and_short_buffers_are_refused() {
    let mut r = req();
    r.local_qpn = 1 << 24;
    assert_eq!(
        Message::Req(r).to_mad(1),
        Err(Error::Malformed("CM REQ local QPN above 24 bits"))
    );
    let mut bytes = req_bytes();
    bytes[43] |= 0x06;
    assert_eq!(
        ReqRepr::parse(&Packet::new_checked(&bytes[..]).unwrap()),
        Err(Error::Malformed(
            "CM REQ transport service type 3 is reserved"
        ))
    );
    assert_eq!(
        Packet::new_checked(&bytes[..231]),
        Err(Error::Truncated("CM message"))
    );
    assert_eq!(
        mad::Packet::new_checked(&[0u8; 100][..]),
        Err(Error::Truncated("MAD"))
    );
    let ip = IpCmHeader {
        src_port: 1,
        src_addr: Ipv4Address::new(1, 2, 3, 4),
        dst_addr: Ipv4Address::new(5, 6, 7, 8),
    };
    assert!(ip.private_data(&[0; 57]).is_err());
}

fn path_strategy() -> impl Strategy<Value = PathRepr> {
    (
        (
            any::<u16>(),
            any::<u16>(),
            any::<[u8; 16]>(),
            any::<[u8; 16]>(),
        ),
        (0u32..1 << 20, 0u8..64, any::<u8>(), any::<u8>()),
        (0u8..16, any::<bool>(), 0u8..32),
    )
        .prop_map(
            |((ll, rl, lg, rg), (fl, pr, tc, hl), (sl, sn, ack))| PathRepr {
                local_lid: ll,
                remote_lid: rl,
                local_gid: lg,
                remote_gid: rg,
                flow_label: fl,
                packet_rate: pr,
                traffic_class: tc,
                hop_limit: hl,
                sl,
                subnet_local: sn,
                local_ack_timeout: ack,
            },
        )
}

proptest! {
    #[test]
    fn req_round_trips(
        ids in (any::<u32>(), any::<u64>(), any::<u64>(), any::<u32>()),
        qp in (0u32..1 << 24, any::<u8>(), any::<u8>(), 0u32..1 << 24),
        bits in (0u8..32, 0u8..3, any::<bool>(), 0u8..32, 0u8..8, 0u8..16, 0u8..8, 0u8..16, any::<bool>()),
        pkey in any::<u16>(),
        primary in path_strategy(),
        pd in proptest::collection::vec(any::<u8>(), REQ_PRIVATE_LEN),
    ) {
        let transport = [TransportService::Rc, TransportService::Uc, TransportService::Rd][bits.1 as usize];
        let r = ReqRepr {
            local_comm_id: ids.0, service_id: ids.1, local_ca_guid: ids.2, local_qkey: ids.3,
            local_qpn: qp.0, responder_resources: qp.1, initiator_depth: qp.2,
            remote_cm_response_timeout: bits.0, transport, end_to_end_flow_control: bits.2,
            starting_psn: qp.3, local_cm_response_timeout: bits.3, retry_count: bits.4,
            pkey, path_mtu: bits.5, rnr_retry_count: bits.6, max_cm_retries: bits.7,
            srq: bits.8, primary, private_data: pd.try_into().unwrap(),
        };
        let bytes = Message::Req(r).to_mad(7).unwrap();
        prop_assert_eq!(Message::parse_mad(&bytes).map(|m| m.1), Ok(Message::Req(r)));
    }

    #[test]
    fn rep_round_trips(
        ids in (any::<u32>(), any::<u32>(), any::<u32>(), any::<u64>()),
        qp in (0u32..1 << 24, 0u32..1 << 24, any::<u8>(), any::<u8>()),
        bits in (0u8..32, 0u8..4, any::<bool>(), 0u8..8, any::<bool>()),
        pd in proptest::collection::vec(any::<u8>(), REP_PRIVATE_LEN),
    ) {
        let r = RepRepr {
            local_comm_id: ids.0, remote_comm_id: ids.1, local_qkey: ids.2,
            local_qpn: qp.0, starting_psn: qp.1, responder_resources: qp.2,
            initiator_depth: qp.3, target_ack_delay: bits.0, failover_accepted: bits.1,
            end_to_end_flow_control: bits.2, rnr_retry_count: bits.3, srq: bits.4,
            local_ca_guid: ids.3, private_data: pd.try_into().unwrap(),
        };
        let bytes = Message::Rep(r).to_mad(7).unwrap();
        prop_assert_eq!(Message::parse_mad(&bytes).map(|m| m.1), Ok(Message::Rep(r)));
    }

    #[test]
    fn rtu_round_trips(
        ids in (any::<u32>(), any::<u32>()),
        pd in proptest::collection::vec(any::<u8>(), RTU_PRIVATE_LEN),
    ) {
        let r = RtuRepr { local_comm_id: ids.0, remote_comm_id: ids.1, private_data: pd.try_into().unwrap() };
        let bytes = Message::Rtu(r).to_mad(7).unwrap();
        prop_assert_eq!(Message::parse_mad(&bytes).map(|m| m.1), Ok(Message::Rtu(r)));
    }
}
