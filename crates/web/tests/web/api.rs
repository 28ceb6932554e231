//! The JSON API and the pages through `app().oneshot()`: what a browser or script gets,
//! including bad and oversized requests.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::OnceLock;
use tower::ServiceExt;
use web::{AppState, app};

fn state() -> AppState {
    // One state for the whole file: the figure cache is shared, so each preset runs once.
    static S: OnceLock<AppState> = OnceLock::new();
    S.get_or_init(|| AppState::new().expect("the embedded course loads"))
        .clone()
}

async fn call(req: Request<Body>) -> (StatusCode, Vec<u8>, header::HeaderMap) {
    let r = app(state()).oneshot(req).await.unwrap();
    let (parts, body) = r.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes().to_vec();
    (parts.status, bytes, parts.headers)
}

async fn get(path: &str) -> (StatusCode, Value) {
    let (s, b, _) = call(Request::get(path).body(Body::empty()).unwrap()).await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

async fn post(path: &str, body: &str) -> (StatusCode, Value) {
    let req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (s, b, _) = call(req).await;
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

async fn run(body: Value) -> (StatusCode, Value) {
    post("/api/run", &body.to_string()).await
}

/// The path of the first place two JSON values differ.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let here = format!("{at}.{k}");
                match y.get(k) {
                    Some(w) => {
                        if let Some(d) = first_difference(v, w, &here) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{here} missing")),
                }
            }
            (x.len() != y.len()).then(|| format!("{at}: keys differ"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{at}: {} vs {} items", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (v, w))| first_difference(v, w, &format!("{at}.{i}")))
        }
        _ => (a != b).then(|| format!("{at}: {a} vs {b}")),
    }
}

#[tokio::test]
async fn presets_and_schema() {
    let (s, v) = get("/api/presets").await;
    assert_eq!(s, StatusCode::OK);
    let keys: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["1", "2", "3", "4", "5", "5b", "6"]);
    let (s, v) = get("/api/schema").await;
    assert_eq!(s, StatusCode::OK);
    let op = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "rdma.operation")
        .unwrap();
    assert_eq!(op["default"], "write");
    assert!(op["choices"].as_array().unwrap().contains(&json!("send")));
    assert_eq!(v["limits"]["max_stream_us"], web::api::MAX_STREAM_US);
}

