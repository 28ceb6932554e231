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

import { t, tFrom, lang, href, esc } from './i18n.js';
import { api, errorText } from './app.js';
import { fmtNs } from './draw.js';
import { courseLabs, labName } from './course.js';
import './inspector.js';

// ---------------------------------------------------------------------------------------------
// Strings

const S = {
  zh: {
    'about': '关于实验台', 'tryit': '可以试试', 'taught': '讲到它的章节：', 'taught.n': '讲到它的 {n} 个章节',
    'profile': 'NIC 型号', 'quick': '快速开始', 'quick.title': '用两端的 PD、CQ、RC QP 和已注册的缓冲区替换当前会话',
    'clear': '清空', 'export': '导出 session.toml', 'export.expect': '导出（含期望）', 'import': '导入文件',
    'paste': '粘贴会话文件', 'paste.label': '会话文件（TOML）', 'paste.go': '导入粘贴的文本', 'share': '复制分享链接',
    'share.done': '链接已复制。', 'share.fail': '无法写入剪贴板：请直接复制地址栏。',
    'steps': '会话步骤', 'add': '添加一步', 'diagram': 'QP 状态机', 'after': '第 {n} 步之后的状态', 'after.none': '步骤之后的状态',
    'ladder': '线路上的包', 'ladder.all': '显示所有步骤的包', 'ladder.step': '第 {n} 步（{call}）',
    'file': '会话文件', 'ref': '所有错误码和完成状态的解释',
    'empty': '会话还是空的：点「快速开始」，或用下面的表单一步步添加。',
    'running': '运行中…', 'ran': '{n} 步 · 仿真时间 {time} · 期望 {p}/{e} 通过', 'ran.pass': '全部通过', 'ran.fail': '有失败：导出时用「导出（含期望）」才能让 rdmalab verbs run 通过',
    'run.error': '会话无法运行', 'aborted': '会话中途停止：{why}',
    'raw': '导入的文件用到了本页表单不支持的写法：按原样运行，只读。', 'raw.edit': '丢弃并新建会话',
    'share.bad': '链接里的会话无法读取：{e}',
    'sel': '选中第 {n} 步', 'del': '删除第 {n} 步', 'pending': '未运行', 'invalid': '文件在这一步出错：{e}',
    'ok': '成功', 'nocompl': '没有完成', 'skipped': '跳过', 'failed': '失败',
    'why': '为什么？', 'what': '含义', 'cause': '常见原因', 'check': '检查什么',
    'exp.failed': '期望 {what}：应为 {exp}，实际 {got}',
    'mask.missing': '掩码缺少必需的属性：{a}', 'mask.extra': '这个转换不接受的属性：{a}', 'mask.illegal': '{from} → {to} 不是合法的转换',
    'model.error': 'verbs 模型无法载入（{e}）：状态机和 modify_qp 的属性列表暂时不可用，刷新页面再试。',
    'no.frames': '这一步没有包上线。', 'no.wrframes': '这些 WR 还没有产生任何包：QP 可能还不在 RTS，或者还没让时间流逝（加一个带等待的 poll_cq 或 run）。',
    'ladder.view.step': '第 {n} 步（{call}）期间线路上的包', 'ladder.view.wr': '第 {n} 步投递的 WR（wr_id {ids}）的全部包，来自它及之后的每一步',
    'ladder.view.all': '所有步骤的包', 'ladder.view.none': '选中一步，看它的包', 'no.frames.all': '整个会话里还没有包上线。',
    'add.pick': '要添加的调用', 'added': '第 {n} 步（{call}）：{res}', 'deleted': '已删除第 {n} 步。',
    'f.refused': '没有添加，服务器拒绝了这一步：{e}', 'del.refused': '第 {n} 步没有删除，删掉它会让会话无法运行：{e}',
    'f.int': '{f} 要填一个整数（十进制，或 0x 开头的十六进制），现在是“{e}”', 'f.range': '{f} 必须在 {min} 到 {max} 之间，现在是 {e}',
    'f.dur': '{f} 要写成数字加单位（ps、ns、us、ms 或 s），例如 10us；现在是“{e}”', 'f.durmax': '{f} 最长 {max}，现在是 {e}', 'f.durzero': '{f} 必须大于 0',
    'f.name': '{f} 要以字母或下划线开头，只含字母、数字和 _ . -，最多 32 个字符；现在是“{e}”', 'f.need': '先选一个 {f}（还没有的话，先用别的表单创建它）', 'no.qp': '还没有 QP。', 'frames.more': '另有 {n} 个包未画出',
    'qps': 'QP', 'cqs': 'CQ', 'mrs': 'MR', 'sq': 'SQ（已投递未完成）', 'rq': 'RQ（已投递未消耗）', 'entries': '待 poll 的 CQE', 'empty.q': '空',
    'col.name': '名字', 'col.host': '主机', 'col.qpn': 'QPN', 'col.type': '类型', 'col.state': '状态', 'col.cqe': '容量', 'col.len': '长度', 'col.access': '权限',
    'edge.pick': '把鼠标移到一条箭头上（或用 Tab 聚焦状态图，再按方向键），看这个转换需要哪些属性。', 'edge.title': '{from} → {to}（{type}）',
    'edge.keys': '键盘：用 Tab 聚焦状态图，方向键在当前状态的合法转换之间移动，Enter 或空格选中。',
    'edge.move': '{from} → {to}（第 {k} 个，共 {n} 个）：按 Enter 选中',
    'edge.sel': '已选中 {from} → {to}。必需：{req}；可选：{opt}', 'edge.unsel': '已取消选中 {from} → {to}。',
    'lt.summary': '数据表', 'lt.caption': '线路上的包：{view}', 'lt.scroll': '线路上的包：数据表',
    'lt.time': '时间', 'lt.route': '从 → 到', 'lt.opcode': '操作码', 'lt.len': '长度（字节）', 'lt.dropped': '被丢弃',
    'edge.req': '必需：', 'edge.opt': '可选：', 'edge.none': '只需 STATE', 'edge.nothing': '无', 'edge.use': '在 modify_qp 表单里用这个转换',
    'edge.cur': '当前状态', 'diagram.label': 'QP 状态机：{qp} 当前为 {state}',
    'f.host': '主机', 'f.as': '名字（as）', 'f.len': '长度（字节）', 'f.text': '初始内容（文本，可空）', 'f.pd': 'PD', 'f.buf': '缓冲区',
    'f.access': '访问权限', 'f.cqe': 'CQE 个数', 'f.type': '类型', 'f.cq': 'CQ（收发共用）', 'f.qp': 'QP', 'f.target': '目标状态',
    'f.wr_id': 'wr_id', 'f.opcode': '操作码', 'f.flags': '标志', 'f.sge': '本地 SGE：MR', 'f.offset': '偏移', 'f.sgelen': '长度（空 = 到 MR 末尾）',
    'f.remote': '远端 MR（rkey）', 'f.roffset': '远端偏移', 'f.imm': '立即数', 'f.compare': 'compare', 'f.swap': 'swap', 'f.addv': 'add',
    'f.ud': 'UD 目的 QP', 'f.qkey': 'Q_Key', 'f.max': '最多取几个', 'f.wait': '忙等最长（如 50us，空 = 不等）', 'f.for': '时长（如 10us）',
    'f.maxwr': 'max_send_wr / max_recv_wr', 'f.none': '（无）', 'f.add': '添加', 'f.bad': '{f} 不对：{e}',
    'f.cur': '{qp} 现在是 {state}。', 'f.legal': '{from} → {to}：合法。必需：{req}；可选：{opt}', 'f.illegal': '{from} → {to} 不是合法转换：添加后会得到 EINVAL。',
    'f.attrs.other': '其它属性（这个转换不接受，勾上就会 EINVAL）', 'f.tag.req': '必需', 'f.tag.opt': '可选',
    'call.alloc_pd': '分配 PD（ibv_alloc_pd）', 'call.alloc': '分配缓冲区（malloc）', 'call.reg_mr': '注册内存（ibv_reg_mr）',
    'call.create_cq': '创建 CQ（ibv_create_cq）', 'call.create_qp': '创建 QP（ibv_create_qp）', 'call.modify_qp': '改 QP 状态（ibv_modify_qp）',
    'call.post_send': '投递发送 WR（ibv_post_send）', 'call.post_recv': '投递接收 WR（ibv_post_recv）', 'call.poll_cq': '取完成（ibv_poll_cq）',
    'call.run': '让时间流逝（run）',
    'exported': '已导出 {f}。', 'exported.skip': '已导出 {f}；注意：第 {n} 步没有运行（skipped/failed），这个文件不会通过。',
    'expect.nowait': '没有固定：poll 的 wait 目标会被期望改变',
    'imported': '已导入 {n} 步。', 'quick.done': '已建好两端：现在用 modify_qp 把 QP 推到 RTS。',
  },
  en: {
    'about': 'About the playground', 'tryit': 'What to try', 'taught': 'Taught in:', 'taught.n': 'The {n} chapters that teach it',
    'profile': 'NIC profile', 'quick': 'Quick start', 'quick.title': 'Replace the session with a PD, a CQ, an RC QP and a registered buffer on each host',
    'clear': 'Clear', 'export': 'Export session.toml', 'export.expect': 'Export with expectations', 'import': 'Import a file',
    'paste': 'Paste a session file', 'paste.label': 'Session file (TOML)', 'paste.go': 'Import the pasted text', 'share': 'Copy the share link',
    'share.done': 'Link copied.', 'share.fail': 'Could not write the clipboard: copy the address bar instead.',
    'steps': 'Session steps', 'add': 'Add a step', 'diagram': 'QP state machine', 'after': 'State after step {n}', 'after.none': 'State after a step',
    'ladder': 'Packets on the wire', 'ladder.all': 'show the packets of every step', 'ladder.step': 'step {n} ({call})',
    'file': 'Session file', 'ref': 'Every errno and completion status explained',
    'empty': 'The session is empty: press Quick start, or add steps one by one with the forms below.',
    'running': 'Running…', 'ran': '{n} steps · simulated time {time} · expectations {p}/{e} passed', 'ran.pass': 'all pass', 'ran.fail': 'some fail: export with expectations to get a file rdmalab verbs run passes',
    'run.error': 'The session cannot run', 'aborted': 'The session stopped early: {why}',
    'raw': 'The imported file uses things the forms here do not edit: it runs as is, read-only.', 'raw.edit': 'Discard it and start a new session',
    'share.bad': 'The session in the link cannot be read: {e}',
    'sel': 'select step {n}', 'del': 'delete step {n}', 'pending': 'not run', 'invalid': 'the file breaks here: {e}',
    'ok': 'ok', 'nocompl': 'no completion', 'skipped': 'skipped', 'failed': 'failed',
    'why': 'Why?', 'what': 'What it means', 'cause': 'Usual cause', 'check': 'What to check',
    'exp.failed': 'expected {what}: {exp}, got {got}',
    'mask.missing': 'the mask lacks required attributes: {a}', 'mask.extra': 'attributes this transition does not accept: {a}', 'mask.illegal': '{from} → {to} is not a legal transition',
    'model.error': 'The verbs model could not be loaded ({e}): the state machine and modify_qp\'s attribute list are unavailable; reload the page to try again.',
    'no.frames': 'No packet went on the wire during this step.', 'no.wrframes': 'These WRs have not put any packet on the wire yet: the QP may not be in RTS, or no time has passed (add a poll_cq with a wait, or a run).',
    'ladder.view.step': 'Packets on the wire during step {n} ({call})', 'ladder.view.wr': 'Every packet of the WRs posted in step {n} (wr_id {ids}), from that step and every later one',
    'ladder.view.all': 'Packets of every step', 'ladder.view.none': 'Select a step to see its packets', 'no.frames.all': 'No packet has gone on the wire in this session yet.',
    'add.pick': 'Call to add', 'added': 'Step {n} ({call}): {res}', 'deleted': 'Step {n} deleted.',
    'f.refused': 'Not added, the server refused this step: {e}', 'del.refused': 'Step {n} was not deleted: the session cannot run without it: {e}',
    'f.int': '{f} must be an integer (decimal, or hexadecimal starting with 0x); got "{e}"', 'f.range': '{f} must be between {min} and {max}; got {e}',
    'f.dur': '{f} must be a number and a unit (ps, ns, us, ms or s), e.g. 10us; got "{e}"', 'f.durmax': '{f} can be at most {max}; got {e}', 'f.durzero': '{f} must be more than 0',
    'f.name': '{f} must start with a letter or _ and hold only letters, digits, _ . - (at most 32 characters); got "{e}"', 'f.need': 'pick a {f} first (if there is none yet, create one with another form)', 'no.qp': 'No QP yet.', 'frames.more': '{n} more packets not drawn',
    'qps': 'QPs', 'cqs': 'CQs', 'mrs': 'MRs', 'sq': 'SQ (posted, not completed)', 'rq': 'RQ (posted, not consumed)', 'entries': 'CQEs waiting to be polled', 'empty.q': 'empty',
    'col.name': 'name', 'col.host': 'host', 'col.qpn': 'QPN', 'col.type': 'type', 'col.state': 'state', 'col.cqe': 'capacity', 'col.len': 'length', 'col.access': 'access',
    'edge.pick': 'Hover over an arrow (or tab to the diagram and use the arrow keys) to see what that transition needs.', 'edge.title': '{from} → {to} ({type})',
    'edge.keys': 'Keyboard: tab to the diagram; the arrow keys move between the legal transitions from the current state, Enter or Space selects one.',
    'edge.move': '{from} → {to} ({k} of {n}): Enter selects it',
    'edge.sel': 'Selected {from} → {to}. Required: {req}; optional: {opt}', 'edge.unsel': 'Deselected {from} → {to}.',
    'lt.summary': 'Data table', 'lt.caption': 'Packets on the wire: {view}', 'lt.scroll': 'Packets on the wire: data table',
    'lt.time': 'time', 'lt.route': 'from → to', 'lt.opcode': 'opcode', 'lt.len': 'length (bytes)', 'lt.dropped': 'dropped',
    'edge.req': 'required:', 'edge.opt': 'optional:', 'edge.none': 'STATE only', 'edge.nothing': 'none', 'edge.use': 'Use this transition in the modify_qp form',
    'edge.cur': 'current state', 'diagram.label': 'QP state machine: {qp} is in {state}',
    'f.host': 'host', 'f.as': 'name (as)', 'f.len': 'length (bytes)', 'f.text': 'initial text (optional)', 'f.pd': 'PD', 'f.buf': 'buffer',
    'f.access': 'access', 'f.cqe': 'CQ entries', 'f.type': 'type', 'f.cq': 'CQ (both queues)', 'f.qp': 'QP', 'f.target': 'target state',
    'f.wr_id': 'wr_id', 'f.opcode': 'opcode', 'f.flags': 'flags', 'f.sge': 'local SGE: MR', 'f.offset': 'offset', 'f.sgelen': 'length (empty = to the MR\'s end)',
    'f.remote': 'remote MR (rkey)', 'f.roffset': 'remote offset', 'f.imm': 'immediate', 'f.compare': 'compare', 'f.swap': 'swap', 'f.addv': 'add',
    'f.ud': 'UD destination QP', 'f.qkey': 'Q_Key', 'f.max': 'at most', 'f.wait': 'busy-poll up to (e.g. 50us; empty = no wait)', 'f.for': 'how long (e.g. 10us)',
    'f.maxwr': 'max_send_wr / max_recv_wr', 'f.none': '(none)', 'f.add': 'Add', 'f.bad': '{f} is wrong: {e}',
    'f.cur': '{qp} is in {state} now.', 'f.legal': '{from} → {to}: legal. Required: {req}; optional: {opt}', 'f.illegal': '{from} → {to} is not a legal transition: adding it gives EINVAL.',
    'f.attrs.other': 'other attributes (this transition refuses them: ticking one gives EINVAL)', 'f.tag.req': 'required', 'f.tag.opt': 'optional',
    'call.alloc_pd': 'Allocate a PD (ibv_alloc_pd)', 'call.alloc': 'Allocate a buffer (malloc)', 'call.reg_mr': 'Register memory (ibv_reg_mr)',
    'call.create_cq': 'Create a CQ (ibv_create_cq)', 'call.create_qp': 'Create a QP (ibv_create_qp)', 'call.modify_qp': 'Change the QP state (ibv_modify_qp)',
    'call.post_send': 'Post a send WR (ibv_post_send)', 'call.post_recv': 'Post a receive WR (ibv_post_recv)', 'call.poll_cq': 'Poll completions (ibv_poll_cq)',
    'call.run': 'Let time pass (run)',
    'exported': 'Exported {f}.', 'exported.skip': 'Exported {f}; note: step {n} did not run (skipped/failed), so this file will not pass.',
    'expect.nowait': 'not pinned: expectations would change the poll\'s wait target',
    'imported': 'Imported {n} steps.', 'quick.done': 'Both ends are set up: now walk the QPs to RTS with modify_qp.',
  },
};

