// The fabric view on the simulation page (issue 19, item 3): when the run's topology has a
// switch, the page reruns the same scenario and seed with every link recorded (`POST
// /api/fabric`, fetched after the table so the table stays fast) and draws TCP's run and
// RDMA's, one tab each, with the labs' fabric view (fabricview.js): the topology the
// simulation built, utilisation, XOFF and queues per sample window, link cards and frames
// that open in the packet inspector. A line under the tabs adds the view's PAUSE frames,
// drops and ECN marks over every link and says whether they are the table's.

import { t, lang, esc } from './i18n.js';
import { api } from './app.js';
import { fmtNum } from './chart.js';
import { renderFabricView } from './fabricview.js';

const WORDS = {
  zh: {
    title: '这次运行的网络：每条链路上发生了什么',
    lead: '同一场景、同一随机种子再跑一次，这次记录拓扑里的每条链路：从数据传输开始（连接建立之后）到运行结束。TCP 和 RDMA 各跑一次，分两页看。',
    loading: '正在重跑这次运行并记录每条链路…',
    error: '网络视图没有画出来：{e}',
    too_big: '这个拓扑有 {links} 条以上的链路，网络视图最多画 {max} 条：把 {field} 调到 {limit} 以内再运行。',
    tabs: '选择要看的运行',
    tab_tcp: 'TCP 的运行', tab_rdma: 'RDMA 的运行',
    totals: '{path}：各链路合计 PAUSE 帧 {p}、丢弃 {d}、ECN 标记 {e}',
    raw: '（另有突发流量的帧被丢 {n} 个，对比表不计入）',
    same: '，与对比表的“{row}”一致。',
    differs: '；对比表为 {d} / {p} / {e}。',
    span: '共 {n} 个采样窗口，每个 {w} µs，覆盖 {t} µs。',
    tcp: 'TCP', rdma: 'RDMA',
  },
  en: {
    title: 'The fabric of this run: what happened on every link',
    lead: 'The same scenario and seed run again, this time recording every link of the topology, from the start of the data path (after connection setup) to the end of the run. TCP and RDMA each run once; one tab each.',
    loading: 'Rerunning this run with every link recorded…',
    error: 'The fabric view could not be drawn: {e}',
    too_big: 'This topology has more than {links} links; the fabric view draws at most {max}: set {field} to {limit} or less and run again.',
    tabs: 'Which run to show',
    tab_tcp: 'TCP run', tab_rdma: 'RDMA run',
    totals: '{path}: over every link, {p} PAUSE frames, {d} drops, {e} ECN marks',
    raw: ' (and {n} cross-traffic frames dropped, which the table does not count)',
    same: ', as in the table’s “{row}”.',
    differs: '; the table says {d} / {p} / {e}.',
    span: '{n} sample windows of {w} µs each, {t} µs in all.',
    tcp: 'TCP', rdma: 'RDMA',
  },
};

const fw = (key, vars = {}) => {
  const s = (WORDS[lang()] && WORDS[lang()][key]) ?? WORDS.zh[key];
  return String(s).replace(/\{(\w+)\}/g, (_, k) => (vars[k] ?? `{${k}}`));
};

/** Topology kinds with a switch: the page shows the fabric view for these. */
const SWITCHED = new Set(['switch', 'leaf_spine', 'fat_tree']);

/** The tab shown, kept across reruns (RDMA first: the lessons about the fabric are about RoCE). */
let shown = 'rdma';
let stopView = () => {};
/** Each call's own number: an answer that comes back after a newer call is dropped. */
let generation = 0;

/** Stops the fabric view's playback (before the page redraws). */
export function stopSimFabric() {
  generation += 1;
  stopView();
  stopView = () => {};
}

/** Whether the plan's topology has a switch. */
export function hasSwitch(plan) {
  return !!plan && SWITCHED.has(String(plan['topology.kind']));
}

/** The sums of a view's last sample over every link: PAUSE frames, drops, raw drops, ECN marks. */
export function viewTotals(view) {
  const last = (a) => (a.length ? a[a.length - 1] : 0);
  let p = 0, d = 0, r = 0, e = 0;
  for (const l of view.links) {
    d += last(l.drops);
    r += last(l.raw_drops || []);
    for (const x of l.dirs) { p += last(x.pauses); e += last(x.ecn_marks); }
  }
  return { p, d, r, e };
}

