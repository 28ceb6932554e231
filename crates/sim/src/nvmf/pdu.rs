//! NVMe/TCP PDUs: the common header, the five PDU types an I/O queue carries (CapsuleCmd,
//! CapsuleResp, H2CData, C2HData, R2T) and the optional header and data digests (CRC32C).
//!
//! Read first: NVMe over TCP Transport Specification 1.0, §3.3 (PDU structure: an 8-byte
//! common header `type, flags, hlen, pdo, plen`; the PDU-specific header; HDGST after the
//! header; data at `pdo`; DDGST after the data), §3.6.2 (each PDU type's header and flags:
//! HDGSTF 01h, DDGSTF 02h, LAST_PDU 04h, SUCCESS 08h). Layout cross-checked against Linux
//! `include/linux/nvme-tcp.h` (`struct nvme_tcp_hdr`, `nvme_tcp_cmd_pdu`, `nvme_tcp_rsp_pdu`,
//! `nvme_tcp_data_pdu`, `nvme_tcp_r2t_pdu`). Digests: CRC32C (Castagnoli, RFC 3720 §12.1),
//! little-endian on the wire; no padding between header digest and data (CPDA 0).
//!
//! Not modelled: ICReq/ICResp (the connection is taken as initialised with the digests both
//! sides chose) and the termination PDUs.

use super::capsule::{CQE_BYTES, CapsuleError, CommandRepr, CompletionRepr, SQE_BYTES, le16, le32};

/// Bytes of the common header.
pub const CH_BYTES: usize = 8;
/// Bytes of a digest.
pub const DIGEST_BYTES: usize = 4;
/// Header length of data and R2T PDUs (common header + 16).
const DATA_HLEN: usize = 24;

/// PDU types on an I/O queue (§3.6.1 numbering).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum PduType {
    /// Command capsule, host to controller.
    CapsuleCmd = 0x04,
    /// Response capsule, controller to host.
    CapsuleResp = 0x05,
    /// Host-to-controller data (a write's data after an R2T).
    H2CData = 0x06,
    /// Controller-to-host data (a read's data).
    C2HData = 0x07,
    /// Ready to transfer: the controller asks for a write's data.
    R2T = 0x09,
}

impl PduType {
    fn from_u8(v: u8) -> Result<PduType, PduError> {
        Ok(match v {
            0x04 => PduType::CapsuleCmd,
            0x05 => PduType::CapsuleResp,
            0x06 => PduType::H2CData,
            0x07 => PduType::C2HData,
            0x09 => PduType::R2T,
            v => return Err(PduError::Type(v)),
        })
    }

    fn hlen(self) -> usize {
        match self {
            PduType::CapsuleCmd => CH_BYTES + SQE_BYTES,
            PduType::CapsuleResp => CH_BYTES + CQE_BYTES,
            PduType::H2CData | PduType::C2HData | PduType::R2T => DATA_HLEN,
        }
    }
}

mod flag {
    pub const HDGST: u8 = 0x01;
    pub const DDGST: u8 = 0x02;
    pub const LAST_PDU: u8 = 0x04;
    pub const SUCCESS: u8 = 0x08;
}

/// A PDU could not be parsed.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum PduError {
    /// A type this model does not carry.
    #[error("PDU type {0:#04x} is not an I/O queue PDU")]
    Type(u8),
    /// HLEN does not match the type.
    #[error("PDU type {pdu_type:#04x} has HLEN {hlen}, the type fixes {want}")]
    Hlen {
        /// The type.
        pdu_type: u8,
        /// HLEN given.
        hlen: u8,
        /// HLEN the type has.
        want: usize,
    },
    /// PLEN or PDO inconsistent with the header.
    #[error("PDU lengths inconsistent: hlen {hlen}, pdo {pdo}, plen {plen}")]
    Lengths {
        /// HLEN.
        hlen: u8,
        /// PDO.
        pdo: u8,
        /// PLEN.
        plen: u32,
    },
    /// A digest did not match.
    #[error("{which} digest mismatch: carried {carried:#010x}, computed {computed:#010x}")]
    Digest {
        /// "header" or "data".
        which: &'static str,
        /// The digest in the PDU.
        carried: u32,
        /// The digest of the bytes.
        computed: u32,
    },
    /// The capsule inside is malformed.
    #[error(transparent)]
    Capsule(#[from] CapsuleError),
}

