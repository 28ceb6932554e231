//! Queue pairs: creation attributes and capabilities (`ibv_create_qp.3`), and the work queues
//! the transport consumes.
//!
//! # Capabilities returned by `create_qp`
//!
//! "`ibv_create_qp` may return caps ≥ those requested" (`ibv_create_qp.3:49-54`). A request
//! above a device limit (`max_qp_wr`, `max_sge`, the inline limit) fails with EINVAL
//! (rxe `rxe_qp_chk_cap`; google/rdma-unit-test `QpTest.ExceedsDeviceCap`). What each profile
//! returns:
//!
//! - `rxe` (RXE-qp `rxe_qp_init_req`, `rxe_queue_init`): the send WQE size is
//!   `max(max_send_sge × 16, max_inline_data)`; `max_send_sge` becomes that size / 16 and
//!   `max_inline_data` that size. Queue depths become `2^k − 1 ≥` the request.
//! - `mlx5` (rdma-core `providers/mlx5/verbs.c`, `mlx5_calc_sq_size`/`mlx5_calc_rq_size`):
//!   the queue buffer is the depth × WQE size rounded up to a power of two, so the depth is
//!   rounded up to a power of two when the WQE size is one, which rdmalab always assumes
//!   (rdma-unit-test: "mlx treats max_send_wr as a recommendation"); `max_recv_sge` is
//!   rounded up to a power of two (the receive WQE holds a power-of-two number of data
//!   segments). Send SGEs and inline are returned as asked; the real provider may report more
//!   inline room, which rdmalab does not model.
//! - `ibta`: exactly what was asked.
//!
//! # Work queues
//!
//! The send queue holds [`SendWqe`]s in posting order. Each is `Posted`, then `Started` when
//! the transport takes it, then `Done` with a status; done WQEs leave the queue from the head
//! only, so send completions come out in posting order (the rxe completer only retires the head
//! WQE, RXE-comp `get_wqe`). A WQE occupies its slot until it is retired, which is what
//! "queue full" counts. The receive queue holds [`RecvWqe`]s, consumed from the head.

use std::collections::VecDeque;

use crate::flags::SendFlags;
use crate::modify::QpAttr;
use crate::profile::{NicProfile, pow2_minus_one_at_least};
use crate::types::{CqHandle, PdHandle, QpType};
use crate::wc::WcStatus;
use crate::wr::{RecvWr, SendOpcode, SendWr, Sge, sge_total};

/// `struct ibv_qp_cap`.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct QpCap {
    /// Send queue depth.
    pub max_send_wr: u32,
    /// Receive queue depth.
    pub max_recv_wr: u32,
    /// SGEs per send WR.
    pub max_send_sge: u32,
    /// SGEs per receive WR.
    pub max_recv_sge: u32,
    /// Largest inline payload.
    pub max_inline_data: u32,
}

impl QpCap {
    /// What `create_qp` returns for a request of `self` (see the module docs).
    pub fn rounded(self, profile: NicProfile) -> QpCap {
        match profile {
            NicProfile::Rxe => {
                let wqe = (self.max_send_sge * 16).max(self.max_inline_data);
                QpCap {
                    max_send_wr: pow2_minus_one_at_least(self.max_send_wr),
                    max_recv_wr: pow2_minus_one_at_least(self.max_recv_wr),
                    max_send_sge: wqe / 16,
                    max_recv_sge: self.max_recv_sge,
                    max_inline_data: wqe,
                }
            }
            NicProfile::Mlx5 => QpCap {
                max_send_wr: pow2_or_zero(self.max_send_wr),
                max_recv_wr: pow2_or_zero(self.max_recv_wr),
                max_send_sge: self.max_send_sge,
                max_recv_sge: pow2_or_zero(self.max_recv_sge.max(1)),
                max_inline_data: self.max_inline_data,
            },
            NicProfile::Ibta => self,
        }
    }
}

fn pow2_or_zero(n: u32) -> u32 {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(n)
    }
}

/// `struct ibv_qp_init_attr`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct QpInitAttr {
    /// RC, UC or UD.
    pub qp_type: QpType,
    /// CQ for send completions.
    pub send_cq: CqHandle,
    /// CQ for receive completions.
    pub recv_cq: CqHandle,
    /// Requested capabilities.
    pub cap: QpCap,
    /// Every send WR completes with a CQE, signaled or not.
    pub sq_sig_all: bool,
}

/// Identifies one send or receive WQE within its QP (a per-QP sequence number).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct WqeId(pub u64);

/// Where a send WQE is in its life.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum WqeState {
    /// Posted, not yet taken by the transport.
    Posted,
    /// Taken by the transport (packets may be on the wire).
    Started,
    /// Completed with this status; waits for earlier WQEs before it is retired.
    Done(WcStatus),
}

/// A posted send WR as the transport sees it.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct SendWqe {
    /// Its identity within the QP.
    pub id: WqeId,
    /// The WR as posted (for inline WRs, `sg_list` still names the original buffers, which may
    /// have changed since; use `inline_data`).
    pub wr: SendWr,
    /// The payload copied at post time for `IBV_SEND_INLINE`.
    pub inline_data: Option<Vec<u8>>,
    /// True if a successful completion writes a CQE (`SIGNALED` or `sq_sig_all`).
    pub signaled: bool,
    /// Message length in bytes.
    pub length: u64,
    /// False if the WQE cannot be executed by this QP (opcode not supported by the transport,
    /// or inline on an opcode that cannot be inline): it completes LOC_QP_OP_ERR when started.
    pub executable: bool,
    /// Where it is in its life.
    pub state: WqeState,
}

