// The fabric view of a lab run (issue 19, item 3): the run's own topology (hosts, switches and
// the cables between them, laid out from the topology the simulation built, not drawn per lab),
// each cable's two directions coloured by how busy the wire was, the ports held by PAUSE marked
// XOFF at the end that sent the pause, and the egress queue as a bar at the sending end, for
// every sample window of the run (`LabResult.fabric`, `rdmalab::labs::fabric_view`). A time
// scrubber and a play button step through the windows; a list says in which order the pauses
// spread, hop by hop; hovering or tapping a link opens its card (rate, queue, PAUSE frames,
// drops, ECN marks at the scrubbed time) and a click lists the frames the run kept for that
// link, each of which opens the packet inspector (`rdmalab:inspect`, contract.md).

import { lang, esc } from './i18n.js';
import { fmtNum } from './chart.js';

const S = {
  zh: {
    title: '网络拓扑：这次运行的每条链路',
    lead: '拓扑取自仿真本身；每条链路画成两条线，一个方向一条。颜色是这个方向在当前采样窗口内的利用率；红色虚线表示发送端被 PAUSE 暂停，XOFF 标在发出 PAUSE 的一端；短柱是发送端口的队列。拖动时间轴或按播放，看暂停一跳一跳地传开。',
    play: '播放', pause: '暂停', prev: '上一个窗口', next: '下一个窗口',
    time: '时间：{t} µs / {end} µs（第 {k}/{n} 个采样窗口，每个 {w} µs）',
    scrub: '时间轴（采样窗口）',
    legend_util: '利用率', legend_held: '被 PAUSE 暂停', legend_queue: '队列',
    spread: 'PAUSE 的传播顺序（各方向第一次发出 PAUSE 的时刻；点一项跳到那个采样窗口）',
    spread_none: '这次运行里没有任何端口发出 PAUSE。',
    spread_item: '{from}向{to}发出 PAUSE（XOFF）：{t} µs',
    card_hint: '把鼠标移到一条链路上（手机上点一下）看它的卡片；点击链路列出它的帧。',
    card_title: '链路 {a} — {b}（{g} Gb/s）',
    card_at: '截至 {t} µs',
    dir: '方向', rate: '速率', util: '利用率', queue: '队列', held: '被暂停', pauses: 'PAUSE 帧', ecn: 'ECN 标记',
    drops: '两端端口丢弃的帧：{n}',
    frames_btn: '列出这条链路的帧',
    frames_title: '{a} — {b} 上的帧（仿真保留了 {kept} 个，共传过 {total} 个：每个方向每个采样窗口的第一个帧和第一个 PFC 帧）',
    frames_none: '这条链路上没有保留的帧。',
    frames_later: '（在当前时间之后）',
    col_t: '时间（µs）', col_dir: '方向', col_kind: '帧', col_bytes: '字节', col_detail: '内容',
    kind_pause: 'PAUSE', kind_resume: 'RESUME（暂停时间 0）', kind_roce: 'RoCE', kind_tcp: 'TCP', kind_raw: '裸帧',
    quanta: '暂停 {q} 个单位（每个 512 比特时间）',
    ce: '带 CE 标记',
    inspect: '查看帧的各个头部',
    node_left: '左交换机', node_right: '右交换机',
    kb: 'KB', pct: '%', gbps: 'Gb/s', frames: '帧',
    aria: '网络拓扑图：{n} 台主机、{s} 台交换机、{l} 条链路',
    hosts: '{n} 台主机', switches: '{n} 台交换机', links: '{n} 条链路',
  },
  en: {
    title: 'The fabric: every link of this run',
    lead: 'The topology is the simulation’s own; each link is drawn as two lines, one per direction. The colour is how busy that direction was in the current sample window; a dashed red line is a sender held by PAUSE, with XOFF at the end that sent the pause; the small bar is the sending port’s queue. Drag the time line or press play to watch the pause spread hop by hop.',
    play: 'Play', pause: 'Pause', prev: 'Previous window', next: 'Next window',
    time: 'Time: {t} µs / {end} µs (sample window {k}/{n}, {w} µs each)',
    scrub: 'Time line (sample windows)',
    legend_util: 'utilisation', legend_held: 'held by PAUSE', legend_queue: 'queue',
    spread: 'How the pause spread (when each direction first sent PAUSE; click one to jump to its sample window)',
    spread_none: 'No port sent PAUSE in this run.',
    spread_item: '{from} sends PAUSE (XOFF) to {to} at {t} µs',
    card_hint: 'Hover over a link (tap it on a phone) for its card; click a link to list its frames.',
    card_title: 'Link {a} — {b} ({g} Gb/s)',
    card_at: 'up to {t} µs',
    dir: 'direction', rate: 'rate', util: 'utilisation', queue: 'queue', held: 'held', pauses: 'PAUSE frames', ecn: 'ECN marks',
    drops: 'Frames dropped at either end’s port: {n}',
    frames_btn: 'List this link’s frames',
    frames_title: 'Frames on {a} — {b} (the simulation kept {kept} of the {total} it carried: the first frame and the first PFC frame of each sample window, per direction)',
    frames_none: 'No frames kept for this link.',
    frames_later: '(after the current time)',
    col_t: 'time (µs)', col_dir: 'direction', col_kind: 'frame', col_bytes: 'bytes', col_detail: 'contents',
    kind_pause: 'PAUSE', kind_resume: 'RESUME (pause time 0)', kind_roce: 'RoCE', kind_tcp: 'TCP', kind_raw: 'raw frame',
    quanta: 'pause for {q} quanta (512 bit times each)',
    ce: 'marked CE',
    inspect: 'Open the frame’s headers',
    node_left: 'left switch', node_right: 'right switch',
    kb: 'KB', pct: '%', gbps: 'Gb/s', frames: 'frames',
    aria: 'Fabric drawing: {n} hosts, {s} switches, {l} links',
    hosts: '{n} hosts', switches: '{n} switches', links: '{n} links',
    hosts_one: '1 host', switches_one: '1 switch', links_one: '1 link',
  },
};

