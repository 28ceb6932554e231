//! `POST /api/frame/dissect`: a frame's headers in wire order, field by field, decoded by the
//! `wire` crate ([`wire::dissect`](rdmalab::wire::dissect)) for the packet inspector
//! (`assets/inspector.js`).
//!
//! The frames the API sends (a verbs session's `steps[].frames`) carry `wire`: the frame's
//! bytes as lowercase hex, the payload cut to its first 64 bytes, and `wire_elided`, the
//! `[start, end)` payload bytes left out. This route takes the same two fields and puts zeros
//! back where bytes were left out, so offsets, lengths and the layout are those of the whole
//! frame; checks that cover the missing bytes (the ICRC, a TCP checksum) are reported as
//! unchecked rather than wrong.
//!
//! Body `{wire: "hex", elided?: [start, end]}`; answer `{len, elided, frame_check, stopped,
//! headers: [{kind, name, spec, start, len, fields: [{name, bit_offset, bit_width, value, hex,
//! meaning, spec}]}]}`. `len` is the frame without its FCS, as `wire` carries it (a frame
//! record's `len` counts the 4-byte FCS too). `value` is a string (a 64-bit VA does not fit a
//! JSON number a page can read exactly); `meaning` is `{id, ...}` with a stable id the page
//! words in its language; `spec` is the document and section that define the header or the
//! field (`docs/inspector-sources.md` says where each was checked).

use crate::api::rejection;
use crate::error::ApiError;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use rdmalab::wire::dissect::{self, Dissection, FieldView, Meaning, Value, Verdict};
use rdmalab::wire::ib::aeth::{NakCode, Syndrome, credit_count, rnr_timeout};
use rdmalab::wire::{Ecn, EtherType, Protocol};
use serde::Deserialize;
use serde_json::{Value as Json_, json};

/// Longest frame the route decodes, bytes: a 9000-byte jumbo payload with every header.
pub const MAX_FRAME_BYTES: usize = 9216;

/// Body of `POST /api/frame/dissect`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DissectRequest {
    /// The frame's bytes as hex (as a frame record's `wire`), at most [`MAX_FRAME_BYTES`].
    pub wire: String,
    /// The payload bytes left out of `wire`, `[start, end)` in the whole frame (a frame
    /// record's `wire_elided`).
    pub elided: Option<[usize; 2]>,
}

const BODY: &str = "a JSON object with wire (the frame's bytes as hex) and optional elided ([start, end] of bytes left out)";

/// `POST /api/frame/dissect`.
pub async fn dissect(
    body: Result<Json<DissectRequest>, JsonRejection>,
) -> Result<Json<Json_>, ApiError> {
    let Json(req) = body.map_err(|r| rejection(r, BODY))?;
    let bytes = parse_hex(&req.wire)?;
    let (bytes, elided) = match req.elided {
        None => (bytes, None),
        Some([start, end]) => {
            if start > bytes.len() || end < start || end - start + bytes.len() > MAX_FRAME_BYTES {
                return Err(ApiError::field(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "elided",
                    format!(
                        "elided [{start}, {end}] does not fit a {}-byte copy of a frame",
                        bytes.len()
                    ),
                    format!(
                        "[start, end] with start <= {} and a whole frame of at most {MAX_FRAME_BYTES} bytes",
                        bytes.len()
                    ),
                ));
            }
            let mut whole = Vec::with_capacity(bytes.len() + end - start);
            whole.extend_from_slice(&bytes[..start]);
            whole.resize(end, 0);
            whole.extend_from_slice(&bytes[start..]);
            (whole, Some(start..end))
        }
    };
    Ok(Json(to_json(
        &bytes,
        &dissect::dissect_elided(&bytes, elided),
    )))
}

/// The bytes of a hex string (whitespace allowed between bytes), or an error naming `wire`.
fn parse_hex(s: &str) -> Result<Vec<u8>, ApiError> {
    let bad = |what: String| {
        ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "wire",
            what,
            format!("hex digits, two per byte, 14 to {MAX_FRAME_BYTES} bytes"),
        )
    };
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.len() > 2 * MAX_FRAME_BYTES {
        return Err(bad(format!(
            "the frame is longer than {MAX_FRAME_BYTES} bytes"
        )));
    }
    if !digits.len().is_multiple_of(2) {
        return Err(bad(format!(
            "an odd number of hex digits ({})",
            digits.len()
        )));
    }
    let nibble = |i: usize| -> Result<u8, ApiError> {
        let c = digits[i];
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| bad(format!("{:?} at digit {i} is not a hex digit", c as char)))
    };
    let mut out = Vec::with_capacity(digits.len() / 2);
    for i in (0..digits.len()).step_by(2) {
        out.push(nibble(i)? << 4 | nibble(i + 1)?);
    }
    if out.is_empty() {
        return Err(bad("no bytes".into()));
    }
    Ok(out)
}

