//! `rdmalab trace`: every frame of a run as one pcap, and every trace record (host stages and
//! fabric events) as JSON Lines.

use crate::run::load;
use rdmalab::report::{RunOptions, TraceSink, run_plan_with, trace_json};
use rdmalab::wire::{PcapReader, PcapWriter};
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
}

const TRACE_HELP: &str = "\
Examples:
  rdmalab trace lesson5 --set lossless.enabled=true --pcap l5.pcap --trace l5.jsonl
  tshark -r l5.pcap -Y 'infiniband || tcp || eth.type == 0x8808'
  rdmalab trace 1 --trace one.jsonl && grep '\"kind\":\"stage\"' one.jsonl | head

The TCP run and the RDMA run are two simulations of the same fabric from time 0 (the same host
addresses); the pcap interleaves them by time, the JSON Lines give the TCP run's records then
the RDMA run's, each record tagged with \"path\".

JSON Lines schema, one object per line: {path: tcp|rdma, t_ps, kind, ...}
  stage           host, unit (cpu|nic|pcie), core (cpu), stage, setup, start_ps, end_ps
  packet          event (enqueued|dequeued|arrived|delivered), node, port, uid, flow, class
                  (roce_data|roce_ack|cnp|pause|raw|tcp), bytes, priority, queue_bytes,
                  irn_extension (true on frames with the selective-repeat IRN header)
  dropped         node, port, uid, flow, class, bytes, priority, reason
                  (buffer_full|congestion_draw|corruption|burst|rule|no_route)
  ecn_marked      node, port, uid, flow, class, bytes, priority, queue_bytes
  pause_sent, pause_received   node, port, class_enable, quanta (0 = resume)
  retransmit      host, qpn, from_psn, reason
  rate_change     host, qpn, cause (cut|fast recovery|additive increase|hyper increase),
                  rate_kbps, target_kbps, alpha (0..1)   (DCQCN)
Nodes are fabric node numbers (`host` too: with the presets' one switch, the switch
is node 0 and host i is node i + 1); times are integer picoseconds. At most
4,000,000 records per run are kept.
Exit codes: 0 done; 1 the run failed (an event budget); 2 bad input.";

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("rdmalab trace: {msg}");
    Ok(ExitCode::from(2))
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
    // The two runs' captures go to temporary files beside the pcap, merged below.
    let tmp_stem = a.pcap.as_ref().map(|p| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        p.with_file_name(format!(".{stem}.rdmalab-{}.pcap", std::process::id()))
    });
    let sink: Option<TraceSink> = a.trace.as_ref().map(|_| TraceSink::default());
    let opts = RunOptions {
        host: loaded.host.clone(),
        pcap: tmp_stem.clone(),
        trace: sink.clone(),
    };
    let result = run_plan_with(&loaded.plan, &opts);
    if result.is_err()
        && let Some(stem) = &tmp_stem
    {
        // A failed run leaves no per-path captures behind.
        let s = stem.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        for p in ["tcp", "rdma"] {
            let _ = std::fs::remove_file(stem.with_file_name(format!("{s}-{p}.pcap")));
        }
    }
    let report = match result {
        Ok(r) => r,
        Err(e) if e.is_bad_input() => return bad(e),
        Err(e) => {
            eprintln!("rdmalab trace: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let (Some(out), Some(stem)) = (&a.pcap, &tmp_stem) {
        let s = stem.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        let parts: Vec<PathBuf> = ["tcp", "rdma"]
            .iter()
            .map(|p| stem.with_file_name(format!("{s}-{p}.pcap")))
            .filter(|p| p.exists())
            .collect();
        let n = merge_pcaps(&parts, out);
        for p in &parts {
            let _ = std::fs::remove_file(p);
        }
        let n = n?;
        eprintln!("rdmalab trace: {n} frames → {}", out.display());
    }
    if let (Some(out), Some(sink)) = (&a.trace, &sink) {
        let records = sink.lock().expect("the runs are over");
        let tmp = out.with_extension("jsonl.tmp");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for (path, t, r) in records.iter() {
            serde_json::to_writer(&mut w, &trace_json(path, *t, r))?;
            w.write_all(b"\n")?;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, out)?;
        eprintln!(
            "rdmalab trace: {} records → {}",
            records.len(),
            out.display()
        );
    }
    let ok = |p: &Option<rdmalab::report::PathReport>| {
        p.as_ref()
            .map_or("not run".to_string(), |p| format!("{:?}", p.outcome))
    };
    eprintln!(
        "rdmalab trace: {}: tcp {}, rdma {}",
        loaded.name,
        ok(&report.tcp),
        ok(&report.rdma)
    );
    Ok(ExitCode::SUCCESS)
}

/// Interleaves pcaps by timestamp (ties: the earlier file first) into `out`, atomically.
fn merge_pcaps(parts: &[PathBuf], out: &Path) -> anyhow::Result<usize> {
    let mut frames = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        for r in PcapReader::new(std::fs::File::open(p)?)? {
            let r = r?;
            frames.push((r.time(), i, r.data));
        }
    }
    frames.sort_by_key(|f| (f.0, f.1));
    let tmp = out.with_extension("pcap.tmp");
    let mut w = PcapWriter::new(std::io::BufWriter::new(std::fs::File::create(&tmp)?))?;
    for (t, _, data) in &frames {
        w.write_frame(*t, data)?;
    }
    w.into_inner()
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    std::fs::rename(&tmp, out)?;
    Ok(frames.len())
}
