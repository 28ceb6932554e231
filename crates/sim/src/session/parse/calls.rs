//! The calls that create objects (`alloc`, `reg_mr`, `create_qp`), `modify_qp`'s attributes
//! and `connect`'s whole bring-up.

use toml::Spanned;
use toml::de::DeValue;
use verbs::types::{Mtu, QpType};
use verbs::{AccessFlags, QpAttr, QpAttrMask, QpCap};

use super::read::{Fields, Want};
use super::vocab::{ATTR_KEYS, Vocab};
use super::{Parser, Result};
use crate::session::msg::{MsgId, msg};
use crate::session::plan::{AttrPlan, Call, Fill, HandleId, HandleKind, QpRef, Recovery, limits};
use crate::world::RcOptions;

impl Parser<'_> {
    pub(super) fn alloc(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let host = self.step_host(f)?;
        let (len, len_span) = self.req_int(f, "len")?;
        self.total_buffers += len;
        if self.total_buffers > limits::MAX_TOTAL_BUFFER_BYTES {
            return self.err(
                len_span,
                msg!(
                    RefusalBuffersTotal,
                    total = self.total_buffers,
                    max = limits::MAX_TOTAL_BUFFER_BYTES
                ),
            );
        }
        let data = self.data_of(f)?;
        let fills: Vec<&str> = ["fill", "pattern"]
            .into_iter()
            .filter(|k| f.has(k))
            .collect();
        if fills.len() + usize::from(data.is_some()) > 1 {
            return self.err(
                f.span.clone(),
                msg!(RefusalFillTwice, what = f.what.clone()),
            );
        }
        let fill = if let Some((bytes, span)) = data {
            if bytes.len() as u64 > len {
                return self.err(span, msg!(RefusalBytesDoNotFit, n = bytes.len(), len));
            }
            Fill::Bytes(bytes)
        } else if let Some(v) = f.get("fill") {
            Fill::Byte(self.int_key(v, f.decl("fill"))? as u8)
        } else if let Some(v) = f.get("pattern") {
            Fill::Pattern(self.int_key(v, f.decl("pattern"))?)
        } else {
            Fill::Zero
        };
        let out = self.define(self.req(f, "as")?, "as", HandleKind::Buffer { len }, host)?;
        Ok(Call::Alloc {
            host,
            out,
            len,
            fill,
        })
    }

    pub(super) fn reg_mr(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let pd_v = self.req(f, "pd")?;
        let pd = self.handle_of(pd_v, "pd", Want::Pd)?;
        let host = self.handles[pd.0].host;
        let buf_v = self.req(f, "buf")?;
        let buf = self.handle_of(buf_v, "buf", Want::Buffer)?;
        self.same_host(buf, host, buf_v, "buf", MsgId::WhyThePd)?;
        self.check_host(f, host)?;
        let HandleKind::Buffer { len: blen } = self.handles[buf.0].kind else {
            unreachable!("handle_of checked the kind")
        };
        let offset = self.opt_int(f, "offset")?;
        let len = self
            .int_if(f, "len")?
            .unwrap_or(blen.saturating_sub(offset));
        let access = match f.get("access") {
            Some(v) => self.access_of(v, "access")?,
            None => AccessFlags::empty(),
        };
        let out = self.define(self.req(f, "as")?, "as", HandleKind::Mr, host)?;
        Ok(Call::RegMr {
            pd,
            buf,
            offset,
            len,
            access,
            out,
        })
    }

    pub(super) fn create_qp(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let pd_v = self.req(f, "pd")?;
        let pd = self.handle_of(pd_v, "pd", Want::Pd)?;
        let host = self.handles[pd.0].host;
        self.check_host(f, host)?;
        let qp_type = match f.get("type") {
            None => QpType::Rc,
            Some(v) => QpType::ALL[self.name_in(v, "type", Vocab::QpType)?],
        };
        let (send_cq, recv_cq) = match (f.get("cq"), f.get("send_cq"), f.get("recv_cq")) {
            (Some(c), None, None) => {
                let cq = self.handle_of(c, "cq", Want::Cq)?;
                self.same_host(cq, host, c, "cq", MsgId::WhyThePd)?;
                (cq, cq)
            }
            (None, Some(s), Some(r)) => {
                let s_id = self.handle_of(s, "send_cq", Want::Cq)?;
                self.same_host(s_id, host, s, "send_cq", MsgId::WhyThePd)?;
                let r_id = self.handle_of(r, "recv_cq", Want::Cq)?;
                self.same_host(r_id, host, r, "recv_cq", MsgId::WhyThePd)?;
                (s_id, r_id)
            }
            _ => {
                return self.err(f.span.clone(), msg!(RefusalNeedsCq, what = f.what.clone()));
            }
        };
        let cap = QpCap {
            max_send_wr: self.opt_int(f, "max_send_wr")? as u32,
            max_recv_wr: self.opt_int(f, "max_recv_wr")? as u32,
            max_send_sge: self.opt_int(f, "max_send_sge")? as u32,
            max_recv_sge: self.opt_int(f, "max_recv_sge")? as u32,
            max_inline_data: self.opt_int(f, "max_inline_data")? as u32,
        };
        let sq_sig_all = self.opt_bool(f, "sq_sig_all")?;
        let as_v = self.req(f, "as")?;
        self.count_qp(host, as_v.span())?;
        let out = self.define(as_v, "as", HandleKind::Qp { qp_type }, host)?;
        Ok(Call::CreateQp {
            pd,
            send_cq,
            recv_cq,
            qp_type,
            cap,
            sq_sig_all,
            out,
        })
    }

    pub(super) fn modify_qp(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let qp = self.req_handle(f, "qp")?;
        let host = self.handles[qp.0].host;
        self.check_host(f, host)?;
        let mask_v = self.req(f, "mask")?;
        let mask = self.mask_of(mask_v, "mask")?;
        let mut attr = QpAttr::default();
        let mut dest_qp = None;
        let mut av = None;
        let mut ignored = Vec::new();
        let mut given = Vec::new();
        for &(key, bit) in ATTR_KEYS {
            let Some(v) = f.get(key) else { continue };
            given.push(key);
            if !mask.contains(bit) {
                ignored.push(key);
            }
            match key {
                "state" => attr.qp_state = self.state_of(v, key)?,
                "cur_state" => attr.cur_qp_state = self.state_of(v, key)?,
                "en_sqd_async_notify" => attr.en_sqd_async_notify = self.bool_of(v, key)?,
                "access" => attr.qp_access_flags = self.access_of(v, key)?,
                "pkey_index" => attr.pkey_index = self.int_key(v, f.decl(key))? as u16,
                "port" => attr.port_num = self.int_key(v, f.decl(key))? as u8,
                "qkey" => attr.qkey = self.int_key(v, f.decl(key))? as u32,
                "av" => av = Some(self.host_of(v, key)?),
                "path_mtu" => {
                    let n = self.int_key(v, f.decl(key))? as u32;
                    match Mtu::ALL.into_iter().find(|m| m.bytes() == n) {
                        Some(m) => attr.path_mtu = m,
                        None => {
                            return self.err(v.span(), msg!(RefusalPathMtu));
                        }
                    }
                }
                "timeout" => attr.timeout = self.int_key(v, f.decl(key))? as u8,
                "retry_cnt" => attr.retry_cnt = self.int_key(v, f.decl(key))? as u8,
                "rnr_retry" => attr.rnr_retry = self.int_key(v, f.decl(key))? as u8,
                "rq_psn" => attr.rq_psn = self.int_key(v, f.decl(key))? as u32,
                "max_rd_atomic" => attr.max_rd_atomic = self.int_key(v, f.decl(key))? as u8,
                "min_rnr_timer" => attr.min_rnr_timer = self.int_key(v, f.decl(key))? as u8,
                "sq_psn" => attr.sq_psn = self.int_key(v, f.decl(key))? as u32,
                "max_dest_rd_atomic" => {
                    attr.max_dest_rd_atomic = self.int_key(v, f.decl(key))? as u8;
                }
                "path_mig_state" => attr.path_mig_state = self.int_key(v, f.decl(key))? as u8,
                "dest_qp" => {
                    dest_qp = Some(match v.get_ref() {
                        DeValue::Integer(_) => QpRef::Number(self.int_key(v, f.decl(key))? as u32),
                        _ => QpRef::Handle(self.handle_of(v, key, f.decl(key).want())?),
                    });
                }
                _ => unreachable!("ATTR_KEYS lists the keys handled here"),
            }
        }
        if mask.contains(QpAttrMask::STATE) && !f.has("state") {
            return self.err(
                mask_v.span(),
                msg!(RefusalMaskStateNoState, what = f.what.clone()),
            );
        }
        Ok(Call::ModifyQp {
            qp,
            attr: AttrPlan {
                attr,
                dest_qp,
                av,
                given,
                ignored,
            },
            mask,
        })
    }

    pub(super) fn connect(&mut self, f: &Fields<'_, '_>) -> Result<Call> {
        let hv = self.req(f, "hosts")?;
        let items = self.array_of(hv, "hosts")?;
        if items.len() != 2 {
            return self.err(hv.span(), msg!(RefusalConnectTwoHosts));
        }
        let a = self.host_of(&items[0], "hosts")?;
        let b = self.host_of(&items[1], "hosts")?;
        if a == b {
            return self.err(hv.span(), msg!(RefusalConnectSameHost));
        }
        let d = RcOptions::default();
        let mtu = match f.get("mtu") {
            None => d.mtu,
            Some(v) => {
                let n = self.int_key(v, f.decl("mtu"))? as u32;
                match Mtu::ALL.into_iter().find(|m| m.bytes() == n) {
                    Some(m) => m,
                    None => {
                        return self.err(v.span(), msg!(RefusalMtu));
                    }
                }
            }
        };
        let options = RcOptions {
            mtu,
            timeout: self.opt_int(f, "timeout")? as u8,
            retry_cnt: self.opt_int(f, "retry_cnt")? as u8,
            rnr_retry: self.opt_int(f, "rnr_retry")? as u8,
            min_rnr_timer: self.opt_int(f, "min_rnr_timer")? as u8,
            rd_atomic: self.opt_int(f, "rd_atomic")? as u8,
            access: match f.get("access") {
                Some(v) => self.access_of(v, "access")?,
                None => d.access,
            },
            cap: QpCap {
                max_send_wr: self.opt_int(f, "max_send_wr")? as u32,
                max_recv_wr: self.opt_int(f, "max_recv_wr")? as u32,
                max_send_sge: self.opt_int(f, "max_send_sge")? as u32,
                max_recv_sge: self.opt_int(f, "max_recv_sge")? as u32,
                max_inline_data: self.opt_int(f, "max_inline_data")? as u32,
            },
            cqe: self.opt_int(f, "cqe")? as u32,
        };
        let names = |key: &str, kind: HandleKind, p: &mut Self| -> Result<[HandleId; 2]> {
            let v = p.req(f, key)?;
            let items = p.array_of(v, key)?;
            if items.len() != 2 {
                return p.err(v.span(), msg!(RefusalConnectTwoNames, key));
            }
            if matches!(kind, HandleKind::Qp { .. }) {
                p.count_qp(a, items[0].span())?;
                p.count_qp(b, items[1].span())?;
            }
            Ok([
                p.define(&items[0], key, kind, a)?,
                p.define(&items[1], key, kind, b)?,
            ])
        };
        // `channel = { b = "ch_b" }`: the CQ connect creates on that host reports to that
        // completion channel.
        let mut channels = [None, None];
        if let Some(v) = f.get("channel") {
            let t = self.fields(v, MsgId::CtxConnectChannel, &[])?;
            let mut entries: Vec<_> = t.table.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            for (k, val) in entries {
                let key_val = Spanned::new(k.span(), DeValue::String(k.get_ref().clone()));
                let h = self.host_of(&key_val, "channel")?;
                let Some(i) = [a, b].iter().position(|&x| x == h) else {
                    return self.err(k.span(), msg!(RefusalChannelHost, host = &self.hosts[h.0]));
                };
                let ch = self.handle_of(val, "channel", Want::Channel)?;
                self.same_host(ch, h, val, "channel", MsgId::WhyTheCq)?;
                channels[i] = Some(ch);
            }
        }
        let recovery = self.recovery(f)?;
        let pd = names("pd", HandleKind::Pd, self)?;
        let cq = names("cq", HandleKind::Cq, self)?;
        let qp = names(
            "qp",
            HandleKind::Qp {
                qp_type: QpType::Rc,
            },
            self,
        )?;
        Ok(Call::Connect {
            hosts: [a, b],
            pd,
            cq,
            qp,
            channels,
            options,
            recovery,
        })
    }

    /// connect's `retransmission` and `window`. The default window, 64 PSNs, is the reach of
    /// the SACK NAK's bitmap: every packet the responder can hold past a gap is one the NAK
    /// can report.
    pub(super) fn recovery(&self, f: &Fields<'_, '_>) -> Result<Recovery> {
        let selective = match f.get("retransmission") {
            None => false,
            // `Vocab::Retransmission`'s names: `go_back_n`, `selective`.
            Some(v) => self.name_in(v, "retransmission", Vocab::Retransmission)? == 1,
        };
        match f.get("window") {
            Some(v) if !selective => self.err(v.span(), msg!(RefusalWindowNeedsSelective)),
            _ if selective => Ok(Recovery::Selective {
                window: self.opt_int(f, "window")? as u32,
            }),
            _ => Ok(Recovery::GoBackN),
        }
    }
}
