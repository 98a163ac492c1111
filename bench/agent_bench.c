/*
 * agent_bench — the sandboxed runtime's two speed targets (issue 5):
 *
 *   1. agent step overhead on the local sandbox, excluding model and
 *      command time: ≤ 200 µs.  The loop runs against a model that answers
 *      at once (a bash call per turn, then a final answer) in a real local
 *      sandbox; the session counts the seconds spent waiting on the model
 *      and on the sandbox, and the rest, per tool step, is sluice's own.
 *      Also shown: the same for a write_file + read_file turn.
 *   2. the first command of a run, sandbox creation included (what an
 *      agent's first bash call costs), ≤ 0.5× bubblewrap's cold start of
 *      the same command in the same run:
 *        bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc bash -c …
 *
 * Medians; prints each figure, the ratio and PASS/FAIL; exit 1 on a miss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "core/clock.h"
#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"

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

/* A model that answers at once: `steps` turns of tool calls, then text. */
typedef struct {
    int turn, steps;
    const char *kind;  /* "bash" or "files" */
} fake_model;

static int fake_call(void *ud, sl_value *req, sl_value **resp)
{
    fake_model *m = ud;
    (void)req;
    if (m->turn++ >= m->steps) {
        *resp = json_pack("{s:s,s:[],s:{s:i}}", "text", "done", "tool_calls", "usage",
                          "total_tokens", 10);
        return 0;
    }
    char id[32];
    snprintf(id, sizeof id, "call_%d", m->turn);
    if (!strcmp(m->kind, "bash"))
        *resp = json_pack("{s:s,s:[{s:s,s:s,s:s}],s:{s:i}}", "text", "", "tool_calls", "id", id,
                          "name", "bash", "arguments", "{\"command\":\"true\"}", "usage",
                          "total_tokens", 10);
    else
        *resp = json_pack("{s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s}],s:{s:i}}", "text", "",
                          "tool_calls", "id", id, "name", "write_file", "arguments",
                          "{\"path\":\"notes/a.txt\",\"content\":\"one\\ntwo\\nthree\\n\"}", "id",
                          "r", "name", "read_file", "arguments", "{\"path\":\"notes/a.txt\"}",
                          "usage", "total_tokens", 10);
    return 0;
}

/* Seconds of sluice's own work per tool call over one agent run. */
static double overhead(sl_sandbox *sb, const char *kind, int steps, int *calls)
{
    sl_agent_limits L;
    sl_agent_limits_init(&L);
    L.max_turns = steps + 1;
    fake_model m = {0, steps, kind};
    sl_agent_io io = {.call = fake_call, .ud = &m};
    sl_agent_session s;
    sl_err e = {0};
    if (sl_agent_session_init(&s, sb, &L, &io, &e)) {
        fprintf(stderr, "agent_bench: %s\n", e.msg);
        exit(2);
    }
    sl_agent_result res;
    sl_err err = {0};
    sl_value *user = json_string("go");
    double t0 = sl_clock_s();
    int rc = sl_agent_run(&s, "bench", user, &res, &err);
    double total = sl_clock_s() - t0;
    json_decref(user);
    if (rc) {
        fprintf(stderr, "agent_bench: %s\n", err.msg);
        exit(2);
    }
    *calls = res.tool_calls;
    double own = (total - s.model_s - s.sandbox_s) / res.tool_calls;
    sl_agent_result_release(&res);
    sl_agent_session_release(&s);
    return own;
}

static int report(const char *what, double value, double target, const char *unit)
{
    bool ok = value <= target;
    printf("  %-58s %9.2f %s   target <= %g %s   %s\n", what, value, unit, target, unit,
           ok ? "PASS" : "FAIL");
    return !ok;
}

static int run_bwrap(const char *bwrap)
{
    pid_t p = fork();
    if (p == 0) {
        execl(bwrap, bwrap, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
              "/proc", "bash", "-c", "true", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(void)
{
    int failed = 0;
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    sl_sandbox *sb;
    sl_err err = {0};
    if (sl_local_memory_check(o.memory_bytes, &err)) {
        /* unprivileged without a delegated cgroup: measured without one */
        fprintf(stderr, "agent_bench: measured without a memory limit: %s\n", err.msg);
        o.memory_bytes = 0;
        sl_err_clear(&err);
    }
    if (sl_sandbox_create(&o, &sb, &err)) {
        fprintf(stderr, "agent_bench: %s\n", err.msg);
        return 2;
    }
    printf("agent step overhead (local sandbox; model and sandbox time excluded; median of 7 "
           "runs)\n");
    double v[7];
    int calls = 0;
    overhead(sb, "bash", 20, &calls);  /* warm up */
    for (int i = 0; i < 7; i++)
        v[i] = overhead(sb, "bash", 50, &calls);
    failed |= report("per step, bash `true` (50 steps)", median(v, 7) * 1e6, 200, "µs");
    for (int i = 0; i < 7; i++)
        v[i] = overhead(sb, "files", 50, &calls);
    failed |= report("per step, write_file + read_file (100 steps)", median(v, 7) * 1e6, 200,
                     "µs");
    sl_sandbox_destroy(sb);

    printf("first command of a run, sandbox creation included (median of 41, interleaved)\n");
    const char *bwrap = access("/usr/bin/bwrap", X_OK) == 0 ? "/usr/bin/bwrap" : NULL;
    double a[41], b[41];
    for (int i = 0; i < 41; i++) {
        double t0 = sl_clock_s();
        sl_sandbox *s2;
        if (sl_sandbox_create(&o, &s2, &err)) {
            fprintf(stderr, "agent_bench: %s\n", err.msg);
            return 2;
        }
        sl_agent_limits L;
        sl_agent_limits_init(&L);
        sl_agent_io io = {0};
        sl_agent_session s;
        if (sl_agent_session_init(&s, s2, &L, &io, &err)) {
            fprintf(stderr, "agent_bench: %s\n", err.msg);
            return 2;
        }
        sl_buf out;
        sl_buf_init(&out, 0);
        sl_value *args = json_pack("{s:s}", "command", "true");
        bool bad = sl_agent_tool(&s, "bash", args, &out);
        a[i] = sl_clock_s() - t0;
        json_decref(args);
        if (bad)
            fprintf(stderr, "agent_bench: the first bash call failed: %s\n", out.data);
        sl_buf_release(&out);
        sl_agent_session_release(&s);
        sl_sandbox_destroy(s2);
        if (bwrap) {
            t0 = sl_clock_s();
            run_bwrap(bwrap);
            b[i] = sl_clock_s() - t0;
        }
    }
    double ours = median(a, 41);
    printf("  sluice: sandbox + first bash tool call          %8.2f ms\n", ours * 1e3);
    if (bwrap) {
        double peer = median(b, 41);
        printf("  bwrap --unshare-all … bash -c true              %8.2f ms\n", peer * 1e3);
        failed |= report("ratio sluice / bwrap", ours / peer, 0.5, "x");
    } else {
        printf("  bwrap is not installed: no ratio (apt-get install bubblewrap)\n");
        failed = 1;
    }
    return failed;
}
