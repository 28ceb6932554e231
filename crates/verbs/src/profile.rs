//! NIC profiles and device attributes (DESIGN.md §3.4: "behaviour that differs is chosen by a
//! NIC profile: `mlx5` (default), `rxe`, `ibta`").
//!
//! Every place where the profiles disagree is one method of [`NicProfile`] below, and each
//! method's doc comment cites the source of each profile's behaviour. Where no source says what
//! mlx5 does, `mlx5` follows IBTA (DESIGN.md §3.4). The sources are:
//!
//! - **mlx5**: linux-rdma/rdma-core `providers/mlx5/qp.c` (`_mlx5_post_send`, `mlx5_post_recv`,
//!   `mlx5_wq_overflow`, `set_data_inl_seg`, `set_data_ptr_seg_atomic`), `providers/mlx5/verbs.c`
//!   (`mlx5_calc_send_wqe`), and google/rdma-unit-test `internal/introspection_mlx5.h` (the list
//!   of tests where ConnectX deviates) and `cases/qp_test.cc` (`QpStateTest`).
//! - **rxe**: rdma-core `providers/rxe/rxe.c` and the kernel's `drivers/infiniband/sw/rxe/`
//!   (verbs-spec tags RC, RXE-*, RXEV).
//! - **ibta**: the IBTA text as quoted by those sources (e.g. C10-96 via rdma-unit-test).

use core::fmt;

use crate::errno::Errno;
use crate::types::{Mtu, QpState};

/// Which NIC's verbs behaviour a [`Context`](crate::Context) reproduces.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum NicProfile {
    /// NVIDIA ConnectX-5/6 hardware with rdma-core's mlx5 provider (the default).
    #[default]
    Mlx5,
    /// Soft-RoCE: rdma-core's rxe provider over the kernel's rxe driver.
    Rxe,
    /// The IBTA specification read literally.
    Ibta,
}

/// When `post_send` checks the QP state (it must be RTS, SQD, SQE or ERR to accept WRs).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum SendStateCheck {
    /// Before looking at any WR: EINVAL, `bad_wr` = the first WR, nothing posted (IBTA C10-96).
    Immediate,
    /// After the WRs were written to the ring: the doorbell system call fails with EINVAL,
    /// `bad_wr` is not set, and the WQEs stay in the queue (rxe).
    AtDoorbell,
    /// Never: the post returns 0 and the WQEs wait in the queue (mlx5).
    None,
}

/// When `post_recv` checks for a QP in RESET.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum RecvStateCheck {
    /// EINVAL with `bad_wr` = the first WR (IBTA).
    Immediate,
    /// EINVAL before `bad_wr` is set: the caller sees no bad WR (rxe).
    BeforeBadWr,
    /// Never (mlx5).
    None,
}

/// The post-time check on atomic WRs.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum AtomicPostCheck {
    /// The SGE total must be exactly 8 bytes and `remote_addr` 8-byte aligned (kernel
    /// `validate_send_wr`; IBTA).
    Exactly8,
    /// The SGE total must be at least 8 bytes and `remote_addr` 8-byte aligned (rdma-core
    /// `providers/rxe/rxe.c`, `validate_send_wr`: `length < 8 || remote_addr & 7`).
    AtLeast8,
    /// No check at post time (mlx5).
    None,
}

impl NicProfile {
    /// All profiles.
    pub const ALL: [NicProfile; 3] = [NicProfile::Mlx5, NicProfile::Rxe, NicProfile::Ibta];

