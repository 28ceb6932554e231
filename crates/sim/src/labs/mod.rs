//! The fabric labs of the web lab (issue 10): small experiments, each answering one question
//! about how RDMA behaves on a real network, run in well under a second.
//!
//! | lab | question |
//! |---|---|
//! | `incast` | N senders into one port: what do PFC, ECN and DCQCN do to the queue and the rates? |
//! | `hol` | Does a flow to an idle port suffer from PFC pauses caused by someone else's incast? |
//! | `storm` | A host stops draining and floods PAUSE: how far does it spread, and does the watchdog contain it? |
//! | `deadlock` | Can lossless traffic on a ring stop for ever, and what breaks the cycle? |
//! | `loss` | Go-back-N, selective repeat and TCP under random loss. |
//! | `qps` | One QP or many over a leaf-spine with ECMP. |
//! | `trouble` | Seven broken setups; find the cause from the counters an operator reads. |
//! | `nvmf` | NVMe-oF over RDMA or TCP: latency against IOPS as the queue deepens, CPU per IO. |
//! | `allreduce` | AI training's ring all-reduce on a leaf-spine: busbw against the ideal, ECMP collisions on the uplinks, what one more QP per connection buys. |
//!
//! Every lab is a function from validated [`Params`] to a [`LabResult`]: headline figures,
//! charts (series of points, computed by running the simulator), counters and a [`Verdict`]
//! (one struct per lab, declared in the lab's module, so its keys are fields). The
//! parameters are described by [`catalogue`] so a front end can build its form from them;
//! [`parse_params`] checks a JSON object against that description and names the field and
//! what is allowed when a value is wrong.

mod allreduce;
mod deadlock;
pub mod fabric_view;
mod hol;
mod incast;
mod loss;
mod nvmf;
mod qps;
mod storm;
mod streams;
mod trouble;

pub use allreduce::{AllreduceLimit, AllreduceVerdict};
pub use deadlock::DeadlockVerdict;
pub use hol::HolVerdict;
pub use incast::IncastVerdict;
pub use loss::{LossStalledAt, LossVerdict};
pub use nvmf::{NvmfLimit, NvmfLimitKind, NvmfVerdict, NvmfWinner};
pub use storm::StormVerdict;
pub use trouble::{Symptom, TroubleStatus, TroubleVerdict};

use fabric::PfcConfig;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

use crate::session::msg::{Msg, list, msg};

/// Every host link's rate in the fabric labs, Gb/s.
const LINK_GBPS: u64 = 100;
/// RoCE's 802.1p priority (the world's default, `world::ROCE_PRIORITY`).
const PRIO: usize = 3;

/// The PFC the fabric labs configure on RoCE's priority: XOFF at 256 KiB of one ingress
/// port's lossless bytes, XON two 4 KiB frames below it. A lab choice, not a switch's figure:
/// real switches set XOFF from their buffer (dynamic thresholds) and `research/figures.md`
/// has no single value; 256 KiB is above what DCQCN's ECN marking (Kmax 100 KB) lets a queue
/// reach, so PFC stays the backstop it is meant to be.
fn lab_pfc() -> PfcConfig {
    PfcConfig::new(1 << PRIO, 256 << 10, (256 << 10) - 8_400)
}

/// What kind of value a parameter takes.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
        /// Used when the request does not give it.
        default: i64,
    },
    /// `true` or `false`.
    Bool {
        /// Used when the request does not give it.
        default: bool,
    },
    /// One of a list of names.
    Choice {
        /// The allowed names.
        choices: Vec<&'static str>,
        /// Used when the request does not give it.
        default: &'static str,
    },
}

/// One parameter of a lab.
#[derive(Clone, Debug, Serialize)]
pub struct ParamSpec {
    /// Its name in requests and URLs.
    pub name: &'static str,
    /// Its type, range and default.
    #[serde(flatten)]
    pub kind: ParamKind,
    /// Its unit (`µs`, `Gb/s`), or empty.
    pub unit: &'static str,
}

/// A lab and its parameters.
#[derive(Clone, Debug, Serialize)]
pub struct LabSpec {
    /// The lab's id.
    pub id: &'static str,
    /// Its parameters, in form order.
    pub params: Vec<ParamSpec>,
}

const fn int(
    name: &'static str,
    min: i64,
    max: i64,
    default: i64,
    unit: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int { min, max, default },
        unit,
    }
}

const fn flag(name: &'static str, default: bool) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Bool { default },
        unit: "",
    }
}

