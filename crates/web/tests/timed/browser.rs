//! The real pages in headless Debian Chromium (driven over CDP by chromiumoxide): every page
//! loads; each preset's table equals the report the API gives; failures show at their step;
//! the boxes carry and light exactly the trace's intervals; the URL reproduces a run; the
//! language switches; speed. Screenshots of each page go to `target/screenshots/`.
//!
//! Chromium is `/usr/bin/chromium` (or `$RDMALAB_CHROMIUM`). Without it the test says so and
//! passes, unless `CI` is set: then a missing browser fails.

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::{Page, ScreenshotParams};
use futures_util::StreamExt;
use rdmalab::labs::{AllreduceLimit, NvmfLimit, NvmfLimitKind, NvmfWinner};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod ladder_phone;

fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("RDMALAB_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    p.exists().then_some(p)
}

fn shots_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Evaluates `js` in the page. Bounded: a browser that died mid-test (seen once, its process
/// left defunct under heavy load) fails the test after 60 s instead of hanging the run.
async fn eval<T: serde::de::DeserializeOwned>(page: &Page, js: &str) -> T {
    tokio::time::timeout(Duration::from_secs(60), page.evaluate(js))
        .await
        .unwrap_or_else(|_| panic!("{js}: no answer from the browser in 60 s"))
        .unwrap_or_else(|e| panic!("{js}: {e}"))
        .into_value()
        .unwrap_or_else(|e| panic!("{js}: {e}"))
}

/// Polls `cond` (a JS expression) until it is true.
async fn wait_for(page: &Page, cond: &str, what: &str) {
    let start = Instant::now();
    loop {
        // A CDP call that never answers (seen once under heavy load) counts as "not yet", so
        // the 30 s limit below still ends the wait.
        let ok: bool = tokio::time::timeout(
            Duration::from_secs(10),
            page.evaluate(format!("!!({cond})")),
        )
        .await
        .ok()
        .and_then(|r| r.ok())
        .and_then(|v| v.into_value().ok())
        .unwrap_or(false);
        if ok {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what} ({cond})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn open(page: &Page, url: &str) {
    let bound = Duration::from_secs(60);
    let no_answer = |what: &str| format!("{what} {url}: no answer from the browser in 60 s");
    tokio::time::timeout(bound, page.goto(url))
        .await
        .unwrap_or_else(|_| panic!("{}", no_answer("goto")))
        .unwrap();
    tokio::time::timeout(bound, page.wait_for_navigation())
        .await
        .unwrap_or_else(|_| panic!("{}", no_answer("navigation to")))
        .unwrap();
}

async fn open_sim(page: &Page, url: &str) {
    open(page, url).await;
    wait_for(
        page,
        "document.body.dataset.run === 'done' || document.body.dataset.run === 'error'",
        url,
    )
    .await;
}

async fn shot(page: &Page, name: &str) {
    page.save_screenshot(
        ScreenshotParams::builder().full_page(true).build(),
        shots_dir().join(format!("{name}.png")),
    )
    .await
    .unwrap();
}

/// What the page's table should hold for a row, from a path's report `p` within the whole
/// report `r` (as `sim.js` reads them).
fn expected(row: &str, p: &Value, r: &Value) -> Value {
    let g = |path: &str| {
        let mut v = p;
        for s in path.split('.') {
            v = &v[s];
        }
        v.clone()
    };
    match row {
        "outcome" => {
            if p["outcome"]["status"] == "success" {
                Value::from("success")
            } else {
                g("outcome.code")
            }
        }
        "copies" => g("data_path.copies"),
        "syscalls" => g("data_path.syscalls"),
        "kernel" => Value::from(vec![
            g("data_path.kernel_local"),
            g("data_path.kernel_remote"),
        ]),
        "transport_in" => g("transport_in"),
        "cpu_stage_count" => Value::from(vec![
            p["data_path"]["cpu_stages_local"].as_array().unwrap().len(),
            p["data_path"]["cpu_stages_remote"]
                .as_array()
                .unwrap()
                .len(),
        ]),
        "cpu_stages_local" => {
            Value::from(p["data_path"]["cpu_stages_local"].as_array().unwrap().len())
        }
        "cpu_stages" => Value::from(
            p["data_path"]["cpu_stages_remote"]
                .as_array()
                .unwrap()
                .len(),
        ),
        "cpu_per_message" => Value::from(vec![
            g("data_path.cpu_ns_per_message_local"),
            g("data_path.cpu_ns_per_message_remote"),
        ]),
        "remote_cpu" => g("remote_cpu"),
        "latency" => g("latency.delivered_ns"),
        "placed" => g("latency.placed_at_remote_ns"),
        "completion" => g("latency.local_completion_ns"),
        "bus_bytes" => Value::from(vec![
            g("memory_bus_bytes_per_delivered_byte.local"),
            g("memory_bus_bytes_per_delivered_byte.remote"),
        ]),
        "throughput" => g("throughput.gbps"),
        "retention" => g("throughput.retention"),
        "loss_model" => {
            let m = &p["throughput"]["model"];
            if m.is_null() || m["loss_events"] == 0 || m["predicted_retention"].is_null() {
                Value::Null
            } else {
                m["measured_over_predicted"].clone()
            }
        }
        "recovery" => g("recovery.loss_events"),
        "dcqcn" => g("recovery.dcqcn.cnps_sent"),
        "cross_traffic" => g("cross_traffic.bytes_offered"),
        "latency_ratio" => {
            if p["path"] == "rdma" {
                r["rdma_over_tcp_latency"].clone()
            } else {
                Value::Null
            }
        }
        "retransmitted" => g("retransmitted_bytes"),
        "drops" => Value::from(vec![g("drops"), g("pfc_pauses"), g("ecn_marks")]),
        "setup_syscalls" => g("setup.syscalls"),
        "setup_kernel" => Value::from(vec![g("setup.kernel_local"), g("setup.kernel_remote")]),
        "setup_cpu" => Value::from(vec![g("setup.cpu_ns_local"), g("setup.cpu_ns_remote")]),
        "setup_duration" => g("setup.duration_ns"),
        // The thresholds the simulated fabric derived, in the RDMA column.
        "pfc" => {
            let f = &r["scenario"]["pfc"];
            if p["path"] == "rdma" && !f.is_null() {
                Value::from(vec![
                    f["xoff_bytes"].clone(),
                    f["xon_bytes"].clone(),
                    f["headroom_bytes"].clone(),
                ])
            } else {
                Value::Null
            }
        }
        other => panic!("the table has a row {other} the test does not know"),
    }
}

/// Equal as JSON, numbers compared as f64 (JavaScript writes 83.0 as 83).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// The lesson-5 and loss-lab runs in this test build took, on the machine the speed limits were
/// set on, this long (median of five, ms; two cores, `cargo test`'s build).
const REFERENCE_RUN_MS: f64 = 52.0;

/// How much slower than the limits' machine this one is: the median of five in-process runs of
/// preset lesson5 against [`REFERENCE_RUN_MS`], at least 1 and at most 4. The click-to-table
/// limits below are stated for that machine and scaled by this factor, so a slower CI host
/// does not fail them while a slower lab (a regression of the page or the server) still does;
/// past 4× the host is too slow for the check to mean anything and the test says so.
fn machine_factor() -> f64 {
    let p = scenario::preset("lesson5").unwrap();
    let plan = scenario::parse_with(p.toml, &[]).unwrap();
    let mut ms: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            rdmalab::report::run_plan(&plan).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let f = (ms[2] / REFERENCE_RUN_MS).max(1.0);
    eprintln!(
        "lesson5 in-process: {:.1} ms median (reference {REFERENCE_RUN_MS} ms): limits × {:.2}",
        ms[2],
        f.min(4.0)
    );
    assert!(
        f <= 4.0,
        "this machine runs lesson5 in {:.0} ms, more than 4× the {REFERENCE_RUN_MS} ms the \
         speed limits are set for: too slow or too busy for the speed checks",
        ms[2]
    );
    f
}

fn report(preset: &str, sets: &[&str]) -> Value {
    let p = scenario::preset(preset).unwrap();
    let plan = scenario::parse_with(p.toml, sets).unwrap();
    serde_json::to_value(rdmalab::report::run_plan(&plan).unwrap()).unwrap()
}

/// The page's table equals the report of the same plan, cell by cell.
async fn table_equals_report(page: &Page, r: &Value, what: &str) {
    let cells: Vec<(String, String, String)> = eval(
        page,
        "[...document.querySelectorAll('table.compare tbody tr')].flatMap(tr => \
         [...tr.querySelectorAll('td')].map(td => [tr.dataset.row, td.dataset.path, td.dataset.value ?? '']))",
    )
    .await;
    assert!(cells.len() >= 30, "{what}: {} cells", cells.len());
    for (row, path, value) in cells {
        let p = &r[&path];
        if p.is_null() {
            continue;
        }
        let shown: Value = serde_json::from_str(&value).unwrap_or(Value::Null);
        let want = expected(&row, p, r);
        assert!(
            same(&shown, &want),
            "{what}: row {row}, {path}: {shown} vs {want}"
        );
    }
}

/// (path, side, lane) → intervals `[stage, start, end]` as the boxes carry them.
async fn box_intervals(page: &Page) -> Vec<(String, String, String, Vec<(String, f64, f64)>)> {
    eval(
        page,
        "[...document.querySelectorAll('svg.paths g.box')].map(g => [g.dataset.path, g.dataset.side, \
         g.dataset.lane, [...g.querySelectorAll('g.iv')].map(i => [i.dataset.stage, +i.dataset.start, +i.dataset.end])])",
    )
    .await
}

fn trace_intervals(r: &Value, path: &str, side: &str, lane: &str) -> Vec<(String, f64, f64)> {
    // The first message's timeline, or (③, ④) the failed attempt's.
    let drawn = if r[path]["latency"].is_null() {
        &r[path]["failed_attempt"]
    } else {
        &r[path]["latency"]
    };
    let Some(tl) = drawn["timeline"].as_array() else {
        return Vec::new();
    };
    tl.iter()
        .filter(|i| {
            if lane == "switch" {
                i["lane"] == "switch"
            } else {
                i["side"] == side && i["lane"] == lane
            }
        })
        .map(|i| {
            (
                i["stage"].as_str().unwrap().to_string(),
                i["start_ns"].as_f64().unwrap(),
                i["end_ns"].as_f64().unwrap(),
            )
        })
        .collect()
}

async fn boxes_equal_trace(page: &Page, r: &Value) -> usize {
    let boxes = box_intervals(page).await;
    assert_eq!(boxes.len(), 14, "7 boxes per path");
    let mut n = 0;
    for (path, side, lane, ivs) in boxes {
        assert_eq!(
            ivs,
            trace_intervals(r, &path, &side, &lane),
            "{path} {side} {lane}"
        );
        n += ivs.len();
    }
    n
}

/// One browser test at a time, and never beside the load test (`main.rs`).
use crate::ONE_HEAVY as ONE_BROWSER;

/// A lab server on an ephemeral port and a headless Chromium pointed at nothing yet.
struct Env {
    base: String,
    browser: Browser,
    pump: tokio::task::JoinHandle<()>,
    page: Page,
    /// Chromium's profile directory, removed when the test ends, passed or not.
    _profile: tempfile::TempDir,
}

impl Env {
    /// `None` (and a note) when there is no Chromium and `CI` is unset.
    async fn start(name: &str) -> Option<Env> {
        let Some(exe) = chromium() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but there is no Chromium at /usr/bin/chromium (apt-get install chromium)"
            );
            eprintln!(
                "skipping the browser tests: no Chromium (install it with apt-get install chromium)"
            );
            return None;
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let state = web::AppState::new().unwrap();
        tokio::spawn(async move { web::serve(listener, state).await });

        let profile = tempfile::Builder::new()
            .prefix(&format!("rdmalab-chromium-{name}-"))
            .tempdir()
            .unwrap();
        let cfg = BrowserConfig::builder()
            .chrome_executable(exe)
            .no_sandbox()
            .user_data_dir(profile.path())
            .window_size(1280, 900)
            .viewport(Viewport {
                width: 1280,
                height: 900,
                ..Viewport::default()
            })
            .args([
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .build()
            .unwrap();
        let (browser, mut handler) = Browser::launch(cfg).await.unwrap();
        let pump = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let page = browser.new_page("about:blank").await.unwrap();
        Some(Env {
            base,
            browser,
            pump,
            page,
            _profile: profile,
        })
    }

    async fn stop(mut self) {
        self.browser.close().await.unwrap();
        self.browser.wait().await.unwrap();
        self.pump.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("pages").await else {
        return;
    };
    let base = env.base.clone();
    let page = env.page.clone();

    // Every page loads, in both languages, and has its content.
    let mut pages = vec![
        ("home", "/".to_string(), "ol.cards li"),
        ("overview", "/overview".to_string(), "article.prose h2"),
        (
            "chapter-m2c9",
            "/chapter/m2c9".to_string(),
            "article.prose p",
        ),
    ];
    for n in 1..=6 {
        pages.push(("lesson", format!("/lesson/{n}"), "section.try a.button"));
    }
    for lang in ["zh", "en"] {
        for (name, path, sel) in &pages {
            let sep = if path.contains('?') { '&' } else { '?' };
            let url = if lang == "en" {
                format!("{base}{path}{sep}lang=en")
            } else {
                format!("{base}{path}")
            };
            open(&page, &url).await;
            wait_for(&page, &format!("document.querySelector('{sel}')"), &url).await;
            let html_lang: String = eval(&page, "document.documentElement.lang").await;
            assert_eq!(
                html_lang,
                if lang == "en" { "en" } else { "zh-CN" },
                "{url}"
            );
            let text: String = eval(&page, "document.querySelector('main').innerText").await;
            assert!(
                !text.contains("figure unavailable") && text.len() > 200,
                "{url}"
            );
            let file = if *name == "lesson" {
                format!("{name}-{}-{lang}", path.trim_start_matches("/lesson/"))
            } else {
                format!("{name}-{lang}")
            };
            shot(&page, &file).await;
        }
    }
    // A chapter as a learner meets it: goals, diagrams drawn from runs, code, a lab timeline,
    // a self-check that answers, links into the glossary — in each language and at phone width.
    for (lang, q) in [("zh", ""), ("en", "?lang=en")] {
        for (id, want) in [
            ("m2c10", "svg.diagram.ladder"),
            ("m2c9", "svg.diagram.qpstate"),
            ("m4c28", ".lab-timeline svg.chart"),
            ("m1c4", ".code-box pre code"),
        ] {
            let url = format!("{base}/chapter/{id}{q}");
            open(&page, &url).await;
            wait_for(
                &page,
                &format!("document.body.dataset.chapter === '{id}'"),
                &url,
            )
            .await;
            wait_for(&page, &format!("document.querySelector('{want}')"), &url).await;
            let counts: Vec<usize> = eval(
                &page,
                "['.goals li', '.body .sim', '.try a.button', '.misconceptions li', 'form.check', '.refs li'].map(s => document.querySelectorAll(s).length)",
            )
            .await;
            assert!(counts.iter().all(|&n| n > 0), "{url}: {counts:?}");
            let text: String = eval(&page, "document.querySelector('main').innerText").await;
            assert!(
                !text.contains("figure unavailable") && !text.contains("图表不可用"),
                "{url}"
            );
            if id == "m2c10" {
                shot(&page, &format!("chapter-{id}-{lang}")).await;
            }
        }
        // The first prediction of m2c10: pick the wrong answer, then the verdict says so, gives
        // the right one and shows what the simulation gave.
        open(&page, &format!("{base}/chapter/m2c10{q}")).await;
        wait_for(&page, "document.body.dataset.chapter === 'm2c10'", "m2c10").await;
        let verdict: String = eval(
            &page,
            "(() => { const f = [...document.querySelectorAll('form.check')].find(f => f.dataset.kind === 'predict');              f.querySelector('input[value=\"1\"]').checked = true; f.querySelector('button').click();              return f.querySelector('.verdict').innerText; })()",
        )
        .await;
        let (wrong, sim) = if lang == "zh" {
            ("不对", "这次模拟的结果：ok")
        } else {
            ("Not quite", "This run of the simulator gives: ok")
        };
        assert!(
            verdict.contains(wrong) && verdict.contains(sim),
            "{lang}: {verdict}"
        );
        // A glossary link keeps the language and lands on the term.
        eval::<bool>(&page, "(() => { document.querySelector('.body a[href^=\"/glossary\"][href*=\"#\"]').click(); return true; })()").await;
        wait_for(
            &page,
            "document.querySelector('.glossary .term.target')",
            "glossary term",
        )
        .await;
        let url: String = eval(&page, "location.pathname + location.search").await;
        assert_eq!(url, format!("/glossary{q}"), "{lang}");
    }
    // At phone width a chapter's diagrams scroll inside their boxes; the page does not.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
        .await
        .unwrap();
    // Every chapter (zh) at 390 px: diagrams and code scroll inside their boxes, the page
    // itself never sideways.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../course/zh/chapters");
    let mut ids: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".toml")
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    assert_eq!(ids.len(), 30);
    for id in &ids {
        open(&page, &format!("{base}/chapter/{id}")).await;
        wait_for(
            &page,
            &format!("document.body.dataset.chapter === '{id}'"),
            id,
        )
        .await;
        let overflow: f64 = eval(
            &page,
            "document.documentElement.scrollWidth - window.innerWidth",
        )
        .await;
        assert!(
            overflow <= 1.0,
            "{id}: the phone page is {overflow} px too wide"
        );
        if id == "m2c14" {
            shot(&page, "chapter-m2c14-phone").await;
        }
    }
    page.execute(SetDeviceMetricsOverrideParams::new(1280, 900, 1.0, false))
        .await
        .unwrap();

    // 30 chapter links on the map, each opening a page with a body.
    open(&page, &format!("{base}/")).await;
    wait_for(
        &page,
        "document.querySelectorAll('ol.chapters a').length === 30",
        "the map",
    )
    .await;

    // Each preset: the page's table is the report of that run, and the boxes carry its trace.
    for (preset, sets) in [
        ("lesson1", vec![]),
        ("lesson2", vec![]),
        ("lesson3", vec![]),
        ("lesson4", vec![]),
        ("lesson5", vec![]),
        ("lesson5b", vec![]),
        ("lesson6", vec![]),
        ("lesson1", vec!["workload.message_bytes=65536"]),
        ("lesson4", vec!["nic.profile=\"rxe\""]),
    ] {
        let mut url = format!("{base}/sim?preset={preset}");
        for s in &sets {
            url += &format!("&set={}", urlencode(s));
        }
        open_sim(&page, &url).await;
        let r = report(preset, &sets);
        table_equals_report(&page, &r, &url).await;
        let lit = boxes_equal_trace(&page, &r).await;
        if r["scenario"]["mode"] == "count" && r["rdma"]["outcome"]["status"] == "success" {
            assert!(lit > 10, "{url}: {lit} intervals");
        }
        let name = format!("sim-{preset}{}", if sets.is_empty() { "" } else { "-set" });
        shot(&page, &name).await;
    }

    // Lesson 5 as a learner follows it on the Chinese page: run ⑤, come back, turn the lossless
    // network on; the table then shows the retention before and after, from the two runs.
    open(&page, &format!("{base}/lesson/5")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"1\"]')",
        "lesson 5",
    )
    .await;
    eval::<bool>(&page, "(() => { document.querySelector('section.try a.button[data-try=\"0\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "lesson5 run",
    )
    .await;
    let named: String = eval(
        &page,
        "document.querySelector('[data-testid=preset-what]').innerText",
    )
    .await;
    assert!(
        named.contains("1% 丢包") && named.contains("第 5 课"),
        "{named}"
    );
    eval::<bool>(&page, "(() => { history.back(); return true; })()").await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"1\"]')",
        "back to lesson 5",
    )
    .await;
    eval::<bool>(&page, "(() => { document.body.dataset.run = 'clicked'; document.querySelector('section.try a.button[data-try=\"1\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "lossless run",
    )
    .await;
    let cell: String = eval(
        &page,
        "document.querySelector('tr[data-row=retention] td[data-path=rdma]').innerText",
    )
    .await;
    let off = report("lesson5", &[]);
    let on = report("lesson5", &["lossless.enabled=true"]);
    let pct = |r: &Value| {
        format!(
            "{:.1}%",
            r["rdma"]["throughput"]["retention"].as_f64().unwrap() * 100.0
        )
    };
    assert!(
        cell.contains(&pct(&off)) && cell.contains(&pct(&on)) && cell.contains('→'),
        "retention before/after: {cell:?}, want {} → {}",
        pct(&off),
        pct(&on)
    );
    shot(&page, "sim-lesson5-before-after").await;

    // The panel as a learner uses it (zh, ⑤): tick the box labelled 无损网络（PFC）, press 运行,
    // read the retention's new value off the visible table.
    open_sim(&page, &format!("{base}/sim?preset=lesson5")).await;
    let ticked: bool = eval(
        &page,
        "(() => { document.querySelector('details.params summary').click(); \
         const l = [...document.querySelectorAll('#params label')].find(l => l.innerText.trim() === '无损网络（PFC）'); \
         if (!l || !l.control || l.control.type !== 'checkbox') return false; l.control.click(); return l.control.checked; })()",
    )
    .await;
    assert!(
        ticked,
        "no checkbox labelled 无损网络（PFC） (or it did not tick)"
    );
    let first: String = eval(
        &page,
        "document.querySelector('#params label .name').innerText",
    )
    .await;
    assert_eq!(first, "无损网络（PFC）", "⑤'s own knob comes first");
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; \
         [...document.querySelectorAll('#params button')].find(b => b.innerText.trim() === '运行').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.body.dataset.run === 'done'",
        "运行 with PFC",
    )
    .await;
    let cell: String = eval(
        &page,
        "document.querySelector('tr[data-row=retention] td[data-path=rdma]').innerText",
    )
    .await;
    assert!(
        cell.contains(&format!("→ {}", pct(&on))),
        "retention after 运行: {cell:?}, want → {}",
        pct(&on)
    );
    table_equals_report(&page, &on, "⑤ after 运行 with PFC").await;
    let open: bool = eval(&page, "document.querySelector('details.params').open").await;
    assert!(open, "the panel stays open after 运行");

    // A bad value: message size 0 shows an inline error naming the field; nothing else changes.
    let before: (String, String) = eval(
        &page,
        "(() => { const l = [...document.querySelectorAll('#params label')].find(l => l.querySelector('.name') && l.querySelector('.name').innerText.trim() === '消息大小'); \
         l.control.value = '0'; l.control.dispatchEvent(new Event('input', {bubbles: true})); \
         const was = [location.href, document.querySelector('#table').innerHTML]; \
         [...document.querySelectorAll('#params button')].find(b => b.innerText.trim() === '运行').click(); return was; })()",
    )
    .await;
    wait_for(
        &page,
        "document.querySelector('.param[data-param=\"workload.message_bytes\"] .field-error:not([hidden])')",
        "the inline error",
    )
    .await;
    let (err, after, open, fields): (String, (String, String), bool, usize) = eval(
        &page,
        "[document.querySelector('.param[data-param=\"workload.message_bytes\"] .field-error').innerText, \
          [location.href, document.querySelector('#table').innerHTML], document.querySelector('details.params').open, \
          document.querySelectorAll('#params [data-key]').length]",
    )
    .await;
    assert!(
        err.contains("消息大小") && err.contains('1'),
        "inline error: {err:?}"
    );
    assert_eq!(after, before, "a refused value changed the page");
    assert!(open && fields > 60, "the panel collapsed ({fields} fields)");
    // A value only the simulator refuses (XON above XOFF): its error, at its field, in Chinese.
    eval::<bool>(
        &page,
        "(() => { const m = document.querySelector('[data-key=\"workload.message_bytes\"]'); m.value = '4096'; \
         m.dispatchEvent(new Event('input', {bubbles: true})); \
         const x = document.querySelector('[data-key=\"lossless.xon_bytes\"]'); x.value = '50000'; \
         document.querySelector('#params #run').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error:not([hidden])')",
        "the simulator's refusal at its field",
    )
    .await;
    let (err, after): (String, (String, String)) = eval(
        &page,
        "[document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error').innerText, \
          [location.href, document.querySelector('#table').innerHTML]]",
    )
    .await;
    assert!(
        err.contains("恢复阈值") && err.contains("不超过 lossless.xoff_bytes（41673）"),
        "server error: {err:?}"
    );
    assert_eq!(after, before, "a refused run changed the page");
    // A conflicting pair (XON above a given XOFF): the reason is the rule's, in Chinese, with
    // no English sentence (crates/scenario/src/rule.rs, scenario.conflict.*).
    eval::<bool>(
        &page,
        "(() => { const o = document.querySelector('[data-key=\"lossless.xoff_bytes\"]'); o.value = '20000'; \
         o.dispatchEvent(new Event('input', {bubbles: true})); \
         const x = document.querySelector('[data-key=\"lossless.xon_bytes\"]'); x.value = '30000'; \
         x.dispatchEvent(new Event('input', {bubbles: true})); \
         document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error').hidden = true; \
         document.querySelector('#params #run').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "(document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error:not([hidden])') || {}).innerText?.includes('20000')",
        "the conflict at its field",
    )
    .await;
    let err: String = eval(
        &page,
        "document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error').innerText",
    )
    .await;
    assert!(
        err.contains("允许：不超过 lossless.xoff_bytes（20000）"),
        "conflict error: {err:?}"
    );
    let english = english_words(
        &page,
        "[document.querySelector('.param[data-param=\"lossless.xon_bytes\"] .field-error').innerText]",
        &[],
        2,
    )
    .await;
    assert!(
        english.is_empty(),
        "English in the conflict error: {english:?}"
    );
    shot(&page, "sim-lesson5-panel-error").await;

    // One language: on the zh page of every preset (panel open), no run of three or more
    // English words outside identifiers, in the visible text or the table's and boxes' titles.
    let mut allow: Vec<&str> = vec![
        "Verbs",
        "RoCE",
        "Soft-RoCE",
        "ConnectX",
        "BlueFlame",
        "Mathis",
        "NAPI",
        "rdmalab",
        "go-back-N",
        "ns",
        "µs",
        "ms",
        "s",
        "B",
        "KB",
        "MB",
        "GB",
        "KiB",
        "MiB",
        "GiB",
        "TiB",
        "p",
    ];
    for k in scenario::KEYS {
        if let scenario::Kind::Enum(v) = k.kind {
            allow.extend_from_slice(v);
        }
    }
    for preset in [
        "lesson1", "lesson2", "lesson3", "lesson4", "lesson5", "lesson5b", "lesson6",
    ] {
        open_sim(&page, &format!("{base}/sim?preset={preset}")).await;
        if preset.starts_with("lesson5") {
            wait_for(
                &page,
                "document.body.dataset.packets === 'done'",
                "the packet view",
            )
            .await;
        }
        let runs = english_words(
            &page,
            "(() => { document.querySelector('details.params').open = true; \
             return [document.body.innerText, ...[...document.querySelectorAll('section.sim [title]')].map(e => e.getAttribute('title')), \
               ...[...document.querySelectorAll('section.sim svg title')].map(e => e.textContent)]; })()",
            &allow,
            3,
        )
        .await;
        assert!(runs.is_empty(), "{preset} (zh) has English: {runs:#?}");
    }

    // ③ and ④: the failure at the step where it happens, with the exact status or the silence.
    for (preset, code) in [
        ("lesson3", "IBV_WC_LOC_PROT_ERR"),
        ("lesson4", "no completion"),
    ] {
        open_sim(&page, &format!("{base}/sim?preset={preset}&lang=en")).await;
        let failed: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('svg.paths g.box.failed')].map(g => g.dataset.path + '-' + g.dataset.side + '-' + g.dataset.lane)",
        )
        .await;
        let why: String = eval(
            &page,
            "document.querySelector('.failure-mark .why').textContent",
        )
        .await;
        let cell: String = eval(
            &page,
            "document.querySelector('tr[data-row=outcome] td[data-path=rdma]').textContent",
        )
        .await;
        assert!(cell.contains(code), "{preset}: {cell}");
        // The attempt is drawn up to where it stopped: the application posted, the NIC
        // fetched the WQE (③ then wrote the error CQE), nothing reached the remote.
        let lanes: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('svg.paths g.box[data-path=rdma]')].filter(g => g.querySelector('g.iv')).map(g => g.dataset.side + '-' + g.dataset.lane)",
        )
        .await;
        assert!(
            lanes.contains(&"local-app".to_string()) && lanes.contains(&"local-nic".to_string()),
            "{preset}: {lanes:?}"
        );
        assert!(
            !lanes.iter().any(|l| l.starts_with("remote")),
            "{preset}: {lanes:?}"
        );
        match preset {
            "lesson3" => {
                assert_eq!(failed, ["rdma-local-nic"]);
                assert!(why.contains("IBV_WC_LOC_PROT_ERR"), "{why}");
            }
            _ => {
                assert_eq!(failed, ["rdma-local-app"]);
                assert!(why.contains("no completion"), "{why}");
            }
        }
        let tcp_ok: String = eval(
            &page,
            "document.querySelector('tr[data-row=outcome] td[data-path=tcp]').dataset.value",
        )
        .await;
        assert_eq!(tcp_ok, "\"success\"", "TCP still delivers");
    }

    // Lighting: at any time the lit boxes are exactly those with an interval around it, and
    // the remote app box of a WRITE never lights while SEND's does.
    for (preset, remote_app) in [("lesson1", false), ("lesson2", true)] {
        open_sim(&page, &format!("{base}/sim?preset={preset}")).await;
        let r = report(preset, &[]);
        let mut remote_app_lit = false;
        for k in 0..=100 {
            let lit: Vec<String> = eval(
                &page,
                &format!(
                    "(() => {{ const s = document.querySelector('#time'); s.value = '{}'; \
                     s.dispatchEvent(new Event('input')); \
                     return [...document.querySelectorAll('svg.paths g.box.lit')].map(g => g.dataset.path + '-' + g.dataset.side + '-' + g.dataset.lane); }})()",
                    k * 10
                ),
            )
            .await;
            // The page's time for this slider position.
            let t: f64 = eval(&page, "window.__rdmalabTime ?? -1").await;
            let mut want: Vec<String> = Vec::new();
            for path in ["tcp", "rdma"] {
                for (side, lane) in [
                    ("local", "app"),
                    ("local", "kernel"),
                    ("local", "nic"),
                    ("fabric", "switch"),
                    ("remote", "nic"),
                    ("remote", "kernel"),
                    ("remote", "app"),
                ] {
                    if trace_intervals(&r, path, side, lane)
                        .iter()
                        .any(|(_, s, e)| *s <= t && t < *e)
                    {
                        want.push(format!("{path}-{side}-{lane}"));
                    }
                }
            }
            assert_eq!(lit, want, "{preset} at {t} ns");
            remote_app_lit |= lit.iter().any(|b| b == "rdma-remote-app");
            // RDMA's data path never enters a kernel.
            assert!(
                !lit.iter()
                    .any(|b| b.starts_with("rdma-") && b.ends_with("-kernel"))
            );
        }
        assert_eq!(
            remote_app_lit, remote_app,
            "{preset}: the remote application"
        );
    }

    // The URL reproduces a run: the same link gives the same table.
    let url = format!(
        "{base}/sim?preset=lesson1&set=workload.message_bytes%3D16384&set=rdma.operation%3D%22send%22&hl=latency"
    );
    open_sim(&page, &url).await;
    let r = report(
        "lesson1",
        &["workload.message_bytes=16384", "rdma.operation=\"send\""],
    );
    table_equals_report(&page, &r, &url).await;
    let hl: String = eval(&page, "document.querySelector('tr.hl').dataset.row").await;
    assert_eq!(hl, "latency");
    // Editing a parameter changes nothing until Run; Run puts it in the URL and reruns.
    eval::<bool>(
        &page,
        "(() => { const s = document.querySelector('[data-key=\"workload.message_bytes\"]'); s.value = '8192'; \
         s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()",
    )
    .await;
    let still: String = eval(&page, "location.search").await;
    assert!(!still.contains("8192"), "a field change navigated: {still}");
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; document.querySelector('#params #run').click(); return true; })()",
    )
    .await;
    wait_for(&page, "document.body.dataset.run === 'done'", "the rerun").await;
    let href: String = eval(&page, "location.search").await;
    assert!(href.contains("workload.message_bytes%3D8192"), "{href}");
    let r8 = report(
        "lesson1",
        &["workload.message_bytes=8192", "rdma.operation=\"send\""],
    );
    table_equals_report(&page, &r8, "after editing").await;

    // Switch language: the same page, in English, and back.
    open_sim(&page, &format!("{base}/sim?preset=lesson2")).await;
    page.find_element("#lang")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&page, "document.documentElement.lang === 'en' && document.body.dataset.run === 'done' && document.querySelector('h1').textContent === 'Traffic simulation'", "English").await;
    let search: String = eval(&page, "location.search").await;
    assert!(
        search.contains("lang=en") && search.contains("preset=lesson2"),
        "{search}"
    );
    shot(&page, "sim-lesson2-en").await;
    page.find_element("#lang")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(
        &page,
        "document.documentElement.lang === 'zh-CN'",
        "Chinese",
    )
    .await;

    // Speed: click a preset button to the rendered table.
    open_sim(&page, &format!("{base}/sim?preset=lesson1")).await;
    let factor = machine_factor();
    let mut report_ms = Vec::new();
    for (preset, limit) in [
        ("lesson2", 100.0),
        ("lesson3", 100.0),
        ("lesson4", 100.0),
        ("lesson6", 100.0),
        ("lesson1", 100.0),
        ("lesson5", 300.0),
    ] {
        let limit: f64 = limit * factor;
        // The best of three clicks: the machine is shared, and one slow click says more about
        // a neighbour than about the page. Clicking the selected preset reruns it.
        let mut ms = f64::INFINITY;
        for _ in 0..3 {
            eval::<bool>(
                &page,
                &format!(
                    "(() => {{ document.body.dataset.run = 'clicked'; window.__clickAt = performance.now(); \
                     document.querySelector('a.preset[data-preset={preset}]').click(); return true; }})()"
                ),
            )
            .await;
            wait_for(&page, "document.body.dataset.run === 'done'", preset).await;
            let once: f64 = eval(&page, "+document.body.dataset.doneAt - window.__clickAt").await;
            ms = ms.min(once);
            if ms <= limit {
                break;
            }
        }
        report_ms.push(format!("{preset} {ms:.0} ms"));
        assert!(
            ms <= limit,
            "{preset}: {ms:.1} ms from click to table (limit {limit:.0} ms)"
        );
    }
    eprintln!("click → table: {}", report_ms.join(", "));

    // The first page load transfers at most 300 KB.
    let bytes: f64 = eval(
        &page,
        "(() => { const e = performance.getEntriesByType('navigation')[0]; \
         return e.transferSize + performance.getEntriesByType('resource').reduce((a, r) => a + r.transferSize, 0); })()",
    )
    .await;
    assert!(bytes <= 300_000.0, "first load {bytes} bytes");

    // A phone-sized screenshot of the simulation page.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
        .await
        .unwrap();
    open_sim(&page, &format!("{base}/sim?preset=lesson1")).await;
    let overflow: bool = eval(
        &page,
        "document.documentElement.scrollWidth > window.innerWidth + 1",
    )
    .await;
    assert!(!overflow, "the page scrolls sideways on a phone");
    shot(&page, "sim-lesson1-phone").await;

    env.stop().await;
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Waits until the page has finished its runs (`body[data-run]` is `done` or `error`, after
/// the test set it to `clicked`, and still is a moment later: a run the page started before
/// the click may finish first and the clicked one start after it) and says which.
async fn settled(page: &Page, what: &str) -> String {
    loop {
        wait_for(
            page,
            "document.body.dataset.run === 'done' || document.body.dataset.run === 'error'",
            what,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(80)).await;
        let now: String = eval(page, "document.body.dataset.run").await;
        if now == "done" || now == "error" {
            return now;
        }
    }
}

/// Clicks `selector` and waits for the run it starts.
async fn click_and_settle(page: &Page, selector: &str, what: &str) -> String {
    eval::<bool>(
        page,
        &format!(
            "(() => {{ document.body.dataset.run = 'clicked'; document.querySelector({sel}).click(); return true; }})()",
            sel = serde_json::to_string(selector).unwrap()
        ),
    )
    .await;
    settled(page, what).await
}

/// Sets form fields (`[name=...]` inside `form`) and fires their change events, in order.
async fn set_fields(page: &Page, form: &str, fields: &[(&str, &str)]) {
    for (name, value) in fields {
        let js = format!(
            "(() => {{ const f = document.querySelector('[data-testid={form}]'); \
             const el = f.querySelector('[name=\"{name}\"]'); if (!el) return false; \
             if (el.type === 'checkbox') el.checked = {value:?} === 'true'; else el.value = {value:?}; \
             el.dataset.dirty = '1'; el.dispatchEvent(new Event('input', {{bubbles: true}})); \
             el.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()"
        );
        let ok: bool = eval(page, &js).await;
        assert!(ok, "{form} has no field {name}");
    }
}

/// The playground's step rows: (result kind, errno, completion statuses).
async fn steps(page: &Page) -> Vec<(String, String, String)> {
    eval(
        page,
        "[...document.querySelectorAll('[data-testid^=step-]')].map(e => [e.dataset.resultKind, e.dataset.errno || '', e.dataset.statuses || ''])",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_and_the_labs_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("labs").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());

    // --- Import: an example file pasted in runs as `rdmalab verbs run` runs it.
    open(&page, &format!("{base}/playground")).await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=import-paste]')",
        "playground",
    )
    .await;
    let example = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/verbs/read.toml"),
    )
    .unwrap();
    let want = rdmalab::session::run(
        &rdmalab::session::parse(&example).unwrap(),
        rdmalab::session::RunOptions::default(),
    )
    .unwrap();
    eval::<bool>(
        &page,
        &format!(
            "(() => {{ document.body.dataset.run = 'clicked'; document.querySelector('[data-testid=import-text]').value = {}; \
             document.querySelector('[data-testid=import-paste]').click(); return true; }})()",
            serde_json::to_string(&example).unwrap()
        ),
    )
    .await;
    assert_eq!(settled(&page, "import").await, "done");
    let st = steps(&page).await;
    assert_eq!(st.len(), want.steps.len());
    assert!(st.iter().any(|s| s.2.contains("SUCCESS")), "{st:?}");

    // --- A chapter's try link: /playground?example=NAME opens that session and runs it.
    open(&page, &format!("{base}/playground?example=drop_nth")).await;
    assert_eq!(settled(&page, "example").await, "done");
    let dn = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/verbs/drop_nth.toml"),
    )
    .unwrap();
    let dn = rdmalab::session::run(
        &rdmalab::session::parse(&dn).unwrap(),
        rdmalab::session::RunOptions::default(),
    )
    .unwrap();
    let st = steps(&page).await;
    assert_eq!(st.len(), dn.steps.len(), "{st:?}");

    // --- The verbs playground: quick start, the state walk through the forms, a WRITE and a
    // READ, a wrong mask, export, the shareable URL.
    open(&page, &format!("{base}/playground")).await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=quick-start]')",
        "playground",
    )
    .await;
    // Keep what the page downloads.
    eval::<bool>(
        &page,
        "(() => { window.__blobs = []; const o = URL.createObjectURL; \
         URL.createObjectURL = (b) => { b.text().then(t => window.__blobs.push(t)); return o(b); }; return true; })()",
    )
    .await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=quick-start]", "quick start").await,
        "done"
    );
    let quick = steps(&page).await.len();
    assert!(quick >= 8, "quick start made {quick} steps");
    // Six modify_qp steps with the form's suggestions: both QPs RESET→INIT→RTR→RTS.
    for i in 0..6 {
        let r = click_and_settle(&page, "[data-testid=add-modify_qp-submit]", "modify_qp").await;
        assert_eq!(r, "done", "modify {i}");
    }
    let st = steps(&page).await;
    assert_eq!(st.len(), quick + 6);
    assert!(st.iter().all(|s| s.0 == "ok"), "{st:?}");
    let state: String = eval(
        &page,
        "document.querySelector('[data-testid=qp-state]').dataset.state",
    )
    .await;
    assert_eq!(state, "RTS");
    // A WRITE and a READ from qp_a, each polled.
    for op in ["RDMA_WRITE", "RDMA_READ"] {
        set_fields(&page, "add-post_send", &[("qp", "qp_a"), ("opcode", op)]).await;
        assert_eq!(
            click_and_settle(&page, "[data-testid=add-post_send-submit]", op).await,
            "done"
        );
        set_fields(&page, "add-poll_cq", &[("cq", "cq_a")]).await;
        assert_eq!(
            click_and_settle(&page, "[data-testid=add-poll_cq-submit]", "poll").await,
            "done"
        );
        let last = steps(&page).await.pop().unwrap();
        assert_eq!(last.0, "completions", "{op}: {last:?}");
        assert_eq!(last.2, "SUCCESS", "{op}: {last:?}");
    }
    // The ladder drew the WRITE and the READ's packets.
    let opcodes: Vec<String> = eval(
        &page,
        "(() => { const c = document.querySelector('[data-testid=ladder] input[type=checkbox]') || document.querySelector('input[type=checkbox][id*=all]'); \
         return [...document.querySelectorAll('[data-testid=ladder] [data-opcode]')].map(e => e.dataset.opcode); })()",
    )
    .await;
    assert!(!opcodes.is_empty(), "no frames on the ladder");
    let rows: usize = eval(
        &page,
        "document.querySelectorAll('[data-testid=ladder-table] tbody tr').length",
    )
    .await;
    assert!(
        rows >= opcodes.len(),
        "the ladder's table has {rows} rows for {} frames",
        opcodes.len()
    );
    // A wrong mask: RTS→RTS with PATH_MTU, which that transition does not take.
    set_fields(&page, "add-modify_qp", &[("qp", "qp_a"), ("target", "RTS")]).await;
    set_fields(&page, "add-modify_qp", &[("m_PATH_MTU", "true")]).await;
    click_and_settle(&page, "[data-testid=add-modify_qp-submit]", "bad mask").await;
    let st = steps(&page).await;
    let last = st.last().unwrap();
    assert_eq!(
        (last.0.as_str(), last.1.as_str()),
        ("error", "EINVAL"),
        "{last:?}"
    );
    // The step says which bit the transition does not take, from the model's table.
    let why: String = eval(
        &page,
        &format!(
            "(document.querySelector('[data-testid=step-{}] .pg-diff') || {{innerText: ''}}).innerText",
            st.len()
        ),
    )
    .await;
    assert!(why.contains("PATH_MTU"), "{why:?}");
    shot(&page, "playground").await;
    // Export with expectations: the file runs as `rdmalab verbs run` runs it, and passes.
    eval::<bool>(
        &page,
        "(() => { document.querySelector('[data-testid=export-expect]').click(); return true; })()",
    )
    .await;
    wait_for(&page, "window.__blobs.length > 0", "export").await;
    let exported: String = eval(&page, "window.__blobs[window.__blobs.length - 1]").await;
    let session = rdmalab::session::parse(&exported)
        .unwrap_or_else(|e| panic!("the exported file does not parse: {e}\n{exported}"));
    let report = rdmalab::session::run(&session, rdmalab::session::RunOptions::default()).unwrap();
    assert!(report.passed, "the exported file fails:\n{exported}");
    assert!(report.summary.expectations > report.summary.steps);
    // The URL is the session: opening it again restores every step.
    let url: String = eval(&page, "location.href").await;
    assert!(url.contains("s="), "{url}");
    open(&page, &url).await;
    wait_for(
        &page,
        &format!(
            "document.querySelectorAll('[data-testid^=step-]').length === {} && document.body.dataset.run === 'done'",
            quick + 11
        ),
        "shared URL",
    )
    .await;
    // Another NIC profile: rxe refuses the same wrong mask the same way.
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; const s = document.querySelector('[data-testid=profile]'); \
         s.value = 'rxe'; s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()",
    )
    .await;
    assert_eq!(settled(&page, "rxe").await, "done");
    let last = steps(&page).await.pop().unwrap();
    assert_eq!(last.1, "EINVAL");

    // --- The labs: every default run shows the figures the library computes, every chart,
    // and answers within 300 ms.
    let mut timings = Vec::new();
    let limit = 300.0 * machine_factor();
    for spec in rdmalab::labs::catalogue() {
        let id = spec.id;
        open(&page, &format!("{base}/lab/{id}")).await;
        assert_eq!(settled(&page, id).await, "done", "{id}");
        let params = rdmalab::labs::parse_params(id, &Value::Null).unwrap();
        let want = rdmalab::labs::run(id, &params).unwrap();
        let shown: Vec<(String, String)> = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=lab-figures] [data-figure]')].map(e => [e.dataset.figure, e.dataset.value])",
        )
        .await;
        for f in &want.figures {
            let got = shown
                .iter()
                .find(|(k, _)| k == f.id)
                .unwrap_or_else(|| panic!("{id}: no figure {}", f.id));
            match f.value {
                Some(v) => {
                    let g: f64 = got.1.parse().unwrap_or(f64::NAN);
                    assert!(
                        (g - v).abs() <= 1e-9 * v.abs().max(1.0),
                        "{id} {}: page {g}, library {v}",
                        f.id
                    );
                }
                None => assert_eq!(got.1, "", "{id} {}", f.id),
            }
        }
        for c in &want.charts {
            let series: String = eval(
                &page,
                &format!(
                    "(document.querySelector('[data-testid=lab-chart-{}]') || {{dataset: {{series: 'missing'}}}}).dataset.series",
                    c.id
                ),
            )
            .await;
            assert_eq!(series, c.series.len().to_string(), "{id} chart {}", c.id);
            // And its data as a table, for screen readers and keyboards.
            let columns: usize = eval(
                &page,
                &format!(
                    "(() => {{ const t = document.querySelector('[data-testid=lab-table-{}]'); return t ? t.querySelectorAll('thead th').length : 0; }})()",
                    c.id
                ),
            )
            .await;
            let want_cols = 1 + c.series.len();
            assert_eq!(columns, want_cols, "{id} table {}", c.id);
        }
        shot(&page, &format!("lab-{id}")).await;
        // Every figure has a title in this language, not its id.
        let raw: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=lab-figures] [data-figure]')].filter(e => e.innerText.includes(e.dataset.figure)).map(e => e.dataset.figure)",
        )
        .await;
        assert!(raw.is_empty(), "{id}: figures labelled by id: {raw:?}");
        // Speed: the Run button to the drawn result, best of three.
        eval::<bool>(
            &page,
            "(() => { window.__t = null; new MutationObserver(() => { \
               if (document.body.dataset.run === 'done' && window.__t0 && !window.__t) window.__t = performance.now(); \
             }).observe(document.body, {attributes: true, attributeFilter: ['data-run']}); return true; })()",
        )
        .await;
        let mut ms = f64::INFINITY;
        for _ in 0..3 {
            eval::<bool>(
                &page,
                "(() => { window.__t = null; window.__t0 = performance.now(); document.body.dataset.run = 'clicked'; \
                 document.querySelector('[data-testid=lab-run]').click(); return true; })()",
            )
            .await;
            wait_for(&page, "window.__t", id).await;
            let once: f64 = eval(&page, "window.__t - window.__t0").await;
            ms = ms.min(once);
            if ms <= limit {
                break;
            }
        }
        timings.push(format!("{id} {ms:.0} ms"));
        assert!(
            ms <= limit,
            "{id}: {ms:.1} ms from Run to result (limit {limit:.0} ms)"
        );
    }
    eprintln!("lab run → result: {}", timings.join(", "));

    // The deadlock page says so, and the watchdog run completes.
    for (q, key, want) in [
        ("", "deadlocked", "true"),
        ("?fix=watchdog", "completed", "true"),
    ] {
        open(&page, &format!("{base}/lab/deadlock{q}")).await;
        assert_eq!(settled(&page, "deadlock").await, "done");
        let v: String = eval(
            &page,
            &format!("document.querySelector('[data-testid=lab-verdict]').dataset['{key}']"),
        )
        .await;
        assert_eq!(v, want, "deadlock{q} {key}");
    }
    open(&page, &format!("{base}/lab/storm")).await;
    assert_eq!(settled(&page, "storm").await, "done");
    let contained: String = eval(
        &page,
        "document.querySelector('[data-testid=lab-verdict]').dataset.contained",
    )
    .await;
    assert_eq!(contained, "true");

    // The troubleshooting lab: the counters on the page are the API's, case by case.
    let cases: Vec<&str> = rdmalab::labs::catalogue()
        .into_iter()
        .find(|l| l.id == "trouble")
        .and_then(|l| l.params.into_iter().find(|p| p.name == "case"))
        .map(|p| match p.kind {
            rdmalab::labs::ParamKind::Choice { choices, .. } => choices,
            _ => Vec::new(),
        })
        .unwrap();
    assert!(cases.len() >= 7, "{cases:?}");
    for case in cases {
        open(&page, &format!("{base}/lab/trouble?case={case}&lang=en")).await;
        assert_eq!(settled(&page, case).await, "done");
        let params =
            rdmalab::labs::parse_params("trouble", &serde_json::json!({ "case": case })).unwrap();
        let want = rdmalab::labs::run("trouble", &params).unwrap();
        let shown: Vec<(String, String)> = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=lab-counters] [data-counter]')].map(e => [e.dataset.counter, e.dataset.value])",
        )
        .await;
        assert_eq!(shown.len(), want.counters.len(), "{case}");
        for c in &want.counters {
            let key = format!("{}/{}", c.host, c.name);
            let got = shown.iter().find(|(k, _)| *k == key);
            assert_eq!(
                got.map(|g| g.1.as_str()),
                Some(c.value.to_string().as_str()),
                "{case} {key}"
            );
        }
        if case == "mtu" {
            shot(&page, "lab-trouble-mtu-en").await;
        }
    }

    // A phone: the lab pages and the playground do not scroll sideways.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
        .await
        .unwrap();
    for path in [
        "/lab/incast",
        "/lab/trouble?case=mtu&lang=en",
        "/playground",
    ] {
        open(&page, &format!("{base}{path}")).await;
        if path != "/playground" {
            wait_for(&page, "document.body.dataset.run === 'done'", path).await;
        } else {
            wait_for(
                &page,
                "document.querySelector('[data-testid=quick-start]')",
                path,
            )
            .await;
        }
        let overflow: bool = eval(
            &page,
            "document.documentElement.scrollWidth > window.innerWidth + 1",
        )
        .await;
        assert!(!overflow, "{path} scrolls sideways on a phone");
    }
    shot(&page, "lab-incast-phone").await;
    page.execute(SetDeviceMetricsOverrideParams::new(1280, 900, 1.0, false))
        .await
        .unwrap();

    // Chapters link to the labs that teach them, in both languages.
    for lang in ["", "?lang=en"] {
        open(&page, &format!("{base}/chapter/m4c27{lang}")).await;
        wait_for(
            &page,
            "document.querySelector('a.lab-chip[data-lab=deadlock]')",
            "chips",
        )
        .await;
        let labs: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('a.lab-chip')].map(a => a.dataset.lab)",
        )
        .await;
        for l in ["incast", "hol", "storm", "deadlock"] {
            assert!(labs.iter().any(|x| x == l), "m4c27{lang}: {labs:?}");
        }
    }
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; document.querySelector('a.lab-chip[data-lab=deadlock]').click(); return true; })()",
    )
    .await;
    assert_eq!(settled(&page, "chip → lab").await, "done");
    let path: String = eval(&page, "location.pathname").await;
    assert_eq!(path, "/lab/deadlock");
    open(&page, &format!("{base}/chapter/m2c9")).await;
    wait_for(
        &page,
        "document.querySelector('a.lab-chip[data-lab=playground]')",
        "m2c9",
    )
    .await;

    env.stop().await;
}

