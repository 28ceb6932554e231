//! Work requests: `struct ibv_send_wr`, `struct ibv_recv_wr`, `struct ibv_sge` and
//! `enum ibv_wr_opcode` (`ibv_post_send.3`, `ibv_post_recv.3`; opcode support per transport
//! from verbs-spec §5).
//!
//! A chain of WRs (the `next` pointer in C) is a slice here: `post_send(qp, &[wr1, wr2])`.

use core::fmt;

use crate::flags::SendFlags;
use crate::types::{AhAttr, QpNum, QpType};
use crate::wc::WcOpcode;

/// `struct ibv_sge`: one buffer of a scatter/gather list.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Sge {
    /// Start address in the local process.
    pub addr: u64,
    /// Length in bytes.
    pub length: u32,
    /// The lkey of an MR covering `[addr, addr+length)`.
    pub lkey: u32,
}

impl Sge {
    /// An SGE.
    pub const fn new(addr: u64, length: u32, lkey: u32) -> Sge {
        Sge { addr, length, lkey }
    }
}

/// The total length of an SGE list.
pub fn sge_total(sges: &[Sge]) -> u64 {
    sges.iter().map(|s| u64::from(s.length)).sum()
}

/// `enum ibv_wr_opcode`, the opcodes rdmalab models, in verbs.h order with its values.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[repr(u8)]
pub enum SendOpcode {
    /// RDMA WRITE to `remote_addr`/`rkey`.
    RdmaWrite = 0,
    /// RDMA WRITE that also consumes a receive WQE at the target and delivers `imm_data`.
    RdmaWriteWithImm = 1,
    /// SEND: consumes a receive WQE at the target.
    Send = 2,
    /// SEND with immediate data.
    SendWithImm = 3,
    /// RDMA READ from `remote_addr`/`rkey` into the local SGEs.
    RdmaRead = 4,
    /// 64-bit compare-and-swap at `remote_addr`.
    AtomicCmpAndSwp = 5,
    /// 64-bit fetch-and-add at `remote_addr`.
    AtomicFetchAndAdd = 6,
}

impl SendOpcode {
    /// The verbs.h constant name.
    pub const fn const_name(self) -> &'static str {
        match self {
            SendOpcode::RdmaWrite => "IBV_WR_RDMA_WRITE",
            SendOpcode::RdmaWriteWithImm => "IBV_WR_RDMA_WRITE_WITH_IMM",
            SendOpcode::Send => "IBV_WR_SEND",
            SendOpcode::SendWithImm => "IBV_WR_SEND_WITH_IMM",
            SendOpcode::RdmaRead => "IBV_WR_RDMA_READ",
            SendOpcode::AtomicCmpAndSwp => "IBV_WR_ATOMIC_CMP_AND_SWP",
            SendOpcode::AtomicFetchAndAdd => "IBV_WR_ATOMIC_FETCH_AND_ADD",
        }
    }

    /// True if the transport supports the opcode (verbs-spec §5 "Opcode support";
    /// `ibv_post_send.3:122-137`): UD sends only; UC sends and writes; RC everything.
    pub const fn valid_for(self, qp_type: QpType) -> bool {
        match qp_type {
            QpType::Rc => true,
            QpType::Uc => matches!(
                self,
                SendOpcode::Send
                    | SendOpcode::SendWithImm
                    | SendOpcode::RdmaWrite
                    | SendOpcode::RdmaWriteWithImm
            ),
            QpType::Ud => matches!(self, SendOpcode::Send | SendOpcode::SendWithImm),
        }
    }

    /// True for READ and the atomics: the operations that need READ/atomic credits and that a
    /// FENCE waits for.
    pub const fn is_read_or_atomic(self) -> bool {
        matches!(
            self,
            SendOpcode::RdmaRead | SendOpcode::AtomicCmpAndSwp | SendOpcode::AtomicFetchAndAdd
        )
    }

    /// True for the two atomics.
    pub const fn is_atomic(self) -> bool {
        matches!(
            self,
            SendOpcode::AtomicCmpAndSwp | SendOpcode::AtomicFetchAndAdd
        )
    }

    /// True if the opcode carries immediate data.
    pub const fn has_imm(self) -> bool {
        matches!(self, SendOpcode::SendWithImm | SendOpcode::RdmaWriteWithImm)
    }

    /// True if the opcode may be posted inline: "Inline data is valid only for Send and RDMA
    /// Write" (`ibv_post_send.3`).
    pub const fn inline_allowed(self) -> bool {
        matches!(
            self,
            SendOpcode::Send
                | SendOpcode::SendWithImm
                | SendOpcode::RdmaWrite
                | SendOpcode::RdmaWriteWithImm
        )
    }

    /// True if the message consumes a receive WQE at the target (SEND and WRITE_WITH_IMM).
    pub const fn consumes_recv_wqe(self) -> bool {
        matches!(
            self,
            SendOpcode::Send | SendOpcode::SendWithImm | SendOpcode::RdmaWriteWithImm
        )
    }

    /// The completion opcode a successful send WQE reports.
    pub const fn wc_opcode(self) -> WcOpcode {
        match self {
            SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm => WcOpcode::RdmaWrite,
            SendOpcode::Send | SendOpcode::SendWithImm => WcOpcode::Send,
            SendOpcode::RdmaRead => WcOpcode::RdmaRead,
            SendOpcode::AtomicCmpAndSwp => WcOpcode::CompSwap,
            SendOpcode::AtomicFetchAndAdd => WcOpcode::FetchAdd,
        }
    }
}

