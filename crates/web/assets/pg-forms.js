// The playground's forms: one per call, their suggestions, and the step a submitted form describes.
// Split out of playground.js; see that file for how the page works.

import { esc, lang } from './i18n.js';
import { tt } from './pg-strings.js';
import { ATTR_KEYS, BRINGUP, MR_ACCESS, MTUS, OPCODES, QKEY, QP_ACCESS, RANK, SEND_FLAGS } from './pg-session.js';
import { attrs, handlesOf, haveModel, keyOf, qpStatesAfter, rule, states, transition, uniqueName } from './pg-model.js';
import { $, P } from './pg-state.js';

// The forms

export const fid = (call, name) => `pg-${call}-${name}`;

export function field(call, name, label, input, cls = '') {
  return `<div class="pg-f ${cls}" data-field="${name}"><label for="${fid(call, name)}">${esc(label)}</label>${input}</div>`;
}

export function textInput(call, name, value = '', extra = '') {
  return `<input id="${fid(call, name)}" name="${name}" value="${esc(value)}" ${extra}>`;
}

export function selectInput(call, name, options, value, extra = '') {
  return `<select id="${fid(call, name)}" name="${name}" ${extra}>${options.map(([v, l]) => `<option value="${esc(v)}"${String(v) === String(value) ? ' selected' : ''}>${esc(l)}</option>`).join('')}</select>`;
}

export function checks(call, name, label, options, checked) {
  return `<fieldset class="pg-checks" data-field="${name}"><legend>${esc(label)}</legend>${options.map((o) => `
    <label><input type="checkbox" name="${name}" value="${esc(o)}"${checked.includes(o) ? ' checked' : ''}> ${esc(o)}</label>`).join('')}</fieldset>`;
}

export const opts = (list, none = false) => [...(none ? [['', tt('f.none')]] : []), ...list.map((x) => [x.name, `${x.name} (${x.host ?? '?'})`])];

/** The calls the forms add, in the order of their tabs. */
export const CALLS = ['alloc_pd', 'alloc', 'reg_mr', 'create_cq', 'create_qp', 'modify_qp', 'post_send', 'post_recv', 'poll_cq', 'run'];

/** The tab strip above the form: one tab per call (the form of the selected one shows). */
export function tabsHtml() {
  return CALLS.map((c) => `<button type="button" role="tab" class="pg-tab" id="pg-tab-${c}" data-tab="${c}" aria-controls="pg-form-${c}"
    aria-selected="${c === P.tab}" tabindex="${c === P.tab ? 0 : -1}" title="${esc(tt(`call.${c}`))}"><code>${c}</code></button>`).join('');
}

/** Shows the form of `call` and marks its tab; `focus` moves the keyboard focus to the tab. */
export function selectTab(call, focus = false) {
  if (!CALLS.includes(call)) return;
  P.tab = call;
  for (const b of P.main.querySelectorAll('.pg-tab')) {
    const on = b.dataset.tab === call;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    if (on && focus) b.focus();
  }
  for (const f of P.main.querySelectorAll('form.pg-add')) f.hidden = f.dataset.call !== call;
}

/** The tab to open on a session: the next step on the way to a first WRITE. */
export function suggestTab() {
  const h = handlesOf(P.session.steps);
  if (!h.pd.length) return 'alloc_pd';
  if (!h.cq.length) return 'create_cq';
  if (!h.qp.length) return 'create_qp';
  const st = qpStatesAfter(P.session.steps.length);
  if (h.qp.some((q) => (RANK[st[q.name]] ?? 9) < 3)) return 'modify_qp';
  return 'post_send';
}

export function formHtml(call, body) {
  return `<form class="pg-add" id="pg-form-${call}" role="tabpanel" aria-labelledby="pg-tab-${call}" data-testid="add-${call}" data-call="${call}" novalidate${call === P.tab ? '' : ' hidden'}>
    <h3>${esc(tt(`call.${call}`))}</h3>${body}
    <p class="pg-ferr error" id="pg-ferr-${call}" role="alert" hidden></p>
    <button type="submit" data-testid="add-${call}-submit">${esc(tt('f.add'))}</button></form>`;
}

