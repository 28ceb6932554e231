//! A fleet of RC WRITE flows on one fabric: what the fat-tree permutation ([`crate::permutation`])
//! and csg-htsim's connection matrices ([`crate::matrix`]) both run. Each flow is a real RC QP
//! pair through the same World, switches, PFC and transport the lessons use, posting one RDMA
//! WRITE from a synthetic source (generated content, no bytes stored) into a synthetic sink that
//! checks every byte against the sender's generator, so integrity is checked without holding
//! the data.
//!
//! Flows start at a time or when a trigger fires; a flow's completion at the sender (every
//! byte acknowledged) and the placement of its last byte at the receiver can activate
//! triggers, which is how htsim files chain the steps of a collective. Completions, placements
//! and triggers are looked at every microsecond of simulated time (the FCTs' resolution):
//! looking after every event would cost more than the events themselves.

use std::collections::BTreeMap;

use crate::world::{Endpoint, RcOptions, World, WorldError};
use engine::Budget;
use scenario::Plan;
use scenario::matrix::{Start, Trigger, TriggerId, TriggerKind};
use units::{SimDuration, SimTime};
use verbs::{
    AccessFlags, WcStatus,
    wr::{SendWr, Sge},
};

/// One flow: `bytes` written over RC from `src` to `dst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Bytes written (1..=2^31).
    pub bytes: u64,
    /// When it starts (times are after the data phase begins).
    pub start: Start,
    /// Activated when the WRITE completes at the sender.
    pub send_done: Option<TriggerId>,
    /// Activated when the last byte is placed at the receiver.
    pub recv_done: Option<TriggerId>,
}

/// What became of one flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowOutcome {
    /// When it was posted, ps after the data phase began; `None`: it never started (its
    /// trigger never fired).
    pub started_ps: Option<u64>,
    /// Flow completion time (post to sender completion), ps, and the completion's status.
    pub fct: Option<(u64, WcStatus)>,
    /// Request packets the sender sent (first transmissions and resends).
    pub packets_sent: u64,
    /// Bytes written at the receiver (resends count again).
    pub bytes_received: u64,
    /// Bytes that differ from the sender's generated content.
    pub mismatched_bytes: u64,
    /// Every byte arrived, each one the sender's.
    pub intact: bool,
}

/// What happened to the fleet.
#[derive(Clone, Debug, Default)]
pub struct FleetOutcome {
    /// One per flow, in flow order.
    pub flows: Vec<FlowOutcome>,
    /// Events of the data phase.
    pub events: u64,
    /// Simulated time of the data phase, ps.
    pub sim_ps: u64,
    /// Wall time of the setup (QP connections, buffers), ns.
    pub setup_wall_ns: u64,
    /// Wall time of the data phase, ns.
    pub wall_ns: u64,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// PAUSE frames sent.
    pub pauses: u64,
}

/// What a fleet run writes beside its report, and on how many threads it may run.
#[derive(Clone, Copy, Debug)]
pub struct Outputs<'a> {
    /// Every frame to this pcap (keeps the world on one thread: each partition would see
    /// only its own frames).
    pub pcap: Option<&'a std::path::Path>,
    /// The run's first [`crate::report::MAX_TRACE_RECORDS`] trace records (host stages and
    /// fabric events, setup included) and how many were left out, in the one order
    /// [`World::take_trace`] gives for any split.
    pub trace: Option<&'a std::sync::Mutex<crate::world::WholeTrace>>,
    /// Split the fabric to run on up to this many threads ([`World::new_partitioned`]).
    pub threads: u32,
}

impl Outputs<'_> {
    /// No pcap, no trace, on `threads`.
    pub fn threads(threads: u32) -> Outputs<'static> {
        Outputs {
            pcap: None,
            trace: None,
            threads,
        }
    }
}

/// A World built from a plan for a fleet run, with the pcap (if asked for) being written.
pub struct FleetWorld<'a> {
    /// The world.
    pub world: World,
    capture: Option<crate::output::Output>,
    trace: Option<&'a std::sync::Mutex<crate::world::WholeTrace>>,
}

fn setup_err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Setup(e.to_string())
}

