/*
 * sandbox_spawn — processes kept running in a local sandbox with pipes to
 * them (sl_sandbox_spawn, as an MCP stdio server is run): echo round trips
 * through /bin/sh, cat and python3, exits and their codes, stderr kept
 * (capped, newest kept), SIGKILL on free with nothing left behind (no
 * process in the sandbox, no thread or descriptor in this one), limits,
 * a sandbox destroyed under a live process, and the refusal of providers
 * that have no spawn.  Prints the round-trip time as a TAP comment.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"
#include "tap.h"
#include "util.h"

static uint64_t sb_memory = (uint64_t)1 << 30;
static sl_sandbox *sb;

/* ---- helpers ---- */

typedef struct {
    sl_sandbox_proc *p;
    int in, out;
    char buf[8192];
    size_t len;
} proc;

static bool start(sl_sandbox *box, proc *x, const char *const *argv)
{
    sl_sandbox_cmd c = {.argv = argv};
    sl_err err = {0};
    memset(x, 0, sizeof *x);
    x->in = x->out = -1;
    int rc = sl_sandbox_spawn(box, &c, &x->p, &x->in, &x->out, &err);
    if (rc)
        printf("# spawn %s: %s\n", argv[0], err.msg);
    sl_err_clear(&err);
    return rc == 0;
}

static void stop(proc *x)
{
    sl_sandbox_proc_free(x->p);
    if (x->in >= 0)
        close(x->in);
    if (x->out >= 0)
        close(x->out);
    x->p = NULL;
    x->in = x->out = -1;
}

static bool put(proc *x, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(x->in, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* One line from the process's stdout, without its '\n', into line; false
 * on EOF or after timeout_s. */
static bool get_line(proc *x, char *line, size_t cap, double timeout_s)
{
    double until = sl_clock_s() + timeout_s;
    for (;;) {
        char *nl = memchr(x->buf, '\n', x->len);
        if (nl) {
            size_t n = (size_t)(nl - x->buf);
            size_t k = n < cap - 1 ? n : cap - 1;
            memcpy(line, x->buf, k);
            line[k] = 0;
            memmove(x->buf, nl + 1, x->len - n - 1);
            x->len -= n + 1;
            return true;
        }
        if (x->len == sizeof x->buf)
            return false;
        double left = until - sl_clock_s();
        struct pollfd pf = {x->out, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) != 1)
            return false;
        ssize_t n = read(x->out, x->buf + x->len, sizeof x->buf - x->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        x->len += (size_t)n;
    }
}

/* True when stdout reaches EOF within timeout_s (what is left is dropped). */
static bool eof_within(proc *x, double timeout_s)
{
    double until = sl_clock_s() + timeout_s;
    char tmp[4096];
    for (;;) {
        double left = until - sl_clock_s();
        struct pollfd pf = {x->out, POLLIN, 0};
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) != 1)
            return false;
        ssize_t n = read(x->out, tmp, sizeof tmp);
        if (n == 0)
            return true;
        if (n < 0 && errno != EINTR)
            return false;
    }
}

/* Waits up to timeout_s for the process's stderr to hold `want`. */
static bool stderr_has(proc *x, const char *want, double timeout_s)
{
    double until = sl_clock_s() + timeout_s;
    do {
        if (strstr(sl_sandbox_proc_stderr(x->p), want))
            return true;
        usleep(5000);
    } while (sl_clock_s() < until);
    return false;
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;  /* the DIR's own descriptor, when it is /proc/self/fd */
}

static int threads(void)
{
    return count_dir("/proc/self/task") + 1;
}

static int fds(void)
{
    return count_dir("/proc/self/fd");
}