impl SendWqe {
    /// The opcode.
    pub fn opcode(&self) -> SendOpcode {
        self.wr.opcode
    }
    /// True if `IBV_SEND_FENCE` was set.
    pub fn fenced(&self) -> bool {
        self.wr.send_flags.contains(SendFlags::FENCE)
    }
    /// True if `IBV_SEND_SOLICITED` was set.
    pub fn solicited(&self) -> bool {
        self.wr.send_flags.contains(SendFlags::SOLICITED)
    }
}

/// A posted receive WR.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct RecvWqe {
    /// Its identity within the QP.
    pub id: WqeId,
    /// The caller's identifier.
    pub wr_id: u64,
    /// Where the message goes.
    pub sg_list: Vec<Sge>,
    /// Total buffer length.
    pub length: u64,
}

impl RecvWqe {
    pub(crate) fn new(id: WqeId, wr: &RecvWr) -> RecvWqe {
        RecvWqe {
            id,
            wr_id: wr.wr_id,
            sg_list: wr.sg_list.clone(),
            length: sge_total(&wr.sg_list),
        }
    }
}

/// A queue pair's full state.
#[derive(Clone, Debug)]
pub(crate) struct Qp {
    pub qp_type: QpType,
    pub pd: PdHandle,
    pub send_cq: CqHandle,
    pub recv_cq: CqHandle,
    pub sq_sig_all: bool,
    pub cap: QpCap,
    pub state: QpState,
    pub attr: QpAttr,
    pub sq: VecDeque<SendWqe>,
    pub rq: VecDeque<RecvWqe>,
    pub next_wqe: u64,
    /// In SQD, true until the in-flight WQEs have completed.
    pub sq_draining: bool,
    /// Since it last entered RTR, a request arrived while it was in RTR (COMM_EST raised
    /// once, or not at all on profiles without it).
    pub comm_est: bool,
}

use crate::types::QpState;

impl Qp {
    pub(crate) fn new(pd: PdHandle, init: &QpInitAttr, cap: QpCap) -> Qp {
        Qp {
            qp_type: init.qp_type,
            pd,
            send_cq: init.send_cq,
            recv_cq: init.recv_cq,
            sq_sig_all: init.sq_sig_all,
            cap,
            state: QpState::Reset,
            attr: QpAttr::default(),
            sq: VecDeque::new(),
            rq: VecDeque::new(),
            next_wqe: 0,
            sq_draining: false,
            comm_est: false,
        }
    }

    pub(crate) fn next_id(&mut self) -> WqeId {
        let id = WqeId(self.next_wqe);
        self.next_wqe += 1;
        id
    }

    /// The send WQE `id`: ids grow with every post, so the queue is sorted by id and a binary
    /// search finds it (a deep send queue is searched once per packet). WQEs leave from the
    /// front, so the ids are usually contiguous and `id`'s distance from the front's is its
    /// index: that is tried first, one probe instead of a search's several cache misses.
    pub(crate) fn sq_wqe(&self, id: WqeId) -> Option<&SendWqe> {
        let front = self.sq.front()?;
        if let Some(w) =
            id.0.checked_sub(front.id.0)
                .and_then(|d| self.sq.get(usize::try_from(d).ok()?))
                .filter(|w| w.id == id)
        {
            return Some(w);
        }
        let i = self.sq.partition_point(|w| w.id < id);
        self.sq.get(i).filter(|w| w.id == id)
    }

    /// READ/atomic WQEs started and not yet done.
    pub(crate) fn rd_atomic_in_flight(&self) -> usize {
        self.sq
            .iter()
            .filter(|w| w.state == WqeState::Started && w.wr.opcode.is_read_or_atomic())
            .count()
    }

    /// WQEs started and not yet done.
    pub(crate) fn in_flight(&self) -> usize {
        self.sq
            .iter()
            .filter(|w| w.state == WqeState::Started)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rxe_inline_rule() {
        let req = QpCap {
            max_send_wr: 100,
            max_recv_wr: 16,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 64,
        };
        let got = req.rounded(NicProfile::Rxe);
        assert_eq!(got.max_send_wr, 127);
        assert_eq!(got.max_recv_wr, 31);
        assert_eq!(got.max_inline_data, 64);
        assert_eq!(got.max_send_sge, 4);
        let req = QpCap {
            max_send_sge: 8,
            max_inline_data: 0,
            ..req
        };
        let got = req.rounded(NicProfile::Rxe);
        assert_eq!((got.max_send_sge, got.max_inline_data), (8, 128));
    }

    #[test]
    fn mlx5_and_ibta_rounding() {
        let req = QpCap {
            max_send_wr: 100,
            max_recv_wr: 0,
            max_send_sge: 3,
            max_recv_sge: 3,
            max_inline_data: 60,
        };
        let got = req.rounded(NicProfile::Mlx5);
        assert_eq!(
            (got.max_send_wr, got.max_recv_wr, got.max_recv_sge),
            (128, 0, 4)
        );
        assert_eq!(req.rounded(NicProfile::Ibta), req);
        for p in NicProfile::ALL {
            let got = req.rounded(p);
            assert!(got.max_send_wr >= req.max_send_wr && got.max_send_sge >= req.max_send_sge);
            assert!(
                got.max_recv_sge >= req.max_recv_sge && got.max_inline_data >= req.max_inline_data
            );
        }
    }
}
