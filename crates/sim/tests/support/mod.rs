//! What several of this crate's integration tests share.

/// Runs tshark with `args` and returns its standard output, or `None` when tshark is not on
/// PATH (the test then skips its tshark half, loudly; under CI a missing tshark fails).
#[allow(dead_code)] // not every test file that shares this module reads pcaps
pub fn tshark(args: &[&str]) -> Option<String> {
    if std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "tshark not found on PATH and CI is set: apt-get install tshark"
        );
        eprintln!("\n*** SKIPPED the tshark half: tshark not found ***\n");
        return None;
    }
    let out = std::process::Command::new("tshark")
        .args(args)
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("tshark prints UTF-8"))
}

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
        host: h,
        pd,
        cq,
        qpn,
    }
}
