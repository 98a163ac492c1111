// An app's graph as read-only SVG, at the DSL's positions (children of an
// iteration or loop are placed relative to their container, as in Dify),
// or laid out in columns when the DSL has none.  During and after a run,
// nodes take their status and edges show whether they were taken.

import {h} from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 200, H = 56, HEAD = 36, PAD = 24, GAP_X = 70, GAP_Y = 28;

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const k in attrs || {}) if (attrs[k] != null) el.setAttribute(k, attrs[k]);
  for (const k of kids) if (k != null) el.append(k);
  return el;
}

// g: GET /admin/apps/ID/graph.  opts.onNode(nodeId): a node was clicked.
// Returns {el, update(execsByNode, finished)}.
export function graphView(g, opts = {}) {
  const nodes = new Map();
  // Canvas notes (no type) are not part of the graph.
  for (const n of (g.nodes || []).filter((x) => x.type && x.type !== 'custom-note')) {
    nodes.set(n.id, {...n, kids: [], w: +n.width || (isStart(n) ? 44 : W), h: +n.height || (isStart(n) ? 44 : H)});
  }
  for (const n of nodes.values()) if (n.parent_id && nodes.has(n.parent_id)) nodes.get(n.parent_id).kids.push(n);
  const top = [...nodes.values()].filter((n) => !n.parent_id || !nodes.has(n.parent_id));
  const edges = (g.edges || []).filter((e) => nodes.has(e.source) && nodes.has(e.target));

  const positioned = [...nodes.values()].some((n) => Number.isFinite(n.x) && Number.isFinite(n.y) && (n.x || n.y));
  if (!positioned) layout(top, edges);
  for (const n of top) place(n, 0, 0);

  // Containers first, outer before inner, then edges, then the other nodes.
  const depth = (n) => (n.parent_id && nodes.has(n.parent_id) ? 1 + depth(nodes.get(n.parent_id)) : 0);
  const all = [...nodes.values()];
  const boxes = all.filter((n) => n.kids.length).sort((a, b) => depth(a) - depth(b));
  const plain = all.filter((n) => !n.kids.length);

  const gNodes = new Map();
  const nodeEl = (n) => {
    const el = s('g', {class: 'gnode' + (n.kids.length ? ' container' : ''), 'data-testid': 'graph-node', 'data-node-id': n.id,
      'data-status': 'idle', transform: `translate(${n.ax},${n.ay})`, tabindex: opts.onNode ? 0 : null, role: opts.onNode ? 'button' : null},
    s('title', null, `${n.title || n.id} (${n.type})`),
    s('rect', {width: n.w, height: n.h, rx: 8}),
    n.w > 60 ? s('text', {x: 10, y: 22, class: 'gtitle'}, clip(n.title || n.id, n.w)) : null,
    n.w > 60 ? s('text', {x: 10, y: 40, class: 'gtype'}, clip(n.type, n.w)) : null);
    if (opts.onNode) {
      el.addEventListener('click', () => opts.onNode(n.id));
      el.addEventListener('keydown', (e) => { if (e.key === 'Enter') opts.onNode(n.id); });
    }
    gNodes.set(n.id, el);
    return el;
  };
  const gEdges = edges.map((e) => {
    const a = nodes.get(e.source), b = nodes.get(e.target);
    const x1 = a.ax + a.w, y1 = a.ay + a.h / 2, x2 = b.ax, y2 = b.ay + b.h / 2;
    const dx = Math.max(40, Math.abs(x2 - x1) / 2);
    const handle = e.source_handle && e.source_handle !== 'source' ? String(e.source_handle) : '';
    const el = s('g', {class: 'gedge', 'data-testid': 'graph-edge', 'data-source': e.source, 'data-target': e.target, 'data-taken': 'false'},
      s('path', {d: `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`}),
      handle ? s('text', {x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 5, class: 'ghandle', 'text-anchor': 'middle'}, clip(handle, 90)) : null);
    return {e, el, handle};
  });

  const xs = all.flatMap((n) => [n.ax, n.ax + n.w]), ys = all.flatMap((n) => [n.ay, n.ay + n.h]);
  const lo = (v) => (v.length ? Math.min(...v) : 0), hi = (v) => (v.length ? Math.max(...v) : 100);
  const x0 = lo(xs) - PAD, y0 = lo(ys) - PAD;
  const vw = hi(xs) - x0 + PAD, vh = hi(ys) - y0 + PAD;
  const svg = s('svg', {class: 'graph' + (opts.live ? ' live' : ''), 'data-testid': 'graph', viewBox: `${x0} ${y0} ${vw} ${vh}`,
    role: 'img', 'aria-label': `graph of ${g.name || 'the app'}`, preserveAspectRatio: 'xMidYMin meet'},
  s('g', null, ...boxes.map(nodeEl)), s('g', null, ...gEdges.map((x) => x.el)), s('g', null, ...plain.map(nodeEl)));
  // Never blown up past 1:1; on a phone, scrolled rather than shrunk to nothing.
  svg.style.maxWidth = vw + 'px';
  svg.style.minWidth = Math.min(vw, Math.max(720, vw * 0.6)) + 'px';
  const el = h('div', {class: 'graphwrap'}, all.length ? svg : h('p', {class: 'muted', testid: 'empty'}, 'This app has no nodes.'));

  // execsByNode: Map node_id -> [{status, outputs}], finished: the run ended.
  function update(execsByNode, finished) {
    for (const [id, el] of gNodes) el.setAttribute('data-status', nodeStatus(execsByNode.get(id), finished));
    for (const {e, el, handle} of gEdges) {
      const from = execsByNode.get(e.source) || [], to = execsByNode.get(e.target) || [];
      const taken = to.length > 0 && from.some((x) => tookHandle(x, handle));
      el.setAttribute('data-taken', String(taken));
    }
  }
  return {el, update};
}

