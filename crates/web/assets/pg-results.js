// The server's step results in the page's language, written from their message ids
// (pg-msg.js). The rule texts of errors (quoted man pages, kernel checks) are kept as the
// simulator wrote them, behind a closed disclosure, under the errno's Chinese explanation.

import { esc, lang } from './i18n.js';
import { msgHtml, msgsHtml } from './pg-msg.js';

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

/** The simulator's own English words, kept behind a closed disclosure on a Chinese page. */
export function origHtml(text, untranslated = false) {
  if (lang() === 'en') return esc(text);
  return `<details class="pg-orig"${untranslated ? ' data-untranslated="1"' : ''}><summary>仿真器给出的原文（英文）</summary><span lang="en">${esc(text)}</span></details>`;
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
