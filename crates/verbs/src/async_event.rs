//! Asynchronous events: what `ibv_get_async_event` returns and `ibv_ack_async_event`
//! acknowledges (ibv_get_async_event(3)). The device raises an event for something no
//! completion can report; the application takes events one at a time and must acknowledge
//! each, because `ibv_destroy_qp` and `ibv_destroy_cq` wait until every event taken about that
//! object has been acknowledged, so that no event names an object after it is gone. rdmalab
//! refuses such a destroy with EBUSY instead of blocking forever, as it does for unacknowledged
//! completion events.
//!
//! Which events each profile raises (research/verbs-spec.md):
//!
//! - `COMM_EST`: a QP in RTR received its first request (IBTA's "communication established";
//!   mlx5 firmware `MLX5_EVENT_TYPE_COMM_EST`). rxe never raises it: its responder
//!   (`rxe_resp.c`) calls no QP event handler at all.
//! - `QP_REQ_ERR` / `QP_ACCESS_ERR` / `QP_FATAL`: the responder detected an invalid request
//!   (NAK Invalid Request or Invalid RD Request), an access violation (NAK Remote Access Error),
//!   or a local operational error (NAK Remote Operational Error) and moved its QP to ERR (mlx5
//!   `MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR`, `_WQ_ACCESS_ERROR`, `_WQ_CATAS_ERROR`; IBTA's
//!   affiliated responder errors). rxe's `rxe_qp_error` moves the QP to ERR without an event.
//!   A CQ overrun also raises `QP_FATAL` for the QP whose completion did not fit (mlx5, ibta).
//! - `CQ_ERR` (overrun) and `SQ_DRAINED` (SQD drained with `en_sqd_async_notify`): every
//!   profile that reaches them.
//!
//! Events taken and acknowledged are counted per object; events still queued when their QP
//! or CQ is destroyed are dropped, as the kernel drops them from the async fd.

use std::collections::{BTreeMap, VecDeque};

use crate::error::VerbsError;
use crate::types::{CqHandle, QpNum};

/// An asynchronous event (`ibv_get_async_event`).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum AsyncEvent {
    /// `IBV_EVENT_CQ_ERR`: the CQ overran and is unusable.
    CqErr {
        /// The CQ.
        cq: CqHandle,
    },
    /// `IBV_EVENT_SQ_DRAINED`: a QP in SQD has no send WQE in flight any more.
    SqDrained {
        /// The QP.
        qpn: QpNum,
    },
    /// `IBV_EVENT_COMM_EST`: a QP in RTR received its first packet.
    CommEst {
        /// The QP.
        qpn: QpNum,
    },
    /// `IBV_EVENT_QP_FATAL`: the QP hit an error no completion can report and is in ERR.
    QpFatal {
        /// The QP.
        qpn: QpNum,
    },
    /// `IBV_EVENT_QP_REQ_ERR`: the responder QP received an invalid request and is in ERR.
    QpReqErr {
        /// The QP.
        qpn: QpNum,
    },
    /// `IBV_EVENT_QP_ACCESS_ERR`: the responder QP detected an access violation and is in ERR.
    QpAccessErr {
        /// The QP.
        qpn: QpNum,
    },
}

impl AsyncEvent {
    /// The libibverbs name without `IBV_EVENT_` (`COMM_EST`, `QP_FATAL`, ...).
    pub const fn name(&self) -> &'static str {
        match self {
            AsyncEvent::CqErr { .. } => "CQ_ERR",
            AsyncEvent::SqDrained { .. } => "SQ_DRAINED",
            AsyncEvent::CommEst { .. } => "COMM_EST",
            AsyncEvent::QpFatal { .. } => "QP_FATAL",
            AsyncEvent::QpReqErr { .. } => "QP_REQ_ERR",
            AsyncEvent::QpAccessErr { .. } => "QP_ACCESS_ERR",
        }
    }

    /// Every event name, for error messages and expectations.
    pub const NAMES: [&'static str; 6] = [
        "COMM_EST",
        "SQ_DRAINED",
        "QP_FATAL",
        "QP_REQ_ERR",
        "QP_ACCESS_ERR",
        "CQ_ERR",
    ];

    /// The QP the event is about (`element.qp`), for QP events.
    pub const fn qp(&self) -> Option<QpNum> {
        match *self {
            AsyncEvent::CqErr { .. } => None,
            AsyncEvent::SqDrained { qpn }
            | AsyncEvent::CommEst { qpn }
            | AsyncEvent::QpFatal { qpn }
            | AsyncEvent::QpReqErr { qpn }
            | AsyncEvent::QpAccessErr { qpn } => Some(qpn),
        }
    }

    /// The CQ the event is about (`element.cq`), for CQ events.
    pub const fn cq(&self) -> Option<CqHandle> {
        match *self {
            AsyncEvent::CqErr { cq } => Some(cq),
            _ => None,
        }
    }
}

/// The async event queue of one device context, with the events taken and not yet
/// acknowledged per object.
#[derive(Clone, Debug, Default)]
pub(crate) struct AsyncQueue {
    queued: VecDeque<AsyncEvent>,
    unacked_qp: BTreeMap<QpNum, u32>,
    unacked_cq: BTreeMap<CqHandle, u32>,
}

impl AsyncQueue {
    pub(crate) fn push(&mut self, e: AsyncEvent) {
        self.queued.push_back(e);
    }

    /// Whether an event is waiting to be taken.
    pub(crate) fn pending(&self) -> bool {
        !self.queued.is_empty()
    }

    /// The oldest event, now counted as taken and not acknowledged.
    pub(crate) fn take(&mut self) -> Option<AsyncEvent> {
        let e = self.queued.pop_front()?;
        if let Some(q) = e.qp() {
            *self.unacked_qp.entry(q).or_default() += 1;
        }
        if let Some(c) = e.cq() {
            *self.unacked_cq.entry(c).or_default() += 1;
        }
        Some(e)
    }

    /// `ibv_ack_async_event`: EINVAL for an event about an object with none taken and
    /// unacknowledged (libibverbs would corrupt its count; rdmalab refuses).
    pub(crate) fn ack(&mut self, e: AsyncEvent) -> Result<(), VerbsError> {
        let slot = match (e.qp(), e.cq()) {
            (Some(q), _) => self.unacked_qp.get_mut(&q),
            (None, Some(c)) => self.unacked_cq.get_mut(&c),
            (None, None) => None,
        };
        match slot {
            Some(n) if *n > 0 => {
                *n -= 1;
                Ok(())
            }
            _ => Err(VerbsError::AsyncAckWithoutEvent { event: e.name() }),
        }
    }

    /// Events about QP `qpn` taken and not acknowledged.
    pub(crate) fn unacked_qp(&self, qpn: QpNum) -> u32 {
        self.unacked_qp.get(&qpn).copied().unwrap_or(0)
    }

    /// Events about CQ `cq` taken and not acknowledged.
    pub(crate) fn unacked_cq(&self, cq: CqHandle) -> u32 {
        self.unacked_cq.get(&cq).copied().unwrap_or(0)
    }

    /// The QP is gone: its queued events go with it.
    pub(crate) fn forget_qp(&mut self, qpn: QpNum) {
        self.queued.retain(|e| e.qp() != Some(qpn));
        self.unacked_qp.remove(&qpn);
    }

    /// The CQ is gone: its queued events go with it.
    pub(crate) fn forget_cq(&mut self, cq: CqHandle) {
        self.queued.retain(|e| e.cq() != Some(cq));
        self.unacked_cq.remove(&cq);
    }
}
