//! A frame's headers in wire order, field by field: what a packet inspector shows.
//!
//! [`dissect`] walks the bytes of a frame with the same typed views (`Packet::new_checked` and
//! its getters) that [`parse_frame`](crate::parse_frame) uses, header after header, and lists
//! for each field its name as the defining document spells it, its position (bit offset from
//! the start of its header, and width), its value, and what the value means where it has a
//! meaning (an opcode, an AETH syndrome, an ECN codepoint, a checksum that does or does not
//! verify). Positions come from each header module's `mod field` and bit masks, never from a
//! second table, so the inspector and the simulator cannot disagree on a layout.
//!
//! Unlike [`parse_frame`](crate::parse_frame), a dissection does not stop at the first wrong
//! checksum or ICRC: it says which one does not verify and goes on, because showing a bad
//! frame is the point. It stops where the bytes stop making sense (a truncated header, an
//! unknown opcode, a kind of frame the crate does not model) and says why in
//! [`Dissection::stopped`]. [`Dissection::frame_check`] carries `parse_frame`'s own verdict.
//!
//! A frame may arrive with part of its payload left out (a web page that ships headers and the
//! first bytes only): [`dissect_elided`] takes the range that was removed, refilled with zeros
//! by the caller, and reports checks that cover it (the ICRC, the TCP checksum) as
//! [`Verdict::Unchecked`] rather than wrong.

use crate::ib::{
    ICRC_LEN, ROCEV2_UDP_PORT, aeth, atomic_ack_eth, atomic_eth, bth, cnp, deth, feth, icrc, ieth,
    immdt, irn, rdeth, reth,
};
use crate::{
    Ecn, Error, EtherType, EthernetAddress, Ipv4Address, Opcode, Protocol, ethernet, ipv4, pfc,
    tcp, udp, vlan,
};
use core::ops::Range;
use units::Priority;

mod kind;
mod mad;
mod roce;
mod tcp_segment;

pub use kind::Kind;
use kind::field_spec;

/// A field's value.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Value {
    /// A number (flags are 0 or 1).
    Uint(u64),
    /// A MAC address.
    Mac(EthernetAddress),
    /// An IPv4 address.
    Ipv4(Ipv4Address),
    /// Bytes shown as they are (payload, reserved areas, unknown options).
    Bytes,
}

/// Whether a checksum or CRC holds.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Verdict {
    /// It matches the bytes it covers.
    Good,
    /// It does not; the value the bytes give.
    Bad {
        /// What the covered bytes give, as the field would hold it (big-endian).
        computed: u64,
    },
    /// The sender did not compute one (a UDP checksum of zero, as RoCEv2 NICs send).
    NotComputed,
    /// It covers bytes that were left out of this copy of the frame, so it was not checked.
    Unchecked,
}

/// What a field's value means, where it means more than the number.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Meaning {
    /// An EtherType.
    EtherType(EtherType),
    /// A MAC address's group bit (multicast, including the PFC address).
    Multicast,
    /// An IPv4 protocol number.
    Protocol(Protocol),
    /// An ECN codepoint.
    Ecn(Ecn),
    /// A length in bytes that the field encodes (IHL × 4, data offset × 4, UDP length, ...).
    Bytes(u64),
    /// A checksum or the ICRC.
    Check(Verdict),
    /// UDP port 4791: RoCEv2.
    RoceV2Port,
    /// A BTH opcode.
    Opcode(Opcode),
    /// The default partition key with full membership.
    DefaultPkey,
    /// An AETH syndrome.
    Syndrome(aeth::Syndrome),
    /// A PCP: the priority PFC pauses.
    Priority(Priority),
    /// A MAC control opcode (PAUSE or PFC).
    MacControlOpcode(u16),
    /// A class-enable vector: the priorities a PFC frame addresses (bit p = priority p).
    ClassEnable(u8),
    /// A pause time in quanta of 512 bit times; 0 resumes.
    Quanta {
        /// The quanta.
        quanta: u16,
        /// The same in bit times.
        bit_times: u64,
    },
    /// TCP control flags.
    TcpFlags(tcp::Flags),
    /// A TCP option kind.
    TcpOption(u8),
    /// An IRN SACK map: how many PSNs after the NAK's it says arrived.
    SackHeld(u32),
    /// Reserved: sent as zero, ignored on receipt.
    Reserved,
}

