// The fabric labs: the index of the labs (`/labs`) and one page per lab (`/lab/<id>`).
// A lab page builds its parameter form from the lab's descriptor (`GET /api/labs`), runs the
// lab (`POST /api/lab/<id>`) and shows the LabResult: headline figures, the verdict in words
// and every chart as SVG, with its data as a table in a disclosure under it. The
// troubleshooting lab (`trouble`) shows the symptom and the NIC counters first and asks for the
// cause before revealing it. Titles, texts and the chapters that teach each lab come from
// `GET /api/course/<lang>/labs` (course/<lang>/labs.toml). The parameters live in the URL (only
// those that differ from the defaults), so a link reproduces a run.

import { t, tFrom, lang, href, esc } from './i18n.js';
import { api, errorText } from './app.js';
import { courseLabs, labName } from './course.js';
import { chartSvg, chartTableHtml, fmtNum } from './chart.js';
import { renderFabricView } from './fabricview.js';
import './inspector.js';

export { chartSvg, chartTableHtml, niceTicks } from './chart.js';

/** The labs in the order the index lists them. */
const LABS = ['incast', 'hol', 'storm', 'deadlock', 'loss', 'qps', 'trouble', 'nvmf', 'allreduce'];
/** Plausible wrong answers offered next to the four causes. */
const DISTRACTORS = ['x_congestion', 'x_rkey', 'x_cable'];
/** The order of the answer buttons: fixed, so it never depends on the case shown. */
const CAUSE_ORDER = ['x_congestion', 'mtu', 'rnr', 'x_rkey', 'pfc_priority', 'x_cable', 'peer_gone'];
const DEBOUNCE_MS = 250;

