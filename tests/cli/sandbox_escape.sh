#!/usr/bin/env bash
# CLI: attacks on the local sandbox (REFERENCE §9).  Each attack runs inside
# `sluice sandbox run`; each test asserts the specific way it was stopped
# (the errno, the signal, the message, what the host still sees), not just
# that the command failed.  Groups end by checking that the host is unharmed
# and that a new sandbox still works.
#
# The battery runs twice: as the current user (root in CI: cgroup limits)
# and as an unprivileged user (nobody, via setpriv: no cgroup, so no memory
# limit; tests/cli/sandbox_mem.sh has the memory routes).  The helpers
# in tests/sandbox/ (sys.c, bomb.c, fs.py, net.py) are built or copied into
# a world-readable folder that each sandbox gets at /tmp/t (--bind).
# Prints TAP.
. "$(dirname "$0")/lib.bash"

MARK=$$                  # in every marker argument this script starts
H=                       # helpers (and a copy of sluice), mode 755
SECRET=                  # a host file no sandbox may read
HTTPD=                   # tests/tools/httpd.py on the host's 127.0.0.1:$PORT,
HTTPD_IN=                # and our end of its stdin
PORT=
ULISTEN=                 # a host listener on an abstract unix socket
HOSTSLEEP=               # a host process no sandbox may see or kill
BGPID=                   # a sluice running in the background
TMPS=()                  # folders of the host-side /tmp attack
on_exit() {
    local p
    for p in $BGPID $HOSTSLEEP $ULISTEN $HTTPD; do
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    [ -n "$HTTPD_IN" ] && exec {HTTPD_IN}>&-
    # marker processes a broken sandbox may have left behind
    for p in $(pgrep -f "^(sleep 1234\.${MARK}|/tmp/t/bomb 2 escape-$MARK|sh -c : escape-bomb-$MARK)"); do
        kill -KILL "$p" 2>/dev/null
    done
    [ -n "$H" ] && rm -rf "$H"
    [ -n "$SECRET" ] && rm -f "$SECRET"
    for p in "${TMPS[@]}"; do rm -rf "$p"; done
}

# ---- helpers ----

RUNAS=()          # prefix that runs sluice as the pass's user
SL=$SLUICE        # the sluice binary of the pass
P=                # the pass's name, in every test name
CG=               # 1 when the pass gets cgroup limits
SBOPT=()          # options of every sandbox run of the pass
B=()              # --bind of the helpers

# sb ARGS...: sluice sandbox run ARGS; stdout in $T/out, stderr in $T/err,
# status in $rc, wall time in $ms
sb() {
    local t0
    t0=$(date +%s%N)
    timeout -k 2 30 "${RUNAS[@]}" "$SL" sandbox run "${SBOPT[@]}" "$@" </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
}

# got PROBE: what a helper printed after "PROBE " on its line
got() { awk -v p="$1" 'index($0, p " ") == 1 { print substr($0, length(p) + 2); exit }' "$T/out"; }

# want DESC PROBE PATTERN...: ok when the helper's result for PROBE matches
# one of the glob PATTERNs
want() {
    local d=$1 p=$2 g r
    shift 2
    g=$(got "$p")
    for r in "$@"; do
        # shellcheck disable=SC2053
        if [ -n "$g" ] && [[ $g == $r ]]; then
            ok "$P: $d"
            return
        fi
    done
    nok "$P: $d"
    echo "#   $p: got '${g:-(no line)}', want: $*"
}

still_works() {
    sb -- true
    check "$P: a new sandbox still works after the $1" [ "$rc" -eq 0 ]
}

host_alive() { kill -0 "$1" 2>/dev/null; }

# ---- the attacks ----

group_privileges() {
    sb "${B[@]}" -- sh -c '
        grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t " "  "
        echo "id: $(id -u) $(id -g)"
        echo "uid_map: $(tr -s " " " " </proc/self/uid_map | sed "s/^ //")"
        /tmp/t/sys-suid uid
        echo "su: $(su root -c "id -u" </dev/null 2>&1 | head -1)"
        /tmp/t/sys setuid0 capset nnp_clear seccomp_disable'
    local c
    for c in CapInh CapPrm CapEff CapBnd CapAmb; do
        want "capabilities: $c is empty" "$c:" 0000000000000000
    done
    want "no_new_privs is set" NoNewPrivs: 1
    want "a seccomp filter is on (Seccomp 2)" Seccomp: 2
    want "commands run as uid/gid 1000" id: "1000 1000"
    want "only uid 1000 is mapped (no uid 0 inside)" uid_map: "1000 * 1"
    want "a setuid-root binary does not elevate (uid and euid stay 1000)" uid "1000 1000"
    check "$P: su does not give root" eval '! grep -qx "su: 0" "$T/out"'
    want "setuid(0) is refused" setuid0 EINVAL EPERM
    want "capset cannot raise capabilities (EPERM)" capset EPERM
    want "no_new_privs cannot be cleared (EINVAL)" nnp_clear EINVAL
    want "the seccomp filter cannot be removed (EINVAL)" seccomp_disable EINVAL
}

