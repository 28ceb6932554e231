//! The verbs API as the application calls it, with what each call costs: the data-path verbs
//! (`post_send`, `post_recv`, `poll_cq`, `req_notify_cq`, `get_cq_event`) run on the
//! application's core ([`APP_CORE`]) and `post_send` rings the doorbell across
//! PCIe; the control-path verbs (`reg_mr`, `create_cq`, `create_qp`, `modify_qp`, the
//! destroy calls) are an ioctl plus a firmware command and block the application thread
//! (`control_path`). `modify_qp` keeps a QP's transport (requester, responder) in step with its
//! verbs state. The semantics (checks, errors, queues) are the `verbs` crate's; this file adds
//! the time they take and what they start in the NIC.

use super::HostIx;
use super::events::{Event, HostEvent};
use super::{APP_CORE, QpEngine, SOFTIRQ_CORE, State, World, retire};
use engine::{Budget, ExecUnit, Stage, TraceRecord};
use fabric::{EtherType, RoceHeaders, roce_frame_len};
use host::{CpuWork, Xfer, XferKind};
use std::collections::VecDeque;
use transport::roce::dcqcn::{self};
use transport::roce::{RcConfig, Requester, Responder, RetransmitMode};
use units::SimTime;
use verbs::{
    AccessFlags, ModifyEffect, ModifyOutcome, PostError, PostReport, QpAttr, QpAttrMask, QpNum,
    VerbsError, Wc,
    wr::{RecvWr, SendWr},
};

