//! Errors of the verbs calls. Each has the errno a real verb returns ([`VerbsError::errno`],
//! [`PostError::errno`]) and a `Display` text that names the rule broken, because the lab
//! shows these to learners (DESIGN.md §3.7: "post_send → EINVAL: QP is in RTR, must be RTS").
//! [`VerbsError::explain`] and [`PostError::explain`] prefix the errno.

use core::fmt;

use crate::errno::Errno;
use crate::memory::MemoryError;
use crate::modify::ModifyError;
use crate::mr::MrError;
use crate::profile::NicProfile;
use crate::qp::WqeId;
use crate::types::{ChannelHandle, CqHandle, MrHandle, PdHandle, QpNum, QpState};
use crate::wr::SendOpcode;

/// A failed verb other than a post.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum VerbsError {
    /// No PD with this handle (a real program cannot name one; rdmalab says EINVAL).
    #[error("{0} does not exist")]
    NoSuchPd(PdHandle),
    /// No CQ with this handle.
    #[error("{0} does not exist")]
    NoSuchCq(CqHandle),
    /// No completion channel with this handle.
    #[error("{0} does not exist")]
    NoSuchChannel(ChannelHandle),
    /// No QP with this number.
    #[error("{0} does not exist")]
    NoSuchQp(QpNum),
    /// No MR with this key.
    #[error("{0} does not exist (deregistered, or never registered)")]
    NoSuchMr(MrHandle),
    /// `dealloc_pd` on a PD that MRs or QPs still use.
    #[error("dealloc_pd: {pd} is still used by {users} MR(s)/QP(s); destroy them first")]
    PdInUse {
        /// The PD.
        pd: PdHandle,
        /// Objects using it.
        users: u32,
    },
    /// `destroy_cq` on a CQ that QPs still use.
    #[error("destroy_cq: {cq} is still used by {qps} QP queue(s); destroy the QPs first")]
    CqInUse {
        /// The CQ.
        cq: CqHandle,
        /// QP references.
        qps: u32,
    },
    /// `destroy_cq` with completion events not acknowledged.
    #[error(
        "destroy_cq: {cq} has {unacked} completion event(s) not acknowledged with ack_cq_events \
         (ibv_destroy_cq would block forever)"
    )]
    CqEventsUnacked {
        /// The CQ.
        cq: CqHandle,
        /// Events not acknowledged.
        unacked: u32,
    },
    /// `destroy_cq` with async events about the CQ taken and not acknowledged.
    #[error(
        "destroy_cq: {cq} has {unacked} async event(s) not acknowledged with ack_async_event \
         (ibv_destroy_cq would block forever)"
    )]
    CqAsyncEventsUnacked {
        /// The CQ.
        cq: CqHandle,
        /// Events not acknowledged.
        unacked: u32,
    },
    /// `destroy_qp` with async events about the QP taken and not acknowledged.
    #[error(
        "destroy_qp: {qpn} has {unacked} async event(s) not acknowledged with ack_async_event \
         (ibv_destroy_qp would block forever)"
    )]
    QpAsyncEventsUnacked {
        /// The QP.
        qpn: QpNum,
        /// Events not acknowledged.
        unacked: u32,
    },
    /// `ack_async_event` for an event not taken, or already acknowledged.
    #[error("ack_async_event: no {event} event about that object is taken and unacknowledged")]
    AsyncAckWithoutEvent {
        /// The event's name.
        event: &'static str,
    },
    /// `ack_cq_events` for more events than were received.
    #[error(
        "ack_cq_events: {cq} has {unacked} unacknowledged event(s), cannot acknowledge {acked}"
    )]
    AckTooMany {
        /// The CQ.
        cq: CqHandle,
        /// Events to acknowledge.
        acked: u32,
        /// Events outstanding.
        unacked: u32,
    },
    /// `destroy_comp_channel` while CQs use it.
    #[error("destroy_comp_channel: {channel} is still used by {cqs} CQ(s)")]
    ChannelInUse {
        /// The channel.
        channel: ChannelHandle,
        /// CQs using it.
        cqs: u32,
    },
    /// `req_notify_cq` on a CQ without a channel (IBTA profile only).
    #[error("req_notify_cq: {cq} has no completion channel, so no event could be delivered")]
    NotifyWithoutChannel {
        /// The CQ.
        cq: CqHandle,
    },
    /// `create_cq` with a size of 0 or above the device limit.
    #[error("create_cq: cqe {requested} must be between 1 and the device's max_cqe {max}")]
    CqSize {
        /// Requested.
        requested: u32,
        /// Device limit.
        max: u32,
    },
    /// `create_qp` asked for more than the device allows.
    #[error("create_qp: {field} {requested} is above the device limit {max}")]
    QpCapTooLarge {
        /// Which capability.
        field: &'static str,
        /// Requested.
        requested: u32,
        /// Device limit.
        max: u32,
    },
    /// Too many objects of one kind.
    #[error("{what}: the device supports at most {max}")]
    TooMany {
        /// What kind.
        what: &'static str,
        /// Device limit.
        max: u32,
    },
    /// `reg_mr` failed.
    #[error(transparent)]
    Mr(#[from] MrError),
    /// `modify_qp` failed.
    #[error(transparent)]
    Modify(#[from] ModifyError),
    /// A memory access failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The transport named a WQE the QP no longer has (flushed or reset meanwhile).
    #[error("{qpn}: WQE {} is not outstanding (flushed or discarded by a state change?)", id.0)]
    NoSuchWqe {
        /// The QP.
        qpn: QpNum,
        /// The WQE.
        id: WqeId,
    },
}

impl VerbsError {
    /// The errno the real verb reports.
    pub fn errno(&self) -> Errno {
        match self {
            VerbsError::PdInUse { .. }
            | VerbsError::CqInUse { .. }
            | VerbsError::CqEventsUnacked { .. }
            | VerbsError::CqAsyncEventsUnacked { .. }
            | VerbsError::QpAsyncEventsUnacked { .. }
            | VerbsError::ChannelInUse { .. } => Errno::EBUSY,
            VerbsError::TooMany { .. } => Errno::ENOMEM,
            VerbsError::Mr(MrError::Unmapped { .. }) | VerbsError::Memory(_) => Errno::EFAULT,
            _ => Errno::EINVAL,
        }
    }

    /// `"EINVAL: "` followed by the rule broken.
    pub fn explain(&self) -> String {
        format!("{}: {self}", self.errno())
    }
}

/// Which queue a post went to.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Queue {
    /// `post_send`.
    Send,
    /// `post_recv`.
    Recv,
}

impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Queue::Send => "post_send",
            Queue::Recv => "post_recv",
        })
    }
}

/// Why a post was refused.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum PostRejection {
    /// No such QP.
    NoSuchQp(QpNum),
    /// The QP state does not accept this queue (per profile, see [`NicProfile`]).
    QpState {
        /// The state.
        state: QpState,
        /// The profile that refused.
        profile: NicProfile,
    },
    /// The work queue is full.
    QueueFull {
        /// Its depth.
        depth: u32,
    },
    /// Too many SGEs.
    TooManySge {
        /// SGEs in the WR.
        num_sge: usize,
        /// The QP's limit.
        max: u32,
    },
    /// Inline payload longer than `max_inline_data`.
    InlineTooLong {
        /// Payload length.
        len: u64,
        /// The QP's limit.
        max: u32,
    },
    /// Inline on an opcode other than SEND/WRITE.
    InlineNotAllowed {
        /// The opcode.
        opcode: SendOpcode,
    },
    /// An inline SGE points at unmapped memory (a real provider would fault copying it).
    InlineUnmapped {
        /// The SGE address.
        addr: u64,
        /// Its length.
        len: u32,
    },
    /// Atomic with the wrong SGE length.
    AtomicLength {
        /// Total SGE length.
        len: u64,
        /// True if the profile needs exactly 8, false if at least 8.
        exact: bool,
    },
    /// Atomic to a remote address that is not 8-byte aligned.
    AtomicAlignment {
        /// The address.
        remote_addr: u64,
    },
    /// A UD send WR without a destination (`wr.ud`).
    MissingUdDest,
}

