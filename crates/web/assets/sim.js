// The traffic-simulation page: presets, the experiment-parameters panel, the two paths
// animated from the run's trace, the comparison table, the timeline and charts. The whole
// state is in the URL (`preset`, `set`..., `profile`, `hl`, `speed`, `lang`).

import { t, href, esc, lang } from './i18n.js';
import { term, sentence } from './terms.js';
import { GROUPS, LESSON_KEYS, PARAMS as WORDS, UNITS } from './simparams.js';
import { allowedText, api, errorText, go } from './app.js';
import { pathsSvg, paintAt, spanNs, ladderSvg, cursorAt, fmtNs, layoutKey } from './draw.js';
import { chartSvg } from './chart.js';
import { narrationHtml, stepButtonsHtml, pacing, stretchText, allSteps, markSteps, w as nw } from './narration.js';
import { renderPacketView, stopPacketView } from './packetview.js';
import { renderSimFabric, stopSimFabric } from './simfabric.js';
import './inspector.js';
import { TOURS, tourButtonHtml, startTour } from './tour.js';

const PRESETS = [['lesson1', '①'], ['lesson2', '②'], ['lesson3', '③'], ['lesson4', '④'], ['lesson5', '⑤'], ['lesson5b', '⑤b'], ['lesson6', '⑥']];
const SPEEDS = [0.25, 0.5, 1, 2, 4];

let schema = null;
let anim = null;

function state() {
  const q = new URLSearchParams(location.search);
  const speed = Number(q.get('speed'));
  return {
    preset: q.get('preset') || 'lesson1',
    set: q.getAll('set'),
    profile: q.get('profile'),
    hl: q.get('hl'),
    speed: SPEEDS.includes(speed) ? speed : 1,
  };
}

function url(st) {
  const p = [['preset', st.preset], ...st.set.map((s) => ['set', s])];
  if (st.profile) p.push(['profile', st.profile]);
  if (st.hl) p.push(['hl', st.hl]);
  if (st.speed !== 1) p.push(['speed', String(st.speed)]);
  return href('/sim', p);
}

const yn = (b) => t(b ? 'yes' : 'no');
const colon = () => (lang() === 'en' ? ': ' : '：');
const sep = () => (lang() === 'en' ? ', ' : '、');
const paren = (s) => (lang() === 'en' ? `(${s})` : `（${s}）`);
const pct = (x) => (x == null ? '—' : `${(x * 100).toFixed(1)}%`);
/** The drops a port's MTU caused, said in the page's language (report field `oversize`). */
function oversize(o) {
  if (!o) return '';
  const port = o.port === 'switch' ? (lang() === 'en' ? 'a switch port' : '交换机端口') : o.port.replace(/^host (\d+)$/, lang() === 'en' ? "host $1's port" : '主机 $1 的端口');
  const frame = o.first_frame_bytes == null ? '' : (lang() === 'en' ? ` (a ${o.first_frame_bytes}-byte frame)` : `（其中一帧 ${o.first_frame_bytes} 字节）`);
  return lang() === 'en'
    ? ` (${o.drops} too long for the MTU: ${port} passes frames of at most ${o.frame_limit_bytes} bytes, ${o.port_key} = ${o.port_mtu_bytes}; the path sends ${o.path_key} = ${o.path_mtu_bytes}${frame})`
    : `（其中 ${o.drops} 帧超过 MTU：${port}只放行不超过 ${o.frame_limit_bytes} 字节的帧，${o.port_key} = ${o.port_mtu_bytes}；本路径 ${o.path_key} = ${o.path_mtu_bytes}${frame}）`;
}

