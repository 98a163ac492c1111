# Shared by the CLI scripts that talk to a running `sluice serve` (sourced
# after lib.bash): starting it, requests and their checks.  The script
# sets D (the data folder) and may kill the server with SPID.

# nok with the answer's long lines (JSON bodies) cut
nok() {
    n=$((n + 1)); echo "not ok $n - $*"
    cut -c1-300 "$T/out" 2>/dev/null | head -5 | sed 's/^/#   stdout: /'
    tail -5 "$T/err" 2>/dev/null | cut -c1-300 | sed 's/^/#   stderr: /'
}

# serve_start LOG [ARG...]: `sluice serve ARG...` with the data in $D on a free port of
# loopback (three tries), stderr appended to LOG; sets PORT, BASE and SPID
# once /health answers (5 s at most); fails otherwise.
serve_start() {
    local try i log=$1
    shift
    for try in 1 2 3; do
        PORT=$(free_port)
        "$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" "$@" >/dev/null 2>>"$log" &
        SPID=$!
        for ((i = 0; i < 100; i++)); do
            if curl -s --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"ok"'; then
                BASE=http://127.0.0.1:$PORT
                return 0
            fi
            kill -0 "$SPID" 2>/dev/null || break
            sleep 0.05
        done
        kill -KILL "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
        SPID=
    done
    return 1
}

# req KEY METHOD PATH [CURL-ARGS...]: the answer's body in $T/out, its
# HTTP status in $code; no KEY (''): no Authorization header; at most
# REQ_TIMEOUT seconds (30).
req() {
    local key=$1 method=$2 path=$3 auth=()
    shift 3
    [ -n "$key" ] && auth=(-H "Authorization: Bearer $key")
    : >"$T/err"
    code=$(curl -s -o "$T/out" -w '%{http_code}' --max-time "${REQ_TIMEOUT:-30}" -X "$method" \
        "${auth[@]}" "$@" \
        "$BASE$path" 2>"$T/err")
}

# is STATUS [JQ-EXPR]: the last answer had that status (and its body passes)
is() { [ "$code" = "$1" ] && { [ $# -lt 2 ] || jq -e "$2" "$T/out" >/dev/null 2>&1; }; }
