// The packet inspector: a frame's headers in wire order, field by field.
//
// Any page dispatches `rdmalab:inspect` with {frame, title} (contract.md); frame.wire holds the
// frame's bytes as hex (payload cut to its first 64 bytes, frame.wire_elided says which bytes
// were left out). The server decodes them with the wire crate (POST /api/frame/dissect): the
// field table, the bit-layout diagrams and the hex dump below are all drawn from that answer,
// nothing here knows a header layout. Server-rendered ladders mark a frame with data-wire; one
// delegated click handler turns those clicks into the same event.

import { lang, esc } from './i18n.js';
import { api } from './app.js';

const TEXT = {
  zh: {
    title: '帧检查器', close: '关闭', loading: '正在解码…', nobytes: '这个帧没有带字节，无法逐字段解码。',
    error: '解码失败：{e}', frame: '{n} 字节（不含 FCS）', framefcs: '{n} 字节（不含 FCS）；加上 4 字节 FCS 共 {m} 字节，就是帧列表里的“长度”。', elided: '载荷第 {a}–{b} 字节（共 {n} 字节）没有随页面发送，显示为省略；覆盖它们的校验（ICRC、TCP 校验和）不检查。',
    ok: '仿真器自己的解析器（wire::parse_frame）接受这个帧：每个校验和与 ICRC 都正确。', bad: '仿真器的解析器拒绝这个帧：{e}',
    stopped: '解码在这里停下：{e}', bits: '位', bytes: '字节', field: '字段', value: '值', meaning: '含义', offset: '位偏移',
    width: '宽度', spec: '定义', hex: '十六进制转储', layout: '位布局（每行 32 位）', gap: '… 省略 {n} 字节 …',
    pick: '点一个字段：它的字节在下面的转储里高亮。', nolayout: '{n} 字节，不画位布局。', more: '，另有 {n} 字节未显示',
    'm.multicast': '组播地址', 'm.rocev2': 'RoCEv2（IANA 分配给 RoCE 的端口 4791）', 'm.default_pkey': '默认分区，完全成员',
    'm.bytes': '{n} 字节', 'm.reserved': '保留：发送为 0，接收时忽略', 'm.priority': '优先级 {p}（PFC 按它暂停）',
    'm.ecn.Not-ECT': '不支持 ECN：拥塞时交换机只能丢包', 'm.ecn.ECT(0)': '支持 ECN（ECT(0)）：拥塞时交换机可标记 CE', 'm.ecn.ECT(1)': '支持 ECN（ECT(1)）', 'm.ecn.CE': '拥塞已标记（CE）：RoCEv2 接收方回 CNP，TCP 接收方在 ACK 里置 ECE',
    'm.check.good': '校验正确', 'm.check.bad': '校验错误：按字节算出的是 {c}', 'm.check.not_computed': '为 0：发送方没有计算（RoCEv2 网卡都这样发，ICRC 保护整个包）', 'm.check.unchecked': '未检查：它覆盖的字节被省略了',
    'm.ack': 'ACK，信用代码 {c}：响应方还有 {n} 个接收 WQE（代码是对数刻度，不是个数）', 'm.ack31': 'ACK，信用代码 31：不带信用值，请求方不受信用限制（rxe 总是这样发）', 'm.rnr': 'RNR NAK：接收方还没有接收 WQE，{w} 后重试（定时器代码 {t}）', 'm.nak': 'NAK：{n}（代码 {c}）',
    'nak.PSN sequence error': 'PSN 序号错误——有包丢了，请求方从这个 PSN 重发', 'nak.Invalid request': '无效请求', 'nak.Remote access error': '远端访问错误（R_Key、地址范围或权限不符）', 'nak.Remote operational error': '远端操作错误', 'nak.Invalid RD request': '无效的 RD 请求',
    'm.opcode': '{w}（{t}）', 'm.macctl.PAUSE': 'PAUSE：暂停整条链路', 'm.macctl.PFC': 'PFC：按优先级暂停',
    'm.class_enable': '作用于优先级 {p}', 'm.class_enable.none': '不作用于任何优先级', 'm.quanta': '{q} 个时间单位 × 512 位时间 = {b} 位时间', 'm.quanta0': '0：恢复发送',
    'm.tcp_flags': '置位：{n}', 'm.tcp_flags.none': '没有置位的标志', 'm.sack_held': '响应方已收到 NAK 所报 PSN 之后的 {n} 个包',
    'm.tcp_option.EOL': '选项结束', 'm.tcp_option.NOP': '填充', 'm.tcp_option.MSS': '最大报文段长度', 'm.tcp_option.WS': '窗口缩放', 'm.tcp_option.SACK_PERM': '允许 SACK', 'm.tcp_option.SACK': 'SACK 块', 'm.tcp_option.TS': '时间戳',
    'm.tcp_option.other': '选项种类 {k}', 'm.ethertype': '{n}', 'm.protocol': '{n}',
    irn: 'rdmalab 自己的扩展（不是 IBTA 标准）：选择性重传需要的逐包信息。',
  },
  en: {
    title: 'Frame inspector', close: 'Close', loading: 'Decoding…', nobytes: 'This frame carries no bytes, so it cannot be decoded field by field.',
    error: 'Could not decode: {e}', frame: '{n} bytes (FCS not included)', framefcs: '{n} bytes without the FCS; {m} with its 4 bytes, the length the frame list shows.', elided: 'Payload bytes {a}–{b} ({n} bytes) were not sent with the page and show as left out; checks that cover them (ICRC, TCP checksum) are not checked.',
    ok: 'The simulator\'s own parser (wire::parse_frame) accepts this frame: every checksum and the ICRC hold.', bad: 'The simulator\'s parser refuses this frame: {e}',
    stopped: 'Decoding stopped here: {e}', bits: 'bits', bytes: 'bytes', field: 'Field', value: 'Value', meaning: 'Meaning', offset: 'Bit offset',
    width: 'Width', spec: 'Defined in', hex: 'Hex dump', layout: 'Bit layout (32 bits a row)', gap: '… {n} bytes left out …',
    pick: 'Pick a field: its bytes light up in the dump below.', nolayout: '{n} bytes; no bit layout drawn.', more: ', {n} more bytes not shown',
    'm.multicast': 'multicast address', 'm.rocev2': 'RoCEv2 (port 4791, assigned to RoCE by IANA)', 'm.default_pkey': 'default partition, full member',
    'm.bytes': '{n} bytes', 'm.reserved': 'reserved: sent as 0, ignored on receipt', 'm.priority': 'priority {p} (what PFC pauses)',
    'm.ecn.Not-ECT': 'not ECN-capable: a congested switch can only drop', 'm.ecn.ECT(0)': 'ECN-capable (ECT(0)): a congested switch may mark CE', 'm.ecn.ECT(1)': 'ECN-capable (ECT(1))', 'm.ecn.CE': 'congestion experienced (CE): a RoCEv2 receiver answers with a CNP, a TCP receiver sets ECE in its ACKs',
    'm.check.good': 'verifies', 'm.check.bad': 'wrong: the bytes give {c}', 'm.check.not_computed': '0: not computed by the sender (RoCEv2 NICs send it so; the ICRC protects the packet)', 'm.check.unchecked': 'not checked: it covers bytes that were left out',
    'm.ack': 'ACK, credit code {c}: {n} receive WQEs free at the responder (the code is a log scale, not a count)', 'm.ack31': 'ACK, credit code 31: no credit count; the requester is not limited (what rxe always sends)', 'm.rnr': 'RNR NAK: no receive WQE yet; retry after {w} (timer code {t})', 'm.nak': 'NAK: {n} (code {c})',
    'nak.PSN sequence error': 'PSN sequence error: a packet was lost; the requester resends from this PSN', 'nak.Invalid request': 'invalid request', 'nak.Remote access error': 'remote access error (R_Key, address range or rights)', 'nak.Remote operational error': 'remote operational error', 'nak.Invalid RD request': 'invalid RD request',
    'm.opcode': '{w} ({t})', 'm.macctl.PAUSE': 'PAUSE: the whole link', 'm.macctl.PFC': 'PFC: per priority',
    'm.class_enable': 'addresses priority {p}', 'm.class_enable.none': 'addresses no priority', 'm.quanta': '{q} quanta × 512 bit times = {b} bit times', 'm.quanta0': '0: resume',
    'm.tcp_flags': 'set: {n}', 'm.tcp_flags.none': 'no flag set', 'm.sack_held': 'the responder holds {n} packets after the PSN the NAK names',
    'm.tcp_option.EOL': 'end of options', 'm.tcp_option.NOP': 'padding', 'm.tcp_option.MSS': 'maximum segment size', 'm.tcp_option.WS': 'window scale', 'm.tcp_option.SACK_PERM': 'SACK permitted', 'm.tcp_option.SACK': 'SACK blocks', 'm.tcp_option.TS': 'timestamps',
    'm.tcp_option.other': 'option kind {k}', 'm.ethertype': '{n}', 'm.protocol': '{n}',
    irn: 'rdmalab\'s own extension (not IBTA): the per-packet information selective repeat needs.',
  },
};

