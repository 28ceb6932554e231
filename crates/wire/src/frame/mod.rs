//! Whole Ethernet frames: the representations the simulator carries, and their bytes.
//!
//! A simulated packet is one of the `Copy` composites below; bytes exist only when a frame is
//! written to a pcap file or checked by a test. Each composite keeps the fields that are free
//! choices and derives the rest when it emits: lengths, the IPv4 checksum, protocol numbers,
//! EtherTypes, the UDP port 4791 and the ICRC. That keeps an ECN mark (`frame.ip.ecn =
//! Ecn::Ce`) or a PSN change a one-field edit.
//!
//! - [`RoceFrame`]: `Ethernet [802.1Q] | IPv4 | UDP 4791 | BTH | extension headers | payload
//!   | pad | ICRC` (RoCEv2 annex; `verbs-spec.md` §6).
//! - [`CnpFrame`]: a RoCEv2 congestion notification packet.
//! - [`TcpFrame`]: `Ethernet [802.1Q] | IPv4 | TCP | payload`.
//! - [`PfcFrame`]: a PAUSE or PFC MAC control frame.
//! - [`Frame`]: any of the four, with [`parse_frame`], which never panics.
//!
//! Emitting pads a frame to the 60-byte Ethernet minimum; the FCS is not written (pcap files
//! do not hold it). Emitting takes the payload bytes separately: missing bytes are zeros, so
//! `&[]` gives an all-zero payload of `payload_len` bytes, which is what a simulation that
//! carries no data wants. Parsing checks every checksum and the ICRC.
//!
//! Simplifications: IPv4 only; no IPv4 options or fragments (a fragment parses as
//! [`Error::Unsupported`]); TCP and UDP only inside IPv4; UDP only to port 4791.

mod mac_control;
mod roce;
mod tcp_segment;

pub use mac_control::PfcFrame;
use mac_control::parse_pfc;
pub use roce::{CnpFrame, ExtHeaders, RoceFrame};
use roce::{parse_cnp, parse_roce};
pub use tcp_segment::TcpFrame;
use tcp_segment::parse_tcp;

use crate::ib::{
    ICRC_LEN, ROCEV2_UDP_PORT, U24_MASK, aeth, atomic_ack_eth, atomic_eth, bth, cnp, deth, feth,
    icrc, ieth, immdt, irn, rdeth, reth,
};
use crate::{
    Ecn, Error, EtherType, EthernetAddress, Ipv4Address, Opcode, Protocol, Result, ethernet, ipv4,
    pfc, tcp, udp, vlan,
};

/// The link-layer part of a frame: addresses and an optional 802.1Q tag. The EtherType is
/// derived from the frame kind.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Link {
    /// Destination MAC address.
    pub dst_addr: EthernetAddress,
    /// Source MAC address.
    pub src_addr: EthernetAddress,
    /// The 802.1Q tag; its PCP is the priority PFC acts on.
    pub vlan: Option<vlan::Tag>,
}

impl Link {
    /// An untagged link header from `src_addr` to `dst_addr`.
    pub const fn new(src_addr: EthernetAddress, dst_addr: EthernetAddress) -> Link {
        Link {
            dst_addr,
            src_addr,
            vlan: None,
        }
    }

    /// Ethernet header length: 14, or 18 when tagged.
    pub const fn header_len(&self) -> usize {
        self.repr(EtherType::IPV4).header_len()
    }

    const fn repr(&self, ethertype: EtherType) -> ethernet::Repr {
        ethernet::Repr {
            dst_addr: self.dst_addr,
            src_addr: self.src_addr,
            vlan: self.vlan,
            ethertype,
        }
    }

    fn check(&self) -> Result<()> {
        match self.vlan {
            Some(tag) if tag.vid > vlan::VID_MAX => Err(Error::Malformed("VLAN VID above 4095")),
            _ => Ok(()),
        }
    }
}

/// The IPv4 fields of a frame that are free choices. Protocol, length and checksum are
/// derived; frames are never fragmented.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Ip {
    /// Source address.
    pub src_addr: Ipv4Address,
    /// Destination address.
    pub dst_addr: Ipv4Address,
    /// DSCP, 0–63: what a switch maps to a traffic class.
    pub dscp: u8,
    /// ECN codepoint: ECT(0) for ECN-capable RoCE and TCP traffic, CE once a switch marks it.
    pub ecn: Ecn,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Time to live.
    pub ttl: u8,
}

impl Ip {
    /// Header fields as a RoCEv2 NIC sends them: DSCP 0, not ECN-capable, id 0, DF, TTL 64.
    pub const fn new(src_addr: Ipv4Address, dst_addr: Ipv4Address) -> Ip {
        Ip {
            src_addr,
            dst_addr,
            dscp: 0,
            ecn: Ecn::NotEct,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        }
    }

