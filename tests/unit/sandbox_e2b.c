/*
 * sandbox_e2b — the E2B provider against tests/tools/e2bd.py, a stand-in
 * that speaks E2B's REST API and envd's Connect/HTTP wire format and runs
 * the commands as real processes on this host (so the tests can check that
 * a killed command is really gone).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "core/clock.h"
#include "net/http.h"
#include "sandbox/e2b.h"
#include "sandbox/sandbox.h"
#include "tap.h"
#include "util.h"

static int port;
static char api[64];

static pid_t start_e2bd(int *p)
{
    return start_stand_in("e2bd", false, p);
}

static int to_buf(const char *p, size_t n, void *ud)
{
    sl_buf_add(ud, p, n);
    return 0;
}

/* A request to the stand-in through net/http; the answer goes to `out`
 * when given. */
static void request(const char *method, const char *url, const char *header, sl_buf *out)
{
    sl_err e = {0};
    sl_http *h = sl_http_new(&e);
    if (!h) {
        printf("# %s\n", e.msg);
        sl_err_clear(&e);
        return;
    }
    sl_http_url(h, url);
    sl_http_method(h, method, "", 0, !strcmp(method, "POST"));
    if (header)
        sl_http_header(h, header);
    if (out) {
        sl_http_opts_of(h)->on_body = to_buf;
        sl_http_opts_of(h)->ud = out;
    }
    sl_http_perform(h);
    sl_http_free(h);
}

/* A test helper endpoint of the stand-in, as JSON (new reference). */
static sl_value *helper(const char *method, const char *path)
{
    char url[128];
    snprintf(url, sizeof url, "%s%s", api, path);
    sl_buf b;
    sl_buf_init(&b, 0);
    request(method, url, NULL, &b);
    json_error_t je;
    sl_value *v = b.len ? json_loadb(b.data, b.len, 0, &je) : NULL;
    sl_buf_release(&b);
    return v;
}

static void reset_log(void)
{
    json_decref(helper("POST", "/__reset"));
}

/* The first logged request whose path starts with `prefix` (borrowed from log). */
static sl_value *find_req(sl_value *log, const char *method, const char *prefix)
{
    size_t i;
    sl_value *e;
    json_array_foreach(log, i, e) {
        const char *m = json_string_value(json_object_get(e, "method"));
        const char *p = json_string_value(json_object_get(e, "path"));
        if (m && p && !strcmp(m, method) && !strncmp(p, prefix, strlen(prefix)))
            return e;
    }
    return NULL;
}

static sl_value *settings(const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text, "{\"api_key\": \"e2b_test\", \"api_url\": \"%s\", \"envd_url\": \"%s\"%s%s}",
             api, api, extra && *extra ? ", " : "", extra ? extra : "");
    return J(text);
}

static int make(const char *extra, sl_net_mode net, const char *allow, sl_sandbox **sb, sl_err *err)
{
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "e2b";
    o.net = net;
    o.net_allow = allow;
    sl_value *set = settings(extra);
    o.settings = set;
    int rc = sl_e2b_create(&o, sb, err);
    json_decref(set);
    return rc;
}

static int run(sl_sandbox *sb, const char *const *argv, sl_sandbox_result *r)
{
    sl_sandbox_cmd cmd = {.argv = argv, .timeout_s = 20};
    sl_err err = {0};
    sl_sandbox_result_init(r);
    int rc = sl_sandbox_exec(sb, &cmd, r, &err);
    if (rc)
        printf("# exec failed: %s\n", err.msg);
    sl_err_clear(&err);
    return rc;
}

static bool ends_with(const sl_buf *b, const char *tail)
{
    size_t n = strlen(tail);
    return b->data && b->len >= n && !memcmp(b->data + b->len - n, tail, n);
}

static bool pid_gone(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        if (kill(pid, 0) && errno == ESRCH)
            return true;
        char path[64], st[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(st, 1, sizeof st - 1, f);
            fclose(f);
            st[n] = 0;
            char *close_paren = strrchr(st, ')');
            if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
                return true;
        }
        usleep(10000);
    }
    return false;
}

/* ---- streaming ---- */

typedef struct {
    sl_buf out;
    double first_at, t0;
    int chunks;
} stream_rec;

static void on_out(const char *d, size_t n, void *ud)
{
    stream_rec *r = ud;
    if (!r->chunks++)
        r->first_at = sl_clock_s() - r->t0;
    sl_buf_add(&r->out, d, n);
}

/* ---- cancel ---- */

static double cancel_at;
static bool cancel_after(void *ud)
{
    (void)ud;
    return sl_clock_s() >= cancel_at;
}

/* ---- threads ---- */

