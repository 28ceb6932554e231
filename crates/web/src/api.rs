//! The JSON API's handlers (the list is at the top of the crate).

use crate::AppState;
use crate::error::ApiError;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use rdmalab::engine::BudgetExceeded as engine_budget;
use rdmalab::report::{Report, run_plan};
use rdmalab::session::msg::{Msg, MsgId};
use scenario::Plan;
use scenario::plan::{KEYS, Kind, Value, get};
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use std::time::Duration;

/// Most `set` overrides in one request.
pub const MAX_SETS: usize = 64;
/// Longest override, bytes.
pub const MAX_SET_BYTES: usize = 256;
/// Longest simulated stream a web request may ask for, µs (a preset's is 4 ms).
pub const MAX_STREAM_US: u64 = 20_000;
/// Most bytes a count-mode web request may move (per path).
pub const MAX_COUNT_BYTES: u64 = 256 << 20;
/// Most messages a count-mode web request may send: 10 000 take about 0.4 s and 45 MB
/// (every stage of every message is traced for the report); 65 536 would take 2 s and 250 MB.
pub const MAX_MESSAGES: u64 = 10_000;
/// Most hosts a web request may build.
pub const MAX_HOSTS: u64 = 64;
/// Most memory one web run's growing state may hold, MB (`budget.max_memory_mb` is capped at
/// it). With one run per core, a 2-core server's runs count at most 2 × 256 MB; what the
/// process really holds is somewhat more (allocator slack, the runner's own buffers) and the
/// answer each builds is at most [`MAX_ANSWER_BYTES`]: the load test bounds the total.
pub const MAX_RUN_MEMORY_MB: u64 = 256;
/// Longest a simulation may take on the server (wall clock) before the request gives up.
pub const RUN_WALL_LIMIT: Duration = Duration::from_secs(30);

/// `GET /api/presets`: every preset, ①–⑥ and ⑤b.
pub async fn presets() -> Json<serde_json::Value> {
    let list: Vec<_> = scenario::presets()
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "key": format!("{}{}", p.number, p.variant),
                "number": p.number,
                "title": p.title,
                "toml": p.toml,
            })
        })
        .collect();
    Json(json!(list))
}

/// One key of the scenario schema, for the experiment-parameters panel.
#[derive(Serialize)]
struct KeyDoc {
    key: &'static str,
    r#type: &'static str,
    unit: &'static str,
    doc: &'static str,
    allowed: String,
    default: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    choices: Vec<serde_json::Value>,
    /// True when the key also takes the string `"auto"` (the model derives the value).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    auto: bool,
}

/// `GET /api/schema`: every scenario key with its type, unit, default and range.
pub async fn schema() -> Json<serde_json::Value> {
    let d = Plan::default();
    let keys: Vec<KeyDoc> = KEYS
        .iter()
        .map(|k| {
            let (min, max, choices) = match k.kind {
                Kind::Int { lo, hi } | Kind::IntOrAuto { lo, hi } => {
                    (Some(lo), Some(hi), Vec::new())
                }
                Kind::OneOf(v) => (None, None, v.iter().map(|x| json!(x)).collect()),
                Kind::Enum(v) => (None, None, v.iter().map(|x| json!(x)).collect()),
                Kind::Prob | Kind::Bool | Kind::Path { .. } => (None, None, Vec::new()),
            };
            KeyDoc {
                key: k.path,
                r#type: k.kind.type_name(),
                unit: k.unit,
                doc: k.doc,
                allowed: k.kind.allowed(),
                default: get(&d, k.path).map_or(serde_json::Value::Null, |v| value_json(&v)),
                min,
                max,
                choices,
                auto: matches!(k.kind, Kind::IntOrAuto { .. }),
            }
        })
        .collect();
    Json(json!({ "keys": keys, "limits": limits() }))
}

