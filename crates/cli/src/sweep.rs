//! `rdmalab sweep`: a grid of runs over parameter values, one CSV row per point with every
//! metric of the report, an optional chart, and deterministic sharding so a batch scheduler
//! (Slurm job arrays, Kubernetes indexed Jobs) can run a big grid on many machines and
//! `rdmalab sweep merge` joins the pieces.
//!
//! Each run is single-threaded and deterministic; the grid runs on all cores (rayon). Point i
//! of the grid (first `--vary` key slowest) belongs to shard `i mod N + 1`, so shards are
//! disjoint and their merge equals the unsharded CSV byte for byte.

use crate::run::load;
use anyhow::Context as _;
use rayon::prelude::*;
use rdmalab::report::{Report, RunOptions, run_plan_with};
use rdmalab::scenario;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Most points one sweep may have (its whole grid, whatever the shard).
pub const MAX_POINTS: usize = 100_000;

/// Largest sweep CSV `sweep merge` reads: 100,000 rows of some 2 KB.
const MAX_CSV_BYTES: u64 = 256 << 20;

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = SWEEP_HELP
)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub merge: Option<SweepSub>,
    /// A preset name (`lesson5`, `5`, `5b`...) or a scenario TOML file.
    #[arg(required = true)]
    pub scenario: Option<String>,
    /// A key and the values it takes, e.g. `--vary loss.congestion_drop=0,0.001,0.01`
    /// (repeatable: the grid is every combination, the first key varying slowest).
    #[arg(long = "vary", value_name = "KEY=V1,V2,...", required = true)]
    pub vary: Vec<String>,
    /// Override one key for every point (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`) or a host profile TOML from `rdmalab calibrate`.
    #[arg(long, value_name = "NIC|FILE")]
    pub profile: Vec<String>,
    /// The CSV to write (one row per point; the header names every column with its unit).
    #[arg(short = 'o', long = "out", value_name = "FILE.csv", required = true)]
    pub out: Option<PathBuf>,
    /// Also draw a chart: the first varied key along x, `--metric` up, one series per path
    /// and combination of the other varied keys. `.svg` or `.png`.
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub plot: Option<PathBuf>,
    /// The column the chart plots without its `tcp.`/`rdma.` prefix (default: `retention`
    /// for a stream, `latency_delivered_ns` otherwise).
    #[arg(long)]
    pub metric: Option<String>,
    /// Continue an interrupted sweep: the rows already in `OUT.partial` (each finished point
    /// is appended there and flushed as it completes) are kept and their points not run
    /// again; the same grid and settings are required.
    #[arg(long)]
    pub resume: bool,
    /// Run only shard I of N (1-based): points i with i mod N = I − 1.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
}

