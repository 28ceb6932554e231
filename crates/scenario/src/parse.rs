//! Scenario text → [`Plan`], and `--set key.path=value` overrides.
//!
//! The document is read with `toml`'s spanned tree ([`DeTable`]) through the toolkit of
//! [`crate::spanned`], which the verbs-session parser shares, so every error points at the key
//! or value at fault.

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::plan::{self, Kind, Plan, Value, allowed_keys, apply, spec};
use crate::rule::Why;
use crate::spanned::{self, Fault, line_col};

/// The largest scenario file accepted, bytes.
pub const MAX_FILE_BYTES: usize = 64 << 10;

/// What is wrong with a scenario.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ErrorKind {
    /// Not TOML at all.
    Syntax,
    /// A key the schema does not have; `allowed` lists the keys of its table.
    UnknownKey,
    /// A value of the wrong TOML type.
    WrongType,
    /// A number outside its range.
    OutOfRange,
    /// A string that is not one of the key's names.
    BadEnum,
    /// Values that each pass but not together.
    Conflict,
    /// A non-default value for a key that cannot change this run (it needs a switch, a
    /// feature turned on, ...); `allowed` says why.
    Inapplicable,
}

/// Where the text at fault came from.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Origin {
    /// The scenario file.
    File,
    /// A `--set` assignment (the text given).
    Set(String),
}

/// A scenario error: where, which key, which value, and what is allowed.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ScenarioError {
    /// The file, or a `--set` assignment.
    pub origin: Origin,
    /// 1-based line (always 1 for `--set`; a file has at most [`MAX_FILE_BYTES`] lines).
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What kind of error.
    pub kind: ErrorKind,
    /// The dotted key path (e.g. `rdma.mtu_bytes`); empty for syntax errors.
    pub key: String,
    /// The rejected value as written; empty for unknown keys and syntax errors.
    pub value: String,
    /// What is allowed: a range, a list of names or the allowed keys of the table.
    pub allowed: String,
    /// For a conflict or an inapplicable key, `allowed` as a rule id and its arguments (a
    /// reader in another language writes it from its own table); `None` otherwise.
    pub why: Option<Box<Why>>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Origin::Set(s) = &self.origin {
            write!(f, "--set {s}: ")?;
        }
        write!(f, "{}:{}: ", self.line, self.column)?;
        let (k, v, a) = (&self.key, &self.value, &self.allowed);
        match self.kind {
            ErrorKind::Syntax => write!(f, "invalid TOML: {a}"),
            ErrorKind::UnknownKey => write!(f, "unknown key `{k}`: allowed keys are {a}"),
            ErrorKind::WrongType => write!(f, "{k} = {v} has the wrong type: allowed {a}"),
            ErrorKind::OutOfRange => write!(f, "{k} = {v} is out of range: allowed {a}"),
            ErrorKind::BadEnum => write!(f, "{k} = {v} is not a known value: allowed {a}"),
            ErrorKind::Conflict => write!(f, "{k} = {v} clashes with another key: allowed {a}"),
            ErrorKind::Inapplicable => write!(f, "{k} = {v} cannot apply: {a}"),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Builds errors that point into one text.
struct Ctx<'s> {
    src: &'s str,
    origin: Origin,
}