/* The host pid of a process whose command line holds `marker`, or 0. */
static pid_t find_marked(const char *marker)
{
    DIR *d = opendir("/proc");
    pid_t found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        pid_t pid = (pid_t)atol(e->d_name);
        if (pid <= 0 || pid == getpid())
            continue;
        char path[64], cmd[4096];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            if (!cmd[i])
                cmd[i] = ' ';
        cmd[n] = 0;
        if (strstr(cmd, marker))
            found = pid;
    }
    if (d)
        closedir(d);
    return found;
}

/* How many processes live in the pid namespace `ns` ("pid:[…]") besides
 * its init (pid 1 inside). */
static int in_pidns(const char *ns)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        pid_t pid = (pid_t)atol(e->d_name);
        if (pid <= 0)
            continue;
        char path[64], link[128];
        snprintf(path, sizeof path, "/proc/%ld/ns/pid", (long)pid);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k <= 0)
            continue;
        link[k] = 0;
        if (strcmp(link, ns))
            continue;
        snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
        FILE *f = fopen(path, "r");
        char line[256];
        bool init = false;
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "NSpid:", 6)) {
                char *last = strrchr(line, '\t');
                init = last && atoi(last + 1) == 1;
            }
        if (f)
            fclose(f);
        if (!init)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static sl_sandbox *make_box(int max_procs, uint64_t mem, int cpu_s)
{
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.disk_bytes = 8 << 20;
    o.memory_bytes = mem;
    if (max_procs)
        o.max_procs = max_procs;
    if (cpu_s)
        o.cpu_seconds = cpu_s;
    sl_sandbox *box = NULL;
    sl_err err = {0};
    if (sl_sandbox_create(&o, &box, &err))
        printf("# sandbox: %s\n", err.msg);
    sl_err_clear(&err);
    return box;
}

/* ---- tests ---- */

static void test_echo(void)
{
    proc x;
    const char *sh[] = {"/bin/sh", "-c", "while IFS= read -r l; do printf '%s\\n' \"$l\"; done",
                        NULL};
    if (!start(sb, &x, sh)) {
        CHECK(0, "spawn a read-echo loop in /bin/sh");
        return;
    }
    CHECK(sl_sandbox_proc_running(x.p, NULL), "it runs");
    int good = 0;
    char line[256], want[64];
    for (int i = 0; i < 500; i++) {
        snprintf(want, sizeof want, "line %d {\"json\": [1, 2, \"três\"]}", i);
        char sent[80];
        snprintf(sent, sizeof sent, "%s\n", want);
        if (put(&x, sent) && get_line(&x, line, sizeof line, 5) && !strcmp(line, want))
            good++;
    }
    CHECK(good == 500, "500 round trips through sh, each line back as sent (%d)", good);
    /* several lines at once come back in order */
    CHECK(put(&x, "a\nb\nc\n") && get_line(&x, line, sizeof line, 5) && !strcmp(line, "a") &&
              get_line(&x, line, sizeof line, 5) && !strcmp(line, "b") &&
              get_line(&x, line, sizeof line, 5) && !strcmp(line, "c"),
          "three lines written at once come back in order");
    /* an exec beside it ends without taking the process with it (init
     * kills leftovers only when nothing runs) */
    const char *echo[] = {"echo", "beside", NULL};
    sl_sandbox_cmd c = {.argv = echo, .timeout_s = 10};
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    sl_err err = {0};
    int rc = sl_sandbox_exec(sb, &c, &r, &err);
    CHECK(rc == 0 && r.code == 0 && r.out.len == 7, "exec works while a spawned process runs");
    sl_sandbox_result_release(&r);
    sl_err_clear(&err);
    CHECK(put(&x, "still\n") && get_line(&x, line, sizeof line, 5) && !strcmp(line, "still") &&
              sl_sandbox_proc_running(x.p, NULL),
          "the spawned process outlives the exec beside it");
    /* closing stdin ends the loop: exit 0, known to wait */
    close(x.in);
    x.in = -1;
    sl_sandbox_result_init(&r);
    r.code = -1;
    CHECK(eof_within(&x, 5) && sl_sandbox_proc_wait(x.p, 5, &r) && r.kind == SL_EXIT_EXITED &&
              r.code == 0 && !sl_sandbox_proc_running(x.p, NULL),
          "closing its stdin ends it: exited with 0 (kind %d code %d)", r.kind, r.code);
    stop(&x);
}

