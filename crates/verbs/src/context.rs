//! [`Context`]: one NIC's verbs state, and the verbs a host (application) calls: PD, MR, CQ,
//! completion channel and QP management, `modify_qp`/`query_qp`, polling and events
//! (`ibv_alloc_pd.3`, `ibv_reg_mr.3`, `ibv_create_cq.3`, `ibv_create_qp.3`,
//! `ibv_modify_qp.3`, `ibv_poll_cq.3`, `ibv_req_notify_cq.3`, `ibv_get_async_event.3`).
//!
//! Posting lives in [`crate::post`], the transport-facing calls in [`crate::transport`]; all are
//! methods of the same `Context`.
//!
//! # Side effects of `modify_qp` (verbs-spec §1, RXE-qp `rxe_qp_from_attr`)
//!
//! - →RESET discards both queues **without completions** and resets the PSNs and every other
//!   attribute (RXE-qp `rxe_qp_reset`; verbs-spec C40).
//! - →ERR flushes every outstanding send and receive WQE with `WR_FLUSH_ERR`, unsignaled ones
//!   included (IBA 10.7.3.1, quoted in RXE-comp; verbs-spec C21), send queue first.
//! - →SQD stops new send WQEs from starting; WQEs already started continue. When none is left
//!   in flight the QP has drained: `sq_draining` turns false and, if `en_sqd_async_notify` was
//!   set, the async event `SQ_DRAINED` is raised (RXE-req `req_check_sq_drain_done`).
//! - →RTR makes the responder live; →RTS lets send WQEs start, including WQEs posted earlier
//!   (mlx5, rxe) that were waiting in the queue.
//!
//! [`ModifyOutcome`] reports these so the transport can drop its own per-QP state.
//!
//! # QPNs
//!
//! QPNs are handed out from 0x11 upward (0 and 1 are the special QP0/QP1) and skip numbers in
//! use; real NICs pick other values, so programs must exchange QPNs, never assume them.

use std::collections::BTreeMap;

use crate::cq::{CompChannel, Cq, CqPush};
use crate::error::VerbsError;
use crate::flags::{AccessFlags, QpAttrMask};
use crate::memory::Memory;
use crate::modify::{ModifyWarning, QpAttr, validate};
use crate::mr::{LocalAccessError, Mr, MrTable, RemoteAccessError, check_registration};
use crate::profile::{DeviceAttr, NicProfile};
use crate::qp::{Qp, QpCap, QpInitAttr};
use crate::types::{ChannelHandle, CqHandle, MrHandle, PdHandle, QpNum, QpState, QpType};
use crate::wc::{Wc, WcStatus};

pub use crate::async_event::AsyncEvent;
use crate::async_event::AsyncQueue;

/// Something the host should model as an interrupt or wake-up.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Notification {
    /// An armed CQ got a completion: a completion event (interrupt) on its channel.
    CompletionEvent {
        /// The CQ.
        cq: CqHandle,
        /// Its channel, if it has one.
        channel: Option<ChannelHandle>,
    },
    /// An async event was queued.
    Async(AsyncEvent),
}

/// WQEs dropped by a transition.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct FlushReport {
    /// Send WQEs flushed (each wrote a `WR_FLUSH_ERR` CQE) or discarded.
    pub send: usize,
    /// Receive WQEs flushed or discarded.
    pub recv: usize,
}

/// A side effect of a successful `modify_qp`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ModifyEffect {
    /// →RESET: queues discarded with no completion; PSNs and attributes reset.
    Reset(FlushReport),
    /// →ERR: outstanding WQEs completed with `WR_FLUSH_ERR`.
    Flushed(FlushReport),
    /// INIT→RTR: the responder accepts requests from now on.
    EnteredRtr,
    /// →RTS: send WQEs may start.
    EnteredRts,
    /// RTS→SQD: no new send WQE starts. `draining` is true while started WQEs are in flight.
    EnteredSqd {
        /// WQEs still in flight.
        draining: bool,
    },
}

/// What a successful `modify_qp` did.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ModifyOutcome {
    /// The state before.
    pub from: QpState,
    /// The state after.
    pub to: QpState,
    /// Side effects, in the order they happened.
    pub effects: Vec<ModifyEffect>,
    /// Values that were accepted but changed (PSNs masked to 24 bits).
    pub warnings: Vec<ModifyWarning>,
}

