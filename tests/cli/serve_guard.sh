#!/usr/bin/env bash
# CLI: `sluice serve` against clients that try to exhaust it (issue 13 §4).
#   - before authentication: a request without a valid key is answered 401
#     on its headers, before its body is read: a declared 10 MB body is not
#     waited for, an upload writes nothing to DATA/files, and 40 clients
#     sending 8 MB bodies at once do not grow the server's memory; a body
#     declared larger than the cap is refused (413) on its headers too.
# Needs curl, jq and python3; prints TAP.
. "$(dirname "$0")/lib.bash"

D=$T/data
SPID=
on_exit() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    wait 2>/dev/null
}
for tool in curl jq python3; do
    command -v "$tool" >/dev/null || { echo "1..0 # SKIP $tool is not installed"; exit 0; }
done
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server LOG [OPTIONS...]: `sluice serve` on $PORT with the data in
# $D (stderr to LOG); waits up to 5 s for /health.
start_server() {
    local log=$1
    shift
    "$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" "$@" >/dev/null 2>>"$log" &
    SPID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"' && return 0
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
    return 1
}
stop_server() {
    [ -n "$SPID" ] || return 0
    kill -TERM "$SPID" 2>/dev/null
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    SPID=
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$SPID/status"; }

# The raw-socket client: guard.py COMMAND PORT ARGS…, one line of results.
cat >"$T/guard.py" <<'PYEOF'
import socket, sys, threading, time

cmd, port = sys.argv[1], int(sys.argv[2])
args = sys.argv[3:]

def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s

def answer(s, wait):
    """The status line and body the server sent within `wait` seconds."""
    s.settimeout(wait)
    data = b""
    t0 = time.monotonic()
    try:
        while b"\r\n\r\n" not in data or len(data) < data.find(b"\r\n\r\n") + 4 + clen(data):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data, time.monotonic() - t0

def clen(data):
    for line in data.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0

def status(data):
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 else "none"

if cmd == "declared":
    # headers that declare a body, and no body: the answer must not wait for it
    path, key, length = args[0], args[1], int(args[2])
    s = conn()
    auth = "Authorization: Bearer %s\r\n" % key if key else ""
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\n"
               "Content-Length: %d\r\n\r\n" % (path, auth, length)).encode())
    data, took = answer(s, 3)
    print("%s %.0f" % (status(data), took * 1000))
elif cmd == "upload":
    # an upload without a key: headers, then the first MB of the file, a pause
    s = conn()
    body_head = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n"
                 b"Content-Type: application/octet-stream\r\n\r\n")
    total = len(body_head) + 4 * 1024 * 1024 + len(b"\r\n--XyZ--\r\n")
    s.sendall(("POST /v1/files/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
               "boundary=XyZ\r\nContent-Length: %d\r\n\r\n" % total).encode())
    try:
        s.sendall(body_head + b"a" * (1024 * 1024))
    except OSError:
        pass
    time.sleep(float(args[0]))
    data, took = answer(s, 2)
    print(status(data))
elif cmd == "flood":
    # n clients at once, each sending an mb-MB body without a key, then
    # holding the connection open for hold seconds
    n, mb, hold = int(args[0]), int(args[1]), float(args[2])
    codes = []
    def one():
        try:
            s = conn()
            s.sendall(("POST /v1/workflows/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Content-Length: %d\r\n\r\n" % (mb << 20)).encode())
            chunk = b"a" * 65536
            for _ in range((mb << 20) // 65536 - 1):
                s.sendall(chunk)
        except OSError:
            pass
        time.sleep(hold)
    ts = [threading.Thread(target=one) for _ in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("done")
PYEOF
guard() { timeout -k 2 60 "$PY" "$T/guard.py" "$@" 2>>"$T/err"; }

cat >"$T/wf.yml" <<'EOF2'
app: {mode: workflow, name: guard}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data: {type: start, title: Start, variables: [{variable: x, label: X, type: text-input, required: false}]}
    - id: end
      data: {type: end, title: End, outputs: [{variable: x, value_selector: [start, x]}]}
    edges:
    - {source: start, target: end}
EOF2
sl app import "$T/wf.yml" --data "$D"
APP=$(cat "$T/out")
sl app key create "$APP" --data "$D"
KEY=$(cat "$T/out")

PORT=$(free_port)
if ! start_server "$T/serve.err"; then
    nok "sluice serve starts"
    echo "1..$n"
    exit 1
fi
ok "sluice serve starts"
BASE=http://127.0.0.1:$PORT

# ---- before authentication ----
read -r st ms < <(guard declared "$PORT" /v1/workflows/run "" 10000000)
check "no key, 10 MB body declared and not sent: 401 on the headers (got $st after ${ms} ms)" \
    [ "$st" = 401 -a "${ms:-9999}" -lt 1500 ]
read -r st ms < <(guard declared "$PORT" /v1/workflows/run "app-0000000000000000" 10000000)
check "a wrong key: the same 401 on the headers (got $st after ${ms} ms)" \
    [ "$st" = 401 -a "${ms:-9999}" -lt 1500 ]
read -r st ms < <(guard declared "$PORT" /admin/apps "" 10000000)
check "the admin API without its token: 401 on the headers (got $st after ${ms} ms)" \
    [ "$st" = 401 -a "${ms:-9999}" -lt 1500 ]
read -r st ms < <(guard declared "$PORT" /v1/workflows/run "$KEY" 20000000)
check "a key and a body declared over the 15 MB cap: 413 on the headers (got $st after ${ms} ms)" \
    [ "$st" = 413 -a "${ms:-9999}" -lt 1500 ]
read -r st ms < <(guard declared "$PORT" /nowhere "" 10000000)
check "an unknown path with a declared body: 404 on the headers (got $st after ${ms} ms)" \
    [ "$st" = 404 -a "${ms:-9999}" -lt 1500 ]

ls -A "$D/files" >"$T/files-before"
guard upload "$PORT" 0.5 >"$T/up" &
up=$!
sleep 0.3
ls -A "$D/files" >"$T/files-during"
wait "$up"
check "an upload without a key writes nothing to DATA/files, not even while it is sent" \
    bash -c '[ ! -s "$0" ] && [ ! -s "$1" ]' "$T/files-before" "$T/files-during"
check "… and is answered 401 (got $(cat "$T/up"))" [ "$(cat "$T/up")" = 401 ]

rss0=$(rss_kb)
guard flood "$PORT" 40 8 1.5 >/dev/null &
fl=$!
peak=$rss0
for ((i = 0; i < 30; i++)); do
    r=$(rss_kb)
    [ "${r:-0}" -gt "$peak" ] && peak=$r
    sleep 0.1
done
wait "$fl"
grow=$(((peak - rss0) / 1024))
check "40 clients sending 8 MB bodies without a key: the server grows by ${grow} MB (at most 32)" \
    [ "$grow" -le 32 ]
code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $KEY" \
    -H 'Content-Type: application/json' --data-binary '{"inputs": {"x": "hi"}, "response_mode": "blocking", "user": "u"}' \
    "$BASE/v1/workflows/run")
check "… and still runs workflows (got $code)" \
    bash -c '[ "$0" = 200 ] && jq -e ".data.outputs.x == \"hi\"" "$1" >/dev/null' "$code" "$T/out"

stop_server
echo "1..$n"
