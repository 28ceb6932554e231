//! The RoCEv2 transport headers of a frame, field by field: the BTH, each extension header the
//! opcode calls for (IBTA vol. 1 §9.2–9.3, RoCEv2 annex A17), the payload and the ICRC.

use super::*;

impl Walk<'_> {
    /// The RoCEv2 transport: BTH to ICRC, frame bytes `t`.
    pub(super) fn roce(&mut self, t: Range<usize>) -> crate::Result<()> {
        let bytes = self.bytes;
        let b = bth::Packet::new_checked(&bytes[t.clone()])?;
        use bth::field as f;
        let raw_op = b.opcode();
        let opcode = Opcode::from_u8(raw_op);
        let op_field = field("OpCode", bytes_at(f::OPCODE..f::OPCODE + 1), raw_op.into());
        let reserved8 = bytes[t.start + f::ACK_REQ] & !(bth::ACK_REQ | irn::MARK);
        let reserved4 = bytes[t.start + f::FECN_BECN] & !(bth::FECN | bth::BECN);
        let pkey = b.pkey();
        let pkey_field = field("P_Key", bytes_at(f::PKEY), pkey.into());
        self.push(
            Kind::Bth,
            t.start,
            bth::HEADER_LEN,
            vec![
                match opcode {
                    Ok(op) => op_field.means(Meaning::Opcode(op)),
                    Err(_) => op_field,
                },
                field("SE", bits8(f::FLAGS, bth::SE), b.solicited_event().into()),
                field("M", bits8(f::FLAGS, bth::MIG_REQ), b.mig_req().into()),
                field(
                    "PadCnt",
                    bits8(f::FLAGS, bth::PAD_MASK),
                    b.pad_count().into(),
                )
                .means(Meaning::Bytes(b.pad_count().into())),
                field(
                    "TVer",
                    bits8(f::FLAGS, bth::TVER_MASK),
                    b.transport_version().into(),
                ),
                if pkey == crate::ib::DEFAULT_PKEY {
                    pkey_field.means(Meaning::DefaultPkey)
                } else {
                    pkey_field
                },
                field("FECN", bits8(f::FECN_BECN, bth::FECN), b.fecn().into()),
                field("BECN", bits8(f::FECN_BECN, bth::BECN), b.becn().into()),
                field(
                    "Resv6",
                    bits8(f::FECN_BECN, !(bth::FECN | bth::BECN)),
                    reserved4.into(),
                )
                .means(Meaning::Reserved),
                field("DestQP", bytes_at(f::DEST_QP), b.dest_qp().into()),
                field("A", bits8(f::ACK_REQ, bth::ACK_REQ), b.ack_req().into()),
                field("IRN", bits8(f::ACK_REQ, irn::MARK), b.irn_mark().into()),
                // IBTA's Resv7 is the seven bits after A; rdmalab's IRN flag takes the first,
                // so the field shown is the six left, under IBTA's name.
                field(
                    "Resv7",
                    bits8(f::ACK_REQ, !(bth::ACK_REQ | irn::MARK)),
                    reserved8.into(),
                )
                .means(Meaning::Reserved),
                field("PSN", bytes_at(f::PSN), b.psn().into()),
            ],
        );
        let opcode = opcode?;
        if b.transport_version() != 0 {
            return Err(Error::Malformed("BTH transport version is not 0"));
        }
        let Some(body_end) = t.end.checked_sub(ICRC_LEN) else {
            return Err(Error::Truncated("ICRC"));
        };
        if body_end < t.start + bth::HEADER_LEN {
            return Err(Error::Truncated("ICRC"));
        }
        let mut off = t.start + bth::HEADER_LEN;
        if opcode.is_cnp() {
            let r = cnp::field::RESERVED;
            if bytes.len() < t.start + r.end {
                return Err(Error::Truncated("CNP"));
            }
            self.push(
                Kind::CnpReserved,
                t.start + r.start,
                r.len(),
                vec![bytes_field("Reserved", 0..r.len()).means(Meaning::Reserved)],
            );
            off = t.start + r.end;
        } else {
            off = self.ext_headers(opcode, b.irn_mark(), off..body_end)?;
            let pad = usize::from(b.pad_count());
            let Some(payload_len) = (body_end - off).checked_sub(pad) else {
                return Err(Error::Malformed("BTH pad count larger than the packet"));
            };
            let mad_len = if opcode == Opcode::UD_SEND_ONLY && b.dest_qp() == crate::ib::mad::GSI_QP
            {
                self.gsi_mad(off, payload_len)
            } else {
                0
            };
            off += mad_len;
            let payload_len = payload_len - mad_len;
            if payload_len > 0 {
                self.push_cited(
                    Kind::Payload,
                    off,
                    payload_len,
                    vec![bytes_field("Data", 0..payload_len)],
                    "IBTA Annex A17 §A17.3",
                );
            }
            off += payload_len;
            if pad > 0 {
                self.push(
                    Kind::Pad,
                    off,
                    pad,
                    vec![bytes_field("Pad", 0..pad).means(Meaning::Reserved)],
                );
            }
            off += pad;
        }
        if off != body_end {
            return Err(Error::Malformed("bytes between the headers and the ICRC"));
        }
        // The ICRC covers the IPv4 packet: from the IPv4 header (20 bytes, no options: what
        // icrc::compute reads the IHL from) to the pad.
        let ip_start = self
            .headers
            .iter()
            .find(|h| h.kind == Kind::Ipv4)
            .map_or(0, |h| h.start);
        let covered = ip_start..body_end;
        let carried = [
            bytes[body_end],
            bytes[body_end + 1],
            bytes[body_end + 2],
            bytes[body_end + 3],
        ];
        let verdict = if self.touches_elided(covered.clone()) {
            Verdict::Unchecked
        } else {
            let computed = icrc::compute(&bytes[covered])?;
            if computed == carried {
                Verdict::Good
            } else {
                Verdict::Bad {
                    computed: icrc::as_displayed(computed).into(),
                }
            }
        };
        self.push(
            Kind::Icrc,
            body_end,
            ICRC_LEN,
            vec![
                field(
                    "ICRC",
                    bytes_at(0..ICRC_LEN),
                    icrc::as_displayed(carried).into(),
                )
                .means(Meaning::Check(verdict)),
            ],
        );
        Ok(())
    }

    /// The extension headers `opcode` calls for, in frame bytes `r`; returns where they end.
    pub(super) fn ext_headers(
        &mut self,
        opcode: Opcode,
        irn_mark: bool,
        r: Range<usize>,
    ) -> crate::Result<usize> {
        let bytes = &self.bytes[..r.end];
        let mut off = r.start;
        if opcode.has_rdeth() {
            let p = rdeth::Packet::new_checked(&bytes[off..])?;
            use rdeth::field as f;
            self.push(
                Kind::Rdeth,
                off,
                rdeth::HEADER_LEN,
                vec![
                    field("Reserved", bytes_at(f::RESERVED..f::RESERVED + 1), 0)
                        .means(Meaning::Reserved),
                    field("EECnxt", bytes_at(f::EE_CONTEXT), p.ee_context().into()),
                ],
            );
            off += rdeth::HEADER_LEN;
        }
        if opcode.has_deth() {
            let p = deth::Packet::new_checked(&bytes[off..])?;
            use deth::field as f;
            self.push(
                Kind::Deth,
                off,
                deth::HEADER_LEN,
                vec![
                    field("Q_Key", bytes_at(f::QKEY), p.qkey().into()),
                    field("Reserved", bytes_at(f::RESERVED..f::RESERVED + 1), 0)
                        .means(Meaning::Reserved),
                    field("SrcQP", bytes_at(f::SRC_QP), p.src_qp().into()),
                ],
            );
            off += deth::HEADER_LEN;
        }
        if opcode.has_feth() {
            let p = feth::Packet::new_checked(&bytes[off..])?;
            let word = (feth::PLT_MASK | feth::SEL_MASK).leading_zeros() as usize;
            self.push(
                Kind::Feth,
                off,
                feth::HEADER_LEN,
                vec![
                    field("Reserved", (0, word), 0).means(Meaning::Reserved),
                    field(
                        "SEL",
                        (
                            feth::SEL_MASK.leading_zeros() as usize,
                            feth::SEL_MASK.count_ones() as usize,
                        ),
                        p.selectivity_level().into(),
                    ),
                    field(
                        "PLT",
                        (
                            feth::PLT_MASK.leading_zeros() as usize,
                            feth::PLT_MASK.count_ones() as usize,
                        ),
                        p.placement_type().into(),
                    ),
                ],
            );
            off += feth::HEADER_LEN;
        }
        if opcode.has_reth() {
            off = self.reth(Kind::Reth, off)?;
        }
        if opcode.has_atomic_eth() {
            let p = atomic_eth::Packet::new_checked(&bytes[off..])?;
            use atomic_eth::field as f;
            self.push(
                Kind::AtomicEth,
                off,
                atomic_eth::HEADER_LEN,
                vec![
                    field("VA", bytes_at(f::VA), p.va()),
                    field("R_Key", bytes_at(f::RKEY), p.rkey().into()),
                    field("SwapAddData", bytes_at(f::SWAP_ADD), p.swap_add()),
                    field("CmpData", bytes_at(f::COMPARE), p.compare()),
                ],
            );
            off += atomic_eth::HEADER_LEN;
        }
        if opcode.has_aeth() {
            let p = aeth::Packet::new_checked(&bytes[off..])?;
            use aeth::field as f;
            let syn = p.syndrome();
            let typed = aeth::Syndrome::from_byte(syn);
            let s = field(
                "Syndrome",
                bytes_at(f::SYNDROME..f::SYNDROME + 1),
                syn.into(),
            );
            self.push(
                Kind::Aeth,
                off,
                aeth::HEADER_LEN,
                vec![
                    match typed {
                        Ok(t) => s.means(Meaning::Syndrome(t)),
                        Err(_) => s,
                    },
                    field("MSN", bytes_at(f::MSN), p.msn().into()),
                ],
            );
            typed?;
            off += aeth::HEADER_LEN;
        }
        if opcode.has_atomic_ack_eth() {
            let p = atomic_ack_eth::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::AtomicAckEth,
                off,
                atomic_ack_eth::HEADER_LEN,
                vec![field(
                    "OrigRemDt",
                    bytes_at(atomic_ack_eth::field::ORIG_REMOTE_DATA),
                    p.orig_remote_data(),
                )],
            );
            off += atomic_ack_eth::HEADER_LEN;
        }
        if opcode.has_immdt() {
            let p = immdt::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::ImmDt,
                off,
                immdt::HEADER_LEN,
                vec![field(
                    "Immediate Data",
                    bytes_at(immdt::field::IMM),
                    p.imm().into(),
                )],
            );
            off += immdt::HEADER_LEN;
        }
        if opcode.has_ieth() {
            let p = ieth::Packet::new_checked(&bytes[off..])?;
            self.push(
                Kind::Ieth,
                off,
                ieth::HEADER_LEN,
                vec![field("R_Key", bytes_at(ieth::field::RKEY), p.rkey().into())],
            );
            off += ieth::HEADER_LEN;
        }
        if irn_mark {
            let repr = irn::Repr::parse(opcode, &bytes[off..])?;
            match repr {
                irn::Repr::Write(_) => {
                    off = self.reth(Kind::Irn, off)?;
                }
                irn::Repr::Send { wqe_sn, offset } => {
                    self.push(
                        Kind::Irn,
                        off,
                        irn::SEND_LEN,
                        vec![
                            field("WQE_SN", bytes_at(0..4), wqe_sn.into()),
                            field("Offset", bytes_at(4..8), offset.into())
                                .means(Meaning::Bytes(offset.into())),
                        ],
                    );
                    off += irn::SEND_LEN;
                }
                irn::Repr::Sack { psn, received } => {
                    self.push(
                        Kind::Irn,
                        off,
                        irn::SACK_LEN,
                        vec![
                            field("Reserved", bytes_at(0..1), 0).means(Meaning::Reserved),
                            field("Trigger PSN", bytes_at(1..4), psn.into()),
                            field("SACK map", bytes_at(4..12), received)
                                .means(Meaning::SackHeld(received.count_ones())),
                        ],
                    );
                    off += irn::SACK_LEN;
                }
            }
        }
        Ok(off)
    }

    /// A RETH (or the IRN extension's per-packet RETH) at frame byte `off`.
    pub(super) fn reth(&mut self, kind: Kind, off: usize) -> crate::Result<usize> {
        let p = reth::Packet::new_checked(&self.bytes[off..])?;
        use reth::field as f;
        let len = p.dma_len();
        self.push(
            kind,
            off,
            reth::HEADER_LEN,
            vec![
                field("VA", bytes_at(f::VA), p.va()),
                field("R_Key", bytes_at(f::RKEY), p.rkey().into()),
                field("DMA Length", bytes_at(f::DMA_LEN), len.into())
                    .means(Meaning::Bytes(len.into())),
            ],
        );
        Ok(off + reth::HEADER_LEN)
    }
}
