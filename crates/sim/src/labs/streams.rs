//! RC WRITE streams between chosen hosts of any fabric, sampled as time passes: what the
//! hol, storm and deadlock labs run. Each flow is one RC QP pair writing 1 MiB WRITEs back to
//! back; what a flow has *delivered* is read from the responder's expected PSN (packets that
//! landed in order), so a flow stuck behind a pause or a deadlock shows no progress even
//! while its requester still has packets in flight.

use super::{LabError, PRIO};
use crate::world::{Connected, Endpoint, RcOptions, World};
use engine::Budget;
use fabric::{FabricConfig, Topology};
use units::{NodeId, PortId, SimDuration, SimTime};

/// One WRITE's size.
const CHUNK: u64 = 1 << 20;

/// The streams and the world they run in.
pub(crate) struct Streams {
    pub w: World,
    pub topo: Topology,
    /// Per flow: (requester end, responder end).
    pub pairs: Vec<(Endpoint, Endpoint)>,
    /// Per flow: the connection with its two buffers.
    conns: Vec<Connected>,
    /// Bytes each packet carries (the path MTU).
    mtu: u64,
    last_psn: Vec<u32>,
    /// Bytes each flow has delivered in order so far.
    pub delivered: Vec<u64>,
    /// Events processed so far.
    pub events: u64,
    /// When the streams started (after connection setup).
    pub start: SimTime,
}

impl Streams {
    /// Builds the world and connects one RC QP pair per `(src, dst)` host ordinal.
    pub fn new(
        topo: Topology,
        cfg: FabricConfig,
        flows: &[(u32, u32)],
        o: &RcOptions,
    ) -> Result<Streams, LabError> {
        let mut w = World::new(&topo, cfg, Default::default(), Default::default())
            .map_err(LabError::sim)?;
        // One CHUNK-byte buffer per end, registered in the bring-up; every WRITE of the flow
        // goes from the one to the other.
        let mut conns = Vec::new();
        for &(a, b) in flows {
            conns.push(
                w.connect_rc_buffered(a, b, o, CHUNK)
                    .map_err(LabError::sim)?,
            );
        }
        let pairs: Vec<_> = conns.iter().map(|c| c.ends).collect();
        let last_psn = pairs
            .iter()
            .map(|(_, b)| expected(&w, b))
            .collect::<Vec<_>>();
        let start = w.now();
        Ok(Streams {
            w,
            topo,
            delivered: vec![0; pairs.len()],
            pairs,
            conns,
            mtu: o.mtu.bytes() as u64,
            last_psn,
            events: 0,
            start,
        })
    }

    /// Posts WRITEs on flow `i`: `bytes` in all, in 1 MiB WRITEs (at most 1000).
    pub fn post(&mut self, i: usize, bytes: u64) -> Result<(), LabError> {
        let count = bytes.div_ceil(CHUNK).clamp(1, 1000);
        let sizes: Vec<u64> = (0..count)
            .map(|k| {
                if k + 1 == count {
                    bytes - CHUNK * (count - 1)
                } else {
                    CHUNK
                }
                .min(CHUNK)
            })
            .collect();
        self.w
            .post_writes(&self.conns[i], &sizes, false)
            .map_err(LabError::sim)
    }

    /// Posts enough WRITEs on every flow to keep it busy at `gbps` for `d`.
    pub fn post_all_for(&mut self, gbps: u64, d: SimDuration) -> Result<(), LabError> {
        let bytes = gbps * d.as_ps() / 8_000 + 2 * CHUNK;
        for i in 0..self.pairs.len() {
            self.post(i, bytes)?;
        }
        Ok(())
    }

    /// Runs until `t` (relative to the start) and brings `delivered` up to date; returns
    /// the bytes each flow delivered in this stretch.
    pub fn run_to(&mut self, t: SimDuration) -> Result<Vec<u64>, LabError> {
        let st = self
            .w
            .run_until(self.start + t, &Budget::default())
            .map_err(LabError::sim)?;
        self.events += st.events;
        let mut out = Vec::with_capacity(self.pairs.len());
        for (i, (_, b)) in self.pairs.iter().enumerate() {
            let now = expected(&self.w, b);
            // The streams' messages are whole MiB: every packet is full.
            let bytes = crate::incast::delivered_bytes(self.last_psn[i], now, self.mtu);
            self.last_psn[i] = now;
            self.delivered[i] += bytes;
            out.push(bytes);
        }
        Ok(out)
    }

    /// Node id of the topology node called `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.topo
            .nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| NodeId(i as u32))
    }

    /// PAUSE frames (non-zero quanta) the given ports have sent so far.
    pub fn pauses_sent(&self, ports: &[Option<(NodeId, PortId)>]) -> u64 {
        ports
            .iter()
            .flatten()
            .filter_map(|&(n, p)| self.w.fabric().port_stats(n, p))
            .map(|st| st.pauses_sent)
            .sum()
    }

    /// Kilobytes waiting in `port`'s egress queue for RoCE's priority now.
    pub fn queue_kb(&self, port: Option<(NodeId, PortId)>) -> f64 {
        port.map_or(0, |(n, p)| self.w.fabric().queue_bytes(n, p, PRIO)) as f64 / 1e3
    }

    /// The share of `d` that `port`'s egress was held by PAUSE frames on RoCE's priority, %.
    pub fn paused_pct(&self, port: Option<(NodeId, PortId)>, d: SimDuration) -> f64 {
        let held = port.map_or(0, |(n, p)| {
            self.w.fabric().pause_time(n, p, PRIO, self.w.now()).0
        });
        (held as f64 / d.as_ps().max(1) as f64 * 100.0).min(100.0)
    }

    /// The port of node `from` whose cable leads to node `to`.
    pub fn port(&self, from: &str, to: &str) -> Option<(NodeId, PortId)> {
        let (a, b) = (self.node(from)?, self.node(to)?);
        self.w.fabric().port_to(a, b).map(|p| (a, p))
    }
}

fn expected(w: &World, b: &Endpoint) -> u32 {
    w.host(b.host).responder_expected_psn(b.qpn).unwrap_or(0)
}

/// Gb/s of `bytes` over `d`.
pub(crate) fn gbps(bytes: u64, d: SimDuration) -> f64 {
    if d.as_ps() == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 / d.as_ps() as f64 * 1e3
}
