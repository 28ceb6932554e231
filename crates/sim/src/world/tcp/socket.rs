//! The socket API as an application calls it: `tcp_connect` (both ends built at once, the
//! handshake on the wire), `write()` (`tcp_write`: syscall entry, the copy into the send
//! buffer, the kernel's transmit, syscall exit, with MSG_ZEROCOPY and io_uring variants),
//! `read()` (`tcp_read`: a read that finds nothing blocks, and the syscall it entered is the
//! one that later returns the data), `tcp_wait` and what a caller may look at between calls.
//! Each call runs on the application core ([`super::APP_CORE`]) and holds the socket from its
//! entry to its exit, as `lock_sock` does.

use super::{APP_CORE, Sock, SocketId, SocketStats, TcpOptions, isn_for};
use crate::world::HostIx;
use crate::world::{World, WorldError};
use engine::{Budget, Stage};
use host::{CpuWork, Spin};
use std::collections::VecDeque;
use transport::tcp::{Connection, TsoDefer};
use units::{FlowId, SimDuration, SimTime};

impl World {
    /// The fabric flow id of socket `sock`'s frames from host `h` (for loss rules and traces).
    pub fn tcp_flow_of(h: impl Into<HostIx>, sock: SocketId) -> FlowId {
        let h: HostIx = h.into();
        FlowId(0x4000_0000 | (h.get() << 16) | (sock.0 & 0xffff))
    }

    /// Host `h`'s socket-path counters.
    pub fn socket_stats(&self, h: impl Into<HostIx>) -> SocketStats {
        let h: HostIx = h.into();
        self.state_of(h)
            .tcp
            .hosts
            .get(h.index())
            .map(|t| t.stats.clone())
            .unwrap_or_default()
    }

    /// The transport endpoint of `sock` (state, counters, cwnd...).
    pub fn tcp_connection(&self, sock: SocketId) -> &Connection {
        &self.sock(sock).conn
    }

    /// Socket `sock` as the partition of its host holds it (every partition has every
    /// socket, and only that one lives).
    fn sock(&self, sock: SocketId) -> &Sock {
        let h = self.state.tcp.socks[sock.0 as usize].host;
        &self.state_of(h).tcp.socks[sock.0 as usize]
    }

    /// Bytes the application could read from `sock` now.
    pub fn tcp_readable(&self, sock: SocketId) -> usize {
        let s = self.sock(sock);
        if s.reader_blocked && self.sched.now() < s.wake_at {
            return 0;
        }
        s.conn.bytes_readable()
    }

    /// Free space in `sock`'s send buffer.
    pub fn tcp_writable(&self, sock: SocketId) -> usize {
        self.sock(sock).conn.send_buffer_free()
    }

    /// Bytes `sock`'s connection holds for the application, whether or not its reader has been
    /// woken yet (see [`World::tcp_ready_at`]).
    pub fn tcp_bytes_readable(&self, sock: SocketId) -> usize {
        self.sock(sock).conn.bytes_readable()
    }

    /// When `sock`'s application thread can act: after its blocking calls and after the wake-up
    /// that follows new data.
    pub fn tcp_ready_at(&self, sock: SocketId) -> SimTime {
        let s = self.sock(sock);
        let wake = if s.wake_at == SimTime::MAX {
            SimTime::ZERO
        } else {
            s.wake_at
        };
        self.app_ready(s.host).max(wake)
    }

    /// The time of the next pending event, if any.
    pub fn next_event_at(&self) -> Option<SimTime> {
        self.scheds().iter().filter_map(|s| s.peek_time()).min()
    }

