//! `ibv_modify_qp` validation: the legal-transition table, the required and optional attribute
//! masks per QP type, and the value checks that follow (verbs-spec §1).
//!
//! The table [`QP_STATE_TABLE`] is the kernel's `qp_state_table` from
//! `drivers/infiniband/core/verbs.c` (gregkh/linux @253c2ed7; torvalds/linux @009f7738 has the
//! same RC/UC/UD rows), one row per legal transition; the minimum masks agree with
//! `ibv_modify_qp.3:126-165`. [`validate`] follows `ib_modify_qp_is_ok()`:
//!
//! 1. With `CUR_STATE` in the mask, the current state must be RTR, RTS, SQD or SQE.
//! 2. The `(cur, next)` pair must be a row of the table.
//! 3. The mask must hold every required bit.
//! 4. The mask must hold no bit outside `required | optional | STATE`.
//!
//! Like the drivers (rxe `rxe_qp_chk_attr`, mlx5 `mlx5_ib_modify_qp`), the current state is
//! `attr.cur_qp_state` when `CUR_STATE` is set (the kernel trusts the caller) and the QP's own
//! state otherwise; without `STATE` the next state is the current one.
//!
//! Then come the value checks of `_ib_modify_qp` and rxe's `rxe_qp_chk_attr` (port, P_Key
//! index, RoCE's global AV, ALT_PATH banned on RoCE, `timeout > 31`, `path_mtu` above the port
//! max, `max_rd_atomic`/`max_dest_rd_atomic` above the device, leaving SQD while draining).
//! `rq_psn`/`sq_psn` above 24 bits are masked with a warning, not refused. Last, a transition
//! the table allows but the profile's driver has no command for is refused
//! ([`NicProfile::lacks_transition`]: mlx5 has no RTS→SQD and no SQD→SQD).
//!
//! A call that fails any check changes nothing (`ibv_modify_qp.3:115-116`): [`validate`] is a
//! pure function and the caller applies nothing unless it returns `Ok`.

use core::fmt;

use crate::flags::{AccessFlags, QpAttrMask as M};
use crate::profile::{DeviceAttr, NicProfile};
use crate::types::{AhAttr, Mtu, QpState, QpType};

/// `struct ibv_qp_attr`: the attributes `modify_qp` sets and `query_qp` reports.
///
/// Only the fields whose bit is in the mask are read by `modify_qp`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct QpAttr {
    /// Target state (`STATE`).
    pub qp_state: QpState,
    /// The state the caller believes the QP is in (`CUR_STATE`).
    pub cur_qp_state: QpState,
    /// Path MTU (`PATH_MTU`).
    pub path_mtu: Mtu,
    /// Path migration state (`PATH_MIG_STATE`); 0 = MIGRATED.
    pub path_mig_state: u8,
    /// UD Q_Key (`QKEY`).
    pub qkey: u32,
    /// First PSN the responder expects (`RQ_PSN`), 24 bits.
    pub rq_psn: u32,
    /// First PSN the requester sends (`SQ_PSN`), 24 bits.
    pub sq_psn: u32,
    /// The remote QPN for RC/UC (`DEST_QPN`), 24 bits.
    pub dest_qp_num: u32,
    /// Remote operations this QP accepts (`ACCESS_FLAGS`).
    pub qp_access_flags: AccessFlags,
    /// Primary path (`AV`).
    pub ah_attr: AhAttr,
    /// Alternate path (`ALT_PATH`; refused on RoCE).
    pub alt_ah_attr: AhAttr,
    /// P_Key index (`PKEY_INDEX`).
    pub pkey_index: u16,
    /// Raise `SQ_DRAINED` when SQD finishes draining (`EN_SQD_ASYNC_NOTIFY`).
    pub en_sqd_async_notify: bool,
    /// Query only: true while the QP is in SQD and WQEs are still in flight.
    pub sq_draining: bool,
    /// Outstanding READ/atomic as initiator (`MAX_QP_RD_ATOMIC`).
    pub max_rd_atomic: u8,
    /// Responder resources for READ/atomic (`MAX_DEST_RD_ATOMIC`).
    pub max_dest_rd_atomic: u8,
    /// RNR NAK timer code sent to the peer, 0–31 (`MIN_RNR_TIMER`).
    pub min_rnr_timer: u8,
    /// Port number, from 1 (`PORT`).
    pub port_num: u8,
    /// Local ACK timeout exponent: 4.096 µs × 2^timeout, 0 = infinite (`TIMEOUT`).
    pub timeout: u8,
    /// Transport retries, 0–7 (`RETRY_CNT`).
    pub retry_cnt: u8,
    /// RNR retries, 0–7, 7 = infinite (`RNR_RETRY`).
    pub rnr_retry: u8,
}

