//! Fixtures shared by the integration tests: a host with one PD, one CQ, one registered
//! buffer, and QPs walked through RESET → INIT → RTR → RTS with the minimal masks of
//! `ibv_modify_qp.3`.

#![allow(dead_code)]

use verbs::{
    AccessFlags, AhAttr, Context, CqHandle, Gid, Mr, Mtu, NicProfile, PdHandle, QpAttr,
    QpAttrMask as M, QpCap, QpInitAttr, QpNum, QpState, QpType, Wc,
};

pub const RC_INIT: M = M(M::STATE.0 | M::PKEY_INDEX.0 | M::PORT.0 | M::ACCESS_FLAGS.0);
pub const UD_INIT: M = M(M::STATE.0 | M::PKEY_INDEX.0 | M::PORT.0 | M::QKEY.0);
pub const RC_RTR: M = M(M::STATE.0
    | M::AV.0
    | M::PATH_MTU.0
    | M::DEST_QPN.0
    | M::RQ_PSN.0
    | M::MAX_DEST_RD_ATOMIC.0
    | M::MIN_RNR_TIMER.0);
pub const UC_RTR: M = M(M::STATE.0 | M::AV.0 | M::PATH_MTU.0 | M::DEST_QPN.0 | M::RQ_PSN.0);
pub const RC_RTS: M = M(M::STATE.0
    | M::TIMEOUT.0
    | M::RETRY_CNT.0
    | M::RNR_RETRY.0
    | M::SQ_PSN.0
    | M::MAX_QP_RD_ATOMIC.0);
pub const UC_RTS: M = M(M::STATE.0 | M::SQ_PSN.0);

pub struct Host {
    pub ctx: Context,
    pub pd: PdHandle,
    pub cq: CqHandle,
    pub buf: u64,
    pub mr: Mr,
}

pub const BUF_LEN: u64 = 64 * 1024;

pub fn host(profile: NicProfile) -> Host {
    let mut ctx = Context::new(profile);
    let pd = ctx.alloc_pd().unwrap();
    let (cq, _) = ctx.create_cq(256, None).unwrap();
    let buf = ctx.memory_mut().alloc(BUF_LEN).unwrap();
    let access = AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC;
    let mr = ctx.reg_mr(pd, buf, BUF_LEN, access).unwrap();
    Host {
        ctx,
        pd,
        cq,
        buf,
        mr,
    }
}

pub fn cap() -> QpCap {
    QpCap {
        max_send_wr: 8,
        max_recv_wr: 8,
        max_send_sge: 2,
        max_recv_sge: 2,
        max_inline_data: 64,
    }
}

impl Host {
    pub fn qp(&mut self, qp_type: QpType) -> QpNum {
        self.qp_with(qp_type, cap(), false)
    }

    pub fn qp_with(&mut self, qp_type: QpType, cap: QpCap, sq_sig_all: bool) -> QpNum {
        let init = QpInitAttr {
            qp_type,
            send_cq: self.cq,
            recv_cq: self.cq,
            cap,
            sq_sig_all,
        };
        self.ctx.create_qp(self.pd, &init).unwrap().qpn
    }

    pub fn make_init(&mut self, qpn: QpNum) {
        let ud = self.ctx.qp_type(qpn).unwrap() == QpType::Ud;
        let attr = QpAttr {
            qp_state: QpState::Init,
            qp_access_flags: AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_READ
                | AccessFlags::REMOTE_ATOMIC,
            qkey: 0x1111_1111,
            ..QpAttr::default()
        };
        self.ctx
            .modify_qp(qpn, &attr, if ud { UD_INIT } else { RC_INIT })
            .unwrap();
    }

    pub fn make_rtr(&mut self, qpn: QpNum) {
        let t = self.ctx.qp_type(qpn).unwrap();
        let attr = rtr_attr();
        let mask = match t {
            QpType::Rc => RC_RTR,
            QpType::Uc => UC_RTR,
            QpType::Ud => M::STATE,
        };
        self.ctx.modify_qp(qpn, &attr, mask).unwrap();
    }

    pub fn make_rts(&mut self, qpn: QpNum) {
        let t = self.ctx.qp_type(qpn).unwrap();
        let mask = if t == QpType::Rc { RC_RTS } else { UC_RTS };
        self.ctx.modify_qp(qpn, &rts_attr(), mask).unwrap();
    }

    pub fn bring_up(&mut self, qpn: QpNum) {
        self.make_init(qpn);
        self.make_rtr(qpn);
        self.make_rts(qpn);
    }

    pub fn state(&self, qpn: QpNum) -> QpState {
        self.ctx.qp_state(qpn).unwrap()
    }

    pub fn poll(&mut self) -> Vec<Wc> {
        self.ctx.poll_cq(self.cq, 1000).unwrap()
    }

    pub fn move_to(&mut self, qpn: QpNum, s: QpState) {
        self.ctx
            .modify_qp(qpn, &QpAttr::to_state(s), M::STATE)
            .unwrap();
    }
}

pub fn rtr_attr() -> QpAttr {
    QpAttr {
        qp_state: QpState::Rtr,
        ah_attr: AhAttr::roce(Gid::from_ipv4([10, 0, 0, 2])),
        path_mtu: Mtu::Mtu1024,
        dest_qp_num: 0x22,
        rq_psn: 100,
        max_dest_rd_atomic: 4,
        min_rnr_timer: 12,
        ..QpAttr::default()
    }
}

pub fn rts_attr() -> QpAttr {
    QpAttr {
        qp_state: QpState::Rts,
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        sq_psn: 200,
        max_rd_atomic: 4,
        ..QpAttr::default()
    }
}
