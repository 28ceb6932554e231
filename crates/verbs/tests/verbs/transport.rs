//! The transport-facing half: what a requester and a responder get from the verbs layer.
//! Two `Context`s play the two hosts; the test moves the bytes the wire would carry.

use crate::common;

use common::*;
use verbs::{
    AccessFlags, AsyncEvent, AtomicOp, CqPush, GatherError, LocalAccessError, ModifyEffect, Nak,
    NicProfile, Notification, QpAttr, QpAttrMask as M, QpCap, QpNum, QpState, QpType,
    RecvCompletion, RecvWr, RemoteAccessError, ResponderError, ScatterError, SendBlock, SendFlags,
    SendWr, Sge, StartSend, WcFlags, WcOpcode, WcStatus,
};

fn started(h: &mut Host, qpn: QpNum) -> verbs::SendWqe {
    match h.ctx.start_send(qpn).unwrap() {
        StartSend::Started(w) => w,
        other => panic!("expected a WQE to start, got {other:?}"),
    }
}

#[test]
fn rc_send_moves_bytes_and_completes_both_sides() {
    let mut a = host(NicProfile::Mlx5);
    let mut b = host(NicProfile::Mlx5);
    let qa = a.qp(QpType::Rc);
    let qb = b.qp(QpType::Rc);
    a.bring_up(qa);
    b.bring_up(qb);
    a.ctx.memory_mut().write(a.buf, b"hello, rdma!").unwrap();
    b.ctx
        .post_recv(
            qb,
            &[RecvWr::new(77, vec![Sge::new(b.buf + 100, 64, b.mr.lkey)])],
        )
        .unwrap();
    a.ctx
        .post_send(
            qa,
            &[SendWr::send_with_imm(5, vec![Sge::new(a.buf, 12, a.mr.lkey)], 0xabcd).signaled()],
        )
        .unwrap();

    let w = started(&mut a, qa);
    let mut payload = vec![0; w.length as usize];
    a.ctx.gather_send(qa, w.id, 0, &mut payload).unwrap();
    assert!(b.ctx.accepts_requests(qb).unwrap());
    assert_eq!(b.ctx.recv_head(qb).unwrap().unwrap().length, 64);
    b.ctx.scatter_recv(qb, 0, &payload).unwrap();
    let rc = RecvCompletion {
        imm_data: Some(0xabcd),
        ..RecvCompletion::recv(12)
    };
    let out = b.ctx.complete_recv(qb, rc).unwrap();
    assert_eq!(out.wqe.wr_id, 77);
    a.ctx.complete_send(qa, w.id, WcStatus::Success).unwrap();

    assert_eq!(
        b.ctx.memory().read_vec(b.buf + 100, 12).unwrap(),
        b"hello, rdma!"
    );
    let rwc = b.poll()[0];
    assert_eq!(
        (rwc.wr_id, rwc.opcode, rwc.byte_len, rwc.imm_data),
        (77, Some(WcOpcode::Recv), 12, Some(0xabcd))
    );
    assert!(rwc.wc_flags.contains(WcFlags::WITH_IMM));
    let swc = a.poll()[0];
    assert_eq!(
        (swc.wr_id, swc.opcode, swc.status),
        (5, Some(WcOpcode::Send), WcStatus::Success)
    );
}

#[test]
fn signaled_unsignaled_and_sq_sig_all() {
    for sig_all in [false, true] {
        let mut h = host(NicProfile::Rxe);
        let qpn = h.qp_with(QpType::Rc, cap(), sig_all);
        h.bring_up(qpn);
        let wrs = [
            SendWr::send(1, vec![]),
            SendWr::send(2, vec![]).signaled(),
            SendWr::send(3, vec![]),
        ];
        h.ctx.post_send(qpn, &wrs).unwrap();
        for _ in 0..3 {
            let w = started(&mut h, qpn);
            h.ctx.complete_send(qpn, w.id, WcStatus::Success).unwrap();
        }
        let ids: Vec<u64> = h.poll().iter().map(|w| w.wr_id).collect();
        assert_eq!(ids, if sig_all { vec![1, 2, 3] } else { vec![2] });
    }
}

