//! The figures of research/figures.md that `rdmalab validate` does not check, and why.
//!
//! Two reasons. A figure that set one of the model's constants (its `// source:` comment
//! cites it) would only play the constant back: comparing the two proves nothing. A figure
//! the model has no way to produce (no such mechanism, a different experiment, a qualitative
//! claim) cannot be run. Rows of figures.md that are gaps ("not found") have nothing to check
//! and are not listed.

use serde::Serialize;

/// Why a figure is not checked.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The figure set a constant of the model.
    SetsConstant,
    /// The model cannot reproduce it.
    NotReproducible,
}

/// One figure not checked.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Excluded {
    /// The figures.md section.
    pub section: &'static str,
    /// The figure, in figures.md's words.
    pub figure: &'static str,
    /// Which reason.
    pub reason: Reason,
    /// The constant it set, or what the model lacks.
    pub why: &'static str,
}

const fn sets(section: &'static str, figure: &'static str, why: &'static str) -> Excluded {
    Excluded {
        section,
        figure,
        reason: Reason::SetsConstant,
        why,
    }
}

const fn cannot(section: &'static str, figure: &'static str, why: &'static str) -> Excluded {
    Excluded {
        section,
        figure,
        reason: Reason::NotReproducible,
        why,
    }
}

/// Every figure not checked, in figures.md order.
pub const EXCLUDED: &[Excluded] = &[
    sets(
        "§3",
        "syscall ~350–450 ns with KPTI/retpoline",
        "ControlPath::syscall and SocketCosts::syscall (crates/host)",
    ),
    sets(
        "§3",
        "context switch ~1.07 µs (threads)",
        "ControlPath::wakeup and SocketCosts::wakeup (crates/host)",
    ),
    sets(
        "§3",
        "single-thread bandwidth limit ≈ 8 GB/s (McCalpin)",
        "SocketCosts::copy, 125 ps/B (crates/host/src/socket.rs)",
    ),
    sets(
        "§3",
        "per-byte TCP cost ~42 Gb/s per core (Cai et al.)",
        "SocketCosts::tcp_tx and tcp_rx per-byte costs; so tcp_stream's Gb/s per busy core cannot validate the stack",
    ),
    sets(
        "§3",
        "64 B PCIe DMA read RTT ~547 ns (Neugebauer et al.)",
        "PcieProfile::dma_read_rtt (crates/host/src/profile.rs); PcieProfile::posted_write is half of it",
    ),
    sets(
        "§3",
        "PCIe Gen3 x8 goodput 57.88 Gb/s after DLL",
        "PcieProfile::bandwidth, 7.235 Gb/s per Gen3 lane: the PCIe cap of ib_write_bw at x8 or x4 is this constant played back",
    ),
    sets(
        "§3",
        "NIC processing (derived): one-way ≈ 0.8–1.0 µs back-to-back",
        "NicTiming::pipeline was derived from it, so a back-to-back small-message latency (and §7's \"~1 µs RDMA latency\") cannot validate the model",
    ),
    sets(
        "§3",
        "switch port-to-port latency 300 ns (Spectrum-2)",
        "switch.latency_ns default (crates/fabric/src/config.rs)",
    ),
    sets(
        "§3",
        "fiber propagation 4.9 ns/m",
        "PROPAGATION_PS_PER_M, 5 ns/m (crates/fabric/src/config.rs)",
    ),
    sets(
        "§3",
        "serialization incl. 20 B preamble + IFG (64 B … 4 KB frames at 25/100/200 Gb/s)",
        "PREAMBLE_IFG_BYTES (crates/fabric/src/config.rs) with the link rate: the same arithmetic",
    ),
    sets(
        "§3",
        "time per 1538 B packet: 1230 ns at 10G, 307 ns at 40G (LWN)",
        "SocketCosts::tcp_tx's 300 ns fixed cost was fitted to the 307 ns budget",
    ),
    sets(
        "§4",
        "RC connection setup via verbs/CM ≈ ms (KRCORE)",
        "ControlPath::firmware_command, 150 µs, was derived from it",
    ),
    sets(
        "§5",
        "IRN RTO_low ≈ 100 µs, RTO_high ≈ 320 µs, N = 3",
        "selective repeat's timers (crates/transport/src/roce/config.rs)",
    ),
    sets(
        "§5",
        "NVIDIA Adaptive Retransmission: minimum base timeout 4 µs",
        "the adaptive ACK timeout's floor (crates/sim/src/world/mod.rs)",
    ),
    sets(
        "§6.1",
        "DCQCN defaults on NVIDIA firmware (G, timers, rates, CNP interval, CNP priority 6)",
        "rdma.dcqcn_profile = \"nvidia\" (crates/transport/src/roce/dcqcn.rs) and the CNP priority (crates/sim/src/world/mod.rs)",
    ),
    sets(
        "§6.2",
        "DCQCN paper parameters (Kmin 5 KB, Kmax 200 KB, Pmax 1%, g = 1/256, 50/55 µs timers)",
        "rdma.dcqcn_profile = \"paper\" and the switch's ECN defaults (crates/fabric/src/config.rs)",
    ),
    sets(
        "§6.2",
        "ECN thresholds in practice: Onyx min 150 KB, max 1500 KB; CNP on TC6 strict; RoCE TC3",
        "the RoCE scheduling and ECN defaults (crates/fabric/src/config.rs)",
    ),
    sets(
        "§6.3",
        "PFC incidents: deadlock, storms, fixed with watchdogs (Guo et al.)",
        "the PFC watchdog's design (crates/fabric/src/config.rs)",
    ),
    cannot(
        "§3",
        "vDSO clock_gettime 13–33 ns",
        "no simulated program calls clock_gettime",
    ),
    cannot(
        "§3",
        "PCIe share of NIC latency ~90% small, 77% large",
        "an NFP host-loopback experiment; the model has no equivalent of its \"NIC latency\"",
    ),
    cannot(
        "§3",
        "PCIe tail: p99.9 from 947 ns to ms",
        "the model's PCIe has no jitter: every DMA of a size takes the same time",
    ),
    cannot(
        "§3",
        "PCIe Gen3 x8: ~10 Gb/s usable for 64 B packets; TLP headers 20–26 B; completions of 128 B",
        "TLP header overhead is folded into the goodput figure (crates/host/src/pcie.rs): small-transfer PCIe efficiency is not modelled",
    ),
    cannot(
        "§4",
        "TCP handshake 1 RTT; RDMA CM adds resolution, REQ/REP/RTU and 3 modify_qp",
        "protocol facts the model implements; no published duration to compare with",
    ),
    cannot(
        "§5",
        "IRN without PFC beats RoCE with PFC by 6–83%",
        "needs the paper's 54-server three-tier fat tree at 70% load; the model's fat-tree workload is a permutation, not a load",
    ),
    cannot(
        "§6.3",
        "HPCC: FCT up to 95% shorter than DCQCN and TIMELY",
        "the model has no HPCC or TIMELY",
    ),
    cannot(
        "§7",
        "application-level claims (training throughput, NVMe-oF, storage, trading, CPU cores)",
        "qualitative or unbacked; figures.md gives no figure the model's workloads produce",
    ),
];
