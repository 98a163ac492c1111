#!/usr/bin/env node
// The speed of sluice serve's web console (src/server/console/) in Debian's
// chromium, headless, driven by puppeteer-core (tests/console/node_modules).
// Starts its own `sluice serve` on a free loopback port with a fresh data
// folder, then measures, each against its target:
//
// (a) The runs page with 10,000 runs stored: the runs are seeded first
//     through the admin path to the Service API (a trivial start -> end
//     workflow, blocking, BENCH_SEED_CONNS at once; the seeding time is
//     printed too).  Then /#/runs is loaded afresh (about:blank in between;
//     the token already in sessionStorage, set before any script runs) and
//     the time from the navigation's start (performance.timeOrigin) until 50
//     runs-row elements are in the DOM is taken in the page by a
//     MutationObserver.  One load to warm up, then BENCH_LOADS (10).
//     Target: median <= 300 ms.
// (b) Live trace latency over a 200-node run (a generated chain: template
//     nodes, every 20th a code node that sleeps 50 ms, after a first node
//     that sleeps 1 s while both readers connect).  The run is started by
//     POST /admin/apps/ID/runs; the page opens #/runs/ID and a raw HTTP
//     reader in this process reads the same GET /admin/runs/ID/events.
//     In the page a MutationObserver notes when each trace-row first shows
//     (node_started) and when it first shows a finished status
//     (node_finished); here, the reader notes when each event arrived (the
//     time the server wrote it, near enough).  Both clocks are
//     performance.timeOrigin + performance.now() on this machine.  Latency
//     = DOM time - reader time, per event of the chain's nodes.
//     Target: p95 <= 50 ms.
// (c) The console's files (src/server/console/*): total size <= 200 KB.
//
//   SLUICE=build/sluice node bench/console_bench.mjs      (make bench-console)
//
// Env: SLUICE, CHROMIUM, BENCH_RUNS (10000), BENCH_SEED_CONNS (32),
// BENCH_LOADS (10), BENCH_NODES (200), CONSOLE_DIR (--console-dir).
// Exit status 1 when a target is missed, 2 when the bench cannot run.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import path from 'node:path';
import zlib from 'node:zlib';
import {
    CHROMIUM, ROOT, SLUICE, api, closeBrowser, havePuppeteer, importApp, injectSession,
    launchBrowser, now, pool, recordStatuses, sleep, startServe, stopChild, tid, tmpdir,
} from '../tests/console/lib.mjs';

const RUNS = +(process.env.BENCH_RUNS || 10000);
const SEED_CONNS = +(process.env.BENCH_SEED_CONNS || 32);
const LOADS = +(process.env.BENCH_LOADS || 10);
const NODES = +(process.env.BENCH_NODES || 200);
const CONSOLE_SRC = path.join(ROOT, 'src/server/console');
const TOKEN_KEY = 'sluice.admin-token'; // src/server/console/api.js

function die(msg) { console.error(`console bench: ${msg}`); process.exit(2); }
if (!fs.existsSync(SLUICE)) die(`${SLUICE} is missing; run make`);
if (!fs.existsSync(CHROMIUM)) die(`no chromium at ${CHROMIUM} (Debian package chromium)`);
if (!havePuppeteer()) die('puppeteer-core is missing: (cd tests/console && npm ci)');

const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

// the 200-node chain: n1 (a code node, 1 s) then template nodes, every
// 20th a code node that sleeps 50 ms
function chainDsl(nodes) {
    const isCode = (i) => i === 1 || i % 20 === 0;
    const outOf = (i) => (i === 0 ? null : `[n${i}, ${isCode(i) ? 'v' : 'output'}]`);
    const out = ['app: {mode: workflow, name: console bench chain}', 'kind: app', 'version: 0.1.5',
        'workflow:', '  graph:', '    nodes:',
        '    - {id: start, data: {type: start, title: Start, variables: []}}'];
    for (let i = 1; i <= nodes; i++) {
        if (isCode(i)) {
            out.push(`    - id: n${i}`, '      data:', '        type: code', `        title: Nap ${i}`,
                '        code_language: python3', '        code: |', '          import time',
                `          def main(${i === 1 ? '' : 'v'}):`, `              time.sleep(${i === 1 ? 1 : 0.05})`,
                `              return {"v": "n${i}"}`,
                `        variables: [${i === 1 ? '' : `{variable: v, value_selector: ${outOf(i - 1)}}`}]`,
                '        outputs: {v: {type: string}}');
        } else {
            out.push(`    - {id: n${i}, data: {type: template-transform, title: Step ${i}, template: '{{ v }}.${i}', ` +
                `variables: [{variable: v, value_selector: ${outOf(i - 1)}}]}}`);
        }
    }
    out.push(`    - {id: end, data: {type: end, title: End, outputs: [{variable: v, value_selector: ${outOf(nodes)}}]}}`);
    out.push('    edges:', '    - {source: start, target: n1}');
    for (let i = 2; i <= nodes; i++) out.push(`    - {source: n${i - 1}, target: n${i}}`);
    out.push(`    - {source: n${nodes}, target: end}`);
    return out.join('\n') + '\n';
}

