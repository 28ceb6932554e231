// The lab's one chart module (issue 19, item 10): line, step and bar charts as SVG strings with
// labelled axes (the caller gives each axis its words and unit), 1/2/5 ticks, a legend that
// wraps, a hover column per x whose tooltip lists every series, and the same data as an HTML
// table for who cannot read the drawing. Pure functions of a chart object
// `{id, kind: line|step|bar, x_unit, y_unit, series: [{name, points: [[x, y]], labels?}]}` (the
// shape of a LabResult chart) and options; the caller draws at its box's width and again when
// that width changes, so charts fit a phone as well as a wide screen. Numbers are formatted
// for the page language (zh-CN or en-US); the few words the module itself writes are in its
// table below. Extracted from the fabric labs' charts; every page's charts use it.

import { tFrom, lang, esc } from './i18n.js';

const S = {
  zh: {
    'table.summary': '数据表', 'table.of': '：{title}', 'table.scroll': '{title}：数据表',
    'table.col.u': '{name}（{u}）',
    'table.null': '“—”：{text}', 'table.held': '阶梯图：某条序列在一行里没有自己的采样时，沿用它上一个值（灰色）。',
    'yes': '是', 'no': '否',
  },
  en: {
    'table.summary': 'Data table', 'table.of': ': {title}', 'table.scroll': '{title}: data table',
    'table.col.u': '{name} ({u})',
    'table.null': '“—”: {text}', 'table.held': 'A step chart: where a series has no sample of its own in a row, its previous value holds (grey).',
    'yes': 'yes', 'no': 'no',
  },
};

const tt = (key, vars) => tFrom(S, key, vars);

const NUM_FORMATS = new Map();
/** An Intl.NumberFormat for the page language, made once (toLocaleString makes one per call). */
export function numFormat(opts = {}) {
  const loc = lang() === 'en' ? 'en-US' : 'zh-CN';
  const key = `${loc} ${JSON.stringify(opts)}`;
  let f = NUM_FORMATS.get(key);
  if (!f) { f = new Intl.NumberFormat(loc, opts); NUM_FORMATS.set(key, f); }
  return f;
}

/** A number for people: grouped integers, a few significant digits otherwise. */
export function fmtNum(v) {
  if (v == null || v === '') return '—';
  if (typeof v === 'boolean') return tt(v ? 'yes' : 'no');
  if (typeof v !== 'number' || !Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return numFormat().format(v);
  const a = Math.abs(v);
  if (a < 1) return numFormat({ maximumSignificantDigits: 3 }).format(v);
  return numFormat({ maximumFractionDigits: a >= 100 ? 0 : a >= 10 ? 1 : 2 }).format(v);
}

// ---------------------------------------------------------------------------------------------
// Charts: pure functions from a LabResult chart to an SVG string.

const PALETTE = ['#0b6bcb', '#c2571a', '#0a8a5c', '#7b5cd6', '#b07a00', '#d1477a', '#2a9fb0', '#56606b', '#8c5a2b', '#5f8f1f'];
const DASHES = ['', '6 3', '2 3'];

/** The colour and dash of series `i`. */
export function seriesStyle(i) {
  return { color: PALETTE[i % PALETTE.length], dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length] };
}

/** A tick label: short, no float noise. */
export function fmtTick(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return String(+v.toPrecision(4));
}

