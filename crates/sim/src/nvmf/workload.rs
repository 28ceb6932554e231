//! The fio-shaped workload: what each job issues next, deterministic from the seed.
//!
//! fio's knobs as they are named there (fio(1) HOWTO, "I/O type" and "Block size"): `rw`
//! (read, write, randread, randwrite, rw/readwrite, randrw), `rwmixread` (percent reads of a
//! mixed workload), `bs`, `iodepth`, `numjobs`, and `runtime` or `number_ios`. Offsets are
//! block-aligned inside the job's `size`; sequential jobs wrap at its end as fio does with
//! `time_based`. Each job draws from its own xorshift stream, so jobs do not perturb each other.

use super::capsule::{CommandRepr, DataPtr, IoOpcode};

/// fio's `rw`.
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes (`rw`, `readwrite`).
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
}

impl RwMode {
    /// The mode fio names `s`, if any.
    pub fn parse(s: &str) -> Option<RwMode> {
        Some(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            _ => return None,
        })
    }

    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
        }
    }

    fn random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }
}

/// One I/O a job issues.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct IoSpec {
    /// Read or write.
    pub op: IoOpcode,
    /// Byte offset on the namespace.
    pub offset: u64,
    /// Bytes.
    pub len: u32,
}

impl IoSpec {
    /// Whether the IO's data rides in the command capsule: a write that fits the in-capsule
    /// data size the target offers (`inline` bytes; NVMe-oF 1.1 §2.1, "in-capsule data").
    pub fn in_capsule(&self, inline: u32) -> bool {
        self.op == IoOpcode::Write && self.len <= inline
    }

    /// The Read or Write command for this IO, slot `cid` on namespace 1 (512-byte blocks):
    /// its data in the capsule when [`in_capsule`](Self::in_capsule), else where `elsewhere`
    /// points (a keyed SGL for RDMA, the transport's data PDUs for TCP).
    pub fn command(&self, cid: u16, inline: u32, elsewhere: DataPtr) -> CommandRepr {
        CommandRepr {
            opcode: self.op,
            cid,
            nsid: 1,
            slba: self.offset / 512,
            blocks: self.len / 512,
            data: if self.in_capsule(inline) {
                DataPtr::InCapsule {
                    offset: 0,
                    len: self.len,
                }
            } else {
                elsewhere
            },
        }
    }
}

/// One job's generator.
#[derive(Clone, Debug)]
pub struct JobGen {
    rw: RwMode,
    rwmixread: u8,
    bs: u32,
    blocks: u64,
    next_block: u64,
    x: u64,
}

impl JobGen {
    /// Job `job` of a run with `seed`: `bs`-byte I/Os over `size_bytes` (at least one block).
    pub fn new(rw: RwMode, rwmixread: u8, bs: u32, size_bytes: u64, seed: u64, job: u32) -> JobGen {
        let blocks = (size_bytes / bs.max(1) as u64).max(1);
        // A distinct, odd start per job; the job's sequential stream starts at its own share.
        let x = (seed ^ (job as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
        JobGen {
            rw,
            rwmixread: rwmixread.min(100),
            bs,
            blocks,
            next_block: 0,
            x,
        }
    }

    fn draw(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }

    /// The next I/O.
    pub fn next_io(&mut self) -> IoSpec {
        let op = match self.rw {
            RwMode::Read | RwMode::RandRead => IoOpcode::Read,
            RwMode::Write | RwMode::RandWrite => IoOpcode::Write,
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.draw() % 100 < self.rwmixread as u64 {
                    IoOpcode::Read
                } else {
                    IoOpcode::Write
                }
            }
        };
        let block = if self.rw.random() {
            self.draw() % self.blocks
        } else {
            let b = self.next_block;
            self.next_block = (b + 1) % self.blocks;
            b
        };
        IoSpec {
            op,
            offset: block * self.bs as u64,
            len: self.bs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_jobs_walk_the_blocks_and_wrap() {
        let mut g = JobGen::new(RwMode::Read, 100, 4096, 3 * 4096, 1, 0);
        let offs: Vec<u64> = (0..4).map(|_| g.next_io().offset).collect();
        assert_eq!(offs, [0, 4096, 8192, 0]);
    }

    #[test]
    fn a_mix_follows_rwmixread_and_the_seed_fixes_it() {
        let run = |seed| {
            let mut g = JobGen::new(RwMode::RandRw, 70, 4096, 1 << 30, seed, 0);
            (0..10_000).map(|_| g.next_io()).collect::<Vec<_>>()
        };
        let a = run(5);
        assert_eq!(a, run(5));
        assert_ne!(a, run(6));
        let reads = a.iter().filter(|i| i.op == IoOpcode::Read).count();
        assert!(
            (6_800..7_200).contains(&reads),
            "{reads} reads of 10000 at 70%"
        );
        assert!(a.iter().all(|i| i.offset % 4096 == 0 && i.offset < 1 << 30));
    }
}
