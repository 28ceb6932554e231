// Guided tours: an optional walk through a page, one step at a time — what to click, what to
// read — each step pointing at (and outlining) one element of the page. Started from a visible
// button (`tourButtonHtml`), closed with Escape or ✕. A step may name the phone pane it lives in
// (pg-panes.js) so the tour shows that pane first, or a closed <details> (`open`) to open first.
// Each tour's texts are in both languages here. The simulation page has one tour per preset
// (`sim-<preset>`): the lesson's hands-on steps, pointing at the rows the lesson names. A step
// that asks the learner to change a setting and run (`act`) also offers "Do it": the tour sets
// that control in the page's own parameter panel, presses Run, waits for the result, and goes
// on to the next step, which points at the row that changed (sim.js shows before → now). The
// playground has a general tour and one per chapter (`pg-<chapter>`, tour-chapters.js), each
// over the chapter's example session; a step may select one of the session's steps (`select`)
// so the packets, memory and state panes show what that step did.

import { esc, href, lang } from './i18n.js';
import { showPane } from './pg-panes.js';
import { CHAPTER_TOURS, chapterTourHref } from './tour-chapters.js';

// The tour's card and outline styles, loaded once by whichever page imports the tours.
if (!document.querySelector('link[data-tour-css]')) {
  const l = document.createElement('link');
  l.rel = 'stylesheet';
  l.dataset.tourCss = '';
  l.href = new URL('./tour.css', import.meta.url).href;
  document.head.append(l);
}

const UI = {
  zh: { start: '导览', startTitle: '一步一步带你走一遍这个页面', next: '下一步', back: '上一步', done: '完成', close: '关闭导览', of: '第 {k} 步，共 {n} 步',
    act: '做这一步', actTitle: '导览替你在参数面板里改好这一项，再点「运行」；也可以自己动手', acting: '正在运行……',
    refused: '这次没能运行：参数面板里写着原因。改好后可以再点「做这一步」，或者自己点「运行」。',
    menu: '按章节导览', menuTitle: '每一章在实验台上有自己的导览，打开这一章的示例会话一步一步看', basics: '实验台入门：从零搭一对 QP' },
  en: { start: 'Guided tour', startTitle: 'Walk through this page one step at a time', next: 'Next', back: 'Back', done: 'Done', close: 'Close the tour', of: 'Step {k} of {n}',
    act: 'Do it', actTitle: 'The tour sets this in the parameter panel and presses Run for you; or do it by hand', acting: 'Running…',
    refused: 'That run did not start: the parameter panel says why. Fix it and press Do it again, or press Run yourself.',
    menu: 'Chapter tours', menuTitle: 'Each chapter has its own playground tour over the chapter\'s example session', basics: 'Playground basics: a QP pair from scratch' },
};

/**
 * The tours, by page. Each step: `sel` (the element it points at), `pane` (the phone pane
 * holding it), and the text in zh and en.
 */
