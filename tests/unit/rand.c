/*
 * rand — sluice's random bytes come only from getrandom, and without them
 * every caller refuses: no key, id, marker or boundary is made from a
 * guessable source (time, pid, a constant).
 *
 * The test's getrandom takes the place of libc's for the whole program (the
 * library is linked in), so a kernel that gives nothing (an old kernel, a
 * seccomp filter) can be simulated: each caller is run with it failing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "core/rand.h"
#include "dsl/bundle.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "nodes/code.h"
#include "nodes/registry.h"
#include "tap.h"

static int fail_random;   /* getrandom fails with ENOSYS */
static int short_random;  /* getrandom gives one byte a call */
static int calls;

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
    calls++;
    if (fail_random) {
        errno = ENOSYS;
        return -1;
    }
    if (short_random && n > 1)
        n = 1;
    return syscall(SYS_getrandom, buf, n, flags);
}

/* n lower-case hex digits at s */
static bool hex_run(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr("0123456789abcdef", s[i]))
            return false;
    return true;
}

static void test_rand(void)
{
    sl_err err = {0};
    unsigned char a[32], b[32];
    CHECK(sl_rand_bytes(a, sizeof a, &err) == 0 && sl_rand_bytes(b, sizeof b, &err) == 0 &&
              memcmp(a, b, sizeof a) != 0,
          "two draws of 32 bytes differ");
    short_random = 1;
    calls = 0;
    memset(a, 0, sizeof a);
    int rc = sl_rand_bytes(a, sizeof a, &err);
    short_random = 0;
    CHECK(rc == 0 && calls == 32, "short reads are retried until all 32 bytes came (%d calls)",
          calls);

    char h[65];
    CHECK(sl_rand_hex(h, 32, &err) == 0 && hex_run(h, 64) && !h[64], "64 hex digits: %s", h);
    CHECK(sl_rand_hex(h, 0, &err) == 0 && h[0] == 0, "zero bytes: an empty string");
    char big[200];
    CHECK(sl_rand_hex(big, 65, &err) == -1 && err.code == SL_EINVAL && big[0] == 0,
          "more than 64 bytes is refused: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);

    char u[37], v[37];
    CHECK(sl_rand_uuid(u, &err) == 0 && sl_rand_uuid(v, &err) == 0 && strcmp(u, v) != 0,
          "two UUIDs differ: %s %s", u, v);
    CHECK(strlen(u) == 36 && u[8] == '-' && u[13] == '-' && u[18] == '-' && u[23] == '-' &&
              u[14] == '4' && strchr("89ab", u[19]),
          "a version-4 UUID, RFC 9562 variant: %s", u);
    CHECK(sl_file_id_ok(u), "… the shape sluice accepts as a file id");

    fail_random = 1;
    memset(a, 0x77, sizeof a);
    rc = sl_rand_bytes(a, sizeof a, &err);
    bool zero = true;
    for (size_t i = 0; i < sizeof a; i++)
        zero &= a[i] == 0;
    CHECK(rc == -1 && err.code == SL_EIO && zero, "no randomness: -1, SL_EIO, nothing left");
    CHECK(err.msg && strstr(err.msg, "getrandom") && strstr(err.msg, "not implemented"),
          "… the message names getrandom and why: %s", err.msg ? err.msg : "");
    sl_err_clear(&err);
    strcpy(h, "stale");
    CHECK(sl_rand_hex(h, 16, &err) == -1 && h[0] == 0, "no hex: -1 and an empty string");
    sl_err_clear(&err);
    strcpy(u, "stale");
    CHECK(sl_rand_uuid(u, &err) == -1 && u[0] == 0, "no UUID: -1 and an empty string");
    sl_err_clear(&err);
    CHECK(sl_rand_bytes(a, 4, NULL) == -1, "a NULL sl_err is allowed");
    fail_random = 0;
}

/* The callers: each refuses without randomness, and works with it. */
static void test_callers(void)
{
    sl_err err = {0};
    char marker[SL_CODE_MARKER_SIZE];
    CHECK(sl_code_marker(marker, &err) == 0 && !strncmp(marker, "\n<<sluice-result-", 17) &&
              hex_run(marker + 17, 32) && strlen(marker) == 51 &&
              !strcmp(marker + 49, ">>"),
          "a code result marker: \\n<<sluice-result-…>> (%zu chars)", strlen(marker));
    fail_random = 1;
    memset(marker, 'x', sizeof marker);
    int rc = sl_code_marker(marker, &err);
    fail_random = 0;
    CHECK(rc == -1 && err.code == SL_EIO && err.msg && strstr(err.msg, "getrandom"),
          "no code marker without randomness (the code is not run): %s", err.msg);
    sl_err_clear(&err);

    sl_agent_limits L;
    sl_agent_limits_init(&L);
    sl_agent_io io = {0};
    sl_agent_session s;
    fail_random = 1;
    rc = sl_agent_session_init(&s, NULL, &L, &io, &err);
    fail_random = 0;
    CHECK(rc == -1 && err.code == SL_EIO && s.cwd == NULL,
          "no agent session without randomness for its cwd marker (was a fixed 0x5a one)");
    sl_err_clear(&err);

    /* A bundle's new file ids */
    char dir[] = "/tmp/sluice-rand-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "a temporary folder");
    char *files = sl_xasprintf("%s/files", dir), *f = sl_xasprintf("%s/files/a.txt", dir);
    char *zip = sl_xasprintf("%s/app.zip", dir);
    mkdir(files, 0700);
    FILE *fp = fopen(f, "w");
    if (fp) {
        fputs("hello\n", fp);
        fclose(fp);
    }
    const char *dsl = "app: {mode: workflow, name: r}\nkind: app\nversion: 0.1.5\n";
    fail_random = 1;
    rc = sl_bundle_write(zip, "r", dsl, strlen(dsl), files, NULL, &err);
    fail_random = 0;
    CHECK(rc == -1 && err.code == SL_EIO && access(zip, F_OK) != 0,
          "no bundle without randomness for its file ids (was an abort): %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    rc = sl_bundle_write(zip, "r", dsl, strlen(dsl), files, NULL, &err);
    CHECK(rc == 0 && access(zip, F_OK) == 0, "with it the bundle is written: %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    char *cmd = sl_xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
    free(files);
    free(f);
    free(zip);
}

/* A run's ids, and an http-request node's logged multipart boundary. */
static void test_run(void)
{
    static const char text[] =
        "app: {mode: workflow, name: r}\n"
        "kind: app\n"
        "version: 0.1.5\n"
        "workflow:\n"
        "  graph:\n"
        "    nodes:\n"
        "    - {id: s, data: {type: start, title: Start, variables: []}}\n"
        "    - id: h\n"
        "      data:\n"
        "        type: http-request\n"
        "        title: Post\n"
        "        method: post\n"
        "        url: http://127.0.0.1:1/\n"
        "        authorization: {type: no-auth}\n"
        "        headers: ''\n"
        "        params: ''\n"
        "        body:\n"
        "          type: form-data\n"
        "          data: [{key: a, type: text, value: b}]\n"
        "    - {id: e, data: {type: end, title: End, outputs: []}}\n"
        "    edges:\n"
        "    - {source: s, target: h}\n"
        "    - {source: h, target: e}\n";
    sl_config *config = NULL;
    sl_err err = {0};
    if (sl_config_load(NULL, &config, &err)) {
        CHECK(0, "sluice.yml defaults: %s", err.msg);
        return;
    }
    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    int rc = sl_graph_load_text(&g, &sl_nodes, config, text, strlen(text), "r.yml", &d, &err);
    CHECK(rc == 0, "the workflow loads: %s", err.msg ? err.msg : "");
    sl_diag_release(&d);
    if (rc) {
        sl_err_clear(&err);
        sl_config_free(config);
        return;
    }
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = config;
    sl_value *in = json_object();
    o.inputs = in;

    fail_random = 1;
    sl_run *r = sl_run_new(&g, &o);
    rc = sl_run_exec(r, &err);
    fail_random = 0;
    CHECK(rc == -1 && sl_run_status_of(r) == SL_RUN_FAILED && err.code == SL_EIO &&
              sl_run_error(r) && strstr(sl_run_error(r), "getrandom") && sl_run_steps(r) == 0,
          "no run without randomness for its ids (was time and pid): %s",
          sl_run_error(r) ? sl_run_error(r) : "");
    sl_run_free(r);
    sl_err_clear(&err);

    r = sl_run_new(&g, &o);
    fail_random = 1;  /* after the run's seed: the node's own draw fails */
    rc = sl_run_exec(r, &err);
    fail_random = 0;
    CHECK(rc == -1 && sl_run_status_of(r) == SL_RUN_FAILED && sl_run_error(r) &&
              strstr(sl_run_error(r), "getrandom"),
          "an http-request node logs no guessable boundary: it fails (%s)",
          sl_run_error(r) ? sl_run_error(r) : "");
    sl_run_free(r);
    sl_err_clear(&err);
    json_decref(in);
    sl_graph_release(&g);
    sl_config_free(config);
}

int main(void)
{
    test_rand();
    test_callers();
    test_run();
    return tap_done();
}
