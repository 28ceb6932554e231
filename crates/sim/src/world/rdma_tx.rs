//! The RDMA NIC's transmit datapath, event by event: a doorbell lands and the NIC takes the
//! send queue's WQEs (written with the doorbell by BlueFlame, or fetched by a DMA read),
//! hands each to the requester when its fetch is done (`doorbell`); it picks the next frame
//! round-robin over the QPs, responses before requests, while the transmit admission
//! ([`super::nic_tx`]) has room (`pump_tx`); it gathers the payload by DMA read and passes the
//! TX pipeline (`gather`); the frame waits for the port and is handed to the fabric
//! (`tx_out`, `tx_to_port`, `send_to_port`, `roce_spec`). The route is drawn function by
//! function in docs/ARCHITECTURE.md §3.

use super::HostIx;
use super::events::{Event, HostEvent};
use super::nic_tx::Work;
use super::{PoolData, SimHost, State, TxSlot, World, retire, store_data};
use engine::{ExecUnit, Scheduler, Stage, TraceRecord, Tracer};
use fabric::{
    DataHandle, Ecn, EtherType, Fabric, FiveTuple, PacketSpec, Payload, RoceHeaders,
    packet::host_ip, roce_frame_len,
};
use host::{Xfer, XferKind};
use transport::roce::{DataRef, ReqStatus, SendRequest, Transmit, WorkOp};
use units::{NodeId, Priority, SimTime};
use verbs::{QpNum, WcStatus, transport::StartSend, wr::SendOpcode};

/// The line rate of `node`'s port (100 Gb/s if it has none).
pub(super) fn port_rate(fabric: &Fabric, node: NodeId) -> units::Bandwidth {
    fabric
        .ports()
        .find(|(n, ..)| *n == node)
        .and_then(|(_, _, link, _)| fabric.link(link))
        .map_or(units::Bandwidth::gbps(100), |l| l.bandwidth)
}

/// The ECMP hash of RoCEv2 frames from host `h` to host `peer` with UDP source port `sport`:
/// the 5-tuple's (the destination port is RoCEv2's 4791).
pub(super) fn roce_ecmp_hash(h: HostIx, peer: HostIx, sport: u16) -> u32 {
    FiveTuple {
        src_ip: host_ip(h.get()),
        dst_ip: host_ip(peer.get()),
        protocol: 17,
        src_port: sport,
        dst_port: 4791,
    }
    .hash()
}

/// A RoCE frame from QP `qpn` of host `h` to host `peer` (at fabric node `dst`): its flow and
/// length derived, `ecmp_hash` from [`roce_ecmp_hash`] with the header's UDP source port;
/// `body` is the payload length and its handle in the payload pool, `class` the priority and
/// ECN codepoint.
pub(super) fn roce_spec(
    (h, qpn): (HostIx, u32),
    (peer, dst): (HostIx, NodeId),
    hdr: RoceHeaders,
    (payload_len, data): (u32, DataHandle),
    (priority, ecn): (Priority, Ecn),
    ethertype: EtherType,
    ecmp_hash: u32,
) -> PacketSpec {
    debug_assert_eq!(ecmp_hash, roce_ecmp_hash(h, peer, hdr.udp_src_port));
    // RoCE v1 puts the 40-byte GRH where RoCEv2 has IPv4 (20) and UDP (8). Its ECMP hash is
    // left as RoCEv2's: only a bridge forwards it, and a bridge does not hash.
    let grh_extra = if ethertype == EtherType::RoceV1 {
        12
    } else {
        0
    };
    PacketSpec {
        flow: World::flow_of(h, QpNum::masked(qpn)),
        dst,
        priority,
        ecn,
        len_bytes: roce_frame_len(&hdr, payload_len) + grh_extra,
        ethertype,
        ecmp_hash,
        payload: Payload::Roce {
            hdr,
            payload_len,
            data,
        },
    }
}

