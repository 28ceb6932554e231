//! A host's virtual memory: the buffers that MRs register and the NIC reads and writes
//! (DESIGN.md §3.3, "Memory: real byte arrays" and "Synthetic memory regions for scale").
//!
//! # Layout
//!
//! [`Memory::alloc`] hands out buffers at 4 KiB-aligned virtual addresses starting at
//! [`Memory::BASE_VA`]. Every buffer is followed by at least one unmapped 4 KiB guard page,
//! and nothing is mapped below the base, so an access that runs one byte past a buffer (or
//! starts one byte before it) touches no buffer and fails with [`MemoryError::Unmapped`].
//! An access must lie inside one buffer. Zero-length accesses always succeed.
//!
//! # Real and synthetic buffers
//!
//! A **real** buffer holds its bytes (zero-filled at allocation) and is what tests, the
//! playground and pcap output read. Real buffers are limited to [`Memory::MAX_REAL_LEN`].
//!
//! A **synthetic** buffer ([`Memory::alloc_synthetic`]) stores no bytes, so a 1 GiB MR costs a
//! few words. Its exact semantics, which tests rely on:
//!
//! - **Reads** return generator content: the byte at offset `o` is [`pattern_byte`]`(seed, o)`,
//!   a fixed function of the buffer's seed and the offset. Two synthetic buffers allocated with
//!   the same seed have identical content. Reads never see earlier writes.
//! - **Writes** store nothing. Each write updates the buffer's [`SyntheticStats`]: the number
//!   of writes and bytes, a running CRC-32 (IEEE, `crc32fast`) over every written byte in the
//!   order written, and `mismatched_bytes`, the count of written bytes that differ from the
//!   buffer's own generator content at the offset written.
//!
//! So a sender and a receiver that allocate synthetic buffers with the same seed and move data
//! offset-for-offset (a WRITE of `[o, o+n)` to `[o', o'+n)` with `o == o'`, a SEND into a
//! buffer at the same offset) see `mismatched_bytes == 0`, and a receiver that got `[o, o+n)`
//! exactly once, in order, has `crc == pattern_crc(seed, o, n)`. A corrupted, misplaced or
//! duplicated byte shows up in one or both numbers. [`Memory::reset_synthetic_stats`] starts a
//! new message.
//!
//! Atomics on synthetic memory read the generator and store nothing (they behave as a write).
//!
//! Simplification: buffers are never partially freed or remapped; `free` drops a whole buffer.

use std::collections::BTreeMap;

/// A 4 KiB page, the unit of pinning and of alignment.
pub const PAGE_SIZE: u64 = 4096;

/// Identifies one allocation for its whole life (never reused).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct BufferId(pub u32);

/// A failed memory operation.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum MemoryError {
    /// `[va, va+len)` is not inside one allocated buffer.
    #[error("address range {va:#x}..{end:#x} ({len} bytes) is not inside one allocated buffer", end = va.wrapping_add(*len))]
    Unmapped {
        /// Start of the access.
        va: u64,
        /// Length of the access.
        len: u64,
    },
    /// A zero-length allocation was asked for.
    #[error("cannot allocate a zero-length buffer")]
    ZeroLength,
    /// A real buffer larger than [`Memory::MAX_REAL_LEN`] was asked for.
    #[error("a real buffer of {len} bytes exceeds the {max}-byte limit; use a synthetic buffer")]
    TooLarge {
        /// Requested length.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The address space is exhausted.
    #[error("virtual address space exhausted")]
    OutOfAddressSpace,
    /// `free` was given an address that does not start a buffer.
    #[error("{va:#x} does not start an allocated buffer")]
    NotABuffer {
        /// The address given.
        va: u64,
    },
}

/// Statistics of the writes into one synthetic buffer (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SyntheticStats {
    /// Number of write calls.
    pub writes: u64,
    /// Total bytes written.
    pub bytes_written: u64,
    /// Written bytes that differ from the generator content at their offset.
    pub mismatched_bytes: u64,
    /// Of `bytes_written`, those written by reference ([`Memory::write_ref`]), not as bytes.
    pub symbolic_bytes: u64,
    hasher: crc32fast::Hasher,
}

impl SyntheticStats {
    /// CRC-32 of every byte written so far, in write order.
    pub fn crc(&self) -> u32 {
        self.hasher.clone().finalize()
    }
}

/// What [`Memory::buffer_at`] tells about the buffer holding an address.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct BufferInfo {
    /// The buffer's identity.
    pub id: BufferId,
    /// Its first virtual address.
    pub start: u64,
    /// Its length in bytes.
    pub len: u64,
    /// `Some(seed)` for a synthetic buffer.
    pub synthetic_seed: Option<u64>,
}