impl fmt::Display for SendOpcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.const_name())
    }
}

/// `wr.ud` of a UD send WR: where the datagram goes.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct UdDest {
    /// The address handle's attributes (rdmalab keeps the AV itself, not an `ibv_ah`).
    pub ah: AhAttr,
    /// Destination QPN.
    pub remote_qpn: u32,
    /// Q_Key to send with; if its high-order bit is set the QP's own Q_Key is used instead
    /// (IBTA's "controlled Q_Key" rule).
    pub remote_qkey: u32,
}

/// `struct ibv_send_wr`, one WR of a chain.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct SendWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// What to do.
    pub opcode: SendOpcode,
    /// FENCE, SIGNALED, SOLICITED, INLINE.
    pub send_flags: SendFlags,
    /// The local buffers (sources for SEND/WRITE, targets for READ/atomics).
    pub sg_list: Vec<Sge>,
    /// Immediate data for the `*_WITH_IMM` opcodes (host order).
    pub imm_data: u32,
    /// `wr.rdma.remote_addr` / `wr.atomic.remote_addr`.
    pub remote_addr: u64,
    /// `wr.rdma.rkey` / `wr.atomic.rkey`.
    pub rkey: u32,
    /// `wr.atomic.compare_add`: the compare value (CMP_AND_SWP) or the addend (FETCH_AND_ADD).
    pub compare_add: u64,
    /// `wr.atomic.swap`.
    pub swap: u64,
    /// `wr.ud` for UD QPs.
    pub ud: Option<UdDest>,
}

impl SendWr {
    fn base(wr_id: u64, opcode: SendOpcode, sg_list: Vec<Sge>) -> SendWr {
        SendWr {
            wr_id,
            opcode,
            send_flags: SendFlags::empty(),
            sg_list,
            imm_data: 0,
            remote_addr: 0,
            rkey: 0,
            compare_add: 0,
            swap: 0,
            ud: None,
        }
    }

    /// A SEND of `sg_list`.
    pub fn send(wr_id: u64, sg_list: Vec<Sge>) -> SendWr {
        SendWr::base(wr_id, SendOpcode::Send, sg_list)
    }

    /// A SEND with immediate data.
    pub fn send_with_imm(wr_id: u64, sg_list: Vec<Sge>, imm: u32) -> SendWr {
        SendWr {
            imm_data: imm,
            ..SendWr::base(wr_id, SendOpcode::SendWithImm, sg_list)
        }
    }

    /// An RDMA WRITE of `sg_list` to `remote_addr`/`rkey`.
    pub fn write(wr_id: u64, sg_list: Vec<Sge>, remote_addr: u64, rkey: u32) -> SendWr {
        SendWr {
            remote_addr,
            rkey,
            ..SendWr::base(wr_id, SendOpcode::RdmaWrite, sg_list)
        }
    }

