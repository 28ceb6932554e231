//! The rdmalab web lab: the course, the six hands-on lessons and the traffic-simulation page,
//! served by one axum [`app`]. Every figure on a page comes from running the simulator; pages
//! and scripts are embedded in the binary (no request leaves the machine).
//!
//! # JSON API
//!
//! | method and path | answer |
//! |---|---|
//! | `GET /api/presets` | `[{name, key, number, title, toml}]`: presets ①–⑥ and ⑤b |
//! | `GET /api/schema` | `{keys: [{key, type, unit, doc, allowed, default, min?, max?, choices?}], limits}`: every scenario key (the experiment-parameters panel) and the server's bounds |
//! | `POST /api/run` | body `{preset? , scenario?, set?: ["key=value"], profile?}` → `{preset, plan: {key: value}, report}` (`report` is `rdmalab run --json`'s document: schema in `rdmalab::report`) |
//! | `POST /api/packets` | body as `/api/run` → `{preset, mode, tcp, rdma}`: each path's packet view, the frames around its first drop (`rdmalab::report::packets`; [`packets`]) |
//! | `POST /api/fabric` | body as `/api/run` → `{preset, mode, seed, max_links, tcp, rdma}`: each path's `{view, pfc_pauses, drops, ecn_marks}`, the fabric view of its run (the `fabric` of `POST /api/lab/{id}`, sampled from the data path's start to the run's end) and the report's counts it adds up to; 422 names `topology.kind` (no switch), `topology.hosts`, `topology.spines` or `topology.k` (over [`rdmalab::labs::fabric_view::MAX_LINKS`] links) ([`fabric`]) |
//! | `POST /api/verbs` | body `{session: "TOML", profile?}` → `rdmalab verbs run --json`'s document (every step, its result and checks, `passed`); at most [`api::MAX_VERBS_EVENTS`] events |
//! | `GET /api/verbs/model` | `{states, qp_types, transitions: [{from, to, rc|uc|ud: {required, optional}}], attrs: [{key, mask}], profiles, wc_status: [{name, code, text}], errno: [{name, code}]}`: the QP state table the playground draws |
//! | `POST /api/frame/dissect` | body `{wire: "hex", elided?: [start, end]}` (a frame record's `wire` and `wire_elided`; at most [`dissect::MAX_FRAME_BYTES`]) → `{len, elided, frame_check, stopped, headers: [{kind, name, spec, start, len, fields: [{name, bit_offset, bit_width, value, hex, meaning}]}]}`: the frame's headers in wire order, decoded by `wire::dissect`; 422 names `wire` or `elided` |
//! | `GET /api/labs` | `[{id, params: [{name, kind: int|bool|choice, min?, max?, choices?, default, unit}]}]`: the fabric labs |
//! | `POST /api/lab/{id}` | body `{param: value, ...}` (numbers, booleans, or the same as strings) → `{lab, params, figures: [{id, value, unit}], charts: [{id, kind, x_unit, y_unit, series: [{name, points: [[x, y]], labels?}]}], counters: [{host, name, value}], verdict: {...}, fabric?: {topology, nodes: [{name, kind}], links: [{a, b, gbps, dirs: [{from, to, util_pct, queue_bytes, held_pct, paused, pauses, frames, ecn_marks, first_pause_ps}; 2], drops, frames: [{t_ps, dir, kind, bytes, priority, ce, opcode?, psn?, dest_qp?, quanta?, uid, wire, wire_elided?}], frames_total}], t_ps, window_ps, priority}, events, wall_ms}` (`rdmalab::labs`; `fabric` for hol, storm, deadlock and incast: one sample per window, bounded by `labs::fabric_view`; a frame's `wire` is its bytes as `/api/frame/dissect` takes them, the payload cut to 64 bytes); 404 an unknown lab, 422 a parameter out of range |
//! | `GET /api/course/{lang}/labs` | `{lang, labs: [{id, title, summary, intro_html, look_html, chapters: [{id, title}], cases: [{id, title, symptom_html, cause_html, fix_html}]}]}` |
//! | `GET /api/course/{lang}` | `{lang, overview_html, modules: [{id, title, summary, chapters: [{id, title, summary, lessons, presets}]}], lessons: [{number, title, goal, difficulty, minutes, preset}]}` |
//! | `GET /api/course/{lang}/chapter/{id}` | `{id, module, title, summary, goals_html, body_html, key_points_html, misconceptions: [{wrong_html, right_html}], tries: [{kind, label, explain_html, href}], checks: [{kind, question_html, choices_html, answer, unit, tolerance, explain_html, simulated: {value, choice} \| null}], references: [{tag, text_html}], lessons, presets, labs, prev, next}`: every placeholder filled from its run ([`placeholder`], [`render`]) |
//! | `GET /api/course/{lang}/glossary` | `{terms: [{id, name, text_html, chapters: [{id, title}], see, refs}]}` |
//! | `GET /api/course/{lang}/code/{file}` | a course program (`rc_write.c`) as `text/plain`, its comments in the language |
//! | `GET /api/verbs/examples` | `{examples: [name]}`: the sessions in `scenarios/verbs/` |
//! | `GET /api/verbs/example/{name}` | `{name, session}`: one example's text (the playground opens `/playground?example=NAME`) |
//! | `GET /api/course/{lang}/lesson/{n}` | `{number, title, difficulty, minutes, goal, highlight, text_html, key_points, try: [{label, preset, set, explain}]}` |
//!
//! `lang` is `zh` or `en`. Figures in course text are `{{fig:...}}` placeholders
//! (`course/FORMAT.md`) filled by running the preset when the page is served (each run once,
//! then kept).
//!
//! Errors are JSON, `{"error", "field"?, "allowed"?}`: 400 a malformed request, 404 an
//! unknown preset, chapter, lesson or language, 405 a method the path does not take
//! (`allowed` lists those it does), 408 a request over [`REQUEST_TIMEOUT`], 413 a body over
//! [`MAX_BODY_BYTES`], 415 a body that is not JSON, 421 a `Host` the server does not answer
//! ([`guard::HostPolicy`]), 422 a value out of range (a scenario key, or the server's own
//! bounds in [`api`]: stream length, message count, hosts, memory, answer size), 500 an internal
//! error (a bug: the answer carries a `report` with the scenario to file, and the server log
//! keeps it), 503 a simulation over its wall-clock limit, the server busy (every core running
//! one and [`AppState::queue_limit`] more waiting; `Retry-After: 1`) or at its connection limit.
//! Simulations run on blocking threads, at most one per core at a time, and their answers are
//! serialized and compressed there ([`api::prepare`]). Connections are bounded by
//! [`server::ServeOptions`]; every response carries the security headers of
//! [`guard::security_headers`].
//!
//! # Pages
//!
//! `/` (the course map), `/overview`, `/chapter/{id}`, `/lesson/{n}`, `/sim` (the simulation
//! page; its state lives in the query: `preset`, `set`, `profile`, `hl`, `speed`),
//! `/playground` (the verbs playground; its session lives in the query as `s`, compressed),
//! `/labs` and `/lab/{id}` (the fabric labs; their parameters live in the query), all with
//! `?lang=en` for English. They are one HTML shell and ES modules under `/assets/`.

