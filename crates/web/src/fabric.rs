//! `POST /api/fabric`: the fabric view of a simulation page's run (issue 19, item 3) — every
//! link of the plan's topology, TCP's run and RDMA's, sampled from the data path's start to
//! the run's end: utilisation, queue, PAUSE state, PAUSE frames, drops, ECN marks and a
//! sample of the frames ([`rdmalab::labs::fabric_view`]). It runs the same plan as `POST
//! /api/run` (same body, same bounds, same seed: the same run, so a view's counts are the
//! report's, which the answer carries beside each view), fetched by the page after the
//! table so the table stays fast.
//!
//! Bounded: the body as `/api/run`'s; a topology with a switch of at most
//! [`MAX_LINKS`] links (a `switch` of up to 64
//! hosts, a `leaf_spine` with hosts × (1 + spines) ≤ 64, a `fat_tree` with k ≤ 4), refused
//! by field otherwise; at most [`RUN_SAMPLES`](rdmalab::labs::fabric_view::RUN_SAMPLES)
//! samples and [`MAX_FRAMES`](rdmalab::labs::fabric_view::MAX_FRAMES) frames per view; the
//! run's simulated time, events and wall time as the plan's budget and the server's caps.

use crate::AppState;
use crate::api::{Prepared, RunRequest, accepts_gzip, plan_of, prepare, rejection, simulate_with};
use crate::error::ApiError;
use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderMap, StatusCode};
use rdmalab::labs::fabric_view::{FabricView, MAX_LINKS};
use rdmalab::report::{PathReport, RunOptions, run_plan_fabric};
use scenario::{Plan, TopologyKind};
use serde::Serialize;

/// What `POST /api/fabric` takes: `POST /api/run`'s body.
const FABRIC_BODY: &str = "{preset? | scenario?, set?: [\"key=value\"], profile?}";

/// Largest fat tree the view draws: k = 4 has 48 links; k = 6 has 162.
pub const MAX_FAT_TREE_K: u64 = 4;

/// One path's view and the report's counts it adds up to.
#[derive(Serialize)]
struct PathFabric<'a> {
    view: &'a FabricView,
    /// The report's `pfc_pauses` for this path.
    pfc_pauses: u64,
    /// The report's `drops` (the path's own frames).
    drops: u64,
    /// The report's `ecn_marks`.
    ecn_marks: u64,
}

#[derive(Serialize)]
struct FabricAnswer<'a> {
    preset: Option<&'static str>,
    mode: &'static str,
    seed: u64,
    max_links: usize,
    tcp: Option<PathFabric<'a>>,
    rdma: Option<PathFabric<'a>>,
}

/// Refuses a topology the view does not draw: none without a switch, none over
/// [`MAX_LINKS`] links, naming the field that makes it so and its limit.
pub fn check_topology(plan: &Plan) -> Result<(), ApiError> {
    let t = &plan.topology;
    let bad = |field: &str, got: String, allowed: String| {
        Err(ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            field,
            got,
            allowed,
        ))
    };
    let max = MAX_LINKS as u64;
    match t.kind {
        TopologyKind::BackToBack => bad(
            "topology.kind",
            "topology.kind = \"back_to_back\" has no switch: the fabric view draws a run's switches and links".into(),
            "switch, leaf_spine or fat_tree".into(),
        ),
        TopologyKind::Switch if t.hosts > max => bad(
            "topology.hosts",
            format!("topology.hosts = {}: a switch of {} links, more than the fabric view draws", t.hosts, t.hosts),
            format!("at most {max} (one link per host; the fabric view draws at most {max} links)"),
        ),
        TopologyKind::LeafSpine if t.hosts.saturating_mul(1 + t.spines) > max => {
            let links = t.hosts.saturating_mul(1 + t.spines);
            let hosts_max = max / (1 + t.spines);
            if hosts_max < 2 {
                bad(
                    "topology.spines",
                    format!("topology.spines = {}: {links} links, more than the fabric view draws", t.spines),
                    format!("at most {} with 2 hosts (a leaf_spine has hosts × (1 + spines) links; the fabric view draws at most {max})", max / 2 - 1),
                )
            } else {
                bad(
                    "topology.hosts",
                    format!("topology.hosts = {} with topology.spines = {}: {links} links, more than the fabric view draws", t.hosts, t.spines),
                    format!("at most {hosts_max} with topology.spines = {} (a leaf_spine has hosts × (1 + spines) links; the fabric view draws at most {max})", t.spines),
                )
            }
        }
        TopologyKind::FatTree if t.k > MAX_FAT_TREE_K => bad(
            "topology.k",
            format!("topology.k = {}: a fat tree of {} links, more than the fabric view draws", t.k, 3 * t.k * t.k * t.k / 4),
            format!("at most {MAX_FAT_TREE_K} (k = 4 has 48 links; the fabric view draws at most {max})"),
        ),
        _ => Ok(()),
    }
}

/// `POST /api/fabric`: body as `POST /api/run`; answers `{preset, mode, seed, max_links,
/// tcp, rdma}`, each path's `{view, pfc_pauses, drops, ecn_marks}` or null when the plan
/// leaves the path out.
pub async fn fabric(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Json<RunRequest>, JsonRejection>,
) -> Result<Prepared, ApiError> {
    let Json(req) = body.map_err(|r| rejection(r, FABRIC_BODY))?;
    let (name, plan) = plan_of(&req)?;
    check_topology(&plan)?;
    let gzip = accepts_gzip(&headers);
    let seed = plan.seed;
    simulate_with(&state, plan, move |p| {
        run_plan_fabric(p, &RunOptions::default()).map(|(report, views)| {
            let of = |r: &Option<PathReport>, path: &str| {
                let r = r.as_ref()?;
                let (_, view) = views.iter().find(|(n, _)| *n == path)?;
                Some(PathFabric {
                    view,
                    pfc_pauses: r.pfc_pauses,
                    drops: r.drops,
                    ecn_marks: r.ecn_marks,
                })
            };
            prepare(
                &FabricAnswer {
                    preset: name,
                    mode: report.scenario.mode,
                    seed,
                    max_links: MAX_LINKS,
                    tcp: of(&report.tcp, "tcp"),
                    rdma: of(&report.rdma, "rdma"),
                },
                gzip,
            )
        })
    })
    .await?
}
