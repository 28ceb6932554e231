//! The comparison report (DESIGN.md §3.7): run a scenario [`Plan`](scenario::Plan) through the kernel TCP path
//! and the RDMA path, then read every row of the table out of that run's trace and counters.
//!
//! [`run_plan`] builds two worlds from the plan (same topology, fabric configuration, host and
//! NIC profiles and seed): one carries the workload over a TCP connection (`write()` on host 0,
//! blocking `read()` on host 1), the other over an RC queue pair (host 0 posts, host 1 is the
//! responder). Count mode: `workload.messages` messages of `workload.message_bytes`, one
//! after the other (the next starts when the previous one has been delivered and completed).
//! Stream mode (`workload.stream_us > 0`): TCP writes back to back and reads as data arrives;
//! RDMA keeps 8 signaled WRITEs in flight. Throughput is measured after a warm-up (a quarter
//! of the stream, at most 500 µs) over a window of at least 1 ms; when the plan loses frames
//! the stream is run again without loss, and retention is the ratio of the two.
//! With `rdma.completion = "event"` (SEND/RECV), the receiver arms its CQ
//! (`req_notify_cq`) and sleeps on a completion channel: the CQE raises an interrupt, the
//! interrupt wakes the thread, and only then does it poll.
//!
//! [`run_plan_packets`] runs the same plan and also cuts each main run's packet view
//! ([`packets`]: the frames around its first drop, bounded, with the drop's story) for the
//! web lab's loss animation; the report it returns is the one [`run_plan`] gives.
//!
//! Nothing in the report is a constant: counts, times and ratios are read from the host-stage
//! trace ([`engine::TraceRecord::Stage`]), the CPU accounts, the socket counters, the PCIe DMA
//! counters, the transports' counters and the fabric's counters of the run.
//!
//! # JSON schema (`rdmalab run --json`)
//!
//! One object, [`Report`]:
//! - `schema`: `"rdmalab.report/1"`.
//! - `scenario`: `{ seed, message_bytes, messages, operation, link_gbps, mode, stream_us }`
//!   (`mode` is `"count"` or `"stream"`).
//! - `tcp`, `rdma`: a [`PathReport`] each, or `null` when `workload.paths` leaves it out.
//! - `rdma_over_tcp_latency`: RDMA's one-message latency ÷ TCP's, when both delivered.
//!
//! A [`PathReport`] has:
//! - `path` (`"tcp"`/`"rdma"`), `operation` (what the application called);
//! - `outcome`: `{"status": "success"}` or `{"status": "failed", "verb", "code", "where",
//!   "why"}` — `code` is the verb's errno (`EINVAL`) or the completion status text;
//! - `messages_delivered`, `bytes_delivered`;
//! - `data_path` and `setup`: a [`Costs`] each — `copies`, `copied_bytes`, `syscalls`,
//!   `kernel_local`, `kernel_remote` (did any kernel CPU stage run on that host),
//!   `cpu_stages_local`/`cpu_stages_remote` (`[{name, count, busy_ns, kernel}]`),
//!   `cpu_ns_local`/`cpu_ns_remote` (total busy CPU time), and for the data path
//!   `cpu_ns_per_message_local`/`cpu_ns_per_message_remote`; setup also has `duration_ns`;
//! - `transport_in`: `"kernel software"` when any CPU stage ran TCP/IP protocol processing on
//!   the data path, else `"NIC hardware"`;
//! - `remote_cpu`: `"none"`, `"light"` or `"full"` and `remote_cpu_why` (thresholds below);
//! - `latency`: `null` when no message was delivered, else [`Latency`]: `delivered_ns` (the
//!   data usable at the remote: TCP `read()` returned, WRITE placed in remote memory, SEND's
//!   receive CQE in the remote CQ, READ's data placed locally), `placed_at_remote_ns` (WRITE and
//!   SEND: the end of the remote's last "DMA write payload" stage), `local_completion_ns`
//!   (TCP `write()` returned, RDMA: the local CQE written), `delivered_at` and
//!   `local_completion_at` naming those events, and `breakdown`: the first message's stages
//!   `[{side, unit, stage, count, busy_ns, start_ns, end_ns}]`, times relative to the call
//!   that started the message, grouped by (side, unit, stage name), sorted by start;
//!   `timeline`: the same stages ungrouped plus the frames' time in the switch, each
//!   `{side, lane, stage, start_ns, end_ns, runs}` (runs of one stage in one box that overlap
//!   or touch are joined, `runs` counting them) with `lane` the box it lights (`app`, `kernel`,
//!   `nic`, `switch`), at most 2,048 (`timeline_truncated` counts the rest); `frames` (at most
//!   256, `frames_truncated` if more): `{kind, forward,
//!   bytes, sent_ns, at_switch_ns, left_switch_ns, arrived_ns, dropped}`;
//! - `memory_bus_bytes_per_delivered_byte`: `{local, remote}` — (DMA bytes + 2 × CPU-copied
//!   bytes) on that host during the data path ÷ bytes delivered;
//! - `retransmitted_bytes`, `drops`, `pfc_pauses`, `pfc_watchdog_drops`, `oversize`, `drawn_overflows_paused`, `ecn_marks` (fabric
//!   and transport counters of the data path);
//! - `failed_attempt`: `null`, or when no message got through `{timeline,
//!   timeline_truncated, frames, frames_truncated, gave_up_ns}` for the first attempt (as in `latency`);
//! - `cross_traffic`: `null`, or with `[cross_traffic]` bursts [`CrossTraffic`]: `senders`,
//!   `bursts`, `bytes_offered`, `bytes_delivered`, `frames_dropped` (not in `drops`),
//!   `offered_gbps`, `ceiling` ((link rate − offered) ÷ loss-free throughput, at most 1);
//! - `recovery`: `{loss_events, timeouts, tail_probes, mean_inflight_packets}` (RDMA:
//!   sequence NAKs, ACK timeouts, mean in-flight packets; TCP: fast recoveries, RTOs, TLPs);
//!   RDMA with selective repeat adds `selective: true` and `resent_packets` (its
//!   `loss_events` are SACK NAKs);
//!   with DCQCN, `dcqcn`: `{profile, marked, cnps_sent, cnps_handled, cuts, final_rate_gbps}`;
//! - `throughput`: `null` in count mode, else [`Throughput`]: `gbps`, `window_ns`, `bytes`,
//!   `stalled_ns` (window end minus the last delivery), `batch_gbps` (10 equal batches),
//!   `ci95_gbps` and `retention_ci95` (batch means, Student's t),
//!   and with loss in the plan `baseline_gbps` (the loss-free rerun) and `retention`;
//!   `model`: the path's loss model over the same window ([`LossModel`]: `model`
//!   `"go-back-N"`, `"selective repeat"` or `"Mathis"`, its inputs `packets`, `loss_events`, `loss_rate`,
//!   `timeouts`, `timeout_wait_ns`, `inflight_packets` (W), `rtt_ns`, `mss_bytes`, and with
//!   a baseline `predicted_gbps`, `predicted_retention`,
//!   `measured_over_predicted`).
//!
//! # Remote CPU participation thresholds
//!
//! Read from the remote host's data-path CPU stages, per delivered message:
//! - **none**: no CPU stage ran on the remote host.
//! - **light**: only user-space verbs calls (stages of [`engine::Domain::User`]: `post_recv`, `poll_cq`,
//!   `req_notify_cq`...) plus at most one completion interrupt and one wake-up per message, and
//!   at most [`LIGHT_MAX_CPU_NS_PER_MESSAGE`] of remote CPU time per message.
//! - **full**: anything else — kernel protocol work, copies or syscalls on the remote.
//!
//! # Kernel and user space
//!
//! A CPU stage counts as kernel work when its [`engine::Stage`]'s domain is
//! [`engine::Domain::Kernel`] (the table in `crates/engine/src/stage.rs`; verbs
//! calls run in the application's address space, with no system call).