const TRIVIAL = `app: {mode: workflow, name: console bench trivial}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: [{variable: x, label: X, type: text-input, required: false}]}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: x, value_selector: [start, x]}]}}
    edges:
    - {source: start, target: end}
`;

// A raw reader of GET /admin/runs/ID/events on a thread of its own (so the
// page's traffic on this one never delays it): [{event, node, t}], t the
// arrival on this machine's clock; resolves when the stream ends.
const READER = `
const http = require('node:http');
const { parentPort, workerData: w } = require('node:worker_threads');
const now = () => performance.timeOrigin + performance.now();
const got = [];
const req = http.get(w.url, { headers: { Authorization: 'Bearer ' + w.token, Accept: 'text/event-stream' }, agent: false }, (res) => {
    if (res.statusCode !== 200) { parentPort.postMessage({ error: 'events: ' + res.statusCode }); res.resume(); return; }
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk) => {
        const t = now();
        buf += chunk;
        let cut;
        while ((cut = buf.indexOf('\\n\\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            const data = block.split('\\n').find((l) => l.startsWith('data: '));
            if (!data) continue;
            try {
                const ev = JSON.parse(data.slice(6));
                got.push({ event: ev.event, node: ev.data && ev.data.node_id, t });
            } catch (e) { /* not JSON */ }
        }
    });
    res.on('end', () => parentPort.postMessage({ got }));
    res.on('error', (e) => parentPort.postMessage({ error: String(e) }));
});
req.on('error', (e) => parentPort.postMessage({ error: String(e) }));
req.setTimeout(120000, () => req.destroy(new Error('events: timeout')));
parentPort.postMessage({ connecting: true });
`;
function readEvents(srv, runId) {
    const w = new Worker(READER, { eval: true, workerData: { url: `${srv.base}/admin/runs/${runId}/events`, token: srv.token } });
    let connected;
    const ready = new Promise((r) => { connected = r; });
    const done = new Promise((resolve, reject) => {
        w.on('message', (m) => {
            if (m.connecting) { connected(); return; }
            w.terminate();
            if (m.error) reject(new Error(m.error)); else resolve(m.got);
        });
        w.on('error', reject);
    });
    return { ready, done };
}

