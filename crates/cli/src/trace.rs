//! `rdmalab trace`: every frame of a run as one pcap, and every trace record (host stages and
//! fabric events) as JSON Lines.

use crate::run::load;
use anyhow::Context as _;
use rdmalab::engine::TraceRecord;
use rdmalab::output::Output;
use rdmalab::report::{RunOptions, TraceSink, run_plan_with, trace_json};
use rdmalab::scenario;
use rdmalab::units::SimTime;
use rdmalab::wire::{PcapReader, PcapWriter};
use rdmalab::world::WholeTrace;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = TRACE_HELP)]
pub struct TraceArgs {
    /// A preset name (`lesson1`..`lesson6`, `5b`, `1`..`6`) or a scenario TOML file.
    pub scenario: String,
    /// Write every frame of both runs (TCP and RDMA, the same fabric) to this pcap, in time
    /// order: RoCEv2 data, ACK/NAK, CNP, TCP segments and PFC PAUSE frames.
    #[arg(long, value_name = "FILE.pcap")]
    pub pcap: Option<PathBuf>,
    /// Write every trace record as JSON Lines (schema below).
    #[arg(long, value_name = "FILE.jsonl")]
    pub trace: Option<PathBuf>,
    /// Override one key after the file is read (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`) or a host profile TOML from `rdmalab calibrate`.
    #[arg(long, value_name = "NIC|FILE")]
    pub profile: Vec<String>,
    /// Threads a fabric run (a permutation, a connection matrix or a collective) may use,
    /// 1..=256 (default: as `rdmalab run`). The trace is the same for any count; a pcap keeps
    /// the run on one thread. The lesson pairs run on one.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,
}

const TRACE_HELP: &str = "\
Examples:
  rdmalab trace lesson5 --set lossless.enabled=true --pcap l5.pcap --trace l5.jsonl
  tshark -r l5.pcap -Y 'infiniband || tcp || eth.type == 0x8808'
  rdmalab trace 1 --trace one.jsonl && grep '\"kind\":\"stage\"' one.jsonl | head
  rdmalab trace scenarios/fattree-permutation-128.toml --set workload.message_bytes=65536 \\
      --trace ft128.jsonl --threads 2

