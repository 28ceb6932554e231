//! Typed trace records and the observers that receive them.
//!
//! Every model reports what happens through a [`Tracer`]: packets entering and leaving queues,
//! drops with their reason, ECN marks, PFC pauses sent and received, CPU stages starting and
//! ending. A later UI draws the ladder diagram and the lit boxes from exactly these records, and
//! [`TraceHasher`] folds them into one number so that tests can prove two runs identical.
//!
//! Cost when nobody observes: [`Tracer::emit`] takes a closure that builds the record, and
//! calls it only when an observer is attached, so a disabled trace point is one predictable
//! branch and no record is ever built.

use crate::stage::Stage;
use core::any::Any;
use core::hash::{Hash, Hasher};
use units::{FlowId, NodeId, PortId, Priority, SimDuration, SimTime};

/// What kind of frame a packet is, for drawing and counting.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum PacketClass {
    /// An ACK or NAK of a RoCE reliable connection.
    RoceAck,
    /// A RoCE congestion notification packet.
    RoceCnp,
    /// A RoCE request or response carrying payload (or a READ request).
    RoceData,
    /// A PFC PAUSE frame (also a resume: a pause with zero quanta).
    Pause,
    /// Raw frames with no transport, used by fabric-only experiments.
    Raw,
    /// A TCP segment.
    Tcp,
}

/// The identity of a packet in a trace record.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct PacketRef {
    /// Unique per run, in creation order.
    pub uid: u64,
    /// The flow the packet belongs to.
    pub flow: FlowId,
    /// What kind of frame it is.
    pub class: PacketClass,
    /// Frame length in bytes (Ethernet header to end of payload; no preamble, IFG or FCS).
    pub bytes: u32,
    /// The 802.1p priority it travels in.
    pub priority: Priority,
    /// It carries rdmalab's IRN extension header (selective repeat's per-packet placement or
    /// SACK map; `wire::ib::irn`), not part of IBTA RoCE.
    pub irn_ext: bool,
}

/// Where a packet is in its journey through one port.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum PacketStage {
    /// Accepted into an egress queue.
    Enqueued,
    /// Left the queue: its first bit goes onto the wire.
    Dequeued,
    /// Its last bit arrived at the far end of the link.
    Arrived,
    /// Handed to the host's network stack (the end of the fabric's job).
    Delivered,
}

/// Why the fabric dropped a packet.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum DropReason {
    /// The switch's shared buffer (or the port's share of it) was full, and PFC was off for
    /// this priority.
    BufferFull,
    /// The lesson-⑤ "congestion drop" draw hit with lossless off.
    CongestionDraw,
    /// Random bit corruption on a link (iid loss); PFC cannot prevent it.
    Corruption,
    /// The Gilbert–Elliott burst model was in its bad state.
    Burst,
    /// A deterministic teaching rule ("drop the Nth frame of flow F").
    Rule,
    /// The switch had no route to the destination.
    NoRoute,
    /// A routed (layer-3) switch port received a frame that is not IP (RoCE v1, EtherType
    /// 0x8915) and has nothing to route it by.
    NotIp,
    /// The frame is longer than the switch port's MTU allows (a misconfigured MTU: the QP's
    /// path MTU above the network's).
    Oversize,
    /// The PFC watchdog found the egress queue paused for longer than its detection time and
    /// drops what it holds and what joins it until the storm passes.
    Watchdog,
}

impl DropReason {
    /// Its stable name in reports and traces (`buffer_full`, `congestion_draw`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::BufferFull => "buffer_full",
            DropReason::CongestionDraw => "congestion_draw",
            DropReason::Corruption => "corruption",
            DropReason::Burst => "burst",
            DropReason::Rule => "rule",
            DropReason::NoRoute => "no_route",
            DropReason::NotIp => "not_ip",
            DropReason::Oversize => "oversize",
            DropReason::Watchdog => "watchdog",
        }
    }
}