impl<'a> FleetWorld<'a> {
    /// The plan's topology, links, switches (PFC from `lossless`, ECMP from
    /// `switch.ecmp_hash`), NIC and host profiles (with `host`'s overrides) and run budget,
    /// with `out`'s pcap (to a temporary name, renamed into place by [`FleetWorld::finish`],
    /// so a failed run leaves no pcap under the final name), trace and threads.
    pub fn new(
        plan: &Plan,
        host: &BTreeMap<String, u64>,
        out: &Outputs<'a>,
    ) -> Result<FleetWorld<'a>, WorldError> {
        let topo = plan.topology()?;
        let cfg = plan.fabric_config();
        let mut profile = plan.host_profile();
        profile
            .apply_overrides(host)
            .map_err(|e| WorldError::Setup(format!("host profile: {e}")))?;
        let mut world = match out.pcap {
            Some(_) if out.threads > 1 => {
                let mut w = World::new(&topo, cfg, profile, plan.nic_profile())?;
                w.run_single_because("a pcap is written by a world on one thread");
                w
            }
            Some(_) => World::new(&topo, cfg, profile, plan.nic_profile())?,
            None => World::new_partitioned(&topo, cfg, profile, plan.nic_profile(), out.threads)?,
        };
        crate::report::run::configure(&mut world, plan, &profile);
        if out.trace.is_some() {
            world.keep_trace(crate::report::MAX_TRACE_RECORDS);
        }
        let capture = match out.pcap {
            None => None,
            Some(path) => {
                let o = crate::output::Output::create(path).map_err(setup_err)?;
                let w = o.writer().map_err(setup_err)?;
                world.capture_pcap(Box::new(w)).map_err(setup_err)?;
                Some(o)
            }
        };
        Ok(FleetWorld {
            world,
            capture,
            trace: out.trace,
        })
    }

    /// Ends the pcap, if one is being written, and renames it into place; hands the trace
    /// records to the sink.
    pub fn finish(mut self) -> Result<World, WorldError> {
        if let Some(o) = self.capture.take() {
            self.world.finish_pcap().map_err(setup_err)?;
            o.commit().map_err(setup_err)?;
        }
        if let Some(sink) = self.trace {
            let t = self.world.take_trace();
            sink.lock().expect("no panic holds the sink").append(t);
        }
        Ok(self.world)
    }
}

/// One flow's QPs and buffers.
struct Wired {
    a: Endpoint,
    b: Endpoint,
    src: u64,
    lkey: u32,
    sink: u64,
    rkey: u32,
}

