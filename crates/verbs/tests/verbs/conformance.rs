//! The conformance cases of verbs-spec §7 that need no packets on a wire: each checks the
//! return code, the QP state afterwards and the completions, under every profile the case
//! applies to. Where mlx5 deviates (posting below RTS), both `mlx5` and `rxe` are checked.

use crate::common;

use common::*;
use verbs::{
    AccessFlags, AtomicOp, Errno, ModifyEffect, ModifyError, ModifyWarning, Nak, NicProfile,
    PostRejection, QpAttr, QpAttrMask as M, QpState, QpType, RecvWr, ResponderError, SendFlags,
    SendWr, Sge, StartSend, VerbsError, WcStatus,
};

fn modify_errno(r: Result<verbs::ModifyOutcome, VerbsError>) -> Option<Errno> {
    r.err().map(|e| e.errno())
}

#[test]
fn c01_rc_reset_to_init() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        let attr = QpAttr {
            qp_state: QpState::Init,
            qp_access_flags: AccessFlags::REMOTE_WRITE,
            ..QpAttr::default()
        };
        let out = h.ctx.modify_qp(qpn, &attr, RC_INIT).unwrap();
        assert_eq!((out.from, out.to), (QpState::Reset, QpState::Init));
        assert_eq!(h.state(qpn), QpState::Init, "{p}");
        assert!(h.poll().is_empty());
    }
}

#[test]
fn c02_missing_access_flags_changes_nothing() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        let before = h.ctx.query_qp(qpn).unwrap();
        let attr = QpAttr {
            qp_state: QpState::Init,
            pkey_index: 1,
            ..QpAttr::default()
        };
        let e = h
            .ctx
            .modify_qp(qpn, &attr, M::STATE | M::PKEY_INDEX | M::PORT)
            .unwrap_err();
        assert_eq!(e.errno(), Errno::EINVAL);
        assert!(
            e.to_string()
                .contains("missing required attribute ACCESS_FLAGS"),
            "{e}"
        );
        assert_eq!(h.state(qpn), QpState::Reset);
        assert_eq!(
            h.ctx.query_qp(qpn).unwrap(),
            before,
            "not even pkey_index changed"
        );
    }
}

#[test]
fn c05_uc_init_to_rtr_refuses_rc_only_attributes() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Uc);
        h.make_init(qpn);
        let with_rc_bits = UC_RTR | M::MAX_DEST_RD_ATOMIC | M::MIN_RNR_TIMER;
        let e = h.ctx.modify_qp(qpn, &rtr_attr(), with_rc_bits).unwrap_err();
        assert!(
            matches!(e, VerbsError::Modify(ModifyError::NotAllowed { .. })),
            "{e}"
        );
        assert_eq!(e.errno(), Errno::EINVAL);
        assert_eq!(h.state(qpn), QpState::Init);
        assert!(h.ctx.modify_qp(qpn, &rtr_attr(), UC_RTR).is_ok());
        assert_eq!(h.state(qpn), QpState::Rtr);
    }
}

#[test]
fn c06_rc_rtr_to_rts_missing_max_qp_rd_atomic() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        h.make_rtr(qpn);
        let e = h
            .ctx
            .modify_qp(qpn, &rts_attr(), RC_RTS - M::MAX_QP_RD_ATOMIC)
            .unwrap_err();
        assert_eq!(e.errno(), Errno::EINVAL);
        assert_eq!(
            e.to_string(),
            "modify_qp RTR→RTS: missing required attribute MAX_QP_RD_ATOMIC \
             (RC requires TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC, SQ_PSN)"
        );
        assert_eq!(h.state(qpn), QpState::Rtr);
    }
}