/** Ticks over [lo, hi] at a 1/2/5 × 10^k step, about `n` of them; `extend` rounds the ends out. */
export function niceTicks(lo, hi, n = 5, extend = false, minStep = 0) {
  if (!(hi > lo)) hi = lo + 1;
  const raw = (hi - lo) / Math.max(1, n);
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  const step = Math.max(minStep, (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p);
  const dec = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  const round = (x) => Number(x.toFixed(dec));
  const a = extend ? Math.floor(lo / step + 1e-9) * step : Math.ceil(lo / step - 1e-9) * step;
  const b = extend ? Math.ceil(hi / step - 1e-9) * step : hi;
  const ticks = [];
  for (let k = 0, x = a; x <= b + step * 1e-6 && k < 100; k += 1, x = a + k * step) ticks.push(round(x));
  return { lo: extend ? round(a) : lo, hi: extend ? round(b) : hi, step, ticks };
}

/** Rough width of `s` at 12 px (CJK characters are wider). */
function textWidth(s) {
  let w = 0;
  for (const ch of String(s)) w += ch.codePointAt(0) > 0x2e80 ? 12 : 7;
  return w;
}

/** The legend's items laid out in rows no wider than `width`. */
function legendLayout(names, width) {
  const items = [];
  let x = 0, row = 0;
  for (const n of names) {
    const w = 22 + textWidth(n) + 14;
    if (x > 0 && x + w > width) { row += 1; x = 0; }
    items.push({ name: n, x, row });
    x += w;
  }
  return { items, rows: names.length ? row + 1 : 0 };
}

/** Index of the point of sorted `pts` whose x is nearest to `x`. */
function nearest(pts, x) {
  let lo = 0, hi = pts.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pts[mid][0] <= x) lo = mid; else hi = mid;
  }
  return Math.abs(pts[hi][0] - x) < Math.abs(pts[lo][0] - x) ? hi : lo;
}

const r1 = (v) => Math.round(v * 10) / 10;
const lowest = (a) => a.reduce((m, v) => (v < m ? v : m), Infinity);
const highest = (a) => a.reduce((m, v) => (v > m ? v : m), -Infinity);

const chartKind = (chart) => (chart.kind === 'bar' ? 'bar' : chart.kind === 'step' ? 'step' : 'line');

/** A chart's series, named, each with its well-formed points sorted by x. */
function chartSeries(chart) {
  return (chart.series || []).map((s, i) => ({
    name: String(s.name ?? `#${i + 1}`),
    labels: Array.isArray(s.labels) ? s.labels : null,
    points: (s.points || []).filter((p) => Array.isArray(p) && Number.isFinite(p[0]) && (p[1] === null || Number.isFinite(p[1])))
      .sort((a, b) => a[0] - b[0]),
  }));
}

/** The name of bar category `x`: the first series label for it, else its index when there are several. */
function barCategory(series, cats, x) {
  for (const s of series) if (s.labels && s.labels[x] != null) return String(s.labels[x]);
  return cats.length > 1 ? String(x) : '';
}

/**
 * One chart of a LabResult as an SVG string: line and step charts with axes, ticks, unit labels,
 * a legend and a hover column per x (its <title> lists every series there); bar charts grouped
 * by category. `opts`: title, width (px; the drawing is 1:1 at that width), xLabel, yLabel,
 * xUnit, yUnit (shown in tooltips), empty (the text when there is nothing to plot), nullText
 * (what a point [x, null] means: the line breaks there and a hollow marker sits on the axis).
 */
