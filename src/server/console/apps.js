// Apps: the list with import, and one app's page (run, export, new version,
// delete, graph, recent runs, versions with a diff, API keys).

import {get, del, request, enc, apps, forgetApps} from './api.js';
import {h, fill, chip, fmtTime, fmtDur, shortId, loading, empty, errorBox, toast, download, fileName} from './dom.js';
import {diffView} from './diff.js';
import {graphView} from './graph.js';

const ACCEPT = '.yml,.yaml,.zip';

// Imports a DSL file or a .zip bundle as a new app and opens it.
export async function importFile(file) {
  try {
    const r = await request('POST', '/admin/apps', {body: file});
    forgetApps();
    toast(`Imported ${r.name} (${r.mode}, version ${r.version})`);
    location.hash = `#/apps/${enc(r.id)}`;
  } catch (e) {
    toast(`Import of ${file.name} failed: ${e.message}`, 'error');
  }
}

// A button-like label around a file input, so the picker opens by keyboard too.
function filePicker(label, testid, onFile) {
  const input = h('input', {type: 'file', accept: ACCEPT, class: 'visually-hidden', testid, onchange: () => {
    const f = input.files[0];
    input.value = '';
    if (f) onFile(f);
  }});
  return h('label', {class: 'button'}, label, input);
}

export async function appsList(main, signal) {
  const body = h('div', null, loading());
  fill(main, h('section', null,
    h('div', {class: 'page-head'}, h('h1', null, 'Apps'),
      filePicker('Import app…', 'import-file', importFile)),
    h('p', {class: 'muted'}, 'Import a Dify DSL file (.yml) or a .zip bundle, or drop one anywhere on this page.'),
    body));
  let list;
  try { list = await apps(true); } catch (e) { fill(body, errorBox(e.message)); return; }
  if (signal.aborted) return;
  if (!list.length) { fill(body, empty('No apps yet: import a DSL file to start.')); return; }
  fill(body, h('div', {class: 'tablewrap'}, h('table', {class: 'list'},
    h('thead', null, h('tr', null, ['Name', 'Mode', 'Version', 'Imported', ''].map((t) => h('th', null, t)))),
    h('tbody', null, list.map((a) => h('tr', {testid: 'app-row', 'data-app-id': a.id},
      h('td', null, h('a', {href: `#/apps/${enc(a.id)}`}, a.name || shortId(a.id))),
      h('td', null, a.mode), h('td', null, String(a.version ?? '')), h('td', null, fmtTime(a.created_at)),
      h('td', {class: 'right'}, h('a', {class: 'button small', href: `#/apps/${enc(a.id)}/run`}, 'Run'))))))));
}

export async function appPage(main, id, signal) {
  fill(main, loading());
  let app;
  try { app = (await apps(true)).find((a) => a.id === id); } catch (e) { fill(main, errorBox(e.message)); return; }
  if (signal.aborted) return;
  if (!app) { fill(main, errorBox(`No such app: ${id}`)); return; }
  const base = `/admin/apps/${enc(id)}`;

  const exportBtn = h('button', {type: 'button', testid: 'app-export', onclick: () => exportApp(app)}, 'Export');
  const delBtn = h('button', {type: 'button', class: 'danger', testid: 'app-delete', onclick: async () => {
    if (!confirm(`Delete the app "${app.name}"? Its keys stop working.`)) return;
    try {
      await del(base);
      forgetApps();
      toast(`Deleted ${app.name}`);
      location.hash = '#/apps';
    } catch (e) { toast(e.message, 'error'); }
  }}, 'Delete');
  const newVersion = filePicker('New version…', 'app-upload', async (file) => {
    try {
      const r = await request('PUT', base, {body: file});
      forgetApps();
      toast(`${app.name} is now at version ${r.version}`);
      appPage(main, id, signal);
    } catch (e) { toast(`Upload of ${file.name} failed: ${e.message}`, 'error'); }
  });

  const graphBox = h('div', null, loading('Loading the graph…'));
  const runsBox = h('div', null, loading());
  const versionsBox = h('div', {testid: 'app-versions'}, loading());
  const keysBox = h('div', null, loading());
  const toolsBox = h('div', null, loading());
  fill(main, h('section', {class: 'app-page', 'data-app-id': id},
    h('div', {class: 'page-head'},
      h('h1', null, app.name), chip(app.mode), h('span', {class: 'muted'}, `version ${app.version}`),
      h('div', {class: 'actions'},
        h('a', {class: 'button primary', href: `#/apps/${enc(id)}/run`, testid: 'app-run'}, app.mode === 'advanced-chat' ? 'Chat' : 'Run'),
        exportBtn, newVersion, delBtn)),
    h('section', {class: 'panel'}, h('h2', null, 'Graph'), graphBox),
    h('section', {class: 'panel'}, h('div', {class: 'page-head'}, h('h2', null, 'Recent runs'),
      h('a', {href: `#/runs?app=${enc(id)}`}, 'All runs of this app')), runsBox),
    h('div', {class: 'cols'},
      h('section', {class: 'panel'}, h('h2', null, 'Versions'), versionsBox),
      h('section', {class: 'panel'}, h('h2', null, 'API keys'), keysBox)),
    h('section', {class: 'panel'}, h('h2', null, 'Tool bindings'), toolsBox)));

  get(`${base}/graph`, {signal}).then((g) => fill(graphBox, graphView(g).el),
    (e) => e.name !== 'AbortError' && fill(graphBox, errorBox('No graph: ' + e.message)));
  recentRuns(runsBox, id, signal);
  versions(versionsBox, app, signal);
  keys(keysBox, id, signal);
  Promise.all([get(`${base}/tools`, {signal}), import('./knowledge.js')]).then(([t, m]) =>
    fill(toolsBox, m.bindings(t.data, 'None of its own; it may use the server\'s (Tools).')),
  (e) => e.name !== 'AbortError' && fill(toolsBox, errorBox(e.message)));
}