/// What `destroy_qp` dropped with the QP.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct DestroyReport {
    /// Send WQEs still queued, gone without a completion.
    pub send_wqes: usize,
    /// Receive WQEs still queued, gone without a completion.
    pub recv_wqes: usize,
    /// The QP's completions removed from its CQs ([`NicProfile::destroy_qp_cleans_cq`]).
    pub cqes_removed: usize,
}

/// What `create_qp` returned.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CreatedQp {
    /// The new QP's number.
    pub qpn: QpNum,
    /// The capabilities granted (≥ those asked for).
    pub cap: QpCap,
}

#[derive(Clone, Copy, Debug, Default)]
struct Pd {
    users: u32,
}

/// What [`Context::qp_queues`] lists.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct QpQueues {
    /// Send WRs not yet retired: (wr_id, opcode, where each is in its life).
    pub send: Vec<(u64, crate::wr::SendOpcode, crate::qp::WqeState)>,
    /// Receive WRs not yet consumed: their wr_ids.
    pub recv: Vec<u64>,
}

/// How far apart two hosts' address spaces start ([`Context::for_host`]), in bytes: 256 MiB,
/// so host k's first buffer is at `(k + 1) × 0x1000_0000` (a choice for readability, not a
/// kernel layout).
pub const HOST_VA_STRIDE: u64 = 0x1000_0000;
/// How far apart two hosts' MR key indexes start ([`Context::for_host`]): 4096 MRs.
pub const HOST_KEY_STRIDE: u32 = 0x1000;

/// One NIC's verbs state (one per simulated host): its objects, its host's memory and its
/// queues. See the crate docs for who calls what.
#[derive(Clone, Debug)]
pub struct Context {
    profile: NicProfile,
    device: DeviceAttr,
    pub(crate) memory: Memory,
    pds: Vec<Option<Pd>>,
    pub(crate) mrs: MrTable,
    pub(crate) cqs: Vec<Option<Cq>>,
    channels: Vec<Option<CompChannel>>,
    pub(crate) qps: BTreeMap<QpNum, Qp>,
    next_qpn: u32,
    async_events: AsyncQueue,
    notifications: Vec<Notification>,
}

impl Context {
    /// A context with the profile's default device attributes ([`NicProfile::device_attr`]).
    pub fn new(profile: NicProfile) -> Context {
        Context::with_device(profile, profile.device_attr())
    }

    /// The context of host number `host` (0-based) of a simulated fabric: its buffers start
    /// at `BASE_VA + host × HOST_VA_STRIDE` and its MR keys' index part at
    /// `host × HOST_KEY_STRIDE`, so every host hands out its own addresses and keys (host 0:
    /// the first buffer at 0x1000_0000, the first key 0x101; host 1: 0x2000_0000 and
    /// 0x100101). Deterministic: the same host number gives the same numbers.
    pub fn for_host(profile: NicProfile, host: u32) -> Context {
        let mut ctx = Context::new(profile);
        ctx.memory = Memory::with_base(
            Memory::BASE_VA.saturating_add(u64::from(host).saturating_mul(HOST_VA_STRIDE)),
        );
        ctx.mrs = MrTable::with_key_base(host.wrapping_mul(HOST_KEY_STRIDE));
        ctx
    }

    /// A context with explicit device attributes.
    pub fn with_device(profile: NicProfile, device: DeviceAttr) -> Context {
        Context {
            profile,
            device,
            memory: Memory::new(),
            pds: Vec::new(),
            mrs: MrTable::default(),
            cqs: Vec::new(),
            channels: Vec::new(),
            qps: BTreeMap::new(),
            next_qpn: 0x11,
            async_events: AsyncQueue::default(),
            notifications: Vec::new(),
        }
    }

    /// The NIC profile.
    pub fn profile(&self) -> NicProfile {
        self.profile
    }
    /// `ibv_query_device`.
    pub fn device(&self) -> &DeviceAttr {
        &self.device
    }
    /// The host's memory.
    pub fn memory(&self) -> &Memory {
        &self.memory
    }
    /// The host's memory, for the application to fill and inspect buffers.
    pub fn memory_mut(&mut self) -> &mut Memory {
        &mut self.memory
    }

    // ---- protection domains ----