export function chartSvg(chart, opts = {}) {
  const title = opts.title ?? chart.id;
  const xUnit = opts.xUnit ?? chart.x_unit ?? '';
  const yUnit = opts.yUnit ?? chart.y_unit ?? '';
  const xLabel = opts.xLabel ?? xUnit;
  const yLabel = opts.yLabel ?? yUnit;
  const kind = chartKind(chart);
  const series = chartSeries(chart);
  const W = Math.max(280, Math.round(opts.width || 560));
  const m = { l: 50, r: 16, t: 46, b: kind === 'bar' ? 34 : 42 };
  const pw = W - m.l - m.r;
  const ph = W < 420 ? 170 : 200;
  const legend = legendLayout(series.map((s) => s.name), pw);
  const legendTop = m.t + ph + m.b;
  const H = legendTop + (legend.rows ? legend.rows * 18 + 8 : 4);
  const label = `${title}${series.length ? `: ${series.map((s) => s.name).join(', ')}` : ''}`;
  const id = esc(chart.id);
  let out = `<svg class="chart lab-chart" data-testid="lab-chart-${id}" data-chart="${id}" data-kind="${kind}" data-series="${series.length}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}">`;
  out += `<title>${esc(title)}</title><text class="lc-title" x="8" y="20">${esc(title)}</text>`;
  if (yLabel) out += `<text class="lc-unit" x="8" y="${m.t - 10}">${esc(yLabel)}</text>`;
  const ys = series.flatMap((s) => s.points.map((p) => p[1]).filter((y) => y !== null));
  if (!ys.length) {
    out += `<rect class="lc-frame" x="${m.l}" y="${m.t}" width="${pw}" height="${ph}"/>`;
    out += `<text class="lc-empty" x="${m.l + pw / 2}" y="${m.t + ph / 2}">${esc(opts.empty || '—')}</text>`;
    return `${out}</svg>`;
  }
  const yt = niceTicks(Math.min(0, lowest(ys)), Math.max(0, highest(ys)), ph < 180 ? 4 : 5, true, ys.every(Number.isInteger) ? 1 : 0);
  const sy = (y) => r1(m.t + ph - ((y - yt.lo) / (yt.hi - yt.lo)) * ph);
  for (const v of yt.ticks) {
    out += `<line class="lc-grid" x1="${m.l}" x2="${m.l + pw}" y1="${sy(v)}" y2="${sy(v)}"/>`;
    out += `<text class="lc-tick y" x="${m.l - 6}" y="${sy(v) + 4}">${esc(fmtTick(v))}</text>`;
  }
  const fmtV = (v, u) => `${fmtTick(v)}${u ? `${u === '%' ? '' : ' '}${u}` : ''}`;
  const nullText = opts.nullText || '—';
  if (kind === 'bar') {
    out += barsBody(series, { m, pw, ph, sy, yUnit, fmtV });
  } else {
    const xs = series.flatMap((s) => s.points.map((p) => p[0]));
    let x0 = lowest(xs), x1 = highest(xs);
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    const sx = (x) => r1(m.l + ((x - x0) / (x1 - x0)) * pw);
    const xt = niceTicks(x0, x1, W < 420 ? 4 : 6);
    for (const v of xt.ticks) {
      out += `<line class="lc-tickmark" x1="${sx(v)}" x2="${sx(v)}" y1="${m.t + ph}" y2="${m.t + ph + 4}"/>`;
      out += `<text class="lc-tick x" x="${sx(v)}" y="${m.t + ph + 17}">${esc(fmtTick(v))}</text>`;
    }
    if (xLabel) out += `<text class="lc-unit x" x="${m.l + pw}" y="${m.t + ph + 34}">${esc(xLabel)}</text>`;
    series.forEach((s, i) => {
      const st = seriesStyle(i);
      let d = '';
      let pen = false;
      for (const [x, y] of s.points) {
        if (y === null) { pen = false; continue; }
        if (!pen) d += `M${sx(x)},${sy(y)}`;
        else d += kind === 'step' ? `H${sx(x)}V${sy(y)}` : `L${sx(x)},${sy(y)}`;
        pen = true;
      }
      const gaps = s.points.filter((p) => p[1] === null);
      out += `<path class="lc-line" data-name="${esc(s.name)}" data-points="${s.points.length}" data-gaps="${gaps.length}" d="${d}" stroke="${st.color}"${st.dash ? ` stroke-dasharray="${st.dash}"` : ''}><title>${esc(s.name)}</title></path>`;
      if (s.points.length <= 40) {
        for (const [x, y] of s.points) {
          if (y !== null) out += `<circle class="lc-dot" cx="${sx(x)}" cy="${sy(y)}" r="2.8" fill="${st.color}"/>`;
        }
      }
      // A point with no value is not a zero: a hollow marker on the axis, offset per series so they do not hide each other.
      for (const [x] of gaps) {
        out += `<circle class="lc-gap" data-name="${esc(s.name)}" data-x="${x}" cx="${sx(x)}" cy="${r1(sy(Math.max(0, yt.lo)) - 5 - 9 * i)}" r="4" stroke="${st.color}"><title>${esc(`${s.name} · ${fmtV(x, xUnit)}: ${nullText}`)}</title></circle>`;
      }
    });
    out += hoverColumns(series, { m, pw, ph, sx, x0, x1, xUnit, yUnit, fmtV, nullText });
  }
  out += `<line class="lc-axis" x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${m.t + ph}"/>`;
  out += `<line class="lc-axis" x1="${m.l}" x2="${m.l + pw}" y1="${sy(Math.max(0, yt.lo))}" y2="${sy(Math.max(0, yt.lo))}"/>`;
  for (const it of legend.items) {
    const i = series.findIndex((s) => s.name === it.name && !s.legended);
    series[i].legended = true;
    const st = seriesStyle(i);
    const x = m.l + it.x, y = legendTop + it.row * 18 + 8;
    const sw = kind === 'bar'
      ? `<rect x="${x}" y="${y - 9}" width="16" height="10" fill="${st.color}"/>`
      : `<line x1="${x}" x2="${x + 16}" y1="${y - 4}" y2="${y - 4}" stroke="${st.color}" stroke-width="2.5"${st.dash ? ` stroke-dasharray="${st.dash}"` : ''}/>`;
    out += `<g class="lc-legend">${sw}<text x="${x + 22}" y="${y}">${esc(it.name)}</text></g>`;
  }
  return `${out}</svg>`;
}

