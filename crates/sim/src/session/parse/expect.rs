//! A step's expectations (`expect = { ... }`): which apply to which call, and their values,
//! each of which may differ per NIC profile.

use toml::Spanned;
use toml::de::DeValue;

use super::keys;
use super::read::{Val, Want, found};
use super::vocab::data_form;
use super::{Parser, Result};
use crate::session::msg::{MsgId, msg};
use crate::session::plan::{Call, EventExpect, Expect, MemExpect, WcExpect};

impl Parser<'_> {
    // ---- expectations ----

    pub(super) fn expect(&self, v: &Val<'_>, call: &Call) -> Result<Expect> {
        let f = self.fields(v, MsgId::CtxExpect, &[keys::EXPECT])?;
        self.check_keys(&f)?;
        let mut e = Expect::default();
        let name = call.name();
        let refuse = |key: &str, ok: bool, why: MsgId| -> Result<()> {
            if f.has(key) && !ok {
                return self.err(
                    f.key_span(key),
                    msg!(RefusalExpectNotApply, key, call = name, why),
                );
            }
            Ok(())
        };
        let is_post = matches!(call, Call::PostSend { .. } | Call::PostRecv { .. });
        let is_poll = matches!(call, Call::PollCq { .. });
        refuse(
            "ret",
            !matches!(call, Call::Run { .. }),
            MsgId::WhyRunReturnsNothing,
        )?;
        refuse("bad_wr", is_post, MsgId::WhyOnlyPostsBadWr)?;
        refuse("completions", is_poll, MsgId::WhyOnlyPollCompletions)?;
        refuse("wc", is_poll, MsgId::WhyOnlyPollCompletions)?;
        refuse(
            "event",
            matches!(call, Call::GetCqEvent { .. } | Call::GetAsyncEvent { .. }),
            MsgId::WhyOnlyEventCalls,
        )?;
        refuse(
            "sq_draining",
            matches!(call, Call::QueryQp { .. }),
            MsgId::WhyOnlyQueryQpDraining,
        )?;
        let step_qp = match call {
            Call::ModifyQp { qp, .. }
            | Call::QueryQp { qp }
            | Call::PostSend { qp, .. }
            | Call::PostRecv { qp, .. } => Some(*qp),
            _ => None,
        };
        refuse("state", step_qp.is_some(), MsgId::WhyNoQpUseQpStates)?;
        if let Some(v) = f.get("ret") {
            e.ret = Some(self.per_profile(v, "ret", |p, v| p.ret_of(v, "ret"))?);
        }
        if let Some(v) = f.get("bad_wr") {
            e.bad_wr = Some(self.per_profile(v, "bad_wr", |p, v| match v.get_ref() {
                DeValue::String(s) if s.as_ref() == "none" => Ok(None),
                DeValue::Integer(_) => Ok(Some(p.int_key(v, f.decl("bad_wr"))? as usize)),
                other => p.err(v.span(), msg!(RefusalBadWrShape, found = found(other))),
            })?);
        }
        if let Some(v) = f.get("sq_draining") {
            e.sq_draining =
                Some(self.per_profile(v, "sq_draining", |p, v| p.bool_of(v, "sq_draining"))?);
        }
        if let Some(v) = f.get("completions") {
            e.completions = Some(self.per_profile(v, "completions", |p, v| {
                Ok(p.int_key(v, f.decl("completions"))? as usize)
            })?);
        }
        if let Some(v) = f.get("wc") {
            let mut list = Vec::new();
            for item in self.array_of(v, "wc")? {
                list.push(self.wc_expect(item)?);
            }
            e.wc = Some(list);
        }
        if let (Some(v), Some(qp)) = (f.get("state"), step_qp) {
            let s = self.per_profile(v, "state", |p, v| p.state_of(v, "state"))?;
            e.qp_states.push((qp, s));
        }
        if let Some(v) = f.get("qp_states") {
            let t = self.fields(v, MsgId::CtxQpStates, &[])?;
            let mut entries: Vec<_> = t.table.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            for (k, val) in entries {
                let key_val = Spanned::new(k.span(), DeValue::String(k.get_ref().clone()));
                let qp = self.handle_of(&key_val, "qp_states", Want::Qp)?;
                let s = self.per_profile(val, "qp_states", |p, v| p.state_of(v, "qp_states"))?;
                e.qp_states.push((qp, s));
            }
        }
        if let Some(v) = f.get("event") {
            let ef = self.fields(v, MsgId::CtxEvent, &[keys::EVENT])?;
            self.check_keys(&ef)?;
            let mut ev = EventExpect::default();
            if let Some(c) = ef.get("cq") {
                ev.cq = Some(self.handle_of(c, "cq", Want::Cq)?);
            }
            let is_async = matches!(call, Call::GetAsyncEvent { .. });
            for key in ["qp", "type"] {
                if ef.has(key) && !is_async {
                    return self.err(ef.key_span(key), msg!(RefusalEventKeyAsyncOnly, key));
                }
            }
            if let Some(q) = ef.get("qp") {
                ev.qp = Some(self.handle_of(q, "qp", Want::Qp)?);
            }
            if let Some(t) = ef.get("type") {
                ev.kind = Some(self.per_profile(t, "type", |p, v| p.async_name_of(v, "type"))?);
            }
            e.event = Some(ev);
        }
        if let Some(v) = f.get("memory") {
            let items: Vec<&Val<'_>> = match v.get_ref() {
                DeValue::Table(_) => vec![v],
                _ => self.array_of(v, "memory")?.iter().collect(),
            };
            for item in items {
                let mf = self.fields(item, MsgId::CtxExpectMemory, &[keys::MEM])?;
                self.check_keys(&mf)?;
                let (at, _) = self.mem_ref(&mf)?;
                let Some(key) = self.data_key(&mf)? else {
                    return self.err(mf.span.clone(), msg!(RefusalExpectMemoryNeedsData));
                };
                let dv = mf.get(key).expect("key just seen");
                let bytes = self.per_profile(dv, key, |p, v| {
                    let b = p.data_value(v, mf.decl(key))?;
                    p.check_fits(at, b.len() as u64, v.span())?;
                    Ok(b)
                })?;
                e.memory.push(MemExpect {
                    at,
                    bytes,
                    shown_as: data_form(key),
                });
            }
        }
        Ok(e)
    }

    pub(super) fn wc_expect(&self, v: &Val<'_>) -> Result<WcExpect> {
        let f = self.fields(v, MsgId::CtxExpectWc, &[keys::WC])?;
        self.check_keys(&f)?;
        let mut w = WcExpect::default();
        if let Some(v) = f.get("wr_id") {
            w.wr_id = Some(self.per_profile(v, "wr_id", |p, v| p.int_key(v, f.decl("wr_id")))?);
        }
        if let Some(v) = f.get("status") {
            w.status = Some(self.per_profile(v, "status", |p, v| p.status_of(v, "status"))?);
        }
        if let Some(v) = f.get("opcode") {
            w.opcode = Some(self.per_profile(v, "opcode", |p, v| p.wc_opcode_of(v, "opcode"))?);
        }
        if let Some(v) = f.get("byte_len") {
            w.byte_len = Some(self.per_profile(v, "byte_len", |p, v| {
                Ok(p.int_key(v, f.decl("byte_len"))? as u32)
            })?);
        }
        if let Some(v) = f.get("imm_data") {
            w.imm_data = Some(self.per_profile(v, "imm_data", |p, v| match v.get_ref() {
                DeValue::String(s) if s.as_ref() == "none" => Ok(None),
                _ => Ok(Some(p.int_key(v, f.decl("imm_data"))? as u32)),
            })?);
        }
        if let Some(v) = f.get("qp") {
            w.qp = Some(self.handle_of(v, "qp", Want::Qp)?);
        }
        if let Some(v) = f.get("src_qp") {
            w.src_qp = Some(self.handle_of(v, "src_qp", Want::Qp)?);
        }
        if let Some(v) = f.get("grh") {
            w.grh = Some(self.bool_of(v, "grh")?);
        }
        Ok(w)
    }
}
