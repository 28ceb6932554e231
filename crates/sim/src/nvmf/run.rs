//! The fio driver: builds the world, runs every job's closed loop of `iodepth` IOs through the
//! chosen transport, and measures what fio measures.
//!
//! The World owns the packets' and the host model's events; this driver owns an agenda of its
//! own (reads a socket's woken reader does, later than the data's arrival) and the device's
//! completions. It runs the World until the next of those is due, or until a transport has
//! something for an application to do (a CQE in a CQ, bytes for a blocked reader, room in a
//! send buffer), whichever comes first; then it acts at the World's clock.

use super::capsule::IoOpcode;
use super::costs;
use super::device::{Device, DeviceCmd};
use super::rdma::Rdma;
use super::report::{CpuSplit, FioReport, LatencySummary, Utilisation};
use super::tcp::Tcp;
use super::workload::{IoSpec, JobGen};
use super::{FioConfig, IoEngine, Limit};
use crate::world::{World, WorldError};
use engine::Budget;
use fabric::{LinkConfig, Topology};
use std::collections::BTreeMap;
use units::{Bandwidth, SimDuration, SimTime};

/// No completion for this long while IOs are outstanding and nothing else is due: stalled.
const STALL: SimDuration = SimDuration::from_ms(100);

/// The target's host ordinal.
pub(super) const TARGET: u32 = 0;

/// One slot of a job's queue (its index is the command identifier).
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    /// When fio started submitting it.
    pub issued: SimTime,
    /// The IO.
    pub io: IoSpec,
}

/// One fio job: an initiator host, its generator, its queue.
#[derive(Clone, Debug)]
pub(super) struct Job {
    pub host: u32,
    pub generator: JobGen,
    pub slots: Vec<Slot>,
    pub issued: u64,
}

/// Work the driver does later.
#[derive(Clone, Copy, Debug)]
pub(super) enum Action {
    /// A socket's reader has been woken: read it (NVMe/TCP; `target` names the side).
    ReadSock { conn: usize, target: bool },
}

/// The driver's state apart from the transport's.
pub(super) struct Run {
    pub w: World,
    pub cfg: FioConfig,
    pub jobs: Vec<Job>,
    pub device: Device,
    agenda: BTreeMap<(SimTime, u64), Action>,
    seq: u64,
    /// Issuing stops at this time (runtime) — IOs completing later are not counted.
    stop_at: Option<SimTime>,
    pub lat: Vec<u64>,
    pub reads: u64,
    pub writes: u64,
    /// IOs counted per initiator (index 0 = host 1).
    pub per_initiator: Vec<u64>,
    pub last_done: SimTime,
    /// IOs issued and not yet completed.
    outstanding: u64,
}

/// The transport between the jobs and the device.
pub(super) enum Transport {
    Rdma(Rdma),
    Tcp(Tcp),
    Local,
}

impl Run {
    /// Schedules `a` at `at`.
    pub fn later(&mut self, at: SimTime, a: Action) {
        self.seq += 1;
        self.agenda.insert((at, self.seq), a);
    }

    /// The device tag of job `job`'s slot `slot`.
    pub fn tag(job: usize, slot: usize) -> u64 {
        ((job as u64) << 16) | slot as u64
    }

    /// The (job, slot) of a device tag.
    pub fn untag(tag: u64) -> (usize, usize) {
        ((tag >> 16) as usize, (tag & 0xffff) as usize)
    }

    fn may_issue(&self, job: usize) -> bool {
        match self.cfg.limit {
            Limit::Runtime(_) => self.stop_at.is_none_or(|t| self.w.now() < t),
            Limit::Ios(n) => self.jobs[job].issued < n,
        }
    }

