/*
 * The sandbox provider interface on the local provider: files in and out,
 * listing, streaming, stdin, concurrent commands, kill, limits reported,
 * persistence between commands, the parsers for --net and sizes.
 * (tests/cli/sandbox_escape.sh attacks it; this checks that it works.)
 */
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"
#include "tap.h"

/* The sandboxes' memory limit: 0 where none can be held (sandbox_mem.sh
 * tests that refusal). */
static uint64_t sb_memory = (uint64_t)1 << 30;

static sl_sandbox *sb;

static int run(const char *const *argv, sl_sandbox_result *r, const sl_sandbox_cmd *extra)
{
    sl_sandbox_cmd c = {0};
    if (extra)
        c = *extra;
    c.argv = argv;
    sl_err err = {0};
    sl_sandbox_result_init(r);
    int rc = sl_sandbox_exec(sb, &c, r, &err);
    if (rc)
        printf("# exec: %s\n", err.msg);
    sl_err_clear(&err);
    return rc;
}

static bool out_is(const sl_sandbox_result *r, const char *want)
{
    return r->out.len == strlen(want) && !memcmp(r->out.data, want, r->out.len);
}

static void test_files(void)
{
    sl_err err = {0};
    CHECK(sl_sandbox_upload(sb, "in/data.txt", "hello\n", 6, &err) == 0, "upload into a new folder");
    sl_sandbox_result r;
    const char *cat[] = {"cat", "/workspace/in/data.txt", NULL};
    CHECK(run(cat, &r, NULL) == 0 && r.kind == SL_EXIT_EXITED && r.code == 0 && out_is(&r, "hello\n"),
          "a command reads the uploaded file");
    sl_sandbox_result_release(&r);

    const char *mk[] = {"sh", "-c",
                        "printf abc > out.bin; ln -s /etc/passwd link; mkdir d; "
                        "head -c 5000 /dev/zero > big",
                        NULL};
    CHECK(run(mk, &r, NULL) == 0 && r.code == 0, "a command writes files");
    sl_sandbox_result_release(&r);
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_sandbox_download(sb, "out.bin", 100, &b, &err) == 0 && b.len == 3 &&
              !memcmp(b.data, "abc", 3),
          "download what a command wrote (files persist between commands)");
    sl_buf_reset(&b);
    CHECK(sl_sandbox_download(sb, "big", 1000, &b, &err) < 0 && err.code == SL_ELIMIT,
          "download refuses a file over its size cap: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    CHECK(sl_sandbox_download(sb, "d", 1000, &b, &err) < 0 && err.msg && strstr(err.msg, "directory"),
          "download of a folder is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    CHECK(sl_sandbox_download(sb, "missing", 1000, &b, &err) < 0 && err.msg &&
              strstr(err.msg, "No such file"),
          "download of a missing file says so: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    /* the link points at the sandbox's own /etc/passwd, never the host's */
    sl_buf_reset(&b);
    CHECK(sl_sandbox_download(sb, "link", 100000, &b, &err) == 0 && b.data &&
              strstr(b.data, "sandbox:x:1000") && !strstr(b.data, "root:x:0:0:root:/root:/bin/bash"),
          "a link is read inside the sandbox's view, not the host's");
    sl_err_clear(&err);
    sl_buf_release(&b);

    sl_value *list = NULL;
    CHECK(sl_sandbox_list(sb, ".", 0, &list, &err) == 0 && json_is_array(list), "list the workspace");
    char *text = json_dumps(list, JSON_COMPACT);
    CHECK(text && strstr(text, "{\"name\":\"big\",\"type\":\"file\",\"size\":5000}") &&
              strstr(text, "{\"name\":\"d\",\"type\":\"dir\"") &&
              strstr(text, "{\"name\":\"link\",\"type\":\"link\"") &&
              strstr(text, "{\"name\":\"in\",\"type\":\"dir\""),
          "entries have names, types (links not followed) and sizes: %s", text ? text : "");
    free(text);
    json_decref(list);
    CHECK(sl_sandbox_list(sb, ".", 2, &list, &err) == 0 && json_array_size(list) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(list, 0), "name")), "big"),
          "list honours its limit and sorts by name");
    json_decref(list);
    CHECK(sl_sandbox_upload(sb, "/usr/x", "x", 1, &err) < 0 && err.msg &&
              strstr(err.msg, "Read-only"),
          "upload into a read-only folder fails: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
}