/// The visible text of every element `selector` matches, one string each.
async fn texts(page: &Page, selector: &str) -> Vec<String> {
    eval(
        page,
        &format!(
            "[...document.querySelectorAll({})].map(e => e.innerText.trim())",
            serde_json::to_string(selector).unwrap()
        ),
    )
    .await
}

/// Runs of three or more English words in the fabric view's visible text and titles, outside
/// identifiers (node names, opcodes, PAUSE/XOFF).
async fn fabric_view_english(page: &Page) -> Vec<String> {
    english_words(
        page,
        "(() => { const root = document.querySelector('.fabric-view'); \
         return [root.innerText, ...[...root.querySelectorAll('[title],[aria-label]')].map(e => (e.getAttribute('title') || '') + '\\n' + (e.getAttribute('aria-label') || ''))]; })()",
        &["RoCE", "Gb", "KB", "µs"],
        3,
    )
    .await
}

/// The one rule of a zh page (issue 19, item 7), for every scan below: in the texts the JS
/// expression `texts_js` gives (an array of strings), runs of `min_run` or more English words
/// outside identifiers (a word with `_ ( ) . / 0-9 → + = §`, an all-capitals name, a CamelCase
/// name, or one in `allow`), each with the start of its line. Words are split at spaces and
/// Chinese punctuation, and quotes and punctuation around a word are not part of it.
async fn english_words(page: &Page, texts_js: &str, allow: &[&str], min_run: usize) -> Vec<String> {
    eval(
        page,
        &format!(
            "(() => {{ const allow = new Set({allow}); \
             const ident = (w) => /[_()./0-9→+=§]/.test(w) || /^[A-Z0-9-]{{2,}}s?$/.test(w) || /^[A-Z][a-z]+[A-Z]/.test(w) || allow.has(w); \
             const out = []; \
             for (const text of ({texts_js})) for (const line of String(text ?? '').split('\\n')) {{ let run = []; \
               for (const tok of line.split(/[\\s，。：；、（）「」]+/).concat([''])) {{ const w = tok.replace(/^[\"'“‘(\\[（]+|[\"'”’)\\],.;:!?）：，。]+$/g, ''); \
                 if (/^[A-Za-z][A-Za-z'-]*$/.test(w) && !ident(w)) run.push(w); else {{ if (run.length >= {min_run}) out.push(run.join(' ') + '  ⟵ ' + line.slice(0, 120)); run = []; }} }} }} \
             return [...new Set(out)]; }})()",
            allow = serde_json::to_string(allow).unwrap()
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fabric_view_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("fabric").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    for id in ["storm", "hol", "deadlock", "incast"] {
        let params = rdmalab::labs::parse_params(id, &Value::Null).unwrap();
        let want = rdmalab::labs::run(id, &params).unwrap();
        let view = want.fabric.as_ref().expect("a fabric view");
        let hosts = view.nodes.iter().filter(|n| n.kind == "host").count();
        let switches = view.nodes.len() - hosts;
        open(&page, &format!("{base}/lab/{id}")).await;
        assert_eq!(settled(&page, id).await, "done", "{id}");
        wait_for(&page, "document.querySelector('.fabric-view .fv-svg')", id).await;
        // The topology drawn is the run's: as many hosts, switches and links, in words too.
        let drawn: (usize, usize, usize) = eval(
            &page,
            "[document.querySelectorAll('.fv-node.host').length, document.querySelectorAll('.fv-node.switch').length, document.querySelectorAll('.fv-link').length]",
        )
        .await;
        assert_eq!(drawn, (hosts, switches, view.links.len()), "{id}");
        let counts = texts(&page, ".fv-counts").await.join("");
        assert_eq!(
            counts,
            format!(
                "{hosts} 台主机 · {switches} 台交换机 · {} 条链路",
                view.links.len()
            ),
            "{id}"
        );
        // Scrub to the end; each link's card shows the PAUSE frames each direction sent, as
        // the run counted them.
        eval::<bool>(
            &page,
            "(() => { const r = document.querySelector('.fv-scrub'); r.value = r.max; r.dispatchEvent(new Event('input', {bubbles: true})); return true; })()",
        )
        .await;
        let mut total = 0u64;
        for (i, l) in view.links.iter().enumerate() {
            eval::<bool>(
                &page,
                &format!("(() => {{ document.querySelector('.fv-link[data-link=\"{i}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true; }})()"),
            )
            .await;
            let cells = texts(&page, ".fv-card tbody td.fv-pauses").await;
            let want_cells: Vec<String> = l
                .dirs
                .iter()
                .map(|d| {
                    let n = *d.pauses.last().unwrap();
                    total += n;
                    // The page groups thousands as zh-CN does.
                    let s = n.to_string();
                    let mut out = String::new();
                    for (k, ch) in s.chars().enumerate() {
                        if k > 0 && (s.len() - k) % 3 == 0 {
                            out.push(',');
                        }
                        out.push(ch);
                    }
                    out
                })
                .collect();
            assert_eq!(cells, want_cells, "{id} link {i}");
        }
        let fig = |name: &str| want.figure_value(name).unwrap() as u64;
        match id {
            "storm" => {
                // The report's storm count is what the stalled NIC's link card shows.
                let (i, _) = view
                    .links
                    .iter()
                    .enumerate()
                    .find(|(_, l)| {
                        view.nodes[l.a as usize].name == "r-h0"
                            || view.nodes[l.b as usize].name == "r-h0"
                    })
                    .unwrap();
                eval::<bool>(
                    &page,
                    &format!("(() => {{ document.querySelector('.fv-link[data-link=\"{i}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true; }})()"),
                )
                .await;
                let row = texts(&page, ".fv-card tbody tr").await;
                let shown_fig = texts(&page, "[data-figure=storm_pauses] .v").await.join("");
                assert_eq!(shown_fig, fig("storm_pauses").to_string());
                assert!(
                    row.iter().any(|r| r.starts_with("r-h0 → 右交换机")
                        && r.split_whitespace().rev().nth(1) == Some(shown_fig.as_str())),
                    "storm card {row:?} vs figure {shown_fig}"
                );
                // The pause climbs from the stalled receiver: r-h0 first, then the trunk, then
                // the left switch's hosts.
                let spread = texts(&page, ".fv-spread-list li").await;
                assert!(spread.len() >= 3, "{spread:?}");
                assert!(spread[0].starts_with("r-h0向右交换机"), "{spread:?}");
                assert!(spread[1].starts_with("右交换机向左交换机"), "{spread:?}");
                assert!(spread[2].starts_with("左交换机向l-h"), "{spread:?}");
                // The link's frames, each opening the inspector.
                eval::<bool>(
                    &page,
                    "(() => { window.__inspected = []; document.addEventListener('rdmalab:inspect', (e) => window.__inspected.push(e.detail)); \
                     document.querySelector('.fv-frames-btn').click(); return true; })()",
                )
                .await;
                let rows: usize = eval(
                    &page,
                    "document.querySelectorAll('[data-testid=fv-frames] tbody tr').length",
                )
                .await;
                assert!(
                    rows > 0 && rows <= 2 * rdmalab::labs::fabric_view::FRAMES_PER_DIRECTION,
                    "{rows}"
                );
                let kinds = texts(&page, "[data-testid=fv-frames] button.fv-frame").await;
                let k = kinds
                    .iter()
                    .position(|k| k == "PAUSE")
                    .expect("a PAUSE frame listed");
                let got: (String, String) = eval(
                    &page,
                    &format!("(() => {{ document.querySelectorAll('[data-testid=fv-frames] button.fv-frame')[{k}].click(); const d = window.__inspected.pop(); return [d.frame.kind, d.title]; }})()"),
                )
                .await;
                assert_eq!(got.0, "pause");
                assert!(got.1.starts_with("r-h0 → 右交换机"), "{got:?}");
                // The frame carries its bytes: the inspector opens it at its PFC header, each
                // field's meaning in Chinese.
                eval::<bool>(
                    &page,
                    &format!("(() => {{ document.querySelectorAll('[data-testid=fv-frames] button.fv-frame')[{k}].click(); return true; }})()"),
                )
                .await;
                wait_for(
                    &page,
                    "document.querySelector('[data-testid=inspector]:not([hidden]) [data-kind=macctl] table.insp-fields')",
                    "the inspector's PFC header",
                )
                .await;
                let pfc = texts(
                    &page,
                    "[data-testid=inspector] [data-kind=macctl] tr[data-fi]",
                )
                .await;
                assert!(
                    pfc.iter()
                        .any(|r| r.starts_with("class_enable_vector")
                            && r.contains("作用于优先级 3")),
                    "{pfc:#?}"
                );
                assert!(
                    pfc.iter()
                        .any(|r| r.starts_with("time[3]")
                            && r.contains("65535 个时间单位 × 512 位时间")),
                    "{pfc:#?}"
                );
                shot_view(&page, "lab-storm-fabric-inspector-zh").await;
                eval::<bool>(
                    &page,
                    "(() => { const c = document.querySelector('[data-testid=inspector] [data-insp-close]'); if (c) c.click(); return true; })()",
                )
                .await;
            }
            "hol" => assert_eq!(
                total,
                fig("pauses"),
                "hol: PAUSE frames on the cards vs the report"
            ),
            "incast" => assert_eq!(
                total,
                fig("pauses"),
                "incast: PAUSE frames on the cards vs the report"
            ),
            _ => {
                // A deadlock holds every ring link: each shows XOFF at the end.
                let xoff: usize = eval(&page, "document.querySelectorAll('.fv-xoff').length").await;
                let ring = view
                    .links
                    .iter()
                    .filter(|l| {
                        view.nodes[l.a as usize].kind == "switch"
                            && view.nodes[l.b as usize].kind == "switch"
                    })
                    .count();
                assert!(xoff >= ring, "{xoff} XOFF badges, {ring} ring links");
            }
        }
        let english = fabric_view_english(&page).await;
        assert!(
            english.is_empty(),
            "{id} (zh) fabric view has English: {english:#?}"
        );
        shot(&page, &format!("lab-{id}-fabric-zh")).await;
    }
    // Every lab at both widths and in both languages, for the record.
    for (w, h, m, tag) in [(1440, 900, false, "wide"), (390, 844, true, "phone")] {
        for spec in rdmalab::labs::catalogue() {
            for lang in ["zh", "en"] {
                // Again before each page: a full-page screenshot resets the metrics.
                page.execute(SetDeviceMetricsOverrideParams::new(
                    w,
                    h,
                    if m { 2.0 } else { 1.0 },
                    m,
                ))
                .await
                .unwrap();
                let q = if lang == "en" { "?lang=en" } else { "" };
                open(&page, &format!("{base}/lab/{}{q}", spec.id)).await;
                assert_eq!(settled(&page, spec.id).await, "done", "{}", spec.id);
                if tag == "phone" {
                    // The fabric view fits: the page never scrolls sideways.
                    let wide: bool = eval(
                        &page,
                        "document.documentElement.scrollWidth > window.innerWidth + 1",
                    )
                    .await;
                    assert!(!wide, "{} ({lang}) scrolls sideways at 390 px", spec.id);
                }
                shot(&page, &format!("lab-{}-{lang}-{tag}", spec.id)).await;
            }
        }
    }
    env.stop().await;
}

/// The playground's English words outside identifiers on a zh page: the visible text of the
/// page, with the steps' and the summary's disclosures opened (code, pre, selects, buffer bytes and the TOML parser's
/// own words, labelled as such, left out: what a learner types or wrote) and its titles, one
/// word at a time.
async fn pg_zh_english(page: &Page) -> Vec<String> {
    english_words(
        page,
        "(() => { const root = document.querySelector('section.pg').cloneNode(true); \
         for (const d of root.querySelectorAll('#pg-steps details, #pg-summary details')) d.open = true; \
         for (const e of root.querySelectorAll('code, pre, select, .pg-parser, .pg-hext, script')) e.remove(); \
         root.style.position = 'absolute'; root.style.left = '-9999px'; document.body.append(root); \
         const text = root.innerText; root.remove(); \
         return [text, ...[...document.querySelectorAll('section.pg [title]')].map((e) => e.getAttribute('title'))]; })()",
        &[
            "Verbs", "verbs", "RoCE", "NIC", "rdmalab", "ns", "µs", "ms", "s", "B", "as", "compare",
            "swap", "add", "rkey", "lkey", "remote", "offset", "access", "poll", "malloc", "run",
            "Tab", "Enter", "hex", "a", "b", "timeout", "completions", "connect", "state",
        ],
        1,
    )
    .await
}

/// Whether the element `sel` is inside the first viewport (the page scrolled to the top).
async fn in_first_viewport(page: &Page, sel: &str) -> bool {
    eval(
        page,
        &format!(
            "(() => {{ window.scrollTo(0, 0); const e = document.querySelector({s}); if (!e) return false; \
             const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.top < window.innerHeight - 40 && r.left < window.innerWidth; }})()",
            s = serde_json::to_string(sel).unwrap()
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_shows_memory_keys_and_a_tour_in_chinese() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("pgzh").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    open(&page, &format!("{base}/playground")).await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=quick-start]') && document.body.dataset.run === 'done'",
        "playground",
    )
    .await;
    // Bring-up as a learner does it: quick start, six modify_qp with the form's suggestions.
    assert_eq!(
        click_and_settle(&page, "[data-testid=quick-start]", "quick start").await,
        "done"
    );
    for i in 0..6 {
        let r = click_and_settle(&page, "[data-testid=add-modify_qp-submit]", "modify_qp").await;
        assert_eq!(r, "done", "modify {i}");
    }
    // The two hosts' MRs have their own keys and addresses.
    let keys: Vec<(String, String)> = eval(
        &page,
        "[...document.querySelectorAll('#pg-state tr[data-mr]')].map(r => [r.dataset.mr, r.children[3].textContent])",
    )
    .await;
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_ne!(
        keys[0].1, keys[1].1,
        "both hosts hand out the same rkey: {keys:?}"
    );
    // A WRITE of buf_a into b's MR, polled.
    set_fields(
        &page,
        "add-post_send",
        &[
            ("qp", "qp_a"),
            ("opcode", "RDMA_WRITE"),
            ("rmr", "mr_b"),
            ("roffset", "32"),
        ],
    )
    .await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=add-post_send-submit]", "write").await,
        "done"
    );
    set_fields(&page, "add-poll_cq", &[("cq", "cq_a")]).await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=add-poll_cq-submit]", "poll").await,
        "done"
    );
    let last = steps(&page).await.pop().unwrap();
    assert_eq!(last.2, "SUCCESS", "{last:?}");
    // The ladder and the memory view are in the first viewport, beside the steps.
    assert!(
        in_first_viewport(&page, "[data-testid=ladder] svg").await,
        "the ladder is below the fold"
    );
    assert!(
        in_first_viewport(&page, "#pg-memory .pg-buf.changed").await,
        "the memory view's changed buffer is below the fold"
    );
    // The bytes the WRITE placed in buf_b are marked, at the remote offset, and they are
    // buf_a's text.
    let marked: Vec<(u64, String)> = eval(
        &page,
        "[...document.querySelectorAll('#pg-memory .pg-buf[data-buf=buf_b] .pg-hexb mark.pg-chg')].map(m => [Number(m.dataset.off), m.textContent])",
    )
    .await;
    assert!(!marked.is_empty(), "no byte of buf_b is marked");
    assert_eq!(marked[0].0, 32, "{marked:?}");
    let text: String = marked
        .iter()
        .map(|(_, h)| u8::from_str_radix(h, 16).unwrap() as char)
        .collect();
    assert_eq!(text, "hello from a", "{marked:?}");
    let says: String = eval(
        &page,
        "document.querySelector('#pg-memory .pg-buf[data-buf=buf_b] .pg-bufw').innerText",
    )
    .await;
    assert!(says.contains("12 个字节"), "{says:?}");
    shot(&page, "playground-zh-write").await;
    // A ladder frame opens the inspector: the click dispatches rdmalab:inspect with the frame.
    let inspected: String = eval(
        &page,
        "(() => { let got = ''; document.addEventListener('rdmalab:inspect', (e) => { got = e.detail.frame.opcode + '|' + e.detail.title; }, { once: true }); \
         const p = [...document.querySelectorAll('[data-testid=ladder] .pg-frame[data-k]')]; \
         p[0].dispatchEvent(new MouseEvent('click', { bubbles: true })); return got; })()",
    )
    .await;
    assert!(inspected.contains("WRITE"), "{inspected:?}");
    // No English outside identifiers, and nothing the page could not translate.
    let runs = pg_zh_english(&page).await;
    assert!(runs.is_empty(), "the zh playground has English: {runs:#?}");
    let untranslated: usize = eval(
        &page,
        "document.querySelectorAll('[data-untranslated]').length",
    )
    .await;
    assert_eq!(untranslated, 0, "server texts with no Chinese form");
    // The wrong rkey: a WRITE naming a's own MR as the remote one reaches b with a key b never
    // handed out, and fails as on hardware.
    set_fields(
        &page,
        "add-post_send",
        &[("qp", "qp_a"), ("opcode", "RDMA_WRITE"), ("rmr", "mr_a")],
    )
    .await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=add-post_send-submit]", "bad rkey").await,
        "done"
    );
    set_fields(&page, "add-poll_cq", &[("cq", "cq_a")]).await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=add-poll_cq-submit]", "poll").await,
        "done"
    );
    let last = steps(&page).await.pop().unwrap();
    assert_eq!(last.2, "REM_ACCESS_ERR", "{last:?}");
    let visible: String = eval(
        &page,
        "document.querySelector('[data-testid^=step-]:last-of-type').innerText",
    )
    .await;
    assert!(
        visible.contains("REM_ACCESS_ERR") && visible.contains("远端访问错误"),
        "{visible:?}"
    );
    let runs = pg_zh_english(&page).await;
    assert!(
        runs.is_empty(),
        "the zh playground has English after the error: {runs:#?}"
    );
    // The tour: every step points at an element that exists, and it runs to its end.
    let missing: Vec<String> = eval(
        &page,
        "import('/assets/tour.js').then(m => m.TOURS.playground.filter(s => !document.querySelector(s.sel)).map(s => s.sel))",
    )
    .await;
    assert!(
        missing.is_empty(),
        "tour steps point at nothing: {missing:?}"
    );
    let n: usize = eval(
        &page,
        "import('/assets/tour.js').then(m => m.TOURS.playground.length)",
    )
    .await;
    eval::<bool>(
        &page,
        "(() => { document.querySelector('[data-testid=tour-start]').click(); return true; })()",
    )
    .await;
    for k in 1..=n {
        let (step, outlined, text): (String, bool, String) = eval(
            &page,
            "(() => { const b = document.querySelector('.tour-box'); return [b.dataset.step, !!document.querySelector('.tour-on'), b.querySelector('.tour-text').innerText]; })()",
        )
        .await;
        assert_eq!(step, k.to_string());
        assert!(outlined, "tour step {k} outlines nothing");
        assert!(
            !text.is_empty() && !text.is_ascii(),
            "tour step {k}: {text:?}"
        );
        eval::<bool>(
            &page,
            "(() => { document.querySelector('[data-testid=tour-next]').click(); return true; })()",
        )
        .await;
    }
    let still: bool = eval(&page, "!!document.querySelector('.tour-box')").await;
    assert!(!still, "the tour did not end after {n} steps");
    // Every example session a chapter links to: each server text has its Chinese form.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/verbs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "toml").then_some(stem)
        })
        .collect();
    names.sort();
    assert!(names.len() > 10, "{names:?}");
    for name in &names {
        open(&page, &format!("{base}/playground?example={name}")).await;
        wait_for(
            &page,
            "document.body.dataset.run === 'done' || document.body.dataset.run === 'error'",
            name,
        )
        .await;
        let left: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('[data-untranslated] span')].map(e => e.textContent)",
        )
        .await;
        assert!(left.is_empty(), "{name}: no Chinese for {left:#?}");
    }
    // A phone: tabs, one pane at a time.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
        .await
        .unwrap();
    let tabs: bool = eval(
        &page,
        "getComputedStyle(document.querySelector('.pg-panes')).display !== 'none'",
    )
    .await;
    assert!(tabs, "no pane tabs on a phone");
    let shown: (bool, bool) = eval(
        &page,
        "(() => { document.querySelector('[data-pane-tab=memory]').click(); \
         const vis = (s) => document.querySelector(s).getBoundingClientRect().height > 0; return [vis('#pg-memory'), vis('#pg-steps')]; })()",
    )
    .await;
    assert_eq!(
        shown,
        (true, false),
        "the memory tab shows the memory alone"
    );
    shot(&page, "playground-zh-phone-memory").await;
    eval::<bool>(
        &page,
        "(() => { document.querySelector('[data-pane-tab=steps]').click(); return true; })()",
    )
    .await;
    shot(&page, "playground-zh-phone").await;
    env.stop().await;
}