impl Default for QpAttr {
    fn default() -> Self {
        QpAttr {
            qp_state: QpState::Reset,
            cur_qp_state: QpState::Reset,
            path_mtu: Mtu::Mtu1024,
            path_mig_state: 0,
            qkey: 0,
            rq_psn: 0,
            sq_psn: 0,
            dest_qp_num: 0,
            qp_access_flags: AccessFlags::empty(),
            ah_attr: AhAttr::default(),
            alt_ah_attr: AhAttr::default(),
            pkey_index: 0,
            en_sqd_async_notify: false,
            sq_draining: false,
            max_rd_atomic: 0,
            max_dest_rd_atomic: 0,
            min_rnr_timer: 0,
            port_num: 1,
            timeout: 0,
            retry_cnt: 0,
            rnr_retry: 0,
        }
    }
}

impl QpAttr {
    /// Attributes that set only the target state.
    pub fn to_state(state: QpState) -> QpAttr {
        QpAttr {
            qp_state: state,
            ..QpAttr::default()
        }
    }

    /// Copies into `self` every field of `src` whose bit is in `mask` (not the state).
    pub(crate) fn apply(&mut self, src: &QpAttr, mask: M) {
        if mask.contains(M::EN_SQD_ASYNC_NOTIFY) {
            self.en_sqd_async_notify = src.en_sqd_async_notify;
        }
        if mask.contains(M::ACCESS_FLAGS) {
            self.qp_access_flags = src.qp_access_flags;
        }
        if mask.contains(M::PKEY_INDEX) {
            self.pkey_index = src.pkey_index;
        }
        if mask.contains(M::PORT) {
            self.port_num = src.port_num;
        }
        if mask.contains(M::QKEY) {
            self.qkey = src.qkey;
        }
        if mask.contains(M::AV) {
            self.ah_attr = src.ah_attr;
        }
        if mask.contains(M::PATH_MTU) {
            self.path_mtu = src.path_mtu;
        }
        if mask.contains(M::TIMEOUT) {
            self.timeout = src.timeout;
        }
        if mask.contains(M::RETRY_CNT) {
            self.retry_cnt = src.retry_cnt;
        }
        if mask.contains(M::RNR_RETRY) {
            self.rnr_retry = src.rnr_retry;
        }
        if mask.contains(M::RQ_PSN) {
            self.rq_psn = src.rq_psn & PSN_MASK;
        }
        if mask.contains(M::MAX_QP_RD_ATOMIC) {
            self.max_rd_atomic = src.max_rd_atomic;
        }
        if mask.contains(M::ALT_PATH) {
            self.alt_ah_attr = src.alt_ah_attr;
        }
        if mask.contains(M::MIN_RNR_TIMER) {
            self.min_rnr_timer = src.min_rnr_timer;
        }
        if mask.contains(M::SQ_PSN) {
            self.sq_psn = src.sq_psn & PSN_MASK;
        }
        if mask.contains(M::MAX_DEST_RD_ATOMIC) {
            self.max_dest_rd_atomic = src.max_dest_rd_atomic;
        }
        if mask.contains(M::PATH_MIG_STATE) {
            self.path_mig_state = src.path_mig_state;
        }
        if mask.contains(M::DEST_QPN) {
            self.dest_qp_num = src.dest_qp_num;
        }
    }
}

/// PSNs are 24 bits.
pub const PSN_MASK: u32 = 0x00FF_FFFF;

