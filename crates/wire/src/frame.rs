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

/// The InfiniBand extension headers between the BTH and the payload, in wire order. Which
/// ones are present is fixed by the opcode ([`Opcode::has_reth`] and friends); a frame whose
/// headers do not match its opcode cannot be emitted.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct ExtHeaders {
    /// Reliable datagram header (RD only).
    pub rdeth: Option<rdeth::Repr>,
    /// Datagram header: Q_Key and source QP (UD, RD requests).
    pub deth: Option<deth::Repr>,
    /// FLUSH header.
    pub feth: Option<feth::Repr>,
    /// RDMA header: remote address, R_Key, length (WRITE first/only, READ request, ...).
    pub reth: Option<reth::Repr>,
    /// Atomic request header (COMPARE_SWAP, FETCH_ADD).
    pub atomic_eth: Option<atomic_eth::Repr>,
    /// ACK header: syndrome and MSN (ACK/NAK, READ responses, atomic ACK).
    pub aeth: Option<aeth::Repr>,
    /// Atomic ACK header: the original remote value.
    pub atomic_ack_eth: Option<atomic_ack_eth::Repr>,
    /// Immediate data.
    pub immdt: Option<immdt::Repr>,
    /// Invalidate header: the R_Key to invalidate.
    pub ieth: Option<ieth::Repr>,
    /// rdmalab's IRN extension for selective repeat (not IBTA; see [`irn`]): per-packet
    /// placement on WRITE and SEND packets, a SACK map on NAKs. Last before the payload, and
    /// marked in the BTH.
    pub irn: Option<irn::Repr>,
}

impl ExtHeaders {
    /// No extension headers (SEND_FIRST/MIDDLE/LAST/ONLY, WRITE_MIDDLE/LAST, ...).
    pub const NONE: ExtHeaders = ExtHeaders {
        rdeth: None,
        deth: None,
        feth: None,
        reth: None,
        atomic_eth: None,
        aeth: None,
        atomic_ack_eth: None,
        immdt: None,
        ieth: None,
        irn: None,
    };

    /// Whether exactly the headers `opcode` requires are present (the IRN extension, which no
    /// opcode requires, may come with any).
    pub fn matches(&self, opcode: Opcode) -> bool {
        self.rdeth.is_some() == opcode.has_rdeth()
            && self.deth.is_some() == opcode.has_deth()
            && self.feth.is_some() == opcode.has_feth()
            && self.reth.is_some() == opcode.has_reth()
            && self.atomic_eth.is_some() == opcode.has_atomic_eth()
            && self.aeth.is_some() == opcode.has_aeth()
            && self.atomic_ack_eth.is_some() == opcode.has_atomic_ack_eth()
            && self.immdt.is_some() == opcode.has_immdt()
            && self.ieth.is_some() == opcode.has_ieth()
            && match self.irn {
                Some(r) => irn::Kind::of(opcode).is_some_and(|k| k == r.kind()),
                None => true,
            }
    }

    /// The bytes the present headers occupy.
    pub const fn buffer_len(&self) -> usize {
        let mut len = 0;
        if self.rdeth.is_some() {
            len += rdeth::HEADER_LEN;
        }
        if self.deth.is_some() {
            len += deth::HEADER_LEN;
        }
        if self.feth.is_some() {
            len += feth::HEADER_LEN;
        }
        if self.reth.is_some() {
            len += reth::HEADER_LEN;
        }
        if self.atomic_eth.is_some() {
            len += atomic_eth::HEADER_LEN;
        }
        if self.aeth.is_some() {
            len += aeth::HEADER_LEN;
        }
        if self.atomic_ack_eth.is_some() {
            len += atomic_ack_eth::HEADER_LEN;
        }
        if self.immdt.is_some() {
            len += immdt::HEADER_LEN;
        }
        if self.ieth.is_some() {
            len += ieth::HEADER_LEN;
        }
        if let Some(r) = self.irn {
            len += r.buffer_len();
        }
        len
    }

