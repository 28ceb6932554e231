// Interface strings in Chinese (default) and English. Course text comes from the API.

const S = {
  zh: {
    'title': 'RDMA 实验室', 'skip': '跳到正文',
    'nav.course': '课程', 'nav.overview': '概览', 'nav.sim': '流量仿真', 'nav.playground': 'Verbs 实验台', 'nav.labs': '网络实验',
    'open.lab': '实验：{t}',
    'footer': '每个数字都由仿真器算出；每次点击都重新运行。',
    'lang.other': 'EN',
    'home.lead': '亲手运行 RDMA 的 Queue Pair 模型：同一段网络上，内核 TCP 和 RDMA 各走一遍，看拷贝、系统调用、CPU 和延迟差在哪里。',
    'home.lessons': '六节动手课', 'home.map': '课程地图（{m} 个模块，{c} 章）', 'home.overview': '先读概览 →',
    'lesson': '课', 'lesson.n': '第 {n} 课', 'stars': '难度 {n}/3（★★★ 标出课程的核心概念）', 'minutes': '分钟', 'goal': '目标', 'keypoints': '要点', 'tryit': '动手试试',
    'chapter.demo': '在实验里看到它', 'chapter.prev': '← 上一章', 'chapter.next': '下一章 →',
    'preset.lesson1': '基线', 'preset.lesson1.what': '一条 4 KB 消息：内核 TCP 对比 RDMA WRITE，100 Gb/s，一台交换机，无丢包（第 1、2 课）',
    'preset.lesson2': 'SEND 对比 WRITE', 'preset.lesson2.what': 'SEND/RECV 要远端 CPU 参与，WRITE 不要（第 3 课）',
    'preset.lesson3': '内存未注册', 'preset.lesson3.what': 'post_send 返回 0，WR 以 LOC_PROT_ERR 完成；TCP 照常发送（第 4 课）',
    'preset.lesson4': 'QP 停在 RTR', 'preset.lesson4.what': 'mlx5 接受投递却什么也不发生，rxe 返回 EINVAL（第 4 课）',
    'preset.lesson5': '1% 丢包', 'preset.lesson5.what': '1% 拥塞丢包、无损网络关闭；打开无损网络，吞吐保持率回来（第 5 课）',
    'preset.lesson5b': '真实突发流量', 'preset.lesson5b.what': '真实的突发交叉流量代替抽样丢包；打开无损网络即启用 PFC（第 5 课）',
    'preset.lesson6': '1 MB 消息', 'preset.lesson6.what': '1 MB 消息；把消息改成 4 KB 再比一次（第 6 课）',
    'ch.goals': '学完这一章，你能够', 'ch.mis': '常见误解', 'ch.wrong': '误解', 'ch.right': '实际上',
    'ch.try': '动手试试', 'ch.check': '自测', 'ch.refs': '参考资料', 'ch.keypoints': '要点',
    'ch.try.sim': '仿真页', 'ch.try.playground': 'Verbs 实验台', 'ch.try.lab': '网络实验',
    'check.submit': '检查答案', 'check.right': '答对了。', 'check.wrong': '不对。', 'check.pick': '先选一个答案。', 'check.number.pick': '先填一个数字。',
    'check.answer': '正确答案：{a}', 'check.sim': '这次模拟的结果：{v}（对应选项 {c}）', 'check.predict': '先预测，再看模拟器怎么说',
    'check.number': '你的答案', 'check.q': '第 {n} 题',
    'nav.glossary': '术语表', 'glossary.lead': '课程里用到的术语。每个术语下面列出讲到它的章节。',
    'glossary.chapters': '讲到它的章节', 'glossary.see': '相关术语', 'glossary.refs': '出处',
    'glossary.index': '术语索引（{n} 个，点击跳转）',
    'open.sim': '打开仿真页', 'open.lesson': '第 {n} 课', 'preset.chip': '仿真场景 {mark}',
    'sim.presets': '预设场景', 'sim.params': '实验参数', 'sim.run': '运行', 'sim.reset': '恢复预设',
    'sim.running': '仿真中…', 'sim.changed': '改了 {n} 个参数', 'sim.custom': '自定义场景', 'sim.before': '（“前 → 后”：与上一次运行相比变了的值）', 'sim.done': '完成：{ms} ms', 'sim.error': '出错了',
    'sim.play': '播放', 'sim.pause': '暂停', 'sim.speed': '速度', 'sim.time': '仿真时间',
    'sim.stream': '流模式：没有"第一条消息"的动画，看下面的吞吐图。',
    'sim.compare': '对比表', 'sim.ladder': '时间线（第一条消息）', 'sim.charts': '图表',
    'sim.tcp': 'TCP（内核套接字）', 'sim.rdma': 'RDMA',
    'sim.notrun': '未运行', 'sim.silence': '静默：没有帧，没有完成事件，应用自己的超时触发了',
    'sim.url': '这个页面的地址就是这次实验：复制链接即可复现。',
    'box.app': '应用', 'box.kernel': '内核', 'box.nic': '网卡', 'box.switch': '交换机', 'box.setup': '建连时进过内核',
    'side.local': '本端', 'side.remote': '远端',
    'chart.cpu': '每条消息的 CPU 时间（本端 / 远端）', 'chart.tput': '吞吐随时间（10 个批次）',
    'chart.retention': '丢包后的吞吐保持率（95% 置信区间）', 'chart.latency': '单条消息延迟',
    'yes': '是', 'no': '否', 'none': '无', 'light': '轻', 'full': '重',
    'row.outcome': '结果', 'row.copies': '内存拷贝（数据路径）', 'row.syscalls': '系统调用（数据路径）',
    'row.kernel': '经过内核 本端 / 远端', 'row.transport_in': '传输层在哪里跑', 'row.cpu_stages_local': '本端 CPU 阶段', 'row.cpu_stages': '远端 CPU 阶段',
    'row.cross_traffic': '交叉流量（同一优先级、同一出口）发送方 × 突发 · 负载 · 上限', 'row.latency_ratio': 'RDMA ÷ TCP 单条消息延迟', 'sim.ceiling': '上限',
    'row.cpu_per_message': '每条消息 CPU 时间 本端 / 远端', 'row.remote_cpu': '远端 CPU 参与度',
    'row.latency': '单条消息延迟（数据可用）', 'row.placed': '  数据写入远端内存', 'row.completion': '  本端完成',
    'row.bus_bytes': '每送达 1 字节的内存总线流量（字节）本端 / 远端', 'row.throughput': '吞吐（稳态）',
    'row.retention': '丢包后的吞吐保持率', 'row.loss_model': '丢包模型预测', 'row.recovery': '丢包恢复', 'row.dcqcn': 'DCQCN（拥塞控制）',
    'row.retransmitted': '重传字节', 'row.drops': '丢包 / PFC 暂停帧 / ECN 标记',
    'row.setup_syscalls': '建连：系统调用', 'row.setup_kernel': '建连：经过内核 本端 / 远端',
    'row.setup_cpu': '建连：CPU 时间 本端 / 远端', 'row.setup_duration': '建连：耗时',
    'ok': '成功', 'failed': '失败',
    'err.field': '参数 {f}：{e}（允许：{a}）',
    'err.field.said': '参数 {f}：{e}',
    'sim.ci': '（95% 置信区间 {a}–{b}）',
    'sim.lossmodel': '{model}：{pred}（p {p}%，{n} 次丢包{wait}）· 模拟 ÷ 预测 {ratio}', 'sim.lossmodel.wait': '，等待超时 {t}',
    'sim.rec.sack': 'SACK NAK {n} · 重发 {r} 个包 · 超时 {t}', 'sim.rec.rdma': 'NAK {n} · 超时 {t}', 'sim.rec.tcp': '快速恢复 {n} · RTO {t} · TLP {p}',
    'sim.dcqcn': '{profile}：{m} 个包被标记 → {c} 个 CNP · 降速 {k} 次 · 最终 {g} Gb/s',
    'row.pfc': 'PFC 阈值与 PAUSE（模拟）',
    'sim.pfc': 'XOFF {xoff} 字节（{from}）/ XON {xon} 字节 / headroom {hr} 字节（端口 MTU {mtu}，响应 {resp} ns）· 每个 PAUSE 暂停 {q} 个时间单位（quanta）= {dur} µs',
    'sim.pfc.auto': '按 mlx5 公式自动计算', 'sim.pfc.set': '场景设定',
    'chart.lossfree': '无丢包时', 'sim.knobs': '这个场景要调的参数', 'sim.range': '{a} 到 {b}', 'sim.atleast': '至少 {a}',
    'sim.raw': '命令行里的名字', 'sim.fix': '有 {n} 个参数需要改正，什么都没有运行。',
    'err.int': '{label}：请填 {range} 之间的整数。', 'err.intmin': '{label}：请填不小于 {a} 的整数。', 'err.prob': '{label}：请填 0 到 1 之间的数（概率）。',
    'err.network': '连不上实验室的服务器：它可能已经停了，请检查后刷新页面。',
    'err.server': '{label}：仿真器不接受这个值（允许：{allowed}）。', 'err.server.other': '仿真器不接受这组参数：{e}',
  },
  en: {
    'title': 'RDMA Lab', 'skip': 'Skip to content',
    'nav.course': 'Course', 'nav.overview': 'Overview', 'nav.sim': 'Traffic simulation', 'nav.playground': 'Verbs playground', 'nav.labs': 'Fabric labs',
    'open.lab': 'Lab: {t}',
    'footer': 'Every number is computed by the simulator; every click reruns it.',
    'lang.other': '中文',
    'home.lead': 'Run the RDMA Queue Pair model yourself: kernel TCP and RDMA over the same fabric, and see where the copies, system calls, CPU time and latency go.',
    'home.lessons': 'Six hands-on lessons', 'home.map': 'Course map ({m} modules, {c} chapters)', 'home.overview': 'Start with the overview →',
    'lesson': 'Lesson', 'lesson.n': 'Lesson {n}', 'stars': 'Difficulty {n} of 3 (★★★ marks the course\'s key ideas)', 'minutes': 'min', 'goal': 'Goal', 'keypoints': 'Key points', 'tryit': 'Try it',
    'chapter.demo': 'See it in the lab', 'chapter.prev': '← Previous', 'chapter.next': 'Next →',
    'preset.lesson1': 'Baseline', 'preset.lesson1.what': 'One 4 KB message: kernel TCP vs RDMA WRITE, 100 Gb/s, one switch, no loss (lessons 1–2)',
    'preset.lesson2': 'SEND vs WRITE', 'preset.lesson2.what': 'SEND/RECV needs the remote CPU, WRITE does not (lesson 3)',
    'preset.lesson3': 'Memory not registered', 'preset.lesson3.what': 'post_send returns 0, the WR completes with LOC_PROT_ERR; TCP sends (lesson 4)',
    'preset.lesson4': 'QP left in RTR', 'preset.lesson4.what': 'mlx5 accepts the post and nothing happens, rxe returns EINVAL (lesson 4)',
    'preset.lesson5': '1% loss', 'preset.lesson5.what': '1% congestion drops, lossless network off; turn it on and retention comes back (lesson 5)',
    'preset.lesson5b': 'Real bursty traffic', 'preset.lesson5b.what': 'Real bursty cross traffic instead of drawn drops; the lossless network turns PFC on (lesson 5)',
    'preset.lesson6': '1 MB messages', 'preset.lesson6.what': '1 MB messages; set the message to 4 KB and compare (lesson 6)',
    'ch.goals': 'After this chapter you will be able to', 'ch.mis': 'Common misconceptions', 'ch.wrong': 'Misconception', 'ch.right': 'In fact',
    'ch.try': 'Try it', 'ch.check': 'Self-check', 'ch.refs': 'References', 'ch.keypoints': 'Key points',
    'ch.try.sim': 'simulation page', 'ch.try.playground': 'verbs playground', 'ch.try.lab': 'fabric lab',
    'check.submit': 'Check', 'check.right': 'Right.', 'check.wrong': 'Not quite.', 'check.pick': 'Pick an answer first.', 'check.number.pick': 'Type a number first.',
    'check.answer': 'The answer: {a}', 'check.sim': 'This run of the simulator gives: {v} (choice {c})', 'check.predict': 'Predict first, then see what the simulator says',
    'check.number': 'Your answer', 'check.q': 'Question {n}',
    'nav.glossary': 'Glossary', 'glossary.lead': 'The terms the course uses. Under each term: the chapters that teach it.',
    'glossary.chapters': 'Taught in', 'glossary.see': 'See also', 'glossary.refs': 'Sources',
    'glossary.index': 'Index of terms ({n}; jump to one)',
    'open.sim': 'Open the simulation', 'open.lesson': 'Lesson {n}', 'preset.chip': 'Simulation {mark}',
    'sim.presets': 'Presets', 'sim.params': 'Experiment parameters', 'sim.run': 'Run', 'sim.reset': 'Back to preset',
    'sim.running': 'Simulating…', 'sim.changed': 'parameters changed: {n}', 'sim.custom': 'custom scenario', 'sim.before': '(“before → now”: values that changed since the previous run)', 'sim.done': 'Done: {ms} ms', 'sim.error': 'Error',
    'sim.play': 'Play', 'sim.pause': 'Pause', 'sim.speed': 'Speed', 'sim.time': 'Simulated time',
    'sim.stream': 'Stream mode: no single message to animate; see the throughput charts below.',
    'sim.compare': 'Comparison', 'sim.ladder': 'Timeline (first message)', 'sim.charts': 'Charts',
    'sim.tcp': 'TCP (kernel sockets)', 'sim.rdma': 'RDMA',
    'sim.notrun': 'not run', 'sim.silence': 'Silence: no frame, no completion; the application\'s own timeout fired',
    'sim.url': 'This page\'s address is the experiment: copy the link to reproduce it.',
    'box.app': 'App', 'box.kernel': 'Kernel', 'box.nic': 'NIC', 'box.switch': 'Switch', 'box.setup': 'entered in setup',
    'side.local': 'local', 'side.remote': 'remote',
    'chart.cpu': 'CPU time per message (local / remote)', 'chart.tput': 'Throughput over time (10 batches)',
    'chart.retention': 'Throughput retention under loss (95% CI)', 'chart.latency': 'One-message latency',
    'yes': 'yes', 'no': 'no', 'none': 'none', 'light': 'light', 'full': 'full',
    'row.outcome': 'outcome', 'row.copies': 'memory copies (data path)', 'row.syscalls': 'system calls (data path)',
    'row.kernel': 'kernel crossed local / remote', 'row.transport_in': 'transport runs in', 'row.cpu_stages_local': 'CPU stages (local)', 'row.cpu_stages': 'CPU stages (remote)',
    'row.cross_traffic': 'cross traffic (same class, same egress): senders × bursts · offered · ceiling', 'row.latency_ratio': 'RDMA ÷ TCP one-message latency', 'sim.ceiling': 'ceiling',
    'row.cpu_per_message': 'CPU time per message local / remote', 'row.remote_cpu': 'remote CPU participation',
    'row.latency': 'one-message latency (delivered)', 'row.placed': '  data placed at the remote', 'row.completion': '  local completion',
    'row.bus_bytes': 'memory-bus bytes per delivered byte (B/B) local / remote', 'row.throughput': 'throughput (steady state)',
    'row.retention': 'throughput retention under loss', 'row.loss_model': 'loss model prediction', 'row.recovery': 'loss recovery', 'row.dcqcn': 'DCQCN (congestion control)',
    'row.retransmitted': 'retransmitted bytes', 'row.drops': 'drops / PFC pauses / ECN marks',
    'row.setup_syscalls': 'setup: system calls', 'row.setup_kernel': 'setup: kernel crossed local / remote',
    'row.setup_cpu': 'setup: CPU time local / remote', 'row.setup_duration': 'setup: duration',
    'ok': 'success', 'failed': 'failed',
    'err.field': '{f}: {e} (allowed: {a})',
    'err.field.said': '{f}: {e}',
    'sim.ci': ' (95% CI {a}–{b})',
    'sim.lossmodel': '{model}: {pred} (p {p}%, {n} events{wait}) · simulated ÷ predicted {ratio}', 'sim.lossmodel.wait': ', {t} waiting on timeouts',
    'sim.rec.sack': 'SACK NAK {n} · resent {r} · timeout {t}', 'sim.rec.rdma': 'NAK {n} · timeout {t}', 'sim.rec.tcp': 'fast recovery {n} · RTO {t} · TLP {p}',
    'sim.dcqcn': '{profile}: {m} marked → {c} CNP · {k} cuts · {g} Gb/s',
    'row.pfc': 'PFC thresholds and PAUSE (simulated)',
    'sim.pfc': 'XOFF {xoff} B ({from}) / XON {xon} B / headroom {hr} B (port MTU {mtu}, response {resp} ns) · each PAUSE {q} quanta = {dur} µs',
    'sim.pfc.auto': 'auto, mlx5\'s rule', 'sim.pfc.set': 'set in the scenario',
    'chart.lossfree': 'loss-free', 'sim.knobs': 'The knobs of this preset', 'sim.range': '{a} to {b}', 'sim.atleast': 'at least {a}',
    'sim.raw': 'name on the command line', 'sim.fix': '{n} parameter(s) to fix; nothing was run.',
    'err.int': '{label}: enter a whole number from {range}.', 'err.intmin': '{label}: enter a whole number of at least {a}.', 'err.prob': '{label}: enter a number from 0 to 1 (a probability).',
    'err.network': 'Cannot reach the lab\'s server: it may have stopped; check it and reload the page.',
    'err.server': '{label}: the simulator refuses this value (allowed: {allowed}).', 'err.server.other': 'The simulator refuses these parameters: {e}',
  },
};

