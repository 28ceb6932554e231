// The course pages: the map (home), the overview, chapters and lessons.

import { t, lang, href, esc } from './i18n.js';
import { api } from './app.js';
// Lesson ladders carry each frame's bytes (data-wire); a click opens the packet inspector.
import './inspector.js';
import { CHAPTER_TOURS, chapterTourHref } from './tour-chapters.js';

const colon = () => (lang() === 'en' ? ': ' : '：');
const comma = () => (lang() === 'en' ? ', ' : '，');
const stars = (n) => '★'.repeat(n) + '☆'.repeat(Math.max(0, 3 - n));

/** `/sim` with a preset, overrides and the row to highlight. */
export function simHref(preset, set = [], hl = null) {
  const p = [['preset', preset], ...set.map((s) => ['set', s])];
  if (hl) p.push(['hl', hl]);
  return href('/sim', p);
}

const MARKS = { lesson1: '①', lesson2: '②', lesson3: '③', lesson4: '④', lesson5: '⑤', lesson5b: '⑤b', lesson6: '⑥' };

function presetLinks(presets) {
  return presets.map((p) => `<a class="chip" data-link href="${simHref(p)}">${esc(t('preset.chip', { mark: MARKS[p] ?? p }))}</a>`).join(' ');
}

// The labs' names are the titles of course/<lang>/labs.toml (GET /api/course/<lang>/labs),
// fetched once per language; these copies of them are used only when that fetch fails.
const LAB_NAMES = {
  zh: { playground: 'Verbs 实验台', incast: '多打一（incast）：PFC、ECN 与 DCQCN', hol: '队头阻塞：PFC 误伤无辜的流', storm: 'PAUSE 风暴与 PFC 看门狗', deadlock: 'PFC 死锁：环形的缓冲依赖', loss: '丢包恢复：go-back-N、选择性重传与 TCP', qps: '一个 QP 还是多个 QP：ECMP 与多路径', trouble: '故障排查：从计数器找原因' },
  en: { playground: 'Verbs playground', incast: 'Incast: PFC, ECN and DCQCN', hol: 'Head-of-line blocking: PFC hits an innocent flow', storm: 'PAUSE storms and the PFC watchdog', deadlock: 'PFC deadlock: a cycle of buffer dependencies', loss: 'Loss recovery: go-back-N, selective repeat and TCP', qps: 'One QP or many: ECMP and multipath', trouble: 'Troubleshooting: find the cause in the counters' },
};

const labsCache = new Map();
/** The labs' texts in the page language (`[{id, title, summary, intro_html, look_html, chapters, cases}]`), or null when the API cannot be reached. */
export function courseLabs() {
  const l = lang();
  if (!labsCache.has(l)) {
    labsCache.set(l, api(`/api/course/${l}/labs`).then((c) => c.labs || [], () => { labsCache.delete(l); return null; }));
  }
  return labsCache.get(l);
}

/** A lab's title: from `labs` (what courseLabs() gave), else the built-in copy, else its id. */
export function labName(labs, id) {
  const text = labs && labs.find((x) => x.id === id);
  return (text && text.title) || (LAB_NAMES[lang()] || LAB_NAMES.zh)[id] || id;
}

/**
 * The chips to the labs of a chapter. The playground's opens the chapter's example session
 * with the chapter's tour (tour-chapters.js) when it has one.
 */
function labLinks(ids = [], labs = null, chapter = null) {
  return ids.map((id) => {
    const toured = id === 'playground' && chapter && Object.hasOwn(CHAPTER_TOURS, chapter);
    const url = toured ? chapterTourHref(chapter) : href(id === 'playground' ? '/playground' : `/lab/${id}`);
    const tour = toured ? ` <span class="chip-tour">${esc(lang() === 'en' ? '(guided tour)' : '（带导览）')}</span>` : '';
    return `<a class="chip lab-chip" data-link data-lab="${esc(id)}"${toured ? ` data-tour-chapter="${esc(chapter)}"` : ''} href="${esc(url)}">${esc(t('open.lab', { t: labName(labs, id) }))}${tour}</a>`;
  }).join(' ');
}

function lessonLinks(ls) {
  return ls.map((n) => `<a class="chip" data-link href="${href(`/lesson/${n}`)}">${esc(t('open.lesson', { n }))}</a>`).join(' ');
}

