//! The RDMA path of a plan: the QP bring-up with the lesson's choices (through the world's one
//! bring-up), the posts and completions of each message (or a stream), and how its losses were
//! recovered; failures named as the verb and the host.

use super::*;

/// Sets up an RC QP pair, stopping at `plan.rdma.qp_state`; returns the endpoints and, per
/// host, (buffer address, lkey, rkey).
pub(super) type RdmaSetup = ((Endpoint, Endpoint), [(u64, u32, u32); 2]);

/// `channel`: host 1's CQ reports to this completion channel (`rdma.completion = "event"`).
/// The world's one bring-up ([`World::connect_rc_with`]) with the lesson's choices: a message
/// buffer per host, registered or not, and the QP state to stop at.
pub(super) fn rdma_setup(
    w: &mut World,
    plan: &Plan,
    channel: Option<verbs::types::ChannelHandle>,
) -> Result<RdmaSetup, Outcome> {
    let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
    let how = Bringup {
        opts: RcOptions {
            mtu: plan.rdma_mtu(),
            timeout: plan.rdma.timeout,
            retry_cnt: plan.rdma.retry_cnt,
            access,
            ..RcOptions::default()
        },
        channels: [None, channel],
        stop_at: plan.qp_state(),
        buffer: Some(BufferSpec {
            len: plan.workload.message_bytes,
            seed: plan.seed,
            register: plan.rdma.memory_registered,
            access,
        }),
    };
    let c = w.connect_rc_with(0, 1, &how).map_err(|e| {
        let (code, at) = match (&e.source, e.step) {
            (_, ConnectStep::Exchange) => ("lost".to_string(), "hosts 0 and 1".to_string()),
            (WorldError::Verbs(v), _) => (format!("{:?}", v.errno()), format!("host {}", e.host)),
            (_, ConnectStep::Malloc) => ("ENOMEM".to_string(), format!("host {}", e.host)),
            _ => ("failed".to_string(), format!("host {}", e.host)),
        };
        Outcome::Failed {
            verb: e.step.verb().to_string(),
            code,
            at,
            why: e.source.to_string(),
        }
    })?;
    let buf = |b: HostBuffer| (b.va, b.lkey, b.rkey);
    Ok((c.ends, [buf(c.bufs[0]), buf(c.bufs[1])]))
}

pub(super) fn cq_ready(w: &World, e: &Endpoint) -> bool {
    w.host(e.host).verbs.cq(e.cq).is_some_and(|c| !c.is_empty())
}