fn limits() -> serde_json::Value {
    json!({
        "max_sets": MAX_SETS,
        "max_set_bytes": MAX_SET_BYTES,
        "max_stream_us": MAX_STREAM_US,
        "max_count_bytes": MAX_COUNT_BYTES,
        "max_messages": MAX_MESSAGES,
        "max_hosts": MAX_HOSTS,
        "max_body_bytes": crate::MAX_BODY_BYTES,
        "max_run_memory_mb": MAX_RUN_MEMORY_MB,
        "max_answer_bytes": MAX_ANSWER_BYTES,
        "max_wall_s": RUN_WALL_LIMIT.as_secs(),
    })
}

fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(n) => json!(n),
        Value::Float(x) => json!(x),
        Value::Bool(b) => json!(b),
        Value::Str(s) => json!(s),
    }
}

/// Every key of `plan` and its value.
pub fn plan_json(plan: &Plan) -> serde_json::Value {
    let mut m = Map::new();
    for k in KEYS {
        if let Some(v) = get(plan, k.path) {
            m.insert(k.path.to_string(), value_json(&v));
        }
    }
    serde_json::Value::Object(m)
}

/// `POST /api/run` body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// A preset (`lesson3`, `3`, `③`, `5b`); exclusive with `scenario`.
    pub preset: Option<String>,
    /// A whole scenario file (TOML); exclusive with `preset`.
    pub scenario: Option<String>,
    /// `key=value` overrides, applied in order after the preset or file.
    #[serde(default)]
    pub set: Vec<String>,
    /// A NIC profile (`mlx5`, `rxe`, `ibta`): shorthand for `nic.profile`, before `set`.
    pub profile: Option<String>,
}

