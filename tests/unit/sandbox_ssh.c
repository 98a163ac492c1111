/*
 * The ssh sandbox provider against a real OpenSSH sshd on 127.0.0.1
 * (tests/tools/sshd.sh): settings and connection errors, exec (output,
 * exit codes, quoting, env, cwd, stdin, streaming, signals, limits),
 * timeout / cancel / output cap / kill() killing the remote process group,
 * concurrent commands from threads, files over SFTP, binds, destroy.
 * Since sshd runs on this host, "nothing is left running" is checked here
 * with pgrep.  A watchdog process stops sshd when this test ends, however
 * it ends.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "sandbox/sandbox.h"
#include "sandbox/ssh.h"
#include "tap.h"
#include "util.h"

static char g_dir[512], g_user[128], g_key[600], g_other[600], g_hostpub[600], g_fp[128];
/* This run's base_path: a folder of its own, so that runs of the suite
 * side by side (several checkouts on one machine) neither delete each
 * other's sandboxes nor count each other's processes as left over. */
static char g_base[64] = "/tmp/sluice-ssh-test.XXXXXX";
static int g_port;
static pid_t g_watchdog = -1;
static int g_watch_fd = -1;
static sl_sandbox *sb;

static bool has(const char *s, const char *sub)
{
    return s && strstr(s, sub);
}

/* Output of a host shell command (trimmed), heap. */
static char *host_sh(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return sl_xstrdup("");
    sl_buf b;
    sl_buf_init(&b, 0);
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        sl_buf_add(&b, tmp, n);
    pclose(f);
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' '))
        b.data[--b.len] = 0;
    return b.data ? sl_buf_detach(&b) : sl_xstrdup("");
}

static bool leftover(const char *pattern)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "pgrep -f '%s'", pattern);
    char *o = host_sh(cmd);
    bool any = o[0] != 0;
    if (any)
        printf("# still running (%s): %s\n", pattern, esc(o));
    free(o);
    return any;
}

/* Waits up to 3 s for processes matching pattern to go. */
static bool gone(const char *pattern)
{
    for (int i = 0; i < 60; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "pgrep -f '%s' >/dev/null", pattern);
        if (system(cmd) != 0)
            return true;
        usleep(50000);
    }
    return !leftover(pattern);
}

/* 0 started, 1 skip (reason printed), -1 failed */
static int start_sshd(void)
{
    char *o = host_sh("bash tests/tools/sshd.sh start");
    char *save = NULL;
    for (char *line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "SKIP=", 5)) {
            printf("ok 1 - # SKIP %s\n1..1\n", line + 5);
            free(o);
            return 1;
        }
        if (!strncmp(line, "ERROR=", 6))
            printf("# %s\n", line);
        sscanf(line, "DIR=%511s", g_dir);
        sscanf(line, "PORT=%d", &g_port);
        sscanf(line, "USER=%127s", g_user);
        sscanf(line, "USER_KEY=%599s", g_key);
        sscanf(line, "OTHER_KEY=%599s", g_other);
        sscanf(line, "HOST_KEY_PUB=%599s", g_hostpub);
        sscanf(line, "FINGERPRINT=%127s", g_fp);
    }
    free(o);
    if (!g_dir[0] || !g_port || !g_fp[0])
        return -1;
    /* the watchdog: stops sshd when this process ends, however it ends */
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return -1;
    g_watchdog = fork();
    if (g_watchdog == 0) {
        close(p[1]);
        char c;
        while (read(p[0], &c, 1) < 0 && errno == EINTR) {
        }
        execlp("bash", "bash", "tests/tools/sshd.sh", "stop", g_dir, (char *)NULL);
        _exit(1);
    }
    close(p[0]);
    g_watch_fd = p[1];
    return 0;
}

/* Removes this run's base_path (bound copies in it are read-only). */
static void remove_base(void)
{
    char cmd[200];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s 2>/dev/null; rm -rf %s", g_base, g_base);
    system(cmd);
}

static void stop_sshd(void)
{
    if (g_watch_fd >= 0) {
        close(g_watch_fd);
        g_watch_fd = -1;
        waitpid(g_watchdog, NULL, 0);
    }
}

/* Settings for the test server; extra is merged in (JSON object text). */
static sl_value *settings(const char *extra)
{
    sl_value *s = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "host", "127.0.0.1", "port",
                            g_port, "user", g_user, "private_key_file", g_key,
                            "host_key_sha256", g_fp, "base_path", g_base);
    if (extra) {
        sl_value *e = J(extra);
        json_object_update(s, e);
        const char *k;
        sl_value *v;
        void *tmp;
        json_object_foreach_safe(e, tmp, k, v) {
            if (json_is_null(v))
                json_object_del(s, k);
        }
        json_decref(e);
    }
    return s;
}

