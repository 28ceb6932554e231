//! The course: overview, map and lessons in Chinese and English, embedded from `course/`
//! (format: `course/FORMAT.md`), and the figures in them, filled in by running presets.

use crate::AppState;
use crate::error::ApiError;
use axum::http::StatusCode;
use rust_embed::RustEmbed;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(RustEmbed)]
#[folder = "../../course/"]
#[include = "*/overview.md"]
#[include = "*/map.toml"]
#[include = "*/lessons/*.toml"]
#[include = "*/labs.toml"]
#[include = "*/chapters/*.toml"]
#[include = "*/glossary.toml"]
struct CourseFiles;

/// A language of the lab.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Lang {
    /// Simplified Chinese (the default).
    Zh,
    /// English.
    En,
}

impl Lang {
    /// `zh` or `en`, else a 404 naming what is allowed.
    pub fn parse(s: &str) -> Result<Lang, ApiError> {
        match s {
            "zh" => Ok(Lang::Zh),
            "en" => Ok(Lang::En),
            _ => Err(ApiError::field(
                StatusCode::NOT_FOUND,
                "lang",
                format!("no language {:?}", s.chars().take(10).collect::<String>()),
                "zh, en",
            )),
        }
    }

    /// The code used in paths.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Zh => "zh",
            Lang::En => "en",
        }
    }
}

/// One module of the map.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    /// `m1`..`m4`.
    pub id: String,
    /// Title.
    pub title: String,
    /// One or two sentences.
    pub summary: String,
    /// Its chapters.
    #[serde(rename = "chapter")]
    pub chapters: Vec<Chapter>,
}

/// One chapter.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    /// `m1c1`...
    pub id: String,
    /// Title.
    pub title: String,
    /// One sentence for the map.
    pub summary: String,
    /// Lessons that demonstrate it.
    #[serde(default)]
    pub lessons: Vec<u8>,
    /// Presets that demonstrate it.
    #[serde(default)]
    pub presets: Vec<String>,
    /// Labs that let the learner do what the chapter teaches (`playground` or a fabric lab's
    /// id).
    #[serde(default)]
    pub labs: Vec<String>,
}

/// The ids a chapter's `labs` may name: the verbs playground and the fabric labs.
pub fn lab_ids() -> Vec<&'static str> {
    std::iter::once("playground")
        .chain(rdmalab::labs::catalogue().into_iter().map(|l| l.id))
        .collect()
}

/// One case of the troubleshooting lab.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabCase {
    /// The lab's `case` parameter value.
    pub id: String,
    /// The cause, shown once the learner has guessed.
    pub title: String,
    /// What the application sees (Markdown).
    pub symptom: String,
    /// Which counters give it away (Markdown).
    pub cause: String,
    /// What to change (Markdown).
    pub fix: String,
}

/// One lab's text.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabText {
    /// `playground` or a fabric lab's id.
    pub id: String,
    /// Title.
    pub title: String,
    /// One sentence for the index.
    pub summary: String,
    /// What the experiment is (Markdown).
    pub intro: String,
    /// What to look at and try (Markdown).
    pub look: String,
    /// The troubleshooting lab's cases.
    #[serde(default, rename = "case")]
    pub cases: Vec<LabCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Labs {
    #[serde(rename = "lab")]
    labs: Vec<LabText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Map {
    #[serde(rename = "module")]
    modules: Vec<Module>,
}

/// One "try it" button of a lesson.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Try {
    /// The button's text.
    pub label: String,
    /// The preset it opens.
    pub preset: String,
    /// Overrides.
    #[serde(default)]
    pub set: Vec<String>,
    /// What to look at.
    pub explain: String,
}

/// A hands-on lesson.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// 1..=6.
    pub number: u8,
    /// Title.
    pub title: String,
    /// Stars, 1..=3.
    pub difficulty: u8,
    /// Minutes it takes.
    pub minutes: u32,
    /// The goal.
    pub goal: String,
    /// The comparison-table row it points at.
    pub highlight: String,
    /// Markdown with figure placeholders.
    pub text: String,
    /// Key points.
    pub key_points: Vec<String>,
    /// The "try it" buttons.
    #[serde(rename = "try")]
    pub tries: Vec<Try>,
}