/// Turns a request into a plan, or says which field is wrong and what it allows.
pub fn plan_of(req: &RunRequest) -> Result<(Option<&'static str>, Plan), ApiError> {
    let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
    if req.set.len() > MAX_SETS {
        return Err(ApiError::field(
            unprocessable,
            "set",
            format!("{} overrides", req.set.len()),
            format!("at most {MAX_SETS}"),
        ));
    }
    if let Some(s) = req.set.iter().find(|s| s.len() > MAX_SET_BYTES) {
        return Err(ApiError::field(
            unprocessable,
            "set",
            format!("an override of {} bytes", s.len()),
            format!("at most {MAX_SET_BYTES} bytes each"),
        ));
    }
    let (name, text) = match (&req.preset, &req.scenario) {
        (Some(p), None) => match scenario::preset(p) {
            Some(p) => (Some(p.name), p.toml),
            None => {
                return Err(ApiError::field(
                    StatusCode::NOT_FOUND,
                    "preset",
                    format!("no preset {:?}", truncate(p, 40)),
                    scenario::preset_names(),
                ));
            }
        },
        (None, Some(t)) => (None, t.as_str()),
        (None, None) => {
            return Err(ApiError::field(
                StatusCode::BAD_REQUEST,
                "preset",
                "give a preset or a scenario",
                "one of preset or scenario",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::field(
                StatusCode::BAD_REQUEST,
                "scenario",
                "give a preset or a scenario, not both",
                "one of preset or scenario",
            ));
        }
    };
    let mut sets: Vec<String> = Vec::new();
    if let Some(p) = &req.profile {
        if !scenario::NicKind::NAMES.contains(&p.as_str()) {
            return Err(ApiError::field(
                unprocessable,
                "profile",
                format!("no NIC profile {:?}", truncate(p, 40)),
                scenario::NicKind::NAMES.join(", "),
            ));
        }
        sets.push(format!("nic.profile=\"{p}\""));
    }
    sets.extend(req.set.iter().cloned());
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let plan = scenario::parse_with(text, &sets)?;
    check_web_bounds(&plan)?;
    Ok((name, plan))
}

/// The server's own bounds on top of the schema's: what one web request may simulate.
fn check_web_bounds(plan: &Plan) -> Result<(), ApiError> {
    let bad = |field: &str, value: u64, allowed: Msg| {
        Err(ApiError::field_said(
            StatusCode::UNPROCESSABLE_ENTITY,
            field,
            Msg::new(MsgId::ServerMoreThanWebRuns)
                .arg("field", field)
                .arg("value", value),
            allowed,
        ))
    };
    let w = &plan.workload;
    if w.stream_us > MAX_STREAM_US {
        return bad(
            "workload.stream_us",
            w.stream_us,
            Msg::new(MsgId::ServerAtMostStream).arg("max", MAX_STREAM_US),
        );
    }
    if w.stream_us == 0 {
        if w.messages > MAX_MESSAGES {
            return bad(
                "workload.messages",
                w.messages,
                Msg::new(MsgId::ServerAtMost).arg("max", MAX_MESSAGES),
            );
        }
        if w.message_bytes.saturating_mul(w.messages) > MAX_COUNT_BYTES {
            return bad(
                "workload.messages",
                w.messages,
                Msg::new(MsgId::ServerAtMostBytes)
                    .arg("n", MAX_COUNT_BYTES / w.message_bytes.max(1))
                    .arg("bytes", w.message_bytes)
                    .arg("mib", MAX_COUNT_BYTES >> 20),
            );
        }
    }
    if plan.topology.hosts > MAX_HOSTS {
        return bad(
            "topology.hosts",
            plan.topology.hosts,
            Msg::new(MsgId::ServerAtMost).arg("max", MAX_HOSTS),
        );
    }
    let k = plan.topology.k;
    if plan.topology.kind == scenario::TopologyKind::FatTree && k * k * k / 4 > MAX_HOSTS {
        return bad(
            "topology.k",
            k,
            Msg::new(MsgId::ServerAtMostK).arg("max", MAX_HOSTS),
        );
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// `POST /api/run`: runs both paths of a preset or scenario and returns the plan (every key)
/// and the report.
pub async fn run(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<RunRequest>, JsonRejection>,
) -> Result<Prepared, ApiError> {
    let Json(req) = body.map_err(|r| rejection(r, RUN_BODY))?;
    let (name, plan) = plan_of(&req)?;
    let gzip = accepts_gzip(&headers);
    let doc = plan_json(&plan);
    // The answer is built on the simulation's thread, inside its permit and its wall-clock
    // limit: a large report costs a core, not the async workers that serve pages.
    simulate_with(&state, plan, move |p| {
        run_plan(p).map(|report| {
            prepare(
                &RunAnswer {
                    preset: name,
                    plan: &doc,
                    report: &report,
                },
                gzip,
            )
        })
    })
    .await?
}

/// What `POST /api/run` answers. Serialized straight from the report: going through a
/// `serde_json::Value` first (`json!`) built a second copy of a lesson-6 report's tree and took
/// a quarter of the request.
#[derive(Serialize)]
struct RunAnswer<'a> {
    preset: Option<&'static str>,
    plan: &'a serde_json::Value,
    report: &'a rdmalab::report::Report,
}

/// Largest JSON answer of a run, a verbs session or a lab, bytes. The reports bound their own
/// lists (a ladder's frames, a timeline, a session's memory dumps), so a request within
/// `/api/schema`'s limits stays far below this; the cap is the backstop that keeps one request
/// from holding hundreds of megabytes.
pub const MAX_ANSWER_BYTES: usize = 8 << 20;

/// A JSON answer serialized (and gzipped, when the client takes gzip and it is worth it) on a
/// blocking thread: see [`prepare`].
#[derive(Debug)]
pub struct Prepared {
    bytes: Vec<u8>,
    gzip: bool,
}

impl axum::response::IntoResponse for Prepared {
    fn into_response(self) -> axum::response::Response {
        use axum::http::{HeaderValue, header};
        let mut r = self.bytes.into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if self.gzip {
            // The compression layer leaves an answer that already has an encoding alone.
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        r
    }
}

/// Serializes `v`, refusing answers over [`MAX_ANSWER_BYTES`] with a 422 that says what to
/// shrink, and gzips it when `gzip` (the client's `Accept-Encoding` allows it) and it is
/// larger than a packet.
pub fn prepare(v: &impl Serialize, gzip: bool) -> Result<Prepared, ApiError> {
    let bytes = serde_json::to_vec(v)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(ApiError::said(
            StatusCode::UNPROCESSABLE_ENTITY,
            Msg::new(MsgId::ServerAnswerTooLarge)
                .arg(
                    "mib",
                    format!("{:.1}", bytes.len() as f64 / (1 << 20) as f64),
                )
                .arg("max", MAX_ANSWER_BYTES >> 20),
        ));
    }
    if !gzip || bytes.len() < 1400 {
        return Ok(Prepared { bytes, gzip: false });
    }
    use std::io::Write as _;
    let mut z = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::fast(),
    );
    z.write_all(&bytes)
        .and_then(|()| z.finish())
        .map(|bytes| Prepared { bytes, gzip: true })
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// Whether the request's `Accept-Encoding` takes gzip (and does not refuse it with `q=0`).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(axum::http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| {
            let mut it = part.split(';').map(str::trim);
            let coding = it.next().unwrap_or("");
            let refused = it.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

/// Runs `plan` off the async runtime, at most as many at once as the server allows.
pub async fn simulate(state: &AppState, plan: Plan) -> Result<Report, ApiError> {
    simulate_with(state, plan, run_plan).await
}

/// [`simulate`] with the run itself given: at most one per core at once, at most
/// [`AppState::queue_limit`] more waiting (past that, 503 with `Retry-After`), a wall-clock
/// limit, and a panic inside the run (a bug) caught here: logged with the scenario, answered
/// with 500 and a report to file, and the server goes on.
pub async fn simulate_with<T: Send + 'static>(
    state: &AppState,
    plan: Plan,
    run: impl FnOnce(&Plan) -> Result<T, rdmalab::report::RunError> + Send + 'static,
) -> Result<T, ApiError> {
    let permit = acquire(state).await?;
    // The simulation stops itself at the server's wall-clock limit, so a core is never kept
    // busy after its request has been answered with 503.
    let mut plan = plan;
    plan.budget.max_wall_s = plan.budget.max_wall_s.min(RUN_WALL_LIMIT.as_secs());
    plan.budget.max_memory_mb = plan.budget.max_memory_mb.min(MAX_RUN_MEMORY_MB);
    let scenario = plan_json(&plan);
    // The permit goes with the thread: if the request is dropped or answered by the timeout,
    // the core stays taken until the simulation has really stopped.
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        run(&plan)
    });
    match tokio::time::timeout(RUN_WALL_LIMIT, task).await {
        Err(_) => Err(ApiError::said(
            StatusCode::SERVICE_UNAVAILABLE,
            Msg::new(MsgId::ServerSimTooSlow).arg("secs", RUN_WALL_LIMIT.as_secs()),
        )),
        Ok(Err(join)) => {
            let what = if join.is_panic() {
                let p = join.into_panic();
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string())
            } else {
                "the simulation's thread was cancelled".to_string()
            };
            // The server log keeps the case; the answer carries it for the user to file.
            eprintln!("rdmalab serve: a simulation panicked (a bug): {what}; scenario: {scenario}");
            let mut e = ApiError::said(
                StatusCode::INTERNAL_SERVER_ERROR,
                Msg::new(MsgId::ServerPanic),
            );
            e.report = Some(Box::new(json!({
                "panic": what,
                "scenario": scenario,
                "version": env!("CARGO_PKG_VERSION"),
            })));
            Err(e)
        }
        Ok(Ok(Err(e))) if e.is_bad_input() => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            e.to_string(),
        )),
        // A budget the scenario outgrew: the message names the key to raise.
        Ok(Ok(Err(rdmalab::report::RunError::World(rdmalab::world::WorldError::Budget(b))))) => {
            let (key, m) = match b {
                engine_budget::SimTime { limit } => (
                    "budget.max_sim_time_ms",
                    Msg::new(MsgId::ServerBudgetSimTime).arg("limit", limit.to_string()),
                ),
                engine_budget::Events { limit } => (
                    "budget.max_events",
                    Msg::new(MsgId::ServerBudgetEvents).arg("limit", limit),
                ),
                engine_budget::Wall { limit, events } => (
                    "budget.max_wall_s",
                    Msg::new(MsgId::ServerBudgetWall)
                        .arg("limit", format!("{limit:?}"))
                        .arg("events", events),
                ),
                engine_budget::Memory { limit_bytes } => (
                    "budget.max_memory_mb",
                    Msg::new(MsgId::ServerBudgetMemory).arg("mb", limit_bytes >> 20),
                ),
            };
            Err(ApiError::field_said(
                StatusCode::UNPROCESSABLE_ENTITY,
                key,
                m,
                Msg::new(MsgId::ServerBudgetAllowed)
                    .arg("wall", RUN_WALL_LIMIT.as_secs())
                    .arg("mb", MAX_RUN_MEMORY_MB),
            ))
        }
        Ok(Ok(Err(e))) => Err(ApiError::said(
            StatusCode::INTERNAL_SERVER_ERROR,
            Msg::new(MsgId::ServerRunFailed).arg("detail", e.to_string()),
        )),
        Ok(Ok(Ok(r))) => Ok(r),
    }
}

