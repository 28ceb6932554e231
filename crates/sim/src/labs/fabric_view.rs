//! The fabric as a lab run saw it, link by link and window by window: what the lab page's
//! fabric view draws (issue 19, item 3). The nodes and links come from the run's own
//! [`Topology`], not from a drawing made per lab; each link's two directions are sampled at
//! the end of every window of the lab's run, on the simulation's integer-picosecond clock:
//! how busy the wire was, how many bytes waited at the sending port for RoCE's priority,
//! how long that port was held by PAUSE frames, how many PAUSE frames the port sent the
//! other way, ECN marks its queue made and frames dropped at either end. A bounded sample of
//! the frames each direction carried (the first of every window, and the first PFC frame of
//! every window) goes with it, so the page can list what crossed a link and when.
//!
//! Nothing here changes the run: the counters are read between windows, the frames come from
//! a [`Tap`] and the drop and mark counts from a trace [`Observer`], both of which only watch.
//! Same lab and parameters, same view, bit for bit.
//!
//! The simulation page's runs use the same recorder ([`ViewRecorder::attach_run`], through
//! `World::watch_fabric` and `report::run_plan_fabric`): a run's length is not known when it
//! starts, so the view begins with a fine window and doubles it whenever it holds
//! [`RUN_SAMPLES`] samples, and it counts from its own start (the data path's, where the
//! report's counts start), so its last sample adds up to the report's PAUSE frames and drops.

use super::PRIO;
use engine::{Observer, TraceRecord, Tracer};
use fabric::capture::frame_bytes;
use fabric::packet::host_ip;
use fabric::{Ecn, Fabric, NodeKind, Packet, Payload, Tap, Topology};
use serde::Serialize;
use std::collections::BTreeMap;
use units::{NodeId, PortId, SimDuration, SimTime};
use wire::Ipv4Address;

/// Most samples a view keeps per series (a lab samples 50–60 windows).
pub const MAX_SAMPLES: usize = 200;
/// Most frames kept per link direction.
pub const FRAMES_PER_DIRECTION: usize = 64;
/// Most frames kept in the whole view.
pub const MAX_FRAMES: usize = 2_000;
/// Largest fabric a view describes, links (the labs' largest has 19).
pub const MAX_LINKS: usize = 64;
/// Most samples a whole run's view ([`ViewRecorder::attach_run`]) holds before it halves
/// them: a run's length is not known when it starts, so its view starts with a fine window
/// and doubles the window (merging pairs of samples) each time it fills, ending with 32–64
/// samples however long the run was.
pub const RUN_SAMPLES: usize = 64;

/// One node of the drawing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewNode {
    /// Its name in the topology (`l-h0`, `right`, `sw3`).
    pub name: String,
    /// `host` or `switch`.
    pub kind: &'static str,
}

/// One direction of a link, `from → to`, sampled at the end of every window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Direction {
    /// The sending node (an index into [`FabricView::nodes`]).
    pub from: u32,
    /// The receiving node.
    pub to: u32,
    /// Share of the window the wire carried frame bytes, % of the line rate (preamble and
    /// inter-frame gap not counted, so a full wire reads a little under 100).
    pub util_pct: Vec<f64>,
    /// Bytes waiting in `from`'s egress queue for RoCE's priority at the sample.
    pub queue_bytes: Vec<u64>,
    /// Share of the window `from`'s egress was held by PAUSE frames from `to`, %.
    pub held_pct: Vec<f64>,
    /// Whether `from`'s egress was held by a PAUSE at the sample.
    pub paused: Vec<bool>,
    /// PAUSE frames (non-zero quanta) `from` has sent to `to` so far: `from` asking `to` to
    /// stop (XOFF).
    pub pauses: Vec<u64>,
    /// Frames `from` has sent on this direction so far.
    pub frames: Vec<u64>,
    /// Frames `from`'s egress queue has marked CE so far.
    pub ecn_marks: Vec<u64>,
    /// When `from` first put a PAUSE (non-zero quanta for RoCE's priority) on this direction,
    /// ps since the start: the exact moment, not the window, so the spread's order is the
    /// order it happened in.
    pub first_pause_ps: Option<u64>,
}

