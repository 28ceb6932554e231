// The first message told step by step beside the drawing (issue 19, item 1): each path's
// stages in order as sentences with their time and cost, read from the run's timeline; a
// player that paces the animation so every stage stays on screen for at least MIN_STAGE_MS
// at 1× (the simulated time is stretched, unevenly, and the page says by how much); step
// forward and back; the current step lit in the list, on the drawing and on the timeline, and
// every box the message went through kept marked.

import { lang, esc } from './i18n.js';
import { term } from './terms.js';
import { drawn, fmtNs } from './draw.js';

const WORDS = {
  zh: {
    title: '第一条消息，一步一步',
    tcp: 'TCP（内核套接字）', rdma: 'RDMA',
    local: '本端', remote: '远端', fabric: '',
    app: '应用', kernel: '内核', nic: '网卡', switch: '交换机',
    cpu: '{d}，占 CPU',
    nocpu: '{d}，网卡和 PCIe 在做，不占 CPU',
    wire: '在交换机里 {d}',
    at: '从 {t} 起',
    sum: '共 {n} 步，占 CPU 的 {c} 步（本端 {l} 步，远端 {r} 步）',
    nokernel: '没有一步进内核：两端的内核框画成“绕过”，线从框外绕过去。',
    none: '这条路没有跑出第一条消息。',
    failed: '第一次尝试到这里为止，之后没有完成。',
    stretch: '慢放：{sim} 的仿真时间在 1× 下放 {real}，平均放慢约 {x} 倍；每一步至少停留 {min} ms，短的阶段拉得更长。',
    prev: '上一步', next: '下一步', play: '播放', pause: '暂停',
    stepof: '第 {i} / {n} 步',
    times: '万',
    current: '当前步',
  },
  en: {
    title: 'The first message, step by step',
    tcp: 'TCP (kernel sockets)', rdma: 'RDMA',
    local: 'local', remote: 'remote', fabric: '',
    app: 'app', kernel: 'kernel', nic: 'NIC', switch: 'switch',
    cpu: '{d} on the CPU',
    nocpu: '{d} in the NIC and PCIe, no CPU',
    wire: '{d} in the switch',
    at: 'from {t}',
    sum: '{n} steps, {c} of them on a CPU ({l} local, {r} remote)',
    nokernel: 'No step enters a kernel: both kernel boxes are drawn bypassed, the line going around them.',
    none: 'This path delivered no first message.',
    failed: 'The first attempt got this far and never completed.',
    stretch: 'Slowed down: {sim} of simulated time plays in {real} at 1×, about {x} times slower on average; every step stays at least {min} ms, short stages are stretched more.',
    prev: 'Previous step', next: 'Next step', play: 'Play', pause: 'Pause',
    stepof: 'step {i} of {n}',
    times: '',
    current: 'current step',
  },
};

/** This module's words in the page language, `{x}` filled from `v`. */
export function w(key, v = {}) {
  const table = WORDS[lang() === 'en' ? 'en' : 'zh'];
  return table[key].replace(/\{(\w+)\}/g, (_, k) => String(v[k]));
}

/** Shortest time a step stays on screen at 1×, ms. */
export const MIN_STAGE_MS = 300;
/** The longer path's first message, played at its own pace, takes this long at 1×, ms. */
const BASE_MS = 6000;

/** ①…㊿, then (51)…: the mark of step `n` (from 1). */
export function mark(n) {
  // ①–⑳ are in every CJK font; ㉑ and beyond are not (WenQuanYi, DejaVu draw boxes).
  if (n <= 20) return String.fromCodePoint(0x2460 + n - 1);
  return `(${n})`;
}

/**
 * The steps of a path's first message (or failed first attempt): its timeline grouped by
 * box and stage, in the order each first started — `{key, side, lane, stage, start, end,
 * busy, count, cpu}`. A stage repeated in one box (a 1 MB message's segments) is one step
 * with its count.
 */