/// The RDMA transmit path, each handler at `sched.now()`, scheduling what follows through `sched`.
impl State {
    /// A WQE the NIC read over PCIe has landed: the fetched WQEs whose read is done go to the
    /// transport, in order, and the QP may send. The NIC does not look at the send queue
    /// here: a WQE posted since starts when its own doorbell lands (or when a completion
    /// lets a blocked one start), not at an earlier WQE's arrival, before the NIC could know
    /// of it.
    pub(super) fn wqe_fetched(&mut self, h: HostIx, qpn: u32, sched: &mut Scheduler<Event>) {
        self.hand_over_fetched(h, qpn, sched.now());
        self.pump_tx(h, sched);
        self.update_timer(h, qpn, sched);
    }

    /// Gives QP `qpn`'s transport the fetched WQEs whose PCIe read is done by `now`, in
    /// order (one still crossing PCIe holds back those behind it).
    fn hand_over_fetched(&mut self, h: HostIx, qpn: u32, now: SimTime) {
        let Some(e) = self.hosts[h.index()].qps.get_mut(&qpn) else {
            return;
        };
        while let Some(&(ready, req)) = e.fetched.front() {
            if ready > now {
                break;
            }
            e.fetched.pop_front();
            if let Some(r) = e.req.as_mut() {
                r.post(req);
            }
        }
    }