    /// `ibv_alloc_pd`.
    pub fn alloc_pd(&mut self) -> Result<PdHandle, VerbsError> {
        if self.pds.iter().flatten().count() >= self.device.max_pd as usize {
            return Err(VerbsError::TooMany {
                what: "alloc_pd",
                max: self.device.max_pd,
            });
        }
        self.pds.push(Some(Pd::default()));
        Ok(PdHandle(self.pds.len() as u32 - 1))
    }

    /// `ibv_dealloc_pd`: EBUSY while MRs or QPs use it.
    pub fn dealloc_pd(&mut self, pd: PdHandle) -> Result<(), VerbsError> {
        let slot = self
            .pds
            .get_mut(pd.0 as usize)
            .ok_or(VerbsError::NoSuchPd(pd))?;
        let p = slot.as_ref().ok_or(VerbsError::NoSuchPd(pd))?;
        if p.users > 0 {
            return Err(VerbsError::PdInUse { pd, users: p.users });
        }
        *slot = None;
        Ok(())
    }

    fn pd_mut(&mut self, pd: PdHandle) -> Result<&mut Pd, VerbsError> {
        self.pds
            .get_mut(pd.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(VerbsError::NoSuchPd(pd))
    }

    // ---- memory regions ----

    /// `ibv_reg_mr` (rules in [`crate::mr`]). The returned [`Mr`] has the keys and the number
    /// of 4 KiB pages pinned, which the host charges as pin plus translation-entry cost.
    pub fn reg_mr(
        &mut self,
        pd: PdHandle,
        va: u64,
        len: u64,
        access: AccessFlags,
    ) -> Result<Mr, VerbsError> {
        self.pd_mut(pd)?;
        check_registration(access, va, len, &self.device, &self.memory)?;
        if self.mrs.iter().count() >= self.device.max_mr as usize {
            return Err(VerbsError::TooMany {
                what: "reg_mr",
                max: self.device.max_mr,
            });
        }
        let mr = self.mrs.insert(pd, va, len, access);
        self.pd_mut(pd)?.users += 1;
        Ok(mr)
    }

    /// `ibv_dereg_mr`. Later uses of its keys fail their checks.
    pub fn dereg_mr(&mut self, mr: MrHandle) -> Result<(), VerbsError> {
        let removed = self.mrs.remove(mr.0).ok_or(VerbsError::NoSuchMr(mr))?;
        if let Ok(p) = self.pd_mut(removed.pd) {
            p.users = p.users.saturating_sub(1);
        }
        Ok(())
    }

    /// The MR named by `mr`.
    pub fn mr(&self, mr: MrHandle) -> Option<&Mr> {
        self.mrs.get(mr.0)
    }

    /// The MR table (every live MR, in key order).
    pub fn mrs(&self) -> &MrTable {
        &self.mrs
    }

    /// Checks a local access through `lkey` by a QP in `pd` ([`MrTable::check_local`]: key,
    /// PD, access, range; zero length checks nothing).
    pub fn check_local(
        &self,
        lkey: u32,
        pd: PdHandle,
        va: u64,
        len: u64,
        needed: AccessFlags,
    ) -> Result<(), LocalAccessError> {
        self.mrs.check_local(lkey, pd, va, len, needed)
    }

    /// Checks a remote access through `rkey` at a responder QP in `pd`
    /// ([`MrTable::check_remote`]: key, PD, access, range; zero length checks nothing).
    pub fn check_remote(
        &self,
        rkey: u32,
        pd: PdHandle,
        va: u64,
        len: u64,
        needed: AccessFlags,
    ) -> Result<(), RemoteAccessError> {
        self.mrs.check_remote(rkey, pd, va, len, needed)
    }

    // ---- completion channels and CQs ----

    /// `ibv_create_comp_channel`.
    pub fn create_comp_channel(&mut self) -> ChannelHandle {
        self.channels.push(Some(CompChannel::default()));
        ChannelHandle(self.channels.len() as u32 - 1)
    }

    /// `ibv_destroy_comp_channel`: EBUSY while CQs use it.
    pub fn destroy_comp_channel(&mut self, channel: ChannelHandle) -> Result<(), VerbsError> {
        let slot = self
            .channels
            .get_mut(channel.0 as usize)
            .ok_or(VerbsError::NoSuchChannel(channel))?;
        let c = slot.as_ref().ok_or(VerbsError::NoSuchChannel(channel))?;
        if c.cq_refs > 0 {
            return Err(VerbsError::ChannelInUse {
                channel,
                cqs: c.cq_refs,
            });
        }
        *slot = None;
        Ok(())
    }

    /// The completion channel named by `channel`.
    pub fn channel(&self, channel: ChannelHandle) -> Option<&CompChannel> {
        self.channels
            .get(channel.0 as usize)
            .and_then(Option::as_ref)
    }

    fn channel_mut(&mut self, channel: ChannelHandle) -> Result<&mut CompChannel, VerbsError> {
        self.channels
            .get_mut(channel.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(VerbsError::NoSuchChannel(channel))
    }

    /// `ibv_create_cq`: returns the handle and the capacity granted (≥ `cqe`, see
    /// [`NicProfile::round_cqe`]). EINVAL for 0 or above `max_cqe`.
    pub fn create_cq(
        &mut self,
        cqe: u32,
        channel: Option<ChannelHandle>,
    ) -> Result<(CqHandle, u32), VerbsError> {
        if cqe == 0 || cqe > self.device.max_cqe {
            return Err(VerbsError::CqSize {
                requested: cqe,
                max: self.device.max_cqe,
            });
        }
        if self.cqs.iter().flatten().count() >= self.device.max_cq as usize {
            return Err(VerbsError::TooMany {
                what: "create_cq",
                max: self.device.max_cq,
            });
        }
        if let Some(ch) = channel {
            self.channel_mut(ch)?.cq_refs += 1;
        }
        let size = self.profile.round_cqe(cqe);
        self.cqs.push(Some(Cq::new(size, channel)));
        Ok((CqHandle(self.cqs.len() as u32 - 1), size))
    }

    /// `ibv_destroy_cq`: EBUSY while QPs use it or events are unacknowledged.
    pub fn destroy_cq(&mut self, cq: CqHandle) -> Result<(), VerbsError> {
        let c = self.cq(cq).ok_or(VerbsError::NoSuchCq(cq))?;
        if c.qp_refs > 0 {
            return Err(VerbsError::CqInUse { cq, qps: c.qp_refs });
        }
        if c.events_unacked > 0 {
            return Err(VerbsError::CqEventsUnacked {
                cq,
                unacked: c.events_unacked,
            });
        }
        let unacked = self.async_events.unacked_cq(cq);
        if unacked > 0 {
            return Err(VerbsError::CqAsyncEventsUnacked { cq, unacked });
        }
        let channel = c.channel;
        self.async_events.forget_cq(cq);
        self.cqs[cq.0 as usize] = None;
        if let Some(ch) = channel
            && let Ok(c) = self.channel_mut(ch)
        {
            c.cq_refs -= 1;
            c.events.retain(|&e| e != cq);
        }
        Ok(())
    }

    /// The CQ named by `cq`.
    pub fn cq(&self, cq: CqHandle) -> Option<&Cq> {
        self.cqs.get(cq.0 as usize).and_then(Option::as_ref)
    }

    fn cq_mut(&mut self, cq: CqHandle) -> Result<&mut Cq, VerbsError> {
        self.cqs
            .get_mut(cq.0 as usize)
            .and_then(Option::as_mut)
            .ok_or(VerbsError::NoSuchCq(cq))
    }

    /// `ibv_poll_cq`: up to `max` completions, oldest first.
    pub fn poll_cq(&mut self, cq: CqHandle, max: usize) -> Result<Vec<Wc>, VerbsError> {
        Ok(self.cq_mut(cq)?.poll(max))
    }

    /// `ibv_req_notify_cq`: arm the CQ for one completion event (see [`crate::cq`]).
    pub fn req_notify_cq(&mut self, cq: CqHandle, solicited_only: bool) -> Result<(), VerbsError> {
        let profile = self.profile;
        let c = self.cq_mut(cq)?;
        if c.channel.is_none() && !profile.notify_without_channel_ok() {
            return Err(VerbsError::NotifyWithoutChannel { cq });
        }
        c.req_notify(solicited_only);
        Ok(())
    }

    /// `ibv_get_cq_event`: the next CQ with an event on `channel`, or `None` if there is none
    /// (the real call would block). The event must be acknowledged with `ack_cq_events`.
    pub fn get_cq_event(&mut self, channel: ChannelHandle) -> Result<Option<CqHandle>, VerbsError> {
        let Some(cq) = self.channel_mut(channel)?.events.pop_front() else {
            return Ok(None);
        };
        self.cq_mut(cq)?.events_unacked += 1;
        Ok(Some(cq))
    }

    /// `ibv_ack_cq_events`.
    pub fn ack_cq_events(&mut self, cq: CqHandle, n: u32) -> Result<(), VerbsError> {
        let c = self.cq_mut(cq)?;
        if n > c.events_unacked {
            return Err(VerbsError::AckTooMany {
                cq,
                acked: n,
                unacked: c.events_unacked,
            });
        }
        c.events_unacked -= n;
        Ok(())
    }

    /// `ibv_get_async_event` (non-blocking): the oldest async event, which must then be
    /// acknowledged with [`Context::ack_async_event`] before its QP or CQ can be destroyed.
    pub fn get_async_event(&mut self) -> Option<AsyncEvent> {
        self.async_events.take()
    }

    /// Whether an async event is waiting (the async fd is readable).
    pub fn async_event_pending(&self) -> bool {
        self.async_events.pending()
    }

    /// `ibv_ack_async_event`: EINVAL when no event about that object is taken and not yet
    /// acknowledged.
    pub fn ack_async_event(&mut self, e: AsyncEvent) -> Result<(), VerbsError> {
        self.async_events.ack(e)
    }

    /// Every completion event and async event raised since the last call, in order. The
    /// host turns these into interrupts and wake-ups.
    pub fn take_notifications(&mut self) -> Vec<Notification> {
        std::mem::take(&mut self.notifications)
    }

    pub(crate) fn raise_async(&mut self, e: AsyncEvent) {
        self.async_events.push(e);
        self.notifications.push(Notification::Async(e));
    }

    /// Pushes a completion into `cq`, raising events as [`crate::cq`] describes.
    pub(crate) fn push_wc(&mut self, cq: CqHandle, wc: Wc, solicited: bool) -> CqPush {
        let Some(c) = self.cqs.get_mut(cq.0 as usize).and_then(Option::as_mut) else {
            return CqPush::Dropped;
        };
        let r = c.push(wc, solicited);
        let channel = c.channel;
        match r {
            CqPush::Queued { event: true } => {
                if let Some(ch) = channel
                    && let Some(Some(chan)) = self.channels.get_mut(ch.0 as usize)
                {
                    chan.events.push_back(cq);
                }
                self.notifications
                    .push(Notification::CompletionEvent { cq, channel });
            }
            CqPush::Overrun => {
                self.raise_async(AsyncEvent::CqErr { cq });
                // The QP whose completion did not fit can no longer report its work.
                if self.profile.raises_qp_error_events() {
                    self.raise_async(AsyncEvent::QpFatal { qpn: wc.qp_num });
                }
            }
            CqPush::Queued { event: false } | CqPush::Dropped => {}
        }
        r
    }

    // ---- queue pairs ----

    /// `ibv_create_qp`: EINVAL if a capability is above the device limit; returns the QPN and
    /// the capabilities granted (see [`crate::qp`]).
    pub fn create_qp(&mut self, pd: PdHandle, init: &QpInitAttr) -> Result<CreatedQp, VerbsError> {
        self.pd_mut(pd)?;
        self.cq(init.send_cq)
            .ok_or(VerbsError::NoSuchCq(init.send_cq))?;
        self.cq(init.recv_cq)
            .ok_or(VerbsError::NoSuchCq(init.recv_cq))?;
        let d = self.device;
        let inline_max = if init.qp_type == QpType::Ud {
            d.max_inline_data_ud
        } else {
            d.max_inline_data
        };
        let c = init.cap;
        for (field, requested, max) in [
            ("max_send_wr", c.max_send_wr, d.max_qp_wr),
            ("max_recv_wr", c.max_recv_wr, d.max_qp_wr),
            ("max_send_sge", c.max_send_sge, d.max_sge),
            ("max_recv_sge", c.max_recv_sge, d.max_sge),
            ("max_inline_data", c.max_inline_data, inline_max),
        ] {
            if requested > max {
                return Err(VerbsError::QpCapTooLarge {
                    field,
                    requested,
                    max,
                });
            }
        }
        if self.qps.len() >= d.max_qp as usize {
            return Err(VerbsError::TooMany {
                what: "create_qp",
                max: d.max_qp,
            });
        }
        let cap = c.rounded(self.profile);
        let qpn = self.alloc_qpn();
        self.qps.insert(qpn, Qp::new(pd, init, cap));
        self.pd_mut(pd)?.users += 1;
        self.cq_mut(init.send_cq)?.qp_refs += 1;
        self.cq_mut(init.recv_cq)?.qp_refs += 1;
        Ok(CreatedQp { qpn, cap })
    }

    fn alloc_qpn(&mut self) -> QpNum {
        loop {
            let n = self.next_qpn;
            self.next_qpn = if n >= QpNum::MAX { 0x11 } else { n + 1 };
            let qpn = QpNum::masked(n);
            if !self.qps.contains_key(&qpn) {
                return qpn;
            }
        }
    }

    /// `ibv_destroy_qp`. Outstanding WQEs vanish without completions (drain in ERR first to
    /// learn their fate); under [`NicProfile::destroy_qp_cleans_cq`] the QP's completions still
    /// waiting in its CQs are removed too. The report counts both.
    pub fn destroy_qp(&mut self, qpn: QpNum) -> Result<DestroyReport, VerbsError> {
        self.qp(qpn)?;
        let unacked = self.async_events.unacked_qp(qpn);
        if unacked > 0 {
            return Err(VerbsError::QpAsyncEventsUnacked { qpn, unacked });
        }
        self.async_events.forget_qp(qpn);
        let qp = self.qps.remove(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let mut report = DestroyReport {
            send_wqes: qp.sq.len(),
            recv_wqes: qp.rq.len(),
            cqes_removed: 0,
        };
        if let Ok(p) = self.pd_mut(qp.pd) {
            p.users = p.users.saturating_sub(1);
        }
        let clean = self.profile.destroy_qp_cleans_cq();
        for (i, cq) in [qp.send_cq, qp.recv_cq].into_iter().enumerate() {
            if let Ok(c) = self.cq_mut(cq) {
                c.qp_refs = c.qp_refs.saturating_sub(1);
                // A CQ used for both queues is cleaned once.
                if clean && (i == 0 || qp.recv_cq != qp.send_cq) {
                    let before = c.entries.len();
                    c.entries.retain(|w| w.qp_num != qpn);
                    report.cqes_removed += before - c.entries.len();
                }
            }
        }
        Ok(report)
    }

    /// The QP's state.
    pub fn qp_state(&self, qpn: QpNum) -> Result<QpState, VerbsError> {
        Ok(self.qp(qpn)?.state)
    }

    /// The QP's queues as a debugger would list them: the send WRs posted and not yet retired
    /// (wr_id, opcode, and whether the transport has started them), oldest first, and the
    /// receive WRs posted and not yet consumed.
    pub fn qp_queues(&self, qpn: QpNum) -> Result<QpQueues, VerbsError> {
        let qp = self.qp(qpn)?;
        Ok(QpQueues {
            send: qp
                .sq
                .iter()
                .map(|w| (w.wr.wr_id, w.wr.opcode, w.state))
                .collect(),
            recv: qp.rq.iter().map(|w| w.wr_id).collect(),
        })
    }

    /// The `wr_id` of send WQE `id` of QP `qpn`, while it is in the send queue.
    pub fn send_wr_id(&self, qpn: QpNum, id: crate::qp::WqeId) -> Option<u64> {
        self.qp(qpn)
            .ok()?
            .sq
            .iter()
            .find(|w| w.id == id)
            .map(|w| w.wr.wr_id)
    }

    pub(crate) fn qp(&self, qpn: QpNum) -> Result<&Qp, VerbsError> {
        self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))
    }

    pub(crate) fn qp_mut(&mut self, qpn: QpNum) -> Result<&mut Qp, VerbsError> {
        self.qps.get_mut(&qpn).ok_or(VerbsError::NoSuchQp(qpn))
    }

    /// QPNs in use, in order.
    pub fn qp_nums(&self) -> impl Iterator<Item = QpNum> + '_ {
        self.qps.keys().copied()
    }

