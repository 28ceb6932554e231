//! The generic readers of the session parser: tables with their declared keys, strings,
//! integers in the ranges [`keys`] declares, booleans, arrays, durations, names, hosts and
//! handles. The TOML side of each comes from the shared toolkit, [`scenario::spanned`]; what
//! is particular to sessions is the wording (message ids) and the handles.

use std::ops::Range;

use scenario::spanned::{self, Fault, TomlType};
use toml::de::{DeTable, DeValue};
use units::SimDuration;
use verbs::NicProfile;

use super::keys::{self, Key, Need};
use super::vocab::parse_duration;
use super::{Parser, Result};
use crate::session::msg::{Arg, Msg, MsgId, list, msg};
use crate::session::plan::{HandleId, HandleInfo, HandleKind, HostId, PerProfile, limits};

pub(crate) use scenario::spanned::Val;

/// Names as a list argument (the English joins them with ", ").
pub(crate) fn join<T: AsRef<str>>(items: impl IntoIterator<Item = T>) -> Arg {
    list(items.into_iter().map(|s| s.as_ref().to_string()))
}

/// A TOML value's type, as a message argument ("found a string").
pub(crate) fn found(v: &DeValue<'_>) -> MsgId {
    type_msg(TomlType::of(v))
}

/// A TOML type as a message argument.
fn type_msg(t: TomlType) -> MsgId {
    match t {
        TomlType::String => MsgId::TypeString,
        TomlType::Integer => MsgId::TypeInteger,
        TomlType::Float => MsgId::TypeFloat,
        TomlType::Boolean => MsgId::TypeBoolean,
        TomlType::Datetime => MsgId::TypeDatetime,
        TomlType::Array => MsgId::TypeArray,
        TomlType::Table => MsgId::TypeTable,
    }
}

/// A handle's kind with its article ("a QP"), as a message argument.
fn kind_msg(k: HandleKind) -> MsgId {
    match k {
        HandleKind::Buffer { .. } => MsgId::KindBuffer,
        HandleKind::Channel => MsgId::KindChannel,
        HandleKind::Cq => MsgId::KindCq,
        HandleKind::Mr => MsgId::KindMr,
        HandleKind::Pd => MsgId::KindPd,
        HandleKind::Qp { .. } => MsgId::KindQp,
    }
}

/// Which kinds of handle a key accepts.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Want {
    Buffer,
    Channel,
    Cq,
    Mr,
    Pd,
    Qp,
}

impl Want {
    pub(crate) fn accepts(self, k: HandleKind) -> bool {
        matches!(
            (self, k),
            (Want::Buffer, HandleKind::Buffer { .. })
                | (Want::Cq, HandleKind::Cq)
                | (Want::Mr, HandleKind::Mr)
                | (Want::Pd, HandleKind::Pd)
                | (Want::Channel, HandleKind::Channel)
                | (Want::Qp, HandleKind::Qp { .. })
        )
    }
    pub(crate) fn describe(self) -> MsgId {
        match self {
            Want::Buffer => MsgId::WantBuffer,
            Want::Cq => MsgId::KindCq,
            Want::Mr => MsgId::KindMr,
            Want::Pd => MsgId::KindPd,
            Want::Channel => MsgId::WantChannel,
            Want::Qp => MsgId::KindQp,
        }
    }
}

/// A table of the document with the text that names it in messages and the declarations of
/// the keys it may hold.
pub(crate) struct Fields<'a, 'i> {
    pub(crate) table: &'a DeTable<'i>,
    pub(crate) span: Range<usize>,
    pub(crate) what: Msg,
    pub(crate) keys: &'static [&'static [Key]],
}

impl<'a, 'i> Fields<'a, 'i> {
    pub(crate) fn get(&self, key: &str) -> Option<&'a Val<'i>> {
        self.table.get(key)
    }
    pub(crate) fn has(&self, key: &str) -> bool {
        self.table.get(key).is_some()
    }
    /// The span of `key` itself (not its value).
    pub(crate) fn key_span(&self, key: &str) -> Range<usize> {
        self.table
            .get_key_value(key)
            .map_or(self.span.clone(), |(k, _)| k.span())
    }
    /// The declaration of `key`, which the parser reads only where the table declares it.
    pub(crate) fn decl(&self, key: &str) -> &'static Key {
        keys::find(self.keys, key).unwrap_or_else(|| panic!("`{key}` is not declared here"))
    }
}