#[test]
fn send_completions_come_in_posting_order() {
    let mut h = host(NicProfile::Mlx5);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    let wrs: Vec<SendWr> = (0..3).map(|i| SendWr::send(i, vec![]).signaled()).collect();
    h.ctx.post_send(qpn, &wrs).unwrap();
    let ws: Vec<_> = (0..3).map(|_| started(&mut h, qpn)).collect();
    let done = h
        .ctx
        .complete_send(qpn, ws[2].id, WcStatus::Success)
        .unwrap();
    assert_eq!(done.retired, 0, "WQE 2 waits for 0 and 1");
    h.ctx
        .complete_send(qpn, ws[1].id, WcStatus::Success)
        .unwrap();
    assert!(h.poll().is_empty());
    let done = h
        .ctx
        .complete_send(qpn, ws[0].id, WcStatus::Success)
        .unwrap();
    assert_eq!(done.retired, 3);
    assert_eq!(
        h.poll().iter().map(|w| w.wr_id).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert!(
        h.ctx
            .complete_send(qpn, ws[0].id, WcStatus::Success)
            .is_err(),
        "a retired WQE cannot complete twice"
    );
}

#[test]
fn error_completion_moves_to_err_and_flushes_the_rest() {
    let mut h = host(NicProfile::Rxe);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    h.ctx.post_recv(qpn, &[RecvWr::new(50, vec![])]).unwrap();
    let wrs: Vec<SendWr> = (0..3).map(|i| SendWr::send(i, vec![])).collect();
    h.ctx.post_send(qpn, &wrs).unwrap();
    let w0 = started(&mut h, qpn);
    started(&mut h, qpn);
    let done = h
        .ctx
        .complete_send(qpn, w0.id, WcStatus::RetryExcErr)
        .unwrap();
    assert_eq!(done.flushed, Some(verbs::FlushReport { send: 2, recv: 1 }));
    assert_eq!(h.state(qpn), QpState::Err);
    let got: Vec<(u64, WcStatus)> = h.poll().iter().map(|w| (w.wr_id, w.status)).collect();
    assert_eq!(
        got,
        [
            (0, WcStatus::RetryExcErr),
            (1, WcStatus::WrFlushErr),
            (2, WcStatus::WrFlushErr),
            (50, WcStatus::WrFlushErr)
        ]
    );
}

#[test]
fn fence_waits_for_earlier_reads() {
    let mut h = host(NicProfile::Mlx5);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    let sge = Sge::new(h.buf, 8, h.mr.lkey);
    let read = SendWr::read(1, vec![sge], h.buf + 4096, h.mr.rkey);
    let fenced = SendWr::send(2, vec![sge]).with_flags(SendFlags::FENCE);
    h.ctx.post_send(qpn, &[read, fenced]).unwrap();
    let r = started(&mut h, qpn);
    assert_eq!(
        h.ctx.start_send(qpn).unwrap(),
        StartSend::Blocked(SendBlock::Fence { in_flight: 1 })
    );
    h.ctx.complete_send(qpn, r.id, WcStatus::Success).unwrap();
    assert_eq!(started(&mut h, qpn).wr.wr_id, 2);

    // Without FENCE a SEND may pass an outstanding READ.
    let read = SendWr::read(3, vec![sge], h.buf + 4096, h.mr.rkey);
    h.ctx
        .post_send(qpn, &[read, SendWr::send(4, vec![sge])])
        .unwrap();
    started(&mut h, qpn);
    assert_eq!(started(&mut h, qpn).wr.wr_id, 4);
}

#[test]
fn max_rd_atomic_limits_outstanding_reads() {
    let mut h = host(NicProfile::Ibta);
    let qpn = h.qp(QpType::Rc);
    h.make_init(qpn);
    h.make_rtr(qpn);
    let attr = verbs::QpAttr {
        max_rd_atomic: 1,
        ..rts_attr()
    };
    h.ctx.modify_qp(qpn, &attr, RC_RTS).unwrap();
    let sge = Sge::new(h.buf, 8, h.mr.lkey);
    let reads: Vec<SendWr> = (0..2)
        .map(|i| SendWr::read(i, vec![sge], h.buf, h.mr.rkey))
        .collect();
    h.ctx.post_send(qpn, &reads).unwrap();
    let r0 = started(&mut h, qpn);
    assert_eq!(
        h.ctx.start_send(qpn).unwrap(),
        StartSend::Blocked(SendBlock::RdAtomicCredits {
            in_flight: 1,
            max: 1
        })
    );
    h.ctx.complete_send(qpn, r0.id, WcStatus::Success).unwrap();
    assert_eq!(started(&mut h, qpn).wr.wr_id, 1);
}

#[test]
fn unsupported_opcode_completes_loc_qp_op_err_when_started() {
    type MakeWr = fn(Sge) -> SendWr;
    let cases: [(QpType, MakeWr); 3] = [
        (QpType::Ud, |s| SendWr::write(1, vec![s], 0x1000, 1)),
        (QpType::Uc, |s| SendWr::read(1, vec![s], 0x1000, 1)),
        (QpType::Uc, |s| {
            SendWr::fetch_and_add(1, vec![s], 0x1000, 1, 1)
        }),
    ];
    for p in NicProfile::ALL {
        for (t, make) in cases {
            let mut h = host(p);
            let qpn = h.qp(t);
            h.bring_up(qpn);
            let dst = QpNum::new(0x30).unwrap();
            let wr = make(Sge::new(h.buf, 8, h.mr.lkey)).to_ud(verbs::AhAttr::default(), dst, 1);
            let next = SendWr::send(2, vec![]).to_ud(verbs::AhAttr::default(), dst, 1);
            h.ctx.post_send(qpn, &[wr, next]).unwrap();
            let StartSend::FailedLocally(done) = h.ctx.start_send(qpn).unwrap() else {
                panic!("{p} {t}")
            };
            assert!(done.flushed.is_some());
            assert_eq!(h.state(qpn), QpState::Err);
            let got: Vec<(u64, WcStatus)> = h.poll().iter().map(|w| (w.wr_id, w.status)).collect();
            assert_eq!(
                got,
                [(1, WcStatus::LocQpOpErr), (2, WcStatus::WrFlushErr)],
                "{p} {t}"
            );
        }
    }
}

#[test]
fn mlx5_inline_read_is_accepted_then_fails() {
    let mut h = host(NicProfile::Mlx5);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    let wr = SendWr::read(9, vec![Sge::new(h.buf, 8, h.mr.lkey)], h.buf, h.mr.rkey)
        .with_flags(SendFlags::INLINE);
    h.ctx.post_send(qpn, &[wr]).unwrap();
    assert!(matches!(
        h.ctx.start_send(qpn).unwrap(),
        StartSend::FailedLocally(_)
    ));
    assert_eq!(h.poll()[0].status, WcStatus::LocQpOpErr);
}

#[test]
fn c29_bad_lkey_on_a_send_sge() {
    for p in NicProfile::ALL {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        let bad = h.mr.lkey.wrapping_add(10).wrapping_mul(5);
        h.ctx
            .post_send(
                qpn,
                &[SendWr::write(
                    1,
                    vec![Sge::new(h.buf, 8, bad)],
                    h.buf,
                    h.mr.rkey,
                )],
            )
            .unwrap();
        let w = started(&mut h, qpn);
        let mut out = [0; 8];
        let e = h.ctx.gather_send(qpn, w.id, 0, &mut out).unwrap_err();
        assert_eq!(
            e,
            GatherError::Access(LocalAccessError::InvalidKey { lkey: bad })
        );
        let status = e.send_status(p);
        assert_eq!(
            status,
            if p == NicProfile::Rxe {
                WcStatus::LocQpOpErr
            } else {
                WcStatus::LocProtErr
            },
            "{p}"
        );
        h.ctx.complete_send(qpn, w.id, status).unwrap();
        assert_eq!(h.state(qpn), QpState::Err);

        // Out of range is LOC_PROT_ERR everywhere.
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        h.bring_up(qpn);
        h.ctx
            .post_send(
                qpn,
                &[SendWr::send(
                    1,
                    vec![Sge::new(h.buf + BUF_LEN - 4, 8, h.mr.lkey)],
                )],
            )
            .unwrap();
        let w = started(&mut h, qpn);
        let e = h.ctx.gather_send(qpn, w.id, 0, &mut out).unwrap_err();
        assert_eq!(e.send_status(p), WcStatus::LocProtErr);
    }
}

#[test]
fn c25_message_larger_than_the_receive_buffer() {
    let mut h = host(NicProfile::Mlx5);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    h.ctx
        .post_recv(qpn, &[RecvWr::new(1, vec![Sge::new(h.buf, 64, h.mr.lkey)])])
        .unwrap();
    let e = h.ctx.scatter_recv(qpn, 0, &[7; 100]).unwrap_err();
    assert_eq!(
        e,
        ScatterError::TooLong {
            capacity: 64,
            needed: 100
        }
    );
    assert_eq!(
        h.ctx.memory().read_vec(h.buf, 64).unwrap(),
        [0; 64],
        "nothing written"
    );
    assert_eq!(e.recv_status(NicProfile::Mlx5), WcStatus::LocLenErr);
    assert_eq!(e.recv_status(NicProfile::Rxe), WcStatus::RemInvReqErr);
    let c = RecvCompletion {
        status: e.recv_status(NicProfile::Mlx5),
        ..RecvCompletion::recv(0)
    };
    let out = h.ctx.complete_recv(qpn, c).unwrap();
    assert!(out.flushed.is_some());
    assert_eq!(h.state(qpn), QpState::Err);
    assert_eq!(h.poll()[0].status, WcStatus::LocLenErr);
}

#[test]
fn recv_scatter_needs_local_write_and_the_right_pd() {
    let mut h = host(NicProfile::Rxe);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    let ro = h
        .ctx
        .reg_mr(h.pd, h.buf, 128, AccessFlags::REMOTE_READ)
        .unwrap();
    let pd2 = h.ctx.alloc_pd().unwrap();
    let other = h
        .ctx
        .reg_mr(pd2, h.buf, 128, AccessFlags::LOCAL_WRITE)
        .unwrap();
    h.ctx
        .post_recv(qpn, &[RecvWr::new(1, vec![Sge::new(h.buf, 128, ro.lkey)])])
        .unwrap();
    let e = h.ctx.scatter_recv(qpn, 0, &[1; 8]).unwrap_err();
    assert!(matches!(
        e,
        ScatterError::Access(LocalAccessError::AccessDenied { .. })
    ));
    h.ctx
        .complete_recv(
            qpn,
            RecvCompletion {
                status: e.recv_status(NicProfile::Rxe),
                ..RecvCompletion::recv(0)
            },
        )
        .unwrap();

    let mut h2 = host(NicProfile::Mlx5);
    let q2 = h2.qp(QpType::Rc);
    h2.bring_up(q2);
    let pd2 = h2.ctx.alloc_pd().unwrap();
    let other2 = h2
        .ctx
        .reg_mr(pd2, h2.buf, 128, AccessFlags::LOCAL_WRITE)
        .unwrap();
    h2.ctx
        .post_recv(
            q2,
            &[RecvWr::new(1, vec![Sge::new(h2.buf, 128, other2.lkey)])],
        )
        .unwrap();
    let e = h2.ctx.scatter_recv(q2, 0, &[1; 8]).unwrap_err();
    assert!(
        matches!(e, ScatterError::Access(LocalAccessError::PdMismatch { .. })),
        "C28: receive WQE lkey from another PD"
    );
    assert_eq!(e.recv_status(NicProfile::Mlx5), WcStatus::LocProtErr);
    let _ = other;
}

#[test]
fn c27_read_past_the_end_of_the_mr() {
    let mut b = host(NicProfile::Mlx5);
    let qb = b.qp(QpType::Rc);
    b.bring_up(qb);
    let mr = b
        .ctx
        .reg_mr(b.pd, b.buf, 8192, AccessFlags::REMOTE_READ)
        .unwrap();
    let mut out = vec![0; 4096];
    let e = b
        .ctx
        .remote_read(qb, mr.rkey, b.buf + 8191, &mut out)
        .unwrap_err();
    assert!(matches!(
        e,
        ResponderError::Remote(RemoteAccessError::OutOfRange { .. })
    ));
    assert_eq!(
        (e.nak(), e.requester_status()),
        (Nak::RemoteAccess, WcStatus::RemAccessErr)
    );
}

#[test]
fn responder_checks_qp_access_before_the_rkey() {
    let mut b = host(NicProfile::Rxe);
    let qb = b.qp(QpType::Rc);
    let attr = QpAttr {
        qp_state: QpState::Init,
        qp_access_flags: AccessFlags::REMOTE_READ,
        ..QpAttr::default()
    };
    b.ctx.modify_qp(qb, &attr, RC_INIT).unwrap();
    b.make_rtr(qb);
    // Bad rkey and no QP write permission: the QP gate wins → NAK Invalid Request.
    let e = b
        .ctx
        .remote_write(qb, 0xdead00, b.buf, &[1; 8])
        .unwrap_err();
    assert!(matches!(e, ResponderError::QpAccess { .. }));
    assert_eq!(e.requester_status(), WcStatus::RemInvReqErr);
    // READ is allowed by the QP; the bad rkey then gives NAK Remote Access.
    let mut out = [0; 8];
    let e = b
        .ctx
        .remote_read(qb, 0xdead00, b.buf, &mut out)
        .unwrap_err();
    assert_eq!(e.requester_status(), WcStatus::RemAccessErr);
    // Zero-length READ skips the rkey check (C9-88).
    assert!(b.ctx.remote_read(qb, 0xdead00, 0, &mut []).is_ok());
    // A write through a read-only MR: QP allows it after a RTR→RTS access change, MR does not.
    b.make_rts(qb);
    let a = QpAttr {
        qp_state: QpState::Rts,
        qp_access_flags: AccessFlags::REMOTE_WRITE,
        ..QpAttr::default()
    };
    b.ctx.modify_qp(qb, &a, M::STATE | M::ACCESS_FLAGS).unwrap();
    let ro = b
        .ctx
        .reg_mr(b.pd, b.buf, 64, AccessFlags::REMOTE_READ)
        .unwrap();
    let e = b.ctx.remote_write(qb, ro.rkey, b.buf, &[1; 8]).unwrap_err();
    assert!(matches!(
        e,
        ResponderError::Remote(RemoteAccessError::AccessDenied { .. })
    ));
    assert_eq!(b.ctx.memory().read_vec(b.buf, 8).unwrap(), [0; 8]);
    assert!(b.ctx.remote_write(qb, b.mr.rkey, b.buf, &[1; 8]).is_ok());
    assert_eq!(b.ctx.memory().read_vec(b.buf, 8).unwrap(), [1; 8]);
}

#[test]
fn c35_atomics_return_the_original() {
    let mut a = host(NicProfile::Rxe);
    let qa = a.qp(QpType::Rc);
    a.bring_up(qa);
    let target = a.buf + 4096;
    let run = |a: &mut Host, op: AtomicOp| {
        a.ctx.memory_mut().write_u64(target, 5).unwrap();
        let orig = a.ctx.remote_atomic(qa, a.mr.rkey, target, op).unwrap();
        (orig, a.ctx.memory().read_u64(target).unwrap())
    };
    assert_eq!(
        run(
            &mut a,
            AtomicOp::CmpAndSwp {
                compare: 5,
                swap: 9
            }
        ),
        (5, 9)
    );
    assert_eq!(
        run(
            &mut a,
            AtomicOp::CmpAndSwp {
                compare: 7,
                swap: 9
            }
        ),
        (5, 5),
        "a failed compare is still a success"
    );
    assert_eq!(run(&mut a, AtomicOp::FetchAndAdd { add: 3 }), (5, 8));

    // The original lands in the requester's SGE.
    let wr = SendWr::fetch_and_add(
        1,
        vec![Sge::new(a.buf + 64, 8, a.mr.lkey)],
        target,
        a.mr.rkey,
        3,
    )
    .signaled();
    a.ctx.post_send(qa, &[wr]).unwrap();
    let w = started(&mut a, qa);
    a.ctx
        .write_atomic_result(qa, w.id, 0x1122_3344_5566_7788)
        .unwrap();
    a.ctx.complete_send(qa, w.id, WcStatus::Success).unwrap();
    assert_eq!(
        a.ctx.memory().read_u64(a.buf + 64).unwrap(),
        0x1122_3344_5566_7788
    );
    let wc = a.poll()[0];
    assert_eq!((wc.opcode, wc.byte_len), (Some(WcOpcode::FetchAdd), 8));
}

#[test]
fn read_response_needs_local_write() {
    let mut a = host(NicProfile::Mlx5);
    let qa = a.qp(QpType::Rc);
    a.bring_up(qa);
    let ro = a.ctx.reg_mr(a.pd, a.buf, 64, AccessFlags::empty()).unwrap();
    a.ctx
        .post_send(
            qa,
            &[SendWr::read(1, vec![Sge::new(a.buf, 16, ro.lkey)], 0, 0)],
        )
        .unwrap();
    let w = started(&mut a, qa);
    let e = a.ctx.scatter_send(qa, w.id, 0, &[1; 16]).unwrap_err();
    assert!(matches!(
        e,
        ScatterError::Access(LocalAccessError::AccessDenied { .. })
    ));
    a.ctx
        .post_send(
            qa,
            &[SendWr::read(2, vec![Sge::new(a.buf, 16, a.mr.lkey)], 0, 0)],
        )
        .unwrap();
    let w2 = started(&mut a, qa);
    a.ctx.scatter_send(qa, w2.id, 8, &[3; 8]).unwrap();
    assert_eq!(
        a.ctx.memory().read_vec(a.buf, 16).unwrap(),
        [[0; 8], [3; 8]].concat()
    );
}

#[test]
fn c34_ud_receive_has_the_grh_first() {
    let mut b = host(NicProfile::Mlx5);
    let qb = b.qp(QpType::Ud);
    b.bring_up(qb);
    assert_eq!(b.ctx.qkey(qb).unwrap(), 0x1111_1111);
    b.ctx
        .post_recv(qb, &[RecvWr::new(3, vec![Sge::new(b.buf, 140, b.mr.lkey)])])
        .unwrap();
    let grh = [0xee; 40];
    b.ctx.scatter_ud_recv(qb, &grh, &[0x5a; 100]).unwrap();
    let c = RecvCompletion {
        src_qp: QpNum::new(0x44),
        grh: true,
        ..RecvCompletion::recv(140)
    };
    b.ctx.complete_recv(qb, c).unwrap();
    assert_eq!(
        b.ctx.memory().read_vec(b.buf + 40, 100).unwrap(),
        [0x5a; 100]
    );
    let wc = b.poll()[0];
    assert_eq!(wc.src_qp, QpNum::new(0x44));
    assert!(wc.wc_flags.contains(WcFlags::GRH));
    assert_eq!(wc.byte_len, 140);

    // A 101-byte payload does not fit 140 − 40 bytes.
    b.ctx
        .post_recv(qb, &[RecvWr::new(4, vec![Sge::new(b.buf, 140, b.mr.lkey)])])
        .unwrap();
    assert!(matches!(
        b.ctx.scatter_ud_recv(qb, &grh, &[1; 101]),
        Err(ScatterError::TooLong { .. })
    ));
}

#[test]
fn ud_qkey_high_bit_uses_the_qp_qkey() {
    let mut a = host(NicProfile::Mlx5);
    let qa = a.qp(QpType::Ud);
    a.bring_up(qa);
    let dst = QpNum::new(0x50).unwrap();
    a.ctx
        .post_send(
            qa,
            &[
                SendWr::send(1, vec![]).to_ud(verbs::AhAttr::default(), dst, 0x42),
                SendWr::send(2, vec![]).to_ud(verbs::AhAttr::default(), dst, 0x8000_0000),
            ],
        )
        .unwrap();
    let w1 = started(&mut a, qa);
    let w2 = started(&mut a, qa);
    assert_eq!(a.ctx.ud_send_qkey(qa, w1.id).unwrap(), 0x42);
    assert_eq!(a.ctx.ud_send_qkey(qa, w2.id).unwrap(), 0x1111_1111);
}

#[test]
fn requests_are_dropped_below_rtr() {
    let mut b = host(NicProfile::Rxe);
    let qb = b.qp(QpType::Rc);
    assert!(!b.ctx.accepts_requests(qb).unwrap());
    b.make_init(qb);
    assert!(
        !b.ctx.accepts_requests(qb).unwrap(),
        "C15: INIT does not receive"
    );
    b.make_rtr(qb);
    assert!(b.ctx.accepts_requests(qb).unwrap(), "C16: RTR receives");
    assert!(
        b.ctx.recv_head(qb).unwrap().is_none(),
        "no receive WQE: RNR for RC"
    );
}

#[test]
fn sqd_drains_then_raises_the_event() {
    // mlx5 has no RTS→SQD command: EINVAL, the QP stays in RTS.
    let mut m = host(NicProfile::Mlx5);
    let qm = m.qp(QpType::Rc);
    m.bring_up(qm);
    let e = m
        .ctx
        .modify_qp(qm, &QpAttr::to_state(QpState::Sqd), M::STATE)
        .unwrap_err();
    assert_eq!(e.errno(), verbs::Errno::EINVAL);
    assert_eq!(m.state(qm), QpState::Rts);

    let mut h = host(NicProfile::Rxe);
    let qpn = h.qp(QpType::Rc);
    h.bring_up(qpn);
    h.ctx
        .post_send(qpn, &[SendWr::send(1, vec![]), SendWr::send(2, vec![])])
        .unwrap();
    let w = started(&mut h, qpn);
    let attr = QpAttr {
        qp_state: QpState::Sqd,
        en_sqd_async_notify: true,
        ..QpAttr::default()
    };
    let out = h
        .ctx
        .modify_qp(qpn, &attr, M::STATE | M::EN_SQD_ASYNC_NOTIFY)
        .unwrap();
    assert_eq!(out.effects, [ModifyEffect::EnteredSqd { draining: true }]);
    assert!(h.ctx.query_qp(qpn).unwrap().0.sq_draining);
    assert_eq!(
        h.ctx.start_send(qpn).unwrap(),
        StartSend::NotReady(QpState::Sqd)
    );
    // Leaving SQD while draining is refused (except to ERR).
    assert!(h.ctx.modify_qp(qpn, &rts_attr(), M::STATE).is_err());
    assert!(
        h.ctx.post_send(qpn, &[SendWr::send(3, vec![])]).is_ok(),
        "SQD accepts posts"
    );
    let done = h.ctx.complete_send(qpn, w.id, WcStatus::Success).unwrap();
    assert!(done.sq_drained);
    assert_eq!(h.ctx.get_async_event(), Some(AsyncEvent::SqDrained { qpn }));
    assert!(!h.ctx.query_qp(qpn).unwrap().0.sq_draining);
    h.ctx
        .modify_qp(qpn, &QpAttr::to_state(QpState::Rts), M::STATE)
        .unwrap();
    assert_eq!(started(&mut h, qpn).wr.wr_id, 2);
}

#[test]
fn recv_cq_overrun_errors_the_cq_and_the_qp() {
    let mut h = host(NicProfile::Rxe);
    let (cq, size) = h.ctx.create_cq(1, None).unwrap();
    assert_eq!(size, 1);
    let init = verbs::QpInitAttr {
        qp_type: QpType::Rc,
        send_cq: h.cq,
        recv_cq: cq,
        cap: cap(),
        sq_sig_all: false,
    };
    let qpn = h.ctx.create_qp(h.pd, &init).unwrap().qpn;
    h.bring_up(qpn);
    h.ctx
        .post_recv(
            qpn,
            &[
                RecvWr::new(1, vec![]),
                RecvWr::new(2, vec![]),
                RecvWr::new(3, vec![]),
            ],
        )
        .unwrap();
    let first = h.ctx.complete_recv(qpn, RecvCompletion::recv(0)).unwrap();
    assert_eq!(first.cqe.push, CqPush::Queued { event: false });
    let second = h.ctx.complete_recv(qpn, RecvCompletion::recv(0)).unwrap();
    assert_eq!(second.cqe.push, CqPush::Overrun);
    assert!(
        second.flushed.is_some(),
        "the QP whose completion overran goes to ERR"
    );
    assert_eq!(h.state(qpn), QpState::Err);
    assert!(h.ctx.cq(cq).unwrap().in_error());
    assert_eq!(h.ctx.get_async_event(), Some(AsyncEvent::CqErr { cq }));
    assert!(
        h.ctx
            .take_notifications()
            .contains(&Notification::Async(AsyncEvent::CqErr { cq }))
    );
    assert_eq!(
        h.ctx.poll_cq(cq, 10).unwrap().len(),
        1,
        "only the completion that fitted"
    );
}

#[test]
fn solicited_event_notification() {
    let mut h = host(NicProfile::Mlx5);
    let ch = h.ctx.create_comp_channel();
    let (cq, _) = h.ctx.create_cq(16, Some(ch)).unwrap();
    let init = verbs::QpInitAttr {
        qp_type: QpType::Rc,
        send_cq: cq,
        recv_cq: cq,
        cap: cap(),
        sq_sig_all: false,
    };
    let qpn = h.ctx.create_qp(h.pd, &init).unwrap().qpn;
    h.bring_up(qpn);
    h.ctx
        .post_recv(qpn, &[RecvWr::new(1, vec![]), RecvWr::new(2, vec![])])
        .unwrap();
    h.ctx.req_notify_cq(cq, true).unwrap();
    let out = h.ctx.complete_recv(qpn, RecvCompletion::recv(0)).unwrap();
    assert_eq!(
        out.cqe.push,
        CqPush::Queued { event: false },
        "not solicited"
    );
    let c = RecvCompletion {
        solicited: true,
        ..RecvCompletion::recv(0)
    };
    let out = h.ctx.complete_recv(qpn, c).unwrap();
    assert_eq!(out.cqe.push, CqPush::Queued { event: true });
    assert_eq!(
        h.ctx.take_notifications(),
        [Notification::CompletionEvent {
            cq,
            channel: Some(ch)
        }]
    );
    assert_eq!(h.ctx.get_cq_event(ch).unwrap(), Some(cq));
    h.ctx.ack_cq_events(cq, 1).unwrap();
}

#[test]
fn synthetic_buffers_carry_a_large_write() {
    let mut a = host(NicProfile::Mlx5);
    let mut b = host(NicProfile::Mlx5);
    let qa = a.qp_with(
        QpType::Rc,
        QpCap {
            max_send_sge: 1,
            ..cap()
        },
        true,
    );
    let qb = b.qp(QpType::Rc);
    a.bring_up(qa);
    b.bring_up(qb);
    let len: u64 = 1 << 30;
    let src = a.ctx.memory_mut().alloc_synthetic(len, 9).unwrap();
    let dst = b.ctx.memory_mut().alloc_synthetic(len, 9).unwrap();
    let smr = a.ctx.reg_mr(a.pd, src, len, AccessFlags::empty()).unwrap();
    assert_eq!(smr.pages, len / 4096, "pages to pin");
    let dmr = b
        .ctx
        .reg_mr(
            b.pd,
            dst,
            len,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    // Move the first 64 KiB of a 1 GiB WRITE in 4 KiB packets.
    let wr = SendWr::write(
        1,
        vec![Sge::new(src, len as u32 - 1, smr.lkey)],
        dst,
        dmr.rkey,
    );
    a.ctx.post_send(qa, &[wr]).unwrap();
    let w = started(&mut a, qa);
    b.ctx
        .responder_check(qb, verbs::RemoteOp::Write, dmr.rkey, dst, w.length)
        .unwrap();
    let mut pkt = vec![0; 4096];
    for i in 0..16u64 {
        a.ctx.gather_send(qa, w.id, i * 4096, &mut pkt).unwrap();
        b.ctx
            .remote_write(qb, dmr.rkey, dst + i * 4096, &pkt)
            .unwrap();
    }
    let stats = b.ctx.memory().synthetic_stats(dst).unwrap();
    assert_eq!((stats.bytes_written, stats.mismatched_bytes), (65536, 0));
    assert_eq!(stats.crc(), verbs::memory::pattern_crc(9, 0, 65536));
}
