// Guided tours: an optional walk through a page, one step at a time — what to click, what to
// read — each step pointing at (and outlining) one element of the page. Started from a visible
// button (`tourButtonHtml`), closed with Escape or ✕. A step may name the phone pane it lives in
// (pg-panes.js) so the tour shows that pane first. Each tour's texts are in both languages here.

import { esc, lang } from './i18n.js';
import { showPane } from './pg-panes.js';

const UI = {
  zh: { start: '导览', startTitle: '一步一步带你走一遍这个页面', next: '下一步', back: '上一步', done: '完成', close: '关闭导览', of: '第 {k} 步，共 {n} 步' },
  en: { start: 'Guided tour', startTitle: 'Walk through this page one step at a time', next: 'Next', back: 'Back', done: 'Done', close: 'Close the tour', of: 'Step {k} of {n}' },
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
    { sel: '#pg-ladder', pane: 'ladder',
      zh: '报文：选中 post_send 那一步，这里画出它的 WRITE 请求和对端回的 ACK。点一个报文，看它每一层头部的字段。',
      en: 'Packets: select the post_send step and this shows its WRITE request and the peer\'s ACK. Click a packet to open its headers field by field.' },
    { sel: '#pg-memory', pane: 'memory',
      zh: '内存：b 的缓冲区里被这次 WRITE 写入的字节高亮显示——b 的 CPU 什么都没做，字节就到了。',
      en: 'Memory: the bytes of b\'s buffer that this WRITE placed are highlighted — b\'s CPU did nothing, and the bytes arrived.' },
    { sel: '#pg-form-post_send [name="rmr"]', pane: 'steps',
      zh: '再投一个 WRITE，这次远端 MR 选 mr_a：发过去的是 a 自己的 rkey，b 上没有这个 key，b 回 NAK，完成是 REM_ACCESS_ERR，两个 QP 都进 ERR。',
      en: 'Post another WRITE, this time with mr_a as the remote MR: it carries a\'s own rkey, which names nothing on b; b answers with a NAK, the completion is REM_ACCESS_ERR and both QPs go to ERR.' },
    { sel: '#pg-steps', pane: 'steps',
      zh: '每一步的返回值、完成状态和解释都在这里；点一步就能看它之后的状态、报文和内存。',
      en: 'Every step\'s return value, completion status and explanation is here; select a step to see the state, packets and memory after it.' },
  ],
};

const ui = (key, vars = {}) => (UI[lang()] || UI.zh)[key].replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ''));

/** The button that starts `page`'s tour. */
export function tourButtonHtml(page) {
  return `<button type="button" class="secondary tour-start" data-tour="${esc(page)}" data-testid="tour-start" title="${esc(ui('startTitle'))}">${esc(ui('start'))}</button>`;
}

let current = null;

function close() {
  if (!current) return;
  current.box.remove();
  for (const el of document.querySelectorAll('.tour-on')) el.classList.remove('tour-on');
  document.removeEventListener('keydown', current.key);
  current = null;
}

function show(k) {
  const { steps, box, root } = current;
  current.k = k;
  const s = steps[k];
  const pane = root.querySelector('.pg-work');
  if (s.pane && pane) showPane(root, s.pane);
  for (const el of document.querySelectorAll('.tour-on')) el.classList.remove('tour-on');
  const el = document.querySelector(s.sel);
  if (el) {
    el.classList.add('tour-on');
    el.scrollIntoView({ block: 'center', behavior: 'instant' });
  }
  box.dataset.step = String(k + 1);
  box.innerHTML = `<p class="tour-of">${esc(ui('of', { k: k + 1, n: steps.length }))}</p>
    <p class="tour-text" data-testid="tour-text">${esc(s[lang()] || s.zh)}</p>
    <div class="tour-btns">
      <button type="button" class="secondary" data-tour-go="back"${k ? '' : ' disabled'}>${esc(ui('back'))}</button>
      <button type="button" data-tour-go="next" data-testid="tour-next">${esc(ui(k + 1 < steps.length ? 'next' : 'done'))}</button>
      <button type="button" class="secondary tour-x" data-tour-go="close" aria-label="${esc(ui('close'))}">✕</button>
    </div>`;
  box.querySelector('[data-tour-go="next"]').focus({ preventScroll: true });
}

/** Starts `page`'s tour over `root` (the page's element). */
export function startTour(page, root) {
  close();
  const steps = TOURS[page];
  if (!steps) return;
  const box = document.createElement('div');
  box.className = 'tour-box';
  box.setAttribute('role', 'dialog');
  box.setAttribute('aria-live', 'polite');
  box.dataset.testid = 'tour';
  box.addEventListener('click', (e) => {
    const go = e.target.closest('[data-tour-go]');
    if (!go) return;
    if (go.dataset.tourGo === 'close') close();
    else if (go.dataset.tourGo === 'back') show(Math.max(0, current.k - 1));
    else if (current.k + 1 < steps.length) show(current.k + 1);
    else close();
  });
  const key = (e) => { if (e.key === 'Escape') close(); };
  document.addEventListener('keydown', key);
  document.body.append(box);
  current = { steps, box, root, k: 0, key };
  show(0);
}

/** Wires every tour button inside `root`. */
export function wireTours(root) {
  root.addEventListener('click', (e) => {
    const b = e.target.closest && e.target.closest('[data-tour]');
    if (b) startTour(b.dataset.tour, root);
  });
}