group_syscalls() {
    local mounts="mount mount_bind remount_rw umount pivot_root chroot open_tree fsopen move_mount mount_setattr"
    local ns="unshare_user unshare_mnt unshare_net setns clone_newuser clone_newns clone_newnet"
    local kernel="keyctl add_key request_key bpf perf_event_open userfaultfd io_uring_setup
        name_to_handle_at open_by_handle_at kexec_load kexec_file_load init_module finit_module
        delete_module reboot syslog iopl ioperm acct swapon settimeofday fanotify_init
        mknod_chr mknod_blk personality_linux32 personality_rie"
    local procs="ptrace_traceme ptrace_attach_init ptrace_attach_child ptrace_seize_child
        process_vm_readv process_vm_writev pidfd_getfd kcmp"
    local tty="tiocsti tiocsti_hibits tioclinux"
    # shellcheck disable=SC2086
    sb "${B[@]}" -- /tmp/t/sys $mounts $ns clone3_newuser $kernel $procs $tty mknod_fifo \
        personality_query int80 x32
    local s
    for s in $mounts; do want "mount table: $s is refused (EPERM)" "$s" EPERM; done
    for s in $ns; do want "namespaces: $s is refused (EPERM)" "$s" EPERM; done
    want "namespaces: clone3 (flags a filter cannot read) answers ENOSYS" clone3_newuser ENOSYS
    for s in $kernel; do want "kernel surface: $s is refused (EPERM)" "$s" EPERM; done
    for s in $procs; do want "other processes: $s is refused (EPERM)" "$s" EPERM; done
    want "TIOCSTI on stdin is refused by the filter (EPERM, not ENOTTY)" tiocsti EPERM
    want "TIOCSTI with high bits in the request is refused (EPERM)" tiocsti_hibits EPERM
    want "TIOCLINUX is refused (EPERM)" tioclinux EPERM
    want "the filter is not over-broad: a FIFO can still be made" mknod_fifo OK
    want "the filter is not over-broad: personality can be queried" personality_query OK
    if [ "$(uname -m)" = x86_64 ]; then
        want "32-bit syscall ABI (int 0x80) kills the process (SIGSYS)" int80 SIGSYS
        want "x32 syscall ABI kills the process (SIGSYS; ENOSYS without x32)" x32 SIGSYS ENOSYS
    else
        skip "$P: 32-bit syscall ABI (not x86_64)"
        skip "$P: x32 syscall ABI (not x86_64)"
    fi
    still_works "syscall attacks"
}

group_tty() {
    if ! command -v script >/dev/null; then
        skip "$P: TIOCSTI into a real terminal (no 'script' to make a pty)"
        return
    fi
    local cmd
    cmd=$(printf '%q ' timeout -k 2 20 "${RUNAS[@]}" "$SL" sandbox run "${SBOPT[@]}" "${B[@]}" -- \
        /tmp/t/sys isatty0 tiocsti tiocsti_hibits tioclinux)
    timeout -k 2 30 script -qec "$cmd" /dev/null </dev/null 2>"$T/err" | tr -d '\r' >"$T/out"
    if [ "$(got isatty0)" != yes ]; then
        skip "$P: TIOCSTI into a real terminal (script gave the sandbox no pty)"
        return
    fi
    want "TIOCSTI into the caller's terminal (a pty on stdin) is refused (EPERM)" tiocsti EPERM
    want "TIOCSTI with high request bits on the pty is refused (EPERM)" tiocsti_hibits EPERM
    want "TIOCLINUX on the pty is refused (EPERM)" tioclinux EPERM
    check "$P: nothing was typed into the terminal" eval '! grep -qx "x.*" "$T/out"'
}

group_proc() {
    local sl_sum py py_sum
    sl_sum=$(sha256sum <"$SL")
    py=$(readlink -f /usr/bin/python3)
    py_sum=$(sha256sum <"$py")
    sb "${B[@]}" -- sh -c '/tmp/t/sys proc1_exe_read proc1_exe_write proc1_exe_readlink \
        proc1_mem proc1_root proc1_cwd proc1_fd proc1_fd3 proc1_environ self_exe_write \
        self_exe_rdwr fds; python3 /tmp/t/fs.py write:/proc/self/exe'
    local s
    for s in proc1_exe_read proc1_exe_write proc1_exe_readlink proc1_mem proc1_root proc1_cwd \
        proc1_fd proc1_fd3 proc1_environ; do
        want "/proc/1 (init, a clone of host sluice): $s is denied (EACCES)" "$s" EACCES EPERM
    done
    want "/proc/self/exe cannot be opened for writing" self_exe_write EACCES ETXTBSY EROFS
    want "/proc/self/exe cannot be opened read-write" self_exe_rdwr EACCES ETXTBSY EROFS
    want "python3 cannot open its own /proc/self/exe for writing" write:/proc/self/exe \
        EACCES ETXTBSY EROFS
    want "no descriptor leaks into a command (only 0, 1, 2)" fds 0,1,2
    check "$P: the host's sluice binary is unchanged" [ "$(sha256sum <"$SL")" = "$sl_sum" ]
    check "$P: the host's python3 binary is unchanged" [ "$(sha256sum <"$py")" = "$py_sum" ]
}

