//! Packets as the fabric carries them: a few header fields and a length, no bytes.
//!
//! Following htsim, a packet in flight is metadata: who sent it, where it goes, its priority
//! and ECN codepoint, its frame length and what it carries. Bytes exist only when a frame is
//! written to a pcap or checked byte-for-byte, through the `wire` crate.
//!
//! Inside the fabric a packet is split in two: an [`InFlight`] descriptor (one cache line:
//! the fields a port or switch reads on every hop) and its [`Payload`] (the RoCE or TCP
//! headers, up to ~200 bytes, which no switch reads), each in its own
//! [`Arena`](engine::Arena). Packets move through queues and events as a 4-byte
//! [`PacketHandle`]; the whole [`Packet`] is put together again only when it is delivered,
//! dropped or observed (capture, tap). On a 1024-host fat tree the hop-by-hop working set is
//! then a quarter of what it was with the headers inline.

use engine::{Handle, PacketClass, PacketRef};
use units::{FlowId, NodeId, Priority, SimTime};

/// A packet's handle in the fabric's arena.
pub type PacketHandle = Handle<InFlight>;

pub use wire::Ecn;

/// Frame bytes of a RoCEv2 packet over IPv4 with an 802.1Q tag: Ethernet 14, VLAN 4, IPv4 20,
/// UDP 8, the transport headers, payload, pad, ICRC 4 and FCS 4 bytes; at least 64.
/// source: research/verbs-spec.md §6 packet layout.
pub fn roce_frame_len(hdr: &RoceHeaders, payload_len: u32) -> u32 {
    let pad = (4 - payload_len % 4) % 4;
    // The headers present (the IRN extension is not fixed by the opcode); a CNP is a BTH and
    // 16 reserved bytes.
    let transport = if hdr.bth.opcode.is_cnp() {
        wire::ib::cnp::HEADER_LEN as u32
    } else {
        (wire::ib::bth::HEADER_LEN + hdr.ext.buffer_len()) as u32
    };
    (14 + 4 + 20 + 8 + transport + payload_len + pad + 4 + 4).max(MIN_FRAME_BYTES)
}

/// Frame bytes of a TCP segment over IPv4 with an 802.1Q tag: Ethernet 14, VLAN 4, IPv4 20, the
/// TCP header with its options, payload and FCS 4 bytes; at least 64.
/// source: IEEE 802.3 (header, FCS, minimum frame), IEEE 802.1Q (tag), RFC 791 (IPv4 header
/// without options), RFC 9293 §3.1 (TCP header, options padded to 32 bits).
pub fn tcp_frame_len(repr: &wire::tcp::Repr) -> u32 {
    (14 + 4 + 20 + repr.header_len() as u32 + repr.payload_len as u32 + 4).max(MIN_FRAME_BYTES)
}

/// The 802.1p priority TCP frames travel on: a lossy class (DESIGN.md §3.8, "Lossless covers
/// RoCE's priority only; TCP stays in a lossy class").
pub const TCP_PRIORITY: Priority = Priority::of(0);

/// Bytes of header around a raw frame's payload, sized like a RoCEv2 SEND: Ethernet 14, IPv4
/// 20, UDP 8, BTH 12, ICRC 4, FCS 4.
/// source: research/verbs-spec.md §6 packet layout.
pub const RAW_FRAME_OVERHEAD: u32 = 62;

/// The smallest Ethernet frame, FCS included (IEEE 802.3).
pub const MIN_FRAME_BYTES: u32 = 64;

/// The RoCEv2 transport headers a packet carries (the bytes are emitted only for captures).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RoceHeaders {
    /// Base transport header.
    pub bth: wire::ib::bth::Repr,
    /// Extension headers.
    pub ext: wire::ExtHeaders,
    /// UDP source port (the ECMP entropy the sender chose).
    pub udp_src_port: u16,
}

/// Where a packet's payload bytes are kept: a handle into the sender's store (the host
/// model's payload pool), or none. The fabric carries it and never reads it. Four bytes with
/// a reserved value for "none" rather than an `Option<u32>` (eight): it sits in every held
/// packet's compact body (`body.rs`) and so in the event queue's working set.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct DataHandle(u32);

