//! The simulated world: hosts with verbs, RoCE (RC/UC/UD) and kernel TCP transports and a
//! CPU/PCIe/NIC timing model, joined by the fabric, driven by one event queue. The layers and a
//! packet's route through these files function by function are in `docs/ARCHITECTURE.md`
//! (§2.1 lists what each file owns).
//!
//! # Where each part lives
//! - this file: [`World`] and its state, the hosts ([`SimHost`]), [`HostIx`], the cores, the
//!   payload pool; `events.rs`: the events and their dispatch;
//! - the verbs API with its costs: `verbs_api.rs`; connection setup: `connect.rs`; settings
//!   between runs: `settings.rs`; a run's budget: `budget.rs`; capture and the frame log:
//!   `capture.rs`;
//! - the RDMA NIC: transmit in `rdma_tx.rs` (admission in [`nic_tx`]), receive in `rdma_rx.rs`,
//!   the responder's memory in `responder_env.rs`, DCQCN's glue in `dcqcn_glue.rs`;
//! - the kernel TCP path: `tcp/`; the out-of-band exchange over it: `exchange.rs`.
//!
//! # The RDMA host path, as timed here
//!
//! Send side: `post_send` runs on the application's core (`post_wr` per WR, user space, no
//! syscall), then rings the doorbell with an MMIO write across PCIe. When the doorbell lands, the
//! NIC takes the WQE: written by MMIO with the doorbell (BlueFlame) when it is small enough, else
//! fetched by a DMA read of its size (64 bytes, 16 more per SGE, plus any inline data); every
//! WQE a doorbell announces is fetched at once (prefetch), so the next message's WQE is ready
//! before the last packet of this one leaves. For each
//! packet the NIC gathers the payload by DMA read (inline data skips it), spends its pipeline
//! latency, and hands the frame to its port. Many reads are in flight at once, as many as the
//! NIC's transmit buffer and its PCIe read tags allow ([`nic_tx`]): requests and responses
//! (ACKs, READ responses) have a budget each, sized so one QP's gather loop covers its round
//! trip at line rate (real NICs fetch just in time rather than buffering whole messages).
//!
//! Receive side: a frame that reaches the NIC spends the pipeline latency, then the transport
//! acts: request payload is written to memory by DMA (the responder's placement), responses go
//! back through the same TX path. Every completion is a 64-byte CQE DMA write, and the CQE is in
//! the CQ (and `poll_cq` can see it) when that write lands: a send's write starts when the
//! requester reports the completion ([`HostEvent::SendDone`]), a receive's right behind its
//! message's payload write (posted writes stay in order, [`HostEvent::RecvDone`]).
//!
//! Every DMA, MMIO write, NIC pipeline pass and CPU stage is traced as an
//! [`engine::TraceRecord::Stage`] on the world's tracer.
//!
//! # Simplifications and what they cost
//! - The out-of-band QPN/PSN/GID/rkey exchange runs over a simulated TCP connection on the same
//!   fabric (`exchange.rs`, [`World::exchange_conn_info`]): the handshake, the socket calls and
//!   the segments are on the timeline as setup. [`World::connect_rc_cm`] connects with
//!   RDMA-CM's REQ/REP/RTU MADs between the hosts' QP1s instead (`rdma_cm.rs`).
//! - One NIC port per host, one PCIe link; no NIC cache misses (MTT/MPT), so huge MRs cost
//!   nothing extra per access (figures.md §4 has no numbers for those caches).
//! - A receive CQE's DMA write is booked when its message's last packet is placed, behind the
//!   payload on the same PCIe direction; a QP about to be flushed or reset has its pending
//!   receive CQEs written at once (`land_recv_cqes`), so they come before its flush completions.
//! - The NIC's transmit buffer is derived, not a ConnectX figure ([`nic_tx`]); its pipeline is
//!   one in-order queue per host (a real NIC schedules QPs onto several engines), and the PCIe
//!   read round trip is the same for every read (no root-complex tail).

use engine::{Arena, BudgetExceeded, Scheduler, Tracer};
use fabric::{DataHandle, EtherType, Fabric, FabricConfig, Topology, packet::host_ip};
use host::{Cpu, HostProfile, Pcie};
use std::collections::{BTreeMap, VecDeque};
use transport::roce::dcqcn::{self, DcqcnParams};
use transport::roce::{ReqStatus, Requester, Responder, SendRequest, Transmit};
use units::{FlowId, NodeId, Priority, SimDuration, SimTime};
use verbs::SyntheticRef;
use verbs::{Context, NicProfile, QpNum, VerbsError};
use wire::PcapWriter;