export async function renderHome(main, live) {
  const c = await api(`/api/course/${lang()}`);
  if (!live()) return;
  document.title = t('title');
  const lessons = c.lessons.map((l) => `
    <li class="card">
      <a data-link href="${href(`/lesson/${l.number}`)}">
        <span class="num">${esc(t('lesson.n', { n: l.number }))}</span>
        <strong>${esc(l.title)}</strong>
        <span class="meta"><span title="${esc(t('stars', { n: l.difficulty }))}" aria-label="${esc(t('stars', { n: l.difficulty }))}">${stars(l.difficulty)}</span> · ${l.minutes} ${esc(t('minutes'))}</span>
        <span class="goal">${esc(l.goal)}</span>
      </a>
    </li>`).join('');
  let n = 1;
  for (const m of c.modules) { m.start = n; n += m.chapters.length; }
  const modules = c.modules.map((m) => `
    <section class="module" aria-labelledby="mod-${esc(m.id)}">
      <h3 id="mod-${esc(m.id)}">${esc(m.title)}</h3>
      <p class="muted">${esc(m.summary)}</p>
      <ol class="chapters" start="${m.start}">${m.chapters.map((ch) => `
        <li><a data-link href="${href(`/chapter/${ch.id}`)}">${esc(ch.title)}</a>${ch.lessons.length || ch.presets.length || (ch.labs || []).length ? ` <span class="demo" title="${esc(t('chapter.demo'))}" aria-label="${esc(t('chapter.demo'))}">▶</span>` : ''}
          <span class="muted">${esc(ch.summary)}</span></li>`).join('')}
      </ol>
    </section>`).join('');
  main.innerHTML = `
    <section class="hero">
      <h1>${esc(t('title'))}</h1>
      <p class="lead">${esc(t('home.lead'))}</p>
      <p><a class="button" data-link href="${href('/overview')}">${esc(t('home.overview'))}</a>
         <a class="button secondary" data-link href="${simHref('lesson1')}">${esc(t('open.sim'))}</a>
         <a class="button secondary" data-link href="${href('/playground')}">${esc(t('nav.playground'))}</a>
         <a class="button secondary" data-link href="${href('/labs')}">${esc(t('nav.labs'))}</a></p>
    </section>
    <h2>${esc(t('home.lessons'))}</h2>
    <ol class="cards">${lessons}</ol>
    <h2>${esc(t('home.map', { m: c.modules.length, c: n - 1 }))}</h2>
    <div class="modules">${modules}</div>`;
}

export async function renderOverview(main, live) {
  const c = await api(`/api/course/${lang()}`);
  if (!live()) return;
  document.title = `${t('nav.overview')} · ${t('title')}`;
  main.innerHTML = `<article class="prose">${c.overview_html}</article>`;
}

/** Links inside server-rendered text (`/glossary#qp`, `/chapter/m1c2`) navigate in place and keep the page language. */
function localLinks(root) {
  for (const a of root.querySelectorAll('a[href^="/"]')) {
    if (a.target === '_blank') continue;
    const u = new URL(a.getAttribute('href'), location.origin);
    if (lang() === 'en') u.searchParams.set('lang', 'en'); else u.searchParams.delete('lang');
    a.setAttribute('href', u.pathname + u.search + u.hash);
    a.dataset.link = '';
  }
}

/** Draws each lab timeline a chapter holds with the labs' own chart code. */
async function paintTimelines(root, live) {
  const boxes = [...root.querySelectorAll('figure.lab-timeline[data-charts]')];
  if (!boxes.length) return;
  const labs = await import('./labs.js');
  if (!live()) return;
  for (const box of boxes) {
    let charts = [];
    try { charts = JSON.parse(box.dataset.charts); } catch { continue; }
    const holder = document.createElement('div');
    box.prepend(holder);
    labs.drawLabCharts(holder, box.dataset.lab, charts);
  }
}

function checkHtml(c, i) {
  const name = `chk-${i}`;
  const head = `<p class="q"><span class="qn">${esc(t('check.q', { n: i + 1 }))}</span> ${c.question_html}</p>`;
  const hint = c.kind === 'predict' ? `<p class="muted">${esc(t('check.predict'))}</p>` : '';
  const input = c.kind === 'number'
    ? `<label>${esc(t('check.number'))} <input type="number" step="any" name="${name}" inputmode="decimal">${c.unit ? ` ${esc(c.unit)}` : ''}</label>`
    : `<ol class="choices" type="A">${c.choices_html.map((x, k) => `<li><label><input type="radio" name="${name}" value="${k}"> ${x}</label></li>`).join('')}</ol>`;
  return `<form class="check" data-check="${i}" data-kind="${esc(c.kind)}">${head}${hint}${input}
    <p><button type="submit">${esc(t('check.submit'))}</button></p><div class="verdict" role="status" aria-live="polite"></div></form>`;
}