/// One language's course.
#[derive(Debug)]
pub struct Course {
    overview: String,
    modules: Vec<Module>,
    chapters: HashMap<String, crate::chapter::ChapterText>,
    glossary: Vec<crate::glossary::Term>,
    lessons: Vec<Lesson>,
    labs: Vec<LabText>,
}

/// Row ids a lesson may highlight (`course/FORMAT.md`).
pub const ROW_IDS: &[&str] = &[
    "copies",
    "syscalls",
    "kernel",
    "transport_in",
    "cpu_stage_count",
    "cpu_stages_local",
    "cpu_stages",
    "cpu_per_message",
    "remote_cpu",
    "latency",
    "placed",
    "completion",
    "bus_bytes",
    "throughput",
    "retention",
    "loss_model",
    "recovery",
    "dcqcn",
    "cross_traffic",
    "retransmitted",
    "drops",
    "pfc",
    "setup_syscalls",
    "setup_kernel",
    "setup_cpu",
    "setup_duration",
    "latency_ratio",
    "outcome",
];

fn file(path: &str) -> Result<String, String> {
    let f = CourseFiles::get(path).ok_or_else(|| format!("course/{path} is missing"))?;
    String::from_utf8(f.data.into_owned()).map_err(|_| format!("course/{path} is not UTF-8"))
}

