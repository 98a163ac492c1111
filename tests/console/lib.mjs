// Shared by tests/console/console_test.mjs and bench/console_bench.mjs:
// starting `sluice serve` (and llmd) on loopback with a fresh data folder,
// the admin API, chromium through puppeteer-core, and cleaning up.
// Every process started here is killed on exit, whatever ends the script.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const APPS = path.join(HERE, 'apps');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const SLUICE = path.resolve(process.env.SLUICE || path.join(ROOT, 'build/sluice'));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const now = () => performance.timeOrigin + performance.now();

// ---- processes: everything started is killed when the script ends ----
const children = new Set();
const tmpdirs = new Set();
let browserPid = 0;

export function cleanupSync() {
    for (const c of children) {
        try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ }
    }
    children.clear();
    if (browserPid) {
        try { process.kill(browserPid, 'SIGKILL'); } catch { /* gone */ }
        browserPid = 0;
    }
    for (const d of tmpdirs) {
        try { fs.rmSync(d, { recursive: true, force: true }); } catch { /* kept */ }
    }
    tmpdirs.clear();
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => { cleanupSync(); process.exit(130); });
}

export function tmpdir(prefix = 'sluice-console-') {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    tmpdirs.add(d);
    return d;
}

function track(child) {
    children.add(child);
    child.on('exit', () => children.delete(child));
    return child;
}

export async function stopChild(child, ms = 3000) {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise((r) => child.once('exit', r));
    try { child.kill('SIGTERM'); } catch { /* gone */ }
    const t = setTimeout(() => { try { child.kill('SIGKILL'); } catch { /* gone */ } }, ms);
    await done;
    clearTimeout(t);
}

export function freePort() {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.on('error', reject);
        s.listen(0, '127.0.0.1', () => {
            const { port } = s.address();
            s.close(() => resolve(port));
        });
    });
}

// llmd (tests/tools/llmd.py) with the console's scripts; its base URL
export async function startLlmd(dir) {
    const portFile = path.join(dir, 'llmd.port');
    const child = track(spawn('python3', [path.join(ROOT, 'tests/tools/llmd.py'), '--port', '0',
        '--port-file', portFile, '--scripts', path.join(HERE, 'scripts')],
        { stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'llmd.err'), 'a')] }));
    for (let i = 0; i < 200; i++) {
        if (fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim()) {
            return { child, url: `http://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}/v1` };
        }
        if (child.exitCode !== null) break;
        await sleep(25);
    }
    throw new Error('llmd did not start (see llmd.err)');
}