async function main() {
    const T = tmpdir('sluice-console-bench-');
    const consoleArgs = process.env.CONSOLE_DIR ? ['--console-dir', path.resolve(process.env.CONSOLE_DIR)] : [];
    const srv = await startServe(path.join(T, 'data'), { args: consoleArgs, log: path.join(T, 'serve.err') });
    let browser;
    const rows = [];
    try {
        // ---- (c) size ----
        let bytes = 0, gz = 0;
        const files = fs.existsSync(CONSOLE_SRC) ? fs.readdirSync(CONSOLE_SRC) : [];
        for (const f of files) {
            const b = fs.readFileSync(path.join(CONSOLE_SRC, f));
            bytes += b.length;
            gz += zlib.gzipSync(b, { level: 9 }).length;
        }

        // ---- seeding ----
        const trivial = await importApp(srv, TRIVIAL);
        const t0 = now();
        let errors = 0;
        await pool(RUNS, SEED_CONNS, async (i) => {
            const r = await api(srv, 'POST', `/admin/apps/${trivial}/v1/workflows/run`,
                { inputs: { x: `r${i}` }, user: i % 3 ? 'bench' : 'other', response_mode: 'blocking' });
            if (r.status !== 200) errors++;
        });
        const seedMs = now() - t0;
        if (errors) die(`${errors} of ${RUNS} seeding runs failed`);
        console.log(`# seeded ${RUNS} runs in ${fmt(seedMs / 1000, 2)} s (${fmt(RUNS / (seedMs / 1000), 0)} runs/s, ${SEED_CONNS} at once)`);

        // ---- (a) /#/runs ----
        browser = await launchBrowser();
        const page = await browser.newPage();
        await injectSession(page, [[TOKEN_KEY, srv.token]]);
        await page.evaluateOnNewDocument(() => {
            window.__rows50 = null;
            const obs = new MutationObserver(() => {
                if (document.querySelectorAll('[data-testid="runs-row"]').length >= 50) {
                    window.__rows50 = performance.now();
                    obs.disconnect();
                }
            });
            obs.observe(document, { subtree: true, childList: true });
        });
        const loads = [];
        for (let i = 0; i <= LOADS; i++) {
            await page.goto('about:blank');
            await page.goto(`${srv.base}/#/runs`, { waitUntil: 'domcontentloaded' });
            await page.waitForFunction(() => window.__rows50 !== null, { timeout: 15000, polling: 50 })
                .catch(() => die('the runs page never showed 50 runs-row elements'));
            const ms = await page.evaluate(() => window.__rows50);
            if (i > 0) loads.push(ms);
            else console.log(`# first (cold) load: ${fmt(ms)} ms`);
        }
        console.log(`# loads (ms): ${loads.map((x) => fmt(x)).join(' ')}`);

        // ---- (b) live trace ----
        const chain = await importApp(srv, chainDsl(NODES));
        const p2 = await browser.newPage();
        await injectSession(p2, [[TOKEN_KEY, srv.token]]);
        await recordStatuses(p2);
        await p2.goto(`${srv.base}/#/runs`, { waitUntil: 'domcontentloaded' });
        await p2.waitForSelector(tid('runs-row'), { timeout: 15000 });
        const start = await api(srv, 'POST', `/admin/apps/${chain}/runs`, { inputs: {}, user: 'bench' });
        if (start.status !== 202) die(`POST /admin/apps/ID/runs: ${start.status} ${start.body}`);
        const runId = start.json.id;
        const reading = readEvents(srv, runId);
        await reading.ready;
        await p2.evaluate((id) => { window.__statusLog = []; location.hash = `#/runs/${id}`; }, runId);
        const events = await reading.done;
        await p2.waitForFunction((id) => {
            const t = document.querySelector('[data-testid="trace"]');
            return t && t.getAttribute('data-run-id') === id && !['running', 'pending', ''].includes(t.getAttribute('data-status') || '');
        }, { timeout: 30000, polling: 100 }, runId).catch(() => die('the trace never finished'));
        await sleep(200);
        const log = await p2.evaluate(() => window.__statusLog);
        const finished = events.find((e) => e.event === 'workflow_finished');
        if (!finished) die('the events stream had no workflow_finished');
        const lat = [], lstart = [], lend = [];
        let missing = 0;
        const first = new Map(), done = new Map();
        for (const e of log) {
            if (!first.has(e.node)) first.set(e.node, e.t);
            if (!done.has(e.node) && e.status !== 'running' && e.status !== 'pending') done.set(e.node, e.t);
        }
        for (const e of events) {
            // the chain's nodes after the first (which waits for both readers)
            if (!e.node || !/^n\d+$/.test(e.node) || e.node === 'n1') continue;
            let dom;
            if (e.event === 'node_started') dom = first.get(e.node);
            else if (e.event === 'node_finished') dom = done.get(e.node);
            else continue;
            if (dom === undefined) { missing++; continue; }
            lat.push(dom - e.t);
            (e.event === 'node_started' ? lstart : lend).push(dom - e.t);
        }
        const expected = 2 * (NODES - 1);
        console.log(`# trace: ${lat.length} of ${expected} node events matched in the DOM (${missing} never shown); ` +
            `latency ms p50 ${fmt(median(lat))}, p95 ${fmt(pct(lat, 95))}, p99 ${fmt(pct(lat, 99))}, max ${fmt(Math.max(...lat))}, ` +
            `min ${fmt(Math.min(...lat))}; started p95 ${fmt(pct(lstart, 95))}, finished p95 ${fmt(pct(lend, 95))}`);
        const spread = events.filter((e) => e.node && e.node !== 'n1' && /^n\d+$/.test(e.node));
        if (spread.length) console.log(`# the chain's events arrived over ${fmt(spread[spread.length - 1].t - spread[0].t, 0)} ms`);

        rows.push([`(a) /#/runs, ${RUNS.toLocaleString('en-US')} runs stored: 50 rows shown, median of ${LOADS}`, median(loads), 300, 'ms']);
        rows.push([`(b) live trace, ${NODES} nodes: event -> DOM, p95`, lat.length >= expected * 0.95 ? pct(lat, 95) : NaN, 50, 'ms']);
        rows.push(['(c) src/server/console/* total size', bytes / 1024, 200, 'KB']);
        console.log(`# (c) ${files.length} files, ${fmt(bytes / 1024)} KB, ${fmt(gz / 1024)} KB gzipped one by one`);
        console.log(`# seeding: ${fmt(seedMs / 1000, 2)} s for ${RUNS} runs (no target)`);
    } finally {
        await closeBrowser(browser);
        await stopChild(srv.child);
    }

    // ---- the table ----
    let status = 0;
    const w = Math.max(...rows.map((r) => r[0].length));
    console.log('');
    console.log(`${'measure'.padEnd(w)}  ${'value'.padStart(10)}  ${'target'.padStart(10)}  ${'ratio'.padStart(6)}  result`);
    for (const [name, v, target, unit] of rows) {
        const ok = Number.isFinite(v) && v <= target;
        if (!ok) status = 1;
        console.log(`${name.padEnd(w)}  ${`${fmt(v)} ${unit}`.padStart(10)}  ${`${target} ${unit}`.padStart(10)}  ` +
            `${fmt(v / target, 2).padStart(6)}  ${ok ? 'PASS' : 'FAIL'}`);
    }
    return status;
}

try {
    process.exitCode = await main();
} catch (e) {
    console.error(`console bench: ${(e && e.stack) || e}`);
    process.exitCode = 2;
}