static int make(sl_value *set, sl_net_mode net, const sl_sandbox_bind *binds, size_t nb,
                sl_sandbox **out, sl_err *err)
{
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "ssh";
    o.net = net;
    o.settings = set;
    o.binds = binds;
    o.n_binds = nb;
    int rc = sl_ssh_create(&o, out, err);
    json_decref(set);
    return rc;
}

static void expect_create_error(sl_value *set, sl_net_mode net, const char *want,
                                const char *what)
{
    sl_err err = {0};
    sl_sandbox *x = NULL;
    int rc = make(set, net, NULL, 0, &x, &err);
    CHECK(rc == -1 && !x && has(err.msg, want), "%s: refused with '%s' (%s)", what, want,
          esc(err.msg));
    sl_sandbox_destroy(x);
    sl_err_clear(&err);
}

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

static const char *out_s(const sl_sandbox_result *r)
{
    return esc(r->out.data ? r->out.data : "");
}

static void test_settings_errors(void)
{
    sl_err err = {0};
    sl_sandbox *x = NULL;
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "ssh";
    o.net = SL_NET_OPEN;
    CHECK(sl_ssh_create(&o, &x, &err) == -1 && has(err.msg, "sandbox.ssh.host") &&
              has(err.msg, "sandbox.ssh.user"),
          "no settings: the error names the missing fields (%s)", esc(err.msg));
    sl_err_clear(&err);
    expect_create_error(settings("{\"host\": null}"), SL_NET_OPEN, "sandbox.ssh.host is missing",
                        "no host");
    expect_create_error(settings("{\"user\": null}"), SL_NET_OPEN, "sandbox.ssh.user is missing",
                        "no user");
    expect_create_error(settings("{\"hots\": \"x\"}"), SL_NET_OPEN,
                        "sandbox.ssh.hots is not a setting", "unknown key");
    expect_create_error(settings("{\"port\": \"22\"}"), SL_NET_OPEN, "sandbox.ssh.port must be",
                        "port as a string");
    expect_create_error(settings("{\"insecure_skip_host_key_check\": 1}"), SL_NET_OPEN,
                        "must be true or false", "bool as a number");
    expect_create_error(settings("{\"private_key_file\": null}"), SL_NET_OPEN,
                        "no credentials", "no password or key");
    expect_create_error(settings("{\"base_path\": \"relative/dir\"}"), SL_NET_OPEN,
                        "base_path must be an absolute", "relative base_path");
    expect_create_error(settings("{\"host_key_sha256\": \"abc\"}"), SL_NET_OPEN,
                        "must look like \"SHA256:", "malformed fingerprint");
    expect_create_error(settings(NULL), SL_NET_NONE,
                        "sandbox provider 'ssh' cannot enforce network 'none'", "net none");
    expect_create_error(settings(NULL), SL_NET_ALLOW, "cannot enforce network 'allow'",
                        "net allow");
    expect_create_error(settings("{\"private_key_file\": \"/nonexistent/key\"}"), SL_NET_OPEN,
                        "cannot read /nonexistent/key", "missing key file");
}