/** A string of this page, `{name}` filled from `vars`; unknown keys fall back to i18n.js. */
const tt = (key, vars) => tFrom(S, key, vars);

// ---------------------------------------------------------------------------------------------
// Explanations of every completion status and errno: [what it means, usual cause, what to check].

const WC_EXPLAIN = {
  SUCCESS: {
    zh: ['操作做完了：数据已按 WR 的要求放到位。', '—', '—'],
    en: ['The operation finished: the data is where the WR said it should go.', '—', '—'],
  },
  LOC_LEN_ERR: {
    zh: ['本地长度错误：消息的长度和本地的缓冲区对不上。', '接收端：进来的消息比接收 WR 的 SGE 总长还长；发送端：消息超过 QP 或端口允许的大小（例如 UD 数据报大于路径 MTU）。', '接收 WR 的 SGE 长度是否够装对端发来的消息；UD 的负载是否不超过 MTU。'],
    en: ['Local length error: the message length does not fit the local buffers.', 'On a receive: the incoming message is longer than the receive WR\'s SGEs add up to. On a send: the message is larger than the QP or port allows (a UD datagram above the path MTU).', 'The receive WR\'s SGE lengths against what the peer sends; UD payloads against the MTU.'],
  },
  LOC_QP_OP_ERR: {
    zh: ['本地 QP 操作错误：这个 WR 本身有问题，或与 QP 不相容。', 'SGE 太多、操作码不适合这种 QP；soft-RoCE（rxe）把坏的 lkey 也报成这个。', 'WR 的字段和 QP 的能力（max_send_sge 等）、QP 类型；在 rxe 上也查 lkey。'],
    en: ['Local QP operation error: the WR itself is malformed or does not suit this QP.', 'Too many SGEs, an opcode the QP type does not take; soft-RoCE (rxe) also reports a bad lkey this way.', 'The WR\'s fields against the QP\'s caps (max_send_sge …) and type; on rxe, the lkeys too.'],
  },
  LOC_EEC_OP_ERR: {
    zh: ['本地 EE 上下文操作错误：只属于 RD（可靠数据报）传输。', 'RoCE 网卡不实现 RD，正常情况下见不到。', '如果真的出现，说明驱动或固件有问题。'],
    en: ['Local EE context operation error: belongs to the RD (reliable datagram) transport only.', 'RoCE NICs do not implement RD, so you should never see it.', 'If it shows up, suspect the driver or firmware.'],
  },
  LOC_PROT_ERR: {
    zh: ['本地保护错误：网卡按 SGE 访问本地内存时被拒绝。', 'lkey 不对，偏移加长度超出 MR，MR 和 QP 不在同一个 PD，或者网卡要写的 MR（接收、READ 的目的地）没有 LOCAL_WRITE。', 'SGE 的 lkey、offset+len 是否在 MR 内、MR 的 PD、MR 的 LOCAL_WRITE。'],
    en: ['Local protection error: the NIC was refused access to local memory named by an SGE.', 'A wrong lkey, offset + length past the MR, an MR from another PD than the QP\'s, or no LOCAL_WRITE on memory the NIC must write (a receive, a READ\'s destination).', 'The SGE\'s lkey, offset + len within the MR, the MR\'s PD, LOCAL_WRITE.'],
  },
  WR_FLUSH_ERR: {
    zh: ['WR 被冲刷：它根本没有执行。', 'QP 进了 ERR（前面某个 WR 出错，或者你把它改到 ERR），之后所有未完成和新投递的 WR 都以这个状态完成。', '往前找第一个出错的完成，那才是真正的原因；要恢复，把 QP 改回 RESET 再重新建连。'],
    en: ['Work request flushed: it never ran.', 'The QP went to ERR (an earlier WR failed, or you moved it there); every outstanding and every newly posted WR then completes with this status.', 'Look for the FIRST error completion before it: that is the real failure. To recover, move the QP to RESET and bring it up again.'],
  },
  MW_BIND_ERR: {
    zh: ['内存窗口绑定错误。', '绑定内存窗口（MW）时权限不符，或底层 MR 没有 MW_BIND。', 'MR 的 MW_BIND 权限和窗口的访问标志。'],
    en: ['Memory window bind error.', 'Binding a memory window failed: the access asked for does not fit, or the underlying MR lacks MW_BIND.', 'The MR\'s MW_BIND access and the window\'s access flags.'],
  },
  BAD_RESP_ERR: {
    zh: ['响应错误：请求方收到了意料之外的响应。', '对端回了不该有的操作码或格式不对的包，通常是协议实现问题，或 dest_qp 指向了错误的 QP。', '两端的 QPN/PSN 配对，对端的实现或固件。'],
    en: ['Bad response: the requester got a response it did not expect.', 'The responder sent a wrong opcode or a malformed packet: a protocol bug, or dest_qp points at the wrong QP.', 'The QPN/PSN pairing of the two ends, the peer\'s implementation or firmware.'],
  },
  LOC_ACCESS_ERR: {
    zh: ['本地访问错误：网卡把返回的数据写回本地内存时被拒绝。', 'RDMA READ 或原子操作的返回数据要写入的本地 MR 没有 LOCAL_WRITE，或范围不够。', '本地 MR 的 LOCAL_WRITE 和长度。'],
    en: ['Local access error: the NIC was refused when writing returned data into local memory.', 'The local MR that receives an RDMA READ\'s or an atomic\'s result lacks LOCAL_WRITE or is too short.', 'The local MR\'s LOCAL_WRITE and its length.'],
  },
  REM_INV_REQ_ERR: {
    zh: ['远端无效请求：对端认为这个请求本身不合法。', '消息比对端的接收缓冲区大，原子操作地址没有 8 字节对齐，对端 QP 不支持这种操作（例如 max_dest_rd_atomic 为 0 时发 READ）。', '对端接收 WR 的长度、原子操作的对齐、对端的 max_dest_rd_atomic。'],
    en: ['Remote invalid request: the responder judged the request itself invalid.', 'A message larger than the peer\'s receive buffer, an atomic not 8-byte aligned, an operation the peer QP does not accept (a READ when its max_dest_rd_atomic is 0).', 'The peer\'s receive WR length, the atomic\'s alignment, the peer\'s max_dest_rd_atomic.'],
  },
  REM_ACCESS_ERR: {
    zh: ['远端访问错误：对端拒绝了对它内存的访问。', 'rkey 不对，远端地址加长度超出对端 MR，或者对端的 MR 或 QP 没有打开 REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC。', 'remote 的 rkey 和 offset、对端 MR 的访问权限、对端 QP 在 RESET→INIT 时给的 access。'],
    en: ['Remote access error: the responder refused access to its memory.', 'A wrong rkey, a remote address + length past the peer\'s MR, or REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC missing on the peer\'s MR or QP.', 'The remote rkey and offset, the peer MR\'s access flags, the access the peer QP got at RESET→INIT.'],
  },
  REM_OP_ERR: {
    zh: ['远端操作错误：对端因为自己那边的原因没能完成操作。', '对端接收 WR 的 SGE 有问题（例如 lkey 属于别的 PD），或对端 QP 出错。', '对端的接收 WR 和它自己的完成队列。'],
    en: ['Remote operational error: the responder could not finish the operation for a reason on its side.', 'The peer\'s receive WR has a bad SGE (an lkey from another PD), or the peer\'s QP hit an error.', 'The peer\'s receive WR and its own completions.'],
  },
  RETRY_EXC_ERR: {
    zh: ['传输重试次数用尽：等 ACK 超时，重发 retry_cnt 次后仍然没有回应。', '对端不可达、对端 QP 不在 RTR/RTS 或被重置、dest_qp 或 av 填错、链路丢包严重或断开。', '对端 QP 的状态、dest_qp 和 av、PSN 设置、timeout 和 retry_cnt；网卡计数器 local_ack_timeout_err。'],
    en: ['Transport retry counter exceeded: no ACK came after the ACK timeout, even after retry_cnt resends.', 'The peer is unreachable, its QP is not in RTR/RTS or was reset, dest_qp or av is wrong, or the link loses frames or is down.', 'The peer QP\'s state, dest_qp and av, the PSNs, timeout and retry_cnt; the NIC counter local_ack_timeout_err.'],
  },
  RNR_RETRY_EXC_ERR: {
    zh: ['RNR 重试次数用尽：对端一直"没准备好"。', 'SEND（或带立即数的 WRITE）到达时对端没有投递接收 WR，它回 RNR NAK，次数超过了 rnr_retry。', '让对端先 post_recv 再发送；rnr_retry（7 表示无限重试）和 min_rnr_timer。'],
    en: ['RNR retry counter exceeded: the peer kept saying "receiver not ready".', 'A SEND (or WRITE with immediate) arrived while the peer had no receive WR posted; it answered RNR NAK more often than rnr_retry allows.', 'Have the peer post_recv before you send; rnr_retry (7 = retry forever) and min_rnr_timer.'],
  },
  LOC_RDD_VIOL_ERR: {
    zh: ['本地 RDD 违例：只属于 RD 传输。', 'RoCE 不实现 RD，正常见不到。', '出现的话查驱动。'],
    en: ['Local RDD violation: RD transport only.', 'RoCE has no RD, so it should never appear.', 'If it does, check the driver.'],
  },
  REM_INV_RD_REQ_ERR: {
    zh: ['远端无效 RD 请求：只属于 RD 传输。', 'RoCE 不实现 RD，正常见不到。', '出现的话查驱动。'],
    en: ['Remote invalid RD request: RD transport only.', 'RoCE has no RD, so it should never appear.', 'If it does, check the driver.'],
  },
  REM_ABORT_ERR: {
    zh: ['远端中止：对端在操作进行中放弃了它。', '对端 QP 在消息传到一半时出错或被销毁。', '对端那一侧的完成和 QP 状态。'],
    en: ['Remote aborted: the responder gave up the operation half way.', 'The peer\'s QP failed or was destroyed in the middle of the message.', 'The peer side\'s completions and QP state.'],
  },
  INV_EECN_ERR: {
    zh: ['无效的 EE 上下文号：只属于 RD 传输。', 'RoCE 不实现 RD。', '—'],
    en: ['Invalid EE context number: RD transport only.', 'RoCE has no RD.', '—'],
  },
  INV_EEC_STATE_ERR: {
    zh: ['无效的 EE 上下文状态：只属于 RD 传输。', 'RoCE 不实现 RD。', '—'],
    en: ['Invalid EE context state: RD transport only.', 'RoCE has no RD.', '—'],
  },
  FATAL_ERR: {
    zh: ['致命错误：设备或端口出了严重故障。', '网卡硬件或固件故障，通常所有 QP 都受影响。', 'dmesg、设备是否需要复位。'],
    en: ['Fatal error: the device or port hit a catastrophic failure.', 'A NIC hardware or firmware fault; usually every QP is hit.', 'dmesg; whether the device needs a reset.'],
  },
  RESP_TIMEOUT_ERR: {
    zh: ['响应超时：只在 RD 等少数情况下使用。', 'RoCE 的 RC 用 RETRY_EXC_ERR 表示超时，几乎见不到这个。', '—'],
    en: ['Response timeout: used by RD and a few providers only.', 'RoCE\'s RC reports timeouts as RETRY_EXC_ERR, so this is rare.', '—'],
  },
  GENERAL_ERR: {
    zh: ['一般错误：驱动无法把故障归到某个具体状态。', '固件报告了一个没有对应 ibv_wc_status 的错误（例如 mlx5 的一些 syndrome）。', '驱动日志里的厂商 syndrome。'],
    en: ['General error: the provider could not map the failure to a specific status.', 'The firmware reported an error with no ibv_wc_status of its own (some mlx5 syndromes).', 'The vendor syndrome in the provider\'s log.'],
  },
};

const ERRNO_EXPLAIN = {
  EINVAL: {
    zh: ['参数无效：这次调用违反了某条规则，什么都没改。', '非法的状态转换、掩码缺了必需的位或多了不接受的位、数值越界（timeout > 31、retry_cnt > 7）、QP 状态不允许投递、QP 类型不支持这个操作码、MR 要 REMOTE_WRITE 却没给 LOCAL_WRITE。', '看仿真器给出的规则原文；modify_qp 的话，把掩码和状态机里这条箭头的必需/可选属性比一比。'],
    en: ['Invalid argument: the call broke a rule and changed nothing.', 'An illegal state transition, a mask missing a required bit or carrying one the transition refuses, a value out of range (timeout > 31, retry_cnt > 7), a post the QP\'s state does not allow, an opcode the QP type does not take, REMOTE_WRITE on an MR without LOCAL_WRITE.', 'Read the rule the simulator names; for modify_qp, compare the mask with the required/optional attributes of that arrow in the state machine.'],
  },
  ENOMEM: {
    zh: ['内存不足；对 post_send/post_recv 来说是"队列满了"。', '未完成的 WR 超过了 max_send_wr / max_recv_wr，mlx5 上内联数据超过 max_inline_data；创建对象时资源耗尽。', '先 poll 完成腾出位置；队列深度；max_inline_data。'],
    en: ['Out of memory; for post_send/post_recv it means "the queue is full".', 'More outstanding WRs than max_send_wr / max_recv_wr, inline data above max_inline_data on mlx5, or resources ran out while creating an object.', 'Poll completions to free slots; the queue depths; max_inline_data.'],
  },
  EPERM: {
    zh: ['不允许的操作：进程没有这个权限。', '锁定内存超过 ulimit -l 而又没有 CAP_IPC_LOCK，或要创建需要特权的 QP。', 'ulimit -l、进程的 capability。'],
    en: ['Operation not permitted: the process lacks the privilege.', 'Pinning more memory than ulimit -l allows without CAP_IPC_LOCK, or a QP kind that needs privileges.', 'ulimit -l and the process\'s capabilities.'],
  },
  EFAULT: {
    zh: ['地址错误：缓冲区没有（完整地）映射在进程里。', 'reg_mr 的偏移加长度超出了分配的缓冲区。', '地址和长度是否都在缓冲区内。'],
    en: ['Bad address: the buffer is not (wholly) mapped in the process.', 'reg_mr with offset + length past the end of the allocation.', 'The address and length against the buffer.'],
  },
  EAGAIN: {
    zh: ['暂时不可用：稍后再试。', '资源暂时用光（有些驱动在队列暂满时这样报），或内核此刻拿不到资源。', '处理掉一些完成后重试。'],
    en: ['Try again: the resource is temporarily unavailable.', 'A resource ran out for now (some providers report a full queue this way), or the kernel could not get it at this moment.', 'Drain some completions and retry.'],
  },
  ENOENT: {
    zh: ['对象不存在。', '句柄从没创建成功、已经销毁，或属于别的设备。', '创建它的那一步是否成功。'],
    en: ['No such object.', 'The handle was never created, was destroyed, or belongs to another device.', 'Whether the step that creates it succeeded.'],
  },
  EBUSY: {
    zh: ['对象还在被使用。', '销毁还挂着 MR 或 QP 的 PD、还挂着 QP 的 CQ。', '按创建的相反顺序销毁。'],
    en: ['The object is still in use.', 'Destroying a PD that still has MRs or QPs, or a CQ that QPs still use.', 'Destroy in the reverse order of creation.'],
  },
  ENOSPC: {
    zh: ['没有空间。', 'rxe 的响应方在消息装不进接收缓冲区时这样报。', '接收缓冲区的大小。'],
    en: ['No space left.', 'rxe\'s responder when a message does not fit the receive buffer.', 'The receive buffer\'s size.'],
  },
  EOPNOTSUPP: {
    zh: ['不支持：这个设备或驱动不做这件事。', '操作码、标志或属性不在这个 NIC 型号的能力里。', '换个 NIC 型号试试；ibv_query_device 报告的能力。'],
    en: ['Not supported: this device or provider does not do it.', 'An opcode, flag or attribute outside this NIC profile\'s capabilities.', 'Try another NIC profile; the capabilities ibv_query_device reports.'],
  },
};