// Field names that are words in their document; mnemonics (OpCode, PSN, R_Key, TTL) stay as
// they are in both languages.
const NAMES = {
  zh: {
    Destination: '目的地址', Source: '源地址', EtherType: 'EtherType', 'Total Length': '总长度', Identification: '标识',
    Reserved: '保留', 'Fragment Offset': '分片偏移', Protocol: '协议', 'Header Checksum': '首部校验和',
    'Source Address': '源地址', 'Destination Address': '目的地址', Options: '选项', 'Source Port': '源端口',
    'Destination Port': '目的端口', Length: '长度', Checksum: '校验和', 'Sequence Number': '序号',
    'Acknowledgment Number': '确认号', 'Data Offset': '数据偏移', Window: '窗口', 'Urgent Pointer': '紧急指针',
    Kind: '种类', Padding: '填充', Shift: '移位数', 'Left Edge': '左边界', 'Right Edge': '右边界', Data: '数据',
    Pad: '填充', 'DMA Length': 'DMA 长度', 'Immediate Data': '立即数', Offset: '偏移', 'Trigger PSN': '触发 PSN',
    'SACK map': 'SACK 位图', Opcode: '操作码', Version: '版本',
    BaseVersion: '基础版本', MgmtClass: '管理类别', ClassVersion: '类别版本', R: '响应位', Method: '方法',
    Status: '状态', ClassSpecific: '类别专用', TransactionID: '事务号', AttributeID: '属性号',
    AttributeModifier: '属性修饰', LocalCommID: '本端通信号', RemoteCommID: '对端通信号', ServiceID: '服务号',
    LocalCAGUID: '本端 CA GUID', LocalQKey: '本端 Q_Key', LocalQPN: '本端 QP 号', ResponderResources: '响应方资源数',
    LocalEECN: '本端 EE 上下文号', LocalEEContext: '本端 EE 上下文', InitiatorDepth: '发起方深度',
    RemoteEECN: '对端 EE 上下文号', RemoteCMResponseTimeout: '对端 CM 响应超时', TransportServiceType: '传输服务类型',
    EndToEndFlowControl: '端到端流控', StartingPSN: '起始 PSN', LocalCMResponseTimeout: '本端 CM 响应超时',
    RetryCount: '重试次数', PathMTU: '路径 MTU', RDCExists: 'RDC 存在', RNRRetryCount: 'RNR 重试次数',
    MaxCMRetries: 'CM 最大重试次数', SRQ: '共享接收队列', ExtendedTransportType: '扩展传输类型',
    PrimaryLocalLID: '主路径本端 LID', PrimaryRemoteLID: '主路径对端 LID', PrimaryLocalGID: '主路径本端 GID',
    PrimaryRemoteGID: '主路径对端 GID', PrimaryFlowLabel: '主路径流标签', PrimaryPacketRate: '主路径包速率',
    PrimaryTrafficClass: '主路径流量类别', PrimaryHopLimit: '主路径跳数上限', PrimarySL: '主路径服务等级',
    PrimarySubnetLocal: '主路径同子网', PrimaryLocalACKTimeout: '主路径本端 ACK 超时', AlternatePath: '备用路径',
    PrivateData: '私有数据', TargetACKDelay: '目标 ACK 延迟', FailoverAccepted: '已接受故障切换',
  },
  en: {},
};

