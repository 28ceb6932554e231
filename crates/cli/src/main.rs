//! The `rdmalab` command.
//!
//! `rdmalab` with no subcommand is `rdmalab serve`: the web lab on http://127.0.0.1:7878
//! (`--port`, `--bind`, `--open`), until Ctrl-C.
//!
//! `rdmalab verbs run FILE` runs a verbs session file (scenarios/verbs/README.md).
//!
//! Exit codes: 0 success; 1 a run failed (an expectation did not hold, or a budget was
//! exceeded); 2 bad input (bad flags, a malformed file).

#[macro_use]
mod out;

mod bad_input;

mod calibrate;
mod collective;
mod demo;
mod fio;
mod lab;
mod perftest;
mod plot;
mod run;
mod sweep;
mod trace;
mod validate;
mod verbs;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc instead of the system allocator. A large simulation's state (packets in flight,
/// event-queue slots, per-port queues) is many small blocks; mimalloc keeps blocks of a size
/// together on its own pages, so what a hop touches shares fewer pages and cache lines. The
/// 1024-host fat tree: user time 1.96 → 1.64 s (six alternating pairs, results identical).
/// It holds more memory than glibc's malloc (96 → 137 MB peak then; 82–85 MB now that QP
/// engines are boxed, packets in flight keep compact bodies and the event wheel is smaller).
/// It also gives the large arenas transparent huge pages with no setting (92 of 98 MB of that
/// run's resident memory, by `AnonHugePages`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "rdmalab",
    version,
    about = "Learn and measure how RDMA moves data compared with kernel TCP."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web lab (the default): the course, the six lessons and the simulation page.
    #[command(
        after_help = "Examples:\n  rdmalab                        # the lab on http://127.0.0.1:7878\n  rdmalab serve --port 8080 --open\n  rdmalab serve --bind 0.0.0.0    # share it with a classroom (no authentication)"
    )]
    Serve(ServeArgs),
    /// Run the fabric demo: an N→1 incast through one switch with drop-tail, PFC, PFC+ECN and
    /// PFC with a 1% congestion draw.
    #[command(after_help = "Example:\n  rdmalab demo --senders 8 --kib 1024 --buffer-kib 512")]
    Demo(demo::DemoArgs),
    /// Verbs sessions: run a file of verbs calls against the simulated fabric.
    Verbs(verbs::VerbsArgs),
    /// Measure this machine (memcpy, a null syscall, loopback TCP, mlock) and write a host
    /// profile TOML.
    #[command(
        after_help = "Example:\n  rdmalab calibrate --out host-profile.toml && rdmalab run 1 --profile host-profile.toml"
    )]
    Calibrate(calibrate::CalibrateArgs),
    /// List the lesson presets, one line each.
    #[command(after_help = "Example:\n  rdmalab presets && rdmalab run lesson5b")]
    Presets,
    /// Run a preset or scenario file through TCP and RDMA and print the comparison table.
    Run(run::RunArgs),
    /// Run a grid of parameter values (on all cores) into a CSV, with a chart; shardable.
    Sweep(sweep::SweepArgs),
    /// Write every frame of a run to a pcap and every trace record to JSON Lines.
    Trace(trace::TraceArgs),
    /// perftest (ib_write_lat, ib_write_bw, ...) and netperf (tcp_rr, tcp_stream) tests.
    Perftest(perftest::PerftestArgs),
    /// fio against a simulated NVMe over Fabrics target: NVMe/RDMA or NVMe/TCP, IOPS,
    /// completion latency percentiles and CPU per IO beside the local device's latency.
    Fio(fio::FioArgs),
    /// nccl-tests on the simulated fabric: all_reduce, all_gather, reduce_scatter, alltoall
    /// between N hosts over RC QPs or kernel TCP.
    Collective(collective::CollectiveArgs),
    /// Run one of the web lab's fabric labs: incast, hol (PFC head-of-line victim), storm
    /// (PFC storm and watchdog), deadlock (PFC deadlock on a ring), loss (go-back-N vs
    /// selective repeat vs TCP), qps (1 vs N QPs over ECMP), trouble (troubleshooting cases),
    /// nvmf (NVMe-oF over RDMA vs TCP), allreduce (AI training's ring all-reduce over ECMP).
    Lab(lab::LabArgs),
    /// Compare the simulator's figures with the published ones in research/figures.md that it
    /// can reproduce (PFC pause times, xoff and headroom, go-back-N and Mathis under loss,
    /// copy rate, TCP round trip), each with its source and tolerance; exit 1 when one is out.
    Validate(validate::ValidateArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Port to listen on.
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// Address to bind. The default keeps the lab on this machine; 0.0.0.0 shares it with
    /// the network (a classroom), with no authentication.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// Open the lab in the default browser once it listens.
    #[arg(long)]
    open: bool,
    /// A host name the lab answers to besides the bound address (repeatable): the name a
    /// classroom reaches a `--bind` address by. Requests naming any other Host get 421, so a
    /// web page cannot reach the lab through DNS rebinding.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            port: 7878,
            bind: std::net::IpAddr::from([127, 0, 0, 1]),
            open: false,
            allow_host: Vec::new(),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // `rdmalab ... | head`: the reader has what it wanted.
        Err(e) if out::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<bad_input::BadInput>() => {
            errln!("{e}");
            ExitCode::from(2)
        }
        Err(e) => {
            errln!("rdmalab: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => serve(ServeArgs::default()),
        Some(Command::Serve(a)) => serve(a),
        Some(Command::Demo(a)) => demo::demo(a),
        Some(Command::Verbs(a)) => verbs::verbs(a),
        Some(Command::Calibrate(a)) => calibrate::calibrate_cmd(a),
        Some(Command::Presets) => run::presets(),
        Some(Command::Run(a)) => run::run(a),
        Some(Command::Sweep(a)) => sweep::sweep(a),
        Some(Command::Trace(a)) => trace::trace(a),
        Some(Command::Perftest(a)) => perftest::perftest(a),
        Some(Command::Fio(a)) => fio::fio(a),
        Some(Command::Collective(a)) => collective::collective(a),
        Some(Command::Lab(a)) => lab::lab(a),
        Some(Command::Validate(a)) => validate::validate(a),
    }
}

fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let mut state = match web::AppState::new() {
        Ok(s) => s,
        Err(e) => {
            errln!("rdmalab serve: the embedded course is broken: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    state.hosts = std::sync::Arc::new(web::guard::HostPolicy::for_bind(a.bind, &a.allow_host));
    if !a.bind.is_loopback() {
        errln!(
            "rdmalab serve: warning: --bind {} makes the lab reachable from the network, with no \
             authentication: anyone who can reach this address can run simulations on this machine{}",
            a.bind,
            if a.bind.is_unspecified() {
                " (and every Host name is answered, since the names it is reached by are unknown)"
            } else {
                ""
            }
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let addr = std::net::SocketAddr::new(a.bind, a.port);
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => {
                return bad_input::bad(
                    "serve",
                    format!("cannot listen on {addr}: {e} (try --port with another number)"),
                );
            }
        };
        let url = format!("http://{}/", listener.local_addr()?);
        outln!("rdmalab lab: {url}  (Ctrl-C stops it)")?;
        if a.open {
            open_browser(&url);
        }
        web::serve(listener, state).await?;
        outln!("rdmalab lab: stopped")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Best effort: the desktop's URL opener; the URL is printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        errln!("rdmalab serve: could not open a browser ({opener}: {e}); open {url} yourself");
    }
}