export function nextWrId() {
  let m = 0;
  const see = (v) => { if (typeof v === 'number' && v > m) m = v; };
  for (const s of P.session.steps) {
    see(s.wr_id);
    if (Array.isArray(s.wr)) s.wr.forEach((w) => see(w && w.wr_id));
  }
  return m + 1;
}

export function formsHtml() {
  const h = handlesOf(P.session.steps);
  const hosts = P.session.hosts.map((x) => [x, x]);
  const host0 = P.session.hosts[0];
  const qpOpts = opts(h.qp);
  const firstPd = h.pd[0];
  const wr = nextWrId();
  return [
    formHtml('alloc_pd', field('alloc_pd', 'host', tt('f.host'), selectInput('alloc_pd', 'host', hosts, host0))
      + field('alloc_pd', 'as', tt('f.as'), textInput('alloc_pd', 'as', uniqueName(h, `pd_${host0}`), 'required'))),
    formHtml('alloc', field('alloc', 'host', tt('f.host'), selectInput('alloc', 'host', hosts, host0))
      + field('alloc', 'as', tt('f.as'), textInput('alloc', 'as', uniqueName(h, `buf_${host0}`), 'required'))
      + field('alloc', 'len', tt('f.len'), textInput('alloc', 'len', '4096', 'inputmode="numeric"'))
      + field('alloc', 'text', tt('f.text'), textInput('alloc', 'text', ''))),
    formHtml('reg_mr', field('reg_mr', 'pd', tt('f.pd'), selectInput('reg_mr', 'pd', opts(h.pd), firstPd && firstPd.name))
      + field('reg_mr', 'buf', tt('f.buf'), selectInput('reg_mr', 'buf', opts(h.buf), h.buf[0] && h.buf[0].name))
      + field('reg_mr', 'as', tt('f.as'), textInput('reg_mr', 'as', uniqueName(h, `mr_${firstPd ? firstPd.host : host0}`), 'required'))
      + checks('reg_mr', 'access', tt('f.access'), MR_ACCESS, ['LOCAL_WRITE'])),
    formHtml('create_cq', field('create_cq', 'host', tt('f.host'), selectInput('create_cq', 'host', hosts, host0))
      + field('create_cq', 'as', tt('f.as'), textInput('create_cq', 'as', uniqueName(h, `cq_${host0}`), 'required'))
      + field('create_cq', 'cqe', tt('f.cqe'), textInput('create_cq', 'cqe', '16', 'inputmode="numeric"'))),
    formHtml('create_qp', field('create_qp', 'pd', tt('f.pd'), selectInput('create_qp', 'pd', opts(h.pd), firstPd && firstPd.name))
      + field('create_qp', 'type', tt('f.type'), selectInput('create_qp', 'type', [['RC', 'RC'], ['UC', 'UC'], ['UD', 'UD']], 'RC'))
      + field('create_qp', 'cq', tt('f.cq'), selectInput('create_qp', 'cq', opts(h.cq), h.cq[0] && h.cq[0].name))
      + field('create_qp', 'as', tt('f.as'), textInput('create_qp', 'as', uniqueName(h, `qp_${firstPd ? firstPd.host : host0}`), 'required'))
      + field('create_qp', 'maxwr', tt('f.maxwr'), textInput('create_qp', 'maxwr', '16', 'inputmode="numeric"'))),
    formHtml('modify_qp', field('modify_qp', 'qp', tt('f.qp'), selectInput('modify_qp', 'qp', qpOpts, (laggingQp(h, qpStatesAfter(P.session.steps.length)) || {}).name))
      + field('modify_qp', 'target', tt('f.target'), selectInput('modify_qp', 'target', states().map((x) => [x, x]), 'INIT', 'aria-describedby="pg-modify-rule"'))
      + '<p class="pg-rule" id="pg-modify-rule" data-role="rule"></p><div class="pg-attrs" data-role="attrs"></div>'),
    formHtml('post_send', field('post_send', 'qp', tt('f.qp'), selectInput('post_send', 'qp', qpOpts, h.qp[0] && h.qp[0].name))
      + field('post_send', 'wr_id', tt('f.wr_id'), textInput('post_send', 'wr_id', String(wr), 'inputmode="numeric"'))
      + field('post_send', 'opcode', tt('f.opcode'), selectInput('post_send', 'opcode', OPCODES.map((o) => [o, o]), 'RDMA_WRITE'))
      + checks('post_send', 'flags', tt('f.flags'), SEND_FLAGS, ['SIGNALED'])
      + field('post_send', 'mr', tt('f.sge'), selectInput('post_send', 'mr', opts(h.mr, true), ''))
      + field('post_send', 'offset', tt('f.offset'), textInput('post_send', 'offset', '0', 'inputmode="numeric"'))
      + field('post_send', 'len', tt('f.sgelen'), textInput('post_send', 'len', '64', 'inputmode="numeric"'))
      + field('post_send', 'rmr', tt('f.remote'), selectInput('post_send', 'rmr', opts(h.mr), ''), 'only-remote')
      + field('post_send', 'roffset', tt('f.roffset'), textInput('post_send', 'roffset', '0', 'inputmode="numeric"'), 'only-remote')
      + field('post_send', 'imm', tt('f.imm'), textInput('post_send', 'imm', '0', 'inputmode="numeric"'), 'only-imm')
      + field('post_send', 'compare', tt('f.compare'), textInput('post_send', 'compare', '0', 'inputmode="numeric"'), 'only-cas')
      + field('post_send', 'swap', tt('f.swap'), textInput('post_send', 'swap', '1', 'inputmode="numeric"'), 'only-cas')
      + field('post_send', 'add', tt('f.addv'), textInput('post_send', 'add', '1', 'inputmode="numeric"'), 'only-faa')
      + field('post_send', 'udqp', tt('f.ud'), selectInput('post_send', 'udqp', qpOpts, ''), 'only-ud')
      + field('post_send', 'qkey', tt('f.qkey'), textInput('post_send', 'qkey', `0x${QKEY.toString(16)}`), 'only-ud')),
    formHtml('post_recv', field('post_recv', 'qp', tt('f.qp'), selectInput('post_recv', 'qp', qpOpts, h.qp[0] && h.qp[0].name))
      + field('post_recv', 'wr_id', tt('f.wr_id'), textInput('post_recv', 'wr_id', String(wr + 99), 'inputmode="numeric"'))
      + field('post_recv', 'mr', tt('f.sge'), selectInput('post_recv', 'mr', opts(h.mr, true), ''))
      + field('post_recv', 'offset', tt('f.offset'), textInput('post_recv', 'offset', '0', 'inputmode="numeric"'))
      + field('post_recv', 'len', tt('f.sgelen'), textInput('post_recv', 'len', '', 'inputmode="numeric"'))),
    formHtml('poll_cq', field('poll_cq', 'cq', 'CQ', selectInput('poll_cq', 'cq', opts(h.cq), h.cq[0] && h.cq[0].name))
      + field('poll_cq', 'max', tt('f.max'), textInput('poll_cq', 'max', '16', 'inputmode="numeric"'))
      + field('poll_cq', 'wait', tt('f.wait'), textInput('poll_cq', 'wait', '50us'))),
    formHtml('run', field('run', 'for', tt('f.for'), textInput('run', 'for', '10us'))),
  ].join('');
}