async function exportApp(app, version) {
  try {
    const res = await get(`/admin/apps/${enc(app.id)}${version ? `?version=${version}` : ''}`, {as: 'response'});
    const zip = /zip/.test(res.headers.get('Content-Type') || '');
    download(await res.blob(), fileName(app.name, 'app') + (version ? `-v${version}` : '') + (zip ? '.zip' : '.yml'));
  } catch (e) { toast(e.message, 'error'); }
}

async function recentRuns(box, id, signal) {
  let r;
  try { r = await get(`/admin/runs?app=${enc(id)}&limit=10`, {signal}); } catch (e) { if (e.name !== 'AbortError') fill(box, errorBox(e.message)); return; }
  if (!r.data.length) { fill(box, empty('No runs yet.')); return; }
  fill(box, h('div', {class: 'tablewrap'}, h('table', {class: 'list'},
    h('thead', null, h('tr', null, ['Run', 'Status', 'User', 'Started', 'Duration'].map((t) => h('th', null, t)))),
    h('tbody', null, r.data.map((x) => h('tr', null,
      h('td', null, h('a', {href: `#/runs/${enc(x.id)}`}, h('code', null, shortId(x.id)))),
      h('td', null, chip(x.status)), h('td', null, x.user || ''), h('td', null, fmtTime(x.created_at)),
      h('td', null, fmtDur(x.elapsed_time))))))));
}

async function versions(box, app, signal) {
  let list;
  try { list = (await get(`/admin/apps/${enc(app.id)}/versions`, {signal})).data || []; } catch (e) { if (e.name !== 'AbortError') fill(box, errorBox(e.message)); return; }
  const opts = (sel) => list.map((v) => h('option', {value: String(v.version), selected: v.version === sel}, `version ${v.version}`));
  const from = h('select', {'aria-label': 'from version'}, opts(list[1] ? list[1].version : list[0]?.version));
  const to = h('select', {'aria-label': 'to version'}, opts(list[0]?.version));
  const out = h('div');
  const compare = async () => {
    fill(out, loading('Comparing…'));
    try {
      const text = (v) => get(`/admin/apps/${enc(app.id)}?version=${enc(v)}`, {as: 'text'});
      const [a, b] = await Promise.all([text(from.value), text(to.value)]);
      fill(out, h('p', {class: 'muted'}, `version ${from.value} → version ${to.value}`), diffView(a, b));
    } catch (e) { fill(out, errorBox(e.message)); }
  };
  fill(box,
    h('table', {class: 'list'}, h('tbody', null, list.map((v) => h('tr', null,
      h('td', null, `version ${v.version}`, v.version === app.version ? h('span', {class: 'muted'}, ' (current)') : null),
      h('td', null, fmtTime(v.created_at)),
      h('td', {class: 'right'}, h('button', {type: 'button', class: 'small', onclick: () => exportApp(app, v.version)}, 'Download')))))),
    list.length > 1
      ? h('form', {class: 'inline', onsubmit: (e) => { e.preventDefault(); compare(); }},
        from, h('span', null, '→'), to, h('button', {type: 'submit'}, 'Compare'))
      : h('p', {class: 'muted'}, 'Upload a new version to compare versions.'),
    out);
}

async function keys(box, id, signal) {
  const shown = h('div');
  const listBox = h('div', null, loading());
  const create = h('button', {type: 'button', testid: 'key-create', onclick: async () => {
    create.disabled = true;
    try {
      const r = await request('POST', `/admin/apps/${enc(id)}/keys`);
      const code = h('code', {testid: 'key-shown'}, r.key);
      fill(shown, h('div', {class: 'keybox', role: 'status'},
        h('p', null, h('strong', null, 'New key, shown once: copy it now.')),
        h('div', {class: 'inline'}, code, h('button', {type: 'button', class: 'small', onclick: () => copy(r.key)}, 'Copy'))));
      load();
    } catch (e) { toast(e.message, 'error'); }
    create.disabled = false;
  }}, 'Create key');
  const load = async () => {
    let list;
    try { list = (await get(`/admin/apps/${enc(id)}/keys`, {signal})).data || []; } catch (e) { if (e.name !== 'AbortError') fill(listBox, errorBox(e.message)); return; }
    if (!list.length) { fill(listBox, empty('No keys. Service API clients (Dify SDKs) need one.')); return; }
    fill(listBox, h('table', {class: 'list'}, h('tbody', null, list.map((k) => h('tr', {testid: 'key-row', 'data-key-id': k.id, 'data-revoked': String(!!k.revoked)},
      h('td', null, h('code', null, k.hint || shortId(k.id))),
      h('td', null, fmtTime(k.created_at)),
      h('td', {class: 'right'}, k.revoked ? h('span', {class: 'muted'}, 'revoked')
        : h('button', {type: 'button', class: 'small danger', testid: 'key-revoke', onclick: async () => {
          if (!confirm(`Revoke the key ${k.hint || k.id}? Clients using it get 401.`)) return;
          try { await del(`/admin/keys/${enc(k.id)}`); toast('Key revoked'); load(); } catch (e) { toast(e.message, 'error'); }
        }}, 'Revoke')))))));
  };
  fill(box, create, shown, listBox);
  load();
}

async function copy(text) {
  try { await navigator.clipboard.writeText(text); toast('Copied'); } catch { toast('Copy failed: select the key and copy it by hand', 'error'); }
}