/// A frame as it started onto a link.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewFrame {
    /// When its first bit left, ps since the lab's streams started.
    pub t_ps: u64,
    /// Which direction of the link: 0 is `a → b`, 1 is `b → a`.
    pub dir: u8,
    /// `pause`, `resume`, `roce`, `tcp` or `raw`.
    pub kind: &'static str,
    /// Frame bytes (Ethernet header through FCS).
    pub bytes: u32,
    /// Its 802.1p priority.
    pub priority: u8,
    /// Whether it carried the CE mark.
    pub ce: bool,
    /// RoCE: the opcode as the IBTA names it (`RC RDMA_WRITE_MIDDLE`, `RC ACKNOWLEDGE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opcode: Option<String>,
    /// RoCE: the packet sequence number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psn: Option<u32>,
    /// RoCE: the destination QP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dest_qp: Option<u32>,
    /// PFC: pause time for RoCE's priority, 512-bit-time quanta (0 is a resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quanta: Option<u16>,
    /// The packet's id in the run (unique, in creation order).
    pub uid: u64,
    /// Its bytes as lowercase hex (no FCS), encoded as the pcap writer encodes them (payload
    /// bytes zero: the streams' data is not kept) and cut to the first
    /// [`crate::world::WIRE_PAYLOAD_SHOWN`] payload bytes, what the packet inspector decodes;
    /// empty if the packet could not be encoded.
    pub wire: String,
    /// The payload bytes (offsets in the whole frame) left out of `wire`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_elided: Option<[usize; 2]>,
}

/// One cable and what both its directions did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewLink {
    /// One end (an index into [`FabricView::nodes`]).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Line rate of each direction, Gb/s.
    pub gbps: f64,
    /// `a → b` and `b → a`.
    pub dirs: [Direction; 2],
    /// Frames dropped at either end's port so far (at a switch's ingress when its buffer was
    /// full, at its egress when the PFC watchdog flushed a queue).
    pub drops: Vec<u64>,
    /// Of `drops`, raw frames (a scenario's cross-traffic bursts, which a run's report does
    /// not count among its path's drops).
    pub raw_drops: Vec<u64>,
    /// A sample of the frames the link carried, in time order: at most
    /// [`FRAMES_PER_DIRECTION`] per direction.
    pub frames: Vec<ViewFrame>,
    /// How many frames the link carried in all (both directions).
    pub frames_total: u64,
}

/// What the fabric view draws.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FabricView {
    /// The topology's description (`dumbbell 3+3`).
    pub topology: String,
    /// Nodes, in topology order.
    pub nodes: Vec<ViewNode>,
    /// Links, in topology order.
    pub links: Vec<ViewLink>,
    /// Sample times, ps since the streams started (the end of each window).
    pub t_ps: Vec<u64>,
    /// The window between samples, ps.
    pub window_ps: u64,
    /// The 802.1p priority the queues and pauses are read for.
    pub priority: u8,
}

/// Where each port's cable goes: link index and direction leaving that port.
type PortMap = BTreeMap<(NodeId, PortId), (usize, usize)>;

/// Records [`FabricView`]s of one run: attach it before the run, call [`Self::sample`] at the
/// end of every window, then [`Self::finish`].
pub struct ViewRecorder {
    view: FabricView,
    /// Per link, per direction: the sending port.
    ends: Vec<[(NodeId, PortId); 2]>,
    start: SimTime,
    /// Per link, per direction: tx bytes and held-by-pause ps at the last sample.
    last: Vec<[(u64, u64); 2]>,
    last_t: SimDuration,
    /// The priority whose queues and pauses are read.
    prio: usize,
    /// Per link, per direction: PAUSE frames and frames sent before the view began, taken
    /// off the cumulative counts (a whole run's view counts from its own start, as the
    /// run's report does; a lab's view counts the ports' whole life).
    base: Vec<[(u64, u64); 2]>,
    /// A whole run's view: the window doubles when [`RUN_SAMPLES`] are held.
    adaptive: bool,
}

