#!/usr/bin/env bash
# CLI: `sluice serve` against clients that try to exhaust it (issue 13 §4).
#   - before authentication: a request without a valid key is answered 401
#     on its headers, before its body is read: a declared 10 MB body is not
#     waited for, an upload writes nothing to DATA/files, and 40 clients
#     sending 8 MB bodies at once do not grow the server's memory; a body
#     declared larger than the cap is refused (413) on its headers too.
#   - connections: 20,000 idle connections from one address (127.0.0.1) do
#     not slow /health or a run for another client (127.0.0.2): /health
#     within 100 ms, and the server's stderr stays under 1 MB; an idle
#     connection is closed after --header-timeout; --max-connections-per-ip
#     refuses one address's connections over it, not another's.
#   - --max-event-bytes: a run whose events pass it streams an explicit
#     error event, last, and its stored log is valid JSON ending with an
#     error event; the run itself goes on and is stored as it ended.
# Needs curl, jq and python3; prints TAP.
. "$(dirname "$0")/lib.bash"
# lib.bash's nok, with long lines (JSON bodies) cut and always ended, so
# the next TAP line starts a line of its own
nok() {
    n=$((n + 1)); echo "not ok $n - $*"
    cut -c1-300 "$T/out" 2>/dev/null | head -5 | sed 's/^/#   stdout: /'
    tail -5 "$T/err" 2>/dev/null | cut -c1-300 | sed 's/^/#   stderr: /'
}

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
elif cmd == "hold":
    # n idle connections (from address src), as many as it can open; prints
    # how many, then holds them until its stdin closes
    import resource
    n, src = int(args[0]), args[1]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held, failed = [], 0
    for _ in range(n):
        try:
            s = socket.socket()
            s.bind((src, 0))
            s.settimeout(3)
            s.connect(("127.0.0.1", port))
            held.append(s)
        except OSError:
            failed += 1
            s.close()
    print("opened %d failed %d" % (len(held), failed), flush=True)
    sys.stdin.read()
elif cmd == "closed":
    # does the server close an idle connection within `wait` seconds?
    src, wait = args[0], float(args[1])
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.settimeout(wait)
    t0 = time.monotonic()
    try:
        r = s.recv(1)
        print("closed %.1f" % (time.monotonic() - t0) if r == b"" else "data")
    except socket.timeout:
        print("open")
    except ConnectionResetError:
        print("closed %.1f" % (time.monotonic() - t0))
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

# ---- 20,000 idle connections from one address ----
log_before=$(stat -c %s "$T/serve.err")
exec 7> >(guard hold "$PORT" 10000 127.0.0.1 >"$T/hold1")
exec 8> >(guard hold "$PORT" 10000 127.0.0.1 >"$T/hold2")
for ((i = 0; i < 600; i++)); do
    [ -s "$T/hold1" ] && [ -s "$T/hold2" ] && break
    sleep 0.1
done
held=$(cat "$T/hold1" "$T/hold2" | awk '{ o += $2; f += $4 } END { print o + 0, f + 0 }')
check "two clients on 127.0.0.1 opened 20,000 connections (opened, failed: $held)" \
    [ "${held% *}" -ge 19000 ]
worst=0
for ((i = 0; i < 10; i++)); do
    t=$(curl -s -o "$T/out" -w '%{http_code} %{time_total}' --interface 127.0.0.2 --max-time 5 "$BASE/health")
    [ "${t% *}" = 200 ] || { worst=timeout; break; }
    worst=$(awk -v a="$worst" -v b="${t#* }" 'BEGIN { print (b > a ? b : a) }')
done
check "meanwhile /health from 127.0.0.2 answers within 100 ms (slowest of 10: $worst s)" \
    awk -v w="$worst" 'BEGIN { exit !(w != "timeout" && w < 0.1) }'
code=$(curl -s -o "$T/out" -w '%{http_code}' --interface 127.0.0.2 --max-time 5 -H "Authorization: Bearer $KEY" \
    -H 'Content-Type: application/json' --data-binary '{"inputs": {"x": "busy"}, "response_mode": "blocking", "user": "u"}' \
    "$BASE/v1/workflows/run")
check "… and runs a workflow for a client with a key (got $code)" \
    bash -c '[ "$0" = 200 ] && jq -e ".data.outputs.x == \"busy\"" "$1" >/dev/null' "$code" "$T/out"