/** Transparent columns over the plot, one per x (at most 160), each titled with every series there. */
function hoverColumns(series, { m, pw, ph, sx, x0, x1, xUnit, yUnit, fmtV, nullText }) {
  let xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const MAX = 160;
  if (xs.length > MAX) xs = Array.from({ length: MAX }, (_, k) => x0 + ((x1 - x0) * k) / (MAX - 1));
  const px = xs.map(sx);
  let out = '<g class="lc-hover">';
  xs.forEach((x, k) => {
    const a = k ? (px[k - 1] + px[k]) / 2 : m.l;
    const b = k + 1 < xs.length ? (px[k] + px[k + 1]) / 2 : m.l + pw;
    const lines = [fmtV(x, xUnit)];
    for (const s of series.slice(0, 24)) {
      if (!s.points.length) continue;
      const p = s.points[nearest(s.points, x)];
      lines.push(`${s.name}: ${p[1] === null ? nullText : fmtV(p[1], yUnit)}`);
    }
    out += `<rect x="${r1(a)}" y="${m.t}" width="${r1(Math.max(0.5, b - a))}" height="${ph}"><title>${esc(lines.join('\n'))}</title></rect>`;
  });
  return `${out}</g>`;
}

/** The bars of a bar chart: categories are the x indices, named by the series' `labels`. */
function barsBody(series, { m, pw, ph, sy, yUnit, fmtV }) {
  const cats = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const catName = (x) => barCategory(series, cats, x);
  const gw = pw / cats.length;
  const inner = gw * 0.8;
  const bw = inner / Math.max(1, series.length);
  const showValues = bw >= 22;
  const base = sy(0);
  let out = '';
  series.forEach((s, i) => {
    const st = seriesStyle(i);
    out += `<g class="lc-bars" data-name="${esc(s.name)}" data-points="${s.points.length}" fill="${st.color}">`;
    for (const [x, y] of s.points) {
      if (y === null) continue;
      const c = cats.indexOf(x);
      const bx = r1(m.l + c * gw + (gw - inner) / 2 + i * bw);
      const top = Math.min(sy(y), base), h = Math.abs(sy(y) - base);
      const name = catName(x);
      out += `<rect x="${bx}" y="${top}" width="${r1(Math.max(1, bw - 2))}" height="${r1(Math.max(h, y ? 1 : 0))}" data-value="${y}"><title>${esc(`${name ? `${name} · ` : ''}${s.name}: ${fmtV(y, yUnit)}`)}</title></rect>`;
      if (showValues) out += `<text class="lc-val" x="${r1(bx + (bw - 2) / 2)}" y="${top - 3}">${esc(fmtTick(y))}</text>`;
    }
    out += '</g>';
  });
  cats.forEach((x, c) => {
    let name = catName(x);
    const room = Math.floor(gw / 7);
    if (name.length > room && room > 2) name = `${name.slice(0, room - 1)}…`;
    out += `<text class="lc-tick x" x="${r1(m.l + c * gw + gw / 2)}" y="${m.t + ph + 17}">${esc(name)}</text>`;
  });
  return out;
}

