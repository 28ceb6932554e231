//! Which header a dissected header is, with the name and the defining section of each, and
//! the section that defines each of its fields.

/// Which header a [`Header`](super::Header) is.
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
    /// The common header of a management datagram (a UD SEND to QP1).
    Mad,
    /// A connection manager ConnectRequest.
    CmReq,
    /// A connection manager ConnectReply.
    CmRep,
    /// A connection manager ReadyToUse.
    CmRtu,
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
    pub const ALL: [Kind; 26] = [
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
        Kind::Mad,
        Kind::CmReq,
        Kind::CmRep,
        Kind::CmRtu,
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
            Kind::Mad => "mad",
            Kind::CmReq => "cmreq",
            Kind::CmRep => "cmrep",
            Kind::CmRtu => "cmrtu",
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
            Kind::Mad => "MAD",
            Kind::CmReq => "CM REQ",
            Kind::CmRep => "CM REP",
            Kind::CmRtu => "CM RTU",
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
    /// payload's RoCE or TCP) carries its own in [`Header::spec`](super::Header::spec); this is the kind's general one.
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
            Kind::Mad => "IBTA Vol 1 §13.4.2",
            Kind::CmReq => "IBTA Vol 1 §12.6.5",
            Kind::CmRep => "IBTA Vol 1 §12.6.8",
            Kind::CmRtu => "IBTA Vol 1 §12.6.9",
            Kind::Payload => "IBTA Annex A17 §A17.3; RFC 9293 §3.1",
            Kind::Pad => "IBTA Vol 1 §9.2 (PadCnt)",
            Kind::Icrc => "IBTA Vol 1 §7.8.1; IBTA Annex A17 §A17.3.3",
            Kind::EthernetPad => "IEEE 802.3 §3.2.8",
        }
    }
}

/// Where the IRN header and the BTH bit that announces it come from: not IBTA.
pub(super) const IRN_SPEC: &str = "IRN: Mittal et al., SIGCOMM 2018";

/// The section that defines field `name` of a header of kind `kind` whose own citation is
/// `header` (the kind's, or the frame's choice for a MAC control frame or a payload); `""`
/// for a field this table does not know, which the tests refuse: every field the inspector
/// shows says where it is defined.
pub(super) fn field_spec(kind: Kind, name: &str, header: &'static str) -> &'static str {
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
        | (Kind::Mad | Kind::CmReq | Kind::CmRep | Kind::CmRtu, _)
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
