//! A fabric's share of a partitioned run (issue 24; the design is `docs/ARCHITECTURE.md` §9).
//!
//! Every partition holds a whole [`Fabric`] built from the same topology and configuration,
//! and lives only for the nodes it owns: their ports, queues, switch buffers and random
//! streams change; the rest stay as built. A frame put on a link whose far port another
//! partition owns does not become an `Arrive` event here: it leaves the packet store as a
//! [`Crossing`] in the outbox, and the partition that owns the far port takes it in with
//! [`Fabric::accept`] at the window's end, as a packet of its own store with the same uid and
//! fields. Nothing else crosses: a link is the only way one node's work reaches another's
//! (PAUSE frames are frames on the link too), so each partition sees exactly the events a
//! single fabric would give its nodes, in the same canonical order.
//!
//! What is counted fabric-wide is counted per partition, each for its own nodes, and read
//! together by [`Joined`]: the counters summed (peaks and first times taken as the fabric's
//! would be), each port's figures from the partition that owns it, each raw flow's from its
//! source (what was sent), its destination (what arrived) and every partition (its drops).
//!
//! Simplifications: a tap (pcap writer) or a capture sees only the frames its own partition
//! puts on a wire (the world runs single-threaded when either is on); a partition's
//! [`Fabric::oversize`] names its own first refused frame.

use super::*;
use crate::partition::Partitioning;

/// Which partition owns each port, which one this fabric is, and what it made for others.
pub(super) struct Share {
    /// Partition of each port's node, by global port index.
    of_port: Vec<u32>,
    /// Partition of each node.
    of_node: Vec<u32>,
    me: u32,
    outbox: Vec<(usize, SimTime, Crossing)>,
}

/// A frame on its way over a link into another partition: the packet whole, and where and
/// when its last bit arrives.
#[derive(Debug)]
pub struct Crossing {
    port: u32,
    desc: InFlight,
    payload: Payload,
    head_at: SimTime,
}

impl Crossing {
    /// Its payload, for the owner of what a payload's data handle names (the world's pool of
    /// payload bytes) to carry the bytes across and give the handle of the receiving side.
    pub fn payload_mut(&mut self) -> &mut Payload {
        &mut self.payload
    }
}

impl Fabric {
    /// Makes this fabric partition `me` of `parts`: from now on it lives for the nodes `parts`
    /// gives `me`, and frames onto links into other partitions go to its outbox. `parts` must
    /// be a partitioning of the topology the fabric was built from.
    pub fn own_share(&mut self, parts: &Partitioning, me: u32) -> Result<(), ConfigError> {
        if parts.of_node.len() != self.nodes.len() {
            return Err(ConfigError::new(
                "partitioning.nodes",
                parts.of_node.len(),
                format!("the fabric's node count, {}", self.nodes.len()),
            ));
        }
        if me >= parts.parts {
            return Err(ConfigError::new(
                "partitioning.me",
                me,
                format!("a partition below {}", parts.parts),
            ));
        }
        let of_port = self
            .ports
            .iter()
            .map(|p| parts.of_node[p.node.index()])
            .collect();
        self.share = Some(Box::new(Share {
            of_port,
            of_node: parts.of_node.clone(),
            me,
            outbox: Vec::new(),
        }));
        Ok(())
    }

    /// Whether this fabric lives for `node`: always, unless it is one partition's share and
    /// another owns the node.
    pub fn owns(&self, node: NodeId) -> bool {
        self.share
            .as_ref()
            .is_none_or(|s| s.of_node.get(node.index()) == Some(&s.me))
    }

    /// The partition that owns global port `port`, when that is not this one.
    #[inline]
    pub(super) fn crossing_to(&self, port: u32) -> Option<u32> {
        let s = self.share.as_deref()?;
        let p = s.of_port[port as usize];
        (p != s.me).then_some(p)
    }

    /// Takes `pkt` out of the packet store into the outbox, for partition `to`'s `port` at
    /// `at`.
    pub(super) fn hand_over(&mut self, to: u32, at: SimTime, port: u32, pkt: PacketHandle) {
        let head_at = self.head_at[pkt.index() as usize];
        let desc = self.packets.remove(pkt);
        let payload = self
            .bodies
            .remove(body_of(pkt))
            .take(&mut self.other_bodies);
        let c = Crossing {
            port,
            desc,
            payload,
            head_at,
        };
        self.share
            .as_mut()
            .expect("a crossing needs a share")
            .outbox
            .push((to as usize, at, c));
    }

    /// Moves the frames made for other partitions since the last call into `out`, as
    /// (partition, arrival time, frame), in the order they went onto their links.
    pub fn drain_crossings(&mut self, out: &mut Vec<(usize, SimTime, Crossing)>) {
        if let Some(s) = self.share.as_mut() {
            out.append(&mut s.outbox);
        }
    }

    /// Takes in a frame another partition put on a link into this one: it arrives at `at`.
    pub fn accept<E: From<FabricEvent> + Tie>(
        &mut self,
        at: SimTime,
        c: Crossing,
        sched: &mut Scheduler<E>,
    ) {
        let pkt = self.store_packet(c.desc, c.payload, c.head_at);
        sched.schedule_at(at, FabricEvent::Arrive { port: c.port, pkt }.into());
    }
}

