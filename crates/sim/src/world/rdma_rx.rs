//! The RDMA NIC's receive datapath: a frame that passed the RX pipeline (`rx_in`) goes to the
//! QP's responder (a request: placed by DMA write, each receive's CQE written behind its
//! payload) or requester (a response: READ data and atomic results placed, completions
//! reported); then the transport's completions become CQE writes
//! (`drain_requester_events`), what it wants to send is gathered, and its timer is kept
//! (`after_transport`, `update_timer`). A responder's fatal NAK moves the QP to ERR here, as
//! the NIC's firmware does.

use super::HostIx;
use super::events::{Event, HostEvent};
use super::responder_env::{VerbsEnv, ud_grh};
use super::{PoolData, State};
use engine::{ExecUnit, Scheduler, Stage, TraceRecord};
use fabric::{Ecn, Payload, packet::host_ip};
use host::{Xfer, XferKind};
use transport::roce::{
    Placement, ReqStatus, RequesterEvent, ResponderEvent, RocePacket, requester::RetransmitReason,
};
use verbs::{QpNum, WcStatus};

/// Maps a transport outcome to its work-completion status (profile differences are decided
/// where the outcome arises: gather errors and receive errors ask the verbs profile).
pub(super) fn wc_status(s: ReqStatus) -> WcStatus {
    match s {
        ReqStatus::Success => WcStatus::Success,
        ReqStatus::RemoteInvalidRequest => WcStatus::RemInvReqErr,
        ReqStatus::RemoteAccess => WcStatus::RemAccessErr,
        ReqStatus::RemoteOperational => WcStatus::RemOpErr,
        ReqStatus::RetryExceeded => WcStatus::RetryExcErr,
        ReqStatus::RnrRetryExceeded => WcStatus::RnrRetryExcErr,
        ReqStatus::BadResponse => WcStatus::BadRespErr,
        ReqStatus::LocalProtection => WcStatus::LocProtErr,
        ReqStatus::LocalQpOperation => WcStatus::LocQpOpErr,
    }
}