/// ns as the page writes them (draw.js `fmtNs`).
fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// A path's first-message steps as the narration groups them: (side, lane, stage, busy ns),
/// in the order each first started.
fn narrated_steps(p: &Value) -> Vec<(String, String, String, f64)> {
    let d = if p["latency"].is_null() {
        &p["failed_attempt"]
    } else {
        &p["latency"]
    };
    type Group = (String, String, String, f64, f64, f64);
    let mut out: Vec<Group> = Vec::new();
    for iv in d["timeline"].as_array().unwrap() {
        let k = (
            iv["side"].as_str().unwrap(),
            iv["lane"].as_str().unwrap(),
            iv["stage"].as_str().unwrap(),
        );
        let (s, e) = (
            iv["start_ns"].as_f64().unwrap(),
            iv["end_ns"].as_f64().unwrap(),
        );
        match out
            .iter_mut()
            .find(|o| (o.0.as_str(), o.1.as_str(), o.2.as_str()) == k)
        {
            Some(o) => {
                o.3 += e - s;
                o.4 = o.4.min(s);
                o.5 = o.5.max(e);
            }
            None => out.push((k.0.into(), k.1.into(), k.2.into(), e - s, s, e)),
        }
    }
    out.sort_by(|a, b| a.4.total_cmp(&b.4).then(a.5.total_cmp(&b.5)));
    out.into_iter()
        .map(|(a, b, c, d, _, _)| (a, b, c, d))
        .collect()
}