typedef struct {
    sl_sandbox *sb;
    int id;
    int ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 5; i++) {
        char word[32];
        snprintf(word, sizeof word, "t%d-%d", w->id, i);
        const char *argv[] = {"echo", word, NULL};
        sl_sandbox_result r;
        if (!run(w->sb, argv, &r) && r.kind == SL_EXIT_EXITED && r.code == 0 && r.out.len &&
            !strncmp(r.out.data, word, strlen(word)) && r.out.data[strlen(word)] == '\n')
            w->ok++;
        sl_sandbox_result_release(&r);
    }
    return NULL;
}

typedef struct {
    sl_sandbox *sb;
    sl_sandbox_result r;
    int rc;
} bg_exec;

static void *bg_run(void *arg)
{
    bg_exec *b = arg;
    const char *argv[] = {"sleep", "30", NULL};
    sl_sandbox_cmd cmd = {.argv = argv, .timeout_s = 20};
    sl_sandbox_result_init(&b->r);
    b->rc = sl_sandbox_exec(b->sb, &cmd, &b->r, NULL);
    return NULL;
}

static const char *sb_root(const char *id)
{
    static char root[512];
    root[0] = 0;
    sl_value *all = helper("GET", "/__sandboxes");
    size_t i;
    sl_value *e;
    json_array_foreach(all, i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "sandboxID")), id))
            snprintf(root, sizeof root, "%s", json_string_value(json_object_get(e, "root")));
    }
    json_decref(all);
    return root;
}

static const char *last_sandbox_id(void)
{
    static char id[128];
    id[0] = 0;
    sl_value *all = helper("GET", "/__sandboxes");
    size_t n = json_array_size(all);
    if (n)
        snprintf(id, sizeof id, "%s",
                 json_string_value(json_object_get(json_array_get(all, n - 1), "sandboxID")));
    json_decref(all);
    return id;
}

