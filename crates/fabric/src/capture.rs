//! Writing what the fabric carries to a pcap file that Wireshark decodes.
//!
//! [`PcapTap`] is a [`Tap`]: it sees each frame as its first bit leaves a port and writes the
//! frame's bytes, built with the `wire` crate from the packet's fields, with a nanosecond
//! timestamp. PFC frames are real 802.1Qbb MAC control frames. Raw-flow frames have no transport
//! behind them; they are written as RoCEv2 RC SEND_ONLY packets (destination QP = 0x100 + flow
//! id, PSN = frame number, the flow's UDP source port, IPv4 ECN as marked on the way) with zero
//! payload bytes, so ECN marks and VLAN priorities show in Wireshark. TCP segments are real
//! `Ethernet | 802.1Q | IPv4 | TCP` frames (RFC 9293 header and options, correct checksums).
//!
//! Addresses: host ordinal i is 10.0.0.(i+1) as in [`host_ip`]; every node's MAC is
//! 02:00:00 followed by its 24-bit node id (a locally administered address); switch-originated
//! PFC frames carry the switch's MAC.

use crate::fabric::{Fabric, Tap};
use crate::packet::{Packet, Payload, RAW_FRAME_OVERHEAD, host_ip};
use std::collections::BTreeSet;
use std::io::{self, Write};
use units::{NodeId, PortId, SimTime};
use wire::ib::{Opcode, Operation, bth};
use wire::{
    EthernetAddress, ExtHeaders, Ip, Ipv4Address, Link, PcapWriter, PfcFrame, RoceFrame, TcpFrame,
    pfc, vlan,
};

/// Raw flow f is drawn as destination QP `0x100 + f`: QPs 0 and 1 are the special management
/// QPs, which Wireshark would decode as MADs.
pub const RAW_QP_BASE: u32 = 0x100;

/// Which ports a capture records.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum CaptureAt {
    /// Every port of every node: a frame appears once per hop.
    All,
    /// Only these (node, port) pairs.
    Ports(BTreeSet<(NodeId, PortId)>),
}

impl CaptureAt {
    /// Whether frames leaving `node`'s `port` are captured.
    pub fn includes(&self, node: NodeId, port: PortId) -> bool {
        match self {
            CaptureAt::All => true,
            CaptureAt::Ports(set) => set.contains(&(node, port)),
        }
    }
}

/// A tap that writes a pcap.
pub struct PcapTap<W: Write> {
    writer: PcapWriter<W>,
    at: CaptureAt,
    host_ordinal: Vec<Option<u32>>,
    frames: u64,
    error: Option<io::Error>,
    buf: Vec<u8>,
}

/// The MAC address of node `n`.
pub fn node_mac(n: NodeId) -> EthernetAddress {
    let b = n.0.to_be_bytes();
    EthernetAddress([0x02, 0x00, 0x00, b[1], b[2], b[3]])
}

impl<W: Write + 'static> PcapTap<W> {
    /// A tap for `fabric` writing to `out` (the pcap header is written now).
    pub fn new(out: W, fabric: &Fabric, at: CaptureAt) -> io::Result<Self> {
        let writer = PcapWriter::new(out)?;
        let mut host_ordinal = Vec::new();
        for (i, h) in fabric.hosts().iter().enumerate() {
            if host_ordinal.len() <= h.index() {
                host_ordinal.resize(h.index() + 1, None);
            }
            host_ordinal[h.index()] = Some(i as u32);
        }
        Ok(PcapTap {
            writer,
            at,
            host_ordinal,
            frames: 0,
            error: None,
            buf: Vec::with_capacity(4300),
        })
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The underlying writer, or the first error any write hit.
    pub fn finish(self) -> io::Result<W> {
        if let Some(e) = self.error {
            return Err(e);
        }
        Ok(self.writer.into_inner())
    }

    fn ip_of(&self, n: NodeId) -> Ipv4Address {
        let ordinal = self
            .host_ordinal
            .get(n.index())
            .copied()
            .flatten()
            .unwrap_or(n.0);
        Ipv4Address(host_ip(ordinal))
    }

    fn encode(&mut self, pkt: &Packet) -> wire::Result<()> {
        let (src, dst) = (self.ip_of(pkt.src), self.ip_of(pkt.dst));
        frame_bytes(pkt, src, dst, &[], &mut self.buf)
    }
}

