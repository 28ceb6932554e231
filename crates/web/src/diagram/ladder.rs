//! A ladder diagram of the frames a verbs session put on the wire: one vertical line per host,
//! one arrow per frame in send order, labelled with what a learner reads in Wireshark — the
//! opcode, the PSN, the RETH's length, the AETH's syndrome (ACK with its MSN, NAK with its
//! code, RNR NAK with its timer), immediate data — and the simulated time it left. Long quiet
//! stretches (a retransmission timeout) are drawn as a break that says how long they were, so a
//! 65 µs timeout and a 90 ns gap between packets both stay readable.

use super::{Svg, esc};
use crate::content::Lang;
use serde_json::Value;

/// Most frames drawn; the rest are counted under the diagram.
pub const MAX_FRAMES: usize = 80;

/// A gap longer than this many picoseconds between two frames is drawn as a break.
const BREAK_PS: u64 = 5_000_000;

const ROW: f64 = 36.0;
const TOP: f64 = 46.0;
const BREAK_H: f64 = 22.0;

/// What a NAK code says, in the page's language.
fn nak_text(code: &str, lang: Lang) -> String {
    let (zh, en) = match code {
        "PsnSequenceError" => ("PSN 序号错误", "PSN sequence error"),
        "InvalidRequest" => ("无效请求", "invalid request"),
        "RemoteAccessError" => ("远端访问错误", "remote access error"),
        "RemoteOperationalError" => ("远端操作错误", "remote operational error"),
        "InvalidRdRequest" => ("无效的 RD 请求", "invalid RD request"),
        other => (other, other),
    };
    match lang {
        Lang::Zh => zh.to_string(),
        Lang::En => en.to_string(),
    }
}

/// A frame's label: opcode, PSN and its headers' fields.
fn label(f: &Value, lang: Lang) -> String {
    let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
    let n = |k: &str| f.get(k).and_then(Value::as_u64);
    let kind = s("kind");
    let bytes = n("len").unwrap_or(0);
    match kind {
        "tcp" => {
            return match lang {
                Lang::Zh => format!("TCP（带外交换），{bytes} 字节"),
                Lang::En => format!("TCP (out-of-band exchange), {bytes} B"),
            };
        }
        "pfc" => return "PFC PAUSE".to_string(),
        "cnp" => return "CNP".to_string(),
        _ => {}
    }
    let mut parts = Vec::new();
    if let Some(a) = f.get("aeth") {
        let msn = a.get("msn").and_then(Value::as_u64).unwrap_or(0);
        let syn = a.get("syndrome").and_then(Value::as_str).unwrap_or("");
        parts.push(match syn {
            "NAK" => format!(
                "NAK: {}",
                nak_text(a.get("nak").and_then(Value::as_str).unwrap_or(""), lang)
            ),
            "RNR_NAK" => {
                let code = a.get("rnr_timer").and_then(Value::as_u64).unwrap_or(0);
                match lang {
                    Lang::Zh => format!("RNR NAK（计时器编码 {code}）"),
                    Lang::En => format!("RNR NAK (timer code {code})"),
                }
            }
            _ => {
                let op = s("opcode").trim_start_matches("RC ").to_string();
                if op == "ACKNOWLEDGE" {
                    "ACK".to_string()
                } else {
                    op
                }
            }
        });
        if let Some(psn) = n("psn") {
            parts.push(format!("PSN {psn}"));
        }
        parts.push(format!("MSN {msn}"));
    } else {
        parts.push(
            s("opcode")
                .trim_start_matches("RC ")
                .trim_start_matches("UC ")
                .trim_start_matches("UD ")
                .to_string(),
        );
        if let Some(psn) = n("psn") {
            parts.push(format!("PSN {psn}"));
        }
        if let Some(len) = f
            .get("reth")
            .and_then(|r| r.get("len"))
            .and_then(Value::as_u64)
        {
            parts.push(match lang {
                Lang::Zh => format!("RETH 长度 {len}"),
                Lang::En => format!("RETH len {len}"),
            });
        }
    }
    if let Some(imm) = n("imm") {
        parts.push(format!("imm 0x{imm:x}"));
    }
    parts.push(match lang {
        Lang::Zh => format!("{bytes} 字节"),
        Lang::En => format!("{bytes} B"),
    });
    parts.join(" · ")
}

fn us(ps: u64) -> String {
    format!("{:.3} µs", ps as f64 / 1e6)
}