The TCP run and the RDMA run are two simulations of the same fabric from time 0 (the same host
addresses); the pcap interleaves them by time, the JSON Lines give the TCP run's records then
the RDMA run's, each record tagged with \"path\".
A fabric run (workload.pattern = permutation, matrix or collective) is one run: its records
are in time order, then by node (a node's host stages before its fabric events), the same on
any number of threads (--threads); a pcap keeps a permutation or matrix on one thread, and a
collective writes none.

JSON Lines schema, one object per line: {path: tcp|rdma, t_ps, kind, ...}
  stage           host, unit (cpu|nic|pcie), core (cpu), stage, setup, start_ps, end_ps
  packet          event (enqueued|dequeued|arrived|delivered), node, port, uid, flow, class
                  (roce_data|roce_ack|cnp|pause|raw|tcp), bytes, priority, queue_bytes,
                  irn_extension (true on frames with the selective-repeat IRN header)
  dropped         node, port, uid, flow, class, bytes, priority, reason
                  (buffer_full|congestion_draw|corruption|burst|rule|no_route)
  ecn_marked      node, port, uid, flow, class, bytes, priority, queue_bytes
  pause_sent, pause_received   node, port, class_enable, quanta (0 = resume), duration_ns (what
                               the quanta stop the upstream for at the port's rate)
  retransmit      host, qpn, from_psn, reason
  rate_change     host, qpn, cause (cut|fast recovery|additive increase|hyper increase),
                  rate_kbps, target_kbps, alpha (0..1)   (DCQCN)
Nodes are fabric node numbers (`host` too: with the presets' one switch, the switch
is node 0 and host i is node i + 1); times are integer picoseconds. At most
4,000,000 records per run are kept; a fabric run's trace is cut between two instants, the
same on any thread count, and says where and how many records it left out.
Exit codes: 0 done; 1 the run failed (an event budget); 2 bad input.";

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("trace", msg)
}

impl TraceArgs {
    /// The threads asked for, or `rdmalab run`'s default for a fabric of `hosts` hosts.
    fn threads_for(&self, hosts: u64) -> u32 {
        self.threads
            .unwrap_or_else(|| rdmalab::world::default_threads_for(hosts))
    }
}

/// `rdmalab trace`.
pub fn trace(a: TraceArgs) -> anyhow::Result<ExitCode> {
    if a.pcap.is_none() && a.trace.is_none() {
        return bad("give --pcap FILE, --trace FILE or both");
    }
    let loaded = match load(&a.scenario, &a.profile, &a.sets) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    if loaded.plan.workload.pattern == scenario::Pattern::Collective && a.pcap.is_some() {
        return bad(
            "--pcap: a collective writes no capture (its JSON Lines, --trace, have every frame \
             at every port)",
        );
    }
    let fleet = matches!(
        loaded.plan.workload.pattern,
        scenario::Pattern::Permutation | scenario::Pattern::Matrix
    );
    if fleet && let Some(why) = rdmalab::permutation::unsupported(&loaded.plan) {
        return bad(format!(
            "workload.pattern = {}: {why}",
            loaded.plan.workload.pattern.name()
        ));
    }
    let matrix = match loaded.plan.workload.pattern {
        scenario::Pattern::Matrix => match crate::run::load_matrix(&a.scenario, &loaded.plan) {
            Ok((_, m)) => Some(m),
            Err(e) => return bad(e),
        },
        _ => None,
    };
    // Open the outputs first, so a path that cannot be written fails before the run.
    let mut pcap_out = match a.pcap.as_deref().map(Output::create).transpose() {
        Ok(o) => o,
        Err(e) => {
            errln!("rdmalab trace: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut trace_out = match a.trace.as_deref().map(Output::create).transpose() {
        Ok(o) => o,
        Err(e) => {
            errln!("rdmalab trace: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    // The two runs' captures go to part files beside the pcap, merged below. Their names are
    // fixed per target, so the parts of a killed trace are replaced by the next trace of the
    // same target (and removed after the merge, or when the run fails).
    let parts_stem = a.pcap.as_ref().map(|p| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        p.with_file_name(format!(".{stem}.rdmalab-trace.pcap"))
    });
    let part = |stem: &Path, path: &str| {
        let s = stem.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        stem.with_file_name(format!("{s}-{path}.pcap"))
    };
    let sink: Option<TraceSink> = a.trace.as_ref().map(|_| TraceSink::default());
    if loaded.plan.workload.pattern == scenario::Pattern::Collective {
        return collective_trace(&a, &loaded, trace_out);
    }
    if fleet {
        return fleet_trace(&a, &loaded, matrix.as_ref(), pcap_out, trace_out);
    }
    let opts = RunOptions {
        host: loaded.host.clone(),
        pcap: parts_stem.clone(),
        trace: sink.clone(),
    };
    let result = run_plan_with(&loaded.plan, &opts);
    let parts: Vec<PathBuf> = parts_stem
        .iter()
        .flat_map(|stem| ["tcp", "rdma"].map(|p| part(stem, p)))
        .collect();
    let remove_parts = || {
        for p in &parts {
            let _ = std::fs::remove_file(p);
        }
    };
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            remove_parts();
            if e.is_bad_input() {
                return bad(e);
            }
            errln!("rdmalab trace: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(out) = pcap_out.take() {
        let present: Vec<PathBuf> = parts.iter().filter(|p| p.exists()).cloned().collect();
        let n = merge_pcaps(&present, out);
        remove_parts();
        let (n, shown) = n?;
        errln!("rdmalab trace: {n} frames → {shown}");
    }
    if let (Some(out), Some(sink)) = (trace_out.take(), &sink) {
        let records = sink.lock().expect("the runs are over");
        write_jsonl(out, records.iter().map(|(p, t, r)| (*p, *t, r)))?;
    }
    let ok = |p: &Option<rdmalab::report::PathReport>| {
        p.as_ref()
            .map_or("not run".to_string(), |p| format!("{:?}", p.outcome))
    };
    errln!(
        "rdmalab trace: {}: tcp {}, rdma {}",
        loaded.name,
        ok(&report.tcp),
        ok(&report.rdma)
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes `records` (path, time, record) to `out` as JSON Lines and commits it.
fn write_jsonl<'r>(
    out: Output,
    records: impl Iterator<Item = (&'static str, SimTime, &'r TraceRecord)>,
) -> anyhow::Result<()> {
    let mut w = out.writer()?;
    let mut n = 0u64;
    for (path, t, r) in records {
        serde_json::to_writer(&mut w, &trace_json(path, t, r))?;
        w.write_all(b"\n")?;
        n += 1;
    }
    w.flush()?;
    let shown = out.path().display().to_string();
    out.commit()?;
    errln!("rdmalab trace: {n} records → {shown}");
    Ok(())
}

/// Writes one run's kept trace, every record tagged `path`, and says where it was cut when
/// the run made more than the limit.
fn write_whole(out: Output, path: &'static str, t: &WholeTrace) -> anyhow::Result<()> {
    write_jsonl(out, t.records.iter().map(|(at, r)| (path, *at, r)))?;
    if t.skipped > 0 {
        let last = t
            .records
            .last()
            .map_or(0.0, |(at, _)| at.as_ps() as f64 / 1e6);
        errln!(
            "rdmalab trace: cut after {last:.3} µs (simulated): {} later records left out (at \
             most {} are kept, whole instants)",
            t.skipped,
            rdmalab::report::MAX_TRACE_RECORDS
        );
    }
    Ok(())
}

/// A fat-tree run (a permutation, or a connection matrix when `matrix` is given) traced: the
/// pcap written by the run itself (one thread), the records in the split-independent order.
fn fleet_trace(
    a: &TraceArgs,
    loaded: &crate::run::Loaded,
    matrix: Option<&scenario::matrix::Matrix>,
    pcap_out: Option<Output>,
    trace_out: Option<Output>,
) -> anyhow::Result<ExitCode> {
    // The run writes (and renames into place) its own pcap; the one opened above only
    // checked that the path can be written.
    drop(pcap_out);
    let plan = &loaded.plan;
    let kept = std::sync::Mutex::new(WholeTrace::default());
    let out = rdmalab::fleet::Outputs {
        pcap: a.pcap.as_deref(),
        trace: trace_out.as_ref().map(|_| &kept),
        threads: a.threads_for(plan.topology.k.pow(3) / 4),
    };
    let ran = match matrix {
        Some(m) => rdmalab::matrix::run_plan(plan, m, &loaded.host, &out)
            .map(|r| (r.flows.len(), r.completed, r.parallel)),
        None => rdmalab::permutation::run_plan(plan, &loaded.host, &out)
            .map(|r| (r.hosts, r.completed, r.parallel)),
    };
    let (flows, completed, parallel) = match ran {
        Ok(x) => x,
        Err(e @ rdmalab::world::WorldError::Setup(_)) => return bad(e),
        Err(e) => {
            errln!("rdmalab trace: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(p) = &a.pcap {
        errln!("rdmalab trace: frames → {}", p.display());
    }
    if let Some(out) = trace_out {
        write_whole(out, "rdma", &kept.lock().expect("the run is over"))?;
    }
    errln!(
        "rdmalab trace: {}: {completed} of {flows} flows completed; simulator: {}",
        loaded.name,
        parallel.line()
    );
    Ok(ExitCode::SUCCESS)
}

/// A collective (`workload.pattern = "collective"`, its one size) traced.
fn collective_trace(
    a: &TraceArgs,
    loaded: &crate::run::Loaded,
    trace_out: Option<Output>,
) -> anyhow::Result<ExitCode> {
    let plan = &loaded.plan;
    let hosts = plan.topology().map_or(0, |t| t.hosts().len() as u32);
    let cfg = rdmalab::collective::Config {
        threads: a.threads_for(hosts.into()),
        ..rdmalab::collective::Config::from_plan(plan)
    };
    if let Err(e) = cfg.check(hosts) {
        return bad(format!("workload.pattern = collective: {e}"));
    }
    let (r, kept) = match rdmalab::collective::run_plan_with_trace(plan, &loaded.host, &cfg) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab trace: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(out) = trace_out {
        write_whole(out, cfg.transport.name(), &kept)?;
    }
    let row = r.rows.first();
    errln!(
        "rdmalab trace: {}: {} over {} hosts, {} µs (simulated); simulator: {}",
        loaded.name,
        cfg.op.name(),
        r.hosts,
        row.map_or(0.0, |x| x.time_ps as f64 / 1e6),
        r.parallel.line()
    );
    Ok(ExitCode::SUCCESS)
}

/// Interleaves pcaps by timestamp (ties: the earlier file first) into `out`, then commits it:
/// (frames, the path as given). Each part is already in time order (a run captures frames as
/// they leave), so this is a streaming k-way merge holding one frame per part.
fn merge_pcaps(parts: &[PathBuf], out: Output) -> anyhow::Result<(usize, String)> {
    let mut readers = Vec::new();
    for p in parts {
        let f = std::fs::File::open(p).with_context(|| p.display().to_string())?;
        readers.push(PcapReader::new(std::io::BufReader::new(f))?);
    }
    let mut heads = Vec::new();
    for r in &mut readers {
        heads.push(r.next().transpose()?);
    }
    let mut w = PcapWriter::new(out.writer()?)?;
    let mut n = 0;
    while let Some(i) = (0..heads.len())
        .filter(|&i| heads[i].is_some())
        .min_by_key(|&i| (heads[i].as_ref().map(|f| f.time()), i))
    {
        let f = heads[i].take().expect("filtered on is_some");
        w.write_frame(f.time(), &f.data)?;
        n += 1;
        heads[i] = readers[i].next().transpose()?;
    }
    w.into_inner().flush()?;
    let shown = out.path().display().to_string();
    out.commit()?;
    Ok((n, shown))
}
