/*
 * agent — the tool-calling loop and the sandbox tools (agent.h).
 *
 * Every tool runs through the sandbox provider interface (exec, upload,
 * download, list), so the same agent works on the local sandbox, an SSH
 * VM or E2B.  Commands run with bash; the working directory persists by
 * ending each command's stdout with a marker and the shell's $PWD, which
 * is cut off before the model sees the output.
 */
#include "agent/agent.h"
#include "core/clock.h"
#include "core/rand.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sl_agent_limits_init(sl_agent_limits *L)
{
    memset(L, 0, sizeof *L);
    L->max_turns = 30;
    L->command_timeout_s = 60;
    L->output_chars = 8000;
    L->head_chars = 2500;
    L->tail_chars = 2500;
    L->max_file_bytes = (size_t)10 << 20;
    L->max_command_output = (size_t)1 << 20;
}

int sl_agent_session_init(sl_agent_session *s, sl_sandbox *sb, const sl_agent_limits *L,
                          const sl_agent_io *io, sl_err *err)
{
    memset(s, 0, sizeof *s);
    char r[25];
    if (sl_rand_hex(r, 12, err))
        return -1;
    snprintf(s->mark, sizeof s->mark, "__SLUICE_CWD_%s__", r);
    s->sb = sb;
    s->L = L;
    s->io = io;
    s->cwd = sb ? sl_xstrdup(sl_sandbox_workspace(sb)) : NULL;
    if (L->timeout_s > 0)
        s->deadline = sl_clock_s() + L->timeout_s;
    return 0;
}

void sl_agent_session_release(sl_agent_session *s)
{
    free(s->cwd);
    s->cwd = NULL;
}

void sl_agent_result_release(sl_agent_result *r)
{
    free(r->text);
    json_decref(r->messages);
    memset(r, 0, sizeof *r);
}

/* ---- output for the model ---- */

/* Where the chars-th UTF-8 character of s[0..n) starts. */
static size_t utf8_offset(const char *s, size_t n, size_t chars)
{
    size_t c = 0, i = 0;
    for (; i < n; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80) {
            if (c == chars)
                return i;
            c++;
        }
    }
    return n;
}

void sl_agent_cap(const sl_agent_limits *L, const char *text, size_t len, sl_buf *out)
{
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(text ? text : "", len, &clean);
    const char *t = clean.data ? clean.data : "";
    size_t n = clean.len, chars = sl_utf8_chars(t, n);
    if (!L->output_chars || chars <= L->output_chars) {
        sl_buf_add(out, t, n);
    } else {
        size_t head = utf8_offset(t, n, L->head_chars);
        size_t tail = utf8_offset(t, n, chars - L->tail_chars);
        sl_buf_add(out, t, head);
        sl_buf_addf(out, "\n\n[… %zu characters cut: the output had %zu characters; the first "
                         "%zu and the last %zu are shown. Narrow the command (head, tail, grep) "
                         "or write the output to a file and read parts of it …]\n\n",
                    chars - L->head_chars - L->tail_chars, chars, L->head_chars, L->tail_chars);
        sl_buf_add(out, t + tail, n - tail);
    }
    sl_buf_release(&clean);
}

/* ---- running commands ---- */

static bool io_cancelled(void *ud)
{
    sl_agent_session *s = ud;
    return s->io && s->io->cancelled && s->io->cancelled(s->io->ud);
}

static double time_left(const sl_agent_session *s)
{
    return s->deadline > 0 ? s->deadline - sl_clock_s() : 1e9;
}

/* Runs argv in the sandbox, collecting both streams. */
static int run(sl_agent_session *s, const char *const *argv, double timeout,
               sl_sandbox_result *res, sl_err *err)
{
    double left = time_left(s);
    if (left <= 0)
        return sl_err_limit(err, SL_ETIMEOUT, "agent_timeout_s", "the agent's time is up");
    sl_sandbox_cmd cmd = {.argv = argv, .cwd = NULL, .timeout_s = timeout < left ? timeout : left,
                          .max_output_bytes = s->L->max_command_output,
                          .cancelled = io_cancelled, .ud = s};
    sl_sandbox_result_init(res);
    double t0 = sl_clock_s();
    int rc = sl_sandbox_exec(s->sb, &cmd, res, err);
    s->sandbox_s += sl_clock_s() - t0;
    return rc;
}

