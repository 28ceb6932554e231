//! The algorithms as step plans: which rank sends which parts of its buffer to whom at each
//! step, and what the receiver does with them. Pure data, no timing: the executors
//! (`rc.rs`, `tcp.rs`) chunk and pipeline these transfers over the simulated fabric.
//!
//! Every rank's buffer is `ranks` equal parts (nccl-tests' layouts: all-gather's output and
//! reduce-scatter's input are `ranks` blocks of one rank's share; all-to-all's block `j` goes
//! to rank `j`). A transfer names its parts on both sides, so all-to-all can move block `dst`
//! of the sender into block `src` of the receiver.
//!
//! - Ring (Patarasuk and Yuan's bandwidth-optimal all-reduce, as NCCL's ring runs it):
//!   reduce-scatter in `ranks − 1` steps, rank `r` sending part `r − s − 1` to `r + 1` at step
//!   `s`, so rank `r` ends holding the full sum of part `r`; all-gather in `ranks − 1` more,
//!   rank `r` forwarding part `r − s`.
//! - Halving-doubling (Rabenseifner's, recursive halving then recursive doubling; powers of
//!   two): at reduce-scatter step `k` rank `r` exchanges half of its current range with
//!   `r XOR ranks/2^(k+1)`, keeping the half that holds part `r`; all-gather retraces the steps.
//! - All-to-all: `ranks − 1` pairwise steps, rank `r` sending block `r + s` to rank `r + s`.

use std::ops::Range;

/// The collective operation (nccl-tests' names).
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Every rank ends with every rank's block.
    AllGather,
    /// Every rank ends with the element-wise sum of every rank's buffer.
    AllReduce,
    /// Block `j` of rank `i` ends as block `i` of rank `j`.
    AllToAll,
    /// Rank `r` ends with part `r` of the element-wise sum.
    ReduceScatter,
}

impl Op {
    /// The names the CLI and scenarios take.
    pub const NAMES: [&'static str; 4] = ["all_gather", "all_reduce", "alltoall", "reduce_scatter"];

    /// The operation called `s`.
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "all_gather" => Op::AllGather,
            "all_reduce" => Op::AllReduce,
            "alltoall" => Op::AllToAll,
            "reduce_scatter" => Op::ReduceScatter,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Op::AllGather => "all_gather",
            Op::AllReduce => "all_reduce",
            Op::AllToAll => "alltoall",
            Op::ReduceScatter => "reduce_scatter",
        }
    }

    /// nccl-tests' bus-bandwidth factor, as (numerator, denominator): all-reduce
    /// 2(n−1)/n, the others (n−1)/n. It is also the share of the buffer each rank sends.
    pub fn bus_factor(self, ranks: u32) -> (u64, u64) {
        let n = u64::from(ranks.max(1));
        match self {
            Op::AllReduce => (2 * (n - 1), n),
            _ => (n - 1, n),
        }
    }
}

/// How the collective is scheduled.
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Recursive halving and doubling (power-of-two ranks).
    HalvingDoubling,
    /// A ring.
    Ring,
}

impl Algorithm {
    /// The names the CLI and scenarios take.
    pub const NAMES: [&'static str; 2] = ["halving_doubling", "ring"];

    /// The algorithm called `s`.
    pub fn parse(s: &str) -> Option<Algorithm> {
        Some(match s {
            "halving_doubling" => Algorithm::HalvingDoubling,
            "ring" => Algorithm::Ring,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::HalvingDoubling => "halving_doubling",
            Algorithm::Ring => "ring",
        }
    }
}

/// What the receiver does with a transfer's bytes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Land {
    /// Written into the receiver's buffer at `dst_parts` (a gather).
    Data,
    /// Written into the receiver's output buffer (all-to-all).
    Output,
    /// Written into scratch slot `slot`, then added into the buffer at `dst_parts`.
    Reduce {
        /// Which scratch copy of the buffer (a part may be reduced more than once).
        slot: u32,
    },
}

/// One rank's message at one step.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Transfer {
    /// The step, from 0; a rank's transfers of one step may run together.
    pub step: u32,
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// The sender's parts.
    pub src_parts: Range<u32>,
    /// Where they land at the receiver (same length).
    pub dst_parts: Range<u32>,
    /// What the receiver does with them.
    pub land: Land,
}