impl DataHandle {
    /// No payload bytes behind the packet (an ACK, a CNP, an empty segment).
    pub const NONE: DataHandle = DataHandle(u32::MAX);

    /// The store's entry `index`. `u32::MAX` is reserved for [`DataHandle::NONE`]; a store
    /// never holds that many entries (each is a payload of at least one byte, in memory).
    pub fn of(index: u32) -> DataHandle {
        debug_assert_ne!(
            index,
            u32::MAX,
            "payload index u32::MAX is reserved for NONE"
        );
        DataHandle(index)
    }

    /// The store's index, or `None` when the packet has no payload bytes.
    pub const fn get(self) -> Option<u32> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }
}

/// What a packet carries.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Payload {
    /// A PFC frame (IEEE 802.1Qbb): per-priority pause times in 512-bit-time quanta.
    Pause {
        /// Priorities this frame applies to (bit i = priority i).
        class_enable: u8,
        /// Pause time per priority.
        quanta: [u16; 8],
    },
    /// A RoCEv2 packet. Its payload bytes live with whoever sent it (the host model's payload
    /// store), named by `data`; the fabric only carries the handle.
    Roce {
        /// Transport headers.
        hdr: RoceHeaders,
        /// Payload bytes (without pad).
        payload_len: u32,
        /// Where the payload bytes are kept in the sender's store, if anywhere.
        data: DataHandle,
    },
    /// A TCP segment. Like RoCE, its payload bytes live with the sender's host model, named by
    /// `data`.
    Tcp {
        /// TCP header fields and options; `repr.payload_len` is the payload length.
        repr: wire::tcp::Repr,
        /// Where the payload bytes are kept in the sender's store, if anywhere.
        data: DataHandle,
    },
    /// A frame of a fabric-only flow: no transport, just bytes to deliver.
    Raw {
        /// Payload bytes in this frame.
        payload: u32,
        /// Frame sequence number within the flow, from 0.
        seq: u32,
    },
}

/// The fields ECMP hashes: the frame's IPv4/UDP 5-tuple.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct FiveTuple {
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// IP protocol (17 UDP, 6 TCP).
    pub protocol: u8,
    /// Source port (RoCEv2: the entropy field).
    pub src_port: u16,
    /// Destination port (4791 for RoCEv2).
    pub dst_port: u16,
}

impl FiveTuple {
    /// The ECMP hash: CRC-16/CCITT (polynomial 0x1021, initial value 0xffff) over the fields
    /// in network order, the hash merchant switch silicon offers (SONiC's `CRC_CCITT` load-share
    /// algorithm; FortiOS's `crc16`, "CRC-16-CCITT polynomial"). A CRC is affine in its input:
    /// flows that differ only in the low bits of the UDP source port (RoCE QPs of one host,
    /// whose port follows the QP number) land on distinct buckets of a power-of-two group, so
    /// consecutive QPs spread evenly; switches pick with their own bit offset and seed
    /// (the `routing` module).
    pub fn hash(&self) -> u32 {
        // A byte at a time through a 256-entry table (every frame's route is hashed once: the
        // bit-at-a-time loop was 3% of a collective's run).
        let mut crc: u16 = 0xffff;
        let mut eat = |b: u8| {
            crc = (crc << 8) ^ CRC16_CCITT[((crc >> 8) as u8 ^ b) as usize];
        };
        self.src_ip.iter().for_each(|&b| eat(b));
        self.dst_ip.iter().for_each(|&b| eat(b));
        eat(self.protocol);
        self.src_port.to_be_bytes().iter().for_each(|&b| eat(b));
        self.dst_port.to_be_bytes().iter().for_each(|&b| eat(b));
        crc as u32
    }
}

/// CRC-16/CCITT (polynomial 0x1021, MSB first) of each byte value from a zero register: the
/// table [`FiveTuple::hash`] looks up instead of shifting eight times per byte.
const CRC16_CCITT: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 0x8000 != 0 {
                (c << 1) ^ 0x1021
            } else {
                c << 1
            };
            bit += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The IPv4 address of host ordinal `i`: 10.0.0.1, 10.0.0.2, ... (10.x.y.z, never .0).
