//! An N→1 incast of RDMA WRITE streams through one switch: the experiment behind DCQCN's
//! acceptance and the congestion lab. Every sender has one RC QP to the last host and keeps
//! writing; the report gives each sender's goodput per window, and with `observe` the switch
//! queue, the PAUSE frames, the CNPs and every DCQCN rate change.

use crate::world::{RcOptions, World, WorldError};
use engine::{Budget, PacketClass, PacketStage, TraceRecord, Tracer, VecObserver};
use fabric::{EcnConfig, FabricConfig, LinkConfig, PfcConfig, Scheduling, Topology};
use std::collections::BTreeMap;
use transport::roce::dcqcn::DcqcnParams;
use units::{Bandwidth, FlowId, SimDuration, SimTime};

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct IncastConfig {
    /// Hosts writing to the one receiver (1–63).
    pub senders: u32,
    /// Every link's rate, Gb/s.
    pub link_gbps: u64,
    /// DCQCN at the NICs, if any.
    pub dcqcn: Option<DcqcnParams>,
    /// ECN marking at the switch (on RoCE's priority 3), if any.
    pub ecn: Option<EcnConfig>,
    /// PFC on priority 3, if any.
    pub pfc: Option<PfcConfig>,
    /// Simulated time to run.
    pub duration: SimDuration,
    /// Goodput is reported per window of this length.
    pub window: SimDuration,
    /// Record the switch queue, CNPs and rate changes (costs time).
    pub observe: bool,
}

/// What happened.
#[derive(Clone, Debug, Default)]
pub struct IncastReport {
    /// Per window, each sender's goodput in Gb/s (payload of first transmissions).
    pub goodput_gbps: Vec<Vec<f64>>,
    /// Per window, what each sender's QP delivered in order at the receiver, Gb/s (the
    /// responder's expected PSN advancing: drops and resends do not count).
    pub delivered_gbps: Vec<Vec<f64>>,
    /// Per window, the deepest the receiver's egress queue was when a data frame joined it
    /// (with `observe`).
    pub peak_queue_bytes: Vec<u64>,
    /// PAUSE frames sent anywhere.
    pub pauses: u64,
    /// Per window, PAUSE frames sent anywhere so far.
    pub pauses_cum: Vec<u64>,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// When the writes started (windows count from here).
    pub start: SimTime,
    /// CNPs each sender's QP received the notification for, in order of leaving the receiver
    /// (with `observe`): per sender, the departure times.
    pub cnp_times: Vec<Vec<SimTime>>,
    /// DCQCN rate changes (with `observe`): time, sender, Rc kbit/s, α as a fraction.
    pub rates: Vec<(SimTime, u32, u64, f64)>,
    /// Events the run took.
    pub events: u64,
    /// The payload rate of one link in 4 KiB packets, Gb/s: the bottleneck.
    pub bottleneck_gbps: f64,
}

/// The fabric's side of an observed run.
#[derive(Default)]
struct SwitchLog {
    switch: u32,
    data_flows: Vec<FlowId>,
    window_ps: u64,
    /// When the writes start: window k covers [start + k·window, start + (k+1)·window).
    start_ps: u64,
    peak: BTreeMap<u64, u64>,
    cnps: BTreeMap<u32, Vec<SimTime>>,
    receiver: u32,
}

impl engine::Observer for SwitchLog {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        let TraceRecord::Packet {
            stage,
            node,
            pkt,
            queue_bytes,
            ..
        } = rec
        else {
            return;
        };
        if *stage == PacketStage::Enqueued
            && node.0 == self.switch
            && self.data_flows.contains(&pkt.flow)
        {
            let b = self
                .peak
                .entry(at.as_ps().saturating_sub(self.start_ps) / self.window_ps)
                .or_default();
            *b = (*b).max(*queue_bytes);
        }
        if *stage == PacketStage::Dequeued
            && pkt.class == PacketClass::RoceCnp
            && node.0 == self.receiver
        {
            self.cnps.entry(pkt.flow.0).or_default().push(at);
        }
    }
}