/* The time of one round trip (a line written, its echo read back). */
static double round_trip_us(const char *const *argv, int n)
{
    proc x;
    if (!start(sb, &x, argv))
        return -1;
    char line[64];
    int good = 0;
    /* warm up: the program's own start is not the round trip */
    put(&x, "warm\n");
    get_line(&x, line, sizeof line, 10);
    double t0 = sl_clock_s();
    for (int i = 0; i < n; i++)
        if (put(&x, "{\"jsonrpc\":\"2.0\",\"id\":1}\n") && get_line(&x, line, sizeof line, 5))
            good++;
    double us = (sl_clock_s() - t0) * 1e6 / n;
    stop(&x);
    return good == n ? us : -1;
}

static void test_round_trip(void)
{
    const char *cat[] = {"cat", NULL};
    const char *py[] = {"/usr/bin/python3", "-c",
                        "import sys\nfor l in sys.stdin:\n sys.stdout.write(l); sys.stdout.flush()",
                        NULL};
    double c = round_trip_us(cat, 2000);
    CHECK(c > 0, "2000 round trips through cat");
    double p = round_trip_us(py, 2000);
    CHECK(p > 0, "2000 round trips through python3");
    printf("# round trip (write a line, read its echo): cat %.1f us, python3 %.1f us\n", c, p);
}

static void test_exit_and_stderr(void)
{
    proc x;
    const char *ex[] = {"sh", "-c", "echo bye; echo 'it went wrong' >&2; exit 3", NULL};
    if (!start(sb, &x, ex)) {
        CHECK(0, "spawn a process that exits by itself");
        return;
    }
    char line[64];
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    CHECK(get_line(&x, line, sizeof line, 5) && !strcmp(line, "bye") && eof_within(&x, 5),
          "its output, then EOF");
    CHECK(sl_sandbox_proc_wait(x.p, 5, &r) && !sl_sandbox_proc_running(x.p, NULL) &&
              r.kind == SL_EXIT_EXITED && r.code == 3 && sl_sandbox_result_code(&r) == 3,
          "it ended by itself: running is false, exited with 3 (kind %d code %d)", r.kind,
          r.code);
    CHECK(stderr_has(&x, "it went wrong", 2), "its stderr is kept: '%s'",
          esc(sl_sandbox_proc_stderr(x.p)));
    signal(SIGPIPE, SIG_IGN);
    errno = 0;
    CHECK(write(x.in, "late\n", 5) < 0 && errno == EPIPE,
          "a write after it ended fails with EPIPE (%s)", strerror(errno));
    stop(&x);

    /* more stderr than a pipe holds, nobody reading: it does not stall,
     * and the newest 64 KiB are kept */
    const char *loud[] = {"sh", "-c",
                          "head -c 300000 /dev/zero | tr '\\0' x >&2; echo END >&2; echo done; "
                          "exec cat",
                          NULL};
    if (!start(sb, &x, loud)) {
        CHECK(0, "spawn a loud process");
        return;
    }
    CHECK(get_line(&x, line, sizeof line, 10) && !strcmp(line, "done"),
          "300 KB on stderr with nobody reading does not stall it");
    stderr_has(&x, "END", 5);
    const char *e = sl_sandbox_proc_stderr(x.p);
    size_t n = strlen(e);
    CHECK(n == 65536 && !strcmp(e + n - 4, "END\n") && e[0] == 'x',
          "stderr keeps the newest 64 KiB (%zu bytes, ends '%s')", n,
          esc(n >= 4 ? e + n - 4 : e));
    stop(&x);

    const char *missing[] = {"no-such-program-here", NULL};
    if (start(sb, &x, missing)) {
        sl_sandbox_result_init(&r);
        CHECK(sl_sandbox_proc_wait(x.p, 5, &r) && r.kind == SL_EXIT_EXITED && r.code == 127 &&
                  stderr_has(&x, "not found", 2),
              "a program that is not there exits 127 and says so: %s",
              esc(sl_sandbox_proc_stderr(x.p)));
        stop(&x);
    } else {
        CHECK(0, "spawn of a missing program starts (and exits 127)");
    }
    sl_err err = {0};
    sl_sandbox_proc *p = NULL;
    int in = 7, out = 7;
    const char *none[] = {NULL};
    sl_sandbox_cmd c = {.argv = none};
    CHECK(sl_sandbox_spawn(sb, &c, &p, &in, &out, &err) < 0 && err.code == SL_EINVAL && !p &&
              in == -1 && out == -1,
          "an empty argv is refused: %s", err.msg);
    sl_err_clear(&err);
}