const tr = (key, vars = {}) => {
  const s = (S[lang()] && S[lang()][key]) ?? S.zh[key];
  return String(s).replace(/\{(\w+)\}/g, (_, k) => (vars[k] ?? `{${k}}`));
};
/** `key` for a count `n`: its `_one` form when there is exactly one and the language has one. */
const trCount = (key, n) => tr(n === 1 && S[lang()] && S[lang()][`${key}_one`] ? `${key}_one` : key, { n });

/** How long each window stays on screen while playing, ms. */
const PLAY_MS = 220;

const us = (ps) => ps / 1e6;
const fmtUs = (ps) => fmtNum(Math.round(us(ps) * 100) / 100);

/** A node's name for people: the dumbbell's `left` and `right` switches get words; hosts keep their identifiers. */
export function nodeLabel(node) {
  if (node.kind === 'switch' && (node.name === 'left' || node.name === 'right')) return tr(`node_${node.name}`);
  return node.name;
}

// ---------------------------------------------------------------------------------------------
// Layout: positions computed from the topology alone.

/**
 * Positions for every node, in a `w`×`h` box: a ring of switches (every switch with two switch
 * neighbours) as a circle with each host outside its switch; otherwise switches that have hosts
 * on one row with their hosts under them, and switches without hosts (spines) on a row above.
 * `stagger` puts every other host a row lower, so each has room for a larger label (a phone).
 */
