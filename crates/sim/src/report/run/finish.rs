//! Reading a path's report out of its run: latency, the CPU and PCIe stage breakdown, the
//! path drawing's intervals, remote participation, frames and the failed attempt.

use super::*;

pub(super) fn ns(d: SimDuration) -> f64 {
    d.as_ps() as f64 / 1000.0
}

/// The box a stage lights on the path drawing (see [`Interval::lane`]).
pub(super) fn lane(r: &Rec) -> &'static str {
    match r.unit {
        ExecUnit::Cpu(_) if r.stage.domain() == Domain::User || r.stage.is_syscall_edge() => "app",
        ExecUnit::Cpu(_) => "kernel",
        ExecUnit::Nic | ExecUnit::Pcie => "nic",
    }
}

pub(super) fn frame_kind(c: PacketClass) -> &'static str {
    match c {
        PacketClass::RoceData => "RoCE data",
        PacketClass::RoceAck => "RoCE ACK",
        PacketClass::RoceCnp => "CNP",
        PacketClass::Tcp => "TCP",
        PacketClass::Pause => "PFC",
        PacketClass::Raw => "raw",
    }
}

/// Joins the runs of one stage in one box that overlap or touch (a pipelined DMA per frame,
/// the switch busy with back-to-back frames) into one interval counting them: the box is lit
/// over exactly the same time, and a 1 MiB message draws in hundreds of intervals, not
/// thousands.
pub(super) fn merge_runs(mut v: Vec<Interval>) -> Vec<Interval> {
    v.sort_by(|a, b| {
        (a.side, a.lane, &a.stage)
            .cmp(&(b.side, b.lane, &b.stage))
            .then(a.start_ns.total_cmp(&b.start_ns))
    });
    let mut out: Vec<Interval> = Vec::with_capacity(v.len());
    for i in v {
        match out.last_mut() {
            Some(o)
                if o.side == i.side
                    && o.lane == i.lane
                    && o.stage == i.stage
                    && i.start_ns <= o.end_ns =>
            {
                o.end_ns = o.end_ns.max(i.end_ns);
                o.runs += i.runs;
            }
            _ => out.push(i),
        }
    }
    out
}

