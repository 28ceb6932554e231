// The lab's router: one HTML shell, pages rendered from the JSON API. Links marked
// `data-link` navigate without reloading; the language lives in the query (`?lang=en`).

import { t, lang, esc } from './i18n.js';
import { msgText } from './pg-msg.js';
import { renderHome, renderOverview, renderChapter, renderLesson, renderGlossary } from './course.js';
import { renderSim } from './sim.js';

// The playground and the labs load their modules on first use.
const lazy = (file, name) => async (...args) => (await import(file))[name](...args);

const routes = [
  [/^\/$/, renderHome],
  [/^\/overview$/, renderOverview],
  [/^\/chapter\/([A-Za-z0-9_-]{1,20})$/, renderChapter],
  [/^\/lesson\/(\d{1,2})$/, renderLesson],
  [/^\/glossary$/, renderGlossary],
  [/^\/sim$/, renderSim],
  [/^\/playground$/, lazy('./playground.js', 'renderPlayground')],
  [/^\/labs$/, lazy('./labs.js', 'renderLabs')],
  [/^\/lab\/([a-z_]{1,20})$/, lazy('./labs.js', 'renderLab')],
];

/** Fetches JSON from the API; throws an Error carrying the API's error body. */
export async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  };
  let r;
  try {
    r = await fetch(path, init);
  } catch {
    // The browser's own words ("Failed to fetch") are in its language, not the page's.
    throw new Error(t('err.network'));
  }
  const j = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) {
    const e = new Error(j.error || r.statusText);
    e.api = j;
    e.status = r.status;
    throw e;
  }
  return j;
}

/**
 * What an API error allows, in the page's language: from its `allowed_msg` id when the server
 * sends one (words), else as the server wrote it (a range, a list of names).
 */
export function allowedText(a) {
  return (a && a.allowed_msg && msgText(a.allowed_msg)) || (a && a.allowed) || '';
}

/**
 * An API error as one readable line, in the page's language when the server sent its sentence
 * as a message id (`msg`: busy, budgets, limits); an id the table lacks shows the English.
 */
export function errorText(e) {
  const a = e.api;
  const said = (a && a.msg && msgText(a.msg)) || (a && a.error) || e.message;
  if (a && a.field && a.allowed) {
    const allowed = allowedText(a);
    // A sentence that already says what is allowed ("… out of range: allowed 2 to 32") is
    // not told it a second time.
    if (said.includes(allowed)) return t('err.field.said', { f: a.field, e: said });
    return t('err.field', { f: a.field, e: said, a: allowed });
  }
  return said;
}

function chrome() {
  document.documentElement.lang = lang() === 'en' ? 'en' : 'zh-CN';
  document.querySelectorAll('[data-i18n]').forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.querySelectorAll('a[data-link]').forEach((a) => {
    const u = new URL(a.getAttribute('href'), location.origin);
    if (lang() === 'en') u.searchParams.set('lang', 'en'); else u.searchParams.delete('lang');
    a.setAttribute('href', u.pathname + u.search);
  });
  const b = document.getElementById('lang');
  b.textContent = t('lang.other');
  for (const a of document.querySelectorAll('nav a')) {
    const here = new URL(a.href).pathname === location.pathname;
    if (here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
}

let generation = 0;

async function route() {
  const gen = ++generation;
  // Page-wide helpers that belong to one page (the guided tour) hear that the page changed.
  document.dispatchEvent(new CustomEvent('rdmalab:route'));
  chrome();
  const main = document.getElementById('app');
  const path = location.pathname;
  for (const [re, render] of routes) {
    const m = path.match(re);
    if (!m) continue;
    try {
      await render(main, ...m.slice(1), () => gen === generation);
    } catch (e) {
      if (gen === generation) main.innerHTML = `<p class="error" role="alert">${esc(errorText(e))}</p>`;
    }
    return;
  }
  main.innerHTML = '<p class="error">404</p>';
}

/** Navigates to `url` (same origin) without a reload. */
export function go(url, replace = false) {
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
  route();
}

document.addEventListener('click', (e) => {
  const a = e.target.closest('a[data-link]');
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  const u = new URL(a.href);
  if (u.origin !== location.origin) return;
  e.preventDefault();
  go(u.pathname + u.search + u.hash);
  window.scrollTo(0, 0);
  document.getElementById('app').focus({ preventScroll: true });
});

document.getElementById('lang').addEventListener('click', () => {
  const u = new URL(location.href);
  if (lang() === 'en') u.searchParams.delete('lang'); else u.searchParams.set('lang', 'en');
  go(u.pathname + u.search, true);
});

window.addEventListener('popstate', route);
route();