exec 7>&- 8>&-
sleep 0.5
log=$(($(stat -c %s "$T/serve.err") - log_before))
check "the server wrote $log bytes to stderr meanwhile (under 1 MB)" [ "$log" -lt 1048576 ]
check "… and its messages about refused connections are rate-limited (at most 5 lines)" \
    [ "$(tail -c "$log" "$T/serve.err" | grep -c 'connection limit')" -le 5 ]
stop_server

# ---- timeouts and the per-address limit ----
if start_server "$T/serve2.err" --header-timeout 1 --idle-timeout 2 --max-connections-per-ip 5 \
    --max-event-bytes 4096; then
    ok "sluice serve starts with --header-timeout 1 --idle-timeout 2 --max-connections-per-ip 5 --max-event-bytes 4096"
else
    nok "sluice serve starts with --header-timeout 1 --idle-timeout 2 --max-connections-per-ip 5 --max-event-bytes 4096"
fi
r=$(guard closed "$PORT" 127.0.0.1 4)
check "an idle connection is closed after the 1 s header timeout (got: $r)" \
    bash -c 'case $0 in "closed "*) awk -v t="${0#closed }" "BEGIN { exit !(t >= 0.5 && t < 3) }" ;; *) false ;; esac' "$r"
exec 7> >(guard hold "$PORT" 5 127.0.0.1 >"$T/hold3")
for ((i = 0; i < 50; i++)); do [ -s "$T/hold3" ] && break; sleep 0.1; done
r=$(guard closed "$PORT" 127.0.0.1 0.8)
check "a 6th connection from 127.0.0.1 is refused (got: $r)" bash -c 'case $0 in "closed "*) true ;; *) false ;; esac' "$r"
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 --max-time 5 "$BASE/health")
check "… while 127.0.0.2 is served (got $code)" [ "$code" = 200 ]
exec 7>&-
# ---- the event cap ----
big=$(head -c 3000 /dev/zero | tr '\0' b)
curl -sN --max-time 10 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary "{\"inputs\": {\"x\": \"$big\"}, \"response_mode\": \"streaming\", \"user\": \"u\"}" \
    "$BASE/v1/workflows/run" >"$T/cap.sse" 2>/dev/null
crc=$?
"$PY" - "$T/cap.sse" >"$T/cap.txt" 2>&1 <<'PYEOF'
import json, sys
raw = open(sys.argv[1]).read()
ev = [json.loads(b[6:]) for b in raw.split("\n\n") if b.startswith("data: ")]
last = ev[-1] if ev else {}
print(len(raw), [e["event"] for e in ev][-1] if ev else "none", last.get("code"), last.get("workflow_run_id"))
PYEOF
read -r size lastev lastcode RUN <"$T/cap.txt"
check "a run whose events pass 4096 bytes: the stream ends (curl $crc) with an error event, last (got $lastev $lastcode, $size bytes)" \
    [ "$crc" = 0 -a "$lastev" = error -a "$lastcode" = stream_too_large -a "${size:-99999}" -lt 5200 ]
for ((i = 0; i < 50; i++)); do
    code=$(curl -s -o "$T/out" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/run/$RUN")
    [ "$(jq -r .status "$T/out" 2>/dev/null)" = succeeded ] && break
    sleep 0.1
done
check "… the run went on: stored as succeeded with its output (got $code)" \
    bash -c '[ "$0" = 200 ] && jq -e ".status == \"succeeded\" and (.outputs.x | length) == 3000" "$1" >/dev/null' "$code" "$T/out"
code=$(curl -s -o "$T/out" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$BASE/v1/workflows/runs/$RUN/events")
check "… and its stored events are valid JSON ending with an error event saying why (got $code)" \
    bash -c '[ "$0" = 200 ] && jq -e "(.data | length) >= 1 and .data[-1].event == \"error\" and (.data[-1].data.message | test(\"max-event-bytes\"))" "$1" >/dev/null' "$code" "$T/out"
code=$(curl -s -o "$T/out" -w '%{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary '{"inputs": {"x": "small"}, "response_mode": "streaming", "user": "u"}' "$BASE/v1/workflows/run")
check "a run under the cap streams whole, to workflow_finished (got $code)" \
    bash -c '[ "$0" = 200 ] && tail -c 2000 "$1" | grep -q "\"event\":\"workflow_finished\""' "$code" "$T/out"

sl serve --max-connections-per-ip 0
check "--max-connections-per-ip 0 is refused, saying what to give (exit $rc)" \
    bash -c '[ "$0" = 2 ] && grep -q "whole number" "$1"' "$rc" "$T/err"
sl serve --header-timeout 1.5
check "--header-timeout 1.5 is refused too (exit $rc)" [ "$rc" = 2 ]

stop_server
echo "1..$n"
