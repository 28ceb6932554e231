//! Connection setup: `connect_rc` brings an RC QP on each of two hosts to RTS connected to the
//! other, as an application does it (PD, CQ, QP, RESET→INIT, the out-of-band exchange over
//! TCP, INIT→RTR→RTS with the masks IBTA requires), the two hosts setting up side by side. The
//! experiments and labs start from it; [`RcOptions`] carries what they vary.

use super::{ConnInfo, World, WorldError};
use verbs::{AccessFlags, QpAttr, QpAttrMask, QpNum};

/// One side of a connected RC QP.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Endpoint {
    /// Host ordinal.
    pub host: u32,
    /// Its protection domain.
    pub pd: verbs::PdHandle,
    /// Its completion queue (send and receive).
    pub cq: verbs::CqHandle,
    /// The QP.
    pub qpn: QpNum,
}

/// How [`World::connect_rc`] sets the QPs up.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RcOptions {
    /// Path MTU.
    pub mtu: verbs::types::Mtu,
    /// Local ACK timeout exponent.
    pub timeout: u8,
    /// Retries after timeouts and sequence NAKs.
    pub retry_cnt: u8,
    /// Retries after RNR NAKs (7 = forever).
    pub rnr_retry: u8,
    /// RNR timer code.
    pub min_rnr_timer: u8,
    /// READ/atomics in flight per QP, both directions.
    pub rd_atomic: u8,
    /// Remote access the QPs grant.
    pub access: AccessFlags,
    /// Queue sizes.
    pub cap: verbs::qp::QpCap,
    /// CQ entries.
    pub cqe: u32,
}

impl Default for RcOptions {
    fn default() -> Self {
        RcOptions {
            mtu: verbs::types::Mtu::Mtu4096,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            rd_atomic: 16,
            access: AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_READ
                | AccessFlags::REMOTE_ATOMIC,
            cap: verbs::qp::QpCap {
                max_send_wr: 1024,
                max_recv_wr: 1024,
                max_send_sge: 4,
                max_recv_sge: 4,
                max_inline_data: 256,
            },
            cqe: 4096,
        }
    }
}

impl World {
    /// Creates a PD, a CQ and an RC QP on hosts `a` and `b` and brings both QPs to RTS
    /// connected to each other: RESET→INIT, the out-of-band exchange over a TCP connection
    /// ([`World::exchange`]), then INIT→RTR→RTS with the masks IBTA requires.
    /// The two hosts set up side by side ([`World::in_parallel`]): each host's calls run in
    /// order on its own application thread, and the exchange waits for both.
    pub fn connect_rc(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        self.connect_rc_with_channels(a, b, o, [None, None])
    }

    /// [`World::connect_rc`] whose CQ on host `a` (`channels[0]`) or `b` (`channels[1]`)
    /// reports to a completion channel created beforehand.
    pub fn connect_rc_with_channels(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
        channels: [Option<verbs::types::ChannelHandle>; 2],
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        self.in_parallel(|w| w.connect_rc_now(a, b, o, channels))
    }

    pub(super) fn connect_rc_now(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
        channels: [Option<verbs::types::ChannelHandle>; 2],
    ) -> Result<(Endpoint, Endpoint), WorldError> {
        let ends = self.rc_endpoints_init(a, b, o, channels)?;
        // Each side's QPN, first PSN and GID cross a TCP connection before RTR; the RTR
        // attributes come from the bytes each side read. connect_rc registers no buffer, so
        // rkey and address are zero here (applications send theirs in the same message).
        let info = |w: &World, e: &Endpoint| ConnInfo {
            qpn: e.qpn.get(),
            psn: 0,
            gid: w.local_gid(e.host).0,
            ..ConnInfo::default()
        };
        let infos = [info(self, &ends[0]), info(self, &ends[1])];
        let (a_learned, b_learned) = self.exchange_conn_info(a, b, infos)?;
        for (me, peer) in [(ends[0], a_learned), (ends[1], b_learned)] {
            self.rc_to_rtr(&me, peer.gid, peer.qpn, peer.psn, o.mtu, o, o.rd_atomic)?;
        }
        for me in [ends[0], ends[1]] {
            self.rc_to_rts(&me, 0, o, o.rd_atomic)?;
        }
        Ok((ends[0], ends[1]))
    }

