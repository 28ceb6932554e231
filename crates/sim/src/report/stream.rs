//! Stream mode: back-to-back messages for `workload.stream_us`, throughput measured over the
//! steady-state window that follows a warm-up, and (when the plan loses frames) retention:
//! the same run's throughput divided by a loss-free run's.
//!
//! The window is at least 1 ms of simulated time (issue 5: throughput rows come from at least
//! 1 ms of steady state); the warm-up is a quarter of the stream, at most 500 µs, so slow start
//! and the first round trips are not averaged in.
//!
//! # TCP throughput against buffer size (model-fidelity issue, item 4)
//! On a loss-free path a stream's throughput rises with both buffers until the window stops
//! binding, then stays flat where a CPU binds (64 KiB messages at 100 Gb/s: the sender's
//! application core, copying and running the stack): 16.3 Gb/s at 64 KiB buffers, 28.0 at
//! 128 KiB, 44.8 from 256 KiB to 64 MiB (simulated; test
//! `tcp_throughput_never_falls_as_both_buffers_grow`). Two model defects once made it fall
//! instead. PCIe kept one "busy until" clock per direction, and a doorbell booked for when the
//! writing core's work ended (microseconds ahead) held back the NIC's reads of segments already
//! queued: with 8 MiB buffers 23.7 Gb/s and a 1 ms RTT of segments waiting in the kernel's ring
//! (`host::calendar` books each transfer in the first free gap now). And the ACKs that arrive
//! while the writer is inside `write()` ran, with the sends they clock, on the other core; Linux
//! queues them in the socket's backlog and the writer processes them when it lets go of the
//! socket (`world/tcp/`), which is what puts a window-open stream's transmit work on its core.
//! With TSO deferral (`transport::tcp::tso`) the ACK-clocked sends are full super-segments.

use super::{CrossTraffic, LossModel, Outcome, RunError, Throughput};
use crate::world::{Endpoint, SocketId, World};
use engine::Budget;
use scenario::Plan;
use transport::tcp::Counters;
use units::{Priority, SimDuration, SimTime};
use verbs::{
    WcStatus,
    wr::{SendWr, Sge},
};

/// Signaled WRITEs kept in flight on the RDMA stream: enough to cover the bandwidth-delay
/// product of a data-centre path many times over at message sizes of a few KiB and up
/// (preset ⑤: 8 × 64 KiB = 512 KiB against ~73 KiB in flight). A window this shallow also
/// means a lost last packet has nothing behind it to draw a NAK: the ACK timeout recovers it.
const RDMA_WINDOW: u64 = 8;

/// Shortest steady-state window a throughput row may come from.
pub const MIN_WINDOW: SimDuration = SimDuration::from_ms(1);

/// (warm-up end, stream end) for a stream of `d` starting at `t0`.
pub fn window(t0: SimTime, d: SimDuration) -> Result<(SimTime, SimTime), RunError> {
    let warm = SimDuration::from_ps((d.as_ps() / 4).min(SimDuration::from_us(500).as_ps()));
    if d.as_ps() - warm.as_ps() < MIN_WINDOW.as_ps() {
        return Err(RunError::Plan(format!(
            "workload.stream_us = {} leaves {} µs of steady state after the {} µs warm-up; \
             throughput needs at least {} µs (use stream_us ≥ {})",
            d.as_ns() / 1000,
            (d.as_ps() - warm.as_ps()) / 1_000_000,
            warm.as_ns() / 1000,
            MIN_WINDOW.as_ns() / 1000,
            MIN_WINDOW.as_ns() / 1000 * 4 / 3 + 1,
        )));
    }
    Ok((t0 + warm, t0 + d))
}

/// Starts the plan's cross-traffic bursts (none when `cross_traffic.burst_bytes` is 0)
/// beside a stream that runs from `t0` for `d`: at the start of every period each sender
/// (hosts 2, 3, …) sends `burst_bytes` to host 1 at line rate, in `priority` (the path's own
/// class) with `mtu`-byte payloads.
fn start_cross_traffic(
    w: &mut World,
    plan: &Plan,
    t0: SimTime,
    d: SimDuration,
    priority: Priority,
    mtu: u32,
) -> Result<(), RunError> {
    let ct = &plan.cross_traffic;
    if ct.burst_bytes == 0 {
        return Ok(());
    }
    let period = SimDuration::from_us(ct.period_us).as_ps();
    for k in 0..d.as_ps().div_ceil(period) {
        for s in 0..ct.senders {
            let at = t0 + SimDuration::from_ps(period * k);
            w.add_raw_flow(2 + s as u32, 1, ct.burst_bytes, mtu, priority, at)?;
        }
    }
    Ok(())
}