/// Builds the bytes of `pkt` as it would appear on the wire (without FCS) into `buf`:
/// `src`/`dst` are the IPv4 addresses of its hosts and `payload` its payload bytes (zeros if
/// shorter than the packet's payload).
pub fn frame_bytes(
    pkt: &Packet,
    src: Ipv4Address,
    dst: Ipv4Address,
    payload: &[u8],
    buf: &mut Vec<u8>,
) -> wire::Result<()> {
    {
        buf.clear();
        match pkt.payload {
            Payload::Pause {
                class_enable,
                quanta,
            } => {
                let frame = PfcFrame::new(
                    node_mac(pkt.src),
                    pfc::Repr::Pfc {
                        class_enable,
                        quanta,
                    },
                );
                buf.resize(frame.buffer_len(), 0);
                frame.emit(buf)?;
            }
            Payload::Raw { payload, seq } => {
                let mut link = Link::new(node_mac(pkt.src), node_mac(pkt.dst));
                link.vlan = Some(vlan::Tag {
                    pcp: pkt.priority,
                    dei: false,
                    vid: 0,
                });
                let mut ip = Ip::new(src, dst);
                ip.ecn = pkt.ecn;
                let bth = bth::Repr {
                    opcode: Opcode::rc(Operation::SendOnly),
                    dest_qp: (RAW_QP_BASE + pkt.flow.0) & 0x00ff_ffff,
                    psn: seq & 0x00ff_ffff,
                    ack_req: true,
                    solicited: false,
                    mig_req: false,
                    pad_count: 0,
                    pkey: 0xffff,
                    fecn: false,
                    becn: false,
                };
                let sport = 0xc000 | (pkt.flow.0 as u16 & 0x3fff);
                debug_assert_eq!(pkt.len_bytes, payload + RAW_FRAME_OVERHEAD);
                let len = u16::try_from(payload)
                    .map_err(|_| wire::Error::Malformed("payload over 64 KiB"))?;
                let frame = RoceFrame::new(link, ip, sport, bth, ExtHeaders::NONE, len);
                buf.resize(frame.buffer_len(), 0);
                frame.emit(&[], buf)?;
            }
            Payload::Tcp { repr, .. } => {
                let mut link = Link::new(node_mac(pkt.src), node_mac(pkt.dst));
                link.vlan = Some(vlan::Tag {
                    pcp: pkt.priority,
                    dei: false,
                    vid: 0,
                });
                let mut ip = Ip::new(src, dst);
                ip.ecn = pkt.ecn;
                let frame = TcpFrame {
                    link,
                    ip,
                    tcp: repr,
                };
                buf.resize(frame.buffer_len(), 0);
                frame.emit(payload, buf)?;
            }
            Payload::Roce {
                hdr, payload_len, ..
            } => {
                let mut link = Link::new(node_mac(pkt.src), node_mac(pkt.dst));
                link.vlan = Some(vlan::Tag {
                    pcp: pkt.priority,
                    dei: false,
                    vid: 0,
                });
                let mut ip = Ip::new(src, dst);
                ip.ecn = pkt.ecn;
                if hdr.bth.opcode.is_cnp() {
                    let frame = wire::CnpFrame {
                        link,
                        ip,
                        udp_src_port: hdr.udp_src_port,
                        cnp: wire::ib::cnp::Repr {
                            pkey: hdr.bth.pkey,
                            dest_qp: hdr.bth.dest_qp,
                            fecn: hdr.bth.fecn,
                            becn: hdr.bth.becn,
                        },
                    };
                    buf.resize(frame.buffer_len(), 0);
                    frame.emit(buf)?;
                    return Ok(());
                }
                let len = u16::try_from(payload_len)
                    .map_err(|_| wire::Error::Malformed("payload over 64 KiB"))?;
                let frame = RoceFrame::new(link, ip, hdr.udp_src_port, hdr.bth, hdr.ext, len);
                buf.resize(frame.buffer_len(), 0);
                frame.emit(payload, buf)?;
            }
        }
        Ok(())
    }
}

impl<W: Write + Send + 'static> Tap for PcapTap<W> {
    fn on_transmit(&mut self, at: SimTime, node: NodeId, port: PortId, pkt: &Packet) {
        if self.error.is_some() {
            return;
        }
        if let CaptureAt::Ports(set) = &self.at
            && !set.contains(&(node, port))
        {
            return;
        }
        let result = self
            .encode(pkt)
            .map_err(io::Error::other)
            .and_then(|()| self.writer.write_frame(at, &self.buf));
        match result {
            Ok(()) => self.frames += 1,
            Err(e) => self.error = Some(e),
        }
    }
}
