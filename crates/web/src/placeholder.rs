//! The placeholders a chapter's text holds (`course/FORMAT.md`), parsed. Every number and every
//! diagram on a chapter page comes from one of them: the server runs what the placeholder
//! names when the page is served, so the text cannot drift from the model.
//!
//! - `{{fig:PRESET[;KEY=VALUE]... PATH FORMAT}}` a value from `rdmalab run PRESET --json`;
//! - `{{vfig:SESSION[;profile=P] PATH FORMAT}}` a value from a verbs session's `--json`;
//! - `{{lfig:LAB[;PARAM=VALUE]... PATH FORMAT}}` a value from `rdmalab lab LAB --json`;
//! - `{{ladder:SESSION[;profile=P] [steps=A-B]}}` the session's frames as a ladder diagram
//!   (steps numbered as in `vfig` paths: the JSON `steps` array, from 0);
//! - `{{qpstate:FROM>TO,... [type=RC]}}` the QP state diagram with those transitions marked
//!   (`*` is every state);
//! - `{{pause:LAB[;PARAM=VALUE]...}}` the lab run's queue and PAUSE timelines;
//! - `{{code:FILE#REGION}}` a region of a course program in `course/code/`.

use std::ops::Range;

/// What a value placeholder reads from.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub enum Source {
    /// A preset run, with `--set` overrides.
    Preset {
        /// The preset.
        preset: String,
        /// The overrides, `key=value`.
        sets: Vec<String>,
    },
    /// A verbs session from `scenarios/verbs/`, under its own profile or another.
    Session {
        /// The example's name.
        name: String,
        /// A NIC profile other than the file's.
        profile: Option<String>,
    },
    /// A fabric lab with parameters.
    Lab {
        /// The lab's id.
        id: String,
        /// `name=value` parameters, in the order written.
        params: Vec<(String, String)>,
    },
}

impl Source {
    /// The cache key: one run per distinct source.
    pub fn key(&self) -> String {
        match self {
            Source::Preset { preset, sets } => format!("run:{preset};{}", sets.join(";")),
            Source::Session { name, profile } => {
                format!("verbs:{name};{}", profile.as_deref().unwrap_or(""))
            }
            Source::Lab { id, params } => {
                let mut p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
                p.sort();
                format!("lab:{id};{}", p.join(";"))
            }
        }
    }
}

/// How a value is printed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Format {
    /// An integer.
    Int,
    /// Nanoseconds as µs, two decimals.
    Us,
    /// Picoseconds as µs, two decimals (verbs sessions count time in ps).
    UsPs,
    /// Nanoseconds as ms, three decimals.
    Ms,
    /// A ratio as a percentage, one decimal.
    Pct,
    /// Gb/s, one decimal.
    Gbps,
    /// A ratio with `×`, two decimals.
    X,
    /// Two decimals.
    F2,
    /// As it is.
    Text,
    /// An integer in hexadecimal with `0x` (keys, addresses).
    Hex,
}

impl Format {
    /// Every format's name, as written in placeholders.
    pub const NAMES: &[(&str, Format)] = &[
        ("int", Format::Int),
        ("us", Format::Us),
        ("us_ps", Format::UsPs),
        ("ms", Format::Ms),
        ("pct", Format::Pct),
        ("gbps", Format::Gbps),
        ("x", Format::X),
        ("f2", Format::F2),
        ("text", Format::Text),
        ("hex", Format::Hex),
    ];

    /// The format named `s`.
    pub fn parse(s: &str) -> Option<Format> {
        Format::NAMES.iter().find(|(n, _)| *n == s).map(|(_, f)| *f)
    }

