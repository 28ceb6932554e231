//! `post_send` and `post_recv`: the checks a post runs and what it returns, per NIC profile
//! (verbs-spec §2; `ibv_post_send.3`, `ibv_post_recv.3`; the divergences are documented on
//! [`NicProfile`]).
//!
//! A post takes a chain (a slice) of WRs and stops at the first bad one: it returns
//! `Err(PostError { errno, bad_wr, .. })` and the WRs before it stay posted
//! (`ibv_post_send.3:20-23`; verbs-spec C18, C19).
//!
//! # Checks on a send WR, in order
//!
//! | check | mlx5 | rxe | ibta |
//! |---|---|---|---|
//! | QP below RTS (RESET/INIT/RTR) | accepted, waits in the queue | EINVAL after the WRs are queued, no `bad_wr` | EINVAL before any WR, `bad_wr` = 0 |
//! | queue full | ENOMEM, checked first | ENOMEM, checked last | ENOMEM, checked last |
//! | `num_sge > max_send_sge` | ENOMEM | EINVAL | EINVAL |
//! | atomic SGE length | not checked | EINVAL if < 8 | EINVAL if ≠ 8 |
//! | atomic `remote_addr % 8 ≠ 0` | not checked (the responder NAKs) | EINVAL | EINVAL |
//! | INLINE on READ/atomic | accepted, completes LOC_QP_OP_ERR | EINVAL | EINVAL |
//! | inline length > `max_inline_data` | ENOMEM | EINVAL | EINVAL |
//!
//! Every profile accepts an opcode the transport does not support (RDMA WRITE on UD, READ or
//! atomics on UC/UD): the user-space provider writes it to the ring and the WQE completes with
//! `LOC_QP_OP_ERR` when the send queue reaches it (RXE-req `next_opcode` < 0; verbs-spec §2).
//! Only the kernel ULP path refuses it at post time, which rdmalab does not model.
//!
//! Inline WRs copy their bytes from memory at post time, so the buffer may be reused as soon
//! as the post returns; their lkeys are not checked (`ibv_post_send.3:149-150`).
//!
//! # Checks on a receive WR
//!
//! RESET: EINVAL with `bad_wr` = 0 (ibta), EINVAL with no `bad_wr` (rxe), accepted (mlx5). Then
//! for each WR: queue full → ENOMEM, `num_sge > max_recv_sge` → EINVAL (all profiles;
//! `mlx5_post_recv`, rxe `rxe_post_recv`, RC `tests/utils.py:1836-1869`).
//!
//! # Posting in ERR
//!
//! Accepted, and each WR completes with `WR_FLUSH_ERR` at once, unsignaled ones included
//! (RXE-req `rxe_requester` in ERR; RXE-comp `do_complete`; verbs-spec C21). SQD accepts send
//! WRs, which wait until the QP returns to RTS.

use crate::errno::Errno;
use crate::error::{PostError, PostRejection, Queue};
use crate::flags::SendFlags;
use crate::profile::{AtomicPostCheck, NicProfile, RecvStateCheck, SendStateCheck};
use crate::qp::{Qp, RecvWqe, SendWqe, WqeId, WqeState};
use crate::types::{QpNum, QpState, QpType};
use crate::wc::{Wc, WcStatus};
use crate::wr::{RecvWr, SendWr};
use crate::{Context, memory::Memory};

/// What a successful post did.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct PostReport {
    /// WRs written to the queue.
    pub posted: usize,
    /// Of those, WRs completed at once with `WR_FLUSH_ERR` because the QP is in ERR.
    pub flushed: usize,
    /// The WQE identities, in chain order (flushed ones included).
    pub ids: Vec<WqeId>,
}

fn below_rts(state: QpState) -> bool {
    matches!(state, QpState::Reset | QpState::Init | QpState::Rtr)
}