#[test]
fn c07_ud_transitions() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Ud);
        h.make_init(qpn);
        assert!(
            h.ctx
                .modify_qp(qpn, &QpAttr::to_state(QpState::Rtr), M::STATE)
                .is_ok()
        );
        assert_eq!(
            modify_errno(
                h.ctx
                    .modify_qp(qpn, &QpAttr::to_state(QpState::Rts), M::STATE)
            ),
            Some(Errno::EINVAL)
        );
        assert_eq!(h.state(qpn), QpState::Rtr);
        let attr = QpAttr {
            qp_state: QpState::Rts,
            sq_psn: 1225,
            ..QpAttr::default()
        };
        assert!(h.ctx.modify_qp(qpn, &attr, M::STATE | M::SQ_PSN).is_ok());
        assert_eq!(h.state(qpn), QpState::Rts);
        assert_eq!(h.ctx.query_qp(qpn).unwrap().0.sq_psn, 1225);
    }
}

#[test]
fn c09_err_to_init_reset_init() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        h.move_to(qpn, QpState::Err);
        let init = QpAttr {
            qp_state: QpState::Init,
            ..QpAttr::default()
        };
        assert_eq!(
            modify_errno(h.ctx.modify_qp(qpn, &init, RC_INIT)),
            Some(Errno::EINVAL)
        );
        assert_eq!(h.state(qpn), QpState::Err);
        assert!(
            h.ctx
                .modify_qp(qpn, &QpAttr::to_state(QpState::Reset), M::STATE)
                .is_ok()
        );
        assert_eq!(h.state(qpn), QpState::Reset);
        assert!(h.ctx.modify_qp(qpn, &init, RC_INIT).is_ok());
        assert_eq!(h.state(qpn), QpState::Init);
    }
}

#[test]
fn c10_skipping_and_repeating_states() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        let e = h.ctx.modify_qp(qpn, &rts_attr(), RC_RTS).unwrap_err();
        assert!(matches!(
            e,
            VerbsError::Modify(ModifyError::IllegalTransition {
                from: QpState::Init,
                to: QpState::Rts
            })
        ));
        assert_eq!(h.state(qpn), QpState::Init);
        h.make_rtr(qpn);
        assert_eq!(
            modify_errno(h.ctx.modify_qp(qpn, &rtr_attr(), RC_RTR)),
            Some(Errno::EINVAL)
        );
        assert_eq!(h.state(qpn), QpState::Rtr);
    }
}

#[test]
fn c11_cur_state_on_reset_to_init() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        for claimed in [QpState::Reset, QpState::Rts] {
            let attr = QpAttr {
                qp_state: QpState::Init,
                cur_qp_state: claimed,
                ..QpAttr::default()
            };
            let e = h
                .ctx
                .modify_qp(qpn, &attr, RC_INIT | M::CUR_STATE)
                .unwrap_err();
            assert_eq!(e.errno(), Errno::EINVAL, "claimed {claimed}");
            assert_eq!(h.state(qpn), QpState::Reset);
        }
    }
}

#[test]
fn c12_rts_to_err_takes_state_only_and_flushes() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        let sge = Sge::new(h.buf, 16, h.mr.lkey);
        h.ctx
            .post_send(
                qpn,
                &[
                    SendWr::send(1, vec![sge]).signaled(),
                    SendWr::send(2, vec![sge]),
                ],
            )
            .unwrap();
        h.ctx.post_recv(qpn, &[RecvWr::new(10, vec![sge])]).unwrap();
        // One WQE is already on the wire when the QP goes to ERR: it is flushed too.
        assert!(matches!(
            h.ctx.start_send(qpn).unwrap(),
            StartSend::Started(_)
        ));

        let attr = QpAttr {
            qp_state: QpState::Err,
            qp_access_flags: AccessFlags::REMOTE_READ,
            ..QpAttr::default()
        };
        assert_eq!(
            modify_errno(h.ctx.modify_qp(qpn, &attr, M::STATE | M::ACCESS_FLAGS)),
            Some(Errno::EINVAL)
        );
        assert_eq!(h.state(qpn), QpState::Rts);
        assert!(h.poll().is_empty(), "the failed call flushed nothing");

        let out = h.ctx.modify_qp(qpn, &attr, M::STATE).unwrap();
        assert_eq!(h.state(qpn), QpState::Err);
        assert!(
            out.effects
                .contains(&ModifyEffect::Flushed(verbs::FlushReport {
                    send: 2,
                    recv: 1
                }))
        );
        let wcs = h.poll();
        let got: Vec<(u64, WcStatus)> = wcs.iter().map(|w| (w.wr_id, w.status)).collect();
        assert_eq!(
            got,
            [
                (1, WcStatus::WrFlushErr),
                (2, WcStatus::WrFlushErr),
                (10, WcStatus::WrFlushErr)
            ],
            "{p}: every WR flushed, the unsignaled one too, send queue first"
        );
        assert!(wcs.iter().all(|w| w.opcode.is_none() && w.qp_num == qpn));
    }
}