static void on_out(const char *d, size_t n, void *ud)
{
    sl_buf_add(ud, d, n);
}

static void test_streams(void)
{
    sl_sandbox_result r;
    sl_buf got;
    sl_buf_init(&got, 0);
    const char *sh[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    sl_sandbox_cmd c = {.on_stdout = on_out, .ud = &got};
    CHECK(run(sh, &r, &c) == 0 && r.code == 3 && got.len == 4 && !memcmp(got.data, "out\n", 4) &&
              r.err.len == 4 && r.out.len == 0,
          "stdout streams to its callback, stderr is collected, the exit code is kept");
    CHECK(sl_sandbox_result_code(&r) == 3, "result code is the command's own");
    sl_sandbox_result_release(&r);
    sl_buf_release(&got);

    const char *cat[] = {"cat", NULL};
    sl_buf big;
    sl_buf_init(&big, 0);
    for (int i = 0; i < 20000; i++)
        sl_buf_adds(&big, "0123456789abcdef");
    sl_sandbox_cmd in = {.stdin_data = big.data, .stdin_len = big.len};
    CHECK(run(cat, &r, &in) == 0 && r.code == 0 && r.out.len == big.len &&
              !memcmp(r.out.data, big.data, big.len),
          "320 KB through stdin and back");
    sl_sandbox_result_release(&r);
    sl_buf_release(&big);

    const char *yes[] = {"yes", NULL};
    sl_sandbox_cmd cap = {.max_output_bytes = 10000};
    CHECK(run(yes, &r, &cap) == 0 && r.kind == SL_EXIT_LIMIT && r.out.len == 10000 &&
              r.out_truncated && strstr(r.limit, "stdout") && sl_sandbox_result_code(&r) == 137 &&
              r.hit == SL_SBLIMIT_OUTPUT,
          "output past its cap: killed, kept up to the cap, limit named (%s)", r.limit);
    sl_sandbox_result_release(&r);

    const char *sleep5[] = {"sleep", "5", NULL};
    sl_sandbox_cmd to = {.timeout_s = 0.3};
    CHECK(run(sleep5, &r, &to) == 0 && r.kind == SL_EXIT_TIMEOUT && r.seconds < 2 &&
              sl_sandbox_result_code(&r) == 124,
          "timeout kills within the deadline (%.2f s)", r.seconds);
    char what[200];
    sl_sandbox_result_describe(&r, what, sizeof what);
    CHECK(strstr(what, "timed out") != NULL, "describe says it timed out: %s", what);
    sl_sandbox_result_release(&r);

    const char *none[] = {"no-such-program-xyz", NULL};
    CHECK(run(none, &r, NULL) == 0 && r.code == 127 && strstr(r.err.data, "no-such-program-xyz"),
          "a missing program exits 127 and names itself");
    sl_sandbox_result_release(&r);

    const char *env[] = {"sh", "-c", "echo $FOO:$HOME:$(pwd)", NULL};
    const char *vars[] = {"FOO=bar", NULL};
    sl_sandbox_cmd e = {.env = vars, .cwd = "/tmp"};
    CHECK(run(env, &r, &e) == 0 && out_is(&r, "bar:/home/sandbox:/tmp\n"),
          "environment and working directory are passed");
    sl_sandbox_result_release(&r);
}

/* One-shot sandboxes: sl_sandbox_run (the command sent with the set-up)
 * and a command marked last, after which the sandbox is gone. */
static void test_one_shot(const sl_sandbox_opts *o)
{
    sl_sandbox_result r;
    sl_err err = {0};
    const char *sh[] = {"sh", "-c", "echo \"$1\"; cat; echo err >&2; sleep 30 & exit 5", "sh",
                        "one shot", NULL};
    sl_sandbox_cmd c = {.argv = sh, .stdin_data = "in\n", .stdin_len = 3, .timeout_s = 20};
    sl_sandbox_result_init(&r);
    double t0 = sl_clock_s();
    int rc = sl_sandbox_run(o, &c, &r, &err);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.code == 5 && out_is(&r, "one shot\nin\n") &&
              r.err.len == 4 && sl_clock_s() - t0 < 10,
          "sl_sandbox_run: argv, stdin, both streams and the exit code; what it left in the "
          "background does not hold it (rc %d, code %d, %.1f s%s%s)",
          rc, r.code, sl_clock_s() - t0, rc ? ": " : "", rc ? err.msg : "");
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);

    const char *none[] = {"no-such-program-xyz", NULL};
    sl_sandbox_cmd n = {.argv = none};
    sl_sandbox_result_init(&r);
    CHECK(sl_sandbox_run(o, &n, &r, &err) == 0 && r.code == 127,
          "sl_sandbox_run: a missing program exits 127");
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);

    sl_sandbox_cmd bad = {.argv = NULL};
    sl_sandbox_result_init(&r);
    CHECK(sl_sandbox_run(o, &bad, &r, &err) < 0 && strstr(err.msg, "no command"),
          "sl_sandbox_run without a command fails and says so: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);

    /* last: init ends with the command; the sandbox can run nothing more */
    sl_sandbox *one;
    if (sl_sandbox_create(o, &one, &err)) {
        CHECK(0, "create: %s", err.msg);
        sl_err_clear(&err);
        return;
    }
    const char *echo[] = {"echo", "first", NULL};
    sl_sandbox_cmd l = {.argv = echo, .last = true};
    sl_sandbox_result_init(&r);
    CHECK(sl_sandbox_exec(one, &l, &r, &err) == 0 && out_is(&r, "first\n") && r.code == 0,
          "a command marked last runs as any other");
    sl_sandbox_result_release(&r);
    sl_err_clear(&err);
    sl_sandbox_cmd again = {.argv = echo, .timeout_s = 5};
    sl_sandbox_result_init(&r);
    t0 = sl_clock_s();
    rc = sl_sandbox_exec(one, &again, &r, &err);
    CHECK(rc < 0 && err.code == SL_EIO && sl_clock_s() - t0 < 3,
          "after the last command the sandbox is gone: %s", err.msg ? err.msg : "(it ran)");
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);
    sl_sandbox_destroy(one);
}

