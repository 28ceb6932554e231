//! `rdmalab verbs run FILE`: run a verbs session file and show every step.
//!
//! Exit codes: 0 every expectation passed; 1 an expectation failed, the session stopped on a
//! budget, or an output could not be written (the pcap, standard output; the message names
//! it); 2 bad input (an unreadable or malformed file, printed as `FILE:LINE:COL: message`, or a
//! bad flag).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use rdmalab::session::{self, Outcome, Report, RunOptions};
use rdmalab::units::SimTime;
use rdmalab::verbs::NicProfile;

/// `rdmalab verbs ...`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rdmalab verbs run scenarios/verbs/write.toml\n  rdmalab verbs run scenarios/verbs/rnr.toml --profile rxe --pcap rnr.pcap && tshark -r rnr.pcap"
)]
pub struct VerbsArgs {
    #[command(subcommand)]
    command: VerbsCommand,
}

#[derive(clap::Subcommand)]
enum VerbsCommand {
    /// Run a verbs session file (scenarios/verbs/README.md documents the format) and print
    /// every step, its result and its expectations. Exit status: 0 all expectations passed,
    /// 1 one failed (or a budget stopped it, or an output could not be written), 2 the file is
    /// malformed.
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// The session file (TOML).
    file: PathBuf,
    /// Print one JSON document (schema in scenarios/verbs/README.md) instead of the listing.
    #[arg(long)]
    json: bool,
    /// Write every frame on every link to this pcap file (Wireshark decodes RoCEv2).
    #[arg(long, value_name = "OUT.pcap")]
    pcap: Option<PathBuf>,
    /// Run under this NIC profile instead of the one the file names.
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ProfileArg {
    /// NVIDIA ConnectX with rdma-core's mlx5 provider.
    Mlx5,
    /// Soft-RoCE (rxe).
    Rxe,
    /// The IBTA specification read literally.
    Ibta,
}

impl From<ProfileArg> for NicProfile {
    fn from(p: ProfileArg) -> NicProfile {
        match p {
            ProfileArg::Mlx5 => NicProfile::Mlx5,
            ProfileArg::Rxe => NicProfile::Rxe,
            ProfileArg::Ibta => NicProfile::Ibta,
        }
    }
}

/// Runs `rdmalab verbs ...`.
pub fn verbs(a: VerbsArgs) -> anyhow::Result<ExitCode> {
    match a.command {
        VerbsCommand::Run(r) => run(r),
    }
}

fn bad_input(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("", msg)
}

fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let shown = a.file.display().to_string();
    let src = match read_bounded(&a.file) {
        Ok(s) => s,
        Err(e) => return bad_input(format!("{shown}: {e}")),
    };
    let plan = match session::parse(&src) {
        Ok(p) => p,
        Err(e) => return bad_input(format!("{shown}:{e}")),
    };
    // Written to a temporary file, renamed into place once the session has run
    // (rdmalab::output): an interrupted or failed run leaves no cut-off pcap.
    let capture = match a.pcap.as_deref().map(rdmalab::output::Output::create) {
        None => None,
        Some(Ok(o)) => Some(o),
        Some(Err(e)) => {
            errln!("{shown}: cannot create the pcap: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let pcap: Option<Box<dyn std::io::Write + Send>> = match &capture {
        Some(o) => Some(Box::new(o.writer()?)),
        None => None,
    };
    let options = RunOptions {
        profile: a.profile.map(NicProfile::from),
        pcap,
        max_events: None,
    };
    let report = session::run(&plan, options).with_context(|| format!("running {shown}"))?;
    if let Some(o) = capture {
        o.commit()?;
    }
    if a.json {
        let doc = JsonDoc {
            file: &shown,
            report: &report,
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        out!("{}", render(&shown, &report))?;
    }
    if report.passed {
        Ok(ExitCode::SUCCESS)
    } else {
        if a.json {
            // The JSON holds the details; say on stderr why the exit status is 1.
            for (s, c) in report.failures() {
                errln!(
                    "{shown}:{}: step {} {}: expected {}, got {}",
                    s.line,
                    s.index,
                    c.what,
                    c.expected,
                    c.got
                );
            }
            if let Some(why) = &report.aborted {
                errln!("{shown}: {why}");
            }
        }
        Ok(ExitCode::from(1))
    }
}

/// The `--json` document: the report with the file's path first.
#[derive(serde::Serialize)]
struct JsonDoc<'a> {
    file: &'a str,
    #[serde(flatten)]
    report: &'a Report,
}

/// Reads the file, refusing ones larger than a session may be before reading them whole.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut buf = String::new();
    let max = session::limits::MAX_FILE_BYTES as u64;
    f.take(max + 1).read_to_string(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "the file is larger than {max} bytes, the limit for a session file"
        )));
    }
    Ok(buf)
}

/// The readable listing: each step with its time, host, call, result and expectations, then a
/// verdict.
fn render(file: &str, r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{file}: profile {}, {} topology, hosts {}\n",
        r.profile,
        r.topology,
        r.hosts.join(", ")
    );
    for s in &r.steps {
        let time = SimTime::from_ps(s.time_ps).to_string();
        let host = s.host.as_deref().unwrap_or("-");
        let _ = writeln!(o, "[{:>3}] {time:<14} {host:<6} {}", s.index, s.text);
        let pad = "      ";
        match &s.result {
            Outcome::Completions { completions } => {
                if completions.is_empty() {
                    let _ = writeln!(o, "{pad}→ no completion");
                }
                for w in completions {
                    let mut line = format!(
                        "{pad}→ wc wr_id {} {} ({})",
                        w.wr_id, w.status, w.status_str
                    );
                    if let Some(op) = &w.opcode {
                        let _ = write!(line, ", opcode {op}, byte_len {}", w.byte_len);
                    }
                    if let Some(imm) = w.imm_data {
                        let _ = write!(line, ", imm_data {imm:#x}");
                    }
                    let _ = write!(line, ", qp {}", w.qp);
                    let _ = writeln!(o, "{line}");
                }
            }
            other => {
                let _ = writeln!(o, "{pad}→ {}", other.summary());
            }
        }
        for n in &s.notes {
            let _ = writeln!(o, "{pad}  note: {n}");
        }
        for c in &s.expectations {
            if c.passed && c.implicit {
                continue;
            }
            if c.passed {
                let _ = writeln!(o, "{pad}  ✓ {}: {}", c.what, c.got);
            } else {
                let _ = writeln!(
                    o,
                    "{pad}  ✗ {}: expected {}, got {}",
                    c.what, c.expected, c.got
                );
            }
        }
    }
    let sum = &r.summary;
    let _ = writeln!(o);
    let end = SimTime::from_ps(r.end_time_ps);
    if let Some(why) = &r.aborted {
        let _ = writeln!(o, "ABORTED: {why}");
    }
    if r.passed {
        let _ = writeln!(
            o,
            "PASS: {} steps, {} expectations passed; the session ended at {end}",
            sum.steps, sum.passed
        );
    } else {
        let _ = writeln!(
            o,
            "FAIL: {} of {} expectations failed:",
            sum.failed, sum.expectations
        );
        for (s, c) in r.failures() {
            let _ = writeln!(
                o,
                "  {file}:{}: step {} ({}) {}: expected {}, got {}",
                s.line, s.index, s.call, c.what, c.expected, c.got
            );
        }
    }
    o
}