/// The required and optional attribute bits of one transition for one QP type.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct MaskRule {
    /// Bits that must be in the mask (besides STATE).
    pub required: M,
    /// Bits that may be in the mask.
    pub optional: M,
}

/// One legal transition: a row of the kernel's `qp_state_table`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Transition {
    /// Current state.
    pub from: QpState,
    /// Next state.
    pub to: QpState,
    /// RC masks.
    pub rc: MaskRule,
    /// UC masks.
    pub uc: MaskRule,
    /// UD masks.
    pub ud: MaskRule,
}

impl Transition {
    /// The masks for `qp_type`.
    pub const fn rule(&self, qp_type: QpType) -> MaskRule {
        match qp_type {
            QpType::Rc => self.rc,
            QpType::Uc => self.uc,
            QpType::Ud => self.ud,
        }
    }
}

const fn m(bits: &[M]) -> M {
    let mut acc = 0;
    let mut i = 0;
    while i < bits.len() {
        acc |= bits[i].0;
        i += 1;
    }
    M(acc)
}

const NONE: MaskRule = MaskRule {
    required: M(0),
    optional: M(0),
};

const fn rule(required: M, optional: M) -> MaskRule {
    MaskRule { required, optional }
}

const fn same(r: MaskRule) -> (MaskRule, MaskRule, MaskRule) {
    (r, r, r)
}

const fn row(from: QpState, to: QpState, rules: (MaskRule, MaskRule, MaskRule)) -> Transition {
    Transition {
        from,
        to,
        rc: rules.0,
        uc: rules.1,
        ud: rules.2,
    }
}

use QpState::{
    Err as ERR, Init as INIT, Reset as RESET, Rtr as RTR, Rts as RTS, Sqd as SQD, Sqe as SQE,
};

const RC_RTS_OPT: M = m(&[
    M::CUR_STATE,
    M::ACCESS_FLAGS,
    M::ALT_PATH,
    M::PATH_MIG_STATE,
    M::MIN_RNR_TIMER,
]);
const UC_RTS_OPT: M = m(&[
    M::CUR_STATE,
    M::ACCESS_FLAGS,
    M::ALT_PATH,
    M::PATH_MIG_STATE,
]);
const UD_RTS_OPT: M = m(&[M::CUR_STATE, M::QKEY]);