export const TOURS = {
  playground: [
    { sel: '#pg-quick', pane: 'steps',
      zh: '点「快速开始」：两台主机各建好 PD、CQ、一个 RC QP 和一块注册好的 4096 字节缓冲区。右边的 MR 表里能看到两端各自的 lkey 和 rkey——两台主机的 key 和地址互不相同。',
      en: 'Press Quick start: each host gets a PD, a CQ, an RC QP and a registered 4096-byte buffer. The MR table shows each end\'s own lkey and rkey — the two hosts hand out different keys and addresses.' },
    { sel: '#pg-tab-modify_qp', pane: 'steps',
      zh: '选 modify_qp，不改任何值，连按六次「添加」：表单每次都建议下一个状态，两个 QP 依次走过 RESET → INIT → RTR → RTS。',
      en: 'Pick modify_qp and press Add six times without changing anything: the form suggests the next state each time, and both QPs walk RESET → INIT → RTR → RTS.' },
    { sel: '#pg-diagram', pane: 'state',
      zh: '状态机：蓝色的节点是选中 QP 现在的状态，从它出发的箭头是合法的转换；把鼠标移到箭头上，看这个转换必须带哪些属性。',
      en: 'The state machine: the blue node is the selected QP\'s state, the arrows leaving it are the legal transitions; hover an arrow to see the attributes it requires.' },
    { sel: '#pg-tab-post_send', pane: 'steps',
      zh: '选 post_send，操作码 RDMA_WRITE，远端 MR 选 mr_b，添加；再用 poll_cq 在 cq_a 上取完成（带 50us 等待）。',
      en: 'Pick post_send, opcode RDMA_WRITE, remote MR mr_b, and Add; then poll cq_a with poll_cq (with a 50us wait).' },
    { sel: 'section.pg-p-wire', pane: 'ladder',
      zh: '报文：选中 post_send 那一步，这里画出它的 WRITE 请求和对端回的 ACK。点一个报文，看它每一层头部的字段。',
      en: 'Packets: select the post_send step and this shows its WRITE request and the peer\'s ACK. Click a packet to open its headers field by field.' },
    { sel: '#pg-memory', pane: 'memory',
      zh: '内存：b 的缓冲区里被这次 WRITE 写入的字节高亮显示——b 的 CPU 什么都没做，字节就到了。',
      en: 'Memory: the bytes of b\'s buffer that this WRITE placed are highlighted — b\'s CPU did nothing, and the bytes arrived.' },
    { sel: '#pg-form-post_send [name="rmr"]', pane: 'steps', tab: 'post_send',
      zh: '再投一个 WRITE，这次远端 MR 选 mr_a：发过去的是 a 自己的 rkey，b 上没有这个 key，b 回 NAK，完成是 REM_ACCESS_ERR，两个 QP 都进 ERR。',
      en: 'Post another WRITE, this time with mr_a as the remote MR: it carries a\'s own rkey, which names nothing on b; b answers with a NAK, the completion is REM_ACCESS_ERR and both QPs go to ERR.' },
    { sel: 'section.pg-p-steps', pane: 'steps',
      zh: '每一步的返回值、完成状态和解释都在这里；点一步就能看它之后的状态、报文和内存。',
      en: 'Every step\'s return value, completion status and explanation is here; select a step to see the state, packets and memory after it.' },
  ],
};

// The simulation page's tours, one per preset (`sim-<preset>`), following the lesson's hands-on
// steps. They name rows and boxes, never a figure: every number on the page is the run's own.
const row = (id) => `#table tr[data-row="${id}"]`;
const WHAT = { sel: '[data-testid="preset-what"]' };
const PARAMS_OPEN = 'details.params';
const param = (key) => ({ sel: `.param[data-param="${key}"]`, open: PARAMS_OPEN });
/** A step that changes `key` to `value` and runs: by hand, or with the tour's "Do it". */
const act = (key, value) => ({ ...param(key), act: { key, value } });
/** The step after an acting one: the row the change is about, with its before → now. */
const changed = (id) => ({ sel: row(id) });

