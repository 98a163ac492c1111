#!/usr/bin/env bash
# Runs every libFuzzer target (build-fuzz/fuzz_*, built by `make fuzz`) for
# SECONDS seconds each and reports what they found.
#
#   fuzz/run.sh SECONDS [TARGET...]      e.g. fuzz/run.sh 300 fuzz_dsl
#   JOBS=3 fuzz/run.sh 300               run the targets side by side
#
# Each target starts from its seed corpus fuzz/corpus/<name>/ (fuzz_dsl ->
# dsl) but grows a working corpus under build-fuzz/corpus/<name>/, so the
# thousands of generated inputs stay out of the source tree; copy the
# interesting ones back by hand.  Crashes, leaks, timeouts and OOMs land in
# build-fuzz/artifacts/<target>/ (only this run's are reported), logs (with the sanitizer stack) in
# build-fuzz/logs/<target>.log.  Exit status 1 when anything was found.
#
# To reproduce or minimise one finding:
#   build-fuzz/fuzz_dsl build-fuzz/artifacts/fuzz_dsl/crash-…
#   build-fuzz/fuzz_dsl -minimize_crash=1 -runs=20000 build-fuzz/artifacts/fuzz_dsl/crash-…
set -u
cd "$(dirname "$0")/.." || exit 2
secs=${1:-}
case $secs in
  '' | *[!0-9]*) echo "usage: fuzz/run.sh SECONDS [TARGET...]" >&2; exit 2 ;;
esac
shift
jobs=${JOBS:-1}
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
for t in "${targets[@]}"; do
  [ -x "build-fuzz/$t" ] || { echo "build-fuzz/$t is missing; run make fuzz first" >&2; exit 2; }
done

# Leaks are bugs here (a server runs workflows for days); UBSan findings
# already abort (built with -fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() { # target
  local t=$1 name=${1#fuzz_}
  local corpus=build-fuzz/corpus/$name art=build-fuzz/artifacts/$t log=build-fuzz/logs/$t.log
  mkdir -p "$corpus" "$art" build-fuzz/logs
  touch "$log.start"
  rm -f "$log.rc"
  local dict=()
  [ -f "fuzz/$t.dict" ] && dict=("-dict=fuzz/$t.dict")
  "build-fuzz/$t" "$corpus" "fuzz/corpus/$name" "${dict[@]}" \
      -max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$art/" >"$log" 2>&1
  echo $? >"$log.rc"
}

running=0
for t in "${targets[@]}"; do
  echo "# $t: ${secs}s"
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

found=0
for t in "${targets[@]}"; do
  log=build-fuzz/logs/$t.log
  rc=$(cat "$log.rc" 2>/dev/null || echo '?')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  ncorp=$(find "build-fuzz/corpus/${t#fuzz_}" -type f | wc -l)
  # Only this run's findings: older ones stay in the folder for reference.
  arts=$(find "build-fuzz/artifacts/$t" -type f -newer "$log.start" -printf '%f\n' 2>/dev/null)
  if [ "$rc" = 0 ] && [ -z "$arts" ]; then
    echo "ok   $t: ${execs:-?} runs, ${cov:-cov: ?}, corpus $ncorp files, no findings"
  else
    found=1
    echo "FAIL $t: exit $rc, ${execs:-?} runs, ${cov:-cov: ?}"
    for a in $arts; do echo "  build-fuzz/artifacts/$t/$a"; done
    # The report from the sanitizer or libFuzzer: first frames of the stack.
    grep -m1 -A30 -E '^==[0-9]+==ERROR|runtime error:|^==[0-9]+== ERROR|deadly signal|Abort' "$log" |
      sed 's/^/  | /' | head -40
  fi
done
exit $found
