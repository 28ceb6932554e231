//! RoCEv2 frames: a data or acknowledgment packet (`Ethernet [802.1Q] | IPv4 | UDP 4791 | BTH |
//! extension headers | payload | pad | ICRC`, RoCEv2 annex A17; `verbs-spec.md` §6) and a
//! congestion notification packet, each with its emit and parse.

use super::*;

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

    /// A management datagram to the peer's general services interface: a UD SEND Only to
    /// QP1 whose DETH names Q_Key `0x80010000` and source QP 1, carrying one 256-byte MAD
    /// (IBTA Vol. 1 §13.5: GSI MADs travel between QP1s; on RoCEv2 in an ordinary UDP 4791
    /// datagram, Annex A17). `psn` is the sending QP1's; the payload is the MAD
    /// ([`crate::ib::cm::Message::to_mad`]).
    pub const fn gsi_mad(link: Link, ip: Ip, udp_src_port: u16, psn: u32) -> RoceFrame {
        use crate::ib::mad;
        let bth = bth::Repr {
            opcode: Opcode::UD_SEND_ONLY,
            solicited: false,
            mig_req: false,
            pad_count: 0,
            pkey: crate::ib::DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: mad::GSI_QP,
            ack_req: false,
            psn: psn & U24_MASK,
        };
        let ext = ExtHeaders {
            deth: Some(deth::Repr {
                qkey: mad::GSI_QKEY,
                src_qp: mad::GSI_QP,
            }),
            ..ExtHeaders::NONE
        };
        RoceFrame::new(link, ip, udp_src_port, bth, ext, mad::MAD_LEN as u16)
    }

    /// Whether this is a MAD between QP1s ([`RoceFrame::gsi_mad`]'s shape): a UD SEND Only
    /// to QP1 from QP1 with the GSI's Q_Key and a 256-byte payload.
    pub const fn is_gsi_mad(&self) -> bool {
        use crate::ib::mad;
        self.bth.opcode.as_u8() == Opcode::UD_SEND_ONLY.as_u8()
            && self.bth.dest_qp == mad::GSI_QP
            && self.payload_len as usize == mad::MAD_LEN
            && match self.ext.deth {
                Some(d) => d.qkey == mad::GSI_QKEY && d.src_qp == mad::GSI_QP,
                None => false,
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

/// The UDP source port and payload of a RoCEv2 packet.
pub(super) fn parse_roce_udp<'a>(l3: &L3<'a>) -> Result<(u16, &'a [u8])> {
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

pub(super) fn parse_roce<'a>(link: Link, l3: &L3<'a>) -> Result<(RoceFrame, &'a [u8])> {
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

pub(super) fn parse_cnp(link: Link, l3: &L3<'_>) -> Result<CnpFrame> {
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
