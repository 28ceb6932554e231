//! The spanned-TOML toolkit both input formats share: scenario files ([`mod@crate::parse`]) and the
//! verbs-session files of `rdmalab::session::parse`.
//!
//! Both read the document as `toml`'s spanned tree ([`DeTable`]) so every error can point at the
//! key or value at fault. What they have in common lives here: turning a byte offset into a
//! `line:column` ([`LineIndex`]), reading a value as a given TOML type or as an integer within a
//! range ([`int_in`], [`Fault`]), finding the first key of a table that is not allowed
//! ([`first_unknown`]), and quoting the text of a span ([`snippet`]). What they do not share is
//! the wording of their errors: a scenario error is a [`crate::ScenarioError`] with the key path
//! and the allowed range as text, a session error a message id with arguments (a page in another
//! language translates it). So the readers here return a [`Fault`] and each format words it.

use std::cell::Cell;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A value of the document with the byte range of its text.
pub type Val<'i> = Spanned<DeValue<'i>>;

/// A TOML value's type, as an error names it ("found a string").
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum TomlType {
    /// `"..."` or `'...'`.
    String,
    /// `42`, `0x2a`.
    Integer,
    /// `4.2`.
    Float,
    /// `true`, `false`.
    Boolean,
    /// An offset or local date-time.
    Datetime,
    /// `[...]`.
    Array,
    /// `{...}` or `[table]`.
    Table,
}

impl TomlType {
    /// The type of `v`.
    pub fn of(v: &DeValue<'_>) -> TomlType {
        match v {
            DeValue::String(_) => TomlType::String,
            DeValue::Integer(_) => TomlType::Integer,
            DeValue::Float(_) => TomlType::Float,
            DeValue::Boolean(_) => TomlType::Boolean,
            DeValue::Datetime(_) => TomlType::Datetime,
            DeValue::Array(_) => TomlType::Array,
            DeValue::Table(_) => TomlType::Table,
        }
    }

    /// The name `toml` gives the type (`DeValue::type_str`): "string", "integer", ...
    pub fn name(self) -> &'static str {
        match self {
            TomlType::String => "string",
            TomlType::Integer => "integer",
            TomlType::Float => "float",
            TomlType::Boolean => "boolean",
            TomlType::Datetime => "datetime",
            TomlType::Array => "array",
            TomlType::Table => "table",
        }
    }
}

/// Why a value was refused by a reader here; the caller words it with the key it read.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Fault {
    /// The value is of another TOML type.
    WrongType(TomlType),
    /// The value has the right type but lies outside the allowed range.
    OutOfRange,
}

/// Parses a whole document; a syntax error is the byte range `toml` blames (`0..0` if none)
/// and its message, trimmed.
pub fn document(src: &str) -> Result<Spanned<DeTable<'_>>, (Range<usize>, String)> {
    DeTable::parse(src).map_err(|e| (e.span().unwrap_or(0..0), e.message().trim_end().to_string()))
}

/// The value of a TOML integer (any radix), or `None` if it does not fit an `i128`.
fn integer(i: &toml::de::DeInteger<'_>) -> Option<i128> {
    i128::from_str_radix(i.as_str(), i.radix()).ok()
}

/// An integer within `lo..=hi`.
pub fn int_in(v: &DeValue<'_>, lo: i128, hi: i128) -> Result<i128, Fault> {
    match v {
        DeValue::Integer(i) => match integer(i) {
            Some(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(Fault::OutOfRange),
        },
        other => Err(Fault::WrongType(TomlType::of(other))),
    }
}

/// An integer that is one of `set`.
pub fn int_one_of(v: &DeValue<'_>, set: &[u64]) -> Result<i128, Fault> {
    match v {
        DeValue::Integer(i) => match integer(i) {
            Some(n) if set.iter().any(|&s| i128::from(s) == n) => Ok(n),
            _ => Err(Fault::OutOfRange),
        },
        other => Err(Fault::WrongType(TomlType::of(other))),
    }
}

/// A probability, 0.0 to 1.0: a float, or the integers 0 and 1 (`toml` hands a float over
/// without its `_` separators, in a form `f64::from_str` reads).
pub fn probability(v: &DeValue<'_>) -> Result<f64, Fault> {
    match v {
        DeValue::Float(x) => match x.as_str().parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
            _ => Err(Fault::OutOfRange),
        },
        DeValue::Integer(_) => int_in(v, 0, 1).map(|n| n as f64),
        other => Err(Fault::WrongType(TomlType::of(other))),
    }
}

/// A string.
pub fn string<'a>(v: &'a DeValue<'_>) -> Result<&'a str, TomlType> {
    match v {
        DeValue::String(s) => Ok(s.as_ref()),
        other => Err(TomlType::of(other)),
    }
}

/// A boolean.
pub fn boolean(v: &DeValue<'_>) -> Result<bool, TomlType> {
    match v {
        DeValue::Boolean(b) => Ok(*b),
        other => Err(TomlType::of(other)),
    }
}

