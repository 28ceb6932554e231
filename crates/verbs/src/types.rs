//! Handles and small enums of the verbs API, with the numeric values of `libibverbs/verbs.h`:
//! `enum ibv_qp_state` (verbs-spec §1), `enum ibv_qp_type`, `enum ibv_mtu` (verbs-spec §6 MTU),
//! and the address vector `struct ibv_ah_attr` / `struct ibv_global_route`.
//!
//! Handles are `Copy` newtypes that index the arenas of a [`Context`](crate::Context); nothing
//! holds a reference to a verbs object (house rule 7).

use core::fmt;

macro_rules! handle {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
        pub struct $name(pub u32);
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

handle!(
    /// A protection domain (`struct ibv_pd`).
    PdHandle, "pd"
);
handle!(
    /// A completion queue (`struct ibv_cq`).
    CqHandle, "cq"
);
handle!(
    /// A completion channel (`struct ibv_comp_channel`).
    ChannelHandle, "chan"
);

/// A memory region, named by its lkey.
///
/// The key carries a variant byte (rxe layout: `index << 8 | variant`), so a handle kept after
/// `dereg_mr` never names the MR that later reuses the slot.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct MrHandle(pub u32);

impl fmt::Display for MrHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mr{:#x}", self.0)
    }
}

/// A queue pair number: 24 bits, as in the BTH DestQP field.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct QpNum(u32);

impl QpNum {
    /// The largest QPN (2^24 − 1).
    pub const MAX: u32 = 0x00FF_FFFF;

    /// A QPN from its 24-bit value; `None` if `n` needs more than 24 bits.
    pub const fn new(n: u32) -> Option<QpNum> {
        if n <= Self::MAX { Some(QpNum(n)) } else { None }
    }
    /// The low 24 bits of `n` as a QPN.
    pub const fn masked(n: u32) -> QpNum {
        QpNum(n & Self::MAX)
    }
    /// The 24-bit value.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for QpNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "qp{:#x}", self.0)
    }
}

/// `enum ibv_qp_state`, in the order and with the values of `verbs.h` (verbs-spec §1).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum QpState {
    /// Created; holds no attributes; posts are refused by IBTA/rxe.
    #[default]
    Reset = 0,
    /// Initialized: receive WRs may be posted; incoming requests are still dropped.
    Init = 1,
    /// Ready to receive: the responder is live.
    Rtr = 2,
    /// Ready to send: the requester runs.
    Rts = 3,
    /// Send queue drained: no new send WQE starts.
    Sqd = 4,
    /// Send queue error (UC/UD only; entered by the NIC, never by `modify_qp`).
    Sqe = 5,
    /// Error: every WQE completes with `WR_FLUSH_ERR`.
    Err = 6,
}

impl QpState {
    /// All states in order.
    pub const ALL: [QpState; 7] = [
        QpState::Reset,
        QpState::Init,
        QpState::Rtr,
        QpState::Rts,
        QpState::Sqd,
        QpState::Sqe,
        QpState::Err,
    ];

    /// The verbs.h value.
    pub const fn value(self) -> u8 {
        self as u8
    }
    /// The state with verbs.h value `v`.
    pub const fn from_value(v: u8) -> Option<QpState> {
        match v {
            0 => Some(QpState::Reset),
            1 => Some(QpState::Init),
            2 => Some(QpState::Rtr),
            3 => Some(QpState::Rts),
            4 => Some(QpState::Sqd),
            5 => Some(QpState::Sqe),
            6 => Some(QpState::Err),
            _ => None,
        }
    }
    /// The spelling the verbs spec and `ibv_qp_state_str` use ("RTS").
    pub const fn name(self) -> &'static str {
        match self {
            QpState::Reset => "RESET",
            QpState::Init => "INIT",
            QpState::Rtr => "RTR",
            QpState::Rts => "RTS",
            QpState::Sqd => "SQD",
            QpState::Sqe => "SQE",
            QpState::Err => "ERR",
        }
    }
}

