//! Property tests: random `modify_qp` sequences with random masks never panic, a failing call
//! changes nothing, and every accepted call is a row of the transition table with its
//! required bits present. Random mixes of posts, transitions and transport calls keep the
//! queue and CQ invariants.
//!
//! `VERBS_PROP_STATS=1 cargo test -p verbs --test props -- --nocapture` prints how many calls
//! of each sequence succeeded and the final state, to check the strategies still reach RTS and
//! SQD (about 40% of calls succeed; mlx5 never enters SQD, its driver has no RTS→SQD).

use crate::common;

use common::*;
use proptest::prelude::*;
use verbs::modify::transition;
use verbs::{
    AccessFlags, AhAttr, Gid, Mtu, NicProfile, QpAttr, QpAttrMask as M, QpState, QpType,
    RecvCompletion, RecvWr, SendWr, Sge, StartSend, WcStatus,
};

fn state() -> impl Strategy<Value = QpState> {
    (0u8..7).prop_map(|v| QpState::from_value(v).unwrap())
}

/// Target states, weighted towards moving forward so sequences reach RTS and SQD.
fn target_state() -> impl Strategy<Value = QpState> {
    prop_oneof![
        1 => Just(QpState::Reset),
        3 => Just(QpState::Init),
        3 => Just(QpState::Rtr),
        4 => Just(QpState::Rts),
        2 => Just(QpState::Sqd),
        1 => Just(QpState::Sqe),
        1 => Just(QpState::Err),
    ]
}

fn attr() -> impl Strategy<Value = QpAttr> {
    (
        (
            state(),
            state(),
            1u8..=5,
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        ),
        (
            prop::bool::weighted(0.9),
            prop_oneof![4 => 0u16..64, 1 => 0u16..200],
            prop_oneof![4 => Just(1u8), 1 => 0u8..3],
            prop_oneof![4 => 0u8..32, 1 => 0u8..40],
            prop_oneof![4 => 0u8..8, 1 => 0u8..10],
            prop_oneof![4 => 0u8..8, 1 => 0u8..10],
        ),
        (
            prop_oneof![4 => 0u8..17, 1 => 0u8..200],
            prop_oneof![4 => 0u8..17, 1 => 0u8..200],
            prop_oneof![4 => 0u8..32, 1 => 0u8..40],
            prop_oneof![4 => 0u32..0x100_0000, 1 => 0u32..0x200_0000],
            0u8..12,
            any::<u8>(),
        ),
    )
        .prop_map(|(a, b, c)| QpAttr {
            qp_state: a.0,
            cur_qp_state: a.1,
            path_mtu: Mtu::from_value(a.2).unwrap(),
            rq_psn: a.3,
            sq_psn: a.4,
            qkey: a.5,
            ah_attr: AhAttr {
                is_global: b.0,
                ..AhAttr::roce(Gid::from_ipv4([10, 0, 0, 9]))
            },
            pkey_index: b.1,
            port_num: b.2,
            timeout: b.3,
            retry_cnt: b.4,
            rnr_retry: b.5,
            max_rd_atomic: c.0,
            max_dest_rd_atomic: c.1,
            min_rnr_timer: c.2,
            dest_qp_num: c.3,
            qp_access_flags: AccessFlags(u32::from(c.4 & 0xf)),
            alt_ah_attr: AhAttr::default(),
            en_sqd_async_notify: c.5 & 1 == 1,
            ..QpAttr::default()
        })
}

/// How a call builds its mask: fully random bits, or (guided) the table's required bits for
/// the transition from the QP's current state to `target`, plus a random subset of its
/// optional bits and sometimes one random extra bit, so that a good share of calls succeed.
#[derive(Clone, Copy, Debug)]
enum MaskPlan {
    Random(u32),
    Guided {
        target: QpState,
        pick: u32,
        noise: Option<u32>,
    },
    /// Guided towards the next state of the usual bring-up (RESET→INIT→RTR→RTS⇄SQD).
    Forward {
        pick: u32,
        noise: Option<u32>,
    },
}

