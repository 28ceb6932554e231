//! Unit tests of [`context`](super), in a file of their own so the model reads in one screen.

use super::*;
use crate::errno::Errno;

fn ctx_with_qp(profile: NicProfile, qp_type: QpType) -> (Context, PdHandle, CqHandle, QpNum) {
    let mut ctx = Context::new(profile);
    let pd = ctx.alloc_pd().unwrap();
    let (cq, _) = ctx.create_cq(16, None).unwrap();
    let cap = QpCap {
        max_send_wr: 4,
        max_recv_wr: 4,
        max_send_sge: 2,
        max_recv_sge: 2,
        max_inline_data: 32,
    };
    let qp = ctx
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
        .unwrap();
    (ctx, pd, cq, qp.qpn)
}

#[test]
fn pd_in_use_is_ebusy() {
    let (mut ctx, pd, cq, qpn) = ctx_with_qp(NicProfile::Mlx5, QpType::Rc);
    let e = ctx.dealloc_pd(pd).unwrap_err();
    assert_eq!(e.errno(), Errno::EBUSY);
    assert_eq!(ctx.destroy_cq(cq).unwrap_err().errno(), Errno::EBUSY);
    ctx.destroy_qp(qpn).unwrap();
    let va = ctx.memory_mut().alloc(100).unwrap();
    let mr = ctx.reg_mr(pd, va, 100, AccessFlags::LOCAL_WRITE).unwrap();
    assert_eq!(ctx.dealloc_pd(pd).unwrap_err().errno(), Errno::EBUSY);
    ctx.dereg_mr(mr.handle()).unwrap();
    ctx.dealloc_pd(pd).unwrap();
    ctx.destroy_cq(cq).unwrap();
    assert_eq!(ctx.dealloc_pd(pd).unwrap_err(), VerbsError::NoSuchPd(pd));
}

#[test]
fn destroy_qp_cleans_its_completions_on_mlx5_only() {
    for p in NicProfile::ALL {
        let (mut ctx, pd, cq, qpn) = ctx_with_qp(p, QpType::Rc);
        // A second QP on the same CQ keeps its completion whatever the profile.
        let other = ctx
            .create_qp(
                pd,
                &QpInitAttr {
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    cap: QpCap::default(),
                    sq_sig_all: false,
                },
            )
            .unwrap()
            .qpn;
        ctx.push_wc(cq, Wc::error(1, WcStatus::WrFlushErr, qpn), false);
        ctx.push_wc(cq, Wc::error(2, WcStatus::WrFlushErr, other), false);
        ctx.push_wc(cq, Wc::error(3, WcStatus::WrFlushErr, qpn), false);
        let r = ctx.destroy_qp(qpn).unwrap();
        let left: Vec<u64> = ctx.cq(cq).unwrap().entries().map(|w| w.wr_id).collect();
        if p.destroy_qp_cleans_cq() {
            assert_eq!(
                r.cqes_removed, 2,
                "{p}: one CQ for both queues, cleaned once"
            );
            assert_eq!(left, [2], "{p}");
        } else {
            assert_eq!(r.cqes_removed, 0, "{p}");
            assert_eq!(left, [1, 2, 3], "{p}");
        }
        assert_eq!(ctx.destroy_qp(qpn).unwrap_err(), VerbsError::NoSuchQp(qpn));
    }
}

#[test]
fn create_qp_limits_and_qpns() {
    let (mut ctx, pd, cq, qpn) = ctx_with_qp(NicProfile::Rxe, QpType::Rc);
    assert_eq!(qpn.get(), 0x11);
    let mut init = QpInitAttr {
        qp_type: QpType::Rc,
        send_cq: cq,
        recv_cq: cq,
        cap: QpCap {
            max_send_wr: 0x4001,
            ..QpCap::default()
        },
        sq_sig_all: false,
    };
    let e = ctx.create_qp(pd, &init).unwrap_err();
    assert_eq!(
        e,
        VerbsError::QpCapTooLarge {
            field: "max_send_wr",
            requested: 0x4001,
            max: 0x4000
        }
    );
    init.cap = QpCap {
        max_send_sge: 33,
        ..QpCap::default()
    };
    assert_eq!(ctx.create_qp(pd, &init).unwrap_err().errno(), Errno::EINVAL);
    init.cap = QpCap {
        max_inline_data: 513,
        ..QpCap::default()
    };
    assert_eq!(ctx.create_qp(pd, &init).unwrap_err().errno(), Errno::EINVAL);
    init.cap = QpCap::default();
    assert_eq!(ctx.create_qp(pd, &init).unwrap().qpn.get(), 0x12);
}

