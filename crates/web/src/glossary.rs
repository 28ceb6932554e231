//! The glossary, `course/{lang}/glossary.toml`: the terms the chapters link as
//! `[text](/glossary#id)`, in both languages with the same ids in the same order.

use serde::{Deserialize, Serialize};

/// One term.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    /// The anchor (`qp`): lowercase letters, digits and `-`.
    pub id: String,
    /// The term as a heading, with its abbreviation.
    pub name: String,
    /// What it is (Markdown).
    pub text: String,
    /// Chapters that teach it, the main one first.
    #[serde(default)]
    pub chapters: Vec<String>,
    /// Related terms' ids.
    #[serde(default)]
    pub see: Vec<String>,
    /// Where the facts come from.
    #[serde(default)]
    pub refs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(rename = "term")]
    terms: Vec<Term>,
}

/// Parses and checks one language's glossary.
pub fn load(text: &str) -> Result<Vec<Term>, String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut seen = std::collections::HashSet::new();
    for t in &f.terms {
        let ok = !t.id.is_empty()
            && t.id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !ok {
            return Err(format!("term id {:?} is not lowercase a-z0-9-", t.id));
        }
        if !seen.insert(t.id.clone()) {
            return Err(format!("term {} appears twice", t.id));
        }
        if t.name.trim().is_empty() || t.text.trim().is_empty() {
            return Err(format!("term {} has no name or text", t.id));
        }
    }
    for t in &f.terms {
        if let Some(bad) = t.see.iter().find(|s| !seen.contains(*s)) {
            return Err(format!("term {} sees {bad:?}, which is not a term", t.id));
        }
    }
    Ok(f.terms)
}
