// The playground's page state: one object per render of the page, read by every part.
// Split out of playground.js; see that file for how the page works.

import { emptySession } from './pg-session.js';
import { NO_MODEL } from './pg-model.js';

// ---------------------------------------------------------------------------------------------
// The page state (one per render of the page)

/** The page being shown (a live binding: every part reads the current one). */
export let P = null;

/** Makes `page` the page every part reads (one per render of /playground). */
export function setPage(page) {
  P = page;
}

export function newPage(main, live) {
  return {
    main, live, session: emptySession(), report: null, error: null, selected: 0,
    selQp: null, ladderAll: false, edge: null, pinned: null, kb: null, kbOn: false, ladderTable: false, gen: 0, urlSeq: 0, submitted: null,
    model: NO_MODEL, modelError: null, reportText: null, tab: 'alloc_pd', focusCall: null, focusStep: null,
  };
}

export const $ = (sel) => P.main.querySelector(sel);

/** The status line under the page's bar. */
export function status(text, isError = false) {
  const s = $('#pg-status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}