export function stepsOf(p) {
  const d = drawn(p);
  if (!d) return [];
  const unit = new Map((p.latency ? p.latency.breakdown : []).map((b) => [`${b.side}|${b.stage}`, b.unit]));
  const groups = new Map();
  for (const iv of d.timeline) {
    const key = `${iv.side}|${iv.lane}|${iv.stage}`;
    let g = groups.get(key);
    if (!g) {
      const u = unit.get(`${iv.side}|${iv.stage}`);
      g = { key, side: iv.side, lane: iv.lane, stage: iv.stage, start: iv.start_ns, end: iv.end_ns, busy: 0, count: 0, cpu: u ? u === 'cpu' : (iv.lane === 'app' || iv.lane === 'kernel') };
      groups.set(key, g);
    }
    g.start = Math.min(g.start, iv.start_ns);
    g.end = Math.max(g.end, iv.end_ns);
    g.busy += iv.end_ns - iv.start_ns;
    g.count += iv.runs || 1;
  }
  return [...groups.values()].sort((a, b) => a.start - b.start || a.end - b.end);
}

/** The box a step lights, as the drawing names it. */
export const boxOf = (s) => (s.lane === 'switch' ? 'fabric-switch' : `${s.side}-${s.lane}`);

/** One step as a sentence: "① 本端 应用：write() 系统调用进入，200.0 ns，占 CPU（从 0 ns 起）". */
export function sentenceOf(s, i) {
  const en = lang() === 'en';
  const where = s.lane === 'switch' ? w('switch') : `${w(s.side)}${en ? ' ' : ''}${w(s.lane)}`;
  const name = `${term(s.stage)}${s.count > 1 ? ` ×${s.count}` : ''}`;
  const d = fmtNs(s.busy);
  const cost = s.lane === 'switch' ? w('wire', { d }) : w(s.cpu ? 'cpu' : 'nocpu', { d });
  const at = w('at', { t: fmtNs(s.start) });
  return en ? `${mark(i + 1)} ${where}: ${name}, ${cost} (${at})` : `${mark(i + 1)} ${where}：${name}，${cost}（${at}）`;
}

/** The narration of both paths: an ordered list per path, with its summary line. */
export function narrationHtml(report) {
  const col = (path) => {
    const p = report[path];
    const steps = stepsOf(p);
    if (!p) return '';
    if (!steps.length) return `<div class="narr-col" data-path="${path}"><h3>${esc(w(path))}</h3><p class="muted">${esc(w('none'))}</p></div>`;
    const cpu = steps.filter((s) => s.cpu && s.lane !== 'switch');
    const sum = w('sum', { n: steps.length, c: cpu.length, l: cpu.filter((s) => s.side === 'local').length, r: cpu.filter((s) => s.side === 'remote').length });
    const nokernel = steps.some((s) => s.lane === 'kernel') ? '' : `<p class="narr-note" data-testid="no-kernel">${esc(w('nokernel'))}</p>`;
    const failed = p.outcome.status === 'failed' ? `<p class="narr-note fail">${esc(w('failed'))}</p>` : '';
    return `<div class="narr-col" data-path="${path}"><h3>${esc(w(path))}</h3>
      <ol class="narr" data-path="${path}">${steps.map((s, i) => `<li data-step="${i}" data-key="${esc(s.key)}" data-lane="${s.lane}" data-cpu="${s.cpu && s.lane !== 'switch'}">${esc(sentenceOf(s, i))}</li>`).join('')}</ol>
      <p class="narr-sum" data-testid="narr-sum-${path}">${esc(sum)}</p>${nokernel}${failed}</div>`;
  };
  return `<div class="narration" aria-live="off"><h2 class="narr-title">${esc(w('title'))}</h2>
    <div class="narr-cols">${col('tcp')}${col('rdma')}</div></div>`;
}

/** The step buttons of the player's bar. */
export function stepButtonsHtml() {
  return `<button type="button" id="step-prev" title="${esc(w('prev'))}">◀ ${esc(w('prev'))}</button>
    <button type="button" id="step-next" title="${esc(w('next'))}">${esc(w('next'))} ▶</button>
    <span id="stepof" class="muted"></span>`;
}

/**
 * The playback clock: simulated time `[0, span]` cut at every step's start and end, each
 * piece played at the message's own pace (BASE_MS for the whole span) but never faster than
 * MIN_STAGE_MS per piece. `toSim(ms)` and `toReal(ns)` map between the two.
 */
