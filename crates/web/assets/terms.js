// The report's own words, as the page shows them: every string the report uses as an id that
// reaches the page (stage names, operations, where transport runs, frame kinds, lanes and
// sides, what "delivered" means) in the page language. Identifiers a learner types or reads
// in code (`poll_cq`, `post_send`, `write()`, opcodes, `ioctl create_qp`) stay as they are;
// the words around them are translated. A Rust test (crates/web/src/terms.rs) runs every
// preset and fails on any such string missing here.

import { lang } from './i18n.js';

const ZH = {
  // Where transport processing runs.
  'kernel software': '内核软件',
  'NIC hardware': '网卡硬件',
  // Operations.
  'RDMA WRITE': 'RDMA WRITE',
  'RDMA READ': 'RDMA READ',
  'RDMA SEND': 'RDMA SEND',
  'SEND / RECV': 'SEND / RECV',
  'RDMA WRITE stream': 'RDMA WRITE 流',
  'RDMA READ stream': 'RDMA READ 流',
  'SEND / RECV stream': 'SEND / RECV 流',
  'write() / blocking read()': 'write() / 阻塞的 read()',
  'write() / read() stream': 'write() / read() 流',
  // CPU stages (data path and setup).
  'TCP TX (ACK)': 'TCP 发送（ACK）',
  'TCP/IP RX (softirq)': 'TCP/IP 接收（软中断）',
  'TCP/IP TX (TSO super-segment)': 'TCP/IP 发送（TSO 超级段）',
  'copy kernel→user': '拷贝 内核→用户',
  'copy user→kernel': '拷贝 用户→内核',
  'driver RX': '驱动接收',
  'driver TX + doorbell': '驱动发送 + 门铃',
  'hard interrupt': '硬中断',
  'completion interrupt': '完成中断',
  'poll_cq': 'poll_cq',
  'post_recv (write WQE)': 'post_recv（写 WQE）',
  'post_send (write WQE)': 'post_send（写 WQE）',
  'read() syscall entry': 'read() 系统调用进入',
  'read() syscall exit': 'read() 系统调用返回',
  'write() syscall entry': 'write() 系统调用进入',
  'write() syscall exit': 'write() 系统调用返回',
  'softirq (NAPI poll)': '软中断（NAPI 轮询）',
  'wake-up (context switch)': '唤醒（上下文切换）',
  'ioctl create_cq': 'ioctl create_cq',
  'ioctl create_qp': 'ioctl create_qp',
  'ioctl modify_qp': 'ioctl modify_qp',
  'ioctl reg_mr': 'ioctl reg_mr',
  'pin pages': '锁定内存页',
  'socket+connect': 'socket+connect',
  'socket+listen+accept': 'socket+listen+accept',
  // NIC and PCIe stages.
  'DMA read (READ response)': 'DMA 读（READ 响应）',
  'DMA read payload': 'DMA 读负载',
  'DMA read segment (kernel buffer)': 'DMA 读分段（内核缓冲区）',
  'DMA write CQE': 'DMA 写 CQE',
  'DMA write READ data': 'DMA 写 READ 数据',
  'DMA write payload': 'DMA 写负载',
  'DMA write receive CQE': 'DMA 写接收 CQE',
  'DMA write segment (kernel ring)': 'DMA 写分段（内核环）',
  'MMIO doorbell': 'MMIO 门铃',
  'MMIO doorbell + WQE (BlueFlame)': 'MMIO 门铃 + WQE（BlueFlame）',
  'NIC TX pipeline': '网卡发送流水线',
  'NIC RX pipeline': '网卡接收流水线',
  // Frames in the switch (timeline) and frame kinds (ladder).
  'RoCE ACK frame': 'RoCE ACK 帧',
  'RoCE data frame': 'RoCE 数据帧',
  'TCP frame': 'TCP 帧',
  'CNP frame': 'CNP 帧',
  'PFC frame': 'PFC 帧',
  'raw frame': '原始帧',
  'RoCE ACK': 'RoCE ACK',
  'RoCE data': 'RoCE 数据',
  'TCP': 'TCP',
  'CNP': 'CNP',
  'PFC': 'PFC',
  'raw': '原始帧',
  // Lanes and sides of the drawing.
  'app': '应用',
  'kernel': '内核',
  'nic': '网卡',
  'switch': '交换机',
  'local': '本端',
  'remote': '远端',
  'fabric': '网络',
  // What "delivered" and "local completion" mean.
  'READ data placed in local memory': 'READ 数据写入本端内存',
  'data placed in remote memory': '数据写入远端内存',
  'read() returned the data': 'read() 返回了数据',
  'receive CQE in the remote CQ': '远端 CQ 里出现接收 CQE',
  'the woken receiver got its CQ event (interrupt + wake-up)': '被唤醒的接收方拿到 CQ 事件（中断 + 唤醒）',
  'local CQE written': '本端 CQE 已写入',
  'write() returned': 'write() 已返回',
  // Loss models.
  'Mathis': 'Mathis',
  'go-back-N': 'go-back-N',
  'selective repeat': '选择重传',
};