/// Clicks the button whose visible text is `text` (inside `scope`).
async fn click_text(page: &Page, scope: &str, text: &str) {
    let ok: bool = eval(
        page,
        &format!(
            "(() => {{ const b = [...document.querySelectorAll({scope:?} + ' button')].find(b => b.innerText.trim() === {text:?}); if (!b) return false; b.click(); return true; }})()"
        ),
    )
    .await;
    assert!(ok, "no button {text:?} in {scope}");
}

/// The current step's visible text in each narration list, [TCP, RDMA].
async fn current_steps(page: &Page) -> Vec<String> {
    eval(
        page,
        "['tcp', 'rdma'].map(p => { const li = document.querySelector(`ol.narr[data-path=${p}] li.current`); return li ? li.innerText : ''; })",
    )
    .await
}

/// Issue 19 on the simulation page, following the lessons' hands-on steps on the Chinese
/// pages and reading what a learner reads: the narration beside the drawing (lessons 1–3),
/// the bypassed kernel (lesson 2), the remote application SEND touches and WRITE does not
/// (lesson 3), and the packet view of a drop (lesson 5) with the numbers of the run's frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_page_tells_the_story() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("story").await else {
        return;
    };
    let base = env.base.clone();
    let page = env.page.clone();
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    // Lesson 1, "跑基线场景，只看 TCP 一栏": the steps of each path as sentences in order, with
    // their times; the table counts the CPU stages per side, as the narration does.
    open(&page, &format!("{base}/lesson/1")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"0\"]')",
        "lesson 1",
    )
    .await;
    eval::<bool>(&page, "(() => { document.querySelector('section.try a.button[data-try=\"0\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "lesson 1's run",
    )
    .await;
    let r = report("lesson1", &[]);
    for path in ["tcp", "rdma"] {
        let want = narrated_steps(&r[path]);
        let shown: Vec<String> = eval(
            &page,
            &format!("[...document.querySelectorAll('ol.narr[data-path={path}] li')].map(li => li.innerText)"),
        )
        .await;
        assert_eq!(shown.len(), want.len(), "{path}: {shown:#?}");
        for (i, (li, (_, _, _, busy))) in shown.iter().zip(&want).enumerate() {
            assert!(
                li.contains(&fmt_ns(*busy)),
                "{path} step {i}: {li:?} lacks {}",
                fmt_ns(*busy)
            );
            let n = i as u32 + 1;
            // ①–⑳, then "(21)": fonts without ㉑ would draw a box.
            let mark = match n {
                1..=20 => char::from_u32(0x2460 + n - 1).unwrap().to_string(),
                _ => format!("({n})"),
            };
            assert!(li.starts_with(&mark), "{path} step {i}: {li:?}");
        }
        let local = r[path]["data_path"]["cpu_stages_local"]
            .as_array()
            .unwrap()
            .len();
        let remote = r[path]["data_path"]["cpu_stages_remote"]
            .as_array()
            .unwrap()
            .len();
        let sum: String = eval(
            &page,
            &format!("document.querySelector('[data-testid=narr-sum-{path}]').innerText"),
        )
        .await;
        assert!(
            sum.contains(&format!("本端 {local} 步，远端 {remote} 步")),
            "{path}: {sum:?}"
        );
        let cell: String = eval(&page, &format!("document.querySelector('tr[data-row=cpu_stage_count] td[data-path={path}]').innerText")).await;
        assert_eq!(cell.trim(), format!("{local} / {remote}"), "{path}");
    }
    let label: String = eval(
        &page,
        "document.querySelector('tr[data-row=cpu_stage_count] th').innerText",
    )
    .await;
    assert!(label.contains("占 CPU 的阶段数"), "{label:?}");
    let first: String = eval(
        &page,
        "document.querySelector('ol.narr[data-path=tcp] li').innerText",
    )
    .await;
    assert!(
        first.contains("本端应用")
            && first.contains("write() 系统调用进入")
            && first.contains("占 CPU"),
        "{first:?}"
    );
    // The time is stretched, and the page says by how much.
    let stretch: String = eval(&page, "document.querySelector('#stretch').innerText").await;
    assert!(
        stretch.contains("慢放")
            && stretch.contains("300 ms")
            && stretch.contains(&fmt_ns(
                ["tcp", "rdma"]
                    .iter()
                    .flat_map(|p| {
                        let d = &r[*p]["latency"];
                        d["timeline"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|iv| iv["end_ns"].as_f64().unwrap())
                            .chain(d["frames"].as_array().unwrap().iter().map(|f| {
                                f["arrived_ns"]
                                    .as_f64()
                                    .or(f["left_switch_ns"].as_f64())
                                    .unwrap_or(f["sent_ns"].as_f64().unwrap())
                            }))
                            .collect::<Vec<_>>()
                    })
                    .fold(0.0, f64::max)
            )),
        "{stretch:?}"
    );
    // Every step stays on screen at least 300 ms at 1×: the page's own clock, read back.
    let shortest: f64 = eval(
        &page,
        "(async () => { const n = await import('/assets/narration.js'); const d = await import('/assets/draw.js'); \
         const r = window.__rdmalabReport; const span = d.spanNs(r); const pace = n.pacing(r, span); \
         let min = Infinity; for (const p of ['tcp', 'rdma']) for (const s of n.stepsOf(r[p])) min = Math.min(min, pace.toReal(Math.min(span, s.end)) - pace.toReal(s.start)); return min; })()",
    )
    .await;
    assert!(
        shortest >= 300.0 - 1e-6,
        "a step is on screen {shortest} ms at 1×"
    );
    // Step forward and back: the highlighted step moves, on the list and on the drawing.
    eval::<bool>(&page, "(() => { const b = document.querySelector('#play'); if (b.innerText.trim() === '暂停') b.click(); return true; })()").await;
    click_text(&page, "#player", "◀ 上一步").await;
    let at0 = current_steps(&page).await;
    click_text(&page, "#player", "下一步 ▶").await;
    let at1 = current_steps(&page).await;
    click_text(&page, "#player", "下一步 ▶").await;
    let at2 = current_steps(&page).await;
    assert_ne!(at1, at2, "下一步 changed nothing");
    click_text(&page, "#player", "◀ 上一步").await;
    assert_eq!(current_steps(&page).await, at1, "上一步 went back");
    assert!(
        at0.iter().chain(&at1).all(|s| !s.is_empty()),
        "{at0:?} {at1:?}"
    );
    let boxes: Vec<String> = eval(&page, "[...document.querySelectorAll('svg.paths g.box.current')].map(g => g.dataset.path + '-' + g.dataset.side + '-' + g.dataset.lane)").await;
    assert_eq!(boxes.len(), 2, "one current box per path: {boxes:?}");
    // Stepping to the end leaves every box the message went through marked.
    for _ in 0..80 {
        click_text(&page, "#player", "下一步 ▶").await;
    }
    let visited: Vec<String> = eval(&page, "[...document.querySelectorAll('svg.paths g.box.visited')].map(g => g.dataset.path + '-' + g.dataset.side + '-' + g.dataset.lane)").await;
    for path in ["tcp", "rdma"] {
        for (side, lane, _, _) in narrated_steps(&r[path]) {
            let k = if lane == "switch" {
                format!("{path}-fabric-switch")
            } else {
                format!("{path}-{side}-{lane}")
            };
            assert!(visited.contains(&k), "{k} not marked: {visited:?}");
        }
    }
    let ladder_lit: usize = eval(
        &page,
        "document.querySelectorAll('svg.ladder rect.bar.current').length",
    )
    .await;
    assert!(
        ladder_lit >= 2,
        "the timeline marks the current step ({ladder_lit})"
    );
    shot(&page, "story-lesson1-zh").await;

    // Lesson 2, "两条路并排对比": RDMA's steps never enter a kernel, and both kernel boxes of its
    // row are drawn bypassed, the line going around them.
    open(&page, &format!("{base}/lesson/2")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"0\"]')",
        "lesson 2",
    )
    .await;
    eval::<bool>(&page, "(() => { document.querySelector('section.try a.button[data-try=\"0\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "lesson 2's run",
    )
    .await;
    let rdma_steps: String = eval(
        &page,
        "document.querySelector('ol.narr[data-path=rdma]').innerText",
    )
    .await;
    assert!(
        !rdma_steps.contains("内核"),
        "an RDMA step in a kernel: {rdma_steps}"
    );
    let tcp_steps: String = eval(
        &page,
        "document.querySelector('ol.narr[data-path=tcp]').innerText",
    )
    .await;
    assert!(
        tcp_steps.contains("本端内核") && tcp_steps.contains("远端内核"),
        "{tcp_steps}"
    );
    let note: String = eval(
        &page,
        "document.querySelector('.narr-col[data-path=rdma] [data-testid=no-kernel]').innerText",
    )
    .await;
    assert!(note.contains("绕过"), "{note:?}");
    let kernels: Vec<(String, String)> = eval(
        &page,
        "[...document.querySelectorAll('svg.paths g.box[data-path=rdma][data-lane=kernel]')].map(g => [g.dataset.skip || '', g.querySelector('text.skip-tag') ? g.querySelector('text.skip-tag').textContent : ''])",
    )
    .await;
    assert_eq!(
        kernels,
        vec![("bypassed".to_string(), "绕过".to_string()); 2]
    );
    // Locally the line goes around the kernel from the application to the NIC; a WRITE's
    // line ends at the remote NIC (the remote application is never involved).
    let around: usize = eval(
        &page,
        "document.querySelectorAll('svg.paths g.row[data-path=rdma] path.wire.around').length",
    )
    .await;
    assert_eq!(around, 1, "the RDMA line goes around the local kernel");
    let tcp_skips: usize = eval(
        &page,
        "document.querySelectorAll('svg.paths g.box[data-path=tcp][data-skip]').length",
    )
    .await;
    assert_eq!(tcp_skips, 0, "TCP enters every box");
    // Stage labels fit their boxes (wrapped in at most two lines).
    let overflow: Vec<String> = eval(
        &page,
        "(() => { const out = []; for (let k = 0; k <= 1000; k += 20) { const s = document.querySelector('#time'); s.value = String(k); s.dispatchEvent(new Event('input')); \
           for (const g of document.querySelectorAll('svg.paths g.box')) { const r = g.querySelector('rect').getBBox(); \
             for (const t of g.querySelectorAll('text.stage tspan')) { if (!t.textContent) continue; const b = t.getBBox(); \
               if (b.x < r.x - 1 || b.x + b.width > r.x + r.width + 1) out.push(t.textContent); } } } return [...new Set(out)]; })()",
    )
    .await;
    assert!(
        overflow.is_empty(),
        "labels wider than their boxes: {overflow:?}"
    );
    shot(&page, "story-lesson2-zh").await;

    // Lesson 3: SEND lights and marks the remote application; WRITE never reaches it.
    open(&page, &format!("{base}/lesson/3")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"1\"]')",
        "lesson 3",
    )
    .await;
    eval::<bool>(&page, "(() => { document.querySelector('section.try a.button[data-try=\"0\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "SEND",
    )
    .await;
    let send_steps: String = eval(
        &page,
        "document.querySelector('ol.narr[data-path=rdma]').innerText",
    )
    .await;
    assert!(send_steps.contains("远端应用：post_recv"), "{send_steps}");
    eval::<bool>(&page, "(() => { const b = document.querySelector('#play'); if (b.innerText.trim() === '暂停') b.click(); return true; })()").await;
    for _ in 0..80 {
        click_text(&page, "#player", "下一步 ▶").await;
    }
    let marked: String = eval(&page, "document.querySelector('svg.paths g.box[data-path=rdma][data-side=remote][data-lane=app]').getAttribute('class')").await;
    assert!(
        marked.contains("visited"),
        "SEND's remote app box: {marked}"
    );
    shot(&page, "story-lesson3-send-zh").await;
    eval::<bool>(&page, "(() => { history.back(); return true; })()").await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"1\"]')",
        "back to lesson 3",
    )
    .await;
    eval::<bool>(&page, "(() => { document.body.dataset.run = 'clicked'; document.querySelector('section.try a.button[data-try=\"1\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "WRITE",
    )
    .await;
    let write_steps: String = eval(
        &page,
        "document.querySelector('ol.narr[data-path=rdma]').innerText",
    )
    .await;
    assert!(!write_steps.contains("远端应用"), "{write_steps}");
    let app: (String, String) = eval(&page, "(() => { const g = document.querySelector('svg.paths g.box[data-path=rdma][data-side=remote][data-lane=app]'); return [g.dataset.skip || '', g.innerText || g.textContent]; })()").await;
    assert_eq!(app.0, "unreached");
    assert!(app.1.contains("未经过"), "{app:?}");

    // Lesson 5, "场景⑤：1% 丢包，不开无损": after the run, the packet view narrates the first
    // drop, its NAK and the range resent, with the numbers of this run's frames.
    open(&page, &format!("{base}/lesson/5")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"0\"]')",
        "lesson 5",
    )
    .await;
    eval::<bool>(&page, "(() => { document.querySelector('section.try a.button[data-try=\"0\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.run === 'done'",
        "lesson 5's run",
    )
    .await;
    wait_for(
        &page,
        "document.body.dataset.packets === 'done'",
        "the packet view",
    )
    .await;
    let plan = scenario::parse_with(scenario::preset("lesson5").unwrap().toml, &[]).unwrap();
    let (_, views) =
        rdmalab::report::run_plan_packets(&plan, &rdmalab::report::RunOptions::default()).unwrap();
    let rv = views.iter().find(|v| v.path == "rdma").unwrap();
    let st = rv.story.as_ref().unwrap();
    let (psn, re) = (st.drop.psn.unwrap(), st.resend.as_ref().unwrap());
    let summary: String = eval(
        &page,
        "document.querySelector('[data-testid=pv-summary-rdma]').innerText",
    )
    .await;
    for want in [
        format!("PSN {psn} 在交换机被丢"),
        format!("NAK {psn}"),
        format!(
            "请求方从 {} 重发到 {}，共 {} 个包",
            re.from, re.to, re.packets
        ),
    ] {
        assert!(summary.contains(&want), "{summary:?} lacks {want:?}");
    }
    let tv = views.iter().find(|v| v.path == "tcp").unwrap();
    let tsum: String = eval(
        &page,
        "document.querySelector('[data-testid=pv-summary-tcp]').innerText",
    )
    .await;
    let seq = tv.story.as_ref().unwrap().drop.seq.unwrap();
    assert!(
        tsum.contains(&format!("序号 {seq} 的段在交换机被丢")),
        "{tsum:?}"
    );
    let empty: bool = eval(&page, "document.body.innerText.includes('没有\"第一条消息\"的动画') || !document.querySelector('#ladder-title').hidden").await;
    assert!(
        !empty,
        "the stream page still shows the empty first-message parts"
    );
    // Scrub: at the start no story step is current; at the end the resend is.
    let cur = |v: &str| {
        format!(
            "(() => {{ const s = document.querySelector('#pv-time'); s.value = '{v}'; s.dispatchEvent(new Event('input')); \
        const li = document.querySelector('.pv-panel[data-view=rdma] ol.pv-story li.current'); return li ? li.dataset.kind : ''; }})()"
        )
    };
    let at_start: String = eval(&page, &cur("0")).await;
    let at_end: String = eval(&page, &cur("1000")).await;
    assert_eq!((at_start.as_str(), at_end.as_str()), ("", "resend"));
    // The drawing marks the drop and the resent frames; a click on a frame asks the inspector.
    let (dropped, resent): (usize, usize) = eval(&page, "[document.querySelectorAll('.pv-panel[data-view=rdma] g.pv-frame.dropped').length, document.querySelectorAll('.pv-panel[data-view=rdma] g.pv-frame.resend').length]").await;
    assert!(
        dropped >= 1 && resent as u32 >= re.packets,
        "{dropped} dropped, {resent} resent"
    );
    let inspected: Value = eval(
        &page,
        "(() => { let got = null; const h = (e) => { got = e.detail; }; document.addEventListener('rdmalab:inspect', h); \
         document.querySelector('.pv-panel[data-view=rdma] g.pv-frame.dropped').dispatchEvent(new MouseEvent('click', {bubbles: true})); \
         document.removeEventListener('rdmalab:inspect', h); return got; })()",
    )
    .await;
    assert_eq!(inspected["frame"]["psn"], psn, "{inspected}");
    assert!(
        inspected["title"].as_str().unwrap().contains("被丢"),
        "{inspected}"
    );
    shot(&page, "story-lesson5-zh").await;
    // The same scenario with selective repeat, side by side.
    click_text(&page, ".packetview", "同一场景换成选择重传，并排对比").await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=pv-summary-alt]')",
        "the selective panel",
    )
    .await;
    let alt: String = eval(
        &page,
        "document.querySelector('[data-testid=pv-summary-alt]').innerText",
    )
    .await;
    let sel = scenario::parse_with(
        scenario::preset("lesson5").unwrap().toml,
        &[
            "rdma.retransmission=\"selective\"",
            "workload.paths=\"rdma\"",
        ],
    )
    .unwrap();
    let (_, sv) =
        rdmalab::report::run_plan_packets(&sel, &rdmalab::report::RunOptions::default()).unwrap();
    let s2 = sv[0].story.as_ref().unwrap();
    assert!(
        alt.contains(&format!(
            "SACK NAK {}",
            s2.report.as_ref().unwrap().psn.unwrap()
        )),
        "{alt:?}"
    );
    assert!(
        alt.contains(&format!(
            "请求方只重发 PSN {}",
            s2.resend.as_ref().unwrap().from
        )),
        "{alt:?}"
    );
    shot(&page, "story-lesson5-compare-zh").await;
    // The new parts speak Chinese: no run of two lower-case English words in the packet view
    // (three panels now) or the narration, and "remote" is 远端 everywhere on the page.
    let english: Vec<String> = eval(
        &page,
        "(() => { const out = []; for (const el of document.querySelectorAll('.packetview, .narration, svg.pv title, .pv-frame')) \
           for (const line of (el.innerText ?? el.textContent).split('\\n').concat(el.getAttribute && el.getAttribute('aria-label') ? [el.getAttribute('aria-label')] : [])) { let run = []; \
             for (const tok of line.split(/\\s+/).concat([''])) { const w = tok.replace(/^[\"'“‘(\\[（]+|[\"'”’)\\],.;:!?，。）、]+$/g, ''); \
               if (/^[a-z][a-z'-]*$/.test(w)) run.push(w); else { if (run.length >= 2) out.push(run.join(' ') + ' ⟵ ' + line.slice(0, 100)); run = []; } } } \
           return [...new Set(out)]; })()",
    )
    .await;
    assert!(
        english.is_empty(),
        "English in the zh packet view: {english:#?}"
    );
    let other: bool = eval(&page, "document.body.innerText.includes('对端')").await;
    assert!(!other, "对端 on the simulation page (the page says 远端)");
    // "打开无损网络（PFC）": no drop in the RDMA window; PAUSE frames from the switch instead.
    open(&page, &format!("{base}/lesson/5")).await;
    wait_for(
        &page,
        "document.querySelector('section.try a.button[data-try=\"1\"]')",
        "lesson 5",
    )
    .await;
    eval::<bool>(&page, "(() => { document.body.dataset.packets = ''; document.querySelector('section.try a.button[data-try=\"1\"]').click(); return true; })()").await;
    wait_for(
        &page,
        "location.pathname === '/sim' && document.body.dataset.packets === 'done'",
        "the lossless packet view",
    )
    .await;
    let lossless: String = eval(
        &page,
        "document.querySelector('[data-testid=pv-summary-rdma]').innerText",
    )
    .await;
    assert!(
        lossless.contains("没有丢包") && lossless.contains("PAUSE"),
        "{lossless:?}"
    );
    let pauses: usize = eval(
        &page,
        "document.querySelectorAll('.pv-panel[data-view=rdma] .pv-pause').length",
    )
    .await;
    assert!(pauses > 0, "no PAUSE drawn");

    // Screenshots, looked at by hand: lessons 1, 2, 3 and 5 in both languages, wide and phone.
    for (w, h, m, tag) in [(1440, 900, false, "wide"), (390, 844, true, "phone")] {
        for (preset, lesson) in [
            ("lesson1", 1),
            ("lesson1", 2),
            ("lesson2", 3),
            ("lesson5", 5),
        ] {
            for (lang, q) in [("zh", ""), ("en", "&lang=en")] {
                // A full-page screenshot resizes the page: the size is set again each time.
                page.execute(SetDeviceMetricsOverrideParams::new(
                    w,
                    h,
                    if m { 2.0 } else { 1.0 },
                    m,
                ))
                .await
                .unwrap();
                open_sim(&page, &format!("{base}/sim?preset={preset}{q}")).await;
                if preset == "lesson5" {
                    wait_for(&page, "document.body.dataset.packets === 'done'", "packets").await;
                }
                let overflow: f64 = eval(
                    &page,
                    "document.documentElement.scrollWidth - window.innerWidth",
                )
                .await;
                assert!(
                    overflow <= 1.0,
                    "{preset} {lang} {tag}: {overflow} px sideways"
                );
                if lang == "zh" {
                    let other: bool = eval(&page, "document.body.innerText.includes('对端')").await;
                    assert!(!other, "{preset}: 对端 on the page");
                }
                if lesson == 2 && lang == "zh" && !m {
                    // Wide: the table stands beside the drawing.
                    let (dx, tx): (f64, f64) = eval(&page, "[document.querySelector('.drawing').getBoundingClientRect().right, document.querySelector('#table').getBoundingClientRect().left]").await;
                    assert!(
                        tx >= dx,
                        "the table is not beside the drawing ({tx} < {dx})"
                    );
                }
                shot(&page, &format!("story-lesson{lesson}-{lang}-{tag}")).await;
            }
        }
    }
    env.stop().await;
}

