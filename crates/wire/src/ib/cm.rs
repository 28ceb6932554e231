//! The connection manager's REQ, REP and RTU messages: the class data of a CM MAD
//! ([`super::mad`], class 0x07, method Send), 232 bytes each, and the IP CM private data
//! RDMA-CM puts at the front of a REQ's.
//!
//! Follows IBTA Vol. 1 §12.6.5 (REQ), §12.6.8 (REP) and §12.6.9 (RTU), and Annex A11
//! (RDMA IP CM Service: the service ID `0x0000_0000_01 | protocol | port` and the 36-byte IP
//! CM header of the REQ's private data). Offsets here are from the start of the MAD's class
//! data (byte 24 of the MAD). The three messages are the active side's request, the passive
//! side's reply and the active side's ready-to-use: the exchange that tells each QP the
//! other's QPN and starting PSN, and carries the consumer's private data (NVMe/RDMA's queue
//! ID and sizes).
//!
//! Simplifications: no alternate path (automatic path migration is not modelled): its
//! fields are emitted as zeros and ignored on parse, as are RDC, the extended transport type,
//! the local and remote EECNs (RD only) and every reserved bit.

use super::U24_MASK;
use crate::{Error, Ipv4Address, Protocol, Result, be};

/// Bytes of a CM message: the MAD's class data.
pub const MESSAGE_LEN: usize = super::mad::DATA_LEN;
/// The CM's class version (IBTA Vol. 1 §12.6.1).
pub const CLASS_VERSION: u8 = 2;
/// Private data a REQ carries (IBTA Vol. 1 §12.6.5).
pub const REQ_PRIVATE_LEN: usize = 92;
/// Private data a REP carries (IBTA Vol. 1 §12.6.8).
pub const REP_PRIVATE_LEN: usize = 196;
/// Private data an RTU carries (IBTA Vol. 1 §12.6.9).
pub const RTU_PRIVATE_LEN: usize = 224;

/// A CM message's attribute ID in the MAD header (IBTA Vol. 1 §12.6.1).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Attribute {
    /// ConnectRequest.
    Req,
    /// ConnectReject.
    Rej,
    /// ConnectReply.
    Rep,
    /// ReadyToUse.
    Rtu,
}

impl Attribute {
    /// The attribute ID.
    pub const fn id(self) -> u16 {
        match self {
            Attribute::Req => 0x0010,
            Attribute::Rej => 0x0012,
            Attribute::Rep => 0x0013,
            Attribute::Rtu => 0x0014,
        }
    }

    /// The attribute with ID `id`, if it is one of these.
    pub const fn from_id(id: u16) -> Option<Attribute> {
        Some(match id {
            0x0010 => Attribute::Req,
            0x0012 => Attribute::Rej,
            0x0013 => Attribute::Rep,
            0x0014 => Attribute::Rtu,
            _ => return None,
        })
    }

    /// The name IBTA gives the message.
    pub const fn name(self) -> &'static str {
        match self {
            Attribute::Req => "ConnectRequest",
            Attribute::Rej => "ConnectReject",
            Attribute::Rep => "ConnectReply",
            Attribute::Rtu => "ReadyToUse",
        }
    }
}

/// The transport service a REQ asks for (2 bits).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum TransportService {
    /// Reliable connection.
    Rc = 0,
    /// Unreliable connection.
    Uc = 1,
    /// Reliable datagram.
    Rd = 2,
}

impl TransportService {
    fn from_bits(b: u8) -> Result<TransportService> {
        Ok(match b {
            0 => TransportService::Rc,
            1 => TransportService::Uc,
            2 => TransportService::Rd,
            _ => {
                return Err(Error::Malformed(
                    "CM REQ transport service type 3 is reserved",
                ));
            }
        })
    }
}

/// The service ID of RDMA IP CM Service port `port` over `protocol` (IBTA Annex A11: prefix
/// `0x0000_0000_01`, then the IP protocol number, then the port): NVMe/RDMA's is TCP 4420.
pub const fn ip_cm_service_id(protocol: Protocol, port: u16) -> u64 {
    0x0000_0000_0100_0000 | ((protocol.0 as u64) << 16) | port as u64
}

