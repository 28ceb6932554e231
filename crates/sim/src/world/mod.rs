//! The simulated world: hosts with verbs, RoCE (RC/UC/UD) and kernel TCP transports and a
//! CPU/PCIe/NIC timing model, joined by the fabric, driven by one event queue. The layers and a
//! packet's route through this file function by function are in `docs/ARCHITECTURE.md`.
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
//!   the segments are on the timeline as setup. RDMA CM's exchange is not simulated.
//! - One NIC port per host, one PCIe link; no NIC cache misses (MTT/MPT), so huge MRs cost
//!   nothing extra per access (figures.md §4 has no numbers for those caches).
//! - A receive CQE's DMA write is booked when its message's last packet is placed, behind the
//!   payload on the same PCIe direction; a QP about to be flushed or reset has its pending
//!   receive CQEs written at once (`land_recv_cqes`), so they come before its flush completions.
//! - The NIC's transmit buffer is derived, not a ConnectX figure ([`nic_tx`]); its pipeline is
//!   one in-order queue per host (a real NIC schedules QPs onto several engines), and the PCIe
//!   read round trip is the same for every read (no root-complex tail).

use engine::{
    Arena, Budget, BudgetExceeded, ExecUnit, Model, RunStats, Scheduler, Stage, TraceRecord, Tracer,
};
use fabric::{
    Delivery, Ecn, EtherType, Fabric, FabricConfig, FabricEvent, FiveTuple, Packet, PacketSpec,
    Payload, RoceHeaders, Topology, capture::frame_bytes, packet::host_ip, roce_frame_len,
};
use host::{Cpu, CpuWork, HostProfile, Pcie, Xfer, XferKind};
use nic_tx::Work;
use std::collections::{BTreeMap, VecDeque};
use transport::roce::dcqcn::{self, DcqcnParams};
use transport::roce::{
    DataRef, Placement, RcConfig, RecvFailure, RemoteOp, ReqStatus, Requester, RequesterEvent,
    Responder, ResponderEnv, ResponderEvent, RetransmitMode, RocePacket, SendRequest, Transmit,
    WorkOp, requester::RetransmitReason,
};
use units::{FlowId, NodeId, Priority, SimDuration, SimTime};
use verbs::SyntheticRef;
use verbs::{
    AccessFlags, Context, ModifyEffect, ModifyOutcome, NicProfile, PostError, PostReport, QpAttr,
    QpAttrMask, QpNum, VerbsError, Wc, WcStatus,
    transport::{AtomicOp, RecvCompletion, ScatterError, StartSend},
    wc::WcOpcode,
    wr::{RecvWr, SendOpcode, SendWr},
};
use wire::{Ipv4Address, PcapWriter};

mod app_cpu;
mod exchange;
pub mod nic_tx;
mod run;
mod tcp;
mod writes;
pub use exchange::ConnInfo;
pub use tcp::{SocketId, SocketStats, TcpEvent, TcpOptions};

/// The priority CNPs travel in (served strictly before data where the switch is set so).
// source: research/figures.md §6.1, CNP_802P_PRIO 6 (NVIDIA firmware default).
pub const CNP_PRIORITY: Priority = Priority::of(6);

/// The floor of adaptive retransmission's timeout.
// source: research/figures.md §5, NVIDIA "Adaptive Retransmission: Parameters Control"
// (minimum base timeout 4 µs, ConnectX-6 Dx and later, Apr-2025 firmware).
pub const ADAPTIVE_RETRANSMISSION_MIN: SimDuration = SimDuration::from_us(4);

/// The 802.1p priority RoCE traffic uses (the NVIDIA/Cumulus default, research/figures.md §6.2).
pub const ROCE_PRIORITY: Priority = Priority::of(3);

/// Events of the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// An event of the fabric.
    Fabric(FabricEvent),
    /// An event of a host.
    Host(HostEvent),
}

// Every pending event is stored as (time, Event) in the event queue: 16 bytes here keep an
// entry at 24 bytes (the queue's writes and reads were a fifth of a large run's time).
const _: () = assert!(size_of::<Event>() <= 16, "an Event grew past 16 bytes");

impl From<FabricEvent> for Event {
    fn from(e: FabricEvent) -> Self {
        Event::Fabric(e)
    }
}

/// Events of a host's NIC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostEvent {
    /// A doorbell (or BlueFlame write) for QP `qpn` landed in the NIC: it looks at the send
    /// queue.
    Doorbell {
        /// Host ordinal.
        host: u32,
        /// The QP.
        qpn: u32,
    },
    /// A WQE of QP `qpn` the NIC read over PCIe has arrived: the QP may start sending it.
    WqeFetched {
        /// Host ordinal.
        host: u32,
        /// The QP.
        qpn: u32,
    },
    /// A gathered frame leaves the NIC pipeline for the port.
    TxOut {
        /// Host ordinal.
        host: u32,
        /// Slot of the frame.
        slot: u32,
    },
    /// A received frame has passed the NIC pipeline.
    RxIn {
        /// Host ordinal.
        host: u32,
        /// The frame's handle in the fabric, which holds it until then.
        slot: u32,
    },
    /// A QP's transport timer is due.
    Timer {
        /// Host ordinal.
        host: u32,
        /// The QP.
        qpn: u32,
    },
    /// A send completion's CQE has been written to host memory.
    SendDone {
        /// Host ordinal.
        host: u32,
        /// The QP.
        qpn: u32,
        /// Where the host keeps the WQE and how it ended until then (its `send_done` slots):
        /// a 64-bit WQE id in the event made every queued event 8 bytes longer.
        slot: u32,
    },
    /// The oldest pending receive CQE of a QP has been written to host memory.
    RecvDone {
        /// Host ordinal.
        host: u32,
        /// The QP.
        qpn: u32,
    },
    /// An event of the kernel TCP socket path.
    Tcp(TcpEvent),
}

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
}

#[derive(Debug)]
struct QpEngine {
    req: Option<Requester>,
    resp: Option<Responder>,
    peer: Option<u32>,
    sport: u16,
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
    data: u32,
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
            let _ = self.verbs.deliver_recv(QpNum::masked(qpn), t);
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
struct NodeHosts(Vec<u32>);

impl NodeHosts {
    fn insert(&mut self, node: u32, host: u32) {
        let i = node as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, u32::MAX);
        }
        self.0[i] = host;
    }
    fn get(&self, node: &u32) -> Option<&u32> {
        self.0.get(*node as usize).filter(|h| **h != u32::MAX)
    }
}

/// A run's budget and what it has used.
#[derive(Clone, Debug)]
struct TotalBudget {
    budget: Budget,
    started: std::time::Instant,
    sim_start: SimTime,
    events: u64,
    /// The run's event count when its memory was last checked between calls.
    memory_checked_at: std::cell::Cell<u64>,
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
}

/// What the world's events change: the fabric, the hosts and what observes them. Its event
/// handlers (`handle` and the datapath under it, here and in `tcp.rs`) take the scheduler as
/// an argument; it holds none.
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
    by_ip: BTreeMap<[u8; 4], u32>,
    pool: Arena<PoolData>,
    spare: Vec<Vec<u8>>,
    tracer: Tracer,
    pcap: Option<PcapWriter<Box<dyn std::io::Write>>>,
    /// Frames leaving hosts, kept for [`World::take_frame_log`] (the playground's ladder),
    /// with the send WR each carries or answers.
    frame_log: Option<Vec<LoggedFrame>>,
    /// While frames are logged: per (host, QPN & 0xffff) of a requester, the `wr_id` of each
    /// request PSN it has sent since its last reset.
    wr_psns: BTreeMap<(u32, u32), BTreeMap<u32, u64>>,
    /// Frames not kept because the log was full since the last take.
    frame_log_skipped: usize,
    frame_buf: Vec<u8>,
    /// The fabric view being recorded ([`World::watch_fabric`]): sampled between events, so
    /// a run's own loops need not know about it.
    fabric_view: Option<Box<crate::labs::fabric_view::ViewRecorder>>,
    tcp: tcp::TcpWorld,
}

impl World {
    /// Sends RoCE frames in priority `p` (a scenario's `lossless.priority`: PFC protects the
    /// priority RoCE really uses only when the two agree).
    pub fn set_roce_priority(&mut self, p: Priority) {
        self.state.roce_priority = p;
    }

    /// The priority RoCE frames travel in.
    pub fn roce_priority(&self) -> Priority {
        self.state.roce_priority
    }

    /// Sends CNPs in priority `p`: where the switches classify the CNPs' DSCP (NVIDIA's
    /// `CNP_DSCP`, 48 by default) or PCP. The model carries the priority a switch's map gives,
    /// not the DSCP: a CNP marked with a DSCP the switch maps to a lossy class is a CNP in
    /// that class's priority here.
    pub fn set_cnp_priority(&mut self, p: Priority) {
        self.state.cnp_priority = p;
    }

    /// Gives host `h`'s port a GID table (`gids`, index order), as
    /// [`verbs::types::GidEntry::linux_table`] builds it: from then on an address vector's
    /// `sgid_index` picks its entry, whose address family must match the destination GID's
    /// at RTR and whose type decides the encapsulation (RoCE v1 frames are not IP).
    pub fn set_gid_table(&mut self, h: u32, gids: Vec<verbs::types::GidEntry>) {
        if let Some(host) = self.state.hosts.get_mut(h as usize) {
            host.gids = gids;
        }
    }

    /// Host `h`'s GID table with Linux's layout for its one IPv4 address
    /// ([`verbs::types::GidEntry::linux_table`]): link-local v1, v2, IPv4-mapped v1, v2.
    pub fn linux_gid_table(&self, h: u32) -> Vec<verbs::types::GidEntry> {
        let mac = self
            .state
            .hosts
            .get(h as usize)
            .map_or([0; 6], |x| fabric::capture::node_mac(x.node).0);
        verbs::types::GidEntry::linux_table(mac, host_ip(h))
    }

    /// The GID index host `h`'s applications use in their address vectors (the `-g` or
    /// `gid_index` option of perftest and the course's programs); 0 unless set.
    pub fn use_sgid_index(&mut self, h: u32, index: u8) {
        if let Some(host) = self.state.hosts.get_mut(h as usize) {
            host.sgid_index = index;
        }
    }

    /// The GID host `h` advertises and sends from: its table's entry at its `sgid_index`, or
    /// the RoCEv2 IPv4-mapped GID without a table.
    fn local_gid(&self, h: u32) -> verbs::types::Gid {
        let host = &self.state.hosts[h as usize];
        host.gids
            .get(host.sgid_index as usize)
            .map_or(verbs::types::Gid::from_ipv4(host_ip(h)), |e| e.gid)
    }

    /// Chooses how the RC QPs that reach RTR from now on recover losses: go-back-N, or
    /// IRN-style selective repeat with at most `window` PSNs in flight (about a
    /// bandwidth-delay product; IRN's BDP cap).
    pub fn set_selective_repeat(&mut self, window: Option<u32>) {
        self.state.selective_window = window.map(|w| w.max(1));
    }

    /// Runs DCQCN with `params` on the RC QPs that reach RTS from now on (or turns it off):
    /// their NICs answer CE-marked packets with CNPs and pace each QP at its DCQCN rate. The
    /// switches must mark (an [`fabric::EcnConfig`] on the fabric) for anything to happen.
    pub fn set_dcqcn(&mut self, params: Option<DcqcnParams>) {
        self.state.dcqcn = params;
    }

    /// DCQCN's parameters, if the NICs run it.
    pub fn dcqcn_params(&self) -> Option<DcqcnParams> {
        self.state.dcqcn
    }

    /// QP `qpn` of host `h`: DCQCN's rate now (kbit/s), target and α (units of 2⁻²⁰), with
    /// the reaction point's counters; `None` without DCQCN.
    pub fn dcqcn_state(&self, h: u32, qpn: QpNum) -> Option<(u64, u64, u64, dcqcn::RpCounters)> {
        let rp = self
            .state
            .hosts
            .get(h as usize)?
            .qps
            .get(&qpn.get())?
            .req
            .as_ref()?
            .reaction_point()?;
        Some((rp.rate_kbps(), rp.target_kbps(), rp.alpha(), rp.counters()))
    }

