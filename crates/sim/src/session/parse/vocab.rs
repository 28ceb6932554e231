//! The vocabularies a session file names things from (opcodes, flags, states, statuses,
//! errnos, profiles, ...), their readers, the byte literals (`text`, `hex`, `u64`) and durations.

use std::ops::{BitOrAssign, Range};

use toml::de::DeValue;
use units::SimDuration;
use verbs::types::{QpState, QpType};
use verbs::{AccessFlags, Errno, NicProfile, QpAttrMask, SendFlags, SendOpcode};
use verbs::{WcOpcode, WcStatus};

use super::keys::{self, Key};
use super::read::{Fields, Val, Want, join};
use super::{Parser, Result};
use crate::session::msg::{MsgId, msg};
use crate::session::plan::{DataForm, MemRef, Ret, limits};

/// A vocabulary: the names a key of type [`keys::Ty::Name`] or [`keys::Ty::Names`] takes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Vocab {
    /// `ibv_access_flags` (`IBV_ACCESS_` prefix optional).
    Access,
    /// `ibv_send_flags` (`IBV_SEND_`).
    SendFlag,
    /// `ibv_qp_attr_mask` (`IBV_QP_`).
    Mask,
    /// `ibv_qp_state` (`IBV_QPS_`).
    QpState,
    /// `ibv_event_type` (`IBV_EVENT_`).
    AsyncEvent,
    /// `ibv_wr_opcode` (`IBV_WR_`).
    Opcode,
    /// `ibv_wc_status` (`IBV_WC_`).
    WcStatus,
    /// `ibv_wc_opcode` (`IBV_WC_`).
    WcOpcode,
    /// The NIC profiles.
    Profile,
    /// The fabric's shapes.
    Topology,
    /// `ibv_qp_type`.
    QpType,
    /// How `connect`'s pair recovers a loss.
    Retransmission,
    /// The calls a step makes.
    Call,
}

impl Vocab {
    /// Every name, in the order a refusal lists them.
    pub(crate) fn names(self) -> Vec<&'static str> {
        match self {
            Vocab::Access => AccessFlags::NAMED.iter().map(|(n, _)| *n).collect(),
            Vocab::SendFlag => SendFlags::NAMED.iter().map(|(n, _)| *n).collect(),
            Vocab::Mask => QpAttrMask::NAMED.iter().map(|(n, _)| *n).collect(),
            Vocab::QpState => QpState::ALL.iter().map(|q| q.name()).collect(),
            Vocab::AsyncEvent => verbs::AsyncEvent::NAMES.to_vec(),
            Vocab::Opcode => OPCODES.iter().map(|o| opcode_name(*o)).collect(),
            Vocab::WcStatus => WC_STATUSES.iter().map(|w| status_name(*w)).collect(),
            Vocab::WcOpcode => WC_OPCODES.iter().map(|w| wc_opcode_name(*w)).collect(),
            Vocab::Profile => NicProfile::ALL.iter().map(|p| p.name()).collect(),
            Vocab::Topology => vec!["back_to_back", "switch"],
            Vocab::QpType => QpType::ALL.iter().map(|t| t.name()).collect(),
            Vocab::Retransmission => vec!["go_back_n", "selective"],
            Vocab::Call => keys::CALLS.iter().map(|c| c.name).collect(),
        }
    }

    /// The prefix the C names carry, which a file may leave out (`IBV_ACCESS_LOCAL_WRITE`).
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            Vocab::Access => "IBV_ACCESS_",
            Vocab::SendFlag => "IBV_SEND_",
            Vocab::Mask => "IBV_QP_",
            Vocab::QpState => "IBV_QPS_",
            Vocab::AsyncEvent => "IBV_EVENT_",
            Vocab::Opcode => "IBV_WR_",
            Vocab::WcStatus | Vocab::WcOpcode => "IBV_WC_",
            Vocab::Profile
            | Vocab::Topology
            | Vocab::QpType
            | Vocab::Retransmission
            | Vocab::Call => "",
        }
    }
}

const ERRNOS: &[Errno] = &Errno::ALL;
const OPCODES: &[SendOpcode] = &[
    SendOpcode::Send,
    SendOpcode::SendWithImm,
    SendOpcode::RdmaWrite,
    SendOpcode::RdmaWriteWithImm,
    SendOpcode::RdmaRead,
    SendOpcode::AtomicCmpAndSwp,
    SendOpcode::AtomicFetchAndAdd,
];
/// Every `ibv_wc_status`, in verbs.h order.
pub(crate) const WC_STATUSES: &[WcStatus] = &WcStatus::ALL;
const WC_OPCODES: &[WcOpcode] = &[
    WcOpcode::Send,
    WcOpcode::RdmaWrite,
    WcOpcode::RdmaRead,
    WcOpcode::CompSwap,
    WcOpcode::FetchAdd,
    WcOpcode::Recv,
    WcOpcode::RecvRdmaWithImm,
];

