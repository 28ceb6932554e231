//! The receive side (responder): which states accept requests, the receive queue's head,
//! scattering a message into it, completing it, and the two gates every remote access passes
//! (the QP's access flags, then the rkey) (module docs: "Receive side").

use super::*;

impl Context {
    /// A request reached QP `qpn` and was processed: the first one while the QP is in RTR
    /// raises `COMM_EST` (once per entry into RTR), on profiles that have it.
    pub fn request_arrived(&mut self, qpn: QpNum) -> Result<(), VerbsError> {
        let raises = self.profile().raises_comm_est();
        let qp = self.qp_mut(qpn)?;
        if qp.state == QpState::Rtr && !qp.comm_est && qp.qp_type != QpType::Ud {
            qp.comm_est = true;
            if raises {
                self.raise_async(AsyncEvent::CommEst { qpn });
            }
        }
        Ok(())
    }

    /// The responder NAKed a request it could not execute and its QP is going to ERR: the
    /// affiliated error event on profiles that raise one.
    pub fn responder_failed(
        &mut self,
        qpn: QpNum,
        fault: ResponderFault,
    ) -> Result<(), VerbsError> {
        self.qp(qpn)?;
        if self.profile().raises_qp_error_events() {
            self.raise_async(match fault {
                ResponderFault::InvalidRequest => AsyncEvent::QpReqErr { qpn },
                ResponderFault::AccessViolation => AsyncEvent::QpAccessErr { qpn },
                ResponderFault::Operational => AsyncEvent::QpFatal { qpn },
            });
        }
        Ok(())
    }

    /// True if the QP processes incoming requests (RTR, RTS, SQD, SQE).
    pub fn accepts_requests(&self, qpn: QpNum) -> Result<bool, VerbsError> {
        Ok(matches!(
            self.qp(qpn)?.state,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        ))
    }

    /// The head receive WQE, or `None` (RNR for RC, a drop for UC/UD).
    pub fn recv_head(&self, qpn: QpNum) -> Result<Option<&RecvWqe>, VerbsError> {
        Ok(self.qp(qpn)?.rq.front())
    }