impl Course {
    /// Reads and checks one language's files.
    pub fn load(lang: Lang) -> Result<Course, String> {
        let l = lang.code();
        let overview = file(&format!("{l}/overview.md"))?;
        let map: Map = toml::from_str(&file(&format!("{l}/map.toml"))?)
            .map_err(|e| format!("course/{l}/map.toml: {e}"))?;
        let mut lessons = Vec::new();
        for n in 1..=6u8 {
            let path = format!("{l}/lessons/{n}.toml");
            let lesson: Lesson =
                toml::from_str(&file(&path)?).map_err(|e| format!("course/{path}: {e}"))?;
            if lesson.number != n {
                return Err(format!("course/{path}: number = {}", lesson.number));
            }
            if !ROW_IDS.contains(&lesson.highlight.as_str()) {
                return Err(format!(
                    "course/{path}: highlight = {:?} is not a row id",
                    lesson.highlight
                ));
            }
            for t in &lesson.tries {
                check_preset(&path, &t.preset)?;
            }
            lessons.push(lesson);
        }
        let labs: Labs = toml::from_str(&file(&format!("{l}/labs.toml"))?)
            .map_err(|e| format!("course/{l}/labs.toml: {e}"))?;
        let ids = lab_ids();
        if labs.labs.iter().map(|x| x.id.as_str()).collect::<Vec<_>>() != ids {
            return Err(format!(
                "course/{l}/labs.toml: the labs must be {} in that order",
                ids.join(", ")
            ));
        }
        for x in &labs.labs {
            let want: Vec<&str> = if x.id == "trouble" {
                rdmalab::labs::catalogue()
                    .into_iter()
                    .find(|c| c.id == "trouble")
                    .and_then(|c| c.params.into_iter().find(|p| p.name == "case"))
                    .map(|p| match p.kind {
                        rdmalab::labs::ParamKind::Choice { choices, .. } => choices,
                        _ => Vec::new(),
                    })
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            let got: Vec<&str> = x.cases.iter().map(|c| c.id.as_str()).collect();
            if got != want {
                return Err(format!(
                    "course/{l}/labs.toml: lab {} has cases {got:?}, the lab runs {want:?}",
                    x.id
                ));
            }
        }
        let mut chapters = HashMap::new();
        for m in &map.modules {
            for c in &m.chapters {
                if let Some(bad) = c.labs.iter().find(|x| !ids.contains(&x.as_str())) {
                    return Err(format!("course/{l}/map.toml {}: no lab {bad:?}", c.id));
                }
                for p in &c.presets {
                    check_preset(&format!("{l}/map.toml {}", c.id), p)?;
                }
                let path = format!("{l}/chapters/{}.toml", c.id);
                let text: crate::chapter::ChapterText =
                    toml::from_str(&file(&path)?).map_err(|e| format!("course/{path}: {e}"))?;
                if text.id != c.id {
                    return Err(format!("course/{path}: id = {:?}", text.id));
                }
                text.check(&format!("course/{path}"), lang)?;
                chapters.insert(c.id.clone(), text);
                if let Some(bad) = c.lessons.iter().find(|&&n| !(1..=6).contains(&n)) {
                    return Err(format!("course/{l}/map.toml {}: lesson {bad}", c.id));
                }
            }
        }
        let glossary = match CourseFiles::get(&format!("{l}/glossary.toml")) {
            Some(_) => crate::glossary::load(&file(&format!("{l}/glossary.toml"))?)
                .map_err(|e| format!("course/{l}/glossary.toml: {e}"))?,
            None => Vec::new(),
        };
        Ok(Course {
            overview,
            modules: map.modules,
            chapters,
            glossary,
            lessons,
            labs: labs.labs,
        })
    }

    /// The overview's Markdown.
    pub fn overview_md(&self) -> &str {
        &self.overview
    }

    /// The modules.
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    /// The lessons, 1..=6.
    pub fn lessons(&self) -> &[Lesson] {
        &self.lessons
    }

    /// The map without chapter bodies.
    pub fn modules_json(&self) -> Value {
        json!(
            self.modules
                .iter()
                .map(|m| json!({
                    "id": m.id,
                    "title": m.title,
                    "summary": m.summary,
                    "chapters": m.chapters.iter().map(|c| json!({
                        "id": c.id,
                        "title": c.title,
                        "summary": c.summary,
                        "lessons": c.lessons,
                        "presets": c.presets,
                        "labs": c.labs,
                    })).collect::<Vec<_>>(),
                }))
                .collect::<Vec<_>>()
        )
    }

    /// The lessons' headers.
    pub fn lessons_json(&self) -> Value {
        json!(
            self.lessons
                .iter()
                .map(|l| json!({
                    "number": l.number,
                    "title": l.title,
                    "goal": l.goal,
                    "difficulty": l.difficulty,
                    "minutes": l.minutes,
                    "preset": l.tries.first().map(|t| t.preset.clone()),
                }))
                .collect::<Vec<_>>()
        )
    }

    /// Chapter `id`'s own text.
    pub fn chapter_text(&self, id: &str) -> Option<&crate::chapter::ChapterText> {
        self.chapters.get(id)
    }

    /// The glossary, in its file's order.
    pub fn glossary(&self) -> &[crate::glossary::Term] {
        &self.glossary
    }

    /// Chapter `id` and its module.
    pub fn chapter(&self, id: &str) -> Option<(&Module, &Chapter)> {
        self.modules
            .iter()
            .find_map(|m| m.chapters.iter().find(|c| c.id == id).map(|c| (m, c)))
    }

    /// The chapter `step` places before (−1) or after (+1) chapter `id`: `{id, title}`.
    pub fn neighbour(&self, id: &str, step: isize) -> Value {
        let all: Vec<&Chapter> = self.modules.iter().flat_map(|m| &m.chapters).collect();
        let Some(i) = all.iter().position(|c| c.id == id) else {
            return Value::Null;
        };
        match i.checked_add_signed(step).and_then(|j| all.get(j)) {
            Some(c) => json!({ "id": c.id, "title": c.title }),
            None => Value::Null,
        }
    }

    /// The labs' texts, in index order.
    pub fn labs(&self) -> &[LabText] {
        &self.labs
    }

    /// The chapters that link to lab `id`: `[{id, title}]`.
    pub fn chapters_for_lab(&self, id: &str) -> Vec<Value> {
        self.modules
            .iter()
            .flat_map(|m| &m.chapters)
            .filter(|c| c.labs.iter().any(|x| x == id))
            .map(|c| json!({ "id": c.id, "title": c.title }))
            .collect()
    }

    /// Lesson `n`.
    pub fn lesson(&self, n: u8) -> Option<&Lesson> {
        self.lessons.iter().find(|l| l.number == n)
    }
}

fn check_preset(at: &str, p: &str) -> Result<(), String> {
    if scenario::preset(p).is_none() {
        return Err(format!("course/{at}: no preset {p:?}"));
    }
    Ok(())
}

/// Both languages' courses.
#[derive(Debug)]
pub struct Content {
    zh: Course,
    en: Course,
}

impl Content {
    /// Loads and checks the embedded course.
    pub fn load() -> Result<Content, String> {
        Ok(Content {
            zh: Course::load(Lang::Zh)?,
            en: Course::load(Lang::En)?,
        })
    }