fn choice(name: &'static str, choices: &[&'static str], default: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Choice {
            choices: choices.to_vec(),
            default,
        },
        unit: "",
    }
}

/// Every lab, in the order the lab index lists them.
pub fn catalogue() -> Vec<LabSpec> {
    vec![
        LabSpec {
            id: "incast",
            params: vec![
                int("senders", 2, 16, 4, "hosts"),
                choice("link_gbps", &["25", "100"], "100"),
                flag("pfc", true),
                flag("ecn", true),
                choice("dcqcn", &["off", "nvidia", "paper"], "nvidia"),
                flag("ecn_on_dequeue", true),
                int("duration_us", 200, 20_000, 5_000, "µs"),
            ],
        },
        LabSpec {
            id: "hol",
            params: vec![
                int("senders", 2, 8, 4, "hosts"),
                flag("pfc", true),
                int("duration_us", 200, 5_000, 1_000, "µs"),
            ],
        },
        LabSpec {
            id: "storm",
            params: vec![
                flag("watchdog", true),
                int("stall_at_us", 50, 1_000, 200, "µs"),
                int("detect_us", 20, 1_000, 100, "µs"),
                int("duration_us", 200, 5_000, 1_500, "µs"),
            ],
        },
        LabSpec {
            id: "deadlock",
            params: vec![
                int("switches", 5, 8, 5, "switches"),
                choice("fix", &["none", "watchdog"], "none"),
                // At least twice `deadlock::STALL`, so a deadlock has time to show.
                int("duration_us", 500, 5_000, 4_000, "µs"),
            ],
        },
        LabSpec {
            id: "loss",
            params: vec![
                choice("max_loss_pct", &["0.5", "1", "2", "5"], "2"),
                flag("adaptive", false),
            ],
        },
        LabSpec {
            id: "qps",
            params: vec![
                int("qps", 2, 16, 8, "QPs"),
                int("spines", 2, 8, 4, "switches"),
                choice("spine_gbps", &["25", "100"], "25"),
                choice("hash", &["crc16", "mixed"], "crc16"),
            ],
        },
        LabSpec {
            id: "trouble",
            params: vec![choice(
                "case",
                &[
                    "rnr",
                    "peer_gone",
                    "pfc_priority",
                    "mtu",
                    "cnp_class",
                    "gid_v1",
                    "gid_ipv6",
                ],
                "rnr",
            )],
        },
        LabSpec {
            id: "nvmf",
            params: vec![
                choice("iodepth", &nvmf::DEPTHS, "32"),
                choice("bs", &nvmf::SIZES, "4k"),
                int("initiators", 1, 8, 1, "hosts"),
                int("rwmixread", 0, 100, 100, "%"),
                choice("link_gbps", &["25", "100"], "100"),
            ],
        },
        LabSpec {
            id: "allreduce",
            params: vec![
                int("hosts", 2, 16, 8, "hosts"),
                choice("size", &allreduce::SIZES, "8M"),
                int("channels", 1, 4, 2, "channels"),
                int("qps", 1, 4, 1, "QPs"),
                choice("hash", &["crc16", "mixed"], "crc16"),
                int("seed", 0, 65_535, 1, ""),
                int("spines", 1, 8, 4, "switches"),
                choice("spine_gbps", &["25", "50", "100"], "25"),
                flag("pfc", true),
                flag("dcqcn", true),
            ],
        },
    ]
}

/// A parameter's value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A flag.
    Bool(bool),
    /// A choice.
    Choice(&'static str),
}

/// A lab's parameters, every one present and in range: only [`parse_params`] makes them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Params(BTreeMap<&'static str, Value>);

impl Params {
    /// An integer parameter (0 if the lab has no such integer: a bug the tests catch).
    pub fn int(&self, name: &str) -> i64 {
        match self.0.get(name) {
            Some(Value::Int(v)) => *v,
            _ => 0,
        }
    }
    /// A flag.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(Value::Bool(true)))
    }
    /// A choice.
    pub fn choice(&self, name: &str) -> &'static str {
        match self.0.get(name) {
            Some(Value::Choice(c)) => c,
            _ => "",
        }
    }
}