const S = {
  zh: {
    'labs.title': '网络实验',
    'labs.lead': '这里的每个网络实验都是一次真实的仿真：改参数、看图、读计数器。',
    'labs.back': '← 全部实验',
    'labs.n': '实验 {n}',
    'lab.unknown': '没有这个实验：{id}',
    'lab.params': '参数',
    'lab.run': '运行',
    'lab.reset': '恢复默认',
    'lab.look': '看什么',
    'lab.charts': '图表',
    'lab.counters': '计数器',
    'lab.url': '这个页面的地址就是这次实验：复制链接即可复现。',
    'lab.meta': '{events} 个仿真事件 · 服务器用时 {ms} ms', 'lab.meta.ms': '服务器用时 {ms} ms',
    'lab.nodata': '这次运行没有可画的数据',
    'lab.chapters': '讲到它的章节：',
    'table.x': 'x', 'table.x.u': 'x（{u}）', 'table.cat': '类别', 'table.cat.u': '类别（{u}）',
    'run.busy': '仿真中…',
    'run.done': '完成',
    'run.done.v': '完成：{v}',
    'run.error': '出错了',
    'yes': '是', 'no': '否',
    'param.senders': '发送方数量', 'param.link_gbps': '链路速率', 'param.pfc': 'PFC（无损）',
    'param.ecn': 'ECN 标记', 'param.dcqcn': 'DCQCN', 'param.ecn_on_dequeue': '出队时打 ECN 标记',
    'param.duration_us': '仿真时长', 'param.watchdog': 'PFC 看门狗', 'param.stall_at_us': '停止收包的时刻',
    'param.detect_us': '看门狗检测时间', 'param.switches': '交换机数量', 'param.fix': '处理办法',
    'param.max_loss_pct': '最大丢包率', 'param.message_kb': '消息大小', 'param.qps': 'QP 数量',
    'param.spines': '脊交换机数量', 'param.spine_gbps': '脊链路速率', 'param.hash': 'ECMP 哈希', 'param.case': '案例',
    'choice.dcqcn.off': '关闭', 'choice.dcqcn.nvidia': 'NVIDIA 固件默认值', 'choice.dcqcn.paper': '论文参数（SIGCOMM 2015）',
    'choice.fix.none': '不处理', 'choice.fix.watchdog': 'PFC 看门狗',
    'choice.hash.crc16': 'CRC-16（交换芯片用的）', 'choice.hash.mixed': '近似随机的混合',
    'dcqcn.needs_ecn': 'DCQCN 靠 ECN 标记来反应：先打开 ECN 才能选画像。',
    'choice.link_gbps.25': '25 Gb/s', 'choice.link_gbps.100': '100 Gb/s',
    'choice.spine_gbps.25': '25 Gb/s', 'choice.spine_gbps.100': '100 Gb/s',
    'param.iodepth': '队列深度（每个发起端）', 'param.bs': '块大小', 'param.initiators': '发起端数量',
    'param.rwmixread': '读占比（其余为写）',
    'choice.bs.4k': '4 KiB', 'choice.bs.16k': '16 KiB', 'choice.bs.64k': '64 KiB', 'choice.bs.128k': '128 KiB',
    'fig.nvmf.iops_rdma': 'IOPS：NVMe/RDMA', 'fig.nvmf.iops_tcp': 'IOPS：NVMe/TCP',
    'fig.nvmf.p99_rdma_us': 'p99 完成延迟：NVMe/RDMA', 'fig.nvmf.p99_tcp_us': 'p99 完成延迟：NVMe/TCP',
    'fig.nvmf.cpu_rdma_ns': '每个 IO 的 CPU 时间（两端合计）：NVMe/RDMA', 'fig.nvmf.cpu_tcp_ns': '每个 IO 的 CPU 时间（两端合计）：NVMe/TCP',
    'fig.nvmf.local_qd1_us': '设备本身（队列深度 1，中位数）',
    'fig.nvmf.fabric_qd1_rdma_us': 'NVMe/RDMA 在队列深度 1 时多出的延迟（中位数）', 'fig.nvmf.fabric_qd1_tcp_us': 'NVMe/TCP 在队列深度 1 时多出的延迟（中位数）',
    'chart.nvmf.latency': '完成延迟与 IOPS：队列深度逐级翻倍', 'chart.nvmf.cpu': '这个深度下每个 IO 的 CPU 时间',
    'chart.nvmf.queue': '目标端链路上的队列峰值',
    'axis.nvmf.latency.x': 'IOPS（每条曲线上队列深度依次为 1、2、4……）', 'axis.nvmf.queue.x': '队列深度',
    'v.nvmf.win': '队列深度 {qd} 时，{a} 完成 {ia} IOPS，是 {b}（{ib}）的 {x} 倍；',
    'v.nvmf.tie': '队列深度 {qd} 时，两种传输完成的 IOPS 相当（NVMe/RDMA {ia}，NVMe/TCP {ib}）；',
    'v.nvmf.cpu': 'NVMe/TCP 每个 IO 花的 CPU 时间是 NVMe/RDMA 的 {x} 倍。',
    'v.nvmf.saturated': '{e} 受限于{res}（忙碌 {pct}%）。',
    'v.nvmf.bursts': '{e} 在阵发中等待{res}：它平均只忙 {pct}%，中位延迟却是队列深度 1 时的 {g} 倍。',
    'v.nvmf.depth': '{e} 只受队列深度限制：没有哪样资源忙过 {pct}%，中位延迟与队列深度 1 时相差不到一成，再加在途 IO 还能提高 IOPS。',
    'res.device': '设备', 'res.target_cpu': '目标端的 CPU', 'res.initiator_cpu': '发起端的 CPU', 'res.link': '目标端的链路',
    'vk.pauses_rdma': 'PAUSE 帧（NVMe/RDMA 那次运行）', 'vk.drops_tcp': '网络丢掉的帧（NVMe/TCP 那次运行）',
    'choice.max_loss_pct.0.5': '0.5%', 'choice.max_loss_pct.1': '1%', 'choice.max_loss_pct.2': '2%', 'choice.max_loss_pct.5': '5%',
    'param.adaptive': '自适应重传（超时跟随实测往返时间）',
    'unit.frames': '帧', 'unit.packets': '包', 'unit.links': '条链路', 'unit.ratio': '',
    'param.allreduce.hosts': 'GPU 服务器数量', 'param.size': '每台服务器的梯度缓冲区', 'param.channels': '通道数（并行的环）',
    'param.allreduce.qps': '每个连接的 QP 数', 'param.seed': '种子（各交换机的 ECMP 种子由它导出）',
    'param.allreduce.spines': '脊交换机数量（每个叶交换机的上联链路数）', 'param.allreduce.spine_gbps': '每条上联链路的速率',
    'param.allreduce.dcqcn': 'DCQCN（交换机打 ECN 标记）',
    'choice.size.1M': '1 MiB', 'choice.size.4M': '4 MiB', 'choice.size.8M': '8 MiB', 'choice.size.16M': '16 MiB',
    'choice.spine_gbps.50': '50 Gb/s', 'unit.channels': '个', 'unit.uplinks': '条',
    'fig.allreduce.busbw_gbs': 'busbw：你选的 QP 数', 'fig.allreduce.ideal_busbw_gbs': '理想 busbw（线速）',
    'fig.allreduce.busbw_pct': 'busbw 占理想值的比例', 'fig.allreduce.busbw_more_gbs': 'busbw：每个连接多一个 QP',
    'fig.allreduce.gain_gbs': '多一个 QP 带来的变化', 'fig.allreduce.time_us': '完成一次 all-reduce 的时间',
    'fig.allreduce.shared_uplinks': '走了不止一条流的上联链路', 'fig.allreduce.busiest_uplink_pct': '最忙的上联链路的利用率',
    'fig.allreduce.pauses': 'PAUSE 帧', 'fig.allreduce.ecn_marks': 'ECN 标记', 'fig.allreduce.retransmissions': '重传的包',
    'chart.allreduce.busbw': 'busbw：你选的 QP 数、多一个 QP、理想值', 'chart.allreduce.uplinks': '走的流最多的叶→脊上联链路：利用率',
    'chart.allreduce.spread': '走了 0、1、2……条流的上联链路各有几条',
    'v.ar.head': 'busbw 是理想值 {ideal} GB/s 的 {pct}%；',
    'v.ar.line_rate': '这就是线速：网络里没有什么拖住这个环。',
    'v.ar.oversubscribed': '这已是超额订阅的上联链路能跑到的速度：每个叶交换机 {s} 条 {g} Gb/s 的上联链路，下面是 {h} Gb/s 的主机，理想值已经算上了这一点。',
    'v.ar.drops': '瓶颈是丢包：网络丢了 {d} 帧，丢掉的包要重发。',
    'v.ar.dcqcn': '瓶颈是 DCQCN 的降速：这些流的路径本可以达到理想值的 {paths}%，ECN 标记（{m} 个）却让网卡把 QP 的速率压到了远低于此。',
    'v.ar.latency': '这些流的路径允许达到理想值的 {paths}%，剩下的差距是理想值没有计入的时间：每一步的延迟、流水线的填充和排空，以及对 PAUSE 和 ECN 的反应。',
    'v.ar.ecmp': '瓶颈是 ECMP 冲突：有 {n} 条上联链路被哈希分到的流比均匀分布时多（最多的一条走了 {k} 条流；每个叶交换机有 {f} 条流，分到 {s} 条上联链路上）。环的速度取决于最慢的那条流，路径只允许达到理想值的 {paths}%。',
    'v.ar.few_flows': '瓶颈是每条流只走一条路径：每个叶交换机只有 {f} 条流，却有 {s} 条 {g} Gb/s 的上联链路，每条流只能走其中一条，路径只允许达到理想值的 {paths}%。',
    'v.ar.uneven': '瓶颈是分不均：{f} 条流没法平均分到 {s} 条上联链路上，最忙的一条走了 {k} 条流，而环的速度取决于最慢的那条流，路径只允许达到理想值的 {paths}%。',
    'v.ar.more': '每个连接多一个 QP（共 {q1} 个）时，busbw 是 {b1} GB/s，变化 {gain}。',
    'lim.line_rate': '线速', 'lim.oversubscribed': '超额订阅的上联链路', 'lim.drops': '丢包', 'lim.dcqcn': 'DCQCN 的降速',
    'lim.latency': '每一步的延迟和流水线', 'lim.ecmp': 'ECMP 冲突', 'lim.few_flows': '流比上联链路少', 'lim.uneven': '流分不均',
    'vk.limit_more': '多一个 QP 时的瓶颈', 'vk.paths_more_pct': '多一个 QP 时，路径允许达到理想值的比例',
    'vk.paths_pct': '路径允许达到理想值的比例', 'vk.flows_per_leaf': '每个叶交换机发出的流', 'vk.collided_uplinks': '冲突的上联链路',
    'vk.max_flows': '一条上联链路上最多的流数', 'vk.gain_pct': '多一个 QP 带来的变化', 'vk.busbw_pct': 'busbw 占理想值的比例',
    'vk.limit': '瓶颈', 'vk.spines': '每个叶交换机的上联链路', 'vk.spine_gbps': '上联链路速率', 'vk.host_gbps': '主机链路速率', 'vk.qps': '每个连接的 QP 数',
    'unit.hosts': '台', 'unit.switches': '台', 'unit.QPs': '个', 'unit.flows': '条',
    'axis.time': '时间（{u}）', 'axis.loss.goodput.x': '丢包率（%）', 'axis.loss.resent.x': '丢包率（%）',
    'fig.incast.goodput_gbps': '总有效吞吐', 'fig.incast.fairness': '公平性（Jain 指数）', 'fig.incast.pauses': 'PAUSE 帧',
    'fig.incast.cnps': 'CNP', 'fig.incast.drops': '丢包', 'fig.incast.peak_queue_kb': '队列峰值',
    'fig.hol.victim_gbps': '受害流吞吐（有 incast）', 'fig.hol.victim_alone_gbps': '受害流吞吐（单独跑）',
    'fig.hol.slowdown': '变慢倍数', 'fig.hol.pauses': 'PAUSE 帧', 'fig.hol.drops': '丢包',
    'fig.storm.victim_gbps_before': '受害流吞吐：风暴之前', 'fig.storm.victim_gbps_during': '受害流吞吐：卡死之后、看门狗出手之前',
    'fig.storm.storm_pauses': '风暴中的 PAUSE 帧', 'fig.storm.watchdog_at_us': '看门狗触发时刻', 'fig.storm.watchdog_drops': '看门狗丢弃的包',
    'fig.null.storm.watchdog_at_us': '未触发',
    'fig.deadlock.delivered_mb': '已送达', 'fig.deadlock.stalled_for_us': '停滞时长', 'fig.deadlock.watchdog_drops': '看门狗丢弃的包',
    'fig.loss.gbn_retention': 'go-back-N 保持率（最大丢包率下）', 'fig.loss.sr_retention': '选择性重传保持率（最大丢包率下）',
    'fig.loss.tcp_retention': 'TCP 保持率（最大丢包率下）',
    'fig.qps.gbps_one': '吞吐：1 个 QP', 'fig.qps.gbps_many': '吞吐：N 个 QP',
    'fig.qps.max_share_one': '最忙脊链路的份额：1 个 QP', 'fig.qps.max_share_many': '最忙脊链路的份额：N 个 QP',
    'fig.trouble.goodput_gbps': '有效吞吐', 'fig.trouble.completions_ok': '成功完成', 'fig.trouble.completions_err': '错误完成',
    'chart.incast.queue': '发往接收方的出端口队列', 'chart.incast.rate': '每个发送方的有效吞吐',
    'chart.incast.dcqcn_rate': '每个发送方的 DCQCN 当前速率 Rc', 'chart.incast.pauses': 'PAUSE 帧（累计）',
    'chart.empty.incast.dcqcn_rate': 'DCQCN 已关闭：没有速率曲线',
    'chart.hol.victim': '受害流吞吐随时间', 'chart.hol.queue': '交换机出端口队列', 'chart.hol.pauses': 'PAUSE 帧（累计）',
    'chart.storm.flows': '各条流的吞吐随时间', 'chart.storm.pauses': '各端口发出的 PAUSE 帧（累计）',
    'chart.deadlock.delivered': '每条流已送达（累计）', 'chart.deadlock.paused': '被暂停的环链路数',
    'chart.loss.goodput': '吞吐与丢包率', 'chart.loss.resent': '重发的字节占送达字节的比例',
    'chart.null.loss.goodput': '停住了：运行的最后 1 ms 里什么都没送达',
    'chart.null.loss.resent': '停住了：没有送达的字节可比',
    'chart.qps.paths': '各条脊上联链路的字节份额', 'chart.qps.throughput': '吞吐：1 个 QP 对 N 个 QP',
    'v.incast': '总有效吞吐是瓶颈链路上限（{cap} Gb/s）的 {pct}%。',
    'v.hol': '受害流有 {pct}% 的时间被 PAUSE 暂停。',
    'v.hol.none': '受害流没有被 PAUSE 暂停。',
    'v.storm.yes': '已遏制：PFC 看门狗在 {at} µs 触发，风暴没有继续扩散。',
    'v.storm.yes0': '已遏制：风暴没有扩散到整个网络。',
    'v.storm.no': '没有遏制：PAUSE 风暴沿着交换机扩散，连与停止收包的主机无关的流也停了。',
    'v.deadlock.yes': '死锁：从 {since} µs 起直到运行结束，环上每段链路都处于暂停、队列里压着帧，没有一条流前进（{for} µs）。',
    'v.deadlock.done': '没有死锁：所有流都完成了。',
    'v.deadlock.short': '停滞了 {for} µs，短于本实验判定死锁所需的 {thr} µs：把运行时间调长再看。',
    'v.deadlock.no': '没有死锁：流一直在前进。',
    'v.loss.part': '{path} 从 {pct}% 起',
    'v.loss.stalled': '停住了：{parts}。丢失的 NAK、重发包或末尾的包让它一直等重传超时，直到运行结束。',
    'v.loss.none': '没有哪条路径停住：每次丢包都在运行结束前恢复了。',
    'vk.bottleneck_gbps': '瓶颈链路的有效吞吐上限',
    'vk.victim_paused_pct': '受害流经过的干线被暂停的时间占比',
    'vk.contained': '风暴被遏制',
    'vk.victim_gbps_late': '受害流吞吐（运行的最后四分之一）',
    'vk.storms': '看门狗判定的风暴次数',
    'vk.victim_sender_paused_pct': '受害流的发送方被暂停的时间占比',
    'vk.deadlocked': '死锁',
    'vk.completed': '所有流都已送达',
    'vk.completed_at_us': '全部送达的时刻',
    'vk.null.completed_at_us': '没有全部送达',
    'vk.stalled_since_us': '停滞开始的时刻',
    'vk.null.stalled_since_us': '没有停滞',
    'vk.stalled_for_us': '停滞时长',
    'vk.null.stalled_for_us': '没有停滞',
    'vk.paused_links_at_end': '结束时被暂停的环链路',
    'vk.stalled_at_pct': '从哪个丢包率起停住',
    'vk.stall_threshold_us': '停滞多久算死锁',
    'vk.drops': '网络丢掉的帧',
    'vk.status': '第一个错误完成的状态',
    'vk.status.ok': '所有完成的状态',
    'vk.symptom': '症状',
    'vk.cnp_handled': '各发送方处理的 CNP', 'vk.cnp_lost': '丢掉的 CNP', 'vk.cnp_sent': '接收方发出的 CNP',
    'vk.pauses': 'PAUSE 帧', 'vk.pauses_strict_cnp_class': '对照运行（CNP 走严格优先级 6）的 PAUSE 帧',
    'vk.responder_packets': '响应方收到的请求包', 'vk.failed_call': '失败的调用',
    'vk.sgid_index': '本端用的 GID 下标', 'vk.sgid': '本端 GID（源）', 'vk.dgid': '远端 GID（目的）',
    'vk.error': '错误', 'vk.error.gid_family': '源 GID 是 IPv6 地址，目的 GID 是 IPv4 地址，地址族不同，内核解析不出目的 MAC，INIT→RTR 返回 EINVAL',
    'sym.pauses_multiply': '每个 WRITE 都成功完成，交换机却不停地发 PAUSE 帧，吞吐远低于链路速率。',
    'sym.connection_never_up': '连接根本建不起来：INIT→RTR 就失败了，线路上一个报文也没有。',
    'tr.pick': '选择一个案例',
    'tr.case': '案例 {n}',
    'tr.case.head': '案例 {n}：{title}',
    'tr.nocase': '没有“{c}”这个案例：请在上面从案例 1 到 {k} 里选一个。',
    'tr.symptom': '症状：应用看到了什么',
    'tr.counters': '两端网卡和交换机的计数器',
    'tr.onlynz': '只显示不为零的',
    'tr.nonzero': '{nz} 个计数器不为零（共 {n} 个）',
    'tr.question': '原因是什么？',
    'tr.hint': '先读上面的症状和计数器，再选一个原因。',
    'tr.right': '✓ 对了。',
    'tr.wrong': '✗ 不是这个，再看看计数器。',
    'tr.reveal': '揭晓答案',
    'tr.hide': '收起答案',
    'tr.h.cause': '原因和线索', 'tr.h.fix': '怎么修',
    'col.host': '主机', 'col.counter': '计数器', 'col.value': '值', 'col.meaning': '含义',
    'cause.rnr': '接收方没有及时投递接收 WQE',
    'cause.peer_gone': '对端的 QP 已经不在了（进程退出或 QP 被销毁）',
    'cause.pfc_priority': 'RoCE 流量没有走在交换机的无损优先级上（PFC 优先级/信任模式不一致）',
    'cause.mtu': 'QP 的路径 MTU 大于沿途某段链路允许的 MTU',
    'cause.x_congestion': '普通的 incast 拥塞：交换机缓存不够大',
    'cause.x_rkey': 'WRITE 请求里带的 rkey 写错了',
    'cause.x_cable': '线缆或光模块坏了（链路上有 CRC 错误）',
    'explain.rnr': '响应方的 out_of_buffer 和请求方的 rnr_nak_retry_err 一起上涨，最后 req_rnr_retries_exceeded 记下一个失败的 WR：SEND 到达时接收队列是空的。交换机没有丢包，也没有 PAUSE。修：提前投递足够的接收 WQE（或用 SRQ、做基于信用的流控）。',
    'explain.peer_gone': '请求方只有 local_ack_timeout_err 和 req_transport_retries_exceeded 在涨，其余为零：没有 ACK，也没有 NAK，交换机也没丢包。修：通过带外连接或 RDMA CM 事件发现对端消失，重新建连。',
    'explain.pfc_priority': '交换机的 egress_discards 上涨，却没有任何 PAUSE；丢包让响应方的 out_of_sequence 和请求方的 packet_seq_err 上涨。修：网卡和交换机用同一种信任模式和同一张优先级映射，对 RoCE 所在的优先级开 PFC。',
    'explain.mtu': '交换机的 mtu_discards 上涨，请求方的 local_ack_timeout_err 随后上涨，没有 PAUSE 也没有 ECN 标记，而且只有大消息失败。修：path_mtu 设成整条路径都能通过的值，或沿途全开巨帧。',
    'sym.sends_fail': '前几个 SEND 成功完成，随后一个 SEND 以错误结束，后面的全部被刷新。',
    'sym.writes_hang_then_fail': '一串 WRITE 突然不再完成，等了很久之后以错误结束。',
    'sym.slow_stream': '每个 WRITE 都成功完成，但这条流远比链路慢。',
    'sym.large_writes_fail': '几个小 WRITE 都完成了；一个大 WRITE 卡住，很久之后以错误结束。',
    'ctr.out_of_sequence': '响应方：乱序到达的包',
    'ctr.packet_seq_err': '请求方：收到的序号错误 NAK',
    'ctr.local_ack_timeout_err': '请求方：等 ACK 超时的次数',
    'ctr.rnr_nak_retry_err': '请求方：收到的 RNR NAK',
    'ctr.duplicate_request': '响应方：收到的重复请求',
    'ctr.out_of_buffer': '响应方：没有接收 WQE 可用的次数',
    'ctr.np_ecn_marked_roce_packets': '响应方：带 ECN 标记的 RoCE 包',
    'ctr.np_cnp_sent': '响应方：发出的 CNP',
    'ctr.rp_cnp_handled': '请求方：处理的 CNP（降速）',
    'ctr.req_transport_retries_exceeded': '请求方：重发次数用尽（retry_cnt）而以 RETRY_EXC_ERR 结束的 WR',
    'ctr.req_rnr_retries_exceeded': '请求方：RNR 重试次数用尽（rnr_retry）而以 RNR_RETRY_EXC_ERR 结束的 WR',
    'ctr.egress_discards': '交换机：在出端口队列被丢弃的帧（缓冲或队列满，或像第 ⑤ 课那样，在有损优先级上抽中的“溢出”）',
    'ctr.mtu_discards': '交换机：比端口 MTU 长而被丢弃的帧',
    'ctr.ecn_marked': '交换机：打上 CE（ECN）标记的帧',
    'ctr.pause_frames_sent': '交换机：发出的 PAUSE 帧',
    'ctr.rx_prio_pause': '收到的优先级 {p} PAUSE 帧',
    'ctr.rx_prio_pause_duration': '因优先级 {p} 的 PAUSE 停发的时长（µs）',
    'ctr.tx_prio_pause': '发出的优先级 {p} PAUSE 帧',
    'ctr.tx_prio_pause_duration': '发出 PAUSE 要求对方停发的时长（µs）',
  },
  en: {
    'labs.title': 'Fabric labs',
    'labs.lead': 'Fabric experiments, each one a real simulation: change the parameters, read the charts and the counters.',
    'labs.back': '← All labs',
    'labs.n': 'Lab {n}',
    'lab.unknown': 'No such lab: {id}',
    'lab.params': 'Parameters',
    'lab.run': 'Run',
    'lab.reset': 'Defaults',
    'lab.look': 'What to look at',
    'lab.charts': 'Charts',
    'lab.counters': 'Counters',
    'lab.url': 'This page\'s address is the experiment: copy the link to reproduce it.',
    'lab.meta': '{events} simulation events · {ms} ms on the server', 'lab.meta.ms': '{ms} ms on the server',
    'lab.nodata': 'Nothing to plot in this run',
    'lab.chapters': 'Taught in:',
    'table.x': 'x', 'table.x.u': 'x ({u})', 'table.cat': 'category', 'table.cat.u': 'category ({u})',
    'run.busy': 'Simulating…',
    'run.done': 'Done',
    'run.done.v': 'Done: {v}',
    'run.error': 'Error',
    'yes': 'yes', 'no': 'no',
    'param.senders': 'senders', 'param.link_gbps': 'link speed', 'param.pfc': 'PFC (lossless)',
    'param.ecn': 'ECN marking', 'param.dcqcn': 'DCQCN', 'param.ecn_on_dequeue': 'mark ECN on dequeue',
    'param.duration_us': 'duration', 'param.watchdog': 'PFC watchdog', 'param.stall_at_us': 'host stops draining at',
    'param.detect_us': 'watchdog detection time', 'param.switches': 'switches', 'param.fix': 'fix',
    'param.max_loss_pct': 'largest loss rate', 'param.message_kb': 'message size', 'param.qps': 'QPs',
    'param.spines': 'spines', 'param.spine_gbps': 'spine link speed', 'param.hash': 'ECMP hash', 'param.case': 'case',
    'choice.dcqcn.off': 'off', 'choice.dcqcn.nvidia': 'NVIDIA firmware defaults', 'choice.dcqcn.paper': 'paper (SIGCOMM 2015)',
    'choice.fix.none': 'none', 'choice.fix.watchdog': 'PFC watchdog',
    'choice.hash.crc16': 'CRC-16 (switch ASICs)', 'choice.hash.mixed': 'random-like mix',
    'dcqcn.needs_ecn': 'DCQCN reacts to ECN marks: turn ECN on to choose a profile.',
    'choice.link_gbps.25': '25 Gb/s', 'choice.link_gbps.100': '100 Gb/s',
    'choice.spine_gbps.25': '25 Gb/s', 'choice.spine_gbps.100': '100 Gb/s',
    'param.iodepth': 'queue depth (per initiator)', 'param.bs': 'block size', 'param.initiators': 'initiators',
    'param.rwmixread': 'reads (the rest are writes)',
    'choice.bs.4k': '4 KiB', 'choice.bs.16k': '16 KiB', 'choice.bs.64k': '64 KiB', 'choice.bs.128k': '128 KiB',
    'fig.nvmf.iops_rdma': 'IOPS, NVMe/RDMA', 'fig.nvmf.iops_tcp': 'IOPS, NVMe/TCP',
    'fig.nvmf.p99_rdma_us': 'p99 completion latency, NVMe/RDMA', 'fig.nvmf.p99_tcp_us': 'p99 completion latency, NVMe/TCP',
    'fig.nvmf.cpu_rdma_ns': 'CPU time per IO (both ends), NVMe/RDMA', 'fig.nvmf.cpu_tcp_ns': 'CPU time per IO (both ends), NVMe/TCP',
    'fig.nvmf.local_qd1_us': 'the device alone (QD 1, median)',
    'fig.nvmf.fabric_qd1_rdma_us': 'what NVMe/RDMA adds at QD 1 (median)', 'fig.nvmf.fabric_qd1_tcp_us': 'what NVMe/TCP adds at QD 1 (median)',
    'chart.nvmf.latency': 'Latency against IOPS as QD doubles', 'chart.nvmf.cpu': 'CPU time per IO at this depth',
    'chart.nvmf.queue': 'Peak queues on the target\'s link',
    'axis.nvmf.latency.x': 'IOPS (queue depth 1, 2, 4, … along each curve)', 'axis.nvmf.queue.x': 'queue depth',
    'v.nvmf.win': 'At queue depth {qd}, {a} completes {ia} IOPS, {x}× {b}\'s {ib}; ',
    'v.nvmf.tie': 'At queue depth {qd}, both transports complete about as many IOPS (NVMe/RDMA {ia}, NVMe/TCP {ib}); ',
    'v.nvmf.cpu': 'NVMe/TCP spends {x}× NVMe/RDMA\'s CPU time per IO.',
    'v.nvmf.saturated': ' {e} is limited by {res} ({pct}% busy).',
    'v.nvmf.bursts': ' {e} waits for {res} in bursts: it is only {pct}% busy on average, yet the median latency is {g}× QD 1\'s.',
    'v.nvmf.depth': ' {e} is held back only by the queue depth: nothing is more than {pct}% busy and the median latency stays within 10% of QD 1\'s, so more IOs in flight would still raise IOPS.',
    'res.device': 'the device', 'res.target_cpu': 'the target\'s CPU', 'res.initiator_cpu': 'the initiators\' CPU', 'res.link': 'the target\'s link',
    'vk.pauses_rdma': 'PAUSE frames (the NVMe/RDMA run)', 'vk.drops_tcp': 'frames dropped (the NVMe/TCP run)',
    'choice.max_loss_pct.0.5': '0.5%', 'choice.max_loss_pct.1': '1%', 'choice.max_loss_pct.2': '2%', 'choice.max_loss_pct.5': '5%',
    'param.adaptive': 'adaptive retransmission (the timeout follows the measured round trip)',
    'unit.frames': 'frames', 'unit.packets': 'packets', 'unit.links': 'links', 'unit.ratio': '',
    'param.allreduce.hosts': 'GPU servers', 'param.size': 'gradient buffer per server', 'param.channels': 'channels (parallel rings)',
    'param.allreduce.qps': 'QPs per connection', 'param.seed': 'seed (each switch\'s ECMP seed comes from it)',
    'param.allreduce.spines': 'spines (uplinks per leaf)', 'param.allreduce.spine_gbps': 'rate of each uplink',
    'param.allreduce.dcqcn': 'DCQCN (switches mark ECN)',
    'choice.size.1M': '1 MiB', 'choice.size.4M': '4 MiB', 'choice.size.8M': '8 MiB', 'choice.size.16M': '16 MiB',
    'choice.spine_gbps.50': '50 Gb/s', 'unit.channels': 'channels', 'unit.uplinks': 'uplinks',
    'fig.allreduce.busbw_gbs': 'busbw, the QPs you chose', 'fig.allreduce.ideal_busbw_gbs': 'ideal busbw (line rate)',
    'fig.allreduce.busbw_pct': 'busbw as a share of the ideal', 'fig.allreduce.busbw_more_gbs': 'busbw with one more QP per connection',
    'fig.allreduce.gain_gbs': 'what one more QP changes', 'fig.allreduce.time_us': 'time of one all-reduce',
    'fig.allreduce.shared_uplinks': 'uplinks carrying more than one flow', 'fig.allreduce.busiest_uplink_pct': 'the busiest uplink\'s utilisation',
    'fig.allreduce.pauses': 'PAUSE frames', 'fig.allreduce.ecn_marks': 'ECN marks', 'fig.allreduce.retransmissions': 'packets sent again',
    'chart.allreduce.busbw': 'busbw: the QPs you chose, one more, the ideal', 'chart.allreduce.uplinks': 'Leaf→spine uplinks with the most flows: utilisation',
    'chart.allreduce.spread': 'How many uplinks carried 0, 1, 2, … flows',
    'v.ar.head': 'busbw is {pct}% of the ideal {ideal} GB/s; ',
    'v.ar.line_rate': 'that is the line rate: nothing in the fabric holds the ring back.',
    'v.ar.oversubscribed': 'that is as fast as the oversubscribed uplinks go: {s} uplinks of {g} Gb/s per leaf under a {h} Gb/s host, which the ideal already counts.',
    'v.ar.drops': 'the limit is drops: the fabric lost {d} frames, and the lost packets are sent again.',
    'v.ar.dcqcn': 'the limit is DCQCN\'s rate cuts: the flows\' paths allow {paths}% of the ideal, but the ECN marks ({m}) made the NICs slow their QPs far below that.',
    'v.ar.latency': 'the flows\' paths allow {paths}% of the ideal, so the rest is time the ideal does not count: each step\'s latency, the pipeline filling and draining, and the reactions to PAUSE and ECN.',
    'v.ar.ecmp': 'the limit is ECMP collisions: on {n} uplinks the hash put more flows than an even spread would (up to {k} on one; {f} flows leave each leaf over {s} uplinks). The ring runs at its slowest flow, and the paths allow only {paths}% of the ideal.',
    'v.ar.few_flows': 'the limit is one path per flow: only {f} flows leave each leaf over {s} uplinks of {g} Gb/s, and each flow rides one uplink, so the paths allow only {paths}% of the ideal.',
    'v.ar.uneven': 'the limit is an uneven split: {f} flows cannot divide evenly over {s} uplinks, the busiest carries {k}, and the ring runs at its slowest flow: the paths allow only {paths}% of the ideal.',
    'v.ar.more': ' One more QP per connection ({q1} in all) gives {b1} GB/s, a change of {gain}.',
    'lim.line_rate': 'the line rate', 'lim.oversubscribed': 'the oversubscribed uplinks', 'lim.drops': 'drops', 'lim.dcqcn': 'DCQCN\'s rate cuts',
    'lim.latency': 'each step\'s latency and the pipeline', 'lim.ecmp': 'ECMP collisions', 'lim.few_flows': 'fewer flows than uplinks', 'lim.uneven': 'an uneven split',
    'vk.limit_more': 'the limit with one more QP', 'vk.paths_more_pct': 'with one more QP, the share of the ideal the paths allow',
    'vk.paths_pct': 'the share of the ideal the paths allow', 'vk.flows_per_leaf': 'flows leaving each leaf', 'vk.collided_uplinks': 'collided uplinks',
    'vk.max_flows': 'most flows on one uplink', 'vk.gain_pct': 'what one more QP changes', 'vk.busbw_pct': 'busbw as a share of the ideal',
    'vk.limit': 'limit', 'vk.spines': 'uplinks per leaf', 'vk.spine_gbps': 'uplink rate', 'vk.host_gbps': 'host link rate', 'vk.qps': 'QPs per connection',
    'unit.hosts': 'hosts', 'unit.switches': 'switches', 'unit.QPs': 'QPs', 'unit.flows': 'flows',
    'axis.time': 'time ({u})', 'axis.loss.goodput.x': 'loss rate (%)', 'axis.loss.resent.x': 'loss rate (%)',
    'fig.incast.goodput_gbps': 'total goodput', 'fig.incast.fairness': 'fairness (Jain index)', 'fig.incast.pauses': 'PAUSE frames',
    'fig.incast.cnps': 'CNPs', 'fig.incast.drops': 'drops', 'fig.incast.peak_queue_kb': 'peak queue',
    'fig.hol.victim_gbps': 'victim goodput (with the incast)', 'fig.hol.victim_alone_gbps': 'victim goodput (alone)',
    'fig.hol.slowdown': 'slowdown', 'fig.hol.pauses': 'PAUSE frames', 'fig.hol.drops': 'drops',
    'fig.storm.victim_gbps_before': 'victim goodput before the stall', 'fig.storm.victim_gbps_during': 'victim goodput during the stall (until the watchdog acts)',
    'fig.storm.storm_pauses': 'PAUSE frames in the storm', 'fig.storm.watchdog_at_us': 'watchdog fired at', 'fig.storm.watchdog_drops': 'watchdog drops',
    'fig.null.storm.watchdog_at_us': 'not triggered',
    'fig.deadlock.delivered_mb': 'delivered', 'fig.deadlock.stalled_for_us': 'stalled for', 'fig.deadlock.watchdog_drops': 'watchdog drops',
    'fig.loss.gbn_retention': 'go-back-N retention (largest loss rate)', 'fig.loss.sr_retention': 'selective repeat retention (largest loss rate)',
    'fig.loss.tcp_retention': 'TCP retention (largest loss rate)',
    'fig.qps.gbps_one': 'throughput, 1 QP', 'fig.qps.gbps_many': 'throughput, N QPs',
    'fig.qps.max_share_one': 'busiest spine\'s share, 1 QP', 'fig.qps.max_share_many': 'busiest spine\'s share, N QPs',
    'fig.trouble.goodput_gbps': 'goodput', 'fig.trouble.completions_ok': 'successful completions', 'fig.trouble.completions_err': 'error completions',
    'chart.incast.queue': 'Egress queue towards the receiver', 'chart.incast.rate': 'Goodput per sender',
    'chart.incast.dcqcn_rate': 'Each sender\'s current DCQCN rate Rc', 'chart.incast.pauses': 'PAUSE frames (cumulative)',
    'chart.empty.incast.dcqcn_rate': 'DCQCN is off: no rate to plot',
    'chart.hol.victim': 'Victim goodput over time', 'chart.hol.queue': 'Switch egress queues', 'chart.hol.pauses': 'PAUSE frames (cumulative)',
    'chart.storm.flows': 'Goodput per flow over time', 'chart.storm.pauses': 'PAUSE frames sent per port (cumulative)',
    'chart.deadlock.delivered': 'Delivered per flow (cumulative)', 'chart.deadlock.paused': 'Ring links paused',
    'chart.loss.goodput': 'Goodput against the loss rate', 'chart.loss.resent': 'Bytes resent per byte delivered',
    'chart.null.loss.goodput': 'stalled: nothing delivered in the last ms of the run',
    'chart.null.loss.resent': 'stalled: no delivered bytes to compare with',
    'chart.qps.paths': 'Share of the bytes per spine uplink', 'chart.qps.throughput': 'Throughput: 1 QP against N QPs',
    'v.incast': 'Total goodput is {pct}% of the bottleneck link\'s ceiling ({cap} Gb/s).',
    'v.hol': 'The victim was paused by PAUSE {pct}% of the time.',
    'v.hol.none': 'The victim was never paused.',
    'v.storm.yes': 'Contained: the PFC watchdog fired at {at} µs and the storm stopped spreading.',
    'v.storm.yes0': 'Contained: the storm did not spread through the fabric.',
    'v.storm.no': 'Not contained: the PAUSE storm spread through the switches and stopped flows that have nothing to do with the stalled host.',
    'v.deadlock.yes': 'Deadlocked: from {since} µs to the end of the run every ring link stayed paused with frames queued, and no flow moved ({for} µs).',
    'v.deadlock.done': 'No deadlock: every flow completed.',
    'v.deadlock.short': 'Stalled for {for} µs, shorter than the {thr} µs this lab counts as a deadlock: run longer.',
    'v.deadlock.no': 'No deadlock: the flows kept moving.',
    'v.loss.part': '{path} from {pct}% loss',
    'v.loss.stalled': 'Stalled: {parts}. A lost NAK, resend or tail packet left the path waiting for a retransmission timeout until the run ended.',
    'v.loss.none': 'No path stalled: every loss was recovered before the run ended.',
    'vk.bottleneck_gbps': 'goodput ceiling of the bottleneck link',
    'vk.victim_paused_pct': 'share of the run the victim\'s trunk was paused',
    'vk.contained': 'storm contained',
    'vk.victim_gbps_late': 'victim goodput (last quarter of the run)',
    'vk.storms': 'storms the watchdog declared',
    'vk.victim_sender_paused_pct': 'share of the run the victim\'s sender was paused',
    'vk.deadlocked': 'deadlocked',
    'vk.completed': 'every flow delivered',
    'vk.completed_at_us': 'all delivered at',
    'vk.null.completed_at_us': 'not all delivered',
    'vk.stalled_since_us': 'stalled since',
    'vk.null.stalled_since_us': 'no stall',
    'vk.stalled_for_us': 'stalled for',
    'vk.null.stalled_for_us': 'no stall',
    'vk.paused_links_at_end': 'ring links paused at the end',
    'vk.stalled_at_pct': 'stalled from loss rate',
    'vk.stall_threshold_us': 'a stall this long counts as deadlock',
    'vk.drops': 'frames dropped in the fabric',
    'vk.status': 'first error completion',
    'vk.status.ok': 'every completion\'s status',
    'vk.symptom': 'symptom',
    'vk.cnp_handled': 'CNPs the senders handled', 'vk.cnp_lost': 'CNPs lost', 'vk.cnp_sent': 'CNPs the receiver sent',
    'vk.pauses': 'PAUSE frames', 'vk.pauses_strict_cnp_class': 'PAUSE frames in the comparison run (CNPs in strict priority 6)',
    'vk.responder_packets': 'request packets the responder received', 'vk.failed_call': 'the call that failed',
    'vk.sgid_index': 'GID index used here', 'vk.sgid': 'this side\'s GID (source)', 'vk.dgid': 'the remote GID (destination)',
    'vk.error': 'error', 'vk.error.gid_family': 'the source GID is an IPv6 address and the destination GID an IPv4 one: different families, so the kernel cannot resolve the destination MAC and INIT→RTR returns EINVAL',
    'sym.pauses_multiply': 'Every WRITE completes, yet the switch keeps sending PAUSE frames and the stream runs far below the link.',
    'sym.connection_never_up': 'The connection never comes up: INIT→RTR fails and not one packet is sent.',
    'tr.pick': 'Pick a case',
    'tr.case': 'Case {n}',
    'tr.case.head': 'Case {n}: {title}',
    'tr.nocase': 'There is no case “{c}”: pick one of cases 1 to {k} above.',
    'tr.symptom': 'Symptom: what the application sees',
    'tr.counters': 'The counters of both NICs and the switch',
    'tr.onlynz': 'Non-zero only',
    'tr.nonzero': '{nz} of {n} counters are not zero',
    'tr.question': 'What is the cause?',
    'tr.hint': 'Read the symptom and the counters above first, then pick a cause.',
    'tr.right': '✓ Right.',
    'tr.wrong': '✗ Not this one: look at the counters again.',
    'tr.reveal': 'Reveal the answer',
    'tr.hide': 'Hide the answer',
    'tr.h.cause': 'Cause and clues', 'tr.h.fix': 'Fix',
    'col.host': 'host', 'col.counter': 'counter', 'col.value': 'value', 'col.meaning': 'meaning',
    'cause.rnr': 'The receiver does not post receive WQEs in time',
    'cause.peer_gone': 'The peer\'s QP is gone (process exited or QP destroyed)',
    'cause.pfc_priority': 'RoCE traffic is not on the switch\'s lossless priority (PFC priority / trust mode mismatch)',
    'cause.mtu': 'The QP\'s path MTU is larger than some link on the path allows',
    'cause.x_congestion': 'Plain incast congestion: the switch buffer is too small',
    'cause.x_rkey': 'The WRITE requests carry a wrong rkey',
    'cause.x_cable': 'A bad cable or optic (CRC errors on the link)',
    'explain.rnr': 'The responder\'s out_of_buffer and the requester\'s rnr_nak_retry_err rise together, and req_rnr_retries_exceeded records the WR that failed: SENDs arrive at an empty receive queue. The switch dropped nothing and sent no PAUSE. Fix: post enough receive WQEs ahead (or use an SRQ, or credit-based flow control).',
    'explain.peer_gone': 'Only the requester\'s local_ack_timeout_err and req_transport_retries_exceeded rise, everything else is zero: no ACK, no NAK, no switch drops. Fix: detect the peer going away through the out-of-band connection or RDMA CM events, and reconnect.',
    'explain.pfc_priority': 'The switch\'s egress_discards rise, yet there is no PAUSE anywhere; the drops show up as the responder\'s out_of_sequence and the requester\'s packet_seq_err. Fix: the same trust mode and priority map on NICs and switches, PFC on the priority RoCE uses.',
    'explain.mtu': 'The switch\'s mtu_discards rise, then the requester\'s local_ack_timeout_err; there is no PAUSE and no ECN mark, and only the large message fails. Fix: a path_mtu every hop passes, or jumbo frames all along the path.',
    'sym.sends_fail': 'The first SENDs complete; then one SEND fails and every one after it is flushed.',
    'sym.writes_hang_then_fail': 'A stream of WRITEs stops completing, then fails after a long wait.',
    'sym.slow_stream': 'Every WRITE completes, but the stream runs far slower than the link.',
    'sym.large_writes_fail': 'A few small WRITEs complete; a large WRITE hangs, then fails after a long wait.',
    'ctr.out_of_sequence': 'responder: packets that arrived out of sequence',
    'ctr.packet_seq_err': 'requester: sequence-error NAKs received',
    'ctr.local_ack_timeout_err': 'requester: ACK timer expirations',
    'ctr.rnr_nak_retry_err': 'requester: RNR NAKs received',
    'ctr.duplicate_request': 'responder: duplicate requests received',
    'ctr.out_of_buffer': 'responder: no receive WQE available',
    'ctr.np_ecn_marked_roce_packets': 'responder: ECN-marked RoCE packets',
    'ctr.np_cnp_sent': 'responder: CNPs sent',
    'ctr.rp_cnp_handled': 'requester: CNPs handled (rate cuts)',
    'ctr.req_transport_retries_exceeded': 'requester: WRs that ended in RETRY_EXC_ERR once the resends (retry_cnt) ran out',
    'ctr.req_rnr_retries_exceeded': 'requester: WRs that ended in RNR_RETRY_EXC_ERR once the RNR retries (rnr_retry) ran out',
    'ctr.egress_discards': 'switch: frames discarded at an egress queue (buffer or queue full, or a drawn overflow on a lossy priority as in lesson ⑤)',
    'ctr.mtu_discards': 'switch: frames longer than the port MTU, discarded',
    'ctr.ecn_marked': 'switch: frames marked CE (ECN)',
    'ctr.pause_frames_sent': 'switch: PAUSE frames the switch sent',
    'ctr.rx_prio_pause': 'priority {p} PAUSE frames received',
    'ctr.rx_prio_pause_duration': 'time paused by priority {p} PAUSE (µs)',
    'ctr.tx_prio_pause': 'priority {p} PAUSE frames sent',
    'ctr.tx_prio_pause_duration': 'time this end asked the peer to pause (µs)',
  },
};

