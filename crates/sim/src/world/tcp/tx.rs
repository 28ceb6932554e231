//! The kernel's transmit side of the socket path: the TCP/IP stack builds segments (or TSO
//! super-segments) from what the connection may send (`tcp_output`), the driver rings the
//! doorbell; the NIC DMA-reads each wire segment, passes its pipeline (`tcp_nic_pump`, at
//! most [`super::TCP_NIC_WINDOW`] frames between DMA and port) and hands the frame to the
//! fabric (`tcp_tx_out`).

use super::{HEADER_BYTES, NicSeg, SocketId, TCP_NIC_WINDOW, TcpEvent, TxSlot};
use crate::world::HostIx;
use crate::world::{Event, HostEvent, PoolData, State, World, store_data};
use engine::{ExecUnit, Scheduler, Stage, TraceRecord};
use fabric::packet::{TCP_PRIORITY, tcp_frame_len};
use fabric::{FiveTuple, PacketSpec, Payload, packet::host_ip};
use host::{CpuWork, Xfer, XferKind};
use units::SimTime;

/// The transmit handlers of the socket path.
impl State {
    /// The kernel transmits what socket `si`'s transport wants to send, running the stack on
    /// `core` from `ready`; returns when the CPU work ends.
    pub(super) fn tcp_output(
        &mut self,
        si: u32,
        core: u16,
        ready: SimTime,
        sched: &mut Scheduler<Event>,
    ) -> SimTime {
        let now = sched.now();
        let s = &mut self.tcp.socks[si as usize];
        let mut out = Vec::new();
        while let Some(t) = s.conn.poll_transmit(now) {
            out.push(t);
        }
        let (h, tso, zc) = (s.host, s.opts.tso, s.opts.msg_zerocopy);
        self.tcp_update_timer(si, sched);
        if out.is_empty() {
            return ready;
        }
        let host = &mut self.hosts[h.index()];
        let c = host.profile.socket;
        let max = c.offload_max_bytes as u64;
        let mut end = ready;
        let mut batch: Vec<NicSeg> = Vec::new();
        let mut passes = 0;
        let mut iter = out.into_iter().peekable();
        while let Some(t) = iter.next() {
            let len = t.payload.len() as u64;
            let mut group = vec![t];
            let name;
            let cost;
            if len == 0 {
                name = Stage::TcpTxAck;
                cost = c.tcp_ack_tx.time(0);
            } else {
                let mut bytes = len;
                if tso {
                    while let Some(next) = iter.peek() {
                        let l = next.payload.len() as u64;
                        if l == 0 || bytes + l > max {
                            break;
                        }
                        bytes += l;
                        group.push(iter.next().expect("peeked"));
                    }
                    name = Stage::TcpTxTso;
                } else {
                    name = Stage::TcpTxSegment;
                }
                cost = c.tcp_tx.time(bytes);
            }
            passes += 1;
            (_, end) = host.cpu.run(
                &mut self.tracer,
                now,
                CpuWork {
                    core,
                    ready: end,
                    cost,
                    stage: name,
                    setup: false,
                },
            );
            (_, end) = host.cpu.run(
                &mut self.tracer,
                now,
                CpuWork {
                    core,
                    ready: end,
                    cost: c.driver_tx.time(0),
                    stage: Stage::DriverTx,
                    setup: false,
                },
            );
            let setup = host.cpu.setup_mode();
            let (_, landed) = host.pcie.run(
                &mut self.tracer,
                now,
                Xfer {
                    kind: XferKind::MmioWrite,
                    at: end,
                    bytes: 8,
                    stage: Stage::MmioDoorbell,
                    setup,
                },
            );
            for t in group {
                let zerocopy = zc && !t.payload.is_empty();
                batch.push(NicSeg {
                    ready: landed,
                    sock: si,
                    t,
                    zerocopy,
                });
            }
        }
        let th = self.tcp_host(h);
        th.stats.tx_stack_passes += passes;
        th.nic_q.extend(batch);
        self.tcp_nic_pump(h, sched);
        end
    }