impl ViewRecorder {
    /// Watches `fabric` (built from `topo`) from `start`, sampling every `window`. Replaces
    /// the fabric's tap and tracer: the streams labs use neither.
    pub fn attach(
        fabric: &mut Fabric,
        topo: &Topology,
        start: SimTime,
        window: SimDuration,
    ) -> ViewRecorder {
        Self::attach_chained(fabric, topo, start, window, None)
    }

    /// As [`Self::attach`], and every trace record the fabric makes is handed on to `inner`
    /// too (a run that watches the fabric itself, as the incast does); [`Self::finish_chained`]
    /// gives it back.
    pub fn attach_chained(
        fabric: &mut Fabric,
        topo: &Topology,
        start: SimTime,
        window: SimDuration,
        inner: Option<Box<dyn Observer>>,
    ) -> ViewRecorder {
        Self::attach_inner(fabric, topo, start, window, inner, PRIO, false)
    }

    /// A view of a whole run from `start` (a simulation page's run, whose length is not
    /// known beforehand), for RoCE's priority `prio`: counts from `start`, begins with
    /// `first_window` and doubles it whenever [`RUN_SAMPLES`] samples are held. The caller
    /// hands [`Self::catch_up`] the time of every event before it is handled and ends with
    /// [`Self::finish_at`]. `inner` as for [`Self::attach_chained`].
    pub fn attach_run(
        fabric: &mut Fabric,
        topo: &Topology,
        start: SimTime,
        first_window: SimDuration,
        prio: usize,
        inner: Option<Box<dyn Observer>>,
    ) -> ViewRecorder {
        Self::attach_inner(fabric, topo, start, first_window, inner, prio.min(7), true)
    }

    fn attach_inner(
        fabric: &mut Fabric,
        topo: &Topology,
        start: SimTime,
        window: SimDuration,
        inner: Option<Box<dyn Observer>>,
        prio: usize,
        adaptive: bool,
    ) -> ViewRecorder {
        let links: Vec<_> = topo.links.iter().take(MAX_LINKS).collect();
        let mut ends = vec![[(NodeId(0), PortId(0)); 2]; links.len()];
        let mut map = PortMap::new();
        for (node, port, link, _) in fabric.ports() {
            let Some(spec) = links.get(link.index()) else {
                continue;
            };
            let dir = usize::from(node != spec.a);
            ends[link.index()][dir] = (node, port);
            map.insert((node, port), (link.index(), dir));
        }
        let nodes = topo
            .nodes
            .iter()
            .map(|n| ViewNode {
                name: n.name.clone(),
                kind: match n.kind {
                    NodeKind::Host => "host",
                    NodeKind::Switch => "switch",
                },
            })
            .collect();
        let view_links = links
            .iter()
            .map(|l| ViewLink {
                a: l.a.0,
                b: l.b.0,
                gbps: l.config.bandwidth.as_gbps_f64(),
                dirs: [
                    Direction {
                        from: l.a.0,
                        to: l.b.0,
                        ..Direction::default()
                    },
                    Direction {
                        from: l.b.0,
                        to: l.a.0,
                        ..Direction::default()
                    },
                ],
                drops: Vec::new(),
                raw_drops: Vec::new(),
                frames: Vec::new(),
                frames_total: 0,
            })
            .collect::<Vec<_>>();
        let base = ends
            .iter()
            .map(|e| {
                e.map(|(node, port)| {
                    let st = fabric.port_stats(node, port).copied().unwrap_or_default();
                    if adaptive {
                        (st.pauses_sent, st.tx_frames)
                    } else {
                        (0, 0)
                    }
                })
            })
            .collect();
        fabric.set_tap(FrameTap {
            map: map.clone(),
            start,
            window_ps: window.as_ps().max(1),
            kept: vec![[Kept::default(); 2]; view_links.len()],
            frames: vec![Vec::new(); view_links.len()],
            total: vec![0; view_links.len()],
            first_pause: vec![[None; 2]; view_links.len()],
            all: 0,
            ips: fabric
                .ports()
                .map(|(node, ..)| (node, fabric.host_ordinal(node).unwrap_or(node.0)))
                .collect(),
            buf: Vec::with_capacity(4300),
            prio,
        });
        fabric.set_tracer(Tracer::new(PortTally {
            map,
            drops: vec![0; view_links.len()],
            raw_drops: vec![0; view_links.len()],
            marks: vec![[0; 2]; view_links.len()],
            inner,
        }));
        ViewRecorder {
            last: vec![[(0, 0); 2]; view_links.len()],
            view: FabricView {
                topology: topo.name.clone(),
                nodes,
                links: view_links,
                t_ps: Vec::new(),
                window_ps: window.as_ps(),
                priority: prio as u8,
            },
            ends,
            start,
            last_t: SimDuration::ZERO,
            prio,
            base,
            adaptive,
        }
    }