/** The page language: `?lang=en` or Chinese. */
export function lang() {
  const l = new URLSearchParams(location.search).get('lang');
  return l === 'en' ? 'en' : 'zh';
}

/** `s` with every `{name}` filled from `vars` (unknown names stay as they are). */
function fill(s, vars) {
  return s.replace(/\{(\w+)\}/g, (_, k) => (k in vars ? String(vars[k]) : `{${k}}`));
}

/** An interface string, with `{name}` filled from `vars`. */
export function t(key, vars = {}) {
  return fill((S[lang()] && S[lang()][key]) ?? S.zh[key] ?? key, vars);
}

/**
 * A string from a page's own table (`{ zh: {...}, en: {...} }`), in the page language, else
 * Chinese; a key the table lacks falls back to `t`. `{name}` is filled from `vars`.
 */
export function tFrom(table, key, vars = {}) {
  const s = (table[lang()] && table[lang()][key]) ?? table.zh[key];
  return s == null ? t(key, vars) : fill(s, vars);
}

/** `path` with the current language kept in its query. */
export function href(path, params = null) {
  const u = new URL(path, location.origin);
  if (params) for (const [k, v] of params) u.searchParams.append(k, v);
  if (lang() === 'en') u.searchParams.set('lang', 'en');
  return u.pathname + u.search;
}

/** Escapes text for HTML. */
export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