// `sluice serve` on a free loopback port, data in DATA; extra args after.
// Resolves once /health answers: {child, base, data, token, log}.
// port: try that port first (a restart keeps the page's origin).
export async function startServe(data, { args = [], env = {}, log, port: want } = {}) {
    log = log || path.join(data, '..', 'serve.err');
    let lastErr = '';
    for (let attempt = 0; attempt < 3; attempt++) {
        const port = attempt === 0 && want ? want : await freePort();
        const child = track(spawn(SLUICE, ['serve', '--listen', `127.0.0.1:${port}`, '--data', data, ...args],
            { stdio: ['ignore', 'ignore', fs.openSync(log, 'a')], env: { ...process.env, ...env } }));
        const base = `http://127.0.0.1:${port}`;
        for (let i = 0; i < 200; i++) {
            if (child.exitCode !== null) break;
            try {
                const r = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
                if (r.ok) {
                    // a folder store keeps it in DATA/admin-token, a database
                    // store only inside: sluice store admin-token reads either
                    const token = execFileSync(SLUICE, ['store', 'admin-token', '--store', data],
                        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
                    return { child, base, port, data, token, log, args, env };
                }
            } catch (e) { lastErr = String(e); }
            await sleep(25);
        }
        await stopChild(child, 500);
    }
    let tail = '';
    try { tail = fs.readFileSync(log, 'utf8').split('\n').slice(-5).join(' | '); } catch { /* none */ }
    throw new Error(`sluice serve did not start: ${tail || lastErr}`);
}

// The admin API: api(srv, 'GET', '/admin/apps') -> {status, headers, body,
// json}; body may be a string, a Buffer or an object (sent as JSON).
export async function api(srv, method, p, body, headers = {}) {
    const h = { Authorization: `Bearer ${srv.token}`, ...headers };
    let b = body;
    if (b !== undefined && typeof b !== 'string' && !Buffer.isBuffer(b)) {
        b = JSON.stringify(b);
        h['Content-Type'] = 'application/json';
    }
    const r = await fetch(srv.base + p, { method, headers: h, body: b, signal: AbortSignal.timeout(60000) });
    const text = await r.text();
    let json;
    try { json = JSON.parse(text); } catch { /* not JSON */ }
    return { status: r.status, headers: r.headers, body: text, json };
}

// Imports tests/console/apps/NAME.yml (or DSL text) and answers its id.
export async function importApp(srv, nameOrText) {
    const text = nameOrText.includes('\n') ? nameOrText
        : fs.readFileSync(path.join(APPS, `${nameOrText}.yml`), 'utf8');
    const r = await api(srv, 'POST', '/admin/apps', text, { 'Content-Type': 'application/yaml' });
    if (r.status !== 200 && r.status !== 201) throw new Error(`import: ${r.status} ${r.body}`);
    return r.json.id;
}

// A blocking run through the admin path to the Service API.
export async function runBlocking(srv, app, inputs = {}, user = 'seed') {
    const r = await api(srv, 'POST', `/admin/apps/${app}/v1/workflows/run`,
        { inputs, user, response_mode: 'blocking' });
    if (r.status !== 200) throw new Error(`run: ${r.status} ${r.body}`);
    return r.json;
}

// n calls of fn(i), at most `width` at once
export async function pool(n, width, fn) {
    let next = 0;
    const worker = async () => { while (next < n) { const i = next++; await fn(i); } };
    await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
}

// ---- the browser ----
export function havePuppeteer() {
    try {
        createRequire(path.join(HERE, 'package.json')).resolve('puppeteer-core');
        return true;
    } catch { return false; }
}

export async function launchBrowser({ width = 1280, height = 900 } = {}) {
    const require = createRequire(path.join(HERE, 'package.json'));
    const { default: puppeteer } = await import(require.resolve('puppeteer-core'));
    const args = [
        '--no-first-run', '--no-default-browser-check', '--disable-dev-shm-usage',
        '--disable-gpu', '--no-proxy-server', '--disable-extensions',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--metrics-recording-only', '--disable-default-apps', '--mute-audio',
        // hermetic: nothing but loopback resolves
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ];
    if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');
    const browser = await puppeteer.launch({
        executablePath: CHROMIUM, headless: true, args,
        defaultViewport: { width, height },
        userDataDir: tmpdir('sluice-chromium-'),
        protocolTimeout: 30000,
    });
    browserPid = browser.process()?.pid || 0;
    return browser;
}

export async function closeBrowser(browser) {
    if (!browser) return;
    const pid = browser.process()?.pid;
    await Promise.race([browser.close().catch(() => {}), sleep(3000)]);
    if (pid) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    browserPid = 0;
}

export const tid = (id, extra = '') => `[data-testid="${id}"]${extra}`;

// Records, in the page, every trace-row's status as it changes:
// window.__statusLog = [{node, exec, status, t}], t on the wall clock
// (performance.timeOrigin + performance.now(), as the bench's reader).
export async function recordStatuses(page) {
    await page.evaluateOnNewDocument(() => {
        window.__statusLog = [];
        const last = new WeakMap();
        const note = (el, t) => {
            if (el.getAttribute('data-testid') !== 'trace-row') return;
            const status = el.getAttribute('data-status');
            if (!status || last.get(el) === status) return;
            last.set(el, status);
            window.__statusLog.push({
                node: el.getAttribute('data-node-id'), exec: el.getAttribute('data-exec-id'), status, t,
            });
        };
        const scan = (n, t) => {
            if (!(n instanceof Element)) return;
            note(n, t);
            for (const el of n.querySelectorAll('[data-testid="trace-row"]')) note(el, t);
        };
        new MutationObserver((muts) => {
            const t = performance.timeOrigin + performance.now();
            for (const m of muts) {
                if (m.type === 'attributes') note(m.target, t);
                else for (const n of m.addedNodes) scan(n, t);
            }
        }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
    });
}

// The page's sessionStorage after signing in, and the same in a new page
// before its first script runs.
export const readSession = (page) => page.evaluate(() => Object.entries(sessionStorage));
export async function injectSession(page, entries) {
    await page.evaluateOnNewDocument((e) => {
        for (const [k, v] of e) sessionStorage.setItem(k, v);
    }, entries);
}