Object.assign(TOURS, {
  'sim-lesson1': [
    { ...WHAT,
      zh: '这一行写着现在加载的是哪个预设、它演示什么。第 1 课和第 2 课都用这个基线：同一条消息分别走内核 TCP 和 RDMA。页面上的数字都是这次仿真算出来的，不是真机测量。',
      en: 'This line names the preset that is loaded and what it shows. Lessons 1 and 2 both use this baseline: one message sent over kernel TCP and over RDMA. Every figure on the page is simulated by this run, not measured on hardware.' },
    { sel: '#paths',
      zh: '两条路径的动画：消息正在经过的框会亮起，走过的框一直保持标记。TCP 的线穿过两端的内核框；RDMA 的线绕开内核框——那就是“内核旁路”。',
      en: 'The two paths, animated: the box the message is in lights up and every box it visited stays marked. The TCP line runs through both kernels; the RDMA line goes around the kernel boxes — that is the kernel bypass.' },
    { sel: '#step-next',
      zh: '点「下一步」一段一段往前走（动画会停下）；「上一步」退回。时间被拉长了，好让每一段都看得清，拉长多少写在播放条下面。',
      en: 'Press Next to move one stage at a time (playback pauses); Back steps back. Time is stretched so that every stage stays visible; the line under the player says by how much.' },
    { sel: '#narration',
      zh: '旁白按顺序列出第一条消息的每一步，每步带着仿真得到的时间和开销；当前这一步高亮，和动画里亮起的框是同一个。',
      en: 'The narration lists the first message\'s steps in order, each with its simulated time and cost; the current step is highlighted, the same one as the lit box in the drawing.' },
    { sel: row('copies'),
      zh: '对比表从这里开始读：“内存拷贝”一行，左边 TCP 一栏、右边 RDMA 一栏，比一比两边各拷了几次、拷了多少字节。',
      en: 'Read the table from here: the memory-copies row, TCP on the left, RDMA on the right — compare how many copies each side makes, and how many bytes.' },
    { sel: row('syscalls'),
      zh: '“系统调用”一行：TCP 每送一条消息要陷入内核，RDMA 的数据路径上是多少，看右边那一格。',
      en: 'The system-calls row: TCP enters the kernel for every message; read the RDMA cell to see what its data path needs.' },
    { sel: row('cpu_stage_count'),
      zh: '第 1 课要数的就是这一行：两端各有几个阶段占着 CPU（本端 / 远端）。下面两行把这些阶段逐个列了出来，看远端比本端多了哪些。',
      en: 'Lesson 1 asks you to count this row: how many stages occupy a CPU on each side (local / remote). The next two rows list them one by one — see what the remote side adds.' },
    { sel: row('cpu_stages'),
      zh: '“远端 CPU 阶段”：TCP 的接收端被中断、软中断、协议栈、唤醒和拷贝一路拉进来；RDMA 这一格里还剩什么？',
      en: 'Remote CPU stages: TCP\'s receiver is pulled in by the interrupt, softirq, protocol stack, wake-up and copy; what is left in the RDMA cell?' },
    { sel: row('placed'),
      zh: '第 2 课：“数据写入远端内存”和下一行“本端完成”不是同一个时刻。RDMA 的数据先落地，发送端要等 ACK 回来、网卡写完 CQE 才知道完成。',
      en: 'Lesson 2: "data placed at the remote" and the next row, "local completion", are different moments. RDMA\'s data lands first; the sender learns of it only when the ACK is back and the NIC has written the CQE.' },
    { sel: '#ladder',
      zh: '时间线把第一条消息的每一段按仿真时间画出来：RDMA 一侧本端 CPU 只有开头的 post_send 和结尾的 poll_cq，中间是 PCIe、网卡和线缆。',
      en: 'The timeline draws each stage of the first message on the simulated clock: on the RDMA side the local CPU has only post_send at the start and poll_cq at the end, with PCIe, the NIC and the cable in between.' },
  ],
  'sim-lesson2': [
    { ...WHAT,
      zh: '预设②对应第 3 课：双边 SEND/RECV 和单边 WRITE。先跑的是 SEND/RECV。页面上的数字都是仿真结果。',
      en: 'Preset ② is lesson 3: two-sided SEND/RECV against one-sided WRITE. It starts with SEND/RECV. Every figure on the page is simulated.' },
    { sel: row('remote_cpu'),
      zh: '看“远端 CPU 参与度”一行的 RDMA 一格：双边时远端要先投递 RECV、再取完成，所以是轻度参与。',
      en: 'Read the RDMA cell of the remote-CPU-participation row: with two-sided verbs the remote posts RECVs and polls for completions, so it takes a light part.' },
    { sel: row('cpu_stages'),
      zh: '“远端 CPU 阶段”列出远端做了什么：post_recv 和 poll_cq，都在用户态，没有系统调用。',
      en: 'The remote-CPU-stages row lists what the remote does: post_recv and poll_cq, both in user space, no system call.' },
    { sel: '#paths',
      zh: '动画里注意远端的应用框：SEND 会点亮它（接收方要处理完成）。',
      en: 'In the drawing, watch the remote application box: a SEND lights it, because the receiver handles the completion.' },
    { ...act('rdma.operation', 'write'),
      zh: '现在把「RDMA 操作」改成 write（单边），再点面板下面的「运行」；也可以点「做这一步」，让导览替你改好并运行。表里变了的格子会显示“之前 → 现在”。',
      en: 'Now set RDMA operation to write (one-sided) and press Run under the panel — or press Do it and the tour does both. Every cell that changed shows "before → now".' },
    { ...changed('remote_cpu'),
      zh: '运行之后，这一行显示之前 → 现在：WRITE 之后变成“无”，远端 CPU 阶段为空；动画里远端应用框不再亮。再对照“数据写入远端内存”一行，和 SEND 那次差不多。',
      en: 'After the run this row reads before → now: after WRITE it reads none and the remote CPU stages are empty; the remote application box no longer lights. Compare the data-placed row too: about the same as with SEND.' },
  ],
  'sim-lesson3': [
    { ...WHAT,
      zh: '预设③是第 4 课的场景：程序忘了注册内存。TCP 一栏照常送达，RDMA 一栏会失败——看它在哪里、怎样失败。数字都是仿真结果，不是真机测量。',
      en: 'Preset ③ is lesson 4\'s scenario: the program forgot to register its memory. TCP delivers as usual, RDMA fails — see where and how. Every figure is simulated.' },
    { sel: row('outcome'),
      zh: '“结果”一行：post_send 返回了 0，错误是之后从 ibv_poll_cq 拿回来的本地保护错误，QP 进入 ERR。失败只标在这一行，并写明在哪里出的错。',
      en: 'The outcome row: post_send returned 0; the error came back later from ibv_poll_cq as a local protection error and the QP went to ERR. Only this row is marked, and it says where the failure happened.' },
    { sel: '#narration',
      zh: '旁白里能看到 post_send、门铃和一条出错的 CQE，却没有读负载那一步——网卡查不到这块内存，什么也没发出去。',
      en: 'The narration shows post_send, the doorbell and a CQE with an error, but no payload read — the NIC found no registration for the buffer and sent nothing.' },
    { sel: '#ladder',
      zh: '时间线上 RDMA 一侧也没有线上的帧，只有本端的几段。',
      en: 'The timeline shows no frame on the wire for RDMA either, only a few local stages.' },
    { sel: row('setup_syscalls'),
      zh: '“建连：系统调用”一行：注册内存本来是建连时付的一笔账，这次少了它，比较一下和基线①的差别。',
      en: 'The setup-system-calls row: registering memory is a cost paid at setup; it is missing this time — compare with baseline ①.' },
    { ...act('rdma.memory_registered', true),
      zh: '勾上「内存已注册」再点「运行」；也可以点「做这一步」，让导览替你勾上并运行。',
      en: 'Tick Memory registered and press Run — or press Do it and the tour does both.' },
    { ...changed('outcome'),
      zh: '运行之后，“结果”一行显示之前 → 现在：注册过内存，网卡查得到这块缓冲区，RDMA 一栏恢复成功。再回头看“建连：系统调用”一行，注册的那笔账又回来了。',
      en: 'After the run the outcome row reads before → now: with the memory registered the NIC finds the buffer and the RDMA column succeeds. Look back at the setup-system-calls row too: the registration\'s cost is back.' },
  ],
  'sim-lesson4': [
    { ...WHAT,
      zh: '预设④也是第 4 课：QP 只走到 RTR 就开始投递，网卡按 mlx5 模拟。数字都是仿真结果，不是真机测量。',
      en: 'Preset ④ is lesson 4 too: the QP reaches only RTR before posting, with the NIC modelled as mlx5. Every figure is simulated.' },
    { sel: row('outcome'),
      zh: '“结果”一行：post_send 返回了 0，却一直等不到完成——没有报文、没有 CQE，原因里写明 QP 还在 RTR。',
      en: 'The outcome row: post_send returned 0 and no completion ever comes — no packet, no CQE; the reason says the QP is still in RTR.' },
    { sel: '#paths',
      zh: '动画里 RDMA 这条路什么也没发出去，TCP 照常送达。',
      en: 'In the drawing the RDMA path sends nothing, while TCP delivers as usual.' },
    { ...act('nic.profile', 'rxe'),
      zh: '把「网卡型号」改成 rxe（Soft-RoCE 软件网卡），再点「运行」；也可以点「做这一步」，让导览替你改好并运行。',
      en: 'Set NIC profile to rxe (the Soft-RoCE software NIC) and press Run — or press Do it and the tour does both.' },
    { ...changed('outcome'),
      zh: '运行之后，“结果”一行显示之前 → 现在：这次 ibv_post_send 当场返回 EINVAL，原因写明 QP 在 RTR、必须到 RTS。同一个错误，两种网卡两种表现：一个静静地不完成，一个当场拒绝。',
      en: 'After the run the outcome row reads before → now: this time ibv_post_send returns EINVAL on the spot, and the reason says the QP is in RTR and must reach RTS. One mistake, two NICs, two behaviours: one silently never completes, the other refuses at once.' },
  ],
  'sim-lesson5': [
    { ...WHAT,
      zh: '预设⑤是第 5 课：链路上有拥塞丢包，网络不是无损的，两条路都跑一段持续的数据流。数字都是仿真结果，不是真机测量。',
      en: 'Preset ⑤ is lesson 5: congestion drops on the link, no lossless network, and a sustained stream on both paths. Every figure is simulated.' },
    { sel: row('retention'),
      zh: '先看“丢包后的吞吐保持率”：和没有丢包时相比，两条路各剩下多少。',
      en: 'First read throughput retention under loss: how much of the loss-free throughput each path keeps.' },
    { sel: row('recovery'),
      zh: '“丢包恢复”一行：RDMA 一格数的是 NAK，也就是 go-back-N 恢复了几次、重发了多少包；TCP 一格是快速重传、超时和尾部探测。',
      en: 'The loss-recovery row: the RDMA cell counts NAKs — how often go-back-N recovered and how many packets it resent; the TCP cell counts fast retransmits, timeouts and tail probes.' },
    { sel: '#packetview',
      zh: '报文视图从仿真的轨迹里取出一段：能看到在交换机被丢的那个包（✗）、响应方回的 NAK，以及 go-back-N 重发的整段范围（阴影）。拖动滑块或点「播放」。',
      en: 'The packet view takes a window of the simulated trace: the packet dropped at the switch (✗), the responder\'s NAK, and the whole range go-back-N resends (shaded). Drag the slider or press Play.' },
    { sel: row('loss_model'),
      zh: '“丢包模型预测”把仿真的保持率和一个简单模型的预测放在一起，比值接近 1 说明模型说得通。',
      en: 'The loss-model row sets the simulated retention beside a simple model\'s prediction; a ratio near 1 means the model explains it.' },
    { ...act('lossless.enabled', true),
      zh: '现在勾上「无损网络（PFC）」，再点「运行」；也可以点「做这一步」，让导览替你勾上并运行。',
      en: 'Now tick Lossless network (PFC) and press Run — or press Do it and the tour does both.' },
    { ...changed('retention'),
      zh: '运行之后，保持率一行显示之前 → 现在：箭头左边是有损时的，右边是打开 PFC 之后的。TCP 一栏留在有损类别里，比一比它变了没有。',
      en: 'After the run the retention row reads before → now: lossy on the left of the arrow, with PFC on the right. The TCP column stays in the lossy class: see whether it moved.' },
    { sel: row('drops'),
      zh: '“丢包 / PFC 暂停帧 / ECN 标记”：打开无损后 RDMA 一栏的丢包变成零，出现了 PFC 暂停帧；TCP 留在有损类别里。预设⑤b 换成真实的突发流量再做一遍。',
      en: 'Drops / PFC pauses / ECN marks: with lossless on, the RDMA column drops nothing and PFC pause frames appear; TCP stays in the lossy class. Preset ⑤b does it again with real bursty traffic.' },
  ],
  'sim-lesson5b': [
    { ...WHAT,
      zh: '预设⑤b 是第 5 课的第二个实验：不再按概率抽样丢包，而是主机 2 和 3 每隔一段时间以线速向主机 1 发一阵突发，和被测路径在同一个优先级上，三路在主机 1 的出口队列相遇，队列溢出就真的丢包。一开始无损网络是关着的。数字都是仿真结果，不是真机测量。',
      en: 'Preset ⑤b is lesson 5\'s second experiment: no drawn drops; instead hosts 2 and 3 send host 1 a burst at line rate every so often, in the same traffic class as the path under test, so three senders meet at host 1\'s egress queue and it really overflows. The lossless network starts off. Every figure is simulated, not measured.' },
    { sel: row('cross_traffic'),
      zh: '“交叉流量”一行：几台主机、各发了几次突发、平均占了多少带宽，最后是“上限”——被测路径和突发分享链路，最多能拿到无丢包时的几成。',
      en: 'The cross-traffic row: how many hosts, how many bursts each, the average load they add, and last the ceiling — the share of its loss-free rate the path can get at most while it shares the link with the bursts.' },
    { sel: row('drops'),
      zh: '“丢包 / PFC 暂停帧 / ECN 标记”：RDMA 一栏有丢包、没有暂停帧——没有 PFC，缓冲满了只能丢。',
      en: 'Drops / PFC pauses / ECN marks: the RDMA column has drops and no pause frames — without PFC a full buffer can only drop.' },
    { sel: '#packetview',
      zh: '报文视图里看丢包怎样扎堆出现在突发里：被丢的包（✗）、响应方回的 NAK，以及 go-back-N 重发的范围（阴影）。拖动滑块或点「播放」。',
      en: 'In the packet view, see the drops cluster inside a burst: the dropped packets (✗), the responder\'s NAK, and the range go-back-N resends (shaded). Drag the slider or press Play.' },
    { ...act('lossless.enabled', true),
      zh: '现在勾上「无损网络（PFC）」，再点「运行」；也可以点「做这一步」，让导览替你勾上并运行。',
      en: 'Now tick Lossless network (PFC) and press Run — or press Do it and the tour does both.' },
    { ...changed('drops'),
      zh: '运行之后，这一行显示之前 → 现在：RoCE 的优先级开了 PFC，RDMA 一栏的丢包变成零，换来的是 PFC 暂停帧——交换机让三个发送方都暂停，而不是丢它们的包。TCP 留在有损类别里，照样丢包。',
      en: 'After the run this row reads before → now: with PFC on RoCE\'s priority the RDMA column drops nothing and pause frames appear instead — the switch pauses all three senders rather than dropping their packets. TCP stays in the lossy class and still drops.' },
    { sel: '#packetview',
      zh: '报文视图里现在是链路上的 PAUSE（‖）和 RESUME（▶），下面是交换机队列深度的曲线：队列涨到阈值就暂停上游，降下来再恢复。',
      en: 'The packet view now shows PAUSE (‖) and RESUME (▶) on the link, and the switch queue depth underneath: when the queue reaches the threshold the upstream port is paused, and resumed once it drains.' },
    { sel: row('retention'),
      zh: '保持率不一定跟着变高：RoCE 一个包也没丢，但它要和突发流量分享链路。对照“交叉流量”一行的上限读这一格。',
      en: 'Retention does not necessarily rise: RoCE loses nothing, but it shares the link with the bursts. Read this cell against the ceiling in the cross-traffic row.' },
    { sel: '#charts',
      zh: '图表按时间画出每一批的吞吐和保持率（仿真），坐标轴上写着单位。',
      en: 'The charts plot each batch\'s simulated throughput and the retention over time, with units on the axes.' },
  ],
  'sim-lesson6': [
    { ...WHAT,
      zh: '预设⑥是第 6 课：消息变大到 1 MiB，看 RDMA 的优势怎样变化。数字都是仿真结果，不是真机测量。',
      en: 'Preset ⑥ is lesson 6: the message grows to 1 MiB — see how RDMA\'s advantage changes. Every figure is simulated.' },
    { sel: row('latency'),
      zh: '“单条消息延迟”：读两栏各自的延迟，再和下一行的比值对照。',
      en: 'One-message latency: read each column\'s latency, then the ratio in the last row.' },
    { sel: row('latency_ratio'),
      zh: '表的最后一行“RDMA ÷ TCP 单条消息延迟”：记下这个比值，等会儿换回 4 KiB 再比。',
      en: 'The last row, RDMA ÷ TCP one-message latency: note the ratio, to compare after switching back to 4 KiB.' },
    { sel: row('cpu_per_message'),
      zh: '“每条消息 CPU 时间”：TCP 的 CPU 时间随字节数一起涨（拷贝按字节算），RDMA 本端还是只有写 WQE 和轮询 CQ。',
      en: 'CPU time per message: TCP\'s grows with the bytes (copies are paid per byte), while RDMA\'s local side still only writes a WQE and polls the CQ.' },
    { sel: row('bus_bytes'),
      zh: '“内存总线字节”是每送达一个字节的成本，与消息大小无关。',
      en: 'Memory-bus bytes are a cost per delivered byte, independent of the message size.' },
    { ...act('workload.message_bytes', 4096),
      zh: '把「消息大小」改成 4096（4 KiB），再点「运行」；也可以点「做这一步」，让导览替你改好并运行。',
      en: 'Set Message size to 4096 (4 KiB) and press Run — or press Do it and the tour does both.' },
    { ...changed('latency_ratio'),
      zh: '运行之后，延迟比值这一行显示之前 → 现在：消息小了，比值往哪边走？再看“每条消息 CPU 时间”一行，TCP 一栏跟着字节数一起变小。',
      en: 'After the run the latency-ratio row reads before → now: with a small message, which way does the ratio move? Then read CPU time per message: TCP\'s column shrinks with the bytes.' },
  ],
});

