//! The kernel TCP socket path: `write()` and `read()` through both kernels, timed stage by
//! stage on the hosts' cores, PCIe and NIC, over the same fabric as RDMA.
//!
//! # The path, as timed here (DESIGN.md §3.6; lesson 1's nine steps)
//!
//! Send (`World::tcp_write`, on the application core 0): `write() syscall entry`, `copy
//! user→kernel` of the bytes the send buffer accepted (skipped with MSG_ZEROCOPY), then the
//! kernel transmits what the congestion and receive windows allow: `TCP/IP TX` per segment, or
//! per TSO super-segment of up to 64 KiB; `driver TX + doorbell` per batch, whose MMIO write
//! crosses PCIe; the NIC DMA-reads each wire segment from kernel memory (from the user's pages
//! with MSG_ZEROCOPY), spends its pipeline latency and hands the frame to its port;
//! `write() syscall exit`.
//!
//! Receive: the NIC DMA-writes the frame into the kernel's ring; an interrupt is raised when
//! `coalesce_frames` segments are waiting or `coalesce_usecs` after the first (ethtool's
//! rx-frames / rx-usecs), unless a NAPI poll is already pending. The interrupt (`hard
//! interrupt`) runs on the softirq core and schedules a NAPI poll (`softirq (NAPI poll)`, up to
//! 64 segments): `driver RX` per wire segment, then `TCP/IP RX` per segment as the stack sees
//! it: with GRO, consecutive in-order segments of a connection are merged first (up to 64 KiB),
//! so the stack, and the ACK it sends, run once per merged segment. ACKs and window updates go
//! out through the same TX path (`TCP TX (ACK)`, driver, doorbell, DMA); on the sender, ACKs
//! clock out more data from softirq context (`TCP/IP TX` on the softirq core), except while
//! the application holds the socket: a `write()` or `read()` owns it (`lock_sock`) from its
//! entry to its exit, and a segment the stack finishes then waits in the socket's backlog until
//! the syscall lets go (`tcp_add_backlog`, `__release_sock`); the application core processes
//! it, and runs the ACKs and sends it clocks. (Simplification: the segment's `TCP/IP RX` cost
//! stays on the softirq core; Linux splits it, the lookup there and the rest in the backlog.)
//! A host with TSO defers a small ACK-clocked piece of a larger write until the next ACK, as
//! Linux's `tcp_tso_should_defer` does (`transport::tcp::tso`). When data
//! becomes readable and the reader is blocked in `read()`, it is woken (`wake-up (context
//! switch)` on core 0). `World::tcp_read`: `read() syscall entry`, `copy kernel→user`, `read()
//! syscall exit`; a read that finds nothing blocks (the caller's loop waits, see
//! [`World::tcp_wait`]), and the syscall it entered is the one that later returns the data.
//!
//! Cores: the application runs on core 0, interrupts and softirqs on core 1. This is the usual
//! tuned server setup (RSS/IRQ affinity steering the queue's interrupt away from the
//! application's core): the receive stack and the copy to user run in parallel, so a stream is
//! limited by the busier of the two cores rather than their sum. With one core both share
//! core 0 ([`host::Cpu::run`] clamps the core index).
//!
//! Options ([`TcpOptions`]): TSO, GRO, interrupt coalescing, busy-poll (the blocked reader
//! polls the ring on its own core: no interrupt, no wake-up; the time it spins is counted),
//! MSG_ZEROCOPY (no send copy; a completion notification per write once it is acknowledged),
//! io_uring (one `io_uring_enter` syscall per `io_uring_batch` writes, a submission-entry
//! cost per write).
//!
//! Counters per host ([`SocketStats`]): syscalls by name, copies and CPU-copied bytes,
//! interrupts, softirq runs, context switches, DMA bytes and memory-bus bytes (DMA bytes + 2 ×
//! CPU-copied bytes, a copy reads and writes every byte: DESIGN.md §3.3).
//!
//! # Simplifications
//! - Sockets are demultiplexed by destination port only (every socket has a port unique on its
//!   host); no listen queue or `accept()` backlog: [`World::tcp_connect`] builds both ends.
//! - The transport is told a segment was sent when the kernel hands it to the driver (Linux
//!   timestamps skbs there too); NIC queueing after that counts in the measured RTT.
//! - The NIC holds at most [`TCP_NIC_WINDOW`] frames between its DMA and its port (an estimate
//!   of descriptor prefetch depth); the kernel's ring ahead of it is unbounded.
//! - Payload bytes are real in the simulator (the transport copies each segment into a `Vec`);
//!   the CPU cost of a copy is the model's, not the simulator's.