/// The `modify_qp` attribute keys and the mask bit each belongs to.
pub(crate) const ATTR_KEYS: &[(&str, QpAttrMask)] = &[
    ("state", QpAttrMask::STATE),
    ("cur_state", QpAttrMask::CUR_STATE),
    ("en_sqd_async_notify", QpAttrMask::EN_SQD_ASYNC_NOTIFY),
    ("access", QpAttrMask::ACCESS_FLAGS),
    ("pkey_index", QpAttrMask::PKEY_INDEX),
    ("port", QpAttrMask::PORT),
    ("qkey", QpAttrMask::QKEY),
    ("av", QpAttrMask::AV),
    ("path_mtu", QpAttrMask::PATH_MTU),
    ("timeout", QpAttrMask::TIMEOUT),
    ("retry_cnt", QpAttrMask::RETRY_CNT),
    ("rnr_retry", QpAttrMask::RNR_RETRY),
    ("rq_psn", QpAttrMask::RQ_PSN),
    ("max_rd_atomic", QpAttrMask::MAX_QP_RD_ATOMIC),
    ("min_rnr_timer", QpAttrMask::MIN_RNR_TIMER),
    ("sq_psn", QpAttrMask::SQ_PSN),
    ("max_dest_rd_atomic", QpAttrMask::MAX_DEST_RD_ATOMIC),
    ("path_mig_state", QpAttrMask::PATH_MIG_STATE),
    ("dest_qp", QpAttrMask::DEST_QPN),
];

/// The short name of a work-completion status (`"WR_FLUSH_ERR"`).
pub(crate) fn status_name(s: WcStatus) -> &'static str {
    s.const_name().trim_start_matches("IBV_WC_")
}

/// The short name of a work-completion opcode (`"RECV"`).
pub(crate) fn wc_opcode_name(o: WcOpcode) -> &'static str {
    o.const_name().trim_start_matches("IBV_WC_")
}

