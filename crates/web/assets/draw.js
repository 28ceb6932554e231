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
  if (/LocProt|LocLen|LocQpOp/.test(o.code)) return { box: 'local-nic', text: `${o.verb} → ${sentence(o.code)}` };
  if (/Rem/.test(o.code)) return { box: 'remote-nic', text: `${o.verb} → ${sentence(o.code)}` };
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

/** The wire between two entered boxes of a row: straight when they are neighbours, else
 * around the boxes between them (the path bypasses those). */
function wireBetween(a, b, y) {
  const x1 = BOX_X[a] + BOX_W, x2 = BOX_X[b], ym = y + BOX_H / 2;
  const keys = Object.keys(BOX_X);
  if (keys.indexOf(b) - keys.indexOf(a) === 1) return `<line class="wire" x1="${x1}" y1="${ym}" x2="${x2}" y2="${ym}"/>`;
  const top = y - 8;
  return `<path class="wire around" d="M${x1},${ym} C${x1 + 14},${ym} ${x1 + 8},${top} ${x1 + 26},${top} L${x2 - 26},${top} C${x2 - 8},${top} ${x2 - 14},${ym} ${x2},${ym}" fill="none"/>`;
}

/** The two paths, each box carrying its intervals (`g.iv` with data-stage/start/end). */
export function pathsSvg(report) {
  const rows = [['tcp', report.tcp, t('sim.tcp')], ['rdma', report.rdma, t('sim.rdma')]];
  let out = `<svg class="paths" viewBox="0 0 1000 300" role="img" aria-label="${esc(t('sim.tcp'))} / ${esc(t('sim.rdma'))}">
    <defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker></defs>`;
  for (const [path, p, title] of rows) {
    const y = ROW_Y[path];
    out += `<g class="row" data-path="${path}"><text class="rowtitle" x="8" y="${y - 10}">${esc(title)}${p ? '' : ` — ${esc(t('sim.notrun'))}`}</text>`;
    const ivs = {};
    for (const iv of (drawn(p) ? drawn(p).timeline : [])) (ivs[boxKey(iv)] ||= []).push(iv);
    const keys = Object.keys(BOX_X);
    const entered = enteredBoxes(p, ivs);
    const on = keys.filter((k) => entered.has(k));
    const firstOn = keys.indexOf(on[0]);
    const lastOn = keys.indexOf(on[on.length - 1]);
    // The line joins the boxes the path entered; a box between two of them is bypassed (the
    // line goes around it), a box past the last one was never reached.
    for (let i = 0; i + 1 < on.length; i += 1) out += wireBetween(on[i], on[i + 1], y);
    if (!p) {
      keys.forEach((k, i) => {
        if (i + 1 < keys.length) out += wireBetween(k, keys[i + 1], y).replace('class="wire"', 'class="wire idle"');
      });
    }
    const fail = p ? failureAt(p) : null;
    for (const k of keys) {
      const [side, lane] = k.split('-');
      const x = BOX_X[k];
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
      const tag = skip ? `<text class="skip-tag" x="${x + BOX_W / 2}" y="${y + BOX_H - 18}">${esc(SKIP[lang() === 'en' ? 'en' : 'zh'][skip])}</text>` : '';
      out += `<g class="box${fail && fail.box === k ? ' failed' : ''}${skip ? ` ${skip}` : ''}" data-path="${path}" data-side="${side}" data-lane="${lane}" data-count="${(ivs[k] || []).length}"${setupKernel ? ' data-setup="kernel"' : ''}${skip ? ` data-skip="${skip}"` : ''}>
        <rect x="${x}" y="${y}" width="${BOX_W}" height="${BOX_H}" rx="8"/>
        <text class="name" x="${x + BOX_W / 2}" y="${y + 19}">${esc(t(`box.${lane}`))}${esc(sideLabel)}</text>
        <text class="stage" x="${x + BOX_W / 2}" y="${y + 37}"><tspan x="${x + BOX_W / 2}" dy="0"></tspan><tspan x="${x + BOX_W / 2}" dy="13"></tspan></text>
        <text class="visits" x="${x + BOX_W - 6}" y="${y + BOX_H - 6}"></text>
        ${tag}
        ${setupKernel ? `<text class="setup-tag" x="${x + BOX_W / 2}" y="${y + BOX_H - 4}">${esc(t('box.setup'))}</text>` : ''}
        <g class="ivs">${list}</g>
      </g>`;
    }
    if (fail) {
      const x = BOX_X[fail.box];
      out += `<g class="failure-mark"><text class="x" x="${x + BOX_W - 14}" y="${y + 18}">✗</text>
        <text class="why" x="${Math.min(x, 560)}" y="${y + BOX_H + 18}">${esc(fail.text)}</text></g>`;
    }
    // Frames of the first message: dots that travel NIC → switch → NIC.
    const frames = drawn(p) ? drawn(p).frames : [];
    frames.forEach((f, i) => {
      out += `<circle class="frame k-${esc(f.kind.replace(/\W+/g, '-'))}" r="5" cx="-20" cy="${y + BOX_H / 2}" data-i="${i}"/>`;
    });
    out += '</g>';
  }
  out += '</svg>';
  return out;
}

/** Where frame `f` is at time `tn` on a row at `y` (null when not on a wire or in the switch). */
function framePos(f, tn, y) {
  const L = BOX_X['local-nic'] + BOX_W / 2, S = BOX_X['fabric-switch'] + BOX_W / 2, R = BOX_X['remote-nic'] + BOX_W / 2;
  const [a, b] = f.forward ? [L, R] : [R, L];
  const cy = y + BOX_H / 2 + (f.forward ? -10 : 10);
  const lerp = (x0, x1, t0, t1) => x0 + (x1 - x0) * Math.min(1, Math.max(0, (tn - t0) / Math.max(1e-9, t1 - t0)));
  const ins = f.at_switch_ns ?? f.arrived_ns;
  const outs = f.left_switch_ns ?? ins;
  if (tn < f.sent_ns) return null;
  if (ins != null && tn < ins) return [lerp(a, S, f.sent_ns, ins), cy];
  if (outs != null && tn < outs) return [S, cy];
  if (f.arrived_ns != null && tn < f.arrived_ns) return [lerp(S, b, outs, f.arrived_ns), cy];
  return null;
}

/** Lights the boxes whose intervals contain `tn` and moves the frames; returns nothing. */
export function paintAt(svg, report, tn) {
  for (const g of svg.querySelectorAll('g.box')) {
    let stage = '';
    for (const iv of g.querySelectorAll('g.iv')) {
      if (+iv.dataset.start <= tn && tn < +iv.dataset.end) { stage = iv.dataset.stage; break; }
    }
    g.classList.toggle('lit', stage !== '');
    const s = g.querySelector('text.stage');
    if (s.dataset.shown !== stage) {
      const [a = '', b = ''] = wrapLabel(term(stage));
      const [l1, l2] = s.querySelectorAll('tspan');
      l1.textContent = a;
      l2.textContent = b;
      s.dataset.shown = stage;
    }
  }
  for (const row of svg.querySelectorAll('g.row')) {
    const p = report[row.dataset.path];
    const frames = drawn(p) ? drawn(p).frames : [];
    const y = ROW_Y[row.dataset.path];
    for (const c of row.querySelectorAll('circle.frame')) {
      const pos = framePos(frames[+c.dataset.i], tn, y);
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