typedef struct {
    int i;
    bool ok;
} job;

static void *parallel(void *arg)
{
    job *j = arg;
    char script[64];
    snprintf(script, sizeof script, "sleep 0.3; echo %d", j->i);
    const char *argv[] = {"sh", "-c", script, NULL};
    sl_sandbox_result r;
    char want[16];
    snprintf(want, sizeof want, "%d\n", j->i);
    j->ok = run(argv, &r, NULL) == 0 && out_is(&r, want);
    sl_sandbox_result_release(&r);
    return NULL;
}

static void *killer(void *arg)
{
    (void)arg;
    usleep(200000);
    sl_sandbox_kill(sb);
    return NULL;
}

static void test_concurrency(void)
{
    pthread_t t[4];
    job j[4];
    double t0 = sl_clock_s();
    for (int i = 0; i < 4; i++) {
        j[i] = (job){i, false};
        pthread_create(&t[i], NULL, parallel, &j[i]);
    }
    bool all = true;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        all &= j[i].ok;
    }
    double took = sl_clock_s() - t0;
    CHECK(all && took < 1.1, "four commands run at once in one sandbox (%.2f s)", took);

    pthread_t k;
    pthread_create(&k, NULL, killer, NULL);
    const char *sleep5[] = {"sleep", "5", NULL};
    sl_sandbox_result r;
    t0 = sl_clock_s();
    CHECK(run(sleep5, &r, NULL) == 0 && r.kind == SL_EXIT_SIGNALED && r.sig == SIGKILL &&
              sl_clock_s() - t0 < 2,
          "sl_sandbox_kill stops a running command");
    sl_sandbox_result_release(&r);
    pthread_join(k, NULL);
    const char *tr[] = {"true", NULL};
    CHECK(run(tr, &r, NULL) == 0 && r.code == 0, "the sandbox works after a kill");
    sl_sandbox_result_release(&r);
}