/// The byte offsets of the three messages, from the start of the class data.
pub(crate) mod field {
    use crate::Field;
    /// REQ (IBTA Vol. 1 §12.6.5).
    pub mod req {
        use super::Field;
        pub const LOCAL_COMM_ID: Field = 0..4;
        pub const SERVICE_ID: Field = 8..16;
        pub const LOCAL_CA_GUID: Field = 16..24;
        pub const LOCAL_QKEY: Field = 28..32;
        pub const LOCAL_QPN: Field = 32..35;
        pub const RESPONDER_RESOURCES: usize = 35;
        pub const INITIATOR_DEPTH: usize = 39;
        /// Remote CM response timeout (5 bits), transport service (2), end-to-end flow control.
        pub const TIMEOUT_SERVICE_E2E: usize = 43;
        pub const STARTING_PSN: Field = 44..47;
        /// Local CM response timeout (5 bits), retry count (3).
        pub const TIMEOUT_RETRY: usize = 47;
        pub const PKEY: Field = 48..50;
        /// Path MTU (4 bits), RDC exists (1), RNR retry count (3).
        pub const MTU_RNR: usize = 50;
        /// Max CM retries (4 bits), SRQ (1), extended transport type (3).
        pub const CM_RETRIES_SRQ: usize = 51;
        pub const PRIMARY_LOCAL_LID: Field = 52..54;
        pub const PRIMARY_REMOTE_LID: Field = 54..56;
        pub const PRIMARY_LOCAL_GID: Field = 56..72;
        pub const PRIMARY_REMOTE_GID: Field = 72..88;
        /// Flow label (20 bits), reserved (6), packet rate (6).
        pub const PRIMARY_FLOW_RATE: Field = 88..92;
        pub const PRIMARY_TRAFFIC_CLASS: usize = 92;
        pub const PRIMARY_HOP_LIMIT: usize = 93;
        /// SL (4 bits), subnet local (1), reserved (3).
        pub const PRIMARY_SL: usize = 94;
        /// Local ACK timeout (5 bits), reserved (3).
        pub const PRIMARY_ACK_TIMEOUT: usize = 95;
        /// The alternate path (all of it zero here).
        pub const ALTERNATE_PATH: Field = 96..140;
        pub const PRIVATE_DATA: Field = 140..232;
    }
    /// REP (IBTA Vol. 1 §12.6.8).
    pub mod rep {
        use super::Field;
        pub const LOCAL_COMM_ID: Field = 0..4;
        pub const REMOTE_COMM_ID: Field = 4..8;
        pub const LOCAL_QKEY: Field = 8..12;
        pub const LOCAL_QPN: Field = 12..15;
        pub const LOCAL_EECN: Field = 16..19;
        pub const STARTING_PSN: Field = 20..23;
        pub const RESPONDER_RESOURCES: usize = 24;
        pub const INITIATOR_DEPTH: usize = 25;
        /// Target ACK delay (5 bits), failover accepted (2), end-to-end flow control (1).
        pub const ACK_DELAY_FAILOVER_E2E: usize = 26;
        /// RNR retry count (3 bits), SRQ (1), reserved (4).
        pub const RNR_SRQ: usize = 27;
        pub const LOCAL_CA_GUID: Field = 28..36;
        pub const PRIVATE_DATA: Field = 36..232;
    }
    /// RTU (IBTA Vol. 1 §12.6.9).
    pub mod rtu {
        use super::Field;
        pub const LOCAL_COMM_ID: Field = 0..4;
        pub const REMOTE_COMM_ID: Field = 4..8;
        pub const PRIVATE_DATA: Field = 8..232;
    }
}

