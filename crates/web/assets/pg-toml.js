// TOML for the playground's session files: a writer, and a reader for the subset session files use.
// Split out of playground.js; see that file for how the page works.

import { emptySession } from './pg-session.js';

// ---------------------------------------------------------------------------------------------
// TOML: a writer for any value the session holds, and a reader for the subset of TOML that
// session files use (comments, bare/quoted/dotted keys, basic and literal strings, integers,
// floats, booleans, arrays, inline tables, [tables] and [[arrays of tables]]).

/** A float read from TOML, kept apart from integers so `loss = 0.0` is written back as a float. */
export class TomlFloat {
  constructor(v) { this.v = v; }
}

export const BARE_KEY = /^[A-Za-z0-9_-]+$/;

export function tomlString(s) {
  return `"${String(s).replace(/[\\"\u0000-\u001f\u007f]/g, (c) => ({
    '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f',
  }[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}

export const tomlKey = (k) => (BARE_KEY.test(k) ? k : tomlString(k));

export function tomlFloat(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

export const isTable = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof TomlFloat);

/** One value as TOML on one line (arrays of tables longer than a line get one entry per line). */
export function tomlValue(v, indent = '') {
  if (typeof v === 'string') return tomlString(v);
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : tomlFloat(v);
  if (v instanceof TomlFloat) return tomlFloat(v.v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) {
    const items = v.map((x) => tomlValue(x, `${indent}  `));
    const one = `[${items.join(', ')}]`;
    if (one.length <= 90 || !v.some(isTable)) return one;
    return `[\n${items.map((x) => `${indent}  ${x},`).join('\n')}\n${indent}]`;
  }
  if (isTable(v)) {
    const parts = Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x, indent)}`);
    return parts.length ? `{ ${parts.join(', ')} }` : '{}';
  }
  throw new Error(`cannot write ${typeof v} as TOML`);
}

/**
 * The session as a session file. Returns `{ text, lines }`, `lines[i]` being the 1-based line
 * of step i's `[[step]]` (to map the server's `LINE:COL` errors back to a step).
 */
export function sessionToToml(session, steps = session.steps) {
  const out = [];
  const line = (s = '') => out.push(...String(s).split('\n'));
  line('# A verbs session built in rdmalab\'s playground: `rdmalab verbs run session.toml`');
  line(`profile = ${tomlString(session.profile || 'mlx5')}`);
  line(`seed = ${tomlValue(session.seed ?? 1)}`);
  line(`hosts = ${tomlValue(session.hosts || ['a', 'b'])}`);
  for (const [k, v] of Object.entries(session.extra || {})) line(`${tomlKey(k)} = ${tomlValue(v)}`);
  line('');
  line('[fabric]');
  for (const [k, v] of Object.entries(session.fabric || { topology: 'back_to_back' })) {
    if (v !== undefined) line(`${tomlKey(k)} = ${tomlValue(v)}`);
  }
  const lines = [];
  for (const s of steps) {
    line('');
    for (const c of s['#'] || []) line(`# ${c}`);
    lines.push(out.length + 1);
    line('[[step]]');
    for (const [k, v] of Object.entries(s)) {
      if (v === undefined || k === '#') continue;
      if (k === 'expect' && isTable(v)) {
        for (const [ek, ev] of Object.entries(v)) if (ev !== undefined) line(`expect.${tomlKey(ek)} = ${tomlValue(ev)}`);
      } else {
        line(`${tomlKey(k)} = ${tomlValue(v)}`);
      }
    }
  }
  return { text: `${out.join('\n')}\n`, lines };
}