    /// QP `qpn` of host `h`: CE-marked packets received and CNPs sent (DCQCN's notification
    /// point; mlx5 `np_ecn_marked_roce_packets`, `np_cnp_sent`).
    pub fn np_counters(&self, h: u32, qpn: QpNum) -> Option<(u64, u64)> {
        let e = self.state.hosts.get(h as usize)?.qps.get(&qpn.get())?;
        Some((e.np.marked, e.np.cnps_sent))
    }

    /// What the kernel does with an address vector before the driver sees it, when host `h`
    /// has a GID table: the `sgid_index` entry's address family must match the destination
    /// GID's, or the destination MAC cannot be resolved and `modify_qp` fails with EINVAL,
    /// the QP left as it was (Linux `_ib_modify_qp` → `ib_resolve_eth_dmac` →
    /// `rdma_addr_find_l2_eth_by_grh` → `rdma_resolve_ip`). Returns the encapsulation the
    /// entry's type gives, `None` when the call sets no address vector or the host has no
    /// table. Simplification: a RoCE v1 source with a link-local destination (resolved
    /// from the GID without the IP stack) is treated like any other pair of one family.
    fn resolve_av(
        &self,
        h: u32,
        attr: &QpAttr,
        mask: QpAttrMask,
    ) -> Result<Option<EtherType>, VerbsError> {
        let host = &self.state.hosts[h as usize];
        if !mask.contains(QpAttrMask::AV) || host.gids.is_empty() {
            return Ok(None);
        }
        let grh = &attr.ah_attr.grh;
        let Some(entry) = host.gids.get(grh.sgid_index as usize) else {
            return Ok(None);
        };
        let family = |g: &verbs::types::Gid| if g.ipv4().is_some() { "IPv4" } else { "IPv6" };
        if family(&entry.gid) != family(&grh.dgid) {
            return Err(VerbsError::Modify(
                verbs::modify::ModifyError::GidFamilyMismatch {
                    index: grh.sgid_index,
                    sgid: entry.gid,
                    sgid_family: family(&entry.gid),
                    dgid: grh.dgid,
                    dgid_family: family(&grh.dgid),
                },
            ));
        }
        Ok(Some(match entry.gid_type {
            verbs::types::GidType::RoceV1 => EtherType::RoceV1,
            verbs::types::GidType::RoceV2 => EtherType::Ipv4,
        }))
    }

    /// Host `h`'s NIC line rate, kbit/s (its port's link).
    fn line_kbps(&self, h: u32) -> u64 {
        port_rate(&self.state.fabric, self.state.hosts[h as usize].node).bps() / 1_000
    }

    /// Whether RC QPs recover by selective repeat.
    pub fn selective_repeat(&self) -> bool {
        self.state.selective_window.is_some()
    }

    /// Selective repeat's in-flight cap for the RC QPs that reach RTR from now on (`None`:
    /// go-back-N), so a caller that sets it for some QPs can put it back.
    pub fn selective_window(&self) -> Option<u32> {
        self.state.selective_window
    }

    /// Turns adaptive retransmission on (or off) for the RC QPs that reach RTR from now on:
    /// their ACK timeout follows the measured round trip, never below
    /// [`ADAPTIVE_RETRANSMISSION_MIN`].
    pub fn set_adaptive_retransmission(&mut self, on: bool) {
        self.state.adaptive_min = on.then_some(ADAPTIVE_RETRANSMISSION_MIN);
    }

    /// Starts a raw flow of `bytes` from host `src` to host `dst` at `start` (now if that has
    /// passed): line-rate frames of `payload_mtu` bytes in `priority`, with no transport and
    /// no CPU, for cross traffic. The fabric counts what it delivered and dropped.
    pub fn add_raw_flow(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        payload_mtu: u32,
        priority: Priority,
        start: SimTime,
    ) -> Result<FlowId, WorldError> {
        let node = |h: u32| self.state.hosts.get(h as usize).map(|x| x.node);
        let (Some(s), Some(d)) = (node(src), node(dst)) else {
            return Err(WorldError::NoHost(src.max(dst)));
        };
        let id = self.state.fabric.add_flow(fabric::RawFlow {
            src: s,
            dst: d,
            bytes,
            payload_mtu,
            priority,
            start,
            ecn_capable: false,
        })?;
        self.state.fabric.start_flow(id, &mut self.sched);
        Ok(id)
    }
}

