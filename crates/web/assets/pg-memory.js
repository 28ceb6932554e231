// The playground's memory view: each buffer's bytes after the selected step, as hex and text,
// with the bytes that step changed highlighted. Everything comes from the session's real bytes
// (the report's `steps[].state.buffers`, scenarios/verbs/README.md): a window of at most 256
// bytes per buffer, placed by the server at the first byte the step changed, and the changed
// ranges. A null `hex` means "the same window as the step before", so the page walks back to
// the last step that sent it.

import { esc, lang } from './i18n.js';
import { handlesOf } from './pg-model.js';
import { $, P } from './pg-state.js';

const S = {
  zh: {
    title: '内存', none: '会话里还没有缓冲区：用 alloc 分配一块。', pick: '选中一步，看它之后每块缓冲区的字节。',
    buf: '{name}（主机 {host}）· {va} · {len} 字节', mr: 'MR {mr}：lkey {lkey}，rkey {rkey}',
    changed: '这一步改变了 {n} 个字节（偏移 {ranges}）', same: '这一步没有改变它', window: '显示偏移 {from}–{to}',
    more: '还有 {n} 段改动未列出', rows: '另有 {n} 行未改动的字节未显示', hidden: '（前 4 KiB 之外的改动看不到）',
  },
  en: {
    title: 'Memory', none: 'No buffer in the session yet: allocate one with alloc.', pick: 'Select a step to see every buffer\'s bytes after it.',
    buf: '{name} (host {host}) · {va} · {len} bytes', mr: 'MR {mr}: lkey {lkey}, rkey {rkey}',
    changed: 'This step changed {n} bytes (offsets {ranges})', same: 'This step did not change it', window: 'showing offsets {from}–{to}',
    more: '{n} more changed ranges not listed', rows: '{n} more unchanged rows not shown', hidden: '(changes past the first 4 KiB are not seen)',
  },
};

/** A string of the memory view in the page's language. */
export function mt(key, vars = {}) {
  const table = S[lang()] || S.zh;
  const s = table[key] ?? S.en[key];
  if (s === undefined) throw new Error(`pg-memory: no string ${key}`);
  return s.replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ''));
}

const hx = (n) => `0x${Number(n).toString(16)}`;

/** The hex window of buffer `name` as of step `n` (1-based): the last one the server sent. */
function windowOf(name, n) {
  const recs = P.report.steps;
  for (let k = n - 1; k >= 0; k--) {
    const b = ((recs[k].state && recs[k].state.buffers) || []).find((x) => x.name === name);
    if (!b) return null;
    if (b.hex != null) return { hex: b.hex, offset: b.offset };
  }
  return null;
}

/** Whether byte `off` of the buffer is in one of `ranges` ([start, end)). */
const inRanges = (ranges, off) => ranges.some(([a, b]) => off >= a && off < b);

function rowsHtml(win, ranges, changedOnly) {
  const bytes = win.hex.match(/../g) || [];
  const rows = [];
  let skipped = 0;
  for (let r = 0; r < bytes.length; r += 16) {
    const base = win.offset + r;
    const hit = ranges.some(([a, b]) => a < base + 16 && b > base);
    // Unchanged buffers show two rows; changed ones every row with a change, and the first.
    if (changedOnly ? !(hit || r === 0) : r >= 32) { skipped++; continue; }
    const cells = [];
    let text = '';
    for (let c = 0; c < 16 && r + c < bytes.length; c++) {
      const off = base + c;
      const v = parseInt(bytes[r + c], 16);
      const on = inRanges(ranges, off);
      cells.push(on ? `<mark class="pg-chg" data-off="${off}">${bytes[r + c]}</mark>` : `<span>${bytes[r + c]}</span>`);
      const ch = v >= 0x20 && v < 0x7f ? String.fromCharCode(v) : '·';
      text += on ? `<mark class="pg-chg">${esc(ch)}</mark>` : esc(ch);
    }
    rows.push(`<div class="pg-hexrow${hit ? ' hit' : ''}"><span class="pg-hexoff">${base.toString(16).padStart(4, '0')}</span><span class="pg-hexb">${cells.join(' ')}</span><span class="pg-hext">${text}</span></div>`);
  }
  if (skipped) rows.push(`<p class="pg-hexmore muted">${esc(mt('rows', { n: skipped }))}</p>`);
  return rows.join('');
}

/** Draws the memory view of the selected step. */
export function renderMemory() {
  const el = $('#pg-memory');
  if (!el) return;
  const recs = P.report && P.report.steps;
  const n = P.selected;
  if (!recs || !recs.length || !n || !recs[n - 1]) { el.innerHTML = `<p class="muted">${esc(mt('pick'))}</p>`; return; }
  const st = recs[n - 1].state || {};
  const bufs = st.buffers || [];
  if (!bufs.length) { el.innerHTML = `<p class="muted">${esc(mt('none'))}</p>`; return; }
  const h = handlesOf(P.session.steps);
  const mrs = st.mrs || [];
  // Changed buffers first: they are what the step is about.
  const order = [...bufs].sort((a, b) => (b.changed.length > 0) - (a.changed.length > 0));
  el.innerHTML = order.map((b) => {
    const win = windowOf(b.name, n);
    const mrNames = h.mr.filter((m) => m.buf === b.name).map((m) => m.name);
    const mrLine = mrs.filter((m) => mrNames.includes(m.name))
      .map((m) => mt('mr', { mr: m.name, lkey: hx(m.lkey), rkey: hx(m.rkey) })).join(' · ');
    const count = b.changed.reduce((s, [a, e]) => s + (e - a), 0);
    const ranges = b.changed.map(([a, e]) => `${a}–${e - 1}`).join(', ');
    const what = b.changed.length ? mt('changed', { n: count, ranges }) : mt('same');
    const shown = win ? mt('window', { from: win.offset, to: win.offset + win.hex.length / 2 - 1 }) : '';
    return `<div class="pg-buf${b.changed.length ? ' changed' : ''}" data-buf="${esc(b.name)}" data-changed="${count}">
      <p class="pg-bufh"><strong>${esc(mt('buf', { name: b.name, host: b.host, va: hx(b.va), len: b.len }))}</strong>${mrLine ? ` <span class="muted">${esc(mrLine)}</span>` : ''}</p>
      <p class="pg-bufw ${b.changed.length ? 'k-ok' : 'muted'}">${esc(what)}${b.changed_more ? ` · ${esc(mt('more', { n: b.changed_more }))}` : ''}${shown ? ` · <span class="muted">${esc(shown)}</span>` : ''}${b.len > 4096 ? ` <span class="muted">${esc(mt('hidden'))}</span>` : ''}</p>
      ${win ? `<div class="pg-hex mono">${rowsHtml(win, b.changed, b.changed.length > 0)}</div>` : ''}
    </div>`;
  }).join('');
}