mod loss_model;
pub mod packets;
pub(crate) mod run;
mod stagelog;
mod stream;
mod table;
mod trace_records;

pub use loss_model::LossModel;
pub use table::format_ns;
pub use trace_records::trace_json;

pub use run::{
    FabricSink, PathFabricView, run_plan, run_plan_fabric, run_plan_packets, run_plan_with,
};

use engine::TraceRecord;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use units::SimTime;

/// The most remote CPU time per message that still counts as "light" participation, ns.
pub const LIGHT_MAX_CPU_NS_PER_MESSAGE: f64 = 2_000.0;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `"rdmalab.report/1"`.
    pub schema: &'static str,
    /// What ran.
    pub scenario: ScenarioSummary,
    /// The kernel TCP path, if run.
    pub tcp: Option<PathReport>,
    /// The RDMA path, if run.
    pub rdma: Option<PathReport>,
    /// RDMA's one-message latency ÷ TCP's, when both delivered.
    pub rdma_over_tcp_latency: Option<f64>,
}

/// The scenario in a few words.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioSummary {
    /// The seed.
    pub seed: u64,
    /// Bytes per message.
    pub message_bytes: u64,
    /// Messages (count mode).
    pub messages: u64,
    /// The RDMA operation.
    pub operation: String,
    /// Link rate.
    pub link_gbps: u64,
    /// `"count"` (stream mode is not run yet).
    pub mode: &'static str,
    /// Stream length, µs (0 in count mode).
    pub stream_us: u64,
    /// The PFC settings of the lossless priority, when `lossless.enabled`.
    pub pfc: Option<PfcSummary>,
}