// ---------------------------------------------------------------------------------------------
// Constants of the session file format (scenarios/verbs/README.md). The states, the transitions,
// the attributes and the profiles are not here: they come from GET /api/verbs/model.

const MR_ACCESS = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'];
const QP_ACCESS = ['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'];
const OPCODES = ['SEND', 'SEND_WITH_IMM', 'RDMA_WRITE', 'RDMA_WRITE_WITH_IMM', 'RDMA_READ', 'ATOMIC_CMP_AND_SWP', 'ATOMIC_FETCH_AND_ADD'];
const SEND_FLAGS = ['SIGNALED', 'FENCE', 'SOLICITED', 'INLINE'];
const MTUS = [256, 512, 1024, 2048, 4096];
const QKEY = 0x11111111;
// modify_qp: mask bit → the key carrying its value, the input kind, the default. ALT_PATH and
// CAP are bits with no value in the session file.
const ATTR_KEYS = {
  STATE: ['state', 'state'], CUR_STATE: ['cur_state', 'state'], EN_SQD_ASYNC_NOTIFY: ['en_sqd_async_notify', 'bool', false],
  ACCESS_FLAGS: ['access', 'access', ['REMOTE_WRITE', 'REMOTE_READ']], PKEY_INDEX: ['pkey_index', 'int', 0], PORT: ['port', 'int', 1],
  QKEY: ['qkey', 'int', QKEY], AV: ['av', 'host'], PATH_MTU: ['path_mtu', 'mtu', 1024], TIMEOUT: ['timeout', 'int', 14],
  RETRY_CNT: ['retry_cnt', 'int', 7], RNR_RETRY: ['rnr_retry', 'int', 7], RQ_PSN: ['rq_psn', 'int'], MAX_QP_RD_ATOMIC: ['max_rd_atomic', 'int', 4],
  MIN_RNR_TIMER: ['min_rnr_timer', 'int', 12], SQ_PSN: ['sq_psn', 'int'], MAX_DEST_RD_ATOMIC: ['max_dest_rd_atomic', 'int', 4],
  PATH_MIG_STATE: ['path_mig_state', 'int', 0], DEST_QPN: ['dest_qp', 'qp'],
};
const BRINGUP = { RESET: 'INIT', INIT: 'RTR', RTR: 'RTS' };
const RANK = { RESET: 0, INIT: 1, RTR: 2, RTS: 3 };
const bare = (n) => String(n ?? '').replace(/^IBV_(QP|WC|WR|ACCESS|SEND)_/, '');

/** The quick start: a PD, a CQ, an RC QP and a registered buffer on each of a and b. */
export const QUICK_START = [
  { call: 'alloc_pd', host: 'a', as: 'pd_a' },
  { call: 'alloc_pd', host: 'b', as: 'pd_b' },
  { call: 'create_cq', host: 'a', as: 'cq_a', cqe: 16 },
  { call: 'create_cq', host: 'b', as: 'cq_b', cqe: 16 },
  { call: 'create_qp', pd: 'pd_a', as: 'qp_a', type: 'RC', cq: 'cq_a' },
  { call: 'create_qp', pd: 'pd_b', as: 'qp_b', type: 'RC', cq: 'cq_b' },
  { call: 'alloc', host: 'a', as: 'buf_a', len: 4096, text: 'hello from a' },
  { call: 'reg_mr', pd: 'pd_a', buf: 'buf_a', as: 'mr_a', access: ['LOCAL_WRITE'] },
  { call: 'alloc', host: 'b', as: 'buf_b', len: 4096, text: 'b keeps this table' },
  { call: 'reg_mr', pd: 'pd_b', buf: 'buf_b', as: 'mr_b', access: ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ'] },
];

/** A new, empty session. */
export function emptySession(profile = 'mlx5') {
  return { profile, seed: 1, hosts: ['a', 'b'], fabric: { topology: 'back_to_back' }, extra: {}, steps: [], raw: null };
}

// ---------------------------------------------------------------------------------------------
// TOML: a writer for any value the session holds, and a reader for the subset of TOML that
// session files use (comments, bare/quoted/dotted keys, basic and literal strings, integers,
// floats, booleans, arrays, inline tables, [tables] and [[arrays of tables]]).

/** A float read from TOML, kept apart from integers so `loss = 0.0` is written back as a float. */
export class TomlFloat {
  constructor(v) { this.v = v; }
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlString(s) {
  return `"${String(s).replace(/[\\"\u0000-\u001f\u007f]/g, (c) => ({
    '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f',
  }[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}

const tomlKey = (k) => (BARE_KEY.test(k) ? k : tomlString(k));

function tomlFloat(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

const isTable = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof TomlFloat);

/** One value as TOML on one line (arrays of tables longer than a line get one entry per line). */
export function tomlValue(v, indent = '') {
  if (typeof v === 'string') return tomlString(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : tomlFloat(v);
  if (v instanceof TomlFloat) return tomlFloat(v.v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) {
    const items = v.map((x) => tomlValue(x, `${indent}  `));
    const one = `[${items.join(', ')}]`;
    if (one.length <= 90 || !v.some(isTable)) return one;
    return `[\n${items.map((x) => `${indent}  ${x},`).join('\n')}\n${indent}]`;
  }
  if (isTable(v)) {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x, indent)}`);
    return parts.length ? `{ ${parts.join(', ')} }` : '{}';
  }
  throw new Error(`cannot write ${typeof v} as TOML`);
}

/**
 * The session as a session file. Returns `{ text, lines }`, `lines[i]` being the 1-based line
 * of step i's `[[step]]` (to map the server's `LINE:COL` errors back to a step).
 */
export function sessionToToml(session, steps = session.steps) {
  const out = [];
  const line = (s = '') => out.push(...String(s).split('\n'));
  line('# A verbs session built in rdmalab\'s playground: `rdmalab verbs run session.toml`');
  line(`profile = ${tomlString(session.profile || 'mlx5')}`);
  line(`seed = ${tomlValue(session.seed ?? 1)}`);
  line(`hosts = ${tomlValue(session.hosts || ['a', 'b'])}`);
  for (const [k, v] of Object.entries(session.extra || {})) line(`${tomlKey(k)} = ${tomlValue(v)}`);
  line('');
  line('[fabric]');
  for (const [k, v] of Object.entries(session.fabric || { topology: 'back_to_back' })) {
    if (v !== undefined) line(`${tomlKey(k)} = ${tomlValue(v)}`);
  }
  const lines = [];
  for (const s of steps) {
    line('');
    for (const c of s['#'] || []) line(`# ${c}`);
    lines.push(out.length + 1);
    line('[[step]]');
    for (const [k, v] of Object.entries(s)) {
      if (v === undefined || k === '#') continue;
      if (k === 'expect' && isTable(v)) {
        for (const [ek, ev] of Object.entries(v)) if (ev !== undefined) line(`expect.${tomlKey(ek)} = ${tomlValue(ev)}`);
      } else {
        line(`${tomlKey(k)} = ${tomlValue(v)}`);
      }
    }
  }
  return { text: `${out.join('\n')}\n`, lines };
}

