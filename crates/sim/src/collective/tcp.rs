//! The socket executor: NCCL's socket transport on the world's kernel TCP path. Every
//! connection (a pair of ranks on one channel) is `qps` TCP connections; a chunk is split over
//! them and each piece is written and read in order (the stream carries no header: both sides
//! know the schedule, so the reader knows which chunk its next bytes belong to). One
//! application thread per host makes every `write()` and `read()` call; reductions are charged
//! as the RC executor charges them. A sender keeps [`DEPTH`] chunks of a step unread by the
//! receiver at most.

use super::chunks::{Chunks, ELEM_BYTES};
use super::report::Snapshot;
use super::schedule::{Land, Schedule};
use super::verify::value;
use super::{Config, DEPTH, MAX_CHECKED_BYTES, POLL, SizeRow};
use crate::world::{SocketId, World, WorldError};
use engine::Budget;
use scenario::Plan;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use units::{SimDuration, SimTime};

/// Most bytes one `write()` or `read()` call moves.
// assumption: 256 KiB, a large application buffer; the send buffer bounds what is accepted.
const IO_BYTES: u64 = 256 << 10;

/// One direction of one TCP connection: the pieces queued on it, in order.
struct Dir {
    src: u32,
    dst: u32,
    tx: SocketId,
    rx: SocketId,
    /// (chunk, byte offset within the chunk, bytes).
    queue: VecDeque<(u32, u64, u64)>,
    /// Of the queue, entries fully written, and bytes written of the next.
    written: (usize, u64),
    /// Bytes read of the head entry.
    read: u64,
}

