// The playground's QP state diagram, drawn from the model's transitions, with its keyboard.
// Split out of playground.js; see that file for how the page works.

import { esc } from './i18n.js';
import { tt } from './pg-strings.js';
import { BRINGUP } from './pg-session.js';
import { handlesOf, haveModel, qpStatesAfter, rule, states, transition } from './pg-model.js';
import { $, P, status } from './pg-state.js';

// The QP state diagram, drawn from the model's transitions

export const NODE_W = 92;
export const NODE_H = 38;
// Where each state sits (layout only; which arrows exist comes from the model).
export const NODE_POS = { RESET: [70, 170], INIT: [230, 170], RTR: [390, 170], RTS: [550, 170], SQD: [710, 170], SQE: [550, 320], ERR: [310, 320] };

export function nodePos(name, k) {
  return NODE_POS[name] || [70 + (k % 5) * 160, 420];
}

/** Where the ray from a node's centre towards (x, y) leaves its box. */
export function clip([cx, cy], [x, y]) {
  const dx = x - cx, dy = y - cy;
  const s = Math.min(dx ? (NODE_W / 2 + 3) / Math.abs(dx) : Infinity, dy ? (NODE_H / 2 + 3) / Math.abs(dy) : Infinity);
  return [cx + dx * s, cy + dy * s];
}

/** A quadratic curve from node a to node b bulging to side `sd` (±1) of travel; its control point. */
export function arc(a, b, sd) {
  const dx = b[0] - a[0], dy = b[1] - a[1], L = Math.hypot(dx, dy) || 1;
  const bend = 2 * (12 + 0.12 * L);
  return [(a[0] + b[0]) / 2 + sd * (dy / L) * bend, (a[1] + b[1]) / 2 - sd * (dx / L) * bend];
}

/** How badly a curve a → c → b runs through the other nodes' boxes (sampled). */
export function crowding(a, c, b, pos) {
  let bad = 0;
  for (let k = 1; k < 20; k++) {
    const u = k / 20;
    const x = (1 - u) * (1 - u) * a[0] + 2 * u * (1 - u) * c[0] + u * u * b[0];
    const y = (1 - u) * (1 - u) * a[1] + 2 * u * (1 - u) * c[1] + u * u * b[1];
    for (const p of pos) {
      if (p === a || p === b) continue;
      if (Math.abs(x - p[0]) < NODE_W / 2 + 10 && Math.abs(y - p[1]) < NODE_H / 2 + 24) bad++;
    }
  }
  return bad;
}