impl World {
    /// A world on `topology`: every host gets a verbs context under `nic` and the `profile`.
    pub fn new(
        topology: &Topology,
        fabric: FabricConfig,
        profile: HostProfile,
        nic: NicProfile,
    ) -> Result<World, WorldError> {
        profile.validate()?;
        let fabric = Fabric::new(topology, fabric)?;
        let mut hosts = Vec::new();
        let mut by_node = NodeHosts::default();
        let mut by_ip = BTreeMap::new();
        for (i, node) in fabric.hosts().into_iter().enumerate() {
            by_node.insert(node.0, i as u32);
            by_ip.insert(host_ip(i as u32), i as u32);
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
        Ok(World {
            sched: Scheduler::new(),
            state: State {
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
                tcp: Default::default(),
            },
            total_budget: None,
            defer_control: false,
        })
    }

    /// The network: its ports, counters and tracer.
    pub fn fabric(&self) -> &Fabric {
        &self.state.fabric
    }

    /// The network, to set its tracer or observe it between runs.
    pub fn fabric_mut(&mut self) -> &mut Fabric {
        &mut self.state.fabric
    }

    /// Events processed so far, every run of this world together.
    pub fn events_processed(&self) -> u64 {
        self.sched.events_processed()
    }

    /// The current simulated time: between runs, where the last one left the clock; inside a
    /// run's stop condition ([`World::run_until_cond`]), the time of the event just handled.
    pub fn now(&self) -> SimTime {
        self.sched.now()
    }
    /// Send-queue completions the NICs have written so far, all hosts together: a caller
    /// waiting for many QPs can look at their CQs only when this moves.
    pub fn send_completions(&self) -> u64 {
        self.state.send_completions
    }
    /// Events scheduled and not yet run (0: nothing more will happen on its own).
    pub fn pending_events(&self) -> usize {
        self.sched.pending()
    }
    /// Host `i`.
    pub fn host(&self, i: u32) -> &SimHost {
        &self.state.hosts[i as usize]
    }
    /// Host `i`'s verbs context (memory, MRs, CQs...), for setup and inspection.
    pub fn verbs(&mut self, i: u32) -> &mut Context {
        &mut self.state.hosts[i as usize].verbs
    }
    /// Host `i`'s verbs context, read only (a wait condition can look at it).
    pub fn verbs_ref(&self, i: u32) -> &Context {
        &self.state.hosts[i as usize].verbs
    }
    /// Number of hosts.
    pub fn host_count(&self) -> u32 {
        self.state.hosts.len() as u32
    }
    /// Traces host stages (CPU, PCIe, NIC) to `tracer`.
    pub fn set_tracer(&mut self, tracer: Tracer) {
        self.state.tracer = tracer;
    }
    /// The host-stage tracer.
    pub fn tracer_mut(&mut self) -> &mut Tracer {
        &mut self.state.tracer
    }
    /// Writes every frame on every link to `out` as a pcap, with real payload bytes.
    pub fn capture_pcap(&mut self, out: Box<dyn std::io::Write>) -> std::io::Result<()> {
        self.state.pcap = Some(PcapWriter::new(out)?);
        self.state
            .fabric
            .enable_capture(fabric::capture::CaptureAt::All);
        Ok(())
    }
    /// From `at`, host `h` stops draining what it receives and floods PAUSE frames
    /// ([`Fabric::stall_host`]): the source of a PFC storm.
    pub fn stall_host(&mut self, h: u32, at: SimTime) -> Result<(), WorldError> {
        let node = self.state.hosts[h as usize].node;
        self.state.fabric.stall_host(node, at, &mut self.sched)?;
        Ok(())
    }

    /// QP `qpn` of host `h` vanishes at once, as when its process dies and the kernel
    /// destroys it: no verb runs on the application's timeline (see [`World::destroy_qp`] for
    /// the timed call). The QP and its transport state are gone; frames that still arrive for
    /// it are dropped silently, as a NIC drops packets for a QP number it does not know.
    pub fn vanish_qp(&mut self, h: u32, qpn: QpNum) -> Result<verbs::DestroyReport, VerbsError> {
        let host = &mut self.state.hosts[h as usize];
        let report = host.verbs.destroy_qp(qpn)?;
        if let Some(mut e) = host.qps.remove(&qpn.get()) {
            retire(&mut e, &mut host.retired);
        }
        self.state.wr_psns.remove(&(h, qpn.get() & 0xffff));
        Ok(report)
    }

    /// `ibv_destroy_qp` on host `h`, timed as a control-path verb (an ioctl and a firmware
    /// command): what [`World::vanish_qp`] does, called by the application. A refused call
    /// costs nothing (the kernel checks before the firmware runs).
    pub fn destroy_qp(&mut self, h: u32, qpn: QpNum) -> Result<verbs::DestroyReport, VerbsError> {
        let report = self.vanish_qp(h, qpn)?;
        self.control_path(h, Stage::IoctlDestroyQp, 0);
        Ok(report)
    }

    /// `ibv_destroy_cq` on host `h`, timed as a control-path verb; EBUSY while a QP uses the
    /// CQ or its completion events are unacknowledged (refused calls cost nothing).
    pub fn destroy_cq(&mut self, h: u32, cq: verbs::CqHandle) -> Result<(), VerbsError> {
        self.state.hosts[h as usize].verbs.destroy_cq(cq)?;
        self.control_path(h, Stage::IoctlDestroyCq, 0);
        Ok(())
    }

    /// `ibv_dereg_mr` on host `h`, timed as one control-path command (unpinning the pages is
    /// not charged: a simplification). Remote requests that still carry its rkey fail their
    /// key check from now on (NAK remote access error).
    pub fn dereg_mr(&mut self, h: u32, mr: verbs::MrHandle) -> Result<(), VerbsError> {
        self.state.hosts[h as usize].verbs.dereg_mr(mr)?;
        self.control_path(h, Stage::IoctlDeregMr, 0);
        Ok(())
    }

    /// `ibv_dealloc_pd` on host `h`, timed as a control-path verb; EBUSY while MRs or QPs use
    /// the PD (refused calls cost nothing).
    pub fn dealloc_pd(&mut self, h: u32, pd: verbs::PdHandle) -> Result<(), VerbsError> {
        self.state.hosts[h as usize].verbs.dealloc_pd(pd)?;
        self.control_path(h, Stage::IoctlDeallocPd, 0);
        Ok(())
    }

    /// Keeps every frame a host sends from now on (time its first bit left, the packet), for
    /// [`World::take_frame_log`]: a verbs session's ladder. Costs a copy per frame; meant for
    /// short runs.
    pub fn log_frames(&mut self) {
        if self.state.frame_log.is_none() {
            self.state.frame_log = Some(Vec::new());
            self.state
                .fabric
                .enable_capture(fabric::capture::CaptureAt::All);
        }
    }

    /// Records the fabric view of the run from now on ([`crate::labs::fabric_view`]): every
    /// link of `topo` (the topology this world was built from) sampled at the end of each
    /// window, the window starting at `first_window` and doubling as the run goes on, for
    /// RoCE's priority `prio`. Only watches: a tap and a trace observer, and the report's
    /// packet records (an [`engine::FirstObserver`] on the fabric, the ladder's) go on being
    /// kept through it and are put back by [`World::finish_fabric_view`], which ends it. The
    /// fabric must have no tap of its own (the report's runs set none).
    pub fn watch_fabric(
        &mut self,
        topo: &fabric::Topology,
        first_window: SimDuration,
        prio: usize,
    ) {
        let inner = self
            .state
            .fabric
            .tracer_mut()
            .take::<engine::FirstObserver>()
            .map(|o| o as Box<dyn engine::Observer>);
        let now = self.now();
        self.state.fabric_view = Some(Box::new(
            crate::labs::fabric_view::ViewRecorder::attach_run(
                &mut self.state.fabric,
                topo,
                now,
                first_window,
                prio,
                inner,
            ),
        ));
    }

    /// The fabric view [`World::watch_fabric`] recorded, up to now (its last sample is now),
    /// and the fabric's own observer put back; None if none was being recorded.
    pub fn finish_fabric_view(&mut self) -> Option<crate::labs::fabric_view::FabricView> {
        let rec = self.state.fabric_view.take()?;
        let now = self.now();
        let (view, inner) = rec.finish_at(&mut self.state.fabric, now);
        if let Some(o) = inner.and_then(|i| {
            (i as Box<dyn std::any::Any>)
                .downcast::<engine::FirstObserver>()
                .ok()
        }) {
            self.state.fabric.set_tracer(Tracer::new(*o));
        }
        Some(view)
    }

    /// The frames hosts sent since the last call (with [`World::log_frames`] on), in order,
    /// each with the `wr_id` of the send WR it carries (a request packet, first sent or
    /// resent) or answers (an ACK, NAK or READ response: the request whose PSNs it names).
    /// At most [`FRAME_LOG_MAX`] frames are kept between two calls; the second value counts
    /// those left out.
    pub fn take_frame_log(&mut self) -> (Vec<LoggedFrame>, usize) {
        // Whatever the capture holds has not been sorted into the log yet.
        let _ = self.state.write_captured();
        let skipped = std::mem::take(&mut self.state.frame_log_skipped);
        (
            self.state
                .frame_log
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default(),
            skipped,
        )
    }

    /// The host ordinal of fabric node `node`, if it is a host.
    pub fn host_of_node(&self, node: NodeId) -> Option<u32> {
        self.state.by_node.get(&node.0).copied()
    }

    /// Flushes and closes the pcap.
    pub fn finish_pcap(&mut self) -> std::io::Result<()> {
        self.state.write_captured()?;
        if let Some(mut w) = self.state.pcap.take() {
            w.flush()?;
        }
        Ok(())
    }

    /// A blocking control-path verb on host `h`: the ioctl runs on the application's core, the
    /// firmware command on the NIC, plus `per_page` work for `pages` pages (pinning on the CPU,
    /// translation entries on the NIC). The application thread is blocked until it ends.
    fn control_path(&mut self, h: u32, verb: Stage, pages: u64) {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let c = host.profile.control;
        let ready = now.max(host.app_ready);
        let (_, mut end) = host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: 0,
                ready,
                cost: c.syscall,
                stage: verb,
                setup: true,
            },
        );
        if pages > 0 {
            (_, end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: 0,
                    ready: end,
                    cost: c.pin_per_page * pages,
                    stage: Stage::PinPages,
                    setup: true,
                },
            );
        }
        let fw = c.firmware_command + c.translation_per_page * pages;
        let node = host.node;
        let start = end;
        end = start + fw;
        self.state.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: if pages > 0 {
                Stage::FirmwareTranslation
            } else {
                Stage::FirmwareCommand
            },
            setup: true,
            start,
            end,
        });
        host.app_ready = end;
        if self.defer_control {
            return;
        }
        // The call returns when the firmware is done: the world runs until then. The span is
        // one command's time, so the events in it are bounded; a budget error cannot happen
        // with an unlimited budget.
        let _ = self.run_until(end, &Budget::UNLIMITED);
    }

    /// Runs `f`, whose control-path verbs (create_cq, create_qp, reg_mr, modify_qp) on
    /// different hosts overlap in time as they do when each host's application sets itself up
    /// (without it every blocking verb advances the one shared clock, so two hosts' setups
    /// would add up). Each host's calls still run one after another on its own thread. Returns
    /// when every host's application thread is free again.
    pub fn in_parallel<R>(&mut self, f: impl FnOnce(&mut World) -> R) -> R {
        let outer = std::mem::replace(&mut self.defer_control, true);
        let r = f(self);
        self.defer_control = outer;
        if !outer {
            let end = self.state.hosts.iter().map(|h| h.app_ready).max();
            if let Some(end) = end.filter(|e| *e > self.sched.now()) {
                // Bounded like a single control-path call: setup spans, no data yet.
                let _ = self.run_until(end, &Budget::UNLIMITED);
            }
        }
        r
    }

    /// `ibv_reg_mr`, timed as setup: the ioctl, pinning every 4 KiB page, and the firmware
    /// writing a translation entry per page.
    pub fn reg_mr(
        &mut self,
        h: u32,
        pd: verbs::PdHandle,
        va: u64,
        len: u64,
        access: AccessFlags,
    ) -> Result<verbs::Mr, VerbsError> {
        let mr = self.state.hosts[h as usize]
            .verbs
            .reg_mr(pd, va, len, access)?;
        self.control_path(h, Stage::IoctlRegMr, mr.pages);
        Ok(mr)
    }

    /// `ibv_create_cq`, timed as setup.
    pub fn create_cq(
        &mut self,
        h: u32,
        cqe: u32,
        channel: Option<verbs::types::ChannelHandle>,
    ) -> Result<(verbs::CqHandle, u32), VerbsError> {
        let r = self.state.hosts[h as usize].verbs.create_cq(cqe, channel)?;
        self.control_path(h, Stage::IoctlCreateCq, 0);
        Ok(r)
    }

    /// `ibv_create_qp`, timed as setup.
    pub fn create_qp(
        &mut self,
        h: u32,
        pd: verbs::PdHandle,
        init: &verbs::qp::QpInitAttr,
    ) -> Result<verbs::CreatedQp, VerbsError> {
        let r = self.state.hosts[h as usize].verbs.create_qp(pd, init)?;
        self.control_path(h, Stage::IoctlCreateQp, 0);
        Ok(r)
    }

    /// When host `h`'s application thread is free (after its blocking verbs calls).
    pub fn app_ready(&self, h: u32) -> SimTime {
        self.state.hosts[h as usize].app_ready
    }

    /// The fabric flow id of QP `qpn`'s frames from host `h` (for loss rules and traces).
    pub fn flow_of(h: u32, qpn: QpNum) -> FlowId {
        FlowId(h * 0x1_0000 + (qpn.get() & 0xffff))
    }

    /// `ibv_req_notify_cq`: the next completion on `cq` raises an interrupt and wakes the
    /// thread waiting on its channel.
    pub fn req_notify_cq(
        &mut self,
        h: u32,
        cq: verbs::CqHandle,
        solicited_only: bool,
    ) -> Result<(), VerbsError> {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let cost = host.profile.cpu.poll_cq;
        let ready = now.max(host.app_ready);
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: 0,
                ready,
                cost,
                stage: Stage::ReqNotifyCq,
                setup: false,
            },
        );
        host.verbs.req_notify_cq(cq, solicited_only)
    }

    /// When the first completion event pending on `channel` reaches the application (its
    /// wake-up ends), if one is pending: a blocking `ibv_get_cq_event` returns then.
    pub fn cq_event_at(&self, h: u32, channel: verbs::types::ChannelHandle) -> Option<SimTime> {
        self.state.hosts[h as usize]
            .cq_events
            .iter()
            .filter(|(_, ch)| *ch == channel)
            .map(|(t, _)| *t)
            .min()
    }

    /// `ibv_get_cq_event`: the CQ whose event has reached the application on `channel`, once
    /// the interrupt and the wake-up have run; `None` before that.
    pub fn get_cq_event(
        &mut self,
        h: u32,
        channel: verbs::types::ChannelHandle,
    ) -> Result<Option<verbs::CqHandle>, VerbsError> {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let Some(i) = host
            .cq_events
            .iter()
            .position(|&(t, ch)| ch == channel && t <= now)
        else {
            return Ok(None);
        };
        host.cq_events.remove(i);
        host.verbs.get_cq_event(channel)
    }

    /// `ibv_modify_qp`, keeping the QP's transport in step with its state.
    pub fn modify_qp(
        &mut self,
        h: u32,
        qpn: QpNum,
        attr: &QpAttr,
        mask: QpAttrMask,
    ) -> Result<ModifyOutcome, VerbsError> {
        if mask.contains(QpAttrMask::STATE)
            && matches!(
                attr.qp_state,
                verbs::types::QpState::Err | verbs::types::QpState::Reset
            )
        {
            self.state.hosts[h as usize].land_recv_cqes(qpn.get());
        }
        let ethertype = self.resolve_av(h, attr, mask)?;
        let out = self.state.hosts[h as usize]
            .verbs
            .modify_qp(qpn, attr, mask)?;
        let line_kbps = self.line_kbps(h);
        self.control_path(h, Stage::IoctlModifyQp, 0);
        let host = &mut self.state.hosts[h as usize];
        let (a, init) = host.verbs.query_qp(qpn)?;
        let service = match init.qp_type {
            verbs::types::QpType::Uc => transport::roce::Service::Uc,
            verbs::types::QpType::Ud => transport::roce::Service::Ud,
            _ => transport::roce::Service::Rc,
        };
        let cfg = RcConfig {
            local_qpn: qpn.get(),
            dest_qpn: a.dest_qp_num,
            pmtu: a.path_mtu.bytes(),
            sq_psn: a.sq_psn,
            rq_psn: a.rq_psn,
            timeout: a.timeout,
            retry_cnt: a.retry_cnt,
            rnr_retry: a.rnr_retry,
            min_rnr_timer: a.min_rnr_timer,
            max_rd_atomic: a.max_rd_atomic,
            max_dest_rd_atomic: a.max_dest_rd_atomic,
            adaptive_min: self.state.adaptive_min,
            mode: if self.state.selective_window.is_some() {
                RetransmitMode::SelectiveRepeat
            } else {
                RetransmitMode::GoBackN
            },
            max_unacked_psns: self
                .state
                .selective_window
                .unwrap_or(RcConfig::default().max_unacked_psns),
            service,
            qkey: a.qkey,
            ..RcConfig::default()
        };
        let dgid = a.ah_attr.grh.dgid.0;
        let peer = self
            .state
            .by_ip
            .get(&[dgid[12], dgid[13], dgid[14], dgid[15]])
            .copied();
        let e = host.qps.entry(qpn.get()).or_insert_with(|| {
            Box::new(QpEngine {
                req: None,
                resp: None,
                peer: None,
                sport: 0xc000 | ((qpn.get() ^ (qpn.get() >> 14)) & 0x3fff) as u16,
                fetched: VecDeque::new(),
                timer_at: None,
                recv_cqes: VecDeque::new(),
                np: dcqcn::Np::default(),
                dest_qpn: 0,
                ethertype: EtherType::Ipv4,
            })
        });
        e.dest_qpn = cfg.dest_qpn;
        if let Some(t) = ethertype {
            e.ethertype = t;
        }
        for effect in &out.effects {
            match effect {
                ModifyEffect::Reset(_) | ModifyEffect::Flushed(_) => {
                    retire(e, &mut host.retired);
                    e.fetched.clear();
                    if matches!(effect, ModifyEffect::Reset(_)) {
                        // A reset QP may count its PSNs from anywhere again.
                        self.state.wr_psns.remove(&(h, qpn.get() & 0xffff));
                    }
                }
                ModifyEffect::EnteredRtr => {
                    e.peer = peer;
                    e.resp = Some(Responder::new(cfg));
                }
                ModifyEffect::EnteredRts => {
                    if e.req.is_none() {
                        let mut r = Requester::new(cfg);
                        if let (Some(p), transport::roce::Service::Rc) =
                            (self.state.dcqcn, cfg.service)
                        {
                            r.set_reaction_point(dcqcn::Rp::new(p, line_kbps), |pkt| {
                                let hdr = RoceHeaders {
                                    bth: pkt.bth,
                                    ext: pkt.ext,
                                    udp_src_port: 0,
                                };
                                roce_frame_len(&hdr, pkt.payload_len) as u64
                            });
                        }
                        e.req = Some(r);
                    }
                    // WQEs posted before RTS (mlx5 accepts them) may start now.
                    self.sched.schedule_at(
                        self.sched.now(),
                        Event::Host(HostEvent::Doorbell {
                            host: h,
                            qpn: qpn.get(),
                        }),
                    );
                }
                ModifyEffect::EnteredSqd { .. } => {}
            }
        }
        // A move to ERR flushes into the CQs now: an armed CQ's event is raised now too.
        let now = self.sched.now();
        self.state.deliver_notifications(h, now);
        Ok(out)
    }

    /// `ibv_post_send`: the WRs are checked and queued now; the CPU builds them and rings the
    /// doorbell, which reaches the NIC over PCIe.
    pub fn post_send(
        &mut self,
        h: u32,
        qpn: QpNum,
        wrs: &[SendWr],
    ) -> Result<PostReport, PostError> {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let result = host.verbs.post_send(qpn, wrs);
        let posted = match &result {
            Ok(_) => wrs.len(),
            Err(e) => e.posted,
        };
        if posted > 0 {
            let cost = host.profile.cpu.post_wr * posted as u64;
            let (_, cpu_end) = host.cpu.run(
                &mut self.state.tracer,
                now,
                CpuWork {
                    core: 0,
                    ready: now,
                    cost,
                    stage: Stage::PostSend,
                    setup: false,
                },
            );
            let bf = host.profile.nic.blueflame;
            let bytes = if bf { 64 } else { 8 };
            let (_, landed) = host.pcie.run(
                &mut self.state.tracer,
                now,
                Xfer {
                    kind: XferKind::MmioWrite,
                    at: cpu_end,
                    bytes,
                    stage: if bf {
                        Stage::MmioBlueFlame
                    } else {
                        Stage::MmioDoorbell
                    },
                    setup: false,
                },
            );
            self.sched.schedule_at(
                landed,
                Event::Host(HostEvent::Doorbell {
                    host: h,
                    qpn: qpn.get(),
                }),
            );
        }
        // A post in ERR completes WR_FLUSH_ERR at once, and may raise a completion event.
        self.state.deliver_notifications(h, now);
        result
    }

    /// `ibv_post_recv`.
    pub fn post_recv(
        &mut self,
        h: u32,
        qpn: QpNum,
        wrs: &[RecvWr],
    ) -> Result<PostReport, PostError> {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let result = host.verbs.post_recv(qpn, wrs);
        let cost = host.profile.cpu.post_wr * wrs.len() as u64;
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: 0,
                ready: now,
                cost,
                stage: Stage::PostRecv,
                setup: false,
            },
        );
        self.state.deliver_notifications(h, now);
        result
    }

    /// `ibv_poll_cq`, charged to the application's core.
    pub fn poll_cq(
        &mut self,
        h: u32,
        cq: verbs::CqHandle,
        max: usize,
    ) -> Result<Vec<Wc>, VerbsError> {
        let now = self.sched.now();
        let host = &mut self.state.hosts[h as usize];
        let cost = host.profile.cpu.poll_cq;
        host.cpu.run(
            &mut self.state.tracer,
            now,
            CpuWork {
                core: 0,
                ready: now,
                cost,
                stage: Stage::PollCq,
                setup: false,
            },
        );
        host.verbs.poll_cq(cq, max)
    }

    /// Bytes the run's growing state holds, as counted for the memory budget
    /// (`budget.max_memory_mb`): the trace records the observers keep, the fabric's packets
    /// in flight and the bytes of every host's buffers. Counted from lengths and capacities,
    /// so the same run always counts the same.
    pub fn held_bytes(&self) -> u64 {
        self.state.held_bytes()
    }

    /// Whether the run's memory budget has room for `extra` more bytes of state (say, a
    /// buffer about to be allocated): checked before a large allocation, so that a run that
    /// cannot fit stops with the budget error before it takes the memory.
    pub fn reserve(&self, extra: u64) -> Result<(), WorldError> {
        let Some(t) = &self.total_budget else {
            return Ok(());
        };
        if self.held_bytes().saturating_add(extra) > t.budget.memory_bytes {
            return Err(BudgetExceeded::Memory {
                limit_bytes: t.budget.memory_bytes,
            }
            .into());
        }
        Ok(())
    }

    /// Gives the whole run a budget (simulated time from now, events and wall time across
    /// every later `run_until*` call); each call then runs within what is left of it as well
    /// as within its own budget.
    pub fn set_run_budget(&mut self, b: Budget) {
        self.total_budget = Some(TotalBudget {
            budget: b,
            memory_checked_at: std::cell::Cell::new(0),
            started: std::time::Instant::now(),
            sim_start: self.sched.now(),
            events: 0,
        });
    }

    /// `call` narrowed to what the run's budget has left (and which of simulated time, events
    /// and wall time the run's budget set), or the budget it ran out of.
    fn within_total(&self, call: &Budget) -> Result<(Budget, [bool; 3]), WorldError> {
        let Some(t) = &self.total_budget else {
            return Ok((*call, [false; 3]));
        };
        let events = t.budget.events.saturating_sub(t.events);
        if events == 0 {
            return Err(BudgetExceeded::Events {
                limit: t.budget.events,
            }
            .into());
        }
        // The engine checks memory every 16,384 events of one call; a run made of many short
        // calls (a TCP sender's loop of write()s, one per segment) never reaches that within
        // a call, so the run's own count decides here. Found by the web's heavy load test:
        // a 256 MiB message at MTU 576 held 1.6 GB under a 256 MB budget.
        if t.budget.memory_bytes != u64::MAX
            && t.events.saturating_sub(t.memory_checked_at.get())
                >= engine::sched::BUDGET_CHECK_EVERY
        {
            t.memory_checked_at.set(t.events);
            if self.held_bytes() > t.budget.memory_bytes {
                return Err(BudgetExceeded::Memory {
                    limit_bytes: t.budget.memory_bytes,
                }
                .into());
            }
        }
        let wall = t.budget.wall.saturating_sub(t.started.elapsed());
        if wall.is_zero() {
            return Err(BudgetExceeded::Wall {
                limit: t.budget.wall,
                events: t.events,
            }
            .into());
        }
        let end = t
            .sim_start
            .checked_add(t.budget.sim_time)
            .unwrap_or(SimTime::MAX);
        // The engine measures a budget's simulated time from time zero, so the run's end is
        // passed as an absolute time, not as what is left from now.
        let sim_time = end.saturating_duration_since(SimTime::ZERO);
        Ok((
            Budget {
                sim_time: call.sim_time.min(sim_time),
                events: call.events.min(events),
                wall: call.wall.min(wall),
                memory_bytes: call.memory_bytes.min(t.budget.memory_bytes),
            },
            [
                sim_time < call.sim_time,
                events < call.events,
                wall < call.wall,
            ],
        ))
    }

    /// Adds a call's events to the run's budget, and names the run's own limit when the
    /// narrowed call ran out of it.
    fn count_total(
        &mut self,
        r: Result<RunStats, BudgetExceeded>,
        from_total: [bool; 3],
    ) -> Result<RunStats, BudgetExceeded> {
        let Some(t) = &mut self.total_budget else {
            return r;
        };
        match r {
            Ok(st) => {
                t.events += st.events;
                Ok(st)
            }
            Err(BudgetExceeded::SimTime { .. }) if from_total[0] => Err(BudgetExceeded::SimTime {
                limit: t.budget.sim_time,
            }),
            Err(BudgetExceeded::Events { .. }) if from_total[1] => Err(BudgetExceeded::Events {
                limit: t.budget.events,
            }),
            Err(BudgetExceeded::Wall { events, .. }) if from_total[2] => {
                Err(BudgetExceeded::Wall {
                    limit: t.budget.wall,
                    events: t.events + events,
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// The event handlers: the RDMA NIC datapath (the TCP socket path's are in `tcp.rs`), each at
/// `sched.now()`, scheduling what follows through `sched`.
impl State {
    /// Turns completion events the verbs layer raised into an interrupt on core 1 and a wake-up
    /// of the application thread on core 0.
    fn deliver_notifications(&mut self, h: u32, now: SimTime) {
        let host = &mut self.hosts[h as usize];
        for n in host.verbs.take_notifications() {
            if let verbs::Notification::CompletionEvent {
                channel: Some(ch), ..
            } = n
            {
                let c = host.profile.control;
                let (_, irq) = host.cpu.run(
                    &mut self.tracer,
                    now,
                    CpuWork {
                        core: 1,
                        ready: now,
                        cost: c.interrupt,
                        stage: Stage::CompletionInterrupt,
                        setup: false,
                    },
                );
                let (_, woke) = host.cpu.run(
                    &mut self.tracer,
                    now,
                    CpuWork {
                        core: 0,
                        ready: irq,
                        cost: c.wakeup,
                        stage: Stage::WakeUp,
                        setup: false,
                    },
                );
                host.cq_events.push_back((woke, ch));
            }
        }
    }

    fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) {
        if let Some(v) = self.fabric_view.as_mut() {
            v.catch_up(&mut self.fabric, sched.now());
        }
        match ev {
            Event::Fabric(fe) => {
                self.fabric.handle(fe, sched);
                while let Some(d) = self.fabric.take_delivered() {
                    match d {
                        Delivery::Arrived(node, pkt) => {
                            let Some(&h) = self.by_node.get(&node.0) else {
                                // No host model there: the frame ends at the port.
                                self.fabric.take_held(pkt);
                                continue;
                            };
                            // The fabric holds the frame while it passes the NIC pipeline
                            // (traced by `rx_in`, which knows whose frame it is).
                            let at = sched.now() + self.hosts[h as usize].profile.nic.pipeline;
                            sched.schedule_at(
                                at,
                                Event::Host(HostEvent::RxIn {
                                    host: h,
                                    slot: pkt.index(),
                                }),
                            );
                        }
                        Delivery::Dropped(pkt) => {
                            if let Some(Payload::Roce { data, .. } | Payload::Tcp { data, .. }) =
                                self.fabric.take_held(pkt).map(|p| p.payload)
                            {
                                self.free_data(data);
                            }
                        }
                    }
                }
                if self.fabric.has_host_wakeups() {
                    // A scratch vector kept between events (no allocation per wakeup).
                    let mut wake = std::mem::take(&mut self.wake_scratch);
                    wake.extend(self.fabric.take_host_wakeups());
                    for node in wake.drain(..) {
                        if let Some(&h) = self.by_node.get(&node.0) {
                            self.tx_to_port(h, sched);
                            self.tcp_nic_pump(h, sched);
                        }
                    }
                    self.wake_scratch = wake;
                }
                if self.pcap.is_some() || self.frame_log.is_some() {
                    // A failed write is reported by finish_pcap; the run goes on.
                    let _ = self.write_captured();
                }
            }
            Event::Host(
                HostEvent::Doorbell { host, qpn } | HostEvent::WqeFetched { host, qpn },
            ) => {
                self.doorbell(host, qpn, sched);
                // A WQE that failed as it started (a bad opcode) completed in error just now.
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::TxOut { host, slot }) => self.tx_out(host, slot, sched),
            Event::Host(HostEvent::RxIn { host, slot }) => {
                self.rx_in(host, slot, sched);
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::Tcp(e)) => self.tcp_handle(e, sched),
            Event::Host(HostEvent::Timer { host, qpn }) => {
                let now = sched.now();
                let Some(e) = self.hosts[host as usize].qps.get_mut(&qpn) else {
                    return;
                };
                if e.timer_at == Some(now) {
                    e.timer_at = None;
                }
                if let Some(r) = e.req.as_mut() {
                    r.handle_timeout(now);
                }
                self.trace_rate(host, qpn, now);
                self.after_transport(host, qpn, sched);
            }
            Event::Host(HostEvent::RecvDone { host, qpn }) => {
                let hs = &mut self.hosts[host as usize];
                if let Some(t) = hs.qps.get_mut(&qpn).and_then(|e| e.recv_cqes.pop_front()) {
                    let _ = hs.verbs.deliver_recv(QpNum::masked(qpn), t);
                }
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::SendDone { host, qpn, slot }) => {
                let (id, status) = self.hosts[host as usize]
                    .send_done
                    .remove(engine::Handle::from_index(slot));
                self.send_completions += 1;
                let wc = wc_status(status);
                if wc != WcStatus::Success {
                    // An error completion moves the QP to ERR and flushes it.
                    self.hosts[host as usize].land_recv_cqes(qpn);
                }
                let hs = &mut self.hosts[host as usize];
                if let Ok(done) =
                    hs.verbs
                        .complete_send(QpNum::masked(qpn), verbs::qp::WqeId(id), wc)
                    && done.flushed.is_some()
                    && let Some(e) = hs.qps.get_mut(&qpn)
                {
                    retire(e, &mut hs.retired);
                    e.fetched.clear();
                }
                self.deliver_notifications(host, sched.now());
                self.doorbell(host, qpn, sched);
            }
        }
    }

    fn doorbell(&mut self, h: u32, qpn: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let host = &mut self.hosts[h as usize];
        // Start every WQE that may start; each is usable after its fetch.
        loop {
            let Some(e) = host.qps.get(&qpn) else { return };
            if e.req.is_none() {
                break;
            }
            let started = match host.verbs.start_send(QpNum::masked(qpn)) {
                Ok(StartSend::Started(w)) => w,
                Ok(StartSend::FailedLocally(done)) => {
                    if done.flushed.is_some()
                        && let Some(e) = host.qps.get_mut(&qpn)
                    {
                        retire(e, &mut host.retired);
                    }
                    break;
                }
                _ => break,
            };
            let wqe_bytes = 64
                + 16 * started.wr.sg_list.len() as u32
                + started.inline_data.as_ref().map_or(0, |d| d.len() as u32);
            let ready = if host.profile.nic.blueflame
                && wqe_bytes <= host.profile.nic.blueflame_max_bytes
            {
                now
            } else {
                let (_, end) = host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaRead,
                        at: now,
                        bytes: wqe_bytes as u64,
                        stage: Stage::DmaReadWqe,
                        setup: false,
                    },
                );
                sched.schedule_at(end, Event::Host(HostEvent::WqeFetched { host: h, qpn }));
                end
            };
            let w = &started.wr;
            let op = match w.opcode {
                SendOpcode::Send => WorkOp::Send { imm: None },
                SendOpcode::SendWithImm => WorkOp::Send {
                    imm: Some(w.imm_data),
                },
                SendOpcode::RdmaWrite => WorkOp::Write {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    imm: None,
                },
                SendOpcode::RdmaWriteWithImm => WorkOp::Write {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    imm: Some(w.imm_data),
                },
                SendOpcode::RdmaRead => WorkOp::Read {
                    va: w.remote_addr,
                    rkey: w.rkey,
                },
                SendOpcode::AtomicCmpAndSwp => WorkOp::CompareSwap {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    compare: w.compare_add,
                    swap: w.swap,
                },
                SendOpcode::AtomicFetchAndAdd => WorkOp::FetchAdd {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    add: w.compare_add,
                },
            };
            // UD: a message longer than the path MTU sends nothing and completes SUCCESS
            // (research/verbs-spec.md §5; rxe `rxe_requester`, "UD: ignore oversized").
            let ud_pmtu = host
                .qps
                .get(&qpn)
                .and_then(|e| e.req.as_ref())
                .filter(|r| r.config().service == transport::roce::Service::Ud)
                .map(|r| r.config().pmtu as u64);
            if ud_pmtu.is_some_and(|m| started.length > m) {
                // It still takes its PSN (rxe: "fake a successful UD send").
                if let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
                    r.skip_psn();
                }
                let _ = host
                    .verbs
                    .complete_send(QpNum::masked(qpn), started.id, WcStatus::Success);
                continue;
            }
            // UD: the destination host comes from the work request's address handle.
            let ud = w.ud.map(|u| {
                let g = u.ah.grh.dgid.0;
                let ah = self
                    .by_ip
                    .get(&[g[12], g[13], g[14], g[15]])
                    .copied()
                    .unwrap_or(u32::MAX);
                transport::roce::UdDest {
                    qpn: u.remote_qpn,
                    qkey: u.remote_qkey,
                    ah,
                }
            });
            let req = SendRequest {
                id: started.id.0,
                op,
                len: started.length.min(u32::MAX as u64) as u32,
                solicited: started.solicited(),
                fence: started.fenced(),
                ud,
            };
            if let Some(e) = host.qps.get_mut(&qpn) {
                e.fetched.push_back((ready, req));
            }
        }
        // Hand fetched WQEs whose fetch is done to the transport, in order.
        if let Some(e) = host.qps.get_mut(&qpn) {
            while let Some(&(ready, req)) = e.fetched.front() {
                if ready > now {
                    break;
                }
                e.fetched.pop_front();
                if let Some(r) = e.req.as_mut() {
                    r.post(req);
                }
            }
        }
        self.pump_tx(h, sched);
        self.update_timer(h, qpn, sched);
    }

    /// Gathers frames from the host's QPs (responses first, round-robin over QPs) while the NIC
    /// has room ahead of its port.
    fn pump_tx(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let mut pace_wake = std::mem::take(&mut self.pace_scratch);
        self.pump_tx_inner(h, now, &mut pace_wake, sched);
        // A QP held back by its DCQCN rate is woken when its next packet may go.
        for q in pace_wake.drain(..) {
            self.trace_rate(h, q, now);
            self.update_timer(h, q, sched);
        }
        self.pace_scratch = pace_wake;
    }

    fn pump_tx_inner(
        &mut self,
        h: u32,
        now: SimTime,
        pace_wake: &mut Vec<u32>,
        sched: &mut Scheduler<Event>,
    ) {
        loop {
            let host = &mut self.hosts[h as usize];
            let resp_room = host.nic_tx.has_room(Work::Response, now);
            let req_room = host.nic_tx.has_room(Work::Request, now);
            if !resp_room && !req_room {
                return;
            }
            // Next QP after the last one served that has something to send: the QPs above
            // `rr` in order, then from the lowest up to `rr`, in one pass over the map's two
            // ranges (no lookup per QP: a host with a hundred QPs scans them every frame).
            let rr = host.rr;
            let mut try_qp = |q: u32, e: &mut QpEngine| {
                // DCQCN paces a QP's requests at its rate (the requester holds them back);
                // responses go as they come.
                let paced = e.req.as_ref().is_some_and(|r| r.is_paced(now));
                let t = if resp_room {
                    e.resp.as_mut().and_then(|r| r.poll_transmit(now))
                } else {
                    None
                };
                match t {
                    Some(t) => Some((Work::Response, t)),
                    None if !req_room => None,
                    None if paced => {
                        if e.req.as_ref().is_some_and(|r| r.outstanding() > 0) {
                            pace_wake.push(q);
                        }
                        None
                    }
                    None => {
                        let t = e.req.as_mut().and_then(|r| r.poll_transmit(now));
                        if t.is_some()
                            && e.req.as_ref().is_some_and(|r| r.reaction_point().is_some())
                        {
                            pace_wake.push(q);
                        }
                        t.map(|t| (Work::Request, t))
                    }
                }
            };
            let mut found = None;
            let (above, wrap) = match rr.checked_add(1) {
                Some(next) => (next.., Some(..=rr)),
                None => (0.., None),
            };
            for (&q, e) in host.qps.range_mut(above) {
                if let Some(t) = try_qp(q, e) {
                    found = Some((q, t));
                    break;
                }
            }
            if found.is_none()
                && let Some(wrap) = wrap
            {
                for (&q, e) in host.qps.range_mut(wrap) {
                    if let Some(t) = try_qp(q, e) {
                        found = Some((q, t));
                        break;
                    }
                }
            }
            if let Some((q, _)) = found {
                host.rr = q;
            }
            let Some((qpn, (work, t))) = found else {
                return;
            };
            if self.frame_log.is_some() && t.pkt.bth.opcode.is_request() {
                self.note_request(h, qpn, &t);
            }
            self.gather(h, qpn, t, work, sched);
        }
    }

    /// Frame logging: remembers which send WR request packet `t` of QP `qpn` belongs to.
    fn note_request(&mut self, h: u32, qpn: u32, t: &Transmit) {
        let host = &self.hosts[h as usize];
        let psn = t.pkt.bth.psn;
        let wr = host
            .qps
            .get(&qpn)
            .and_then(|e| e.req.as_ref())
            .and_then(|r| r.request_of(psn))
            .and_then(|id| {
                host.verbs
                    .send_wr_id(QpNum::masked(qpn), verbs::qp::WqeId(id))
            });
        if let Some(wr) = wr {
            // One entry per message (where the WR changes), not per packet: a resend or a
            // later packet of the same message finds its start by range.
            let m = self.wr_psns.entry((h, qpn & 0xffff)).or_default();
            if m.range(..=psn).next_back().map(|(_, &w)| w) != Some(wr) {
                m.insert(psn, wr);
            }
        }
    }

    fn gather(&mut self, h: u32, qpn: u32, t: Transmit, work: Work, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let len = t.pkt.payload_len as usize;
        let host = &mut self.hosts[h as usize];
        let mut dma_end = now;
        let mut read_bytes = 0;
        let dma = |host: &mut SimHost, tracer: &mut Tracer, stage: Stage| {
            let (_, end) = host.pcie.run(
                tracer,
                now,
                Xfer {
                    kind: XferKind::DmaRead,
                    at: now,
                    bytes: len as u64,
                    stage,
                    setup: false,
                },
            );
            end
        };
        let payload = match t.data {
            DataRef::None => None,
            DataRef::Request { id, offset } => {
                let wqe = verbs::qp::WqeId(id);
                let gathered =
                    match host
                        .verbs
                        .gather_ref(QpNum::masked(qpn), wqe, offset, len as u64)
                    {
                        Ok(Some(r)) => Ok(PoolData::Synthetic(r)),
                        Ok(None) => {
                            let mut buf = self.spare.pop().unwrap_or_default();
                            buf.clear();
                            buf.resize(len, 0);
                            match host
                                .verbs
                                .gather_send(QpNum::masked(qpn), wqe, offset, &mut buf)
                            {
                                Ok(()) => Ok(PoolData::Bytes(buf)),
                                Err(e) => {
                                    self.spare.push(buf);
                                    Err(e)
                                }
                            }
                        }
                        Err(e) => Err(e),
                    };
                let data = match gathered {
                    Ok(d) => d,
                    Err(err) => {
                        // No packet goes out: the WQE fails locally (verbs-spec C29).
                        let status = match err.send_status(host.verbs.profile()) {
                            WcStatus::LocQpOpErr => ReqStatus::LocalQpOperation,
                            _ => ReqStatus::LocalProtection,
                        };
                        if let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
                            r.fail_request(id, status);
                        }
                        self.drain_requester_events(h, qpn, sched);
                        return;
                    }
                };
                let inline = host
                    .verbs
                    .send_wqe(QpNum::masked(qpn), wqe)
                    .is_ok_and(|w| w.inline_data.is_some());
                if !inline && len > 0 {
                    dma_end = dma(host, &mut self.tracer, Stage::DmaReadPayload);
                    read_bytes = len as u64;
                }
                Some(data)
            }
            DataRef::Remote { va } => {
                let data = match host.verbs.memory().synthetic_ref(va, len as u64) {
                    Some(r) => PoolData::Synthetic(r),
                    None => {
                        let mut buf = self.spare.pop().unwrap_or_default();
                        buf.clear();
                        buf.resize(len, 0);
                        if host.verbs.memory().read(va, &mut buf).is_err() {
                            buf.fill(0);
                        }
                        PoolData::Bytes(buf)
                    }
                };
                dma_end = dma(host, &mut self.tracer, Stage::DmaReadResponse);
                read_bytes = len as u64;
                Some(data)
            }
        };
        let data = match payload {
            Some(d) if len > 0 => self.pool.insert(d).index(),
            Some(PoolData::Bytes(b)) => {
                self.spare.push(b);
                fabric::NO_DATA
            }
            _ => fabric::NO_DATA,
        };
        let host = &mut self.hosts[h as usize];
        let frame_bytes = roce_frame_len(
            &RoceHeaders {
                bth: t.pkt.bth,
                ext: t.pkt.ext,
                udp_src_port: 0,
            },
            t.pkt.payload_len,
        );
        host.nic_tx
            .start(work, frame_bytes as u64, read_bytes, dma_end.max(now));
        // The NIC's TX pipeline is in order: a frame whose gather finished early (an ACK, a READ
        // request) still leaves after the frames ahead of it, and no sooner than the pipeline's
        // issue interval after the one before it.
        let ready = (dma_end.max(now) + host.profile.nic.pipeline)
            .max(host.tx_last_ready + host.profile.nic.packet_interval);
        host.tx_last_ready = ready;
        let node = host.node;
        self.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: Stage::NicTx,
            setup: false,
            start: dma_end.max(now),
            end: ready,
        });
        let slot = host.tx_slots.insert(TxSlot {
            qpn,
            t,
            data,
            work,
            frame_bytes: frame_bytes as u32,
        });
        host.tx_inflight += 1;
        sched.schedule_at(
            ready,
            Event::Host(HostEvent::TxOut {
                host: h,
                slot: slot.index(),
            }),
        );
    }

    /// A frame has passed the TX pipeline: it waits for the port.
    fn tx_out(&mut self, h: u32, slot: u32, sched: &mut Scheduler<Event>) {
        self.hosts[h as usize].nic_tx.push_ready(slot);
        self.tx_to_port(h, sched);
    }

    /// Hands the port the frames waiting for it while it has room, then gathers more.
    fn tx_to_port(&mut self, h: u32, sched: &mut Scheduler<Event>) {
        loop {
            let host = &mut self.hosts[h as usize];
            let queued = self.fabric.host_backlog(host.node);
            let Some(slot) = host.nic_tx.next_ready(queued) else {
                break;
            };
            self.send_to_port(h, slot, sched);
        }
        self.pump_tx(h, sched);
    }

    fn send_to_port(&mut self, h: u32, slot: u32, sched: &mut Scheduler<Event>) {
        let n_hosts = self.hosts.len() as u32;
        let host = &mut self.hosts[h as usize];
        let s = host.tx_slots.remove(engine::Handle::from_index(slot));
        host.tx_inflight -= 1;
        host.nic_tx.left(s.work, u64::from(s.frame_bytes));
        let Some(e) = host.qps.get(&s.qpn) else {
            self.free_data(s.data);
            return;
        };
        // A UD datagram goes where its address handle points; connected QPs to their peer.
        let peer = match s.t.ud_ah {
            Some(ah) => Some(ah).filter(|&x| x < n_hosts),
            None => e.peer,
        };
        let Some(peer) = peer else {
            self.free_data(s.data);
            return;
        };
        let sport = e.sport;
        let ethertype = e.ethertype;
        // UC: nothing acknowledges a request; it completes when its last packet leaves, so its
        // CQE is written now (the requester reported it when the packet was handed over).
        let uc_done = e
            .req
            .as_ref()
            .is_some_and(|r| r.config().service != transport::roce::Service::Rc)
            && (s.t.pkt.bth.opcode.is_last() || s.t.pkt.bth.opcode.is_only());
        let hdr = RoceHeaders {
            bth: s.t.pkt.bth,
            ext: s.t.pkt.ext,
            udp_src_port: sport,
        };
        let spec = roce_spec(
            (h, s.qpn),
            (peer, self.host_nodes[peer as usize]),
            hdr,
            (s.t.pkt.payload_len, s.data),
            (self.roce_priority, Ecn::Ect0),
            ethertype,
        );
        let node = self.hosts[h as usize].node;
        if self.fabric.send(node, spec, sched).is_err() {
            self.free_data(s.data);
        }
        if uc_done {
            self.drain_requester_events(h, s.qpn, sched);
        }
    }

    fn rx_in(&mut self, h: u32, slot: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(pkt) = self
            .fabric
            .take_held(fabric::PacketHandle::from_index(slot))
        else {
            unreachable!("each RxIn names a frame the fabric holds, taken once");
        };
        // The NIC pipeline the frame just passed; a frame of the out-of-band exchange is
        // setup work, so a data path's timeline never shows it.
        let setup = match &pkt.payload {
            Payload::Tcp { repr, .. } => self.tcp_frame_is_setup(h, repr),
            _ => false,
        };
        let start = now - self.hosts[h as usize].profile.nic.pipeline;
        let node = self.hosts[h as usize].node;
        self.tracer.emit(now, || TraceRecord::Stage {
            host: node,
            unit: ExecUnit::Nic,
            stage: Stage::NicRx,
            setup,
            start,
            end: now,
        });
        if let Payload::Tcp { repr, data } = pkt.payload {
            return self.tcp_rx_frame(h, &pkt, repr, data, sched);
        }
        let Payload::Roce {
            hdr,
            payload_len,
            data,
        } = pkt.payload
        else {
            return;
        };
        let (bytes, symbolic) = if data == fabric::NO_DATA {
            (Vec::new(), None)
        } else {
            match self.pool.remove(engine::Handle::from_index(data)) {
                PoolData::Bytes(b) => (b, None),
                PoolData::Synthetic(r) => (Vec::new(), Some(r)),
            }
        };
        let qpn = hdr.bth.dest_qp;
        if hdr.bth.opcode.is_cnp() {
            // DCQCN's reaction point: cut this QP's rate.
            if self.hosts[h as usize]
                .qps
                .get_mut(&qpn)
                .and_then(|e| e.req.as_mut())
                .is_some_and(|r| r.handle_cnp(now))
            {
                self.trace_rate(h, qpn, now);
                self.update_timer(h, qpn, sched);
            }
            self.recycle(bytes);
            return;
        }
        if pkt.ecn == Ecn::Ce
            && let Some(params) = self.dcqcn
        {
            self.notify(h, qpn, &params, sched);
        }
        let rp = RocePacket {
            bth: hdr.bth,
            ext: hdr.ext,
            payload_len,
        };
        let host = &mut self.hosts[h as usize];
        if hdr.bth.opcode.is_request() {
            if host.verbs.accepts_requests(QpNum::masked(qpn)) != Ok(true) {
                self.recycle(bytes);
                return; // RESET/INIT QPs drop requests (C15)
            }
            let src_host = self.by_node.get(&pkt.src.0).copied().unwrap_or(h);
            let grh = ud_grh(host_ip(src_host), host_ip(h), payload_len);
            let host = &mut self.hosts[h as usize];
            let Some(e) = host.qps.get_mut(&qpn) else {
                self.recycle(bytes);
                return;
            };
            let Some(resp) = e.resp.as_mut() else {
                self.recycle(bytes);
                return;
            };
            let mut env = VerbsEnv {
                ctx: &mut host.verbs,
                qpn: QpNum::masked(qpn),
                pending_fail: None,
                taken: Vec::new(),
                grh,
                symbolic,
            };
            resp.handle_request(now, &rp, &bytes, &mut env);
            let taken = std::mem::take(&mut env.taken);
            let _ = env.ctx.request_arrived(QpNum::masked(qpn));
            if payload_len > 0 {
                host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaWrite,
                        at: now,
                        bytes: payload_len as u64,
                        stage: Stage::DmaWritePayload,
                        setup: false,
                    },
                );
            }
            // A receive's CQE follows its payload over PCIe (posted writes stay in order): the
            // application can see the completion only once the data is in memory.
            for t in taken {
                let (_, end) = host.pcie.run(
                    &mut self.tracer,
                    now,
                    Xfer {
                        kind: XferKind::DmaWrite,
                        at: now,
                        bytes: 64,
                        stage: Stage::DmaWriteRecvCqe,
                        setup: false,
                    },
                );
                e.recv_cqes.push_back(t);
                sched.schedule_at(end, Event::Host(HostEvent::RecvDone { host: h, qpn }));
            }
            let mut fatal = None;
            while let Some(ev) = resp.poll_event() {
                if let ResponderEvent::Failed { nak } = ev {
                    fatal = Some(nak);
                }
            }
            if let Some(nak) = fatal {
                use verbs::ResponderFault as F;
                let fault = match nak {
                    wire::ib::aeth::NakCode::RemoteAccessError => F::AccessViolation,
                    wire::ib::aeth::NakCode::RemoteOperationalError => F::Operational,
                    _ => F::InvalidRequest,
                };
                let _ = host.verbs.responder_failed(QpNum::masked(qpn), fault);
                host.land_recv_cqes(qpn);
                let _ = host.verbs.set_error(QpNum::masked(qpn));
                if let Some(e) = host.qps.get_mut(&qpn) {
                    if let Some(r) = e.req.take() {
                        host.retired.add_requester(&r.counters());
                    }
                    e.fetched.clear();
                }
            }
        } else {
            let Some(req) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) else {
                self.recycle(bytes);
                return;
            };
            // A READ's (or atomic's) response lands in the request's own buffer: the NIC
            // checks LOCAL_WRITE as it arrives, before anything is placed or completed.
            let lands = matches!(
                rp.bth.opcode.operation(),
                Some(
                    wire::ib::opcode::Operation::RdmaReadResponseFirst
                        | wire::ib::opcode::Operation::RdmaReadResponseMiddle
                        | wire::ib::opcode::Operation::RdmaReadResponseLast
                        | wire::ib::opcode::Operation::RdmaReadResponseOnly
                        | wire::ib::opcode::Operation::AtomicAcknowledge
                )
            );
            if lands
                && let Some(id) = req.request_of(rp.bth.psn)
                && host
                    .verbs
                    .check_read_target(QpNum::masked(qpn), verbs::qp::WqeId(id))
                    .is_err()
            {
                req.fail_request(id, ReqStatus::LocalProtection);
                self.recycle(bytes);
                self.after_transport(h, qpn, sched);
                return;
            }
            match req.handle_response(now, &rp) {
                Placement::ReadData { id, offset } => {
                    let r = host.verbs.scatter_send(
                        QpNum::masked(qpn),
                        verbs::qp::WqeId(id),
                        offset,
                        &bytes,
                    );
                    // check_read_target passed for this WQE, and a READ's responses never
                    // carry more than the request asked for.
                    debug_assert!(r.is_ok(), "READ data could not be placed: {r:?}");
                    host.pcie.run(
                        &mut self.tracer,
                        now,
                        Xfer {
                            kind: XferKind::DmaWrite,
                            at: now,
                            bytes: bytes.len() as u64,
                            stage: Stage::DmaWriteReadData,
                            setup: false,
                        },
                    );
                }
                Placement::AtomicResult { id, orig } => {
                    let r = host.verbs.write_atomic_result(
                        QpNum::masked(qpn),
                        verbs::qp::WqeId(id),
                        orig,
                    );
                    debug_assert!(r.is_ok(), "checked by check_read_target: {r:?}");
                }
                Placement::None => {}
            }
        }
        self.recycle(bytes);
        self.after_transport(h, qpn, sched);
    }

    /// After the transport of QP `qpn` did something: report completions (each a CQE DMA
    /// write), send what it wants to send, and keep its timer.
    fn after_transport(&mut self, h: u32, qpn: u32, sched: &mut Scheduler<Event>) {
        self.drain_requester_events(h, qpn, sched);
        self.pump_tx(h, sched);
        self.update_timer(h, qpn, sched);
    }

    /// Turns the requester's completions into CQE writes.
    fn drain_requester_events(&mut self, h: u32, qpn: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let host = &mut self.hosts[h as usize];
        let node = host.node;
        if let Some(req) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) {
            while let Some(ev) = req.poll_event() {
                if let RequesterEvent::GoBack { from_psn, reason } = ev {
                    self.tracer.emit(now, || TraceRecord::Retransmit {
                        host: node,
                        qpn,
                        from_psn,
                        reason: reason.name(),
                    });
                }
                if let RequesterEvent::Resend {
                    first_psn, reason, ..
                } = ev
                {
                    // Selective repeat (IRN): only the missing PSNs go again.
                    let reason = match reason {
                        RetransmitReason::Timeout => "selective repeat (IRN) after an ACK timeout",
                        RetransmitReason::ResponseGap => "selective repeat (IRN) of a READ gap",
                        _ => "selective repeat (IRN) after a SACK NAK",
                    };
                    self.tracer.emit(now, || TraceRecord::Retransmit {
                        host: node,
                        qpn,
                        from_psn: first_psn,
                        reason,
                    });
                }
                if let RequesterEvent::Completed { id, status } = ev {
                    let (_, end) = host.pcie.run(
                        &mut self.tracer,
                        now,
                        Xfer {
                            kind: XferKind::DmaWrite,
                            at: now,
                            bytes: 64,
                            stage: Stage::DmaWriteCqe,
                            setup: false,
                        },
                    );
                    let slot = host.send_done.insert((id, status)).index();
                    sched.schedule_at(end, Event::Host(HostEvent::SendDone { host: h, qpn, slot }));
                }
            }
        }
    }

    fn update_timer(&mut self, h: u32, qpn: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(e) = self.hosts[h as usize].qps.get_mut(&qpn) else {
            return;
        };
        let Some(t) = e.req.as_ref().and_then(|r| r.poll_timeout(now)) else {
            return;
        };
        if e.timer_at.is_none_or(|cur| t < cur) {
            e.timer_at = Some(t);
            sched.schedule_at(
                t.max(sched.now()),
                Event::Host(HostEvent::Timer { host: h, qpn }),
            );
        }
    }

    /// DCQCN's notification point: a CE-marked packet reached QP `qpn` of host `h`; answer
    /// with a CNP to the sending QP unless one went within the CNP interval. The NIC makes it
    /// itself (no PCIe) and sends it in the CNP priority.
    fn notify(&mut self, h: u32, qpn: u32, params: &DcqcnParams, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let host = &mut self.hosts[h as usize];
        let node = host.node;
        let Some(e) = host.qps.get_mut(&qpn) else {
            return;
        };
        let Some(peer) = e.peer else { return };
        if !e.np.on_marked(now, params) {
            return;
        }
        let sport = e.sport;
        let ethertype = e.ethertype;
        let hdr = RoceHeaders {
            bth: wire::ib::bth::Repr {
                opcode: wire::Opcode::CNP,
                solicited: false,
                mig_req: false,
                pad_count: 0,
                pkey: 0xffff,
                fecn: false,
                becn: true,
                dest_qp: e.dest_qpn,
                ack_req: false,
                psn: 0,
            },
            ext: wire::ExtHeaders::NONE,
            udp_src_port: sport,
        };
        let spec = roce_spec(
            (h, qpn),
            (peer, self.host_nodes[peer as usize]),
            hdr,
            (0, fabric::NO_DATA),
            (self.cnp_priority, Ecn::NotEct),
            ethertype,
        );
        let _ = self.fabric.send(node, spec, sched);
    }

    /// Puts the reaction point's rate changes of QP `qpn` on the trace.
    fn trace_rate(&mut self, h: u32, qpn: u32, now: SimTime) {
        let host = &mut self.hosts[h as usize];
        let node = host.node;
        let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) else {
            return;
        };
        while let Some(c) = r.poll_rate_change() {
            self.tracer.emit(now, || TraceRecord::RateChange {
                host: node,
                qpn,
                cause: c.cause,
                rate_kbps: c.rate_kbps,
                target_kbps: c.target_kbps,
                alpha: c.alpha,
            });
        }
    }

    fn free_data(&mut self, data: u32) {
        if data != fabric::NO_DATA
            && let PoolData::Bytes(b) = self.pool.remove(engine::Handle::from_index(data))
        {
            self.spare.push(b);
        }
    }

    fn recycle(&mut self, b: Vec<u8>) {
        if b.capacity() > 0 {
            self.spare.push(b);
        }
    }

    fn write_captured(&mut self) -> std::io::Result<()> {
        let frames = self.fabric.drain_captured();
        if self.frame_log.is_some() {
            for (at, node, _, pkt) in &frames {
                if self.by_node.get(&node.0).is_none() {
                    continue;
                }
                let wr = match pkt.payload {
                    Payload::Roce { hdr, .. } if hdr.bth.opcode != wire::Opcode::CNP => {
                        let psn = hdr.bth.psn;
                        if hdr.bth.opcode.is_request() {
                            let h = self.by_node.get(&pkt.src.0).copied();
                            // The flow id carries the sending QP's number (`World::flow_of`).
                            h.and_then(|h| self.wr_psns.get(&(h, pkt.flow.0 & 0xffff)))
                                .and_then(|m| m.range(..=psn).next_back().map(|(_, &w)| w))
                        } else {
                            let h = self.by_node.get(&pkt.dst.0).copied();
                            h.and_then(|h| self.wr_psns.get(&(h, hdr.bth.dest_qp & 0xffff)))
                                .and_then(|m| m.range(..=psn).next_back().map(|(_, &w)| w))
                        }
                    }
                    _ => None,
                };
                let full = self
                    .frame_log
                    .as_ref()
                    .is_some_and(|log| log.len() >= FRAME_LOG_MAX);
                if full {
                    self.frame_log_skipped += 1;
                    continue;
                }
                // The bytes as they left, payload included, cut to what an inspector shows.
                let (wire, wire_elided) = match self.encode(pkt) {
                    Ok(()) => wire::dissect::elide_payload(&self.frame_buf, WIRE_PAYLOAD_SHOWN),
                    Err(_) => (Vec::new(), None),
                };
                if let Some(log) = self.frame_log.as_mut() {
                    log.push(LoggedFrame {
                        at: *at,
                        pkt: *pkt,
                        wr_id: wr,
                        wire,
                        wire_elided,
                    });
                }
            }
        }
        if self.pcap.is_none() {
            return Ok(());
        }
        for (at, _node, _port, pkt) in frames {
            self.encode(&pkt).map_err(std::io::Error::other)?;
            if let Some(w) = self.pcap.as_mut() {
                w.write_frame(at, &self.frame_buf)?;
            }
        }
        Ok(())
    }

    /// The bytes of `pkt` as they go on the wire, its payload from the pool, into
    /// `self.frame_buf`.
    fn encode(&mut self, pkt: &Packet) -> wire::Result<()> {
        let src = self.by_node.get(&pkt.src.0).map_or([0; 4], |&h| host_ip(h));
        let dst = self.by_node.get(&pkt.dst.0).map_or([0; 4], |&h| host_ip(h));
        let payload: std::borrow::Cow<'_, [u8]> = match pkt.payload {
            Payload::Roce {
                data, payload_len, ..
            } if data != fabric::NO_DATA => {
                match self.pool.try_get(engine::Handle::from_index(data)) {
                    Some(PoolData::Bytes(v)) => std::borrow::Cow::Borrowed(v.as_slice()),
                    Some(PoolData::Synthetic(r)) => materialize(&[], Some(*r), payload_len),
                    None => std::borrow::Cow::Borrowed(&[][..]),
                }
            }
            Payload::Tcp { data, .. } if data != fabric::NO_DATA => {
                match self.pool.try_get(engine::Handle::from_index(data)) {
                    Some(PoolData::Bytes(v)) => std::borrow::Cow::Borrowed(v.as_slice()),
                    _ => std::borrow::Cow::Borrowed(&[][..]),
                }
            }
            _ => std::borrow::Cow::Borrowed(&[][..]),
        };
        frame_bytes(
            pkt,
            Ipv4Address(src),
            Ipv4Address(dst),
            &payload,
            &mut self.frame_buf,
        )
    }
}

