//! The comparison table as text: the rows in DESIGN.md §3.7's order, the duration format and
//! the loss model's cell.

use super::*;

impl Report {
    /// The table: (row label, TCP cell, RDMA cell), in DESIGN.md §3.7's order.
    pub fn rows(&self) -> Vec<(String, String, String)> {
        let mut rows = Vec::new();
        let cell = |p: &Option<PathReport>, f: &dyn Fn(&PathReport) -> String| {
            p.as_ref().map(f).unwrap_or_else(|| "not run".to_string())
        };
        let mut row = |label: &str, f: &dyn Fn(&PathReport) -> String| {
            rows.push((label.to_string(), cell(&self.tcp, f), cell(&self.rdma, f)));
        };
        let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
        let n = |x: f64| format_ns(x);
        row("operation", &|p| p.operation.clone());
        row("outcome", &|p| match &p.outcome {
            Outcome::Success => format!("success ({} delivered)", p.messages_delivered),
            Outcome::Failed {
                verb,
                code,
                at,
                why,
            } => {
                format!("FAILED: {verb} → {code} at {at}: {why}")
            }
        });
        row("memory copies (data path)", &|p| {
            format!("{} ({} B)", p.data_path.copies, p.data_path.copied_bytes)
        });
        row("syscalls (data path)", &|p| {
            p.data_path.syscalls.to_string()
        });
        row("kernel crossed local / remote (data path)", &|p| {
            format!(
                "{} / {}",
                yes(p.data_path.kernel_local),
                yes(p.data_path.kernel_remote)
            )
        });
        row("transport processing", &|p| p.transport_in.to_string());
        row("CPU stages local", &|p| {
            stage_list(&p.data_path.cpu_stages_local)
        });
        row("CPU stages remote", &|p| {
            stage_list(&p.data_path.cpu_stages_remote)
        });
        row("CPU time per message local / remote", &|p| {
            format!(
                "{} / {}",
                n(p.data_path.cpu_ns_per_message_local),
                n(p.data_path.cpu_ns_per_message_remote)
            )
        });
        row("remote CPU participation", &|p| {
            format!("{} ({})", p.remote_cpu.name(), p.remote_cpu_why)
        });
        row("one-message latency (delivered)", &|p| match &p.latency {
            Some(l) => format!("{} ({})", n(l.delivered_ns), l.delivered_at),
            None => "—".to_string(),
        });
        row("  data placed at the remote", &|p| match p
            .latency
            .as_ref()
            .and_then(|l| l.placed_at_remote_ns)
        {
            Some(x) => n(x),
            None => "—".to_string(),
        });
        row("  local completion", &|p| match &p.latency {
            Some(l) => format!("{} ({})", n(l.local_completion_ns), l.local_completion_at),
            None => "—".to_string(),
        });
        row("memory-bus bytes per delivered byte local / remote", &|p| {
            let m = p.memory_bus_bytes_per_delivered_byte;
            format!("{:.2} / {:.2}", m.local, m.remote)
        });
        if self
            .tcp
            .iter()
            .chain(&self.rdma)
            .any(|p| p.throughput.is_some())
        {
            row("throughput (steady state)", &|p| match &p.throughput {
                Some(t) => {
                    let mut c = format!(
                        "{:.2} Gb/s ({} B in {})",
                        t.gbps,
                        t.bytes,
                        format_ns(t.window_ns)
                    );
                    // Normal gaps between deliveries are microseconds; a tenth of the window
                    // without one is a stall worth naming.
                    if t.stalled_ns > t.window_ns / 10.0 {
                        c += &format!(
                            "; stalled: nothing delivered in the last {}",
                            format_ns(t.stalled_ns)
                        );
                    }
                    c
                }
                None => "—".to_string(),
            });
            row("throughput retention under loss", &|p| match p
                .throughput
                .as_ref()
                .and_then(|t| Some((t.retention?, t.baseline_gbps?)))
            {
                Some((r, b)) => match p.throughput.as_ref().and_then(|t| t.retention_ci95) {
                    Some((lo, hi)) => format!(
                        "{:.1}% of {b:.2} Gb/s loss-free (95% CI {:.1}–{:.1}%)",
                        r * 100.0,
                        lo * 100.0,
                        hi * 100.0
                    ),
                    None => format!("{:.1}% of {b:.2} Gb/s loss-free", r * 100.0),
                },
                None => "— (no loss in this scenario)".to_string(),
            });
            if self
                .tcp
                .iter()
                .chain(&self.rdma)
                .any(|p| p.cross_traffic.is_some())
            {
                row(
                    "cross traffic (same class, same egress)",
                    &|p| match &p.cross_traffic {
                        Some(c) => format!(
                            "{} host(s) × {} bursts: {:.2} Gb/s offered on average, {} frames of \
                             it dropped; leaves the path at most {} of its loss-free rate",
                            c.senders,
                            c.bursts,
                            c.offered_gbps,
                            c.frames_dropped,
                            c.ceiling
                                .map_or("—".to_string(), |x| format!("{:.1}%", x * 100.0))
                        ),
                        None => "—".to_string(),
                    },
                );
            }
            row("loss model prediction", &|p| match p
                .throughput
                .as_ref()
                .and_then(|t| t.model.as_ref())
            {
                Some(m) if m.predicted_retention.is_some() && m.loss_events > 0 => model_cell(m),
                _ => "—".to_string(),
            });
        }
        row("loss recovery", &|p| match &p.recovery {
            Some(r) if p.path == "rdma" && r.selective => format!(
                "{} SACK NAK(s) (selective repeat), {} packet(s) resent, {} timeout(s), {} packets in flight on average",
                r.loss_events,
                r.resent_packets,
                r.timeouts,
                r.mean_inflight_packets
                    .map_or("—".to_string(), |x| format!("{x:.1}"))
            ),
            Some(r) if p.path == "rdma" => format!(
                "{} sequence NAK(s) (go-back-N), {} timeout(s), {} packets in flight on average",
                r.loss_events,
                r.timeouts,
                r.mean_inflight_packets
                    .map_or("—".to_string(), |x| format!("{x:.1}"))
            ),
            Some(r) => format!(
                "{} fast recover(ies) (SACK), {} RTO(s), {} tail-loss probe(s)",
                r.loss_events, r.timeouts, r.tail_probes
            ),
            None => "—".to_string(),
        });
        let has_dcqcn = [&self.tcp, &self.rdma].iter().any(|p| {
            p.as_ref()
                .and_then(|p| p.recovery.as_ref())
                .is_some_and(|r| r.dcqcn.is_some())
        });
        if has_dcqcn {
            row(
                "DCQCN",
                &|p| match p.recovery.as_ref().and_then(|r| r.dcqcn.as_ref()) {
                    Some(d) => format!(
                        "{}: {} marked → {} CNPs, {} rate cuts, rate at the end {:.2} Gb/s",
                        d.profile, d.marked, d.cnps_sent, d.cuts, d.final_rate_gbps
                    ),
                    None => "—".to_string(),
                },
            );
        }
        row("retransmitted bytes", &|p| {
            p.retransmitted_bytes.to_string()
        });
        row("drops / PFC pauses / ECN marks", &|p| {
            let watchdog = match p.pfc_watchdog_drops {
                0 => String::new(),
                n => format!(" ({n} dropped by the PFC watchdog)"),
            };
            let oversize = match &p.oversize {
                None => String::new(),
                Some(o) => format!(" ({o})"),
            };
            format!(
                "{}{watchdog}{oversize} / {} / {}",
                p.drops, p.pfc_pauses, p.ecn_marks
            )
        });
        row("setup: syscalls", &|p| p.setup.syscalls.to_string());
        row("setup: kernel crossed local / remote", &|p| {
            format!(
                "{} / {}",
                yes(p.setup.kernel_local),
                yes(p.setup.kernel_remote)
            )
        });
        row("setup: CPU time local / remote", &|p| {
            format!("{} / {}", n(p.setup.cpu_ns_local), n(p.setup.cpu_ns_remote))
        });
        row("setup: duration", &|p| n(p.setup.duration_ns));
        row("setup: CPU stages (both hosts)", &|p| {
            // One entry per stage name, counts summed over the two hosts.
            let mut by: BTreeMap<engine::Stage, StageCount> = BTreeMap::new();
            for s in p
                .setup
                .cpu_stages_local
                .iter()
                .chain(&p.setup.cpu_stages_remote)
            {
                let e = by.entry(s.stage).or_insert(StageCount {
                    count: 0,
                    busy_ns: 0.0,
                    ..s.clone()
                });
                e.count += s.count;
                e.busy_ns += s.busy_ns;
            }
            stage_list(&by.into_values().collect::<Vec<_>>())
        });
        if let Some(r) = self.rdma_over_tcp_latency {
            rows.push((
                "RDMA ÷ TCP one-message latency".to_string(),
                String::new(),
                format!("{r:.3}"),
            ));
        }
        rows
    }
}