pub fn host_ip(i: u32) -> [u8; 4] {
    let v = i + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// What follows a frame's Ethernet header, as far as a switch cares: a routed hop forwards by
/// the IP header, so a frame that has none cannot cross it.
/// source: IBTA Vol. 1 Annex A16 (RoCE: the GRH straight after the Ethernet header, EtherType
/// 0x8915) and Annex A17 (RoCEv2: IP and UDP, destination port 4791); IEEE 802.1Qbb (PFC frames
/// are MAC control, EtherType 0x8808, and never leave the link).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum EtherType {
    /// 0x0800: RoCEv2 over IPv4, TCP and raw flows (sized as RoCEv2 frames).
    #[default]
    Ipv4,
    /// 0x8808: a PFC frame.
    MacControl,
    /// 0x8915: RoCE v1, what a NIC sends from a GID of type RoCE v1. A bridge forwards it by
    /// MAC address; a router has no IP header to route it by and drops it.
    RoceV1,
}

/// What a sender specifies when it puts a packet on the fabric.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct PacketSpec {
    /// The flow it belongs to (for rules, tracing and per-flow counters).
    pub flow: FlowId,
    /// Destination host.
    pub dst: NodeId,
    /// 802.1p priority (PFC and scheduling class).
    pub priority: Priority,
    /// ECN codepoint as sent.
    pub ecn: Ecn,
    /// Frame bytes, Ethernet header through FCS (at least 64).
    pub len_bytes: u32,
    /// 5-tuple hash for ECMP ([`FiveTuple::hash`]).
    pub ecmp_hash: u32,
    /// What follows the Ethernet header (a routed switch drops what is not IP).
    pub ethertype: EtherType,
    /// What it carries.
    pub payload: Payload,
}

/// A packet as a transport sees it: sent by it or delivered to it.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Packet {
    /// Unique per run: the number of frames its sender made before it, times the fabric's
    /// node count, plus the sender's node number. Counted per sender so that any partition of
    /// the fabric (issue 24) gives a frame the same uid; the uids of one sender grow in the
    /// order it made them, and those of different senders interleave.
    pub uid: u64,
    /// Its flow.
    pub flow: FlowId,
    /// Sending node.
    pub src: NodeId,
    /// Destination host.
    pub dst: NodeId,
    /// 802.1p priority.
    pub priority: Priority,
    /// ECN codepoint, possibly marked CE on the way.
    pub ecn: Ecn,
    /// Frame bytes, Ethernet header through FCS.
    pub len_bytes: u32,
    /// 5-tuple hash for ECMP.
    pub ecmp_hash: u32,
    /// What it carries.
    pub payload: Payload,
    /// When it was created.
    pub created: SimTime,
}

/// A packet while the fabric carries it: what ports and switches read on every hop, in one
/// 64-byte cache line (a test holds it there). Its payload waits in a second arena, in the
/// slot of the same index, until the fabric puts the [`Packet`] together again.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    pub(crate) uid: u64,
    pub(crate) created: SimTime,
    pub(crate) flow: FlowId,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    pub(crate) len_bytes: u32,
    pub(crate) ecmp_hash: u32,
    pub(crate) priority: Priority,
    pub(crate) ecn: Ecn,
    pub(crate) ethertype: EtherType,
    /// [`Payload::class`], kept so traces need not read the payload.
    pub(crate) class: PacketClass,
    /// [`Payload::irn_ext`], likewise.
    pub(crate) irn_ext: bool,
}

impl InFlight {
    /// The descriptor of a new packet.
    pub(crate) fn new(uid: u64, src: NodeId, spec: &PacketSpec, now: SimTime) -> InFlight {
        InFlight {
            uid,
            created: now,
            flow: spec.flow,
            src,
            dst: spec.dst,
            len_bytes: spec.len_bytes.max(MIN_FRAME_BYTES),
            ecmp_hash: spec.ecmp_hash,
            priority: spec.priority,
            ecn: spec.ecn,
            ethertype: spec.ethertype,
            class: spec.payload.class(),
            irn_ext: spec.payload.irn_ext(),
        }
    }
    /// The whole packet, given its payload.
    pub(crate) fn assemble(&self, payload: Payload) -> Packet {
        Packet {
            uid: self.uid,
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            priority: self.priority,
            ecn: self.ecn,
            len_bytes: self.len_bytes,
            ecmp_hash: self.ecmp_hash,
            payload,
            created: self.created,
        }
    }
    /// Its identity in a trace record.
    pub(crate) fn trace_ref(&self) -> PacketRef {
        PacketRef {
            irn_ext: self.irn_ext,
            uid: self.uid,
            flow: self.flow,
            class: self.class,
            bytes: self.len_bytes,
            priority: self.priority,
        }
    }
}

