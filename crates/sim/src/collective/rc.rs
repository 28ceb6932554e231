//! The RC executor: NCCL's IB transport on the world's RC QPs. Every connection (a pair of
//! ranks on one channel) is `qps` RC QP pairs; a chunk is split over them, each piece an RDMA
//! WRITE of its bytes followed by an RDMA WRITE with immediate of its last element, whose
//! immediate is the chunk's id, so the receiver learns of it from the receive CQE (a
//! zero-length receive WQE is consumed per WRITE with immediate, as NCCL posts them).
//! Reductions are charged to the receiver's cores, one per channel, before the chunk counts
//! as landed.

use super::chunks::{Chunks, ELEM_BYTES};
use super::report::Snapshot;
use super::schedule::{Land, Schedule};
use super::verify::value;
use super::{Config, DEPTH, MAX_CHECKED_BYTES, POLL, SizeRow};
use crate::world::{Endpoint, RcOptions, World, WorldError};
use engine::Budget;
use scenario::Plan;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use units::{SimDuration, SimTime};
use verbs::wr::{RecvWr, SendWr, Sge};
use verbs::{AccessFlags, WcOpcode};

/// Marks the id of a chunk's data WRITE (its WRITE with immediate has the bare chunk id).
const DATA_WR: u64 = 1 << 32;

/// Receive WQEs kept posted on every QP (refilled when half are used).
const RECV_DEPTH: u32 = 512;

/// One side's keys on one QP's PD.
#[derive(Clone, Copy)]
struct Keys {
    data_lkey: u32,
    data_rkey: u32,
    scratch_rkey: u32,
}

struct Side {
    ep: Endpoint,
    keys: Keys,
    recv_posted: u32,
}

/// Per rank: its buffers.
#[derive(Clone, Copy)]
struct Bufs {
    data: u64,
    scratch: u64,
    /// Bytes of one scratch slot (the buffer's size).
    stride: u64,
}