    /// A doorbell (or BlueFlame write) landed: the NIC starts every WQE that may start (each
    /// usable once its fetch is done), hands the transport those already fetched, and sends.
    pub(super) fn doorbell(&mut self, h: HostIx, qpn: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let host = &mut self.hosts[h.index()];
        // Start every WQE that may start; each is usable after its fetch.
        loop {
            let Some(e) = host.qps.get(&qpn) else { return };
            if e.req.is_none() {
                break;
            }
            let started = match host.verbs.start_send(QpNum::masked(qpn)) {
                Ok(StartSend::Started(w)) => w,
                Ok(StartSend::FailedLocally(done)) => {
                    if done.flushed.is_some()
                        && let Some(e) = host.qps.get_mut(&qpn)
                    {
                        retire(e, &mut host.retired);
                    }
                    break;
                }
                _ => break,
            };
            let wqe_bytes = 64
                + 16 * started.wr.sg_list.len() as u32
                + started.inline_data.as_ref().map_or(0, |d| d.len() as u32);
            let ready = if host.profile.nic.blueflame
                && wqe_bytes <= host.profile.nic.blueflame_max_bytes
            {
                now
            } else {
                let (_, end) = host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaRead,
                        at: now,
                        bytes: wqe_bytes as u64,
                        stage: Stage::DmaReadWqe,
                        setup: false,
                    },
                );
                sched.schedule_at(end, Event::Host(HostEvent::WqeFetched { host: h, qpn }));
                end
            };
            let w = &started.wr;
            let op = match w.opcode {
                SendOpcode::Send => WorkOp::Send { imm: None },
                SendOpcode::SendWithImm => WorkOp::Send {
                    imm: Some(w.imm_data),
                },
                SendOpcode::RdmaWrite => WorkOp::Write {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    imm: None,
                },
                SendOpcode::RdmaWriteWithImm => WorkOp::Write {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    imm: Some(w.imm_data),
                },
                SendOpcode::RdmaRead => WorkOp::Read {
                    va: w.remote_addr,
                    rkey: w.rkey,
                },
                SendOpcode::AtomicCmpAndSwp => WorkOp::CompareSwap {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    compare: w.compare_add,
                    swap: w.swap,
                },
                SendOpcode::AtomicFetchAndAdd => WorkOp::FetchAdd {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    add: w.compare_add,
                },
            };
            // UD: a message longer than the path MTU sends nothing and completes SUCCESS
            // (research/verbs-spec.md §5; rxe `rxe_requester`, "UD: ignore oversized").
            let ud_pmtu = host
                .qps
                .get(&qpn)
                .and_then(|e| e.req.as_ref())
                .filter(|r| r.config().service == transport::roce::Service::Ud)
                .map(|r| r.config().pmtu as u64);
            if ud_pmtu.is_some_and(|m| started.length > m) {
                // It still takes its PSN (rxe: "fake a successful UD send").
                if let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
                    r.skip_psn();
                }
                let r = host
                    .verbs
                    .complete_send(QpNum::masked(qpn), started.id, WcStatus::Success);
                // `start_send` just started this WQE on this QP.
                debug_assert!(r.is_ok(), "completing the WQE just started: {r:?}");
                continue;
            }
            // UD: the destination host comes from the work request's address handle.
            let ud = w.ud.map(|u| {
                let g = u.ah.grh.dgid.0;
                let ah = self
                    .by_ip
                    .get(&[g[12], g[13], g[14], g[15]])
                    .map_or(u32::MAX, |h| h.get());
                transport::roce::UdDest {
                    qpn: u.remote_qpn,
                    qkey: u.remote_qkey,
                    ah,
                }
            });
            let req = SendRequest {
                id: started.id.0,
                op,
                len: started.length.min(u32::MAX as u64) as u32,
                solicited: started.solicited(),
                fence: started.fenced(),
                ud,
            };
            if let Some(e) = host.qps.get_mut(&qpn) {
                e.fetched.push_back((ready, req));
            }
        }
        self.hand_over_fetched(h, qpn, now);
        self.pump_tx(h, sched);
        self.update_timer(h, qpn, sched);
    }

    /// Gathers frames from the host's QPs (responses first, round-robin over QPs) while the NIC
    /// has room ahead of its port.
    pub(super) fn pump_tx(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let mut pace_wake = std::mem::take(&mut self.pace_scratch);
        self.pump_tx_inner(h, now, &mut pace_wake, sched);
        // A QP held back by its DCQCN rate is woken when its next packet may go.
        for q in pace_wake.drain(..) {
            self.trace_rate(h, q, now);
            self.update_timer(h, q, sched);
        }
        self.pace_scratch = pace_wake;
    }

    pub(super) fn pump_tx_inner(
        &mut self,
        h: HostIx,
        now: SimTime,
        pace_wake: &mut Vec<u32>,
        sched: &mut Scheduler<Event>,
    ) {
        loop {
            let host = &mut self.hosts[h.index()];
            let resp_room = host.nic_tx.has_room(Work::Response, now);
            let req_room = host.nic_tx.has_room(Work::Request, now);
            if !resp_room && !req_room {
                return;
            }
            // Next QP after the last one served that has something to send: the QPs above
            // `rr` in order, then from the lowest up to `rr`, in one pass over the map's two
            // ranges (no lookup per QP: a host with a hundred QPs scans them every frame).
            let rr = host.rr;
            let mut try_qp = |q: u32, e: &mut super::QpEngine| {
                // DCQCN paces a QP's requests at its rate (the requester holds them back);
                // responses go as they come.
                let paced = e.req.as_ref().is_some_and(|r| r.is_paced(now));
                let t = if resp_room {
                    e.resp.as_mut().and_then(|r| r.poll_transmit(now))
                } else {
                    None
                };
                match t {
                    Some(t) => Some((Work::Response, t)),
                    None if !req_room => None,
                    None if paced => {
                        if e.req.as_ref().is_some_and(|r| r.outstanding() > 0) {
                            pace_wake.push(q);
                        }
                        None
                    }
                    None => {
                        let t = e.req.as_mut().and_then(|r| r.poll_transmit(now));
                        if t.is_some()
                            && e.req.as_ref().is_some_and(|r| r.reaction_point().is_some())
                        {
                            pace_wake.push(q);
                        }
                        t.map(|t| (Work::Request, t))
                    }
                }
            };
            let mut found = None;
            let (above, wrap) = match rr.checked_add(1) {
                Some(next) => (next.., Some(..=rr)),
                None => (0.., None),
            };
            for (&q, e) in host.qps.range_mut(above) {
                if let Some(t) = try_qp(q, e) {
                    found = Some((q, t));
                    break;
                }
            }
            if found.is_none()
                && let Some(wrap) = wrap
            {
                for (&q, e) in host.qps.range_mut(wrap) {
                    if let Some(t) = try_qp(q, e) {
                        found = Some((q, t));
                        break;
                    }
                }
            }
            if let Some((q, _)) = found {
                host.rr = q;
            }
            let Some((qpn, (work, t))) = found else {
                return;
            };
            if self.frame_log.is_some() && t.pkt.bth.opcode.is_request() {
                self.note_request(h, qpn, &t);
            }
            self.gather(h, qpn, t, work, sched);
        }
    }

    pub(super) fn gather(
        &mut self,
        h: HostIx,
        qpn: u32,
        t: Transmit,
        work: Work,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let len = t.pkt.payload_len as usize;
        let host = &mut self.hosts[h.index()];
        let mut dma_end = now;
        let mut read_bytes = 0;
        let dma = |host: &mut SimHost, tracer: &mut Tracer, stage: Stage| {
            let (_, end) = host.pcie.run(
                tracer,
                now,
                Xfer {
                    kind: XferKind::DmaRead,
                    at: now,
                    bytes: len as u64,
                    stage,
                    setup: false,
                },
            );
            end
        };
        let payload = match t.data {
            DataRef::None => None,
            DataRef::Request { id, offset } => {
                let wqe = verbs::qp::WqeId(id);
                let gathered =
                    match host
                        .verbs
                        .gather_ref(QpNum::masked(qpn), wqe, offset, len as u64)
                    {
                        Ok(Some(r)) => Ok(PoolData::Synthetic(r)),
                        Ok(None) => {
                            let mut buf = self.spare.pop().unwrap_or_default();
                            buf.clear();
                            buf.resize(len, 0);
                            match host
                                .verbs
                                .gather_send(QpNum::masked(qpn), wqe, offset, &mut buf)
                            {
                                Ok(()) => Ok(PoolData::Bytes(buf)),
                                Err(e) => {
                                    self.spare.push(buf);
                                    Err(e)
                                }
                            }
                        }
                        Err(e) => Err(e),
                    };
                let data = match gathered {
                    Ok(d) => d,
                    Err(err) => {
                        // No packet goes out: the WQE fails locally (verbs-spec C29).
                        let status = match err.send_status(host.verbs.profile()) {
                            WcStatus::LocQpOpErr => ReqStatus::LocalQpOperation,
                            _ => ReqStatus::LocalProtection,
                        };
                        if let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
                            r.fail_request(id, status);
                        }
                        self.drain_requester_events(h, qpn, sched);
                        return;
                    }
                };
                let inline = host
                    .verbs
                    .send_wqe(QpNum::masked(qpn), wqe)
                    .is_ok_and(|w| w.inline_data.is_some());
                if !inline && len > 0 {
                    dma_end = dma(host, &mut self.tracer, Stage::DmaReadPayload);
                    read_bytes = len as u64;
                }
                Some(data)
            }
            DataRef::Remote { va, rkey } => {
                // The NIC's DMA read of the responder's memory, through the request's rkey.
                // The READ was checked when it arrived (or replayed); the MR can still be
                // deregistered before its last response leaves, and then the response carries
                // zeros (a real NIC would fail the DMA; the model keeps the packet train).
                let qpn = QpNum::masked(qpn);
                let data = match host.verbs.remote_read_ref(qpn, rkey, va, len as u64) {
                    Ok(Some(r)) => PoolData::Synthetic(r),
                    _ => {
                        let mut buf = self.spare.pop().unwrap_or_default();
                        buf.clear();
                        buf.resize(len, 0);
                        if host.verbs.remote_read(qpn, rkey, va, &mut buf).is_err() {
                            buf.fill(0);
                        }
                        PoolData::Bytes(buf)
                    }
                };
                dma_end = dma(host, &mut self.tracer, Stage::DmaReadResponse);
                read_bytes = len as u64;
                Some(data)
            }
        };
        let data = match payload {
            Some(d) if len > 0 => store_data(&mut self.pool, d),
            Some(PoolData::Bytes(b)) => {
                self.spare.push(b);
                DataHandle::NONE
            }
            _ => DataHandle::NONE,
        };
        let host = &mut self.hosts[h.index()];
        let frame_bytes = roce_frame_len(
            &RoceHeaders {
                bth: t.pkt.bth,
                ext: t.pkt.ext,
                udp_src_port: 0,
            },
            t.pkt.payload_len,
        );
        host.nic_tx
            .start(work, frame_bytes as u64, read_bytes, dma_end.max(now));
        // The NIC's TX pipeline is in order: a frame whose gather finished early (an ACK, a READ
        // request) still leaves after the frames ahead of it, and no sooner than the pipeline's
        // issue interval after the one before it.
        let ready = (dma_end.max(now) + host.profile.nic.pipeline)
            .max(host.tx_last_ready + host.profile.nic.packet_interval);
        host.tx_last_ready = ready;
        let node = host.node;
        self.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: Stage::NicTx,
            setup: false,
            start: dma_end.max(now),
            end: ready,
        });
        let slot = host.tx_slots.insert(TxSlot {
            qpn,
            t,
            data,
            work,
            frame_bytes: frame_bytes as u32,
        });
        host.tx_inflight += 1;
        sched.schedule_at(
            ready,
            Event::Host(HostEvent::TxOut {
                host: h,
                slot: slot.index(),
            }),
        );
    }

    /// A frame has passed the TX pipeline: it waits for the port.
    pub(super) fn tx_out(&mut self, h: HostIx, slot: u32, sched: &mut Scheduler<Event>) {
        self.hosts[h.index()].nic_tx.push_ready(slot);
        self.tx_to_port(h, sched);
    }

    /// Hands the port the frames waiting for it while it has room, then gathers more.
    pub(super) fn tx_to_port(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        loop {
            let host = &mut self.hosts[h.index()];
            let queued = self.fabric.host_backlog(host.node);
            let Some(slot) = host.nic_tx.next_ready(queued) else {
                break;
            };
            self.send_to_port(h, slot, sched);
        }
        self.pump_tx(h, sched);
    }

    pub(super) fn send_to_port(&mut self, h: HostIx, slot: u32, sched: &mut Scheduler<Event>) {
        let n_hosts = self.hosts.len() as u32;
        let host = &mut self.hosts[h.index()];
        let s = host.tx_slots.remove(engine::Handle::from_index(slot));
        host.tx_inflight -= 1;
        host.nic_tx.left(s.work, u64::from(s.frame_bytes));
        let Some(e) = host.qps.get(&s.qpn) else {
            self.free_data(s.data);
            return;
        };
        // A UD datagram goes where its address handle points; connected QPs to their peer.
        let peer = match s.t.ud_ah {
            Some(ah) => Some(HostIx(ah)).filter(|x| x.get() < n_hosts),
            None => e.peer,
        };
        let Some(peer) = peer else {
            self.free_data(s.data);
            return;
        };
        let sport = e.sport;
        let ethertype = e.ethertype;
        // Every frame of a connected QP has the same 5-tuple: its hash is worked out once
        // (a UD QP's peer changes with each datagram's address handle).
        let ecmp_hash = match e.ecmp_memo.get() {
            (p, sp, hash) if p == peer.get() && sp == sport => hash,
            _ => {
                let hash = roce_ecmp_hash(h, peer, sport);
                e.ecmp_memo.set((peer.get(), sport, hash));
                hash
            }
        };
        // UC: nothing acknowledges a request; it completes when its last packet leaves, so its
        // CQE is written now (the requester reported it when the packet was handed over).
        let uc_done = e
            .req
            .as_ref()
            .is_some_and(|r| r.config().service != transport::roce::Service::Rc)
            && (s.t.pkt.bth.opcode.is_last() || s.t.pkt.bth.opcode.is_only());
        let hdr = RoceHeaders {
            bth: s.t.pkt.bth,
            ext: s.t.pkt.ext,
            udp_src_port: sport,
        };
        let spec = roce_spec(
            (h, s.qpn),
            (peer, self.host_nodes[peer.index()]),
            hdr,
            (s.t.pkt.payload_len, s.data),
            (self.roce_priority, Ecn::Ect0),
            ethertype,
            ecmp_hash,
        );
        let node = self.hosts[h.index()].node;
        if self.fabric.send(node, spec, sched).is_err() {
            self.free_data(s.data);
        }
        if uc_done {
            self.drain_requester_events(h, s.qpn, sched);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::world::{RcOptions, World};
    use engine::{Budget, Stage, TraceRecord, Tracer, VecObserver};
    use fabric::{FabricConfig, LinkConfig, Topology};
    use units::{Bandwidth, SimDuration, SimTime};
    use verbs::{SendWr, Sge};

    /// The (start, end) of every `stage` span the world traced, in order.
    fn spans(w: &mut World, stage: Stage) -> Vec<(SimTime, SimTime)> {
        let obs = w
            .tracer_mut()
            .take::<VecObserver>()
            .expect("the test's observer");
        let out = obs
            .records
            .iter()
            .filter_map(|(_, r)| match r {
                TraceRecord::Stage {
                    stage: s,
                    setup: false,
                    start,
                    end,
                    ..
                } if *s == stage => Some((*start, *end)),
                _ => None,
            })
            .collect();
        w.set_tracer(Tracer::new(*obs));
        out
    }

    /// Without BlueFlame the NIC reads each WQE over PCIe after its doorbell. A WQE posted
    /// while the previous one is being read, whose doorbell lands after that read is done,
    /// is read when its own doorbell lands: the earlier WQE's arrival tells the NIC nothing
    /// of it (before, the "WQE fetched" handler looked at the send queue and started it
    /// then, ahead of its doorbell).
    #[test]
    fn a_wqe_is_read_after_its_own_doorbell_not_at_an_earlier_wqes_arrival() {
        let topo = Topology::star(2, LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
        let mut profile = host::HostProfile::default();
        profile.nic.blueflame = false;
        let mut w =
            World::new(&topo, FabricConfig::default(), profile, Default::default()).unwrap();
        let c = w
            .connect_rc_buffered(0, 1, &RcOptions::default(), 4096)
            .unwrap();
        let (a, b) = (c.ends.0, c.bufs);
        let write = |id| {
            let sge = vec![Sge {
                addr: b[0].va,
                length: 64,
                lkey: b[0].lkey,
            }];
            SendWr::write(id, sge, b[1].va, b[1].rkey).signaled()
        };
        w.set_tracer(Tracer::new(VecObserver::default()));
        let posted = w.now();
        w.post_send(a.host, a.qpn, &[write(1)]).unwrap();
        // The doorbell's span is traced as it is rung, the WQE's read as the doorbell lands.
        let bell = spans(&mut w, Stage::MmioDoorbell);
        assert_eq!(bell.len(), 1, "one doorbell");
        w.run_until(bell[0].1, &Budget::default()).unwrap();
        let read = spans(&mut w, Stage::DmaReadWqe);
        assert_eq!(read.len(), 1, "one WQE read");
        let (post_to_bell, fetched) = (bell[0].1 - posted, read[0].1);
        assert!(
            fetched > w.now() + SimDuration::from_ns(1),
            "a read takes time"
        );
        assert!(
            post_to_bell > SimDuration::from_ns(2),
            "a doorbell takes {post_to_bell:?} to land"
        );
        // The second WR is posted 1 ns before the first WQE's read is done: its doorbell
        // lands after that.
        let second = fetched - SimDuration::from_ns(1);
        w.run_until(second, &Budget::default()).unwrap();
        w.post_send(a.host, a.qpn, &[write(2)]).unwrap();
        w.run_until(second + SimDuration::from_us(20), &Budget::default())
            .unwrap();
        let bell = spans(&mut w, Stage::MmioDoorbell);
        let read = spans(&mut w, Stage::DmaReadWqe);
        assert_eq!((bell.len(), read.len()), (2, 2), "{bell:?} {read:?}");
        assert!(
            bell[1].1 > fetched,
            "the second doorbell lands after the first read"
        );
        assert!(
            read[1].0 >= bell[1].1,
            "the second WQE is read at {:?}, its doorbell landed at {:?} (the first WQE \
             arrived at {fetched:?})",
            read[1].0,
            bell[1].1
        );
        let done = w.poll_cq(a.host, a.cq, 4).unwrap();
        assert_eq!(done.iter().map(|wc| wc.wr_id).collect::<Vec<_>>(), [1, 2]);
    }
}
