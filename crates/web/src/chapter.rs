//! A chapter's own file, `course/{lang}/chapters/{id}.toml` (`course/FORMAT.md`): learning
//! goals, the lesson text, key points, misconceptions, what to try, self-checks and references.
//! The map (`map.toml`) keeps each chapter's title, summary and links; this file is what the
//! chapter page teaches.

use crate::content::Lang;
use crate::placeholder::{self, Source};
use crate::render::Renderer;
use serde::Deserialize;
use serde_json::{Value, json};

/// One "what you thought / what is true" pair.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Misconception {
    /// The wrong belief, as a learner would say it.
    pub wrong: String,
    /// What is true, and why.
    pub right: String,
}

/// Where a "try it" link goes.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, Eq, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum TryKind {
    /// The simulation page with a preset.
    Sim,
    /// The verbs playground with an example session.
    Playground,
    /// A fabric lab with parameters.
    Lab,
}

/// One "try it" link: opens a page in exactly the state the text describes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Try {
    /// Where it goes.
    pub kind: TryKind,
    /// The link's text.
    pub label: String,
    /// What to look at there.
    pub explain: String,
    /// `sim`: the preset.
    pub preset: Option<String>,
    /// `sim`: `--set` overrides.
    #[serde(default)]
    pub set: Vec<String>,
    /// `sim`: the table row to highlight.
    pub hl: Option<String>,
    /// `playground`: the session in `scenarios/verbs/`.
    pub example: Option<String>,
    /// `playground`: the NIC profile.
    pub profile: Option<String>,
    /// `lab`: the lab.
    pub lab: Option<String>,
    /// `lab`: its parameters.
    pub params: Option<toml::Table>,
}

/// What kind of question a self-check asks.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, Eq, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// Pick one answer.
    Choice,
    /// Type a number.
    Number,
    /// Predict what a run will show, then see what the simulation says.
    Predict,
}

/// The run a prediction is checked against.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRun {
    /// A verbs session.
    pub example: Option<String>,
    /// Or a preset.
    pub preset: Option<String>,
    /// The preset's overrides.
    #[serde(default)]
    pub set: Vec<String>,
    /// The value's path in the run's JSON.
    pub path: String,
}

/// One self-check question.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// The kind.
    pub kind: CheckKind,
    /// The question.
    pub question: String,
    /// The answers to pick from (`choice`, `predict`).
    #[serde(default)]
    pub choices: Vec<String>,
    /// The right choice's index, or the number.
    pub answer: toml::Value,
    /// A number's unit.
    pub unit: Option<String>,
    /// How far a typed number may be from the answer.
    pub tolerance: Option<f64>,
    /// Why the answer is right.
    pub explain: String,
    /// `predict`: the run.
    pub run: Option<CheckRun>,
    /// `predict`: what each choice means in the run's value: a string or a number to equal, or
    /// `{min, max}` (min inclusive, max exclusive).
    #[serde(default)]
    pub values: Vec<toml::Value>,
}

/// One reference.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The tag the text cites in brackets (`[IBTA ch12]`).
    pub tag: String,
    /// The full reference.
    pub text: String,
}

/// A chapter's file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChapterText {
    /// The chapter id (`m2c10`), as in the file name and the map.
    pub id: String,
    /// What the learner will be able to do.
    pub goals: Vec<String>,
    /// The lesson (Markdown with placeholders).
    pub body: String,
    /// Key points.
    pub key_points: Vec<String>,
    /// Common misconceptions.
    #[serde(rename = "misconception")]
    pub misconceptions: Vec<Misconception>,
    /// What to try.
    #[serde(rename = "try")]
    pub tries: Vec<Try>,
    /// Self-checks.
    #[serde(rename = "check")]
    pub checks: Vec<Check>,
    /// References.
    #[serde(rename = "reference")]
    pub references: Vec<Reference>,
}

