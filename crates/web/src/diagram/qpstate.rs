//! The QP state diagram, drawn from the same transition table `modify_qp` checks
//! (`verbs::modify::QP_STATE_TABLE`, the kernel's `qp_state_table`): a transition appears here
//! exactly when the simulator accepts it, and a marked transition lists the attributes the
//! table requires for it.

use super::{Svg, esc};
use crate::content::Lang;
use rdmalab::verbs::modify::{MaskRule, QP_STATE_TABLE};
use rdmalab::verbs::types::{QpState, QpType};

/// Where each state's box sits (centre, in the drawing's units).
fn place(s: QpState) -> (f64, f64) {
    match s {
        QpState::Reset => (70.0, 60.0),
        QpState::Init => (230.0, 60.0),
        QpState::Rtr => (390.0, 60.0),
        QpState::Rts => (550.0, 60.0),
        QpState::Sqd => (550.0, 200.0),
        QpState::Sqe => (390.0, 200.0),
        QpState::Err => (150.0, 200.0),
    }
}

const BOX_W: f64 = 74.0;
const BOX_H: f64 = 32.0;

/// Where the segment from the centre of a box toward `(tx, ty)` leaves the box.
fn edge(c: (f64, f64), t: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = (t.0 - c.0, t.1 - c.1);
    let sx = if dx == 0.0 {
        f64::INFINITY
    } else {
        (BOX_W / 2.0) / dx.abs()
    };
    let sy = if dy == 0.0 {
        f64::INFINITY
    } else {
        (BOX_H / 2.0) / dy.abs()
    };
    let s = sx.min(sy);
    (c.0 + dx * s, c.1 + dy * s)
}

fn qp_type(s: &str) -> QpType {
    match s {
        "UC" => QpType::Uc,
        "UD" => QpType::Ud,
        _ => QpType::Rc,
    }
}

/// Whether `from → to` is one of the marked transitions (`*` matches every state).
fn is_marked(marked: &[(String, String)], from: QpState, to: QpState) -> bool {
    marked
        .iter()
        .any(|(a, b)| (a == "*" || a == from.name()) && b == to.name())
}

fn attrs(rule: MaskRule) -> (String, String) {
    let join = |m: rdmalab::verbs::flags::QpAttrMask| m.iter_names().collect::<Vec<_>>().join(", ");
    (join(rule.required), join(rule.optional))
}

