//! Completion queues and completion channels (`ibv_create_cq.3`, `ibv_poll_cq.3`,
//! `ibv_req_notify_cq.3`, `ibv_get_cq_event.3`; verbs-spec §2 "CQ overrun").
//!
//! # Capacity and overrun
//!
//! A CQ holds at most `cqe` completions (the size `create_cq` returned, ≥ the size asked for).
//! A completion pushed into a full CQ is an **overrun**: the completion is lost, the CQ enters
//! the error state and the async event `CQ_ERR` is raised ("CQ overrun → async
//! IBV_EVENT_CQ_ERR and the CQ becomes unusable", `ibv_poll_cq.3:81-84`). After that every
//! push is dropped (reported as [`CqPush::Dropped`]); completions already in the CQ can still
//! be polled. rdmalab also moves the QP whose completion overran to ERR, as rxe's responder
//! does on a CQ overflow (RXE-resp RESPST_ERR_CQ_OVERFLOW).
//!
//! # Notification
//!
//! `req_notify_cq(cq, solicited_only)` arms the CQ once (`ibv_req_notify_cq.3`): the next
//! completion added afterwards raises one completion event on the CQ's channel and disarms the
//! CQ; completions already queued do not. A solicited-only arm fires only for a receive
//! completion of a message with the solicited-event bit or for an error completion. Arming an
//! armed CQ with "any" widens a solicited-only arm. The push that raises an event says so
//! ([`CqPush::Queued`]`{ event: true }`), so the host can model the interrupt and the wake-up.
//!
//! Events queue on the channel (`get_cq_event`) and must be acknowledged
//! (`ack_cq_events`); `destroy_cq` with unacknowledged events would block forever in
//! libibverbs, so rdmalab refuses it with EBUSY instead.

use std::collections::VecDeque;

use crate::types::{ChannelHandle, CqHandle};
use crate::wc::Wc;

/// How a CQ is armed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum NotifyArm {
    /// The next completion of any kind raises an event.
    Any,
    /// The next solicited or error completion raises an event.
    SolicitedOnly,
}

/// What happened to a pushed completion.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum CqPush {
    /// Queued; `event` is true if it raised a completion event (the CQ was armed for it).
    Queued {
        /// An event was raised on the CQ's channel.
        event: bool,
    },
    /// The CQ was full: this push overran it, the completion is lost and the CQ is now in
    /// error.
    Overrun,
    /// The CQ was already in error: the completion is dropped.
    Dropped,
}

/// A completion queue.
#[derive(Clone, Debug)]
pub struct Cq {
    /// Capacity.
    pub(crate) cqe: u32,
    pub(crate) entries: VecDeque<Wc>,
    pub(crate) in_error: bool,
    pub(crate) arm: Option<NotifyArm>,
    pub(crate) channel: Option<ChannelHandle>,
    /// Events handed out by `get_cq_event` and not yet acknowledged.
    pub(crate) events_unacked: u32,
    /// Events raised in total.
    pub(crate) events_raised: u64,
    /// QPs using this CQ (as send or receive CQ; a QP using it for both counts twice).
    pub(crate) qp_refs: u32,
}

impl Cq {
    pub(crate) fn new(cqe: u32, channel: Option<ChannelHandle>) -> Cq {
        Cq {
            cqe,
            entries: VecDeque::new(),
            in_error: false,
            arm: None,
            channel,
            events_unacked: 0,
            events_raised: 0,
            qp_refs: 0,
        }
    }

    /// Capacity.
    pub fn cqe(&self) -> u32 {
        self.cqe
    }
    /// Completions waiting to be polled.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// True if no completion waits.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// The completions waiting to be polled, oldest first (a look, not a poll).
    pub fn entries(&self) -> impl Iterator<Item = &Wc> {
        self.entries.iter()
    }
    /// True after an overrun.
    pub fn in_error(&self) -> bool {
        self.in_error
    }
    /// The current arm, if any.
    pub fn arm(&self) -> Option<NotifyArm> {
        self.arm
    }
    /// The completion channel, if any.
    pub fn channel(&self) -> Option<ChannelHandle> {
        self.channel
    }
    /// Completion events raised so far.
    pub fn events_raised(&self) -> u64 {
        self.events_raised
    }
    /// Completion events taken with `get_cq_event` and not yet acknowledged.
    pub fn events_unacked(&self) -> u32 {
        self.events_unacked
    }