    /// An RDMA WRITE with immediate data.
    pub fn write_with_imm(
        wr_id: u64,
        sg_list: Vec<Sge>,
        remote_addr: u64,
        rkey: u32,
        imm: u32,
    ) -> SendWr {
        SendWr {
            remote_addr,
            rkey,
            imm_data: imm,
            ..SendWr::base(wr_id, SendOpcode::RdmaWriteWithImm, sg_list)
        }
    }

    /// An RDMA READ of `remote_addr`/`rkey` into `sg_list`.
    pub fn read(wr_id: u64, sg_list: Vec<Sge>, remote_addr: u64, rkey: u32) -> SendWr {
        SendWr {
            remote_addr,
            rkey,
            ..SendWr::base(wr_id, SendOpcode::RdmaRead, sg_list)
        }
    }

    /// A compare-and-swap; the original value lands in `sg_list`.
    pub fn cmp_and_swp(
        wr_id: u64,
        sg_list: Vec<Sge>,
        remote_addr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    ) -> SendWr {
        SendWr {
            remote_addr,
            rkey,
            compare_add: compare,
            swap,
            ..SendWr::base(wr_id, SendOpcode::AtomicCmpAndSwp, sg_list)
        }
    }

    /// A fetch-and-add; the original value lands in `sg_list`.
    pub fn fetch_and_add(
        wr_id: u64,
        sg_list: Vec<Sge>,
        remote_addr: u64,
        rkey: u32,
        add: u64,
    ) -> SendWr {
        SendWr {
            remote_addr,
            rkey,
            compare_add: add,
            ..SendWr::base(wr_id, SendOpcode::AtomicFetchAndAdd, sg_list)
        }
    }

    /// Adds send flags.
    pub fn with_flags(mut self, flags: SendFlags) -> SendWr {
        self.send_flags |= flags;
        self
    }

    /// Adds `IBV_SEND_SIGNALED`.
    pub fn signaled(self) -> SendWr {
        self.with_flags(SendFlags::SIGNALED)
    }

    /// Adds the UD destination.
    pub fn to_ud(mut self, ah: AhAttr, remote_qpn: QpNum, remote_qkey: u32) -> SendWr {
        self.ud = Some(UdDest {
            ah,
            remote_qpn: remote_qpn.get(),
            remote_qkey,
        });
        self
    }

    /// The message length: the sum of the SGE lengths.
    pub fn length(&self) -> u64 {
        sge_total(&self.sg_list)
    }
}

/// `struct ibv_recv_wr`, one WR of a chain.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct RecvWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Where an incoming message is scattered.
    pub sg_list: Vec<Sge>,
}

impl RecvWr {
    /// A receive WR.
    pub fn new(wr_id: u64, sg_list: Vec<Sge>) -> RecvWr {
        RecvWr { wr_id, sg_list }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_support_per_transport() {
        assert!(SendOpcode::RdmaRead.valid_for(QpType::Rc));
        assert!(!SendOpcode::RdmaRead.valid_for(QpType::Uc));
        assert!(SendOpcode::RdmaWrite.valid_for(QpType::Uc));
        assert!(!SendOpcode::RdmaWrite.valid_for(QpType::Ud));
        assert!(!SendOpcode::AtomicFetchAndAdd.valid_for(QpType::Ud));
        assert!(SendOpcode::SendWithImm.valid_for(QpType::Ud));
    }

    #[test]
    fn verbs_h_values() {
        assert_eq!(SendOpcode::RdmaWrite as u8, 0);
        assert_eq!(SendOpcode::Send as u8, 2);
        assert_eq!(SendOpcode::AtomicFetchAndAdd as u8, 6);
        assert_eq!(
            SendOpcode::RdmaWriteWithImm.wc_opcode(),
            WcOpcode::RdmaWrite
        );
    }

    #[test]
    fn builders() {
        let wr = SendWr::write(
            7,
            vec![Sge::new(0x1000, 10, 1), Sge::new(0x2000, 6, 1)],
            0x9000,
            5,
        )
        .signaled();
        assert_eq!(wr.length(), 16);
        assert!(wr.send_flags.contains(SendFlags::SIGNALED));
        assert_eq!(wr.rkey, 5);
    }
}
