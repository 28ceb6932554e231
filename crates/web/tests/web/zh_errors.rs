//! Scenario conflicts, inapplicable keys and lab parameter errors carry message ids the
//! pages translate (issue 19, item 7): the Chinese table writes them with no English
//! sentence, and the English `error` / `allowed` stay as the CLI prints them.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::OnceLock;
use tower::ServiceExt;
use web::{AppState, app};

fn state() -> AppState {
    static S: OnceLock<AppState> = OnceLock::new();
    S.get_or_init(|| AppState::new().expect("the embedded course loads"))
        .clone()
}

async fn send(req: Request<Body>) -> (StatusCode, Value) {
    let r = app(state()).oneshot(req).await.unwrap();
    let (parts, body) = r.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn post(path: &str, body: Value) -> (StatusCode, Value) {
    let req = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    send(req).await
}

/// The page's Chinese message table, as served.
async fn zh_table() -> Value {
    let (s, t) = send(
        Request::get("/assets/msg-zh.json")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    t
}

/// A message `{id, args}` written from `table` as pg-msg.js writes it: `{name}` filled in,
/// lists joined with "、", nested messages rendered in turn. A missing id is a failure.
fn render(table: &Value, m: &Value) -> String {
    let id = m["id"].as_str().expect("a message id");
    let t = table[id]
        .as_str()
        .unwrap_or_else(|| panic!("msg-zh.json lacks {id}"));
    let arg = |a: &Value| -> String {
        match a {
            Value::String(s) => s.clone(),
            Value::Array(v) => v
                .iter()
                .map(|x| match x {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("、"),
            Value::Object(_) => render(table, a),
            other => other.to_string(),
        }
    };
    let mut out = String::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if let Some(r) = after.strip_prefix('{') {
            out.push('{');
            rest = r;
            continue;
        }
        let close = after.find('}').expect("a closed placeholder");
        out.push_str(&arg(&m["args"][&after[..close]]));
        rest = &after[close + 1..];
    }
    out.push_str(&rest.replace("}}", "}"));
    out
}

/// Runs of two or more plain English words (the browser tests' `english_words` rule: tokens
/// with `_ . = ( ) / digits`, all-capitals acronyms and CamelCase are identifiers).
fn english_runs(text: &str) -> Vec<String> {
    let ident = |w: &str| {
        w.chars().any(|c| "_()./0123456789→+=§".contains(c))
            || (w.len() >= 2
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-'))
    };
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let seps = |c: char| c.is_whitespace() || "，。：；、（）「」".contains(c);
    for tok in text.split(seps).chain([""]) {
        let w = tok.trim_matches(|c: char| "\"'“”‘’()[],.;:!?".contains(c));
        let word = !w.is_empty()
            && w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && w.chars()
                .all(|c| c.is_ascii_alphabetic() || "'-".contains(c));
        if word && !ident(w) {
            run.push(w);
        } else {
            if run.len() >= 2 {
                out.push(run.join(" "));
            }
            run.clear();
        }
    }
    out
}

/// Every conflict and inapplicable-key reason, and every lab parameter message, in the
/// Chinese table has no run of English words (identifiers and key names are fine).
#[tokio::test]
async fn zh_errors_the_chinese_reasons_have_no_english_sentences() {
    let table = zh_table().await;
    let mut n = 0;
    for (id, t) in table.as_object().unwrap() {
        if id.starts_with("scenario.")
            || id.starts_with("lab.")
            || id == "server.scenario_cannot_apply"
        {
            n += 1;
            let t = t.as_str().unwrap();
            assert!(
                english_runs(t).is_empty(),
                "{id}: {t:?} has {:?}",
                english_runs(t)
            );
        }
    }
    assert!(n >= 45, "{n} ids checked");
    // The check itself catches English.
    assert_eq!(english_runs("at most lossless.xoff_bytes (7)"), ["at most"]);
}

/// A conflict (XON above XOFF) through `POST /api/run`: the English as the CLI prints it,
/// and the sentence and reason as ids the zh page writes in Chinese.
#[tokio::test]
async fn zh_errors_a_scenario_conflict_reads_in_chinese() {
    let (s, e) = post(
        "/api/run",
        json!({"preset": "lesson5", "set": ["lossless.xoff_bytes=20000", "lossless.xon_bytes=30000"]}),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["field"], "lossless.xon_bytes");
    assert_eq!(e["allowed"], "at most lossless.xoff_bytes (20000)");
    assert_eq!(
        e["error"],
        "--set lossless.xon_bytes=30000: 1:20: lossless.xon_bytes = 30000 clashes with another key: allowed at most lossless.xoff_bytes (20000)"
    );
    assert_eq!(e["allowed_msg"]["id"], "scenario.conflict.xon_above_xoff");
    let table = zh_table().await;
    assert_eq!(
        render(&table, &e["allowed_msg"]),
        "不超过 lossless.xoff_bytes（20000）"
    );
    assert_eq!(
        render(&table, &e["msg"]),
        "lossless.xon_bytes = 30000 与其他参数冲突：允许 不超过 lossless.xoff_bytes（20000）"
    );
    // A conflict between kinds: UD posts SENDs only.
    let (_, e) = post(
        "/api/run",
        json!({"preset": "lesson1", "set": ["rdma.qp_type=ud", "rdma.operation=write"]}),
    )
    .await;
    assert_eq!(e["field"], "rdma.operation", "{e}");
    assert_eq!(e["allowed"], "\"send\" when rdma.qp_type = \"ud\"");
    assert_eq!(
        render(&table, &e["allowed_msg"]),
        "当 rdma.qp_type = \"ud\" 时只能是 \"send\""
    );
}

/// A key that cannot apply (an ECN threshold with ECN off): the nested reason and the
/// default to keep, in Chinese.
#[tokio::test]
async fn zh_errors_an_inapplicable_key_reads_in_chinese() {
    let (s, e) = post(
        "/api/run",
        json!({"preset": "lesson1", "set": ["switch.ecn_kmin_bytes=6000"]}),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["field"], "switch.ecn_kmin_bytes");
    let allowed = e["allowed"].as_str().unwrap();
    let default = allowed
        .strip_prefix(
            "switch.ecn_kmin_bytes needs switch.ecn = true: no switch marks; leave it at ",
        )
        .unwrap_or_else(|| panic!("{allowed}"));
    assert!(default.parse::<u64>().is_ok(), "{allowed}");
    assert!(
        e["error"].as_str().unwrap().ends_with(&format!(
            "switch.ecn_kmin_bytes = 6000 cannot apply: {allowed}"
        )),
        "{e}"
    );
    let table = zh_table().await;
    let zh = render(&table, &e["allowed_msg"]);
    assert_eq!(
        zh,
        format!(
            "switch.ecn_kmin_bytes 需要 switch.ecn = true：没有交换机打 ECN 标记；请保留默认值 {default}"
        )
    );
    assert_eq!(
        render(&table, &e["msg"]),
        format!("switch.ecn_kmin_bytes = 6000 在这里不起作用：{zh}")
    );
}

/// A lab's parameter errors (a value out of range, a choice, a rule between two parameters)
/// carry ids too; the English stays as `rdmalab lab` prints it.
#[tokio::test]
async fn zh_errors_lab_parameter_errors_read_in_chinese() {
    let table = zh_table().await;
    let (s, e) = post("/api/lab/incast", json!({"senders": 99})).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(
        (e["field"].as_str(), e["error"].as_str()),
        (Some("senders"), Some("senders = 99"))
    );
    assert_eq!(e["allowed"], "an integer in 2..=16");
    assert_eq!(render(&table, &e["allowed_msg"]), "2..=16 之间的整数");
    assert_eq!(render(&table, &e["msg"]), "senders = 99");

    let (_, e) = post("/api/lab/incast", json!({"link_gbps": "40"})).await;
    assert_eq!(e["allowed"], "one of 25, 100", "{e}");
    assert_eq!(render(&table, &e["allowed_msg"]), "25、100 之一");

    let (_, e) = post("/api/lab/incast", json!({"ecn": false, "dcqcn": "nvidia"})).await;
    assert_eq!(e["field"], "dcqcn", "{e}");
    assert_eq!(
        e["error"],
        "dcqcn = nvidia with ecn = false: DCQCN reacts to ECN marks, and nothing marks"
    );
    assert_eq!(e["allowed"], "off, unless ecn = true");
    let zh = render(&table, &e["msg"]);
    assert_eq!(
        zh,
        "dcqcn = nvidia 而 ecn = false：DCQCN 依据 ECN 标记调速，而没有设备打标记"
    );
    assert_eq!(
        render(&table, &e["allowed_msg"]),
        "关闭（off），除非 ecn = true"
    );

    let (_, e) = post(
        "/api/lab/storm",
        json!({"stall_at_us": 1000, "detect_us": 1000}),
    )
    .await;
    assert_eq!(e["field"], "stall_at_us", "{e}");
    assert_eq!(
        render(&table, &e["msg"]),
        "stall_at_us + detect_us = 2000 µs 不早于 duration_us = 1500 µs：看门狗还来不及动作，仿真就结束了"
    );
}
