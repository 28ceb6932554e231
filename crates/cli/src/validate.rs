//! `rdmalab validate [--only PREFIX] [--json] [--allow-known-gaps]`: the simulator's figures
//! against the published figures of research/figures.md it can reproduce
//! ([`rdmalab::validate`]), with each figure's source, the tolerance and why.
//!
//! Exit codes: 0 every check within tolerance; 1 a check out of tolerance (with
//! `--allow-known-gaps`: one that carries no known gap) or one that could not run; 2 bad
//! input (an `--only` that matches no check).

use std::fmt::Write as _;
use std::process::ExitCode;

use comfy_table::Table;
use rdmalab::validate::{self, Outcome, Published, Suite, Verdict, excluded::Reason};

/// `rdmalab validate ...`.
#[derive(clap::Args)]
#[command(
    after_help = "Every check names its research/figures.md section and source, and says why its figure is \
independent of the model's constants (a figure that set a constant cannot validate it). The output \
ends with the figures not checked and why: those that set a constant, and those the model cannot \
reproduce.\n\nExamples:\n  rdmalab validate\n  rdmalab validate --only pfc.\n  rdmalab validate --json > validate.json\n  rdmalab validate --allow-known-gaps     # as CI runs it"
)]
pub struct ValidateArgs {
    /// Run only the checks whose id starts with this (`pfc.`, `tcp.mathis_newreno`).
    #[arg(long, value_name = "PREFIX", default_value = "")]
    only: String,
    /// Print the result as one JSON document (every check, its figures and the exclusions).
    #[arg(long)]
    json: bool,
    /// Exit 0 when the only checks out of tolerance carry a known gap (they are still
    /// reported as out of tolerance).
    #[arg(long)]
    allow_known_gaps: bool,
}

/// `rdmalab validate`.
pub fn validate(a: ValidateArgs) -> anyhow::Result<ExitCode> {
    if !validate::checks::CHECKS
        .iter()
        .any(|c| c.id.starts_with(&a.only))
    {
        let ids: Vec<&str> = validate::checks::CHECKS.iter().map(|c| c.id).collect();
        return crate::bad_input::bad(
            "validate",
            format!(
                "--only {:?} matches no check (the checks: {})",
                a.only,
                ids.join(", ")
            ),
        );
    }
    let suite = validate::run(&a.only);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&suite)?)?;
    } else {
        out!("{}", show(&suite))?;
    }
    Ok(if suite.failed(a.allow_known_gaps) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn num(v: f64, digits: usize) -> String {
    format!("{v:.digits$}")
}

fn published(o: &Outcome) -> String {
    let unit = if o.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", o.unit)
    };
    match o.published {
        Published::Value { value } => format!("{}{unit}", num(value, o.digits)),
        Published::Range { lo, hi } => {
            format!("{}–{}{unit}", num(lo, o.digits), num(hi, o.digits))
        }
        Published::Formula { formula } => match o.reference {
            Some((r, _)) => format!("{}{unit} by {formula}", num(r, o.digits)),
            None => formula.to_string(),
        },
    }
}

fn tolerance(o: &Outcome) -> String {
    let mut parts = Vec::new();
    if o.tolerance.relative > 0.0 {
        parts.push(format!("±{}%", o.tolerance.relative * 100.0));
    }
    if o.tolerance.absolute > 0.0 {
        parts.push(format!("±{} {}", o.tolerance.absolute, o.unit));
    }
    if o.statistical > 0.0 {
        parts.push(format!("±{:.1}% (run)", o.statistical * 100.0));
    }
    if parts.is_empty() {
        "the range".to_string()
    } else {
        parts.join(" ")
    }
}

fn verdict(o: &Outcome) -> &'static str {
    match (o.verdict, o.known_gap.is_some()) {
        (Verdict::Pass, _) => "within",
        (Verdict::Out, false) => "OUT",
        (Verdict::Out, true) => "OUT (known gap)",
        (Verdict::Error, _) => "ERROR",
    }
}

fn show(s: &Suite) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "rdmalab validate: simulated figures against {} (simulated, not measured)\n",
        s.figures
    );
    let mut t = Table::new();
    t.set_header([
        "check",
        "figures.md",
        "published",
        "simulated",
        "tolerance",
        "result",
    ]);
    for o in &s.checks {
        let sim = o.simulated.map_or("–".to_string(), |v| {
            let unit = if o.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", o.unit)
            };
            format!("{}{unit}", num(v, o.digits))
        });
        t.add_row([
            o.id.to_string(),
            o.section.to_string(),
            published(o),
            sim,
            tolerance(o),
            verdict(o).to_string(),
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    for o in &s.checks {
        let _ = writeln!(out, "{} — {}", o.id, o.quantity);
        let _ = writeln!(out, "  conditions:   {}", o.conditions);
        let _ = writeln!(out, "  source:       {}", o.source);
        let _ = writeln!(out, "  independent:  {}", o.independence);
        let _ = writeln!(out, "  tolerance:    {}", o.tolerance.why);
        if let Some((lo, hi)) = o.accepted {
            let _ = writeln!(
                out,
                "  accepted:     {} to {}{}",
                num(lo, o.digits + 1),
                num(hi, o.digits + 1),
                if o.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", o.unit)
                }
            );
        }
        let label = if o.verdict == Verdict::Error {
            "could not run"
        } else {
            "run"
        };
        let _ = writeln!(out, "  {label}:{:w$}{}", "", o.detail, w = 13 - label.len());
        if let Some(g) = o.known_gap {
            let _ = writeln!(out, "  known gap:    {g}");
        }
        let _ = writeln!(out);
    }
    for (reason, title) in [
        (
            Reason::SetsConstant,
            "Not checked: these figures set constants of the model, so they cannot also validate it",
        ),
        (
            Reason::NotReproducible,
            "Not checked: the model cannot reproduce these figures",
        ),
    ] {
        let _ = writeln!(out, "{title}:");
        for e in s.excluded.iter().filter(|e| e.reason == reason) {
            let _ = writeln!(out, "  {} {}: {}", e.section, e.figure, e.why);
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "{} checks: {} within tolerance, {} out of tolerance ({} with a known gap), {} could not run",
        s.checks.len(),
        s.passed,
        s.out,
        s.out_known,
        s.errors
    );
    out
}