/// A read (and, for mutable buffers, write) view of a CM message: the 232-byte class data
/// of a CM MAD. The same view serves REQ, REP and RTU; which getters mean anything depends
/// on the MAD's attribute ID.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole message ([`MESSAGE_LEN`]).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`MESSAGE_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < MESSAGE_LEN {
            return Err(Error::Truncated("CM message"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// REQ, REP, RTU: the sender's communication ID.
    pub fn local_comm_id(&self) -> u32 {
        be::u32_at(self.b(), field::rep::LOCAL_COMM_ID)
    }
    /// REP, RTU: the peer's communication ID.
    pub fn remote_comm_id(&self) -> u32 {
        be::u32_at(self.b(), field::rep::REMOTE_COMM_ID)
    }
    /// REQ: the service the connection is for.
    pub fn req_service_id(&self) -> u64 {
        be::u64_at(self.b(), field::req::SERVICE_ID)
    }
    /// REQ: the active side's QPN (24 bits).
    pub fn req_local_qpn(&self) -> u32 {
        be::u24_at(self.b(), field::req::LOCAL_QPN)
    }
    /// REQ: the active side's starting PSN (24 bits): the passive side's expected PSN.
    pub fn req_starting_psn(&self) -> u32 {
        be::u24_at(self.b(), field::req::STARTING_PSN)
    }
    /// REQ: the path MTU code (IBTA's 1 = 256 ... 5 = 4096).
    pub fn req_path_mtu(&self) -> u8 {
        self.b()[field::req::MTU_RNR] >> 4
    }
    /// REQ: the primary path's remote GID (the passive side's).
    pub fn req_primary_remote_gid(&self) -> [u8; 16] {
        let mut g = [0; 16];
        g.copy_from_slice(&self.b()[field::req::PRIMARY_REMOTE_GID]);
        g
    }
    /// REQ: the private data.
    pub fn req_private_data(&self) -> &[u8] {
        &self.b()[field::req::PRIVATE_DATA]
    }
    /// REP: the passive side's QPN (24 bits).
    pub fn rep_local_qpn(&self) -> u32 {
        be::u24_at(self.b(), field::rep::LOCAL_QPN)
    }
    /// REP: the passive side's starting PSN (24 bits).
    pub fn rep_starting_psn(&self) -> u32 {
        be::u24_at(self.b(), field::rep::STARTING_PSN)
    }
    /// REP: the private data.
    pub fn rep_private_data(&self) -> &[u8] {
        &self.b()[field::rep::PRIVATE_DATA]
    }
    /// RTU: the private data.
    pub fn rtu_private_data(&self) -> &[u8] {
        &self.b()[field::rtu::PRIVATE_DATA]
    }
}

/// One path of a REQ: where the passive side's packets go and how (IBTA Vol. 1 §12.6.5).
/// RoCE has no LIDs: Linux's ib_cm writes the permissive LID `0xffff` for a routed path.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct PathRepr {
    /// The active side's LID.
    pub local_lid: u16,
    /// The passive side's LID.
    pub remote_lid: u16,
    /// The active side's GID (RoCEv2 over IPv4: its IPv4-mapped address).
    pub local_gid: [u8; 16],
    /// The passive side's GID.
    pub remote_gid: [u8; 16],
    /// GRH flow label (20 bits).
    pub flow_label: u32,
    /// Static rate code (6 bits).
    pub packet_rate: u8,
    /// GRH traffic class.
    pub traffic_class: u8,
    /// GRH hop limit.
    pub hop_limit: u8,
    /// Service level (4 bits).
    pub sl: u8,
    /// Whether the path stays in the subnet.
    pub subnet_local: bool,
    /// Local ACK timeout exponent (5 bits).
    pub local_ack_timeout: u8,
}

