#!/usr/bin/env bash
# CLI: each command's --help lists exactly the options it accepts.  Every
# option a usage shows is tried (it is accepted; one shown with a value
# asks for it), and every option another command shows is refused by this
# one with "unknown option".  Nothing runs: a last unknown option stops
# each try once the words before it have parsed.
# Prints TAP.  Uses $SLUICE (set by tests/run.sh; default build/sluice).
. "$(dirname "$0")/lib.bash"

cmds=("run" "validate" "export" "limits" "render" "serve" "sandbox run" "sandbox shell"
      "sandbox check" "app import" "app list" "app versions" "app export" "app delete"
      "app key create" "app key list" "app key revoke")

declare -A listed  # "cmd|option" -> 1 (takes a value) or 0
declare -A every   # option -> 1 or 0
for c in "${cmds[@]}"; do
    # The usage's option lines: what is left of the help column, per option.
    # shellcheck disable=SC2086
    timeout 20 "$SLUICE" $c --help >"$T/out" 2>"$T/err"
    rc=$?
    check "sluice $c --help: exit 0, the usage on stdout" bash -c "[ $rc -eq 0 ] && grep -q '^usage: ' '$T/out'"
    while IFS= read -r left; do
        takes=0
        [[ $left == *" "* && ! $left =~ ^-[a-zA-Z],\ [^\ ]+$ ]] && takes=1
        spellings=${left%% [A-Z]*}           # drop the value's placeholder
        spellings=${spellings%% none|*}      # --net none|open|...
        for o in ${spellings//,/ }; do
            listed["$c|$o"]=$takes
            every["$o"]=$takes
        done
    done < <(grep -E '^  (-[a-zA-Z], )?--?[a-zA-Z][a-zA-Z-]*( |$)' "$T/out" | sed -E 's/^  //; s/  .*//')
done
check "the usages list options (got ${#every[@]})" [ "${#every[@]}" -ge 30 ]

for c in "${cmds[@]}"; do
    for o in $(printf "%s\n" "${!every[@]}" | sort); do
        if [[ -n ${listed["$c|$o"]+x} ]]; then
            if [[ ${listed["$c|$o"]} == 1 ]]; then
                # shellcheck disable=SC2086
                timeout 20 "$SLUICE" $c "$o" >"$T/out" 2>"$T/err"
                rc=$?
                check "sluice $c $o (no value): exit 2, it needs a value" \
                    bash -c "[ $rc -eq 2 ] && grep -qF -- '$o needs a value' '$T/err'"
                # shellcheck disable=SC2086
                timeout 20 "$SLUICE" $c "$o" 1 --zz-end >"$T/out" 2>"$T/err"
            else
                # shellcheck disable=SC2086
                timeout 20 "$SLUICE" $c "$o" --zz-end >"$T/out" 2>"$T/err"
            fi
            rc=$?
            check "sluice $c accepts $o, as its usage shows" \
                bash -c "[ $rc -eq 2 ] && ! grep -qF -- \"unknown option '$o'\" '$T/err' && ! grep -qF -- 'needs a value' '$T/err'"
        else
            # shellcheck disable=SC2086
            timeout 20 "$SLUICE" $c "$o" 1 --zz-end >"$T/out" 2>"$T/err"
            rc=$?
            check "sluice $c refuses $o, which its usage does not show" \
                bash -c "[ $rc -eq 2 ] && grep -qF -- \"unknown option '$o' (see sluice \" '$T/err'"
        fi
    done
done

echo "1..$n"