/// The diagram for `qp_type` (`RC`, `UC`, `UD`) with `marked` transitions drawn in the accent
/// colour, and under it the attributes each marked transition requires.
pub fn draw(marked: &[(String, String)], qp_type_name: &str, lang: Lang) -> String {
    let t = qp_type(qp_type_name);
    // SQE exists only for UC and UD: an RC QP goes from a send error straight to ERR.
    let states: Vec<QpState> = QpState::ALL
        .into_iter()
        .filter(|s| *s != QpState::Sqe || t != QpType::Rc)
        .collect();
    let rows: Vec<_> = QP_STATE_TABLE
        .iter()
        .filter(|r| states.contains(&r.from) && states.contains(&r.to))
        // SQE→RTS is listed for RC with no attributes, but an RC QP never is in SQE.
        .collect();
    let mut svg = Svg::new(640.0, 260.0, "qpstate");
    let title = match lang {
        Lang::Zh => format!("{qp_type_name} QP 的状态转换（与模拟器的 modify_qp 检查同一张表）"),
        Lang::En => format!(
            "{qp_type_name} QP state transitions (the table the simulator's modify_qp checks)"
        ),
    };
    svg.title(&title);
    svg.marker("qa", "#9aa3ad");
    svg.marker("qb", "#c2410c");
    // Unmarked arrows first, marked on top.
    for pass in [false, true] {
        for r in &rows {
            let m = is_marked(marked, r.from, r.to);
            if m != pass {
                continue;
            }
            let (stroke, width, mark) = if m {
                ("#c2410c", 2.4, "qb")
            } else {
                ("#9aa3ad", 1.1, "qa")
            };
            let (a, b) = (place(r.from), place(r.to));
            if r.from == r.to {
                // A loop over the box.
                let (x, y) = (a.0, a.1 - BOX_H / 2.0);
                svg.raw(&format!(
                    r#"<path d="M{:.1},{y:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{y:.1}" fill="none" stroke="{stroke}" stroke-width="{width}" marker-end="url(#{mark})"><title>{} → {}</title></path>"#,
                    x - 12.0,
                    x - 24.0,
                    y - 30.0,
                    x + 24.0,
                    y - 30.0,
                    x + 12.0,
                    r.from,
                    r.to
                ));
                continue;
            }
            // Two arrows between the same pair (INIT→RESET beside RESET→INIT) are offset
            // sideways so both stay visible.
            let back = rows.iter().any(|o| o.from == r.to && o.to == r.from);
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let off = if back { 5.0 } else { 0.0 };
            let (nx, ny) = (-dy / len * off, dx / len * off);
            let p = edge(a, b);
            let q = edge(b, a);
            svg.raw(&format!(
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}" stroke-width="{width}" marker-end="url(#{mark})"><title>{} → {}</title></line>"#,
                p.0 + nx,
                p.1 + ny,
                q.0 + nx,
                q.1 + ny,
                r.from,
                r.to
            ));
        }
    }
    for s in &states {
        let (x, y) = place(*s);
        let hot = marked.iter().any(|(a, b)| a == s.name() || b == s.name());
        svg.raw(&format!(
            r#"<rect x="{:.1}" y="{:.1}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{}" stroke="{}" stroke-width="1.4"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-weight="600">{}</text>"#,
            x - BOX_W / 2.0,
            y - BOX_H / 2.0,
            if hot { "#fff7ed" } else { "#f8fafc" },
            if hot { "#c2410c" } else { "#64748b" },
            y + 5.0,
            s.name()
        ));
    }
    let note = match lang {
        Lang::Zh => "每个箭头都是一次合法的 ibv_modify_qp；表里没有的箭头会被拒绝（EINVAL）。",
        Lang::En => {
            "Every arrow is a legal ibv_modify_qp; any arrow not drawn is refused (EINVAL)."
        }
    };
    svg.raw(&format!(
        r##"<text x="10" y="252" font-size="12" fill="#475569">{}</text>"##,
        esc(note)
    ));
    let mut out = svg.finish();
    // The marked transitions, with the attributes the table requires for this QP type.
    let mut items = String::new();
    for r in &rows {
        if !is_marked(marked, r.from, r.to) {
            continue;
        }
        let (req, opt) = attrs(r.rule(t));
        let none = match lang {
            Lang::Zh => "只有 STATE",
            Lang::En => "STATE only",
        };
        let (lr, lo, colon, semi) = match lang {
            Lang::Zh => ("必填属性", "可选属性", "：", "；"),
            Lang::En => ("required", "optional", ": ", "; "),
        };
        let req = if req.is_empty() {
            esc(none)
        } else {
            format!("<code>{}</code>", esc(&req))
        };
        items.push_str(&format!(
            "<li><strong>{} → {}</strong>{colon}{lr} {req}{}</li>",
            r.from,
            r.to,
            if opt.is_empty() {
                String::new()
            } else {
                format!("{semi}{lo} <code>{}</code>", esc(&opt))
            }
        ));
    }
    if !items.is_empty() {
        out.push_str(&format!(r#"<ul class="qp-attrs">{items}</ul>"#));
    }
    // Every drawn transition as a table: the diagram's text alternative.
    let (summary, head, marked_word) = match lang {
        Lang::Zh => (
            format!("以表格查看 {qp_type_name} 的全部合法转换"),
            "<th>从</th><th>到</th><th>必填属性</th><th>可选属性</th>",
            "（本章讨论的）",
        ),
        Lang::En => (
            format!("All legal {qp_type_name} transitions as a table"),
            "<th>from</th><th>to</th><th>required</th><th>optional</th>",
            " (this chapter's)",
        ),
    };
    let mut trs = String::new();
    for r in &rows {
        let (req, opt) = attrs(r.rule(t));
        let m = if is_marked(marked, r.from, r.to) {
            marked_word
        } else {
            ""
        };
        trs.push_str(&format!(
            "<tr><td>{}</td><td>{}{m}</td><td>{}</td><td>{}</td></tr>",
            r.from,
            r.to,
            esc(&req),
            esc(&opt)
        ));
    }
    out.push_str(&format!(
        r#"<details class="diagram-table"><summary>{}</summary><table><thead><tr>{head}</tr></thead><tbody>{trs}</tbody></table></details>"#,
        esc(&summary)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diagram_draws_the_table_and_marks_what_is_asked() {
        let marked = vec![("INIT".to_string(), "RTR".to_string())];
        let rc = draw(&marked, "RC", Lang::En);
        let arrows = rc.matches("<title>").count();
        let table_rc = QP_STATE_TABLE
            .iter()
            .filter(|r| r.from != QpState::Sqe && r.to != QpState::Sqe)
            .count();
        // One title for the drawing, one per arrow; one table row per arrow.
        assert_eq!(arrows, table_rc + 1);
        assert_eq!(rc.matches("<tr><td>").count(), table_rc);
        assert!(!rc.contains(">SQE<"), "RC has no SQE state");
        assert!(rc.contains("INIT → RTR</strong>: required <code>"));
        assert!(
            draw(&[("RESET".into(), "RESET".into())], "RC", Lang::En)
                .contains("RESET → RESET</strong>: required STATE only</li>")
        );
        assert!(draw(&marked, "RC", Lang::Zh).contains("INIT → RTR</strong>：必填属性"));
        assert!(rc.contains("DEST_QPN") && rc.contains("RQ_PSN"));
        let ud = draw(&[("SQE".into(), "RTS".into())], "UD", Lang::Zh);
        assert!(ud.contains(">SQE<"), "UD has SQE");
        assert!(
            ud.contains(
                "SQE → RTS</strong>：必填属性 只有 STATE；可选属性 <code>CUR_STATE, QKEY</code>"
            ),
            "{ud}"
        );
        let all_err = draw(&[("*".into(), "ERR".into())], "RC", Lang::En);
        let into_err = QP_STATE_TABLE
            .iter()
            .filter(|r| r.to == QpState::Err && r.from != QpState::Sqe)
            .count();
        assert!(into_err >= 5);
        assert_eq!(
            all_err
                .matches("stroke=\"#c2410c\" stroke-width=\"2.4\"")
                .count(),
            into_err
        );
    }
}