#[derive(clap::Subcommand)]
pub enum SweepSub {
    /// Join shard CSVs (from `--shard I/N`) into the CSV the unsharded sweep writes.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The merged CSV.
    #[arg(short = 'o', long = "out", value_name = "FILE.csv")]
    pub out: PathBuf,
    /// The shard CSVs, in any order.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

const SWEEP_HELP: &str = "\
Examples:
  rdmalab sweep lesson5 --vary loss.congestion_drop=0.001,0.003,0.01,0.03 \\
      --vary lossless.enabled=false,true -o loss.csv --plot loss.svg
  rdmalab sweep lesson1 --vary workload.message_bytes=64,4096,65536,1048576 -o size.csv \\
      --plot size.svg --metric latency_delivered_ns
  # three machines, then one merge:
  rdmalab sweep 5 --vary loss.congestion_drop=0.001,0.01 --shard 2/3 -o part2.csv
  rdmalab sweep merge -o all.csv part1.csv part2.csv part3.csv
  # interrupted (Ctrl-C, kill, a crash)? the finished rows are in loss.csv.partial:
  rdmalab sweep lesson5 --vary loss.congestion_drop=0.001,0.01 -o loss.csv --resume

Each finished point is appended to OUT.partial and flushed at once; the CSV itself is written
(atomically, sorted by point) when every point has run, and the partial file removed.

Columns: point, each varied key, then for tcp and rdma: outcome, messages_delivered,
bytes_delivered, copies, syscalls, cpu_ns_per_message_local/remote, remote_cpu,
latency_delivered_ns, latency_placed_ns, local_completion_ns, bus_bytes_per_byte_local/remote,
throughput_gbps, baseline_gbps, retention, retention_ci95_lo/hi, model_predicted_retention,
measured_over_predicted, loss_events, timeouts, retransmitted_bytes, drops, pfc_pauses,
ecn_marks, setup_syscalls, setup_cpu_ns_local/remote, setup_duration_ns; and
rdma_over_tcp_latency. Empty cells: not measured (count mode has no throughput, a failed path
no latency). Times are ns of simulated time.
Exit codes: 0 done; 1 a run failed (an event budget); 2 bad input.";

/// (column suffix, JSON path in a path's report).
const METRICS: &[(&str, &str)] = &[
    ("outcome", "outcome"),
    ("messages_delivered", "messages_delivered"),
    ("bytes_delivered", "bytes_delivered"),
    ("copies", "data_path.copies"),
    ("syscalls", "data_path.syscalls"),
    (
        "cpu_ns_per_message_local",
        "data_path.cpu_ns_per_message_local",
    ),
    (
        "cpu_ns_per_message_remote",
        "data_path.cpu_ns_per_message_remote",
    ),
    ("remote_cpu", "remote_cpu"),
    ("latency_delivered_ns", "latency.delivered_ns"),
    ("latency_placed_ns", "latency.placed_at_remote_ns"),
    ("local_completion_ns", "latency.local_completion_ns"),
    (
        "bus_bytes_per_byte_local",
        "memory_bus_bytes_per_delivered_byte.local",
    ),
    (
        "bus_bytes_per_byte_remote",
        "memory_bus_bytes_per_delivered_byte.remote",
    ),
    ("throughput_gbps", "throughput.gbps"),
    ("baseline_gbps", "throughput.baseline_gbps"),
    ("retention", "throughput.retention"),
    ("retention_ci95_lo", "throughput.retention_ci95.0"),
    ("retention_ci95_hi", "throughput.retention_ci95.1"),
    (
        "model_predicted_retention",
        "throughput.model.predicted_retention",
    ),
    (
        "measured_over_predicted",
        "throughput.model.measured_over_predicted",
    ),
    ("loss_events", "recovery.loss_events"),
    ("timeouts", "recovery.timeouts"),
    ("retransmitted_bytes", "retransmitted_bytes"),
    ("drops", "drops"),
    ("pfc_pauses", "pfc_pauses"),
    ("ecn_marks", "ecn_marks"),
    ("setup_syscalls", "setup.syscalls"),
    ("setup_cpu_ns_local", "setup.cpu_ns_local"),
    ("setup_cpu_ns_remote", "setup.cpu_ns_remote"),
    ("setup_duration_ns", "setup.duration_ns"),
];

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("sweep", msg)
}

/// One varied key and its values as written.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    /// The scenario key.
    pub(crate) key: String,
    /// Its values, as written.
    pub(crate) values: Vec<String>,
}

fn parse_vary(v: &str) -> Result<Axis, String> {
    let (key, values) = v
        .split_once('=')
        .ok_or_else(|| format!("--vary {v}: expected KEY=V1,V2,..."))?;
    let key = key.trim();
    if scenario::plan::KEYS.iter().all(|k| k.path != key) {
        return Err(format!(
            "--vary {v}: unknown key {key:?} (the keys are listed in scenarios/README.md)"
        ));
    }
    let values: Vec<String> = values.split(',').map(|x| x.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!("--vary {v}: an empty value"));
    }
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// `I/N` with 1 ≤ I ≤ N ≤ 10 000.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 1 ≤ I ≤ N ≤ 10000, e.g. 2/3");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n || n > 10_000 {
        return Err(bad());
    }
    Ok((i, n))
}