/// Runs one size.
pub(super) fn run(
    w: &mut World,
    topo: &fabric::Topology,
    plan: &Plan,
    cfg: &Config,
    s: &Schedule,
    bytes: u64,
) -> Result<SizeRow, WorldError> {
    let n = s.ranks;
    let slots = u64::from(s.scratch_slots.max(1));
    let real = bytes * (1 + slots) * u64::from(n) <= MAX_CHECKED_BYTES;
    let mut ck = Chunks::new(s, bytes, cfg.channels, cfg.chunk_bytes);
    // Real buffers live here (the socket path copies bytes, it needs no registration).
    let mut data: Vec<Vec<u8>> = Vec::new();
    let mut scratch: Vec<Vec<u8>> = Vec::new();
    if real {
        for r in 0..n {
            let mut v = Vec::with_capacity(bytes as usize);
            for i in 0..bytes / ELEM_BYTES {
                v.extend_from_slice(&value(r, i).to_le_bytes());
            }
            let mut out = vec![0; (bytes * slots) as usize];
            if cfg.op == super::Op::AllToAll {
                // A rank's own block is a local copy into its output, not a transfer.
                let per = (bytes / u64::from(n)) as usize;
                let at = r as usize * per;
                out[at..at + per].copy_from_slice(&v[at..at + per]);
            }
            data.push(v);
            scratch.push(out);
        }
    }
    let opts = crate::report::run::tcp_options(plan);
    let mut conns: BTreeMap<(u32, u32, u32), Vec<[usize; 2]>> = BTreeMap::new();
    let mut dirs: Vec<Dir> = Vec::new();
    for st in &ck.streams {
        let key = (st.channel, st.src.min(st.dst), st.src.max(st.dst));
        if conns.contains_key(&key) {
            continue;
        }
        let mut v = Vec::new();
        for _ in 0..cfg.qps {
            let (a, b) = w.tcp_connect(key.1, key.2, &opts)?;
            let mk = |src, dst, tx, rx| Dir {
                src,
                dst,
                tx,
                rx,
                queue: VecDeque::new(),
                written: (0, 0),
                read: 0,
            };
            v.push([dirs.len(), dirs.len() + 1]);
            dirs.push(mk(key.1, key.2, a, b));
            dirs.push(mk(key.2, key.1, b, a));
        }
        conns.insert(key, v);
    }
    let budget = Budget::default();
    // Every rank starts once every host's setup is done (a barrier).
    let ready = (0..n).map(|h| w.app_ready(h)).max().unwrap_or(w.now());
    w.run_until(ready.max(w.now()), &budget)?;
    let snap = Snapshot::take(w);

    let dir_of: Vec<Vec<usize>> = ck
        .streams
        .iter()
        .map(|st| {
            let key = (st.channel, st.src.min(st.dst), st.src.max(st.dst));
            let side = usize::from(st.src != key.1);
            conns[&key].iter().map(|p| p[side]).collect()
        })
        .collect();
    let mut next: Vec<u32> = ck.streams.iter().map(|st| st.chunks.start).collect();
    let mut unread = vec![0u32; ck.streams.len()];
    let mut pieces_landed = vec![0u32; ck.chunks.len()];
    let mut reductions: BinaryHeap<Reverse<(SimTime, u32)>> = BinaryHeap::new();
    let total = ck.chunks.len();
    let mut landed = 0usize;
    let mut end = w.now();
    let cores = w.host(0).cpu().cores();
    let zeros = vec![0u8; IO_BYTES as usize];
    let mut buf = vec![0u8; IO_BYTES as usize];
    let mut t = w.now();
    loop {
        for si in ck.take_woken() {
            let si = si as usize;
            while next[si] < ck.streams[si].chunks.end && unread[si] < DEPTH && ck.ready(next[si]) {
                let id = next[si];
                let len = ck.chunks[id as usize].len;
                let elems = len / ELEM_BYTES;
                let ds = &dir_of[si];
                let pieces = (ds.len() as u64).min(elems).max(1);
                for q in 0..pieces {
                    let lo = elems * q / pieces * ELEM_BYTES;
                    let hi = elems * (q + 1) / pieces * ELEM_BYTES;
                    dirs[ds[q as usize]].queue.push_back((id, lo, hi - lo));
                }
                next[si] += 1;
                unread[si] += 1;
            }
        }
        if landed == total {
            break;
        }
        t += POLL;
        let st = w.run_until(t, &budget)?;
        let horizon = t + POLL;
        for d in dirs.iter_mut() {
            // Write what is queued, while the sender's thread has time this tick.
            while d.written.0 < d.queue.len()
                && w.app_ready(d.src) < horizon
                && w.tcp_writable(d.tx) > 0
            {
                let (id, off, len) = d.queue[d.written.0];
                let c = ck.chunks[id as usize];
                let from = d.written.1;
                let take = (len - from).min(IO_BYTES);
                let src: &[u8] = if real {
                    let a = (c.src_off + off + from) as usize;
                    &data[d.src as usize][a..a + take as usize]
                } else {
                    &zeros[..take as usize]
                };
                let put = w.tcp_write(d.src, d.tx, src) as u64;
                if put == 0 {
                    break;
                }
                d.written.1 += put;
                if d.written.1 == len {
                    d.written = (d.written.0 + 1, 0);
                }
            }
            // Read what arrived, in queue order.
            while d.written.0 > 0 || d.written.1 > 0 {
                if w.app_ready(d.dst) >= horizon || w.tcp_readable(d.rx) == 0 {
                    break;
                }
                let Some(&(id, off, len)) = d.queue.front() else {
                    break;
                };
                let want = (len - d.read).min(IO_BYTES) as usize;
                let got = w.tcp_read(d.dst, d.rx, &mut buf[..want]) as u64;
                if got == 0 {
                    break;
                }
                if real {
                    let c = ck.chunks[id as usize];
                    let stl = &ck.streams[c.stream as usize];
                    let at = (c.dst_off + off + d.read) as usize;
                    let out = match stl.land {
                        Land::Data => &mut data[d.dst as usize][at..at + got as usize],
                        Land::Output => &mut scratch[d.dst as usize][at..at + got as usize],
                        Land::Reduce { slot } => {
                            let a = at + (u64::from(slot) * bytes) as usize;
                            &mut scratch[d.dst as usize][a..a + got as usize]
                        }
                    };
                    out.copy_from_slice(&buf[..got as usize]);
                }
                d.read += got;
                if d.read < len {
                    continue;
                }
                d.queue.pop_front();
                d.read = 0;
                d.written.0 = d.written.0.saturating_sub(1);
                let c = id as usize;
                pieces_landed[c] += 1;
                let elems = ck.chunks[c].len / ELEM_BYTES;
                let qps = cfg.qps as u64;
                if u64::from(pieces_landed[c]) < qps.min(elems).max(1) {
                    continue;
                }
                let sid = ck.chunks[c].stream;
                let (land, channel) = (
                    ck.streams[sid as usize].land,
                    ck.streams[sid as usize].channel,
                );
                unread[sid as usize] -= 1;
                ck.wake(sid);
                if let Land::Reduce { .. } = land {
                    let kib = ck.chunks[c].len.div_ceil(1024);
                    let core = (2 + channel) as u16 % cores;
                    let done = w.run_app_work(
                        d.dst,
                        core,
                        SimDuration::from_ps(kib * cfg.reduce_ps_per_kib),
                        engine::Stage::ReduceSum,
                    );
                    reductions.push(Reverse((done, id)));
                } else {
                    ck.land(id);
                    landed += 1;
                    end = t;
                }
            }
        }
        while let Some(&Reverse((at, id))) = reductions.peek() {
            if at > t {
                break;
            }
            reductions.pop();
            let c = ck.chunks[id as usize];
            let stream = &ck.streams[c.stream as usize];
            let dst = stream.dst as usize;
            if real && let Land::Reduce { slot } = stream.land {
                let a = (u64::from(slot) * bytes + c.dst_off) as usize;
                let b = c.dst_off as usize;
                for e in (0..c.len as usize).step_by(4) {
                    let x = &scratch[dst][a + e..a + e + 4];
                    let y = &data[dst][b + e..b + e + 4];
                    let sum = f32::from_le_bytes([x[0], x[1], x[2], x[3]])
                        + f32::from_le_bytes([y[0], y[1], y[2], y[3]]);
                    data[dst][b + e..b + e + 4].copy_from_slice(&sum.to_le_bytes());
                }
            }
            ck.land(id);
            landed += 1;
            end = at.max(end);
        }
        if st.events == 0
            && w.pending_events() == 0
            && reductions.is_empty()
            && (0..n).all(|h| w.app_ready(h) <= t)
        {
            {
                return Err(WorldError::Setup(format!(
                    "collective stalled: {landed} of {total} chunks landed"
                )));
            }
        }
    }
    let retx: u64 = dirs
        .iter()
        .map(|d| w.tcp_connection(d.tx).counters().retransmitted_segments)
        .sum();
    let mut row = snap.finish(w, topo, plan, cfg, bytes, end, retx);
    if real {
        let mut wrong = 0;
        for r in 0..n {
            let (off, want) = super::verify::expected(cfg.op, n, r, bytes);
            let res = if cfg.op == super::Op::AllToAll {
                &scratch[r as usize]
            } else {
                &data[r as usize]
            };
            let got = &res[off as usize..off as usize + want.len()];
            wrong += super::verify::wrong_elements(got, &want);
            if r == 0 {
                row.crc32 = Some(crc32fast::hash(got));
            }
        }
        row.wrong = Some(wrong);
    }
    Ok(row)
}
