//! csg-htsim's connection matrices (`.cm` files): the workload format its datacenter
//! experiments read (`sim/datacenter/connection_matrix.cpp` in csg-htsim), so a workload made
//! for htsim runs here unchanged and the two simulators can be compared on the same flows.
//!
//! The format, as htsim reads it: a header of `Nodes N`, `Connections C` and optionally
//! `Triggers T` and `Failures F`; then one line per connection,
//! `SRC->DST [id I] (start T | trigger G) size S [send_done_trigger G] [recv_done_trigger G]`,
//! and one per trigger, `trigger id G (oneshot | barrier count K | multishot)`. Start times are
//! microseconds (htsim's loader hands them to `timeFromUs`); sizes are bytes. Blank lines and
//! lines starting with `#` are skipped.
//!
//! What rdmalab runs: every connection as one RC QP pair posting one RDMA WRITE of `size`
//! bytes, at `start` or when its trigger fires; `oneshot` triggers fire on their first
//! activation, `barrier count K` ones on their K-th; a connection's `send_done_trigger` is
//! activated when its WRITE completes at the sender (every byte acknowledged) and its
//! `recv_done_trigger` when the last byte has been placed at the receiver. Refused by name
//! (no silent no-op): `multishot` triggers, `failure` lines (link and switch failures), `prio`
//! (rdmalab's RoCE runs in one traffic class), endless flows (`size 0`), a host writing to
//! itself, and counts in the header that disagree with the lines.
//!
//! Parsing is pure (text in, [`Matrix`] or [`MatrixError`] out); the caller reads the file
//! (bounded) and names it in the message, which reads `FILE:LINE: what is wrong`.

use std::collections::BTreeMap;
use std::fmt;

/// Most connections a matrix may hold: each is a QP pair with its own state (a few KB), so
/// this bounds a run's memory to well under a GB of QP state.
pub const MAX_CONNECTIONS: usize = 65_536;
/// Most nodes a matrix may name (the largest fat tree a scenario builds, k = 32, has 8,192).
pub const MAX_NODES: u32 = 65_536;
/// Largest flow: one RDMA WRITE carries at most 2^31 bytes (IBTA compliance statement C9-94:
/// a RETH's DMA length above 2^31 is an invalid request; research/verbs-spec.md §REM_INV_REQ_ERR).
pub const MAX_FLOW_BYTES: u64 = 1 << 31;
/// Latest start time, µs (10 s of simulated time: far past any run's budget).
pub const MAX_START_US: u64 = 10_000_000;
/// Most triggers.
pub const MAX_TRIGGERS: usize = MAX_CONNECTIONS;

/// A trigger's id as the file writes it (nonzero).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TriggerId(pub u32);

/// When a connection starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At this simulated time after the data phase begins, ps.
    At(u64),
    /// When this trigger fires.
    Trigger(TriggerId),
}

/// One connection: an RDMA WRITE of `size` bytes from `src` to `dst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// Where it is in the file (1-based line).
    pub line: usize,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// The file's flow id, if it gave one (nonzero, unique).
    pub id: Option<u32>,
    /// When it starts.
    pub start: Start,
    /// Bytes written.
    pub size: u64,
    /// Activated when the WRITE completes at the sender.
    pub send_done: Option<TriggerId>,
    /// Activated when the last byte is placed at the receiver.
    pub recv_done: Option<TriggerId>,
}

/// How a trigger fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// On its first activation.
    Oneshot,
    /// On its `count`-th activation.
    Barrier {
        /// Activations needed.
        count: u32,
    },
}

/// A trigger: the connections waiting on it start when it fires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Its id.
    pub id: TriggerId,
    /// How it fires.
    pub kind: TriggerKind,
}

/// A parsed connection matrix.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Matrix {
    /// The `Nodes` header: hosts the matrix is written for.
    pub nodes: u32,
    /// Connections, in file order.
    pub connections: Vec<Connection>,
    /// Triggers by id.
    pub triggers: BTreeMap<TriggerId, Trigger>,
}

/// What is wrong, and on which line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for MatrixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

impl std::error::Error for MatrixError {}