/// The answer document.
pub fn to_json(bytes: &[u8], d: &Dissection) -> Json_ {
    let headers: Vec<Json_> = d
        .headers
        .iter()
        .map(|h| {
            let fields: Vec<Json_> = h
                .fields
                .iter()
                .map(|f| field_json(&bytes[h.range()], f))
                .collect();
            json!({
                "kind": h.kind.id(),
                "name": h.kind.name(),
                "spec": h.spec,
                "start": h.start,
                "len": h.len,
                "fields": fields,
            })
        })
        .collect();
    json!({
        "len": d.len,
        "elided": d.elided.as_ref().map(|r| [r.start, r.end]),
        "frame_check": d.frame_check.as_ref().map(|r| match r {
            Ok(()) => json!({"ok": true}),
            Err(e) => json!({"ok": false, "error": e.to_string()}),
        }),
        "stopped": d.stopped.as_ref().map(|e| e.to_string()),
        "headers": headers,
    })
}

fn field_json(header: &[u8], f: &FieldView) -> Json_ {
    let (value, hex) = match f.value {
        Value::Uint(v) => (v.to_string(), format!("{v:#x}")),
        Value::Mac(a) => (a.to_string(), a.to_string()),
        Value::Ipv4(a) => (a.to_string(), format!("{:#010x}", u32::from_be_bytes(a.0))),
        Value::Bytes => {
            let start = f.bit_offset / 8;
            let end = (start + f.bit_width / 8).min(header.len());
            (format!("{}", end - start), String::new())
        }
    };
    json!({
        "name": f.name,
        "bit_offset": f.bit_offset,
        "bit_width": f.bit_width,
        "value": value,
        "hex": hex,
        "meaning": f.meaning.map(meaning_json),
        "spec": f.spec,
    })
}

fn meaning_json(m: Meaning) -> Json_ {
    match m {
        Meaning::EtherType(t) => json!({"id": "ethertype", "name": ethertype_name(t)}),
        Meaning::Multicast => json!({"id": "multicast"}),
        Meaning::Protocol(p) => json!({"id": "protocol", "name": protocol_name(p)}),
        Meaning::Ecn(e) => json!({"id": "ecn", "name": ecn_name(e)}),
        Meaning::Bytes(n) => json!({"id": "bytes", "n": n}),
        Meaning::Check(v) => match v {
            Verdict::Good => json!({"id": "check", "verdict": "good"}),
            Verdict::Bad { computed } => {
                json!({"id": "check", "verdict": "bad", "computed": format!("{computed:#x}")})
            }
            Verdict::NotComputed => json!({"id": "check", "verdict": "not_computed"}),
            Verdict::Unchecked => json!({"id": "check", "verdict": "unchecked"}),
        },
        Meaning::RoceV2Port => json!({"id": "rocev2"}),
        Meaning::Opcode(op) => json!({
            "id": "opcode",
            "name": op.to_string(),
            "words": opcode_words(op),
            "transport": op.transport().name(),
        }),
        Meaning::DefaultPkey => json!({"id": "default_pkey"}),
        Meaning::Syndrome(s) => match s {
            // The five bits are a credit code, not a count: `count` is what it announces,
            // null for 31 (no credit count: the requester is not limited).
            Syndrome::Ack { credits } => json!({
                "id": "syndrome", "type": "ack", "credits": credits,
                "count": credit_count(credits),
            }),
            Syndrome::RnrNak { timer } => json!({
                "id": "syndrome", "type": "rnr_nak", "timer": timer,
                "wait": rnr_timeout(timer).to_string(),
            }),
            Syndrome::Nak(code) => json!({
                "id": "syndrome", "type": "nak", "code": code.code(), "nak": nak_name(code),
            }),
        },
        Meaning::Priority(p) => json!({"id": "priority", "p": p.get()}),
        Meaning::MacControlOpcode(op) => json!({"id": "macctl", "name": match op {
            rdmalab::wire::pfc::OPCODE_PAUSE => "PAUSE".to_string(),
            rdmalab::wire::pfc::OPCODE_PFC => "PFC".to_string(),
            other => format!("{other:#06x}"),
        }}),
        Meaning::ClassEnable(bits) => {
            let ps: Vec<u8> = (0..8).filter(|p| bits >> p & 1 == 1).collect();
            json!({"id": "class_enable", "priorities": ps})
        }
        Meaning::Quanta { quanta, bit_times } => {
            json!({"id": "quanta", "quanta": quanta, "bit_times": bit_times})
        }
        Meaning::TcpFlags(f) => {
            const NAMES: [(u8, &str); 8] = [
                (0x80, "CWR"),
                (0x40, "ECE"),
                (0x20, "URG"),
                (0x10, "ACK"),
                (0x08, "PSH"),
                (0x04, "RST"),
                (0x02, "SYN"),
                (0x01, "FIN"),
            ];
            let names: Vec<&str> = NAMES
                .iter()
                .filter(|(b, _)| f.bits() & b != 0)
                .map(|(_, n)| *n)
                .collect();
            json!({"id": "tcp_flags", "names": names})
        }
        Meaning::TcpOption(k) => json!({"id": "tcp_option", "name": match k {
            0 => "EOL".to_string(),
            1 => "NOP".to_string(),
            2 => "MSS".to_string(),
            3 => "WS".to_string(),
            4 => "SACK_PERM".to_string(),
            5 => "SACK".to_string(),
            8 => "TS".to_string(),
            other => format!("{other}"),
        }}),
        Meaning::SackHeld(n) => json!({"id": "sack_held", "n": n}),
        Meaning::Reserved => json!({"id": "reserved"}),
    }
}