static void test_create_and_exec(void)
{
    sl_sandbox *sb = NULL;
    sl_err err = {0};
    reset_log();
    int rc = make(NULL, SL_NET_NONE, NULL, &sb, &err);
    CHECK(rc == 0 && sb, "create: %s", err.msg ? err.msg : "ok");
    if (!sb)
        return;
    CHECK(!strcmp(sl_sandbox_provider(sb), "e2b"), "provider is e2b");
    CHECK(!strcmp(sl_sandbox_workspace(sb), "/home/user"), "workspace is %s",
          sl_sandbox_workspace(sb));
    sl_value *log = helper("GET", "/__log");
    sl_value *cr = find_req(log, "POST", "/sandboxes");
    sl_value *body = json_object_get(cr, "body");
    char *shown = show(body);
    CHECK(cr && !strcmp(json_string_value(json_object_get(body, "templateID")), "base") &&
              json_integer_value(json_object_get(body, "timeout")) == 300 &&
              json_is_true(json_object_get(body, "secure")) &&
              json_is_false(json_object_get(body, "allow_internet_access")) &&
              !json_object_get(body, "network"),
          "create body: templateID base, timeout 300, secure, no internet (%s)", shown);
    free(shown);
    const char *keyh = json_string_value(json_object_get(json_object_get(cr, "headers"), "x-api-key"));
    CHECK(keyh && !strcmp(keyh, "<redacted:8>"), "X-API-Key sent (%s)", keyh ? keyh : "none");
    json_decref(log);

    /* output, exit code, stderr */
    reset_log();
    sl_sandbox_result r;
    const char *echo[] = {"echo", "hello world", NULL};
    rc = run(sb, echo, &r);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.code == 0 && r.out.len == 12 &&
              !memcmp(r.out.data, "hello world\n", 12),
          "echo: '%s'", esc(r.out.data));
    sl_sandbox_result_release(&r);

    log = helper("GET", "/__log");
    sl_value *start = find_req(log, "POST", "/process.Process/Start");
    sl_value *h = json_object_get(start, "headers");
    sl_value *sbody = json_object_get(start, "body");
    sl_value *args = json_object_get(json_object_get(sbody, "process"), "args");
    CHECK(start && !strcmp(json_string_value(json_object_get(h, "content-type")), "application/connect+json") &&
              !strcmp(json_string_value(json_object_get(h, "connect-protocol-version")), "1") &&
              !strcmp(json_string_value(json_object_get(h, "e2b-sandbox-port")), "49983") &&
              json_object_get(h, "e2b-sandbox-id") &&
              !strcmp(json_string_value(json_object_get(h, "x-access-token")), "<redacted:32>") &&
              !strcmp(json_string_value(json_object_get(h, "authorization")), "Basic dXNlcjo="),
          "Start headers: connect+json, protocol 1, sandbox id/port, token, Basic user");
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(sbody, "process"), "cmd")), "/bin/bash") &&
              json_array_size(args) == 3 && !strcmp(json_string_value(json_array_get(args, 0)), "-l") &&
              !strcmp(json_string_value(json_array_get(args, 1)), "-c") &&
              strstr(json_string_value(json_array_get(args, 2)), "'echo' 'hello world'") &&
              strstr(json_string_value(json_array_get(args, 2)), "ulimit -t 600") &&
              json_is_false(json_object_get(sbody, "stdin")) &&
              !strcmp(json_string_value(json_object_get(json_object_get(sbody, "process"), "cwd")), "/home/user"),
          "Start body: /bin/bash -l -c with quoted argv and ulimits, cwd, stdin false");
    json_decref(log);

    const char *fail[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    rc = run(sb, fail, &r);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.code == 3 && !strcmp(r.out.data, "out\n") &&
              !strcmp(r.err.data, "err\n"),
          "exit 3 with stdout '%s' and stderr '%s'", esc(r.out.data), esc(r.err.data));
    sl_sandbox_result_release(&r);

    const char *quote[] = {"printf", "%s|", "it's", "a b", "$HOME", "", NULL};
    rc = run(sb, quote, &r);
    CHECK(rc == 0 && r.out.data && !strcmp(r.out.data, "it's|a b|$HOME||"), "argv quoting: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);

    const char *selfkill[] = {"sh", "-c", "kill -TERM $$", NULL};
    rc = run(sb, selfkill, &r);
    CHECK(rc == 0 && r.kind == SL_EXIT_SIGNALED && r.sig == SIGTERM &&
              sl_sandbox_result_code(&r) == 143,
          "killed by SIGTERM: kind %d sig %d", r.kind, r.sig);
    sl_sandbox_result_release(&r);

    const char *missing[] = {"no-such-command-xyz", NULL};
    rc = run(sb, missing, &r);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.code == 127, "a missing command exits 127 (%d)",
          r.code);
    sl_sandbox_result_release(&r);

    /* env and cwd */
    const char *envv[] = {"FOO=bar baz", "EMPTY=", NULL};
    const char *showenv[] = {"sh", "-c", "echo \"$FOO|$EMPTY|${EMPTY+set}\"", NULL};
    sl_sandbox_cmd cmd = {.argv = showenv, .env = envv, .timeout_s = 20};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &cmd, &r, &err);
    CHECK(rc == 0 && r.out.data && !strcmp(r.out.data, "bar baz||set\n"), "env: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);

    const char *mk[] = {"mkdir", "-p", "sub/deeper", NULL};
    run(sb, mk, &r);
    sl_sandbox_result_release(&r);
    const char *pwd[] = {"pwd", NULL};
    sl_sandbox_cmd c2 = {.argv = pwd, .cwd = "sub/deeper", .timeout_s = 20};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c2, &r, &err);
    CHECK(rc == 0 && ends_with(&r.out, "/home/user/sub/deeper\n"),
          "relative cwd: '%s'", esc(r.out.data));
    sl_sandbox_result_release(&r);
    c2.cwd = "/home/user/sub";
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c2, &r, &err);
    CHECK(rc == 0 && ends_with(&r.out, "/home/user/sub\n"), "absolute cwd: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);
    c2.cwd = "nope";
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c2, &r, &err);
    CHECK(rc == -1 && err.msg && strstr(err.msg, "does not exist") && strstr(err.msg, "invalid_argument"),
          "missing cwd: %s", err.msg ? err.msg : "no error");
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);

    /* stdin */
    const char *cat[] = {"cat", NULL};
    sl_sandbox_cmd c3 = {.argv = cat, .stdin_data = "line1\nline2\n", .stdin_len = 12, .timeout_s = 20};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c3, &r, &err);
    CHECK(rc == 0 && r.code == 0 && r.out.data && !strcmp(r.out.data, "line1\nline2\n"), "stdin: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);
    size_t big = 700000;
    char *data = sl_xmalloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    const char *sum[] = {"sh", "-c", "wc -c; ", NULL};
    sl_sandbox_cmd c4 = {.argv = sum, .stdin_data = data, .stdin_len = big, .timeout_s = 30};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c4, &r, &err);
    CHECK(rc == 0 && r.out.data && atol(r.out.data) == (long)big, "700 kB on stdin in pieces: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);
    free(data);
    const char *readin[] = {"sh", "-c", "cat; echo done", NULL};
    sl_sandbox_cmd c5 = {.argv = readin, .timeout_s = 5};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c5, &r, &err);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.out.data && !strcmp(r.out.data, "done\n"),
          "no stdin reads as empty: '%s'", esc(r.out.data));
    sl_sandbox_result_release(&r);

    /* the caller's own stdin */
    int pfd[2], saved = dup(0);
    if (!pipe(pfd)) {
        dup2(pfd[0], 0);
        close(pfd[0]);
        if (write(pfd[1], "from fd 0\n", 10) != 10)
            printf("# short write\n");
        close(pfd[1]);
        sl_sandbox_cmd ci = {.argv = cat, .inherit_stdin = true, .timeout_s = 10};
        sl_sandbox_result_init(&r);
        rc = sl_sandbox_exec(sb, &ci, &r, &err);
        dup2(saved, 0);
        CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.out.data && !strcmp(r.out.data, "from fd 0\n"),
              "inherit_stdin: '%s'", esc(r.out.data));
        sl_sandbox_result_release(&r);
    }
    close(saved);

    /* streaming to callbacks, as the output arrives */
    stream_rec rec = {.t0 = sl_clock_s()};
    sl_buf_init(&rec.out, 0);
    const char *slow[] = {"sh", "-c", "echo a; sleep 0.6; echo b", NULL};
    sl_sandbox_cmd c6 = {.argv = slow, .timeout_s = 20, .on_stdout = on_out, .ud = &rec};
    sl_sandbox_result_init(&r);
    rc = sl_sandbox_exec(sb, &c6, &r, &err);
    CHECK(rc == 0 && rec.out.data && !strcmp(rec.out.data, "a\nb\n") && r.out.len == 0 &&
              rec.chunks == 2 && rec.first_at < 0.5 && r.seconds >= 0.6,
          "streamed in %d pieces, the first after %.2f s, all after %.2f s", rec.chunks,
          rec.first_at, r.seconds);
    sl_buf_release(&rec.out);
    sl_sandbox_result_release(&r);

    /* timeout: the command and its background child are gone */
    const char *hang[] = {"sh", "-c", "sleep 30 & echo $$ $!; wait", NULL};
    sl_sandbox_cmd c7 = {.argv = hang, .timeout_s = 0.6};
    sl_sandbox_result_init(&r);
    double t0 = sl_clock_s();
    rc = sl_sandbox_exec(sb, &c7, &r, &err);
    double took = sl_clock_s() - t0;
    int p1 = 0, p2 = 0;
    if (r.out.data)
        sscanf(r.out.data, "%d %d", &p1, &p2);
    CHECK(rc == 0 && r.kind == SL_EXIT_TIMEOUT && sl_sandbox_result_code(&r) == 124 && took < 3,
          "timeout after %.2f s (kind %d)", took, r.kind);
    CHECK(p1 > 0 && p2 > 0 && pid_gone(p1) && pid_gone(p2), "timeout killed pids %d and %d", p1, p2);
    sl_sandbox_result_release(&r);

    /* cancel */
    const char *hang2[] = {"sh", "-c", "echo $$; sleep 30", NULL};
    cancel_at = sl_clock_s() + 0.4;
    sl_sandbox_cmd c8 = {.argv = hang2, .timeout_s = 20, .cancelled = cancel_after};
    sl_sandbox_result_init(&r);
    t0 = sl_clock_s();
    rc = sl_sandbox_exec(sb, &c8, &r, &err);
    took = sl_clock_s() - t0;
    p1 = r.out.data ? atoi(r.out.data) : 0;
    CHECK(rc == 0 && r.kind == SL_EXIT_CANCELED && took < 2.5 && p1 > 0 && pid_gone(p1),
          "cancelled after %.2f s, pid %d gone", took, p1);
    sl_sandbox_result_release(&r);

    /* output cap */
    const char *flood[] = {"sh", "-c", "echo $$; head -c 100000 /dev/zero | tr '\\0' x; sleep 30", NULL};
    sl_sandbox_cmd c9 = {.argv = flood, .timeout_s = 20, .max_output_bytes = 1000};
    sl_sandbox_result_init(&r);
    t0 = sl_clock_s();
    rc = sl_sandbox_exec(sb, &c9, &r, &err);
    took = sl_clock_s() - t0;
    p1 = r.out.data ? atoi(r.out.data) : 0;
    CHECK(rc == 0 && r.kind == SL_EXIT_LIMIT && r.out.len == 1000 && r.out_truncated &&
              !r.err_truncated && strstr(r.limit, "stdout output (1000 bytes)") && took < 3 &&
              r.hit == SL_SBLIMIT_OUTPUT &&
              p1 > 0 && pid_gone(p1),
          "output cap: %zu bytes kept, limit '%s', %.2f s", r.out.len, r.limit, took);
    sl_sandbox_result_release(&r);

    /* concurrent exec from 4 threads */
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){sb, i, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    CHECK(ok == 20, "4 threads x 5 execs: %d right", ok);

    /* sl_sandbox_kill stops what runs and the sandbox stays usable */
    bg_exec b = {.sb = sb};
    pthread_t bt;
    pthread_create(&bt, NULL, bg_run, &b);
    usleep(400000);
    t0 = sl_clock_s();
    sl_sandbox_kill(sb);
    pthread_join(bt, NULL);
    took = sl_clock_s() - t0;
    CHECK(b.rc == 0 && b.r.kind == SL_EXIT_SIGNALED && b.r.sig == SIGKILL && took < 2,
          "kill(): the running command was killed (kind %d sig %d) in %.2f s", b.r.kind, b.r.sig,
          took);
    sl_sandbox_result_release(&b.r);
    rc = run(sb, echo, &r);
    CHECK(rc == 0 && r.code == 0, "usable after kill()");
    sl_sandbox_result_release(&r);

    /* round trip */
    const char *tru[] = {"true", NULL};
    t0 = sl_clock_s();
    int n_ok = 0;
    for (int i = 0; i < 20; i++) {
        if (!run(sb, tru, &r) && r.code == 0)
            n_ok++;
        sl_sandbox_result_release(&r);
    }
    double per = (sl_clock_s() - t0) / 20 * 1000;
    CHECK(n_ok == 20, "20 x true");
    printf("# exec round trip against the stand-in: %.1f ms\n", per);

    /* files */
    rc = sl_sandbox_upload(sb, "dir/a.txt", "hello", 5, &err);
    CHECK(rc == 0, "upload relative: %s", err.msg ? err.msg : "ok");
    rc = sl_sandbox_upload(sb, "/home/user/dir/b.bin", "\0\1\2\377", 4, &err);
    CHECK(rc == 0, "upload absolute binary: %s", err.msg ? err.msg : "ok");
    sl_buf got;
    sl_buf_init(&got, 0);
    sl_buf_adds(&got, ">");
    rc = sl_sandbox_download(sb, "dir/a.txt", 100, &got, &err);
    CHECK(rc == 0 && !strcmp(got.data, ">hello"), "download appends: '%s'", esc(got.data));
    sl_buf_reset(&got);
    rc = sl_sandbox_download(sb, "/home/user/dir/b.bin", 4, &got, &err);
    CHECK(rc == 0 && got.len == 4 && !memcmp(got.data, "\0\1\2\377", 4), "binary round trip");
    sl_buf_reset(&got);
    rc = sl_sandbox_download(sb, "dir/a.txt", 3, &got, &err);
    CHECK(rc == -1 && err.code == SL_ELIMIT && strstr(err.msg, "over the limit of 3"),
          "download cap: %s", err.msg ? err.msg : "no error");
    sl_err_clear(&err);
    rc = sl_sandbox_download(sb, "dir/missing", 100, &got, &err);
    CHECK(rc == -1 && strstr(err.msg, "404") && strstr(err.msg, "/home/user/dir/missing"),
          "download missing: %s", err.msg ? err.msg : "no error");
    sl_err_clear(&err);
    sl_buf_release(&got);
    const char *catf[] = {"cat", "dir/a.txt", NULL};
    rc = run(sb, catf, &r);
    CHECK(rc == 0 && r.out.data && !strcmp(r.out.data, "hello"), "commands see uploads");
    sl_sandbox_result_release(&r);
    const char *mkl[] = {"sh", "-c", "mkdir dir/zdir && ln -s a.txt dir/link", NULL};
    run(sb, mkl, &r);
    sl_sandbox_result_release(&r);
    sl_value *ls = NULL;
    rc = sl_sandbox_list(sb, "dir", 0, &ls, &err);
    char *lss = show(ls);
    CHECK(rc == 0 &&
              !strcmp(lss, "[{\"name\":\"a.txt\",\"type\":\"file\",\"size\":5},"
                           "{\"name\":\"b.bin\",\"type\":\"file\",\"size\":4},"
                           "{\"name\":\"link\",\"type\":\"link\",\"size\":5},"
                           "{\"name\":\"zdir\",\"type\":\"dir\",\"size\":4096}]") ,
          "list: %s", lss);
    free(lss);
    json_decref(ls);
    rc = sl_sandbox_list(sb, "dir", 2, &ls, &err);
    CHECK(rc == 0 && json_array_size(ls) == 2, "list limit 2: %zu", json_array_size(ls));
    json_decref(ls);
    rc = sl_sandbox_list(sb, "nodir", 0, &ls, &err);
    CHECK(rc == -1 && strstr(err.msg, "404") && strstr(err.msg, "ListDir"), "list missing: %s",
          err.msg ? err.msg : "no error");
    sl_err_clear(&err);

    /* destroy: the VM goes, and with it every process, also a daemon */
    const char *daemon[] = {"sh", "-c", "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!", NULL};
    rc = run(sb, daemon, &r);
    p1 = r.out.data ? atoi(r.out.data) : 0;
    sl_sandbox_result_release(&r);
    char id[128];
    snprintf(id, sizeof id, "%s", last_sandbox_id());
    char root[512];
    snprintf(root, sizeof root, "%s", sb_root(id));
    struct stat st;
    CHECK(root[0] && !stat(root, &st) && p1 > 0 && !kill(p1, 0), "sandbox folder %s and daemon %d",
          root, p1);
    reset_log();
    sl_sandbox_destroy(sb);
    log = helper("GET", "/__log");
    char del[200];
    snprintf(del, sizeof del, "/sandboxes/%s", id);
    CHECK(find_req(log, "DELETE", del) != NULL, "destroy sent DELETE %s", del);
    json_decref(log);
    CHECK(stat(root, &st) && !sb_root(id)[0] && pid_gone(p1), "sandbox, folder and daemon gone");
}

