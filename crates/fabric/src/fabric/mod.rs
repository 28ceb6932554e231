//! The fabric as one event-driven model: ports, links, switches and host NICs.
//!
//! # What happens to a frame
//! A sender's frame waits in its port's egress queue for its priority. When the port is free,
//! not paused for that priority and the scheduler picks it, the frame is *dequeued*: the port
//! is busy for the frame's serialization time (frame + 20 B preamble/IFG at the link rate) and
//! the frame's last bit *arrives* at the far port one propagation delay after it left. A frame
//! lost on the link (corruption, burst, rule) is dropped on arrival, as a failed FCS would be.
//!
//! At a switch, an arriving frame is routed (ECMP over equal-cost ports), admitted to the shared
//! buffer or dropped, counted against its ingress port and priority for PFC, possibly ECN-marked
//! by its egress queue, and queued. It may leave after the switch latency: counted from its first
//! bit with cut-through (if the egress port is idle), from its last bit with store-and-forward.
//! Its buffer is released when it is dequeued.
//!
//! # PFC
//! When a lossless priority's ingress count at a port reaches XOFF, the switch sends a PAUSE
//! with `pause_quanta` out of that port ahead of any data; while the count stays above XON it
//! refreshes the pause every half pause time; when the count falls to XON it sends a RESUME
//! (zero quanta). A port that receives a PAUSE stops starting frames of those priorities after
//! its response time, until the pause expires or a RESUME arrives; the frame on the wire always
//! finishes. PAUSE frames are real 64-byte frames on the link and take their serialization time.
//!
//! # PFC failure modes
//! A host can stop draining ([`Fabric::stall_host`]): from then on its NIC sends PAUSE on every
//! lossless priority and refreshes it for ever, as a NIC whose receive buffer filled behind a
//! stuck PCIe link or driver does; the pause spreads upstream through the ordinary XOFF code
//! (a PFC storm). Lossless traffic whose paths close a cycle (a ring) can stop for good: each
//! switch's ingress count stays above XON because its frames wait behind the next switch's
//! pause (a PFC deadlock). A switch may run a PFC watchdog ([`crate::PfcWatchdog`]): an egress queue
//! paused without a break for `detect` while holding frames is in a storm; the watchdog drops
//! what it holds and whatever joins it (`DropReason::Watchdog`), ignores its pauses, and trusts
//! it again once no PAUSE has arrived for `restore`. A switch port may also have an MTU: longer
//! frames are dropped (`DropReason::Oversize`).
//!
//! # Lesson ⑤'s congestion draw
//! With probability `congestion_drop` an arriving frame "would overflow the buffer". On a lossy
//! priority it is dropped. On a lossless priority the frame is admitted, and the draw stands for a
//! burst of cross traffic just large enough to push its ingress count one frame past XOFF: those
//! phantom bytes drain at the link rate (a [`PHANTOM_CHUNK`] at a time, so the count falls as a
//! real queue's would and XON is crossed when a real burst would cross it), so the ordinary PFC
//! code sends a real PAUSE upstream and a RESUME once the count falls to XON.
//!
//! # Where each part lives
//! This file holds the state (ports, queues, counters, events) and the public API; the
//! mechanisms are `impl Fabric` blocks of their own: `build` (construction and validation),
//! `ports` (a frame onto the wire, its arrival and delivery, the egress scheduler, drops),
//! `switch` (routing, admission, ECN, queueing), `pfc_ctl` (XOFF/XON, PAUSE sent and obeyed,
//! storms and the watchdog; the headroom formula is `crate::pfc`), `flows` (raw flows) and
//! `prefetch` (cache prefetches for the event after next).
//!
//! # Simplifications and what they cost
//! - Admission: lossless frames may use the whole buffer; lossy frames the buffer minus the PFC
//!   headroom reserved for every lossless ingress (port, priority), and at most
//!   `queue_cap_bytes` per egress queue. No dynamic (alpha) thresholds: an oversubscribed
//!   buffer can drop lossless frames, counted as `lossless_overflow` drops.
//! - XOFF/XON are static per (port, priority); there is no shared-pool-triggered pause.
//! - ECN marks from the instantaneous egress queue depth (RED without averaging), at enqueue as
//!   DCQCN-era switches do, or at dequeue by the depth a frame leaves behind when
//!   [`EcnConfig::on_dequeue`](crate::EcnConfig::on_dequeue) is set.
//! - Hosts accept everything they receive: host receive buffers and PFC from hosts belong to
//!   the host model, except a stalled host ([`Fabric::stall_host`]), which pauses for ever.
//! - The PFC watchdog looks once per pause interval, one detection time after it began (and
//!   again while the queue is empty), rather than polling every queue on a timer as SONiC's
//!   `pfcwd` does; in a storm any PAUSE or RESUME that arrives postpones the restore.
//! - Pause durations ([`Fabric::pause_time`]) count from when a pause takes
//!   effect (after the response time) to when it expires or a RESUME arrives.