/// The first message's intervals by box and its frames hop by hop, from the stage records
/// `first` and the packet records of `trace` between `t0` and `end`.
pub(super) fn drawing(
    trace: &[(SimTime, TraceRecord)],
    first: &[&Rec],
    nodes: [NodeId; 2],
    (t0, end): (SimTime, SimTime),
    link_gbps: u64,
    path: &str,
) -> Drawing {
    // The path's own frames: the RDMA world also carries the out-of-band exchange's TCP
    // connection (setup), whose last segments may still be on the wire.
    let ours = |c: PacketClass| match path {
        "tcp" => c == PacketClass::Tcp,
        _ => c != PacketClass::Tcp && c != PacketClass::Raw,
    };
    let rel = |t: SimTime| ns(t.saturating_duration_since(t0));
    let mut timeline: Vec<Interval> = first
        .iter()
        .map(|r| Interval {
            side: if r.host == nodes[0] {
                "local"
            } else {
                "remote"
            },
            lane: lane(r),
            stage: std::borrow::Cow::Borrowed(r.stage.name()),
            start_ns: rel(r.start),
            end_ns: rel(r.end),
            runs: 1,
        })
        .collect();
    // Frames: follow each packet uid through Dequeued (at its sender host), Arrived/Dequeued
    // at the switch, Arrived at the far host; listed in the order their first record came
    // (uids are counted per sender, so their order is not the frames').
    let mut by_uid: BTreeMap<u64, usize> = BTreeMap::new();
    let mut hops: Vec<FrameHops> = Vec::new();
    for (t, r) in trace {
        if *t < t0 || *t > end {
            continue;
        }
        let (node, pkt, stage) = match *r {
            TraceRecord::Packet {
                node, pkt, stage, ..
            } => (node, pkt, Some(stage)),
            TraceRecord::Dropped { node, pkt, .. } => (node, pkt, None),
            _ => continue,
        };
        if !ours(pkt.class) {
            continue;
        }
        let at_host = nodes.contains(&node);
        let i = *by_uid.entry(pkt.uid).or_insert_with(|| {
            hops.push(FrameHops {
                kind: frame_kind(pkt.class),
                forward: node == nodes[0],
                bytes: pkt.bytes,
                sent_ns: rel(*t),
                at_switch_ns: None,
                left_switch_ns: None,
                arrived_ns: None,
                dropped: false,
            });
            hops.len() - 1
        });
        let f = &mut hops[i];
        match (stage, at_host) {
            (None, _) => f.dropped = true,
            (Some(PacketStage::Dequeued), true) if f.at_switch_ns.is_none() => {
                f.sent_ns = rel(*t);
                f.forward = node == nodes[0];
            }
            (Some(PacketStage::Arrived), false) => f.at_switch_ns = Some(rel(*t)),
            (Some(PacketStage::Dequeued), false) => f.left_switch_ns = Some(rel(*t)),
            (Some(PacketStage::Arrived), true) => f.arrived_ns = Some(rel(*t)),
            _ => {}
        }
    }
    // The switch holds a frame from its first bit in to its last bit out: the records mark
    // the last bit's arrival and the first bit's departure, so widen by one serialization
    // time (frame + preamble, SFD, FCS and inter-frame gap) on each side.
    for f in &hops {
        if let (Some(a), Some(b)) = (f.at_switch_ns, f.left_switch_ns) {
            let ser = (f.bytes as f64 + 24.0) * 8.0 / link_gbps as f64;
            timeline.push(Interval {
                side: "fabric",
                lane: "switch",
                stage: std::borrow::Cow::Owned(format!("{} frame", f.kind)),
                start_ns: (a - ser).max(f.sent_ns),
                end_ns: b + ser,
                runs: 1,
            });
        }
    }
    let mut timeline = merge_runs(timeline);
    timeline.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
    // A huge first message (hundreds of MiB at a small MTU) has hundreds of thousands of
    // intervals; the drawing shows the first ones and says how many more there were.
    let timeline_truncated = timeline.len().saturating_sub(MAX_TIMELINE_INTERVALS) as u64;
    timeline.truncate(MAX_TIMELINE_INTERVALS);
    let frames_truncated = hops.len() > MAX_LADDER_FRAMES;
    hops.truncate(MAX_LADDER_FRAMES);
    let frames = hops;
    Drawing {
        timeline,
        timeline_truncated,
        frames,
        frames_truncated,
    }
}

/// The first message's drawing: its intervals (at most [`MAX_TIMELINE_INTERVALS`]) and its
/// frames (at most [`MAX_LADDER_FRAMES`]), with how many of each were left out.
pub(super) struct Drawing {
    timeline: Vec<Interval>,
    timeline_truncated: u64,
    frames: Vec<FrameHops>,
    frames_truncated: bool,
}

pub(super) fn unit_name(u: ExecUnit) -> &'static str {
    match u {
        ExecUnit::Cpu(_) => "cpu",
        ExecUnit::Nic => "nic",
        ExecUnit::Pcie => "pcie",
    }
}

