//! The `--trace` JSON lines: one object per trace record, with the fields each kind carries.

use super::*;

/// One trace record as a JSON object (a line of `rdmalab trace --trace`):
/// `{path, t_ps, kind, ...}` with `kind` one of
/// - `stage`: `host`, `unit` (`cpu`, `nic`, `pcie`), `core` (cpu only), `stage`, `setup`,
///   `start_ps`, `end_ps` — a timed piece of work on a host;
/// - `packet`: `event` (`enqueued`, `dequeued`, `arrived`, `delivered`), `node`, `port`,
///   `uid`, `flow`, `class` (`roce_data`, `roce_ack`, `cnp`, `pause`, `raw`, `tcp`), `bytes`,
///   `priority`, `queue_bytes`, and `irn_extension: true` on a frame carrying rdmalab's IRN
///   header (selective repeat; not IBTA);
/// - `dropped`: `node`, `port`, `uid`, `flow`, `class`, `bytes`, `priority`, `reason`;
/// - `ecn_marked`: `node`, `port`, `uid`, `flow`, `class`, `bytes`, `priority`, `queue_bytes`;
/// - `pause_sent` / `pause_received`: `node`, `port`, `class_enable`, `quanta`;
/// - `retransmit`: `host`, `qpn`, `from_psn`, `reason`;
/// - `rate_change`: `host`, `qpn`, `cause` (`cut`, `fast recovery`, `additive increase`,
///   `hyper increase`), `rate_kbps`, `target_kbps`, `alpha` (0..=1) — DCQCN's reaction point.
///
/// Nodes are the fabric's node numbers (`host` too: in a one-switch topology the switch is
/// node 0 and host i is node i + 1). Times are integer picoseconds of simulated time.
pub fn trace_json(path: &str, t: SimTime, r: &TraceRecord) -> serde_json::Value {
    use engine::{ExecUnit, PacketClass, PacketRef, PacketStage};
    use serde_json::json;
    let class = |c: PacketClass| match c {
        PacketClass::RoceData => "roce_data",
        PacketClass::RoceAck => "roce_ack",
        PacketClass::RoceCnp => "cnp",
        PacketClass::Pause => "pause",
        PacketClass::Raw => "raw",
        PacketClass::Tcp => "tcp",
    };
    let pkt = |p: &PacketRef, o: &mut serde_json::Map<String, serde_json::Value>| {
        o.insert("uid".into(), json!(p.uid));
        o.insert("flow".into(), json!(p.flow.0));
        o.insert("class".into(), json!(class(p.class)));
        o.insert("bytes".into(), json!(p.bytes));
        o.insert("priority".into(), json!(p.priority.index()));
        if p.irn_ext {
            o.insert("irn_extension".into(), json!(true));
        }
    };
    let mut o = serde_json::Map::new();
    o.insert("path".into(), json!(path));
    o.insert("t_ps".into(), json!(t.as_ps()));
    match r {
        TraceRecord::Stage {
            host,
            unit,
            stage,
            setup,
            start,
            end,
        } => {
            o.insert("kind".into(), json!("stage"));
            o.insert("host".into(), json!(host.0));
            let (u, core) = match unit {
                ExecUnit::Cpu(c) => ("cpu", Some(*c)),
                ExecUnit::Nic => ("nic", None),
                ExecUnit::Pcie => ("pcie", None),
            };
            o.insert("unit".into(), json!(u));
            if let Some(c) = core {
                o.insert("core".into(), json!(c));
            }
            o.insert("stage".into(), json!(stage.name()));
            o.insert("setup".into(), json!(setup));
            o.insert("start_ps".into(), json!(start.as_ps()));
            o.insert("end_ps".into(), json!(end.as_ps()));
        }
        TraceRecord::Packet {
            stage,
            node,
            port,
            pkt: p,
            queue_bytes,
        } => {
            o.insert("kind".into(), json!("packet"));
            let e = match stage {
                PacketStage::Enqueued => "enqueued",
                PacketStage::Dequeued => "dequeued",
                PacketStage::Arrived => "arrived",
                PacketStage::Delivered => "delivered",
            };
            o.insert("event".into(), json!(e));
            o.insert("node".into(), json!(node.0));
            o.insert("port".into(), json!(port.0));
            pkt(p, &mut o);
            o.insert("queue_bytes".into(), json!(queue_bytes));
        }
        TraceRecord::Dropped {
            node,
            port,
            pkt: p,
            reason,
        } => {
            o.insert("kind".into(), json!("dropped"));
            o.insert("node".into(), json!(node.0));
            o.insert("port".into(), json!(port.0));
            pkt(p, &mut o);
            o.insert("reason".into(), json!(reason.name()));
        }
        TraceRecord::EcnMarked {
            node,
            port,
            pkt: p,
            queue_bytes,
        } => {
            o.insert("kind".into(), json!("ecn_marked"));
            o.insert("node".into(), json!(node.0));
            o.insert("port".into(), json!(port.0));
            pkt(p, &mut o);
            o.insert("queue_bytes".into(), json!(queue_bytes));
        }
        TraceRecord::PauseSent {
            node,
            port,
            class_enable,
            quanta,
            duration,
        }
        | TraceRecord::PauseReceived {
            node,
            port,
            class_enable,
            quanta,
            duration,
        } => {
            let k = if matches!(r, TraceRecord::PauseSent { .. }) {
                "pause_sent"
            } else {
                "pause_received"
            };
            o.insert("kind".into(), json!(k));
            o.insert("node".into(), json!(node.0));
            o.insert("port".into(), json!(port.0));
            o.insert("class_enable".into(), json!(class_enable));
            o.insert("quanta".into(), json!(quanta));
            o.insert(
                "duration_ns".into(),
                json!(duration.as_ps() as f64 / 1_000.0),
            );
        }
        TraceRecord::Retransmit {
            host,
            qpn,
            from_psn,
            reason,
        } => {
            o.insert("kind".into(), json!("retransmit"));
            o.insert("host".into(), json!(host.0));
            o.insert("qpn".into(), json!(qpn));
            o.insert("from_psn".into(), json!(from_psn));
            o.insert("reason".into(), json!(reason));
        }
        TraceRecord::RateChange {
            host,
            qpn,
            cause,
            rate_kbps,
            target_kbps,
            alpha,
        } => {
            o.insert("kind".into(), json!("rate_change"));
            o.insert("host".into(), json!(host.0));
            o.insert("qpn".into(), json!(qpn));
            o.insert("cause".into(), json!(cause));
            o.insert("rate_kbps".into(), json!(rate_kbps));
            o.insert("target_kbps".into(), json!(target_kbps));
            o.insert("alpha".into(), json!(*alpha as f64 / (1u64 << 20) as f64));
        }
    }
    serde_json::Value::Object(o)
}
