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

/// Which header a [`Header`] is.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Kind {
    /// Ethernet II header (addresses, EtherType).
    Ethernet,
    /// IEEE 802.1Q tag.
    Vlan,
    /// MAC control frame body: IEEE 802.3 PAUSE or IEEE 802.1Qbb PFC.
    MacControl,
    /// IPv4 header.
    Ipv4,
    /// UDP header.
    Udp,
    /// TCP header with its options.
    Tcp,
    /// InfiniBand base transport header.
    Bth,
    /// Reliable datagram extended transport header.
    Rdeth,
    /// Datagram extended transport header.
    Deth,
    /// FLUSH extended transport header.
    Feth,
    /// RDMA extended transport header.
    Reth,
    /// Atomic extended transport header.
    AtomicEth,
    /// ACK extended transport header.
    Aeth,
    /// Atomic acknowledge extended transport header.
    AtomicAckEth,
    /// Immediate data.
    ImmDt,
    /// Invalidate extended transport header.
    Ieth,
    /// rdmalab's IRN extension header (not IBTA).
    Irn,
    /// The 16 reserved bytes of a CNP.
    CnpReserved,
    /// Application payload.
    Payload,
    /// BTH pad bytes (0–3) that align the payload to four bytes.
    Pad,
    /// RoCEv2 invariant CRC.
    Icrc,
    /// Zero bytes that fill a short frame up to the 60-byte Ethernet minimum.
    EthernetPad,
}

impl Kind {
    /// Every kind, in the order headers can appear.
    pub const ALL: [Kind; 22] = [
        Kind::Ethernet,
        Kind::Vlan,
        Kind::MacControl,
        Kind::Ipv4,
        Kind::Udp,
        Kind::Tcp,
        Kind::Bth,
        Kind::Rdeth,
        Kind::Deth,
        Kind::Feth,
        Kind::Reth,
        Kind::AtomicEth,
        Kind::Aeth,
        Kind::AtomicAckEth,
        Kind::ImmDt,
        Kind::Ieth,
        Kind::Irn,
        Kind::CnpReserved,
        Kind::Payload,
        Kind::Pad,
        Kind::Icrc,
        Kind::EthernetPad,
    ];

    /// A stable id (`bth`, `reth`, `ipv4`, ...): what a page keys its words on.
    pub const fn id(self) -> &'static str {
        match self {
            Kind::Ethernet => "eth",
            Kind::Vlan => "vlan",
            Kind::MacControl => "macctl",
            Kind::Ipv4 => "ipv4",
            Kind::Udp => "udp",
            Kind::Tcp => "tcp",
            Kind::Bth => "bth",
            Kind::Rdeth => "rdeth",
            Kind::Deth => "deth",
            Kind::Feth => "feth",
            Kind::Reth => "reth",
            Kind::AtomicEth => "atomiceth",
            Kind::Aeth => "aeth",
            Kind::AtomicAckEth => "atomicacketh",
            Kind::ImmDt => "immdt",
            Kind::Ieth => "ieth",
            Kind::Irn => "irn",
            Kind::CnpReserved => "cnp",
            Kind::Payload => "payload",
            Kind::Pad => "pad",
            Kind::Icrc => "icrc",
            Kind::EthernetPad => "ethpad",
        }
    }

    /// The header's name as its specification writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Ethernet => "Ethernet II",
            Kind::Vlan => "802.1Q",
            Kind::MacControl => "MAC Control",
            Kind::Ipv4 => "IPv4",
            Kind::Udp => "UDP",
            Kind::Tcp => "TCP",
            Kind::Bth => "BTH",
            Kind::Rdeth => "RDETH",
            Kind::Deth => "DETH",
            Kind::Feth => "FETH",
            Kind::Reth => "RETH",
            Kind::AtomicEth => "AtomicETH",
            Kind::Aeth => "AETH",
            Kind::AtomicAckEth => "AtomicAckETH",
            Kind::ImmDt => "ImmDt",
            Kind::Ieth => "IETH",
            Kind::Irn => "IRN",
            Kind::CnpReserved => "CNP",
            Kind::Payload => "Payload",
            Kind::Pad => "Pad",
            Kind::Icrc => "ICRC",
            Kind::EthernetPad => "Ethernet pad",
        }
    }

    /// The document and section that define the header, with no words around them (a page
    /// words them in its language). Each number was checked against a published source, listed
    /// in `docs/inspector-sources.md`:
    ///
    /// - IBTA Vol 1 section numbers are those the spec's own readers quote (§9.2 BTH and §9.3.2
    ///   DETH for Release 1.4, §9.3.3 RETH with its text, §7.8.1 ICRC in Annex A17's CA17-22).
    ///   Where no source gave a number (RDETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), the
    ///   citation names the chapter, "ch. 9" (the transport chapter Annex A17 refers to), and the
    ///   header, rather than guess a subsection.
    /// - Annex A17 (RoCEv2, the 2014 supplement to Release 1.2.1) is cited by its own `A17.x`
    ///   numbers; FLUSH's header comes with Release 1.5's Annex A19 (Memory Placement
    ///   Extensions).
    /// - The IRN header is rdmalab's own, after the IRN paper.
    ///
    /// A header whose document depends on the frame (a MAC control frame's PAUSE or PFC, a
    /// payload's RoCE or TCP) carries its own in [`Header::spec`]; this is the kind's general one.
    pub const fn spec(self) -> &'static str {
        match self {
            Kind::Ethernet => "IEEE 802.3 §3.1.1",
            Kind::Vlan => "IEEE 802.1Q §9.6",
            Kind::MacControl => "IEEE 802.3 Annex 31B, Annex 31D; IEEE 802.1Qbb",
            Kind::Ipv4 => "RFC 791 §3.1; RFC 2474 §3; RFC 3168 §5; IBTA Annex A17 §A17.3.1.1",
            Kind::Udp => "RFC 768; IBTA Annex A17 §A17.3.2",
            Kind::Tcp => "RFC 9293 §3.1; RFC 7323; RFC 2018",
            Kind::Bth => "IBTA Vol 1 §9.2",
            Kind::Rdeth => "IBTA Vol 1 ch. 9 (RDETH)",
            Kind::Deth => "IBTA Vol 1 §9.3.2",
            Kind::Feth => "IBTA Vol 1 Rel 1.5 Annex A19 (FLUSH)",
            Kind::Reth => "IBTA Vol 1 §9.3.3",
            Kind::AtomicEth => "IBTA Vol 1 ch. 9 (AtomicETH)",
            Kind::Aeth => "IBTA Vol 1 ch. 9 (AETH)",
            Kind::AtomicAckEth => "IBTA Vol 1 ch. 9 (AtomicAckETH)",
            Kind::ImmDt => "IBTA Vol 1 ch. 9 (ImmDt)",
            Kind::Ieth => "IBTA Vol 1 ch. 9 (IETH)",
            Kind::Irn => IRN_SPEC,
            Kind::CnpReserved => "IBTA Annex A17 §A17.9.3",
            Kind::Payload => "IBTA Annex A17 §A17.3; RFC 9293 §3.1",
            Kind::Pad => "IBTA Vol 1 §9.2 (PadCnt)",
            Kind::Icrc => "IBTA Vol 1 §7.8.1; IBTA Annex A17 §A17.3.3",
            Kind::EthernetPad => "IEEE 802.3 §3.2.8",
        }
    }
}