fn ethertype_name(t: EtherType) -> String {
    match t {
        EtherType::IPV4 => "IPv4".into(),
        EtherType::IPV6 => "IPv6".into(),
        EtherType::VLAN => "802.1Q".into(),
        EtherType::MAC_CONTROL => "MAC Control".into(),
        other => format!("{:#06x}", other.0),
    }
}

fn protocol_name(p: Protocol) -> String {
    match p {
        Protocol::UDP => "UDP".into(),
        Protocol::TCP => "TCP".into(),
        Protocol::ICMP => "ICMP".into(),
        other => other.0.to_string(),
    }
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "Not-ECT",
        Ecn::Ect1 => "ECT(1)",
        Ecn::Ect0 => "ECT(0)",
        Ecn::Ce => "CE",
    }
}

fn nak_name(c: NakCode) -> String {
    match c {
        NakCode::PsnSequenceError => "PSN sequence error".into(),
        NakCode::InvalidRequest => "Invalid request".into(),
        NakCode::RemoteAccessError => "Remote access error".into(),
        NakCode::RemoteOperationalError => "Remote operational error".into(),
        NakCode::InvalidRdRequest => "Invalid RD request".into(),
        NakCode::Reserved(n) => format!("reserved {n}"),
    }
}

/// An opcode as Wireshark words it: the verbs in capitals, the packet's place in the message
/// in title case (`RDMA WRITE Only`, `RDMA READ Response First`, `Acknowledge`).
fn opcode_words(op: rdmalab::wire::Opcode) -> String {
    let Some(o) = op.operation() else {
        return "CNP".into();
    };
    const VERBS: [&str; 10] = [
        "SEND", "RDMA", "WRITE", "READ", "ATOMIC", "FLUSH", "COMPARE", "SWAP", "FETCH", "ADD",
    ];
    o.name()
        .split('_')
        .map(|w| {
            if VERBS.contains(&w) {
                w.to_string()
            } else {
                let mut c = w.chars();
                c.next().map_or_else(String::new, |f| {
                    f.to_string() + &c.as_str().to_ascii_lowercase()
                })
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_in_words() {
        use rdmalab::wire::{Opcode, Operation};
        assert_eq!(
            opcode_words(Opcode::rc(Operation::RdmaWriteOnly)),
            "RDMA WRITE Only"
        );
        assert_eq!(
            opcode_words(Opcode::rc(Operation::RdmaReadResponseFirst)),
            "RDMA READ Response First"
        );
        assert_eq!(
            opcode_words(Opcode::rc(Operation::Acknowledge)),
            "Acknowledge"
        );
        assert_eq!(opcode_words(Opcode::CNP), "CNP");
    }

    #[test]
    fn hex_errors_name_the_field() {
        for bad in ["", "abc", "zz00", &"00".repeat(MAX_FRAME_BYTES + 1)] {
            let e = parse_hex(bad).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("wire"), "{bad:.8}");
        }
        assert_eq!(parse_hex("0a ff").unwrap(), [0x0a, 0xff]);
    }
}