const LETTER = (k) => String.fromCharCode(65 + k);

function judge(form, c) {
  const out = form.querySelector('.verdict');
  const name = `chk-${form.dataset.check}`;
  let right;
  let answer;
  if (c.kind === 'number') {
    const v = Number(form.elements[name].value);
    if (form.elements[name].value === '' || !Number.isFinite(v)) { out.textContent = t('check.number.pick'); return; }
    right = Math.abs(v - c.answer) <= (c.tolerance ?? 0) + 1e-9;
    answer = `${c.answer}${c.unit ? ` ${c.unit}` : ''}`;
  } else {
    const picked = form.querySelector(`input[name="${name}"]:checked`);
    if (!picked) { out.textContent = t('check.pick'); return; }
    right = Number(picked.value) === c.answer;
    answer = LETTER(c.answer);
  }
  let sim = '';
  if (c.kind === 'predict' && c.simulated && 'value' in c.simulated) {
    const ch = c.simulated.choice == null ? '—' : LETTER(c.simulated.choice);
    sim = `<p class="simulated">${esc(t('check.sim', { v: typeof c.simulated.value === 'object' ? JSON.stringify(c.simulated.value) : c.simulated.value, c: ch }))}</p>`;
  }
  out.className = `verdict ${right ? 'ok' : 'bad'}`;
  const gap = lang() === 'en' ? ' ' : '';
  out.innerHTML = `<p><strong>${esc(t(right ? 'check.right' : 'check.wrong'))}</strong>${right ? '' : gap + esc(t('check.answer', { a: answer }))}</p>${sim}<p>${c.explain_html}</p>`;
  document.body.dataset.checked = String(Number(document.body.dataset.checked || 0) + 1);
}

export async function renderChapter(main, id, live) {
  const [c, texts] = await Promise.all([api(`/api/course/${lang()}/chapter/${encodeURIComponent(id)}`), courseLabs()]);
  if (!live()) return;
  document.title = `${c.title} · ${t('title')}`;
  const labs = c.labs || [];
  const demo = c.lessons.length || c.presets.length || labs.length
    ? `<aside class="demo-box"><h2>${esc(t('chapter.demo'))}</h2><p>${lessonLinks(c.lessons)} ${presetLinks(c.presets)} ${labLinks(labs, texts, c.id)}</p></aside>` : '';
  const nav = (x, label) => x ? `<a data-link href="${href(`/chapter/${x.id}`)}">${esc(label)} ${esc(x.title)}</a>` : '<span></span>';
  const tries = c.tries.map((x, i) => `
    <li><a class="button${i ? ' secondary' : ''}" data-link data-try="${i}" href="${esc(x.href)}">${x.label}</a>
      <span class="where muted">${esc(t(`ch.try.${x.kind}`))}</span>
      <span class="explain">${x.explain_html}</span></li>`).join('');
  const mis = c.misconceptions.map((m) => `
    <li><p class="wrong"><strong>${esc(t('ch.wrong'))}${colon()}</strong>${m.wrong_html}</p><p class="right"><strong>${esc(t('ch.right'))}${colon()}</strong>${m.right_html}</p></li>`).join('');
  const refs = c.references.map((r) => `<li id="ref-${esc(r.tag)}"><strong>[${esc(r.tag)}]</strong> ${r.text_html}</li>`).join('');
  main.innerHTML = `
    <article class="prose chapter" data-chapter="${esc(c.id)}">
      <p class="crumb">${esc(c.module.title)}</p>
      <h1>${esc(c.title)}</h1>
      <p class="lead">${esc(c.summary)}</p>
      <section class="goals"><h2>${esc(t('ch.goals'))}</h2><ul>${c.goals_html.map((g) => `<li>${g}</li>`).join('')}</ul></section>
      <div class="body">${c.body_html}</div>
      <section class="try"><h2>${esc(t('ch.try'))}</h2><ol>${tries}</ol></section>
      <section class="misconceptions"><h2>${esc(t('ch.mis'))}</h2><ul>${mis}</ul></section>
      <section class="points"><h2>${esc(t('ch.keypoints'))}</h2><ul>${c.key_points_html.map((k) => `<li>${k}</li>`).join('')}</ul></section>
      <section class="checks"><h2>${esc(t('ch.check'))}</h2>${c.checks.map(checkHtml).join('')}</section>
      <section class="refs"><h2>${esc(t('ch.refs'))}</h2><ul>${refs}</ul></section>
      ${demo}
      <nav class="pager">${nav(c.prev, t('chapter.prev'))}${nav(c.next, t('chapter.next'))}</nav>
    </article>`;
  const art = main.querySelector('article');
  localLinks(art.querySelector('.body'));
  for (const sel of ['.goals', '.misconceptions', '.points', '.checks', '.refs', '.try .explain']) {
    for (const el of art.querySelectorAll(sel)) localLinks(el);
  }
  for (const form of art.querySelectorAll('form.check')) {
    form.addEventListener('submit', (e) => { e.preventDefault(); judge(form, c.checks[Number(form.dataset.check)]); });
  }
  await paintTimelines(art, live);
  document.body.dataset.chapter = c.id;
}