/// The share of its loss-free rate (`baseline_gbps`) a path can keep beside the plan's
/// cross traffic: what the link has left after the average burst load, over the baseline,
/// within 0..=1; 1 without cross traffic.
pub fn cross_traffic_ceiling(plan: &Plan, baseline_gbps: f64) -> f64 {
    if plan.cross_traffic.burst_bytes == 0 || baseline_gbps <= 0.0 {
        return 1.0;
    }
    ((plan.topology.link_gbps as f64 - offered_gbps(plan)) / baseline_gbps).clamp(0.0, 1.0)
}

fn offered_gbps(plan: &Plan) -> f64 {
    let ct = &plan.cross_traffic;
    (ct.burst_bytes * ct.senders) as f64 * 8.0 / (ct.period_us as f64 * 1e3)
}

/// What the fabric counted of the cross traffic (its raw flows are the only ones a report
/// world has).
pub fn cross_traffic_report(w: &World, plan: &Plan) -> Option<CrossTraffic> {
    let ct = &plan.cross_traffic;
    if ct.burst_bytes == 0 {
        return None;
    }
    let flows = w.fabric().flow_results();
    Some(CrossTraffic {
        senders: ct.senders,
        bursts: flows.len() as u64 / ct.senders.max(1),
        bytes_offered: ct.burst_bytes * flows.len() as u64,
        bytes_delivered: flows.iter().map(|f| f.delivered).sum(),
        frames_dropped: flows.iter().map(|f| f.frames_dropped).sum(),
        offered_gbps: offered_gbps(plan),
        ceiling: None,
    })
}

/// Batches the window is cut into for the confidence interval (batch means).
const BATCHES: u64 = 10;
/// Student's t, 97.5th percentile, BATCHES − 1 = 9 degrees of freedom (two-sided 95%).
const T_975_DF9: f64 = 2.262;

/// Delivered bytes sampled at the warm-up's end and at [`BATCHES`] equal steps to the
/// stream's end, for the throughput and its batch-means confidence interval.
struct Marks {
    at: Vec<SimTime>,
    seen: Vec<u64>,
}

impl Marks {
    fn new(warm: SimTime, end: SimTime) -> Marks {
        let span = end.saturating_duration_since(warm).as_ps();
        let at = (0..=BATCHES)
            .map(|i| warm + SimDuration::from_ps(span * i / BATCHES))
            .collect();
        Marks {
            at,
            seen: Vec::new(),
        }
    }

    /// Records `bytes` for every mark reached by `now`.
    fn observe(&mut self, now: SimTime, bytes: u64) {
        while self.seen.len() < self.at.len() && self.at[self.seen.len()] <= now {
            self.seen.push(bytes);
        }
    }

    /// Whether the warm-up is over (the window's first mark is seen).
    fn started(&self) -> bool {
        !self.seen.is_empty()
    }

    /// The next mark to stop at (the stream's end once all are seen).
    fn next(&self) -> SimTime {
        self.at[self.seen.len().min(self.at.len() - 1)]
    }

    /// The throughput over the window, its batches and their 95% interval.
    fn finish(mut self, now: SimTime, bytes: u64, last: SimTime) -> Throughput {
        self.observe(now, bytes);
        while self.seen.len() < self.at.len() {
            self.seen.push(bytes);
        }
        let (warm, end) = (self.at[0], self.at[BATCHES as usize]);
        let mut t = throughput(bytes - self.seen[0], warm, end, last);
        let batch_ns = end.saturating_duration_since(warm).as_ns() as f64 / BATCHES as f64;
        t.batch_gbps = self
            .seen
            .windows(2)
            .map(|b| (b[1] - b[0]) as f64 * 8.0 / batch_ns)
            .collect();
        let n = t.batch_gbps.len() as f64;
        let mean = t.batch_gbps.iter().sum::<f64>() / n;
        let var = t.batch_gbps.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let half = T_975_DF9 * (var / n).sqrt();
        t.ci95_gbps = Some(((mean - half).max(0.0), mean + half));
        t
    }
}

fn throughput(bytes: u64, from: SimTime, to: SimTime, last_progress: SimTime) -> Throughput {
    let ns = to.saturating_duration_since(from).as_ns() as f64;
    Throughput {
        gbps: if ns > 0.0 {
            bytes as f64 * 8.0 / ns
        } else {
            0.0
        },
        window_ns: ns,
        bytes,
        stalled_ns: to
            .saturating_duration_since(last_progress.max(from))
            .as_ns() as f64,
        batch_gbps: Vec::new(),
        ci95_gbps: None,
        retention_ci95: None,
        baseline_gbps: None,
        retention: None,
        model: None,
    }
}

