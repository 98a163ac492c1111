// The live trace of one run (#/runs/ID): a header, a timeline with one row
// per node execution, a detail panel, the outputs and the graph.  Events
// change only the rows they concern, as they arrive; the one per-frame job
// is growing the bars of running nodes.

import {get, request, enc, startRun, apps} from './api.js';
import {h, fill, chip, fmtDur, fmtTime, shortId, errorBox, toast, loading} from './dom.js';
import {follow} from './sse.js';
import {jsonTree} from './json.js';
import {md} from './md.js';
import {findFiles, artifactList} from './files.js';
import {graphView} from './graph.js';

const CONTAINERS = new Set(['iteration', 'loop']);

export function traceView(main, runId, signal) {
  new Trace(main, runId, signal);
}

class Trace {
  constructor(main, runId, signal) {
    this.runId = runId;
    this.signal = signal;
    this.execs = new Map(); // execution id -> exec
    this.byNode = new Map(); // node id -> [exec], for the graph
    this.running = new Set();
    this.pendingLogs = new Map(); // agent_log before its node_started
    this.run = {status: null, appId: null, record: null, tokens: 0, price: 0, currency: '', steps: 0};
    this.finished = false;
    this.selected = null;
    this.maxEnd = 0;
    this.clock = {base: 0, at: performance.now(), started: false};
    this.frame = 0;
    this.build(main);

    this.recordP = this.loadRecord();
    this.recordP.then((r) => {
      this.run.record = r;
      this.setApp(r.workflow_id);
      if (!this.run.status) this.header();
    }, (e) => {
      if (e.name === 'AbortError') return;
      if (e.status === 404) fill(main, errorBox(`No such run: ${runId}`));
      else this.conn.replaceChildren(errorBox(e.message));
    });
    this.follow();
  }

