// The server's sentences by message id (crates/sim/src/session/msg.rs): a session report's
// results, notes, skips and aborts, and a refused session's reason, each arrive as
// {id, args} beside their English `text`. The page writes them from one table per language
// (msg-zh.json, msg-en.json: the id's template, `{name}` for an argument, `{{` `}}` for braces);
// an argument is a number, a string (an identifier or a value as the simulator wrote it), a
// list (joined with the language's separator) or another message. An id a table lacks is not
// hidden: the English shows, marked `data-untranslated` with the id, and the tests fail on it.

import zh from './msg-zh.json' with { type: 'json' };
import en from './msg-en.json' with { type: 'json' };
import { esc, lang } from './i18n.js';

/** The message tables by language (the tests compare their ids with the server's). */
export const TABLES = { zh, en };
const SEP = { zh: '、', en: ', ' };
/** How an ok result's pieces are joined. */
const PIECES = { zh: '；', en: '; ' };

const isMsg = (a) => a !== null && typeof a === 'object' && !Array.isArray(a) && typeof a.id === 'string';

/** The ids in `m` (nested ones too) that language `l`'s table lacks. */
export function missingIds(m, l = lang()) {
  const t = TABLES[l] || TABLES.zh;
  const out = [];
  const walk = (x) => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (isMsg(x)) {
      if (!Object.hasOwn(t, x.id)) out.push(x.id);
      Object.values(x.args || {}).forEach(walk);
    }
  };
  walk(m);
  return out;
}

function argText(a, l) {
  if (Array.isArray(a)) return a.map((x) => argText(x, l)).join(SEP[l] || SEP.zh);
  if (isMsg(a)) return render(a, l);
  return String(a);
}

function render(m, l) {
  const t = (TABLES[l] || TABLES.zh)[m.id];
  const args = m.args || {};
  return t.replace(/\{\{|\}\}|\{(\w+)\}/g, (s, name) => {
    if (s === '{{') return '{';
    if (s === '}}') return '}';
    return Object.hasOwn(args, name) ? argText(args[name], l) : s;
  });
}

/** A message's text in language `l`, or null when an id in it has no entry there. */
export function msgText(m, l = lang()) {
  if (!isMsg(m) || missingIds(m, l).length) return null;
  return render(m, l);
}

/** HTML for a message in the page's language; `text` is the server's English for it. */
export function msgHtml(m, text) {
  const s = msgText(m);
  return s === null ? missingHtml(m, text) : esc(s);
}

/** HTML for an ok result's pieces (`msgs`), joined as the language joins them. */
export function msgsHtml(msgs, text) {
  const l = lang();
  const list = Array.isArray(msgs) ? msgs : [];
  const parts = list.map((m) => msgText(m, l));
  if (!list.length || parts.some((p) => p === null)) return missingHtml(list, text);
  return esc(parts.join(PIECES[l] || PIECES.zh));
}

/** A message the table cannot write: the ids it lacks, then the server's English. */
function missingHtml(m, text) {
  const ids = isMsg(m) || Array.isArray(m) ? missingIds(m) : [];
  const label = ids.length ? ids.join(' ') : 'no id';
  return `<span class="pg-missing" data-untranslated="${esc(label)}">[${esc(label)}] <span lang="en">${esc(text ?? '')}</span></span>`;
}