use super::{Event, HostEvent, PoolData, State, World, WorldError};
use engine::{Arena, Budget, ExecUnit, Scheduler, Stage, TraceRecord};
use fabric::packet::{TCP_PRIORITY, tcp_frame_len};
use fabric::{Ecn, FiveTuple, PacketSpec, Payload, packet::host_ip};
use host::{CpuWork, Spin, Xfer, XferKind};
use std::collections::{BTreeMap, VecDeque};
use transport::tcp::{Config, Connection, Event as TcpConnEvent, Transmit, TsoDefer};
use units::{FlowId, SimDuration, SimTime};
use wire::tcp::Flags;

/// Frames the NIC keeps between its DMA reads and its port for TCP.
/// estimate: NICs prefetch tens of descriptors; 16 keeps a 100 Gb/s port busy with 1500-byte
/// frames across the ~0.75 µs of DMA round trip and pipeline (research/figures.md §3).
pub const TCP_NIC_WINDOW: usize = 16;

/// Segments one NAPI poll handles at most (Linux's default NAPI weight, `NAPI_POLL_WEIGHT`).
pub const NAPI_BUDGET: usize = 64;

/// Bytes of Ethernet, VLAN, IPv4 and TCP headers the NIC moves with a segment's payload (the
/// timestamp option included).
const HEADER_BYTES: u64 = 14 + 4 + 20 + 32;

/// The core the application thread runs on.
pub const APP_CORE: u16 = 0;
/// The core interrupts and softirqs run on (see the module doc).
pub const SOFTIRQ_CORE: u16 = 1;

/// A socket in the world.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct SocketId(pub u32);

/// How a TCP connection and its hosts' socket path are set up.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpOptions {
    /// The transport's settings (MSS, send and receive buffer sizes, SACK, ...).
    pub config: Config,
    /// TCP segmentation offload: one stack pass per super-segment of up to 64 KiB; the NIC cuts
    /// it into MSS-sized frames. Default on (Linux and every 100 Gb/s NIC).
    pub tso: bool,
    /// Generic receive offload: consecutive in-order segments are merged before the stack.
    /// Default on (Linux default).
    pub gro: bool,
    /// Interrupt coalescing: raise the interrupt once this many segments wait (ethtool
    /// rx-frames; scenario key `tcp.rx_frames`). 1 = an interrupt per segment. Default 32.
    /// source: Linux drivers/net/ethernet/mellanox/mlx5/core/en.h,
    /// `MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_PKTS` 0x20.
    pub coalesce_frames: u32,
    /// Interrupt coalescing: or this long after the first waiting segment (ethtool rx-usecs;
    /// scenario key `tcp.rx_usecs`); zero fires at once. Default 8 µs.
    /// source: Linux mlx5 en.h, `MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC_FROM_CQE` 0x8 (the
    /// CQE-based period; other kernel versions use 0x3, the EQE-based default is 0x10). Adaptive
    /// moderation (net DIM, on by default in mlx5) is not modelled: the timer is fixed.
    pub coalesce_usecs: SimDuration,
    /// The reader spins polling the NIC ring while blocked in `read()` (SO_BUSY_POLL): no
    /// interrupt and no wake-up, but its core is busy. Default off.
    pub busy_poll: bool,
    /// `send(MSG_ZEROCOPY)`: no user→kernel copy; the NIC reads the user's pages; each write
    /// costs a completion notification once acknowledged. Default off.
    pub msg_zerocopy: bool,
    /// Writes per `io_uring_enter` syscall; 0 or 1 = plain `write()`. Default 0.
    pub io_uring_batch: u32,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions {
            config: Config::datacenter(),
            tso: true,
            gro: true,
            coalesce_frames: 32,
            coalesce_usecs: SimDuration::from_us(8),
            busy_poll: false,
            msg_zerocopy: false,
            io_uring_batch: 0,
        }
    }
}