/// Payload bytes per packet: the QPs' 4096-byte path MTU.
const PAYLOAD: u64 = 4096;
/// A full WRITE MIDDLE packet on the wire: the largest RoCE frame ([`fabric::MAX_FRAME_BYTES`],
/// a FIRST packet with its 16-byte RETH) less the RETH, plus preamble and inter-frame gap.
const MIDDLE_ON_WIRE: u64 = fabric::MAX_FRAME_BYTES - 16 + fabric::config::PREAMBLE_IFG_BYTES;

/// Bytes a responder took in order while its expected PSN moved from `from` to `to`, every
/// packet full (`payload` bytes): the streams' messages are whole multiples of the MTU.
/// PSNs are 24 bits and wrap.
pub(crate) fn delivered_bytes(from: u32, to: u32, payload: u64) -> u64 {
    (to.wrapping_sub(from) & 0xff_ffff) as u64 * payload
}

/// Runs the incast.
pub fn run(c: &IncastConfig) -> Result<IncastReport, WorldError> {
    Ok(run_inner(c, false)?.0)
}

/// Runs the incast and records the fabric view of it (sampled every window), as the
/// congestion lab's page draws it. The recorder watches beside the run's own observer, so
/// the report is the one [`run`] gives.
pub fn run_with_view(
    c: &IncastConfig,
) -> Result<(IncastReport, crate::labs::fabric_view::FabricView), WorldError> {
    let (rep, view) = run_inner(c, true)?;
    Ok((rep, view.expect("recorded when asked")))
}

