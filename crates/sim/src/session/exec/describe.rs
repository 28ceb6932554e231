//! How the report writes a call and its arguments, and the bytes it shows.

use crate::session::parse::opcode_name;
use crate::session::plan::{
    Call, DataForm, HandleId, HostId, KeyRef, MemRef, QpRef, Session, SgePlan,
};

/// The handles a call defines.
pub(super) fn outputs(call: &Call) -> Vec<HandleId> {
    match call {
        Call::AllocPd { out, .. }
        | Call::Alloc { out, .. }
        | Call::RegMr { out, .. }
        | Call::CreateCq { out, .. }
        | Call::CreateQp { out, .. }
        | Call::CreateCompChannel { out, .. } => vec![*out],
        Call::Connect { pd, cq, qp, .. } => vec![pd[0], pd[1], cq[0], cq[1], qp[0], qp[1]],
        _ => Vec::new(),
    }
}

/// The host a call runs on (`connect` runs on its first host).
pub(crate) fn step_host(s: &Session, call: &Call) -> Option<HostId> {
    match call {
        Call::AllocPd { host, .. }
        | Call::Alloc { host, .. }
        | Call::CreateCq { host, .. }
        | Call::CreateCompChannel { host, .. } => Some(*host),
        Call::ReqNotifyCq { cq, .. } | Call::AckCqEvents { cq, .. } => Some(s.handle(*cq).host),
        Call::GetAsyncEvent { host, .. } | Call::AckAsyncEvent { host } => Some(*host),
        Call::GetCqEvent { channel, .. } | Call::DestroyCompChannel { channel } => {
            Some(s.handle(*channel).host)
        }
        Call::RegMr { pd, .. } | Call::CreateQp { pd, .. } => Some(s.handle(*pd).host),
        Call::ModifyQp { qp, .. }
        | Call::QueryQp { qp }
        | Call::PostSend { qp, .. }
        | Call::PostRecv { qp, .. } => Some(s.handle(*qp).host),
        Call::PollCq { cq, .. } | Call::DestroyCq { cq } => Some(s.handle(*cq).host),
        Call::DestroyQp { qp } => Some(s.handle(*qp).host),
        Call::DeregMr { mr } => Some(s.handle(*mr).host),
        Call::DeallocPd { pd } => Some(s.handle(*pd).host),
        Call::Connect { hosts, .. } => Some(hosts[0]),
        Call::Run { .. } => None,
        Call::WriteMemory { at, .. } | Call::ReadMemory { at, .. } => {
            Some(s.handle(at.handle).host)
        }
    }
}

pub(super) fn mem_name(s: &Session, at: MemRef) -> String {
    format!("{}+{}", s.name(at.handle), at.offset)
}

pub(super) fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn printable(b: &[u8]) -> String {
    b.iter()
        .map(|&c| {
            if (0x20..0x7f).contains(&c) {
                c as char
            } else {
                '.'
            }
        })
        .collect()
}