/// One field of a header.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct FieldView {
    /// The field's name as its document writes it (`OpCode`, `DestQP`, `R_Key`, `TTL`).
    pub name: &'static str,
    /// Offset of its first bit from the start of its header (bit 0 is the most significant
    /// bit of the header's first byte, as the specifications draw them).
    pub bit_offset: usize,
    /// Width in bits.
    pub bit_width: usize,
    /// The value.
    pub value: Value,
    /// What the value means, when it means more than the number.
    pub meaning: Option<Meaning>,
    /// The document and section that define the field, as [`Kind::spec`] words them: its
    /// header's, or a more precise one (the ECN bits are RFC 3168's, not RFC 791's; a TCP
    /// option's is its RFC's).
    pub spec: &'static str,
}

/// One header (or the payload, pad, ICRC) of a frame.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Header {
    /// Which header.
    pub kind: Kind,
    /// Its first byte in the frame.
    pub start: usize,
    /// Its length in bytes.
    pub len: usize,
    /// Its fields in wire order.
    pub fields: Vec<FieldView>,
    /// The document and section that define it in this frame: [`Kind::spec`], narrowed where
    /// the frame decides (PAUSE is IEEE 802.3 Annex 31B, PFC Annex 31D; a TCP payload is RFC
    /// 9293's, a RoCE payload Annex A17's).
    pub spec: &'static str,
}

impl Header {
    /// The frame bytes of the header.
    pub fn range(&self) -> Range<usize> {
        self.start..self.start + self.len
    }
}

/// A frame taken apart.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Dissection {
    /// The frame's length in bytes (without FCS).
    pub len: usize,
    /// The headers in wire order, up to where the dissection stopped.
    pub headers: Vec<Header>,
    /// Why the dissection stopped before the end of the frame, if it did.
    pub stopped: Option<Error>,
    /// The bytes left out of this copy of the frame (zeros here), if any.
    pub elided: Option<Range<usize>>,
    /// What [`parse_frame`](crate::parse_frame), the simulator's own parser, says about the
    /// whole frame; `None` when bytes were elided (it would judge the zeros).
    pub frame_check: Option<Result<(), Error>>,
}

/// Dissect a whole frame (Ethernet header to the last byte, without FCS).
pub fn dissect(bytes: &[u8]) -> Dissection {
    dissect_elided(bytes, None)
}

/// Dissect a frame whose bytes `elided` were left out and refilled with zeros: checks that
/// cover them are [`Verdict::Unchecked`]. An `elided` range past the end is clipped.
pub fn dissect_elided(bytes: &[u8], elided: Option<Range<usize>>) -> Dissection {
    let elided = elided
        .map(|r| r.start.min(bytes.len())..r.end.min(bytes.len()))
        .filter(|r| !r.is_empty());
    let mut d = Walk {
        bytes,
        elided: elided.clone(),
        headers: Vec::new(),
    };
    let stopped = d.frame().err();
    let frame_check = match elided {
        None => Some(crate::parse_frame(bytes).map(drop)),
        Some(_) => None,
    };
    Dissection {
        len: bytes.len(),
        headers: d.headers,
        stopped,
        elided,
        frame_check,
    }
}

/// A copy of a frame with its payload shortened to at most `keep` bytes: the bytes and the
/// range (in the whole frame) that was left out, which [`dissect_elided`] takes once the
/// caller has put that many zeros back. `None` for the range when nothing was left out (the
/// payload is short, or the frame does not parse).
pub fn elide_payload(bytes: &[u8], keep: usize) -> (Vec<u8>, Option<Range<usize>>) {
    let d = dissect(bytes);
    let Some(p) = d.headers.iter().find(|h| h.kind == Kind::Payload) else {
        return (bytes.to_vec(), None);
    };
    if p.len <= keep {
        return (bytes.to_vec(), None);
    }
    let gap = p.start + keep..p.start + p.len;
    let mut out = Vec::with_capacity(bytes.len() - gap.len());
    out.extend_from_slice(&bytes[..gap.start]);
    out.extend_from_slice(&bytes[gap.end..]);
    (out, Some(gap))
}

/// Bit position of a whole-byte field `r` of a header.
fn bytes_at(r: Range<usize>) -> (usize, usize) {
    (r.start * 8, (r.end - r.start) * 8)
}

