/*
 * command — Dify's command node: a shell command in the run's sandbox.
 *
 * Fields: command and working_directory, both text with {{#…#}}
 * references.  The command runs as `sh -lc COMMAND` in the working
 * directory (relative paths are inside the workspace; empty means the
 * workspace itself), for at most command_timeout_s (Dify: 60 s), with
 * stdout and stderr each capped at sandbox_output_bytes.  Files it writes
 * stay for the rest of the run.
 *
 * Outputs stdout, stderr and exit_code.  A non-zero exit fails the node
 * (error type CommandExecutionError), so retries and error strategies
 * apply; the outputs are still published in process_data for people to
 * read.
 */
#include <stdio.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "sandbox/sandbox.h"
#include "engine/node.h"

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = 0;
    const sl_value *cmd = json_object_get(d, "command");
    if (!json_is_string(cmd) || !json_string_length(cmd)) {
        sl_check_error(c, n, d, "command", "command", "the node has no command to run");
        bad = 1;
    } else {
        bad |= sl_check_text_refs(c, n, d, "command", "command") < 0;
    }
    const sl_value *wd = json_object_get(d, "working_directory");
    if (wd && !json_is_null(wd) && !json_is_string(wd)) {
        sl_check_error(c, n, d, "working_directory", "working_directory",
                       "must be text (a folder inside the sandbox)");
        bad = 1;
    } else if (json_is_string(wd)) {
        bad |= sl_check_text_refs(c, n, d, "working_directory", "working_directory") < 0;
    }
    return bad ? -1 : 0;
}

static bool exec_cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

/* Output as text: bytes that are not UTF-8 become U+FFFD, as Python's
 * decode(errors="replace") makes them. */
static sl_value *text_of(const sl_buf *b)
{
    const char *s = b->data ? b->data : "";
    if (sl_utf8_valid(s, b->len))
        return json_stringn(s, b->len);
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(s, b->len, &clean);
    sl_value *v = json_stringn(clean.data ? clean.data : "", clean.len);
    sl_buf_release(&clean);
    return v;
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const struct sl_limits *L = sl_exec_limits(x);
    sl_buf cmd, wd;
    sl_buf_init(&cmd, 0);
    sl_buf_init(&wd, 4096);
    int rc = -1;
    sl_err err = {0};
    sl_sandbox_result res;
    sl_sandbox_result_init(&res);
    if (sl_exec_render(x, json_string_value(json_object_get(d, "command")), &cmd) ||
        sl_exec_render(x, json_string_value(json_object_get(d, "working_directory"))
                              ? json_string_value(json_object_get(d, "working_directory"))
                              : "",
                       &wd)) {
        rc = sl_exec_fail(x, "CommandExecutionError", "the command or working directory could "
                          "not be rendered");
        goto out;
    }
    if (wd.toobig || memchr(wd.data ? wd.data : "", 0, wd.len)) {
        rc = sl_exec_fail(x, "CommandExecutionError", "the working directory is not a usable path");
        goto out;
    }
    sl_exec_input(x, "command", text_of(&cmd));
    sl_exec_input(x, "working_directory", text_of(&wd));
    sl_sandbox *sb = sl_exec_sandbox(x, &err);
    if (!sb) {
        rc = sl_exec_fail(x, "CommandExecutionError", "the command could not run: %s", err.msg);
        goto out;
    }
    const char *argv[] = {"sh", "-lc", cmd.data ? cmd.data : "", NULL};
    double left = sl_exec_time_left(x);
    double timeout =
        L->command_timeout_s > 0 && L->command_timeout_s < left ? L->command_timeout_s : left;
    sl_sandbox_cmd c = {.argv = argv,
                        .cwd = wd.len ? wd.data : NULL,
                        .timeout_s = timeout,
                        .max_output_bytes = L->sandbox_output_bytes,
                        .cancelled = exec_cancelled,
                        .ud = x};
    if (sl_sandbox_exec(sb, &c, &res, &err)) {
        rc = sl_exec_fail(x, "CommandExecutionError", "the command could not run: %s", err.msg);
        goto out;
    }
    int code = sl_sandbox_result_code(&res);
    sl_exec_process(x, "stdout", text_of(&res.out));
    sl_exec_process(x, "stderr", text_of(&res.err));
    sl_exec_process(x, "exit_code", json_integer(code));
    char what[256];
    sl_sandbox_result_describe(&res, what, sizeof what);
    switch (res.kind) {
    case SL_EXIT_TIMEOUT:
        rc = sl_exec_fail(x, "CommandExecutionError",
                          "the command %s (limit command_timeout_s=%g)", what, timeout);
        goto out;
    case SL_EXIT_LIMIT:
        rc = sl_exec_fail(x, "CommandExecutionError", "the command %s%s", what,
                          res.hit == SL_SBLIMIT_OUTPUT   ? " (sandbox_output_bytes)"
                          : res.hit == SL_SBLIMIT_MEMORY ? " (sandbox_memory_bytes)"
                                                         : "");
        goto out;
    case SL_EXIT_CANCELED:
        rc = sl_exec_fail(x, "CommandExecutionError", "the run was stopped while the command ran");
        goto out;
    default:
        break;
    }
    if (code != 0) {
        /* the end of stderr usually says why */
        const char *e = res.err.data ? res.err.data : "";
        size_t n = res.err.len;
        while (n && (e[n - 1] == '\n' || e[n - 1] == ' '))
            n--;
        size_t from = n > L->command_error_bytes ? n - L->command_error_bytes : 0;
        rc = sl_exec_fail(x, "CommandExecutionError", "the command %s%s%.*s%s%s", what,
                          n ? ": " : "", (int)(n - from), e + from, res.note[0] ? "; " : "",
                          res.note);
        goto out;
    }
    sl_exec_output(x, "stdout", text_of(&res.out));
    sl_exec_output(x, "stderr", text_of(&res.err));
    sl_exec_output(x, "exit_code", json_integer(code));
    rc = 0;
out:
    sl_err_clear(&err);
    sl_sandbox_result_release(&res);
    sl_buf_release(&cmd);
    sl_buf_release(&wd);
    return rc;
}

const sl_node_kind sl_kind_command = {.type = "command", .check = check, .run = run};