    const fn repr(&self, protocol: Protocol, payload_len: u16) -> ipv4::Repr {
        ipv4::Repr {
            src_addr: self.src_addr,
            dst_addr: self.dst_addr,
            protocol,
            payload_len,
            dscp: self.dscp,
            ecn: self.ecn,
            ident: self.ident,
            dont_frag: self.dont_frag,
            more_frags: false,
            frag_offset: 0,
            ttl: self.ttl,
        }
    }

    fn from_repr(repr: &ipv4::Repr) -> Result<Ip> {
        if repr.more_frags || repr.frag_offset != 0 {
            return Err(Error::Unsupported("IPv4 fragment"));
        }
        Ok(Ip {
            src_addr: repr.src_addr,
            dst_addr: repr.dst_addr,
            dscp: repr.dscp,
            ecn: repr.ecn,
            ident: repr.ident,
            dont_frag: repr.dont_frag,
            ttl: repr.ttl,
        })
    }

    fn check(&self, payload_len: usize) -> Result<u16> {
        if self.dscp > ipv4::DSCP_MAX {
            return Err(Error::Malformed("DSCP above 63"));
        }
        if payload_len + ipv4::HEADER_LEN > usize::from(u16::MAX) {
            return Err(Error::Malformed(
                "packet longer than the 65535-byte IPv4 limit",
            ));
        }
        // Just checked: payload_len < 65535.
        Ok(payload_len as u16)
    }
}

/// Any frame rdmalab puts on a link.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Frame {
    /// A RoCEv2 packet other than a CNP.
    Roce(RoceFrame),
    /// A RoCEv2 congestion notification packet.
    Cnp(CnpFrame),
    /// A TCP segment.
    Tcp(TcpFrame),
    /// A PAUSE or PFC frame.
    Pfc(PfcFrame),
}

impl Frame {
    /// The link header fields.
    pub const fn link(&self) -> &Link {
        match self {
            Frame::Roce(f) => &f.link,
            Frame::Cnp(f) => &f.link,
            Frame::Tcp(f) => &f.link,
            Frame::Pfc(f) => &f.link,
        }
    }

    /// The link header fields, writable (a switch rewriting MACs or the PCP).
    pub fn link_mut(&mut self) -> &mut Link {
        match self {
            Frame::Roce(f) => &mut f.link,
            Frame::Cnp(f) => &mut f.link,
            Frame::Tcp(f) => &mut f.link,
            Frame::Pfc(f) => &mut f.link,
        }
    }

    /// The IPv4 fields, if the frame has any.
    pub const fn ip(&self) -> Option<&Ip> {
        match self {
            Frame::Roce(f) => Some(&f.ip),
            Frame::Cnp(f) => Some(&f.ip),
            Frame::Tcp(f) => Some(&f.ip),
            Frame::Pfc(_) => None,
        }
    }

    /// The IPv4 fields, writable (a switch marking ECN CE or decrementing the TTL).
    pub fn ip_mut(&mut self) -> Option<&mut Ip> {
        match self {
            Frame::Roce(f) => Some(&mut f.ip),
            Frame::Cnp(f) => Some(&mut f.ip),
            Frame::Tcp(f) => Some(&mut f.ip),
            Frame::Pfc(_) => None,
        }
    }

    /// Application payload bytes carried (0 for CNP and PFC).
    pub const fn payload_len(&self) -> usize {
        match self {
            Frame::Roce(f) => f.payload_len as usize,
            Frame::Tcp(f) => f.tcp.payload_len as usize,
            Frame::Cnp(_) | Frame::Pfc(_) => 0,
        }
    }

    /// Emitted frame length (FCS not included); see [`ethernet::on_wire_len`] for link time.
    pub fn buffer_len(&self) -> usize {
        match self {
            Frame::Roce(f) => f.buffer_len(),
            Frame::Cnp(f) => f.buffer_len(),
            Frame::Tcp(f) => f.buffer_len(),
            Frame::Pfc(f) => f.buffer_len(),
        }
    }

    /// Write the frame into the start of `buffer`; `payload` is used by RoCE and TCP frames.
    pub fn emit(&self, payload: &[u8], buffer: &mut [u8]) -> Result<usize> {
        match self {
            Frame::Roce(f) => f.emit(payload, buffer),
            Frame::Cnp(f) => f.emit(buffer),
            Frame::Tcp(f) => f.emit(payload, buffer),
            Frame::Pfc(f) => f.emit(buffer),
        }
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(payload, &mut bytes)?;
        Ok(bytes)
    }
}

impl From<RoceFrame> for Frame {
    fn from(f: RoceFrame) -> Frame {
        Frame::Roce(f)
    }
}

impl From<CnpFrame> for Frame {
    fn from(f: CnpFrame) -> Frame {
        Frame::Cnp(f)
    }
}

impl From<TcpFrame> for Frame {
    fn from(f: TcpFrame) -> Frame {
        Frame::Tcp(f)
    }
}

