#!/usr/bin/env bash
# CLI: help texts, version, unknown commands and options, `sluice limits`.
# Prints TAP.  Uses $SLUICE (set by tests/run.sh; default build/sluice).
. "$(dirname "$0")/lib.bash"

sl --help
check "sluice --help exits 0" [ $rc -eq 0 ]
check "--help lists the commands" bash -c "grep -q 'run FILE' '$T/out' && grep -q 'validate' '$T/out' && grep -q 'export' '$T/out' && grep -q 'limits' '$T/out'"
check "--help goes to stdout, not stderr" [ ! -s "$T/err" ]
sl help
check "sluice help is --help" bash -c "[ $rc -eq 0 ] && grep -q 'usage: sluice' '$T/out'"
sl -h
check "sluice -h is --help" bash -c "[ $rc -eq 0 ] && grep -q 'usage: sluice' '$T/out'"

sl --version
check "sluice --version prints 'sluice X.Y.Z'" bash -c "[ $rc -eq 0 ] && grep -Eq '^sluice [0-9]+\.[0-9]+\.[0-9]+' '$T/out'"

sl
check "no command: exit 2 with usage on stderr" bash -c "[ $rc -eq 2 ] && grep -q 'usage' '$T/err' && [ ! -s '$T/out' ]"

sl frobnicate
check "unknown command: exit 2" [ $rc -eq 2 ]
check "unknown command: the message names it" err_has "unknown command 'frobnicate'"
check "unknown command: nothing on stdout" [ ! -s "$T/out" ]

sl run --help
check "sluice run --help exits 0" [ $rc -eq 0 ]
for opt in --input --inputs --query --conversation --env --limit --json --events --quiet -q; do
    check "run --help mentions $opt" grep -qe " $opt" "$T/out"
done
check "run --help explains NAME=@PATH and @FILE" bash -c "grep -q '@PATH' '$T/out' && grep -q '@FILE' '$T/out'"
check "run --help lists the exit codes 0 1 2 3 130" bash -c "grep -q '130' '$T/out' && grep -q '3 partial' '$T/out' && grep -q '0 succeeded' '$T/out'"
sl run -h
check "run -h works too" bash -c "[ $rc -eq 0 ] && grep -q 'usage: sluice run' '$T/out'"

sl validate --help
check "validate --help exits 0 and mentions file:line:col" bash -c "[ $rc -eq 0 ] && grep -q 'file:line:col' '$T/out'"
sl export --help
check "export --help mentions -o and --include-secrets" bash -c "[ $rc -eq 0 ] && grep -q -- '-o OUT' '$T/out' && grep -q -- '--include-secrets' '$T/out'"
sl limits --help
check "limits --help exits 0" bash -c "[ $rc -eq 0 ] && grep -q 'usage: sluice limits' '$T/out'"

sl run
check "run without a file: exit 2 with usage" bash -c "[ $rc -eq 2 ] && grep -q 'usage: sluice run' '$T/err'"
sl run x.yml --bogus
check "run with an unknown option: exit 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q -- \"unknown option '--bogus'\" '$T/err'"
sl run x.yml --input
check "run --input without a value: exit 2" bash -c "[ $rc -eq 2 ] && grep -q -- '--input needs a value' '$T/err'"
sl run a.yml b.yml
check "run with two files: exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'one workflow file at a time' '$T/err'"
sl run x.yml --limit nonsense=1
check "run --limit with an unknown name: exit 2 naming it" bash -c "[ $rc -eq 2 ] && grep -q 'nonsense' '$T/err'"
sl run x.yml --limit max_steps=lots
check "run --limit with a bad value: exit 2 naming the field" bash -c "[ $rc -eq 2 ] && grep -q 'max_steps' '$T/err'"
sl run /nonexistent/wf.yml
check "run on a missing file: exit 2 naming the file" bash -c "[ $rc -eq 2 ] && grep -q '/nonexistent/wf.yml' '$T/err'"
sl validate
check "validate without files: exit 2" [ $rc -eq 2 ]
sl validate --bogus x.yml
check "validate with an unknown option: exit 2" bash -c "[ $rc -eq 2 ] && grep -q -- '--bogus' '$T/err'"
sl export
check "export without a file: exit 2" [ $rc -eq 2 ]
sl export x.yml -o
check "export -o without a name: exit 2" [ $rc -eq 2 ]
sl export x.yml --bogus
check "export with an unknown option: exit 2" [ $rc -eq 2 ]

# limits
sl limits
check "sluice limits exits 0" [ $rc -eq 0 ]
for pair in "max_steps 500" "max_time_s 1200" "max_depth 5" "max_variable_bytes 204800" \
            "workers 10" "max_loop_count 100" "parallel_iterations 10" \
            "max_string_bytes 400000" "http_allow_private false" "http_ssl_verify true"; do
    set -- $pair
    check "limits shows $1 = $2" grep -Eq "^ +$1 +$2( |\$)" "$T/out"
done
lines=$(grep -cE '^ +[a-z_]+ +[^ ]' "$T/out")
check "limits lists at least 17 limits (got $lines)" [ "$lines" -ge 17 ]
SLUICE_MAX_STEPS=42 SLUICE_HTTP_ALLOW_PRIVATE=yes timeout 20 "$SLUICE" limits >"$T/out" 2>"$T/err"
rc=$?
check "limits shows SLUICE_MAX_STEPS=42" bash -c "[ $rc -eq 0 ] && grep -Eq '^ +max_steps +42 ' '$T/out'"
check "limits shows SLUICE_HTTP_ALLOW_PRIVATE=yes as true" grep -Eq '^ +http_allow_private +true ' "$T/out"
SLUICE_WORKERS=many timeout 20 "$SLUICE" limits >"$T/out" 2>"$T/err"
rc=$?
check "a bad SLUICE_WORKERS: exit 2 naming the variable" bash -c "[ $rc -eq 2 ] && grep -q 'SLUICE_WORKERS' '$T/err'"

# Every command refuses what it does not know, with exit 2 and the word
# named; nothing is ignored (app import once took --store and wrote to a
# default folder).
for c in "limits --bogus" "app list --bogus" "app import examples/triage.yml --store x --data $T/d1" \
         "app key list --bogus --data $T/d1" "serve --bogus" "app list extra --data $T/d1" \
         "render - --bogus" "run examples/triage.yml --bogus" "validate --bogus examples/triage.yml" \
         "export examples/triage.yml --bogus"; do
    set -- $c
    timeout 20 "$SLUICE" "$@" </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    word=$(grep -oE -- "--bogus|--store|extra" <<<"$c" | head -1)
    check "sluice $c: exit 2 naming '$word' (got $rc)" \
        bash -c "[ $rc -eq 2 ] && grep -qF -- \"'$word'\" '$T/err'"
done
check "a refused app import wrote no data folder" [ ! -e "$T/d1" ]

echo "1..$n"
