// DOM helpers.  Every node the console shows is built here with
// createElement and textContent: run data never goes through an HTML parser.

// h('div', {class: 'x', testid: 'y', onclick: f}, child, 'text', [more]).
// Attribute names always come from the console's own code, never from data.
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  let value;
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k === 'testid') el.setAttribute('data-testid', v);
      else if (k === 'value') value = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : v);
    }
  }
  add(el, kids);
  // After the children: a <select>'s value needs its options in place.
  if (value !== undefined) el.value = value;
  return el;
}

export function add(el, kids) {
  for (const k of kids) {
    if (k == null || k === false) continue;
    if (Array.isArray(k)) add(el, k);
    else el.append(k instanceof Node ? k : String(k));
  }
  return el;
}

// Empties el and fills it again.
export function fill(el, ...kids) {
  el.replaceChildren();
  return add(el, kids);
}

export const loading = (what = 'Loading…') => h('p', {class: 'muted', testid: 'loading', role: 'status'}, what);
export const empty = (what) => h('p', {class: 'muted empty', testid: 'empty'}, what);
export const errorBox = (msg, ...extra) =>
  h('div', {class: 'errbox', testid: 'error', role: 'alert'}, h('span', null, msg), ...extra);

// A short-lived message in a corner (an error stays longer); a new one
// replaces the one shown.
export function toast(msg, kind = 'info') {
  const box = document.getElementById('toasts');
  box.replaceChildren();
  const t = h('div', {class: 'toast ' + kind, testid: 'toast', role: kind === 'error' ? 'alert' : 'status'},
    h('span', null, msg),
    h('button', {type: 'button', class: 'link close', 'aria-label': 'dismiss', onclick: () => t.remove()}));
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 12000 : 4000);
}

// A status badge; its colour comes from the stylesheet by data-status.
export const chip = (status) => h('span', {class: 'chip', 'data-status': status || 'pending'}, status || 'pending');

export function fmtTime(unix) {
  if (unix == null) return '';
  const d = new Date(unix * 1000), p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function fmtDur(s) {
  if (s == null || !isFinite(s)) return '';
  if (s < 0.001) return `${Math.round(s * 1e6)} µs`;
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 2 : 0)} ms`;
  if (s < 60) return `${s.toFixed(2)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function fmtBytes(n) {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1048576).toFixed(1)} MB`;
}

// The end of an id: run ids are UUIDv7, whose first digits are the time.
export const shortId = (id) => String(id ?? '').slice(-8);

// Saves a Blob under a file name.  The blob is retyped as octet-stream so
// that no browser ever renders it from the console's origin.
export function download(blob, name) {
  const url = URL.createObjectURL(new Blob([blob], {type: 'application/octet-stream'}));
  const a = h('a', {href: url, download: name || 'download'});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// A file name safe on every system, from an app or file name.
export const fileName = (s, fallback = 'file') =>
  String(s || '').replace(/[\\/:*?"<>|\x00-\x1f]+/g, '_').replace(/^\.+/, '').slice(0, 120) || fallback;