/// A frame a host sent, as [`World::take_frame_log`] hands it out.
#[derive(Clone, Debug)]
pub struct LoggedFrame {
    /// When its first bit left.
    pub at: SimTime,
    /// The packet.
    pub pkt: Packet,
    /// The send WR it carries or answers, if known.
    pub wr_id: Option<u64>,
    /// Its bytes (without FCS), the payload cut to its first [`WIRE_PAYLOAD_SHOWN`] bytes
    /// (`wire::dissect::elide_payload`); empty if the packet could not be encoded.
    pub wire: Vec<u8>,
    /// The payload bytes (offsets in the whole frame) left out of `wire`, if any.
    pub wire_elided: Option<std::ops::Range<usize>>,
}

impl LoggedFrame {
    /// Its bytes as lowercase hex, two digits a byte and no separator (what the web lab's
    /// packet inspector decodes).
    pub fn wire_hex(&self) -> String {
        use std::fmt::Write;
        self.wire
            .iter()
            .fold(String::with_capacity(self.wire.len() * 2), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }
}

/// Payload bytes a logged frame keeps: enough to see a message's first words land, while a
/// step's frame list stays small (headers + 64 + ICRC is under 200 bytes a frame). An
/// interface choice, not a model figure.
pub const WIRE_PAYLOAD_SHOWN: usize = 64;

/// Most frames [`World::take_frame_log`] keeps between two calls (a verbs session's step).
pub const FRAME_LOG_MAX: usize = 4_096;

/// A RoCE frame from QP `qpn` of host `h` to host `peer` (at fabric node `dst`): its flow,
/// length and ECMP hash (the 5-tuple with the header's UDP source port) derived; `body` is the
/// payload length and its handle in the payload pool, `class` the priority and ECN codepoint.
/// The line rate of `node`'s port (100 Gb/s if it has none).
fn port_rate(fabric: &Fabric, node: NodeId) -> units::Bandwidth {
    fabric
        .ports()
        .find(|(n, ..)| *n == node)
        .and_then(|(_, _, link, _)| fabric.link(link))
        .map_or(units::Bandwidth::gbps(100), |l| l.bandwidth)
}

fn roce_spec(
    (h, qpn): (u32, u32),
    (peer, dst): (u32, NodeId),
    hdr: RoceHeaders,
    (payload_len, data): (u32, u32),
    (priority, ecn): (Priority, Ecn),
    ethertype: EtherType,
) -> PacketSpec {
    // RoCE v1 puts the 40-byte GRH where RoCEv2 has IPv4 (20) and UDP (8). Its ECMP hash is
    // left as RoCEv2's: only a bridge forwards it, and a bridge does not hash.
    let grh_extra = if ethertype == EtherType::RoceV1 {
        12
    } else {
        0
    };
    PacketSpec {
        flow: World::flow_of(h, QpNum::masked(qpn)),
        dst,
        priority,
        ecn,
        len_bytes: roce_frame_len(&hdr, payload_len) + grh_extra,
        ethertype,
        ecmp_hash: FiveTuple {
            src_ip: host_ip(h),
            dst_ip: host_ip(peer),
            protocol: 17,
            src_port: hdr.udp_src_port,
            dst_port: 4791,
        }
        .hash(),
        payload: Payload::Roce {
            hdr,
            payload_len,
            data,
        },
    }
}

/// The payload as bytes: `bytes` itself, or the synthetic content it refers to.
fn materialize(
    bytes: &[u8],
    symbolic: Option<SyntheticRef>,
    len: u32,
) -> std::borrow::Cow<'_, [u8]> {
    match symbolic {
        Some(r) if bytes.is_empty() => {
            let mut v = vec![0; len as usize];
            verbs::memory::fill_pattern(r.seed, r.offset, &mut v);
            std::borrow::Cow::Owned(v)
        }
        _ => std::borrow::Cow::Borrowed(bytes),
    }
}

