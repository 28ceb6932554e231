//! The kernel's receive side of the socket path: the NIC DMA-writes a frame into the ring and
//! raises an interrupt under coalescing (`tcp_rx_frame`, `tcp_rx_landed`, `tcp_irq`); NAPI
//! polls the ring on the softirq core with GRO merging (`tcp_napi`); the stack processes each
//! segment, or leaves it in the socket's backlog while a syscall holds the socket
//! (`tcp_rx_stack`, `tcp_release_backlog`); what the connection does after (ACKs, more data,
//! waking a blocked reader) runs in `tcp_after`.

use super::{APP_CORE, HEADER_BYTES, NAPI_BUDGET, RxSeg, SOFTIRQ_CORE, TcpEvent};
use crate::world::HostIx;
use crate::world::{Event, HostEvent, PoolData, State};
use engine::{Scheduler, Stage};
use host::{CpuWork, Xfer, XferKind};
use transport::tcp::Event as TcpConnEvent;
use units::SimTime;
use wire::tcp::Flags;

/// The receive handlers of the socket path.
impl State {
    /// A TCP frame has passed the receiving NIC's pipeline: DMA into the kernel's ring, then an
    /// interrupt (or a poll) per the coalescing settings.
    pub(in crate::world) fn tcp_rx_frame(
        &mut self,
        h: HostIx,
        pkt: &fabric::Packet,
        repr: wire::tcp::Repr,
        data: fabric::DataHandle,
        sched: &mut Scheduler<Event>,
    ) {
        let payload = match self.take_data(data) {
            Some(PoolData::Bytes(b)) => b,
            Some(PoolData::Synthetic(_)) | None => Vec::new(),
        };
        let Some(&si) = self
            .tcp
            .hosts
            .get(h.index())
            .and_then(|t| t.by_port.get(&repr.dst_port))
        else {
            return;
        };
        let setup = self.tcp.socks[si as usize].setup;
        self.as_setup_if(h, setup, |w| {
            w.tcp_rx_landed(h, si, pkt, repr, payload, sched)
        });
    }

    /// A segment for socket `si` reached host `h`'s NIC: DMA into the ring, then an interrupt
    /// (or busy-poll) per the coalescing settings.
    pub(super) fn tcp_rx_landed(
        &mut self,
        h: HostIx,
        si: u32,
        pkt: &fabric::Packet,
        repr: wire::tcp::Repr,
        payload: Vec<u8>,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let host = &mut self.hosts[h.index()];
        let bytes = payload.len() as u64 + HEADER_BYTES;
        let setup = host.cpu.setup_mode();
        let (_, end) = host.pcie.run(
            &mut self.tracer,
            now,
            Xfer {
                kind: XferKind::DmaWrite,
                at: now,
                bytes,
                stage: Stage::DmaWriteSegment,
                setup,
            },
        );
        let s = &self.tcp.socks[si as usize];
        let busy = s.opts.busy_poll && s.reader_blocked;
        let (frames, usecs) = (s.opts.coalesce_frames.max(1), s.opts.coalesce_usecs);
        let th = &mut self.tcp.hosts[h.index()];
        th.stats.dma_bytes += bytes;
        th.stats.segments_received += 1;
        th.ring.push_back(RxSeg {
            at: end,
            sock: si,
            repr,
            payload,
            ecn: pkt.ecn,
        });
        if th.napi_pending {
            return;
        }
        if busy {
            // The blocked reader spins on the ring: it sees the segment as soon as it lands.
            th.napi_pending = true;
            th.napi_core = APP_CORE;
            sched.schedule_at(end, Event::Host(HostEvent::Tcp(TcpEvent::Napi { host: h })));
        } else if th.ring.len() as u32 >= frames {
            th.irq_timer_at = None;
            th.napi_pending = true;
            sched.schedule_at(
                end,
                Event::Host(HostEvent::Tcp(TcpEvent::IrqTimer { host: h })),
            );
        } else if th.irq_timer_at.is_none() {
            let at = end + usecs;
            th.irq_timer_at = Some(at);
            sched.schedule_at(
                at,
                Event::Host(HostEvent::Tcp(TcpEvent::IrqTimer { host: h })),
            );
        }
    }