/// The legal transitions and their masks, one row per transition, as the kernel's
/// `qp_state_table` (`drivers/infiniband/core/verbs.c`) lists them for RC, UC and UD.
/// Any `(from, to)` pair not listed is illegal. Into RESET and ERR the mask must be exactly
/// STATE.
pub const QP_STATE_TABLE: [Transition; 22] = [
    row(RESET, RESET, same(NONE)),
    row(
        RESET,
        INIT,
        (
            rule(m(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS]), M(0)),
            rule(m(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS]), M(0)),
            rule(m(&[M::PKEY_INDEX, M::PORT, M::QKEY]), M(0)),
        ),
    ),
    row(INIT, RESET, same(NONE)),
    row(INIT, ERR, same(NONE)),
    row(
        INIT,
        INIT,
        (
            rule(M(0), m(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS])),
            rule(M(0), m(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS])),
            rule(M(0), m(&[M::PKEY_INDEX, M::PORT, M::QKEY])),
        ),
    ),
    row(
        INIT,
        RTR,
        (
            rule(
                m(&[
                    M::AV,
                    M::PATH_MTU,
                    M::DEST_QPN,
                    M::RQ_PSN,
                    M::MAX_DEST_RD_ATOMIC,
                    M::MIN_RNR_TIMER,
                ]),
                m(&[M::ALT_PATH, M::ACCESS_FLAGS, M::PKEY_INDEX]),
            ),
            rule(
                m(&[M::AV, M::PATH_MTU, M::DEST_QPN, M::RQ_PSN]),
                m(&[M::ALT_PATH, M::ACCESS_FLAGS, M::PKEY_INDEX]),
            ),
            rule(M(0), m(&[M::PKEY_INDEX, M::QKEY])),
        ),
    ),
    row(RTR, RESET, same(NONE)),
    row(RTR, ERR, same(NONE)),
    row(
        RTR,
        RTS,
        (
            rule(
                m(&[
                    M::TIMEOUT,
                    M::RETRY_CNT,
                    M::RNR_RETRY,
                    M::SQ_PSN,
                    M::MAX_QP_RD_ATOMIC,
                ]),
                m(&[
                    M::CUR_STATE,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::MIN_RNR_TIMER,
                    M::PATH_MIG_STATE,
                ]),
            ),
            rule(
                M::SQ_PSN,
                m(&[
                    M::CUR_STATE,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::PATH_MIG_STATE,
                ]),
            ),
            rule(M::SQ_PSN, UD_RTS_OPT),
        ),
    ),
    row(RTS, RESET, same(NONE)),
    row(RTS, ERR, same(NONE)),
    row(
        RTS,
        RTS,
        (
            rule(M(0), RC_RTS_OPT),
            rule(M(0), UC_RTS_OPT),
            rule(M(0), UD_RTS_OPT),
        ),
    ),
    row(RTS, SQD, same(rule(M(0), M::EN_SQD_ASYNC_NOTIFY))),
    row(SQD, RESET, same(NONE)),
    row(SQD, ERR, same(NONE)),
    row(
        SQD,
        RTS,
        (
            rule(M(0), RC_RTS_OPT),
            rule(M(0), UC_RTS_OPT),
            rule(M(0), UD_RTS_OPT),
        ),
    ),
    row(
        SQD,
        SQD,
        (
            rule(
                M(0),
                m(&[
                    M::PORT,
                    M::AV,
                    M::TIMEOUT,
                    M::RETRY_CNT,
                    M::RNR_RETRY,
                    M::MAX_QP_RD_ATOMIC,
                    M::MAX_DEST_RD_ATOMIC,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::PKEY_INDEX,
                    M::MIN_RNR_TIMER,
                    M::PATH_MIG_STATE,
                ]),
            ),
            rule(
                M(0),
                m(&[
                    M::AV,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::PKEY_INDEX,
                    M::PATH_MIG_STATE,
                ]),
            ),
            rule(M(0), m(&[M::PKEY_INDEX, M::QKEY])),
        ),
    ),
    row(SQE, RESET, same(NONE)),
    row(SQE, ERR, same(NONE)),
    // The kernel table has no RC entry for SQE→RTS: valid with STATE alone.
    row(
        SQE,
        RTS,
        (
            NONE,
            rule(M(0), m(&[M::CUR_STATE, M::ACCESS_FLAGS])),
            rule(M(0), m(&[M::CUR_STATE, M::QKEY])),
        ),
    ),
    row(ERR, RESET, same(NONE)),
    row(ERR, ERR, same(NONE)),
];

/// The table row for `from → to`, if that transition is legal.
pub fn transition(from: QpState, to: QpState) -> Option<&'static Transition> {
    QP_STATE_TABLE.iter().find(|t| t.from == from && t.to == to)
}

/// Something `modify_qp` accepted but changed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ModifyWarning {
    /// A PSN above 24 bits was masked (`_ib_modify_qp` warns and masks).
    PsnMasked {
        /// "rq_psn" or "sq_psn".
        field: &'static str,
        /// The value given.
        given: u32,
        /// The value stored.
        stored: u32,
    },
}

impl fmt::Display for ModifyWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModifyWarning::PsnMasked {
                field,
                given,
                stored,
            } => {
                write!(
                    f,
                    "{field} {given:#x} has more than 24 bits; stored as {stored:#08x}"
                )
            }
        }
    }
}

