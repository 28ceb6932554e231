//! Executing one call: each verbs call against the world, the blocking event calls, and the
//! time a step advances while it waits.

use super::check::{check, wanted_completions};
use super::describe::{hex, mem_name, outputs, printable};
use super::{Bound, Done, Exec, sqd_state};
use crate::pattern;
use crate::session::msg::{Msg, MsgId, msg};
use crate::session::parse::{status_name, wc_opcode_name};
use crate::session::plan::{
    Call, Fill, HandleId, HostId, KeyRef, QpRef, Recovery, Ret, SgePlan, Step, limits,
};
use crate::session::report::{Check, Outcome, WcRecord};
use crate::world::{World, WorldError};
use engine::Budget;
use fabric::packet::host_ip;
use std::time::Duration;
use units::{SimDuration, SimTime};
use verbs::types::{AhAttr, Gid};
use verbs::wr::{RecvWr, SendWr, Sge};
use verbs::{CqHandle, QpInitAttr, Wc};

impl Exec<'_> {
    pub(super) fn mark_failed_outputs(&mut self, step: &Step) {
        for id in outputs(&step.call) {
            if self.bound[id.0].is_none() {
                self.failed_at[id.0] = Some(step.line);
            }
        }
    }

    /// The CQs of the step's QP (send and receive).
    pub(super) fn step_cqs(&mut self, call: &Call) -> Vec<(u32, CqHandle)> {
        let qp = match call {
            Call::ModifyQp { qp, .. }
            | Call::QueryQp { qp }
            | Call::PostSend { qp, .. }
            | Call::PostRecv { qp, .. } => *qp,
            _ => return Vec::new(),
        };
        let h = self.host_of(qp);
        let qpn = self.qpn(qp);
        let Ok((_, init)) = self.world.verbs(h).query_qp(qpn) else {
            return Vec::new();
        };
        let mut v = vec![(h, init.send_cq)];
        if init.recv_cq != init.send_cq {
            v.push((h, init.recv_cq));
        }
        v
    }

    /// Runs the world for `d` and checks that none of `cqs` gains a completion.
    pub(super) fn watch(&mut self, cqs: &[(u32, CqHandle)], d: SimDuration) -> Result<Check, Msg> {
        let len =
            |x: &mut Self, (h, c): (u32, CqHandle)| x.world.verbs(h).cq(c).map_or(0, |q| q.len());
        let before: Vec<usize> = cqs.iter().map(|&c| len(self, c)).collect();
        self.advance(d)?;
        let mut gained = Vec::new();
        for (&c, b) in cqs.iter().zip(before) {
            let n = len(self, c).saturating_sub(b);
            if n > 0 {
                gained.push(msg!(CheckGained, cq = self.cq_name(c.0, c.1), n));
            }
        }
        let names: Vec<String> = cqs.iter().map(|&(h, c)| self.cq_name(h, c)).collect();
        let what = msg!(CheckNoCompletionWithin, d = d.to_string(), cqs = names);
        let passed = gained.is_empty();
        let got = if passed {
            msg!(CheckNoNewCompletion)
        } else {
            msg!(CheckGainedList, cqs = gained)
        };
        Ok(Check {
            passed,
            ..check(what, msg!(CheckNoNewCompletion), got, false)
        })
    }

    pub(super) fn call(&mut self, step: &Step) -> Done {
        let s = self.s;
        match &step.call {
            Call::AllocPd { host, out } => match self.world.verbs(host.0 as u32).alloc_pd() {
                Ok(pd) => {
                    self.bind(*out, Bound::Pd(pd));
                    Done::ok(msg!(ResultPd, pd = pd.to_string()))
                }
                Err(e) => Done::verbs_err(&e),
            },
            Call::Alloc {
                host,
                out,
                len,
                fill,
            } => {
                let mem = self.world.verbs(host.0 as u32).memory_mut();
                let va = match mem.alloc(*len) {
                    Ok(va) => va,
                    Err(e) => return Done::verbs_err(&e.into()),
                };
                let bytes = match fill {
                    Fill::Zero => None,
                    Fill::Bytes(b) => Some(b.clone()),
                    Fill::Byte(b) => Some(vec![*b; *len as usize]),
                    Fill::Pattern(seed) => Some(pattern(*seed, *len as usize)),
                };
                if let Some(b) = bytes
                    && let Err(e) = mem.write(va, &b)
                {
                    return Done::verbs_err(&e.into());
                }
                self.bind(*out, Bound::Buffer { va });
                Done::ok(msg!(ResultAlloc, len = *len, va = format!("{va:#x}")))
            }
            Call::RegMr {
                pd,
                buf,
                offset,
                len,
                access,
                out,
            } => {
                let h = self.host_of(*pd);
                let (pd, va) = (self.pd(*pd), self.va(*buf).wrapping_add(*offset));
                match self.world.reg_mr(h, pd, va, *len, *access) {
                    Ok(mr) => {
                        self.bind(*out, Bound::Mr(mr));
                        Done::ok(msg!(
                            ResultRegMr,
                            lkey = format!("{:#x}", mr.lkey),
                            rkey = format!("{:#x}", mr.rkey),
                            len = mr.len,
                            va = format!("{:#x}", mr.va),
                            pages = mr.pages
                        ))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateCompChannel { host, out } => {
                let ch = self.world.verbs(host.0 as u32).create_comp_channel();
                self.bind(*out, Bound::Channel(ch));
                Done::ok(msg!(ResultCompChannel, channel = ch.to_string()))
            }
            Call::DestroyCompChannel { channel } => {
                let h = self.host_of(*channel);
                let ch = self.channel(*channel);
                match self.world.verbs(h).destroy_comp_channel(ch) {
                    Ok(()) => Done::ok(msg!(ResultClosed, name = s.name(*channel))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::ReqNotifyCq { cq, solicited_only } => {
                let h = self.host_of(*cq);
                match self.world.req_notify_cq(h, self.cq(*cq), *solicited_only) {
                    Ok(()) => Done::ok(if *solicited_only {
                        msg!(ResultArmedSolicited)
                    } else {
                        msg!(ResultArmedAny)
                    }),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::GetCqEvent { channel, wait } => self.get_cq_event(*channel, *wait),
            Call::GetAsyncEvent { host, wait } => self.get_async_event(*host, *wait),
            Call::AckAsyncEvent { host } => {
                let h = host.0 as u32;
                let Some(&e) = self.async_taken[host.0].first() else {
                    return Done::verbs_err(&verbs::VerbsError::AsyncAckWithoutEvent {
                        event: "async",
                    });
                };
                match self.world.verbs(h).ack_async_event(e) {
                    Ok(()) => {
                        self.async_taken[host.0].remove(0);
                        Done::ok(msg!(
                            ResultAsyncAcked,
                            event = e.name(),
                            on = self.async_on(h, e)
                        ))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::AckCqEvents { cq, n } => {
                let (h, c) = (self.host_of(*cq), self.cq(*cq));
                match self.world.verbs(h).ack_cq_events(c, *n) {
                    Ok(()) => Done::ok(msg!(ResultEventsAcked, n = *n)),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateCq {
                host,
                cqe,
                channel,
                out,
            } => {
                let ch = channel.map(|c| self.channel(c));
                match self.world.create_cq(host.0 as u32, *cqe, ch) {
                    Ok((cq, size)) => {
                        self.bind(*out, Bound::Cq(cq));
                        Done::ok(msg!(ResultCq, cq = cq.to_string(), size))
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::CreateQp {
                pd,
                send_cq,
                recv_cq,
                qp_type,
                cap,
                sq_sig_all,
                out,
            } => {
                let h = self.host_of(*pd);
                let init = QpInitAttr {
                    qp_type: *qp_type,
                    send_cq: self.cq(*send_cq),
                    recv_cq: self.cq(*recv_cq),
                    cap: *cap,
                    sq_sig_all: *sq_sig_all,
                };
                let pd = self.pd(*pd);
                match self.world.create_qp(h, pd, &init) {
                    Ok(q) => {
                        self.bind(*out, Bound::Qp(q.qpn));
                        let c = q.cap;
                        Done::ok_all(vec![
                            msg!(
                                ResultQp,
                                qp_type = qp_type.to_string(),
                                qpn = format!("{:#x}", q.qpn.get())
                            ),
                            msg!(
                                ResultCaps,
                                max_send_wr = c.max_send_wr,
                                max_recv_wr = c.max_recv_wr,
                                max_send_sge = c.max_send_sge,
                                max_recv_sge = c.max_recv_sge,
                                max_inline_data = c.max_inline_data
                            ),
                        ])
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::ModifyQp { qp, attr, mask } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let mut a = attr.attr;
                match attr.dest_qp {
                    Some(QpRef::Handle(d)) => a.dest_qp_num = self.qpn(d).get(),
                    Some(QpRef::Number(n)) => a.dest_qp_num = n,
                    None => {}
                }
                if let Some(peer) = attr.av {
                    a.ah_attr = AhAttr::roce(Gid::from_ipv4(host_ip(peer.0 as u32)));
                }
                let mut notes: Vec<Msg> = attr
                    .ignored
                    .iter()
                    .map(|k| msg!(NoteIgnored, key = k.to_string()))
                    .collect();
                let mut done = match self.world.modify_qp(h, qpn, &a, *mask) {
                    Ok(out) => {
                        let mut text = vec![msg!(
                            ResultTransition,
                            from = out.from.to_string(),
                            to = out.to.to_string()
                        )];
                        for e in &out.effects {
                            text.extend(match e {
                                verbs::ModifyEffect::Reset(r) => {
                                    Some(msg!(ResultDiscarded, send = r.send, recv = r.recv))
                                }
                                verbs::ModifyEffect::Flushed(r) => {
                                    Some(msg!(ResultFlushed, send = r.send, recv = r.recv))
                                }
                                verbs::ModifyEffect::EnteredRtr => Some(msg!(ResultEnteredRtr)),
                                verbs::ModifyEffect::EnteredRts => Some(msg!(ResultEnteredRts)),
                                verbs::ModifyEffect::EnteredSqd { draining: true } => {
                                    Some(msg!(ResultDraining))
                                }
                                verbs::ModifyEffect::EnteredSqd { draining: false } => None,
                            });
                        }
                        notes.extend(out.warnings.iter().map(|w| match w {
                            verbs::ModifyWarning::PsnMasked {
                                field,
                                given,
                                stored,
                            } => msg!(
                                NotePsnMasked,
                                field = *field,
                                given = format!("{given:#x}"),
                                stored = format!("{stored:#08x}")
                            ),
                        }));
                        Done::ok_all(text)
                    }
                    Err(e) => Done::verbs_err(&e),
                };
                done.notes = notes;
                done
            }
            Call::QueryQp { qp } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                match self.world.verbs(h).query_qp(qpn) {
                    Ok((a, init)) => Done {
                        sq_draining: Some(a.sq_draining),
                        ..Done::ok_all(vec![
                            sqd_state(
                                a.qp_state == verbs::QpState::Sqd,
                                a.sq_draining,
                                msg!(
                                    ResultQueryQp,
                                    state = a.qp_state.to_string(),
                                    dest_qp = format!("{:#x}", a.dest_qp_num),
                                    sq_psn = format!("{:#x}", a.sq_psn),
                                    rq_psn = format!("{:#x}", a.rq_psn),
                                    path_mtu = a.path_mtu.to_string(),
                                    timeout = a.timeout,
                                    retry_cnt = a.retry_cnt,
                                    rnr_retry = a.rnr_retry,
                                    min_rnr_timer = a.min_rnr_timer,
                                    max_rd_atomic = a.max_rd_atomic,
                                    max_dest_rd_atomic = a.max_dest_rd_atomic,
                                    access = a.qp_access_flags.to_string()
                                ),
                            ),
                            msg!(
                                ResultQpInit,
                                qp_type = init.qp_type.to_string(),
                                send_cq = self.cq_name(h, init.send_cq),
                                recv_cq = self.cq_name(h, init.recv_cq)
                            ),
                        ])
                    },
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::PostSend { qp, wrs } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let list: Vec<SendWr> = wrs
                    .iter()
                    .map(|w| {
                        let (remote_addr, rkey) = match &w.remote {
                            Some(r) => {
                                let rkey = match r.rkey {
                                    KeyRef::Mr(m) => self.mr(m).rkey,
                                    KeyRef::Raw(k) => k,
                                };
                                (self.va(r.target).wrapping_add(r.offset), rkey)
                            }
                            None => (0, 0),
                        };
                        SendWr {
                            wr_id: w.wr_id,
                            opcode: w.opcode,
                            send_flags: w.flags,
                            sg_list: self.sges(&w.sges),
                            imm_data: w.imm,
                            remote_addr,
                            rkey,
                            compare_add: w.compare_add,
                            swap: w.swap,
                            ud: w.ud.map(|u| verbs::wr::UdDest {
                                ah: AhAttr::roce(Gid::from_ipv4(host_ip(self.host_of(u.qp)))),
                                remote_qpn: self.qpn(u.qp).get(),
                                remote_qkey: u.qkey,
                            }),
                        }
                    })
                    .collect();
                match self.world.post_send(h, qpn, &list) {
                    Ok(_) => Done::ok(msg!(ResultPosted, n = list.len())),
                    Err(e) => Done::post_err(&e),
                }
            }
            Call::PostRecv { qp, wrs } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let list: Vec<RecvWr> = wrs
                    .iter()
                    .map(|w| RecvWr::new(w.wr_id, self.sges(&w.sges)))
                    .collect();
                match self.world.post_recv(h, qpn, &list) {
                    Ok(_) => Done::ok(msg!(ResultPosted, n = list.len())),
                    Err(e) => Done::post_err(&e),
                }
            }
            Call::PollCq { cq, max, wait } => {
                let h = self.host_of(*cq);
                let c = self.cq(*cq);
                let mut notes = Vec::new();
                if let Some(wait) = wait {
                    let want = wanted_completions(&step.expect, self.profile).min(*max as usize);
                    let start = self.world.now();
                    let deadline = start + *wait;
                    let slice =
                        SimDuration::from_us(1).max(SimDuration::from_ps(wait.as_ps() / 10_000));
                    loop {
                        let have = self.world.verbs(h).cq(c).map_or(0, |q| q.len());
                        if have >= want || self.world.now() >= deadline {
                            break;
                        }
                        let step_to = (self.world.now() + slice).min(deadline);
                        if let Err(why) = self.advance(step_to - self.world.now()) {
                            return Done::failed(why);
                        }
                    }
                    notes.push(msg!(
                        NoteBusyPolled,
                        time = (self.world.now() - start).to_string(),
                        n = want
                    ));
                }
                match self.world.poll_cq(h, c, *max as usize) {
                    Ok(wcs) => {
                        let completions = wcs.iter().map(|w| self.wc_record(h, w)).collect();
                        Done {
                            outcome: Some(Outcome::Completions { completions }),
                            ret: Some(Ret::Ok),
                            wcs: Some(wcs),
                            notes,
                            ..Done::default()
                        }
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::Connect {
                hosts,
                pd,
                cq,
                qp,
                channels,
                options,
                recovery,
            } => {
                let (a, b) = (hosts[0].0 as u32, hosts[1].0 as u32);
                let chans = channels.map(|c| c.map(|c| self.channel(c)));
                // The world's setting applies to QPs as they reach RTR: set it for this pair
                // only, and put back what other connections use.
                let before = self.world.selective_window();
                let window = match recovery {
                    Recovery::GoBackN => None,
                    Recovery::Selective { window } => Some(*window),
                };
                self.world.set_selective_repeat(window);
                let r = self.world.connect_rc_with_channels(a, b, options, chans);
                self.world.set_selective_repeat(before);
                match r {
                    Ok((ea, eb)) => {
                        for (i, e) in [ea, eb].into_iter().enumerate() {
                            self.bind(pd[i], Bound::Pd(e.pd));
                            self.bind(cq[i], Bound::Cq(e.cq));
                            self.bind(qp[i], Bound::Qp(e.qpn));
                        }
                        let text = msg!(
                            ResultConnected,
                            qp_a = s.name(qp[0]),
                            qpn_a = format!("{:#x}", ea.qpn.get()),
                            host_a = s.host_name(hosts[0]),
                            qp_b = s.name(qp[1]),
                            qpn_b = format!("{:#x}", eb.qpn.get()),
                            host_b = s.host_name(hosts[1])
                        );
                        Done::ok(match window {
                            Some(w) => Msg {
                                id: MsgId::ResultConnectedSelective,
                                ..text
                            }
                            .arg("window", w),
                            None => text,
                        })
                    }
                    Err(crate::world::ConnectError {
                        source: WorldError::Verbs(e),
                        ..
                    }) => Done::verbs_err(&e),
                    Err(e) => Done::failed(msg!(FailedWorld, detail = e.source.to_string())),
                }
            }
            Call::DestroyQp { qp } => {
                let h = self.host_of(*qp);
                let qpn = self.qpn(*qp);
                let (_, init) = match self.world.verbs(h).query_qp(qpn) {
                    Ok(q) => q,
                    Err(e) => return Done::verbs_err(&e),
                };
                match self.world.destroy_qp(h, qpn) {
                    Ok(r) => {
                        let mut text =
                            vec![msg!(ResultQpDestroyed, qpn = format!("{:#x}", qpn.get()))];
                        if r.send_wqes + r.recv_wqes > 0 {
                            text.push(msg!(
                                ResultWqesVanished,
                                send = r.send_wqes,
                                recv = r.recv_wqes
                            ));
                        }
                        if r.cqes_removed > 0 {
                            let n = r.cqes_removed;
                            let cq_a = self.cq_name(h, init.send_cq);
                            text.push(if init.recv_cq != init.send_cq {
                                let cq_b = self.cq_name(h, init.recv_cq);
                                msg!(ResultCqesRemovedTwo, n, cq_a, cq_b)
                            } else {
                                msg!(ResultCqesRemoved, n, cqs = cq_a)
                            });
                        }
                        Done::ok_all(text)
                    }
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DestroyCq { cq } => {
                let h = self.host_of(*cq);
                match self.world.destroy_cq(h, self.cq(*cq)) {
                    Ok(()) => Done::ok(msg!(ResultDestroyed, name = s.name(*cq))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DeregMr { mr } => {
                let h = self.host_of(*mr);
                let m = self.mr(*mr);
                match self.world.dereg_mr(h, m.handle()) {
                    Ok(()) => Done::ok(msg!(
                        ResultDeregMr,
                        lkey = format!("{:#x}", m.lkey),
                        rkey = format!("{:#x}", m.rkey)
                    )),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::DeallocPd { pd } => {
                let h = self.host_of(*pd);
                match self.world.dealloc_pd(h, self.pd(*pd)) {
                    Ok(()) => Done::ok(msg!(ResultFreed, name = s.name(*pd))),
                    Err(e) => Done::verbs_err(&e),
                }
            }
            Call::Run { duration } => match self.advance(*duration) {
                Ok(events) => Done::ok_all(vec![
                    msg!(ResultRan, duration = duration.to_string(), events),
                    msg!(ResultNow, time = self.world.now().to_string()),
                ]),
                Err(why) => Done::failed(why),
            },
            Call::WriteMemory { at, data } => {
                let h = self.host_of(at.handle);
                let va = self.addr(*at);
                match self.world.verbs(h).memory_mut().write(va, data) {
                    Ok(()) => Done::ok(msg!(ResultWrote, n = data.len(), va = format!("{va:#x}"))),
                    Err(e) => Done::verbs_err(&e.into()),
                }
            }
            Call::ReadMemory { at, len } => {
                let h = self.host_of(at.handle);
                let va = self.addr(*at);
                match self.world.verbs(h).memory().read_vec(va, *len) {
                    Ok(bytes) => Done::ok(msg!(
                        ResultRead,
                        at = mem_name(self.s, *at),
                        hex = hex(&bytes),
                        text = printable(&bytes)
                    )),
                    Err(e) => Done::verbs_err(&e.into()),
                }
            }
        }
    }

    /// `get_cq_event` blocks: the world runs until a completion event has reached the
    /// application on `channel` (the interrupt and the wake-up have run) or `wait` has passed.
    pub(super) fn get_cq_event(&mut self, channel: HandleId, wait: SimDuration) -> Done {
        let h = self.host_of(channel);
        let ch = self.channel(channel);
        let start = self.world.now();
        let deadline = start + wait;
        if let Err(why) = self.advance_until(deadline, |w| w.cq_event_at(h, ch).is_some()) {
            return Done::failed(why);
        }
        // The event is queued at the interrupt; the call returns when the wake-up ends.
        if let Some(t) = self.world.cq_event_at(h, ch)
            && t > self.world.now()
            && t <= deadline
            && let Err(why) = self.advance(t - self.world.now())
        {
            return Done::failed(why);
        }
        let blocked = self.world.now() - start;
        match self.world.get_cq_event(h, ch) {
            Ok(Some(cq)) => {
                let mut d = Done::ok(msg!(ResultCqEvent, cq = self.cq_name(h, cq)));
                d.event_cq = Some(cq);
                d.notes
                    .push(msg!(NoteBlockedWake, time = blocked.to_string()));
                d
            }
            Ok(None) => {
                if self.world.now() < deadline
                    && let Err(why) = self.advance(deadline - self.world.now())
                {
                    return Done::failed(why);
                }
                Done::would_block(msg!(
                    VerrNoCqEvent,
                    channel = self.s.name(channel),
                    wait = wait.to_string()
                ))
            }
            Err(e) => Done::verbs_err(&e),
        }
    }

    /// `ibv_get_async_event` with a time limit. The event is readable as soon as the device
    /// raises it: no interrupt or wake-up is charged (an assumption; completion events are).
    pub(super) fn get_async_event(&mut self, host: HostId, wait: SimDuration) -> Done {
        let h = host.0 as u32;
        let start = self.world.now();
        let deadline = start + wait;
        if let Err(why) = self.advance_until(deadline, |w| w.verbs_ref(h).async_event_pending()) {
            return Done::failed(why);
        }
        let blocked = self.world.now() - start;
        match self.world.verbs(h).get_async_event() {
            Some(e) => {
                self.async_taken[host.0].push(e);
                let mut d = Done::ok(msg!(
                    ResultAsyncEvent,
                    event = e.name(),
                    on = self.async_on(h, e)
                ));
                d.async_event = Some(e);
                d.notes.push(msg!(NoteBlocked, time = blocked.to_string()));
                d
            }
            None => Done::would_block(msg!(
                VerrNoAsyncEvent,
                host = self.s.host_name(host),
                wait = wait.to_string()
            )),
        }
    }

    /// The QP or CQ an async event names, by its handle name.
    pub(super) fn async_element(&self, h: u32, e: verbs::AsyncEvent) -> String {
        match (e.qp(), e.cq()) {
            (Some(q), _) => self.qp_name(h, q),
            (None, Some(c)) => self.cq_name(h, c),
            (None, None) => "the device".to_string(),
        }
    }

    /// What an async event names, as a message argument: the handle's name, or "the device".
    pub(super) fn async_on(&self, h: u32, e: verbs::AsyncEvent) -> crate::session::msg::Arg {
        match (e.qp(), e.cq()) {
            (None, None) => msg!(ResultTheDevice).into(),
            _ => self.async_element(h, e).into(),
        }
    }

    /// Runs the world until `stop` holds (checked after each event) or until `deadline`,
    /// under the session's budget.
    pub(super) fn advance_until(
        &mut self,
        deadline: SimTime,
        stop: impl FnMut(&World) -> bool,
    ) -> Result<(), Msg> {
        if self.world.now() >= deadline {
            return Ok(());
        }
        let wall =
            Duration::from_secs(limits::MAX_WALL_SECS).saturating_sub(self.started.elapsed());
        let budget = Budget {
            sim_time: limits::MAX_SESSION_TIME,
            events: self.events_left,
            wall,
            memory_bytes: u64::MAX,
        };
        match self.world.run_until_cond(deadline, &budget, stop) {
            Ok(stats) => {
                self.events_left -= stats.events;
                Ok(())
            }
            Err(e) => Err(self.budget_message(e)),
        }
    }

    pub(super) fn sges(&self, list: &[SgePlan]) -> Vec<Sge> {
        list.iter()
            .map(|g| {
                let mr = self.mr(g.mr);
                let len = g
                    .len
                    .unwrap_or_else(|| mr.len.saturating_sub(g.offset).min(u32::MAX.into()) as u32);
                Sge::new(mr.va.wrapping_add(g.offset), len, g.lkey.unwrap_or(mr.lkey))
            })
            .collect()
    }

    pub(super) fn wc_record(&self, h: u32, w: &Wc) -> WcRecord {
        WcRecord {
            wr_id: w.wr_id,
            status: status_name(w.status).to_string(),
            status_str: w.status.as_str().to_string(),
            opcode: w.opcode.map(|o| wc_opcode_name(o).to_string()),
            byte_len: w.byte_len,
            imm_data: w.imm_data,
            qp: self.qp_name(h, w.qp_num),
            qp_num: w.qp_num.get(),
        }
    }
}
