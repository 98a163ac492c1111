#!/usr/bin/env bash
# sluice as whole processes (issue 14): its start against /bin/true and
# `sandbox run -- true` against bubblewrap, in one session; bench/run.sh
# and `make bench-startup` run it.
#
#   bench/startup.sh [BUILD] [-n ROUNDS]
set -euo pipefail
BUILD=${1:-build}
shift || true
cd "$(dirname "$0")/.."
bin=$BUILD/bench/startup_bench
for f in "$bin" "$BUILD/sluice"; do
  [ -x "$f" ] || { echo "bench: $f is missing; run make bench" >&2; exit 2; }
done
out=bench/out
mkdir -p "$out"
python3 bench/gen.py chain 50 "$out/chain-50.yml"
printf 'Hello, {{ name }}!{%% for i in range(3) %%} {{ i }}{%% endfor %%}\n' >"$out/startup.j2"
exec "$bin" "$BUILD/sluice" "$out/chain-50.yml" "$out/startup.j2" "$@"