    /// When the next sample is due (a whole run's view: the end of the next window).
    fn next_due(&self) -> SimTime {
        let k = self.view.t_ps.len() as u64 + 1;
        self.start + SimDuration::from_ps(self.view.window_ps.saturating_mul(k))
    }

    /// Takes every sample due before `now`, the time of the event about to be handled: the
    /// fabric then holds the state of every earlier instant, so a sample at a window's end
    /// reads exactly what was there. Cheap when none is due (one comparison).
    pub fn catch_up(&mut self, fabric: &mut Fabric, now: SimTime) {
        while self.next_due() < now {
            self.sample_next(fabric);
        }
    }

    /// The next window's sample, halving the samples held first if the view is full.
    fn sample_next(&mut self, fabric: &mut Fabric) {
        if self.adaptive && self.view.t_ps.len() >= RUN_SAMPLES {
            self.coarsen(fabric);
        }
        let t = self.next_due().saturating_duration_since(self.start);
        self.sample(fabric, t);
    }

    /// A whole run's view at its end, `end` (every event up to `end` handled): the samples
    /// due before it and one at `end` itself, so the last sample's counts are the run's.
    pub fn finish_at(
        mut self,
        fabric: &mut Fabric,
        end: SimTime,
    ) -> (FabricView, Option<Box<dyn Observer>>) {
        while self.next_due() <= end {
            self.sample_next(fabric);
        }
        let t = end.saturating_duration_since(self.start);
        if self.view.t_ps.last() != Some(&t.as_ps()) {
            if self.adaptive && self.view.t_ps.len() >= RUN_SAMPLES {
                self.coarsen(fabric);
            }
            self.sample(fabric, t);
        }
        self.finish_chained(fabric)
    }

    /// Doubles the window: each pair of samples becomes one (a rate or share the mean of
    /// the two, a count or an instant's state the later one), and the frames kept are
    /// thinned to those the tap would have kept with the wider window.
    fn coarsen(&mut self, fabric: &mut Fabric) {
        fn pairs<T: Copy>(v: &mut Vec<T>, merge: impl Fn(T, T) -> T) {
            *v = v.chunks(2).map(|c| merge(c[0], c[c.len() - 1])).collect();
        }
        let later = |_: u64, b: u64| b;
        let mean = |a: f64, b: f64| (a + b) / 2.0;
        pairs(&mut self.view.t_ps, later);
        for link in &mut self.view.links {
            pairs(&mut link.drops, later);
            pairs(&mut link.raw_drops, later);
            for d in &mut link.dirs {
                pairs(&mut d.util_pct, mean);
                pairs(&mut d.held_pct, mean);
                pairs(&mut d.queue_bytes, later);
                pairs(&mut d.paused, |_, b| b);
                pairs(&mut d.pauses, later);
                pairs(&mut d.frames, later);
                pairs(&mut d.ecn_marks, later);
            }
        }
        self.view.window_ps = self.view.window_ps.saturating_mul(2);
        if let Some(mut tap) = fabric.take_tap::<FrameTap>() {
            tap.widen(self.view.window_ps);
            fabric.set_tap(*tap);
        }
    }