static void test_free_kills(void)
{
    int t0 = threads(), f0 = fds();
    proc x;
    const char *stubborn[] = {"sh", "-c",
                              "trap '' TERM; sleep 98761 & setsid sleep 98762 & echo ready; "
                              "while :; do sleep 1; done",
                              "spawn-marker-98760", NULL};
    if (!start(sb, &x, stubborn)) {
        CHECK(0, "spawn a process that ignores SIGTERM");
        return;
    }
    char line[64];
    CHECK(get_line(&x, line, sizeof line, 5) && !strcmp(line, "ready"), "it is ready");
    CHECK(threads() == t0 + 1, "one thread watches it (%d, was %d)", threads(), t0);
    pid_t sh = find_marked("spawn-marker-98760");
    char ns[128] = "", path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/pid", (long)sh);
    ssize_t k = sh > 0 ? readlink(path, ns, sizeof ns - 1) : -1;
    if (k > 0)
        ns[k] = 0;
    for (int i = 0; i < 200 && in_pidns(ns) < 3; i++)
        usleep(10000);
    int before = in_pidns(ns);
    CHECK(sh > 0 && k > 0 && before >= 3 && find_marked("sleep 98761") &&
              find_marked("sleep 98762"),
          "it, its child and a child in a session of its own run (%d in the sandbox)", before);
    kill(sh, SIGTERM);
    usleep(50000);
    CHECK(sl_sandbox_proc_running(x.p, NULL), "SIGTERM does not end it");
    double t = sl_clock_s();
    sl_sandbox_proc_free(x.p);
    t = sl_clock_s() - t;
    x.p = NULL;
    int after = in_pidns(ns);
    for (int i = 0; i < 200 && after; i++) {
        usleep(10000);
        after = in_pidns(ns);
    }
    CHECK(!find_marked("spawn-marker-98760") && !find_marked("sleep 98761"),
          "proc_free killed it and its child (%.1f ms)", t * 1000);
    CHECK(after == 0 && !find_marked("sleep 98762"),
          "nothing is left in the sandbox, the other session's child neither (%d)", after);
    close(x.in);
    close(x.out);
    CHECK(threads() == t0 && fds() == f0, "no thread or descriptor left (%d/%d threads, %d/%d fds)",
          threads(), t0, fds(), f0);
    const char *echo[] = {"echo", "ok", NULL};
    sl_sandbox_cmd c = {.argv = echo, .timeout_s = 10};
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    CHECK(sl_sandbox_exec(sb, &c, &r, NULL) == 0 && r.code == 0, "the sandbox still works");
    sl_sandbox_result_release(&r);
    sl_sandbox_proc_free(NULL);
}

