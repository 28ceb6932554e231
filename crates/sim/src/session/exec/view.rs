//! What the report shows after each step: the verbs objects (QPs, CQs, MRs, channels), the
//! buffers' bytes and what changed in them, and the frames the hosts sent.

use super::{Bound, Exec, changed_ranges};
use crate::session::parse::opcode_name;
use crate::session::plan::{HandleId, limits};
use crate::session::report::{
    AethView, BufferView, ChannelView, CqView, FrameRecord, MrView, NotifyView, QpView, RethView,
    RqEntry, SackView, SqEntry, StepState,
};
use fabric::Payload;
use verbs::{NotifyArm, WqeState};
use wire::ib::aeth::Syndrome;
use wire::ib::{Opcode, irn};

impl Exec<'_> {
    /// The verbs objects the session has created, as they stand now.
    pub(super) fn snapshot(&self) -> StepState {
        let mut st = StepState::default();
        for (i, info) in self.s.handles.iter().enumerate() {
            let id = HandleId(i);
            let h = info.host.0 as u32;
            let name = self.s.name(id).to_string();
            let host = self.s.host_name(info.host).to_string();
            let verbs = &self.world.host(h).verbs;
            match self.bound[i] {
                Some(Bound::Qp(qpn)) => {
                    let (Ok((attr, init)), Ok(q)) = (verbs.query_qp(qpn), verbs.qp_queues(qpn))
                    else {
                        continue; // destroyed
                    };
                    st.qps.push(QpView {
                        name,
                        host,
                        qpn: qpn.get(),
                        qp_type: init.qp_type.name().to_string(),
                        state: attr.qp_state.name().to_string(),
                        sq_more: q.send.len().saturating_sub(limits::MAX_LISTED),
                        rq_more: q.recv.len().saturating_sub(limits::MAX_LISTED),
                        sq: q
                            .send
                            .iter()
                            .take(limits::MAX_LISTED)
                            .map(|&(wr_id, op, stage)| SqEntry {
                                wr_id,
                                opcode: opcode_name(op).to_string(),
                                stage: match stage {
                                    WqeState::Posted => "posted",
                                    WqeState::Started => "started",
                                    WqeState::Done(_) => "done",
                                }
                                .to_string(),
                            })
                            .collect(),
                        rq: q
                            .recv
                            .iter()
                            .take(limits::MAX_LISTED)
                            .map(|&wr_id| RqEntry { wr_id })
                            .collect(),
                    });
                }
                Some(Bound::Channel(ch)) => {
                    let Some(c) = verbs.channel(ch) else { continue };
                    st.channels.push(ChannelView {
                        name,
                        host,
                        events: c.pending(),
                    });
                }
                Some(Bound::Cq(c)) => {
                    let Some(cq) = verbs.cq(c) else { continue };
                    let notify =
                        (cq.channel().is_some() || cq.arm().is_some() || cq.events_unacked() > 0)
                            .then(|| NotifyView {
                                channel: cq.channel().map(|ch| self.channel_name(h, ch)),
                                armed: cq.arm().map(|a| {
                                    match a {
                                        NotifyArm::Any => "any",
                                        NotifyArm::SolicitedOnly => "solicited",
                                    }
                                    .to_string()
                                }),
                                events_unacked: cq.events_unacked(),
                            });
                    st.cqs.push(CqView {
                        notify,
                        name,
                        host,
                        cqe: cq.cqe(),
                        entries: cq
                            .entries()
                            .take(limits::MAX_LISTED)
                            .map(|w| self.wc_record(h, w))
                            .collect(),
                        entries_more: cq.len().saturating_sub(limits::MAX_LISTED),
                    });
                }
                Some(Bound::Mr(mr)) => {
                    if verbs.mr(mr.handle()).is_none() {
                        continue; // deregistered
                    }
                    st.mrs.push(MrView {
                        name,
                        host,
                        lkey: mr.lkey,
                        rkey: mr.rkey,
                        len: mr.len,
                        access: mr.access.iter_names().map(str::to_string).collect(),
                    });
                }
                _ => {}
            }
        }
        st
    }

    /// Every buffer's memory view after a step: the first `MEMORY_COMPARE_BYTES` compared with
    /// the previous view, a `MEMORY_VIEW_BYTES` window placed at the first change (else where
    /// it was), its hex only when the window or its bytes changed. Bounded: at most
    /// `MAX_LISTED` buffers, 4 KiB read and compared per buffer.
    pub(super) fn memory_views(&mut self) -> Vec<BufferView> {
        let mut out = Vec::new();
        for (i, info) in self.s.handles.iter().enumerate() {
            let Some(Bound::Buffer { va }) = self.bound[i] else {
                continue;
            };
            if out.len() >= limits::MAX_LISTED {
                break;
            }
            let h = info.host.0 as u32;
            let mem = self.world.host(h).verbs.memory();
            let Some(buf) = mem.buffer_at(va).filter(|b| b.start == va) else {
                continue; // freed
            };
            let n = buf.len.min(limits::MEMORY_COMPARE_BYTES);
            let Ok(now) = mem.read_vec(va, n) else {
                continue;
            };
            let (old, old_off) = match &self.mem_seen[i] {
                Some((b, o)) => (Some(b.as_slice()), *o),
                None => (None, 0),
            };
            let mut changed = match old {
                Some(old) => changed_ranges(old, &now),
                None => Vec::new(),
            };
            let view = limits::MEMORY_VIEW_BYTES.min(n);
            let offset = match changed.first() {
                Some(&[start, _]) => (start / 16 * 16).min(n - view),
                None => old_off,
            };
            let window = |b: &[u8]| {
                b.get(offset as usize..(offset + view) as usize)
                    .map(<[u8]>::to_vec)
            };
            let fresh = old.is_none_or(|o| offset != old_off || window(o) != window(&now));
            let hex = fresh.then(|| {
                now[offset as usize..(offset + view) as usize]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            });
            let changed_more = changed.len().saturating_sub(limits::MEMORY_MAX_RANGES);
            changed.truncate(limits::MEMORY_MAX_RANGES);
            out.push(BufferView {
                name: self.s.name(HandleId(i)).to_string(),
                host: self.s.host_name(info.host).to_string(),
                va,
                len: buf.len,
                offset,
                hex,
                changed,
                changed_more,
            });
            self.mem_seen[i] = Some((now, offset));
        }
        out
    }

    /// The frames hosts sent since the last call, and how many more the log left out.
    pub(super) fn frames(&mut self) -> (Vec<FrameRecord>, usize) {
        let (log, skipped) = self.world.take_frame_log();
        let frames = log
            .into_iter()
            .map(|logged| {
                let (at, pkt, wr_id) = (logged.at, logged.pkt, logged.wr_id);
                let name = |node: units::NodeId| {
                    self.world.host_of_node(node).map_or_else(
                        || format!("node {}", node.0),
                        |h| self.s.hosts[h.index()].clone(),
                    )
                };
                let (mut reth, mut aeth, mut imm, mut sack) = (None, None, None, None);
                let (kind, opcode, psn, qpn) = match pkt.payload {
                    Payload::Roce { hdr, .. } => {
                        reth = hdr.ext.reth.map(|r| RethView {
                            va: r.va,
                            rkey: r.rkey,
                            len: r.dma_len,
                        });
                        aeth = hdr.ext.aeth.map(|a| {
                            let mut v = AethView {
                                syndrome: "ACK",
                                credits: None,
                                rnr_timer: None,
                                nak: None,
                                msn: a.msn,
                            };
                            match a.syndrome {
                                Syndrome::Ack { credits } => v.credits = Some(credits),
                                Syndrome::RnrNak { timer } => {
                                    v.syndrome = "RNR_NAK";
                                    v.rnr_timer = Some(timer);
                                }
                                Syndrome::Nak(code) => {
                                    v.syndrome = "NAK";
                                    v.nak = Some(format!("{code:?}"));
                                }
                            }
                            v
                        });
                        imm = hdr.ext.immdt.map(|i| i.imm);
                        if let Some(irn::Repr::Sack { psn, received }) = hdr.ext.irn {
                            let base = hdr.bth.psn;
                            sack = Some(SackView {
                                trigger: psn,
                                held: (0..64u32)
                                    .filter(|i| received >> i & 1 == 1)
                                    .map(|i| (base + 1 + i) & 0xff_ffff)
                                    .collect(),
                            });
                        }
                        let op = hdr.bth.opcode;
                        let what = match hdr.ext.aeth.map(|a| a.syndrome) {
                            Some(Syndrome::RnrNak { .. }) => "RNR NAK".to_string(),
                            Some(Syndrome::Nak(code)) => format!("NAK {code:?}"),
                            _ => op.to_string(),
                        };
                        let kind = if op == Opcode::CNP { "cnp" } else { "roce" };
                        (kind, what, Some(hdr.bth.psn), Some(hdr.bth.dest_qp))
                    }
                    Payload::Pause { .. } => ("pfc", "PAUSE".to_string(), None, None),
                    Payload::Tcp { .. } => ("tcp", "TCP".to_string(), None, None),
                    Payload::Raw { .. } => ("other", "raw".to_string(), None, None),
                };
                FrameRecord {
                    t_ps: at.as_ps(),
                    src: name(pkt.src),
                    dst: name(pkt.dst),
                    kind: kind.to_string(),
                    opcode,
                    psn,
                    qpn,
                    len: pkt.len_bytes,
                    dropped: false,
                    wr_id,
                    reth,
                    aeth,
                    imm,
                    sack,
                    wire: logged.wire_hex(),
                    wire_elided: logged.wire_elided.map(|r| [r.start, r.end]),
                    uid: pkt.uid,
                }
            })
            .collect();
        (frames, skipped)
    }
}