impl Matrix {
    /// Flows that start at a time (not on a trigger).
    pub fn timed(&self) -> impl Iterator<Item = &Connection> {
        self.connections
            .iter()
            .filter(|c| matches!(c.start, Start::At(_)))
    }
}

fn err(line: usize, message: impl Into<String>) -> MatrixError {
    MatrixError {
        line,
        message: message.into(),
    }
}

/// An unsigned integer in `lo..=hi`, named `what` in the error.
fn number(
    line: usize,
    what: &str,
    tok: Option<&str>,
    lo: u64,
    hi: u64,
) -> Result<u64, MatrixError> {
    let Some(t) = tok else {
        return Err(err(
            line,
            format!("{what}: a value is missing (allowed {lo}..={hi})"),
        ));
    };
    match t.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(err(line, format!("{what} {t}: allowed {lo}..={hi}"))),
    }
}

/// A start time in µs as htsim writes it (`0`, `12.5`), to ps. Decimal digits only, at most
/// six after the point (the simulator's resolution is 1 ps): parsed as integers, so no
/// floating-point rounding can move a flow.
fn start_ps(line: usize, tok: Option<&str>) -> Result<u64, MatrixError> {
    let allowed = format!("a time in µs, 0..={MAX_START_US}, at most 6 decimals (e.g. 0 or 12.5)");
    let Some(t) = tok else {
        return Err(err(line, format!("start: a value is missing ({allowed})")));
    };
    let bad = || err(line, format!("start {t}: allowed {allowed}"));
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || frac.len() > 6 || int.len() > 12 {
        return Err(bad());
    }
    let us: u64 = int.parse().map_err(|_| bad())?;
    if us > MAX_START_US || (us == MAX_START_US && frac.bytes().any(|b| b != b'0')) {
        return Err(bad());
    }
    let mut ps = us * 1_000_000;
    let mut scale = 100_000;
    for b in frac.bytes() {
        ps += u64::from(b - b'0') * scale;
        scale /= 10;
    }
    Ok(ps)
}

fn trigger_id(line: usize, what: &str, tok: Option<&str>) -> Result<TriggerId, MatrixError> {
    number(line, what, tok, 1, u64::from(u32::MAX)).map(|n| TriggerId(n as u32))
}