static void test_connection_errors(void)
{
    /* a closed port: bind one, note it, close it */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd);
    char extra[128];
    snprintf(extra, sizeof extra, "{\"port\": %d, \"connect_timeout_s\": 3}", ntohs(a.sin_port));
    double t0 = sl_clock_s();
    expect_create_error(settings(extra), SL_NET_OPEN, "cannot connect to 127.0.0.1", "closed port");
    CHECK(sl_clock_s() - t0 < 3, "closed port fails fast (%.2f s)", sl_clock_s() - t0);

    expect_create_error(
        settings("{\"host_key_sha256\": \"SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}"),
        SL_NET_OPEN, "refusing to connect", "mismatching host key");
    char kh[700];
    snprintf(kh, sizeof kh, "%s/empty_known_hosts", g_dir);
    FILE *f = fopen(kh, "w");
    if (f)
        fclose(f);
    char *set = sl_xasprintf("{\"host_key_sha256\": null, \"known_hosts\": \"%s\"}", kh);
    expect_create_error(settings(set), SL_NET_OPEN, "refusing an unknown host",
                        "host not in known_hosts");
    free(set);
    sl_err err = {0};
    sl_sandbox *x = NULL;
    {
        /* the error tells the fingerprint to pin */
        char *s2 = sl_xasprintf("{\"host_key_sha256\": null, \"known_hosts\": \"%s\"}", kh);
        make(settings(s2), SL_NET_OPEN, NULL, 0, &x, &err);
        CHECK(has(err.msg, g_fp), "the unknown-host error shows the fingerprint %s", g_fp);
        sl_err_clear(&err);
        free(s2);
    }
    /* a known_hosts file that has the key */
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "printf '[127.0.0.1]:%d ' >%s/known_hosts && cut -d' ' -f1,2 %s >>%s/known_hosts",
             g_port, g_dir, g_hostpub, g_dir);
    CHECK(system(cmd) == 0, "known_hosts written");
    set = sl_xasprintf("{\"host_key_sha256\": null, \"known_hosts\": \"%s/known_hosts\"}", g_dir);
    int rc = make(settings(set), SL_NET_OPEN, NULL, 0, &x, &err);
    CHECK(rc == 0 && x, "a host in known_hosts is accepted (%s)", esc(err.msg));
    sl_sandbox_destroy(x);
    x = NULL;
    sl_err_clear(&err);
    free(set);
    rc = make(settings("{\"host_key_sha256\": null, \"insecure_skip_host_key_check\": true}"),
              SL_NET_OPEN, NULL, 0, &x, &err);
    CHECK(rc == 0 && x, "insecure_skip_host_key_check connects (%s)", esc(err.msg));
    if (x)
        CHECK(!strcmp(sl_ssh_host_fingerprint(x), g_fp), "the fingerprint is reported (%s)",
              sl_ssh_host_fingerprint(x));
    sl_sandbox_destroy(x);
    x = NULL;
    sl_err_clear(&err);

    set = sl_xasprintf("{\"private_key_file\": \"%s\"}", g_other);
    expect_create_error(settings(set), SL_NET_OPEN, "refused the private key", "unauthorized key");
    free(set);
    expect_create_error(settings("{\"private_key_file\": null, \"password\": \"wrong-password\"}"),
                        SL_NET_OPEN, "refused the password", "wrong password");
    /* the key as PEM text instead of a file */
    size_t n;
    char *pem = slurp(g_key, &n);
    sl_value *s3 = settings("{\"private_key_file\": null}");
    json_object_set_new(s3, "private_key", json_string(pem ? pem : ""));
    free(pem);
    rc = make(s3, SL_NET_OPEN, NULL, 0, &x, &err);
    CHECK(rc == 0 && x, "private_key as text logs in (%s)", esc(err.msg));
    sl_sandbox_destroy(x);
    sl_err_clear(&err);
    x = NULL;
    /* network none is fine when the VM enforces it */
    rc = make(settings("{\"vm_enforces_network\": true}"), SL_NET_NONE, NULL, 0, &x, &err);
    CHECK(rc == 0 && x, "net none with vm_enforces_network: true (%s)", esc(err.msg));
    sl_sandbox_destroy(x);
    sl_err_clear(&err);
}