/** Parses TOML text (the subset above); throws an Error naming the line on anything else. */
export function parseToml(src) {
  const root = {};
  let cur = root;
  let i = 0;
  const n = src.length;
  const lineNo = () => src.slice(0, i).split('\n').length;
  const fail = (msg) => { throw new Error(`line ${lineNo()}: ${msg}`); };
  const ws = () => { while (i < n && (src[i] === ' ' || src[i] === '\t')) i++; };
  const comment = () => { if (src[i] === '#') while (i < n && src[i] !== '\n') i++; };
  const blank = () => {
    for (;;) {
      ws(); comment();
      if (src[i] === '\n') { i++; continue; }
      if (src[i] === '\r' && src[i + 1] === '\n') { i += 2; continue; }
      return;
    }
  };
  const endOfLine = () => {
    ws(); comment();
    if (i >= n) return;
    if (src[i] === '\n') { i++; return; }
    if (src[i] === '\r' && src[i + 1] === '\n') { i += 2; return; }
    fail(`unexpected ${JSON.stringify(src[i])}`);
  };
  const basicString = () => {
    if (src.startsWith('"""', i)) fail('multi-line strings are not supported here');
    i++;
    let s = '';
    for (;;) {
      if (i >= n || src[i] === '\n') fail('unterminated string');
      const c = src[i++];
      if (c === '"') return s;
      if (c !== '\\') { s += c; continue; }
      const e = src[i++];
      const simple = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' }[e];
      if (simple !== undefined) { s += simple; continue; }
      if (e === 'u' || e === 'U') {
        const len = e === 'u' ? 4 : 8;
        const hex = src.slice(i, i + len);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== len) fail('bad unicode escape');
        s += String.fromCodePoint(parseInt(hex, 16));
        i += len;
        continue;
      }
      fail(`bad escape \\${e}`);
    }
  };
  const literalString = () => {
    if (src.startsWith("'''", i)) fail('multi-line strings are not supported here');
    const end = src.indexOf("'", i + 1);
    const nl = src.indexOf('\n', i + 1);
    if (end < 0 || (nl >= 0 && nl < end)) fail('unterminated string');
    const s = src.slice(i + 1, end);
    i = end + 1;
    return s;
  };
  const key = () => {
    const parts = [];
    for (;;) {
      ws();
      if (src[i] === '"') parts.push(basicString());
      else if (src[i] === "'") parts.push(literalString());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(src.slice(i, i + 200));
        if (!m) fail('a key expected');
        parts.push(m[0]);
        i += m[0].length;
      }
      ws();
      if (src[i] !== '.') return parts;
      i++;
    }
  };
  const number = () => {
    const m = /^[+-]?(0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|[0-9_]+(\.[0-9_]+)?([eE][+-]?[0-9_]+)?|inf|nan)/.exec(src.slice(i, i + 100));
    if (!m) fail('a value expected');
    i += m[0].length;
    const s = m[0].replace(/_/g, '');
    if (/inf|nan/.test(s)) return new TomlFloat(Number(s.replace('inf', 'Infinity').replace('nan', 'NaN')));
    if (/^[+-]?0[xob]/.test(s)) {
      const neg = s.startsWith('-');
      const b = BigInt(s.replace(/^[+-]/, ''));
      const v = neg ? -b : b;
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    if (/[.eE]/.test(s)) return new TomlFloat(Number(s));
    const v = BigInt(s);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  };
  const value = () => {
    ws();
    const c = src[i];
    if (c === '"') return basicString();
    if (c === "'") return literalString();
    if (c === '[') {
      i++;
      const arr = [];
      for (;;) {
        blank();
        if (src[i] === ']') { i++; return arr; }
        arr.push(value());
        blank();
        if (src[i] === ',') { i++; continue; }
        if (src[i] === ']') { i++; return arr; }
        fail('"," or "]" expected in an array');
      }
    }
    if (c === '{') {
      i++;
      const tbl = {};
      ws();
      if (src[i] === '}') { i++; return tbl; }
      for (;;) {
        blank();
        const k = key();
        if (src[i] !== '=') fail('"=" expected');
        i++;
        assign(tbl, k, value());
        blank();
        if (src[i] === ',') { i++; blank(); if (src[i] === '}') { i++; return tbl; } continue; }
        if (src[i] === '}') { i++; return tbl; }
        fail('"," or "}" expected in an inline table');
      }
    }
    if (src.startsWith('true', i)) { i += 4; return true; }
    if (src.startsWith('false', i)) { i += 5; return false; }
    if (/\d{4}-\d{2}-\d{2}/.test(src.slice(i, i + 10))) fail('dates are not supported here');
    return number();
  };
  const assign = (tbl, parts, v) => {
    let o = tbl;
    for (const p of parts.slice(0, -1)) {
      if (o[p] === undefined) o[p] = {};
      else if (!isTable(o[p])) fail(`key ${p} is not a table`);
      o = o[p];
    }
    const last = parts[parts.length - 1];
    if (Object.prototype.hasOwnProperty.call(o, last)) fail(`key ${parts.join('.')} defined twice`);
    o[last] = v;
  };
  const walk = (parts) => {
    let o = root;
    for (const p of parts) {
      if (o[p] === undefined) o[p] = {};
      let v = o[p];
      if (Array.isArray(v)) v = v[v.length - 1];
      if (!isTable(v)) fail(`${p} is not a table`);
      o = v;
    }
    return o;
  };
  for (;;) {
    blank();
    if (i >= n) break;
    if (src.startsWith('[[', i)) {
      i += 2;
      const parts = key();
      if (!src.startsWith(']]', i)) fail('"]]" expected');
      i += 2;
      const parent = walk(parts.slice(0, -1));
      const last = parts[parts.length - 1];
      if (parent[last] === undefined) parent[last] = [];
      if (!Array.isArray(parent[last])) fail(`${last} is not an array of tables`);
      cur = {};
      parent[last].push(cur);
    } else if (src[i] === '[') {
      i++;
      const parts = key();
      if (src[i] !== ']') fail('"]" expected');
      i++;
      cur = walk(parts);
    } else {
      const parts = key();
      if (src[i] !== '=') fail('"=" expected');
      i++;
      assign(cur, parts, value());
    }
    endOfLine();
  }
  return root;
}

/** A session from a session file's text; throws when the text is outside what the page edits. */
export function sessionFromToml(text) {
  const doc = parseToml(text);
  const s = emptySession();
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'profile') { if (typeof v !== 'string') throw new Error('profile is not a string'); s.profile = v; }
    else if (k === 'seed') s.seed = v;
    else if (k === 'hosts') {
      if (!Array.isArray(v) || !v.every((h) => typeof h === 'string')) throw new Error('hosts is not a list of names');
      s.hosts = v;
    } else if (k === 'fabric') {
      if (!isTable(v)) throw new Error('fabric is not a table');
      s.fabric = v;
    } else if (k === 'step') {
      if (!Array.isArray(v) || !v.every((x) => isTable(x) && typeof x.call === 'string')) throw new Error('step is not a list of [[step]] tables with a call');
      s.steps = v;
    } else s.extra[k] = v;
  }
  return s;
}