    /// The profile's name as scenario files spell it.
    pub const fn name(self) -> &'static str {
        match self {
            NicProfile::Mlx5 => "mlx5",
            NicProfile::Rxe => "rxe",
            NicProfile::Ibta => "ibta",
        }
    }

    /// The device attributes this profile reports by default.
    pub fn device_attr(self) -> DeviceAttr {
        match self {
            NicProfile::Mlx5 | NicProfile::Ibta => DeviceAttr::connectx6(),
            NicProfile::Rxe => DeviceAttr::rxe(),
        }
    }

    /// Posting to the send queue below RTS.
    ///
    /// - `ibta`: an immediate error (IBTA v1 10.8.2 C10-96, as quoted in google/rdma-unit-test
    ///   `cases/qp_test.cc` above `QpStateTest.PostSendReset`).
    /// - `rxe`: rdma-core `providers/rxe/rxe.c` `rxe_post_send` writes every valid WR to the ring,
    ///   then rings the doorbell with a `post_send` system call; the kernel's `rxe_post_send`
    ///   (RXEV) returns EINVAL below RTS ("qp not ready to send"). The WQEs stay in the ring.
    /// - `mlx5`: `_mlx5_post_send` never reads the QP state; google/rdma-unit-test
    ///   `QpStateTest.PostSendReset/PostSendInit/PostSendRtr` expect 0 ("a vast majority of the
    ///   low-level driver deviate from this rule for better performance"). The WQE is processed
    ///   only if the QP later reaches RTS.
    pub const fn send_state_check(self) -> SendStateCheck {
        match self {
            NicProfile::Mlx5 => SendStateCheck::None,
            NicProfile::Rxe => SendStateCheck::AtDoorbell,
            NicProfile::Ibta => SendStateCheck::Immediate,
        }
    }

    /// Posting to the receive queue in RESET.
    ///
    /// - `ibta`: immediate error (C10-96; verbs-spec §2, "see C10-97.2.1").
    /// - `rxe`: rdma-core `providers/rxe/rxe.c` `rxe_post_recv` returns EINVAL in RESET before it
    ///   sets `*bad_wr` (verbs-spec §2 "Quirk").
    /// - `mlx5`: `mlx5_post_recv` has no state check (it only delays the doorbell record of Raw
    ///   Packet QPs below RTR); google/rdma-unit-test `QpStateTest.PostRecvReset` expects 0.
    pub const fn recv_state_check(self) -> RecvStateCheck {
        match self {
            NicProfile::Mlx5 => RecvStateCheck::None,
            NicProfile::Rxe => RecvStateCheck::BeforeBadWr,
            NicProfile::Ibta => RecvStateCheck::Immediate,
        }
    }

    /// The errno for a send WR with more SGEs than `max_send_sge`.
    ///
    /// `mlx5`: ENOMEM (`_mlx5_post_send`: "max gs exceeded" sets `err = ENOMEM`). `rxe` and
    /// `ibta`: EINVAL (rdma-core `providers/rxe/rxe.c` `validate_send_wr`; `tests/utils.py`).
    /// Receive WRs give EINVAL everywhere (`mlx5_post_recv`, rxe `rxe_post_recv`).
    pub const fn send_too_many_sge_errno(self) -> Errno {
        match self {
            NicProfile::Mlx5 => Errno::ENOMEM,
            NicProfile::Rxe | NicProfile::Ibta => Errno::EINVAL,
        }
    }

    /// The errno for an inline WR longer than `max_inline_data`.
    ///
    /// `mlx5`: ENOMEM (`set_data_inl_seg` returns ENOMEM when `inl > qp->max_inline_data`).
    /// `rxe`, `ibta`: EINVAL (rdma-core `providers/rxe/rxe.c` `validate_send_wr`, verbs-spec C19).
    pub const fn inline_too_long_errno(self) -> Errno {
        match self {
            NicProfile::Mlx5 => Errno::ENOMEM,
            NicProfile::Rxe | NicProfile::Ibta => Errno::EINVAL,
        }
    }

    /// Whether the "queue full" check runs before the per-WR checks of a send WR.
    ///
    /// `mlx5` checks overflow first, then `num_sge`, then inline (`_mlx5_post_send`); rxe
    /// validates the WR first and finds the queue full when it writes it (rdma-core
    /// `providers/rxe/rxe.c`: `validate_send_wr`, then `post_one_send`). `ibta` follows rxe.
    pub const fn send_full_checked_first(self) -> bool {
        matches!(self, NicProfile::Mlx5)
    }

    /// The post-time check on atomic WRs (verbs-spec §2, C20).
    ///
    /// `mlx5`: none; google/rdma-unit-test `internal/introspection_mlx5.h` lists
    /// `FetchAddInvalidSize`, `FetchAddSmallSge`, `FetchAddLargeSge` and `CompareSwapInvalidSize`
    /// as deviations ("Allows invalid SGE size for atomics"), and `_mlx5_post_send` writes the
    /// atomic data segment with a byte count of 8 whatever the SGE says
    /// (`set_data_ptr_seg_atomic`). A misaligned `remote_addr` is caught by the responder
    /// (REM_INV_REQ_ERR, rdma-unit-test `QpStateTest.PostSendErr`).
    pub const fn atomic_post_check(self) -> AtomicPostCheck {
        match self {
            NicProfile::Mlx5 => AtomicPostCheck::None,
            NicProfile::Rxe => AtomicPostCheck::AtLeast8,
            NicProfile::Ibta => AtomicPostCheck::Exactly8,
        }
    }

    /// Whether `IBV_SEND_INLINE` on an opcode other than SEND/WRITE is refused at post time.
    ///
    /// `ibta`, `rxe`: EINVAL ("Inline data is valid only for Send and RDMA Write",
    /// `ibv_post_send.3`; the kernel's `validate_send_wr` in RXEV). `mlx5`: `_mlx5_post_send`
    /// inlines the SGEs of any opcode without a check; what the NIC then does is not documented,
    /// so rdmalab completes such a WQE with LOC_QP_OP_ERR when it starts (inferred: no source says).
    pub const fn inline_opcode_checked(self) -> bool {
        !matches!(self, NicProfile::Mlx5)
    }

    /// Whether `destroy_qp` removes the QP's completions still waiting in its CQs.
    ///
    /// `mlx5`: yes; rdma-core's `mlx5_destroy_qp` (`providers/mlx5/verbs.c`) calls
    /// `__mlx5_cq_clean` on the receive and the send CQ, as the kernel's `destroy_qp_common`
    /// (`drivers/infiniband/hw/mlx5/qp.c`) does for kernel QPs, so a later poll never returns
    /// a completion naming a QP that no longer exists. `rxe`: no; `rxe_destroy_qp` is only
    /// `ibv_cmd_destroy_qp` and the kernel's rxe leaves the CQ alone, so the completions stay
    /// and name a dead QP number. `ibta`: no (inferred: the IBTA text quoted by these sources
    /// says nothing about a destroyed QP's completions, so none is removed).
    pub const fn destroy_qp_cleans_cq(self) -> bool {
        matches!(self, NicProfile::Mlx5)
    }

    /// Whether a QP in RTR raises `IBV_EVENT_COMM_EST` when its first request arrives.
    ///
    /// `mlx5`: yes, firmware event `MLX5_EVENT_TYPE_COMM_EST`, which `mlx5_ib_qp_event`
    /// passes on as `IB_EVENT_COMM_EST`. `ibta`: yes, IBTA's "communication established"
    /// affiliated event (qib, a software-visible IBTA responder, raises it the same way on the
    /// first packet in RTR). `rxe`: no; `rxe_resp.c` raises no QP event at all.
    pub const fn raises_comm_est(self) -> bool {
        !matches!(self, NicProfile::Rxe)
    }

    /// Whether a responder that NAKs a bad request and moves to ERR raises an async error
    /// event (`QP_REQ_ERR`, `QP_ACCESS_ERR`, `QP_FATAL`), and a CQ overrun `QP_FATAL` for
    /// the QP whose completion did not fit.
    ///
    /// `mlx5`: yes, `MLX5_EVENT_TYPE_WQ_INVAL_REQ_ERROR`, `_WQ_ACCESS_ERROR` and
    /// `_WQ_CATAS_ERROR` map to them in `mlx5_ib_qp_event`. `ibta`: yes, IBTA's affiliated
    /// responder errors. `rxe`: no; `rxe_qp_error` only sets ERR and schedules the tasks.
    pub const fn raises_qp_error_events(self) -> bool {
        !matches!(self, NicProfile::Rxe)
    }

    /// Whether `req_notify_cq` on a CQ without a completion channel succeeds.
    ///
    /// `mlx5` and `rxe`: yes; google/rdma-unit-test lists
    /// `CompChannelTest.RequestNoificationOnCqWithoutCompChannel` as a deviation in both
    /// `internal/introspection_mlx5.h` and `internal/introspection_rxe.h` ("Hardware returns true
    /// when requesting notification on a CQ without a Completion Channel"). `ibta`: the test's
    /// expectation, an error (EINVAL here).
    pub const fn notify_without_channel_ok(self) -> bool {
        !matches!(self, NicProfile::Ibta)
    }

    /// Whether the driver refuses `from → to` although the kernel's generic table
    /// (`ib_modify_qp_is_ok`) allows it, because it has no command for it.
    ///
    /// `mlx5`: RTS→SQD and SQD→SQD. `mlx5_ib_modify_qp` checks `ib_modify_qp_is_ok` and the
    /// values, then `__mlx5_ib_modify_qp` (`drivers/infiniband/hw/mlx5/qp.c`) looks the pair up
    /// in its firmware-command table `optab` and returns EINVAL for an empty entry. The RTS row
    /// holds only 2RST, 2ERR and RTS2RTS; the SQD row 2RST, 2ERR and SQD_RTS (added in 2021 by
    /// "RDMA/mlx5: Support SQD2RTS for modify QP"), no SQD2SQD. So a ConnectX QP never enters
    /// SQD through `ibv_modify_qp`. `rxe`: none; `rxe_qp_chk_attr` has only the generic table
    /// and `rxe_qp_from_attr` implements SQD. `ibta`: none (the IBTA defines every transition
    /// of the table).
    pub const fn lacks_transition(self, from: QpState, to: QpState) -> bool {
        matches!(
            (self, from, to),
            (NicProfile::Mlx5, QpState::Rts | QpState::Sqd, QpState::Sqd)
        )
    }

    /// Whether `max_rd_atomic`/`max_dest_rd_atomic` are rounded up to a power of two when stored.
    ///
    /// `rxe`: yes (RXE-qp `rxe_qp_from_attr`, verbs-spec §1). Others store the value given.
    pub const fn rounds_rd_atomic(self) -> bool {
        matches!(self, NicProfile::Rxe)
    }

    /// The work-completion status for a local key failure on a **send** SGE or a READ/atomic
    /// target.
    ///
    /// `rxe`: an unknown lkey, wrong PD or missing access gives LOC_QP_OP_ERR (`copy_data`
    /// returns -EINVAL and `finish_packet` maps it), out of range gives LOC_PROT_ERR (RXE-req
    /// `finish_packet`, verbs-spec C29). `mlx5`/`ibta`: LOC_PROT_ERR (MOJO's description;
    /// google/rdma-unit-test `LoopbackRcQpTest.RequestOnFailedQp` expects LOC_PROT_ERR for a bad
    /// lkey on real NICs).
    pub const fn local_key_error_is_qp_op_err(self) -> bool {
        matches!(self, NicProfile::Rxe)
    }

    /// The CQ size returned for a request of `cqe` entries (≥ `cqe`).
    ///
    /// `rxe`: `rxe_queue_init` rounds `cqe + 1` up to a power of two and reports one less.
    /// `mlx5`: `mlx5_create_cq` allocates `align_queue_size(cqe + 1)` entries and reports one less
    /// (the same rule). `ibta`: exactly `cqe`.
    pub fn round_cqe(self, cqe: u32) -> u32 {
        match self {
            NicProfile::Mlx5 | NicProfile::Rxe => pow2_minus_one_at_least(cqe),
            NicProfile::Ibta => cqe,
        }
    }
}

