//! Chapter text (Markdown with placeholders) to HTML in one language: every placeholder becomes
//! what its run says — a value marked as simulated, a diagram, a code region — or, if the run
//! cannot give it, a visible note (the tests require there are none).
//!
//! Placeholders are swapped for private-use tokens before Markdown runs and the fragments put
//! back after, so a figure's text is never read as Markdown and a diagram is never wrapped in a
//! paragraph.

use crate::AppState;
use crate::content::{Lang, markdown};
use crate::diagram::{esc, ladder, qpstate};
use crate::placeholder::{self, Placeholder, Source};

/// Opens and closes a token in the text Markdown sees (Unicode private use).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// The class of a placeholder that could not be filled: tests look for it.
pub const MISSING_CLASS: &str = "fig-missing";

/// Renders text for one page language.
pub struct Renderer<'a> {
    state: &'a AppState,
    lang: Lang,
}

fn missing(lang: Lang, why: &str) -> String {
    let lead = match lang {
        Lang::Zh => "图表不可用",
        Lang::En => "figure unavailable",
    };
    format!(
        r#"<span class="{MISSING_CLASS}" role="note">[{lead}: {}]</span>"#,
        esc(why)
    )
}

/// How a source is named in a simulated value's tooltip.
fn source_title(src: &Source, path: &str, lang: Lang) -> String {
    let what = match (src, lang) {
        (Source::Preset { preset, sets }, _) if sets.is_empty() => format!("rdmalab run {preset}"),
        (Source::Preset { preset, sets }, _) => {
            format!("rdmalab run {preset} --set {}", sets.join(" --set "))
        }
        (Source::Session { name, profile }, _) => format!(
            "rdmalab verbs run scenarios/verbs/{name}.toml{}",
            profile
                .as_deref()
                .map(|p| format!(" --profile {p}"))
                .unwrap_or_default()
        ),
        (Source::Lab { id, params }, _) => format!(
            "rdmalab lab {id}{}",
            params
                .iter()
                .map(|(k, v)| format!(" --set {k}={v}"))
                .collect::<String>()
        ),
    };
    let path = match (path, lang) {
        ("frames", Lang::Zh) => "的帧".to_string(),
        ("charts", Lang::Zh) => "的图表".to_string(),
        (p, _) => format!(" → {p}"),
    };
    match lang {
        Lang::Zh => format!("模拟结果：{what}{path}"),
        Lang::En => format!("simulated: {what}{path}"),
    }
}

