#!/usr/bin/env python3
"""e2bd - a stand-in for E2B (its REST API and envd) for the sluice tests
(standard library only).  docs/sandbox-e2b.md describes the real service.

usage: e2bd.py [--port PORT] [--port-file PATH]

Listens on 127.0.0.1 (PORT 0, the default: a free port).  Once listening it
writes the port to PATH (atomically: the file appears complete), or prints
it as the only line on stdout when there is no --port-file.  Serves until
SIGTERM or SIGINT, then kills every sandbox's processes and removes their
folders.  Deleting a sandbox kills all of its processes, also those that
left the command's process group (found by the HOME they were started with).  Every request runs on its own (daemon) thread.

One port serves both planes, told apart the way E2B's proxy does it: a
request with an E2b-Sandbox-Id header (or a Host of 49983-ID.DOMAIN) goes to
that sandbox's envd, anything else to the REST API.

REST API (X-API-Key needed; any key works except "bad-key": 401)
  POST   /sandboxes        body {templateID, timeout, secure, metadata,
                           envVars, allow_internet_access, network} -> 201
                           {sandboxID, templateID, clientID, envdVersion,
                           envdAccessToken (when secure is not false), domain}
  GET    /sandboxes/ID     the sandbox, 404 when unknown
  DELETE /sandboxes/ID     204; kills its processes and removes its folder;
                           404 when unknown
  templateID selects a misbehaviour: "error500" 500, "ratelimit" 429,
  "badjson" a 201 whose body is not JSON, "notfound" 404; others are fine.

envd (X-Access-Token must match the sandbox's token: 401 otherwise; an
unknown sandbox id: 502 like E2B's proxy)
  POST /process.Process/Start        Connect server stream
                                     (application/connect+json): start,
                                     data (stdout/stderr, base64, as they
                                     arrive), keepalive (every
                                     Keepalive-Ping-Interval seconds), end,
                                     then the end-of-stream frame
  POST /process.Process/SendInput, CloseStdin, SendSignal, List   unary JSON
  POST /filesystem.Filesystem/ListDir, MakeDir, Remove, Stat        unary JSON
  GET  /files?path=P&username=U      download (404 when missing)
  POST /files?path=P&username=U      multipart upload, field "file"; makes
                                     the parent folders
  Connect errors: unary -> HTTP status + {code, message}; streams -> HTTP
  200 and the error in the end-of-stream frame.

Processes are real processes on this host.  Each sandbox has a folder ROOT
(a temp dir); sandbox path /P is ROOT/P, so the workdir /home/user is
ROOT/home/user.  Because commands run on the host, the text "/home/user" in
cmd, args, env values and cwd is rewritten to ROOT/home/user (unless it
already is ROOT/home/user: a path a command printed).  Environment:
PATH (this host's), HOME, USER, LOGNAME, the sandbox's envVars, then the
request's envs (as envd does).  SendSignal signals only that pid (as envd
does); SIGKILL/SIGTERM also stop waiting for the output pipes.

Test helpers
  GET  /__log        every request since the last reset, as a JSON array of
                     {method, path, headers, body}; header names lowercased,
                     x-api-key and x-access-token values replaced by
                     "<redacted:LEN>"; body: parsed JSON (a Connect stream's
                     first message for Start), "<N bytes>" for other bodies,
                     null when empty
  POST /__reset      clears the log
  GET  /__sandboxes  [{sandboxID, root, pids (running), request (the create
                     body)}]
"""
import argparse
import base64
import json
import os
import posixpath
import queue
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOME = "/home/user"
ENVD_PORT = 49983
USERS = ("user", "root")

# Go's names for signals (syscall.Signal.String()), as envd reports them
GO_SIGNALS = {
    1: "hangup", 2: "interrupt", 3: "quit", 4: "illegal instruction",
    5: "trace/breakpoint trap", 6: "aborted", 7: "bus error",
    8: "floating point exception", 9: "killed", 10: "user defined signal 1",
    11: "segmentation fault", 12: "user defined signal 2", 13: "broken pipe",
    14: "alarm clock", 15: "terminated", 24: "CPU time limit exceeded",
    25: "file size limit exceeded", 31: "bad system call",
}