pub(super) fn run_rdma(
    plan: &Plan,
    host: &BTreeMap<String, u64>,
    pcap: Option<PcapSink>,
    trace: Option<crate::report::TraceSink>,
    frames: Option<crate::report::packets::ViewSink>,
    fabric: Option<FabricSink>,
) -> Result<PathReport, RunError> {
    let mut w = new_world(plan, host, pcap, trace.is_some(), frames.is_some())?;
    let op = plan.rdma.operation;
    let op_name = match op {
        Operation::Write => "RDMA WRITE",
        Operation::Read => "RDMA READ",
        Operation::Send => "SEND / RECV",
    };
    let setup_start = w.now();
    let mut m = Measured {
        outcome: Outcome::Success,
        delivered: 0,
        first: None,
        retransmitted_bytes: 0,
        setup_start,
        setup_end: setup_start,
        trace: trace.clone(),
        frames: frames.clone(),
        fabric: fabric.clone(),
        attempt: None,
    };
    // Both hosts set up side by side, as two applications would.
    // Event completions: the receiving application sleeps on a completion channel.
    let channel = (plan.rdma.completion == scenario::Completion::Event)
        .then(|| w.verbs(1).create_comp_channel());
    // Each host's message buffer is real memory up to Memory::MAX_REAL_LEN: a run whose
    // budget cannot hold them stops before allocating them.
    if plan.workload.message_bytes <= verbs::Memory::MAX_REAL_LEN {
        w.reserve(2 * plan.workload.message_bytes)?;
    }
    let setup = rdma_setup(&mut w, plan, channel);
    m.setup_end = w.now();
    settle(&mut w)?;
    let before = snap(&w);
    stage_log(&mut w).data_path_begins(before.at);
    ladder_from_here(&mut w, plan);
    fabric_view_from_here(&mut w, plan, fabric.is_some())?;
    let labels = match op {
        Operation::Write => ("data placed in remote memory", "local CQE written"),
        Operation::Send if channel.is_some() => (
            "the woken receiver got its CQ event (interrupt + wake-up)",
            "local CQE written",
        ),
        Operation::Send => ("receive CQE in the remote CQ", "local CQE written"),
        Operation::Read => ("READ data placed in local memory", "local CQE written"),
    };
    let ((a, b), bufs) = match setup {
        Ok(s) => s,
        Err(o) => {
            m.outcome = o;
            return finish(
                &mut w,
                plan,
                "rdma",
                op_name.to_string(),
                m,
                &before,
                labels,
            );
        }
    };
    if let Some(d) = plan.stream_duration() {
        // A stream's report draws no message: nothing of the data path is kept.
        stage_log(&mut w).first_message_over(before.at);
        // Every streamed WRITE carries this message; the stream checks that it arrives whole.
        let len = plan.workload.message_bytes;
        let expected = if len <= verbs::Memory::MAX_REAL_LEN {
            let msg = pattern(plan.seed ^ 1, len as usize);
            let written = w.verbs(0).memory_mut().write(bufs[0].0, &msg);
            // The buffer was allocated with this length by rdma_setup.
            debug_assert!(
                written.is_ok(),
                "the stream's source buffer holds one message"
            );
            msg
        } else {
            Vec::new()
        };
        let (bytes, thr, failed) = stream::rdma(
            &mut w,
            a,
            ((bufs[0].0, bufs[0].1), (bufs[1].0, bufs[1].2)),
            &expected,
            plan,
            d,
        )?;
        m.delivered = bytes / plan.workload.message_bytes.max(1);
        if let Some(o) = failed {
            m.outcome = o;
        }
        let (recovery, resent) = rdma_recovery(&w, a, b);
        m.retransmitted_bytes = resent;
        let mut r = finish(
            &mut w,
            plan,
            "rdma",
            format!("{op_name} stream"),
            m,
            &before,
            labels,
        )?;
        r.throughput = Some(thr);
        r.recovery = Some(recovery);
        r.cross_traffic = stream::cross_traffic_report(&w, plan);
        return Ok(r);
    }
    let len = plan.workload.message_bytes;
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let synthetic = len > verbs::Memory::MAX_REAL_LEN;
    let mut first_t0 = None;
    for i in 0..plan.workload.messages {
        // The source of the bytes: host 0 for WRITE/SEND, host 1 for READ. The message is
        // written into it a piece at a time (and checked so at the destination), so the
        // runner never holds a second copy of a large message.
        let seed = plan.seed ^ (i + 1);
        let src_host = if op == Operation::Read { 1 } else { 0 };
        // A message up to WHOLE_LEN is generated once and kept for the check; a larger one is
        // regenerated for it a piece at a time instead of being held twice.
        let msg = (!synthetic && len <= WHOLE_LEN).then(|| pattern(seed, len as usize));
        let written = match &msg {
            Some(m) => w
                .verbs(src_host)
                .memory_mut()
                .write(bufs[src_host as usize].0, m),
            None if synthetic => Ok(()),
            None => write_pattern(&mut w, src_host, bufs[src_host as usize].0, seed, len),
        };
        if let Err(e) = written {
            m.outcome = Outcome::Failed {
                verb: "memory write".to_string(),
                code: "EFAULT".to_string(),
                at: format!("host {src_host}"),
                why: e.to_string(),
            };
            break;
        }
        if op == Operation::Send {
            let rwr = RecvWr::new(
                i,
                vec![Sge {
                    addr: bufs[1].0,
                    length: len as u32,
                    lkey: bufs[1].1,
                }],
            );
            if let Err(e) = w.post_recv(1, b.qpn, &[rwr]) {
                m.outcome = post_failed("ibv_post_recv", 1, &e, &w, b);
                break;
            }
        }
        let t0 = w.now().max(w.app_ready(0));
        first_t0.get_or_insert(t0);
        if t0 > w.now() {
            w.run_until(t0, &budget)?;
        }
        let sge = vec![Sge {
            addr: bufs[0].0,
            length: len as u32,
            lkey: bufs[0].1,
        }];
        let wr = match op {
            Operation::Write => SendWr::write(i, sge, bufs[1].0, bufs[1].2),
            Operation::Read => SendWr::read(i, sge, bufs[1].0, bufs[1].2),
            Operation::Send => SendWr::send(i, sge),
        }
        .signaled();
        if let Err(e) = w.post_send(0, a.qpn, &[wr]) {
            m.outcome = post_failed("ibv_post_send", 0, &e, &w, a);
            break;
        }
        let deadline = t0 + MESSAGE_DEADLINE;
        // SEND: the receive completion first (the remote application's view).
        let mut remote_cqe = None;
        if op == Operation::Send {
            if channel.is_some() {
                // Arm, sleep; the CQE raises an interrupt, the interrupt wakes the thread.
                w.req_notify_cq(1, b.cq, false)
                    .map_err(crate::world::WorldError::from)?;
            }
            w.run_until_cond(deadline, &budget, |w| cq_ready(w, &b))?;
            if let Some(ch) = channel {
                // Blocking ibv_get_cq_event: returns when the wake-up has run.
                if let Some(t) = w.cq_event_at(1, ch).filter(|t| *t > w.now()) {
                    w.run_until(t, &budget)?;
                }
                let woke = w
                    .get_cq_event(1, ch)
                    .map_err(crate::world::WorldError::from)?
                    .is_some();
                if woke {
                    w.verbs(1)
                        .ack_cq_events(b.cq, 1)
                        .map_err(crate::world::WorldError::from)?;
                }
            }
            if cq_ready(&w, &b) {
                remote_cqe = Some(w.now());
                let wcs = w
                    .poll_cq(1, b.cq, 16)
                    .map_err(crate::world::WorldError::from)?;
                if let Some(wc) = wcs.iter().find(|c| c.status != WcStatus::Success) {
                    m.outcome = wc_failed(wc.status, 1, "receive", &w, b);
                    break;
                }
            }
        }
        w.run_until_cond(deadline, &budget, |w| cq_ready(w, &a))?;
        if !cq_ready(&w, &a) {
            let state = w
                .host(0)
                .verbs
                .qp_state(a.qpn)
                .map(|s| s.name().to_string())
                .unwrap_or_default();
            m.outcome = Outcome::Failed {
                verb: "ibv_poll_cq".to_string(),
                code: "no completion".to_string(),
                at: format!("host 0, QP {}", a.qpn.get()),
                why: format!(
                    "ibv_post_send returned 0 but no completion arrived within {} ms of simulated time; the QP is in {state}",
                    MESSAGE_DEADLINE.as_ns() / 1_000_000
                ),
            };
            break;
        }
        let local_cqe = w.now();
        let wcs = w
            .poll_cq(0, a.cq, 16)
            .map_err(crate::world::WorldError::from)?;
        if let Some(wc) = wcs.iter().find(|c| c.status != WcStatus::Success) {
            m.outcome = wc_failed(wc.status, 0, "send", &w, a);
            break;
        }
        // The bytes arrived intact: compared directly, or for a synthetic buffer (over
        // MAX_REAL_LEN) by the memory's own position check of every placed byte.
        let dst_host = if op == Operation::Read { 0 } else { 1 };
        let dst_va = bufs[dst_host as usize].0;
        let intact = if synthetic {
            w.verbs(dst_host)
                .memory()
                .synthetic_stats(dst_va)
                .is_some_and(|st| st.mismatched_bytes == 0)
        } else if let Some(m) = &msg {
            w.host(dst_host).verbs.memory().holds(dst_va, m)
        } else {
            holds_pattern(&w, dst_host, dst_va, seed, len)
        };
        if !intact {
            m.outcome = Outcome::Failed {
                verb: "memory check".to_string(),
                code: "corrupt".to_string(),
                at: format!("host {dst_host}"),
                why: format!("message {i}: the destination buffer differs from the source"),
            };
            break;
        }
        let remote_cqe = match (op, remote_cqe) {
            (Operation::Send, None) => {
                m.outcome = Outcome::Failed {
                    verb: "ibv_poll_cq".to_string(),
                    code: "no completion".to_string(),
                    at: format!("host 1, QP {}", b.qpn.get()),
                    why: format!(
                        "message {i}: the send completed but no receive completion reached host 1"
                    ),
                };
                break;
            }
            (_, t) => t.unwrap_or(local_cqe),
        };
        m.delivered += 1;
        if m.first.is_none() {
            m.first = Some((t0, remote_cqe, None, local_cqe));
            stage_log(&mut w).first_message_over(remote_cqe.max(local_cqe));
        }
    }
    if m.first.is_none() {
        m.attempt = first_t0.map(|t| (t, w.now()));
    }
    let (recovery, resent) = rdma_recovery(&w, a, b);
    m.retransmitted_bytes = resent;
    let mut r = finish(
        &mut w,
        plan,
        "rdma",
        op_name.to_string(),
        m,
        &before,
        labels,
    )?;
    r.recovery = Some(recovery);
    Ok(r)
}

