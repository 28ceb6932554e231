// The verbs playground (/playground): build a verbs session step by step with one tabbed form
// (PD, buffer, MR, CQ, QP, modify_qp, post_send, post_recv, poll_cq, run). After every change the
// whole session runs again on the server (POST /api/verbs; deterministic, so the replay is exact)
// and the page shows every step's result with an explanation of each errno and completion status,
// the QP state diagram drawn from GET /api/verbs/model, the SQ, RQ, CQ and MRs after the
// selected step, and the frames on a ladder (for a post_send: every frame of its WRs, whichever
// later step put it on the wire) with the same frames as a table under it. The diagram is one
// tab stop: the arrow keys move between the transitions from the current state, Enter selects
// one. A step the server refuses is taken back out, with the server's message under the form.
// The intro, "what to try" and the chapters come from
// GET /api/course/<lang>/labs (course/<lang>/labs.toml, id "playground"). The session is a session
// file (scenarios/verbs/README.md): exported as TOML that `rdmalab verbs run` accepts (optionally
// with expectations pinning every result), imported from a file or pasted text, and kept in the
// URL (`?s=` deflate-raw + base64url of the TOML, `&profile=`).

import { esc, href, lang, t } from './i18n.js';
import { api, errorText } from './app.js';
import { courseLabs, labName } from './course.js';
import { ERRNO_EXPLAIN, WC_EXPLAIN, tt } from './pg-strings.js';
import { QUICK_START, bare, decodeShare, emptySession, encodeShare, pinExpectations } from './pg-session.js';
import { sessionFromToml, sessionToToml } from './pg-toml.js';
import { NO_MODEL, haveModel, profiles } from './pg-model.js';
import { $, P, newPage, setPage, status } from './pg-state.js';
import { renderSteps, renderSummary } from './pg-steps.js';
import { CALLS, FormError, renderForms, selectTab, stepFromForm, suggestTab, syncForm, syncModify, tabsHtml } from './pg-forms.js';
import { diagramKey, firstKb, kbFocused, kbShown, legalEdges, markKb, renderDiagram, revealKb, sameEdge, selectEdge, showEdgeInfo } from './pg-diagram.js';
import { renderState } from './pg-objects.js';
import { frameOp, renderLadder, ladderFrame } from './pg-ladder.js';
import { refusalHtml } from './pg-results.js';
import { renderMemory, mt } from './pg-memory.js';
import { PANES, pt, wirePanes } from './pg-panes.js';
import { startTour, tourButtonHtml, tourMenuHtml, wireTours } from './tour.js';
import './inspector.js';
import { msgHtml, msgText } from './pg-msg.js';
export { QUICK_START, emptySession, pinExpectations, encodeShare, decodeShare } from './pg-session.js';
export { TomlFloat, tomlValue, sessionToToml, parseToml, sessionFromToml } from './pg-toml.js';

// Everything else on the page

function renderToml() {
  $('#pg-toml').textContent = P.session.raw ?? (P.session.steps.length ? sessionToToml(P.session).text : '');
}

function renderAll(forms = true) {
  if (P.selected > stepCount() || (!P.selected && stepCount())) P.selected = stepCount();
  renderSummary();
  renderSteps();
  if (forms) renderForms();
  renderDiagram();
  renderState();
  renderLadder();
  renderMemory();
  renderToml();
  $('#pg-export-expect').disabled = !!P.session.raw || !P.report;
  $('#pg-export').disabled = !P.session.raw && !P.session.steps.length;
}

const stepCount = () => (P.session.raw ? (P.report ? P.report.steps.length : 0) : P.session.steps.length);

/** The session file's text as it runs now. */
function currentText() {
  return P.session.raw ?? sessionToToml(P.session).text;
}

