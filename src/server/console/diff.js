// A line diff (Myers' O(ND) algorithm) shown as unified hunks of +/- lines.

import {h} from './dom.js';

const MAX_D = 3000; // edits past this: show the versions as replaced wholesale

// The edit script of two arrays of lines: [{op: ' ' | '-' | '+', text}].
export function diffLines(a, b) {
  let pre = 0, post = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  while (post < a.length - pre && post < b.length - pre && a[a.length - 1 - post] === b[b.length - 1 - post]) post++;
  const mid = myers(a.slice(pre, a.length - post), b.slice(pre, b.length - post));
  const same = (t) => ({op: ' ', text: t});
  return [...a.slice(0, pre).map(same), ...mid, ...a.slice(a.length - post).map(same)];
}

function myers(a, b) {
  const n = a.length, m = b.length;
  const wholesale = () => [...a.map((t) => ({op: '-', text: t})), ...b.map((t) => ({op: '+', text: t}))];
  if (!n || !m) return wholesale();
  const off = n + m + 1, v = new Int32Array(2 * off + 1), trace = [];
  v[off + 1] = 0;
  for (let d = 0; d <= Math.min(n + m, MAX_D); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2)); // v before round d, k in [-d-1, d+1]
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d);
    }
  }
  return wholesale();
}

function backtrack(a, b, trace, D) {
  const out = [];
  let x = a.length, y = b.length;
  for (let d = D; d >= 0; d--) {
    const t = trace[d], at = (k) => t[k + d + 1];
    const k = x - y;
    const pk = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const px = at(pk), py = px - pk;
    while (x > px && y > py) { x--; y--; out.push({op: ' ', text: a[x]}); }
    if (d > 0) {
      if (x === px) out.push({op: '+', text: b[--y]});
      else out.push({op: '-', text: a[--x]});
    }
  }
  return out.reverse();
}

// Unified hunks with `context` lines around each change, as a <pre>.
export function diffView(oldText, newText, context = 3) {
  const ops = diffLines(oldText.split('\n'), newText.split('\n'));
  const pre = h('pre', {class: 'diff', testid: 'version-diff'});
  if (!ops.some((o) => o.op !== ' ')) {
    pre.append(h('span', {class: 'd-hunk'}, 'no differences'));
    return pre;
  }
  // Mark the lines to show, then print runs of them as hunks.
  const show = new Uint8Array(ops.length);
  ops.forEach((o, i) => {
    if (o.op !== ' ') for (let j = Math.max(0, i - context); j <= Math.min(ops.length - 1, i + context); j++) show[j] = 1;
  });
  let an = 1, bn = 1;
  for (let i = 0; i < ops.length;) {
    if (!show[i]) { if (ops[i].op !== '+') an++; if (ops[i].op !== '-') bn++; i++; continue; }
    let j = i, ac = 0, bc = 0;
    for (; j < ops.length && show[j]; j++) { if (ops[j].op !== '+') ac++; if (ops[j].op !== '-') bc++; }
    pre.append(h('span', {class: 'd-hunk'}, `@@ -${an},${ac} +${bn},${bc} @@\n`));
    for (; i < j; i++) {
      const o = ops[i];
      pre.append(h('span', {class: o.op === '+' ? 'd-add' : o.op === '-' ? 'd-del' : 'd-ctx'}, o.op + ' ' + o.text + '\n'));
    }
    an += ac; bn += bc;
  }
  return pre;
}