mod app_cpu;
mod budget;
mod capture;
mod connect;
mod dcqcn_glue;
mod events;
mod exchange;
pub mod nic_tx;
mod parts;
mod rdma_cm;
mod rdma_rx;
mod rdma_tx;
mod responder_env;
mod run;
mod settings;
mod tcp;
mod verbs_api;
mod whole_trace;
mod writes;
use budget::TotalBudget;
pub use capture::{FRAME_LOG_MAX, LoggedFrame, WIRE_PAYLOAD_SHOWN};
pub use connect::{
    Bringup, BufferSpec, ConnectError, ConnectStep, Connected, Endpoint, HostBuffer, RcOptions,
};
pub use events::{Event, HostEvent};
pub use exchange::ConnInfo;
pub use parts::{
    DEFAULT_THREADS_MAX, Parallelism, SPLIT_FROM_HOSTS, default_threads, default_threads_for,
};
pub use rdma_cm::{CmConnected, CmParams};
use rdma_tx::port_rate;
pub use tcp::{SocketId, SocketStats, TcpEvent, TcpOptions};
pub use whole_trace::WholeTrace;

/// A host's ordinal in the world: its index in the world's host table, in the order
/// [`Fabric::hosts`] lists the fabric's host nodes (not the fabric node number, see
/// [`World::host_of_node`]). A type of its own because a host, a QP number, a fabric node, a
/// socket and a slot are all `u32`s on the datapath, and a swapped argument compiled before.
/// The world's calls take `impl Into<HostIx>`, so a caller may still name a host by its
/// ordinal as a plain integer.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct HostIx(pub u32);

impl HostIx {
    /// The ordinal.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The ordinal as an index into a per-host table.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<u32> for HostIx {
    fn from(h: u32) -> HostIx {
        HostIx(h)
    }
}

impl std::fmt::Display for HostIx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The priority CNPs travel in (served strictly before data where the switch is set so).
// source: research/figures.md §6.1, CNP_802P_PRIO 6 (NVIDIA firmware default).
pub const CNP_PRIORITY: Priority = Priority::of(6);

/// The floor of adaptive retransmission's timeout.
// source: research/figures.md §5, NVIDIA "Adaptive Retransmission: Parameters Control"
// (minimum base timeout 4 µs, ConnectX-6 Dx and later, Apr-2025 firmware).
pub const ADAPTIVE_RETRANSMISSION_MIN: SimDuration = SimDuration::from_us(4);

/// The 802.1p priority RoCE traffic uses (the NVIDIA/Cumulus default, research/figures.md §6.2).
pub const ROCE_PRIORITY: Priority = Priority::of(3);

/// The core a host's application thread runs on: every verbs call and socket call, and the
/// application's own work ([`World::app_work`]), is charged to it.
// assumption: one application thread pinned to the first core, as perftest and the course's
// programs run (`taskset -c 0`); the interrupt goes elsewhere (SOFTIRQ_CORE).
pub const APP_CORE: u16 = 0;

/// The core interrupts and softirqs run on: the completion channel's interrupt, the TCP
/// path's hard interrupt and NAPI poll. Apart from [`APP_CORE`] as a tuned server steers them
/// (RSS/IRQ affinity), so receive work and the application run in parallel; with one core the
/// two share it ([`host::Cpu::run`] clamps the index).
pub const SOFTIRQ_CORE: u16 = 1;