use crate::body::Body;
use crate::config::{
    ConfigError, FabricConfig, Forwarding, L2_BYTES, LinkConfig, PREAMBLE_IFG_BYTES, Scheduling,
};
use crate::loss::LossState;
use crate::packet::{
    Ecn, EtherType, FiveTuple, InFlight, MIN_FRAME_BYTES, Packet, PacketHandle, PacketSpec,
    Payload, RAW_FRAME_OVERHEAD, host_ip,
};
use crate::pfc::headroom_bytes;
use crate::routing::{Routes, ecmp_pick};
use crate::topology::{NodeKind, Topology};
use engine::{
    Arena, DropReason, Model, PacketClass, PacketStage, Rng, RngStreams, Scheduler, Step, StreamId,
    Tie, TraceRecord, Tracer,
};
use std::cell::Cell;
use std::collections::VecDeque;
use units::{
    Bandwidth, ByteLen, FlowId, LinkId, NodeId, PortId, Priority, Probability, SimDuration, SimTime,
};
use wire::pfc::pause_duration;

mod build;
mod flows;
mod pfc_ctl;
mod ports;
mod prefetch;
mod share;
mod switch;
pub use share::{Crossing, Joined};

/// Bytes of a congestion draw's phantom burst drained per step: one 4 KiB frame, so the
/// ingress count falls at the link rate in frame-sized steps rather than all at once.
pub const PHANTOM_CHUNK: u32 = 4096;

/// Sees every frame as it starts onto a wire, e.g. to write a pcap. The fabric carries no
/// bytes; a tap that wants them builds the frame from the packet's fields (the `wire` crate
/// emits every header the fabric carries).
pub trait Tap: std::any::Any + Send {
    /// `pkt` started leaving `node`'s `port` at `at` (its first bit).
    fn on_transmit(&mut self, at: SimTime, node: NodeId, port: PortId, pkt: &Packet);
}

/// A frame captured as it started onto a wire: (first-bit time, node, port, packet).
pub type Captured = (SimTime, NodeId, PortId, Packet);

/// A transport frame leaving the fabric: delivered to a host, or lost on the way.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Delivery {
    /// The frame reached host `node`. The fabric holds it until the host's model takes it
    /// with [`Fabric::take_held`] (a NIC pipeline later), so the packet is not copied out
    /// and back in meanwhile.
    Arrived(NodeId, PacketHandle),
    /// The frame was dropped (its sender may free its payload bytes); held like an arrived
    /// one until [`Fabric::take_held`].
    Dropped(PacketHandle),
}

/// The events the fabric schedules for itself.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum FabricEvent {
    /// A frame's last bit reached `port` (a global port index).
    Arrive {
        /// Receiving port.
        port: u32,
        /// The frame.
        pkt: PacketHandle,
    },
    /// A raw flow starts sending.
    FlowStart {
        /// Index into the fabric's flows.
        flow: u32,
    },
    /// One chunk ([`PHANTOM_CHUNK`]) of a congestion draw's phantom bytes has drained from an
    /// ingress count; the next chunk is scheduled one serialization time later.
    PhantomDrain {
        /// The ingress port.
        port: u32,
        /// The priority.
        prio: u8,
        /// Phantom bytes of this draw still counted (this chunk included).
        bytes: u32,
    },
    /// Time to re-send a PAUSE that is still needed.
    PfcRefresh {
        /// The ingress port that is pausing its upstream.
        port: u32,
        /// The priority.
        prio: u8,
        /// Pause epoch; stale refreshes are ignored.
        generation: u32,
    },
    /// `port` finished serializing a frame.
    TxDone {
        /// The port.
        port: u32,
    },
    /// The PFC watchdog looks at a paused egress queue.
    WatchdogCheck {
        /// The port.
        port: u32,
        /// The priority.
        prio: u8,
    },
    /// The PFC watchdog considers ending a storm.
    WatchdogRestore {
        /// The port.
        port: u32,
        /// The priority.
        prio: u8,
    },
    /// A host stops draining its receive buffer ([`Fabric::stall_host`]).
    HostStall {
        /// The host's port.
        port: u32,
    },
    /// Something blocked at `port` (a pause or a not-yet-ready frame) may now be sendable.
    Wake {
        /// The port.
        port: u32,
    },
}

/// Ties at one instant (the scheduler's canonical order, `engine::sched`): a frame arriving
/// over a link waits for the work of the instant on the receiving side (tie 0, first in,
/// first out) and goes by its port's global index; the arrivals at one port are all its one
/// peer's, in the order it sent them. A link is the only way one node's work reaches
/// another's, so this is what keeps the order independent of which node worked first.
impl Tie for FabricEvent {
    #[inline]
    fn tie(&self) -> u64 {
        match *self {
            FabricEvent::Arrive { port, .. } => u64::from(port) + 1,
            _ => 0,
        }
    }
}

