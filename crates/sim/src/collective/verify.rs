//! What a collective's result must be: every rank's input is small integers as float32, so
//! the sums are exact in any order and the expected result is computed here in integers,
//! independently of the schedule that produced it.

use super::Op;
use super::chunks::ELEM_BYTES;

/// Rank `r`'s input at element `i`.
pub fn value(r: u32, i: u64) -> f32 {
    int_value(r, i) as f32
}

fn int_value(r: u32, i: u64) -> u32 {
    ((u64::from(r) * 7 + i * 13) % 61) as u32
}

/// The defined part of rank `rank`'s result for `op` on `n` ranks of `bytes` (a multiple of
/// 4·n): its byte offset in the result buffer and the bytes it must hold. Reduce-scatter
/// defines part `rank` only; the others the whole buffer.
pub fn expected(op: Op, n: u32, rank: u32, bytes: u64) -> (u64, Vec<u8>) {
    let elems = bytes / ELEM_BYTES;
    let per = elems / u64::from(n);
    let sum = |i: u64| (0..n).map(|r| int_value(r, i)).sum::<u32>() as f32;
    let (lo, hi) = match op {
        Op::ReduceScatter => (u64::from(rank) * per, u64::from(rank + 1) * per),
        _ => (0, elems),
    };
    let mut out = Vec::with_capacity(((hi - lo) * ELEM_BYTES) as usize);
    for i in lo..hi {
        let v = match op {
            Op::AllReduce | Op::ReduceScatter => sum(i),
            // Part p is rank p's own.
            Op::AllGather => value((i / per) as u32, i),
            // Block b of the output is rank b's block `rank`.
            Op::AllToAll => value((i / per) as u32, u64::from(rank) * per + i % per),
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
    (lo * ELEM_BYTES, out)
}

/// Elements of `got` that differ from `want`.
pub fn wrong_elements(got: &[u8], want: &[u8]) -> u64 {
    got.chunks(4)
        .zip(want.chunks(4))
        .filter(|(a, b)| a != b)
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_reduce_expects_the_integer_sum_of_every_rank() {
        let (off, v) = expected(Op::AllReduce, 3, 1, 24);
        assert_eq!(off, 0);
        let first = f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        // Ranks 0, 1, 2 at element 0: 0 + 7 + 14.
        assert_eq!(first, 21.0);
        let (off, v) = expected(Op::ReduceScatter, 3, 2, 24);
        assert_eq!((off, v.len()), (16, 8));
    }
}