export function diagramSvg(qpType, cur) {
  const sts = states();
  const pos = Object.fromEntries(sts.map((s, k) => [s, nodePos(s, k)]));
  const trs = (P.model.transitions || []).filter((x) => pos[x.from] && pos[x.to]);
  let y0 = Infinity, y1 = -Infinity;
  const span = (y) => { y0 = Math.min(y0, y); y1 = Math.max(y1, y); };
  for (const p of Object.values(pos)) { span(p[1] - NODE_H / 2 - 40); span(p[1] + NODE_H / 2 + 20); }
  // Each arrow bulges to the side of travel that crosses fewer nodes; an arrow whose reverse is
  // drawn takes the same side of its own travel, so the two never overlap.
  const side = {};
  for (const tr of trs) {
    if (tr.from === tr.to) continue;
    const back = side[`${tr.to}|${tr.from}`];
    if (back !== undefined) { side[`${tr.from}|${tr.to}`] = back; continue; }
    const a = pos[tr.from], b = pos[tr.to];
    side[`${tr.from}|${tr.to}`] = crowding(a, arc(a, b, -1), b, Object.values(pos)) < crowding(a, arc(a, b, 1), b, Object.values(pos)) ? -1 : 1;
  }
  let edges = '';
  for (const tr of trs) {
    const a = pos[tr.from], b = pos[tr.to];
    const r = rule(tr, qpType);
    const fromCur = tr.from === cur;
    const cls = `pg-edge${fromCur ? ' from-cur' : ''}${P.pinned && P.pinned.from === tr.from && P.pinned.to === tr.to ? ' pinned' : ''}`;
    const lbl = `${tr.from} → ${tr.to}: ${r && r.required.length ? r.required.join(', ') : tt('edge.none')}`;
    let d;
    if (tr.from === tr.to) {
      const [x, y] = a;
      d = `M${x - 14},${y - NODE_H / 2 - 2} C${x - 34},${y - NODE_H / 2 - 46} ${x + 34},${y - NODE_H / 2 - 46} ${x + 14},${y - NODE_H / 2 - 4}`;
    } else {
      const [mx, my] = arc(a, b, side[`${tr.from}|${tr.to}`]);
      span((a[1] + 2 * my + b[1]) / 4 - 14);
      span((a[1] + 2 * my + b[1]) / 4 + 14);
      const p0 = clip(a, [mx, my]), p1 = clip(b, [mx, my]);
      d = `M${p0[0].toFixed(1)},${p0[1].toFixed(1)} Q${mx.toFixed(1)},${my.toFixed(1)} ${p1[0].toFixed(1)},${p1[1].toFixed(1)}`;
    }
    // No tab stop per arrow: the diagram is one (see diagramKey); the mouse still clicks them.
    edges += `<g class="${cls}" data-from="${esc(tr.from)}" data-to="${esc(tr.to)}">
      <title>${esc(lbl)}</title><path class="hit" d="${d}"/><path class="line" d="${d}" marker-end="url(#pg-arr${fromCur ? '-hi' : ''})"/></g>`;
  }
  const nodes = sts.map((s) => {
    const [x, y] = pos[s];
    const on = s === cur;
    return `<g class="pg-node${on ? ' cur' : ''}" data-node="${esc(s)}"${on ? ' aria-current="true"' : ''}>
      <rect x="${x - NODE_W / 2}" y="${y - NODE_H / 2}" width="${NODE_W}" height="${NODE_H}" rx="19"/>
      <text x="${x}" y="${y + 5}">${esc(s)}</text>${on ? `<title>${esc(tt('edge.cur'))}</title>` : ''}</g>`;
  }).join('');
  return `<svg class="pg-sm" viewBox="0 ${Math.floor(y0)} 790 ${Math.ceil(y1 - y0)}" role="group" aria-label="${esc(tt('diagram'))}">
    <defs>
      <marker id="pg-arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="pg-ah"/></marker>
      <marker id="pg-arr-hi" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="pg-ah hi"/></marker>
    </defs>${edges}${nodes}</svg>`;
}

export function edgeInfoHtml(from, to) {
  const h = handlesOf(P.session.steps);
  const q = h.qp.find((x) => x.name === P.selQp);
  const type = q ? q.type : 'RC';
  const tr = transition(from, to);
  const r = rule(tr, type);
  if (!r) return '';
  const list = (l) => (l.length ? l.map((a) => `<code>${esc(a)}</code>`).join(' ') : esc(tt('edge.nothing')));
  return `<p><strong>${esc(tt('edge.title', { from, to, type }))}</strong></p>
    <p>${esc(tt('edge.req'))} <code>STATE</code> ${r.required.map((a) => `<code>${esc(a)}</code>`).join(' ')}${r.required.length ? '' : ` <span class="muted">(${esc(tt('edge.none'))})</span>`}</p>
    <p>${esc(tt('edge.opt'))} ${list(r.optional)}</p>
    ${P.session.raw ? '' : `<p><button type="button" class="secondary" data-use-edge="${esc(from)}|${esc(to)}">${esc(tt('edge.use'))}</button></p>`}`;
}