async function updateUrl() {
  const seq = ++P.urlSeq;
  const params = [];
  if (P.session.raw || P.session.steps.length) {
    try { params.push(['s', await encodeShare(currentText())]); } catch { /* no CompressionStream: no link */ }
  }
  if (P.session.profile && P.session.profile !== 'mlx5') params.push(['profile', P.session.profile]);
  if (!P.live() || seq !== P.urlSeq) return;
  history.replaceState(null, '', href(location.pathname, params));
}

/** A step's result in a few words, for the status line. */
function shortResult(rec) {
  if (!rec) return tt('pending');
  const r = rec.result || {};
  if (r.kind === 'ok') return tt('ok');
  if (r.kind === 'error') return String(r.errno);
  if (r.kind === 'completions') {
    const cs = r.completions || [];
    return cs.length ? cs.map((c) => `wr_id ${c.wr_id} ${c.status}`).join(', ') : tt('nocompl');
  }
  return tt(r.kind || 'failed');
}

/**
 * Undoes the edit a refused run was for: the step just added comes back out, the step just
 * deleted goes back in, with the selection as it was. False when the session changed since.
 */
function takeBack(edit) {
  const steps = P.session.steps;
  if (edit.added) {
    const k = steps.indexOf(edit.added);
    if (k < 0) return false;
    steps.splice(k, 1);
  } else if (edit.deleted) {
    if (steps.length + 1 !== edit.count) return false;
    steps.splice(edit.at - 1, 0, edit.deleted);
  } else return false;
  P.selected = edit.selected;
  P.selQp = edit.selQp;
  P.submitted = null;
  P.focusCall = null;
  P.focusStep = null;
  return true;
}

/**
 * Runs the whole session on the server and re-renders. `edit` says what changed since the last
 * run ({added: step, form} or {deleted: step, at}, with the selection before it): when the server
 * refuses the new session (422), that edit is undone and the previous results stay.
 */
async function run(edit = null) {
  const gen = ++P.gen;
  updateUrl();
  P.error = null;
  if (!P.session.raw && !P.session.steps.length) {
    P.report = null;
    P.reportText = null;
    renderAll();
    status(edit && edit.deleted ? tt('deleted', { n: edit.at }) : '');
    document.body.dataset.run = 'done';
    return;
  }
  const { text, lines } = P.session.raw ? { text: P.session.raw, lines: [] } : sessionToToml(P.session);
  document.body.dataset.run = 'busy';
  status(tt('running'));
  renderSteps();
  let res;
  try {
    res = await api('/api/verbs', { session: text, profile: P.session.profile });
  } catch (e) {
    if (!P.live() || gen !== P.gen) return;
    // A refused session's reason by its id; the field and what it allows are the form's concern.
    const msg = (e.api && e.api.msg && msgText(e.api.msg)) || errorText(e);
    if (e.status === 422 && edit && takeBack(edit)) {
      const why = String(e.message || msg).replace(/^\d+:\d+:\s*/, '');
      updateUrl();
      // The forms stay as they are: the learner's values, and the focus, are where they were.
      renderAll(false);
      // The server's reason by its message id (pg-msg.js); the form's own text around it.
      const refusal = e.api && e.api.msg;
      if (edit.added) {
        status('');
        const err = $(`form.pg-add[data-call="${edit.added.call}"] .pg-ferr`);
        const [pre, post] = tt('f.refused', { e: '\u0000' }).split('\u0000');
        if (err) { err.innerHTML = `${esc(pre)}${msgHtml(refusal, why)}${esc(post)}`; err.hidden = false; }
        else status(tt('f.refused', { e: msgText(refusal) ?? why }), true);
      } else {
        status(tt('del.refused', { n: edit.at, e: msgText(refusal) ?? why }), true);
        const b = $(`[data-sel="${edit.at}"]`);
        if (b) b.focus({ preventScroll: true });
      }
      document.body.dataset.run = 'error';
      // The results shown belong to an older session when another run was dropped meanwhile.
      if (!P.session.raw && P.reportText !== sessionToToml(P.session).text) run();
      return;
    }
    const m = /^(\d+):(\d+):/.exec(e.message || '');
    let step = null;
    if (m) lines.forEach((l, k) => { if (l <= Number(m[1])) step = k + 1; });
    P.report = null;
    P.reportText = null;
    P.error = { message: e.message || msg, html: refusalHtml(e), step };
    renderAll();
    status(tt('run.error.is', { e: msg }), true);
    document.body.dataset.run = 'error';
    return;
  }
  if (!P.live() || gen !== P.gen) return;
  P.report = res;
  P.reportText = text;
  renderAll();
  if (edit && edit.added) {
    const n = P.session.steps.indexOf(edit.added) + 1;
    status(n ? tt('added', { n, call: edit.added.call, res: shortResult(res.steps[n - 1]) }) : '');
    revealStep(n);
  } else status(edit && edit.deleted ? tt('deleted', { n: edit.at }) : '');
  focusStepAfterDelete();
  document.body.dataset.run = 'done';
}