/// What PFC does on the lossless priority: its thresholds, the headroom each switch ingress
/// port keeps above XOFF, and the PAUSE frames it sends, all as the simulated fabric uses them
/// (from the same `fabric::pfc` functions the fabric calls).
#[derive(Clone, Debug, Serialize)]
pub struct PfcSummary {
    /// `"auto"` (Linux mlx5's rule) or `"set"` (given in the scenario), for XOFF.
    pub xoff_from: &'static str,
    /// Ingress bytes of one port and priority at which PAUSE goes upstream.
    pub xoff_bytes: u64,
    /// Ingress bytes at or below which RESUME goes upstream.
    pub xon_bytes: u64,
    /// Bytes each switch port keeps above XOFF per lossless priority.
    pub headroom_bytes: u64,
    /// The port IP MTU the thresholds and the headroom are sized for, bytes.
    pub port_mtu_bytes: u64,
    /// The upstream's PAUSE response time the headroom counts, ns (IEEE 802.3 Table 31B–1).
    pub response_ns: f64,
    /// Quanta (512 bit times each) in every PAUSE.
    pub pause_quanta: u16,
    /// How long one PAUSE stops the upstream at this link rate, ns (refreshed at half).
    pub pause_duration_ns: f64,
}

impl PfcSummary {
    /// The summary of `plan`'s lossless priority, or `None` with PFC off.
    pub fn of(plan: &scenario::Plan) -> Option<PfcSummary> {
        if !plan.lossless.enabled {
            return None;
        }
        let cfg = plan.fabric_config();
        let pfc = cfg.switch.pfc?;
        let from = if plan.lossless.xoff_bytes == scenario::Auto::Auto {
            "auto"
        } else {
            "set"
        };
        Some(PfcSummary::of_config(&pfc, &plan.link_config(), &cfg, from))
    }