// What each field is for, by header id and field name.
const ABOUT = {
  zh: {
    'eth.Destination': '下一跳的 MAC 地址。', 'eth.Source': '发送端口的 MAC 地址。', 'eth.EtherType': '后面是什么：0x0800 IPv4，0x8100 VLAN 标签，0x8808 MAC 控制帧（PAUSE/PFC）。',
    'vlan.PCP': '优先级（0–7）：交换机按它分队列，PFC 按它暂停。', 'vlan.DEI': '可丢弃指示。', 'vlan.VID': 'VLAN 号；0 表示只带优先级。',
    'ipv4.DSCP': '区分服务码点：交换机据此映射流量类别。', 'ipv4.ECN': '显式拥塞通知的两位：DCQCN 和 DCTCP 都靠它。', 'ipv4.TTL': '生存时间：每经过一跳减 1。', 'ipv4.DF': '不分片：RoCEv2 必须置 1（附录 A17 CA17-7），RoCE 包从不分片。',
    'ipv4.Header Checksum': '只覆盖 IPv4 首部。', 'udp.Source Port': 'RoCEv2 用它做 ECMP 熵：每个 QP 一个值，同一连接的包走同一路径。', 'udp.Destination Port': '4791 表示后面是 InfiniBand 传输头。',
    'bth.OpCode': '高 3 位是传输服务（RC/UC/RD/UD），低 5 位是操作；它决定后面跟哪些扩展头。', 'bth.SE': '请求事件（Solicited Event）：接收方的完成队列若只等这类事件，这条消息完成时会触发通知。', 'bth.M': '迁移状态（MigReq）：自动路径迁移（APM）用。',
    'bth.PadCnt': '载荷后补了几个字节，使载荷长度是 4 的倍数。', 'bth.TVer': '传输头版本，只定义了 0。', 'bth.P_Key': '分区键：两端必须在同一分区。',
    'bth.FECN': '前向拥塞通知：InfiniBand 交换机拥塞时置位（附录 A10）；RoCEv2 端口忽略它（附录 A17 CA17-29），拥塞靠 IPv4 的 ECN 传达。', 'bth.BECN': '后向拥塞通知（附录 A10）：RoCEv2 端口同样忽略；rdmalab 发出的 CNP 把它置 1。', 'bth.DestQP': '这个包要送到的目的 QP 号。',
    'bth.A': '请求确认：响应方必须为这个包回 ACK。', 'bth.IRN': 'IBTA 的 Resv7 保留字段的最高位；rdmalab 用它标出后面有 IRN 扩展头。', 'bth.Resv7': 'IBTA 的 Resv7 共 7 位，最高一位被 rdmalab 的 IRN 标志占用，这里是剩下的 6 位。', 'bth.Resv6': 'FECN、BECN 之后的 6 个保留位。', 'bth.PSN': '包序号（24 位）：响应方按它检查丢包和重复。',
    'reth.VA': '远端内存的虚拟地址：数据写到（或读自）这里。', 'reth.R_Key': '远端内存区的钥匙：不匹配就是远端访问错误。', 'reth.DMA Length': '整条消息的字节数（不是这个包的）。',
    'aeth.Syndrome': '第 7 位保留；6–5 位是类型（00 ACK、01 RNR NAK、11 NAK）；低 5 位是信用代码、RNR 定时器代码或 NAK 代码。', 'aeth.MSN': '消息序号：响应方已完成的消息数。',
    'deth.Q_Key': 'UD 队列钥匙：接收 QP 的 Q_Key 必须相同。', 'deth.SrcQP': '发送方的 QP 号（UD 回复用）。', 'immdt.Immediate Data': '随消息送达的 32 位立即数，出现在接收方的完成里。',
    'ieth.R_Key': '要让接收方作废的 R_Key。', 'atomiceth.VA': '要原子操作的 8 字节远端地址。', 'atomiceth.SwapAddData': '交换值或加数。', 'atomiceth.CmpData': '比较值（只对 COMPARE_SWAP）。',
    'atomicacketh.OrigRemDt': '原子操作前远端那 8 字节的值。', 'icrc.ICRC': '不变 CRC（CRC-32）：先算 64 位全 1，再从 IPv4 首部算到载荷后的填充；路上会变的字段——IPv4 的 TTL、DSCP/ECN 和首部校验和、UDP 校验和、BTH 中 FECN/BECN 所在的那个字节——按全 1 计算。',
    'macctl.class_enable_vector': '每一位对应一个优先级：置位表示该优先级的暂停时间有效。', 'macctl.pause_time': '暂停时间，单位是 512 位时间。',
    'tcp.Sequence Number': '这个报文段第一个字节的序号。', 'tcp.Acknowledgment Number': '期望对方下一个字节的序号。', 'tcp.Window': '接收窗口（缩放前）。', 'tcp.ECE': 'ECN 回显：接收方看到了 CE 标记。', 'tcp.CWR': '拥塞窗口已减小。',
  },
  en: {
    'eth.Destination': 'The next hop\'s MAC address.', 'eth.Source': 'The sending port\'s MAC address.', 'eth.EtherType': 'What follows: 0x0800 IPv4, 0x8100 a VLAN tag, 0x8808 a MAC control frame (PAUSE/PFC).',
    'vlan.PCP': 'Priority (0–7): the switch queues by it and PFC pauses by it.', 'vlan.DEI': 'Drop eligible indicator.', 'vlan.VID': 'VLAN id; 0 means a priority tag only.',
    'ipv4.DSCP': 'Differentiated services codepoint: what a switch maps to a traffic class.', 'ipv4.ECN': 'The two ECN bits DCQCN and DCTCP rely on.', 'ipv4.TTL': 'Time to live: one less at every hop.', 'ipv4.DF': 'Don\'t fragment: RoCEv2 must set it (Annex A17 CA17-7); RoCE packets are never fragmented.',
    'ipv4.Header Checksum': 'Covers the IPv4 header only.', 'udp.Source Port': 'RoCEv2\'s ECMP entropy: one value per QP, so a connection\'s packets take one path.', 'udp.Destination Port': '4791 says an InfiniBand transport header follows.',
    'bth.OpCode': 'The top 3 bits are the transport service (RC/UC/RD/UD), the low 5 the operation; it decides which extension headers follow.', 'bth.SE': 'Solicited event: if the receiver\'s completion queue waits for solicited events only, this message\'s completion raises one.', 'bth.M': 'MigReq: migration state, for automatic path migration (APM).',
    'bth.PadCnt': 'How many bytes follow the payload to make it a multiple of 4.', 'bth.TVer': 'Transport header version; only 0 is defined.', 'bth.P_Key': 'Partition key: both ends must share the partition.',
    'bth.FECN': 'Forward congestion notification: set by a congested InfiniBand switch (Annex A10); a RoCEv2 port ignores it (Annex A17 CA17-29) and learns of congestion from the IPv4 ECN bits.', 'bth.BECN': 'Backward congestion notification (Annex A10): ignored by RoCEv2 ports too; rdmalab sets it in the CNPs it sends.', 'bth.DestQP': 'The destination QP this packet is for.',
    'bth.A': 'Acknowledge request: the responder must ACK this packet.', 'bth.IRN': 'The first bit of IBTA\'s reserved Resv7; rdmalab sets it when an IRN extension header follows.', 'bth.Resv7': 'IBTA\'s Resv7 has 7 bits; rdmalab\'s IRN flag takes the first, these are the other 6.', 'bth.Resv6': 'The 6 reserved bits after FECN and BECN.', 'bth.PSN': 'Packet sequence number (24 bits): how the responder sees loss and duplicates.',
    'reth.VA': 'The remote virtual address the data goes to (or comes from).', 'reth.R_Key': 'The remote memory region\'s key: a mismatch is a remote access error.', 'reth.DMA Length': 'Bytes of the whole message (not of this packet).',
    'aeth.Syndrome': 'Bit 7 is reserved; bits 6–5 are the type (00 ACK, 01 RNR NAK, 11 NAK); the low 5 are the credit code, the RNR timer code or the NAK code.', 'aeth.MSN': 'Message sequence number: messages the responder has completed.',
    'deth.Q_Key': 'UD queue key: the receiving QP\'s Q_Key must match.', 'deth.SrcQP': 'The sender\'s QP (for a UD reply).', 'immdt.Immediate Data': '32 bits delivered with the message, in the receiver\'s completion.',
    'ieth.R_Key': 'The R_Key the receiver is to invalidate.', 'atomiceth.VA': 'The remote 8 bytes the atomic works on.', 'atomiceth.SwapAddData': 'The swap value or the addend.', 'atomiceth.CmpData': 'The compare value (COMPARE_SWAP only).',
    'atomicacketh.OrigRemDt': 'The remote 8 bytes before the atomic.', 'icrc.ICRC': 'Invariant CRC (CRC-32): 64 one bits first, then the IPv4 header through the pad after the payload, with the fields that change on the way (IPv4 TTL, DSCP/ECN and header checksum, the UDP checksum, the BTH byte holding FECN/BECN) counted as all ones.',
    'macctl.class_enable_vector': 'One bit per priority: set means that priority\'s pause time is in force.', 'macctl.pause_time': 'Pause time, in units of 512 bit times.',
    'tcp.Sequence Number': 'Sequence number of the segment\'s first byte.', 'tcp.Acknowledgment Number': 'The next byte expected from the peer.', 'tcp.Window': 'Receive window (before scaling).', 'tcp.ECE': 'ECN echo: the receiver saw a CE mark.', 'tcp.CWR': 'Congestion window reduced.',
  },
};