/// Counters of one port (`repr(C)`: the per-frame ones first, beside the port's hot fields).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
#[repr(C)]
pub struct PortStats {
    /// Frames sent (data and control).
    pub tx_frames: u64,
    /// Frame bytes sent (no preamble/IFG).
    pub tx_bytes: u64,
    /// Frames received (before loss).
    pub rx_frames: u64,
    /// Highest egress queue depth per priority (bytes).
    pub peak_queue: [u64; 8],
    /// PAUSE frames with non-zero quanta sent.
    pub pauses_sent: u64,
    /// RESUME frames (zero quanta) sent.
    pub resumes_sent: u64,
    /// PFC frames received.
    pub pfc_received: u64,
    /// Highest ingress count above XOFF seen per priority (bytes; 0 if never above).
    pub peak_over_xoff: [u64; 8],
}

/// A port's watchdog counts ([`Fabric::pfc_stats`]), and the pause times behind
/// [`Fabric::pause_time`].
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct PfcStats {
    /// Time this port's egress was held by PAUSE frames per priority, ps, over the intervals
    /// a later PAUSE closed (read the whole with [`Fabric::pause_time`]).
    rx_pause_ps: [u64; 8],
    /// Time this port spent asking its peer to pause per priority (XOFF until XON), ps, over
    /// the intervals that have ended (read the whole with [`Fabric::pause_time`]).
    tx_pause_ps: [u64; 8],
    /// Frames the PFC watchdog dropped from this port's egress queues.
    pub watchdog_drops: u64,
    /// Storms the PFC watchdog detected on this port.
    pub watchdog_storms: u64,
}

/// What no frame reads of a port's PFC state: the times behind the pause durations and the
/// watchdog, and their counts. Kept beside the ports, not in them, so a frame's hop touches
/// the same cache lines with or without them.
#[derive(Clone, Debug, Default)]
struct PfcSide {
    prio: [PrioPfc; 8],
    stats: PfcStats,
}

/// One priority's part of [`PfcSide`].
#[derive(Clone, Copy, Debug, Default)]
struct PrioPfc {
    /// Since when the egress has been paused without a break (`SimTime::MAX`: not paused).
    paused_since: SimTime,
    /// In a storm: when the last PAUSE arrived.
    last_pause_rx: SimTime,
    /// Since when this port has been asking its peer to pause (while `pausing`).
    pausing_since: SimTime,
}

/// Fabric-wide counters.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Counters {
    /// Frames handed to hosts.
    pub delivered_frames: u64,
    /// Frame bytes handed to hosts.
    pub delivered_bytes: u64,
    /// Drops because the buffer or queue was full on a lossy priority.
    pub drops_buffer: u64,
    /// Drops of lossless frames because the whole buffer was full (a misconfigured buffer).
    pub drops_lossless_overflow: u64,
    /// Drops from the congestion-drop draw (lossless off).
    pub drops_congestion: u64,
    /// Drops from corruption on links.
    pub drops_corruption: u64,
    /// Drops from burst loss on links.
    pub drops_burst: u64,
    /// Drops from deterministic rules.
    pub drops_rule: u64,
    /// Drops for lack of a route.
    pub drops_no_route: u64,
    /// Drops of frames longer than a switch port's MTU.
    pub drops_oversize: u64,
    /// Drops of frames that are not IP (RoCE v1) at a routed switch.
    pub drops_not_ip: u64,
    /// Drops by the PFC watchdog.
    pub drops_watchdog: u64,
    /// Storms the PFC watchdog detected.
    pub watchdog_storms: u64,
    /// When the PFC watchdog first detected one.
    pub first_watchdog_storm: Option<SimTime>,
    /// Frames marked CE.
    pub ecn_marks: u64,
    /// Congestion draws turned into PFC pressure (lossless on).
    pub congestion_draws_paused: u64,
    /// PAUSE frames sent (non-zero quanta).
    pub pauses_sent: u64,
    /// RESUME frames sent.
    pub resumes_sent: u64,
    /// Highest shared-buffer use of any switch.
    pub peak_buffer_bytes: u64,
    /// Every drop, whatever the reason, by the frame's priority (a switch's per-queue discard
    /// counters).
    pub drops_by_priority: [u64; 8],
}

impl Counters {
    /// Every drop, whatever the reason.
    pub fn drops(&self) -> u64 {
        self.drops_buffer
            + self.drops_lossless_overflow
            + self.drops_congestion
            + self.drops_corruption
            + self.drops_burst
            + self.drops_rule
            + self.drops_oversize
            + self.drops_not_ip
            + self.drops_watchdog
            + self.drops_no_route
    }
}