    /// Writes message bytes at `offset` of the head receive WQE (LOCAL_WRITE needed; nothing
    /// written on failure).
    pub fn scatter_recv(
        &mut self,
        qpn: QpNum,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.front().ok_or(ScatterError::NoRecvWqe)?;
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, offset, data)
    }

    /// Writes message bytes at `offset` of the receive WQE `index` places behind the head
    /// (0: the head), without consuming it: selective repeat places a SEND that arrived
    /// early into the WQE its IRN header names (LOCAL_WRITE needed; nothing written on
    /// failure).
    pub fn scatter_recv_at(
        &mut self,
        qpn: QpNum,
        index: usize,
        offset: u64,
        data: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.get(index).ok_or(ScatterError::NoRecvWqe)?;
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, offset, data)
    }

    /// Writes a UD datagram into the head receive WQE: the 40-byte GRH at offset 0 and the
    /// payload from offset 40.
    pub fn scatter_ud_recv(
        &mut self,
        qpn: QpNum,
        grh: &[u8; 40],
        payload: &[u8],
    ) -> Result<(), ScatterError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::NoSuchQp(qpn))?;
        let w = qp.rq.front().ok_or(ScatterError::NoRecvWqe)?;
        let mut msg = Vec::with_capacity(40 + payload.len());
        msg.extend_from_slice(grh);
        msg.extend_from_slice(payload);
        scatter_sges(&self.mrs, &mut self.memory, qp.pd, &w.sg_list, 0, &msg)
    }

    /// Pops the head receive WQE for a successful receive and returns its completion without
    /// writing it: the NIC writes the CQE after the payload's DMA, so the caller delivers it
    /// with [`Context::deliver_recv`] when that write lands. A receive WQE is consumed when
    /// its message arrives either way, so the next message scatters into the next WQE.
    pub fn take_recv(&mut self, qpn: QpNum, c: RecvCompletion) -> Result<TakenRecv, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let wqe = qp.rq.pop_front().ok_or(VerbsError::NoSuchWqe {
            qpn,
            id: WqeId(u64::MAX),
        })?;
        let mut flags = WcFlags::empty();
        if c.imm_data.is_some() {
            flags |= WcFlags::WITH_IMM;
        }
        if c.grh {
            flags |= WcFlags::GRH;
        }
        Ok(TakenRecv {
            cq: qp.recv_cq,
            wc: Wc {
                wr_id: wqe.wr_id,
                status: c.status,
                opcode: Some(c.opcode),
                byte_len: c.byte_len,
                imm_data: c.imm_data,
                qp_num: qpn,
                src_qp: c.src_qp,
                wc_flags: flags,
            },
            solicited: c.solicited,
        })
    }

    /// Writes a completion [`Context::take_recv`] returned; an overrun CQ moves the QP to ERR.
    pub fn deliver_recv(&mut self, qpn: QpNum, t: TakenRecv) -> CqeWritten {
        let push = self.push_wc(t.cq, t.wc, t.solicited);
        if push == CqPush::Overrun && self.qps.contains_key(&qpn) {
            self.enter_error(qpn);
        }
        CqeWritten {
            cq: t.cq,
            wc: t.wc,
            push,
        }
    }

    /// Pops the head receive WQE and writes its CQE (see the module docs).
    pub fn complete_recv(
        &mut self,
        qpn: QpNum,
        c: RecvCompletion,
    ) -> Result<RecvOutcome, VerbsError> {
        let qp = self.qp_mut(qpn)?;
        let wqe = qp.rq.pop_front().ok_or(VerbsError::NoSuchWqe {
            qpn,
            id: WqeId(u64::MAX),
        })?;
        let cq = qp.recv_cq;
        let wc = if c.status.is_success() {
            let mut flags = WcFlags::empty();
            if c.imm_data.is_some() {
                flags |= WcFlags::WITH_IMM;
            }
            if c.grh {
                flags |= WcFlags::GRH;
            }
            Wc {
                wr_id: wqe.wr_id,
                status: c.status,
                opcode: Some(c.opcode),
                byte_len: c.byte_len,
                imm_data: c.imm_data,
                qp_num: qpn,
                src_qp: c.src_qp,
                wc_flags: flags,
            }
        } else {
            Wc::error(wqe.wr_id, c.status, qpn)
        };
        let push = self.push_wc(cq, wc, c.solicited);
        let flushed = if !c.status.is_success() || push == CqPush::Overrun {
            Some(self.enter_error(qpn))
        } else {
            None
        };
        Ok(RecvOutcome {
            wqe,
            cqe: CqeWritten { cq, wc, push },
            flushed,
        })
    }

    /// Moves the QP to ERR and flushes both queues with `WR_FLUSH_ERR`.
    pub fn set_error(&mut self, qpn: QpNum) -> Result<FlushReport, VerbsError> {
        self.qp(qpn)?;
        Ok(self.enter_error(qpn))
    }

    /// Checks a remote operation of `len` bytes at `[va, va+len)` through `rkey` on responder
    /// QP `qpn`, in the order of the module docs.
    pub fn responder_check(
        &self,
        qpn: QpNum,
        op: RemoteOp,
        rkey: u32,
        va: u64,
        len: u64,
    ) -> Result<(), ResponderError> {
        let qp = self.qp(qpn)?;
        let needed = AccessFlags::for_remote(op);
        if !qp.attr.qp_access_flags.contains(needed) {
            return Err(ResponderError::QpAccess {
                qpn,
                op,
                needed,
                granted: qp.attr.qp_access_flags,
            });
        }
        if matches!(op, RemoteOp::Read | RemoteOp::Atomic) && qp.attr.max_dest_rd_atomic == 0 {
            return Err(ResponderError::NoRdAtomicResources { qpn });
        }
        if op == RemoteOp::Atomic && !va.is_multiple_of(8) {
            return Err(ResponderError::Misaligned { va });
        }
        self.mrs.check_remote(rkey, qp.pd, va, len, needed)?;
        Ok(())
    }

    /// Runs the responder checks for a WRITE of `data` at `va`, then writes it.
    pub fn remote_write(
        &mut self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        data: &[u8],
    ) -> Result<(), ResponderError> {
        self.responder_check(qpn, RemoteOp::Write, rkey, va, data.len() as u64)?;
        self.memory.write(va, data)?;
        Ok(())
    }

    /// [`remote_write`](Self::remote_write) of `len` bytes of synthetic content `r` (a payload
    /// that travels as a reference to the sender's synthetic memory, not as bytes).
    pub fn remote_write_ref(
        &mut self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        r: SyntheticRef,
        len: u64,
    ) -> Result<(), ResponderError> {
        self.responder_check(qpn, RemoteOp::Write, rkey, va, len)?;
        self.memory.write_ref(va, r, len)?;
        Ok(())
    }

    /// Runs the responder checks for a READ of `out.len()` bytes at `va`, then reads them.
    pub fn remote_read(
        &self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        out: &mut [u8],
    ) -> Result<(), ResponderError> {
        self.responder_check(qpn, RemoteOp::Read, rkey, va, out.len() as u64)?;
        self.memory.read(va, out)?;
        Ok(())
    }

    /// [`remote_read`](Self::remote_read) of `len` bytes that are synthetic content: their
    /// reference (`None` when the range holds real bytes; read those with `remote_read`).
    pub fn remote_read_ref(
        &self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        len: u64,
    ) -> Result<Option<SyntheticRef>, ResponderError> {
        self.responder_check(qpn, RemoteOp::Read, rkey, va, len)?;
        Ok(self.memory.synthetic_ref(va, len))
    }

    /// Runs the responder checks for an atomic on the 8 bytes at `va`, applies it and returns
    /// the original value (RXE-mr `rxe_mr_do_atomic_op`; verbs-spec C35: a failed compare
    /// still succeeds and returns the original).
    pub fn remote_atomic(
        &mut self,
        qpn: QpNum,
        rkey: u32,
        va: u64,
        op: AtomicOp,
    ) -> Result<u64, ResponderError> {
        self.responder_check(qpn, RemoteOp::Atomic, rkey, va, 8)?;
        let original = self.memory.read_u64(va)?;
        let new = match op {
            AtomicOp::CmpAndSwp { compare, swap } => (original == compare).then_some(swap),
            AtomicOp::FetchAndAdd { add } => Some(original.wrapping_add(add)),
        };
        if let Some(v) = new {
            self.memory.write_u64(va, v)?;
        }
        Ok(original)
    }

    /// The QP's Q_Key (UD).
    pub fn qkey(&self, qpn: QpNum) -> Result<u32, VerbsError> {
        Ok(self.qp(qpn)?.attr.qkey)
    }

    /// The Q_Key a UD send WQE carries: the WR's `remote_qkey`, or the QP's own Q_Key when the
    /// WR's has its high-order bit set.
    pub fn ud_send_qkey(&self, qpn: QpNum, id: WqeId) -> Result<u32, VerbsError> {
        let qp = self.qp(qpn)?;
        let w = qp.sq_wqe(id).ok_or(VerbsError::NoSuchWqe { qpn, id })?;
        let given = w.wr.ud.map_or(0, |u| u.remote_qkey);
        Ok(if given & 0x8000_0000 != 0 {
            qp.attr.qkey
        } else {
            given
        })
    }
}