/// Bit position of the bits `mask` of byte `byte` of a header.
fn bits8(byte: usize, mask: u8) -> (usize, usize) {
    (
        byte * 8 + mask.leading_zeros() as usize,
        mask.count_ones() as usize,
    )
}

/// Bit position of the bits `mask` of the 16-bit word starting at byte `byte`.
fn bits16(byte: usize, mask: u16) -> (usize, usize) {
    (
        byte * 8 + mask.leading_zeros() as usize,
        mask.count_ones() as usize,
    )
}

fn field(name: &'static str, (bit_offset, bit_width): (usize, usize), v: u64) -> FieldView {
    FieldView {
        name,
        bit_offset,
        bit_width,
        value: Value::Uint(v),
        meaning: None,
        spec: "",
    }
}

fn bytes_field(name: &'static str, r: Range<usize>) -> FieldView {
    FieldView {
        value: Value::Bytes,
        ..field(name, bytes_at(r), 0)
    }
}

impl FieldView {
    fn means(self, m: Meaning) -> FieldView {
        FieldView {
            meaning: Some(m),
            ..self
        }
    }

    /// The field with its own section, where the name alone does not say (a TCP option's
    /// kind and length fields belong to the option's RFC).
    fn cites(self, spec: &'static str) -> FieldView {
        FieldView { spec, ..self }
    }
}

struct Walk<'a> {
    bytes: &'a [u8],
    elided: Option<Range<usize>>,
    headers: Vec<Header>,
}