/// A fabric-only flow: `bytes` of payload from `src` to `dst` in frames of at most
/// `payload_mtu` bytes, sent by the NIC at line rate (subject to PFC) from `start`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RawFlow {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes to deliver.
    pub bytes: u64,
    /// Largest payload per frame.
    pub payload_mtu: u32,
    /// Priority it travels in.
    pub priority: Priority,
    /// When it starts.
    pub start: SimTime,
    /// Whether frames are sent ECT(0).
    pub ecn_capable: bool,
}

/// How a raw flow ended.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct FlowResult {
    /// The flow.
    pub flow: FlowId,
    /// When it started.
    pub start: SimTime,
    /// When its last byte arrived, if every byte did.
    pub finish: Option<SimTime>,
    /// Payload bytes delivered.
    pub delivered: u64,
    /// Frames sent.
    pub frames_sent: u64,
    /// Frames the fabric dropped (raw flows are not retransmitted: their bytes are lost).
    pub frames_dropped: u64,
}

/// A queued frame, with what its dequeue needs (length, the switch port it entered by), so
/// that sending it reads no packet descriptor: on a large fabric that read is a cache miss.
#[derive(Clone, Copy, Debug)]
struct QEntry {
    pkt: PacketHandle,
    len: u32,
    /// Global index of the port it entered the switch by, for buffer accounting (`u32::MAX`
    /// at a host).
    in_port: u32,
    ready_at: SimTime,
}

/// One end of a link. `repr(C)` so the fields every frame touches (clock, peer, link, the
/// loss check, the control queue, the frame counters) share the first cache lines; on a large
/// fabric each port is cold when a frame reaches it, and every line touched is a miss.
#[repr(C)]
struct Port {
    // Read or written on every frame.
    free_at: SimTime,
    wake_at: SimTime,
    prop: SimDuration,
    /// Picoseconds per byte when that is an integer (it is for every standard Ethernet
    /// rate), so the hot path multiplies instead of dividing in 128 bits.
    ps_per_byte: Option<u64>,
    node: NodeId,
    peer: u32,
    link: LinkId,
    local: PortId,
    /// Bit p set when `prio[p].queue` is non-empty: lets the scheduler skip idle priorities.
    backlogged: u8,
    rr: u8,
    /// A `TxDone` event is scheduled for `free_at`. Switch ports skip it when nothing waits
    /// behind the frame: a frame arriving later finds the port free by its clock.
    tx_done_pending: bool,
    /// Bit p set while the PFC watchdog holds priority p in a storm: frames for it are
    /// dropped instead of queued.
    storming: u8,
    /// Boxed: one pointer in the hot line, the state (only on lossy links) elsewhere.
    loss: Option<Box<LossState>>,
    control: VecDeque<PacketHandle>,
    stats: PortStats,
    // Rarely read.
    bw: Bandwidth,
    headroom: u64,
    /// Per priority: its egress queue and its ingress and PFC state, kept together so that a
    /// frame's hop touches one priority's cache lines, not eight arrays'.
    prio: [Prio; 8],
}

/// One priority of a port (egress fields first: the queue and its bytes share a line).
#[derive(Default)]
#[repr(C)]
struct Prio {
    // egress
    queue: VecDeque<QEntry>,
    qbytes: u64,
    pause_from: SimTime,
    paused_until: SimTime,
    deficit: u64,
    // ingress
    ingress: u64,
    phantom: u64,
    pfc_gen: u32,
    pausing: bool,
}

impl Port {
    /// Frames waiting in all priorities. Reads only the non-empty ones (`backlogged`): a
    /// host port usually has one, and each priority is its own cache lines.
    #[inline]
    fn queued(&self) -> usize {
        let mut b = self.backlogged;
        let mut n = 0;
        while b != 0 {
            n += self.prio[b.trailing_zeros() as usize].queue.len();
            b &= b - 1;
        }
        n
    }

    #[inline]
    fn paused(&self, prio: usize, now: SimTime) -> bool {
        let q = &self.prio[prio];
        q.pause_from <= now && now < q.paused_until
    }
}

struct SwitchState {
    node: NodeId,
    ordinal: usize,
    salt: u32,
    buffer_used: u64,
    shared_limit: u64,
    ecn_rng: Rng,
    draw_rng: Rng,
}

struct HostState {
    port: u32,
    /// Raw flows with frames left to send, served round-robin.
    active: VecDeque<u32>,
}

enum Role {
    Host(u32),
    Switch(u32),
}

struct NodeState {
    role: Role,
    first_port: u32,
}

struct FlowState {
    spec: RawFlow,
    id: FlowId,
    sent: u64,
    frames_sent: u64,
    frames_dropped: u64,
    delivered: u64,
    finish: Option<SimTime>,
    tuple_hash: u32,
}