/// Every point of the grid: the values of each axis, first axis slowest.
fn grid(axes: &[Axis]) -> Vec<Vec<String>> {
    let mut points = vec![Vec::new()];
    for a in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.clone());
                    q
                })
            })
            .collect();
    }
    points
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) if o.get("status").is_some() => match o.get("code") {
            Some(Value::String(c)) => c.clone(),
            _ => o["status"].as_str().unwrap_or_default().to_string(),
        },
        Some(v) => v.to_string(),
    }
}

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut v = v;
    for seg in path.split('.') {
        v = match v {
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            Value::Object(o) => o.get(seg)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A sweep of `workload.pattern = "collective"`: one CSV row per point with the collective's
/// nccl-tests row (its size is the point's `workload.message_bytes`).
fn collective_sweep(
    out: &Path,
    axes: &[Axis],
    plans: &[(usize, Vec<String>, scenario::Plan)],
    host: &std::collections::BTreeMap<String, u64>,
) -> anyhow::Result<ExitCode> {
    use rdmalab::collective::{Config, run_plan};
    let mut head = "point".to_string();
    for a in axes {
        let _ = write!(head, ",{}", a.key);
    }
    head += ",bytes,time_us,algbw_gbs,busbw_gbs,wrong,ideal_us,ideal_busbw_gbs,cpu_ms_per_gb,link_util_max,pauses,ecn_marks,retransmissions,drops";
    let results: Vec<_> = plans
        .par_iter()
        .map(|(i, values, plan)| {
            let cfg = Config::from_plan(plan);
            let hosts = plan.topology().map_or(0, |t| t.hosts().len() as u32);
            let r = cfg
                .check(hosts)
                .map_err(|e| (true, e))
                .and_then(|()| run_plan(plan, host, &cfg).map_err(|e| (false, e.to_string())));
            (*i, values, r)
        })
        .collect();
    let mut csv = head + "\n";
    for (i, values, r) in results {
        let r = match r {
            Ok(r) => r,
            Err((true, e)) => return bad(format!("point {i} ({}): {e}", values.join(", "))),
            Err((false, e)) => {
                errln!(
                    "rdmalab sweep: point {i} ({}) failed: {e}",
                    values.join(", ")
                );
                return Ok(ExitCode::from(1));
            }
        };
        let Some(x) = r.rows.first() else { continue };
        let _ = write!(csv, "{i}");
        for v in values.iter() {
            let _ = write!(csv, ",{v}");
        }
        let _ = writeln!(
            csv,
            ",{},{:.3},{:.4},{:.4},{},{:.3},{:.4},{:.4},{:.4},{},{},{},{}",
            x.bytes,
            x.time_ps as f64 / 1e6,
            x.algbw_gbs,
            x.busbw_gbs,
            x.wrong.map_or("NA".to_string(), |w| w.to_string()),
            x.ideal_ps as f64 / 1e6,
            x.ideal_busbw_gbs,
            x.cpu_ms_per_gb_mean(),
            x.link_util_max,
            x.pauses,
            x.ecn_marks,
            x.retransmissions,
            x.drops
        );
    }
    rdmalab::output::write_file(out, csv.as_bytes())?;
    errln!(
        "rdmalab sweep: {} collective point(s) → {}",
        plans.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn header(axes: &[Axis]) -> String {
    let mut cols = vec!["point".to_string()];
    cols.extend(axes.iter().map(|a| a.key.clone()));
    for path in ["tcp", "rdma"] {
        cols.extend(METRICS.iter().map(|(m, _)| format!("{path}.{m}")));
    }
    cols.push("rdma_over_tcp_latency".into());
    cols.iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
}

fn row(point: usize, values: &[String], r: &Report) -> String {
    let v = serde_json::to_value(r).expect("a report serializes");
    let mut cols = vec![point.to_string()];
    cols.extend(values.iter().cloned());
    for path in ["tcp", "rdma"] {
        let p = &v[path];
        cols.extend(METRICS.iter().map(|(_, j)| {
            if p.is_null() {
                String::new()
            } else {
                cell(lookup(p, j))
            }
        }));
    }
    cols.push(cell(v.get("rdma_over_tcp_latency")));
    cols.iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
}

/// Where a sweep writing `out` keeps its finished rows until it ends: `OUT.partial`.
fn partial_path(out: &Path) -> std::path::PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    out.with_file_name(name)
}

/// The first line of a partial file: what the sweep ran (scenario text, host profile,
/// `--set`s and the grid, hashed with FNV-1a), so `--resume` refuses rows of another sweep.
fn partial_mark(base: &crate::run::Loaded, axes: &[Axis]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0xff]) {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    eat(&base.text);
    base.host.iter().for_each(|(k, v)| eat(&format!("{k}={v}")));
    base.sets.iter().for_each(|x| eat(x));
    for a in axes {
        eat(&a.key);
        a.values.iter().for_each(|v| eat(v));
    }
    format!("# rdmalab sweep partial {h:016x}")
}

/// The whole rows of a partial file marked `mark` with columns `head`, by point, each
/// checked against the grid (`points`) and the header's column count, and the length in bytes
/// of the file's valid prefix (mark, header and those rows). A last line without its newline
/// (cut by the kill) is not a row: the caller truncates the file to the prefix before appending,
/// so the next row cannot be glued onto it, and that point runs again.
fn partial_rows(
    text: &str,
    mark: &str,
    head: &str,
    points: &[Vec<String>],
) -> Result<(Vec<(usize, String)>, usize), String> {
    let mut lines = text.split_inclusive('\n');
    let mut keep = 0;
    match lines.next() {
        None => return Ok((Vec::new(), 0)),
        Some(m) if m.trim_end_matches('\n') == mark => keep += m.len(),
        Some(_) => {
            return Err(
                "it was written by another sweep (scenario, --set, --profile or grid differ)"
                    .into(),
            );
        }
    }
    match lines.next() {
        None => return Ok((Vec::new(), 0)),
        Some(h) if h.trim_end_matches('\n') == head => {
            if !h.ends_with('\n') {
                return Ok((Vec::new(), 0));
            }
            keep += h.len();
        }
        Some(_) => return Err("its columns differ from this sweep's".into()),
    }
    let columns = csv_columns(head).unwrap_or(0);
    let mut rows = Vec::new();
    for (n, l) in lines.enumerate() {
        let Some(body) = l.strip_suffix('\n') else {
            break;
        };
        let Some(i) = body.split(',').next().and_then(|x| x.parse::<usize>().ok()) else {
            return Err(format!("line {}: no point number", n + 3));
        };
        let Some(values) = points.get(i) else {
            return Err(format!("line {}: point {i} is not in this grid", n + 3));
        };
        let lead = std::iter::once(i.to_string())
            .chain(values.iter().cloned())
            .map(|c| csv_field(&c))
            .collect::<Vec<_>>()
            .join(",")
            + ",";
        if !body.starts_with(&lead) {
            return Err(format!(
                "line {}: point {i}'s values differ from this grid's ({})",
                n + 3,
                values.join(", ")
            ));
        }
        match csv_columns(body) {
            Some(c) if c == columns => {}
            got => {
                return Err(format!(
                    "line {}: {} columns where the header has {columns} (a damaged row)",
                    n + 3,
                    got.map_or_else(|| "unbalanced quotes, not".to_string(), |c| c.to_string())
                ));
            }
        }
        keep += l.len();
        if rows.iter().any(|r: &(usize, String)| r.0 == i) {
            continue;
        }
        rows.push((i, body.to_string()));
    }
    Ok((rows, keep))
}

/// The number of fields of one CSV line (quoted fields may hold commas and doubled quotes),
/// or `None` when a quote is left open.
fn csv_columns(line: &str) -> Option<usize> {
    let mut n = 1;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => n += 1,
            _ => {}
        }
    }
    (!quoted).then_some(n)
}