/// A parsed REQ.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct ReqRepr {
    /// The active side's communication ID.
    pub local_comm_id: u32,
    /// The service (for RDMA-CM, [`ip_cm_service_id`]).
    pub service_id: u64,
    /// The active side's CA GUID.
    pub local_ca_guid: u64,
    /// The active side's Q_Key (UD/RD; 0 for RC).
    pub local_qkey: u32,
    /// The active side's QPN (24 bits).
    pub local_qpn: u32,
    /// RDMA READ/atomics the active side accepts in flight (its responder resources).
    pub responder_resources: u8,
    /// RDMA READ/atomics the active side issues in flight (its initiator depth).
    pub initiator_depth: u8,
    /// Remote CM response timeout exponent (5 bits).
    pub remote_cm_response_timeout: u8,
    /// RC, UC or RD.
    pub transport: TransportService,
    /// End-to-end flow control.
    pub end_to_end_flow_control: bool,
    /// The active side's first PSN (24 bits).
    pub starting_psn: u32,
    /// Local CM response timeout exponent (5 bits).
    pub local_cm_response_timeout: u8,
    /// Transport retries after timeouts (3 bits).
    pub retry_count: u8,
    /// Partition key.
    pub pkey: u16,
    /// Path MTU code (4 bits: 1 = 256 ... 5 = 4096 bytes).
    pub path_mtu: u8,
    /// RNR retries (3 bits; 7 = forever).
    pub rnr_retry_count: u8,
    /// CM retries (4 bits).
    pub max_cm_retries: u8,
    /// Whether the active side's QP uses an SRQ.
    pub srq: bool,
    /// The primary path.
    pub primary: PathRepr,
    /// Private data (for RDMA-CM: the IP CM header, then the consumer's).
    pub private_data: [u8; REQ_PRIVATE_LEN],
}

/// A parsed REP.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct RepRepr {
    /// The passive side's communication ID.
    pub local_comm_id: u32,
    /// The active side's (from its REQ).
    pub remote_comm_id: u32,
    /// The passive side's Q_Key (UD/RD; 0 for RC).
    pub local_qkey: u32,
    /// The passive side's QPN (24 bits).
    pub local_qpn: u32,
    /// The passive side's first PSN (24 bits).
    pub starting_psn: u32,
    /// RDMA READ/atomics the passive side accepts in flight.
    pub responder_resources: u8,
    /// RDMA READ/atomics the passive side issues in flight.
    pub initiator_depth: u8,
    /// Target ACK delay exponent (5 bits).
    pub target_ack_delay: u8,
    /// Failover accepted (2 bits; 0 = accepted).
    pub failover_accepted: u8,
    /// End-to-end flow control.
    pub end_to_end_flow_control: bool,
    /// RNR retries (3 bits).
    pub rnr_retry_count: u8,
    /// Whether the passive side's QP uses an SRQ.
    pub srq: bool,
    /// The passive side's CA GUID.
    pub local_ca_guid: u64,
    /// Private data (NVMe/RDMA: its `nvme_rdma_cm_rep`).
    pub private_data: [u8; REP_PRIVATE_LEN],
}

/// A parsed RTU.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct RtuRepr {
    /// The active side's communication ID.
    pub local_comm_id: u32,
    /// The passive side's.
    pub remote_comm_id: u32,
    /// Private data.
    pub private_data: [u8; RTU_PRIVATE_LEN],
}

fn check_bits(v: u32, bits: u32, what: &'static str) -> Result<()> {
    if v >> bits != 0 {
        return Err(Error::Malformed(what));
    }
    Ok(())
}