/// The RC requesters' loss recovery: sequence NAKs, ACK timeouts, and the mean in-flight
/// window (what each go-back-N recovery resends); and the bytes resent.
pub(super) fn rdma_recovery(w: &World, a: Endpoint, b: Endpoint) -> (Recovery, u64) {
    let cs: Vec<_> = [(0, a), (1, b)]
        .iter()
        .filter_map(|(h, e)| w.host(*h).requester_counters(e.qpn))
        .collect();
    let sum = |f: &dyn Fn(&transport::roce::requester::RequesterCounters) -> u64| {
        cs.iter().map(f).sum::<u64>()
    };
    let first = sum(&|c| c.first_transmissions);
    let r = Recovery {
        loss_events: sum(&|c| c.sequence_naks),
        timeouts: sum(&|c| c.timeouts),
        tail_probes: 0,
        mean_inflight_packets: (first > 0).then(|| sum(&|c| c.inflight_sum) as f64 / first as f64),
        selective: w.selective_repeat(),
        resent_packets: sum(&|c| c.packets_retransmitted),
        dcqcn: dcqcn_summary(w, a, b),
    };
    (r, sum(&|c| c.bytes_retransmitted))
}

/// What DCQCN did on the path's two QPs, if it ran.
pub(super) fn dcqcn_summary(
    w: &World,
    a: Endpoint,
    b: Endpoint,
) -> Option<crate::report::DcqcnSummary> {
    let (rate, _, _, rp_a) = w.dcqcn_state(a.host, a.qpn)?;
    let rp_b = w
        .dcqcn_state(b.host, b.qpn)
        .map(|x| x.3)
        .unwrap_or_default();
    let np = |e: Endpoint| w.np_counters(e.host, e.qpn).unwrap_or((0, 0));
    let (na, nb) = (np(a), np(b));
    Some(crate::report::DcqcnSummary {
        profile: w.dcqcn_params()?.name,
        marked: na.0 + nb.0,
        cnps_sent: na.1 + nb.1,
        cnps_handled: rp_a.cnps + rp_b.cnps,
        cuts: rp_a.cuts + rp_b.cuts,
        final_rate_gbps: rate as f64 / 1e6,
    })
}

pub(super) fn post_failed(
    verb: &str,
    h: u32,
    e: &verbs::PostError,
    w: &World,
    ep: Endpoint,
) -> Outcome {
    let state = w
        .host(h)
        .verbs
        .qp_state(ep.qpn)
        .map(|s| s.name().to_string())
        .unwrap_or_default();
    Outcome::Failed {
        verb: verb.to_string(),
        code: format!("{:?}", e.errno),
        at: format!("host {h}, QP {} (in {state})", ep.qpn.get()),
        why: e.to_string(),
    }
}

pub(super) fn wc_failed(status: WcStatus, h: u32, queue: &str, w: &World, ep: Endpoint) -> Outcome {
    let state = w
        .host(h)
        .verbs
        .qp_state(ep.qpn)
        .map(|s| s.name().to_string())
        .unwrap_or_default();
    Outcome::Failed {
        verb: "ibv_poll_cq".to_string(),
        code: format!(
            "{} ({}, {})",
            status.const_name(),
            status.value(),
            status.as_str()
        ),
        at: format!(
            "host {h}, {queue} completion of QP {} (now in {state})",
            ep.qpn.get()
        ),
        why: format!("the work request completed with status \"{status}\""),
    }
}