// Headers drawn as a bit layout; the rest are byte runs (payload, pad).
const NO_LAYOUT = new Set(['payload', 'pad', 'ethpad', 'cnp']);

const L = () => (lang() === 'en' ? 'en' : 'zh');
function tr(key, vars = {}) {
  const s = TEXT[L()][key] ?? TEXT.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (_, k) => (vars[k] ?? ''));
}
const fieldName = (n) => NAMES[L()][n] ?? n;
const HEADER_NAMES = { zh: { payload: '载荷', pad: '填充', ethpad: '以太网填充', macctl: 'MAC 控制帧', cnp: 'CNP 保留区', irn: 'IRN 扩展头', eth: '以太网', mad: '管理数据报（MAD）', cmreq: 'CM 连接请求（REQ）', cmrep: 'CM 连接应答（REP）', cmrtu: 'CM 就绪（RTU）' }, en: {} };
const headerName = (h) => HEADER_NAMES[L()][h.kind] ?? h.name;
// Section references: the documents' own numbering, with the words around it in the language.
// The server's citations look like "IBTA Vol 1 ch. 9 (AETH); IBTA Annex A17 §A17.3.3"; the IRN
// paper's is a bibliographic reference and stays as it is.
const specText = (s) => {
  if (L() !== 'zh' || !s || s.startsWith('IRN:')) return s || '';
  return s.replace(/Vol (\d+) ch\. (\d+)/g, '第 $1 卷第 $2 章').replace(/Vol (\d+)/g, '第 $1 卷')
    .replace(/Rel ([\d.]+)/g, '$1 版').replace(/Annex /g, '附录 ').replace(/ \(([^)]*)\)/g, '（$1）')
    .replace(/; /g, '；').replace(/, /g, '、');
};

