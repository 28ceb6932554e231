//! Connection setup, the one bring-up every experiment uses: [`World::connect_rc_with`] brings
//! an RC QP on each of two hosts up as an application does it (PD, CQ, QP, optionally a buffer
//! and its MR, RESET→INIT, the out-of-band exchange over TCP, INIT→RTR→RTS with the masks IBTA
//! requires), the two hosts setting up side by side, and stops at the state asked for. A
//! failure names the verb and the host ([`ConnectError`]). [`World::connect_rc`] is the common
//! case (to RTS, no buffer); [`RcOptions`] carries what the experiments vary.

use super::HostIx;
use super::{ConnInfo, World, WorldError};
use verbs::types::{ChannelHandle, QpState};
use verbs::{AccessFlags, QpAttr, QpAttrMask, QpNum};

/// One side of a connected RC QP.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Endpoint {
    /// The host.
    pub host: HostIx,
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

/// A buffer each host allocates (and normally registers) during the bring-up, after its QP
/// and before INIT; its address and rkey cross in the out-of-band exchange, as an application
/// sends them with its QPN.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct BufferSpec {
    /// Bytes per host.
    pub len: u64,
    /// Seed of the content when the buffer is synthetic (longer than
    /// `verbs::Memory::MAX_REAL_LEN`).
    pub seed: u64,
    /// Register it (timed, as `ibv_reg_mr`); an unregistered buffer has lkey and rkey 0
    /// (a lesson shows what the NIC does with it).
    pub register: bool,
    /// The access the MR grants. `REMOTE_WRITE` and `REMOTE_ATOMIC` need `LOCAL_WRITE`
    /// too (`ibv_reg_mr(3)`), as the verbs layer checks.
    pub access: AccessFlags,
}

/// What [`World::connect_rc_with`] does beyond [`RcOptions`].
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Bringup {
    /// QP attributes, queue sizes and access.
    pub opts: RcOptions,
    /// A completion channel (created beforehand) per host, for its CQ.
    pub channels: [Option<ChannelHandle>; 2],
    /// The state both QPs are left in: RTS to connect; a lesson stops at RESET, INIT or RTR
    /// to show what each state refuses. (RESET and INIT skip the exchange; a state past RTS
    /// is brought up as RTS.)
    pub stop_at: QpState,
    /// A buffer per host, or none.
    pub buffer: Option<BufferSpec>,
}

impl Bringup {
    /// Both QPs to RTS, no buffer, no completion channel.
    pub fn rts(opts: RcOptions) -> Bringup {
        Bringup {
            opts,
            channels: [None, None],
            stop_at: QpState::Rts,
            buffer: None,
        }
    }
}

/// A host's buffer from the bring-up: address, length, and the keys (0 when unregistered).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct HostBuffer {
    /// Virtual address.
    pub va: u64,
    /// Bytes.
    pub len: u64,
    /// Local key.
    pub lkey: u32,
    /// Remote key.
    pub rkey: u32,
}

/// Two connected (or partly brought up) RC QPs and their buffers.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Connected {
    /// Host `a`'s end and host `b`'s.
    pub ends: (Endpoint, Endpoint),
    /// Each host's buffer (zeros without [`Bringup::buffer`]).
    pub bufs: [HostBuffer; 2],
}

/// The step of a bring-up, named as the application calls it.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ConnectStep {
    /// `ibv_alloc_pd`.
    AllocPd,
    /// `ibv_create_cq`.
    CreateCq,
    /// `ibv_create_qp`.
    CreateQp,
    /// Allocating the buffer.
    Malloc,
    /// `ibv_reg_mr`.
    RegMr,
    /// `ibv_modify_qp` to INIT.
    ModifyInit,
    /// The QPN/PSN/GID/rkey exchange over TCP (both hosts).
    Exchange,
    /// `ibv_modify_qp` to RTR.
    ModifyRtr,
    /// `ibv_modify_qp` to RTS.
    ModifyRts,
}