CONNECT_STATUS = {"invalid_argument": 400, "unauthenticated": 401, "permission_denied": 403,
                  "not_found": 404, "already_exists": 409, "failed_precondition": 400,
                  "resource_exhausted": 429, "unimplemented": 404, "internal": 500,
                  "unavailable": 503}


class ConnectError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class Proc:
    def __init__(self, popen, config, stdin_on):
        self.popen = popen
        self.config = config
        self.stdin_on = stdin_on
        self.stdin_lock = threading.Lock()
        self.out_cancelled = threading.Event()


class Sandbox:
    def __init__(self, sid, token, request):
        self.id = sid
        self.token = token
        self.request = request
        self.root = tempfile.mkdtemp(prefix="e2bd-")
        os.makedirs(self.root + HOME)
        self.env = request.get("envVars") or {}
        self.procs = {}
        self.lock = threading.Lock()

    def host(self, path):
        """Sandbox path -> host path (relative paths are relative to the home)."""
        if not path:
            path = HOME
        if not path.startswith("/"):
            path = HOME + "/" + path
        return self.root + posixpath.normpath(path).replace("//", "/")

    def sandbox_path(self, host):
        return host[len(self.root):] or "/"

    def rewrite(self, text):
        # Paths the sandbox already printed (its commands run here, so
        # $PWD shows ROOT) stay as they are; only bare /home/user moves.
        marker = "\0ROOTED\0"
        text = text.replace(self.root + HOME, marker)
        return text.replace(HOME, self.root + HOME).replace(marker, self.root + HOME)

    def kill_all(self):
        with self.lock:
            procs = list(self.procs.values())
        for p in procs:
            kill_tree(p.popen.pid)
            p.out_cancelled.set()

    def destroy(self):
        """Like the VM going away: every process of the sandbox dies, also
        the ones that left the command's process group (found by the HOME
        they were started with)."""
        self.kill_all()
        mark = ("HOME=" + self.root + HOME).encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/environ" % pid, "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if mark in env:
                kill_tree(int(pid))
        shutil.rmtree(self.root, ignore_errors=True)


def kill_tree(pid):
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


class State:
    lock = threading.Lock()
    log = []
    sandboxes = {}
    counter = 0


def redact(headers):
    out = {}
    for k, v in headers.items():
        k = k.lower()
        out[k] = "<redacted:%d>" % len(v) if k in ("x-api-key", "x-access-token") else v
    return out


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


def go_status(rc):
    """(exitCode, exited, status, error) the way envd fills its end event."""
    if rc >= 0:
        status = "exit status %d" % rc
        return rc, True, status, (status if rc else None)
    name = GO_SIGNALS.get(-rc, "signal %d" % -rc)
    status = "signal: " + name
    return -1, False, status, status


def go_mode(st):
    import stat as S
    kind = "d" if S.S_ISDIR(st.st_mode) else "L" if S.S_ISLNK(st.st_mode) else "-"
    bits = ""
    for who in range(3):
        m = (st.st_mode >> (6 - 3 * who)) & 7
        bits += ("r" if m & 4 else "-") + ("w" if m & 2 else "-") + ("x" if m & 1 else "-")
    return kind + bits


def entry_info(sb, host):
    import stat as S
    st = os.lstat(host)
    e = {"name": os.path.basename(host), "path": sb.sandbox_path(host),
         "size": str(st.st_size), "permissions": go_mode(st), "mode": st.st_mode & 0o777}
    kind = st
    if S.S_ISLNK(st.st_mode):
        e["symlinkTarget"] = sb.sandbox_path(os.path.realpath(host)) \
            if os.path.realpath(host).startswith(sb.root) else os.readlink(host)
        try:
            kind = os.stat(host)
        except OSError:
            kind = None
    if kind is not None and S.S_ISREG(kind.st_mode):
        e["type"] = "FILE_TYPE_FILE"
    elif kind is not None and S.S_ISDIR(kind.st_mode):
        e["type"] = "FILE_TYPE_DIRECTORY"
    else:
        e["type"] = "FILE_TYPE_UNSPECIFIED"
    return e