group_files() {
    local extra=() top=${PWD#/}
    top=/${top%%/*}
    case $top in
    /usr | /bin | /sbin | /lib* | /etc | /tmp | /home | /dev | /proc) ;;
    *) extra=("list:$top") ;;
    esac
    sb "${B[@]}" -- python3 /tmp/t/fs.py symread:/etc/shadow symread:/root \
        "symread:$PWD/Makefile" symread:/proc/1/root/etc/shadow "symread:$SECRET" \
        symread:/proc/1/cwd link:/etc/passwd:h1 link:/tmp/t/sys:h2 link:/usr/bin/env:h3 \
        read:/etc/shadow list:/root list:/home "read:$PWD/Makefile" "list:$PWD" "${extra[@]}" \
        list:/sys list:/proc/1/root read:/proc/1/root/etc/hostname "read:$SECRET" \
        read:/etc/hostname fields:/etc/passwd list:/dev read:/proc/kcore read:/proc/kmsg \
        exists:h1 exists:h2 exists:h3
    want "symlink escape: a link to /etc/shadow reads nothing of the host's (ENOENT)" \
        symread:/etc/shadow ENOENT
    want "symlink escape: a link to /root finds nothing (ENOENT)" symread:/root ENOENT
    want "symlink escape: a link into the repo ($PWD) finds nothing (ENOENT)" \
        "symread:$PWD/Makefile" ENOENT
    want "symlink escape: a link through /proc/1/root is denied (EACCES)" \
        symread:/proc/1/root/etc/shadow EACCES
    want "symlink escape: a link to a host /tmp file finds nothing (ENOENT)" \
        "symread:$SECRET" ENOENT
    want "symlink escape: a link to /proc/1/cwd is denied (EACCES)" symread:/proc/1/cwd EACCES
    want "hard link to /etc/passwd from the workspace fails (EXDEV)" link:/etc/passwd:h1 EXDEV EPERM
    want "hard link to a host file in a bind fails (EXDEV)" link:/tmp/t/sys:h2 EXDEV EPERM
    want "hard link to /usr/bin/env fails (EXDEV)" link:/usr/bin/env:h3 EXDEV EPERM
    check "$P: no hard link was made" eval 'grep -qx "exists:h1 no" "$T/out" &&
        grep -qx "exists:h2 no" "$T/out" && grep -qx "exists:h3 no" "$T/out"'
    want "host /etc/shadow is not there (ENOENT)" read:/etc/shadow ENOENT
    want "host /root is not there (ENOENT)" list:/root ENOENT
    want "/home holds only the sandbox's home" list:/home "OK sandbox"
    want "the repo ($PWD) is not there (ENOENT)" "read:$PWD/Makefile" ENOENT
    want "the repo folder is not there (ENOENT)" "list:$PWD" ENOENT
    if [ ${#extra[@]} -gt 0 ]; then
        want "the host's $top is not there (ENOENT)" "list:$top" ENOENT
    fi
    want "/sys is not mounted (ENOENT)" list:/sys ENOENT
    want "/proc/1/root is denied (EACCES)" list:/proc/1/root EACCES
    want "host files through /proc/1/root are denied (EACCES)" \
        read:/proc/1/root/etc/hostname EACCES
    want "a world-readable host file in /tmp is not there (ENOENT)" "read:$SECRET" ENOENT
    check "$P: the host secret appears nowhere in the output" \
        eval '! grep -q "escape-secret-$MARK" "$T/out" "$T/err"'
    want "/etc/hostname is the sandbox's own" read:/etc/hostname "OK sandbox"
    want "/etc/passwd is the sandbox's own (root, sandbox, nobody)" fields:/etc/passwd \
        "OK root,sandbox,nobody"
    want "/dev holds only null/zero/full/random/urandom (no disks, mem, tty, kmsg)" list:/dev \
        "OK fd,full,null,random,shm,stderr,stdin,stdout,urandom,zero"
    want "/proc/kcore is denied" read:/proc/kcore EACCES EPERM ENOENT
    want "/proc/kmsg is denied" read:/proc/kmsg EACCES EPERM ENOENT
}

group_readonly() {
    local core dev_mode   # read by the checks' eval strings
    # shellcheck disable=SC2034
    core=$(cat /proc/sys/kernel/core_pattern)
    # shellcheck disable=SC2034
    dev_mode=$(stat -c '%F %a' /dev/null)
    sb "${B[@]}" -- python3 /tmp/t/fs.py write:/usr/escape-$MARK write:/etc/escape-$MARK \
        write:/bin/escape-$MARK write:/escape-$MARK write:/lib/escape-$MARK \
        write:/dev/escape-$MARK mkdir:/usr/lib/escape-$MARK write:/etc/passwd \
        write:/proc/sys/kernel/core_pattern write:/proc/sys/kernel/hostname \
        write:/tmp/t/escape-$MARK chmod:777:/tmp/t/sys chmod:777:/dev/null \
        write:/dev/null write:/workspace/ok write:/tmp/ok write:/home/sandbox/ok
    local s
    for s in /usr /etc /bin / /lib /dev; do
        want "writing under $s fails (EROFS)" "write:${s%/}/escape-$MARK" EROFS
    done
    want "mkdir in /usr/lib fails (EROFS)" "mkdir:/usr/lib/escape-$MARK" EROFS
    want "overwriting /etc/passwd fails (EROFS)" write:/etc/passwd EROFS
    want "core_pattern cannot be written (EROFS)" write:/proc/sys/kernel/core_pattern EROFS EACCES
    want "/proc/sys cannot be written (EROFS)" write:/proc/sys/kernel/hostname EROFS EACCES
    want "a --bind is read-only (EROFS)" "write:/tmp/t/escape-$MARK" EROFS
    want "a --bind's files cannot be chmodded" chmod:777:/tmp/t/sys EROFS EPERM
    want "the host's /dev/null cannot be chmodded (EPERM)" chmod:777:/dev/null EPERM EROFS
    want "sanity: /dev/null is writable" write:/dev/null OK
    check "$P: sanity: the workspace, /tmp and home are writable" eval \
        'grep -qx "write:/workspace/ok OK" "$T/out" && grep -qx "write:/tmp/ok OK" "$T/out" &&
         grep -qx "write:/home/sandbox/ok OK" "$T/out"'
    check "$P: nothing appeared on the host (/usr, /etc, /, /lib, the bind folder)" eval \
        '! ls -d /usr/escape-$MARK /etc/escape-$MARK /escape-$MARK /lib/escape-$MARK \
            /usr/lib/escape-$MARK "$H/escape-$MARK" 2>/dev/null | grep -q .'
    check "$P: the host's core_pattern and /dev/null are unchanged" eval \
        '[ "$(cat /proc/sys/kernel/core_pattern)" = "$core" ] &&
         [ "$(stat -c "%F %a" /dev/null)" = "$dev_mode" ]'
    still_works "file system attacks"
}

group_processes() {
    sb "${B[@]}" -- sh -c "ps -eo comm= >/tmp/ps; echo \"procs: \$(sort /tmp/ps | paste -sd' ')\"
        python3 /tmp/t/fs.py exists:/proc/$HOSTSLEEP kill:$HOSTSLEEP:0 kill:$HOSTSLEEP:9 \
            exists:/proc/$$ kill:$$:0"
    want "only the sandbox's own processes are visible" procs: "ps sh sluice-init"
    want "a host process (same host uid) is not in /proc" "exists:/proc/$HOSTSLEEP" no
    want "signalling a host process fails (ESRCH)" "kill:$HOSTSLEEP:0" ESRCH
    want "killing a host process fails (ESRCH)" "kill:$HOSTSLEEP:9" ESRCH
    want "the test's own process is not visible" "exists:/proc/$$" no
    check "$P: the host process is still alive" host_alive "$HOSTSLEEP"

    sb -- sh -c 'kill -KILL -1; echo "after kill -1"'
    check "$P: kill -KILL -1 inside leaves the host process alive" host_alive "$HOSTSLEEP"
    sb -- sh -c 'kill -KILL 1; kill -STOP 1; sleep 0.2; echo "init survived"'
    check "$P: SIGKILL/SIGSTOP to the sandbox's init are ignored (the command goes on)" \
        eval '[ "$rc" -eq 0 ] && grep -qx "init survived" "$T/out"'
    still_works "process attacks"
}

group_net_none() {
    local host_ok=
    curl -s --max-time 5 "http://127.0.0.1:$PORT/method" | grep -qx GET && host_ok=1
    check "$P: the host's loopback server answers the host" [ -n "$host_ok" ]
    sb "${B[@]}" -- sh -c "python3 /tmp/t/net.py connect:127.0.0.1:$PORT 'connect6:[::1]:$PORT' \
        connect:10.0.2.2:80 connect:1.1.1.1:53 udp:1.1.1.1:53 unix:sluice-escape-$MARK \
        dns:example.com connect:127.0.0.1:3128 ifaces vsock:2:22
        curl -sS --max-time 3 http://127.0.0.1:$PORT/query?qtok-$MARK; echo \"curl: \$?\""
    want "--net none: the host's loopback server is unreachable (ECONNREFUSED)" \
        "connect:127.0.0.1:$PORT" ECONNREFUSED
    want "--net none: host loopback over IPv6 is unreachable" "connect6:[::1]:$PORT" \
        ECONNREFUSED EADDRNOTAVAIL ENETUNREACH EAFNOSUPPORT
    want "--net none: the default gateway is unreachable (ENETUNREACH)" connect:10.0.2.2:80 \
        ENETUNREACH
    want "--net none: an outside address is unreachable (ENETUNREACH)" connect:1.1.1.1:53 \
        ENETUNREACH
    want "--net none: UDP out is unreachable (ENETUNREACH)" udp:1.1.1.1:53 ENETUNREACH
    want "--net none: no vsock socket to the VM's host (EPERM)" vsock:2:22 EPERM
    want "--net none: a host abstract unix socket is unreachable (ECONNREFUSED)" \
        "unix:sluice-escape-$MARK" ECONNREFUSED
    want "--net none: DNS does not resolve" dns:example.com EAI_AGAIN EAI_NONAME EAI_FAIL
    want "--net none: no proxy is listening" connect:127.0.0.1:3128 ECONNREFUSED
    want "--net none: only the loopback interface" ifaces lo
    check "$P: --net none: curl to the host server gets nothing (exit 7)" eval \
        'grep -qx "curl: 7" "$T/out" && ! grep -q "qtok-$MARK" "$T/out"'
    check "$P: the host's abstract socket still answers the host" \
        python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect("\0" + sys.argv[1])
sys.exit(0 if s.recv(64) == b"host-unix" else 1)' "sluice-escape-$MARK"
}

group_net_allow() {
    # not listed: refused by the proxy, before any name is resolved
    sb "${B[@]}" --net allow=pypi.org -- sh -c "
        echo \"env: \$HTTPS_PROXY \$HTTP_PROXY\"
        curl -s --max-time 5 -o /dev/null -w 'curl-http: %{http_code}\n' http://evil.example.com/
        curl -sS --max-time 5 https://evil.example.com/ 2>&1 | sed 's/^/curl-https: /'
        python3 /tmp/t/net.py get:http://evil.example.com/ connectvia:evil.example.com:443 \
            get:http://127.0.0.1:$PORT/method connectvia:10.0.0.1:443 \
            connectvia:169.254.169.254:80 connectvia:pypi.org:22"
    want "--net allow: the proxy is announced in HTTPS_PROXY/HTTP_PROXY" env: \
        "http://127.0.0.1:3128 http://127.0.0.1:3128"
    want "--net allow: curl to a domain not listed gets 403 from the proxy" curl-http: 403
    want "--net allow: curl https to a domain not listed: CONNECT 403" curl-https: \
        "*CONNECT tunnel failed, response 403*"
    want "--net allow: GET of a domain not listed: 403 naming the allow list" \
        get:http://evil.example.com/ "403 *not in the allow list*"
    want "--net allow: CONNECT to a domain not listed: 403" connectvia:evil.example.com:443 \
        "403 *not in the allow list*"
    want "--net allow: GET of the host's 127.0.0.1 not listed: 403" \
        "get:http://127.0.0.1:$PORT/method" "403 *loopback*"
    want "--net allow: CONNECT to a private IP literal not listed: 403" \
        connectvia:10.0.0.1:443 "403 *private*"
    want "--net allow: CONNECT to the cloud metadata address: 403" \
        connectvia:169.254.169.254:80 "403 *link-local*"
    want "--net allow: CONNECT to a listed host's SSH port: 403 (80 and 443 only)" \
        connectvia:pypi.org:22 "403 *ports 80 and 443 only*"

    # listed by name, but the name resolves to a loopback address
    sb "${B[@]}" --net "allow=localhost:$PORT" -- sh -c "
        curl -s --noproxy '' --max-time 5 -o /dev/null -w 'curl: %{http_code}\n' \
            http://localhost:$PORT/query?qtok-$MARK
        python3 /tmp/t/net.py get:http://localhost:$PORT/method connectvia:localhost:$PORT \
            get:http://localhost.:$PORT/method get:http://LOCALHOST:$PORT/method"
    want "--net allow=localhost: curl to localhost gets 403 (private address)" curl: 403
    want "--net allow=localhost: GET localhost: 403 (resolves to loopback)" \
        "get:http://localhost:$PORT/method" "403 *loopback*"
    want "--net allow=localhost: CONNECT localhost: 403 (resolves to loopback)" \
        "connectvia:localhost:$PORT" "403 *loopback*"
    want "--net allow=localhost: 'localhost.' is also 403" \
        "get:http://localhost.:$PORT/method" "403 *"
    want "--net allow=localhost: 'LOCALHOST' is also 403" \
        "get:http://LOCALHOST:$PORT/method" "403 *"

    # a private address listed literally: the allow path really works
    sb "${B[@]}" --net "allow=127.0.0.1:$PORT" -- sh -c "
        echo \"fetch: \$(curl -sS --noproxy '' --max-time 5 http://127.0.0.1:$PORT/query?qtok-$MARK)\"
        python3 /tmp/t/net.py connectvia:127.0.0.1:$PORT 'get:http://[::1]:$PORT/method' \
            connectvia:10.0.0.1:443 connect:127.0.0.1:$PORT connect:1.1.1.1:80 \
            pipeline:http://127.0.0.1:$PORT/method,http://10.0.0.1/query \
            pipeline:http://127.0.0.1:$PORT/method,http://127.0.0.1:$PORT/query?again
        curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:$PORT/method; echo \"direct: \$?\""
    want "--net allow=127.0.0.1: curl through the proxy fetches the host server's content" \
        fetch: "qtok-$MARK"
    want "--net allow=127.0.0.1: a CONNECT tunnel to it works" "connectvia:127.0.0.1:$PORT" \
        "200 GET"
    want "--net allow=127.0.0.1: ::1 (not listed) is 403" "get:http://[::1]:$PORT/method" \
        "403 *"
    want "--net allow=127.0.0.1: CONNECT to another private IP is 403" \
        connectvia:10.0.0.1:443 "403 *private*"
    want "--net allow=127.0.0.1: a direct connection bypassing the proxy fails" \
        "connect:127.0.0.1:$PORT" ECONNREFUSED
    want "--net allow=127.0.0.1: a direct connection outside fails (ENETUNREACH)" \
        connect:1.1.1.1:80 ENETUNREACH
    want "--net allow=127.0.0.1: curl --noproxy '*' gets nothing (exit 7)" direct: 7
    want "--net allow=127.0.0.1: a GET pipelined behind an allowed one is checked: 403" \
        "pipeline:http://127.0.0.1:$PORT/method,http://10.0.0.1/query" "200 403 *private*"
    want "--net allow=127.0.0.1: two allowed GETs on one connection are both answered" \
        "pipeline:http://127.0.0.1:$PORT/method,http://127.0.0.1:$PORT/query?again" "200 200 again"

    # '*' allows names with public addresses only: other spellings of loopback
    local h probes=()
    local spell=("localhost:$PORT" "127.1:$PORT" "0x7f000001:$PORT" "2130706433:$PORT"
        "0177.0.0.1:$PORT" "[::ffff:127.0.0.1]:$PORT" "0.0.0.0:$PORT" "[::1]:$PORT")
    for h in "${spell[@]}"; do probes+=("get:http://$h/method"); done
    sb "${B[@]}" --net "allow=*,*:$PORT" -- python3 /tmp/t/net.py "${probes[@]}" \
        "connectvia:127.1:$PORT" connectvia:169.254.169.254:80
    for h in "${spell[@]}"; do
        want "--net allow=*: http://${h%:*} (loopback in disguise) is 403" "get:http://$h/method" \
            "403 *"
    done
    want "--net allow=*: CONNECT 127.1 is 403" "connectvia:127.1:$PORT" "403 *"
    want "--net allow=*: CONNECT to the metadata address is 403" connectvia:169.254.169.254:80 \
        "403 *"
    check "$P: the host's server still answers after the network attacks" eval \
        'curl -s --max-time 5 "http://127.0.0.1:$PORT/method" | grep -qx GET'
    still_works "network attacks"
}

group_limits() {
    local n_during n_after hostfork t0
    # a fork bomb that stops by itself after 2 s
    t0=$(date +%s%N)
    timeout -k 2 30 "${RUNAS[@]}" "$SL" sandbox run "${SBOPT[@]}" --procs 64 --timeout 10 "${B[@]}" -- \
        /tmp/t/bomb 2 "escape-$MARK" </dev/null >"$T/out" 2>"$T/err" &
    BGPID=$!
    # the most bomb processes seen at once, sampled while it runs: until
    # it has come and gone or the command ends, however long a loaded
    # machine takes to start it (40 samples were once over before it began)
    n_during=0 hostfork=
    for _ in $(seq 400); do
        sleep 0.1
        c=$(pgrep -fc "^/tmp/t/bomb 2 escape-$MARK")
        [ "$c" -gt "$n_during" ] && n_during=$c
        [ "$c" -gt 1 ] && [ -z "$hostfork" ] && hostfork=$(sh -c 'echo forked')
        [ "$n_during" -gt 1 ] && [ "$c" -eq 0 ] && break
        kill -0 "$BGPID" 2>/dev/null || break
    done
    wait "$BGPID"
    rc=$?
    BGPID=
    ms=$((($(date +%s%N) - t0) / 1000000))
    n_after=$(pgrep -fc "^/tmp/t/bomb 2 escape-$MARK")
    want "fork bomb (--procs 64): forks fail with EAGAIN" bomb "forks=* failed=[1-9]* errno=EAGAIN"
    check "$P: fork bomb: at most 64 bomb processes at once (saw $n_during)" \
        [ "$n_during" -gt 1 -a "$n_during" -le 64 ]
    check "$P: fork bomb: the host can still fork during it" [ "$hostfork" = forked ]
    check "$P: fork bomb: the command ends (exit $rc, ${ms} ms)" [ "$rc" -eq 0 -a "$ms" -lt 9000 ]
    check "$P: fork bomb: no bomb process is left on the host" [ "$n_after" -eq 0 ]
    if [ -n "$CG" ]; then
        check "$P: fork bomb: stderr notes the process limit" err_has "process limit (64) was reached"
    fi

    # a classic one that never ends: the timeout ends it
    sb --procs 64 --timeout 3 -- sh -c ": escape-bomb-$MARK; f() { f | f & }; f; sleep 60"
    n_after=$(pgrep -fc "^sh -c : escape-bomb-$MARK")
    check "$P: shell fork bomb: ended by the timeout (exit $rc, ${ms} ms)" \
        [ "$rc" -eq 124 -a "$ms" -lt 7000 ]
    check "$P: shell fork bomb: nothing is left on the host" [ "$n_after" -eq 0 ]
    check "$P: shell fork bomb: the host can still fork" eval '[ "$(sh -c "echo forked")" = forked ]'

    # memory
    sb --mem 128M -- python3 -c 's = "x" * (1 << 30); print("allocated", len(s))'
    if [ -n "$CG" ]; then
        check "$P: memory bomb (1 GiB under --mem 128M): killed, exit 137, stderr names memory" \
            eval '[ "$rc" -eq 137 ] && err_has "memory (128 MiB)" && ! out_has allocated'
    else
        check "$P: memory bomb: --mem 128M without a cgroup is refused (exit 2, says why)" \
            eval '[ "$rc" -eq 2 ] && ! out_has allocated && err_has "cannot be enforced"'
    fi
    check "$P: memory bomb: the host is fine (it can still start python3)" \
        python3 -c 'x = bytearray(16 << 20)'
    still_works "memory bomb"

    # disk: workspace, /tmp and /dev/shm share one 16 MiB
    sb --disk 16M "${B[@]}" -- python3 /tmp/t/fs.py fill:/workspace/fill:100 fill:/tmp/more:1 \
        fill:/dev/shm/more:1 fill:/home/sandbox/more:1
    want "disk fill (--disk 16M): writing 100 MiB to /workspace stops at ENOSPC" \
        fill:/workspace/fill:100 "ENOSPC after 1[0-6]"
    want "disk fill: /tmp shares the limit (ENOSPC)" fill:/tmp/more:1 "ENOSPC after 0"
    want "disk fill: /dev/shm shares the limit (ENOSPC)" fill:/dev/shm/more:1 "ENOSPC after 0"
    want "disk fill: home shares the limit (ENOSPC)" fill:/home/sandbox/more:1 "ENOSPC after 0"

    sb --file-size 1M -- dd if=/dev/zero of=/workspace/big bs=1M count=5
    check "$P: file size (--file-size 1M): dd is killed, exit 137, stderr names it" \
        eval '[ "$rc" -eq 137 ] && err_has "file size (1 MiB)"'

    # output
    sb --output 1M -- yes
    local bytes
    bytes=$(wc -c <"$T/out")
    check "$P: output flood (--output 1M): exit 137, stderr names the output limit" \
        eval '[ "$rc" -eq 137 ] && err_has "stdout output (1048576 bytes)"'
    check "$P: output flood: at most 1 MiB of stdout got through ($bytes bytes)" \
        [ "$bytes" -le 1048576 ]
    sb --output 1M -- sh -c 'yes >&2'
    check "$P: stderr flood: exit 137, the stderr limit is named" \
        eval '[ "$rc" -eq 137 ] && err_has "stderr output (1048576 bytes)" &&
              [ "$(wc -c <"$T/err")" -le 1100000 ]'

    # descriptors
    sb --files 64 "${B[@]}" -- python3 /tmp/t/fs.py files:1000
    want "fd exhaustion (--files 64): opening 1000 files stops at EMFILE" files:1000 \
        "EMFILE after [1-6][0-9]"

    # processes left behind
    sb -- sh -c "sleep 1234.${MARK}1 & (setsid sleep 1234.${MARK}2 &); \
        nohup sleep 1234.${MARK}3 >/dev/null 2>&1 & echo started"
    check "$P: leftovers: the command itself returned at once (exit $rc, ${ms} ms)" \
        eval '[ "$rc" -eq 0 ] && out_has started && [ "$ms" -lt 5000 ]'
    check "$P: leftovers: no background or setsid daemon survives sluice" \
        eval '! pgrep -f "^sleep 1234\.${MARK}" >/dev/null'

    # time
    sb --timeout 1 -- sleep 30
    check "$P: timeout (--timeout 1, sleep 30): exit 124 within 2.5 s (${ms} ms)" \
        eval '[ "$rc" -eq 124 ] && [ "$ms" -lt 2500 ] && err_has "timed out"'
    sb --cpu-seconds 1 -- sh -c 'while :; do :; done'
    check "$P: CPU time (--cpu-seconds 1, busy loop): exit 137, stderr names CPU time" \
        eval '[ "$rc" -eq 137 ] && err_has "CPU time (1 s)" && [ "$ms" -lt 5000 ]'
    sb --cpu-seconds 1 -- python3 -c 'import signal
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
while True: pass'
    check "$P: CPU time with SIGXCPU ignored: still killed (exit $rc, ${ms} ms)" \
        eval '[ "$rc" -eq 137 ] && [ "$ms" -lt 6000 ]'
    still_works "limit attacks"
}

# Host side, run once as root: sluice keeps per-process files in $TMPDIR
# (sluice-etc-PID, bound as the sandboxes' /etc) and removes those of dead
# processes.  Another local user can plant names there; a planted symlink
# must not make root's sluice delete the files of the folder it points at.
# TMPDIR is a sticky world-writable folder of our own, like /tmp.
group_host_tmp() {
    local td v1 v2 as_nobody=("${AS_NOBODY[@]}")
    td=$(mktemp -d "${TMPDIR:-/tmp}/sluice-escape-tmp.XXXXXX")
    v1=$(mktemp -d "${TMPDIR:-/tmp}/sluice-escape-victim.XXXXXX")
    v2=$(mktemp -d "${TMPDIR:-/tmp}/sluice-escape-victim.XXXXXX")
    TMPS+=("$td" "$v1" "$v2")
    chmod 1777 "$td"
    chmod 755 "$v1" "$v2"
    echo precious >"$v1/file"
    echo precious >"$v2/file"
    # a "stale" folder that is a symlink, and a real one holding a symlink
    "${as_nobody[@]}" ln -s "$v1" "$td/sluice-etc-999999999"
    "${as_nobody[@]}" mkdir "$td/sluice-etc-999999998"
    "${as_nobody[@]}" ln -s "$v2/file" "$td/sluice-etc-999999998/passwd"
    TMPDIR=$td timeout -k 2 20 "$SLUICE" sandbox run -- cat /etc/hostname </dev/null \
        >"$T/out" 2>"$T/err"
    rc=$?
    check "root: host \$TMPDIR: a sandbox still runs with planted sluice-etc-* names" \
        eval '[ "$rc" -eq 0 ] && out_has sandbox'
    check "root: host \$TMPDIR: a sluice-etc-N symlink planted by another user does not make root's sluice delete the files of the folder it points at (protected_symlinks=$(cat /proc/sys/fs/protected_symlinks 2>/dev/null))" \
        [ -f "$v1/file" ]
    check "root: host \$TMPDIR: a symlink planted inside a sluice-etc-N folder does not delete its target" \
        [ "$(cat "$v2/file" 2>/dev/null)" = precious ]
}

battery() {
    P=$1
    CG=
    timeout 20 "${RUNAS[@]}" "$SL" sandbox check 2>&1 | grep -q 'limits: cgroup' && CG=1
    # Without a cgroup a memory limit cannot be held and is refused, so
    # this pass asks for none.
    SBOPT=()
    if [ -n "$CG" ]; then echo "# $P: limits by cgroups"; else
        echo "# $P: no cgroup: no memory limit, processes by RLIMIT_NPROC"
        SBOPT=(--mem none)
    fi
    sb -- true
    if [ "$rc" -ne 0 ]; then
        nok "$P: a sandbox can be made (sluice sandbox run -- true)"
        return
    fi
    ok "$P: a sandbox can be made (sluice sandbox run -- true)"
    B=(--bind "$H:/tmp/t")
    local t0=$SECONDS
    group_privileges
    group_syscalls
    group_tty
    group_proc
    group_files
    group_readonly
    group_processes
    group_net_none
    group_net_allow
    group_limits
    echo "# $P: battery took $((SECONDS - t0)) s"
}

# ---- the host side ----

H=$(mktemp -d "${TMPDIR:-/tmp}/sluice-escape.XXXXXX")
chmod 755 "$H"
cp "$SLUICE" "$H/sluice"
cp tests/sandbox/fs.py tests/sandbox/net.py "$H/"
if ! cc -O1 -w -o "$H/sys" tests/sandbox/sys.c 2>"$T/cc" ||
    ! cc -O1 -w -o "$H/bomb" tests/sandbox/bomb.c 2>>"$T/cc"; then
    echo "not ok - cannot build the helpers in tests/sandbox:"; sed 's/^/# /' "$T/cc"
    exit 1
fi
cp "$H/sys" "$H/sys-suid"
chmod 4755 "$H/sys-suid"
chmod 755 "$H"/*

SECRET=$(mktemp "${TMPDIR:-/tmp}/sluice-secret.XXXXXX")
echo "escape-secret-$MARK" >"$SECRET"
chmod 644 "$SECRET"

mkfifo "$T/httpd.in"
python3 tests/tools/httpd.py 0 <"$T/httpd.in" >"$T/httpd.port" 2>/dev/null &
HTTPD=$!
exec {HTTPD_IN}>"$T/httpd.in"
for _ in $(seq 50); do
    PORT=$(head -1 "$T/httpd.port" 2>/dev/null)
    [ -n "$PORT" ] && break
    sleep 0.1
done
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(8); s.settimeout(120)
while True:
    c, _ = s.accept(); c.sendall(b"host-unix"); c.close()' "sluice-escape-$MARK" 2>/dev/null &
ULISTEN=$!

# Root runs the second pass as nobody.
AS_NOBODY=()
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi

# The host process to hide: it runs as the host uid the sandbox's user maps
# to (nobody when root), so only the pid namespace keeps it out of reach.
"${AS_NOBODY[@]}" sleep 300 &
HOSTSLEEP=$!
sleep 0.2

if [ -z "$PORT" ]; then
    echo "not ok - tests/tools/httpd.py did not start"
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    battery "uid $(id -u)"
    skip "second, unprivileged pass: not running as root, so the first pass was already unprivileged"
elif [ ${#AS_NOBODY[@]} -eq 0 ]; then
    battery root
    skip "host \$TMPDIR attack and the unprivileged pass: no setpriv to become nobody"
else
    battery root
    group_host_tmp
    RUNAS=("${AS_NOBODY[@]}")
    SL=$H/sluice
    timeout 20 "${RUNAS[@]}" "$SL" sandbox run --mem none -- true </dev/null >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq 125 ] && err_has "namespaces"; then
        skip "unprivileged pass: unprivileged user namespaces are unavailable: $(tr '\n' ' ' <"$T/err" | head -c 300)"
    else
        battery nobody
    fi
fi
echo "1..$n"