export function layout(view, stagger = false) {
  const n = view.nodes.length;
  const nbrs = Array.from({ length: n }, () => []);
  for (const l of view.links) { nbrs[l.a].push(l.b); nbrs[l.b].push(l.a); }
  const isSw = (i) => view.nodes[i].kind === 'switch';
  const sws = view.nodes.map((_, i) => i).filter(isSw);
  const hostsOf = (s) => nbrs[s].filter((j) => !isSw(j));
  const pos = new Array(n);
  const ring = sws.length >= 3 && sws.every((s) => nbrs[s].filter(isSw).length === 2);
  if (ring) {
    // Walk the ring from the first switch so neighbours sit side by side.
    const order = [sws[0]];
    while (order.length < sws.length) {
      const last = order[order.length - 1];
      const next = nbrs[last].find((j) => isSw(j) && !order.includes(j));
      if (next == null) break;
      order.push(next);
    }
    const W = 660, H = 600, cx = W / 2, cy = H / 2, R = 140, RH = 255;
    order.forEach((s, k) => {
      const a = -Math.PI / 2 + (2 * Math.PI * k) / order.length;
      pos[s] = { x: cx + R * Math.cos(a), y: cy + R * Math.sin(a) };
      const hs = hostsOf(s);
      hs.forEach((h, j) => {
        const b = a + (j - (hs.length - 1) / 2) * 0.22;
        pos[h] = { x: cx + RH * Math.cos(b), y: cy + RH * Math.sin(b) };
      });
    });
    for (let i = 0; i < n; i++) if (!pos[i]) pos[i] = { x: 20 + i * 30, y: H - 20 };
    return { pos, w: W, h: H, stagger: false, ring: true };
  }
  const edge = sws.filter((s) => hostsOf(s).length > 0);
  const top = sws.filter((s) => hostsOf(s).length === 0);
  const GAP = 92, PAD = 56;
  const slots = Math.max(1, edge.reduce((a, s) => a + Math.max(1, hostsOf(s).length), 0) + Math.max(0, edge.length - 1) * 0.6);
  const W = Math.max(560, PAD * 2 + (slots - 1) * GAP);
  // On a phone (`stagger`) nodes and badges are drawn larger, so the lines from a switch to its
  // hosts get longer too: room for an XOFF badge on each.
  const yTop = 50, yEdge = top.length ? 170 : 70, yHost = yEdge + Math.max(150, W * 0.17) * (stagger ? 1.8 : 1);
  let x = PAD;
  for (const s of edge) {
    const hs = hostsOf(s);
    const span = (Math.max(1, hs.length) - 1) * GAP;
    hs.forEach((h, j) => { pos[h] = { x: x + j * GAP, y: yHost + (stagger && j % 2 ? 62 : 0) }; });
    pos[s] = { x: x + span / 2, y: yEdge };
    x += span + GAP * 1.6;
  }
  top.forEach((s, k) => { pos[s] = { x: PAD + ((W - 2 * PAD) * (k + 0.5)) / top.length, y: yTop }; });
  // Hosts on no switch (back to back) in a row.
  let loose = 0;
  for (let i = 0; i < n; i++) if (!pos[i]) pos[i] = { x: PAD + (loose++) * GAP * 2, y: yEdge };
  return { pos, w: W, h: yHost + 50 + (stagger ? 70 : 0), stagger, ring: false };
}

// ---------------------------------------------------------------------------------------------
// Drawing.