pub(super) fn show_bytes(b: &[u8], form: DataForm) -> String {
    match form {
        DataForm::Text => format!("{:?}", String::from_utf8_lossy(b)),
        DataForm::Hex => hex(b),
        DataForm::U64 => {
            let mut w = [0u8; 8];
            let n = b.len().min(8);
            w[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(w).to_string()
        }
    }
}

/// The call with its arguments, as the report shows it.
pub(crate) fn describe(s: &Session, call: &Call) -> String {
    let n = |h: HandleId| s.name(h).to_string();
    let sges = |list: &[SgePlan]| -> String {
        let v: Vec<String> = list
            .iter()
            .map(|g| {
                let mut t = format!("{}+{}", n(g.mr), g.offset);
                if let Some(l) = g.len {
                    t.push_str(&format!(" len {l}"));
                }
                if let Some(k) = g.lkey {
                    t.push_str(&format!(" lkey {k:#x}"));
                }
                t
            })
            .collect();
        format!("[{}]", v.join(", "))
    };
    match call {
        Call::AllocPd { host, out } => format!("alloc_pd({}) as {}", s.host_name(*host), n(*out)),
        Call::Alloc { host, out, len, .. } => {
            format!("alloc({}, {len} bytes) as {}", s.host_name(*host), n(*out))
        }
        Call::RegMr {
            pd,
            buf,
            offset,
            len,
            access,
            out,
        } => format!(
            "reg_mr({}, {}+{offset}, {len}, {access}) as {}",
            n(*pd),
            n(*buf),
            n(*out)
        ),
        Call::CreateCq {
            host,
            cqe,
            channel,
            out,
        } => match channel {
            Some(ch) => format!(
                "create_cq({}, cqe {cqe}, channel {}) as {}",
                s.host_name(*host),
                n(*ch),
                n(*out)
            ),
            None => format!(
                "create_cq({}, cqe {cqe}) as {}",
                s.host_name(*host),
                n(*out)
            ),
        },
        Call::CreateCompChannel { host, out } => {
            format!("create_comp_channel({}) as {}", s.host_name(*host), n(*out))
        }
        Call::DestroyCompChannel { channel } => format!("destroy_comp_channel({})", n(*channel)),
        Call::ReqNotifyCq { cq, solicited_only } => {
            format!(
                "req_notify_cq({}, solicited_only {})",
                n(*cq),
                u8::from(*solicited_only)
            )
        }
        Call::GetCqEvent { channel, wait } => {
            format!("get_cq_event({}, block up to {wait})", n(*channel))
        }
        Call::AckCqEvents { cq, n: k } => format!("ack_cq_events({}, {k})", n(*cq)),
        Call::GetAsyncEvent { host, wait } => {
            format!(
                "get_async_event({}, block up to {wait})",
                s.host_name(*host)
            )
        }
        Call::AckAsyncEvent { host } => format!("ack_async_event({})", s.host_name(*host)),
        Call::CreateQp {
            pd,
            send_cq,
            recv_cq,
            qp_type,
            cap,
            sq_sig_all,
            out,
        } => format!(
            "create_qp({}, {qp_type}, send_cq {}, recv_cq {}, max_send_wr {}, max_recv_wr {}, max_send_sge {}, max_recv_sge {}, max_inline_data {}{}) as {}",
            n(*pd),
            n(*send_cq),
            n(*recv_cq),
            cap.max_send_wr,
            cap.max_recv_wr,
            cap.max_send_sge,
            cap.max_recv_sge,
            cap.max_inline_data,
            if *sq_sig_all { ", sq_sig_all" } else { "" },
            n(*out)
        ),
        Call::ModifyQp { qp, attr, mask } => {
            let mut t = format!("modify_qp({}", n(*qp));
            if mask.contains(verbs::QpAttrMask::STATE) {
                t.push_str(&format!(" → {}", attr.attr.qp_state));
            }
            if let Some(d) = attr.dest_qp {
                match d {
                    QpRef::Handle(h) => t.push_str(&format!(", dest_qp {}", n(h))),
                    QpRef::Number(q) => t.push_str(&format!(", dest_qp {q:#x}")),
                }
            }
            if let Some(h) = attr.av {
                t.push_str(&format!(", av → {}", s.host_name(h)));
            }
            let a = &attr.attr;
            for key in &attr.given {
                let value = match *key {
                    "cur_state" => a.cur_qp_state.to_string(),
                    "en_sqd_async_notify" => a.en_sqd_async_notify.to_string(),
                    "access" => a.qp_access_flags.to_string(),
                    "pkey_index" => a.pkey_index.to_string(),
                    "port" => a.port_num.to_string(),
                    "qkey" => format!("{:#x}", a.qkey),
                    "path_mtu" => a.path_mtu.to_string(),
                    "timeout" => a.timeout.to_string(),
                    "retry_cnt" => a.retry_cnt.to_string(),
                    "rnr_retry" => a.rnr_retry.to_string(),
                    "rq_psn" => a.rq_psn.to_string(),
                    "max_rd_atomic" => a.max_rd_atomic.to_string(),
                    "min_rnr_timer" => a.min_rnr_timer.to_string(),
                    "sq_psn" => a.sq_psn.to_string(),
                    "max_dest_rd_atomic" => a.max_dest_rd_atomic.to_string(),
                    "path_mig_state" => a.path_mig_state.to_string(),
                    // state, dest_qp and av are shown above.
                    _ => continue,
                };
                t.push_str(&format!(", {key} {value}"));
            }
            t.push_str(&format!(", mask {mask})"));
            t
        }
        Call::QueryQp { qp } => format!("query_qp({})", n(*qp)),
        Call::PostSend { qp, wrs } => {
            let v: Vec<String> = wrs
                .iter()
                .map(|w| {
                    let mut t = format!("{} wr_id {}", opcode_name(w.opcode), w.wr_id);
                    if !w.flags.is_empty() {
                        t.push_str(&format!(" {}", w.flags));
                    }
                    t.push_str(&format!(" sge {}", sges(&w.sges)));
                    if let Some(r) = &w.remote {
                        let key = match r.rkey {
                            KeyRef::Mr(m) => n(m),
                            KeyRef::Raw(k) => format!("{k:#x}"),
                        };
                        t.push_str(&format!(" → {}+{} rkey {key}", n(r.target), r.offset));
                    }
                    if let Some(u) = &w.ud {
                        t.push_str(&format!(" → {} qkey {:#x}", n(u.qp), u.qkey));
                    }
                    if w.opcode.has_imm() {
                        t.push_str(&format!(" imm {:#x}", w.imm));
                    }
                    match w.opcode {
                        verbs::SendOpcode::AtomicCmpAndSwp => {
                            t.push_str(&format!(" compare {} swap {}", w.compare_add, w.swap))
                        }
                        verbs::SendOpcode::AtomicFetchAndAdd => {
                            t.push_str(&format!(" add {}", w.compare_add))
                        }
                        _ => {}
                    }
                    t
                })
                .collect();
            format!("post_send({}, [{}])", n(*qp), v.join("; "))
        }
        Call::PostRecv { qp, wrs } => {
            let v: Vec<String> = wrs
                .iter()
                .map(|w| format!("wr_id {} sge {}", w.wr_id, sges(&w.sges)))
                .collect();
            format!("post_recv({}, [{}])", n(*qp), v.join("; "))
        }
        Call::PollCq { cq, max, wait } => match wait {
            Some(w) => format!("poll_cq({}, max {max}, wait up to {w})", n(*cq)),
            None => format!("poll_cq({}, max {max})", n(*cq)),
        },
        Call::Connect { hosts, qp, .. } => format!(
            "connect({} ⇄ {}) as {} / {}",
            s.host_name(hosts[0]),
            s.host_name(hosts[1]),
            n(qp[0]),
            n(qp[1])
        ),
        Call::DestroyQp { qp } => format!("destroy_qp({})", n(*qp)),
        Call::DestroyCq { cq } => format!("destroy_cq({})", n(*cq)),
        Call::DeregMr { mr } => format!("dereg_mr({})", n(*mr)),
        Call::DeallocPd { pd } => format!("dealloc_pd({})", n(*pd)),
        Call::Run { duration } => format!("run {duration}"),
        Call::WriteMemory { at, data } => {
            format!("write_memory({}, {} byte(s))", mem_name(s, *at), data.len())
        }
        Call::ReadMemory { at, len } => format!("read_memory({}, {len})", mem_name(s, *at)),
    }
}