/// Why a world could not be built or driven.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// A fabric or topology value is out of range.
    #[error(transparent)]
    Fabric(#[from] fabric::ConfigError),
    /// A host profile value is out of range.
    #[error(transparent)]
    Profile(#[from] host::ProfileError),
    /// A verbs call failed.
    #[error(transparent)]
    Verbs(#[from] VerbsError),
    /// Host memory could not be allocated (a buffer too large or the address space full).
    #[error(transparent)]
    Memory(#[from] verbs::MemoryError),
    /// A run exceeded a budget.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// A TCP setting is out of range.
    #[error(transparent)]
    Tcp(#[from] transport::tcp::ConfigError),
    /// No such host.
    #[error("host {0} does not exist")]
    NoHost(u32),
    /// An experiment's own setup (buffers, registrations, posts) failed.
    #[error("setting up the experiment failed: {0}")]
    Setup(String),
    /// The out-of-band exchange over TCP did not complete.
    #[error(
        "the out-of-band connection exchange over TCP did not complete: the connection closed or no event was left to run (is the link losing every frame?)"
    )]
    Exchange,
    /// A QP bring-up failed: the verb, the host and why.
    #[error(transparent)]
    Connect(Box<ConnectError>),
}

impl From<ConnectError> for WorldError {
    fn from(e: ConnectError) -> WorldError {
        WorldError::Connect(Box::new(e))
    }
}

#[derive(Debug)]
struct QpEngine {
    req: Option<Requester>,
    resp: Option<Responder>,
    peer: Option<HostIx>,
    sport: u16,
    /// The ECMP hash of the last frame sent, with the peer and source port it is for.
    ecmp_memo: std::cell::Cell<(u32, u16, u32)>,
    /// WQEs taken from the send queue, usable by the transport from the given time.
    fetched: VecDeque<(SimTime, SendRequest)>,
    timer_at: Option<SimTime>,
    /// Receive completions whose CQE write is still crossing PCIe (behind the payload's),
    /// delivered in order by [`HostEvent::RecvDone`].
    recv_cqes: VecDeque<verbs::TakenRecv>,
    /// DCQCN: the notification point (CNPs for marked packets this QP receives).
    np: dcqcn::Np,
    /// The remote QP number (where CNPs go).
    dest_qpn: u32,
    /// How its frames are encapsulated: the type of the GID its address vector's
    /// `sgid_index` names (RoCEv2 over IPv4 unless the host has a GID table).
    ethertype: EtherType,
}

#[derive(Clone, Copy, Debug)]
struct TxSlot {
    qpn: u32,
    t: Transmit,
    data: DataHandle,
    /// The budget the frame holds until it reaches the port, and its bytes there.
    work: nic_tx::Work,
    frame_bytes: u32,
}

/// Payload bytes travelling with a frame: real bytes, or a reference to synthetic memory.
#[derive(Debug)]
enum PoolData {
    Bytes(Vec<u8>),
    Synthetic(SyntheticRef),
}

/// Puts a frame's payload in the pool; the fabric carries the handle. (A function of the
/// pool, not of `State`, so a caller may hold other parts of the state meanwhile.)
fn store_data(pool: &mut Arena<PoolData>, d: PoolData) -> DataHandle {
    DataHandle::of(pool.insert(d).index())
}

/// A frame's payload still in the pool, to read (a capture encoding it).
fn peek_data(pool: &Arena<PoolData>, data: DataHandle) -> Option<&PoolData> {
    pool.try_get(engine::Handle::from_index(data.get()?))
}

/// A host's RoCE transport counters over every QP it has had, as a NIC's counter set (mlx5's
/// q counters) keeps them: the live QPs plus those reset, flushed or destroyed since. Named
/// as mlx5 names them.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct RoceCounters {
    /// Requester: PSN-sequence NAKs received.
    pub packet_seq_err: u64,
    /// Requester: RNR NAKs received.
    pub rnr_nak_retry_err: u64,
    /// Requester: local ACK timeouts that fired with packets outstanding.
    pub local_ack_timeout_err: u64,
    /// Responder: request packets that arrived out of sequence.
    pub out_of_sequence: u64,
    /// Responder: duplicate requests.
    pub duplicate_request: u64,
    /// Responder: requests that found no receive WQE (each answered with an RNR NAK).
    pub out_of_buffer: u64,
}

impl RoceCounters {
    fn add_requester(&mut self, c: &transport::roce::requester::RequesterCounters) {
        self.packet_seq_err += c.sequence_naks;
        self.rnr_nak_retry_err += c.rnr_naks;
        self.local_ack_timeout_err += c.timeouts;
    }
    fn add_responder(&mut self, c: &transport::roce::responder::ResponderCounters) {
        self.out_of_sequence += c.out_of_sequence;
        self.duplicate_request += c.duplicates;
        self.out_of_buffer += c.rnr_naks;
    }
}

/// Drops QP engine `e`'s requester and responder (a reset, a flush, a destroy), keeping
/// their counts in the host's `retired` totals.
fn retire(e: &mut QpEngine, retired: &mut RoceCounters) {
    if let Some(r) = e.req.take() {
        retired.add_requester(&r.counters());
    }
    if let Some(r) = e.resp.take() {
        retired.add_responder(&r.counters());
    }
}

/// One simulated machine.
pub struct SimHost {
    /// Its node in the fabric.
    pub node: NodeId,
    /// Its verbs state and memory.
    pub verbs: Context,
    profile: HostProfile,
    pcie: Pcie,
    cpu: Cpu,
    /// Boxed: a B-tree leaf has room for eleven values, and a host usually has one QP, so an
    /// inline `QpEngine` (about 1.3 KB) made every host's map about 14 KB (14 MB of the
    /// 1024-host fat tree's peak).
    qps: BTreeMap<u32, Box<QpEngine>>,
    tx_slots: Arena<TxSlot>,
    /// Send completions crossing PCIe: the WQE and how it ended ([`HostEvent::SendDone`]).
    send_done: Arena<(u64, ReqStatus)>,
    /// Frames between their gather and the port, RDMA and TCP alike (TCP's window counts them).
    tx_inflight: usize,
    tx_last_ready: SimTime,
    /// The RDMA transmit admission: budgets, read tags, the port queue.
    nic_tx: nic_tx::NicTx,
    rr: u32,
    /// When the application thread is free again after a blocking verbs call.
    app_ready: SimTime,
    /// Completion events on their way to the application: (deliverable from, channel).
    cq_events: VecDeque<(SimTime, verbs::types::ChannelHandle)>,
    /// Counts of the transports of QPs since reset, flushed or destroyed.
    retired: RoceCounters,
    /// The port's GID table ([`World::set_gid_table`]); empty: not modelled, every index is
    /// the host's RoCEv2 IPv4-mapped GID.
    gids: Vec<verbs::types::GidEntry>,
    /// The GID index the host's applications put in their address vectors
    /// ([`World::use_sgid_index`]).
    sgid_index: u8,
}

impl SimHost {
    /// The NIC's RDMA transmit admission (its budgets and read tags).
    pub fn nic_tx(&self) -> &nic_tx::NicTx {
        &self.nic_tx
    }

    /// Writes at once the receive CQEs still on their way over PCIe for QP `qpn`: the QP is
    /// about to be flushed or reset, and the completions of messages it received come before
    /// its flush completions (their `RecvDone` events then find nothing).
    fn land_recv_cqes(&mut self, qpn: u32) {
        let Some(e) = self.qps.get_mut(&qpn) else {
            return;
        };
        for t in std::mem::take(&mut e.recv_cqes) {
            // As for `HostEvent::RecvDone`: an overrun is verbs' to act on.
            self.verbs.deliver_recv(QpNum::masked(qpn), t);
        }
    }

    /// CPU time spent so far.
    pub fn cpu(&self) -> &Cpu {
        &self.cpu
    }
    /// Bytes moved by DMA so far.
    pub fn dma_bytes(&self) -> u64 {
        self.pcie.dma_bytes
    }
    /// The requester's counters of QP `qpn`, once it is in RTS.
    pub fn requester_counters(
        &self,
        qpn: QpNum,
    ) -> Option<transport::roce::requester::RequesterCounters> {
        self.qps
            .get(&qpn.get())?
            .req
            .as_ref()
            .map(Requester::counters)
    }

    /// The PSN QP `qpn`'s requester gives its next new packet, once it is in RTS.
    pub fn requester_next_psn(&self, qpn: QpNum) -> Option<u32> {
        Some(self.qps.get(&qpn.get())?.req.as_ref()?.next_psn())
    }

    /// When QP `qpn`'s requester last did anything, if it is now waiting on its local ACK
    /// timer with packets outstanding (see [`Requester::waiting_since`]).
    pub fn requester_waiting_since(&self, qpn: QpNum) -> Option<SimTime> {
        self.qps.get(&qpn.get())?.req.as_ref()?.waiting_since()
    }
    /// The responder's counters of QP `qpn`, once it is in RTR.
    pub fn responder_counters(
        &self,
        qpn: QpNum,
    ) -> Option<transport::roce::responder::ResponderCounters> {
        self.qps
            .get(&qpn.get())?
            .resp
            .as_ref()
            .map(Responder::counters)
    }

    /// The host's RoCE counters: every QP it has had, live or gone.
    pub fn roce_counters(&self) -> RoceCounters {
        let mut c = self.retired;
        for e in self.qps.values() {
            if let Some(r) = &e.req {
                c.add_requester(&r.counters());
            }
            if let Some(r) = &e.resp {
                c.add_responder(&r.counters());
            }
        }
        c
    }

    /// The PSN QP `qpn`'s responder expects next: how far in order its peer's requests have
    /// landed.
    pub fn responder_expected_psn(&self, qpn: QpNum) -> Option<u32> {
        self.qps
            .get(&qpn.get())?
            .resp
            .as_ref()
            .map(Responder::expected_psn)
    }
}

/// Host ordinal by fabric node number: a flat table, consulted for every frame a host
/// receives.
#[derive(Clone, Debug, Default)]
struct NodeHosts(Vec<HostIx>);

impl NodeHosts {
    /// A node that is no host (a switch, or past the last host).
    const NONE: HostIx = HostIx(u32::MAX);

    fn insert(&mut self, node: u32, host: HostIx) {
        let i = node as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, NodeHosts::NONE);
        }
        self.0[i] = host;
    }
    fn get(&self, node: &u32) -> Option<&HostIx> {
        self.0
            .get(*node as usize)
            .filter(|h| **h != NodeHosts::NONE)
    }
}