static void test_python(void)
{
    proc x;
    const char *py[] = {"/usr/bin/python3", "-c",
                        "import json, os, sys\n"
                        "for line in sys.stdin:\n"
                        "    req = json.loads(line)\n"
                        "    print(json.dumps({'id': req['id'], 'sum': sum(req['xs']),\n"
                        "                      'uid': os.getuid(), 'cwd': os.getcwd()}),\n"
                        "          flush=True)\n"
                        "    print('served', req['id'], file=sys.stderr, flush=True)\n",
                        NULL};
    if (!start(sb, &x, py)) {
        CHECK(0, "spawn python3");
        return;
    }
    int good = 0;
    char line[512];
    for (int i = 0; i < 50; i++) {
        char req[128];
        snprintf(req, sizeof req, "{\"id\": %d, \"xs\": [%d, %d, 1]}\n", i, i, i * 2);
        if (!put(&x, req) || !get_line(&x, line, sizeof line, 10))
            continue;
        sl_value *v = json_loads(line, 0, NULL);
        if (v && json_integer_value(json_object_get(v, "id")) == i &&
            json_integer_value(json_object_get(v, "sum")) == 3 * i + 1 &&
            json_integer_value(json_object_get(v, "uid")) == 1000 &&
            !strcmp(json_string_value(json_object_get(v, "cwd")) ?: "", "/workspace"))
            good++;
        else if (good == i)
            printf("# answer %d: %s\n", i, esc(line));
        json_decref(v);
    }
    CHECK(good == 50, "python3 answers 50 JSON lines, as uid 1000 in /workspace (%d)", good);
    CHECK(stderr_has(&x, "served 49", 2), "its stderr is kept beside");
    close(x.in);
    x.in = -1;
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    CHECK(sl_sandbox_proc_wait(x.p, 5, &r) && r.kind == SL_EXIT_EXITED && r.code == 0,
          "python3 ends at EOF with 0");
    stop(&x);
}