/** The values of a form's named fields (checkbox groups as arrays). */
export function formValues(form) {
  const v = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === 'checkbox') {
      if (!Array.isArray(v[el.name])) v[el.name] = [];
      if (el.checked) v[el.name].push(el.value);
    } else v[el.name] = el.value;
  }
  return v;
}

export function restoreValues(form, v) {
  for (const el of form.elements) {
    if (!el.name || !(el.name in v)) continue;
    if (el.type === 'checkbox') el.checked = v[el.name].includes(el.value);
    else if (el.tagName === 'SELECT') { if ([...el.options].some((o) => o.value === v[el.name])) el.value = v[el.name]; else continue; }
    else el.value = v[el.name];
    el.dataset.dirty = '1';
  }
}

/** The fields of a form the learner changed (the others are suggestions, computed again). */
export function dirtyValues(form) {
  const all = formValues(form);
  const names = new Set([...form.elements].filter((el) => el.name && el.dataset.dirty === '1' && !/^[mv]_/.test(el.name)).map((el) => el.name));
  return Object.fromEntries(Object.entries(all).filter(([k]) => names.has(k)));
}

/**
 * Re-renders the forms, keeping what the learner typed in the forms they did not submit. After an
 * "Add", the keyboard focus goes back to that form's button (unless it moved elsewhere meanwhile).
 */
