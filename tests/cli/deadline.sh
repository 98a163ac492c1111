#!/usr/bin/env bash
# CLI: a spent max_time_s ends a run at once, whatever node it is in, with
# an error naming the limit: a model call to a provider that says nothing
# (libcurl alone looked only once a second), an HTTP request to a silent
# server, a list-operator sorting a million items, pip installing the
# app's packages, a node waiting to retry.  Template nodes: bounds.sh.
# Prints TAP.
. "$(dirname "$0")/lib.bash"
PEER=
on_exit() { [ -n "$PEER" ] && kill -KILL "$PEER" 2>/dev/null && wait "$PEER" 2>/dev/null; }

# A loopback peer that reads the request and never answers.
start_silent_peer "$T/port"
PORT=$PEER_PORT

# elapsed: the run's own time from the CLI summary, in ms
elapsed() { sed -n 's/^workflow [a-z-]* in \([0-9]*\)\.[0-9] ms.*/\1/p' "$T/err" | tail -1; }

# ---- a model call ----
cat >"$T/llm.yml" <<'EOF'
app: {mode: workflow, name: think}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: llm
      data:
        type: llm
        title: Think
        model: {provider: openai, name: gpt-4o, mode: chat, completion_params: {}}
        prompt_template: [{role: user, text: hello}]
        context: {enabled: false, variable_selector: []}
        vision: {enabled: false}
    - {id: end, data: {type: end, title: End, outputs: [{variable: t, value_selector: [llm, text]}]}}
    edges:
    - {source: start, target: llm}
    - {source: llm, target: end}
EOF
OPENAI_API_KEY=sk-test OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" sl run "$T/llm.yml" --limit max_time_s=1.3
ms=$(elapsed)
check "a model call to a silent provider, max_time_s=1.3: exit 1 (got $rc)" [ "$rc" = 1 ]
check "… ends within 0.3 s of the deadline (${ms} ms)" [ "${ms:-99999}" -lt 1600 ]
check "… saying the limit and how to raise it" \
    err_has "node 'llm' (Think) failed: the run took longer than max_time_s (1.3 s); raise it with --limit max_time_s=N (it ended the call to model gpt-4o)"

# ---- an HTTP request ----
cat >"$T/http.yml" <<EOF
app: {mode: workflow, name: fetch}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - id: h
      data:
        type: http-request
        title: Fetch
        method: get
        url: http://127.0.0.1:$PORT/
        authorization: {type: no-auth}
        headers: ''
        params: ''
        body: {type: none, data: []}
    - {id: end, data: {type: end, title: End, outputs: []}}
    edges:
    - {source: start, target: h}
    - {source: h, target: end}
EOF
sl run "$T/http.yml" --limit http_allow_private=true --limit max_time_s=1.3
ms=$(elapsed)
check "an HTTP request to a silent server, max_time_s=1.3: exit 1 (got $rc), within 0.3 s (${ms} ms)" \
    [ "$rc" = 1 -a "${ms:-99999}" -lt 1600 ]
check "… saying the limit" err_has "the run's time budget (max_time_s=1.3) ran out during the HTTP request"

# ---- a list-operator on a million items ----
/usr/bin/python3 -c 'import json, random; random.seed(7); print(json.dumps({"xs": {"v": [random.random() for _ in range(1200000)]}}))' >"$T/big.json"
cat >"$T/sort.yml" <<'EOF'
app: {mode: workflow, name: sort}
kind: app
version: 0.1.5
workflow:
  graph:
    nodes:
    - id: start
      data:
        type: start
        title: Start
        variables: [{variable: xs, label: xs, type: json_object, required: true}]
    - id: lo
      data:
        type: list-operator
        title: Sort
        variable: [start, xs, v]
        filter_by: {enabled: true, conditions: [{key: '', comparison_operator: '>', value: '0.01'}]}
        extract_by: {enabled: false, serial: '1'}
        order_by: {enabled: true, key: '', value: desc}
        limit: {enabled: true, size: 3}
    - {id: end, data: {type: end, title: End, outputs: [{variable: r, value_selector: [lo, result]}]}}
    edges:
    - {source: start, target: lo}
    - {source: lo, target: end}
EOF
sl run "$T/sort.yml" --inputs @"$T/big.json" --limit max_output_bytes=64m
check "a list-operator sorts 1,200,000 numbers (exit $rc)" [ "$rc" = 0 ]
sl run "$T/sort.yml" --inputs @"$T/big.json" --limit max_output_bytes=64m --limit max_time_s=0.1
ms=$(elapsed)
check "… with max_time_s=0.1 the node itself stops (exit $rc, ${ms} ms)" \
    [ "$rc" = 1 -a "${ms:-99999}" -lt 600 ]
check "… saying the limit" \
    err_has "node 'lo' (Sort) failed: the run took longer than max_time_s (0.1 s); raise it with --limit max_time_s=N"

# ---- the app's packages, installed as its sandbox is made ----
# (a requirement that is a URL on the silent peer: pip waits 15 s per try)
cat >"$T/pkg.yml" <<EOF
app: {mode: workflow, name: pkg}
kind: app
version: 0.1.5
sluice:
  sandbox:
    network: open
    packages: {pip: ["http://127.0.0.1:$PORT/nothing-1.0.tar.gz"]}
workflow:
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: c, data: {type: command, title: Echo, command: "echo hi", working_directory: ""}}
    - {id: end, data: {type: end, title: End, outputs: []}}
    edges:
    - {source: start, target: c}
    - {source: c, target: end}
EOF
sl run "$T/pkg.yml" --limit max_time_s=1.5
ms=$(elapsed)
check "installing the app's packages, max_time_s=1.5: exit 1 (got $rc), within 0.5 s (${ms} ms)" \
    [ "$rc" = 1 -a "${ms:-99999}" -lt 2000 ]
check "… saying the limit" \
    err_has "the run took longer than max_time_s (1.5 s) while the app's pip packages were installing"
sl run "$T/pkg.yml" --limit install_timeout_s=1
ms=$(elapsed)
check "… with install_timeout_s=1 the install itself stops: exit 1 (got $rc, ${ms} ms)" \
    [ "$rc" = 1 -a "${ms:-99999}" -lt 5000 ]
check "… naming install_timeout_s and how to raise it" \
    err_has "(install_timeout_s=1; raise it with --limit install_timeout_s=N)"

# ---- a retry interval (up to 5 s) ----
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e "s|url: http://127.0.0.1:$PORT/|url: http://127.0.0.1:$CLOSED/|" \
    -e 's|body: {type: none, data: \[\]}|&\n        retry_config: {retry_enabled: true, max_retries: 10, retry_interval: 5000}|' \
    "$T/http.yml" >"$T/retry.yml"
sl run "$T/retry.yml" --limit http_allow_private=true --limit max_time_s=1.5
ms=$(elapsed)
check "a node waiting 5 s to retry, max_time_s=1.5: exit 1 (got $rc), within 0.5 s (${ms} ms)" \
    [ "$rc" = 1 -a "${ms:-99999}" -lt 2000 ]
check "… saying the limit" err_has "the run took longer than max_time_s (1.5 s) before retry 1"

echo "1..$n"
