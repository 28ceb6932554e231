//! The calls the transport makes into a [`Context`]: take send WQEs, complete them, take
//! receive WQEs, move bytes through SGE lists and remote keys, run atomics, and push a QP into
//! ERR. They are the verbs-side half of what rxe's requester (`rxe_req.c`), completer
//! (`rxe_comp.c`) and responder (`rxe_resp.c`) do; the packet half is the transport's.
//!
//! # Send side (requester)
//!
//! 1. [`Context::start_send`] takes the next WQE that may start, in posting order. Nothing
//!    starts unless the QP is in RTS (SQD lets started WQEs finish but starts none). The head
//!    WQE waits if it has `IBV_SEND_FENCE` and an earlier READ/atomic is still in flight
//!    (IBA 10.8.3.3, RXE-req `rxe_wqe_is_fenced`), or if it is a READ/atomic and
//!    `max_rd_atomic` of them are already in flight (RXE-req `check_init_depth`). A WQE the QP
//!    cannot execute (opcode not supported by the transport) is completed here with
//!    `LOC_QP_OP_ERR` and the QP moves to ERR (RXE-req `next_opcode` < 0).
//! 2. [`Context::gather_send`] reads the payload (inline bytes, or the SGEs after their lkey
//!    checks: key, PD, range; local read is always allowed).
//! 3. [`Context::complete_send`] finishes a WQE with a status. Done WQEs are retired from the
//!    head only, so CQEs come in posting order. A CQE is written if the WQE was signaled, the
//!    QP has `sq_sig_all`, or the status is not SUCCESS (RXE-comp `do_complete`; IBA 10.7.3.1).
//!    An error status moves the QP to ERR and flushes everything after it; earlier WQEs still
//!    in flight are flushed first (the transport normally fails the oldest WQE).
//! 4. READ responses and atomic results land in the WQE's SGEs through
//!    [`Context::scatter_send`] and [`Context::write_atomic_result`] (LOCAL_WRITE needed).
//!
//! # Receive side (responder)
//!
//! - [`Context::accepts_requests`]: RTR, RTS, SQD and SQE process incoming requests; RESET and
//!   INIT drop them (RXE-recv `check_type_state`).
//! - A SEND or WRITE_WITH_IMM needs the head receive WQE: [`Context::recv_head`] returns `None`
//!   when the queue is empty, which is RNR for RC and a silent drop for UC/UD.
//! - [`Context::scatter_recv`] writes message bytes at an offset of the head receive WQE;
//!   bytes beyond its total length fail with [`ScatterError::TooLong`] ("message larger than
//!   the receive buffer", verbs-spec C25), and nothing is written by a failing call.
//!   For UD, the first [`UD_GRH_LEN`] (40) bytes of the buffer receive the GRH and the payload
//!   starts at offset 40 (`ibv_post_recv.3:64-69`): use [`Context::scatter_ud_recv`].
//! - [`Context::complete_recv`] pops the head WQE and writes its CQE (receives always
//!   complete); an error status moves the QP to ERR.
//! - [`Context::responder_check`], [`Context::remote_write`], [`Context::remote_read`] and
//!   [`Context::remote_atomic`] check first the QP's `qp_access_flags` (missing → NAK Invalid
//!   Request, REM_INV_REQ_ERR at the requester), then READ/atomic resources and atomic
//!   alignment (Invalid Request too), then the rkey (key, PD, MR access, range → NAK Remote
//!   Access, REM_ACCESS_ERR) (RXE-resp `check_op_valid` before `check_rkey`, verbs-spec §4
//!   "Two gates"). Zero-length READ/WRITE skip the rkey check (C9-88).
//!
//! # State
//!
//! [`Context::set_error`] moves a QP to ERR and flushes it (a transport failure such as
//! RETRY_EXC_ERR is reported through `complete_send`, which does this itself).
//! [`Context::take_notifications`] tells the host which completions raised CQ events.

use crate::Context;
use crate::context::{AsyncEvent, FlushReport};
use crate::cq::CqPush;
use crate::error::VerbsError;
use crate::flags::{AccessFlags, WcFlags};
use crate::memory::SyntheticRef;
use crate::memory::{Memory, MemoryError};
use crate::mr::{LocalAccessError, MrTable, RemoteAccessError};
use crate::profile::NicProfile;
use crate::qp::{RecvWqe, SendWqe, WqeId, WqeState};
use crate::types::{CqHandle, PdHandle, QpNum, QpState, QpType};
use crate::wc::{Wc, WcOpcode, WcStatus};
use crate::wr::Sge;