function meaningText(m, field) {
  if (!m) return '';
  switch (m.id) {
    case 'ecn': return tr(`m.ecn.${m.name}`);
    case 'check': return tr(`m.check.${m.verdict}`, { c: m.computed });
    case 'syndrome':
      if (m.type === 'ack') return m.count == null ? tr('m.ack31') : tr('m.ack', { c: m.credits, n: m.count });
      if (m.type === 'rnr_nak') return tr('m.rnr', { w: m.wait, t: m.timer });
      return tr('m.nak', { n: tr(`nak.${m.nak}`), c: m.code });
    case 'opcode': return tr('m.opcode', { w: m.words, t: m.name });
    case 'macctl': return TEXT[L()][`m.macctl.${m.name}`] ? tr(`m.macctl.${m.name}`) : m.name;
    case 'class_enable': return m.priorities.length ? tr('m.class_enable', { p: m.priorities.join(', ') }) : tr('m.class_enable.none');
    case 'quanta': return m.quanta === 0 ? tr('m.quanta0') : tr('m.quanta', { q: m.quanta, b: m.bit_times });
    case 'tcp_flags': return m.names.length ? tr('m.tcp_flags', { n: m.names.join(' ') }) : tr('m.tcp_flags.none');
    case 'tcp_option': return TEXT[L()][`m.tcp_option.${m.name}`] ? tr(`m.tcp_option.${m.name}`) : tr('m.tcp_option.other', { k: m.name });
    case 'ethertype': case 'protocol': return L() === 'zh' && m.name === 'MAC Control' ? 'MAC 控制帧' : m.name;
    default: return tr(`m.${m.id}`, m);
  }
}