/// The simulated world: its state and the scheduler of its events, side by side.
///
/// The two are apart so that an event handler takes both at once (`State::handle(&mut self,
/// ev, &mut Scheduler)`: a split borrow of this struct's two fields), while the world's API
/// between runs (verbs and socket calls, `run_until`) reads and feeds the one clock: `now()`
/// is the time of the event just handled everywhere, a run's stop condition included. Nothing
/// is lent out and back. A parallel engine can give each partition's state a scheduler of its
/// own (issue 24): the handlers never reach a scheduler but the one they are given.
pub struct World {
    /// The clock and the pending events.
    sched: Scheduler<Event>,
    /// Everything the events change.
    state: State,
    /// The whole run's budget, when one is set ([`World::set_run_budget`]).
    total_budget: Option<TotalBudget>,
    /// Inside [`World::in_parallel`]: control-path verbs queue on their host's application
    /// thread instead of advancing the shared clock, so two hosts set up side by side.
    defer_control: bool,
    /// A budget error a verbs call met while the world ran to its end (`control_path`): the
    /// call has no budget error to return, so the next `run_until*` returns it.
    deferred_error: Option<WorldError>,
    /// A partitioned world's other partitions and how it is split (`parts.rs`); `None`: one
    /// partition, `state` and `sched` are the whole world.
    parts: Option<Box<parts::Parts>>,
    /// Why a world asked to run on several threads runs on one ([`World::parallelism`]).
    single_because: Option<String>,
}