impl Context {
    /// `ibv_post_send` (see the module docs).
    pub fn post_send(&mut self, qpn: QpNum, wrs: &[SendWr]) -> Result<PostReport, PostError> {
        let profile = self.profile();
        let err = |errno, bad_wr, posted, reason| PostError {
            op: Queue::Send,
            errno,
            bad_wr,
            posted,
            reason,
        };
        let Some(qp) = self.qps.get(&qpn) else {
            return Err(err(Errno::EINVAL, Some(0), 0, PostRejection::NoSuchQp(qpn)));
        };
        let state = qp.state;
        let state_rejection = PostRejection::QpState { state, profile };
        if below_rts(state) && profile.send_state_check() == SendStateCheck::Immediate {
            return Err(err(Errno::EINVAL, Some(0), 0, state_rejection));
        }
        let mut ids = Vec::new();
        let mut failure = None;
        for (i, wr) in wrs.iter().enumerate() {
            // Re-borrow per WR: the queue grows as WRs are accepted.
            let qp = &self.qps[&qpn];
            match build_send_wqe(profile, qp, &self.memory, wr) {
                Ok(mut wqe) => {
                    let qp = self
                        .qps
                        .get_mut(&qpn)
                        .expect("the QP was found above and nothing removed it");
                    wqe.id = qp.next_id();
                    ids.push(wqe.id);
                    qp.sq.push_back(wqe);
                }
                Err((errno, reason)) => {
                    failure = Some(err(errno, Some(i), i, reason));
                    break;
                }
            }
        }
        let posted = ids.len();
        if below_rts(state) && profile.send_state_check() == SendStateCheck::AtDoorbell {
            return Err(err(
                Errno::EINVAL,
                failure.and_then(|f| f.bad_wr),
                posted,
                state_rejection,
            ));
        }
        let flushed = if matches!(state, QpState::Err | QpState::Sqe) {
            self.flush_new_send(qpn)
        } else {
            0
        };
        match failure {
            Some(f) => Err(f),
            None => Ok(PostReport {
                posted,
                flushed,
                ids,
            }),
        }
    }

    /// `ibv_post_recv` (see the module docs).
    pub fn post_recv(&mut self, qpn: QpNum, wrs: &[RecvWr]) -> Result<PostReport, PostError> {
        let profile = self.profile();
        let err = |errno, bad_wr, posted, reason| PostError {
            op: Queue::Recv,
            errno,
            bad_wr,
            posted,
            reason,
        };
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return Err(err(Errno::EINVAL, Some(0), 0, PostRejection::NoSuchQp(qpn)));
        };
        let state = qp.state;
        if state == QpState::Reset {
            let reason = PostRejection::QpState { state, profile };
            match profile.recv_state_check() {
                RecvStateCheck::Immediate => return Err(err(Errno::EINVAL, Some(0), 0, reason)),
                RecvStateCheck::BeforeBadWr => return Err(err(Errno::EINVAL, None, 0, reason)),
                RecvStateCheck::None => {}
            }
        }
        let mut ids = Vec::new();
        let mut failure = None;
        for (i, wr) in wrs.iter().enumerate() {
            if qp.rq.len() as u32 >= qp.cap.max_recv_wr {
                failure = Some(err(
                    Errno::ENOMEM,
                    Some(i),
                    i,
                    PostRejection::QueueFull {
                        depth: qp.cap.max_recv_wr,
                    },
                ));
                break;
            }
            if wr.sg_list.len() > qp.cap.max_recv_sge as usize {
                let reason = PostRejection::TooManySge {
                    num_sge: wr.sg_list.len(),
                    max: qp.cap.max_recv_sge,
                };
                failure = Some(err(Errno::EINVAL, Some(i), i, reason));
                break;
            }
            let id = qp.next_id();
            qp.rq.push_back(RecvWqe::new(id, wr));
            ids.push(id);
        }
        let posted = ids.len();
        let flushed = if state == QpState::Err {
            self.flush_new_recv(qpn)
        } else {
            0
        };
        match failure {
            Some(f) => Err(f),
            None => Ok(PostReport {
                posted,
                flushed,
                ids,
            }),
        }
    }

    /// Completes every queued send WQE with `WR_FLUSH_ERR` (the QP is in ERR, where the queue
    /// only ever holds WQEs posted since the flush).
    fn flush_new_send(&mut self, qpn: QpNum) -> usize {
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return 0;
        };
        let cq = qp.send_cq;
        let ids: Vec<u64> = qp.sq.drain(..).map(|w| w.wr.wr_id).collect();
        for &wr_id in &ids {
            self.push_wc(cq, Wc::error(wr_id, WcStatus::WrFlushErr, qpn), false);
        }
        ids.len()
    }

    fn flush_new_recv(&mut self, qpn: QpNum) -> usize {
        let Some(qp) = self.qps.get_mut(&qpn) else {
            return 0;
        };
        let cq = qp.recv_cq;
        let ids: Vec<u64> = qp.rq.drain(..).map(|w| w.wr_id).collect();
        for &wr_id in &ids {
            self.push_wc(cq, Wc::error(wr_id, WcStatus::WrFlushErr, qpn), false);
        }
        ids.len()
    }
}