/** After a delete took its button away, the focus goes to the step now in its place. */
function focusStepAfterDelete() {
  const n = P.focusStep;
  P.focusStep = null;
  if (!n || (document.activeElement && document.activeElement !== document.body)) return;
  const b = $(`[data-sel="${n}"]`);
  if (b) b.focus({ preventScroll: true });
}

/** Scrolls the step list (when it scrolls on its own) so step `n` is in view; the page stays put. */
function revealStep(n) {
  const box = $('.pg-stepbox');
  const li = $(`[data-testid="step-${n}"]`);
  if (!box || !li || box.scrollHeight <= box.clientHeight + 1) return;
  const top = li.offsetTop, bottom = top + li.offsetHeight;
  if (bottom > box.scrollTop + box.clientHeight) box.scrollTop = bottom - box.clientHeight + 4;
  else if (top < box.scrollTop) box.scrollTop = top - 4;
}

function download(name, text) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/toml' }));
  a.download = name;
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function exportFile(withExpect) {
  if (!withExpect) {
    download('session.toml', currentText());
    status(tt('exported', { f: 'session.toml' }));
    return;
  }
  const steps = pinExpectations(P.session.steps, P.report);
  const text = sessionToToml(P.session, steps).text;
  download('session-expect.toml', text);
  const bad = (P.report ? P.report.steps : []).find((r) => r.result.kind === 'skipped' || r.result.kind === 'failed');
  status(bad ? tt('exported.skip', { f: 'session-expect.toml', n: bad.index }) : tt('exported', { f: 'session-expect.toml' }));
  $('#pg-toml').textContent = text;
  $('#pg-toml').closest('details').open = true;
}

/** Loads a session file's text: editable when the page's reader takes it, else read-only. */
function loadText(text, { profile = null } = {}) {
  try {
    P.session = sessionFromToml(text);
  } catch {
    P.session = emptySession();
    P.session.raw = text;
    const m = /^\s*profile\s*=\s*"(\w+)"/m.exec(text);
    if (m) P.session.profile = m[1];
  }
  if (profile) P.session.profile = profile;
  P.selected = 0;
  P.selQp = null;
  P.pinned = null;
}

async function importText(text) {
  loadText(text);
  $('#pg-profile').value = P.session.profile;
  if (!P.session.raw) selectTab(suggestTab());
  await run();
  if (P.live() && !P.error) status(P.session.raw ? tt('raw') : tt('imported', { n: P.session.steps.length }));
}

function useEdge(from, to) {
  const form = $('form[data-call="modify_qp"]');
  if (!form) return;
  selectTab('modify_qp');
  const qp = form.querySelector('[name="qp"]');
  if (P.selQp) { qp.value = P.selQp; qp.dataset.dirty = '1'; }
  const tg = form.querySelector('[name="target"]');
  tg.value = to;
  tg.dataset.dirty = '1';
  syncModify(form);
  form.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  tg.focus();
}

