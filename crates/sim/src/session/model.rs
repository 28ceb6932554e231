//! The verbs model a front end draws from: the QP states, the legal transitions with the
//! attribute masks each needs per QP type (the kernel's `qp_state_table`, as
//! [`verbs::QP_STATE_TABLE`] holds it), the session file's attribute keys and the mask bit
//! each sets, the completion statuses and the errnos. Served by the web lab as
//! `GET /api/verbs/model`, so the playground's state diagram is drawn from the same table that
//! decides whether a `modify_qp` returns EINVAL.

use serde::Serialize;
use verbs::{Errno, NicProfile, QP_STATE_TABLE, QpAttrMask, QpState, QpType, WcStatus};

use super::parse::{ATTR_KEYS, status_name};

/// The whole model.
#[derive(Clone, Debug, Serialize)]
pub struct Model {
    /// The seven QP states, in verbs.h order.
    pub states: Vec<&'static str>,
    /// `RC`, `UC`, `UD`.
    pub qp_types: Vec<&'static str>,
    /// Every legal transition.
    pub transitions: Vec<TransitionView>,
    /// The session file's `modify_qp` attribute keys and the mask bit each needs.
    pub attrs: Vec<AttrView>,
    /// The NIC profiles a session can run under.
    pub profiles: Vec<&'static str>,
    /// Every completion status.
    pub wc_status: Vec<StatusView>,
    /// Every errno a verb returns.
    pub errno: Vec<ErrnoView>,
}

/// One legal transition and its masks per QP type.
#[derive(Clone, Debug, Serialize)]
pub struct TransitionView {
    /// From this state.
    pub from: &'static str,
    /// To this state.
    pub to: &'static str,
    /// RC's masks.
    pub rc: MaskView,
    /// UC's masks.
    pub uc: MaskView,
    /// UD's masks.
    pub ud: MaskView,
}

/// The mask bits (names without `IBV_QP_`) a transition requires and allows, besides STATE.
#[derive(Clone, Debug, Serialize)]
pub struct MaskView {
    /// Must be set.
    pub required: Vec<&'static str>,
    /// May be set.
    pub optional: Vec<&'static str>,
}

/// A `modify_qp` key of the session file.
#[derive(Clone, Debug, Serialize)]
pub struct AttrView {
    /// The key (`path_mtu`).
    pub key: &'static str,
    /// The mask bit it needs (`PATH_MTU`).
    pub mask: &'static str,
}

/// A completion status.
#[derive(Clone, Debug, Serialize)]
pub struct StatusView {
    /// Without the `IBV_WC_` prefix (`RETRY_EXC_ERR`), as sessions spell it.
    pub name: &'static str,
    /// Its verbs.h value.
    pub code: u8,
    /// `ibv_wc_status_str`.
    pub text: &'static str,
}

/// An errno.
#[derive(Clone, Debug, Serialize)]
pub struct ErrnoView {
    /// `EINVAL`.
    pub name: &'static str,
    /// 22.
    pub code: i32,
}

fn names(m: QpAttrMask) -> Vec<&'static str> {
    m.iter_names().collect()
}

/// The model.
pub fn model() -> Model {
    let mask = |r: verbs::modify::MaskRule| MaskView {
        required: names(r.required),
        optional: names(r.optional),
    };
    Model {
        states: QpState::ALL.iter().map(|s| s.name()).collect(),
        qp_types: QpType::ALL.iter().map(|t| t.name()).collect(),
        transitions: QP_STATE_TABLE
            .iter()
            .map(|t| TransitionView {
                from: t.from.name(),
                to: t.to.name(),
                rc: mask(t.rc),
                uc: mask(t.uc),
                ud: mask(t.ud),
            })
            .collect(),
        attrs: ATTR_KEYS
            .iter()
            .map(|&(key, bit)| AttrView {
                key,
                mask: bit.iter_names().next().unwrap_or("STATE"),
            })
            .collect(),
        profiles: NicProfile::ALL.iter().map(|p| p.name()).collect(),
        wc_status: WcStatus::ALL
            .iter()
            .map(|&s| StatusView {
                name: status_name(s),
                code: s.value(),
                text: s.as_str(),
            })
            .collect(),
        errno: Errno::ALL
            .iter()
            .map(|e| ErrnoView {
                name: e.name(),
                code: e.code(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_lists_the_table_and_every_attribute_key() {
        let m = model();
        assert_eq!(m.states.len(), 7);
        assert_eq!(m.transitions.len(), QP_STATE_TABLE.len());
        let init_rtr = m
            .transitions
            .iter()
            .find(|t| t.from == "INIT" && t.to == "RTR")
            .expect("INIT→RTR is legal");
        for bit in ["AV", "PATH_MTU", "DEST_QPN", "RQ_PSN"] {
            assert!(init_rtr.rc.required.contains(&bit), "{bit}");
        }
        assert!(init_rtr.ud.required.is_empty());
        assert_eq!(m.wc_status.len(), 22);
        assert_eq!(m.wc_status[12].name, "RETRY_EXC_ERR");
        // Every attribute key maps to the bit the parser checks.
        assert!(
            m.attrs
                .iter()
                .any(|a| a.key == "dest_qp" && a.mask == "DEST_QPN")
        );
        assert!(m.errno.iter().any(|e| e.name == "EINVAL" && e.code == 22));
    }
}
