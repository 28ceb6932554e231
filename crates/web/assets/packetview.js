// Loss and congestion, frame by frame (issue 19, item 2): for a stream run, the packet view
// the server cuts from the run's own frames (`POST /api/packets`: a bounded window around
// each path's first drop) — RoCE and TCP side by side, each frame a line from sender to
// receiver, the drop at the switch crossed out, the NAK or SACK that reports it, the range
// resent shaded, PAUSE/RESUME on the link and the switch queue underneath; a cursor to scrub
// or play, and the drop told as sentences whose numbers are the view's. Go-back-N and
// selective repeat can be put side by side: the same scenario and seed with the other
// retransmission (its frames differ, so its first drop may fall on another PSN).
// Any frame is clickable: it dispatches `rdmalab:inspect` (contract.md).

import { lang, esc } from './i18n.js';
import { api, errorText } from './app.js';
import { fmtNs } from './draw.js';

const WORDS = {
  zh: {
    title: '丢包与拥塞：一段包级过程',
    lead: '这是这次运行里第一处丢包前后的一段帧（服务器从本次仿真的帧里截取，最多 {n} 帧），每条线是一个帧：上面是发送方，中间是交换机，下面是接收方。拖动滑块或播放，看丢包、报告和重发依次发生。TCP 的序号从窗口里第一个数据段算起（和 Wireshark 的相对序号一样）。',
    loading: '正在截取帧…', error: '截取帧失败：{e}',
    rdma: 'RoCE（{mode}）', tcp: 'TCP', gbn: 'go-back-N', sel: '选择重传',
    sender: '发送方', switch: '交换机', receiver: '接收方', queue: '交换机队列',
    requester: '请求方', responder: '响应方',
    drop_rdma: 'PSN {psn} 在交换机被丢（{why}）',
    nak: '响应方收到后面的包，发现缺了 {psn} → 回 NAK {psn}',
    sack: '响应方回 SACK NAK {psn}，只报告缺的那个包',
    nonak: '窗口里没有看到 NAK：请求方要等 ACK 超时',
    gbn_resend: '请求方从 {from} 重发到 {to}，共 {n} 个包',
    sel_resend: '请求方只重发 PSN {from}，共 {n} 个包',
    noresend: '窗口里还没有重发',
    drop_tcp: '序号 {seq} 的段在交换机被丢（{why}）',
    dupack: '接收方回重复 ACK {ack}',
    tcpsack: '接收方回重复 ACK {ack}，带 SACK 块，告诉发送方后面的数据已经收到',
    tcp_resend: '发送方重发序号 {from} 起的 {n} 个段{upto}',
    tcp_upto: '（到序号 {to}）',
    pause: '这一段没有丢包：交换机发出 PAUSE {p} 次、RESUME {r} 次，队列最深 {q}',
    quiet: '这一段没有丢包，也没有 PFC 暂停；队列最深 {q}',
    story: '经过',
    summary: '{a} → {b} → {c}',
    compare: '同一场景换成选择重传，并排对比',
    compare_gbn: '同一场景换成 go-back-N，并排对比',
    play: '播放', pause_btn: '暂停', time: '窗口内时间',
    stretch: '慢放：这段 {sim} 在 1× 下放 {real}，约慢 {x} 倍。',
    frames: '{n} 帧，其中重发 {r} 帧、被丢 {d} 帧；PAUSE {p} 次',
    legend: '图例：蓝线数据帧，橙线重发，红 ✗ 被丢，灰虚线 ACK，红虚线 NAK/SACK，阴影是重发的那一段，‖ 是 PAUSE，▶ 是 RESUME。点一个帧看它的头部。',
    truncated: '（这次运行发出的帧多于保留的 {n} 帧，窗口取自前 {n} 帧）',
    why_congestion_draw: '抽中的拥塞丢包', why_buffer_full: '缓冲区满', why_corruption: '链路误码', why_burst: '突发丢包',
    why_rule: '规则丢包', why_no_route: '没有路由', why_not_ip: '不是 IP 帧', why_oversize: '超过 MTU', why_watchdog: 'PFC 看门狗',
    k_data: '数据', k_ack: 'ACK', k_nak: 'NAK', k_sack: 'SACK', k_cnp: 'CNP', k_cross: '交叉流量',
    resent: '重发', dropped: '被丢',
  },
  en: {
    title: 'Loss and congestion, frame by frame',
    lead: 'Frames around the first drop of this run (cut by the server from this simulation\'s own frames, at most {n}); each line is one frame: sender on top, switch in the middle, receiver below. Drag the slider or play to watch the drop, the report and the resend happen. TCP sequence numbers count from the window\'s first data segment (relative, as Wireshark shows them).',
    loading: 'Cutting frames…', error: 'Could not cut frames: {e}',
    rdma: 'RoCE ({mode})', tcp: 'TCP', gbn: 'go-back-N', sel: 'selective repeat',
    sender: 'sender', switch: 'switch', receiver: 'receiver', queue: 'switch queue',
    requester: 'requester', responder: 'responder',
    drop_rdma: 'PSN {psn} dropped at the switch ({why})',
    nak: 'the responder sees later packets, finds {psn} missing → NAK {psn}',
    sack: 'the responder sends SACK NAK {psn}, reporting only the missing packet',
    nonak: 'no NAK in the window: the requester waits for its ACK timeout',
    gbn_resend: 'the requester resends from {from} to {to}, {n} packets',
    sel_resend: 'the requester resends PSN {from} only, {n} packet(s)',
    noresend: 'no resend in the window yet',
    drop_tcp: 'the segment at sequence {seq} dropped at the switch ({why})',
    dupack: 'the receiver sends duplicate ACK {ack}',
    tcpsack: 'the receiver sends duplicate ACK {ack} with SACK blocks: the later data arrived',
    tcp_resend: 'the sender resends {n} segment(s) from sequence {from}{upto}',
    tcp_upto: ' (to {to})',
    pause: 'No drop here: the switch sent PAUSE {p} times and RESUME {r} times; deepest queue {q}',
    quiet: 'No drop and no PFC pause here; deepest queue {q}',
    story: 'What happened',
    summary: '{a} → {b} → {c}',
    compare: 'Same scenario with selective repeat, side by side',
    compare_gbn: 'Same scenario with go-back-N, side by side',
    play: 'Play', pause_btn: 'Pause', time: 'time in the window',
    stretch: 'Slowed down: this {sim} plays in {real} at 1×, about {x} times slower.',
    frames: '{n} frames: {r} resent, {d} dropped; {p} PAUSE',
    legend: 'Key: blue data, orange resent, red ✗ dropped, grey dashes ACK, red dashes NAK/SACK, shading the range resent, ‖ PAUSE, ▶ RESUME. Click a frame to see its headers.',
    truncated: ' (the run sent more frames than the {n} kept; the window comes from the first {n})',
    why_congestion_draw: 'drawn congestion drop', why_buffer_full: 'buffer full', why_corruption: 'link corruption', why_burst: 'burst loss',
    why_rule: 'rule', why_no_route: 'no route', why_not_ip: 'not IP', why_oversize: 'over the MTU', why_watchdog: 'PFC watchdog',
    k_data: 'data', k_ack: 'ACK', k_nak: 'NAK', k_sack: 'SACK', k_cnp: 'CNP', k_cross: 'cross traffic',
    resent: 'resent', dropped: 'dropped',
  },
};