/// Socket-path counters of one host.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct SocketStats {
    /// Data-path syscalls by name (`write`, `read`, `io_uring_enter`).
    pub syscalls: BTreeMap<&'static str, u64>,
    /// Setup syscalls by name (`socket+connect`, `socket+listen+accept`).
    pub setup_syscalls: BTreeMap<&'static str, u64>,
    /// CPU copies between user and kernel memory.
    pub copies: u64,
    /// Bytes those copies moved.
    pub copied_bytes: u64,
    /// Hard interrupts.
    pub interrupts: u64,
    /// Softirq (NAPI poll) runs.
    pub softirq_runs: u64,
    /// Context switches (wake-ups of a blocked thread).
    pub context_switches: u64,
    /// Bytes the NIC moved by DMA for TCP (frames read and written, headers included).
    pub dma_bytes: u64,
    /// Wire segments sent.
    pub segments_sent: u64,
    /// Wire segments received.
    pub segments_received: u64,
    /// Segments the receive stack processed (after GRO merging).
    pub stack_segments: u64,
    /// Stack passes on transmit (segments, or TSO super-segments).
    pub tx_stack_passes: u64,
    /// MSG_ZEROCOPY completion notifications.
    pub zerocopy_notifications: u64,
    /// Time a busy-polling reader spent spinning.
    pub busy_poll_time: SimDuration,
}

impl SocketStats {
    /// Data-path syscalls in total.
    pub fn syscall_count(&self) -> u64 {
        self.syscalls.values().sum()
    }
    /// Memory-bus bytes: DMA bytes plus twice the CPU-copied bytes (a copy reads and writes).
    pub fn memory_bus_bytes(&self) -> u64 {
        self.dma_bytes + 2 * self.copied_bytes
    }
}

/// Events of the socket path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TcpEvent {
    /// The NIC looks at the kernel's TX ring again.
    NicPump {
        /// Host ordinal.
        host: u32,
    },
    /// A frame leaves the NIC pipeline for the port.
    TxOut {
        /// Host ordinal.
        host: u32,
        /// Slot of the frame.
        slot: u32,
    },
    /// The coalescing timer of the host's RX queue ran out.
    IrqTimer {
        /// Host ordinal.
        host: u32,
    },
    /// A NAPI poll of the host's RX ring.
    Napi {
        /// Host ordinal.
        host: u32,
    },
    /// The stack finished processing the next group of received segments.
    RxStack {
        /// Host ordinal.
        host: u32,
    },
    /// The application thread released the socket (`release_sock`): it processes the
    /// segments that arrived while it held the lock.
    Backlog {
        /// Host ordinal.
        host: u32,
        /// The socket.
        sock: u32,
    },
    /// A socket's transport timer is due.
    Timer {
        /// Host ordinal.
        host: u32,
        /// The socket.
        sock: u32,
    },
}

struct NicSeg {
    ready: SimTime,
    sock: u32,
    t: Transmit,
    zerocopy: bool,
}

struct TxSlot {
    sock: u32,
    t: Transmit,
}

struct RxSeg {
    at: SimTime,
    sock: u32,
    repr: wire::tcp::Repr,
    payload: Vec<u8>,
    ecn: Ecn,
}

#[derive(Default)]
struct TcpHost {
    by_port: BTreeMap<u16, u32>,
    nic_q: VecDeque<NicSeg>,
    pump_at: Option<SimTime>,
    ring: VecDeque<RxSeg>,
    napi_pending: bool,
    napi_core: u16,
    irq_timer_at: Option<SimTime>,
    stack_q: VecDeque<Vec<RxSeg>>,
    stats: SocketStats,
}

struct Sock {
    host: u32,
    peer_host: u32,
    peer_port: u16,
    port: u16,
    conn: Connection,
    opts: TcpOptions,
    timer_at: Option<SimTime>,
    connected: bool,
    reader_blocked: bool,
    blocked_since: SimTime,
    /// The application core's busy time when the reader blocked (busy-poll accounting).
    core_busy_at_block: SimDuration,
    wake_at: SimTime,
    writer_blocked: bool,
    uring_count: u64,
    written: u64,
    zc_pending: VecDeque<u64>,
    /// When the application thread holds the socket's lock (`lock_sock`, from its syscall's
    /// entry to its exit): a segment the stack finishes then waits in the backlog.
    owned: (SimTime, SimTime),
    /// Segments that arrived while the application held the socket, processed when it lets
    /// go (`tcp_add_backlog`, `__release_sock`, net/ipv4/tcp_ipv4.c, net/core/sock.c).
    backlog: Vec<RxSeg>,
    /// Opened while the host's CPU counted work as setup (the out-of-band exchange): the
    /// socket's work stays setup after the exchange returns, e.g. a delayed ACK that fires
    /// while the RDMA data path is already running.
    setup: bool,
}