    /// The interrupt fires (coalescing count or timer): hard IRQ, then a NAPI poll.
    pub(super) fn tcp_irq(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let th = &mut self.tcp.hosts[h.index()];
        let by_count = th.napi_pending && th.irq_timer_at.is_none();
        let by_timer = th.irq_timer_at == Some(now) && !th.napi_pending;
        if !by_count && !by_timer {
            return; // a stale timer: the count raised the interrupt already
        }
        if by_timer && th.ring.is_empty() {
            th.irq_timer_at = None;
            return;
        }
        th.irq_timer_at = None;
        th.napi_pending = true;
        th.napi_core = SOFTIRQ_CORE;
        th.stats.interrupts += 1;
        let host = &mut self.hosts[h.index()];
        let cost = host.profile.socket.interrupt;
        let (_, end) = host.cpu.run(
            &mut self.tracer,
            now,
            CpuWork {
                core: SOFTIRQ_CORE,
                ready: now,
                cost,
                stage: Stage::HardInterrupt,
                setup: false,
            },
        );
        sched.schedule_at(end, Event::Host(HostEvent::Tcp(TcpEvent::Napi { host: h })));
    }

    /// A NAPI poll: driver RX per segment, GRO, and the stack per (merged) segment; each group's
    /// effect on its socket happens when its stack stage ends.
    pub(super) fn tcp_napi(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let th = &mut self.tcp.hosts[h.index()];
        let core = th.napi_core;
        let mut taken = Vec::new();
        while taken.len() < NAPI_BUDGET && th.ring.front().is_some_and(|s| s.at <= now) {
            taken.push(th.ring.pop_front().expect("front exists"));
        }
        if taken.is_empty() {
            if let Some(f) = th.ring.front() {
                let at = f.at;
                sched.schedule_at(at, Event::Host(HostEvent::Tcp(TcpEvent::Napi { host: h })));
            } else {
                th.napi_pending = false;
            }
            return;
        }
        th.stats.softirq_runs += 1;
        let host = &mut self.hosts[h.index()];
        let c = host.profile.socket;
        let max = c.offload_max_bytes as usize;
        let (_, mut end) = host.cpu.run(
            &mut self.tracer,
            now,
            CpuWork {
                core,
                ready: now,
                cost: c.softirq,
                stage: Stage::Softirq,
                setup: false,
            },
        );
        // GRO: merge runs of in-order data segments of one socket.
        let mut groups: Vec<Vec<RxSeg>> = Vec::new();
        for seg in taken {
            (_, end) = host.cpu.run(
                &mut self.tracer,
                now,
                CpuWork {
                    core,
                    ready: end,
                    cost: c.driver_rx.time(seg.payload.len() as u64),
                    stage: Stage::DriverRx,
                    setup: false,
                },
            );
            let mergeable = |g: &Vec<RxSeg>| {
                let last = g.last().expect("groups are not empty");
                let bytes: usize = g.iter().map(|s| s.payload.len()).sum();
                let plain = |r: &wire::tcp::Repr| {
                    ![Flags::SYN, Flags::FIN, Flags::RST, Flags::URG]
                        .iter()
                        .any(|&f| r.flags.contains(f))
                };
                last.sock == seg.sock
                    && !last.payload.is_empty()
                    && !seg.payload.is_empty()
                    && plain(&last.repr)
                    && plain(&seg.repr)
                    && last.repr.seq.wrapping_add(last.payload.len() as u32) == seg.repr.seq
                    && bytes + seg.payload.len() <= max
            };
            match groups.last_mut() {
                Some(g) if self.tcp.socks[seg.sock as usize].opts.gro && mergeable(g) => {
                    g.push(seg)
                }
                _ => groups.push(vec![seg]),
            }
        }
        let th = &mut self.tcp.hosts[h.index()];
        for g in groups {
            let bytes: usize = g.iter().map(|s| s.payload.len()).sum();
            (_, end) = host.cpu.run(
                &mut self.tracer,
                now,
                CpuWork {
                    core,
                    ready: end,
                    cost: c.tcp_rx.time(bytes as u64),
                    stage: Stage::TcpRx,
                    setup: false,
                },
            );
            th.stats.stack_segments += 1;
            th.stack_q.push_back(g);
            sched.schedule_at(
                end,
                Event::Host(HostEvent::Tcp(TcpEvent::RxStack { host: h })),
            );
        }
        // Poll again when this run ends: NAPI keeps polling while the ring has work.
        sched.schedule_at(end, Event::Host(HostEvent::Tcp(TcpEvent::Napi { host: h })));
    }