/** This module's words in the page language. */
export function pw(key, v = {}) {
  const table = WORDS[lang() === 'en' ? 'en' : 'zh'];
  return (table[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String(v[k]));
}

/** Played length of a window at 1×, ms. */
const PLAY_MS = 12000;
let player = null;

export function stopPacketView() {
  if (player) cancelAnimationFrame(player.raf);
  player = null;
}

const bytes = (b) => (b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${b} B`);

/** The part of a view the drawing shows, `[a, b]` ns: from a little before the first drop to
 * a little after the frames resent for it; with no drop, the first PAUSE and what follows;
 * with neither, the window's first frames. */
export function shownRange(v) {
  const fr = v.frames;
  if (!fr.length) return [0, 1];
  const fate = (f) => f.delivered_ns ?? f.dropped_ns ?? f.t_ns;
  const all = Math.max(...fr.map(fate));
  const s = v.story;
  const after = (t0, n) => {
    const i = fr.findIndex((f) => f.t_ns >= t0);
    const j = Math.min(fr.length - 1, (i < 0 ? fr.length : i) + n);
    return Math.min(all, fate(fr[j]));
  };
  if (s) {
    const lost = fr.find((f) => f.from === 'local' && f.kind === 'data' && f.dropped_ns != null);
    const t0 = lost ? lost.t_ns : s.drop.t_ns;
    let t1;
    if (s.resend) {
      const re = fr.filter((f) => f.resend && f.from === 'local' && f.t_ns >= s.resend.t_ns);
      t1 = re.length ? Math.max(...re.slice(0, Math.max(1, s.resend.packets)).map(fate)) : s.resend.t_ns;
    } else t1 = after(t0, 60);
    const a = Math.max(0, t0 - Math.max(600, (t1 - t0) * 0.25));
    return [a, Math.min(all, t1 + Math.max(800, (t1 - a) * 0.15))];
  }
  const p = v.pauses.find((x) => !x.resume);
  const a = p ? Math.max(0, p.t_ns - 1500) : 0;
  return [a, after(a, 90)];
}

/** The story of a view as events `{t, text, kind}` in time order. */
export function storyEvents(v, mode) {
  const s = v.story;
  const out = [];
  const q = bytes(v.queue_max_bytes);
  if (!s) {
    const p = v.pauses.filter((x) => !x.resume).length;
    const r = v.pauses.filter((x) => x.resume).length;
    out.push({ t: 0, kind: 'none', text: p ? pw('pause', { p, r, q }) : pw('quiet', { q }) });
    return out;
  }
  const why = pw(`why_${s.drop.reason}`);
  if (v.path === 'rdma') {
    out.push({ t: s.drop.t_ns, kind: 'drop', text: pw('drop_rdma', { psn: s.drop.psn, why }) });
    if (s.report) out.push({ t: s.report.t_ns, kind: 'report', text: pw(s.report.kind === 'sack' ? 'sack' : 'nak', { psn: s.report.psn }) });
    else out.push({ t: null, kind: 'report', text: pw('nonak') });
    if (s.resend) out.push({ t: s.resend.t_ns, kind: 'resend', text: pw(s.resend.selective ? 'sel_resend' : 'gbn_resend', { from: s.resend.from, to: s.resend.to, n: s.resend.packets, packets: s.resend.packets === 1 ? 'packet' : 'packets' }) });
    else out.push({ t: null, kind: 'resend', text: pw('noresend') });
  } else {
    out.push({ t: s.drop.t_ns, kind: 'drop', text: pw('drop_tcp', { seq: s.drop.seq, why }) });
    if (s.report) out.push({ t: s.report.t_ns, kind: 'report', text: pw(s.report.kind === 'sack' ? 'tcpsack' : 'dupack', { ack: s.report.ack }) });
    if (s.resend) out.push({ t: s.resend.t_ns, kind: 'resend', text: pw('tcp_resend', { from: s.resend.from, n: s.resend.packets, segments: s.resend.packets === 1 ? 'segment' : 'segments', upto: s.resend.packets > 1 ? pw('tcp_upto', { to: s.resend.to }) : '' }) });
    else out.push({ t: null, kind: 'resend', text: pw('noresend') });
  }
  void mode;
  return out;
}

const LANE = { top: 34, mid: 104, bot: 174 };
const W = 640, LEFT = 64, RIGHT = 12, QTOP = 204, QH = 46;

/** One view as an SVG: frames between lanes, drops, resend shading, PAUSEs, queue. */
function viewSvg(v, id, [a, end]) {
  const x = (t) => LEFT + (W - LEFT - RIGHT) * Math.min(1, Math.max(0, (t - a) / Math.max(1, end - a)));
  const inside = (t) => t >= a && t <= end;
  const yOf = (from) => (from === 'remote' ? LANE.bot : LANE.top);
  let out = `<svg class="pv" data-view="${id}" viewBox="0 0 ${W} ${QTOP + QH + 22}" role="img" aria-label="${esc(pw(v.path))}">`;
  const laneNames = v.path === 'rdma' ? [pw('requester'), pw('switch'), pw('responder')] : [pw('sender'), pw('switch'), pw('receiver')];
  [LANE.top, LANE.mid, LANE.bot].forEach((y, i) => {
    out += `<line class="pv-lane" x1="${LEFT}" x2="${W - RIGHT}" y1="${y}" y2="${y}"/><text class="pv-lname" x="4" y="${y + 4}">${esc(laneNames[i])}</text>`;
  });
  // The range resent, shaded: from the first resend to the last frame of that run.
  const s = v.story;
  if (s && s.resend) {
    const re = v.frames.filter((f) => f.resend && f.from === 'local' && f.t_ns >= s.resend.t_ns);
    const t1 = re.length ? Math.max(...re.map((f) => f.t_ns)) : s.resend.t_ns;
    out += `<rect class="pv-resend" x="${x(s.resend.t_ns) - 2}" y="${LANE.top - 14}" width="${Math.max(4, x(t1) - x(s.resend.t_ns) + 4)}" height="${LANE.bot - LANE.top + 20}"><title>${esc(storyEvents(v).find((e) => e.kind === 'resend').text)}</title></rect>`;
  }
  v.frames.forEach((f, i) => {
    if (!inside(f.t_ns) && !(f.t_ns < a && (f.delivered_ns ?? f.dropped_ns ?? 0) > a)) return;
    const cls = `pv-frame k-${f.kind}${f.resend ? ' resend' : ''}${f.dropped_ns != null ? ' dropped' : ''} from-${f.from}`;
    const y0 = f.from === 'cross' ? LANE.mid - 22 : yOf(f.from);
    const y1 = f.from === 'remote' ? LANE.top : LANE.bot;
    const label = frameLabel(v, f);
    let shape;
    if (f.dropped_ns != null) {
      shape = `<line x1="${x(f.t_ns)}" y1="${y0}" x2="${x(f.dropped_ns)}" y2="${LANE.mid}"/><text class="pv-x" x="${x(f.dropped_ns)}" y="${LANE.mid + 5}">✗</text>`;
    } else {
      const t1 = f.delivered_ns ?? f.t_ns;
      shape = `<line x1="${x(f.t_ns)}" y1="${y0}" x2="${x(t1)}" y2="${y1}"/>`;
    }
    out += `<g class="${cls}" data-i="${i}" data-t="${f.t_ns}" tabindex="0" role="button" aria-label="${esc(label)}">${shape}<title>${esc(label)}</title></g>`;
  });
  // Labels of the story's frames: the lost PSN, the NAK, the first resend.
  if (s) {
    const lost = v.frames.find((f) => f.dropped_ns != null && f.from === 'local' && f.kind === 'data');
    if (lost) out += `<text class="pv-tag drop" x="${x(lost.dropped_ns)}" y="${LANE.mid - 10}">${esc(v.path === 'rdma' ? `PSN ${lost.psn}` : `${lost.seq}`)}</text>`;
    const rep = s.report && v.frames.find((f) => f.from === 'remote' && Math.abs(f.t_ns - s.report.t_ns) < 1e-6);
    if (rep) out += `<text class="pv-tag nak" x="${x(rep.t_ns)}" y="${LANE.bot + 16}">${esc(v.path === 'rdma' ? `${rep.kind === 'sack' ? 'SACK' : 'NAK'} ${rep.psn}` : `ACK ${rep.ack}`)}</text>`;
    if (s.resend) out += `<text class="pv-tag resend" x="${x(s.resend.t_ns)}" y="${LANE.top - 18}">${esc(v.path === 'rdma' ? (s.resend.selective ? `${s.resend.from}` : `${s.resend.from}–${s.resend.to}`) : `${s.resend.from}`)}</text>`;
  }
  for (const p of v.pauses) {
    if (!inside(p.t_ns)) continue;
    const y = p.at === 'switch' ? LANE.mid : (p.at === 'remote' ? LANE.bot : LANE.top);
    out += `<text class="pv-pause${p.resume ? ' resume' : ''}" data-t="${p.t_ns}" x="${x(p.t_ns)}" y="${y - 6}">${p.resume ? '▶' : '‖'}<title>${esc(p.resume ? 'RESUME' : `PAUSE ${p.quanta}`)} · ${esc(fmtNs(p.t_ns))}</title></text>`;
  }
  // The queue: its deepest point per slice, as an area.
  const qmax = Math.max(1, v.queue_max_bytes);
  const pts = v.queue.filter(([t]) => inside(t)).map(([t, b]) => `${x(t).toFixed(1)},${(QTOP + QH - (QH * b) / qmax).toFixed(1)}`);
  // A step line: each slice's deepest point held until the next.
  const steps = [];
  pts.forEach((q, i) => { const [qx, qy] = q.split(','); if (i) steps.push(`${qx},${steps[steps.length - 1].split(',')[1]}`); steps.push(`${qx},${qy}`); });
  if (steps.length) out += `<polyline class="pv-queue" points="${steps[0].split(',')[0]},${QTOP + QH} ${steps.join(' ')} ${steps[steps.length - 1].split(',')[0]},${QTOP + QH}"/>`;
  out += `<line class="pv-lane" x1="${LEFT}" x2="${W - RIGHT}" y1="${QTOP + QH}" y2="${QTOP + QH}"/>`;
  out += `<text class="pv-lname" x="4" y="${QTOP + 12}">${esc(pw('queue'))}</text><text class="pv-axis" x="4" y="${QTOP + 26}">${esc(bytes(v.queue_max_bytes))}</text>`;
  out += `<text class="pv-axis" x="${LEFT}" y="${QTOP + QH + 16}">${esc(fmtNs(a))}</text><text class="pv-axis end" x="${W - RIGHT}" y="${QTOP + QH + 16}">${esc(fmtNs(end))}</text>`;
  out += `<line class="pv-cursor" x1="${LEFT}" x2="${LEFT}" y1="${LANE.top - 16}" y2="${QTOP + QH}"/>`;
  return `${out}</svg>`;
}

/** A frame's short label: kind, PSN or sequence, fate. */
function frameLabel(v, f) {
  const k = pw(`k_${f.kind}`);
  const num = f.psn != null ? ` PSN ${f.psn}` : f.seq != null ? ` ${f.seq}` : f.ack != null ? ` ${f.ack}` : '';
  const fate = [f.resend ? pw('resent') : '', f.dropped_ns != null ? pw('dropped') : ''].filter(Boolean).join(lang() === 'en' ? ', ' : '、');
  const sep = lang() === 'en' ? ', ' : '，';
  return `${k}${num} · ${f.len} B · ${fmtNs(f.t_ns)}${fate ? `${sep}${fate}` : ''}`;
}

function panelHtml(v, id, mode, range) {
  const [a, end] = range;
  const within = (t) => t >= a && t <= end;
  const ev = storyEvents(v, mode);
  const title = v.path === 'rdma' ? pw('rdma', { mode: pw(mode === 'selective' ? 'sel' : 'gbn') }) : pw('tcp');
  const counts = pw('frames', {
    n: v.frames.filter((f) => within(f.t_ns)).length,
    r: v.frames.filter((f) => within(f.t_ns) && f.resend).length,
    d: v.frames.filter((f) => within(f.t_ns) && f.dropped_ns != null).length,
    p: v.pauses.filter((p) => within(p.t_ns) && !p.resume).length,
  });
  const timed = ev.filter((e) => e.t != null);
  const summary = v.story ? pw('summary', { a: ev[0].text, b: ev[1] ? ev[1].text : '', c: ev[2] ? ev[2].text : '' }) : ev[0].text;
  return `<div class="pv-panel" data-view="${id}" data-path="${v.path}" data-mode="${mode}" data-a="${a}" data-b="${end}">
    <h3>${esc(title)} <span class="pv-now mono"></span></h3>
    <p class="pv-summary" data-testid="pv-summary-${id}">${esc(summary)}</p>
    ${viewSvg(v, id, range)}
    <ol class="pv-story">${ev.map((e, i) => `<li data-ev="${i}" data-kind="${e.kind}"${e.t != null ? ` data-t="${e.t}"` : ''}>${esc(e.text)}${e.t != null ? ` <span class="muted">· ${esc(fmtNs(e.t))}</span>` : ''}</li>`).join('')}</ol>
    <p class="muted small">${esc(counts)}${v.frames_truncated ? esc(pw('truncated', { n: v.frames_seen })) : ''}</p>
    ${timed.length ? '' : ''}
  </div>`;
}

/** Renders the packet view of the run `body` (a `/api/run` body) into `el`. */
export async function renderPacketView(el, body, plan, live) {
  stopPacketView();
  document.body.dataset.packets = 'loading';
  el.innerHTML = `<section class="packetview"><h2>${esc(pw('title'))}</h2><p id="pv-status" class="muted">${esc(pw('loading'))}</p></section>`;
  let res;
  try {
    res = await api('/api/packets', body);
  } catch (e) {
    if (!live()) return;
    const s = el.querySelector('#pv-status');
    s.textContent = pw('error', { e: errorText(e) });
    s.classList.add('error');
    document.body.dataset.packets = 'error';
    return;
  }
  if (!live()) return;
  const mode = plan && plan['rdma.retransmission'] === 'selective' ? 'selective' : 'go_back_n';
  const views = [];
  if (res.rdma) views.push({ id: 'rdma', v: res.rdma, mode });
  if (res.tcp) views.push({ id: 'tcp', v: res.tcp, mode: 'tcp' });
  draw(el, views, body, plan, mode, live);
}

function draw(el, views, body, plan, mode, live) {
  stopPacketView();
  const ranges = views.map(({ v }) => shownRange(v));
  const longest = Math.max(1, ...ranges.map(([a, b]) => b - a));
  const other = mode === 'selective' ? 'go_back_n' : 'selective';
  const canCompare = views.some((x) => x.id === 'rdma') && !views.some((x) => x.id === 'alt');
  el.innerHTML = `<section class="packetview" data-testid="packetview"><h2>${esc(pw('title'))}</h2>
    <p class="muted">${esc(pw('lead', { n: 400 }))}</p>
    <div class="controls pv-controls">
      <button type="button" id="pv-play">${esc(pw('play'))}</button>
      <label for="pv-time">${esc(pw('time'))}</label>
      <input id="pv-time" type="range" min="0" max="1000" value="0">
      ${canCompare ? `<button type="button" id="pv-compare">${esc(pw(other === 'selective' ? 'compare' : 'compare_gbn'))}</button>` : ''}
    </div>
    <p class="muted stretch" id="pv-stretch">${esc(pw('stretch', { sim: fmtNs(longest), real: `${(PLAY_MS / 1000).toFixed(0)} s`, x: Math.round((PLAY_MS * 1e6) / longest).toLocaleString(lang() === 'en' ? 'en-US' : 'zh-CN') }))}</p>
    <div class="pv-panels">${views.map(({ id, v, mode: m }, i) => panelHtml(v, id, m, ranges[i])).join('')}</div>
    <p class="muted small">${esc(pw('legend'))}</p></section>`;
  // Frames open in the inspector (contract.md): the frame object as the server sent it.
  el.querySelectorAll('.pv-panel').forEach((panel) => {
    const view = views.find((x) => x.id === panel.dataset.view).v;
    const open = (g) => {
      const f = view.frames[+g.dataset.i];
      document.dispatchEvent(new CustomEvent('rdmalab:inspect', { detail: { frame: f, title: frameLabel(view, f) } }));
    };
    panel.querySelectorAll('g.pv-frame').forEach((g) => {
      g.addEventListener('click', () => open(g));
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(g); } });
    });
  });
  const cmp = el.querySelector('#pv-compare');
  if (cmp) {
    cmp.onclick = async () => {
      cmp.disabled = true;
      const set = [...(body.set || []).filter((s) => !s.startsWith('rdma.retransmission=') && !s.startsWith('workload.paths=')), `rdma.retransmission="${other}"`, 'workload.paths="rdma"'];
      try {
        const alt = await api('/api/packets', { ...body, set });
        if (!live()) return;
        const rest = views.filter((x) => x.id !== 'tcp');
        draw(el, [...rest, { id: 'alt', v: alt.rdma, mode: other }, ...views.filter((x) => x.id === 'tcp')], body, plan, mode, live);
      } catch (e) {
        cmp.disabled = false;
        cmp.textContent = pw('error', { e: errorText(e) });
      }
    };
  }
  const slider = el.querySelector('#pv-time');
  const btn = el.querySelector('#pv-play');
  const p = { raf: 0, ms: PLAY_MS, playing: false, last: null };
  player = p;
  // One cursor for every panel, at the same fraction of each panel's own range.
  const show = () => {
    const frac = p.ms / PLAY_MS;
    slider.value = String(Math.round(frac * 1000));
    btn.textContent = p.playing ? pw('pause_btn') : pw('play');
    el.dataset.frac = String(frac);
    for (const panel of el.querySelectorAll('.pv-panel')) {
      const a = +panel.dataset.a, b = +panel.dataset.b;
      const tn = a + frac * (b - a);
      panel.dataset.t = String(tn);
      panel.querySelector('.pv-now').textContent = `${fmtNs(tn)}`;
      const svg = panel.querySelector('svg.pv');
      const c = svg.querySelector('.pv-cursor');
      const cx = LEFT + (W - LEFT - RIGHT) * frac;
      c.setAttribute('x1', cx); c.setAttribute('x2', cx);
      for (const g of svg.querySelectorAll('[data-t]')) g.classList.toggle('future', +g.dataset.t > tn);
      const ol = panel.querySelector('ol.pv-story');
      let cur = -1;
      ol.querySelectorAll('li[data-t]').forEach((li) => { if (+li.dataset.t <= tn) cur = +li.dataset.ev; });
      ol.querySelectorAll('li').forEach((li) => {
        const on = +li.dataset.ev === cur;
        li.classList.toggle('current', on);
        li.classList.toggle('future', li.dataset.t != null && +li.dataset.t > tn);
        if (on) li.setAttribute('aria-current', 'step'); else li.removeAttribute('aria-current');
      });
    }
  };
  const tick = (now) => {
    if (player !== p) return;
    if (p.playing && p.last != null) {
      p.ms += now - p.last;
      if (p.ms >= PLAY_MS) { p.ms = PLAY_MS; p.playing = false; }
    }
    p.last = now;
    show();
    p.raf = requestAnimationFrame(tick);
  };
  slider.oninput = () => { p.ms = (Number(slider.value) / 1000) * PLAY_MS; p.playing = false; show(); };
  btn.onclick = () => { if (!p.playing && p.ms >= PLAY_MS) p.ms = 0; p.playing = !p.playing; show(); };
  show();
  p.raf = requestAnimationFrame(tick);
  document.body.dataset.packets = 'done';
}
