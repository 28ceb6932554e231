//! The course's C programs (`course/code/*.c`), embedded, and the regions the chapters quote
//! with `{{code:FILE#REGION}}`.
//!
//! A region is the lines between `// region: NAME` and `// endregion: NAME`. Comments are
//! written twice, `// zh: ...` and `// en: ...`; a page shows the lines of its own language as
//! plain `// ...` comments and drops the other's, so a Chinese learner reads Chinese comments
//! in code that compiles as one file (`course/code/check.sh` builds every program).

use crate::content::Lang;
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../../course/code/"]
#[include = "*.c"]
struct Programs;

/// One quoted region, ready to show.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// The file's name (`rc_write.c`).
    pub file: String,
    /// First and last line of the region in the file (1-based, marker lines excluded).
    pub lines: (usize, usize),
    /// The region's text in one language, indentation kept and the common indent removed.
    pub text: String,
}

/// The whole program `stem` (`rc_write`) as stored.
pub fn program(stem: &str) -> Option<String> {
    if stem.is_empty()
        || stem.len() > 40
        || !stem
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let f = Programs::get(&format!("{stem}.c"))?;
    String::from_utf8(f.data.into_owned()).ok()
}

/// Every program's stem, sorted.
pub fn programs() -> Vec<String> {
    let mut v: Vec<String> = Programs::iter()
        .filter_map(|p| p.strip_suffix(".c").map(str::to_string))
        .collect();
    v.sort();
    v
}

/// The verbs session that issues program `stem`'s verbs in the same order, from its header
/// line `// playground: NAME` (`none` where the simulator has no such session, as for the
/// RDMA CM programs).
pub fn session_of(stem: &str) -> Option<String> {
    program(stem)?
        .lines()
        .find_map(|l| l.trim().strip_prefix("// playground:"))
        .map(str::trim)
        .filter(|n| *n != "none")
        .map(str::to_string)
}

/// `line` as `lang` shows it: `None` to drop it (the other language's comment).
pub fn localize(line: &str, lang: Lang) -> Option<String> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let (mine, other) = match lang {
        Lang::Zh => ("// zh:", "// en:"),
        Lang::En => ("// en:", "// zh:"),
    };
    if body.starts_with(other) || body.starts_with("// playground:") {
        return None;
    }
    match body.strip_prefix(mine) {
        Some(rest) => Some(format!("{indent}//{rest}")),
        None => Some(line.to_string()),
    }
}

/// The program in `lang`: every comment in the page's language.
pub fn localized_program(stem: &str, lang: Lang) -> Option<String> {
    let src = program(stem)?;
    let mut out = String::new();
    for l in src.lines().filter_map(|l| localize(l, lang)) {
        out.push_str(&l);
        out.push('\n');
    }
    Some(out)
}

/// Region `name` of program `stem` in `lang`, or why it cannot be shown.
pub fn region(stem: &str, name: &str, lang: Lang) -> Result<Region, String> {
    let src = program(stem).ok_or_else(|| format!("no program course/code/{stem}.c"))?;
    let open = format!("// region: {name}");
    let close = format!("// endregion: {name}");
    let lines: Vec<&str> = src.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == open)
        .ok_or_else(|| format!("{stem}.c has no region {name:?}"))?;
    let len = lines[start + 1..]
        .iter()
        .position(|l| l.trim() == close)
        .ok_or_else(|| format!("{stem}.c: region {name:?} is not closed"))?;
    let body: Vec<String> = lines[start + 1..start + 1 + len]
        .iter()
        .filter_map(|l| localize(l, lang))
        .collect();
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let text = body
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    Ok(Region {
        file: format!("{stem}.c"),
        lines: (start + 2, start + 1 + len),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_shows_only_the_page_language_comments() {
        let zh = region("rc_write", "exchange", Lang::Zh).unwrap();
        let en = region("rc_write", "exchange", Lang::En).unwrap();
        assert_eq!(zh.lines, en.lines);
        assert!(!zh.text.contains("zh:") && !zh.text.contains("en:"));
        assert!(zh.text.contains("字节") && !zh.text.contains("The wire format"));
        assert!(en.text.contains("The wire format") && !en.text.contains("字节"));
        assert!(en.text.contains("write_full(sock, out, sizeof out);"));
        assert!(region("rc_write", "nope", Lang::En).is_err());
        assert!(region("../x", "a", Lang::En).is_err());
        assert_eq!(localize("  // zh: 中文", Lang::Zh).unwrap(), "  // 中文");
        assert_eq!(localize("  // zh: 中文", Lang::En), None);
        assert_eq!(
            localize("x = 1; // IBV_ACCESS_*", Lang::Zh).unwrap(),
            "x = 1; // IBV_ACCESS_*"
        );
    }
}