static void test_exec(void)
{
    sl_sandbox_result r;
    const char *ws = sl_sandbox_workspace(sb);
    CHECK(!strcmp(sl_sandbox_provider(sb), "ssh"), "provider name is ssh");
    size_t bl = strlen(g_base);
    CHECK(!strncmp(ws, g_base, bl) && ws[bl] == '/', "workspace %s under base_path", ws);
    struct stat st;
    CHECK(stat(ws, &st) == 0 && S_ISDIR(st.st_mode), "the workspace folder exists on the VM");

    const char *echo[] = {"echo", "hello", NULL};
    CHECK(run(echo, &r, NULL) == 0 && r.kind == SL_EXIT_EXITED && r.code == 0 &&
              out_is(&r, "hello\n"),
          "echo hello -> '%s'", out_s(&r));
    sl_sandbox_result_release(&r);

    const char *ex[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    CHECK(run(ex, &r, NULL) == 0 && r.kind == SL_EXIT_EXITED && r.code == 3 &&
              out_is(&r, "out\n") && r.err.len == 4 && !memcmp(r.err.data, "err\n", 4),
          "exit code 3, stdout and stderr apart (out '%s', err '%s')", out_s(&r),
          esc(r.err.data));
    sl_sandbox_result_release(&r);

    const char *q[] = {"printf", "[%s]", "a b", "it's", "$HOME", "`id`", "\"q\"", "", "x\ny",
                       NULL};
    CHECK(run(q, &r, NULL) == 0 && out_is(&r, "[a b][it's][$HOME][`id`][\"q\"][][x\ny]"),
          "arguments reach the program as they are: '%s'", out_s(&r));
    sl_sandbox_result_release(&r);

    const char *pwd[] = {"pwd", NULL};
    char want[600];
    snprintf(want, sizeof want, "%s\n", ws);
    CHECK(run(pwd, &r, NULL) == 0 && out_is(&r, want), "commands start in the workspace (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);

    const char *mk[] = {"mkdir", "-p", "sub dir/deeper", NULL};
    run(mk, &r, NULL);
    sl_sandbox_result_release(&r);
    sl_sandbox_cmd c = {0};
    c.cwd = "sub dir/deeper";
    snprintf(want, sizeof want, "%s/sub dir/deeper\n", ws);
    CHECK(run(pwd, &r, &c) == 0 && out_is(&r, want), "relative cwd (%s)", out_s(&r));
    sl_sandbox_result_release(&r);
    c.cwd = "/tmp";
    CHECK(run(pwd, &r, &c) == 0 && out_is(&r, "/tmp\n"), "absolute cwd (%s)", out_s(&r));
    sl_sandbox_result_release(&r);

    const char *env[] = {"GREETING=hi 'there' $USER", "EMPTY=", "PATH_EXTRA=a=b", NULL};
    const char *pe[] = {"sh", "-c", "printf '%s|%s|%s' \"$GREETING\" \"$EMPTY\" \"$PATH_EXTRA\"",
                        NULL};
    c = (sl_sandbox_cmd){0};
    c.env = env;
    CHECK(run(pe, &r, &c) == 0 && out_is(&r, "hi 'there' $USER||a=b"), "env passed as is (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);
    const char *badenv[] = {"BAD NAME=x", NULL};
    c.env = badenv;
    sl_err err = {0};
    sl_sandbox_result_init(&r);
    c.argv = echo;
    CHECK(sl_sandbox_exec(sb, &c, &r, &err) == -1 && has(err.msg, "NAME=value"),
          "a bad env name is refused (%s)", esc(err.msg));
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);

    const char *tag[] = {"sh", "-c", "echo $SLUICE_SANDBOX", NULL};
    CHECK(run(tag, &r, NULL) == 0 && r.out.len > 10, "commands are tagged (%s)", out_s(&r));
    sl_sandbox_result_release(&r);

    const char *cat[] = {"cat", NULL};
    c = (sl_sandbox_cmd){0};
    c.stdin_data = "line one\nline two\n";
    c.stdin_len = strlen(c.stdin_data);
    CHECK(run(cat, &r, &c) == 0 && out_is(&r, "line one\nline two\n"), "stdin is fed (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);
    size_t big = 3u << 20;
    char *data = sl_xmalloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)('a' + i % 26);
    c.stdin_data = data;
    c.stdin_len = big;
    const char *wc[] = {"sh", "-c", "wc -c | tr -d ' '", NULL};
    CHECK(run(wc, &r, &c) == 0 && out_is(&r, "3145728\n"), "3 MiB of stdin arrive whole (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);
    free(data);
    const char *rd[] = {"sh", "-c", "read x; echo \"got[$x]\"", NULL};
    CHECK(run(rd, &r, NULL) == 0 && out_is(&r, "got[]\n"), "no stdin reads as empty (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);

    const char *segv[] = {"sh", "-c", "kill -SEGV $$", NULL};
    CHECK(run(segv, &r, NULL) == 0 && r.kind == SL_EXIT_SIGNALED && r.sig == SIGSEGV,
          "a signal is reported (kind %d sig %d)", r.kind, r.sig);
    sl_sandbox_result_release(&r);

    const char *lim[] = {"sh", "-c", "ulimit -n; ulimit -t; ulimit -f", NULL};
    CHECK(run(lim, &r, NULL) == 0 && out_is(&r, "1024\n600\n2097152\n"),
          "per-process limits: open files, CPU seconds, file size in 512-byte blocks (%s)",
          out_s(&r));
    sl_sandbox_result_release(&r);

    const char *nf[] = {"no-such-program-xyz", NULL};
    CHECK(run(nf, &r, NULL) == 0 && r.kind == SL_EXIT_EXITED && r.code == 127,
          "a missing program exits 127 (%d)", r.code);
    sl_sandbox_result_release(&r);

    const char *st2[] = {"sh", "-c", "echo x > persisted.txt", NULL};
    const char *st3[] = {"cat", "persisted.txt", NULL};
    run(st2, &r, NULL);
    sl_sandbox_result_release(&r);
    CHECK(run(st3, &r, NULL) == 0 && out_is(&r, "x\n"), "files persist between commands");
    sl_sandbox_result_release(&r);
}

typedef struct {
    sl_buf got;
    double first_at;
    int chunks;
} sink;

static void on_out(const char *data, size_t len, void *ud)
{
    sink *k = ud;
    if (!k->chunks++)
        k->first_at = sl_clock_s();
    sl_buf_add(&k->got, data, len);
}

static double cancel_at;
static bool cancel_fn(void *ud)
{
    (void)ud;
    return sl_clock_s() >= cancel_at;
}

static void test_streams_and_kills(void)
{
    sl_sandbox_result r;
    sink k = {0};
    sl_buf_init(&k.got, 0);
    sl_sandbox_cmd c = {0};
    c.on_stdout = on_out;
    c.ud = &k;
    const char *slow[] = {"sh", "-c", "echo first; sleep 0.5; echo second", NULL};
    double t0 = sl_clock_s();
    int rc = run(slow, &r, &c);
    double t1 = sl_clock_s();
    CHECK(rc == 0 && k.got.len == 13 && !memcmp(k.got.data, "first\nsecond\n", 13) && !r.out.len,
          "stdout streams to the callback (%s)", esc(k.got.data));
    CHECK(k.chunks >= 2 && k.first_at - t0 < t1 - t0 - 0.3,
          "the first line arrives before the command ends (%.2f s of %.2f s)", k.first_at - t0,
          t1 - t0);
    sl_buf_release(&k.got);
    sl_sandbox_result_release(&r);

    /* timeout kills the command and what it started */
    c = (sl_sandbox_cmd){0};
    c.timeout_s = 1;
    const char *to[] = {"sh", "-c", "sleep 1001 & sleep 1002; echo never", NULL};
    t0 = sl_clock_s();
    rc = run(to, &r, &c);
    CHECK(rc == 0 && r.kind == SL_EXIT_TIMEOUT && sl_sandbox_result_code(&r) == 124,
          "timeout reported (kind %d, code %d)", r.kind, sl_sandbox_result_code(&r));
    CHECK(sl_clock_s() - t0 < 2.5 && r.seconds >= 0.95, "timeout after ~1 s (%.2f s)", sl_clock_s() - t0);
    CHECK(gone("[s]leep 100[12]"), "the remote process group (sleep child too) is gone");
    sl_sandbox_result_release(&r);

    /* a child that escapes the group (setsid) is found by its tag */
    const char *esc_[] = {"sh", "-c", "setsid sleep 1011 & sleep 1012", NULL};
    c.timeout_s = 0.8;
    rc = run(esc_, &r, &c);
    CHECK(rc == 0 && r.kind == SL_EXIT_TIMEOUT && gone("[s]leep 101[12]"),
          "a child in its own session is killed too");
    sl_sandbox_result_release(&r);

    /* output cap */
    c = (sl_sandbox_cmd){0};
    c.max_output_bytes = 1000;
    const char *yes[] = {"sh", "-c", "yes hello & yes other; wait", NULL};
    t0 = sl_clock_s();
    rc = run(yes, &r, &c);
    CHECK(rc == 0 && r.kind == SL_EXIT_LIMIT && r.out.len == 1000 && r.out_truncated &&
              has(r.limit, "stdout output (1000 bytes)") && r.hit == SL_SBLIMIT_OUTPUT,
          "output over the cap is cut and the command killed (kind %d, %zu bytes, '%s')",
          r.kind, r.out.len, r.limit);
    CHECK(sl_clock_s() - t0 < 3 && gone("^[y]es (hello|other)$"), "yes is gone (%.2f s)",
          sl_clock_s() - t0);
    sl_sandbox_result_release(&r);
    const char *errcap[] = {"sh", "-c", "head -c 5000 /dev/zero >&2", NULL};
    rc = run(errcap, &r, &c);
    CHECK(rc == 0 && r.err.len == 1000 && r.err_truncated && !r.out_truncated,
          "stderr has its own cap (%zu)", r.err.len);
    sl_sandbox_result_release(&r);

    /* cancel */
    c = (sl_sandbox_cmd){0};
    c.cancelled = cancel_fn;
    cancel_at = sl_clock_s() + 0.4;
    const char *can[] = {"sh", "-c", "sleep 1003 & sleep 1004", NULL};
    t0 = sl_clock_s();
    rc = run(can, &r, &c);
    CHECK(rc == 0 && r.kind == SL_EXIT_CANCELED && sl_clock_s() - t0 < 2,
          "cancel stops the command (kind %d, %.2f s)", r.kind, sl_clock_s() - t0);
    CHECK(gone("[s]leep 100[34]"), "cancelled command's group is gone");
    sl_sandbox_result_release(&r);

    /* a finished command's background child holding stdout: killed as local does */
    const char *bg[] = {"sh", "-c", "sleep 1005 & echo done", NULL};
    t0 = sl_clock_s();
    rc = run(bg, &r, NULL);
    CHECK(rc == 0 && r.kind == SL_EXIT_EXITED && r.code == 0 && out_is(&r, "done\n") &&
              sl_clock_s() - t0 < 2,
          "a command whose child holds stdout ends with its own exit (%.2f s)", sl_clock_s() - t0);
    CHECK(gone("[s]leep 1005"), "and the child is killed");
    sl_sandbox_result_release(&r);
}

typedef struct {
    int n;
    int rc;
    sl_sandbox_result r;
    double took;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[32];
    snprintf(name, sizeof name, "t%d", w->n);
    const char *argv[] = {"sh", "-c", "sleep 1.5; echo \"$0\"", name, NULL};
    double t0 = sl_clock_s();
    w->rc = run(argv, &w->r, NULL);
    w->took = sl_clock_s() - t0;
    return NULL;
}

static void *killer_target(void *arg)
{
    worker *w = arg;
    const char *argv[] = {"sh", "-c", "sleep 1007 & sleep 1008", NULL};
    w->rc = run(argv, &w->r, NULL);
    return NULL;
}

static void test_threads(void)
{
    enum { N = 12 };  /* more than one connection holds (8) */
    worker w[N];
    pthread_t t[N];
    double t0 = sl_clock_s();
    for (int i = 0; i < N; i++) {
        w[i] = (worker){.n = i};
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        char want[16];
        snprintf(want, sizeof want, "t%d\n", i);
        if (w[i].rc == 0 && w[i].r.kind == SL_EXIT_EXITED && out_is(&w[i].r, want))
            ok++;
        else
            printf("# thread %d: rc %d kind %d out '%s'\n", i, w[i].rc, w[i].r.kind,
                   out_s(&w[i].r));
        sl_sandbox_result_release(&w[i].r);
    }
    double took = sl_clock_s() - t0;
    CHECK(ok == N, "%d threads exec at once in one sandbox, each gets its own output (%d ok)", N,
          ok);
    CHECK(took < 8, "they run in parallel (%.2f s for %d x 1.5 s)", took, N);

    /* kill(): every running command dies, the sandbox stays usable */
    worker a = {0}, b = {0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, killer_target, &a);
    pthread_create(&tb, NULL, killer_target, &b);
    usleep(600000);
    double k0 = sl_clock_s();
    sl_sandbox_kill(sb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.rc == 0 && b.rc == 0 && a.r.kind == SL_EXIT_SIGNALED && a.r.sig == SIGKILL &&
              b.r.kind == SL_EXIT_SIGNALED,
          "kill() ends both running commands (kinds %d %d, %.2f s)", a.r.kind, b.r.kind,
          sl_clock_s() - k0);
    CHECK(gone("[s]leep 100[78]"), "kill() leaves nothing running");
    sl_sandbox_result_release(&a.r);
    sl_sandbox_result_release(&b.r);
    sl_sandbox_result r;
    const char *echo[] = {"echo", "still here", NULL};
    CHECK(run(echo, &r, NULL) == 0 && out_is(&r, "still here\n"), "the sandbox works after kill()");
    sl_sandbox_result_release(&r);
}

static void test_files(void)
{
    sl_err err = {0};
    const char *text = "some text\nwith lines\n";
    CHECK(sl_sandbox_upload(sb, "in/deep/a.txt", text, strlen(text), &err) == 0,
          "upload creates parent folders (%s)", esc(err.msg));
    sl_err_clear(&err);
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_sandbox_download(sb, "in/deep/a.txt", 0, &b, &err) == 0 && b.len == strlen(text) &&
              !memcmp(b.data, text, b.len),
          "download gets it back (%s)", esc(err.msg));
    sl_buf_reset(&b);
    sl_err_clear(&err);
    sl_sandbox_result r;
    const char *cat[] = {"cat", "in/deep/a.txt", NULL};
    CHECK(run(cat, &r, NULL) == 0 && out_is(&r, text), "commands see uploaded files");
    sl_sandbox_result_release(&r);
    char abs[700];
    snprintf(abs, sizeof abs, "%s/in/deep/a.txt", sl_sandbox_workspace(sb));
    CHECK(sl_sandbox_download(sb, abs, 0, &b, &err) == 0 && b.len == strlen(text),
          "absolute paths work (%s)", esc(err.msg));
    sl_buf_reset(&b);
    sl_err_clear(&err);
    CHECK(sl_sandbox_download(sb, "in/deep/a.txt", 5, &b, &err) == -1 &&
              err.code == SL_ELIMIT && has(err.msg, "over the limit of 5"),
          "download over max_bytes fails clearly (%s)", esc(err.msg));
    sl_err_clear(&err);
    CHECK(sl_sandbox_download(sb, "nope.txt", 0, &b, &err) == -1 &&
              has(err.msg, "no such file"),
          "missing file (%s)", esc(err.msg));
    sl_err_clear(&err);
    /* binary, bigger than one SFTP chunk */
    size_t n = 300000;
    char *bin = sl_xmalloc(n);
    for (size_t i = 0; i < n; i++)
        bin[i] = (char)(i * 7 + 3);
    CHECK(sl_sandbox_upload(sb, "bin.dat", bin, n, &err) == 0, "binary upload");
    sl_buf_reset(&b);
    CHECK(sl_sandbox_download(sb, "bin.dat", n, &b, &err) == 0 && b.len == n &&
              !memcmp(b.data, bin, n),
          "binary round trip, exactly at max_bytes (%s)", esc(err.msg));
    sl_err_clear(&err);
    free(bin);
    sl_buf_release(&b);

    const char *ln[] = {"sh", "-c", "ln -s bin.dat link && mkfifo pipe", NULL};
    run(ln, &r, NULL);
    sl_sandbox_result_release(&r);
    sl_value *list = NULL;
    CHECK(sl_sandbox_list(sb, "", 0, &list, &err) == 0, "list the workspace (%s)", esc(err.msg));
    char *shown = show(list);
    CHECK(has(shown, "{\"name\":\"bin.dat\",\"type\":\"file\",\"size\":300000}") &&
              has(shown, "{\"name\":\"in\",\"type\":\"dir\"") &&
              has(shown, "{\"name\":\"link\",\"type\":\"link\"") &&
              has(shown, "{\"name\":\"pipe\",\"type\":\"other\""),
          "entries with type and size (%s)", esc(shown));
    bool sorted = true;
    for (size_t i = 1; i < json_array_size(list); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(list, i - 1), "name")),
                   json_string_value(json_object_get(json_array_get(list, i), "name"))) >= 0)
            sorted = false;
    CHECK(sorted, "sorted by name");
    free(shown);
    json_decref(list);
    list = NULL;
    CHECK(sl_sandbox_list(sb, ".", 2, &list, &err) == 0 && json_array_size(list) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(list, 0), "name")),
                      "bin.dat"),
          "limit keeps the first entries by name");
    json_decref(list);
    list = NULL;
    CHECK(sl_sandbox_list(sb, "in/deep", 0, &list, &err) == 0 && json_array_size(list) == 1,
          "list a relative folder");
    json_decref(list);
    list = NULL;
    CHECK(sl_sandbox_list(sb, "missing-dir", 0, &list, &err) == -1 && has(err.msg, "missing-dir"),
          "listing a missing folder fails (%s)", esc(err.msg));
    sl_err_clear(&err);
}

