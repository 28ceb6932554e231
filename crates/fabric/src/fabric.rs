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
    TraceRecord, Tracer,
};
use std::cell::Cell;
use std::collections::VecDeque;
use units::{
    Bandwidth, ByteLen, FlowId, LinkId, NodeId, PortId, Priority, Probability, SimDuration, SimTime,
};
use wire::pfc::pause_duration;

/// Bytes of a congestion draw's phantom burst drained per step: one 4 KiB frame, so the
/// ingress count falls at the link rate in frame-sized steps rather than all at once.
pub const PHANTOM_CHUNK: u32 = 4096;

/// Sees every frame as it starts onto a wire, e.g. to write a pcap. The fabric carries no
/// bytes; a tap that wants them builds the frame from the packet's fields (the `wire` crate
/// emits every header the fabric carries).
pub trait Tap: std::any::Any {
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
    next_uid: u64,
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
    /// Builds the fabric, checking every configuration value.
    pub fn new(topology: &Topology, config: FabricConfig) -> Result<Fabric, ConfigError> {
        config.validate()?;
        for l in &topology.links {
            l.config.validate()?;
            for end in [l.a, l.b] {
                if end.index() >= topology.nodes.len() {
                    return Err(ConfigError::new(
                        "topology.links",
                        end,
                        format!("node ids below {}", topology.nodes.len()),
                    ));
                }
            }
            if l.a == l.b {
                return Err(ConfigError::new(
                    "topology.links",
                    l.a,
                    "two different nodes",
                ));
            }
        }
        let streams = RngStreams::new(config.seed);
        let n = topology.nodes.len();
        // Assign ports per node in link order.
        let mut node_ports: Vec<Vec<(LinkId, u32 /*peer node*/, bool /*is a side*/)>> =
            vec![Vec::new(); n];
        for (i, l) in topology.links.iter().enumerate() {
            node_ports[l.a.index()].push((LinkId(i as u32), l.b.0, true));
            node_ports[l.b.index()].push((LinkId(i as u32), l.a.0, false));
        }
        let mut first_port = Vec::with_capacity(n);
        let mut total = 0u32;
        for ps in &node_ports {
            first_port.push(total);
            total += ps.len() as u32;
        }
        if let Some(bad) =
            (0..n).find(|&i| topology.nodes[i].kind == NodeKind::Host && node_ports[i].is_empty())
        {
            return Err(ConfigError::new(
                "topology.nodes",
                &topology.nodes[bad].name,
                "every host cabled to something",
            ));
        }
        if let Some(bad) = (0..n).find(|&i| node_ports[i].len() > u16::MAX as usize) {
            return Err(ConfigError::new(
                "topology.nodes",
                &topology.nodes[bad].name,
                "at most 65535 ports",
            ));
        }
        let response = config
            .switch
            .pfc
            .map(|p| p.response_time)
            .unwrap_or_default();
        let max_frame = config.max_frame_bytes();
        let mut ports = Vec::with_capacity(total as usize);
        for (ni, ps) in node_ports.iter().enumerate() {
            for (pi, &(link, peer_node, is_a)) in ps.iter().enumerate() {
                // The peer's port index: position of this link in the peer's list.
                let peer_local = node_ports[peer_node as usize]
                    .iter()
                    .position(|&(l, _, a)| l == link && a != is_a)
                    .expect("each link appears once at each end");
                let lc = &topology.links[link.index()].config;
                let loss = (!lc.loss.is_lossless()).then(|| {
                    Box::new(LossState::new(
                        streams.stream(StreamId::new(
                            "link-loss",
                            (link.0 as u64) << 1 | is_a as u64,
                        )),
                        &lc.loss,
                    ))
                });
                ports.push(Port {
                    node: NodeId(ni as u32),
                    local: PortId(pi as u16),
                    peer: first_port[peer_node as usize] + peer_local as u32,
                    link,
                    bw: lc.bandwidth,
                    ps_per_byte: (8_000_000_000_000u64.is_multiple_of(lc.bandwidth.bps()))
                        .then(|| 8_000_000_000_000 / lc.bandwidth.bps()),
                    prop: lc.propagation(),
                    prio: Default::default(),
                    backlogged: 0,
                    control: VecDeque::new(),
                    tx_done_pending: false,
                    storming: 0,
                    free_at: SimTime::ZERO,
                    rr: 0,
                    wake_at: SimTime::MAX,
                    headroom: headroom_bytes(lc, max_frame, response),
                    loss,
                    stats: PortStats::default(),
                });
            }
        }
        let mut nodes = Vec::with_capacity(n);
        let mut switches = Vec::new();
        let mut hosts = Vec::new();
        let mut host_nodes = Vec::new();
        let mut switch_nodes = Vec::new();
        let lossless_prios = config
            .switch
            .pfc
            .map(|p| p.priorities.count_ones() as u64)
            .unwrap_or(0);
        for (ni, spec) in topology.nodes.iter().enumerate() {
            let fp = first_port[ni];
            let role = match spec.kind {
                NodeKind::Host => {
                    let ordinal = hosts.len() as u32;
                    hosts.push(HostState {
                        port: fp,
                        active: VecDeque::new(),
                    });
                    host_nodes.push(ni as u32);
                    Role::Host(ordinal)
                }
                NodeKind::Switch => {
                    let ordinal = switches.len();
                    let reserved: u64 = (0..node_ports[ni].len())
                        .map(|p| ports[(fp as usize) + p].headroom * lossless_prios)
                        .sum();
                    let buffer = config.switch.buffer_bytes;
                    if reserved + max_frame > buffer {
                        return Err(ConfigError::new(
                            "switch.buffer_bytes",
                            buffer,
                            format!(
                                "at least {} (PFC headroom of {} bytes for {} ports and {} lossless priorities, plus one frame)",
                                reserved + max_frame,
                                reserved,
                                node_ports[ni].len(),
                                lossless_prios
                            ),
                        ));
                    }
                    switches.push(SwitchState {
                        node: NodeId(ni as u32),
                        ordinal,
                        salt: rng_salt(streams, ordinal as u64),
                        buffer_used: 0,
                        shared_limit: buffer - reserved,
                        ecn_rng: streams.stream(StreamId::new("switch-ecn", ordinal as u64)),
                        draw_rng: streams
                            .stream(StreamId::new("switch-congestion-draw", ordinal as u64)),
                    });
                    switch_nodes.push(ni as u32);
                    Role::Switch(ordinal as u32)
                }
            };
            nodes.push(NodeState {
                role,
                first_port: fp,
            });
        }
        let adj: Vec<Vec<(u16, u32)>> = node_ports
            .iter()
            .map(|ps| {
                ps.iter()
                    .enumerate()
                    .map(|(i, &(_, peer, _))| (i as u16, peer))
                    .collect()
            })
            .collect();
        let is_host: Vec<bool> = topology
            .nodes
            .iter()
            .map(|s| s.kind == NodeKind::Host)
            .collect();
        let routes = Routes::build(&adj, &is_host, &host_nodes, &switch_nodes);
        Ok(Fabric {
            config,
            links: topology.links.iter().map(|l| l.config.clone()).collect(),
            nodes,
            ports,
            switches,
            hosts,
            routes,
            packets: Arena::with_capacity(1024),
            bodies: Arena::with_capacity(1024),
            other_bodies: Arena::new(),
            head_at: Vec::with_capacity(1024),
            next_uid: 0,
            flows: Vec::new(),
            flows_done: 0,
            inbox: VecDeque::new(),
            counters: Counters::default(),
            tracer: Tracer::disabled(),
            tap: None,
            capture: None,
            pfc_side: vec![PfcSide::default(); total as usize],
            route_memo: Cell::new([RouteMemo::NONE; 2]),
            storming_queues: 0,
            host_wakeups: Vec::new(),
            max_frame_bytes: max_frame,
            oversize: None,
        })
    }

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
    pub fn schedule_flows<E: From<FabricEvent>>(&self, sched: &mut Scheduler<E>) {
        for (i, f) in self.flows.iter().enumerate() {
            sched.schedule_at(
                f.spec.start.max(sched.now()),
                FabricEvent::FlowStart { flow: i as u32 }.into(),
            );
        }
    }