impl fmt::Display for QpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `enum ibv_qp_type` for the three transports rdmalab models.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum QpType {
    /// Reliable connected.
    Rc = 2,
    /// Unreliable connected.
    Uc = 3,
    /// Unreliable datagram.
    Ud = 4,
}

impl QpType {
    /// The three types, in verbs.h order.
    pub const ALL: [QpType; 3] = [QpType::Rc, QpType::Uc, QpType::Ud];

    /// "RC", "UC" or "UD".
    pub const fn name(self) -> &'static str {
        match self {
            QpType::Rc => "RC",
            QpType::Uc => "UC",
            QpType::Ud => "UD",
        }
    }
}

impl fmt::Display for QpType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `enum ibv_mtu`: the path MTU, IBV_MTU_256 = 1 … IBV_MTU_4096 = 5.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum Mtu {
    /// 256 bytes.
    Mtu256 = 1,
    /// 512 bytes.
    Mtu512 = 2,
    /// 1024 bytes (rxe over a 1500-byte Ethernet MTU; pyverbs' default).
    #[default]
    Mtu1024 = 3,
    /// 2048 bytes.
    Mtu2048 = 4,
    /// 4096 bytes (ConnectX port max).
    Mtu4096 = 5,
}

impl Mtu {
    /// All MTUs, smallest first.
    pub const ALL: [Mtu; 5] = [
        Mtu::Mtu256,
        Mtu::Mtu512,
        Mtu::Mtu1024,
        Mtu::Mtu2048,
        Mtu::Mtu4096,
    ];

    /// The payload bytes per packet.
    pub const fn bytes(self) -> u32 {
        256 << (self as u32 - 1)
    }
    /// The enum value of verbs.h.
    pub const fn value(self) -> u8 {
        self as u8
    }
    /// The MTU whose verbs.h value is `v`.
    pub const fn from_value(v: u8) -> Option<Mtu> {
        match v {
            1 => Some(Mtu::Mtu256),
            2 => Some(Mtu::Mtu512),
            3 => Some(Mtu::Mtu1024),
            4 => Some(Mtu::Mtu2048),
            5 => Some(Mtu::Mtu4096),
            _ => None,
        }
    }
}

impl fmt::Display for Mtu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bytes())
    }
}

/// A 128-bit GID (for RoCEv2, an IPv6 address or an IPv4-mapped one).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Gid(pub [u8; 16]);

impl Gid {
    /// The IPv4-mapped GID `::ffff:a.b.c.d` that RoCEv2 uses for an IPv4 address.
    pub const fn from_ipv4(a: [u8; 4]) -> Gid {
        Gid([
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a[0], a[1], a[2], a[3],
        ])
    }
}

impl Gid {
    /// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`), `None` for any other (an
    /// IPv6 address): how the kernel's `rdma_gid2ip` decides a GID's address family.
    pub fn ipv4(&self) -> Option<[u8; 4]> {
        let g = &self.0;
        (g[..10].iter().all(|&b| b == 0) && g[10] == 0xff && g[11] == 0xff)
            .then(|| [g[12], g[13], g[14], g[15]])
    }

    /// The IPv6 link-local GID `fe80::` + the modified EUI-64 of `mac` (RFC 4291 appendix A),
    /// the entry a RoCE port lists first.
    pub const fn link_local(mac: [u8; 6]) -> Gid {
        Gid([
            0xfe,
            0x80,
            0,
            0,
            0,
            0,
            0,
            0,
            mac[0] ^ 0x02,
            mac[1],
            mac[2],
            0xff,
            0xfe,
            mac[3],
            mac[4],
            mac[5],
        ])
    }
}

/// `enum ibv_gid_type`: which RoCE version a GID table entry sends. The entry chosen by an
/// address vector's `sgid_index` decides the encapsulation (IBTA Annex A16 and A17;
/// `ibv_query_gid_ex(3)`).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum GidType {
    /// `IBV_GID_TYPE_ROCE_V1`: the GRH straight after the Ethernet header, EtherType 0x8915;
    /// not IP, so it crosses no router.
    RoceV1,
    /// `IBV_GID_TYPE_ROCE_V2`: IP and UDP (destination port 4791); routable.
    RoceV2,
}