/// Streams `write()`s of `message_bytes` from host 0 and `read()`s on host 1 until the
/// stream ends, checking every byte read against what was written; returns (bytes read in
/// all, steady-state throughput, the first corruption if any).
pub fn tcp(
    w: &mut World,
    sa: SocketId,
    sb: SocketId,
    plan: &Plan,
    d: SimDuration,
) -> Result<(u64, Throughput, Option<Outcome>), RunError> {
    let len = plan.workload.message_bytes.max(1) as usize;
    let src: Vec<u8> = (0..len).map(|i| (i as u64 ^ plan.seed) as u8).collect();
    let mut buf = vec![0u8; len.max(65536)];
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let t0 = w.now().max(w.app_ready(0));
    let (warm, end) = window(t0, d)?;
    let mtu = w.tcp_connection(sa).send_mss() as u32;
    start_cross_traffic(w, plan, t0, d, fabric::packet::TCP_PRIORITY, mtu)?;
    let (mut sent, mut got) = (0u64, 0u64);
    let mut marks = Marks::new(warm, end);
    let mut last = t0;
    // The transports' counters when the window opens, for the loss model.
    let probe = |w: &World| *w.tcp_connection(sa).counters();
    let mut at_warm = None;
    let model = |w: &World, at_warm: Option<Counters>| {
        let mss = w.tcp_connection(sa).send_mss() as u64;
        let s0 = at_warm.unwrap_or_default();
        LossModel::mathis((&s0, &probe(w)), mss, (end - warm).as_ps())
    };
    loop {
        let now = w.now();
        marks.observe(now, got);
        if at_warm.is_none() && marks.started() {
            at_warm = Some(probe(w));
        }
        if now >= end {
            break;
        }
        if now >= w.app_ready(0) && w.tcp_writable(sa) > 0 {
            let off = (sent % len as u64) as usize;
            sent += w.tcp_write(0, sa, &src[off..]) as u64;
            continue;
        }
        if now >= w.tcp_ready_at(sb) && w.tcp_bytes_readable(sb) > 0 {
            let n = w.tcp_read(1, sb, &mut buf);
            // The sender repeats `src`; byte k of the stream is src[k % len]. Compared a
            // run of `src` at a time (memcmp), then located byte by byte only on a mismatch.
            let mut bad = None;
            let mut i = 0;
            while i < n && bad.is_none() {
                let off = ((got + i as u64) % len as u64) as usize;
                let k = (len - off).min(n - i);
                if buf[i..i + k] != src[off..off + k] {
                    bad = (0..k).find(|&x| buf[i + x] != src[off + x]).map(|x| i + x);
                }
                i += k;
            }
            if let Some(i) = bad {
                let o = Outcome::Failed {
                    verb: "read".to_string(),
                    code: "corrupt".to_string(),
                    at: "host 1 (receiver)".to_string(),
                    why: format!(
                        "stream byte {} differs from the byte written",
                        got + i as u64
                    ),
                };
                let mut t = marks.finish(w.now(), got, last);
                t.model = Some(model(w, at_warm));
                return Ok((got, t, Some(o)));
            }
            got += n as u64;
            last = w.now();
            continue;
        }
        // Sleep until the next thing either application can do, or the next mark.
        let mut wait = marks.next();
        if w.tcp_writable(sa) > 0 && w.app_ready(0) > now {
            wait = wait.min(w.app_ready(0));
        }
        if w.tcp_bytes_readable(sb) > 0 && w.tcp_ready_at(sb) > now {
            wait = wait.min(w.tcp_ready_at(sb));
        }
        let st = w.run_until_cond(wait, &budget, |w| {
            w.tcp_writable(sa) > 0 || w.tcp_bytes_readable(sb) > 0
        })?;
        if st.events == 0 && w.now() == now {
            w.run_until(wait.max(now + SimDuration::from_ps(1)), &budget)?;
        }
    }
    let mut t = marks.finish(w.now(), got, last);
    t.model = Some(model(w, at_warm));
    Ok((got, t, None))
}