    /// The stack processed a group: the transport takes its segments, answers (ACKs, more
    /// data) from softirq context, and a blocked reader or writer is woken.
    pub(super) fn tcp_rx_stack(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(g) = self.tcp.hosts[h.index()].stack_q.pop_front() else {
            return;
        };
        let core = self.tcp.hosts[h.index()].napi_core;
        let si = g[0].sock;
        let s = &mut self.tcp.socks[si as usize];
        if s.owned.0 <= now && now < s.owned.1 {
            // The application holds the socket: the segments wait for it to let go.
            if s.backlog.is_empty() {
                sched.schedule_at(
                    s.owned.1,
                    Event::Host(HostEvent::Tcp(TcpEvent::Backlog { host: h, sock: si })),
                );
            }
            s.backlog.extend(g);
            return;
        }
        for seg in g {
            let s = &mut self.tcp.socks[si as usize];
            s.conn.handle_segment(now, &seg.repr, &seg.payload, seg.ecn);
            drop(seg.payload); // the transport allocates a fresh Vec per segment: no reuse
        }
        self.tcp_after(si, core, now, sched);
    }

    /// The application thread lets go of socket `si`: it processes the backlog on its own core
    /// (what the segments trigger — ACK-clocked transmits, ACKs — runs there, not in softirq).
    /// Called when the syscall that held the socket ends, and before the next one on it starts.
    pub(super) fn tcp_release_backlog(&mut self, si: u32, sched: &mut Scheduler<Event>) {
        let s = &mut self.tcp.socks[si as usize];
        if s.backlog.is_empty() {
            return;
        }
        let segs = std::mem::take(&mut s.backlog);
        let now = sched.now();
        let h = s.host;
        for seg in segs {
            let s = &mut self.tcp.socks[si as usize];
            s.conn.handle_segment(now, &seg.repr, &seg.payload, seg.ecn);
        }
        let ready = now.max(self.hosts[h.index()].app_ready);
        self.tcp_after(si, APP_CORE, ready, sched);
        let host = &mut self.hosts[h.index()];
        host.app_ready = host.app_ready.max(host.cpu.free_at(APP_CORE));
    }

    /// After the transport of `si` took input: send what it wants (on `core`), keep its timer,
    /// and handle its events.
    pub(super) fn tcp_after(
        &mut self,
        si: u32,
        core: u16,
        ready: SimTime,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let end = self.tcp_output(si, core, ready, sched);
        let s = &mut self.tcp.socks[si as usize];
        let h = s.host;
        let mut wake = false;
        while let Some(ev) = s.conn.poll_event() {
            match ev {
                TcpConnEvent::Connected => s.connected = true,
                TcpConnEvent::DataReadable if s.reader_blocked && s.wake_at == SimTime::MAX => {
                    wake = true;
                }
                TcpConnEvent::SendSpaceAvailable if s.writer_blocked => {
                    s.writer_blocked = false;
                    wake = true;
                }
                _ => {}
            }
        }
        // MSG_ZEROCOPY: each write whose bytes are all acknowledged posts a notification.
        let acked = s.conn.counters().bytes_acked;
        let mut notes = 0;
        while s.zc_pending.front().is_some_and(|&w| w <= acked) {
            s.zc_pending.pop_front();
            notes += 1;
        }
        let busy = s.opts.busy_poll;
        let host = &mut self.hosts[h.index()];
        let c = host.profile.socket;
        let mut end = end;
        for _ in 0..notes {
            (_, end) = host.cpu.run(
                &mut self.tracer,
                now,
                CpuWork {
                    core,
                    ready: end,
                    cost: c.zerocopy_notify,
                    stage: Stage::ZerocopyCompletion,
                    setup: false,
                },
            );
        }
        let mut switched = false;
        if wake {
            let s = &mut self.tcp.socks[si as usize];
            if s.reader_blocked && busy {
                // The spinning reader sees the data when the poll's stack work ends.
                s.wake_at = end;
            } else {
                let (_, woke) = host.cpu.run(
                    &mut self.tracer,
                    now,
                    CpuWork {
                        core: APP_CORE,
                        ready: end,
                        cost: c.wakeup,
                        stage: Stage::WakeUp,
                        setup: false,
                    },
                );
                if s.reader_blocked {
                    s.wake_at = woke;
                }
                host.app_ready = host.app_ready.max(woke);
                switched = true;
            }
        }
        let st = &mut self.tcp.hosts[h.index()].stats;
        st.zerocopy_notifications += notes;
        st.context_switches += switched as u64;
    }
}