static void test_parsers(void)
{
    sl_net_mode m;
    const char *allow;
    sl_err err = {0};
    CHECK(sl_net_parse("none", &m, &allow, &err) == 0 && m == SL_NET_NONE, "--net none");
    CHECK(sl_net_parse("open", &m, &allow, &err) == 0 && m == SL_NET_OPEN, "--net open");
    CHECK(sl_net_parse("allow=a.org,*.b.org", &m, &allow, &err) == 0 && m == SL_NET_ALLOW &&
              !strcmp(allow, "a.org,*.b.org"),
          "--net allow=LIST");
    CHECK(sl_net_parse("allow=", &m, &allow, &err) < 0 && strstr(err.msg, "allow=HOST"),
          "--net allow= without hosts is refused");
    sl_err_clear(&err);
    CHECK(sl_net_parse("everything", &m, &allow, &err) < 0, "unknown policy refused");
    sl_err_clear(&err);
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "nonesuch";
    sl_sandbox *x = NULL;
    CHECK(sl_sandbox_create(&o, &x, &err) < 0 && err.code == SL_EINVAL &&
              strstr(err.msg, "'nonesuch'") && strstr(err.msg, "local, ssh, e2b"),
          "an unknown provider is refused by name, with the known ones: %s", err.msg);
    sl_err_clear(&err);
    o.provider = "e2b";
    unsetenv("E2B_API_KEY");
    CHECK(sl_sandbox_create(&o, &x, &err) < 0 && strstr(err.msg, "sandbox.e2b"),
          "e2b without settings says which setting is missing: %s", err.msg);
    sl_err_clear(&err);
    o.provider = "local";
    sl_sandbox_bind bad = {"/usr", "../escape"};
    o.binds = &bad;
    o.n_binds = 1;
    CHECK(sl_sandbox_create(&o, &x, &err) < 0 && strstr(err.msg, "without '..'"),
          "a bind target with '..' is refused: %s", err.msg);
    sl_err_clear(&err);
    char hostdir[] = "/tmp/sluice-bindtest-XXXXXX";
    if (mkdtemp(hostdir)) {
        chmod(hostdir, 0755);  /* the sandbox's user is not us */
        char *f = sl_xasprintf("%s/hello.txt", hostdir);
        FILE *fp = fopen(f, "w");
        if (fp) {
            fputs("from the host\n", fp);
            fclose(fp);
        }
        sl_sandbox_bind rel = {hostdir, "data/in"};
        o.binds = &rel;
        o.memory_bytes = sb_memory;
        sl_sandbox *rb = NULL;
        int rc = sl_sandbox_create(&o, &rb, &err);
        sl_buf got;
        sl_buf_init(&got, 0);
        if (rc == 0)
            rc = sl_sandbox_download(rb, "/workspace/data/in/hello.txt", 1024, &got, &err);
        CHECK(rc == 0 && got.len == 14 && !memcmp(got.data, "from the host\n", 14),
              "a relative bind target lands under the workspace: %s", err.msg ? err.msg : "");
        sl_buf_release(&got);
        sl_sandbox_destroy(rb);
        unlink(f);
        free(f);
        rmdir(hostdir);
    }
    sl_err_clear(&err);
}

