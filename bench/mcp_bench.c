/*
 * mcp_bench — the MCP client's own cost, against the transport under it
 * (targets from the MCP issue):
 *
 *   http:  a trivial tool called over Streamable HTTP (2026-07-28, one
 *          kept connection) against a bare POST of the same request body
 *          to the same node server's /echo with an sl_http handle kept the
 *          same way, the answer parsed as JSON: median <= 1.2x;
 *   stdio: the same tool of a stdio server in a local sandbox against a
 *          bare line echo through a process spawned the same way
 *          (sl_sandbox_spawn, the same node script with --echo): <= 1.5x.
 *
 * Both sides of a pair run in alternating rounds of 10 calls in one
 * process after 1,500 warm-up calls each (node's JIT, connections, the tool
 * table); the ratio is the median of the ratios of neighbouring rounds,
 * which share whatever else the machine is doing.  The servers are
 * tests/mcp/raw.mjs and raw-stdio.mjs (hand-written, no SDK: the figure is
 * sluice's cost, not an SDK's); the @modelcontextprotocol/server 2.x
 * server is timed too, for reference.  Needs node and tests/mcp's npm
 * packages (scripts/install-deps); without them it says so and passes.
 *
 *   mcp_bench [-n CALLS_PER_ROUND] [-r ROUNDS]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "net/http.h"
#include "sandbox/sandbox.h"
#include "tools/mcp.h"

static int per_round = 10, rounds = 201;

/* ---- a node server, a child that dies with us ---- */

static pid_t start_node(const char *script, const char *flag, int *port)
{
    char pf[] = "/tmp/sluice-mcpbench-XXXXXX";
    int fd = mkstemp(pf);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(pf);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execlp("node", "node", script, "--port", "0", "--port-file", pf, flag, (char *)NULL);
        _exit(127);
    }
    char line[32] = "";
    for (int i = 0; i < 1500 && !line[0]; i++) {
        FILE *f = fopen(pf, "r");
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = 0;
            fclose(f);
        }
        if (!line[0])
            usleep(10000);
    }
    unlink(pf);
    *port = atoi(line);
    return *port > 0 ? pid : -1;
}