/// `POST /api/debug/panic` (feature `test-routes` only): runs preset ① through
/// [`simulate_with`] with a run that panics, as a bug inside the simulator would.
#[cfg(feature = "test-routes")]
pub async fn debug_panic(
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let plan = scenario::preset("lesson1")
        .and_then(|p| p.plan().ok())
        .ok_or_else(|| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "preset ① is missing"))?;
    simulate_with(&state, plan, |_| panic!("a deliberate panic (test route)")).await?;
    Ok(Json(json!({})))
}

/// Body of `POST /api/verbs`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerbsRequest {
    /// A verbs session file (TOML, scenarios/verbs/README.md).
    pub session: String,
    /// Run under this NIC profile (`mlx5`, `rxe`, `ibta`) instead of the file's.
    pub profile: Option<String>,
}

/// Most events a verbs session may take through the web (sessions are short scripts).
pub const MAX_VERBS_EVENTS: u64 = 5_000_000;

/// `POST /api/verbs`: runs a verbs session file and returns `rdmalab verbs run --json`'s
/// document (every step, its result and expectations, `passed`). A file that does not parse
/// is a 422 naming the line and column.
pub async fn verbs(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<VerbsRequest>, JsonRejection>,
) -> Result<Prepared, ApiError> {
    let gzip = accepts_gzip(&headers);
    let Json(req) = body.map_err(|r| rejection(r, VERBS_BODY))?;
    let session = rdmalab::session::parse(&req.session).map_err(|e| ApiError {
        msg: Some(Box::new(e.msg.clone())),
        at: Some([e.line as u32, e.column as u32]),
        ..ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "session",
            format!("{e}"),
            "a verbs session file (scenarios/verbs/README.md)",
        )
    })?;
    let profile = match req.profile.as_deref() {
        None => None,
        Some(p) => Some(
            rdmalab::verbs::NicProfile::ALL
                .into_iter()
                .find(|x| x.name() == p)
                .ok_or_else(|| {
                    ApiError::field(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "profile",
                        format!("unknown NIC profile {p:?}"),
                        rdmalab::verbs::NicProfile::ALL
                            .iter()
                            .map(|x| x.name())
                            .collect::<Vec<_>>()
                            .join(", "),
                    )
                })?,
        ),
    };
    // Run and serialize on the blocking thread, inside the permit (see `run`).
    with_permit(&state, move || {
        rdmalab::session::run(
            &session,
            rdmalab::session::RunOptions {
                profile,
                pcap: None,
                max_events: Some(MAX_VERBS_EVENTS),
            },
        )
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))
        .and_then(|report| prepare(&report, gzip))
    })
    .await?
}

