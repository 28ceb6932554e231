//! The simulation page speaks one language: every string the report uses as an id that the
//! page shows has its Chinese in `assets/terms.js`, and every scenario key has a label and an
//! explanation in both languages in `assets/simparams.js`. Nothing falls back silently.

use serde_json::Value;
use std::collections::BTreeSet;

const TERMS_JS: &str = include_str!("../assets/terms.js");
const SIMPARAMS_JS: &str = include_str!("../assets/simparams.js");

/// The keys of terms.js's `ZH` table.
fn terms() -> BTreeSet<String> {
    let body = &TERMS_JS[TERMS_JS.find("const ZH = {").expect("terms.js has ZH")..];
    let body = &body[..body.find("\n};").expect("ZH ends")];
    body.lines()
        .filter_map(|l| {
            let l = l.trim_start().strip_prefix('\'')?;
            let (k, rest) = l.split_once("': '")?;
            rest.trim_end().ends_with("',").then(|| k.to_string())
        })
        .collect()
}

/// Every id string of `r` that the page shows, with where it was found.
fn shown_ids(r: &Value, out: &mut BTreeSet<(String, String)>) {
    let mut add = |what: &str, v: &Value| {
        if let Some(s) = v.as_str() {
            out.insert((s.to_string(), what.to_string()));
        }
    };
    for path in ["tcp", "rdma"] {
        let p = &r[path];
        if p.is_null() {
            continue;
        }
        add("operation", &p["operation"]);
        add("transport_in", &p["transport_in"]);
        for costs in ["data_path", "setup"] {
            for side in ["cpu_stages_local", "cpu_stages_remote"] {
                for s in p[costs][side].as_array().into_iter().flatten() {
                    add(&format!("{costs}.{side}[].name"), &s["name"]);
                }
            }
        }
        for drawn in ["latency", "failed_attempt"] {
            let d = &p[drawn];
            for iv in d["timeline"].as_array().into_iter().flatten() {
                add("timeline[].stage", &iv["stage"]);
                add("timeline[].lane", &iv["lane"]);
                add("timeline[].side", &iv["side"]);
            }
            for f in d["frames"].as_array().into_iter().flatten() {
                add("frames[].kind", &f["kind"]);
            }
            add("latency.delivered_at", &d["delivered_at"]);
            add("latency.local_completion_at", &d["local_completion_at"]);
        }
        add("throughput.model.model", &p["throughput"]["model"]["model"]);
    }
}

#[test]
fn every_report_string_the_sim_page_shows_has_its_chinese_in_terms_js() {
    let known = terms();
    assert!(known.len() > 40, "terms.js: {} terms", known.len());
    const VARIANTS: [&[&str]; 3] = [
        &[],
        &["rdma.operation=\"read\""],
        &["rdma.operation=\"send\""],
    ];
    let mut found = BTreeSet::new();
    let mut runs = 0;
    let reports: Vec<Value> = std::thread::scope(|sc| {
        let mut cases = Vec::new();
        for p in scenario::presets() {
            for nic in scenario::NicKind::NAMES {
                for v in VARIANTS {
                    cases.push((p, nic, v));
                }
            }
        }
        let handles: Vec<_> = cases
            .into_iter()
            .map(|(p, nic, v)| {
                sc.spawn(move || {
                    let profile = format!("nic.profile=\"{nic}\"");
                    let mut sets = vec![profile.as_str()];
                    sets.extend_from_slice(v);
                    // A variant the preset refuses (a stream of READs) is not a page.
                    let plan = scenario::parse_with(p.toml, &sets).ok()?;
                    let r = rdmalab::report::run_plan(&plan).ok()?;
                    Some(serde_json::to_value(r).unwrap())
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    for r in &reports {
        runs += 1;
        shown_ids(r, &mut found);
    }
    assert!(runs >= 40, "{runs} runs");
    let missing: Vec<String> = found
        .iter()
        .filter(|(s, _)| !known.contains(s))
        .map(|(s, w)| format!("{s:?} ({w})"))
        .collect();
    assert!(missing.is_empty(), "terms.js lacks: {}", missing.join(", "));
}

/// The `[label, explanation]` pair after `lang: [` in `block`, if both are non-empty.
fn pair<'a>(block: &'a str, lang: &str) -> Option<(&'a str, &'a str)> {
    let rest = &block[block.find(&format!("{lang}: ['"))? + lang.len() + 4..];
    let (label, rest) = rest.split_once("', '")?;
    let (text, _) = rest.split_once("']")?;
    (!label.trim().is_empty() && !text.trim().is_empty()).then_some((label, text))
}

#[test]
fn every_schema_key_has_a_label_and_an_explanation_in_both_languages() {
    let groups: Vec<&str> = SIMPARAMS_JS
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("['")?.split('\'').next())
        .collect();
    for g in ["workload", "rdma", "fabric", "lossless", "host", "budget"] {
        assert!(groups.contains(&g), "simparams.js GROUPS lacks {g}");
    }
    let mut bad = Vec::new();
    for k in scenario::KEYS {
        let Some(at) = SIMPARAMS_JS.find(&format!("\n  '{}': {{ g: '", k.path)) else {
            bad.push(format!("{}: missing", k.path));
            continue;
        };
        let block = &SIMPARAMS_JS[at + 1..];
        let block = &block[..block.find("] },").map_or(block.len(), |e| e + 4)];
        let g = block
            .split("g: '")
            .nth(1)
            .and_then(|s| s.split('\'').next());
        if !g.is_some_and(|g| groups.contains(&g)) {
            bad.push(format!("{}: group {g:?}", k.path));
        }
        for lang in ["zh", "en"] {
            if pair(block, lang).is_none() {
                bad.push(format!("{}: no {lang} label and explanation", k.path));
            }
        }
        if let Some((label, _)) = pair(block, "zh") {
            assert!(
                label
                    .chars()
                    .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
                    || ["RDMA", "TSO", "GRO", "ECN", "DCQCN", "SACK"]
                        .iter()
                        .any(|w| label.contains(w)),
                "{}: the zh label {label:?} is not Chinese",
                k.path
            );
        }
    }
    // The lessons' knobs are keys.
    let lessons = &SIMPARAMS_JS[SIMPARAMS_JS.find("LESSON_KEYS").unwrap()..];
    let lessons = &lessons[..lessons.find("\n};").unwrap()];
    for key in lessons.split('\'').skip(1).step_by(2) {
        if !key.starts_with("lesson") {
            assert!(
                scenario::plan::spec(key).is_some(),
                "LESSON_KEYS: {key} is not a key"
            );
        }
    }
    assert!(bad.is_empty(), "simparams.js: {}", bad.join("; "));
}
