#!/usr/bin/env bash
# Self-test of tests/tools/llmd.py, the stand-in LLM server: starts it on a
# free port, drives every behaviour in both wire formats (OpenAI Chat
# Completions and Anthropic Messages, blocking and streaming) with curl,
# then stops it with SIGTERM.  Prints TAP.
. "$(dirname "$0")/../cli/lib.bash"
pid=
on_exit() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi; }

# chk.py MODE FILE EXPR: prints EXPR evaluated over FILE, a string as is,
# anything else as compact sorted JSON.  MODE json: `d` is the parsed file;
# raw: `s` is its text; oa / an: the variables below, from an OpenAI or
# Anthropic SSE stream.
cat >"$T/chk.py" <<'EOF'
import json, sys
mode, path, expr = sys.argv[1:4]
s = open(path, encoding="utf-8").read()
v = {"s": s}
if mode == "json":
    v["d"] = json.loads(s)
elif mode == "oa":
    v.update(text="", pieces=[], reasoning="", rpieces=[], finish=None, done=False,
             after_done=False, bad=0, errors=[], tools=[], targs=[], tdeltas=[],
             kinds=[], usage_chunks=[], usage_nonfinal=False, has_usage_key=False,
             ids=[], roles=[], nchunks=0)
    cur = {}
    for line in s.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if v["done"]:
            v["after_done"] = True
        if data == "[DONE]":
            v["done"] = True
            continue
        try:
            c = json.loads(data)
        except ValueError:
            v["bad"] += 1
            continue
        if "error" in c:
            v["errors"].append(c["error"])
            continue
        v["nchunks"] += 1
        v["ids"].append(c.get("id"))
        v["has_usage_key"] |= "usage" in c
        if not c["choices"]:
            v["usage_chunks"].append(c.get("usage"))
            continue
        if c.get("usage") is not None:
            v["usage_nonfinal"] = True
        ch = c["choices"][0]
        if ch.get("finish_reason"):
            v["finish"] = ch["finish_reason"]
        d = ch.get("delta") or {}
        if "role" in d:
            v["roles"].append(d["role"])
        if d.get("reasoning_content"):
            v["reasoning"] += d["reasoning_content"]; v["rpieces"].append(d["reasoning_content"]); v["kinds"].append("r")
        if d.get("content"):
            v["text"] += d["content"]; v["pieces"].append(d["content"]); v["kinds"].append("c")
        for tc in d.get("tool_calls") or []:
            i = tc["index"]
            v["tdeltas"].append([i, tc.get("id")])
            v["kinds"].append("t")
            if tc.get("id") and (i not in cur or cur[i]["id"] != tc["id"]):
                cur[i] = {"id": tc["id"], "name": "", "args": ""}
                v["tools"].append(cur[i])
            f = tc.get("function") or {}
            cur[i]["name"] += f.get("name") or ""
            if f.get("arguments"):
                cur[i]["args"] += f["arguments"]
                v["targs"].append(i)
    v["ids"] = sorted(set(v["ids"]))
elif mode == "an":
    v.update(events=[], text="", pieces=[], thinking="", signature="", blocks=[], tools=[],
             jpieces=0, stop=None, input_tokens=None, output_tokens=None, errors=[], bad=0,
             msg_id=None)
    for ev in s.replace("\r\n", "\n").split("\n\n"):
        name, data = None, None
        for line in ev.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data = line[5:].strip()
        if name is None and data is None:
            continue
        v["events"].append(name)
        try:
            e = json.loads(data)
        except (TypeError, ValueError):
            v["bad"] += 1
            continue
        t = e.get("type")
        if t == "message_start":
            v["msg_id"] = e["message"]["id"]
            v["input_tokens"] = e["message"]["usage"]["input_tokens"]
        elif t == "content_block_start":
            b = e["content_block"]
            v["blocks"].append(b["type"])
            if b["type"] == "tool_use":
                v["tools"].append({"id": b["id"], "name": b["name"], "args": ""})
        elif t == "content_block_delta":
            dl = e["delta"]
            if dl["type"] == "text_delta":
                v["text"] += dl["text"]; v["pieces"].append(dl["text"])
            elif dl["type"] == "thinking_delta":
                v["thinking"] += dl["thinking"]
            elif dl["type"] == "signature_delta":
                v["signature"] += dl["signature"]
            elif dl["type"] == "input_json_delta":
                v["tools"][-1]["args"] += dl["partial_json"]; v["jpieces"] += 1
        elif t == "message_delta":
            v["stop"] = e["delta"]["stop_reason"]
            v["output_tokens"] = e["usage"]["output_tokens"]
        elif t == "error":
            v["errors"].append(e["error"])
