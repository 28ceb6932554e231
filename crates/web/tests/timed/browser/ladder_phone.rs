//! Issue 19 item 11: the playground's packet ladder fits a phone. At 390×844 the ladder is laid
//! out for its box (pg-ladder.js `ladderGeometry`), so both hosts' lifelines, every frame's line
//! with its arrow head, its label and its time lie inside the box's visible width, and the
//! labels stay at least 10 px; on a wide screen the drawing keeps its 720-unit layout.

use super::{Env, ONE_BROWSER, eval, open, shot_view, wait_for};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use serde_json::Value;

/// What lies outside the ladder box's visible width (lifelines, frame lines, labels, times),
/// the counts drawn, the on-screen font sizes and the drawing's viewBox.
const MEASURE: &str = r#"(() => {
  const box = document.querySelector('#pg-ladder');
  const svg = box.querySelector('svg.pg-ladder');
  const r0 = box.getBoundingClientRect();
  const lo = r0.left, hi = r0.left + box.clientWidth;
  const out = [];
  // A line's box leaves out its arrow head, whose tip lies ≤ 1.1 units past the line's end
  // (the marker's refX 9 of 10, at 6 × the 1.8 stroke): lines keep 2 px more room.
  const chk = (what, e, head = 0) => { const r = e.getBoundingClientRect();
    if (r.left < lo - 0.5 + head || r.right > hi + 0.5 - head) out.push(`${what}: ${r.left.toFixed(1)}..${r.right.toFixed(1)} outside ${lo.toFixed(1)}..${hi.toFixed(1)}`); };
  const lives = [...svg.querySelectorAll('.pg-life')];
  const lines = [...svg.querySelectorAll('.pg-frame line')];
  lives.forEach((e, i) => chk(`lifeline ${i}`, e));
  lines.forEach((e, i) => chk(`frame ${i} line`, e, 2));
  svg.querySelectorAll('.pg-frame .pg-ll').forEach((e, i) => chk(`frame ${i} label ${e.textContent}`, e));
  svg.querySelectorAll('.pg-frame .pg-lt').forEach((e, i) => chk(`frame ${i} time`, e));
  const scale = svg.getScreenCTM().a;
  const px = (s) => Math.min(...[...svg.querySelectorAll(s)].map((e) => parseFloat(getComputedStyle(e).fontSize) * scale));
  return { outside: out, lifelines: lives.length, frames: lines.length, label_px: px('.pg-ll'), time_px: px('.pg-lt'),
    scrolls: box.scrollWidth > box.clientWidth + 1, viewbox: svg.getAttribute('viewBox') };
})()"#;

async fn show_all_steps(page: &chromiumoxide::page::Page) {
    eval::<bool>(
        page,
        "(() => { const c = document.querySelector('#pg-all'); if (!c.checked) { c.checked = true; c.dispatchEvent(new Event('change')); } return true; })()",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_playground_ladder_fits_a_phone() {
    let _one = ONE_BROWSER.lock().await;
    let Some(env) = Env::start("ladderphone").await else {
        return;
    };
    let (base, page) = (env.base.clone(), env.page.clone());
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 2.0, true))
        .await
        .unwrap();
    for lang in ["zh", "en"] {
        let q = if lang == "en" { "&lang=en" } else { "" };
        // A bring-up and a WRITE; then a dropped frame, its NAK and the go-back-N resend.
        for example in ["write", "drop_nth"] {
            let what = format!("{example} {lang} at 390 px");
            open(&page, &format!("{base}/playground?example={example}{q}")).await;
            wait_for(&page, "document.body.dataset.run === 'done'", &what).await;
            show_all_steps(&page).await;
            // The ladder was drawn while its pane was hidden; showing it lays it out for its box.
            eval::<bool>(
                &page,
                "(() => { document.querySelector('[data-pane-tab=ladder]').click(); return true; })()",
            )
            .await;
            wait_for(
                &page,
                "document.querySelector('#pg-ladder svg.pg-ladder.narrow')",
                &what,
            )
            .await;
            let m: Value = eval(&page, MEASURE).await;
            assert_eq!(m["outside"], serde_json::json!([]), "{what}: {m}");
            assert_eq!(m["lifelines"], 2, "{what}: {m}");
            assert!(m["frames"].as_u64().unwrap() >= 2, "{what}: {m}");
            assert!(m["label_px"].as_f64().unwrap() >= 10.0, "{what}: {m}");
            assert!(m["time_px"].as_f64().unwrap() >= 10.0, "{what}: {m}");
            assert_eq!(
                m["scrolls"], false,
                "{what}: the ladder scrolls sideways: {m}"
            );
            if example == "drop_nth" {
                let text: String =
                    eval(&page, "document.querySelector('#pg-ladder').textContent").await;
                assert!(text.contains("NAK"), "{what}: {text:?}");
                shot_view(&page, &format!("ladder-phone-{lang}-390")).await;
            }
        }
    }
    // A wide screen keeps the desktop drawing: 720 units, scaled into its box.
    page.execute(SetDeviceMetricsOverrideParams::new(1440, 900, 1.0, false))
        .await
        .unwrap();
    open(&page, &format!("{base}/playground?example=drop_nth")).await;
    wait_for(
        &page,
        "document.body.dataset.run === 'done'",
        "drop_nth wide",
    )
    .await;
    show_all_steps(&page).await;
    let m: Value = eval(&page, MEASURE).await;
    assert!(
        m["viewbox"].as_str().unwrap().starts_with("0 0 720 "),
        "wide: {m}"
    );
    assert_eq!(m["outside"], serde_json::json!([]), "wide: {m}");
    env.stop().await;
}