impl Walk<'_> {
    fn push(&mut self, kind: Kind, start: usize, len: usize, fields: Vec<FieldView>) {
        self.push_cited(kind, start, len, fields, kind.spec());
    }

    /// [`Walk::push`] for a header whose citation the frame decides; fields without their own
    /// section get theirs from [`field_spec`].
    fn push_cited(
        &mut self,
        kind: Kind,
        start: usize,
        len: usize,
        mut fields: Vec<FieldView>,
        spec: &'static str,
    ) {
        for f in &mut fields {
            if f.spec.is_empty() {
                f.spec = field_spec(kind, f.name, spec);
            }
        }
        self.headers.push(Header {
            kind,
            start,
            len,
            fields,
            spec,
        });
    }

    /// Whether frame bytes `r` include elided ones.
    fn touches_elided(&self, r: Range<usize>) -> bool {
        self.elided
            .as_ref()
            .is_some_and(|e| e.start < r.end && r.start < e.end)
    }

    fn frame(&mut self) -> crate::Result<()> {
        let bytes = self.bytes;
        let eth = ethernet::Packet::new_checked(bytes)?;
        use ethernet::field as ef;
        let mac = |name, r: Range<usize>, a: EthernetAddress| FieldView {
            value: Value::Mac(a),
            meaning: a.is_multicast().then_some(Meaning::Multicast),
            ..field(name, bytes_at(r), 0)
        };
        let outer = eth.ethertype();
        self.push(
            Kind::Ethernet,
            0,
            ethernet::HEADER_LEN,
            vec![
                mac("Destination", ef::DESTINATION, eth.dst_addr()),
                mac("Source", ef::SOURCE, eth.src_addr()),
                field("EtherType", bytes_at(ef::ETHERTYPE), outer.0.into())
                    .means(Meaning::EtherType(outer)),
            ],
        );
        let mut off = ethernet::HEADER_LEN;
        let mut ethertype = outer;
        if outer == EtherType::VLAN {
            let tag = vlan::Packet::new_checked(&bytes[off..])?;
            use vlan::field as vf;
            let pcp_mask = 0x7u16 << vlan::PCP_SHIFT;
            ethertype = tag.ethertype();
            self.push(
                Kind::Vlan,
                off,
                vlan::HEADER_LEN,
                vec![
                    field(
                        "PCP",
                        bits16(vf::TCI.start, pcp_mask),
                        tag.pcp().get().into(),
                    )
                    .means(Meaning::Priority(tag.pcp())),
                    field(
                        "DEI",
                        bits16(vf::TCI.start, vlan::DEI_BIT),
                        tag.dei().into(),
                    ),
                    field(
                        "VID",
                        bits16(vf::TCI.start, vlan::VID_MAX),
                        tag.vid().into(),
                    ),
                    field("EtherType", bytes_at(vf::ETHERTYPE), ethertype.0.into())
                        .means(Meaning::EtherType(ethertype)),
                ],
            );
            off += vlan::HEADER_LEN;
        }
        let end = match ethertype {
            EtherType::MAC_CONTROL => self.mac_control(off)?,
            EtherType::IPV4 => self.ipv4(off)?,
            EtherType::IPV6 => return Err(Error::Unsupported("IPv6")),
            _ => {
                return Err(Error::Unsupported(
                    "EtherType other than IPv4 and MAC control",
                ));
            }
        };
        if end < bytes.len() {
            let len = bytes.len() - end;
            self.push(
                Kind::EthernetPad,
                end,
                len,
                vec![bytes_field("Pad", 0..len).means(Meaning::Reserved)],
            );
        }
        Ok(())
    }

    /// A PAUSE or PFC body at `off`; returns where its defined fields end.
    fn mac_control(&mut self, off: usize) -> crate::Result<usize> {
        let p = pfc::Packet::new_checked(&self.bytes[off..])?;
        use pfc::field as pf;
        let opcode = p.opcode();
        let mut fields = vec![
            field("Opcode", bytes_at(pf::OPCODE), opcode.into())
                .means(Meaning::MacControlOpcode(opcode)),
        ];
        let quanta = |name, r: Range<usize>, q: u16| {
            field(name, bytes_at(r), q.into()).means(Meaning::Quanta {
                quanta: q,
                bit_times: u64::from(q) * pfc::QUANTUM_BITS,
            })
        };
        let len = match opcode {
            pfc::OPCODE_PAUSE => {
                fields.push(quanta("pause_time", pf::PAUSE_TIME, p.pause_time()));
                pfc::PAUSE_LEN
            }
            pfc::OPCODE_PFC => {
                let v = p.class_enable_vector();
                fields.push(
                    field(
                        "Reserved",
                        bits16(pf::CLASS_ENABLE.start, 0xff00),
                        (v >> 8).into(),
                    )
                    .means(Meaning::Reserved),
                );
                fields.push(
                    field(
                        "class_enable_vector",
                        bits16(pf::CLASS_ENABLE.start, 0x00ff),
                        (v & 0xff).into(),
                    )
                    .means(Meaning::ClassEnable((v & 0xff) as u8)),
                );
                const NAMES: [&str; Priority::COUNT] = [
                    "time[0]", "time[1]", "time[2]", "time[3]", "time[4]", "time[5]", "time[6]",
                    "time[7]",
                ];
                for prio in Priority::all() {
                    let i = prio.index();
                    fields.push(quanta(NAMES[i], pf::class_time(i), p.class_time(prio)));
                }
                pfc::PFC_LEN
            }
            _ => {
                self.push(Kind::MacControl, off, pf::OPCODE.end, fields);
                return Err(Error::Unsupported(
                    "MAC control opcode other than PAUSE and PFC",
                ));
            }
        };
        let spec = if opcode == pfc::OPCODE_PAUSE {
            "IEEE 802.3 Annex 31B"
        } else {
            "IEEE 802.3 Annex 31D; IEEE 802.1Qbb"
        };
        self.push_cited(Kind::MacControl, off, len, fields, spec);
        Ok(off + len)
    }

    /// An IPv4 packet at `off`; returns where it ends (its total length).
    fn ipv4(&mut self, off: usize) -> crate::Result<usize> {
        let bytes = self.bytes;
        let ip = ipv4::Packet::new_checked(&bytes[off..])?;
        use ipv4::field as f;
        let ihl = ip.header_len();
        let total = usize::from(ip.total_len());
        let ck = if ip.verify_checksum() {
            Verdict::Good
        } else {
            let mut copy = [0u8; ipv4::MAX_HEADER_LEN];
            copy[..ihl].copy_from_slice(&bytes[off..off + ihl]);
            let mut view = ipv4::Packet::new_unchecked(&mut copy[..ihl]);
            view.fill_checksum();
            Verdict::Bad {
                computed: view.checksum().into(),
            }
        };
        let protocol = ip.protocol();
        let mut fields = vec![
            field("Version", bits8(f::VER_IHL, 0xf0), ip.version().into()),
            field("IHL", bits8(f::VER_IHL, 0x0f), (ihl / 4) as u64)
                .means(Meaning::Bytes(ihl as u64)),
            field("DSCP", bits8(f::DSCP_ECN, 0xfc), ip.dscp().into()),
            field("ECN", bits8(f::DSCP_ECN, 0x03), ip.ecn().bits().into())
                .means(Meaning::Ecn(ip.ecn())),
            field("Total Length", bytes_at(f::LENGTH), total as u64)
                .means(Meaning::Bytes(total as u64)),
            field("Identification", bytes_at(f::IDENT), ip.ident().into()),
            // The reserved flag has no getter (a sender must send it as zero).
            field(
                "Reserved",
                bits16(f::FLAGS_FRAG.start, 0x8000),
                u64::from(bytes[off + f::FLAGS_FRAG.start] >> 7),
            )
            .means(Meaning::Reserved),
            field(
                "DF",
                bits16(f::FLAGS_FRAG.start, ipv4::FLAG_DF),
                ip.dont_frag().into(),
            ),
            field(
                "MF",
                bits16(f::FLAGS_FRAG.start, ipv4::FLAG_MF),
                ip.more_frags().into(),
            ),
            field(
                "Fragment Offset",
                bits16(f::FLAGS_FRAG.start, ipv4::FRAG_OFFSET_MASK),
                ip.frag_offset().into(),
            ),
            field("TTL", bytes_at(f::TTL..f::TTL + 1), ip.ttl().into()),
            field(
                "Protocol",
                bytes_at(f::PROTOCOL..f::PROTOCOL + 1),
                protocol.0.into(),
            )
            .means(Meaning::Protocol(protocol)),
            field(
                "Header Checksum",
                bytes_at(f::CHECKSUM),
                ip.checksum().into(),
            )
            .means(Meaning::Check(ck)),
            FieldView {
                value: Value::Ipv4(ip.src_addr()),
                ..field("Source Address", bytes_at(f::SRC_ADDR), 0)
            },
            FieldView {
                value: Value::Ipv4(ip.dst_addr()),
                ..field("Destination Address", bytes_at(f::DST_ADDR), 0)
            },
        ];
        if ihl > ipv4::HEADER_LEN {
            fields.push(bytes_field("Options", ipv4::HEADER_LEN..ihl));
        }
        self.push(Kind::Ipv4, off, ihl, fields);
        if ip.more_frags() || ip.frag_offset() != 0 {
            return Err(Error::Unsupported("IPv4 fragment"));
        }
        let l4 = off + ihl..off + total;
        match protocol {
            Protocol::UDP => self.udp(l4, ip.src_addr(), ip.dst_addr())?,
            Protocol::TCP => self.tcp(l4, ip.src_addr(), ip.dst_addr())?,
            _ => return Err(Error::Unsupported("IPv4 protocol other than TCP and UDP")),
        }
        Ok(off + total)
    }

    fn udp(&mut self, l4: Range<usize>, src: Ipv4Address, dst: Ipv4Address) -> crate::Result<()> {
        let bytes = self.bytes;
        let u = udp::Packet::new_checked(&bytes[l4.clone()])?;
        use udp::field as f;
        let ck = if u.checksum() == 0 {
            Verdict::NotComputed
        } else if self.touches_elided(l4.clone()) {
            Verdict::Unchecked
        } else if u.verify_checksum(src, dst) {
            Verdict::Good
        } else {
            Verdict::Bad { computed: 0 }
        };
        let dport = u.dst_port();
        let len = usize::from(u.len());
        let dport_field = field("Destination Port", bytes_at(f::DST_PORT), dport.into());
        self.push(
            Kind::Udp,
            l4.start,
            udp::HEADER_LEN,
            vec![
                field("Source Port", bytes_at(f::SRC_PORT), u.src_port().into()),
                if dport == ROCEV2_UDP_PORT {
                    dport_field.means(Meaning::RoceV2Port)
                } else {
                    dport_field
                },
                field("Length", bytes_at(f::LENGTH), len as u64).means(Meaning::Bytes(len as u64)),
                field("Checksum", bytes_at(f::CHECKSUM), u.checksum().into())
                    .means(Meaning::Check(ck)),
            ],
        );
        if dport != ROCEV2_UDP_PORT {
            return Err(Error::Unsupported("UDP destination port other than 4791"));
        }
        self.roce(l4.start + udp::HEADER_LEN..l4.start + len)
    }
}

#[cfg(test)]
mod tests;
