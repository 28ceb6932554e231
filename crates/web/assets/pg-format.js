// Formatting shared by the playground's parts: times, hex, a step as one line, WR colours, explanations.
// Split out of playground.js; see that file for how the page works.

import { esc, lang } from './i18n.js';
import { fmtNs } from './draw.js';
import { tt } from './pg-strings.js';
import { tomlValue } from './pg-toml.js';

// ---------------------------------------------------------------------------------------------
// Formatting

/** Simulated time (the API's picoseconds) as ns, µs or ms. */
export const fmtPs = (ps) => fmtNs(ps == null ? null : ps / 1e3);

export const hex = (v) => (typeof v === 'number' ? `0x${v.toString(16)}` : esc(v ?? '—'));

/** A step as one line, when the server has not described it. */
export function stepText(s) {
  const args = Object.entries(s).filter(([k]) => k !== 'call' && k !== 'expect' && k !== '#')
    .map(([k, v]) => `${k} ${typeof v === 'string' ? v : tomlValue(v)}`);
  return `${s.call}(${args.join(', ')})`;
}

export const WR_COLORS = ['#0b6bcb', '#c2571a', '#0a8a5c', '#7b5cd6', '#b3261e', '#8a6d00', '#0f7c8c', '#a3367a'];
export const wrColor = (id) => (id == null ? '#7a838c' : WR_COLORS[Math.abs(Number(id) || 0) % WR_COLORS.length]);

/** The explanation of a completion status or errno, as a <details>. */
export function explainHtml(table, name, open = false) {
  const e = table[name];
  if (!e) return '';
  const [what, cause, check] = e[lang()] || e.zh;
  return `<details class="pg-why"${open ? ' open' : ''}><summary>${esc(tt('why'))} <code>${esc(name)}</code></summary>
    <dl><dt>${esc(tt('what'))}</dt><dd>${esc(what)}</dd><dt>${esc(tt('cause'))}</dt><dd>${esc(cause)}</dd><dt>${esc(tt('check'))}</dt><dd>${esc(check)}</dd></dl></details>`;
}