export function renderForms() {
  const box = $('#pg-forms');
  const keep = {};
  for (const f of box.querySelectorAll('form.pg-add')) {
    if (f.dataset.call !== P.submitted) keep[f.dataset.call] = dirtyValues(f);
  }
  P.submitted = null;
  const a = document.activeElement;
  const focusCall = P.focusCall && (!a || a === document.body || box.contains(a)) ? P.focusCall : null;
  P.focusCall = null;
  box.innerHTML = formsHtml();
  const h = handlesOf(P.session.steps);
  for (const f of box.querySelectorAll('form.pg-add')) {
    const v = keep[f.dataset.call] || {};
    // A name the learner typed is kept unless a step took it meanwhile.
    if (v.as && h.names.has(v.as)) delete v.as;
    restoreValues(f, v);
    syncForm(f, null);
  }
  box.querySelectorAll('input, select, button').forEach((el) => { el.disabled = !!P.session.raw; });
  P.main.querySelectorAll('.pg-tab').forEach((el) => { el.disabled = !!P.session.raw; });
  if (focusCall) {
    const b = box.querySelector(`form[data-call="${focusCall}"] button[type=submit]`);
    if (b && !b.disabled) b.focus({ preventScroll: true });
  }
}

/**
 * Fills a form's suggestions: every field the learner has not touched (a free name, the CQ and
 * buffer on the PD's host, the MRs on the QP's host and its peer's, modify_qp's next state and
 * attributes) and which fields show. `changed` names the field that just changed, if any.
 */
export function syncForm(form, changed) {
  const call = form.dataset.call;
  const h = handlesOf(P.session.steps);
  const get = (n) => form.querySelector(`[name="${n}"]`);
  const auto = (n) => get(n) && get(n).dataset.dirty !== '1';
  const hostFor = () => {
    if (get('host')) return get('host').value;
    const pd = h.pd.find((x) => x.name === (get('pd') || {}).value);
    return pd ? pd.host : P.session.hosts[0];
  };
  if (auto('as')) {
    const base = { alloc_pd: 'pd', alloc: 'buf', reg_mr: 'mr', create_cq: 'cq', create_qp: 'qp' }[call];
    get('as').value = uniqueName(h, `${base}_${hostFor()}`);
  }
  if (call === 'create_qp' && auto('cq')) {
    const cq = h.cq.find((x) => x.host === hostFor());
    if (cq) get('cq').value = cq.name;
  }
  if (call === 'reg_mr' && auto('buf')) {
    const buf = h.buf.find((x) => x.host === hostFor() && !h.mr.some((m) => m.buf === x.name)) || h.buf.find((x) => x.host === hostFor());
    if (buf) get('buf').value = buf.name;
  }
  if (call === 'modify_qp') {
    if (changed === 'qp') delete get('target').dataset.dirty;
    syncModify(form);
  }
  if (call === 'post_send' || call === 'post_recv') {
    const q = h.qp.find((x) => x.name === get('qp').value);
    if (q) {
      const local = h.mr.find((m) => m.host === q.host);
      if (auto('mr')) get('mr').value = local ? local.name : '';
      if (call === 'post_send') {
        const remote = h.mr.find((m) => m.host !== q.host);
        if (remote && auto('rmr')) get('rmr').value = remote.name;
        const peer = peerOf(h, q);
        if (peer && auto('udqp')) get('udqp').value = peer.name;
      }
    }
    if (call === 'post_send') {
      const op = get('opcode').value;
      const show = {
        'only-remote': /^(RDMA_|ATOMIC_)/.test(op), 'only-imm': /WITH_IMM$/.test(op),
        'only-cas': op === 'ATOMIC_CMP_AND_SWP', 'only-faa': op === 'ATOMIC_FETCH_AND_ADD', 'only-ud': !!(q && q.type === 'UD'),
      };
      for (const [cls, on] of Object.entries(show)) form.querySelectorAll(`.${cls}`).forEach((el) => { el.hidden = !on; });
      if (changed === 'opcode' && /^ATOMIC_/.test(op) && auto('len')) get('len').value = '8';
    }
  }
}