/// Screenshot of the viewport only (the inspector is a fixed panel over the page).
async fn shot_view(page: &Page, name: &str) {
    page.save_screenshot(
        ScreenshotParams::builder().build(),
        shots_dir().join(format!("{name}.png")),
    )
    .await
    .unwrap();
}

/// Runs of three or more English words outside identifiers in the text `text_js` gives (the
/// rule of the zh pages above).
async fn english_runs(page: &Page, text_js: &str) -> Vec<String> {
    english_words(
        page,
        &format!("[{text_js}]"),
        &["rdmalab", "RoCE", "Mittal", "et", "al", "SIGCOMM", "B"],
        3,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_packet_inspector_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("inspector").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    for lang in ["zh", "en"] {
        let q = if lang == "en" { "&lang=en" } else { "" };
        // The write example: bring-up, then one RDMA WRITE and its ACK on the ladder.
        open(&page, &format!("{base}/playground?example=write{q}")).await;
        assert_eq!(settled(&page, "example").await, "done");
        // Show every step's packets, then click the WRITE as a learner would.
        eval::<bool>(
            &page,
            "(() => { const c = document.querySelector('#pg-all'); if (!c.checked) c.click(); return true; })()",
        )
        .await;
        wait_for(
            &page,
            "document.querySelector('.pg-frame[data-opcode*=RDMA_WRITE]')",
            "the WRITE on the ladder",
        )
        .await;
        eval::<bool>(
            &page,
            "(() => { document.querySelector('.pg-frame[data-opcode*=RDMA_WRITE]').dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()",
        )
        .await;
        wait_for(
            &page,
            "document.querySelector('[data-testid=inspector]:not([hidden]) [data-kind=bth] svg.insp-layout')",
            "the inspector's BTH",
        )
        .await;
        let text: String = eval(
            &page,
            "document.querySelector('[data-testid=inspector]').innerText",
        )
        .await;
        // What the learner reads: the opcode in words, the BTH fields, the RETH's key, the
        // sections that define them; every value decoded from the frame's bytes.
        for want in [
            "OpCode",
            "DestQP",
            "PSN",
            "R_Key",
            "RDMA WRITE Only",
            "RC RDMA_WRITE_ONLY",
            "ICRC",
        ] {
            assert!(text.contains(want), "{lang}: no {want:?} in {text}");
        }
        let sections = if lang == "zh" {
            ["IBTA 第 1 卷 §9.2", "IBTA 第 1 卷 §9.3.3"]
        } else {
            ["IBTA Vol 1 §9.2", "IBTA Vol 1 §9.3.3"]
        };
        for s in sections {
            assert!(text.contains(s), "{lang}: no {s:?}");
        }
        // ibta: a field defined elsewhere than its header cites its own section (the ECN bits
        // are RFC 3168's), and the byte count says how it meets the ladder's, which counts
        // the FCS.
        assert!(text.contains("RFC 3168 §5"), "{lang}: no ECN section");
        let len_note: String = eval(
            &page,
            "document.querySelector('[data-testid=insp-len]').textContent",
        )
        .await;
        let fcs = if lang == "zh" {
            "加上 4 字节 FCS 共"
        } else {
            "with its 4 bytes"
        };
        assert!(len_note.contains(fcs), "{lang}: {len_note}");
        // The bit layout is drawn from the same table: one box per BTH field (the 14 fields).
        let boxes: usize = eval(
            &page,
            "document.querySelectorAll('[data-testid=inspector] [data-kind=bth] .insp-box').length",
        )
        .await;
        assert_eq!(boxes, 14, "{lang}: BTH boxes");
        // Picking the RETH's R_Key lights its 4 bytes in the hex dump.
        eval::<bool>(
            &page,
            "(() => { const r = [...document.querySelectorAll('[data-testid=inspector] [data-kind=reth] tr[data-fi]')].find(t => t.textContent.includes('R_Key')); r.click(); return true; })()",
        )
        .await;
        let lit: String = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=insp-hex] span.f')].map(s => s.textContent).join('')",
        )
        .await;
        assert_eq!(lit.len(), 8, "{lang}: R_Key is 4 bytes lit: {lit}");
        let rkey: String = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=inspector] [data-kind=reth] tr[data-fi]')].find(t => t.textContent.includes('R_Key')).querySelector('code').textContent",
        )
        .await;
        assert_eq!(
            format!("0x{}", lit.trim_start_matches('0')),
            rkey,
            "{lang}: the lit bytes are the R_Key"
        );
        if lang == "zh" {
            // The payload's own bytes (the session's text) are data, not the page's words.
            let runs = english_runs(
                &page,
                "(() => { const c = document.querySelector('[data-testid=inspector]').cloneNode(true); c.querySelectorAll('.insp-data').forEach(e => e.remove()); document.body.appendChild(c); const t = c.innerText; c.remove(); return t; })()",
            )
            .await;
            assert!(runs.is_empty(), "the zh inspector has English: {runs:#?}");
        }
        shot_view(&page, &format!("inspector-{lang}-1440")).await;
        page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let w: f64 = eval(
            &page,
            "document.querySelector('[data-testid=inspector]').getBoundingClientRect().width",
        )
        .await;
        assert!(
            w >= 389.0,
            "{lang}: at 390 px the inspector is a full-width sheet ({w})"
        );
        shot_view(&page, &format!("inspector-{lang}-390")).await;
        page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
            .await
            .unwrap();
    }
    // A lesson's ladder is drawn by the server; its frames open in the same inspector.
    open(&page, &format!("{base}/chapter/m3c16")).await;
    wait_for(
        &page,
        "document.querySelector('svg.ladder g.frame[data-wire]')",
        "the chapter's ladder",
    )
    .await;
    eval::<bool>(
        &page,
        "(() => { const g = [...document.querySelectorAll('svg.ladder g.frame[data-wire]')].find(g => /SEND/.test(g.dataset.title)); g.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=inspector]:not([hidden]) [data-kind=bth] svg.insp-layout')",
        "the inspector from a lesson ladder",
    )
    .await;
    let text: String = eval(
        &page,
        "document.querySelector('[data-testid=inspector]').innerText",
    )
    .await;
    assert!(
        text.contains("SEND") && text.contains("IBTA 第 1 卷 §9.2"),
        "{text}"
    );
    shot_view(&page, "inspector-zh-chapter").await;
    env.stop().await;
}

/// ASCII words a zh tour step may contain: identifiers a learner types or reads (verbs,
/// opcodes, states, errno names, protocol and unit names).
const TOUR_ZH_IDENTIFIERS: &[&str] = &[
    "TCP",
    "RDMA",
    "SEND",
    "RECV",
    "WRITE",
    "write",
    "post_send",
    "post_recv",
    "poll_cq",
    "ibv_poll_cq",
    "ibv_post_send",
    "QP",
    "ERR",
    "RTR",
    "RTS",
    "EINVAL",
    "CQE",
    "WQE",
    "CQ",
    "NAK",
    "ACK",
    "PFC",
    "ECN",
    "PAUSE",
    "RESUME",
    "PCIe",
    "go",
    "back",
    "rxe",
    "mlx5",
    "Soft",
    "RoCE",
    "MiB",
    "KiB",
    "GbE",
    "CPU",
    "mr_a",
    "mr_b",
];

/// Every lesson's tour on the zh simulation page runs through all its steps, each pointing at
/// an element that is on the page and visible, each text Chinese (identifiers aside); every
/// step has its English text too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_lesson_tour_on_the_simulation_page_runs_to_its_end() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("simtours").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    let presets = [
        "lesson1", "lesson2", "lesson3", "lesson4", "lesson5", "lesson5b", "lesson6",
    ];
    for preset in presets {
        open_sim(&page, &format!("{base}/sim?preset={preset}")).await;
        if preset.starts_with("lesson5") {
            wait_for(
                &page,
                "document.querySelector('[data-testid=packetview] .pv-panel')",
                "the packet view",
            )
            .await;
        }
        let tour = format!("sim-{preset}");
        let (n, no_en): (usize, usize) = eval(
            &page,
            &format!("import('/assets/tour.js').then(m => [m.TOURS['{tour}'].length, m.TOURS['{tour}'].filter(s => !s.en || !s.zh).length])"),
        )
        .await;
        assert!(n >= 5, "{tour} has {n} steps");
        assert_eq!(no_en, 0, "{tour}: steps without both languages");
        let label: String = eval(
            &page,
            "(() => { const b = document.querySelector('[data-testid=preset-what] [data-testid=tour-start]'); b.click(); return b.innerText; })()",
        )
        .await;
        assert_eq!(label, "导览", "{tour}: the start button");
        for k in 1..=n {
            let (step, on_target, visible, text): (String, bool, bool, String) = eval(
                &page,
                &format!("import('/assets/tour.js').then(m => {{ const s = m.TOURS['{tour}'][{k} - 1]; const b = document.querySelector('.tour-box'); const el = document.querySelector(s.sel); const on = document.querySelector('.tour-on'); const r = el ? el.getBoundingClientRect() : null; return [b.dataset.step, !!el && el === on, !!r && r.width > 0 && r.height > 0, b.querySelector('.tour-text').innerText]; }})"),
            )
            .await;
            assert_eq!(step, k.to_string(), "{tour}");
            assert!(
                on_target,
                "{tour} step {k}: its target is missing or not outlined"
            );
            assert!(visible, "{tour} step {k}: its target is not visible");
            let english: Vec<&str> = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.len() >= 2 && w.chars().any(|c| c.is_ascii_alphabetic()))
                .filter(|w| !TOUR_ZH_IDENTIFIERS.contains(w))
                .collect();
            assert!(
                english.is_empty(),
                "{tour} step {k} has English {english:?}: {text}"
            );
            eval::<bool>(
                &page,
                "(() => { document.querySelector('[data-testid=tour-next]').click(); return true; })()",
            )
            .await;
        }
        let still: bool = eval(&page, "!!document.querySelector('.tour-box')").await;
        assert!(!still, "{tour} did not end after {n} steps");
        println!("{tour}: {n} steps, every target present");
    }
    env.stop().await;
}

/// At 390×844 the simulation page does not scroll sideways and the path drawing fits its box;
/// the charts have axis labels with units, in the page's language.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_page_fits_a_phone_and_its_charts_have_units() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("simphone").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    for (w, h) in [(390, 844), (1440, 900)] {
        page.execute(SetDeviceMetricsOverrideParams::new(w, h, 1.0, false))
            .await
            .unwrap();
        for (preset, lang) in [
            ("lesson1", "zh"),
            ("lesson5", "zh"),
            ("lesson1", "en"),
            ("lesson5", "en"),
        ] {
            open_sim(&page, &format!("{base}/sim?preset={preset}&lang={lang}")).await;
            let (page_w, view_w, draw_r, box_r): (f64, f64, f64, f64) = eval(
                &page,
                "(() => { const s = document.querySelector('svg.paths').getBoundingClientRect(); const b = document.querySelector('#paths').getBoundingClientRect(); return [document.documentElement.scrollWidth, window.innerWidth, s.right, b.right]; })()",
            )
            .await;
            assert!(
                page_w <= view_w,
                "{w} px, {preset} {lang}: the page scrolls sideways ({page_w} > {view_w})"
            );
            assert!(
                draw_r <= box_r + 1.0,
                "{w} px, {preset} {lang}: the drawing overflows its box ({draw_r} > {box_r})"
            );
            let fits: bool = eval(
                &page,
                "(() => { const p = document.querySelector('#paths'); return p.scrollWidth <= p.clientWidth + 1; })()",
            )
            .await;
            assert!(
                fits,
                "{w} px, {preset} {lang}: the drawing scrolls inside its box"
            );
            // Every chart: a y-axis label with its unit; the throughput chart an x label too.
            let charts: Vec<(String, Vec<String>)> = eval(
                &page,
                "[...document.querySelectorAll('#charts svg.chart')].map(s => [s.dataset.chart, [...s.querySelectorAll('.lc-unit')].map(u => u.textContent)])",
            )
            .await;
            let want: &[&str] = if preset == "lesson1" {
                &["cpu", "latency"]
            } else {
                &["cpu", "tput", "retention"]
            };
            let ids: Vec<&str> = charts.iter().map(|(id, _)| id.as_str()).collect();
            assert_eq!(ids, want, "{preset} {lang}: charts");
            for (id, units) in &charts {
                assert!(
                    units
                        .iter()
                        .any(|u| ["µs", "Gb/s", "%"].iter().any(|x| u.contains(x))),
                    "{preset} {lang} chart {id}: no axis label with a unit: {units:?}"
                );
                if id == "tput" {
                    assert_eq!(units.len(), 2, "{id}: both axes labelled: {units:?}");
                }
                for u in units {
                    let zh = u.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
                    assert_eq!(zh, lang == "zh", "{preset} {lang} chart {id}: {u:?}");
                }
            }
            shot(&page, &format!("tours-sim-{preset}-{lang}-{w}")).await;
        }
    }
    env.stop().await;
}

/// The server's refusals of a step (field, allowed range) read in Chinese on the zh
/// playground: each bad session below is refused by the real server with a message id, and
/// pg-msg.js writes every one of them from the zh table (an id without its Chinese fails
/// here) and, from the en table, exactly the server's English.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_translates_the_servers_refusals() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("refusals").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    open(&page, &format!("{base}/playground")).await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=quick-start]') && document.body.dataset.run === 'done'",
        "playground",
    )
    .await;
    let head =
        r#"hosts = [\"a\", \"b\"]\n[[step]]\ncall = \"alloc_pd\"\nhost = \"a\"\nas = \"pd_a\"\n"#;
    let bad = [
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_a\"\ncqe = -1\n"#,
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_a\"\ncqe = 99999999\n"#,
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_a\"\n"#,
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"cq_a\"\ncqe = \"x\"\n"#,
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"c\"\nas = \"cq_a\"\ncqe = 4\n"#,
        r#"[[step]]\ncall = \"create_cq\"\nhost = \"a\"\nas = \"pd_a\"\ncqe = 4\n"#,
        r#"[[step]]\ncall = \"reg_mr\"\nhost = \"a\"\npd = \"pd_x\"\nas = \"mr\"\nlen = 64\naccess = [\"LOCAL_WRITE\"]\n"#,
        r#"[[step]]\ncall = \"reg_mr\"\nhost = \"a\"\npd = \"pd_a\"\nas = \"mr\"\nlen = 64\naccess = [\"NOPE\"]\n"#,
        r#"[[step]]\ncall = \"poll_cq\"\nhost = \"a\"\ncq = \"pd_a\"\n"#,
        r#"[[step]]\ncall = \"wait\"\nfor = \"0us\"\n"#,
    ];
    let mut shown = Vec::new();
    for b in bad {
        let (err, zh, html, en): (String, Option<String>, String, Option<String>) = eval(
            &page,
            &format!(
                "(async () => {{ const r = await fetch('/api/verbs', {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: JSON.stringify({{session: \"{head}{b}\"}})}}); const j = await r.json(); const why = String(j.error || '').replace(/^\\d+:\\d+:\\s*/, ''); const m = await import('/assets/pg-msg.js'); return [why, m.msgText(j.msg, 'zh'), m.msgHtml(j.msg, why), m.msgText(j.msg, 'en')]; }})()"
            ),
        )
        .await;
        if err.is_empty() {
            shown.push(format!("(accepted) {b}"));
            continue;
        }
        let zh = zh.unwrap_or_else(|| panic!("no Chinese for the refusal {err:?}"));
        assert_eq!(
            en.as_deref(),
            Some(err.as_str()),
            "the en table's words for {err:?}"
        );
        assert!(
            zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{err:?} → {zh:?}"
        );
        assert!(!html.contains("data-untranslated"), "{err:?}");
        // Outside `quoted` identifiers and the lists of allowed names, no English word is left.
        let bare: String = zh.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let bare = bare.split('：').next().unwrap_or("").to_string();
        let english: Vec<&str> = bare
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2)
            .filter(|w| !w.contains('_') && !["TOML", "PD", "CQ", "MR", "QP", "WR"].contains(w))
            .collect();
        assert!(english.is_empty(), "{err:?} → {zh:?}: English {english:?}");
        shown.push(format!("{err}  →  {zh}"));
    }
    println!("{}", shown.join("\n"));
    let refused = shown
        .iter()
        .filter(|s| !s.starts_with("(accepted)"))
        .count();
    assert!(
        refused >= 8,
        "only {refused} of the bad sessions were refused: {shown:#?}"
    );
    env.stop().await;
}

// --- phone: the simulation page's path drawing stacks on a phone (issue 19 item 11) ---

/// A box of the path drawing as drawn: its path, and its rect's x, y, width and height (SVG units).
type PhoneBoxRect = (String, f64, f64, f64, f64);