    /// Reads every link at `t` (since the start; the fabric's clock is at `start + t`).
    pub fn sample(&mut self, fabric: &mut Fabric, t: SimDuration) {
        if self.view.t_ps.len() >= MAX_SAMPLES {
            return;
        }
        let now = self.start + t;
        let span = t.saturating_sub(self.last_t).as_ps().max(1);
        self.last_t = t;
        self.view.t_ps.push(t.as_ps());
        let tally = fabric
            .tracer_mut()
            .get_mut::<PortTally>()
            .map(|p| (p.drops.clone(), p.marks.clone(), p.raw_drops.clone()));
        for (i, link) in self.view.links.iter_mut().enumerate() {
            let bps = (link.gbps * 1e9).max(1.0);
            for d in 0..2 {
                let (node, port) = self.ends[i][d];
                let st = fabric.port_stats(node, port).copied().unwrap_or_default();
                let held = fabric.pause_time(node, port, self.prio, now).0;
                let (tx0, held0) = self.last[i][d];
                self.last[i][d] = (st.tx_bytes, held);
                let dir = &mut link.dirs[d];
                let bits = (st.tx_bytes - tx0.min(st.tx_bytes)) as f64 * 8.0;
                dir.util_pct
                    .push((bits / (bps * span as f64 * 1e-12) * 100.0).min(100.0));
                dir.queue_bytes
                    .push(fabric.queue_bytes(node, port, self.prio));
                dir.held_pct
                    .push(((held - held0.min(held)) as f64 / span as f64 * 100.0).min(100.0));
                dir.paused
                    .push(fabric.is_paused(node, port, self.prio, now));
                let (pauses0, frames0) = self.base[i][d];
                dir.pauses.push(st.pauses_sent.saturating_sub(pauses0));
                dir.frames.push(st.tx_frames.saturating_sub(frames0));
                dir.ecn_marks
                    .push(tally.as_ref().map_or(0, |(_, m, _)| m[i][d]));
            }
            link.drops.push(tally.as_ref().map_or(0, |(dr, ..)| dr[i]));
            link.raw_drops
                .push(tally.as_ref().map_or(0, |(.., raw)| raw[i]));
        }
    }

    /// The view, with the frames the tap kept (the tap and tracer are detached).
    pub fn finish(self, fabric: &mut Fabric) -> FabricView {
        self.finish_chained(fabric).0
    }

    /// As [`Self::finish`], with the observer [`Self::attach_chained`] was given.
    pub fn finish_chained(
        mut self,
        fabric: &mut Fabric,
    ) -> (FabricView, Option<Box<dyn Observer>>) {
        if let Some(tap) = fabric.take_tap::<FrameTap>() {
            for (i, link) in self.view.links.iter_mut().enumerate() {
                let mut frames = tap.frames[i].clone();
                frames.sort_by_key(|f| (f.t_ps, f.uid));
                link.frames = frames;
                link.frames_total = tap.total[i];
                for d in 0..2 {
                    link.dirs[d].first_pause_ps = tap.first_pause[i][d];
                }
            }
        }
        let inner = fabric
            .tracer_mut()
            .take::<PortTally>()
            .and_then(|t| t.inner);
        (self.view, inner)
    }
}

/// Which windows a direction has a frame kept for already.
#[derive(Clone, Copy, Debug, Default)]
struct Kept {
    /// The last window whose first frame was kept (+1; 0: none yet).
    any: u64,
    /// The last window whose first PFC frame was kept (+1).
    pfc: u64,
}