/** Whether the string table has `key`. */
const has = (key) => key in S[lang()] || key in S.zh;

/** A string of this module's table (falling back to i18n.js), `{name}` filled from `vars`. */
const tt = (key, vars) => tFrom(S, key, vars);

/** `key` from the table, or `fallback` when the table lacks it. */
const ttOr = (key, fallback, vars) => (has(key) ? tt(key, vars) : fallback);

const unitText = (u) => (u ? ttOr(`unit.${u}`, u) : '');


// ---------------------------------------------------------------------------------------------
// Data.

let descCache = null;
/** The labs' descriptors, fetched once (again after a failed fetch). */
function labDescriptors() {
  descCache ??= api('/api/labs').catch((e) => { descCache = null; throw e; });
  return descCache;
}

const isCase = (lab, p) => lab === 'trouble' && p.name === 'case';
const caseIds = (desc) => {
  const p = desc.params.find((q) => isCase(desc.id, q));
  return p ? (p.choices || []).map(String) : [];
};

/** A parameter's value from its text (URL or form): typed when it parses, the raw text otherwise. */
function parseParam(lab, p, raw) {
  const s = String(raw).trim();
  if (p.kind !== 'bool' && p.kind !== 'choice') {
    const n = Number(s);
    return s !== '' && Number.isFinite(n) ? n : s;
  }
  if (p.kind === 'bool') {
    if (/^(true|1|on|yes)$/i.test(s)) return true;
    if (/^(false|0|off|no)$/i.test(s)) return false;
    return s;
  }
  const choices = p.choices || [];
  // The troubleshooting case is written as its number in the URL, so the address does not name the cause.
  if (isCase(lab, p) && /^\d+$/.test(s) && +s >= 1 && +s <= choices.length) return choices[+s - 1];
  const c = choices.find((x) => String(x) === s);
  return c === undefined ? s : c;
}