impl Ctx<'_> {
    fn err(
        &self,
        span: Range<usize>,
        kind: ErrorKind,
        key: &str,
        value: String,
        allowed: String,
    ) -> ScenarioError {
        let (line, column) = line_col(self.src, span.start);
        let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        ScenarioError {
            origin: self.origin.clone(),
            line: n(line),
            column: n(column),
            kind,
            key: key.to_string(),
            value,
            allowed,
            why: None,
        }
    }

    /// The error for a [`plan::Conflict`] at `span`.
    fn conflict(&self, span: Range<usize>, c: plan::Conflict) -> ScenarioError {
        let kind = c.error_kind();
        ScenarioError {
            why: Some(Box::new(c.why)),
            ..self.err(span, kind, c.key, c.value, c.allowed)
        }
    }

    fn text(&self, span: &Range<usize>) -> String {
        spanned::snippet(self.src, span)
    }

    /// Checks `v` against `path`'s kind and converts it.
    fn value(
        &self,
        path: &str,
        kind: Kind,
        v: &Spanned<DeValue<'_>>,
    ) -> Result<Value, ScenarioError> {
        let span = v.span();
        let text = self.text(&span);
        let wrong = |found: &str| {
            self.err(
                span.clone(),
                ErrorKind::WrongType,
                path,
                text.clone(),
                format!("{} ({}), found {found}", kind.type_name(), kind.allowed()),
            )
        };
        let range = || {
            self.err(
                span.clone(),
                ErrorKind::OutOfRange,
                path,
                text.clone(),
                kind.allowed(),
            )
        };
        let fault = |f: Fault| match f {
            Fault::WrongType(t) => wrong(t.name()),
            Fault::OutOfRange => range(),
        };
        let v = v.get_ref();
        match (kind, v) {
            (Kind::IntOrAuto { .. }, DeValue::String(s)) if s.as_ref() == "auto" => {
                Ok(Value::Str("auto".to_string()))
            }
            (Kind::IntOrAuto { .. }, DeValue::String(_)) => Err(range()),
            (Kind::Int { lo, hi } | Kind::IntOrAuto { lo, hi }, _) => {
                spanned::int_in(v, lo.into(), hi.into())
                    .map(|n| Value::Int(n as u64))
                    .map_err(fault)
            }
            (Kind::OneOf(set), _) => spanned::int_one_of(v, set)
                .map(|n| Value::Int(n as u64))
                .map_err(fault),
            (Kind::Prob, _) => spanned::probability(v).map(Value::Float).map_err(fault),
            (Kind::Bool, _) => spanned::boolean(v)
                .map(Value::Bool)
                .map_err(|t| wrong(t.name())),
            (Kind::Enum(names), _) => match spanned::string(v) {
                Ok(s) if names.contains(&s) => Ok(Value::Str(s.to_string())),
                Ok(_) => Err(self.err(span, ErrorKind::BadEnum, path, text, kind.allowed())),
                Err(t) => Err(wrong(t.name())),
            },
            (Kind::Path { max }, _) => match spanned::string(v) {
                Ok(s) if s.len() <= max && !s.chars().any(char::is_control) => {
                    Ok(Value::Str(s.to_string()))
                }
                Ok(_) => Err(range()),
                Err(t) => Err(wrong(t.name())),
            },
        }
    }
}

fn unknown(ctx: &Ctx<'_>, span: Range<usize>, path: &str, table: &str) -> ScenarioError {
    let keys = allowed_keys(table).join(", ");
    let allowed = if table.is_empty() {
        format!("{keys} (top level)")
    } else {
        format!("{keys} (in [{table}])")
    };
    ctx.err(span, ErrorKind::UnknownKey, path, String::new(), allowed)
}