    /// Refuse values that do not fit their wire fields, instead of truncating them.
    fn check(&self) -> Result<()> {
        let u24 = |v: u32, what| {
            if v > U24_MASK {
                Err(Error::Malformed(what))
            } else {
                Ok(())
            }
        };
        if let Some(r) = self.rdeth {
            u24(r.ee_context, "RDETH EE context above 24 bits")?;
        }
        if let Some(r) = self.irn {
            r.check_fields()?;
        }
        if let Some(d) = self.deth {
            u24(d.src_qp, "DETH source QP above 24 bits")?;
        }
        if let Some(f) = self.feth
            && (f.selectivity_level > 3 || f.placement_type > 0xf)
        {
            return Err(Error::Malformed("FETH field out of range"));
        }
        if let Some(a) = self.aeth {
            u24(a.msn, "AETH MSN above 24 bits")?;
            let value = match a.syndrome {
                aeth::Syndrome::Ack { credits } => credits,
                aeth::Syndrome::RnrNak { timer } => timer,
                aeth::Syndrome::Nak(aeth::NakCode::Reserved(code)) => {
                    if code < 5 {
                        return Err(Error::Malformed("AETH reserved NAK code below 5"));
                    }
                    code
                }
                aeth::Syndrome::Nak(_) => 0,
            };
            if value > 0x1f {
                return Err(Error::Malformed("AETH syndrome value above 31"));
            }
        }
        Ok(())
    }