/** The parameters the URL asks for (defaults for the rest). */
function fromQuery(desc) {
  const q = new URLSearchParams(location.search);
  const v = {};
  for (const p of desc.params) {
    const raw = q.get(p.name);
    v[p.name] = raw == null ? p.default : parseParam(desc.id, p, raw);
  }
  return v;
}

/** The query pairs for `values`: only what differs from the defaults. */
function toQuery(desc, values) {
  const pairs = [];
  for (const p of desc.params) {
    const v = values[p.name];
    if (v === undefined || String(v) === String(p.default)) continue;
    if (isCase(desc.id, p)) {
      const k = (p.choices || []).findIndex((c) => String(c) === String(v));
      pairs.push([p.name, k >= 0 ? String(k + 1) : String(v)]);
    } else pairs.push([p.name, String(v)]);
  }
  return pairs;
}

// ---------------------------------------------------------------------------------------------
// The index.

const labSummary = (text) => (text && text.summary) || '';

/** "Taught in: …": links to the chapters that teach this lab. */
function chaptersHtml(text) {
  const cs = (text && text.chapters) || [];
  if (!cs.length) return '';
  return `<p class="lab-chapters" data-testid="lab-chapters"><span class="muted">${esc(tt('lab.chapters'))}</span> ${cs.map((c) => `<a class="chip" data-link data-chapter="${esc(c.id)}" href="${href(`/chapter/${encodeURIComponent(c.id)}`)}">${esc(c.title)}</a>`).join(' ')}</p>`;
}

