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

/// A remote operation as the responder sees it.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RemoteOp {
    /// RDMA WRITE (and WRITE_WITH_IMM).
    Write,
    /// RDMA READ.
    Read,
    /// Compare-and-swap or fetch-and-add.
    Atomic,
}

impl RemoteOp {
    /// The access bit the QP and the MR must grant.
    pub const fn needed(self) -> AccessFlags {
        match self {
            RemoteOp::Write => AccessFlags::REMOTE_WRITE,
            RemoteOp::Read => AccessFlags::REMOTE_READ,
            RemoteOp::Atomic => AccessFlags::REMOTE_ATOMIC,
        }
    }
}

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

impl Context {
    /// The next posted (not started) send WQE, whether or not it may start.
    pub fn peek_send(&self, qpn: QpNum) -> Result<Option<&SendWqe>, VerbsError> {
        Ok(self
            .qp(qpn)?
            .sq
            .iter()
            .find(|w| w.state == WqeState::Posted))
    }

    /// A WQE still in the send queue.
    pub fn send_wqe(&self, qpn: QpNum, id: WqeId) -> Result<&SendWqe, VerbsError> {
        self.qp(qpn)?
            .sq_wqe(id)
            .ok_or(VerbsError::NoSuchWqe { qpn, id })
    }

    /// Send WQEs in the queue (posted, started or done but not yet retired).
    pub fn send_queue(&self, qpn: QpNum) -> Result<impl Iterator<Item = &SendWqe>, VerbsError> {
        Ok(self.qp(qpn)?.sq.iter())
    }

    /// Receive WQEs in the queue, head first.
    pub fn recv_queue(&self, qpn: QpNum) -> Result<impl Iterator<Item = &RecvWqe>, VerbsError> {
        Ok(self.qp(qpn)?.rq.iter())
    }

    /// The QP's transport type.
    pub fn qp_type(&self, qpn: QpNum) -> Result<QpType, VerbsError> {
        Ok(self.qp(qpn)?.qp_type)
    }

    /// The QP's PD (for [`MrTable::check_local`]/[`MrTable::check_remote`]).
    pub fn qp_pd(&self, qpn: QpNum) -> Result<PdHandle, VerbsError> {
        Ok(self.qp(qpn)?.pd)
    }

