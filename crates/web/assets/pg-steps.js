// The playground's steps list: each step with its result, errno or completions explained.
// Split out of playground.js; see that file for how the page works.

import { esc, lang } from './i18n.js';
import { abortText, notesHtml, okHtml, ruleHtml, whyHtml } from './pg-results.js';
import { msgHtml } from './pg-msg.js';
import { ERRNO_EXPLAIN, WC_EXPLAIN, tt } from './pg-strings.js';
import { bare } from './pg-session.js';
import { handlesOf, haveModel, qpStatesAfter, rule, transition } from './pg-model.js';
import { explainHtml, fmtPs, stepText, wrColor } from './pg-format.js';
import { $, P } from './pg-state.js';

// ---------------------------------------------------------------------------------------------
// Steps, with their results

/** The first clause of an errno's or status's explanation in the page's language ("远端访问错误"). */
function shortWhat(table, name) {
  const e = table[name];
  if (!e) return lang() === 'en' ? name : '调用失败';
  return (e[lang()] || e.zh)[0].split(/[：:]/)[0];
}

export function resultHtml(s, rec, k) {
  if (!rec) {
    if (P.error && P.error.step === k) {
      const [pre, post] = tt('invalid', { e: '\u0000' }).split('\u0000');
      return `<p class="pg-res k-invalid">${esc(pre)}${P.error.html}${esc(post)}</p>`;
    }
    return `<p class="pg-res muted">${esc(tt('pending'))}</p>`;
  }
  const r = rec.result || {};
  let out = '';
  if (r.kind === 'ok') out += `<p class="pg-res k-ok">✓ ${r.msgs && r.msgs.length ? okHtml(r) : esc(tt('ok'))}</p>`;
  else if (r.kind === 'error') {
    out += `<p class="pg-res k-error">✗ <strong>${esc(r.errno)}</strong> (${esc(r.code)}) — ${lang() === 'en' ? esc(r.text) : `${esc(shortWhat(ERRNO_EXPLAIN, r.errno))}${ruleHtml(r)}`}</p>`;
    if (s.call === 'modify_qp') out += maskDiffHtml(s, k);
    out += explainHtml(ERRNO_EXPLAIN, r.errno, true);
  } else if (r.kind === 'completions') {
    const cs = r.completions || [];
    if (!cs.length) out += `<p class="pg-res k-ok">${esc(tt('nocompl'))}</p>`;
    else {
      out += `<ul class="pg-wcs">${cs.map((c) => `<li class="${c.status === 'SUCCESS' ? 'k-ok' : 'k-error'}" data-status="${esc(c.status)}">
        <span class="pg-wr" style="border-color:${wrColor(c.wr_id)}">wr_id ${esc(c.wr_id)}</span>
        <strong>${esc(c.status)}</strong>${c.status === 'SUCCESS' ? '' : ` <span class="muted">(${esc(lang() === 'en' ? c.status_str : shortWhat(WC_EXPLAIN, bare(c.status)))})</span>`}
        ${c.opcode ? `· ${esc(c.opcode)}` : ''} · ${esc(c.byte_len)} B${c.imm_data != null ? ` · imm ${esc(c.imm_data)}` : ''} · ${esc(c.qp)}</li>`).join('')}</ul>`;
      const bad = [...new Set(cs.map((c) => c.status).filter((x) => x !== 'SUCCESS'))];
      out += bad.map((b) => explainHtml(WC_EXPLAIN, bare(b), true)).join('');
    }
  } else if (r.kind === 'skipped' || r.kind === 'failed') {
    out += `<p class="pg-res k-error">✗ ${esc(tt(r.kind))}: ${whyHtml(r)}</p>`;
  }
  if (rec.notes && rec.notes.length) out += `<ul class="pg-notes">${notesHtml(rec)}</ul>`;
  const failed = (rec.expectations || []).filter((x) => !x.passed && !(x.implicit && r.kind === 'error'));
  if (failed.length) out += `<ul class="pg-exp">${failed.map((x) => `<li>✗ ${expHtml(x)}</li>`).join('')}</ul>`;
  return out;
}

/**
 * A failed expectation in the page's language: what was checked, wanted and found, each either
 * an identifier or value shown as the server wrote it (`wc[0].status`, `IBV_WC_SUCCESS`) or,
 * when the server sends a message id for it (`what_msg`, `expected_msg`, `got_msg`), words.
 */
export function expHtml(x) {
  const part = (text, m) => (m ? msgHtml(m, text) : esc(text));
  const parts = [part(x.what, x.what_msg), part(x.expected, x.expected_msg), part(x.got, x.got_msg)];
  // Fill the sentence with markers, escape it, then put each part's HTML in its marker's place.
  return esc(tt('exp.failed', { what: '\u0001', exp: '\u0002', got: '\u0003' }))
    .replace(/[\u0001-\u0003]/g, (c) => parts[c.charCodeAt(0) - 1]);
}

