//! `rdmalab presets` and `rdmalab run`: run a scenario and print the comparison report.

use comfy_table::{ContentArrangement, Table};
use rdmalab::report::{Report, RunOptions, run_plan_with};
use rdmalab::scenario;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Arguments of `rdmalab run`.
#[derive(clap::Args)]
#[command(after_long_help = RUN_HELP)]
pub struct RunArgs {
    /// A preset name (`lesson1`..`lesson6`, `1`..`6`) or a scenario TOML file.
    pub scenario: String,
    /// Override one key after the file is read, e.g. `--set rdma.operation=send` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`: whose verbs behaviour to reproduce, the same as
    /// `--set nic.profile=...`) or a host profile TOML written by `rdmalab calibrate` (its
    /// `[profile]` constants replace the built-in ones). Repeatable: one of each.
    #[arg(long, value_name = "NIC|FILE")]
    pub profile: Vec<String>,
    /// Write every frame of the two runs to pcaps: `--pcap out.pcap` gives `out-tcp.pcap` and
    /// `out-rdma.pcap` (Wireshark and tshark decode TCP, RoCEv2 and PFC); a permutation run
    /// writes its one run to `out.pcap` itself.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<std::path::PathBuf>,
    /// Print one JSON document (schema below) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Threads a fabric run (a permutation, a connection matrix or a collective) may use, 1..=256 (default:
    /// the cores available, at most 8; one below 256 hosts, where splitting gains nothing).
    /// The fabric is split into as many partitions, whole pods or racks each, run side by
    /// side in windows of the shortest cut link's delay; the result is the same for any
    /// count, only the wall time changes. Lesson presets and the other runs are
    /// single-threaded (their fabric is one rack).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,
}

impl RunArgs {
    /// The threads asked for, or the default for a fabric of `hosts` hosts.
    pub fn threads_for(&self, hosts: u64) -> u32 {
        self.threads
            .unwrap_or_else(|| rdmalab::world::default_threads_for(hosts))
    }
}

const RUN_HELP: &str = "\
Examples:
  rdmalab run lesson1                                   # ① 4 KiB: TCP vs RDMA WRITE
  rdmalab run 5 --set lossless.enabled=true --json      # ⑤ with PFC, as JSON
  rdmalab run 4 --profile rxe                           # ④ under rxe: EINVAL
  rdmalab run my.toml --profile host-profile.toml --pcap out.pcap

Exit codes: 0 the run finished (a failing RDMA verb is a result, shown in the outcome row);
1 the run itself failed (an event budget exceeded); 2 bad input (unknown preset or file, unknown --set key, out-of-range value).