    /// Schedules the start of one raw flow (at its start time, or now if that has passed).
    pub fn start_flow<E: From<FabricEvent>>(&self, flow: FlowId, sched: &mut Scheduler<E>) {
        if let Some(f) = self.flows.get(flow.index()) {
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

    /// Puts a frame on `host`'s NIC egress queue (for transports built on the fabric).
    pub fn send<E: From<FabricEvent>>(
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
    pub fn handle<E: From<FabricEvent>>(&mut self, ev: FabricEvent, sched: &mut Scheduler<E>) {
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

    /// Asks the CPU for what `ev` will read first (see [`engine::prefetch()`]): for an arrival,
    /// the packet's descriptor, its head time and the receiving port; for a port event, the
    /// port. Reads nothing but the fabric's own tables. Changes nothing.
    #[inline]
    pub fn prefetch_event(&self, ev: &FabricEvent) {
        match *ev {
            FabricEvent::Arrive { port, pkt } => {
                self.packets.prefetch(pkt);
                if let Some(t) = self.head_at.get(pkt.index() as usize) {
                    engine::prefetch(t);
                }
                self.prefetch_port(port);
            }
            FabricEvent::TxDone { port } | FabricEvent::Wake { port } => self.prefetch_port(port),
            _ => {}
        }
    }

    /// As [`Fabric::prefetch_event`], and one step further for the event about to run: for a
    /// port event, the head frame of each backlogged priority (what the scheduler reads). Reads
    /// the port, so it pays when [`Fabric::prefetch_event`] asked for it an event earlier.
    #[inline]
    pub fn prefetch_event_near(&self, ev: &FabricEvent) {
        self.prefetch_event(ev);
        match *ev {
            FabricEvent::TxDone { port } | FabricEvent::Wake { port } => {
                let Some(pt) = self.ports.get(port as usize) else {
                    return;
                };
                let mut b = pt.backlogged;
                while b != 0 {
                    if let Some(head) = pt.prio[b.trailing_zeros() as usize].queue.front() {
                        engine::prefetch(head);
                    }
                    b &= b - 1;
                }
            }
            // At a switch, the frame's route: its descriptor and the receiving port were
            // asked for an event earlier, and the egress port they lead to is the hop's next
            // miss (its queue and clock).
            FabricEvent::Arrive { port, pkt } => {
                let Some(pt) = self.ports.get(port as usize) else {
                    return;
                };
                let (
                    Some(NodeState {
                        role: Role::Switch(s),
                        ..
                    }),
                    Some(d),
                ) = (self.nodes.get(pt.node.index()), self.packets.try_get(pkt))
                else {
                    return;
                };
                if let Some(out) = self.egress(*s as usize, d.dst, d.ecmp_hash) {
                    let mut memo = self.route_memo.get();
                    memo[1] = memo[0];
                    memo[0] = RouteMemo {
                        key: (*s, d.dst.0, d.ecmp_hash),
                        out,
                    };
                    self.route_memo.set(memo);
                    self.prefetch_port(out);
                    if let Some(p) = self.ports.get(out as usize) {
                        engine::prefetch(&p.prio[d.priority.index()]);
                    }
                }
            }
            _ => {}
        }
    }

    /// Asks the CPU for a packet held for a host (see [`Fabric::take_held`]): its descriptor
    /// and its payload.
    #[inline]
    pub fn prefetch_held(&self, pkt: PacketHandle) {
        self.packets.prefetch(pkt);
        self.bodies.prefetch(body_of(pkt));
    }

    /// The data handle of a held RoCE packet's payload (what the host's model keeps its bytes
    /// under), read from the compact payload only, for prefetching: it pays when
    /// [`Fabric::prefetch_held`] asked for the payload an event earlier. `None` for any other
    /// payload, or if the handle names no held packet.
    #[inline]
    pub fn held_data_hint(&self, pkt: PacketHandle) -> Option<u32> {
        match self.bodies.try_get(body_of(pkt))? {
            Body::Rc { data, .. } => Some(*data),
            _ => None,
        }
    }

    #[inline]
    fn prefetch_port(&self, port: u32) {
        if let Some(p) = self.ports.get(port as usize) {
            engine::prefetch(p);
        }
    }

    fn new_packet(&mut self, src: NodeId, spec: PacketSpec, now: SimTime) -> PacketHandle {
        let uid = self.next_uid;
        self.next_uid += 1;
        let body = self
            .bodies
            .insert(Body::pack(spec.payload, &mut self.other_bodies));
        let h = self.packets.insert(InFlight::new(uid, src, &spec, now));
        debug_assert_eq!(
            h.index(),
            body.index(),
            "payload and descriptor slots match"
        );
        let i = h.index() as usize;
        if i >= self.head_at.len() {
            self.head_at.resize(i + 1, now);
        }
        self.head_at[i] = now;
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

    /// Queues `pkt`, which entered its node by global port `in_port` (`u32::MAX` at a host),
    /// on `port`.
    fn enqueue(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        in_port: u32,
        ready_at: SimTime,
        now: SimTime,
    ) {
        let (prio, len) = {
            let p = self.packets.get(pkt);
            (p.priority.index(), p.len_bytes)
        };
        let pt = &mut self.ports[port as usize];
        pt.prio[prio].queue.push_back(QEntry {
            pkt,
            len,
            in_port,
            ready_at,
        });
        let len = len as u64;
        pt.backlogged |= 1 << prio;
        pt.prio[prio].qbytes += len;
        pt.stats.peak_queue[prio] = pt.stats.peak_queue[prio].max(pt.prio[prio].qbytes);
        if self.tracer.enabled() {
            let (node, local, q) = (pt.node, pt.local, pt.prio[prio].qbytes);
            let r = self.packets.get(pkt).trace_ref();
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Enqueued,
                node,
                port: local,
                pkt: r,
                queue_bytes: q,
            });
        }
    }

    /// Starts the next frame on `port` if it is idle and something may go.
    fn try_tx<E: From<FabricEvent>>(&mut self, port: u32, sched: &mut Scheduler<E>) {
        let now = sched.now();
        let pi = port as usize;
        let pt = &mut self.ports[pi];
        if now < pt.free_at {
            // Still sending: look again when the frame on the wire is done.
            if !pt.tx_done_pending {
                pt.tx_done_pending = true;
                sched.schedule_at(pt.free_at, FabricEvent::TxDone { port }.into());
            }
            return;
        }
        if let Some(h) = self.ports[pi].control.pop_front() {
            let len = self.packets.get(h).len_bytes;
            self.start_tx(port, h, len, now, sched);
            return;
        }
        let scheduling = match self.nodes[self.ports[pi].node.index()].role {
            Role::Host(_) => &self.config.host.scheduling,
            Role::Switch(_) => &self.config.switch.scheduling,
        };
        if let Some(prio) = pick(&mut self.ports[pi], scheduling, now) {
            let pt = &mut self.ports[pi];
            let e = pt.prio[prio]
                .queue
                .pop_front()
                .expect("pick returns a non-empty queue");
            if pt.prio[prio].queue.is_empty() {
                pt.backlogged &= !(1 << prio);
            }
            self.ports[pi].prio[prio].qbytes -= e.len as u64;
            // ECN on dequeue: by the queue this frame leaves behind.
            if let Role::Switch(s) = self.nodes[self.ports[pi].node.index()].role
                && let Some(ecn_cfg) = self.config.switch.ecn
                && ecn_cfg.on_dequeue
                && ecn_cfg.priorities & (1 << prio) != 0
                && self.packets.get(e.pkt).ecn.is_ect()
            {
                let q = self.ports[pi].prio[prio].qbytes;
                self.maybe_mark(s as usize, port, e.pkt, q, now);
            }
            let start = e.ready_at.max(self.ports[pi].free_at);
            self.start_tx(port, e.pkt, e.len, start, sched);
            // After start_tx, so a trace shows the frame leaving before any RESUME it causes.
            self.release_buffer(port, e, prio, sched);
            return;
        }
        // Hosts pull the next frame of a raw flow when nothing queued can go.
        if let Role::Host(h) = self.nodes[self.ports[pi].node.index()].role
            && let Some(pkt) = self.next_raw_frame(h as usize, now)
        {
            let len = self.packets.get(pkt).len_bytes;
            self.start_tx(port, pkt, len, now, sched);
            return;
        }
        self.schedule_wake(port, sched);
    }

    /// RED marking of `pkt` at switch `s`'s egress port `out` with `q` bytes in its queue.
    fn maybe_mark(&mut self, s: usize, out: u32, pkt: PacketHandle, q: u64, now: SimTime) {
        let Some(ecn_cfg) = self.config.switch.ecn else {
            return;
        };
        let pm: Probability = ecn_cfg.mark_probability(q);
        if self.switches[s].ecn_rng.chance(pm) {
            self.packets.get_mut(pkt).ecn = Ecn::Ce;
            self.counters.ecn_marks += 1;
            if self.tracer.enabled() {
                let pt = &self.ports[out as usize];
                let (node, local) = (pt.node, pt.local);
                let r = self.packets.get(pkt).trace_ref();
                self.tracer.emit(now, || TraceRecord::EcnMarked {
                    node,
                    port: local,
                    pkt: r,
                    queue_bytes: q,
                });
            }
        }
    }

    /// When nothing could be sent, arranges to look again when a pause ends or a frame becomes
    /// ready.
    fn schedule_wake<E: From<FabricEvent>>(&mut self, port: u32, sched: &mut Scheduler<E>) {
        let now = sched.now();
        let pt = &self.ports[port as usize];
        let mut next = SimTime::MAX;
        for prio in 0..8 {
            if let Some(head) = pt.prio[prio].queue.front() {
                let t = if pt.paused(prio, now) {
                    pt.prio[prio].paused_until
                } else {
                    head.ready_at
                };
                if t > now {
                    next = next.min(t.max(head.ready_at));
                }
            }
        }
        if let Role::Host(h) = self.nodes[pt.node.index()].role {
            for &f in &self.hosts[h as usize].active {
                let prio = self.flows[f as usize].spec.priority.index();
                if pt.paused(prio, now) {
                    next = next.min(pt.prio[prio].paused_until);
                }
            }
        }
        if next != SimTime::MAX && (next < pt.wake_at || pt.wake_at <= now) {
            self.ports[port as usize].wake_at = next;
            sched.schedule_at(next, FabricEvent::Wake { port }.into());
        }
    }

    /// Generates the next frame of the first unpaused active raw flow at host `h`.
    fn next_raw_frame(&mut self, h: usize, now: SimTime) -> Option<PacketHandle> {
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

    /// Puts `pkt` on the wire of `port`, as if it started at `start` (≤ now only for
    /// cut-through, whose head may have begun leaving before its tail arrived).
    fn start_tx<E: From<FabricEvent>>(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        len: u32,
        start: SimTime,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pi = port as usize;
        let len = len as u64;
        let pt = &mut self.ports[pi];
        let ser = match pt.ps_per_byte {
            Some(ps) => SimDuration::from_ps((len + PREAMBLE_IFG_BYTES) * ps),
            None => pt
                .bw
                .serialization_time(ByteLen::new(len + PREAMBLE_IFG_BYTES)),
        };
        // Cut-through may start before `now` (the tail is still arriving); the frame cannot
        // finish leaving before its last bit arrived, so the end is at least `now`.
        let end = (start + ser).max(now);
        pt.free_at = end;
        pt.stats.tx_frames += 1;
        pt.stats.tx_bytes += len;
        let (peer, prop, node, local) = (pt.peer, pt.prop, pt.node, pt.local);
        self.head_at[pkt.index() as usize] = start + prop;
        // Host ports always hear when a frame is done (their NIC pulls the next one); switch
        // ports only when something is already waiting behind this frame.
        let pt = &mut self.ports[pi];
        let is_host = matches!(self.nodes[pt.node.index()].role, Role::Host(_));
        if is_host || pt.backlogged != 0 || !pt.control.is_empty() {
            pt.tx_done_pending = true;
            sched.schedule_at(end, FabricEvent::TxDone { port }.into());
        }
        sched.schedule_at(end + prop, FabricEvent::Arrive { port: peer, pkt }.into());
        if self.tap.is_some() {
            let p = self.packet_copy(pkt);
            if let Some(tap) = self.tap.as_mut() {
                tap.on_transmit(start, node, local, &p);
            }
        }
        if self
            .capture
            .as_ref()
            .is_some_and(|(at, _)| at.includes(node, local))
        {
            let p = self.packet_copy(pkt);
            if let Some((_, v)) = self.capture.as_mut() {
                v.push((start, node, local, p));
            }
        }
        if self.tracer.enabled() {
            let p = self.packets.get(pkt);
            let r = p.trace_ref();
            let q = self.ports[pi].prio[p.priority.index()].qbytes;
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Dequeued,
                node,
                port: local,
                pkt: r,
                queue_bytes: q,
            });
        }
    }

    /// Frees the switch buffer a dequeued frame held and updates its ingress count.
    fn release_buffer<E: From<FabricEvent>>(
        &mut self,
        port: u32,
        e: QEntry,
        prio: usize,
        sched: &mut Scheduler<E>,
    ) {
        let Role::Switch(s) = self.nodes[self.ports[port as usize].node.index()].role else {
            return;
        };
        let (len, in_port) = (e.len as u64, e.in_port);
        self.switches[s as usize].buffer_used -= len;
        self.ports[in_port as usize].prio[prio].ingress -= len;
        self.check_xon(in_port, prio, sched);
    }

    fn arrive<E: From<FabricEvent>>(
        &mut self,
        port: u32,
        pkt: PacketHandle,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        let pi = port as usize;
        self.ports[pi].stats.rx_frames += 1;
        let node = self.ports[pi].node;
        if self.tracer.enabled() {
            let r = self.packets.get(pkt).trace_ref();
            let local = self.ports[pi].local;
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Arrived,
                node,
                port: local,
                pkt: r,
                queue_bytes: 0,
            });
        }
        let link = self.ports[pi].link.index();
        if let Some(loss) = self.ports[pi].loss.as_mut() {
            // The loss configuration belongs to the link; each direction keeps its own state.
            let flow = self.packets.get(pkt).flow;
            if let Some(reason) = loss.judge(&self.links[link].loss, flow) {
                self.drop_packet(port, pkt, reason, now);
                return;
            }
        }
        if self.packets.get(pkt).class == PacketClass::Pause {
            if let Payload::Pause {
                class_enable,
                quanta,
            } = self.take_packet(pkt).payload
            {
                self.receive_pfc(port, class_enable, quanta, sched);
            }
            return;
        }
        match self.nodes[node.index()].role {
            Role::Host(_) => self.deliver(port, pkt, now),
            Role::Switch(s) => self.forward(s as usize, port, pkt, sched),
        }
    }