impl ReqRepr {
    /// Read a REQ message.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<ReqRepr> {
        use field::req as f;
        packet.check_len()?;
        let b = packet.b();
        let gid = |r: crate::Field| -> [u8; 16] { b[r].try_into().unwrap_or([0; 16]) };
        let flow_rate = be::u32_at(b, f::PRIMARY_FLOW_RATE);
        let mut private_data = [0; REQ_PRIVATE_LEN];
        private_data.copy_from_slice(&b[f::PRIVATE_DATA]);
        Ok(ReqRepr {
            local_comm_id: be::u32_at(b, f::LOCAL_COMM_ID),
            service_id: be::u64_at(b, f::SERVICE_ID),
            local_ca_guid: be::u64_at(b, f::LOCAL_CA_GUID),
            local_qkey: be::u32_at(b, f::LOCAL_QKEY),
            local_qpn: be::u24_at(b, f::LOCAL_QPN),
            responder_resources: b[f::RESPONDER_RESOURCES],
            initiator_depth: b[f::INITIATOR_DEPTH],
            remote_cm_response_timeout: b[f::TIMEOUT_SERVICE_E2E] >> 3,
            transport: TransportService::from_bits((b[f::TIMEOUT_SERVICE_E2E] >> 1) & 0x3)?,
            end_to_end_flow_control: b[f::TIMEOUT_SERVICE_E2E] & 1 != 0,
            starting_psn: be::u24_at(b, f::STARTING_PSN),
            local_cm_response_timeout: b[f::TIMEOUT_RETRY] >> 3,
            retry_count: b[f::TIMEOUT_RETRY] & 0x7,
            pkey: be::u16_at(b, f::PKEY),
            path_mtu: b[f::MTU_RNR] >> 4,
            rnr_retry_count: b[f::MTU_RNR] & 0x7,
            max_cm_retries: b[f::CM_RETRIES_SRQ] >> 4,
            srq: b[f::CM_RETRIES_SRQ] & 0x08 != 0,
            primary: PathRepr {
                local_lid: be::u16_at(b, f::PRIMARY_LOCAL_LID),
                remote_lid: be::u16_at(b, f::PRIMARY_REMOTE_LID),
                local_gid: gid(f::PRIMARY_LOCAL_GID),
                remote_gid: gid(f::PRIMARY_REMOTE_GID),
                flow_label: flow_rate >> 12,
                packet_rate: (flow_rate & 0x3f) as u8,
                traffic_class: b[f::PRIMARY_TRAFFIC_CLASS],
                hop_limit: b[f::PRIMARY_HOP_LIMIT],
                sl: b[f::PRIMARY_SL] >> 4,
                subnet_local: b[f::PRIMARY_SL] & 0x08 != 0,
                local_ack_timeout: b[f::PRIMARY_ACK_TIMEOUT] >> 3,
            },
            private_data,
        })
    }

    /// Every field within its width; the error names the first that is not.
    pub fn check(&self) -> Result<()> {
        check_bits(self.local_qpn, 24, "CM REQ local QPN above 24 bits")?;
        check_bits(self.starting_psn, 24, "CM REQ starting PSN above 24 bits")?;
        check_bits(
            self.remote_cm_response_timeout.into(),
            5,
            "CM REQ remote CM response timeout above 5 bits",
        )?;
        check_bits(
            self.local_cm_response_timeout.into(),
            5,
            "CM REQ local CM response timeout above 5 bits",
        )?;
        check_bits(
            self.retry_count.into(),
            3,
            "CM REQ retry count above 3 bits",
        )?;
        check_bits(self.path_mtu.into(), 4, "CM REQ path MTU above 4 bits")?;
        check_bits(
            self.rnr_retry_count.into(),
            3,
            "CM REQ RNR retry count above 3 bits",
        )?;
        check_bits(
            self.max_cm_retries.into(),
            4,
            "CM REQ max CM retries above 4 bits",
        )?;
        let p = &self.primary;
        check_bits(p.flow_label, 20, "CM REQ flow label above 20 bits")?;
        check_bits(p.packet_rate.into(), 6, "CM REQ packet rate above 6 bits")?;
        check_bits(p.sl.into(), 4, "CM REQ SL above 4 bits")?;
        check_bits(
            p.local_ack_timeout.into(),
            5,
            "CM REQ local ACK timeout above 5 bits",
        )
    }

    /// Always [`MESSAGE_LEN`].
    pub const fn buffer_len(&self) -> usize {
        MESSAGE_LEN
    }

    /// Write the REQ into the first [`MESSAGE_LEN`] bytes, every reserved and alternate-path
    /// byte zero. Fields wider than their bits are cut to them ([`ReqRepr::check`] says so).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        use field::req as f;
        let b = &mut packet.buffer.as_mut()[..MESSAGE_LEN];
        b.fill(0);
        be::set_u32(b, f::LOCAL_COMM_ID, self.local_comm_id);
        be::set_u64(b, f::SERVICE_ID, self.service_id);
        be::set_u64(b, f::LOCAL_CA_GUID, self.local_ca_guid);
        be::set_u32(b, f::LOCAL_QKEY, self.local_qkey);
        be::set_u24(b, f::LOCAL_QPN, self.local_qpn & U24_MASK);
        b[f::RESPONDER_RESOURCES] = self.responder_resources;
        b[f::INITIATOR_DEPTH] = self.initiator_depth;
        b[f::TIMEOUT_SERVICE_E2E] = (self.remote_cm_response_timeout << 3)
            | ((self.transport as u8) << 1)
            | u8::from(self.end_to_end_flow_control);
        be::set_u24(b, f::STARTING_PSN, self.starting_psn & U24_MASK);
        b[f::TIMEOUT_RETRY] = (self.local_cm_response_timeout << 3) | (self.retry_count & 0x7);
        be::set_u16(b, f::PKEY, self.pkey);
        b[f::MTU_RNR] = (self.path_mtu << 4) | (self.rnr_retry_count & 0x7);
        b[f::CM_RETRIES_SRQ] = (self.max_cm_retries << 4) | if self.srq { 0x08 } else { 0 };
        let p = &self.primary;
        be::set_u16(b, f::PRIMARY_LOCAL_LID, p.local_lid);
        be::set_u16(b, f::PRIMARY_REMOTE_LID, p.remote_lid);
        b[f::PRIMARY_LOCAL_GID].copy_from_slice(&p.local_gid);
        b[f::PRIMARY_REMOTE_GID].copy_from_slice(&p.remote_gid);
        be::set_u32(
            b,
            f::PRIMARY_FLOW_RATE,
            ((p.flow_label & 0xf_ffff) << 12) | u32::from(p.packet_rate & 0x3f),
        );
        b[f::PRIMARY_TRAFFIC_CLASS] = p.traffic_class;
        b[f::PRIMARY_HOP_LIMIT] = p.hop_limit;
        b[f::PRIMARY_SL] = (p.sl << 4) | if p.subnet_local { 0x08 } else { 0 };
        b[f::PRIMARY_ACK_TIMEOUT] = p.local_ack_timeout << 3;
        b[f::PRIVATE_DATA].copy_from_slice(&self.private_data);
    }
}