/// Where the IRN header and the BTH bit that announces it come from: not IBTA.
const IRN_SPEC: &str = "IRN: Mittal et al., SIGCOMM 2018";

/// The section that defines field `name` of a header of kind `kind` whose own citation is
/// `header` (the kind's, or the frame's choice for a MAC control frame or a payload); `""`
/// for a field this table does not know, which the tests refuse: every field the inspector
/// shows says where it is defined.
fn field_spec(kind: Kind, name: &str, header: &'static str) -> &'static str {
    match (kind, name) {
        (Kind::Ethernet, "Destination" | "Source") => "IEEE 802.3 §3.2.3",
        (Kind::Ethernet, "EtherType") => "IEEE 802.3 §3.2.6",
        (Kind::Vlan, "PCP" | "DEI" | "VID") => "IEEE 802.1Q §9.6",
        (Kind::Vlan, "EtherType") => "IEEE 802.3 §3.2.6",
        (Kind::MacControl, "Opcode") => "IEEE 802.3 Annex 31A",
        (Kind::MacControl, "pause_time") => "IEEE 802.3 Annex 31B",
        (Kind::MacControl, "Reserved" | "class_enable_vector") => "IEEE 802.3 Annex 31D",
        (Kind::MacControl, n) if n.starts_with("time[") => "IEEE 802.3 Annex 31D",
        (
            Kind::Ipv4,
            "Version"
            | "IHL"
            | "Total Length"
            | "Identification"
            | "Reserved"
            | "DF"
            | "MF"
            | "Fragment Offset"
            | "TTL"
            | "Protocol"
            | "Header Checksum"
            | "Source Address"
            | "Destination Address"
            | "Options",
        ) => "RFC 791 §3.1",
        (Kind::Ipv4, "DSCP") => "RFC 2474 §3",
        (Kind::Ipv4, "ECN") => "RFC 3168 §5",
        (Kind::Udp, "Source Port" | "Length") => "RFC 768",
        (Kind::Udp, "Destination Port") => "RFC 768; IBTA Annex A17 §A17.3.2.2",
        (Kind::Udp, "Checksum") => "RFC 768; IBTA Annex A17 §A17.3.2.4",
        (
            Kind::Tcp,
            "Source Port"
            | "Destination Port"
            | "Sequence Number"
            | "Acknowledgment Number"
            | "Data Offset"
            | "Rsrvd"
            | "URG"
            | "ACK"
            | "PSH"
            | "RST"
            | "SYN"
            | "FIN"
            | "Window"
            | "Checksum"
            | "Urgent Pointer",
        ) => "RFC 9293 §3.1",
        (Kind::Tcp, "CWR" | "ECE") => "RFC 3168 §6.1",
        (
            Kind::Bth,
            "OpCode" | "SE" | "M" | "PadCnt" | "TVer" | "P_Key" | "Resv6" | "DestQP" | "A"
            | "Resv7" | "PSN",
        ) => "IBTA Vol 1 §9.2",
        (Kind::Bth, "FECN" | "BECN") => "IBTA Vol 1 Annex A10; IBTA Annex A17 §A17.4.8",
        (Kind::Bth, "IRN") => IRN_SPEC,
        (Kind::Rdeth, "Reserved" | "EECnxt")
        | (Kind::Deth, "Q_Key" | "Reserved" | "SrcQP")
        | (Kind::Feth, "Reserved" | "SEL" | "PLT")
        | (Kind::Reth, "VA" | "R_Key" | "DMA Length")
        | (Kind::AtomicEth, "VA" | "R_Key" | "SwapAddData" | "CmpData")
        | (Kind::Aeth, "Syndrome" | "MSN")
        | (Kind::AtomicAckEth, "OrigRemDt")
        | (Kind::ImmDt, "Immediate Data")
        | (Kind::Ieth, "R_Key")
        | (Kind::CnpReserved, "Reserved")
        | (Kind::Pad, "Pad")
        | (Kind::Icrc, "ICRC")
        | (Kind::EthernetPad, "Pad")
        | (Kind::Payload, "Data") => header,
        (
            Kind::Irn,
            "VA" | "R_Key" | "DMA Length" | "WQE_SN" | "Offset" | "Reserved" | "Trigger PSN"
            | "SACK map",
        ) => IRN_SPEC,
        _ => "",
    }
}

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

    /// The RoCEv2 transport: BTH to ICRC, frame bytes `t`.
    fn roce(&mut self, t: Range<usize>) -> crate::Result<()> {
        let bytes = self.bytes;
        let b = bth::Packet::new_checked(&bytes[t.clone()])?;
        use bth::field as f;
        let raw_op = b.opcode();
        let opcode = Opcode::from_u8(raw_op);
        let op_field = field("OpCode", bytes_at(f::OPCODE..f::OPCODE + 1), raw_op.into());
        let reserved8 = bytes[t.start + f::ACK_REQ] & !(bth::ACK_REQ | irn::MARK);
        let reserved4 = bytes[t.start + f::FECN_BECN] & !(bth::FECN | bth::BECN);
        let pkey = b.pkey();
        let pkey_field = field("P_Key", bytes_at(f::PKEY), pkey.into());
        self.push(
            Kind::Bth,
            t.start,
            bth::HEADER_LEN,
            vec![
                match opcode {
                    Ok(op) => op_field.means(Meaning::Opcode(op)),
                    Err(_) => op_field,
                },
                field("SE", bits8(f::FLAGS, bth::SE), b.solicited_event().into()),
                field("M", bits8(f::FLAGS, bth::MIG_REQ), b.mig_req().into()),
                field(
                    "PadCnt",
                    bits8(f::FLAGS, bth::PAD_MASK),
                    b.pad_count().into(),
                )
                .means(Meaning::Bytes(b.pad_count().into())),
                field(
                    "TVer",
                    bits8(f::FLAGS, bth::TVER_MASK),
                    b.transport_version().into(),
                ),
                if pkey == crate::ib::DEFAULT_PKEY {
                    pkey_field.means(Meaning::DefaultPkey)
                } else {
                    pkey_field
                },
                field("FECN", bits8(f::FECN_BECN, bth::FECN), b.fecn().into()),
                field("BECN", bits8(f::FECN_BECN, bth::BECN), b.becn().into()),
                field(
                    "Resv6",
                    bits8(f::FECN_BECN, !(bth::FECN | bth::BECN)),
                    reserved4.into(),
                )
                .means(Meaning::Reserved),
                field("DestQP", bytes_at(f::DEST_QP), b.dest_qp().into()),
                field("A", bits8(f::ACK_REQ, bth::ACK_REQ), b.ack_req().into()),
                field("IRN", bits8(f::ACK_REQ, irn::MARK), b.irn_mark().into()),
                // IBTA's Resv7 is the seven bits after A; rdmalab's IRN flag takes the first,
                // so the field shown is the six left, under IBTA's name.
                field(
                    "Resv7",
                    bits8(f::ACK_REQ, !(bth::ACK_REQ | irn::MARK)),
                    reserved8.into(),
                )
                .means(Meaning::Reserved),
                field("PSN", bytes_at(f::PSN), b.psn().into()),
            ],
        );
        let opcode = opcode?;
        if b.transport_version() != 0 {
            return Err(Error::Malformed("BTH transport version is not 0"));
        }
        let Some(body_end) = t.end.checked_sub(ICRC_LEN) else {
            return Err(Error::Truncated("ICRC"));
        };
        if body_end < t.start + bth::HEADER_LEN {
            return Err(Error::Truncated("ICRC"));
        }
        let mut off = t.start + bth::HEADER_LEN;
        if opcode.is_cnp() {
            let r = cnp::field::RESERVED;
            if bytes.len() < t.start + r.end {
                return Err(Error::Truncated("CNP"));
            }
            self.push(
                Kind::CnpReserved,
                t.start + r.start,
                r.len(),
                vec![bytes_field("Reserved", 0..r.len()).means(Meaning::Reserved)],
            );
            off = t.start + r.end;
        } else {
            off = self.ext_headers(opcode, b.irn_mark(), off..body_end)?;
            let pad = usize::from(b.pad_count());
            let Some(payload_len) = (body_end - off).checked_sub(pad) else {
                return Err(Error::Malformed("BTH pad count larger than the packet"));
            };
            if payload_len > 0 {
                self.push_cited(
                    Kind::Payload,
                    off,
                    payload_len,
                    vec![bytes_field("Data", 0..payload_len)],
                    "IBTA Annex A17 §A17.3",
                );
            }
            off += payload_len;
            if pad > 0 {
                self.push(
                    Kind::Pad,
                    off,
                    pad,
                    vec![bytes_field("Pad", 0..pad).means(Meaning::Reserved)],
                );
            }
            off += pad;
        }
        if off != body_end {
            return Err(Error::Malformed("bytes between the headers and the ICRC"));
        }
        // The ICRC covers the IPv4 packet: from the IPv4 header (20 bytes, no options: what
        // icrc::compute reads the IHL from) to the pad.
        let ip_start = self
            .headers
            .iter()
            .find(|h| h.kind == Kind::Ipv4)
            .map_or(0, |h| h.start);
        let covered = ip_start..body_end;
        let carried = [
            bytes[body_end],
            bytes[body_end + 1],
            bytes[body_end + 2],
            bytes[body_end + 3],
        ];
        let verdict = if self.touches_elided(covered.clone()) {
            Verdict::Unchecked
        } else {
            let computed = icrc::compute(&bytes[covered])?;
            if computed == carried {
                Verdict::Good
            } else {
                Verdict::Bad {
                    computed: icrc::as_displayed(computed).into(),
                }
            }
        };
        self.push(
            Kind::Icrc,
            body_end,
            ICRC_LEN,
            vec![
                field(
                    "ICRC",
                    bytes_at(0..ICRC_LEN),
                    icrc::as_displayed(carried).into(),
                )
                .means(Meaning::Check(verdict)),
            ],
        );
        Ok(())
    }

    /// The extension headers `opcode` calls for, in frame bytes `r`; returns where they end.
    fn ext_headers(
        &mut self,
        opcode: Opcode,
        irn_mark: bool,
        r: Range<usize>,
    ) -> crate::Result<usize> {
        let bytes = &self.bytes[..r.end];
        let mut off = r.start;
        if opcode.has_rdeth() {
            let p = rdeth::Packet::new_checked(&bytes[off..])?;
            use rdeth::field as f;
            self.push(
                Kind::Rdeth,
                off,
                rdeth::HEADER_LEN,
                vec![
                    field("Reserved", bytes_at(f::RESERVED..f::RESERVED + 1), 0)
                        .means(Meaning::Reserved),
                    field("EECnxt", bytes_at(f::EE_CONTEXT), p.ee_context().into()),
                ],
            );
            off += rdeth::HEADER_LEN;
        }
        if opcode.has_deth() {
            let p = deth::Packet::new_checked(&bytes[off..])?;
            use deth::field as f;
            self.push(
                Kind::Deth,
                off,
                deth::HEADER_LEN,
                vec![
                    field("Q_Key", bytes_at(f::QKEY), p.qkey().into()),
                    field("Reserved", bytes_at(f::RESERVED..f::RESERVED + 1), 0)
                        .means(Meaning::Reserved),
                    field("SrcQP", bytes_at(f::SRC_QP), p.src_qp().into()),
                ],
            );
            off += deth::HEADER_LEN;
        }
        if opcode.has_feth() {
            let p = feth::Packet::new_checked(&bytes[off..])?;
            let word = (feth::PLT_MASK | feth::SEL_MASK).leading_zeros() as usize;
            self.push(
                Kind::Feth,
                off,
                feth::HEADER_LEN,
                vec![
                    field("Reserved", (0, word), 0).means(Meaning::Reserved),
                    field(
                        "SEL",
                        (
                            feth::SEL_MASK.leading_zeros() as usize,
                            feth::SEL_MASK.count_ones() as usize,
                        ),
                        p.selectivity_level().into(),
                    ),
                    field(
                        "PLT",
                        (
                            feth::PLT_MASK.leading_zeros() as usize,
                            feth::PLT_MASK.count_ones() as usize,
                        ),
                        p.placement_type().into(),
                    ),
                ],
            );
            off += feth::HEADER_LEN;
        }
        if opcode.has_reth() {
            off = self.reth(Kind::Reth, off)?;
        }
        if opcode.has_atomic_eth() {
            let p = atomic_eth::Packet::new_checked(&bytes[off..])?;
            use atomic_eth::field as f;
            self.push(
                Kind::AtomicEth,
                off,
                atomic_eth::HEADER_LEN,
                vec![
                    field("VA", bytes_at(f::VA), p.va()),
                    field("R_Key", bytes_at(f::RKEY), p.rkey().into()),
                    field("SwapAddData", bytes_at(f::SWAP_ADD), p.swap_add()),
                    field("CmpData", bytes_at(f::COMPARE), p.compare()),
                ],
            );
            off += atomic_eth::HEADER_LEN;
        }
        if opcode.has_aeth() {
            let p = aeth::Packet::new_checked(&bytes[off..])?;
            use aeth::field as f;
            let syn = p.syndrome();
            let typed = aeth::Syndrome::from_byte(syn);
            let s = field(
                "Syndrome",
                bytes_at(f::SYNDROME..f::SYNDROME + 1),
                syn.into(),
            );
            self.push(
                Kind::Aeth,
                off,
                aeth::HEADER_LEN,
                vec![
                    match typed {
                        Ok(t) => s.means(Meaning::Syndrome(t)),
                        Err(_) => s,
                    },
                    field("MSN", bytes_at(f::MSN), p.msn().into()),
                ],
            );
            typed?;
            off += aeth::HEADER_LEN;
        }
        if opcode.has_atomic_ack_eth() {
            let p = atomic_ack_eth::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::AtomicAckEth,
                off,
                atomic_ack_eth::HEADER_LEN,
                vec![field(
                    "OrigRemDt",
                    bytes_at(atomic_ack_eth::field::ORIG_REMOTE_DATA),
                    p.orig_remote_data(),
                )],
            );
            off += atomic_ack_eth::HEADER_LEN;
        }
        if opcode.has_immdt() {
            let p = immdt::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::ImmDt,
                off,
                immdt::HEADER_LEN,
                vec![field(
                    "Immediate Data",
                    bytes_at(immdt::field::IMM),
                    p.imm().into(),
                )],
            );
            off += immdt::HEADER_LEN;
        }
        if opcode.has_ieth() {
            let p = ieth::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::Ieth,
                off,
                ieth::HEADER_LEN,
                vec![field("R_Key", bytes_at(ieth::field::RKEY), p.rkey().into())],
            );
            off += ieth::HEADER_LEN;
        }
        if irn_mark {
            let repr = irn::Repr::parse(opcode, &bytes[off..])?;
            match repr {
                irn::Repr::Write(_) => {
                    off = self.reth(Kind::Irn, off)?;
                }
                irn::Repr::Send { wqe_sn, offset } => {
                    self.push(
                        Kind::Irn,
                        off,
                        irn::SEND_LEN,
                        vec![
                            field("WQE_SN", bytes_at(0..4), wqe_sn.into()),
                            field("Offset", bytes_at(4..8), offset.into())
                                .means(Meaning::Bytes(offset.into())),
                        ],
                    );
                    off += irn::SEND_LEN;
                }
                irn::Repr::Sack { psn, received } => {
                    self.push(
                        Kind::Irn,
                        off,
                        irn::SACK_LEN,
                        vec![
                            field("Reserved", bytes_at(0..1), 0).means(Meaning::Reserved),
                            field("Trigger PSN", bytes_at(1..4), psn.into()),
                            field("SACK map", bytes_at(4..12), received)
                                .means(Meaning::SackHeld(received.count_ones())),
                        ],
                    );
                    off += irn::SACK_LEN;
                }
            }
        }
        Ok(off)
    }

    /// A RETH (or the IRN extension's per-packet RETH) at frame byte `off`.
    fn reth(&mut self, kind: Kind, off: usize) -> crate::Result<usize> {
        let p = reth::Packet::new_checked(&self.bytes[off..])?;
        use reth::field as f;
        let len = p.dma_len();
        self.push(
            kind,
            off,
            reth::HEADER_LEN,
            vec![
                field("VA", bytes_at(f::VA), p.va()),
                field("R_Key", bytes_at(f::RKEY), p.rkey().into()),
                field("DMA Length", bytes_at(f::DMA_LEN), len.into())
                    .means(Meaning::Bytes(len.into())),
            ],
        );
        Ok(off + reth::HEADER_LEN)
    }

    fn tcp(&mut self, l4: Range<usize>, src: Ipv4Address, dst: Ipv4Address) -> crate::Result<()> {
        let bytes = self.bytes;
        let seg = &bytes[l4.clone()];
        let t = tcp::Packet::new_checked(seg)?;
        use tcp::field as f;
        let hl = t.header_len();
        let ck = if self.touches_elided(l4.clone()) {
            Verdict::Unchecked
        } else if t.verify_checksum(src, dst) {
            Verdict::Good
        } else {
            Verdict::Bad { computed: 0 }
        };
        let flags = t.flags();
        let flag = |name, bit: tcp::Flags| {
            field(
                name,
                bits8(f::FLAGS, bit.bits()),
                flags.contains(bit).into(),
            )
        };
        let mut fields = vec![
            field("Source Port", bytes_at(f::SRC_PORT), t.src_port().into()),
            field(
                "Destination Port",
                bytes_at(f::DST_PORT),
                t.dst_port().into(),
            ),
            field("Sequence Number", bytes_at(f::SEQ), t.seq().into()),
            field("Acknowledgment Number", bytes_at(f::ACK), t.ack().into()),
            field("Data Offset", bits8(f::DATA_OFFSET, 0xf0), (hl / 4) as u64)
                .means(Meaning::Bytes(hl as u64)),
            field(
                "Rsrvd",
                bits8(f::DATA_OFFSET, 0x0f),
                (seg[f::DATA_OFFSET] & 0x0f).into(),
            )
            .means(Meaning::Reserved),
            flag("CWR", tcp::Flags::CWR).means(Meaning::TcpFlags(flags)),
            flag("ECE", tcp::Flags::ECE),
            flag("URG", tcp::Flags::URG),
            flag("ACK", tcp::Flags::ACK),
            flag("PSH", tcp::Flags::PSH),
            flag("RST", tcp::Flags::RST),
            flag("SYN", tcp::Flags::SYN),
            flag("FIN", tcp::Flags::FIN),
            field("Window", bytes_at(f::WINDOW), t.window().into()),
            field("Checksum", bytes_at(f::CHECKSUM), t.checksum().into()).means(Meaning::Check(ck)),
            field("Urgent Pointer", bytes_at(f::URGENT), t.urgent().into()),
        ];
        // The options, each as its kind, length and data fields.
        let mut rest = t.options();
        let mut at = tcp::HEADER_LEN;
        let mut bad = None;
        while !rest.is_empty() {
            let kind = rest[0];
            let (after, opt) = match tcp::TcpOption::parse(rest) {
                Ok(x) => x,
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            };
            let len = match opt {
                // End of list: the rest is padding.
                tcp::TcpOption::EndOfList => rest.len(),
                _ => opt.buffer_len(),
            };
            // Each option's fields are defined where the option is (RFC 9293 §3.2 keeps EOL,
            // NOP and MSS; an unknown kind has only §3.1's kind-length-data shape).
            let cite = match opt {
                tcp::TcpOption::EndOfList
                | tcp::TcpOption::NoOperation
                | tcp::TcpOption::MaxSegmentSize(_) => "RFC 9293 §3.2",
                tcp::TcpOption::WindowScale(_) => "RFC 7323 §2",
                tcp::TcpOption::Timestamp(_) => "RFC 7323 §3",
                tcp::TcpOption::SackPermitted => "RFC 2018 §2",
                tcp::TcpOption::SackRange(_) => "RFC 2018 §3",
                tcp::TcpOption::Unknown { .. } => "RFC 9293 §3.1",
            };
            let mut push = |f: FieldView| fields.push(f.cites(cite));
            push(field("Kind", bytes_at(at..at + 1), kind.into()).means(Meaning::TcpOption(kind)));
            let data = at + 2..at + len;
            match opt {
                tcp::TcpOption::EndOfList | tcp::TcpOption::NoOperation => {
                    if len > 1 {
                        push(bytes_field("Padding", at + 1..at + len).means(Meaning::Reserved));
                    }
                }
                _ => {
                    push(field("Length", bytes_at(at + 1..at + 2), len as u64));
                    match opt {
                        tcp::TcpOption::MaxSegmentSize(m) => push(
                            field("MSS", bytes_at(data), m.into()).means(Meaning::Bytes(m.into())),
                        ),
                        tcp::TcpOption::WindowScale(s) => {
                            push(field("Shift", bytes_at(data), s.into()))
                        }
                        tcp::TcpOption::Timestamp(ts) => {
                            push(field("TSval", bytes_at(at + 2..at + 6), ts.tsval.into()));
                            push(field("TSecr", bytes_at(at + 6..at + 10), ts.tsecr.into()));
                        }
                        tcp::TcpOption::SackRange(blocks) => {
                            let mut b = at + 2;
                            for (left, right) in blocks.iter().flatten() {
                                push(field("Left Edge", bytes_at(b..b + 4), (*left).into()));
                                push(field("Right Edge", bytes_at(b + 4..b + 8), (*right).into()));
                                b += 8;
                            }
                        }
                        tcp::TcpOption::SackPermitted => {}
                        _ => {
                            if !data.is_empty() {
                                push(bytes_field("Data", data));
                            }
                        }
                    }
                }
            }
            at += len;
            rest = after;
        }
        self.push(Kind::Tcp, l4.start, hl, fields);
        if let Some(e) = bad {
            return Err(e);
        }
        let payload = l4.start + hl..l4.end;
        if !payload.is_empty() {
            self.push_cited(
                Kind::Payload,
                payload.start,
                payload.len(),
                vec![bytes_field("Data", 0..payload.len())],
                "RFC 9293 §3.1",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ib::{DEFAULT_PKEY, Operation};
    use crate::{ExtHeaders, Frame, Ip, Link, PfcFrame, RoceFrame, TcpFrame, strategies};
    use proptest::prelude::*;

    const MAC_A: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);
    const MAC_B: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x02]);
    const IP_A: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
    const IP_B: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

    fn write_only(payload_len: u16) -> RoceFrame {
        let mut link = Link::new(MAC_A, MAC_B);
        link.vlan = Some(vlan::Tag {
            pcp: Priority::of(3),
            dei: false,
            vid: 0,
        });
        let bth = bth::Repr {
            opcode: Opcode::rc(Operation::RdmaWriteOnly),
            solicited: false,
            mig_req: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: true,
            psn: 101,
        };
        let ext = ExtHeaders {
            reth: Some(reth::Repr {
                va: 0x7f00_0000_1000,
                rkey: 0x1234,
                dma_len: payload_len.into(),
            }),
            ..ExtHeaders::NONE
        };
        RoceFrame::new(link, Ip::new(IP_A, IP_B), 0xc001, bth, ext, payload_len)
    }

    fn find<'a>(d: &'a Dissection, kind: Kind, name: &str) -> &'a FieldView {
        d.headers
            .iter()
            .filter(|h| h.kind == kind)
            .flat_map(|h| &h.fields)
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no {name} in {kind:?}"))
    }

    /// The bits `[at, at + width)` of `bytes`, most significant first, as a number.
    fn bits(bytes: &[u8], at: usize, width: usize) -> u64 {
        (at..at + width).fold(0u64, |v, i| {
            v << 1 | u64::from(bytes[i / 8] >> (7 - i % 8) & 1)
        })
    }

    /// Every numeric field's value is the bits at its position, and the fields of each header
    /// tile it from its first bit to its last, in order, with no gap or overlap: the layout
    /// the inspector draws is the layout the getters read.
    fn check_layout(bytes: &[u8], d: &Dissection) {
        for h in &d.headers {
            let mut next = 0;
            for f in &h.fields {
                assert_eq!(
                    f.bit_offset, next,
                    "{:?} {} starts where the last ended",
                    h.kind, f.name
                );
                next = f.bit_offset + f.bit_width;
                if let Value::Uint(v) = f.value
                    && f.bit_width <= 64
                {
                    let got = bits(bytes, h.start * 8 + f.bit_offset, f.bit_width);
                    assert_eq!(
                        got, v,
                        "{:?} {} value is the bits at its place",
                        h.kind, f.name
                    );
                }
            }
            assert_eq!(next, h.len * 8, "{:?} fields cover the header", h.kind);
        }
        // The headers cover the frame, in order.
        let mut at = 0;
        for h in &d.headers {
            assert_eq!(h.start, at, "{:?} follows the header before", h.kind);
            at = h.start + h.len;
        }
        if d.stopped.is_none() {
            assert_eq!(at, bytes.len(), "the headers cover the frame");
        }
    }

    #[test]
    fn write_only_field_by_field() {
        let bytes = write_only(32).to_bytes(&[b'W'; 32]).unwrap();
        let d = dissect(&bytes);
        let kinds: Vec<Kind> = d.headers.iter().map(|h| h.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Ethernet,
                Kind::Vlan,
                Kind::Ipv4,
                Kind::Udp,
                Kind::Bth,
                Kind::Reth,
                Kind::Payload,
                Kind::Icrc
            ]
        );
        assert_eq!(d.stopped, None);
        assert_eq!(d.frame_check, Some(Ok(())));
        let op = find(&d, Kind::Bth, "OpCode");
        assert_eq!(op.value, Value::Uint(0x0a));
        assert_eq!(
            op.meaning,
            Some(Meaning::Opcode(Opcode::rc(Operation::RdmaWriteOnly)))
        );
        assert_eq!((op.bit_offset, op.bit_width), (0, 8));
        let qp = find(&d, Kind::Bth, "DestQP");
        assert_eq!(
            (qp.bit_offset, qp.bit_width, qp.value),
            (40, 24, Value::Uint(0x11))
        );
        let psn = find(&d, Kind::Bth, "PSN");
        assert_eq!(
            (psn.bit_offset, psn.bit_width, psn.value),
            (72, 24, Value::Uint(101))
        );
        let a = find(&d, Kind::Bth, "A");
        assert_eq!(
            (a.bit_offset, a.bit_width, a.value),
            (64, 1, Value::Uint(1))
        );
        assert_eq!(find(&d, Kind::Reth, "R_Key").value, Value::Uint(0x1234));
        assert_eq!(find(&d, Kind::Vlan, "PCP").value, Value::Uint(3));
        assert_eq!(
            find(&d, Kind::Udp, "Destination Port").meaning,
            Some(Meaning::RoceV2Port)
        );
        assert_eq!(
            find(&d, Kind::Icrc, "ICRC").meaning,
            Some(Meaning::Check(Verdict::Good))
        );
        assert_eq!(
            find(&d, Kind::Ipv4, "Header Checksum").meaning,
            Some(Meaning::Check(Verdict::Good))
        );
        check_layout(&bytes, &d);
    }

    #[test]
    fn a_bad_icrc_is_shown_not_refused() {
        let mut bytes = write_only(32).to_bytes(&[b'W'; 32]).unwrap();
        let last = bytes.len() - 5;
        bytes[last] ^= 0xff; // a payload byte
        let d = dissect(&bytes);
        assert_eq!(d.stopped, None, "the dissection goes on to the ICRC");
        assert!(matches!(
            find(&d, Kind::Icrc, "ICRC").meaning,
            Some(Meaning::Check(Verdict::Bad { .. }))
        ));
        assert!(matches!(d.frame_check, Some(Err(Error::Icrc { .. }))));
    }

    #[test]
    fn a_truncated_frame_stops_at_the_header_it_cuts() {
        let bytes = write_only(32).to_bytes(&[]).unwrap();
        // Five bytes into the BTH: the IPv4 header announces more than there is.
        let cut = 18 + 20 + 8 + 5;
        let d = dissect(&bytes[..cut]);
        assert_eq!(d.headers.last().map(|h| h.kind), Some(Kind::Vlan));
        assert!(
            matches!(d.stopped, Some(Error::Truncated(_))),
            "{:?}",
            d.stopped
        );
        let d = dissect(&[0u8; 3]);
        assert!(d.headers.is_empty());
        assert!(matches!(d.stopped, Some(Error::Truncated(_))));
    }

    #[test]
    fn an_elided_payload_keeps_the_layout_and_leaves_the_icrc_unchecked() {
        let payload: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let bytes = write_only(1000).to_bytes(&payload).unwrap();
        let (short, gap) = elide_payload(&bytes, 32);
        let gap = gap.expect("a 1000-byte payload is elided");
        assert_eq!(short.len(), bytes.len() - 968);
        assert_eq!(gap.len(), 968);
        // Put the zeros back, as a reader of the short copy does.
        let mut whole = short[..gap.start].to_vec();
        whole.resize(gap.end, 0);
        whole.extend_from_slice(&short[gap.start..]);
        let d = dissect_elided(&whole, Some(gap.clone()));
        assert_eq!(d.frame_check, None);
        assert_eq!(d.elided, Some(gap));
        let p = d.headers.iter().find(|h| h.kind == Kind::Payload).unwrap();
        assert_eq!(p.len, 1000);
        assert_eq!(&whole[p.start..p.start + 32], &payload[..32]);
        assert_eq!(
            find(&d, Kind::Icrc, "ICRC").meaning,
            Some(Meaning::Check(Verdict::Unchecked))
        );
        // A short payload is sent whole.
        let small = write_only(16).to_bytes(&[]).unwrap();
        assert_eq!(elide_payload(&small, 32), (small.clone(), None));
    }

    #[test]
    fn pfc_quanta_and_priorities() {
        let f = PfcFrame::new(MAC_A, pfc::Repr::pfc([Priority::of(3)], 0xffff));
        let bytes = f.to_bytes().unwrap();
        let d = dissect(&bytes);
        assert_eq!(d.stopped, None);
        assert_eq!(
            find(&d, Kind::Ethernet, "EtherType").meaning,
            Some(Meaning::EtherType(EtherType::MAC_CONTROL))
        );
        assert_eq!(
            find(&d, Kind::MacControl, "class_enable_vector").meaning,
            Some(Meaning::ClassEnable(0b1000))
        );
        assert_eq!(
            find(&d, Kind::MacControl, "time[3]").meaning,
            Some(Meaning::Quanta {
                quanta: 0xffff,
                bit_times: 0xffff * 512
            })
        );
        assert_eq!(d.headers.last().map(|h| h.kind), Some(Kind::EthernetPad));
        check_layout(&bytes, &d);
    }

    #[test]
    fn tcp_options_field_by_field() {
        let mut repr = tcp::Repr {
            src_port: 40000,
            dst_port: 5001,
            seq: 1000,
            ack: 2000,
            flags: tcp::Flags::ACK,
            window: 512,
            urgent: 0,
            mss: None,
            window_scale: None,
            sack_permitted: false,
            sack_ranges: [None; tcp::MAX_SACK_BLOCKS],
            timestamp: Some(tcp::Timestamp { tsval: 7, tsecr: 9 }),
            payload_len: 100,
        };
        repr.sack_ranges[0] = Some((3000, 4000));
        let f = TcpFrame {
            link: Link::new(MAC_A, MAC_B),
            ip: Ip::new(IP_A, IP_B),
            tcp: repr,
        };
        let bytes = f.to_bytes(&[1; 100]).unwrap();
        let d = dissect(&bytes);
        assert_eq!(d.stopped, None);
        assert_eq!(find(&d, Kind::Tcp, "ACK").value, Value::Uint(1));
        assert_eq!(find(&d, Kind::Tcp, "SYN").value, Value::Uint(0));
        assert_eq!(find(&d, Kind::Tcp, "TSval").value, Value::Uint(7));
        assert_eq!(find(&d, Kind::Tcp, "Left Edge").value, Value::Uint(3000));
        // Each option's fields cite the option's RFC, the ECN flags RFC 3168.
        assert_eq!(find(&d, Kind::Tcp, "TSval").spec, "RFC 7323 §3");
        assert_eq!(find(&d, Kind::Tcp, "Left Edge").spec, "RFC 2018 §3");
        assert_eq!(find(&d, Kind::Tcp, "ECE").spec, "RFC 3168 §6.1");
        assert_eq!(find(&d, Kind::Tcp, "Window").spec, "RFC 9293 §3.1");
        let payload = d.headers.iter().find(|h| h.kind == Kind::Payload).unwrap();
        assert_eq!(payload.spec, "RFC 9293 §3.1", "a TCP payload is not IBTA's");
        assert_eq!(
            find(&d, Kind::Tcp, "Checksum").meaning,
            Some(Meaning::Check(Verdict::Good))
        );
        check_layout(&bytes, &d);
    }

    #[test]
    fn every_kind_has_an_id_a_name_and_a_section() {
        let mut ids: Vec<&str> = Kind::ALL.iter().map(|k| k.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Kind::ALL.len(), "ids are distinct");
        assert!(
            Kind::ALL
                .iter()
                .all(|k| !k.name().is_empty() && !k.spec().is_empty())
        );
    }

    /// Every field of every header the inspector can show names the section that defines it:
    /// thousands of frames of every kind the crate emits (every opcode with its extension
    /// headers, the IRN forms, CNPs, PAUSE and PFC, TCP with options), and the known header
    /// kinds all among them. A field added without a citation fails here.
    #[test]
    fn every_field_has_a_section() {
        use proptest::strategy::{Strategy, ValueTree};
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let mut seen = std::collections::BTreeSet::new();
        let mut fields = 0;
        for _ in 0..3000 {
            let frame = strategies::frame().new_tree(&mut runner).unwrap().current();
            let bytes = frame.to_bytes(&[0x5a; 40]).unwrap();
            let d = dissect(&bytes);
            for h in &d.headers {
                seen.insert(h.kind.id());
                assert!(!h.spec.is_empty(), "{:?} has no section", h.kind);
                for f in &h.fields {
                    fields += 1;
                    assert!(
                        !f.spec.is_empty(),
                        "{:?} {} has no section (add it to field_spec)",
                        h.kind,
                        f.name
                    );
                }
            }
        }
        assert!(fields > 30_000, "{fields} fields looked at");
        // Only a pad the payload never needs, or a kind that a random frame does not reach,
        // may be missing; the headers themselves must all have been seen.
        for k in Kind::ALL {
            if !matches!(k, Kind::Pad | Kind::EthernetPad | Kind::Payload) {
                assert!(seen.contains(k.id()), "no {:?} among the frames", k);
            }
        }
        // The PAUSE and PFC bodies cite their own annexes, not each other's.
        let pfc = PfcFrame::new(MAC_A, pfc::Repr::pfc([Priority::of(3)], 7))
            .to_bytes()
            .unwrap();
        let pause = PfcFrame::new(MAC_A, pfc::Repr::Pause { quanta: 7 })
            .to_bytes()
            .unwrap();
        let body = |b: &[u8]| {
            dissect(b)
                .headers
                .into_iter()
                .find(|h| h.kind == Kind::MacControl)
                .unwrap()
                .spec
        };
        assert_eq!(body(&pause), "IEEE 802.3 Annex 31B");
        assert_eq!(body(&pfc), "IEEE 802.3 Annex 31D; IEEE 802.1Qbb");
    }

    proptest! {
        /// Whatever frame the crate emits, its dissection covers it, agrees with the getters
        /// and with parse_frame, and finds the opcode the frame was built with.
        #[test]
        fn any_emitted_frame_dissects(frame in strategies::frame(), payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let bytes = frame.to_bytes(&payload).unwrap();
            let d = dissect(&bytes);
            prop_assert_eq!(d.stopped, None);
            prop_assert_eq!(d.frame_check, Some(Ok(())));
            check_layout(&bytes, &d);
            if let Frame::Roce(r) = frame {
                prop_assert_eq!(
                    find(&d, Kind::Bth, "OpCode").meaning,
                    Some(Meaning::Opcode(r.bth.opcode))
                );
            }
        }

        /// Arbitrary bytes never panic the dissector.
        #[test]
        fn arbitrary_bytes_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = dissect(&bytes);
        }
    }
}
