//! Work completions: `struct ibv_wc`, `enum ibv_wc_status` and `enum ibv_wc_opcode`
//! (verbs-spec §3; values from `libibverbs/verbs.h:490-513`, spellings from libibverbs'
//! `ibv_wc_status_str`; `ibv_poll_cq.3`).

use core::fmt;

use crate::flags::WcFlags;
use crate::types::QpNum;

/// `enum ibv_wc_status`, in verbs.h order with its values (verbs-spec §3 table).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum WcStatus {
    /// The WR completed.
    Success = 0,
    /// Local length error: e.g. a receive WQE too small for the incoming message.
    LocLenErr = 1,
    /// Local QP operation error: an opcode the transport does not support, a malformed WQE.
    LocQpOpErr = 2,
    /// Local EE context operation error (RD only).
    LocEecOpErr = 3,
    /// Local protection error: an SGE not valid for the operation.
    LocProtErr = 4,
    /// The WR was flushed because the QP is in ERR.
    WrFlushErr = 5,
    /// Memory-window bind failure.
    MwBindErr = 6,
    /// Unexpected transport opcode in a response.
    BadRespErr = 7,
    /// Protection error on a local buffer for an incoming RDMA Write with immediate.
    LocAccessErr = 8,
    /// The responder NAKed with Invalid Request.
    RemInvReqErr = 9,
    /// The responder NAKed with Remote Access Error.
    RemAccessErr = 10,
    /// The responder NAKed with Remote Operational Error.
    RemOpErr = 11,
    /// Transport retries exhausted (no ACK within the local ACK timeout).
    RetryExcErr = 12,
    /// RNR NAK retries exhausted.
    RnrRetryExcErr = 13,
    /// RD only.
    LocRddViolErr = 14,
    /// RD only.
    RemInvRdReqErr = 15,
    /// Responder aborted.
    RemAbortErr = 16,
    /// RD only.
    InvEecnErr = 17,
    /// RD only.
    InvEecStateErr = 18,
    /// Fatal error.
    FatalErr = 19,
    /// Response timeout.
    RespTimeoutErr = 20,
    /// General error.
    GeneralErr = 21,
}

impl WcStatus {
    /// Every status, in verbs.h order.
    pub const ALL: [WcStatus; 22] = [
        WcStatus::Success,
        WcStatus::LocLenErr,
        WcStatus::LocQpOpErr,
        WcStatus::LocEecOpErr,
        WcStatus::LocProtErr,
        WcStatus::WrFlushErr,
        WcStatus::MwBindErr,
        WcStatus::BadRespErr,
        WcStatus::LocAccessErr,
        WcStatus::RemInvReqErr,
        WcStatus::RemAccessErr,
        WcStatus::RemOpErr,
        WcStatus::RetryExcErr,
        WcStatus::RnrRetryExcErr,
        WcStatus::LocRddViolErr,
        WcStatus::RemInvRdReqErr,
        WcStatus::RemAbortErr,
        WcStatus::InvEecnErr,
        WcStatus::InvEecStateErr,
        WcStatus::FatalErr,
        WcStatus::RespTimeoutErr,
        WcStatus::GeneralErr,
    ];

    /// The verbs.h value.
    pub const fn value(self) -> u8 {
        self as u8
    }

    /// `ibv_wc_status_str`'s text.
    pub const fn as_str(self) -> &'static str {
        match self {
            WcStatus::Success => "success",
            WcStatus::LocLenErr => "local length error",
            WcStatus::LocQpOpErr => "local QP operation error",
            WcStatus::LocEecOpErr => "local EE context operation error",
            WcStatus::LocProtErr => "local protection error",
            WcStatus::WrFlushErr => "Work Request Flushed Error",
            WcStatus::MwBindErr => "memory management operation error",
            WcStatus::BadRespErr => "bad response error",
            WcStatus::LocAccessErr => "local access error",
            WcStatus::RemInvReqErr => "remote invalid request error",
            WcStatus::RemAccessErr => "remote access error",
            WcStatus::RemOpErr => "remote operation error",
            WcStatus::RetryExcErr => "transport retry counter exceeded",
            WcStatus::RnrRetryExcErr => "RNR retry counter exceeded",
            WcStatus::LocRddViolErr => "local RDD violation error",
            WcStatus::RemInvRdReqErr => "remote invalid RD request",
            WcStatus::RemAbortErr => "aborted error",
            WcStatus::InvEecnErr => "invalid EE context number",
            WcStatus::InvEecStateErr => "invalid EE context state",
            WcStatus::FatalErr => "fatal error",
            WcStatus::RespTimeoutErr => "response timeout error",
            WcStatus::GeneralErr => "general error",
        }
    }

    /// The verbs.h constant name (`"IBV_WC_WR_FLUSH_ERR"`).
    pub const fn const_name(self) -> &'static str {
        match self {
            WcStatus::Success => "IBV_WC_SUCCESS",
            WcStatus::LocLenErr => "IBV_WC_LOC_LEN_ERR",
            WcStatus::LocQpOpErr => "IBV_WC_LOC_QP_OP_ERR",
            WcStatus::LocEecOpErr => "IBV_WC_LOC_EEC_OP_ERR",
            WcStatus::LocProtErr => "IBV_WC_LOC_PROT_ERR",
            WcStatus::WrFlushErr => "IBV_WC_WR_FLUSH_ERR",
            WcStatus::MwBindErr => "IBV_WC_MW_BIND_ERR",
            WcStatus::BadRespErr => "IBV_WC_BAD_RESP_ERR",
            WcStatus::LocAccessErr => "IBV_WC_LOC_ACCESS_ERR",
            WcStatus::RemInvReqErr => "IBV_WC_REM_INV_REQ_ERR",
            WcStatus::RemAccessErr => "IBV_WC_REM_ACCESS_ERR",
            WcStatus::RemOpErr => "IBV_WC_REM_OP_ERR",
            WcStatus::RetryExcErr => "IBV_WC_RETRY_EXC_ERR",
            WcStatus::RnrRetryExcErr => "IBV_WC_RNR_RETRY_EXC_ERR",
            WcStatus::LocRddViolErr => "IBV_WC_LOC_RDD_VIOL_ERR",
            WcStatus::RemInvRdReqErr => "IBV_WC_REM_INV_RD_REQ_ERR",
            WcStatus::RemAbortErr => "IBV_WC_REM_ABORT_ERR",
            WcStatus::InvEecnErr => "IBV_WC_INV_EECN_ERR",
            WcStatus::InvEecStateErr => "IBV_WC_INV_EEC_STATE_ERR",
            WcStatus::FatalErr => "IBV_WC_FATAL_ERR",
            WcStatus::RespTimeoutErr => "IBV_WC_RESP_TIMEOUT_ERR",
            WcStatus::GeneralErr => "IBV_WC_GENERAL_ERR",
        }
    }

    /// True for `Success`.
    pub const fn is_success(self) -> bool {
        matches!(self, WcStatus::Success)
    }
}