function totalsHtml(id, x) {
  const s = viewTotals(x.view);
  const own = s.d - s.r;
  const same = s.p === x.pfc_pauses && own === x.drops && s.e === x.ecn_marks;
  return `<p class="sf-totals" data-testid="sf-totals" data-path="${id}" data-pauses="${s.p}" data-drops="${own}" data-ecn="${s.e}">${esc(fw('totals', {
    path: fw(id), p: fmtNum(s.p), d: fmtNum(own), e: fmtNum(s.e),
  }))}${s.r ? esc(fw('raw', { n: fmtNum(s.r) })) : ''}${esc(same ? fw('same', { row: t('row.drops') }) : fw('differs', { d: fmtNum(x.drops), p: fmtNum(x.pfc_pauses), e: fmtNum(x.ecn_marks) }))}
    <span class="muted">${esc(fw('span', {
    n: x.view.t_ps.length, w: fmtNum(Math.round(x.view.window_ps / 1e4) / 100), t: fmtNum(Math.round(x.view.t_ps[x.view.t_ps.length - 1] / 1e4) / 100),
  }))}</span></p>`;
}

/** The refusal of an over-large topology in the page's words, or null for any other error. */
function refusal(e, plan) {
  const a = e.api || {};
  if (e.status !== 422 || !['topology.k', 'topology.hosts', 'topology.spines'].includes(a.field)) return null;
  const m = /at most (\d+)/.exec(a.allowed || '');
  if (!m) return null;
  return fw('too_big', { links: 64, max: 64, field: a.field, limit: m[1], kind: plan['topology.kind'] });
}

/**
 * Draws the fabric view of the run `body` (a `/api/run` body whose plan is `plan`) into `el`,
 * or nothing when the topology has no switch. `live()` says whether the page is still the one
 * that asked.
 */
export async function renderSimFabric(el, body, plan, live) {
  stopSimFabric();
  const mine = generation;
  if (!hasSwitch(plan)) {
    el.innerHTML = '';
    document.body.dataset.fabric = 'none';
    return;
  }
  document.body.dataset.fabric = 'loading';
  el.innerHTML = `<section class="sim-fabric" data-testid="sim-fabric"><h2>${esc(fw('title'))}</h2>
    <p class="muted sf-lead">${esc(fw('lead'))}</p><p class="muted sf-status">${esc(fw('loading'))}</p></section>`;
  let res;
  try {
    res = await api('/api/fabric', body);
  } catch (e) {
    if (!live() || mine !== generation) return;
    const s = el.querySelector('.sf-status');
    s.textContent = refusal(e, plan) ?? fw('error', { e: e.message });
    s.classList.add('error');
    document.body.dataset.fabric = 'error';
    return;
  }
  if (!live() || mine !== generation) return;
  const paths = ['tcp', 'rdma'].filter((p) => res[p]);
  if (!paths.length) { el.innerHTML = ''; document.body.dataset.fabric = 'none'; return; }
  if (!paths.includes(shown)) [shown] = paths;
  const section = el.querySelector('.sim-fabric');
  section.querySelector('.sf-status').remove();
  section.insertAdjacentHTML('beforeend', `<div class="sf-tabs" role="tablist" aria-label="${esc(fw('tabs'))}">${paths.map((p) => `<button type="button" role="tab" class="sf-tab" id="sf-tab-${p}" data-path="${p}" aria-controls="sf-panel" aria-selected="${p === shown}">${esc(fw(`tab_${p}`))}</button>`).join('')}</div>
    <div id="sf-panel" class="sf-panel" role="tabpanel"><div class="sf-sum"></div><div class="sf-view"></div></div>`);
  const panel = section.querySelector('#sf-panel');
  const show = (p) => {
    shown = p;
    stopView();
    for (const b of section.querySelectorAll('.sf-tab')) b.setAttribute('aria-selected', String(b.dataset.path === p));
    panel.setAttribute('aria-labelledby', `sf-tab-${p}`);
    panel.dataset.path = p;
    panel.querySelector('.sf-sum').innerHTML = totalsHtml(p, res[p]);
    stopView = renderFabricView(panel.querySelector('.sf-view'), res[p].view);
  };
  section.querySelector('.sf-tabs').addEventListener('click', (e) => {
    const b = e.target.closest('.sf-tab');
    if (b && b.dataset.path !== shown) show(b.dataset.path);
  });
  section.querySelector('.sf-tabs').addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const i = paths.indexOf(shown);
    const next = paths[(i + (e.key === 'ArrowRight' ? 1 : paths.length - 1)) % paths.length];
    show(next);
    section.querySelector(`#sf-tab-${next}`).focus();
  });
  show(shown);
  document.body.dataset.fabric = 'done';
}