/// Validates one send WR against the QP and builds its WQE (id filled in by the caller).
fn build_send_wqe(
    profile: NicProfile,
    qp: &Qp,
    memory: &Memory,
    wr: &SendWr,
) -> Result<SendWqe, (Errno, PostRejection)> {
    let len = wr.length();
    let full = qp.sq.len() as u32 >= qp.cap.max_send_wr;
    let full_rejection = (
        Errno::ENOMEM,
        PostRejection::QueueFull {
            depth: qp.cap.max_send_wr,
        },
    );
    if profile.send_full_checked_first() && full {
        return Err(full_rejection);
    }
    if wr.sg_list.len() > qp.cap.max_send_sge as usize {
        let reason = PostRejection::TooManySge {
            num_sge: wr.sg_list.len(),
            max: qp.cap.max_send_sge,
        };
        return Err((profile.send_too_many_sge_errno(), reason));
    }
    if wr.opcode.is_atomic() {
        let (bad_len, exact) = match profile.atomic_post_check() {
            AtomicPostCheck::Exactly8 => (len != 8, true),
            AtomicPostCheck::AtLeast8 => (len < 8, false),
            AtomicPostCheck::None => (false, false),
        };
        if bad_len {
            return Err((Errno::EINVAL, PostRejection::AtomicLength { len, exact }));
        }
        if profile.atomic_post_check() != AtomicPostCheck::None && !wr.remote_addr.is_multiple_of(8)
        {
            return Err((
                Errno::EINVAL,
                PostRejection::AtomicAlignment {
                    remote_addr: wr.remote_addr,
                },
            ));
        }
    }
    let inline = wr.send_flags.contains(SendFlags::INLINE);
    if inline {
        if profile.inline_opcode_checked() && !wr.opcode.inline_allowed() {
            return Err((
                Errno::EINVAL,
                PostRejection::InlineNotAllowed { opcode: wr.opcode },
            ));
        }
        if len > u64::from(qp.cap.max_inline_data) {
            let reason = PostRejection::InlineTooLong {
                len,
                max: qp.cap.max_inline_data,
            };
            return Err((profile.inline_too_long_errno(), reason));
        }
    }
    if qp.qp_type == QpType::Ud && wr.ud.is_none() {
        return Err((Errno::EINVAL, PostRejection::MissingUdDest));
    }
    if !profile.send_full_checked_first() && full {
        return Err(full_rejection);
    }
    let inline_data = if inline {
        let mut data = Vec::with_capacity(len as usize);
        for sge in &wr.sg_list {
            let bytes = memory
                .read_vec(sge.addr, u64::from(sge.length))
                .map_err(|_| {
                    (
                        Errno::EFAULT,
                        PostRejection::InlineUnmapped {
                            addr: sge.addr,
                            len: sge.length,
                        },
                    )
                })?;
            data.extend_from_slice(&bytes);
        }
        Some(data)
    } else {
        None
    };
    Ok(SendWqe {
        id: WqeId(0),
        wr: wr.clone(),
        inline_data,
        signaled: wr.send_flags.contains(SendFlags::SIGNALED) || qp.sq_sig_all,
        length: len,
        executable: wr.opcode.valid_for(qp.qp_type) && (!inline || wr.opcode.inline_allowed()),
        state: WqeState::Posted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{AccessFlags, QpAttrMask as M};
    use crate::modify::QpAttr;
    use crate::qp::{QpCap, QpInitAttr};
    use crate::types::{AhAttr, Gid};
    use crate::wr::Sge;

    struct T {
        ctx: Context,
        qpn: QpNum,
        buf: u64,
        lkey: u32,
    }

    fn setup(profile: NicProfile, qp_type: QpType) -> T {
        let mut ctx = Context::new(profile);
        let pd = ctx.alloc_pd().unwrap();
        let (cq, _) = ctx.create_cq(64, None).unwrap();
        let cap = QpCap {
            max_send_wr: 4,
            max_recv_wr: 4,
            max_send_sge: 2,
            max_recv_sge: 2,
            max_inline_data: 16,
        };
        let qpn = ctx
            .create_qp(
                pd,
                &QpInitAttr {
                    qp_type,
                    send_cq: cq,
                    recv_cq: cq,
                    cap,
                    sq_sig_all: false,
                },
            )
            .unwrap()
            .qpn;
        let buf = ctx.memory_mut().alloc(4096).unwrap();
        let lkey = ctx
            .reg_mr(pd, buf, 4096, AccessFlags::LOCAL_WRITE)
            .unwrap()
            .lkey;
        T {
            ctx,
            qpn,
            buf,
            lkey,
        }
    }

    fn to_rts(t: &mut T) {
        let a = QpAttr {
            qp_state: QpState::Init,
            ..QpAttr::default()
        };
        t.ctx
            .modify_qp(
                t.qpn,
                &a,
                M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS,
            )
            .unwrap();
        let a = QpAttr {
            qp_state: QpState::Rtr,
            ah_attr: AhAttr::roce(Gid::from_ipv4([1, 2, 3, 4])),
            ..QpAttr::default()
        };
        let m = M::STATE
            | M::AV
            | M::PATH_MTU
            | M::DEST_QPN
            | M::RQ_PSN
            | M::MAX_DEST_RD_ATOMIC
            | M::MIN_RNR_TIMER;
        t.ctx.modify_qp(t.qpn, &a, m).unwrap();
        let a = QpAttr {
            qp_state: QpState::Rts,
            ..QpAttr::default()
        };
        let m =
            M::STATE | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::SQ_PSN | M::MAX_QP_RD_ATOMIC;
        t.ctx.modify_qp(t.qpn, &a, m).unwrap();
    }

    #[test]
    fn sge_limit_errno_per_profile() {
        for (p, errno) in [
            (NicProfile::Mlx5, Errno::ENOMEM),
            (NicProfile::Rxe, Errno::EINVAL),
            (NicProfile::Ibta, Errno::EINVAL),
        ] {
            let mut t = setup(p, QpType::Rc);
            to_rts(&mut t);
            let sge = Sge::new(t.buf, 8, t.lkey);
            let wr = SendWr::send(1, vec![sge; 3]);
            let e = t.ctx.post_send(t.qpn, &[wr]).unwrap_err();
            assert_eq!((e.errno, e.bad_wr), (errno, Some(0)), "{p}");
        }
    }

    #[test]
    fn atomic_checks_per_profile() {
        for p in NicProfile::ALL {
            let mut t = setup(p, QpType::Rc);
            to_rts(&mut t);
            let small = SendWr::fetch_and_add(1, vec![Sge::new(t.buf, 4, t.lkey)], 0x1000, 1, 1);
            let big = SendWr::fetch_and_add(2, vec![Sge::new(t.buf, 16, t.lkey)], 0x1000, 1, 1);
            let r_small = t
                .ctx
                .post_send(t.qpn, &[small])
                .map(|_| ())
                .map_err(|e| e.errno);
            let r_big = t
                .ctx
                .post_send(t.qpn, &[big])
                .map(|_| ())
                .map_err(|e| e.errno);
            match p {
                NicProfile::Mlx5 => assert_eq!((r_small, r_big), (Ok(()), Ok(()))),
                NicProfile::Rxe => assert_eq!((r_small, r_big), (Err(Errno::EINVAL), Ok(()))),
                NicProfile::Ibta => {
                    assert_eq!((r_small, r_big), (Err(Errno::EINVAL), Err(Errno::EINVAL)))
                }
            }
        }
    }

    #[test]
    fn inline_copies_at_post_time() {
        let mut t = setup(NicProfile::Rxe, QpType::Rc);
        to_rts(&mut t);
        t.ctx.memory_mut().write(t.buf, b"0123456789").unwrap();
        let wr = SendWr::send(1, vec![Sge::new(t.buf, 10, 0xbad)]).with_flags(SendFlags::INLINE);
        t.ctx.post_send(t.qpn, &[wr]).unwrap();
        t.ctx.memory_mut().write(t.buf, b"XXXXXXXXXX").unwrap();
        let wqe = t.ctx.peek_send(t.qpn).unwrap().unwrap();
        assert_eq!(wqe.inline_data.as_deref(), Some(&b"0123456789"[..]));
        let read =
            SendWr::read(2, vec![Sge::new(t.buf, 8, t.lkey)], 0, 0).with_flags(SendFlags::INLINE);
        let e = t.ctx.post_send(t.qpn, &[read]).unwrap_err();
        assert_eq!(
            e.reason,
            PostRejection::InlineNotAllowed {
                opcode: crate::wr::SendOpcode::RdmaRead
            }
        );
    }

    #[test]
    fn send_queue_full() {
        for p in NicProfile::ALL {
            let mut t = setup(p, QpType::Rc);
            to_rts(&mut t);
            let depth = t.ctx.query_qp(t.qpn).unwrap().1.cap.max_send_wr as usize;
            let wrs: Vec<SendWr> = (0..=depth as u64)
                .map(|i| SendWr::send(i, vec![]))
                .collect();
            let e = t.ctx.post_send(t.qpn, &wrs).unwrap_err();
            assert_eq!(
                (e.errno, e.bad_wr, e.posted),
                (Errno::ENOMEM, Some(depth), depth),
                "{p}"
            );
        }
    }

    #[test]
    fn ud_needs_a_destination() {
        let mut t = setup(NicProfile::Mlx5, QpType::Ud);
        let e = t
            .ctx
            .post_send(t.qpn, &[SendWr::send(1, vec![])])
            .unwrap_err();
        assert_eq!(e.reason, PostRejection::MissingUdDest);
    }
}
