#!/usr/bin/env bash
# The sandboxed runtime from the command line: agent apps as .zip bundles
# (export -> run -> export again), --out, refused bundles, and the network
# policy (a package installed from a package index on loopback through the
# allow-list proxy; a host not on the list refused).  The model is llmd
# with scripted tool calls (tests/agent/scripts).
. "$(dirname "$0")/lib.bash"

PIDS=()
on_exit() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }

python3 tests/tools/llmd.py --port 0 --port-file "$T/llmd.port" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$T/llmd.port" ] && break; sleep 0.05; done
export SLUICE_LLM_BASE_URL="http://127.0.0.1:$(cat "$T/llmd.port")/v1" SLUICE_LLM_API_KEY=test

# A clean DSL from a test case (the sluice_test keys dropped).
dsl_of() { python3 - "$1" "$2" <<'EOF'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for k in ("sluice_test", "sluice_app_dir", "sluice_config"):
    d.pop(k, None)
yaml.safe_dump(d, open(sys.argv[2], "w"), allow_unicode=True, sort_keys=False)
EOF
}
printf 'month,sales\nJan,3\nFeb,5\nMar,2\n' >"$T/sales.csv"

# ---- bundles ----
dsl_of tests/cases/agent/agent_skills.yml "$T/skills.yml"
sl export "$T/skills.yml"
check "a sandboxed app does not export to stdout: it needs -o FILE.zip" \
    test "$rc" = 2 -a -n "$(grep -F 'exports as a .zip bundle' "$T/err")"
sl export "$T/skills.yml" --app-dir tests/agent/apps/skills_app -o "$T/app.zip"
check "export writes a .zip bundle" test "$rc" = 0 -a -s "$T/app.zip"
unzip -l "$T/app.zip" >"$T/list" 2>&1
check "the bundle holds the DSL, manifest.json and the app's files" \
    grep -q 'manifest.json' "$T/list"
check "... the skill folders among them" grep -q 'agent skills/skills/csv-report/SKILL.md' "$T/list"
python3 - "$T/app.zip" >"$T/manifest.check" 2>&1 <<'EOF'
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
m = json.loads(z.read("manifest.json"))
assert m["schema_version"] == "1.0", m
assert m["dsl_filename"] == "agent skills.yml", m
paths = sorted(f["path"] for f in m["files"])
assert paths == ["skills/broken/SKILL.md", "skills/csv-report/SKILL.md",
                 "skills/csv-report/scripts/count.py"], paths
assert m["integrity"]["file_count"] == 3, m
print("manifest ok")
EOF
check "the manifest lists every file with its count" grep -q 'manifest ok' "$T/manifest.check"

sl run "$T/app.zip" --input "data=@$T/sales.csv" --out "$T/outdir"
check "sluice run runs the bundle (skills from the zip)" test "$rc" = 0
check "... and --out writes the agent's file by its name" grep -q PINEAPPLE "$T/outdir/report.txt"
check "... saying where" err_has "wrote $T/outdir/report.txt"
sl run "$T/app.zip" --input "data=@$T/sales.csv" --out "$T/outdir"
check "a second run does not overwrite: report-2.txt" test -s "$T/outdir/report-2.txt"
sl run "$T/app.zip" --input "data=@$T/sales.csv"
check "without --out the run says how to keep its files" err_has "the run made 1 file; pass --out DIR to keep it"

sl export "$T/app.zip" -o "$T/again.zip"
python3 - "$T/app.zip" "$T/again.zip" >"$T/ids.check" 2>&1 <<'EOF'
import json, sys, zipfile
a, b = (json.loads(zipfile.ZipFile(p).read("manifest.json")) for p in sys.argv[1:3])
ids = lambda m: sorted((f["path"], f["node_id"]) for f in m["files"])
assert ids(a) == ids(b), (ids(a), ids(b))
print("same ids")
EOF
check "export of an imported bundle keeps the files' node ids" grep -q 'same ids' "$T/ids.check"

sl export "$T/app.zip" --app-dir tests/agent/apps/skills_app -o "$T/x.zip"
check "--app-dir with a bundle is refused (it carries its own files)" \
    test "$rc" = 2 -a -n "$(grep -F 'carries its own files' "$T/err")"

head -c 300 "$T/app.zip" >"$T/cut.zip"
sl run "$T/cut.zip"
check "a truncated bundle is refused with a reason, exit 2" \
    test "$rc" = 2 -a -n "$(grep -F "$T/cut.zip" "$T/err")"
python3 tests/tools/mkzip.py traversal "$T/evil.zip" >/dev/null 2>&1 ||
    python3 - "$T/evil.zip" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w")
z.writestr("a.yml", "app: {}\n")
z.writestr("manifest.json", "{}")
z.writestr("../escape.txt", "x")
EOF
sl run "$T/evil.zip"
check "a bundle with a path escaping its folder is refused, nothing written" \
    test "$rc" = 2 -a ! -e "$T/escape.txt" -a -n "$(grep -F '..' "$T/err")"

dsl_of tests/cases/agent/agent_mode_off.yml "$T/classic.yml"
sl export "$T/classic.yml" -o "$T/classic-out.yml"
check "a classic app still exports as YAML" grep -q 'kind: app' "$T/classic-out.yml"

