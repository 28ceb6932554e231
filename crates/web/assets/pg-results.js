// The server's step results in the page's language, written from their message ids
// (pg-msg.js). The rule texts of errors (quoted man pages, kernel checks) are kept as the
// simulator wrote them, behind a closed disclosure, under the errno's Chinese explanation.

import { esc, lang } from './i18n.js';
import { msgHtml, msgsHtml, msgText } from './pg-msg.js';
import { tt } from './pg-strings.js';

/** An ok result (its `msgs` pieces) as HTML in the page's language. */
export function okHtml(r) {
  return msgsHtml(r.msgs, r.text);
}

/** A skipped or failed step's reason as HTML in the page's language. */
export function whyHtml(r) {
  return msgHtml(r.msg, r.text);
}

/** The step's notes as HTML list items, each from its message id. */
export function notesHtml(rec) {
  const ms = rec.note_msgs || [];
  return (rec.notes || []).map((x, i) => `<li>${msgHtml(ms[i], x)}</li>`).join('');
}

/**
 * A failed verb's rule in the page's language, from its message id (`verr.*`, `vpost.*`): on
 * a Chinese page behind a closed disclosure, under the errno's short explanation; in English
 * the sentence itself.
 */
export function ruleHtml(r) {
  if (lang() === 'en') return esc(r.text);
  return `<details class="pg-orig"><summary>${esc(tt('rule'))}</summary><span>${msgHtml(r.msg, r.text)}</span></details>`;
}

const STAGES = { zh: { posted: '已投递', started: '已开始', done: '已完成' } };

/** An SQ entry's stage (`posted`, `started`, `done`) in the page's language. */
export function stageText(s) {
  return (STAGES[lang()] && STAGES[lang()][s]) || s;
}

/** Why the session stopped early, in the page's language. */
export function abortText(report) {
  return msgHtml(report.aborted_msg, report.aborted);
}

/**
 * A refused session (`/api/verbs` 422) as HTML in the page's language: where (line and column),
 * then the reason from its message id. A TOML syntax error explains the fault in the page's
 * language; on a Chinese page the `toml` parser's own English follows behind a disclosure,
 * labelled as the parser's words. An error without an id shows as the server wrote it.
 */
export function refusalHtml(e) {
  const a = (e && e.api) || {};
  if (!a.msg) return esc((e && e.message) || '');
  const at = Array.isArray(a.at) ? esc(tt('at', { line: a.at[0], col: a.at[1] })) : '';
  let out = at + msgHtml(a.msg, a.error);
  const why = a.msg.id === 'refusal.invalid_toml' && a.msg.args && a.msg.args.why;
  if (why && lang() !== 'en') {
    const raw = msgText(why, 'en') ?? '';
    out += `<details class="pg-orig pg-parser"><summary>${esc(tt('parser.words'))}</summary><span lang="en">${esc(raw)}</span></details>`;
  }
  return out;
}