static void test_files_and_limits(void)
{
    /* a custom workdir, binds, and the per-process limits */
    char host[] = "/tmp/sluice-e2b-bind-XXXXXX";
    if (!mkdtemp(host))
        return;
    char path[600];
    snprintf(path, sizeof path, "%s/a", host);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/a/x.txt", host);
    FILE *f = fopen(path, "w");
    fputs("bound", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/empty", host);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/top.txt", host);
    f = fopen(path, "w");
    fputs("top", f);
    fclose(f);

    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "e2b";
    o.max_file_bytes = 4096;
    sl_sandbox_bind binds[] = {{host, "ro"}, {path, "/home/user/proj/single.txt"}};
    o.binds = binds;
    o.n_binds = 2;
    sl_value *set = settings("\"workdir\": \"/home/user/proj\", \"template\": \"tmpl-x\", \"timeout_s\": 60");
    o.settings = set;
    sl_sandbox *sb = NULL;
    sl_err err = {0};
    int rc = sl_e2b_create(&o, &sb, &err);
    json_decref(set);
    CHECK(rc == 0 && sb, "create with workdir and binds: %s", err.msg ? err.msg : "ok");
    if (!sb)
        goto out;
    CHECK(!strcmp(sl_sandbox_workspace(sb), "/home/user/proj"), "workspace %s",
          sl_sandbox_workspace(sb));
    sl_sandbox_result r;
    const char *pwd[] = {"pwd", NULL};
    rc = run(sb, pwd, &r);
    CHECK(rc == 0 && ends_with(&r.out, "/home/user/proj\n"), "starts in the workdir: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);
    sl_buf got;
    sl_buf_init(&got, 0);
    rc = sl_sandbox_download(sb, "ro/a/x.txt", 100, &got, &err);
    CHECK(rc == 0 && !strcmp(got.data, "bound"), "bound file copied: '%s'", esc(got.data));
    sl_buf_reset(&got);
    rc = sl_sandbox_download(sb, "single.txt", 100, &got, &err);
    CHECK(rc == 0 && !strcmp(got.data, "top"), "bound single file copied: '%s'", esc(got.data));
    sl_buf_release(&got);
    const char *modes[] = {"sh", "-c", "stat -c '%a %n' ro/a/x.txt ro/empty single.txt", NULL};
    rc = run(sb, modes, &r);
    CHECK(rc == 0 && r.out.data &&
              !strcmp(r.out.data, "444 ro/a/x.txt\n555 ro/empty\n444 single.txt\n"),
          "bound trees read-only, empty dir made: '%s'", esc(r.out.data));
    sl_sandbox_result_release(&r);
    const char *fsz[] = {"sh", "-c", "exec head -c 10000 /dev/zero > big", NULL};
    rc = run(sb, fsz, &r);
    CHECK(rc == 0 && r.kind == SL_EXIT_LIMIT && r.sig == SIGXFSZ && strstr(r.limit, "file size (4 KiB)") &&
              r.hit == SL_SBLIMIT_FILE_SIZE,
          "file size limit via ulimit: kind %d sig %d '%s'", r.kind, r.sig, r.limit);
    sl_sandbox_result_release(&r);
    const char *lim[] = {"sh", "-c", "ulimit -n; ulimit -t", NULL};
    rc = run(sb, lim, &r);
    CHECK(rc == 0 && r.out.data && !strcmp(r.out.data, "1024\n600\n"), "open files and CPU limits: '%s'",
          esc(r.out.data));
    sl_sandbox_result_release(&r);
    sl_value *log = helper("GET", "/__log");
    sl_value *cr = find_req(log, "POST", "/sandboxes");
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(cr, "body"), "templateID")), "tmpl-x") &&
              json_integer_value(json_object_get(json_object_get(cr, "body"), "timeout")) == 60,
          "template and timeout_s reach the API");
    json_decref(log);
    sl_sandbox_destroy(sb);