/// What the world's events change: the fabric, the hosts and what observes them. Its event
/// handlers (`handle` in `events.rs` and the datapath under it: `rdma_tx.rs`, `rdma_rx.rs`,
/// `tcp.rs`, ...) take the scheduler as an argument; it holds none.
struct State {
    /// The network.
    fabric: Fabric,
    /// The 802.1p priority RoCE frames travel in ([`ROCE_PRIORITY`] unless set).
    roce_priority: Priority,
    /// The 802.1p priority CNPs travel in ([`CNP_PRIORITY`] unless set).
    cnp_priority: Priority,
    /// Adaptive retransmission's floor for every RC requester, when the NICs have it on.
    adaptive_min: Option<SimDuration>,
    /// Selective repeat's in-flight cap for every RC QP, when the NICs use it.
    selective_window: Option<u32>,
    /// DCQCN's parameters, when the NICs run it.
    dcqcn: Option<DcqcnParams>,
    /// Hosts the fabric asked to wake, between two uses (no allocation per event).
    wake_scratch: Vec<NodeId>,
    /// QPs held back by their DCQCN rate in one `pump_tx`, kept between calls (no allocation
    /// per paced packet).
    pace_scratch: Vec<u32>,
    /// Send completions written so far, on every host.
    send_completions: u64,
    hosts: Vec<SimHost>,
    /// Each host's node (as `hosts[h].node`), in a table of its own: a frame leaving names
    /// its peer's node, and on a large fabric the peer's host state is a cold line.
    host_nodes: Vec<NodeId>,
    by_node: NodeHosts,
    by_ip: BTreeMap<[u8; 4], HostIx>,
    pool: Arena<PoolData>,
    spare: Vec<Vec<u8>>,
    tracer: Tracer,
    pcap: Option<PcapWriter<Box<dyn std::io::Write + Send>>>,
    /// Frames leaving hosts, kept for [`World::take_frame_log`] (the playground's ladder),
    /// with the send WR each carries or answers.
    frame_log: Option<Vec<LoggedFrame>>,
    /// While frames are logged: per (host, QPN & 0xffff) of a requester, the `wr_id` of each
    /// request PSN it has sent since its last reset.
    wr_psns: BTreeMap<(HostIx, u32), BTreeMap<u32, u64>>,
    /// Frames not kept because the log was full since the last take.
    frame_log_skipped: usize,
    frame_buf: Vec<u8>,
    /// The fabric view being recorded ([`World::watch_fabric`]): sampled between events, so
    /// a run's own loops need not know about it.
    fabric_view: Option<Box<crate::labs::fabric_view::ViewRecorder>>,
    /// The first failed pcap write, which [`World::finish_pcap`] reports (the run goes on
    /// without the capture's error: it is the observer's, not the model's).
    capture_error: Option<std::io::Error>,
    tcp: tcp::TcpWorld,
    /// The hosts' connection managers (QP1): `rdma_cm.rs`.
    cm: rdma_cm::CmWorld,
}

