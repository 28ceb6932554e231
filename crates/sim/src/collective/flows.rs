//! Which RoCE flows each link direction carried over a collective run: what an ECMP collision
//! is made of. A flow is one QP's direction of data, named by its 5-tuple (source, destination,
//! UDP source port: the entropy ECMP hashes); a tap on the fabric sees every frame as it starts
//! onto a wire and notes, per port, the distinct flows of the frames that carry payload (ACKs,
//! CNPs and PAUSE frames are not a flow's data).
//!
//! Only [`super::run_plan_traced`] installs the tap: `rdmalab collective` and the scenario runs
//! report without it, as before.

use fabric::{Packet, Payload, Tap};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use units::{NodeId, PortId, SimTime};

use crate::world::World;

/// One direction of one link over a run, with the flows on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkFlows {
    /// The sending node's name (`leaf2`, `spine0`, `leaf2-h0`).
    pub from: String,
    /// The receiving node's name.
    pub to: String,
    /// Frame bytes sent over the run's time at the link's rate (0..1), as
    /// [`super::SizeRow::busiest_links`] counts them.
    pub util: f64,
    /// Distinct RoCE flows (QP 5-tuples) whose data frames took this direction.
    pub flows: u32,
}

/// A flow: (source node, destination node, UDP source port).
type Flow = (u32, u32, u16);

/// The tap: per (node, local port), the flows seen.
#[derive(Default)]
pub(super) struct FlowTap {
    seen: BTreeMap<(u32, u32), BTreeSet<Flow>>,
}

impl Tap for FlowTap {
    fn on_transmit(&mut self, _at: SimTime, node: NodeId, port: PortId, pkt: &Packet) {
        if let Payload::Roce {
            hdr, payload_len, ..
        } = pkt.payload
            && payload_len > 0
        {
            self.seen
                .entry((node.0, port.0 as u32))
                .or_default()
                .insert((pkt.src.0, pkt.dst.0, hdr.udp_src_port));
        }
    }
}

/// Every link direction that sent bytes over the run of `time_ps` (a fresh world: its port
/// counters start at zero), with the flows `tap` saw on it, in port order.
pub(super) fn collect(
    w: &World,
    topo: &fabric::Topology,
    tap: &FlowTap,
    time_ps: u64,
) -> Vec<LinkFlows> {
    let secs = time_ps.max(1) as f64 / 1e12;
    let name = |n: NodeId| {
        topo.nodes
            .get(n.0 as usize)
            .map_or_else(|| format!("node{}", n.0), |x| x.name.clone())
    };
    let mut out = Vec::new();
    for (node, port, link, s) in w.fabric().ports() {
        let Some(l) = w.fabric().link(link) else {
            continue;
        };
        let cap_bits = l.bandwidth.bps() as f64 * secs;
        if s.tx_bytes == 0 || cap_bits <= 0.0 {
            continue;
        }
        let far = topo
            .links
            .get(link.0 as usize)
            .map(|x| if x.a == node { x.b } else { x.a });
        let flows = tap
            .seen
            .get(&(node.0, port.0 as u32))
            .map_or(0, |s| s.len() as u32);
        out.push(LinkFlows {
            from: name(node),
            to: far.map_or_else(String::new, name),
            util: s.tx_bytes as f64 * 8.0 / cap_bits,
            flows,
        });
    }
    out
}