static const char *str_arg(const sl_value *args, const char *key)
{
    return json_string_value(json_object_get(args, key));
}

static bool fail(sl_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(sl_buf *out, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sl_buf_addf(out, "error: %s", msg);
    return true;
}

/* The shell's way to end a command's output with its new directory.  The
 * trap keeps the command's own exit status. */
static const char bash_script[] =
    "cd -- \"$1\" 2>/dev/null || cd -- \"$4\" || exit 1\n"
    "trap '__sl_s=$?; printf \"\\n%s%s\\n\" \"$3\" \"$PWD\"; exit $__sl_s' EXIT\n"
    "eval \"$2\"\n";

static bool tool_bash(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *command = str_arg(args, "command");
    if (!command || !*command)
        return fail(out, "bash needs a non-empty \"command\" string");
    double timeout = s->L->command_timeout_s > 0 ? s->L->command_timeout_s : 60;
    const sl_value *t = json_object_get(args, "timeout");
    if (sl_value_is_number(t) && sl_value_number(t) > 0 && sl_value_number(t) < timeout)
        timeout = sl_value_number(t);
    const char *argv[] = {"bash", "-c", bash_script, "bash", s->cwd, command, s->mark,
                          sl_sandbox_workspace(s->sb), NULL};
    sl_sandbox_result res;
    sl_err e = {0};
    if (run(s, argv, timeout, &res, &e)) {
        bool r = fail(out, "the command could not run: %s", e.msg);
        sl_err_clear(&e);
        sl_sandbox_result_release(&res);
        return r;
    }
    /* Cut the marker line (the new cwd) off the end of stdout. */
    sl_buf text;
    sl_buf_init(&text, 0);
    const char *o = res.out.data ? res.out.data : "";
    size_t on = res.out.len;
    size_t ml = strlen(s->mark);
    const char *m = NULL;
    for (const char *p = o; (p = memmem(p, on - (size_t)(p - o), s->mark, ml)); p += ml)
        m = p;
    if (m && m > o && m[-1] == '\n') {
        const char *cwd = m + ml;
        const char *end = memchr(cwd, '\n', on - (size_t)(cwd - o));
        if (end && end > cwd && cwd[0] == '/') {
            free(s->cwd);
            s->cwd = sl_xstrndup(cwd, (size_t)(end - cwd));
        }
        on = (size_t)(m - 1 - o);
    }
    sl_buf_add(&text, o, on);
    if (res.out_truncated)
        sl_buf_addf(&text, "\n[stdout was longer than %zu bytes; the rest was dropped]",
                    s->L->max_command_output);
    if (res.err.len) {
        if (text.len && text.data[text.len - 1] != '\n')
            sl_buf_addc(&text, '\n');
        sl_buf_adds(&text, "[stderr]\n");
        sl_buf_add(&text, res.err.data, res.err.len);
        if (res.err_truncated)
            sl_buf_addf(&text, "\n[stderr was longer than %zu bytes; the rest was dropped]",
                        s->L->max_command_output);
    }
    if (text.len && text.data[text.len - 1] != '\n')
        sl_buf_addc(&text, '\n');
    bool is_err = false;
    if (res.kind == SL_EXIT_EXITED) {
        sl_buf_addf(&text, "[exit code %d]", res.code);
        is_err = res.code != 0;
    } else {
        char how[200];
        sl_sandbox_result_describe(&res, how, sizeof how);
        sl_buf_addf(&text, "[the command %s]", how);
        if (res.kind == SL_EXIT_TIMEOUT)
            sl_buf_addf(&text, " (per-command limit %g s: run long jobs in the background or in "
                               "smaller steps)", timeout);
        is_err = true;
    }
    sl_agent_cap(s->L, text.data, text.len, out);
    sl_buf_release(&text);
    sl_sandbox_result_release(&res);
    return is_err;
}

static bool is_binary(const char *d, size_t n)
{
    return memchr(d, 0, n < 8192 ? n : 8192) != NULL;
}

static int download(sl_agent_session *s, const char *path, sl_buf *b, sl_buf *out)
{
    sl_err e = {0};
    double t0 = sl_clock_s();
    int rc = sl_sandbox_download(s->sb, path, s->L->max_file_bytes, b, &e);
    s->sandbox_s += sl_clock_s() - t0;
    if (rc) {
        fail(out, "%s", e.msg);
        sl_err_clear(&e);
        return -1;
    }
    return 0;
}

/* Writes a file, making its folders when they are missing. */
static int upload(sl_agent_session *s, const char *path, const char *data, size_t len,
                  sl_buf *out)
{
    sl_err e = {0};
    double t0 = sl_clock_s();
    int urc = sl_sandbox_upload(s->sb, path, data, len, &e);
    s->sandbox_s += sl_clock_s() - t0;
    if (!urc)
        return 0;
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = sl_xstrndup(path, (size_t)(slash - path));
        const char *argv[] = {"mkdir", "-p", "--", dir, NULL};
        sl_sandbox_result res;
        sl_err e2 = {0};
        int rc = run(s, argv, 30, &res, &e2);
        bool made = rc == 0 && res.kind == SL_EXIT_EXITED && res.code == 0;
        sl_sandbox_result_release(&res);
        sl_err_clear(&e2);
        free(dir);
        if (made) {
            sl_err_clear(&e);
            if (!sl_sandbox_upload(s->sb, path, data, len, &e))
                return 0;
        }
    }
    fail(out, "%s", e.msg);
    sl_err_clear(&e);
    return -1;
}