impl Parser<'_> {
    // ---- generic value readers ----

    pub(crate) fn fields<'a, 'i>(
        &self,
        v: &'a Val<'i>,
        what: impl Into<Msg>,
        keys: &'static [&'static [Key]],
    ) -> Result<Fields<'a, 'i>> {
        let what = what.into();
        match spanned::table(v.get_ref()) {
            Ok(t) => Ok(Fields {
                table: t,
                span: v.span(),
                what,
                keys,
            }),
            Err(t) => self.err(v.span(), msg!(RefusalNotTable, what, found = type_msg(t))),
        }
    }

    /// Refuses keys the table does not declare, pointing at the first one in the file.
    pub(crate) fn check_keys(&self, f: &Fields<'_, '_>) -> Result<()> {
        let declared = || f.keys.iter().flat_map(|t| t.iter()).map(|k| k.name);
        let Some((span, key)) = spanned::first_unknown(f.table, |k| declared().any(|d| d == k))
        else {
            return Ok(());
        };
        let mut sorted: Vec<&str> = declared().collect();
        sorted.sort_unstable();
        self.err(
            span,
            msg!(
                RefusalUnknownKey,
                key,
                what = f.what.clone(),
                allowed = join(sorted)
            ),
        )
    }

    pub(crate) fn req<'a, 'i>(&self, f: &Fields<'a, 'i>, key: &str) -> Result<&'a Val<'i>> {
        match f.get(key) {
            Some(v) => Ok(v),
            None => self.err(
                f.span.clone(),
                msg!(RefusalNeedsKey, what = f.what.clone(), key),
            ),
        }
    }

    pub(crate) fn str_of<'a>(&self, v: &'a Val<'_>, key: &str) -> Result<&'a str> {
        spanned::string(v.get_ref())
            .or_else(|t| self.err(v.span(), msg!(RefusalWantString, key, found = type_msg(t))))
    }

    /// An integer in `lo..=hi`; the refusal names `key` and the range.
    pub(crate) fn int_of(&self, v: &Val<'_>, key: &str, lo: i128, hi: i128) -> Result<i128> {
        spanned::int_in(v.get_ref(), lo, hi).or_else(|f| match f {
            Fault::WrongType(t) => {
                self.err(v.span(), msg!(RefusalWantInteger, key, found = type_msg(t)))
            }
            Fault::OutOfRange => self.err(v.span(), msg!(RefusalOutOfRange, key, lo, hi)),
        })
    }

    /// An integer key's value, in the range its declaration gives.
    pub(crate) fn int_key(&self, v: &Val<'_>, key: &Key) -> Result<u64> {
        let Some((lo, hi)) = key.range() else {
            panic!("`{}` is not declared as an integer", key.name)
        };
        Ok(self.int_of(v, key.name, lo.into(), hi.into())? as u64)
    }

    /// An integer key of `f`, or its declared default when absent.
    pub(crate) fn opt_int(&self, f: &Fields<'_, '_>, key: &str) -> Result<u64> {
        let d = f.decl(key);
        match (f.get(key), d.need) {
            (Some(v), _) => self.int_key(v, d),
            (None, Need::Int(default)) => Ok(default),
            (None, need) => panic!("`{key}` has no default ({need:?})"),
        }
    }

    /// An integer key of `f` that has no default: `None` when absent.
    pub(crate) fn int_if(&self, f: &Fields<'_, '_>, key: &str) -> Result<Option<u64>> {
        f.get(key).map(|v| self.int_key(v, f.decl(key))).transpose()
    }

    /// A required integer key of `f`, with its value's span.
    pub(crate) fn req_int(&self, f: &Fields<'_, '_>, key: &str) -> Result<(u64, Range<usize>)> {
        let v = self.req(f, key)?;
        Ok((self.int_key(v, f.decl(key))?, v.span()))
    }

    pub(crate) fn bool_of(&self, v: &Val<'_>, key: &str) -> Result<bool> {
        spanned::boolean(v.get_ref())
            .or_else(|t| self.err(v.span(), msg!(RefusalWantBool, key, found = type_msg(t))))
    }

    /// A boolean key of `f`, or its declared default when absent.
    pub(crate) fn opt_bool(&self, f: &Fields<'_, '_>, key: &str) -> Result<bool> {
        match (f.get(key), f.decl(key).need) {
            (Some(v), _) => self.bool_of(v, key),
            (None, Need::Bool(default)) => Ok(default),
            (None, need) => panic!("`{key}` has no default ({need:?})"),
        }
    }

    pub(crate) fn array_of<'a, 'i>(&self, v: &'a Val<'i>, key: &str) -> Result<&'a [Val<'i>]> {
        spanned::array(v.get_ref())
            .or_else(|t| self.err(v.span(), msg!(RefusalWantArray, key, found = type_msg(t))))
    }

    /// A string, or an array of strings, each with its span (the names of a flags key).
    pub(crate) fn names_of<'a>(
        &self,
        v: &'a Val<'_>,
        key: &str,
    ) -> Result<Vec<(&'a str, Range<usize>)>> {
        match v.get_ref() {
            DeValue::String(s) => Ok(vec![(s.as_ref(), v.span())]),
            DeValue::Array(a) => a
                .iter()
                .map(|e| Ok((self.str_of(e, key)?, e.span())))
                .collect(),
            other => self.err(v.span(), msg!(RefusalWantNames, key, found = found(other))),
        }
    }

    pub(crate) fn duration_of(&self, v: &Val<'_>, key: &str) -> Result<SimDuration> {
        let s = self
            .str_of(v, key)
            .map_err(|_| self.error(v.span(), msg!(RefusalWantDuration, key)))?;
        let d = parse_duration(s).map_err(|why| {
            self.error(
                v.span(),
                msg!(
                    RefusalBadDuration,
                    value = s,
                    key,
                    why = match why {
                        "no unit" => MsgId::WhyDurNoUnit,
                        "unknown unit" => MsgId::WhyDurUnknownUnit,
                        "too large" => MsgId::WhyDurTooLarge,
                        "finer than 1 ps" => MsgId::WhyDurFiner,
                        _ => MsgId::WhyDurNotNumber,
                    }
                ),
            )
        })?;
        if d == SimDuration::ZERO {
            return self.err(v.span(), msg!(RefusalMoreThanZero, key));
        }
        if d > limits::MAX_STEP_TIME {
            return self.err(
                v.span(),
                msg!(
                    RefusalStepTooLong,
                    key,
                    value = s,
                    max = limits::MAX_STEP_TIME.to_string()
                ),
            );
        }
        Ok(d)
    }

    pub(crate) fn add_time(&mut self, d: SimDuration, span: Range<usize>) -> Result<()> {
        let total = self.total_time.checked_add(d).unwrap_or(SimDuration::MAX);
        if total > limits::MAX_SESSION_TIME {
            return self.err(
                span,
                msg!(
                    RefusalSessionTooLong,
                    total = total.to_string(),
                    max = limits::MAX_SESSION_TIME.to_string()
                ),
            );
        }
        self.total_time = total;
        Ok(())
    }

    pub(crate) fn name_of(&self, v: &Val<'_>, key: &str) -> Result<String> {
        let s = self.str_of(v, key)?;
        let ok_first = s
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let ok_rest = s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok_first || !ok_rest || s.len() > limits::MAX_NAME_LEN {
            return self.err(
                v.span(),
                msg!(RefusalBadName, key, value = s, max = limits::MAX_NAME_LEN),
            );
        }
        Ok(s.to_string())
    }

    pub(crate) fn host_of(&self, v: &Val<'_>, key: &str) -> Result<HostId> {
        let s = self.str_of(v, key)?;
        match self.hosts.iter().position(|h| h == s) {
            Some(i) => Ok(HostId(i)),
            None => self.err(
                v.span(),
                msg!(RefusalUnknownHost, name = s, key, hosts = join(&self.hosts)),
            ),
        }
    }

    /// A handle defined by an earlier step, of a kind `want` accepts.
    pub(crate) fn handle_of(&self, v: &Val<'_>, key: &str, want: Want) -> Result<HandleId> {
        let s = self.str_of(v, key)?;
        let Some(&id) = self.by_name.get(s) else {
            let known: Vec<&str> = self
                .handles
                .iter()
                .filter(|h| want.accepts(h.kind))
                .map(|h| h.name.as_str())
                .collect();
            let known = if known.is_empty() {
                msg!(CtxNoneDefined)
            } else {
                msg!(CtxDefinedSoFar, names = join(known))
            };
            return self.err(
                v.span(),
                msg!(
                    RefusalUnknownHandle,
                    name = s,
                    key,
                    want = want.describe(),
                    known
                ),
            );
        };
        let h = &self.handles[id.0];
        if !want.accepts(h.kind) {
            return self.err(
                v.span(),
                msg!(
                    RefusalWrongKind,
                    key,
                    want = want.describe(),
                    name = s,
                    kind = kind_msg(h.kind),
                    line = h.line
                ),
            );
        }
        Ok(id)
    }

    pub(crate) fn same_host(
        &self,
        id: HandleId,
        host: HostId,
        v: &Val<'_>,
        key: &str,
        why: MsgId,
    ) -> Result<()> {
        let h = &self.handles[id.0];
        if h.host != host {
            return self.err(
                v.span(),
                msg!(
                    RefusalOtherHost,
                    key,
                    name = &h.name,
                    host = &self.hosts[h.host.0],
                    other = why,
                    other_host = &self.hosts[host.0]
                ),
            );
        }
        Ok(())
    }

    /// The handle the step acts on: `key` names it (required), and an optional `host`
    /// must agree with its host.
    pub(crate) fn step_handle(&self, f: &Fields<'_, '_>, key: &str) -> Result<HandleId> {
        let id = self.req_handle(f, key)?;
        self.check_host(f, self.handles[id.0].host)?;
        Ok(id)
    }

    /// A required handle key of `f`, of the kind its declaration wants.
    pub(crate) fn req_handle(&self, f: &Fields<'_, '_>, key: &str) -> Result<HandleId> {
        self.handle_of(self.req(f, key)?, key, f.decl(key).want())
    }

    /// Reserves a new handle name (the step's output).
    pub(crate) fn define(
        &mut self,
        v: &Val<'_>,
        key: &str,
        kind: HandleKind,
        host: HostId,
    ) -> Result<HandleId> {
        let name = self.name_of(v, key)?;
        if let Some(&old) = self.by_name.get(&name) {
            return self.err(
                v.span(),
                msg!(
                    RefusalHandleTwice,
                    name = &name,
                    line = self.handles[old.0].line
                ),
            );
        }
        if self.hosts.contains(&name) {
            return self.err(v.span(), msg!(RefusalHandleIsHost, name = &name));
        }
        let id = HandleId(self.handles.len());
        self.handles.push(HandleInfo {
            name: name.clone(),
            kind,
            host,
            line: self.line(&v.span()),
        });
        self.by_name.insert(name, id);
        Ok(id)
    }

    /// `host = "..."`, required.
    pub(crate) fn step_host(&self, f: &Fields<'_, '_>) -> Result<HostId> {
        self.host_of(self.req(f, "host")?, "host")
    }

    /// An optional `host` that must agree with the host the step's handles imply.
    pub(crate) fn check_host(&self, f: &Fields<'_, '_>, implied: HostId) -> Result<()> {
        if let Some(v) = f.get("host") {
            let h = self.host_of(v, "host")?;
            if h != implied {
                return self.err(
                    v.span(),
                    msg!(
                        RefusalHostDisagrees,
                        host = &self.hosts[h.0],
                        implied = &self.hosts[implied.0]
                    ),
                );
            }
        }
        Ok(())
    }

    /// A value that may differ per NIC profile: `X` or `{ mlx5 = X, rxe = Y, ibta = Z }`.
    pub(crate) fn per_profile<T: Clone>(
        &self,
        v: &Val<'_>,
        key: &str,
        leaf: impl Fn(&Self, &Val<'_>) -> Result<T>,
    ) -> Result<PerProfile<T>> {
        let DeValue::Table(t) = v.get_ref() else {
            return Ok(PerProfile::all(leaf(self, v)?));
        };
        let mut out = PerProfile::none();
        if t.is_empty() {
            return self.err(v.span(), msg!(RefusalEmptyPerProfile, key));
        }
        for (k, val) in t.iter() {
            let Some(p) = NicProfile::ALL
                .into_iter()
                .find(|p| p.name() == k.get_ref().as_ref())
            else {
                return self.err(
                    k.span(),
                    msg!(RefusalNotProfile, key, name = k.get_ref().to_string()),
                );
            };
            out.set(p, leaf(self, val)?);
        }
        Ok(out)
    }
}
