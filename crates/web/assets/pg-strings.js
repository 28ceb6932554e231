// Strings of the verbs playground (zh and en) and the explanation of every completion status and errno.
// Split out of playground.js; see that file for how the page works.

import { tFrom } from './i18n.js';

// ---------------------------------------------------------------------------------------------
// Strings

export const S = {
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
    'run.error': '会话无法运行', 'run.error.is': '会话无法运行：{e}', 'aborted': '会话中途停止：{why}',
    'raw': '导入的文件用到了本页表单不支持的写法：按原样运行，只读。', 'raw.edit': '丢弃并新建会话',
    'share.bad': '链接里的会话无法读取：{e}',
    'sel': '选中第 {n} 步', 'del': '删除第 {n} 步', 'pending': '未运行', 'invalid': '文件在这一步出错：{e}',
    'ok': '成功', 'nocompl': '没有完成', 'skipped': '跳过', 'failed': '失败',
    'why': '为什么？', 'what': '含义', 'cause': '常见原因', 'check': '检查什么',
    'exp.failed': '期望 {what}：应为 {exp}，实际 {got}',
    'rule': '仿真器给出的详细原因', 'at': '第 {line} 行第 {col} 列：', 'parser.words': 'TOML 解析器（toml 库）的原话（英文）',
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
    'nak': 'NAK：{why}', 'nak.PsnSequenceError': 'PSN 序列错误', 'nak.InvalidRequest': '无效请求', 'nak.RemoteAccessError': '远端访问错误',
    'nak.RemoteOperationalError': '远端操作错误', 'nak.InvalidRdRequest': '无效的 RD 请求',
    'lt.time': '时间', 'lt.route': '从 → 到', 'lt.opcode': '操作码', 'lt.len': '长度（字节，含 FCS）', 'lt.dropped': '被丢弃',
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
    'run.error': 'The session cannot run', 'run.error.is': 'The session cannot run: {e}', 'aborted': 'The session stopped early: {why}',
    'raw': 'The imported file uses things the forms here do not edit: it runs as is, read-only.', 'raw.edit': 'Discard it and start a new session',
    'share.bad': 'The session in the link cannot be read: {e}',
    'sel': 'select step {n}', 'del': 'delete step {n}', 'pending': 'not run', 'invalid': 'the file breaks here: {e}',
    'ok': 'ok', 'nocompl': 'no completion', 'skipped': 'skipped', 'failed': 'failed',
    'why': 'Why?', 'what': 'What it means', 'cause': 'Usual cause', 'check': 'What to check',
    'exp.failed': 'expected {what}: {exp}, got {got}',
    'rule': 'the rule broken', 'at': 'line {line}, column {col}: ', 'parser.words': 'the TOML parser\'s own words (the toml crate)',
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
    'nak': 'NAK: {why}', 'nak.PsnSequenceError': 'PSN sequence error', 'nak.InvalidRequest': 'invalid request', 'nak.RemoteAccessError': 'remote access error',
    'nak.RemoteOperationalError': 'remote operational error', 'nak.InvalidRdRequest': 'invalid RD request',
    'lt.time': 'time', 'lt.route': 'from → to', 'lt.opcode': 'opcode', 'lt.len': 'length (bytes, with FCS)', 'lt.dropped': 'dropped',
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
export const tt = (key, vars) => tFrom(S, key, vars);

// ---------------------------------------------------------------------------------------------
// Explanations of every completion status and errno: [what it means, usual cause, what to check].

export const WC_EXPLAIN = {
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
    zh: ['远端访问错误：对端拒绝了对它内存的访问。', 'rkey 不对，远端地址加长度超出对端 MR，或者对端的 MR 或 QP 没有打开 REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC。', 'WR 里 remote 一项给的 rkey 和 offset、对端 MR 的访问权限、对端 QP 在 RESET→INIT 时给的 access。'],
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

export const ERRNO_EXPLAIN = {
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