/// Keeps the first frame of each window, and the first PFC frame of each window, per
/// direction, within the bounds.
struct FrameTap {
    map: PortMap,
    start: SimTime,
    window_ps: u64,
    kept: Vec<[Kept; 2]>,
    frames: Vec<Vec<ViewFrame>>,
    total: Vec<u64>,
    /// Per link, per direction: the first PAUSE's time, ps since the start.
    first_pause: Vec<[Option<u64>; 2]>,
    all: usize,
    /// Each node's host ordinal (its IPv4 address's last part), as the pcap writer numbers
    /// them; a switch keeps its node number (it sends only PFC frames, which have no IP).
    ips: BTreeMap<NodeId, u32>,
    /// Scratch for a frame's bytes.
    buf: Vec<u8>,
    /// The priority whose PAUSE quanta are read.
    prio: usize,
}

impl FrameTap {
    /// The window is now `window_ps`: keeps, per direction, only the frames the tap would
    /// have kept with it (the first of each window, the first PFC frame of each window).
    fn widen(&mut self, window_ps: u64) {
        self.window_ps = window_ps.max(1);
        let w = self.window_ps;
        self.all = 0;
        for (link, frames) in self.frames.iter_mut().enumerate() {
            let mut kept = [Kept::default(); 2];
            frames.retain(|f| {
                let k = &mut kept[usize::from(f.dir)];
                let win = f.t_ps / w + 1;
                let pfc = matches!(f.kind, "pause" | "resume");
                let keep = k.any < win || (pfc && k.pfc < win);
                if keep {
                    k.any = k.any.max(win);
                    if pfc {
                        k.pfc = win;
                    }
                }
                keep
            });
            self.kept[link] = kept;
            self.all += frames.len();
        }
    }
}

impl Tap for FrameTap {
    fn on_transmit(&mut self, at: SimTime, node: NodeId, port: PortId, pkt: &Packet) {
        let Some(&(link, dir)) = self.map.get(&(node, port)) else {
            return;
        };
        self.total[link] += 1;
        if let Payload::Pause { quanta, .. } = pkt.payload
            && quanta[self.prio] > 0
            && self.first_pause[link][dir].is_none()
        {
            self.first_pause[link][dir] = Some(at.saturating_duration_since(self.start).as_ps());
        }
        let w = at.saturating_duration_since(self.start).as_ps() / self.window_ps + 1;
        let pfc = matches!(pkt.payload, Payload::Pause { .. });
        let k = &mut self.kept[link][dir];
        let first_of_window = k.any < w;
        let first_pfc = pfc && k.pfc < w;
        if !(first_of_window || first_pfc) || self.all >= MAX_FRAMES {
            return;
        }
        let mine = self.frames[link]
            .iter()
            .filter(|f| usize::from(f.dir) == dir)
            .count();
        if mine >= FRAMES_PER_DIRECTION {
            return;
        }
        k.any = k.any.max(w);
        if pfc {
            k.pfc = w;
        }
        let mut f = view_frame(
            at.saturating_duration_since(self.start),
            dir,
            pkt,
            self.prio,
        );
        let ip = |n: NodeId| Ipv4Address(host_ip(self.ips.get(&n).copied().unwrap_or(n.0)));
        let (src, dst) = (ip(pkt.src), ip(pkt.dst));
        if frame_bytes(pkt, src, dst, &[], &mut self.buf).is_ok() {
            let (bytes, gap) =
                wire::dissect::elide_payload(&self.buf, crate::world::WIRE_PAYLOAD_SHOWN);
            f.wire = hex(&bytes);
            f.wire_elided = gap.map(|g| [g.start, g.end]);
        }
        self.frames[link].push(f);
        self.all += 1;
    }
}