/// What executes a stage.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum ExecUnit {
    /// CPU core `n`: the stage costs CPU time.
    Cpu(u16),
    /// The NIC's processing engine.
    Nic,
    /// The PCIe link between host memory and the NIC (DMA, MMIO).
    Pcie,
}

impl ExecUnit {
    /// True when a CPU core is busy during the stage.
    pub fn is_cpu(self) -> bool {
        matches!(self, ExecUnit::Cpu(_))
    }
}

/// One thing that happened, as the UI and tests see it.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub enum TraceRecord {
    /// A packet reached a stage at a port.
    Packet {
        /// What happened to it.
        stage: PacketStage,
        /// The node it happened at.
        node: NodeId,
        /// The node's port.
        port: PortId,
        /// The packet.
        pkt: PacketRef,
        /// Bytes queued at that port and priority after the event.
        queue_bytes: u64,
    },
    /// A packet was dropped.
    Dropped {
        /// Where.
        node: NodeId,
        /// Which port (the ingress port for buffer drops).
        port: PortId,
        /// The packet.
        pkt: PacketRef,
        /// Why.
        reason: DropReason,
    },
    /// A packet was marked Congestion Experienced.
    EcnMarked {
        /// Where.
        node: NodeId,
        /// The egress port whose queue marked it.
        port: PortId,
        /// The packet.
        pkt: PacketRef,
        /// The queue depth that decided the mark.
        queue_bytes: u64,
    },
    /// A node decided to send a PFC frame out of a port (quanta 0 means resume). The frame goes
    /// on the wire ahead of any queued data, once the frame in progress has left; its
    /// `Packet { stage: Dequeued }` record shows when.
    PauseSent {
        /// The sender.
        node: NodeId,
        /// The port it leaves by.
        port: PortId,
        /// Priorities the frame applies to, bit i for priority i.
        class_enable: u8,
        /// The pause time for the enabled priorities, in 512-bit-time quanta.
        quanta: u16,
        /// What `quanta` stop the upstream for at this port's rate (zero for a resume).
        duration: SimDuration,
    },
    /// A node received a PFC frame and paused (or resumed) its egress.
    PauseReceived {
        /// The receiver.
        node: NodeId,
        /// The port it arrived on (whose egress stops).
        port: PortId,
        /// Priorities it applies to.
        class_enable: u8,
        /// Pause time in quanta (0 = resume).
        quanta: u16,
        /// What `quanta` stop this port's egress for at its rate (zero for a resume).
        duration: SimDuration,
    },
    /// A reliable transport went back and resends from `from_psn` (go-back-N), or gave up.
    Retransmit {
        /// The host whose requester resends.
        host: NodeId,
        /// Its QP number.
        qpn: u32,
        /// First PSN resent.
        from_psn: u32,
        /// Why: "sequence NAK", "ACK timeout", "RNR NAK" or "response gap".
        reason: &'static str,
    },
    /// DCQCN's reaction point changed a QP's rate (a CNP cut it, or a timer or byte counter
    /// raised it).
    RateChange {
        /// The sending host.
        host: NodeId,
        /// Its QP number.
        qpn: u32,
        /// "cut", "fast recovery", "additive increase" or "hyper increase".
        cause: &'static str,
        /// Current rate Rc, kbit/s.
        rate_kbps: u64,
        /// Target rate Rt, kbit/s.
        target_kbps: u64,
        /// α in units of 2⁻²⁰ (1 048 576 = 1.0).
        alpha: u64,
    },
    /// A timed stage of work on a host: a CPU running a syscall or a copy, the NIC fetching a
    /// WQE, a DMA crossing PCIe. One record per stage, emitted when the stage is scheduled,
    /// carrying its start and end (a UI draws it as a box on the host's timeline).
    Stage {
        /// The host.
        host: NodeId,
        /// What ran it.
        unit: ExecUnit,
        /// Which stage, e.g. [`Stage::WriteEntry`] or [`Stage::DmaReadPayload`].
        stage: Stage,
        /// True for setup work (registration, QP creation), false for the data path.
        setup: bool,
        /// When it started.
        start: SimTime,
        /// When it ended.
        end: SimTime,
    },
}