impl World {
    /// A world on `topology`: every host gets a verbs context under `nic` and the `profile`.
    pub fn new(
        topology: &Topology,
        fabric: FabricConfig,
        profile: HostProfile,
        nic: NicProfile,
    ) -> Result<World, WorldError> {
        Ok(World {
            sched: Scheduler::new(),
            state: State::build(topology, fabric, profile, nic)?,
            total_budget: None,
            defer_control: false,
            deferred_error: None,
            parts: None,
            single_because: None,
        })
    }
}

impl State {
    /// The state of a world on `topology` (of one partition of it: each is built whole).
    fn build(
        topology: &Topology,
        fabric: FabricConfig,
        profile: HostProfile,
        nic: NicProfile,
    ) -> Result<State, WorldError> {
        profile.validate()?;
        let fabric = Fabric::new(topology, fabric)?;
        let mut hosts = Vec::new();
        let mut by_node = NodeHosts::default();
        let mut by_ip = BTreeMap::new();
        for (i, node) in fabric.hosts().into_iter().enumerate() {
            by_node.insert(node.0, HostIx(i as u32));
            by_ip.insert(host_ip(i as u32), HostIx(i as u32));
            hosts.push(SimHost {
                node,
                verbs: Context::for_host(nic, i as u32),
                profile,
                pcie: Pcie::new(node, profile.pcie),
                cpu: Cpu::new(node, profile.cpu.cores),
                qps: BTreeMap::new(),
                tx_slots: Arena::new(),
                send_done: Arena::new(),
                tx_inflight: 0,
                tx_last_ready: SimTime::ZERO,
                nic_tx: nic_tx::NicTx::new(
                    profile.nic.tx_buffer_bytes(
                        &profile.pcie,
                        port_rate(&fabric, node),
                        fabric::MAX_FRAME_BYTES,
                    ),
                    profile.nic.max_read_request_bytes,
                    profile.nic.read_tags,
                ),
                rr: 0,
                app_ready: SimTime::ZERO,
                cq_events: VecDeque::new(),
                retired: RoceCounters::default(),
                gids: Vec::new(),
                sgid_index: 0,
            });
        }
        let host_nodes = hosts.iter().map(|h| h.node).collect();
        Ok(State {
            fabric,
            roce_priority: ROCE_PRIORITY,
            cnp_priority: CNP_PRIORITY,
            adaptive_min: None,
            selective_window: None,
            dcqcn: None,
            wake_scratch: Vec::new(),
            pace_scratch: Vec::new(),
            send_completions: 0,
            hosts,
            host_nodes,
            by_node,
            by_ip,
            pool: Arena::new(),
            spare: Vec::new(),
            tracer: Tracer::disabled(),
            pcap: None,
            frame_log: None,
            wr_psns: BTreeMap::new(),
            frame_log_skipped: 0,
            frame_buf: Vec::new(),
            fabric_view: None,
            capture_error: None,
            tcp: Default::default(),
            cm: Default::default(),
        })
    }
}

impl World {
    /// The network: its ports, counters and tracer. In a partitioned world
    /// ([`World::new_partitioned`]) this is the share of the partition in front, whose
    /// topology and settings are the whole fabric's but whose counters count its own nodes
    /// only: read those with [`World::joined`].
    pub fn fabric(&self) -> &Fabric {
        &self.state.fabric
    }