#[derive(Clone, Debug)]
enum Backing {
    Real(Vec<u8>),
    Synthetic { seed: u64, stats: SyntheticStats },
}

#[derive(Clone, Debug)]
struct Buffer {
    id: BufferId,
    len: u64,
    backing: Backing,
}

/// One host's memory (see the module docs).
#[derive(Clone, Debug)]
pub struct Memory {
    buffers: BTreeMap<u64, Buffer>,
    next_va: u64,
    next_id: u32,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new()
    }
}

impl Memory {
    /// Bytes the real buffers hold (synthetic ones hold none): for a run's memory budget.
    pub fn held_bytes(&self) -> u64 {
        self.buffers
            .values()
            .map(|b| match &b.backing {
                Backing::Real(v) => v.capacity() as u64,
                Backing::Synthetic { .. } => 0,
            })
            .sum()
    }

    /// The first address handed out; everything below is unmapped.
    pub const BASE_VA: u64 = 0x0000_1000_0000;
    /// The largest real (byte-holding) buffer: 256 MiB.
    pub const MAX_REAL_LEN: u64 = 256 << 20;
    /// The largest synthetic buffer: 1 TiB.
    pub const MAX_SYNTHETIC_LEN: u64 = 1 << 40;

    /// An empty address space.
    pub fn new() -> Memory {
        Memory::with_base(Self::BASE_VA)
    }

    /// An empty address space whose first buffer is at `base` (rounded up to a page; at
    /// least [`Memory::BASE_VA`]): each simulated host gets its own, so two hosts' buffers
    /// never share an address and a remote address meant for one host is not valid on another
    /// by accident.
    pub fn with_base(base: u64) -> Memory {
        Memory {
            buffers: BTreeMap::new(),
            next_va: base
                .max(Self::BASE_VA)
                .checked_next_multiple_of(PAGE_SIZE)
                .unwrap_or(Self::BASE_VA),
            next_id: 0,
        }
    }

    /// Allocates a zero-filled real buffer of `len` bytes and returns its 4 KiB-aligned address.
    pub fn alloc(&mut self, len: u64) -> Result<u64, MemoryError> {
        if len > Self::MAX_REAL_LEN {
            return Err(MemoryError::TooLarge {
                len,
                max: Self::MAX_REAL_LEN,
            });
        }
        let bytes = usize::try_from(len).map_err(|_| MemoryError::TooLarge {
            len,
            max: Self::MAX_REAL_LEN,
        })?;
        self.insert(len, Backing::Real(vec![0; bytes]))
    }

    /// Allocates a synthetic buffer of `len` bytes whose content is `pattern_byte(seed, offset)`.
    pub fn alloc_synthetic(&mut self, len: u64, seed: u64) -> Result<u64, MemoryError> {
        if len > Self::MAX_SYNTHETIC_LEN {
            return Err(MemoryError::TooLarge {
                len,
                max: Self::MAX_SYNTHETIC_LEN,
            });
        }
        self.insert(
            len,
            Backing::Synthetic {
                seed,
                stats: SyntheticStats::default(),
            },
        )
    }

    fn insert(&mut self, len: u64, backing: Backing) -> Result<u64, MemoryError> {
        if len == 0 {
            return Err(MemoryError::ZeroLength);
        }
        let va = self.next_va;
        // The next buffer starts on the page after this one's last page plus one guard page.
        let next = va
            .checked_add(len)
            .and_then(|end| end.checked_next_multiple_of(PAGE_SIZE))
            .and_then(|end| end.checked_add(PAGE_SIZE))
            .ok_or(MemoryError::OutOfAddressSpace)?;
        let id = BufferId(self.next_id);
        self.next_id += 1;
        self.next_va = next;
        self.buffers.insert(va, Buffer { id, len, backing });
        Ok(va)
    }

    /// Frees the buffer that starts at `va`. Its addresses are never handed out again.
    pub fn free(&mut self, va: u64) -> Result<(), MemoryError> {
        self.buffers
            .remove(&va)
            .map(|_| ())
            .ok_or(MemoryError::NotABuffer { va })
    }

    fn find(&self, va: u64, len: u64) -> Result<(u64, &Buffer), MemoryError> {
        let unmapped = MemoryError::Unmapped { va, len };
        let (&start, buf) = self.buffers.range(..=va).next_back().ok_or(unmapped)?;
        let end = va.checked_add(len).ok_or(unmapped)?;
        if end > start + buf.len {
            return Err(unmapped);
        }
        Ok((va - start, buf))
    }