/** Parses TOML text (the subset above); throws an Error naming the line on anything else. */
export function parseToml(src) {
  const root = {};
  let cur = root;
  let i = 0;
  const n = src.length;
  const lineNo = () => src.slice(0, i).split('\n').length;
  const fail = (msg) => { throw new Error(`line ${lineNo()}: ${msg}`); };
  const ws = () => { while (i < n && (src[i] === ' ' || src[i] === '\t')) i++; };
  const comment = () => { if (src[i] === '#') while (i < n && src[i] !== '\n') i++; };
  const blank = () => {
    for (;;) {
      ws(); comment();
      if (src[i] === '\n') { i++; continue; }
      if (src[i] === '\r' && src[i + 1] === '\n') { i += 2; continue; }
      return;
    }
  };
  const endOfLine = () => {
    ws(); comment();
    if (i >= n) return;
    if (src[i] === '\n') { i++; return; }
    if (src[i] === '\r' && src[i + 1] === '\n') { i += 2; return; }
    fail(`unexpected ${JSON.stringify(src[i])}`);
  };
  const basicString = () => {
    if (src.startsWith('"""', i)) fail('multi-line strings are not supported here');
    i++;
    let s = '';
    for (;;) {
      if (i >= n || src[i] === '\n') fail('unterminated string');
      const c = src[i++];
      if (c === '"') return s;
      if (c !== '\\') { s += c; continue; }
      const e = src[i++];
      const simple = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' }[e];
      if (simple !== undefined) { s += simple; continue; }
      if (e === 'u' || e === 'U') {
        const len = e === 'u' ? 4 : 8;
        const hex = src.slice(i, i + len);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== len) fail('bad unicode escape');
        s += String.fromCodePoint(parseInt(hex, 16));
        i += len;
        continue;
      }
      fail(`bad escape \\${e}`);
    }
  };
  const literalString = () => {
    if (src.startsWith("'''", i)) fail('multi-line strings are not supported here');
    const end = src.indexOf("'", i + 1);
    const nl = src.indexOf('\n', i + 1);
    if (end < 0 || (nl >= 0 && nl < end)) fail('unterminated string');
    const s = src.slice(i + 1, end);
    i = end + 1;
    return s;
  };
  const key = () => {
    const parts = [];
    for (;;) {
      ws();
      if (src[i] === '"') parts.push(basicString());
      else if (src[i] === "'") parts.push(literalString());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(src.slice(i, i + 200));
        if (!m) fail('a key expected');
        parts.push(m[0]);
        i += m[0].length;
      }
      ws();
      if (src[i] !== '.') return parts;
      i++;
    }
  };
  const number = () => {
    const m = /^[+-]?(0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|[0-9_]+(\.[0-9_]+)?([eE][+-]?[0-9_]+)?|inf|nan)/.exec(src.slice(i, i + 100));
    if (!m) fail('a value expected');
    i += m[0].length;
    const s = m[0].replace(/_/g, '');
    if (/inf|nan/.test(s)) return new TomlFloat(Number(s.replace('inf', 'Infinity').replace('nan', 'NaN')));
    if (/^[+-]?0[xob]/.test(s)) {
      const neg = s.startsWith('-');
      const b = BigInt(s.replace(/^[+-]/, ''));
      const v = neg ? -b : b;
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    if (/[.eE]/.test(s)) return new TomlFloat(Number(s));
    const v = BigInt(s);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const value = () => {
    ws();
    const c = src[i];
    if (c === '"') return basicString();
    if (c === "'") return literalString();
    if (c === '[') {
      i++;
      const arr = [];
      for (;;) {
        blank();
        if (src[i] === ']') { i++; return arr; }
        arr.push(value());
        blank();
        if (src[i] === ',') { i++; continue; }
        if (src[i] === ']') { i++; return arr; }
        fail('"," or "]" expected in an array');
      }
    }
    if (c === '{') {
      i++;
      const tbl = {};
      ws();
      if (src[i] === '}') { i++; return tbl; }
      for (;;) {
        blank();
        const k = key();
        if (src[i] !== '=') fail('"=" expected');
        i++;
        assign(tbl, k, value());
        blank();
        if (src[i] === ',') { i++; blank(); if (src[i] === '}') { i++; return tbl; } continue; }
        if (src[i] === '}') { i++; return tbl; }
        fail('"," or "}" expected in an inline table');
      }
    }
    if (src.startsWith('true', i)) { i += 4; return true; }
    if (src.startsWith('false', i)) { i += 5; return false; }
    if (/\d{4}-\d{2}-\d{2}/.test(src.slice(i, i + 10))) fail('dates are not supported here');
    return number();
  };
  const assign = (tbl, parts, v) => {
    let o = tbl;
    for (const p of parts.slice(0, -1)) {
      if (o[p] === undefined) o[p] = {};
      else if (!isTable(o[p])) fail(`key ${p} is not a table`);
      o = o[p];
    }
    const last = parts[parts.length - 1];
    if (Object.prototype.hasOwnProperty.call(o, last)) fail(`key ${parts.join('.')} defined twice`);
    o[last] = v;
  };
  const walk = (parts) => {
    let o = root;
    for (const p of parts) {
      if (o[p] === undefined) o[p] = {};
      let v = o[p];
      if (Array.isArray(v)) v = v[v.length - 1];
      if (!isTable(v)) fail(`${p} is not a table`);
      o = v;
    }
    return o;
  };
  for (;;) {
    blank();
    if (i >= n) break;
    if (src.startsWith('[[', i)) {
      i += 2;
      const parts = key();
      if (!src.startsWith(']]', i)) fail('"]]" expected');
      i += 2;
      const parent = walk(parts.slice(0, -1));
      const last = parts[parts.length - 1];
      if (parent[last] === undefined) parent[last] = [];
      if (!Array.isArray(parent[last])) fail(`${last} is not an array of tables`);
      cur = {};
      parent[last].push(cur);
    } else if (src[i] === '[') {
      i++;
      const parts = key();
      if (src[i] !== ']') fail('"]" expected');
      i++;
      cur = walk(parts);
    } else {
      const parts = key();
      if (src[i] !== '=') fail('"=" expected');
      i++;
      assign(cur, parts, value());
    }
    endOfLine();
  }
  return root;
}

/** A session from a session file's text; throws when the text is outside what the page edits. */
export function sessionFromToml(text) {
  const doc = parseToml(text);
  const s = emptySession();
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'profile') { if (typeof v !== 'string') throw new Error('profile is not a string'); s.profile = v; }
    else if (k === 'seed') s.seed = v;
    else if (k === 'hosts') {
      if (!Array.isArray(v) || !v.every((h) => typeof h === 'string')) throw new Error('hosts is not a list of names');
      s.hosts = v;
    } else if (k === 'fabric') {
      if (!isTable(v)) throw new Error('fabric is not a table');
      s.fabric = v;
    } else if (k === 'step') {
      if (!Array.isArray(v) || !v.every((x) => isTable(x) && typeof x.call === 'string')) throw new Error('step is not a list of [[step]] tables with a call');
      s.steps = v;
    } else s.extra[k] = v;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Expectations pinning a run's results, so `rdmalab verbs run` passes the exported file.

/**
 * What a poll_cq with `wait` waits for under `profile`: `completions` (a per-profile table read
 * for that profile), the length of `wc`, else 1 (README); null when unknown.
 */
function waitTarget(step, profile) {
  const e = step.expect;
  if (e && e.completions !== undefined) {
    const c = isTable(e.completions) ? e.completions[profile] : e.completions;
    return typeof c === 'number' ? c : null;
  }
  if (e && Array.isArray(e.wc)) return e.wc.length;
  return 1;
}

/**
 * The steps with `expect` replaced by what each step returned in `report`: `ret` (every call but
 * `run`), `bad_wr` on failed posts, `wc` on polls, `state` of a step's QP when the report has
 * the state. A poll with `wait` keeps its old expectations when pinning would end the wait earlier.
 */
export function pinExpectations(steps, report, profile = report && report.profile) {
  return steps.map((s, i) => {
    const rec = report && report.steps ? report.steps[i] : null;
    const out = { ...s };
    if (!rec || !rec.result) return out;
    const r = rec.result;
    const e = {};
    if (s.call !== 'run') {
      if (r.kind === 'error') e.ret = r.errno;
      else if (r.kind === 'ok' || r.kind === 'completions') e.ret = 'ok';
    }
    if (r.kind === 'error' && (s.call === 'post_send' || s.call === 'post_recv')) e.bad_wr = r.bad_wr == null ? 'none' : r.bad_wr;
    if (s.call === 'poll_cq' && r.kind === 'completions') {
      const wcs = (r.completions || []).map((c) => {
        const w = { wr_id: c.wr_id, status: bare(c.status) };
        if (c.opcode) w.opcode = bare(c.opcode);
        return w;
      });
      // The wait stops once the CQ holds at least the target; pinning n ≥ target stops it at
      // the same slice, pinning fewer would stop it earlier.
      const target = s.wait === undefined ? 0 : waitTarget(s, profile);
      if (target === null || wcs.length < target) {
        out['#'] = [...(s['#'] || []), `${wcs.length} completion(s) returned; ${tt('expect.nowait')}`];
        if (s.expect) for (const [k, v] of Object.entries(s.expect)) if (k === 'completions' || k === 'wc') e[k] = v;
      } else if (wcs.length) e.wc = wcs;
      else e.completions = 0;
    }
    if (typeof s.qp === 'string' && rec.state && Array.isArray(rec.state.qps)) {
      const q = rec.state.qps.find((x) => x.name === s.qp);
      if (q && q.state) e.state = q.state;
    }
    if (Object.keys(e).length) out.expect = e; else delete out.expect;
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The URL: ?s=<base64url(deflate-raw(TOML))>&profile=...

async function pipeBytes(bytes, stream) {
  const r = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await r.arrayBuffer());
}

function b64url(bytes) {
  let s = '';
  for (let k = 0; k < bytes.length; k += 0x8000) s += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64url(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

/** TOML text → the `s` parameter. */
export async function encodeShare(text) {
  return b64url(await pipeBytes(new TextEncoder().encode(text), new CompressionStream('deflate-raw')));
}

/** The `s` parameter → TOML text. */
export async function decodeShare(s) {
  return new TextDecoder().decode(await pipeBytes(unb64url(s), new DecompressionStream('deflate-raw')));
}

// ---------------------------------------------------------------------------------------------
// The session's handles and states

/** Every handle the first `upto` steps define: {pd, buf, mr, cq, qp: [{name, host, ...}], names}. */
function handlesOf(steps, upto = steps.length) {
  const h = { pd: [], buf: [], mr: [], cq: [], qp: [], names: new Set() };
  const hostOf = {};
  const add = (kind, name, host, more = {}) => {
    if (typeof name !== 'string') return;
    hostOf[name] = host;
    h.names.add(name);
    h[kind].push({ name, host, ...more });
  };
  for (const s of steps.slice(0, upto)) {
    if (s.call === 'alloc_pd') add('pd', s.as, s.host);
    else if (s.call === 'alloc') add('buf', s.as, s.host, { len: s.len });
    else if (s.call === 'reg_mr') add('mr', s.as, hostOf[s.pd], { access: s.access || [], buf: s.buf });
    else if (s.call === 'create_cq') add('cq', s.as, s.host);
    else if (s.call === 'create_qp') add('qp', s.as, hostOf[s.pd], { type: String(s.type || 'RC').toUpperCase() });
    else if (s.call === 'connect' && Array.isArray(s.hosts)) {
      s.hosts.forEach((host, k) => {
        add('pd', (s.pd || [])[k], host);
        add('cq', (s.cq || [])[k], host);
        add('qp', (s.qp || [])[k], host, { type: 'RC' });
      });
    }
  }
  return h;
}

/** `base` or `base2`, `base3`… whichever no step names yet. */
function uniqueName(h, base) {
  if (!h.names.has(base)) return base;
  for (let k = 2; ; k++) if (!h.names.has(`${base}${k}`)) return `${base}${k}`;
}

/**
 * The state of every QP after step `upto` (1-based; 0 = before any step): the server's `state`
 * when it sent one, else worked out from the steps that succeeded (creation, connect, modify_qp).
 */
function qpStatesAfter(upto) {
  const recs = P.report && P.report.steps;
  if (upto > 0 && recs && recs[upto - 1] && recs[upto - 1].state && Array.isArray(recs[upto - 1].state.qps)) {
    return Object.fromEntries(recs[upto - 1].state.qps.map((q) => [q.name, q.state]));
  }
  const st = {};
  P.session.steps.slice(0, upto).forEach((s, k) => {
    const rec = recs && recs[k];
    const ok = !rec || rec.result.kind === 'ok' || rec.result.kind === 'completions';
    if (!ok) return;
    if (s.call === 'create_qp' && typeof s.as === 'string') st[s.as] = 'RESET';
    if (s.call === 'connect' && Array.isArray(s.qp)) for (const q of s.qp) st[q] = 'RTS';
    if (s.call === 'modify_qp' && typeof s.state === 'string' && (s.mask || []).map(bare).includes('STATE')) st[s.qp] = s.state;
  });
  return st;
}

/** The model's row for from → to, or null. */
function transition(from, to) {
  return (P.model.transitions || []).find((x) => x.from === from && x.to === to) || null;
}

/** Required and optional attributes (no STATE) of a transition for a QP type. */
function rule(tr, type) {
  const r = tr && (tr[String(type || 'RC').toLowerCase()] || tr.rc);
  if (!r) return null;
  const clean = (l) => (l || []).map(bare).filter((a) => a !== 'STATE');
  return { required: clean(r.required), optional: clean(r.optional) };
}

const states = () => P.model.states || [];
/** Whether the model arrived (GET /api/verbs/model answered). */
const haveModel = () => (P.model.transitions || []).length > 0;
/**
 * Every mask bit the form offers: the model's `attrs` (`{key, mask}`) in its order, then any
 * other bit its transitions name.
 */
function attrs() {
  const seen = new Set();
  for (const a of P.model.attrs || []) seen.add(bare(isTable(a) ? a.mask : a));
  for (const tr of P.model.transitions || []) {
    for (const ty of ['rc', 'uc', 'ud']) for (const l of [tr[ty] && tr[ty].required, tr[ty] && tr[ty].optional]) for (const b of l || []) seen.add(bare(b));
  }
  seen.delete('');
  return [...seen];
}

/** The session key that carries a mask bit's value: the model's when it names one. */
function keyOf(bit) {
  const a = (P.model.attrs || []).find((x) => isTable(x) && bare(x.mask) === bit);
  return a && a.key ? a.key : ATTR_KEYS[bit] && ATTR_KEYS[bit][0];
}
const profiles = () => (P.model.profiles && P.model.profiles.length ? P.model.profiles : [P.session.profile || 'mlx5']);

/** What the page uses when GET /api/verbs/model fails: nothing to draw, nothing to offer. */
const NO_MODEL = { states: [], qp_types: [], transitions: [], attrs: [], profiles: [], wc_status: [], errno: [] };

// ---------------------------------------------------------------------------------------------
// Formatting

/** Simulated time (the API's picoseconds) as ns, µs or ms. */
const fmtPs = (ps) => fmtNs(ps == null ? null : ps / 1e3);

const hex = (v) => (typeof v === 'number' ? `0x${v.toString(16)}` : esc(v ?? '—'));

/** A step as one line, when the server has not described it. */
function stepText(s) {
  const args = Object.entries(s).filter(([k]) => k !== 'call' && k !== 'expect' && k !== '#')
    .map(([k, v]) => `${k} ${typeof v === 'string' ? v : tomlValue(v)}`);
  return `${s.call}(${args.join(', ')})`;
}

const WR_COLORS = ['#0b6bcb', '#c2571a', '#0a8a5c', '#7b5cd6', '#b3261e', '#8a6d00', '#0f7c8c', '#a3367a'];
const wrColor = (id) => (id == null ? '#7a838c' : WR_COLORS[Math.abs(Number(id) || 0) % WR_COLORS.length]);

/** The explanation of a completion status or errno, as a <details>. */
function explainHtml(table, name, open = false) {
  const e = table[name];
  if (!e) return '';
  const [what, cause, check] = e[lang()] || e.zh;
  return `<details class="pg-why"${open ? ' open' : ''}><summary>${esc(tt('why'))} <code>${esc(name)}</code></summary>
    <dl><dt>${esc(tt('what'))}</dt><dd>${esc(what)}</dd><dt>${esc(tt('cause'))}</dt><dd>${esc(cause)}</dd><dt>${esc(tt('check'))}</dt><dd>${esc(check)}</dd></dl></details>`;
}

// ---------------------------------------------------------------------------------------------
// The page state (one per render of the page)

let P = null;

function newPage(main, live) {
  return {
    main, live, session: emptySession(), report: null, error: null, selected: 0,
    selQp: null, ladderAll: false, edge: null, pinned: null, kb: null, kbOn: false, ladderTable: false, gen: 0, urlSeq: 0, submitted: null,
    model: NO_MODEL, modelError: null, reportText: null, tab: 'alloc_pd', focusCall: null, focusStep: null,
  };
}

const $ = (sel) => P.main.querySelector(sel);

// ---------------------------------------------------------------------------------------------
// Steps, with their results

function resultHtml(s, rec, k) {
  if (!rec) {
    if (P.error && P.error.step === k) return `<p class="pg-res k-invalid">${esc(tt('invalid', { e: P.error.message }))}</p>`;
    return `<p class="pg-res muted">${esc(tt('pending'))}</p>`;
  }
  const r = rec.result || {};
  let out = '';
  if (r.kind === 'ok') out += `<p class="pg-res k-ok">✓ ${esc(r.text || tt('ok'))}</p>`;
  else if (r.kind === 'error') {
    out += `<p class="pg-res k-error">✗ <strong>${esc(r.errno)}</strong> (${esc(r.code)}) — ${esc(r.text)}</p>`;
    if (s.call === 'modify_qp') out += maskDiffHtml(s, k);
    out += explainHtml(ERRNO_EXPLAIN, r.errno, true);
  } else if (r.kind === 'completions') {
    const cs = r.completions || [];
    if (!cs.length) out += `<p class="pg-res k-ok">${esc(tt('nocompl'))}</p>`;
    else {
      out += `<ul class="pg-wcs">${cs.map((c) => `<li class="${c.status === 'SUCCESS' ? 'k-ok' : 'k-error'}" data-status="${esc(c.status)}">
        <span class="pg-wr" style="border-color:${wrColor(c.wr_id)}">wr_id ${esc(c.wr_id)}</span>
        <strong>${esc(c.status)}</strong>${c.status === 'SUCCESS' ? '' : ` <span class="muted">(${esc(c.status_str)})</span>`}
        ${c.opcode ? `· ${esc(c.opcode)}` : ''} · ${esc(c.byte_len)} B${c.imm_data != null ? ` · imm ${esc(c.imm_data)}` : ''} · ${esc(c.qp)}</li>`).join('')}</ul>`;
      const bad = [...new Set(cs.map((c) => c.status).filter((x) => x !== 'SUCCESS'))];
      out += bad.map((b) => explainHtml(WC_EXPLAIN, bare(b), true)).join('');
    }
  } else if (r.kind === 'skipped' || r.kind === 'failed') {
    out += `<p class="pg-res k-error">✗ ${esc(tt(r.kind))}: ${esc(r.text)}</p>`;
  }
  if (rec.notes && rec.notes.length) out += `<ul class="pg-notes">${rec.notes.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>`;
  const failed = (rec.expectations || []).filter((x) => !x.passed && !(x.implicit && r.kind === 'error'));
  if (failed.length) out += `<ul class="pg-exp">${failed.map((x) => `<li>✗ ${esc(tt('exp.failed', { what: x.what, exp: x.expected, got: x.got }))}</li>`).join('')}</ul>`;
  return out;
}

/** For a failed modify_qp: what the mask lacks or has too much, against the model's rule. */
function maskDiffHtml(s, k) {
  if (!haveModel()) return '';
  const h = handlesOf(P.session.steps, k);
  const q = h.qp.find((x) => x.name === s.qp);
  const mask = (s.mask || []).map(bare);
  const from = mask.includes('CUR_STATE') && s.cur_state ? s.cur_state : qpStatesAfter(k)[s.qp];
  const to = mask.includes('STATE') ? s.state : from;
  if (!from || !to || !q) return '';
  const tr = transition(from, to);
  if (!tr) return `<p class="pg-diff">${esc(tt('mask.illegal', { from, to }))}</p>`;
  const r = rule(tr, q.type);
  if (!r) return '';
  const missing = r.required.filter((a) => !mask.includes(a));
  const extra = mask.filter((a) => a !== 'STATE' && !r.required.includes(a) && !r.optional.includes(a));
  const parts = [];
  if (missing.length) parts.push(tt('mask.missing', { a: missing.join(', ') }));
  if (extra.length) parts.push(tt('mask.extra', { a: extra.join(', ') }));
  return parts.length ? `<p class="pg-diff">${parts.map(esc).join('<br>')}</p>` : '';
}

function renderSteps() {
  const list = $('#pg-steps');
  const steps = P.session.raw ? [] : P.session.steps;
  const recs = P.report && P.report.steps;
  if (P.session.raw) {
    list.innerHTML = (recs || []).map((rec) => stepRowHtml(null, rec, rec.index)).join('');
  } else {
    list.innerHTML = steps.map((s, k) => stepRowHtml(s, recs ? recs[k] : null, k + 1)).join('');
  }
  $('#pg-empty').hidden = !!(P.session.raw || steps.length);
  $('#pg-rawnote').hidden = !P.session.raw;
}

function stepRowHtml(s, rec, n) {
  const kind = rec ? rec.result.kind : (P.error && P.error.step === n ? 'invalid' : 'pending');
  const errno = rec && rec.result.kind === 'error' ? rec.result.errno : '';
  const wcs = rec && rec.result.kind === 'completions' ? (rec.result.completions || []).map((c) => c.status).join(',') : '';
  const text = rec ? rec.text : stepText(s);
  const sel = P.selected === n;
  const del = s && !P.session.raw ? `<button type="button" class="pg-del" data-del="${n}" aria-label="${esc(tt('del', { n }))}" title="${esc(tt('del', { n }))}">✕</button>` : '';
  return `<li class="pg-step k-${esc(kind)}${sel ? ' sel' : ''}" data-testid="step-${n}" data-result-kind="${esc(kind)}" data-errno="${esc(errno)}" data-statuses="${esc(wcs)}">
    <div class="pg-head">
      <button type="button" class="pg-sel" data-sel="${n}" aria-pressed="${sel}" aria-label="${esc(tt('sel', { n }))}">
        <span class="pg-n">${n}</span>${rec && rec.host ? `<span class="pg-host">${esc(rec.host)}</span>` : ''}
        <code>${esc(text)}</code>${rec ? `<span class="pg-t">${esc(fmtPs(rec.time_ps))}</span>` : ''}
      </button>${del}
    </div>
    ${s || rec ? resultHtml(s || {}, rec, n) : ''}
  </li>`;
}

function renderSummary() {
  const el = $('#pg-summary');
  const r = P.report;
  if (P.error) {
    el.innerHTML = `<p class="error" role="alert">${esc(tt('run.error'))}: ${esc(P.error.message)}</p>`;
    return;
  }
  if (!r) { el.innerHTML = ''; return; }
  const sm = r.summary || {};
  el.innerHTML = `<p class="pg-sum ${r.passed ? 'pass' : 'fail'}" data-passed="${!!r.passed}">
    ${esc(tt('ran', { n: sm.steps ?? r.steps.length, time: fmtPs(r.end_time_ps), p: sm.passed ?? '—', e: sm.expectations ?? '—' }))}
    · ${esc(r.passed ? tt('ran.pass') : tt('ran.fail'))}</p>
    ${r.aborted ? `<p class="error">${esc(tt('aborted', { why: r.aborted }))}</p>` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// The forms

const fid = (call, name) => `pg-${call}-${name}`;

function field(call, name, label, input, cls = '') {
  return `<div class="pg-f ${cls}" data-field="${name}"><label for="${fid(call, name)}">${esc(label)}</label>${input}</div>`;
}

function textInput(call, name, value = '', extra = '') {
  return `<input id="${fid(call, name)}" name="${name}" value="${esc(value)}" ${extra}>`;
}

function selectInput(call, name, options, value, extra = '') {
  return `<select id="${fid(call, name)}" name="${name}" ${extra}>${options.map(([v, l]) => `<option value="${esc(v)}"${String(v) === String(value) ? ' selected' : ''}>${esc(l)}</option>`).join('')}</select>`;
}

function checks(call, name, label, options, checked) {
  return `<fieldset class="pg-checks" data-field="${name}"><legend>${esc(label)}</legend>${options.map((o) => `
    <label><input type="checkbox" name="${name}" value="${esc(o)}"${checked.includes(o) ? ' checked' : ''}> ${esc(o)}</label>`).join('')}</fieldset>`;
}

const opts = (list, none = false) => [...(none ? [['', tt('f.none')]] : []), ...list.map((x) => [x.name, `${x.name} (${x.host ?? '?'})`])];

/** The calls the forms add, in the order of their tabs. */
const CALLS = ['alloc_pd', 'alloc', 'reg_mr', 'create_cq', 'create_qp', 'modify_qp', 'post_send', 'post_recv', 'poll_cq', 'run'];

/** The tab strip above the form: one tab per call (the form of the selected one shows). */
function tabsHtml() {
  return CALLS.map((c) => `<button type="button" role="tab" class="pg-tab" id="pg-tab-${c}" data-tab="${c}" aria-controls="pg-form-${c}"
    aria-selected="${c === P.tab}" tabindex="${c === P.tab ? 0 : -1}" title="${esc(tt(`call.${c}`))}"><code>${c}</code></button>`).join('');
}

/** Shows the form of `call` and marks its tab; `focus` moves the keyboard focus to the tab. */
function selectTab(call, focus = false) {
  if (!CALLS.includes(call)) return;
  P.tab = call;
  for (const b of P.main.querySelectorAll('.pg-tab')) {
    const on = b.dataset.tab === call;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    if (on && focus) b.focus();
  }
  for (const f of P.main.querySelectorAll('form.pg-add')) f.hidden = f.dataset.call !== call;
}

/** The tab to open on a session: the next step on the way to a first WRITE. */
function suggestTab() {
  const h = handlesOf(P.session.steps);
  if (!h.pd.length) return 'alloc_pd';
  if (!h.cq.length) return 'create_cq';
  if (!h.qp.length) return 'create_qp';
  const st = qpStatesAfter(P.session.steps.length);
  if (h.qp.some((q) => (RANK[st[q.name]] ?? 9) < 3)) return 'modify_qp';
  return 'post_send';
}

function formHtml(call, body) {
  return `<form class="pg-add" id="pg-form-${call}" role="tabpanel" aria-labelledby="pg-tab-${call}" data-testid="add-${call}" data-call="${call}" novalidate${call === P.tab ? '' : ' hidden'}>
    <h3>${esc(tt(`call.${call}`))}</h3>${body}
    <p class="pg-ferr error" id="pg-ferr-${call}" role="alert" hidden></p>
    <button type="submit" data-testid="add-${call}-submit">${esc(tt('f.add'))}</button></form>`;
}

function nextWrId() {
  let m = 0;
  const see = (v) => { if (typeof v === 'number' && v > m) m = v; };
  for (const s of P.session.steps) {
    see(s.wr_id);
    if (Array.isArray(s.wr)) s.wr.forEach((w) => see(w && w.wr_id));
  }
  return m + 1;
}

function formsHtml() {
  const h = handlesOf(P.session.steps);
  const hosts = P.session.hosts.map((x) => [x, x]);
  const host0 = P.session.hosts[0];
  const qpOpts = opts(h.qp);
  const firstPd = h.pd[0];
  const wr = nextWrId();
  return [
    formHtml('alloc_pd', field('alloc_pd', 'host', tt('f.host'), selectInput('alloc_pd', 'host', hosts, host0))
      + field('alloc_pd', 'as', tt('f.as'), textInput('alloc_pd', 'as', uniqueName(h, `pd_${host0}`), 'required'))),
    formHtml('alloc', field('alloc', 'host', tt('f.host'), selectInput('alloc', 'host', hosts, host0))
      + field('alloc', 'as', tt('f.as'), textInput('alloc', 'as', uniqueName(h, `buf_${host0}`), 'required'))
      + field('alloc', 'len', tt('f.len'), textInput('alloc', 'len', '4096', 'inputmode="numeric"'))
      + field('alloc', 'text', tt('f.text'), textInput('alloc', 'text', ''))),
    formHtml('reg_mr', field('reg_mr', 'pd', tt('f.pd'), selectInput('reg_mr', 'pd', opts(h.pd), firstPd && firstPd.name))
      + field('reg_mr', 'buf', tt('f.buf'), selectInput('reg_mr', 'buf', opts(h.buf), h.buf[0] && h.buf[0].name))
      + field('reg_mr', 'as', tt('f.as'), textInput('reg_mr', 'as', uniqueName(h, `mr_${firstPd ? firstPd.host : host0}`), 'required'))
      + checks('reg_mr', 'access', tt('f.access'), MR_ACCESS, ['LOCAL_WRITE'])),
    formHtml('create_cq', field('create_cq', 'host', tt('f.host'), selectInput('create_cq', 'host', hosts, host0))
      + field('create_cq', 'as', tt('f.as'), textInput('create_cq', 'as', uniqueName(h, `cq_${host0}`), 'required'))
      + field('create_cq', 'cqe', tt('f.cqe'), textInput('create_cq', 'cqe', '16', 'inputmode="numeric"'))),
    formHtml('create_qp', field('create_qp', 'pd', tt('f.pd'), selectInput('create_qp', 'pd', opts(h.pd), firstPd && firstPd.name))
      + field('create_qp', 'type', tt('f.type'), selectInput('create_qp', 'type', [['RC', 'RC'], ['UC', 'UC'], ['UD', 'UD']], 'RC'))
      + field('create_qp', 'cq', tt('f.cq'), selectInput('create_qp', 'cq', opts(h.cq), h.cq[0] && h.cq[0].name))
      + field('create_qp', 'as', tt('f.as'), textInput('create_qp', 'as', uniqueName(h, `qp_${firstPd ? firstPd.host : host0}`), 'required'))
      + field('create_qp', 'maxwr', tt('f.maxwr'), textInput('create_qp', 'maxwr', '16', 'inputmode="numeric"'))),
    formHtml('modify_qp', field('modify_qp', 'qp', tt('f.qp'), selectInput('modify_qp', 'qp', qpOpts, (laggingQp(h, qpStatesAfter(P.session.steps.length)) || {}).name))
      + field('modify_qp', 'target', tt('f.target'), selectInput('modify_qp', 'target', states().map((x) => [x, x]), 'INIT', 'aria-describedby="pg-modify-rule"'))
      + '<p class="pg-rule" id="pg-modify-rule" data-role="rule"></p><div class="pg-attrs" data-role="attrs"></div>'),
    formHtml('post_send', field('post_send', 'qp', tt('f.qp'), selectInput('post_send', 'qp', qpOpts, h.qp[0] && h.qp[0].name))
      + field('post_send', 'wr_id', tt('f.wr_id'), textInput('post_send', 'wr_id', String(wr), 'inputmode="numeric"'))
      + field('post_send', 'opcode', tt('f.opcode'), selectInput('post_send', 'opcode', OPCODES.map((o) => [o, o]), 'RDMA_WRITE'))
      + checks('post_send', 'flags', tt('f.flags'), SEND_FLAGS, ['SIGNALED'])
      + field('post_send', 'mr', tt('f.sge'), selectInput('post_send', 'mr', opts(h.mr, true), ''))
      + field('post_send', 'offset', tt('f.offset'), textInput('post_send', 'offset', '0', 'inputmode="numeric"'))
      + field('post_send', 'len', tt('f.sgelen'), textInput('post_send', 'len', '64', 'inputmode="numeric"'))
      + field('post_send', 'rmr', tt('f.remote'), selectInput('post_send', 'rmr', opts(h.mr), ''), 'only-remote')
      + field('post_send', 'roffset', tt('f.roffset'), textInput('post_send', 'roffset', '0', 'inputmode="numeric"'), 'only-remote')
      + field('post_send', 'imm', tt('f.imm'), textInput('post_send', 'imm', '0', 'inputmode="numeric"'), 'only-imm')
      + field('post_send', 'compare', tt('f.compare'), textInput('post_send', 'compare', '0', 'inputmode="numeric"'), 'only-cas')
      + field('post_send', 'swap', tt('f.swap'), textInput('post_send', 'swap', '1', 'inputmode="numeric"'), 'only-cas')
      + field('post_send', 'add', tt('f.addv'), textInput('post_send', 'add', '1', 'inputmode="numeric"'), 'only-faa')
      + field('post_send', 'udqp', tt('f.ud'), selectInput('post_send', 'udqp', qpOpts, ''), 'only-ud')
      + field('post_send', 'qkey', tt('f.qkey'), textInput('post_send', 'qkey', `0x${QKEY.toString(16)}`), 'only-ud')),
    formHtml('post_recv', field('post_recv', 'qp', tt('f.qp'), selectInput('post_recv', 'qp', qpOpts, h.qp[0] && h.qp[0].name))
      + field('post_recv', 'wr_id', tt('f.wr_id'), textInput('post_recv', 'wr_id', String(wr + 99), 'inputmode="numeric"'))
      + field('post_recv', 'mr', tt('f.sge'), selectInput('post_recv', 'mr', opts(h.mr, true), ''))
      + field('post_recv', 'offset', tt('f.offset'), textInput('post_recv', 'offset', '0', 'inputmode="numeric"'))
      + field('post_recv', 'len', tt('f.sgelen'), textInput('post_recv', 'len', '', 'inputmode="numeric"'))),
    formHtml('poll_cq', field('poll_cq', 'cq', 'CQ', selectInput('poll_cq', 'cq', opts(h.cq), h.cq[0] && h.cq[0].name))
      + field('poll_cq', 'max', tt('f.max'), textInput('poll_cq', 'max', '16', 'inputmode="numeric"'))
      + field('poll_cq', 'wait', tt('f.wait'), textInput('poll_cq', 'wait', '50us'))),
    formHtml('run', field('run', 'for', tt('f.for'), textInput('run', 'for', '10us'))),
  ].join('');
}

/** The values of a form's named fields (checkbox groups as arrays). */
function formValues(form) {
  const v = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === 'checkbox') {
      if (!Array.isArray(v[el.name])) v[el.name] = [];
      if (el.checked) v[el.name].push(el.value);
    } else v[el.name] = el.value;
  }
  return v;
}

function restoreValues(form, v) {
  for (const el of form.elements) {
    if (!el.name || !(el.name in v)) continue;
    if (el.type === 'checkbox') el.checked = v[el.name].includes(el.value);
    else if (el.tagName === 'SELECT') { if ([...el.options].some((o) => o.value === v[el.name])) el.value = v[el.name]; else continue; }
    else el.value = v[el.name];
    el.dataset.dirty = '1';
  }
}

/** The fields of a form the learner changed (the others are suggestions, computed again). */
function dirtyValues(form) {
  const all = formValues(form);
  const names = new Set([...form.elements].filter((el) => el.name && el.dataset.dirty === '1' && !/^[mv]_/.test(el.name)).map((el) => el.name));
  return Object.fromEntries(Object.entries(all).filter(([k]) => names.has(k)));
}

/**
 * Re-renders the forms, keeping what the learner typed in the forms they did not submit. After an
 * "Add", the keyboard focus goes back to that form's button (unless it moved elsewhere meanwhile).
 */
function renderForms() {
  const box = $('#pg-forms');
  const keep = {};
  for (const f of box.querySelectorAll('form.pg-add')) {
    if (f.dataset.call !== P.submitted) keep[f.dataset.call] = dirtyValues(f);
  }
  P.submitted = null;
  const a = document.activeElement;
  const focusCall = P.focusCall && (!a || a === document.body || box.contains(a)) ? P.focusCall : null;
  P.focusCall = null;
  box.innerHTML = formsHtml();
  const h = handlesOf(P.session.steps);
  for (const f of box.querySelectorAll('form.pg-add')) {
    const v = keep[f.dataset.call] || {};
    // A name the learner typed is kept unless a step took it meanwhile.
    if (v.as && h.names.has(v.as)) delete v.as;
    restoreValues(f, v);
    syncForm(f, null);
  }
  box.querySelectorAll('input, select, button').forEach((el) => { el.disabled = !!P.session.raw; });
  P.main.querySelectorAll('.pg-tab').forEach((el) => { el.disabled = !!P.session.raw; });
  if (focusCall) {
    const b = box.querySelector(`form[data-call="${focusCall}"] button[type=submit]`);
    if (b && !b.disabled) b.focus({ preventScroll: true });
  }
}

/**
 * Fills a form's suggestions: every field the learner has not touched (a free name, the CQ and
 * buffer on the PD's host, the MRs on the QP's host and its peer's, modify_qp's next state and
 * attributes) and which fields show. `changed` names the field that just changed, if any.
 */
function syncForm(form, changed) {
  const call = form.dataset.call;
  const h = handlesOf(P.session.steps);
  const get = (n) => form.querySelector(`[name="${n}"]`);
  const auto = (n) => get(n) && get(n).dataset.dirty !== '1';
  const hostFor = () => {
    if (get('host')) return get('host').value;
    const pd = h.pd.find((x) => x.name === (get('pd') || {}).value);
    return pd ? pd.host : P.session.hosts[0];
  };
  if (auto('as')) {
    const base = { alloc_pd: 'pd', alloc: 'buf', reg_mr: 'mr', create_cq: 'cq', create_qp: 'qp' }[call];
    get('as').value = uniqueName(h, `${base}_${hostFor()}`);
  }
  if (call === 'create_qp' && auto('cq')) {
    const cq = h.cq.find((x) => x.host === hostFor());
    if (cq) get('cq').value = cq.name;
  }
  if (call === 'reg_mr' && auto('buf')) {
    const buf = h.buf.find((x) => x.host === hostFor() && !h.mr.some((m) => m.buf === x.name)) || h.buf.find((x) => x.host === hostFor());
    if (buf) get('buf').value = buf.name;
  }
  if (call === 'modify_qp') {
    if (changed === 'qp') delete get('target').dataset.dirty;
    syncModify(form);
  }
  if (call === 'post_send' || call === 'post_recv') {
    const q = h.qp.find((x) => x.name === get('qp').value);
    if (q) {
      const local = h.mr.find((m) => m.host === q.host);
      if (auto('mr')) get('mr').value = local ? local.name : '';
      if (call === 'post_send') {
        const remote = h.mr.find((m) => m.host !== q.host);
        if (remote && auto('rmr')) get('rmr').value = remote.name;
        const peer = peerOf(h, q);
        if (peer && auto('udqp')) get('udqp').value = peer.name;
      }
    }
    if (call === 'post_send') {
      const op = get('opcode').value;
      const show = {
        'only-remote': /^(RDMA_|ATOMIC_)/.test(op), 'only-imm': /WITH_IMM$/.test(op),
        'only-cas': op === 'ATOMIC_CMP_AND_SWP', 'only-faa': op === 'ATOMIC_FETCH_AND_ADD', 'only-ud': !!(q && q.type === 'UD'),
      };
      for (const [cls, on] of Object.entries(show)) form.querySelectorAll(`.${cls}`).forEach((el) => { el.hidden = !on; });
      if (changed === 'opcode' && /^ATOMIC_/.test(op) && auto('len')) get('len').value = '8';
    }
  }
}

/** The QP that most needs a modify_qp: the one furthest behind on RESET → INIT → RTR → RTS. */
function laggingQp(h, st) {
  let best = null;
  for (const q of h.qp) {
    const r = RANK[st[q.name]] ?? 9;
    if (r < 3 && (!best || r < best.r)) best = { q, r };
  }
  return best ? best.q : h.qp[0];
}

/** The peer of a QP: the first QP of the same type on another host. */
function peerOf(h, q) {
  return h.qp.find((x) => x.host !== q.host && x.type === q.type) || null;
}

/** The PSN a QP starts sending with in the forms' defaults: 100 × (its host's position + 1). */
function psnOf(q) {
  const k = P.session.hosts.indexOf(q ? q.host : '');
  return 100 * (k < 0 ? 1 : k + 1);
}

function attrInput(attr, q, peer, h, cur) {
  const spec = ATTR_KEYS[attr];
  if (!spec) return '';
  const [, kind, dflt] = spec;
  const key = keyOf(attr);
  const id = esc(fid('modify_qp', `v_${attr}`));
  const name = esc(`v_${attr}`);
  const label = `<label class="pg-vl" for="${id}">${esc(key)}</label>`;
  if (kind === 'state') return `${label}<select id="${id}" name="${name}">${states().map((s) => `<option${s === cur ? ' selected' : ''}>${esc(s)}</option>`).join('')}</select>`;
  if (kind === 'bool') return `<label class="pg-vl"><input type="checkbox" name="${name}" value="true"${dflt ? ' checked' : ''}> ${esc(key)}</label>`;
  if (kind === 'access') return `<span class="pg-vl">${esc(key)}:</span>${QP_ACCESS.map((a) => `<label class="pg-inl"><input type="checkbox" name="${name}" value="${a}"${dflt.includes(a) ? ' checked' : ''}> ${esc(a)}</label>`).join('')}`;
  if (kind === 'host') {
    const def = peer ? peer.host : P.session.hosts.find((x) => !q || x !== q.host);
    return `${label}<select id="${id}" name="${name}">${P.session.hosts.map((x) => `<option${x === def ? ' selected' : ''}>${esc(x)}</option>`).join('')}</select>`;
  }
  if (kind === 'mtu') return `${label}<select id="${id}" name="${name}">${MTUS.map((m) => `<option${m === dflt ? ' selected' : ''}>${m}</option>`).join('')}</select>`;
  if (kind === 'qp') return `${label}<select id="${id}" name="${name}">${h.qp.map((x) => `<option value="${esc(x.name)}"${peer && x.name === peer.name ? ' selected' : ''}>${esc(x.name)} (${esc(x.host)})</option>`).join('')}</select>`;
  let v = dflt;
  if (attr === 'SQ_PSN') v = psnOf(q);
  if (attr === 'RQ_PSN') v = peer ? psnOf(peer) : 0;
  if (attr === 'QKEY') v = `0x${QKEY.toString(16)}`;
  return `${label}<input id="${id}" name="${name}" value="${esc(v)}" inputmode="numeric">`;
}

/** One attribute of modify_qp's list; `attr` comes from the model, so every use is escaped. */
function attrRow(attr, tag, checked, q, peer, h, cur) {
  const id = esc(fid('modify_qp', `m_${attr}`));
  const a = esc(attr);
  return `<div class="pg-attr${tag ? ` t-${esc(tag)}` : ''}" data-attr="${a}">
    <input type="checkbox" id="${id}" name="m_${a}" value="${a}"${checked ? ' checked' : ''}>
    <label for="${id}"><code>${a}</code>${tag ? ` <span class="pg-tag">${esc(tt(`f.tag.${tag}`))}</span>` : ''}</label>
    <span class="pg-val">${attrInput(attr, q, peer, h, cur)}</span></div>`;
}

/**
 * Fills modify_qp's attribute list for the chosen QP (in the state it is in after the last step)
 * and target: the required attributes ticked, the optional ones offered, the rest under "other"
 * (ticking one gives EINVAL). Unless the learner chose a target, it proposes the next state on
 * the way to RTS.
 */
function syncModify(form) {
  const h = handlesOf(P.session.steps);
  const st = qpStatesAfter(P.session.steps.length);
  const qpSel = form.querySelector('[name="qp"]');
  const tgSel = form.querySelector('[name="target"]');
  const q = h.qp.find((x) => x.name === qpSel.value);
  const cur = q ? st[q.name] : null;
  if (tgSel.dataset.dirty !== '1' && cur) tgSel.value = BRINGUP[cur] || (cur === 'ERR' ? 'RESET' : 'RTS');
  const target = tgSel.value;
  const peer = q ? peerOf(h, q) : null;
  const ruleEl = form.querySelector('[data-role="rule"]');
  const box = form.querySelector('[data-role="attrs"]');
  const all = attrs().filter((a) => a !== 'STATE');
  const stateId = fid('modify_qp', 'm_STATE');
  const stateRow = `<div class="pg-attr t-req" data-attr="STATE"><input type="checkbox" id="${stateId}" name="m_STATE" value="STATE" checked>
    <label for="${stateId}"><code>STATE</code></label><span class="pg-val muted">state = ${esc(target)}</span></div>`;
  if (!q) { ruleEl.textContent = tt('no.qp'); box.innerHTML = ''; return; }
  const tr = haveModel() && cur ? transition(cur, target) : null;
  const r = tr ? rule(tr, q.type) : null;
  const head = cur ? tt('f.cur', { qp: q.name, state: cur }) : '';
  if (r) {
    ruleEl.textContent = `${head}${lang() === 'en' ? ' ' : ''}${tt('f.legal', { from: cur, to: target, req: r.required.join(', ') || tt('edge.nothing'), opt: r.optional.join(', ') || tt('edge.nothing') })}`;
    const others = all.filter((a) => !r.required.includes(a) && !r.optional.includes(a));
    box.innerHTML = stateRow
      + r.required.map((a) => attrRow(a, 'req', true, q, peer, h, cur)).join('')
      + r.optional.map((a) => attrRow(a, 'opt', false, q, peer, h, cur)).join('')
      + (others.length ? `<details class="pg-other"><summary>${esc(tt('f.attrs.other'))}</summary>${others.map((a) => attrRow(a, '', false, q, peer, h, cur)).join('')}</details>` : '');
  } else {
    ruleEl.textContent = haveModel() && cur ? `${head}${lang() === 'en' ? ' ' : ''}${tt('f.illegal', { from: cur, to: target })}` : head;
    box.innerHTML = stateRow + all.map((a) => attrRow(a, '', false, q, peer, h, cur)).join('');
  }
  ruleEl.classList.toggle('error', !!(haveModel() && cur && !r));
}

// Parsing form values ---------------------------------------------------------------------------

/** A value a form cannot send, with the field to point at. */
class FormError extends Error {
  constructor(message, field = null) {
    super(message);
    this.field = field;
  }
}

const U64_MAX = (1n << 64n) - 1n;
// The session file's limits (crates/sim/src/session/plan.rs), checked before the server sees the step.
const LIMIT = { buffer: 16 << 20, cqe: 8388608, depth: 65536, poll: 4096, offset: 2 ** 40, imm: 2 ** 32 - 1, stepPs: 10e12 };

/** A whole number in [min, max] (decimal or 0x hex); `undefined` for an empty optional field. */
function intOf(v, label, { field = null, optional = false, min = 0, max = U64_MAX } = {}) {
  const s = String(v ?? '').trim().replace(/_/g, '');
  if (s === '' && optional) return undefined;
  const range = () => new FormError(tt('f.range', { f: label, min: String(min), max: String(max), e: s }), field);
  if (/^-\d+$/.test(s)) throw range();
  if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(s)) throw new FormError(tt('f.int', { f: label, e: s }), field);
  const b = BigInt(s);
  if (b < BigInt(min) || b > BigInt(max)) throw range();
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

function nameOf(v, label, field) {
  const s = String(v ?? '').trim();
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/.test(s)) throw new FormError(tt('f.name', { f: label, e: s }), field);
  return s;
}

const UNIT_PS = { ps: 1, ns: 1e3, us: 1e6, 'µs': 1e6, ms: 1e9, s: 1e12 };

/** A duration as the session file writes it: a number and a unit, more than 0, at most 10 s. */
function durationOf(v, label, { field = null, optional = false } = {}) {
  const s = String(v ?? '').trim();
  if (s === '' && optional) return undefined;
  const m = /^(\d+(?:\.\d{1,12})?)\s*(ps|ns|us|µs|ms|s)$/.exec(s);
  if (!m) throw new FormError(tt('f.dur', { f: label, e: s }), field);
  const ps = Number(m[1]) * UNIT_PS[m[2]];
  if (!(ps > 0)) throw new FormError(tt('f.durzero', { f: label }), field);
  if (ps > LIMIT.stepPs) throw new FormError(tt('f.durmax', { f: label, max: '10 s', e: s }), field);
  return s;
}

function need(v, label, field) {
  if (!v) throw new FormError(tt('f.need', { f: label }), field);
  return v;
}

function sgeOf(v) {
  if (!v.mr) return undefined;
  const sge = { mr: v.mr };
  const off = intOf(v.offset, tt('f.offset'), { field: 'offset', optional: true, max: LIMIT.offset });
  if (off) sge.offset = off;
  const len = intOf(v.len, tt('f.sgelen'), { field: 'len', optional: true, max: 2 ** 32 - 1 });
  if (len !== undefined) sge.len = len;
  return sge;
}

/** The step a submitted form describes; throws a FormError naming the field that is wrong. */
function stepFromForm(form) {
  const call = form.dataset.call;
  const v = formValues(form);
  const h = handlesOf(P.session.steps);
  const s = { call };
  const as = () => nameOf(v.as, tt('f.as'), 'as');
  switch (call) {
    case 'alloc_pd': s.host = v.host; s.as = as(); break;
    case 'alloc': {
      s.host = v.host; s.as = as(); s.len = intOf(v.len, tt('f.len'), { field: 'len', min: 1, max: LIMIT.buffer });
      if (v.text) s.text = v.text;
      break;
    }
    case 'reg_mr': s.pd = need(v.pd, tt('f.pd'), 'pd'); s.buf = need(v.buf, tt('f.buf'), 'buf'); s.as = as(); s.access = v.access || []; break;
    case 'create_cq': s.host = v.host; s.as = as(); s.cqe = intOf(v.cqe, tt('f.cqe'), { field: 'cqe', min: 1, max: LIMIT.cqe }); break;
    case 'create_qp': {
      s.pd = need(v.pd, tt('f.pd'), 'pd'); s.as = as(); s.type = v.type; s.cq = need(v.cq, tt('f.cq'), 'cq');
      const m = intOf(v.maxwr, tt('f.maxwr'), { field: 'maxwr', optional: true, min: 1, max: LIMIT.depth });
      if (m !== undefined) { s.max_send_wr = m; s.max_recv_wr = m; }
      break;
    }
    case 'modify_qp': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      if (!h.qp.some((x) => x.name === s.qp)) throw new FormError(tt('no.qp'), 'qp');
      const mask = attrs().filter((a) => (v[`m_${a}`] || []).length);
      if (mask.includes('STATE')) s.state = v.target;
      for (const a of mask) {
        const spec = ATTR_KEYS[a];
        if (!spec || a === 'STATE') continue;
        const kind = spec[1];
        const key = keyOf(a);
        const raw = v[`v_${a}`];
        if (kind === 'int') s[key] = intOf(raw, key, { field: `v_${a}` });
        else if (kind === 'mtu') s[key] = Number(raw);
        else if (kind === 'bool') s[key] = (raw || []).length > 0;
        else if (kind === 'access') s[key] = raw || [];
        else s[key] = need(raw, key, `v_${a}`);
      }
      s.mask = mask;
      break;
    }
    case 'post_send': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      const q = h.qp.find((x) => x.name === s.qp);
      s.wr_id = intOf(v.wr_id, tt('f.wr_id'), { field: 'wr_id' });
      s.opcode = v.opcode;
      s.flags = v.flags || [];
      const sge = sgeOf(v);
      if (sge) s.sge = sge;
      if (/^(RDMA_|ATOMIC_)/.test(s.opcode)) {
        s.remote = { mr: need(v.rmr, tt('f.remote'), 'rmr') };
        const off = intOf(v.roffset, tt('f.roffset'), { field: 'roffset', optional: true, max: LIMIT.offset });
        if (off) s.remote.offset = off;
      }
      if (/WITH_IMM$/.test(s.opcode)) s.imm = intOf(v.imm, tt('f.imm'), { field: 'imm', max: LIMIT.imm });
      if (s.opcode === 'ATOMIC_CMP_AND_SWP') {
        s.compare = intOf(v.compare, tt('f.compare'), { field: 'compare' });
        s.swap = intOf(v.swap, tt('f.swap'), { field: 'swap' });
      }
      if (s.opcode === 'ATOMIC_FETCH_AND_ADD') s.add = intOf(v.add, tt('f.addv'), { field: 'add' });
      if (q && q.type === 'UD') s.ud = { qp: need(v.udqp, tt('f.ud'), 'udqp'), qkey: intOf(v.qkey, tt('f.qkey'), { field: 'qkey', max: 2 ** 32 - 1 }) };
      if (!s.flags.length) delete s.flags;
      break;
    }
    case 'post_recv': {
      s.qp = need(v.qp, tt('f.qp'), 'qp');
      s.wr_id = intOf(v.wr_id, tt('f.wr_id'), { field: 'wr_id' });
      const sge = sgeOf(v);
      if (sge) s.sge = sge;
      break;
    }
    case 'poll_cq': {
      s.cq = need(v.cq, 'CQ', 'cq');
      const max = intOf(v.max, tt('f.max'), { field: 'max', optional: true, min: 1, max: LIMIT.poll });
      if (max !== undefined && max !== 16) s.max = max;
      const w = durationOf(v.wait, tt('f.wait'), { field: 'wait', optional: true });
      if (w) s.wait = w;
      break;
    }
    case 'run': s.for = durationOf(v.for, tt('f.for'), { field: 'for' }); break;
    default: break;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// The QP state diagram, drawn from the model's transitions

const NODE_W = 92;
const NODE_H = 38;
// Where each state sits (layout only; which arrows exist comes from the model).
const NODE_POS = { RESET: [70, 170], INIT: [230, 170], RTR: [390, 170], RTS: [550, 170], SQD: [710, 170], SQE: [550, 320], ERR: [310, 320] };

function nodePos(name, k) {
  return NODE_POS[name] || [70 + (k % 5) * 160, 420];
}

/** Where the ray from a node's centre towards (x, y) leaves its box. */
function clip([cx, cy], [x, y]) {
  const dx = x - cx, dy = y - cy;
  const s = Math.min(dx ? (NODE_W / 2 + 3) / Math.abs(dx) : Infinity, dy ? (NODE_H / 2 + 3) / Math.abs(dy) : Infinity);
  return [cx + dx * s, cy + dy * s];
}

/** A quadratic curve from node a to node b bulging to side `sd` (±1) of travel; its control point. */
function arc(a, b, sd) {
  const dx = b[0] - a[0], dy = b[1] - a[1], L = Math.hypot(dx, dy) || 1;
  const bend = 2 * (12 + 0.12 * L);
  return [(a[0] + b[0]) / 2 + sd * (dy / L) * bend, (a[1] + b[1]) / 2 - sd * (dx / L) * bend];
}

/** How badly a curve a → c → b runs through the other nodes' boxes (sampled). */
function crowding(a, c, b, pos) {
  let bad = 0;
  for (let k = 1; k < 20; k++) {
    const u = k / 20;
    const x = (1 - u) * (1 - u) * a[0] + 2 * u * (1 - u) * c[0] + u * u * b[0];
    const y = (1 - u) * (1 - u) * a[1] + 2 * u * (1 - u) * c[1] + u * u * b[1];
    for (const p of pos) {
      if (p === a || p === b) continue;
      if (Math.abs(x - p[0]) < NODE_W / 2 + 10 && Math.abs(y - p[1]) < NODE_H / 2 + 24) bad++;
    }
  }
  return bad;
}

function diagramSvg(qpType, cur) {
  const sts = states();
  const pos = Object.fromEntries(sts.map((s, k) => [s, nodePos(s, k)]));
  const trs = (P.model.transitions || []).filter((x) => pos[x.from] && pos[x.to]);
  let y0 = Infinity, y1 = -Infinity;
  const span = (y) => { y0 = Math.min(y0, y); y1 = Math.max(y1, y); };
  for (const p of Object.values(pos)) { span(p[1] - NODE_H / 2 - 40); span(p[1] + NODE_H / 2 + 20); }
  // Each arrow bulges to the side of travel that crosses fewer nodes; an arrow whose reverse is
  // drawn takes the same side of its own travel, so the two never overlap.
  const side = {};
  for (const tr of trs) {
    if (tr.from === tr.to) continue;
    const back = side[`${tr.to}|${tr.from}`];
    if (back !== undefined) { side[`${tr.from}|${tr.to}`] = back; continue; }
    const a = pos[tr.from], b = pos[tr.to];
    side[`${tr.from}|${tr.to}`] = crowding(a, arc(a, b, -1), b, Object.values(pos)) < crowding(a, arc(a, b, 1), b, Object.values(pos)) ? -1 : 1;
  }
  let edges = '';
  for (const tr of trs) {
    const a = pos[tr.from], b = pos[tr.to];
    const r = rule(tr, qpType);
    const fromCur = tr.from === cur;
    const cls = `pg-edge${fromCur ? ' from-cur' : ''}${P.pinned && P.pinned.from === tr.from && P.pinned.to === tr.to ? ' pinned' : ''}`;
    const lbl = `${tr.from} → ${tr.to}: ${r && r.required.length ? r.required.join(', ') : tt('edge.none')}`;
    let d;
    if (tr.from === tr.to) {
      const [x, y] = a;
      d = `M${x - 14},${y - NODE_H / 2 - 2} C${x - 34},${y - NODE_H / 2 - 46} ${x + 34},${y - NODE_H / 2 - 46} ${x + 14},${y - NODE_H / 2 - 4}`;
    } else {
      const [mx, my] = arc(a, b, side[`${tr.from}|${tr.to}`]);
      span((a[1] + 2 * my + b[1]) / 4 - 14);
      span((a[1] + 2 * my + b[1]) / 4 + 14);
      const p0 = clip(a, [mx, my]), p1 = clip(b, [mx, my]);
      d = `M${p0[0].toFixed(1)},${p0[1].toFixed(1)} Q${mx.toFixed(1)},${my.toFixed(1)} ${p1[0].toFixed(1)},${p1[1].toFixed(1)}`;
    }
    // No tab stop per arrow: the diagram is one (see diagramKey); the mouse still clicks them.
    edges += `<g class="${cls}" data-from="${esc(tr.from)}" data-to="${esc(tr.to)}">
      <title>${esc(lbl)}</title><path class="hit" d="${d}"/><path class="line" d="${d}" marker-end="url(#pg-arr${fromCur ? '-hi' : ''})"/></g>`;
  }
  const nodes = sts.map((s) => {
    const [x, y] = pos[s];
    const on = s === cur;
    return `<g class="pg-node${on ? ' cur' : ''}" data-node="${esc(s)}"${on ? ' aria-current="true"' : ''}>
      <rect x="${x - NODE_W / 2}" y="${y - NODE_H / 2}" width="${NODE_W}" height="${NODE_H}" rx="19"/>
      <text x="${x}" y="${y + 5}">${esc(s)}</text>${on ? `<title>${esc(tt('edge.cur'))}</title>` : ''}</g>`;
  }).join('');
  return `<svg class="pg-sm" viewBox="0 ${Math.floor(y0)} 790 ${Math.ceil(y1 - y0)}" role="group" aria-label="${esc(tt('diagram'))}">
    <defs>
      <marker id="pg-arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="pg-ah"/></marker>
      <marker id="pg-arr-hi" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="pg-ah hi"/></marker>
    </defs>${edges}${nodes}</svg>`;
}

function edgeInfoHtml(from, to) {
  const h = handlesOf(P.session.steps);
  const q = h.qp.find((x) => x.name === P.selQp);
  const type = q ? q.type : 'RC';
  const tr = transition(from, to);
  const r = rule(tr, type);
  if (!r) return '';
  const list = (l) => (l.length ? l.map((a) => `<code>${esc(a)}</code>`).join(' ') : esc(tt('edge.nothing')));
  return `<p><strong>${esc(tt('edge.title', { from, to, type }))}</strong></p>
    <p>${esc(tt('edge.req'))} <code>STATE</code> ${r.required.map((a) => `<code>${esc(a)}</code>`).join(' ')}${r.required.length ? '' : ` <span class="muted">(${esc(tt('edge.none'))})</span>`}</p>
    <p>${esc(tt('edge.opt'))} ${list(r.optional)}</p>
    ${P.session.raw ? '' : `<p><button type="button" class="secondary" data-use-edge="${esc(from)}|${esc(to)}">${esc(tt('edge.use'))}</button></p>`}`;
}

function renderDiagram() {
  const h = handlesOf(P.session.steps);
  const qps = P.session.raw ? rawQps() : h.qp;
  if (!qps.some((q) => q.name === P.selQp)) P.selQp = qps[0] ? qps[0].name : null;
  $('#pg-qp').innerHTML = qps.map((q) => `<option value="${esc(q.name)}"${q.name === P.selQp ? ' selected' : ''}>${esc(q.name)} (${esc(q.host)}, ${esc(q.type)})</option>`).join('');
  $('#pg-qp').disabled = !qps.length;
  const q = qps.find((x) => x.name === P.selQp);
  const st = P.session.raw ? rawStates(P.selected) : qpStatesAfter(P.selected);
  const cur = q ? st[q.name] || '' : '';
  const fig = $('#pg-diagram');
  fig.dataset.state = cur;
  fig.dataset.qp = q ? q.name : '';
  fig.setAttribute('aria-label', q ? tt('diagram.label', { qp: q.name, state: cur || '—' }) : tt('no.qp'));
  if (!haveModel()) {
    fig.removeAttribute('tabindex');
    fig.removeAttribute('aria-describedby');
    fig.innerHTML = `<p class="error">${esc(tt('model.error', { e: P.modelError || '—' }))}</p>${cur ? `<p class="pg-node-text">${esc(q.name)}: <strong>${esc(cur)}</strong></p>` : ''}`;
    $('#pg-edge').innerHTML = '';
    return;
  }
  // One tab stop for the whole diagram: the arrow keys move between the legal transitions.
  fig.tabIndex = 0;
  fig.setAttribute('aria-describedby', 'pg-diagram-keys');
  fig.innerHTML = `${diagramSvg(q ? q.type : 'RC', cur)}<figcaption>${esc(q ? tt('diagram.label', { qp: q.name, state: cur || '—' }) : tt('no.qp'))}
    <span id="pg-diagram-keys" class="pg-keys">${esc(tt('edge.keys'))}</span></figcaption>`;
  if (P.kb && !legalEdges().some((x) => sameEdge(x, P.kb))) P.kb = null;
  markKb();
  showEdgeInfo();
  showCurrentNode(fig);
}

const sameEdge = (a, b) => !!a && !!b && a.from === b.from && a.to === b.to;

/** Whether the diagram has the keyboard focus, shown (not after a click). */
function kbFocused() {
  const fig = $('#pg-diagram');
  return !!fig && document.activeElement === fig && fig.matches(':focus-visible');
}

/**
 * Whether the keyboard's transition is shown: from the diagram reached with the keyboard until
 * the focus leaves both the diagram and the explanation under it (whose button uses that transition).
 */
function kbShown() {
  if (!P.kbOn) return false;
  const a = document.activeElement;
  return !!a && (a === $('#pg-diagram') || $('#pg-edge').contains(a));
}

/**
 * The transitions the arrow keys move between: the legal ones from the shown QP's current state
 * (every transition when there is no current state), in the order their targets sit left to right.
 */
function legalEdges() {
  const cur = $('#pg-diagram').dataset.state;
  const sts = states();
  const x = (name) => { const [px, py] = nodePos(name, sts.indexOf(name)); return px * 1000 + py; };
  return (P.model.transitions || []).filter((tr) => sts.includes(tr.from) && sts.includes(tr.to) && (!cur || tr.from === cur))
    .map((tr) => ({ from: tr.from, to: tr.to }))
    .sort((a, b) => x(a.from) - x(b.from) || x(a.to) - x(b.to));
}

/** The transition the keyboard starts on: the selected one, else the next bring-up step, else the first. */
function firstKb(list) {
  const cur = $('#pg-diagram').dataset.state;
  return list.find((e) => sameEdge(e, P.pinned)) || list.find((e) => e.from === cur && e.to === BRINGUP[cur]) || list[0] || null;
}

/** Marks the keyboard's transition in the drawing (while it is shown: see kbShown). */
function markKb() {
  const fig = $('#pg-diagram');
  const on = kbShown() ? P.kb : null;
  for (const g of fig.querySelectorAll('.pg-edge')) g.classList.toggle('kb', sameEdge(on, g.dataset));
}

/** What #pg-edge explains: the arrow under the mouse, else the keyboard's, else the selected one. */
function showEdgeInfo() {
  const e = P.edge || (kbShown() && P.kb) || P.pinned;
  $('#pg-edge').innerHTML = e && haveModel() ? edgeInfoHtml(e.from, e.to) : `<p class="muted">${esc(tt('edge.pick'))}</p>`;
}

/** Scrolls the diagram's box sideways (a narrow screen) so the keyboard's arrow is in view. */
function revealKb(fig) {
  const g = fig.querySelector('.pg-edge.kb');
  if (!g || fig.scrollWidth <= fig.clientWidth + 1) return;
  const f = fig.getBoundingClientRect(), r = g.getBoundingClientRect();
  if (r.left < f.left + 8) fig.scrollLeft -= f.left + 8 - r.left;
  else if (r.right > f.right - 8) fig.scrollLeft += r.right - (f.right - 8);
}

/** Selects a transition (as a click on its arrow does): its attributes show, and the status line says so. */
function selectEdge(e) {
  P.pinned = { from: e.from, to: e.to };
  renderDiagram();
  const h = handlesOf(P.session.steps);
  const q = h.qp.find((x) => x.name === P.selQp) || (P.session.raw ? rawQps().find((x) => x.name === P.selQp) : null);
  const r = rule(transition(e.from, e.to), q ? q.type : 'RC');
  if (r) {
    status(tt('edge.sel', {
      from: e.from, to: e.to,
      req: ['STATE', ...r.required].join(', '),
      opt: r.optional.length ? r.optional.join(', ') : tt('edge.nothing'),
    }));
  }
}

/** The diagram's keys: arrows (and Home/End) move between the legal transitions, Enter or Space selects, Escape deselects. */
function diagramKey(e) {
  const fig = $('#pg-diagram');
  if (!haveModel()) return;
  const list = legalEdges();
  if (!list.length) return;
  const k = P.kb ? list.findIndex((x) => sameEdge(x, P.kb)) : -1;
  const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  let to = null;
  if (step) to = k < 0 ? (step > 0 ? 0 : list.length - 1) : (k + step + list.length) % list.length;
  else if (e.key === 'Home') to = 0;
  else if (e.key === 'End') to = list.length - 1;
  if (to !== null) {
    e.preventDefault();
    P.kbOn = true;
    P.kb = list[to];
    markKb();
    showEdgeInfo();
    revealKb(fig);
    status(tt('edge.move', { from: P.kb.from, to: P.kb.to, k: to + 1, n: list.length }));
  } else if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    P.kbOn = true;
    if (k < 0) P.kb = firstKb(list);
    if (P.kb) selectEdge(P.kb);
  } else if (e.key === 'Escape' && P.pinned) {
    e.preventDefault();
    const was = P.pinned;
    P.pinned = null;
    renderDiagram();
    status(tt('edge.unsel', was));
  }
}

/**
 * When the diagram is wider than its box (a narrow screen), scrolls the box sideways so the
 * current state's node is in view; the page itself does not move.
 */
function showCurrentNode(fig) {
  if (fig.scrollWidth <= fig.clientWidth + 1) return;
  const node = fig.querySelector('.pg-node.cur') || fig.querySelector('.pg-node');
  if (!node) return;
  const f = fig.getBoundingClientRect(), n = node.getBoundingClientRect();
  fig.scrollLeft += (n.left + n.width / 2) - (f.left + fig.clientWidth / 2);
}

/** QPs of a read-only (raw) session, from the server's state. */
function rawQps() {
  const rec = P.report && P.report.steps && P.report.steps[P.report.steps.length - 1];
  return rec && rec.state && Array.isArray(rec.state.qps) ? rec.state.qps.map((q) => ({ name: q.name, host: q.host, type: q.qp_type || 'RC' })) : [];
}

function rawStates(n) {
  const rec = P.report && P.report.steps && P.report.steps[n - 1];
  return rec && rec.state && Array.isArray(rec.state.qps) ? Object.fromEntries(rec.state.qps.map((q) => [q.name, q.state])) : {};
}

// ---------------------------------------------------------------------------------------------
// State after the selected step: QPs with their SQ and RQ, CQs with their entries, MRs

function tableHtml(cls, head, rows) {
  if (!rows.length) return `<p class="muted">${esc(tt('empty.q'))}</p>`;
  return `<div class="pg-scroll"><table class="pg-table ${cls}"><thead><tr>${head.map((x) => `<th scope="col">${esc(x)}</th>`).join('')}</tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>`;
}

const chip = (wr, text) => `<span class="pg-wr" style="border-color:${wrColor(wr)}">${text}</span>`;

function renderState() {
  const n = P.selected;
  const recs = P.report && P.report.steps;
  const rec = recs && n ? recs[n - 1] : null;
  $('#pg-after-h').textContent = n ? tt('after', { n }) : tt('after.none');
  const el = $('#pg-state');
  if (!rec) { el.innerHTML = ''; return; }
  const st = rec.state || {};
  const q = (l) => (l && l.length ? l.map((w) => chip(w.wr_id, `#${esc(w.wr_id)}${w.opcode ? ` ${esc(w.opcode)}` : ''}${w.stage ? ` <span class="muted">${esc(w.stage)}</span>` : ''}`)).join(' ') : `<span class="muted">${esc(tt('empty.q'))}</span>`);
  const qps = (st.qps || []).map((x) => `<tr data-qp="${esc(x.name)}"><th scope="row">${esc(x.name)}</th><td>${esc(x.host)}</td><td class="mono">${hex(x.qpn)}</td><td>${esc(x.qp_type)}</td>
    <td><strong class="pg-st s-${esc(x.state)}">${esc(x.state)}</strong></td><td>${q(x.sq)}</td><td>${q(x.rq)}</td></tr>`);
  const cqs = (st.cqs || []).map((c) => `<tr data-cq="${esc(c.name)}"><th scope="row">${esc(c.name)}</th><td>${esc(c.host)}</td><td>${esc(c.cqe)}</td>
    <td>${c.entries && c.entries.length ? c.entries.map((e) => chip(e.wr_id, `#${esc(e.wr_id)} <span class="${e.status === 'SUCCESS' ? '' : 'error'}">${esc(e.status)}</span>${e.opcode ? ` ${esc(e.opcode)}` : ''} ${esc(e.byte_len)} B`)).join(' ') : `<span class="muted">${esc(tt('empty.q'))}</span>`}</td></tr>`);
  const mrs = (st.mrs || []).map((m) => `<tr data-mr="${esc(m.name)}"><th scope="row">${esc(m.name)}</th><td>${esc(m.host)}</td><td class="mono">${hex(m.lkey)}</td><td class="mono">${hex(m.rkey)}</td>
    <td>${esc(m.len)}</td><td>${esc((m.access || []).join(', ') || '—')}</td></tr>`);
  el.innerHTML = `<h3>${esc(tt('qps'))}</h3>${tableHtml('qps', [tt('col.name'), tt('col.host'), tt('col.qpn'), tt('col.type'), tt('col.state'), tt('sq'), tt('rq')], qps)}
    <h3>${esc(tt('cqs'))}</h3>${tableHtml('cqs', [tt('col.name'), tt('col.host'), tt('col.cqe'), tt('entries')], cqs)}
    <h3>${esc(tt('mrs'))}</h3>${tableHtml('mrs', [tt('col.name'), tt('col.host'), 'lkey', 'rkey', tt('col.len'), tt('col.access')], mrs)}`;
}

// ---------------------------------------------------------------------------------------------
// The ladder: one column per host, one arrow per frame

const LADDER_MAX = 400;

// The frames the ladder drew, in order: a click on one opens it in the inspector.
let ladderFrames = [];

function ladderSvg(groups, hosts) {
  ladderFrames = [];
  const W = 720, left = 92, right = 20, top = 34, row = 24, sep = 22;
  const hs = hosts.length ? hosts : ['a', 'b'];
  const colX = (hname) => {
    const k = Math.max(0, hs.indexOf(hname));
    return hs.length === 1 ? (left + W - right) / 2 : left + 40 + k * ((W - left - right - 80) / (hs.length - 1));
  };
  let y = top;
  let body = '';
  let drawn = 0, total = 0;
  for (const g of groups) {
    total += g.frames.length;
    if (g.label) { body += `<text class="pg-lstep" x="4" y="${y + 14}">${esc(g.label)}</text>`; y += sep; }
    for (const f of g.frames) {
      if (drawn >= LADDER_MAX) break;
      drawn++;
      const x1 = colX(f.src), x2 = colX(f.dst);
      const y1 = y + 6, y2 = y + row - 4;
      // RoCE frames take the colour of the WR they carry or answer; the rest are grey.
      const col = f.kind === 'roce' ? wrColor(f.wr_id) : '#7a838c';
      const xe = f.dropped ? x1 + (x2 - x1) * 0.6 : x2;
      const ye = f.dropped ? y1 + (y2 - y1) * 0.6 : y2;
      const label = `${f.opcode || f.kind || '?'}${f.psn != null ? ` PSN ${f.psn}` : ''}`;
      const tip = `${label} · ${f.src} → ${f.dst} · ${fmtPs(f.t_ps)} · ${f.len ?? '?'} B${f.qpn != null ? ` · QPN ${hex(f.qpn)}` : ''}${f.wr_id != null ? ` · wr_id ${f.wr_id}` : ''}${f.dropped ? ' · dropped' : ''}`;
      const mk = WR_COLORS.indexOf(col);
      ladderFrames.push({ frame: f, title: label });
      body += `<g class="pg-frame k-${esc(f.kind || 'other')}${f.dropped ? ' dropped' : ''}" data-fi="${ladderFrames.length - 1}" data-opcode="${esc(f.opcode || '')}" data-psn="${esc(f.psn ?? '')}" data-wr-id="${esc(f.wr_id ?? '')}" data-dropped="${!!f.dropped}">
        <title>${esc(tip)}</title>
        <text class="pg-lt" x="4" y="${y + 15}">${esc(fmtPs(f.t_ps))}</text>
        <line x1="${x1}" y1="${y1}" x2="${xe}" y2="${ye}" stroke="${col}" marker-end="${f.dropped ? 'none' : `url(#pg-larr-${mk < 0 ? 'g' : mk})`}"${f.dropped ? ' stroke-dasharray="5 4"' : ''}/>
        ${f.dropped ? `<text class="pg-x" x="${xe + 4}" y="${ye + 4}">✗</text>` : ''}
        <text class="pg-ll" x="${(x1 + x2) / 2}" y="${y + 8}" fill="${col}">${esc(label)}</text></g>`;
      y += row;
    }
  }
  if (total > drawn) { body += `<text class="pg-lstep" x="4" y="${y + 14}">${esc(tt('frames.more', { n: total - drawn }))}</text>`; y += sep; }
  const H = y + 10;
  const lanes = hs.map((hn) => `<text class="pg-lh" x="${colX(hn)}" y="18">${esc(hn)}</text><line class="pg-life" x1="${colX(hn)}" x2="${colX(hn)}" y1="24" y2="${H - 4}"/>`).join('');
  return `<svg class="pg-ladder" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(tt('ladder'))}">
    <defs>${[...WR_COLORS, '#7a838c'].map((c, k) => `<marker id="pg-larr-${k < WR_COLORS.length ? k : 'g'}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="${c}"/></marker>`).join('')}</defs>
    ${lanes}${body}</svg>`;
}

/**
 * The ladder's frames as a table (the frames drawn, at most LADDER_MAX), in a disclosure under it:
 * time, from → to, opcode, PSN, QPN, length, wr_id and whether the fabric dropped it; one row
 * group per step when the ladder shows several.
 */
function ladderTableHtml(groups, view) {
  const cols = [tt('lt.time'), tt('lt.route'), tt('lt.opcode'), 'PSN', 'QPN', tt('lt.len'), 'wr_id', tt('lt.dropped')];
  let left = LADDER_MAX, total = 0;
  const bodies = groups.map((g) => {
    total += g.frames.length;
    const frames = g.frames.slice(0, Math.max(0, left));
    left -= frames.length;
    if (!frames.length) return '';
    const head = g.label ? `<tr class="pg-lt-group"><th scope="colgroup" colspan="${cols.length}">${esc(g.label)}</th></tr>` : '';
    const rows = frames.map((f) => `<tr class="${f.dropped ? 'dropped' : ''}">
      <th scope="row" class="num">${esc(fmtPs(f.t_ps))}</th><td>${esc(f.src)} → ${esc(f.dst)}</td><td>${esc(f.opcode || f.kind || '?')}</td>
      <td class="num">${esc(f.psn ?? '—')}</td><td class="mono">${f.qpn != null ? hex(f.qpn) : '—'}</td><td class="num">${esc(f.len ?? '—')}</td>
      <td class="num">${esc(f.wr_id ?? '—')}</td><td>${esc(tt(f.dropped ? 'yes' : 'no'))}</td></tr>`).join('');
    return `<tbody>${head}${rows}</tbody>`;
  }).join('');
  const drawn = Math.min(total, LADDER_MAX);
  return `<details class="pg-ltbox" id="pg-ladder-tablebox"${P.ladderTable ? ' open' : ''}>
      <summary>${esc(tt('lt.summary'))}</summary>
      <div class="pg-lt-scroll" tabindex="0" role="group" aria-label="${esc(tt('lt.scroll'))}">
        <table class="pg-table pg-lt" data-testid="ladder-table" data-rows="${drawn}"><caption class="pg-sr">${esc(tt('lt.caption', { view }))}</caption>
          <thead><tr>${cols.map((c) => `<th scope="col">${esc(c)}</th>`).join('')}</tr></thead>${bodies}</table>
      </div>${total > drawn ? `<p class="pg-lt-note">${esc(tt('frames.more', { n: total - drawn }))}</p>` : ''}
    </details>`;
}

/** The wr_ids a post_send step posts (its `wr_id`, or those of its `wr` list), as strings. */
function wrIdsOf(s) {
  if (!s || s.call !== 'post_send') return [];
  const ids = Array.isArray(s.wr) ? s.wr.map((w) => w && w.wr_id) : [s.wr_id];
  return ids.filter((x) => x !== undefined && x !== null).map(String);
}

/**
 * The frames of the WRs that step `n` (a post_send) posted, grouped by the step that put them on
 * the wire: that step and every later one, up to a later post_send on the same QP that reuses one
 * of those wr_ids. Only frames of that QP's connection count: sent from its host, or to its QPN.
 */
function wrGroups(n) {
  const recs = P.report.steps;
  const s = P.session.steps[n - 1];
  const ids = new Set(wrIdsOf(s));
  const rec = recs[n - 1];
  const me = rec && rec.state ? (rec.state.qps || []).find((q) => q.name === s.qp) : null;
  const groups = [];
  for (let k = n - 1; k < recs.length; k++) {
    const later = P.session.steps[k];
    if (k > n - 1 && later && later.call === 'post_send' && later.qp === s.qp && wrIdsOf(later).some((x) => ids.has(x))) break;
    const frames = (recs[k].frames || []).filter((f) => f.wr_id != null && ids.has(String(f.wr_id))
      && (!me || f.qpn === me.qpn || f.src === me.host));
    if (frames.length) groups.push({ label: tt('ladder.step', { n: k + 1, call: recs[k].call }), frames });
  }
  return groups;
}

/**
 * The ladder of the selected step, labelled with which view it is: for a post_send, every frame
 * of its WRs from that step on (they go on the wire while later steps let time pass); for any
 * other step, the frames during that step; with "show every step", all of them.
 */
function renderLadder() {
  const el = $('#pg-ladder');
  const view = $('#pg-ladder-view');
  const recs = P.report && P.report.steps;
  const data = $('#pg-ladder-data');
  if (!recs || !recs.length) { el.innerHTML = ''; data.innerHTML = ''; view.textContent = ''; el.dataset.view = ''; return; }
  const n = P.selected;
  const rec = recs[n - 1];
  const s = P.session.raw ? null : P.session.steps[n - 1];
  let mode = '', groups = [], label = tt('ladder.view.none'), empty = '';
  if (P.ladderAll) {
    mode = 'all';
    groups = recs.filter((r) => r.frames && r.frames.length).map((r) => ({ label: tt('ladder.step', { n: r.index, call: r.call }), frames: r.frames }));
    label = tt('ladder.view.all');
    empty = tt('no.frames.all');
  } else if (rec && wrIdsOf(s).length) {
    mode = 'wr';
    groups = wrGroups(n);
    label = tt('ladder.view.wr', { n, ids: wrIdsOf(s).join(', ') });
    empty = tt('no.wrframes');
  } else if (rec) {
    mode = 'step';
    groups = rec.frames && rec.frames.length ? [{ label: null, frames: rec.frames }] : [];
    label = tt('ladder.view.step', { n, call: rec.call });
    empty = tt('no.frames');
  }
  view.textContent = label;
  el.dataset.view = mode;
  el.innerHTML = groups.length ? ladderSvg(groups, P.report.hosts || P.session.hosts) : (empty ? `<p class="muted">${esc(empty)}</p>` : '');
  el.onclick = (e) => {
    const g = e.target.closest('.pg-frame[data-fi]');
    const x = g && ladderFrames[Number(g.dataset.fi)];
    if (x) document.dispatchEvent(new CustomEvent('rdmalab:inspect', { detail: x }));
  };
  data.innerHTML = groups.length ? ladderTableHtml(groups, label) : '';
}

// ---------------------------------------------------------------------------------------------
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
  renderToml();
  $('#pg-export-expect').disabled = !!P.session.raw || !P.report;
  $('#pg-export').disabled = !P.session.raw && !P.session.steps.length;
}

const stepCount = () => (P.session.raw ? (P.report ? P.report.steps.length : 0) : P.session.steps.length);

function status(text, isError = false) {
  const s = $('#pg-status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

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
    const msg = errorText(e);
    if (e.status === 422 && edit && takeBack(edit)) {
      const why = String(e.message || msg).replace(/^\d+:\d+:\s*/, '');
      updateUrl();
      // The forms stay as they are: the learner's values, and the focus, are where they were.
      renderAll(false);
      if (edit.added) {
        status('');
        const err = $(`form.pg-add[data-call="${edit.added.call}"] .pg-ferr`);
        if (err) { err.textContent = tt('f.refused', { e: why }); err.hidden = false; }
        else status(tt('f.refused', { e: why }), true);
      } else {
        status(tt('del.refused', { n: edit.at, e: why }), true);
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
    P.error = { message: e.message || msg, step };
    renderAll();
    status(`${tt('run.error')}: ${msg}`, true);
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
      renderSteps(); renderDiagram(); renderState(); renderLadder();
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
  });
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

export async function renderPlayground(main, live) {
  P = newPage(main, live);
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
      </div>
      <details class="pg-paste"><summary>${esc(tt('paste'))}</summary>
        <label for="pg-paste-text">${esc(tt('paste.label'))}</label>
        <textarea id="pg-paste-text" data-testid="import-text" rows="8" spellcheck="false"></textarea>
        <button type="button" id="pg-paste-go" data-testid="import-paste">${esc(tt('paste.go'))}</button>
      </details>
      <p id="pg-status" class="status" role="status" aria-live="polite"></p>
      <div class="pg-grid">
        <div class="pg-col pg-main">
          <section class="pg-addbox" aria-labelledby="pg-add-h">
            <h2 id="pg-add-h">${esc(tt('add'))}</h2>
            <div class="pg-tabs" role="tablist" aria-label="${esc(tt('add.pick'))}">${tabsHtml()}</div>
            <div id="pg-forms" class="pg-forms"></div>
          </section>
          <h2>${esc(tt('steps'))}</h2>
          <div id="pg-summary"></div>
          <p id="pg-empty" class="muted">${esc(tt('empty'))}</p>
          <div id="pg-rawnote" class="pg-raw" hidden><p>${esc(tt('raw'))}</p><button type="button" id="pg-rawedit" class="secondary">${esc(tt('raw.edit'))}</button></div>
          <div class="pg-stepbox"><ol id="pg-steps" class="pg-steps"></ol></div>
        </div>
        <div class="pg-col pg-side">
          <h2>${esc(tt('diagram'))}</h2>
          <div class="pg-qpsel"><label for="pg-qp">${esc(tt('f.qp'))}</label> <select id="pg-qp"></select></div>
          <figure id="pg-diagram" class="pg-diagram" data-testid="qp-state" data-state="" role="group"></figure>
          <div id="pg-edge" class="pg-edgeinfo"></div>
          <h2 id="pg-after-h">${esc(tt('after.none'))}</h2>
          <div id="pg-state"></div>
          <h2>${esc(tt('ladder'))}</h2>
          <label class="pg-inl"><input type="checkbox" id="pg-all"> ${esc(tt('ladder.all'))}</label>
          <p id="pg-ladder-view" class="pg-ladder-view"></p>
          <div id="pg-ladder" class="pg-ladderbox" data-testid="ladder"></div>
          <div id="pg-ladder-data"></div>
          <details class="pg-file-view"><summary>${esc(tt('file'))}</summary><pre id="pg-toml" class="mono" tabindex="0"></pre></details>
        </div>
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
}