/// A permit to run on one core: at once if a core is free, after waiting if fewer than
/// [`AppState::queue_limit`] requests already wait, else 503 with `Retry-After`.
async fn acquire(state: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    use std::sync::atomic::Ordering;
    let stopping = || {
        ApiError::said(
            StatusCode::SERVICE_UNAVAILABLE,
            Msg::new(MsgId::ServerStopping),
        )
    };
    match state.sims.clone().try_acquire_owned() {
        Ok(p) => Ok(p),
        Err(tokio::sync::TryAcquireError::Closed) => Err(stopping()),
        Err(tokio::sync::TryAcquireError::NoPermits) => {
            /// Counts one waiting request for as long as it lives: a request dropped while it
            /// waits (the client hung up, the server's timeout fired) stops counting too.
            struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);
            impl Drop for Waiting<'_> {
                fn drop(&mut self) {
                    self.0.fetch_sub(1, Ordering::SeqCst);
                }
            }
            let waiting = state.waiting.fetch_add(1, Ordering::SeqCst) + 1;
            let _counted = Waiting(&state.waiting);
            if waiting > state.queue_limit {
                let mut e = ApiError::said(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Msg::new(MsgId::ServerBusy).arg("waiting", state.queue_limit),
                );
                e.retry_after = Some(1);
                return Err(e);
            }
            state
                .sims
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| stopping())
        }
    }
}