v["json"] = json
r = eval(expr, v)   # globals: comprehensions see the variables
print(r if isinstance(r, str) else json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
EOF

# python3 itself, not a version-manager shim, and -S: ~40 ms a start, not ~200
PY=$(python3 -c 'import sys; print(sys.executable)')
# is DESCRIPTION MODE EXPR WANT: ok when chk.py prints WANT for $T/out
is() {
    local got
    got=$("$PY" -S -E "$T/chk.py" "$2" "$T/out" "$3" 2>&1)
    if [ "$got" = "$4" ]; then ok "$1"; else
        nok "$1"; printf '#   got:  %s\n#   want: %s\n' "$got" "$4"
    fi
}

# req URL BODY CURL-ARGS...: POSTs BODY; response body in $T/out, headers in
# $T/hdr, HTTP status in $code, curl's exit status in $crc, seconds in $secs
req() {
    local url=$1 data=$2 t0 t1; shift 2
    : >"$T/out"; : >"$T/hdr"
    t0=$(date +%s%N)
    code=$(curl -sS -N --max-time "${MAXT:-10}" -D "$T/hdr" -o "$T/out" -w '%{http_code}' \
        -H 'Content-Type: application/json' "$@" --data-binary "$data" "$url" 2>"$T/err")
    crc=$?
    t1=$(date +%s%N)
    secs=$(( (t1 - t0) / 1000000 ))   # milliseconds, in fact
}
OAUTH=(-H 'Authorization: Bearer sk-test')
AAUTH=(-H 'x-api-key: ak-test' -H 'anthropic-version: 2023-06-01')
# body MODEL [STREAM] [EXTRA-FIELDS]: a request with one user message "one two three"
body() {
    printf '{"model":"%s","stream":%s,"max_tokens":64,"messages":[{"role":"user","content":"one two three"}]%s}' \
        "$1" "${2:-false}" "${3:+,$3}"
}
oa() { req "$URL/v1/chat/completions" "$(body "$@")" "${OAUTH[@]}"; }    # MODEL [STREAM] [EXTRA]
an() { req "$URL/v1/messages" "$(body "$@")" "${AAUTH[@]}"; }
hdr_has() { tr -d '\r' <"$T/hdr" | grep -qi -- "^$1"; }
reset() { curl -sS -o /dev/null -X POST "$URL/__reset"; }

# ---------------------------------------------------------------- start
mkdir -p "$T/scripts"
"$PY" tests/tools/llmd.py --port 0 --port-file "$T/port" --scripts "$T/scripts" >"$T/llmd.out" 2>"$T/llmd.err" &
pid=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port" 2>/dev/null)
URL=http://127.0.0.1:$PORT
if [ -z "$PORT" ]; then
    nok "llmd starts and writes --port-file"; sed 's/^/#   /' "$T/llmd.err"; echo "1..$n"; exit 1
fi
ok "llmd starts and writes its port to --port-file"
check "nothing on llmd's stdout with --port-file" [ ! -s "$T/llmd.out" ]
curl -sS -o "$T/out" "$URL/__log"
is "GET /__log starts empty" json 'd' '[]'

# ---------------------------------------------------------------- errors
req "$URL/v1/chat/completions" "$(body text)"
is "openai: no Authorization -> 401 OpenAI error" json '[d["error"]["code"], d["error"]["type"]]' \
    '["invalid_api_key","invalid_request_error"]'
check "openai: 401 status" [ "$code" = 401 ]
req "$URL/v1/chat/completions" "$(body text)" -H 'Authorization: Bearer bad-key'
is "openai: bad-key -> 401 naming it" json '[d["error"]["message"]]' '["Incorrect API key provided: bad-key."]'
check "openai: bad-key status 401" [ "$code" = 401 ]
req "$URL/v1/messages" "$(body text)" -H 'anthropic-version: 2023-06-01'
is "anthropic: no x-api-key -> 401 authentication_error" json '[d["type"], d["error"]["type"]]' '["error","authentication_error"]'
check "anthropic: no x-api-key status 401" [ "$code" = 401 ]
req "$URL/v1/messages" "$(body text)" -H 'x-api-key: k'
check "anthropic: no anthropic-version -> 401" [ "$code" = 401 ]
req "$URL/v1/messages" "$(body text)" -H 'x-api-key: bad-key' -H 'anthropic-version: 2023-06-01'
check "anthropic: bad-key -> 401" [ "$code" = 401 ]
req "$URL/v1/messages" "$(body text)" "${OAUTH[@]}" -H 'anthropic-version: 2023-06-01'
check "anthropic: a Bearer key is not enough -> 401" [ "$code" = 401 ]
oa nope
is "openai: unknown model -> 404 naming it" json '[d["error"]["code"], "`nope`" in d["error"]["message"]]' '["model_not_found",true]'
check "openai: unknown model status 404" [ "$code" = 404 ]
an 'nope:x'
is "anthropic: unknown model -> 404 naming it" json '[d["error"]["type"], "nope:x" in d["error"]["message"]]' '["not_found_error",true]'
check "anthropic: unknown model status 404" [ "$code" = 404 ]
req "$URL/chat/completions" "$(body text)" "${OAUTH[@]}"
is "POST /chat/completions works too" json 'd["choices"][0]["message"]["content"]' 'Hello from llmd.'
req "$URL/v1/chat/completions" '{"model": "text", ' "${OAUTH[@]}"
is "invalid JSON body -> 400" json '[d["error"]["type"]]' '["invalid_request_error"]'
check "invalid JSON body status 400" [ "$code" = 400 ]
req "$URL/v1/messages" '{"model":"text","messages":[]}' "${AAUTH[@]}"
is "anthropic: no max_tokens -> 400" json '[d["error"]["type"], d["error"]["message"]]' '["invalid_request_error","max_tokens: Field required"]'
req "$URL/v1/images/generations" '{}' "${OAUTH[@]}"
check "unknown path -> 404" [ "$code" = 404 ]
req "$URL/v1/embeddings" '{"model":"hash:4","input":["a b","b"]}' "${OAUTH[@]}"
is "embeddings: hash vectors of 4, by index" json '[[x["index"], len(x["embedding"])] for x in d["data"]] + [d["usage"]["total_tokens"]]' '[[0,4],[1,4],3]'
req "$URL/embeddings" '{"model":"hash","input":"a","dimensions":3,"encoding_format":"base64"}' "${OAUTH[@]}"
is "embeddings: dimensions and base64 (float32)" json '[len(d["data"][0]["embedding"])]' '[16]'
req "$URL/v1/embeddings" '{"model":"hash","input":["a",""]}' "${OAUTH[@]}"
check "embeddings: an empty input -> 400" [ "$code" = 400 ]
req "$URL/v1/rerank" '{"model":"overlap","query":"red cat","documents":["red","dog","cat red"],"top_n":2}' "${OAUTH[@]}"
is "rerank overlap: best first, top_n" json '[[r["index"], r["relevance_score"]] for r in d["results"]]' '[[2,1.0],[0,0.5]]'
req "$URL/rerank" '{"model":"tei","query":"red","documents":["red","dog"]}' "${OAUTH[@]}"
is "rerank tei: a top-level list" json 'd' '[{"index":0,"score":1.0},{"index":1,"score":0.0}]'
curl -sS -o "$T/out" "${OAUTH[@]}" "$URL/v1/models"
is "GET /v1/models lists the behaviours" json '[m["id"] for m in d["data"]][:3] + [len(d["data"])]' '["echo","text","think",20]'

# ---------------------------------------------------------------- echo
ECHO_OA='{"messages":[{"content":"be brief","role":"system"},{"content":"héllo wörld","role":"user"}],"params":{"max_tokens":64,"temperature":0.5,"tool_choice":"auto"},"system":null,"tools":[{"function":{"name":"f","parameters":{}},"type":"function"}]}'
ECHO_AN='{"messages":[{"content":"héllo wörld","role":"user"}],"params":{"max_tokens":64},"system":"be brief","tools":null}'
oa_echo() { req "$URL/v1/chat/completions" '{"model":"echo","stream":'"$1"',"stream_options":{"include_usage":true},"max_tokens":64,"temperature":0.5,"tool_choice":"auto","tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"héllo wörld"}]}' "${OAUTH[@]}"; }
an_echo() { req "$URL/v1/messages" '{"model":"echo","stream":'"$1"',"max_tokens":64,"system":"be brief","messages":[{"role":"user","content":"héllo wörld"}]}' "${AAUTH[@]}"; }
oa_echo false
is "echo openai blocking: the request as JSON" json 'd["choices"][0]["message"]["content"]' "$ECHO_OA"
oa_echo true
is "echo openai streaming: the same text" oa 'text' "$ECHO_OA"
is "echo openai streaming: 7-character pieces" oa '[len(p) for p in pieces[:-1]] == [7] * (len(pieces) - 1) and 0 < len(pieces[-1]) <= 7' 'true'
an_echo false
is "echo anthropic blocking: system and params" json 'd["content"][0]["text"]' "$ECHO_AN"
an_echo true
is "echo anthropic streaming: the same text" an 'text' "$ECHO_AN"
is "echo anthropic streaming: 7-character pieces" an 'sorted(set(map(len, pieces[:-1])))' '[7]'

# ---------------------------------------------------------------- text
reset
oa 'text:Good%20morning%20world'
is "text openai blocking: content, usage, id" json '[d["id"], d["object"], d["choices"][0]["message"], d["choices"][0]["finish_reason"], d["usage"]]' \
    '["chatcmpl-llmd-1","chat.completion",{"content":"Good morning world","role":"assistant"},"stop",{"completion_tokens":3,"prompt_tokens":3,"total_tokens":6}]'
check "blocking replies have a Content-Length" hdr_has 'content-length: '
oa 'text:Good%20morning%20world' true
is "text openai streaming: word pieces, stop, [DONE], no usage" oa '[pieces, roles, finish, done, has_usage_key, ids]' \
    '[["Good"," morning"," world"],["assistant"],"stop",true,false,["chatcmpl-llmd-2"]]'
check "streaming: Content-Type text/event-stream" hdr_has 'content-type: text/event-stream'
check "streaming: Cache-Control no-cache" hdr_has 'cache-control: no-cache'
check "streaming: no Content-Length" bash -c "! tr -d '\r' <'$T/hdr' | grep -qi '^content-length'"
oa 'text' true '"stream_options":{"include_usage":true}'
is "text openai streaming include_usage: last chunk has empty choices and usage" oa '[text, usage_chunks, usage_nonfinal, done]' \
    '["Hello from llmd.",[{"completion_tokens":3,"prompt_tokens":3,"total_tokens":6}],false,true]'
an 'text:Good%20morning%20world'
is "text anthropic blocking: content, usage, id" json '[d["id"], d["type"], d["content"], d["stop_reason"], d["usage"]]' \
    '["msg_llmd_4","message",[{"text":"Good morning world","type":"text"}],"end_turn",{"input_tokens":3,"output_tokens":3}]'
an 'text:Good%20morning%20world' true
is "text anthropic streaming: the event sequence" an 'events' \
    '["message_start","ping","content_block_start","content_block_delta","content_block_delta","content_block_delta","content_block_stop","message_delta","message_stop"]'
is "text anthropic streaming: pieces, stop, usage" an '[pieces, stop, input_tokens, output_tokens, msg_id]' \
    '[["Good"," morning"," world"],"end_turn",3,3,"msg_llmd_5"]'
req "$URL/v1/messages" '{"model":"text","max_tokens":5,"system":[{"type":"text","text":"be very brief"}],"messages":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"tool_result","tool_use_id":"x","content":"c d e"}]}]}' "${AAUTH[@]}"
is "text: prompt words count system and content blocks" json 'd["usage"]' '{"input_tokens":8,"output_tokens":3}'

# ---------------------------------------------------------------- think, reasoning
THINK='<think>pondering</think>The answer is 42.'
oa think
is "think openai blocking" json 'd["choices"][0]["message"]["content"]' "$THINK"
oa think true
is "think openai streaming: the tags in their own pieces" oa '[text, pieces[:3]]' "[\"${THINK//\"/\\\"}\",[\"<think>\",\"pondering\",\"</think>\"]]"
an think
is "think anthropic blocking: one text block" json 'd["content"]' "[{\"text\":\"$THINK\",\"type\":\"text\"}]"
an think true
is "think anthropic streaming: one text block" an '[blocks, text]' "[[\"text\"],\"$THINK\"]"
oa reasoning true
is "reasoning openai streaming: reasoning_content before content" oa '[reasoning, rpieces, text, "".join(kinds), finish]' \
    '["pondering",["pon","der","ing"],"The answer is 42.","rrrcccc","stop"]'
oa reasoning
is "reasoning openai blocking: reasoning_content and content" json '[d["choices"][0]["message"][k] for k in ("reasoning_content", "content")]' \
    '["pondering","The answer is 42."]'
an reasoning true
is "reasoning anthropic streaming: thinking block then text" an '[blocks, thinking, signature, text, stop]' \
    '[["thinking","text"],"pondering","llmd-signature","The answer is 42.","end_turn"]'
an reasoning
is "reasoning anthropic blocking" json '[[b["type"] for b in d["content"]], d["content"][0]["thinking"], d["content"][1]["text"]]' \
    '[["thinking","text"],"pondering","The answer is 42."]'

# ---------------------------------------------------------------- json, badjson
JM='json:%7B%22a%22%3A%5B1%2C2%5D%2C%22b%22%3A%22x%20y%22%7D'
JT='{"a":[1,2],"b":"x y"}'
oa "$JM"
is "json openai blocking: exactly the JSON" json 'd["choices"][0]["message"]["content"]' "$JT"
oa "$JM" true
is "json openai streaming" oa 'text' "$JT"
an "$JM"
is "json anthropic blocking" json 'd["content"][0]["text"]' "$JT"
an "$JM" true
is "json anthropic streaming" an 'text' "$JT"
BJ='{"a": 1,'
oa badjson
is "badjson openai blocking" json 'd["choices"][0]["message"]["content"]' "$BJ"
oa badjson true
is "badjson openai streaming" oa 'text' "$BJ"
an badjson
is "badjson anthropic blocking" json 'd["content"][0]["text"]' "$BJ"
an badjson true
is "badjson anthropic streaming" an 'text' "$BJ"

# ---------------------------------------------------------------- tool calls
TM='tool:get_weather:%7B%22city%22%3A%22Paris%22%7D'
oa "$TM" true
is "tool openai streaming: one call, arguments in 3 pieces" oa '[tools, targs, tdeltas[0], finish, text, done]' \
    '[[{"args":"{\"city\":\"Paris\"}","id":"call_1","name":"get_weather"}],[0,0,0],[0,"call_1"],"tool_calls","",true]'
oa "$TM"
is "tool openai blocking: tool_calls, content null" json '[d["choices"][0]["message"], d["choices"][0]["finish_reason"]]' \
    '[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]},"tool_calls"]'
an "$TM" true
is "tool anthropic streaming: tool_use block, input_json_delta pieces" an '[blocks, tools, jpieces, stop]' \
    '[["tool_use"],[{"args":"{\"city\":\"Paris\"}","id":"toolu_1","name":"get_weather"}],3,"tool_use"]'
an "$TM"
is "tool anthropic blocking: tool_use with parsed input" json '[d["content"], d["stop_reason"]]' \
    '[[{"id":"toolu_1","input":{"city":"Paris"},"name":"get_weather","type":"tool_use"}],"tool_use"]'
oa 'tool:lookup' true
is "tool:NAME: arguments {}" oa '[tools]' '[[{"args":"{}","id":"call_1","name":"lookup"}]]'
W2='[{"args":"{\"city\":\"Paris\"}","id":"call_1","name":"get_weather"},{"args":"{\"tz\":\"UTC\"}","id":"call_2","name":"get_time"}]'
oa tools2 true
is "tools2 openai streaming: two calls, pieces interleaved" oa '[tools, targs, finish]' "[$W2,[0,1,0,1,0,1],\"tool_calls\"]"
oa tools2
is "tools2 openai blocking: two tool_calls" json '[[c["id"], c["function"]["name"], c["function"]["arguments"]] for c in d["choices"][0]["message"]["tool_calls"]]' \
    '[["call_1","get_weather","{\"city\":\"Paris\"}"],["call_2","get_time","{\"tz\":\"UTC\"}"]]'
an tools2 true
is "tools2 anthropic streaming: two tool_use blocks" an '[blocks, tools, stop]' "[[\"tool_use\",\"tool_use\"],${W2//call_/toolu_},\"tool_use\"]"
an tools2
is "tools2 anthropic blocking" json '[[b["id"], b["name"], b["input"]] for b in d["content"]]' \
    '[["toolu_1","get_weather",{"city":"Paris"}],["toolu_2","get_time",{"tz":"UTC"}]]'
oa ollama-tools true
is "ollama-tools openai streaming: both at index 0, new ids, one chunk each" oa '[tdeltas, tools, finish]' \
    "[[[0,\"call_1\"],[0,\"call_2\"]],$W2,\"tool_calls\"]"
oa ollama-tools
is "ollama-tools openai blocking: two calls" json '[c["id"] for c in d["choices"][0]["message"]["tool_calls"]]' '["call_1","call_2"]'
an ollama-tools true
is "ollama-tools anthropic streaming: two tool_use blocks" an '[blocks, [t["id"] for t in tools]]' '[["tool_use","tool_use"],["toolu_1","toolu_2"]]'
an ollama-tools
is "ollama-tools anthropic blocking" json '[b["name"] for b in d["content"]]' '["get_weather","get_time"]'
oa badargs true
is "badargs openai streaming: invalid arguments" oa 'tools[0]["args"]' '{"city": "Par'
oa badargs
is "badargs openai blocking" json 'd["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]' '{"city": "Par'
an badargs true
is "badargs anthropic streaming" an '[tools[0]["args"], stop]' '["{\"city\": \"Par","tool_use"]'
an badargs
is "badargs anthropic blocking: input is the raw string" json 'd["content"][0]["input"]' '{"city": "Par'

# ---------------------------------------------------------------- midstream-error
oa midstream-error true
is "midstream-error openai streaming: two pieces, error chunk, no [DONE]" oa '[pieces, errors, done, finish]' \
    '[["Hello"," from"],[{"message":"upstream overloaded","type":"server_error"}],false,null]'
check "midstream-error openai: the error line as specified" grep -qF 'data: {"error": {"message": "upstream overloaded", "type": "server_error"}}' "$T/out"
an midstream-error true
is "midstream-error anthropic streaming: error event, no message_stop" an '[text, events[-1], errors, "message_stop" in events]' \
    '["Hello from","error",[{"message":"upstream overloaded","type":"overloaded_error"}],false]'
oa midstream-error
is "midstream-error openai blocking: 200 with an error body" json "[$code, d['error']['message']]" '[200,"upstream overloaded"]'
an midstream-error
is "midstream-error anthropic blocking: 200 with an error body" json "[$code, d['type'], d['error']['type']]" '[200,"error","overloaded_error"]'

# ---------------------------------------------------------------- ratelimit, error500
codes=
for i in 1 2 3 4; do oa ratelimit:2; codes="$codes $code"; [ $i = 1 ] && cp "$T/hdr" "$T/hdr429" && cp "$T/out" "$T/out429"; done
check "ratelimit:2 openai: 429 429 200 200" [ "$codes" = " 429 429 200 200" ]
check "ratelimit: Retry-After: 1" bash -c "tr -d '\r' <'$T/hdr429' | grep -qix 'retry-after: 1'"
is "ratelimit: after the refusals it is text" json 'd["choices"][0]["message"]["content"]' 'Hello from llmd.'
cp "$T/out429" "$T/out"
is "ratelimit openai: error JSON" json '[d["error"]["code"], d["error"]["type"]]' '["rate_limit_exceeded","requests"]'
an 'ratelimit:1' true
is "ratelimit:1 anthropic: 429 rate_limit_error" json "[$code, d['error']['type']]" '[429,"rate_limit_error"]'
an 'ratelimit:1' true
is "ratelimit:1 anthropic: then a stream" an "[$code, text, stop]" '[200,"Hello from llmd.","end_turn"]'
oa 'ratelimit:1'
check "ratelimit: each model string counts apart" [ "$code" = 200 ]
reset
oa ratelimit:2
check "ratelimit: /__reset restarts the count" [ "$code" = 429 ]
oa error500:1
is "error500:1 openai: 500 server_error" json "[$code, d['error']['type']]" '[500,"server_error"]'
check "error500: no Retry-After" bash -c "! tr -d '\r' <'$T/hdr' | grep -qi '^retry-after'"
oa error500:1 true
is "error500:1 openai: then a stream" oa "[$code, text, done]" '[200,"Hello from llmd.",true]'
an error500:01     # a model string of its own: error500:1 is used up
is "error500:01 anthropic: 500 api_error" json "[$code, d['error']['type']]" '[500,"api_error"]'
an error500:01
is "error500:01 anthropic: then the text" json "[$code, d['content'][0]['text']]" '[200,"Hello from llmd."]'

# ---------------------------------------------------------------- drop
oa drop true
is "drop openai streaming: one piece, then the connection closes" oa "[$code, pieces, done, finish]" '[200,["Hello"],false,null]'
oa drop
check "drop openai blocking: no response at all (curl 52)" [ "$crc" = 52 -a ! -s "$T/out" ]
an drop true
is "drop anthropic streaming: no message_stop" an '[text, events[-1]]' '["Hello","content_block_delta"]'
an drop
check "drop anthropic blocking: no response at all (curl 52)" [ "$crc" = 52 ]

# ---------------------------------------------------------------- slow, hang
oa slow:150 true
is "slow:150 openai streaming: a b c d e, word by word" oa '[pieces, done]' '[["a"," b"," c"," d"," e"],true]'
check "slow:150 takes at least 5 x 150 ms (took ${secs} ms)" [ "$secs" -ge 740 ]
MAXT=0.3 oa slow:150 true
check "slow:150: a 0.3 s client timeout fires (curl 28)" [ "$crc" = 28 ]
an slow:100 true
is "slow:100 anthropic streaming" an '[text, stop]' '["a b c d e","end_turn"]'
check "slow:100 anthropic takes at least 500 ms (took ${secs} ms)" [ "$secs" -ge 490 ]
oa slow:100
is "slow:100 openai blocking" json 'd["choices"][0]["message"]["content"]' 'a b c d e'
check "slow:100 blocking waits 500 ms (took ${secs} ms)" [ "$secs" -ge 490 ]
an slow:50
is "slow anthropic blocking" json 'd["content"][0]["text"]' 'a b c d e'
t0=$(date +%s%N)
pids=()
for i in 1 2 3 4; do
    curl -sS -N -o "$T/par$i" "${OAUTH[@]}" --data-binary "$(body slow:150 true)" "$URL/v1/chat/completions" &
    pids+=($!)
done
wait "${pids[@]}"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# one after the other would take 4 x 750 ms
check "four slow streams run concurrently (took ${ms} ms)" [ "$ms" -lt 2500 ]
check "the concurrent streams all completed" bash -c "grep -c '\[DONE\]' '$T'/par? | grep -c ':1\$' | grep -qx 4"
MAXT=0.5 oa hang
check "hang openai blocking: no answer within 0.5 s (curl 28)" [ "$crc" = 28 -a "$code" = 000 ]
MAXT=0.5 an hang true
check "hang anthropic streaming: no answer within 0.5 s (curl 28)" [ "$crc" = 28 -a ! -s "$T/hdr" ]
# hang:2 in the background while the next checks run; waited for below
t_hang=$(date +%s%N)
curl -sS -o /dev/null --max-time 10 "${OAUTH[@]}" --data-binary "$(body hang:2)" "$URL/v1/chat/completions" 2>/dev/null &
hang_curl=$!
sleep 0.1
oa text
check "a hanging request does not block others (${secs} ms)" [ "$code" = 200 -a "$secs" -lt 1500 ]

# ---------------------------------------------------------------- malformed, length, usage-only-last
oa malformed true
is "malformed openai streaming: one chunk, a bad line, [DONE]" oa '[nchunks, pieces, bad, done]' '[1,["Hello"],1,true]'
check "malformed: the bad line is data: {not json" grep -qx 'data: {not json' "$T/out"
an malformed true
is "malformed anthropic streaming: one delta, a bad event, a normal end" an '[pieces, bad, events[-1], stop]' '[["Hello"],1,"message_stop","end_turn"]'
oa malformed
is "malformed openai blocking: the body is {not json" raw 's' '{not json'
an malformed
is "malformed anthropic blocking: the body is {not json" raw "[$code, s]" '[200,"{not json"]'
oa length
is "length openai blocking: finish_reason length" json '[d["choices"][0]["message"]["content"], d["choices"][0]["finish_reason"]]' '["truncated","length"]'
oa length true
is "length openai streaming" oa '[text, finish]' '["truncated","length"]'
an length
is "length anthropic blocking: stop_reason max_tokens" json '[d["content"][0]["text"], d["stop_reason"]]' '["truncated","max_tokens"]'
an length true
is "length anthropic streaming" an '[text, stop]' '["truncated","max_tokens"]'
U117='{"completion_tokens":7,"prompt_tokens":11,"total_tokens":18}'
oa usage-only-last true
is "usage-only-last openai streaming: usage only in the last empty-choices chunk" oa '[text, usage_chunks, usage_nonfinal, done]' \
    "[\"Seven words of text in this reply.\",[$U117],false,true]"
oa usage-only-last
is "usage-only-last openai blocking" json 'd["usage"]' "$U117"
an usage-only-last true
is "usage-only-last anthropic streaming" an '[input_tokens, output_tokens]' '[11,7]'
an usage-only-last
is "usage-only-last anthropic blocking" json 'd["usage"]' '{"input_tokens":11,"output_tokens":7}'

wait "$hang_curl"; hrc=$?
ms=$(( ($(date +%s%N) - t_hang) / 1000000 ))
check "hang:2 closes after 2 s without a reply (curl 52; took ${ms} ms)" [ "$hrc" = 52 -a "$ms" -ge 1900 ]

# ---------------------------------------------------------------- script
cat >"$T/scripts/demo.json" <<'EOF'
{"turns": [
  {"expect_system": ["use skills"], "text": "Let me look.",
   "tool_calls": [{"name": "bash", "arguments": {"command": "ls /skills"}},
                  {"name": "read", "arguments": {"path": "/skills/pdf/SKILL.md", "limit": 5}}]},
  {"expect": ["SKILL.md", "exit 0"], "text": "Done."},
  {"tool_calls": [{"name": "bash", "arguments": {}}]}
]}
EOF
printf '{"turns": [{"text": "one"}, ' >"$T/scripts/broken.json"
printf '{"turns": [{"text": "ok"}, {"tool_calls": [{"arguments": {}}]}]}' >"$T/scripts/badturn"
# Bodies at turn 0 and 1: $1 the stream flag; $2 the script (turn 0), the
# system prompt (an0) or what the first tool result says (turn 1).
SCRIPT_A1='{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_0_1","type":"function","function":{"name":"bash","arguments":"{}"}}]}'
oa0() { printf '{"model":"script:%s","stream":%s,"messages":[{"role":"system","content":"use skills"},{"role":"user","content":"hi"}]}' "${2-demo}" "$1"; }
oa1() { printf '{"model":"script:demo","stream":%s,"messages":[{"role":"system","content":"use skills"},{"role":"user","content":"hi"},%s,{"role":"tool","tool_call_id":"call_0_1","content":"%s"},{"role":"tool","tool_call_id":"call_0_2","content":"exit 0"}]}' \
    "$1" "$SCRIPT_A1" "$2"; }
an0() { printf '{"model":"script:demo","stream":%s,"max_tokens":64,"system":[{"type":"text","text":"%s"}],"messages":[{"role":"user","content":"hi"}]}' "$1" "${2:-use skills}"; }
AN_A1='{"role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_0_1","name":"bash","input":{}}]}'
an1() { printf '{"model":"script:demo","stream":%s,"max_tokens":64,"system":"use skills","messages":[{"role":"user","content":"hi"},%s,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_0_1","content":"%s"},{"type":"tool_result","tool_use_id":"toolu_0_2","content":[{"type":"text","text":"exit 0"}]}]}]}' \
    "$1" "$AN_A1" "$2"; }
oas() { req "$URL/v1/chat/completions" "$1" "${OAUTH[@]}"; }
ans() { req "$URL/v1/messages" "$1" "${AAUTH[@]}"; }
S0_TOOLS='[{"args":"{\"command\":\"ls /skills\"}","id":"call_0_1","name":"bash"},{"args":"{\"path\":\"/skills/pdf/SKILL.md\",\"limit\":5}","id":"call_0_2","name":"read"}]'

oas "$(oa0 false)"
is "script openai blocking turn 0: text and two tool calls, ids call_0_I, usage" json \
    '[d["choices"][0]["message"]["content"], [[c["id"], c["function"]["name"], c["function"]["arguments"]] for c in d["choices"][0]["message"]["tool_calls"]], d["choices"][0]["finish_reason"], d["usage"]]' \
    '["Let me look.",[["call_0_1","bash","{\"command\":\"ls /skills\"}"],["call_0_2","read","{\"path\":\"/skills/pdf/SKILL.md\",\"limit\":5}"]],"tool_calls",{"completion_tokens":6,"prompt_tokens":3,"total_tokens":9}]'
oas "$(oa0 true)"
is "script openai streaming turn 0: text word by word, calls in 3 pieces each" oa '[pieces, tools, targs, finish, done]' \
    "[[\"Let\",\" me\",\" look.\"],$S0_TOOLS,[0,0,0,1,1,1],\"tool_calls\",true]"
oas "$(oa0 false demo.json)"
is "script:NAME.json names the same script" json '[len(d["choices"][0]["message"]["tool_calls"])]' '[2]'
ans "$(an0 false)"
is "script anthropic blocking turn 0: text and tool_use blocks, ids toolu_0_I, input objects" json \
    '[[[b["type"], b.get("id"), b.get("input", b.get("text"))] for b in d["content"]], d["stop_reason"]]' \
    '[[["text",null,"Let me look."],["tool_use","toolu_0_1",{"command":"ls /skills"}],["tool_use","toolu_0_2",{"limit":5,"path":"/skills/pdf/SKILL.md"}]],"tool_use"]'
ans "$(an0 true)"
is "script anthropic streaming turn 0: blocks, input_json_delta pieces, tool_use" an '[blocks, text, tools, jpieces, stop, output_tokens]' \
    "[[\"text\",\"tool_use\",\"tool_use\"],\"Let me look.\",${S0_TOOLS//call_/toolu_},6,\"tool_use\",6]"

oas "$(oa1 false 'pdf/SKILL.md')"
is "script openai blocking turn 1: expect met -> the text, stop" json \
    '[d["choices"][0]["message"], d["choices"][0]["finish_reason"]]' '[{"content":"Done.","role":"assistant"},"stop"]'
oas "$(oa1 true 'pdf/SKILL.md')"
is "script openai streaming turn 1" oa '[text, tools, finish, done]' '["Done.",[],"stop",true]'
ans "$(an1 false 'pdf/SKILL.md')"
is "script anthropic blocking turn 1: tool_result as a string and as text blocks" json \
    '[d["content"], d["stop_reason"]]' '[[{"text":"Done.","type":"text"}],"end_turn"]'
ans "$(an1 true 'pdf/SKILL.md')"
is "script anthropic streaming turn 1" an '[text, stop]' '["Done.","end_turn"]'

MISMATCH='SCRIPT MISMATCH turn 1: expected \"SKILL.md\" in the tool results, got: nothing here\nexit 0'
oas "$(oa1 false 'nothing here')"
is "script openai blocking: a missing expect -> SCRIPT MISMATCH, stop" json \
    '[d["choices"][0]["message"]["content"], d["choices"][0]["finish_reason"], "tool_calls" in d["choices"][0]["message"]]' \
    "[\"$MISMATCH\",\"stop\",false]"
oas "$(oa1 true 'nothing here')"
is "script openai streaming: SCRIPT MISMATCH" oa '[text, finish]' "[\"$MISMATCH\",\"stop\"]"
ans "$(an1 false 'nothing here')"
is "script anthropic blocking: SCRIPT MISMATCH, end_turn" json '[d["content"][0]["text"], d["stop_reason"]]' "[\"$MISMATCH\",\"end_turn\"]"
ans "$(an1 true 'nothing here')"
is "script anthropic streaming: SCRIPT MISMATCH" an '[text, stop, blocks]' "[\"$MISMATCH\",\"end_turn\",[\"text\"]]"
LONG=$(printf 'x%.0s' $(seq 600))
oas "$(oa1 false "$LONG")"
is "script: the mismatch shows the first 500 characters of the results" json \
    'd["choices"][0]["message"]["content"].split("got: ")[1] == "x" * 500' 'true'
oas '{"model":"script:demo","messages":[{"role":"system","content":"use skills"},{"role":"tool","content":"SKILL.md exit 0"},'"$SCRIPT_A1"',{"role":"tool","content":"other"}]}'
is "script: tool results before the last assistant message do not count" json \
    'd["choices"][0]["message"]["content"].startswith("SCRIPT MISMATCH turn 1: expected \"SKILL.md\"")' 'true'

ans "$(an0 false 'no hint')"
is "script anthropic: expect_system missing -> SCRIPT MISMATCH naming the system prompt" json '[d["content"][0]["text"], d["stop_reason"]]' \
    '["SCRIPT MISMATCH turn 0: expected \"use skills\" in the system prompt, got: no hint","end_turn"]'
oas '{"model":"script:demo","messages":[{"role":"user","content":"hi"}]}'
is "script openai: no system message -> SCRIPT MISMATCH" json 'd["choices"][0]["message"]["content"]' \
    'SCRIPT MISMATCH turn 0: expected "use skills" in the system prompt, got: '
oas '{"model":"script:demo","messages":[{"role":"developer","content":"please use skills"},{"role":"user","content":"hi"}]}'
is "script openai: a developer message is the system prompt too" json 'd["choices"][0]["finish_reason"]' 'tool_calls'

oas '{"model":"script:demo","messages":[{"role":"system","content":"use skills"},'"$SCRIPT_A1,$SCRIPT_A1,$SCRIPT_A1"']}'
is "script openai blocking: past the last turn -> SCRIPT END, stop" json '[d["choices"][0]["message"]["content"], d["choices"][0]["finish_reason"]]' \
    '["SCRIPT END: no turn 3","stop"]'
ans '{"model":"script:demo","stream":true,"max_tokens":9,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"},{"role":"user","content":"e"},{"role":"assistant","content":"f"},{"role":"user","content":"g"}]}'
is "script anthropic streaming: SCRIPT END" an '[text, stop]' '["SCRIPT END: no turn 3","end_turn"]'
ans '{"model":"script:demo","max_tokens":9,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"},{"role":"user","content":"e"}]}'
is "script anthropic: a turn with tool calls and no text" json '[d["content"], d["stop_reason"]]' \
    '[[{"id":"toolu_2_1","input":{},"name":"bash","type":"tool_use"}],"tool_use"]'

oas "$(oa0 false 'a%2Fb')"
is "script:a/b -> 400 saying a script name is a file name" json "[$code, d['error']['type'], 'a script name is a file name in the scripts folder' in d['error']['message']]" \
    '[400,"invalid_request_error",true]'
oas "$(oa0 false '..')"
check "script:.. -> 400" [ "$code" = 400 ]
oas "$(oa0 false '')"
check "script: with no name -> 400" [ "$code" = 400 ]
oas "$(oa0 false nope)"
is "script:nope -> 404 model_not_found naming the folder" json "[$code, d['error']['code'], d['error']['message']]" \
    "[404,\"model_not_found\",\"model script:nope: no script nope (nor nope.json) in $T/scripts\"]"
ans '{"model":"script:nope","max_tokens":9,"messages":[]}'
is "script:nope anthropic -> 404 not_found_error" json "[$code, d['error']['type']]" '[404,"not_found_error"]'
oas "$(oa0 false broken)"
is "script: a file that is not JSON -> 400 naming it" json "[$code, 'cannot read' in d['error']['message'] and 'broken.json' in d['error']['message']]" '[400,true]'
oas "$(oa0 false badturn)"
is "script: a tool call without a name -> 400 naming the turn" json "[$code, d['error']['message'].endswith('turn 1: tool call 1 needs a name and arguments (an object)')]" '[400,true]'

# LLMD_SCRIPTS instead of --scripts
mkdir -p "$T/env-scripts"
echo '{"turns": [{"text": "from the env folder"}]}' >"$T/env-scripts/e.json"
LLMD_SCRIPTS="$T/env-scripts" "$PY" tests/tools/llmd.py --port 0 --port-file "$T/port2" 2>>"$T/llmd.err" &
pid2=$!
for ((i = 0; i < 100; i++)); do [ -s "$T/port2" ] && break; sleep 0.05; done
req "http://127.0.0.1:$(cat "$T/port2")/v1/chat/completions" '{"model":"script:e","messages":[]}' "${OAUTH[@]}"
is "LLMD_SCRIPTS names the scripts folder" json 'd["choices"][0]["message"]["content"]' 'from the env folder'
kill -TERM "$pid2"; wait "$pid2" 2>/dev/null

# ---------------------------------------------------------------- /__log
reset
curl -sS -o "$T/out" "$URL/__log"
is "POST /__reset empties the log" json 'd' '[]'
oa 'text:hi' false '"temperature":0'
an 'text:hi' true
req "$URL/v1/chat/completions" 'not json' -H 'Authorization: Bearer bad-key'
curl -sS -o "$T/out" "$URL/__log"
is "/__log: one entry per request" json '[(e["method"], e["path"]) for e in d]' \
    '[["POST","/v1/chat/completions"],["POST","/v1/messages"],["POST","/v1/chat/completions"]]'
is "/__log: authorization redacted with its length" json 'd[0]["headers"]["authorization"]' '<redacted:14>'
is "/__log: x-api-key redacted, other headers kept" json '[d[1]["headers"]["x-api-key"], d[1]["headers"]["anthropic-version"]]' \
    '["<redacted:7>","2023-06-01"]'
is "/__log: header names lowercased" json 'all(k == k.lower() for e in d for k in e["headers"])' 'true'
is "/__log: the body parsed" json 'd[0]["body"]' \
    '{"max_tokens":64,"messages":[{"content":"one two three","role":"user"}],"model":"text:hi","stream":false,"temperature":0}'
is "/__log: unparsable body kept as text, failed auth logged" json '[d[2]["body"], d[2]["headers"]["authorization"]]' '["not json","<redacted:14>"]'
check "/__log: no secret in the log" bash -c "! grep -q -e sk-test -e ak-test -e bad-key '$T/out'"

# ---------------------------------------------------------------- stop
kill -TERM "$pid"
for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then nok "llmd exits on SIGTERM"; else
    wait "$pid"; src=$?; pid=
    check "llmd exits 0 on SIGTERM" [ "$src" = 0 ]
fi
check "llmd wrote nothing to stderr" [ ! -s "$T/llmd.err" ]
echo "1..$n"