impl RepRepr {
    /// Read a REP message.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<RepRepr> {
        use field::rep as f;
        packet.check_len()?;
        let b = packet.b();
        let mut private_data = [0; REP_PRIVATE_LEN];
        private_data.copy_from_slice(&b[f::PRIVATE_DATA]);
        Ok(RepRepr {
            local_comm_id: be::u32_at(b, f::LOCAL_COMM_ID),
            remote_comm_id: be::u32_at(b, f::REMOTE_COMM_ID),
            local_qkey: be::u32_at(b, f::LOCAL_QKEY),
            local_qpn: be::u24_at(b, f::LOCAL_QPN),
            starting_psn: be::u24_at(b, f::STARTING_PSN),
            responder_resources: b[f::RESPONDER_RESOURCES],
            initiator_depth: b[f::INITIATOR_DEPTH],
            target_ack_delay: b[f::ACK_DELAY_FAILOVER_E2E] >> 3,
            failover_accepted: (b[f::ACK_DELAY_FAILOVER_E2E] >> 1) & 0x3,
            end_to_end_flow_control: b[f::ACK_DELAY_FAILOVER_E2E] & 1 != 0,
            rnr_retry_count: b[f::RNR_SRQ] >> 5,
            srq: b[f::RNR_SRQ] & 0x10 != 0,
            local_ca_guid: be::u64_at(b, f::LOCAL_CA_GUID),
            private_data,
        })
    }

    /// Every field within its width; the error names the first that is not.
    pub fn check(&self) -> Result<()> {
        check_bits(self.local_qpn, 24, "CM REP local QPN above 24 bits")?;
        check_bits(self.starting_psn, 24, "CM REP starting PSN above 24 bits")?;
        check_bits(
            self.target_ack_delay.into(),
            5,
            "CM REP target ACK delay above 5 bits",
        )?;
        check_bits(
            self.failover_accepted.into(),
            2,
            "CM REP failover accepted above 2 bits",
        )?;
        check_bits(
            self.rnr_retry_count.into(),
            3,
            "CM REP RNR retry count above 3 bits",
        )
    }

    /// Always [`MESSAGE_LEN`].
    pub const fn buffer_len(&self) -> usize {
        MESSAGE_LEN
    }

    /// Write the REP into the first [`MESSAGE_LEN`] bytes, reserved bytes and the (RD-only)
    /// local EECN zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        use field::rep as f;
        let b = &mut packet.buffer.as_mut()[..MESSAGE_LEN];
        b.fill(0);
        be::set_u32(b, f::LOCAL_COMM_ID, self.local_comm_id);
        be::set_u32(b, f::REMOTE_COMM_ID, self.remote_comm_id);
        be::set_u32(b, f::LOCAL_QKEY, self.local_qkey);
        be::set_u24(b, f::LOCAL_QPN, self.local_qpn & U24_MASK);
        be::set_u24(b, f::LOCAL_EECN, 0);
        be::set_u24(b, f::STARTING_PSN, self.starting_psn & U24_MASK);
        b[f::RESPONDER_RESOURCES] = self.responder_resources;
        b[f::INITIATOR_DEPTH] = self.initiator_depth;
        b[f::ACK_DELAY_FAILOVER_E2E] = (self.target_ack_delay << 3)
            | ((self.failover_accepted & 0x3) << 1)
            | u8::from(self.end_to_end_flow_control);
        b[f::RNR_SRQ] = (self.rnr_retry_count << 5) | if self.srq { 0x10 } else { 0 };
        be::set_u64(b, f::LOCAL_CA_GUID, self.local_ca_guid);
        b[f::PRIVATE_DATA].copy_from_slice(&self.private_data);
    }
}