/// Keeps [`RDMA_WINDOW`] signaled WRITEs of `message_bytes` in flight from `a` to `b`'s buffer
/// until the stream ends; returns (bytes completed in all, steady-state throughput), or the
/// first failure.
///
/// Every WRITE carries the same message (`expected`, which the caller put in the source
/// buffer) to the same destination, so after each completion the destination must hold
/// exactly `expected`: it is compared then, byte for byte in place (stronger than a CRC, and
/// cheaper than copying it out), and a difference fails the stream as corrupt — "delivered" counts only messages
/// whose bytes arrived intact. `expected` is empty for a synthetic buffer (over
/// `Memory::MAX_REAL_LEN`), which checks every placed byte itself.
pub fn rdma(
    w: &mut World,
    a: Endpoint,
    (src, dst): ((u64, u32), (u64, u32)),
    expected: &[u8],
    plan: &Plan,
    d: SimDuration,
) -> Result<(u64, Throughput, Option<Outcome>), RunError> {
    let len = plan.workload.message_bytes;
    // The run's own budget (World::set_run_budget, from the plan) bounds every call.
    let budget = Budget::UNLIMITED;
    let t0 = w.now().max(w.app_ready(0));
    let (warm, end) = window(t0, d)?;
    let priority = w.roce_priority();
    start_cross_traffic(w, plan, t0, d, priority, plan.rdma.mtu_bytes as u32)?;
    let (mut posted, mut done) = (0u64, 0u64);
    let mut marks = Marks::new(warm, end);
    let mut last = t0;
    let probe = |w: &World| w.host(0).requester_counters(a.qpn).unwrap_or_default();
    let mut at_warm = None;
    loop {
        let now = w.now();
        marks.observe(now, done * len);
        if at_warm.is_none() && marks.started() {
            at_warm = Some(probe(w));
        }
        if now >= end {
            break;
        }
        if posted - done < RDMA_WINDOW && now >= w.app_ready(0) {
            let sge = vec![Sge {
                addr: src.0,
                length: len as u32,
                lkey: src.1,
            }];
            let wr = SendWr::write(posted, sge, dst.0, dst.1).signaled();
            if let Err(e) = w.post_send(0, a.qpn, &[wr]) {
                let o = Outcome::Failed {
                    verb: "ibv_post_send".to_string(),
                    code: format!("{:?}", e.errno()),
                    at: "host 0".to_string(),
                    why: e.to_string(),
                };
                return Ok((done * len, throughput(0, warm, end, t0), Some(o)));
            }
            posted += 1;
            continue;
        }
        let wcs = w
            .poll_cq(0, a.cq, RDMA_WINDOW as usize)
            .map_err(crate::world::WorldError::from)?;
        if let Some(wc) = wcs.iter().find(|c| c.status != WcStatus::Success) {
            let o = Outcome::Failed {
                verb: "ibv_poll_cq".to_string(),
                code: wc.status.const_name().to_string(),
                at: "host 0".to_string(),
                why: format!("a streamed WRITE completed with {}", wc.status.const_name()),
            };
            return Ok((done * len, throughput(0, warm, end, t0), Some(o)));
        }
        if !wcs.is_empty() {
            let intact = if expected.is_empty() {
                w.host(1)
                    .verbs
                    .memory()
                    .synthetic_stats(dst.0)
                    .is_none_or(|st| st.mismatched_bytes == 0)
            } else {
                w.host(1).verbs.memory().holds(dst.0, expected)
            };
            if !intact {
                let o = Outcome::Failed {
                    verb: "memory check".to_string(),
                    code: "corrupt".to_string(),
                    at: "host 1".to_string(),
                    why: format!(
                        "after WRITE {} completed, the destination buffer differs from the message sent",
                        done + 1
                    ),
                };
                return Ok((done * len, throughput(0, warm, end, t0), Some(o)));
            }
            done += wcs.len() as u64;
            last = w.now();
            continue;
        }
        let mut wait = marks.next();
        if w.app_ready(0) > now {
            wait = wait.min(w.app_ready(0));
        }
        let cq = a.cq;
        let st = w.run_until_cond(wait, &budget, |w| {
            w.host(0).verbs.cq(cq).is_some_and(|c| !c.is_empty())
        })?;
        if st.events == 0 && w.now() == now {
            w.run_until(wait.max(now + SimDuration::from_ps(1)), &budget)?;
        }
    }
    // A requester still waiting on its ACK timer when the window closes has been idle since
    // its last activity (or the window's start, if that came first).
    let pending = w
        .host(0)
        .requester_waiting_since(a.qpn)
        .map_or(0, |t| end.saturating_duration_since(t.max(warm)).as_ps());
    let mut t = marks.finish(w.now(), done * len, last);
    let model = if plan.rdma.retransmission == scenario::Retransmission::Selective {
        LossModel::selective_repeat
    } else {
        LossModel::go_back_n
    };
    t.model = Some(model(
        &at_warm.unwrap_or_default(),
        &probe(w),
        pending,
        (end - warm).as_ps(),
    ));
    Ok((done * len, t, None))
}