    fn deliver(&mut self, port: u32, pkt: PacketHandle, now: SimTime) {
        let node = self.ports[port as usize].node;
        let d = *self.packets.get(pkt);
        self.counters.delivered_frames += 1;
        self.counters.delivered_bytes += d.len_bytes as u64;
        if self.tracer.enabled() {
            let local = self.ports[port as usize].local;
            let r = d.trace_ref();
            self.tracer.emit(now, || TraceRecord::Packet {
                stage: PacketStage::Delivered,
                node,
                port: local,
                pkt: r,
                queue_bytes: 0,
            });
        }
        match d.class {
            PacketClass::Raw => {
                let Payload::Raw { payload, .. } = self.take_packet(pkt).payload else {
                    unreachable!("a raw packet's class says so");
                };
                let f = &mut self.flows[d.flow.index()];
                f.delivered += payload as u64;
                if f.delivered == f.spec.bytes {
                    f.finish = Some(now);
                    self.flows_done += 1;
                }
            }
            PacketClass::Pause => unreachable!("PFC frames are consumed by the receiving port"),
            // Held for the host's model.
            _ => self.inbox.push_back(Delivery::Arrived(node, pkt)),
        }
    }

    /// Takes a packet that a [`Delivery`] announced out of the fabric; `None` if the handle
    /// names no held packet (taken already, or never announced).
    pub fn take_held(&mut self, pkt: PacketHandle) -> Option<Packet> {
        self.packets.try_get(pkt)?;
        Some(self.take_packet(pkt))
    }