/** The QP that most needs a modify_qp: the one furthest behind on RESET → INIT → RTR → RTS. */
export function laggingQp(h, st) {
  let best = null;
  for (const q of h.qp) {
    const r = RANK[st[q.name]] ?? 9;
    if (r < 3 && (!best || r < best.r)) best = { q, r };
  }
  return best ? best.q : h.qp[0];
}

/** The peer of a QP: the first QP of the same type on another host. */
export function peerOf(h, q) {
  return h.qp.find((x) => x.host !== q.host && x.type === q.type) || null;
}

/** The PSN a QP starts sending with in the forms' defaults: 100 × (its host's position + 1). */
export function psnOf(q) {
  const k = P.session.hosts.indexOf(q ? q.host : '');
  return 100 * (k < 0 ? 1 : k + 1);
}

export function attrInput(attr, q, peer, h, cur) {
  const spec = ATTR_KEYS[attr];
  if (!spec) return '';
  const [, kind, dflt] = spec;
  const key = keyOf(attr);
  const id = esc(fid('modify_qp', `v_${attr}`));
  const name = esc(`v_${attr}`);
  const label = `<label class="pg-vl" for="${id}">${esc(key)}</label>`;
  if (kind === 'state') return `${label}<select id="${id}" name="${name}">${states().map((s) => `<option${s === cur ? ' selected' : ''}>${esc(s)}</option>`).join('')}</select>`;
  if (kind === 'bool') return `<label class="pg-vl"><input type="checkbox" name="${name}" value="true"${dflt ? ' checked' : ''}> ${esc(key)}</label>`;
  if (kind === 'access') return `<span class="pg-vl">${esc(key)}:</span>${QP_ACCESS.map((a) => `<label class="pg-inl"><input type="checkbox" name="${name}" value="${a}"${dflt.includes(a) ? ' checked' : ''}> ${esc(a)}</label>`).join('')}`;
  if (kind === 'host') {
    const def = peer ? peer.host : P.session.hosts.find((x) => !q || x !== q.host);
    return `${label}<select id="${id}" name="${name}">${P.session.hosts.map((x) => `<option${x === def ? ' selected' : ''}>${esc(x)}</option>`).join('')}</select>`;
  }
  if (kind === 'mtu') return `${label}<select id="${id}" name="${name}">${MTUS.map((m) => `<option${m === dflt ? ' selected' : ''}>${m}</option>`).join('')}</select>`;
  if (kind === 'qp') return `${label}<select id="${id}" name="${name}">${h.qp.map((x) => `<option value="${esc(x.name)}"${peer && x.name === peer.name ? ' selected' : ''}>${esc(x.name)} (${esc(x.host)})</option>`).join('')}</select>`;
  let v = dflt;
  if (attr === 'SQ_PSN') v = psnOf(q);
  if (attr === 'RQ_PSN') v = peer ? psnOf(peer) : 0;
  if (attr === 'QKEY') v = `0x${QKEY.toString(16)}`;
  return `${label}<input id="${id}" name="${name}" value="${esc(v)}" inputmode="numeric">`;
}

