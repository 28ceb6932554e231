//! RoCE packets as the transport produces and consumes them: headers plus a payload length.

use super::psn::Psn;
use wire::ExtHeaders;
use wire::ib::bth;

/// A RoCEv2 transport packet without its bytes: the BTH, the extension headers the opcode
/// requires, and how many payload bytes follow.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RocePacket {
    /// Base transport header (pad count is derived when bytes are emitted).
    pub bth: bth::Repr,
    /// Extension headers.
    pub ext: ExtHeaders,
    /// Payload bytes (without pad).
    pub payload_len: u32,
}

/// Where a packet's payload bytes come from.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum DataRef {
    /// No payload.
    None,
    /// Bytes `offset .. offset + len` of the message of send request `id` (the requester's
    /// SGE list, or its inline data).
    Request {
        /// The send request.
        id: u64,
        /// Offset within the message.
        offset: u64,
    },
    /// The responder's memory at virtual address `va` (a READ response), read through the
    /// request's `rkey` (the NIC translates every response's DMA read with it).
    Remote {
        /// Start address.
        va: u64,
        /// The memory key the READ request carried.
        rkey: u32,
    },
}

/// A packet to put on the wire and where its payload comes from.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Transmit {
    /// Headers and length.
    pub pkt: RocePacket,
    /// Payload source.
    pub data: DataRef,
    /// UD: the address handle of the destination (the caller's opaque number from
    /// [`UdDest::ah`](super::requester::UdDest)); `None` for connected QPs, whose packets go
    /// to the connection's peer.
    pub ud_ah: Option<u32>,
}

/// A BTH for an RC packet with every flag clear.
pub(crate) fn rc_bth(opcode: wire::Opcode, dest_qp: u32, psn: Psn, ack_req: bool) -> bth::Repr {
    bth::Repr {
        opcode,
        solicited: false,
        mig_req: false,
        pad_count: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        dest_qp,
        ack_req,
        psn: psn.get(),
    }
}