static bool tool_read(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *path = str_arg(args, "path");
    if (!path || !*path)
        return fail(out, "read_file needs a \"path\"");
    const sl_value *ov = json_object_get(args, "offset"), *lv = json_object_get(args, "limit");
    long long offset = json_is_integer(ov) ? json_integer_value(ov) : 1;
    long long limit = json_is_integer(lv) ? json_integer_value(lv) : 2000;
    if (offset < 1)
        offset = 1;
    if (limit < 1)
        limit = 2000;
    sl_buf b;
    sl_buf_init(&b, 0);
    if (download(s, path, &b, out)) {
        sl_buf_release(&b);
        return true;
    }
    const char *d = b.data ? b.data : "";
    if (is_binary(d, b.len)) {
        sl_buf_addf(out, "%s is a binary file of %zu bytes; inspect it with bash (file, xxd, "
                         "python3) instead", path, b.len);
        sl_buf_release(&b);
        return false;
    }
    sl_buf text;
    sl_buf_init(&text, 0);
    long long line = 1, shown = 0, total = 0;
    const char *p = d, *end = d + b.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        total++;
        if (line >= offset && shown < limit) {
            size_t len = (size_t)(le - p);
            bool cut = len > 2000;
            sl_buf_addf(&text, "%6lld\t", line);
            sl_buf_add(&text, p, cut ? utf8_offset(p, len, 2000) : len);
            if (cut)
                sl_buf_adds(&text, " [… line cut at 2000 characters]");
            sl_buf_addc(&text, '\n');
            shown++;
        }
        line++;
        p = nl ? nl + 1 : end;
    }
    if (!b.len)
        sl_buf_addf(&text, "(%s is empty)\n", path);
    else if (offset > total)
        sl_buf_addf(&text, "(%s has %lld lines; offset %lld is past the end)\n", path, total,
                    offset);
    else if (offset + shown - 1 < total)
        sl_buf_addf(&text, "(lines %lld–%lld of %lld; read on with offset %lld)\n", offset,
                    offset + shown - 1, total, offset + shown);
    sl_agent_cap(s->L, text.data, text.len, out);
    sl_buf_release(&text);
    sl_buf_release(&b);
    return false;
}

static bool tool_write(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *path = str_arg(args, "path");
    const sl_value *cv = json_object_get(args, "content");
    if (!path || !*path || !json_is_string(cv))
        return fail(out, "write_file needs \"path\" and \"content\" strings");
    size_t len = json_string_length(cv);
    if (upload(s, path, json_string_value(cv), len, out))
        return true;
    sl_buf_addf(out, "wrote %zu bytes to %s", len, path);
    return false;
}

