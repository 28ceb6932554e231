// The server's refusals of a session (crates/sim/src/session/parse.rs: a step the form added
// that the parser rejects, with the field and the allowed range) in the page's language. Each
// of the parser's fixed formats is a pattern with its Chinese form; identifiers (keys, names,
// flags, states) stay as typed. A refusal without a pattern stays English, inside a closed
// disclosure marked `data-untranslated` (pg-results.js), which the browser test fails on.

import { esc, lang } from './i18n.js';
import { origHtml } from './pg-results.js';

const list = (s) => s.replace(/, /g, '、');

/** A TOML type name as the parser writes it (toml's `type_str`). */
const TYPES = { string: '字符串', integer: '整数', float: '小数', boolean: '布尔值', array: '数组', table: '表', datetime: '日期时间' };
const typ = (s) => TYPES[s] ?? s;
/** The kind of object a handle names ("a PD", "an MR", "a QP or a CQ"). */
const KINDS = { 'a PD': 'PD', 'a CQ': 'CQ', 'an MR': 'MR', 'a QP': 'QP', 'a buffer': '缓冲区', 'a completion channel': '完成通道', 'a host': '主机' };
const kind = (s) => s.split(/ or /).map((k) => KINDS[k] ?? k).join(' 或 ');
/** What a message is about: "step 2 (reg_mr)", "the top level", "WR #1 of step 3 (post_send)". */
const what = (s) => s
  .replace(/^the top level$/, '文件顶层')
  .replace(/^WR #(\d+) of (.+)$/, (_, i, w) => `${what(w)} 的第 ${i} 个 WR`)
  .replace(/^step (\d+) \((\w+)\)$/, '第 $1 步（$2）')
  .replace(/^step (\d+)$/, '第 $1 步');

/** [pattern, Chinese] for each refusal format; the first match wins. */
const REFUSALS = [
  [/^step (\d+) \((\w+)\): ([\s\S]+)$/, (m, zh) => { const r = zh(m[3]); return r == null ? null : `第 ${m[1]} 步（${m[2]}）：${r}`; }],
  [/^step (\d+): ([\s\S]+)$/, (m, zh) => { const r = zh(m[2]); return r == null ? null : `第 ${m[1]} 步：${r}`; }],
  [/^WR #(\d+) of ([\s\S]+?): ([\s\S]+)$/, (m, zh) => { const r = zh(m[3]); return r == null ? null : `${m[2]} 的第 ${m[1]} 个 WR：${r}`; }],
  [/^`([\w.]+)` is out of range: allowed (-?\d+)\.\.=(-?\d+)$/, (m) => `\`${m[1]}\` 超出范围：允许 ${m[2]} 到 ${m[3]}`],
  [/^`([\w.]+)` must be more than 0$/, (m) => `\`${m[1]}\` 必须大于 0`],
  [/^`([\w.]+)` is empty$/, (m) => `\`${m[1]}\` 是空的`],
  [/^`([\w.]+)` must be (a string|an integer|true or false|an array|a list of names), found (.+)$/,
    (m) => `\`${m[1]}\` 必须是${{ 'a string': '字符串', 'an integer': '整数', 'true or false': ' true 或 false', 'an array': '数组', 'a list of names': '名字的列表' }[m[2]]}，实际是${typ(m[3])}`],
  [/^(.+) needs the key `(\w+)`$/, (m) => `${what(m[1])}缺少键 \`${m[2]}\``],
  [/^unknown key `([\w.]+)` in (.+); allowed keys: (.+)$/, (m) => `${m[2]} 里没有键 \`${m[1]}\`；允许的键：${list(m[3])}`],
  [/^`(\w+)` must be a duration string such as "10us" or "2ms" \(units: ps, ns, us, µs, ms, s\)$/, (m) => `\`${m[1]}\` 必须是时长字符串，例如 "10us" 或 "2ms"（单位：ps、ns、us、µs、ms、s）`],
  [/^bad duration "(.*)" for `(\w+)`: (.+); write a number and a unit \(ps, ns, us, µs, ms, s\), e\.g\. "10us"$/, (m) => `\`${m[2]}\` 的时长 "${m[1]}" 写得不对：先写数字再写单位（ps、ns、us、µs、ms、s），例如 "10us"`],
  [/^`(\w+)` = "(.*)" is too long: at most (.+) per step$/, (m) => `\`${m[1]}\` = "${m[2]}" 太长：每一步最多 ${m[3]}`],
  [/^the session's simulated time would reach (.+); a session may cover at most (.+)$/, (m) => `会话的仿真时间会到 ${m[1]}；一个会话最多 ${m[2]}`],
  [/^`(\w+)` = "(.*)" is not a valid name: use a letter or _ first, then letters, digits, _, - or \. \(at most (\d+) characters\)$/, (m) => `\`${m[1]}\` = "${m[2]}" 不是合法的名字：以字母或 _ 开头，后面是字母、数字、_、- 或 .（最多 ${m[3]} 个字符）`],
  [/^unknown host `(.+)` in `(\w+)`; the hosts are: (.+)$/, (m) => `\`${m[2]}\` 里的主机 \`${m[1]}\` 不存在；现有主机：${list(m[3])}`],
  [/^unknown handle `(.+)` in `([\w.]+)`: no earlier step defines it with `as` \((.+?) wanted; (.*)\)$/, (m) => `\`${m[2]}\` 里的句柄 \`${m[1]}\` 不存在：前面没有哪一步用 \`as\` 定义过它（这里要 ${kind(m[3])}；${m[4].replace(/^defined so far: /, '已定义：').replace(/, /g, '、')}）`],
  [/^`([\w.]+)` must name (.+), but `(.+)` is (.+) \(defined at line (\d+)\)$/, (m) => `\`${m[1]}\` 要写 ${kind(m[2])}，但 \`${m[3]}\` 是 ${kind(m[4])}（定义在第 ${m[5]} 行）`],
  [/^`([\w.]+)` = `(.+)` lives on host (\S+), but (.+) is on host (\S+)$/, (m) => `\`${m[1]}\` = \`${m[2]}\` 在主机 ${m[3]} 上，而 ${m[4]} 在主机 ${m[5]} 上`],
  [/^handle `(.+)` is already defined at line (\d+); pick another name$/, (m) => `句柄 \`${m[1]}\` 已在第 ${m[2]} 行定义过；换一个名字`],
  [/^`(.+)` is a host name; give the handle another name$/, (m) => `\`${m[1]}\` 是主机名；给句柄另起一个名字`],
  [/^unknown (access flag|send flag|mask bit|QP state|async event|opcode|return code|completion status|completion opcode) `(.+)` in `([\w.]+)`; allowed: (.+?)(?: \(the (\w+) prefix is optional\))?$/,
    (m) => `\`${m[3]}\` 里没有${{ 'access flag': '访问标志', 'send flag': '发送标志', 'mask bit': '掩码位', 'QP state': ' QP 状态', 'async event': '异步事件', opcode: '操作码', 'return code': '返回码', 'completion status': '完成状态', 'completion opcode': '完成操作码' }[m[1]]} \`${m[2]}\`；允许：${list(m[4])}${m[5] ? `（前缀 ${m[5]} 可以省略）` : ''}`],
  [/^`([\w.]+)` holds (\d+) bytes; at most (\d+) are allowed$/, (m) => `\`${m[1]}\` 有 ${m[2]} 字节；最多允许 ${m[3]} 字节`],
  [/^`([\w.]+)` must be pairs of hex digits \(spaces, _ and : may separate them\), e\.g\. "de ad be ef"$/, (m) => `\`${m[1]}\` 必须是成对的十六进制数字（可用空格、_ 或 : 分隔），例如 "de ad be ef"`],
  [/^(\d+) bytes at offset (\d+) run past the end of `(.+)` \((\d+) bytes\)$/, (m) => `从偏移 ${m[2]} 开始的 ${m[1]} 字节超出了 \`${m[3]}\` 的末尾（它只有 ${m[4]} 字节）`],
  [/^(.+) needs `remote` = \{ mr = "peer_mr", offset = 0 \}: the peer's address and rkey, exchanged out of band$/, (m) => `${what(m[1])}需要 \`remote\` = { mr = "peer_mr", offset = 0 }：对方的地址和 rkey，带外交换得到`],
  [/^(.+) takes no `remote` \(it goes to a receive WQE\)$/, (m) => `${what(m[1])}不带 \`remote\`（它进的是接收 WQE）`],
  [/^`sge` has (\d+) entries; at most (\d+)$/, (m) => `\`sge\` 有 ${m[1]} 项；最多 ${m[2]} 项`],
  [/^`wr` must hold 1 to (\d+) WRs$/, (m) => `\`wr\` 必须有 1 到 ${m[1]} 个 WR`],
  [/^host (\S+) would have more than (\d+) QPs$/, (m) => `主机 ${m[1]} 的 QP 会超过 ${m[2]} 个`],
  [/^(.+): the mask has STATE but no `state` says which state to move to$/, (m) => `${what(m[1])}：掩码里有 STATE，却没有 \`state\` 说明要转到哪个状态`],
  [/^the session has (\d+) steps; at most (\d+) are allowed$/, (m) => `会话有 ${m[1]} 步；最多允许 ${m[2]} 步`],
  [/^the session's buffers would total (\d+) bytes; at most (\d+) are allowed$/, (m) => `会话的缓冲区合计会有 ${m[1]} 字节；最多允许 ${m[2]} 字节`],
  [/^unknown call `(.+)`; allowed calls: (.+)$/, (m) => `没有 \`${m[1]}\` 这个调用；允许的调用：${list(m[2])}`],
  [/^step (\d+) has no `call`; allowed calls: (.+)$/, (m) => `第 ${m[1]} 步没有 \`call\`；允许的调用：${list(m[2])}`],
  [/^unknown (profile|topology|QP type) `(.+)` in `(\w+)`; allowed: (.+)$/, (m) => `\`${m[3]}\` 里没有${{ profile: '网卡型号', topology: '拓扑', 'QP type': ' QP 类型' }[m[1]]} \`${m[2]}\`；允许：${list(m[4])}`],
  [/^unknown `retransmission` `(.+)`; allowed: (.+)$/, (m) => `\`retransmission\` 没有 \`${m[1]}\` 这个取值；允许：${list(m[2])}`],
  [/^(.+) must be a table, found (.+)$/, (m) => `${what(m[1])}必须是表，实际是${typ(m[2])}`],
  [/^invalid TOML: ([\s\S]+)$/, (m) => `TOML 写法有误（${m[1]}）`],
  [/^`hosts` has (\d+) names; the (\w+) topology takes (.+)$/, (m) => `\`hosts\` 有 ${m[1]} 个名字；${m[2]} 拓扑要 ${m[3].replace(/^exactly (\d+)$/, '正好 $1 个').replace(/^(\d+) to (\d+)$/, '$1 到 $2 个')}`],
  [/^host `(.+)` is listed twice in `hosts`$/, (m) => `主机 \`${m[1]}\` 在 \`hosts\` 里出现了两次`],
  [/^(.+) needs either `cq` \(one CQ for both queues\) or both `send_cq` and `recv_cq`$/, (m) => `${what(m[1])}要么给 \`cq\`（两个队列共用一个 CQ），要么同时给 \`send_cq\` 和 \`recv_cq\``],
  [/^(.+) needs `buf` \(a buffer\) or `mr` \(an MR\)$/, (m) => `${what(m[1])}需要 \`buf\`（缓冲区）或 \`mr\`（MR）`],
  [/^(.+) names both `buf` and `mr`; give one$/, (m) => `${what(m[1])}同时给了 \`buf\` 和 \`mr\`；只给一个`],
  [/^(\d+) bytes do not fit a buffer of (\d+) bytes$/, (m) => `${m[1]} 字节放不进 ${m[2]} 字节的缓冲区`],
];

/** The Chinese form of a refusal, or null when no pattern matches it (or a part of it). */
export function refusalZh(text) {
  const s = String(text).trim();
  for (const [re, f] of REFUSALS) {
    const m = re.exec(s);
    if (m) return f(m, refusalZh);
  }
  return null;
}

/** A refusal as HTML in the page's language; untranslated English is marked (test failure). */
export function refusalHtml(text) {
  if (lang() === 'en') return esc(text);
  const zh = refusalZh(text);
  return zh == null ? origHtml(text, true) : esc(zh);
}
