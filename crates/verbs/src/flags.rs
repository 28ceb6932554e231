//! Bit sets with the values of `libibverbs/verbs.h`: memory access flags
//! (`enum ibv_access_flags`), send flags (`enum ibv_send_flags`), the `ibv_modify_qp` attribute
//! mask (`enum ibv_qp_attr_mask`) and work-completion flags (`enum ibv_wc_flags`).
//!
//! Each is a `Copy` newtype over the C integer, so a value from a C program or a session file
//! maps one to one. Bits print by their verbs names (`LOCAL_WRITE | REMOTE_WRITE`) because the
//! lab shows them to learners; unknown bits print in hex.

use core::fmt;

macro_rules! bitset {
    (
        $(#[$m:meta])*
        $name:ident($ty:ty) {
            $( $(#[$fm:meta])* $flag:ident = $val:expr, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Copy, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
        pub struct $name(pub $ty);

        impl $name {
            $( $(#[$fm])* pub const $flag: $name = $name($val); )*

            /// Every named bit, in the header's order, with its name.
            pub const NAMED: &'static [(&'static str, $name)] = &[ $( (stringify!($flag), $name($val)), )* ];

            /// The empty set.
            pub const fn empty() -> Self {
                $name(0)
            }
            /// The raw bits.
            pub const fn bits(self) -> $ty {
                self.0
            }
            /// The union of every named bit.
            pub const fn all() -> Self {
                $name(0 $( | $val )*)
            }
            /// True if no bit is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
            /// True if every bit of `other` is set in `self`.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
            /// True if `self` and `other` share a bit.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }
            /// `self ∪ other`.
            pub const fn union(self, other: Self) -> Self {
                $name(self.0 | other.0)
            }
            /// `self ∩ other`.
            pub const fn intersection(self, other: Self) -> Self {
                $name(self.0 & other.0)
            }
            /// `self \ other`.
            pub const fn difference(self, other: Self) -> Self {
                $name(self.0 & !other.0)
            }
            /// Bits that have no name in the header.
            pub const fn unknown_bits(self) -> $ty {
                self.0 & !Self::all().0
            }
            /// Each named bit that is set, in the header's order.
            pub fn iter_names(self) -> impl Iterator<Item = &'static str> {
                Self::NAMED.iter().filter(move |(_, f)| self.contains(*f) && !f.is_empty()).map(|(n, _)| *n)
            }
        }

        impl core::ops::BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name {
                self.union(rhs)
            }
        }
        impl core::ops::BitOrAssign for $name {
            fn bitor_assign(&mut self, rhs: $name) {
                *self = self.union(rhs);
            }
        }
        impl core::ops::BitAnd for $name {
            type Output = $name;
            fn bitand(self, rhs: $name) -> $name {
                self.intersection(rhs)
            }
        }
        impl core::ops::Sub for $name {
            type Output = $name;
            fn sub(self, rhs: $name) -> $name {
                self.difference(rhs)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                if self.is_empty() {
                    return f.write_str("0");
                }
                let mut first = true;
                for n in self.iter_names() {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    f.write_str(n)?;
                    first = false;
                }
                let unknown = self.unknown_bits();
                if unknown != 0 {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{:#x}", unknown)?;
                }
                Ok(())
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self)
            }
        }
    };
}

bitset! {
    /// `enum ibv_access_flags` (`verbs.h`; verbs-spec §4). "Local read access is always
    /// enabled" (`ibv_reg_mr.3`), so there is no LOCAL_READ bit.
    AccessFlags(u32) {
        /// Local write: the NIC may write this memory for a receive, a READ response or an
        /// atomic result. Required whenever REMOTE_WRITE or REMOTE_ATOMIC is set.
        LOCAL_WRITE = 1,
        /// A remote peer may RDMA WRITE here.
        REMOTE_WRITE = 1 << 1,
        /// A remote peer may RDMA READ from here.
        REMOTE_READ = 1 << 2,
        /// A remote peer may run atomics here.
        REMOTE_ATOMIC = 1 << 3,
        /// Memory windows may be bound to this MR.
        MW_BIND = 1 << 4,
        /// Addresses are offsets from the MR start.
        ZERO_BASED = 1 << 5,
        /// On-demand paging.
        ON_DEMAND = 1 << 6,
        /// Backed by huge pages.
        HUGETLB = 1 << 7,
        /// Global-visibility flush target.
        FLUSH_GLOBAL = 1 << 8,
        /// Persistence flush target.
        FLUSH_PERSISTENT = 1 << 9,
    }
}

impl AccessFlags {
    /// The three remote-access bits.
    pub const REMOTE: AccessFlags = AccessFlags(
        AccessFlags::REMOTE_WRITE.0 | AccessFlags::REMOTE_READ.0 | AccessFlags::REMOTE_ATOMIC.0,
    );

    /// The access bit a remote operation needs from the QP and the MR.
    pub const fn for_remote(op: units::RemoteOp) -> AccessFlags {
        match op {
            units::RemoteOp::Write => AccessFlags::REMOTE_WRITE,
            units::RemoteOp::Read => AccessFlags::REMOTE_READ,
            units::RemoteOp::Atomic => AccessFlags::REMOTE_ATOMIC,
        }
    }
}

bitset! {
    /// `enum ibv_send_flags` (`verbs.h`; `ibv_post_send.3`).
    SendFlags(u32) {
        /// Wait for every earlier READ and atomic to complete before starting (IBA 10.8.3.3).
        FENCE = 1,
        /// Write a CQE for this WR even when the QP was created without `sq_sig_all`.
        SIGNALED = 1 << 1,
        /// Set the solicited-event bit in the last packet; the receiver's solicited-only
        /// notification fires on it.
        SOLICITED = 1 << 2,
        /// Copy the payload into the WQE at post time; the lkey is not checked and the buffer
        /// may be reused as soon as the post returns.
        INLINE = 1 << 3,
    }
}

bitset! {
    /// `enum ibv_qp_attr_mask` (`verbs.h`): which fields of a `QpAttr` a `modify_qp` call sets.
    QpAttrMask(u32) {
        /// `qp_state`: the target state.
        STATE = 1,
        /// `cur_qp_state`: the state the caller believes the QP is in.
        CUR_STATE = 1 << 1,
        /// `en_sqd_async_notify`.
        EN_SQD_ASYNC_NOTIFY = 1 << 2,
        /// `qp_access_flags`: remote operations the QP accepts.
        ACCESS_FLAGS = 1 << 3,
        /// `pkey_index`.
        PKEY_INDEX = 1 << 4,
        /// `port_num`.
        PORT = 1 << 5,
        /// `qkey` (UD only).
        QKEY = 1 << 6,
        /// `ah_attr`: the primary path (address vector).
        AV = 1 << 7,
        /// `path_mtu`.
        PATH_MTU = 1 << 8,
        /// `timeout`: local ACK timeout exponent.
        TIMEOUT = 1 << 9,
        /// `retry_cnt`.
        RETRY_CNT = 1 << 10,
        /// `rnr_retry`.
        RNR_RETRY = 1 << 11,
        /// `rq_psn`: the first PSN the responder expects.
        RQ_PSN = 1 << 12,
        /// `max_rd_atomic`: outstanding READ/atomic as initiator.
        MAX_QP_RD_ATOMIC = 1 << 13,
        /// `alt_ah_attr` and friends: the alternate path (not on RoCE).
        ALT_PATH = 1 << 14,
        /// `min_rnr_timer`.
        MIN_RNR_TIMER = 1 << 15,
        /// `sq_psn`: the first PSN the requester sends.
        SQ_PSN = 1 << 16,
        /// `max_dest_rd_atomic`: responder resources for READ/atomic.
        MAX_DEST_RD_ATOMIC = 1 << 17,
        /// `path_mig_state`.
        PATH_MIG_STATE = 1 << 18,
        /// `cap`.
        CAP = 1 << 19,
        /// `dest_qp_num`.
        DEST_QPN = 1 << 20,
    }
}

bitset! {
    /// `enum ibv_wc_flags` (`verbs.h`; `ibv_poll_cq.3`).
    WcFlags(u32) {
        /// A 40-byte GRH is present at the start of the receive buffer (UD).
        GRH = 1,
        /// `imm_data` is valid.
        WITH_IMM = 1 << 1,
        /// The IP checksum was verified.
        IP_CSUM_OK = 1 << 2,
        /// The message carried an invalidate.
        WITH_INV = 1 << 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_h_values() {
        assert_eq!(AccessFlags::LOCAL_WRITE.bits(), 1);
        assert_eq!(AccessFlags::REMOTE_ATOMIC.bits(), 8);
        assert_eq!(AccessFlags::FLUSH_PERSISTENT.bits(), 512);
        assert_eq!(QpAttrMask::DEST_QPN.bits(), 1 << 20);
        assert_eq!(QpAttrMask::MAX_DEST_RD_ATOMIC.bits(), 1 << 17);
        assert_eq!(SendFlags::INLINE.bits(), 8);
        assert_eq!(WcFlags::WITH_IMM.bits(), 2);
    }

    #[test]
    fn display_names_bits() {
        let m = QpAttrMask::STATE | QpAttrMask::PKEY_INDEX | QpAttrMask::PORT;
        assert_eq!(m.to_string(), "STATE | PKEY_INDEX | PORT");
        assert_eq!(AccessFlags::empty().to_string(), "0");
        assert_eq!(
            AccessFlags(1 | 1 << 20).to_string(),
            "LOCAL_WRITE | 0x100000"
        );
    }

    #[test]
    fn set_algebra() {
        let a = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ;
        assert!(a.contains(AccessFlags::REMOTE_READ));
        assert!(!a.contains(AccessFlags::REMOTE_WRITE));
        assert_eq!(a - AccessFlags::LOCAL_WRITE, AccessFlags::REMOTE_READ);
        assert!(a.intersects(AccessFlags::REMOTE));
    }
}
