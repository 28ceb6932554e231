// The playground's session: the session file's constants, the quick start, an empty session, expectations pinned from a run, and the share link.
// Split out of playground.js; see that file for how the page works.

import { tt } from './pg-strings.js';
import { isTable } from './pg-toml.js';

// ---------------------------------------------------------------------------------------------
// Constants of the session file format (scenarios/verbs/README.md). The states, the transitions,
// the attributes and the profiles are not here: they come from GET /api/verbs/model.

export const MR_ACCESS = ['LOCAL_WRITE', 'REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'];
export const QP_ACCESS = ['REMOTE_WRITE', 'REMOTE_READ', 'REMOTE_ATOMIC'];
export const OPCODES = ['SEND', 'SEND_WITH_IMM', 'RDMA_WRITE', 'RDMA_WRITE_WITH_IMM', 'RDMA_READ', 'ATOMIC_CMP_AND_SWP', 'ATOMIC_FETCH_AND_ADD'];
export const SEND_FLAGS = ['SIGNALED', 'FENCE', 'SOLICITED', 'INLINE'];
export const MTUS = [256, 512, 1024, 2048, 4096];
export const QKEY = 0x11111111;
// modify_qp: mask bit → the key carrying its value, the input kind, the default. ALT_PATH and
// CAP are bits with no value in the session file.
export const ATTR_KEYS = {
  STATE: ['state', 'state'], CUR_STATE: ['cur_state', 'state'], EN_SQD_ASYNC_NOTIFY: ['en_sqd_async_notify', 'bool', false],
  ACCESS_FLAGS: ['access', 'access', ['REMOTE_WRITE', 'REMOTE_READ']], PKEY_INDEX: ['pkey_index', 'int', 0], PORT: ['port', 'int', 1],
  QKEY: ['qkey', 'int', QKEY], AV: ['av', 'host'], PATH_MTU: ['path_mtu', 'mtu', 1024], TIMEOUT: ['timeout', 'int', 14],
  RETRY_CNT: ['retry_cnt', 'int', 7], RNR_RETRY: ['rnr_retry', 'int', 7], RQ_PSN: ['rq_psn', 'int'], MAX_QP_RD_ATOMIC: ['max_rd_atomic', 'int', 4],
  MIN_RNR_TIMER: ['min_rnr_timer', 'int', 12], SQ_PSN: ['sq_psn', 'int'], MAX_DEST_RD_ATOMIC: ['max_dest_rd_atomic', 'int', 4],
  PATH_MIG_STATE: ['path_mig_state', 'int', 0], DEST_QPN: ['dest_qp', 'qp'],
};
export const BRINGUP = { RESET: 'INIT', INIT: 'RTR', RTR: 'RTS' };
export const RANK = { RESET: 0, INIT: 1, RTR: 2, RTS: 3 };
export const bare = (n) => String(n ?? '').replace(/^IBV_(QP|WC|WR|ACCESS|SEND)_/, '');

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
// Expectations pinning a run's results, so `rdmalab verbs run` passes the exported file.

/**
 * What a poll_cq with `wait` waits for under `profile`: `completions` (a per-profile table read
 * for that profile), the length of `wc`, else 1 (README); null when unknown.
 */
export function waitTarget(step, profile) {
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

export async function pipeBytes(bytes, stream) {
  const r = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await r.arrayBuffer());
}

export function b64url(bytes) {
  let s = '';
  for (let k = 0; k < bytes.length; k += 0x8000) s += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function unb64url(s) {
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