static bool tool_edit(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *path = str_arg(args, "path");
    const sl_value *ov = json_object_get(args, "old_string"), *nv = json_object_get(args, "new_string");
    if (!path || !*path || !json_is_string(ov) || !json_is_string(nv))
        return fail(out, "edit_file needs \"path\", \"old_string\" and \"new_string\" strings");
    const char *old = json_string_value(ov), *neu = json_string_value(nv);
    size_t ol = json_string_length(ov), nl = json_string_length(nv);
    if (!ol)
        return fail(out, "old_string is empty; to write a whole file use write_file");
    bool all = json_is_true(json_object_get(args, "replace_all"));
    sl_buf b;
    sl_buf_init(&b, 0);
    if (download(s, path, &b, out)) {
        sl_buf_release(&b);
        return true;
    }
    const char *d = b.data ? b.data : "";
    size_t count = 0;
    for (const char *p = d; (p = memmem(p, b.len - (size_t)(p - d), old, ol)); p += ol)
        count++;
    bool bad = false;
    if (!count)
        bad = fail(out, "old_string was not found in %s; read the file and copy the text "
                        "exactly (spaces and line breaks count)", path);
    else if (count > 1 && !all)
        bad = fail(out, "old_string occurs %zu times in %s; add surrounding lines to make it "
                        "unique, or set replace_all", count, path);
    if (bad) {
        sl_buf_release(&b);
        return true;
    }
    sl_buf n;
    sl_buf_init(&n, 0);
    const char *p = d, *q;
    while ((q = memmem(p, b.len - (size_t)(p - d), old, ol))) {
        sl_buf_add(&n, p, (size_t)(q - p));
        sl_buf_add(&n, neu, nl);
        p = q + ol;
        if (!all)
            break;
    }
    sl_buf_add(&n, p, b.len - (size_t)(p - d));
    bool r = upload(s, path, n.data ? n.data : "", n.len, out) != 0;
    if (!r)
        sl_buf_addf(out, "replaced %zu occurrence%s in %s", all ? count : 1,
                    (all ? count : 1) == 1 ? "" : "s", path);
    sl_buf_release(&n);
    sl_buf_release(&b);
    return r;
}

/* Runs a helper shell line and shows its output (capped). */
static bool shell_tool(sl_agent_session *s, const char *const *argv, const char *empty,
                       sl_buf *out)
{
    sl_sandbox_result res;
    sl_err e = {0};
    if (run(s, argv, s->L->command_timeout_s > 0 ? s->L->command_timeout_s : 60, &res, &e)) {
        bool r = fail(out, "%s", e.msg);
        sl_err_clear(&e);
        sl_sandbox_result_release(&res);
        return r;
    }
    bool r = false;
    if (res.kind != SL_EXIT_EXITED || res.code > 1) {
        char how[200];
        sl_sandbox_result_describe(&res, how, sizeof how);
        r = fail(out, "%s %s: %.*s", argv[0], how, (int)(res.err.len > 2000 ? 2000 : res.err.len),
                 res.err.data ? res.err.data : "");
    } else if (!res.out.len) {
        sl_buf_adds(out, empty);
    } else {
        sl_agent_cap(s->L, res.out.data, res.out.len, out);
    }
    sl_sandbox_result_release(&res);
    return r;
}

static const char glob_script[] =
    "cd -- \"$1\" || exit 2\n"
    "shopt -s globstar nullglob dotglob extglob\n"
    "n=0\n"
    "for f in $2; do\n"
    "  n=$((n+1)); if [ $n -gt 1000 ]; then echo '[… more than 1000 matches; narrow the "
    "pattern]'; break; fi\n"
    "  if [ -d \"$f\" ]; then printf '%s/\\n' \"$f\"; else printf '%s\\n' \"$f\"; fi\n"
    "done\n";