export async function renderGlossary(main, live) {
  const g = await api(`/api/course/${lang()}/glossary`);
  if (!live()) return;
  document.title = `${t('nav.glossary')} · ${t('title')}`;
  const name = new Map(g.terms.map((x) => [x.id, x.name]));
  const terms = g.terms.map((x) => `
    <section class="term" id="${esc(x.id)}">
      <h2>${esc(x.name)}</h2>
      ${x.text_html}
      ${x.chapters.length ? `<p class="muted">${esc(t('glossary.chapters'))}${colon()}${x.chapters.map((c) => `<a data-link href="${href(`/chapter/${c.id}`)}">${esc(c.title || c.id)}</a>`).join(comma())}</p>` : ''}
      ${x.see.length ? `<p class="muted">${esc(t('glossary.see'))}${colon()}${x.see.map((s) => `<a href="#${esc(s)}">${esc(name.get(s) || s)}</a>`).join(comma())}</p>` : ''}
      ${x.refs.length ? `<p class="muted">${esc(t('glossary.refs'))}${colon()}${x.refs.map(esc).join(lang() === 'en' ? '; ' : '；')}</p>` : ''}
    </section>`).join('');
  // An index of every term under the lead: the page is long, and the terms are sorted by
  // their English names, which a Chinese reader cannot see from the headings.
  // On a phone the index is a closed disclosure (a hundred links would fill three screens);
  // on a wide screen it starts open.
  const wide = window.matchMedia('(min-width: 601px)').matches;
  const index = `<details class="index-box"${wide ? ' open' : ''}><summary>${esc(t('glossary.index', { n: g.terms.length }))}</summary><nav class="index" aria-label="${esc(t('nav.glossary'))}">${g.terms.map((x) => `<a href="#${esc(x.id)}">${esc(x.name)}</a>`).join('')}</nav></details>`;
  main.innerHTML = `<article class="prose glossary"><h1>${esc(t('nav.glossary'))}</h1><p class="lead">${esc(t('glossary.lead'))}</p>${index}${terms}</article>`;
  localLinks(main);
  if (location.hash) {
    const el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (el) { el.classList.add('target'); el.scrollIntoView(); }
  }
}

export async function renderLesson(main, n, live) {
  const l = await api(`/api/course/${lang()}/lesson/${encodeURIComponent(n)}`);
  if (!live()) return;
  document.title = `${t('lesson.n', { n: l.number })} · ${l.title}`;
  const tries = l.try.map((x, i) => `
    <li>
      <a class="button${i ? ' secondary' : ''}" data-link data-try="${i}" href="${simHref(x.preset, x.set, l.highlight)}">${esc(x.label)}</a>
      <span class="explain">${x.explain}</span>
    </li>`).join('');
  main.innerHTML = `
    <article class="prose lesson">
      <p class="crumb">${esc(t('lesson.n', { n: l.number }))} · <span title="${esc(t('stars', { n: l.difficulty }))}">${stars(l.difficulty)}</span> · ${l.minutes} ${esc(t('minutes'))}</p>
      <h1>${esc(l.title)}</h1>
      <p class="goal"><strong>${esc(t('goal'))}：</strong>${esc(l.goal)}</p>
      ${l.text_html}
      <section class="try"><h2>${esc(t('tryit'))}</h2><ol>${tries}</ol></section>
      <section class="points"><h2>${esc(t('keypoints'))}</h2><ul>${l.key_points.map((k) => `<li>${k}</li>`).join('')}</ul></section>
    </article>`;
}