    /// One language's course.
    pub fn course(&self, lang: Lang) -> &Course {
        match lang {
            Lang::Zh => &self.zh,
            Lang::En => &self.en,
        }
    }
}

/// Markdown to HTML (tables and strikethrough on; raw HTML in the source is escaped, since
/// the content is ours but the rule keeps pages safe if it ever is not).
pub fn markdown(md: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, html};
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(
        |e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
            e => e,
        },
    );
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

/// Markdown of one line to inline HTML (no surrounding paragraph).
pub fn inline_markdown(md: &str) -> String {
    let h = markdown(md);
    let t = h.trim();
    t.strip_prefix("<p>")
        .and_then(|x| x.strip_suffix("</p>"))
        .unwrap_or(t)
        .to_string()
}

/// One `{{fig:...}}` placeholder, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// `lesson1;key=value...`: the preset and its overrides, the cache key.
    pub run: String,
    /// The preset.
    pub preset: String,
    /// The overrides.
    pub sets: Vec<String>,
    /// The JSON path in the report.
    pub path: String,
    /// How to print it.
    pub format: crate::placeholder::Format,
}

impl Figure {
    /// Parses the inside of `{{fig:...}}`.
    pub fn parse(inner: &str) -> Result<Figure, String> {
        let mut parts = inner.split_whitespace();
        let (Some(run), Some(path), Some(format), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("{{{{fig:{inner}}}}}: expected PRESET PATH FORMAT"));
        };
        let mut it = run.split(';');
        let preset = it.next().unwrap_or_default().to_string();
        if scenario::preset(&preset).is_none() {
            return Err(format!("{{{{fig:{inner}}}}}: no preset {preset:?}"));
        }
        let format = crate::placeholder::Format::parse(format).ok_or_else(|| {
            format!(
                "{{{{fig:{inner}}}}}: format {format:?} is not one of {}",
                crate::placeholder::Format::names()
            )
        })?;
        Ok(Figure {
            run: run.to_string(),
            preset,
            sets: it.map(str::to_string).collect(),
            path: path.to_string(),
            format,
        })
    }

    /// The value at the path in a report (as every placeholder looks values up).
    pub fn lookup<'a>(&self, report: &'a Value) -> Option<&'a Value> {
        crate::placeholder::lookup(report, &self.path)
    }

    /// Prints `v` in the figure's format.
    pub fn print(&self, v: &Value) -> Option<String> {
        self.format.print(v)
    }
}

/// Every placeholder in `text`: (byte range, parsed or why not).
pub fn placeholders(text: &str) -> Vec<(std::ops::Range<usize>, Result<Figure, String>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("{{fig:") {
        let start = at + i;
        let Some(j) = text[start..].find("}}") else {
            out.push((start..text.len(), Err("an unclosed {{fig:".to_string())));
            break;
        };
        let end = start + j + 2;
        out.push((start..end, Figure::parse(&text[start + 6..end - 2])));
        at = end;
    }
    out
}

/// A figure's run: on a blocking thread under the figures' own permit (one at a time), never in
/// the users' queue, so a busy server delays a figure but never replaces it with a "busy"
/// notice; the same wall-clock limit as any run.
async fn run_figure(
    permit: tokio::sync::OwnedSemaphorePermit,
    plan: scenario::Plan,
) -> Result<Value, String> {
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut plan = plan;
        plan.budget.max_wall_s = plan
            .budget
            .max_wall_s
            .min(crate::api::RUN_WALL_LIMIT.as_secs());
        plan.budget.max_memory_mb = plan.budget.max_memory_mb.min(crate::api::MAX_RUN_MEMORY_MB);
        rdmalab::report::run_plan(&plan)
            .map_err(|e| e.to_string())
            .and_then(|r| serde_json::to_value(r).map_err(|e| e.to_string()))
    });
    match task.await {
        Ok(r) => r,
        Err(e) => Err(format!(
            "the figure's run stopped on an internal error: {e}"
        )),
    }
}

/// Reports of preset runs used by figures, run once per (preset, overrides) and kept.
#[derive(Debug, Default)]
pub struct Figures {
    cache: Mutex<HashMap<String, Arc<Result<Value, String>>>>,
}