impl Payload {
    /// How traces and drawings classify a packet carrying it.
    pub fn class(&self) -> PacketClass {
        match self {
            Payload::Pause { .. } => PacketClass::Pause,
            Payload::Raw { .. } => PacketClass::Raw,
            Payload::Tcp { .. } => PacketClass::Tcp,
            Payload::Roce { hdr, .. } => {
                use wire::ib::Operation;
                if hdr.bth.opcode.is_cnp() {
                    PacketClass::RoceCnp
                } else if matches!(
                    hdr.bth.opcode.operation(),
                    Some(Operation::Acknowledge | Operation::AtomicAcknowledge)
                ) {
                    PacketClass::RoceAck
                } else {
                    PacketClass::RoceData
                }
            }
        }
    }
    /// True for a RoCE packet carrying rdmalab's IRN extension header.
    pub fn irn_ext(&self) -> bool {
        matches!(self, Payload::Roce { hdr, .. } if hdr.ext.irn.is_some())
    }
}

impl Packet {
    /// How traces and drawings classify it.
    pub fn class(&self) -> PacketClass {
        self.payload.class()
    }
    /// Its identity in a trace record.
    pub fn trace_ref(&self) -> PacketRef {
        PacketRef {
            irn_ext: self.payload.irn_ext(),
            uid: self.uid,
            flow: self.flow,
            class: self.class(),
            bytes: self.len_bytes,
            priority: self.priority,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_in_flight_fits_one_cache_line() {
        assert!(core::mem::size_of::<InFlight>() <= 64);
        assert!(core::mem::size_of::<Option<InFlight>>() <= 64);
    }

    #[test]
    fn tuple_hash_is_stable_and_sensitive() {
        let t = FiveTuple {
            src_ip: host_ip(0),
            dst_ip: host_ip(1),
            protocol: 17,
            src_port: 0xc000,
            dst_port: 4791,
        };
        assert_eq!(t.hash(), t.hash());
        assert_ne!(
            t.hash(),
            FiveTuple {
                src_port: 0xc001,
                ..t
            }
            .hash()
        );
        assert_eq!(host_ip(0), [10, 0, 0, 1]);
        assert_eq!(host_ip(255), [10, 0, 1, 0]);
    }

    /// The table-driven CRC is CRC-16/CCITT-FALSE: its check value over "123456789" is
    /// 0x29B1 (the catalogue's), and it equals the bit-at-a-time definition on every tuple
    /// of a sweep over ports and addresses.
    #[test]
    fn tuple_hash_is_crc16_ccitt() {
        fn bitwise(bytes: &[u8]) -> u16 {
            let mut crc: u16 = 0xffff;
            for &b in bytes {
                crc ^= (b as u16) << 8;
                for _ in 0..8 {
                    crc = if crc & 0x8000 != 0 {
                        (crc << 1) ^ 0x1021
                    } else {
                        crc << 1
                    };
                }
            }
            crc
        }
        assert_eq!(bitwise(b"123456789"), 0x29b1);
        for src in [0u32, 1, 254, 255, 1023, 8191] {
            for sport in [0u16, 1, 0xc000, 0xc0ff, 0xffff] {
                let t = FiveTuple {
                    src_ip: host_ip(src),
                    dst_ip: host_ip(src + 7),
                    protocol: 17,
                    src_port: sport,
                    dst_port: 4791,
                };
                let mut bytes = Vec::new();
                bytes.extend(t.src_ip);
                bytes.extend(t.dst_ip);
                bytes.push(t.protocol);
                bytes.extend(t.src_port.to_be_bytes());
                bytes.extend(t.dst_port.to_be_bytes());
                assert_eq!(t.hash(), u32::from(bitwise(&bytes)), "{t:?}");
            }
        }
    }
}