/// Maps a transport outcome to its work-completion status (profile differences are decided
/// where the outcome arises: gather errors and receive errors ask the verbs profile).
fn wc_status(s: ReqStatus) -> WcStatus {
    match s {
        ReqStatus::Success => WcStatus::Success,
        ReqStatus::RemoteInvalidRequest => WcStatus::RemInvReqErr,
        ReqStatus::RemoteAccess => WcStatus::RemAccessErr,
        ReqStatus::RemoteOperational => WcStatus::RemOpErr,
        ReqStatus::RetryExceeded => WcStatus::RetryExcErr,
        ReqStatus::RnrRetryExceeded => WcStatus::RnrRetryExcErr,
        ReqStatus::BadResponse => WcStatus::BadRespErr,
        ReqStatus::LocalProtection => WcStatus::LocProtErr,
        ReqStatus::LocalQpOperation => WcStatus::LocQpOpErr,
    }
}

/// The responder's view of a host's verbs state.
struct VerbsEnv<'a> {
    ctx: &'a mut Context,
    qpn: QpNum,
    pending_fail: Option<ScatterError>,
    /// Successful receives whose CQE the NIC writes after the payload (see `take_recv`).
    taken: Vec<verbs::TakenRecv>,
    /// UD: the GRH area put before a datagram (20 zero bytes, then the IPv4 header).
    grh: [u8; 40],
    /// The current packet's payload, when it travels as a reference to synthetic memory.
    symbolic: Option<SyntheticRef>,
}