/** A colour for utilisation `u` (0–100 %): grey when idle, through blue and amber to red when full. */
export function utilColour(u) {
  const stops = [[0, [190, 198, 208]], [30, [60, 130, 210]], [70, [230, 160, 30]], [100, [205, 50, 40]]];
  const v = Math.max(0, Math.min(100, u || 0));
  let k = 0;
  while (k < stops.length - 2 && v > stops[k + 1][0]) k++;
  const [a, ca] = stops[k], [b, cb] = stops[k + 1];
  const f = (v - a) / (b - a);
  const c = ca.map((x, i) => Math.round(x + (cb[i] - x) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

const held = (d, k) => d.paused[k] || d.held_pct[k] > 0;

/**
 * The drawing at window `k`. `z` enlarges nodes, labels and lines where the drawing is shown
 * much narrower than it is laid out (a phone), so the labels stay readable when it scales to fit.
 */
function svgHtml(view, lay, k, qmax, z = 1) {
  const { pos } = lay;
  // Badges placed so far and the node boxes: a new badge must cover neither (see placeBadge).
  const placed = [];
  const boxes = view.nodes.map((node, i) => {
    const [w, h] = nodeSize(node, nodeLabel(node), lay, z);
    return { x0: pos[i].x - w / 2, y0: pos[i].y - h / 2, x1: pos[i].x + w / 2, y1: pos[i].y + h / 2 };
  });
  const degree = view.nodes.map(() => 0);
  for (const l of view.links) { degree[l.a] += 1; degree[l.b] += 1; }
  let out = `<svg class="fv-svg" viewBox="0 0 ${Math.round(lay.w)} ${Math.round(lay.h)}" role="img" aria-label="${esc(tr('aria', {
    n: view.nodes.filter((x) => x.kind === 'host').length, s: view.nodes.filter((x) => x.kind === 'switch').length, l: view.links.length,
  }))}">`;
  view.links.forEach((l, i) => {
    const A = pos[l.a], B = pos[l.b];
    const dx = B.x - A.x, dy = B.y - A.y, len = Math.hypot(dx, dy) || 1;
    const ux = dx / len, uy = dy / len, nx = -uy * 3.2 * z, ny = ux * 3.2 * z;
    const cut = 26 * z; // stop short of the node boxes
    out += `<g class="fv-link" data-link="${i}" tabindex="0" role="button" aria-label="${esc(tr('card_title', { a: nodeLabel(view.nodes[l.a]), b: nodeLabel(view.nodes[l.b]), g: fmtNum(l.gbps) }))}">`;
    out += `<line class="fv-hit" x1="${A.x}" y1="${A.y}" x2="${B.x}" y2="${B.y}"/>`;
    l.dirs.forEach((d, j) => {
      const F = pos[d.from], T = pos[d.to];
      const s = j === 0 ? 1 : -1;
      const ox = nx * s, oy = ny * s;
      const sx = F.x + ux * s * cut + ox, sy = F.y + uy * s * cut + oy;
      const ex = T.x - ux * s * cut + ox, ey = T.y - uy * s * cut + oy;
      const h = held(d, k);
      out += `<line class="fv-dir${h ? ' held' : ''}" data-dir="${j}" x1="${sx.toFixed(1)}" y1="${sy.toFixed(1)}" x2="${ex.toFixed(1)}" y2="${ey.toFixed(1)}" stroke="${h ? '#c0261b' : utilColour(d.util_pct[k])}" stroke-width="${(4 * z).toFixed(1)}"/>`;
      // The queue at the sending port: a bar across the line's start, as long as the queue is deep.
      const q = d.queue_bytes[k] || 0;
      if (q > 0 && qmax > 0) {
        const L = (4 + 22 * Math.min(1, q / qmax)) * z;
        const bx = sx + ux * s * 6 * z, by = sy + uy * s * 6 * z;
        out += `<line class="fv-queue" x1="${(bx + ox * 1.2).toFixed(1)}" y1="${(by + oy * 1.2).toFixed(1)}" x2="${(bx + ox * (1.2 + L / 3.2)).toFixed(1)}" y2="${(by + oy * (1.2 + L / 3.2)).toFixed(1)}" stroke-width="${(5 * z).toFixed(1)}"/>`;
      }
      // XOFF at the end that sent the pause (the receiving node of this direction). Where a
      // switch with three links or more pauses its hosts, their lines fan out from it and
      // the badges would cover each other right at the switch: each stands a third of the way
      // along its own line instead (a switch-to-switch trunk keeps its badge at the end).
      if (h) {
        const seg = Math.hypot(ex - sx, ey - sy);
        const fan = degree[d.to] >= 3 && view.nodes[d.from].kind === 'host';
        const back = fan ? Math.max(14 * z, seg * 0.33) : 14 * z;
        const [bx, by] = placeBadge({ ex: ex + ox * 4, ey: ey + oy * 4, dx: ux * s, dy: uy * s, seg, back, z }, placed, boxes, lay);
        out += `<g class="fv-xoff" data-dir="${j}"><rect x="${(bx - 17 * z).toFixed(1)}" y="${(by - 8 * z).toFixed(1)}" width="${(34 * z).toFixed(1)}" height="${(15 * z).toFixed(1)}" rx="3"/><text x="${bx.toFixed(1)}" y="${(by + 3.5 * z).toFixed(1)}" style="font-size:${(10 * z).toFixed(1)}px">XOFF</text></g>`;
      }
    });
    out += '</g>';
  });
  view.nodes.forEach((node, i) => {
    const p = pos[i];
    const name = nodeLabel(node);
    const fs = (13 * z).toFixed(1);
    const [w, h] = nodeSize(node, name, lay, z);
    if (node.kind === 'switch') {
      out += `<g class="fv-node switch" data-node="${i}"><rect x="${(p.x - w / 2).toFixed(1)}" y="${(p.y - h / 2).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" rx="6"/><text x="${p.x.toFixed(1)}" y="${(p.y + 4.5 * z).toFixed(1)}" style="font-size:${fs}px">${esc(name)}</text></g>`;
    } else {
      out += `<g class="fv-node host" data-node="${i}"><rect x="${(p.x - w / 2).toFixed(1)}" y="${(p.y - h / 2).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" rx="${(h / 2).toFixed(1)}"/><text x="${p.x.toFixed(1)}" y="${(p.y + 4.5 * z).toFixed(1)}" style="font-size:${fs}px">${esc(name)}</text></g>`;
    }
  });
  return `${out}</svg>`;
}

/** A node's box (width, height) in the drawing's units. */
function nodeSize(node, name, lay, z) {
  if (node.kind === 'switch') return [Math.max(58, name.length * (/[\u2e80-\uffff]/.test(name) ? 13 : 8) + 16) * z, 32 * z];
  return [Math.min(60 * z, lay.stagger ? 170 : 86), 28 * z];
}

/**
 * Where an XOFF badge stands on its line: `back` from the line's end (`ex`, `ey`, the node
 * that sent the pause), or further back towards the sender, in steps, then beside the line,
 * until it covers no badge placed before it, no node and nothing outside the drawing. On a phone the drawing is
 * scaled down and its labels up (`z`), so badges of lines that fan out from one switch would
 * otherwise sit on each other. Where no place along the line is free, the first one, kept
 * inside the drawing. The badge's box is recorded in `placed`.
 */
function placeBadge({ ex, ey, dx, dy, seg, back, z }, placed, boxes, lay) {
  const hw = 17 * z, up = 8 * z, down = 7 * z, pad = 2 * z;
  const box = (x, y) => ({ x0: x - hw - pad, y0: y - up - pad, x1: x + hw + pad, y1: y + down + pad });
  const free = (b) => b.x0 >= 0 && b.y0 >= 0 && b.x1 <= lay.w && b.y1 <= lay.h
    && ![...placed, ...boxes].some((o) => b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1);
  let at = null;
  // Along the line first; then beside it, one badge height at a time, on either side.
  const side = up + down + 2 * pad;
  for (const l of [0, 1, -1, 2, -2]) {
    for (let d = back; !at && d <= Math.max(back, seg - 10 * z); d += 4 * z) {
      const p = [ex - dx * d - dy * l * side, ey - dy * d + dx * l * side];
      if (free(box(...p))) at = p;
    }
    if (at) break;
  }
  if (!at) {
    const x = Math.min(Math.max(ex - dx * back, hw + pad), lay.w - hw - pad);
    const y = Math.min(Math.max(ey - dy * back, up + pad), lay.h - down - pad);
    at = [x, y];
  }
  placed.push(box(...at));
  return at;
}

/** Directions in the order they first sent PAUSE: the spread, hop by hop. */
export function pauseSpread(view) {
  const out = [];
  view.links.forEach((l, i) => l.dirs.forEach((d, j) => {
    const k = d.pauses.findIndex((x) => x > 0);
    // The first PAUSE's own time when the run gives it (the order it happened in), else the window's end.
    if (k >= 0) out.push({ link: i, dir: j, k, at: d.first_pause_ps ?? view.t_ps[k], from: d.from, to: d.to });
  }));
  return out.sort((a, b) => a.at - b.at || a.link - b.link || a.dir - b.dir);
}

function spreadHtml(view, k) {
  const sp = pauseSpread(view);
  if (!sp.length) return `<p class="fv-spread-none">${esc(tr('spread_none'))}</p>`;
  const items = sp.map((s, n) => `<li data-link="${s.link}" data-k="${s.k}" class="${s.k <= k ? 'now' : 'later'}">${esc(tr('spread_item', {
    from: nodeLabel(view.nodes[s.from]), to: nodeLabel(view.nodes[s.to]), t: fmtUs(s.at),
  }))}</li>`).join('');
  return `<ol class="fv-spread-list">${items}</ol>`;
}

function cardHtml(view, i, k) {
  const l = view.links[i];
  const nm = (x) => nodeLabel(view.nodes[x]);
  const rows = l.dirs.map((d, j) => `<tr data-dir="${j}"><th scope="row">${esc(`${nm(d.from)} → ${nm(d.to)}`)}</th>
      <td class="num">${esc(fmtNum((d.util_pct[k] * l.gbps) / 100))} ${esc(tr('gbps'))}</td>
      <td class="num">${esc(fmtNum(d.util_pct[k]))}${esc(tr('pct'))}</td>
      <td class="num">${esc(fmtNum(d.queue_bytes[k] / 1e3))} ${esc(tr('kb'))}</td>
      <td class="num">${esc(fmtNum(d.held_pct[k]))}${esc(tr('pct'))}</td>
      <td class="num fv-pauses">${esc(fmtNum(d.pauses[k]))}</td>
      <td class="num">${esc(fmtNum(d.ecn_marks[k]))}</td></tr>`).join('');
  return `<h3>${esc(tr('card_title', { a: nm(l.a), b: nm(l.b), g: fmtNum(l.gbps) }))} <span class="muted">${esc(tr('card_at', { t: fmtUs(view.t_ps[k]) }))}</span></h3>
    <div class="fv-card-scroll"><table class="fv-card-table">
      <thead><tr><th scope="col">${esc(tr('dir'))}</th><th scope="col">${esc(tr('rate'))}</th><th scope="col">${esc(tr('util'))}</th><th scope="col">${esc(tr('queue'))}</th><th scope="col">${esc(tr('held'))}</th><th scope="col">${esc(tr('pauses'))}</th><th scope="col">${esc(tr('ecn'))}</th></tr></thead>
      <tbody>${rows}</tbody></table></div>
    <p class="fv-drops">${esc(tr('drops', { n: fmtNum(l.drops[k]) }))}</p>
    <button type="button" class="button secondary fv-frames-btn" data-link="${i}">${esc(tr('frames_btn'))}</button>`;
}

function frameDetail(f) {
  const parts = [];
  if (f.opcode) parts.push(f.opcode);
  if (f.psn != null) parts.push(`PSN ${f.psn}`);
  if (f.dest_qp != null) parts.push(`QP 0x${f.dest_qp.toString(16)}`);
  if (f.quanta != null && f.quanta > 0) parts.push(tr('quanta', { q: f.quanta }));
  if (f.ce) parts.push(tr('ce'));
  return parts.join(' · ');
}

function framesHtml(view, i, k) {
  const l = view.links[i];
  const nm = (x) => nodeLabel(view.nodes[x]);
  const now = view.t_ps[k];
  const head = `<h3>${esc(tr('frames_title', { a: nm(l.a), b: nm(l.b), kept: fmtNum(l.frames.length), total: fmtNum(l.frames_total) }))}</h3>`;
  if (!l.frames.length) return `${head}<p>${esc(tr('frames_none'))}</p>`;
  const rows = l.frames.map((f, n) => {
    const d = l.dirs[f.dir];
    const later = f.t_ps > now;
    return `<tr class="${later ? 'later' : ''}" data-frame="${n}"><td class="num">${esc(fmtUs(f.t_ps))}</td><td>${esc(`${nm(d.from)} → ${nm(d.to)}`)}</td>
      <td><button type="button" class="fv-frame" data-frame="${n}" title="${esc(tr('inspect'))}">${esc(tr(`kind_${f.kind}`))}</button></td>
      <td class="num">${esc(fmtNum(f.bytes))}</td><td>${esc(frameDetail(f))}${later ? ` <span class="muted">${esc(tr('frames_later'))}</span>` : ''}</td></tr>`;
  }).join('');
  return `${head}<div class="fv-frames-scroll"><table class="fv-frames-table" data-testid="fv-frames">
    <thead><tr><th scope="col">${esc(tr('col_t'))}</th><th scope="col">${esc(tr('col_dir'))}</th><th scope="col">${esc(tr('col_kind'))}</th><th scope="col">${esc(tr('col_bytes'))}</th><th scope="col">${esc(tr('col_detail'))}</th></tr></thead>
    <tbody>${rows}</tbody></table></div>`;
}

/**
 * Draws `view` (a LabResult's `fabric`) into `holder` with its scrubber, spread list, link card
 * and frame list. Returns a function that stops playback (call it before the holder goes).
 */
export function renderFabricView(holder, view) {
  if (!view || !Array.isArray(view.nodes) || !Array.isArray(view.links) || !view.t_ps || !view.t_ps.length) {
    holder.innerHTML = '';
    return () => {};
  }
  const n = view.t_ps.length;
  const flat = layout(view);
  const tall = layout(view, true);
  let qmax = 0;
  for (const l of view.links) for (const d of l.dirs) for (const q of d.queue_bytes) if (q > qmax) qmax = q;
  const st = { k: 0, card: null, frames: null, timer: 0 };
  const hosts = view.nodes.filter((x) => x.kind === 'host').length;
  const switches = view.nodes.length - hosts;
  holder.innerHTML = `<section class="fabric-view" data-testid="fabric-view" data-hosts="${hosts}" data-switches="${switches}" data-links="${view.links.length}">
    <h2>${esc(tr('title'))}</h2>
    <p class="fv-lead">${esc(tr('lead'))}</p>
    <p class="fv-counts">${esc([trCount('hosts', hosts), trCount('switches', switches), trCount('links', view.links.length)].join(' · '))}</p>
    <div class="fv-controls">
      <button type="button" class="button fv-play">${esc(tr('play'))}</button>
      <button type="button" class="button secondary fv-step fv-prev" aria-label="${esc(tr('prev'))}" title="${esc(tr('prev'))}">◀</button>
      <input type="range" class="fv-scrub" min="0" max="${n - 1}" step="1" value="0" aria-label="${esc(tr('scrub'))}">
      <button type="button" class="button secondary fv-step fv-next" aria-label="${esc(tr('next'))}" title="${esc(tr('next'))}">▶</button>
      <span class="fv-time" aria-live="polite"></span>
    </div>
    <div class="fv-legend"><span class="fv-grad"></span> ${esc(tr('legend_util'))} 0–100${esc(tr('pct'))}
      <span class="fv-key-held"></span> ${esc(tr('legend_held'))} <span class="fv-key-queue"></span> ${esc(tr('legend_queue'))}</div>
    <div class="fv-draw"></div>
    <p class="fv-hint muted">${esc(tr('card_hint'))}</p>
    <div class="fv-card" data-testid="fv-card" hidden></div>
    <div class="fv-frames" hidden></div>
    <h3 class="fv-spread-title">${esc(tr('spread'))}</h3>
    <div class="fv-spread"></div>
  </section>`;
  const root = holder.querySelector('.fabric-view');
  const draw = root.querySelector('.fv-draw');
  const scrub = root.querySelector('.fv-scrub');
  const time = root.querySelector('.fv-time');
  const card = root.querySelector('.fv-card');
  const frames = root.querySelector('.fv-frames');
  const spread = root.querySelector('.fv-spread');
  const play = root.querySelector('.fv-play');

  let drawn = '';
  const paint = () => {
    const k = st.k;
    // Shown much narrower than laid out (a phone): larger nodes, labels and lines.
    const z = Math.min(2.2, Math.max(1, (flat.w / Math.max(300, draw.clientWidth || flat.w)) * 0.85));
    const lay = z > 1.3 && !flat.ring ? tall : flat;
    const key = `${k} ${z.toFixed(2)}`;
    if (drawn !== key) { draw.innerHTML = svgHtml(view, lay, k, qmax, z); drawn = key; }
    scrub.value = String(k);
    root.dataset.k = String(k);
    time.textContent = tr('time', { t: fmtUs(view.t_ps[k]), end: fmtUs(view.t_ps[n - 1]), k: k + 1, n, w: fmtUs(view.window_ps) });
    spread.innerHTML = spreadHtml(view, k);
    if (st.card != null) { card.innerHTML = cardHtml(view, st.card, k); card.hidden = false; card.dataset.link = String(st.card); }
    if (st.frames != null) { frames.innerHTML = framesHtml(view, st.frames, k); frames.hidden = false; }
    for (const g of draw.querySelectorAll('.fv-link')) g.classList.toggle('selected', Number(g.dataset.link) === st.card);
  };
  const go = (k) => { st.k = Math.max(0, Math.min(n - 1, k)); paint(); };
  const stop = () => { clearInterval(st.timer); st.timer = 0; play.textContent = tr('play'); };
  const showCard = (i) => { st.card = i; paint(); };

  scrub.addEventListener('input', () => { stop(); go(Number(scrub.value)); });
  root.querySelector('.fv-prev').addEventListener('click', () => { stop(); go(st.k - 1); });
  root.querySelector('.fv-next').addEventListener('click', () => { stop(); go(st.k + 1); });
  play.addEventListener('click', () => {
    if (st.timer) { stop(); return; }
    if (st.k >= n - 1) go(0);
    play.textContent = tr('pause');
    st.timer = setInterval(() => {
      if (!root.isConnected || st.k >= n - 1) { stop(); return; }
      go(st.k + 1);
    }, PLAY_MS);
  });
  draw.addEventListener('mouseover', (e) => {
    const g = e.target.closest('.fv-link');
    if (g && Number(g.dataset.link) !== st.card) showCard(Number(g.dataset.link));
  });
  const pick = (g) => { st.card = Number(g.dataset.link); st.frames = st.card; paint(); };
  draw.addEventListener('click', (e) => { const g = e.target.closest('.fv-link'); if (g) pick(g); });
  draw.addEventListener('keydown', (e) => {
    const g = e.target.closest('.fv-link');
    if (g && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); pick(g); }
  });
  spread.addEventListener('click', (e) => {
    const li = e.target.closest('li[data-link]');
    if (li) { stop(); st.card = Number(li.dataset.link); go(Number(li.dataset.k)); }
  });
  card.addEventListener('click', (e) => {
    const b = e.target.closest('.fv-frames-btn');
    if (b) { st.frames = Number(b.dataset.link); paint(); frames.scrollIntoView({ block: 'nearest' }); }
  });
  frames.addEventListener('click', (e) => {
    const b = e.target.closest('button.fv-frame');
    if (!b || st.frames == null) return;
    const l = view.links[st.frames];
    const f = l.frames[Number(b.dataset.frame)];
    const d = l.dirs[f.dir];
    const title = `${nodeLabel(view.nodes[d.from])} → ${nodeLabel(view.nodes[d.to])} · ${tr(`kind_${f.kind}`)} · ${fmtUs(f.t_ps)} µs`;
    document.dispatchEvent(new CustomEvent('rdmalab:inspect', { detail: { frame: f, title } }));
  });
  const onResize = () => { if (!root.isConnected) { window.removeEventListener('resize', onResize); return; } paint(); };
  window.addEventListener('resize', onResize);
  paint();
  return () => { stop(); window.removeEventListener('resize', onResize); };
}