    /// Every format's name, for an error that lists them.
    pub fn names() -> String {
        Format::NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `v` in this format; `None` when it is not a number and the format wants one.
    pub fn print(self, v: &serde_json::Value) -> Option<String> {
        use serde_json::Value;
        if self == Format::Text {
            return Some(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        if self == Format::Hex {
            return v.as_u64().map(|n| format!("{n:#x}"));
        }
        let x = match v {
            Value::Bool(b) => return Some(b.to_string()),
            v => v.as_f64()?,
        };
        Some(match self {
            Format::Int => format!("{}", x.round() as i64),
            Format::Us => format!("{:.2} µs", x / 1e3),
            Format::UsPs => format!("{:.2} µs", x / 1e6),
            Format::Ms => format!("{:.3} ms", x / 1e6),
            Format::Pct => format!("{:.1}%", x * 100.0),
            Format::Gbps => format!("{x:.1} Gb/s"),
            Format::X => format!("{x:.2}×"),
            Format::F2 | Format::Text | Format::Hex => format!("{x:.2}"),
        })
    }
}

/// One parsed placeholder.
#[derive(Clone, Debug, PartialEq)]
pub enum Placeholder {
    /// A value (`fig`, `vfig`, `lfig`).
    Value {
        /// What runs.
        source: Source,
        /// The JSON path (`a.b.0.c`).
        path: String,
        /// How it is printed.
        format: Format,
    },
    /// A ladder diagram of a session's frames.
    Ladder {
        /// The session.
        source: Source,
        /// Only the frames of steps `a..=b` (indices of the JSON `steps` array, from 0).
        steps: Option<(u32, u32)>,
    },
    /// The QP state diagram.
    QpState {
        /// Transitions to mark, `(from, to)`; `*` as `from` is every state.
        marked: Vec<(String, String)>,
        /// The QP type whose table is drawn (`RC`, `UC`, `UD`).
        qp_type: String,
    },
    /// A lab's queue and PAUSE timelines.
    Pause {
        /// The lab run.
        source: Source,
    },
    /// A region of a course program.
    Code {
        /// The file's stem (`rc_write` for `course/code/rc_write.c`).
        file: String,
        /// The region's name.
        region: String,
    },
}

impl Placeholder {
    /// Whether it stands on its own line as a block (a diagram, code) rather than inside a
    /// sentence.
    pub fn is_block(&self) -> bool {
        !matches!(self, Placeholder::Value { .. })
    }

    /// The run it needs, if any.
    pub fn source(&self) -> Option<&Source> {
        match self {
            Placeholder::Value { source, .. }
            | Placeholder::Ladder { source, .. }
            | Placeholder::Pause { source } => Some(source),
            _ => None,
        }
    }
}

/// The QP states a `qpstate` placeholder may name (IBTA Vol. 1 §10.3.1).
pub const QP_STATES: &[&str] = &["RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"];

fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `NAME;k=v;k=v` → the name and the pairs.
fn run_spec(s: &str) -> Result<(String, Vec<(String, String)>), String> {
    let mut it = s.split(';');
    let name = it.next().unwrap_or_default().to_string();
    if !name_ok(&name) {
        return Err(format!("{name:?} is not a name"));
    }
    let mut pairs = Vec::new();
    for kv in it {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("{kv:?} is not KEY=VALUE"))?;
        pairs.push((k.to_string(), v.to_string()));
    }
    Ok((name, pairs))
}

fn session_source(spec: &str) -> Result<Source, String> {
    let (name, pairs) = run_spec(spec)?;
    if crate::examples::get(&name).is_none() {
        return Err(format!("no verbs session {name:?} in scenarios/verbs"));
    }
    let mut profile = None;
    for (k, v) in pairs {
        if k != "profile" {
            return Err(format!("a session takes only profile=, not {k:?}"));
        }
        if !rdmalab::verbs::NicProfile::ALL
            .iter()
            .any(|p| p.name() == v)
        {
            return Err(format!("no NIC profile {v:?}"));
        }
        profile = Some(v);
    }
    Ok(Source::Session { name, profile })
}

fn lab_source(spec: &str) -> Result<Source, String> {
    let (id, params) = run_spec(spec)?;
    if !rdmalab::labs::catalogue().iter().any(|l| l.id == id) {
        return Err(format!("no lab {id:?}"));
    }
    Ok(Source::Lab { id, params })
}

fn preset_source(spec: &str) -> Result<Source, String> {
    let mut it = spec.split(';');
    let preset = it.next().unwrap_or_default().to_string();
    if scenario::preset(&preset).is_none() {
        return Err(format!("no preset {preset:?}"));
    }
    Ok(Source::Preset {
        preset,
        sets: it.map(str::to_string).collect(),
    })
}

/// Parses one placeholder's inside, `kind:rest`.
pub fn parse(inner: &str) -> Result<Placeholder, String> {
    let (kind, rest) = inner
        .split_once(':')
        .ok_or_else(|| "expected KIND:...".to_string())?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    match kind {
        "fig" | "vfig" | "lfig" => {
            let [spec, path, format] = words[..] else {
                return Err(format!("{kind}: expected SOURCE PATH FORMAT"));
            };
            let source = match kind {
                "fig" => preset_source(spec)?,
                "vfig" => session_source(spec)?,
                _ => lab_source(spec)?,
            };
            let format = Format::parse(format)
                .ok_or_else(|| format!("format {format:?} is not one of {}", Format::names()))?;
            Ok(Placeholder::Value {
                source,
                path: path.to_string(),
                format,
            })
        }
        "ladder" => {
            let (spec, opts) = words
                .split_first()
                .ok_or_else(|| "ladder: expected SESSION".to_string())?;
            let mut steps = None;
            for o in opts {
                let r = o
                    .strip_prefix("steps=")
                    .ok_or_else(|| format!("ladder: unknown option {o:?}"))?;
                let (a, b) = r.split_once('-').unwrap_or((r, r));
                let (a, b) = (a.parse::<u32>(), b.parse::<u32>());
                match (a, b) {
                    (Ok(a), Ok(b)) if a <= b => steps = Some((a, b)),
                    _ => return Err(format!("ladder: steps={r} is not A-B with A <= B")),
                }
            }
            Ok(Placeholder::Ladder {
                source: session_source(spec)?,
                steps,
            })
        }
        "qpstate" => {
            let (list, opts) = words
                .split_first()
                .ok_or_else(|| "qpstate: expected FROM>TO,...".to_string())?;
            let mut marked = Vec::new();
            for t in list.split(',') {
                let (a, b) = t
                    .split_once('>')
                    .ok_or_else(|| format!("qpstate: {t:?} is not FROM>TO"))?;
                for s in [a, b] {
                    if !(QP_STATES.contains(&s) || (s == "*" && s == a)) {
                        return Err(format!("qpstate: no QP state {s:?}"));
                    }
                }
                marked.push((a.to_string(), b.to_string()));
            }
            let mut qp_type = "RC".to_string();
            for o in opts {
                match o.strip_prefix("type=") {
                    Some(t @ ("RC" | "UC" | "UD")) => qp_type = t.to_string(),
                    _ => return Err(format!("qpstate: option {o:?} (type=RC, UC or UD)")),
                }
            }
            Ok(Placeholder::QpState { marked, qp_type })
        }
        "pause" => {
            let [spec] = words[..] else {
                return Err("pause: expected LAB[;PARAM=VALUE]...".to_string());
            };
            Ok(Placeholder::Pause {
                source: lab_source(spec)?,
            })
        }
        "code" => {
            let [spec] = words[..] else {
                return Err("code: expected FILE#REGION".to_string());
            };
            let (file, region) = spec
                .split_once('#')
                .ok_or_else(|| "code: expected FILE#REGION".to_string())?;
            crate::code::region(file, region, crate::content::Lang::En)?;
            Ok(Placeholder::Code {
                file: file.to_string(),
                region: region.to_string(),
            })
        }
        other => Err(format!("no placeholder kind {other:?}")),
    }
}

/// Every placeholder in `text`: its byte range and what it parsed to (or why not).
pub fn scan(text: &str) -> Vec<(Range<usize>, Result<Placeholder, String>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("{{") {
        let start = at + i;
        let Some(j) = text[start..].find("}}") else {
            out.push((start..text.len(), Err("an unclosed {{".to_string())));
            break;
        };
        let end = start + j + 2;
        let inner = &text[start + 2..end - 2];
        out.push((
            start..end,
            parse(inner).map_err(|e| format!("{{{{{inner}}}}}: {e}")),
        ));
        at = end;
    }
    out
}

/// The value at a dotted path (`steps.7.frames.0.psn`) in a JSON document; `None` when the
/// path is not there or leads to null.
pub fn lookup<'a>(doc: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    use serde_json::Value;
    let mut v = doc;
    for seg in path.split('.') {
        v = match v {
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            Value::Object(o) => o.get(seg)?,
            _ => return None,
        };
    }
    (!v.is_null()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_parses_and_bad_ones_say_why() {
        let p = parse("vfig:drop_nth;profile=rxe steps.7.frames.9.psn int").unwrap();
        assert_eq!(
            p,
            Placeholder::Value {
                source: Source::Session {
                    name: "drop_nth".into(),
                    profile: Some("rxe".into())
                },
                path: "steps.7.frames.9.psn".into(),
                format: Format::Int
            }
        );
        assert!(matches!(
            parse("ladder:write steps=6-7").unwrap(),
            Placeholder::Ladder {
                steps: Some((6, 7)),
                ..
            }
        ));
        let q = parse("qpstate:*>ERR,RESET>INIT type=UD").unwrap();
        assert_eq!(
            q,
            Placeholder::QpState {
                marked: vec![("*".into(), "ERR".into()), ("RESET".into(), "INIT".into())],
                qp_type: "UD".into()
            }
        );
        assert!(parse("lfig:incast;dcqcn=off figures.0.value gbps").is_ok());
        assert!(parse("pause:storm;watchdog=false").unwrap().is_block());
        for (bad, why) in [
            ("vfig:nope a int", "no verbs session"),
            ("vfig:write;profile=x a int", "no NIC profile"),
            ("fig:lesson1 a weird", "format"),
            ("ladder:write steps=7-6", "steps="),
            ("qpstate:RESET>FOO", "no QP state"),
            ("qpstate:RESET>*", "no QP state"),
            ("lfig:nolab a int", "no lab"),
            ("what:x", "no placeholder kind"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(scan("x {{fig:lesson1 a int").last().unwrap().1.is_err());
    }

    #[test]
    fn formats_print_with_units() {
        assert_eq!(Format::UsPs.print(&json!(65_536_000)).unwrap(), "65.54 µs");
        assert_eq!(Format::Us.print(&json!(1500.0)).unwrap(), "1.50 µs");
        assert_eq!(Format::Pct.print(&json!(0.9876)).unwrap(), "98.8%");
        assert_eq!(Format::Text.print(&json!("RTS")).unwrap(), "RTS");
        assert_eq!(Format::Int.print(&json!("x")), None);
        assert_eq!(Format::Hex.print(&json!(0x10_0101)).unwrap(), "0x100101");
        assert_eq!(Format::Hex.print(&json!("x")), None);
        let doc = json!({"a": [{"b": 2}], "n": null});
        assert_eq!(lookup(&doc, "a.0.b"), Some(&json!(2)));
        assert_eq!(lookup(&doc, "n"), None);
        assert_eq!(lookup(&doc, "a.1.b"), None);
    }
}