impl ResponderEnv for VerbsEnv<'_> {
    fn qp_allows(&self, op: RemoteOp) -> bool {
        let need = match op {
            RemoteOp::Write => AccessFlags::REMOTE_WRITE,
            RemoteOp::Read => AccessFlags::REMOTE_READ,
            RemoteOp::Atomic => AccessFlags::REMOTE_ATOMIC,
        };
        self.ctx
            .query_qp(self.qpn)
            .is_ok_and(|(a, _)| a.qp_access_flags.contains(need))
    }
    fn check_rkey(&mut self, rkey: u32, va: u64, len: u64, op: RemoteOp) -> bool {
        let op = match op {
            RemoteOp::Write => verbs::transport::RemoteOp::Write,
            RemoteOp::Read => verbs::transport::RemoteOp::Read,
            RemoteOp::Atomic => verbs::transport::RemoteOp::Atomic,
        };
        self.ctx
            .responder_check(self.qpn, op, rkey, va, len)
            .is_ok()
    }
    fn start_recv(&mut self) -> bool {
        self.ctx.recv_head(self.qpn).is_ok_and(|w| w.is_some())
    }
    fn place_recv(&mut self, offset: u64, len: u64, data: &[u8]) -> Result<(), RecvFailure> {
        let data = materialize(data, self.symbolic, len as u32);
        match self.ctx.scatter_recv(self.qpn, offset, &data) {
            Ok(()) => Ok(()),
            Err(e) => {
                let why = if matches!(e, ScatterError::TooLong { .. }) {
                    RecvFailure::TooLong
                } else {
                    RecvFailure::BadWqe
                };
                self.pending_fail = Some(e);
                Err(why)
            }
        }
    }
    fn finish_recv(
        &mut self,
        byte_len: u64,
        imm: Option<u32>,
        write_with_imm: bool,
        solicited: bool,
    ) {
        let c = RecvCompletion {
            status: WcStatus::Success,
            opcode: if write_with_imm {
                WcOpcode::RecvRdmaWithImm
            } else {
                WcOpcode::Recv
            },
            byte_len: byte_len.min(u32::MAX as u64) as u32,
            imm_data: imm,
            src_qp: None,
            grh: false,
            solicited,
        };
        if let Ok(t) = self.ctx.take_recv(self.qpn, c) {
            self.taken.push(t);
        }
    }
    fn ud_grh(&self) -> [u8; 40] {
        self.grh
    }
    fn finish_ud_recv(&mut self, byte_len: u64, imm: Option<u32>, src_qp: u32, solicited: bool) {
        let c = RecvCompletion {
            status: WcStatus::Success,
            opcode: WcOpcode::Recv,
            byte_len: byte_len.min(u32::MAX as u64) as u32,
            imm_data: imm,
            src_qp: Some(QpNum::masked(src_qp)),
            grh: true,
            solicited,
        };
        if let Ok(t) = self.ctx.take_recv(self.qpn, c) {
            self.taken.push(t);
        }
    }
    fn fail_recv(&mut self, why: RecvFailure) {
        let profile = self.ctx.profile();
        let status = match self.pending_fail.take() {
            Some(e) => e.recv_status(profile),
            None if why == RecvFailure::TooLong => WcStatus::LocLenErr,
            None => WcStatus::LocProtErr,
        };
        let c = RecvCompletion {
            status,
            ..RecvCompletion::recv(0)
        };
        let _ = self.ctx.complete_recv(self.qpn, c);
    }
    fn place_recv_at(
        &mut self,
        index: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), RecvFailure> {
        let data = materialize(data, self.symbolic, len as u32);
        self.ctx
            .scatter_recv_at(self.qpn, index as usize, offset, &data)
            .map_err(|_| RecvFailure::BadWqe)
    }
    fn write_remote(&mut self, va: u64, len: u64, data: &[u8]) {
        let _ = match self.symbolic {
            Some(r) if data.is_empty() => self.ctx.memory_mut().write_ref(va, r, len),
            _ => self.ctx.memory_mut().write(va, data),
        };
    }
    fn atomic(&mut self, va: u64, compare_swap: Option<(u64, u64)>, add: u64) -> u64 {
        let op = match compare_swap {
            Some((compare, swap)) => AtomicOp::CmpAndSwp { compare, swap },
            None => AtomicOp::FetchAndAdd { add },
        };
        // The rkey was checked by check_rkey just before; read-modify-write the memory.
        let orig = self.ctx.memory().read_u64(va).unwrap_or(0);
        let new = match op {
            AtomicOp::CmpAndSwp { compare, swap } => {
                if orig == compare {
                    swap
                } else {
                    orig
                }
            }
            AtomicOp::FetchAndAdd { add } => orig.wrapping_add(add),
        };
        let _ = self.ctx.memory_mut().write_u64(va, new);
        orig
    }
}