    /// The summary of `pfc` on a switch port cabled with `link` in a fabric built from `cfg`
    /// (the labs, which configure the fabric themselves); `from` says where XOFF came from.
    pub fn of_config(
        pfc: &fabric::PfcConfig,
        link: &fabric::LinkConfig,
        cfg: &fabric::FabricConfig,
        from: &'static str,
    ) -> PfcSummary {
        let ns = |d: units::SimDuration| d.as_ps() as f64 / 1_000.0;
        PfcSummary {
            xoff_from: from,
            xoff_bytes: pfc.xoff_bytes,
            xon_bytes: pfc.xon_bytes,
            headroom_bytes: fabric::pfc::headroom_bytes(
                link,
                cfg.max_frame_bytes(),
                pfc.response_time,
            ),
            port_mtu_bytes: u64::from(cfg.mtu_bytes),
            response_ns: ns(pfc.response_time),
            pause_quanta: pfc.pause_quanta,
            pause_duration_ns: ns(wire::pfc::pause_duration(pfc.pause_quanta, link.bandwidth)),
        }
    }

    /// One line of text: "PFC: XOFF 41,804 B (auto), XON 32,588 B, headroom ...".
    pub fn line(&self) -> String {
        format!(
            "PFC (simulated): XOFF {} B ({}), XON {} B, headroom {} B per port above XOFF (port MTU {} B, response {:.0} ns); each PAUSE {} quanta = {:.1} µs",
            self.xoff_bytes,
            if self.xoff_from == "auto" {
                "auto: mlx5's rule"
            } else {
                "set"
            },
            self.xon_bytes,
            self.headroom_bytes,
            self.port_mtu_bytes,
            self.response_ns,
            self.pause_quanta,
            self.pause_duration_ns / 1_000.0
        )
    }
}

/// One path's column.
#[derive(Clone, Debug, Serialize)]
pub struct PathReport {
    /// `"tcp"` or `"rdma"`.
    pub path: &'static str,
    /// What the application called.
    pub operation: String,
    /// Success or the exact failure.
    pub outcome: Outcome,
    /// Messages whose bytes arrived intact.
    pub messages_delivered: u64,
    /// Bytes delivered.
    pub bytes_delivered: u64,
    /// The data path's costs.
    pub data_path: Costs,
    /// Setup's costs (TCP handshake; registration, QP creation and transitions, exchange).
    pub setup: Costs,
    /// Where transport processing ran.
    pub transport_in: &'static str,
    /// Remote CPU participation: none, light or full.
    pub remote_cpu: Participation,
    /// Why that level (the stages that decided it).
    pub remote_cpu_why: String,
    /// One-message latency of the first message.
    pub latency: Option<Latency>,
    /// Memory-bus bytes per delivered byte.
    pub memory_bus_bytes_per_delivered_byte: Sides,
    /// Bytes the transport sent again.
    pub retransmitted_bytes: u64,
    /// Frames the fabric dropped.
    pub drops: u64,
    /// PFC PAUSE frames sent.
    pub pfc_pauses: u64,
    /// Of `drops`, frames a switch's PFC watchdog (`switch.pfc_watchdog_us`) dropped from an
    /// egress queue it found paused that long.
    pub pfc_watchdog_drops: u64,
    /// Frames of `drops` longer than the MTU of the port they met (`DropReason::Oversize`):
    /// which port, its MTU and the path's, so the drops explain themselves.
    pub oversize: Option<Oversize>,
    /// Drawn congestion overflows (`loss.congestion_drop`) on a lossless priority, each
    /// turned into PFC back-pressure instead of a drop.
    pub drawn_overflows_paused: u64,
    /// ECN marks.
    pub ecn_marks: u64,
    /// Stream mode: steady-state throughput (and retention when the plan loses frames).
    pub throughput: Option<Throughput>,
    /// How the transport recovered from loss (the whole run, setup excluded only in that
    /// setup loses nothing on a clean path).
    pub recovery: Option<Recovery>,
    /// The bursty cross traffic that shared the path's egress queue, when the plan has some.
    pub cross_traffic: Option<CrossTraffic>,
    /// When no message got through (③, ④): the first attempt's stages and frames, so a
    /// drawing shows the step where it stopped.
    pub failed_attempt: Option<FailedAttempt>,
}