/// Parses a scenario file into a plan. Keys not given keep [`Plan::default`]'s values.
pub fn parse(text: &str) -> Result<Plan, ScenarioError> {
    let ctx = Ctx {
        src: text,
        origin: Origin::File,
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(ctx.err(
            0..0,
            ErrorKind::OutOfRange,
            "file",
            format!("{} bytes", text.len()),
            format!("at most {MAX_FILE_BYTES} bytes"),
        ));
    }
    let doc = spanned::document(text)
        .map_err(|(span, why)| ctx.err(span, ErrorKind::Syntax, "", String::new(), why))?;
    let mut plan = Plan::default();
    let mut spans: Vec<(&'static str, Range<usize>)> = Vec::new();
    table(&ctx, doc.get_ref(), "", &mut plan, &mut spans)?;
    plan.check().map_err(|c| {
        let span = [c.key, c.other]
            .iter()
            .find_map(|k| spans.iter().find(|(p, _)| p == k).map(|(_, s)| s.clone()))
            .unwrap_or(0..0);
        ctx.conflict(span, c)
    })?;
    Ok(plan)
}

fn table(
    ctx: &Ctx<'_>,
    t: &DeTable<'_>,
    prefix: &str,
    plan: &mut Plan,
    spans: &mut Vec<(&'static str, Range<usize>)>,
) -> Result<(), ScenarioError> {
    for (k, v) in t.iter() {
        let name: &str = k.get_ref();
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        if let Some(s) = spec(&path) {
            let value = ctx.value(s.path, s.kind, v)?;
            apply(plan, s.path, &value);
            spans.push((s.path, v.span()));
        } else if prefix.is_empty() && plan::tables().contains(&name) {
            match spanned::table(v.get_ref()) {
                Ok(inner) => table(ctx, inner, name, plan, spans)?,
                Err(found) => {
                    return Err(ctx.err(
                        v.span(),
                        ErrorKind::WrongType,
                        name,
                        ctx.text(&v.span()),
                        format!("a table ([{name}]), found {}", found.name()),
                    ));
                }
            }
        } else {
            return Err(unknown(ctx, k.span(), &path, prefix));
        }
    }
    Ok(())
}

/// Parses `text`, then applies the `--set` assignments in order, checking the rules that tie
/// keys together once all are applied (so `--set rdma.dcqcn=true --set switch.ecn=true`
/// works in either order).
pub fn parse_with(text: &str, sets: &[&str]) -> Result<Plan, ScenarioError> {
    let mut plan = parse(text)?;
    plan.set_all(sets)?;
    Ok(plan)
}

impl plan::Conflict {
    fn error_kind(&self) -> ErrorKind {
        if self.inapplicable {
            ErrorKind::Inapplicable
        } else {
            ErrorKind::Conflict
        }
    }
}

impl Plan {
    /// Applies one `key.path=value` assignment (a CLI `--set`), checked as a file would be,
    /// including the rules that tie keys together. Names may be given without quotes
    /// (`rdma.operation=send`). On error the plan is unchanged.
    pub fn set(&mut self, assignment: &str) -> Result<(), ScenarioError> {
        self.set_all(&[assignment])
    }

    /// Applies assignments in order, each checked alone, then the rules that tie keys
    /// together once, on the result; a conflict is blamed on the last assignment to the key
    /// it names (or to the other key involved, or the last assignment). On error the plan is
    /// unchanged.
    pub fn set_all(&mut self, assignments: &[&str]) -> Result<(), ScenarioError> {
        let mut next = self.clone();
        for a in assignments {
            next.assign(a)?;
        }
        if let Err(c) = next.check() {
            let key_of = |a: &&str| a.split_once('=').map(|(k, _)| k.trim().to_string());
            let blamed = assignments
                .iter()
                .rev()
                .find(|a| key_of(a).as_deref() == Some(c.key))
                .or_else(|| {
                    assignments
                        .iter()
                        .rev()
                        .find(|a| key_of(a).as_deref() == Some(c.other))
                })
                .or(assignments.last());
            let Some(a) = blamed else {
                unreachable!("the plan passed its checks before any assignment");
            };
            let ctx = Ctx {
                src: a,
                origin: Origin::Set(a.to_string()),
            };
            let at = a.find('=').map_or(0, |e| e + 1);
            return Err(ctx.conflict(at..a.len(), c));
        }
        *self = next;
        Ok(())
    }

    /// Applies one assignment with its own key's checks only (the caller checks the rules
    /// between keys).
    fn assign(&mut self, assignment: &str) -> Result<(), ScenarioError> {
        let ctx = Ctx {
            src: assignment,
            origin: Origin::Set(assignment.to_string()),
        };
        let Some(eq) = assignment.find('=') else {
            return Err(ctx.err(
                0..0,
                ErrorKind::Syntax,
                "",
                String::new(),
                "expected key.path=value".to_string(),
            ));
        };
        let raw_key = &assignment[..eq];
        let key = raw_key.trim();
        let key_at = raw_key.len() - raw_key.trim_start().len();
        let Some(s) = spec(key) else {
            let table = match key.split_once('.') {
                Some((t, _)) if plan::tables().contains(&t) => t,
                _ => "",
            };
            return Err(unknown(&ctx, key_at..key_at + key.len(), key, table));
        };
        let raw_val = &assignment[eq + 1..];
        let val = raw_val.trim();
        let val_at = eq + 1 + (raw_val.len() - raw_val.trim_start().len());
        let quoted;
        let (to_parse, wrapped) = match s.kind {
            Kind::IntOrAuto { .. } if val == "auto" => {
                quoted = format!("\"{val}\"");
                (quoted.as_str(), true)
            }
            Kind::Enum(_) | Kind::Path { .. } if !val.starts_with(['"', '\'']) => {
                quoted = format!("\"{val}\"");
                (quoted.as_str(), true)
            }
            _ => (val, false),
        };
        let parsed = DeValue::parse(to_parse).map_err(|e| {
            ctx.err(
                val_at..val_at,
                ErrorKind::WrongType,
                key,
                val.to_string(),
                format!(
                    "{} ({}): {}",
                    s.kind.type_name(),
                    s.kind.allowed(),
                    e.message().trim_end()
                ),
            )
        })?;
        // Re-anchor the value's span in the assignment text.
        let inner = parsed.span();
        let span = if wrapped {
            val_at..val_at + val.len()
        } else {
            (val_at + inner.start).min(assignment.len())..(val_at + inner.end).min(assignment.len())
        };
        let v = Spanned::new(span, parsed.into_inner());
        let value = ctx.value(s.path, s.kind, &v)?;
        apply(self, s.path, &value);
        Ok(())
    }
}