/// The socket path's state in the world.
#[derive(Default)]
pub(super) struct TcpWorld {
    hosts: Vec<TcpHost>,
    socks: Vec<Sock>,
    tx_slots: Arena<TxSlot>,
}

/// A stable initial sequence number for a socket (no RNG: runs are reproducible).
fn isn_for(host: u32, port: u16) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in host.to_be_bytes().into_iter().chain(port.to_be_bytes()) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

impl World {
    /// The fabric flow id of socket `sock`'s frames from host `h` (for loss rules and traces).
    pub fn tcp_flow_of(h: u32, sock: SocketId) -> FlowId {
        FlowId(0x4000_0000 | (h << 16) | (sock.0 & 0xffff))
    }

    /// Host `h`'s socket-path counters.
    pub fn socket_stats(&self, h: u32) -> SocketStats {
        self.state
            .tcp
            .hosts
            .get(h as usize)
            .map(|t| t.stats.clone())
            .unwrap_or_default()
    }

    /// The transport endpoint of `sock` (state, counters, cwnd...).
    pub fn tcp_connection(&self, sock: SocketId) -> &Connection {
        &self.state.tcp.socks[sock.0 as usize].conn
    }

    /// Bytes the application could read from `sock` now.
    pub fn tcp_readable(&self, sock: SocketId) -> usize {
        let s = &self.state.tcp.socks[sock.0 as usize];
        if s.reader_blocked && self.sched.now() < s.wake_at {
            return 0;
        }
        s.conn.bytes_readable()
    }

    /// Free space in `sock`'s send buffer.
    pub fn tcp_writable(&self, sock: SocketId) -> usize {
        self.state.tcp.socks[sock.0 as usize]
            .conn
            .send_buffer_free()
    }

    /// Bytes `sock`'s connection holds for the application, whether or not its reader has been
    /// woken yet (see [`World::tcp_ready_at`]).
    pub fn tcp_bytes_readable(&self, sock: SocketId) -> usize {
        self.state.tcp.socks[sock.0 as usize].conn.bytes_readable()
    }

    /// When `sock`'s application thread can act: after its blocking calls and after the wake-up
    /// that follows new data.
    pub fn tcp_ready_at(&self, sock: SocketId) -> SimTime {
        let s = &self.state.tcp.socks[sock.0 as usize];
        let wake = if s.wake_at == SimTime::MAX {
            SimTime::ZERO
        } else {
            s.wake_at
        };
        self.app_ready(s.host).max(wake)
    }

