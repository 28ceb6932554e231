//! Ports and links: starting a frame onto the wire, its arrival at the far end, delivery to a
//! host, the egress scheduler (strict priority, then DWRR) and drops.

use super::*;

impl Fabric {
    /// Starts the next frame on `port` if it is idle and something may go.
    pub(super) fn try_tx<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pi = port as usize;
        let pt = &mut self.ports[pi];
        if now < pt.free_at {
            // Still sending: look again when the frame on the wire is done.
            if !pt.tx_done_pending {
                pt.tx_done_pending = true;
                sched.schedule_at(pt.free_at, FabricEvent::TxDone { port }.into());
            }
            return;
        }
        if let Some(h) = self.ports[pi].control.pop_front() {
            let len = self.packets.get(h).len_bytes;
            self.start_tx(port, h, len, now, sched);
            return;
        }
        let scheduling = match self.nodes[self.ports[pi].node.index()].role {
            Role::Host(_) => &self.config.host.scheduling,
            Role::Switch(_) => &self.config.switch.scheduling,
        };
        if let Some(prio) = pick(&mut self.ports[pi], scheduling, now) {
            let pt = &mut self.ports[pi];
            let e = pt.prio[prio]
                .queue
                .pop_front()
                .expect("pick returns a non-empty queue");
            if pt.prio[prio].queue.is_empty() {
                pt.backlogged &= !(1 << prio);
            }
            self.ports[pi].prio[prio].qbytes -= e.len as u64;
            // ECN on dequeue: by the queue this frame leaves behind.
            if let Role::Switch(s) = self.nodes[self.ports[pi].node.index()].role
                && let Some(ecn_cfg) = self.config.switch.ecn
                && ecn_cfg.on_dequeue
                && ecn_cfg.priorities & (1 << prio) != 0
                && self.packets.get(e.pkt).ecn.is_ect()
            {
                let q = self.ports[pi].prio[prio].qbytes;
                self.maybe_mark(s as usize, port, e.pkt, q, now);
            }
            let start = e.ready_at.max(self.ports[pi].free_at);
            self.start_tx(port, e.pkt, e.len, start, sched);
            // After start_tx, so a trace shows the frame leaving before any RESUME it causes.
            self.release_buffer(port, e, prio, sched);
            return;
        }
        // Hosts pull the next frame of a raw flow when nothing queued can go.
        if let Role::Host(h) = self.nodes[self.ports[pi].node.index()].role
            && let Some(pkt) = self.next_raw_frame(h as usize, now)
        {
            let len = self.packets.get(pkt).len_bytes;
            self.start_tx(port, pkt, len, now, sched);
            return;
        }
        self.schedule_wake(port, sched);
    }

    /// When nothing could be sent, arranges to look again when a pause ends or a frame becomes
    /// ready.
    pub(super) fn schedule_wake<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pt = &self.ports[port as usize];
        let mut next = SimTime::MAX;
        for prio in 0..8 {
            if let Some(head) = pt.prio[prio].queue.front() {
                let t = if pt.paused(prio, now) {
                    pt.prio[prio].paused_until
                } else {
                    head.ready_at
                };
                if t > now {
                    next = next.min(t.max(head.ready_at));
                }
            }
        }
        if let Role::Host(h) = self.nodes[pt.node.index()].role {
            for &f in &self.hosts[h as usize].active {
                let prio = self.flows[f as usize].spec.priority.index();
                if pt.paused(prio, now) {
                    next = next.min(pt.prio[prio].paused_until);
                }
            }
        }
        if next != SimTime::MAX && (next < pt.wake_at || pt.wake_at <= now) {
            self.ports[port as usize].wake_at = next;
            sched.schedule_at(next, FabricEvent::Wake { port }.into());
        }
    }

    /// Puts `pkt` on the wire of `port`, as if it started at `start` (≤ now only for
    /// cut-through, whose head may have begun leaving before its tail arrived).
    pub(super) fn start_tx<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        len: u32,
        start: SimTime,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pi = port as usize;
        let len = len as u64;
        let pt = &mut self.ports[pi];
        let ser = match pt.ps_per_byte {
            Some(ps) => SimDuration::from_ps((len + PREAMBLE_IFG_BYTES) * ps),
            None => pt
                .bw
                .serialization_time(ByteLen::new(len + PREAMBLE_IFG_BYTES)),
        };
        // Cut-through may start before `now` (the tail is still arriving); the frame cannot
        // finish leaving before its last bit arrived, so the end is at least `now`.
        let end = (start + ser).max(now);
        pt.free_at = end;
        pt.stats.tx_frames += 1;
        pt.stats.tx_bytes += len;
        let (peer, prop, node, local) = (pt.peer, pt.prop, pt.node, pt.local);
        self.head_at[pkt.index() as usize] = start + prop;
        // Host ports always hear when a frame is done (their NIC pulls the next one); switch
        // ports only when something is already waiting behind this frame.
        let pt = &mut self.ports[pi];
        let is_host = matches!(self.nodes[pt.node.index()].role, Role::Host(_));
        if is_host || pt.backlogged != 0 || !pt.control.is_empty() {
            pt.tx_done_pending = true;
            sched.schedule_at(end, FabricEvent::TxDone { port }.into());
        }
        // A frame into another partition's port waits in the outbox (`share.rs`), after the
        // observers below have seen it.
        let cross = self.crossing_to(peer);
        if cross.is_none() {
            sched.schedule_at(end + prop, FabricEvent::Arrive { port: peer, pkt }.into());
        }
        if self.tap.is_some() {
            let p = self.packet_copy(pkt);
            if let Some(tap) = self.tap.as_mut() {
                tap.on_transmit(start, node, local, &p);
            }
        }
        if self
            .capture
            .as_ref()
            .is_some_and(|(at, _)| at.includes(node, local))
        {
            let p = self.packet_copy(pkt);
            if let Some((_, v)) = self.capture.as_mut() {
                v.push((start, node, local, p));
            }
        }
        if self.tracer.enabled() {
            let p = self.packets.get(pkt);
            let r = p.trace_ref();
            let q = self.ports[pi].prio[p.priority.index()].qbytes;
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Dequeued,
                node,
                port: local,
                pkt: r,
                queue_bytes: q,
            });
        }
        if let Some(to) = cross {
            self.hand_over(to, end + prop, peer, pkt);
        }
    }

    /// Frees the switch buffer a dequeued frame held and updates its ingress count.
    pub(super) fn release_buffer<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        e: QEntry,
        prio: usize,
        sched: &mut Scheduler<E>,
    ) {
        let Role::Switch(s) = self.nodes[self.ports[port as usize].node.index()].role else {
            return;
        };
        let (len, in_port) = (e.len as u64, e.in_port);
        self.switches[s as usize].buffer_used -= len;
        self.ports[in_port as usize].prio[prio].ingress -= len;
        self.check_xon(in_port, prio, sched);
    }

    pub(super) fn arrive<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pi = port as usize;
        self.ports[pi].stats.rx_frames += 1;
        let node = self.ports[pi].node;
        if self.tracer.enabled() {
            let r = self.packets.get(pkt).trace_ref();
            let local = self.ports[pi].local;
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Arrived,
                node,
                port: local,
                pkt: r,
                queue_bytes: 0,
            });
        }
        let link = self.ports[pi].link.index();
        if let Some(loss) = self.ports[pi].loss.as_mut() {
            // The loss configuration belongs to the link; each direction keeps its own state.
            let flow = self.packets.get(pkt).flow;
            if let Some(reason) = loss.judge(&self.links[link].loss, flow) {
                self.drop_packet(port, pkt, reason, now);
                return;
            }
        }
        if self.packets.get(pkt).class == PacketClass::Pause {
            if let Payload::Pause {
                class_enable,
                quanta,
            } = self.take_packet(pkt).payload
            {
                self.receive_pfc(port, class_enable, quanta, sched);
            }
            return;
        }
        match self.nodes[node.index()].role {
            Role::Host(_) => self.deliver(port, pkt, now),
            Role::Switch(s) => self.forward(s as usize, port, pkt, sched),
        }
    }

    pub(super) fn deliver(&mut self, port: u32, pkt: PacketHandle, now: SimTime) {
        let node = self.ports[port as usize].node;
        let d = *self.packets.get(pkt);
        self.counters.delivered_frames += 1;
        self.counters.delivered_bytes += d.len_bytes as u64;
        if self.tracer.enabled() {
            let local = self.ports[port as usize].local;
            let r = d.trace_ref();
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Delivered,
                node,
                port: local,
                pkt: r,
                queue_bytes: 0,
            });
        }
        match d.class {
            PacketClass::Raw => {
                let Payload::Raw { payload, .. } = self.take_packet(pkt).payload else {
                    unreachable!("a raw packet's class says so");
                };
                let f = &mut self.flows[d.flow.index()];
                f.delivered += payload as u64;
                if f.delivered == f.spec.bytes {
                    f.finish = Some(now);
                    self.flows_done += 1;
                }
            }
            PacketClass::Pause => unreachable!("PFC frames are consumed by the receiving port"),
            // Held for the host's model.
            _ => self.inbox.push_back(Delivery::Arrived(node, pkt)),
        }
    }

    /// Takes a packet that a [`Delivery`] announced out of the fabric; `None` if the handle
    /// names no held packet (taken already, or never announced).
    pub fn take_held(&mut self, pkt: PacketHandle) -> Option<Packet> {
        self.packets.try_get(pkt)?;
        Some(self.take_packet(pkt))
    }

    pub(super) fn drop_packet(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        reason: DropReason,
        now: SimTime,
    ) {
        let p = *self.packets.get(pkt);
        match p.class {
            PacketClass::Raw | PacketClass::Pause => {
                self.take_packet(pkt);
                if p.class == PacketClass::Raw
                    && let Some(f) = self.flows.get_mut(p.flow.index())
                {
                    f.frames_dropped += 1;
                }
            }
            // Its sender owns the payload bytes and must hear of the loss to free them; the
            // fabric holds the packet until it is taken.
            _ => self.inbox.push_back(Delivery::Dropped(pkt)),
        }
        match reason {
            DropReason::BufferFull => {} // counted by the caller (lossy vs lossless overflow)
            DropReason::CongestionDraw => self.counters.drops_congestion += 1,
            DropReason::Corruption => self.counters.drops_corruption += 1,
            DropReason::Burst => self.counters.drops_burst += 1,
            DropReason::Rule => self.counters.drops_rule += 1,
            DropReason::NoRoute => self.counters.drops_no_route += 1,
            DropReason::NotIp => self.counters.drops_not_ip += 1,
            DropReason::Oversize => self.counters.drops_oversize += 1,
            DropReason::Watchdog => self.counters.drops_watchdog += 1,
        }
        self.counters.drops_by_priority[p.priority.index()] += 1;
        if self.tracer.enabled() {
            let pt = &self.ports[port as usize];
            let (node, local) = (pt.node, pt.local);
            let r = p.trace_ref();
            self.tracer.emit(now, || TraceRecord::Dropped {
                node,
                port: local,
                pkt: r,
                reason,
            });
        }
    }
}