/** One attribute of modify_qp's list; `attr` comes from the model, so every use is escaped. */
export function attrRow(attr, tag, checked, q, peer, h, cur) {
  const id = esc(fid('modify_qp', `m_${attr}`));
  const a = esc(attr);
  return `<div class="pg-attr${tag ? ` t-${esc(tag)}` : ''}" data-attr="${a}">
    <input type="checkbox" id="${id}" name="m_${a}" value="${a}"${checked ? ' checked' : ''}>
    <label for="${id}"><code>${a}</code>${tag ? ` <span class="pg-tag">${esc(tt(`f.tag.${tag}`))}</span>` : ''}</label>
    <span class="pg-val">${attrInput(attr, q, peer, h, cur)}</span></div>`;
}

/**
 * Fills modify_qp's attribute list for the chosen QP (in the state it is in after the last step)
 * and target: the required attributes ticked, the optional ones offered, the rest under "other"
 * (ticking one gives EINVAL). Unless the learner chose a target, it proposes the next state on
 * the way to RTS.
 */
export function syncModify(form) {
  const h = handlesOf(P.session.steps);
  const st = qpStatesAfter(P.session.steps.length);
  const qpSel = form.querySelector('[name="qp"]');
  const tgSel = form.querySelector('[name="target"]');
  const q = h.qp.find((x) => x.name === qpSel.value);
  const cur = q ? st[q.name] : null;
  if (tgSel.dataset.dirty !== '1' && cur) tgSel.value = BRINGUP[cur] || (cur === 'ERR' ? 'RESET' : 'RTS');
  const target = tgSel.value;
  const peer = q ? peerOf(h, q) : null;
  const ruleEl = form.querySelector('[data-role="rule"]');
  const box = form.querySelector('[data-role="attrs"]');
  const all = attrs().filter((a) => a !== 'STATE');
  const stateId = fid('modify_qp', 'm_STATE');
  const stateRow = `<div class="pg-attr t-req" data-attr="STATE"><input type="checkbox" id="${stateId}" name="m_STATE" value="STATE" checked>
    <label for="${stateId}"><code>STATE</code></label><span class="pg-val muted">state = ${esc(target)}</span></div>`;
  if (!q) { ruleEl.textContent = tt('no.qp'); box.innerHTML = ''; return; }
  const tr = haveModel() && cur ? transition(cur, target) : null;
  const r = tr ? rule(tr, q.type) : null;
  const head = cur ? tt('f.cur', { qp: q.name, state: cur }) : '';
  if (r) {
    ruleEl.textContent = `${head}${lang() === 'en' ? ' ' : ''}${tt('f.legal', { from: cur, to: target, req: r.required.join(', ') || tt('edge.nothing'), opt: r.optional.join(', ') || tt('edge.nothing') })}`;
    const others = all.filter((a) => !r.required.includes(a) && !r.optional.includes(a));
    box.innerHTML = stateRow
      + r.required.map((a) => attrRow(a, 'req', true, q, peer, h, cur)).join('')
      + r.optional.map((a) => attrRow(a, 'opt', false, q, peer, h, cur)).join('')
      + (others.length ? `<details class="pg-other"><summary>${esc(tt('f.attrs.other'))}</summary>${others.map((a) => attrRow(a, '', false, q, peer, h, cur)).join('')}</details>` : '');
  } else {
    ruleEl.textContent = haveModel() && cur ? `${head}${lang() === 'en' ? ' ' : ''}${tt('f.illegal', { from: cur, to: target })}` : head;
    box.innerHTML = stateRow + all.map((a) => attrRow(a, '', false, q, peer, h, cur)).join('');
  }
  ruleEl.classList.toggle('error', !!(haveModel() && cur && !r));
}