pub(super) fn stage_list(s: &[StageCount]) -> String {
    if s.is_empty() {
        return "none".to_string();
    }
    let runs: u64 = s.iter().map(|x| x.count).sum();
    let names: Vec<String> = s
        .iter()
        .map(|x| {
            if x.count == 1 {
                x.stage.name().to_string()
            } else {
                format!("{} ×{}", x.stage, x.count)
            }
        })
        .collect();
    format!("{runs}: {}", names.join(", "))
}

/// A duration in ns as the table prints it.
pub fn format_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// The "loss model prediction" cell: the prediction, the inputs it came from, and how the
/// measurement compares.
pub(super) fn model_cell(m: &LossModel) -> String {
    let inputs = match m.model {
        "go-back-N" => format!(
            "η = (1−p)/(1+(W−1)p) with W {:.1} in flight, p {:.2}% ({} loss events / {} packets)",
            m.inflight_packets.unwrap_or(0.0),
            m.loss_rate * 100.0,
            m.loss_events,
            m.packets
        ),
        "selective repeat" => format!(
            "1 − p with p {:.2}% ({} packets resent / {} sent)",
            m.loss_rate * 100.0,
            m.loss_events,
            m.packets + m.loss_events
        ),
        _ => format!(
            "(MSS/RTT)·√(3/(2p)) with MSS {} B, RTT {}, p {:.2}% ({} loss events / {} packets)",
            m.mss_bytes.unwrap_or(0),
            format_ns(m.rtt_ns.unwrap_or(0.0)),
            m.loss_rate * 100.0,
            m.loss_events,
            m.packets
        ),
    };
    let wait = if m.timeout_wait_ns > 0.0 {
        format!(
            ", less {} idle waiting for {} timeout(s){}",
            format_ns(m.timeout_wait_ns),
            m.timeouts,
            if m.timeouts == 0 { " (pending)" } else { "" }
        )
    } else {
        String::new()
    };
    format!(
        "{}: {:.1}% predicted — {inputs}{wait}; measured ÷ predicted = {}",
        m.model,
        m.predicted_retention.unwrap_or(0.0) * 100.0,
        m.measured_over_predicted
            .map_or("—".to_string(), |x| format!("{x:.2}"))
    )
}