  // A run started a moment ago may not be stored yet: a 404 is asked
  // again a few times before it means "no such run".
  async loadRecord() {
    for (let i = 0; ; i++) {
      try {
        return await get(`/admin/runs/${enc(this.runId)}`, {signal: this.signal});
      } catch (e) {
        if (e.status !== 404 || i >= 8) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  follow() {
    follow(this.runId, {
      event: (name, data) => this.on(name, data),
      state: (st, err, retry) => this.connState(st, err, retry),
      finished: () => this.finished || this.streamError,
      ended: () => this.settleFromRecord(),
    }, this.signal).finally(() => {
      // The stream reported an error: the run may go on; wait for its end.
      if (this.streamError && !this.finished && !this.signal.aborted) this.poll();
    });
  }

  build(main) {
    this.statusChip = chip('running');
    this.appLink = h('span', {class: 'muted'});
    this.stats = h('dl', {class: 'stats'});
    this.stopBtn = h('button', {type: 'button', class: 'danger', testid: 'run-stop', onclick: () => this.stop()}, 'Stop');
    this.rerunBtn = h('button', {type: 'button', testid: 'run-rerun', onclick: () => this.rerun()}, 'Re-run');
    this.conn = h('div', {class: 'conn', 'aria-live': 'polite'});
    this.errorEl = h('div');
    this.timeline = h('div', {class: 'timeline', role: 'list'});
    this.axis = h('div', {class: 'axis'}, h('span', null, '0'), h('span', {class: 'axis-end'}));
    this.detail = h('aside', {class: 'detail', testid: 'node-detail', 'aria-live': 'polite'},
      h('p', {class: 'muted'}, 'Select a node to see its inputs, outputs and logs.'));
    this.outputs = h('div', null, loading('Waiting for the run to end…'));
    this.answer = h('div', {class: 'answer', hidden: true});
    this.graphBox = h('div', null, loading('Loading the graph…'));
    this.root = h('section', {class: 'trace', testid: 'trace', 'data-run-id': this.runId},
      h('header', {class: 'trace-head'},
        h('div', {class: 'title-line'}, h('h1', null, 'Run ', h('code', null, shortId(this.runId))), this.statusChip, this.appLink),
        this.stats,
        h('div', {class: 'actions'}, this.stopBtn, this.rerunBtn),
        this.conn),
      this.errorEl,
      h('div', {class: 'trace-main'},
        h('section', {class: 'panel tl-pane'}, h('h2', null, 'Timeline'), this.axis, this.timeline),
        this.detail),
      h('section', {class: 'panel'}, h('h2', null, 'Outputs'), this.answer, this.outputs),
      h('section', {class: 'panel'}, h('h2', null, 'Graph'), this.graphBox));
    this.timeline.addEventListener('click', (e) => this.onTimelineClick(e));
    fill(main, this.root);
    this.header();
  }

  // The run's time now, in seconds since it started, as far as the client
  // can tell: the latest event time plus the time since it was read.
  now() {
    if (this.finished) return this.run.elapsed ?? this.maxEnd;
    return this.clock.base + (performance.now() - this.clock.at) / 1000;
  }

  saw(t) {
    if (t > this.maxEnd) this.maxEnd = t;
    if (!this.finished && t > this.now()) { this.clock.base = t; this.clock.at = performance.now(); }
  }

  on(name, d) {
    switch (name) {
      case 'workflow_started':
        this.setApp(d.workflow_id);
        this.run.status = 'running';
        this.clock.started = true;
        this.header();
        break;
      case 'node_started': this.nodeStarted(d); break;
      case 'node_finished': this.nodeFinished(d); break;
      case 'node_retry': this.nodeRetry(d); break;
      case 'iteration_next': case 'loop_next': {
        const c = this.execs.get(d.id) || this.lastOf(d.node_id);
        if (c) { c.current = d.index; this.round(c, d.index); }
        break;
      }
      case 'iteration_started': case 'loop_started': {
        const c = this.execs.get(d.id);
        if (c && d.metadata) c.meta = d.metadata;
        break;
      }
      case 'text_chunk': this.text(d.text); break;
      case 'message': this.text(d.answer); break;
      case 'agent_log': this.agentLog(d); break;
      case 'workflow_finished': this.workflowFinished(d); break;
      case 'error':
        this.streamError = true;
        this.conn.replaceChildren(errorBox('The event stream ended with an error: ' + (d.message || d.code || 'unknown')));
        break;
    }
    this.schedule();
  }

  setApp(appId) {
    if (!appId || this.run.appId) return;
    this.run.appId = appId;
    apps().then((list) => {
      const a = list.find((x) => x.id === appId);
      fill(this.appLink, 'of ', h('a', {href: `#/apps/${enc(appId)}`}, a ? a.name : shortId(appId)));
    }, () => fill(this.appLink, 'of ', h('a', {href: `#/apps/${enc(appId)}`}, shortId(appId))));
    get(`/admin/apps/${enc(appId)}/graph`, {signal: this.signal}).then((g) => {
      this.graph = graphView(g, {live: true, onNode: (id) => { const x = this.lastOf(id); if (x) this.select(x); }});
      fill(this.graphBox, this.graph.el);
      this.graphDirty = true;
      this.schedule();
    }, (e) => { if (e.name !== 'AbortError') fill(this.graphBox, errorBox('No graph: ' + e.message)); });
  }

  lastOf(nodeId) {
    const list = this.byNode.get(nodeId);
    return list && list[list.length - 1];
  }

  exec(d) {
    let x = this.execs.get(d.id);
    if (x) return x;
    x = {id: d.id, node_id: d.node_id, node_type: d.node_type, title: d.title, status: 'running', start: null, elapsed: null,
      logs: new Map(), retries: []};
    this.execs.set(d.id, x);
    const list = this.byNode.get(d.node_id);
    if (list) list.push(x); else this.byNode.set(d.node_id, [x]);
    x.iteration_id = d.iteration_id || null;
    x.loop_id = d.loop_id || null;
    x.index = d.iteration_index ?? d.loop_index ?? null;
    x.start = d.start_offset ?? (d.elapsed_time != null ? Math.max(0, this.now() - d.elapsed_time) : this.now());
    this.saw(x.start);
    this.addRow(x);
    const early = this.pendingLogs.get(d.id);
    if (early) { for (const l of early) x.logs.set(l.id, l); this.pendingLogs.delete(d.id); }
    return x;
  }

  nodeStarted(d) {
    const x = this.exec(d);
    x.started = d;
    x.inputs = d.inputs;
    this.running.add(x);
    this.graphDirty = true;
  }

  nodeFinished(d) {
    const x = this.exec(d);
    Object.assign(x, {status: d.status || 'succeeded', inputs: d.inputs ?? x.inputs, process_data: d.process_data, outputs: d.outputs,
      error: d.error, elapsed: d.elapsed_time ?? 0, meta: {...x.meta, ...d.execution_metadata}, finished: d});
    this.running.delete(x);
    this.saw(x.start + x.elapsed);
    const m = d.execution_metadata || {};
    if (!this.finished) {
      this.run.tokens += +m.total_tokens || 0;
      this.run.price += +m.total_price || 0;
      if (m.currency) this.run.currency = m.currency;
      this.run.steps++;
      this.header();
    }
    this.paintRow(x);
    this.graphDirty = true;
    if (this.selected === x) this.renderDetail();
  }

  nodeRetry(d) {
    const x = this.execs.get(d.id) || this.lastOf(d.node_id);
    if (!x) return;
    x.retries.push({index: d.retry_index, error: d.error, elapsed: d.elapsed_time});
    this.paintRow(x);
    if (this.selected === x) this.renderDetail();
  }

  agentLog(d) {
    const x = this.execs.get(d.node_execution_id) || (!d.node_execution_id && this.lastOf(d.node_id));
    if (!x) {
      const early = this.pendingLogs.get(d.node_execution_id) || [];
      early.push(d);
      this.pendingLogs.set(d.node_execution_id, early);
      return;
    }
    x.logs.set(d.id, d); // a later log with the same id (its end) replaces it
    if (this.selected === x && this.stepsEl) {
      const old = this.stepEls.get(d.id), el = stepEl(d);
      this.stepEls.set(d.id, el);
      if (old) old.replaceWith(el); else this.stepsEl.append(el);
    }
  }

  text(t) {
    if (!t) return;
    if (this.answer.hidden) {
      this.answer.hidden = false;
      this.answerText = h('div', {class: 'stream'});
      fill(this.answer, h('h3', null, 'Streamed answer'), this.answerText);
    }
    this.answerText.append(t);
  }

  workflowFinished(d) {
    this.finished = true;
    Object.assign(this.run, {status: d.status || 'succeeded', outputs: d.outputs, error: d.error, elapsed: d.elapsed_time ?? this.maxEnd});
    if (d.total_tokens != null) this.run.tokens = d.total_tokens;
    if (d.total_steps != null) this.run.steps = d.total_steps;
    this.settle();
  }

  // The record says how a run ended when its events do not (the stream
  // closed early, or ended with an error): true when it has ended.
  async settleFromRecord() {
    const r = await get(`/admin/runs/${enc(this.runId)}`, {signal: this.signal});
    this.run.record = r;
    if (r.status === 'running' || this.finished) return this.finished;
    this.finished = true;
    Object.assign(this.run, {status: r.status, outputs: r.outputs, error: r.error, elapsed: r.elapsed_time ?? this.maxEnd,
      tokens: r.total_tokens ?? this.run.tokens, steps: r.total_steps ?? this.run.steps});
    this.settle();
    return true;
  }

  async poll() {
    while (!this.signal.aborted && !(await this.settleFromRecord().catch(() => false))) {
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  // The run has ended: rows still running did not finish.
  settle() {
    for (const x of this.running) { x.status = 'stopped'; x.elapsed = this.now() - x.start; this.paintRow(x); }
    this.running.clear();
    this.header();
    this.renderOutputs();
    this.graphDirty = true;
    this.schedule();
    if (!this.selected) {
      const bad = [...this.execs.values()].find((x) => x.status === 'failed');
      if (bad) this.select(bad);
    }
  }

  // ---- rendering ----

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => this.tick());
  }

  // Once a frame: the time scale, the bars of running nodes, the graph.
  tick() {
    this.frame = 0;
    if (this.signal.aborted || !this.root.isConnected) return;
    const now = this.now();
    const total = Math.max(1e-6, this.finished ? Math.max(this.run.elapsed || 0, this.maxEnd) : Math.max(now, this.maxEnd));
    this.timeline.style.setProperty('--total', total);
    this.axis.lastChild.textContent = fmtDur(total);
    for (const x of this.running) {
      const d = Math.max(0, now - x.start);
      x.bar.style.setProperty('--d', d);
      x.dur.textContent = fmtDur(d);
    }
    if (!this.finished && this.clock.started) this.elapsedEl.textContent = fmtDur(now);
    if (this.graph && this.graphDirty) {
      this.graphDirty = false;
      this.graph.update(this.byNode, this.finished);
    }
    if (!this.finished && (this.running.size || this.clock.started)) this.schedule();
  }

  header() {
    const r = this.run, rec = r.record || {};
    const status = r.status || (rec.status === 'running' ? 'running' : null);
    if (status) this.root.dataset.status = status;
    this.statusChip.textContent = status || 'loading';
    this.statusChip.dataset.status = status || 'pending';
    this.elapsedEl = h('dd', null, fmtDur(this.finished ? r.elapsed : this.now()));
    const cost = r.price ? `${r.price.toFixed(r.price < 0.01 ? 6 : 4)} ${r.currency}` : '—';
    const stat = (k, v) => h('div', null, h('dt', null, k), v instanceof Node ? v : h('dd', null, v));
    fill(this.stats,
      stat('Elapsed', this.elapsedEl),
      stat('Tokens', String(r.tokens || 0)),
      stat('Cost', cost),
      stat('Steps', String(r.steps || 0)),
      rec.created_at ? stat('Started', fmtTime(rec.created_at)) : null,
      rec.user ? stat('User', rec.user) : null);
    this.stopBtn.hidden = this.finished || status !== 'running';
    fill(this.errorEl, this.finished && r.error
      ? h('div', {class: 'errbox big', role: 'alert'}, h('strong', null, `Run ${r.status}: `), h('span', {testid: 'run-error'}, String(r.error)))
      : null);
  }

  connState(st, err, retry) {
    if (st === 'failed' && err && err.status === 404 && !this.refollowed) {
      // Not stored yet (see loadRecord): follow again once the record is in.
      this.refollowed = true;
      this.recordP.then(() => this.follow(), () => {});
      return;
    }
    if (st === 'live' || st === 'done') { if (!this.streamError) this.conn.replaceChildren(); return; }
    if (st === 'reconnecting') { fill(this.conn, h('span', {class: 'reconnecting', role: 'status'}, 'reconnecting…')); return; }
    fill(this.conn, errorBox('Lost the event stream: ' + (err ? err.message : 'unknown error'),
      retry ? h('button', {type: 'button', onclick: () => { fill(this.conn, h('span', {class: 'reconnecting'}, 'reconnecting…')); retry(); }}, 'Retry') : null));
  }

  addRow(x) {
    const depthOf = (c) => (c ? c.depth + 1 : 0);
    const cid = x.iteration_id || x.loop_id;
    const c = cid ? this.lastOf(cid) : null;
    x.depth = depthOf(c && c !== x ? c : null);
    x.bar = h('div', {class: 'bar'});
    x.dur = h('span', {class: 'dur'});
    x.badge = h('span', {class: 'retries'});
    const container = CONTAINERS.has(x.node_type);
    x.row = h('div', {class: 'tl-row', role: 'listitem', testid: 'trace-row', 'data-node-id': x.node_id, 'data-exec-id': x.id},
      h('div', {class: 'tl-label'},
        container ? h('button', {type: 'button', class: 'tl-toggle', 'aria-expanded': 'true', 'aria-label': 'collapse rounds'}, '▾') : null,
        h('button', {type: 'button', class: 'tl-name'}, h('span', {class: 'ttl'}, x.title || x.node_id), h('span', {class: 'ntype'}, x.node_type)),
        x.badge),
      h('div', {class: 'track'}, x.bar),
      x.dur);
    x.row.style.setProperty('--depth', x.depth);
    x.bar.style.setProperty('--s', x.start);
    this.paintRow(x);
    if (container) {
      x.kids = h('div', {class: 'tl-kids'});
      x.rounds = new Map();
    }
    let parent = this.timeline;
    if (c && c !== x && c.kids) parent = this.round(c, x.index ?? c.current ?? 0);
    parent.append(x.row);
    if (x.kids) parent.append(x.kids);
  }

  // The rows of round `index` of container c, made on first use, in order.
  round(c, index) {
    if (!c.rounds) return this.timeline;
    let r = c.rounds.get(index);
    if (r) return r;
    const head = h('div', {class: 'tl-round-head'}, `${c.node_type === 'loop' ? 'loop' : 'iteration'} #${index}`);
    head.style.setProperty('--depth', c.depth + 1);
    r = h('div', {class: 'tl-round', 'data-index': index}, head);
    c.rounds.set(index, r);
    const next = [...c.rounds.keys()].filter((k) => k > index).sort((a, b) => a - b)[0];
    c.kids.insertBefore(r, next === undefined ? null : c.rounds.get(next));
    return r;
  }

  paintRow(x) {
    x.row.dataset.status = x.status;
    x.row.classList.toggle('selected', this.selected === x);
    if (x.elapsed != null) {
      x.bar.style.setProperty('--d', x.elapsed);
      x.dur.textContent = fmtDur(x.elapsed);
    }
    x.badge.textContent = x.retries.length ? `↻${x.retries.length}` : '';
  }

  onTimelineClick(e) {
    const row = e.target.closest('.tl-row');
    if (!row) return;
    const x = this.execs.get(row.dataset.execId);
    if (!x) return;
    if (e.target.closest('.tl-toggle')) {
      const btn = e.target.closest('.tl-toggle'), open = btn.getAttribute('aria-expanded') !== 'true';
      btn.setAttribute('aria-expanded', String(open));
      btn.setAttribute('aria-label', open ? 'collapse rounds' : 'expand rounds');
      btn.textContent = open ? '▾' : '▸';
      x.kids.hidden = !open;
      return;
    }
    this.select(x);
  }

  select(x) {
    const prev = this.selected;
    this.selected = x;
    if (prev) this.paintRow(prev);
    this.paintRow(x);
    this.renderDetail();
    if (matchMedia('(max-width: 900px)').matches) this.detail.scrollIntoView({block: 'start'});
  }

  renderDetail() {
    const x = this.selected, m = x.meta || {};
    const files = findFiles(x.outputs);
    this.stepEls = new Map();
    this.stepsEl = null;
    const steps = [...x.logs.values()];
    if (steps.length || x.node_type === 'agent') {
      this.stepsEl = h('div', {class: 'steps'});
      for (const l of steps) { const el = stepEl(l); this.stepEls.set(l.id, el); this.stepsEl.append(el); }
    }
    const kv = (k, v) => (v == null || v === '' ? null : [h('dt', null, k), h('dd', null, String(v))]);
    fill(this.detail,
      h('div', {class: 'title-line'}, h('h2', null, x.title || x.node_id), chip(x.status)),
      h('dl', {class: 'kv'},
        kv('Type', x.node_type), kv('Node', x.node_id), kv('Execution', x.id),
        kv('Started at', x.start != null ? '+' + fmtDur(x.start) : null), kv('Elapsed', x.elapsed != null ? fmtDur(x.elapsed) : 'running'),
        kv('Tokens', m.total_tokens || null), kv('Cost', m.total_price ? `${m.total_price} ${m.currency || ''}` : null),
        kv('Round', x.index), kv('Rounds', m.iterator_length), kv('Retries', x.retries.length || null)),
      x.error ? h('div', {class: 'errbox', role: 'alert'}, h('span', {testid: 'run-error'}, String(x.error))) : null,
      x.retries.map((r) => h('div', {class: 'errbox soft'}, `retry ${r.index ?? ''}: ${r.error ?? ''}`)),
      this.stepsEl ? [h('h3', null, 'Agent steps'), steps.length ? this.stepsEl : h('p', {class: 'muted'}, 'No steps yet.')] : null,
      files.length && this.run.appId ? [h('h3', null, 'Files'), artifactList(files, this.run.appId)] : null,
      section('Inputs', x.inputs), section('Process data', x.process_data), section('Outputs', x.outputs));
  }

  renderOutputs() {
    const r = this.run;
    const files = findFiles(r.outputs);
    fill(this.outputs,
      r.outputs && Object.keys(r.outputs).length ? jsonTree(r.outputs, 2) : h('p', {class: 'muted', testid: 'empty'}, 'No outputs.'),
      files.length && r.appId ? [h('h3', null, 'Files'), artifactList(files, r.appId)] : null);
  }

  async stop() {
    this.stopBtn.disabled = true;
    try {
      const r = await request('POST', `/admin/runs/${enc(this.runId)}/stop`);
      toast(r && r.stopped === false ? 'The run had already ended.' : 'Stopping the run…');
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      this.stopBtn.disabled = false;
    }
  }

  async rerun() {
    this.rerunBtn.disabled = true;
    try {
      const r = await get(`/admin/runs/${enc(this.runId)}`);
      const inputs = {...(r.inputs || {})};
      // the same user too: its file inputs are kept per user
      const body = r.user ? {inputs, user: r.user} : {inputs};
      // A chat turn runs again as a new conversation with the same query.
      for (const k of Object.keys(inputs)) if (k.startsWith('sys.')) delete inputs[k];
      const query = r.query ?? (r.inputs || {})['sys.query'];
      if (query != null) body.query = query;
      else if ((await apps()).find((a) => a.id === r.workflow_id)?.mode === 'advanced-chat') {
        // The run's record does not keep a chat turn's query: ask it anew.
        toast('A chat turn runs again from the chat: send the message there.');
        location.hash = `#/apps/${enc(r.workflow_id)}/run`;
        return;
      }
      const run = await startRun(r.workflow_id, body);
      location.hash = `#/runs/${enc(run.id)}`;
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      this.rerunBtn.disabled = false;
    }
  }
}

function section(title, v) {
  if (v == null || (typeof v === 'object' && !Object.keys(v).length)) return null;
  return h('div', {class: 'jsection'}, h('h3', null, title), jsonTree(v, 1));
}

// One agent_log entry: a round (the model's text and the calls it asked
// for) or a tool call (its input, a `command` shown as code, its output).
function stepEl(l) {
  const d = l.data && typeof l.data === 'object' ? l.data : {};
  const m = l.metadata || {};
  const call = /^CALL\b/.test(l.label || '') || d.tool_name != null;
  const failed = l.status === 'error' || l.status === 'failed';
  const head = h('div', {class: 'step-head'},
    h('strong', null, l.label || (call ? 'CALL' : 'ROUND')),
    l.status ? h('span', {class: 'muted'}, l.status) : null,
    m.elapsed_time != null ? h('span', {class: 'muted'}, fmtDur(+m.elapsed_time)) : null,
    m.total_tokens ? h('span', {class: 'muted'}, `${m.total_tokens} tokens`) : null);
  const body = [];
  if (call) {
    const input = d.tool_input;
    if (input && typeof input === 'object' && typeof input.command === 'string') {
      body.push(h('pre', {class: 'code'}, input.command));
      const rest = {...input};
      delete rest.command;
      if (Object.keys(rest).length) body.push(jsonTree(rest, 1));
    } else if (typeof input === 'string') body.push(h('pre', {class: 'code'}, input));
    else if (input != null) body.push(jsonTree(input, 1));
    if (d.output != null) body.push(h('div', {class: 'muted small'}, 'output'),
      typeof d.output === 'string' ? h('pre', {class: 'out'}, d.output) : jsonTree(d.output, 1));
  } else {
    if (d.text) body.push(md(d.text));
    const calls = Array.isArray(d.tool_calls) ? d.tool_calls : [];
    if (calls.length) body.push(h('div', {class: 'muted small'}, 'calls: ' + calls.map((c) => c && (c.name || c.tool_name || (c.function && c.function.name)) || '?').join(', ')));
  }
  const err = l.error || d.error;
  if (err) body.push(h('div', {class: 'errbox'}, String(err)));
  return h('div', {class: 'step' + (failed ? ' err' : '') + (l.parent_id ? ' sub' : ''), testid: 'agent-step', 'data-label': l.label || '', 'data-status': l.status || ''},
    head, ...body);
}