JSON schema (\"schema\": \"rdmalab.report/1\"), documented in full in the rdmalab::report module:
  scenario   {seed, message_bytes, messages, operation, link_gbps, mode (count|stream), stream_us,
             pfc null or {xoff_from (auto|set), xoff_bytes, xon_bytes, headroom_bytes,
               port_mtu_bytes, response_ns, pause_quanta, pause_duration_ns}}
  tcp, rdma  null or {path, operation, outcome {status: success|failed, verb, code, where, why},
             messages_delivered, bytes_delivered,
             data_path and setup {copies, copied_bytes, syscalls, kernel_local, kernel_remote,
               cpu_stages_local, cpu_stages_remote [{name, count, busy_ns, kernel}],
               cpu_ns_local, cpu_ns_remote, cpu_ns_per_message_local, cpu_ns_per_message_remote,
               duration_ns},
             transport_in (\"kernel software\" | \"NIC hardware\"),
             remote_cpu (none | light | full), remote_cpu_why,
             latency null or {delivered_ns, delivered_at, placed_at_remote_ns,
               local_completion_ns, local_completion_at,
               breakdown [{side, unit, stage, count, busy_ns, start_ns, end_ns}],
               timeline [{side, lane (app|kernel|nic|switch), stage, start_ns, end_ns, runs}]
                 (at most 2048), timeline_truncated (intervals left out),
               frames [{kind, forward, bytes, sent_ns, at_switch_ns, left_switch_ns,
                 arrived_ns, dropped}] (at most 256), frames_truncated},
             failed_attempt null or {timeline, timeline_truncated, frames, frames_truncated,
               gave_up_ns},
             memory_bus_bytes_per_delivered_byte {local, remote},
             retransmitted_bytes, drops, pfc_pauses, pfc_watchdog_drops, drawn_overflows_paused,
             ecn_marks,
             recovery {loss_events, timeouts, tail_probes, mean_inflight_packets},
             throughput null or {gbps, window_ns, bytes, stalled_ns, batch_gbps, ci95_gbps,
               retention_ci95, baseline_gbps, retention,
               model null or {model (go-back-N|Mathis), packets, loss_events, loss_rate,
                 timeouts, timeout_wait_ns, inflight_packets, rtt_ns, mss_bytes,
                 predicted_gbps, predicted_retention, measured_over_predicted}},
             cross_traffic null or {senders, bursts, bytes_offered, bytes_delivered,
               frames_dropped, offered_gbps, ceiling}}
  rdma_over_tcp_latency  number or null
Remote CPU: none = no CPU stage on the remote's data path; light = only user-space verbs calls
(post_recv, poll_cq, req_notify_cq) plus at most one completion interrupt and one wake-up per
message and at most 2 µs of CPU per message; full = anything else (kernel protocol work, copies,
syscalls). Times are ns of simulated time.";

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("run", msg)
}

/// `rdmalab presets`: one line each.
pub fn presets() -> anyhow::Result<ExitCode> {
    let width = scenario::presets()
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for p in scenario::presets() {
        outln!("{:<width$}  {}", p.name, p.title)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A scenario loaded for a command: the plan, host-profile overrides, and the name to show.
pub struct Loaded {
    /// The plan, with every `--profile` and `--set` applied.
    pub plan: scenario::Plan,
    /// Host model constants from a calibrated profile.
    pub host: BTreeMap<String, u64>,
    /// The preset name, or the file as given.
    pub name: String,
    /// The scenario text (the preset's or the file's).
    pub text: String,
    /// The NIC-profile and `--set` assignments, in the order applied.
    pub sets: Vec<String>,
}

/// Reads a preset or scenario file and applies `--profile` and `--set`; the error is a
/// message for a bad-input exit (2).
pub fn load(
    scenario_arg: &str,
    profiles: &[String],
    user_sets: &[String],
) -> Result<Loaded, String> {
    let text = match scenario::preset(scenario_arg) {
        Some(p) => p.toml.to_string(),
        None => {
            let path = std::path::Path::new(scenario_arg);
            if !path.is_file() {
                return Err(format!(
                    "{scenario_arg} is neither a preset ({}) nor a scenario file",
                    scenario::preset_names()
                ));
            }
            read_text(path, scenario::MAX_FILE_BYTES as u64)?
        }
    };
    let mut sets: Vec<String> = Vec::new();
    let mut host = BTreeMap::new();
    let (mut nic, mut file): (Option<&str>, Option<&str>) = (None, None);
    for p in profiles {
        if scenario::NicKind::NAMES.contains(&p.as_str()) {
            if let Some(first) = nic.replace(p) {
                return Err(format!(
                    "--profile {first} and --profile {p}: give one NIC profile ({})",
                    scenario::NicKind::NAMES.join(", ")
                ));
            }
            sets.push(format!("nic.profile=\"{p}\""));
            continue;
        }
        if let Some(first) = file.replace(p) {
            return Err(format!(
                "--profile {first} and --profile {p}: give one host profile file"
            ));
        }
        host.extend(
            load_host_profile(std::path::Path::new(p))
                .map_err(|e| format!("--profile {p}: {e}"))?,
        );
    }
    // --set comes last, so it wins over --profile.
    sets.extend(user_sets.iter().cloned());
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    let plan = match scenario::parse_with(&text, &refs) {
        Ok(p) => p,
        // A file's errors are FILE:LINE:COL; a --set error already names its assignment.
        Err(e) if e.origin == scenario::Origin::File => return Err(format!("{scenario_arg}:{e}")),
        Err(e) => return Err(e.to_string()),
    };
    let name =
        scenario::preset(scenario_arg).map_or(scenario_arg.to_string(), |p| p.name.to_string());
    Ok(Loaded {
        plan,
        host,
        name,
        text,
        sets,
    })
}

/// `rdmalab run`.
pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let Loaded {
        plan, host, name, ..
    } = match load(&a.scenario, &a.profile, &a.sets) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    if plan.workload.pattern == scenario::Pattern::Permutation {
        return permutation(&a, &name, &plan, &host);
    }
    if plan.workload.pattern == scenario::Pattern::Matrix {
        return matrix(&a, &name, &plan, &host);
    }
    if plan.workload.pattern == scenario::Pattern::Collective {
        return collective(&a, &plan, &host);
    }
    let opts = RunOptions {
        host,
        pcap: a.pcap.clone(),
        trace: None,
    };
    let report = match run_plan_with(&plan, &opts) {
        Ok(r) => r,
        Err(e) if e.is_bad_input() => return bad(e),
        Err(e) => {
            errln!("rdmalab run: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let out = if a.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        table(&name, &report)
    };
    crate::out::print(out)?;
    Ok(ExitCode::SUCCESS)
}

/// `workload.pattern = "permutation"`: the fat-tree permutation's report instead of the
/// comparison table.
fn permutation(
    a: &RunArgs,
    name: &str,
    plan: &scenario::Plan,
    host: &BTreeMap<String, u64>,
) -> anyhow::Result<ExitCode> {
    if let Some(why) = rdmalab::permutation::unsupported(plan) {
        return bad(format!("workload.pattern = permutation: {why}"));
    }
    let out = rdmalab::fleet::Outputs {
        pcap: a.pcap.as_deref(),
        trace: None,
        threads: a.threads_for(plan.topology.k.pow(3) / 4),
    };
    let r = match rdmalab::permutation::run_plan(plan, host, &out) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab run: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let derived = [
        ("fct_p50_ps", r.fct_quantile(0.5).into()),
        ("fct_p99_ps", r.fct_quantile(0.99).into()),
        ("fct_max_ps", r.fct_quantile(1.0).into()),
        ("events_per_s", r.events_per_s().into()),
        ("data_packets_per_s", r.packets_per_s().into()),
    ];
    print_fleet(
        a.json,
        &r,
        &derived,
        || r.text(name),
        r.completed == r.hosts,
    )
}

/// Prints a fleet run's report (the permutation's or a matrix's): its JSON with the `derived`
/// figures added, or its text. Exit 1 unless every flow completed.
fn print_fleet(
    json: bool,
    report: &impl serde::Serialize,
    derived: &[(&str, serde_json::Value)],
    text: impl FnOnce() -> String,
    all_completed: bool,
) -> anyhow::Result<ExitCode> {
    let out = if json {
        let mut v = serde_json::to_value(report)?;
        if let Some(o) = v.as_object_mut() {
            for (k, x) in derived {
                o.insert((*k).into(), x.clone());
            }
        }
        serde_json::to_string_pretty(&v)? + "\n"
    } else {
        text()
    };
    crate::out::print(out)?;
    Ok(if all_completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Largest connection matrix read: htsim's 1024-flow permutation is 40 KB; 65,536 flows with
/// triggers fit in a few MB.
const MAX_MATRIX_BYTES: u64 = 16 << 20;

/// Reads and parses the plan's `workload.matrix` (relative to the scenario file's folder, or
/// to the working directory for a preset); errors read `FILE:LINE: what is wrong`.
pub fn load_matrix(
    scenario_arg: &str,
    plan: &scenario::Plan,
) -> Result<(String, scenario::matrix::Matrix), String> {
    let rel = std::path::Path::new(&plan.workload.matrix);
    let path = match std::path::Path::new(scenario_arg).parent() {
        Some(dir) if scenario::preset(scenario_arg).is_none() && rel.is_relative() => dir.join(rel),
        _ => rel.to_path_buf(),
    };
    let shown = path.display().to_string();
    let text = read_text(&path, MAX_MATRIX_BYTES)
        .map_err(|e| format!("workload.matrix = {:?}: {e}", plan.workload.matrix))?;
    let m = scenario::matrix::parse(&text).map_err(|e| format!("{shown}:{e}"))?;
    Ok((shown, m))
}

/// `workload.pattern = "matrix"`: the flows of a csg-htsim connection matrix, reported per
/// flow and as FCT quantiles.
fn matrix(
    a: &RunArgs,
    name: &str,
    plan: &scenario::Plan,
    host: &BTreeMap<String, u64>,
) -> anyhow::Result<ExitCode> {
    if let Some(why) = rdmalab::permutation::unsupported(plan) {
        return bad(format!("workload.pattern = matrix: {why}"));
    }
    let (file, m) = match load_matrix(&a.scenario, plan) {
        Ok(x) => x,
        Err(e) => return bad(e),
    };
    let out = rdmalab::fleet::Outputs {
        pcap: a.pcap.as_deref(),
        trace: None,
        threads: a.threads_for(plan.topology.k.pow(3) / 4),
    };
    let r = match rdmalab::matrix::run_plan(plan, &m, host, &out) {
        Ok(r) => r,
        Err(e @ rdmalab::world::WorldError::Setup(_)) => return bad(e),
        Err(e) => {
            errln!("rdmalab run: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let derived = [
        ("matrix", file.clone().into()),
        ("fct_p50_ps", r.fct_quantile(0.5).into()),
        ("fct_p99_ps", r.fct_quantile(0.99).into()),
        ("fct_max_ps", r.fct_quantile(1.0).into()),
        ("events_per_s", r.events_per_s().into()),
    ];
    let all = r.completed == r.flows.len();
    print_fleet(a.json, &r, &derived, || r.text(name, &file), all)
}

/// `workload.pattern = "collective"`: the collective's nccl-tests row instead of the
/// comparison table.
fn collective(
    a: &RunArgs,
    plan: &scenario::Plan,
    host: &BTreeMap<String, u64>,
) -> anyhow::Result<ExitCode> {
    if a.pcap.is_some() {
        return bad("--pcap: a collective run writes no capture (run `rdmalab trace` on a pair)");
    }
    let hosts = plan.topology().map_or(0, |t| t.hosts().len() as u32);
    let cfg = rdmalab::collective::Config {
        threads: a.threads_for(hosts.into()),
        ..rdmalab::collective::Config::from_plan(plan)
    };
    if let Err(e) = cfg.check(hosts) {
        return bad(format!("workload.pattern = collective: {e}"));
    }
    let r = match rdmalab::collective::run_plan(plan, host, &cfg) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab run: the run failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let out = if a.json {
        serde_json::to_string_pretty(&r)? + "\n"
    } else {
        r.text()
    };
    crate::out::print(out)?;
    Ok(ExitCode::SUCCESS)
}

/// Largest host profile read (`rdmalab calibrate` writes about 2 KB).
const MAX_HOST_PROFILE_BYTES: u64 = 64 << 10;

/// Reads a UTF-8 file of at most `max` bytes. The size is checked before anything is read
/// (from the metadata, then again while reading, for files that grow or lie about their size),
/// so a huge file costs nothing; the message names the path and the limit.
pub fn read_text(path: &std::path::Path, max: u64) -> Result<String, String> {
    use std::io::Read as _;
    let shown = path.display();
    let too_big = || format!("{shown}: larger than {max} bytes, the limit for this file");
    let f = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    if f.metadata().is_ok_and(|m| m.is_file() && m.len() > max) {
        return Err(too_big());
    }
    let mut buf = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("{shown}: {e}"))?;
    if buf.len() as u64 > max {
        return Err(too_big());
    }
    String::from_utf8(buf).map_err(|_| format!("{shown}: not UTF-8 text"))
}

/// The `[profile]` table of a `rdmalab calibrate` file: constant name → picoseconds. Unknown
/// names and out-of-range values are reported when the hosts are built.
fn load_host_profile(path: &std::path::Path) -> Result<BTreeMap<String, u64>, String> {
    let text = read_text(path, MAX_HOST_PROFILE_BYTES).map_err(|e| {
        format!("{e} (expected mlx5, rxe, ibta or a host profile file from `rdmalab calibrate`)")
    })?;
    let doc: toml::Table = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    let Some(profile) = doc.get("profile").and_then(|v| v.as_table()) else {
        return Err("no [profile] table (write one with `rdmalab calibrate --out FILE`)".into());
    };
    let mut m = BTreeMap::new();
    for (k, v) in profile {
        let Some(ps) = v.as_integer().and_then(|x| u64::try_from(x).ok()) else {
            return Err(format!(
                "[profile] {k} = {v}: expected a non-negative integer (picoseconds)"
            ));
        };
        m.insert(k.clone(), ps);
    }
    crate::calibrate::check(&m)?;
    Ok(m)
}

fn table(name: &str, r: &Report) -> String {
    let s = &r.scenario;
    let mut o = String::new();
    let workload = if s.mode == "stream" {
        format!(
            "{} µs stream of {} B messages",
            s.stream_us, s.message_bytes
        )
    } else {
        format!("{} message(s) of {} B", s.messages, s.message_bytes)
    };
    let _ = writeln!(
        o,
        "{name}: {workload}, RDMA {}, {} Gb/s, seed {}",
        s.operation, s.link_gbps, s.seed
    );
    if let Some(pfc) = &s.pfc {
        let _ = writeln!(o, "{}", pfc.line());
    }
    let mut t = Table::new();
    t.set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(140);
    t.set_header(["", "TCP (kernel sockets)", "RDMA"]);
    for (label, tcp, rdma) in r.rows() {
        t.add_row([label, tcp, rdma]);
    }
    let _ = writeln!(o, "{t}");
    for p in [&r.tcp, &r.rdma].into_iter().flatten() {
        let Some(l) = &p.latency else { continue };
        let _ = writeln!(
            o,
            "\n{} first message, stage by stage (ns after the call):",
            p.path
        );
        let mut b = Table::new();
        b.set_header(["side", "unit", "stage", "runs", "busy", "start", "end"]);
        for x in &l.breakdown {
            b.add_row([
                x.side.to_string(),
                x.unit.to_string(),
                x.stage.to_string(),
                x.count.to_string(),
                format!("{:.1}", x.busy_ns),
                format!("{:.1}", x.start_ns),
                format!("{:.1}", x.end_ns),
            ]);
        }
        let _ = writeln!(o, "{b}");
    }
    o
}