    /// fio queues the slot's next IO and the host driver builds the command; returns the IO
    /// and when the command is ready to go, or `None` when the job is done issuing.
    pub fn issue(&mut self, job: usize, slot: usize) -> Option<(IoSpec, SimTime)> {
        if !self.may_issue(job) {
            return None;
        }
        let h = self.jobs[job].host;
        let io = self.jobs[job].generator.next_io();
        let (start, _) = self
            .w
            .app_work(h, costs::FIO_QUEUE, engine::Stage::FioQueue);
        let (_, ready) = self
            .w
            .app_work(h, costs::HOST_BUILD, engine::Stage::NvmeBuild);
        let j = &mut self.jobs[job];
        j.slots[slot] = Slot { issued: start, io };
        j.issued += 1;
        self.outstanding += 1;
        Some((io, ready))
    }

    /// The host driver completes the slot's command and fio reaps it.
    pub fn complete(&mut self, job: usize, slot: usize) {
        let h = self.jobs[job].host;
        self.w
            .app_work(h, costs::HOST_COMPLETE, engine::Stage::NvmeComplete);
        let (_, end) = self.w.app_work(h, costs::FIO_REAP, engine::Stage::FioReap);
        self.outstanding -= 1;
        if self.stop_at.is_some_and(|t| end > t) {
            return;
        }
        let s = self.jobs[job].slots[slot];
        self.lat.push((end - s.issued).as_ps());
        match s.io.op {
            super::capsule::IoOpcode::Read => self.reads += 1,
            super::capsule::IoOpcode::Write => self.writes += 1,
        }
        self.last_done = self.last_done.max(end);
        if let Some(n) = self.per_initiator.get_mut(h as usize - 1) {
            *n += 1;
        }
    }
}

impl Transport {
    fn ready(&self, w: &World) -> bool {
        match self {
            Transport::Rdma(r) => r.ready(w),
            Transport::Tcp(t) => t.ready(w),
            Transport::Local => false,
        }
    }

    fn poll(&mut self, run: &mut Run) -> Result<(), WorldError> {
        match self {
            Transport::Rdma(r) => r.poll(run),
            Transport::Tcp(t) => t.poll(run),
            Transport::Local => Ok(()),
        }
    }

    /// Starts (or restarts) slot `slot` of job `job`.
    pub(super) fn start_io(
        &mut self,
        run: &mut Run,
        job: usize,
        slot: usize,
    ) -> Result<(), WorldError> {
        let Some((io, ready)) = run.issue(job, slot) else {
            return Ok(());
        };
        match self {
            Transport::Rdma(r) => r.send_command(run, job, slot, io),
            Transport::Tcp(t) => t.send_command(run, job, slot, io),
            Transport::Local => {
                run.device.submit(
                    ready,
                    DeviceCmd {
                        tag: Run::tag(job, slot),
                        op: io.op,
                        bytes: io.len,
                    },
                );
                Ok(())
            }
        }
    }

    fn device_done(&mut self, run: &mut Run, cmd: DeviceCmd) -> Result<(), WorldError> {
        let (job, slot) = Run::untag(cmd.tag);
        match self {
            Transport::Rdma(r) => r.device_done(run, job, slot),
            Transport::Tcp(t) => t.device_done(run, job, slot),
            Transport::Local => {
                run.complete(job, slot);
                self.start_io(run, job, slot)
            }
        }
    }

    fn act(&mut self, run: &mut Run, a: Action) -> Result<(), WorldError> {
        match (self, a) {
            (Transport::Tcp(t), Action::ReadSock { conn, target }) => {
                t.read_sock(run, conn, target)
            }
            _ => Ok(()),
        }
    }
}

fn setup_err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Setup(e.to_string())
}

/// Runs `cfg`; `pcap`: write every frame of the data phase there. The report carries the
/// local-device run of the same job beside the fabric's (for a fabric engine).
pub fn run(cfg: &FioConfig, pcap: Option<&std::path::Path>) -> Result<FioReport, WorldError> {
    cfg.validate().map_err(WorldError::Setup)?;
    let mut rep = run_one(cfg, pcap)?;
    if cfg.ioengine != IoEngine::Local {
        let local = FioConfig {
            ioengine: IoEngine::Local,
            initiators: 1,
            ..cfg.clone()
        };
        rep.local = Some(run_one(&local, None)?.clat);
    }
    Ok(rep)
}