/// Teaching text in a chapter's body: Chinese characters (zh) or words (en), not counting
/// code, tables, placeholders or headings' markup. FORMAT.md asks for at least
/// [`MIN_HAN`] / [`MIN_WORDS`].
pub fn teaching_length(body: &str, lang: Lang) -> usize {
    let mut n = 0;
    let mut in_code = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || t.starts_with('|') || t.starts_with("{{") {
            continue;
        }
        // Drop placeholders and inline code from the line.
        let mut s = String::new();
        let mut rest = t;
        while let Some(i) = rest.find("{{") {
            s.push_str(&rest[..i]);
            rest = rest[i..].find("}}").map_or("", |j| &rest[i + j + 2..]);
        }
        s.push_str(rest);
        let mut plain = String::new();
        for (k, part) in s.split('`').enumerate() {
            if k % 2 == 0 {
                plain.push_str(part);
                plain.push(' ');
            }
        }
        n += match lang {
            Lang::Zh => plain
                .chars()
                .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
                .count(),
            Lang::En => plain
                .split_whitespace()
                .filter(|w| w.chars().any(char::is_alphabetic))
                .count(),
        };
    }
    n
}

/// Least teaching text per chapter, Chinese characters.
pub const MIN_HAN: usize = 1500;
/// Least teaching text per chapter, English words.
pub const MIN_WORDS: usize = 900;