static void test_binds(void)
{
    char src[700], cmd[4000], abs_bind[128], read_cmd[300], modes_cmd[300];
    snprintf(abs_bind, sizeof abs_bind, "%s/abs-bind", g_base);
    snprintf(read_cmd, sizeof read_cmd,
             "cat data/top.txt data/sub/deep.txt && data/sub/tool.sh && cat %s/top.txt", abs_bind);
    snprintf(modes_cmd, sizeof modes_cmd, "find data %s -perm /222 | wc -l", abs_bind);
    snprintf(src, sizeof src, "%s/bindsrc", g_dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/sub && echo hello >%s/top.txt && echo deep >%s/sub/deep.txt && "
             "printf '#!/bin/sh\\necho tool\\n' >%s/sub/tool.sh && chmod 755 %s/sub/tool.sh",
             src, src, src, src, src);
    CHECK(system(cmd) == 0, "bind source made");
    sl_sandbox_bind binds[] = {{src, "data"}, {src, abs_bind}};
    sl_err err = {0};
    sl_sandbox *x = NULL;
    int rc = make(settings(NULL), SL_NET_OPEN, binds, 2, &x, &err);
    CHECK(rc == 0 && x, "create with binds (%s)", esc(err.msg));
    sl_err_clear(&err);
    if (!x)
        return;
    sl_sandbox *keep = sb;
    sb = x;
    sl_sandbox_result r;
    const char *rd[] = {"sh", "-c", read_cmd, NULL};
    CHECK(run(rd, &r, NULL) == 0 && out_is(&r, "hello\ndeep\ntool\nhello\n"),
          "bound trees are copied, modes kept (%s / %s)", out_s(&r), esc(r.err.data));
    sl_sandbox_result_release(&r);
    const char *modes[] = {"sh", "-c", modes_cmd, NULL};
    CHECK(run(modes, &r, NULL) == 0 && out_is(&r, "0\n"),
          "copies are read-only (no w bits: %s)", out_s(&r));
    sl_sandbox_result_release(&r);
    if (geteuid() != 0) {
        const char *w[] = {"sh", "-c", "echo x > data/top.txt", NULL};
        CHECK(run(w, &r, NULL) == 0 && r.code != 0, "writing a bound file fails");
        sl_sandbox_result_release(&r);
    }
    char ws[600];
    snprintf(ws, sizeof ws, "%s", sl_sandbox_workspace(x));
    sb = keep;
    sl_sandbox_destroy(x);
    struct stat st;
    CHECK(stat(ws, &st) == -1 && errno == ENOENT, "destroy removes the read-only copies too");
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", abs_bind, abs_bind);
    system(cmd);

    snprintf(cmd, sizeof cmd, "ln -s top.txt %s/alink", src);
    system(cmd);
    binds[0].target = "data2";
    x = NULL;
    rc = make(settings(NULL), SL_NET_OPEN, binds, 1, &x, &err);
    CHECK(rc == -1 && !x && has(err.msg, "alink is a symbolic link"),
          "a symlink in a bound tree is refused (%s)", esc(err.msg));
    sl_err_clear(&err);
    snprintf(cmd, sizeof cmd, "%s/[0-9a-f]{16}", g_base);
    CHECK(!leftover(cmd), "no process left from failed creates");
}