// The playground's chapter tours (tour-chapters.js), as `pg-<chapter>`.
for (const [id, c] of Object.entries(CHAPTER_TOURS)) TOURS[`pg-${id}`] = c.steps;

const ui = (key, vars = {}) => (UI[lang()] || UI.zh)[key].replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ''));

/** The button that starts `page`'s tour. */
export function tourButtonHtml(page) {
  return `<button type="button" class="secondary tour-start" data-tour="${esc(page)}" data-testid="tour-start" title="${esc(ui('startTitle'))}">${esc(ui('start'))}</button>`;
}

export { chapterTourHref };

/**
 * The playground's tour menu: the basics tour, then one entry per chapter that has a tour, in
 * the order of `chapters` (`[{id, title}]`, the course's list for the playground).
 */
export function tourMenuHtml(chapters) {
  const list = (chapters || []).filter((c) => Object.hasOwn(CHAPTER_TOURS, c.id));
  const items = list.map((c) => `<li><a data-link data-tour-chapter="${esc(c.id)}" href="${esc(chapterTourHref(c.id))}">${esc(c.title)}</a></li>`).join('');
  return `<details class="tour-menu" data-testid="tour-menu"><summary title="${esc(ui('menuTitle'))}">${esc(ui('menu'))}</summary>
    <ul class="tour-menu-list"><li><a data-link data-tour-chapter="playground" href="${esc(href('/playground', [['tour', 'playground']]))}">${esc(ui('basics'))}</a></li>${items}</ul></details>`;
}

