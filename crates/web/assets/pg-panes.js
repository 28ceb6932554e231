// The playground's panes on a phone: one tab strip (steps / ladder / memory / state) shows one
// pane at a time; on a wide screen every pane shows and the strip is hidden (playground.css).

import { lang } from './i18n.js';

/** The panes, in the strip's order. */
export const PANES = ['steps', 'ladder', 'memory', 'state'];

const S = {
  zh: { panes: '实验台的面板', 'pane.steps': '步骤', 'pane.ladder': '报文', 'pane.memory': '内存', 'pane.state': '状态' },
  en: { panes: 'Playground panes', 'pane.steps': 'Steps', 'pane.ladder': 'Packets', 'pane.memory': 'Memory', 'pane.state': 'State' },
};

/** A string of the pane strip in the page's language. */
export function pt(key) {
  const s = (S[lang()] || S.zh)[key];
  if (s === undefined) throw new Error(`pg-panes: no string ${key}`);
  return s;
}

/** Shows pane `name` (on a phone; a wide screen shows all of them). */
export function showPane(root, name) {
  if (!PANES.includes(name)) return;
  root.querySelector('.pg-work').dataset.pane = name;
  for (const b of root.querySelectorAll('[data-pane-tab]')) b.setAttribute('aria-selected', String(b.dataset.paneTab === name));
}

/** The strip's clicks and arrow keys. */
export function wirePanes(root) {
  root.addEventListener('click', (e) => {
    const b = e.target.closest && e.target.closest('[data-pane-tab]');
    if (b) showPane(root, b.dataset.paneTab);
  });
  root.addEventListener('keydown', (e) => {
    const b = e.target.closest && e.target.closest('[data-pane-tab]');
    if (!b) return;
    const k = PANES.indexOf(b.dataset.paneTab);
    const to = { ArrowRight: k + 1, ArrowLeft: k - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const name = PANES[(to + PANES.length) % PANES.length];
    showPane(root, name);
    root.querySelector(`[data-pane-tab="${name}"]`).focus();
  });
}