impl ChapterText {
    /// Checks what can be checked without running anything.
    pub fn check(&self, at: &str, lang: Lang) -> Result<(), String> {
        let fail = |what: String| Err(format!("{at}: {what}"));
        if self.goals.is_empty() || self.key_points.is_empty() {
            return fail("goals and key_points must not be empty".into());
        }
        if self.misconceptions.is_empty() || self.tries.is_empty() || self.checks.is_empty() {
            return fail("needs a misconception, a try and a check".into());
        }
        if self.references.is_empty() {
            return fail("needs references".into());
        }
        let (len, min) = match lang {
            Lang::Zh => (teaching_length(&self.body, lang), MIN_HAN),
            Lang::En => (teaching_length(&self.body, lang), MIN_WORDS),
        };
        if len < min {
            return fail(format!("the body teaches {len} (at least {min})"));
        }
        for (i, t) in self.tries.iter().enumerate() {
            let ok = match t.kind {
                TryKind::Sim => t
                    .preset
                    .as_deref()
                    .is_some_and(|p| scenario::preset(p).is_some()),
                TryKind::Playground => t
                    .example
                    .as_deref()
                    .is_some_and(|e| crate::examples::get(e).is_some()),
                TryKind::Lab => t
                    .lab
                    .as_deref()
                    .is_some_and(|l| rdmalab::labs::catalogue().iter().any(|x| x.id == l)),
            };
            if !ok {
                return fail(format!(
                    "try {} ({:?}) names no preset, session or lab that exists",
                    i + 1,
                    t.kind
                ));
            }
        }
        for (i, c) in self.checks.iter().enumerate() {
            let n = c.choices.len();
            match c.kind {
                CheckKind::Choice | CheckKind::Predict => {
                    let a = c.answer.as_integer().unwrap_or(-1);
                    if n < 2 || a < 0 || a as usize >= n {
                        return fail(format!("check {}: answer {a} of {n} choices", i + 1));
                    }
                }
                CheckKind::Number => {
                    if c.answer
                        .as_float()
                        .or(c.answer.as_integer().map(|x| x as f64))
                        .is_none()
                    {
                        return fail(format!("check {}: a number needs a numeric answer", i + 1));
                    }
                }
            }
            if c.kind == CheckKind::Predict {
                let Some(r) = &c.run else {
                    return fail(format!("check {}: a prediction needs a run", i + 1));
                };
                if c.values.len() != n {
                    return fail(format!(
                        "check {}: {n} choices, {} values",
                        i + 1,
                        c.values.len()
                    ));
                }
                if check_source(r).is_none() {
                    return fail(format!(
                        "check {}: its run names nothing that exists",
                        i + 1
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The source a prediction's run names.
pub fn check_source(r: &CheckRun) -> Option<Source> {
    match (&r.example, &r.preset) {
        (Some(e), None) if crate::examples::get(e).is_some() => Some(Source::Session {
            name: e.clone(),
            profile: None,
        }),
        (None, Some(p)) if scenario::preset(p).is_some() => Some(Source::Preset {
            preset: p.clone(),
            sets: r.set.clone(),
        }),
        _ => None,
    }
}

/// Which of `values` the run's value `v` matches.
pub fn matching_choice(values: &[toml::Value], v: &Value) -> Option<usize> {
    values.iter().position(|want| match want {
        toml::Value::String(s) => v.as_str() == Some(s.as_str()),
        toml::Value::Integer(i) => v.as_f64() == Some(*i as f64),
        toml::Value::Float(f) => v.as_f64() == Some(*f),
        toml::Value::Boolean(b) => v.as_bool() == Some(*b),
        toml::Value::Table(t) => {
            let x = v.as_f64();
            let num = |k: &str| {
                t.get(k)
                    .and_then(|y| y.as_float().or(y.as_integer().map(|i| i as f64)))
            };
            x.is_some_and(|x| num("min").is_none_or(|m| x >= m) && num("max").is_none_or(|m| x < m))
        }
        _ => false,
    })
}

/// A try link's URL (the page adds `lang` itself).
fn try_href(t: &Try) -> String {
    fn enc(s: &str) -> String {
        let mut o = String::new();
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                o.push(b as char);
            } else {
                o.push_str(&format!("%{b:02X}"));
            }
        }
        o
    }
    let mut q: Vec<(String, String)> = Vec::new();
    let path = match t.kind {
        TryKind::Sim => {
            q.push(("preset".into(), t.preset.clone().unwrap_or_default()));
            q.extend(t.set.iter().map(|s| ("set".into(), s.clone())));
            if let Some(h) = &t.hl {
                q.push(("hl".into(), h.clone()));
            }
            "/sim".to_string()
        }
        TryKind::Playground => {
            q.push(("example".into(), t.example.clone().unwrap_or_default()));
            if let Some(p) = &t.profile {
                q.push(("profile".into(), p.clone()));
            }
            "/playground".to_string()
        }
        TryKind::Lab => {
            let id = t.lab.clone().unwrap_or_default();
            for (k, v) in t.params.iter().flatten() {
                let v = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                // The troubleshooting lab's URL names a case by its number (labs.js).
                let v = if id == "trouble" && k == "case" {
                    case_number(&v).unwrap_or(v)
                } else {
                    v
                };
                q.push((k.clone(), v));
            }
            format!("/lab/{id}")
        }
    };
    if q.is_empty() {
        return path;
    }
    let qs: Vec<String> = q
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    format!("{path}?{}", qs.join("&"))
}

/// The troubleshooting lab's case `name` as its 1-based number in the lab's list.
fn case_number(name: &str) -> Option<String> {
    rdmalab::labs::catalogue()
        .into_iter()
        .find(|c| c.id == "trouble")?
        .params
        .into_iter()
        .find(|p| p.name == "case")
        .and_then(|p| match p.kind {
            rdmalab::labs::ParamKind::Choice { choices, .. } => {
                choices.iter().position(|c| *c == name)
            }
            _ => None,
        })
        .map(|i| (i + 1).to_string())
}

impl ChapterText {
    /// The page's JSON: every text rendered, every placeholder filled from its run, and each
    /// prediction's simulated answer.
    pub async fn render(&self, r: &Renderer<'_>) -> Value {
        let mut goals = Vec::new();
        for g in &self.goals {
            goals.push(r.inline(g).await);
        }
        let body = r.block(&self.body).await;
        let mut key_points = Vec::new();
        for k in &self.key_points {
            key_points.push(r.inline(k).await);
        }
        let mut mis = Vec::new();
        for m in &self.misconceptions {
            mis.push(json!({
                "wrong_html": r.inline(&m.wrong).await,
                "right_html": r.inline(&m.right).await,
            }));
        }
        let mut tries = Vec::new();
        for t in &self.tries {
            tries.push(json!({
                "kind": t.kind,
                "label": r.inline(&t.label).await,
                "explain_html": r.inline(&t.explain).await,
                "href": try_href(t),
            }));
        }
        let mut checks = Vec::new();
        for c in &self.checks {
            let mut choices = Vec::new();
            for x in &c.choices {
                choices.push(r.inline(x).await);
            }
            let simulated = match (&c.run, c.kind) {
                (Some(run), CheckKind::Predict) => match check_source(run) {
                    None => json!({ "error": "no such run" }),
                    Some(src) => match r.value(&src, &run.path).await {
                        Err(e) => json!({ "error": e }),
                        Ok(v) => json!({
                            "value": v,
                            "choice": matching_choice(&c.values, &v),
                        }),
                    },
                },
                _ => Value::Null,
            };
            let answer = match c.kind {
                CheckKind::Number => json!(
                    c.answer
                        .as_float()
                        .or(c.answer.as_integer().map(|x| x as f64))
                ),
                _ => json!(c.answer.as_integer()),
            };
            checks.push(json!({
                "kind": c.kind,
                "question_html": r.inline(&c.question).await,
                "choices_html": choices,
                "answer": answer,
                "unit": c.unit,
                "tolerance": c.tolerance,
                "explain_html": r.inline(&c.explain).await,
                "simulated": simulated,
            }));
        }
        let mut refs = Vec::new();
        for x in &self.references {
            refs.push(json!({ "tag": x.tag, "text_html": r.inline(&x.text).await }));
        }
        json!({
            "goals_html": goals,
            "body_html": body,
            "key_points_html": key_points,
            "misconceptions": mis,
            "tries": tries,
            "checks": checks,
            "references": refs,
        })
    }

    /// Every placeholder in every text of the chapter that does not parse, with why.
    pub fn bad_placeholders(&self) -> Vec<String> {
        let mut texts: Vec<&str> = vec![&self.body];
        texts.extend(self.goals.iter().map(String::as_str));
        texts.extend(self.key_points.iter().map(String::as_str));
        for m in &self.misconceptions {
            texts.push(&m.wrong);
            texts.push(&m.right);
        }
        for t in &self.tries {
            texts.push(&t.label);
            texts.push(&t.explain);
        }
        for c in &self.checks {
            texts.push(&c.question);
            texts.push(&c.explain);
            texts.extend(c.choices.iter().map(String::as_str));
        }
        texts
            .into_iter()
            .flat_map(placeholder::scan)
            .filter_map(|(_, p)| p.err())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictions_match_values_and_ranges() {
        let vals: Vec<toml::Value> =
            toml::from_str::<toml::Table>("v = [\"ok\", 8, { max = 0.5 }, { min = 0.5 }]").unwrap()
                ["v"]
                .as_array()
                .unwrap()
                .clone();
        assert_eq!(matching_choice(&vals, &json!("ok")), Some(0));
        assert_eq!(matching_choice(&vals, &json!(8)), Some(1));
        assert_eq!(matching_choice(&vals, &json!(0.2)), Some(2));
        assert_eq!(matching_choice(&vals, &json!(0.5)), Some(3));
        assert_eq!(matching_choice(&vals, &json!("no")), None);
    }

    #[test]
    fn teaching_length_skips_code_tables_and_placeholders() {
        let body = "## Title\n\nTwo words {{fig:lesson1 a int}} `code here`\n\n| a | b |\n\n```\nx y z\n```\n";
        assert_eq!(teaching_length(body, Lang::En), 3);
        assert_eq!(teaching_length("中文字 `代码` {{x}}", Lang::Zh), 3);
    }
}