/** The ids to list: the known order first, then any lab the API adds. */
function orderIds(ids) {
  return [...LABS.filter((id) => ids.includes(id)), ...ids.filter((id) => !LABS.includes(id))];
}

export async function renderLabs(main, live) {
  const [descs, course] = await Promise.all([labDescriptors().catch(() => null), courseLabs()]);
  if (!live()) return;
  document.title = `${tt('labs.title')} · ${t('title')}`;
  const ids = orderIds(descs ? descs.map((d) => d.id) : LABS);
  const cards = ids.map((id, i) => {
    const text = course && course.find((l) => l.id === id);
    return `
    <li class="card lab-card" data-lab="${esc(id)}">
      <a data-link href="${href(`/lab/${encodeURIComponent(id)}`)}">
        <span class="num">${esc(tt('labs.n', { n: i + 1 }))}</span>
        <strong>${esc(labName(course, id))}</strong>
        <span class="goal">${esc(labSummary(text))}</span>
      </a>
    </li>`;
  }).join('');
  main.innerHTML = `
    <section class="labs">
      <h1>${esc(tt('labs.title'))}</h1>
      <p class="lead">${esc(tt('labs.lead'))}</p>
      <ol class="cards lab-cards">${cards}</ol>
    </section>`;
}

// ---------------------------------------------------------------------------------------------
// The form.

/** A parameter's label: the lab's own (`param.LAB.NAME`) when its meaning there is narrower. */
function paramLabel(p, lab) {
  return ttOr(`param.${lab}.${p.name}`, ttOr(`param.${p.name}`, p.name));
}

function choiceLabel(p, c) {
  const base = ttOr(`choice.${p.name}.${c}`, String(c));
  return p.unit && typeof c === 'number' ? `${base} ${unitText(p.unit)}` : base;
}

function fieldHtml(lab, p, v) {
  const id = `lp-${p.name.replace(/\W/g, '-')}`;
  const name = `<code class="lab-pname">${esc(p.name)}</code>`;
  const u = unitText(p.unit);
  const label = esc(paramLabel(p, lab));
  const unit = u && !paramLabel(p, lab).toLowerCase().includes(u.toLowerCase()) ? ` <span class="unit">(${esc(u)})</span>` : '';
  if (p.kind === 'bool') {
    return `<div class="lab-param bool"><label for="${id}"><input id="${id}" type="checkbox" data-param="${esc(p.name)}"${v === true ? ' checked' : ''}> ${label}</label>${name}</div>`;
  }
  if (p.kind === 'choice') {
    const choices = [...(p.choices || [])];
    if (!choices.some((c) => String(c) === String(v))) choices.push(v);
    const opts = choices.map((c) => `<option value="${esc(c)}"${String(c) === String(v) ? ' selected' : ''}>${esc(choiceLabel(p, c))}</option>`).join('');
    return `<div class="lab-param"><label for="${id}">${label}${unit}</label><select id="${id}" data-param="${esc(p.name)}">${opts}</select>${name}</div>`;
  }
  const lim = `${p.min != null ? ` min="${esc(p.min)}"` : ''}${p.max != null ? ` max="${esc(p.max)}"` : ''}`;
  const num = typeof v === 'number' ? v : p.default;
  const step = p.kind === 'int' ? '1' : 'any';
  return `<div class="lab-param int"><label for="${id}">${label}${unit}</label>
      <span class="lab-int"><input id="${id}" type="number" step="${step}"${lim} data-param="${esc(p.name)}" value="${esc(v)}">
      ${p.min != null && p.max != null ? `<input type="range" step="${step}"${lim} value="${esc(num)}" data-mirror="${esc(p.name)}" aria-label="${label}">` : ''}</span>${name}</div>`;
}

/** The troubleshooting lab's case picker: neutral names, "case 1" … "case 4". */
function casePickerHtml(p, v) {
  const radios = (p.choices || []).map((c, i) => `
      <label class="lab-case"><input type="radio" name="lp-case" value="${esc(c)}" data-param="${esc(p.name)}"${String(c) === String(v) ? ' checked' : ''}> ${esc(tt('tr.case', { n: i + 1 }))}</label>`).join('');
  return `<fieldset class="lab-cases"><legend>${esc(tt('tr.pick'))}</legend>${radios}</fieldset>`;
}

function formHtml(desc, values) {
  const lab = desc.id;
  const cases = desc.params.filter((p) => isCase(lab, p)).map((p) => casePickerHtml(p, values[p.name])).join('');
  const rest = desc.params.filter((p) => !isCase(lab, p));
  const grid = rest.length
    ? `<fieldset class="lab-params"><legend>${esc(tt('lab.params'))}</legend><div class="grid">${rest.map((p) => fieldHtml(lab, p, values[p.name])).join('')}</div></fieldset>`
    : '';
  return `
    <form class="lab-form" data-testid="lab-form" novalidate>
      ${cases}${grid}
      <div class="lab-actions">
        <button type="submit" class="button" data-testid="lab-run">${esc(tt('lab.run'))}</button>
        <a class="button secondary" data-link href="${href(`/lab/${encodeURIComponent(lab)}`)}">${esc(tt('lab.reset'))}</a>
        <span class="status lab-status" role="status" aria-live="polite"></span>
      </div>
      <p class="error lab-error" role="alert" hidden></p>
    </form>`;
}