/// The simulated network.
pub struct Fabric {
    config: FabricConfig,
    links: Vec<LinkConfig>,
    nodes: Vec<NodeState>,
    ports: Vec<Port>,
    switches: Vec<SwitchState>,
    hosts: Vec<HostState>,
    routes: Routes,
    /// Packets in flight, as their hop-by-hop descriptors.
    packets: Arena<InFlight>,
    /// Per arena slot: when the packet's first bit reached its current node (cut-through
    /// needs it). Beside the arena rather than in it, so the hop that writes it does not read
    /// the descriptor's cache line: a frame leaving a queue only stores here, where a field of
    /// the descriptor would first load its cold line (kept in the descriptor, the 1024-host
    /// run had fewer simulated misses but ran 5–10% slower).
    head_at: Vec<SimTime>,
    /// Their payloads, read only when a packet is delivered, dropped or observed. A packet's
    /// payload sits in the slot of its own index: the two arenas insert and remove together,
    /// so their free lists stay the same, and a prefetch for a packet can ask for its payload
    /// without reading the descriptor first.
    bodies: Arena<Body>,
    /// Payloads with no compact [`Body`], whole.
    other_bodies: Arena<Payload>,
    /// Frames each node has made so far (by node index): a frame's uid counts at its sender
    /// ([`Packet::uid`]), so a partition of the fabric numbers its frames alone.
    made: Vec<u64>,
    flows: Vec<FlowState>,
    flows_done: usize,
    inbox: VecDeque<Delivery>,
    host_wakeups: Vec<NodeId>,
    capture: Option<(crate::capture::CaptureAt, Vec<Captured>)>,
    /// Per port (global index): its PFC times and watchdog state, read by no frame.
    pfc_side: Vec<PfcSide>,
    /// The routes found by the last two arrivals' prefetches ([`Fabric::prefetch_event_near`]),
    /// for their hop to take instead of routing again: a route is a function of (switch,
    /// destination, 5-tuple hash) alone, so a remembered one is always right.
    route_memo: Cell<[RouteMemo; 2]>,
    /// Egress queues the PFC watchdog holds in a storm (set `storming` bits over all ports):
    /// while there are none, a hop does not read its egress port's bits.
    storming_queues: u32,
    counters: Counters,
    tracer: Tracer,
    tap: Option<Box<dyn Tap>>,
    max_frame_bytes: u64,
    /// The first frame a host port refused as longer than its MTU, for the message that
    /// explains the drops ([`Fabric::oversize`]).
    oversize: Option<OversizeDrop>,
    /// This fabric's share of a partitioned run, when it is one (`share.rs`).
    share: Option<Box<share::Share>>,
}

/// A frame a host port refused because it is longer than the port's MTU allows.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct OversizeDrop {
    /// The sending host.
    pub host: NodeId,
    /// The frame's length, bytes (Ethernet header to FCS).
    pub frame_bytes: u64,
    /// The port's IP MTU, bytes.
    pub mtu_bytes: u32,
}

impl std::fmt::Display for OversizeDrop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "host {}'s port dropped a {}-byte frame: its IP MTU is {} bytes (frames of at most {} bytes with Ethernet header, tag and FCS)",
            self.host.0,
            self.frame_bytes,
            self.mtu_bytes,
            self.mtu_bytes as u64 + L2_BYTES
        )
    }
}

/// The longest frame the fabric expects at its default MTU: a 4 KiB RoCEv2 payload with RETH
/// and a VLAN tag: 14 + 4 + 20 + 8 + 12 + 16 + 4096 + 4 (ICRC) + 4 (FCS) bytes
/// ([`crate::config::DEFAULT_PORT_MTU_BYTES`] + [`L2_BYTES`]); a port with a larger
/// [`FabricConfig::mtu_bytes`] takes longer ones.
/// source: research/verbs-spec.md §6 layout; research/figures.md §3 "4 KB RoCE frame".
pub const MAX_FRAME_BYTES: u64 = crate::config::DEFAULT_PORT_MTU_BYTES as u64 + L2_BYTES;

