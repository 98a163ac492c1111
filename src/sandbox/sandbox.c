/*
 * sandbox — provider dispatch and the small shared helpers (sandbox.h).
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "sandbox/e2b.h"
#include "sandbox/ssh.h"
#include "sandbox/local/local.h"

void sl_sandbox_opts_init(sl_sandbox_opts *o)
{
    memset(o, 0, sizeof *o);
    o->provider = "local";
    o->net = SL_NET_NONE;
    o->memory_bytes = (uint64_t)1 << 30;
    o->max_procs = 512;
    o->disk_bytes = (uint64_t)1 << 30;
    o->cpu_seconds = 600;
    o->max_open_files = 1024;
    o->max_file_bytes = (uint64_t)1 << 30;
}

void sl_sandbox_result_init(sl_sandbox_result *r)
{
    memset(r, 0, sizeof *r);
    sl_buf_init(&r->out, 0);
    sl_buf_init(&r->err, 0);
}

void sl_sandbox_result_release(sl_sandbox_result *r)
{
    sl_buf_release(&r->out);
    sl_buf_release(&r->err);
}

int sl_sandbox_result_code(const sl_sandbox_result *r)
{
    switch (r->kind) {
    case SL_EXIT_EXITED:
        return r->code;
    case SL_EXIT_SIGNALED:
        return 128 + r->sig;
    case SL_EXIT_TIMEOUT:
        return 124;
    case SL_EXIT_LIMIT:
        return 137;
    case SL_EXIT_CANCELED:
        return 130;
    }
    return 1;
}

void sl_sandbox_result_describe(const sl_sandbox_result *r, char *out, size_t n)
{
    switch (r->kind) {
    case SL_EXIT_EXITED:
        snprintf(out, n, "exited with %d", r->code);
        break;
    case SL_EXIT_SIGNALED:
        snprintf(out, n, "was killed by signal %d (%s)", r->sig, strsignal(r->sig));
        break;
    case SL_EXIT_TIMEOUT:
        snprintf(out, n, "timed out after %.1f s and was killed", r->seconds);
        break;
    case SL_EXIT_LIMIT:
        snprintf(out, n, "was killed: it went over the %s limit", r->limit);
        break;
    case SL_EXIT_CANCELED:
        snprintf(out, n, "was cancelled");
        break;
    }
}

int sl_sandbox_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err)
{
    static atomic_ullong serials;
    const char *p = o->provider ? o->provider : "local";
    int rc = !strcmp(p, "local") ? sl_local_create(o, out, err)
             : !strcmp(p, "e2b") ? sl_e2b_create(o, out, err)
             : !strcmp(p, "ssh") ? sl_ssh_create(o, out, err)
                                 : sl_err_set(err, SL_EINVAL, "unknown sandbox provider '%s' "
                                              "(known: local, ssh, e2b)", p);
    if (!rc)
        (*out)->serial = atomic_fetch_add(&serials, 1) + 1;
    return rc;
}

int sl_sandbox_run(const sl_sandbox_opts *o, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                   sl_err *err)
{
    if (!o->provider || !strcmp(o->provider, "local"))
        return sl_local_run(o, cmd, res, err);
    sl_sandbox *sb;
    if (sl_sandbox_create(o, &sb, err))
        return -1;
    sl_sandbox_cmd last = *cmd;
    last.last = true;
    int rc = sl_sandbox_exec(sb, &last, res, err);
    sl_sandbox_destroy(sb);
    return rc;
}

unsigned long long sl_sandbox_serial(const sl_sandbox *sb)
{
    return sb ? sb->serial : 0;
}

int sl_sandbox_exec(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                    sl_err *err)
{
    return sb->ops->exec(sb, cmd, res, err);
}

void sl_sandbox_kill(sl_sandbox *sb)
{
    sb->ops->kill(sb);
}

int sl_sandbox_upload(sl_sandbox *sb, const char *path, const void *data, size_t len,
                      sl_err *err)
{
    return sb->ops->upload(sb, path, data, len, err);
}

int sl_sandbox_download(sl_sandbox *sb, const char *path, size_t max_bytes, sl_buf *out,
                        sl_err *err)
{
    return sb->ops->download(sb, path, max_bytes, out, err);
}

int sl_sandbox_list(sl_sandbox *sb, const char *dir, size_t limit, sl_value **out, sl_err *err)
{
    return sb->ops->list(sb, dir, limit, out, err);
}

int sl_sandbox_spawn(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_proc **out,
                     int *in_fd, int *out_fd, sl_err *err)
{
    *out = NULL;
    *in_fd = *out_fd = -1;
    if (!sb->ops->spawn)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "sandbox: the %s provider cannot keep a process running with pipes "
                          "to it (as an MCP stdio server needs); use the local provider "
                          "(sandbox: {provider: local} in sluice.yml or the app's "
                          "sluice.sandbox)",
                          sb->ops->name);
    if (!cmd->argv || !cmd->argv[0])
        return sl_err_set(err, SL_EINVAL, "sandbox spawn: no command given");
    return sb->ops->spawn(sb, cmd, out, in_fd, out_fd, err);
}

bool sl_sandbox_proc_running(sl_sandbox_proc *p, sl_sandbox_result *res)
{
    return !p->ops->wait(p, 0, res);
}

bool sl_sandbox_proc_wait(sl_sandbox_proc *p, double timeout_s, sl_sandbox_result *res)
{
    return p->ops->wait(p, timeout_s, res);
}

const char *sl_sandbox_proc_stderr(sl_sandbox_proc *p)
{
    return p->ops->stderr_text(p);
}

void sl_sandbox_proc_free(sl_sandbox_proc *p)
{
    if (p)
        p->ops->free(p);
}

const char *sl_sandbox_provider(const sl_sandbox *sb)
{
    return sb->ops->name;
}

const char *sl_sandbox_workspace(const sl_sandbox *sb)
{
    return sb->workspace ? sb->workspace : "/workspace";
}

void sl_sandbox_destroy(sl_sandbox *sb)
{
    if (sb)
        sb->ops->destroy(sb);
}

int sl_net_parse(const char *text, sl_net_mode *mode, const char **allow, sl_err *err)
{
    *allow = NULL;
    if (!strcmp(text, "none")) {
        *mode = SL_NET_NONE;
        return 0;
    }
    if (!strcmp(text, "open")) {
        *mode = SL_NET_OPEN;
        return 0;
    }
    if (!strncmp(text, "allow=", 6) && text[6]) {
        *mode = SL_NET_ALLOW;
        *allow = text + 6;
        return 0;
    }
    return sl_err_set(err, SL_EINVAL,
                      "bad network policy '%s': use none, open, or allow=HOST[,HOST...] "
                      "(e.g. allow=pypi.org,*.pythonhosted.org)",
                      text);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(sl_value *const *)a, "name")),
                  json_string_value(json_object_get(*(sl_value *const *)b, "name")));
}

sl_value *sl_sandbox_list_done(sl_value **items, size_t n, size_t limit)
{
    if (n)
        qsort(items, n, sizeof *items, by_name);
    sl_value *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (!limit || i < limit)
            json_array_append_new(arr, items[i]);
        else
            json_decref(items[i]);
    }
    free(items);
    return arr;
}