/// A refused `post_send`/`post_recv`: the errno, which WR was bad, and why.
///
/// WRs before `bad_wr` were posted; WRs from `bad_wr` on were not (`ibv_post_send.3:20-23`).
/// `bad_wr` is `None` when the provider returns before setting it (rxe's RESET check on the
/// receive queue) or when the failure came after every WR was written (rxe's doorbell).
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[error("{op} → {errno}: {}", describe(self))]
pub struct PostError {
    /// Which verb.
    pub op: Queue,
    /// The return value.
    pub errno: Errno,
    /// Index of the failing WR in the chain, if the provider set `*bad_wr`.
    pub bad_wr: Option<usize>,
    /// WRs of the chain written to the queue before the failure.
    pub posted: usize,
    /// Why.
    pub reason: PostRejection,
}

impl PostError {
    /// The errno the verb returns.
    pub fn errno(&self) -> Errno {
        self.errno
    }
    /// The full human explanation (same as `Display`).
    pub fn explain(&self) -> String {
        self.to_string()
    }
}

fn describe(e: &PostError) -> String {
    let which = match e.bad_wr {
        Some(i) => format!("WR #{i} of the chain: "),
        None => String::new(),
    };
    let why = match e.reason {
        PostRejection::NoSuchQp(q) => format!("{q} does not exist"),
        PostRejection::QpState { state, profile } => match (e.op, profile) {
            (Queue::Send, NicProfile::Rxe) => format!(
                "QP is in {state}, must be RTS; the {posted} WR(s) were written to the send queue but the \
                 doorbell failed (rxe_post_send: \"qp not ready to send\"); they run if the QP reaches RTS",
                posted = e.posted
            ),
            (Queue::Send, _) => {
                format!("QP is in {state}, must be RTS (IBTA C10-96: immediate error)")
            }
            (Queue::Recv, NicProfile::Rxe) => {
                format!(
                    "QP is in {state}; receive WRs need INIT or later (rxe_post_recv refuses RESET)"
                )
            }
            (Queue::Recv, _) => {
                format!("QP is in {state}; receive WRs need INIT or later (IBTA C10-96)")
            }
        },
        PostRejection::QueueFull { depth } => {
            format!("the work queue is full ({depth} WRs outstanding; completions free slots)")
        }
        PostRejection::TooManySge { num_sge, max } => {
            format!("{num_sge} SGEs, the QP allows {max}")
        }
        PostRejection::InlineTooLong { len, max } => {
            format!("inline payload of {len} bytes, the QP's max_inline_data is {max}")
        }
        PostRejection::InlineNotAllowed { opcode } => {
            format!("IBV_SEND_INLINE on {opcode}; inline is valid only for SEND and RDMA WRITE")
        }
        PostRejection::InlineUnmapped { addr, len } => {
            format!(
                "inline SGE {addr:#x}+{len} is not mapped memory (a real provider would crash copying it)"
            )
        }
        PostRejection::AtomicLength { len, exact: true } => {
            format!("atomic with {len} bytes of SGE; an atomic needs exactly 8")
        }
        PostRejection::AtomicLength { len, exact: false } => {
            format!("atomic with {len} bytes of SGE; rxe needs at least 8")
        }
        PostRejection::AtomicAlignment { remote_addr } => {
            format!("atomic remote_addr {remote_addr:#x} is not 8-byte aligned")
        }
        PostRejection::MissingUdDest => {
            "a UD send WR needs wr.ud (address handle, remote QPN, Q_Key)".to_string()
        }
    };
    format!("{which}{why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modify::ModifyError;

    #[test]
    fn errnos() {
        assert_eq!(
            VerbsError::PdInUse {
                pd: PdHandle(0),
                users: 1
            }
            .errno(),
            Errno::EBUSY
        );
        assert_eq!(
            VerbsError::Mr(MrError::Unmapped { va: 0, len: 1 }).errno(),
            Errno::EFAULT
        );
        assert_eq!(VerbsError::Mr(MrError::ZeroLength).errno(), Errno::EINVAL);
        let e = VerbsError::Modify(ModifyError::AltPathOnRoce);
        assert!(e.explain().starts_with("EINVAL: modify_qp: ALT_PATH"));
    }

    #[test]
    fn post_error_text() {
        let e = PostError {
            op: Queue::Send,
            errno: Errno::EINVAL,
            bad_wr: Some(0),
            posted: 0,
            reason: PostRejection::QpState {
                state: QpState::Rtr,
                profile: NicProfile::Ibta,
            },
        };
        assert_eq!(
            e.to_string(),
            "post_send → EINVAL: WR #0 of the chain: QP is in RTR, must be RTS (IBTA C10-96: immediate error)"
        );
    }
}