impl RtuRepr {
    /// Read an RTU message.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<RtuRepr> {
        use field::rtu as f;
        packet.check_len()?;
        let b = packet.b();
        let mut private_data = [0; RTU_PRIVATE_LEN];
        private_data.copy_from_slice(&b[f::PRIVATE_DATA]);
        Ok(RtuRepr {
            local_comm_id: be::u32_at(b, f::LOCAL_COMM_ID),
            remote_comm_id: be::u32_at(b, f::REMOTE_COMM_ID),
            private_data,
        })
    }

    /// Always [`MESSAGE_LEN`].
    pub const fn buffer_len(&self) -> usize {
        MESSAGE_LEN
    }

    /// Write the RTU into the first [`MESSAGE_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        use field::rtu as f;
        let b = &mut packet.buffer.as_mut()[..MESSAGE_LEN];
        be::set_u32(b, f::LOCAL_COMM_ID, self.local_comm_id);
        be::set_u32(b, f::REMOTE_COMM_ID, self.remote_comm_id);
        b[f::PRIVATE_DATA].copy_from_slice(&self.private_data);
    }
}

/// One of the three messages, with the MAD it travels in.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Message {
    /// ConnectRequest.
    Req(ReqRepr),
    /// ConnectReply.
    Rep(RepRepr),
    /// ReadyToUse.
    Rtu(RtuRepr),
}

impl Message {
    /// Its attribute.
    pub const fn attribute(&self) -> Attribute {
        match self {
            Message::Req(_) => Attribute::Req,
            Message::Rep(_) => Attribute::Rep,
            Message::Rtu(_) => Attribute::Rtu,
        }
    }

    /// The whole 256-byte MAD: class CM, class version 2, method Send, transaction
    /// `transaction_id` (a REQ's, repeated by its REP and RTU), this message's attribute.
    pub fn to_mad(&self, transaction_id: u64) -> Result<[u8; super::mad::MAD_LEN]> {
        use super::mad;
        match self {
            Message::Req(r) => r.check()?,
            Message::Rep(r) => r.check()?,
            Message::Rtu(_) => {}
        }
        let mut out = [0u8; mad::MAD_LEN];
        let mut body = [0u8; MESSAGE_LEN];
        let mut p = Packet::new_unchecked(&mut body[..]);
        match self {
            Message::Req(r) => r.emit(&mut p),
            Message::Rep(r) => r.emit(&mut p),
            Message::Rtu(r) => r.emit(&mut p),
        }
        mad::Repr {
            base_version: mad::BASE_VERSION,
            mgmt_class: mad::Class::CM,
            class_version: CLASS_VERSION,
            response: false,
            method: mad::Method::SEND,
            status: 0,
            class_specific: 0,
            transaction_id,
            attribute_id: self.attribute().id(),
            attribute_modifier: 0,
        }
        .emit(&mut mad::Packet::new_unchecked(&mut out[..]), &body);
        Ok(out)
    }