/// An array.
pub fn array<'a, 'i>(v: &'a DeValue<'i>) -> Result<&'a [Val<'i>], TomlType> {
    match v {
        DeValue::Array(a) => Ok(a),
        other => Err(TomlType::of(other)),
    }
}

/// A table.
pub fn table<'a, 'i>(v: &'a DeValue<'i>) -> Result<&'a DeTable<'i>, TomlType> {
    match v {
        DeValue::Table(t) => Ok(t),
        other => Err(TomlType::of(other)),
    }
}

/// The first key of `t`, in file order, that `allowed` refuses: its span and name.
pub fn first_unknown<'a>(
    t: &'a DeTable<'_>,
    allowed: impl Fn(&str) -> bool,
) -> Option<(Range<usize>, &'a str)> {
    t.iter()
        .map(|(k, _)| (k.span(), k.get_ref().as_ref()))
        .filter(|(_, k)| !allowed(k))
        .min_by_key(|(s, _)| s.start)
}

/// The text of `span` in `src`, trimmed, at most 80 characters (an error quotes it).
pub fn snippet(src: &str, span: &Range<usize>) -> String {
    src.get(span.clone())
        .unwrap_or("")
        .trim()
        .chars()
        .take(80)
        .collect()
}

/// 1-based (line, column in characters) of byte offset `at` in `src`.
pub fn line_col(src: &str, at: usize) -> (usize, usize) {
    LineIndex::new(src).line_col(at)
}

/// The byte offset where each line of a text starts, to find lines without rescanning it: a
/// parser that reports many positions (every step records its own) asks this.
pub struct LineIndex<'s> {
    src: &'s str,
    starts: Vec<usize>,
    /// The last position asked for and its column: columns further along the same line are
    /// counted from there (a file may hold every step on one long line).
    last: Cell<(usize, usize)>,
}

impl<'s> LineIndex<'s> {
    /// Indexes the lines of `src`.
    pub fn new(src: &'s str) -> LineIndex<'s> {
        let mut starts = vec![0];
        starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            src,
            starts,
            last: Cell::new((0, 1)),
        }
    }

    /// 1-based (line, column in characters) of byte offset `at` (clamped to the text; an
    /// offset inside a character counts as that character).
    pub fn line_col(&self, at: usize) -> (usize, usize) {
        let mut at = at.min(self.src.len());
        while !self.src.is_char_boundary(at) {
            at -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= at);
        let start = self.starts[line - 1];
        let (last_at, last_col) = self.last.get();
        let (from, col) = if last_at >= start && last_at <= at {
            (last_at, last_col)
        } else {
            (start, 1)
        };
        // Characters, not bytes: count the bytes that start a UTF-8 sequence.
        let column = col
            + self.src.as_bytes()[from..at]
                .iter()
                .filter(|&&b| b & 0xC0 != 0x80)
                .count();
        self.last.set((at, column));
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let src = "a = 1\nbb = 2\n  c = 3";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 6), (2, 1));
        assert_eq!(line_col(src, 15), (3, 3));
        assert_eq!(line_col(src, 999), (3, 8));
        // Columns count characters, and an index asked twice on one line agrees with itself.
        let src = "k = \"µµ\" # x";
        let ix = LineIndex::new(src);
        assert_eq!(ix.line_col(7), (1, 7));
        assert_eq!(ix.line_col(src.len()), (1, 13));
        assert_eq!(ix.line_col(4), (1, 5));
    }

    #[test]
    fn readers_say_why() {
        let doc = document("a = 5\nb = \"x\"\nc = 0.5\nd = 1_000\ne = 0.2_5").unwrap();
        let t = doc.get_ref();
        let v = |k: &str| t.get(k).unwrap().get_ref();
        assert_eq!(int_in(v("a"), 0, 9), Ok(5));
        assert_eq!(int_in(v("a"), 6, 9), Err(Fault::OutOfRange));
        assert_eq!(
            int_in(v("b"), 0, 9),
            Err(Fault::WrongType(TomlType::String))
        );
        assert_eq!(int_in(v("d"), 0, 1_000), Ok(1_000));
        assert_eq!(int_one_of(v("a"), &[1, 5]), Ok(5));
        assert_eq!(int_one_of(v("a"), &[1, 2]), Err(Fault::OutOfRange));
        assert_eq!(probability(v("c")), Ok(0.5));
        assert_eq!(probability(v("e")), Ok(0.25));
        assert_eq!(probability(v("a")), Err(Fault::OutOfRange));
        assert_eq!(string(v("b")), Ok("x"));
        assert_eq!(boolean(v("b")), Err(TomlType::String));
        assert_eq!(TomlType::of(v("c")).name(), v("c").type_str());
        let unknown = first_unknown(t, |k| k != "c" && k != "e");
        assert_eq!(unknown.map(|(_, k)| k), Some("c"));
        assert_eq!(snippet("k = \"x\"  ", &(3..9)), "\"x\"");
        let (span, msg) = document("a = [1").unwrap_err();
        assert_eq!((span.start, msg.starts_with("unclosed array")), (6, true));
    }
}
