// The playground's packet ladder: one column per host, one arrow per frame, and its data table.
// Split out of playground.js; see that file for how the page works.

import { esc } from './i18n.js';
import { tt } from './pg-strings.js';
import { WR_COLORS, fmtPs, hex, wrColor } from './pg-format.js';
import { $, P } from './pg-state.js';

// The ladder: one column per host, one arrow per frame

export const LADDER_MAX = 400;

/** The frames the ladder draws now, by their `data-k` (for the packet inspector). */
let drawnFrames = [];

/** The frame drawn as `data-k = k`, as the server sent it. */
export function ladderFrame(k) {
  return drawnFrames[k] || null;
}

/**
 * A frame's operation as a learner reads it: the opcode as Linux names it (an identifier), but
 * a NAK by what its AETH syndrome code means (0x60 PSN sequence error … 0x64 invalid RD request,
 * the AETH's NAK codes) in the page's language, from the stable id the server sends in
 * `aeth.nak` (`PsnSequenceError`), never the Rust name itself.
 */
export function frameOp(f) {
  const a = f.aeth;
  if (a && a.syndrome === 'NAK') return tt('nak', { why: tt(`nak.${a.nak}`) });
  return f.opcode || f.kind || '?';
}

export function ladderSvg(groups, hosts) {
  drawnFrames = [];
  const W = 720, left = 92, right = 20, top = 34, row = 24, sep = 22;
  const hs = hosts.length ? hosts : ['a', 'b'];
  const colX = (hname) => {
    const k = Math.max(0, hs.indexOf(hname));
    return hs.length === 1 ? (left + W - right) / 2 : left + 40 + k * ((W - left - right - 80) / (hs.length - 1));
  };
  let y = top;
  let body = '';
  let drawn = 0, total = 0;
  for (const g of groups) {
    total += g.frames.length;
    if (g.label) { body += `<text class="pg-lstep" x="4" y="${y + 14}">${esc(g.label)}</text>`; y += sep; }
    for (const f of g.frames) {
      if (drawn >= LADDER_MAX) break;
      drawn++;
      const k = drawnFrames.push(f) - 1;
      const x1 = colX(f.src), x2 = colX(f.dst);
      const y1 = y + 6, y2 = y + row - 4;
      // RoCE frames take the colour of the WR they carry or answer; the rest are grey.
      const col = f.kind === 'roce' ? wrColor(f.wr_id) : '#7a838c';
      const xe = f.dropped ? x1 + (x2 - x1) * 0.6 : x2;
      const ye = f.dropped ? y1 + (y2 - y1) * 0.6 : y2;
      const label = `${frameOp(f)}${f.psn != null ? ` PSN ${f.psn}` : ''}`;
      const tip = `${label} · ${f.src} → ${f.dst} · ${fmtPs(f.t_ps)} · ${f.len ?? '?'} B${f.qpn != null ? ` · QPN ${hex(f.qpn)}` : ''}${f.wr_id != null ? ` · wr_id ${f.wr_id}` : ''}${f.dropped ? ` · ${tt('lt.dropped')}` : ''}`;
      const mk = WR_COLORS.indexOf(col);
      body += `<g class="pg-frame k-${esc(f.kind || 'other')}${f.dropped ? ' dropped' : ''}" data-k="${k}" tabindex="0" role="button" data-opcode="${esc(f.opcode || '')}" data-psn="${esc(f.psn ?? '')}" data-wr-id="${esc(f.wr_id ?? '')}" data-dropped="${!!f.dropped}">
        <title>${esc(tip)}</title>
        <text class="pg-lt" x="4" y="${y + 15}">${esc(fmtPs(f.t_ps))}</text>
        <line x1="${x1}" y1="${y1}" x2="${xe}" y2="${ye}" stroke="${col}" marker-end="${f.dropped ? 'none' : `url(#pg-larr-${mk < 0 ? 'g' : mk})`}"${f.dropped ? ' stroke-dasharray="5 4"' : ''}/>
        ${f.dropped ? `<text class="pg-x" x="${xe + 4}" y="${ye + 4}">✗</text>` : ''}
        <text class="pg-ll" x="${(x1 + x2) / 2}" y="${y + 8}" fill="${col}">${esc(label)}</text></g>`;
      y += row;
    }
  }
  if (total > drawn) { body += `<text class="pg-lstep" x="4" y="${y + 14}">${esc(tt('frames.more', { n: total - drawn }))}</text>`; y += sep; }
  const H = y + 10;
  const lanes = hs.map((hn) => `<text class="pg-lh" x="${colX(hn)}" y="18">${esc(hn)}</text><line class="pg-life" x1="${colX(hn)}" x2="${colX(hn)}" y1="24" y2="${H - 4}"/>`).join('');
  return `<svg class="pg-ladder" viewBox="0 0 ${W} ${H}" role="group" aria-label="${esc(tt('ladder'))}">
    <defs>${[...WR_COLORS, '#7a838c'].map((c, k) => `<marker id="pg-larr-${k < WR_COLORS.length ? k : 'g'}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="${c}"/></marker>`).join('')}</defs>
    ${lanes}${body}</svg>`;
}

/**
 * The ladder's frames as a table (the frames drawn, at most LADDER_MAX), in a disclosure under it:
 * time, from → to, opcode, PSN, QPN, length, wr_id and whether the fabric dropped it; one row
 * group per step when the ladder shows several.
 */
export function ladderTableHtml(groups, view) {
  const cols = [tt('lt.time'), tt('lt.route'), tt('lt.opcode'), 'PSN', 'QPN', tt('lt.len'), 'wr_id', tt('lt.dropped')];
  let left = LADDER_MAX, total = 0;
  const bodies = groups.map((g) => {
    total += g.frames.length;
    const frames = g.frames.slice(0, Math.max(0, left));
    left -= frames.length;
    if (!frames.length) return '';
    const head = g.label ? `<tr class="pg-lt-group"><th scope="colgroup" colspan="${cols.length}">${esc(g.label)}</th></tr>` : '';
    const rows = frames.map((f) => `<tr class="${f.dropped ? 'dropped' : ''}">
      <th scope="row" class="num">${esc(fmtPs(f.t_ps))}</th><td>${esc(f.src)} → ${esc(f.dst)}</td><td>${esc(frameOp(f))}</td>
      <td class="num">${esc(f.psn ?? '—')}</td><td class="mono">${f.qpn != null ? hex(f.qpn) : '—'}</td><td class="num">${esc(f.len ?? '—')}</td>
      <td class="num">${esc(f.wr_id ?? '—')}</td><td>${esc(tt(f.dropped ? 'yes' : 'no'))}</td></tr>`).join('');
    return `<tbody>${head}${rows}</tbody>`;
  }).join('');
  const drawn = Math.min(total, LADDER_MAX);
  return `<details class="pg-ltbox" id="pg-ladder-tablebox"${P.ladderTable ? ' open' : ''}>
      <summary>${esc(tt('lt.summary'))}</summary>
      <div class="pg-lt-scroll" tabindex="0" role="group" aria-label="${esc(tt('lt.scroll'))}">
        <table class="pg-table pg-lt" data-testid="ladder-table" data-rows="${drawn}"><caption class="pg-sr">${esc(tt('lt.caption', { view }))}</caption>
          <thead><tr>${cols.map((c) => `<th scope="col">${esc(c)}</th>`).join('')}</tr></thead>${bodies}</table>
      </div>${total > drawn ? `<p class="pg-lt-note">${esc(tt('frames.more', { n: total - drawn }))}</p>` : ''}
    </details>`;
}

/** The wr_ids a post_send step posts (its `wr_id`, or those of its `wr` list), as strings. */
export function wrIdsOf(s) {
  if (!s || s.call !== 'post_send') return [];
  const ids = Array.isArray(s.wr) ? s.wr.map((w) => w && w.wr_id) : [s.wr_id];
  return ids.filter((x) => x !== undefined && x !== null).map(String);
}

/**
 * The frames of the WRs that step `n` (a post_send) posted, grouped by the step that put them on
 * the wire: that step and every later one, up to a later post_send on the same QP that reuses one
 * of those wr_ids. Only frames of that QP's connection count: sent from its host, or to its QPN.
 */
export function wrGroups(n) {
  const recs = P.report.steps;
  const s = P.session.steps[n - 1];
  const ids = new Set(wrIdsOf(s));
  const rec = recs[n - 1];
  const me = rec && rec.state ? (rec.state.qps || []).find((q) => q.name === s.qp) : null;
  const groups = [];
  for (let k = n - 1; k < recs.length; k++) {
    const later = P.session.steps[k];
    if (k > n - 1 && later && later.call === 'post_send' && later.qp === s.qp && wrIdsOf(later).some((x) => ids.has(x))) break;
    const frames = (recs[k].frames || []).filter((f) => f.wr_id != null && ids.has(String(f.wr_id))
      && (!me || f.qpn === me.qpn || f.src === me.host));
    if (frames.length) groups.push({ label: tt('ladder.step', { n: k + 1, call: recs[k].call }), frames });
  }
  return groups;
}

/**
 * The ladder of the selected step, labelled with which view it is: for a post_send, every frame
 * of its WRs from that step on (they go on the wire while later steps let time pass); for any
 * other step, the frames during that step; with "show every step", all of them.
 */
export function renderLadder() {
  const el = $('#pg-ladder');
  const view = $('#pg-ladder-view');
  const recs = P.report && P.report.steps;
  const data = $('#pg-ladder-data');
  if (!recs || !recs.length) { el.innerHTML = ''; data.innerHTML = ''; view.textContent = ''; el.dataset.view = ''; return; }
  const n = P.selected;
  const rec = recs[n - 1];
  const s = P.session.raw ? null : P.session.steps[n - 1];
  let mode = '', groups = [], label = tt('ladder.view.none'), empty = '';
  if (P.ladderAll) {
    mode = 'all';
    groups = recs.filter((r) => r.frames && r.frames.length).map((r) => ({ label: tt('ladder.step', { n: r.index, call: r.call }), frames: r.frames }));
    label = tt('ladder.view.all');
    empty = tt('no.frames.all');
  } else if (rec && wrIdsOf(s).length) {
    mode = 'wr';
    groups = wrGroups(n);
    label = tt('ladder.view.wr', { n, ids: wrIdsOf(s).join(', ') });
    empty = tt('no.wrframes');
  } else if (rec) {
    mode = 'step';
    groups = rec.frames && rec.frames.length ? [{ label: null, frames: rec.frames }] : [];
    label = tt('ladder.view.step', { n, call: rec.call });
    empty = tt('no.frames');
  }
  view.textContent = label;
  el.dataset.view = mode;
  el.innerHTML = groups.length ? ladderSvg(groups, P.report.hosts || P.session.hosts) : (empty ? `<p class="muted">${esc(empty)}</p>` : '');
  data.innerHTML = groups.length ? ladderTableHtml(groups, label) : '';
}

// ---------------------------------------------------------------------------------------------