export function renderDiagram() {
  const h = handlesOf(P.session.steps);
  const qps = P.session.raw ? rawQps() : h.qp;
  if (!qps.some((q) => q.name === P.selQp)) P.selQp = qps[0] ? qps[0].name : null;
  $('#pg-qp').innerHTML = qps.map((q) => `<option value="${esc(q.name)}"${q.name === P.selQp ? ' selected' : ''}>${esc(q.name)} (${esc(q.host)}, ${esc(q.type)})</option>`).join('');
  $('#pg-qp').disabled = !qps.length;
  const q = qps.find((x) => x.name === P.selQp);
  const st = P.session.raw ? rawStates(P.selected) : qpStatesAfter(P.selected);
  const cur = q ? st[q.name] || '' : '';
  const fig = $('#pg-diagram');
  fig.dataset.state = cur;
  fig.dataset.qp = q ? q.name : '';
  fig.setAttribute('aria-label', q ? tt('diagram.label', { qp: q.name, state: cur || '—' }) : tt('no.qp'));
  if (!haveModel()) {
    fig.removeAttribute('tabindex');
    fig.removeAttribute('aria-describedby');
    fig.innerHTML = `<p class="error">${esc(tt('model.error', { e: P.modelError || '—' }))}</p>${cur ? `<p class="pg-node-text">${esc(q.name)}: <strong>${esc(cur)}</strong></p>` : ''}`;
    $('#pg-edge').innerHTML = '';
    return;
  }
  // One tab stop for the whole diagram: the arrow keys move between the legal transitions.
  fig.tabIndex = 0;
  fig.setAttribute('aria-describedby', 'pg-diagram-keys');
  fig.innerHTML = `${diagramSvg(q ? q.type : 'RC', cur)}<figcaption>${esc(q ? tt('diagram.label', { qp: q.name, state: cur || '—' }) : tt('no.qp'))}
    <span id="pg-diagram-keys" class="pg-keys">${esc(tt('edge.keys'))}</span></figcaption>`;
  if (P.kb && !legalEdges().some((x) => sameEdge(x, P.kb))) P.kb = null;
  markKb();
  showEdgeInfo();
  showCurrentNode(fig);
}

export const sameEdge = (a, b) => !!a && !!b && a.from === b.from && a.to === b.to;

/** Whether the diagram has the keyboard focus, shown (not after a click). */
export function kbFocused() {
  const fig = $('#pg-diagram');
  return !!fig && document.activeElement === fig && fig.matches(':focus-visible');
}

/**
 * Whether the keyboard's transition is shown: from the diagram reached with the keyboard until
 * the focus leaves both the diagram and the explanation under it (whose button uses that transition).
 */
export function kbShown() {
  if (!P.kbOn) return false;
  const a = document.activeElement;
  return !!a && (a === $('#pg-diagram') || $('#pg-edge').contains(a));
}

/**
 * The transitions the arrow keys move between: the legal ones from the shown QP's current state
 * (every transition when there is no current state), in the order their targets sit left to right.
 */
export function legalEdges() {
  const cur = $('#pg-diagram').dataset.state;
  const sts = states();
  const x = (name) => { const [px, py] = nodePos(name, sts.indexOf(name)); return px * 1000 + py; };
  return (P.model.transitions || []).filter((tr) => sts.includes(tr.from) && sts.includes(tr.to) && (!cur || tr.from === cur))
    .map((tr) => ({ from: tr.from, to: tr.to }))
    .sort((a, b) => x(a.from) - x(b.from) || x(a.to) - x(b.to));
}

/** The transition the keyboard starts on: the selected one, else the next bring-up step, else the first. */
export function firstKb(list) {
  const cur = $('#pg-diagram').dataset.state;
  return list.find((e) => sameEdge(e, P.pinned)) || list.find((e) => e.from === cur && e.to === BRINGUP[cur]) || list[0] || null;
}

/** Marks the keyboard's transition in the drawing (while it is shown: see kbShown). */
export function markKb() {
  const fig = $('#pg-diagram');
  const on = kbShown() ? P.kb : null;
  for (const g of fig.querySelectorAll('.pg-edge')) g.classList.toggle('kb', sameEdge(on, g.dataset));
}