fn mask_plan() -> impl Strategy<Value = MaskPlan> {
    prop_oneof![
        1 => (0u32..(1 << 21)).prop_map(MaskPlan::Random),
        4 => (target_state(), any::<u32>(), prop::option::weighted(0.2, 0u32..21))
            .prop_map(|(target, pick, noise)| MaskPlan::Guided { target, pick, noise }),
        4 => (any::<u32>(), prop::option::weighted(0.1, 0u32..21))
            .prop_map(|(pick, noise)| MaskPlan::Forward { pick, noise }),
    ]
}

fn build_mask(plan: MaskPlan, t: QpType, cur: QpState, a: &mut QpAttr) -> M {
    let plan = match plan {
        MaskPlan::Forward { pick, noise } => {
            let target = match cur {
                QpState::Reset => QpState::Init,
                QpState::Init => QpState::Rtr,
                QpState::Rtr | QpState::Sqd | QpState::Sqe => QpState::Rts,
                QpState::Rts => QpState::Sqd,
                QpState::Err => QpState::Reset,
            };
            MaskPlan::Guided {
                target,
                pick,
                noise,
            }
        }
        other => other,
    };
    match plan {
        MaskPlan::Random(bits) | MaskPlan::Forward { pick: bits, .. } => M(bits),
        MaskPlan::Guided {
            target,
            pick,
            noise,
        } => {
            a.qp_state = target;
            a.cur_qp_state = cur;
            let noise = noise.map_or(M(0), |b| M(1 << b));
            match transition(cur, target) {
                Some(row) => {
                    let r = row.rule(t);
                    M::STATE | r.required | M(r.optional.0 & pick) | noise
                }
                None => M::STATE | noise,
            }
        }
    }
}

fn profile() -> impl Strategy<Value = NicProfile> {
    prop_oneof![
        Just(NicProfile::Mlx5),
        Just(NicProfile::Rxe),
        Just(NicProfile::Ibta)
    ]
}