function hexBytes(s) {
  const out = [];
  for (let i = 0; i + 1 < s.length; i += 2) out.push(parseInt(s.slice(i, i + 2), 16));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The bit layout: 32 columns a row, every field a box, drawn from the dissection's positions.

function layoutSvg(h, hi) {
  const W = 640, pad = 6, top = 16, rowH = 30, col = (W - 2 * pad) / 32;
  const rows = Math.ceil((h.len * 8) / 32);
  let body = '';
  for (const b of [0, 8, 16, 24, 31]) body += `<text class="insp-ruler" x="${pad + (b + 0.5) * col}" y="11">${b}</text>`;
  h.fields.forEach((f, i) => {
    let at = f.bit_offset;
    const end = f.bit_offset + f.bit_width;
    // A field that crosses a row boundary is drawn as one box per row, labelled on its widest.
    const segs = [];
    while (at < end) {
      const r = Math.floor(at / 32), c0 = at % 32, c1 = Math.min(32, c0 + (end - at));
      segs.push({ r, c0, c1 });
      at += c1 - c0;
    }
    const widest = segs.reduce((a, s) => (s.c1 - s.c0 > a.c1 - a.c0 ? s : a), segs[0]);
    for (const s of segs) {
      if (s.r >= 24) break; // long runs (options) stop at 24 rows
      const x = pad + s.c0 * col, y = top + s.r * rowH, w = (s.c1 - s.c0) * col;
      const name = fieldName(f.name);
      const label = s === widest ? (name.length * 6.4 < w - 4 ? name : (f.name.length * 6.4 < w - 4 ? f.name : (w > 14 ? '·' : ''))) : '';
      body += `<g class="insp-box${i === hi ? ' on' : ''}" data-fi="${i}"><title>${esc(`${name}: ${f.value} (${f.bit_width} ${tr('bits')})`)}</title>
        <rect x="${x}" y="${y}" width="${w}" height="${rowH}"/>${label ? `<text x="${x + w / 2}" y="${y + rowH / 2 + 4}">${esc(label)}</text>` : ''}</g>`;
    }
  });
  const H = top + Math.min(rows, 24) * rowH + 4;
  return `<svg class="insp-layout" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(`${h.name} ${tr('layout')}`)}">${body}</svg>`;
}

// ---------------------------------------------------------------------------------------------
// The hex dump: 16 bytes a row, the selected header shaded and the selected field lit.

function hexDump(whole, sel) {
  const rows = [];
  let gapShown = false;
  for (let r = 0; r < whole.length; r += 16) {
    const chunk = whole.slice(r, r + 16);
    if (chunk.every((b) => b === null)) {
      if (!gapShown) rows.push(`<div class="insp-gap">${esc(tr('gap', { n: whole.filter((b) => b === null).length }))}</div>`);
      gapShown = true;
      continue;
    }
    const cells = chunk.map((b, k) => {
      const i = r + k;
      const cls = [sel && i >= sel.h0 && i < sel.h1 ? 'h' : '', sel && i >= sel.f0 && i < sel.f1 ? 'f' : ''].join(' ').trim();
      return `<span${cls ? ` class="${cls}"` : ''}>${b === null ? '··' : b.toString(16).padStart(2, '0')}</span>`;
    }).join('');
    rows.push(`<div><b>${r.toString(16).padStart(4, '0')}</b>${cells}</div>`);
  }
  return rows.join('');
}

// ---------------------------------------------------------------------------------------------
// The panel

let panel = null;
let state = null; // {frame, title, d, whole, hi: [header, field]}

function ensurePanel() {
  if (panel) return panel;
  const style = document.createElement('style');
  style.textContent = CSS;
  document.head.appendChild(style);
  panel = document.createElement('aside');
  panel.className = 'insp';
  panel.setAttribute('role', 'dialog');
  panel.dataset.testid = 'inspector';
  panel.hidden = true;
  document.body.appendChild(panel);
  panel.addEventListener('click', (e) => {
    if (e.target.closest('[data-insp-close]')) { close(); return; }
    const box = e.target.closest('[data-fi]');
    const hdr = e.target.closest('[data-hi]');
    if (box && hdr) select(Number(hdr.dataset.hi), Number(box.dataset.fi));
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && panel && !panel.hidden) close(); });
  return panel;
}

function close() {
  if (panel) panel.hidden = true;
  state = null;
}

function select(h, f) {
  if (!state || !state.d) return;
  state.hi = [h, f];
  render();
  const row = panel.querySelector(`[data-hi="${h}"] tr[data-fi="${f}"]`);
  if (row) row.scrollIntoView({ block: 'nearest' });
}