/// Why a lab could not run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LabError {
    /// The parameter at fault, if one is.
    pub field: Option<String>,
    /// What is wrong (`msg`'s English, when there is a message).
    pub message: String,
    /// What is allowed, when a parameter is at fault.
    pub allowed: Option<String>,
    /// True when the lab does not exist (a 404 rather than a 422).
    pub unknown_lab: bool,
    /// `message` as a message id and its arguments, so a page writes it in its language.
    pub msg: Option<Box<Msg>>,
    /// `allowed` as a message, when it is words rather than names or a formula.
    pub allowed_msg: Option<Box<Msg>>,
}

impl LabError {
    /// A parameter error: `m` says what is wrong; `allowed` lists names or states a formula.
    fn param(field: &str, m: Msg, allowed: String) -> LabError {
        LabError {
            field: Some(field.to_string()),
            message: m.text(),
            allowed: Some(allowed),
            unknown_lab: false,
            msg: Some(Box::new(m)),
            allowed_msg: None,
        }
    }
    /// A parameter error whose allowance is words (`allowed` is its English).
    fn param_said(field: &str, m: Msg, allowed: Msg) -> LabError {
        LabError {
            allowed_msg: Some(Box::new(allowed.clone())),
            ..LabError::param(field, m, allowed.text())
        }
    }
    /// The simulation failed (a bug or a budget): the message says which.
    pub(crate) fn sim(e: impl std::fmt::Display) -> LabError {
        LabError {
            field: None,
            message: e.to_string(),
            allowed: None,
            unknown_lab: false,
            msg: None,
            allowed_msg: None,
        }
    }
}

/// Checks `body` (a JSON object of parameter names to values) against lab `id`'s parameters.
/// Values may be JSON numbers and booleans, or the same as strings (as a URL query gives
/// them); missing parameters take their defaults; unknown ones are errors.
pub fn parse_params(id: &str, body: &serde_json::Value) -> Result<Params, LabError> {
    let Some(spec) = catalogue().into_iter().find(|l| l.id == id) else {
        let names = catalogue().iter().map(|l| l.id).collect::<Vec<_>>();
        return Err(LabError {
            unknown_lab: true,
            ..LabError::param(
                "lab",
                msg!(LabUnknown, id = format!("{id:?}")),
                names.join(", "),
            )
        });
    };
    let empty = serde_json::Map::new();
    let obj = match body {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => &empty,
        _ => {
            return Err(LabError::param(
                "body",
                msg!(LabNotObject),
                "{\"name\": value, ...}".to_string(),
            ));
        }
    };
    let names = || {
        spec.params
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !spec.params.iter().any(|p| p.name == *k))
    {
        let shown: String = k.chars().take(40).collect();
        return Err(LabError::param(
            k,
            msg!(LabNoParam, lab = id, name = format!("{shown:?}")),
            names(),
        ));
    }
    let mut out = BTreeMap::new();
    for p in &spec.params {
        let given = obj.get(p.name);
        let v = match (&p.kind, given) {
            (ParamKind::Int { default, .. }, None) => Value::Int(*default),
            (ParamKind::Bool { default }, None) => Value::Bool(*default),
            (ParamKind::Choice { default, .. }, None) => Value::Choice(default),
            (ParamKind::Int { min, max, .. }, Some(g)) => {
                let allowed = msg!(LabAllowedInt, min = *min, max = *max);
                let n = match g {
                    serde_json::Value::Number(n) => n.as_i64(),
                    serde_json::Value::String(s) => s.trim().parse::<i64>().ok(),
                    _ => None,
                };
                match n {
                    Some(n) if (*min..=*max).contains(&n) => Value::Int(n),
                    _ => {
                        return Err(LabError::param_said(
                            p.name,
                            msg!(LabValue, name = p.name, value = short(g)),
                            allowed,
                        ));
                    }
                }
            }
            (ParamKind::Bool { .. }, Some(g)) => match g {
                serde_json::Value::Bool(b) => Value::Bool(*b),
                serde_json::Value::String(s) if s == "true" => Value::Bool(true),
                serde_json::Value::String(s) if s == "false" => Value::Bool(false),
                _ => {
                    return Err(LabError::param_said(
                        p.name,
                        msg!(LabValue, name = p.name, value = short(g)),
                        msg!(LabAllowedBool),
                    ));
                }
            },
            (ParamKind::Choice { choices, .. }, Some(g)) => {
                let s = match g {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Number(n) => Some(n.to_string()),
                    _ => None,
                };
                match s.and_then(|s| choices.iter().find(|c| **c == s)) {
                    Some(c) => Value::Choice(c),
                    None => {
                        return Err(LabError::param_said(
                            p.name,
                            msg!(LabValue, name = p.name, value = short(g)),
                            msg!(LabAllowedChoice, choices = list(choices.iter().copied())),
                        ));
                    }
                }
            }
        };
        out.insert(p.name, v);
    }
    let params = Params(out);
    cross_check(id, &params)?;
    Ok(params)
}

