// The console's shell: sign-in, navigation, hash routes, file drops.
// Views are modules loaded on first use, so the first page costs only
// what it needs.

import {auth, get, setOnUnauthorized} from './api.js';
import {h, fill, errorBox, loading} from './dom.js';

const main = document.getElementById('main');
const top = document.getElementById('top');
let current = null; // the shown view's AbortController

setOnUnauthorized(() => {
  auth.clear();
  signIn('The server refused the token: sign in again.');
});

document.getElementById('signout').addEventListener('click', () => {
  auth.clear();
  signIn();
});

function signIn(message) {
  if (current) current.abort();
  current = null;
  top.hidden = true;
  document.title = 'Sign in · sluice';
  const token = h('input', {type: 'password', id: 'token', testid: 'signin-token', autocomplete: 'off', required: true, spellcheck: 'false'});
  const submit = h('button', {type: 'submit', class: 'primary', testid: 'signin-submit'}, 'Sign in');
  const msg = h('div', {'aria-live': 'polite'}, message ? errorBox(message) : null);
  fill(main, h('section', {class: 'signin panel'},
    h('h1', null, 'sluice console'),
    h('form', {onsubmit: async (e) => {
      e.preventDefault();
      const t = token.value.trim();
      if (!t) return;
      submit.disabled = true;
      fill(msg, loading('Checking…'));
      try {
        await get('/admin/apps', {token: t});
        auth.set(t);
        fill(msg);
        route();
      } catch (err) {
        fill(msg, errorBox(err.status === 401 ? 'That token is not the admin token.' : err.message));
      } finally {
        submit.disabled = false;
      }
    }},
    h('label', {for: 'token'}, 'Admin token'),
    token,
    h('p', {class: 'muted small'}, 'It is in the file admin-token in the server\'s data folder. It is kept in this tab only.'),
    submit),
    msg));
  token.focus();
}

const ROUTES = [
  // [pattern on the path parts, module, view function, title]
  [(p) => p[0] === 'apps' && p.length === 1, './apps.js', (m, p, q, s) => m.appsList(main, s), 'Apps'],
  [(p) => p[0] === 'apps' && p.length === 3 && p[2] === 'run', './run.js', (m, p, q, s) => m.runPage(main, p[1], s), 'Run'],
  [(p) => p[0] === 'apps' && p.length === 2, './apps.js', (m, p, q, s) => m.appPage(main, p[1], s), 'App'],
  [(p) => p[0] === 'runs' && p.length === 1, './runs.js', (m, p, q, s) => m.runsPage(main, q, s), 'Runs'],
  [(p) => p[0] === 'runs' && p.length === 2, './trace.js', (m, p, q, s) => m.traceView(main, p[1], s), 'Run'],
  [(p) => p[0] === 'knowledge' && p.length === 1, './knowledge.js', (m, p, q, s) => m.knowledgePage(main, s), 'Knowledge'],
  [(p) => p[0] === 'knowledge' && p.length === 2, './knowledge.js', (m, p, q, s) => m.datasetPage(main, p[1], s), 'Knowledge base'],
  [(p) => p[0] === 'tools' && p.length === 1, './knowledge.js', (m, p, q, s) => m.toolsPage(main, s), 'Tools'],
];

async function route() {
  if (!auth.get()) { signIn(); return; }
  if (current) current.abort();
  const ctl = current = new AbortController();
  top.hidden = false;
  const [path, qs = ''] = location.hash.replace(/^#/, '').split('?');
  let parts;
  try { parts = path.split('/').filter(Boolean).map(decodeURIComponent); } catch { parts = []; }
  const r = ROUTES.find(([match]) => match(parts));
  if (!r) { location.replace('#/apps'); return; }
  for (const a of top.querySelectorAll('nav a')) {
    if (a.getAttribute('href') === '#/' + parts[0]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${r[3]} · sluice`;
  fill(main, loading());
  try {
    const m = await import(r[1]);
    if (!ctl.signal.aborted) await r[2](m, parts, new URLSearchParams(qs), ctl.signal);
  } catch (e) {
    if (e.name !== 'AbortError' && !ctl.signal.aborted) fill(main, errorBox(e.message));
  }
}

addEventListener('hashchange', route);

// Drop a DSL or bundle anywhere to import it (file inputs keep their drops).
const drop = document.getElementById('drop');
let dragDepth = 0;
const hasFiles = (e) => auth.get() && e.dataTransfer && [...e.dataTransfer.types].includes('Files') && !isFileInput(e.target);
const isFileInput = (t) => t instanceof HTMLInputElement && t.type === 'file';
addEventListener('dragenter', (e) => { if (hasFiles(e)) { dragDepth++; drop.hidden = false; } });
addEventListener('dragleave', (e) => { if (hasFiles(e) && --dragDepth <= 0) { dragDepth = 0; drop.hidden = true; } });
addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
addEventListener('drop', (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth = 0;
  drop.hidden = true;
  const file = e.dataTransfer.files[0];
  if (file) import('./apps.js').then((m) => m.importFile(file));
});

route();
