//! Raw flows: frames the fabric itself generates for a host (cross traffic, the fat-tree
//! permutation's WRITE-shaped flows), their pacing and their completion results.

use super::*;

impl Fabric {
    /// Adds a raw flow; it starts at `flow.start` once events for it are scheduled by
    /// [`Fabric::schedule_flows`].
    pub fn add_flow(&mut self, flow: RawFlow) -> Result<FlowId, ConfigError> {
        let src = self
            .host_ordinal(flow.src)
            .ok_or_else(|| ConfigError::new("flow.src", flow.src, "a host"))?;
        let dst = self
            .host_ordinal(flow.dst)
            .ok_or_else(|| ConfigError::new("flow.dst", flow.dst, "a host"))?;
        if src == dst {
            return Err(ConfigError::new(
                "flow.dst",
                flow.dst,
                "a host other than flow.src",
            ));
        }
        let max_payload = self.max_frame_bytes - RAW_FRAME_OVERHEAD as u64;
        crate::config::check_range("flow.payload_mtu", flow.payload_mtu as u64, 1, max_payload)?;
        crate::config::check_range("flow.bytes", flow.bytes, 1, 1 << 40)?;
        let id = FlowId(self.flows.len() as u32);
        let tuple = FiveTuple {
            src_ip: host_ip(src),
            dst_ip: host_ip(dst),
            protocol: 17,
            // RoCEv2 entropy: a source port in the dynamic range, per flow (rxe uses 0xC000 +
            // a hash of the QPN; research/verbs-spec.md §6).
            src_port: 0xc000 | (id.0 as u16 & 0x3fff),
            dst_port: 4791,
        };
        self.flows.push(FlowState {
            spec: flow,
            id,
            sent: 0,
            frames_sent: 0,
            frames_dropped: 0,
            delivered: 0,
            finish: None,
            tuple_hash: tuple.hash(),
        });
        Ok(id)
    }

    /// Schedules the start of every raw flow added so far.
    pub fn schedule_flows<E: From<FabricEvent> + Tie>(&self, sched: &mut Scheduler<E>) {
        for (i, f) in self.flows.iter().enumerate() {
            if !self.owns(f.spec.src) {
                continue;
            }
            sched.schedule_at(
                f.spec.start.max(sched.now()),
                FabricEvent::FlowStart { flow: i as u32 }.into(),
            );
        }
    }

    /// Schedules the start of one raw flow (at its start time, or now if that has passed).
    pub fn start_flow<E: From<FabricEvent> + Tie>(&self, flow: FlowId, sched: &mut Scheduler<E>) {
        if let Some(f) = self.flows.get(flow.index())
            && self.owns(f.spec.src)
        {
            let at = f.spec.start.max(sched.now());
            sched.schedule_at(at, FabricEvent::FlowStart { flow: flow.0 }.into());
        }
    }

    /// The outcome of every raw flow.
    pub fn flow_results(&self) -> Vec<FlowResult> {
        self.flows
            .iter()
            .map(|f| FlowResult {
                flow: f.id,
                start: f.spec.start,
                finish: f.finish,
                delivered: f.delivered,
                frames_sent: f.frames_sent,
                frames_dropped: f.frames_dropped,
            })
            .collect()
    }

    /// True when every raw flow has delivered all its bytes.
    pub fn all_flows_done(&self) -> bool {
        self.flows_done == self.flows.len()
    }

    /// Generates the next frame of the first unpaused active raw flow at host `h`.
    pub(super) fn next_raw_frame(&mut self, h: usize, now: SimTime) -> Option<PacketHandle> {
        let port = self.hosts[h].port as usize;
        let honour = self.config.host.honour_pause;
        let n = self.hosts[h].active.len();
        for _ in 0..n {
            let f = self.hosts[h].active.pop_front()?;
            let fi = f as usize;
            let prio = self.flows[fi].spec.priority;
            if honour && self.ports[port].paused(prio.index(), now) {
                self.hosts[h].active.push_back(f);
                continue;
            }
            let fl = &mut self.flows[fi];
            let payload = (fl.spec.bytes - fl.sent).min(fl.spec.payload_mtu as u64) as u32;
            let seq = fl.frames_sent as u32;
            fl.sent += payload as u64;
            fl.frames_sent += 1;
            if fl.sent < fl.spec.bytes {
                self.hosts[h].active.push_back(f);
            }
            let fl = &self.flows[fi];
            let spec = PacketSpec {
                flow: fl.id,
                dst: fl.spec.dst,
                priority: prio,
                ecn: if fl.spec.ecn_capable {
                    Ecn::Ect0
                } else {
                    Ecn::NotEct
                },
                len_bytes: payload + RAW_FRAME_OVERHEAD,
                ecmp_hash: fl.tuple_hash,
                ethertype: EtherType::Ipv4,
                payload: Payload::Raw { payload, seq },
            };
            let src = fl.spec.src;
            return Some(self.new_packet(src, spec, now));
        }
        None
    }
}