    /// The NIC takes segments from the kernel's TX ring while it has room ahead of its port.
    pub(in crate::world) fn tcp_nic_pump(&mut self, h: HostIx, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(th) = self.tcp.hosts.get_mut(h.index()) else {
            return;
        };
        if th.pump_at.is_some_and(|t| t <= now) {
            th.pump_at = None;
        }
        loop {
            let th = &mut self.tcp.hosts[h.index()];
            // First what is cheap and usually decides (an RDMA host has no segments waiting),
            // then the port's backlog, which reads the fabric.
            let Some(front) = th.nic_q.front() else {
                return;
            };
            let host = &mut self.hosts[h.index()];
            if host.tx_inflight + self.fabric.host_backlog(host.node) >= TCP_NIC_WINDOW {
                return;
            }
            if front.ready > now {
                if th.pump_at.is_none_or(|t| t > front.ready) {
                    th.pump_at = Some(front.ready);
                    sched.schedule_at(
                        front.ready,
                        Event::Host(HostEvent::Tcp(TcpEvent::NicPump { host: h })),
                    );
                }
                return;
            }
            let seg = th.nic_q.pop_front().expect("front exists");
            let bytes = seg.t.payload.len() as u64 + HEADER_BYTES;
            th.stats.dma_bytes += bytes;
            th.stats.segments_sent += 1;
            let node = host.node;
            let setup = host.cpu.setup_mode();
            let (_, dma_end) = host.pcie.run(
                &mut self.tracer,
                now,
                Xfer {
                    kind: XferKind::DmaRead,
                    at: now,
                    bytes,
                    stage: if seg.zerocopy {
                        Stage::DmaReadZerocopy
                    } else {
                        Stage::DmaReadSegment
                    },
                    setup,
                },
            );
            let ready = (dma_end + host.profile.nic.pipeline).max(host.tx_last_ready);
            host.tx_last_ready = ready;
            self.tracer.emit(now, || TraceRecord::Stage {
                host: node,
                unit: ExecUnit::Nic,
                stage: Stage::NicTx,
                setup,
                start: dma_end,
                end: ready,
            });
            host.tx_inflight += 1;
            let slot = self.tcp.tx_slots.insert(TxSlot {
                sock: seg.sock,
                t: seg.t,
            });
            sched.schedule_at(
                ready,
                Event::Host(HostEvent::Tcp(TcpEvent::TxOut {
                    host: h,
                    slot: slot.index(),
                })),
            );
        }
    }

    pub(super) fn tcp_tx_out(&mut self, h: HostIx, slot: u32, sched: &mut Scheduler<Event>) {
        let s = self.tcp.tx_slots.remove(engine::Handle::from_index(slot));
        self.hosts[h.index()].tx_inflight -= 1;
        let sock = &self.tcp.socks[s.sock as usize];
        let peer = sock.peer_host;
        let repr = s.t.repr;
        let data = if s.t.payload.is_empty() {
            fabric::DataHandle::NONE
        } else {
            store_data(&mut self.pool, PoolData::Bytes(s.t.payload))
        };
        let src_ip = host_ip(h.get());
        let dst_ip = host_ip(peer.get());
        let spec = PacketSpec {
            flow: World::tcp_flow_of(h, SocketId(s.sock)),
            dst: self.hosts[peer.index()].node,
            priority: TCP_PRIORITY,
            ecn: s.t.ecn,
            len_bytes: tcp_frame_len(&repr),
            ecmp_hash: FiveTuple {
                src_ip,
                dst_ip,
                protocol: 6,
                src_port: sock.port,
                dst_port: sock.peer_port,
            }
            .hash(),
            ethertype: fabric::EtherType::Ipv4,
            payload: Payload::Tcp { repr, data },
        };
        let node = self.hosts[h.index()].node;
        if self.fabric.send(node, spec, sched).is_err() {
            self.free_data(data);
        }
        self.tcp_nic_pump(h, sched);
        self.pump_tx(h, sched);
    }
}