// Rows of the comparison table: id, whether it applies, and (text, raw value) per path. The raw
// value goes in `data-value` so a test can compare the page with the API.
const ROWS = [
  ['outcome', () => true, (p) => (p.outcome.status === 'success'
    ? [t('ok'), 'success']
    : [`${p.outcome.verb} → ${sentence(p.outcome.code)} (${sentence(p.outcome.where)})${colon()}${sentence(p.outcome.why)}`, p.outcome.code])],
  ['copies', () => true, (p) => [`${p.data_path.copies} (${p.data_path.copied_bytes} B)`, p.data_path.copies]],
  ['syscalls', () => true, (p) => [String(p.data_path.syscalls), p.data_path.syscalls]],
  ['kernel', () => true, (p) => [`${yn(p.data_path.kernel_local)} / ${yn(p.data_path.kernel_remote)}`, [p.data_path.kernel_local, p.data_path.kernel_remote]]],
  ['transport_in', () => true, (p) => [term(p.transport_in), p.transport_in]],
  ['cpu_stage_count', () => true, (p) => [`${p.data_path.cpu_stages_local.length} / ${p.data_path.cpu_stages_remote.length}`, [p.data_path.cpu_stages_local.length, p.data_path.cpu_stages_remote.length]]],
  ['cpu_stages_local', () => true, (p) => [p.data_path.cpu_stages_local.map((s) => (s.count > 1 ? `${term(s.name)} ×${s.count}` : term(s.name))).join(sep()) || '—', p.data_path.cpu_stages_local.length]],
  ['cpu_stages', () => true, (p) => [p.data_path.cpu_stages_remote.map((s) => (s.count > 1 ? `${term(s.name)} ×${s.count}` : term(s.name))).join(sep()) || '—', p.data_path.cpu_stages_remote.length]],
  ['cpu_per_message', () => true, (p) => [`${fmtNs(p.data_path.cpu_ns_per_message_local)} / ${fmtNs(p.data_path.cpu_ns_per_message_remote)}`, [p.data_path.cpu_ns_per_message_local, p.data_path.cpu_ns_per_message_remote]]],
  ['remote_cpu', () => true, (p) => [`${t(p.remote_cpu)} — ${sentence(p.remote_cpu_why)}`, p.remote_cpu]],
  ['latency', (r) => r.scenario.mode === 'count', (p) => (p.latency ? [`${fmtNs(p.latency.delivered_ns)} ${paren(term(p.latency.delivered_at))}`, p.latency.delivered_ns] : ['—', null])],
  ['placed', (r) => r.scenario.mode === 'count', (p) => (p.latency && p.latency.placed_at_remote_ns != null ? [fmtNs(p.latency.placed_at_remote_ns), p.latency.placed_at_remote_ns] : ['—', null])],
  ['completion', (r) => r.scenario.mode === 'count', (p) => (p.latency ? [`${fmtNs(p.latency.local_completion_ns)} ${paren(term(p.latency.local_completion_at))}`, p.latency.local_completion_ns] : ['—', null])],
  ['bus_bytes', () => true, (p) => [`${p.memory_bus_bytes_per_delivered_byte.local.toFixed(2)} / ${p.memory_bus_bytes_per_delivered_byte.remote.toFixed(2)}`, [p.memory_bus_bytes_per_delivered_byte.local, p.memory_bus_bytes_per_delivered_byte.remote]]],
  ['throughput', (r) => r.scenario.mode === 'stream', (p) => (p.throughput ? [`${p.throughput.gbps.toFixed(2)} Gb/s (${p.throughput.bytes} B / ${fmtNs(p.throughput.window_ns)})`, p.throughput.gbps] : ['—', null])],
  ['retention', (r) => r.scenario.mode === 'stream', (p) => {
    const th = p.throughput;
    if (!th || th.retention == null) return ['—', null];
    const ci = th.retention_ci95 ? t('sim.ci', { a: pct(th.retention_ci95[0]), b: pct(th.retention_ci95[1]) }) : '';
    return [`${pct(th.retention)} / ${th.baseline_gbps.toFixed(2)} Gb/s${ci}`, th.retention];
  }],
  ['loss_model', (r) => r.scenario.mode === 'stream', (p) => {
    const m = p.throughput && p.throughput.model;
    if (!m || m.predicted_retention == null || !m.loss_events) return ['—', null];
    const wait = m.timeout_wait_ns > 0 ? t('sim.lossmodel.wait', { t: fmtNs(m.timeout_wait_ns) }) : '';
    return [t('sim.lossmodel', { model: term(m.model), pred: pct(m.predicted_retention), p: (m.loss_rate * 100).toFixed(2), n: m.loss_events, wait, ratio: m.measured_over_predicted == null ? '—' : m.measured_over_predicted.toFixed(2) }), m.measured_over_predicted];
  }],
  ['recovery', () => true, (p) => {
    const r = p.recovery;
    if (!r) return ['—', null];
    const v = { n: r.loss_events, r: r.resent_packets, t: r.timeouts, p: r.tail_probes };
    if (p.path === 'rdma' && r.selective) return [t('sim.rec.sack', v), r.loss_events];
    return [t(p.path === 'rdma' ? 'sim.rec.rdma' : 'sim.rec.tcp', v), r.loss_events];
  }],
  ['dcqcn', (r) => !!(r.rdma && r.rdma.recovery && r.rdma.recovery.dcqcn), (p) => {
    const d = p.recovery && p.recovery.dcqcn;
    if (!d) return ['—', null];
    return [t('sim.dcqcn', { profile: d.profile, m: d.marked, c: d.cnps_sent, k: d.cuts, g: d.final_rate_gbps.toFixed(2) }), d.cnps_sent];
  }],
  ['cross_traffic', (r) => !!(r.rdma && r.rdma.cross_traffic), (p) => {
    const c = p.cross_traffic;
    if (!c) return ['—', null];
    return [`${c.senders} × ${c.bursts} · ${c.offered_gbps.toFixed(2)} Gb/s · ${t('sim.ceiling')} ${pct(c.ceiling)}`, c.bytes_offered];
  }],
  ['retransmitted', () => true, (p) => [`${p.retransmitted_bytes} B`, p.retransmitted_bytes]],
  ['drops', () => true, (p) => [`${p.drops}${oversize(p.oversize)} / ${p.pfc_pauses} / ${p.ecn_marks}`, [p.drops, p.pfc_pauses, p.ecn_marks]]],
  ['setup_syscalls', () => true, (p) => [String(p.setup.syscalls), p.setup.syscalls]],
  ['setup_kernel', () => true, (p) => [`${yn(p.setup.kernel_local)} / ${yn(p.setup.kernel_remote)}`, [p.setup.kernel_local, p.setup.kernel_remote]]],
  ['setup_cpu', () => true, (p) => [`${fmtNs(p.setup.cpu_ns_local)} / ${fmtNs(p.setup.cpu_ns_remote)}`, [p.setup.cpu_ns_local, p.setup.cpu_ns_remote]]],
  ['setup_duration', () => true, (p) => [fmtNs(p.setup.duration_ns), p.setup.duration_ns]],
  // PFC on the lossless (RoCE) priority, as the simulated fabric sizes it; in the RDMA column.
  ['pfc', (r) => !!r.scenario.pfc, (p, r) => {
    const f = r.scenario.pfc;
    if (p.path !== 'rdma' || !f) return ['', null];
    return [t('sim.pfc', {
      xoff: f.xoff_bytes, from: t(`sim.pfc.${f.xoff_from}`), xon: f.xon_bytes, hr: f.headroom_bytes,
      mtu: f.port_mtu_bytes, resp: Math.round(f.response_ns), q: f.pause_quanta, dur: (f.pause_duration_ns / 1000).toFixed(1),
    }), [f.xoff_bytes, f.xon_bytes, f.headroom_bytes]];
  }],
  // The report's one cross-path figure, shown in the RDMA column.
  ['latency_ratio', (r) => r.rdma_over_tcp_latency != null, (p, r) => (p.path === 'rdma'
    ? [r.rdma_over_tcp_latency.toFixed(3), r.rdma_over_tcp_latency]
    : ['', null])],
];