/// A fabric-only run (raw flows) split across partitions: the frames that cross are its
/// parcels.
impl engine::Partitioned for Fabric {
    type Parcel = Crossing;
    fn drain_outbox(&mut self, out: &mut Vec<(usize, SimTime, Crossing)>) {
        self.drain_crossings(out);
    }
    fn deliver(&mut self, at: SimTime, c: Crossing, sched: &mut Scheduler<FabricEvent>) {
        self.accept(at, c, sched);
    }
}

/// The partitions of one fabric (each given its share by [`Fabric::own_share`], in partition
/// order), read as the one fabric they are.
#[derive(Clone)]
pub struct Joined<'a> {
    parts: Vec<&'a Fabric>,
}

impl<'a> Joined<'a> {
    /// `parts`, partition `i` at index `i` (one fabric that is no share reads as itself).
    pub fn new(parts: Vec<&'a Fabric>) -> Joined<'a> {
        assert!(!parts.is_empty(), "a fabric has at least one partition");
        Joined { parts }
    }

    /// The partition that owns `node`.
    fn owner(&self, node: NodeId) -> &'a Fabric {
        owner(&self.parts, node)
    }

    /// The fabric-wide counters: every partition's sum; the highest buffer use and the first
    /// storm over all.
    pub fn counters(&self) -> Counters {
        let mut c = Counters::default();
        for f in &self.parts {
            c.add(&f.counters);
        }
        c
    }

    /// The counters of `node`'s port `port`, from the partition that owns the node.
    pub fn port_stats(&self, node: NodeId, port: PortId) -> Option<&'a PortStats> {
        self.owner(node).port_stats(node, port)
    }

    /// Every port as (node, port, link, stats), each from its owner, in global port order.
    pub fn ports(&self) -> impl Iterator<Item = (NodeId, PortId, LinkId, &'a PortStats)> + 'a {
        let parts = self.parts.clone();
        (0..parts[0].ports.len()).map(move |i| {
            let p = &owner(&parts, parts[0].ports[i].node).ports[i];
            (p.node, p.local, p.link, &p.stats)
        })
    }

    /// Every raw flow's outcome: what was sent as its source's partition counted it, what
    /// arrived as its destination's did, and the drops every partition counted.
    pub fn flow_results(&self) -> Vec<FlowResult> {
        let first = self.parts[0];
        first
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let src = &self.owner(f.spec.src).flows[i];
                let dst = &self.owner(f.spec.dst).flows[i];
                FlowResult {
                    flow: f.id,
                    start: f.spec.start,
                    finish: dst.finish,
                    delivered: dst.delivered,
                    frames_sent: src.frames_sent,
                    frames_dropped: self.parts.iter().map(|p| p.flows[i].frames_dropped).sum(),
                }
            })
            .collect()
    }

    /// True when every raw flow has delivered all its bytes.
    pub fn all_flows_done(&self) -> bool {
        self.parts.iter().map(|p| p.flows_done).sum::<usize>() == self.parts[0].flows.len()
    }

    /// Packets alive in the fabric now, every partition together.
    pub fn packets_in_flight(&self) -> usize {
        self.parts.iter().map(|p| p.packets.len()).sum()
    }
}

/// The partition of `parts` that owns `node` (the first, if none claims it).
fn owner<'a>(parts: &[&'a Fabric], node: NodeId) -> &'a Fabric {
    parts
        .iter()
        .find(|f| f.owns(node))
        .copied()
        .unwrap_or(parts[0])
}

impl Counters {
    /// Adds `o`'s counts to these (a partition's to the fabric's): sums, the larger peak, the
    /// earlier first storm. `o` is taken apart field by field, so a counter added to
    /// [`Counters`] does not compile until it says how partitions combine it.
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            delivered_frames,
            delivered_bytes,
            drops_buffer,
            drops_lossless_overflow,
            drops_congestion,
            drops_corruption,
            drops_burst,
            drops_rule,
            drops_no_route,
            drops_oversize,
            drops_not_ip,
            drops_watchdog,
            watchdog_storms,
            first_watchdog_storm,
            ecn_marks,
            congestion_draws_paused,
            pauses_sent,
            resumes_sent,
            peak_buffer_bytes,
            drops_by_priority,
        } = *o;
        self.delivered_frames += delivered_frames;
        self.delivered_bytes += delivered_bytes;
        self.drops_buffer += drops_buffer;
        self.drops_lossless_overflow += drops_lossless_overflow;
        self.drops_congestion += drops_congestion;
        self.drops_corruption += drops_corruption;
        self.drops_burst += drops_burst;
        self.drops_rule += drops_rule;
        self.drops_no_route += drops_no_route;
        self.drops_oversize += drops_oversize;
        self.drops_not_ip += drops_not_ip;
        self.drops_watchdog += drops_watchdog;
        self.watchdog_storms += watchdog_storms;
        self.first_watchdog_storm = match (self.first_watchdog_storm, first_watchdog_storm) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.ecn_marks += ecn_marks;
        self.congestion_draws_paused += congestion_draws_paused;
        self.pauses_sent += pauses_sent;
        self.resumes_sent += resumes_sent;
        self.peak_buffer_bytes = self.peak_buffer_bytes.max(peak_buffer_bytes);
        for (a, b) in self.drops_by_priority.iter_mut().zip(drops_by_priority) {
            *a += b;
        }
    }
}