#[test]
fn rxe_rounds_rd_atomic_on_query() {
    let (mut ctx, _, _, qpn) = ctx_with_qp(NicProfile::Rxe, QpType::Rc);
    let init = QpAttr {
        qp_state: QpState::Init,
        qp_access_flags: AccessFlags::REMOTE_READ,
        ..QpAttr::default()
    };
    let m =
        QpAttrMask::STATE | QpAttrMask::PKEY_INDEX | QpAttrMask::PORT | QpAttrMask::ACCESS_FLAGS;
    ctx.modify_qp(qpn, &init, m).unwrap();
    let rtr = QpAttr {
        qp_state: QpState::Rtr,
        ah_attr: crate::types::AhAttr::roce(crate::types::Gid::from_ipv4([10, 0, 0, 2])),
        max_dest_rd_atomic: 3,
        ..QpAttr::default()
    };
    let m = QpAttrMask::STATE
        | QpAttrMask::AV
        | QpAttrMask::PATH_MTU
        | QpAttrMask::DEST_QPN
        | QpAttrMask::RQ_PSN
        | QpAttrMask::MAX_DEST_RD_ATOMIC
        | QpAttrMask::MIN_RNR_TIMER;
    ctx.modify_qp(qpn, &rtr, m).unwrap();
    let (attr, _) = ctx.query_qp(qpn).unwrap();
    assert_eq!(attr.max_dest_rd_atomic, 4);
    assert_eq!(attr.qp_state, QpState::Rtr);
    assert_eq!(attr.qp_access_flags, AccessFlags::REMOTE_READ);
}

#[test]
fn comp_channel_events_and_acks() {
    let mut ctx = Context::new(NicProfile::Mlx5);
    let ch = ctx.create_comp_channel();
    let (cq, size) = ctx.create_cq(100, Some(ch)).unwrap();
    assert_eq!(size, 127);
    assert_eq!(
        ctx.destroy_comp_channel(ch).unwrap_err().errno(),
        Errno::EBUSY
    );
    ctx.req_notify_cq(cq, false).unwrap();
    let qpn = QpNum::new(0x11).unwrap();
    let r = ctx.push_wc(cq, Wc::error(1, WcStatus::WrFlushErr, qpn), false);
    assert_eq!(r, CqPush::Queued { event: true });
    assert_eq!(
        ctx.take_notifications(),
        [Notification::CompletionEvent {
            cq,
            channel: Some(ch)
        }]
    );
    assert_eq!(ctx.get_cq_event(ch).unwrap(), Some(cq));
    assert_eq!(ctx.get_cq_event(ch).unwrap(), None);
    assert_eq!(
        ctx.destroy_cq(cq).unwrap_err(),
        VerbsError::CqEventsUnacked { cq, unacked: 1 }
    );
    assert_eq!(ctx.ack_cq_events(cq, 2).unwrap_err().errno(), Errno::EINVAL);
    ctx.ack_cq_events(cq, 1).unwrap();
    ctx.destroy_cq(cq).unwrap();
    ctx.destroy_comp_channel(ch).unwrap();
}

#[test]
fn notify_without_channel_per_profile() {
    for p in NicProfile::ALL {
        let mut ctx = Context::new(p);
        let (cq, _) = ctx.create_cq(1, None).unwrap();
        assert_eq!(
            ctx.req_notify_cq(cq, false).is_ok(),
            p != NicProfile::Ibta,
            "{p}"
        );
    }
}

#[test]
fn reg_mr_errnos_and_pages() {
    let mut ctx = Context::new(NicProfile::Mlx5);
    let pd = ctx.alloc_pd().unwrap();
    let va = ctx.memory_mut().alloc(3 * 4096).unwrap();
    let e = ctx
        .reg_mr(pd, va, 100, AccessFlags::REMOTE_WRITE)
        .unwrap_err();
    assert_eq!(e.errno(), Errno::EINVAL);
    assert!(
        e.explain().contains("LOCAL_WRITE must be set too"),
        "{}",
        e.explain()
    );
    assert_eq!(
        ctx.reg_mr(pd, va, 0, AccessFlags::LOCAL_WRITE)
            .unwrap_err()
            .errno(),
        Errno::EINVAL
    );
    assert_eq!(
        ctx.reg_mr(pd, va + 1, 3 * 4096, AccessFlags::LOCAL_WRITE)
            .unwrap_err()
            .errno(),
        Errno::EFAULT
    );
    assert_eq!(
        ctx.reg_mr(PdHandle(9), va, 1, AccessFlags::LOCAL_WRITE)
            .unwrap_err()
            .errno(),
        Errno::EINVAL
    );
    let mr = ctx
        .reg_mr(pd, va + 4000, 200, AccessFlags::REMOTE_READ)
        .unwrap();
    assert_eq!(
        mr.pages, 2,
        "a 200-byte MR across a page boundary pins two pages"
    );
    assert_eq!(ctx.mr(mr.handle()), Some(&mr));
    ctx.dereg_mr(mr.handle()).unwrap();
    assert_eq!(
        ctx.dereg_mr(mr.handle()).unwrap_err(),
        VerbsError::NoSuchMr(mr.handle())
    );
    assert_eq!(
        ctx.check_remote(mr.rkey, pd, va + 4000, 8, AccessFlags::REMOTE_READ),
        Err(RemoteAccessError::InvalidKey { rkey: mr.rkey }),
        "a deregistered key fails"
    );
}

#[test]
fn cq_size_limits() {
    let mut ctx = Context::new(NicProfile::Rxe);
    assert_eq!(ctx.create_cq(0, None).unwrap_err().errno(), Errno::EINVAL);
    assert_eq!(
        ctx.create_cq(32_768, None).unwrap_err().errno(),
        Errno::EINVAL
    );
    assert_eq!(ctx.create_cq(32_767, None).unwrap().1, 32_767);
}
