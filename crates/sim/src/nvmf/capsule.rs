//! NVMe commands and completions as they cross a fabric: the 64-byte submission queue entry
//! (the command capsule's first part) with its SGL data pointer, and the 16-byte completion
//! queue entry (the response capsule).
//!
//! Read first: NVM Express Base Specification 2.0, §4.1 (submission queue entry: opcode,
//! flags with PSDT in bits 7:6, command identifier, NSID, MPTR, DPTR, CDW10–15), §4.6 (SGL
//! descriptors: 16 bytes, the identifier in byte 15 with the type in bits 7:4 and the sub-type
//! in bits 3:0) and §4.2 (completion queue entry: DW0, DW1, SQ head, SQ id, command
//! identifier, status with the phase tag in bit 0); NVM Command Set §3.2.4/§3.2.6 (Read 02h,
//! Write 01h: starting LBA in CDW10–11, 0-based block count in CDW12 bits 15:0); NVMe over
//! Fabrics 1.1 §7.3 (RDMA: a keyed SGL data block descriptor carries the host buffer's
//! address, length and R_Key; in-capsule data is named by a data block descriptor with the
//! offset sub-type). Field positions cross-checked against Linux `include/linux/nvme.h`
//! (`struct nvme_common_command`, `struct nvme_keyed_sgl_desc`, `struct nvme_completion`).
//!
//! All multi-byte fields are little-endian, as NVMe defines them.

/// Bytes of a submission queue entry (a command capsule without in-capsule data).
pub const SQE_BYTES: usize = 64;
/// Bytes of a completion queue entry (a response capsule).
pub const CQE_BYTES: usize = 16;

mod field {
    use core::ops::Range;
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const CID: Range<usize> = 2..4;
    pub const NSID: Range<usize> = 4..8;
    pub const DPTR: Range<usize> = 24..40;
    pub const CDW10: Range<usize> = 40..44;
    pub const CDW11: Range<usize> = 44..48;
    pub const CDW12: Range<usize> = 48..52;
    // Completion queue entry.
    pub const CQE_DW0: Range<usize> = 0..4;
    pub const CQE_SQHD: Range<usize> = 8..10;
    pub const CQE_SQID: Range<usize> = 10..12;
    pub const CQE_CID: Range<usize> = 12..14;
    pub const CQE_STATUS: Range<usize> = 14..16;
    // SGL descriptor, relative to DPTR.
    pub const SGL_ADDR: Range<usize> = 0..8;
    pub const SGL_KEYED_LEN: Range<usize> = 8..11;
    pub const SGL_KEY: Range<usize> = 11..15;
    pub const SGL_LEN: Range<usize> = 8..12;
    pub const SGL_ID: usize = 15;
}

/// PSDT = 01b in flags bits 7:6: the data pointer is an SGL (NVMe-oF requires SGLs).
const PSDT_SGL: u8 = 0b01 << 6;

/// A capsule could not be parsed.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum CapsuleError {
    /// Fewer bytes than the structure needs.
    #[error("capsule truncated: {have} bytes, need {need}")]
    Truncated {
        /// Bytes given.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
    /// An opcode this model does not carry.
    #[error("opcode {0:#04x} is not Read (02h) or Write (01h)")]
    Opcode(u8),
    /// An SGL descriptor type this model does not carry.
    #[error(
        "SGL identifier {0:#04x} is neither a keyed data block (40h) nor in-capsule data (01h)"
    )]
    Sgl(u8),
    /// PSDT is not SGL.
    #[error("PSDT is not 01b (SGL): flags {0:#04x}")]
    Psdt(u8),
}

/// The I/O commands the workload issues.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd, serde::Serialize)]
pub enum IoOpcode {
    /// Write (01h).
    Write = 0x01,
    /// Read (02h).
    Read = 0x02,
}

impl IoOpcode {
    fn from_u8(v: u8) -> Result<IoOpcode, CapsuleError> {
        match v {
            0x01 => Ok(IoOpcode::Write),
            0x02 => Ok(IoOpcode::Read),
            v => Err(CapsuleError::Opcode(v)),
        }
    }
}

/// Where a command's data is: the SGL descriptor in DPTR.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum DataPtr {
    /// Keyed SGL data block (type 4h, sub-type 0h): the host buffer the target reads or
    /// writes with RDMA, by address, length (24 bits) and R_Key.
    Keyed {
        /// Host virtual address.
        addr: u64,
        /// Bytes (at most 2^24 − 1).
        len: u32,
        /// The R_Key of the host's memory region.
        key: u32,
    },
    /// SGL data block (type 0h) with the offset sub-type (1h): the data follows the command
    /// in the capsule at `offset`.
    InCapsule {
        /// Offset into the capsule's data area.
        offset: u64,
        /// Bytes.
        len: u32,
    },
    /// Transport SGL data block (type 5h, sub-type Ah) as NVMe/TCP uses it: the data moves
    /// in the transport's own PDUs (C2HData, R2T and H2CData).
    Transport {
        /// Bytes.
        len: u32,
    },
}

