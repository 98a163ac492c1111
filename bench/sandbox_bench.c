/*
 * sandbox_bench — the local sandbox against its peers, in one run:
 *
 *   cold: create a sandbox + run `true` + destroy, against
 *         `bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true`
 *         (target: sluice <= 0.5x bubblewrap);
 *   warm: one more `true` in a live sandbox, against a bare fork+exec of
 *         `true` from this process (target: <= 1.5x);
 *   code: a code node round trip (python3, trivial main, inputs in and
 *         the checked JSON result out) in a live sandbox, against a bare
 *         `python3 -c pass` start (target: <= 1.3x).
 *
 * Each pair alternates (sluice, peer, sluice, peer, ...) so that noise on
 * this 2-core machine hits both alike; medians are compared.  Prints one
 * line per measurement and "PASS"/"FAIL" per target; exits 1 on a miss.
 *
 *   sandbox_bench [-n ROUNDS]
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "nodes/code.h"
#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"

extern char **environ;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* fork + execve + wait, stdout/stderr to /dev/null */
static int fork_exec(const char *path, char *const argv[])
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execve(path, argv, environ);
        _exit(127);
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const char *find(const char *name)
{
    static char buf[3][256];
    static int k;
    const char *dirs[] = {"/usr/bin", "/bin", "/usr/local/bin", NULL};
    for (int i = 0; dirs[i]; i++) {
        char *b = buf[k % 3];
        snprintf(b, 256, "%s/%s", dirs[i], name);
        if (!access(b, X_OK)) {
            k++;
            return b;
        }
    }
    return NULL;
}

static int report(const char *what, double ours, double peer, const char *peer_name,
                  double target)
{
    double ratio = ours / peer;
    bool ok = ratio <= target;
    printf("%-5s sluice %8.3f ms   %-22s %8.3f ms   ratio %.2fx (target <= %.1fx)  %s\n", what,
           ours * 1e3, peer_name, peer * 1e3, ratio, target, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

/* The cold path: create a sandbox, run one command, destroy it. */
static int cold_once(const sl_sandbox_opts *o, const sl_sandbox_cmd *c)
{
    sl_err err = {0};
    sl_sandbox *sb;
    if (sl_sandbox_create(o, &sb, &err)) {
        fprintf(stderr, "sandbox_bench: %s\n", err.msg);
        sl_err_clear(&err);
        return -1;
    }
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    sl_sandbox_exec(sb, c, &r, &err);
    sl_sandbox_result_release(&r);
    sl_sandbox_destroy(sb);
    sl_err_clear(&err);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 40;
    if (argc == 3 && !strcmp(argv[1], "-n"))
        n = atoi(argv[2]) > 2 ? atoi(argv[2]) : 3;
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    sl_err err = {0};
    if (sl_local_memory_check(o.memory_bytes, &err)) {
        /* unprivileged without a delegated cgroup: measured without one */
        fprintf(stderr, "sandbox_bench: measured without a memory limit: %s\n", err.msg);
        o.memory_bytes = 0;
        sl_err_clear(&err);
    }
    const char *true_argv[] = {"true", NULL};
    sl_sandbox_cmd tcmd = {.argv = true_argv};
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    int failed = 0;

    const char *bwrap = find("bwrap"), *truebin = find("true"), *py = "/usr/bin/python3";
    if (!truebin) {
        fprintf(stderr, "sandbox_bench: no true binary\n");
        return 2;
    }
    /* warm-up: seccomp compile, page cache, first cgroup */
    for (int i = 0; i < 3; i++)
        if (cold_once(&o, &tcmd))
            return 2;

    /* cold */
    if (bwrap) {
        char *bargv[] = {(char *)bwrap, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                         "--proc", "/proc", (char *)truebin, NULL};
        if (fork_exec(bwrap, bargv) != 0) {
            printf("cold  bubblewrap does not run here; cold comparison skipped\n");
        } else {
            for (int i = 0; i < n; i++) {
                double t0 = sl_clock_s();
                if (cold_once(&o, &tcmd))
                    return 2;
                a[i] = sl_clock_s() - t0;
                t0 = sl_clock_s();
                fork_exec(bwrap, bargv);
                b[i] = sl_clock_s() - t0;
            }
            failed |= report("cold", median(a, n), median(b, n), "bwrap --unshare-all", 0.5);
        }
    } else {
        printf("cold  bubblewrap is not installed (Debian package bubblewrap); skipped\n");
        failed = 1;
    }

    /* warm */
    sl_sandbox *sb;
    if (sl_sandbox_create(&o, &sb, &err)) {
        fprintf(stderr, "sandbox_bench: %s\n", err.msg);
        return 2;
    }
    char *targv[] = {(char *)truebin, NULL};
    for (int i = 0; i < n * 4; i++) {
        int k = i % n;
        double t0 = sl_clock_s();
        sl_sandbox_result r;
        sl_sandbox_result_init(&r);
        sl_sandbox_exec(sb, &tcmd, &r, &err);
        sl_sandbox_result_release(&r);
        double t1 = sl_clock_s();
        fork_exec(truebin, targv);
        double t2 = sl_clock_s();
        if (i >= n * 3 || i < n) { /* keep the last round; the first fills the arrays */
            a[k] = t1 - t0;
            b[k] = t2 - t1;
        }
    }
    failed |= report("warm", median(a, n), median(b, n), "fork+exec true", 1.5);

    /* code node round trip */
    const char *code = "def main(x):\n    return {'y': x + 1}\n";
    sl_value *inputs = json_pack("{s:i}", "x", 41);
    char *pargv[] = {(char *)py, "-c", "pass", NULL};
    for (int i = 0; i < n; i++) {
        double t0 = sl_clock_s();
        sl_sandbox_result r;
        sl_sandbox_result_init(&r);
        char marker[SL_CODE_MARKER_SIZE];
        if (sl_code_marker(marker, &err) ||
            sl_code_exec(sb, true, code, inputs, marker, 30, 1 << 20, NULL, NULL, &r, &err) ||
            r.kind != SL_EXIT_EXITED || r.code != 0 ||
            !strstr(r.out.data ? r.out.data : "", "42")) {
            fprintf(stderr, "sandbox_bench: the code node failed: %s%s\n",
                    r.err.data ? r.err.data : "", err.msg ? err.msg : "");
            return 2;
        }
        sl_sandbox_result_release(&r);
        a[i] = sl_clock_s() - t0;
        t0 = sl_clock_s();
        fork_exec(py, pargv);
        b[i] = sl_clock_s() - t0;
    }
    failed |= report("code", median(a, n), median(b, n), "python3 -c pass", 1.3);
    json_decref(inputs);
    sl_sandbox_destroy(sb);
    free(a);
    free(b);
    return failed;
}