impl World {
    /// A blocking control-path verb on host `h`: the ioctl runs on the application's core, the
    /// firmware command on the NIC, plus `per_page` work for `pages` pages (pinning on the CPU,
    /// translation entries on the NIC). The application thread is blocked until it ends.
    pub(super) fn control_path(&mut self, h: HostIx, verb: Stage, pages: u64) {
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let c = host.profile.control;
        let ready = now.max(host.app_ready);
        let (_, mut end) = host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready,
                cost: c.syscall,
                stage: verb,
                setup: true,
            },
        );
        if pages > 0 {
            (_, end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready: end,
                    cost: c.pin_per_page * pages,
                    stage: Stage::PinPages,
                    setup: true,
                },
            );
        }
        let fw = c.firmware_command + c.translation_per_page * pages;
        let node = host.node;
        let start = end;
        end = start + fw;
        self.state.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: if pages > 0 {
                Stage::FirmwareTranslation
            } else {
                Stage::FirmwareCommand
            },
            setup: true,
            start,
            end,
        });
        host.app_ready = end;
        if self.defer_control {
            return;
        }
        // The call returns when the firmware is done: the world runs until then. The span is
        // one command's time, so the events in it are bounded; only the run's own budget
        // (`set_run_budget`) can run out here, and the next run reports it.
        let r = self.run_until(end, &Budget::UNLIMITED);
        self.defer_error(r);
    }

    /// Runs `f`, whose control-path verbs (create_cq, create_qp, reg_mr, modify_qp) on
    /// different hosts overlap in time as they do when each host's application sets itself up
    /// (without it every blocking verb advances the one shared clock, so two hosts' setups
    /// would add up). Each host's calls still run one after another on its own thread. Returns
    /// when every host's application thread is free again.
    pub fn in_parallel<R>(&mut self, f: impl FnOnce(&mut World) -> R) -> R {
        let outer = std::mem::replace(&mut self.defer_control, true);
        let r = f(self);
        self.defer_control = outer;
        if !outer {
            let end = self
                .states()
                .iter()
                .flat_map(|s| s.hosts.iter().map(|h| h.app_ready))
                .max();
            if let Some(end) = end.filter(|e| *e > self.sched.now()) {
                // Bounded like a single control-path call: setup spans, no data yet.
                let r = self.run_until(end, &Budget::UNLIMITED);
                self.defer_error(r);
            }
        }
        r
    }

    /// `ibv_reg_mr`, timed as setup: the ioctl, pinning every 4 KiB page, and the firmware
    /// writing a translation entry per page.
    pub fn reg_mr(
        &mut self,
        h: impl Into<HostIx>,
        pd: verbs::PdHandle,
        va: u64,
        len: u64,
        access: AccessFlags,
    ) -> Result<verbs::Mr, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let mr = self.state.hosts[h.index()]
            .verbs
            .reg_mr(pd, va, len, access)?;
        self.control_path(h, Stage::IoctlRegMr, mr.pages);
        Ok(mr)
    }

    /// `ibv_create_cq`, timed as setup.
    pub fn create_cq(
        &mut self,
        h: impl Into<HostIx>,
        cqe: u32,
        channel: Option<verbs::types::ChannelHandle>,
    ) -> Result<(verbs::CqHandle, u32), VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let r = self.state.hosts[h.index()].verbs.create_cq(cqe, channel)?;
        self.control_path(h, Stage::IoctlCreateCq, 0);
        Ok(r)
    }

    /// `ibv_create_qp`, timed as setup.
    pub fn create_qp(
        &mut self,
        h: impl Into<HostIx>,
        pd: verbs::PdHandle,
        init: &verbs::qp::QpInitAttr,
    ) -> Result<verbs::CreatedQp, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let r = self.state.hosts[h.index()].verbs.create_qp(pd, init)?;
        self.control_path(h, Stage::IoctlCreateQp, 0);
        Ok(r)
    }

    /// When host `h`'s application thread is free (after its blocking verbs calls).
    pub fn app_ready(&self, h: impl Into<HostIx>) -> SimTime {
        let h: HostIx = h.into();
        self.state_of(h).hosts[h.index()].app_ready
    }

    /// `ibv_req_notify_cq`: the next completion on `cq` raises an interrupt and wakes the
    /// thread waiting on its channel.
    pub fn req_notify_cq(
        &mut self,
        h: impl Into<HostIx>,
        cq: verbs::CqHandle,
        solicited_only: bool,
    ) -> Result<(), VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let cost = host.profile.cpu.poll_cq;
        let ready = now.max(host.app_ready);
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready,
                cost,
                stage: Stage::ReqNotifyCq,
                setup: false,
            },
        );
        host.verbs.req_notify_cq(cq, solicited_only)
    }

    /// When the first completion event pending on `channel` reaches the application (its
    /// wake-up ends), if one is pending: a blocking `ibv_get_cq_event` returns then.
    pub fn cq_event_at(
        &self,
        h: impl Into<HostIx>,
        channel: verbs::types::ChannelHandle,
    ) -> Option<SimTime> {
        let h: HostIx = h.into();
        self.state_of(h).hosts[h.index()]
            .cq_events
            .iter()
            .filter(|(_, ch)| *ch == channel)
            .map(|(t, _)| *t)
            .min()
    }

    /// `ibv_get_cq_event`: the CQ whose event has reached the application on `channel`, once
    /// the interrupt and the wake-up have run; `None` before that.
    pub fn get_cq_event(
        &mut self,
        h: impl Into<HostIx>,
        channel: verbs::types::ChannelHandle,
    ) -> Result<Option<verbs::CqHandle>, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let Some(i) = host
            .cq_events
            .iter()
            .position(|&(t, ch)| ch == channel && t <= now)
        else {
            return Ok(None);
        };
        host.cq_events.remove(i);
        host.verbs.get_cq_event(channel)
    }

    /// What the kernel does with an address vector before the driver sees it, when host `h`
    /// has a GID table: the `sgid_index` entry's address family must match the destination
    /// GID's, or the destination MAC cannot be resolved and `modify_qp` fails with EINVAL,
    /// the QP left as it was (Linux `_ib_modify_qp` → `ib_resolve_eth_dmac` →
    /// `rdma_addr_find_l2_eth_by_grh` → `rdma_resolve_ip`). Returns the encapsulation the
    /// entry's type gives, `None` when the call sets no address vector or the host has no
    /// table. Simplification: a RoCE v1 source with a link-local destination (resolved
    /// from the GID without the IP stack) is treated like any other pair of one family.
    pub(super) fn resolve_av(
        &self,
        h: HostIx,
        attr: &QpAttr,
        mask: QpAttrMask,
    ) -> Result<Option<EtherType>, VerbsError> {
        let host = &self.state_of(h).hosts[h.index()];
        if !mask.contains(QpAttrMask::AV) || host.gids.is_empty() {
            return Ok(None);
        }
        let grh = &attr.ah_attr.grh;
        let Some(entry) = host.gids.get(grh.sgid_index as usize) else {
            return Ok(None);
        };
        let family = |g: &verbs::types::Gid| if g.ipv4().is_some() { "IPv4" } else { "IPv6" };
        if family(&entry.gid) != family(&grh.dgid) {
            return Err(VerbsError::Modify(
                verbs::modify::ModifyError::GidFamilyMismatch {
                    index: grh.sgid_index,
                    sgid: entry.gid,
                    sgid_family: family(&entry.gid),
                    dgid: grh.dgid,
                    dgid_family: family(&grh.dgid),
                },
            ));
        }
        Ok(Some(match entry.gid_type {
            verbs::types::GidType::RoceV1 => EtherType::RoceV1,
            verbs::types::GidType::RoceV2 => EtherType::Ipv4,
        }))
    }

    /// `ibv_modify_qp`, keeping the QP's transport in step with its state.
    pub fn modify_qp(
        &mut self,
        h: impl Into<HostIx>,
        qpn: QpNum,
        attr: &QpAttr,
        mask: QpAttrMask,
    ) -> Result<ModifyOutcome, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        if mask.contains(QpAttrMask::STATE)
            && matches!(
                attr.qp_state,
                verbs::types::QpState::Err | verbs::types::QpState::Reset
            )
        {
            self.state.hosts[h.index()].land_recv_cqes(qpn.get());
        }
        let ethertype = self.resolve_av(h, attr, mask)?;
        let out = self.state.hosts[h.index()]
            .verbs
            .modify_qp(qpn, attr, mask)?;
        let line_kbps = self.line_kbps(h);
        self.control_path(h, Stage::IoctlModifyQp, 0);
        let host = &mut self.state.hosts[h.index()];
        let (a, init) = host.verbs.query_qp(qpn)?;
        let service = match init.qp_type {
            verbs::types::QpType::Uc => transport::roce::Service::Uc,
            verbs::types::QpType::Ud => transport::roce::Service::Ud,
            _ => transport::roce::Service::Rc,
        };
        let cfg = RcConfig {
            local_qpn: qpn.get(),
            dest_qpn: a.dest_qp_num,
            pmtu: a.path_mtu.bytes(),
            sq_psn: a.sq_psn,
            rq_psn: a.rq_psn,
            timeout: a.timeout,
            retry_cnt: a.retry_cnt,
            rnr_retry: a.rnr_retry,
            min_rnr_timer: a.min_rnr_timer,
            max_rd_atomic: a.max_rd_atomic,
            max_dest_rd_atomic: a.max_dest_rd_atomic,
            adaptive_min: self.state.adaptive_min,
            mode: if self.state.selective_window.is_some() {
                RetransmitMode::SelectiveRepeat
            } else {
                RetransmitMode::GoBackN
            },
            max_unacked_psns: self
                .state
                .selective_window
                .unwrap_or(RcConfig::default().max_unacked_psns),
            service,
            qkey: a.qkey,
            ..RcConfig::default()
        };
        let dgid = a.ah_attr.grh.dgid.0;
        let peer = self
            .state
            .by_ip
            .get(&[dgid[12], dgid[13], dgid[14], dgid[15]])
            .copied();
        let e = host.qps.entry(qpn.get()).or_insert_with(|| {
            Box::new(QpEngine {
                req: None,
                resp: None,
                peer: None,
                sport: 0xc000 | ((qpn.get() ^ (qpn.get() >> 14)) & 0x3fff) as u16,
                ecmp_memo: std::cell::Cell::new((u32::MAX, 0, 0)),
                fetched: VecDeque::new(),
                timer_at: None,
                recv_cqes: VecDeque::new(),
                np: dcqcn::Np::default(),
                dest_qpn: 0,
                ethertype: EtherType::Ipv4,
            })
        });
        e.dest_qpn = cfg.dest_qpn;
        if let Some(t) = ethertype {
            e.ethertype = t;
        }
        for effect in &out.effects {
            match effect {
                ModifyEffect::Reset(_) | ModifyEffect::Flushed(_) => {
                    retire(e, &mut host.retired);
                    e.fetched.clear();
                    if matches!(effect, ModifyEffect::Reset(_)) {
                        // A reset QP may count its PSNs from anywhere again.
                        self.state.wr_psns.remove(&(h, qpn.get() & 0xffff));
                    }
                }
                ModifyEffect::EnteredRtr => {
                    e.peer = peer;
                    e.resp = Some(Responder::new(cfg));
                }
                ModifyEffect::EnteredRts => {
                    if e.req.is_none() {
                        let mut r = Requester::new(cfg);
                        if let (Some(p), transport::roce::Service::Rc) =
                            (self.state.dcqcn, cfg.service)
                        {
                            r.set_reaction_point(dcqcn::Rp::new(p, line_kbps), |pkt| {
                                let hdr = RoceHeaders {
                                    bth: pkt.bth,
                                    ext: pkt.ext,
                                    udp_src_port: 0,
                                };
                                roce_frame_len(&hdr, pkt.payload_len) as u64
                            });
                        }
                        e.req = Some(r);
                    }
                    // WQEs posted before RTS (mlx5 accepts them) may start now.
                    self.sched.schedule_at(
                        self.sched.now(),
                        Event::Host(HostEvent::Doorbell {
                            host: h,
                            qpn: qpn.get(),
                        }),
                    );
                }
                ModifyEffect::EnteredSqd { .. } => {}
            }
        }
        // A move to ERR flushes into the CQs now: an armed CQ's event is raised now too.
        let now = self.sched.now();
        self.state.deliver_notifications(h, now);
        Ok(out)
    }

    /// `ibv_post_send`: the WRs are checked and queued now; the CPU builds them and rings the
    /// doorbell, which reaches the NIC over PCIe.
    pub fn post_send(
        &mut self,
        h: impl Into<HostIx>,
        qpn: QpNum,
        wrs: &[SendWr],
    ) -> Result<PostReport, PostError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let result = host.verbs.post_send(qpn, wrs);
        let posted = match &result {
            Ok(_) => wrs.len(),
            Err(e) => e.posted,
        };
        if posted > 0 {
            let cost = host.profile.cpu.post_wr * posted as u64;
            let (_, cpu_end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready: now,
                    cost,
                    stage: Stage::PostSend,
                    setup: false,
                },
            );
            let bf = host.profile.nic.blueflame;
            let bytes = if bf { 64 } else { 8 };
            let (_, landed) = host.pcie.run(
                &mut self.state.tracer,
                now,
                Xfer {
                    kind: XferKind::MmioWrite,
                    at: cpu_end,
                    bytes,
                    stage: if bf {
                        Stage::MmioBlueFlame
                    } else {
                        Stage::MmioDoorbell
                    },
                    setup: false,
                },
            );
            self.sched.schedule_at(
                landed,
                Event::Host(HostEvent::Doorbell {
                    host: h,
                    qpn: qpn.get(),
                }),
            );
        }
        // A post in ERR completes WR_FLUSH_ERR at once, and may raise a completion event.
        self.state.deliver_notifications(h, now);
        result
    }

    /// `ibv_post_recv`.
    pub fn post_recv(
        &mut self,
        h: impl Into<HostIx>,
        qpn: QpNum,
        wrs: &[RecvWr],
    ) -> Result<PostReport, PostError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let result = host.verbs.post_recv(qpn, wrs);
        let cost = host.profile.cpu.post_wr * wrs.len() as u64;
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready: now,
                cost,
                stage: Stage::PostRecv,
                setup: false,
            },
        );
        self.state.deliver_notifications(h, now);
        result
    }

    /// `ibv_poll_cq`, charged to the application's core.
    pub fn poll_cq(
        &mut self,
        h: impl Into<HostIx>,
        cq: verbs::CqHandle,
        max: usize,
    ) -> Result<Vec<Wc>, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let host = &mut self.state.hosts[h.index()];
        let cost = host.profile.cpu.poll_cq;
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready: now,
                cost,
                stage: Stage::PollCq,
                setup: false,
            },
        );
        host.verbs.poll_cq(cq, max)
    }

    /// QP `qpn` of host `h` vanishes at once, as when its process dies and the kernel
    /// destroys it: no verb runs on the application's timeline (see [`World::destroy_qp`] for
    /// the timed call). The QP and its transport state are gone; frames that still arrive for
    /// it are dropped silently, as a NIC drops packets for a QP number it does not know.
    pub fn vanish_qp(
        &mut self,
        h: impl Into<HostIx>,
        qpn: QpNum,
    ) -> Result<verbs::DestroyReport, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let host = &mut self.state.hosts[h.index()];
        let report = host.verbs.destroy_qp(qpn)?;
        if let Some(mut e) = host.qps.remove(&qpn.get()) {
            retire(&mut e, &mut host.retired);
        }
        self.state.wr_psns.remove(&(h, qpn.get() & 0xffff));
        Ok(report)
    }

    /// `ibv_destroy_qp` on host `h`, timed as a control-path verb (an ioctl and a firmware
    /// command): what [`World::vanish_qp`] does, called by the application. A refused call
    /// costs nothing (the kernel checks before the firmware runs).
    pub fn destroy_qp(
        &mut self,
        h: impl Into<HostIx>,
        qpn: QpNum,
    ) -> Result<verbs::DestroyReport, VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let report = self.vanish_qp(h, qpn)?;
        self.control_path(h, Stage::IoctlDestroyQp, 0);
        Ok(report)
    }

    /// `ibv_destroy_cq` on host `h`, timed as a control-path verb; EBUSY while a QP uses the
    /// CQ or its completion events are unacknowledged (refused calls cost nothing).
    pub fn destroy_cq(
        &mut self,
        h: impl Into<HostIx>,
        cq: verbs::CqHandle,
    ) -> Result<(), VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        self.state.hosts[h.index()].verbs.destroy_cq(cq)?;
        self.control_path(h, Stage::IoctlDestroyCq, 0);
        Ok(())
    }

    /// `ibv_dereg_mr` on host `h`, timed as one control-path command (unpinning the pages is
    /// not charged: a simplification). Remote requests that still carry its rkey fail their
    /// key check from now on (NAK remote access error).
    pub fn dereg_mr(
        &mut self,
        h: impl Into<HostIx>,
        mr: verbs::MrHandle,
    ) -> Result<(), VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        self.state.hosts[h.index()].verbs.dereg_mr(mr)?;
        self.control_path(h, Stage::IoctlDeregMr, 0);
        Ok(())
    }

    /// `ibv_dealloc_pd` on host `h`, timed as a control-path verb; EBUSY while MRs or QPs use
    /// the PD (refused calls cost nothing).
    pub fn dealloc_pd(
        &mut self,
        h: impl Into<HostIx>,
        pd: verbs::PdHandle,
    ) -> Result<(), VerbsError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        self.state.hosts[h.index()].verbs.dealloc_pd(pd)?;
        self.control_path(h, Stage::IoctlDeallocPd, 0);
        Ok(())
    }
}

/// What a verbs call leaves for the application's completion channel.
impl State {
    /// Turns completion events the verbs layer raised into an interrupt on the softirq core
    /// and a wake-up of the application thread on its core.
    pub(super) fn deliver_notifications(&mut self, h: HostIx, now: SimTime) {
        let host = &mut self.hosts[h.index()];
        for n in host.verbs.take_notifications() {
            if let verbs::Notification::CompletionEvent {
                channel: Some(ch), ..
            } = n
            {
                let c = host.profile.control;
                let (_, irq) = host.cpu.run(
                    &mut self.tracer,
                    now,
                    CpuWork {
                        core: SOFTIRQ_CORE,
                        ready: now,
                        cost: c.interrupt,
                        stage: Stage::CompletionInterrupt,
                        setup: false,
                    },
                );
                let (_, woke) = host.cpu.run(
                    &mut self.tracer,
                    now,
                    CpuWork {
                        core: APP_CORE,
                        ready: irq,
                        cost: c.wakeup,
                        stage: Stage::WakeUp,
                        setup: false,
                    },
                );
                host.cq_events.push_back((woke, ch));
            }
        }
    }
}
