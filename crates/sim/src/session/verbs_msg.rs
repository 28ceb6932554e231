//! A failed verb's rule as a message id: the verbs crate explains each refusal in English
//! (`VerbsError::explain`, `PostError::explain`), which the session report keeps as the
//! result's `text`; the same sentence as an id and its arguments (`verr.*`, `vpost.*`) lets a
//! page explain it in its own language. Each id's English template writes exactly what the
//! verbs crate writes (the tests below compare them), so `text` and `msg` never disagree.

use super::msg::{Arg, Msg, MsgId, list};
use verbs::types::QpState;
use verbs::{
    MemoryError, ModifyError, MrError, NicProfile, PostError, PostRejection, QP_STATE_TABLE,
    QpAttrMask, Queue, VerbsError,
};

fn hex(v: impl Into<u64>) -> Arg {
    Arg::Str(format!("{:#x}", v.into()))
}

fn show(v: impl ToString) -> Arg {
    Arg::Str(v.to_string())
}

fn names(m: QpAttrMask) -> Arg {
    list(m.iter_names().map(String::from))
}

fn plural(m: QpAttrMask) -> Arg {
    show(if m.iter_names().count() > 1 { "s" } else { "" })
}

/// `e` as [`VerbsError::explain`] writes it: the errno, then the rule.
pub fn verbs_error(e: &VerbsError) -> Msg {
    Msg::new(MsgId::VerrErrno)
        .arg("errno", e.errno().name())
        .arg("why", rule(e))
}

fn rule(e: &VerbsError) -> Msg {
    use MsgId as I;
    let m = Msg::new;
    match *e {
        VerbsError::NoSuchPd(h) => m(I::VerrNoSuch).arg("what", show(h)),
        VerbsError::NoSuchCq(h) => m(I::VerrNoSuch).arg("what", show(h)),
        VerbsError::NoSuchChannel(h) => m(I::VerrNoSuch).arg("what", show(h)),
        VerbsError::NoSuchQp(h) => m(I::VerrNoSuch).arg("what", show(h)),
        VerbsError::NoSuchMr(h) => m(I::VerrNoSuchMr).arg("mr", show(h)),
        VerbsError::PdInUse { pd, users } => m(I::VerrPdInUse).arg("pd", show(pd)).arg("n", users),
        VerbsError::CqInUse { cq, qps } => m(I::VerrCqInUse).arg("cq", show(cq)).arg("n", qps),
        VerbsError::CqEventsUnacked { cq, unacked } => m(I::VerrCqEventsUnacked)
            .arg("cq", show(cq))
            .arg("n", unacked),
        VerbsError::CqAsyncEventsUnacked { cq, unacked } => m(I::VerrCqAsyncUnacked)
            .arg("cq", show(cq))
            .arg("n", unacked),
        VerbsError::QpAsyncEventsUnacked { qpn, unacked } => m(I::VerrQpAsyncUnacked)
            .arg("qp", show(qpn))
            .arg("n", unacked),
        VerbsError::AsyncAckWithoutEvent { event } => {
            m(I::VerrAsyncAckWithoutEvent).arg("event", event)
        }
        VerbsError::AckTooMany { cq, acked, unacked } => m(I::VerrAckTooMany)
            .arg("cq", show(cq))
            .arg("unacked", unacked)
            .arg("acked", acked),
        VerbsError::ChannelInUse { channel, cqs } => m(I::VerrChannelInUse)
            .arg("channel", show(channel))
            .arg("n", cqs),
        VerbsError::NotifyWithoutChannel { cq } => {
            m(I::VerrNotifyWithoutChannel).arg("cq", show(cq))
        }
        VerbsError::CqSize { requested, max } => {
            m(I::VerrCqSize).arg("requested", requested).arg("max", max)
        }
        VerbsError::QpCapTooLarge {
            field,
            requested,
            max,
        } => m(I::VerrQpCapTooLarge)
            .arg("field", field)
            .arg("requested", requested)
            .arg("max", max),
        VerbsError::TooMany { what, max } => m(I::VerrTooMany).arg("what", what).arg("max", max),
        VerbsError::Mr(e) => mr(e),
        VerbsError::Modify(e) => modify(e),
        VerbsError::Memory(e) => memory(e),
        VerbsError::NoSuchWqe { qpn, id } => {
            m(I::VerrNoSuchWqe).arg("qp", show(qpn)).arg("id", id.0)
        }
    }
}