    /// Read the headers `opcode` calls for (and the IRN extension when the BTH marks one)
    /// from the start of `buffer`; returns them and the bytes they took.
    fn parse(opcode: Opcode, irn_mark: bool, buffer: &[u8]) -> Result<(ExtHeaders, usize)> {
        let mut ext = ExtHeaders::NONE;
        let mut off = 0;
        // Each `new_checked` below proved that `buffer[off..]` held the previous header, so
        // `off <= buffer.len()` holds at every slice.
        if opcode.has_rdeth() {
            ext.rdeth = Some(rdeth::Repr::parse(&rdeth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += rdeth::HEADER_LEN;
        }
        if opcode.has_deth() {
            ext.deth = Some(deth::Repr::parse(&deth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += deth::HEADER_LEN;
        }
        if opcode.has_feth() {
            ext.feth = Some(feth::Repr::parse(&feth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += feth::HEADER_LEN;
        }
        if opcode.has_reth() {
            ext.reth = Some(reth::Repr::parse(&reth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += reth::HEADER_LEN;
        }
        if opcode.has_atomic_eth() {
            let packet = atomic_eth::Packet::new_checked(&buffer[off..])?;
            ext.atomic_eth = Some(atomic_eth::Repr::parse(&packet)?);
            off += atomic_eth::HEADER_LEN;
        }
        if opcode.has_aeth() {
            ext.aeth = Some(aeth::Repr::parse(&aeth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += aeth::HEADER_LEN;
        }
        if opcode.has_atomic_ack_eth() {
            let packet = atomic_ack_eth::Packet::new_checked(&buffer[off..])?;
            ext.atomic_ack_eth = Some(atomic_ack_eth::Repr::parse(&packet)?);
            off += atomic_ack_eth::HEADER_LEN;
        }
        if opcode.has_immdt() {
            ext.immdt = Some(immdt::Repr::parse(&immdt::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += immdt::HEADER_LEN;
        }
        if opcode.has_ieth() {
            ext.ieth = Some(ieth::Repr::parse(&ieth::Packet::new_checked(
                &buffer[off..],
            )?)?);
            off += ieth::HEADER_LEN;
        }
        if irn_mark {
            let r = irn::Repr::parse(opcode, &buffer[off..])?;
            off += r.buffer_len();
            ext.irn = Some(r);
        }
        Ok((ext, off))
    }

    /// Write the present headers in wire order at the start of `buffer` (at least
    /// [`buffer_len`](Self::buffer_len) bytes); returns the bytes written.
    fn emit(&self, buffer: &mut [u8]) -> usize {
        let mut off = 0;
        if let Some(r) = self.rdeth {
            r.emit(&mut rdeth::Packet::new_unchecked(&mut buffer[off..]));
            off += rdeth::HEADER_LEN;
        }
        if let Some(r) = self.deth {
            r.emit(&mut deth::Packet::new_unchecked(&mut buffer[off..]));
            off += deth::HEADER_LEN;
        }
        if let Some(r) = self.feth {
            r.emit(&mut feth::Packet::new_unchecked(&mut buffer[off..]));
            off += feth::HEADER_LEN;
        }
        if let Some(r) = self.reth {
            r.emit(&mut reth::Packet::new_unchecked(&mut buffer[off..]));
            off += reth::HEADER_LEN;
        }
        if let Some(r) = self.atomic_eth {
            r.emit(&mut atomic_eth::Packet::new_unchecked(&mut buffer[off..]));
            off += atomic_eth::HEADER_LEN;
        }
        if let Some(r) = self.aeth {
            r.emit(&mut aeth::Packet::new_unchecked(&mut buffer[off..]));
            off += aeth::HEADER_LEN;
        }
        if let Some(r) = self.atomic_ack_eth {
            r.emit(&mut atomic_ack_eth::Packet::new_unchecked(
                &mut buffer[off..],
            ));
            off += atomic_ack_eth::HEADER_LEN;
        }
        if let Some(r) = self.immdt {
            r.emit(&mut immdt::Packet::new_unchecked(&mut buffer[off..]));
            off += immdt::HEADER_LEN;
        }
        if let Some(r) = self.ieth {
            r.emit(&mut ieth::Packet::new_unchecked(&mut buffer[off..]));
            off += ieth::HEADER_LEN;
        }
        if let Some(r) = self.irn {
            off += r.emit(&mut buffer[off..]);
        }
        off
    }
}

/// A RoCEv2 data or acknowledgment packet in an Ethernet frame (everything but a CNP).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct RoceFrame {
    /// Addresses and VLAN tag.
    pub link: Link,
    /// IPv4 fields.
    pub ip: Ip,
    /// UDP source port (rxe: `0xc000` plus a hash of the QP, for ECMP entropy). The
    /// destination port is always 4791.
    pub udp_src_port: u16,
    /// Base transport header. Its `pad_count` must be [`RoceFrame::pad_len`] of the payload.
    pub bth: bth::Repr,
    /// Extension headers; must be those the opcode requires.
    pub ext: ExtHeaders,
    /// Payload length in bytes (without pad).
    pub payload_len: u16,
}

impl RoceFrame {
    /// A frame with the BTH pad count computed from `payload_len`.
    pub const fn new(
        link: Link,
        ip: Ip,
        udp_src_port: u16,
        bth: bth::Repr,
        ext: ExtHeaders,
        payload_len: u16,
    ) -> RoceFrame {
        let bth = bth::Repr {
            pad_count: RoceFrame::pad_len(payload_len),
            ..bth
        };
        RoceFrame {
            link,
            ip,
            udp_src_port,
            bth,
            ext,
            payload_len,
        }
    }

    /// Pad bytes after a payload of `payload_len` bytes: `(4 - len % 4) % 4`.
    pub const fn pad_len(payload_len: u16) -> u8 {
        (payload_len.wrapping_neg() & 0x3) as u8
    }

    /// Change the payload length and the pad count with it.
    pub fn set_payload_len(&mut self, payload_len: u16) {
        self.payload_len = payload_len;
        self.bth.pad_count = Self::pad_len(payload_len);
    }

    /// UDP payload length: BTH, extension headers, payload, pad and ICRC.
    pub const fn udp_payload_len(&self) -> usize {
        bth::HEADER_LEN
            + self.ext.buffer_len()
            + self.payload_len as usize
            + self.bth.pad_count as usize
            + ICRC_LEN
    }

    /// IPv4 packet length: what the ICRC covers (with the ICRC itself).
    pub const fn ip_len(&self) -> usize {
        ipv4::HEADER_LEN + udp::HEADER_LEN + self.udp_payload_len()
    }

    /// Emitted frame length, padded to the Ethernet minimum (FCS not included).
    pub const fn buffer_len(&self) -> usize {
        min_frame(self.link.header_len() + self.ip_len())
    }

    /// Check that the frame can be emitted: not a CNP opcode, extension headers and pad count
    /// matching the opcode and payload, every value within its field.
    pub fn check(&self) -> Result<()> {
        let opcode = self.bth.opcode;
        if opcode.is_cnp() {
            return Err(Error::Unsupported(
                "CNP opcode in a RoceFrame (use CnpFrame)",
            ));
        }
        if !self.ext.matches(opcode) {
            return Err(Error::Malformed(
                "extension headers do not match the opcode",
            ));
        }
        if self.payload_len != 0 && !opcode.has_payload() {
            return Err(Error::Malformed("payload on an opcode that carries none"));
        }
        if self.bth.pad_count != Self::pad_len(self.payload_len) {
            return Err(Error::Malformed(
                "BTH pad count is not (4 - payload_len % 4) % 4",
            ));
        }
        if self.bth.dest_qp > U24_MASK || self.bth.psn > U24_MASK {
            return Err(Error::Malformed("BTH QP or PSN above 24 bits"));
        }
        self.ext.check()?;
        self.link.check()?;
        self.ip
            .check(udp::HEADER_LEN + self.udp_payload_len())
            .map(drop)
    }

    /// Write the frame into the start of `buffer` and return its length. `payload` gives the
    /// payload bytes (zeros past its end; extra bytes ignored).
    pub fn emit(&self, payload: &[u8], buffer: &mut [u8]) -> Result<usize> {
        self.check()?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let l2 = self.link.header_len();
        let udp_len = udp::HEADER_LEN + self.udp_payload_len();
        emit_link_ip(
            &self.link,
            EtherType::IPV4,
            &self.ip,
            Protocol::UDP,
            udp_len,
            buffer,
        )?;
        let datagram = &mut buffer[l2..l2 + self.ip_len()];
        let udp = &mut datagram[ipv4::HEADER_LEN..];
        emit_udp(self.udp_src_port, self.udp_payload_len(), udp);
        let transport = &mut udp[udp::HEADER_LEN..];
        let mut bth_view = bth::Packet::new_unchecked(&mut transport[..]);
        self.bth.emit(&mut bth_view);
        bth_view.set_irn_mark(self.ext.irn.is_some());
        let mut off = bth::HEADER_LEN;
        off += self.ext.emit(&mut transport[off..]);
        let payload_len = usize::from(self.payload_len);
        copy_zero_filled(&mut transport[off..off + payload_len], payload);
        off += payload_len;
        transport[off..off + usize::from(self.bth.pad_count)].fill(0);
        icrc::fill(datagram)?;
        buffer[l2 + self.ip_len()..].fill(0);
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(payload, &mut bytes)?;
        Ok(bytes)
    }

    /// Parse a RoCEv2 frame (not a CNP) and return it with its payload bytes. Checks the IPv4
    /// checksum, the UDP length and port, the opcode, the pad count and the ICRC.
    pub fn parse(bytes: &[u8]) -> Result<(RoceFrame, &[u8])> {
        let (link, ethertype, l3) = parse_link(bytes)?;
        if ethertype != EtherType::IPV4 {
            return Err(Error::Unsupported("EtherType other than IPv4 for RoCEv2"));
        }
        let l3 = parse_ip(l3)?;
        if l3.protocol != Protocol::UDP {
            return Err(Error::Unsupported(
                "IPv4 protocol other than UDP for RoCEv2",
            ));
        }
        parse_roce(link, &l3)
    }
}

/// A RoCEv2 congestion notification packet in an Ethernet frame.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct CnpFrame {
    /// Addresses and VLAN tag.
    pub link: Link,
    /// IPv4 fields (NICs often send CNPs with a high-priority DSCP).
    pub ip: Ip,
    /// UDP source port; the destination is 4791.
    pub udp_src_port: u16,
    /// The CNP: destination QP, P_Key, FECN/BECN.
    pub cnp: cnp::Repr,
}

impl CnpFrame {
    /// UDP payload length: BTH, 16 reserved bytes, ICRC.
    pub const UDP_PAYLOAD_LEN: usize = cnp::HEADER_LEN + ICRC_LEN;

    /// IPv4 packet length.
    pub const fn ip_len(&self) -> usize {
        ipv4::HEADER_LEN + udp::HEADER_LEN + Self::UDP_PAYLOAD_LEN
    }

    /// Emitted frame length (FCS not included).
    pub const fn buffer_len(&self) -> usize {
        min_frame(self.link.header_len() + self.ip_len())
    }

    /// Write the frame into the start of `buffer` and return its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        if self.cnp.dest_qp > U24_MASK {
            return Err(Error::Malformed("CNP destination QP above 24 bits"));
        }
        self.link.check()?;
        let udp_len = udp::HEADER_LEN + Self::UDP_PAYLOAD_LEN;
        self.ip.check(udp_len)?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let l2 = self.link.header_len();
        emit_link_ip(
            &self.link,
            EtherType::IPV4,
            &self.ip,
            Protocol::UDP,
            udp_len,
            buffer,
        )?;
        let datagram = &mut buffer[l2..l2 + self.ip_len()];
        let udp = &mut datagram[ipv4::HEADER_LEN..];
        emit_udp(self.udp_src_port, Self::UDP_PAYLOAD_LEN, udp);
        self.cnp
            .emit(&mut cnp::Packet::new_unchecked(&mut udp[udp::HEADER_LEN..]));
        icrc::fill(datagram)?;
        buffer[l2 + self.ip_len()..].fill(0);
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(&mut bytes)?;
        Ok(bytes)
    }

    /// Parse a CNP frame, checking the IPv4 checksum and the ICRC.
    pub fn parse(bytes: &[u8]) -> Result<CnpFrame> {
        let (link, ethertype, l3) = parse_link(bytes)?;
        if ethertype != EtherType::IPV4 {
            return Err(Error::Unsupported("EtherType other than IPv4 for RoCEv2"));
        }
        let l3 = parse_ip(l3)?;
        if l3.protocol != Protocol::UDP {
            return Err(Error::Unsupported(
                "IPv4 protocol other than UDP for RoCEv2",
            ));
        }
        parse_cnp(link, &l3)
    }
}

/// A TCP segment in an Ethernet frame.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct TcpFrame {
    /// Addresses and VLAN tag.
    pub link: Link,
    /// IPv4 fields (ECT(0) for an ECN-capable flow such as DCTCP).
    pub ip: Ip,
    /// TCP header, options and payload length.
    pub tcp: tcp::Repr,
}

impl TcpFrame {
    /// IPv4 packet length.
    pub fn ip_len(&self) -> usize {
        ipv4::HEADER_LEN + self.tcp.buffer_len()
    }

    /// Emitted frame length, padded to the Ethernet minimum (FCS not included).
    pub fn buffer_len(&self) -> usize {
        min_frame(self.link.header_len() + self.ip_len())
    }

    /// Write the frame into the start of `buffer` and return its length; the TCP checksum is
    /// computed over `payload` (zeros past its end; extra bytes ignored).
    pub fn emit(&self, payload: &[u8], buffer: &mut [u8]) -> Result<usize> {
        self.link.check()?;
        self.ip.check(self.tcp.buffer_len())?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let l2 = self.link.header_len();
        emit_link_ip(
            &self.link,
            EtherType::IPV4,
            &self.ip,
            Protocol::TCP,
            self.tcp.buffer_len(),
            buffer,
        )?;
        let segment = &mut buffer[l2 + ipv4::HEADER_LEN..l2 + self.ip_len()];
        self.tcp.emit(
            &mut tcp::Packet::new_unchecked(segment),
            self.ip.src_addr,
            self.ip.dst_addr,
            payload,
        );
        buffer[l2 + self.ip_len()..].fill(0);
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(payload, &mut bytes)?;
        Ok(bytes)
    }

    /// Parse a TCP/IPv4 frame and return it with its payload bytes; checks both checksums.
    pub fn parse(bytes: &[u8]) -> Result<(TcpFrame, &[u8])> {
        let (link, ethertype, l3) = parse_link(bytes)?;
        if ethertype != EtherType::IPV4 {
            return Err(Error::Unsupported("EtherType other than IPv4 for TCP"));
        }
        let l3 = parse_ip(l3)?;
        if l3.protocol != Protocol::TCP {
            return Err(Error::Unsupported("IPv4 protocol other than TCP"));
        }
        parse_tcp(link, &l3)
    }
}

/// A PAUSE or PFC frame.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct PfcFrame {
    /// Addresses (destination [`pfc::DESTINATION`]); MAC control frames are untagged.
    pub link: Link,
    /// The MAC control body.
    pub control: pfc::Repr,
}

impl PfcFrame {
    /// A frame from `src_addr` to the reserved MAC control address.
    pub const fn new(src_addr: EthernetAddress, control: pfc::Repr) -> PfcFrame {
        PfcFrame {
            link: Link::new(src_addr, pfc::DESTINATION),
            control,
        }
    }

    /// Emitted frame length: 60 bytes untagged (FCS not included).
    pub const fn buffer_len(&self) -> usize {
        self.link.header_len() + pfc::BODY_LEN
    }

    /// Write the frame into the start of `buffer` and return its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        self.link.check()?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let eth = self.link.repr(EtherType::MAC_CONTROL);
        eth.emit(&mut ethernet::Packet::new_unchecked(&mut buffer[..]));
        self.control.emit(&mut pfc::Packet::new_unchecked(
            &mut buffer[eth.header_len()..],
        ));
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(&mut bytes)?;
        Ok(bytes)
    }

    /// Parse a PAUSE or PFC frame.
    pub fn parse(bytes: &[u8]) -> Result<PfcFrame> {
        let (link, ethertype, body) = parse_link(bytes)?;
        if ethertype != EtherType::MAC_CONTROL {
            return Err(Error::Unsupported("EtherType other than MAC control"));
        }
        parse_pfc(link, body)
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

/// The UDP source port and payload of a RoCEv2 packet.
fn parse_roce_udp<'a>(l3: &L3<'a>) -> Result<(u16, &'a [u8])> {
    let segment = &l3.datagram[l3.header_len..];
    let packet = udp::Packet::new_checked(segment)?;
    let repr = udp::Repr::parse(&packet, l3.ip.src_addr, l3.ip.dst_addr)?;
    if usize::from(packet.len()) != segment.len() {
        return Err(Error::Malformed(
            "UDP length disagrees with IPv4 total length",
        ));
    }
    if repr.dst_port != ROCEV2_UDP_PORT {
        return Err(Error::Unsupported("UDP destination port other than 4791"));
    }
    // The length check above makes the UDP payload run to the end of the segment.
    Ok((repr.src_port, &segment[udp::HEADER_LEN..]))
}

fn parse_roce<'a>(link: Link, l3: &L3<'a>) -> Result<(RoceFrame, &'a [u8])> {
    let (udp_src_port, transport) = parse_roce_udp(l3)?;
    let bth_view = bth::Packet::new_checked(transport)?;
    let bth = bth::Repr::parse(&bth_view)?;
    let irn_mark = bth_view.irn_mark();
    if bth.opcode.is_cnp() {
        return Err(Error::Unsupported("CNP in a RoceFrame (use CnpFrame)"));
    }
    let Some(body_end) = transport.len().checked_sub(ICRC_LEN) else {
        return Err(Error::Truncated("ICRC"));
    };
    if body_end < bth::HEADER_LEN {
        return Err(Error::Truncated("ICRC"));
    }
    icrc::verify(l3.datagram)?;
    let body = &transport[bth::HEADER_LEN..body_end];
    let (ext, ext_len) = ExtHeaders::parse(bth.opcode, irn_mark, body)?;
    let rest = &body[ext_len..];
    let pad = usize::from(bth.pad_count);
    let Some(payload_len) = rest.len().checked_sub(pad) else {
        return Err(Error::Malformed("BTH pad count larger than the packet"));
    };
    let payload = &rest[..payload_len];
    if !bth.opcode.has_payload() && !payload.is_empty() {
        return Err(Error::Malformed("payload on an opcode that carries none"));
    }
    if !rest.len().is_multiple_of(4) {
        return Err(Error::Malformed(
            "BTH pad count does not align the payload to 4 bytes",
        ));
    }
    let frame = RoceFrame {
        link,
        ip: l3.ip,
        udp_src_port,
        bth,
        ext,
        // The IPv4 total length bounds the payload by 65535 bytes.
        payload_len: payload_len as u16,
    };
    Ok((frame, payload))
}

fn parse_cnp(link: Link, l3: &L3<'_>) -> Result<CnpFrame> {
    let (udp_src_port, transport) = parse_roce_udp(l3)?;
    let cnp = cnp::Repr::parse(&cnp::Packet::new_checked(transport)?)?;
    if transport.len() != CnpFrame::UDP_PAYLOAD_LEN {
        return Err(Error::Malformed("CNP is not 32 bytes after the UDP header"));
    }
    icrc::verify(l3.datagram)?;
    Ok(CnpFrame {
        link,
        ip: l3.ip,
        udp_src_port,
        cnp,
    })
}

fn parse_tcp<'a>(link: Link, l3: &L3<'a>) -> Result<(TcpFrame, &'a [u8])> {
    let segment = &l3.datagram[l3.header_len..];
    let packet = tcp::Packet::new_checked(segment)?;
    let tcp = tcp::Repr::parse(&packet, l3.ip.src_addr, l3.ip.dst_addr)?;
    let frame = TcpFrame {
        link,
        ip: l3.ip,
        tcp,
    };
    Ok((frame, &segment[packet.header_len()..]))
}

fn parse_pfc(link: Link, body: &[u8]) -> Result<PfcFrame> {
    let control = pfc::Repr::parse(&pfc::Packet::new_checked(body)?)?;
    Ok(PfcFrame { link, control })
}

#[cfg(test)]
mod tests {
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
        0x45, 0x02, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0xac, 0x0a, 0x00, 0x00,
        0x01, 0x0a, 0x00, 0x00, 0x02, // IPv4: ECT(0), len 60, id 1, DF, TTL 64, UDP
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, // UDP 49152 -> 4791, len 40, csum 0
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x64, // BTH
        b'h', b'e', b'l', b'l', b'o', b' ', b'r', b'd', b'm', b'a', b' ', b's', b'e', b'n', b'd',
        b'!', // payload
        0x58, 0xf6, 0x22, 0xa0, // ICRC
    ];

    /// The WRITE_ONLY frame of `ecosystem.md`.
    fn write_only_frame() -> Vec<u8> {
        let mut f = vec![
            0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
            0x45, 0x02, 0x00, 0x5c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x26, 0x8c, 0x0a, 0x00,
            0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, // IPv4, len 92
            0xc0, 0x00, 0x12, 0xb7, 0x00, 0x48, 0x00, 0x00, // UDP, len 72
            0x0a, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x65, // BTH
            0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00,
            0x00, 0x20, // RETH
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
}