static bool tool_list(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *path = str_arg(args, "path");
    const char *pattern = str_arg(args, "pattern");
    if (!path || !*path)
        path = ".";
    if (pattern && *pattern) {
        char *dir = path[0] == '/' ? sl_xstrdup(path)
                                   : sl_xasprintf("%s/%s", sl_sandbox_workspace(s->sb), path);
        const char *argv[] = {"bash", "-c", glob_script, "bash", dir, pattern, NULL};
        bool r = shell_tool(s, argv, "(no paths match)", out);
        free(dir);
        return r;
    }
    sl_value *list = NULL;
    sl_err e = {0};
    double t0 = sl_clock_s();
    int lrc = sl_sandbox_list(s->sb, path, 1001, &list, &e);
    s->sandbox_s += sl_clock_s() - t0;
    if (lrc) {
        bool r = fail(out, "%s", e.msg);
        sl_err_clear(&e);
        return r;
    }
    sl_buf text;
    sl_buf_init(&text, 0);
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n && i < 1000; i++) {
        const sl_value *it = json_array_get(list, i);
        const char *name = str_arg(it, "name"), *type = str_arg(it, "type");
        if (type && !strcmp(type, "dir"))
            sl_buf_addf(&text, "%s/\n", name);
        else if (type && !strcmp(type, "file"))
            sl_buf_addf(&text, "%s  (%lld bytes)\n", name,
                        (long long)json_integer_value(json_object_get(it, "size")));
        else
            sl_buf_addf(&text, "%s  (%s)\n", name, type ? type : "?");
    }
    if (n > 1000)
        sl_buf_adds(&text, "[… more than 1000 entries; use a pattern]\n");
    if (!n)
        sl_buf_addf(&text, "(%s is empty)\n", path);
    sl_agent_cap(s->L, text.data, text.len, out);
    sl_buf_release(&text);
    json_decref(list);
    return false;
}

static const char grep_script[] =
    "cd -- \"$1\" || exit 2\n"
    "set -- \"$2\" \"$3\" \"$4\" \"$5\"\n"
    "opts=-rnIE\n"
    "[ \"$3\" = 1 ] && opts=-rnIEi\n"
    "if [ -n \"$4\" ]; then grep $opts --color=never --include=\"$4\" -e \"$1\" -- \"$2\"\n"
    "else grep $opts --color=never -e \"$1\" -- \"$2\"; fi | head -n 500\n"
    "exit ${PIPESTATUS[0]}\n";

static bool tool_grep(sl_agent_session *s, const sl_value *args, sl_buf *out)
{
    const char *pattern = str_arg(args, "pattern");
    if (!pattern || !*pattern)
        return fail(out, "grep needs a \"pattern\" (an extended regular expression)");
    const char *path = str_arg(args, "path");
    const char *glob = str_arg(args, "glob");
    bool icase = json_is_true(json_object_get(args, "ignore_case"));
    const char *argv[] = {"bash", "-c", grep_script, "bash", sl_sandbox_workspace(s->sb), pattern,
                          path && *path ? path : ".", icase ? "1" : "0", glob ? glob : "",
                          NULL};
    return shell_tool(s, argv, "(no matches)", out);
}

bool sl_agent_tool(sl_agent_session *s, const char *name, const sl_value *args, sl_buf *out)
{
    sl_value *empty = NULL;
    if (!json_is_object(args))
        args = empty = json_object();
    bool r;
    if (!strcmp(name, "bash"))
        r = tool_bash(s, args, out);
    else if (!strcmp(name, "read_file"))
        r = tool_read(s, args, out);
    else if (!strcmp(name, "write_file"))
        r = tool_write(s, args, out);
    else if (!strcmp(name, "edit_file"))
        r = tool_edit(s, args, out);
    else if (!strcmp(name, "list_files"))
        r = tool_list(s, args, out);
    else if (!strcmp(name, "grep"))
        r = tool_grep(s, args, out);
    else
        r = fail(out, "there is no tool named '%s'; the tools are bash, read_file, write_file, "
                      "edit_file, list_files and grep", name);
    json_decref(empty);
    return r;
}