/** A click on a ladder frame: the packet inspector (inspector.js) opens it (contract.md). */
function inspectFrame(el) {
  const f = ladderFrame(Number(el.dataset.k));
  if (!f) return;
  const title = `${frameOp(f)}${f.psn != null ? ` PSN ${f.psn}` : ''} · ${f.src} → ${f.dst}`;
  document.dispatchEvent(new CustomEvent('rdmalab:inspect', { detail: { frame: f, title } }));
}

function wire(root) {
  root.addEventListener('submit', (e) => {
    const form = e.target.closest('form.pg-add');
    if (!form) return;
    e.preventDefault();
    if (P.session.raw) return;
    selectTab(form.dataset.call);
    const err = form.querySelector('.pg-ferr');
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    let step;
    try {
      step = stepFromForm(form);
    } catch (x) {
      if (!(x instanceof FormError)) throw x;
      err.textContent = x.message;
      err.hidden = false;
      const bad = x.field && form.querySelector(`[name="${x.field}"]`);
      if (bad) { bad.setAttribute('aria-invalid', 'true'); bad.setAttribute('aria-describedby', err.id); bad.focus(); }
      document.body.dataset.run = 'error';
      return;
    }
    err.hidden = true;
    // Taken back out if the server refuses it (see run).
    const edit = { added: step, selected: P.selected, selQp: P.selQp };
    P.session.steps.push(step);
    P.selected = P.session.steps.length;
    if (step.qp && typeof step.qp === 'string') P.selQp = step.qp;
    P.submitted = form.dataset.call;
    P.focusCall = form.dataset.call;
    run(edit);
  });
  root.addEventListener('change', (e) => {
    const el = e.target;
    const form = el.closest('form.pg-add');
    if (form && el.name && !/^[mv]_/.test(el.name)) {
      el.dataset.dirty = '1';
      syncForm(form, el.name);
    }
  });
  root.addEventListener('input', (e) => {
    if (e.target.closest('form.pg-add') && e.target.name) {
      e.target.dataset.dirty = '1';
      e.target.removeAttribute('aria-invalid');
    }
  });
  root.addEventListener('click', (e) => {
    const tab = e.target.closest('.pg-tab');
    if (tab) { selectTab(tab.dataset.tab); return; }
    const sel = e.target.closest('[data-sel]');
    if (sel) {
      P.selected = Number(sel.dataset.sel);
      const s = P.session.steps[P.selected - 1];
      if (s && typeof s.qp === 'string') P.selQp = s.qp;
      else if (s && s.call === 'create_qp') P.selQp = s.as;
      renderSteps(); renderDiagram(); renderState(); renderLadder(); renderMemory();
      const again = root.querySelector(`[data-sel="${P.selected}"]`);
      if (again) again.focus();
      return;
    }
    const del = e.target.closest('[data-del]');
    if (del) {
      const k = Number(del.dataset.del);
      // Put back if the session cannot run without it (see run).
      const edit = { deleted: P.session.steps[k - 1], at: k, count: P.session.steps.length, selected: P.selected, selQp: P.selQp };
      P.session.steps.splice(k - 1, 1);
      if (P.selected >= k) P.selected = Math.max(P.selected - 1, P.session.steps.length ? 1 : 0);
      P.focusStep = Math.min(k, P.session.steps.length);
      run(edit);
      return;
    }
    const fr = e.target.closest('.pg-frame[data-k]');
    if (fr) { inspectFrame(fr); return; }
    const edge = e.target.closest('.pg-edge');
    if (edge) {
      const picked = { from: edge.dataset.from, to: edge.dataset.to };
      // The keyboard goes on from the arrow clicked, when it is one the keys reach.
      if (legalEdges().some((x) => sameEdge(x, picked))) P.kb = picked;
      selectEdge(picked);
      return;
    }
    const use = e.target.closest('[data-use-edge]');
    if (use) { const [from, to] = use.dataset.useEdge.split('|'); useEdge(from, to); }
  });
  root.addEventListener('keydown', (e) => {
    const tab = e.target.closest && e.target.closest('.pg-tab');
    if (tab) {
      const k = CALLS.indexOf(tab.dataset.tab);
      const to = { ArrowRight: k + 1, ArrowDown: k + 1, ArrowLeft: k - 1, ArrowUp: k - 1, Home: 0, End: CALLS.length - 1 }[e.key];
      if (to !== undefined) { e.preventDefault(); selectTab(CALLS[(to + CALLS.length) % CALLS.length], true); }
      return;
    }
    if (e.target.id === 'pg-diagram') diagramKey(e);
    const fr = e.target.closest && e.target.closest('.pg-frame[data-k]');
    if (fr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); inspectFrame(fr); }
  });
  wirePanes(root);
  wireTours(root);
  // Hovering an arrow shows what its transition needs; leaving it shows the keyboard's or the selected one again.
  const showEdge = (e) => {
    const edge = e.target.closest && e.target.closest('.pg-edge');
    if (!edge || !haveModel()) return;
    P.edge = { from: edge.dataset.from, to: edge.dataset.to };
    showEdgeInfo();
  };
  const hideEdge = (e) => {
    const edge = e.target.closest && e.target.closest('.pg-edge');
    if (!edge || !haveModel()) return;
    P.edge = null;
    showEdgeInfo();
  };
  root.addEventListener('mouseover', showEdge);
  root.addEventListener('mouseout', hideEdge);
  // The diagram reached with the keyboard marks the transition the arrow keys start from.
  root.addEventListener('focusin', (e) => {
    if (e.target.id !== 'pg-diagram' || !haveModel() || !kbFocused()) return;
    P.kbOn = true;
    const list = legalEdges();
    if (!list.some((x) => sameEdge(x, P.kb))) P.kb = firstKb(list);
    markKb();
    showEdgeInfo();
    revealKb(e.target);
  });
  root.addEventListener('focusout', (e) => {
    if (!P.kbOn || !(e.target.id === 'pg-diagram' || e.target.closest('#pg-edge'))) return;
    // Runs before the focus has moved: look again once it has.
    setTimeout(() => {
      if (!P.live() || !P.kbOn || kbShown()) return;
      P.kbOn = false;
      markKb();
      showEdgeInfo();
    });
  });
  // The ladder's data table stays open (or closed) when the ladder is drawn again.
  root.addEventListener('toggle', (e) => {
    if (e.target.id === 'pg-ladder-tablebox') P.ladderTable = e.target.open;
  }, true);
  root.querySelector('#pg-qp').addEventListener('change', (e) => { P.selQp = e.target.value; renderDiagram(); });
  root.querySelector('#pg-all').addEventListener('change', (e) => { P.ladderAll = e.target.checked; renderLadder(); });
  root.querySelector('#pg-profile').addEventListener('change', (e) => { P.session.profile = e.target.value; run(); });
  root.querySelector('#pg-quick').addEventListener('click', async () => {
    const profile = P.session.profile;
    P.session = emptySession(profile);
    P.session.steps = QUICK_START.map((s) => structuredClone(s));
    P.selected = P.session.steps.length;
    P.selQp = 'qp_a';
    P.pinned = null;
    selectTab('modify_qp');
    await run();
    if (P.live() && !P.error) status(tt('quick.done'));
  });
  root.querySelector('#pg-clear').addEventListener('click', () => {
    P.session = emptySession(P.session.profile);
    P.selected = 0; P.selQp = null; P.pinned = null;
    selectTab('alloc_pd');
    run();
  });
  root.querySelector('#pg-rawedit').addEventListener('click', () => {
    P.session = emptySession(P.session.profile);
    P.selected = 0;
    run();
  });
  root.querySelector('#pg-export').addEventListener('click', () => exportFile(false));
  root.querySelector('#pg-export-expect').addEventListener('click', () => exportFile(true));
  root.querySelector('#pg-import').addEventListener('change', async (e) => {
    const f = e.target.files && e.target.files[0];
    if (!f) return;
    const text = await f.text();
    e.target.value = '';
    if (!P.live()) return;
    importText(text);
  });
  root.querySelector('#pg-paste-go').addEventListener('click', () => {
    const text = root.querySelector('#pg-paste-text').value;
    if (text.trim()) importText(text);
  });
  root.querySelector('#pg-share').addEventListener('click', async () => {
    await updateUrl();
    try {
      await navigator.clipboard.writeText(location.href);
      status(tt('share.done'));
    } catch {
      status(tt('share.fail'));
    }
  });
}