fn run_one(cfg: &FioConfig, pcap: Option<&std::path::Path>) -> Result<FioReport, WorldError> {
    let link = LinkConfig::new(Bandwidth::gbps(cfg.link_gbps), cfg.cable_m);
    let topo = Topology::star(cfg.initiators as u64 + 1, link)?;
    // The fabric as a scenario would build it: PFC on the RoCE priority when `pfc` is set
    // (TCP stays in a lossy class either way).
    let mut plan = scenario::Plan::default();
    plan.lossless.enabled = cfg.pfc;
    plan.topology.link_gbps = cfg.link_gbps;
    plan.topology.cable_m = cfg.cable_m;
    // The initiators and the target share one switch, one rack: the world stays whole on any
    // thread count and its `parallelism` says why (so the readers below see the one fabric).
    // A capture needs every frame in one place as well.
    let threads = if pcap.is_some() { 1 } else { cfg.threads };
    let mut w = World::new_partitioned(
        &topo,
        plan.fabric_config(),
        Default::default(),
        Default::default(),
        threads,
    )?;
    if pcap.is_some() && cfg.threads > 1 {
        w.run_single_because("a pcap is written by a world on one thread");
    }
    w.set_roce_priority(units::Priority::of(plan.lossless.priority));
    let mut jobs = Vec::new();
    for i in 0..cfg.initiators {
        for j in 0..cfg.numjobs {
            let n = jobs.len() as u32;
            jobs.push(Job {
                host: i + 1,
                generator: JobGen::new(cfg.rw, cfg.rwmixread, cfg.bs, cfg.size_bytes, cfg.seed, n),
                slots: vec![
                    Slot {
                        issued: SimTime::ZERO,
                        io: IoSpec {
                            op: super::capsule::IoOpcode::Read,
                            offset: 0,
                            len: 0,
                        },
                    };
                    cfg.iodepth as usize
                ],
                issued: 0,
            });
            let _ = j;
        }
    }
    // The capture starts before the queues connect: NVMe/RDMA's RDMA-CM exchange is what
    // tells a dissector which QPs carry NVMe.
    let capture = match pcap {
        None => None,
        Some(path) => {
            let o = crate::output::Output::create(path).map_err(setup_err)?;
            let out = o.writer().map_err(setup_err)?;
            w.capture_pcap(Box::new(out)).map_err(setup_err)?;
            Some(o)
        }
    };
    let mut fab = match cfg.ioengine {
        IoEngine::Rdma => Transport::Rdma(Rdma::connect(&mut w, cfg, &jobs)?),
        IoEngine::Tcp => Transport::Tcp(Tcp::connect(&mut w, cfg, &jobs)?),
        IoEngine::Local => Transport::Local,
    };
    // CPU accounting starts with the data phase.
    let hosts = w.host_count();
    let before: Vec<_> = (0..hosts)
        .map(|h| w.host(h).cpu().account().by_stage.clone())
        .collect();
    let cores_before: Vec<Vec<SimDuration>> = (0..hosts).map(|h| core_busy(&w, h)).collect();
    let link_before = target_link_tx(&w);
    // So do the port queues: the connection setup's frames are not the workload's.
    w.fabric_mut().restart_peak_queues();
    let start = w.now();
    let stop_at = match cfg.limit {
        Limit::Runtime(d) => Some(start + d),
        Limit::Ios(_) => None,
    };
    let mut run = Run {
        w,
        cfg: cfg.clone(),
        jobs,
        device: Device::new(cfg.device),
        agenda: BTreeMap::new(),
        seq: 0,
        stop_at,
        lat: Vec::new(),
        reads: 0,
        writes: 0,
        per_initiator: vec![0; cfg.initiators as usize],
        last_done: start,
        outstanding: 0,
    };
    let wall = std::time::Instant::now();
    let events0 = run.w.events_processed();
    for job in 0..run.jobs.len() {
        for slot in 0..cfg.iodepth as usize {
            fab.start_io(&mut run, job, slot)?;
        }
    }
    let budget = Budget::default();
    loop {
        if stop_at.is_none() && run.outstanding == 0 {
            // number_ios: every job has issued its IOs and every one has completed.
            break;
        }
        let next = [
            run.agenda.keys().next().map(|k| k.0),
            run.device.next_completion(),
            stop_at,
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else {
            // Nothing is due: the transports' events alone are left.
            if run.w.pending_events() == 0 || run.w.now() > run.last_done + STALL {
                return Err(WorldError::Setup(format!(
                    "the fio run stalled with {} IOs outstanding",
                    run.outstanding
                )));
            }
            let until = run.w.now() + SimDuration::from_ms(1);
            run.w.run_until_cond(until, &budget, |w| fab.ready(w))?;
            if fab.ready(&run.w) {
                fab.poll(&mut run)?;
            }
            continue;
        };
        if next > run.w.now() {
            run.w.run_until_cond(next, &budget, |w| fab.ready(w))?;
            if fab.ready(&run.w) {
                fab.poll(&mut run)?;
                continue;
            }
            run.w.run_until(next, &budget)?;
        }
        let now = run.w.now();
        if stop_at.is_some_and(|t| now >= t) {
            break;
        }
        for cmd in run.device.reap(now) {
            fab.device_done(&mut run, cmd.1)?;
        }
        while let Some(e) = run.agenda.first_entry() {
            if e.key().0 > now {
                break;
            }
            let a = e.remove();
            fab.act(&mut run, a)?;
        }
        if fab.ready(&run.w) {
            fab.poll(&mut run)?;
        }
    }
    let wall_ns = wall.elapsed().as_nanos() as u64;
    let events = run.w.events_processed() - events0;
    if let Some(o) = capture {
        run.w.finish_pcap().map_err(setup_err)?;
        o.commit().map_err(setup_err)?;
    }
    let elapsed = match stop_at {
        Some(t) => t - start,
        None => run.last_done - start,
    };
    let ios = run.lat.len() as u64;
    let secs = elapsed.as_ps().max(1) as f64 / 1e12;
    let cpu = |hs: std::ops::Range<u32>| {
        let mut split = CpuSplit::default();
        for h in hs {
            let b = &before[h as usize];
            for (stage, (d, _)) in &run.w.host(h).cpu().account().by_stage {
                let was = b.get(stage).map_or(0, |x| x.0.as_ps());
                let ns = (d.as_ps() - was) as f64 / 1e3;
                if stage.domain() == engine::Domain::User {
                    split.usr_ns += ns;
                } else {
                    split.sys_ns += ns;
                }
            }
        }
        let n = ios.max(1) as f64;
        CpuSplit {
            usr_ns: split.usr_ns / n,
            sys_ns: split.sys_ns / n,
        }
    };
    let (cpu_initiator, cpu_target) = if cfg.ioengine == IoEngine::Local {
        (cpu(1..hosts), CpuSplit::default())
    } else {
        (cpu(1..hosts), cpu(0..1))
    };
    let (to_target, target_tx) = target_queues(&run.w);
    let utilisation = utilisation(&run, &cores_before, link_before, elapsed);
    let op = match cfg.rw {
        super::workload::RwMode::Write | super::workload::RwMode::RandWrite => {
            super::capsule::IoOpcode::Write
        }
        _ => super::capsule::IoOpcode::Read,
    };
    Ok(FioReport {
        config: cfg.clone(),
        ios,
        reads: run.reads,
        writes: run.writes,
        ios_per_initiator: std::mem::take(&mut run.per_initiator),
        elapsed_ps: elapsed.as_ps(),
        iops: ios as f64 / secs,
        bandwidth_bps: ios as f64 * cfg.bs as f64 / secs,
        clat: LatencySummary::of(std::mem::take(&mut run.lat)),
        cpu_initiator,
        cpu_target,
        local: None,
        device_service_ps: cfg.device.service(op, cfg.bs).as_ps(),
        target_port_peak_queue_bytes: to_target,
        target_tx_peak_queue_bytes: target_tx,
        device_peak_outstanding: run.device.peak_outstanding as u64,
        utilisation,
        drops: run.w.fabric().counters().drops(),
        pauses: run.w.fabric().ports().map(|(.., s)| s.pauses_sent).sum(),
        events,
        wall_ns,
        parallel: run.w.parallelism(),
    })
}

/// Busy time so far of each of host `h`'s cores.
fn core_busy(w: &World, h: u32) -> Vec<SimDuration> {
    let cpu = w.host(h).cpu();
    (0..cpu.cores()).map(|c| cpu.core_busy(c)).collect()
}

/// Wire bytes (frames plus preamble and gap) sent so far by the target's port and by the
/// switch port towards it.
fn target_link_tx(w: &World) -> (u64, u64) {
    let node = w.host(TARGET).node;
    let wire =
        |s: &fabric::PortStats| s.tx_bytes + s.tx_frames * fabric::config::PREAMBLE_IFG_BYTES;
    let mut own = (None, 0);
    for (n, _, link, s) in w.fabric().ports() {
        if n == node {
            own = (Some(link), wire(s));
        }
    }
    let to = w
        .fabric()
        .ports()
        .filter(|(n, _, link, _)| *n != node && Some(*link) == own.0)
        .map(|(.., s)| wire(s))
        .max()
        .unwrap_or(0);
    (own.1, to)
}

/// The shares of the device, the cores and the target's link the data phase used.
fn utilisation(
    run: &Run,
    cores_before: &[Vec<SimDuration>],
    link_before: (u64, u64),
    elapsed: SimDuration,
) -> Utilisation {
    let span = elapsed.as_ps().max(1) as f64;
    let cfg = &run.cfg;
    let served = run.reads as f64 * cfg.device.service(IoOpcode::Read, cfg.bs).as_ps() as f64
        + run.writes as f64 * cfg.device.service(IoOpcode::Write, cfg.bs).as_ps() as f64;
    // A core's busy time includes stages already booked past the end: a share is at most 1.
    let busiest = |h: u32| {
        core_busy(&run.w, h)
            .iter()
            .zip(&cores_before[h as usize])
            .map(|(now, was)| (now.as_ps() - was.as_ps()) as f64 / span)
            .fold(0.0, f64::max)
            .min(1.0)
    };
    let (own, to) = target_link_tx(&run.w);
    let sent = (own - link_before.0).max(to - link_before.1) as f64;
    let line = Bandwidth::gbps(cfg.link_gbps).bps() as f64;
    Utilisation {
        device: served / (cfg.device.parallel_units.max(1) as f64 * span),
        target_core: if cfg.ioengine == IoEngine::Local {
            0.0
        } else {
            busiest(TARGET)
        },
        initiator_core: (1..run.w.host_count()).map(busiest).fold(0.0, f64::max),
        target_link: if cfg.ioengine == IoEngine::Local {
            0.0
        } else {
            (sent * 8.0 / line / (span / 1e12)).min(1.0)
        },
    }
}

/// Peak queues (bytes, any priority) of the switch port towards the target and of the
/// target's own port.
fn target_queues(w: &World) -> (u64, u64) {
    let node = w.host(TARGET).node;
    let peak = |s: &fabric::PortStats| s.peak_queue.iter().copied().max().unwrap_or(0);
    let mut own = (None, 0);
    for (n, _, link, s) in w.fabric().ports() {
        if n == node {
            own = (Some(link), peak(s));
        }
    }
    let to = w
        .fabric()
        .ports()
        .filter(|(n, _, link, _)| *n != node && Some(*link) == own.0)
        .map(|(.., s)| peak(s))
        .max()
        .unwrap_or(0);
    (to, own.1)
}