    fn find_mut(&mut self, va: u64, len: u64) -> Result<(u64, &mut Buffer), MemoryError> {
        let unmapped = MemoryError::Unmapped { va, len };
        let (&start, buf) = self.buffers.range_mut(..=va).next_back().ok_or(unmapped)?;
        let end = va.checked_add(len).ok_or(unmapped)?;
        if end > start + buf.len {
            return Err(unmapped);
        }
        Ok((va - start, buf))
    }

    /// True if `[va, va+len)` lies inside one buffer (always true for `len == 0`).
    pub fn is_mapped(&self, va: u64, len: u64) -> bool {
        len == 0 || self.find(va, len).is_ok()
    }

    /// The buffer that holds `va`, if any.
    pub fn buffer_at(&self, va: u64) -> Option<BufferInfo> {
        let (off, buf) = self.find(va, 1).ok()?;
        Some(BufferInfo {
            id: buf.id,
            start: va - off,
            len: buf.len,
            synthetic_seed: match buf.backing {
                Backing::Real(_) => None,
                Backing::Synthetic { seed, .. } => Some(seed),
            },
        })
    }

    /// Reads `out.len()` bytes at `va`.
    pub fn read(&self, va: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        if out.is_empty() {
            return Ok(());
        }
        let (off, buf) = self.find(va, out.len() as u64)?;
        match &buf.backing {
            Backing::Real(bytes) => {
                // `find` checked that off + len ≤ buf.len, which is bytes.len().
                let off = off as usize;
                out.copy_from_slice(&bytes[off..off + out.len()]);
            }
            Backing::Synthetic { seed, .. } => fill_pattern(*seed, off, out),
        }
        Ok(())
    }

    /// Whether the bytes at `va` are `want`, compared in place (no copy): a receiver's check
    /// that a message arrived intact. False when the range is unmapped.
    pub fn holds(&self, va: u64, want: &[u8]) -> bool {
        if want.is_empty() {
            return true;
        }
        let Ok((off, buf)) = self.find(va, want.len() as u64) else {
            return false;
        };
        match &buf.backing {
            // `find` checked that off + len ≤ buf.len, which is bytes.len().
            Backing::Real(bytes) => bytes[off as usize..off as usize + want.len()] == *want,
            Backing::Synthetic { seed, .. } => {
                let mut got = vec![0u8; want.len()];
                fill_pattern(*seed, off, &mut got);
                got == want
            }
        }
    }

    /// Reads `len` bytes at `va` into a new vector.
    pub fn read_vec(&self, va: u64, len: u64) -> Result<Vec<u8>, MemoryError> {
        if !self.is_mapped(va, len) {
            return Err(MemoryError::Unmapped { va, len });
        }
        let mut out = vec![0; len as usize];
        self.read(va, &mut out)?;
        Ok(out)
    }

    /// Writes `data` at `va` (for a synthetic buffer: updates its statistics, stores nothing).
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemoryError> {
        if data.is_empty() {
            return Ok(());
        }
        let (off, buf) = self.find_mut(va, data.len() as u64)?;
        match &mut buf.backing {
            Backing::Real(bytes) => {
                let off = off as usize;
                bytes[off..off + data.len()].copy_from_slice(data);
            }
            Backing::Synthetic { seed, stats } => {
                let mut expected = vec![0; data.len()];
                fill_pattern(*seed, off, &mut expected);
                let mismatched = data.iter().zip(&expected).filter(|(a, b)| a != b).count();
                stats.writes += 1;
                stats.bytes_written += data.len() as u64;
                stats.mismatched_bytes += mismatched as u64;
                stats.hasher.update(data);
            }
        }
        Ok(())
    }

    /// The generator content at `[va, va + len)`, if that range lies in one synthetic buffer.
    pub fn synthetic_ref(&self, va: u64, len: u64) -> Option<SyntheticRef> {
        let (off, buf) = self.find(va, len).ok()?;
        match &buf.backing {
            Backing::Synthetic { seed, .. } => Some(SyntheticRef {
                seed: *seed,
                offset: off,
            }),
            Backing::Real(_) => None,
        }
    }