function render() {
  const p = ensurePanel();
  const s = state;
  const head = `<header><h2>${esc(tr('title'))}</h2><span class="insp-what">${esc(s.title || '')}</span>
    <button type="button" data-insp-close aria-label="${esc(tr('close'))}">✕</button></header>`;
  if (!s.d) {
    p.innerHTML = `${head}<p class="insp-msg">${esc(s.msg)}</p>`;
    return;
  }
  const d = s.d;
  const [hh, ff] = s.hi || [-1, -1];
  let sel = null;
  if (hh >= 0) {
    const h = d.headers[hh];
    const f = h.fields[ff];
    const b0 = h.start * 8 + f.bit_offset;
    sel = { h0: h.start, h1: h.start + h.len, f0: Math.floor(b0 / 8), f1: Math.ceil((b0 + f.bit_width) / 8) };
  }
  // The frame list counts the FCS (as a MAC does), the bytes here do not (as a pcap does):
  // say both when the two agree on the same frame.
  const withFcs = Number(s.frame && s.frame.len);
  const notes = [`<li data-testid="insp-len">${esc(withFcs === d.len + 4 ? tr('framefcs', { n: d.len, m: withFcs }) : tr('frame', { n: d.len }))}</li>`];
  if (d.elided) notes.push(`<li class="insp-elided">${esc(tr('elided', { a: d.elided[0], b: d.elided[1] - 1, n: d.elided[1] - d.elided[0] }))}</li>`);
  if (d.frame_check) notes.push(`<li class="${d.frame_check.ok ? 'insp-ok' : 'insp-bad'}">${esc(d.frame_check.ok ? tr('ok') : tr('bad', { e: d.frame_check.error }))}</li>`);
  const sections = d.headers.map((h, i) => {
    const about = h.kind === 'irn' ? `<p class="insp-about">${esc(tr('irn'))}</p>` : '';
    const layout = NO_LAYOUT.has(h.kind) ? `<p class="muted">${esc(tr('nolayout', { n: h.len }))}</p>` : layoutSvg(h, i === hh ? ff : -1);
    const rows = h.fields.map((f, k) => {
      const m = meaningText(f.meaning, f);
      const a = ABOUT[L()][`${h.kind}.${f.name}`];
      let val = f.hex && f.hex !== f.value && Number(f.value) > 9 ? `${esc(f.value)} <code>${esc(f.hex)}</code>` : esc(f.value);
      // A byte run: its length, and for the payload its first bytes as text.
      if (f.hex === '' && f.bit_width >= 8) {
        val = esc(tr('m.bytes', { n: f.bit_width / 8 }));
        if (h.kind === 'payload') {
          const b0 = h.start + f.bit_offset / 8;
          const shown = s.whole.slice(b0, b0 + f.bit_width / 8).filter((b) => b !== null);
          const txt = shown.map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '·')).join('');
          const left = f.bit_width / 8 - shown.length;
          val += `<div class="insp-mean"><code class="insp-data">${esc(txt)}</code>${left > 0 ? esc(tr('more', { n: left })) : ''}</div>`;
        }
      }
      const bad = f.meaning && f.meaning.id === 'check' && f.meaning.verdict === 'bad';
      return `<tr data-fi="${k}" class="${i === hh && k === ff ? 'on' : ''}${bad ? ' bad' : ''}">
        <th scope="row"><span class="insp-fname">${esc(fieldName(f.name))}</span>${a ? `<small>${esc(a)}</small>` : ''}${f.spec && f.spec !== h.spec ? `<cite class="insp-fspec">${esc(specText(f.spec))}</cite>` : ''}</th>
        <td class="insp-bits">${f.bit_offset}+${f.bit_width}</td><td class="insp-val">${val}${m ? `<div class="insp-mean">${esc(m)}</div>` : ''}</td></tr>`;
    }).join('');
    return `<section class="insp-h" data-hi="${i}" data-kind="${esc(h.kind)}">
      <h3>${esc(headerName(h))} <span class="insp-len">${h.len} ${esc(tr('bytes'))}</span> <cite>${esc(specText(h.spec))}</cite></h3>
      ${about}${layout}
      <table class="insp-fields"><thead><tr><th>${esc(tr('field'))}</th><th>${esc(tr('offset'))}+${esc(tr('width'))}</th><th>${esc(tr('value'))} · ${esc(tr('meaning'))}</th></tr></thead><tbody>${rows}</tbody></table>
    </section>`;
  }).join('');
  const stopped = d.stopped ? `<p class="insp-bad" data-testid="insp-stopped">${esc(tr('stopped', { e: d.stopped }))}</p>` : '';
  p.innerHTML = `${head}<div class="insp-body"><ul class="insp-notes">${notes.join('')}</ul><p class="muted">${esc(tr('pick'))}</p>
    ${sections}${stopped}</div>
    <div class="insp-dump"><h3>${esc(tr('hex'))}</h3><div class="insp-hex" data-testid="insp-hex">${hexDump(s.whole, sel)}</div></div>`;
  p.querySelectorAll('tr[data-fi]').forEach((tr_) => {
    tr_.addEventListener('click', () => select(Number(tr_.closest('[data-hi]').dataset.hi), Number(tr_.dataset.fi)));
  });
}

/** Open the inspector on `frame` (a frame object the server sent). */
export async function inspect(frame, title) {
  ensurePanel();
  panel.hidden = false;
  state = { frame, title, d: null, msg: tr('loading'), hi: null };
  render();
  if (!frame || !frame.wire) {
    state.msg = tr('nobytes');
    render();
    return;
  }
  const mine = state;
  try {
    const body = { wire: frame.wire };
    if (frame.wire_elided) body.elided = frame.wire_elided;
    const d = await api('/api/frame/dissect', body);
    if (state !== mine) return;
    // The whole frame, with null where bytes were left out.
    const got = hexBytes(frame.wire);
    const whole = [];
    const [g0, g1] = d.elided || [got.length, got.length];
    for (let i = 0; i < d.len; i++) whole.push(i < g0 ? got[i] : i < g1 ? null : got[i - (g1 - g0)]);
    state.d = d;
    state.whole = whole;
    // Start on the BTH's opcode (or the first header's first field).
    const b = d.headers.findIndex((h) => h.kind === 'bth');
    state.hi = [b >= 0 ? b : 0, 0];
    render();
    const sec = panel.querySelector(`[data-hi="${state.hi[0]}"]`);
    if (sec) sec.scrollIntoView({ block: 'start' });
  } catch (e) {
    if (state !== mine) return;
    state.msg = tr('error', { e: e.message });
    render();
  }
}

document.addEventListener('rdmalab:inspect', (e) => {
  const { frame, title } = e.detail || {};
  inspect(frame, title);
});