// Parsing form values ---------------------------------------------------------------------------

/** A value a form cannot send, with the field to point at. */
export class FormError extends Error {
  constructor(message, field = null) {
    super(message);
    this.field = field;
  }
}

export const U64_MAX = (1n << 64n) - 1n;
// The session file's limits (crates/sim/src/session/plan.rs), checked before the server sees the step.
export const LIMIT = { buffer: 16 << 20, cqe: 8388608, depth: 65536, poll: 4096, offset: 2 ** 40, imm: 2 ** 32 - 1, stepPs: 10e12 };

/** A whole number in [min, max] (decimal or 0x hex); `undefined` for an empty optional field. */
export function intOf(v, label, { field = null, optional = false, min = 0, max = U64_MAX } = {}) {
  const s = String(v ?? '').trim().replace(/_/g, '');
  if (s === '' && optional) return undefined;
  const range = () => new FormError(tt('f.range', { f: label, min: String(min), max: String(max), e: s }), field);
  if (/^-\d+$/.test(s)) throw range();
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(s)) throw new FormError(tt('f.int', { f: label, e: s }), field);
  const b = BigInt(s);
  if (b < BigInt(min) || b > BigInt(max)) throw range();
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

export function nameOf(v, label, field) {
  const s = String(v ?? '').trim();
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/.test(s)) throw new FormError(tt('f.name', { f: label, e: s }), field);
  return s;
}

export const UNIT_PS = { ps: 1, ns: 1e3, us: 1e6, 'µs': 1e6, ms: 1e9, s: 1e12 };

/** A duration as the session file writes it: a number and a unit, more than 0, at most 10 s. */
export function durationOf(v, label, { field = null, optional = false } = {}) {
  const s = String(v ?? '').trim();
  if (s === '' && optional) return undefined;
  const m = /^(\d+(?:\.\d{1,12})?)\s*(ps|ns|us|µs|ms|s)$/.exec(s);
  if (!m) throw new FormError(tt('f.dur', { f: label, e: s }), field);
  const ps = Number(m[1]) * UNIT_PS[m[2]];
  if (!(ps > 0)) throw new FormError(tt('f.durzero', { f: label }), field);
  if (ps > LIMIT.stepPs) throw new FormError(tt('f.durmax', { f: label, max: '10 s', e: s }), field);
  return s;
}

export function need(v, label, field) {
  if (!v) throw new FormError(tt('f.need', { f: label }), field);
  return v;
}

export function sgeOf(v) {
  if (!v.mr) return undefined;
  const sge = { mr: v.mr };
  const off = intOf(v.offset, tt('f.offset'), { field: 'offset', optional: true, max: LIMIT.offset });
  if (off) sge.offset = off;
  const len = intOf(v.len, tt('f.sgelen'), { field: 'len', optional: true, max: 2 ** 32 - 1 });
  if (len !== undefined) sge.len = len;
  return sge;
}