/// The rules between parameters.
fn cross_check(id: &str, p: &Params) -> Result<(), LabError> {
    match id {
        "incast" if p.choice("dcqcn") != "off" && !p.flag("ecn") => Err(LabError::param_said(
            "dcqcn",
            msg!(LabDcqcnNeedsEcn, dcqcn = p.choice("dcqcn")),
            msg!(LabAllowedDcqcn),
        )),
        "storm" if p.int("stall_at_us") + p.int("detect_us") >= p.int("duration_us") => {
            Err(LabError::param(
                "stall_at_us",
                msg!(
                    LabStormTooLate,
                    sum = p.int("stall_at_us") + p.int("detect_us"),
                    duration = p.int("duration_us")
                ),
                "stall_at_us + detect_us < duration_us".to_string(),
            ))
        }
        "nvmf" if nvmf::in_flight(p).0 > nvmf::MAX_IN_FLIGHT_IOS => Err(LabError::param(
            "iodepth",
            msg!(
                LabNvmfIos,
                ios = nvmf::in_flight(p).0,
                max = nvmf::MAX_IN_FLIGHT_IOS
            ),
            format!("iodepth × initiators ≤ {}", nvmf::MAX_IN_FLIGHT_IOS),
        )),
        "nvmf" if nvmf::in_flight(p).1 > nvmf::MAX_IN_FLIGHT_BYTES => Err(LabError::param(
            "iodepth",
            msg!(
                LabNvmfBytes,
                mib = format!("{}", nvmf::in_flight(p).1 as f64 / (1u64 << 20) as f64),
                max = nvmf::MAX_IN_FLIGHT_BYTES >> 20
            ),
            format!(
                "iodepth × initiators × bs ≤ {} MiB",
                nvmf::MAX_IN_FLIGHT_BYTES >> 20
            ),
        )),
        "allreduce" if allreduce::total_bytes(p) > allreduce::MAX_TOTAL_BYTES => {
            Err(LabError::param(
                "size",
                msg!(
                    LabAllreduceBytes,
                    mib = allreduce::total_bytes(p) >> 20,
                    max = allreduce::MAX_TOTAL_BYTES >> 20
                ),
                format!("hosts × size ≤ {} MiB", allreduce::MAX_TOTAL_BYTES >> 20),
            ))
        }
        _ => Ok(()),
    }
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// A headline number.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// Its id (the front end's label key).
    pub id: &'static str,
    /// The value; `None` when it does not apply (a watchdog that never fired).
    pub value: Option<f64>,
    /// Its unit, or empty.
    pub unit: &'static str,
}

/// One series of a chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// What it shows (`h1→h0`, `go-back-N`).
    pub name: String,
    /// (x, y) points in x order; for bar charts x is the category index.
    pub points: Vec<[f64; 2]>,
    /// Bar charts: the category names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl Series {
    /// An empty series called `name`.
    fn new(name: impl Into<String>) -> Series {
        Series {
            name: name.into(),
            points: Vec::new(),
            labels: Vec::new(),
        }
    }
}

/// A chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// Its id (the front end's title key).
    pub id: &'static str,
    /// `line`, `step` or `bar`.
    pub kind: &'static str,
    /// The x axis's unit.
    pub x_unit: &'static str,
    /// The y axis's unit.
    pub y_unit: &'static str,
    /// The series.
    pub series: Vec<Series>,
}

/// A chart of `kind` (`line`, `step`, `bar`) with its axes' units.
fn chart(
    id: &'static str,
    kind: &'static str,
    (x_unit, y_unit): (&'static str, &'static str),
    series: Vec<Series>,
) -> Chart {
    Chart {
        id,
        kind,
        x_unit,
        y_unit,
        series,
    }
}

/// A counter as an operator reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Counter {
    /// The host (or `switch`) it belongs to.
    pub host: String,
    /// Its name, as the tool that shows it spells it (mlx5's `out_of_sequence`, ethtool's
    /// `rx_prio3_pause`).
    pub name: String,
    /// Its value.
    pub value: u64,
}