fn run_inner(
    c: &IncastConfig,
    with_view: bool,
) -> Result<(IncastReport, Option<crate::labs::fabric_view::FabricView>), WorldError> {
    use crate::labs::fabric_view::ViewRecorder;
    let n = c.senders.clamp(1, 63);
    let link = LinkConfig::new(Bandwidth::gbps(c.link_gbps.max(1)), 3);
    let topo = Topology::star(n as u64 + 1, link)?;
    let mut cfg = FabricConfig::default();
    cfg.switch.ecn = c.ecn;
    cfg.switch.pfc = c.pfc;
    cfg.switch.queue_cap_bytes = 8 << 20;
    // CNPs in strict priority 6, as NVIDIA's RoCE default configures switches.
    cfg.switch.scheduling = Scheduling::roce_default();
    let mut w = World::new(&topo, cfg, Default::default(), Default::default())?;
    w.set_dcqcn(c.dcqcn);
    let rx = n;
    let o = RcOptions::default();
    // Each sender WRITEs 4 MiB chunks from one buffer into one on the receiver; both are
    // registered in the bring-up (the receiver registers one per sender).
    const CHUNK: u64 = 4 << 20;
    let mut conns = Vec::new();
    for h in 0..n {
        conns.push(w.connect_rc_buffered(h, rx, &o, CHUNK)?);
    }
    let pairs: Vec<_> = conns.iter().map(|c| c.ends).collect();
    if c.observe {
        let hosts: Vec<u32> = (0..=n).map(|h| w.host(h).node.0).collect();
        let switch = w
            .fabric()
            .ports()
            .map(|(node, ..)| node.0)
            .find(|x| !hosts.contains(x))
            .unwrap_or(0);
        let log = SwitchLog {
            switch,
            receiver: w.host(rx).node.0,
            data_flows: pairs
                .iter()
                .map(|(a, _)| World::flow_of(a.host, a.qpn))
                .collect(),
            window_ps: c.window.as_ps().max(1),
            // Posting the writes below takes no simulated time.
            start_ps: w.now().as_ps(),
            ..Default::default()
        };
        w.fabric_mut().set_tracer(Tracer::new(log));
        w.set_tracer(Tracer::new(VecObserver::default()));
    }
    // Enough 4 MiB WRITEs for the whole run at line rate.
    let line_bytes = c.link_gbps * c.duration.as_ps() / 8_000;
    let wrs_each = (line_bytes.div_ceil(CHUNK) + 2).min(1000);
    for conn in &conns {
        w.post_writes(conn, &vec![CHUNK; wrs_each as usize], false)?;
    }
    let start = w.now();
    let windows = (c.duration.as_ps() / c.window.as_ps().max(1)).max(1);
    let mut view = with_view.then(|| {
        // The switch log, if any, goes on seeing every record through the recorder.
        let inner = w
            .fabric_mut()
            .tracer_mut()
            .take::<SwitchLog>()
            .map(|l| l as Box<dyn engine::Observer>);
        ViewRecorder::attach_chained(w.fabric_mut(), &topo, start, c.window, inner)
    });
    let sent = |w: &World| -> Vec<u64> {
        pairs
            .iter()
            .map(|(a, _)| {
                w.host(a.host)
                    .requester_counters(a.qpn)
                    .map_or(0, |r| r.first_transmissions)
            })
            .collect()
    };
    let mut last = sent(&w);
    let expected = |w: &World| -> Vec<u32> {
        pairs
            .iter()
            .map(|(_, b)| w.host(b.host).responder_expected_psn(b.qpn).unwrap_or(0))
            .collect()
    };
    let mut last_psn = expected(&w);
    let mut rep = IncastReport {
        start,
        bottleneck_gbps: c.link_gbps as f64 * PAYLOAD as f64 / MIDDLE_ON_WIRE as f64,
        ..Default::default()
    };
    for k in 1..=windows {
        let st = w.run_until(start + c.window * k, &Budget::default())?;
        rep.events += st.events;
        let now = sent(&w);
        let secs_ps = c.window.as_ps() as f64;
        rep.goodput_gbps.push(
            now.iter()
                .zip(&last)
                .map(|(x, y)| (x - y) as f64 * 4096.0 * 8.0 / secs_ps * 1e3)
                .collect(),
        );
        last = now;
        let psn = expected(&w);
        rep.delivered_gbps.push(
            psn.iter()
                .zip(&last_psn)
                .map(|(x, y)| delivered_bytes(*y, *x, PAYLOAD) as f64 * 8.0 / secs_ps * 1e3)
                .collect(),
        );
        last_psn = psn;
        rep.pauses_cum.push(w.fabric().counters().pauses_sent);
        if let Some(v) = view.as_mut() {
            v.sample(w.fabric_mut(), c.window * k);
        }
    }
    let view = view.map(|v| {
        let (view, inner) = v.finish_chained(w.fabric_mut());
        if let Some(log) =
            inner.and_then(|i| (i as Box<dyn std::any::Any>).downcast::<SwitchLog>().ok())
        {
            w.fabric_mut().set_tracer(Tracer::new(*log));
        }
        view
    });
    rep.pauses = w.fabric().ports().map(|(.., s)| s.pauses_sent).sum();
    rep.drops = w.fabric().counters().drops();
    if c.observe {
        if let Some(log) = w.fabric_mut().tracer_mut().take::<SwitchLog>() {
            rep.peak_queue_bytes = (0..windows)
                .map(|k| log.peak.get(&k).copied().unwrap_or(0))
                .collect();
            // The receiver's CNP for sender h travels on the receiver QP's flow.
            rep.cnp_times = pairs
                .iter()
                .map(|(_, b)| {
                    log.cnps
                        .get(&World::flow_of(b.host, b.qpn).0)
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
        }
        if let Some(obs) = w.tracer_mut().take::<VecObserver>() {
            let node_to_sender: BTreeMap<u32, u32> =
                (0..n).map(|h| (w.host(h).node.0, h)).collect();
            for (t, r) in obs.records.iter() {
                if let TraceRecord::RateChange {
                    host,
                    rate_kbps,
                    alpha,
                    ..
                } = r
                    && let Some(&s) = node_to_sender.get(&host.0)
                {
                    rep.rates
                        .push((*t, s, *rate_kbps, *alpha as f64 / (1u64 << 20) as f64));
                }
            }
        }
    }
    Ok((rep, view))
}