impl Fabric {
    /// Attaches a tracer (replacing any previous one).
    pub fn set_tracer(&mut self, tracer: Tracer) {
        self.tracer = tracer;
    }
    /// Attaches a tap that sees every frame put on a wire (replacing any previous one).
    pub fn set_tap(&mut self, tap: impl Tap) {
        self.tap = Some(Box::new(tap));
    }
    /// Detaches the tap and returns it as its concrete type (None if absent or another type).
    pub fn take_tap<T: Tap>(&mut self) -> Option<Box<T>> {
        let tap: Box<dyn std::any::Any> = self.tap.take()?;
        tap.downcast::<T>().ok()
    }
    /// The tracer, e.g. to take its observer back after a run.
    pub fn tracer_mut(&mut self) -> &mut Tracer {
        &mut self.tracer
    }
    /// Fabric-wide counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }
    /// The counters of `node`'s port `port`.
    pub fn port_stats(&self, node: NodeId, port: PortId) -> Option<&PortStats> {
        let ns = self.nodes.get(node.index())?;
        let gp = ns.first_port as usize + port.index();
        self.ports
            .get(gp)
            .filter(|p| p.node == node)
            .map(|p| &p.stats)
    }
    /// Every port as (node, port, link, stats).
    pub fn ports(&self) -> impl Iterator<Item = (NodeId, PortId, LinkId, &PortStats)> {
        self.ports
            .iter()
            .map(|p| (p.node, p.local, p.link, &p.stats))
    }
    /// Starts every port's peak egress queue afresh from what it holds now: a run that sets
    /// up first (connection exchanges) reports the peaks of its data phase only.
    pub fn restart_peak_queues(&mut self) {
        for p in &mut self.ports {
            for (peak, q) in p.stats.peak_queue.iter_mut().zip(&p.prio) {
                *peak = q.qbytes;
            }
        }
    }
    /// The PFC headroom (bytes) reserved for each lossless priority of `node`'s `port`.
    pub fn headroom(&self, node: NodeId, port: PortId) -> Option<u64> {
        let ns = self.nodes.get(node.index())?;
        self.ports
            .get(ns.first_port as usize + port.index())
            .map(|p| p.headroom)
    }
    /// Hosts in ordinal order.
    pub fn hosts(&self) -> Vec<NodeId> {
        self.hosts
            .iter()
            .map(|h| self.ports[h.port as usize].node)
            .collect()
    }
    /// The host ordinal of `node`, if it is a host.
    pub fn host_ordinal(&self, node: NodeId) -> Option<u32> {
        match self.nodes.get(node.index())?.role {
            Role::Host(o) => Some(o),
            Role::Switch(_) => None,
        }
    }
    /// Bytes the fabric's growing state holds, for a run's memory budget: the packet arenas'
    /// slots (descriptors and compact bodies, whole payloads for the rest) and the records its
    /// tracer keeps. Port queues hold handles into these arenas, so the slots count them.
    pub fn held_bytes(&self) -> u64 {
        let slots = |n: usize, each: usize| (n * each) as u64;
        slots(
            self.packets.capacity_slots(),
            std::mem::size_of::<InFlight>(),
        ) + slots(self.bodies.capacity_slots(), std::mem::size_of::<Body>())
            + slots(
                self.other_bodies.capacity_slots(),
                std::mem::size_of::<Payload>(),
            )
            + self.tracer.held_bytes()
    }
    /// Packets alive in the fabric right now, and the most ever alive at once (delivered
    /// frames count until their host takes them).
    pub fn packets_in_flight(&self) -> (usize, usize) {
        (self.packets.len(), self.packets.peak())
    }
    /// Link configurations by [`LinkId`].
    pub fn link(&self, id: LinkId) -> Option<&LinkConfig> {
        self.links.get(id.index())
    }
    /// The configuration the fabric was built with.
    pub fn config(&self) -> &FabricConfig {
        &self.config
    }

    /// Puts a frame on `host`'s NIC egress queue (for transports built on the fabric).
    pub fn send<E: From<FabricEvent> + Tie>(
        &mut self,
        host: NodeId,
        spec: PacketSpec,
        sched: &mut Scheduler<E>,
    ) -> Result<(), ConfigError> {
        let Some(Role::Host(h)) = self.nodes.get(host.index()).map(|n| &n.role) else {
            return Err(ConfigError::new("packet.src", host, "a host"));
        };
        if self.host_ordinal(spec.dst).is_none() {
            return Err(ConfigError::new("packet.dst", spec.dst, "a host"));
        }
        crate::config::check_range(
            "packet.len_bytes",
            spec.len_bytes as u64,
            MIN_FRAME_BYTES as u64,
            u64::from(u32::MAX),
        )?;
        let port = self.hosts[*h as usize].port;
        let now = sched.now();
        let len = spec.len_bytes as u64;
        let pkt = self.new_packet(host, spec, now);
        if len > self.max_frame_bytes {
            // Longer than the port's MTU: a recorded drop at the sender's own port (Linux
            // would refuse it in the driver), so its owner hears of it and frees its bytes.
            self.oversize.get_or_insert(OversizeDrop {
                host,
                frame_bytes: len,
                mtu_bytes: self.config.mtu_bytes,
            });
            self.drop_packet(port, pkt, DropReason::Oversize, now);
            return Ok(());
        }
        self.enqueue(port, pkt, u32::MAX, now, now);
        self.try_tx(port, sched);
        Ok(())
    }

    /// The first frame a host's port dropped as longer than its MTU, if any: the drops are
    /// counted in [`Counters::drops_oversize`] with the switches' MTU drops, and this says
    /// which MTU refused them.
    pub fn oversize(&self) -> Option<OversizeDrop> {
        self.oversize
    }