out:
    snprintf(path, sizeof path, "rm -rf '%s'", host);
    if (system(path))
        printf("# could not remove %s\n", host);
}

static void test_network_and_errors(void)
{
    sl_sandbox *sb = NULL;
    sl_err err = {0};

    reset_log();
    int rc = make(NULL, SL_NET_OPEN, NULL, &sb, &err);
    sl_value *log = helper("GET", "/__log");
    sl_value *body = json_object_get(find_req(log, "POST", "/sandboxes"), "body");
    CHECK(rc == 0 && json_is_true(json_object_get(body, "allow_internet_access")) &&
              !json_object_get(body, "network"),
          "net open: allow_internet_access true");
    json_decref(log);
    sl_sandbox_destroy(sb);
    sb = NULL;

    reset_log();
    rc = make(NULL, SL_NET_ALLOW, "pypi.org, *.pythonhosted.org,10.0.0.5", &sb, &err);
    log = helper("GET", "/__log");
    body = json_object_get(find_req(log, "POST", "/sandboxes"), "body");
    char *net = show(json_object_get(body, "network"));
    CHECK(rc == 0 && !strcmp(net, "{\"allowOut\":[\"pypi.org\",\"*.pythonhosted.org\",\"10.0.0.5\"],"
                                  "\"denyOut\":[\"0.0.0.0/0\"]}"),
          "net allow: network %s", net);
    free(net);
    json_decref(log);
    sl_sandbox_destroy(sb);
    sb = NULL;

    reset_log();
    rc = make(NULL, SL_NET_ALLOW, "pypi.org:8443", &sb, &err);
    log = helper("GET", "/__log");
    CHECK(rc == -1 && err.code == SL_EUNSUPPORTED && strstr(err.msg, "pypi.org:8443") &&
              json_array_size(log) == 0,
          "net allow with a port is refused before any request: %s", err.msg ? err.msg : "no error");
    json_decref(log);
    sl_err_clear(&err);

    /* API errors */
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    char text[512];
    snprintf(text, sizeof text, "{\"api_key\": \"bad-key\", \"api_url\": \"%s/\"}", api);
    sl_value *set = J(text);
    o.settings = set;
    rc = sl_e2b_create(&o, &sb, &err);
    CHECK(rc == -1 && strstr(err.msg, "HTTP 401") && strstr(err.msg, "API key") &&
              strstr(err.msg, "/sandboxes") && !strstr(err.msg, "bad-key"),
          "bad key: %s", err.msg ? err.msg : "no error");
    sl_err_clear(&err);
    json_decref(set);

    struct { const char *tmpl, *want; sl_errcode code; } bad[] = {
        {"error500", "HTTP 500", SL_EIO},
        {"ratelimit", "HTTP 429 rate limited", SL_ELIMIT},
        {"notfound", "HTTP 404 not found: template 'notfound' not found", SL_EIO},
        {"badjson", "not JSON", SL_EIO},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, "\"template\": \"%s\"", bad[i].tmpl);
        rc = make(text, SL_NET_NONE, NULL, &sb, &err);
        CHECK(rc == -1 && err.code == bad[i].code && strstr(err.msg, bad[i].want) &&
                  !strstr(err.msg, "e2b_test"),
              "template %s: %s", bad[i].tmpl, err.msg ? err.msg : "no error");
        sl_err_clear(&err);
    }

    /* nothing listening */
    snprintf(text, sizeof text, "{\"api_key\": \"e2b_test\", \"api_url\": \"http://127.0.0.1:1\", \"request_timeout_s\": 5}");
    set = J(text);
    o.settings = set;
    rc = sl_e2b_create(&o, &sb, &err);
    CHECK(rc == -1 && strstr(err.msg, "POST http://127.0.0.1:1/sandboxes") &&
              strstr(err.msg, "connect") && strstr(err.msg, "api_url"),
          "API down: %s", err.msg ? err.msg : "no error");
    sl_err_clear(&err);
    json_decref(set);

    /* envd unreachable */
    snprintf(text, sizeof text, "{\"api_key\": \"e2b_test\", \"api_url\": \"%s\", \"envd_url\": \"http://127.0.0.1:1\"}", api);
    set = J(text);
    o.settings = set;
    rc = sl_e2b_create(&o, &sb, &err);
    json_decref(set);
    CHECK(rc == 0, "create with a dead envd_url");
    if (!rc) {
        const char *echo[] = {"echo", NULL};
        sl_sandbox_cmd cmd = {.argv = echo};
        sl_sandbox_result r;
        sl_sandbox_result_init(&r);
        rc = sl_sandbox_exec(sb, &cmd, &r, &err);
        CHECK(rc == -1 && strstr(err.msg, "127.0.0.1:1/process.Process/Start") &&
                  strstr(err.msg, "envd_url"),
              "envd down: %s", err.msg ? err.msg : "no error");
        sl_err_clear(&err);
        sl_sandbox_result_release(&r);
        sl_sandbox_destroy(sb);
        sb = NULL;
    }

    /* a sandbox the API no longer knows (its token no longer works either) */
    rc = make(NULL, SL_NET_NONE, NULL, &sb, &err);
    if (!rc) {
        char del[256];
        snprintf(del, sizeof del, "/sandboxes/%s", last_sandbox_id());
        char url[400];
        snprintf(url, sizeof url, "%s%s", api, del);
        request("DELETE", url, "X-API-Key: e2b_test", NULL);
        const char *echo[] = {"echo", NULL};
        sl_sandbox_cmd cmd = {.argv = echo};
        sl_sandbox_result r;
        sl_sandbox_result_init(&r);
        rc = sl_sandbox_exec(sb, &cmd, &r, &err);
        CHECK(rc == -1 && strstr(err.msg, "HTTP 502") && strstr(err.msg, "sandbox is gone"),
              "killed sandbox: %s", err.msg ? err.msg : "no error");
        sl_err_clear(&err);
        sl_sandbox_result_release(&r);
        rc = sl_sandbox_upload(sb, "x", "y", 1, &err);
        CHECK(rc == -1 && strstr(err.msg, "uploading /home/user/x") && strstr(err.msg, "502"),
              "upload to a killed sandbox: %s", err.msg ? err.msg : "no error");
        sl_err_clear(&err);
        sl_sandbox_destroy(sb);
        sb = NULL;
    }

    /* settings */
    struct { const char *json, *want; } bads[] = {
        {"{\"api_key\": \"k\", \"colour\": 1}", "unknown setting 'colour'"},
        {"{\"api_key\": 5}", "sandbox.e2b.api_key must be a non-empty string"},
        {"{\"api_key\": \"k\", \"timeout_s\": \"long\"}", "sandbox.e2b.timeout_s must be a positive number"},
        {"{\"api_key\": \"k\", \"workdir\": \"rel\"}", "workdir must be an absolute path"},
        {"{\"api_key\": \"k\", \"api_url\": \"ftp://x\"}", "api_url must be an http:// or https:// URL"},
        {"{\"api_key\": \"k y\"}", "space or control character"},
        {"{}", "E2B_API_KEY"},
        {"[1]", "must be a mapping"},
    };
    unsetenv("E2B_API_KEY");
    for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
        set = J(bads[i].json);
        o.settings = set;
        rc = sl_e2b_create(&o, &sb, &err);
        CHECK(rc == -1 && err.code == SL_EINVAL && strstr(err.msg, bads[i].want), "settings %s: %s",
              bads[i].json, err.msg ? err.msg : "no error");
        sl_err_clear(&err);
        json_decref(set);
    }
    /* the key from the environment */
    setenv("E2B_API_KEY", "e2b_fromenv", 1);
    snprintf(text, sizeof text, "{\"api_url\": \"%s\", \"envd_url\": \"%s\"}", api, api);
    set = J(text);
    o.settings = set;
    reset_log();
    rc = sl_e2b_create(&o, &sb, &err);
    log = helper("GET", "/__log");
    const char *kh = json_string_value(json_object_get(
        json_object_get(find_req(log, "POST", "/sandboxes"), "headers"), "x-api-key"));
    CHECK(rc == 0 && kh && !strcmp(kh, "<redacted:11>"), "E2B_API_KEY used (%s)", kh ? kh : "none");
    json_decref(log);
    json_decref(set);
    sl_sandbox_destroy(sb);
    unsetenv("E2B_API_KEY");
}

int main(void)
{
    pid_t d = start_e2bd(&port);
    CHECK(d > 0, "e2bd started on port %d", port);
    if (d <= 0)
        return tap_done();
    snprintf(api, sizeof api, "http://127.0.0.1:%d", port);

    test_create_and_exec();
    test_files_and_limits();
    test_network_and_errors();

    sl_value *left = helper("GET", "/__sandboxes");
    CHECK(json_array_size(left) == 0, "no sandbox left behind (%zu)", json_array_size(left));
    json_decref(left);
    kill(d, SIGTERM);
    int st = 0;
    waitpid(d, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "e2bd stopped cleanly");
    return tap_done();
}