/// The header of an H2CData or C2HData PDU.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DataHeader {
    /// The command's identifier.
    pub cccid: u16,
    /// Transfer tag (the R2T's, for H2CData).
    pub ttag: u16,
    /// Offset of this PDU's data in the command's data.
    pub offset: u32,
    /// Bytes of data in this PDU.
    pub len: u32,
    /// LAST_PDU: the last data PDU of the command (or of the R2T).
    pub last: bool,
    /// SUCCESS (C2HData only): the command succeeded and no response capsule follows.
    pub success: bool,
}

/// The header of an R2T PDU.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct R2tHeader {
    /// The command's identifier.
    pub cccid: u16,
    /// Transfer tag the host echoes in its H2CData.
    pub ttag: u16,
    /// Offset of the data asked for.
    pub offset: u32,
    /// Bytes asked for.
    pub len: u32,
}

/// One PDU's header, parsed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Pdu {
    /// A command capsule with `data_len` bytes of in-capsule data.
    CapsuleCmd {
        /// The command.
        cmd: CommandRepr,
        /// In-capsule data bytes that follow.
        data_len: u32,
    },
    /// A response capsule.
    CapsuleResp(CompletionRepr),
    /// Host-to-controller data.
    H2CData(DataHeader),
    /// Controller-to-host data.
    C2HData(DataHeader),
    /// Ready to transfer.
    R2T(R2tHeader),
}

impl Pdu {
    /// Its type.
    pub fn pdu_type(&self) -> PduType {
        match self {
            Pdu::CapsuleCmd { .. } => PduType::CapsuleCmd,
            Pdu::CapsuleResp(_) => PduType::CapsuleResp,
            Pdu::H2CData(_) => PduType::H2CData,
            Pdu::C2HData(_) => PduType::C2HData,
            Pdu::R2T(_) => PduType::R2T,
        }
    }

    /// Bytes of data it carries.
    pub fn data_len(&self) -> u32 {
        match *self {
            Pdu::CapsuleCmd { data_len, .. } => data_len,
            Pdu::H2CData(d) | Pdu::C2HData(d) => d.len,
            Pdu::CapsuleResp(_) | Pdu::R2T(_) => 0,
        }
    }
}

/// Which digests a connection carries (negotiated in ICReq/ICResp).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq, serde::Serialize)]
pub struct Digests {
    /// HDGST on every PDU.
    pub header: bool,
    /// DDGST on every PDU that carries data.
    pub data: bool,
}

impl Digests {
    /// Bytes a PDU of `pdu`'s type with `data_len` data bytes takes on the stream.
    pub fn wire_len(&self, pdu: PduType, data_len: u32) -> usize {
        let h = pdu.hlen() + if self.header { DIGEST_BYTES } else { 0 };
        let d = if data_len > 0 {
            data_len as usize + if self.data { DIGEST_BYTES } else { 0 }
        } else {
            0
        };
        h + d
    }
}

/// Appends `pdu` with `data` (whose length must be `pdu.data_len()`) to `out`.
pub fn emit(pdu: &Pdu, data: &[u8], dg: Digests, out: &mut Vec<u8>) {
    debug_assert_eq!(
        data.len(),
        pdu.data_len() as usize,
        "data length is the header's"
    );
    let ty = pdu.pdu_type();
    let hlen = ty.hlen();
    let start = out.len();
    let total = dg.wire_len(ty, data.len() as u32);
    out.resize(start + hlen, 0);
    let has_data = !data.is_empty();
    let mut flags = 0;
    if dg.header {
        flags |= flag::HDGST;
    }
    if dg.data && has_data {
        flags |= flag::DDGST;
    }
    let h = &mut out[start..start + hlen];
    match *pdu {
        Pdu::CapsuleCmd { cmd, .. } => cmd.emit(&mut h[CH_BYTES..]),
        Pdu::CapsuleResp(r) => r.emit(&mut h[CH_BYTES..]),
        Pdu::H2CData(d) | Pdu::C2HData(d) => {
            if d.last {
                flags |= flag::LAST_PDU;
            }
            if d.success {
                flags |= flag::SUCCESS;
            }
            put_psh(h, d.cccid, d.ttag, d.offset, d.len);
        }
        Pdu::R2T(r) => put_psh(h, r.cccid, r.ttag, r.offset, r.len),
    }
    let pdo = if has_data {
        hlen + if dg.header { DIGEST_BYTES } else { 0 }
    } else {
        0
    };
    h[0] = ty as u8;
    h[1] = flags;
    h[2] = hlen as u8;
    h[3] = pdo as u8;
    h[4..8].copy_from_slice(&(total as u32).to_le_bytes());
    if dg.header {
        let c = crc32c(&out[start..start + hlen]);
        out.extend_from_slice(&c.to_le_bytes());
    }
    if has_data {
        out.extend_from_slice(data);
        if dg.data {
            out.extend_from_slice(&crc32c(data).to_le_bytes());
        }
    }
    debug_assert_eq!(out.len() - start, total);
}