static void test_timing(void)
{
    sl_sandbox_result r;
    const char *t[] = {"true", NULL};
    int ok = 0;
    double t0 = sl_clock_s();
    for (int i = 0; i < 100; i++) {
        if (run(t, &r, NULL) == 0 && r.kind == SL_EXIT_EXITED && r.code == 0)
            ok++;
        sl_sandbox_result_release(&r);
    }
    double avg = (sl_clock_s() - t0) / 100 * 1000;
    printf("# exec round trip of `true`: %.2f ms on average over 100 runs\n", avg);
    CHECK(ok == 100 && avg < 1000, "100 x true over one connection (%.2f ms each)", avg);
}

static void test_destroy(void)
{
    char ws[600], ctl[620];
    snprintf(ws, sizeof ws, "%s", sl_sandbox_workspace(sb));
    snprintf(ctl, sizeof ctl, "%s.ctl", ws);
    sl_sandbox_result r;
    /* a background process with its output elsewhere outlives its command */
    const char *bg[] = {"sh", "-c", "nohup sleep 1009 >/dev/null 2>&1 & echo started", NULL};
    CHECK(run(bg, &r, NULL) == 0 && out_is(&r, "started\n"), "a detached child starts");
    sl_sandbox_result_release(&r);
    sl_sandbox_destroy(sb);
    sb = NULL;
    struct stat st;
    CHECK(stat(ws, &st) == -1 && errno == ENOENT && stat(ctl, &st) == -1,
          "destroy removes the workspace and control folders");
    CHECK(gone("[s]leep 1009"), "destroy kills what the sandbox left running");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(g_base)) {
        printf("Bail out! mkdtemp %s: %s\n", g_base, strerror(errno));
        return 1;
    }
    int st = start_sshd();
    if (st == 1) {
        remove_base();
        return 0;
    }
    CHECK(st == 0, "sshd started on 127.0.0.1:%d (%s)", g_port, g_fp);
    if (st) {
        remove_base();
        return tap_done();
    }
    test_settings_errors();
    test_connection_errors();
    sl_err err = {0};
    int rc = make(settings(NULL), SL_NET_OPEN, NULL, 0, &sb, &err);
    CHECK(rc == 0 && sb, "create (%s)", esc(err.msg));
    sl_err_clear(&err);
    if (sb) {
        test_exec();
        test_streams_and_kills();
        test_threads();
        test_files();
        test_timing();
        test_destroy();
    }
    test_binds();
    stop_sshd();
    char pat[600];
    snprintf(pat, sizeof pat, "[s]shd.*%s", g_dir);
    CHECK(gone(pat), "sshd and its session processes are gone");
    CHECK(!leftover("[s]leep 10[0-9][0-9]"), "no test command is left running");
    struct stat sst;
    CHECK(stat(g_dir, &sst) == -1, "the sshd folder is removed");
    remove_base();
    return tap_done();
}
