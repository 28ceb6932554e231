//! The send side (requester): take the next send WQE that may start, gather its payload,
//! complete it, and land READ responses and atomic results (module docs: "Send side").

use super::*;

impl Context {
    /// The next posted (not started) send WQE, whether or not it may start.
    pub fn peek_send(&self, qpn: QpNum) -> Result<Option<&SendWqe>, VerbsError> {
        Ok(self
            .qp(qpn)?
            .sq
            .iter()
            .find(|w| w.state == WqeState::Posted))
    }

    /// A WQE still in the send queue.
    pub fn send_wqe(&self, qpn: QpNum, id: WqeId) -> Result<&SendWqe, VerbsError> {
        self.qp(qpn)?
            .sq_wqe(id)
            .ok_or(VerbsError::NoSuchWqe { qpn, id })
    }

    /// Send WQEs in the queue (posted, started or done but not yet retired).
    pub fn send_queue(&self, qpn: QpNum) -> Result<impl Iterator<Item = &SendWqe>, VerbsError> {
        Ok(self.qp(qpn)?.sq.iter())
    }

    /// Receive WQEs in the queue, head first.
    pub fn recv_queue(&self, qpn: QpNum) -> Result<impl Iterator<Item = &RecvWqe>, VerbsError> {
        Ok(self.qp(qpn)?.rq.iter())
    }

    /// The QP's transport type.
    pub fn qp_type(&self, qpn: QpNum) -> Result<QpType, VerbsError> {
        Ok(self.qp(qpn)?.qp_type)
    }

    /// The QP's PD (for [`MrTable::check_local`]/[`MrTable::check_remote`]).
    pub fn qp_pd(&self, qpn: QpNum) -> Result<PdHandle, VerbsError> {
        Ok(self.qp(qpn)?.pd)
    }