/// Why `modify_qp` returned EINVAL. Display names the rule broken.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum ModifyError {
    /// CUR_STATE given while the current state is not RTR, RTS, SQD or SQE.
    #[error(
        "modify_qp: CUR_STATE is only accepted when the current state is RTR, RTS, SQD or SQE, not {cur} (ib_modify_qp_is_ok)"
    )]
    CurStateNotAllowed {
        /// The current state used.
        cur: QpState,
    },
    /// `(from, to)` is not in the transition table.
    #[error("modify_qp {from}→{to}: not a legal transition{}", legal_from(*from))]
    IllegalTransition {
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
    },
    /// A required attribute is missing from the mask.
    #[error(
        "modify_qp {from}→{to}: missing required attribute{} {} ({qp_type} requires {})",
        plural(*missing), comma(*missing), comma(*required)
    )]
    MissingRequired {
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
        /// The QP type.
        qp_type: QpType,
        /// Bits missing.
        missing: M,
        /// Everything required.
        required: M,
    },
    /// The mask holds bits this transition does not accept.
    #[error(
        "modify_qp {from}→{to}: attribute{} {} not allowed for {qp_type} (allowed: {})",
        plural(*extra), comma(*extra), comma(*allowed)
    )]
    NotAllowed {
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
        /// The QP type.
        qp_type: QpType,
        /// Bits not allowed.
        extra: M,
        /// What may be given: STATE, the required and the optional bits.
        allowed: M,
    },
    /// `port_num` is not a port of the device.
    #[error("modify_qp: port {port} does not exist (the device has port 1)")]
    InvalidPort {
        /// The port given.
        port: u8,
    },
    /// `pkey_index` is outside the P_Key table.
    #[error("modify_qp: pkey_index {index} is outside the P_Key table ({len} entries)")]
    PkeyIndexOutOfRange {
        /// Index given.
        index: u16,
        /// Table length.
        len: u16,
    },
    /// ALT_PATH on a RoCE port.
    #[error(
        "modify_qp: ALT_PATH is not supported on RoCE (_ib_modify_qp: \"ban them in roce mode\")"
    )]
    AltPathOnRoce,
    /// The AV is not global.
    #[error(
        "modify_qp: RoCE needs a global address vector (ah_attr.is_global = 1 with a GRH and a destination GID)"
    )]
    AvNotGlobal,
    /// `sgid_index` outside the GID table.
    #[error("modify_qp: sgid_index {index} is outside the GID table ({len} entries)")]
    SgidIndexOutOfRange {
        /// Index given.
        index: u8,
        /// Table length.
        len: u32,
    },
    /// The source GID (`sgid_index`'s entry) and the destination GID are of different address
    /// families (IPv6 and IPv4-mapped): resolving the destination MAC fails before the QP
    /// moves (Linux `ib_resolve_eth_dmac` → `rdma_addr_find_l2_eth_by_grh` → `rdma_resolve_ip`,
    /// EINVAL when the two families differ).
    #[error(
        "modify_qp: sgid_index {index} is {sgid}, an {sgid_family} address, but the destination GID {dgid} is {dgid_family}: the destination MAC cannot be resolved"
    )]
    GidFamilyMismatch {
        /// The index given.
        index: u8,
        /// Its GID.
        sgid: crate::types::Gid,
        /// `IPv6` or `IPv4`.
        sgid_family: &'static str,
        /// The destination GID.
        dgid: crate::types::Gid,
        /// `IPv6` or `IPv4`.
        dgid_family: &'static str,
    },
    /// `timeout` > 31.
    #[error(
        "modify_qp: timeout {timeout} is above 31 (the local ACK timeout is 4.096 µs × 2^timeout, a 5-bit field)"
    )]
    TimeoutTooLarge {
        /// Value given.
        timeout: u8,
    },
    /// `retry_cnt` > 7.
    #[error("modify_qp: retry_cnt {value} is above 7 (a 3-bit field)")]
    RetryCntTooLarge {
        /// Value given.
        value: u8,
    },
    /// `rnr_retry` > 7.
    #[error("modify_qp: rnr_retry {value} is above 7 (a 3-bit field; 7 means retry forever)")]
    RnrRetryTooLarge {
        /// Value given.
        value: u8,
    },
    /// `min_rnr_timer` > 31.
    #[error("modify_qp: min_rnr_timer {value} is above 31 (a 5-bit RNR timer code)")]
    MinRnrTimerTooLarge {
        /// Value given.
        value: u8,
    },
    /// `path_mtu` above the port's max MTU.
    #[error("modify_qp: path_mtu {requested} is above the port's max MTU {max}")]
    PathMtuTooLarge {
        /// Value given.
        requested: Mtu,
        /// Port max.
        max: Mtu,
    },
    /// `max_rd_atomic` above the device's `max_qp_init_rd_atom`.
    #[error("modify_qp: max_rd_atomic {requested} is above the device's max_qp_init_rd_atom {max}")]
    MaxRdAtomicTooLarge {
        /// Value given.
        requested: u8,
        /// Device limit.
        max: u32,
    },
    /// `max_dest_rd_atomic` above the device's `max_qp_rd_atom`.
    #[error("modify_qp: max_dest_rd_atomic {requested} is above the device's max_qp_rd_atom {max}")]
    MaxDestRdAtomicTooLarge {
        /// Value given.
        requested: u8,
        /// Device limit.
        max: u32,
    },
    /// `dest_qp_num` needs more than 24 bits.
    #[error("modify_qp: dest_qp_num {value:#x} needs more than 24 bits")]
    DestQpnTooLarge {
        /// Value given.
        value: u32,
    },
    /// Leaving SQD for anything but ERR while WQEs are still in flight.
    #[error(
        "modify_qp SQD→{to}: the send queue is still draining; only ERR is accepted until it drains (rxe_qp_chk_attr)"
    )]
    SqDraining {
        /// Requested state.
        to: QpState,
    },
    /// A transition the kernel's table allows but the mlx5 driver has no firmware command
    /// for ([`NicProfile::lacks_transition`]).
    #[error(
        "modify_qp {from}→{to}: the kernel's table allows it, but the mlx5 driver has no firmware command for it (no {from}→{to} entry in the optab of __mlx5_ib_modify_qp, drivers/infiniband/hw/mlx5/qp.c); rxe implements SQD"
    )]
    NoMlx5Command {
        /// Current state.
        from: QpState,
        /// Requested state.
        to: QpState,
    },
}