let current = null;

function close() {
  if (!current) return;
  current.box.remove();
  for (const el of document.querySelectorAll('.tour-on')) el.classList.remove('tour-on');
  document.removeEventListener('keydown', current.key);
  document.removeEventListener('rdmalab:sim-done', current.ran);
  document.removeEventListener('rdmalab:sim-refused', current.refused);
  document.removeEventListener('rdmalab:route', current.routed);
  current = null;
}

/** The parameter panel's control of `key` (sim.js), or null. */
const control = (key) => document.querySelector(`#params [data-key="${CSS.escape(key)}"]`);

/** Whether the panel's control of `key` holds `value`. */
function holds({ key, value }) {
  const el = control(key);
  if (!el) return false;
  return el.type === 'checkbox' ? el.checked === (value === true) : el.value === String(value);
}

function show(k, { scroll = true } = {}) {
  const { steps, box, root } = current;
  current.k = k;
  current.acting = false;
  const s = steps[k];
  const pane = root.querySelector('.pg-work');
  if (s.pane && pane) showPane(root, s.pane);
  for (const el of document.querySelectorAll('.tour-on')) el.classList.remove('tour-on');
  if (s.open) for (const d of document.querySelectorAll(s.open)) d.open = true;
  // A step about one call's form shows that form first (its tab), as a learner who skipped
  // the step before would otherwise be pointed at a hidden field.
  if (s.tab) {
    const t = root.querySelector(`#pg-tab-${s.tab}`);
    if (t && t.getAttribute('aria-selected') !== 'true') t.click();
  }
  // A playground step about one of the session's steps selects it first, so the packets,
  // memory and state panes show what that step did.
  if (s.select) {
    const b = root.querySelector(`[data-sel="${s.select}"]`);
    if (b && b.getAttribute('aria-pressed') !== 'true') b.click();
  }
  const el = document.querySelector(s.sel);
  if (el) {
    el.classList.add('tour-on');
    // On a phone the card covers the lower part of the screen: the target goes to the top.
    if (scroll) el.scrollIntoView({ block: matchMedia('(max-width: 700px)').matches ? 'start' : 'center', behavior: 'instant' });
  }
  box.dataset.step = String(k + 1);
  box.dataset.act = s.act ? 'ready' : '';
  box.innerHTML = `<p class="tour-of">${esc(ui('of', { k: k + 1, n: steps.length }))}</p>
    <p class="tour-text" data-testid="tour-text">${esc(s[lang()] || s.zh)}</p>
    <p class="tour-note" data-testid="tour-note" role="status" hidden></p>
    <div class="tour-btns">
      <button type="button" class="secondary" data-tour-go="back"${k ? '' : ' disabled'}>${esc(ui('back'))}</button>
      ${s.act ? `<button type="button" class="tour-act" data-tour-go="act" data-testid="tour-act" title="${esc(ui('actTitle'))}">${esc(ui('act'))}</button>` : ''}
      <button type="button"${s.act ? ' class="secondary"' : ''} data-tour-go="next" data-testid="tour-next">${esc(ui(k + 1 < steps.length ? 'next' : 'done'))}</button>
      <button type="button" class="secondary tour-x" data-tour-go="close" aria-label="${esc(ui('close'))}">✕</button>
    </div>`;
  box.querySelector(s.act ? '[data-tour-go="act"]' : '[data-tour-go="next"]').focus({ preventScroll: true });
}