/** Every string the table knows (the Rust test reads this list). */
export const TERMS = ZH;

/** The report's string `s` in the page language (as it is on the English page). */
export function term(s) {
  if (lang() === 'en' || s == null) return s;
  return ZH[s] ?? s;
}

// Sentences the report builds around those terms (why the remote CPU took part, what a
// failure was), translated piece by piece; on the English page they are as the report says.
const SENTENCES = [
  [/^no CPU stage ran on the remote$/, () => '远端没有运行任何 CPU 阶段'],
  [/^kernel work on the remote, (.+) per message: (.+)$/, (m) => `远端有内核工作，每条消息 ${m[1]}：${list(m[2])}`],
  [/^(.+) of remote CPU per message, above the (.+) light threshold$/, (m) => `每条消息占远端 CPU ${m[1]}，高于“轻”的门槛 ${m[2]}`],
  [/^(.+) per message: (.+)$/, (m) => `每条消息 ${m[1]}：${list(m[2])}`],
  [/^the work request completed with status "(.+)"$/, (m) => `工作请求以状态“${status(m[1])}”完成`],
  [/^ibv_post_send returned 0 but no completion arrived within (\d+) ms of simulated time; the QP is in (\w+)$/, (m) => `ibv_post_send 返回 0，但 ${m[1]} ms 仿真时间内没有任何完成事件；QP 停在 ${m[2]}`],
  [/^post_send → EINVAL: QP is in RTR, must be RTS; the (\d+) WR\(s\) were written to the send queue but the doorbell failed \((.+)\); they run if the QP reaches RTS$/, (m) => `post_send → EINVAL：QP 在 RTR，必须是 RTS；${m[1]} 个 WR 已写入发送队列但门铃失败（${m[2]}）；QP 到了 RTS 它们就会执行`],
  [/^post_send → EINVAL: WR #(\d+) of the chain: QP is in RTR, must be RTS \((.+)\)$/, (m) => `post_send → EINVAL：链上第 ${m[1]} 个 WR：QP 在 RTR，必须是 RTS（${m[2].replace('immediate error', '立即报错')}）`],
  [/^host (\d+), send completion of QP (\d+) \(now in (\w+)\)$/, (m) => `主机 ${m[1]}，QP ${m[2]} 的发送完成（QP 现在处于 ${m[3]}）`],
  [/^host (\d+), QP (\d+) \(in (\w+)\)$/, (m) => `主机 ${m[1]}，QP ${m[2]}（处于 ${m[3]}）`],
  [/^host (\d+), QP (\d+)$/, (m) => `主机 ${m[1]}，QP ${m[2]}`],
  [/^no completion$/, () => '没有完成事件'],
  [/^(\w+) \((\d+), (.+)\)$/, (m) => `${m[1]}（${m[2]}，${status(m[3])}）`],
];

const STATUS = {
  'local protection error': '本地保护错误',
  'local QP operation error': '本地 QP 操作错误',
  'local length error': '本地长度错误',
  'remote access error': '远端访问错误',
  'remote invalid request error': '远端无效请求错误',
  'remote operation error': '远端操作错误',
  'transport retry counter exceeded': '传输重试次数用尽',
  'RNR retry counter exceeded': 'RNR 重试次数用尽',
  'work request flushed': '工作请求被冲刷',
};
const status = (s) => STATUS[s] ?? s;
const list = (s) => s.split(', ').map((x) => ZH[x] ?? x).join('、');

/** A sentence of the report (a reason, a place, a status) in the page language. */
export function sentence(s) {
  if (lang() === 'en' || s == null) return s;
  for (const [re, f] of SENTENCES) {
    const m = re.exec(s);
    if (m) return f(m);
  }
  return s;
}
