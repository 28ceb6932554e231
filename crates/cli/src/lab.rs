//! `rdmalab lab ID [--set NAME=VALUE]... [--json]`: run one of the web lab's fabric labs
//! (incast, hol, storm, deadlock, loss, qps, trouble, nvmf, allreduce) from the terminal.
//!
//! Exit codes: 0 the lab ran; 1 the simulation failed; 2 bad input (an unknown lab or
//! parameter, a value out of range: the message names it and what is allowed).

use std::fmt::Write as _;
use std::process::ExitCode;

use comfy_table::Table;
use rdmalab::labs::{self, LabResult, ParamKind};

/// `rdmalab lab ...`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rdmalab lab list\n  rdmalab lab deadlock\n  rdmalab lab deadlock --set fix=watchdog\n  rdmalab lab incast --set senders=8 --set dcqcn=off --json"
)]
pub struct LabArgs {
    /// The lab (`list` to see every lab and its parameters).
    lab: String,
    /// A parameter, `NAME=VALUE` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// Print the result as one JSON document (the web lab's `POST /api/lab/ID` answer).
    #[arg(long)]
    json: bool,
}

fn bad(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    crate::bad_input::bad("lab", msg)
}

pub fn lab(a: LabArgs) -> anyhow::Result<ExitCode> {
    if a.lab == "list" {
        out!("{}", list())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut body = serde_json::Map::new();
    for s in &a.sets {
        let Some((k, v)) = s.split_once('=') else {
            return bad(format!("--set {s:?}: expected NAME=VALUE"));
        };
        body.insert(
            k.trim().to_string(),
            serde_json::Value::String(v.trim().to_string()),
        );
    }
    let params = match labs::parse_params(&a.lab, &serde_json::Value::Object(body)) {
        Ok(p) => p,
        Err(e) => {
            let allowed = e
                .allowed
                .map(|x| format!(" (allowed: {x})"))
                .unwrap_or_default();
            return bad(format!("{}{allowed}", e.message));
        }
    };
    let r = match labs::run(&a.lab, &params) {
        Ok(r) => r,
        Err(e) => {
            errln!("rdmalab lab {}: {e}", a.lab);
            return Ok(ExitCode::from(1));
        }
    };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r)?)?;
    } else {
        out!("{}", show(&r))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn list() -> String {
    let mut out = String::new();
    for l in labs::catalogue() {
        let _ = writeln!(out, "{}", l.id);
        for p in l.params {
            let what = match p.kind {
                ParamKind::Int { min, max, default } => {
                    format!("{min}..={max} {} (default {default})", p.unit)
                }
                ParamKind::Bool { default } => format!("true|false (default {default})"),
                ParamKind::Choice { choices, default } => {
                    format!("{} (default {default})", choices.join("|"))
                }
            };
            let _ = writeln!(out, "  --set {}=  {what}", p.name);
        }
    }
    out
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The result as tables: figures, verdict, counters, then each chart's series summarised.
fn show(r: &LabResult) -> String {
    let mut out = String::new();
    let params: Vec<String> = serde_json::to_value(&r.params)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
        .unwrap_or_default();
    let _ = writeln!(out, "lab {}: {}", r.lab, params.join(" "));
    if let Some(pfc) = &r.pfc {
        let _ = writeln!(out, "{}", pfc.line());
    }
    let mut t = Table::new();
    t.set_header(vec!["figure", "value", "unit"]);
    for f in &r.figures {
        t.add_row(vec![
            f.id.to_string(),
            f.value.map_or("–".to_string(), num),
            f.unit.to_string(),
        ]);
    }
    // Every key the verdict's JSON has, in its order: the table shows what `--json` gives.
    let verdict = serde_json::to_value(&r.verdict).unwrap_or_default();
    for (k, v) in verdict.as_object().into_iter().flatten() {
        let shown = match v.as_f64() {
            Some(x) if !v.is_boolean() => num(x),
            _ => v.to_string(),
        };
        t.add_row(vec![k.to_string(), shown, String::new()]);
    }
    let _ = writeln!(out, "{t}");
    if !r.counters.is_empty() {
        let mut t = Table::new();
        t.set_header(vec!["host", "counter", "value"]);
        for c in &r.counters {
            t.add_row(vec![c.host.clone(), c.name.clone(), c.value.to_string()]);
        }
        let _ = writeln!(out, "{t}");
    }
    for c in &r.charts {
        let mut t = Table::new();
        t.set_header(vec![
            format!("{} ({})", c.id, c.kind),
            "points".to_string(),
            format!("min {}", c.y_unit),
            format!("max {}", c.y_unit),
            format!("last {}", c.y_unit),
        ]);
        for s in &c.series {
            let ys = s.points.iter().map(|p| p[1]);
            let min = ys.clone().fold(f64::INFINITY, f64::min);
            let max = ys.clone().fold(f64::NEG_INFINITY, f64::max);
            let last = s.points.last().map_or(f64::NAN, |p| p[1]);
            t.add_row(vec![
                s.name.clone(),
                s.points.len().to_string(),
                num(min),
                num(max),
                num(last),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    match r.events {
        Some(n) => {
            let _ = writeln!(out, "{n} events, {:.1} ms", r.wall_ms);
        }
        None => {
            let _ = writeln!(out, "{:.1} ms", r.wall_ms);
        }
    }
    out
}
