// The admin API: the token, requests, errors.  The token lives in memory
// and sessionStorage only (never a URL or a cookie) and goes out as a
// Bearer header on every call.

const KEY = 'sluice.admin-token';
let token = sessionStorage.getItem(KEY) || '';

export const auth = {
  get: () => token,
  set(t) { token = t; sessionStorage.setItem(KEY, t); },
  clear() { token = ''; sessionStorage.removeItem(KEY); },
};

// Called with the error when the server answers 401 (set by app.js).
export let onUnauthorized = null;
export const setOnUnauthorized = (f) => { onUnauthorized = f; };

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const enc = encodeURIComponent;

// The server's {code, message, status} as an ApiError.
export async function errorOf(res) {
  let code = 'http_' + res.status, msg = `${res.status} ${res.statusText}`.trim();
  try {
    const j = await res.json();
    if (j && typeof j.message === 'string') { msg = j.message; code = String(j.code || code); }
  } catch { /* not JSON: keep the status line */ }
  return new ApiError(res.status, code, msg);
}

// One request.  opts: body, headers, signal, as ('json' | 'text' | 'blob' |
// 'response'), token (to try a token before keeping it).
export async function request(method, path, opts = {}) {
  const headers = {Authorization: 'Bearer ' + (opts.token ?? token), ...opts.headers};
  let res;
  try {
    res = await fetch(path, {method, headers, body: opts.body, signal: opts.signal, cache: 'no-store'});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'Cannot reach the server (' + e.message + ')');
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && opts.token === undefined && onUnauthorized) onUnauthorized(err);
    throw err;
  }
  const as = opts.as || 'json';
  if (as === 'response') return res;
  if (as === 'text') return res.text();
  if (as === 'blob') return res.blob();
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, opts) => request('GET', path, opts);
export const del = (path, opts) => request('DELETE', path, opts);
const postJSON = (path, body, opts = {}) =>
  request('POST', path, {...opts, body: JSON.stringify(body), headers: {'Content-Type': 'application/json'}});

// The apps list, shared by the views that name apps by id.  Kept a few
// seconds so moving between pages does not ask again.
let appsCache = null;
export function apps(fresh = false) {
  if (fresh || !appsCache || Date.now() - appsCache.at > 5000) {
    const p = get('/admin/apps').then((r) => r.data || []);
    appsCache = {at: Date.now(), p};
    p.catch(() => { if (appsCache && appsCache.p === p) appsCache = null; });
  }
  return appsCache.p;
}
export const forgetApps = () => { appsCache = null; };

// Starts a run of an app as the console's user: {id, task_id, conversation_id, …}.
export const startRun = (appId, body) =>
  postJSON(`/admin/apps/${enc(appId)}/runs`, {user: 'console', ...body});