/// Frames a path lost because they were longer than a port's MTU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Oversize {
    /// How many of the path's frames.
    pub drops: u64,
    /// The port that refused them: `host N` (its own port) or `switch`.
    pub port: String,
    /// The scenario key that sets that port's MTU.
    pub port_key: &'static str,
    /// That port's IP MTU, bytes.
    pub port_mtu_bytes: u64,
    /// The longest frame it passes: the MTU plus Ethernet header, VLAN tag and FCS, bytes.
    pub frame_limit_bytes: u64,
    /// The first refused frame's length, bytes (known for a host port).
    pub first_frame_bytes: Option<u64>,
    /// The key of the path's own MTU.
    pub path_key: &'static str,
    /// Its value, bytes (payload per packet for RoCE, the IP MTU for TCP).
    pub path_mtu_bytes: u64,
}

impl fmt::Display for Oversize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} too long for the MTU: {} passes frames of at most {} bytes ({} = {}), \
             the path sends {} = {}",
            self.drops,
            if self.port == "switch" {
                "a switch port".to_string()
            } else {
                format!("{}'s port", self.port)
            },
            self.frame_limit_bytes,
            self.port_key,
            self.port_mtu_bytes,
            self.path_key,
            self.path_mtu_bytes
        )?;
        if let Some(b) = self.first_frame_bytes {
            write!(f, " (a {b}-byte frame)")?;
        }
        Ok(())
    }
}

/// The first message's attempt on a path where it failed.
#[derive(Clone, Debug, Serialize)]
pub struct FailedAttempt {
    /// Its stages by box, as [`Latency::timeline`].
    pub timeline: Vec<Interval>,
    /// Intervals left out of `timeline`, as [`Latency::timeline_truncated`].
    pub timeline_truncated: u64,
    /// Its frames, as [`Latency::frames`].
    pub frames: Vec<FrameHops>,
    /// More frames than fit.
    pub frames_truncated: bool,
    /// When the run gave up on it (an error completion, or the application's deadline), ns
    /// after the call.
    pub gave_up_ns: f64,
}

/// Bursty cross traffic beside a stream (`[cross_traffic]`, preset ⑤b), as the fabric
/// counted it.
#[derive(Clone, Debug, Serialize)]
pub struct CrossTraffic {
    /// Hosts that sent bursts.
    pub senders: u64,
    /// Bursts each sender started during the stream.
    pub bursts: u64,
    /// Bytes the bursts offered in all.
    pub bytes_offered: u64,
    /// Bytes of them that arrived.
    pub bytes_delivered: u64,
    /// Burst frames the fabric dropped (not counted in the path's `drops`).
    pub frames_dropped: u64,
    /// Average offered load over the stream, Gb/s.
    pub offered_gbps: f64,
    /// `(link − offered_gbps) ÷ loss-free throughput`, at most 1: the share of its loss-free
    /// throughput the path can keep while the bursts take theirs of the bottleneck link (the
    /// loss models work from it). Known once the baseline has run.
    pub ceiling: Option<f64>,
}

/// Loss recovery counters of one path.
#[derive(Clone, Debug, Serialize)]
pub struct Recovery {
    /// RDMA: PSN-sequence NAKs (each starts a go-back-N resend). TCP: fast recoveries.
    pub loss_events: u64,
    /// RDMA: local ACK timeouts. TCP: retransmission timeouts (RTO).
    pub timeouts: u64,
    /// TCP: tail loss probes sent (RACK-TLP); 0 for RDMA.
    pub tail_probes: u64,
    /// RDMA: mean packets in flight when a packet was first sent.
    pub mean_inflight_packets: Option<f64>,
    /// RDMA: the requester resends only what was lost (selective repeat); `loss_events`
    /// then counts SACK NAKs.
    pub selective: bool,
    /// RDMA: packets resent.
    pub resent_packets: u64,
    /// RDMA with `rdma.dcqcn`: what DCQCN did.
    pub dcqcn: Option<DcqcnSummary>,
}