    /// Writes `len` bytes of generator content `src` at `va`. A real buffer receives the bytes;
    /// a synthetic buffer counts them, and they match exactly when `src` names the content the
    /// buffer's own generator has at that position (same seed, same offset) — which is what an
    /// intact transfer between buffers of the same seed produces. Mismatched references are
    /// compared byte by byte. The running CRC covers byte writes only (`symbolic_bytes` counts
    /// the rest).
    pub fn write_ref(&mut self, va: u64, src: SyntheticRef, len: u64) -> Result<(), MemoryError> {
        if len == 0 {
            return Ok(());
        }
        let (off, buf) = self.find_mut(va, len)?;
        match &mut buf.backing {
            Backing::Real(bytes) => {
                let off = off as usize;
                fill_pattern(src.seed, src.offset, &mut bytes[off..off + len as usize]);
            }
            Backing::Synthetic { seed, stats } => {
                stats.writes += 1;
                stats.bytes_written += len;
                stats.symbolic_bytes += len;
                if (src.seed, src.offset) != (*seed, off) {
                    let mut got = vec![0; len as usize];
                    fill_pattern(src.seed, src.offset, &mut got);
                    let mut expected = vec![0; len as usize];
                    fill_pattern(*seed, off, &mut expected);
                    let bad = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
                    stats.mismatched_bytes += bad as u64;
                }
            }
        }
        Ok(())
    }

    /// Reads a little-endian u64 (the simulated hosts are little-endian, like x86).
    pub fn read_u64(&self, va: u64) -> Result<u64, MemoryError> {
        let mut b = [0; 8];
        self.read(va, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes a little-endian u64.
    pub fn write_u64(&mut self, va: u64, value: u64) -> Result<(), MemoryError> {
        self.write(va, &value.to_le_bytes())
    }

    /// The write statistics of the synthetic buffer holding `va`.
    pub fn synthetic_stats(&self, va: u64) -> Option<&SyntheticStats> {
        let (_, buf) = self.find(va, 1).ok()?;
        match &buf.backing {
            Backing::Synthetic { stats, .. } => Some(stats),
            Backing::Real(_) => None,
        }
    }

    /// Clears the write statistics of the synthetic buffer holding `va` (a new message).
    pub fn reset_synthetic_stats(&mut self, va: u64) {
        if let Ok((_, buf)) = self.find_mut(va, 1)
            && let Backing::Synthetic { stats, .. } = &mut buf.backing
        {
            *stats = SyntheticStats::default();
        }
    }
}

/// The number of 4 KiB pages `[va, va+len)` touches: what registering it pins.
pub fn pages_spanned(va: u64, len: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    let first = va / PAGE_SIZE;
    let last = (va + (len - 1)) / PAGE_SIZE;
    last - first + 1
}

/// SplitMix64's finalizer: a cheap, well-mixed function of one word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator content of a synthetic buffer with `seed` at byte `offset`.
pub fn pattern_byte(seed: u64, offset: u64) -> u8 {
    let word = mix(seed ^ mix(offset / 8));
    (word >> ((offset % 8) * 8)) as u8
}

/// Fills `out` with the generator content for `seed` starting at byte `offset`, one 64-bit word
/// of the generator per 8 bytes.
pub fn fill_pattern(seed: u64, offset: u64, out: &mut [u8]) {
    let mut i = 0usize;
    // Leading bytes up to a word boundary.
    while i < out.len() && !(offset + i as u64).is_multiple_of(8) {
        out[i] = pattern_byte(seed, offset + i as u64);
        i += 1;
    }
    // Whole words.
    while i + 8 <= out.len() {
        let word = mix(seed ^ mix((offset + i as u64) / 8));
        out[i..i + 8].copy_from_slice(&word.to_le_bytes());
        i += 8;
    }
    while i < out.len() {
        out[i] = pattern_byte(seed, offset + i as u64);
        i += 1;
    }
}

/// Generator content named instead of copied: the bytes of a synthetic buffer with `seed`
/// starting at `offset`. Packets from a synthetic source carry this instead of bytes, so
/// gigabyte runs move no bytes; writing it into a synthetic buffer checks it by position.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct SyntheticRef {
    /// The source buffer's seed.
    pub seed: u64,
    /// Byte offset of the content in the source buffer.
    pub offset: u64,
}

/// CRC-32 of the generator content `[offset, offset+len)` for `seed`: what a synthetic
/// receiver's [`SyntheticStats::crc`] equals after receiving exactly that range in order.
pub fn pattern_crc(seed: u64, offset: u64, len: u64) -> u32 {
    let mut h = crc32fast::Hasher::new();
    let mut chunk = [0u8; 4096];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(chunk.len() as u64) as usize;
        fill_pattern(seed, offset + done, &mut chunk[..n]);
        h.update(&chunk[..n]);
        done += n as u64;
    }
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_guarded() {
        let mut m = Memory::new();
        let a = m.alloc(100).unwrap();
        let b = m.alloc(4096).unwrap();
        assert_eq!(a % PAGE_SIZE, 0);
        assert_eq!(b % PAGE_SIZE, 0);
        assert!(b >= a + 2 * PAGE_SIZE, "a guard page separates buffers");
        assert!(m.is_mapped(a, 100));
        assert!(!m.is_mapped(a, 101), "one byte past the end fails");
        assert!(!m.is_mapped(a - 1, 1), "one byte before the start fails");
        assert!(!m.is_mapped(a + 100, 1));
        assert!(m.is_mapped(a + 99, 1));
        assert!(m.is_mapped(0, 0), "zero-length accesses always succeed");
    }

