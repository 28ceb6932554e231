//! The runs behind a chapter's placeholders — presets, verbs sessions, labs — each run once per
//! distinct source and kept, on the course figures' own permit (never in the users' queue).

use crate::AppState;
use crate::content::Figure;
use crate::placeholder::Source;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most events a verbs session behind a chapter may take (the playground's own bound).
const MAX_SESSION_EVENTS: u64 = crate::api::MAX_VERBS_EVENTS;

/// Reports of the chapters' runs, by [`Source::key`].
#[derive(Debug, Default)]
pub struct Runs {
    cache: Mutex<HashMap<String, Arc<Result<Value, String>>>>,
}

/// A session or a lab, on the calling (blocking) thread.
fn run_blocking(src: &Source) -> Result<Value, String> {
    match src {
        Source::Session { name, profile } => {
            let text =
                crate::examples::get(name).ok_or_else(|| format!("no verbs session {name:?}"))?;
            let session = rdmalab::session::parse(&text).map_err(|e| e.to_string())?;
            let profile = profile.as_deref().map(|p| {
                rdmalab::verbs::NicProfile::ALL
                    .into_iter()
                    .find(|x| x.name() == p)
                    .expect("checked when the placeholder was parsed")
            });
            let report = rdmalab::session::run(
                &session,
                rdmalab::session::RunOptions {
                    profile,
                    pcap: None,
                    max_events: Some(MAX_SESSION_EVENTS),
                },
            )
            .map_err(|e| e.to_string())?;
            serde_json::to_value(report).map_err(|e| e.to_string())
        }
        Source::Lab { id, params } => {
            let body = Value::Object(
                params
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            );
            let p = rdmalab::labs::parse_params(id, &body).map_err(|e| e.message)?;
            let mut r = rdmalab::labs::run(id, &p).map_err(|e| e.to_string())?;
            // The one field that differs between runs; a page must not depend on it.
            r.wall_ms = 0.0;
            serde_json::to_value(r).map_err(|e| e.to_string())
        }
        Source::Preset { .. } => unreachable!("presets run through Figures"),
    }
}

impl Runs {
    /// The JSON document of `src`'s run, running it if nobody has yet.
    pub async fn get(&self, state: &AppState, src: &Source) -> Arc<Result<Value, String>> {
        if let Source::Preset { preset, sets } = src {
            let f = Figure {
                run: std::iter::once(preset.clone())
                    .chain(sets.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(";"),
                preset: preset.clone(),
                sets: sets.clone(),
                path: String::new(),
                format: crate::placeholder::Format::Text,
            };
            return state.figures.report(state, &f).await;
        }
        let key = src.key();
        if let Some(r) = self.cache.lock().expect("no panic holds it").get(&key) {
            return r.clone();
        }
        let Ok(permit) = state.figure_runs.clone().acquire_owned().await else {
            return Arc::new(Err("the server is stopping".to_string()));
        };
        if let Some(r) = self.cache.lock().expect("no panic holds it").get(&key) {
            return r.clone();
        }
        let owned = src.clone();
        let r = match tokio::task::spawn_blocking(move || {
            let _permit = permit;
            run_blocking(&owned)
        })
        .await
        {
            Ok(r) => r,
            Err(e) => Err(format!("the run stopped on an internal error: {e}")),
        };
        let r = Arc::new(r);
        self.cache
            .lock()
            .expect("no panic holds it")
            .insert(key, r.clone());
        r
    }
}