#[test]
fn c13_rq_psn_is_masked_to_24_bits() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        let attr = QpAttr {
            rq_psn: 0x0100_0005,
            ..rtr_attr()
        };
        let out = h.ctx.modify_qp(qpn, &attr, RC_RTR).unwrap();
        assert_eq!(
            out.warnings,
            [ModifyWarning::PsnMasked {
                field: "rq_psn",
                given: 0x0100_0005,
                stored: 5
            }]
        );
        assert_eq!(h.ctx.query_qp(qpn).unwrap().0.rq_psn, 0x000005);
        assert_eq!(h.state(qpn), QpState::Rtr);
    }
}

#[test]
fn c14_post_recv_in_reset() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        let wr = RecvWr::new(1, vec![Sge::new(h.buf, 64, h.mr.lkey)]);
        let r = h.ctx.post_recv(qpn, &[wr]);
        match p {
            NicProfile::Rxe => {
                let e = r.unwrap_err();
                assert_eq!(
                    (e.errno, e.bad_wr, e.posted),
                    (Errno::EINVAL, None, 0),
                    "rxe returns before setting bad_wr"
                );
            }
            NicProfile::Ibta => {
                let e = r.unwrap_err();
                assert_eq!((e.errno, e.bad_wr), (Errno::EINVAL, Some(0)));
            }
            NicProfile::Mlx5 => {
                assert_eq!(
                    r.unwrap().posted,
                    1,
                    "mlx5_post_recv does not check the state"
                );
                assert_eq!(h.ctx.recv_queue(qpn).unwrap().count(), 1);
            }
        }
        assert_eq!(h.state(qpn), QpState::Reset);
        assert!(h.poll().is_empty(), "{p}: no completion either way");
    }
}

#[test]
fn c17_post_send_in_reset_after_rts() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        h.move_to(qpn, QpState::Reset);
        let wr = SendWr::send(7, vec![Sge::new(h.buf, 64, h.mr.lkey)]).signaled();
        let r = h.ctx.post_send(qpn, &[wr]);
        match p {
            NicProfile::Ibta => {
                let e = r.unwrap_err();
                assert_eq!((e.errno, e.bad_wr, e.posted), (Errno::EINVAL, Some(0), 0));
                assert!(e.to_string().contains("QP is in RESET, must be RTS"), "{e}");
            }
            NicProfile::Rxe => {
                let e = r.unwrap_err();
                assert_eq!(
                    (e.errno, e.bad_wr, e.posted),
                    (Errno::EINVAL, None, 1),
                    "the doorbell fails after the write"
                );
            }
            NicProfile::Mlx5 => assert_eq!(r.unwrap().posted, 1),
        }
        assert_eq!(h.state(qpn), QpState::Reset);
        assert_eq!(
            h.ctx.start_send(qpn).unwrap(),
            StartSend::NotReady(QpState::Reset)
        );
        assert!(
            h.poll().is_empty(),
            "{p}: no completion ever comes while the QP stays below RTS"
        );

        // mlx5 and rxe left the WQE in the queue: it runs if the QP reaches RTS.
        h.bring_up(qpn);
        let started = h.ctx.start_send(qpn).unwrap();
        match p {
            NicProfile::Ibta => assert_eq!(started, StartSend::Empty),
            _ => assert!(
                matches!(started, StartSend::Started(ref w) if w.wr.wr_id == 7),
                "{p}"
            ),
        }
    }
}