    /// Transport frames that reached a host or were lost, oldest first.
    pub fn take_delivered(&mut self) -> Option<Delivery> {
        self.inbox.pop_front()
    }

    /// Hosts whose NIC port finished a frame and has fewer than two frames queued: a NIC model
    /// feeds them more (the NIC pulls data just in time, as real NICs fetch WQEs and payload).
    pub fn take_host_wakeups(&mut self) -> std::vec::Drain<'_, NodeId> {
        self.host_wakeups.drain(..)
    }

    /// Whether [`Fabric::take_host_wakeups`] has hosts to give (after most events, none).
    #[inline]
    pub fn has_host_wakeups(&self) -> bool {
        !self.host_wakeups.is_empty()
    }

    /// Frames waiting in `host`'s NIC port queues (all priorities).
    pub fn host_backlog(&self, host: NodeId) -> usize {
        match self.nodes.get(host.index()).map(|n| &n.role) {
            Some(Role::Host(h)) => self.ports[self.hosts[*h as usize].port as usize].queued(),
            _ => 0,
        }
    }

    /// Starts keeping every frame put on a wire at the chosen ports, for
    /// [`drain_captured`](Self::drain_captured) (a pcap writer with access to payload bytes).
    pub fn enable_capture(&mut self, at: crate::capture::CaptureAt) {
        self.capture = Some((at, Vec::new()));
    }

    /// Frames captured since the last call: (first-bit time, node, port, packet).
    pub fn drain_captured(&mut self) -> Vec<Captured> {
        match &mut self.capture {
            Some((_, v)) => std::mem::take(v),
            None => Vec::new(),
        }
    }

    /// Processes one fabric event.
    pub fn handle<E: From<FabricEvent> + Tie>(
        &mut self,
        ev: FabricEvent,
        sched: &mut Scheduler<E>,
    ) {
        match ev {
            FabricEvent::Arrive { port, pkt } => self.arrive(port, pkt, sched),
            FabricEvent::TxDone { port } => {
                let p = &mut self.ports[port as usize];
                p.tx_done_pending = false;
                self.try_tx(port, sched);
                let p = &self.ports[port as usize];
                if let Role::Host(_) = self.nodes[p.node.index()].role
                    && p.queued() < 2
                {
                    self.host_wakeups.push(p.node);
                }
            }
            FabricEvent::Wake { port } => {
                let p = &mut self.ports[port as usize];
                if p.wake_at <= sched.now() {
                    p.wake_at = SimTime::MAX;
                }
                self.try_tx(port, sched);
            }
            FabricEvent::FlowStart { flow } => {
                let src = self.flows[flow as usize].spec.src;
                let Some(Role::Host(h)) = self.nodes.get(src.index()).map(|n| &n.role) else {
                    unreachable!("add_flow checked that the source is a host");
                };
                let h = *h as usize;
                self.hosts[h].active.push_back(flow);
                let port = self.hosts[h].port;
                self.try_tx(port, sched);
            }
            FabricEvent::PhantomDrain { port, prio, bytes } => {
                let p = &mut self.ports[port as usize];
                let d = bytes.min(PHANTOM_CHUNK);
                p.prio[prio as usize].phantom -= d as u64;
                let rest = bytes - d;
                if rest > 0 {
                    let next =
                        p.bw.serialization_time(ByteLen::new(rest.min(PHANTOM_CHUNK) as u64));
                    sched.schedule_in(
                        next,
                        FabricEvent::PhantomDrain {
                            port,
                            prio,
                            bytes: rest,
                        }
                        .into(),
                    );
                }
                self.check_xon(port, prio as usize, sched);
            }
            FabricEvent::WatchdogCheck { port, prio } => {
                self.watchdog_check(port, prio as usize, sched)
            }
            FabricEvent::WatchdogRestore { port, prio } => {
                let now = sched.now();
                let Some(wd) = self.config.switch.pfc_watchdog else {
                    return;
                };
                let pt = &mut self.ports[port as usize];
                if pt.storming & (1 << prio) == 0 {
                    return;
                }
                let side = &mut self.pfc_side[port as usize].prio[prio as usize];
                let quiet_at = side.last_pause_rx + wd.restore;
                if now >= quiet_at {
                    pt.storming &= !(1 << prio);
                    self.storming_queues -= 1;
                    side.paused_since = SimTime::MAX;
                    let q = &mut pt.prio[prio as usize];
                    q.paused_until = q.paused_until.min(now);
                    self.try_tx(port, sched);
                } else {
                    sched.schedule_at(quiet_at, FabricEvent::WatchdogRestore { port, prio }.into());
                }
            }
            FabricEvent::HostStall { port } => {
                let Some(pfc) = self.config.switch.pfc else {
                    return;
                };
                let now = sched.now();
                for prio in 0..8 {
                    if pfc.covers(prio as u8) && !self.ports[port as usize].prio[prio].pausing {
                        self.ports[port as usize].prio[prio].pausing = true;
                        self.pfc_side[port as usize].prio[prio].pausing_since = now;
                        self.send_pfc(port, prio, true, sched);
                    }
                }
            }
            FabricEvent::PfcRefresh {
                port,
                prio,
                generation,
            } => {
                let p = &self.ports[port as usize];
                if p.prio[prio as usize].pausing && p.prio[prio as usize].pfc_gen == generation {
                    self.send_pfc(port, prio as usize, true, sched);
                }
            }
        }
    }

    fn new_packet(&mut self, src: NodeId, spec: PacketSpec, now: SimTime) -> PacketHandle {
        let made = &mut self.made[src.index()];
        let uid = *made * self.nodes.len() as u64 + u64::from(src.0);
        *made += 1;
        self.store_packet(InFlight::new(uid, src, &spec, now), spec.payload, now)
    }

    /// Keeps a packet in the store: its descriptor and payload in slots of one index, and
    /// when its first bit reached the node it is at.
    fn store_packet(&mut self, desc: InFlight, payload: Payload, head_at: SimTime) -> PacketHandle {
        let body = self
            .bodies
            .insert(Body::pack(payload, &mut self.other_bodies));
        let h = self.packets.insert(desc);
        debug_assert_eq!(
            h.index(),
            body.index(),
            "payload and descriptor slots match"
        );
        let i = h.index() as usize;
        if i >= self.head_at.len() {
            self.head_at.resize(i + 1, head_at);
        }
        self.head_at[i] = head_at;
        h
    }

    /// Removes a packet from the fabric and puts it together again.
    fn take_packet(&mut self, pkt: PacketHandle) -> Packet {
        let d = self.packets.remove(pkt);
        let payload = self
            .bodies
            .remove(body_of(pkt))
            .take(&mut self.other_bodies);
        d.assemble(payload)
    }

    /// A copy of a packet still in the fabric, for observers (tap, capture).
    fn packet_copy(&self, pkt: PacketHandle) -> Packet {
        let d = self.packets.get(pkt);
        d.assemble(self.bodies.get(body_of(pkt)).copy(&self.other_bodies))
    }

    /// The global index of `node`'s `port`, if the node has that port.
    fn global_port(&self, node: NodeId, port: PortId) -> Option<usize> {
        let gp = self.nodes.get(node.index())?.first_port as usize + port.index();
        self.ports
            .get(gp)
            .is_some_and(|p| p.node == node)
            .then_some(gp)
    }

    /// The port of `node` cabled to `peer`, if one is.
    pub fn port_to(&self, node: NodeId, peer: NodeId) -> Option<PortId> {
        let n = self.nodes.get(node.index())?;
        self.ports[n.first_port as usize..]
            .iter()
            .take_while(|p| p.node == node)
            .find(|p| self.ports[p.peer as usize].node == peer)
            .map(|p| p.local)
    }

    /// Bytes waiting in `node`'s `port` egress queue for priority `prio` now.
    pub fn queue_bytes(&self, node: NodeId, port: PortId, prio: usize) -> u64 {
        self.global_port(node, port)
            .map_or(0, |gp| self.ports[gp].prio[prio & 7].qbytes)
    }
}