fn mr(e: MrError) -> Msg {
    use MsgId as I;
    let m = Msg::new;
    match e {
        MrError::LocalWriteRequired { access } => {
            m(I::VerrMrLocalWrite).arg("access", show(access))
        }
        MrError::UnknownAccessBits { access } => {
            m(I::VerrMrUnknownBits).arg("access", show(access))
        }
        MrError::ZeroLength => m(I::VerrMrZeroLength),
        MrError::TooLarge { len, max } => m(I::VerrMrTooLarge).arg("len", len).arg("max", max),
        MrError::Unmapped { va, len } => m(I::VerrMrUnmapped)
            .arg("va", hex(va))
            .arg("end", hex(va.wrapping_add(len))),
    }
}

fn memory(e: MemoryError) -> Msg {
    use MsgId as I;
    let m = Msg::new;
    match e {
        MemoryError::Unmapped { va, len } => m(I::VerrMemUnmapped)
            .arg("va", hex(va))
            .arg("end", hex(va.wrapping_add(len)))
            .arg("len", len),
        MemoryError::ZeroLength => m(I::VerrMemZeroLength),
        MemoryError::TooLarge { len, max } => m(I::VerrMemTooLarge).arg("len", len).arg("max", max),
        MemoryError::OutOfAddressSpace => m(I::VerrMemOutOfSpace),
        MemoryError::NotABuffer { va } => m(I::VerrMemNotABuffer).arg("va", hex(va)),
    }
}

fn legal_targets(from: QpState) -> Arg {
    let mut to: Vec<QpState> = QP_STATE_TABLE
        .iter()
        .filter(|t| t.from == from)
        .map(|t| t.to)
        .collect();
    to.sort();
    list(to.iter().map(|s| s.name()))
}

fn modify(e: ModifyError) -> Msg {
    use MsgId as I;
    let m = Msg::new;
    let ft = |id, from: QpState, to: QpState| m(id).arg("from", show(from)).arg("to", show(to));
    match e {
        ModifyError::CurStateNotAllowed { cur } => m(I::VerrModCurState).arg("cur", show(cur)),
        ModifyError::IllegalTransition { from, to } => {
            ft(I::VerrModIllegal, from, to).arg("targets", legal_targets(from))
        }
        ModifyError::MissingRequired {
            from,
            to,
            qp_type,
            missing,
            required,
        } => ft(I::VerrModMissing, from, to)
            .arg("s", plural(missing))
            .arg("missing", names(missing))
            .arg("qp_type", show(qp_type))
            .arg("required", names(required)),
        ModifyError::NotAllowed {
            from,
            to,
            qp_type,
            extra,
            allowed,
        } => ft(I::VerrModNotAllowed, from, to)
            .arg("s", plural(extra))
            .arg("extra", names(extra))
            .arg("qp_type", show(qp_type))
            .arg("allowed", names(allowed)),
        ModifyError::InvalidPort { port } => m(I::VerrModPort).arg("port", port),
        ModifyError::PkeyIndexOutOfRange { index, len } => {
            m(I::VerrModPkeyIndex).arg("index", index).arg("len", len)
        }
        ModifyError::AltPathOnRoce => m(I::VerrModAltPath),
        ModifyError::AvNotGlobal => m(I::VerrModNotGlobal),
        ModifyError::SgidIndexOutOfRange { index, len } => {
            m(I::VerrModSgidIndex).arg("index", index).arg("len", len)
        }
        ModifyError::GidFamilyMismatch {
            index,
            sgid,
            sgid_family,
            dgid,
            dgid_family,
        } => m(I::VerrModGidFamily)
            .arg("index", index)
            .arg("sgid", show(sgid))
            .arg("sgid_family", sgid_family)
            .arg("dgid", show(dgid))
            .arg("dgid_family", dgid_family),
        ModifyError::TimeoutTooLarge { timeout } => m(I::VerrModTimeout).arg("value", timeout),
        ModifyError::RetryCntTooLarge { value } => m(I::VerrModRetryCnt).arg("value", value),
        ModifyError::RnrRetryTooLarge { value } => m(I::VerrModRnrRetry).arg("value", value),
        ModifyError::MinRnrTimerTooLarge { value } => m(I::VerrModMinRnrTimer).arg("value", value),
        ModifyError::PathMtuTooLarge { requested, max } => m(I::VerrModPathMtu)
            .arg("requested", show(requested))
            .arg("max", show(max)),
        ModifyError::MaxRdAtomicTooLarge { requested, max } => m(I::VerrModMaxRdAtomic)
            .arg("requested", requested)
            .arg("max", max),
        ModifyError::MaxDestRdAtomicTooLarge { requested, max } => m(I::VerrModMaxDestRdAtomic)
            .arg("requested", requested)
            .arg("max", max),
        ModifyError::DestQpnTooLarge { value } => m(I::VerrModDestQpn).arg("value", hex(value)),
        ModifyError::SqDraining { to } => m(I::VerrModSqDraining).arg("to", show(to)),
        ModifyError::NoMlx5Command { from, to } => ft(I::VerrModNoMlx5, from, to),
    }
}