#[test]
fn post_send_below_rts_per_profile() {
    // google/rdma-unit-test QpStateTest.PostSendInit / PostSendRtr (mlx5: 0), rxe/IBTA EINVAL.
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        for state in [QpState::Init, QpState::Rtr] {
            if state == QpState::Rtr {
                h.make_rtr(qpn);
            }
            let r = h.ctx.post_send(qpn, &[SendWr::send(1, vec![])]);
            assert_eq!(r.is_ok(), p == NicProfile::Mlx5, "{p} in {state}");
            if let Err(e) = r {
                assert_eq!(e.errno, Errno::EINVAL);
            }
        }
        // post_recv in INIT and RTR is fine everywhere and produces no completion.
        assert!(h.ctx.post_recv(qpn, &[RecvWr::new(1, vec![])]).is_ok());
        assert!(h.poll().is_empty());
    }
}

#[test]
fn c18_recv_queue_full_and_too_many_sges() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        let (_, init) = h.ctx.query_qp(qpn).unwrap();
        let depth = init.cap.max_recv_wr as usize;
        let sge = Sge::new(h.buf, 8, h.mr.lkey);
        let fill: Vec<RecvWr> = (0..depth as u64)
            .map(|i| RecvWr::new(i, vec![sge]))
            .collect();
        assert_eq!(h.ctx.post_recv(qpn, &fill).unwrap().posted, depth);
        let e = h
            .ctx
            .post_recv(qpn, &[RecvWr::new(99, vec![sge])])
            .unwrap_err();
        assert_eq!(
            (e.errno, e.bad_wr, e.posted),
            (Errno::ENOMEM, Some(0), 0),
            "{p}"
        );

        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.make_init(qpn);
        let max_sge = h.ctx.query_qp(qpn).unwrap().1.cap.max_recv_sge as usize;
        let ok = RecvWr::new(1, vec![sge]);
        let bad = RecvWr::new(2, vec![sge; max_sge + 1]);
        let e = h.ctx.post_recv(qpn, &[ok, bad]).unwrap_err();
        assert_eq!(
            (e.errno, e.bad_wr, e.posted),
            (Errno::EINVAL, Some(1), 1),
            "{p}"
        );
        assert_eq!(
            h.ctx.recv_queue(qpn).unwrap().count(),
            1,
            "the WR before bad_wr stays posted"
        );
    }
}

#[test]
fn c19_chain_stops_at_the_bad_inline_wr() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        let max_inline = h.ctx.query_qp(qpn).unwrap().1.cap.max_inline_data;
        let wr1 = SendWr::send(1, vec![Sge::new(h.buf, 16, h.mr.lkey)]).signaled();
        let wr2 = SendWr::send(2, vec![Sge::new(h.buf, max_inline + 1, h.mr.lkey)])
            .with_flags(SendFlags::INLINE);
        let wr3 = SendWr::send(3, vec![Sge::new(h.buf, 16, h.mr.lkey)]).signaled();
        let e = h.ctx.post_send(qpn, &[wr1, wr2, wr3]).unwrap_err();
        let errno = if p == NicProfile::Mlx5 {
            Errno::ENOMEM
        } else {
            Errno::EINVAL
        };
        assert_eq!((e.errno, e.bad_wr, e.posted), (errno, Some(1), 1), "{p}");
        assert!(matches!(e.reason, PostRejection::InlineTooLong { .. }));
        assert_eq!(h.state(qpn), QpState::Rts);

        // WR1 is posted and completes; WR3 was never posted.
        let StartSend::Started(w) = h.ctx.start_send(qpn).unwrap() else {
            panic!("WR1 should start")
        };
        assert_eq!(w.wr.wr_id, 1);
        h.ctx.complete_send(qpn, w.id, WcStatus::Success).unwrap();
        assert_eq!(h.ctx.start_send(qpn).unwrap(), StartSend::Empty);
        let wcs = h.poll();
        assert_eq!(wcs.len(), 1);
        assert_eq!(
            (wcs[0].wr_id, wcs[0].status, wcs[0].byte_len),
            (1, WcStatus::Success, 16)
        );
    }
}

