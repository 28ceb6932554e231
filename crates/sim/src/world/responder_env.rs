//! The responder's memory environment: `VerbsEnv`, the [`ResponderEnv`] the RoCE responder
//! (in `transport`, which knows nothing of verbs) places requests through, backed by the host's
//! verbs context: the QP's access flags and the rkey check, the receive queue (take a WQE,
//! scatter into it, complete it), and WRITE and atomic access to registered memory. Also the
//! 40-byte GRH area before a UD datagram, and `materialize`, which turns a payload that travels
//! as a reference to synthetic memory into bytes where bytes are needed.

use transport::roce::{RecvFailure, RemoteOp, ResponderEnv};
use verbs::SyntheticRef;
use verbs::{
    AccessFlags, Context, QpNum, WcStatus,
    transport::{AtomicOp, RecvCompletion, ScatterError},
    wc::WcOpcode,
};

/// The responder's view of a host's verbs state.
pub(super) struct VerbsEnv<'a> {
    pub(super) ctx: &'a mut Context,
    pub(super) qpn: QpNum,
    pub(super) pending_fail: Option<ScatterError>,
    /// Successful receives whose CQE the NIC writes after the payload (see `take_recv`).
    pub(super) taken: Vec<verbs::TakenRecv>,
    /// UD: the GRH area put before a datagram (20 zero bytes, then the IPv4 header).
    pub(super) grh: [u8; 40],
    /// The current packet's payload, when it travels as a reference to synthetic memory.
    pub(super) symbolic: Option<SyntheticRef>,
}

impl ResponderEnv for VerbsEnv<'_> {
    fn qp_allows(&self, op: RemoteOp) -> bool {
        self.ctx
            .query_qp(self.qpn)
            .is_ok_and(|(a, _)| a.qp_access_flags.contains(AccessFlags::for_remote(op)))
    }
    fn check_rkey(&mut self, rkey: u32, va: u64, len: u64, op: RemoteOp) -> bool {
        self.ctx
            .responder_check(self.qpn, op, rkey, va, len)
            .is_ok()
    }
    fn start_recv(&mut self) -> bool {
        self.ctx.recv_head(self.qpn).is_ok_and(|w| w.is_some())
    }
    fn place_recv(&mut self, offset: u64, len: u64, data: &[u8]) -> Result<(), RecvFailure> {
        let data = materialize(data, self.symbolic, len as u32);
        match self.ctx.scatter_recv(self.qpn, offset, &data) {
            Ok(()) => Ok(()),
            Err(e) => {
                let why = if matches!(e, ScatterError::TooLong { .. }) {
                    RecvFailure::TooLong
                } else {
                    RecvFailure::BadWqe
                };
                self.pending_fail = Some(e);
                Err(why)
            }
        }
    }
    fn finish_recv(
        &mut self,
        byte_len: u64,
        imm: Option<u32>,
        write_with_imm: bool,
        solicited: bool,
    ) {
        let c = RecvCompletion {
            status: WcStatus::Success,
            opcode: if write_with_imm {
                WcOpcode::RecvRdmaWithImm
            } else {
                WcOpcode::Recv
            },
            byte_len: byte_len.min(u32::MAX as u64) as u32,
            imm_data: imm,
            src_qp: None,
            grh: false,
            solicited,
        };
        if let Ok(t) = self.ctx.take_recv(self.qpn, c) {
            self.taken.push(t);
        }
    }
    fn ud_grh(&self) -> [u8; 40] {
        self.grh
    }
    fn finish_ud_recv(&mut self, byte_len: u64, imm: Option<u32>, src_qp: u32, solicited: bool) {
        let c = RecvCompletion {
            status: WcStatus::Success,
            opcode: WcOpcode::Recv,
            byte_len: byte_len.min(u32::MAX as u64) as u32,
            imm_data: imm,
            src_qp: Some(QpNum::masked(src_qp)),
            grh: true,
            solicited,
        };
        if let Ok(t) = self.ctx.take_recv(self.qpn, c) {
            self.taken.push(t);
        }
    }
    fn fail_recv(&mut self, why: RecvFailure) {
        let profile = self.ctx.profile();
        let status = match self.pending_fail.take() {
            Some(e) => e.recv_status(profile),
            None if why == RecvFailure::TooLong => WcStatus::LocLenErr,
            None => WcStatus::LocProtErr,
        };
        let c = RecvCompletion {
            status,
            ..RecvCompletion::recv(0)
        };
        let r = self.ctx.complete_recv(self.qpn, c);
        // The responder fails only a receive it claimed by `start_recv`, which found the
        // WQE at the head of the queue.
        debug_assert!(r.is_ok(), "failing the claimed receive WQE: {r:?}");
    }
    fn place_recv_at(
        &mut self,
        index: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), RecvFailure> {
        let data = materialize(data, self.symbolic, len as u32);
        self.ctx
            .scatter_recv_at(self.qpn, index as usize, offset, &data)
            .map_err(|_| RecvFailure::BadWqe)
    }
    fn write_remote(&mut self, rkey: u32, va: u64, len: u64, data: &[u8]) {
        let written = match self.symbolic {
            Some(r) if data.is_empty() => self.ctx.remote_write_ref(self.qpn, rkey, va, r, len),
            _ => self.ctx.remote_write(self.qpn, rkey, va, data),
        };
        // The responder checked this packet's range with `check_rkey` just before, within the
        // same event (the first packet the whole message, every later one its own piece), so
        // the same check inside `remote_write` cannot fail.
        debug_assert!(written.is_ok(), "a checked WRITE failed: {written:?}");
    }
    fn atomic(&mut self, rkey: u32, va: u64, compare_swap: Option<(u64, u64)>, add: u64) -> u64 {
        let op = match compare_swap {
            Some((compare, swap)) => AtomicOp::CmpAndSwp { compare, swap },
            None => AtomicOp::FetchAndAdd { add },
        };
        let orig = self.ctx.remote_atomic(self.qpn, rkey, va, op);
        // Checked by `check_rkey` (key, PD, access, range) and the responder (alignment, the
        // QP's atomic resources) just before, within the same event.
        debug_assert!(orig.is_ok(), "a checked atomic failed: {orig:?}");
        orig.unwrap_or(0)
    }
}

/// The 40-byte GRH area RoCEv2 puts before a UD datagram in the receive buffer: 20 zero
/// bytes, then the packet's IPv4 header (version 4, IHL 5, total length, TTL 64, UDP, the
/// two addresses; the checksum left 0).
pub(super) fn ud_grh(src: [u8; 4], dst: [u8; 4], payload_len: u32) -> [u8; 40] {
    let mut g = [0u8; 40];
    let total = (20 + 8 + 12 + 8 + payload_len + 4).min(u16::MAX as u32) as u16;
    g[20] = 0x45;
    g[22..24].copy_from_slice(&total.to_be_bytes());
    g[28] = 64;
    g[29] = 17;
    g[32..36].copy_from_slice(&src);
    g[36..40].copy_from_slice(&dst);
    g
}

/// The payload as bytes: `bytes` itself, or the synthetic content it refers to.
pub(super) fn materialize(
    bytes: &[u8],
    symbolic: Option<SyntheticRef>,
    len: u32,
) -> std::borrow::Cow<'_, [u8]> {
    match symbolic {
        Some(r) if bytes.is_empty() => {
            let mut v = vec![0; len as usize];
            verbs::memory::fill_pattern(r.seed, r.offset, &mut v);
            std::borrow::Cow::Owned(v)
        }
        _ => std::borrow::Cow::Borrowed(bytes),
    }
}