impl fmt::Display for NicProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `2^k − 1 ≥ n` (rxe's queue sizing: `roundup_pow_of_two(n + 1) - 1`).
pub(crate) fn pow2_minus_one_at_least(n: u32) -> u32 {
    let slots = (u64::from(n) + 1).next_power_of_two();
    u32::try_from(slots - 1).unwrap_or(u32::MAX)
}

/// `struct ibv_port_attr`, the fields rdmalab uses.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct PortAttr {
    /// The largest path MTU the port accepts in `modify_qp`.
    pub max_mtu: Mtu,
    /// The active MTU (rxe: the largest IB MTU ≤ netdev MTU − 80).
    pub active_mtu: Mtu,
    /// GID table length (valid `sgid_index` values are below it).
    pub gid_tbl_len: u32,
    /// P_Key table length (valid `pkey_index` values are below it).
    pub pkey_tbl_len: u16,
    /// Largest message the port sends.
    pub max_msg_sz: u64,
}

/// `struct ibv_device_attr`, the fields rdmalab checks against.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DeviceAttr {
    /// Largest registrable region in bytes.
    pub max_mr_size: u64,
    /// Supported page sizes (bit mask); the host models 4 KiB pages.
    pub page_size_cap: u64,
    /// Maximum number of QPs.
    pub max_qp: u32,
    /// Maximum outstanding WRs on any work queue.
    pub max_qp_wr: u32,
    /// Maximum SGEs per WR.
    pub max_sge: u32,
    /// Maximum number of CQs.
    pub max_cq: u32,
    /// Maximum CQ entries.
    pub max_cqe: u32,
    /// Maximum number of MRs.
    pub max_mr: u32,
    /// Maximum number of PDs.
    pub max_pd: u32,
    /// Maximum READ/atomic a QP serves as responder (`max_dest_rd_atomic` limit).
    pub max_qp_rd_atom: u32,
    /// Maximum READ/atomic a QP has outstanding as initiator (`max_rd_atomic` limit).
    pub max_qp_init_rd_atom: u32,
    /// Largest `max_inline_data` an RC/UC QP may ask for. Not reported by
    /// `ibv_query_device`; applications find it by trying `ibv_create_qp`.
    pub max_inline_data: u32,
    /// Largest `max_inline_data` a UD QP may ask for.
    pub max_inline_data_ud: u32,
    /// The single physical port (port number 1).
    pub port: PortAttr,
}