pub mod api;
pub mod chapter;
pub mod code;
pub mod content;
pub mod diagram;
pub mod dissect;
pub mod error;
pub mod examples;
pub mod fabric;
pub mod glossary;
pub mod guard;
pub mod packets;
#[cfg(test)]
mod page_words;
pub mod placeholder;
pub mod render;
pub mod runs;
pub mod server;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use content::{Content, Figures};
use rust_embed::RustEmbed;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tower_http::compression::CompressionLayer;

/// Largest request body, bytes (a scenario file is at most 64 KiB; overrides fit easily).
pub const MAX_BODY_BYTES: usize = 128 << 10;

/// Longest a request may take, from its head to its answer (its body's upload, a wait for a
/// core, the run): past it the answer is a JSON 408. Longer than a run's own wall-clock limit
/// ([`api::RUN_WALL_LIMIT`]) so that a run's own 503 arrives first.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The course in both languages.
    pub content: Arc<Content>,
    /// Preset runs behind the course's figures.
    pub figures: Arc<Figures>,
    /// Session and lab runs behind the chapters' figures and diagrams.
    pub runs: Arc<runs::Runs>,
    /// Permits for simulations running at once.
    pub sims: Arc<Semaphore>,
    /// Requests waiting for a permit now.
    pub waiting: Arc<std::sync::atomic::AtomicUsize>,
    /// Most requests that may wait for a permit; past that a run is refused with 503 and
    /// `Retry-After` (static pages and the course keep being served meanwhile).
    pub queue_limit: usize,
    /// The course figures' own permit: their runs never wait in, or count toward, the users'
    /// queue ([`content::Figures`]).
    pub figure_runs: Arc<Semaphore>,
    /// Which `Host` headers are answered ([`guard::HostPolicy`]; `serve` sets it from the
    /// bound address).
    pub hosts: Arc<guard::HostPolicy>,
}