# ---- network policy: a package from a local index through the proxy ----
mkdir -p "$T/index/simple/sluicedemo"
python3 - "$T/index" <<'EOF'
import base64, hashlib, sys, zipfile
root = sys.argv[1]
files = {
    "sluicedemo/__init__.py": b"def hello():\n    return 'hello from sluicedemo'\n",
    "sluicedemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sluicedemo\nVersion: 1.0\n",
    "sluicedemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: sluice-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for name, data in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record += f"{name},sha256={h},{len(data)}\n"
record += "sluicedemo-1.0.dist-info/RECORD,,\n"
whl = f"{root}/sluicedemo-1.0-py3-none-any.whl"
with zipfile.ZipFile(whl, "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
    z.writestr("sluicedemo-1.0.dist-info/RECORD", record)
open(f"{root}/simple/sluicedemo/index.html", "w").write(
    '<html><body><a href="../../sluicedemo-1.0-py3-none-any.whl">sluicedemo-1.0-py3-none-any.whl</a></body></html>\n')
EOF
# 127.0.0.2: loopback on the host, but not the sandbox's own 127.0.0.1 (which
# no_proxy keeps inside the sandbox), so the request goes through the proxy.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.2 --directory "$T/index" "$port" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.2:$port/" && break; sleep 0.05; done
echo "http://127.0.0.2:$port/simple/" >"$T/index.txt"
python3 - "$T/skills.yml" "$T/net.yml" "$port" <<'EOF'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["app"]["name"] = "agent net"
# An entry without a port would open 80 and 443 only.
d["sluice"]["sandbox"] = {"network": {"allow": ["127.0.0.2:" + sys.argv[3]]}, "command_timeout": 120}
for n in d["workflow"]["graph"]["nodes"]:
    if n["data"]["type"] == "start":
        n["data"]["variables"] = [{"variable": "index", "type": "file", "label": "index",
                                   "required": True}]
    if n["data"]["type"] == "agent":
        n["data"]["agent_parameters"]["model"]["value"]["model"] = "script:net"
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
EOF
timeout -k 2 150 "$SLUICE" run "$T/net.yml" --input "index=@$T/index.txt" >"$T/out" 2>"$T/err"; rc=$?
check "an agent installs a package from an allowed index through the proxy, and is refused another host" \
    test "$rc" = 0 -a -n "$(grep -F 'Installed and refused.' "$T/out")"
timeout -k 2 60 "$SLUICE" run "$T/net.yml" --input "index=@$T/index.txt" --net none >"$T/out" 2>"$T/err"; rc=$?
check "with --net none the same install fails (the model sees pip's error)" \
    test "$rc" = 0 -a -n "$(grep -F 'SCRIPT MISMATCH turn 1' "$T/out")"

# ---- sluice serve: a bundle imported, run over HTTP, its artifact downloaded ----
D="$T/data"
sl app import "$T/app.zip" --data "$D"
APP=$(cat "$T/out")
check "sluice app import takes a .zip bundle and prints the app id" test "$rc" = 0 -a -n "$APP"
check "... keeping its files on disk" test -s "$D/apps/$APP/files/skills/csv-report/SKILL.md"
sl app key create "$APP" --data "$D"
KEY=$(cat "$T/out")
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SLUICE" serve --listen "127.0.0.1:$PORT" --data "$D" >/dev/null 2>"$T/serve.err" &
PIDS+=($!)
for _ in $(seq 200); do curl -s --max-time 1 "http://127.0.0.1:$PORT/health" | grep -q ok && break; sleep 0.05; done
curl -s --max-time 20 -H "Authorization: Bearer $KEY" -F "file=@$T/sales.csv;type=text/csv" \
    -F user=u1 "http://127.0.0.1:$PORT/v1/files/upload" >"$T/up.json"
FID=$(jq -r .id "$T/up.json")
curl -s --max-time 60 -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d "{\"inputs\": {\"data\": {\"type\": \"document\", \"transfer_method\": \"local_file\", \"upload_file_id\": \"$FID\"}}, \"response_mode\": \"blocking\", \"user\": \"u1\"}" \
    "http://127.0.0.1:$PORT/v1/workflows/run" >"$T/run.json"
check "the bundle's agent runs over the Service API" \
    test "$(jq -r .data.status "$T/run.json")" = succeeded
URL=$(jq -r '.data.outputs.files[0].url' "$T/run.json")
check "its artifact comes back as a file with a download url" test "$URL" != null -a -n "$URL"
curl -s --max-time 10 -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$URL" >"$T/dl.txt"
check "... which serves the file's bytes" grep -q '^PINEAPPLE' "$T/dl.txt"
"$SLUICE" app export "$APP" --data "$D" >"$T/exported.zip" 2>"$T/err"
unzip -l "$T/exported.zip" >"$T/list2" 2>&1
check "sluice app export gives the bundle back with its files" grep -q 'skills/csv-report/SKILL.md' "$T/list2"
sl app delete "$APP" --data "$D"
check "deleting the app removes its files" test "$rc" = 0 -a ! -e "$D/apps/$APP"

# ---- the example scripts/setup runs: a recorded agent, replayed offline ----
env -u OPENAI_API_KEY -u SLUICE_LLM_BASE_URL "$SLUICE" run examples/chart-agent.yml \
    --app-dir examples/chart-agent --input data=@examples/sales.csv \
    --replay examples/chart-agent.tape.jsonl --out "$T/example" >"$T/out" 2>"$T/err"; rc=$?
check "examples/chart-agent.yml replays offline: the skill draws the chart" \
    test "$rc" = 0 -a -s "$T/example/sales.png" -a -n "$(grep -F 'February stands out' "$T/out")"

echo "1..$n"