/// Parses a connection matrix. `text` is the whole file.
pub fn parse(text: &str) -> Result<Matrix, MatrixError> {
    let mut nodes: Option<(usize, u32)> = None;
    let mut declared_conns: Option<(usize, usize)> = None;
    let mut declared_triggers: Option<(usize, usize)> = None;
    let mut m = Matrix::default();
    // Triggers referenced by a connection, first line that did.
    let mut referenced: BTreeMap<TriggerId, usize> = BTreeMap::new();
    let mut ids: BTreeMap<u32, usize> = BTreeMap::new();
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        last = line;
        let mut toks = raw.split_whitespace();
        let Some(first) = toks.next() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let header = |what: &str, lo: u64, hi: u64, toks: &mut std::str::SplitWhitespace| {
            let n = number(line, what, toks.next(), lo, hi)?;
            match toks.next() {
                Some(extra) => Err(err(
                    line,
                    format!("{what}: unexpected `{extra}` after the count"),
                )),
                None => Ok(n),
            }
        };
        match first {
            "Nodes" => {
                if let Some((l, _)) = nodes {
                    return Err(err(line, format!("Nodes: given twice (first on line {l})")));
                }
                let n = header("Nodes", 2, u64::from(MAX_NODES), &mut toks)?;
                nodes = Some((line, n as u32));
            }
            "Connections" => {
                let n = header("Connections", 1, MAX_CONNECTIONS as u64, &mut toks)?;
                declared_conns = Some((line, n as usize));
            }
            "Triggers" => {
                let n = header("Triggers", 0, MAX_TRIGGERS as u64, &mut toks)?;
                declared_triggers = Some((line, n as usize));
            }
            "Failures" => {
                let n = header("Failures", 0, 0, &mut toks).map_err(|_| {
                    err(
                        line,
                        "Failures: link and switch failures are not modelled by rdmalab (allowed: Failures 0)",
                    )
                })?;
                debug_assert_eq!(n, 0);
            }
            "failure" => {
                return Err(err(
                    line,
                    "failure: link and switch failures are not modelled by rdmalab; remove the failure lines",
                ));
            }
            "trigger" => {
                let t = trigger_line(line, toks)?;
                if m.triggers.len() >= MAX_TRIGGERS {
                    return Err(err(
                        line,
                        format!("trigger: more than {MAX_TRIGGERS} triggers"),
                    ));
                }
                if m.triggers.insert(t.id, t.clone()).is_some() {
                    return Err(err(line, format!("trigger id {}: defined twice", t.id.0)));
                }
            }
            _ if first.contains("->") => {
                let Some((_, n)) = nodes else {
                    return Err(err(line, "a connection before the `Nodes N` header"));
                };
                if m.connections.len() >= MAX_CONNECTIONS {
                    return Err(err(
                        line,
                        format!("more than {MAX_CONNECTIONS} connections (the most one run takes)"),
                    ));
                }
                let c = connection_line(line, first, toks, n)?;
                if let Some(id) = c.id
                    && let Some(prev) = ids.insert(id, line)
                {
                    return Err(err(line, format!("id {id}: already used on line {prev}")));
                }
                let waits = match c.start {
                    Start::Trigger(t) => Some(t),
                    Start::At(_) => None,
                };
                for t in [c.send_done, c.recv_done, waits].into_iter().flatten() {
                    referenced.entry(t).or_insert(line);
                }
                m.connections.push(c);
            }
            other => {
                return Err(err(
                    line,
                    format!(
                        "`{other}`: not part of a connection matrix (allowed: Nodes, Connections, Triggers, Failures, SRC->DST ..., trigger ...)"
                    ),
                ));
            }
        }
    }
    let Some((_, n)) = nodes else {
        return Err(err(last.max(1), "no `Nodes N` header"));
    };
    m.nodes = n;
    match declared_conns {
        None => return Err(err(last.max(1), "no `Connections C` header")),
        Some((l, c)) if c != m.connections.len() => {
            return Err(err(
                l,
                format!(
                    "Connections {c}, but the file has {} connection lines",
                    m.connections.len()
                ),
            ));
        }
        Some(_) => {}
    }
    let declared_t = declared_triggers.map_or(0, |(_, t)| t);
    if declared_t != m.triggers.len() {
        let l = declared_triggers.map_or(last.max(1), |(l, _)| l);
        return Err(err(
            l,
            format!(
                "Triggers {declared_t}, but the file has {} trigger lines",
                m.triggers.len()
            ),
        ));
    }
    if let Some((t, l)) = referenced.iter().find(|(t, _)| !m.triggers.contains_key(t)) {
        return Err(err(
            *l,
            format!(
                "trigger {}: used but never defined by a `trigger id {}` line",
                t.0, t.0
            ),
        ));
    }
    Ok(m)
}

fn trigger_line(line: usize, mut toks: std::str::SplitWhitespace) -> Result<Trigger, MatrixError> {
    let mut id = None;
    let mut kind: Option<&str> = None;
    let mut count = None;
    while let Some(t) = toks.next() {
        match t {
            "id" => id = Some(trigger_id(line, "trigger id", toks.next())?),
            "count" => {
                count = Some(number(line, "count", toks.next(), 1, MAX_CONNECTIONS as u64)? as u32)
            }
            "oneshot" | "barrier" => {
                if let Some(k) = kind {
                    return Err(err(line, format!("trigger: both `{k}` and `{t}`")));
                }
                kind = Some(t);
            }
            "multishot" => {
                return Err(err(
                    line,
                    "multishot: triggers that fire on every activation are not supported (allowed: oneshot, barrier count K)",
                ));
            }
            other => {
                return Err(err(
                    line,
                    format!(
                        "trigger: unknown word `{other}` (allowed: id G, oneshot, barrier, count K)"
                    ),
                ));
            }
        }
    }
    let Some(id) = id else {
        return Err(err(line, "trigger: no `id G`"));
    };
    let kind = match (kind, count) {
        (Some("oneshot"), None) => TriggerKind::Oneshot,
        (Some("oneshot"), Some(_)) => {
            return Err(err(
                line,
                "trigger: `count` belongs to a barrier, not a oneshot trigger",
            ));
        }
        (Some(_), Some(count)) => TriggerKind::Barrier { count },
        (Some(_), None) => return Err(err(line, "barrier: needs `count K` (1..=65536)")),
        (None, _) => {
            return Err(err(
                line,
                "trigger: no type (allowed: oneshot, barrier count K)",
            ));
        }
    };
    Ok(Trigger { id, kind })
}

