// Running an app (#/apps/ID/run): a form made from the app's start
// variables for workflows, a chat for chatflows (mode advanced-chat).

import {get, request, enc, apps, startRun} from './api.js';
import {h, fill, chip, fmtTime, loading, empty, errorBox} from './dom.js';
import {follow} from './sse.js';
import {md} from './md.js';

export async function runPage(main, appId, signal) {
  fill(main, loading());
  const base = `/admin/apps/${enc(appId)}`;
  let app, params;
  try {
    [app, params] = await Promise.all([apps().then((l) => l.find((a) => a.id === appId)), get(`${base}/v1/parameters`, {signal})]);
  } catch (e) {
    if (e.name !== 'AbortError') fill(main, errorBox(e.status === 404 ? `No such app: ${appId}` : e.message));
    return;
  }
  if (signal.aborted) return;
  if (!app) { fill(main, errorBox(`No such app: ${appId}`)); return; }
  const form = inputsForm(params.user_input_form || [], appId);
  const head = h('div', {class: 'page-head'}, h('h1', null, app.name), chip(app.mode),
    h('a', {href: `#/apps/${enc(appId)}`}, 'App details'));
  if (app.mode === 'advanced-chat') chatView(main, app, params, form, head, signal);
  else workflowForm(main, app, form, head);
}

function workflowForm(main, app, form, head) {
  const status = h('div', {'aria-live': 'polite'});
  const submit = h('button', {type: 'submit', class: 'primary', testid: 'run-submit'}, 'Run');
  const el = h('form', {class: 'panel runform', testid: 'run-form', onsubmit: async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      fill(status, h('p', {class: 'muted', testid: 'loading'}, 'Starting…'));
      const inputs = await form.values((what) => fill(status, h('p', {class: 'muted', testid: 'loading'}, what)));
      const r = await startRun(app.id, {inputs});
      location.hash = `#/runs/${enc(r.id)}`;
    } catch (err) {
      fill(status, errorBox(err.message));
      submit.disabled = false;
    }
  }}, form.fields.length ? form.fields : h('p', {class: 'muted'}, 'This app takes no inputs.'), status, h('div', {class: 'actions'}, submit));
  fill(main, h('section', null, head, el));
  const first = el.querySelector('input, textarea, select');
  if (first) first.focus();
}

// The inputs of a Dify start node: user_input_form entries are
// {TYPE: {variable, label, required, max_length, options, default, ...}}.
// values() uploads the files and answers the inputs object.
function inputsForm(spec, appId) {
  const fields = [], readers = [];
  for (const entry of spec) {
    const type = Object.keys(entry || {})[0];
    const f = entry[type] || {};
    if (!f.variable) continue;
    const label = f.label || f.variable;
    const common = {testid: 'run-input', 'data-var': f.variable, name: f.variable, id: 'in-' + f.variable, required: !!f.required && type !== 'checkbox'};
    let input, read;
    if (type === 'paragraph' || type === 'json_object') {
      input = h('textarea', {...common, rows: type === 'json_object' ? 6 : 4, maxlength: f.max_length || null,
        placeholder: type === 'json_object' ? '{ }' : null, class: type === 'json_object' ? 'mono' : null},
      f.default != null ? (typeof f.default === 'string' ? f.default : JSON.stringify(f.default, null, 2)) : null);
      read = type === 'paragraph' ? () => input.value || undefined : () => {
        if (!input.value.trim()) return undefined;
        try { return JSON.parse(input.value); } catch (e) { throw new Error(`${label}: not valid JSON (${e.message})`); }
      };
    } else if (type === 'select') {
      const options = (f.options || []).map((o) => String(o));
      input = h('select', {...common, value: f.default ?? (f.required ? options[0] : '')},
        f.required ? null : h('option', {value: ''}, '—'), options.map((o) => h('option', {value: o}, o)));
      read = () => input.value || undefined;
    } else if (type === 'number') {
      input = h('input', {...common, type: 'number', step: 'any', value: f.default ?? null});
      read = () => (input.value === '' ? undefined : Number(input.value));
    } else if (type === 'checkbox') {
      input = h('input', {...common, type: 'checkbox'});
      input.checked = !!f.default;
      read = () => input.checked;
    } else if (type === 'file' || type === 'file-list') {
      const exts = (f.allowed_file_extensions || []).filter((x) => /^\.?\w+$/.test(x)).map((x) => (x[0] === '.' ? x : '.' + x));
      input = h('input', {...common, type: 'file', multiple: type === 'file-list',
        accept: (f.allowed_file_types || []).includes('custom') && exts.length ? exts.join(',') : null});
      read = async (progress) => {
        const files = [...input.files];
        if (!files.length) return undefined;
        if (type === 'file-list' && f.max_length && files.length > f.max_length) throw new Error(`${label}: at most ${f.max_length} files`);
        const up = [];
        for (const file of files) { progress(`Uploading ${file.name}…`); up.push(await upload(appId, file, f, label)); }
        return type === 'file' ? up[0] : up;
      };
    } else {
      input = h('input', {...common, type: 'text', maxlength: f.max_length || null, value: f.default ?? null});
      read = () => input.value || undefined;
    }
    fields.push(h('div', {class: 'field' + (type === 'checkbox' ? ' check' : '')},
      h('label', {for: 'in-' + f.variable}, label, f.required ? h('span', {class: 'req', 'aria-hidden': 'true'}, ' *') : null),
      input,
      f.hint || f.description ? h('small', {class: 'muted'}, f.hint || f.description) : null));
    readers.push([f.variable, read]);
  }
  return {
    fields,
    async values(progress = () => {}) {
      const inputs = {};
      for (const [k, read] of readers) {
        const v = await read(progress);
        if (v !== undefined) inputs[k] = v;
      }
      return inputs;
    },
  };
}