/// Every label of the path drawing at the time shown, measured as rendered: `n` labels, the
/// smallest font in CSS px (`min`), and the labels under 12 px (`small`), wider or taller than
/// their box (`wide`), outside the drawing (`outside`), or on the same line as another label
/// of their box and overlapping it (`clash`).
const PHONE_LABELS_JS: &str = "(() => {
  const svg = document.querySelector('svg.paths');
  const sr = svg.getBoundingClientRect();
  const scale = sr.width / svg.viewBox.baseVal.width;
  const out = { n: 0, min: 1e9, small: [], wide: [], outside: [], clash: [] };
  const labels = (root) => [...root.querySelectorAll('text')].flatMap((t) => {
    const sp = [...t.querySelectorAll('tspan')];
    return (sp.length ? sp : [t]).filter((e) => e.textContent.trim() && getComputedStyle(e).display !== 'none');
  });
  const font = (e) => parseFloat(getComputedStyle(e).fontSize) * scale;
  for (const e of labels(svg)) {
    out.n += 1;
    const f = font(e);
    out.min = Math.min(out.min, f);
    if (f < 12) out.small.push(`${e.textContent} ${f.toFixed(1)} px`);
    const r = e.getBoundingClientRect();
    if (r.left < sr.left - 0.5 || r.right > sr.right + 0.5) out.outside.push(e.textContent);
  }
  for (const g of svg.querySelectorAll('g.box')) {
    const b = g.querySelector('rect').getBoundingClientRect();
    const where = `${g.dataset.path}-${g.dataset.side}-${g.dataset.lane}`;
    const ls = labels(g).map((e) => ({ e, r: e.getBoundingClientRect(), f: font(e) }));
    for (const { e, r } of ls) {
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5) {
        out.wide.push(`${where}: ${e.textContent} (${r.width.toFixed(0)} px in ${b.width.toFixed(0)} px)`);
      }
    }
    for (let i = 0; i < ls.length; i += 1) for (let j = i + 1; j < ls.length; j += 1) {
      const a = ls[i], c = ls[j];
      const x = Math.min(a.r.right, c.r.right) - Math.max(a.r.left, c.r.left);
      const dy = Math.abs((a.r.top + a.r.bottom) / 2 - (c.r.top + c.r.bottom) / 2);
      if (x > 1 && dy < 0.8 * Math.max(a.f, c.f)) out.clash.push(`${where}: ${a.e.textContent} / ${c.e.textContent}`);
    }
  }
  out.small = [...new Set(out.small)]; out.wide = [...new Set(out.wide)];
  out.outside = [...new Set(out.outside)]; out.clash = [...new Set(out.clash)];
  return out;
})()";

/// `PHONE_LABELS_JS` at every 2% of the first message's played time (the slider), merged;
/// once when the run has no first message (a stream: the player is hidden).
const PHONE_LABELS_SCRUB_JS: &str = "(() => {
  const one = () => PHONE_LABELS;
  const s = document.querySelector('#time');
  const all = { n: 0, min: 1e9, small: [], wide: [], outside: [], clash: [], samples: 0 };
  const add = (o) => { all.n = Math.max(all.n, o.n); all.min = Math.min(all.min, o.min); all.samples += 1;
    for (const k of ['small', 'wide', 'outside', 'clash']) all[k] = [...new Set([...all[k], ...o[k]])]; };
  if (document.querySelector('#player').style.display === 'none' || s.disabled) add(one());
  else for (let k = 0; k <= 1000; k += 20) { s.value = String(k); s.dispatchEvent(new Event('input')); add(one()); }
  return all;
})()";

/// Asserts the labels of the drawing as `PHONE_LABELS_SCRUB_JS` measures them; returns the
/// smallest rendered font.
async fn phone_labels_ok(page: &Page, what: &str) -> f64 {
    let js = PHONE_LABELS_SCRUB_JS.replace("PHONE_LABELS", PHONE_LABELS_JS);
    let o: Value = eval(page, &js).await;
    let list = |k: &str| o[k].as_array().cloned().unwrap_or_default();
    assert!(o["n"].as_f64().unwrap() >= 14.0, "{what}: labels {o}");
    assert!(
        list("small").is_empty(),
        "{what}: labels under 12 px: {:?}",
        list("small")
    );
    assert!(
        list("wide").is_empty(),
        "{what}: labels wider than their box: {:?}",
        list("wide")
    );
    assert!(
        list("outside").is_empty(),
        "{what}: labels outside the drawing: {:?}",
        list("outside")
    );
    assert!(
        list("clash").is_empty(),
        "{what}: labels on top of each other: {:?}",
        list("clash")
    );
    println!(
        "{what}: {} labels, {} samples, smallest font {:.1} px",
        o["n"],
        o["samples"],
        o["min"].as_f64().unwrap()
    );
    o["min"].as_f64().unwrap()
}

/// Steps through the whole first message with "next step"; at each step, per path: the box
/// ringed is the box of the narrated step, rendered, inside the drawing and (the drawing
/// scrolled to the top of the screen) inside the viewport and not covered by anything; the
/// timeline outlines that step's bar; every visited box shows its "✓n". Returns the steps.
async fn phone_ring_ok(page: &Page, what: &str) -> usize {
    eval::<bool>(
        page,
        "(() => { const s = document.querySelector('#time'); s.value = '0'; s.dispatchEvent(new Event('input')); \
           document.querySelector('.drawing').scrollIntoView({ block: 'start' }); return true; })()",
    )
    .await;
    let n: usize = eval(page, "document.querySelectorAll('ol.narr li').length").await;
    assert!(n > 4, "{what}: {n} narrated steps");
    let mut rings = 0;
    for step in 0..=n {
        let bad: Vec<String> = eval(
            page,
            "(() => { const bad = []; const svg = document.querySelector('svg.paths'); const sr = svg.getBoundingClientRect();
               for (const p of ['tcp', 'rdma']) {
                 const li = document.querySelector(`ol.narr[data-path=${p}] li.current`);
                 const ring = [...svg.querySelectorAll(`g.box.current[data-path=${p}]`)];
                 if (!li) { if (ring.length) bad.push(`${p}: a ring with no current step`); continue; }
                 const [side, lane] = li.dataset.key.split('|');
                 const key = lane === 'switch' ? 'fabric-switch' : `${side}-${lane}`;
                 if (ring.length !== 1) { bad.push(`${p}: ${ring.length} rings at ${li.innerText}`); continue; }
                 const g = ring[0];
                 if (`${g.dataset.side}-${g.dataset.lane}` !== key) bad.push(`${p}: ring on ${g.dataset.side}-${g.dataset.lane}, step in ${key}`);
                 const r = g.querySelector('rect').getBoundingClientRect();
                 if (!(r.width > 20 && r.height > 20)) bad.push(`${p}: ring box ${r.width}×${r.height}`);
                 if (r.left < sr.left - 1 || r.right > sr.right + 1 || r.top < sr.top - 1 || r.bottom > sr.bottom + 1) bad.push(`${p}: ring outside the drawing`);
                 if (r.left < 0 || r.right > innerWidth || r.top < 0 || r.bottom > innerHeight) bad.push(`${p}: ring box ${key} off screen (${r.left.toFixed(0)},${r.top.toFixed(0)})–(${r.right.toFixed(0)},${r.bottom.toFixed(0)})`);
                 else { const hit = document.elementFromPoint(r.left + 5, r.top + r.height / 2); if (!hit || hit.closest('g.box') !== g) bad.push(`${p}: ring box ${key} covered by ${hit && hit.outerHTML.slice(0, 60)}`); }
                 const st = getComputedStyle(g.querySelector('rect'));
                 if (st.visibility === 'hidden' || st.display === 'none' || +st.opacity === 0) bad.push(`${p}: ring box hidden`);
                 if (parseFloat(st.strokeWidth) < 3) bad.push(`${p}: ring stroke ${st.strokeWidth}`);
                 const bars = [...document.querySelectorAll(`svg.ladder[data-path=${p}] rect.bar.current`)];
                 if (!bars.length || bars.some((b) => b.dataset.key !== li.dataset.key)) bad.push(`${p}: the timeline does not outline ${li.dataset.key}`);
               }
               for (const g of svg.querySelectorAll('g.box.visited')) { const v = g.querySelector('text.visits').textContent; if (!/^✓[1-9][0-9]*$/.test(v)) bad.push(`visited ${g.dataset.path}-${g.dataset.side}-${g.dataset.lane} shows ${JSON.stringify(v)}`); }
               for (const g of svg.querySelectorAll('g.box:not(.visited)')) { if (g.querySelector('text.visits').textContent) bad.push('a ✓ on a box not visited'); }
               return bad; })()",
        )
        .await;
        assert!(bad.is_empty(), "{what}, step {step}: {bad:#?}");
        rings += eval::<usize>(
            page,
            "document.querySelectorAll('svg.paths g.box.current').length",
        )
        .await;
        let more: bool = eval(
            page,
            "(() => { const b = document.querySelector('#step-next'); const before = document.querySelector('#stepof').textContent; b.click(); return document.querySelector('#stepof').textContent !== before; })()",
        )
        .await;
        if !more {
            break;
        }
    }
    assert!(rings >= n, "{what}: {rings} rings over {n} steps");
    n
}

/// Issue 19 item 11: at 390×844 the path drawing is stacked — two columns, local host above the
/// switch above the remote host — with every label at 12 px or more and inside its box, no
/// sideways scroll, the narrated step's ring on a box on screen, the ✓n marks and the
/// timeline's outline; turning the phone re-lays it out; at 1440 the side-by-side drawing is
/// the one it always was. Screenshots in both languages at both sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_path_drawing_stacks_on_a_phone() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("phonestack").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    let phone = || SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true);
    for lang in ["zh", "en"] {
        for preset in ["lesson1", "lesson3", "lesson5"] {
            let what = format!("390 px {preset} {lang}");
            page.execute(phone()).await.unwrap();
            open_sim(&page, &format!("{base}/sim?preset={preset}&lang={lang}")).await;
            let (layout, svg_w, box_w, vb_h, view_h): (String, f64, f64, f64, f64) = eval(
                &page,
                "(() => { const s = document.querySelector('svg.paths'); return [s.dataset.layout, s.getBoundingClientRect().width, document.querySelector('#paths').clientWidth, s.viewBox.baseVal.height * s.getBoundingClientRect().width / s.viewBox.baseVal.width, innerHeight]; })()",
            )
            .await;
            assert!(layout.starts_with("stacked-"), "{what}: layout {layout}");
            assert!(
                (svg_w - box_w).abs() <= 1.0,
                "{what}: drawing {svg_w} px in a {box_w} px box"
            );
            // One scroll shows the whole drawing.
            assert!(
                vb_h < view_h,
                "{what}: the drawing is {vb_h} px tall, the screen {view_h}"
            );
            // Local host above the switch above the remote host, TCP left of RDMA.
            let order: Vec<(String, f64, f64)> = eval(
                &page,
                "[...document.querySelectorAll('svg.paths g.box')].map(g => { const r = g.querySelector('rect').getBoundingClientRect(); return [g.dataset.path + '-' + g.dataset.side + '-' + g.dataset.lane, r.left, r.top]; })",
            )
            .await;
            assert_eq!(order.len(), 14, "{what}: boxes");
            for col in order.chunks(7) {
                assert!(
                    col.windows(2)
                        .all(|w| w[1].2 > w[0].2 && (w[1].1 - w[0].1).abs() < 1.0),
                    "{what}: a column top to bottom: {col:?}"
                );
            }
            assert!(order[7].1 > order[0].1, "{what}: RDMA right of TCP");
            let sideways: f64 = eval(
                &page,
                "document.documentElement.scrollWidth - window.innerWidth",
            )
            .await;
            assert!(
                sideways <= 0.0,
                "{what}: the page scrolls {sideways} px sideways"
            );
            let min = phone_labels_ok(&page, &what).await;
            assert!(min >= 12.0, "{what}: {min}");
            if preset == "lesson5" {
                // A stream narrates no first message: no step, no ring; the drawing still
                // shows both RDMA kernels bypassed, the line going around them.
                let (steps, rings, around, bypassed): (usize, usize, usize, usize) = eval(
                    &page,
                    "[document.querySelectorAll('ol.narr li').length, document.querySelectorAll('svg.paths g.box.current').length, document.querySelectorAll('svg.paths g.row[data-path=rdma] path.wire.around').length, document.querySelectorAll('svg.paths g.box[data-path=rdma][data-skip=bypassed]').length]",
                )
                .await;
                assert_eq!((steps, rings), (0, 0), "{what}: narration of a stream");
                assert_eq!((around, bypassed), (2, 2), "{what}: the bypass");
                wait_for(&page, "document.body.dataset.packets === 'done'", "packets").await;
            } else {
                let n = phone_ring_ok(&page, &what).await;
                println!("{what}: the ring on screen at each of {n} steps");
            }
            if preset == "lesson3" {
                let why: String = eval(
                    &page,
                    "document.querySelector('.failure-mark .why').textContent",
                )
                .await;
                assert!(
                    why.contains("IBV_WC_LOC_PROT_ERR"),
                    "{what}: failure note {why:?}"
                );
            }
            // A screen's worth with the drawing at the top, and the whole page.
            eval::<bool>(&page, "(() => { document.querySelector('.drawing').scrollIntoView({ block: 'start' }); return true; })()").await;
            shot_view(&page, &format!("phone-{preset}-{lang}-390")).await;
            shot(&page, &format!("phone-{preset}-{lang}-390-full")).await;
        }
    }

    // Turned sideways (844 px), the box is wide enough for the side-by-side drawing; turned
    // back, the stacked one returns at the new width, the animation still marking its step.
    page.execute(phone()).await.unwrap();
    open_sim(&page, &format!("{base}/sim?preset=lesson1")).await;
    page.execute(SetDeviceMetricsOverrideParams::new(844, 390, 2.0, true))
        .await
        .unwrap();
    wait_for(
        &page,
        "document.querySelector('svg.paths').dataset.layout === 'wide'",
        "side by side when turned",
    )
    .await;
    page.execute(phone()).await.unwrap();
    wait_for(
        &page,
        "document.querySelector('svg.paths').dataset.layout.startsWith('stacked-')",
        "stacked when turned back",
    )
    .await;
    phone_labels_ok(&page, "390 px lesson1 zh, turned and back").await;
    phone_ring_ok(&page, "390 px lesson1 zh, turned and back").await;

    // 1440: the side-by-side drawing, boxes where they always were.
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    for lang in ["zh", "en"] {
        for preset in ["lesson1", "lesson5"] {
            let what = format!("1440 px {preset} {lang}");
            open_sim(&page, &format!("{base}/sim?preset={preset}&lang={lang}")).await;
            let (layout, vb, rects): (String, String, Vec<PhoneBoxRect>) = eval(
                &page,
                "(() => { const s = document.querySelector('svg.paths'); return [s.dataset.layout, s.getAttribute('viewBox'), [...s.querySelectorAll('g.box')].map(g => { const r = g.querySelector('rect'); return [g.dataset.path, +r.getAttribute('x'), +r.getAttribute('y'), +r.getAttribute('width'), +r.getAttribute('height')]; })]; })()",
            )
            .await;
            assert_eq!(
                (layout.as_str(), vb.as_str()),
                ("wide", "0 0 1000 300"),
                "{what}"
            );
            let xs = [6.0, 144.0, 282.0, 438.0, 594.0, 732.0, 870.0];
            for (i, (path, x, y, w, h)) in rects.iter().enumerate() {
                let row_y = if path == "tcp" { 38.0 } else { 188.0 };
                assert_eq!(
                    (*x, *y, *w, *h),
                    (xs[i % 7], row_y, 124.0, 78.0),
                    "{what}: box {i}"
                );
            }
            let sideways: f64 = eval(
                &page,
                "document.documentElement.scrollWidth - window.innerWidth",
            )
            .await;
            assert!(sideways <= 0.0, "{what}: sideways {sideways}");
            if preset == "lesson1" {
                eval::<bool>(&page, "(() => { document.querySelector('#step-next').click(); document.querySelector('#step-next').click(); return true; })()").await;
                let rings: usize = eval(
                    &page,
                    "document.querySelectorAll('svg.paths g.box.current').length",
                )
                .await;
                assert!(rings >= 1, "{what}: no ring");
            } else {
                wait_for(&page, "document.body.dataset.packets === 'done'", "packets").await;
            }
            page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
                .await
                .unwrap();
            eval::<bool>(&page, "(() => { window.scrollTo(0, 0); return true; })()").await;
            shot_view(&page, &format!("phone-{preset}-{lang}-1440")).await;
        }
    }
}

// ---- tours: steps that act, and the playground's chapter tours (issue 19 item 9) ----------

/// ASCII words a zh chapter tour may contain: identifiers a learner types or reads (verbs and
/// their arguments, opcodes and header names, states, statuses and errnos, attribute and flag
/// names, the session's own object names) and the proper names of protocols, products and
/// kernel modules. Everything else in a zh tour text must be Chinese.
const CHAPTER_TOUR_ZH_IDENTIFIERS: &[&str] = &[
    "ACCESS_FLAGS",
    "ACK",
    "AETH",
    "ALT_PATH",
    "ATOMIC_ACKNOWLEDGE",
    "AtomicETH",
    "BTH",
    "CM",
    "CPU",
    "CQ",
    "CQE",
    "DEST_QPN",
    "DMA",
    "DREP",
    "DREQ",
    "EAGAIN",
    "EINVAL",
    "ENOMEM",
    "ERR",
    "FIRST",
    "Fabrics",
    "GPU",
    "GPUDirect",
    "IBV_SEND_FENCE",
    "IBV_SEND_INLINE",
    "INIT",
    "ImmDt",
    "InfiniBand",
    "LAST",
    "LOCAL_WRITE",
    "Linux",
    "MAX_DEST_RD_ATOMIC",
    "MIDDLE",
    "MIN_RNR_TIMER",
    "MR",
    "MTU",
    "NAK",
    "NCCL",
    "NVMe",
    "PATH_MTU",
    "PD",
    "PSN",
    "QP",
    "QPN",
    "RC",
    "RDMA",
    "RDMA_WRITE_ONLY",
    "READ",
    "RECV",
    "RECV_RDMA_WITH_IMM",
    "REMOTE_ATOMIC",
    "REMOTE_READ",
    "REMOTE_WRITE",
    "REM_ACCESS_ERR",
    "REM_INV_REQ_ERR",
    "RESET",
    "RETH",
    "RETRY_EXC_ERR",
    "RNR",
    "RNR_RETRY_EXC_ERR",
    "RQ",
    "RTR",
    "RTS",
    "RoCE",
    "SEND",
    "SEND_FIRST",
    "SEND_LAST",
    "SEND_MIDDLE",
    "SEND_ONLY",
    "SGE",
    "SGL",
    "SIGNALED",
    "SQ",
    "SSD",
    "SUCCESS",
    "TCP",
    "UC",
    "WQE",
    "WR",
    "WRITE",
    "WRITE_WITH_IMM",
    "WR_FLUSH_ERR",
    "ack_cq_events",
    "back",
    "bad_wr",
    "byte_len",
    "compare",
    "create_qp",
    "get_cq_event",
    "go",
    "ibv_post_send",
    "ibv_reg_mr",
    "imm_data",
    "lkey",
    "min_rnr_timer",
    "modify_qp",
    "mr_b",
    "nvme",
    "nvmet",
    "over",
    "pd_a",
    "poll_cq",
    "post_send",
    "rcq_a",
    "rdma",
    "rdma_disconnect",
    "reg_mr",
    "req_notify_cq",
    "retry_cnt",
    "rkey",
    "rnr_retry",
    "scq_a",
    "swap",
    "timeout",
    "verbs",
];

/// The words of `text` with two or more ASCII letters that are not in `allowed`.
fn tour_english(text: &str, allowed: &[&str]) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2)
        .filter(|w| !allowed.contains(w))
        .map(str::to_string)
        .collect()
}

/// Clicks the tour card's button `go` (next, back, act, close).
async fn tour_click(page: &Page, go: &str) {
    eval::<bool>(
        page,
        &format!("(() => {{ document.querySelector('.tour-box [data-tour-go={go}]').click(); return true; }})()"),
    )
    .await;
}

