//! `POST /api/packets`: the packet view of a run (issue 19, item 2) — for each path, the
//! frames around its first drop with their fates, the PFC frames, the switch queue and the
//! story of that drop ([`rdmalab::report::packets`]). It runs the same plan as `POST
//! /api/run` (same body, same bounds, same seed: the same run, so the view's frames are the
//! report's), and answers only the views: at most
//! [`MAX_FRAMES`](rdmalab::report::packets::MAX_FRAMES) frames,
//! [`MAX_PAUSES`](rdmalab::report::packets::MAX_PAUSES) PFC frames and
//! [`MAX_QUEUE_SAMPLES`](rdmalab::report::packets::MAX_QUEUE_SAMPLES) queue samples per path.

use crate::AppState;
use crate::api::{Prepared, RunRequest, accepts_gzip, plan_of, prepare, rejection, simulate_with};
use crate::error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::HeaderMap;
use rdmalab::report::{RunOptions, packets::View, run_plan_packets};
use serde::Serialize;

/// What `POST /api/packets` takes: `POST /api/run`'s body.
const PACKETS_BODY: &str = "{preset? | scenario?, set?: [\"key=value\"], profile?}";

#[derive(Serialize)]
struct PacketsAnswer<'a> {
    preset: Option<&'static str>,
    mode: &'static str,
    tcp: Option<&'a View>,
    rdma: Option<&'a View>,
}

/// `POST /api/packets`: body as `POST /api/run`; answers `{preset, mode, tcp, rdma}`, each
/// path's view or null when the plan leaves the path out.
pub async fn packets(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<RunRequest>, JsonRejection>,
) -> Result<Prepared, ApiError> {
    let Json(req) = body.map_err(|r| rejection(r, PACKETS_BODY))?;
    let (name, plan) = plan_of(&req)?;
    let gzip = accepts_gzip(&headers);
    simulate_with(&state, plan, move |p| {
        run_plan_packets(p, &RunOptions::default()).map(|(report, views)| {
            let find = |path: &str| views.iter().find(|v| v.path == path);
            prepare(
                &PacketsAnswer {
                    preset: name,
                    mode: report.scenario.mode,
                    tcp: report.tcp.as_ref().and(find("tcp")),
                    rdma: report.rdma.as_ref().and(find("rdma")),
                },
                gzip,
            )
        })
    })
    .await?
}