impl From<PfcFrame> for Frame {
    fn from(f: PfcFrame) -> Frame {
        Frame::Pfc(f)
    }
}

/// Parse any frame rdmalab emits, returning it and its payload bytes (empty for CNP and PFC).
/// Checks every checksum and the ICRC; never panics, whatever `bytes` hold. Frames of other
/// kinds (IPv6, ARP, UDP to other ports, ...) are [`Error::Unsupported`].
pub fn parse_frame(bytes: &[u8]) -> Result<(Frame, &[u8])> {
    let (link, ethertype, l3) = parse_link(bytes)?;
    match ethertype {
        EtherType::MAC_CONTROL => Ok((Frame::Pfc(parse_pfc(link, l3)?), &[])),
        EtherType::IPV4 => {
            let l3 = parse_ip(l3)?;
            match l3.protocol {
                Protocol::TCP => {
                    let (frame, payload) = parse_tcp(link, &l3)?;
                    Ok((Frame::Tcp(frame), payload))
                }
                Protocol::UDP => {
                    let udp = &l3.datagram[l3.header_len..];
                    // Peek at the opcode after the 8-byte UDP header to pick the parser; both
                    // parsers check everything again.
                    if udp.get(udp::HEADER_LEN) == Some(&Opcode::CNP.as_u8()) {
                        Ok((Frame::Cnp(parse_cnp(link, &l3)?), &[]))
                    } else {
                        let (frame, payload) = parse_roce(link, &l3)?;
                        Ok((Frame::Roce(frame), payload))
                    }
                }
                _ => Err(Error::Unsupported("IPv4 protocol other than TCP and UDP")),
            }
        }
        EtherType::IPV6 => Err(Error::Unsupported("IPv6")),
        _ => Err(Error::Unsupported(
            "EtherType other than IPv4 and MAC control",
        )),
    }
}

/// A frame shorter than the Ethernet minimum is padded up to it.
const fn min_frame(len: usize) -> usize {
    if len < ethernet::MIN_FRAME_LEN {
        ethernet::MIN_FRAME_LEN
    } else {
        len
    }
}

/// Copy `src` into `dst`, zero-filling what `src` does not cover.
fn copy_zero_filled(dst: &mut [u8], src: &[u8]) {
    let n = src.len().min(dst.len());
    dst[..n].copy_from_slice(&src[..n]);
    dst[n..].fill(0);
}

/// Write the Ethernet and IPv4 headers at the start of `buffer` (long enough, checked by the
/// caller); `l4_len` is the IPv4 payload length.
fn emit_link_ip(
    link: &Link,
    ethertype: EtherType,
    ip: &Ip,
    protocol: Protocol,
    l4_len: usize,
    buffer: &mut [u8],
) -> Result<()> {
    let eth = link.repr(ethertype);
    eth.emit(&mut ethernet::Packet::new_unchecked(&mut buffer[..]));
    let payload_len = ip.check(l4_len)?;
    ip.repr(protocol, payload_len)
        .emit(&mut ipv4::Packet::new_unchecked(
            &mut buffer[eth.header_len()..],
        ));
    Ok(())
}

/// Write a RoCEv2 UDP header (checksum 0) at the start of `buffer`.
fn emit_udp(src_port: u16, payload_len: usize, buffer: &mut [u8]) {
    // The caller's Ip::check bounded the whole IPv4 packet by 65535 bytes.
    let repr = udp::Repr {
        src_port,
        dst_port: ROCEV2_UDP_PORT,
        payload_len: payload_len as u16,
    };
    repr.emit(&mut udp::Packet::new_unchecked(buffer));
}

fn parse_link(bytes: &[u8]) -> Result<(Link, EtherType, &[u8])> {
    let packet = ethernet::Packet::new_checked(bytes)?;
    let eth = ethernet::Repr::parse(&packet)?;
    // `parse` read the whole (tagged) header, so `header_len() <= bytes.len()`.
    let rest = &bytes[eth.header_len()..];
    let link = Link {
        dst_addr: eth.dst_addr,
        src_addr: eth.src_addr,
        vlan: eth.vlan,
    };
    Ok((link, eth.ethertype, rest))
}

/// A parsed IPv4 layer: the fields, the protocol and the packet bytes up to its total length.
struct L3<'a> {
    ip: Ip,
    protocol: Protocol,
    datagram: &'a [u8],
    header_len: usize,
}

fn parse_ip(bytes: &[u8]) -> Result<L3<'_>> {
    let packet = ipv4::Packet::new_checked(bytes)?;
    let repr = ipv4::Repr::parse(&packet)?;
    Ok(L3 {
        ip: Ip::from_repr(&repr)?,
        protocol: repr.protocol,
        // new_checked proved `total_len <= bytes.len()`.
        datagram: &bytes[..usize::from(packet.total_len())],
        header_len: packet.header_len(),
    })
}

#[cfg(test)]
mod tests;