/// A route a prefetch found: (switch, destination node, 5-tuple hash) and the egress port.
#[derive(Clone, Copy, Debug)]
struct RouteMemo {
    key: (u32, u32, u32),
    out: u32,
}

impl RouteMemo {
    /// Matches no frame: no switch has this ordinal.
    const NONE: RouteMemo = RouteMemo {
        key: (u32::MAX, u32::MAX, u32::MAX),
        out: 0,
    };
}

/// Where packet `pkt`'s payload is kept (see [`Fabric`]'s `bodies`).
#[inline]
fn body_of(pkt: PacketHandle) -> engine::Handle<Body> {
    engine::Handle::from_index(pkt.index())
}

fn rng_salt(streams: RngStreams, ordinal: u64) -> u32 {
    streams
        .stream(StreamId::new("ecmp-salt", ordinal))
        .next_u32()
}

impl Model for Fabric {
    type Event = FabricEvent;
    fn prefetch(&self, next: &FabricEvent) {
        self.prefetch_event_near(next);
    }
    fn prefetch_ahead(&self, after_next: &FabricEvent) {
        self.prefetch_event(after_next);
    }
    fn handle(&mut self, ev: FabricEvent, sched: &mut Scheduler<FabricEvent>) -> Step {
        let had_flows = !self.flows.is_empty();
        Fabric::handle(self, ev, sched);
        // A partition's share cannot tell whether the other partitions' flows are done.
        if had_flows && self.share.is_none() && self.all_flows_done() {
            Step::Stop
        } else {
            Step::Continue
        }
    }
}