const kindOfMime = (m) => (/^image\//.test(m) ? 'image' : /^audio\//.test(m) ? 'audio' : /^video\//.test(m) ? 'video' : 'document');

// Uploads one file as the console's user; answers the input's file value.
async function upload(appId, file, f, label) {
  let type = kindOfMime(file.type || '');
  const allowed = f.allowed_file_types || [];
  if (allowed.length && !allowed.includes(type)) {
    if (!allowed.includes('custom')) throw new Error(`${label}: ${file.name} is a ${type} file; this input takes ${allowed.join(', ')}`);
    type = 'custom';
  }
  const body = new FormData();
  body.append('file', file);
  body.append('user', 'console');
  const r = await request('POST', `/admin/apps/${enc(appId)}/v1/files/upload`, {body});
  return {type, transfer_method: 'local_file', upload_file_id: r.id};
}

// ---- chat ----

function chatView(main, app, params, form, head, signal) {
  const base = `/admin/apps/${enc(app.id)}/v1`;
  let convId = null, busy = false;
  const list = h('ul', {class: 'convs'});
  const msgs = h('div', {class: 'messages', 'aria-live': 'polite'});
  const input = h('textarea', {testid: 'chat-input', rows: 2, placeholder: 'Message… (Enter sends, Shift+Enter for a new line)', 'aria-label': 'message'});
  const send = h('button', {type: 'submit', class: 'primary', testid: 'chat-send'}, 'Send');
  const chatForm = h('form', {class: 'chat-form', onsubmit: (e) => { e.preventDefault(); say(); }}, input, send);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); chatForm.requestSubmit(); }
  });
  const opening = () => (params.opening_statement ? h('div', {class: 'msg assistant opening'}, md(params.opening_statement)) : null);
  const newConv = () => { convId = null; fill(msgs, opening()); markCurrent(); input.focus(); };

  fill(main, h('section', {class: 'chat-page'}, head,
    h('div', {class: 'chat-layout'},
      h('aside', {class: 'panel'}, h('button', {type: 'button', onclick: newConv}, 'New conversation'), list),
      h('div', {class: 'chat-main'},
        form.fields.length ? h('details', {class: 'panel inputs', open: true}, h('summary', null, 'Inputs'), form.fields) : null,
        msgs, chatForm))));
  newConv();
  loadConversations();

  function markCurrent() {
    for (const li of list.children) li.classList.toggle('current', li.dataset.id === convId);
  }

  async function loadConversations() {
    let r;
    try { r = await get(`${base}/conversations?user=console&limit=50`, {signal}); } catch (e) { if (e.name !== 'AbortError') fill(list, h('li', null, errorBox(e.message))); return; }
    if (!r.data || !r.data.length) { fill(list, h('li', {class: 'muted'}, 'No conversations yet.')); return; }
    fill(list, r.data.map((c) => h('li', {'data-id': c.id},
      h('button', {type: 'button', class: 'link', onclick: () => openConv(c.id)}, c.name || 'Conversation'),
      h('small', {class: 'muted'}, fmtTime(c.updated_at || c.created_at)))));
    markCurrent();
  }

  async function openConv(id) {
    convId = id;
    markCurrent();
    fill(msgs, loading());
    try {
      const r = await get(`${base}/messages?conversation_id=${enc(id)}&user=console&limit=100`, {signal});
      fill(msgs, opening());
      for (const m of r.data || []) {
        msgs.append(message('user', m.query));
        const a = message('assistant', m.answer);
        const runId = m.workflow_run_id || m.run_id;
        if (runId) a.append(traceLink(runId));
        msgs.append(a);
      }
      if (!(r.data || []).length) msgs.append(empty('No messages in this conversation.'));
      msgs.lastChild?.scrollIntoView({block: 'end'});
    } catch (e) { if (e.name !== 'AbortError') fill(msgs, errorBox(e.message)); }
  }

  async function say() {
    const query = input.value.trim();
    if (!query || busy) return;
    busy = true;
    send.disabled = true;
    input.value = '';
    msgs.querySelector('[data-testid=empty]')?.remove();
    msgs.append(message('user', query));
    const body = h('div', {class: 'md'}, h('span', {class: 'muted'}, '…'));
    const a = h('div', {class: 'msg assistant pending', testid: 'chat-message', 'data-role': 'assistant'}, body);
    msgs.append(a);
    a.scrollIntoView({block: 'end'});
    try {
      const inputs = await form.values();
      const r = await startRun(app.id, {inputs, query, conversation_id: convId || undefined});
      const isNew = !convId;
      convId = r.conversation_id || convId;
      a.append(traceLink(r.id));
      await stream(r.id, a, body);
      if (isNew) loadConversations(); else markCurrent();
    } catch (e) {
      a.classList.remove('pending');
      fill(body, h('span', {class: 'errtext', testid: 'run-error'}, e.message));
    } finally {
      busy = false;
      send.disabled = false;
      input.focus();
    }
  }

  // Streams one turn's answer into a message, rendered at most once a frame.
  function stream(runId, a, body) {
    let text = '', done = false, frame = 0;
    const paint = () => {
      frame = 0;
      fill(body, md(text));
      a.scrollIntoView({block: 'end'});
    };
    const end = (status, outputs, error) => {
      done = true;
      a.classList.remove('pending');
      if (!text && outputs && typeof outputs.answer === 'string') text = outputs.answer;
      paint();
      if (status !== 'succeeded') body.append(h('div', {class: 'errtext', testid: 'run-error'}, `${status}${error ? ': ' + error : ''}`));
    };
    return follow(runId, {
      event(name, d) {
        if (name === 'text_chunk' || name === 'message') {
          text += d.text ?? d.answer ?? '';
          if (!frame) frame = requestAnimationFrame(paint);
        } else if (name === 'workflow_finished') end(d.status, d.outputs, d.error);
      },
      state(st, err) {
        if (st === 'failed') { done = true; body.append(h('div', {class: 'errtext', testid: 'run-error'}, 'Lost the answer stream: ' + (err ? err.message : ''))); }
      },
      finished: () => done,
      async ended() {
        const r = await get(`/admin/runs/${enc(runId)}`, {signal});
        if (r.status === 'running') return false;
        end(r.status, r.outputs, r.error);
        return true;
      },
    }, signal);
  }
}

function message(role, text) {
  return h('div', {class: 'msg ' + role, testid: 'chat-message', 'data-role': role}, role === 'user' ? h('p', {class: 'plain'}, text) : md(text));
}

const traceLink = (runId) => h('a', {class: 'tracelink small', href: `#/runs/${enc(runId)}`}, 'trace');