/// Runs `flows` in `w` until every started flow has completed and nothing is left to start.
/// RC options from the plan (`rdma.mtu_bytes`, `rdma.timeout`, `rdma.retry_cnt`); buffer `i`'s
/// content derives from `seed ^ (i + 1)`.
pub fn run(
    w: &mut World,
    plan: &Plan,
    flows: &[Flow],
    triggers: &BTreeMap<TriggerId, Trigger>,
) -> Result<FleetOutcome, WorldError> {
    let seed = plan.seed;
    let o = RcOptions {
        mtu: plan.rdma_mtu(),
        timeout: plan.rdma.timeout,
        retry_cnt: plan.rdma.retry_cnt,
        ..RcOptions::default()
    };
    let setup = std::time::Instant::now();
    let mut pairs: Vec<(Endpoint, Endpoint)> = Vec::with_capacity(flows.len());
    for f in flows {
        pairs.push(w.connect_rc(f.src, f.dst, &o)?);
    }
    // Buffers: a synthetic source per sender, a synthetic sink per receiver.
    let mut wired = Vec::with_capacity(flows.len());
    for (i, ((a, b), f)) in pairs.into_iter().zip(flows).enumerate() {
        let len = f.bytes.max(1);
        let content = seed ^ (i as u64 + 1);
        let src = w
            .verbs(a.host)
            .memory_mut()
            .alloc_synthetic(len, content)
            .map_err(setup_err)?;
        let smr = w
            .reg_mr(a.host, a.pd, src, len, AccessFlags::LOCAL_WRITE)
            .map_err(setup_err)?;
        let sink = w
            .verbs(b.host)
            .memory_mut()
            .alloc_synthetic(len, content)
            .map_err(setup_err)?;
        let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        let dmr = w
            .reg_mr(b.host, b.pd, sink, len, access)
            .map_err(setup_err)?;
        wired.push(Wired {
            a,
            b,
            src,
            lkey: smr.lkey,
            sink,
            rkey: dmr.rkey,
        });
    }
    let setup_wall_ns = setup.elapsed().as_nanos() as u64;
    let wall = std::time::Instant::now();
    let start = w.now();
    let mut out = FleetOutcome {
        flows: vec![FlowOutcome::default(); flows.len()],
        setup_wall_ns,
        ..Default::default()
    };
    // Timed starts, latest first (popped from the back), ties in flow order.
    let mut timed: Vec<(u64, usize)> = flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match f.start {
            Start::At(ps) => Some((ps, i)),
            Start::Trigger(_) => None,
        })
        .collect();
    timed.sort_by(|x, y| y.cmp(x));
    let mut waiting: BTreeMap<TriggerId, Vec<usize>> = BTreeMap::new();
    for (i, f) in flows.iter().enumerate() {
        if let Start::Trigger(t) = f.start {
            waiting.entry(t).or_default().push(i);
        }
    }
    let mut activations: BTreeMap<TriggerId, u32> = BTreeMap::new();
    let mut placed = vec![false; flows.len()];
    let post = |w: &mut World, out: &mut FleetOutcome, i: usize, now: SimTime| {
        let x = &wired[i];
        let sge = vec![Sge {
            addr: x.src,
            length: flows[i].bytes.max(1) as u32,
            lkey: x.lkey,
        }];
        out.flows[i].started_ps = Some((now - start).as_ps());
        w.post_send(
            x.a.host,
            x.a.qpn,
            &[SendWr::write(1, sge, x.sink, x.rkey).signaled()],
        )
        .map_err(setup_err)
    };
    let mut unfinished = flows.len();
    // The plan's run budget (set by `configure`) bounds simulated time, events and wall time.
    let budget = Budget::UNLIMITED;
    let step = SimDuration::from_us(1);
    let mut t = start;
    let mut seen = w.send_completions();
    loop {
        // Flows due now, in flow order.
        while let Some(&(ps, i)) = timed.last() {
            if start + SimDuration::from_ps(ps) > w.now().max(start) {
                break;
            }
            timed.pop();
            post(w, &mut out, i, w.now().max(start))?;
        }
        if unfinished == 0 {
            break;
        }
        let next_poll = t + step;
        let target = match timed.last() {
            Some(&(ps, _)) => next_poll.min(start + SimDuration::from_ps(ps)),
            None => next_poll,
        };
        let st = w.run_until(target, &budget)?;
        out.events += st.events;
        let idle = st.events == 0 && w.pending_events() == 0;
        if target < next_poll {
            continue;
        }
        t = next_poll;
        let now = t;
        let mut fired: Vec<TriggerId> = Vec::new();
        if w.send_completions() != seen {
            seen = w.send_completions();
            for (i, x) in wired.iter().enumerate() {
                if out.flows[i].fct.is_some()
                    || w.host(x.a.host)
                        .verbs
                        .cq(x.a.cq)
                        .is_none_or(|q| q.is_empty())
                {
                    continue;
                }
                for wc in w.poll_cq(x.a.host, x.a.cq, 4).map_err(setup_err)? {
                    let began = start + SimDuration::from_ps(out.flows[i].started_ps.unwrap_or(0));
                    out.flows[i].fct = Some(((now - began).as_ps(), wc.status));
                    unfinished -= 1;
                    fired.extend(flows[i].send_done);
                }
            }
        }
        for (i, f) in flows.iter().enumerate() {
            let Some(tr) = f.recv_done else { continue };
            if placed[i] || out.flows[i].started_ps.is_none() {
                continue;
            }
            let x = &wired[i];
            let bytes = w
                .verbs(x.b.host)
                .memory()
                .synthetic_stats(x.sink)
                .map_or(0, |s| s.bytes_written);
            if bytes >= f.bytes.max(1) {
                placed[i] = true;
                fired.push(tr);
            }
        }
        for tr in fired {
            let n = activations.entry(tr).or_insert(0);
            *n += 1;
            let fires = match triggers.get(&tr).map(|t| t.kind) {
                Some(TriggerKind::Oneshot) => *n == 1,
                Some(TriggerKind::Barrier { count }) => *n == count,
                None => false,
            };
            if fires {
                for i in waiting.remove(&tr).unwrap_or_default() {
                    post(w, &mut out, i, now)?;
                }
            }
        }
        if idle && timed.is_empty() && w.pending_events() == 0 {
            break;
        }
    }
    out.wall_ns = wall.elapsed().as_nanos() as u64;
    out.sim_ps = (w.now() - start).as_ps();
    for (i, x) in wired.iter().enumerate() {
        let f = &mut out.flows[i];
        if let Some(r) = w.host(x.a.host).requester_counters(x.a.qpn) {
            f.packets_sent = r.packets_sent;
        }
        if let Some(s) = w.verbs_ref(x.b.host).memory().synthetic_stats(x.sink) {
            f.bytes_received = s.bytes_written;
            f.mismatched_bytes = s.mismatched_bytes;
            f.intact = s.mismatched_bytes == 0 && s.bytes_written >= flows[i].bytes.max(1);
        }
    }
    let fabric = w.joined();
    out.drops = fabric.counters().drops();
    out.pauses = fabric.ports().map(|(.., s)| s.pauses_sent).sum();
    Ok(out)
}

/// Links between two hosts of a k-ary fat tree: 2 under one edge switch, 4 within a pod, 6
/// across the core. Hosts are numbered edge by edge, pod by pod (as csg-htsim numbers them).
pub fn fat_tree_links(k: u64, s: u32, d: u32) -> u64 {
    let half = (k / 2).max(1);
    let (s, d) = (u64::from(s), u64::from(d));
    if s / half == d / half {
        2
    } else if s / (half * half) == d / (half * half) {
        4
    } else {
        6
    }
}

/// The ideal flow completion time: `bytes` in MTU-sized frames at line rate, plus one frame's
/// trip over `links` links (its serialisation and the cable's propagation, 5 ns/m, at each).
/// 98 bytes of framing per packet: preamble and gap 20, Ethernet 14 + FCS 4, IPv4 20, UDP 8,
/// BTH 12, RETH 16, ICRC 4.
pub fn ideal_fct_ps(bytes: u64, mtu: u32, link_gbps: u64, cable_m: u64, links: u64) -> u64 {
    let frame = (u64::from(mtu) + 98) * 8 * 1_000 / link_gbps.max(1);
    let packets = bytes.max(1).div_ceil(u64::from(mtu).max(1));
    packets * frame + links * (frame + cable_m * 5_000)
}