    /// Takes the next send WQE that may start (see the module docs).
    pub fn start_send(&mut self, qpn: QpNum) -> Result<StartSend, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        if qp.state != QpState::Rts {
            return Ok(StartSend::NotReady(qp.state));
        }
        let rd_in_flight = qp.rd_atomic_in_flight();
        let max_rd = qp.attr.max_rd_atomic;
        let Some(wqe) = qp.sq.iter_mut().find(|w| w.state == WqeState::Posted) else {
            return Ok(StartSend::Empty);
        };
        if !wqe.executable {
            let id = wqe.id;
            wqe.state = WqeState::Started;
            let done = self.complete_send(qpn, id, WcStatus::LocQpOpErr)?;
            return Ok(StartSend::FailedLocally(done));
        }
        if wqe.fenced() && rd_in_flight > 0 {
            return Ok(StartSend::Blocked(SendBlock::Fence {
                in_flight: rd_in_flight,
            }));
        }
        if wqe.opcode().is_read_or_atomic() && rd_in_flight >= usize::from(max_rd) {
            return Ok(StartSend::Blocked(SendBlock::RdAtomicCredits {
                in_flight: rd_in_flight,
                max: max_rd,
            }));
        }
        wqe.state = WqeState::Started;
        Ok(StartSend::Started(wqe.clone()))
    }

    /// Finishes send WQE `id` with `status` (see the module docs).
    pub fn complete_send(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        status: WcStatus,
    ) -> Result<SendCompletion, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let idx = qp
            .sq
            .iter()
            .position(|w| w.id == id && !matches!(w.state, WqeState::Done(_)))
            .ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        qp.sq[idx].state = WqeState::Done(status);
        if !status.is_success() {
            for w in qp.sq.iter_mut().take(idx) {
                if !matches!(w.state, WqeState::Done(_)) {
                    w.state = WqeState::Done(WcStatus::WrFlushErr);
                }
            }
        }
        let mut retired = Vec::new();
        while let Some(WqeState::Done(s)) = qp.sq.front().map(|w| w.state) {
            let w = qp.sq.pop_front().expect("front() was Some");
            retired.push((w, s));
        }
        let cq = qp.send_cq;
        let mut out = SendCompletion {
            retired: retired.len(),
            ..SendCompletion::default()
        };
        let mut overrun = false;
        for (w, s) in retired {
            if !w.signaled && s.is_success() {
                continue;
            }
            let wc = if s.is_success() {
                let byte_len = if w.opcode().is_atomic() {
                    8
                } else {
                    w.length as u32
                };
                Wc {
                    opcode: Some(w.opcode().wc_opcode()),
                    byte_len,
                    ..Wc::error(w.wr.wr_id, s, qpn)
                }
            } else {
                Wc::error(w.wr.wr_id, s, qpn)
            };
            let push = self.push_wc(cq, wc, false);
            overrun |= push == CqPush::Overrun;
            out.cqes.push(CqeWritten { cq, wc, push });
        }
        if !status.is_success() || overrun {
            out.flushed = Some(self.enter_error(qpn));
        }
        let qp = self.qp_mut(qpn)?;
        if qp.state == QpState::Sqd && qp.sq_draining && qp.in_flight() == 0 {
            qp.sq_draining = false;
            out.sq_drained = true;
            if qp.attr.en_sqd_async_notify {
                self.raise_async(AsyncEvent::SqDrained { qpn });
            }
        }
        Ok(out)
    }

    /// Reads `[offset, offset + out.len())` of send WQE `id`'s payload: its inline bytes, or
    /// its SGEs after their lkey checks.
    pub fn gather_send(
        &self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), GatherError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let end = offset.saturating_add(out.len() as u64);
        if end > w.length {
            return Err(GatherError::OutOfMessage {
                offset,
                end,
                len: w.length,
            });
        }
        if let Some(data) = &w.inline_data {
            out.copy_from_slice(&data[offset as usize..end as usize]);
            return Ok(());
        }
        gather_sges(&self.mrs, &self.memory, qp.pd, &w.wr.sg_list, offset, out)
    }

    /// The payload of send WQE `id` at `[offset, offset + len)` as a reference to synthetic
    /// memory, when that range comes from one SGE into one synthetic buffer (after the same
    /// lkey checks as [`gather_send`](Self::gather_send)); `None` when it must be gathered as
    /// bytes (real memory, inline data, several SGEs).
    pub fn gather_ref(
        &self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        len: u64,
    ) -> Result<Option<SyntheticRef>, GatherError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        if w.inline_data.is_some() || len == 0 {
            return Ok(None);
        }
        let Some((sge, off, n)) = one_piece(&w.wr.sg_list, offset, len) else {
            return Ok(None);
        };
        self.mrs
            .check_local(sge.lkey, qp.pd, sge.addr + off, n, AccessFlags::empty())?;
        Ok(self.memory.synthetic_ref(sge.addr + off, n))
    }

    /// Writes READ response bytes at `offset` of send WQE `id`'s SGEs (LOCAL_WRITE needed).
    pub fn scatter_send(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        scatter_sges(
            &self.mrs,
            &mut self.memory,
            qp.pd,
            &w.wr.sg_list,
            offset,
            data,
        )
    }

    /// Whether send WQE `id`'s SGEs can take a READ's response: every SGE's lkey valid in
    /// the QP's PD with LOCAL_WRITE over its whole range, its memory mapped. Nothing is
    /// written. The NIC checks this as the response data arrives (rxe `do_read`:
    /// `copy_data(.., IB_ACCESS_LOCAL_WRITE, ..)`); failing it is LOC_PROT_ERR.
    pub fn check_read_target(&self, qpn: QpNum, id: WqeId) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        for sge in w.wr.sg_list.iter().filter(|s| s.length > 0) {
            let len = u64::from(sge.length);
            self.mrs
                .check_local(sge.lkey, qp.pd, sge.addr, len, AccessFlags::LOCAL_WRITE)?;
            if !self.memory.is_mapped(sge.addr, len) {
                return Err(ScatterError::Memory(MemoryError::Unmapped {
                    va: sge.addr,
                    len,
                }));
            }
        }
        Ok(())
    }

    /// Writes an atomic's original value (8 bytes, little-endian) into send WQE `id`'s SGEs.
    /// Under `mlx5` the 8 bytes go to the first SGE whatever its length, as
    /// `set_data_ptr_seg_atomic` makes the NIC do.
    pub fn write_atomic_result(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        original: u64,
    ) -> Result<(), ScatterError> {
        let profile = self.profile();
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let sges = match (profile, w.wr.sg_list.first()) {
            (NicProfile::Mlx5, Some(first)) => vec![Sge {
                length: 8,
                ..*first
            }],
            _ => w.wr.sg_list.clone(),
        };
        scatter_sges(
            &self.mrs,
            &mut self.memory,
            qp.pd,
            &sges,
            0,
            &original.to_le_bytes(),
        )
    }

    /// A request reached QP `qpn` and was processed: the first one while the QP is in RTR
    /// raises `COMM_EST` (once per entry into RTR), on profiles that have it.
    pub fn request_arrived(&mut self, qpn: QpNum) -> Result<(), VerbsError> {
        let raises = self.profile().raises_comm_est();
        let qp = self.qp_mut(qpn)?;
        if qp.state == QpState::Rtr && !qp.comm_est && qp.qp_type != QpType::Ud {
            qp.comm_est = true;
            if raises {
                self.raise_async(AsyncEvent::CommEst { qpn });
            }
        }
        Ok(())
    }

    /// The responder NAKed a request it could not execute and its QP is going to ERR: the
    /// affiliated error event on profiles that raise one.
    pub fn responder_failed(
        &mut self,
        qpn: QpNum,
        fault: ResponderFault,
    ) -> Result<(), VerbsError> {
        self.qp(qpn)?;
        if self.profile().raises_qp_error_events() {
            self.raise_async(match fault {
                ResponderFault::InvalidRequest => AsyncEvent::QpReqErr { qpn },
                ResponderFault::AccessViolation => AsyncEvent::QpAccessErr { qpn },
                ResponderFault::Operational => AsyncEvent::QpFatal { qpn },
            });
        }
        Ok(())
    }

    /// True if the QP processes incoming requests (RTR, RTS, SQD, SQE).
    pub fn accepts_requests(&self, qpn: QpNum) -> Result<bool, VerbsError> {
        Ok(matches!(
            self.qp(qpn)?.state,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        ))
    }

    /// The head receive WQE, or `None` (RNR for RC, a drop for UC/UD).
    pub fn recv_head(&self, qpn: QpNum) -> Result<Option<&RecvWqe>, VerbsError> {
        Ok(self.qp(qpn)?.rq.front())
    }

    /// Writes message bytes at `offset` of the head receive WQE (LOCAL_WRITE needed; nothing
    /// written on failure).
    pub fn scatter_recv(
        &mut self,
        qpn: QpNum,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.front().ok_or(ScatterError::NoRecvWqe)?;
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, offset, data)
    }

    /// Writes message bytes at `offset` of the receive WQE `index` places behind the head
    /// (0: the head), without consuming it: selective repeat places a SEND that arrived
    /// early into the WQE its IRN header names (LOCAL_WRITE needed; nothing written on
    /// failure).
    pub fn scatter_recv_at(
        &mut self,
        qpn: QpNum,
        index: usize,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.get(index).ok_or(ScatterError::NoRecvWqe)?;
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, offset, data)
    }

    /// Writes a UD datagram into the head receive WQE: the 40-byte GRH at offset 0 and the
    /// payload from offset 40.
    pub fn scatter_ud_recv(
        &mut self,
        qpn: QpNum,
        grh: &[u8; 40],
        payload: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.front().ok_or(ScatterError::NoRecvWqe)?;
        let mut msg = Vec::with_capacity(40 + payload.len());
        msg.extend_from_slice(grh);
        msg.extend_from_slice(payload);
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, 0, &msg)
    }

    /// Pops the head receive WQE for a successful receive and returns its completion without
    /// writing it: the NIC writes the CQE after the payload's DMA, so the caller delivers it
    /// with [`Context::deliver_recv`] when that write lands. A receive WQE is consumed when
    /// its message arrives either way, so the next message scatters into the next WQE.
    pub fn take_recv(&mut self, qpn: QpNum, c: RecvCompletion) -> Result<TakenRecv, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let wqe = qp.rq.pop_front().ok_or(VerbsError::NoSuchWqe {
            qpn,
            id: WqeId(u64::MAX),
        })?;
        let mut flags = WcFlags::empty();
        if c.imm_data.is_some() {
            flags |= WcFlags::WITH_IMM;
        }
        if c.grh {
            flags |= WcFlags::GRH;
        }
        Ok(TakenRecv {
            cq: qp.recv_cq,
            wc: Wc {
                wr_id: wqe.wr_id,
                status: c.status,
                opcode: Some(c.opcode),
                byte_len: c.byte_len,
                imm_data: c.imm_data,
                qp_num: qpn,
                src_qp: c.src_qp,
                wc_flags: flags,
            },
            solicited: c.solicited,
        })
    }

    /// Writes a completion [`Context::take_recv`] returned; an overrun CQ moves the QP to ERR.
    pub fn deliver_recv(&mut self, qpn: QpNum, t: TakenRecv) -> CqeWritten {
        let push = self.push_wc(t.cq, t.wc, t.solicited);
        if push == CqPush::Overrun && self.qps.contains_key(&qpn) {
            self.enter_error(qpn);
        }
        CqeWritten {
            cq: t.cq,
            wc: t.wc,
            push,
        }
    }

    /// Pops the head receive WQE and writes its CQE (see the module docs).
    pub fn complete_recv(
        &mut self,
        qpn: QpNum,
        c: RecvCompletion,
    ) -> Result<RecvOutcome, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let wqe = qp.rq.pop_front().ok_or(VerbsError::NoSuchWqe {
            qpn,
            id: WqeId(u64::MAX),
        })?;
        let cq = qp.recv_cq;
        let wc = if c.status.is_success() {
            let mut flags = WcFlags::empty();
            if c.imm_data.is_some() {
                flags |= WcFlags::WITH_IMM;
            }
            if c.grh {
                flags |= WcFlags::GRH;
            }
            Wc {
                wr_id: wqe.wr_id,
                status: c.status,
                opcode: Some(c.opcode),
                byte_len: c.byte_len,
                imm_data: c.imm_data,
                qp_num: qpn,
                src_qp: c.src_qp,
                wc_flags: flags,
            }
        } else {
            Wc::error(wqe.wr_id, c.status, qpn)
        };
        let push = self.push_wc(cq, wc, c.solicited);
        let flushed = if !c.status.is_success() || push == CqPush::Overrun {
            Some(self.enter_error(qpn))
        } else {
            None
        };
        Ok(RecvOutcome {
            wqe,
            cqe: CqeWritten { cq, wc, push },
            flushed,
        })
    }

    /// Moves the QP to ERR and flushes both queues with `WR_FLUSH_ERR`.
    pub fn set_error(&mut self, qpn: QpNum) -> Result<FlushReport, VerbsError> {
        self.qp(qpn)?;
        Ok(self.enter_error(qpn))
    }

    /// Checks a remote operation of `len` bytes at `[va, va+len)` through `rkey` on responder
    /// QP `qpn`, in the order of the module docs.
    pub fn responder_check(
        &self,
        qpn: QpNum,
        op: RemoteOp,
        rkey: u32,
        va: u64,
        len: u64,
    ) -> Result<(), ResponderError> {
        let qp = self.qp(qpn)?;
        let needed = op.needed();
        if !qp.attr.qp_access_flags.contains(needed) {
            return Err(ResponderError::QpAccess {
                qpn,
                op,
                needed,
                granted: qp.attr.qp_access_flags,
            });
        }
        if matches!(op, RemoteOp::Read | RemoteOp::Atomic) && qp.attr.max_dest_rd_atomic == 0 {
            return Err(ResponderError::NoRdAtomicResources { qpn });
        }
        if op == RemoteOp::Atomic && !va.is_multiple_of(8) {
            return Err(ResponderError::Misaligned { va });
        }
        self.mrs.check_remote(rkey, qp.pd, va, len, needed)?;
        Ok(())
    }

    /// Runs the responder checks for a WRITE of `data` at `va`, then writes it.
    pub fn remote_write(
        &mut self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        data: &[u8],
    ) -> Result<(), ResponderError> {
        self.responder_check(qpn, RemoteOp::Write, rkey, va, data.len() as u64)?;
        self.memory.write(va, data)?;
        Ok(())
    }

    /// Runs the responder checks for a READ of `out.len()` bytes at `va`, then reads them.
    pub fn remote_read(
        &self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        out: &mut [u8],
    ) -> Result<(), ResponderError> {
        self.responder_check(qpn, RemoteOp::Read, rkey, va, out.len() as u64)?;
        self.memory.read(va, out)?;
        Ok(())
    }

    /// Runs the responder checks for an atomic on the 8 bytes at `va`, applies it and returns
    /// the original value (RXE-mr `rxe_mr_do_atomic_op`; verbs-spec C35: a failed compare
    /// still succeeds and returns the original).
    pub fn remote_atomic(
        &mut self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        op: AtomicOp,
    ) -> Result<u64, ResponderError> {
        self.responder_check(qpn, RemoteOp::Atomic, rkey, va, 8)?;
        let original = self.memory.read_u64(va)?;
        let new = match op {
            AtomicOp::CmpAndSwp { compare, swap } => (original == compare).then_some(swap),
            AtomicOp::FetchAndAdd { add } => Some(original.wrapping_add(add)),
        };
        if let Some(v) = new {
            self.memory.write_u64(va, v)?;
        }
        Ok(original)
    }

    /// The QP's Q_Key (UD).
    pub fn qkey(&self, qpn: QpNum) -> Result<u32, VerbsError> {
        Ok(self.qp(qpn)?.attr.qkey)
    }

    /// The Q_Key a UD send WQE carries: the WR's `remote_qkey`, or the QP's own Q_Key when the
    /// WR's has its high-order bit set.
    pub fn ud_send_qkey(&self, qpn: QpNum, id: WqeId) -> Result<u32, VerbsError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let given = w.wr.ud.map_or(0, |u| u.remote_qkey);
        Ok(if given & 0x8000_0000 != 0 {
            qp.attr.qkey
        } else {
            given
        })
    }
}

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