/// Chooses the priority whose head frame goes next: strict priorities first (highest number
/// first), then DWRR among the rest. Only queues that are non-empty, not paused and whose head
/// is ready are eligible.
pub(super) fn pick(pt: &mut Port, sch: &Scheduling, now: SimTime) -> Option<usize> {
    if pt.backlogged == 0 {
        return None;
    }
    let eligible = |pt: &Port, p: usize| {
        pt.prio[p].queue.front().is_some_and(|e| e.ready_at <= now) && !pt.paused(p, now)
    };
    if pt.backlogged.is_power_of_two() {
        // One backlogged class (the usual case): strict or not, it goes if it may, and DWRR
        // would pick it whatever the deficits say.
        let p = pt.backlogged.trailing_zeros() as usize;
        return eligible(pt, p).then_some(p);
    }
    let mut strict = pt.backlogged & sch.strict_mask;
    while strict != 0 {
        let p = 7 - strict.leading_zeros() as usize;
        strict &= !(1 << p);
        if eligible(pt, p) {
            return Some(p);
        }
    }
    let dwrr = |p: usize| sch.strict_mask & (1 << p) == 0;
    let mut ready = 0u8;
    let mut rest = pt.backlogged & !sch.strict_mask;
    while rest != 0 {
        let p = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if eligible(pt, p) {
            ready |= 1 << p;
        }
    }
    if ready == 0 {
        return None;
    }
    if ready.is_power_of_two() && pt.backlogged & !sch.strict_mask == ready {
        // One backlogged class: DWRR would pick it whatever the deficits say.
        return Some(ready.trailing_zeros() as usize);
    }
    // Deficit round robin: the queue under the pointer sends while its deficit covers its head;
    // moving the pointer to a queue grants that queue one quantum per weight unit.
    for _ in 0..8 * 64 {
        let p = pt.rr as usize;
        if dwrr(p) && eligible(pt, p) {
            let len = pt.prio[p]
                .queue
                .front()
                .expect("eligible queues are non-empty")
                .len as u64;
            if pt.prio[p].deficit >= len {
                pt.prio[p].deficit -= len;
                return Some(p);
            }
        } else if pt.prio[p].queue.is_empty() {
            pt.prio[p].deficit = 0;
        }
        pt.rr = (pt.rr + 1) % 8;
        let q = pt.rr as usize;
        if dwrr(q) && eligible(pt, q) {
            pt.prio[q].deficit += Scheduling::QUANTUM_BYTES * sch.dwrr_weights[q].max(1) as u64;
        }
    }
    unreachable!("DWRR grants at least one quantum per round, and frames are at most a few KiB")
}