impl DeviceAttr {
    /// A ConnectX-6 as `ibv_devinfo -vv` reports it: vendor_part_id 4123, firmware 20.37.1700,
    /// in an `ibv_devinfo -vv` dump quoted in a public issue report; a ConnectX-6 Dx dump
    /// (part 4125, fw 22.36.1010) has the same values. max_mr_size 2^64−1, page_size_cap
    /// 0xfffffffffffff000, max_qp 131072, max_qp_wr 32768, max_sge 30, max_cq 2^24,
    /// max_cqe 4194303, max_mr 2^24, max_pd 8388608, max_qp_rd_atom 16,
    /// max_qp_init_rd_atom 16, port max_mtu 4096, pkey_tbl_len 128, gid_tbl_len 8,
    /// max_msg_sz 0x40000000.
    ///
    /// Inline limits are not in `ibv_devinfo`: 912 bytes (RC/UC) and 884 (UD) are linux-rdma/perftest's
    /// `MAX_INLINE` and `MAX_INLINE_UD` for mlx5 devices (`src/perftest_parameters.h`, discussed
    /// in linux-rdma/perftest#176).
    ///
    /// google/rdma-unit-test `internal/introspection_mlx5.h` notes that `ibv_query_device`
    /// "incorrectly reports max_qp_wr as 32768" and that RC QPs above 8192 WRs fail to create;
    /// rdmalab keeps the reported 32768.
    pub const fn connectx6() -> DeviceAttr {
        DeviceAttr {
            max_mr_size: u64::MAX,
            page_size_cap: 0xffff_ffff_ffff_f000,
            max_qp: 131_072,
            max_qp_wr: 32_768,
            max_sge: 30,
            max_cq: 16_777_216,
            max_cqe: 4_194_303,
            max_mr: 16_777_216,
            max_pd: 8_388_608,
            max_qp_rd_atom: 16,
            max_qp_init_rd_atom: 16,
            max_inline_data: 912,
            max_inline_data_ud: 884,
            port: PortAttr {
                max_mtu: Mtu::Mtu4096,
                active_mtu: Mtu::Mtu4096,
                gid_tbl_len: 8,
                pkey_tbl_len: 128,
                max_msg_sz: 0x4000_0000,
            },
        }
    }