function referenceHtml() {
  // Without the model (its fetch failed) the tables still list every name this page explains.
  const wcNames = (P.model.wc_status || []).length
    ? P.model.wc_status.map((w) => [bare(w.name), w.code, w.text]) : Object.keys(WC_EXPLAIN).map((k) => [k, '', '']);
  const errnos = (P.model.errno || []).length
    ? P.model.errno.map((x) => [x.name, x.code]) : Object.keys(ERRNO_EXPLAIN).map((k) => [k, '']);
  const names = new Set(errnos.map(([n]) => n));
  for (const k of Object.keys(ERRNO_EXPLAIN)) if (!names.has(k)) errnos.push([k, '']);
  const row = (table, name, code, text) => {
    const e = table[name];
    const [what, cause, check] = e ? e[lang()] || e.zh : ['', '', ''];
    return `<tr data-name="${esc(name)}"><th scope="row"><code>${esc(name)}</code>${code !== '' ? ` <span class="muted">${esc(code)}</span>` : ''}${text ? `<br><span class="muted">${esc(text)}</span>` : ''}</th>
      <td>${esc(what)}</td><td>${esc(cause)}</td><td>${esc(check)}</td></tr>`;
  };
  const head = `<thead><tr><th scope="col"></th><th scope="col">${esc(tt('what'))}</th><th scope="col">${esc(tt('cause'))}</th><th scope="col">${esc(tt('check'))}</th></tr></thead>`;
  return `<div class="pg-scroll"><table class="pg-table pg-ref">${head}<tbody>${errnos.map(([n, c]) => row(ERRNO_EXPLAIN, n, c, '')).join('')}</tbody></table></div>
    <div class="pg-scroll"><table class="pg-table pg-ref">${head}<tbody>${wcNames.map(([n, c, x]) => row(WC_EXPLAIN, n, c, x)).join('')}</tbody></table></div>`;
}