sl_value *sl_agent_tools(void)
{
    static const char *const json =
        "[{\"name\":\"bash\",\"description\":\"Run a bash command line in the sandbox and get "
        "its stdout, stderr and exit code. The working directory persists between calls (cd "
        "sticks). Long output is cut in the middle.\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"command\":{\"type\":\"string\",\"description\":\"the command line\"},"
        "\"timeout\":{\"type\":\"number\",\"description\":\"seconds before the command is "
        "killed (capped by the app's limit)\"}},\"required\":[\"command\"]}},"
        "{\"name\":\"read_file\",\"description\":\"Read a text file; lines come numbered. Use "
        "offset and limit for long files.\",\"parameters\":{\"type\":\"object\",\"properties\":"
        "{\"path\":{\"type\":\"string\"},\"offset\":{\"type\":\"integer\",\"description\":\"first "
        "line, from 1\"},\"limit\":{\"type\":\"integer\",\"description\":\"number of lines "
        "(2000)\"}},\"required\":[\"path\"]}},"
        "{\"name\":\"write_file\",\"description\":\"Create or replace a file with the given "
        "content; folders are made as needed.\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},"
        "\"required\":[\"path\",\"content\"]}},"
        "{\"name\":\"edit_file\",\"description\":\"Replace old_string by new_string in a file. "
        "old_string must occur exactly once unless replace_all is true.\",\"parameters\":"
        "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"old_string\":"
        "{\"type\":\"string\"},\"new_string\":{\"type\":\"string\"},\"replace_all\":{\"type\":"
        "\"boolean\"}},\"required\":[\"path\",\"old_string\",\"new_string\"]}},"
        "{\"name\":\"list_files\",\"description\":\"List a folder, or with pattern the paths "
        "matching a glob such as **/*.py.\",\"parameters\":{\"type\":\"object\",\"properties\":"
        "{\"path\":{\"type\":\"string\",\"description\":\"folder (default: the workspace)\"},"
        "\"pattern\":{\"type\":\"string\"}}}},"
        "{\"name\":\"grep\",\"description\":\"Search files for lines matching an extended "
        "regular expression; prints file:line:text.\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"pattern\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},"
        "\"glob\":{\"type\":\"string\",\"description\":\"only files whose name matches, e.g. "
        "*.py\"},\"ignore_case\":{\"type\":\"boolean\"}},\"required\":[\"pattern\"]}}]";
    return json_loads(json, 0, NULL);
}

bool sl_agent_has_tool(const sl_value *tools, const char *name)
{
    size_t i;
    const sl_value *t;
    json_array_foreach(tools, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && name && !strcmp(n, name))
            return true;
    }
    return false;
}

/* ---- the loop ---- */

static void log_step(sl_agent_session *s, sl_value *step)
{
    if (s->io->log)
        s->io->log(s->io->ud, step);
    json_decref(step);
}