/// A whole collective: its transfers, ordered by step.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Ranks (hosts).
    pub ranks: u32,
    /// Transfers, by step then sender.
    pub transfers: Vec<Transfer>,
    /// Scratch copies of the buffer a receiver needs (the most reductions of one part).
    pub scratch_slots: u32,
}

/// Why a schedule cannot be built.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// Fewer than two ranks.
    #[error("a collective needs at least 2 hosts (got {0})")]
    TooFewRanks(u32),
    /// Halving-doubling with a rank count that is not a power of two.
    #[error("halving_doubling needs a power-of-two host count (got {0})")]
    NotPowerOfTwo(u32),
    /// An algorithm the operation does not run with.
    #[error("{op} runs with the ring algorithm only")]
    RingOnly {
        /// The operation.
        op: &'static str,
    },
}

impl Schedule {
    /// The plan of `op` with `alg` on `ranks` ranks.
    pub fn new(op: Op, alg: Algorithm, ranks: u32) -> Result<Schedule, ScheduleError> {
        if ranks < 2 {
            return Err(ScheduleError::TooFewRanks(ranks));
        }
        let mut t = Vec::new();
        match (op, alg) {
            (Op::AllToAll, Algorithm::Ring) => all_to_all(ranks, &mut t),
            (Op::AllToAll, Algorithm::HalvingDoubling) => {
                return Err(ScheduleError::RingOnly { op: op.name() });
            }
            (_, Algorithm::Ring) => {
                let mut step = 0;
                if matches!(op, Op::AllReduce | Op::ReduceScatter) {
                    ring_reduce_scatter(ranks, &mut step, &mut t);
                }
                if matches!(op, Op::AllReduce | Op::AllGather) {
                    ring_all_gather(ranks, &mut step, &mut t);
                }
            }
            (_, Algorithm::HalvingDoubling) => {
                if !ranks.is_power_of_two() {
                    return Err(ScheduleError::NotPowerOfTwo(ranks));
                }
                let mut step = 0;
                if matches!(op, Op::AllReduce | Op::ReduceScatter) {
                    halving(ranks, &mut step, &mut t);
                }
                if matches!(op, Op::AllReduce | Op::AllGather) {
                    doubling(ranks, &mut step, &mut t);
                }
            }
        }
        let scratch_slots = t
            .iter()
            .filter_map(|x| match x.land {
                Land::Reduce { slot } => Some(slot + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Ok(Schedule {
            ranks,
            transfers: t,
            scratch_slots,
        })
    }

    /// Steps in all.
    pub fn steps(&self) -> u32 {
        self.transfers.last().map_or(0, |t| t.step + 1)
    }

    /// Of the landings into rank `rank`'s buffer (gathers and reductions) before step `step`,
    /// how many cover part `part`: what a send of that part at `step` waits for.
    pub fn landings_before(&self, rank: u32, part: u32, step: u32) -> u32 {
        self.landings().before(rank, part, step)
    }

    /// Every landing's step, by (rank, part): [`Landings::before`] answers
    /// [`Schedule::landings_before`] by a binary search, where a scan of the transfers for
    /// each of a ring's n·2(n−1) sends would be quadratic in them (a 256-rank all-reduce's
    /// chunking took seconds that way).
    pub fn landings(&self) -> Landings {
        let n = self.ranks as usize;
        let mut steps = vec![Vec::new(); n * n];
        // Transfers come by step, so each list is sorted as it is built.
        for t in self.transfers.iter().filter(|t| t.land != Land::Output) {
            for p in t.dst_parts.clone() {
                steps[t.dst as usize * n + p as usize].push(t.step);
            }
        }
        Landings { ranks: n, steps }
    }
}

/// The steps at which each (rank, part) of a schedule receives a gather or a reduction.
#[derive(Clone, Debug)]
pub struct Landings {
    ranks: usize,
    steps: Vec<Vec<u32>>,
}

impl Landings {
    /// Landings into `rank`'s part `part` at steps before `step`.
    pub fn before(&self, rank: u32, part: u32, step: u32) -> u32 {
        let at = &self.steps[rank as usize * self.ranks + part as usize];
        at.partition_point(|&s| s < step) as u32
    }
}

fn ring_reduce_scatter(n: u32, step: &mut u32, t: &mut Vec<Transfer>) {
    for s in 0..n - 1 {
        for r in 0..n {
            let p = (r + 2 * n - s - 1) % n;
            t.push(Transfer {
                step: *step,
                src: r,
                dst: (r + 1) % n,
                src_parts: p..p + 1,
                dst_parts: p..p + 1,
                land: Land::Reduce { slot: 0 },
            });
        }
        *step += 1;
    }
}

fn ring_all_gather(n: u32, step: &mut u32, t: &mut Vec<Transfer>) {
    for s in 0..n - 1 {
        for r in 0..n {
            let p = (r + n - s) % n;
            t.push(Transfer {
                step: *step,
                src: r,
                dst: (r + 1) % n,
                src_parts: p..p + 1,
                dst_parts: p..p + 1,
                land: Land::Data,
            });
        }
        *step += 1;
    }
}

/// The range of parts rank `r` is responsible for after `k` halving steps of `n`.
fn hd_range(n: u32, r: u32, k: u32) -> Range<u32> {
    let len = n >> k;
    let lo = r / len * len;
    lo..lo + len
}

fn halving(n: u32, step: &mut u32, t: &mut Vec<Transfer>) {
    let rounds = n.trailing_zeros();
    for k in 0..rounds {
        for r in 0..n {
            let d = n >> (k + 1);
            let peer = r ^ d;
            // Send the half the peer keeps.
            let give = hd_range(n, peer, k + 1);
            t.push(Transfer {
                step: *step,
                src: r,
                dst: peer,
                src_parts: give.clone(),
                dst_parts: give,
                land: Land::Reduce { slot: k },
            });
        }
        *step += 1;
    }
}

fn doubling(n: u32, step: &mut u32, t: &mut Vec<Transfer>) {
    let rounds = n.trailing_zeros();
    for k in (0..rounds).rev() {
        for r in 0..n {
            let d = n >> (k + 1);
            let peer = r ^ d;
            let have = hd_range(n, r, k + 1);
            t.push(Transfer {
                step: *step,
                src: r,
                dst: peer,
                src_parts: have.clone(),
                dst_parts: have,
                land: Land::Data,
            });
        }
        *step += 1;
    }
}

fn all_to_all(n: u32, t: &mut Vec<Transfer>) {
    // Every block is the sender's own: no step waits for another, so all share step 0 and
    // run at once (as NCCL posts every peer's send and receive together).
    for s in 1..n {
        for r in 0..n {
            let peer = (r + s) % n;
            t.push(Transfer {
                step: 0,
                src: r,
                dst: peer,
                src_parts: peer..peer + 1,
                dst_parts: r..r + 1,
                land: Land::Output,
            });
        }
    }
    // Own block: a local copy, not a transfer.
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays a schedule on sets of contributions: every rank's part holds the set of ranks
    /// whose data it sums (a gather replaces, a reduction unions). Returns each rank's parts.
    fn play(s: &Schedule) -> Vec<Vec<std::collections::BTreeSet<u32>>> {
        let n = s.ranks;
        let mut st: Vec<Vec<std::collections::BTreeSet<u32>>> = (0..n)
            .map(|r| (0..n).map(|_| [r].into_iter().collect()).collect())
            .collect();
        for step in 0..s.steps() {
            let snapshot = st.clone();
            for t in s.transfers.iter().filter(|t| t.step == step) {
                for (sp, dp) in t.src_parts.clone().zip(t.dst_parts.clone()) {
                    let v = snapshot[t.src as usize][sp as usize].clone();
                    let cell = &mut st[t.dst as usize][dp as usize];
                    match t.land {
                        Land::Reduce { .. } => cell.extend(v),
                        Land::Data | Land::Output => *cell = v,
                    }
                }
            }
        }
        st
    }

    #[test]
    fn ring_and_halving_doubling_all_reduce_sum_every_rank_everywhere() {
        for (alg, n) in [
            (Algorithm::Ring, 2),
            (Algorithm::Ring, 5),
            (Algorithm::Ring, 16),
            (Algorithm::HalvingDoubling, 2),
            (Algorithm::HalvingDoubling, 8),
        ] {
            let s = Schedule::new(Op::AllReduce, alg, n).unwrap();
            let all: std::collections::BTreeSet<u32> = (0..n).collect();
            for (r, parts) in play(&s).iter().enumerate() {
                for (p, c) in parts.iter().enumerate() {
                    assert_eq!(c, &all, "{alg:?} n={n}: rank {r} part {p}");
                }
            }
        }
    }

    #[test]
    fn ring_steps_and_bytes_per_rank_are_the_bandwidth_optimal_ones() {
        let s = Schedule::new(Op::AllReduce, Algorithm::Ring, 8).unwrap();
        assert_eq!(s.steps(), 14);
        for r in 0..8 {
            let parts: u32 = s
                .transfers
                .iter()
                .filter(|t| t.src == r)
                .map(|t| t.src_parts.len() as u32)
                .sum();
            // 2(n−1) parts of size S/n: 2(n−1)/n of the buffer.
            assert_eq!(parts, 14);
        }
        let hd = Schedule::new(Op::AllReduce, Algorithm::HalvingDoubling, 8).unwrap();
        assert_eq!(hd.steps(), 6);
        let parts: usize = hd
            .transfers
            .iter()
            .filter(|t| t.src == 3)
            .map(|t| t.src_parts.len())
            .sum();
        assert_eq!(parts, 14, "4 + 2 + 1, twice");
        assert_eq!(hd.scratch_slots, 3);
    }

    #[test]
    fn reduce_scatter_leaves_part_r_summed_on_rank_r() {
        for alg in [Algorithm::Ring, Algorithm::HalvingDoubling] {
            let s = Schedule::new(Op::ReduceScatter, alg, 4).unwrap();
            let st = play(&s);
            for (r, parts) in st.iter().enumerate() {
                assert_eq!(parts[r].len(), 4, "{alg:?} rank {r}");
            }
        }
    }

    #[test]
    fn all_gather_and_all_to_all_move_each_block_where_nccl_puts_it() {
        let st = play(&Schedule::new(Op::AllGather, Algorithm::Ring, 5).unwrap());
        for parts in &st {
            for (p, c) in parts.iter().enumerate() {
                assert_eq!(c.iter().copied().collect::<Vec<_>>(), vec![p as u32]);
            }
        }
        let a2a = Schedule::new(Op::AllToAll, Algorithm::Ring, 4).unwrap();
        assert_eq!(a2a.transfers.len(), 12);
        for t in &a2a.transfers {
            assert_eq!(t.src_parts, t.dst..t.dst + 1);
            assert_eq!(t.dst_parts, t.src..t.src + 1);
        }
    }

    #[test]
    fn a_send_waits_for_the_landings_of_its_part() {
        let s = Schedule::new(Op::AllReduce, Algorithm::Ring, 4).unwrap();
        // Rank 1 sends its own part 0 at step 0, then at step 1 part 3, received at step 0.
        assert_eq!(s.landings_before(1, 0, 0), 0);
        assert_eq!(s.landings_before(1, 3, 1), 1);
    }

    #[test]
    fn the_landing_index_counts_what_a_scan_of_the_transfers_counts() {
        let ops = [
            Op::AllGather,
            Op::AllReduce,
            Op::AllToAll,
            Op::ReduceScatter,
        ];
        for (op, alg, n) in ops.iter().flat_map(|&op| {
            [
                (op, Algorithm::Ring, 5),
                (op, Algorithm::HalvingDoubling, 8),
            ]
        }) {
            let Ok(s) = Schedule::new(op, alg, n) else {
                continue;
            };
            let index = s.landings();
            for (rank, part, step) in (0..n)
                .flat_map(|r| (0..n).map(move |p| (r, p)))
                .flat_map(|(r, p)| (0..=s.steps()).map(move |t| (r, p, t)))
            {
                let scan = s
                    .transfers
                    .iter()
                    .filter(|t| {
                        t.step < step
                            && t.dst == rank
                            && t.land != Land::Output
                            && t.dst_parts.contains(&part)
                    })
                    .count() as u32;
                assert_eq!(
                    index.before(rank, part, step),
                    scan,
                    "{op:?} {alg:?} {rank} {part} {step}"
                );
            }
        }
    }

    #[test]
    fn bad_shapes_are_refused_by_name() {
        assert_eq!(
            Schedule::new(Op::AllReduce, Algorithm::Ring, 1).unwrap_err(),
            ScheduleError::TooFewRanks(1)
        );
        assert_eq!(
            Schedule::new(Op::AllReduce, Algorithm::HalvingDoubling, 6).unwrap_err(),
            ScheduleError::NotPowerOfTwo(6)
        );
        assert!(Schedule::new(Op::AllToAll, Algorithm::HalvingDoubling, 4).is_err());
    }
}