impl<'a> Renderer<'a> {
    /// A renderer for `lang`.
    pub fn new(state: &'a AppState, lang: Lang) -> Renderer<'a> {
        Renderer { state, lang }
    }

    /// One placeholder's HTML.
    async fn fragment(&self, p: &Placeholder) -> String {
        let lang = self.lang;
        let doc = match p.source() {
            Some(src) => Some(self.state.runs.get(self.state, src).await),
            None => None,
        };
        let doc = match doc.as_deref() {
            Some(Err(e)) => return missing(lang, e),
            Some(Ok(v)) => Some(v),
            None => None,
        };
        match p {
            Placeholder::Value {
                source,
                path,
                format,
            } => {
                let doc = doc.expect("a value has a source");
                match placeholder::lookup(doc, path).and_then(|v| format.print(v)) {
                    Some(s) => format!(
                        r#"<span class="sim" title="{}">{}</span>"#,
                        esc(&source_title(source, path, lang)),
                        esc(&s)
                    ),
                    None => missing(lang, &format!("no {path} in {}", source.key())),
                }
            }
            Placeholder::Ladder { source, steps } => {
                let doc = doc.expect("a ladder has a source");
                match ladder::draw(doc, *steps, lang) {
                    Some(svg) => format!(
                        r#"<figure class="diagram-box ladder-box">{svg}<figcaption>{}</figcaption></figure>"#,
                        esc(&source_title(source, "frames", lang))
                    ),
                    None => missing(lang, &format!("{} put no frame there", source.key())),
                }
            }
            Placeholder::QpState { marked, qp_type } => format!(
                r#"<figure class="diagram-box qpstate-box">{}</figure>"#,
                qpstate::draw(marked, qp_type, lang)
            ),
            Placeholder::Pause { source } => {
                let doc = doc.expect("a timeline has a source");
                let Source::Lab { id, .. } = source else {
                    return missing(lang, "a timeline needs a lab");
                };
                let charts: Vec<&serde_json::Value> = doc
                    .get("charts")
                    .and_then(|c| c.as_array())
                    .map(|a| {
                        a.iter()
                            .filter(|c| {
                                matches!(
                                    c.get("id").and_then(|x| x.as_str()),
                                    Some("queue" | "pauses" | "paused" | "flows" | "delivered")
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if charts.is_empty() {
                    return missing(lang, &format!("lab {id} drew no queue or PAUSE chart"));
                }
                let json = serde_json::to_string(&charts).unwrap_or_default();
                format!(
                    r#"<figure class="diagram-box lab-timeline" data-lab="{}" data-charts="{}"><figcaption>{}</figcaption></figure>"#,
                    esc(id),
                    esc(&json),
                    esc(&source_title(source, "charts", lang))
                )
            }
            Placeholder::Code { file, region } => match crate::code::region(file, region, lang) {
                Err(e) => missing(lang, &e),
                Ok(r) => {
                    let cap = match lang {
                        Lang::Zh => format!("{}，第 {}–{} 行", r.file, r.lines.0, r.lines.1),
                        Lang::En => format!("{}, lines {}–{}", r.file, r.lines.0, r.lines.1),
                    };
                    // The session that issues the same verbs in the same order, one click away.
                    let open = crate::code::session_of(file)
                        .filter(|s| crate::examples::get(s).is_some())
                        .map(|s| {
                            let t = match lang {
                                Lang::Zh => format!("在 Verbs 实验台里运行同样的调用（会话 {s}）"),
                                Lang::En => format!("Run the same calls in the verbs playground (session {s})"),
                            };
                            format!(r#" · <a class="open-session" href="/playground?example={s}">{}</a>"#, esc(&t))
                        })
                        .unwrap_or_default();
                    format!(
                        r#"<figure class="code-box"><figcaption><a href="/api/course/{}/code/{file}" target="_blank" rel="noopener">{}</a>{open}</figcaption><pre><code class="language-c">{}</code></pre></figure>"#,
                        lang.code(),
                        esc(&cap),
                        esc(&r.text)
                    )
                }
            },
        }
    }

    /// `text` with its placeholders swapped for tokens, and the fragments in token order.
    async fn tokens(&self, text: &str) -> (String, Vec<(bool, String)>) {
        let mut out = String::with_capacity(text.len());
        let mut frags = Vec::new();
        let mut at = 0;
        for (range, p) in placeholder::scan(text) {
            out.push_str(&text[at..range.start]);
            at = range.end;
            let (block, html) = match p {
                Err(e) => (false, missing(self.lang, &e)),
                Ok(p) => (p.is_block(), self.fragment(&p).await),
            };
            out.push(OPEN);
            out.push_str(&frags.len().to_string());
            out.push(CLOSE);
            frags.push((block, html));
        }
        out.push_str(&text[at..]);
        (out, frags)
    }

    fn untoken(html: String, frags: &[(bool, String)]) -> String {
        let mut html = html;
        for (i, (block, f)) in frags.iter().enumerate() {
            let tok = format!("{OPEN}{i}{CLOSE}");
            if *block {
                html = html.replace(&format!("<p>{tok}</p>"), f);
            }
            html = html.replace(&tok, f);
        }
        html
    }

    /// Markdown with placeholders to HTML.
    pub async fn block(&self, md: &str) -> String {
        let (text, frags) = self.tokens(md).await;
        Self::untoken(markdown(&text), &frags)
    }

    /// One line of Markdown with placeholders to inline HTML (no paragraph around it).
    pub async fn inline(&self, md: &str) -> String {
        let (text, frags) = self.tokens(md).await;
        Self::untoken(crate::content::inline_markdown(&text), &frags)
    }

    /// A plain-text value of `src` at `path` (what a self-check's run gives), or why not.
    pub async fn value(&self, src: &Source, path: &str) -> Result<serde_json::Value, String> {
        let doc = self.state.runs.get(self.state, src).await;
        match &*doc {
            Err(e) => Err(e.clone()),
            Ok(d) => placeholder::lookup(d, path)
                .cloned()
                .ok_or_else(|| format!("no {path} in {}", src.key())),
        }
    }
}