fn connection_line(
    line: usize,
    first: &str,
    mut toks: std::str::SplitWhitespace,
    nodes: u32,
) -> Result<Connection, MatrixError> {
    let (s, d) = first.split_once("->").unwrap_or((first, ""));
    let hi = u64::from(nodes - 1);
    let src = number(line, "source", Some(s), 0, hi)? as u32;
    let dst = number(line, "destination", Some(d), 0, hi)? as u32;
    if src == dst {
        return Err(err(
            line,
            format!("{first}: a host writing to itself (source and destination must differ)"),
        ));
    }
    let mut c = Connection {
        line,
        src,
        dst,
        id: None,
        start: Start::At(0),
        size: 0,
        send_done: None,
        recv_done: None,
    };
    let (mut start, mut trigger, mut size) = (None, None, None);
    while let Some(t) = toks.next() {
        match t {
            "start" => start = Some(start_ps(line, toks.next())?),
            "trigger" => trigger = Some(trigger_id(line, "trigger", toks.next())?),
            "size" => {
                let n = toks.next();
                if n == Some("0") {
                    return Err(err(
                        line,
                        format!(
                            "size 0: an endless flow (htsim's meaning) is not supported; give the bytes to write (1..={MAX_FLOW_BYTES})"
                        ),
                    ));
                }
                size = Some(number(line, "size", n, 1, MAX_FLOW_BYTES)?);
            }
            "id" => c.id = Some(number(line, "id", toks.next(), 1, u64::from(u32::MAX))? as u32),
            "send_done_trigger" => c.send_done = Some(trigger_id(line, t, toks.next())?),
            "recv_done_trigger" => c.recv_done = Some(trigger_id(line, t, toks.next())?),
            "prio" => {
                return Err(err(
                    line,
                    "prio: per-flow priorities are not modelled (rdmalab's RoCE traffic runs in one traffic class); remove `prio P`",
                ));
            }
            other => {
                return Err(err(
                    line,
                    format!(
                        "unknown word `{other}` (allowed: id I, start T, trigger G, size S, send_done_trigger G, recv_done_trigger G)"
                    ),
                ));
            }
        }
    }
    c.start = match (start, trigger) {
        (Some(_), Some(_)) => {
            return Err(err(
                line,
                "both `start` and `trigger`: a flow starts one way",
            ));
        }
        (Some(ps), None) => Start::At(ps),
        (None, Some(t)) => Start::Trigger(t),
        (None, None) => {
            return Err(err(
                line,
                "no `start T` or `trigger G`: when does this flow start?",
            ));
        }
    };
    c.size = size.ok_or_else(|| err(line, format!("no `size S` (bytes, 1..={MAX_FLOW_BYTES})")))?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_permutation_with_ids_parses_in_file_order() {
        let m = parse("Nodes 4\nConnections 2\n# a comment\n\n0->3 id 1 start 0 size 2000000\n2->1 id 2 start 12.5 size 4096\n").unwrap();
        assert_eq!(m.nodes, 4);
        assert_eq!(m.connections.len(), 2);
        let c = &m.connections[1];
        assert_eq!(
            (c.src, c.dst, c.id, c.size, c.line),
            (2, 1, Some(2), 4096, 6)
        );
        assert_eq!(c.start, Start::At(12_500_000));
    }

    #[test]
    fn start_times_are_exact_decimal_microseconds() {
        assert_eq!(start_ps(1, Some("0")).unwrap(), 0);
        assert_eq!(start_ps(1, Some("1.000001")).unwrap(), 1_000_001);
        assert_eq!(start_ps(1, Some("3.2")).unwrap(), 3_200_000);
        for bad in ["-1", "1e3", "1.0000001", ".5", "x", "10000001"] {
            let e = start_ps(7, Some(bad)).unwrap_err();
            assert_eq!(e.line, 7);
            assert!(
                e.message.starts_with(&format!("start {bad}: allowed")),
                "{e}"
            );
        }
    }

    #[test]
    fn triggers_chain_flows_as_htsim_all_reduce_files_do() {
        let m = parse(
            "Nodes 3\nConnections 2\nTriggers 2\n\
             0->1 id 1 start 0 size 100 send_done_trigger 1\n\
             1->2 id 2 trigger 1 size 100 recv_done_trigger 2\n\
             trigger id 1 oneshot\ntrigger id 2 barrier count 1\n",
        )
        .unwrap();
        assert_eq!(m.connections[1].start, Start::Trigger(TriggerId(1)));
        assert_eq!(m.connections[0].send_done, Some(TriggerId(1)));
        assert_eq!(m.triggers[&TriggerId(1)].kind, TriggerKind::Oneshot);
        assert_eq!(
            m.triggers[&TriggerId(2)].kind,
            TriggerKind::Barrier { count: 1 }
        );
    }

    #[test]
    fn malformed_and_unsupported_lines_are_refused_with_their_line() {
        let head = "Nodes 4\nConnections 1\n";
        let cases: &[(&str, usize, &str)] = &[
            ("0->4 start 0 size 1\n", 3, "destination 4: allowed 0..=3"),
            ("0->0 start 0 size 1\n", 3, "writing to itself"),
            ("0->1 start 0 size 0\n", 3, "size 0: an endless flow"),
            ("0->1 size 5\n", 3, "no `start T` or `trigger G`"),
            ("0->1 start 0\n", 3, "no `size S`"),
            (
                "0->1 start 0 size 1 prio 3\n",
                3,
                "prio: per-flow priorities",
            ),
            (
                "0->1 start 0 size 1 colour red\n",
                3,
                "unknown word `colour`",
            ),
            (
                "0->1 start 0 trigger 1 size 1\n",
                3,
                "both `start` and `trigger`",
            ),
            (
                "0->1 trigger 9 size 1\n",
                3,
                "trigger 9: used but never defined",
            ),
            (
                "0->1 start 0 size 1\nfailure switch_type TOR\n",
                4,
                "failures are not modelled",
            ),
            (
                "0->1 start 0 size 1\nbanana\n",
                4,
                "`banana`: not part of a connection matrix",
            ),
            (
                "0->1 start 0 size 1\n1->2 start 0 size 1\n",
                2,
                "Connections 1, but the file has 2",
            ),
        ];
        for (body, line, want) in cases {
            let e = parse(&format!("{head}{body}")).unwrap_err();
            assert_eq!(e.line, *line, "{body}: {e}");
            assert!(e.message.contains(want), "{body}: {e}");
        }
        let e = parse("Connections 1\n0->1 start 0 size 1\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "a connection before the `Nodes N` header")
        );
        let e = parse(
            "Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 1\ntrigger id 1 multishot\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.starts_with("multishot"), "{e}");
        let e = parse("Nodes 4\nFailures 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e =
            parse("Nodes 4\nConnections 2\n0->1 id 5 start 0 size 1\n1->2 id 5 start 0 size 1\n")
                .unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (4, "id 5: already used on line 3")
        );
    }

    #[test]
    fn any_text_parses_or_is_refused_without_panicking() {
        // A cheap fuzz: every prefix of a valid file, and byte flips of it.
        let good = "Nodes 4\nConnections 2\nTriggers 1\n0->1 id 1 start 0 size 9 send_done_trigger 1\n2->3 id 2 trigger 1 size 9\ntrigger id 1 oneshot\n";
        assert!(parse(good).is_ok());
        for cut in 0..good.len() {
            let _ = parse(&good[..cut]);
        }
        let bytes = good.as_bytes();
        for i in 0..bytes.len() {
            for flip in [b'0', b'-', b'>', b' ', b'\n', b'9'] {
                let mut b = bytes.to_vec();
                b[i] = flip;
                if let Ok(s) = std::str::from_utf8(&b) {
                    let _ = parse(s);
                }
            }
        }
    }
}