impl DataPtr {
    /// Bytes of data the command moves.
    pub fn len(&self) -> u32 {
        match *self {
            DataPtr::Keyed { len, .. }
            | DataPtr::InCapsule { len, .. }
            | DataPtr::Transport { len } => len,
        }
    }

    /// Whether it moves no data.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// SGL identifier bytes (type in bits 7:4, sub-type in bits 3:0).
const SGL_KEYED_ADDR: u8 = 0x40;
const SGL_DATA_OFFSET: u8 = 0x01;
const SGL_TRANSPORT: u8 = 0x5a;

/// A Read or Write command (a submission queue entry).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CommandRepr {
    /// Read or Write.
    pub opcode: IoOpcode,
    /// Command identifier: matches the completion to the command.
    pub cid: u16,
    /// Namespace.
    pub nsid: u32,
    /// Starting LBA.
    pub slba: u64,
    /// Logical blocks, 1-based here (the wire carries it 0-based).
    pub blocks: u32,
    /// The data pointer.
    pub data: DataPtr,
}

impl CommandRepr {
    /// Parses the first [`SQE_BYTES`] of `b`.
    pub fn parse(b: &[u8]) -> Result<CommandRepr, CapsuleError> {
        if b.len() < SQE_BYTES {
            return Err(CapsuleError::Truncated {
                have: b.len(),
                need: SQE_BYTES,
            });
        }
        let opcode = IoOpcode::from_u8(b[field::OPCODE])?;
        if b[field::FLAGS] & 0xc0 != PSDT_SGL {
            return Err(CapsuleError::Psdt(b[field::FLAGS]));
        }
        let d = &b[field::DPTR];
        let addr = le64(&d[field::SGL_ADDR]);
        let data = match d[field::SGL_ID] {
            SGL_KEYED_ADDR => DataPtr::Keyed {
                addr,
                len: le24(&d[field::SGL_KEYED_LEN]),
                key: le32(&d[field::SGL_KEY]),
            },
            SGL_DATA_OFFSET => DataPtr::InCapsule {
                offset: addr,
                len: le32(&d[field::SGL_LEN]),
            },
            SGL_TRANSPORT => DataPtr::Transport {
                len: le32(&d[field::SGL_LEN]),
            },
            id => return Err(CapsuleError::Sgl(id)),
        };
        let slba = le32(&b[field::CDW10]) as u64 | (le32(&b[field::CDW11]) as u64) << 32;
        Ok(CommandRepr {
            opcode,
            cid: le16(&b[field::CID]),
            nsid: le32(&b[field::NSID]),
            slba,
            blocks: (le32(&b[field::CDW12]) & 0xffff) + 1,
            data,
        })
    }

    /// Writes the entry into the first [`SQE_BYTES`] of `b` (every other byte zero).
    pub fn emit(&self, b: &mut [u8]) {
        let b = &mut b[..SQE_BYTES];
        b.fill(0);
        b[field::OPCODE] = self.opcode as u8;
        b[field::FLAGS] = PSDT_SGL;
        b[field::CID].copy_from_slice(&self.cid.to_le_bytes());
        b[field::NSID].copy_from_slice(&self.nsid.to_le_bytes());
        let d = &mut b[field::DPTR];
        match self.data {
            DataPtr::Keyed { addr, len, key } => {
                debug_assert!(len < 1 << 24, "a keyed SGL length has 24 bits");
                d[field::SGL_ADDR].copy_from_slice(&addr.to_le_bytes());
                d[field::SGL_KEYED_LEN].copy_from_slice(&len.to_le_bytes()[..3]);
                d[field::SGL_KEY].copy_from_slice(&key.to_le_bytes());
                d[field::SGL_ID] = SGL_KEYED_ADDR;
            }
            DataPtr::InCapsule { offset, len } => {
                d[field::SGL_ADDR].copy_from_slice(&offset.to_le_bytes());
                d[field::SGL_LEN].copy_from_slice(&len.to_le_bytes());
                d[field::SGL_ID] = SGL_DATA_OFFSET;
            }
            DataPtr::Transport { len } => {
                d[field::SGL_LEN].copy_from_slice(&len.to_le_bytes());
                d[field::SGL_ID] = SGL_TRANSPORT;
            }
        }
        b[field::CDW10].copy_from_slice(&(self.slba as u32).to_le_bytes());
        b[field::CDW11].copy_from_slice(&((self.slba >> 32) as u32).to_le_bytes());
        let nlb = self.blocks.saturating_sub(1) & 0xffff;
        b[field::CDW12].copy_from_slice(&nlb.to_le_bytes());
    }
}

/// A completion (the response capsule).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CompletionRepr {
    /// Command-specific result (DW0).
    pub result: u32,
    /// Submission queue head pointer.
    pub sq_head: u16,
    /// Submission queue identifier.
    pub sq_id: u16,
    /// The command identifier it completes.
    pub cid: u16,
    /// Status field without the phase tag (0 = successful completion).
    pub status: u16,
}

