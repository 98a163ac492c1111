// A collapsible JSON tree, built lazily: a closed object's children are
// made the first time it opens, long strings and long arrays are cut with
// a "show more" button, so a run's megabyte outputs cost nothing until
// looked at.

import {h} from './dom.js';

const STR_CUT = 300;
const PAGE = 100;

// open: how many levels start opened.
export function jsonTree(value, open = 2) {
  const root = h('div', {class: 'json', testid: 'json-tree'});
  root.append(node(null, value, open));
  return root;
}

function node(key, v, open) {
  const label = key === null ? null : h('span', {class: 'jkey'}, key + ': ');
  if (v === null || typeof v !== 'object') return h('div', {class: 'jrow'}, label, scalar(v));
  const isArr = Array.isArray(v);
  const keys = isArr ? null : Object.keys(v);
  const n = isArr ? v.length : keys.length;
  const summary = h('summary', null, label, h('span', {class: 'jmeta'}, isArr ? `[${n}]` : `{${n}}`));
  if (!n) return h('div', {class: 'jrow'}, label, h('span', {class: 'jmeta'}, isArr ? '[]' : '{}'));
  const box = h('div', {class: 'jkids'});
  const d = h('details', {class: 'jnode'}, summary, box);
  let shown = 0;
  const more = h('button', {type: 'button', class: 'link jmore', onclick: () => page()});
  const page = () => {
    more.remove();
    const end = Math.min(n, shown + PAGE);
    for (; shown < end; shown++) box.append(isArr ? node(String(shown), v[shown], open - 1) : node(keys[shown], v[keys[shown]], open - 1));
    if (shown < n) { more.textContent = `show ${Math.min(PAGE, n - shown)} more of ${n - shown}`; box.append(more); }
  };
  d.addEventListener('toggle', () => { if (d.open && !shown) page(); });
  if (open > 0) d.open = true;
  return d;
}

function scalar(v) {
  if (typeof v !== 'string') return h('span', {class: 'jv ' + (v === null ? 'jnull' : typeof v)}, String(v));
  // Quoted but not escaped: a model's multi-line answer stays readable.
  if (v.length <= STR_CUT) return h('span', {class: 'jv jstr'}, `"${v}"`);
  const span = h('span', {class: 'jv jstr'}, `"${v.slice(0, STR_CUT)}…`);
  const btn = h('button', {type: 'button', class: 'link jmore', onclick: () => {
    span.textContent = `"${v}"`;
    btn.remove();
  }}, `show more (${v.length.toLocaleString()} chars)`);
  return h('span', null, span, ' ', btn);
}