/// The short name of a send opcode (`"RDMA_WRITE"`).
pub(crate) fn opcode_name(o: SendOpcode) -> &'static str {
    o.const_name().trim_start_matches("IBV_WR_")
}
impl Parser<'_> {
    // ---- vocabularies ----

    /// The position in `vocab`'s names of `name` (its C prefix optional), or the refusal
    /// naming `key` and the allowed names.
    fn vocab_index(
        &self,
        name: &str,
        span: Range<usize>,
        key: &str,
        vocab: Vocab,
    ) -> Result<usize> {
        let names = vocab.names();
        let bare = name.trim_start_matches(vocab.prefix());
        if let Some(i) = names.iter().position(|n| *n == bare) {
            return Ok(i);
        }
        let allowed = join(names);
        // What the refusal calls the name, and whether it says the C prefix may be left out (a
        // QP state's refusal never has, though `IBV_QPS_` may be).
        let (what, prefixed) = match vocab {
            Vocab::Access => (MsgId::VocabAccessFlag, true),
            Vocab::SendFlag => (MsgId::VocabSendFlag, true),
            Vocab::Mask => (MsgId::VocabMaskBit, true),
            Vocab::AsyncEvent => (MsgId::VocabAsyncEvent, true),
            Vocab::Opcode => (MsgId::VocabOpcode, true),
            Vocab::WcStatus => (MsgId::VocabWcStatus, true),
            Vocab::WcOpcode => (MsgId::VocabWcOpcode, true),
            Vocab::QpState => (MsgId::VocabQpState, false),
            Vocab::Profile => (MsgId::VocabProfile, false),
            Vocab::Topology => (MsgId::VocabTopology, false),
            Vocab::QpType => (MsgId::VocabQpType, false),
            Vocab::Retransmission => {
                return self.err(span, msg!(RefusalUnknownRetransmission, name, allowed));
            }
            Vocab::Call => return self.err(span, msg!(RefusalUnknownCall, name, allowed)),
        };
        let prefix = vocab.prefix();
        self.err(
            span,
            if prefixed {
                msg!(RefusalUnknownPrefixed, what, name, key, allowed, prefix)
            } else {
                msg!(RefusalUnknownName, what, name, key, allowed)
            },
        )
    }

    /// A name or a list of names of `vocab`, the flags `named` gives them, or'ed together.
    fn flags_of<F: Copy + BitOrAssign>(
        &self,
        v: &Val<'_>,
        key: &str,
        vocab: Vocab,
        named: &[(&'static str, F)],
        empty: F,
    ) -> Result<F> {
        let mut flags = empty;
        for (name, span) in self.names_of(v, key)? {
            flags |= named[self.vocab_index(name, span, key, vocab)?].1;
        }
        Ok(flags)
    }

    /// One name of `vocab`: its position in the vocabulary's names.
    pub(super) fn name_in(&self, v: &Val<'_>, key: &str, vocab: Vocab) -> Result<usize> {
        let s = self.str_of(v, key)?;
        self.vocab_index(s, v.span(), key, vocab)
    }

    pub(super) fn access_of(&self, v: &Val<'_>, key: &str) -> Result<AccessFlags> {
        let (named, none) = (AccessFlags::NAMED, AccessFlags::empty());
        self.flags_of(v, key, Vocab::Access, named, none)
    }

    pub(super) fn send_flags_of(&self, v: &Val<'_>, key: &str) -> Result<SendFlags> {
        let (named, none) = (SendFlags::NAMED, SendFlags::empty());
        self.flags_of(v, key, Vocab::SendFlag, named, none)
    }

    pub(super) fn mask_of(&self, v: &Val<'_>, key: &str) -> Result<QpAttrMask> {
        let (named, none) = (QpAttrMask::NAMED, QpAttrMask::empty());
        self.flags_of(v, key, Vocab::Mask, named, none)
    }

    pub(super) fn state_of(&self, v: &Val<'_>, key: &str) -> Result<QpState> {
        Ok(QpState::ALL[self.name_in(v, key, Vocab::QpState)?])
    }

    pub(super) fn async_name_of(&self, v: &Val<'_>, key: &str) -> Result<&'static str> {
        Ok(verbs::AsyncEvent::NAMES[self.name_in(v, key, Vocab::AsyncEvent)?])
    }

    pub(super) fn opcode_of(&self, v: &Val<'_>, key: &str) -> Result<SendOpcode> {
        Ok(OPCODES[self.name_in(v, key, Vocab::Opcode)?])
    }

    pub(super) fn ret_of(&self, v: &Val<'_>, key: &str) -> Result<Ret> {
        if let DeValue::Integer(_) = v.get_ref()
            && self.int_of(v, key, 0, 0).is_ok()
        {
            return Ok(Ret::Ok);
        }
        let s = self.str_of(v, key)?;
        if s.eq_ignore_ascii_case("ok") {
            return Ok(Ret::Ok);
        }
        match ERRNOS.iter().find(|e| e.name() == s) {
            Some(e) => Ok(Ret::Err(*e)),
            None => self.err(
                v.span(),
                msg!(
                    RefusalUnknownName,
                    what = MsgId::VocabReturnCode,
                    name = s,
                    key,
                    allowed = join(std::iter::once("ok").chain(ERRNOS.iter().map(|e| e.name())))
                ),
            ),
        }
    }

    pub(super) fn status_of(&self, v: &Val<'_>, key: &str) -> Result<WcStatus> {
        Ok(WC_STATUSES[self.name_in(v, key, Vocab::WcStatus)?])
    }

    pub(super) fn wc_opcode_of(&self, v: &Val<'_>, key: &str) -> Result<WcOpcode> {
        Ok(WC_OPCODES[self.name_in(v, key, Vocab::WcOpcode)?])
    }

    /// Which of `text`, `hex`, `u64` the table gives (at most one).
    pub(super) fn data_key(&self, f: &Fields<'_, '_>) -> Result<Option<&'static str>> {
        let given: Vec<&'static str> = ["text", "hex", "u64"]
            .into_iter()
            .filter(|k| f.has(k))
            .collect();
        if given.len() > 1 {
            return self.err(
                f.key_span(given[1]),
                msg!(
                    RefusalDataTwice,
                    what = f.what.clone(),
                    a = given[0],
                    b = given[1]
                ),
            );
        }
        Ok(given.first().copied())
    }

    /// The bytes of one `text`, `hex` or `u64` value (`decl` is the key's declaration).
    pub(super) fn data_value(&self, v: &Val<'_>, decl: &Key) -> Result<Vec<u8>> {
        let key = decl.name;
        let bytes = match key {
            "text" => self.str_of(v, key)?.as_bytes().to_vec(),
            "hex" => self.hex_of(v, key)?,
            _ => self.int_key(v, decl)?.to_le_bytes().to_vec(),
        };
        if bytes.len() > limits::MAX_LITERAL_BYTES {
            return self.err(
                v.span(),
                msg!(
                    RefusalLiteralTooLong,
                    key,
                    n = bytes.len(),
                    max = limits::MAX_LITERAL_BYTES
                ),
            );
        }
        if bytes.is_empty() {
            return self.err(v.span(), msg!(RefusalEmpty, key));
        }
        Ok(bytes)
    }

    /// Bytes written as `text`, `hex` or `u64`; `None` if the table has none of them.
    pub(super) fn data_of(&self, f: &Fields<'_, '_>) -> Result<Option<(Vec<u8>, Range<usize>)>> {
        let Some(key) = self.data_key(f)? else {
            return Ok(None);
        };
        let v = f.get(key).expect("key just seen");
        Ok(Some((self.data_value(v, f.decl(key))?, v.span())))
    }

    pub(super) fn hex_of(&self, v: &Val<'_>, key: &str) -> Result<Vec<u8>> {
        let s = self.str_of(v, key)?;
        let digits: Vec<char> = s
            .trim()
            .trim_start_matches("0x")
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '_' | ':'))
            .collect();
        if !digits.len().is_multiple_of(2) || !digits.iter().all(char::is_ascii_hexdigit) {
            return self.err(v.span(), msg!(RefusalBadHex, key));
        }
        Ok(digits
            .chunks(2)
            .map(|p| {
                let hi = p[0].to_digit(16).expect("checked hex digit");
                let lo = p[1].to_digit(16).expect("checked hex digit");
                (hi * 16 + lo) as u8
            })
            .collect())
    }

    /// A buffer or MR plus `offset`, from a table with `buf` or `mr`.
    pub(super) fn mem_ref(&self, f: &Fields<'_, '_>) -> Result<(MemRef, Range<usize>)> {
        let (key, v) = match (f.get("buf"), f.get("mr")) {
            (Some(_), Some(m)) => {
                return self.err(m.span(), msg!(RefusalBufAndMr, what = f.what.clone()));
            }
            (Some(b), None) => ("buf", b),
            (None, Some(m)) => ("mr", m),
            (None, None) => {
                return self.err(
                    f.span.clone(),
                    msg!(RefusalNeedsBufOrMr, what = f.what.clone()),
                );
            }
        };
        let want = if key == "buf" { Want::Buffer } else { Want::Mr };
        let handle = self.handle_of(v, key, want)?;
        let offset = self.opt_int(f, "offset")?;
        Ok((MemRef { handle, offset }, v.span()))
    }
}

