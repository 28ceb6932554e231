// The server's step results in the page's language. The session report's texts are English
// and stable (crates/sim/src/session/exec.rs writes them from fixed formats), so each format is
// a pattern here with its Chinese form; a text is cut at "; " and every piece must match one.
// What does not match stays English and is marked `data-untranslated` (the browser test fails
// on any), shown only inside a closed disclosure. The rule texts of errors (quoted man pages,
// kernel checks) are kept as the simulator wrote them, behind that disclosure, under the errno's
// Chinese explanation.

import { esc, lang } from './i18n.js';

/** [pattern, Chinese] for every piece of an ok result, a note, or an abort reason. */
const PIECES = [
  [/^[\w.]+$/, (m) => m[0]],
  [/^(\w+) → (\w+)$/, (m) => m[0]],
  [/^the responder now accepts requests$/, () => '响应方从现在起接受请求'],
  [/^send WQEs may start$/, () => '发送 WQE 可以开始执行'],
  [/^draining started WQEs$/, () => '正在排空已经开始的 WQE'],
  [/^discarded (\d+) send and (\d+) receive WQE\(s\) without completions$/, (m) => `丢弃了 ${m[1]} 个发送 WQE 和 ${m[2]} 个接收 WQE，不产生完成`],
  [/^flushed (\d+) send and (\d+) receive WQE\(s\) with WR_FLUSH_ERR$/, (m) => `以 WR_FLUSH_ERR 冲刷了 ${m[1]} 个发送 WQE 和 ${m[2]} 个接收 WQE`],
  [/^(\d+) bytes at (0x[0-9a-f]+)$/, (m) => `${m[1]} 字节，地址 ${m[2]}`],
  [/^lkey (0x[0-9a-f]+), rkey (0x[0-9a-f]+), (\d+) bytes at (0x[0-9a-f]+), (\d+) page\(s\) pinned$/, (m) => `lkey ${m[1]}，rkey ${m[2]}，${m[3]} 字节，地址 ${m[4]}，锁定了 ${m[5]} 个页`],
  [/^(\S+) with (\d+) entries$/, (m) => `${m[1]}，容量 ${m[2]} 个条目`],
  [/^(RC|UC|UD) QP number (0x[0-9a-f]+) in RESET$/, (m) => `${m[1]} QP，编号 ${m[2]}，处于 RESET`],
  [/^caps granted: (.*)$/, (m) => `实际得到的能力：${m[1]}`],
  [/^(\d+) WR\(s\) posted$/, (m) => `投递了 ${m[1]} 个 WR`],
  [/^ran (.+) of simulated time \((\d+) events\)$/, (m) => `仿真时间前进了 ${m[1]}（${m[2]} 个事件）`],
  [/^now (.+)$/, (m) => `现在是 ${m[1]}`],
  [/^lkey (0x[0-9a-f]+) and rkey (0x[0-9a-f]+) are invalid from now on$/, (m) => `从现在起 lkey ${m[1]} 和 rkey ${m[2]} 失效`],
  [/^QP (0x[0-9a-f]+) destroyed$/, (m) => `已销毁 QP ${m[1]}`],
  [/^(\S+) destroyed$/, (m) => `已销毁 ${m[1]}`],
  [/^(\S+) freed$/, (m) => `已释放 ${m[1]}`],
  [/^(\S+) closed$/, (m) => `已关闭 ${m[1]}`],
  [/^(\d+) send and (\d+) receive WQE\(s\) vanished without completions$/, (m) => `${m[1]} 个发送 WQE 和 ${m[2]} 个接收 WQE 随之消失，不产生完成`],
  [/^(\d+) of its completion\(s\) removed from (.+) unpolled$/, (m) => `它有 ${m[1]} 个完成没被取走，已从 ${m[2].replace(/ and /g, '、')} 中移除`],
  [/^(\d+) event\(s\) acknowledged$/, (m) => `确认了 ${m[1]} 个事件`],
  [/^armed: the next completion raises one event$/, () => '已请求通知：下一个完成会产生一个事件'],
  [/^armed: the next solicited or error completion raises one event$/, () => '已请求通知：下一个 solicited 或出错的完成会产生一个事件'],
  [/^(\S+) \(a file descriptor to read events from\)$/, (m) => `${m[1]}（一个用来读取事件的文件描述符）`],
  [/^wrote (\d+) byte\(s\) at (0x[0-9a-f]+)$/, (m) => `在 ${m[2]} 写入了 ${m[1]} 字节`],
  [/^(.+?) = hex ([0-9a-f ]*) = text "(.*)"$/, (m) => `${m[1]} = 十六进制 ${m[2]} = 文本 "${m[3]}"`],
  [/^event for (\S+) \(not yet acknowledged\)$/, (m) => `${m[1]} 的事件（尚未确认）`],
  [/^IBV_EVENT_(\w+) on (\S+) \(not yet acknowledged\)$/, (m) => `IBV_EVENT_${m[1]}，来自 ${m[2]}（尚未确认）`],
  [/^IBV_EVENT_(\w+) on (\S+) acknowledged$/, (m) => `已确认 IBV_EVENT_${m[1]}（来自 ${m[2]}）`],
  [/^(.+) acknowledged$/, (m) => `已确认 ${m[1]}`],
  [/^(\S+) \(QP (0x[0-9a-f]+) on (\S+)\) ⇄ (\S+) \(QP (0x[0-9a-f]+) on (\S+)\), both RTS(?:, selective repeat with at most (\d+) PSNs in flight)?$/,
    (m) => `${m[1]}（${m[3]} 上的 QP ${m[2]}）⇄ ${m[4]}（${m[6]} 上的 QP ${m[5]}），两端都在 RTS${m[7] ? `，选择性重传，最多 ${m[7]} 个 PSN 在途` : ''}`],
  // query_qp: every word is an attribute key.
  [/^state \w+.*$/, (m) => m[0].replace(': WQEs still in flight', '：仍有 WQE 在途').replace(': drained', '：已排空')],
  [/^(RC|UC|UD) send_cq (\S+) recv_cq (\S+)$/, (m) => m[0]],
  [/^busy-polled for (.+) waiting for (\d+) completion\(s\)$/, (m) => `忙等了 ${m[1]}，等 ${m[2]} 个完成`],
  [/^`(\w+)` is not in the mask, so modify_qp ignores it \(as ibv_modify_qp does\)$/, (m) => `\`${m[1]}\` 不在掩码里，所以 modify_qp 忽略它（ibv_modify_qp 也是这样）`],
  [/^blocked for (.+?) until the wake-up$/, (m) => `阻塞了 ${m[1]}，直到被唤醒`],
  [/^blocked for (.+?) until the wake-up$/, (m) => `阻塞了 ${m[1]}，直到被唤醒`],
  [/^blocked for (.+)$/, (m) => `阻塞了 ${m[1]}`],
  [/^(\w+) (0x[0-9a-f]+) has more than 24 bits$/, (m) => `${m[1]} ${m[2]} 超过了 24 位`],
  [/^stored as (0x[0-9a-f]+)$/, (m) => `存成 ${m[1]}`],
];

/** Chinese for a whole server text, or null when a piece has no pattern. */
export function zhOf(text) {
  const out = [];
  for (const piece of String(text).split('; ')) {
    const hit = PIECES.find(([re]) => re.test(piece));
    if (!hit) return null;
    out.push(hit[1](hit[0].exec(piece)));
  }
  return out.join('；');
}

/**
 * A server text as HTML in the page's language: English pages show it; Chinese pages show its
 * Chinese form, or (no pattern) the English inside a closed disclosure marked untranslated.
 */
export function resultText(text) {
  if (lang() === 'en' || text == null || text === '') return esc(text ?? '');
  const zh = zhOf(text);
  if (zh !== null) return esc(zh);
  return origHtml(text, true);
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

/** "stopped at step N (line L): why" in the page's language. */
export function abortText(text) {
  const m = /^stopped at step (\d+) \(line (\d+)\): ([\s\S]*)$/.exec(String(text));
  if (lang() === 'en' || !m) return resultText(text);
  const why = zhOf(m[3]);
  return `在第 ${esc(m[1])} 步（文件第 ${esc(m[2])} 行）停止${why !== null ? `：${esc(why)}` : `。${origHtml(m[3])}`}`;
}