/** What #pg-edge explains: the arrow under the mouse, else the keyboard's, else the selected one. */
export function showEdgeInfo() {
  const e = P.edge || (kbShown() && P.kb) || P.pinned;
  $('#pg-edge').innerHTML = e && haveModel() ? edgeInfoHtml(e.from, e.to) : `<p class="muted">${esc(tt('edge.pick'))}</p>`;
}

/** Scrolls the diagram's box sideways (a narrow screen) so the keyboard's arrow is in view. */
export function revealKb(fig) {
  const g = fig.querySelector('.pg-edge.kb');
  if (!g || fig.scrollWidth <= fig.clientWidth + 1) return;
  const f = fig.getBoundingClientRect(), r = g.getBoundingClientRect();
  if (r.left < f.left + 8) fig.scrollLeft -= f.left + 8 - r.left;
  else if (r.right > f.right - 8) fig.scrollLeft += r.right - (f.right - 8);
}

/** Selects a transition (as a click on its arrow does): its attributes show, and the status line says so. */
export function selectEdge(e) {
  P.pinned = { from: e.from, to: e.to };
  renderDiagram();
  const h = handlesOf(P.session.steps);
  const q = h.qp.find((x) => x.name === P.selQp) || (P.session.raw ? rawQps().find((x) => x.name === P.selQp) : null);
  const r = rule(transition(e.from, e.to), q ? q.type : 'RC');
  if (r) {
    status(tt('edge.sel', {
      from: e.from, to: e.to,
      req: ['STATE', ...r.required].join(', '),
      opt: r.optional.length ? r.optional.join(', ') : tt('edge.nothing'),
    }));
  }
}

/** The diagram's keys: arrows (and Home/End) move between the legal transitions, Enter or Space selects, Escape deselects. */
export function diagramKey(e) {
  const fig = $('#pg-diagram');
  if (!haveModel()) return;
  const list = legalEdges();
  if (!list.length) return;
  const k = P.kb ? list.findIndex((x) => sameEdge(x, P.kb)) : -1;
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  let to = null;
  if (step) to = k < 0 ? (step > 0 ? 0 : list.length - 1) : (k + step + list.length) % list.length;
  else if (e.key === 'Home') to = 0;
  else if (e.key === 'End') to = list.length - 1;
  if (to !== null) {
    e.preventDefault();
    P.kbOn = true;
    P.kb = list[to];
    markKb();
    showEdgeInfo();
    revealKb(fig);
    status(tt('edge.move', { from: P.kb.from, to: P.kb.to, k: to + 1, n: list.length }));
  } else if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    P.kbOn = true;
    if (k < 0) P.kb = firstKb(list);
    if (P.kb) selectEdge(P.kb);
  } else if (e.key === 'Escape' && P.pinned) {
    e.preventDefault();
    const was = P.pinned;
    P.pinned = null;
    renderDiagram();
    status(tt('edge.unsel', was));
  }
}

/**
 * When the diagram is wider than its box (a narrow screen), scrolls the box sideways so the
 * current state's node is in view; the page itself does not move.
 */
export function showCurrentNode(fig) {
  if (fig.scrollWidth <= fig.clientWidth + 1) return;
  const node = fig.querySelector('.pg-node.cur') || fig.querySelector('.pg-node');
  if (!node) return;
  const f = fig.getBoundingClientRect(), n = node.getBoundingClientRect();
  fig.scrollLeft += (n.left + n.width / 2) - (f.left + fig.clientWidth / 2);
}

/** QPs of a read-only (raw) session, from the server's state. */
export function rawQps() {
  const rec = P.report && P.report.steps && P.report.steps[P.report.steps.length - 1];
  return rec && rec.state && Array.isArray(rec.state.qps) ? rec.state.qps.map((q) => ({ name: q.name, host: q.host, type: q.qp_type || 'RC' })) : [];
}

export function rawStates(n) {
  const rec = P.report && P.report.steps && P.report.steps[n - 1];
  return rec && rec.state && Array.isArray(rec.state.qps) ? Object.fromEntries(rec.state.qps.map((q) => [q.name, q.state])) : {};
}

// ---------------------------------------------------------------------------------------------