/** The step a submitted form describes; throws a FormError naming the field that is wrong. */
export function stepFromForm(form) {
  const call = form.dataset.call;
  const v = formValues(form);
  const h = handlesOf(P.session.steps);
  const s = { call };
  const as = () => nameOf(v.as, tt('f.as'), 'as');
  switch (call) {
    case 'alloc_pd': s.host = v.host; s.as = as(); break;
    case 'alloc': {
      s.host = v.host; s.as = as(); s.len = intOf(v.len, tt('f.len'), { field: 'len', min: 1, max: LIMIT.buffer });
      if (v.text) s.text = v.text;
      break;
    }
    case 'reg_mr': s.pd = need(v.pd, tt('f.pd'), 'pd'); s.buf = need(v.buf, tt('f.buf'), 'buf'); s.as = as(); s.access = v.access || []; break;
    case 'create_cq': s.host = v.host; s.as = as(); s.cqe = intOf(v.cqe, tt('f.cqe'), { field: 'cqe', min: 1, max: LIMIT.cqe }); break;
    case 'create_qp': {
      s.pd = need(v.pd, tt('f.pd'), 'pd'); s.as = as(); s.type = v.type; s.cq = need(v.cq, tt('f.cq'), 'cq');
      const m = intOf(v.maxwr, tt('f.maxwr'), { field: 'maxwr', optional: true, min: 1, max: LIMIT.depth });
      if (m !== undefined) { s.max_send_wr = m; s.max_recv_wr = m; }
      break;
    }
    case 'modify_qp': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      if (!h.qp.some((x) => x.name === s.qp)) throw new FormError(tt('no.qp'), 'qp');
      const mask = attrs().filter((a) => (v[`m_${a}`] || []).length);
      if (mask.includes('STATE')) s.state = v.target;
      for (const a of mask) {
        const spec = ATTR_KEYS[a];
        if (!spec || a === 'STATE') continue;
        const kind = spec[1];
        const key = keyOf(a);
        const raw = v[`v_${a}`];
        if (kind === 'int') s[key] = intOf(raw, key, { field: `v_${a}` });
        else if (kind === 'mtu') s[key] = Number(raw);
        else if (kind === 'bool') s[key] = (raw || []).length > 0;
        else if (kind === 'access') s[key] = raw || [];
        else s[key] = need(raw, key, `v_${a}`);
      }
      s.mask = mask;
      break;
    }
    case 'post_send': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      const q = h.qp.find((x) => x.name === s.qp);
      s.wr_id = intOf(v.wr_id, tt('f.wr_id'), { field: 'wr_id' });
      s.opcode = v.opcode;
      s.flags = v.flags || [];
      const sge = sgeOf(v);
      if (sge) s.sge = sge;
      if (/^(RDMA_|ATOMIC_)/.test(s.opcode)) {
        s.remote = { mr: need(v.rmr, tt('f.remote'), 'rmr') };
        const off = intOf(v.roffset, tt('f.roffset'), { field: 'roffset', optional: true, max: LIMIT.offset });
        if (off) s.remote.offset = off;
      }
      if (/WITH_IMM$/.test(s.opcode)) s.imm = intOf(v.imm, tt('f.imm'), { field: 'imm', max: LIMIT.imm });
      if (s.opcode === 'ATOMIC_CMP_AND_SWP') {
        s.compare = intOf(v.compare, tt('f.compare'), { field: 'compare' });
        s.swap = intOf(v.swap, tt('f.swap'), { field: 'swap' });
      }
      if (s.opcode === 'ATOMIC_FETCH_AND_ADD') s.add = intOf(v.add, tt('f.addv'), { field: 'add' });
      if (q && q.type === 'UD') s.ud = { qp: need(v.udqp, tt('f.ud'), 'udqp'), qkey: intOf(v.qkey, tt('f.qkey'), { field: 'qkey', max: 2 ** 32 - 1 }) };
      if (!s.flags.length) delete s.flags;
      break;
    }
    case 'post_recv': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      s.wr_id = intOf(v.wr_id, tt('f.wr_id'), { field: 'wr_id' });
      const sge = sgeOf(v);
      if (sge) s.sge = sge;
      break;
    }
    case 'poll_cq': {
      s.cq = need(v.cq, 'CQ', 'cq');
      const max = intOf(v.max, tt('f.max'), { field: 'max', optional: true, min: 1, max: LIMIT.poll });
      if (max !== undefined && max !== 16) s.max = max;
      const w = durationOf(v.wait, tt('f.wait'), { field: 'wait', optional: true });
      if (w) s.wait = w;
      break;
    }
    case 'run': s.for = durationOf(v.for, tt('f.for'), { field: 'for' }); break;
    default: break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