fn put_psh(h: &mut [u8], cccid: u16, ttag: u16, offset: u32, len: u32) {
    h[8..10].copy_from_slice(&cccid.to_le_bytes());
    h[10..12].copy_from_slice(&ttag.to_le_bytes());
    h[12..16].copy_from_slice(&offset.to_le_bytes());
    h[16..20].copy_from_slice(&len.to_le_bytes());
}

/// A whole PDU found at the front of a byte stream.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Parsed {
    /// The header.
    pub pdu: Pdu,
    /// Where its data is in the buffer given (empty when none).
    pub data: core::ops::Range<usize>,
    /// Bytes the whole PDU took (PLEN).
    pub len: usize,
}

/// Parses the PDU at the front of `b`: `Ok(None)` when `b` does not hold all of it yet. The
/// digests are checked when the PDU's flags say they are there.
pub fn parse(b: &[u8]) -> Result<Option<Parsed>, PduError> {
    if b.len() < CH_BYTES {
        return Ok(None);
    }
    let ty = PduType::from_u8(b[0])?;
    let (flags, hlen, pdo, plen) = (b[1], b[2], b[3], le32(&b[4..8]));
    if hlen as usize != ty.hlen() {
        return Err(PduError::Hlen {
            pdu_type: b[0],
            hlen,
            want: ty.hlen(),
        });
    }
    let hd = if flags & flag::HDGST != 0 {
        DIGEST_BYTES
    } else {
        0
    };
    let dd = if flags & flag::DDGST != 0 {
        DIGEST_BYTES
    } else {
        0
    };
    let head = hlen as usize + hd;
    let bad = PduError::Lengths { hlen, pdo, plen };
    let plen_us = plen as usize;
    let data_start = if pdo == 0 { plen_us } else { pdo as usize };
    if plen_us < head || data_start < head || data_start > plen_us {
        return Err(bad);
    }
    let data_len = (plen_us - data_start).checked_sub(if data_start < plen_us { dd } else { 0 });
    let Some(data_len) = data_len else {
        return Err(bad);
    };
    if b.len() < plen_us {
        return Ok(None);
    }
    if hd > 0 {
        let carried = le32(&b[hlen as usize..head]);
        let computed = crc32c(&b[..hlen as usize]);
        if carried != computed {
            return Err(PduError::Digest {
                which: "header",
                carried,
                computed,
            });
        }
    }
    let data = data_start..data_start + data_len;
    if dd > 0 && data_len > 0 {
        let carried = le32(&b[data.end..data.end + DIGEST_BYTES]);
        let computed = crc32c(&b[data.clone()]);
        if carried != computed {
            return Err(PduError::Digest {
                which: "data",
                carried,
                computed,
            });
        }
    }
    let h = &b[..hlen as usize];
    let psh = |h: &[u8]| {
        (
            le16(&h[8..10]),
            le16(&h[10..12]),
            le32(&h[12..16]),
            le32(&h[16..20]),
        )
    };
    let pdu = match ty {
        PduType::CapsuleCmd => Pdu::CapsuleCmd {
            cmd: CommandRepr::parse(&h[CH_BYTES..])?,
            data_len: data_len as u32,
        },
        PduType::CapsuleResp => Pdu::CapsuleResp(CompletionRepr::parse(&h[CH_BYTES..])?),
        PduType::H2CData | PduType::C2HData => {
            let (cccid, ttag, offset, len) = psh(h);
            if len as usize != data_len {
                return Err(bad);
            }
            let d = DataHeader {
                cccid,
                ttag,
                offset,
                len,
                last: flags & flag::LAST_PDU != 0,
                success: flags & flag::SUCCESS != 0,
            };
            if ty == PduType::H2CData {
                Pdu::H2CData(d)
            } else {
                Pdu::C2HData(d)
            }
        }
        PduType::R2T => {
            let (cccid, ttag, offset, len) = psh(h);
            Pdu::R2T(R2tHeader {
                cccid,
                ttag,
                offset,
                len,
            })
        }
    };
    Ok(Some(Parsed {
        pdu,
        data,
        len: plen_us,
    }))
}

/// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI and NVMe/TCP digests use
/// it: initial value all ones, final complement.
pub fn crc32c(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82f6_3b78
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut crc = !0u32;
    for &b in bytes {
        crc = TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::super::capsule::{DataPtr, IoOpcode};
    use super::*;

    #[test]
    fn crc32c_matches_the_rfc_3720_test_vectors() {
        // RFC 3720 appendix B.4: 32 bytes of zeros, of ones, and 0..31 ascending.
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        let inc: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&inc), 0x46dd_794e);
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    fn cmd(data: DataPtr) -> CommandRepr {
        CommandRepr {
            opcode: IoOpcode::Write,
            cid: 5,
            nsid: 1,
            slba: 100,
            blocks: 8,
            data,
        }
    }

    #[test]
    fn every_pdu_type_round_trips_with_and_without_digests() {
        let data = crate::pattern(3, 4096);
        let pdus = [
            (
                Pdu::CapsuleCmd {
                    cmd: cmd(DataPtr::InCapsule {
                        offset: 0,
                        len: 4096,
                    }),
                    data_len: 4096,
                },
                &data[..],
            ),
            (
                Pdu::CapsuleCmd {
                    cmd: cmd(DataPtr::Transport { len: 65536 }),
                    data_len: 0,
                },
                &[][..],
            ),
            (
                Pdu::CapsuleResp(CompletionRepr {
                    result: 0,
                    sq_head: 9,
                    sq_id: 1,
                    cid: 5,
                    status: 0,
                }),
                &[][..],
            ),
            (
                Pdu::C2HData(DataHeader {
                    cccid: 5,
                    ttag: 0,
                    offset: 0,
                    len: 4096,
                    last: true,
                    success: false,
                }),
                &data[..],
            ),
            (
                Pdu::H2CData(DataHeader {
                    cccid: 5,
                    ttag: 3,
                    offset: 4096,
                    len: 4096,
                    last: true,
                    success: false,
                }),
                &data[..],
            ),
            (
                Pdu::R2T(R2tHeader {
                    cccid: 5,
                    ttag: 3,
                    offset: 0,
                    len: 65536,
                }),
                &[][..],
            ),
        ];
        for dg in [
            Digests::default(),
            Digests {
                header: true,
                data: true,
            },
        ] {
            for (pdu, d) in pdus {
                let mut out = vec![0xa5u8; 3];
                emit(&pdu, d, dg, &mut out);
                let b = &out[3..];
                assert_eq!(b.len(), dg.wire_len(pdu.pdu_type(), d.len() as u32));
                let p = parse(b).unwrap().unwrap();
                assert_eq!(p.pdu, pdu);
                assert_eq!(&b[p.data.clone()], d);
                assert_eq!(p.len, b.len());
                // Any prefix is "not yet".
                assert_eq!(parse(&b[..b.len() - 1]).unwrap(), None);
            }
        }
    }

    #[test]
    fn a_capsule_response_has_the_spec_layout() {
        let mut out = Vec::new();
        let r = CompletionRepr {
            result: 0,
            sq_head: 1,
            sq_id: 1,
            cid: 0x0102,
            status: 0,
        };
        emit(&Pdu::CapsuleResp(r), &[], Digests::default(), &mut out);
        assert_eq!(
            out,
            [
                0x05, 0x00, 24, 0, 24, 0, 0, 0, // CH: type, flags, hlen, pdo 0, plen 24
                0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0x02, 0x01, 0, 0
            ]
        );
    }

    #[test]
    fn a_corrupted_digest_is_refused_by_name() {
        let dg = Digests {
            header: true,
            data: true,
        };
        let data = [7u8; 512];
        let mut out = Vec::new();
        let d = DataHeader {
            cccid: 1,
            ttag: 0,
            offset: 0,
            len: 512,
            last: true,
            success: false,
        };
        emit(&Pdu::C2HData(d), &data, dg, &mut out);
        let mut bad = out.clone();
        bad[30] ^= 1;
        assert!(matches!(
            parse(&bad),
            Err(PduError::Digest { which: "data", .. })
        ));
        let mut bad = out.clone();
        bad[9] ^= 1;
        assert!(matches!(
            parse(&bad),
            Err(PduError::Digest {
                which: "header",
                ..
            })
        ));
        let mut bad = out;
        bad[2] = 30;
        assert!(matches!(parse(&bad), Err(PduError::Hlen { .. })));
    }
}