/// DCQCN over a run, both QPs of the path added (mlx5's counter names in brackets).
#[derive(Clone, Debug, Serialize)]
pub struct DcqcnSummary {
    /// The parameter profile ("nvidia" or "dcqcn-2015").
    pub profile: &'static str,
    /// ECN-marked packets the receiving NICs saw (`np_ecn_marked_roce_packets`).
    pub marked: u64,
    /// CNPs they sent (`np_cnp_sent`).
    pub cnps_sent: u64,
    /// CNPs the sending NICs handled (`rp_cnp_handled`).
    pub cnps_handled: u64,
    /// Rate cuts they made.
    pub cuts: u64,
    /// The data sender's rate when the run ended, Gb/s.
    pub final_rate_gbps: f64,
}

/// How to run a plan beyond what the plan itself says.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Host model constants to override (the `[profile]` table `rdmalab calibrate` writes:
    /// key → picoseconds), applied on top of the plan's `host.*` settings.
    pub host: BTreeMap<String, u64>,
    /// Capture every frame of the two main runs (not the loss-free reruns) to
    /// `<stem>-tcp.pcap` and `<stem>-rdma.pcap` next to this path.
    pub pcap: Option<std::path::PathBuf>,
    /// Collect every trace record of the two main runs (host stages and fabric events), at
    /// most [`MAX_TRACE_RECORDS`] per run, for `rdmalab trace` ([`trace_json`] writes them).
    pub trace: Option<TraceSink>,
}

/// Where a run's trace records go: (path, time, record), the TCP run's then the RDMA run's.
pub type TraceSink = std::sync::Arc<std::sync::Mutex<Vec<(&'static str, SimTime, TraceRecord)>>>;

/// The most trace records one run keeps for [`RunOptions::trace`] (the rest are counted).
pub const MAX_TRACE_RECORDS: usize = 4_000_000;

/// Steady-state throughput of a stream.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Application bytes delivered in the window, as Gb/s.
    pub gbps: f64,
    /// The window (after the warm-up), ns of simulated time; at least 1 ms.
    pub window_ns: f64,
    /// Bytes delivered in the window.
    pub bytes: u64,
    /// How long before the window's end the last delivery (TCP read, RDMA completion)
    /// happened, ns: a long tail means the stream stalled, e.g. waiting for an ACK timeout.
    pub stalled_ns: f64,
    /// Throughput of each of the window's 10 equal batches, Gb/s.
    pub batch_gbps: Vec<f64>,
    /// 95% confidence interval of the mean throughput from the batch means (Student's t,
    /// 9 degrees of freedom), Gb/s. Batches are not fully independent; a stall shows up as
    /// zero batches and a wide interval.
    pub ci95_gbps: Option<(f64, f64)>,
    /// `ci95_gbps` divided by the loss-free throughput (its own variation is ignored: the
    /// loss-free stream is steady).
    pub retention_ci95: Option<(f64, f64)>,
    /// The same stream with the plan's loss set to zero, Gb/s (only when the plan loses).
    pub baseline_gbps: Option<f64>,
    /// `gbps / baseline_gbps`: the share of its loss-free throughput the path keeps.
    pub retention: Option<f64>,
    /// The transport's loss model (go-back-N or Mathis) fed with this window's measurements,
    /// and what it predicts once the baseline is known.
    pub model: Option<LossModel>,
}

/// A value per host.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Sides {
    /// Host 0 (the sender / requester).
    pub local: f64,
    /// Host 1 (the receiver / responder).
    pub remote: f64,
}

