//! The TCP path of a plan: connect, then `write()` and blocking `read()` of each message (or a
//! stream for a set time), and how its losses were recovered.

use super::*;

pub(super) fn run_tcp(
    plan: &Plan,
    host: &BTreeMap<String, u64>,
    pcap: Option<PcapSink>,
    trace: Option<crate::report::TraceSink>,
    frames: Option<crate::report::packets::ViewSink>,
    fabric: Option<FabricSink>,
) -> Result<PathReport, RunError> {
    let mut w = new_world(plan, host, pcap, trace.is_some(), frames.is_some())?;
    let opts = tcp_options(plan);
    let setup_start = w.now();
    let (sa, sb) = w.tcp_connect(0, 1, &opts)?;
    let setup_end = w.now();
    settle(&mut w)?;
    let before = snap(&w);
    stage_log(&mut w).data_path_begins(before.at);
    ladder_from_here(&mut w, plan);
    fabric_view_from_here(&mut w, plan, fabric.is_some())?;
    let len = plan.workload.message_bytes as usize;
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let mut m = Measured {
        outcome: Outcome::Success,
        delivered: 0,
        first: None,
        retransmitted_bytes: 0,
        setup_start,
        setup_end,
        trace: trace.clone(),
        frames: frames.clone(),
        fabric: fabric.clone(),
        attempt: None,
    };
    if let Some(d) = plan.stream_duration() {
        // A stream's report draws no message: nothing of the data path is kept.
        stage_log(&mut w).first_message_over(before.at);
        let (bytes, thr, failed) = stream::tcp(&mut w, sa, sb, plan, d)?;
        m.delivered = bytes / plan.workload.message_bytes.max(1);
        if let Some(o) = failed {
            m.outcome = o;
        }
        let (recovery, resent) = tcp_recovery(&w, sa, sb);
        m.retransmitted_bytes = resent;
        let labels = ("read() returned the data", "write() returned");
        let mut r = finish(
            &mut w,
            plan,
            "tcp",
            "write() / read() stream".to_string(),
            m,
            &before,
            labels,
        )?;
        r.throughput = Some(thr);
        r.recovery = Some(recovery);
        r.cross_traffic = stream::cross_traffic_report(&w, plan);
        return Ok(r);
    }
    // The message is generated as the socket takes it and checked as it is read, a piece at
    // a time (PatternGen), so the runner holds at most a socket buffer's worth of it: what a
    // run holds grows with what is in flight, not with the message. Each write offers what
    // the socket can take and each read asks for what is readable, exactly the amounts a
    // whole-message buffer would give, so the calls (and the results) are the same.
    let (mut tx_buf, mut rx_buf, mut expect) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..plan.workload.messages {
        let mut tx = PatternGen::new(plan.seed ^ (i + 1));
        let mut rx = tx.clone();
        // Small messages: generated once, sent from and checked against the whole.
        let whole = (len as u64 <= WHOLE_LEN).then(|| pattern(plan.seed ^ (i + 1), len));
        tx_buf.clear();
        let mut tx_off = 0usize;
        let mut corrupt = false;
        let t0 = w.now().max(w.app_ready(0));
        if t0 > w.now() {
            w.run_until(t0, &budget)?;
        }
        let deadline = t0 + MESSAGE_DEADLINE;
        let (mut sent, mut got) = (0usize, 0usize);
        let mut blocked = false;
        let mut write_done = t0;
        loop {
            let now = w.now();
            if sent < len && now >= w.app_ready(0) && w.tcp_writable(sa) > 0 {
                let want = (len - sent).min(w.tcp_writable(sa));
                if let Some(m) = &whole {
                    sent += w.tcp_write(0, sa, &m[sent..sent + want]);
                    if sent == len {
                        write_done = w.app_ready(0);
                    }
                    continue;
                }
                if tx_buf.len() - tx_off < want {
                    tx_buf.drain(..tx_off);
                    tx_off = 0;
                    let at = tx_buf.len();
                    tx_buf.resize(want, 0);
                    tx.fill(&mut tx_buf[at..]);
                }
                let n = w.tcp_write(0, sa, &tx_buf[tx_off..tx_off + want]);
                tx_off += n;
                sent += n;
                if sent == len {
                    write_done = w.app_ready(0);
                }
                continue;
            }
            if now >= w.tcp_ready_at(sb) && (!blocked || w.tcp_bytes_readable(sb) > 0) {
                let ask = (len - got).min(w.tcp_bytes_readable(sb));
                if rx_buf.len() < ask {
                    rx_buf.resize(ask, 0);
                    expect.resize(ask, 0);
                }
                let n = w.tcp_read(1, sb, &mut rx_buf[..ask]);
                blocked = n == 0;
                corrupt |= match &whole {
                    Some(m) => rx_buf[..n] != m[got..got + n],
                    None => {
                        rx.fill(&mut expect[..n]);
                        rx_buf[..n] != expect[..n]
                    }
                };
                got += n;
                if got == len {
                    break;
                }
                continue;
            }
            let mut next = w.next_event_at().unwrap_or(SimTime::MAX);
            for t in [w.app_ready(0), w.tcp_ready_at(sb)] {
                if t > now {
                    next = next.min(t);
                }
            }
            if next == SimTime::MAX || next > deadline {
                m.outcome = Outcome::Failed {
                    verb: "read".to_string(),
                    code: "no data".to_string(),
                    at: "host 1 (receiver)".to_string(),
                    why: format!(
                        "message {i}: {got} of {len} bytes arrived before the run stalled"
                    ),
                };
                break;
            }
            w.run_until(next.max(now + SimDuration::from_ps(1)), &budget)?;
        }
        if got < len {
            break;
        }
        if corrupt {
            m.outcome = Outcome::Failed {
                verb: "read".to_string(),
                code: "corrupt".to_string(),
                at: "host 1 (receiver)".to_string(),
                why: format!("message {i}: the bytes read differ from the bytes written"),
            };
            break;
        }
        m.delivered += 1;
        if m.first.is_none() {
            m.first = Some((t0, w.app_ready(1), None, write_done));
            let end = w.app_ready(1).max(write_done);
            stage_log(&mut w).first_message_over(end);
        }
    }
    let (recovery, resent) = tcp_recovery(&w, sa, sb);
    m.retransmitted_bytes = resent;
    let mut r = finish(
        &mut w,
        plan,
        "tcp",
        "write() / blocking read()".to_string(),
        m,
        &before,
        ("read() returned the data", "write() returned"),
    )?;
    r.recovery = Some(recovery);
    Ok(r)
}

/// TCP's loss recovery and retransmitted bytes, both directions added.
pub(super) fn tcp_recovery(
    w: &World,
    sa: crate::world::SocketId,
    sb: crate::world::SocketId,
) -> (Recovery, u64) {
    let (x, y) = (
        w.tcp_connection(sa).counters(),
        w.tcp_connection(sb).counters(),
    );
    let r = Recovery {
        loss_events: x.fast_recoveries + y.fast_recoveries,
        timeouts: x.rtos + y.rtos,
        tail_probes: x.tlp_probes + y.tlp_probes,
        mean_inflight_packets: None,
        selective: false,
        resent_packets: 0,
        dcqcn: None,
    };
    (r, x.retransmitted_bytes + y.retransmitted_bytes)
}
