// Files in run outputs (uploads, agents' artifacts): listed with a preview
// for the few types that show without running anything, and a download for
// all.  Bytes are fetched with the token into a Blob; HTML, SVG, XML,
// scripts and unknown types are never rendered.

import {get, enc} from './api.js';
import {h, fill, fmtBytes, download, fileName, errorBox} from './dom.js';
import {md} from './md.js';

const IMAGES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const TEXT_EXT = {txt: 'text', log: 'text', md: 'md', markdown: 'md', json: 'json', csv: 'csv'};
const TEXT_MAX = 1 << 20;
const CSV_ROWS = 200;

const isFile = (v) => !!v && typeof v === 'object' && !Array.isArray(v) &&
  (v.dify_model_identity === '__dify__file__' || (!!v.transfer_method && !!(v.related_id || v.url)));

// Every file value inside a value (outputs), at most 100.
export function findFiles(v, out = [], depth = 0) {
  if (out.length >= 100 || depth > 12 || !v || typeof v !== 'object') return out;
  if (isFile(v)) { out.push(v); return out; }
  for (const x of Array.isArray(v) ? v : Object.values(v)) findFiles(x, out, depth + 1);
  return out;
}

// The admin path to a file's bytes: its /v1 preview URL under the app.
function fileURL(f, appId) {
  const u = typeof f.url === 'string' ? f.url : '';
  if (/^\/v1\/files\/[\w-]+\/preview(\?[\w=&%.-]*)?$/.test(u)) return `/admin/apps/${enc(appId)}${u}`;
  const id = f.related_id || f.upload_file_id || f.tool_file_id || f.id;
  return id ? `/admin/apps/${enc(appId)}/v1/files/${enc(id)}/preview` : null;
}

const nameOf = (f) => String(f.filename || f.name || (f.related_id ? 'file-' + String(f.related_id).slice(0, 8) : 'file'));

export function artifactList(files, appId) {
  return h('div', {class: 'artifacts'}, files.map((f) => artifact(f, appId)));
}

function artifact(f, appId) {
  const name = nameOf(f), url = appId ? fileURL(f, appId) : null;
  let blob = null;
  const fetchBlob = async () => blob || (blob = await get(url, {as: 'blob'}));
  // The preview area holds its own "Preview" button; a click anywhere on
  // it (or Enter on the button) shows the file there, once.
  const showBtn = h('button', {type: 'button', class: 'small'}, 'Preview');
  let asked = false;
  const area = h('div', {class: 'preview', testid: 'artifact-preview', onclick: async () => {
    if (asked || !url) return;
    asked = true;
    showBtn.disabled = true;
    showBtn.textContent = 'Loading…';
    try { fill(area, await preview(await fetchBlob(), f, name)); } catch (e) { fill(area, errorBox(e.message)); }
  }});
  area.append(showBtn);
  const dl = h('button', {type: 'button', class: 'small', testid: 'artifact-download', onclick: async () => {
    try { download(await fetchBlob(), fileName(name)); } catch (e) { fill(area, errorBox(e.message)); }
  }}, 'Download');
  if (!url) { showBtn.disabled = dl.disabled = true; }
  const meta = [f.mime_type, f.size != null && f.size >= 0 ? fmtBytes(f.size) : null].filter(Boolean).join(' · ');
  return h('div', {class: 'artifact', testid: 'artifact', 'data-name': name},
    h('div', {class: 'artifact-head'}, h('strong', {class: 'fname'}, name), h('span', {class: 'muted'}, meta), dl),
    area);
}

// How to show a file: by the type the server answered with (it tells the
// type from the bytes), else by the file's own claims for the text types.
function kindOf(blob, f, name) {
  const t = (blob.type || '').split(';')[0].trim().toLowerCase();
  if (IMAGES.includes(t)) return 'image';
  if (t === 'text/plain') return TEXT_EXT[ext(name)] || 'text';
  if (t === 'text/markdown') return 'md';
  if (t === 'application/json') return 'json';
  if (t === 'text/csv') return 'csv';
  if (!t || t === 'application/octet-stream') {
    const m = String(f.mime_type || '').toLowerCase();
    return TEXT_EXT[ext(name)] || (m === 'text/plain' ? 'text' : null);
  }
  return null;
}

const ext = (name) => (/\.([a-z0-9]+)$/i.exec(name) || [])[1]?.toLowerCase();

async function preview(blob, f, name) {
  const kind = kindOf(blob, f, name);
  if (kind === 'image') {
    const url = URL.createObjectURL(new Blob([blob], {type: blob.type.split(';')[0]}));
    return h('img', {src: url, alt: name, class: 'thumb'});
  }
  if (!kind) return h('p', {class: 'muted'}, `No inline preview for ${blob.type || 'this type'}: download it.`);
  const cut = blob.size > TEXT_MAX;
  const text = await blob.slice(0, TEXT_MAX).text();
  const note = cut ? h('p', {class: 'muted'}, `Showing the first ${fmtBytes(TEXT_MAX)} of ${fmtBytes(blob.size)}.`) : null;
  if (kind === 'json' && !cut) {
    try { return h('pre', {class: 'code'}, JSON.stringify(JSON.parse(text), null, 2)); } catch { /* not JSON after all: as text */ }
  }
  if (kind === 'md') return h('div', null, note, md(text));
  if (kind === 'csv') return h('div', null, note, csvTable(text));
  return h('div', null, note, h('pre', {class: 'code'}, text));
}

function csvTable(text) {
  const rows = parseCSV(text, CSV_ROWS + 1);
  const [head, ...body] = rows;
  if (!head) return h('p', {class: 'muted'}, 'empty file');
  return h('div', {class: 'tablewrap'},
    h('table', {class: 'csv'},
      h('thead', null, h('tr', null, head.map((c) => h('th', null, c)))),
      h('tbody', null, body.slice(0, CSV_ROWS).map((r) => h('tr', null, r.map((c) => h('td', null, c)))))),
    rows.length > CSV_ROWS ? h('p', {class: 'muted'}, `First ${CSV_ROWS} rows.`) : null);
}

// RFC 4180 rows (quoted fields, doubled quotes, newlines inside quotes).
function parseCSV(s, max) {
  const rows = [];
  let row = [], field = '', q = false;
  for (let i = 0; i < s.length && rows.length < max; i++) {
    const c = s[i];
    if (q) {
      if (c === '"' && s[i + 1] === '"') { field += '"'; i++; } else if (c === '"') q = false; else field += c;
    } else if (c === '"' && !field) q = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && s[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = '';
    } else field += c;
  }
  if ((field || row.length) && rows.length < max) { row.push(field); rows.push(row); }
  return rows;
}