int sl_agent_run(sl_agent_session *s, const char *system, const sl_value *user,
                 sl_agent_result *res, sl_err *err)
{
    memset(res, 0, sizeof *res);
    const sl_agent_limits *L = s->L;
    sl_value *msgs = json_array();
    res->messages = msgs;
    json_array_append_new(msgs, json_pack("{s:s,s:O}", "role", "user", "content", user));
    sl_value *tools = s->sb ? sl_agent_tools() : json_array();
    if (s->io->tools)
        json_array_extend(tools, (sl_value *)s->io->tools);
    int rc = 0;
    for (;;) {
        if (io_cancelled(s)) {
            rc = sl_err_set(err, SL_ECANCELED, "the agent was stopped");
            break;
        }
        if (time_left(s) <= 0) {
            rc = sl_err_limit(err, SL_ETIMEOUT, "agent_timeout_s", "the agent ran out of time "
                              "after %d turns (limit %g s)", res->turns, L->timeout_s);
            break;
        }
        if (res->turns >= L->max_turns) {
            rc = sl_err_limit(err, SL_ELIMIT, "agent_max_turns", "the agent used its %d turns "
                              "without a final answer", L->max_turns);
            break;
        }
        sl_value *req = json_pack("{s:s,s:O,s:O}", "system", system ? system : "", "messages",
                                  msgs, "tools", tools);
        sl_value *resp = NULL;
        double t0 = sl_clock_s();
        int crc = s->io->call(s->io->ud, req, &resp);
        s->model_s += sl_clock_s() - t0;
        json_decref(req);
        res->turns++;
        if (crc) {
            rc = sl_err_set(err, SL_ENODE, "the model call failed");
            break;
        }
        const sl_value *usage = json_object_get(resp, "usage");
        res->tokens += json_integer_value(json_object_get(usage, "total_tokens"));
        const char *text = str_arg(resp, "text");
        const sl_value *calls = json_object_get(resp, "tool_calls");
        size_t ncalls = json_array_size(calls);
        char round_id[32];
        snprintf(round_id, sizeof round_id, "round-%d", res->turns);
        log_step(s, json_pack("{s:s,s:s,s:n,s:s,s:{s:s,s:O?},s:{s:f,s:I}}", "id", round_id,
                              "label", ncalls ? "ROUND" : "ROUND (final answer)", "parent_id",
                              "status", "success", "data", "text", text ? text : "",
                              "tool_calls", calls, "metadata", "elapsed_time", sl_clock_s() - t0,
                              "total_tokens", (json_int_t)res->tokens));
        sl_value *am = json_pack("{s:s,s:s}", "role", "assistant", "content", text ? text : "");
        if (ncalls)
            json_object_set(am, "tool_calls", (sl_value *)calls);
        json_array_append_new(msgs, am);
        if (!ncalls) {
            res->text = sl_xstrdup(text ? text : "");
            json_decref(resp);
            break;
        }
        for (size_t i = 0; i < ncalls; i++) {
            const sl_value *c = json_array_get(calls, i);
            const char *id = str_arg(c, "id"), *name = str_arg(c, "name");
            const char *atext = str_arg(c, "arguments");
            sl_value *args = NULL;
            sl_buf out;
            sl_buf_init(&out, 0);
            bool is_err;
            double t1 = sl_clock_s();
            if (json_is_object(json_object_get(c, "arguments")))
                args = json_incref(json_object_get(c, "arguments"));
            else if (atext && *atext)
                args = json_loads(atext, 0, NULL);
            else
                args = json_object();
            if (!json_is_object(args) || json_object_get(c, "arguments_error")) {
                is_err = fail(&out, "the arguments of this %s call are not a JSON object; send "
                                    "them again as valid JSON", name ? name : "tool");
            } else if (s->io->tool && sl_agent_has_tool(s->io->tools, name)) {
                sl_buf raw;
                sl_buf_init(&raw, 0);
                is_err = s->io->tool(s->io->ud, name, args, &raw);
                sl_agent_cap(L, raw.data ? raw.data : "", raw.len, &out);
                sl_buf_release(&raw);
            } else if (s->sb) {
                is_err = sl_agent_tool(s, name ? name : "", args, &out);
            } else {
                is_err = fail(&out, "there is no tool named '%s'", name ? name : "");
            }
            res->tool_calls++;
            char step_id[80];
            snprintf(step_id, sizeof step_id, "%s-call-%zu", round_id, i + 1);
            char label[96];
            snprintf(label, sizeof label, "CALL %s", name ? name : "?");
            log_step(s, json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:O?,s:s%},s:{s:f}}", "id", step_id,
                                  "label", label, "parent_id", round_id, "status",
                                  is_err ? "error" : "success", "data", "tool_name",
                                  name ? name : "", "tool_input", args, "output",
                                  out.data ? out.data : "", out.len, "metadata", "elapsed_time",
                                  sl_clock_s() - t1));
            json_decref(args);
            json_array_append_new(msgs, json_pack("{s:s,s:s,s:s%}", "role", "tool",
                                                  "tool_call_id", id ? id : "", "content",
                                                  out.data ? out.data : "", out.len));
            sl_buf_release(&out);
            if (io_cancelled(s))
                break;
        }
        json_decref(resp);
        if (L->max_tokens > 0 && res->tokens > L->max_tokens) {
            rc = sl_err_limit(err, SL_ELIMIT, "agent_max_tokens",
                              "the agent used %lld tokens, over its limit of %lld", res->tokens,
                              L->max_tokens);
            break;
        }
    }
    json_decref(tools);
    return rc;
}