    #[test]
    fn real_read_write_round_trip_and_bounds() {
        let mut m = Memory::new();
        let a = m.alloc(16).unwrap();
        m.write(a + 4, b"hello").unwrap();
        assert_eq!(m.read_vec(a + 4, 5).unwrap(), b"hello");
        assert_eq!(m.read_vec(a, 4).unwrap(), [0; 4]);
        assert_eq!(
            m.write(a + 12, b"hello"),
            Err(MemoryError::Unmapped { va: a + 12, len: 5 })
        );
        let mut out = [0; 17];
        assert!(m.read(a, &mut out).is_err());
        m.write_u64(a + 8, 0x1122_3344_5566_7788).unwrap();
        assert_eq!(m.read_u64(a + 8).unwrap(), 0x1122_3344_5566_7788);
        assert_eq!(m.read_vec(a + 8, 1).unwrap(), [0x88], "little-endian");
    }

    #[test]
    fn zero_and_oversized_allocations_fail() {
        let mut m = Memory::new();
        assert_eq!(m.alloc(0), Err(MemoryError::ZeroLength));
        assert!(matches!(
            m.alloc(Memory::MAX_REAL_LEN + 1),
            Err(MemoryError::TooLarge { .. })
        ));
    }

    #[test]
    fn free_unmaps() {
        let mut m = Memory::new();
        let a = m.alloc(10).unwrap();
        m.free(a).unwrap();
        assert!(!m.is_mapped(a, 1));
        assert_eq!(m.free(a), Err(MemoryError::NotABuffer { va: a }));
        let b = m.alloc(10).unwrap();
        assert_ne!(a, b, "addresses are never reused");
    }

    #[test]
    fn synthetic_content_is_a_function_of_seed_and_offset() {
        let mut m = Memory::new();
        let gib = m.alloc_synthetic(1 << 30, 7).unwrap();
        let same = m.alloc_synthetic(4096, 7).unwrap();
        let other = m.alloc_synthetic(4096, 8).unwrap();
        let x = m.read_vec(gib + 100, 64).unwrap();
        assert_eq!(x, m.read_vec(same + 100, 64).unwrap());
        assert_ne!(x, m.read_vec(other + 100, 64).unwrap());
        assert_eq!(x[0], pattern_byte(7, 100));
        let far = m.read_vec(gib + (1 << 30) - 8, 8).unwrap();
        assert_eq!(far[7], pattern_byte(7, (1 << 30) - 1));
        assert!(!m.is_mapped(gib + (1 << 30) - 8, 9));
    }

    #[test]
    fn synthetic_writes_are_counted_not_stored() {
        let mut m = Memory::new();
        let src = m.alloc_synthetic(8192, 42).unwrap();
        let dst = m.alloc_synthetic(8192, 42).unwrap();
        let data = m.read_vec(src + 1000, 3000).unwrap();
        m.write(dst + 1000, &data[..1000]).unwrap();
        m.write(dst + 2000, &data[1000..]).unwrap();
        let s = m.synthetic_stats(dst).unwrap();
        assert_eq!(s.writes, 2);
        assert_eq!(s.bytes_written, 3000);
        assert_eq!(s.mismatched_bytes, 0);
        assert_eq!(s.crc(), pattern_crc(42, 1000, 3000));
        assert_eq!(s.crc(), crc32fast::hash(&data));

        // A misplaced write is caught by the mismatch count.
        m.reset_synthetic_stats(dst);
        m.write(dst, &data[..100]).unwrap();
        assert!(m.synthetic_stats(dst).unwrap().mismatched_bytes > 90);
        // Reads never see writes.
        assert_eq!(m.read_vec(dst, 100).unwrap(), m.read_vec(src, 100).unwrap());
        let real = m.alloc(1).unwrap();
        assert!(m.synthetic_stats(real).is_none());
    }

    #[test]
    fn pages_spanned_counts_touched_pages() {
        assert_eq!(pages_spanned(0, 0), 0);
        assert_eq!(pages_spanned(0, 1), 1);
        assert_eq!(pages_spanned(0, 4096), 1);
        assert_eq!(pages_spanned(4095, 2), 2);
        assert_eq!(pages_spanned(100, 8192), 3);
    }
}
