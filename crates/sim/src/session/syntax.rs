//! A TOML syntax error of a session file as a message id: the `toml` crate describes the fault
//! in English ("unclosed array, expected `]`"), which a page in another language cannot show.
//! The common descriptions get ids of their own (`toml.*`, their English the parser's words),
//! so the page explains them in its language; any other keeps the parser's text as `detail`.
//! The English a report carries is unchanged: the description, then the parser's `expected`.

use super::msg::{Msg, MsgId};

/// The parser's descriptions that have an id, each with its id.
const KNOWN: &[(&str, MsgId)] = &[
    ("unclosed array", MsgId::TomlUnclosedArray),
    ("unclosed array table", MsgId::TomlUnclosedArrayTable),
    ("unclosed table", MsgId::TomlUnclosedTable),
    ("unclosed inline table", MsgId::TomlUnclosedInlineTable),
    ("string values must be quoted", MsgId::TomlUnquotedString),
    ("duplicate key", MsgId::TomlDuplicateKey),
    ("invalid basic string", MsgId::TomlInvalidBasicString),
    ("invalid literal string", MsgId::TomlInvalidLiteralString),
    ("invalid string", MsgId::TomlInvalidString),
    ("key with no value", MsgId::TomlKeyNoValue),
    ("missing value for key", MsgId::TomlMissingValue),
    ("invalid value", MsgId::TomlInvalidValue),
    ("unexpected key or value", MsgId::TomlUnexpectedContent),
    (
        "missing comma between array elements",
        MsgId::TomlMissingCommaArray,
    ),
    (
        "missing comma between key-value pairs",
        MsgId::TomlMissingCommaInline,
    ),
    ("extra comma in array", MsgId::TomlExtraComma),
    (
        "missing assignment between key-value pairs",
        MsgId::TomlMissingAssignment,
    ),
    (
        "extra assignment between key-value pairs",
        MsgId::TomlExtraAssignment,
    ),
    ("invalid unquoted key", MsgId::TomlInvalidKey),
    ("unexpected leading zero", MsgId::TomlLeadingZero),
    ("missing opening quote", MsgId::TomlMissingQuote),
];

/// `message` (the `toml` crate's, trimmed) as a message whose English is `message` itself.
pub fn toml_syntax(message: &str) -> Msg {
    let (what, expected) = match message.split_once(", expected ") {
        Some((w, e)) => (w, Some(e)),
        None => (message, None),
    };
    let Some(&(_, id)) = KNOWN.iter().find(|(d, _)| *d == what) else {
        return Msg::new(MsgId::TomlOther).arg("detail", message);
    };
    // Every id's English is its description (the test below checks it).
    let what = Msg::new(id);
    match expected {
        Some(e) => Msg::new(MsgId::TomlExpected)
            .arg("what", what)
            .arg("expected", e),
        None => what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_english_is_the_parsers_words() {
        for (d, id) in KNOWN {
            let m = toml_syntax(d);
            assert_eq!(m.text(), *d);
            assert_eq!(m.id, *id);
        }
        for s in [
            "unclosed array, expected `]`",
            "key with no value, expected `=`",
            "unexpected key or value, expected newline, `#`",
            "carriage return must be followed by newline",
        ] {
            assert_eq!(toml_syntax(s).text(), s);
        }
        assert_eq!(
            toml_syntax("unclosed array, expected `]`").id,
            MsgId::TomlExpected
        );
        assert_eq!(
            toml_syntax("carriage return must be followed by newline").id,
            MsgId::TomlOther
        );
    }
}
