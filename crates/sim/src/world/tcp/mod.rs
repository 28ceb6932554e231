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
//! Cores: the application runs on core 0 ([`APP_CORE`]), interrupts and softirqs on core 1
//! ([`SOFTIRQ_CORE`]). This is the usual tuned server setup (RSS/IRQ affinity steering the
//! queue's interrupt away from the application's core): the receive stack and the copy to user run in parallel, so a stream is
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

use super::{APP_CORE, Event, HostEvent, HostIx, SOFTIRQ_CORE, State};
use engine::{Arena, Scheduler};
use fabric::Ecn;
use std::collections::{BTreeMap, VecDeque};
use transport::tcp::{Config, Connection, Transmit};
use units::{SimDuration, SimTime};

mod rx;
mod socket;
mod tx;

/// Frames the NIC keeps between its DMA reads and its port for TCP.
/// estimate: NICs prefetch tens of descriptors; 16 keeps a 100 Gb/s port busy with 1500-byte
/// frames across the ~0.75 µs of DMA round trip and pipeline (research/figures.md §3).
pub const TCP_NIC_WINDOW: usize = 16;

/// Segments one NAPI poll handles at most (Linux's default NAPI weight, `NAPI_POLL_WEIGHT`).
pub const NAPI_BUDGET: usize = 64;

/// Bytes of Ethernet, VLAN, IPv4 and TCP headers the NIC moves with a segment's payload (the
/// timestamp option included).
const HEADER_BYTES: u64 = 14 + 4 + 20 + 32;

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
        host: HostIx,
    },
    /// A frame leaves the NIC pipeline for the port.
    TxOut {
        /// Host ordinal.
        host: HostIx,
        /// Slot of the frame.
        slot: u32,
    },
    /// The coalescing timer of the host's RX queue ran out.
    IrqTimer {
        /// Host ordinal.
        host: HostIx,
    },
    /// A NAPI poll of the host's RX ring.
    Napi {
        /// Host ordinal.
        host: HostIx,
    },
    /// The stack finished processing the next group of received segments.
    RxStack {
        /// Host ordinal.
        host: HostIx,
    },
    /// The application thread released the socket (`release_sock`): it processes the
    /// segments that arrived while it held the lock.
    Backlog {
        /// Host ordinal.
        host: HostIx,
        /// The socket.
        sock: u32,
    },
    /// A socket's transport timer is due.
    Timer {
        /// Host ordinal.
        host: HostIx,
        /// The socket.
        sock: u32,
    },
}

impl TcpEvent {
    /// The host it happens at.
    #[inline]
    pub fn host(&self) -> HostIx {
        match *self {
            TcpEvent::NicPump { host }
            | TcpEvent::TxOut { host, .. }
            | TcpEvent::IrqTimer { host }
            | TcpEvent::Napi { host }
            | TcpEvent::RxStack { host }
            | TcpEvent::Backlog { host, .. }
            | TcpEvent::Timer { host, .. } => host,
        }
    }
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

#[derive(Clone)]
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

#[derive(Clone)]
struct Sock {
    host: HostIx,
    peer_host: HostIx,
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
fn isn_for(host: HostIx, port: u16) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in host
        .get()
        .to_be_bytes()
        .into_iter()
        .chain(port.to_be_bytes())
    {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// The socket path's event handlers, and what they share with the socket calls (which pass
/// them the world's scheduler).
impl State {
    /// Host `h`'s socket-path state, made on first use.
    fn tcp_host(&mut self, h: HostIx) -> &mut TcpHost {
        let hosts = &mut self.tcp.hosts;
        if hosts.len() <= h.index() {
            hosts.resize_with(h.index() + 1, TcpHost::default);
        }
        &mut hosts[h.index()]
    }

    /// Whether a TCP segment arriving at host `h` is for a socket of the out-of-band
    /// exchange (see [`Sock::setup`]).
    pub(super) fn tcp_frame_is_setup(&self, h: HostIx, repr: &wire::tcp::Repr) -> bool {
        self.tcp
            .hosts
            .get(h.index())
            .and_then(|t| t.by_port.get(&repr.dst_port))
            .is_some_and(|&si| self.tcp.socks[si as usize].setup)
    }

    /// Runs `f` with host `h`'s stages counted as setup when `setup` is true (work for a
    /// socket of the out-of-band exchange), restoring the previous mode after.
    fn as_setup_if<R>(&mut self, h: HostIx, setup: bool, f: impl FnOnce(&mut State) -> R) -> R {
        let prev = self.hosts[h.index()].cpu.setup_mode();
        if !setup || prev {
            return f(self);
        }
        self.hosts[h.index()].cpu.set_setup_mode(true);
        let r = f(self);
        self.hosts[h.index()].cpu.set_setup_mode(prev);
        r
    }

    /// Whether the work `ev` starts is for a setup socket (see [`Sock::setup`]), and on which
    /// host. Host-wide work (a NAPI poll, the NIC pump) goes by the socket of the segment at
    /// the head of the queue it serves.
    fn tcp_event_setup(&self, ev: &TcpEvent) -> (HostIx, bool) {
        let sock_setup = |si: u32| self.tcp.socks.get(si as usize).is_some_and(|s| s.setup);
        let th = |h: HostIx| self.tcp.hosts.get(h.index());
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