/** The page's head from the course text (course/<lang>/labs.toml, id "playground"). */
function introHtml(texts) {
  const text = texts && texts.find((l) => l.id === 'playground');
  if (!text) return '';
  const chapters = (text.chapters || []).map((c) => `<a class="chip" data-link data-chapter="${esc(c.id)}" href="${href(`/chapter/${encodeURIComponent(c.id)}`)}">${esc(c.title)}</a>`).join(' ');
  return `${text.summary ? `<p class="lead">${esc(text.summary)}</p>` : ''}
    ${!chapters ? '' : (text.chapters.length > 6
    ? `<details class="pg-about pg-chapters" data-testid="pg-chapters"><summary>${esc(tt('taught.n', { n: text.chapters.length }))}</summary><p class="lab-chapters">${chapters}</p></details>`
    : `<p class="lab-chapters pg-chapters" data-testid="pg-chapters"><span class="muted">${esc(tt('taught'))}</span> ${chapters}</p>`)}
    ${text.intro_html ? `<details class="pg-about"><summary>${esc(tt('about'))}</summary><div class="prose">${text.intro_html}</div></details>` : ''}
    ${text.look_html ? `<details class="pg-about pg-tryit"><summary>${esc(tt('tryit'))}</summary><div class="prose">${text.look_html}</div></details>` : ''}`;
}

