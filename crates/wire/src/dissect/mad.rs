//! A management datagram in a UD SEND to QP1, field by field: the common MAD header (IBTA
//! vol. 1 §13.4.2) and, for the connection manager's class, its REQ, REP or RTU (§12.6.5,
//! §12.6.8, §12.6.9). Any other class, or a payload that is not a whole MAD, stays payload.

use super::*;
use crate::ib::{cm, mad};

impl Walk<'_> {
    /// The MAD at frame byte `off` of a UD SEND to QP1 with `payload_len` payload bytes, if it
    /// is a CM REQ, REP or RTU: pushes the MAD header and the message and returns the bytes
    /// they cover (0 when the payload is something else, left to be shown as payload).
    pub(super) fn gsi_mad(&mut self, off: usize, payload_len: usize) -> usize {
        let bytes = self.bytes;
        if payload_len < mad::MAD_LEN || bytes.len() < off + mad::MAD_LEN {
            return 0;
        }
        let m = mad::Packet::new_unchecked(&bytes[off..off + mad::MAD_LEN]);
        if m.base_version() != mad::BASE_VERSION || m.mgmt_class() != mad::Class::CM {
            return 0;
        }
        let kind = match cm::Attribute::from_id(m.attribute_id()) {
            Some(cm::Attribute::Req) => Kind::CmReq,
            Some(cm::Attribute::Rep) => Kind::CmRep,
            Some(cm::Attribute::Rtu) => Kind::CmRtu,
            _ => return 0,
        };
        use mad::field as f;
        let u = |r: Range<usize>| -> u64 {
            bytes[off + r.start..off + r.end]
                .iter()
                .fold(0, |acc, &b| (acc << 8) | u64::from(b))
        };
        let byte = |i: usize| bytes[off + i];
        self.push(
            Kind::Mad,
            off,
            mad::HEADER_LEN,
            vec![
                field("BaseVersion", bytes_at(0..1), byte(f::BASE_VERSION).into()),
                field("MgmtClass", bytes_at(1..2), byte(f::MGMT_CLASS).into()),
                field(
                    "ClassVersion",
                    bytes_at(2..3),
                    byte(f::CLASS_VERSION).into(),
                ),
                field(
                    "R",
                    bits8(f::METHOD, mad::METHOD_RESPONSE),
                    m.is_response().into(),
                ),
                field(
                    "Method",
                    bits8(f::METHOD, !mad::METHOD_RESPONSE),
                    m.method().0.into(),
                ),
                field("Status", bytes_at(f::STATUS), m.status().into()),
                field(
                    "ClassSpecific",
                    bytes_at(f::CLASS_SPECIFIC),
                    m.class_specific().into(),
                ),
                field(
                    "TransactionID",
                    bytes_at(f::TRANSACTION_ID),
                    m.transaction_id(),
                ),
                field(
                    "AttributeID",
                    bytes_at(f::ATTRIBUTE_ID),
                    m.attribute_id().into(),
                ),
                field("Reserved", bytes_at(f::RESERVED), u(f::RESERVED)).means(Meaning::Reserved),
                field(
                    "AttributeModifier",
                    bytes_at(f::ATTRIBUTE_MODIFIER),
                    m.attribute_modifier().into(),
                ),
            ],
        );
        let body = off + mad::HEADER_LEN;
        let v = |r: Range<usize>| -> u64 {
            bytes[body + r.start..body + r.end]
                .iter()
                .fold(0, |acc, &b| (acc << 8) | u64::from(b))
        };
        let bits = |i: usize, mask: u8| -> u64 {
            u64::from((bytes[body + i] & mask) >> mask.trailing_zeros())
        };
        let num = |name: &'static str, r: Range<usize>| field(name, bytes_at(r.clone()), v(r));
        let flag =
            |name: &'static str, i: usize, mask: u8| field(name, bits8(i, mask), bits(i, mask));
        let reserved = |r: Range<usize>| num("Reserved", r).means(Meaning::Reserved);
        let fields = match kind {
            Kind::CmReq => {
                use cm::field::req as q;
                let flow = v(q::PRIMARY_FLOW_RATE);
                let fl = q::PRIMARY_FLOW_RATE.start * 8;
                vec![
                    num("LocalCommID", q::LOCAL_COMM_ID),
                    reserved(4..8),
                    num("ServiceID", q::SERVICE_ID),
                    num("LocalCAGUID", q::LOCAL_CA_GUID),
                    reserved(24..28),
                    num("LocalQKey", q::LOCAL_QKEY),
                    num("LocalQPN", q::LOCAL_QPN),
                    num("ResponderResources", 35..36),
                    num("LocalEECN", 36..39),
                    num("InitiatorDepth", 39..40),
                    num("RemoteEECN", 40..43),
                    flag("RemoteCMResponseTimeout", q::TIMEOUT_SERVICE_E2E, 0xf8),
                    flag("TransportServiceType", q::TIMEOUT_SERVICE_E2E, 0x06),
                    flag("EndToEndFlowControl", q::TIMEOUT_SERVICE_E2E, 0x01),
                    num("StartingPSN", q::STARTING_PSN),
                    flag("LocalCMResponseTimeout", q::TIMEOUT_RETRY, 0xf8),
                    flag("RetryCount", q::TIMEOUT_RETRY, 0x07),
                    num("P_Key", q::PKEY),
                    flag("PathMTU", q::MTU_RNR, 0xf0),
                    flag("RDCExists", q::MTU_RNR, 0x08),
                    flag("RNRRetryCount", q::MTU_RNR, 0x07),
                    flag("MaxCMRetries", q::CM_RETRIES_SRQ, 0xf0),
                    flag("SRQ", q::CM_RETRIES_SRQ, 0x08),
                    flag("ExtendedTransportType", q::CM_RETRIES_SRQ, 0x07),
                    num("PrimaryLocalLID", q::PRIMARY_LOCAL_LID),
                    num("PrimaryRemoteLID", q::PRIMARY_REMOTE_LID),
                    bytes_field("PrimaryLocalGID", q::PRIMARY_LOCAL_GID),
                    bytes_field("PrimaryRemoteGID", q::PRIMARY_REMOTE_GID),
                    field("PrimaryFlowLabel", (fl, 20), flow >> 12),
                    field("Reserved", (fl + 20, 6), (flow >> 6) & 0x3f).means(Meaning::Reserved),
                    field("PrimaryPacketRate", (fl + 26, 6), flow & 0x3f),
                    num("PrimaryTrafficClass", 92..93),
                    num("PrimaryHopLimit", 93..94),
                    flag("PrimarySL", q::PRIMARY_SL, 0xf0),
                    flag("PrimarySubnetLocal", q::PRIMARY_SL, 0x08),
                    flag("Reserved", q::PRIMARY_SL, 0x07).means(Meaning::Reserved),
                    flag("PrimaryLocalACKTimeout", q::PRIMARY_ACK_TIMEOUT, 0xf8),
                    flag("Reserved", q::PRIMARY_ACK_TIMEOUT, 0x07).means(Meaning::Reserved),
                    bytes_field("AlternatePath", q::ALTERNATE_PATH),
                    bytes_field("PrivateData", q::PRIVATE_DATA),
                ]
            }
            Kind::CmRep => {
                use cm::field::rep as p;
                vec![
                    num("LocalCommID", p::LOCAL_COMM_ID),
                    num("RemoteCommID", p::REMOTE_COMM_ID),
                    num("LocalQKey", p::LOCAL_QKEY),
                    num("LocalQPN", p::LOCAL_QPN),
                    reserved(15..16),
                    num("LocalEEContext", p::LOCAL_EECN),
                    reserved(19..20),
                    num("StartingPSN", p::STARTING_PSN),
                    reserved(23..24),
                    num("ResponderResources", 24..25),
                    num("InitiatorDepth", 25..26),
                    flag("TargetACKDelay", p::ACK_DELAY_FAILOVER_E2E, 0xf8),
                    flag("FailoverAccepted", p::ACK_DELAY_FAILOVER_E2E, 0x06),
                    flag("EndToEndFlowControl", p::ACK_DELAY_FAILOVER_E2E, 0x01),
                    flag("RNRRetryCount", p::RNR_SRQ, 0xe0),
                    flag("SRQ", p::RNR_SRQ, 0x10),
                    flag("Reserved", p::RNR_SRQ, 0x0f).means(Meaning::Reserved),
                    num("LocalCAGUID", p::LOCAL_CA_GUID),
                    bytes_field("PrivateData", p::PRIVATE_DATA),
                ]
            }
            _ => {
                use cm::field::rtu as r;
                vec![
                    num("LocalCommID", r::LOCAL_COMM_ID),
                    num("RemoteCommID", r::REMOTE_COMM_ID),
                    bytes_field("PrivateData", r::PRIVATE_DATA),
                ]
            }
        };
        self.push(kind, body, cm::MESSAGE_LEN, fields);
        mad::MAD_LEN
    }
}