/// Bytes at the start of a UD receive buffer that hold the GRH.
pub const UD_GRH_LEN: u64 = 40;

/// Why the head send WQE cannot start yet.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum SendBlock {
    /// `IBV_SEND_FENCE` and earlier READ/atomics are in flight.
    Fence {
        /// READ/atomics in flight.
        in_flight: usize,
    },
    /// A READ/atomic while `max_rd_atomic` are in flight.
    RdAtomicCredits {
        /// READ/atomics in flight.
        in_flight: usize,
        /// The QP's `max_rd_atomic`.
        max: u8,
    },
}

/// What [`Context::start_send`] found.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum StartSend {
    /// This WQE is now started; send it.
    Started(SendWqe),
    /// No posted WQE waits.
    Empty,
    /// The QP's state lets no WQE start.
    NotReady(QpState),
    /// The head WQE must wait.
    Blocked(SendBlock),
    /// The head WQE could not be executed: it completed with `LOC_QP_OP_ERR` and the QP is now
    /// in ERR.
    FailedLocally(SendCompletion),
}

/// One CQE written by a completion call.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CqeWritten {
    /// The CQ.
    pub cq: CqHandle,
    /// The completion.
    pub wc: Wc,
    /// What the CQ did with it (event raised, overrun, dropped).
    pub push: CqPush,
}

/// What [`Context::complete_send`] did.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct SendCompletion {
    /// WQEs retired from the head of the send queue (with or without a CQE).
    pub retired: usize,
    /// The CQEs written, in order.
    pub cqes: Vec<CqeWritten>,
    /// Set if the QP moved to ERR (an error status or a CQ overrun).
    pub flushed: Option<FlushReport>,
    /// True if this completion finished draining a QP in SQD.
    pub sq_drained: bool,
}

/// The completion the transport reports for the head receive WQE.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RecvCompletion {
    /// Outcome.
    pub status: WcStatus,
    /// `Recv` for a SEND, `RecvRdmaWithImm` for a WRITE_WITH_IMM.
    pub opcode: WcOpcode,
    /// Message length (UD: plus the 40 GRH bytes; WRITE_WITH_IMM: the RETH length).
    pub byte_len: u32,
    /// Immediate data, if the message carried it.
    pub imm_data: Option<u32>,
    /// UD: the sender's QPN.
    pub src_qp: Option<QpNum>,
    /// UD: a GRH is at the start of the buffer.
    pub grh: bool,
    /// The message had the solicited-event bit.
    pub solicited: bool,
}

impl RecvCompletion {
    /// A successful SEND receive of `byte_len` bytes.
    pub fn recv(byte_len: u32) -> RecvCompletion {
        RecvCompletion {
            status: WcStatus::Success,
            opcode: WcOpcode::Recv,
            byte_len,
            imm_data: None,
            src_qp: None,
            grh: false,
            solicited: false,
        }
    }
}

/// A receive completion taken from the receive queue, not yet written to its CQ.
#[derive(Clone, Debug, PartialEq)]
pub struct TakenRecv {
    /// The CQ it goes to.
    pub cq: CqHandle,
    /// The completion.
    pub wc: Wc,
    /// The message asked for a solicited event.
    pub solicited: bool,
}

/// What [`Context::complete_recv`] did.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct RecvOutcome {
    /// The consumed WQE.
    pub wqe: RecvWqe,
    /// The CQE written.
    pub cqe: CqeWritten,
    /// Set if the QP moved to ERR.
    pub flushed: Option<FlushReport>,
}

