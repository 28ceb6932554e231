//! A step's expectations against what its call did: return codes, completions, QP states,
//! events and memory, each a [`Check`] with the expected and the actual value.

use super::describe::{mem_name, show_bytes, step_host};
use super::{Bound, Done, Exec};
use crate::session::msg::{Msg, msg};
use crate::session::parse::{status_name, wc_opcode_name};
use crate::session::plan::{Call, Expect, Ret, Step};
use crate::session::report::Check;
use verbs::{NicProfile, QpNum};

impl Exec<'_> {
    /// Checks the step's expectations against what the call did and the world's state now.
    pub(super) fn check(&mut self, step: &Step, done: &Done) -> Vec<Check> {
        let p = self.profile;
        let e = &step.expect;
        let mut out = Vec::new();
        let got_ret = || -> Shown {
            done.ret
                .map_or(msg!(CheckDidNotComplete).into(), |r| r.name().into())
        };
        let is_call = !matches!(step.call, Call::Run { .. });
        match &e.ret {
            Some(want) => {
                if let Some(want) = want.get(p) {
                    out.push(check("ret", want.name(), got_ret(), false));
                }
            }
            None if is_call => out.push(check("ret", "ok", got_ret(), true)),
            None => {}
        }
        if let Some(want) = e.bad_wr.as_ref().and_then(|w| w.get(p)) {
            let show = |b: &Option<usize>| -> Shown {
                b.map_or(msg!(CheckNone).into(), |i| i.to_string().into())
            };
            let got = if done.ret == Some(Ret::Ok) {
                msg!(CheckPostSucceeded).into()
            } else {
                show(&done.bad_wr)
            };
            let passed = done.ret != Some(Ret::Ok) && done.bad_wr == *want;
            out.push(Check {
                passed,
                ..check("bad_wr", show(want), got, false)
            });
        }
        let wcs = done.wcs.as_deref().unwrap_or(&[]);
        let count_want = e
            .completions
            .as_ref()
            .and_then(|c| c.get(p).copied())
            .or_else(|| e.wc.as_ref().map(Vec::len));
        if let Some(n) = count_want {
            out.push(check(
                "completions",
                n.to_string(),
                wcs.len().to_string(),
                false,
            ));
        }
        if let Some(list) = &e.wc {
            let h = match &step.call {
                Call::PollCq { cq, .. } => self.host_of(*cq),
                _ => 0,
            };
            for (i, w) in list.iter().enumerate() {
                let got = wcs.get(i);
                let mut field = |name: &str, want: Option<Shown>, got_v: Option<Shown>| {
                    if let Some(want) = want {
                        let got_v = got_v.unwrap_or_else(|| msg!(CheckNoCompletion).into());
                        out.push(check(format!("wc[{i}].{name}"), want, got_v, false));
                    }
                };
                field(
                    "wr_id",
                    w.wr_id
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|v| v.to_string().into()),
                    got.map(|g| g.wr_id.to_string().into()),
                );
                field(
                    "status",
                    w.status
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|s| status_name(*s).into()),
                    got.map(|g| status_name(g.status).into()),
                );
                field(
                    "opcode",
                    w.opcode
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|o| wc_opcode_name(*o).into()),
                    got.map(|g| {
                        g.opcode.map_or(msg!(CheckOpcodeInError).into(), |o| {
                            wc_opcode_name(o).into()
                        })
                    }),
                );
                field(
                    "byte_len",
                    w.byte_len
                        .as_ref()
                        .and_then(|v| v.get(p))
                        .map(|v| v.to_string().into()),
                    got.map(|g| g.byte_len.to_string().into()),
                );
                let imm =
                    |v: Option<u32>| v.map_or(msg!(CheckNone).into(), |x| format!("{x:#x}").into());
                field(
                    "imm_data",
                    w.imm_data.as_ref().and_then(|v| v.get(p)).map(|v| imm(*v)),
                    got.map(|g| imm(g.imm_data)),
                );
                let want_qp = w.qp.map(|q| self.s.name(q).into());
                let got_qp = got.map(|g| self.qp_name(h, g.qp_num).into());
                field("qp", want_qp, got_qp);
                let qpn_of = |n: Option<QpNum>| -> Shown {
                    n.map_or(msg!(CheckNone).into(), |n| {
                        format!("QPN {:#x}", n.get()).into()
                    })
                };
                if let Some(q) = w.src_qp {
                    // The expected QP may never have been created (its step failed).
                    let n = match self.bound[q.0] {
                        Some(Bound::Qp(n)) => Some(n),
                        _ => None,
                    };
                    let want: Shown = match n {
                        Some(n) => format!("{} (QPN {:#x})", self.s.name(q), n.get()).into(),
                        None => msg!(CheckNeverCreated, name = self.s.name(q)).into(),
                    };
                    let got_src = got.map(|g| {
                        if n.is_some() && g.src_qp == n {
                            want.clone()
                        } else {
                            qpn_of(g.src_qp)
                        }
                    });
                    field("src_qp", Some(want), got_src);
                }
                field(
                    "grh",
                    w.grh.map(|b| b.to_string().into()),
                    got.map(|g| g.wc_flags.contains(verbs::WcFlags::GRH).to_string().into()),
                );
            }
        }
        if let Some(ev) = e.event.as_ref()
            && let Some(kind) = &ev.kind
            && let Some(want) = kind.get(p)
        {
            let h = step_host(self.s, &step.call).map_or(0, |x| x.0 as u32);
            let got = done.async_event;
            let no_event = || -> Shown { msg!(CheckNoEvent).into() };
            out.push(check(
                "event.type",
                *want,
                got.map_or_else(no_event, |g| g.name().into()),
                false,
            ));
            if let Some(q) = ev.qp {
                let got = got.map_or_else(no_event, |g| self.async_element(h, g).into());
                out.push(check("event.qp", self.s.name(q), got, false));
            }
            if let Some(c) = ev.cq {
                let got = got.map_or_else(no_event, |g| self.async_element(h, g).into());
                out.push(check("event.cq", self.s.name(c), got, false));
            }
        } else if let Some(want) = e.event.as_ref().and_then(|ev| ev.cq) {
            let h = self.host_of(want);
            let got: Shown = done
                .event_cq
                .map_or(msg!(CheckNoEvent).into(), |c| self.cq_name(h, c).into());
            out.push(check("event.cq", self.s.name(want), got, false));
        }
        if let Some(want) = e.sq_draining.as_ref().and_then(|w| w.get(p)) {
            let got: Shown = done
                .sq_draining
                .map_or(msg!(CheckQueryFailed).into(), |d| d.to_string().into());
            out.push(check("sq_draining", want.to_string(), got, false));
        }
        for (qp, want) in &e.qp_states {
            let Some(want) = want.get(p) else { continue };
            let what = format!("state({})", self.s.name(*qp));
            let got: Shown = match self.bound[qp.0] {
                Some(_) if self.destroyed[qp.0].is_some() => msg!(CheckQpDestroyed).into(),
                Some(Bound::Qp(qpn)) => {
                    let h = self.host_of(*qp);
                    match self.world.verbs(h).qp_state(qpn) {
                        Ok(s) => s.name().into(),
                        Err(e) => msg!(CheckUnreadable, detail = e.to_string()).into(),
                    }
                }
                _ => msg!(CheckQpNotCreated).into(),
            };
            out.push(check(what, want.name(), got, false));
        }
        for m in &e.memory {
            let Some(bytes) = m.bytes.get(p) else {
                continue;
            };
            let what = format!("memory({})", mem_name(self.s, m.at));
            let expected = show_bytes(bytes, m.shown_as);
            let got: Shown = if self.bound[m.at.handle.0].is_none() {
                msg!(CheckBufferNotCreated).into()
            } else {
                let h = self.host_of(m.at.handle);
                let va = self.addr(m.at);
                match self
                    .world
                    .verbs(h)
                    .memory()
                    .read_vec(va, bytes.len() as u64)
                {
                    Ok(b) => show_bytes(&b, m.shown_as).into(),
                    Err(e) => msg!(CheckUnreadable, detail = e.to_string()).into(),
                }
            };
            out.push(check(what, expected, got, false));
        }
        out
    }
}