def frame(obj, flags=0):
    data = compact(obj).encode()
    return struct.pack(">BI", flags, len(data)) + data


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "e2bd/1"

    def log_message(self, fmt, *args):
        pass

    # ------------------------------------------------------------ plumbing

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def record(self, body):
        entry = {"method": self.command, "path": self.path,
                 "headers": redact(self.headers), "body": body}
        with State.lock:
            State.log.append(entry)

    def send(self, status, body=b"", ctype="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = compact(body).encode()
        self.send_response(status)
        if body or status not in (204,):
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(body)

    def api_error(self, status, message):
        self.send(status, {"code": status, "message": message})

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def sandbox_id(self):
        sid = self.headers.get("E2b-Sandbox-Id")
        if sid:
            return sid
        host = (self.headers.get("Host") or "").split(":")[0]
        prefix = "%d-" % ENVD_PORT
        if host.startswith(prefix) and "." in host:
            return host[len(prefix):].split(".")[0]
        return None

    def dispatch(self):
        try:
            body = self.read_body()
            sid = self.sandbox_id()
            if sid is not None:
                self.envd(sid, body)
            else:
                self.rest(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ------------------------------------------------------------ REST API

    def rest(self, raw):
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        if path == "/__log" and self.command == "GET":
            with State.lock:
                return self.send(200, list(State.log))
        if path == "/__reset" and self.command == "POST":
            with State.lock:
                State.log.clear()
            return self.send(204)
        if path == "/__sandboxes" and self.command == "GET":
            out = []
            with State.lock:
                sbs = list(State.sandboxes.values())
            for sb in sbs:
                with sb.lock:
                    pids = [p for p, pr in sb.procs.items() if pr.popen.poll() is None]
                out.append({"sandboxID": sb.id, "root": sb.root, "pids": pids,
                            "request": sb.request})
            return self.send(200, out)
        body = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        self.record(body)
        key = self.headers.get("X-API-Key")
        if not key or key == "bad-key":
            return self.api_error(401, "Invalid API key, it must start with 'e2b_'")
        if path == "/sandboxes" and self.command == "POST":
            return self.create(body)
        if path.startswith("/sandboxes/"):
            sid = path[len("/sandboxes/"):]
            with State.lock:
                sb = State.sandboxes.get(sid)
                if sb and self.command == "DELETE":
                    del State.sandboxes[sid]
            if not sb:
                return self.api_error(404, "sandbox \"%s\" not found" % sid)
            if self.command == "DELETE":
                sb.destroy()
                return self.send(204)
            if self.command == "GET":
                return self.send(200, {"sandboxID": sb.id, "templateID": sb.request["templateID"],
                                       "clientID": "e2bd", "envdVersion": "0.2.0",
                                       "state": "running", "cpuCount": 2, "memoryMB": 512,
                                       "diskSizeMB": 1024, "metadata": sb.request.get("metadata", {}),
                                       "startedAt": "2025-01-01T00:00:00Z",
                                       "endAt": "2025-01-01T00:05:00Z"})
        return self.api_error(404, "no route %s %s" % (self.command, path))

    def create(self, body):
        if not isinstance(body, dict):
            return self.api_error(400, "request body must be a JSON object")
        tmpl = body.get("templateID")
        if not isinstance(tmpl, str) or not tmpl:
            return self.api_error(400, "templateID is required")
        if tmpl == "error500":
            return self.api_error(500, "Failed to place sandbox")
        if tmpl == "ratelimit":
            return self.api_error(429, "You have reached the maximum number of concurrent sandboxes")
        if tmpl == "notfound":
            return self.api_error(404, "template '%s' not found" % tmpl)
        if tmpl == "badjson":
            return self.send(201, b'{"sandboxID": "x", ')
        with State.lock:
            State.counter += 1
            sid = "i%d%s" % (State.counter, secrets.token_hex(6))
        token = secrets.token_hex(16) if body.get("secure") is not False else None
        sb = Sandbox(sid, token, body)
        with State.lock:
            State.sandboxes[sid] = sb
        ans = {"sandboxID": sid, "templateID": tmpl, "clientID": "e2bd",
               "envdVersion": "0.2.0", "domain": "e2bd.invalid"}
        if token:
            ans["envdAccessToken"] = token
        self.send(201, ans)

    # ------------------------------------------------------------ envd

    def envd(self, sid, raw):
        url = urllib.parse.urlsplit(self.path)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        logged = None
        if raw and ctype == "application/json":
            try:
                logged = json.loads(raw)
            except ValueError:
                logged = raw.decode("utf-8", "replace")
        elif raw and ctype == "application/connect+json" and len(raw) >= 5:
            try:
                logged = json.loads(raw[5:5 + struct.unpack(">I", raw[1:5])[0]])
            except ValueError:
                logged = "<%d bytes>" % len(raw)
        elif raw:
            logged = "<%d bytes>" % len(raw)
        self.record(logged)
        with State.lock:
            sb = State.sandboxes.get(sid)
        if not sb:
            return self.send(502, {"sandboxId": sid, "message": "The sandbox was not found",
                                   "code": 502})
        if sb.token and self.headers.get("X-Access-Token") != sb.token:
            return self.api_error(401, "unauthorized access, please provide a valid access token")
        if url.path == "/files":
            return self.files(sb, url, raw)
        method = url.path.lstrip("/")
        if method == "process.Process/Start":
            return self.start(sb, ctype, raw)
        if ctype != "application/json":
            return self.send(415, {"code": "invalid_argument",
                                   "message": "unary calls take application/json"})
        try:
            user = self.rpc_user()
            req = json.loads(raw or b"{}")
            if not isinstance(req, dict):
                raise ConnectError("invalid_argument", "the request is not a JSON object")
            fn = UNARY.get(method)
            if not fn:
                raise ConnectError("unimplemented", "%s is not implemented" % method)
            ans = fn(sb, req, user)
        except ConnectError as e:
            return self.send(CONNECT_STATUS.get(e.code, 500), {"code": e.code, "message": e.message})
        except ValueError as e:
            return self.send(400, {"code": "invalid_argument", "message": str(e)})
        self.send(200, ans)

    def rpc_user(self):
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Basic "):
            return "user"
        user = base64.b64decode(auth[6:]).decode().split(":")[0]
        if user not in USERS:
            raise ConnectError("unauthenticated", "invalid username: '%s'" % user)
        return user

    # ---- files

    def files(self, sb, url, raw):
        q = urllib.parse.parse_qs(url.query)
        user = (q.get("username") or ["user"])[0]
        if user not in USERS:
            return self.api_error(401, "invalid user: '%s'" % user)
        path = (q.get("path") or [""])[0]
        if self.command == "GET":
            host = sb.host(path)
            if not os.path.exists(host):
                return self.api_error(404, "path '%s' does not exist" % sb.sandbox_path(host))
            if os.path.isdir(host):
                return self.api_error(400, "path '%s' is a directory" % sb.sandbox_path(host))
            with open(host, "rb") as f:
                data = f.read()
            return self.send(200, data, "application/octet-stream")
        if self.command != "POST":
            return self.api_error(405, "method not allowed")
        ctype = self.headers.get("Content-Type") or ""
        if not ctype.startswith("multipart/form-data"):
            return self.api_error(400, "the upload must be multipart/form-data")
        msg = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + raw)
        out = []
        for part in msg.iter_parts():
            if part.get_param("name", header="content-disposition") != "file":
                continue
            target = path or part.get_filename() or ""
            host = sb.host(target)
            if os.path.isdir(host):
                return self.api_error(400, "path '%s' is a directory" % sb.sandbox_path(host))
            try:
                os.makedirs(os.path.dirname(host), exist_ok=True)
                with open(host, "wb") as f:
                    f.write(part.get_payload(decode=True) or b"")
            except OSError as e:
                return self.api_error(500, "error writing '%s': %s" % (sb.sandbox_path(host),
                                                                       e.strerror))
            out.append({"path": sb.sandbox_path(host), "name": os.path.basename(host),
                        "type": "file"})
        if not out:
            return self.api_error(400, "no file part in the upload")
        self.send(200, out)

    # ---- the process stream

    def start(self, sb, ctype, raw):
        if ctype != "application/connect+json":
            return self.send(415, {"code": "invalid_argument",
                                   "message": "Start takes application/connect+json"})
        self.send_response(200)
        self.send_header("Content-Type", "application/connect+json")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.rpc_user()
            if len(raw) < 5:
                raise ConnectError("invalid_argument", "no request frame")
            flags, n = struct.unpack(">BI", raw[:5])
            if flags or len(raw) != 5 + n:
                raise ConnectError("invalid_argument", "bad request frame")
            req = json.loads(raw[5:])
            proc_cfg = req.get("process") or {}
            cmd = proc_cfg.get("cmd")
            if not isinstance(cmd, str) or not cmd:
                raise ConnectError("invalid_argument", "process.cmd is required")
            args = [sb.rewrite(a) for a in proc_cfg.get("args") or []]
            cwd = sb.host(proc_cfg.get("cwd") or HOME)
            if not os.path.isdir(cwd):
                raise ConnectError("invalid_argument",
                                   "cwd '%s' does not exist" % sb.sandbox_path(cwd))
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": sb.root + HOME,
                   "USER": "user", "LOGNAME": "user"}
            env.update({k: sb.rewrite(str(v)) for k, v in sb.env.items()})
            env.update({k: sb.rewrite(str(v)) for k, v in (proc_cfg.get("envs") or {}).items()})
            stdin_on = req.get("stdin") is not False
            try:
                popen = subprocess.Popen([sb.rewrite(cmd)] + args, cwd=cwd, env=env,
                                         stdin=subprocess.PIPE if stdin_on else subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         close_fds=True)
            except OSError as e:
                raise ConnectError("invalid_argument", "error starting process '%s': %s"
                                   % (cmd, e.strerror))
        except ConnectError as e:
            self.wfile.write(frame({"error": {"code": e.code, "message": e.message}}, 2))
            return
        except ValueError as e:
            self.wfile.write(frame({"error": {"code": "invalid_argument", "message": str(e)}}, 2))
            return
        proc = Proc(popen, proc_cfg, stdin_on)
        with sb.lock:
            sb.procs[popen.pid] = proc
        try:
            interval = float(self.headers.get("Keepalive-Ping-Interval") or 0)
        except ValueError:
            interval = 0
        self.pump(sb, proc, interval)

    def pump(self, sb, proc, interval):
        q = queue.Queue()
        popen = proc.popen

        def reader(fd, name):
            while True:
                try:
                    data = os.read(fd, 32768)
                except OSError:
                    data = b""
                if not data:
                    break
                q.put((name, data))
            q.put((name, None))

        for f, name in ((popen.stdout, "stdout"), (popen.stderr, "stderr")):
            threading.Thread(target=reader, args=(f.fileno(), name), daemon=True).start()
        alive = True

        def write(obj, flags=0):
            nonlocal alive
            if not alive:
                return
            try:
                self.wfile.write(frame(obj, flags))
                self.wfile.flush()
            except OSError:
                alive = False   # the client went away; the process runs on (as in envd)

        write({"event": {"start": {"pid": popen.pid}}})
        open_streams = 2
        last = time.monotonic()
        while open_streams and not proc.out_cancelled.is_set():
            try:
                name, data = q.get(timeout=0.05)
            except queue.Empty:
                if interval and time.monotonic() - last >= interval:
                    write({"event": {"keepalive": {}}})
                    last = time.monotonic()
                continue
            if data is None:
                open_streams -= 1
                continue
            write({"event": {"data": {name: base64.b64encode(data).decode()}}})
            last = time.monotonic()
        rc = popen.wait()
        # output that was already read when the process ended still goes out
        while not proc.out_cancelled.is_set():
            try:
                name, data = q.get_nowait()
            except queue.Empty:
                break
            if data is not None:
                write({"event": {"data": {name: base64.b64encode(data).decode()}}})
        code, exited, status, error = go_status(rc)
        end = {"exited": exited, "status": status}
        if code:
            end["exitCode"] = code
        if error:
            end["error"] = error
        write({"event": {"end": end}})
        write({}, 2)
        with sb.lock:
            sb.procs.pop(popen.pid, None)
        for f in (popen.stdin, popen.stdout, popen.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass


# ---------------------------------------------------------------- unary methods

def selected(sb, req):
    sel = req.get("process") or {}
    pid = sel.get("pid")
    if not isinstance(pid, int):
        raise ConnectError("invalid_argument", "process.pid is required")
    with sb.lock:
        p = sb.procs.get(pid)
    if not p or p.popen.poll() is not None:
        raise ConnectError("not_found", "process with pid %d not found" % pid)
    return p


def send_signal(sb, req, user):
    p = selected(sb, req)
    sig = req.get("signal")
    sig = {"SIGNAL_SIGKILL": 9, "SIGNAL_SIGTERM": 15}.get(sig, sig)
    if sig not in (9, 15):
        raise ConnectError("invalid_argument", "invalid signal: %r" % (req.get("signal"),))
    if sig in (9, 15):
        p.out_cancelled.set()
    try:
        os.kill(p.popen.pid, sig)
    except OSError as e:
        raise ConnectError("internal", "error sending signal: %s" % e.strerror)
    return {}


def send_input(sb, req, user):
    p = selected(sb, req)
    data = base64.b64decode(((req.get("input") or {}).get("stdin")) or "")
    with p.stdin_lock:
        if not p.stdin_on or p.popen.stdin is None or p.popen.stdin.closed:
            raise ConnectError("failed_precondition", "stdin not enabled or closed")
        try:
            p.popen.stdin.write(data)
            p.popen.stdin.flush()
        except OSError as e:
            raise ConnectError("internal", "error writing to stdin: %s" % e.strerror)
    return {}


def close_stdin(sb, req, user):
    p = selected(sb, req)
    with p.stdin_lock:
        if p.popen.stdin and not p.popen.stdin.closed:
            try:
                p.popen.stdin.close()
            except OSError:
                pass
    return {}


def list_procs(sb, req, user):
    with sb.lock:
        procs = [(pid, p) for pid, p in sb.procs.items() if p.popen.poll() is None]
    return {"processes": [{"pid": pid, "config": p.config} for pid, p in procs]}


def list_dir(sb, req, user):
    host = sb.host(req.get("path") or "")
    depth = req.get("depth") or 1
    if not os.path.exists(host):
        raise ConnectError("not_found", "directory not found: %s" % sb.sandbox_path(host))
    if not os.path.isdir(host):
        raise ConnectError("invalid_argument", "path is not a directory: %s" % sb.sandbox_path(host))
    entries = []

    def walk(d, level):
        for name in os.listdir(d):
            h = os.path.join(d, name)
            entries.append(entry_info(sb, h))
            if level < depth and os.path.isdir(h) and not os.path.islink(h):
                walk(h, level + 1)

    walk(host, 1)
    entries.sort(key=lambda e: (e["type"] != "FILE_TYPE_DIRECTORY", e["name"].lower()))
    return {"entries": entries}


def make_dir(sb, req, user):
    host = sb.host(req.get("path") or "")
    if os.path.isdir(host):
        raise ConnectError("already_exists", "directory already exists: %s" % sb.sandbox_path(host))
    if os.path.exists(host):
        raise ConnectError("invalid_argument",
                           "path already exists but it is not a directory: %s" % sb.sandbox_path(host))
    os.makedirs(host)
    return {"entry": entry_info(sb, host)}


def remove(sb, req, user):
    host = sb.host(req.get("path") or "")
    if os.path.isdir(host) and not os.path.islink(host):
        shutil.rmtree(host, ignore_errors=True)
    elif os.path.lexists(host):
        os.unlink(host)
    return {}


def stat(sb, req, user):
    host = sb.host(req.get("path") or "")
    if not os.path.lexists(host):
        raise ConnectError("not_found", "file not found: %s" % sb.sandbox_path(host))
    return {"entry": entry_info(sb, host)}


UNARY = {
    "process.Process/SendSignal": send_signal,
    "process.Process/SendInput": send_input,
    "process.Process/CloseStdin": close_stdin,
    "process.Process/List": list_procs,
    "filesystem.Filesystem/ListDir": list_dir,
    "filesystem.Filesystem/MakeDir": make_dir,
    "filesystem.Filesystem/Remove": remove,
    "filesystem.Filesystem/Stat": stat,
}


def shutdown(*_):
    with State.lock:
        sbs = list(State.sandboxes.values())
        State.sandboxes.clear()
    for sb in sbs:
        sb.destroy()
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description="E2B stand-in for the sluice tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, a.port_file)
    else:
        print(port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