fn err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Setup(e.to_string())
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
    let bytes = bytes / ELEM_BYTES * ELEM_BYTES;
    let slots = u64::from(s.scratch_slots.max(1));
    let real = bytes * (1 + slots) * u64::from(n) <= MAX_CHECKED_BYTES;
    let mut ck = Chunks::new(s, bytes, cfg.channels, cfg.chunk_bytes);
    // Buffers.
    let mut bufs = Vec::new();
    for r in 0..n {
        let mem = w.verbs(r).memory_mut();
        let (data, scratch) = if real {
            (mem.alloc(bytes), mem.alloc(bytes * slots))
        } else {
            (
                mem.alloc_synthetic(bytes, 1),
                mem.alloc_synthetic(bytes * slots, 1),
            )
        };
        let b = Bufs {
            data: data.map_err(err)?,
            scratch: scratch.map_err(err)?,
            stride: bytes,
        };
        if real {
            let mut v = Vec::with_capacity(bytes as usize);
            for i in 0..bytes / ELEM_BYTES {
                v.extend_from_slice(&value(r, i).to_le_bytes());
            }
            w.verbs(r).memory_mut().write(b.data, &v).map_err(err)?;
            if cfg.op == super::Op::AllToAll {
                // A rank's own block is a local copy into its output, not a transfer.
                let per = (bytes / u64::from(n)) as usize;
                let own = &v[r as usize * per..(r as usize + 1) * per];
                w.verbs(r)
                    .memory_mut()
                    .write(b.scratch + r as u64 * per as u64, own)
                    .map_err(err)?;
            }
        }
        bufs.push(b);
    }
    // Connections: one per unordered pair of ranks per channel, `qps` QP pairs each.
    let o = RcOptions {
        mtu: plan.rdma_mtu(),
        timeout: plan.rdma.timeout,
        retry_cnt: plan.rdma.retry_cnt,
        ..RcOptions::default()
    };
    let mut conns: BTreeMap<(u32, u32, u32), usize> = BTreeMap::new();
    let mut sides: Vec<[Vec<Side>; 2]> = Vec::new();
    let access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    for st in &ck.streams {
        let key = (st.channel, st.src.min(st.dst), st.src.max(st.dst));
        if conns.contains_key(&key) {
            continue;
        }
        let mut pair: [Vec<Side>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..cfg.qps {
            let (a, b) = w.connect_rc(key.1, key.2, &o)?;
            for (i, ep) in [a, b].into_iter().enumerate() {
                let bf = bufs[ep.host.index()];
                let d = w
                    .reg_mr(ep.host, ep.pd, bf.data, bytes, access)
                    .map_err(err)?;
                let sc = w
                    .reg_mr(ep.host, ep.pd, bf.scratch, bytes * slots, access)
                    .map_err(err)?;
                let wrs: Vec<RecvWr> = (0..RECV_DEPTH).map(|_| RecvWr::new(0, vec![])).collect();
                w.post_recv(ep.host, ep.qpn, &wrs).map_err(err)?;
                pair[i].push(Side {
                    ep,
                    keys: Keys {
                        data_lkey: d.lkey,
                        data_rkey: d.rkey,
                        scratch_rkey: sc.rkey,
                    },
                    recv_posted: RECV_DEPTH,
                });
            }
        }
        conns.insert(key, sides.len());
        sides.push(pair);
    }
    // Every rank starts once every host's setup is done (a barrier).
    let budget = Budget::default();
    let ready = (0..n).map(|h| w.app_ready(h)).max().unwrap_or(w.now());
    w.run_until(ready.max(w.now()), &budget)?;
    let snap = Snapshot::take(w);

    // Per stream: connection, which side sends, next chunk, chunks in flight.
    let conn_of: Vec<(usize, usize)> = ck
        .streams
        .iter()
        .map(|st| {
            let key = (st.channel, st.src.min(st.dst), st.src.max(st.dst));
            (conns[&key], usize::from(st.src != key.1))
        })
        .collect();
    let mut next: Vec<u32> = ck.streams.iter().map(|st| st.chunks.start).collect();
    let mut inflight = vec![0u32; ck.streams.len()];
    let mut pieces_landed = vec![0u32; ck.chunks.len()];
    let mut pieces_sent = vec![0u32; ck.chunks.len()];
    let mut reductions: BinaryHeap<Reverse<(SimTime, u32)>> = BinaryHeap::new();
    let total = ck.chunks.len();
    let (mut landed, mut completed) = (0usize, 0usize);
    let mut end = w.now();
    let cores = w.host(0).cpu().cores();
    let mut t = w.now();
    loop {
        // Post what may leave.
        for si in ck.take_woken() {
            let si = si as usize;
            while next[si] < ck.streams[si].chunks.end && inflight[si] < DEPTH && ck.ready(next[si])
            {
                let id = next[si];
                post_chunk(w, &ck, id, &sides[conn_of[si].0], conn_of[si].1, &bufs)?;
                next[si] += 1;
                inflight[si] += 1;
            }
        }
        if landed == total && completed == total {
            break;
        }
        t += POLL;
        let st = w.run_until(t, &budget)?;
        // Completions.
        for pair in sides.iter_mut() {
            for side in pair.iter_mut().flatten() {
                let h = side.ep.host;
                if w.host(h).verbs.cq(side.ep.cq).is_none_or(|q| q.is_empty()) {
                    continue;
                }
                let mut used = 0;
                for wc in w.poll_cq(h, side.ep.cq, 64).map_err(err)? {
                    if !wc.status.is_success() {
                        return Err(WorldError::Setup(format!(
                            "collective: host {h} completion {:?} (wr {}, opcode {:?}, qp {:?})",
                            wc.status, wc.wr_id, wc.opcode, wc.qp_num
                        )));
                    }
                    if wc.opcode == Some(WcOpcode::RecvRdmaWithImm) {
                        used += 1;
                        let id = wc.imm_data.unwrap_or(0);
                        let c = id as usize;
                        pieces_landed[c] += 1;
                        if pieces_landed[c] < pieces_of(&ck, id, cfg.qps) {
                            continue;
                        }
                        let stream = &ck.streams[ck.chunks[c].stream as usize];
                        if let Land::Reduce { .. } = stream.land {
                            let kib = ck.chunks[c].len.div_ceil(1024);
                            let core = (2 + stream.channel) as u16 % cores;
                            let done = w.run_app_work(
                                h,
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
                    } else if wc.wr_id & DATA_WR == 0 {
                        let id = wc.wr_id as usize;
                        pieces_sent[id] += 1;
                        if pieces_sent[id] == pieces_of(&ck, id as u32, cfg.qps) {
                            completed += 1;
                            let stream = ck.chunks[id].stream;
                            inflight[stream as usize] -= 1;
                            ck.wake(stream);
                        }
                    }
                }
                side.recv_posted -= used;
                if side.recv_posted < RECV_DEPTH / 2 {
                    let more = RECV_DEPTH - side.recv_posted;
                    let wrs: Vec<RecvWr> = (0..more).map(|_| RecvWr::new(0, vec![])).collect();
                    w.post_recv(h, side.ep.qpn, &wrs).map_err(err)?;
                    side.recv_posted = RECV_DEPTH;
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
            let dst = stream.dst;
            if real && let Land::Reduce { slot } = stream.land {
                let b = bufs[dst as usize];
                let mem = w.verbs(dst).memory_mut();
                let inc = mem
                    .read_vec(b.scratch + u64::from(slot) * bytes + c.dst_off, c.len)
                    .map_err(err)?;
                let mut acc = mem.read_vec(b.data + c.dst_off, c.len).map_err(err)?;
                for (a, x) in acc.chunks_exact_mut(4).zip(inc.chunks_exact(4)) {
                    let sum = f32::from_le_bytes([a[0], a[1], a[2], a[3]])
                        + f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
                    a.copy_from_slice(&sum.to_le_bytes());
                }
                mem.write(b.data + c.dst_off, &acc).map_err(err)?;
            }
            ck.land(id);
            landed += 1;
            end = at.max(end);
        }
        if st.events == 0 && w.pending_events() == 0 && reductions.is_empty() {
            return Err(WorldError::Setup(format!(
                "collective stalled: {landed} of {total} chunks landed, {completed} sends completed"
            )));
        }
    }
    let retx: u64 = sides
        .iter()
        .flat_map(|p| p.iter().flatten())
        .filter_map(|s| w.host(s.ep.host).requester_counters(s.ep.qpn))
        .map(|c| c.packets_retransmitted)
        .sum();
    let mut row = snap.finish(w, topo, plan, cfg, bytes, end, retx);
    if real {
        let (wrong, crc) = check(w, cfg, s, &bufs, bytes)?;
        row.wrong = Some(wrong);
        row.crc32 = Some(crc);
    }
    Ok(row)
}

/// The QP pieces chunk `id` is split into: `qps`, or fewer when it has fewer elements.
fn pieces_of(ck: &Chunks, id: u32, qps: u32) -> u32 {
    let elems = ck.chunks[id as usize].len / ELEM_BYTES;
    (qps as u64).min(elems).max(1) as u32
}

fn post_chunk(
    w: &mut World,
    ck: &Chunks,
    id: u32,
    pair: &[Vec<Side>; 2],
    me: usize,
    bufs: &[Bufs],
) -> Result<(), WorldError> {
    let c = ck.chunks[id as usize];
    let st = &ck.streams[c.stream as usize];
    let src = bufs[st.src as usize];
    let dst = bufs[st.dst as usize];
    let (base, scratch) = match st.land {
        Land::Data => (dst.data, false),
        Land::Output => (dst.scratch, true),
        Land::Reduce { slot } => (dst.scratch + u64::from(slot) * dst.stride, true),
    };
    let qps = pair[me].len() as u32;
    let pieces = pieces_of(ck, id, qps);
    let elems = c.len / ELEM_BYTES;
    for q in 0..pieces {
        let lo = elems * u64::from(q) / u64::from(pieces) * ELEM_BYTES;
        let hi = elems * (u64::from(q) + 1) / u64::from(pieces) * ELEM_BYTES;
        let mine = &pair[me][q as usize];
        let peer = &pair[1 - me][q as usize];
        let rkey = if scratch {
            peer.keys.scratch_rkey
        } else {
            peer.keys.data_rkey
        };
        // The piece's bytes by a WRITE, then its last element by a WRITE with immediate: RC
        // places them in order, so the receive CQE means the whole piece is there (NCCL's IB
        // transport also follows its data WRITEs with a WRITE with immediate). The WRITE's
        // completion carries DATA_WR in its id and is not counted.
        let sge = |from: u64, to: u64| {
            vec![Sge {
                addr: src.data + c.src_off + from,
                length: (to - from) as u32,
                lkey: mine.keys.data_lkey,
            }]
        };
        let last = hi - ELEM_BYTES;
        let mut wrs = Vec::with_capacity(2);
        if last > lo {
            wrs.push(
                SendWr::write(
                    DATA_WR | u64::from(id),
                    sge(lo, last),
                    base + c.dst_off + lo,
                    rkey,
                )
                .signaled(),
            );
        }
        wrs.push(
            SendWr::write_with_imm(
                u64::from(id),
                sge(last, hi),
                base + c.dst_off + last,
                rkey,
                id,
            )
            .signaled(),
        );
        w.post_send(mine.ep.host, mine.ep.qpn, &wrs).map_err(err)?;
    }
    Ok(())
}

/// Compares every rank's result with [`super::verify::expected`]; returns the wrong elements
/// and the CRC-32 of rank 0's result.
fn check(
    w: &mut World,
    cfg: &Config,
    s: &Schedule,
    bufs: &[Bufs],
    bytes: u64,
) -> Result<(u64, u32), WorldError> {
    let mut wrong = 0;
    let mut crc = 0;
    for r in 0..s.ranks {
        let (off, want) = super::verify::expected(cfg.op, s.ranks, r, bytes);
        let b = bufs[r as usize];
        let base = if cfg.op == super::Op::AllToAll {
            b.scratch
        } else {
            b.data
        };
        let got = w
            .verbs(r)
            .memory()
            .read_vec(base + off, want.len() as u64)
            .map_err(err)?;
        wrong += super::verify::wrong_elements(&got, &want);
        if r == 0 {
            crc = crc32fast::hash(&got);
        }
    }
    Ok((wrong, crc))
}