/// How an `expect.memory` range shows its bytes: as the key that gave them.
pub(super) fn data_form(key: &str) -> DataForm {
    match key {
        "text" => DataForm::Text,
        "hex" => DataForm::Hex,
        _ => DataForm::U64,
    }
}

/// Parses "10us", "1.5 ms", "250ns", "3s", "100ps" into a duration.
pub(crate) fn parse_duration(s: &str) -> std::result::Result<SimDuration, &'static str> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or("no unit")?;
    let (num, unit) = s.split_at(split);
    let unit_ps: u64 = match unit.trim() {
        "ps" => 1,
        "ns" => 1_000,
        "us" | "µs" => 1_000_000,
        "ms" => 1_000_000_000,
        "s" => 1_000_000_000_000,
        _ => return Err("unknown unit"),
    };
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) => (w, f),
        None => (num, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a number");
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 12 {
        return Err("not a number");
    }
    let whole: u64 = whole.parse().map_err(|_| "too large")?;
    let mut ps = whole.checked_mul(unit_ps).ok_or("too large")?;
    let mut scale = unit_ps;
    for d in frac.bytes() {
        scale /= 10;
        let digit = u64::from(d - b'0');
        if scale == 0 {
            if digit != 0 {
                return Err("finer than 1 ps");
            }
            continue;
        }
        ps = ps.checked_add(digit * scale).ok_or("too large")?;
    }
    Ok(SimDuration::from_ps(ps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10us"), Ok(SimDuration::from_us(10)));
        assert_eq!(parse_duration("1.5 ms"), Ok(SimDuration::from_us(1_500)));
        assert_eq!(parse_duration("250ns"), Ok(SimDuration::from_ns(250)));
        assert_eq!(parse_duration("3µs"), Ok(SimDuration::from_us(3)));
        assert_eq!(parse_duration("7ps"), Ok(SimDuration::from_ps(7)));
        assert_eq!(parse_duration("1.0001ps"), Err("finer than 1 ps"));
        assert_eq!(parse_duration("10"), Err("no unit"));
        assert_eq!(parse_duration("10 parsecs"), Err("unknown unit"));
        assert_eq!(parse_duration(".5us"), Err("not a number"));
    }
}
