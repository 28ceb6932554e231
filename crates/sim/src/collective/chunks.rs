//! A schedule cut into chunks, and which chunks may leave: the bookkeeping both executors
//! share. Each channel runs the whole schedule on its own slice of every part; each
//! transfer's bytes leave in chunks of the chunk size, and a chunk may leave once every
//! earlier landing of its bytes at the sender has happened (the schedule's dependencies,
//! per chunk, so the steps pipeline as NCCL's do).

use super::schedule::{Land, Schedule};

/// Where one chunk's bytes are.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Chunk {
    /// Its stream ([`Chunks::streams`]).
    pub stream: u32,
    /// The piece (part × channels + channel) it reads at the sender.
    pub src_piece: u32,
    /// The piece it lands in at the receiver.
    pub dst_piece: u32,
    /// Its index within the piece.
    pub k: u32,
    /// Byte offset at the sender (in the buffer).
    pub src_off: u64,
    /// Byte offset at the receiver (in the buffer, scratch slot or output).
    pub dst_off: u64,
    /// Bytes.
    pub len: u64,
}

/// One transfer of one channel: its chunks, in order.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Index of the transfer in the schedule.
    pub transfer: u32,
    /// Channel.
    pub channel: u32,
    /// Sender and receiver.
    pub src: u32,
    /// Receiver.
    pub dst: u32,
    /// Its chunk ids.
    pub chunks: std::ops::Range<u32>,
    /// What the receiver does with it.
    pub land: Land,
    /// Per source piece, the landings it waits for: (piece, count).
    required: Vec<(u32, u16)>,
}

/// The chunks of a schedule and the landings so far.
#[derive(Clone, Debug)]
pub struct Chunks {
    /// Every chunk.
    pub chunks: Vec<Chunk>,
    /// Every stream, by step (a sender's later steps come later).
    pub streams: Vec<Stream>,
    /// Chunks per piece (the longest piece's).
    kmax: u32,
    pieces: u32,
    /// Landings per (rank, piece, k).
    landed: Vec<u16>,
    /// (rank × pieces + piece, stream) for every stream of `rank` that reads `piece`, sorted:
    /// whom a landing there may let go.
    waiters: Vec<(u32, u32)>,
    /// Streams that may have a chunk to post (a landing or a freed slot since they last
    /// looked), and a flag per stream so each is listed once.
    woken: Vec<u32>,
    is_woken: Vec<bool>,
}

/// Bytes per element (float32, nccl-tests' default type).
pub const ELEM_BYTES: u64 = 4;

impl Chunks {
    /// Cuts `s` for buffers of `bytes` per rank (a multiple of 4 × ranks × channels is not
    /// needed: parts and channel slices are whole elements, the last ones longer).
    pub fn new(s: &Schedule, bytes: u64, channels: u32, chunk_bytes: u64) -> Chunks {
        let n = s.ranks;
        let elems = bytes / ELEM_BYTES;
        let chunk_elems = (chunk_bytes / ELEM_BYTES).max(1);
        let pieces = n * channels;
        // Piece (part p, channel c): the c-th channel slice of part p, in elements.
        let part = |p: u32| {
            let lo = elems * u64::from(p) / u64::from(n);
            let hi = elems * (u64::from(p) + 1) / u64::from(n);
            (lo, hi)
        };
        let piece = |p: u32, c: u32| {
            let (lo, hi) = part(p);
            let len = hi - lo;
            (
                lo + len * u64::from(c) / u64::from(channels),
                lo + len * (u64::from(c) + 1) / u64::from(channels),
            )
        };
        let mut kmax = 1;
        for p in 0..n {
            for c in 0..channels {
                let (lo, hi) = piece(p, c);
                kmax = kmax.max((hi - lo).div_ceil(chunk_elems) as u32);
            }
        }
        let landings = s.landings();
        let mut chunks = Vec::new();
        let mut streams = Vec::new();
        for (ti, t) in s.transfers.iter().enumerate() {
            for c in 0..channels {
                let first = chunks.len() as u32;
                let mut required = Vec::new();
                for (sp, dp) in t.src_parts.clone().zip(t.dst_parts.clone()) {
                    let need = landings.before(t.src, sp, t.step) as u16;
                    required.push((sp * channels + c, need));
                    let (slo, shi) = piece(sp, c);
                    let (dlo, _) = piece(dp, c);
                    let mut k = 0;
                    let mut e = slo;
                    while e < shi {
                        let len = chunk_elems.min(shi - e);
                        chunks.push(Chunk {
                            stream: streams.len() as u32,
                            src_piece: sp * channels + c,
                            dst_piece: dp * channels + c,
                            k,
                            src_off: e * ELEM_BYTES,
                            dst_off: (dlo + (e - slo)) * ELEM_BYTES,
                            len: len * ELEM_BYTES,
                        });
                        e += len;
                        k += 1;
                    }
                }
                streams.push(Stream {
                    transfer: ti as u32,
                    channel: c,
                    src: t.src,
                    dst: t.dst,
                    chunks: first..chunks.len() as u32,
                    land: t.land,
                    required,
                });
            }
        }
        let mut waiters: Vec<(u32, u32)> = streams
            .iter()
            .enumerate()
            .flat_map(|(i, st)| {
                st.required
                    .iter()
                    .map(move |&(piece, _)| (st.src * pieces + piece, i as u32))
            })
            .collect();
        waiters.sort_unstable();
        Chunks {
            woken: (0..streams.len() as u32).collect(),
            is_woken: vec![true; streams.len()],
            chunks,
            streams,
            kmax,
            pieces,
            landed: vec![0; (n * pieces * kmax) as usize],
            waiters,
        }
    }

