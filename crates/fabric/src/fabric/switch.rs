//! A switch: routing a frame to its egress port (ECMP), admission to the shared buffer,
//! ECN marking, and queueing for the egress port.

use super::*;

impl Fabric {
    /// Queues `pkt`, which entered its node by global port `in_port` (`u32::MAX` at a host),
    /// on `port`.
    pub(super) fn enqueue(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        in_port: u32,
        ready_at: SimTime,
        now: SimTime,
    ) {
        let (prio, len) = {
            let p = self.packets.get(pkt);
            (p.priority.index(), p.len_bytes)
        };
        let pt = &mut self.ports[port as usize];
        pt.prio[prio].queue.push_back(QEntry {
            pkt,
            len,
            in_port,
            ready_at,
        });
        let len = len as u64;
        pt.backlogged |= 1 << prio;
        pt.prio[prio].qbytes += len;
        pt.stats.peak_queue[prio] = pt.stats.peak_queue[prio].max(pt.prio[prio].qbytes);
        if self.tracer.enabled() {
            let (node, local, q) = (pt.node, pt.local, pt.prio[prio].qbytes);
            let r = self.packets.get(pkt).trace_ref();
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Enqueued,
                node,
                port: local,
                pkt: r,
                queue_bytes: q,
            });
        }
    }

    /// RED marking of `pkt` at switch `s`'s egress port `out` with `q` bytes in its queue.
    pub(super) fn maybe_mark(
        &mut self,
        s: usize,
        out: u32,
        pkt: PacketHandle,
        q: u64,
        now: SimTime,
    ) {
        let Some(ecn_cfg) = self.config.switch.ecn else {
            return;
        };
        let pm: Probability = ecn_cfg.mark_probability(q);
        if self.switches[s].ecn_rng.chance(pm) {
            self.packets.get_mut(pkt).ecn = Ecn::Ce;
            self.counters.ecn_marks += 1;
            if self.tracer.enabled() {
                let pt = &self.ports[out as usize];
                let (node, local) = (pt.node, pt.local);
                let r = self.packets.get(pkt).trace_ref();
                self.tracer.emit(now, || TraceRecord::EcnMarked {
                    node,
                    port: local,
                    pkt: r,
                    queue_bytes: q,
                });
            }
        }
    }

    pub(super) fn forward<E: From<FabricEvent> + Tie>(
        &mut self,
        s: usize,
        in_port: u32,
        pkt: PacketHandle,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        // Fields are read where used: copying the whole switch configuration cost about 20
        // instructions per hop.
        let (prio, len, dst, hash, ecn, ethertype) = {
            let p = self.packets.get(pkt);
            (
                p.priority.index(),
                p.len_bytes as u64,
                p.dst,
                p.ecmp_hash,
                p.ecn,
                p.ethertype,
            )
        };
        // A routed port forwards by the IP header; a RoCE v1 frame has none.
        if self.config.switch.routed && ethertype != EtherType::Ipv4 {
            self.drop_packet(in_port, pkt, DropReason::NotIp, now);
            return;
        }
        let head_at = self.head_at[pkt.index() as usize];
        let lossless = self
            .config
            .switch
            .pfc
            .is_some_and(|pfc| pfc.covers(prio as u8));
        // Lesson ⑤: a drawn "would-be overflow".
        if !self.config.switch.congestion_drop.is_zero()
            && self.switches[s]
                .draw_rng
                .chance(self.config.switch.congestion_drop)
        {
            if !lossless {
                self.drop_packet(in_port, pkt, DropReason::CongestionDraw, now);
                return;
            }
            self.counters.congestion_draws_paused += 1;
            let pfc = self.config.switch.pfc.expect("lossless implies PFC");
            let pt = &mut self.ports[in_port as usize];
            let total = pt.prio[prio].ingress + pt.prio[prio].phantom;
            let push = (pfc.xoff_bytes.saturating_sub(total) + len).min(u32::MAX as u64);
            pt.prio[prio].phantom += push;
            let drain = pt
                .bw
                .serialization_time(ByteLen::new(push.min(PHANTOM_CHUNK as u64)));
            sched.schedule_in(
                drain,
                FabricEvent::PhantomDrain {
                    port: in_port,
                    prio: prio as u8,
                    bytes: push as u32,
                }
                .into(),
            );
        }
        let memo = self.route_memo.get();
        let key = (s as u32, dst.0, hash);
        let out = match memo.iter().find(|m| m.key == key) {
            Some(m) => Some(m.out),
            None => self.egress(s, dst, hash),
        };
        let Some(out) = out else {
            self.drop_packet(in_port, pkt, DropReason::NoRoute, now);
            return;
        };
        // The egress port is cold on a large fabric: ask for its lines now, so that they load
        // while admission works on the switch and the ingress port.
        engine::prefetch(&self.ports[out as usize]);
        engine::prefetch(&self.ports[out as usize].prio[prio]);
        if let Some(mtu) = self.config.switch.mtu_bytes
            && len > mtu as u64 + L2_BYTES
        {
            self.drop_packet(in_port, pkt, DropReason::Oversize, now);
            return;
        }
        if self.storming_queues > 0 && self.ports[out as usize].storming & (1 << prio) != 0 {
            // Counted at the storming egress port too.
            self.pfc_side[out as usize].stats.watchdog_drops += 1;
            self.drop_packet(in_port, pkt, DropReason::Watchdog, now);
            return;
        }
        // Admission.
        let sw = &mut self.switches[s];
        if lossless {
            if sw.buffer_used + len > self.config.switch.buffer_bytes {
                self.counters.drops_lossless_overflow += 1;
                self.drop_packet(in_port, pkt, DropReason::BufferFull, now);
                return;
            }
        } else if sw.buffer_used + len > sw.shared_limit
            || self.ports[out as usize].prio[prio].qbytes + len > self.config.switch.queue_cap_bytes
        {
            self.counters.drops_buffer += 1;
            self.drop_packet(in_port, pkt, DropReason::BufferFull, now);
            return;
        }
        sw.buffer_used += len;
        self.counters.peak_buffer_bytes = self.counters.peak_buffer_bytes.max(sw.buffer_used);
        // Ingress accounting and PFC.
        self.ports[in_port as usize].prio[prio].ingress += len;
        if lossless {
            self.check_xoff(in_port, prio, sched);
        }
        // ECN at the egress queue, as the frame joins it (unless marking on dequeue).
        if let Some(ecn_cfg) = &self.config.switch.ecn
            && !ecn_cfg.on_dequeue
            && ecn_cfg.priorities & (1 << prio) != 0
            && ecn.is_ect()
        {
            let q = self.ports[out as usize].prio[prio].qbytes;
            self.maybe_mark(s, out, pkt, q, now);
        }
        let ready_at = match self.config.switch.forwarding {
            Forwarding::CutThrough => head_at + self.config.switch.latency,
            Forwarding::StoreAndForward => now + self.config.switch.latency,
        };
        self.enqueue(out, pkt, in_port, ready_at, now);
        self.try_tx(out, sched);
    }

    /// The egress port (global index) switch `s` sends a frame for `dst` with 5-tuple hash
    /// `hash` by; `None` when no route leads there.
    #[inline]
    pub(super) fn egress(&self, s: usize, dst: NodeId, hash: u32) -> Option<u32> {
        let dst_host = self.host_ordinal(dst)?;
        let sw = &self.switches[s];
        let cands = self.routes.candidates(sw.ordinal, dst_host as usize);
        let local_out = match cands.len() {
            0 => return None,
            1 => cands[0],
            n => cands[ecmp_pick(hash, sw.salt, n, self.config.switch.ecmp_hash)],
        };
        Some(self.nodes[sw.node.index()].first_port + local_out as u32)
    }
}