// Server-rendered frame lists (the lessons' ladders) mark each frame with data-wire.
document.addEventListener('click', (e) => {
  const el = e.target.closest && e.target.closest('[data-wire]');
  if (!el || el.closest('.insp')) return;
  const frame = { wire: el.dataset.wire };
  if (el.dataset.len) frame.len = Number(el.dataset.len);
  if (el.dataset.wireElided) frame.wire_elided = el.dataset.wireElided.split(',').map(Number);
  document.dispatchEvent(new CustomEvent('rdmalab:inspect', { detail: { frame, title: el.dataset.title || '' } }));
});

const CSS = `
svg.pg-ladder .pg-frame, [data-wire] { cursor: pointer; }
.insp { position: fixed; top: 0; right: 0; bottom: 0; width: min(560px, 46vw); z-index: 50; background: var(--card, #fff);
  border-left: 1px solid var(--line, #d9dde2); box-shadow: -6px 0 24px rgba(0,0,0,.12); display: flex; flex-direction: column; font-size: .9rem; }
.insp[hidden] { display: none; }
.insp header { display: flex; align-items: baseline; gap: 10px; padding: 10px 14px; border-bottom: 1px solid var(--line, #d9dde2); }
.insp header h2 { margin: 0; font-size: 1.05rem; }
.insp header .insp-what { color: var(--muted, #5e6873); flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.insp header button { font: inherit; border: 1px solid var(--line, #d9dde2); background: #fff; border-radius: 6px; padding: 2px 9px; cursor: pointer; }
.insp-body { flex: 1; overflow: auto; padding: 4px 14px 10px; }
.insp-msg { padding: 14px; }
.insp-notes { margin: 6px 0; padding-left: 18px; }
.insp-ok { color: var(--accent-2, #0a8a5c); } .insp-bad { color: var(--warn, #b3261e); font-weight: 600; } .insp-elided { color: #7a5a00; }
.insp-h { border-top: 1px solid var(--line, #d9dde2); padding-top: 4px; margin-top: 8px; }
.insp-h h3 { font-size: .98rem; margin: 4px 0; } .insp-h h3 cite { font-style: normal; font-weight: 400; color: var(--accent, #0b6bcb); font-size: .8rem; }
.insp-len { font-weight: 400; color: var(--muted, #5e6873); font-size: .8rem; }
.insp-about { color: var(--muted, #5e6873); margin: 2px 0; }
.insp-layout { width: 100%; height: auto; display: block; margin: 2px 0 6px; }
.insp-layout rect { fill: #f3f6fa; stroke: #8a96a3; stroke-width: .8; }
.insp-layout text { font-size: 10.5px; text-anchor: middle; fill: var(--fg, #1d232b); pointer-events: none; }
.insp-layout .insp-ruler { fill: var(--muted, #5e6873); font-size: 9px; }
.insp-box { cursor: pointer; } .insp-box:hover rect { fill: #e3edf9; } .insp-box.on rect { fill: #ffe08a; stroke: #b07d00; stroke-width: 1.4; }
.insp-fields { width: 100%; border-collapse: collapse; font-size: .84rem; }
.insp-fields th, .insp-fields td { text-align: left; vertical-align: top; padding: 3px 5px; border-bottom: 1px solid #eef0f3; }
.insp-fields thead th { color: var(--muted, #5e6873); font-weight: 500; font-size: .78rem; }
.insp-fields tbody tr { cursor: pointer; } .insp-fields tbody tr:hover { background: #f5f8fc; } .insp-fields tr.on { background: #fff4c2; }
.insp-fields tr.bad .insp-mean { color: var(--warn, #b3261e); font-weight: 600; }
.insp-fname { font-weight: 600; font-family: ui-monospace, monospace; }
.insp-fspec { display: block; font-style: normal; font-size: .74rem; color: var(--accent, #0b6bcb); } .insp-fields small { display: block; color: var(--muted, #5e6873); font-weight: 400; }
.insp-bits { white-space: nowrap; font-family: ui-monospace, monospace; color: var(--muted, #5e6873); }
.insp-val { font-family: ui-monospace, monospace; overflow-wrap: anywhere; } .insp-mean { font-family: inherit; color: #2c4a6b; }
.insp-dump { border-top: 1px solid var(--line, #d9dde2); padding: 4px 14px 10px; max-height: 32vh; overflow: auto; background: #fafbfc; }
.insp-dump h3 { font-size: .9rem; margin: 2px 0; }
.insp-hex { font-family: ui-monospace, monospace; font-size: .78rem; line-height: 1.5; }
.insp-hex b { color: var(--muted, #5e6873); font-weight: 400; margin-right: 8px; }
.insp-hex span { padding: 0 2px; } .insp-hex span.h { background: #e3edf9; } .insp-hex span.f { background: #ffd451; outline: 1px solid #b07d00; }
.insp-gap { color: #7a5a00; font-style: italic; }
@media (max-width: 700px) {
  .insp { top: auto; left: 0; width: 100%; height: 88vh; border-left: 0; border-top: 1px solid var(--line, #d9dde2); border-radius: 12px 12px 0 0; box-shadow: 0 -6px 24px rgba(0,0,0,.18); }
  .insp-fields small { display: none; }
  .insp-dump { max-height: 24vh; }
}
`;
