//! Unit tests of [`modify`](super), in a file of their own so the model reads in one screen.

use super::*;
use crate::profile::NicProfile;

fn dev() -> DeviceAttr {
    NicProfile::Mlx5.device_attr()
}

#[test]
fn table_matches_the_spec_matrix() {
    // verbs-spec §1 "Legal transitions": rows are from-states, columns to-states.
    let legal: [[bool; 7]; 7] = [
        [true, true, false, false, false, false, false],
        [true, true, true, false, false, false, true],
        [true, false, false, true, false, false, true],
        [true, false, false, true, true, false, true],
        [true, false, false, true, true, false, true],
        [true, false, false, true, false, false, true],
        [true, false, false, false, false, false, true],
    ];
    for from in QpState::ALL {
        for to in QpState::ALL {
            assert_eq!(
                transition(from, to).is_some(),
                legal[from as usize][to as usize],
                "{from}→{to}"
            );
        }
    }
}

#[test]
fn missing_attribute_message_names_the_rule() {
    let mask = M::STATE | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::SQ_PSN;
    let e = validate(
        QpType::Rc,
        QpState::Rtr,
        false,
        &QpAttr::to_state(QpState::Rts),
        mask,
        &dev(),
        NicProfile::Mlx5,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "modify_qp RTR→RTS: missing required attribute MAX_QP_RD_ATOMIC \
         (RC requires TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC, SQ_PSN)"
    );
}

#[test]
fn illegal_transition_lists_legal_targets() {
    let e = validate(
        QpType::Rc,
        QpState::Init,
        false,
        &QpAttr::to_state(QpState::Rts),
        M::STATE,
        &dev(),
        NicProfile::Mlx5,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "modify_qp INIT→RTS: not a legal transition (from INIT the legal targets are RESET, INIT, RTR, ERR)"
    );
}

#[test]
fn into_reset_or_err_takes_state_only() {
    let attr = QpAttr::to_state(QpState::Err);
    assert!(
        validate(
            QpType::Rc,
            QpState::Rts,
            false,
            &attr,
            M::STATE,
            &dev(),
            NicProfile::Mlx5
        )
        .is_ok()
    );
    let e = validate(
        QpType::Rc,
        QpState::Rts,
        false,
        &attr,
        M::STATE | M::CUR_STATE,
        &dev(),
        NicProfile::Mlx5,
    );
    // CUR_STATE with cur = RESET (attr default) is refused by rule 1; with cur = RTS by rule 4.
    assert!(e.is_err());
    let attr = QpAttr {
        cur_qp_state: QpState::Rts,
        ..attr
    };
    assert!(matches!(
        validate(
            QpType::Rc,
            QpState::Rts,
            false,
            &attr,
            M::STATE | M::CUR_STATE,
            &dev(),
            NicProfile::Mlx5
        ),
        Err(ModifyError::NotAllowed { .. })
    ));
}

#[test]
fn value_checks() {
    let base = QpAttr {
        qp_state: QpState::Rtr,
        ..QpAttr::default()
    };
    let d = dev();
    let rtr = M::STATE | M::PKEY_INDEX | M::QKEY;
    assert!(
        validate(
            QpType::Ud,
            QpState::Init,
            false,
            &base,
            rtr,
            &d,
            NicProfile::Mlx5
        )
        .is_ok()
    );
    let big_pkey = QpAttr {
        pkey_index: 128,
        ..base
    };
    assert!(matches!(
        validate(
            QpType::Ud,
            QpState::Init,
            false,
            &big_pkey,
            rtr,
            &d,
            NicProfile::Mlx5
        ),
        Err(ModifyError::PkeyIndexOutOfRange { .. })
    ));
    let rts = QpAttr {
        qp_state: QpState::Rts,
        timeout: 32,
        ..QpAttr::default()
    };
    let mask =
        M::STATE | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::SQ_PSN | M::MAX_QP_RD_ATOMIC;
    assert_eq!(
        validate(
            QpType::Rc,
            QpState::Rtr,
            false,
            &rts,
            mask,
            &d,
            NicProfile::Mlx5
        ),
        Err(ModifyError::TimeoutTooLarge { timeout: 32 })
    );
    let rts = QpAttr {
        timeout: 31,
        max_rd_atomic: 17,
        ..rts
    };
    assert!(matches!(
        validate(
            QpType::Rc,
            QpState::Rtr,
            false,
            &rts,
            mask,
            &d,
            NicProfile::Mlx5
        ),
        Err(ModifyError::MaxRdAtomicTooLarge {
            requested: 17,
            max: 16
        })
    ));
}
#[test]
fn mlx5_has_no_command_for_rts_to_sqd_or_sqd_to_sqd() {
    let sqd = QpAttr::to_state(QpState::Sqd);
    let rts = QpAttr::to_state(QpState::Rts);
    for p in NicProfile::ALL {
        let into_sqd = validate(QpType::Rc, QpState::Rts, false, &sqd, M::STATE, &dev(), p);
        let sqd_sqd = validate(QpType::Rc, QpState::Sqd, false, &sqd, M::STATE, &dev(), p);
        let sqd_rts = validate(QpType::Rc, QpState::Sqd, false, &rts, M::STATE, &dev(), p);
        assert!(sqd_rts.is_ok(), "{p}: optab has SQD_RTS");
        if p == NicProfile::Mlx5 {
            let e = into_sqd.unwrap_err();
            assert_eq!(
                e,
                ModifyError::NoMlx5Command {
                    from: QpState::Rts,
                    to: QpState::Sqd
                }
            );
            assert!(
                e.to_string()
                    .contains("mlx5 driver has no firmware command")
            );
            assert!(matches!(sqd_sqd, Err(ModifyError::NoMlx5Command { .. })));
        } else {
            assert!(into_sqd.is_ok() && sqd_sqd.is_ok(), "{p} implements SQD");
        }
    }
    // The generic checks come first: a bad mask is reported as such under mlx5 too.
    assert!(matches!(
        validate(
            QpType::Rc,
            QpState::Rts,
            false,
            &sqd,
            M::STATE | M::PATH_MTU,
            &dev(),
            NicProfile::Mlx5
        ),
        Err(ModifyError::NotAllowed { .. })
    ));
}

#[test]
fn draining_refuses_all_but_err_only_with_state_in_the_mask() {
    let d = NicProfile::Rxe.device_attr();
    let v = |to: QpState, mask: M| {
        validate(
            QpType::Rc,
            QpState::Sqd,
            true,
            &QpAttr::to_state(to),
            mask,
            &d,
            NicProfile::Rxe,
        )
    };
    for to in [QpState::Rts, QpState::Sqd, QpState::Reset] {
        assert_eq!(v(to, M::STATE), Err(ModifyError::SqDraining { to }));
    }
    assert!(v(QpState::Err, M::STATE).is_ok());
    // rxe_qp_chk_attr tests `mask & IB_QP_STATE`: an SQD→SQD without STATE passes.
    assert!(v(QpState::Sqd, M::TIMEOUT).is_ok());
}
