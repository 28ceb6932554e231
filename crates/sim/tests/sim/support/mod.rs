//! What several of this crate's integration tests share.

#[path = "../../../../../testing/tshark.rs"]
#[allow(dead_code)]
mod tshark_run;
#[allow(unused_imports)] // not every test file that shares this module reads pcaps
pub use tshark_run::tshark;

/// A PD, a 64-entry CQ and a QP of `qp_type` (16 WRs and 2 SGEs each way, 64 bytes inline) on
/// host `h`, in RESET.
#[allow(dead_code)] // not every test file that shares this module makes QPs this way
pub fn endpoint(
    w: &mut rdmalab::world::World,
    h: u32,
    qp_type: verbs::types::QpType,
) -> rdmalab::world::Endpoint {
    use verbs::qp::{QpCap, QpInitAttr};
    let pd = w.verbs(h).alloc_pd().expect("a PD");
    let (cq, _) = w.create_cq(h, 64, None).expect("a CQ");
    let qpn = w
        .create_qp(
            h,
            pd,
            &QpInitAttr {
                qp_type,
                send_cq: cq,
                recv_cq: cq,
                cap: QpCap {
                    max_send_wr: 16,
                    max_recv_wr: 16,
                    max_send_sge: 2,
                    max_recv_sge: 2,
                    max_inline_data: 64,
                },
                sq_sig_all: false,
            },
        )
        .expect("a QP")
        .qpn;
    rdmalab::world::Endpoint {
        host: h.into(),
        pd,
        cq,
        qpn,
    }
}

/// `len` bytes of memory on `e`'s host, registered in its PD with `access`: (address, MR).
#[allow(dead_code)] // not every test file that shares this module registers memory this way
pub fn mr(
    w: &mut rdmalab::world::World,
    e: &rdmalab::world::Endpoint,
    len: u64,
    access: verbs::AccessFlags,
) -> (u64, verbs::Mr) {
    let va = w
        .verbs(e.host)
        .memory_mut()
        .alloc(len)
        .expect("memory for the test");
    let mr = w
        .reg_mr(e.host, e.pd, va, len, access)
        .expect("the MR registers");
    (va, mr)
}