impl ConnectStep {
    /// The verb as a report names it.
    pub const fn verb(self) -> &'static str {
        match self {
            ConnectStep::AllocPd => "ibv_alloc_pd",
            ConnectStep::CreateCq => "ibv_create_cq",
            ConnectStep::CreateQp => "ibv_create_qp",
            ConnectStep::Malloc => "malloc",
            ConnectStep::RegMr => "ibv_reg_mr",
            ConnectStep::ModifyInit => "ibv_modify_qp(INIT)",
            ConnectStep::Exchange => "out-of-band exchange",
            ConnectStep::ModifyRtr => "ibv_modify_qp(RTR)",
            ConnectStep::ModifyRts => "ibv_modify_qp(RTS)",
        }
    }
}

/// A bring-up that failed: which verb, on which host (for the exchange, the first of the two),
/// and why.
#[derive(Debug, thiserror::Error)]
#[error("{} on host {host}: {source}", step.verb())]
pub struct ConnectError {
    /// The step that failed.
    pub step: ConnectStep,
    /// The host it failed on.
    pub host: HostIx,
    /// What the world said.
    #[source]
    pub source: WorldError,
}

impl ConnectError {
    fn at(step: ConnectStep, host: HostIx) -> impl FnOnce(WorldError) -> ConnectError {
        move |source| ConnectError { step, host, source }
    }
}

impl World {
    /// Creates a PD, a CQ and an RC QP on hosts `a` and `b` and brings both QPs to RTS
    /// connected to each other ([`World::connect_rc_with`] with [`Bringup::rts`]).
    pub fn connect_rc(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        o: &RcOptions,
    ) -> Result<(Endpoint, Endpoint), ConnectError> {
        Ok(self.connect_rc_with(a, b, &Bringup::rts(*o))?.ends)
    }

    /// [`World::connect_rc`] whose CQ on host `a` (`channels[0]`) or `b` (`channels[1]`)
    /// reports to a completion channel created beforehand.
    pub fn connect_rc_with_channels(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        o: &RcOptions,
        channels: [Option<ChannelHandle>; 2],
    ) -> Result<(Endpoint, Endpoint), ConnectError> {
        let how = Bringup {
            channels,
            ..Bringup::rts(*o)
        };
        Ok(self.connect_rc_with(a, b, &how)?.ends)
    }

    /// The bring-up: on hosts `a` and `b`, side by side ([`World::in_parallel`]: each host's
    /// calls run in order on its own application thread, the exchange waits for both), a PD,
    /// a CQ, an RC QP and the buffer asked for; RESET→INIT; the out-of-band exchange over a
    /// TCP connection ([`World::exchange_conn_info`]); INIT→RTR→RTS with the masks IBTA
    /// requires, stopping at [`Bringup::stop_at`].
    pub fn connect_rc_with(
        &mut self,
        a: impl Into<HostIx>,
        b: impl Into<HostIx>,
        how: &Bringup,
    ) -> Result<Connected, ConnectError> {
        let (a, b): (HostIx, HostIx) = (a.into(), b.into());
        self.in_parallel(|w| w.connect_rc_now(a, b, how))
    }