fn view_frame(t: SimDuration, dir: usize, p: &Packet, prio: usize) -> ViewFrame {
    let mut f = ViewFrame {
        t_ps: t.as_ps(),
        dir: dir as u8,
        kind: "raw",
        bytes: p.len_bytes,
        priority: p.priority.index() as u8,
        ce: p.ecn == Ecn::Ce,
        opcode: None,
        psn: None,
        dest_qp: None,
        quanta: None,
        uid: p.uid,
        wire: String::new(),
        wire_elided: None,
    };
    match &p.payload {
        Payload::Pause { quanta, .. } => {
            let q = quanta[prio];
            f.kind = if q == 0 { "resume" } else { "pause" };
            f.quanta = Some(q);
        }
        Payload::Roce { hdr, .. } => {
            f.kind = "roce";
            f.opcode = Some(hdr.bth.opcode.to_string());
            f.psn = Some(hdr.bth.psn);
            f.dest_qp = Some(hdr.bth.dest_qp);
        }
        Payload::Tcp { .. } => f.kind = "tcp",
        Payload::Raw { .. } => f.kind = "raw",
    }
    f
}

/// Bytes as lowercase hex, two digits a byte.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Counts drops and ECN marks per port, and hands every record on to the run's own
/// observer, if it has one.
struct PortTally {
    map: PortMap,
    drops: Vec<u64>,
    raw_drops: Vec<u64>,
    marks: Vec<[u64; 2]>,
    inner: Option<Box<dyn Observer>>,
}

impl Observer for PortTally {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        if let Some(inner) = self.inner.as_mut() {
            inner.record(at, rec);
        }
        match *rec {
            TraceRecord::Dropped {
                node, port, pkt, ..
            } => {
                if let Some(&(l, _)) = self.map.get(&(node, port)) {
                    self.drops[l] += 1;
                    if pkt.class == engine::PacketClass::Raw {
                        self.raw_drops[l] += 1;
                    }
                }
            }
            TraceRecord::EcnMarked { node, port, .. } => {
                if let Some(&(l, d)) = self.map.get(&(node, port)) {
                    self.marks[l][d] += 1;
                }
            }
            _ => {}
        }
    }
    fn held_bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.held_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labs::lab_pfc;
    use crate::labs::streams::Streams;
    use crate::world::RcOptions;
    use fabric::{FabricConfig, LinkConfig};
    use units::Bandwidth;

    #[test]
    fn every_window_is_sampled_and_every_pause_is_on_a_link() {
        // A 2→1 incast at line rate on one switch with PFC: the receiver's port congests and
        // the switch pauses both senders.
        let topo = Topology::star(3, LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
        let mut cfg = FabricConfig::default();
        cfg.switch.pfc = Some(lab_pfc());
        let mut s = Streams::new(topo, cfg, &[(1, 0), (2, 0)], &RcOptions::default()).unwrap();
        let w = SimDuration::from_us(20);
        s.post_all_for(100, w * 10).unwrap();
        let mut rec = ViewRecorder::attach(s.w.fabric_mut(), &s.topo, s.start, w);
        for k in 1..=10 {
            s.run_to(w * k).unwrap();
            rec.sample(s.w.fabric_mut(), w * k);
        }
        let v = rec.finish(s.w.fabric_mut());
        assert_eq!(
            v.t_ps,
            (1..=10).map(|k| (w * k).as_ps()).collect::<Vec<_>>()
        );
        assert_eq!((v.nodes.len(), v.links.len()), (4, 3));
        let pauses: u64 = v
            .links
            .iter()
            .flat_map(|l| l.dirs.iter())
            .map(|d| *d.pauses.last().unwrap())
            .sum();
        assert!(pauses > 0);
        assert_eq!(pauses, s.w.fabric().counters().pauses_sent);
        for l in &v.links {
            for dir in 0..2u8 {
                // At most the first frame and the first PFC frame of each window.
                let n = l.frames.iter().filter(|f| f.dir == dir).count();
                assert!(n <= 2 * v.t_ps.len() + 2, "{n}");
            }
            assert!(
                l.dirs
                    .iter()
                    .all(|d| d.util_pct.iter().all(|u| (0.0..=100.0).contains(u)))
            );
        }
        // The tap and the tracer are gone with the recorder.
        assert!(!s.w.fabric_mut().tracer_mut().enabled());
    }
}