impl fmt::Display for WcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `enum ibv_wc_opcode`, the kinds rdmalab produces, with verbs.h values.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum WcOpcode {
    /// A SEND (with or without immediate) completed.
    Send = 0,
    /// An RDMA WRITE (with or without immediate) completed.
    RdmaWrite = 1,
    /// An RDMA READ completed.
    RdmaRead = 2,
    /// A compare-and-swap completed.
    CompSwap = 3,
    /// A fetch-and-add completed.
    FetchAdd = 4,
    /// A receive WQE consumed by a SEND.
    Recv = 128,
    /// A receive WQE consumed by an RDMA WRITE with immediate.
    RecvRdmaWithImm = 129,
}

impl WcOpcode {
    /// The verbs.h constant name.
    pub const fn const_name(self) -> &'static str {
        match self {
            WcOpcode::Send => "IBV_WC_SEND",
            WcOpcode::RdmaWrite => "IBV_WC_RDMA_WRITE",
            WcOpcode::RdmaRead => "IBV_WC_RDMA_READ",
            WcOpcode::CompSwap => "IBV_WC_COMP_SWAP",
            WcOpcode::FetchAdd => "IBV_WC_FETCH_ADD",
            WcOpcode::Recv => "IBV_WC_RECV",
            WcOpcode::RecvRdmaWithImm => "IBV_WC_RECV_RDMA_WITH_IMM",
        }
    }
}

impl fmt::Display for WcOpcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.const_name())
    }
}

/// `struct ibv_wc`: one completion as `poll_cq` returns it.
///
/// "In an error WC only wr_id, status, qp_num and vendor_err are valid" (`ibv_poll_cq.3:67-71`):
/// rdmalab makes that visible by setting `opcode` to `None`, `byte_len` to 0 and `imm_data` to
/// `None` in every completion whose status is not `Success`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Wc {
    /// The WR's identifier, as posted.
    pub wr_id: u64,
    /// The outcome.
    pub status: WcStatus,
    /// What completed (valid on success only).
    pub opcode: Option<WcOpcode>,
    /// Bytes transferred: for receives the message length (plus 40 for the GRH on UD); for
    /// READ the length read; for atomics 8.
    pub byte_len: u32,
    /// Immediate data, host order (`WITH_IMM` set).
    pub imm_data: Option<u32>,
    /// The local QP this completion belongs to.
    pub qp_num: QpNum,
    /// UD receives: the sender's QPN (from the DETH).
    pub src_qp: Option<QpNum>,
    /// `IBV_WC_GRH`, `IBV_WC_WITH_IMM`, ...
    pub wc_flags: WcFlags,
}

impl Wc {
    /// An error completion: only `wr_id`, `status` and `qp_num` are meaningful.
    pub fn error(wr_id: u64, status: WcStatus, qp_num: QpNum) -> Wc {
        Wc {
            wr_id,
            status,
            opcode: None,
            byte_len: 0,
            imm_data: None,
            qp_num,
            src_qp: None,
            wc_flags: WcFlags::empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn all_lists_every_status_in_value_order() {
        for (i, s) in super::WcStatus::ALL.iter().enumerate() {
            assert_eq!(s.value() as usize, i, "{s:?}");
        }
    }

    use super::*;

    #[test]
    fn values_and_strings() {
        assert_eq!(WcStatus::WrFlushErr.value(), 5);
        assert_eq!(WcStatus::RemAccessErr.value(), 10);
        assert_eq!(WcStatus::GeneralErr.value(), 21);
        assert_eq!(
            WcStatus::WrFlushErr.to_string(),
            "Work Request Flushed Error"
        );
        assert_eq!(
            WcStatus::RetryExcErr.to_string(),
            "transport retry counter exceeded"
        );
        assert_eq!(WcOpcode::Recv as u8, 128);
        assert_eq!(
            WcOpcode::RecvRdmaWithImm.to_string(),
            "IBV_WC_RECV_RDMA_WITH_IMM"
        );
    }
}