/// The RDMA receive path and what the transport does after it.
impl State {
    pub(super) fn rx_in(&mut self, h: HostIx, slot: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(pkt) = self
            .fabric
            .take_held(fabric::PacketHandle::from_index(slot))
        else {
            unreachable!("each RxIn names a frame the fabric holds, taken once");
        };
        // The NIC pipeline the frame just passed; a frame of the out-of-band exchange is
        // setup work, so a data path's timeline never shows it.
        let setup = match &pkt.payload {
            Payload::Tcp { repr, .. } => self.tcp_frame_is_setup(h, repr),
            // A MAD to QP1: the connection manager's (rdma_cm.rs).
            Payload::Roce { hdr, .. } => hdr.bth.dest_qp == wire::ib::mad::GSI_QP,
            _ => false,
        };
        let start = now - self.hosts[h.index()].profile.nic.pipeline;
        let node = self.hosts[h.index()].node;
        self.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: Stage::NicRx,
            setup,
            start,
            end: now,
        });
        if let Payload::Tcp { repr, data } = pkt.payload {
            return self.tcp_rx_frame(h, &pkt, repr, data, sched);
        }
        let Payload::Roce {
            hdr,
            payload_len,
            data,
        } = pkt.payload
        else {
            return;
        };
        let (bytes, symbolic) = match self.take_data(data) {
            None => (Vec::new(), None),
            Some(PoolData::Bytes(b)) => (b, None),
            Some(PoolData::Synthetic(r)) => (Vec::new(), Some(r)),
        };
        let qpn = hdr.bth.dest_qp;
        if qpn == wire::ib::mad::GSI_QP && hdr.bth.opcode == wire::Opcode::UD_SEND_ONLY {
            // QP1: a MAD for the host's connection manager (rdma_cm.rs).
            return self.cm_deliver(h, bytes);
        }
        if hdr.bth.opcode.is_cnp() {
            // DCQCN's reaction point: cut this QP's rate.
            if self.hosts[h.index()]
                .qps
                .get_mut(&qpn)
                .and_then(|e| e.req.as_mut())
                .is_some_and(|r| r.handle_cnp(now))
            {
                self.trace_rate(h, qpn, now);
                self.update_timer(h, qpn, sched);
            }
            self.recycle(bytes);
            return;
        }
        if pkt.ecn == Ecn::Ce
            && let Some(params) = self.dcqcn
        {
            self.notify(h, qpn, &params, sched);
        }
        let rp = RocePacket {
            bth: hdr.bth,
            ext: hdr.ext,
            payload_len,
        };
        let host = &mut self.hosts[h.index()];
        if hdr.bth.opcode.is_request() {
            if host.verbs.accepts_requests(QpNum::masked(qpn)) != Ok(true) {
                self.recycle(bytes);
                return; // RESET/INIT QPs drop requests (C15)
            }
            let src_host = self.by_node.get(&pkt.src.0).copied().unwrap_or(h);
            let grh = ud_grh(host_ip(src_host.get()), host_ip(h.get()), payload_len);
            let host = &mut self.hosts[h.index()];
            let Some(e) = host.qps.get_mut(&qpn) else {
                self.recycle(bytes);
                return;
            };
            let Some(resp) = e.resp.as_mut() else {
                self.recycle(bytes);
                return;
            };
            let mut env = VerbsEnv {
                ctx: &mut host.verbs,
                qpn: QpNum::masked(qpn),
                pending_fail: None,
                taken: Vec::new(),
                grh,
                symbolic,
            };
            resp.handle_request(now, &rp, &bytes, &mut env);
            let taken = std::mem::take(&mut env.taken);
            let r = env.ctx.request_arrived(QpNum::masked(qpn));
            // The QP accepted the request above (`accepts_requests`) and nothing destroys it
            // while its responder runs.
            debug_assert!(
                r.is_ok(),
                "request_arrived on a QP that accepts requests: {r:?}"
            );
            if payload_len > 0 {
                host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaWrite,
                        at: now,
                        bytes: payload_len as u64,
                        stage: Stage::DmaWritePayload,
                        setup: false,
                    },
                );
            }
            // A receive's CQE follows its payload over PCIe (posted writes stay in order): the
            // application can see the completion only once the data is in memory.
            for t in taken {
                let (_, end) = host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaWrite,
                        at: now,
                        bytes: 64,
                        stage: Stage::DmaWriteRecvCqe,
                        setup: false,
                    },
                );
                e.recv_cqes.push_back(t);
                sched.schedule_at(end, Event::Host(HostEvent::RecvDone { host: h, qpn }));
            }
            let mut fatal = None;
            while let Some(ev) = resp.poll_event() {
                if let ResponderEvent::Failed { nak } = ev {
                    fatal = Some(nak);
                }
            }
            if let Some(nak) = fatal {
                use verbs::ResponderFault as F;
                let fault = match nak {
                    wire::ib::aeth::NakCode::RemoteAccessError => F::AccessViolation,
                    wire::ib::aeth::NakCode::RemoteOperationalError => F::Operational,
                    _ => F::InvalidRequest,
                };
                // Both find the QP: it accepted this request a moment ago (see above).
                let r = host.verbs.responder_failed(QpNum::masked(qpn), fault);
                debug_assert!(r.is_ok(), "responder_failed on a live QP: {r:?}");
                host.land_recv_cqes(qpn);
                let r = host.verbs.set_error(QpNum::masked(qpn));
                debug_assert!(r.is_ok(), "set_error on a live QP: {r:?}");
                if let Some(e) = host.qps.get_mut(&qpn) {
                    if let Some(r) = e.req.take() {
                        host.retired.add_requester(&r.counters());
                    }
                    e.fetched.clear();
                }
            }
        } else {
            let Some(req) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) else {
                self.recycle(bytes);
                return;
            };
            // A READ's (or atomic's) response lands in the request's own buffer: the NIC
            // checks LOCAL_WRITE as it arrives, before anything is placed or completed.
            let lands = matches!(
                rp.bth.opcode.operation(),
                Some(
                    wire::ib::opcode::Operation::RdmaReadResponseFirst
                        | wire::ib::opcode::Operation::RdmaReadResponseMiddle
                        | wire::ib::opcode::Operation::RdmaReadResponseLast
                        | wire::ib::opcode::Operation::RdmaReadResponseOnly
                        | wire::ib::opcode::Operation::AtomicAcknowledge
                )
            );
            if lands
                && let Some(id) = req.request_of(rp.bth.psn)
                && host
                    .verbs
                    .check_read_target(QpNum::masked(qpn), verbs::qp::WqeId(id))
                    .is_err()
            {
                req.fail_request(id, ReqStatus::LocalProtection);
                self.recycle(bytes);
                self.after_transport(h, qpn, sched);
                return;
            }
            match req.handle_response(now, &rp) {
                Placement::ReadData { id, offset } => {
                    let r = host.verbs.scatter_send(
                        QpNum::masked(qpn),
                        verbs::qp::WqeId(id),
                        offset,
                        &bytes,
                    );
                    // check_read_target passed for this WQE, and a READ's responses never
                    // carry more than the request asked for.
                    debug_assert!(r.is_ok(), "READ data could not be placed: {r:?}");
                    host.pcie.run(
                        &mut self.tracer,
                        now,
                        Xfer {
                            kind: XferKind::DmaWrite,
                            at: now,
                            bytes: bytes.len() as u64,
                            stage: Stage::DmaWriteReadData,
                            setup: false,
                        },
                    );
                }
                Placement::AtomicResult { id, orig } => {
                    let r = host.verbs.write_atomic_result(
                        QpNum::masked(qpn),
                        verbs::qp::WqeId(id),
                        orig,
                    );
                    debug_assert!(r.is_ok(), "checked by check_read_target: {r:?}");
                }
                Placement::None => {}
            }
        }
        self.recycle(bytes);
        self.after_transport(h, qpn, sched);
    }

    /// After the transport of QP `qpn` did something: report completions (each a CQE DMA
    /// write), send what it wants to send, and keep its timer.
    pub(super) fn after_transport(&mut self, h: HostIx, qpn: u32, sched: &mut Scheduler<Event>) {
        self.drain_requester_events(h, qpn, sched);
        self.pump_tx(h, sched);
        self.update_timer(h, qpn, sched);
    }

    /// Turns the requester's completions into CQE writes.
    pub(super) fn drain_requester_events(
        &mut self,
        h: HostIx,
        qpn: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let host = &mut self.hosts[h.index()];
        let node = host.node;
        if let Some(req) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
            while let Some(ev) = req.poll_event() {
                if let RequesterEvent::GoBack { from_psn, reason } = ev {
                    self.tracer.emit(now, || TraceRecord::Retransmit {
                        host: node,
                        qpn,
                        from_psn,
                        reason: reason.name(),
                    });
                }
                if let RequesterEvent::Resend {
                    first_psn, reason, ..
                } = ev
                {
                    // Selective repeat (IRN): only the missing PSNs go again.
                    let reason = match reason {
                        RetransmitReason::Timeout => "selective repeat (IRN) after an ACK timeout",
                        RetransmitReason::ResponseGap => "selective repeat (IRN) of a READ gap",
                        _ => "selective repeat (IRN) after a SACK NAK",
                    };
                    self.tracer.emit(now, || TraceRecord::Retransmit {
                        host: node,
                        qpn,
                        from_psn: first_psn,
                        reason,
                    });
                }
                if let RequesterEvent::Completed { id, status } = ev {
                    let (_, end) = host.pcie.run(
                        &mut self.tracer,
                        now,
                        Xfer {
                            kind: XferKind::DmaWrite,
                            at: now,
                            bytes: 64,
                            stage: Stage::DmaWriteCqe,
                            setup: false,
                        },
                    );
                    let slot = host.send_done.insert((id, status)).index();
                    sched.schedule_at(end, Event::Host(HostEvent::SendDone { host: h, qpn, slot }));
                }
            }
        }
    }

    pub(super) fn update_timer(&mut self, h: HostIx, qpn: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(e) = self.hosts[h.index()].qps.get_mut(&qpn) else {
            return;
        };
        let Some(t) = e.req.as_ref().and_then(|r| r.poll_timeout(now)) else {
            return;
        };
        if e.timer_at.is_none_or(|cur| t < cur) {
            e.timer_at = Some(t);
            sched.schedule_at(
                t.max(sched.now()),
                Event::Host(HostEvent::Timer { host: h, qpn }),
            );
        }
    }
}
