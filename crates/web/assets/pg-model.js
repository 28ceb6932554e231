// The session's handles and QP states, and the verbs model (GET /api/verbs/model) the page draws and checks with.
// Split out of playground.js; see that file for how the page works.

import { ATTR_KEYS, bare } from './pg-session.js';
import { isTable } from './pg-toml.js';
import { P } from './pg-state.js';

// ---------------------------------------------------------------------------------------------
// The session's handles and states

/** Every handle the first `upto` steps define: {pd, buf, mr, cq, qp: [{name, host, ...}], names}. */
export function handlesOf(steps, upto = steps.length) {
  const h = { pd: [], buf: [], mr: [], cq: [], qp: [], names: new Set() };
  const hostOf = {};
  const add = (kind, name, host, more = {}) => {
    if (typeof name !== 'string') return;
    hostOf[name] = host;
    h.names.add(name);
    h[kind].push({ name, host, ...more });
  };
  for (const s of steps.slice(0, upto)) {
    if (s.call === 'alloc_pd') add('pd', s.as, s.host);
    else if (s.call === 'alloc') add('buf', s.as, s.host, { len: s.len });
    else if (s.call === 'reg_mr') add('mr', s.as, hostOf[s.pd], { access: s.access || [], buf: s.buf });
    else if (s.call === 'create_cq') add('cq', s.as, s.host);
    else if (s.call === 'create_qp') add('qp', s.as, hostOf[s.pd], { type: String(s.type || 'RC').toUpperCase() });
    else if (s.call === 'connect' && Array.isArray(s.hosts)) {
      s.hosts.forEach((host, k) => {
        add('pd', (s.pd || [])[k], host);
        add('cq', (s.cq || [])[k], host);
        add('qp', (s.qp || [])[k], host, { type: 'RC' });
      });
    }
  }
  return h;
}

/** `base` or `base2`, `base3`… whichever no step names yet. */
export function uniqueName(h, base) {
  if (!h.names.has(base)) return base;
  for (let k = 2; ; k++) if (!h.names.has(`${base}${k}`)) return `${base}${k}`;
}

/**
 * The state of every QP after step `upto` (1-based; 0 = before any step): the server's `state`
 * when it sent one, else worked out from the steps that succeeded (creation, connect, modify_qp).
 */
export function qpStatesAfter(upto) {
  const recs = P.report && P.report.steps;
  if (upto > 0 && recs && recs[upto - 1] && recs[upto - 1].state && Array.isArray(recs[upto - 1].state.qps)) {
    return Object.fromEntries(recs[upto - 1].state.qps.map((q) => [q.name, q.state]));
  }
  const st = {};
  P.session.steps.slice(0, upto).forEach((s, k) => {
    const rec = recs && recs[k];
    const ok = !rec || rec.result.kind === 'ok' || rec.result.kind === 'completions';
    if (!ok) return;
    if (s.call === 'create_qp' && typeof s.as === 'string') st[s.as] = 'RESET';
    if (s.call === 'connect' && Array.isArray(s.qp)) for (const q of s.qp) st[q] = 'RTS';
    if (s.call === 'modify_qp' && typeof s.state === 'string' && (s.mask || []).map(bare).includes('STATE')) st[s.qp] = s.state;
  });
  return st;
}

/** The model's row for from → to, or null. */
export function transition(from, to) {
  return (P.model.transitions || []).find((x) => x.from === from && x.to === to) || null;
}

/** Required and optional attributes (no STATE) of a transition for a QP type. */
export function rule(tr, type) {
  const r = tr && (tr[String(type || 'RC').toLowerCase()] || tr.rc);
  if (!r) return null;
  const clean = (l) => (l || []).map(bare).filter((a) => a !== 'STATE');
  return { required: clean(r.required), optional: clean(r.optional) };
}

export const states = () => P.model.states || [];
/** Whether the model arrived (GET /api/verbs/model answered). */
export const haveModel = () => (P.model.transitions || []).length > 0;
/**
 * Every mask bit the form offers: the model's `attrs` (`{key, mask}`) in its order, then any
 * other bit its transitions name.
 */
export function attrs() {
  const seen = new Set();
  for (const a of P.model.attrs || []) seen.add(bare(isTable(a) ? a.mask : a));
  for (const tr of P.model.transitions || []) {
    for (const ty of ['rc', 'uc', 'ud']) for (const l of [tr[ty] && tr[ty].required, tr[ty] && tr[ty].optional]) for (const b of l || []) seen.add(bare(b));
  }
  seen.delete('');
  return [...seen];
}

/** The session key that carries a mask bit's value: the model's when it names one. */
export function keyOf(bit) {
  const a = (P.model.attrs || []).find((x) => isTable(x) && bare(x.mask) === bit);
  return a && a.key ? a.key : ATTR_KEYS[bit] && ATTR_KEYS[bit][0];
}
export const profiles = () => (P.model.profiles && P.model.profiles.length ? P.model.profiles : [P.session.profile || 'mlx5']);

/** What the page uses when GET /api/verbs/model fails: nothing to draw, nothing to offer. */
export const NO_MODEL = { states: [], qp_types: [], transitions: [], attrs: [], profiles: [], wc_status: [], errno: [] };