static void stop_node(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* ---- the two sides ---- */

static sl_sandbox *box;

static sl_sandbox *give_box(void *ud, sl_err *err)
{
    (void)ud;
    (void)err;
    return box;
}

/* Seconds per call of `per_round` calls of tool `name`. */
static double mcp_round(sl_toolset *t, const char *name, bool *ok)
{
    sl_tool_ctx ctx = {.timeout_s = 30, .sandbox = give_box};
    sl_value *args = json_pack("{s:s}", "text", "hello");
    double t0 = sl_clock_s();
    for (int i = 0; i < per_round; i++) {
        sl_tool_result r;
        sl_err err = {0};
        sl_tool_result_init(&r);
        if (sl_toolset_call(t, &ctx, name, args, &r, &err)) {
            fprintf(stderr, "mcp_bench: %s\n", err.msg);
            *ok = false;
        }
        sl_err_clear(&err);
        sl_tool_result_release(&r);
    }
    double dt = (sl_clock_s() - t0) / per_round;
    json_decref(args);
    return dt;
}

/* What the MCP client sends for that call (the same size on the wire). */
static const char BODY[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":{"
    "\"text\":\"hello\"},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"sluice\",\"version\":\"0.1.0\"},"
    "\"io.modelcontextprotocol/clientCapabilities\":{},\"progressToken\":12345}},\"id\":12345}";

static int collect(const char *p, size_t n, void *ud)
{
    return sl_buf_add(ud, p, n);
}

static double post_round(sl_http *h, const char *url, bool *ok)
{
    sl_buf b;
    sl_buf_init(&b, 1 << 20);
    double t0 = sl_clock_s();
    for (int i = 0; i < per_round; i++) {
        sl_http_reset(h);
        sl_http_url(h, url);
        sl_http_method(h, "POST", BODY, sizeof BODY - 1, true);
        sl_http_header(h, "Content-Type: application/json");
        sl_http_header(h, "Accept: application/json, text/event-stream");
        sl_http_opts *o = sl_http_opts_of(h);
        o->guard = true;
        o->allow_private = true;
        o->timeout_s = 30;
        o->tcp_keepalive = true;
        o->on_body = collect;
        o->ud = &b;
        sl_buf_reset(&b);
        sl_value *v = NULL;
        if (sl_http_perform(h) != SL_HTTP_OK || !(v = json_loadb(b.data, b.len, 0, NULL)))
            *ok = false;
        json_decref(v);
    }
    double dt = (sl_clock_s() - t0) / per_round;
    sl_buf_release(&b);
    return dt;
}

/* A bare line echo through a spawned process. */
static double pipe_round(int in, int out, bool *ok)
{
    char line[sizeof BODY + 1];
    memcpy(line, BODY, sizeof BODY - 1);
    line[sizeof BODY - 1] = '\n';
    char buf[4096];
    double t0 = sl_clock_s();
    for (int i = 0; i < per_round; i++) {
        if (write(in, line, sizeof BODY) != (ssize_t)sizeof BODY) {
            *ok = false;
            break;
        }
        size_t got = 0;
        while (!got || buf[got - 1] != '\n') {
            struct pollfd pf = {out, POLLIN, 0};
            if (poll(&pf, 1, 5000) != 1) {
                *ok = false;
                break;
            }
            ssize_t r = read(out, buf + got, sizeof buf - got);
            if (r <= 0) {
                *ok = false;
                break;
            }
            got += (size_t)r;
        }
        if (!*ok)
            break;
        sl_value *v = json_loadb(buf, got, 0, NULL);
        if (!v)
            *ok = false;
        json_decref(v);
    }
    return (sl_clock_s() - t0) / per_round;
}

/* Alternating rounds; prints the pair and returns 0 (pass), 1 (fail), 2. */
typedef double (*round_fn)(void *a, bool *ok);
static double r_mcp(void *a, bool *ok)
{
    return mcp_round(a, "t", ok);
}
static double r_sdk_echo(void *a, bool *ok)
{
    return mcp_round(a, "echo", ok);
}

typedef struct {
    sl_http *h;
    const char *url;
} post_arg;
static double r_post(void *a, bool *ok)
{
    post_arg *p = a;
    return post_round(p->h, p->url, ok);
}

typedef struct {
    int in, out;
} pipe_arg;
static double r_pipe(void *a, bool *ok)
{
    pipe_arg *p = a;
    return pipe_round(p->in, p->out, ok);
}

static int pair(const char *name, const char *what, const char *peer, round_fn f, void *fa,
                round_fn g, void *ga, double target)
{
    double *x = calloc((size_t)rounds, sizeof *x), *y = calloc((size_t)rounds, sizeof *y);
    bool ok = true;
    for (int w = 0; w < 150 && ok; w++) {  /* warm up: connections, the tool table, node's JIT */
        f(fa, &ok);
        g(ga, &ok);
    }
    for (int r = 0; r < rounds && ok; r++) {
        x[r] = f(fa, &ok);
        y[r] = g(ga, &ok);
    }
    if (!ok) {
        printf("%s  %s: a call failed  FAIL\n", name, what);
        free(x);
        free(y);
        return 2;
    }
    /* rounds next to each other in time share the machine's load: the
     * median of their ratios is steadier than the ratio of the medians */
    double *q = calloc((size_t)rounds + 1, sizeof *q);
    for (int r = 0; r < rounds; r++)
        q[r] = x[r] / y[r];
    double ratio = median(q, rounds);
    free(q);
    double mx = median(x, rounds) * 1e6, my = median(y, rounds) * 1e6;
    bool pass = target <= 0 || ratio <= target;
    if (target > 0)
        printf("%s  %s: median %.1f us per call; %s: %.1f us; ratio %.2fx (target <= %.1fx)  %s\n",
               name, what, mx, peer, my, ratio, target, pass ? "PASS" : "FAIL");
    else
        printf("%s  %s: median %.1f us per call; %s: %.1f us; ratio %.2fx (for reference)\n", name,
               what, mx, peer, my, ratio);
    free(x);
    free(y);
    return pass ? 0 : 1;
}

static int http_pairs(void)
{
    int status = 0, port;
    pid_t raw = start_node("tests/mcp/raw.mjs", "--quiet", &port);
    if (raw < 0) {
        printf("http  the node server did not start  FAIL\n");
        return 2;
    }
    char url[128], echo[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/ok/mcp", port);
    snprintf(echo, sizeof echo, "http://127.0.0.1:%d/echo", port);
    sl_mcp_opts o = {.url = url, .allow_private = true};
    sl_err err = {0};
    sl_toolset *t = sl_mcp_new(&o, &err);
    sl_http *h = sl_http_new(&err);
    post_arg pa = {h, echo};
    int rc = pair("http ", "a trivial tool over Streamable HTTP (2026-07-28, kept connection)",
                  "a bare POST of the same body to the same server's /echo", r_mcp, t, r_post, &pa,
                  1.2);
    status = rc > status ? rc : status;
    sl_toolset_free(t);
    stop_node(raw);

    /* for reference: the SDK's server, whose own work dominates */
    int sport;
    pid_t sdk = start_node("tests/mcp/modern.mjs", "--reject-legacy", &sport);
    if (sdk > 0) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d/mcp", sport);
        snprintf(echo, sizeof echo, "http://127.0.0.1:%d/echo", sport);
        o.url = url;
        t = sl_mcp_new(&o, &err);
        /* the SDK server has no tool `t`: echo is its trivial one */
        pa.url = echo;
        sl_value *tools = NULL;
        sl_tool_ctx ctx = {.timeout_s = 30};
        if (!sl_toolset_list(t, &ctx, &tools, &err))
            pair("http ", "the same through @modelcontextprotocol/server 2.x (tool echo)",
                 "a bare POST to its /echo", r_sdk_echo, t, r_post, &pa, 0);
        json_decref(tools);
        sl_toolset_free(t);
        stop_node(sdk);
    }
    sl_http_free(h);
    sl_err_clear(&err);
    return status;
}

static int stdio_pair(void)
{
    static char host[4096];
    if (!realpath("tests/mcp", host))
        return 2;
    sl_sandbox_bind bind = {host, "/opt/mcp"};
    sl_sandbox_opts so;
    sl_sandbox_opts_init(&so);
    so.binds = &bind;
    so.n_binds = 1;
    sl_err err = {0};
    if (sl_sandbox_create(&so, &box, &err)) {
        printf("stdio  SKIP: no local sandbox here (%s)\n", err.msg);
        sl_err_clear(&err);
        return 0;
    }
    const char *echo_argv[] = {"node", "/opt/mcp/raw-stdio.mjs", "--echo", NULL};
    sl_sandbox_cmd cmd = {.argv = echo_argv};
    sl_sandbox_proc *p = NULL;
    pipe_arg pa = {-1, -1};
    if (sl_sandbox_spawn(box, &cmd, &p, &pa.in, &pa.out, &err)) {
        printf("stdio  the echo process did not start: %s  FAIL\n", err.msg);
        sl_err_clear(&err);
        sl_sandbox_destroy(box);
        return 2;
    }
    const char *mcp_argv[] = {"node", "/opt/mcp/raw-stdio.mjs", NULL};
    sl_mcp_opts o = {.command = mcp_argv};
    sl_toolset *t = sl_mcp_new(&o, &err);
    int rc = pair("stdio", "a trivial tool of a stdio server in a local sandbox",
                  "a bare line echo through a process spawned the same way", r_mcp, t, r_pipe, &pa,
                  1.5);
    sl_toolset_free(t);
    close(pa.in);
    close(pa.out);
    sl_sandbox_proc_free(p);
    sl_sandbox_destroy(box);
    box = NULL;
    return rc;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            per_round = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
    }
    if (per_round < 1 || rounds < 1) {
        fprintf(stderr, "usage: mcp_bench [-n CALLS_PER_ROUND] [-r ROUNDS]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sl_log_set_level(SL_LOG_ERROR);  /* the SDK server's test tool with a broken header */
    struct stat st;
    if (stat("tests/mcp/node_modules/@modelcontextprotocol/server", &st) ||
        system("node --version >/dev/null 2>&1")) {
        printf("mcp  SKIP: node or tests/mcp/node_modules is missing (scripts/install-deps)\n");
        return 0;
    }
    printf("# %d rounds of %d calls each side, alternating; the median of the rounds' ratios\n",
           rounds, per_round);
    int a = http_pairs();
    int b = stdio_pair();
    return a > b ? a : b;
}