/// `e` as [`PostError::explain`] writes it: the verb, the errno, which WR, then the rule.
pub fn post_error(e: &PostError) -> Msg {
    use MsgId as I;
    let m = Msg::new;
    let why = match e.reason {
        PostRejection::NoSuchQp(q) => m(I::VerrNoSuch).arg("what", show(q)),
        PostRejection::QpState { state, profile } => {
            let s = |id| m(id).arg("state", show(state));
            match (e.op, profile) {
                (Queue::Send, NicProfile::Rxe) => s(I::VpostStateRxe).arg("n", e.posted),
                (Queue::Send, _) => s(I::VpostState),
                (Queue::Recv, NicProfile::Rxe) => s(I::VpostRecvStateRxe),
                (Queue::Recv, _) => s(I::VpostRecvState),
            }
        }
        PostRejection::QueueFull { depth } => m(I::VpostQueueFull).arg("depth", depth),
        PostRejection::TooManySge { num_sge, max } => {
            m(I::VpostTooManySge).arg("n", num_sge).arg("max", max)
        }
        PostRejection::InlineTooLong { len, max } => {
            m(I::VpostInlineTooLong).arg("len", len).arg("max", max)
        }
        PostRejection::InlineNotAllowed { opcode } => {
            m(I::VpostInlineNotAllowed).arg("opcode", show(opcode))
        }
        PostRejection::InlineUnmapped { addr, len } => m(I::VpostInlineUnmapped)
            .arg("addr", hex(addr))
            .arg("len", len),
        PostRejection::AtomicLength { len, exact: true } => m(I::VpostAtomicExact).arg("len", len),
        PostRejection::AtomicLength { len, exact: false } => {
            m(I::VpostAtomicAtLeast).arg("len", len)
        }
        PostRejection::AtomicAlignment { remote_addr } => {
            m(I::VpostAtomicAlign).arg("addr", hex(remote_addr))
        }
        PostRejection::MissingUdDest => m(I::VpostMissingUd),
    };
    let head = match e.bad_wr {
        Some(i) => m(I::VpostWr).arg("i", i),
        None => m(I::VpostAny),
    };
    head.arg("op", show(e.op))
        .arg("errno", e.errno.name())
        .arg("why", why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use verbs::types::{CqHandle, Gid, PdHandle, QpNum, QpType};
    use verbs::wr::SendOpcode;
    use verbs::{AccessFlags, Errno, Mtu};

    #[test]
    fn the_english_is_the_verbs_crates() {
        let q = QpNum::new(0x11).unwrap();
        let mask = QpAttrMask::STATE | QpAttrMask::PKEY_INDEX;
        let errors = [
            VerbsError::NoSuchPd(PdHandle(3)),
            VerbsError::NoSuchQp(q),
            VerbsError::PdInUse {
                pd: PdHandle(0),
                users: 2,
            },
            VerbsError::CqInUse {
                cq: CqHandle(1),
                qps: 1,
            },
            VerbsError::AckTooMany {
                cq: CqHandle(1),
                acked: 3,
                unacked: 1,
            },
            VerbsError::CqSize {
                requested: 0,
                max: 4096,
            },
            VerbsError::QpCapTooLarge {
                field: "max_send_wr",
                requested: 1 << 20,
                max: 32768,
            },
            VerbsError::TooMany {
                what: "create_qp",
                max: 8,
            },
            VerbsError::Mr(MrError::LocalWriteRequired {
                access: AccessFlags::REMOTE_WRITE,
            }),
            VerbsError::Mr(MrError::ZeroLength),
            VerbsError::Mr(MrError::Unmapped {
                va: 0x1000,
                len: 64,
            }),
            VerbsError::Memory(MemoryError::Unmapped { va: 0x10, len: 4 }),
            VerbsError::Memory(MemoryError::NotABuffer { va: 0x20 }),
            VerbsError::Modify(ModifyError::IllegalTransition {
                from: QpState::Reset,
                to: QpState::Rts,
            }),
            VerbsError::Modify(ModifyError::MissingRequired {
                from: QpState::Init,
                to: QpState::Rtr,
                qp_type: QpType::Rc,
                missing: QpAttrMask::AV,
                required: mask,
            }),
            VerbsError::Modify(ModifyError::NotAllowed {
                from: QpState::Init,
                to: QpState::Rtr,
                qp_type: QpType::Ud,
                extra: mask,
                allowed: QpAttrMask::STATE,
            }),
            VerbsError::Modify(ModifyError::AltPathOnRoce),
            VerbsError::Modify(ModifyError::GidFamilyMismatch {
                index: 1,
                sgid: Gid::from_ipv4([10, 0, 0, 1]),
                sgid_family: "IPv4",
                dgid: Gid([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
                dgid_family: "IPv6",
            }),
            VerbsError::Modify(ModifyError::PathMtuTooLarge {
                requested: Mtu::Mtu4096,
                max: Mtu::Mtu1024,
            }),
            VerbsError::Modify(ModifyError::DestQpnTooLarge { value: 1 << 25 }),
            VerbsError::Modify(ModifyError::NoMlx5Command {
                from: QpState::Rts,
                to: QpState::Sqd,
            }),
        ];
        for e in errors {
            assert_eq!(verbs_error(&e).text(), e.explain(), "{e:?}");
        }
        let reasons = [
            PostRejection::NoSuchQp(q),
            PostRejection::QpState {
                state: QpState::Rtr,
                profile: NicProfile::Rxe,
            },
            PostRejection::QpState {
                state: QpState::Rtr,
                profile: NicProfile::Mlx5,
            },
            PostRejection::QueueFull { depth: 16 },
            PostRejection::TooManySge { num_sge: 5, max: 4 },
            PostRejection::InlineNotAllowed {
                opcode: SendOpcode::RdmaRead,
            },
            PostRejection::InlineUnmapped { addr: 0x40, len: 8 },
            PostRejection::AtomicLength {
                len: 4,
                exact: true,
            },
            PostRejection::AtomicAlignment { remote_addr: 0x3 },
            PostRejection::MissingUdDest,
        ];
        for (k, reason) in reasons.into_iter().enumerate() {
            for op in [Queue::Send, Queue::Recv] {
                let e = PostError {
                    op,
                    errno: Errno::EINVAL,
                    bad_wr: (k % 2 == 0).then_some(k),
                    posted: 1,
                    reason,
                };
                assert_eq!(post_error(&e).text(), e.explain(), "{e:?}");
            }
        }
    }
}
