//! `rdmalab perftest`: perftest's `ib_*` tests and netperf's `tcp_rr`/`tcp_stream` on the
//! simulated fabric, with their main flags and their output layout.

use crate::run::load;
use rdmalab::perftest::{
    self, CQ_MOD_RANGE, DEF_CQ_MOD, MAX_INLINE_DATA, MAX_SEND_BW_ITERS, Options, Rows, Test,
};
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = PERFTEST_HELP)]
pub struct PerftestArgs {
    /// ib_write_lat, ib_write_bw, ib_read_lat, ib_read_bw, ib_send_lat, ib_send_bw,
    /// ib_atomic_lat, tcp_rr or tcp_stream.
    pub test: String,
    /// Message size in bytes (default: 2 for latency tests, 65536 for bandwidth, 1 for tcp_rr).
    #[arg(short = 's', long = "size")]
    pub size: Option<u64>,
    /// Every size from 2 B to 8 MiB, doubling (one row each).
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Iterations per size (default 1000 for latency tests, 5000 for bandwidth).
    #[arg(short = 'n', long = "iters")]
    pub iters: Option<u64>,
    /// Path MTU: 256, 512, 1024, 2048 or 4096.
    #[arg(short = 'm', long = "mtu")]
    pub mtu: Option<u64>,
    /// Queue pairs for bandwidth tests (1..=64), each with its own buffers and `-n` messages.
    #[arg(short = 'q', long = "qp", default_value_t = 1)]
    pub qps: u32,
    /// Work requests in flight for bandwidth tests.
    #[arg(short = 't', long = "tx-depth", default_value_t = 128)]
    pub tx_depth: u64,
    /// Report bandwidth in Gb/sec instead of MB/sec.
    #[arg(long = "report_gbits")]
    pub report_gbits: bool,
    /// Send messages up to this size inline (WRITE and SEND; 0..=256, the QPs'
    /// max_inline_data). Default as perftest's: 220 for ib_write_lat, 236 for ib_send_lat,
    /// 0 for the bandwidth tests (READ and atomics never inline).
    #[arg(short = 'I', long = "inline_size")]
    pub inline: Option<u32>,
    /// Bandwidth tests: request a completion every N work requests (1..=1024, at most -t;
    /// default 100, as perftest's CQ moderation); 1 signals every WR.
    #[arg(long = "cq-mod", value_name = "N")]
    pub cq_mod: Option<u64>,
    /// Bidirectional: both hosts send at once (bandwidth tests).
    #[arg(short = 'b', long = "bidirectional")]
    pub bidirectional: bool,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`) or a host profile TOML from `rdmalab calibrate`.
    #[arg(long, value_name = "NIC|FILE")]
    pub profile: Vec<String>,
    /// `back_to_back` (one cable), `switch` (through one switch, the default) or `leaf_spine`
    /// (two leaves and `--set topology.spines=N` spines: equal-cost paths, ECMP per QP).
    #[arg(long)]
    pub topology: Option<String>,
    /// Link rate, Gb/s.
    #[arg(long = "link-gbps")]
    pub link_gbps: Option<u64>,
    /// PCIe generation (3..=6) between memory and NIC.
    #[arg(long = "pcie-gen")]
    pub pcie_gen: Option<u64>,
    /// PCIe lanes (1, 2, 4, 8, 16).
    #[arg(long = "pcie-lanes")]
    pub pcie_lanes: Option<u64>,
    /// Any other scenario key, e.g. `--set topology.cable_m=100` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

const PERFTEST_HELP: &str = "\
Examples:
  rdmalab perftest ib_write_lat -a -n 100
  rdmalab perftest ib_write_bw -s 65536 --report_gbits
  rdmalab perftest ib_write_bw -s 65536 --report_gbits --pcie-lanes 4      # PCIe-bound
  rdmalab perftest ib_read_lat --profile rxe --topology back_to_back
  rdmalab perftest tcp_stream -s 65536 -n 2000
  rdmalab perftest ib_write_bw -q 8 --topology leaf_spine --set topology.spine_gbps=25 --set lossless.enabled=true  # ECMP spread: compare -q 1

Latency columns are µs of simulated time (ib_write_lat and ib_send_lat one way, post_send to
the data in the responder's memory or its receive CQE; ib_read_lat and ib_atomic_lat the round
trip to the CQE). Bandwidth: bytes over the time from the first post to the last completion;
the peak is the best tenth. tcp_stream adds each host's CPU utilisation (all cores, and the
busiest core). As perftest does, ib_write_lat and ib_send_lat inline payloads up to 220
and 236 B unless -I says otherwise, and the bandwidth tests signal every 100th WR (--cq-mod);
the header shows both. Exit codes: 0 done; 1 the test failed (a verb error, a budget); 2 bad input.";

/// Most bytes one perftest run may move in all (every size × iterations).
const MAX_TOTAL_BYTES: u64 = 16 << 30;

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("perftest", msg)
}

/// `rdmalab perftest`.
pub fn perftest(a: PerftestArgs) -> anyhow::Result<ExitCode> {
    let Some(test) = Test::parse(&a.test) else {
        let names: Vec<&str> = Test::ALL.iter().map(|t| t.0).collect();
        return bad(format!(
            "unknown test {:?}: one of {}",
            a.test,
            names.join(", ")
        ));
    };
    if a.qps == 0 || a.qps > 64 {
        return bad(format!("-q {}: 1..=64 queue pairs", a.qps));
    }
    if a.qps > 1 && test.is_latency() {
        return bad(format!(
            "-q {}: latency tests use one QP (as perftest's do); -q is for bandwidth tests",
            a.qps
        ));
    }
    if a.size == Some(0) {
        return bad("-s 0: sizes are 1..=1073741824 bytes");
    }
    if let Some(s) = a.size
        && s > 1 << 30
    {
        return bad(format!("-s {s}: sizes are 1..=1073741824 bytes"));
    }
    if a.iters == Some(0) || a.iters.is_some_and(|n| n > 1_000_000) {
        return bad("-n: iterations are 1..=1000000");
    }
    if a.tx_depth == 0 || a.tx_depth > 1000 {
        return bad(format!("-t {}: the tx depth is 1..=1000", a.tx_depth));
    }
    if let Some(i) = a.inline
        && i > MAX_INLINE_DATA
    {
        return bad(format!(
            "-I {i}: inline data is 0..={MAX_INLINE_DATA} bytes (the QPs' max_inline_data)"
        ));
    }
    if let Some(n) = a.cq_mod {
        if !CQ_MOD_RANGE.contains(&n) {
            return bad(format!(
                "--cq-mod {n}: a completion every 1..=1024 work requests"
            ));
        }
        if test.is_latency() || test == Test::TcpStream {
            return bad(format!(
                "--cq-mod {n}: CQ moderation is for the ib_*_bw tests (latency tests signal every WR)"
            ));
        }
    }
    let inline = if test.is_inlinable() {
        a.inline.unwrap_or(test.default_inline())
    } else {
        0
    };
    // perftest lowers cq_mod to the tx depth.
    let cq_mod = a.cq_mod.unwrap_or(DEF_CQ_MOD).min(a.tx_depth);
    if a.bidirectional && test.is_latency() {
        return bad("-b is for bandwidth tests");
    }
    let iters = a
        .iters
        .unwrap_or(if test.is_latency() { 1000 } else { 5000 });
    if test == Test::SendBw && iters > MAX_SEND_BW_ITERS {
        return bad(format!(
            "-n {iters}: ib_send_bw posts every receive up front, at most {MAX_SEND_BW_ITERS}"
        ));
    }
    let mut sets = Vec::new();
    if let Some(t) = &a.topology {
        sets.push(format!("topology.kind=\"{t}\""));
    }
    if let Some(g) = a.link_gbps {
        sets.push(format!("topology.link_gbps={g}"));
    }
    if let Some(g) = a.pcie_gen {
        sets.push(format!("host.pcie_generation={g}"));
    }
    if let Some(l) = a.pcie_lanes {
        sets.push(format!("host.pcie_lanes={l}"));
    }
    if let Some(m) = a.mtu {
        sets.push(format!("rdma.mtu_bytes={m}"));
    }
    sets.extend(a.sets.iter().cloned());
    // The baseline scenario (preset ①) carries the fabric, hosts and NIC.
    let loaded = match load("lesson1", &a.profile, &sets) {
        Ok(l) => l,
        Err(e) => return bad(e),
    };
    let sizes: Vec<u64> = if a.all {
        (1..=23).map(|k| 1u64 << k).collect()
    } else {
        vec![a.size.unwrap_or(match test {
            Test::TcpRr => 1,
            t if t.is_latency() => 2,
            _ => 65536,
        })]
    };
    // A bound on the simulated work, so a typo cannot run for hours: every QP, each way.
    let streams = u64::from(a.qps) * if a.bidirectional { 2 } else { 1 };
    let total: u64 = sizes
        .iter()
        .map(|s| s.saturating_mul(iters).saturating_mul(streams))
        .fold(0, u64::saturating_add);
    if total > MAX_TOTAL_BYTES {
        return bad(format!(
            "-n {iters} over {} size(s) and {streams} stream(s) moves {total} bytes: at most {MAX_TOTAL_BYTES} (16 GiB) per run; lower -n",
            sizes.len()
        ));
    }
    let o = Options {
        test,
        sizes,
        iters,
        tx_depth: a.tx_depth,
        bidirectional: a.bidirectional,
        inline,
        cq_mod,
        qps: a.qps,
    };
    let rows = match perftest::run(&loaded.plan, &loaded.host, &o) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab perftest: {} failed: {e}", a.test);
            return Ok(ExitCode::from(1));
        }
    };
    let plan = &loaded.plan;
    let line = "-".repeat(100);
    let mut out = String::new();
    let _ = writeln!(out, "{line}");
    let _ = writeln!(out, "                    {} (rdmalab, simulated)", a.test);
    let _ = writeln!(
        out,
        " Device         : {} profile      Link : {} Gb/s, {}",
        plan.nic.profile.name(),
        plan.topology.link_gbps,
        plan.topology.kind.name()
    );
    let _ = writeln!(
        out,
        " PCIe           : Gen{} x{}       MTU  : {} B     Iterations : {iters}     QPs : {}",
        plan.host.pcie_generation,
        plan.host.pcie_lanes,
        // The TCP tests' MTU is the IP MTU of the hosts' interfaces, RDMA's the RoCE path MTU.
        if matches!(test, Test::TcpRr | Test::TcpStream) {
            plan.tcp.mtu_bytes
        } else {
            plan.rdma.mtu_bytes
        },
        a.qps
    );
    if !matches!(test, Test::TcpRr | Test::TcpStream) {
        let _ = write!(out, " Max inline data: {inline}[B]");
        if !test.is_latency() {
            let _ = write!(out, "      CQ Moderation : {cq_mod}");
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "{line}");
    match rows {
        Rows::Lat(rows) => {
            let _ = writeln!(
                out,
                " #bytes     #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
            );
            for r in rows {
                let _ = writeln!(
                    out,
                    " {:<10} {:<14} {:<14.2} {:<12.2} {:<18.2} {:<14.2} {:<15.2} {:<22.2} {:.2}",
                    r.bytes,
                    r.iters,
                    r.t_min,
                    r.t_max,
                    r.t_typical,
                    r.t_avg,
                    r.t_stdev,
                    r.p99,
                    r.p999
                );
            }
        }
        Rows::Bw(rows) => {
            let unit = if a.report_gbits { "Gb/sec" } else { "MB/sec" };
            let cpu = test == Test::TcpStream;
            let _ = writeln!(
                out,
                " #bytes     #iterations    BW peak[{unit}]    BW average[{unit}]   MsgRate[Mpps]{}",
                if cpu {
                    "   CPU util local/remote   busiest core local/remote"
                } else {
                    ""
                }
            );
            let conv = |bps: f64| {
                if a.report_gbits {
                    bps * 8.0 / 1e9
                } else {
                    bps / 1e6
                }
            };
            for r in rows {
                let peak = r
                    .peak_bps
                    .map_or("–".to_string(), |p| format!("{:.2}", conv(p)));
                let mut l = format!(
                    " {:<10} {:<14} {:<18} {:<20.2} {:.6}",
                    r.bytes,
                    r.iters,
                    peak,
                    conv(r.avg_bps),
                    r.msg_rate_mpps
                );
                if let (Some((u0, u1)), Some((m0, m1))) = (r.cpu_util, r.busiest_core) {
                    let _ = write!(
                        l,
                        "        {:>5.1}% / {:>5.1}%       {:>5.1}% / {:>5.1}%",
                        u0 * 100.0,
                        u1 * 100.0,
                        m0 * 100.0,
                        m1 * 100.0
                    );
                }
                let _ = writeln!(out, "{l}");
                if r.uplink_share.len() > 1 {
                    let shares: Vec<String> = r
                        .uplink_share
                        .iter()
                        .map(|x| format!("{:.1}%", x * 100.0))
                        .collect();
                    let _ = writeln!(
                        out,
                        " uplinks of host 0's switch (one per equal-cost path): {}",
                        shares.join("  ")
                    );
                }
            }
        }
    }
    let _ = writeln!(out, "{line}");
    out!("{out}")?;
    Ok(ExitCode::SUCCESS)
}