#[tokio::test]
async fn run_returns_the_plan_and_the_report_of_the_simulation() {
    let (s, v) = run(json!({"preset": "lesson1"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["preset"], "lesson1");
    assert_eq!(v["plan"]["workload.message_bytes"], 4096);
    let r = &v["report"];
    assert_eq!(r["tcp"]["data_path"]["copies"], 2);
    assert_eq!(r["rdma"]["data_path"]["copies"], 0);
    assert_eq!(r["rdma"]["remote_cpu"], "none");
    // The same report the library gives for the same plan.
    let plan = scenario::preset("lesson1").unwrap().plan().unwrap();
    let direct = serde_json::to_value(rdmalab::report::run_plan(&plan).unwrap()).unwrap();
    assert_eq!(first_difference(r, &direct, ""), None);

    // Overrides, a NIC profile, the circled name.
    let (s, v) = run(json!({"preset": "④", "profile": "rxe"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["report"]["rdma"]["outcome"]["code"], "EINVAL");
    assert_eq!(v["report"]["tcp"]["outcome"]["status"], "success");
    let (s, v) = run(json!({"preset": "1", "set": ["workload.message_bytes=65536"]})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["report"]["scenario"]["message_bytes"], 65536);
    // A whole scenario file.
    let (s, v) = run(json!({"scenario": "[workload]\nmessage_bytes = 1024\n"})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["plan"]["workload.message_bytes"], 1024);
    assert_eq!(v["preset"], Value::Null);
}

#[tokio::test]
async fn bad_requests_name_the_field_and_what_is_allowed() {
    let cases: Vec<(Value, StatusCode, &str)> = vec![
        (
            json!({"preset": "lesson9"}),
            StatusCode::NOT_FOUND,
            "preset",
        ),
        (json!({}), StatusCode::BAD_REQUEST, "preset"),
        (
            json!({"preset": "1", "scenario": "seed = 1"}),
            StatusCode::BAD_REQUEST,
            "scenario",
        ),
        (
            json!({"preset": "1", "set": ["rdma.bogus=1"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "rdma.bogus",
        ),
        (
            json!({"preset": "1", "set": ["rdma.mtu_bytes=1000"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "rdma.mtu_bytes",
        ),
        (
            json!({"preset": "1", "profile": "cx9"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "profile",
        ),
        (
            json!({"preset": "5", "set": ["workload.stream_us=100000"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "workload.stream_us",
        ),
        (
            json!({"preset": "1", "set": ["workload.messages=1000000"]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "workload.messages",
        ),
        (
            json!({"preset": "1", "set": vec!["seed=1"; 65]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "set",
        ),
        (
            json!({"preset": "1", "colour": "red"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "body",
        ),
        (
            json!({"scenario": "[workload\n"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "",
        ),
    ];
    for (body, status, field) in cases {
        let (s, v) = run(body.clone()).await;
        assert_eq!(s, status, "{body} → {v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
        if !field.is_empty() {
            assert_eq!(v["field"], field, "{body} → {v}");
            assert!(v["allowed"].as_str().is_some(), "{body} → {v}");
        }
    }
    // Not JSON at all, and not declared as JSON.
    let (s, v) = post("/api/run", "{nope").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["field"], "body");
    let req = Request::post("/api/run")
        .body(Body::from("{\"preset\":\"1\"}"))
        .unwrap();
    let (s, _, _) = call(req).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // Oversized: refused before it is parsed.
    let big = format!(
        "{{\"scenario\": \"{}\"}}",
        "#".repeat(web::MAX_BODY_BYTES + 1)
    );
    let (s, v) = post("/api/run", &big).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    assert!(v["error"].as_str().unwrap().contains("larger than"));
    // Wrong method, unknown endpoint.
    let (s, _) = get("/api/run").await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    let (s, v) = get("/api/nothing").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(v["error"].as_str().unwrap().contains("/api/nothing"));
}

#[tokio::test]
async fn the_course_has_four_modules_thirty_chapters_and_six_lessons_in_both_languages() {
    for lang in ["zh", "en"] {
        let (s, v) = get(&format!("/api/course/{lang}")).await;
        assert_eq!(s, StatusCode::OK);
        let modules = v["modules"].as_array().unwrap();
        assert_eq!(modules.len(), 4);
        let chapters: Vec<&Value> = modules
            .iter()
            .flat_map(|m| m["chapters"].as_array().unwrap())
            .collect();
        assert_eq!(chapters.len(), 30);
        assert_eq!(v["lessons"].as_array().unwrap().len(), 6);
        let overview = v["overview_html"].as_str().unwrap();
        assert!(overview.len() > 1000 && !overview.contains("figure unavailable"));
        // Every chapter page has a body; every demo link names a real lesson or preset.
        for c in chapters {
            let id = c["id"].as_str().unwrap();
            let (s, ch) = get(&format!("/api/course/{lang}/chapter/{id}")).await;
            assert_eq!(s, StatusCode::OK, "{id}");
            let body = ch["body_html"].as_str().unwrap();
            assert!(body.len() > 200, "{lang} {id} is nearly empty");
            assert!(!body.contains("figure unavailable"), "{lang} {id}");
            for p in ch["presets"].as_array().unwrap() {
                assert!(scenario::preset(p.as_str().unwrap()).is_some(), "{p}");
            }
        }
    }
}

/// Text a Chinese learner reads, stripped of code, diagrams and markup.
fn prose(html: &str) -> String {
    let mut s = html.to_string();
    // Code, drawings and the drawings' data tables (state and attribute names, opcodes).
    for (open, close) in [
        ("<pre", "</pre>"),
        ("<svg", "</svg>"),
        ("<code", "</code>"),
        ("<details class=\"diagram-table\"", "</details>"),
    ] {
        while let Some(i) = s.find(open) {
            let Some(j) = s[i..].find(close) else { break };
            s.replace_range(i..i + j + close.len(), " ");
        }
    }
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The longest run of consecutive English words (letters only) in `text`.
fn longest_english_run(text: &str) -> (usize, String) {
    let mut best = (0, String::new());
    let mut run: Vec<&str> = Vec::new();
    for w in text.split(|c: char| c.is_whitespace() || ",.;:()".contains(c)) {
        if w.is_empty() {
            continue;
        }
        if w.chars().all(|c| c.is_ascii_alphabetic() || c == '\'') && w.len() > 1 {
            run.push(w);
            if run.len() > best.0 {
                best = (run.len(), run.join(" "));
            }
        } else {
            run.clear();
        }
    }
    best
}

/// Every chapter in both languages is a whole lesson filled from runs: goals, a body whose
/// every placeholder became a simulated value, a diagram or code (none left unfilled), tries
/// that open a real page, self-checks whose predictions the model confirms, references; and on
/// a Chinese page no English sentence outside code and citations.
#[tokio::test]
async fn chapters_are_filled_from_runs_and_predictions_agree_with_the_model() {
    let mut diagrams = 0;
    let mut predictions = 0;
    let mut checks_by_lang: std::collections::BTreeMap<String, Vec<(Value, Value)>> =
        Default::default();
    for lang in ["zh", "en"] {
        let (_, v) = get(&format!("/api/course/{lang}")).await;
        for m in v["modules"].as_array().unwrap() {
            for c in m["chapters"].as_array().unwrap() {
                let id = c["id"].as_str().unwrap();
                let (s, ch) = get(&format!("/api/course/{lang}/chapter/{id}")).await;
                assert_eq!(s, StatusCode::OK, "{lang} {id}");
                let all = ch.to_string();
                assert!(
                    !all.contains(web::render::MISSING_CLASS),
                    "{lang} {id}: {all:.3000}"
                );
                assert!(!all.contains("{{"), "{lang} {id}: a raw placeholder");
                let body = ch["body_html"].as_str().unwrap();
                diagrams += body.matches("<svg class=\"diagram").count();
                assert!(
                    body.contains("class=\"sim\""),
                    "{lang} {id}: no simulated value"
                );
                for key in [
                    "goals_html",
                    "key_points_html",
                    "misconceptions",
                    "tries",
                    "checks",
                    "references",
                ] {
                    assert!(
                        !ch[key].as_array().unwrap().is_empty(),
                        "{lang} {id}: no {key}"
                    );
                }
                for t in ch["tries"].as_array().unwrap() {
                    let href = t["href"].as_str().unwrap();
                    assert!(
                        ["/sim?preset=", "/playground?example=", "/lab/"]
                            .iter()
                            .any(|p| href.starts_with(p)),
                        "{lang} {id}: {href}"
                    );
                    if let Some(ex) = href.strip_prefix("/playground?example=") {
                        let name = ex.split('&').next().unwrap();
                        let (s, e) = get(&format!("/api/verbs/example/{name}")).await;
                        assert_eq!(s, StatusCode::OK, "{href}");
                        assert!(e["session"].as_str().unwrap().contains("[[step]]"));
                    }
                }
                // Every quoted program region opens the session that issues the same calls
                // (the RDMA CM programs have none: the CM is not simulated).
                for fig in body.split("<figure class=\"code-box\">").skip(1) {
                    let cap = &fig[..fig.find("</figcaption>").unwrap()];
                    if !cap.contains("/code/cm_") {
                        assert!(
                            cap.contains("class=\"open-session\" href=\"/playground?example="),
                            "{lang} {id}: {cap}"
                        );
                    }
                }
                // Markdown that did not render (CommonMark's emphasis rules next to CJK
                // punctuation leave `**` as text).
                assert!(
                    !prose(&all).contains("**"),
                    "{lang} {id}: a literal ** in the page"
                );
                let checks = ch["checks"].as_array().unwrap();
                assert!(
                    (3..=5).contains(&checks.len()),
                    "{lang} {id}: {} self-checks",
                    checks.len()
                );
                let n: u32 = id.split('c').nth(1).unwrap().parse().unwrap();
                if id.starts_with("m2") || id.starts_with("m3") {
                    assert!(
                        checks.iter().any(|q| q["kind"] == "predict"),
                        "{lang} {id}: no prediction"
                    );
                }
                if (5..=28).contains(&n) {
                    assert!(
                        body.contains("<svg class=\"diagram") || body.contains("lab-timeline"),
                        "{lang} {id}: no diagram"
                    );
                }
                for q in checks {
                    assert!(
                        !q["explain_html"].as_str().unwrap().trim().is_empty(),
                        "{lang} {id}"
                    );
                }
                let key: Vec<(Value, Value)> = checks
                    .iter()
                    .map(|q| (q["kind"].clone(), q["answer"].clone()))
                    .collect();
                if let Some(other) = checks_by_lang.insert(id.to_string(), key.clone()) {
                    assert_eq!(other, key, "{id}: the two languages' self-checks differ");
                }
                for (k, q) in checks.iter().enumerate() {
                    if q["kind"] == "predict" {
                        predictions += 1;
                        assert_eq!(
                            q["simulated"]["choice"],
                            q["answer"],
                            "{lang} {id} check {}: the model gives {}, the answer says choice {}",
                            k + 1,
                            q["simulated"]["value"],
                            q["answer"]
                        );
                    }
                }
                if lang == "zh" {
                    let mut texts = vec![body.to_string()];
                    for key in ["goals_html", "key_points_html"] {
                        texts.extend(
                            ch[key]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|x| x.as_str().unwrap().to_string()),
                        );
                    }
                    for q in ch["checks"].as_array().unwrap() {
                        texts.push(q["question_html"].as_str().unwrap().to_string());
                        texts.push(q["explain_html"].as_str().unwrap().to_string());
                    }
                    for t in &texts {
                        let (n, words) = longest_english_run(&prose(t));
                        assert!(n < 5, "zh {id}: English on a Chinese page: {words:?}");
                    }
                }
            }
        }
    }
    assert!(diagrams >= 100, "{diagrams} diagrams in the chapters");
    assert!(predictions >= 80, "{predictions} predictions checked");
}

#[tokio::test]
async fn examples_programs_and_the_glossary_are_served() {
    let (s, v) = get("/api/verbs/examples").await;
    assert_eq!(s, StatusCode::OK);
    assert!(v["examples"].as_array().unwrap().len() >= 50);
    let (s, v) = get("/api/verbs/example/..%2Fx").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert_eq!(v["field"], "example");
    // A program that does not exist names the field and lists the programs there are.
    let (s, v) = get("/api/course/en/code/..%2F..%2FCargo.toml").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert_eq!(v["field"], "file");
    assert!(v["allowed"].as_str().unwrap().contains("rc_write.c"), "{v}");
    let (s, v) = get("/api/course/fr/glossary").await;
    assert_eq!(
        (s, v["field"].as_str()),
        (StatusCode::NOT_FOUND, Some("lang")),
        "{v}"
    );
    for lang in ["zh", "en"] {
        let (s, body, h) = call(
            Request::get(format!("/api/course/{lang}/code/rc_write.c"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        assert!(
            h[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/plain")
        );
        let text = String::from_utf8(body).unwrap();
        assert!(
            text.contains("ibv_post_send") && !text.contains("// zh:") && !text.contains("// en:")
        );
        assert_eq!(text.contains("网络字节序"), lang == "zh");
        let (s, g) = get(&format!("/api/course/{lang}/glossary")).await;
        assert_eq!(s, StatusCode::OK);
        let terms = g["terms"].as_array().unwrap();
        assert!(terms.len() >= 100);
        let qp = terms.iter().find(|t| t["id"] == "qp").unwrap();
        assert!(qp["text_html"].as_str().unwrap().len() > 100);
    }
    // Every /glossary#id a chapter links is a term.
    let (_, g) = get("/api/course/en/glossary").await;
    let ids: Vec<&str> = g["terms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let (_, v) = get("/api/course/en").await;
    for m in v["modules"].as_array().unwrap() {
        for c in m["chapters"].as_array().unwrap() {
            let (_, ch) = get(&format!(
                "/api/course/en/chapter/{}",
                c["id"].as_str().unwrap()
            ))
            .await;
            let all = ch.to_string();
            for part in all.split("/glossary#").skip(1) {
                let id: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                assert!(ids.contains(&id.as_str()), "{}: /glossary#{id}", c["id"]);
            }
        }
    }
}

/// Every figure a lesson quotes comes out of a run: the placeholders are filled with what the
/// preset produced, in the placeholder's format.
#[tokio::test]
async fn lessons_quote_figures_from_their_presets() {
    for lang in ["zh", "en"] {
        for n in 1..=6 {
            let (s, l) = get(&format!("/api/course/{lang}/lesson/{n}")).await;
            assert_eq!(s, StatusCode::OK);
            let text = l["text_html"].as_str().unwrap();
            assert!(!text.contains("{{fig:"), "{lang} {n}: a raw placeholder");
            assert!(!text.contains("figure unavailable"), "{lang} {n}: {text}");
            assert!(!l["try"].as_array().unwrap().is_empty());
            assert!(web::content::ROW_IDS.contains(&l["highlight"].as_str().unwrap()));
        }
    }
    // Lesson 2 quotes TCP's copies and RDMA's latency: they equal the run's own numbers.
    let course = web::content::Content::load().unwrap();
    let raw = &course.course(web::content::Lang::En).lessons()[1].text;
    let report = serde_json::to_value(
        rdmalab::report::run_plan(&scenario::preset("lesson1").unwrap().plan().unwrap()).unwrap(),
    )
    .unwrap();
    let (_, l) = get("/api/course/en/lesson/2").await;
    let text = l["text_html"].as_str().unwrap();
    let mut checked = 0;
    for (_, f) in web::content::placeholders(raw) {
        let f = f.unwrap();
        if f.run == "lesson1" {
            let shown = f.print(f.lookup(&report).unwrap()).unwrap();
            assert!(
                text.contains(&shown),
                "{} → {shown} not in the page",
                f.path
            );
            checked += 1;
        }
    }
    assert!(checked > 3, "lesson 2 quotes lesson1's figures");
    let (s, v) = get("/api/course/fr").await;
    assert_eq!(
        (s, v["field"].as_str()),
        (StatusCode::NOT_FOUND, Some("lang"))
    );
    let (s, _) = get("/api/course/en/lesson/9").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = get("/api/course/en/chapter/m9c99").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pages_and_assets_are_embedded_and_compressed() {
    for path in ["/", "/overview", "/sim", "/lesson/3", "/chapter/m1c1"] {
        let (s, b, h) = call(Request::get(path).body(Body::empty()).unwrap()).await;
        assert_eq!(s, StatusCode::OK, "{path}");
        assert!(
            h[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        assert!(String::from_utf8(b).unwrap().contains("/assets/app.js"));
    }
    let req = Request::get("/assets/sim.js")
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(Body::empty())
        .unwrap();
    let (s, _, h) = call(req).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h[header::CONTENT_ENCODING], "gzip");
    assert!(
        h[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .contains("javascript")
    );
    let (s, _, _) = call(Request::get("/nope").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _, _) = call(Request::get("/assets/none.js").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // No request leaves the machine: no asset names another origin.
    let mut first_load = 0;
    for f in [
        "index.html",
        "style.css",
        "app.js",
        "i18n.js",
        "course.js",
        "sim.js",
        "draw.js",
    ] {
        let (s, b, _) = call(
            Request::get(format!("/assets/{f}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{f}");
        let text = String::from_utf8(b.clone()).unwrap();
        assert!(
            !text.contains("http://") && !text.contains("https://"),
            "{f} refers to another origin"
        );
        first_load += b.len();
    }
    assert!(first_load < 300_000, "{first_load} bytes");
}

/// Issue 11: a panic inside a simulation (a bug) is caught at the request boundary: 500 with
/// a report naming the panic and the scenario, and the server keeps answering.
#[tokio::test]
async fn a_panic_inside_a_simulation_is_a_500_with_a_report_and_the_server_goes_on() {
    let (s, v) = post("/api/debug/panic", "{}").await;
    assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("file the report"),
        "{v}"
    );
    assert!(
        v["report"]["panic"]
            .as_str()
            .unwrap()
            .contains("deliberate panic")
    );
    assert_eq!(
        v["report"]["scenario"]["workload.message_bytes"],
        json!(4096)
    );
    // The same app keeps serving runs and pages.
    let (s, v) = run(json!({ "preset": "lesson1" })).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, _) = get("/api/presets").await;
    assert_eq!(s, StatusCode::OK);
}

/// Issue 11: with every core busy and the queue full, a run is refused at once with 503 and
/// `Retry-After`, while pages and the course are still served; a free core runs it again.
#[tokio::test]
async fn a_full_queue_answers_503_with_retry_after_and_pages_still_load() {
    let mut st = AppState::new().unwrap();
    st.queue_limit = 0;
    let cores = st.sims.available_permits();
    let held = st
        .sims
        .clone()
        .acquire_many_owned(cores as u32)
        .await
        .unwrap();
    let body = json!({ "preset": "lesson1" }).to_string();
    let req = |b: &str| {
        Request::post("/api/run")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(b.to_string()))
            .unwrap()
    };
    let r = app(st.clone()).oneshot(req(&body)).await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()[header::RETRY_AFTER], "1");
    let page = app(st.clone())
        .oneshot(Request::get("/sim").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK, "pages load while runs wait");
    let course = app(st.clone())
        .oneshot(Request::get("/api/course/en").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(course.status(), StatusCode::OK);
    // Issue 21: a lesson's figures run outside the users' queue, so they are there while
    // every core is taken and nobody may wait, never replaced by a "busy" notice.
    let lesson = app(st.clone())
        .oneshot(
            Request::get("/api/course/en/lesson/1")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(lesson.status(), StatusCode::OK);
    let text = lesson.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&text);
    assert!(
        !text.contains("figure unavailable"),
        "figures computed while the queue is full"
    );
    drop(held);
    let r = app(st).oneshot(req(&body)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "a free core runs it");
}

/// A request dropped while it waits for a core (the client hung up) stops counting as
/// waiting: abandoned requests must not fill the queue for good.
#[tokio::test]
async fn a_request_dropped_while_waiting_leaves_the_queue() {
    use std::sync::atomic::Ordering;
    let st = AppState::new().unwrap();
    let cores = st.sims.available_permits();
    let held = st
        .sims
        .clone()
        .acquire_many_owned(cores as u32)
        .await
        .unwrap();
    let req = Request::post("/api/run")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(json!({ "preset": "lesson1" }).to_string()))
        .unwrap();
    // The request waits for a core; the client gives up after 200 ms.
    let waited = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        app(st.clone()).oneshot(req),
    )
    .await;
    assert!(waited.is_err(), "every core is held: the run waits");
    assert_eq!(
        st.waiting.load(Ordering::SeqCst),
        0,
        "nobody waits any more"
    );
    drop(held);
    assert_eq!(st.sims.available_permits(), cores);
}

/// Issue 11: a web run past its budget is a 422 naming the budget key.
#[tokio::test]
async fn a_run_past_its_budget_is_a_422_naming_the_key() {
    let (s, v) = run(json!({ "preset": "lesson5", "set": ["budget.max_events=1000"] })).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["field"], "budget.max_events", "{v}");
    assert!(v["error"].as_str().unwrap().contains("raise it"), "{v}");
}

/// `POST /api/verbs` runs a session file as `rdmalab verbs run --json` does; a broken file is
/// a 422 with its line and column.
#[tokio::test]
async fn verbs_sessions_run_through_the_api() {
    let body = json!({ "session": include_str!("../../../../scenarios/verbs/ud_datagram.toml"), "profile": "rxe" });
    let (s, v) = post("/api/verbs", &body.to_string()).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["passed"], json!(true), "{v}");
    let (s, v) = post("/api/verbs", r#"{"session":"hosts = 3"}"#).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["field"], "session");
    // A valid session with an unknown profile: the profile is what is named.
    let (s, v) = post(
        "/api/verbs",
        &json!({ "session": include_str!("../../../../scenarios/verbs/send.toml"), "profile": "x" })
            .to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["field"], "profile", "{v}");
}

#[tokio::test]
async fn labs_list_their_parameters_and_run_with_defaults_or_given_values() {
    let (s, list) = get("/api/labs").await;
    assert_eq!(s, StatusCode::OK);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "incast",
            "hol",
            "storm",
            "deadlock",
            "loss",
            "qps",
            "trouble",
            "nvmf",
            "allreduce"
        ]
    );
    let senders = &list[0]["params"][0];
    assert_eq!(
        (senders["name"].as_str(), senders["kind"].as_str()),
        (Some("senders"), Some("int"))
    );
    assert_eq!(
        (senders["min"].as_i64(), senders["max"].as_i64()),
        (Some(2), Some(16))
    );

    // Values as strings, as a URL query gives them; missing ones take their defaults.
    let (s, r) = post(
        "/api/lab/deadlock",
        r#"{"switches": "6", "duration_us": 1000}"#,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(
        r["params"],
        json!({"switches": 6, "fix": "none", "duration_us": 1000})
    );
    assert_eq!(r["verdict"]["deadlocked"], json!(true));
    assert!(r["events"].as_u64().unwrap() > 0);
    assert_eq!(r["charts"][0]["id"], "delivered");
    assert_eq!(r["charts"][0]["series"].as_array().unwrap().len(), 6);

    let (s, r) = post("/api/lab/trouble", r#"{"case": "mtu"}"#).await;
    assert_eq!(s, StatusCode::OK);
    let mtu = r["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["host"] == "switch" && c["name"] == "mtu_discards")
        .unwrap();
    assert!(mtu["value"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn bad_lab_requests_name_the_field_and_what_is_allowed() {
    for (path, body, status, field, allowed) in [
        (
            "/api/lab/incast",
            r#"{"senders": 99}"#,
            422,
            "senders",
            "an integer in 2..=16",
        ),
        (
            "/api/lab/incast",
            r#"{"pfc": "maybe"}"#,
            422,
            "pfc",
            "true or false",
        ),
        (
            "/api/lab/deadlock",
            r#"{"fix": "magic"}"#,
            422,
            "fix",
            "one of none, watchdog",
        ),
        (
            "/api/lab/hol",
            r#"{"bogus": 1}"#,
            422,
            "bogus",
            "senders, pfc, duration_us",
        ),
        (
            "/api/lab/hol",
            "[1, 2]",
            422,
            "body",
            "{\"name\": value, ...}",
        ),
        (
            "/api/lab/nope",
            "{}",
            404,
            "lab",
            "incast, hol, storm, deadlock, loss, qps, trouble, nvmf, allreduce",
        ),
    ] {
        let (s, e) = post(path, body).await;
        assert_eq!(s.as_u16(), status, "{path} {body}: {e}");
        assert_eq!(e["field"], field, "{path} {body}: {e}");
        assert_eq!(e["allowed"], allowed, "{path} {body}: {e}");
    }
    // Not JSON at all.
    let (s, e) = post("/api/lab/hol", "senders=3").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
}

#[tokio::test]
async fn the_verbs_model_and_the_labs_text_are_served() {
    let (s, m) = get("/api/verbs/model").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(m["states"].as_array().unwrap().len(), 7);
    assert!(
        m["attrs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["key"] == "sq_psn" && a["mask"] == "SQ_PSN")
    );
    for lang in ["zh", "en"] {
        let (s, t) = get(&format!("/api/course/{lang}/labs")).await;
        assert_eq!(s, StatusCode::OK);
        let labs = t["labs"].as_array().unwrap();
        assert_eq!(labs.len(), 10, "the playground and nine labs");
        for l in labs {
            assert!(
                l["intro_html"].as_str().unwrap().contains("<p>"),
                "{lang} {}",
                l["id"]
            );
            assert!(
                !l["chapters"].as_array().unwrap().is_empty(),
                "{lang}: no chapter links lab {}",
                l["id"]
            );
        }
        let trouble = labs.iter().find(|l| l["id"] == "trouble").unwrap();
        assert_eq!(trouble["cases"].as_array().unwrap().len(), 7);
        // The all-reduce lab links the AI-training chapter first, then ECMP's and DCQCN's.
        let ar = labs.iter().find(|l| l["id"] == "allreduce").unwrap();
        let ids: Vec<&str> = ar["chapters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        for c in ["m4c30", "m3c24", "m4c28"] {
            assert!(ids.contains(&c), "{lang}: allreduce links {ids:?}");
        }
        // Chapters name their labs.
        let (_, ch) = get(&format!("/api/course/{lang}/chapter/m4c27")).await;
        assert!(
            ch["labs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l == "deadlock")
        );
    }
    // The pages themselves are the shell.
    for p in ["/playground", "/labs", "/lab/incast"] {
        let (s, b, _) = call(Request::get(p).body(Body::empty()).unwrap()).await;
        assert_eq!(s, StatusCode::OK, "{p}");
        assert!(String::from_utf8_lossy(&b).contains("app.js"));
    }
}

/// Issue 21: every answer carries the security headers; embedded files carry an ETag and a
/// reload that has them gets 304 with no body.
#[tokio::test]
async fn pages_carry_security_headers_and_assets_revalidate_by_etag() {
    let (s, _, h) = call(Request::get("/sim").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"));
    assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
    let (_, _, h) = call(Request::get("/api/presets").body(Body::empty()).unwrap()).await;
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    let (s, b, h) = call(Request::get("/assets/sim.js").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::OK);
    assert!(!b.is_empty());
    let tag = h[header::ETAG].to_str().unwrap().to_string();
    assert!(tag.starts_with('"') && tag.len() > 10, "{tag}");
    let (s, b, h) = call(
        Request::get("/assets/sim.js")
            .header(header::IF_NONE_MATCH, &tag)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_MODIFIED);
    assert!(b.is_empty());
    assert_eq!(h[header::ETAG].to_str().unwrap(), tag);
    let (s, _, _) = call(
        Request::get("/assets/sim.js")
            .header(header::IF_NONE_MATCH, "\"stale\"")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "another tag gets the file");
}

/// Issue 21: errors the router makes itself (a wrong method, a body too large) are JSON with
/// `error`, like every other API error.
#[tokio::test]
async fn every_api_error_is_json() {
    let (s, b, h) = call(Request::get("/api/run").body(Body::empty()).unwrap()).await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    assert!(
        h[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert!(v["error"].is_string(), "{v}");
    assert!(v["allowed"].as_str().unwrap_or("").contains("POST"), "{v}");
    let big = format!(
        "{{\"preset\":\"lesson1\",\"x\":\"{}\"}}",
        "y".repeat(300_000)
    );
    let (s, v) = post("/api/run", &big).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(v["error"].is_string(), "{v}");
}

/// Issue 21: a server bound to loopback answers only to localhost names (a web page cannot
/// reach it through DNS rebinding), with a JSON 421 otherwise.
#[tokio::test]
async fn a_loopback_server_answers_only_localhost_hosts() {
    let mut st = state();
    st.hosts = std::sync::Arc::new(web::guard::HostPolicy::for_bind(
        std::net::IpAddr::from([127, 0, 0, 1]),
        &[],
    ));
    let get_as = |host: &'static str| {
        let st = st.clone();
        async move {
            let r = app(st)
                .oneshot(
                    Request::get("/api/presets")
                        .header(header::HOST, host)
                        .body(Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            let s = r.status();
            let b = r.into_body().collect().await.unwrap().to_bytes();
            (
                s,
                serde_json::from_slice::<Value>(&b).unwrap_or(Value::Null),
            )
        }
    };
    assert_eq!(get_as("localhost:7878").await.0, StatusCode::OK);
    assert_eq!(get_as("127.0.0.1:7878").await.0, StatusCode::OK);
    let (s, v) = get_as("rebind.example:7878").await;
    assert_eq!(s, StatusCode::MISDIRECTED_REQUEST);
    assert_eq!(v["field"], "Host", "{v}");
}

/// Issue 21: a run's answer is gzipped on the run's own thread when the client takes gzip,
/// and decodes to the same report.
#[tokio::test]
async fn a_run_answer_is_gzipped_when_asked() {
    let req = Request::post("/api/run")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(Body::from(json!({ "preset": "lesson1" }).to_string()))
        .unwrap();
    let (s, b, h) = call(req).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(h[header::CONTENT_ENCODING], "gzip");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&b[..]), &mut text).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["preset"], "lesson1");
    assert!(v["report"]["rdma"].is_object());
}

/// Issue 21: what one request may make the server hold is bounded: the counted memory of a
/// run (a 422 naming `budget.max_memory_mb`), the timeline of a huge first message, the bytes
/// a verbs session may show.
#[tokio::test]
async fn a_request_cannot_make_the_server_hold_unbounded_memory() {
    let (s, v) = run(json!({
        "preset": "lesson1",
        "set": ["workload.message_bytes=16777216", "budget.max_memory_mb=16"],
    }))
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["field"], "budget.max_memory_mb", "{v}");
    let (s, v) = run(json!({
        "preset": "lesson1",
        "set": ["workload.message_bytes=16777216"],
    }))
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let lat = &v["report"]["tcp"]["latency"];
    assert!(lat["timeline"].as_array().unwrap().len() <= 2048);
    assert!(
        lat["timeline_truncated"].as_u64().unwrap() > 0,
        "{}",
        lat["timeline_truncated"]
    );
    let mut session = String::from(
        "hosts = [\"a\", \"b\"]\n[[step]]\ncall = \"alloc\"\nhost = \"a\"\nas = \"m\"\nlen = 65536\n",
    );
    for _ in 0..17 {
        session.push_str("[[step]]\ncall = \"read_memory\"\nbuf = \"m\"\nlen = 65536\n");
    }
    let (s, v) = post("/api/verbs", &json!({ "session": session }).to_string()).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("at most 1048576"),
        "{v}"
    );
}

/// Issue 21: slow and idle clients cannot hold the server: a connection that has not sent its
/// headers within the timeout is closed, one over the connection limit gets a JSON 503, and
/// shutdown waits at most its grace for a half-sent request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_bounded_and_shutdown_is_too() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = web::server::ServeOptions {
        max_connections: 3,
        header_timeout: Duration::from_millis(400),
        shutdown_grace: Duration::from_millis(500),
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(web::server::serve_until(listener, state(), opts, async {
        let _ = stop_rx.await;
    }));
    // Three clients that send half a request head and stall.
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /api/presets HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        slow.push(s);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A fourth is over the limit: a JSON 503, at once.
    let mut over = TcpStream::connect(addr).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(2), over.read_to_string(&mut answer))
        .await
        .expect("answered at once")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("application/json") && answer.contains("\"error\""));
    // The stalled ones are closed by the header timeout.
    let started = Instant::now();
    for s in &mut slow {
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(3), s.read_to_end(&mut rest))
            .await
            .expect("the server closed the stalled connection");
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    // Their slots are free again: a whole request is answered.
    let mut ok = TcpStream::connect(addr).await.unwrap();
    ok.write_all(b"GET /api/presets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    ok.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // A half-sent request does not hold the shutdown past its grace.
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let asked = Instant::now();
    stop_tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(3), server)
        .await
        .expect("shutdown is bounded")
        .unwrap()
        .unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    drop(half);
}

#[tokio::test]
async fn a_labs_fabric_view_is_bounded_and_deterministic() {
    use rdmalab::labs::fabric_view::{FRAMES_PER_DIRECTION, MAX_FRAMES, MAX_SAMPLES};
    let mut pause: Option<Value> = None;
    for (lab, body) in [
        ("storm", r#"{}"#),
        ("hol", r#"{"senders": 8, "duration_us": 5000}"#),
        ("deadlock", r#"{"switches": 8, "duration_us": 5000}"#),
        ("incast", r#"{"dcqcn": "off", "ecn": false}"#),
    ] {
        let (s, a) = post(&format!("/api/lab/{lab}"), body).await;
        assert_eq!(s, StatusCode::OK, "{lab}: {a}");
        let (_, b) = post(&format!("/api/lab/{lab}"), body).await;
        let v = &a["fabric"];
        // Same parameters, same view, bit for bit.
        assert_eq!(v, &b["fabric"], "{lab}: two runs differ");
        let n = v["t_ps"].as_array().unwrap().len();
        assert!(n > 0 && n <= MAX_SAMPLES, "{lab}: {n} samples");
        // Sampled on the integer-ps clock, a window apart.
        let w = v["window_ps"].as_u64().unwrap();
        for (k, t) in v["t_ps"].as_array().unwrap().iter().enumerate() {
            assert_eq!(t.as_u64(), Some(w * (k as u64 + 1)), "{lab} sample {k}");
        }
        let nodes = v["nodes"].as_array().unwrap().len();
        let mut frames = 0;
        for l in v["links"].as_array().unwrap() {
            assert!(
                l["a"].as_u64().unwrap() < nodes as u64 && l["b"].as_u64().unwrap() < nodes as u64
            );
            assert_eq!(l["drops"].as_array().unwrap().len(), n);
            for d in l["dirs"].as_array().unwrap() {
                for key in [
                    "util_pct",
                    "queue_bytes",
                    "held_pct",
                    "paused",
                    "pauses",
                    "frames",
                    "ecn_marks",
                ] {
                    assert_eq!(d[key].as_array().unwrap().len(), n, "{lab} {key}");
                }
                for key in ["util_pct", "held_pct"] {
                    assert!(
                        d[key]
                            .as_array()
                            .unwrap()
                            .iter()
                            .all(|x| (0.0..=100.0).contains(&x.as_f64().unwrap())),
                        "{lab} {key}"
                    );
                }
            }
            let fs = l["frames"].as_array().unwrap();
            for dir in 0..2 {
                let mine = fs.iter().filter(|f| f["dir"] == dir).count();
                assert!(mine <= FRAMES_PER_DIRECTION, "{lab}: {mine} frames");
            }
            assert!(
                fs.windows(2)
                    .all(|p| p[0]["t_ps"].as_u64() <= p[1]["t_ps"].as_u64())
            );
            assert!(fs.len() as u64 <= l["frames_total"].as_u64().unwrap());
            frames += fs.len();
            // Each listed frame carries its bytes, bounded: headers and at most 64 payload
            // bytes, the rest named in `wire_elided`.
            for f in fs {
                let w = f["wire"].as_str().unwrap();
                assert!(
                    !w.is_empty()
                        && w.len() <= 2 * 200
                        && w.bytes()
                            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
                    "{lab}: {f}"
                );
            }
            pause = pause.or_else(|| fs.iter().find(|f| f["kind"] == "pause").cloned());
        }
        assert!(frames <= MAX_FRAMES, "{lab}: {frames} frames");
    }
    // A listed PAUSE decodes as the PFC frame it is.
    let pause = pause.expect("a PAUSE frame listed");
    let (s, d) = post(
        "/api/frame/dissect",
        &json!({ "wire": pause["wire"] }).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let kinds: Vec<_> = d["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.contains(&"macctl".to_string()), "{kinds:?}");
    // Labs without a switched fabric of streams carry no view.
    let (_, r) = post("/api/lab/trouble", r#"{}"#).await;
    assert!(r.get("fabric").is_none());
}

/// `POST /api/packets` (issue 19): each path's packet view of the run, bounded, the same
/// twice, its drop story equal to the frames it lists; a bad body is refused as `/api/run`
/// refuses it, naming the field.
#[tokio::test]
async fn packets_cut_a_bounded_window_of_the_runs_frames() {
    use rdmalab::report::packets::{MAX_FRAMES, MAX_PAUSES, MAX_QUEUE_SAMPLES};
    let body = json!({"preset": "lesson5"}).to_string();
    let (s, a) = post("/api/packets", &body).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    let (_, b) = post("/api/packets", &body).await;
    assert_eq!(a, b, "the same run, the same view");
    assert_eq!(a["mode"], "stream");
    for path in ["tcp", "rdma"] {
        let v = &a[path];
        assert!(v["frames"].as_array().unwrap().len() <= MAX_FRAMES);
        assert!(v["pauses"].as_array().unwrap().len() <= MAX_PAUSES);
        assert!(v["queue"].as_array().unwrap().len() <= MAX_QUEUE_SAMPLES);
    }
    let v = &a["rdma"];
    let psn = &v["story"]["drop"]["psn"];
    let lost = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| &f["psn"] == psn && f["kind"] == "data" && f["resend"] == false)
        .expect("the lost frame is in the window");
    assert!(lost["dropped_ns"].is_number(), "{lost}");
    assert_eq!(v["story"]["report"]["psn"], *psn);
    assert_eq!(v["story"]["resend"]["from"], *psn);
    // One path only: the other is null.
    let (_, one) = post(
        "/api/packets",
        &json!({"preset": "lesson5", "set": ["workload.paths=\"rdma\""]}).to_string(),
    )
    .await;
    assert!(
        one["tcp"].is_null() && one["rdma"]["story"].is_object(),
        "{one}"
    );
    // Bad bodies: the field and what it allows.
    let (s, e) = post("/api/packets", &json!({"preset": "lesson99"}).to_string()).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{e}");
    let (s, e) = post(
        "/api/packets",
        &json!({"preset": "lesson5", "set": ["workload.stream_us=999999999"]}).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["field"], "workload.stream_us", "{e}");
    let (s, e) = post("/api/packets", "{\"presett\": 1}").await;
    assert!(s.is_client_error() && e["error"].is_string(), "{s} {e}");
}

/// The packet inspector's route: a real frame from a session run, decoded field by field;
/// bad input answered with the field at fault.
#[tokio::test]
async fn a_session_frame_dissected() {
    let session = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/verbs/write.toml"),
    )
    .unwrap();
    let (s, report) = post("/api/verbs", &json!({ "session": session }).to_string()).await;
    assert_eq!(s, StatusCode::OK, "{report}");
    let frames: Vec<&Value> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["frames"].as_array().unwrap())
        .collect();
    let write = frames
        .iter()
        .find(|f| f["opcode"] == "RC RDMA_WRITE_ONLY")
        .expect("the session sends a WRITE");
    let wire = write["wire"].as_str().unwrap();
    // `len` counts the 4-byte FCS, which `wire` (like a pcap) leaves out.
    assert_eq!(
        wire.len() / 2 + 4,
        write["len"].as_u64().unwrap() as usize,
        "a short WRITE is sent whole"
    );
    assert!(
        wire.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "lowercase hex"
    );

    let (s, d) = post("/api/frame/dissect", &json!({ "wire": wire }).to_string()).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    let field = |kind: &str, name: &str| -> Value {
        d["headers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["kind"] == kind)
            .flat_map(|h| h["fields"].as_array().unwrap().clone())
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in {d}"))
    };
    let kinds: Vec<&str> = d["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        &kinds[..6],
        ["eth", "vlan", "ipv4", "udp", "bth", "reth"],
        "{kinds:?}"
    );
    assert_eq!(*kinds.last().unwrap(), "icrc");
    let op = field("bth", "OpCode");
    assert_eq!(op["meaning"]["words"], "RDMA WRITE Only");
    assert_eq!(
        (op["bit_offset"].as_u64(), op["bit_width"].as_u64()),
        (Some(0), Some(8))
    );
    // The fields the frame record already names agree with the decoded bytes.
    assert_eq!(field("bth", "DestQP")["value"], write["qpn"].to_string());
    assert_eq!(field("bth", "PSN")["value"], write["psn"].to_string());
    assert_eq!(
        field("reth", "R_Key")["value"],
        write["reth"]["rkey"].to_string()
    );
    assert_eq!(
        field("reth", "VA")["value"],
        write["reth"]["va"].to_string()
    );
    assert_eq!(field("udp", "Destination Port")["meaning"]["id"], "rocev2");
    assert_eq!(field("icrc", "ICRC")["meaning"]["verdict"], "good");
    assert_eq!(d["frame_check"]["ok"], true);
    let spec = d["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "bth")
        .unwrap()["spec"]
        .clone();
    assert_eq!(spec, "IBTA Vol 1 §9.2");
    // The ACK's syndrome, in its parts.
    let ack = frames
        .iter()
        .find(|f| f["opcode"] == "RC ACKNOWLEDGE")
        .unwrap();
    let (_, d) = post(
        "/api/frame/dissect",
        &json!({ "wire": ack["wire"] }).to_string(),
    )
    .await;
    let syn = d["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "aeth")
        .unwrap()["fields"][0]
        .clone();
    assert_eq!(syn["meaning"]["type"], "ack", "{syn}");

    // One flipped payload bit: shown, with the ICRC that no longer holds.
    let mut bad = wire.to_string();
    let at = bad.len() - 12;
    let c = if &bad[at..at + 1] == "0" { "1" } else { "0" };
    bad.replace_range(at..at + 1, c);
    let (s, d) = post("/api/frame/dissect", &json!({ "wire": bad }).to_string()).await;
    assert_eq!(s, StatusCode::OK);
    let icrc = d["headers"].as_array().unwrap().last().unwrap()["fields"][0]["meaning"].clone();
    assert_eq!(icrc["verdict"], "bad", "{icrc}");
    assert_eq!(d["frame_check"]["ok"], false);

    // Bad input: the field at fault, what it allows.
    for (body, field) in [
        (json!({ "wire": "0a0g" }), "wire"),
        (json!({ "wire": "abc" }), "wire"),
        (json!({ "wire": "" }), "wire"),
        (json!({ "wire": "00".repeat(10_000) }), "wire"),
        (
            json!({ "wire": wire, "elided": [1_000_000, 1_000_001] }),
            "elided",
        ),
        (json!({ "wire": wire, "elided": [10, 5] }), "elided"),
    ] {
        let (s, e) = post("/api/frame/dissect", &body.to_string()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
        assert_eq!(e["field"], field, "{e}");
        assert!(e["allowed"].as_str().is_some_and(|a| !a.is_empty()), "{e}");
    }
    let (s, e) = post("/api/frame/dissect", r#"{"wire": "00", "extra": 1}"#).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["field"], "body");
    // A truncated frame: decoded as far as it goes, and why it stops.
    let (s, d) = post(
        "/api/frame/dissect",
        &json!({ "wire": &wire[..100] }).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        d["stopped"]
            .as_str()
            .is_some_and(|e| e.contains("truncated")),
        "{d}"
    );
}

/// A long WRITE's frames carry their headers, the first 64 payload bytes and the ICRC; the
/// route puts the left-out bytes back as zeros and says the ICRC was not checked.
#[tokio::test]
async fn an_elided_frame_dissected() {
    let session = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/verbs/segment_mtu.toml"),
    )
    .unwrap();
    let (s, report) = post("/api/verbs", &json!({ "session": session }).to_string()).await;
    assert_eq!(s, StatusCode::OK, "{report}");
    let f = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["frames"].as_array().unwrap())
        .find(|f| f.get("wire_elided").is_some())
        .expect("a frame with more than 64 payload bytes")
        .clone();
    let [a, b] = [
        f["wire_elided"][0].as_u64().unwrap(),
        f["wire_elided"][1].as_u64().unwrap(),
    ];
    let wire = f["wire"].as_str().unwrap();
    assert_eq!(
        wire.len() as u64 / 2 + (b - a) + 4,
        f["len"].as_u64().unwrap(),
        "all but the FCS"
    );
    let (s, d) = post(
        "/api/frame/dissect",
        &json!({ "wire": wire, "elided": f["wire_elided"] }).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(d["len"].as_u64().unwrap() + 4, f["len"].as_u64().unwrap());
    assert_eq!(d["elided"], f["wire_elided"]);
    let last = d["headers"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "icrc");
    assert_eq!(last["fields"][0]["meaning"]["verdict"], "unchecked");
}

// ---------------------------------------------------------------------------------------------
// ibta: the inspector's citations and the AETH credit code, as the route answers them.

/// Every header and every field of a session's frames names the document that defines it,
/// the ECN bits their own RFC, and an ACK's credit field is read as a code: rxe's 31 is "no
/// credit count" (`count` null), not 31 credits.
#[tokio::test]
async fn ibta_every_dissected_field_cites_its_section() {
    let session = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/verbs/write.toml"),
    )
    .unwrap();
    let (s, report) = post("/api/verbs", &json!({ "session": session }).to_string()).await;
    assert_eq!(s, StatusCode::OK, "{report}");
    let frames: Vec<Value> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|st| st["frames"].as_array().unwrap().clone())
        .filter(|f| f["wire"].as_str().is_some_and(|w| !w.is_empty()))
        .collect();
    assert!(frames.len() >= 2, "{} frames", frames.len());
    let mut acks = 0;
    for f in &frames {
        let mut body = json!({ "wire": f["wire"] });
        if let Some(e) = f.get("wire_elided") {
            body["elided"] = e.clone();
        }
        let (s, d) = post("/api/frame/dissect", &body.to_string()).await;
        assert_eq!(s, StatusCode::OK, "{d}");
        for h in d["headers"].as_array().unwrap() {
            assert!(h["spec"].as_str().is_some_and(|x| !x.is_empty()), "{h}");
            for fl in h["fields"].as_array().unwrap() {
                let spec = fl["spec"].as_str().unwrap_or("");
                assert!(!spec.is_empty(), "{} {}: no section", h["kind"], fl["name"]);
                if h["kind"] == "ipv4" && fl["name"] == "ECN" {
                    assert_eq!(spec, "RFC 3168 §5");
                }
                if fl["meaning"]["id"] == "syndrome" && fl["meaning"]["type"] == "ack" {
                    acks += 1;
                    assert_eq!(fl["meaning"]["credits"], 31, "rxe's credit code");
                    assert!(fl["meaning"]["count"].is_null(), "{fl}");
                }
            }
        }
    }
    assert!(acks >= 1, "the session's ACK was dissected");
}

// ---- msgids: the page's message tables against the server's ids (issue 19, item 7) ----

/// The `{name}` placeholders of a template (`{{` and `}}` are literal braces).
fn msgids_placeholders(t: &str) -> std::collections::BTreeSet<String> {
    let t = t.replace("{{", "").replace("}}", "");
    t.split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(n, _)| n.to_string()))
        .collect()
}

/// Both message tables the page renders from (`msg-zh.json`, `msg-en.json`, as served) have
/// exactly the ids the server can emit (`MsgId::ALL`); the English table uses the server's
/// placeholders and the Chinese one no others (it may leave one out, as a duration error's
/// English reason). A missing, extra or misspelt id fails here, not silently on the page.
#[tokio::test]
async fn msgids_the_page_tables_cover_exactly_the_servers_message_ids() {
    use rdmalab::session::msg::{MsgId, placeholders};
    let ids: std::collections::BTreeSet<&str> = MsgId::ALL.iter().map(|m| m.id()).collect();
    assert!(ids.len() > 150, "{}", ids.len());
    for lang in ["zh", "en"] {
        let (s, table) = get(&format!("/assets/msg-{lang}.json")).await;
        assert_eq!(s, StatusCode::OK, "msg-{lang}.json");
        let table = table.as_object().expect("a JSON object of id → template");
        let keys: std::collections::BTreeSet<&str> = table.keys().map(String::as_str).collect();
        let missing: Vec<_> = ids.difference(&keys).collect();
        let extra: Vec<_> = keys.difference(&ids).collect();
        assert!(missing.is_empty(), "msg-{lang}.json lacks {missing:?}");
        assert!(
            extra.is_empty(),
            "msg-{lang}.json has ids the server never sends: {extra:?}"
        );
        for id in MsgId::ALL {
            let want: std::collections::BTreeSet<String> = placeholders(id.en())
                .into_iter()
                .map(String::from)
                .collect();
            let t = table[id.id()].as_str().expect("a template string");
            let got = msgids_placeholders(t);
            if lang == "en" {
                assert_eq!(got, want, "{} in msg-en.json: {t:?}", id.id());
            } else {
                assert!(
                    got.is_subset(&want),
                    "{} in msg-zh.json: {t:?} uses {got:?}",
                    id.id()
                );
            }
        }
    }
}

/// A refused session carries its reason as an id and arguments beside the English, and the
/// line and column; a report carries an id for every ok result piece and note, and the
/// English `text` fields stay as `verbs run --json` always wrote them.
#[tokio::test]
async fn msgids_refusals_and_reports_carry_message_ids() {
    let head =
        "hosts = [\"a\", \"b\"]\n[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_a\"\n";
    let (s, e) = post(
        "/api/verbs",
        &json!({ "session": format!("{head}cqe = -1\n") }).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(
        e["error"], "6:7: `cqe` is out of range: allowed 0..=8388608",
        "{e}"
    );
    assert_eq!(
        e["msg"],
        json!({"id": "refusal.out_of_range", "args": {"key": "cqe", "lo": 0, "hi": 8388608}})
    );
    assert_eq!(e["at"], json!([6, 7]));
    // A nested message: the step's context is itself an id.
    let (_, e) = post(
        "/api/verbs",
        &json!({ "session": "hosts = [\"a\", \"b\"]\n[[step]]\ncall = \"poll_cq\"\n" }).to_string(),
    )
    .await;
    assert_eq!(e["msg"]["id"], "refusal.needs_key", "{e}");
    assert_eq!(
        e["msg"]["args"]["what"],
        json!({"id": "ctx.step_call", "args": {"step": 1, "call": "poll_cq"}})
    );
    let session = "hosts = [\"a\", \"b\"]\n[[step]]\ncall = \"connect\"\nhosts = [\"a\", \"b\"]\npd = [\"pd_a\", \"pd_b\"]\ncq = [\"cq_a\", \"cq_b\"]\nqp = [\"qp_a\", \"qp_b\"]\n[[step]]\ncall = \"run\"\nfor = \"5us\"\n[[step]]\ncall = \"poll_cq\"\ncq = \"cq_a\"\nwait = \"2us\"\n";
    let (s, r) = post("/api/verbs", &json!({ "session": session }).to_string()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let steps = r["steps"].as_array().unwrap();
    let ids = |st: &Value| -> Vec<String> {
        st["result"]["msgs"]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|m| m["id"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(ids(&steps[0]), ["result.connected"]);
    assert_eq!(ids(&steps[1]), ["result.ran", "result.now"]);
    assert!(
        steps[1]["result"]["text"]
            .as_str()
            .unwrap()
            .starts_with("ran 5 µs of simulated time ("),
        "{}",
        steps[1]["result"]
    );
    assert_eq!(steps[2]["notes"].as_array().unwrap().len(), 1);
    assert_eq!(steps[2]["note_msgs"][0]["id"], "note.busy_polled");
    assert!(r.get("aborted_msg").is_none(), "only when it stopped early");
}

// ---- simfab: POST /api/fabric, the simulation page's fabric view ----

/// A view's last sample summed over every link: (PAUSE frames, drops, raw drops, ECN marks).
fn fabric_totals(view: &Value) -> (u64, u64, u64, u64) {
    let last = |a: &Value| a.as_array().unwrap().last().unwrap().as_u64().unwrap();
    let (mut p, mut d, mut r, mut e) = (0, 0, 0, 0);
    for l in view["links"].as_array().unwrap() {
        d += last(&l["drops"]);
        r += last(&l["raw_drops"]);
        for x in l["dirs"].as_array().unwrap() {
            p += last(&x["pauses"]);
            e += last(&x["ecn_marks"]);
        }
    }
    (p, d, r, e)
}

/// `POST /api/fabric`: each path's fabric view adds up to the report `POST /api/run` gives
/// for the same body — Σ PAUSE frames = `pfc_pauses`, drops (cross traffic's apart) =
/// `drops`, ECN marks = `ecn_marks` — for ⑤b with lossless on (PAUSE on the links) and ⑤
/// (drops); the same body gives the same answer; the bounds hold; and topologies the view
/// does not draw are refused by field.
#[tokio::test]
async fn the_fabric_view_adds_up_to_the_report() {
    use rdmalab::labs::fabric_view::{MAX_FRAMES, MAX_LINKS, RUN_SAMPLES};
    for (body, pauses_expected, drops_expected) in [
        (
            json!({"preset": "lesson5b", "set": ["lossless.enabled=true"]}),
            true,
            false,
        ),
        (json!({"preset": "lesson5"}), false, true),
        (json!({"preset": "lesson1"}), false, false),
    ] {
        let (s, a) = post("/api/fabric", &body.to_string()).await;
        assert_eq!(s, StatusCode::OK, "{body}: {a}");
        let (s, r) = run(body.clone()).await;
        assert_eq!(s, StatusCode::OK, "{body}: {r}");
        assert_eq!(a["mode"], r["report"]["scenario"]["mode"], "{body}");
        assert_eq!(a["seed"], r["report"]["scenario"]["seed"], "{body}");
        assert_eq!(a["max_links"], MAX_LINKS);
        let mut pauses_seen = 0;
        let mut drops_seen = 0;
        for path in ["tcp", "rdma"] {
            let rep = &r["report"][path];
            let x = &a[path];
            let view = &x["view"];
            let (p, d, raw, e) = fabric_totals(view);
            let want = |k: &str| rep[k].as_u64().unwrap();
            assert_eq!(p, want("pfc_pauses"), "{body} {path}: Σ PAUSE frames");
            assert_eq!(d - raw, want("drops"), "{body} {path}: drops");
            assert_eq!(e, want("ecn_marks"), "{body} {path}: ECN marks");
            // The answer carries the report's counts beside the view, and they are the run's.
            assert_eq!(x["pfc_pauses"].as_u64().unwrap(), want("pfc_pauses"));
            assert_eq!(x["drops"].as_u64().unwrap(), want("drops"));
            if path == "rdma" {
                pauses_seen += p;
                drops_seen += d - raw;
            }
            // The topology is the plan's: one switch, hosts as `topology.hosts`.
            let hosts = r["plan"]["topology.hosts"].as_u64().unwrap() as usize;
            let nodes = view["nodes"].as_array().unwrap();
            assert_eq!(
                nodes.iter().filter(|n| n["kind"] == "host").count(),
                hosts,
                "{body}"
            );
            assert_eq!(view["links"].as_array().unwrap().len(), hosts, "{body}");
            // Bounded: at most RUN_SAMPLES samples, MAX_FRAMES frames, each with its bytes.
            let n = view["t_ps"].as_array().unwrap().len();
            assert!((2..=RUN_SAMPLES).contains(&n), "{body} {path}: {n} samples");
            let frames: Vec<&Value> = view["links"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|l| l["frames"].as_array().unwrap())
                .collect();
            assert!(!frames.is_empty() && frames.len() <= MAX_FRAMES, "{body}");
            assert!(
                frames
                    .iter()
                    .all(|f| !f["wire"].as_str().unwrap().is_empty()),
                "{body}: every frame has its wire bytes"
            );
            // Lossless ⑤b: a PAUSE frame is among the frames kept, for the inspector.
            if pauses_expected && path == "rdma" {
                assert!(frames.iter().any(|f| f["kind"] == "pause"), "{body}");
            }
            // The last sample is the run's end; the windows are even.
            let t: Vec<u64> = view["t_ps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert!(t.windows(2).all(|w| w[0] < w[1]), "{body}");
            let w = view["window_ps"].as_u64().unwrap();
            assert!(
                t[..n - 1]
                    .iter()
                    .enumerate()
                    .all(|(k, &x)| x == w * (k as u64 + 1)),
                "{body} {path}: samples at the ends of windows"
            );
        }
        // RoCE's run: PAUSE frames on a lossless fabric, drops on a lossy one.
        assert_eq!(
            pauses_seen > 0,
            pauses_expected,
            "{body}: RDMA's PAUSE frames"
        );
        assert_eq!(drops_seen > 0, drops_expected, "{body}: RDMA's drops");
        // Deterministic: the same body, the same answer.
        let (_, b) = post("/api/fabric", &body.to_string()).await;
        assert_eq!(first_difference(&a, &b, ""), None, "{body}");
    }
    // Refused, by field, with the limit: topologies the view does not draw.
    for (sets, field, limit) in [
        (
            vec!["topology.kind=fat_tree", "topology.k=6"],
            "topology.k",
            "at most 4",
        ),
        (
            vec![
                "topology.kind=leaf_spine",
                "topology.hosts=2",
                "topology.spines=40",
            ],
            "topology.spines",
            "at most 31",
        ),
        (
            vec![
                "topology.kind=back_to_back",
                "topology.hosts=2",
                "loss.congestion_drop=0.0",
            ],
            "topology.kind",
            "switch, leaf_spine or fat_tree",
        ),
    ] {
        let body = json!({"preset": "lesson5", "set": sets});
        let (s, e) = post("/api/fabric", &body.to_string()).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {e}");
        assert_eq!(e["field"], field, "{body}: {e}");
        assert!(
            e["allowed"].as_str().unwrap().contains(limit),
            "{body}: {e}"
        );
    }
    // A fat tree of k = 4 (48 links) is drawn.
    let (s, a) = post(
        "/api/fabric",
        &json!({"preset": "lesson1", "set": ["topology.kind=fat_tree", "topology.k=4"]})
            .to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(a["rdma"]["view"]["links"].as_array().unwrap().len(), 48);
    // The body's own bounds are /api/run's.
    let (s, e) = post("/api/fabric", &json!({"preset": "lesson99"}).to_string()).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{e}");
    let (s, e) = post("/api/fabric", r#"{"preset": "lesson1", "extra": 1}"#).await;
    assert!(s.is_client_error(), "{e}");
    let sets: Vec<String> = (0..65).map(|_| "seed=1".to_string()).collect();
    let (s, e) = post(
        "/api/fabric",
        &json!({"preset": "lesson1", "set": sets}).to_string(),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["field"], "set");
}