/// How a path ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Every message delivered.
    Success,
    /// A verb failed.
    Failed {
        /// The verb (`ibv_post_send`, `ibv_poll_cq`...).
        verb: String,
        /// Its errno or completion status.
        code: String,
        /// Which host / queue.
        #[serde(rename = "where")]
        at: String,
        /// Why, as the model explains it.
        why: String,
    },
}

/// Remote CPU participation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Participation {
    /// No remote CPU stage.
    None,
    /// User-space verbs calls (and at most one interrupt + wake-up per message).
    Light,
    /// Kernel protocol work, copies or syscalls.
    Full,
}

impl Participation {
    /// The name the table prints.
    pub fn name(self) -> &'static str {
        match self {
            Participation::None => "none",
            Participation::Light => "light",
            Participation::Full => "full",
        }
    }
}

/// One CPU stage name's total.
#[derive(Clone, Debug, Serialize)]
pub struct StageCount {
    /// The stage (serialized as its name, `"name"`).
    #[serde(rename = "name", serialize_with = "stage_name")]
    pub stage: engine::Stage,
    /// How many times it ran.
    pub count: u64,
    /// CPU time, ns.
    pub busy_ns: f64,
    /// Kernel work (not user space).
    pub kernel: bool,
}

fn stage_name<S: serde::Serializer>(stage: &engine::Stage, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(stage.name())
}

/// Costs of the data path or of setup.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Costs {
    /// Memory copies by the CPU.
    pub copies: u64,
    /// Bytes the CPU copied.
    pub copied_bytes: u64,
    /// System calls (socket calls and verbs ioctls).
    pub syscalls: u64,
    /// A kernel CPU stage ran on host 0.
    pub kernel_local: bool,
    /// A kernel CPU stage ran on host 1.
    pub kernel_remote: bool,
    /// CPU stages on host 0.
    pub cpu_stages_local: Vec<StageCount>,
    /// CPU stages on host 1.
    pub cpu_stages_remote: Vec<StageCount>,
    /// CPU time on host 0, ns.
    pub cpu_ns_local: f64,
    /// CPU time on host 1, ns.
    pub cpu_ns_remote: f64,
    /// Data path: CPU time per delivered message on host 0, ns.
    pub cpu_ns_per_message_local: f64,
    /// Data path: CPU time per delivered message on host 1, ns.
    pub cpu_ns_per_message_remote: f64,
    /// Setup: how long it took, ns (0 for the data path).
    pub duration_ns: f64,
}

impl Costs {
    /// CPU stage runs on host 0.
    pub fn stage_runs_local(&self) -> u64 {
        self.cpu_stages_local.iter().map(|s| s.count).sum()
    }
    /// CPU stage runs on host 1.
    pub fn stage_runs_remote(&self) -> u64 {
        self.cpu_stages_remote.iter().map(|s| s.count).sum()
    }
}

/// One group of stages of the first message.
#[derive(Clone, Debug, Serialize)]
pub struct StageSpan {
    /// `"local"` (host 0) or `"remote"` (host 1).
    pub side: &'static str,
    /// `"cpu"`, `"nic"` or `"pcie"`.
    pub unit: &'static str,
    /// The stage.
    pub stage: &'static str,
    /// Runs.
    pub count: u64,
    /// Summed duration, ns.
    pub busy_ns: f64,
    /// First start, ns after the message started.
    pub start_ns: f64,
    /// Last end, ns after the message started.
    pub end_ns: f64,
}

