//! Stream mode: back-to-back messages for `workload.stream_us`, throughput measured over the
//! steady-state window that follows a warm-up, and (when the plan loses frames) retention:
//! the same run's throughput divided by a loss-free run's.
//!
//! The window is at least 1 ms of simulated time (issue 5: throughput rows come from at least
//! 1 ms of steady state); the warm-up is a quarter of the stream, at most 500 µs, so slow start
//! and the first round trips are not averaged in.

use super::{Outcome, RunError, Throughput};
use crate::world::{Endpoint, SocketId, World};
use engine::Budget;
use scenario::Plan;
use units::{SimDuration, SimTime};
use verbs::{
    WcStatus,
    wr::{SendWr, Sge},
};

/// Signaled WRITEs kept in flight on the RDMA stream: enough to cover the bandwidth-delay
/// product of a data-centre path many times over (8 × 64 KiB = 512 KiB).
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
        baseline_gbps: None,
        retention: None,
    }
}

/// Streams `write()`s of `message_bytes` from host 0 and `read()`s on host 1 until the
/// stream ends; returns (bytes read in all, steady-state throughput).
pub fn tcp(
    w: &mut World,
    sa: SocketId,
    sb: SocketId,
    plan: &Plan,
    d: SimDuration,
) -> Result<(u64, Throughput), RunError> {
    let len = plan.workload.message_bytes.max(1) as usize;
    let src: Vec<u8> = (0..len).map(|i| (i as u64 ^ plan.seed) as u8).collect();
    let mut buf = vec![0u8; len.max(65536)];
    let budget = Budget::default();
    let t0 = w.now().max(w.app_ready(0));
    let (warm, end) = window(t0, d)?;
    let (mut sent, mut got) = (0u64, 0u64);
    let mut at_warm = None;
    let mut last = t0;
    loop {
        let now = w.now();
        if at_warm.is_none() && now >= warm {
            at_warm = Some((got, now));
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
            got += w.tcp_read(1, sb, &mut buf) as u64;
            last = w.now();
            continue;
        }
        // Sleep until the next thing either application can do, or the next milestone.
        let mut wait = if at_warm.is_none() { warm } else { end };
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
    let (g0, t_warm) = at_warm.unwrap_or((0, warm));
    Ok((got, throughput(got - g0, t_warm, w.now(), last)))
}

/// Keeps [`RDMA_WINDOW`] signaled WRITEs of `message_bytes` in flight from `a` to `b`'s buffer
/// until the stream ends; returns (bytes completed in all, steady-state throughput), or the
/// first failure.
#[allow(clippy::too_many_arguments)]
pub fn rdma(
    w: &mut World,
    a: Endpoint,
    src: (u64, u32),
    dst: (u64, u32),
    plan: &Plan,
    d: SimDuration,
) -> Result<(u64, Throughput, Option<Outcome>), RunError> {
    let len = plan.workload.message_bytes;
    let budget = Budget::default();
    let t0 = w.now().max(w.app_ready(0));
    let (warm, end) = window(t0, d)?;
    let (mut posted, mut done) = (0u64, 0u64);
    let mut at_warm = None;
    let mut last = t0;
    loop {
        let now = w.now();
        if at_warm.is_none() && now >= warm {
            at_warm = Some((done * len, now));
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
                code: format!("{:?}", wc.status),
                at: "host 0".to_string(),
                why: format!("a streamed WRITE completed with {:?}", wc.status),
            };
            return Ok((done * len, throughput(0, warm, end, t0), Some(o)));
        }
        done += wcs.len() as u64;
        if !wcs.is_empty() {
            last = w.now();
            continue;
        }
        let mut wait = if at_warm.is_none() { warm } else { end };
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
    let (b0, t_warm) = at_warm.unwrap_or((0, warm));
    Ok((
        done * len,
        throughput(done * len - b0, t_warm, w.now(), last),
        None,
    ))
}