/// Runs `f` on a blocking thread under the same permits, queue bound and wall-clock limit as
/// simulations, with a panic answered as a 500 that names it.
async fn with_permit<R: Send + 'static>(
    state: &AppState,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, ApiError> {
    let permit = acquire(state).await?;
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        f()
    });
    match tokio::time::timeout(RUN_WALL_LIMIT, task).await {
        Err(_) => Err(ApiError::said(
            StatusCode::SERVICE_UNAVAILABLE,
            Msg::new(MsgId::ServerRunTooSlow).arg("secs", RUN_WALL_LIMIT.as_secs()),
        )),
        Ok(Err(join)) => {
            eprintln!("rdmalab serve: a verbs session panicked (a bug): {join}");
            Err(ApiError::said(
                StatusCode::INTERNAL_SERVER_ERROR,
                Msg::new(MsgId::ServerSessionPanic).arg("detail", join.to_string()),
            ))
        }
        Ok(Ok(r)) => Ok(r),
    }
}

/// What `POST /api/run` takes.
const RUN_BODY: &str =
    "a JSON object with preset or scenario, and optional set (array of \"key=value\") and profile";
/// What `POST /api/verbs` takes.
const VERBS_BODY: &str =
    "a JSON object with session (a verbs session file's text) and optional profile";

/// A body that is not the JSON expected, as a JSON error with the extractor's status (400
/// bad JSON, 413 too large, 415 not JSON, 422 wrong fields); `allowed` says what the route
/// takes.
pub fn rejection(r: JsonRejection, allowed: &str) -> ApiError {
    let status = r.status();
    let msg = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "the request body is larger than {} bytes",
            crate::MAX_BODY_BYTES
        )
    } else {
        r.body_text()
    };
    ApiError {
        status,
        error: msg,
        field: Some("body".into()),
        allowed: Some(allowed.into()),
        report: None,
        retry_after: None,
        msg: None,
        at: None,
        allowed_msg: None,
    }
}

/// `GET /api/course/{lang}`: the overview, the map and the lesson list.
pub async fn course(
    State(state): State<AppState>,
    Path(lang): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let lang = crate::content::Lang::parse(&lang)?;
    let c = state.content.course(lang);
    let overview = state.figures.render(&state, c.overview_md()).await;
    Ok(Json(json!({
        "lang": lang.code(),
        "overview_html": crate::content::markdown(&overview),
        "modules": c.modules_json(),
        "lessons": c.lessons_json(),
    })))
}

/// `GET /api/course/{lang}/chapter/{id}`.
pub async fn chapter(
    State(state): State<AppState>,
    Path((lang, id)): Path<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let lang = crate::content::Lang::parse(&lang)?;
    let c = state.content.course(lang);
    let (module, ch) = c
        .chapter(&id)
        .ok_or_else(|| ApiError::not_found(format!("no chapter {:?}", truncate(&id, 20))))?;
    let text = c
        .chapter_text(&id)
        .ok_or_else(|| ApiError::not_found(format!("no chapter {:?}", truncate(&id, 20))))?;
    let r = crate::render::Renderer::new(&state, lang);
    let mut page = text.render(&r).await;
    let extra = json!({
        "id": ch.id,
        "module": { "id": module.id, "title": module.title },
        "title": ch.title,
        "summary": ch.summary,
        "lessons": ch.lessons,
        "presets": ch.presets,
        "labs": ch.labs,
        "prev": c.neighbour(&id, -1),
        "next": c.neighbour(&id, 1),
    });
    if let (Some(p), serde_json::Value::Object(x)) = (page.as_object_mut(), extra) {
        p.extend(x);
    }
    Ok(Json(page))
}