/// What a lab concluded: its lab's struct, whose fields are the verdict's keys.
///
/// Untagged, so the JSON is the struct's fields alone; each struct declares its fields in the
/// alphabetical order of their keys, the order the JSON has always had (it was a map of
/// names), and its `Option` fields say whether an absent value is a `null` or no key at all.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Verdict {
    /// The congestion lab's.
    Incast(IncastVerdict),
    /// The head-of-line lab's.
    Hol(HolVerdict),
    /// The PFC storm lab's.
    Storm(StormVerdict),
    /// The ring deadlock lab's.
    Deadlock(DeadlockVerdict),
    /// The loss sweep's.
    Loss(LossVerdict),
    /// The troubleshooting lab's.
    Trouble(TroubleVerdict),
    /// The NVMe-oF lab's.
    Nvmf(NvmfVerdict),
    /// The all-reduce lab's.
    Allreduce(AllreduceVerdict),
    /// No verdict (`qps`: its figures and charts say it all); `{}` in the JSON, as before.
    #[serde(serialize_with = "empty_object")]
    None,
}

/// `{}`: what a lab without a verdict has always shown.
fn empty_object<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    s.serialize_map(Some(0))?.end()
}

impl Verdict {
    /// The incast lab's verdict, if this is it.
    pub fn incast(&self) -> Option<&IncastVerdict> {
        match self {
            Verdict::Incast(v) => Some(v),
            _ => None,
        }
    }
    /// The hol lab's verdict, if this is it.
    pub fn hol(&self) -> Option<&HolVerdict> {
        match self {
            Verdict::Hol(v) => Some(v),
            _ => None,
        }
    }
    /// The storm lab's verdict, if this is it.
    pub fn storm(&self) -> Option<&StormVerdict> {
        match self {
            Verdict::Storm(v) => Some(v),
            _ => None,
        }
    }
    /// The deadlock lab's verdict, if this is it.
    pub fn deadlock(&self) -> Option<&DeadlockVerdict> {
        match self {
            Verdict::Deadlock(v) => Some(v),
            _ => None,
        }
    }
    /// The loss lab's verdict, if this is it.
    pub fn loss(&self) -> Option<&LossVerdict> {
        match self {
            Verdict::Loss(v) => Some(v),
            _ => None,
        }
    }
    /// The troubleshooting lab's verdict, if this is it.
    pub fn trouble(&self) -> Option<&TroubleVerdict> {
        match self {
            Verdict::Trouble(v) => Some(v),
            _ => None,
        }
    }
    /// The nvmf lab's verdict, if this is it.
    pub fn nvmf(&self) -> Option<&NvmfVerdict> {
        match self {
            Verdict::Nvmf(v) => Some(v),
            _ => None,
        }
    }
    /// The allreduce lab's verdict, if this is it.
    pub fn allreduce(&self) -> Option<&AllreduceVerdict> {
        match self {
            Verdict::Allreduce(v) => Some(v),
            _ => None,
        }
    }
}

/// What a lab run produced.
#[derive(Clone, Debug, Serialize)]
pub struct LabResult {
    /// The lab's id.
    pub lab: &'static str,
    /// The parameters it ran with (defaults filled in).
    pub params: Params,
    /// Headline numbers.
    pub figures: Vec<Figure>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// Counters (the troubleshooting lab).
    pub counters: Vec<Counter>,
    /// The lab's verdict (`deadlocked`, `contained`, ...).
    pub verdict: Verdict,
    /// The fabric link by link over the run (the labs that run streams on a switched fabric:
    /// `hol`, `storm`, `deadlock`), for the lab page's fabric view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<fabric_view::FabricView>,
    /// Simulator events the run processed (`None` for labs built on the comparison report or
    /// perftest, which do not count them).
    pub events: Option<u64>,
    /// Wall-clock time the run took on this machine, ms (the only field that is not the same
    /// on every run).
    pub wall_ms: f64,
    /// The PFC settings of the lab's lossless priority at a host's switch port (XOFF, XON,
    /// headroom, each PAUSE's quanta and duration), when the lab runs PFC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<crate::report::PfcSummary>,
}

impl LabResult {
    fn new(lab: &'static str, params: &Params) -> LabResult {
        LabResult {
            lab,
            params: params.clone(),
            figures: Vec::new(),
            charts: Vec::new(),
            counters: Vec::new(),
            verdict: Verdict::None,
            fabric: None,
            events: None,
            wall_ms: 0.0,
            pfc: None,
        }
    }

