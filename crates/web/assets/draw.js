// SVG drawings of a run: the two paths side by side (boxes lit from the trace), the
// timeline/ladder of the first message, and small charts. Pure functions from the report.

import { t, esc, lang } from './i18n.js';

// Words of this module's own marks (not in i18n.js: issue 19's additions live with their module).
const SKIP = { zh: { bypassed: '绕过', unreached: '未经过' }, en: { bypassed: 'bypassed', unreached: 'not reached' } };
import { term, sentence } from './terms.js';

const LANES = ['app', 'kernel', 'nic'];
const BOX_W = 124;
const BOX_H = 78;
const ROW_Y = { tcp: 38, rdma: 188 };
// x of each box: local app, kernel, NIC, the switch, remote NIC, kernel, app.
const BOX_X = { 'local-app': 6, 'local-kernel': 144, 'local-nic': 282, 'fabric-switch': 438, 'remote-nic': 594, 'remote-kernel': 732, 'remote-app': 870 };

/** Formats ns as ns, µs or ms. */
export function fmtNs(ns) {
  if (ns == null || Number.isNaN(ns)) return '—';
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(3)} µs`;
  return `${ns.toFixed(1)} ns`;
}

/** What a path's drawing shows: its first message, or the attempt that failed. */
export function drawn(p) {
  if (!p) return null;
  return p.latency || p.failed_attempt || null;
}

function boxKey(iv) {
  return iv.lane === 'switch' ? 'fabric-switch' : `${iv.side}-${iv.lane}`;
}

/** Which box a failure happened at, and what to say there. */
function failureAt(p) {
  const o = p.outcome;
  if (!o || o.status !== 'failed') return null;
  if (o.verb === 'ibv_post_send' || o.verb === 'ibv_post_recv') return { box: 'local-app', text: `${o.verb} → ${sentence(o.code)}` };
  if (o.code === 'no completion') return { box: 'local-app', text: t('sim.silence') };
  // The status as verbs.h names it (`IBV_WC_LOC_PROT_ERR (4, local protection error)`).
  if (/^IBV_WC_LOC_(PROT|LEN|QP_OP)_ERR\b/.test(o.code)) return { box: 'local-nic', text: `${o.verb} → ${sentence(o.code)}` };
  if (/^IBV_WC_REM_/.test(o.code)) return { box: 'remote-nic', text: `${o.verb} → ${sentence(o.code)}` };
  return { box: 'local-app', text: `${o.verb} → ${sentence(o.code)}` };
}

/** Which boxes of the row a path entered: those with an interval of its first message, or
 * (a stream, which draws no message) every box but a kernel the data path never ran in. */
function enteredBoxes(p, ivs) {
  const keys = Object.keys(BOX_X);
  if (!p) return new Set();
  if (drawn(p)) return new Set(keys.filter((k) => (ivs[k] || []).length));
  return new Set(keys.filter((k) => !k.endsWith('-kernel') || p.data_path[`kernel_${k.split('-')[0]}`]));
}

/** Width of `s` in ems at the stage font: CJK one em, the rest about half. */
const ems = (s) => [...s].reduce((n, c) => n + (/[\u2e80-\u9fff\uff00-\uffef]/.test(c) ? 1 : /[A-Z]/.test(c) ? 0.68 : /[\s.,:;()'|!]/.test(c) ? 0.32 : 0.56), 0);

/** `s` in at most two lines of `max` ems, broken at a space or after punctuation when one is
 * near; what does not fit ends in "…". */
export function wrapLabel(s, max = 8.6) {
  if (!s || ems(s) <= max) return s ? [s] : [];
  const chars = [...s];
  let cut = 0;
  let width = 0;
  let soft = -1;
  for (let i = 0; i < chars.length; i += 1) {
    width += ems(chars[i]);
    if (width > max) break;
    cut = i + 1;
    if (/[\s（(、，+/→]/.test(chars[i])) soft = chars[i] === ' ' ? i : i + 1;
  }
  const at = soft > cut / 2 ? soft : cut;
  const first = chars.slice(0, at).join('').trimEnd();
  let rest = chars.slice(at).join('').trimStart();
  if (ems(rest) > max) {
    const r = [...rest];
    let n = 0;
    let k = 0;
    while (k < r.length && n + ems(r[k]) <= max - 0.6) { n += ems(r[k]); k += 1; }
    rest = `${r.slice(0, k).join('')}…`;
  }
  return [first, rest];
}

/**
 * Container widths (CSS px) below this get the stacked drawing. The side-by-side drawing is
 * 1000 units wide and only scales: in a 640 px box its 12 px stage labels render under 8 px,
 * at 390 px (a phone) under 5 px. The stacked drawing is laid out at the box's own width, so
 * its units are CSS pixels and its labels keep their size.
 */
export const STACK_BELOW = 640;

/** Font sizes of the stacked drawing (px; style.css sets the same, both ≥ 12). */
const STACK_FONT = { title: 14, name: 13, stage: 12.5, small: 12 };

/** Which layout a container of `width` px gets: 'wide', or 'stacked-<width>' (re-laid out
 * whenever the width changes, because its units are pixels). */
export function layoutKey(width) {
  return !(width > 0) || width >= STACK_BELOW ? 'wide' : `stacked-${Math.floor(width)}`;
}

/** `s` in lines of at most `max` ems (broken after a space or CJK punctuation when one is
 * near, else anywhere), at most `lines` of them, the last ending in "…" if cut. Spaces stay
 * at the end of their line, so the lines' text joined is `s`. */
function wrapLines(s, max, lines) {
  const out = [];
  let rest = [...(s || '')];
  while (rest.length && out.length < lines) {
    let width = 0;
    let cut = 0;
    let soft = -1;
    for (let i = 0; i < rest.length; i += 1) {
      width += ems(rest[i]);
      if (width > max) break;
      cut = i + 1;
      if (/[\s（(、，,+/→：:]/.test(rest[i])) soft = i + 1;
    }
    if (cut === rest.length) { out.push(rest.join('')); rest = []; break; }
    const at = soft > cut / 2 ? soft : Math.max(1, cut);
    out.push(rest.slice(0, at).join(''));
    rest = rest.slice(at);
    while (rest[0] === ' ') rest.shift();
  }
  if (rest.length && out.length) {
    const last = [...out[out.length - 1]];
    while (last.length && ems(last.join('')) > max - 0.8) last.pop();
    out[out.length - 1] = `${last.join('').trimEnd()}…`;
  }
  return out;
}

/** A row (wide) or column (stacked) title: the path's name, and "not run" when it was not. */
const titleOf = (title, p) => `${title}${p ? '' : ` — ${t('sim.notrun')}`}`;

/**
 * The side-by-side layout (the drawing as it always was): one row per path, seven boxes
 * left to right, 1000 × 300 units scaled to the box.
 */
const WIDE = {
  kind: 'wide',
  W: 1000,
  H: 300,
  stageMax: 8.6,
  box: (path, k) => ({ x: BOX_X[k], y: ROW_Y[path], w: BOX_W, h: BOX_H }),
  title: (path, text) => `<text class="rowtitle" x="8" y="${ROW_Y[path] - 10}">${esc(text)}</text>`,
  name: (b) => [b.x + b.w / 2, b.y + 19],
  stage: (b) => [b.x + b.w / 2, b.y + 37, 13],
  visits: (b) => [b.x + b.w - 6, b.y + b.h - 6],
  skip: (b) => [b.x + b.w / 2, b.y + b.h - 18],
  setup: (b) => [b.x + b.w / 2, b.y + b.h - 4],
  /** The wire between two entered boxes of a row: straight when they are neighbours, else
   * around the boxes between them (the path bypasses those). */
  wire(path, a, b) {
    const y = ROW_Y[path];
    const x1 = BOX_X[a] + BOX_W, x2 = BOX_X[b], ym = y + BOX_H / 2;
    const keys = Object.keys(BOX_X);
    if (keys.indexOf(b) - keys.indexOf(a) === 1) return `<line class="wire" x1="${x1}" y1="${ym}" x2="${x2}" y2="${ym}"/>`;
    const top = y - 8;
    return `<path class="wire around" d="M${x1},${ym} C${x1 + 14},${ym} ${x1 + 8},${top} ${x1 + 26},${top} L${x2 - 26},${top} C${x2 - 8},${top} ${x2 - 14},${ym} ${x2},${ym}" fill="none"/>`;
  },
  why(path, k, text) {
    const y = ROW_Y[path];
    return `<text class="why" x="${Math.min(BOX_X[k], 560)}" y="${y + BOX_H + 18}">${esc(text)}</text>`;
  },
  /** Where a frame rides: the centre line of the row, forward frames above it. */
  framePoint: (path, k) => [BOX_X[k] + BOX_W / 2, ROW_Y[path] + BOX_H / 2],
  frameOffset: (forward) => [0, forward ? -10 : 10],
};

/**
 * The stacked layout, for a narrow box: the two paths as two columns (TCP left, RDMA right),
 * each running top to bottom from the local host through the switch to the remote host, so
 * the two paths still read side by side (the RDMA column's kernel boxes bypassed next to the
 * TCP column's lit ones) and every label keeps its size. Units are CSS pixels of `width`.
 * `report` sizes the titles and the failure notes, which wrap.
 */
function stackedLayout(width, report) {
  const W = Math.floor(width);
  const gutter = 16; // right of each column: where a bypassing line runs
  const gap = 10;
  const colW = Math.max(96, Math.min(300, Math.floor((W - 4 - 2 * gutter - gap) / 2)));
  const x0 = Math.max(0, Math.floor((W - (2 * colW + 2 * gutter + gap)) / 2));
  const colX = { tcp: x0, rdma: x0 + colW + gutter + gap };
  const titles = {};
  for (const [path, title] of [['tcp', t('sim.tcp')], ['rdma', t('sim.rdma')]]) {
    titles[path] = wrapLines(titleOf(title, report[path]), colW / (STACK_FONT.title * 1.1), 2);
  }
  const titleH = 8 + 18 * Math.max(titles.tcp.length, titles.rdma.length);
  // The setup tag and the ✓n mark share the box's last line when both fit, else the setup tag
  // gets a line of its own.
  const setupW = ems(t('box.setup')) * STACK_FONT.small;
  const ownLine = 7 + setupW + 6 + 26 > colW;
  // A run with no first message drawn (a stream) never lights a box: no stage lines, no ✓n,
  // so the boxes are shorter and the drawing leaves more of the phone's screen to the rest.
  const quiet = !drawn(report.tcp) && !drawn(report.rdma);
  const h = quiet ? 60 : ownLine ? 86 : 72;
  const vgap = 14;
  const keys = Object.keys(BOX_X);
  const box = (path, k) => ({ x: colX[path], y: titleH + keys.indexOf(k) * (h + vgap), w: colW, h });
  const bottom = titleH + keys.length * h + (keys.length - 1) * vgap;
  const why = {};
  for (const path of ['tcp', 'rdma']) {
    const f = report[path] ? failureAt(report[path]) : null;
    why[path] = f ? wrapLines(f.text, (colW - 4) / (STACK_FONT.small * 1.05), 6) : [];
  }
  const whyH = Math.max(why.tcp.length, why.rdma.length);
  return {
    kind: 'stacked',
    W,
    H: bottom + (whyH ? 10 + 16 * whyH : 4),
    stageMax: (colW - 14) / STACK_FONT.stage,
    box,
    title: (path) => `<text class="rowtitle" x="${colX[path] + 2}" y="${18}">${titles[path].map((l, i) => `<tspan x="${colX[path] + 2}" dy="${i ? 18 : 0}">${esc(l)}</tspan>`).join('')}</text>`,
    name: (b) => [b.x + b.w / 2, b.y + 19],
    stage: (b) => [b.x + b.w / 2, b.y + 37, 15],
    visits: (b) => [b.x + b.w - 6, b.y + b.h - (ownLine ? 22 : 8)],
    skip: (b) => [b.x + b.w / 2, b.y + (quiet ? 37 : 44)],
    setup: (b) => [ownLine ? b.x + b.w / 2 : b.x + 7, b.y + b.h - 8],
    setupAnchor: ownLine ? 'middle' : 'start',
    /** Straight down between neighbours; else out into the column's gutter, down past the
     * bypassed boxes, and back in. */
    wire(path, a, b) {
      const A = box(path, a), B = box(path, b);
      const cx = A.x + A.w / 2, y1 = A.y + A.h, y2 = B.y;
      if (keys.indexOf(b) - keys.indexOf(a) === 1) return `<line class="wire" x1="${cx}" y1="${y1}" x2="${cx}" y2="${y2}"/>`;
      const r = A.x + A.w + gutter / 2, m1 = y1 + vgap / 2, m2 = y2 - vgap / 2;
      return `<path class="wire around" d="M${cx},${y1} Q${cx},${m1} ${cx + 10},${m1} L${r - 6},${m1} Q${r},${m1} ${r},${m1 + 6} L${r},${m2 - 6} Q${r},${m2} ${r - 6},${m2} L${cx + 10},${m2} Q${cx},${m2} ${cx},${y2}" fill="none"/>`;
    },
    why(path) {
      const x = colX[path] + 2;
      return `<text class="why" x="${x}" y="${bottom + 22}">${why[path].map((l, i) => `<tspan x="${x}" dy="${i ? 16 : 0}">${esc(l)}</tspan>`).join('')}</text>`;
    },
    framePoint: (path, k) => { const b = box(path, k); return [b.x + b.w / 2, b.y + b.h / 2]; },
    frameOffset: (forward) => [forward ? -10 : 10, 0],
  };
}

/** The layout of the drawing for a box `width` px wide (last one kept: paintAt asks each frame). */
let lastLayout = { key: null, report: null, L: WIDE };
function layoutOf(width, report) {
  const key = layoutKey(width);
  if (lastLayout.key === key && lastLayout.report === report) return lastLayout.L;
  const L = key === 'wide' ? WIDE : stackedLayout(width, report);
  lastLayout = { key, report, L };
  return L;
}

/**
 * The two paths, each box carrying its intervals (`g.iv` with data-stage/start/end): side by
 * side in a box `width` px wide or more (STACK_BELOW; also when no width is given), stacked
 * in a narrower one.
 */
export function pathsSvg(report, width) {
  const L = layoutOf(width, report);
  const rows = [['tcp', report.tcp, t('sim.tcp')], ['rdma', report.rdma, t('sim.rdma')]];
  let out = `<svg class="paths ${L.kind}" data-layout="${layoutKey(width)}" data-width="${L.kind === 'wide' ? '' : L.W}" viewBox="0 0 ${L.W} ${L.H}" role="img" aria-label="${esc(t('sim.tcp'))} / ${esc(t('sim.rdma'))}">
    <defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>`;
  for (const [path, p, title] of rows) {
    out += `<g class="row" data-path="${path}">${L.title(path, titleOf(title, p))}`;
    const ivs = {};
    for (const iv of (drawn(p) ? drawn(p).timeline : [])) (ivs[boxKey(iv)] ||= []).push(iv);
    const keys = Object.keys(BOX_X);
    const entered = enteredBoxes(p, ivs);
    const on = keys.filter((k) => entered.has(k));
    const firstOn = keys.indexOf(on[0]);
    const lastOn = keys.indexOf(on[on.length - 1]);
    // The line joins the boxes the path entered; a box between two of them is bypassed (the
    // line goes around it), a box past the last one was never reached.
    for (let i = 0; i + 1 < on.length; i += 1) out += L.wire(path, on[i], on[i + 1]);
    if (!p) {
      keys.forEach((k, i) => {
        if (i + 1 < keys.length) out += L.wire(path, k, keys[i + 1]).replace('class="wire"', 'class="wire idle"');
      });
    }
    const fail = p ? failureAt(p) : null;
    for (const k of keys) {
      const [side, lane] = k.split('-');
      const b = L.box(path, k);
      const list = (ivs[k] || []).map((iv) => `<g class="iv" data-stage="${esc(iv.stage)}" data-start="${iv.start_ns}" data-end="${iv.end_ns}"></g>`).join('');
      const sideLabel = side === 'fabric' ? '' : ` · ${t(`side.${side}`)}`;
      // Setup (registration, QP creation, modify_qp, the exchange) may enter the kernel; it ran
      // before the data path, so it is a tag under the box, never a lit interval.
      const setupKernel = p && lane === 'kernel' && side !== 'fabric' && p.setup[`kernel_${side}`];
      const i = keys.indexOf(k);
      // A kernel the data path never ran in is bypassed (RDMA: the NIC moves the data to and
      // from memory itself), unless the attempt failed before getting there.
      const between = i > firstOn && i < lastOn;
      const bypass = between || (lane === 'kernel' && (i < lastOn || !(p && !p.latency && p.failed_attempt)));
      const skip = !p || entered.has(k) ? '' : (bypass ? 'bypassed' : 'unreached');
      const [nx, ny] = L.name(b);
      const [sx, sy, sdy] = L.stage(b);
      const [vx, vy] = L.visits(b);
      const [kx, ky] = L.skip(b);
      const [ux, uy] = L.setup(b);
      const tag = skip ? `<text class="skip-tag" x="${kx}" y="${ky}">${esc(SKIP[lang() === 'en' ? 'en' : 'zh'][skip])}</text>` : '';
      out += `<g class="box${fail && fail.box === k ? ' failed' : ''}${skip ? ` ${skip}` : ''}" data-path="${path}" data-side="${side}" data-lane="${lane}" data-count="${(ivs[k] || []).length}"${setupKernel ? ' data-setup="kernel"' : ''}${skip ? ` data-skip="${skip}"` : ''}>
        <rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="8"/>
        <text class="name" x="${nx}" y="${ny}">${esc(t(`box.${lane}`))}${esc(sideLabel)}</text>
        <text class="stage" x="${sx}" y="${sy}"><tspan x="${sx}" dy="0"></tspan><tspan x="${sx}" dy="${sdy}"></tspan></text>
        <text class="visits" x="${vx}" y="${vy}"></text>
        ${tag}
        ${setupKernel ? `<text class="setup-tag${L.setupAnchor === 'start' ? ' start' : ''}" x="${ux}" y="${uy}">${esc(t('box.setup'))}</text>` : ''}
        <g class="ivs">${list}</g>
      </g>`;
    }
    if (fail) {
      const b = L.box(path, fail.box);
      out += `<g class="failure-mark"><text class="x" x="${b.x + b.w - 14}" y="${b.y + 18}">✗</text>
        ${L.why(path, fail.box, fail.text)}</g>`;
    }
    // Frames of the first message: dots that travel NIC → switch → NIC.
    const frames = drawn(p) ? drawn(p).frames : [];
    const [fx, fy] = L.framePoint(path, 'local-nic');
    frames.forEach((f, i) => {
      out += `<circle class="frame k-${esc(f.kind.replace(/\W+/g, '-'))}" r="5" cx="${L.kind === 'wide' ? -20 : fx}" cy="${fy}" data-i="${i}"${L.kind === 'wide' ? '' : ' style="display:none"'}/>`;
    });
    out += '</g>';
  }
  out += '</svg>';
  return out;
}

/** Where frame `f` is at time `tn` on the row/column of `path` in layout `L` (null when not
 * on a wire or in the switch). */
function framePos(f, tn, L, path) {
  const pt = (k) => L.framePoint(path, k);
  const [a, b] = f.forward ? [pt('local-nic'), pt('remote-nic')] : [pt('remote-nic'), pt('local-nic')];
  const S = pt('fabric-switch');
  const [ox, oy] = L.frameOffset(f.forward);
  const at = (p) => [p[0] + ox, p[1] + oy];
  const frac = (t0, t1) => Math.min(1, Math.max(0, (tn - t0) / Math.max(1e-9, t1 - t0)));
  const lerp = (p, q, t0, t1) => { const u = frac(t0, t1); return at([p[0] + (q[0] - p[0]) * u, p[1] + (q[1] - p[1]) * u]); };
  const ins = f.at_switch_ns ?? f.arrived_ns;
  const outs = f.left_switch_ns ?? ins;
  if (tn < f.sent_ns) return null;
  if (ins != null && tn < ins) return lerp(a, S, f.sent_ns, ins);
  if (outs != null && tn < outs) return at(S);
  if (f.arrived_ns != null && tn < f.arrived_ns) return lerp(S, b, outs, f.arrived_ns);
  return null;
}

/** Lights the boxes whose intervals contain `tn` and moves the frames; returns nothing. */
export function paintAt(svg, report, tn) {
  const L = layoutOf(svg.classList.contains('stacked') ? +svg.dataset.width : 0, report);
  for (const g of svg.querySelectorAll('g.box')) {
    let stage = '';
    for (const iv of g.querySelectorAll('g.iv')) {
      if (+iv.dataset.start <= tn && tn < +iv.dataset.end) { stage = iv.dataset.stage; break; }
    }
    g.classList.toggle('lit', stage !== '');
    const s = g.querySelector('text.stage');
    if (s.dataset.shown !== stage) {
      const [a = '', b = ''] = wrapLabel(term(stage), L.stageMax);
      const [l1, l2] = s.querySelectorAll('tspan');
      l1.textContent = a;
      l2.textContent = b;
      s.dataset.shown = stage;
    }
  }
  for (const row of svg.querySelectorAll('g.row')) {
    const path = row.dataset.path;
    const p = report[path];
    const frames = drawn(p) ? drawn(p).frames : [];
    for (const c of row.querySelectorAll('circle.frame')) {
      const pos = framePos(frames[+c.dataset.i], tn, L, path);
      if (pos) { c.setAttribute('cx', pos[0]); c.setAttribute('cy', pos[1]); c.style.display = ''; } else c.style.display = 'none';
    }
  }
}

/** The end of the last interval or frame of either path, ns. */
export function spanNs(report) {
  let end = 0;
  for (const p of [report.tcp, report.rdma]) {
    const d = drawn(p);
    if (!d) continue;
    for (const iv of d.timeline) end = Math.max(end, iv.end_ns);
    for (const f of d.frames) end = Math.max(end, f.arrived_ns ?? f.left_switch_ns ?? f.sent_ns);
  }
  return end;
}

const LADDER_LANES = ['local-app', 'local-kernel', 'local-nic', 'fabric-switch', 'remote-nic', 'remote-kernel', 'remote-app'];

/** The timeline (one lane per box) and ladder (frames between NICs) of one path. */
export function ladderSvg(path, p, span) {
  const d = drawn(p);
  if (!d) return '';
  const W = 1000, left = 120, lh = 22, top = 20;
  const H = top + LADDER_LANES.length * lh + 30;
  const x = (ns) => left + (W - left - 10) * (span > 0 ? ns / span : 0);
  let out = `<svg class="ladder" data-path="${path}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(t('sim.ladder'))} ${esc(path)}">`;
  out += `<text class="rowtitle" x="4" y="12">${esc(path === 'tcp' ? t('sim.tcp') : t('sim.rdma'))}</text>`;
  LADDER_LANES.forEach((k, i) => {
    const [side, lane] = k.split('-');
    const y = top + i * lh;
    out += `<text class="lane" x="4" y="${y + 15}">${esc(t(`box.${lane}`))}${side === 'fabric' ? '' : ` · ${esc(t(`side.${side}`))}`}</text>`;
    out += `<line class="grid" x1="${left}" x2="${W - 10}" y1="${y + lh / 2}" y2="${y + lh / 2}"/>`;
  });
  const laneY = (k) => top + LADDER_LANES.indexOf(k) * lh;
  for (const iv of d.timeline) {
    const y = laneY(boxKey(iv));
    const w = Math.max(1, x(iv.end_ns) - x(iv.start_ns));
    out += `<rect class="bar l-${iv.lane}" data-key="${esc(`${iv.side}|${iv.lane}|${iv.stage}`)}" x="${x(iv.start_ns)}" y="${y + 3}" width="${w}" height="${lh - 6}"><title>${esc(term(iv.stage))}: ${fmtNs(iv.start_ns)} – ${fmtNs(iv.end_ns)}</title></rect>`;
  }
  const yn = (k) => laneY(k) + lh / 2;
  for (const f of d.frames) {
    const [a, b] = f.forward ? ['local-nic', 'remote-nic'] : ['remote-nic', 'local-nic'];
    const pts = [[x(f.sent_ns), yn(a)]];
    if (f.at_switch_ns != null) pts.push([x(f.at_switch_ns), yn('fabric-switch')]);
    if (f.left_switch_ns != null) pts.push([x(f.left_switch_ns), yn('fabric-switch')]);
    if (f.arrived_ns != null) pts.push([x(f.arrived_ns), yn(b)]);
    out += `<polyline class="hop${f.dropped ? ' dropped' : ''} k-${esc(f.kind.replace(/\W+/g, '-'))}" points="${pts.map((q) => q.join(',')).join(' ')}"><title>${esc(term(f.kind))} ${f.bytes} B</title></polyline>`;
  }
  out += `<line class="cursor" x1="${left}" x2="${left}" y1="${top}" y2="${H - 26}"/>`;
  out += `<text class="axis" x="${left}" y="${H - 8}">0</text><text class="axis end" x="${W - 10}" y="${H - 8}">${esc(fmtNs(span))}</text>`;
  return out + '</svg>';
}

/** Moves the ladders' cursors to `tn`. */
export function cursorAt(root, span, tn) {
  for (const svg of root.querySelectorAll('svg.ladder')) {
    const c = svg.querySelector('line.cursor');
    const x = 120 + (1000 - 120 - 10) * (span > 0 ? Math.min(tn, span) / span : 0);
    c.setAttribute('x1', x); c.setAttribute('x2', x);
  }
}

export { LANES };