    /// A PD, a CQ and an RC QP on hosts `a` and `b`, each QP moved RESET→INIT with `o`'s
    /// access flags: where both connection setups (TCP exchange, RDMA-CM) start.
    pub(super) fn rc_endpoints_init(
        &mut self,
        a: u32,
        b: u32,
        o: &RcOptions,
        channels: [Option<verbs::types::ChannelHandle>; 2],
    ) -> Result<[Endpoint; 2], WorldError> {
        use verbs::types::{QpState, QpType};
        if a >= self.host_count() || b >= self.host_count() {
            return Err(WorldError::NoHost(a.max(b)));
        }
        let mut ends = Vec::new();
        for (h, channel) in [a, b].into_iter().zip(channels) {
            let pd = self.state.hosts[h as usize].verbs.alloc_pd()?;
            let (cq, _) = self.create_cq(h, o.cqe, channel)?;
            let init = verbs::qp::QpInitAttr {
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                cap: o.cap,
                sq_sig_all: false,
            };
            let qpn = self.create_qp(h, pd, &init)?.qpn;
            ends.push(Endpoint {
                host: h,
                pd,
                cq,
                qpn,
            });
        }
        for me in [ends[0], ends[1]] {
            let init = QpAttr {
                qp_state: QpState::Init,
                qp_access_flags: o.access,
                port_num: 1,
                ..QpAttr::default()
            };
            self.modify_qp(
                me.host,
                me.qpn,
                &init,
                QpAttrMask::STATE
                    | QpAttrMask::PKEY_INDEX
                    | QpAttrMask::PORT
                    | QpAttrMask::ACCESS_FLAGS,
            )?;
        }
        Ok([ends[0], ends[1]])
    }

    /// INIT→RTR toward the peer at `peer_gid` whose QP is `peer_qpn` and whose first PSN is
    /// `peer_psn`, with the masks IBTA requires; `rd_atomic` is the responder resources.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rc_to_rtr(
        &mut self,
        me: &Endpoint,
        peer_gid: [u8; 16],
        peer_qpn: u32,
        peer_psn: u32,
        mtu: verbs::types::Mtu,
        o: &RcOptions,
        rd_atomic: u8,
    ) -> Result<(), WorldError> {
        use verbs::types::{AhAttr, Gid, QpState};
        let mut ah_attr = AhAttr::roce(Gid(peer_gid));
        ah_attr.grh.sgid_index = self.state.hosts[me.host as usize].sgid_index;
        let rtr = QpAttr {
            qp_state: QpState::Rtr,
            ah_attr,
            path_mtu: mtu,
            dest_qp_num: peer_qpn,
            rq_psn: peer_psn,
            max_dest_rd_atomic: rd_atomic,
            min_rnr_timer: o.min_rnr_timer,
            ..QpAttr::default()
        };
        self.modify_qp(
            me.host,
            me.qpn,
            &rtr,
            QpAttrMask::STATE
                | QpAttrMask::AV
                | QpAttrMask::PATH_MTU
                | QpAttrMask::DEST_QPN
                | QpAttrMask::RQ_PSN
                | QpAttrMask::MAX_DEST_RD_ATOMIC
                | QpAttrMask::MIN_RNR_TIMER,
        )?;
        Ok(())
    }

    /// RTR→RTS sending from PSN `sq_psn` with `o`'s timers and retries; `rd_atomic` is the
    /// initiator depth.
    pub(super) fn rc_to_rts(
        &mut self,
        me: &Endpoint,
        sq_psn: u32,
        o: &RcOptions,
        rd_atomic: u8,
    ) -> Result<(), WorldError> {
        let rts = QpAttr {
            qp_state: verbs::types::QpState::Rts,
            timeout: o.timeout,
            retry_cnt: o.retry_cnt,
            rnr_retry: o.rnr_retry,
            sq_psn,
            max_rd_atomic: rd_atomic,
            ..QpAttr::default()
        };
        self.modify_qp(
            me.host,
            me.qpn,
            &rts,
            QpAttrMask::STATE
                | QpAttrMask::TIMEOUT
                | QpAttrMask::RETRY_CNT
                | QpAttrMask::RNR_RETRY
                | QpAttrMask::SQ_PSN
                | QpAttrMask::MAX_QP_RD_ATOMIC,
        )?;
        Ok(())
    }
}