impl AppState {
    /// Loads the embedded course and allows one simulation per core at a time.
    pub fn new() -> Result<AppState, String> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(AppState {
            content: Arc::new(Content::load()?),
            figures: Arc::new(Figures::default()),
            runs: Arc::new(runs::Runs::default()),
            sims: Arc::new(Semaphore::new(cores)),
            waiting: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            queue_limit: 8 * cores,
            figure_runs: Arc::new(Semaphore::new(1)),
            hosts: Arc::new(guard::HostPolicy::Any),
        })
    }
}

#[derive(RustEmbed)]
#[folder = "assets/"]
struct Assets;

/// The whole lab: API, pages and assets.
pub fn app(state: AppState) -> Router {
    let router = Router::new()
        .route("/api/presets", get(api::presets))
        .route("/api/schema", get(api::schema))
        .route("/api/run", post(api::run))
        .route("/api/packets", post(packets::packets))
        .route("/api/fabric", post(fabric::fabric))
        .route("/api/verbs", post(api::verbs))
        .route("/api/verbs/model", get(api::verbs_model))
        .route("/api/verbs/examples", get(api::verbs_examples))
        .route("/api/verbs/example/{name}", get(api::verbs_example))
        .route("/api/frame/dissect", post(dissect::dissect))
        .route("/api/labs", get(api::labs))
        .route("/api/lab/{id}", post(api::lab))
        .route("/api/course/{lang}/labs", get(api::labs_text))
        .route("/api/course/{lang}", get(api::course))
        .route("/api/course/{lang}/chapter/{id}", get(api::chapter))
        .route("/api/course/{lang}/lesson/{n}", get(api::lesson))
        .route("/api/course/{lang}/glossary", get(api::glossary))
        .route("/api/course/{lang}/code/{file}", get(api::code))
        .route("/assets/{*path}", get(asset))
        .route("/", get(page))
        .route("/overview", get(page))
        .route("/sim", get(page))
        .route("/chapter/{id}", get(page))
        .route("/lesson/{n}", get(page))
        .route("/glossary", get(page))
        .route("/playground", get(page))
        .route("/labs", get(page))
        .route("/lab/{id}", get(page));
    // A route that panics inside a simulation, to test the request boundary; compiled only
    // with the `test-routes` feature (the crate's own tests turn it on).
    #[cfg(feature = "test-routes")]
    let router = router.route("/api/debug/panic", post(api::debug_panic));
    // Layers run outside in, last added first: security headers on everything, then the Host
    // check, JSON error bodies, compression, the request timeout, the body limit.
    router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(guard::timeout))
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn(guard::json_errors))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check_host,
        ))
        .layer(axum::middleware::from_fn(guard::security_headers))
        .with_state(state)
}

/// The HTML shell every page starts from.
async fn page(headers: HeaderMap) -> Response {
    match Assets::get("index.html") {
        Some(f) => embedded(
            &f,
            &headers,
            Html(f.data.clone().into_owned()).into_response(),
        ),
        None => (StatusCode::INTERNAL_SERVER_ERROR, "index.html is missing").into_response(),
    }
}

async fn asset(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().trim_start_matches("/assets/");
    match Assets::get(path) {
        Some(f) => {
            let mime = f.metadata.mimetype();
            let mut r = f.data.clone().into_owned().into_response();
            if let Ok(v) = HeaderValue::from_str(mime) {
                r.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            embedded(&f, &headers, r)
        }
        None => error::ApiError::not_found(format!("no asset {path:?}")).into_response(),
    }
}

/// An embedded file's answer with its ETag (its content hash): a reload that still has the
/// file gets 304 Not Modified and no body; `no-cache` makes the browser ask every time, so a
/// new build's files are never stale.
fn embedded(f: &rust_embed::EmbeddedFile, req: &HeaderMap, full: Response) -> Response {
    let hash = f.metadata.sha256_hash();
    let tag = format!(
        "\"{}\"",
        hash[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let fresh = req
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag || t.trim() == "*"));
    let mut r = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        full
    };
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Ok(v) = HeaderValue::from_str(&tag) {
        h.insert(header::ETAG, v);
    }
    r
}

async fn not_found(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return error::ApiError::not_found(format!("no API endpoint {}", uri.path()))
            .into_response();
    }
    (
        StatusCode::NOT_FOUND,
        Html(
            "<!doctype html><meta charset=utf-8><title>404</title>\
             <p>No such page. <a href=\"/\">The course map</a></p>",
        ),
    )
        .into_response()
}

/// Serves the lab on `listener` until Ctrl-C (or SIGTERM), with the connection bounds of
/// [`server::ServeOptions::default`].
pub async fn serve(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    server::serve_with(listener, state, server::ServeOptions::default()).await
}

/// Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