/**
 * "Do it": sets the step's control in the parameter panel, as a learner would, and presses Run.
 * The panel validates and runs as for a click; the page's `rdmalab:sim-done` then moves the tour
 * on (see `startTour`), and `rdmalab:sim-refused` leaves it here with a note.
 */
function doIt() {
  const s = current.steps[current.k];
  const el = control(s.act.key);
  if (!el) return;
  // Already done (by hand, or from the link): the page shows that run; go on.
  const sets = new URLSearchParams(location.search).getAll('set');
  if (holds(s.act) && sets.some((x) => x.startsWith(`${s.act.key}=`))) { show(current.k + 1); return; }
  const d = el.closest('details');
  if (d) d.open = true;
  if (el.type === 'checkbox') el.checked = s.act.value === true;
  else el.value = String(s.act.value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  current.acting = true;
  const { box } = current;
  box.dataset.act = 'running';
  for (const b of box.querySelectorAll('[data-tour-go="act"], [data-tour-go="next"]')) b.disabled = true;
  const b = box.querySelector('[data-tour-go="act"]');
  b.textContent = ui('acting');
  document.querySelector('#run').click();
}

/** Starts `page`'s tour over `root` (the page's element). */
export function startTour(page, root) {
  close();
  if (!Object.hasOwn(TOURS, page)) return;
  const steps = TOURS[page];
  const box = document.createElement('div');
  box.className = 'tour-box';
  box.setAttribute('role', 'dialog');
  box.setAttribute('aria-live', 'polite');
  box.setAttribute('aria-label', ui('start'));
  box.dataset.testid = 'tour';
  box.dataset.tour = page;
  box.addEventListener('click', (e) => {
    const go = e.target.closest('[data-tour-go]');
    if (!go || go.disabled) return;
    if (go.dataset.tourGo === 'close') close();
    else if (go.dataset.tourGo === 'back') show(Math.max(0, current.k - 1));
    else if (go.dataset.tourGo === 'act') doIt();
    else if (current.k + 1 < steps.length) show(current.k + 1);
    else close();
  });
  const key = (e) => { if (e.key === 'Escape') close(); };
  // The simulation page drew a new run (the panel's Run, by hand or by "Do it"): a step that
  // asked for that setting is done, so the tour goes on to the row it changed; any other step
  // is shown again on the new page. Another preset's run ends this preset's tour.
  const ran = (e) => {
    if (!current) return;
    const preset = e.detail && e.detail.preset;
    if (page.startsWith('sim-') && preset && page !== `sim-${preset}`) { close(); return; }
    const s = current.steps[current.k];
    if (s.act && holds(s.act) && current.k + 1 < steps.length) show(current.k + 1);
    else show(current.k, { scroll: false });
  };
  const refused = () => {
    if (!current || !current.acting) return;
    const s = current.steps[current.k];
    show(current.k, { scroll: false });
    const note = current.box.querySelector('.tour-note');
    note.textContent = ui('refused');
    note.hidden = false;
    // The field the panel refused (it says why under it), else the step's own control.
    const bad = document.querySelector('#params [aria-invalid="true"]') || control(s.act.key);
    if (bad) bad.closest('.param').scrollIntoView({ block: 'center', behavior: 'instant' });
  };
  // Another page (app.js's router) ends the tour; the same page drawn again (another language,
  // another session) keeps it, its card in the page's language.
  const path = location.pathname;
  const routed = () => {
    if (!current) return;
    if (location.pathname !== path) close();
    // A run "Do it" started is being drawn: its rdmalab:sim-done moves the tour on.
    else if (!current.acting) show(current.k, { scroll: false });
  };
  document.addEventListener('keydown', key);
  document.addEventListener('rdmalab:route', routed);
  document.addEventListener('rdmalab:sim-done', ran);
  document.addEventListener('rdmalab:sim-refused', refused);
  document.body.append(box);
  current = { steps, box, root, k: 0, key, ran, refused, routed, acting: false };
  show(0);
}

/** Wires every tour button inside `root`. */
export function wireTours(root) {
  root.addEventListener('click', (e) => {
    const b = e.target.closest && e.target.closest('[data-tour]');
    if (b) startTour(b.dataset.tour, root);
  });
}