/// The ladder of the frames in `report` (a verbs session's JSON), only of steps `a..=b`
/// (indices of its `steps` array, from 0, as `vfig` paths count them) when given. `None` when those steps put no frame on the wire.
pub fn draw(report: &Value, steps: Option<(u32, u32)>, lang: Lang) -> Option<String> {
    let hosts: Vec<&str> = report
        .get("hosts")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let mut frames: Vec<&Value> = Vec::new();
    let mut more = 0u64;
    for (i, st) in report.get("steps")?.as_array()?.iter().enumerate() {
        let i = i as u32;
        if steps.is_some_and(|(a, b)| i < a || i > b) {
            continue;
        }
        if let Some(fs) = st.get("frames").and_then(Value::as_array) {
            frames.extend(fs);
        }
        more += st.get("frames_more").and_then(Value::as_u64).unwrap_or(0);
    }
    if frames.is_empty() {
        return None;
    }
    if frames.len() > MAX_FRAMES {
        more += (frames.len() - MAX_FRAMES) as u64;
        frames.truncate(MAX_FRAMES);
    }
    let n = hosts.len().max(2);
    let (left, right) = (170.0, 610.0);
    let lane = |h: &str| {
        let i = hosts.iter().position(|x| *x == h).unwrap_or(0);
        left + (right - left) * i as f64 / (n - 1) as f64
    };
    let mut svg = Svg::new(640.0, 100.0, "ladder");
    svg.title(&match lang {
        Lang::Zh => format!("帧的梯形图：{} 个帧（模拟结果）", frames.len()),
        Lang::En => format!("Ladder of frames: {} frames (simulated)", frames.len()),
    });
    svg.marker("la", "#1d4ed8");
    svg.marker("lb", "#15803d");
    svg.marker("lc", "#64748b");
    for h in &hosts {
        let x = lane(h);
        svg.raw(&format!(
            r#"<text x="{x:.1}" y="18" text-anchor="middle" font-weight="600">{}</text>"#,
            esc(h)
        ));
    }
    let time_head = match lang {
        Lang::Zh => "发出时刻",
        Lang::En => "sent at",
    };
    svg.raw(&format!(
        r##"<text x="8" y="18" font-size="12" fill="#475569">{time_head}</text>"##
    ));
    let mut y = TOP;
    let mut last: Option<u64> = None;
    let mut rows = String::new();
    let first_src = frames[0].get("src").and_then(Value::as_str).unwrap_or("");
    for f in &frames {
        let t = f.get("t_ps").and_then(Value::as_u64).unwrap_or(0);
        if let Some(p) = last
            && t.saturating_sub(p) > BREAK_PS
        {
            let gap = match lang {
                Lang::Zh => format!("…… {} 内没有帧 ……", us(t - p)),
                Lang::En => format!("… {} with no frame …", us(t - p)),
            };
            svg.raw(&format!(
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" font-style="italic" fill="#64748b">{}</text>"##,
                (left + right) / 2.0,
                y + 4.0,
                esc(&gap)
            ));
            y += BREAK_H + 8.0;
        }
        last = Some(t);
        let src = f.get("src").and_then(Value::as_str).unwrap_or("");
        let dst = f.get("dst").and_then(Value::as_str).unwrap_or("");
        let (x1, x2) = (lane(src), lane(dst));
        let dropped = f.get("dropped").and_then(Value::as_bool).unwrap_or(false);
        let kind = f.get("kind").and_then(Value::as_str).unwrap_or("");
        let (color, mark) = match (kind, src == first_src) {
            ("tcp", _) | ("pfc", _) | ("other", _) => ("#64748b", "lc"),
            (_, true) => ("#1d4ed8", "la"),
            (_, false) => ("#15803d", "lb"),
        };
        // The arrow slopes down a little less than a row, so its label (above its start)
        // clears the end of the arrow before it.
        let y2 = y + ROW - 14.0;
        let text = label(f, lang);
        let fate = match (dropped, lang) {
            (true, Lang::Zh) => "被网络丢弃",
            (true, Lang::En) => "dropped",
            (false, _) => "",
        };
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{} → {}</td><td>{}</td><td>{fate}</td></tr>",
            us(t),
            esc(src),
            esc(dst),
            esc(&text)
        ));
        // The frame's bytes, for the packet inspector (assets/inspector.js opens it on a click).
        let wire = f.get("wire").and_then(Value::as_str).unwrap_or("");
        let elided = f
            .get("wire_elided")
            .and_then(Value::as_array)
            .map(|r| {
                let n: Vec<String> = r
                    .iter()
                    .filter_map(Value::as_u64)
                    .map(|v| v.to_string())
                    .collect();
                format!(r#" data-wire-elided="{}""#, n.join(","))
            })
            .unwrap_or_default();
        // The frame's length as the record counts it (with the FCS `wire` leaves out), so
        // the inspector can say how its byte count and the ladder's agree.
        let len = f
            .get("len")
            .and_then(Value::as_u64)
            .map(|n| format!(r#" data-len="{n}""#))
            .unwrap_or_default();
        svg.raw(&format!(
            r#"<g class="frame" data-wire="{}"{elided}{len} data-title="{}">"#,
            esc(wire),
            esc(&text)
        ));
        svg.raw(&format!(
            r##"<text x="8" y="{:.1}" font-size="12" fill="#475569">{}</text>"##,
            y + 4.0,
            us(t)
        ));
        if dropped {
            // The frame stops half way, where the fabric dropped it.
            let (mx, my) = ((x1 + x2) / 2.0, (y + y2) / 2.0);
            let gone = match lang {
                Lang::Zh => "被网络丢弃",
                Lang::En => "dropped by the fabric",
            };
            svg.raw(&format!(
                r##"<g class="dropped"><line x1="{x1:.1}" y1="{y:.1}" x2="{mx:.1}" y2="{my:.1}" stroke="#b91c1c" stroke-width="1.6" stroke-dasharray="5 3"/><text x="{mx:.1}" y="{:.1}" text-anchor="middle" fill="#b91c1c" font-weight="700">✕</text><title>{}</title></g>"##,
                my + 5.0,
                esc(&format!("{text} — {gone}"))
            ));
            svg.raw(&format!(
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" fill="#b91c1c">{} — {gone}</text>"##,
                (x1 + x2) / 2.0,
                y - 3.0,
                esc(&text)
            ));
        } else {
            svg.raw(&format!(
                r#"<line x1="{x1:.1}" y1="{y:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{color}" stroke-width="1.6" marker-end="url(#{mark})"><title>{}</title></line>"#,
                esc(&text)
            ));
            svg.raw(&format!(
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" fill="{color}">{}</text>"#,
                (x1 + x2) / 2.0,
                y - 3.0,
                esc(&text)
            ));
        }
        svg.raw("</g>");
        y += ROW;
    }
    if more > 0 {
        let t = match lang {
            Lang::Zh => format!("另有 {more} 个帧未画出"),
            Lang::En => format!("{more} more frames not drawn"),
        };
        svg.raw(&format!(
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12" fill="#64748b">{}</text>"##,
            (left + right) / 2.0,
            y + 4.0,
            esc(&t)
        ));
        y += ROW;
    }
    // The host lines, under the arrows.
    let mut lines = String::new();
    for h in &hosts {
        let x = lane(h);
        lines.push_str(&format!(
            r##"<line x1="{x:.1}" y1="26" x2="{x:.1}" y2="{:.1}" stroke="#cbd5e1" stroke-width="2"/>"##,
            y - 10.0
        ));
    }
    svg.set_height(y + 4.0);
    let s = svg.finish();
    // Put the lanes first so the arrows are drawn over them.
    let at = s.find("</defs>").map_or(0, |i| i + "</defs>".len());
    let (summary, head) = match lang {
        Lang::Zh => (
            "以表格查看这些帧",
            "<th>发出时刻</th><th>方向</th><th>帧</th><th>结果</th>",
        ),
        Lang::En => (
            "These frames as a table",
            "<th>sent at</th><th>from → to</th><th>frame</th><th>fate</th>",
        ),
    };
    Some(format!(
        r#"{}{lines}{}<details class="diagram-table"><summary>{summary}</summary><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></details>"#,
        &s[..at],
        &s[at..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report() -> Value {
        json!({
            "hosts": ["a", "b"],
            "steps": [
                {"index": 1, "frames": [
                    {"t_ps": 1_000_000, "src": "a", "dst": "b", "kind": "roce", "opcode": "RC RDMA_WRITE_FIRST", "psn": 0, "len": 1106, "dropped": false, "reth": {"va": 1, "rkey": 2, "len": 8192}},
                    {"t_ps": 1_090_000, "src": "a", "dst": "b", "kind": "roce", "opcode": "RC RDMA_WRITE_MIDDLE", "psn": 1, "len": 1090, "dropped": true}
                ]},
                {"index": 2, "frames": [
                    {"t_ps": 70_000_000, "src": "b", "dst": "a", "kind": "roce", "opcode": "NAK PsnSequenceError", "psn": 1, "len": 70, "dropped": false, "aeth": {"syndrome": "NAK", "nak": "PsnSequenceError", "msn": 0}}
                ]}
            ]
        })
    }

    #[test]
    fn frames_are_labelled_with_their_headers() {
        let en = draw(&report(), None, Lang::En).unwrap();
        assert!(en.contains("RDMA_WRITE_FIRST · PSN 0 · RETH len 8192 · 1106 B"));
        assert!(en.contains("dropped by the fabric"));
        assert!(en.contains("NAK: PSN sequence error · PSN 1 · MSN 0"));
        assert!(en.contains("with no frame"), "the 69 µs gap is a break");
        let zh = draw(&report(), None, Lang::Zh).unwrap();
        assert!(zh.contains("NAK: PSN 序号错误") && zh.contains("被网络丢弃"));
        assert!(!zh.contains("dropped by"));
        let only2 = draw(&report(), Some((1, 1)), Lang::En).unwrap();
        assert!(!only2.contains("RDMA_WRITE_FIRST") && only2.contains("NAK"));
        assert!(draw(&report(), Some((5, 9)), Lang::En).is_none());
        // The same frames as a table, for a screen reader or a copy.
        assert_eq!(en.matches("<tr><td>").count(), 3);
        assert!(
            en.contains(
                "<td>a → b</td><td>RDMA_WRITE_MIDDLE · PSN 1 · 1090 B</td><td>dropped</td>"
            )
        );
    }
}