/// `GET /api/verbs/examples`: the example sessions' names (`scenarios/verbs/`).
pub async fn verbs_examples() -> Json<serde_json::Value> {
    Json(json!({ "examples": crate::examples::names() }))
}

/// `GET /api/verbs/example/{name}`: one example session's text, for the playground to open
/// (`/playground?example=write`).
pub async fn verbs_example(Path(name): Path<String>) -> Result<Json<serde_json::Value>, ApiError> {
    let text = crate::examples::get(&name).ok_or_else(|| {
        ApiError::field(
            StatusCode::NOT_FOUND,
            "example",
            format!("no example session {:?}", truncate(&name, 40)),
            "a name listed by GET /api/verbs/examples",
        )
    })?;
    Ok(Json(json!({ "name": name, "session": text })))
}

/// `GET /api/course/{lang}/glossary`: the terms, their text as HTML.
pub async fn glossary(
    Path(lang): Path<String>,
    State(state): State<AppState>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let lang = crate::content::Lang::parse(&lang)?;
    let c = state.content.course(lang);
    let titles: std::collections::HashMap<&str, &str> = c
        .modules()
        .iter()
        .flat_map(|m| &m.chapters)
        .map(|ch| (ch.id.as_str(), ch.title.as_str()))
        .collect();
    let terms: Vec<serde_json::Value> = c
        .glossary()
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "name": t.name,
                "text_html": crate::content::markdown(&t.text),
                "chapters": t.chapters.iter().map(|id| json!({ "id": id, "title": titles.get(id.as_str()) })).collect::<Vec<_>>(),
                "see": t.see,
                "refs": t.refs,
            })
        })
        .collect();
    Ok(Json(json!({ "terms": terms })))
}