impl TraceRecord {
    /// The node it happened at (a host's stages, retransmissions and rate changes at the
    /// host's node). A node's records all come from the one partition that owns it, which
    /// is what lets a split run's records be put back in one order (`(time, node)`).
    pub fn node(&self) -> NodeId {
        match *self {
            TraceRecord::Packet { node, .. }
            | TraceRecord::Dropped { node, .. }
            | TraceRecord::EcnMarked { node, .. }
            | TraceRecord::PauseSent { node, .. }
            | TraceRecord::PauseReceived { node, .. } => node,
            TraceRecord::Retransmit { host, .. }
            | TraceRecord::RateChange { host, .. }
            | TraceRecord::Stage { host, .. } => host,
        }
    }
}

/// Receives trace records. Implement it to draw, count or store what a run does.
pub trait Observer: Any + Send {
    /// Called once per record, in simulation order.
    fn record(&mut self, at: SimTime, rec: &TraceRecord);
    /// Bytes the observer holds (for the run's memory budget). By default nothing.
    fn held_bytes(&self) -> u64 {
        0
    }
}

/// The trace point every model writes to. Disabled unless an observer is attached.
#[derive(Default)]
pub struct Tracer {
    sink: Option<Box<dyn Observer>>,
}

impl Tracer {
    /// A tracer that records nothing.
    pub fn disabled() -> Self {
        Tracer { sink: None }
    }
    /// A tracer that hands every record to `obs`.
    pub fn new(obs: impl Observer) -> Self {
        Tracer {
            sink: Some(Box::new(obs)),
        }
    }
    /// True when an observer is attached.
    #[inline(always)]
    pub fn enabled(&self) -> bool {
        self.sink.is_some()
    }
    /// Records what `make` builds, building it only when someone observes.
    #[inline(always)]
    pub fn emit(&mut self, at: SimTime, make: impl FnOnce() -> TraceRecord) {
        if let Some(sink) = self.sink.as_mut() {
            sink.record(at, &make());
        }
    }
    /// Bytes the attached observer holds.
    pub fn held_bytes(&self) -> u64 {
        self.sink.as_ref().map_or(0, |s| s.held_bytes())
    }
    /// The observer as its concrete type, left attached (None if absent or another type):
    /// for a runner that tells its observer where a run stands.
    pub fn get_mut<T: Observer>(&mut self) -> Option<&mut T> {
        let sink: &mut dyn Any = self.sink.as_deref_mut()?;
        sink.downcast_mut::<T>()
    }
    /// Detaches the observer and returns it as its concrete type (None if absent or another
    /// type).
    pub fn take<T: Observer>(&mut self) -> Option<Box<T>> {
        let sink: Box<dyn Any> = self.sink.take()?;
        sink.downcast::<T>().ok()
    }
}

/// Keeps every record, for tests and for drawing a run.
#[derive(Debug, Default)]
pub struct VecObserver {
    /// The records, in order, with their times.
    pub records: Vec<(SimTime, TraceRecord)>,
}

impl Observer for VecObserver {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        self.records.push((at, rec.clone()));
    }
    fn held_bytes(&self) -> u64 {
        (self.records.capacity() * std::mem::size_of::<(SimTime, TraceRecord)>()) as u64
    }
}

/// Keeps the first `limit` records and counts the rest: a bounded trace of the start of a
/// run (the report's ladder of the first message) whatever the run's length.
#[derive(Debug, Default)]
pub struct FirstObserver {
    /// The records kept, in order, with their times.
    pub records: Vec<(SimTime, TraceRecord)>,
    /// How many to keep.
    pub limit: usize,
    /// Records seen past the limit.
    pub skipped: u64,
    /// The time of the first record left out: every record before it was kept (records come
    /// in time order), which is where a split run's traces can be cut alike.
    pub full_at: Option<SimTime>,
}