export function pacing(report, span) {
  const cuts = new Set([0, span]);
  for (const path of ['tcp', 'rdma']) for (const s of stepsOf(report[path])) { cuts.add(s.start); cuts.add(Math.min(span, s.end)); }
  const b = [...cuts].filter((x) => x >= 0 && x <= span).sort((x, y) => x - y);
  const scale = span > 0 ? BASE_MS / span : 0;
  const real = [0];
  for (let i = 1; i < b.length; i += 1) real.push(real[i - 1] + Math.max(MIN_STAGE_MS, (b[i] - b[i - 1]) * scale));
  const total = real[real.length - 1] || 0;
  const find = (arr, x) => { let lo = 0, hi = arr.length - 1; while (lo < hi - 1) { const m = (lo + hi) >> 1; if (arr[m] <= x) lo = m; else hi = m; } return lo; };
  return {
    total,
    toSim(ms) {
      if (b.length < 2) return 0;
      const i = find(real, Math.min(Math.max(ms, 0), total));
      const f = (ms - real[i]) / Math.max(1e-9, real[i + 1] - real[i]);
      return b[i] + (b[i + 1] - b[i]) * Math.min(1, Math.max(0, f));
    },
    toReal(ns) {
      if (b.length < 2) return 0;
      const i = find(b, Math.min(Math.max(ns, 0), span));
      const f = (ns - b[i]) / Math.max(1e-9, b[i + 1] - b[i]);
      return real[i] + (real[i + 1] - real[i]) * Math.min(1, Math.max(0, f));
    },
  };
}

/** The stretch line: how long the span plays at 1× and how much slower than real that is. */
export function stretchText(span, totalMs) {
  const x = span > 0 ? (totalMs * 1e6) / span : 0;
  let xs;
  if (lang() === 'en') xs = x >= 1e6 ? `${(x / 1e6).toFixed(1)} million` : Math.round(x).toLocaleString('en-US');
  else xs = x >= 1e4 ? `${Math.round(x / 1e4).toLocaleString('zh-CN')} ${w('times')}` : String(Math.round(x));
  return w('stretch', { sim: fmtNs(span), real: `${(totalMs / 1000).toFixed(1)} s`, x: xs, min: MIN_STAGE_MS });
}

/** All steps of both paths' first messages as (path, index, start), in time order. */
export function allSteps(report) {
  const out = [];
  for (const path of ['tcp', 'rdma']) stepsOf(report[path]).forEach((s, i) => out.push({ path, i, start: s.start }));
  return out.sort((a, b) => a.start - b.start || (a.path < b.path ? -1 : 1));
}

/**
 * Marks time `tn` on the page: per path, the current step (the last begun) lit in its list,
 * its box ringed on the drawing and its bars on the timeline; every box a begun step went
 * through marked visited with its count of steps. Returns the index in `allSteps` of the
 * last step begun (-1 before the first).
 */
export function markSteps(root, report, tn, all) {
  for (const path of ['tcp', 'rdma']) {
    const steps = stepsOf(report[path]);
    let cur = -1;
    steps.forEach((s, i) => { if (s.start <= tn) cur = i; });
    const visits = new Map();
    steps.forEach((s, i) => { if (i <= cur) visits.set(boxOf(s), (visits.get(boxOf(s)) || 0) + 1); });
    for (const li of root.querySelectorAll(`ol.narr[data-path="${path}"] li`)) {
      const i = +li.dataset.step;
      li.classList.toggle('current', i === cur);
      li.classList.toggle('done', i < cur);
      if (i === cur) li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
    }
    const curBox = cur >= 0 ? boxOf(steps[cur]) : null;
    for (const g of root.querySelectorAll(`svg.paths g.box[data-path="${path}"]`)) {
      const k = `${g.dataset.side}-${g.dataset.lane}`;
      const n = visits.get(k) || 0;
      g.classList.toggle('visited', n > 0);
      g.classList.toggle('current', k === curBox);
      const v = g.querySelector('text.visits');
      if (v) v.textContent = n ? `✓${n}` : '';
    }
    const curKey = cur >= 0 ? steps[cur].key : null;
    for (const r of root.querySelectorAll(`svg.ladder[data-path="${path}"] rect.bar`)) r.classList.toggle('current', r.dataset.key === curKey);
  }
  let last = -1;
  all.forEach((s, i) => { if (s.start <= tn) last = i; });
  return last;
}
