//! `rdmalab collective`: nccl-tests' `*_perf` on the simulated fabric — an all-reduce,
//! all-gather, reduce-scatter or all-to-all between `--hosts` hosts over RC QPs or kernel TCP,
//! one row per size in nccl-tests' columns.

use crate::run::load;
use rdmalab::collective::{self, Algorithm, Config, Op, Transport};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = COLLECTIVE_HELP)]
pub struct CollectiveArgs {
    /// all_reduce, all_gather, reduce_scatter or alltoall.
    pub op: String,
    /// Smallest size, bytes per host (suffixes K, M, G: powers of 1024).
    #[arg(short = 'b', long = "minbytes", default_value = "8M")]
    pub min: String,
    /// Largest size.
    #[arg(short = 'e', long = "maxbytes", default_value = "8M")]
    pub max: String,
    /// Multiply the size by this between rows (2..=16).
    #[arg(short = 'f', long = "stepfactor", default_value_t = 2)]
    pub factor: u64,
    /// Hosts (2..=1024), one NIC each.
    #[arg(long, default_value_t = 8)]
    pub hosts: u32,
    /// `switch` (one switch, the default) or `leaf_spine` (one host per leaf,
    /// `--set topology.spines=N` spines).
    #[arg(long, default_value = "switch")]
    pub topology: String,
    /// rdma (RC, WRITE with immediate) or tcp (kernel sockets).
    #[arg(long, default_value = "rdma")]
    pub transport: String,
    /// ring or halving_doubling.
    #[arg(long, default_value = "ring")]
    pub algorithm: String,
    /// Parallel rings (channels), 1..=16.
    #[arg(long, default_value_t = 1)]
    pub channels: u32,
    /// QPs (sockets) per connection, 1..=16 (NCCL_IB_QPS_PER_CONNECTION).
    #[arg(long = "qps", default_value_t = 1)]
    pub qps: u32,
    /// Chunk size (4K..=64M).
    #[arg(long = "chunk", default_value = "512K")]
    pub chunk: String,
    /// Host reduction cost, ps per KiB (0..=10000000; 0 models a GPU's reduction).
    #[arg(long = "reduce-ps-per-kib", default_value_t = collective::DEF_REDUCE_PS_PER_KIB)]
    pub reduce: u64,
    /// Link rate, Gb/s.
    #[arg(long = "link-gbps")]
    pub link_gbps: Option<u64>,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`) or a host profile TOML.
    #[arg(long, value_name = "NIC|FILE")]
    pub profile: Vec<String>,
    /// Any other scenario key, e.g. `--set topology.spines=4` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// The report as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Threads the run may use, 1..=256 (default: the cores available, at most 8; one below
    /// 256 hosts): the fabric is split into as many
    /// partitions of whole racks; the result is the same for any count.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,
}

const COLLECTIVE_HELP: &str = "\
Examples:
  rdmalab collective all_reduce -b 8M -e 1G -f 2 --hosts 16 --topology leaf_spine
  rdmalab collective all_reduce -b 64M -e 64M --hosts 8 --transport tcp
  rdmalab collective all_reduce --hosts 4 --topology leaf_spine --set topology.spines=2 --set topology.spine_gbps=50 --qps 4

Columns as nccl-tests prints them (size, count, type, redop, time, algbw, busbw, #wrong),
then the ideal (line-rate) time and busbw from the topology, CPU per GB of buffer (mean over
hosts), the busiest link's utilisation, PAUSE frames, ECN marks and retransmissions. All of it
simulated. Small runs hold real bytes and are checked (#wrong); large ones are synthetic (N/A).
Exit codes: 0 done; 1 the run failed; 2 bad input.";

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("collective", msg)
}

/// `8M` → 8388608.
fn parse_size(flag: &str, s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{flag} {s:?}: a byte count such as 8M, 1G or 65536"))
}

/// `rdmalab collective`.
pub fn collective(a: CollectiveArgs) -> anyhow::Result<ExitCode> {
    let Some(op) = Op::parse(&a.op) else {
        return bad(format!(
            "unknown operation {:?}: one of {}",
            a.op,
            Op::NAMES.join(", ")
        ));
    };
    let Some(algorithm) = Algorithm::parse(&a.algorithm) else {
        return bad(format!(
            "--algorithm {:?}: one of {}",
            a.algorithm,
            Algorithm::NAMES.join(", ")
        ));
    };
    let transport = match a.transport.as_str() {
        "rdma" => Transport::Rdma,
        "tcp" => Transport::Tcp,
        t => return bad(format!("--transport {t:?}: rdma or tcp")),
    };
    if !["switch", "leaf_spine"].contains(&a.topology.as_str()) {
        return bad(format!(
            "--topology {:?}: switch or leaf_spine (one NIC per host)",
            a.topology
        ));
    }
    let (min, max, chunk) = match (
        parse_size("-b", &a.min),
        parse_size("-e", &a.max),
        parse_size("--chunk", &a.chunk),
    ) {
        (Ok(x), Ok(y), Ok(z)) => (x, y, z),
        (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => return bad(e),
    };
    if min > max {
        return bad(format!("-b {min} is above -e {max}"));
    }
    if !(2..=16).contains(&a.factor) {
        return bad(format!("-f {}: the step factor is 2..=16", a.factor));
    }
    let mut sizes = vec![min];
    while let Some(&last) = sizes.last() {
        match last.checked_mul(a.factor) {
            Some(s) if s <= max => sizes.push(s),
            _ => break,
        }
    }
    if sizes.len() > 32 {
        return bad("-b to -e by -f gives more than 32 sizes");
    }
    let cfg = Config {
        op,
        algorithm,
        transport,
        channels: a.channels,
        qps: a.qps,
        chunk_bytes: chunk,
        reduce_ps_per_kib: a.reduce,
        sizes,
        threads: a
            .threads
            .unwrap_or_else(|| rdmalab::world::default_threads_for(a.hosts.into())),
    };
    if let Err(e) = cfg.check(a.hosts) {
        let flag = match e.split(' ').next().unwrap_or("") {
            "hosts" => "--hosts",
            "channels" => "--channels",
            "qps_per_connection" => "--qps",
            "chunk_bytes" => "--chunk",
            "reduce_ps_per_kib" => "--reduce-ps-per-kib",
            "size" => "-b/-e",
            _ => "--algorithm",
        };
        return bad(format!("{flag}: {e}"));
    }
    let mut sets = vec![
        "workload.pattern=\"collective\"".to_string(),
        format!("topology.kind=\"{}\"", a.topology),
        format!("topology.hosts={}", a.hosts),
    ];
    if let Some(g) = a.link_gbps {
        sets.push(format!("topology.link_gbps={g}"));
    }
    sets.extend(a.sets.iter().cloned());
    let loaded = match load("lesson1", &a.profile, &sets) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    let r = match collective::run_plan(&loaded.plan, &loaded.host, &cfg) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab collective: {} failed: {e}", a.op);
            return Ok(ExitCode::from(1));
        }
    };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r)?)?;
    } else {
        out!("{}", r.text())?;
    }
    Ok(ExitCode::SUCCESS)
}