    fn forward<E: From<FabricEvent>>(
        &mut self,
        s: usize,
        in_port: u32,
        pkt: PacketHandle,
        sched: &mut Scheduler<E>,
    ) {
        let now = sched.now();
        // Fields are read where used: copying the whole switch configuration cost about 20
        // instructions per hop.
        let (prio, len, dst, hash, ecn, ethertype) = {
            let p = self.packets.get(pkt);
            (
                p.priority.index(),
                p.len_bytes as u64,
                p.dst,
                p.ecmp_hash,
                p.ecn,
                p.ethertype,
            )
        };
        // A routed port forwards by the IP header; a RoCE v1 frame has none.
        if self.config.switch.routed && ethertype != EtherType::Ipv4 {
            self.drop_packet(in_port, pkt, DropReason::NotIp, now);
            return;
        }
        let head_at = self.head_at[pkt.index() as usize];
        let lossless = self
            .config
            .switch
            .pfc
            .is_some_and(|pfc| pfc.covers(prio as u8));
        // Lesson ⑤: a drawn "would-be overflow".
        if !self.config.switch.congestion_drop.is_zero()
            && self.switches[s]
                .draw_rng
                .chance(self.config.switch.congestion_drop)
        {
            if !lossless {
                self.drop_packet(in_port, pkt, DropReason::CongestionDraw, now);
                return;
            }
            self.counters.congestion_draws_paused += 1;
            let pfc = self.config.switch.pfc.expect("lossless implies PFC");
            let pt = &mut self.ports[in_port as usize];
            let total = pt.prio[prio].ingress + pt.prio[prio].phantom;
            let push = (pfc.xoff_bytes.saturating_sub(total) + len).min(u32::MAX as u64);
            pt.prio[prio].phantom += push;
            let drain = pt
                .bw
                .serialization_time(ByteLen::new(push.min(PHANTOM_CHUNK as u64)));
            sched.schedule_in(
                drain,
                FabricEvent::PhantomDrain {
                    port: in_port,
                    prio: prio as u8,
                    bytes: push as u32,
                }
                .into(),
            );
        }
        let memo = self.route_memo.get();
        let key = (s as u32, dst.0, hash);
        let out = match memo.iter().find(|m| m.key == key) {
            Some(m) => Some(m.out),
            None => self.egress(s, dst, hash),
        };
        let Some(out) = out else {
            self.drop_packet(in_port, pkt, DropReason::NoRoute, now);
            return;
        };
        // The egress port is cold on a large fabric: ask for its lines now, so that they load
        // while admission works on the switch and the ingress port.
        engine::prefetch(&self.ports[out as usize]);
        engine::prefetch(&self.ports[out as usize].prio[prio]);
        if let Some(mtu) = self.config.switch.mtu_bytes
            && len > mtu as u64 + L2_BYTES
        {
            self.drop_packet(in_port, pkt, DropReason::Oversize, now);
            return;
        }
        if self.storming_queues > 0 && self.ports[out as usize].storming & (1 << prio) != 0 {
            // Counted at the storming egress port too.
            self.pfc_side[out as usize].stats.watchdog_drops += 1;
            self.drop_packet(in_port, pkt, DropReason::Watchdog, now);
            return;
        }
        // Admission.
        let sw = &mut self.switches[s];
        if lossless {
            if sw.buffer_used + len > self.config.switch.buffer_bytes {
                self.counters.drops_lossless_overflow += 1;
                self.drop_packet(in_port, pkt, DropReason::BufferFull, now);
                return;
            }
        } else if sw.buffer_used + len > sw.shared_limit
            || self.ports[out as usize].prio[prio].qbytes + len > self.config.switch.queue_cap_bytes
        {
            self.counters.drops_buffer += 1;
            self.drop_packet(in_port, pkt, DropReason::BufferFull, now);
            return;
        }
        sw.buffer_used += len;
        self.counters.peak_buffer_bytes = self.counters.peak_buffer_bytes.max(sw.buffer_used);
        // Ingress accounting and PFC.
        self.ports[in_port as usize].prio[prio].ingress += len;
        if lossless {
            self.check_xoff(in_port, prio, sched);
        }
        // ECN at the egress queue, as the frame joins it (unless marking on dequeue).
        if let Some(ecn_cfg) = &self.config.switch.ecn
            && !ecn_cfg.on_dequeue
            && ecn_cfg.priorities & (1 << prio) != 0
            && ecn.is_ect()
        {
            let q = self.ports[out as usize].prio[prio].qbytes;
            self.maybe_mark(s, out, pkt, q, now);
        }
        let ready_at = match self.config.switch.forwarding {
            Forwarding::CutThrough => head_at + self.config.switch.latency,
            Forwarding::StoreAndForward => now + self.config.switch.latency,
        };
        self.enqueue(out, pkt, in_port, ready_at, now);
        self.try_tx(out, sched);
    }