#[test]
fn c20_misaligned_fetch_and_add() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        let remote = h.buf + 1024 + 4;
        let wr =
            SendWr::fetch_and_add(5, vec![Sge::new(h.buf, 8, h.mr.lkey)], remote, h.mr.rkey, 1);
        let r = h.ctx.post_send(qpn, &[wr]);
        if p != NicProfile::Mlx5 {
            let e = r.unwrap_err();
            assert_eq!((e.errno, e.bad_wr), (Errno::EINVAL, Some(0)), "{p}");
            assert_eq!(
                e.reason,
                PostRejection::AtomicAlignment {
                    remote_addr: remote
                }
            );
            continue;
        }
        // mlx5 accepts it; the responder refuses the misaligned atomic with NAK Invalid Request
        // (rdma-unit-test QpStateTest.PostSendErr: REM_INV_REQ_ERR, then the QP is in ERR).
        r.unwrap();
        let StartSend::Started(w) = h.ctx.start_send(qpn).unwrap() else {
            panic!()
        };
        let e = h
            .ctx
            .remote_atomic(qpn, h.mr.rkey, remote, AtomicOp::FetchAndAdd { add: 1 })
            .unwrap_err();
        assert_eq!(e, ResponderError::Misaligned { va: remote });
        assert_eq!(e.nak(), Nak::InvalidRequest);
        let done = h
            .ctx
            .complete_send(qpn, w.id, e.requester_status())
            .unwrap();
        assert!(done.flushed.is_some());
        assert_eq!(h.state(qpn), QpState::Err);
        let wcs = h.poll();
        assert_eq!(
            (wcs[0].wr_id, wcs[0].status),
            (5, WcStatus::RemInvReqErr),
            "unsignaled, but errors always complete"
        );
    }
}

#[test]
fn c21_posting_in_err_flushes() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        h.move_to(qpn, QpState::Err);
        let sge = Sge::new(h.buf, 8, h.mr.lkey);
        let s = h.ctx.post_send(qpn, &[SendWr::send(1, vec![sge])]).unwrap();
        assert_eq!((s.posted, s.flushed), (1, 1));
        let r = h.ctx.post_recv(qpn, &[RecvWr::new(2, vec![sge])]).unwrap();
        assert_eq!((r.posted, r.flushed), (1, 1));
        let got: Vec<(u64, WcStatus)> = h.poll().iter().map(|w| (w.wr_id, w.status)).collect();
        assert_eq!(
            got,
            [(1, WcStatus::WrFlushErr), (2, WcStatus::WrFlushErr)],
            "{p}"
        );
        assert_eq!(h.state(qpn), QpState::Err);
    }
}

#[test]
fn c40_reset_discards_without_completions() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        let sge = Sge::new(h.buf, 8, h.mr.lkey);
        let sends: Vec<SendWr> = (0..3)
            .map(|i| SendWr::send(i, vec![sge]).signaled())
            .collect();
        h.ctx.post_send(qpn, &sends).unwrap();
        h.ctx
            .post_recv(
                qpn,
                &[RecvWr::new(10, vec![sge]), RecvWr::new(11, vec![sge])],
            )
            .unwrap();
        let out = h
            .ctx
            .modify_qp(qpn, &QpAttr::to_state(QpState::Reset), M::STATE)
            .unwrap();
        assert_eq!(
            out.effects,
            [ModifyEffect::Reset(verbs::FlushReport { send: 3, recv: 2 })]
        );
        assert_eq!(h.state(qpn), QpState::Reset);
        assert!(h.poll().is_empty(), "{p}: no CQEs at all");
        let (attr, _) = h.ctx.query_qp(qpn).unwrap();
        assert_eq!((attr.sq_psn, attr.rq_psn), (0, 0), "PSN state reset");

        h.bring_up(qpn);
        assert_eq!(h.ctx.start_send(qpn).unwrap(), StartSend::Empty);
        assert!(h.ctx.recv_head(qpn).unwrap().is_none());
        assert!(h.poll().is_empty());
    }
}