    /// Runs the world until `sock` has bytes to read (or room to write, with `for_write`), or
    /// nothing is left to do; returns whether the condition holds.
    pub fn tcp_wait(
        &mut self,
        sock: SocketId,
        for_write: bool,
        budget: &Budget,
    ) -> Result<bool, WorldError> {
        loop {
            let s = self.sock(sock);
            let ready_at = self.app_ready(s.host).max(s.wake_at);
            let ok = if for_write {
                s.conn.send_buffer_free() > 0
            } else {
                s.conn.bytes_readable() > 0
            };
            let now = self.sched.now();
            if ok && now >= ready_at {
                return Ok(true);
            }
            let next = match self.next_event_at() {
                Some(t) if ok => t.min(ready_at),
                Some(t) => t,
                None if ok => ready_at,
                None => return Ok(false),
            };
            self.run_until(next.max(now + SimDuration::from_ps(1)), budget)?;
        }
    }

    /// Opens a TCP connection from host `a` to host `b`: the three-way handshake runs over the
    /// fabric through both socket paths; returns (client socket, server socket) once both are
    /// ESTABLISHED.
    pub fn tcp_connect(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        opts: &TcpOptions,
    ) -> Result<(SocketId, SocketId), WorldError> {
        let (a, b): (HostIx, HostIx) = (a.into(), b.into());
        if a.get() >= self.host_count() || b.get() >= self.host_count() {
            return Err(WorldError::NoHost(a.max(b).get()));
        }
        opts.config.validate()?;
        // Every partition holds every socket (each lives for its own host's), so a socket's
        // number is the same in all of them.
        let n = self.state.tcp.socks.len() as u32;
        let (ca, cb) = (n, n + 1);
        let pa = 40_000 + (ca as u16);
        let pb = 5_001 + (cb as u16);
        // A host that segments in the NIC defers small ACK-clocked pieces as Linux does.
        let config_of = |h: HostIx| {
            let mut c = opts.config.clone();
            if opts.tso {
                c.tso_defer = Some(TsoDefer {
                    max_bytes: self.state.hosts[h.index()].profile.socket.offload_max_bytes,
                    win_divisor: transport::tcp::tso::DEFAULT_WIN_DIVISOR,
                });
            }
            c
        };
        let client = Connection::connect(config_of(a), pa, pb, isn_for(a, pa))?;
        let server = Connection::listen(config_of(b), pb, isn_for(b, pb))?;
        let setup = self.state_of(a).hosts[a.index()].cpu.setup_mode();
        let mk = |host, peer_host, port, peer_port, conn| Sock {
            host,
            peer_host,
            peer_port,
            port,
            conn,
            opts: opts.clone(),
            timer_at: None,
            connected: false,
            reader_blocked: false,
            blocked_since: SimTime::ZERO,
            core_busy_at_block: SimDuration::ZERO,
            wake_at: SimTime::ZERO,
            writer_blocked: false,
            uring_count: 0,
            written: 0,
            zc_pending: VecDeque::new(),
            owned: (SimTime::ZERO, SimTime::ZERO),
            backlog: Vec::new(),
            setup,
        };
        let (sa, sb) = (mk(a, b, pa, pb, client), mk(b, a, pb, pa, server));
        self.each_state(|st| {
            st.tcp.socks.push(sa.clone());
            st.tcp.socks.push(sb.clone());
            st.tcp_host(a).by_port.insert(pa, ca);
            st.tcp_host(b).by_port.insert(pb, cb);
        });
        let now = self.sched.now();
        for (h, name) in [(b, Stage::SocketAccept), (a, Stage::SocketConnect)] {
            self.focus_host(h);
            let host = &mut self.state.hosts[h.index()];
            let ready = now.max(host.app_ready);
            let cost = host.profile.socket.syscall;
            let (_, end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready,
                    cost,
                    stage: name,
                    setup: true,
                },
            );
            host.app_ready = end;
            *self
                .state
                .tcp_host(h)
                .stats
                .setup_syscalls
                .entry(name.name())
                .or_default() += 1;
        }
        self.focus_host(a);
        let ready = self.state.hosts[a.index()].app_ready;
        self.state.tcp_output(ca, APP_CORE, ready, &mut self.sched);
        let budget = self.step_budget();
        loop {
            let (x, y) = (
                &self.state_of(a).tcp.socks[ca as usize],
                &self.state_of(b).tcp.socks[cb as usize],
            );
            if x.connected && y.connected {
                break;
            }
            if x.conn.state() == transport::tcp::State::Closed
                || y.conn.state() == transport::tcp::State::Closed
            {
                return Err(WorldError::Exchange);
            }
            let Some(t) = self.next_event_at() else {
                return Err(WorldError::Exchange);
            };
            self.run_until(t.max(self.sched.now() + SimDuration::from_ps(1)), &budget)?;
        }
        Ok((SocketId(ca), SocketId(cb)))
    }

    /// `write()` (or an io_uring send) of `data` on `sock` from host `h`'s application thread:
    /// returns how many bytes the send buffer accepted (0 when it is full: a blocking writer
    /// waits with [`World::tcp_wait`] and writes the rest).
    pub fn tcp_write(&mut self, h: impl Into<HostIx>, sock: SocketId, data: &[u8]) -> usize {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let si = sock.0 as usize;
        if self.state.tcp.socks[si].conn.send_buffer_free() == 0 || data.is_empty() {
            self.state.tcp.socks[si].writer_blocked = !data.is_empty();
            return 0;
        }
        self.tcp_release_before_syscall(sock.0);
        let opts = self.state.tcp.socks[si].opts.clone();
        let host = &mut self.state.hosts[h.index()];
        let c = host.profile.socket;
        let mut ready = now.max(host.app_ready);
        let lock_from = ready;
        let half = SimDuration::from_ps(c.syscall.as_ps() / 2);
        let uring = opts.io_uring_batch > 1;
        let mut syscall = None;
        if uring {
            let s = &mut self.state.tcp.socks[si];
            if s.uring_count.is_multiple_of(opts.io_uring_batch as u64) {
                syscall = Some("io_uring_enter");
            }
            s.uring_count += 1;
            (_, ready) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready,
                    cost: c.io_uring_sqe,
                    stage: Stage::IoUringSqePrep,
                    setup: false,
                },
            );
            if syscall.is_some() {
                (_, ready) = host.cpu.run(
                    &mut self.state.tracer,
                    now,
                    CpuWork {
                        core: APP_CORE,
                        ready,
                        cost: half,
                        stage: Stage::IoUringEnterEntry,
                        setup: false,
                    },
                );
            }
        } else {
            syscall = Some("write");
            (_, ready) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready,
                    cost: half,
                    stage: Stage::WriteEntry,
                    setup: false,
                },
            );
        }
        let s = &mut self.state.tcp.socks[si];
        let n = s.conn.send(data);
        s.written += n as u64;
        if opts.msg_zerocopy {
            let w = s.written;
            s.zc_pending.push_back(w);
        } else {
            (_, ready) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready,
                    cost: c.copy.time(n as u64),
                    stage: Stage::CopyUserToKernel,
                    setup: false,
                },
            );
        }
        let end = self
            .state
            .tcp_output(sock.0, APP_CORE, ready, &mut self.sched);
        let host = &mut self.state.hosts[h.index()];
        let mut end = end;
        if syscall.is_some() {
            let name = if uring {
                Stage::IoUringEnterExit
            } else {
                Stage::WriteExit
            };
            (_, end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready: end,
                    cost: half,
                    stage: name,
                    setup: false,
                },
            );
        }
        host.app_ready = end;
        self.state.tcp.socks[si].owned = (lock_from, end);
        let st = &mut self.state.tcp_host(h).stats;
        if let Some(name) = syscall {
            *st.syscalls.entry(name).or_default() += 1;
        }
        if !opts.msg_zerocopy {
            st.copies += 1;
            st.copied_bytes += n as u64;
        }
        n
    }

    /// `read()` on `sock` by host `h`'s application thread into `buf`: returns how many bytes
    /// were read; 0 when nothing is readable (the thread is blocked in the syscall until data
    /// arrives and it has been woken; call again after [`World::tcp_wait`]).
    pub fn tcp_read(&mut self, h: impl Into<HostIx>, sock: SocketId, buf: &mut [u8]) -> usize {
        let h: HostIx = h.into();
        self.focus_host(h);
        let now = self.sched.now();
        let si = sock.0 as usize;
        self.tcp_release_before_syscall(sock.0);
        let host = &mut self.state.hosts[h.index()];
        let c = host.profile.socket;
        let half = SimDuration::from_ps(c.syscall.as_ps() / 2);
        let s = &mut self.state.tcp.socks[si];
        if s.reader_blocked && now < s.wake_at {
            return 0;
        }
        let avail = s.conn.bytes_readable();
        let mut ready = now.max(host.app_ready);
        let mut new_syscall = false;
        if !s.reader_blocked {
            new_syscall = true;
            (_, ready) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: APP_CORE,
                    ready,
                    cost: half,
                    stage: Stage::ReadEntry,
                    setup: false,
                },
            );
            host.app_ready = ready;
        }
        if avail == 0 || buf.is_empty() {
            if !s.reader_blocked {
                s.reader_blocked = true;
                s.blocked_since = ready;
                s.core_busy_at_block = host.cpu.core_busy(APP_CORE);
                s.wake_at = SimTime::MAX;
            }
            if new_syscall {
                *self
                    .state
                    .tcp_host(h)
                    .stats
                    .syscalls
                    .entry("read")
                    .or_default() += 1;
            }
            return 0;
        }
        let mut spin = SimDuration::ZERO;
        if s.reader_blocked && s.opts.busy_poll {
            // The reader spun on its core from blocking until now, except while the core ran
            // other stages (the polling work itself): charge the rest as a CPU stage.
            let window = now.saturating_duration_since(s.blocked_since);
            let worked = host
                .cpu
                .core_busy(APP_CORE)
                .saturating_sub(s.core_busy_at_block);
            spin = window.saturating_sub(worked);
            if spin > SimDuration::ZERO {
                host.cpu.charge_spin(
                    &mut self.state.tracer,
                    now,
                    Spin {
                        core: APP_CORE,
                        from: s.blocked_since,
                        to: now,
                        cost: spin,
                        stage: Stage::BusyPoll,
                    },
                );
            }
        }
        s.reader_blocked = false;
        s.wake_at = SimTime::ZERO;
        let lock_from = ready;
        let n = s.conn.recv(buf);
        (_, ready) = host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready,
                cost: c.copy.time(n as u64),
                stage: Stage::CopyKernelToUser,
                setup: false,
            },
        );
        // A window update the read made due goes out from process context.
        let end = self
            .state
            .tcp_output(sock.0, APP_CORE, ready, &mut self.sched);
        let host = &mut self.state.hosts[h.index()];
        let (_, end) = host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: APP_CORE,
                ready: end,
                cost: half,
                stage: Stage::ReadExit,
                setup: false,
            },
        );
        host.app_ready = end;
        self.state.tcp.socks[si].owned = (lock_from, end);
        let st = &mut self.state.tcp_host(h).stats;
        if new_syscall {
            *st.syscalls.entry("read").or_default() += 1;
        }
        st.copies += 1;
        st.copied_bytes += n as u64;
        st.busy_poll_time += spin;
        n
    }

    /// A syscall on `si` is about to start: the previous one's release processes the backlog
    /// first, if its end has come.
    pub(super) fn tcp_release_before_syscall(&mut self, si: u32) {
        let s = &self.state.tcp.socks[si as usize];
        if s.backlog.is_empty() || self.sched.now() < s.owned.1 {
            return;
        }
        self.state.tcp_release_backlog(si, &mut self.sched);
    }
}