/** Rows this page added for issue 19 carry their words here (not in i18n.js). */
const ROW_WORDS = {
  cpu_stage_count: { zh: '占 CPU 的阶段数 本端 / 远端', en: 'stages on a CPU local / remote' },
};
const rowLabel = (id) => (ROW_WORDS[id] ? ROW_WORDS[id][lang() === 'en' ? 'en' : 'zh'] : t(`row.${id}`));

/**
 * The comparison table of `report`; with `before` (the previous run of the same preset with
 * other parameters) every value that changed shows as "before → now", so a toggle's effect is
 * read off the table (retention 18.7% → 98.8%).
 */
function tableHtml(report, hl, before = null) {
  const cell = (path, p, f, rowId) => {
    if (!p) return `<td data-path="${path}" class="na">${esc(t('sim.notrun'))}</td>`;
    const [text, v] = f(p, report);
    // A failure marks its own row (the outcome, which says where), not the whole column.
    const bad = rowId === 'outcome' && p.outcome.status === 'failed' ? ' fail fail-cell' : '';
    const bp = before && before[path];
    let was = null;
    if (bp) {
      try { [was] = f(bp, before); } catch { was = null; }
    }
    if (was != null && String(was) !== String(text)) {
      return `<td data-path="${path}" data-value='${esc(JSON.stringify(v))}' class="changed${bad}"><span class="before">${esc(was)}</span> → <strong>${esc(text)}</strong></td>`;
    }
    return `<td data-path="${path}" data-value='${esc(JSON.stringify(v))}' class="${bad}">${esc(text)}</td>`;
  };
  const rows = ROWS.filter(([, applies]) => applies(report)).map(([id, , f]) => `
    <tr data-row="${id}"${id === hl ? ' class="hl" aria-current="true"' : ''}>
      <th scope="row">${esc(rowLabel(id))}</th>${cell('tcp', report.tcp, f, id)}${cell('rdma', report.rdma, f, id)}
    </tr>`).join('');
  const cap = before ? `${esc(t('sim.compare'))} <span class="muted">${esc(t('sim.before'))}</span>` : esc(t('sim.compare'));
  return `<table class="compare"><caption>${cap}</caption>
    <thead><tr><th></th><th scope="col">${esc(t('sim.tcp'))}</th><th scope="col">${esc(t('sim.rdma'))} (${esc(report.rdma ? term(report.rdma.operation) : '')})</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

/** A key's words in the page language: [label, explanation]. */
function words(key) {
  const w = WORDS[key];
  return w ? w[lang() === 'en' ? 'en' : 'zh'] : [key, ''];
}

const BIG = 2 ** 53;
const num = (n) => {
  for (const [u, b] of [['TiB', 2 ** 40], ['GiB', 2 ** 30]]) if (n >= b && n % b === 0) return `${n / b} ${u}`;
  return lang() === 'en' ? n.toLocaleString('en-US') : String(n);
};

/** The unit and allowed range of a key, as the label's muted tail. */
function unitText(k) {
  const unit = k.unit ? ((UNITS[lang()] || {})[k.unit] ?? k.unit) : '';
  let range = '';
  if (k.type === 'an integer' && k.min != null && !(k.choices && k.choices.length)) {
    range = k.max >= BIG ? t('sim.atleast', { a: num(k.min) }) : t('sim.range', { a: num(k.min), b: num(k.max) });
  } else if (k.type === 'a number') {
    range = t('sim.range', { a: 0, b: 1 });
  }
  const parts = [unit, range].filter(Boolean);
  if (!parts.length) return '';
  return lang() === 'en' ? ` (${parts.join(', ')})` : `（${parts.join('，')}）`;
}

function inputFor(k, value) {
  const id = `p-${k.key.replace(/\W/g, '-')}`;
  const [label, explain] = words(k.key);
  const attrs = `id="${id}" data-key="${k.key}" aria-describedby="${id}-x ${id}-err"`;
  let input;
  if (k.type === 'a boolean') {
    input = `<input ${attrs} type="checkbox"${value ? ' checked' : ''}>`;
  } else if (k.choices && k.choices.length) {
    input = `<select ${attrs}>${k.choices.map((c) => `<option${String(c) === String(value) ? ' selected' : ''} value="${esc(c)}">${esc(c)}</option>`).join('')}</select>`;
  } else if (k.type === 'a number') {
    input = `<input ${attrs} type="text" inputmode="decimal" value="${esc(value)}">`;
  } else {
    input = `<input ${attrs} type="text" inputmode="numeric" value="${esc(value)}">`;
  }
  const head = k.type === 'a boolean'
    ? `<label for="${id}" class="check">${input} <span class="name">${esc(label)}</span></label>`
    : `<label for="${id}"><span class="name">${esc(label)}</span><span class="unit">${esc(unitText(k))}</span></label>${input}`;
  return `<div class="param" data-param="${k.key}">${head}
    <code class="key" title="${esc(t('sim.raw'))}">${esc(k.key)}</code>
    <span class="explain" id="${id}-x">${esc(explain)}</span>
    <span class="field-error" id="${id}-err" role="alert" hidden></span></div>`;
}

/** The panel: this preset's knobs first, then every other key by group, as fieldsets. */
function paramsHtml(plan, preset) {
  const keys = new Map(schema.keys.map((k) => [k.key, k]));
  const first = (LESSON_KEYS[preset] || []).filter((p) => keys.has(p));
  const gi = lang() === 'en' ? 2 : 1;
  const set = (legend, list, group) => (list.length ? `<fieldset${group ? ` data-group="${group}"` : ' class="knobs"'}><legend>${esc(legend)}</legend><div class="grid">${list.map((k) => inputFor(keys.get(k), plan[k])).join('')}</div></fieldset>` : '');
  const rest = GROUPS.map((g) => set(g[gi], schema.keys.map((k) => k.key).filter((k) => !first.includes(k) && !(WORDS[k] && WORDS[k].cliOnly) && (WORDS[k] ? WORDS[k].g : 'workload') === g[0]), g[0]));
  return set(t('sim.knobs'), first, null) + rest.join('');
}

/** The value an edited field stands for, as `--set` takes it (strings quoted). */
function literal(el, spec) {
  if (el.type === 'checkbox') return String(el.checked);
  const v = el.value.trim();
  if (spec && spec.type === 'a string') return `"${v}"`;
  return v;
}

/** The error of a field's text, or null (integers in the schema's range, probabilities). */
function fieldError(el, spec) {
  if (!spec || el.type === 'checkbox' || el.tagName === 'SELECT') return null;
  const v = el.value.trim();
  const label = words(spec.key)[0];
  if (spec.type === 'a number') {
    const x = Number(v);
    return v !== '' && Number.isFinite(x) && x >= 0 && x <= 1 ? null : t('err.prob', { label });
  }
  if (spec.auto && v === 'auto') return null;
  // An open range ("at least 0") reads as its own sentence, not "from at least 0".
  const bad = spec.max >= BIG
    ? t('err.intmin', { label, a: num(spec.min) })
    : t('err.int', { label, range: t('sim.range', { a: num(spec.min), b: num(spec.max) }) });
  if (!/^\d{1,19}$/.test(v)) return bad;
  const n = BigInt(v);
  return n >= BigInt(spec.min) && n <= BigInt(spec.max) ? null : bad;
}

/** Shows `text` under the field of `key` (null clears it); false when the panel has no such field. */
function showFieldError(form, key, text) {
  const box = form.querySelector(`.param[data-param="${CSS.escape(key)}"]`);
  if (!box) return false;
  const el = box.querySelector('[data-key]');
  const err = box.querySelector('.field-error');
  err.textContent = text || '';
  err.hidden = !text;
  box.classList.toggle('invalid', !!text);
  if (text) el.setAttribute('aria-invalid', 'true'); else el.removeAttribute('aria-invalid');
  return true;
}

function stopAnimation() {
  if (anim) cancelAnimationFrame(anim.raf);
  anim = null;
}

/** Watches the drawing's box: a change of layout (side by side ↔ stacked, or the stacked
 * drawing's width) redraws the paths. */
let pathsWatch = null;

/**
 * Draws the two paths at the width of their box and redraws them when that width changes
 * (a resize, a phone turned sideways), repainting the time shown: the animation's own frame
 * when one runs, else the resting drawing.
 */
function drawPaths(main, report) {
  if (pathsWatch) pathsWatch.disconnect();
  const box = main.querySelector('#paths');
  box.innerHTML = pathsSvg(report, box.clientWidth);
  pathsWatch = new ResizeObserver(() => {
    const svg = box.querySelector('svg.paths');
    if (!box.isConnected || !svg || svg.dataset.layout === layoutKey(box.clientWidth)) return;
    box.innerHTML = pathsSvg(report, box.clientWidth);
    if (anim && anim.show) anim.show();
    else paintAt(box.querySelector('svg.paths'), report, -1);
  });
  pathsWatch.observe(box);
}

function startAnimation(root, report, speed) {
  stopAnimation();
  const span = spanNs(report);
  const slider = root.querySelector('#time');
  const label = root.querySelector('#tlabel');
  const btn = root.querySelector('#play');
  const prev = root.querySelector('#step-prev');
  const next = root.querySelector('#step-next');
  const stepof = root.querySelector('#stepof');
  if (!span) {
    paintAt(root.querySelector('svg.paths'), report, -1);
    slider.disabled = true; btn.disabled = true; prev.disabled = true; next.disabled = true;
    return;
  }
  // Every step stays on screen at least MIN_STAGE_MS at 1×: the clock runs in played time
  // (`ms`), mapped piecewise onto simulated time (narration.js).
  const pace = pacing(report, span);
  const all = allSteps(report);
  root.querySelector('#stretch').textContent = stretchText(span, pace.total);
  const a = { raf: 0, ms: 0, playing: !matchMedia('(prefers-reduced-motion: reduce)').matches, last: null, speed };
  anim = a;
  const show = () => {
    const tn = pace.toSim(a.ms);
    window.__rdmalabTime = tn;
    // The drawing is looked up each frame: a resize may have redrawn it (drawPaths).
    paintAt(root.querySelector('svg.paths'), report, tn);
    cursorAt(root, span, tn);
    const k = markSteps(root, report, tn, all);
    stepof.textContent = nw('stepof', { i: k + 1, n: all.length });
    slider.value = String(Math.round((a.ms / pace.total) * 1000));
    label.textContent = `${fmtNs(tn)} / ${fmtNs(span)}`;
    btn.textContent = a.playing ? t('sim.pause') : t('sim.play');
  };
  a.show = show;
  const tick = (now) => {
    if (anim !== a) return;
    if (a.playing && a.last != null) {
      a.ms += (now - a.last) * a.speed;
      if (a.ms > pace.total) a.ms = 0;
    }
    a.last = now;
    show();
    a.raf = requestAnimationFrame(tick);
  };
  // Step forward / back: to the start of the next (previous) step of either path, paused.
  const go = (dir) => {
    const tn = pace.toSim(a.ms);
    const eps = 1e-6;
    const starts = [...new Set(all.map((s) => s.start))];
    const target = dir > 0 ? starts.find((x) => x > tn + eps) : [...starts].reverse().find((x) => x < tn - eps);
    a.playing = false;
    if (target != null) a.ms = pace.toReal(target);
    else if (dir < 0) a.ms = 0;
    show();
  };
  prev.onclick = () => go(-1);
  next.onclick = () => go(1);
  slider.oninput = () => { a.ms = (Number(slider.value) / 1000) * pace.total; a.playing = false; show(); };
  btn.onclick = () => { a.playing = !a.playing; show(); };
  show();
  a.raf = requestAnimationFrame(tick);
}

/** Axis words of the page's charts (this page's own table, not i18n.js). */
const CHART_WORDS = {
  zh: { cpu_y: 'CPU 时间（µs）', lat_y: '延迟（µs）', tput_x: '测量窗口内的时间（µs）', tput_y: '吞吐（Gb/s）', ret_y: '保持率（%）',
    ret: '保持率', lo: '95% 下限', hi: '95% 上限', lossfree: '无丢包时' },
  en: { cpu_y: 'CPU time (µs)', lat_y: 'latency (µs)', tput_x: 'time in the measured window (µs)', tput_y: 'throughput (Gb/s)', ret_y: 'retention (%)',
    ret: 'retention', lo: '95% low', hi: '95% high', lossfree: 'loss-free' },
};
const cw = (k) => CHART_WORDS[lang() === 'en' ? 'en' : 'zh'][k];
const us = (ns) => ns / 1000;

/**
 * The page's charts, drawn by chart.js at `width` px: CPU time per message and (count runs)
 * the one-message latency as bars; (stream runs) each batch's throughput over the measured
 * window as steps, with each path's loss-free rate, and the retention with its 95% interval.
 */
function chartsHtml(report, width) {
  const paths = [['TCP', report.tcp], ['RDMA', report.rdma]].filter(([, p]) => p);
  const box = (svg) => `<figure class="sim-chart">${svg}</figure>`;
  const out = [];
  const sides = [t('side.local'), t('side.remote')];
  out.push(chartSvg({ id: 'cpu', kind: 'bar', y_unit: 'µs', series: paths.map(([n, p]) => ({
    name: n, labels: sides,
    points: [[0, us(p.data_path.cpu_ns_per_message_local)], [1, us(p.data_path.cpu_ns_per_message_remote)]],
  })) }, { title: t('chart.cpu'), width, yLabel: cw('cpu_y'), yUnit: 'µs' }));
  if (report.scenario.mode === 'count') {
    const lat = paths.filter(([, p]) => p.latency);
    out.push(chartSvg({ id: 'latency', kind: 'bar', y_unit: 'µs', series: lat.map(([n, p]) => ({
      name: n, labels: [t('chart.latency')], points: [[0, us(p.latency.delivered_ns)]],
    })) }, { title: t('chart.latency'), width, yLabel: cw('lat_y'), yUnit: 'µs' }));
  } else {
    const st = paths.filter(([, p]) => p.throughput);
    const series = [];
    for (const [n, p] of st) {
      const th = p.throughput;
      const k = th.batch_gbps.length;
      // The report's batches split the measured window into equal spans of time.
      const at = (i) => us((th.window_ns * i) / k);
      series.push({ name: n, points: [[0, th.batch_gbps[0] ?? 0], ...th.batch_gbps.map((g, i) => [at(i + 1), g])] });
      if (th.baseline_gbps) series.push({ name: `${n} ${cw('lossfree')}`, points: [[0, th.baseline_gbps], [at(k), th.baseline_gbps]] });
    }
    out.push(chartSvg({ id: 'tput', kind: 'step', x_unit: 'µs', y_unit: 'Gb/s', series },
      { title: t('chart.tput'), width, xLabel: cw('tput_x'), yLabel: cw('tput_y'), xUnit: 'µs', yUnit: 'Gb/s' }));
    const ret = st.filter(([, p]) => p.throughput.retention != null);
    if (ret.length) {
      const labels = ret.map(([n]) => n);
      const col = (f) => ret.map(([, p], i) => [i, f(p.throughput)]);
      const rs = [{ name: cw('ret'), labels, points: col((th) => th.retention * 100) }];
      if (ret.every(([, p]) => p.throughput.retention_ci95)) {
        rs.push({ name: cw('lo'), labels, points: col((th) => th.retention_ci95[0] * 100) });
        rs.push({ name: cw('hi'), labels, points: col((th) => th.retention_ci95[1] * 100) });
      }
      out.push(chartSvg({ id: 'retention', kind: 'bar', y_unit: '%', series: rs },
        { title: t('chart.retention'), width, yLabel: cw('ret_y'), yUnit: '%' }));
    }
  }
  return out.map(box).join('');
}

/** Draws the charts at the width of one grid cell of `el` (one column on a phone). */
function paintCharts(el, report) {
  const full = el.clientWidth || 960;
  const cols = full >= 2 * 420 + 12 ? 2 : 1;
  const width = Math.max(280, Math.floor((full - (cols - 1) * 12) / cols));
  el.innerHTML = chartsHtml(report, width);
}

/** The last run shown: `{preset, key, report}` (key: preset, overrides and profile). */
let previous = null;
/** A run the panel already made for the page it navigates to: `{key, res}`. */
let pending = null;
/** The panel stays open across the run it started. */
let keepOpen = false;

/**
 * Tells whoever listens (the guided tour's "Do it", tour.js) how a run ended: `sim-done` once
 * its result is drawn, `sim-refused` when the panel or the server refused it.
 */
const announce = (what, detail = {}) => document.dispatchEvent(new CustomEvent(`rdmalab:sim-${what}`, { detail }));

const runKey = (st) => JSON.stringify([st.preset, st.set, st.profile]);

/** The body of `/api/run` for a state. */
function runBody(st) {
  const body = { preset: st.preset, set: st.set };
  if (st.profile) body.profile = st.profile;
  return body;
}

/** The panel's values over `plan`: the plan with the URL's overrides written in. */
function withSets(plan, sets) {
  const out = { ...plan };
  for (const a of sets) {
    const i = a.indexOf('=');
    if (i < 0) continue;
    const v = a.slice(i + 1);
    out[a.slice(0, i)] = v === 'true' ? true : v === 'false' ? false : v.replace(/^"(.*)"$/, '$1');
  }
  return out;
}

/** Wires the panel: Run validates every field, runs once with all changes, shows errors in place. */
function wirePanel(main, plan) {
  const form = main.querySelector('#params');
  const summary = form.querySelector('#params-error');
  const specs = new Map(schema.keys.map((k) => [k.key, k]));
  // Editing a field clears its error; nothing runs until Run.
  form.oninput = (e) => { if (e.target.dataset && e.target.dataset.key) showFieldError(form, e.target.dataset.key, null); };
  form.onchange = form.oninput;
  form.onsubmit = async (e) => {
    e.preventDefault();
    const st = state();
    let bad = 0;
    const set = [...st.set];
    for (const el of form.querySelectorAll('[data-key]')) {
      const k = el.dataset.key;
      const spec = specs.get(k);
      const err = fieldError(el, spec);
      showFieldError(form, k, err);
      if (err) { bad += 1; continue; }
      const lit = literal(el, spec);
      const was = plan[k] === undefined ? undefined : (spec && spec.type === 'a string' ? `"${plan[k]}"` : String(plan[k]));
      if (lit === was) continue;
      const i = set.findIndex((a) => a.startsWith(`${k}=`));
      if (i >= 0) set[i] = `${k}=${lit}`; else set.push(`${k}=${lit}`);
    }
    summary.classList.remove('error');
    if (bad) {
      summary.textContent = t('sim.fix', { n: bad });
      summary.classList.add('error');
      form.querySelector('[aria-invalid=true]').focus();
      announce('refused');
      return;
    }
    summary.textContent = '';
    const next = { ...st, set };
    const btn = form.querySelector('#run');
    btn.disabled = true;
    document.body.dataset.run = 'running';
    let res;
    try {
      res = await api('/api/run', runBody(next));
    } catch (err) {
      btn.disabled = false;
      document.body.dataset.run = 'done';
      const a = err.api || {};
      const label = a.field && specs.has(a.field) ? words(a.field)[0] : null;
      if (!(label && showFieldError(form, a.field, t('err.server', { label, allowed: allowedText(a) })))) {
        summary.textContent = t('err.server.other', { e: errorText(err) });
        summary.classList.add('error');
      } else {
        form.querySelector('[aria-invalid=true]').focus();
      }
      announce('refused');
      return;
    }
    pending = { key: runKey(next), res };
    keepOpen = true;
    go(url(next));
  };
}

export async function renderSim(main, live) {
  stopAnimation();
  stopPacketView();
  if (pathsWatch) { pathsWatch.disconnect(); pathsWatch = null; }
  stopSimFabric();
  const st = state();
  const t0 = performance.now();
  document.body.dataset.run = 'running';
  document.title = `${t('nav.sim')} · ${t('title')}`;
  // Each preset says what it shows: its mark, a short name, and the one line of what it is for.
  const presetButtons = PRESETS.map(([p, mark]) => `<a class="preset${p === st.preset ? ' on' : ''}" data-link data-preset="${p}" href="${url({ ...st, preset: p, set: [], profile: null })}" title="${esc(t(`preset.${p}.what`))}" ${p === st.preset ? 'aria-current="true"' : ''}><span class="mark">${mark}</span> ${esc(t(`preset.${p}`))}</a>`).join('');
  const what = `<p class="preset-what" data-testid="preset-what"><strong>${PRESETS.find(([p]) => p === st.preset)?.[1] ?? ''} ${esc(t(`preset.${st.preset}`))}</strong>${lang() === 'en' ? ': ' : '：'}${esc(t(`preset.${st.preset}.what`))}${st.set.length ? ` · ${esc(t('sim.changed', { n: st.set.length }))}` : ''}${TOURS[`sim-${st.preset}`] ? ` ${tourButtonHtml(`sim-${st.preset}`)}` : ''}</p>`;
  main.innerHTML = `
    <section class="sim">
      <h1>${esc(t('nav.sim'))}</h1>
      <div class="bar">
        <span class="label">${esc(t('sim.presets'))}</span> <span class="presets">${presetButtons}</span>
      </div>
      ${what}
      <p id="status" class="status" role="status" aria-live="polite">${esc(t('sim.running'))}</p>
      <details class="params" ${st.set.length || keepOpen ? 'open' : ''}><summary>${esc(t('sim.params'))}</summary>
        <form id="params" novalidate><div class="groups">…</div>
          <p class="actions"><button id="run" class="button" type="submit">${esc(t('sim.run'))}</button>
             <a class="button secondary" data-link href="${url({ ...st, set: [], profile: null })}">${esc(t('sim.reset'))}</a>
             <span id="params-error" role="status"></span></p>
          <p class="muted">${st.set.map((s) => `<code>--set ${esc(s)}</code>`).join(' ')}</p>
        </form>
      </details>
      <div class="sim-main">
      <div class="sim-left">
      <div class="drawing">
        <div id="paths"></div>
        <div class="controls" id="player">
          <button id="play" type="button">${esc(t('sim.pause'))}</button>
          ${stepButtonsHtml()}
          <label for="speed">${esc(t('sim.speed'))}</label>
          <select id="speed">${SPEEDS.map((s) => `<option value="${s}"${s === st.speed ? ' selected' : ''}>${s}×</option>`).join('')}</select>
          <label for="time">${esc(t('sim.time'))}</label>
          <input id="time" type="range" min="0" max="1000" value="0">
          <span id="tlabel" class="mono"></span>
        </div>
        <p id="stretch" class="muted stretch"></p>
      </div>
      <div id="narration"></div>
      <div id="packetview"></div>
      </div>
      <div class="sim-right"><div id="table"></div></div>
      </div>
      <div id="simfabric"></div>
      <h2>${esc(t('sim.charts'))}</h2>
      <div id="charts" class="charts"></div>
      <h2 id="ladder-title">${esc(t('sim.ladder'))}</h2>
      <div id="ladder"></div>
      <p class="muted">${esc(t('sim.url'))}</p>
    </section>`;
  const tourBtn = main.querySelector('[data-tour]');
  if (tourBtn) tourBtn.onclick = () => startTour(tourBtn.dataset.tour, main);
  schema ??= await api('/api/schema');
  if (!live()) return;
  keepOpen = false;
  let res;
  const key = runKey(st);
  try {
    if (pending && pending.key === key) res = pending.res;
    else res = await api('/api/run', runBody(st));
    pending = null;
  } catch (e) {
    pending = null;
    if (!live()) return;
    const s = main.querySelector('#status');
    s.textContent = `${t('sim.error')}${colon()}${errorText(e)}`;
    s.classList.add('error');
    // The panel stays: the preset's values with the link's overrides, the refused one marked.
    try {
      const base = await api('/api/run', runBody({ ...st, set: [] }));
      if (!live()) return;
      const plan = withSets(base.plan, st.set);
      main.querySelector('.params .groups').innerHTML = paramsHtml(plan, st.preset);
      main.querySelector('details.params').open = true;
      wirePanel(main, base.plan);
      const a = e.api || {};
      const form = main.querySelector('#params');
      if (a.field) showFieldError(form, a.field, t('err.server', { label: words(a.field)[0], allowed: allowedText(a) }));
    } catch { /* the preset itself failed: the status line says why */ }
    document.body.dataset.run = 'error';
    announce('refused');
    return;
  }
  if (!live()) return;
  const report = res.report;
  // For the browser test, which reads the page's own pacing back.
  window.__rdmalabReport = report;
  drawPaths(main, report);
  // Before/after: the previous run of this preset with other parameters stays beside this one.
  const before = previous && previous.preset === st.preset && previous.key !== key ? previous.report : null;
  main.querySelector('#table').innerHTML = tableHtml(report, st.hl, before);
  previous = { preset: st.preset, key, report };
  main.querySelector('.params .groups').innerHTML = paramsHtml(res.plan, st.preset);
  wirePanel(main, res.plan);
  const span = spanNs(report);
  main.querySelector('#ladder').innerHTML = ['tcp', 'rdma'].map((p) => ladderSvg(p, report[p], span)).join('');
  paintCharts(main.querySelector('#charts'), report);
  const stream = report.scenario.mode === 'stream';
  // A stream has no first message: the packet view takes the narration's place and the
  // first-message player and timeline are not shown.
  main.querySelector('#narration').innerHTML = stream ? '' : narrationHtml(report);
  main.querySelector('#player').style.display = stream ? 'none' : '';
  main.querySelector('#stretch').hidden = stream;
  main.querySelector('#ladder-title').hidden = stream;
  main.querySelector('#ladder').hidden = stream;
  const ms = performance.now() - t0;
  main.querySelector('#status').textContent = `${res.preset ? t(`preset.${res.preset}`) : t('sim.custom')} · ${t('sim.done', { ms: ms.toFixed(0) })}`;
  document.body.dataset.renderMs = ms.toFixed(1);
  document.body.dataset.doneAt = String(performance.now());
  document.body.dataset.run = 'done';
  // The row the lesson is about, in view after the run.
  const hlRow = st.hl && main.querySelector(`tr[data-row="${st.hl}"]`);
  if (hlRow) hlRow.scrollIntoView({ block: 'center' });
  announce('done', { preset: st.preset, set: st.set });
  // The fabric view of a run with a switch, fetched after the table (a rerun of its own).
  renderSimFabric(main.querySelector('#simfabric'), runBody(st), res.plan, live);
  if (stream) {
    stopAnimation();
    paintAt(main.querySelector('svg.paths'), report, -1);
    renderPacketView(main.querySelector('#packetview'), runBody(st), res.plan, live);
  } else {
    stopPacketView();
    startAnimation(main, report, st.speed);
  }
  main.querySelector('#speed').onchange = (e) => {
    const s = Number(e.target.value);
    if (anim) anim.speed = s;
    history.replaceState(null, '', url({ ...state(), speed: s }));
  };
}

export { ROWS };