    /// `ibv_query_qp`: the current attributes (with `qp_state`, `cur_qp_state` and
    /// `sq_draining` filled in) and the creation attributes with the granted capabilities.
    pub fn query_qp(&self, qpn: QpNum) -> Result<(QpAttr, QpInitAttr), VerbsError> {
        let qp = self.qp(qpn)?;
        let attr = QpAttr {
            qp_state: qp.state,
            cur_qp_state: qp.state,
            sq_draining: qp.sq_draining,
            ..qp.attr
        };
        let init = QpInitAttr {
            qp_type: qp.qp_type,
            send_cq: qp.send_cq,
            recv_cq: qp.recv_cq,
            cap: qp.cap,
            sq_sig_all: qp.sq_sig_all,
        };
        Ok((attr, init))
    }

    /// `ibv_modify_qp`. On error nothing changes; on success see [`ModifyOutcome`] and the
    /// module docs for the side effects.
    pub fn modify_qp(
        &mut self,
        qpn: QpNum,
        attr: &QpAttr,
        mask: QpAttrMask,
    ) -> Result<ModifyOutcome, VerbsError> {
        let profile = self.profile;
        let device = self.device;
        let qp = self.qp_mut(qpn)?;
        let v = validate(
            qp.qp_type,
            qp.state,
            qp.sq_draining,
            attr,
            mask,
            &device,
            profile,
        )?;
        let from = qp.state;
        let mut effects = Vec::new();
        qp.attr.apply(attr, mask);
        if profile.rounds_rd_atomic() {
            qp.attr.max_rd_atomic = round_rd_atomic(qp.attr.max_rd_atomic);
            qp.attr.max_dest_rd_atomic = round_rd_atomic(qp.attr.max_dest_rd_atomic);
        }
        let mut drained_now = false;
        match (from, v.to) {
            (_, QpState::Reset) => {
                let report = FlushReport {
                    send: qp.sq.len(),
                    recv: qp.rq.len(),
                };
                qp.sq.clear();
                qp.rq.clear();
                qp.attr = QpAttr::default();
                qp.sq_draining = false;
                qp.state = QpState::Reset;
                effects.push(ModifyEffect::Reset(report));
            }
            (QpState::Err, QpState::Err) => {}
            (_, QpState::Err) => {
                let report = self.enter_error(qpn);
                effects.push(ModifyEffect::Flushed(report));
            }
            (QpState::Rts, QpState::Sqd) => {
                qp.state = QpState::Sqd;
                let draining = qp.in_flight() > 0;
                qp.sq_draining = draining;
                effects.push(ModifyEffect::EnteredSqd { draining });
                drained_now = !draining && qp.attr.en_sqd_async_notify;
            }
            (QpState::Init, QpState::Rtr) => {
                qp.state = QpState::Rtr;
                qp.comm_est = false;
                effects.push(ModifyEffect::EnteredRtr);
            }
            (QpState::Rtr | QpState::Sqd | QpState::Sqe, QpState::Rts) => {
                qp.state = QpState::Rts;
                qp.sq_draining = false;
                effects.push(ModifyEffect::EnteredRts);
            }
            (_, to) => qp.state = to,
        }
        if drained_now {
            self.raise_async(AsyncEvent::SqDrained { qpn });
        }
        Ok(ModifyOutcome {
            from,
            to: v.to,
            effects,
            warnings: v.warnings,
        })
    }