    /// The time of the next pending event, if any.
    pub fn next_event_at(&self) -> Option<SimTime> {
        self.sched.peek_time()
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
            let s = &self.state.tcp.socks[sock.0 as usize];
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
            let next = match self.sched.peek_time() {
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
        a: u32,
        b: u32,
        opts: &TcpOptions,
    ) -> Result<(SocketId, SocketId), WorldError> {
        if a >= self.host_count() || b >= self.host_count() {
            return Err(WorldError::NoHost(a.max(b)));
        }
        opts.config.validate()?;
        let n = self.state.tcp.socks.len() as u32;
        let (ca, cb) = (n, n + 1);
        let pa = 40_000 + (ca as u16);
        let pb = 5_001 + (cb as u16);
        // A host that segments in the NIC defers small ACK-clocked pieces as Linux does.
        let config_of = |h: u32| {
            let mut c = opts.config.clone();
            if opts.tso {
                c.tso_defer = Some(TsoDefer {
                    max_bytes: self.state.hosts[h as usize]
                        .profile
                        .socket
                        .offload_max_bytes,
                    win_divisor: transport::tcp::tso::DEFAULT_WIN_DIVISOR,
                });
            }
            c
        };
        let client = Connection::connect(config_of(a), pa, pb, isn_for(a, pa))?;
        let server = Connection::listen(config_of(b), pb, isn_for(b, pb))?;
        let setup = self.state.hosts[a as usize].cpu.setup_mode();
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
        self.state.tcp.socks.push(mk(a, b, pa, pb, client));
        self.state.tcp.socks.push(mk(b, a, pb, pa, server));
        self.state.tcp_host(a).by_port.insert(pa, ca);
        self.state.tcp_host(b).by_port.insert(pb, cb);
        let now = self.sched.now();
        for (h, name) in [(b, Stage::SocketAccept), (a, Stage::SocketConnect)] {
            let host = &mut self.state.hosts[h as usize];
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
        let ready = self.state.hosts[a as usize].app_ready;
        self.state.tcp_output(ca, APP_CORE, ready, &mut self.sched);
        let budget = Budget::default();
        loop {
            let (x, y) = (
                &self.state.tcp.socks[ca as usize],
                &self.state.tcp.socks[cb as usize],
            );
            if x.connected && y.connected {
                break;
            }
            if x.conn.state() == transport::tcp::State::Closed
                || y.conn.state() == transport::tcp::State::Closed
            {
                return Err(WorldError::Exchange);
            }
            let Some(t) = self.sched.peek_time() else {
                return Err(WorldError::Exchange);
            };
            self.run_until(t.max(self.sched.now() + SimDuration::from_ps(1)), &budget)?;
        }
        Ok((SocketId(ca), SocketId(cb)))
    }

    /// `write()` (or an io_uring send) of `data` on `sock` from host `h`'s application thread:
    /// returns how many bytes the send buffer accepted (0 when it is full: a blocking writer
    /// waits with [`World::tcp_wait`] and writes the rest).
    pub fn tcp_write(&mut self, h: u32, sock: SocketId, data: &[u8]) -> usize {
        let now = self.sched.now();
        let si = sock.0 as usize;
        if self.state.tcp.socks[si].conn.send_buffer_free() == 0 || data.is_empty() {
            self.state.tcp.socks[si].writer_blocked = !data.is_empty();
            return 0;
        }
        self.tcp_release_before_syscall(sock.0);
        let opts = self.state.tcp.socks[si].opts.clone();
        let host = &mut self.state.hosts[h as usize];
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
        let host = &mut self.state.hosts[h as usize];
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
    pub fn tcp_read(&mut self, h: u32, sock: SocketId, buf: &mut [u8]) -> usize {
        let now = self.sched.now();
        let si = sock.0 as usize;
        self.tcp_release_before_syscall(sock.0);
        let host = &mut self.state.hosts[h as usize];
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
        let host = &mut self.state.hosts[h as usize];
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
    fn tcp_release_before_syscall(&mut self, si: u32) {
        let s = &self.state.tcp.socks[si as usize];
        if s.backlog.is_empty() || self.sched.now() < s.owned.1 {
            return;
        }
        self.state.tcp_release_backlog(si, &mut self.sched);
    }
}

/// The socket path's event handlers, and what they share with the socket calls (which pass
/// them the world's scheduler).
impl State {
    /// Host `h`'s socket-path state, made on first use.
    fn tcp_host(&mut self, h: u32) -> &mut TcpHost {
        let hosts = &mut self.tcp.hosts;
        if hosts.len() <= h as usize {
            hosts.resize_with(h as usize + 1, TcpHost::default);
        }
        &mut hosts[h as usize]
    }

    /// The kernel transmits what socket `si`'s transport wants to send, running the stack on
    /// `core` from `ready`; returns when the CPU work ends.
    fn tcp_output(
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
        let host = &mut self.hosts[h as usize];
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
    pub(super) fn tcp_nic_pump(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(th) = self.tcp.hosts.get_mut(h as usize) else {
            return;
        };
        if th.pump_at.is_some_and(|t| t <= now) {
            th.pump_at = None;
        }
        loop {
            let th = &mut self.tcp.hosts[h as usize];
            // First what is cheap and usually decides (an RDMA host has no segments waiting),
            // then the port's backlog, which reads the fabric.
            let Some(front) = th.nic_q.front() else {
                return;
            };
            let host = &mut self.hosts[h as usize];
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

    fn tcp_tx_out(&mut self, h: u32, slot: u32, sched: &mut Scheduler<Event>) {
        let s = self.tcp.tx_slots.remove(engine::Handle::from_index(slot));
        self.hosts[h as usize].tx_inflight -= 1;
        let sock = &self.tcp.socks[s.sock as usize];
        let peer = sock.peer_host;
        let repr = s.t.repr;
        let data = if s.t.payload.is_empty() {
            fabric::NO_DATA
        } else {
            self.pool.insert(PoolData::Bytes(s.t.payload)).index()
        };
        let src_ip = host_ip(h);
        let dst_ip = host_ip(peer);
        let spec = PacketSpec {
            flow: World::tcp_flow_of(h, SocketId(s.sock)),
            dst: self.hosts[peer as usize].node,
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
        let node = self.hosts[h as usize].node;
        if self.fabric.send(node, spec, sched).is_err() {
            self.free_data(data);
        }
        self.tcp_nic_pump(h, sched);
        self.pump_tx(h, sched);
    }

    /// A TCP frame has passed the receiving NIC's pipeline: DMA into the kernel's ring, then an
    /// interrupt (or a poll) per the coalescing settings.
    pub(super) fn tcp_rx_frame(
        &mut self,
        h: u32,
        pkt: &fabric::Packet,
        repr: wire::tcp::Repr,
        data: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let payload = if data == fabric::NO_DATA {
            Vec::new()
        } else {
            match self.pool.remove(engine::Handle::from_index(data)) {
                PoolData::Bytes(b) => b,
                PoolData::Synthetic(_) => Vec::new(),
            }
        };
        let Some(&si) = self
            .tcp
            .hosts
            .get(h as usize)
            .and_then(|t| t.by_port.get(&repr.dst_port))
        else {
            return;
        };
        let setup = self.tcp.socks[si as usize].setup;
        self.as_setup_if(h, setup, |w| {
            w.tcp_rx_landed(h, si, pkt, repr, payload, sched)
        });
    }

    /// Whether a TCP segment arriving at host `h` is for a socket of the out-of-band
    /// exchange (see [`Sock::setup`]).
    pub(super) fn tcp_frame_is_setup(&self, h: u32, repr: &wire::tcp::Repr) -> bool {
        self.tcp
            .hosts
            .get(h as usize)
            .and_then(|t| t.by_port.get(&repr.dst_port))
            .is_some_and(|&si| self.tcp.socks[si as usize].setup)
    }

    /// Runs `f` with host `h`'s stages counted as setup when `setup` is true (work for a
    /// socket of the out-of-band exchange), restoring the previous mode after.
    fn as_setup_if<R>(&mut self, h: u32, setup: bool, f: impl FnOnce(&mut State) -> R) -> R {
        let prev = self.hosts[h as usize].cpu.setup_mode();
        if !setup || prev {
            return f(self);
        }
        self.hosts[h as usize].cpu.set_setup_mode(true);
        let r = f(self);
        self.hosts[h as usize].cpu.set_setup_mode(prev);
        r
    }

    /// Whether the work `ev` starts is for a setup socket (see [`Sock::setup`]), and on which
    /// host. Host-wide work (a NAPI poll, the NIC pump) goes by the socket of the segment at
    /// the head of the queue it serves.
    fn tcp_event_setup(&self, ev: &TcpEvent) -> (u32, bool) {
        let sock_setup = |si: u32| self.tcp.socks.get(si as usize).is_some_and(|s| s.setup);
        let th = |h: u32| self.tcp.hosts.get(h as usize);
        match *ev {
            TcpEvent::NicPump { host } => (
                host,
                th(host)
                    .and_then(|t| t.nic_q.front())
                    .is_some_and(|s| sock_setup(s.sock)),
            ),
            TcpEvent::TxOut { host, slot } => (
                host,
                sock_setup(self.tcp.tx_slots.get(engine::Handle::from_index(slot)).sock),
            ),
            TcpEvent::IrqTimer { host } | TcpEvent::Napi { host } => (
                host,
                th(host)
                    .and_then(|t| t.ring.front())
                    .is_some_and(|s| sock_setup(s.sock)),
            ),
            TcpEvent::RxStack { host } => (
                host,
                th(host)
                    .and_then(|t| t.stack_q.front())
                    .and_then(|g| g.first())
                    .is_some_and(|s| sock_setup(s.sock)),
            ),
            TcpEvent::Timer { host, sock } | TcpEvent::Backlog { host, sock } => {
                (host, sock_setup(sock))
            }
        }
    }

    /// A segment for socket `si` reached host `h`'s NIC: DMA into the ring, then an interrupt
    /// (or busy-poll) per the coalescing settings.
    fn tcp_rx_landed(
        &mut self,
        h: u32,
        si: u32,
        pkt: &fabric::Packet,
        repr: wire::tcp::Repr,
        payload: Vec<u8>,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let host = &mut self.hosts[h as usize];
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
        let th = &mut self.tcp.hosts[h as usize];
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
    fn tcp_irq(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let th = &mut self.tcp.hosts[h as usize];
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
        let host = &mut self.hosts[h as usize];
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
    fn tcp_napi(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let th = &mut self.tcp.hosts[h as usize];
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
        let host = &mut self.hosts[h as usize];
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
        let th = &mut self.tcp.hosts[h as usize];
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
    fn tcp_rx_stack(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(g) = self.tcp.hosts[h as usize].stack_q.pop_front() else {
            return;
        };
        let core = self.tcp.hosts[h as usize].napi_core;
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
    fn tcp_release_backlog(&mut self, si: u32, sched: &mut Scheduler<Event>) {
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
        let ready = now.max(self.hosts[h as usize].app_ready);
        self.tcp_after(si, APP_CORE, ready, sched);
        let host = &mut self.hosts[h as usize];
        host.app_ready = host.app_ready.max(host.cpu.free_at(APP_CORE));
    }

    /// After the transport of `si` took input: send what it wants (on `core`), keep its timer,
    /// and handle its events.
    fn tcp_after(&mut self, si: u32, core: u16, ready: SimTime, sched: &mut Scheduler<Event>) {
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
        let host = &mut self.hosts[h as usize];
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
        let st = &mut self.tcp.hosts[h as usize].stats;
        st.zerocopy_notifications += notes;
        st.context_switches += switched as u64;
    }

    fn tcp_update_timer(&mut self, si: u32, sched: &mut Scheduler<Event>) {
        let s = &mut self.tcp.socks[si as usize];
        let Some(t) = s.conn.poll_timeout() else {
            return;
        };
        if s.timer_at.is_none_or(|cur| t < cur) {
            s.timer_at = Some(t);
            sched.schedule_at(
                t.max(sched.now()),
                Event::Host(HostEvent::Tcp(TcpEvent::Timer {
                    host: s.host,
                    sock: si,
                })),
            );
        }
    }

    /// Handles an event of the socket path.
    pub(super) fn tcp_handle(&mut self, ev: TcpEvent, sched: &mut Scheduler<Event>) {
        let (h, setup) = self.tcp_event_setup(&ev);
        self.as_setup_if(h, setup, |w| w.tcp_dispatch(ev, sched));
    }

    fn tcp_dispatch(&mut self, ev: TcpEvent, sched: &mut Scheduler<Event>) {
        match ev {
            TcpEvent::NicPump { host } => self.tcp_nic_pump(host, sched),
            TcpEvent::TxOut { host, slot } => self.tcp_tx_out(host, slot, sched),
            TcpEvent::IrqTimer { host } => self.tcp_irq(host, sched),
            TcpEvent::Napi { host } => self.tcp_napi(host, sched),
            TcpEvent::RxStack { host } => self.tcp_rx_stack(host, sched),
            TcpEvent::Backlog { sock, .. } => {
                let s = &self.tcp.socks[sock as usize];
                let now = sched.now();
                if !s.backlog.is_empty() && now < s.owned.1 {
                    // Another syscall took the socket since: its end releases the backlog.
                    let at = s.owned.1;
                    let host = s.host;
                    sched.schedule_at(
                        at,
                        Event::Host(HostEvent::Tcp(TcpEvent::Backlog { host, sock })),
                    );
                } else {
                    self.tcp_release_backlog(sock, sched);
                }
            }
            TcpEvent::Timer { sock, .. } => {
                let now = sched.now();
                let s = &mut self.tcp.socks[sock as usize];
                if s.timer_at == Some(now) {
                    s.timer_at = None;
                }
                if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                    s.conn.handle_timeout(now);
                    // Timers run in softirq context.
                    self.tcp_after(sock, SOFTIRQ_CORE, now, sched);
                } else {
                    self.tcp_update_timer(sock, sched);
                }
            }
        }
    }
}
