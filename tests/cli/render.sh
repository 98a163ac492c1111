#!/usr/bin/env bash
# CLI: `sluice render` prints exactly what the template renders (nothing
# added), errors on stderr with exit 1, bad usage with exit 2; --context,
# --limit, --repeat.  Prints TAP.
. "$(dirname "$0")/lib.bash"

cat >"$T/t.j2" <<'EOF'
Hello {{ name|title }}!{% for x in xs %} {{ loop.index }}={{ x }}{% endfor %}
EOF
printf '{"name": "ada lovelace", "xs": ["a", "b"]}' >"$T/ctx.json"

sl render "$T/t.j2" --context @"$T/ctx.json"
check "renders a file with a context file (exit $rc)" test "$rc" = 0
# the template's one trailing newline is dropped, as Jinja2 does, and
# nothing is added: the output is exactly these bytes
check "output is exact, no newline added" test "$(od -c <"$T/out" | head -1)" = "$(printf 'Hello Ada Lovelace! 1=a 2=b' | od -c | head -1)"

printf '{{ a }}-{{ b }}' | timeout 20 "$SLUICE" render - --context '{"a": 1, "b": [1, "x"]}' >"$T/out" 2>"$T/err"
check "standard input and an inline context, Python formatting" test "$(cat "$T/out")" = "1-[1, 'x']"

sl render "$T/t.j2" --context '[1]'
check "a context that is not an object: exit 2" test "$rc" = 2
check "... and says what it must be" err_has "must be a JSON object"

printf 'line one\n{{ (1 + }}\n' >"$T/bad.j2"
sl render "$T/bad.j2"
check "a syntax error: exit 1" test "$rc" = 1
check "... names the file, line and column" err_has "bad.j2:2:"
check "... and prints nothing on stdout" test ! -s "$T/out"

printf '{{ user.name.first }}' >"$T/rt.j2"
sl render "$T/rt.j2" --context '{"user": {}}'
check "a runtime error: exit 1, naming the expression" bash -c "[ $rc = 1 ] && grep -qF \"(in 'user.name.first')\" '$T/err'"

printf '{%% for i in range(100) %%}xxxxx{%% endfor %%}' >"$T/big.j2"
sl render "$T/big.j2" --limit max_output_chars=50
check "--limit max_output_chars: over it is an error" bash -c "[ $rc = 1 ] && grep -q 'longer than 50 characters' '$T/err'"
check "... that says how to raise it" err_has "--limit max_output_chars=N"
sl render "$T/big.j2" --limit max_output_chars=500
check "... and at the cap it renders (500 characters)" test "$(wc -c <"$T/out")" = 500
sl render "$T/big.j2" --limit max_loop_iterations=10
check "--limit max_loop_iterations" err_has "loop cap"
sl render "$T/big.j2" --limit nope=3
check "an unknown limit: exit 2, naming the limits there are" bash -c "[ $rc = 2 ] && grep -q max_loop_iterations '$T/err'"

printf '{%% set xs = [] %%}{%% set _ = xs.append(1) %%}{{ xs|length }}' >"$T/rep.j2"
sl render "$T/rep.j2" --repeat 50
check "--repeat renders afresh each time (a list built in the template stays one long)" test "$(cat "$T/out")" = 1

printf '{%% set _ = xs.append(3) %%}{{ xs }}' >"$T/mut.j2"
sl render "$T/mut.j2" --context '{"xs": [1, 2]}' --repeat 3
check "changing a context list in place never leaks into the next render" test "$(cat "$T/out")" = "[1, 2, 3]"

sl render
check "no file: exit 2 with the usage" bash -c "[ $rc = 2 ] && grep -q 'usage: sluice render' '$T/err'"
sl render --help
check "--help: exit 0, usage on stdout" bash -c "[ $rc = 0 ] && grep -q -- '--limit NAME=N' '$T/out'"
sl render "$T/missing.j2"
check "a missing file: exit 2 naming it" bash -c "[ $rc = 2 ] && grep -q 'missing.j2' '$T/err'"

echo "1..$n"