    /// The MAD header and the message of a 256-byte CM MAD. Another class, or a CM attribute
    /// other than REQ, REP and RTU, is `Unsupported`.
    pub fn parse_mad(bytes: &[u8]) -> Result<(super::mad::Repr, Message)> {
        use super::mad;
        let p = mad::Packet::new_checked(bytes)?;
        let hdr = mad::Repr::parse(&p)?;
        if hdr.mgmt_class != mad::Class::CM {
            return Err(Error::Unsupported("MAD class other than CM"));
        }
        let body = Packet::new_checked(p.data())?;
        let msg = match Attribute::from_id(hdr.attribute_id) {
            Some(Attribute::Req) => Message::Req(ReqRepr::parse(&body)?),
            Some(Attribute::Rep) => Message::Rep(RepRepr::parse(&body)?),
            Some(Attribute::Rtu) => Message::Rtu(RtuRepr::parse(&body)?),
            _ => return Err(Error::Unsupported("CM attribute other than REQ, REP, RTU")),
        };
        Ok((hdr, msg))
    }
}

/// The IP CM header at the front of a REQ's private data (IBTA Annex A11): version 0.0, IP
/// version 4, the active side's port, then both addresses in 16 bytes each (an IPv4 address
/// in the last four, zeros before, as Linux's `struct cma_hdr` lays it out). The consumer's
/// private data follows, [`IpCmHeader::CONSUMER_LEN`] bytes at most.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct IpCmHeader {
    /// The active side's source port.
    pub src_port: u16,
    /// The active side's address.
    pub src_addr: Ipv4Address,
    /// The passive side's address.
    pub dst_addr: Ipv4Address,
}

impl IpCmHeader {
    /// Its bytes.
    pub const LEN: usize = 36;
    /// The consumer private data left in a REQ after it: 92 − 36 = 56 bytes.
    pub const CONSUMER_LEN: usize = REQ_PRIVATE_LEN - Self::LEN;

    /// A REQ's private data: this header and then `consumer` (at most
    /// [`IpCmHeader::CONSUMER_LEN`] bytes, else `Malformed`), zero-filled.
    pub fn private_data(&self, consumer: &[u8]) -> Result<[u8; REQ_PRIVATE_LEN]> {
        if consumer.len() > Self::CONSUMER_LEN {
            return Err(Error::Malformed(
                "RDMA-CM consumer private data longer than 56 bytes",
            ));
        }
        let mut out = [0u8; REQ_PRIVATE_LEN];
        out[0] = 0x00; // MajV 0, MinV 0
        out[1] = 4 << 4; // IPV 4
        out[2..4].copy_from_slice(&self.src_port.to_be_bytes());
        out[16..20].copy_from_slice(self.src_addr.as_bytes());
        out[32..36].copy_from_slice(self.dst_addr.as_bytes());
        out[Self::LEN..Self::LEN + consumer.len()].copy_from_slice(consumer);
        Ok(out)
    }

    /// Read the header from the front of a REQ's private data; returns it and the consumer's
    /// bytes. A version other than 0.0 or an IP version other than 4 is `Unsupported`.
    pub fn parse(private_data: &[u8]) -> Result<(IpCmHeader, &[u8])> {
        if private_data.len() < Self::LEN {
            return Err(Error::Truncated("IP CM header"));
        }
        if private_data[0] != 0 {
            return Err(Error::Unsupported("IP CM version other than 0.0"));
        }
        if private_data[1] >> 4 != 4 {
            return Err(Error::Unsupported("IP CM header for IPv6"));
        }
        let addr = |at: usize| {
            Ipv4Address::new(
                private_data[at],
                private_data[at + 1],
                private_data[at + 2],
                private_data[at + 3],
            )
        };
        Ok((
            IpCmHeader {
                src_port: u16::from_be_bytes([private_data[2], private_data[3]]),
                src_addr: addr(16),
                dst_addr: addr(32),
            },
            &private_data[Self::LEN..],
        ))
    }
}

#[cfg(test)]
mod tests;