fn qp_type() -> impl Strategy<Value = QpType> {
    prop_oneof![Just(QpType::Rc), Just(QpType::Uc), Just(QpType::Ud)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn modify_sequences_follow_the_table(
        p in profile(),
        t in qp_type(),
        calls in proptest::collection::vec((attr(), mask_plan(), any::<bool>()), 1..40),
    ) {
        let mut h = host(p);
        let qpn = h.qp(t);
        let mut ok = 0usize;
        let n = calls.len();
        for (mut a, plan, post_something) in calls {
            let m = build_mask(plan, t, h.state(qpn), &mut a);
            if post_something {
                let _ = h.ctx.post_recv(qpn, &[RecvWr::new(1, vec![])]);
                let wr = SendWr::send(2, vec![]).to_ud(AhAttr::default(), verbs::QpNum::new(5).unwrap(), 1);
                let _ = h.ctx.post_send(qpn, &[wr]);
            }
            let before = h.ctx.query_qp(qpn).unwrap();
            let sq_before = h.ctx.send_queue(qpn).unwrap().count();
            let rq_before = h.ctx.recv_queue(qpn).unwrap().count();
            let cur = h.state(qpn);
            match h.ctx.modify_qp(qpn, &a, m) {
                Err(e) => {
                    prop_assert_eq!(e.errno(), verbs::Errno::EINVAL);
                    prop_assert_eq!(h.ctx.query_qp(qpn).unwrap(), before, "a failing call changed attributes: {}", e);
                    prop_assert_eq!(h.ctx.send_queue(qpn).unwrap().count(), sq_before);
                    prop_assert_eq!(h.ctx.recv_queue(qpn).unwrap().count(), rq_before);
                }
                Ok(out) => {
                    ok += 1;
                    let claimed = if m.contains(M::CUR_STATE) { a.cur_qp_state } else { cur };
                    let next = if m.contains(M::STATE) { a.qp_state } else { claimed };
                    let row = transition(claimed, next);
                    prop_assert!(row.is_some(), "{}→{} accepted but not in the table", claimed, next);
                    prop_assert!(!p.lacks_transition(claimed, next), "{}: {}→{} has no driver command", p, claimed, next);
                    let rule = row.unwrap().rule(t);
                    prop_assert!(m.contains(rule.required));
                    prop_assert!((m - rule.required - rule.optional - M::STATE).is_empty());
                    prop_assert_eq!(out.to, next);
                    prop_assert_eq!(h.state(qpn), next);
                    if next == QpState::Reset {
                        prop_assert_eq!(h.ctx.send_queue(qpn).unwrap().count(), 0);
                    }
                    if next == QpState::Err {
                        prop_assert_eq!(h.ctx.send_queue(qpn).unwrap().count(), 0);
                        prop_assert_eq!(h.ctx.recv_queue(qpn).unwrap().count(), 0);
                    }
                }
            }
        }
        if std::env::var_os("VERBS_PROP_STATS").is_some() {
            eprintln!("STATS {ok}/{n} {:?}", h.state(qpn));
        }
    }

    #[test]
    fn random_work_keeps_queue_and_cq_invariants(
        p in profile(),
        ops in proptest::collection::vec((0u8..8, any::<u8>()), 1..80),
    ) {
        let mut h = host(p);
        let qpn = h.qp(QpType::Rc);
        let depth = h.ctx.query_qp(qpn).unwrap().1.cap;
        let cq_size = h.ctx.cq(h.cq).unwrap().cqe() as usize;
        let sge = Sge::new(h.buf, 8, h.mr.lkey);
        let mut started = Vec::new();
        for (op, x) in ops {
            match op {
                0 => { let _ = h.ctx.post_send(qpn, &[SendWr::send(u64::from(x), vec![sge]).signaled()]); }
                1 => { let _ = h.ctx.post_recv(qpn, &[RecvWr::new(u64::from(x), vec![sge])]); }
                2 => {
                    if let Ok(StartSend::Started(w)) = h.ctx.start_send(qpn) { started.push(w.id); }
                }
                3 => {
                    if !started.is_empty() {
                        let id = started.remove(usize::from(x) % started.len());
                        let status = if x % 7 == 0 { WcStatus::RetryExcErr } else { WcStatus::Success };
                        let _ = h.ctx.complete_send(qpn, id, status);
                    }
                }
                4 => { let _ = h.ctx.complete_recv(qpn, RecvCompletion::recv(8)); }
                5 => {
                    let s = h.state(qpn);
                    match s {
                        QpState::Reset => h.make_init(qpn),
                        QpState::Init => h.make_rtr(qpn),
                        QpState::Rtr => h.make_rts(qpn),
                        _ => h.move_to(qpn, if x % 2 == 0 { QpState::Err } else { QpState::Reset }),
                    }
                    if matches!(h.state(qpn), QpState::Reset | QpState::Err) { started.clear(); }
                }
                6 => { let _ = h.ctx.poll_cq(h.cq, usize::from(x % 5)); }
                _ => { let _ = h.ctx.set_error(qpn); started.clear(); }
            }
            prop_assert!(h.ctx.send_queue(qpn).unwrap().count() <= depth.max_send_wr as usize);
            prop_assert!(h.ctx.recv_queue(qpn).unwrap().count() <= depth.max_recv_wr as usize);
            prop_assert!(h.ctx.cq(h.cq).unwrap().len() <= cq_size);
            if h.state(qpn) == QpState::Err {
                prop_assert_eq!(h.ctx.send_queue(qpn).unwrap().count(), 0);
                prop_assert_eq!(h.ctx.recv_queue(qpn).unwrap().count(), 0);
            }
        }
    }
}
