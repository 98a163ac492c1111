// Follows a run's event stream (GET /admin/runs/ID/events).  EventSource
// cannot send an Authorization header, so this is fetch() and a small
// text/event-stream parser.  The last event id is kept: after a dropped
// connection the stream is asked again with Last-Event-ID, so no event is
// lost or seen twice.

import {auth, enc, errorOf, onUnauthorized} from './api.js';

const MAX_TRIES = 5;

// cb.event(name, data)       each event, in order, as soon as it is read
// cb.state(s, err, retry)    'live' | 'reconnecting' | 'failed' | 'done';
//                            with 'failed', retry() (if given) starts again
// cb.finished()              true once the run's end was seen
// cb.ended()                 the server closed the stream before the run's
//                            end: resolves true when the run is over anyway
//                            (the caller settles it from the run's record)
export async function follow(runId, cb, signal) {
  const url = `/admin/runs/${enc(runId)}/events`;
  let last = null, tries = 0;
  while (!signal.aborted) {
    let err = null, clean = false;
    try {
      const headers = {Authorization: 'Bearer ' + auth.get(), Accept: 'text/event-stream'};
      if (last !== null) headers['Last-Event-ID'] = last;
      const res = await fetch(url, {headers, signal, cache: 'no-store'});
      if (!res.ok) {
        err = await errorOf(res);
        if (res.status === 401 && onUnauthorized) onUnauthorized(err);
        // These will not get better by asking again.
        if (res.status === 400 || res.status === 401 || res.status === 404) {
          cb.state('failed', err, null);
          return;
        }
        throw err;
      }
      cb.state('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buf += value.indexOf('\r') >= 0 ? value.replace(/\r\n?/g, '\n') : value;
        let at = 0, cut;
        while ((cut = buf.indexOf('\n\n', at)) >= 0) {
          const id = block(buf.slice(at, cut), cb);
          if (id !== null) { last = id; tries = 0; }
          at = cut + 2;
        }
        buf = buf.slice(at);
      }
      clean = true;
    } catch (e) {
      if (signal.aborted) return;
      err = e;
    }
    if (cb.finished()) { cb.state('done'); return; }
    // The server closed the stream without the run's end: a run whose log
    // has none (the server stopped mid-run, say) would otherwise be asked
    // for again and again.  A broken connection is just asked again.
    if (clean) {
      try { if (await cb.ended()) { cb.state('done'); return; } } catch { /* ask the stream again */ }
    }
    if (signal.aborted) return;
    if (++tries > MAX_TRIES) {
      await new Promise((resolve) => cb.state('failed', err || new Error('the event stream keeps closing'), resolve));
      tries = 0;
      continue;
    }
    cb.state('reconnecting', err);
    await sleep(Math.min(8000, 400 * 2 ** (tries - 1)), signal);
  }
}

// One event block: its id (or null) after handing its data to cb.event.
function block(text, cb) {
  let id = null, name = '', data = '';
  for (const line of text.split('\n')) {
    const c = line.indexOf(':');
    if (c === 0) continue; // a comment
    const field = c < 0 ? line : line.slice(0, c);
    let v = c < 0 ? '' : line.slice(c + 1);
    if (v[0] === ' ') v = v.slice(1);
    if (field === 'id') id = v;
    else if (field === 'event') name = v;
    else if (field === 'data') data = data ? data + '\n' + v : v;
  }
  if (name === 'ping' || !data) return id;
  let ev;
  try { ev = JSON.parse(data); } catch { return id; }
  if (ev && typeof ev.event === 'string') cb.event(ev.event, ev.data && typeof ev.data === 'object' ? ev.data : {});
  return id;
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, {once: true});
});