/** For a failed modify_qp: what the mask lacks or has too much, against the model's rule. */
export function maskDiffHtml(s, k) {
  if (!haveModel()) return '';
  const h = handlesOf(P.session.steps, k);
  const q = h.qp.find((x) => x.name === s.qp);
  const mask = (s.mask || []).map(bare);
  const from = mask.includes('CUR_STATE') && s.cur_state ? s.cur_state : qpStatesAfter(k)[s.qp];
  const to = mask.includes('STATE') ? s.state : from;
  if (!from || !to || !q) return '';
  const tr = transition(from, to);
  if (!tr) return `<p class="pg-diff">${esc(tt('mask.illegal', { from, to }))}</p>`;
  const r = rule(tr, q.type);
  if (!r) return '';
  const missing = r.required.filter((a) => !mask.includes(a));
  const extra = mask.filter((a) => a !== 'STATE' && !r.required.includes(a) && !r.optional.includes(a));
  const parts = [];
  if (missing.length) parts.push(tt('mask.missing', { a: missing.join(', ') }));
  if (extra.length) parts.push(tt('mask.extra', { a: extra.join(', ') }));
  return parts.length ? `<p class="pg-diff">${parts.map(esc).join('<br>')}</p>` : '';
}

export function renderSteps() {
  const list = $('#pg-steps');
  const steps = P.session.raw ? [] : P.session.steps;
  const recs = P.report && P.report.steps;
  if (P.session.raw) {
    list.innerHTML = (recs || []).map((rec) => stepRowHtml(null, rec, rec.index)).join('');
  } else {
    list.innerHTML = steps.map((s, k) => stepRowHtml(s, recs ? recs[k] : null, k + 1)).join('');
  }
  $('#pg-empty').hidden = !!(P.session.raw || steps.length);
  $('#pg-rawnote').hidden = !P.session.raw;
}

export function stepRowHtml(s, rec, n) {
  const kind = rec ? rec.result.kind : (P.error && P.error.step === n ? 'invalid' : 'pending');
  const errno = rec && rec.result.kind === 'error' ? rec.result.errno : '';
  const wcs = rec && rec.result.kind === 'completions' ? (rec.result.completions || []).map((c) => c.status).join(',') : '';
  const text = rec ? rec.text : stepText(s);
  const sel = P.selected === n;
  const del = s && !P.session.raw ? `<button type="button" class="pg-del" data-del="${n}" aria-label="${esc(tt('del', { n }))}" title="${esc(tt('del', { n }))}">✕</button>` : '';
  return `<li class="pg-step k-${esc(kind)}${sel ? ' sel' : ''}" data-testid="step-${n}" data-result-kind="${esc(kind)}" data-errno="${esc(errno)}" data-statuses="${esc(wcs)}">
    <div class="pg-head">
      <button type="button" class="pg-sel" data-sel="${n}" aria-pressed="${sel}" aria-label="${esc(tt('sel', { n }))}">
        <span class="pg-n">${n}</span>${rec && rec.host ? `<span class="pg-host">${esc(rec.host)}</span>` : ''}
        <code>${esc(text)}</code>${rec ? `<span class="pg-t">${esc(fmtPs(rec.time_ps))}</span>` : ''}
      </button>${del}
    </div>
    ${s || rec ? resultHtml(s || {}, rec, n) : ''}
  </li>`;
}

export function renderSummary() {
  const el = $('#pg-summary');
  const r = P.report;
  if (P.error) {
    const [pre, post] = tt('run.error.is', { e: '\u0000' }).split('\u0000');
    el.innerHTML = `<p class="error" role="alert">${esc(pre)}${P.error.html}${esc(post)}</p>`;
    return;
  }
  if (!r) { el.innerHTML = ''; return; }
  const sm = r.summary || {};
  el.innerHTML = `<p class="pg-sum ${r.passed ? 'pass' : 'fail'}" data-passed="${!!r.passed}">
    ${esc(tt('ran', { n: sm.steps ?? r.steps.length, time: fmtPs(r.end_time_ps), p: sm.passed ?? '—', e: sm.expectations ?? '—' }))}
    · ${esc(r.passed ? tt('ran.pass') : tt('ran.fail'))}</p>
    ${r.aborted ? `<p class="error">${esc(tt('aborted', { why: '' }))}${abortText(r)}</p>` : ''}`;
}

// ---------------------------------------------------------------------------------------------