/// Why bytes could not be written into a local SGE list.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum ScatterError {
    /// The data does not fit the SGE list (a message larger than the receive buffer).
    #[error("{needed} bytes do not fit a buffer of {capacity} bytes")]
    TooLong {
        /// Total SGE length.
        capacity: u64,
        /// Offset + length asked for.
        needed: u64,
    },
    /// An SGE failed its lkey check.
    #[error(transparent)]
    Access(#[from] LocalAccessError),
    /// The memory behind a valid MR is gone.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No receive WQE is posted.
    #[error("no receive WQE is posted")]
    NoRecvWqe,
    /// No such QP or WQE.
    #[error(transparent)]
    Verbs(#[from] VerbsError),
}

impl ScatterError {
    /// The status a receive WQE completes with for this failure under `profile`:
    /// LOC_LEN_ERR for a message too long (MOJO; rxe reports REM_INV_REQ_ERR on both sides,
    /// verbs-spec C25), the local key status otherwise.
    pub fn recv_status(&self, profile: NicProfile) -> WcStatus {
        match self {
            ScatterError::TooLong { .. } if profile == NicProfile::Rxe => WcStatus::RemInvReqErr,
            ScatterError::TooLong { .. } => WcStatus::LocLenErr,
            ScatterError::Access(e) => e.responder_status(profile),
            _ => WcStatus::LocProtErr,
        }
    }
}

/// Why bytes could not be read from a send WQE.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum GatherError {
    /// The range asked for is beyond the message.
    #[error("bytes {offset}..{end} are beyond the {len}-byte message")]
    OutOfMessage {
        /// Offset asked for.
        offset: u64,
        /// End asked for.
        end: u64,
        /// Message length.
        len: u64,
    },
    /// An SGE failed its lkey check.
    #[error(transparent)]
    Access(#[from] LocalAccessError),
    /// The memory behind a valid MR is gone.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No such QP or WQE.
    #[error(transparent)]
    Verbs(#[from] VerbsError),
}

impl GatherError {
    /// The status the send WQE completes with (see [`LocalAccessError::requester_status`]).
    pub fn send_status(&self, profile: NicProfile) -> WcStatus {
        match self {
            GatherError::Access(e) => e.requester_status(profile),
            _ => WcStatus::LocProtErr,
        }
    }
}

/// A remote operation as the responder sees it (one type with the transport, which reads it
/// off the opcode).
pub use units::RemoteOp;

/// An atomic's operands.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum AtomicOp {
    /// `orig = *va; if orig == compare { *va = swap }`.
    CmpAndSwp {
        /// Compared with the remote value.
        compare: u64,
        /// Stored if equal.
        swap: u64,
    },
    /// `orig = *va; *va = orig + add` (wrapping).
    FetchAndAdd {
        /// Added.
        add: u64,
    },
}

/// The NAK a responder sends for a [`ResponderError`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Nak {
    /// NAK Invalid Request (AETH 0x61): REM_INV_REQ_ERR at the requester.
    InvalidRequest,
    /// NAK Remote Access Error (AETH 0x62): REM_ACCESS_ERR at the requester.
    RemoteAccess,
}

/// What a responder's fatal NAK says went wrong, for the async event it raises.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ResponderFault {
    /// NAK Invalid Request or Invalid RD Request: `QP_REQ_ERR`.
    InvalidRequest,
    /// NAK Remote Access Error: `QP_ACCESS_ERR`.
    AccessViolation,
    /// NAK Remote Operational Error: `QP_FATAL`.
    Operational,
}