impl Figures {
    /// The report of a figure's run, running it if nobody has yet.
    pub async fn report(&self, state: &AppState, f: &Figure) -> Arc<Result<Value, String>> {
        if let Some(r) = self.cache.lock().expect("no panic holds it").get(&f.run) {
            return r.clone();
        }
        let req = crate::api::RunRequest {
            preset: Some(f.preset.clone()),
            set: f.sets.clone(),
            ..Default::default()
        };
        let Ok(permit) = state.figure_runs.clone().acquire_owned().await else {
            return Arc::new(Err("the server is stopping".to_string()));
        };
        // Another page may have run it while this one waited for the permit.
        if let Some(r) = self.cache.lock().expect("no panic holds it").get(&f.run) {
            return r.clone();
        }
        let r = match crate::api::plan_of(&req) {
            Err(e) => Err(e.error),
            Ok((_, plan)) => run_figure(permit, plan).await,
        };
        let r = Arc::new(r);
        self.cache
            .lock()
            .expect("no panic holds it")
            .insert(f.run.clone(), r.clone());
        r
    }

    /// `text` with every placeholder replaced by its figure as plain text (or a visible note
    /// saying why it is missing).
    pub async fn render(&self, state: &AppState, text: &str) -> String {
        let mut out = String::new();
        let mut at = 0;
        for (range, fig) in placeholders(text) {
            out.push_str(&text[at..range.start]);
            at = range.end;
            let shown = match fig {
                Err(e) => format!("[figure unavailable: {e}]"),
                Ok(f) => match &*self.report(state, &f).await {
                    Err(e) => format!("[figure unavailable: {e}]"),
                    Ok(report) => match f.lookup(report).and_then(|v| f.print(v)) {
                        Some(s) => s,
                        None => format!("[figure unavailable: no {} in {}]", f.path, f.run),
                    },
                },
            };
            out.push_str(&shown);
        }
        out.push_str(&text[at..]);
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn row_ids_are_the_rows_of_the_page_table() {
        let js = include_str!("../assets/sim.js");
        let rows = &js[js.find("const ROWS = [").expect("sim.js has ROWS")..];
        let rows = &rows[..rows.find("\n];").expect("ROWS ends")];
        let mut ids: Vec<&str> = rows
            .lines()
            .filter_map(|l| l.strip_prefix("  ['")?.split('\'').next())
            .collect();
        let mut want: Vec<&str> = super::ROW_IDS.to_vec();
        ids.sort_unstable();
        want.sort_unstable();
        assert_eq!(ids, want);
    }

    use super::*;

    #[test]
    fn placeholders_parse_and_print() {
        let t = "a {{fig:lesson5;lossless.enabled=true rdma.throughput.retention pct}} b \
                 {{fig:lesson1 tcp.data_path.copies int}}";
        let p = placeholders(t);
        assert_eq!(p.len(), 2);
        let f = p[0].1.clone().unwrap();
        assert_eq!(f.preset, "lesson5");
        assert_eq!(f.sets, ["lossless.enabled=true"]);
        assert_eq!(f.path, "rdma.throughput.retention");
        assert_eq!(f.print(&json!(0.9876)).unwrap(), "98.8%");
        let r = json!({"tcp": {"data_path": {"copies": 2}}, "a": [{"b": 1500.0}]});
        let g = p[1].1.clone().unwrap();
        assert_eq!(g.lookup(&r), Some(&json!(2)));
        assert_eq!(g.print(&json!(2)).unwrap(), "2");
        let us = Figure::parse("lesson1 a.0.b us").unwrap();
        assert_eq!(us.print(us.lookup(&r).unwrap()).unwrap(), "1.50 µs");
        assert!(Figure::parse("lesson9 a int").is_err());
        assert!(Figure::parse("lesson1 a weird").is_err());
        assert!(Figure::parse("lesson1 a").is_err());
        assert!(
            placeholders("x {{fig:lesson1 a int")
                .last()
                .unwrap()
                .1
                .is_err()
        );
    }

    #[test]
    fn markdown_escapes_raw_html() {
        let h = markdown("hi <script>alert(1)</script> **b**");
        assert!(!h.contains("<script>") && h.contains("&lt;script&gt;") && h.contains("<strong>"));
        assert_eq!(inline_markdown("*a*"), "<em>a</em>");
    }
}