/// A value an expectation names: an identifier, a number or bytes shown as they are
/// (`IBV_WC_SUCCESS`, `0x1`), or words, which carry a message id so a page translates them.
#[derive(Clone)]
pub(super) enum Shown {
    /// Shown as it is, in every language.
    As(String),
    /// Words: the English is the message's text.
    Said(Msg),
}

impl From<&str> for Shown {
    fn from(s: &str) -> Shown {
        Shown::As(s.to_string())
    }
}

impl From<String> for Shown {
    fn from(s: String) -> Shown {
        Shown::As(s)
    }
}

impl From<&String> for Shown {
    fn from(s: &String) -> Shown {
        Shown::As(s.clone())
    }
}

impl From<Msg> for Shown {
    fn from(m: Msg) -> Shown {
        Shown::Said(m)
    }
}

impl Shown {
    pub(super) fn split(self) -> (String, Option<Msg>) {
        match self {
            Shown::As(s) => (s, None),
            Shown::Said(m) => (m.text(), Some(m)),
        }
    }
}

/// An expectation's verdict: passed when the two values read the same.
pub(super) fn check(
    what: impl Into<Shown>,
    expected: impl Into<Shown>,
    got: impl Into<Shown>,
    implicit: bool,
) -> Check {
    let (what, what_msg) = what.into().split();
    let (expected, expected_msg) = expected.into().split();
    let (got, got_msg) = got.into().split();
    Check {
        passed: expected == got,
        what,
        expected,
        got,
        implicit,
        what_msg,
        expected_msg,
        got_msg,
    }
}

/// The verdict of a step that did not run: every step is expected to run.
pub(super) fn skipped_check(why: Msg) -> Check {
    Check {
        passed: false,
        ..check(
            msg!(CheckStepRan),
            msg!(CheckRan),
            msg!(CheckSkipped, why),
            true,
        )
    }
}

/// How many completions a `poll_cq` with `wait` waits for: what the expectations name, else 1.
pub(super) fn wanted_completions(e: &Expect, p: NicProfile) -> usize {
    e.completions
        .as_ref()
        .and_then(|c| c.get(p).copied())
        .or_else(|| e.wc.as_ref().map(Vec::len))
        .unwrap_or(1)
        .max(1)
}
