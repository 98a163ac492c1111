// Runs of every app (#/runs): newest first, filters, "Load more" by
// cursor, open by id.  The list and the apps (for their names) are asked
// for at once, and rows show as soon as the list is in.

import {get, enc, apps} from './api.js';
import {h, fill, chip, fmtTime, fmtDur, shortId, empty, errorBox, loading} from './dom.js';

const STATUSES = ['running', 'succeeded', 'failed', 'stopped', 'partial-succeeded'];
const FILTERS = ['app', 'status', 'user', 'since', 'until'];

export function runsPage(main, query, signal) {
  const f = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) || '']));
  const names = new Map(); // app id -> name, once the apps are in
  const appCells = []; // [td, app id] waiting for the names
  const appsP = apps().catch(() => []);
  let gen = 0, next = null;

  const tbody = h('tbody');
  const table = h('table', {class: 'list runs', testid: 'runs-table'},
    h('thead', null, h('tr', null, ['Run', 'App', 'Status', 'User', 'Started', 'Duration', 'Tokens', 'Steps'].map((t, i) =>
      h('th', {scope: 'col', class: i === 3 || i > 5 ? 'opt' : null}, t)))),
    tbody);
  const note = h('div', {'aria-live': 'polite'});
  const more = h('button', {type: 'button', testid: 'runs-more', hidden: true, onclick: () => load(false)}, 'Load more');

  const appSel = h('select', {testid: 'runs-filter-app', 'aria-label': 'app', onchange: apply}, h('option', {value: ''}, 'All apps'));
  const statusSel = h('select', {testid: 'runs-filter-status', 'aria-label': 'status', onchange: apply, value: f.status},
    h('option', {value: ''}, 'Any status'), STATUSES.map((s) => h('option', {value: s}, s)));
  const user = h('input', {type: 'search', testid: 'runs-filter-user', placeholder: 'user', 'aria-label': 'user', value: f.user});
  const since = h('input', {type: 'datetime-local', 'aria-label': 'since', value: toLocal(f.since), onchange: apply});
  const until = h('input', {type: 'datetime-local', 'aria-label': 'until', value: toLocal(f.until), onchange: apply});
  let typing = 0;
  user.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(apply, 400); });
  signal.addEventListener('abort', () => clearTimeout(typing));

  const search = h('input', {type: 'search', testid: 'run-search', placeholder: 'Open a run by id', 'aria-label': 'run id'});
  const searchMsg = h('span', {'aria-live': 'polite'});
  const openRun = async (e) => {
    e.preventDefault();
    const id = search.value.trim();
    if (!id) return;
    fill(searchMsg);
    try {
      await get(`/admin/runs/${enc(id)}`);
      location.hash = `#/runs/${enc(id)}`;
    } catch (err) {
      fill(searchMsg, errorBox(err.status === 404 ? `No such run: ${id}` : err.message));
    }
  };

  fill(main, h('section', null,
    h('div', {class: 'page-head'}, h('h1', null, 'Runs'),
      h('form', {class: 'inline', role: 'search', onsubmit: openRun}, search, h('button', {type: 'submit'}, 'Open'), searchMsg)),
    h('form', {class: 'filters inline', onsubmit: (e) => { e.preventDefault(); apply(); }},
      appSel, statusSel, user,
      h('label', null, 'since ', since), h('label', null, 'until ', until),
      h('button', {type: 'submit'}, 'Filter'),
      h('button', {type: 'button', class: 'link', onclick: () => { location.hash = '#/runs'; }}, 'Reset')),
    h('div', {class: 'tablewrap'}, table), note, more));
  load(true);

  appsP.then((list) => {
    if (signal.aborted) return;
    for (const a of list) {
      names.set(a.id, a.name);
      appSel.append(h('option', {value: a.id}, a.name));
    }
    appSel.value = f.app;
    for (const [td, id] of appCells.splice(0)) td.textContent = names.get(id) || shortId(id);
  });

  // Rows still running are asked for again every few seconds.
  const refresh = setInterval(async () => {
    const rows = [...tbody.querySelectorAll('tr[data-status=running]')].slice(0, 20);
    await Promise.all(rows.map(async (tr) => {
      try {
        const r = await get(`/admin/runs/${enc(tr.dataset.runId)}`, {signal});
        if (r.status !== 'running') tr.replaceWith(row({...r, app_id: r.workflow_id, user: tr.dataset.user}));
      } catch { /* keep the row as it was */ }
    }));
  }, 3000);
  signal.addEventListener('abort', () => clearInterval(refresh));

  // The filters go into the URL (replaced, not a new history entry), so a
  // reload or a shared link shows the same list.
  function apply() {
    clearTimeout(typing);
    if (signal.aborted) return;
    f.app = appSel.value;
    f.status = statusSel.value;
    f.user = user.value.trim();
    f.since = fromLocal(since.value);
    f.until = fromLocal(until.value);
    const q = new URLSearchParams(FILTERS.filter((k) => f[k]).map((k) => [k, f[k]])).toString();
    history.replaceState(null, '', '#/runs' + (q ? '?' + q : ''));
    load(true);
  }

  async function load(fresh) {
    const my = ++gen;
    const q = new URLSearchParams(FILTERS.filter((k) => f[k]).map((k) => [k, f[k]]));
    q.set('limit', '50');
    if (!fresh && next) q.set('before', next);
    more.disabled = true;
    if (fresh) { fill(note, loading()); tbody.replaceChildren(); }
    let r;
    try { r = await get('/admin/runs?' + q, {signal}); } catch (e) {
      if (e.name !== 'AbortError' && my === gen) fill(note, errorBox(e.message));
      more.disabled = false;
      return;
    }
    if (my !== gen) return;
    next = r.next;
    const frag = document.createDocumentFragment();
    for (const x of r.data) frag.append(row(x));
    tbody.append(frag);
    fill(note, tbody.children.length ? null : empty(FILTERS.some((k) => f[k]) ? 'No runs match these filters.' : 'No runs yet.'));
    more.hidden = !r.has_more;
    more.disabled = false;
  }

  function row(x) {
    const appCell = h('td', null, names.get(x.app_id) || shortId(x.app_id));
    if (!names.has(x.app_id)) appCells.push([appCell, x.app_id]);
    const tr = h('tr', {testid: 'runs-row', 'data-run-id': x.id, 'data-status': x.status, 'data-user': x.user || '', class: 'clickable'},
      h('td', null, h('a', {href: `#/runs/${enc(x.id)}`}, h('code', null, shortId(x.id)))),
      appCell,
      h('td', null, chip(x.status)),
      h('td', {class: 'opt'}, x.user || ''),
      h('td', null, fmtTime(x.created_at)),
      h('td', {class: 'num'}, x.status === 'running' ? '…' : fmtDur(x.elapsed_time)),
      h('td', {class: 'num opt'}, String(x.total_tokens ?? '')),
      h('td', {class: 'num opt'}, String(x.total_steps ?? '')));
    if (x.error) tr.title = String(x.error);
    tr.addEventListener('click', (e) => { if (!e.target.closest('a')) location.hash = `#/runs/${enc(x.id)}`; });
    return tr;
  }
}

// <input type=datetime-local> values <-> Unix seconds (the filters' unit).
function toLocal(unix) {
  if (!unix) return '';
  const d = new Date(unix * 1000);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}
const fromLocal = (v) => (v ? String(Math.floor(new Date(v).getTime() / 1000)) : '');