/// The 40-byte GRH area RoCEv2 puts before a UD datagram in the receive buffer: 20 zero
/// bytes, then the packet's IPv4 header (version 4, IHL 5, total length, TTL 64, UDP, the
/// two addresses; the checksum left 0).
fn ud_grh(src: [u8; 4], dst: [u8; 4], payload_len: u32) -> [u8; 40] {
    let mut g = [0u8; 40];
    let total = (20 + 8 + 12 + 8 + payload_len + 4).min(u16::MAX as u32) as u16;
    g[20] = 0x45;
    g[22..24].copy_from_slice(&total.to_be_bytes());
    g[28] = 64;
    g[29] = 17;
    g[32..36].copy_from_slice(&src);
    g[36..40].copy_from_slice(&dst);
    g
}

/// One side of a connected RC QP.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Endpoint {
    /// Host ordinal.
    pub host: u32,
    /// Its protection domain.
    pub pd: verbs::PdHandle,
    /// Its completion queue (send and receive).
    pub cq: verbs::CqHandle,
    /// The QP.
    pub qpn: QpNum,
}

/// How [`World::connect_rc`] sets the QPs up.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RcOptions {
    /// Path MTU.
    pub mtu: verbs::types::Mtu,
    /// Local ACK timeout exponent.
    pub timeout: u8,
    /// Retries after timeouts and sequence NAKs.
    pub retry_cnt: u8,
    /// Retries after RNR NAKs (7 = forever).
    pub rnr_retry: u8,
    /// RNR timer code.
    pub min_rnr_timer: u8,
    /// READ/atomics in flight per QP, both directions.
    pub rd_atomic: u8,
    /// Remote access the QPs grant.
    pub access: AccessFlags,
    /// Queue sizes.
    pub cap: verbs::qp::QpCap,
    /// CQ entries.
    pub cqe: u32,
}