/**
 * The data of a chart as an HTML table, for who cannot read the drawing: a row per x (a bar
 * chart: per category, named by its label), a column per series. A point with no value shows
 * "—"; in a step chart, a series with no sample of its own in a row (between its first and last)
 * shows the value it holds there, greyed. `opts`: title (the caption), xHeader, yUnit, nullText
 * (what "—" means, noted under the table), empty (the text when there is no data).
 */
export function chartTableHtml(chart, opts = {}) {
  const title = opts.title ?? chart.id;
  const kind = chartKind(chart);
  const series = chartSeries(chart);
  const yUnit = opts.yUnit ?? chart.y_unit ?? '';
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const colName = (s) => (yUnit ? tt('table.col.u', { name: s.name, u: yUnit }) : s.name);
  const head = `<tr><th scope="col">${esc(opts.xHeader ?? chart.x_unit ?? '')}</th>${series.map((s) => `<th scope="col" class="num">${esc(colName(s))}</th>`).join('')}</tr>`;
  // x with as many decimals as it takes to tell neighbouring rows apart (at least two).
  let gap = Infinity;
  for (let k = 1; k < xs.length; k++) gap = Math.min(gap, xs[k] - xs[k - 1]);
  const xFmt = numFormat({ maximumFractionDigits: Math.min(6, Math.max(2, Math.ceil(-Math.log10(gap)))) });
  const seen = series.map(() => 0);
  let nulls = false, held = false;
  const rows = xs.map((x) => {
    const cells = series.map((s, i) => {
      const pts = s.points;
      let k = seen[i];
      while (k < pts.length && pts[k][0] <= x) k += 1;
      seen[i] = k;
      const own = k > 0 && pts[k - 1][0] === x;
      if (!own && !(kind === 'step' && k > 0 && k < pts.length)) return '<td class="num"></td>';
      const y = pts[k - 1][1];
      if (!own) held = true;
      if (y === null) nulls = true;
      const cls = `num${own ? '' : ' held'}${y === null ? ' null' : ''}`;
      return `<td class="${cls}" data-value="${y === null ? '' : y}">${y === null ? '—' : esc(fmtNum(y))}</td>`;
    }).join('');
    const name = kind === 'bar' ? barCategory(series, xs, x) || xFmt.format(x) : xFmt.format(x);
    return `<tr data-x="${x}"><th scope="row">${esc(name)}</th>${cells}</tr>`;
  }).join('') || `<tr><td colspan="${series.length + 1}">${esc(opts.empty || '—')}</td></tr>`;
  const notes = [
    nulls && opts.nullText && opts.nullText !== '—' ? tt('table.null', { text: opts.nullText }) : '',
    held ? tt('table.held') : '',
  ].filter(Boolean).map((n) => `<p class="lab-table-note">${esc(n)}</p>`).join('');
  const id = esc(chart.id);
  return `<details class="lab-table-box" data-chart="${id}"${opts.open ? ' open' : ''}>
      <summary>${esc(tt('table.summary'))}<span class="lab-sr">${esc(tt('table.of', { title }))}</span></summary>
      <div class="lab-table-scroll" tabindex="0" role="group" aria-label="${esc(tt('table.scroll', { title }))}">
        <table class="lab-table" data-testid="lab-table-${id}" data-rows="${xs.length}"><caption class="lab-sr">${esc(title)}</caption>
          <thead>${head}</thead><tbody>${rows}</tbody></table>
      </div>${notes}
    </details>`;
}