    /// Soft-RoCE's defaults from the kernel's `drivers/infiniband/sw/rxe/rxe_param.h`
    /// (`enum rxe_device_param`): RXE_MAX_QP_WR 0x4000, RXE_MAX_SGE 32, max_cqe
    /// `(1 << RXE_MAX_LOG_CQE) - 1` = 32767, RXE_MAX_QP_RD_ATOM 128, RXE_MAX_QP_INIT_RD_ATOM 128,
    /// RXE_MAX_MR_SIZE −1, RXE_PAGE_SIZE_CAP 0xfffff000, RXE_MAX_QP 0x10000, RXE_MAX_CQ 16384,
    /// RXE_MAX_PD 0x7ffc. Inline: `RXE_MAX_WQE_SIZE - sizeof(struct rxe_send_wqe)` = 32 SGEs ×
    /// 16 B = 512 in current kernels (older ones had a flat 400). Port: max MTU 4096, active MTU
    /// 1024 (a 1500-byte netdev, verbs-spec §6), max_msg_sz 0x800000 (RXE_PORT_MAX_MSG_SZ).
    pub const fn rxe() -> DeviceAttr {
        DeviceAttr {
            max_mr_size: u64::MAX,
            page_size_cap: 0xffff_f000,
            max_qp: 0x1_0000,
            max_qp_wr: 0x4000,
            max_sge: 32,
            max_cq: 16_384,
            max_cqe: 32_767,
            max_mr: 256 * 1024,
            max_pd: 0x7ffc,
            max_qp_rd_atom: 128,
            max_qp_init_rd_atom: 128,
            max_inline_data: 512,
            max_inline_data_ud: 512,
            port: PortAttr {
                max_mtu: Mtu::Mtu4096,
                active_mtu: Mtu::Mtu1024,
                gid_tbl_len: 1024,
                pkey_tbl_len: 64,
                max_msg_sz: 0x80_0000,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cq_rounding() {
        assert_eq!(NicProfile::Rxe.round_cqe(1), 1);
        assert_eq!(NicProfile::Rxe.round_cqe(2), 3);
        assert_eq!(NicProfile::Rxe.round_cqe(100), 127);
        assert_eq!(NicProfile::Mlx5.round_cqe(127), 127);
        assert_eq!(NicProfile::Mlx5.round_cqe(128), 255);
        assert_eq!(NicProfile::Ibta.round_cqe(100), 100);
    }

    #[test]
    fn defaults_match_their_sources() {
        let cx = NicProfile::Mlx5.device_attr();
        assert_eq!(cx.max_qp_wr, 32_768);
        assert_eq!(cx.max_sge, 30);
        assert_eq!(cx.max_cqe, 4_194_303);
        let rxe = NicProfile::Rxe.device_attr();
        assert_eq!(rxe.max_qp_wr, 16_384);
        assert_eq!(rxe.max_cqe, 32_767);
        assert_eq!(rxe.port.active_mtu, Mtu::Mtu1024);
    }
}