    /// Notes the lab's PFC ([`lab_pfc`]) on its hosts' 3 m links at `gbps`.
    fn note_pfc(&mut self, gbps: u64) {
        let link = fabric::LinkConfig::new(units::Bandwidth::gbps(gbps), 3);
        self.pfc = Some(crate::report::PfcSummary::of_config(
            &lab_pfc(),
            &link,
            &fabric::FabricConfig::default(),
            "set",
        ));
    }

    fn figure(&mut self, id: &'static str, value: Option<f64>, unit: &'static str) {
        self.figures.push(Figure { id, value, unit });
    }

    /// The figure `id`'s value (tests).
    pub fn figure_value(&self, id: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| f.id == id)
            .and_then(|f| f.value)
    }

    /// The chart `id` (tests).
    pub fn chart(&self, id: &str) -> Option<&Chart> {
        self.charts.iter().find(|c| c.id == id)
    }
}

/// Runs lab `id` with `params` (from [`parse_params`] for the same lab: another lab's are
/// refused).
pub fn run(id: &str, params: &Params) -> Result<LabResult, LabError> {
    let started = Instant::now();
    let value = serde_json::to_value(params).map_err(LabError::sim)?;
    if parse_params(id, &value).as_ref() != Ok(params) {
        return Err(parse_params(id, &value)
            .err()
            .unwrap_or_else(|| LabError::sim(format!("these parameters are not lab {id}'s"))));
    }
    let mut r = match id {
        "incast" => incast::run(params),
        "hol" => hol::run(params),
        "storm" => storm::run(params),
        "deadlock" => deadlock::run(params),
        "loss" => loss::run(params),
        "qps" => qps::run(params),
        "trouble" => trouble::run(params),
        "nvmf" => nvmf::run(params),
        "allreduce" => allreduce::run(params),
        _ => Err(parse_params(id, &serde_json::Value::Null)
            .err()
            .unwrap_or_else(|| LabError::sim(format!("lab {id} has no runner")))),
    }?;
    r.wall_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(r)
}

/// Jain's fairness index of `xs`: 1 when all are equal, 1/n when one takes everything.
fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let q: f64 = xs.iter().map(|x| x * x).sum();
    if q == 0.0 {
        return 1.0;
    }
    s * s / (xs.len() as f64 * q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_in_and_strings_parse() {
        let p = parse_params("incast", &json!({"senders": "8", "pfc": "false"})).unwrap();
        assert_eq!(p.int("senders"), 8);
        assert!(!p.flag("pfc"));
        assert!(p.flag("ecn"));
        assert_eq!(p.choice("dcqcn"), "nvidia");
        assert_eq!(p.int("duration_us"), 5000);
    }

    #[test]
    fn bad_values_name_the_field_and_what_is_allowed() {
        let e = parse_params("incast", &json!({"senders": 99})).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("senders"));
        assert_eq!(e.allowed.as_deref(), Some("an integer in 2..=16"));
        let e = parse_params("incast", &json!({"dcqcn": "fast"})).unwrap_err();
        assert_eq!(e.allowed.as_deref(), Some("one of off, nvidia, paper"));
        let e = parse_params("incast", &json!({"bogus": 1})).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("bogus"));
        let e = parse_params("nope", &json!({})).unwrap_err();
        assert!(e.unknown_lab);
        let e = parse_params("hol", &json!([1])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body"));
    }

    #[test]
    fn every_lab_in_the_catalogue_has_a_runner() {
        // Parsing defaults works for each, and `run` knows each id (checked by running the
        // cheapest one here; the others run in tests/sim/labs.rs).
        for l in catalogue() {
            parse_params(l.id, &json!({})).unwrap();
        }
        let p = parse_params("trouble", &json!({})).unwrap();
        assert_eq!(run("trouble", &p).unwrap().lab, "trouble");
    }

    #[test]
    fn a_verdict_shows_its_own_keys_only() {
        // No verdict is `{}`, as it always was; a troubleshooting case has none of the others'.
        assert_eq!(serde_json::to_string(&Verdict::None).unwrap(), "{}");
        let p = parse_params("trouble", &json!({})).unwrap();
        let v = serde_json::to_value(run("trouble", &p).unwrap().verdict).unwrap();
        assert_eq!(
            v,
            json!({"status": "RNR_RETRY_EXC_ERR", "symptom": "sends_fail"})
        );
    }

    #[test]
    fn jain_is_one_for_equal_shares() {
        assert!((jain(&[2.0, 2.0, 2.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[4.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
