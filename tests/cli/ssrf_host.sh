#!/usr/bin/env bash
# CLI: the http-request SSRF guard refuses this machine's own addresses,
# whatever range they are in.  A server bound to the wildcard address
# answers on every address of the host; a workflow must reach none of them
# unless http_allow_private is set.
#   - the addresses this machine's interfaces have (skipped, counted, when
#     it has none besides loopback);
#   - public addresses put on loopback in a network namespace of our own,
#     so that only the own-address rule can refuse them (skipped, counted,
#     where namespaces cannot be made).
# Each refusal is paired with a run under http_allow_private=true that does
# reach the server, so a refusal is never a network accident.  Prints TAP.
. "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3

cat >"$T/srv.py" <<'PYEOF'
import http.server, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[1], "a") as f:
            f.write(self.path + "\n")
        body = b"host-service"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()
s = S(("::", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PYEOF

cat >"$T/wf.yml" <<'YMLEOF'
app: {mode: workflow, name: ssrf-host}
kind: app
version: 0.1.5
workflow:
  environment_variables:
  - {id: target, name: target, value: "", value_type: string}
  graph:
    nodes:
    - {id: start, data: {type: start, title: Start, variables: []}}
    - {id: http, data: {type: http-request, title: Fetch, method: get, url: "{{#env.target#}}", authorization: {type: no-auth}, headers: "", params: "", body: {type: none, data: []}, timeout: {connect: 10, read: 10, write: 10}}}
    - {id: end, data: {type: end, title: End, outputs: [{variable: body, value_selector: [http, body], value_type: string}]}}
    edges:
    - {source: start, target: http}
    - {source: http, target: end}
YMLEOF

# The probe runs where the addresses are (here, or in the namespace): it
# starts the server (stopped before it returns), then for each address
# prints
#   refused ADDR <exit> <error text>
#   allowed ADDR <exit> <output> <error text>
# and last "hits <what the server saw>".
cat >"$T/probe.sh" <<'SHEOF'
T=$1 SLUICE=$2 PY=$3
shift 3
: >"$T/hits"
"$PY" "$T/srv.py" "$T/hits" >"$T/port" &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null' EXIT
# (up to 20 s: a loaded machine starts Python slowly)
for _ in $(seq 400); do [ -s "$T/port" ] && break; sleep 0.05; done
[ -s "$T/port" ] || { echo "hits (the stand-in server did not start)"; exit 0; }
port=$(cat "$T/port")
for a in "$@"; do
    timeout 20 "$SLUICE" run "$T/wf.yml" -q --env "target=http://$a:$port/probe-refused" \
        >"$T/o" 2>"$T/e"
    echo "refused $a $? $(head -c 600 "$T/e" | tr '\n' ' ')"
    timeout 20 "$SLUICE" run "$T/wf.yml" -q --env "target=http://$a:$port/probe-allowed" \
        --limit http_allow_private=true >"$T/o" 2>"$T/e"
    echo "allowed $a $? $(tr '\n' ' ' <"$T/o") $(head -c 300 "$T/e" | tr '\n' ' ')"
done
echo "hits $(sort "$T/hits" | uniq -c | tr '\n' ' ')"
SHEOF

# verdicts FILE WHAT WANT-PHRASE: the checks for each line of FILE.
verdicts() {
    local file=$1 what=$2 want=$3 kind a rc rest
    while read -r kind a rc rest; do
        case $kind in
        refused)
            if [ "$rc" = 1 ] && [[ "$rest" == *"blocked by SSRF protection"*"$want"* ]]; then
                ok "$what $a: refused ($want)"
            else
                nok "$what $a: refused ($want)"; echo "#   got: $rc $rest"
            fi ;;
        allowed)
            if [ "$rc" = 0 ] && [[ "$rest" == *host-service* ]]; then
                ok "$what $a: reached with http_allow_private=true"
            else
                nok "$what $a: reached with http_allow_private=true"; echo "#   got: $rc $rest"
            fi ;;
        hits)
            if [[ "$a $rc $rest" != *probe-refused* ]] && [[ "$a $rc $rest" == *probe-allowed* ]]; then
                ok "$what: the server saw the allowed requests and no refused one"
            else
                nok "$what: the server saw the allowed requests and no refused one"
                echo "#   got: $a $rc $rest"
            fi ;;
        esac
    done <"$file"
}

# 1. This machine's own interface addresses (IPv6 link-local ones need a
# zone and are refused as link-local in any case).
addrs=()
if command -v ip >/dev/null; then
    while read -r _ ifc fam addr _; do
        [ "$ifc" = lo ] && continue
        addr=${addr%/*}
        case $fam in
        inet) addrs+=("$addr") ;;
        inet6) case $addr in fe80:*) ;; *) addrs+=("[$addr]") ;; esac ;;
        esac
    done < <(ip -o addr show 2>/dev/null)
fi
if [ ${#addrs[@]} -eq 0 ]; then
    skip "this machine has no network interface address besides loopback"
else
    bash "$T/probe.sh" "$T" "$SLUICE" "$PY" "${addrs[@]}" >"$T/verdicts" 2>"$T/probe.err"
    verdicts "$T/verdicts" "this machine's address" "connects to"
fi

# 2. Public addresses on loopback in a namespace of our own, where nothing
# but the own-address rule can refuse them.
if ! unshare -rn true 2>/dev/null || ! command -v ip >/dev/null; then
    skip "no network namespace can be made here"
else
    unshare -rn bash -c '
        ip link set lo up && ip addr add 93.184.215.14/32 dev lo &&
            ip addr add 2606:4700:4700::1111/128 dev lo nodad || exit 1
        exec bash "$@"' _ "$T/probe.sh" "$T" "$SLUICE" "$PY" \
        93.184.215.14 "[2606:4700:4700::1111]" "[::ffff:93.184.215.14]" \
        >"$T/verdicts" 2>"$T/probe.err"
    if ! grep -q '^hits' "$T/verdicts"; then
        : >"$T/out"; cp "$T/probe.err" "$T/err"
        nok "the namespace probe ran"
    fi
    verdicts "$T/verdicts" "public address on this machine" \
        "an address of this machine's own network interfaces"
fi

# 3. A name that resolves to a public and a loopback address at once (the
# shape DNS rebinding takes): every address libcurl tries is checked as it
# connects, so the loopback one is refused and the public one, with no
# route in the namespace, fails.  The name comes from an /etc/hosts of our
# own, bind-mounted in a mount namespace: no DNS server is involved.
printf '93.184.215.15 rebind.test\n127.0.0.1 rebind.test\n' >"$T/hosts"
if ! unshare -rnm true 2>/dev/null || ! command -v ip >/dev/null; then
    skip "no mount and network namespace can be made here"
else
    unshare -rnm bash -c '
        mount --bind "$1" /etc/hosts && ip link set lo up || exit 1
        shift; exec bash "$@"' _ "$T/hosts" "$T/probe.sh" "$T" "$SLUICE" "$PY" rebind.test \
        >"$T/verdicts" 2>"$T/probe.err"
    if ! grep -q '^hits' "$T/verdicts"; then
        : >"$T/out"; cp "$T/probe.err" "$T/err"
        nok "the rebinding probe ran"
    fi
    verdicts "$T/verdicts" "a name with a public and a loopback address" \
        "connects to 127.0.0.1, a loopback address"
fi
echo "1..$n"