    fn connect_rc_now(
        &mut self,
        a: HostIx,
        b: HostIx,
        how: &Bringup,
    ) -> Result<Connected, ConnectError> {
        use ConnectStep as S;
        use verbs::types::QpType;
        let o = &how.opts;
        for h in [a, b] {
            if h.get() >= self.host_count() {
                return Err(ConnectError::at(S::AllocPd, h)(WorldError::NoHost(h.get())));
            }
        }
        let rank = |s: QpState| match s {
            QpState::Reset => 0,
            QpState::Init => 1,
            QpState::Rtr => 2,
            _ => 3,
        };
        let reach = |s: QpState| rank(how.stop_at) >= rank(s);
        let mut ends = Vec::new();
        let mut bufs = [HostBuffer::default(); 2];
        for (i, (h, channel)) in [a, b].into_iter().zip(how.channels).enumerate() {
            self.focus_host(h);
            let pd = self.state.hosts[h.index()]
                .verbs
                .alloc_pd()
                .map_err(|e| ConnectError::at(S::AllocPd, h)(e.into()))?;
            let (cq, _) = self
                .create_cq(h, o.cqe, channel)
                .map_err(|e| ConnectError::at(S::CreateCq, h)(e.into()))?;
            let init = verbs::qp::QpInitAttr {
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                cap: o.cap,
                sq_sig_all: false,
            };
            let qpn = self
                .create_qp(h, pd, &init)
                .map_err(|e| ConnectError::at(S::CreateQp, h)(e.into()))?
                .qpn;
            if let Some(spec) = how.buffer {
                self.focus_host(h);
                let mem = self.state.hosts[h.index()].verbs.memory_mut();
                let va = if spec.len <= verbs::Memory::MAX_REAL_LEN {
                    mem.alloc(spec.len)
                } else {
                    mem.alloc_synthetic(spec.len, spec.seed)
                }
                .map_err(|e| ConnectError::at(S::Malloc, h)(e.into()))?;
                bufs[i].va = va;
                bufs[i].len = spec.len;
                if spec.register {
                    let mr = self
                        .reg_mr(h, pd, va, spec.len, spec.access)
                        .map_err(|e| ConnectError::at(S::RegMr, h)(e.into()))?;
                    bufs[i].lkey = mr.lkey;
                    bufs[i].rkey = mr.rkey;
                }
            }
            ends.push(Endpoint {
                host: h,
                pd,
                cq,
                qpn,
            });
        }
        let done = |ends: &[Endpoint]| Connected {
            ends: (ends[0], ends[1]),
            bufs,
        };
        if !reach(QpState::Init) {
            return Ok(done(&ends));
        }
        for me in [ends[0], ends[1]] {
            self.rc_to_init(&me, o)
                .map_err(|e| ConnectError::at(S::ModifyInit, me.host)(e))?;
        }
        if !reach(QpState::Rtr) {
            return Ok(done(&ends));
        }
        // Each side's QPN, first PSN, GID and buffer cross a TCP connection before RTR; the
        // RTR attributes come from the bytes each side read.
        let info = |w: &World, i: usize, e: &Endpoint| ConnInfo {
            qpn: e.qpn.get(),
            psn: 0,
            gid: w.local_gid(e.host).0,
            rkey: bufs[i].rkey,
            addr: bufs[i].va,
        };
        let infos = [info(self, 0, &ends[0]), info(self, 1, &ends[1])];
        let (a_learned, b_learned) = self
            .exchange_conn_info(a, b, infos)
            .map_err(ConnectError::at(S::Exchange, a))?;
        for (me, peer) in [(ends[0], a_learned), (ends[1], b_learned)] {
            self.rc_to_rtr(&me, peer.gid, peer.qpn, peer.psn, o.mtu, o, o.rd_atomic)
                .map_err(|e| ConnectError::at(S::ModifyRtr, me.host)(e))?;
        }
        if !reach(QpState::Rts) {
            return Ok(done(&ends));
        }
        for me in [ends[0], ends[1]] {
            self.rc_to_rts(&me, 0, o, o.rd_atomic)
                .map_err(|e| ConnectError::at(S::ModifyRts, me.host)(e))?;
        }
        Ok(done(&ends))
    }

    /// A PD, a CQ and an RC QP on hosts `a` and `b`, each moved RESET→INIT with `o`'s access
    /// flags (the bring-up stopped at INIT): where the RDMA-CM setup (`rdma_cm.rs`) starts.
    pub(super) fn rc_endpoints_init(
        &mut self,
        a: HostIx,
        b: HostIx,
        o: &RcOptions,
        channels: [Option<ChannelHandle>; 2],
    ) -> Result<[Endpoint; 2], WorldError> {
        let how = Bringup {
            channels,
            stop_at: QpState::Init,
            ..Bringup::rts(*o)
        };
        let c = self.connect_rc_now(a, b, &how)?;
        Ok([c.ends.0, c.ends.1])
    }

    /// RESET→INIT with `o`'s access flags, port 1, P_Key index 0.
    fn rc_to_init(&mut self, me: &Endpoint, o: &RcOptions) -> Result<(), WorldError> {
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
        Ok(())
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
        use verbs::types::{AhAttr, Gid};
        let mut ah_attr = AhAttr::roce(Gid(peer_gid));
        ah_attr.grh.sgid_index = self.state_of(me.host).hosts[me.host.index()].sgid_index;
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
            qp_state: QpState::Rts,
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