pub(super) fn stage_counts(stages: &[(Stage, StageTotal)]) -> Vec<StageCount> {
    stages
        .iter()
        .map(|&(stage, t)| StageCount {
            stage,
            count: t.count,
            busy_ns: ns(t.busy),
            kernel: stage.domain() == Domain::Kernel,
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    w: &mut World,
    plan: &Plan,
    path: &'static str,
    operation: String,
    m: Measured,
    before: &Snap,
    labels: (&'static str, &'static str),
) -> Result<PathReport, RunError> {
    w.finish_pcap().map_err(|e| RunError::Pcap(e.to_string()))?;
    // The view's last sample now, when the report's own counts are read (below).
    if let (Some(sink), Some(v)) = (&m.fabric, w.finish_fabric_view()) {
        sink.lock()
            .expect("no panic holds the sink")
            .push((path, v));
    }
    let nodes = [w.host(0).node, w.host(1).node];
    let mut log = w
        .tracer_mut()
        .take::<StageLog>()
        .map(|l| *l)
        .unwrap_or_default();
    let packets = w
        .fabric_mut()
        .tracer_mut()
        .take::<FirstObserver>()
        .map(|t| t.records)
        .unwrap_or_default();
    if let Some(sink) = &m.frames {
        let (log, skipped) = w.take_frame_log();
        let v = crate::report::packets::view(path, &log, &packets, nodes, skipped > 0);
        sink.lock().expect("no panic holds the sink").push(v);
    }
    if let Some(sink) = &m.trace {
        // Host stages and fabric events of the whole run, merged in time order (stable: a
        // host record before a fabric record at the same instant).
        let mut all: Vec<(&'static str, SimTime, TraceRecord)> = log
            .take_everything()
            .into_iter()
            .chain(packets.iter().cloned())
            .take(crate::report::MAX_TRACE_RECORDS)
            .map(|(t, r)| (path, t, r))
            .collect();
        all.sort_by_key(|x| x.1);
        sink.lock().expect("no panic holds the sink").extend(all);
    }
    let recs: &[Rec] = log.kept();
    let is_setup = |r: &Rec| log.is_setup(r);
    // Every CPU stage of a host in a phase, counted over the whole run.
    let cpu = |host: NodeId, phase: Phase| -> Vec<(Stage, StageTotal)> {
        log.cpu_stages(host, phase).collect()
    };
    let after = snap(w);
    let delivered = m.delivered.max(1) as f64;
    let bytes = m.delivered * plan.workload.message_bytes;
    // Data path.
    let dl = cpu(nodes[0], Phase::Data);
    let dr = cpu(nodes[1], Phase::Data);
    let ioctls = |v: &[(Stage, StageTotal)]| {
        v.iter()
            .filter(|(stage, _)| stage.is_ioctl())
            .map(|(_, t)| t.count)
            .sum::<u64>()
    };
    let kernel = |v: &[(Stage, StageTotal)]| v.iter().any(|(s, _)| s.domain() == Domain::Kernel);
    let sum = |a: [u64; 2], b: [u64; 2]| (a[0] - b[0]) + (a[1] - b[1]);
    let data_path = Costs {
        copies: sum(after.copies, before.copies),
        copied_bytes: sum(after.copied, before.copied),
        syscalls: sum(after.syscalls, before.syscalls) + ioctls(&dl) + ioctls(&dr),
        kernel_local: kernel(&dl),
        kernel_remote: kernel(&dr),
        cpu_stages_local: stage_counts(&dl),
        cpu_stages_remote: stage_counts(&dr),
        cpu_ns_local: ns(after.cpu_data[0] - before.cpu_data[0]),
        cpu_ns_remote: ns(after.cpu_data[1] - before.cpu_data[1]),
        cpu_ns_per_message_local: ns(after.cpu_data[0] - before.cpu_data[0]) / delivered,
        cpu_ns_per_message_remote: ns(after.cpu_data[1] - before.cpu_data[1]) / delivered,
        duration_ns: 0.0,
    };
    // Setup.
    let sl = cpu(nodes[0], Phase::Setup);
    let sr = cpu(nodes[1], Phase::Setup);
    let socket_setup: u64 = (0..2)
        .map(|h| w.socket_stats(h).setup_syscalls.values().sum::<u64>())
        .sum();
    let setup = Costs {
        copies: before.copies[0] + before.copies[1],
        copied_bytes: before.copied[0] + before.copied[1],
        // Socket setup calls, the exchange's read()/write() (every socket call before the
        // data path began) and the verbs ioctls.
        syscalls: socket_setup
            + before.syscalls[0]
            + before.syscalls[1]
            + ioctls(&sl)
            + ioctls(&sr),
        kernel_local: kernel(&sl),
        kernel_remote: kernel(&sr),
        cpu_stages_local: stage_counts(&sl),
        cpu_stages_remote: stage_counts(&sr),
        cpu_ns_local: ns(w.host(0).cpu().account().setup + before.cpu_data[0]),
        cpu_ns_remote: ns(w.host(1).cpu().account().setup + before.cpu_data[1]),
        cpu_ns_per_message_local: 0.0,
        cpu_ns_per_message_remote: 0.0,
        duration_ns: ns(m.setup_end.saturating_duration_since(m.setup_start)),
    };
    let transport_in = if dl
        .iter()
        .chain(dr.iter())
        .any(|(stage, _)| stage.is_tcp_stack())
    {
        "kernel software"
    } else {
        "NIC hardware"
    };
    let (remote_cpu, remote_cpu_why) = participation(&data_path, delivered);
    let latency = m.first.map(|(t0, done, _, local)| {
        let end = done.max(local);
        let first: Vec<&Rec> = recs
            .iter()
            .filter(|r| !is_setup(r) && r.start >= t0 && r.start <= end)
            .collect();
        let placed = first
            .iter()
            .filter(|r| r.host == nodes[1] && r.stage == Stage::DmaWritePayload)
            .map(|r| r.end)
            .max();
        // The local CQE landed when its DMA write ended: the application (one thread here,
        // which may have been waiting on the remote first) can only notice it later.
        let local = first
            .iter()
            .filter(|r| r.host == nodes[0] && r.stage == Stage::DmaWriteCqe)
            .map(|r| r.end)
            .max()
            .map_or(local, |t| t.min(local));
        let rel = |t: SimTime| ns(t.saturating_duration_since(t0));
        let mut groups: BTreeMap<GroupKey, GroupVal> = BTreeMap::new();
        for r in &first {
            let side = if r.host == nodes[0] { 0 } else { 1 };
            let e = groups
                .entry((side, unit_name(r.unit), r.stage.name()))
                .or_insert((0, SimDuration::ZERO, r.start, r.end));
            e.0 += 1;
            e.1 += r.end.saturating_duration_since(r.start);
            e.2 = e.2.min(r.start);
            e.3 = e.3.max(r.end);
        }
        let mut breakdown: Vec<StageSpan> = groups
            .into_iter()
            .map(|((side, unit, stage), (count, busy, s, e))| StageSpan {
                side: if side == 0 { "local" } else { "remote" },
                unit,
                stage,
                count,
                busy_ns: ns(busy),
                start_ns: rel(s),
                end_ns: rel(e),
            })
            .collect();
        breakdown.sort_by(|a, b| a.start_ns.total_cmp(&b.start_ns));
        let Drawing {
            timeline,
            timeline_truncated,
            frames,
            frames_truncated,
        } = drawing(
            &packets,
            &first,
            nodes,
            (t0, end),
            plan.topology.link_gbps.max(1),
            path,
        );
        let delivered_at = if path == "rdma" && plan.rdma.operation == Operation::Write {
            placed.unwrap_or(done)
        } else {
            done
        };
        Latency {
            delivered_ns: rel(delivered_at),
            delivered_at: labels.0,
            placed_at_remote_ns: placed.map(rel),
            local_completion_ns: rel(local),
            local_completion_at: labels.1,
            breakdown,
            timeline,
            timeline_truncated,
            frames,
            frames_truncated,
        }
    });
    // A path whose first message never got through: what its attempt did, for the drawing.
    let failed_attempt = match (&latency, m.attempt) {
        (None, Some((t0, end))) => {
            let tried: Vec<&Rec> = recs
                .iter()
                .filter(|r| !is_setup(r) && r.start >= t0 && r.start <= end)
                .collect();
            let Drawing {
                timeline,
                timeline_truncated,
                frames,
                frames_truncated,
            } = drawing(
                &packets,
                &tried,
                nodes,
                (t0, end),
                plan.topology.link_gbps.max(1),
                path,
            );
            Some(crate::report::FailedAttempt {
                timeline,
                timeline_truncated,
                frames,
                frames_truncated,
                gave_up_ns: ns(end.saturating_duration_since(t0)),
            })
        }
        _ => None,
    };
    let bus = |h: usize| {
        let dma = after.dma[h] - before.dma[h];
        let copied = after.copied[h] - before.copied[h];
        if bytes == 0 {
            0.0
        } else {
            (dma + 2 * copied) as f64 / bytes as f64
        }
    };
    let f = after.fabric;
    let b = before.fabric;
    let cross_drops: u64 = w
        .fabric()
        .flow_results()
        .iter()
        .map(|r| r.frames_dropped)
        .sum();
    let oversize_drops = f.drops_oversize - b.drops_oversize;
    let oversize = (oversize_drops > 0).then(|| {
        let (path_key, path_mtu_bytes) = if path == "rdma" {
            ("rdma.mtu_bytes", plan.rdma.mtu_bytes)
        } else {
            ("tcp.mtu_bytes", plan.tcp.mtu_bytes)
        };
        let (port, port_key, port_mtu, first_frame_bytes) = match after.oversize {
            Some(o) => (
                format!("host {}", o.host.0),
                "max(tcp.mtu_bytes, rdma.mtu_bytes + 96)",
                u64::from(o.mtu_bytes),
                Some(o.frame_bytes),
            ),
            None => (
                "switch".to_string(),
                "switch.mtu_bytes",
                plan.switch.mtu_bytes,
                None,
            ),
        };
        crate::report::Oversize {
            drops: oversize_drops,
            port,
            port_key,
            port_mtu_bytes: port_mtu,
            frame_limit_bytes: port_mtu + fabric::config::L2_BYTES,
            first_frame_bytes,
            path_key,
            path_mtu_bytes,
        }
    });
    Ok(PathReport {
        path,
        operation,
        outcome: m.outcome,
        messages_delivered: m.delivered,
        bytes_delivered: bytes,
        data_path,
        setup,
        transport_in,
        remote_cpu,
        remote_cpu_why,
        latency,
        memory_bus_bytes_per_delivered_byte: Sides {
            local: bus(0),
            remote: bus(1),
        },
        retransmitted_bytes: m.retransmitted_bytes,
        // The path's own frames: cross-traffic bursts (the world's only raw flows) apart.
        drops: f.drops() - b.drops() - cross_drops,
        pfc_pauses: f.pauses_sent - b.pauses_sent,
        pfc_watchdog_drops: f.drops_watchdog - b.drops_watchdog,
        oversize,
        drawn_overflows_paused: f.congestion_draws_paused - b.congestion_draws_paused,
        throughput: None,
        recovery: None,
        cross_traffic: None,
        failed_attempt,
        ecn_marks: f.ecn_marks - b.ecn_marks,
    })
}

/// Applies the documented thresholds (module docs) to the remote's data-path CPU stages.
pub(super) fn participation(c: &Costs, messages: f64) -> (Participation, String) {
    let stages = &c.cpu_stages_remote;
    if stages.is_empty() {
        return (
            Participation::None,
            "no CPU stage ran on the remote".to_string(),
        );
    }
    let per_msg = c.cpu_ns_remote / messages;
    let mut heavy = Vec::new();
    for s in stages {
        let allowed_once = s.stage.is_completion_wakeup() && (s.count as f64) <= messages;
        if s.kernel && !allowed_once {
            heavy.push(s.stage.name());
        }
    }
    if heavy.is_empty() && per_msg <= LIGHT_MAX_CPU_NS_PER_MESSAGE {
        let names: Vec<&str> = stages.iter().map(|s| s.stage.name()).collect();
        (
            Participation::Light,
            format!(
                "{} per message: {}",
                crate::report::format_ns(per_msg),
                names.join(", ")
            ),
        )
    } else if heavy.is_empty() {
        (
            Participation::Full,
            format!(
                "{} of remote CPU per message, above the {} light threshold",
                crate::report::format_ns(per_msg),
                crate::report::format_ns(LIGHT_MAX_CPU_NS_PER_MESSAGE)
            ),
        )
    } else {
        (
            Participation::Full,
            format!(
                "kernel work on the remote, {} per message: {}",
                crate::report::format_ns(per_msg),
                heavy.join(", ")
            ),
        )
    }
}