    /// Takes the next send WQE that may start (see the module docs).
    pub fn start_send(&mut self, qpn: QpNum) -> Result<StartSend, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        if qp.state != QpState::Rts {
            return Ok(StartSend::NotReady(qp.state));
        }
        let rd_in_flight = qp.rd_atomic_in_flight();
        let max_rd = qp.attr.max_rd_atomic;
        let Some(wqe) = qp.sq.iter_mut().find(|w| w.state == WqeState::Posted) else {
            return Ok(StartSend::Empty);
        };
        if !wqe.executable {
            let id = wqe.id;
            wqe.state = WqeState::Started;
            let done = self.complete_send(qpn, id, WcStatus::LocQpOpErr)?;
            return Ok(StartSend::FailedLocally(done));
        }
        if wqe.fenced() && rd_in_flight > 0 {
            return Ok(StartSend::Blocked(SendBlock::Fence {
                in_flight: rd_in_flight,
            }));
        }
        if wqe.opcode().is_read_or_atomic() && rd_in_flight >= usize::from(max_rd) {
            return Ok(StartSend::Blocked(SendBlock::RdAtomicCredits {
                in_flight: rd_in_flight,
                max: max_rd,
            }));
        }
        wqe.state = WqeState::Started;
        Ok(StartSend::Started(wqe.clone()))
    }

    /// Finishes send WQE `id` with `status` (see the module docs).
    pub fn complete_send(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        status: WcStatus,
    ) -> Result<SendCompletion, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let idx = qp
            .sq
            .iter()
            .position(|w| w.id == id && !matches!(w.state, WqeState::Done(_)))
            .ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        qp.sq[idx].state = WqeState::Done(status);
        if !status.is_success() {
            for w in qp.sq.iter_mut().take(idx) {
                if !matches!(w.state, WqeState::Done(_)) {
                    w.state = WqeState::Done(WcStatus::WrFlushErr);
                }
            }
        }
        let mut retired = Vec::new();
        while let Some(WqeState::Done(s)) = qp.sq.front().map(|w| w.state) {
            let w = qp.sq.pop_front().expect("front() was Some");
            retired.push((w, s));
        }
        let cq = qp.send_cq;
        let mut out = SendCompletion {
            retired: retired.len(),
            ..SendCompletion::default()
        };
        let mut overrun = false;
        for (w, s) in retired {
            if !w.signaled && s.is_success() {
                continue;
            }
            let wc = if s.is_success() {
                let byte_len = if w.opcode().is_atomic() {
                    8
                } else {
                    w.length as u32
                };
                Wc {
                    opcode: Some(w.opcode().wc_opcode()),
                    byte_len,
                    ..Wc::error(w.wr.wr_id, s, qpn)
                }
            } else {
                Wc::error(w.wr.wr_id, s, qpn)
            };
            let push = self.push_wc(cq, wc, false);
            overrun |= push == CqPush::Overrun;
            out.cqes.push(CqeWritten { cq, wc, push });
        }
        if !status.is_success() || overrun {
            out.flushed = Some(self.enter_error(qpn));
        }
        let qp = self.qp_mut(qpn)?;
        if qp.state == QpState::Sqd && qp.sq_draining && qp.in_flight() == 0 {
            qp.sq_draining = false;
            out.sq_drained = true;
            if qp.attr.en_sqd_async_notify {
                self.raise_async(AsyncEvent::SqDrained { qpn });
            }
        }
        Ok(out)
    }

    /// Reads `[offset, offset + out.len())` of send WQE `id`'s payload: its inline bytes, or
    /// its SGEs after their lkey checks.
    pub fn gather_send(
        &self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), GatherError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let end = offset.saturating_add(out.len() as u64);
        if end > w.length {
            return Err(GatherError::OutOfMessage {
                offset,
                end,
                len: w.length,
            });
        }
        if let Some(data) = &w.inline_data {
            out.copy_from_slice(&data[offset as usize..end as usize]);
            return Ok(());
        }
        gather_sges(&self.mrs, &self.memory, qp.pd, &w.wr.sg_list, offset, out)
    }

    /// The payload of send WQE `id` at `[offset, offset + len)` as a reference to synthetic
    /// memory, when that range comes from one SGE into one synthetic buffer (after the same
    /// lkey checks as [`gather_send`](Self::gather_send)); `None` when it must be gathered as
    /// bytes (real memory, inline data, several SGEs).
    pub fn gather_ref(
        &self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        len: u64,
    ) -> Result<Option<SyntheticRef>, GatherError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        if w.inline_data.is_some() || len == 0 {
            return Ok(None);
        }
        let Some((sge, off, n)) = one_piece(&w.wr.sg_list, offset, len) else {
            return Ok(None);
        };
        self.mrs
            .check_local(sge.lkey, qp.pd, sge.addr + off, n, AccessFlags::empty())?;
        Ok(self.memory.synthetic_ref(sge.addr + off, n))
    }

    /// Writes READ response bytes at `offset` of send WQE `id`'s SGEs (LOCAL_WRITE needed).
    pub fn scatter_send(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        scatter_sges(
            &self.mrs,
            &mut self.memory,
            qp.pd,
            &w.wr.sg_list,
            offset,
            data,
        )
    }

    /// Whether send WQE `id`'s SGEs can take a READ's response: every SGE's lkey valid in
    /// the QP's PD with LOCAL_WRITE over its whole range, its memory mapped. Nothing is
    /// written. The NIC checks this as the response data arrives (rxe `do_read`:
    /// `copy_data(.., IB_ACCESS_LOCAL_WRITE, ..)`); failing it is LOC_PROT_ERR.
    pub fn check_read_target(&self, qpn: QpNum, id: WqeId) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        for sge in w.wr.sg_list.iter().filter(|s| s.length > 0) {
            let len = u64::from(sge.length);
            self.mrs
                .check_local(sge.lkey, qp.pd, sge.addr, len, AccessFlags::LOCAL_WRITE)?;
            if !self.memory.is_mapped(sge.addr, len) {
                return Err(ScatterError::Memory(MemoryError::Unmapped {
                    va: sge.addr,
                    len,
                }));
            }
        }
        Ok(())
    }

    /// Writes an atomic's original value (8 bytes, little-endian) into send WQE `id`'s SGEs.
    /// Under `mlx5` the 8 bytes go to the first SGE whatever its length, as
    /// `set_data_ptr_seg_atomic` makes the NIC do.
    pub fn write_atomic_result(
        &mut self,
        qpn: QpNum,
        id: WqeId,
        original: u64,
    ) -> Result<(), ScatterError> {
        let profile = self.profile();
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let sges = match (profile, w.wr.sg_list.first()) {
            (NicProfile::Mlx5, Some(first)) => vec![Sge {
                length: 8,
                ..*first
            }],
            _ => w.wr.sg_list.clone(),
        };
        scatter_sges(
            &self.mrs,
            &mut self.memory,
            qp.pd,
            &sges,
            0,
            &original.to_le_bytes(),
        )
    }
}