const isStart = (n) => n.type === 'iteration-start' || n.type === 'loop-start';
const clip = (t, w) => { const max = Math.max(4, Math.floor((w - 16) / 7)); t = String(t ?? ''); return t.length > max ? t.slice(0, max - 1) + '…' : t; };

// Absolute positions: a child's x, y are relative to its container.
function place(n, px, py) {
  n.ax = px + (+n.x || 0);
  n.ay = py + (+n.y || 0);
  for (const k of n.kids) place(k, n.ax, n.ay);
}

const STATUS_ORDER = ['running', 'failed', 'exception', 'stopped', 'succeeded'];
function nodeStatus(execs, finished) {
  if (!execs || !execs.length) return finished ? 'skipped' : 'pending';
  for (const st of STATUS_ORDER) if (execs.some((x) => x.status === st)) return st;
  return execs[execs.length - 1].status || 'running';
}

// Whether a finished execution of an edge's source went out by its handle:
// if-else and question classifiers name the case they picked, and a node
// with a fail branch leaves by it when it failed.
function tookHandle(x, handle) {
  if (x.status !== 'succeeded' && x.status !== 'exception') return false;
  if (handle === 'fail-branch') return x.status === 'exception';
  if (handle === 'success-branch') return x.status === 'succeeded';
  const o = x.outputs || {};
  if (handle && o.selected_case_id != null) return String(o.selected_case_id) === handle;
  if (handle && o.class_id != null) return String(o.class_id) === handle;
  return true;
}

// Columns by longest path from the scope's first nodes; containers get the
// size of their laid-out children.  Sets x, y (relative), w, h.
function layout(scope, edges) {
  const ids = new Set(scope.map((n) => n.id));
  for (const n of scope) if (n.kids.length) {
    layout(n.kids, edges);
    const right = Math.max(...n.kids.map((k) => k.x + k.w)), bottom = Math.max(...n.kids.map((k) => k.y + k.h));
    n.w = Math.max(W, right + PAD);
    n.h = Math.max(H, bottom + PAD);
  }
  const out = new Map(scope.map((n) => [n.id, []])), indeg = new Map(scope.map((n) => [n.id, 0]));
  for (const e of edges) if (ids.has(e.source) && ids.has(e.target) && e.source !== e.target) {
    out.get(e.source).push(e.target);
    indeg.set(e.target, indeg.get(e.target) + 1);
  }
  const rank = new Map(scope.map((n) => [n.id, 0]));
  const queue = scope.filter((n) => !indeg.get(n.id)).map((n) => n.id);
  for (let i = 0; i < queue.length; i++) {
    for (const t of out.get(queue[i])) {
      rank.set(t, Math.max(rank.get(t), rank.get(queue[i]) + 1));
      indeg.set(t, indeg.get(t) - 1);
      if (!indeg.get(t)) queue.push(t);
    }
  }
  const cols = [];
  for (const n of scope) (cols[rank.get(n.id)] ||= []).push(n);
  let x = scope[0] && scope[0].parent_id ? PAD : 0;
  for (const col of cols) {
    if (!col) continue;
    let y = scope[0] && scope[0].parent_id ? HEAD + 8 : 0;
    for (const n of col) { n.x = x; n.y = y; y += n.h + GAP_Y; }
    x += Math.max(...col.map((n) => n.w)) + GAP_X;
  }
}