/// `rdmalab sweep`.
pub fn sweep(a: SweepArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    if let Some(SweepSub::Merge(m)) = a.merge {
        return merge(m);
    }
    let (Some(scenario_arg), Some(out)) = (a.scenario.as_deref(), a.out.as_ref()) else {
        return bad("give a preset or scenario file, --vary and -o (see --help)");
    };
    let mut axes = Vec::new();
    for v in &a.vary {
        match parse_vary(v) {
            Ok(x) => axes.push(x),
            Err(e) => return bad(e),
        }
    }
    if let Some(dup) = axes
        .iter()
        .enumerate()
        .find(|(i, x)| axes[..*i].iter().any(|y| y.key == x.key))
    {
        return bad(format!("--vary {} given twice", dup.1.key));
    }
    let (shard_i, shard_n) = match a.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s.unwrap_or((1, 1)),
        Err(e) => return bad(e),
    };
    if let Some(p) = &a.plot {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "svg" && ext != "png" {
            return bad(format!("--plot {}: write .svg or .png", p.display()));
        }
    }
    // Outputs that cannot be written fail now, not after the grid has run (the probes are
    // dropped unwritten: nothing is left behind).
    for o in std::iter::once(out).chain(a.plot.as_ref()) {
        if let Err(e) = rdmalab::output::Output::probe(o) {
            errln!("rdmalab sweep: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    let base = match load(scenario_arg, &a.profile, &a.sets) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    let metric = a.metric.clone().unwrap_or_else(|| {
        if base.plan.stream_duration().is_some() {
            "retention".into()
        } else {
            "latency_delivered_ns".into()
        }
    });
    if !METRICS.iter().any(|(m, _)| *m == metric) {
        let names: Vec<&str> = METRICS.iter().map(|(m, _)| *m).collect();
        return bad(format!(
            "--metric {metric}: not a column; one of {}",
            names.join(", ")
        ));
    }
    // The grid's size before it is built: a few long --vary lists multiply fast.
    let size = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_POINTS);
    let Some(_) = size else {
        let lens: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        return bad(format!(
            "a grid of {} points: at most {MAX_POINTS} per sweep (split it into several sweeps)",
            lens.join(" × ")
        ));
    };
    let points = grid(&axes);
    // Build every plan first, so bad values fail before anything runs.
    let mut plans = Vec::new();
    for (i, values) in points.iter().enumerate() {
        if i % shard_n != shard_i - 1 {
            continue;
        }
        let mut sets = base.sets.clone();
        for (axis, v) in axes.iter().zip(values) {
            sets.push(format!("{}={v}", axis.key));
        }
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        match scenario::parse_with(&base.text, &refs) {
            Ok(p) => plans.push((i, values.clone(), p)),
            Err(e) => return bad(format!("point {i} ({}): {e}", values.join(", "))),
        }
    }
    if base.plan.workload.pattern == scenario::Pattern::Collective {
        if a.plot.is_some() || a.resume {
            return bad(
                "--plot and --resume are for the comparison report; a collective sweep writes its CSV only",
            );
        }
        return collective_sweep(out, &axes, &plans, &base.host);
    }
    // Finished rows go to OUT.partial at once (append-only, flushed per row), so an
    // interrupted sweep keeps them and `--resume` continues from there. Only beside a regular
    // file (or a link to one): a sweep into a FIFO or a device (`-o /dev/stdout`) keeps no
    // row log in /dev, and cannot be resumed.
    let regular_target = std::fs::metadata(out).map_or(true, |m| m.is_file());
    if a.resume && !regular_target {
        return bad(format!(
            "--resume needs -o to name a regular file; {} is not one",
            out.display()
        ));
    }
    let partial_path = partial_path(out);
    let head = header(&axes);
    let mark = partial_mark(&base, &axes);
    let mut done: Vec<(usize, String)> = Vec::new();
    let mut valid_prefix = 0u64;
    if a.resume {
        match std::fs::read_to_string(&partial_path) {
            Ok(text) => match partial_rows(&text, &mark, &head, &points) {
                Ok((rows, keep)) => {
                    done = rows;
                    valid_prefix = keep as u64;
                }
                Err(e) => return bad(format!("--resume: {}: {e}", partial_path.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return bad(format!("--resume: {}: {e}", partial_path.display())),
        }
        if a.plot.is_some() && !done.is_empty() {
            return bad(
                "--plot with --resume: the points run before the interruption left rows, not \
                 reports; resume without --plot, then draw the chart from a full run",
            );
        }
    } else if regular_target && partial_path.exists() {
        return bad(format!(
            "{} holds the rows of an interrupted sweep: add --resume to continue it, or delete it",
            partial_path.display()
        ));
    }
    let finished: std::collections::BTreeSet<usize> = done.iter().map(|r| r.0).collect();
    plans.retain(|(i, _, _)| !finished.contains(i));
    let partial = if !regular_target {
        None
    } else {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&partial_path)
            .with_context(|| partial_path.display().to_string())?;
        if done.is_empty() {
            // A fresh partial file (or one cut before its first row): start with the mark and
            // the header.
            f.set_len(0)?;
            f.write_all(format!("{mark}\n{head}\n").as_bytes())?;
            f.flush()?;
        } else {
            // Drop a row the kill cut short, so the next row starts on a line of its own.
            f.set_len(valid_prefix)?;
        }
        Some(std::sync::Mutex::new(f))
    };
    let bar = indicatif::ProgressBar::new(plans.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} sweep {pos}/{len} points [{bar:30}] {elapsed_precise} (eta {eta})",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    let opts = RunOptions {
        host: base.host.clone(),
        ..RunOptions::default()
    };
    let results: Vec<_> = plans
        .par_iter()
        .map(|(i, values, plan)| {
            let r = run_plan_with(plan, &opts);
            let line = r.as_ref().ok().map(|r| row(*i, values, r));
            if let (Some(line), Some(partial)) = (&line, &partial) {
                // One write(2) per row, newline included (`writeln!` would make two), so a
                // kill leaves whole rows behind, or a cut one that --resume drops.
                let mut f = partial.lock().expect("no panic holds the partial file");
                let whole = format!("{line}\n");
                if let Err(e) = f.write_all(whole.as_bytes()) {
                    errln!("rdmalab sweep: {}: {e}", partial_path.display());
                }
            }
            bar.inc(1);
            (*i, values, r, line)
        })
        .collect();
    bar.finish_and_clear();
    // Nothing finished: a partial file would hold only its header and ask for --resume.
    let nothing_kept = done.is_empty() && results.iter().all(|r| r.2.is_err());
    let mut rows = done;
    let mut reports = Vec::new();
    for (i, values, r, line) in results {
        match r {
            Ok(r) => {
                rows.push((i, line.unwrap_or_default()));
                reports.push((values.clone(), r));
            }
            Err(e) if e.is_bad_input() => {
                if nothing_kept && regular_target {
                    let _ = std::fs::remove_file(&partial_path);
                }
                return bad(format!("point {i} ({}): {e}", values.join(", ")));
            }
            Err(e) => {
                errln!(
                    "rdmalab sweep: point {i} ({}) failed: {e}",
                    values.join(", ")
                );
                return Ok(ExitCode::from(1));
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    let mut csv = head + "\n";
    for (_, l) in &rows {
        csv += l;
        csv.push('\n');
    }
    rdmalab::output::write_file(out, csv.as_bytes())?;
    if regular_target {
        let _ = std::fs::remove_file(&partial_path);
    }
    errln!(
        "rdmalab sweep: {} point(s){} → {}",
        rows.len(),
        if shard_n > 1 {
            format!(" (shard {shard_i}/{shard_n} of {})", points.len())
        } else {
            String::new()
        },
        out.display()
    );
    if let Some(p) = &a.plot {
        crate::plot::draw(p, &base.name, &axes, &reports, &metric)?;
        errln!("rdmalab sweep: chart → {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The value of `metric` (a [`METRICS`] name) on `path` of a report.
pub fn metric_value(r: &Report, path: &str, metric: &str) -> Option<f64> {
    let v = serde_json::to_value(r).ok()?;
    let j = METRICS.iter().find(|(m, _)| *m == metric)?.1;
    lookup(&v[path], j)?.as_f64()
}

/// `rdmalab sweep merge`.
fn merge(m: MergeArgs) -> anyhow::Result<ExitCode> {
    let mut head: Option<String> = None;
    let mut rows: Vec<(usize, String)> = Vec::new();
    for f in &m.inputs {
        let text = match crate::run::read_text(f, MAX_CSV_BYTES) {
            Ok(t) => t,
            Err(e) => return bad(e),
        };
        let mut lines = text.lines();
        let Some(h) = lines.next() else {
            return bad(format!("{}: empty (not a sweep CSV)", f.display()));
        };
        if !h.starts_with("point,") {
            return bad(format!(
                "{}: not a sweep CSV (no point column)",
                f.display()
            ));
        }
        match &head {
            None => head = Some(h.to_string()),
            Some(x) if x != h => {
                return bad(format!(
                    "{}: its columns differ from {} (a different sweep?)",
                    f.display(),
                    m.inputs[0].display()
                ));
            }
            Some(_) => {}
        }
        let columns = csv_columns(h).unwrap_or(0);
        for (n, l) in lines.enumerate() {
            let Some(i) = l.split(',').next().and_then(|x| x.parse::<usize>().ok()) else {
                return bad(format!("{}:{}: no point number", f.display(), n + 2));
            };
            if i >= MAX_POINTS {
                return bad(format!(
                    "{}:{}: point {i}: a sweep's points are numbered 0..{MAX_POINTS}",
                    f.display(),
                    n + 2
                ));
            }
            if csv_columns(l) != Some(columns) {
                return bad(format!(
                    "{}:{}: the row does not have the header's {columns} columns (a damaged file?)",
                    f.display(),
                    n + 2
                ));
            }
            rows.push((i, l.to_string()));
        }
    }
    rows.sort_by_key(|r| r.0);
    if let Some(w) = rows.windows(2).find(|w| w[0].0 == w[1].0) {
        return bad(format!(
            "point {} appears twice (overlapping shards?)",
            w[0].0
        ));
    }
    // Shards deal points round robin, so a missing shard leaves holes below the last point.
    // Rows are sorted and distinct, so the holes are counted without listing them all.
    let last = rows.last().map_or(0, |r| r.0);
    let holes = last + 1 - rows.len().min(last + 1);
    if holes > 0 {
        let mut first = Vec::new();
        let mut at = rows.iter().map(|r| r.0).peekable();
        for i in 0..=last {
            if at.peek() == Some(&i) {
                at.next();
            } else if first.len() < 10 {
                first.push(i.to_string());
            } else {
                break;
            }
        }
        let more = if holes > first.len() {
            format!(" and {} more", holes - first.len())
        } else {
            String::new()
        };
        return bad(format!(
            "{holes} point(s) below point {last} are in none of the files (a shard missing?): {}{more}",
            first.join(", ")
        ));
    }
    let mut out = head.unwrap_or_default() + "\n";
    for (_, l) in &rows {
        let _ = writeln!(out, "{l}");
    }
    rdmalab::output::write_file(&m.out, out.as_bytes())?;
    errln!(
        "rdmalab sweep merge: {} point(s) from {} file(s) → {}",
        rows.len(),
        m.inputs.len(),
        m.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21: the valid prefix of a partial file ends before a row the kill cut short, so
    /// `--resume` truncates there and the next row starts on its own line; a row with a
    /// column missing is refused.
    #[test]
    fn partial_rows_stop_before_a_cut_row_and_refuse_a_damaged_one() {
        let points = vec![vec!["a".to_string()], vec!["b".to_string()]];
        let head = "point,k,m1,m2";
        let whole = "# mark\npoint,k,m1,m2\n0,a,1,2\n";
        let (rows, keep) = partial_rows(&format!("{whole}1,b,3"), "# mark", head, &points)
            .expect("a cut row is not an error");
        assert_eq!(rows, [(0, "0,a,1,2".to_string())]);
        assert_eq!(keep, whole.len());
        let e =
            partial_rows("# mark\npoint,k,m1,m2\n0,a,1\n", "# mark", head, &points).unwrap_err();
        assert!(e.contains("damaged row") && e.contains("line 3"), "{e}");
        assert_eq!(csv_columns("1,\"x,y\",\"say \"\"hi\"\"\",2"), Some(4));
        assert_eq!(csv_columns("1,\"open"), None);
    }

    #[test]
    fn grids_shards_and_csv_fields() {
        let a = parse_vary("workload.message_bytes=1, 2").unwrap();
        let b = parse_vary("rdma.operation=write,send,read").unwrap();
        let g = grid(&[a.clone(), b]);
        assert_eq!(g.len(), 6);
        assert_eq!(g[0], ["1", "write"]);
        assert_eq!(g[5], ["2", "read"]);
        assert!(
            parse_vary("rdma.nope=1")
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(parse_vary("seed=1,,2").unwrap_err().contains("empty"));
        assert!(parse_vary("seed").is_err());
        assert_eq!(parse_shard("2/3"), Ok((2, 3)));
        for s in ["0/3", "4/3", "a/b", "3", "1/0"] {
            assert!(parse_shard(s).is_err(), "{s}");
        }
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(
            cell(Some(&serde_json::json!({"status": "success"}))),
            "success"
        );
        assert_eq!(
            cell(Some(
                &serde_json::json!({"status": "failed", "code": "EINVAL"})
            )),
            "EINVAL"
        );
        assert_eq!(cell(Some(&Value::Null)), "");
        let _ = a;
    }
}