/** The form's values, typed like the descriptor; an emptied number field is left to its default. */
function readForm(form, desc) {
  const v = {};
  for (const p of desc.params) {
    const els = [...form.querySelectorAll('[data-param]')].filter((e) => e.dataset.param === p.name);
    if (!els.length) continue;
    const el = els[0];
    if (el.type === 'radio') {
      const on = els.find((e) => e.checked);
      if (on) v[p.name] = parseParam(desc.id, p, on.value);
    } else if (el.type === 'checkbox') {
      v[p.name] = el.checked;
    } else if (el.value.trim() !== '') {
      v[p.name] = parseParam(desc.id, p, el.value);
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// The result.

function figureLabel(lab, id) {
  return ttOr(`fig.${lab}.${id}`, id);
}

function figuresHtml(lab, figures) {
  const items = (figures || []).map((f) => {
    const none = f.value == null;
    const shown = none ? ttOr(`fig.null.${lab}.${f.id}`, '—') : fmtNum(f.value);
    const unit = !none && f.unit ? ` <span class="unit">${esc(unitText(f.unit))}</span>` : '';
    return `<li class="lab-fig" data-figure="${esc(f.id)}" data-value="${none ? '' : esc(f.value)}">
        <span class="lab-fig-label">${esc(figureLabel(lab, f.id))}</span>
        <span class="lab-fig-value"><span class="v">${esc(shown)}</span>${unit}</span></li>`;
  }).join('');
  return `<ul class="lab-figures" data-testid="lab-figures">${items}</ul>`;
}

const figValue = (res, id) => {
  const f = (res.figures || []).find((x) => x.id === id);
  return f ? f.value : null;
};

/** How each verdict key is shown: a unit for numbers, or a kind (bool, code, symptom). */
const VERDICT_KEYS = {
  bottleneck_gbps: { unit: 'Gb/s' },
  victim_paused_pct: { unit: '%' },
  contained: { kind: 'bool' },
  victim_gbps_late: { unit: 'Gb/s' },
  storms: {},
  victim_sender_paused_pct: { unit: '%' },
  deadlocked: { kind: 'bool' },
  completed: { kind: 'bool' },
  completed_at_us: { unit: 'µs' },
  stalled_since_us: { unit: 'µs' },
  stalled_for_us: { unit: 'µs' },
  stall_threshold_us: { unit: 'µs' },
  paused_links_at_end: { unit: 'links' },
  stalled_at_pct: { kind: 'paths', unit: '%' },
  drops: { unit: 'frames' },
  status: { kind: 'code' },
  symptom: { kind: 'symptom' },
  pauses_rdma: { unit: 'frames' },
  drops_tcp: { unit: 'frames' },
  limit: { kind: 'limit' },
  limit_more: { kind: 'limit' },
  paths_pct: { unit: '%' },
  paths_more_pct: { unit: '%' },
  busbw_pct: { unit: '%' },
  gain_pct: { unit: '%' },
  spine_gbps: { unit: 'Gb/s' },
  host_gbps: { unit: 'Gb/s' },
  collided_uplinks: { unit: 'uplinks' },
  flows_per_leaf: { unit: 'flows' },
  max_flows: { unit: 'flows' },
  qps: { unit: 'QPs' },
  spines: { unit: 'uplinks' },
  busy_rdma_pct: { unit: '%' },
  busy_tcp_pct: { unit: '%' },
  cnp_sent: { unit: 'packets' },
  cnp_handled: { unit: 'packets' },
  cnp_lost: { unit: 'packets' },
  pauses: { unit: 'frames' },
  pauses_strict_cnp_class: { unit: 'frames' },
  responder_packets: { unit: 'packets' },
};

/** A verdict value for people: yes/no, a status, a symptom sentence, or a number with its unit. */
function verdictValue(key, x) {
  const spec = VERDICT_KEYS[key] || {};
  // The simulator's error text is English; a page says it in its own words when it knows the case.
  if (key === 'error' && typeof x === 'string' && /IPv6 address, but the destination GID .* is IPv4/.test(x)) return tt('vk.error.gid_family');
  if (x === null || x === undefined) return ttOr(`vk.null.${key}`, '—');
  if (spec.kind === 'symptom') return ttOr(`sym.${x}`, String(x));
  if (spec.kind === 'limit') return ttOr(`lim.${x}`, String(x));
  if (spec.kind === 'paths' && typeof x === 'object') {
    return Object.entries(x).map(([k, y]) => `${seriesName(k)} ${y == null ? '—' : `${fmtNum(y)}${spec.unit || ''}`}`).join(' · ');
  }
  if (typeof x === 'object') return JSON.stringify(x);
  const unit = typeof x === 'number' && spec.unit ? unitText(spec.unit) : '';
  return `${fmtNum(x)}${unit ? `${spec.unit === '%' ? '' : ' '}${unit}` : ''}`;
}

/**
 * The verdict in words and a tone (good, bad, warn or ''), as [html, plain text, tone, keys the
 * words say]. `opts.symptomShown`: the page already shows the troubleshooting case's symptom.
 */
function verdictWords(lab, v, res, opts = {}) {
  const say = (s, tone, keys) => [esc(s), s, tone, keys];
  if (lab === 'incast' && typeof v.bottleneck_gbps === 'number' && v.bottleneck_gbps > 0) {
    const g = figValue(res, 'goodput_gbps');
    if (typeof g === 'number') {
      return say(tt('v.incast', { pct: fmtNum(Math.round((g / v.bottleneck_gbps) * 1000) / 10), cap: fmtNum(v.bottleneck_gbps) }), '', ['bottleneck_gbps']);
    }
  }
  if (lab === 'hol' && 'victim_paused_pct' in v) {
    const pct = Number(v.victim_paused_pct);
    return pct > 0
      ? say(tt('v.hol', { pct: fmtNum(pct) }), pct >= 5 ? 'bad' : 'warn', ['victim_paused_pct'])
      : say(tt('v.hol.none'), 'good', ['victim_paused_pct']);
  }
  if (lab === 'storm' && 'contained' in v) {
    if (!v.contained) return say(tt('v.storm.no'), 'bad', ['contained']);
    const at = figValue(res, 'watchdog_at_us');
    return say(at == null ? tt('v.storm.yes0') : tt('v.storm.yes', { at: fmtNum(at) }), 'good', ['contained']);
  }
  if (lab === 'deadlock' && 'deadlocked' in v) {
    if (v.deadlocked) {
      return say(tt('v.deadlock.yes', { since: fmtNum(v.stalled_since_us), for: fmtNum(v.stalled_for_us) }), 'bad',
        ['deadlocked', 'completed', 'stalled_since_us', 'stalled_for_us', 'completed_at_us']);
    }
    if (v.completed) return say(tt('v.deadlock.done'), 'good', ['deadlocked', 'completed']);
    if (v.stalled_since_us != null && v.stalled_for_us != null) {
      return say(tt('v.deadlock.short', { for: fmtNum(v.stalled_for_us), thr: fmtNum(v.stall_threshold_us) }), 'warn',
        ['deadlocked', 'completed', 'stalled_for_us', 'stall_threshold_us']);
    }
    return say(tt('v.deadlock.no'), 'good', ['deadlocked', 'completed']);
  }
  if (lab === 'loss' && v.stalled_at_pct && typeof v.stalled_at_pct === 'object') {
    const parts = Object.entries(v.stalled_at_pct).filter(([, x]) => x != null)
      .map(([k, x]) => tt('v.loss.part', { path: seriesName(k), pct: fmtNum(x) }));
    return parts.length
      ? say(tt('v.loss.stalled', { parts: parts.join(lang() === 'en' ? '; ' : '；') }), 'bad', ['stalled_at_pct'])
      : say(tt('v.loss.none'), 'good', ['stalled_at_pct']);
  }
  if (lab === 'nvmf' && v.winner) return nvmfWords(v, res, say);
  if (lab === 'allreduce' && v.limit) return allreduceWords(v, res, say);
  if (lab === 'trouble' && v.symptom) {
    const tone = v.status && v.status !== 'SUCCESS' ? 'bad' : 'warn';
    // The case's own text above already tells the symptom: only the status follows.
    if (opts.symptomShown) return ['', '', tone, ['symptom']];
    // The symptom in words; the status follows in the list below it.
    return say(ttOr(`sym.${v.symptom}`, String(v.symptom)), tone, ['symptom']);
  }
  return ['', '', '', []];
}

/**
 * The NVMe-oF lab's verdict in words: which transport completes more IOs at the asked depth
 * and by how much, the CPU per IO ratio, and what held each transport back.
 */
function nvmfWords(v, res, say) {
  const ia = figValue(res, 'iops_rdma'), ib = figValue(res, 'iops_tcp');
  const names = { 'nvmf-rdma': 'NVMe/RDMA', 'nvmf-tcp': 'NVMe/TCP' };
  let head;
  if (v.winner === 'tie') head = tt('v.nvmf.tie', { qd: v.iodepth, ia: fmtNum(ia), ib: fmtNum(ib) });
  else {
    const rdma = v.winner === 'nvmf-rdma';
    const x = rdma ? v.iops_ratio : Math.round((ib / ia) * 100) / 100;
    head = tt('v.nvmf.win', {
      qd: v.iodepth, a: names[v.winner], b: rdma ? 'NVMe/TCP' : 'NVMe/RDMA',
      ia: fmtNum(rdma ? ia : ib), ib: fmtNum(rdma ? ib : ia), x: fmtNum(x),
    });
  }
  let s = head + tt('v.nvmf.cpu', { x: fmtNum(v.cpu_ratio) });
  for (const [e, k] of [['NVMe/RDMA', 'rdma'], ['NVMe/TCP', 'tcp']]) {
    const kind = v[`limit_${k}_kind`];
    const res = ttOr(`res.${v[`limit_${k}`]}`, String(v[`limit_${k}`]));
    s += tt(`v.nvmf.${kind === 'saturated' || kind === 'bursts' ? kind : 'depth'}`, {
      e, res, pct: fmtNum(v[`busy_${k}_pct`]), g: fmtNum(v[`latency_growth_${k}`]),
    });
  }
  const said = ['iodepth', 'winner', 'iops_ratio', 'cpu_ratio'];
  for (const k of ['rdma', 'tcp']) said.push(`limit_${k}`, `limit_${k}_kind`, `busy_${k}_pct`, `latency_growth_${k}`);
  return say(s, '', said);
}

/**
 * The all-reduce lab's verdict in words: busbw's share of the ideal, what limited it (with the
 * figures that show it), and what one more QP per connection changed.
 */
function allreduceWords(v, res, say) {
  const fig = (id) => figValue(res, id);
  let s = tt('v.ar.head', { pct: fmtNum(v.busbw_pct), ideal: fmtNum(fig('ideal_busbw_gbs')) });
  s += ttOr(`v.ar.${v.limit}`, String(v.limit), {
    s: v.spines, g: fmtNum(v.spine_gbps), h: fmtNum(v.host_gbps), d: fmtNum(v.drops), m: fmtNum(fig('ecn_marks')),
    paths: fmtNum(v.paths_pct), n: v.collided_uplinks, k: v.max_flows, f: v.flows_per_leaf,
  });
  const g = Number(v.gain_pct);
  const gain = `${g > 0 ? '+' : g < 0 ? '−' : ''}${fmtNum(Math.abs(g))}%`;
  s += tt('v.ar.more', { q1: Number(v.qps) + 1, b1: fmtNum(fig('busbw_more_gbs')), gain });
  const said = ['busbw_pct', 'limit', 'paths_pct', 'spines', 'spine_gbps', 'host_gbps', 'collided_uplinks', 'max_flows', 'flows_per_leaf', 'qps', 'gain_pct'];
  if (v.limit !== 'drops') said.push('drops');
  const tone = v.limit === 'line_rate' || v.limit === 'oversubscribed' ? 'good' : 'warn';
  return say(s, tone, said);
}

/** The verdict's keys the sentence does not already say, labelled, as [html of the items, plain text]. */
function verdictRest(lab, v, said) {
  const skip = new Set(said);
  // Once every flow is delivered, the time since the last progress is idle time, not a stall.
  if (lab === 'deadlock' && v.completed === true) { skip.add('stalled_for_us'); skip.add('stalled_since_us'); }
  const rows = Object.entries(v).filter(([k]) => !skip.has(k))
    .map(([k, x]) => [k, ttOr(k === 'status' && x === 'SUCCESS' ? 'vk.status.ok' : `vk.${k}`, k), verdictValue(k, x), (VERDICT_KEYS[k] || {}).kind === 'code' && x != null]);
  const html = rows.map(([k, label, val, code]) => `<div class="lab-vk" data-key="${esc(k)}"><dt>${esc(label)}</dt><dd>${code ? `<code>${esc(val)}</code>` : esc(val)}</dd></div>`).join('');
  const text = rows.map(([, label, val]) => `${label}: ${val}`).join(' · ');
  return [html, text];
}

const attrValue = (x) => (x === null ? 'null' : typeof x === 'object' ? JSON.stringify(x) : String(x));

/** The verdict element; its data attributes are the verdict's keys, spelled as the API spells them. */
function verdictHtml(lab, v, res, opts = {}) {
  if (!v || typeof v !== 'object' || !Object.keys(v).length) return ['<div class="lab-verdict" data-testid="lab-verdict" hidden></div>', ''];
  const attrs = Object.entries(v).filter(([k]) => /^[a-z][a-z0-9_]*$/.test(k))
    .map(([k, x]) => ` data-${k}="${esc(attrValue(x))}"`).join('');
  const [html, text, tone, said] = verdictWords(lab, v, res, opts);
  const [rest, restText] = verdictRest(lab, v, said);
  const body = `${html ? `<p class="lab-verdict-text">${html}</p>` : ''}${rest ? `<dl class="lab-verdict-keys">${rest}</dl>` : ''}`;
  return [`<div class="lab-verdict${tone ? ` ${tone}` : ''}" data-testid="lab-verdict"${attrs}>${body}</div>`, text || restText];
}

/** Series names as the server writes them (English), in Chinese for the zh page. */
const SERIES_ZH = {
  'with incast': '有 incast 时',
  alone: '单独跑',
  'right → r-h0 (congested port)': '右交换机 → r-h0（拥塞的端口）',
  'left → trunk (where the victim waits)': '左交换机 → 干线（受害流在这里排队）',
  'right → left (trunk)': '右交换机 → 左交换机（干线）',
  'left → its hosts': '左交换机 → 它下面的主机',
  'l-h0 → r-h0 (the host that stalls)': 'l-h0 → r-h0（会卡死的主机）',
  'r-h0 (the stalled NIC)': 'r-h0（卡死的网卡）',
  'right switch → trunk': '右交换机 → 干线',
  'left switch → l-h0': '左交换机 → l-h0',
  'left switch → l-h1': '左交换机 → l-h1',
  'ring links paused': '被暂停的环链路',
  'switch → receiver (deepest per window)': '交换机 → 接收方（每个窗口内的最深值）',
  'PAUSE frames sent': '发出的 PAUSE 帧',
  'go-back-N': 'go-back-N',
  'selective repeat': '选择性重传',
  TCP: 'TCP',
  '1 QP': '1 个 QP',
  ib_write_bw: 'ib_write_bw 测得的吞吐',
  'NVMe/RDMA: switch → target': 'NVMe/RDMA：交换机 → 目标端',
  'NVMe/TCP: switch → target': 'NVMe/TCP：交换机 → 目标端',
  'NVMe/RDMA: target → switch': 'NVMe/RDMA：目标端 → 交换机',
  'NVMe/TCP: target → switch': 'NVMe/TCP：目标端 → 交换机',
  'host usr': '发起端 usr',
  'host sys': '发起端 sys',
  'ideal (line rate)': '理想值（线速）',
  'target usr': '目标端 usr',
  'target sys': '目标端 sys',
};

/** A series name (or bar label) in the page language; names it does not know pass through. */
function seriesName(name, l = lang()) {
  const s = String(name);
  if (l !== 'zh') return s;
  if (Object.prototype.hasOwnProperty.call(SERIES_ZH, s)) return SERIES_ZH[s];
  const m = /^(\d+) QPs$/.exec(s);
  if (m) return `${m[1]} 个 QP`;
  // The all-reduce lab's uplinks ("leaf3→spine1 · 2 flows") and flow counts ("1 flow").
  const up = /^(\S+)→(\S+) · (\d+) flows?$/.exec(s);
  if (up) return `${up[1]}→${up[2]} · ${up[3]} 条流`;
  const f = /^(\d+) flows?$/.exec(s);
  return f ? `${f[1]} 条流` : s;
}

/** A chart with its series names and bar labels in the page language. */
function localChart(c) {
  return {
    ...c,
    series: (c.series || []).map((x) => ({
      ...x,
      name: x.name == null ? x.name : seriesName(x.name),
      labels: Array.isArray(x.labels) ? x.labels.map((y) => (y == null ? y : seriesName(y))) : x.labels,
    })),
  };
}

/** What an mlx5 counter counts (a tooltip and a column). */
function counterMeaning(name) {
  const m = /^(rx|tx)_prio(\d+)_pause(_duration)?$/.exec(name);
  if (m) return tt(`ctr.${m[1]}_prio_pause${m[3] || ''}`, { p: m[2] });
  return ttOr(`ctr.${name}`, '');
}

function countersHtml(counters) {
  const nz = counters.filter((c) => Number(c.value) !== 0).length;
  const rows = counters.map((c) => {
    const zero = Number(c.value) === 0;
    const meaning = counterMeaning(c.name);
    return `<tr class="${zero ? 'zero' : 'nz'}" data-counter="${esc(c.host)}/${esc(c.name)}" data-value="${esc(c.value)}">
        <td>${esc(c.host)}</td><th scope="row"><code${meaning ? ` title="${esc(meaning)}"` : ''}>${esc(c.name)}</code></th>
        <td class="num">${esc(fmtNum(c.value))}</td><td class="desc">${esc(meaning)}</td></tr>`;
  }).join('');
  return `
    <div class="lab-counters-box">
      <p class="lab-counters-bar"><span class="muted">${esc(tt('tr.nonzero', { nz, n: counters.length }))}</span>
        <label><input type="checkbox" class="lab-onlynz"> ${esc(tt('tr.onlynz'))}</label></p>
      <table class="lab-counters" data-testid="lab-counters">
        <thead><tr><th scope="col">${esc(tt('col.host'))}</th><th scope="col">${esc(tt('col.counter'))}</th>
          <th scope="col" class="num">${esc(tt('col.value'))}</th><th scope="col" class="desc">${esc(tt('col.meaning'))}</th></tr></thead>
        <tbody>${rows}</tbody>
      </table>
    </div>`;
}

function causeLabel(id, text) {
  if (has(`cause.${id}`)) return tt(`cause.${id}`);
  const c = text && text.cases && text.cases.find((x) => x.id === id);
  return c ? c.title : id;
}

function quizHtml(desc, text) {
  const ids = [...caseIds(desc), ...DISTRACTORS];
  ids.sort((a, b) => {
    const ia = CAUSE_ORDER.indexOf(a), ib = CAUSE_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  });
  const buttons = ids.map((c) => `<button type="button" class="lab-cause" data-cause="${esc(c)}" aria-pressed="false">${esc(causeLabel(c, text))}</button>`).join('');
  return `
    <section class="lab-quiz" aria-labelledby="lab-quiz-h">
      <h2 id="lab-quiz-h">${esc(tt('tr.question'))}</h2>
      <p class="muted">${esc(tt('tr.hint'))}</p>
      <div class="lab-causes" role="group" aria-labelledby="lab-quiz-h" data-testid="lab-causes">${buttons}</div>
      <p class="lab-answer" data-testid="lab-answer" role="status" aria-live="polite"></p>
      <p><button type="button" class="button secondary lab-reveal-btn" data-testid="lab-reveal-button" aria-expanded="false" aria-controls="lab-reveal">${esc(tt('tr.reveal'))}</button></p>
      <div id="lab-reveal" class="lab-reveal prose" data-testid="lab-reveal" hidden></div>
    </section>`;
}

/** The chosen case's symptom from the course text (it describes what the application sees, not the cause). */
function caseSymptomHtml(caseId, text) {
  const c = text && text.cases && text.cases.find((x) => x.id === caseId);
  return c && c.symptom_html ? `<div class="prose lab-case-symptom" data-testid="lab-case-symptom">${c.symptom_html}</div>` : '';
}

/** The answer: the course's case text, or this module's short explanation. */
function revealHtml(desc, caseId, text) {
  const n = caseIds(desc).indexOf(caseId) + 1;
  const c = text && text.cases && text.cases.find((x) => x.id === caseId);
  const name = c ? c.title : causeLabel(caseId, text);
  const head = n ? tt('tr.case.head', { n, title: name }) : name;
  if (c) {
    return `<h3>${esc(head)}</h3>
      <h4>${esc(tt('tr.h.cause'))}</h4>${c.cause_html || ''}
      <h4>${esc(tt('tr.h.fix'))}</h4>${c.fix_html || ''}`;
  }
  return `<h3>${esc(head)}</h3><p>${esc(ttOr(`explain.${caseId}`, ''))}</p>`;
}

function chartTitle(lab, id) {
  return ttOr(`chart.${lab}.${id}`, id);
}

const isTime = (u) => u === 'µs' || u === 'us' || u === 'ms';

/** The x axis's label: the lab's own, time with its unit, or the unit. */
function axisLabel(lab, c) {
  if (has(`axis.${lab}.${c.id}.x`)) return tt(`axis.${lab}.${c.id}.x`);
  return isTime(c.x_unit) ? tt('axis.time', { u: c.x_unit }) : unitText(c.x_unit);
}

/** The head of a data table's first column: what x is, with its unit. */
function tableXHeader(lab, c) {
  if (has(`axis.${lab}.${c.id}.x`) || isTime(c.x_unit)) return axisLabel(lab, c);
  const u = unitText(c.x_unit);
  if (c.kind === 'bar') return u ? tt('table.cat.u', { u }) : tt('table.cat');
  return u ? tt('table.x.u', { u }) : tt('table.x');
}

/**
 * Each chart's box: the drawing (painted at the box's width by `paintCharts`) and, under it, its
 * data as a table in a disclosure (`open`: the ids of the charts whose table was open).
 */
function chartsHtml(lab, charts, open = new Set()) {
  if (!charts || !charts.length) return '';
  const box = (c, i) => `<figure class="lab-chart-box" data-i="${i}" data-chart="${esc(c.id)}"><div class="lab-chart-draw"></div>
    ${chartTableHtml(localChart(c), {
    title: chartTitle(lab, c.id),
    xHeader: tableXHeader(lab, c),
    yUnit: unitText(c.y_unit),
    nullText: ttOr(`chart.null.${lab}.${c.id}`, '—'),
    empty: ttOr(`chart.empty.${lab}.${c.id}`, tt('lab.nodata')),
    open: open.has(c.id),
  })}</figure>`;
  return `<div class="lab-charts">${charts.map(box).join('')}</div>`;
}

/** A chapter's lab timeline: `charts` (a lab run's, from the server) drawn into `holder` as the lab page draws them, in the page language. */
export function drawLabCharts(holder, lab, charts) {
  holder.innerHTML = chartsHtml(lab, charts);
  paintCharts(holder, lab, charts);
}

/** Draws each chart at its box's width (again when the width changed). */
function paintCharts(root, lab, charts) {
  for (const box of root.querySelectorAll('.lab-chart-box')) {
    const c = charts[Number(box.dataset.i)];
    const draw = box.querySelector('.lab-chart-draw');
    if (!c || !draw) continue;
    const w = Math.round(box.clientWidth || 560);
    if (draw.firstChild && Math.abs(w - Number(box.dataset.w || 0)) < 8) continue;
    box.dataset.w = String(w);
    draw.innerHTML = chartSvg(localChart(c), {
      title: chartTitle(lab, c.id),
      width: w,
      xLabel: axisLabel(lab, c),
      yLabel: unitText(c.y_unit),
      xUnit: unitText(c.x_unit),
      yUnit: unitText(c.y_unit),
      empty: ttOr(`chart.empty.${lab}.${c.id}`, tt('lab.nodata')),
      nullText: ttOr(`chart.null.${lab}.${c.id}`, '—'),
    });
  }
}

function metaHtml(res) {
  if (res.events == null && res.wall_ms == null) return '';
  const ms = typeof res.wall_ms === 'number' ? res.wall_ms.toFixed(1) : '—';
  const words = res.events == null ? tt('lab.meta.ms', { ms }) : tt('lab.meta', { events: fmtNum(res.events), ms });
  return `<p class="lab-meta" data-events="${esc(res.events ?? '')}" data-wall-ms="${esc(res.wall_ms ?? '')}">${esc(words)}</p>`;
}

function resultHtml(desc, res, text, caseId, openTables) {
  const lab = desc.id;
  const symptom = lab === 'trouble' ? caseSymptomHtml(caseId, text) : '';
  const [verdict, words] = verdictHtml(lab, res.verdict, res, { symptomShown: !!symptom });
  const counters = res.counters && res.counters.length ? countersHtml(res.counters) : '';
  const charts = chartsHtml(lab, res.charts, openTables);
  if (lab === 'trouble') {
    return [`
      <section class="lab-symptom"><h2>${esc(tt('tr.symptom'))}</h2>${symptom}${verdict}${figuresHtml(lab, res.figures)}</section>
      ${counters ? `<section class="lab-evidence"><h2>${esc(tt('tr.counters'))}</h2>${counters}</section>` : ''}
      ${charts ? `<h2>${esc(tt('lab.charts'))}</h2>${charts}` : ''}
      ${quizHtml(desc, text)}
      ${metaHtml(res)}`, words];
  }
  return [`
    ${verdict}
    ${figuresHtml(lab, res.figures)}
    ${res.fabric ? '<div class="lab-fabric"></div>' : ''}
    ${charts}
    ${counters ? `<h2>${esc(tt('lab.counters'))}</h2>${counters}` : ''}
    ${metaHtml(res)}`, words];
}

// Charts are redrawn at the new width when the window is resized.
let shown = null;
let resizeTimer = 0;
let resizeHooked = false;
function onResize() {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (shown && shown.live()) paintCharts(shown.root, shown.lab, shown.charts);
    else shown = null;
  }, 200);
}

// ---------------------------------------------------------------------------------------------
// A lab page.

export async function renderLab(main, id, live) {
  document.body.dataset.run = 'busy';
  let descs, course;
  try {
    [descs, course] = await Promise.all([labDescriptors(), courseLabs()]);
  } catch (e) {
    if (live()) document.body.dataset.run = 'error';
    throw e;
  }
  if (!live()) return;
  const desc = descs.find((d) => d.id === id);
  if (!desc) {
    document.title = `${tt('labs.title')} · ${t('title')}`;
    main.innerHTML = `<p class="error" role="alert">${esc(tt('lab.unknown', { id }))}</p>
      <p><a data-link href="${href('/labs')}">${esc(tt('labs.back'))}</a></p>`;
    document.body.dataset.run = 'error';
    return;
  }
  desc.params ||= [];
  const text = (course && course.find((l) => l.id === id)) || null;
  const title = labName(course, id);
  document.title = `${title} · ${t('title')}`;
  const values = fromQuery(desc);
  // A troubleshooting case the URL names but the lab does not have: no run, a neutral message
  // (the API's own answer would list the causes by name).
  const caseParam = desc.params.find((p) => isCase(id, p));
  const badCase = caseParam && !caseIds(desc).includes(String(values.case)) ? String(values.case) : null;
  if (badCase !== null) values.case = undefined;
  // DCQCN reacts to ECN marks: with ECN off the only choice is off.
  if (id === 'incast' && values.ecn === false && values.dcqcn !== undefined) values.dcqcn = 'off';
  main.innerHTML = `
    <section class="lab" data-lab="${esc(id)}">
      <p class="crumb"><a data-link href="${href('/labs')}">${esc(tt('labs.back'))}</a></p>
      <h1>${esc(title)}</h1>
      <p class="lead">${esc(labSummary(text))}</p>
      ${chaptersHtml(text)}
      ${text && text.intro_html ? `<div class="prose lab-intro">${text.intro_html}</div>` : ''}
      ${formHtml(desc, values)}
      <div class="lab-results" aria-live="off"></div>
      ${text && text.look_html ? `<section class="prose lab-look"><h2>${esc(tt('lab.look'))}</h2>${text.look_html}</section>` : ''}
      <p class="muted lab-url">${esc(tt('lab.url'))}</p>
    </section>`;
  const form = main.querySelector('form.lab-form');
  const status = form.querySelector('.lab-status');
  const errorEl = form.querySelector('.lab-error');
  const results = main.querySelector('.lab-results');
  // openTables: the charts whose data table is open (it stays open across runs).
  // stopFabric: stops the fabric view's playback before a new result replaces it.
  // The all-reduce lab's uplink table is open from the start: the bars' names are cut short on
  // a narrow chart, and the table names every uplink with its flows.
  const st = { seq: 0, timer: 0, caseId: null, openTables: new Set(id === 'allreduce' ? ['uplinks'] : []), stopFabric: () => {} };

  const clearError = () => {
    errorEl.hidden = true;
    errorEl.textContent = '';
    for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  };

  // The first run takes the URL's values as they are (so a bad one gets the API's answer); later
  // runs take the form's.
  async function run(fromUrl = null) {
    clearTimeout(st.timer);
    if (!live()) return;
    const my = ++st.seq;
    const body = fromUrl || readForm(form, desc);
    history.replaceState(null, '', href(`/lab/${encodeURIComponent(id)}`, toQuery(desc, body)));
    clearError();
    document.body.dataset.run = 'busy';
    status.textContent = tt('run.busy');
    results.classList.add('busy');
    results.setAttribute('aria-busy', 'true');
    let res;
    try {
      res = await api(`/api/lab/${encodeURIComponent(id)}`, body);
    } catch (e) {
      if (my !== st.seq || !live()) return;
      errorEl.textContent = errorText(e);
      errorEl.hidden = false;
      const field = e.api && e.api.field;
      if (field) {
        for (const el of form.querySelectorAll('[data-param]')) if (el.dataset.param === field) el.setAttribute('aria-invalid', 'true');
      }
      status.textContent = tt('run.error');
      results.innerHTML = '';
      results.classList.remove('busy');
      results.removeAttribute('aria-busy');
      shown = null;
      document.body.dataset.run = 'error';
      return;
    }
    if (my !== st.seq || !live()) return;
    st.caseId = String((res.params && res.params.case) ?? body.case ?? '');
    const [html, words] = resultHtml(desc, res, text, st.caseId, st.openTables);
    results.innerHTML = html;
    results.classList.remove('busy');
    results.removeAttribute('aria-busy');
    const charts = res.charts || [];
    st.stopFabric();
    const fabricBox = results.querySelector('.lab-fabric');
    st.stopFabric = fabricBox ? renderFabricView(fabricBox, res.fabric) : () => {};
    paintCharts(results, id, charts);
    shown = { root: results, lab: id, charts, live };
    if (!resizeHooked) { window.addEventListener('resize', onResize); resizeHooked = true; }
    status.textContent = words ? tt('run.done.v', { v: words }) : tt('run.done');
    document.body.dataset.run = 'done';
  }

  const schedule = () => {
    clearTimeout(st.timer);
    document.body.dataset.run = 'busy';
    st.timer = setTimeout(() => run(), DEBOUNCE_MS);
  };
  const edited = (e) => {
    const el = e.target;
    if (el.dataset.mirror) {
      const twin = [...form.querySelectorAll('[data-param]')].find((x) => x.dataset.param === el.dataset.mirror);
      if (twin) twin.value = el.value;
    } else if (el.dataset.param && el.type === 'number') {
      const twin = [...form.querySelectorAll('[data-mirror]')].find((x) => x.dataset.mirror === el.dataset.param);
      if (twin && el.value.trim() !== '') twin.value = el.value;
    } else if (!el.dataset.param) return;
    schedule();
  };
  form.addEventListener('input', edited);
  form.addEventListener('change', edited);
  if (id === 'incast') {
    syncDcqcn(form);
    form.addEventListener('change', (e) => { if (e.target.dataset.param === 'ecn') syncDcqcn(form); });
  }
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });

  // A chart's data table stays open (or closed) when the next run redraws the charts.
  results.addEventListener('toggle', (e) => {
    const d = e.target;
    if (!d.classList || !d.classList.contains('lab-table-box')) return;
    if (d.open) st.openTables.add(d.dataset.chart); else st.openTables.delete(d.dataset.chart);
  }, true);
  results.addEventListener('change', (e) => {
    if (!e.target.classList.contains('lab-onlynz')) return;
    const table = results.querySelector('table.lab-counters');
    if (table) table.classList.toggle('only-nz', e.target.checked);
  });
  results.addEventListener('click', (e) => {
    const cause = e.target.closest('button[data-cause]');
    const reveal = e.target.closest('.lab-reveal-btn');
    const box = results.querySelector('.lab-reveal');
    const show = (open) => {
      const b = results.querySelector('.lab-reveal-btn');
      if (open && !box.innerHTML) box.innerHTML = revealHtml(desc, st.caseId, text);
      box.hidden = !open;
      b.setAttribute('aria-expanded', String(open));
      b.textContent = tt(open ? 'tr.hide' : 'tr.reveal');
    };
    if (cause) {
      const right = cause.dataset.cause === st.caseId;
      cause.classList.add(right ? 'right' : 'wrong');
      cause.setAttribute('aria-pressed', 'true');
      const answer = results.querySelector('.lab-answer');
      answer.textContent = right ? `${tt('tr.right')} ${causeLabel(cause.dataset.cause, text)}` : tt('tr.wrong');
      answer.dataset.correct = String(right);
      answer.className = `lab-answer ${right ? 'right' : 'wrong'}`;
      if (right) show(true);
    } else if (reveal && box) {
      show(box.hidden);
    }
  });

  if (badCase !== null) {
    errorEl.textContent = tt('tr.nocase', { c: badCase, k: caseIds(desc).length });
    errorEl.hidden = false;
    status.textContent = tt('run.error');
    document.body.dataset.run = 'error';
    return;
  }
  await run(values);
}

/**
 * The incast form's DCQCN choice follows the ECN box: with ECN off only "off" can be chosen
 * (the profile chosen before comes back when ECN is turned on again), and a note says why.
 */
function syncDcqcn(form) {
  const ecn = form.querySelector('[data-param="ecn"]');
  const sel = form.querySelector('select[data-param="dcqcn"]');
  if (!ecn || !sel) return;
  const on = ecn.checked;
  if (!on && sel.value !== 'off') { sel.dataset.before = sel.value; sel.value = 'off'; }
  if (on && sel.dataset.before) { sel.value = sel.dataset.before; delete sel.dataset.before; }
  for (const o of sel.options) o.disabled = !on && o.value !== 'off';
  let note = form.querySelector('.lab-dcqcn-note');
  if (!note) {
    note = document.createElement('p');
    note.className = 'lab-note lab-dcqcn-note';
    note.id = 'lp-dcqcn-note';
    sel.parentElement.append(note);
    sel.setAttribute('aria-describedby', note.id);
  }
  note.textContent = tt('dcqcn.needs_ecn');
  note.hidden = on;
}