    /// Moves the QP to ERR and flushes both queues with `WR_FLUSH_ERR` (send queue first).
    /// Does nothing if it is already in ERR.
    pub(crate) fn enter_error(&mut self, qpn: QpNum) -> FlushReport {
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return FlushReport::default();
        };
        if qp.state == QpState::Err {
            return FlushReport::default();
        }
        qp.state = QpState::Err;
        qp.sq_draining = false;
        let sq: Vec<u64> = qp.sq.drain(..).map(|w| w.wr.wr_id).collect();
        let rq: Vec<u64> = qp.rq.drain(..).map(|w| w.wr_id).collect();
        let (send_cq, recv_cq) = (qp.send_cq, qp.recv_cq);
        for &wr_id in &sq {
            self.push_wc(send_cq, Wc::error(wr_id, WcStatus::WrFlushErr, qpn), false);
        }
        for &wr_id in &rq {
            self.push_wc(recv_cq, Wc::error(wr_id, WcStatus::WrFlushErr, qpn), false);
        }
        FlushReport {
            send: sq.len(),
            recv: rq.len(),
        }
    }
}

/// rxe's rounding of `max_rd_atomic`/`max_dest_rd_atomic`: up to a power of two, 0 stays 0.
fn round_rd_atomic(v: u8) -> u8 {
    if v == 0 {
        0
    } else {
        v.checked_next_power_of_two().unwrap_or(v)
    }
}

#[cfg(test)]
mod tests;