static void test_limits(void)
{
    sl_sandbox *box = make_box(16, sb_memory ? 64 << 20 : 0, 1);
    if (!box) {
        CHECK(0, "a sandbox with small limits");
        return;
    }
    proc x;
    const char *bomb[] = {"/usr/bin/python3", "-c",
                          "import os, sys, time\n"
                          "n = 0\n"
                          "try:\n"
                          "    while n < 200:\n"
                          "        if os.fork() == 0:\n"
                          "            time.sleep(60); os._exit(0)\n"
                          "        n += 1\n"
                          "except OSError as e:\n"
                          "    print('stopped', n, e.errno, flush=True)\n"
                          "else:\n"
                          "    print('forked', n, flush=True)\n"
                          "sys.stdin.read()\n",
                          NULL};
    char line[128] = "";
    if (start(box, &x, bomb)) {
        int n = -1;
        bool got = get_line(&x, line, sizeof line, 20);
        CHECK(got && sscanf(line, "stopped %d", &n) == 1 && n > 0 && n < 16,
              "a fork bomb spawned in a 16-process sandbox is stopped: '%s'", line);
        /* the sandbox is full: init cannot start another (without a
         * cgroup, RLIMIT_NPROC binds the command's own forks only) */
        bool cgroup = !strstr(sl_local_notes(box), "no cgroup");
        proc y;
        const char *tru[] = {"true", NULL};
        sl_sandbox_cmd c1 = {.argv = tru};
        sl_err err = {0};
        y.p = NULL;
        int f0 = fds(), t0 = threads();
        int rc1 = cgroup ? sl_sandbox_spawn(box, &c1, &y.p, &y.in, &y.out, &err) : -1;
        if (cgroup)
            CHECK(rc1 < 0 && err.code == SL_ELIMIT && !y.p && y.in == -1 && y.out == -1 &&
                      fds() == f0 && threads() == t0,
                  "no room for another process: spawn fails, leaving nothing open: %s",
                  err.msg);
        else
            SKIP("no room for another process: spawn fails", "no pids cgroup here");
        sl_err_clear(&err);
        stop(&x);
        const char *echo[] = {"echo", "ok", NULL};
        sl_sandbox_cmd c = {.argv = echo, .timeout_s = 10};
        sl_sandbox_result r;
        sl_sandbox_result_init(&r);
        int rc = sl_sandbox_exec(box, &c, &r, NULL);
        CHECK(rc == 0 && r.code == 0, "freeing it frees the processes (an exec runs: %d)", r.code);
        sl_sandbox_result_release(&r);
    } else {
        CHECK(0, "spawn a fork bomb");
    }
    sl_sandbox_result r;
    if (sb_memory) {
        const char *hog[] = {"/usr/bin/python3", "-c",
                             "import sys\nprint('go', flush=True)\nsys.stdin.readline()\n"
                             "x = 'a' * (300 << 20)\nprint('survived', flush=True)\n",
                             NULL};
        if (start(box, &x, hog)) {
            get_line(&x, line, sizeof line, 10);
            put(&x, "now\n");
            sl_sandbox_result_init(&r);
            CHECK(eof_within(&x, 20) && sl_sandbox_proc_wait(x.p, 10, &r) &&
                      r.kind == SL_EXIT_LIMIT && r.hit == SL_SBLIMIT_MEMORY,
                  "300 MB in a 64 MiB sandbox: killed for memory (kind %d, '%s')", r.kind,
                  r.limit);
            stop(&x);
        } else {
            CHECK(0, "spawn a memory hog");
        }
    } else {
        SKIP("a memory hog is killed for memory", "no memory limit here");
    }
    const char *spin[] = {"sh", "-c", "while :; do :; done", NULL};
    if (start(box, &x, spin)) {
        sl_sandbox_result_init(&r);
        CHECK(sl_sandbox_proc_wait(x.p, 15, &r) && r.kind == SL_EXIT_LIMIT &&
                  r.hit == SL_SBLIMIT_CPU,
              "a loop past cpu_seconds: killed for CPU time (kind %d, '%s')", r.kind, r.limit);
        stop(&x);
    } else {
        CHECK(0, "spawn a spinning loop");
    }
    /* seccomp and the namespaces hold as for exec */
    const char *un[] = {"/usr/bin/python3", "-c",
                        "import ctypes, os\n"
                        "libc = ctypes.CDLL(None, use_errno=True)\n"
                        "rc = libc.unshare(0x10000000)\n"
                        "print('unshare', rc, ctypes.get_errno())\n"
                        "print('net', open('/proc/net/dev').read().count(':'), flush=True)\n",
                        NULL};
    if (start(box, &x, un)) {
        char l2[128] = "";
        bool ok = get_line(&x, line, sizeof line, 10) && get_line(&x, l2, sizeof l2, 10);
        CHECK(ok && !strcmp(line, "unshare -1 1") && !strcmp(l2, "net 1"),
              "seccomp refuses unshare(CLONE_NEWUSER) and only loopback is there ('%s', '%s')",
              line, l2);
        stop(&x);
    } else {
        CHECK(0, "spawn a probe");
    }
    sl_sandbox_destroy(box);
}

static void test_destroy_under_it(void)
{
    sl_sandbox *box = make_box(0, sb_memory, 0);
    if (!box) {
        CHECK(0, "a second sandbox");
        return;
    }
    int t0 = threads();
    proc x, y;
    const char *cat[] = {"cat", NULL};
    const char *sh[] = {"sh", "-c", "echo up >&2; exec sleep 1000", NULL};
    if (!start(box, &x, cat) || !start(box, &y, sh)) {
        CHECK(0, "spawn two processes in the second sandbox");
        sl_sandbox_destroy(box);
        return;
    }
    char line[32];
    CHECK(put(&x, "hi\n") && get_line(&x, line, sizeof line, 5) && !strcmp(line, "hi") &&
              stderr_has(&y, "up", 5),
          "both run");
    sl_sandbox_destroy(box);
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    CHECK(eof_within(&x, 5) && sl_sandbox_proc_wait(x.p, 5, &r) && r.kind == SL_EXIT_SIGNALED &&
              r.sig == SIGKILL,
          "destroying the sandbox kills them: EOF, then killed (kind %d sig %d)", r.kind, r.sig);
    CHECK(sl_sandbox_proc_wait(y.p, 5, NULL) && !sl_sandbox_proc_running(y.p, NULL) &&
              strstr(sl_sandbox_proc_stderr(y.p), "up"),
          "the other ended too, its stderr still there");
    /* the kernel drops a dying process's descriptors a moment after its
     * exit is seen, stdout before stdin: a write may still land */
    bool closed = false;
    for (int i = 0; i < 200 && !closed; i++) {
        errno = 0;
        closed = write(x.in, "x\n", 2) < 0 && errno == EPIPE;
        if (!closed)
            usleep(10000);
    }
    CHECK(closed, "its stdin is closed (%s)", strerror(errno));
    stop(&x);
    stop(&y);
    CHECK(threads() == t0, "their threads are gone (%d, was %d)",
          threads(), t0);
}