    /// The egress port (global index) switch `s` sends a frame for `dst` with 5-tuple hash
    /// `hash` by; `None` when no route leads there.
    #[inline]
    fn egress(&self, s: usize, dst: NodeId, hash: u32) -> Option<u32> {
        let dst_host = self.host_ordinal(dst)?;
        let sw = &self.switches[s];
        let cands = self.routes.candidates(sw.ordinal, dst_host as usize);
        let local_out = match cands.len() {
            0 => return None,
            1 => cands[0],
            n => cands[ecmp_pick(hash, sw.salt, n, self.config.switch.ecmp_hash)],
        };
        Some(self.nodes[sw.node.index()].first_port + local_out as u32)
    }

    fn check_xoff<E: From<FabricEvent>>(
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

    fn check_xon<E: From<FabricEvent>>(
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
    fn send_pfc<E: From<FabricEvent>>(
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

    fn receive_pfc<E: From<FabricEvent>>(
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
    fn watchdog_check<E: From<FabricEvent>>(
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
    pub fn stall_host<E: From<FabricEvent>>(
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
        let port = self.hosts[*h as usize].port;
        sched.schedule_at(at, FabricEvent::HostStall { port }.into());
        Ok(())
    }

    /// Whether `node`'s `port` is held by a PAUSE for priority `prio` at `now`.
    pub fn is_paused(&self, node: NodeId, port: PortId, prio: usize, now: SimTime) -> bool {
        self.global_port(node, port)
            .is_some_and(|gp| self.ports[gp].paused(prio & 7, now))
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

    fn drop_packet(&mut self, port: u32, pkt: PacketHandle, reason: DropReason, now: SimTime) {
        let p = *self.packets.get(pkt);
        match p.class {
            PacketClass::Raw | PacketClass::Pause => {
                self.take_packet(pkt);
                if p.class == PacketClass::Raw
                    && let Some(f) = self.flows.get_mut(p.flow.index())
                {
                    f.frames_dropped += 1;
                }
            }
            // Its sender owns the payload bytes and must hear of the loss to free them; the
            // fabric holds the packet until it is taken.
            _ => self.inbox.push_back(Delivery::Dropped(pkt)),
        }
        match reason {
            DropReason::BufferFull => {} // counted by the caller (lossy vs lossless overflow)
            DropReason::CongestionDraw => self.counters.drops_congestion += 1,
            DropReason::Corruption => self.counters.drops_corruption += 1,
            DropReason::Burst => self.counters.drops_burst += 1,
            DropReason::Rule => self.counters.drops_rule += 1,
            DropReason::NoRoute => self.counters.drops_no_route += 1,
            DropReason::NotIp => self.counters.drops_not_ip += 1,
            DropReason::Oversize => self.counters.drops_oversize += 1,
            DropReason::Watchdog => self.counters.drops_watchdog += 1,
        }
        self.counters.drops_by_priority[p.priority.index()] += 1;
        if self.tracer.enabled() {
            let pt = &self.ports[port as usize];
            let (node, local) = (pt.node, pt.local);
            let r = p.trace_ref();
            self.tracer.emit(now, || TraceRecord::Dropped {
                node,
                port: local,
                pkt: r,
                reason,
            });
        }
    }
}

/// Chooses the priority whose head frame goes next: strict priorities first (highest number
/// first), then DWRR among the rest. Only queues that are non-empty, not paused and whose head
/// is ready are eligible.
fn pick(pt: &mut Port, sch: &Scheduling, now: SimTime) -> Option<usize> {
    if pt.backlogged == 0 {
        return None;
    }
    let eligible = |pt: &Port, p: usize| {
        pt.prio[p].queue.front().is_some_and(|e| e.ready_at <= now) && !pt.paused(p, now)
    };
    if pt.backlogged.is_power_of_two() {
        // One backlogged class (the usual case): strict or not, it goes if it may, and DWRR
        // would pick it whatever the deficits say.
        let p = pt.backlogged.trailing_zeros() as usize;
        return eligible(pt, p).then_some(p);
    }
    let mut strict = pt.backlogged & sch.strict_mask;
    while strict != 0 {
        let p = 7 - strict.leading_zeros() as usize;
        strict &= !(1 << p);
        if eligible(pt, p) {
            return Some(p);
        }
    }
    let dwrr = |p: usize| sch.strict_mask & (1 << p) == 0;
    let mut ready = 0u8;
    let mut rest = pt.backlogged & !sch.strict_mask;
    while rest != 0 {
        let p = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if eligible(pt, p) {
            ready |= 1 << p;
        }
    }
    if ready == 0 {
        return None;
    }
    if ready.is_power_of_two() && pt.backlogged & !sch.strict_mask == ready {
        // One backlogged class: DWRR would pick it whatever the deficits say.
        return Some(ready.trailing_zeros() as usize);
    }
    // Deficit round robin: the queue under the pointer sends while its deficit covers its head;
    // moving the pointer to a queue grants that queue one quantum per weight unit.
    for _ in 0..8 * 64 {
        let p = pt.rr as usize;
        if dwrr(p) && eligible(pt, p) {
            let len = pt.prio[p]
                .queue
                .front()
                .expect("eligible queues are non-empty")
                .len as u64;
            if pt.prio[p].deficit >= len {
                pt.prio[p].deficit -= len;
                return Some(p);
            }
        } else if pt.prio[p].queue.is_empty() {
            pt.prio[p].deficit = 0;
        }
        pt.rr = (pt.rr + 1) % 8;
        let q = pt.rr as usize;
        if dwrr(q) && eligible(pt, q) {
            pt.prio[q].deficit += Scheduling::QUANTUM_BYTES * sch.dwrr_weights[q].max(1) as u64;
        }
    }
    unreachable!("DWRR grants at least one quantum per round, and frames are at most a few KiB")
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
        if had_flows && self.all_flows_done() {
            Step::Stop
        } else {
            Step::Continue
        }
    }
}
