#!/usr/bin/env bash
# CLI: libcurl is loaded on the first request, not at exec.  The binary
# does not link it; with the library hidden (an empty file bound over it
# in a mount namespace of our own), commands that make no request still
# work, and an http-request node fails with an error naming libcurl and
# the Debian package to install.  Skipped where namespaces cannot be made.
# Prints TAP.
. "$(dirname "$0")/lib.bash"

check "sluice does not link libcurl" bash -c "! ldd '$SLUICE' | grep -q libcurl"

cat >"$T/h.yml" <<'YEOF'
app: {mode: workflow, name: h}
kind: app
version: 0.1.5
workflow:
  graph:
    edges: [{source: s, target: h}, {source: h, target: e}]
    nodes:
    - id: s
      data: {type: start, title: Start, variables: []}
    - id: h
      data:
        type: http-request
        title: H
        method: get
        url: http://127.0.0.1:1/x
        authorization: {type: no-auth}
        headers: ''
        params: ''
        body: {type: none, data: []}
        timeout: {}
    - id: e
      data: {type: end, title: End, outputs: [{variable: s, value_selector: [h, status_code]}]}
YEOF

lib=""
for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
  [ -e "$d/libcurl.so.4" ] && { lib=$(readlink -f "$d/libcurl.so.4"); break; }
done
hidden() { # runs sluice ARGS with libcurl hidden; output in $T/out
  unshare -rm sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
    timeout -k 2 20 "$SLUICE" "$@" >"$T/out" 2>&1
}
if [ -z "$lib" ] || ! unshare -rm true 2>/dev/null; then
  skip "without libcurl, --help still works (no libcurl.so.4 or no namespaces here)"
  skip "without libcurl, an http-request node names libcurl and its package"
else
  hidden --help
  check "without libcurl, --help still works" test $? -eq 0
  hidden run "$T/h.yml"
  check "without libcurl, an http-request node names libcurl and its package" \
    grep -q "libcurl is not installed (apt-get install libcurl4)" "$T/out"
fi
echo "1..$n"