    /// Adds a completion. `solicited` is true for a receive completion of a message that
    /// carried the solicited-event bit.
    pub(crate) fn push(&mut self, wc: Wc, solicited: bool) -> CqPush {
        if self.in_error {
            return CqPush::Dropped;
        }
        if self.entries.len() >= self.cqe as usize {
            self.in_error = true;
            return CqPush::Overrun;
        }
        self.entries.push_back(wc);
        let fires = match self.arm {
            None => false,
            Some(NotifyArm::Any) => true,
            Some(NotifyArm::SolicitedOnly) => solicited || !wc.status.is_success(),
        };
        if fires {
            self.arm = None;
            self.events_raised += 1;
        }
        CqPush::Queued { event: fires }
    }

    /// Removes up to `max` completions, oldest first.
    pub(crate) fn poll(&mut self, max: usize) -> Vec<Wc> {
        let n = max.min(self.entries.len());
        self.entries.drain(..n).collect()
    }

    pub(crate) fn req_notify(&mut self, solicited_only: bool) {
        self.arm = match (self.arm, solicited_only) {
            (Some(NotifyArm::Any), _) | (_, false) => Some(NotifyArm::Any),
            (_, true) => Some(NotifyArm::SolicitedOnly),
        };
    }
}

/// A completion channel: a queue of CQ events (`struct ibv_comp_channel`).
#[derive(Clone, Debug, Default)]
pub struct CompChannel {
    pub(crate) events: VecDeque<CqHandle>,
    pub(crate) cq_refs: u32,
}

impl CompChannel {
    /// Events waiting for `get_cq_event`.
    pub fn pending(&self) -> usize {
        self.events.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::QpNum;
    use crate::wc::{WcOpcode, WcStatus};

    fn wc(id: u64) -> Wc {
        Wc {
            opcode: Some(WcOpcode::Recv),
            ..Wc::error(id, WcStatus::Success, QpNum::new(17).unwrap())
        }
    }

    #[test]
    fn overrun_puts_the_cq_in_error() {
        let mut cq = Cq::new(2, None);
        assert_eq!(cq.push(wc(1), false), CqPush::Queued { event: false });
        assert_eq!(cq.push(wc(2), false), CqPush::Queued { event: false });
        assert_eq!(cq.push(wc(3), false), CqPush::Overrun);
        assert!(cq.in_error());
        assert_eq!(cq.push(wc(4), false), CqPush::Dropped);
        let got: Vec<u64> = cq.poll(10).iter().map(|w| w.wr_id).collect();
        assert_eq!(
            got,
            [1, 2],
            "queued completions survive; the overrun one is lost"
        );
        assert_eq!(
            cq.push(wc(5), false),
            CqPush::Dropped,
            "the CQ stays unusable"
        );
    }

    #[test]
    fn poll_in_order_up_to_max() {
        let mut cq = Cq::new(8, None);
        for i in 0..5 {
            cq.push(wc(i), false);
        }
        assert_eq!(
            cq.poll(2).iter().map(|w| w.wr_id).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(
            cq.poll(10).iter().map(|w| w.wr_id).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        assert!(cq.poll(1).is_empty());
    }

    #[test]
    fn arm_is_one_shot() {
        let mut cq = Cq::new(8, None);
        cq.push(wc(0), false);
        cq.req_notify(false);
        assert_eq!(cq.push(wc(1), false), CqPush::Queued { event: true });
        assert_eq!(
            cq.push(wc(2), false),
            CqPush::Queued { event: false },
            "disarmed after one event"
        );
        assert_eq!(cq.events_raised(), 1);
    }

    #[test]
    fn solicited_only_fires_for_solicited_or_errors() {
        let mut cq = Cq::new(8, None);
        cq.req_notify(true);
        assert_eq!(cq.push(wc(1), false), CqPush::Queued { event: false });
        assert_eq!(cq.push(wc(2), true), CqPush::Queued { event: true });
        cq.req_notify(true);
        let err = Wc::error(3, WcStatus::WrFlushErr, QpNum::new(17).unwrap());
        assert_eq!(cq.push(err, false), CqPush::Queued { event: true });
        cq.req_notify(true);
        cq.req_notify(false);
        assert_eq!(
            cq.arm(),
            Some(NotifyArm::Any),
            "an any-arm widens a solicited arm"
        );
        cq.req_notify(true);
        assert_eq!(
            cq.arm(),
            Some(NotifyArm::Any),
            "and a solicited arm does not narrow it"
        );
    }
}