/* Each per-process and sandbox limit a command hits is named by `hit` (the
 * enum callers decide on), beside the words in `limit`. */
static void test_limit_kinds(void)
{
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.disk_bytes = 8 << 20;
    o.memory_bytes = sb_memory ? 64 << 20 : 0;
    o.cpu_seconds = 1;
    o.max_file_bytes = 4096;
    o.max_procs = 16;
    sl_sandbox *lb = NULL;
    sl_err err = {0};
    if (sl_sandbox_create(&o, &lb, &err)) {
        CHECK(0, "a sandbox with small limits: %s", err.msg);
        sl_err_clear(&err);
        return;
    }
    sl_sandbox *keep = sb;
    sb = lb;
    sl_sandbox_result r;
    const char *fsize[] = {"sh", "-c", "exec head -c 10000 /dev/zero > big", NULL};
    CHECK(run(fsize, &r, NULL) == 0 && r.kind == SL_EXIT_LIMIT && r.hit == SL_SBLIMIT_FILE_SIZE &&
              strstr(r.limit, "file size"),
          "a file past max_file_bytes: hit is FILE_SIZE (kind %d, '%s')", r.kind, r.limit);
    sl_sandbox_result_release(&r);
    const char *spin[] = {"sh", "-c", "while :; do :; done", NULL};
    sl_sandbox_cmd to = {.timeout_s = 10};
    CHECK(run(spin, &r, &to) == 0 && r.kind == SL_EXIT_LIMIT && r.hit == SL_SBLIMIT_CPU &&
              strstr(r.limit, "CPU time"),
          "a loop past cpu_seconds: hit is CPU (kind %d, '%s')", r.kind, r.limit);
    sl_sandbox_result_release(&r);
    if (o.memory_bytes) {
        const char *hog[] = {"sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\0' a)", NULL};
        CHECK(run(hog, &r, &to) == 0 && r.kind == SL_EXIT_LIMIT && r.hit == SL_SBLIMIT_MEMORY &&
                  strstr(r.limit, "memory"),
              "200 MB in a 64 MiB sandbox: hit is MEMORY (kind %d, '%s')", r.kind, r.limit);
        sl_sandbox_result_release(&r);
    } else {
        SKIP("hit is MEMORY", "no memory limit here");
    }
    const char *fork[] = {"sh", "-c", "for i in $(seq 40); do sleep 1 & done; wait", NULL};
    CHECK(run(fork, &r, &to) == 0 && r.touched == SL_SBLIMIT_PROCS && strstr(r.note, "process"),
          "forks past max_procs: touched is PROCS ('%s')", r.note);
    sl_sandbox_result_release(&r);
    sb = keep;
    sl_sandbox_destroy(lb);
}

int main(void)
{
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.disk_bytes = 8 << 20;
    sl_err err = {0};
    if (sl_local_memory_check(o.memory_bytes, &err)) {
        /* no memory cgroup (unprivileged): the rest is tested without one */
        printf("# no memory limit here: %s\n", err.msg);
        sb_memory = o.memory_bytes = 0;
        sl_err_clear(&err);
    }
    if (sl_sandbox_create(&o, &sb, &err)) {
        printf("1..0 # SKIP no sandbox here: %s\n", err.msg);
        return 0;
    }
    test_files();
    test_one_shot(&o);
    test_limit_kinds();
    test_streams();
    test_concurrency();
    sl_buf big;
    sl_buf_init(&big, 0);
    for (int i = 0; i < (10 << 20) / 64; i++)
        sl_buf_adds(&big, "0123456789012345678901234567890123456789012345678901234567890123");
    CHECK(sl_sandbox_upload(sb, "huge", big.data, big.len, &err) < 0 && err.code == SL_ELIMIT &&
              strstr(err.msg, "disk is full"),
          "upload past the disk limit: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    sl_buf_release(&big);
    sl_sandbox_destroy(sb);
    test_parsers();
    return tap_done();
}