/** The playground's own stylesheet (its layout, memory view, panes and tour), loaded once. */
function loadCss() {
  if (document.querySelector('link[data-pg-css]')) return;
  const l = document.createElement('link');
  l.rel = 'stylesheet';
  l.href = new URL('./playground.css', import.meta.url).href;
  l.dataset.pgCss = '1';
  document.head.append(l);
}

export async function renderPlayground(main, live) {
  loadCss();
  setPage(newPage(main, live));
  const title = () => labName(null, 'playground');
  document.title = `${title()} · ${t('title')}`;
  document.body.dataset.run = 'busy';
  const q = new URLSearchParams(location.search);
  const urlProfile = q.get('profile');
  main.innerHTML = `
    <section class="pg">
      <h1 id="pg-title">${esc(title())}</h1>
      <div id="pg-intro"></div>
      <div class="pg-bar">
        <label for="pg-profile">${esc(tt('profile'))}</label>
        <select id="pg-profile" data-testid="profile"></select>
        <button type="button" id="pg-quick" data-testid="quick-start" title="${esc(tt('quick.title'))}">${esc(tt('quick'))}</button>
        <button type="button" id="pg-clear" class="secondary" data-testid="clear">${esc(tt('clear'))}</button>
        <button type="button" id="pg-export" class="secondary" data-testid="export">${esc(tt('export'))}</button>
        <button type="button" id="pg-export-expect" class="secondary" data-testid="export-expect">${esc(tt('export.expect'))}</button>
        <label class="pg-file"><span>${esc(tt('import'))}</span> <input type="file" id="pg-import" data-testid="import" accept=".toml,text/plain,application/toml"></label>
        <button type="button" id="pg-share" class="secondary" data-testid="share">${esc(tt('share'))}</button>
        ${tourButtonHtml('playground')}
        <span id="pg-tour-menu"></span>
      </div>
      <details class="pg-paste"><summary>${esc(tt('paste'))}</summary>
        <label for="pg-paste-text">${esc(tt('paste.label'))}</label>
        <textarea id="pg-paste-text" data-testid="import-text" rows="8" spellcheck="false"></textarea>
        <button type="button" id="pg-paste-go" data-testid="import-paste">${esc(tt('paste.go'))}</button>
      </details>
      <p id="pg-status" class="status" role="status" aria-live="polite"></p>
      <div class="pg-panes" role="tablist" aria-label="${esc(pt('panes'))}">${PANES.map((k) => `<button type="button" role="tab" class="pg-pane-tab" data-pane-tab="${k}" aria-selected="${k === 'steps'}">${esc(pt(`pane.${k}`))}</button>`).join('')}</div>
      <div class="pg-work" data-pane="steps">
        <section class="pg-p pg-p-steps" data-pane-of="steps" aria-labelledby="pg-steps-h">
          <h2 id="pg-steps-h">${esc(tt('steps'))}</h2>
          <div id="pg-summary"></div>
          <p id="pg-empty" class="muted">${esc(tt('empty'))}</p>
          <div id="pg-rawnote" class="pg-raw" hidden><p>${esc(tt('raw'))}</p><button type="button" id="pg-rawedit" class="secondary">${esc(tt('raw.edit'))}</button></div>
          <div class="pg-stepbox"><ol id="pg-steps" class="pg-steps"></ol></div>
        </section>
        <section class="pg-p pg-p-wire" data-pane-of="ladder" aria-labelledby="pg-ladder-h">
          <h2 id="pg-ladder-h">${esc(tt('ladder'))}</h2>
          <label class="pg-inl"><input type="checkbox" id="pg-all"> ${esc(tt('ladder.all'))}</label>
          <p id="pg-ladder-view" class="pg-ladder-view"></p>
          <div id="pg-ladder" class="pg-ladderbox" data-testid="ladder"></div>
          <div id="pg-ladder-data"></div>
        </section>
        <section class="pg-p pg-p-mem" data-pane-of="memory" aria-labelledby="pg-mem-h">
          <h2 id="pg-mem-h">${esc(mt('title'))}</h2>
          <div id="pg-memory" class="pg-memory" data-testid="memory"></div>
        </section>
        <section class="pg-p pg-p-add pg-addbox" data-pane-of="steps" aria-labelledby="pg-add-h">
          <h2 id="pg-add-h">${esc(tt('add'))}</h2>
          <div class="pg-tabs" role="tablist" aria-label="${esc(tt('add.pick'))}">${tabsHtml()}</div>
          <div id="pg-forms" class="pg-forms"></div>
        </section>
        <section class="pg-p pg-p-state" data-pane-of="state" aria-labelledby="pg-diagram-h">
          <h2 id="pg-diagram-h">${esc(tt('diagram'))}</h2>
          <div class="pg-qpsel"><label for="pg-qp">${esc(tt('f.qp'))}</label> <select id="pg-qp"></select></div>
          <figure id="pg-diagram" class="pg-diagram" data-testid="qp-state" data-state="" role="group"></figure>
          <div id="pg-edge" class="pg-edgeinfo"></div>
          <h2 id="pg-after-h">${esc(tt('after.none'))}</h2>
          <div id="pg-state"></div>
          <details class="pg-file-view"><summary>${esc(tt('file'))}</summary><pre id="pg-toml" class="mono" tabindex="0"></pre></details>
        </section>
      </div>
      <details class="pg-refbox"><summary>${esc(tt('ref'))}</summary><div id="pg-ref"></div></details>
    </section>`;
  const root = main.querySelector('section.pg');
  wire(root);
  const [model, texts] = await Promise.all([
    api('/api/verbs/model').then((m) => [m, null], (e) => [NO_MODEL, errorText(e)]),
    courseLabs(),
  ]);
  if (!live()) return;
  [P.model, P.modelError] = model;
  root.querySelector('#pg-title').textContent = labName(texts, 'playground');
  document.title = `${labName(texts, 'playground')} · ${t('title')}`;
  root.querySelector('#pg-intro').innerHTML = introHtml(texts);
  // One tour per chapter the course sends here, over that chapter's example session.
  const pgText = texts && texts.find((l) => l.id === 'playground');
  root.querySelector('#pg-tour-menu').innerHTML = tourMenuHtml(pgText ? pgText.chapters : []);
  if (P.modelError) status(tt('model.error', { e: P.modelError }), true);
  root.querySelector('#pg-ref').innerHTML = referenceHtml();
  const s = q.get('s');
  const example = q.get('example');
  if (!s && example) {
    // A chapter's "try it" link: the example session, exactly as the chapter ran it.
    try {
      const ex = await api(`/api/verbs/example/${encodeURIComponent(example)}`);
      if (!live()) return;
      loadText(ex.session, { profile: urlProfile });
    } catch (e) {
      if (!live()) return;
      status(errorText(e), true);
    }
  } else if (s) {
    try {
      const text = await decodeShare(s);
      if (!live()) return;
      loadText(text, { profile: urlProfile });
    } catch (e) {
      if (!live()) return;
      P.session = emptySession(urlProfile || 'mlx5');
      status(tt('share.bad', { e: e.message }), true);
    }
  } else if (urlProfile) P.session.profile = urlProfile;
  if (!profiles().includes(P.session.profile)) P.session.profile = profiles()[0];
  root.querySelector('#pg-profile').innerHTML = profiles().map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join('');
  root.querySelector('#pg-profile').value = P.session.profile;
  selectTab(P.session.raw ? P.tab : suggestTab());
  await run();
  // A chapter's link (`?tour=<chapter>`, tour.js) starts that chapter's tour over its session.
  const tour = q.get('tour');
  if (tour && live()) startTour(tour === 'playground' ? 'playground' : `pg-${tour}`, root);
}