/// The first message's latency.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    /// Data usable at the destination, ns.
    pub delivered_ns: f64,
    /// What "delivered" means here.
    pub delivered_at: &'static str,
    /// Data placed in the remote's memory (RDMA WRITE/SEND), ns.
    pub placed_at_remote_ns: Option<f64>,
    /// The local side learned it is done, ns.
    pub local_completion_ns: f64,
    /// What "local completion" means here.
    pub local_completion_at: &'static str,
    /// The stages.
    pub breakdown: Vec<StageSpan>,
    /// Every stage of the first message as its own interval, and the time its frames spent
    /// in the switch, by the box of the drawing they light (simulation page).
    pub timeline: Vec<Interval>,
    /// Intervals of the first message left out of `timeline`, which keeps the first
    /// [`MAX_TIMELINE_INTERVALS`] (a 16 MiB message at MTU 1500 has about 180,000).
    pub timeline_truncated: u64,
    /// The first message's frames hop by hop (the ladder), at most [`MAX_LADDER_FRAMES`].
    pub frames: Vec<FrameHops>,
    /// More frames than [`MAX_LADDER_FRAMES`] belonged to the first message.
    pub frames_truncated: bool,
}

/// The most frames a report's ladder lists.
pub const MAX_LADDER_FRAMES: usize = 256;

/// The most intervals a report's timeline lists (the simulation page animates them).
pub const MAX_TIMELINE_INTERVALS: usize = 2048;

/// One interval during which a box of the path drawing works.
#[derive(Clone, Debug, Serialize)]
pub struct Interval {
    /// `"local"` (host 0), `"remote"` (host 1) or `"fabric"`.
    pub side: &'static str,
    /// The box: `"app"` (user-space verbs calls, and the application's system-call entry
    /// and exit), `"kernel"` (every other CPU stage), `"nic"` (NIC engine and PCIe), or
    /// `"switch"` (a frame between arriving at the switch and leaving it).
    pub lane: &'static str,
    /// The stage's name, or for the switch the frame's kind (borrowed from the stage record:
    /// a huge first message has hundreds of thousands of intervals, and an owned name each
    /// would double what drawing it holds).
    pub stage: std::borrow::Cow<'static, str>,
    /// Start, ns after the message started.
    pub start_ns: f64,
    /// End, ns after the message started.
    pub end_ns: f64,
    /// Runs of the stage joined into this interval (they overlapped or touched).
    pub runs: u32,
}

/// One frame of the first message on its way, ns after the message started.
#[derive(Clone, Debug, Serialize)]
pub struct FrameHops {
    /// `"RoCE data"`, `"RoCE ACK"`, `"CNP"`, `"TCP"`, `"PFC"` or `"raw"`.
    pub kind: &'static str,
    /// From host 0 toward host 1.
    pub forward: bool,
    /// Frame bytes.
    pub bytes: u32,
    /// Left its sender's port.
    pub sent_ns: f64,
    /// Reached the switch (none back to back).
    pub at_switch_ns: Option<f64>,
    /// Left the switch.
    pub left_switch_ns: Option<f64>,
    /// Reached the far host.
    pub arrived_ns: Option<f64>,
    /// The fabric dropped it.
    pub dropped: bool,
}

/// Why a plan could not be run at all (a path's own failure is an [`Outcome`], not this).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan's fabric or profile is out of range.
    #[error(transparent)]
    World(#[from] crate::world::WorldError),
    /// The topology could not be built.
    #[error(transparent)]
    Fabric(#[from] fabric::ConfigError),
    /// The pcap could not be written.
    #[error("pcap: {0}")]
    Pcap(String),
    /// A host-profile override is unknown or out of range.
    #[error("host profile: {0}")]
    HostProfile(String),
    /// The plan cannot give what the report needs (e.g. a stream too short to measure).
    #[error("{0}")]
    Plan(String),
    /// Something the report cannot run yet.
    #[error("not implemented yet: {0}")]
    Unsupported(String),
}

impl RunError {
    /// Whether the plan or the options are at fault (fix the input), rather than the run
    /// (an event budget exceeded, the connection exchange never completing, a verbs error
    /// the setup did not expect).
    pub fn is_bad_input(&self) -> bool {
        use crate::world::WorldError as W;
        !matches!(
            self,
            RunError::World(W::Budget(_) | W::Exchange | W::Verbs(_)) | RunError::Pcap(_)
        )
    }
}