    /// The network, to set its tracer or observe it between runs (in a partitioned world, the
    /// share in front: see [`World::fabric`]).
    pub fn fabric_mut(&mut self) -> &mut Fabric {
        // A tap, tracer or loss rule set here would act on one partition's share alone.
        debug_assert!(
            !self.is_partitioned(),
            "fabric_mut acts on one partition: keep the world whole"
        );
        &mut self.state.fabric
    }

    /// Events processed so far, every run of this world together.
    pub fn events_processed(&self) -> u64 {
        self.scheds().iter().map(|s| s.events_processed()).sum()
    }

    /// Moves every partition's clock on to `t` (a run that ended before it).
    fn advance_clocks(&mut self, t: SimTime) {
        self.sched.advance_to(t);
        if let Some(p) = self.parts.as_mut() {
            p.advance_parked(t);
        }
    }

    /// The current simulated time: between runs, where the last one left the clock; inside a
    /// run's stop condition ([`World::run_until_cond`]), the time of the event just handled.
    pub fn now(&self) -> SimTime {
        self.sched.now()
    }
    /// Send-queue completions the NICs have written so far, all hosts together: a caller
    /// waiting for many QPs can look at their CQs only when this moves.
    pub fn send_completions(&self) -> u64 {
        self.states().iter().map(|s| s.send_completions).sum()
    }
    /// Events scheduled and not yet run (0: nothing more will happen on its own).
    pub fn pending_events(&self) -> usize {
        self.scheds().iter().map(|s| s.pending()).sum()
    }
    /// Host `i`.
    pub fn host(&self, i: impl Into<HostIx>) -> &SimHost {
        let h = i.into();
        &self.state_of(h).hosts[h.index()]
    }
    /// Host `i`'s verbs context (memory, MRs, CQs...), for setup and inspection.
    pub fn verbs(&mut self, i: impl Into<HostIx>) -> &mut Context {
        let h = i.into();
        self.focus_host(h);
        &mut self.state.hosts[h.index()].verbs
    }
    /// Host `i`'s verbs context, read only (a wait condition can look at it).
    pub fn verbs_ref(&self, i: impl Into<HostIx>) -> &Context {
        let h = i.into();
        &self.state_of(h).hosts[h.index()].verbs
    }
    /// Number of hosts.
    pub fn host_count(&self) -> u32 {
        self.state.hosts.len() as u32
    }
    /// Traces host stages (CPU, PCIe, NIC) to `tracer`.
    pub fn set_tracer(&mut self, tracer: Tracer) {
        // The host tracer is not merged across partitions (ARCHITECTURE.md §9): a traced
        // run keeps its world whole.
        debug_assert!(!self.is_partitioned(), "a host tracer needs one partition");
        self.state.tracer = tracer;
    }
    /// The host-stage tracer.
    pub fn tracer_mut(&mut self) -> &mut Tracer {
        debug_assert!(!self.is_partitioned(), "a host tracer needs one partition");
        &mut self.state.tracer
    }

    /// The host ordinal of fabric node `node`, if it is a host.
    pub fn host_of_node(&self, node: NodeId) -> Option<HostIx> {
        self.state.by_node.get(&node.0).copied()
    }

    /// The fabric flow id of QP `qpn`'s frames from host `h` (for loss rules and traces).
    pub fn flow_of(h: impl Into<HostIx>, qpn: QpNum) -> FlowId {
        let h: HostIx = h.into();
        FlowId(h.get() * 0x1_0000 + (qpn.get() & 0xffff))
    }
}

/// The payload pool's bookkeeping, shared by the RDMA and TCP datapaths: a frame's bytes
/// are returned when it is delivered or dropped, and byte buffers are reused (no allocation
/// per packet in a long run).
impl State {
    /// Takes a delivered frame's payload out of the pool (`None`: it had no payload bytes).
    fn take_data(&mut self, data: DataHandle) -> Option<PoolData> {
        let i = data.get()?;
        Some(self.pool.remove(engine::Handle::from_index(i)))
    }

    /// Returns payload `data` to the pool (a frame dropped or never sent).
    fn free_data(&mut self, data: DataHandle) {
        if let Some(PoolData::Bytes(b)) = self.take_data(data) {
            self.spare.push(b);
        }
    }

    /// Keeps byte buffer `b` for the next payload.
    fn recycle(&mut self, b: Vec<u8>) {
        if b.capacity() > 0 {
            self.spare.push(b);
        }
    }
}
