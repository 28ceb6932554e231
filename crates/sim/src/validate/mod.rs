//! `rdmalab validate`: the simulator's figures against the published ones it can reproduce.
//!
//! research/figures.md lists the building blocks the model is made of. Some of them set the
//! model's constants (the `// source:` comments in crates/host, crates/sim, crates/fabric and
//! crates/transport name them); a figure used to set a constant cannot also validate it, so
//! those are listed in [`excluded::EXCLUDED`] with the constant they set. The rest — figures
//! that are results of the model's arithmetic or of a run, never typed in — are
//! [`checks::CHECKS`]: each one names its figures.md section, its source, the conditions it
//! runs under, the tolerance and why that tolerance, and runs the simulator to get its figure.
//!
//! A check is one row of a table, so adding one for a new feature is adding a row: a
//! function that runs the model and returns a [`Simulated`], and the published figure it is
//! compared with. A check whose figure the model is known to miss today carries a
//! [`Check::known_gap`] naming the work that will fix it: it is still reported out of
//! tolerance, and `rdmalab validate` still exits 1 for it unless told `--allow-known-gaps`.

pub mod checks;
pub mod excluded;

use serde::Serialize;

/// The published figure a check compares with.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Published {
    /// One value.
    Value {
        /// The value, in the check's unit.
        value: f64,
    },
    /// A published range (two machines, a spread of measurements, a family of formulas).
    Range {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// A formula evaluated at the run's own conditions (its loss rate, its window): the
    /// value comes from [`Simulated::reference`].
    Formula {
        /// The formula as figures.md writes it.
        formula: &'static str,
    },
}

/// How far from the published figure a simulated one may be.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tolerance {
    /// Allowed distance as a share of the published value (0.01 = ±1%).
    pub relative: f64,
    /// Allowed distance in the check's unit.
    pub absolute: f64,
    /// Why this tolerance: the figure's rounding, its conditions, the run's statistics.
    pub why: &'static str,
}

/// What one run of the model gave.
#[derive(Clone, Debug, Serialize)]
pub struct Simulated {
    /// The simulated figure, in the check's unit.
    pub value: f64,
    /// For [`Published::Formula`]: the formula's value at the run's conditions.
    pub reference: Option<f64>,
    /// The run's own 95% statistical uncertainty, as a share of the reference, added to the
    /// check's tolerance (0 for a deterministic quantity with no sampling).
    pub statistical: f64,
    /// The run's inputs to the comparison (loss rate, window, RTT, ...), in words.
    pub detail: String,
}

/// One check: a figure of research/figures.md and how to reproduce it.
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// A short stable name (`pfc.pause_max_100g`).
    pub id: &'static str,
    /// The figures.md section and row it checks (`§6.3 PFC, "pause quantum"`).
    pub section: &'static str,
    /// What is compared.
    pub quantity: &'static str,
    /// The conditions of the published figure, and how the simulation is set up to match.
    pub conditions: &'static str,
    /// The published figure.
    pub published: Published,
    /// The unit of `published` and of the simulated value.
    pub unit: &'static str,
    /// Decimal places to print.
    pub digits: usize,
    /// The figure's source, as figures.md cites it.
    pub source: &'static str,
    /// Why this figure is independent of the model's constants.
    pub independence: &'static str,
    /// How far off the simulation may be.
    pub tolerance: Tolerance,
    /// Set when the model is known to miss this figure today: the work that fixes it.
    pub known_gap: Option<&'static str>,
    /// Runs the model; an error says why the check could not run.
    pub simulate: fn() -> Result<Simulated, String>,
}

/// How a check came out.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within tolerance.
    Pass,
    /// Out of tolerance.
    Out,
    /// The model could not be run under the figure's conditions (the reason is given).
    Error,
}

/// One check's result.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// [`Check::id`].
    pub id: &'static str,
    /// [`Check::section`].
    pub section: &'static str,
    /// [`Check::quantity`].
    pub quantity: &'static str,
    /// [`Check::conditions`].
    pub conditions: &'static str,
    /// [`Check::unit`].
    pub unit: &'static str,
    /// [`Check::digits`].
    #[serde(skip)]
    pub digits: usize,
    /// [`Check::published`].
    pub published: Published,
    /// The published figure the simulation was held to (a formula's value at the run's
    /// conditions), as (low, high); equal ends for one value.
    pub reference: Option<(f64, f64)>,
    /// The accepted band, (low, high), tolerance and statistics included.
    pub accepted: Option<(f64, f64)>,
    /// The simulated figure.
    pub simulated: Option<f64>,
    /// Simulated ÷ the nearest end of the reference (1 inside a range).
    pub ratio: Option<f64>,
    /// [`Check::tolerance`].
    pub tolerance: Tolerance,
    /// The run's statistical uncertainty added to the tolerance (share of the reference).
    pub statistical: f64,
    /// [`Check::source`].
    pub source: &'static str,
    /// [`Check::independence`].
    pub independence: &'static str,
    /// [`Check::known_gap`].
    pub known_gap: Option<&'static str>,
    /// The run's inputs, or why it could not run.
    pub detail: String,
    /// The verdict.
    pub verdict: Verdict,
}