/// `struct ibv_gid_entry`: one entry of a port's GID table.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct GidEntry {
    /// The GID.
    pub gid: Gid,
    /// Its RoCE version.
    pub gid_type: GidType,
}

impl GidEntry {
    /// The table Linux builds for a RoCE port with one IPv4 address (and its link-local IPv6
    /// one): each address once per GID type, link-local first, so index 3 is the RoCE v2
    /// IPv4-mapped entry an IPv4 fabric needs.
    /// source: Linux drivers/infiniband/core/roce_gid_mgmt.c (an entry per address and
    /// supported GID type, the default link-local GID first); m4c27's GID table.
    pub fn linux_table(mac: [u8; 6], ipv4: [u8; 4]) -> Vec<GidEntry> {
        let (ll, v4) = (Gid::link_local(mac), Gid::from_ipv4(ipv4));
        [
            (ll, GidType::RoceV1),
            (ll, GidType::RoceV2),
            (v4, GidType::RoceV1),
            (v4, GidType::RoceV2),
        ]
        .map(|(gid, gid_type)| GidEntry { gid, gid_type })
        .to_vec()
    }
}

impl fmt::Display for Gid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, pair) in self.0.chunks(2).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{:02x}{:02x}", pair[0], pair[1])?;
        }
        Ok(())
    }
}

/// `struct ibv_global_route`: the GRH fields of an address vector.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct GlobalRoute {
    /// Destination GID.
    pub dgid: Gid,
    /// IPv6 flow label (20 bits).
    pub flow_label: u32,
    /// Index of the local GID to send from.
    pub sgid_index: u8,
    /// TTL / hop limit.
    pub hop_limit: u8,
    /// Traffic class (DSCP and ECN for RoCEv2).
    pub traffic_class: u8,
}

/// `struct ibv_ah_attr`: an address vector. On RoCE it must be global (`is_global` with a GRH):
/// "RoCE needs a global AV" (verbs-spec §1, `ibv_modify_qp.3:177-179`).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct AhAttr {
    /// The GRH fields, meaningful when `is_global`.
    pub grh: GlobalRoute,
    /// Destination LID (unused on RoCE).
    pub dlid: u16,
    /// Service level (priority).
    pub sl: u8,
    /// True if the GRH fields are valid.
    pub is_global: bool,
    /// Local port, from 1.
    pub port_num: u8,
}

impl AhAttr {
    /// A global address vector to `dgid` on port 1, the shape RoCE requires.
    pub fn roce(dgid: Gid) -> AhAttr {
        AhAttr {
            grh: GlobalRoute {
                dgid,
                hop_limit: 64,
                ..GlobalRoute::default()
            },
            is_global: true,
            port_num: 1,
            ..AhAttr::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_h_values_and_names() {
        assert_eq!(QpState::Reset.value(), 0);
        assert_eq!(QpState::Err.value(), 6);
        assert_eq!(QpState::Sqe.to_string(), "SQE");
        assert_eq!(QpState::from_value(3), Some(QpState::Rts));
        assert_eq!(QpState::from_value(7), None);
        assert_eq!(QpType::Ud as u8, 4);
        assert_eq!(Mtu::Mtu256.value(), 1);
        assert_eq!(Mtu::Mtu4096.bytes(), 4096);
        assert_eq!(Mtu::Mtu1024.bytes(), 1024);
    }

    #[test]
    fn qpn_is_24_bits() {
        assert!(QpNum::new(0xFF_FFFF).is_some());
        assert!(QpNum::new(0x100_0000).is_none());
    }

    #[test]
    fn gid_prints_as_ipv6() {
        let g = Gid::from_ipv4([10, 0, 0, 1]);
        assert_eq!(g.to_string(), "0000:0000:0000:0000:0000:ffff:0a00:0001");
    }
}
