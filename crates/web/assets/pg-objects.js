// The playground's verbs objects after the selected step: QPs with their queues, CQs, MRs.
// Split out of playground.js; see that file for how the page works.

import { esc } from './i18n.js';
import { stageText } from './pg-results.js';
import { tt } from './pg-strings.js';
import { hex, wrColor } from './pg-format.js';
import { $, P } from './pg-state.js';

// State after the selected step: QPs with their SQ and RQ, CQs with their entries, MRs

export function tableHtml(cls, head, rows) {
  if (!rows.length) return `<p class="muted">${esc(tt('empty.q'))}</p>`;
  return `<div class="pg-scroll"><table class="pg-table ${cls}"><thead><tr>${head.map((x) => `<th scope="col">${esc(x)}</th>`).join('')}</tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>`;
}

export const chip = (wr, text) => `<span class="pg-wr" style="border-color:${wrColor(wr)}">${text}</span>`;

export function renderState() {
  const n = P.selected;
  const recs = P.report && P.report.steps;
  const rec = recs && n ? recs[n - 1] : null;
  $('#pg-after-h').textContent = n ? tt('after', { n }) : tt('after.none');
  const el = $('#pg-state');
  if (!rec) { el.innerHTML = ''; return; }
  const st = rec.state || {};
  const q = (l) => (l && l.length ? l.map((w) => chip(w.wr_id, `#${esc(w.wr_id)}${w.opcode ? ` ${esc(w.opcode)}` : ''}${w.stage ? ` <span class="muted">${esc(stageText(w.stage))}</span>` : ''}`)).join(' ') : `<span class="muted">${esc(tt('empty.q'))}</span>`);
  const qps = (st.qps || []).map((x) => `<tr data-qp="${esc(x.name)}"><th scope="row">${esc(x.name)}</th><td>${esc(x.host)}</td><td class="mono">${hex(x.qpn)}</td><td>${esc(x.qp_type)}</td>
    <td><strong class="pg-st s-${esc(x.state)}">${esc(x.state)}</strong></td><td>${q(x.sq)}</td><td>${q(x.rq)}</td></tr>`);
  const cqs = (st.cqs || []).map((c) => `<tr data-cq="${esc(c.name)}"><th scope="row">${esc(c.name)}</th><td>${esc(c.host)}</td><td>${esc(c.cqe)}</td>
    <td>${c.entries && c.entries.length ? c.entries.map((e) => chip(e.wr_id, `#${esc(e.wr_id)} <span class="${e.status === 'SUCCESS' ? '' : 'error'}">${esc(e.status)}</span>${e.opcode ? ` ${esc(e.opcode)}` : ''} ${esc(e.byte_len)} B`)).join(' ') : `<span class="muted">${esc(tt('empty.q'))}</span>`}</td></tr>`);
  const mrs = (st.mrs || []).map((m) => `<tr data-mr="${esc(m.name)}"><th scope="row">${esc(m.name)}</th><td>${esc(m.host)}</td><td class="mono">${hex(m.lkey)}</td><td class="mono">${hex(m.rkey)}</td>
    <td>${esc(m.len)}</td><td>${esc((m.access || []).join(', ') || '—')}</td></tr>`);
  el.innerHTML = `<h3>${esc(tt('qps'))}</h3>${tableHtml('qps', [tt('col.name'), tt('col.host'), tt('col.qpn'), tt('col.type'), tt('col.state'), tt('sq'), tt('rq')], qps)}
    <h3>${esc(tt('cqs'))}</h3>${tableHtml('cqs', [tt('col.name'), tt('col.host'), tt('col.cqe'), tt('entries')], cqs)}
    <h3>${esc(tt('mrs'))}</h3>${tableHtml('mrs', [tt('col.name'), tt('col.host'), 'lkey', 'rkey', tt('col.len'), tt('col.access')], mrs)}`;
}

// ---------------------------------------------------------------------------------------------