impl Check {
    /// Runs the check.
    pub fn run(&self) -> Outcome {
        let mut o = Outcome {
            id: self.id,
            section: self.section,
            quantity: self.quantity,
            conditions: self.conditions,
            unit: self.unit,
            digits: self.digits,
            published: self.published,
            reference: None,
            accepted: None,
            simulated: None,
            ratio: None,
            tolerance: self.tolerance,
            statistical: 0.0,
            source: self.source,
            independence: self.independence,
            known_gap: self.known_gap,
            detail: String::new(),
            verdict: Verdict::Error,
        };
        let sim = match (self.simulate)() {
            Ok(s) => s,
            Err(e) => {
                o.detail = e;
                return o;
            }
        };
        let (lo, hi) = match (self.published, sim.reference) {
            (Published::Value { value }, _) => (value, value),
            (Published::Range { lo, hi }, _) => (lo, hi),
            (Published::Formula { .. }, Some(r)) => (r, r),
            (Published::Formula { .. }, None) => {
                o.detail = format!("{}; the run gave no value for the formula", sim.detail);
                return o;
            }
        };
        let rel = self.tolerance.relative + sim.statistical;
        let band = (
            lo - lo.abs() * rel - self.tolerance.absolute,
            hi + hi.abs() * rel + self.tolerance.absolute,
        );
        let v = sim.value;
        o.reference = Some((lo, hi));
        o.accepted = Some(band);
        o.simulated = Some(v);
        o.statistical = sim.statistical;
        o.ratio = Some(if v < lo {
            v / lo
        } else if v > hi {
            v / hi
        } else {
            1.0
        });
        o.detail = sim.detail;
        // NaN (a run that measured nothing) is out of every band.
        o.verdict = if v >= band.0 && v <= band.1 {
            Verdict::Pass
        } else {
            Verdict::Out
        };
        o
    }
}

/// The whole suite's result.
#[derive(Clone, Debug, Serialize)]
pub struct Suite {
    /// `"rdmalab.validate/1"`.
    pub schema: &'static str,
    /// Where the published figures come from.
    pub figures: &'static str,
    /// Every check's outcome, in table order.
    pub checks: Vec<Outcome>,
    /// Figures of figures.md that set a constant of the model, or that the model cannot
    /// reproduce, with why.
    pub excluded: &'static [excluded::Excluded],
    /// Checks within tolerance.
    pub passed: usize,
    /// Checks out of tolerance.
    pub out: usize,
    /// Of those, the ones with a known gap.
    pub out_known: usize,
    /// Checks that could not run.
    pub errors: usize,
}

impl Suite {
    /// Whether the suite failed: a check out of tolerance (with `allow_known_gaps`, one
    /// without a known gap) or one that could not run.
    pub fn failed(&self, allow_known_gaps: bool) -> bool {
        let out = if allow_known_gaps {
            self.out - self.out_known
        } else {
            self.out
        };
        out > 0 || self.errors > 0
    }
}

/// Runs every check whose id starts with `filter` (all of them for `""`).
pub fn run(filter: &str) -> Suite {
    let checks: Vec<Outcome> = checks::CHECKS
        .iter()
        .filter(|c| c.id.starts_with(filter))
        .map(Check::run)
        .collect();
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    Suite {
        schema: "rdmalab.validate/1",
        figures: "research/figures.md",
        passed: count(Verdict::Pass),
        out: count(Verdict::Out),
        out_known: checks
            .iter()
            .filter(|c| c.verdict == Verdict::Out && c.known_gap.is_some())
            .count(),
        errors: count(Verdict::Error),
        checks,
        excluded: excluded::EXCLUDED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(v: f64) -> Result<Simulated, String> {
        Ok(Simulated {
            value: v,
            reference: None,
            statistical: 0.0,
            detail: String::new(),
        })
    }

    fn check(published: Published, simulate: fn() -> Result<Simulated, String>) -> Check {
        Check {
            id: "t",
            section: "",
            quantity: "",
            conditions: "",
            published,
            unit: "",
            digits: 0,
            source: "",
            independence: "",
            tolerance: Tolerance {
                relative: 0.1,
                absolute: 0.0,
                why: "",
            },
            known_gap: None,
            simulate,
        }
    }

    #[test]
    fn a_value_passes_inside_its_tolerance_and_fails_outside() {
        let inside = check(Published::Value { value: 100.0 }, || fixed(109.0)).run();
        assert_eq!(inside.verdict, Verdict::Pass);
        let outside = check(Published::Value { value: 100.0 }, || fixed(111.0)).run();
        assert_eq!(outside.verdict, Verdict::Out);
        assert!((outside.ratio.unwrap() - 1.11).abs() < 1e-9);
    }

    #[test]
    fn a_range_widens_at_both_ends_and_nan_is_out() {
        let r = Published::Range { lo: 10.0, hi: 30.0 };
        assert_eq!(check(r, || fixed(9.5)).run().verdict, Verdict::Pass);
        assert_eq!(check(r, || fixed(33.5)).run().verdict, Verdict::Out);
        assert_eq!(check(r, || fixed(f64::NAN)).run().verdict, Verdict::Out);
    }

    #[test]
    fn a_formula_without_its_value_and_a_failed_run_are_errors() {
        let f = Published::Formula { formula: "x" };
        assert_eq!(check(f, || fixed(1.0)).run().verdict, Verdict::Error);
        let e = check(Published::Value { value: 1.0 }, || Err("refused".into())).run();
        assert_eq!(e.verdict, Verdict::Error);
        assert_eq!(e.detail, "refused");
    }

    #[test]
    fn every_check_names_its_section_source_and_tolerance() {
        let mut ids = std::collections::BTreeSet::new();
        for c in checks::CHECKS {
            assert!(ids.insert(c.id), "{} twice", c.id);
            assert!(c.section.starts_with('§'), "{}", c.id);
            assert!(
                !c.source.is_empty() && !c.independence.is_empty(),
                "{}",
                c.id
            );
            assert!(!c.tolerance.why.is_empty(), "{}", c.id);
            // A check that cannot fail is a defect: some tolerance, but not everything.
            assert!(c.tolerance.relative < 0.5, "{}", c.id);
        }
        for e in excluded::EXCLUDED {
            assert!(
                e.section.starts_with('§') && !e.why.is_empty(),
                "{}",
                e.figure
            );
        }
    }
}
