//! PFC at the fabric's ports: XOFF/XON crossings, PAUSE and RESUME frames sent and obeyed,
//! the storm a stalled host starts and the watchdog that breaks it (see the parent module's
//! "PFC" and "PFC failure modes").

use super::*;

impl Fabric {
    pub(super) fn check_xoff<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        prio: usize,
        sched: &mut Scheduler<E>,
    ) {
        let Some(pfc) = self.config.switch.pfc else {
            return;
        };
        let pt = &mut self.ports[port as usize];
        let total = pt.prio[prio].ingress + pt.prio[prio].phantom;
        if total >= pfc.xoff_bytes {
            let over = total - pfc.xoff_bytes;
            pt.stats.peak_over_xoff[prio] = pt.stats.peak_over_xoff[prio].max(over);
            if !pt.prio[prio].pausing {
                pt.prio[prio].pausing = true;
                self.pfc_side[port as usize].prio[prio].pausing_since = sched.now();
                self.send_pfc(port, prio, true, sched);
            }
        }
    }

    pub(super) fn check_xon<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        prio: usize,
        sched: &mut Scheduler<E>,
    ) {
        let Some(pfc) = self.config.switch.pfc else {
            return;
        };
        let pt = &mut self.ports[port as usize];
        if pt.prio[prio].pausing && pt.prio[prio].ingress + pt.prio[prio].phantom <= pfc.xon_bytes {
            pt.prio[prio].pausing = false;
            let side = &mut self.pfc_side[port as usize];
            let since = side.prio[prio].pausing_since;
            side.stats.tx_pause_ps[prio] += sched.now().saturating_duration_since(since).as_ps();
            pt.prio[prio].pfc_gen = pt.prio[prio].pfc_gen.wrapping_add(1);
            self.send_pfc(port, prio, false, sched);
        }
    }

    /// Queues a PAUSE (or RESUME) for `prio` out of `port`, ahead of all data.
    pub(super) fn send_pfc<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        prio: usize,
        pause: bool,
        sched: &mut Scheduler<E>,
    ) {
        let pfc = self
            .config
            .switch
            .pfc
            .expect("PFC frames are only sent with PFC on");
        let now = sched.now();
        let q = if pause { pfc.pause_quanta } else { 0 };
        let mut quanta = [0u16; 8];
        quanta[prio] = q;
        let node = self.ports[port as usize].node;
        let h = self.new_packet(
            node,
            PacketSpec {
                flow: FlowId(u32::MAX),
                dst: node,
                priority: Priority::of(prio as u8),
                ecn: Ecn::NotEct,
                len_bytes: MIN_FRAME_BYTES,
                ecmp_hash: 0,
                ethertype: EtherType::MacControl,
                payload: Payload::Pause {
                    class_enable: 1 << prio,
                    quanta,
                },
            },
            now,
        );
        let pt = &mut self.ports[port as usize];
        let local = pt.local;
        let duration = pause_duration(q, pt.bw);
        self.tracer.emit(now, || TraceRecord::PauseSent {
            node,
            port: local,
            class_enable: 1 << prio,
            quanta: q,
            duration,
        });
        if pause {
            pt.stats.pauses_sent += 1;
            self.counters.pauses_sent += 1;
            // Refresh at half the pause time while still needed.
            let half = pause_duration(q, pt.bw) / 2;
            let generation = pt.prio[prio].pfc_gen;
            sched.schedule_in(
                half,
                FabricEvent::PfcRefresh {
                    port,
                    prio: prio as u8,
                    generation,
                }
                .into(),
            );
        } else {
            pt.stats.resumes_sent += 1;
            self.counters.resumes_sent += 1;
        }
        pt.control.push_back(h);
        self.try_tx(port, sched);
    }

    pub(super) fn receive_pfc<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        class_enable: u8,
        quanta: [u16; 8],
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let response = self
            .config
            .switch
            .pfc
            .map(|p| p.response_time)
            .unwrap_or_default();
        let honour = match self.nodes[self.ports[port as usize].node.index()].role {
            Role::Host(_) => self.config.host.honour_pause,
            Role::Switch(_) => true,
        };
        let pt = &mut self.ports[port as usize];
        pt.stats.pfc_received += 1;
        let (node, local) = (pt.node, pt.local);
        if self.tracer.enabled() {
            let q = quanta[class_enable.trailing_zeros() as usize & 7];
            let duration = pause_duration(q, pt.bw);
            self.tracer.emit(now, || TraceRecord::PauseReceived {
                node,
                port: local,
                class_enable,
                quanta: q,
                duration,
            });
        }
        if !honour {
            return;
        }
        let from = now + response;
        let watchdog = match self.nodes[pt.node.index()].role {
            Role::Switch(_) => self.config.switch.pfc_watchdog,
            Role::Host(_) => None,
        };
        for (prio, &q) in quanta.iter().enumerate() {
            if class_enable & (1 << prio) == 0 {
                continue;
            }
            let side = &mut self.pfc_side[port as usize];
            if pt.storming & (1 << prio) != 0 {
                // The watchdog ignores pauses on a storming queue; it only notes them.
                side.prio[prio].last_pause_rx = now;
                continue;
            }
            let st = &mut pt.prio[prio];
            if q == 0 {
                st.paused_until = st.paused_until.min(from);
                side.prio[prio].paused_since = SimTime::MAX;
            } else {
                if st.paused_until <= from {
                    // A new pause interval: the last one has ended (or never was).
                    side.stats.rx_pause_ps[prio] += st
                        .paused_until
                        .saturating_duration_since(st.pause_from)
                        .as_ps();
                    st.pause_from = from;
                    if let Some(wd) = watchdog {
                        side.prio[prio].paused_since = from;
                        sched.schedule_at(
                            from + wd.detect,
                            FabricEvent::WatchdogCheck {
                                port,
                                prio: prio as u8,
                            }
                            .into(),
                        );
                    }
                }
                // A refresh extends the interval in force: the port stays paused through it.
                st.paused_until = from + pause_duration(q, pt.bw);
            }
        }
        self.try_tx(port, sched);
        if response > SimDuration::ZERO {
            // The port keeps sending until the pause takes effect; make sure it looks again
            // when the response time has passed.
            sched.schedule_at(from, FabricEvent::Wake { port }.into());
        }
    }

    /// The PFC watchdog's look at `port`'s `prio` queue: paused without a break since
    /// `paused_since` for at least the detection time, with frames waiting, is a storm.
    pub(super) fn watchdog_check<E: From<FabricEvent> + Tie>(
        &mut self,
        port: u32,
        prio: usize,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let Some(wd) = self.config.switch.pfc_watchdog else {
            return;
        };
        let pt = &self.ports[port as usize];
        let q = &pt.prio[prio];
        let since = self.pfc_side[port as usize].prio[prio].paused_since;
        if pt.storming & (1 << prio) != 0 || since == SimTime::MAX {
            return;
        }
        let due = since + wd.detect;
        if now < due {
            // The pause broke and began again since this check was set: a later one is due.
            return;
        }
        if !pt.paused(prio, now) {
            return;
        }
        if q.queue.is_empty() {
            // Paused but holding nothing: harmless for now; look again.
            sched.schedule_in(
                wd.detect,
                FabricEvent::WatchdogCheck {
                    port,
                    prio: prio as u8,
                }
                .into(),
            );
            return;
        }
        // A storm: drop what the queue holds, ignore pauses until they stop for `restore`.
        let pt = &mut self.ports[port as usize];
        let side = &mut self.pfc_side[port as usize];
        side.stats.watchdog_storms += 1;
        self.counters.watchdog_storms += 1;
        self.counters.first_watchdog_storm.get_or_insert(now);
        pt.storming |= 1 << prio;
        self.storming_queues += 1;
        side.prio[prio].last_pause_rx = now;
        let st = &mut pt.prio[prio];
        side.stats.rx_pause_ps[prio] += now.saturating_duration_since(st.pause_from).as_ps();
        st.pause_from = now;
        st.paused_until = now;
        while let Some(e) = self.ports[port as usize].prio[prio].queue.pop_front() {
            self.ports[port as usize].prio[prio].qbytes -= e.len as u64;
            self.pfc_side[port as usize].stats.watchdog_drops += 1;
            self.release_buffer(port, e, prio, sched);
            self.drop_packet(port, e.pkt, DropReason::Watchdog, now);
        }
        self.ports[port as usize].backlogged &= !(1 << prio);
        sched.schedule_at(
            now + wd.restore,
            FabricEvent::WatchdogRestore {
                port,
                prio: prio as u8,
            }
            .into(),
        );
    }

    /// From `at`, host `host` stops draining what it receives, as a NIC whose receive buffer
    /// filled behind a stuck PCIe or driver does: it sends PAUSE on every lossless priority
    /// and refreshes it for ever (a PFC storm at its source). Frames already on the way still
    /// arrive. Needs PFC: without it, an error.
    pub fn stall_host<E: From<FabricEvent> + Tie>(
        &mut self,
        host: NodeId,
        at: SimTime,
        sched: &mut Scheduler<E>,
    ) -> Result<(), ConfigError> {
        let Some(Role::Host(h)) = self.nodes.get(host.index()).map(|n| &n.role) else {
            return Err(ConfigError::new("stall_host", host, "a host"));
        };
        if self.config.switch.pfc.is_none() {
            return Err(ConfigError::new(
                "stall_host",
                host,
                "a fabric with PFC (a stalled NIC floods PAUSE frames, and only PFC sends them)",
            ));
        }
        if !self.owns(host) {
            return Err(ConfigError::new(
                "stall_host",
                host,
                "a host this partition owns (stall it on its own partition's fabric)",
            ));
        }
        let port = self.hosts[*h as usize].port;
        sched.schedule_at(at, FabricEvent::HostStall { port }.into());
        Ok(())
    }

    /// Whether `node`'s `port` is held by a PAUSE for priority `prio` at `now`.
    pub fn is_paused(&self, node: NodeId, port: PortId, prio: usize, now: SimTime) -> bool {
        self.global_port(node, port)
            .is_some_and(|gp| self.ports[gp].paused(prio & 7, now))
    }

    /// Time `node`'s `port` has been held by PAUSE frames on priority `prio` and time it has
    /// spent pausing its peer, up to `now`, ps: (rx, tx), as mlx5's `rx_prioN_pause_duration`
    /// and `tx_prioN_pause_duration` count them (in µs there).
    pub fn pause_time(&self, node: NodeId, port: PortId, prio: usize, now: SimTime) -> (u64, u64) {
        let Some(gp) = self.global_port(node, port) else {
            return (0, 0);
        };
        let (pt, side) = (&self.ports[gp], &self.pfc_side[gp]);
        let q = &pt.prio[prio & 7];
        let rx_open = q
            .paused_until
            .min(now)
            .saturating_duration_since(q.pause_from.min(now))
            .as_ps();
        let tx_open = if q.pausing {
            now.saturating_duration_since(side.prio[prio & 7].pausing_since)
                .as_ps()
        } else {
            0
        };
        (
            side.stats.rx_pause_ps[prio & 7] + rx_open,
            side.stats.tx_pause_ps[prio & 7] + tx_open,
        )
    }

    /// `node`'s `port`'s PFC time and watchdog counts.
    pub fn pfc_stats(&self, node: NodeId, port: PortId) -> Option<&PfcStats> {
        self.global_port(node, port)
            .map(|gp| &self.pfc_side[gp].stats)
    }
}