impl FirstObserver {
    /// An observer that keeps the first `limit` records.
    pub fn new(limit: usize) -> FirstObserver {
        FirstObserver {
            records: Vec::new(),
            limit,
            skipped: 0,
            full_at: None,
        }
    }
}

impl Observer for FirstObserver {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        if self.records.len() < self.limit {
            self.records.push((at, rec.clone()));
        } else {
            self.skipped += 1;
            self.full_at.get_or_insert(at);
        }
    }
    fn held_bytes(&self) -> u64 {
        (self.records.capacity() * std::mem::size_of::<(SimTime, TraceRecord)>()) as u64
    }
}

/// Folds a run's records into one 64-bit FNV-1a hash: equal hashes mean (overwhelmingly likely)
/// identical runs. Stable across runs and machines for one build.
#[derive(Clone, Copy, Debug)]
pub struct TraceHasher {
    state: u64,
    records: u64,
}

impl Default for TraceHasher {
    fn default() -> Self {
        TraceHasher {
            state: 0xcbf2_9ce4_8422_2325,
            records: 0,
        }
    }
}

impl TraceHasher {
    /// The hash of everything recorded so far.
    pub fn hash(&self) -> u64 {
        self.state
    }
    /// Records folded in.
    pub fn records(&self) -> u64 {
        self.records
    }
}

impl Hasher for TraceHasher {
    fn finish(&self) -> u64 {
        self.state
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state ^= b as u64;
            self.state = self.state.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl Observer for TraceHasher {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        at.as_ps().hash(self);
        rec.hash(self);
        self.records += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(uid: u64) -> TraceRecord {
        TraceRecord::Dropped {
            node: NodeId(1),
            port: PortId(2),
            pkt: PacketRef {
                uid,
                flow: FlowId(0),
                class: PacketClass::Raw,
                bytes: 64,
                priority: Priority::of(3),
                irn_ext: false,
            },
            reason: DropReason::BufferFull,
        }
    }

    #[test]
    fn first_observer_keeps_the_first_records_and_counts_the_rest() {
        let mut t = Tracer::new(FirstObserver::new(2));
        for uid in 0..5 {
            t.emit(SimTime::from_ps(uid * 1000), || rec(uid));
        }
        let o = t.take::<FirstObserver>().unwrap();
        assert_eq!(o.records.len(), 2);
        assert_eq!(o.records[1].0, SimTime::from_ps(1000));
        assert_eq!(o.skipped, 3);
    }

    #[test]
    fn disabled_tracer_never_builds_records() {
        let mut t = Tracer::disabled();
        let mut built = false;
        t.emit(SimTime::ZERO, || {
            built = true;
            rec(0)
        });
        assert!(!built);
        assert!(!t.enabled());
    }

    #[test]
    fn take_returns_the_concrete_observer() {
        let mut t = Tracer::new(VecObserver::default());
        t.emit(SimTime::from_ps(5), || rec(1));
        let v = t.take::<VecObserver>().expect("a VecObserver");
        assert_eq!(v.records, vec![(SimTime::from_ps(5), rec(1))]);
        assert!(!t.enabled());
    }

    #[test]
    fn hash_depends_on_content_time_and_order() {
        let h = |recs: &[(u64, u64)]| {
            let mut o = TraceHasher::default();
            for &(t, uid) in recs {
                o.record(SimTime::from_ps(t), &rec(uid));
            }
            o.hash()
        };
        assert_eq!(h(&[(1, 1), (2, 2)]), h(&[(1, 1), (2, 2)]));
        assert_ne!(h(&[(1, 1), (2, 2)]), h(&[(2, 2), (1, 1)]));
        assert_ne!(h(&[(1, 1)]), h(&[(1, 2)]));
        assert_ne!(h(&[(1, 1)]), h(&[(3, 1)]));
    }
}