impl Default for RcOptions {
    fn default() -> Self {
        RcOptions {
            mtu: verbs::types::Mtu::Mtu4096,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            rd_atomic: 16,
            access: AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_READ
                | AccessFlags::REMOTE_ATOMIC,
            cap: verbs::qp::QpCap {
                max_send_wr: 1024,
                max_recv_wr: 1024,
                max_send_sge: 4,
                max_recv_sge: 4,
                max_inline_data: 256,
            },
            cqe: 4096,
        }
    }
}

impl World {
    /// Creates a PD, a CQ and an RC QP on hosts `a` and `b` and brings both QPs to RTS
    /// connected to each other: RESET→INIT, the out-of-band exchange over a TCP connection
    /// ([`World::exchange`]), then INIT→RTR→RTS with the masks IBTA requires.
    /// The two hosts set up side by side ([`World::in_parallel`]): each host's calls run in
    /// order on its own application thread, and the exchange waits for both.
    pub fn connect_rc(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        self.connect_rc_with_channels(a, b, o, [None, None])
    }

    /// [`World::connect_rc`] whose CQ on host `a` (`channels[0]`) or `b` (`channels[1]`)
    /// reports to a completion channel created beforehand.
    pub fn connect_rc_with_channels(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
        channels: [Option<verbs::types::ChannelHandle>; 2],
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        self.in_parallel(|w| w.connect_rc_now(a, b, o, channels))
    }

    fn connect_rc_now(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
        channels: [Option<verbs::types::ChannelHandle>; 2],
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        use verbs::types::{AhAttr, Gid, QpState, QpType};
        if a >= self.host_count() || b >= self.host_count() {
            return Err(WorldError::NoHost(a.max(b)));
        }
        let mut ends = Vec::new();
        for (h, channel) in [a, b].into_iter().zip(channels) {
            let pd = self.state.hosts[h as usize].verbs.alloc_pd()?;
            let (cq, _) = self.create_cq(h, o.cqe, channel)?;
            let init = verbs::qp::QpInitAttr {
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                cap: o.cap,
                sq_sig_all: false,
            };
            let qpn = self.create_qp(h, pd, &init)?.qpn;
            ends.push(Endpoint {
                host: h,
                pd,
                cq,
                qpn,
            });
        }
        for me in [ends[0], ends[1]] {
            let init = QpAttr {
                qp_state: QpState::Init,
                qp_access_flags: o.access,
                port_num: 1,
                ..QpAttr::default()
            };
            self.modify_qp(
                me.host,
                me.qpn,
                &init,
                QpAttrMask::STATE
                    | QpAttrMask::PKEY_INDEX
                    | QpAttrMask::PORT
                    | QpAttrMask::ACCESS_FLAGS,
            )?;
        }
        // Each side's QPN, first PSN and GID cross a TCP connection before RTR; the RTR
        // attributes come from the bytes each side read. connect_rc registers no buffer, so
        // rkey and address are zero here (applications send theirs in the same message).
        let info = |w: &World, e: &Endpoint| ConnInfo {
            qpn: e.qpn.get(),
            psn: 0,
            gid: w.local_gid(e.host).0,
            ..ConnInfo::default()
        };
        let infos = [info(self, &ends[0]), info(self, &ends[1])];
        let (a_learned, b_learned) = self.exchange_conn_info(a, b, infos)?;
        for (me, peer) in [(ends[0], a_learned), (ends[1], b_learned)] {
            let mut ah_attr = AhAttr::roce(Gid(peer.gid));
            ah_attr.grh.sgid_index = self.state.hosts[me.host as usize].sgid_index;
            let rtr = QpAttr {
                qp_state: QpState::Rtr,
                ah_attr,
                path_mtu: o.mtu,
                dest_qp_num: peer.qpn,
                rq_psn: peer.psn,
                max_dest_rd_atomic: o.rd_atomic,
                min_rnr_timer: o.min_rnr_timer,
                ..QpAttr::default()
            };
            self.modify_qp(
                me.host,
                me.qpn,
                &rtr,
                QpAttrMask::STATE
                    | QpAttrMask::AV
                    | QpAttrMask::PATH_MTU
                    | QpAttrMask::DEST_QPN
                    | QpAttrMask::RQ_PSN
                    | QpAttrMask::MAX_DEST_RD_ATOMIC
                    | QpAttrMask::MIN_RNR_TIMER,
            )?;
        }
        for me in [ends[0], ends[1]] {
            let rts = QpAttr {
                qp_state: QpState::Rts,
                timeout: o.timeout,
                retry_cnt: o.retry_cnt,
                rnr_retry: o.rnr_retry,
                sq_psn: 0,
                max_rd_atomic: o.rd_atomic,
                ..QpAttr::default()
            };
            self.modify_qp(
                me.host,
                me.qpn,
                &rts,
                QpAttrMask::STATE
                    | QpAttrMask::TIMEOUT
                    | QpAttrMask::RETRY_CNT
                    | QpAttrMask::RNR_RETRY
                    | QpAttrMask::SQ_PSN
                    | QpAttrMask::MAX_QP_RD_ATOMIC,
            )?;
        }
        Ok((ends[0], ends[1]))
    }
}