/// `GET /api/course/{lang}/code/{file}`: a course program (`rc_write.c`) as plain text, its
/// comments in the page's language.
pub async fn code(
    Path((lang, file)): Path<(String, String)>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let lang = crate::content::Lang::parse(&lang)?;
    let stem = file.strip_suffix(".c").unwrap_or(&file);
    let text = crate::code::localized_program(stem, lang).ok_or_else(|| {
        ApiError::field(
            StatusCode::NOT_FOUND,
            "file",
            format!("no course program {:?}", truncate(&file, 40)),
            crate::code::programs()
                .iter()
                .map(|p| format!("{p}.c"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    })?;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

/// `GET /api/course/{lang}/labs`: the playground's and the labs' texts, with the chapters
/// that link to each.
pub async fn labs_text(
    State(state): State<AppState>,
    Path(lang): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let lang = crate::content::Lang::parse(&lang)?;
    let c = state.content.course(lang);
    let md = crate::content::markdown;
    Ok(Json(json!({
        "lang": lang.code(),
        "labs": c.labs().iter().map(|l| json!({
            "id": l.id,
            "title": l.title,
            "summary": l.summary,
            "intro_html": md(&l.intro),
            "look_html": md(&l.look),
            "chapters": c.chapters_for_lab(&l.id),
            "cases": l.cases.iter().map(|k| json!({
                "id": k.id,
                "title": k.title,
                "symptom_html": md(&k.symptom),
                "cause_html": md(&k.cause),
                "fix_html": md(&k.fix),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })))
}

/// `GET /api/verbs/model`: the QP state table with the masks per QP type, the session file's
/// attribute keys, the completion statuses and the errnos (`rdmalab::session::model`).
pub async fn verbs_model() -> Json<rdmalab::session::model::Model> {
    Json(rdmalab::session::model::model())
}

/// `GET /api/labs`: every fabric lab and its parameters (`rdmalab::labs::catalogue`).
pub async fn labs() -> Json<Vec<rdmalab::labs::LabSpec>> {
    Json(rdmalab::labs::catalogue())
}

/// What `POST /api/lab/{id}` accepts.
const LAB_BODY: &str = "a JSON object of the lab's parameters (GET /api/labs lists them)";

/// `POST /api/lab/{id}`: runs a lab with the body's parameters (missing ones take their
/// defaults) and returns its figures, charts, counters and verdict.
pub async fn lab(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<serde_json::Value>, JsonRejection>,
) -> Result<Prepared, ApiError> {
    let gzip = accepts_gzip(&headers);
    let Json(body) = body.map_err(|r| rejection(r, LAB_BODY))?;
    let params = rdmalab::labs::parse_params(&id, &body).map_err(|e| {
        let status = if e.unknown_lab {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::UNPROCESSABLE_ENTITY
        };
        let mut out = match (e.field, e.allowed) {
            (Some(f), Some(a)) => ApiError::field(status, &f, e.message, a),
            _ => ApiError::new(status, e.message),
        };
        // The sentence and the allowance as message ids, for the lab page's language.
        out.msg = e.msg;
        out.allowed_msg = e.allowed_msg;
        out
    })?;
    with_permit(&state, move || {
        rdmalab::labs::run(&id, &params)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
            .and_then(|r| prepare(&r, gzip))
    })
    .await?
}

/// `GET /api/course/{lang}/lesson/{n}`: the lesson with every figure filled in from a run.
pub async fn lesson(
    State(state): State<AppState>,
    Path((lang, n)): Path<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let lang = crate::content::Lang::parse(&lang)?;
    let c = state.content.course(lang);
    let l = n
        .parse::<u8>()
        .ok()
        .and_then(|n| c.lesson(n))
        .ok_or_else(|| {
            ApiError::field(
                StatusCode::NOT_FOUND,
                "lesson",
                format!("no lesson {:?}", truncate(&n, 20)),
                "1..=6",
            )
        })?;
    let text = state.figures.render(&state, &l.text).await;
    let mut key_points = Vec::new();
    for k in &l.key_points {
        key_points.push(crate::content::inline_markdown(
            &state.figures.render(&state, k).await,
        ));
    }
    let mut tries = Vec::new();
    for t in &l.tries {
        tries.push(json!({
            "label": t.label,
            "preset": t.preset,
            "set": t.set,
            "explain": crate::content::inline_markdown(&state.figures.render(&state, &t.explain).await),
        }));
    }
    Ok(Json(json!({
        "number": l.number,
        "title": l.title,
        "difficulty": l.difficulty,
        "minutes": l.minutes,
        "goal": l.goal,
        "highlight": l.highlight,
        "text_html": crate::content::markdown(&text),
        "key_points": key_points,
        "try": tries,
    })))
}

/// What the `api_body` fuzz target checks (`fuzz/`), replayed by `cargo test` over its corpus
/// and crash inputs (`tests/fuzz_regressions.rs`): a request body from anyone becomes a plan
/// within the server's bounds or an error naming the field, never a panic. (The run itself is
/// left out: a fuzzer cannot wait for simulations.)
#[doc(hidden)]
pub mod fuzz {
    /// One `POST /api/run` body.
    pub fn run_body(data: &[u8]) {
        let Ok(req) = serde_json::from_slice::<super::RunRequest>(data) else {
            return;
        };
        if let Err(e) = super::plan_of(&req) {
            let _ = serde_json::to_string(&e);
        }
    }

    /// One `POST /api/lab/{id}` body, checked against every lab's parameters: a value or an
    /// error naming the field, never a panic.
    pub fn lab_body(data: &[u8]) {
        let Ok(body) = serde_json::from_slice::<serde_json::Value>(data) else {
            return;
        };
        for lab in rdmalab::labs::catalogue() {
            match rdmalab::labs::parse_params(lab.id, &body) {
                Ok(p) => assert_eq!(
                    rdmalab::labs::parse_params(
                        lab.id,
                        &serde_json::to_value(&p).expect("serialises")
                    ),
                    Ok(p),
                    "parsed parameters parse back to themselves"
                ),
                Err(e) => assert!(e.field.is_some(), "{e:?}"),
            }
        }
    }
}