fn plural(m: M) -> &'static str {
    if m.iter_names().count() > 1 { "s" } else { "" }
}

/// The names of the bits of `m`, comma-separated.
fn comma(m: M) -> String {
    m.iter_names().collect::<Vec<_>>().join(", ")
}

fn legal_from(from: QpState) -> String {
    let mut to: Vec<QpState> = QP_STATE_TABLE
        .iter()
        .filter(|t| t.from == from)
        .map(|t| t.to)
        .collect();
    to.sort();
    let to: Vec<&str> = to.iter().map(|s| s.name()).collect();
    format!(" (from {from} the legal targets are {})", to.join(", "))
}

/// What [`validate`] accepted.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Validated {
    /// The current state used for the table lookup.
    pub from: QpState,
    /// The next state.
    pub to: QpState,
    /// Values accepted but changed.
    pub warnings: Vec<ModifyWarning>,
}

/// Checks a `modify_qp` call without changing anything (see the module docs for the order).
///
/// `state` is the QP's state; `sq_draining` is true when it is in SQD with WQEs in flight.
/// `profile` decides the driver's own refusals.
pub fn validate(
    qp_type: QpType,
    state: QpState,
    sq_draining: bool,
    attr: &QpAttr,
    mask: M,
    device: &DeviceAttr,
    profile: NicProfile,
) -> Result<Validated, ModifyError> {
    let cur = if mask.contains(M::CUR_STATE) {
        attr.cur_qp_state
    } else {
        state
    };
    let next = if mask.contains(M::STATE) {
        attr.qp_state
    } else {
        cur
    };
    if mask.contains(M::CUR_STATE)
        && !matches!(
            cur,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    {
        return Err(ModifyError::CurStateNotAllowed { cur });
    }
    let row = transition(cur, next).ok_or(ModifyError::IllegalTransition {
        from: cur,
        to: next,
    })?;
    let r = row.rule(qp_type);
    let missing = r.required - mask;
    if !missing.is_empty() {
        return Err(ModifyError::MissingRequired {
            from: cur,
            to: next,
            qp_type,
            missing,
            required: r.required,
        });
    }
    let allowed = r.required | r.optional | M::STATE;
    let extra = mask - allowed;
    if !extra.is_empty() {
        return Err(ModifyError::NotAllowed {
            from: cur,
            to: next,
            qp_type,
            extra,
            allowed,
        });
    }

    if mask.contains(M::PORT) && attr.port_num != 1 {
        return Err(ModifyError::InvalidPort {
            port: attr.port_num,
        });
    }
    if mask.contains(M::PKEY_INDEX) && attr.pkey_index >= device.port.pkey_tbl_len {
        return Err(ModifyError::PkeyIndexOutOfRange {
            index: attr.pkey_index,
            len: device.port.pkey_tbl_len,
        });
    }
    if mask.contains(M::ALT_PATH) {
        return Err(ModifyError::AltPathOnRoce);
    }
    if mask.contains(M::AV) {
        if !attr.ah_attr.is_global {
            return Err(ModifyError::AvNotGlobal);
        }
        if u32::from(attr.ah_attr.grh.sgid_index) >= device.port.gid_tbl_len {
            return Err(ModifyError::SgidIndexOutOfRange {
                index: attr.ah_attr.grh.sgid_index,
                len: device.port.gid_tbl_len,
            });
        }
    }
    if mask.contains(M::TIMEOUT) && attr.timeout > 31 {
        return Err(ModifyError::TimeoutTooLarge {
            timeout: attr.timeout,
        });
    }
    if mask.contains(M::RETRY_CNT) && attr.retry_cnt > 7 {
        return Err(ModifyError::RetryCntTooLarge {
            value: attr.retry_cnt,
        });
    }
    if mask.contains(M::RNR_RETRY) && attr.rnr_retry > 7 {
        return Err(ModifyError::RnrRetryTooLarge {
            value: attr.rnr_retry,
        });
    }
    if mask.contains(M::MIN_RNR_TIMER) && attr.min_rnr_timer > 31 {
        return Err(ModifyError::MinRnrTimerTooLarge {
            value: attr.min_rnr_timer,
        });
    }
    if mask.contains(M::PATH_MTU) && attr.path_mtu > device.port.max_mtu {
        return Err(ModifyError::PathMtuTooLarge {
            requested: attr.path_mtu,
            max: device.port.max_mtu,
        });
    }
    if mask.contains(M::MAX_QP_RD_ATOMIC)
        && u32::from(attr.max_rd_atomic) > device.max_qp_init_rd_atom
    {
        return Err(ModifyError::MaxRdAtomicTooLarge {
            requested: attr.max_rd_atomic,
            max: device.max_qp_init_rd_atom,
        });
    }
    if mask.contains(M::MAX_DEST_RD_ATOMIC)
        && u32::from(attr.max_dest_rd_atomic) > device.max_qp_rd_atom
    {
        return Err(ModifyError::MaxDestRdAtomicTooLarge {
            requested: attr.max_dest_rd_atomic,
            max: device.max_qp_rd_atom,
        });
    }
    if mask.contains(M::DEST_QPN) && attr.dest_qp_num > PSN_MASK {
        return Err(ModifyError::DestQpnTooLarge {
            value: attr.dest_qp_num,
        });
    }
    // rxe_qp_chk_attr: `mask & IB_QP_STATE && cur_state == IB_QPS_SQD`, then
    // `qp->attr.sq_draining && new_state != IB_QPS_ERR`. ibta follows it (inferred).
    if mask.contains(M::STATE) && cur == QpState::Sqd && sq_draining && next != QpState::Err {
        return Err(ModifyError::SqDraining { to: next });
    }
    if profile.lacks_transition(cur, next) {
        return Err(ModifyError::NoMlx5Command {
            from: cur,
            to: next,
        });
    }

    let mut warnings = Vec::new();
    for (bit, field, given) in [
        (M::RQ_PSN, "rq_psn", attr.rq_psn),
        (M::SQ_PSN, "sq_psn", attr.sq_psn),
    ] {
        if mask.contains(bit) && given > PSN_MASK {
            warnings.push(ModifyWarning::PsnMasked {
                field,
                given,
                stored: given & PSN_MASK,
            });
        }
    }
    Ok(Validated {
        from: cur,
        to: next,
        warnings,
    })
}

#[cfg(test)]
mod tests;