/// Every chapter whose labs include the playground has a playground tour over its example
/// session; the chapter's playground link opens that session with the tour running, and the
/// playground's tour menu lists every chapter tour. Each step of each tour, on the zh page at
/// 1440×900 and at 390×844: its target exists, is outlined, has a size and is in the viewport;
/// the session step it is about is the selected one; the text is Chinese but for identifiers;
/// both languages are there. The tour ends after its last step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tours_every_playground_chapter_has_a_tour_that_walks_on_zh() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("chaptertours").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    open(&page, &format!("{base}/chapter/m1c5")).await;
    wait_for(
        &page,
        "document.querySelector('a.lab-chip[data-lab=playground]')",
        "m1c5's playground chip",
    )
    .await;
    let chapters: Vec<String> = eval(
        &page,
        "fetch('/api/course/zh').then(r => r.json()).then(c => c.modules.flatMap(m => m.chapters).filter(x => (x.labs || []).includes('playground')).map(x => x.id))",
    )
    .await;
    let tours: Vec<(String, String, usize, usize)> = eval(
        &page,
        "import('/assets/tour-chapters.js').then(m => Object.entries(m.CHAPTER_TOURS).map(([id, c]) => [id, c.example, c.steps.length, c.steps.filter(s => !s.zh || !s.en).length]))",
    )
    .await;
    assert!(chapters.len() >= 5, "{chapters:?}");
    for c in &chapters {
        assert!(
            tours.iter().any(|(id, ..)| id == c),
            "chapter {c} sends learners to the playground but has no tour"
        );
    }
    for (id, example, n, one_lang) in &tours {
        assert!(*n >= 4, "{id}: {n} steps");
        assert_eq!(*one_lang, 0, "{id}: steps without both languages");
        assert!(!example.is_empty(), "{id}: no example session");
    }

    // The chapter's link: its example session, the tour on its first step.
    let (href, label): (String, String) = eval(
        &page,
        "(() => { const a = document.querySelector('a.lab-chip[data-lab=playground]'); return [a.getAttribute('href'), a.innerText]; })()",
    )
    .await;
    assert_eq!(href, "/playground?tour=m1c5&example=qp_anatomy");
    assert!(label.contains("导览"), "{label}");
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; document.querySelector('a.lab-chip[data-lab=playground]').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.body.dataset.run === 'done' && document.querySelector('.tour-box[data-tour=\"pg-m1c5\"]')",
        "the chapter link's tour",
    )
    .await;
    let (step, steps): (String, usize) = eval(
        &page,
        "[document.querySelector('.tour-box').dataset.step, document.querySelectorAll('#pg-steps > li').length]",
    )
    .await;
    assert_eq!(step, "1");
    assert!(steps >= 20, "qp_anatomy has {steps} steps on the page");
    // The menu on the playground: the basics tour, then every chapter tour, each a link that
    // opens the chapter's session with its tour.
    let menu: Vec<(String, String)> = eval(
        &page,
        "[...document.querySelectorAll('[data-testid=tour-menu] a')].map(a => [a.dataset.tourChapter, a.getAttribute('href')])",
    )
    .await;
    assert_eq!(menu.len(), tours.len() + 1, "{menu:?}");
    for (id, example, ..) in &tours {
        assert!(
            menu.iter()
                .any(|(c, h)| c == id && h == &format!("/playground?tour={id}&example={example}")),
            "the menu has no link for {id}: {menu:?}"
        );
    }
    eval::<bool>(
        &page,
        "(() => { const d = document.querySelector('[data-testid=tour-menu]'); d.open = true; return true; })()",
    )
    .await;
    shot_view(&page, "tours-pg-menu-zh-1440").await;
    eval::<bool>(
        &page,
        "(() => { document.body.dataset.run = 'clicked'; document.querySelector('[data-testid=tour-menu] a[data-tour-chapter=m1c8]').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.body.dataset.run === 'done' && document.querySelector('.tour-box[data-tour=\"pg-m1c8\"]')",
        "the menu's m1c8 tour",
    )
    .await;
    // Another page ends the tour.
    eval::<bool>(
        &page,
        "(() => { document.querySelector('nav a[href^=\"/labs\"]').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "location.pathname === '/labs' && !document.querySelector('.tour-box')",
        "the tour ending on another page",
    )
    .await;

    for (w, h) in [(1440, 900), (390, 844)] {
        page.execute(SetDeviceMetricsOverrideParams::new(w, h, 1.0, w < 600))
            .await
            .unwrap();
        for (id, example, n, _) in &tours {
            open(
                &page,
                &format!("{base}/playground?tour={id}&example={example}"),
            )
            .await;
            wait_for(
                &page,
                &format!("document.body.dataset.run === 'done' && document.querySelector('.tour-box[data-tour=\"pg-{id}\"]')"),
                &format!("{id}'s tour at {w}"),
            )
            .await;
            let passed: bool = eval(
                &page,
                "document.querySelector('.pg-sum') && document.querySelector('.pg-sum').dataset.passed === 'true'",
            )
            .await;
            assert!(passed, "{id}: the example {example} did not load and pass");
            for k in 1..=*n {
                let (step, on_target, sized, in_view, selected, text, above): (
                    String,
                    bool,
                    bool,
                    bool,
                    bool,
                    String,
                    bool,
                ) = eval(
                    &page,
                    &format!("import('/assets/tour.js').then(m => {{ const s = m.TOURS['pg-{id}'][{k} - 1]; const b = document.querySelector('.tour-box'); const el = document.querySelector(s.sel); const r = el ? el.getBoundingClientRect() : null; \
                      const sel = s.select ? !!document.querySelector(`[data-testid=\"step-${{s.select}}\"].sel`) : true; \
                      return [b.dataset.step, !!el && el.classList.contains('tour-on'), !!r && r.width > 0 && r.height > 0, !!r && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth, sel, b.querySelector('.tour-text').innerText, !!r && r.top + 24 < b.getBoundingClientRect().top]; }})"),
                )
                .await;
                let at = format!("{id} step {k} at {w}×{h}");
                assert_eq!(step, k.to_string(), "{at}");
                assert!(on_target, "{at}: its target is missing or not outlined");
                assert!(sized, "{at}: its target has no size (hidden)");
                assert!(in_view, "{at}: its target is outside the viewport");
                assert!(above, "{at}: the tour's card hides the top of its target");
                assert!(
                    selected,
                    "{at}: the session step it is about is not selected"
                );
                let english = tour_english(&text, CHAPTER_TOUR_ZH_IDENTIFIERS);
                assert!(english.is_empty(), "{at} has English {english:?}: {text}");
                if id == "m1c8" || (id == "m1c5" && k <= 2) {
                    shot_view(&page, &format!("tours-pg-{id}-{k}-zh-{w}")).await;
                }
                tour_click(&page, "next").await;
            }
            let still: bool = eval(&page, "!!document.querySelector('.tour-box')").await;
            assert!(!still, "{id} did not end after {n} steps at {w}");
        }
        println!("{} chapter tours walked at {w}×{h}", tours.len());
        // The menu on a phone: the open list takes the bar's width.
        open(&page, &format!("{base}/playground")).await;
        wait_for(
            &page,
            "document.body.dataset.run === 'done' && document.querySelector('[data-testid=tour-menu]')",
            "the playground's tour menu",
        )
        .await;
        let fits: bool = eval(
            &page,
            "(() => { const d = document.querySelector('[data-testid=tour-menu]'); d.open = true; d.scrollIntoView({ block: 'start' }); const r = d.querySelector('.tour-menu-list').getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.height > 100; })()",
        )
        .await;
        assert!(fits, "the open tour menu does not fit the screen at {w}");
        shot_view(&page, &format!("tours-pg-menu-open-zh-{w}")).await;
    }

    // In English: the same steps, English words on the card, no Chinese.
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    open(
        &page,
        &format!("{base}/playground?tour=m1c8&example=mr_access&lang=en"),
    )
    .await;
    wait_for(
        &page,
        "document.body.dataset.run === 'done' && document.querySelector('.tour-box[data-tour=\"pg-m1c8\"]')",
        "m1c8's tour in English",
    )
    .await;
    let n = tours.iter().find(|t| t.0 == "m1c8").unwrap().2;
    for k in 1..=n {
        let (text, next): (String, String) = eval(
            &page,
            "[document.querySelector('.tour-box .tour-text').innerText, document.querySelector('.tour-box [data-tour-go=next]').innerText]",
        )
        .await;
        assert!(
            !text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "m1c8 step {k} in English: {text}"
        );
        assert!(next == "Next" || next == "Done", "{next}");
        if k == 4 {
            shot_view(&page, "tours-pg-m1c8-4-en-1440").await;
        }
        tour_click(&page, "next").await;
    }
    // The chapter page's chip says it starts a tour.
    open(&page, &format!("{base}/chapter/m1c8")).await;
    wait_for(
        &page,
        "document.querySelector('a.lab-chip[data-lab=playground]')",
        "m1c8's chip",
    )
    .await;
    let (href, label): (String, String) = eval(
        &page,
        "(() => { const a = document.querySelector('a.lab-chip[data-lab=playground]'); a.scrollIntoView({ block: 'center' }); return [a.getAttribute('href'), a.innerText]; })()",
    )
    .await;
    assert_eq!(href, "/playground?tour=m1c8&example=mr_access");
    assert!(label.contains("导览"), "{label}");
    shot_view(&page, "tours-chapter-m1c8-chip-zh-1440").await;
    env.stop().await;
}

/// "Do it" on every simulation-page step that changes a setting: the tour sets the control in
/// the parameter panel, the run happens (a new result is drawn, the URL carries the setting),
/// the tour moves on to the row the lesson names, outlined and in view, which shows before →
/// now, and the whole table equals the report of the changed plan. By hand works too (the
/// learner sets the control and presses Run; the tour follows), and a run the panel refuses
/// leaves the tour on its step with a note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tours_do_it_sets_the_control_runs_and_marks_the_changed_row() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("tourdoit").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    let presets = [
        "lesson2", "lesson3", "lesson4", "lesson5", "lesson5b", "lesson6",
    ];
    // Opens `preset`'s tour and walks to its acting step: (its index, key, value, next row).
    async fn to_act(page: &Page, base: &str, preset: &str) -> (usize, String, Value, String) {
        open_sim(page, &format!("{base}/sim?preset={preset}")).await;
        let (k, key, value, row): (usize, String, Value, String) = eval(
            page,
            &format!("import('/assets/tour.js').then(m => {{ const t = m.TOURS['sim-{preset}']; const k = t.findIndex(s => s.act); return [k, t[k].act.key, t[k].act.value, t[k + 1].sel.match(/data-row=\"(\\w+)\"/)[1]]; }})"),
        )
        .await;
        eval::<bool>(
            page,
            "(() => { document.querySelector('[data-testid=preset-what] [data-testid=tour-start]').click(); return true; })()",
        )
        .await;
        for _ in 0..k {
            tour_click(page, "next").await;
        }
        let (step, act): (String, String) = eval(
            page,
            "(() => { const b = document.querySelector('.tour-box'); const a = b.querySelector('[data-testid=tour-act]'); return [b.dataset.step, a ? a.innerText : '']; })()",
        )
        .await;
        assert_eq!(step, (k + 1).to_string(), "{preset}");
        assert_eq!(act, "做这一步", "{preset}: the acting step's button");
        (k, key, value, row)
    }
    let control_js = |key: &str| {
        format!(
            "(() => {{ const el = document.querySelector('#params [data-key=\"{key}\"]'); return el.type === 'checkbox' ? el.checked : (el.type === 'text' && /^\\d+$/.test(el.value) ? Number(el.value) : el.value); }})()"
        )
    };
    let set_of = |key: &str, value: &Value| match value {
        Value::String(s) => format!("{key}=\"{s}\""),
        other => format!("{key}={other}"),
    };
    for preset in presets {
        let (k, key, value, row) = to_act(&page, &base, preset).await;
        let was: Value = eval(&page, &control_js(&key)).await;
        assert!(!same(&was, &value), "{preset}: {key} is already {value}");
        let (done_at, cell): (String, String) = eval(
            &page,
            &format!("[document.body.dataset.doneAt, document.querySelector('#table tr[data-row=\"{row}\"]').innerText]"),
        )
        .await;
        tour_click(&page, "act").await;
        wait_for(
            &page,
            &format!("document.body.dataset.run === 'done' && document.body.dataset.doneAt !== '{done_at}' && document.querySelector('.tour-box').dataset.step === '{}'", k + 2),
            &format!("{preset}: Do it's run and the next step"),
        )
        .await;
        let now: Value = eval(&page, &control_js(&key)).await;
        assert!(same(&now, &value), "{preset}: {key} is {now}, not {value}");
        let sets: Vec<String> =
            eval(&page, "new URLSearchParams(location.search).getAll('set')").await;
        let set = set_of(&key, &value);
        assert_eq!(sets, vec![set.clone()], "{preset}: the URL's settings");
        let (outlined, in_view, changed, before, after, text): (
            bool,
            bool,
            usize,
            String,
            String,
            String,
        ) = eval(
            &page,
            &format!("(() => {{ const tr = document.querySelector('#table tr[data-row=\"{row}\"]'); const r = tr.getBoundingClientRect(); const c = tr.querySelector('td.changed'); \
              return [tr.classList.contains('tour-on'), r.top >= 0 && r.bottom <= innerHeight, tr.querySelectorAll('td.changed').length, c ? c.querySelector('.before').innerText : '', c ? c.querySelector('strong').innerText : '', document.querySelector('.tour-box .tour-text').innerText]; }})()"),
        )
        .await;
        assert!(outlined, "{preset}: row {row} is not outlined after Do it");
        assert!(in_view, "{preset}: row {row} is not in view after Do it");
        assert!(changed >= 1, "{preset}: row {row} shows no before → now");
        assert_ne!(before, after, "{preset}: row {row}");
        assert!(
            cell.contains(&before),
            "{preset}: the before value {before:?} is not what the row showed ({cell:?})"
        );
        assert!(text.contains("之前 → 现在"), "{preset}: {text}");
        table_equals_report(&page, &report(preset, &[&set]), preset).await;
        println!("{preset}: Do it set {set}; row {row}: {before} → {after}");
        if preset == "lesson5" {
            shot_view(&page, "tours-doit-lesson5-zh-1440").await;
        }
    }

    // A run the panel refuses: the tour stays on its step and says why.
    let (k, ..) = to_act(&page, &base, "lesson6").await;
    let done_at: String = eval(&page, "document.body.dataset.doneAt").await;
    eval::<bool>(
        &page,
        "(() => { const el = document.querySelector('#params [data-key=\"seed\"]'); el.value = 'abc'; el.dispatchEvent(new Event('input', { bubbles: true })); return true; })()",
    )
    .await;
    tour_click(&page, "act").await;
    wait_for(
        &page,
        "!document.querySelector('.tour-box .tour-note').hidden",
        "the refused run's note",
    )
    .await;
    let (step, again, done_now): (String, bool, String) = eval(
        &page,
        "[document.querySelector('.tour-box').dataset.step, !document.querySelector('.tour-box [data-tour-go=act]').disabled, document.body.dataset.doneAt]",
    )
    .await;
    assert_eq!(step, (k + 1).to_string(), "a refused run moved the tour on");
    assert!(again, "Do it stays usable after a refused run");
    assert_eq!(done_now, done_at, "a refused run drew a result");
    shot_view(&page, "tours-doit-refused-zh-1440").await;

    // By hand on a phone: the learner picks write and presses Run; the tour follows.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 1.0, true))
        .await
        .unwrap();
    let (k, key, value, row) = to_act(&page, &base, "lesson2").await;
    shot_view(&page, "tours-doit-lesson2-zh-390-before").await;
    let done_at: String = eval(&page, "document.body.dataset.doneAt").await;
    eval::<bool>(
        &page,
        &format!("(() => {{ const el = document.querySelector('#params [data-key=\"{key}\"]'); el.value = {value}; el.dispatchEvent(new Event('change', {{ bubbles: true }})); document.querySelector('#run').click(); return true; }})()"),
    )
    .await;
    wait_for(
        &page,
        &format!("document.body.dataset.run === 'done' && document.body.dataset.doneAt !== '{done_at}' && document.querySelector('.tour-box').dataset.step === '{}'", k + 2),
        "the tour following a run by hand",
    )
    .await;
    let (outlined, changed): (bool, usize) = eval(
        &page,
        &format!("(() => {{ const tr = document.querySelector('#table tr[data-row=\"{row}\"]'); return [tr.classList.contains('tour-on'), tr.querySelectorAll('td.changed').length]; }})()"),
    )
    .await;
    assert!(outlined && changed >= 1, "lesson2 by hand: row {row}");
    shot_view(&page, "tours-doit-lesson2-zh-390-after").await;
    env.stop().await;
}

// ---- simfab: the fabric view on the simulation page ----

/// Runs of three or more English words outside identifiers in the simulation page's fabric
/// section (its text and its titles): node names, opcodes, TCP/RDMA/PAUSE/XOFF/ECN.
async fn sim_fabric_english(page: &Page) -> Vec<String> {
    english_runs(
        page,
        "(() => { const root = document.querySelector('.sim-fabric'); \
          return [root.innerText, ...[...root.querySelectorAll('[title],[aria-label]')].map(e => (e.getAttribute('title') || '') + '\\n' + (e.getAttribute('aria-label') || ''))].join('\\n'); })()",
    )
    .await
}

/// A number as the page shows it (zh-CN and en-US both group thousands with commas).
fn shown_int(s: &str) -> u64 {
    s.replace(',', "")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{s:?}"))
}

/// The simulation page with a switch shows the fabric view of its run: on ⑤b with lossless on
/// the RDMA tab's link cards at the last window carry PAUSE frames, which add up to the
/// table's PFC pauses (and the section says so); a PAUSE frame opens in the inspector with
/// its bytes; the TCP tab is TCP's run; ⑤ shows its drops as the table does; no English on
/// the zh page; screenshots at 1440×900 and 390×844 in both languages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_page_draws_the_fabric_of_its_run() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("simfab").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    let fabric_done =
        "document.body.dataset.fabric === 'done' && document.querySelector('.sim-fabric .fv-svg')";
    // The table's drops / PFC pauses / ECN marks for a path.
    let table = |path: &'static str| {
        format!(
            "JSON.parse(document.querySelector('tr[data-row=drops] td[data-path={path}]').dataset.value)"
        )
    };
    open_sim(
        &page,
        &format!("{base}/sim?preset=lesson5b&set=lossless.enabled%3Dtrue"),
    )
    .await;
    assert_eq!(settled(&page, "⑤b lossless").await, "done");
    wait_for(&page, fabric_done, "the fabric view of ⑤b").await;
    let [drops, pauses, ecn]: [u64; 3] = eval(&page, &table("rdma")).await;
    assert!(pauses > 0, "⑤b lossless: the table's PFC pauses {pauses}");
    // The RDMA run's tab is shown; its sums are the table's, and the page says so.
    let tab: String = eval(
        &page,
        "document.querySelector('.sf-tab[aria-selected=true]').dataset.path",
    )
    .await;
    assert_eq!(tab, "rdma");
    let sums: [u64; 3] = eval(
        &page,
        "(() => { const t = document.querySelector('.sf-totals'); return [Number(t.dataset.drops), Number(t.dataset.pauses), Number(t.dataset.ecn)]; })()",
    )
    .await;
    assert_eq!(
        sums,
        [drops, pauses, ecn],
        "the section's sums vs the table"
    );
    let line = texts(&page, ".sf-totals").await.join("");
    assert!(
        line.contains(&format!("PAUSE 帧 {}", group(pauses))) && line.contains("与对比表"),
        "{line}"
    );
    // Scrub to the last window; every link's card shows its PAUSE frames, and together they
    // are the table's value.
    eval::<bool>(
        &page,
        "(() => { const r = document.querySelector('.sim-fabric .fv-scrub'); r.value = r.max; r.dispatchEvent(new Event('input', {bubbles: true})); return true; })()",
    )
    .await;
    let links: usize = eval(
        &page,
        "document.querySelectorAll('.sim-fabric .fv-link').length",
    )
    .await;
    let hosts: usize = eval(
        &page,
        "document.querySelectorAll('.sim-fabric .fv-node.host').length",
    )
    .await;
    assert_eq!((links, hosts), (4, 4), "⑤b: four hosts on one switch");
    let mut on_cards = 0;
    let mut busiest = (0, 0);
    for i in 0..links {
        eval::<bool>(
            &page,
            &format!("(() => {{ document.querySelector('.sim-fabric .fv-link[data-link=\"{i}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true; }})()"),
        )
        .await;
        let cells = texts(&page, ".sim-fabric .fv-card tbody td.fv-pauses").await;
        assert_eq!(cells.len(), 2, "link {i}: two directions");
        let n: u64 = cells.iter().map(|c| shown_int(c)).sum();
        if n > busiest.1 {
            busiest = (i, n);
        }
        on_cards += n;
    }
    assert_eq!(
        on_cards, pauses,
        "PAUSE frames on the link cards vs the table's PFC pauses"
    );
    assert!(busiest.1 > 0);
    // The busiest link's frames: a PAUSE among them opens the inspector with its bytes.
    eval::<bool>(
        &page,
        &format!(
            "(() => {{ window.__inspected = []; document.addEventListener('rdmalab:inspect', (e) => window.__inspected.push(e.detail)); \
             document.querySelector('.sim-fabric .fv-link[data-link=\"{}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true; }})()",
            busiest.0
        ),
    )
    .await;
    let kinds = texts(&page, ".sim-fabric [data-testid=fv-frames] button.fv-frame").await;
    let k = kinds
        .iter()
        .position(|k| k == "PAUSE")
        .unwrap_or_else(|| panic!("a PAUSE frame listed: {kinds:?}"));
    let got: (String, usize) = eval(
        &page,
        &format!("(() => {{ document.querySelectorAll('.sim-fabric [data-testid=fv-frames] button.fv-frame')[{k}].click(); const d = window.__inspected[window.__inspected.length - 1]; return [d.frame.kind, d.frame.wire.length]; }})()"),
    )
    .await;
    assert_eq!(got.0, "pause");
    assert!(got.1 > 0, "the PAUSE frame carries its bytes");
    wait_for(
        &page,
        "document.querySelector('[data-testid=inspector]:not([hidden]) [data-kind=macctl]')",
        "the inspector's PFC header",
    )
    .await;
    shot_view(&page, "sim-fabric-5b-inspector-zh").await;
    eval::<bool>(
        &page,
        "(() => { const c = document.querySelector('[data-testid=inspector] [data-insp-close]'); if (c) c.click(); return true; })()",
    )
    .await;
    let english = sim_fabric_english(&page).await;
    assert!(
        english.is_empty(),
        "the zh fabric section has English: {english:#?}"
    );
    // The TCP tab: TCP's run, its sums the table's TCP column.
    eval::<bool>(
        &page,
        "(() => { document.querySelector('.sf-tab[data-path=tcp]').click(); return true; })()",
    )
    .await;
    wait_for(
        &page,
        "document.querySelector('.sf-totals[data-path=tcp]') && document.querySelector('.sim-fabric .fv-svg')",
        "the TCP tab",
    )
    .await;
    let [tdrops, tpauses, tecn]: [u64; 3] = eval(&page, &table("tcp")).await;
    let tsums: [u64; 3] = eval(
        &page,
        "(() => { const t = document.querySelector('.sf-totals'); return [Number(t.dataset.drops), Number(t.dataset.pauses), Number(t.dataset.ecn)]; })()",
    )
    .await;
    assert_eq!(
        tsums,
        [tdrops, tpauses, tecn],
        "TCP: the section's sums vs the table"
    );
    let english = sim_fabric_english(&page).await;
    assert!(
        english.is_empty(),
        "the zh TCP tab has English: {english:#?}"
    );
    // ⑤: drops, as the table counts them, on the links.
    open_sim(&page, &format!("{base}/sim?preset=lesson5")).await;
    assert_eq!(settled(&page, "⑤").await, "done");
    wait_for(&page, fabric_done, "the fabric view of ⑤").await;
    let [drops5, ..]: [u64; 3] = eval(&page, &table("rdma")).await;
    assert!(drops5 > 0);
    let shown5: u64 = eval(
        &page,
        "Number(document.querySelector('.sf-totals[data-path=rdma]').dataset.drops)",
    )
    .await;
    assert_eq!(shown5, drops5, "⑤: drops on the links vs the table");
    eval::<bool>(
        &page,
        "(() => { const r = document.querySelector('.sim-fabric .fv-scrub'); r.value = r.max; r.dispatchEvent(new Event('input', {bubbles: true})); return true; })()",
    )
    .await;
    let mut on_cards = 0;
    for i in 0..2 {
        eval::<bool>(
            &page,
            &format!("(() => {{ document.querySelector('.sim-fabric .fv-link[data-link=\"{i}\"]').dispatchEvent(new MouseEvent('click', {{bubbles: true}})); return true; }})()"),
        )
        .await;
        let d = texts(&page, ".sim-fabric .fv-card .fv-drops")
            .await
            .join("");
        on_cards += shown_int(d.rsplit('：').next().unwrap());
    }
    assert_eq!(on_cards, drops5, "⑤: drops on the link cards vs the table");
    // Both languages at both widths, the fabric section in view.
    for (w, h, m, tag) in [(1440, 900, false, "wide"), (390, 844, true, "phone")] {
        for lang in ["zh", "en"] {
            page.execute(SetDeviceMetricsOverrideParams::new(
                w,
                h,
                if m { 2.0 } else { 1.0 },
                m,
            ))
            .await
            .unwrap();
            let q = if lang == "en" { "&lang=en" } else { "" };
            open_sim(
                &page,
                &format!("{base}/sim?preset=lesson5b&set=lossless.enabled%3Dtrue{q}"),
            )
            .await;
            wait_for(&page, fabric_done, "the fabric view").await;
            let wide: bool = eval(
                &page,
                "document.documentElement.scrollWidth > window.innerWidth + 1",
            )
            .await;
            assert!(!wide, "⑤b ({lang}) scrolls sideways at {w} px");
            eval::<bool>(
                &page,
                "(() => { document.querySelector('.sim-fabric .sf-tabs').scrollIntoView(); return true; })()",
            )
            .await;
            tokio::time::sleep(Duration::from_millis(150)).await;
            shot_view(&page, &format!("sim-fabric-5b-{lang}-{tag}")).await;
            if lang == "zh" {
                let english = sim_fabric_english(&page).await;
                assert!(english.is_empty(), "zh at {w} px: {english:#?}");
            }
        }
    }
    env.stop().await;
}