    fn at(&self, rank: u32, piece: u32, k: u32) -> usize {
        ((rank * self.pieces + piece) * self.kmax + k) as usize
    }

    /// Whether chunk `id` may leave: its bytes at the sender have every landing the schedule
    /// puts before its step.
    pub fn ready(&self, id: u32) -> bool {
        let c = &self.chunks[id as usize];
        let s = &self.streams[c.stream as usize];
        let need = s
            .required
            .iter()
            .find(|(p, _)| *p == c.src_piece)
            .map_or(0, |(_, n)| *n);
        need == 0 || self.landed[self.at(s.src, c.src_piece, c.k)] >= need
    }

    /// Records that chunk `id` has landed (and been reduced, for a reduction), waking the
    /// streams its bytes may let go.
    pub fn land(&mut self, id: u32) {
        let c = self.chunks[id as usize];
        let s = &self.streams[c.stream as usize];
        if s.land == Land::Output {
            return;
        }
        let (dst, piece) = (s.dst, c.dst_piece);
        let i = self.at(dst, piece, c.k);
        self.landed[i] += 1;
        let key = dst * self.pieces + piece;
        let from = self.waiters.partition_point(|&(k, _)| k < key);
        for j in from..self.waiters.len() {
            let (k, stream) = self.waiters[j];
            if k != key {
                break;
            }
            self.wake(stream);
        }
    }

    /// Marks `stream` as maybe having a chunk to post (one of its chunks in flight finished).
    pub fn wake(&mut self, stream: u32) {
        if !std::mem::replace(&mut self.is_woken[stream as usize], true) {
            self.woken.push(stream);
        }
    }

    /// The streams woken since the last call (at first, all), by sender then stream: the
    /// order a scan of every sender's streams would post them in, so the run does not depend
    /// on the order of the wake-ups. Only these can have a chunk that may leave: a chunk's
    /// readiness changes only by a landing, its slot only by a completion.
    pub fn take_woken(&mut self) -> Vec<u32> {
        let mut w = std::mem::take(&mut self.woken);
        for &s in &w {
            self.is_woken[s as usize] = false;
        }
        w.sort_unstable_by_key(|&s| (self.streams[s as usize].src, s));
        w
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule::{Algorithm, Op};
    use super::*;

    #[test]
    fn chunks_cover_every_transfer_once_and_wait_for_their_inputs() {
        let s = Schedule::new(Op::AllReduce, Algorithm::Ring, 4).unwrap();
        // 4 ranks × 2 channels: 8 pieces of 1 KiB; 256 B chunks: 4 per piece.
        let mut c = Chunks::new(&s, 8192, 2, 256);
        let bytes: u64 = c.chunks.iter().map(|x| x.len).sum();
        assert_eq!(bytes, 6 * 4 * 2048, "2(n−1) transfers of a part per rank");
        // Step 0 may leave at once; rank 1's step-1 chunk waits for rank 0's step-0 one.
        let s1 = c
            .streams
            .iter()
            .position(|x| x.src == 1 && s.transfers[x.transfer as usize].step == 1)
            .unwrap();
        let first = c.streams[s1].chunks.start;
        assert!(!c.ready(first));
        let feeder = c
            .chunks
            .iter()
            .position(|x| {
                let st = &c.streams[x.stream as usize];
                st.src == 0
                    && st.channel == c.streams[s1].channel
                    && s.transfers[st.transfer as usize].step == 0
                    && x.k == 0
            })
            .unwrap() as u32;
        assert!(c.ready(feeder));
        // At first every stream is woken, by sender then stream.
        let all = c.take_woken();
        assert_eq!(all.len(), c.streams.len());
        assert!(
            all.windows(2).all(
                |w| (c.streams[w[0] as usize].src, w[0]) < (c.streams[w[1] as usize].src, w[1])
            )
        );
        assert!(c.take_woken().is_empty(), "a stream is listed once");
        // The landing wakes the streams of its receiver that read its piece, the waiting one
        // among them, and no stream of another sender.
        c.land(feeder);
        assert!(c.ready(first));
        let woken = c.take_woken();
        assert!(woken.contains(&(s1 as u32)), "{woken:?}");
        assert!(
            woken.iter().all(|&w| c.streams[w as usize].src == 1),
            "{woken:?}"
        );
        // A freed slot wakes its stream, once however often it is said.
        c.wake(3);
        c.wake(3);
        assert_eq!(c.take_woken(), vec![3]);
    }
}
