//! `post_send` and `post_recv`: their WR chains, each WR's SGEs, a send WR's `remote` and
//! `ud`, and which keys each opcode takes.

use toml::de::DeValue;
use verbs::types::QpType;
use verbs::{SendFlags, SendOpcode};

use super::keys::{self, Key};
use super::read::{Fields, Val, Want, found};
use super::vocab::opcode_name;
use super::{Parser, Result};
use crate::session::msg::{MsgId, msg};
use crate::session::plan::{
    Call, HandleKind, HostId, KeyRef, RecvWrPlan, RemotePlan, SendWrPlan, SgePlan, UdPlan, limits,
};

impl Parser<'_> {
    pub(super) fn sge_list(&self, v: &Val<'_>, host: HostId) -> Result<Vec<SgePlan>> {
        let items: Vec<&Val<'_>> = match v.get_ref() {
            DeValue::Table(_) => vec![v],
            DeValue::Array(a) => a.iter().collect(),
            other => {
                return self.err(v.span(), msg!(RefusalSgeShape, found = found(other)));
            }
        };
        if items.len() > limits::MAX_SGES {
            return self.err(
                v.span(),
                msg!(RefusalTooManySges, n = items.len(), max = limits::MAX_SGES),
            );
        }
        let mut out = Vec::new();
        for item in items {
            let f = self.fields(item, MsgId::CtxSge, &[keys::SGE])?;
            self.check_keys(&f)?;
            let mr_v = self.req(&f, "mr")?;
            let mr = self.handle_of(mr_v, "mr", Want::Mr)?;
            self.same_host(mr, host, mr_v, "mr", MsgId::WhyTheQp)?;
            let offset = self.opt_int(&f, "offset")?;
            let len = self.int_if(&f, "len")?.map(|n| n as u32);
            let lkey = self.int_if(&f, "lkey")?.map(|n| n as u32);
            out.push(SgePlan {
                mr,
                offset,
                len,
                lkey,
            });
        }
        Ok(out)
    }

    /// The WR tables of a post step: `wr = [...]`, or the step itself for a single WR.
    /// `wr` is the step's table of WR keys (`keys::SEND_WR` or `keys::RECV_WR`).
    pub(super) fn wr_tables<'a, 'i>(
        &self,
        f: &Fields<'a, 'i>,
        wr: &'static [&'static [Key]],
    ) -> Result<Vec<Fields<'a, 'i>>> {
        let Some(w) = f.get("wr") else {
            return Ok(vec![Fields {
                table: f.table,
                span: f.span.clone(),
                what: f.what.clone(),
                keys: f.keys,
            }]);
        };
        if let Some(k) = wr
            .iter()
            .flat_map(|t| t.iter())
            .map(|k| k.name)
            .find(|k| f.has(k))
        {
            return self.err(
                f.key_span(k),
                msg!(RefusalWrAndKey, what = f.what.clone(), key = k),
            );
        }
        let items = self.array_of(w, "wr")?;
        if items.is_empty() || items.len() > limits::MAX_CHAIN {
            return self.err(w.span(), msg!(RefusalChainLength, max = limits::MAX_CHAIN));
        }
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let wf = self.fields(item, msg!(CtxWr, n = i, what = f.what.clone()), wr)?;
            self.check_keys(&wf)?;
            out.push(wf);
        }
        Ok(out)
    }

    pub(super) fn post_send(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp_v = self.req(f, "qp")?;
        let qp = self.handle_of(qp_v, "qp", Want::Qp)?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let is_ud = matches!(
            self.handles[qp.0].kind,
            HandleKind::Qp {
                qp_type: QpType::Ud
            }
        );
        let mut wrs = Vec::new();
        for wf in self.wr_tables(f, &[keys::SEND_WR])? {
            let w = self.send_wr(&wf, host)?;
            match (is_ud, w.ud.is_some()) {
                (true, false) => {
                    return self.err(
                        wf.span,
                        msg!(RefusalUdNeedsUd, name = &self.handles[qp.0].name),
                    );
                }
                (false, true) => {
                    return self.err(
                        wf.span,
                        msg!(RefusalUdOnConnected, name = &self.handles[qp.0].name),
                    );
                }
                _ => {}
            }
            wrs.push(w);
        }
        Ok(Call::PostSend { qp, wrs })
    }

    pub(super) fn send_wr(&self, f: &Fields<'_, '_>, host: HostId) -> Result<SendWrPlan> {
        let op_v = self.req(f, "opcode")?;
        let opcode = self.opcode_of(op_v, "opcode")?;
        let wr_id = self.opt_int(f, "wr_id")?;
        let flags = match f.get("flags") {
            Some(v) => self.send_flags_of(v, "flags")?,
            None => SendFlags::empty(),
        };
        let sges = match f.get("sge") {
            Some(v) => self.sge_list(v, host)?,
            None => Vec::new(),
        };
        let needs_remote = !matches!(opcode, SendOpcode::Send | SendOpcode::SendWithImm);
        let remote = match (f.get("remote"), needs_remote) {
            (Some(v), true) => Some(self.remote(v)?),
            (None, true) => {
                return self.err(
                    op_v.span(),
                    msg!(RefusalNeedsRemote, opcode = opcode_name(opcode)),
                );
            }
            (Some(v), false) => {
                return self.err(
                    v.span(),
                    msg!(RefusalNoRemote, opcode = opcode_name(opcode)),
                );
            }
            (None, false) => None,
        };
        let only = |key: &str, ok: bool, who: &str| -> Result<()> {
            if f.has(key) && !ok {
                return self.err(
                    f.key_span(key),
                    match who.split_once(" and ") {
                        Some((a, b)) => msg!(
                            RefusalOnlyUsedByTwo,
                            key,
                            a,
                            b,
                            opcode = opcode_name(opcode)
                        ),
                        None => msg!(RefusalOnlyUsedBy, key, who, opcode = opcode_name(opcode)),
                    },
                );
            }
            Ok(())
        };
        only(
            "imm",
            opcode.has_imm(),
            "SEND_WITH_IMM and RDMA_WRITE_WITH_IMM",
        )?;
        only(
            "compare",
            opcode == SendOpcode::AtomicCmpAndSwp,
            "ATOMIC_CMP_AND_SWP",
        )?;
        only(
            "swap",
            opcode == SendOpcode::AtomicCmpAndSwp,
            "ATOMIC_CMP_AND_SWP",
        )?;
        only(
            "add",
            opcode == SendOpcode::AtomicFetchAndAdd,
            "ATOMIC_FETCH_AND_ADD",
        )?;
        let imm = self.opt_int(f, "imm")? as u32;
        let compare_add = if opcode == SendOpcode::AtomicFetchAndAdd {
            self.opt_int(f, "add")?
        } else {
            self.opt_int(f, "compare")?
        };
        let swap = self.opt_int(f, "swap")?;
        let ud = match f.get("ud") {
            Some(v) => {
                let uf = self.fields(v, MsgId::CtxUd, &[keys::UD])?;
                self.check_keys(&uf)?;
                let qp = self.req_handle(&uf, "qp")?;
                let (qkey, _) = self.req_int(&uf, "qkey")?;
                let qkey = qkey as u32;
                Some(UdPlan { qp, qkey })
            }
            None => None,
        };
        Ok(SendWrPlan {
            line: self.line(&f.span),
            wr_id,
            opcode,
            flags,
            sges,
            remote,
            imm,
            compare_add,
            swap,
            ud,
        })
    }

    pub(super) fn remote(&self, v: &Val<'_>) -> Result<RemotePlan> {
        let f = self.fields(v, MsgId::CtxRemote, &[keys::REMOTE])?;
        self.check_keys(&f)?;
        let (at, _) = self.mem_ref(&f)?;
        let rkey = match f.get("rkey") {
            Some(k) => match k.get_ref() {
                DeValue::Integer(_) => KeyRef::Raw(self.int_key(k, f.decl("rkey"))? as u32),
                _ => KeyRef::Mr(self.handle_of(k, "rkey", f.decl("rkey").want())?),
            },
            None => match self.handles[at.handle.0].kind {
                HandleKind::Mr => KeyRef::Mr(at.handle),
                _ => {
                    return self.err(f.span.clone(), msg!(RefusalRemoteNeedsRkey));
                }
            },
        };
        Ok(RemotePlan {
            target: at.handle,
            offset: at.offset,
            rkey,
        })
    }

    pub(super) fn post_recv(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp = self.req_handle(f, "qp")?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let mut wrs = Vec::new();
        for wf in self.wr_tables(f, &[keys::RECV_WR])? {
            let wr_id = self.opt_int(&wf, "wr_id")?;
            let sges = match wf.get("sge") {
                Some(v) => self.sge_list(v, host)?,
                None => Vec::new(),
            };
            wrs.push(RecvWrPlan { wr_id, sges });
        }
        Ok(Call::PostRecv { qp, wrs })
    }
}