static const sl_sandbox_ops no_spawn_ops[] = {{.name = "e2b"}, {.name = "ssh"}};

static void test_unsupported(void)
{
    for (int i = 0; i < 2; i++) {
        sl_sandbox fake = {.ops = &no_spawn_ops[i]};
        const char *argv[] = {"true", NULL};
        sl_sandbox_cmd c = {.argv = argv};
        sl_sandbox_proc *p = (sl_sandbox_proc *)&fake;
        int in = 5, out = 5;
        sl_err err = {0};
        int rc = sl_sandbox_spawn(&fake, &c, &p, &in, &out, &err);
        CHECK(rc < 0 && err.code == SL_EUNSUPPORTED && !p && in == -1 && out == -1 &&
                  strstr(err.msg, no_spawn_ops[i].name) && strstr(err.msg, "local provider"),
              "a provider without spawn refuses: %s", err.msg);
        sl_err_clear(&err);
    }
    /* the real e2b provider, against its stand-in */
    int port = 0;
    pid_t d = start_stand_in("e2bd", true, &port);
    if (d <= 0) {
        SKIP("e2b refuses to spawn", "the e2bd stand-in did not start");
        return;
    }
    char url[64], text[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    snprintf(text, sizeof text, "{\"api_key\": \"e2b_test\", \"api_url\": \"%s\", \"envd_url\": \"%s\"}",
             url, url);
    sl_value *set = J(text);
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "e2b";
    o.settings = set;
    sl_sandbox *e2b = NULL;
    sl_err err = {0};
    if (sl_sandbox_create(&o, &e2b, &err) == 0) {
        const char *argv[] = {"cat", NULL};
        sl_sandbox_cmd c = {.argv = argv};
        sl_sandbox_proc *p = NULL;
        int in, out;
        int rc = sl_sandbox_spawn(e2b, &c, &p, &in, &out, &err);
        CHECK(rc < 0 && err.code == SL_EUNSUPPORTED && strstr(err.msg, "the e2b provider"),
              "the e2b provider refuses to spawn: %s", err.msg);
        sl_sandbox_destroy(e2b);
    } else {
        CHECK(0, "an e2b sandbox on the stand-in: %s", err.msg);
    }
    sl_err_clear(&err);
    json_decref(set);
    kill(d, SIGTERM);
    waitpid(d, NULL, 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    sl_err err = {0};
    if (sl_local_memory_check(sb_memory, &err)) {
        printf("# no memory limit here: %s\n", err.msg);
        sb_memory = 0;
        sl_err_clear(&err);
    }
    sb = make_box(0, sb_memory, 0);
    if (!sb) {
        printf("1..0 # SKIP no sandbox here\n");
        return 0;
    }
    test_echo();
    test_round_trip();
    test_exit_and_stderr();
    test_free_kills();
    test_python();
    sl_sandbox_destroy(sb);
    test_limits();
    test_destroy_under_it();
    test_unsupported();
    return tap_done();
}