impl CompletionRepr {
    /// Parses the first [`CQE_BYTES`] of `b`.
    pub fn parse(b: &[u8]) -> Result<CompletionRepr, CapsuleError> {
        if b.len() < CQE_BYTES {
            return Err(CapsuleError::Truncated {
                have: b.len(),
                need: CQE_BYTES,
            });
        }
        Ok(CompletionRepr {
            result: le32(&b[field::CQE_DW0]),
            sq_head: le16(&b[field::CQE_SQHD]),
            sq_id: le16(&b[field::CQE_SQID]),
            cid: le16(&b[field::CQE_CID]),
            status: le16(&b[field::CQE_STATUS]) >> 1,
        })
    }

    /// Writes the entry into the first [`CQE_BYTES`] of `b` (phase tag 0: fabrics do not use it).
    pub fn emit(&self, b: &mut [u8]) {
        let b = &mut b[..CQE_BYTES];
        b.fill(0);
        b[field::CQE_DW0].copy_from_slice(&self.result.to_le_bytes());
        b[field::CQE_SQHD].copy_from_slice(&self.sq_head.to_le_bytes());
        b[field::CQE_SQID].copy_from_slice(&self.sq_id.to_le_bytes());
        b[field::CQE_CID].copy_from_slice(&self.cid.to_le_bytes());
        b[field::CQE_STATUS].copy_from_slice(&((self.status & 0x7fff) << 1).to_le_bytes());
    }
}

pub(crate) fn le16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}
pub(crate) fn le24(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], 0])
}
pub(crate) fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Read of 8 blocks at LBA 0x1_0000_0010, CID 7, NSID 1, into a keyed host buffer at
    /// 0x1122334455667788 of 4096 bytes with R_Key 0xdeadbeef, written out by hand from the
    /// layout in NVMe Base 2.0 §4.1 and §4.6.
    const READ: [u8; 64] = [
        0x02, 0x40, 0x07, 0x00, 0x01, 0x00, 0x00, 0x00, // opcode, PSDT=SGL, CID, NSID
        0, 0, 0, 0, 0, 0, 0, 0, // CDW2-3
        0, 0, 0, 0, 0, 0, 0, 0, // MPTR
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // SGL address
        0x00, 0x10, 0x00, // length 4096 (24 bits)
        0xef, 0xbe, 0xad, 0xde, // key
        0x40, // keyed data block, address
        0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // SLBA
        0x07, 0x00, 0x00, 0x00, // NLB 0-based
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // CDW13-15
    ];

    #[test]
    fn a_keyed_read_parses_from_spec_bytes_and_emits_them_back() {
        let c = CommandRepr::parse(&READ).unwrap();
        assert_eq!(
            c,
            CommandRepr {
                opcode: IoOpcode::Read,
                cid: 7,
                nsid: 1,
                slba: 0x1_0000_0010,
                blocks: 8,
                data: DataPtr::Keyed {
                    addr: 0x1122_3344_5566_7788,
                    len: 4096,
                    key: 0xdead_beef
                },
            }
        );
        let mut out = [0xa5u8; 64];
        c.emit(&mut out);
        assert_eq!(out, READ);
    }

    #[test]
    fn in_capsule_and_transport_pointers_round_trip() {
        for data in [
            DataPtr::InCapsule {
                offset: 0,
                len: 4096,
            },
            DataPtr::Transport { len: 131_072 },
        ] {
            let c = CommandRepr {
                opcode: IoOpcode::Write,
                cid: 0xffff,
                nsid: 1,
                slba: 12,
                blocks: 32,
                data,
            };
            let mut b = [0xa5u8; 64];
            c.emit(&mut b);
            assert_eq!(CommandRepr::parse(&b).unwrap(), c);
        }
    }

    #[test]
    fn a_completion_round_trips_and_keeps_the_phase_bit_out_of_the_status() {
        let r = CompletionRepr {
            result: 0,
            sq_head: 3,
            sq_id: 1,
            cid: 7,
            status: 0,
        };
        let mut b = [0xa5u8; 16];
        r.emit(&mut b);
        assert_eq!(b, [0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 7, 0, 0, 0]);
        assert_eq!(CompletionRepr::parse(&b).unwrap(), r);
        b[14] = 0x01; // phase tag only
        assert_eq!(CompletionRepr::parse(&b).unwrap().status, 0);
    }

    #[test]
    fn bad_capsules_are_refused_by_name() {
        assert_eq!(
            CommandRepr::parse(&READ[..63]),
            Err(CapsuleError::Truncated { have: 63, need: 64 })
        );
        let mut b = READ;
        b[0] = 0x09;
        assert_eq!(CommandRepr::parse(&b), Err(CapsuleError::Opcode(0x09)));
        let mut b = READ;
        b[1] = 0;
        assert_eq!(CommandRepr::parse(&b), Err(CapsuleError::Psdt(0)));
        let mut b = READ;
        b[39] = 0x30;
        assert_eq!(CommandRepr::parse(&b), Err(CapsuleError::Sgl(0x30)));
    }
}