/// Why a responder refuses a WRITE, READ or atomic.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum ResponderError {
    /// The QP's `qp_access_flags` lack the operation (RXE-resp `check_op_valid`). For UC
    /// the message is silently dropped instead of NAKed.
    #[error(
        "{qpn} does not accept remote {op:?}: its qp_access_flags are {granted}, {needed} is needed"
    )]
    QpAccess {
        /// The responder QP.
        qpn: QpNum,
        /// The operation.
        op: RemoteOp,
        /// What is needed.
        needed: AccessFlags,
        /// What the QP grants.
        granted: AccessFlags,
    },
    /// READ or atomic while `max_dest_rd_atomic` is 0 (RXE-resp `check_resource`).
    #[error("{qpn} has max_dest_rd_atomic 0, so it serves no READ or atomic")]
    NoRdAtomicResources {
        /// The responder QP.
        qpn: QpNum,
    },
    /// An atomic on an address that is not 8-byte aligned (RXE-mr `rxe_mr_do_atomic_op`).
    #[error("atomic on {va:#x}, which is not 8-byte aligned")]
    Misaligned {
        /// The address.
        va: u64,
    },
    /// The rkey check failed.
    #[error(transparent)]
    Remote(#[from] RemoteAccessError),
    /// The memory behind a valid MR is gone (reported as a remote access error).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// No such QP.
    #[error(transparent)]
    Verbs(#[from] VerbsError),
}

impl ResponderError {
    /// The NAK an RC responder sends.
    pub fn nak(&self) -> Nak {
        match self {
            ResponderError::QpAccess { .. }
            | ResponderError::NoRdAtomicResources { .. }
            | ResponderError::Misaligned { .. }
            | ResponderError::Verbs(_) => Nak::InvalidRequest,
            ResponderError::Remote(_) | ResponderError::Memory(_) => Nak::RemoteAccess,
        }
    }

    /// The requester's completion status for that NAK.
    pub fn requester_status(&self) -> WcStatus {
        match self.nak() {
            Nak::InvalidRequest => WcStatus::RemInvReqErr,
            Nak::RemoteAccess => WcStatus::RemAccessErr,
        }
    }
}

/// Reads `[offset, offset + out.len())` of the message an SGE list describes.
fn gather_sges(
    mrs: &MrTable,
    memory: &Memory,
    pd: PdHandle,
    sges: &[Sge],
    offset: u64,
    out: &mut [u8],
) -> Result<(), GatherError> {
    let pieces = split(sges, offset, out.len() as u64);
    for &(sge, off, n, _) in &pieces {
        mrs.check_local(sge.lkey, pd, sge.addr + off, n, AccessFlags::empty())?;
    }
    for (sge, off, n, at) in pieces {
        memory.read(sge.addr + off, &mut out[at as usize..(at + n) as usize])?;
    }
    Ok(())
}

/// Writes `data` at `offset` of the buffer an SGE list describes; nothing is written unless
/// every piece passes its checks.
fn scatter_sges(
    mrs: &MrTable,
    memory: &mut Memory,
    pd: PdHandle,
    sges: &[Sge],
    offset: u64,
    data: &[u8],
) -> Result<(), ScatterError> {
    let capacity: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
    let needed = offset.saturating_add(data.len() as u64);
    if needed > capacity {
        return Err(ScatterError::TooLong { capacity, needed });
    }
    let pieces = split(sges, offset, data.len() as u64);
    for &(sge, off, n, _) in &pieces {
        mrs.check_local(sge.lkey, pd, sge.addr + off, n, AccessFlags::LOCAL_WRITE)?;
        if !memory.is_mapped(sge.addr + off, n) {
            return Err(ScatterError::Memory(MemoryError::Unmapped {
                va: sge.addr + off,
                len: n,
            }));
        }
    }
    for (sge, off, n, at) in pieces {
        memory.write(sge.addr + off, &data[at as usize..(at + n) as usize])?;
    }
    Ok(())
}

/// The pieces of `[offset, offset+len)` of a message over an SGE list, in order:
/// `(sge, offset within the sge, length, offset within the data)`. Zero-length SGEs are
/// skipped. Lazy: the per-packet path ([`one_piece`]) allocates nothing.
fn pieces(sges: &[Sge], offset: u64, len: u64) -> impl Iterator<Item = (Sge, u64, u64, u64)> + '_ {
    let end = offset + len;
    sges.iter()
        .scan(0u64, move |start, &sge| {
            let s = *start;
            *start += u64::from(sge.length);
            (s < end).then_some((sge, s))
        })
        .filter_map(move |(sge, start)| {
            let lo = offset.max(start);
            let hi = end.min(start + u64::from(sge.length));
            (lo < hi).then(|| (sge, lo - start, hi - lo, lo - offset))
        })
}

/// [`pieces`], collected.
fn split(sges: &[Sge], offset: u64, len: u64) -> Vec<(Sge, u64, u64, u64)> {
    pieces(sges, offset, len).collect()
}

/// The piece of `[offset, offset+len)`, when it lies in one SGE: (SGE, offset in it, length).
fn one_piece(sges: &[Sge], offset: u64, len: u64) -> Option<(Sge, u64, u64)> {
    let mut it = pieces(sges, offset, len);
    let (sge, off, n, _) = it.next()?;
    it.next().is_none().then_some((sge, off, n))
}

mod requester;
mod responder;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_piece_is_split_when_split_gives_one() {
        let sges = [
            Sge::new(0x1000, 4, 1),
            Sge::new(0x2000, 0, 1),
            Sge::new(0x3000, 6, 1),
        ];
        for offset in 0..10 {
            for len in 0..=(10 - offset) {
                let p = split(&sges, offset, len);
                let want = match p[..] {
                    [(sge, off, n, _)] => Some((sge, off, n)),
                    _ => None,
                };
                assert_eq!(one_piece(&sges, offset, len), want, "{offset}+{len}");
            }
        }
    }

    #[test]
    fn split_over_sges() {
        let sges = [
            Sge::new(0x1000, 4, 1),
            Sge::new(0x2000, 0, 1),
            Sge::new(0x3000, 6, 1),
        ];
        let p = split(&sges, 2, 5);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].1, p[0].2, p[0].3), (2, 2, 0));
        assert_eq!((p[1].0.addr, p[1].1, p[1].2, p[1].3), (0x3000, 0, 3, 2));
        assert!(split(&sges, 10, 0).is_empty());
    }
}