/// `n` with its thousands grouped by commas, as the page shows it.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A ratio as the page's `fmtNum` writes it: an integer plain, else at most two decimals.
fn ratio_text(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        let s = format!("{x:.2}");
        s.trim_end_matches('0').to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nvmf_lab_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("nvmf").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    let run = |q: Value| {
        let p = rdmalab::labs::parse_params("nvmf", &q).unwrap();
        rdmalab::labs::run("nvmf", &p).unwrap()
    };
    let want = run(Value::Null);
    let fig = |id: &str| want.figure_value(id).unwrap();
    let v = want.verdict.nvmf().expect("an nvmf verdict");
    for (lang, q) in [("zh", ""), ("en", "?lang=en")] {
        page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
            .await
            .unwrap();
        open(&page, &format!("{base}/lab/nvmf{q}")).await;
        assert_eq!(settled(&page, "nvmf").await, "done", "{lang}");
        // The verdict in words says the run's numbers: both IOPS, the two ratios, the limits.
        let said = texts(&page, "[data-testid=lab-verdict] .lab-verdict-text").await;
        let said = said.join(" ");
        let iops = |id| group(fig(id) as u64);
        for n in [
            iops("iops_rdma"),
            iops("iops_tcp"),
            ratio_text(v.iops_ratio),
            ratio_text(v.cpu_ratio),
            format!("{}%", v.busy_tcp_pct),
        ] {
            assert!(said.contains(&n), "{lang}: {n} not in {said:?}");
        }
        let (winner, depth, bursts) = match lang {
            "zh" => (
                "NVMe/RDMA 完成",
                "只受队列深度限制",
                "在阵发中等待目标端的 CPU",
            ),
            _ => (
                "NVMe/RDMA completes",
                "held back only by the queue depth",
                "waits for the target's CPU in bursts",
            ),
        };
        assert_eq!(v.winner, NvmfWinner::Rdma);
        assert_eq!(v.limit_rdma_kind, NvmfLimitKind::Depth);
        assert_eq!(
            (v.limit_tcp, v.limit_tcp_kind),
            (NvmfLimit::TargetCpu, NvmfLimitKind::Bursts)
        );
        for w in [winner, depth, bursts] {
            assert!(said.contains(w), "{lang}: {w:?} not in {said:?}");
        }
        // The charts' titles, axes and legends in this language.
        let labels: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('.lab-chart-draw svg')].map(s => [...s.querySelectorAll('.lc-title, .lc-unit, .lc-legend text, .lc-tick.x')].map(t => t.textContent).join(' | '))",
        )
        .await;
        assert_eq!(labels.len(), 3, "{labels:?}");
        let expect: [&[&str]; 3] = match lang {
            "zh" => [
                &[
                    "完成延迟与 IOPS",
                    "IOPS（每条曲线上队列深度",
                    "NVMe/RDMA p50",
                    "NVMe/TCP p99",
                ],
                &[
                    "每个 IO 的 CPU 时间",
                    "发起端 usr",
                    "目标端 sys",
                    "NVMe/TCP",
                ],
                &[
                    "队列峰值",
                    "队列深度",
                    "NVMe/RDMA：交换机 → 目标端",
                    "NVMe/TCP：目标端 → 交换机",
                ],
            ],
            _ => [
                &[
                    "Latency against IOPS",
                    "IOPS (queue depth 1, 2, 4",
                    "NVMe/RDMA p99",
                ],
                &["CPU time per IO", "host usr", "target sys"],
                &["Peak queues", "queue depth", "NVMe/RDMA: switch → target"],
            ],
        };
        for (got, want) in labels.iter().zip(expect) {
            for w in want {
                assert!(got.contains(w), "{lang}: {w:?} not in {got:?}");
            }
        }
        // The chapters that teach it.
        let chapters: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=lab-chapters] a')].map(a => a.dataset.chapter)",
        )
        .await;
        assert!(
            chapters.contains(&"m4c29".to_string()) && chapters.contains(&"m1c2".to_string()),
            "{chapters:?}"
        );
        if lang == "zh" {
            // "NVMe over Fabrics" is the protocol's name (chapter 29's title says it).
            let english = english_words(
                &page,
                "(() => { const root = document.querySelector('section.lab').cloneNode(true); \
                 for (const e of root.querySelectorAll('code, select, script')) e.remove(); \
                 root.style.position = 'absolute'; root.style.left = '-9999px'; document.body.append(root); \
                 const text = root.innerText; root.remove(); \
                 return [text, ...[...document.querySelectorAll('section.lab [title], section.lab svg title')].map(e => e.getAttribute('title') || e.textContent)]; })()",
                &["over", "Fabrics", "Linux", "nvmet-rdma", "nvmet-tcp", "fio", "usr", "sys", "verbs", "top", "ms", "µs", "ns", "KB"],
                2,
            )
            .await;
            assert!(english.is_empty(), "nvmf (zh) has English: {english:#?}");
        }
        shot(&page, &format!("lab-nvmf-{lang}-wide")).await;
        page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
            .await
            .unwrap();
        open(&page, &format!("{base}/lab/nvmf{q}")).await;
        assert_eq!(settled(&page, "nvmf").await, "done", "{lang} phone");
        let wide: bool = eval(
            &page,
            "document.documentElement.scrollWidth > window.innerWidth + 1",
        )
        .await;
        assert!(!wide, "nvmf ({lang}) scrolls sideways at 390 px");
        shot(&page, &format!("lab-nvmf-{lang}-phone")).await;
    }
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    // The URL is the run: at queue depth 128 the device limits NVMe/RDMA, and the page says so.
    let deep = run(serde_json::json!({"iodepth": "128"}));
    open(&page, &format!("{base}/lab/nvmf?iodepth=128&lang=en")).await;
    assert_eq!(settled(&page, "nvmf 128").await, "done");
    let limit: String = eval(
        &page,
        "document.querySelector('[data-testid=lab-verdict]').dataset.limit_rdma",
    )
    .await;
    let deep_limit = deep.verdict.nvmf().expect("an nvmf verdict").limit_rdma;
    assert_eq!(Value::from(limit), serde_json::json!(deep_limit));
    let said = texts(&page, "[data-testid=lab-verdict] .lab-verdict-text")
        .await
        .join(" ");
    assert!(
        said.contains("NVMe/RDMA is limited by the device"),
        "{said:?}"
    );
    // Too many IOs in flight for the page: refused, naming the bound.
    open(
        &page,
        &format!("{base}/lab/nvmf?iodepth=128&initiators=8&lang=en"),
    )
    .await;
    assert_eq!(settled(&page, "nvmf too deep").await, "error");
    let err = texts(&page, ".lab-error").await.join(" ");
    assert!(err.contains("512"), "{err:?}");
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allreduce_lab_in_a_real_browser() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("allreduce").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    let run = |q: Value| {
        let p = rdmalab::labs::parse_params("allreduce", &q).unwrap();
        rdmalab::labs::run("allreduce", &p).unwrap()
    };
    let want = run(Value::Null);
    let v = want.verdict.allreduce().expect("an allreduce verdict");
    assert_eq!(v.limit, AllreduceLimit::FewFlows);
    for (lang, q) in [("zh", ""), ("en", "?lang=en")] {
        page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
            .await
            .unwrap();
        open(&page, &format!("{base}/lab/allreduce{q}")).await;
        assert_eq!(settled(&page, "allreduce").await, "done", "{lang}");
        // The verdict in words says the run's numbers: busbw's share, what the paths allow, the
        // flows per leaf, and what one more QP changed.
        let said = texts(&page, "[data-testid=lab-verdict] .lab-verdict-text")
            .await
            .join(" ");
        // As the page writes a number: no ".0" on a whole one.
        let pct = |x: f64| {
            if x.fract() == 0.0 {
                format!("{x:.0}%")
            } else {
                format!("{x}%")
            }
        };
        for n in [
            pct(v.busbw_pct),
            pct(v.paths_pct),
            format!("+{}", pct(v.gain_pct)),
        ] {
            assert!(said.contains(&n), "{lang}: {n} not in {said:?}");
        }
        let words = match lang {
            "zh" => ["瓶颈是每条流只走一条路径", "每个叶交换机只有 2 条流"],
            _ => [
                "the limit is one path per flow",
                "only 2 flows leave each leaf",
            ],
        };
        for w in words {
            assert!(said.contains(w), "{lang}: {w:?} not in {said:?}");
        }
        // The charts' titles, ticks and legends in this language.
        let labels: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('.lab-chart-draw svg')].map(s => [...s.querySelectorAll('.lc-title, .lc-unit, .lc-legend text, .lc-tick.x')].map(t => t.textContent).join(' | '))",
        )
        .await;
        assert_eq!(labels.len(), 3, "{labels:?}");
        let expect: [&[&str]; 3] = match lang {
            "zh" => [
                &[
                    "busbw：你选的 QP 数",
                    "1 个 QP",
                    "2 个 QP",
                    "理想值（线速）",
                ],
                &["叶→脊上联链路", "1 个 QP"],
                &["0、1、2", "0 条流", "1 条流", "2 个 QP"],
            ],
            _ => [
                &[
                    "busbw: the QPs you chose",
                    "1 QP",
                    "2 QPs",
                    "ideal (line rate)",
                ],
                &["Leaf→spine uplinks", "1 QP"],
                &["0, 1, 2", "0 flows", "1 flow", "2 QPs"],
            ],
        };
        for (got, want) in labels.iter().zip(expect) {
            for w in want {
                assert!(got.contains(w), "{lang}: {w:?} not in {got:?}");
            }
        }
        // The uplink table is open and names every uplink with its flows.
        let rows = texts(&page, "[data-testid=lab-table-uplinks] tbody th").await;
        let flows = if lang == "zh" {
            " · 1 条流"
        } else {
            " · 1 flow"
        };
        assert_eq!(rows.len(), 8, "{rows:?}");
        assert!(
            rows.iter()
                .all(|r| r.starts_with("leaf") && r.contains("→spine") && r.ends_with(flows)),
            "{lang}: {rows:?}"
        );
        // The chapters that teach it.
        let chapters: Vec<String> = eval(
            &page,
            "[...document.querySelectorAll('[data-testid=lab-chapters] a')].map(a => a.dataset.chapter)",
        )
        .await;
        for c in ["m4c30", "m3c24", "m4c28"] {
            assert!(chapters.contains(&c.to_string()), "{lang}: {chapters:?}");
        }
        if lang == "zh" {
            // nccl-tests' and NCCL's own words, as chapter 30 uses them.
            let english = english_words(
                &page,
                "(() => { const root = document.querySelector('section.lab').cloneNode(true); \
                 for (const e of root.querySelectorAll('code, select, script')) e.remove(); \
                 root.style.position = 'absolute'; root.style.left = '-9999px'; document.body.append(root); \
                 const text = root.innerText; root.remove(); \
                 return [text, ...[...document.querySelectorAll('section.lab [title], section.lab svg title')].map(e => e.getAttribute('title') || e.textContent)]; })()",
                &[
                    "busbw", "algbw", "nccl-tests", "all-reduce", "reduce-scatter", "all-gather",
                    "chunk", "channel", "net_ib", "ms", "µs",
                ],
                2,
            )
            .await;
            assert!(
                english.is_empty(),
                "allreduce (zh) has English: {english:#?}"
            );
        }
        shot(&page, &format!("lab-allreduce-{lang}-wide")).await;
        page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
            .await
            .unwrap();
        open(&page, &format!("{base}/lab/allreduce{q}")).await;
        assert_eq!(settled(&page, "allreduce").await, "done", "{lang} phone");
        let wide: bool = eval(
            &page,
            "document.documentElement.scrollWidth > window.innerWidth + 1",
        )
        .await;
        assert!(!wide, "allreduce ({lang}) scrolls sideways at 390 px");
        shot(&page, &format!("lab-allreduce-{lang}-phone")).await;
    }
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    // The URL is the run: the random-like hash collides, and the page says where.
    let mixed = run(serde_json::json!({"hash": "mixed"}));
    open(&page, &format!("{base}/lab/allreduce?hash=mixed&lang=en")).await;
    assert_eq!(settled(&page, "allreduce mixed").await, "done");
    let limit: String = eval(
        &page,
        "document.querySelector('[data-testid=lab-verdict]').dataset.limit",
    )
    .await;
    let mixed_v = mixed.verdict.allreduce().expect("an allreduce verdict");
    assert_eq!(Value::from(limit), serde_json::json!(mixed_v.limit));
    let said = texts(&page, "[data-testid=lab-verdict] .lab-verdict-text")
        .await
        .join(" ");
    let n = u64::from(mixed_v.collided_uplinks);
    assert!(
        said.contains(&format!("the limit is ECMP collisions: on {n} uplinks")),
        "{said:?}"
    );
    let rows = texts(&page, "[data-testid=lab-table-uplinks] tbody th").await;
    assert_eq!(
        rows.iter().filter(|r| r.ends_with(" · 2 flows")).count() as u64,
        n,
        "{rows:?}"
    );
    // A knob out of range: refused, naming the field and its range.
    open(&page, &format!("{base}/lab/allreduce?qps=9&lang=en")).await;
    assert_eq!(settled(&page, "allreduce qps=9").await, "error");
    let err = texts(&page, ".lab-error").await.join(" ");
    assert!(err.contains("qps") && err.contains("1..=4"), "{err:?}");
    env.stop().await;
}

/// A session that fails in every way the page must still say in Chinese: a verb refused with
/// an errno (the rule behind the closed disclosure), an expectation that fails with words for
/// its value ("no completion"), and a frame the fabric drops, so the ladder shows a NAK.
const ZH_FAILURES: &str = r#"hosts = ["a", "b"]

[fabric]
topology = "back_to_back"
drop = [{ from = "a", nth = 2, count = 1 }]

[[step]]
call = "connect"
hosts = ["a", "b"]
pd = ["pd_a", "pd_b"]
cq = ["cq_a", "cq_b"]
qp = ["qp_a", "qp_b"]
mtu = 1024

[[step]]
call = "alloc"
host = "a"
as = "buf_a"
len = 8192

[[step]]
call = "reg_mr"
pd = "pd_a"
buf = "buf_a"
as = "mr_a"

[[step]]
call = "alloc"
host = "b"
as = "buf_b"
len = 8192

[[step]]
call = "reg_mr"
pd = "pd_b"
buf = "buf_b"
as = "mr_b"
access = ["LOCAL_WRITE", "REMOTE_WRITE"]

[[step]]
call = "post_send"
qp = "qp_a"
wr_id = 1
opcode = "RDMA_WRITE"
flags = ["SIGNALED"]
sge = { mr = "mr_a" }
remote = { mr = "mr_b" }

[[step]]
call = "poll_cq"
cq = "cq_a"
wait = "100us"

[[step]]
call = "modify_qp"
qp = "qp_a"
mask = ["STATE"]
state = "INIT"

[[step]]
call = "poll_cq"
cq = "cq_b"
wait = "1us"
expect.wc = [{ wr_id = 9, status = "SUCCESS" }]
"#;

/// Issue 19's last English on zh pages: a verb's refused rule, a failed expectation's values,
/// a NAK's name in the ladder, a TOML syntax error (position and cause in Chinese, the parser's
/// words only behind a labelled disclosure), and a run budget the simulation page reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zh_pages_say_errors_failures_and_naks_in_chinese() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("zhfail").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    open(&page, &format!("{base}/playground")).await;
    wait_for(
        &page,
        "document.querySelector('[data-testid=import-paste]') && document.body.dataset.run === 'done'",
        "playground",
    )
    .await;
    let paste = |text: &str| {
        format!(
            "(() => {{ document.querySelector('details.pg-paste').open = true; \
             document.querySelector('[data-testid=import-text]').value = {t}; return true; }})()",
            t = serde_json::to_string(text).unwrap()
        )
    };
    eval::<bool>(&page, &paste(ZH_FAILURES)).await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=import-paste]", "failures").await,
        "done"
    );
    let rows = steps(&page).await;
    assert_eq!(rows[7].1, "EINVAL", "{rows:?}");
    // The refused modify_qp: the errno's explanation, and the rule behind the disclosure,
    // opened as a learner would, in Chinese.
    let rule: String = eval(
        &page,
        "(() => { const d = document.querySelectorAll('[data-testid^=step-]')[7].querySelector('details.pg-orig'); \
         d.open = true; return d.innerText; })()",
    )
    .await;
    assert!(
        rule.contains("不是合法的状态转换") && rule.contains("RTS→INIT"),
        "{rule:?}"
    );
    // The failed expectation: what was wanted, and what came, in words.
    let exp: String = eval(
        &page,
        "document.querySelectorAll('[data-testid^=step-]')[8].querySelector('.pg-exp').innerText",
    )
    .await;
    assert!(
        exp.contains("wc[0].wr_id") && exp.contains("没有完成"),
        "{exp:?}"
    );
    // The ladder, every step: the dropped frame's NAK by its meaning, not the Rust name.
    eval::<bool>(
        &page,
        "(() => { const c = document.querySelector('#pg-all'); c.checked = true; c.dispatchEvent(new Event('change')); return true; })()",
    )
    .await;
    let ladder: String = eval(
        &page,
        "document.querySelector('[data-testid=ladder]').textContent",
    )
    .await;
    assert!(ladder.contains("NAK：PSN 序列错误"), "{ladder:?}");
    assert!(!ladder.contains("PsnSequenceError"), "{ladder:?}");
    let runs = pg_zh_english(&page).await;
    assert!(runs.is_empty(), "English on the zh playground: {runs:#?}");
    let untranslated: usize = eval(
        &page,
        "document.querySelectorAll('[data-untranslated]').length",
    )
    .await;
    assert_eq!(untranslated, 0, "server texts with no Chinese form");
    shot(&page, "zh19-playground-failures-zh").await;

    // A TOML syntax error: where, and what is wrong, in Chinese.
    eval::<bool>(&page, &paste("hosts = [\"a\", \"b\"\n")).await;
    assert_eq!(
        click_and_settle(&page, "[data-testid=import-paste]", "toml").await,
        "error"
    );
    let said: String = eval(&page, "document.querySelector('#pg-summary').innerText").await;
    assert!(
        said.contains("第 1 行第 18 列") && said.contains("数组的方括号没有闭合"),
        "{said:?}"
    );
    let parser: String = eval(
        &page,
        "(() => { const d = document.querySelector('#pg-summary details.pg-parser'); d.open = true; return d.innerText; })()",
    )
    .await;
    assert!(
        parser.contains("toml") && parser.contains("unclosed array"),
        "{parser:?}"
    );
    let runs = pg_zh_english(&page).await;
    assert!(
        runs.is_empty(),
        "English on the zh playground's TOML error: {runs:#?}"
    );
    shot(&page, "zh19-playground-toml-zh").await;

    // The simulation page with a run that outgrows its event budget, and with a value out of
    // its key's range: the server's sentences, in Chinese.
    for (set, says) in [
        ("lesson5&set=budget.max_events%3D1000", "仿真停止了"),
        ("lesson1&set=budget.max_events%3D100", "超出了范围"),
    ] {
        open_sim(&page, &format!("{base}/sim?preset={set}")).await;
        let status: String = eval(&page, "document.querySelector('#status').innerText").await;
        assert!(
            status.contains(says) && status.contains("budget.max_events"),
            "{set}: {status:?}"
        );
        // What is allowed is said once, not again after a sentence that already said it.
        assert!(status.matches("允许").count() <= 1, "{set}: {status:?}");
        let words = english_words(
            &page,
            "[document.querySelector('#status').innerText]",
            &[],
            1,
        )
        .await;
        assert!(words.is_empty(), "English in {set}'s error: {words:#?}");
    }
    shot(&page, "zh19-sim-budget-zh").await;

    // On a phone the fabric view's XOFF badges stand apart: at the moment of the run with the
    // most of them, no two cover each other.
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 1.0, true))
        .await
        .unwrap();
    for id in ["hol", "storm", "deadlock"] {
        open(&page, &format!("{base}/lab/{id}")).await;
        assert_eq!(settled(&page, id).await, "done", "{id}");
        wait_for(&page, "document.querySelector('.fabric-view .fv-svg')", id).await;
        let (badges, overlaps): (usize, usize) = eval(
            &page,
            "(() => { const s = document.querySelector('.fv-scrub'); let best = [0, 0]; \
             for (let k = 0; k <= Number(s.max); k++) { s.value = k; s.dispatchEvent(new Event('input', { bubbles: true })); \
               const n = document.querySelectorAll('.fv-xoff').length; if (n > best[1]) best = [k, n]; } \
             s.value = best[0]; s.dispatchEvent(new Event('input', { bubbles: true })); \
             const r = [...document.querySelectorAll('.fv-xoff rect')].map((e) => e.getBoundingClientRect()); let n = 0; \
             for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) { const a = r[i], c = r[j]; \
               if (a.left < c.right && c.left < a.right && a.top < c.bottom && c.top < a.bottom) n++; } \
             return [r.length, n]; })()",
        )
        .await;
        assert!(badges >= 3, "{id}: {badges} XOFF badges");
        assert_eq!(
            overlaps, 0,
            "{id}: {overlaps} pairs of XOFF badges overlap at 390 px"
        );
        shot(&page, &format!("zh19-lab-{id}-zh-390")).await;
    }
    env.stop().await;
}
