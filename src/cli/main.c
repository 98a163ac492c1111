/*
 * sluice — the command line: run, validate and export Dify workflows.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/file.h"
#include "core/mime.h"
#include "core/opt.h"
#include "core/rand.h"
#include "dsl/bundle.h"
#include "dsl/dsl.h"
#include "engine/run.h"
#include "engine/config.h"
#include "extract/isolate.h"
#include "knowledge/kb.h"
#include "llm/llm.h"
#include "cli/cli.h"
#include "cli/term.h"
#include "nodes/registry.h"
#include "store/store.h"
#include "tmpl/jinja.h"

#define SLUICE_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_PARTIAL = 3, EXIT_STOPPED = 130 };

/* ---- usage and each command's option table ---- */

static const char usage_head[] =
    "usage: sluice <command> [options]\n"
    "\n"
    "Runs Dify workflow files (DSL 0.1.0 to 0.6.0, modes workflow and advanced-chat).\n"
    "\n"
    "commands:\n";

static const char usage_foot[] =
    "\n"
    "  sluice <command> --help   shows a command's options\n"
    "  sluice --version          prints the version\n";

/* After the registry's list of node types: what the list cannot say. */
static const char usage_types_notes[] =
    "code and command run in a local sandbox; llm, parameter-extractor and\n"
    "question-classifier use OpenAI-style and Anthropic endpoints (docs/llm.md);\n"
    "template-transform is Jinja2 (docs/jinja.md); agent is a model working in the\n"
    "run's sandbox with bash, file tools and the app's skills (docs/agent.md);\n"
    "tool calls the tools bound in sluice.yml or the server (docs/tools.md);\n"
    "document-extractor reads files in a confined process (docs/documents.md);\n"
    "knowledge-retrieval searches the knowledge bases of the store (--data) or\n"
    "External Knowledge API services, bound in sluice.yml (docs/knowledge.md).\n"
    "Files using other types (human-input, ...) are refused when loaded,\n"
    "naming each such node.\n";

enum {
    O_INPUT = 1, O_INPUTS, O_QUERY, O_CONVERSATION, O_HISTORY, O_ENV, O_LIMIT, O_CONFIG,
    O_RECORD, O_REPLAY, O_NET, O_APP_DIR, O_OUT, O_JSON, O_EVENTS, O_QUIET, O_STRICT,
    O_OUTFILE, O_SECRETS, O_CONTEXT, O_REPEAT, O_DATA,
};

static const sl_opt run_opts[] = {
    {"--input", NULL, "NAME=VALUE",
     "a start input (repeatable); VALUE is text and is converted\n"
     "to the input's declared type; NAME=@PATH reads the text\n"
     "from a file, or passes the file itself to file inputs", O_INPUT},
    {"--inputs", NULL, "JSON|@FILE", "all inputs as a JSON object (inline or from a file)",
     O_INPUTS},
    {"--query", NULL, "TEXT", "the user's message (sys.query) for advanced-chat apps", O_QUERY},
    {"--conversation", NULL, "JSON", "conversation variable values as a JSON object",
     O_CONVERSATION},
    {"--history", NULL, "JSON|@FILE",
     "earlier turns of the chat, [{\"query\", \"answer\"}] oldest\n"
     "first, for LLM nodes with memory", O_HISTORY},
    {"--env", NULL, "NAME=VALUE", "override an environment variable of the workflow", O_ENV},
    {"--limit", NULL, "NAME=VALUE",
     "override a limit (see `sluice limits`), e.g. max_steps=1000;\n"
     "SLUICE_<NAME> environment variables work too", O_LIMIT},
    {"--config", NULL, "FILE",
     "model providers and prices (default $SLUICE_CONFIG, else\n"
     "./sluice.yml; environment variables such as\n"
     "OPENAI_API_KEY work too; see docs/llm.md)", O_CONFIG},
    {"--record", NULL, "FILE", "append every model exchange to FILE (JSON lines)", O_RECORD},
    {"--replay", NULL, "FILE",
     "answer model calls from FILE, with no network; a call\n"
     "that was not recorded fails", O_REPLAY},
    {"--net", NULL, "POLICY",
     "network of the sandbox code and command nodes run in:\n"
     "none (default), allow=HOST,... (HTTP(S) through sluice's\n"
     "proxy to listed hosts; *.example.org wildcards), or open", O_NET},
    {"--app-dir", NULL, "DIR",
     "the app's files (skills/ …) for a .yml app in the sandboxed\n"
     "runtime (a .zip bundle carries its own)", O_APP_DIR},
    {"--out", NULL, "DIR",
     "write the files the run made (agent artifacts in the\n"
     "outputs) to DIR, by their names", O_OUT},
    {"--data", "--store", "DIR|URL",
     "the store whose knowledge bases knowledge-retrieval nodes\n"
     "search (default $SLUICE_STORE, else $SLUICE_DATA, else\n"
     "./sluice-data)", O_DATA},
    {"--json", NULL, NULL, "print the result as one JSON object", O_JSON},
    {"--events", NULL, NULL, "print every run event as a JSON line on stdout", O_EVENTS},
    {"--quiet", "-q", NULL, "no progress on stderr", O_QUIET},
    {0},
};

static const sl_optspec run_spec = {
    "sluice run",
    "usage: sluice run FILE [options]\n"
    "\n"
    "Runs the workflow in FILE: a DSL .yml ('-' reads standard input) or a .zip app\n"
    "bundle (the DSL and the app's files).  Progress goes to stderr, outputs to stdout.\n"
    "\n"
    "options:\n",
    run_opts,
    "\n"
    "exit status: 0 succeeded, 1 failed, 2 bad usage / invalid workflow / bad inputs,\n"
    "3 partial-succeeded (some node ended in exception), 130 stopped (Ctrl-C).\n",
    false,
};

static const sl_opt validate_opts[] = {
    {"--quiet", "-q", NULL, "print only problems (no warnings, no OK lines)", O_QUIET},
    {"--strict", NULL, NULL, "this machine's configuration problems are errors too", O_STRICT},
    {0},
};

static const sl_optspec validate_spec = {
    "sluice validate",
    "usage: sluice validate FILE…\n"
    "\n"
    "Loads and checks each file: YAML syntax, DSL version and mode, node types (a type\n"
    "sluice does not run yet is an error naming it), edges, start node, cycles,\n"
    "selectors and node fields.  Prints 'FILE: OK' or every problem with\n"
    "file:line:col, node id and title, and field.  Exit status 0 when all are valid,\n"
    "1 when any is not, 2 on bad usage.  What depends on this machine rather than on\n"
    "the file (a model provider not configured) is a warning; `sluice run` refuses it.\n"
    "\n"
    "options:\n",
    validate_opts,
    NULL,
    false,
};

static const sl_opt export_opts[] = {
    {"-o", NULL, "OUT", "write to OUT (a .zip name makes a bundle), not stdout", O_OUTFILE},
    {"--app-dir", NULL, "DIR", "the app's files (skills/ …) to bundle with a .yml app",
     O_APP_DIR},
    {"--include-secrets", NULL, NULL, "keep secret environment variables' values", O_SECRETS},
    {0},
};

static const sl_optspec export_spec = {
    "sluice export",
    "usage: sluice export FILE [-o OUT] [--app-dir DIR] [--include-secrets]\n"
    "\n"
    "Loads FILE (.yml or .zip) and writes it back.  A classic app becomes YAML (to\n"
    "stdout, or OUT); a sandboxed app (sluice.runtime: sandboxed), an app with files\n"
    "(--app-dir, or a .zip) or an OUT ending in .zip becomes a .zip bundle: the DSL,\n"
    "manifest.json and the app's files.  Canvas notes are dropped and secret\n"
    "environment variables emptied unless --include-secrets.  Importing the export\n"
    "gives the same graph (and files).\n"
    "\n"
    "options:\n",
    export_opts,
    NULL,
    false,
};

static const sl_opt limits_opts[] = {{0}};

static const sl_optspec limits_spec = {
    "sluice limits",
    "usage: sluice limits\n"
    "\n"
    "Lists every limit, its default (or the value set through SLUICE_<NAME>\n"
    "environment variables) and what it bounds.  Override one for a run with\n"
    "`sluice run FILE --limit NAME=VALUE`.\n",
    limits_opts,
    NULL,
    false,
};

static const sl_opt render_opts[] = {
    {"--context", NULL, "JSON|@FILE", "the variables: a JSON object, inline or from a file",
     O_CONTEXT},
    {"--limit", NULL, "NAME=N",
     "max_output_chars (400000, Dify's), max_loop_iterations\n"
     "(1000000), max_depth (100, macro and recursive-loop\n"
     "nesting), template_max_bytes (64m: memory the template's\n"
     "values may hold; 0: no limit) or max_time_s (1200:\n"
     "seconds for all renders); repeatable;\n"
     "SLUICE_TEMPLATE_MAX_BYTES and SLUICE_MAX_TIME_S set the\n"
     "last two too", O_LIMIT},
    {"--repeat", NULL, "N", "render N times (timing) and print the last", O_REPEAT},
    {0},
};

static const sl_optspec render_spec = {
    "sluice render",
    "usage: sluice render FILE|- [--context JSON|@FILE] [--limit NAME=N] [--repeat N]\n"
    "\n"
    "Renders a Jinja2 template (FILE, or standard input for -) the way a\n"
    "template-transform node does, and prints exactly the rendered text.\n",
    render_opts,
    "exit status: 0 rendered, 1 template or render error (on stderr), 2 bad usage.\n",
    false,
};

static void print_diag(const sl_diag *d, bool quiet)
{
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i].warning && quiet)
            continue;
        fprintf(stderr, "%s%s\n", d->v[i].warning ? "warning: " : "error: ", d->v[i].msg);
    }
}

/* ---- run ---- */

static sl_run *volatile current_run;

static void on_sigint(int sig)
{
    (void)sig;
    if (current_run)
        sl_run_cancel(current_run);
}

typedef struct {
    bool quiet, events;
    bool stream_answer; /* chatflow without --json/--events: answer text as it comes */
    bool answered;      /* something was streamed */
    const char *run_id;
    sl_value *containers; /* container execution id -> [rounds, last line time] */
} progress;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    progress *p = ud;
    if (p->events) {
        /* The shape of Dify's stream chunks: event, workflow_run_id, data. */
        sl_value *line = json_pack("{s:s,s:s,s:O}", "event", event, "workflow_run_id",
                                   p->run_id ? p->run_id : "", "data", (sl_value *)data);
        char *s = json_dumps(line, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (s) {
            fputs(s, stdout);
            fputc('\n', stdout);
            fflush(stdout);
        }
        free(s);
        json_decref(line);
    }
    if (p->stream_answer && !strcmp(event, "text_chunk")) {
        const char *t = json_string_value(json_object_get(data, "text"));
        if (t && *t) {
            sl_term_puts(stdout, t);
            fflush(stdout);
            p->answered = true;
        }
    }
    if (p->quiet)
        return;
    /* Nodes inside iterations and loops would flood the terminal; their
     * containers report progress per item/round instead. */
    if ((!strncmp(event, "node_", 5)) &&
        (json_object_get(data, "iteration_id") || json_object_get(data, "loop_id")))
        return;
    const char *title = json_string_value(json_object_get(data, "title"));
    const char *type = json_string_value(json_object_get(data, "node_type"));
    if (!strcmp(event, "node_started")) {
        fprintf(stderr, "  > ");
        sl_term_puts(stderr, title);
        fprintf(stderr, " (%s)\n", type);
    } else if (!strcmp(event, "node_finished")) {
        const char *st = json_string_value(json_object_get(data, "status"));
        double ms = json_real_value(json_object_get(data, "elapsed_time")) * 1000;
        const char *err = json_string_value(json_object_get(data, "error"));
        fprintf(stderr, "  %s ",
                !strcmp(st, "succeeded") ? "ok" : !strcmp(st, "exception") ? "!!" : "xx");
        sl_term_puts(stderr, title);
        fprintf(stderr, " (%s) %s %.1f ms%s", type, st, ms, err ? ": " : "");
        sl_term_puts(stderr, err);
        fputc('\n', stderr);
    } else if (!strcmp(event, "node_retry")) {
        fprintf(stderr, "  .. ");
        sl_term_puts(stderr, title);
        fprintf(stderr, " (%s) retry %lld: ", type,
                (long long)json_integer_value(json_object_get(data, "retry_index")));
        sl_term_puts(stderr, json_string_value(json_object_get(data, "error")));
        fputc('\n', stderr);
    } else if (!strcmp(event, "iteration_started") || !strcmp(event, "loop_started")) {
        /* Per container: how many rounds, and when its last line went out. */
        const sl_value *meta = json_object_get(data, "metadata");
        json_int_t rounds = json_integer_value(
            json_object_get(meta, event[0] == 'i' ? "iterator_length" : "loop_length"));
        json_object_set_new(p->containers, json_string_value(json_object_get(data, "id")),
                            json_pack("[I,f]", rounds, 0.0));
    } else if (!strcmp(event, "iteration_next") || !strcmp(event, "loop_next")) {
        /* A container with thousands of rounds would flood the terminal:
         * show the first few, then one line a second. */
        long long i = (long long)json_integer_value(json_object_get(data, "index"));
        sl_value *st = json_object_get(p->containers, json_string_value(json_object_get(data, "id")));
        double t = sl_clock_s(), last = json_real_value(json_array_get(st, 1));
        if (i < 3 || t - last >= 1.0) {
            fprintf(stderr, "  .. %s %s %lld of %lld\n", title, event[0] == 'i' ? "item" : "round",
                    i + 1, (long long)json_integer_value(json_array_get(st, 0)));
            if (st)
                json_array_set_new(st, 1, json_real(t));
        }
    } else if (!strcmp(event, "agent_log")) {
        /* An agent's tool calls, one line each: what it ran, how it went. */
        const char *label = json_string_value(json_object_get(data, "label"));
        const sl_value *d = json_object_get(data, "data");
        if (label && !strncmp(label, "CALL ", 5)) {
            const sl_value *in = json_object_get(d, "tool_input");
            const char *what = json_string_value(json_object_get(in, "command"));
            if (!what)
                what = json_string_value(json_object_get(in, "path"));
            if (!what)
                what = json_string_value(json_object_get(in, "pattern"));
            char line[100];
            snprintf(line, sizeof line, "%s", what ? what : "");
            for (char *c = line; *c; c++)
                if (*c == '\n' || *c == '\t')
                    *c = ' ';
            const char *st = json_string_value(json_object_get(data, "status"));
            fprintf(stderr, "  .. ");
            sl_term_puts(stderr, title);
            fprintf(stderr, " %s%s ", label + 5, *line ? ":" : "");
            sl_term_puts(stderr, line);
            fprintf(stderr, "%s\n", st && !strcmp(st, "error") ? "  (failed)" : "");
        }
    }
}

/* A local file as a Dify file value (transfer_method local_file), placed
 * in the run's file table `files` under a new id: the value itself names
 * no path, so nothing a workflow does with it can point it elsewhere. */
static sl_value *file_value(const char *path, sl_value *files)
{
    struct stat stt;
    if (stat(path, &stt) < 0 || !S_ISREG(stt.st_mode))
        return NULL;
    char *abs = realpath(path, NULL);
    char id[37];
    if (!abs || sl_rand_uuid(id, NULL)) {
        free(abs);
        return NULL;
    }
    json_object_set_new(files, id, json_string(abs));
    free(abs);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    const char *mime = sl_mime_for_ext(dot);
    if (!mime)
        mime = "application/octet-stream";
    const char *kind = sl_file_kind(dot, mime);
    return sl_file_new(&(sl_file){.id = id, .type = kind, .transfer_method = "local_file",
                                  .related_id = id, .filename = base, .extension = dot ? dot : "",
                                  .mime_type = mime, .size = (long long)stt.st_size});
}

/* A JSON object (or, with want_list, a list) given inline or as @FILE. */
static sl_value *load_json_value(const char *arg, const char *what, bool want_list, bool *ok)
{
    json_error_t je;
    sl_value *v;
    if (arg[0] == '@')
        v = json_load_file(arg + 1, JSON_DECODE_ANY, &je);
    else
        v = json_loads(arg, JSON_DECODE_ANY, &je);
    if (want_list ? !json_is_array(v) : !json_is_object(v)) {
        const char *kind = want_list ? "list" : "object";
        if (v)
            fprintf(stderr, "sluice: %s: %s%snot a JSON %s; pass a JSON %s\n", what,
                    arg[0] == '@' ? arg + 1 : "", arg[0] == '@' ? ": " : "", kind, kind);
        else
            fprintf(stderr, "sluice: %s: %s%s%s (line %d, column %d); pass a JSON %s\n", what,
                    arg[0] == '@' ? arg + 1 : "", arg[0] == '@' ? ": " : "", je.text, je.line,
                    je.column, kind);
        json_decref(v);
        *ok = false;
        return NULL;
    }
    *ok = true;
    return v;
}

static sl_value *load_json_arg(const char *arg, const char *what, bool *ok)
{
    return load_json_value(arg, what, false, ok);
}

static int add_input(sl_value *inputs, sl_value *files, const sl_graph *g, const char *arg,
                     size_t max_file_bytes)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr, "sluice: --input '%s': expected NAME=VALUE\n", arg);
        return -1;
    }
    char *name = sl_xstrndup(arg, (size_t)(eq - arg));
    const char *val = eq + 1;
    const char *type = NULL;
    for (size_t i = 0; i < json_array_size(g->inputs); i++) {
        const sl_value *d = json_array_get(g->inputs, i);
        const char *vn = json_string_value(json_object_get(d, "variable"));
        if (vn && !strcmp(vn, name))
            type = json_string_value(json_object_get(d, "type"));
    }
    if (type && (!strcmp(type, "file") || !strcmp(type, "file-list")) && val[0] == '@') {
        sl_value *f = file_value(val + 1, files);
        if (!f) {
            fprintf(stderr, "sluice: --input %s: cannot read file '%s': %s\n", name, val + 1,
                    strerror(errno ? errno : ENOENT));
            free(name);
            return -1;
        }
        if (!strcmp(type, "file-list")) {
            sl_value *arr = json_object_get(inputs, name);
            if (!json_is_array(arr)) {
                arr = json_array();
                json_object_set_new(inputs, name, arr);
            }
            json_array_append_new(arr, f);
        } else {
            json_object_set_new(inputs, name, f);
        }
    } else if (val[0] == '@') {
        /* Like curl's -d @file: the input's text comes from a file. */
        FILE *f = fopen(val + 1, "rb");
        sl_buf b;
        sl_buf_init(&b, max_file_bytes);
        char tmp[65536];
        size_t n;
        bool ok = f != NULL;
        while (ok && (n = fread(tmp, 1, sizeof tmp, f)) > 0)
            ok = sl_buf_add(&b, tmp, n) == 0;
        if (f)
            fclose(f);
        sl_value *s = ok ? json_stringn(b.data ? b.data : "", b.len) : NULL;
        sl_buf_release(&b);
        if (!s) {
            fprintf(stderr, "sluice: --input %s: cannot use file '%s': %s\n", name, val + 1,
                    !f ? strerror(errno) : ok ? "not valid UTF-8 text"
                                             : "larger than input_file_bytes (raise it with "
                                               "--limit input_file_bytes=N)");
            free(name);
            return -1;
        }
        json_object_set_new(inputs, name, s);
    } else {
        sl_value *s = json_string(val);
        if (!s) {
            fprintf(stderr, "sluice: --input %s: value is not valid UTF-8\n", name);
            free(name);
            return -1;
        }
        json_object_set_new(inputs, name, s);
    }
    free(name);
    return 0;
}

static void print_outputs(const sl_graph *g, const sl_value *outs)
{
    if (!strcmp(g->mode, "advanced-chat")) {
        const char *a = json_string_value(json_object_get(outs, "answer"));
        if (a && *a) {
            sl_term_puts(stdout, a);
            if (a[strlen(a) - 1] != '\n')
                fputc('\n', stdout);
        }
        return;
    }
    const char *k;
    sl_value *v;
    json_object_foreach((sl_value *)outs, k, v) {
        sl_buf b;
        sl_buf_init(&b, 0);
        if (json_is_string(v))
            sl_buf_add(&b, json_string_value(v), json_string_length(v));
        else
            sl_value_pyjson(v, &b, json_is_object(v) || json_is_array(v));
        bool multi = b.data && strchr(b.data, '\n');
        sl_term_puts(stdout, k);
        fputs(multi ? ":\n" : ": ", stdout);
        sl_term_write(stdout, b.data ? b.data : "", b.len);
        fputc('\n', stdout);
        sl_buf_release(&b);
    }
}

/* --app-dir: the folder of the app's files (skills/ …). */
static int set_app_dir(sl_graph *g, const char *dir, const char *who)
{
    struct stat st;
    if (g->app_tmp) {
        fprintf(stderr, "%s: --app-dir: this app is a bundle and carries its own files\n", who);
        return -1;
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: --app-dir %s: not a folder\n", who, dir);
        return -1;
    }
    free(g->app_dir);
    g->app_dir = realpath(dir, NULL);
    return g->app_dir ? 0 : -1;
}

/* The files the run made that its outputs hold (file values of
 * transfer_method tool_file), appended to list. */
static void made_files(const sl_value *v, sl_value *list)
{
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            made_files(json_array_get(v, i), list);
    } else if (json_is_object(v)) {
        const char *tm = json_string_value(json_object_get(v, "transfer_method"));
        if (tm && !strcmp(tm, "tool_file") && json_object_get(v, "related_id")) {
            json_array_append(list, (sl_value *)v);
            return;
        }
        const char *k;
        sl_value *x;
        json_object_foreach((sl_value *)v, k, x)
            made_files(x, list);
    }
}

/* --out DIR: copies them there by name (name-2.ext when taken).  The
 * bytes come through the run's file table: an output that names a file by
 * a forged or foreign id, or by a path, is refused and nothing is read. */
static int write_files(sl_run *r, const char *out_dir, bool quiet)
{
    sl_value *list = json_array();
    made_files(sl_run_outputs(r), list);
    size_t n = json_array_size(list);
    int rc = 0;
    if (!n) {
        json_decref(list);
        return 0;
    }
    if (!out_dir) {
        if (!quiet)
            fprintf(stderr, "the run made %zu file%s; pass --out DIR to keep %s\n", n,
                    n == 1 ? "" : "s", n == 1 ? "it" : "them");
        json_decref(list);
        return 0;
    }
    if (mkdir(out_dir, 0755) && errno != EEXIST) {
        fprintf(stderr, "sluice run: --out %s: %s\n", out_dir, strerror(errno));
        json_decref(list);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const sl_value *f = json_array_get(list, i);
        const char *name = json_string_value(json_object_get(f, "filename"));
        sl_err e = {0};
        int fd = sl_run_file_open(r, f, &e);
        if (fd < 0) {
            fprintf(stderr, "sluice run: --out: %s\n", e.msg);
            sl_err_clear(&e);
            rc = -1;
            continue;
        }
        char base[256];
        snprintf(base, sizeof base, "%s", name && *name ? name : "file");
        for (char *c = base; *c; c++)
            if (*c == '/' || *c == '\\' || (unsigned char)*c < 0x20)
                *c = '_';
        if (!strcmp(base, ".") || !strcmp(base, ".."))
            snprintf(base, sizeof base, "file");
        char *to = sl_xasprintf("%s/%s", out_dir, base);
        for (int k = 2; access(to, F_OK) == 0; k++) {
            free(to);
            const char *dot = strrchr(base, '.');
            int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
            to = sl_xasprintf("%s/%.*s-%d%s", out_dir, stem, base, k,
                              dot && dot != base ? dot : "");
        }
        FILE *in = fdopen(fd, "rb"), *o = in ? fopen(to, "wbx") : NULL;
        bool ok = in && o;
        char buf[65536];
        size_t k;
        while (ok && (k = fread(buf, 1, sizeof buf, in)) > 0)
            ok = fwrite(buf, 1, k, o) == k;
        if (o && fclose(o))
            ok = false;
        if (in)
            fclose(in);
        else
            close(fd);
        if (!ok) {
            fprintf(stderr, "sluice run: --out: cannot write %s: %s\n", to, strerror(errno));
            rc = -1;
        } else if (!quiet) {
            fprintf(stderr, "wrote %s (%lld bytes)\n", to,
                    (long long)json_integer_value(json_object_get(f, "size")));
        }
        free(to);
    }
    json_decref(list);
    return rc;
}

/* An option applied after the parse, in a fixed order: every --limit once
 * SLUICE_<NAME> is read, then --input, --inputs, --conversation, --env,
 * --query and --history (in argv order) once the graph is loaded, since an
 * input's declared type and the input_file_bytes limit shape them. */
typedef struct {
    int id;
    const char *value;
} late_opt;

typedef struct {
    const char *file, *config, *tape_path, *app_dir, *out_dir, *data;
    bool json_out, quiet, events, replay;
    sl_run_opts *opts;
    late_opt *late;
    size_t nlate;
} run_args;

static int run_opt(void *ud, int id, const char *v)
{
    run_args *a = ud;
    sl_err err = {0};
    switch (id) {
    case SL_OPT_ARG:
        if (a->file) {
            fprintf(stderr, "sluice run: one workflow file at a time ('%s' and '%s')\n", a->file,
                    v);
            return -1;
        }
        a->file = v;
        return 0;
    case O_NET:
        a->opts->net_given = true;
        if (sl_net_parse(v, &a->opts->net, &a->opts->net_allow, &err)) {
            fprintf(stderr, "sluice run: --net: %s\n", err.msg);
            sl_err_clear(&err);
            return -1;
        }
        return 0;
    case O_RECORD:
    case O_REPLAY:
        if (a->tape_path) {
            fprintf(stderr, "sluice run: --record and --replay: one tape at a time\n");
            return -1;
        }
        a->tape_path = v;
        a->replay = id == O_REPLAY;
        return 0;
    case O_CONFIG: a->config = v; return 0;
    case O_APP_DIR: a->app_dir = v; return 0;
    case O_OUT: a->out_dir = v; return 0;
    case O_DATA: return sl_cli_set_store("sluice run", &a->data, v);
    case O_JSON: a->json_out = true; return 0;
    case O_EVENTS: a->events = true; return 0;
    case O_QUIET: a->quiet = true; return 0;
    default:
        a->late[a->nlate++] = (late_opt){id, v};
        return 0;
    }
}

/* The knowledge bases of a workflow with knowledge-retrieval nodes: the
 * store in `data` (NULL: $SLUICE_DATA, else ./sluice-data) and an sl_kb on
 * it, lent to cfg so that loads check dataset ids against them.  0 when g
 * has no such node, or the store's folder does not exist and may not be
 * made (!create, or the default ./sluice-data): nothing opened, and nodes
 * bound to external services alone still run; 1 when opened; -1 after
 * saying why on stderr. */
static int open_kb(const sl_graph *g, const char *data, bool create, sl_config *cfg,
                   sl_llm_tape *tape, const sl_limits *L, sl_store **st, sl_kb **kb)
{
    *st = NULL;
    *kb = NULL;
    bool need = false;
    for (int i = 0; i < g->nnodes && !need; i++)
        need = g->nodes[i].type && !strcmp(g->nodes[i].type, "knowledge-retrieval");
    const char *dir = sl_cli_store_where(data, cfg);
    bool named = data || strcmp(dir, "sluice-data");  /* not the default folder */
    bool folder = !strstr(dir, "://");
    struct stat sb;
    if (!need || (folder && (!create || !named) && stat(dir, &sb)))
        return 0;
    if (!(*st = sl_cli_open_store(dir, cfg)))
        return -1;
    sl_kb_env ke = {.store = *st, .config = cfg, .tape = tape};
    sl_kb_limits_from(&ke.limits, L);
    sl_err err = {0};
    if (!(*kb = sl_kb_open(&ke, &err))) {
        fprintf(stderr, "sluice: knowledge bases in %s: %s\n", dir, err.msg);
        sl_err_clear(&err);
        sl_store_close(*st);
        *st = NULL;
        return -1;
    }
    sl_config_set_kb(cfg, *kb);
    return 1;
}

/* The run, once the command line is parsed. */
static int run_workflow(run_args *ra)
{
    const char *file = ra->file, *config = ra->config, *tape_path = ra->tape_path;
    const char *app_dir = ra->app_dir, *out_dir = ra->out_dir;
    bool json_out = ra->json_out, quiet = ra->quiet, events = ra->events, replay = ra->replay;
    sl_run_opts opts = *ra->opts;
    sl_err err = {0};
    /* model providers first: loading checks that each model node's is set */
    sl_config *cfg;
    if (sl_config_load(config, &cfg, &err)) {
        fprintf(stderr, "sluice: %s\n", err.msg);
        sl_err_clear(&err);
        return EXIT_USAGE;
    }
    sl_config_set_offline(cfg, replay);
    opts.config = cfg;
    sl_llm_tape *tape = NULL;
    if (tape_path && sl_llm_tape_open(tape_path, replay, &tape, &err)) {
        fprintf(stderr, "sluice run: %s\n", err.msg);
        sl_err_clear(&err);
        sl_config_free(cfg);
        return EXIT_USAGE;
    }
    opts.llm_tape = tape;
    sl_graph g;
    sl_diag diag;
    sl_diag_init(&diag);
    if (sl_graph_load_file(&g, &sl_nodes, cfg, file, &diag, &err) < 0) {
        print_diag(&diag, true);
        fprintf(stderr, "sluice: %s\n", err.msg);
        sl_diag_release(&diag);
        sl_err_clear(&err);
        sl_graph_release(&g);
        sl_llm_tape_close(tape);
        sl_config_free(cfg);
        return EXIT_USAGE;
    }
    /* knowledge-retrieval nodes: the store's knowledge bases, and the
     * graph loaded again so its checks see them */
    sl_store *kb_store = NULL;
    sl_kb *kb = NULL;
    int kb_rc = open_kb(&g, ra->data, true, cfg, tape, &opts.limits, &kb_store, &kb);
    if (kb_rc > 0) {
        sl_graph_release(&g);
        sl_diag_release(&diag);
        sl_diag_init(&diag);
        if (sl_graph_load_file(&g, &sl_nodes, cfg, file, &diag, &err) < 0)
            kb_rc = -1;
    }
    if (kb_rc < 0) {
        print_diag(&diag, true);
        if (err.msg)
            fprintf(stderr, "sluice: %s\n", err.msg);
        sl_diag_release(&diag);
        sl_err_clear(&err);
        sl_graph_release(&g);
        sl_kb_close(kb);
        sl_store_close(kb_store);
        sl_llm_tape_close(tape);
        sl_config_free(cfg);
        return EXIT_USAGE;
    }
    opts.kb = kb;
    if (app_dir && set_app_dir(&g, app_dir, "sluice run")) {
        sl_diag_release(&diag);
        sl_graph_release(&g);
        sl_kb_close(kb);
        sl_store_close(kb_store);
        sl_llm_tape_close(tape);
        sl_config_free(cfg);
        return EXIT_USAGE;
    }
    sl_value *given = json_object(), *files = json_object();
    sl_value *conv = NULL, *env = json_object(), *history = NULL;
    int rc = EXIT_USAGE;
    for (size_t i = 0; i < ra->nlate; i++) {
        const char *v = ra->late[i].value;
        bool ok = true;
        switch (ra->late[i].id) {
        case O_INPUT:
            ok = add_input(given, files, &g, v, opts.limits.input_file_bytes) == 0;
            break;
        case O_INPUTS: {
            sl_value *all = load_json_arg(v, "--inputs", &ok);
            if (ok)
                json_object_update(given, all);
            json_decref(all);
            break;
        }
        case O_CONVERSATION:
            json_decref(conv);
            conv = load_json_arg(v, "--conversation", &ok);
            break;
        case O_ENV: {
            const char *eq = strchr(v, '=');
            if (!eq) {
                fprintf(stderr, "sluice run: --env '%s': expected NAME=VALUE\n", v);
                ok = false;
            } else {
                char *k = sl_xstrndup(v, (size_t)(eq - v));
                json_object_set_new(env, k, json_string(eq + 1));
                free(k);
            }
            break;
        }
        case O_QUERY:
            opts.query = v;
            break;
        case O_HISTORY:
            json_decref(history);
            history = load_json_value(v, "--history [{\"query\", \"answer\"}, ...]", true, &ok);
            opts.history = history;
            break;
        }
        if (!ok)
            goto out;
    }
    sl_value *inputs = NULL;
    if (sl_run_prepare_inputs(&g, given, &inputs, &diag) < 0) {
        /* on the command line, a missing input is given with --input X= */
        for (size_t k = 0; k < diag.n; k++) {
            sl_diag_entry *e = &diag.v[k];
            if (e->kind != SL_DIAG_MISSING || !e->input)
                continue;
            char *nm = sl_xasprintf("%.*s; pass it with --input %s=VALUE", (int)e->what_len,
                                    e->msg, e->input);
            free(e->msg);
            e->msg = nm;
        }
        print_diag(&diag, true);
        fprintf(stderr, "sluice: %s: the inputs are not valid; nothing was run (give inputs "
                        "with --input NAME=VALUE or --inputs JSON)\n",
                file);
        goto out;
    }
    if (!quiet)
        print_diag(&diag, false);
    progress prog = {.quiet = quiet, .events = events,
                     .stream_answer = !json_out && !events && !strcmp(g.mode, "advanced-chat"),
                     .containers = json_object()};
    opts.inputs = inputs;
    opts.files = files;
    opts.conversation = conv;
    opts.env_override = env;
    opts.on_event = (!quiet || events || prog.stream_answer) ? on_event : NULL;
    opts.event_ud = &prog;
    sl_run *r = sl_run_new(&g, &opts);
    prog.run_id = sl_run_id(r);
    current_run = r;
    struct sigaction sa = {0};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sl_run_exec(r, &err);
    current_run = NULL;
    sl_run_status st = sl_run_status_of(r);
    if (!quiet)
    {
        fprintf(stderr, "workflow %s in %.1f ms, %d steps%s", sl_run_status_name(st),
                sl_run_elapsed(r) * 1000, sl_run_steps(r), sl_run_error(r) ? ": " : "");
        sl_term_puts(stderr, sl_run_error(r));
        fputc('\n', stderr);
    } else if (st == SL_RUN_FAILED) {
        fputs("sluice: ", stderr);
        sl_term_puts(stderr, sl_run_error(r));
        fputc('\n', stderr);
    }
    sl_value *shown = sl_run_mask(r, sl_run_outputs(r));
    if (json_out) {
        /* Dify's blocking-response fields (its `data`, with the run's ids) */
        sl_value *res = json_pack(
            "{s:s,s:s,s:s,s:s,s:O,s:o,s:f,s:I,s:i,s:I,s:I}", "workflow_run_id", sl_run_id(r),
            "task_id", sl_run_id(r), "id", sl_run_id(r), "status", sl_run_status_name(st), "outputs", shown, "error",
            sl_run_error(r) ? json_string(sl_run_error(r)) : json_null(), "elapsed_time",
            sl_run_elapsed(r), "total_tokens", (json_int_t)sl_run_tokens(r), "total_steps",
            sl_run_steps(r), "created_at", (json_int_t)sl_run_created_at(r), "finished_at",
            (json_int_t)sl_run_finished_at(r));
        if (sl_run_conversation(r) && json_object_size(sl_run_conversation(r)))
            json_object_set(res, "conversation", (sl_value *)sl_run_conversation(r));
        char *s = json_dumps(res, JSON_INDENT(2));
        puts(s);
        free(s);
        json_decref(res);
    } else if (prog.stream_answer) {
        if (prog.answered)
            fputc('\n', stdout);
    } else if (!events) {
        print_outputs(&g, shown);
    }
    json_decref(shown);
    json_decref(prog.containers);
    rc = st == SL_RUN_SUCCEEDED ? EXIT_OK : st == SL_RUN_PARTIAL ? EXIT_PARTIAL
         : st == SL_RUN_STOPPED ? EXIT_STOPPED : EXIT_FAILED;
    if (write_files(r, out_dir, quiet) && rc == EXIT_OK)
        rc = EXIT_FAILED;
    sl_run_free(r);
    json_decref(inputs);
out:
    json_decref(given);
    json_decref(files);
    json_decref(history);
    json_decref(conv);
    json_decref(env);
    sl_diag_release(&diag);
    sl_err_clear(&err);
    sl_graph_release(&g);
    sl_kb_close(kb);
    sl_store_close(kb_store);
    sl_llm_tape_close(tape);
    sl_config_free(cfg);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    sl_run_opts opts;
    sl_run_opts_init(&opts);
    run_args ra = {.opts = &opts, .late = sl_xcalloc((size_t)argc, sizeof(late_opt))};
    int rc = EXIT_USAGE;
    int prc = sl_opt_parse(&run_spec, argc, argv, 1, run_opt, &ra, NULL);
    if (prc == SL_OPT_HELP) {
        rc = EXIT_OK;
        goto done;
    }
    if (prc < 0)
        goto done;
    /* the limits in a fixed order: defaults, SLUICE_<NAME>, then each
     * --limit as given; the inputs read them (input_file_bytes) later */
    sl_err err = {0};
    if (sl_limits_from_env(&opts.limits, &err) < 0) {
        fprintf(stderr, "sluice: %s\n", err.msg);
        sl_err_clear(&err);
        goto done;
    }
    for (size_t i = 0; i < ra.nlate; i++)
        if (ra.late[i].id == O_LIMIT && sl_limits_set(&opts.limits, ra.late[i].value, &err) < 0) {
            fprintf(stderr, "sluice run: --limit: %s\n", err.msg);
            sl_err_clear(&err);
            goto done;
        }
    if (!ra.file) {
        sl_opt_usage(&run_spec, stderr);
        goto done;
    }
    rc = run_workflow(&ra);
done:
    free(ra.late);
    return rc;
}

typedef struct {
    bool quiet, strict;
    char **files;
    int nfiles;
} validate_args;

static int validate_opt(void *ud, int id, const char *v)
{
    validate_args *a = ud;
    if (id == O_QUIET)
        a->quiet = true;
    else if (id == O_STRICT)
        a->strict = true;
    else
        a->files[a->nfiles++] = (char *)v;
    return 0;
}

static int cmd_validate(int argc, char **argv)
{
    validate_args va = {.files = argv}; /* the file names overwrite argv's front */
    int prc = sl_opt_parse(&validate_spec, argc, argv, 1, validate_opt, &va, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? EXIT_OK : EXIT_USAGE;
    bool quiet = va.quiet, strict = va.strict;
    int files = 0, bad = 0;
    sl_config *cfg = sl_config_default();
    sl_config_set_lenient(cfg, !strict);
    for (int i = 0; i < va.nfiles; i++) {
        files++;
        sl_graph g;
        sl_diag d;
        sl_err err = {0};
        sl_diag_init(&d);
        int rc = sl_graph_load_file(&g, &sl_nodes, cfg, va.files[i], &d, &err);
        /* knowledge-retrieval nodes: dataset ids checked against the
         * knowledge bases of the store, when there is one */
        sl_store *kb_store = NULL;
        sl_kb *kb = NULL;
        sl_limits vl;
        sl_limits_default(&vl);
        if (rc == 0 && open_kb(&g, NULL, false, cfg, NULL, &vl, &kb_store, &kb) > 0) {
            sl_graph_release(&g);
            sl_diag_release(&d);
            sl_diag_init(&d);
            rc = sl_graph_load_file(&g, &sl_nodes, cfg, va.files[i], &d, &err);
        }
        sl_config_set_kb(cfg, NULL);
        print_diag(&d, quiet);
        if (rc < 0) {
            bad++;
            fprintf(stderr, "%s\n", err.msg);
        } else if (!quiet) {
            printf("%s: OK (%s, DSL %s, %d nodes)\n", va.files[i], g.mode, g.version, g.nnodes);
        }
        sl_diag_release(&d);
        sl_err_clear(&err);
        sl_graph_release(&g);
        sl_kb_close(kb);
        sl_store_close(kb_store);
    }
    sl_config_free(cfg);
    if (!files) {
        sl_opt_usage(&validate_spec, stderr);
        return EXIT_USAGE;
    }
    return bad ? EXIT_FAILED : EXIT_OK;
}

typedef struct {
    const char *file, *out, *app_dir;
    bool secrets;
} export_args;

static int export_opt(void *ud, int id, const char *v)
{
    export_args *a = ud;
    switch (id) {
    case O_OUTFILE: a->out = v; break;
    case O_APP_DIR: a->app_dir = v; break;
    case O_SECRETS: a->secrets = true; break;
    default: a->file = v; break; /* the last one given, as before */
    }
    return 0;
}

static int cmd_export(int argc, char **argv)
{
    export_args ea = {0};
    int prc = sl_opt_parse(&export_spec, argc, argv, 1, export_opt, &ea, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? EXIT_OK : EXIT_USAGE;
    const char *file = ea.file, *out = ea.out, *app_dir = ea.app_dir;
    bool secrets = ea.secrets;
    if (!file) {
        sl_opt_usage(&export_spec, stderr);
        return EXIT_USAGE;
    }
    sl_graph g;
    sl_diag d;
    sl_err err = {0};
    sl_diag_init(&d);
    int rc = EXIT_OK;
    sl_yaml_doc doc = {0};
    const sl_value *root = NULL;
    sl_config *cfg = sl_config_default();
    int lrc = sl_graph_load_file(&g, &sl_nodes, cfg, file, &d, &err);
    sl_config_free(cfg);
    if (lrc < 0) {
        /* A file that parses but does not validate (say, node types sluice
         * does not run yet) is still exported; the problems are shown. */
        if (err.code != SL_EVALIDATE) {
            print_diag(&d, true);
            fprintf(stderr, "sluice: %s\n", err.msg);
            rc = EXIT_USAGE;
            goto done;
        }
        for (size_t i = 0; i < d.n; i++)
            fprintf(stderr, "warning: %s\n", d.v[i].msg);
        sl_err_clear(&err);
        char *text = NULL;
        size_t len = 0;
        /* standard input was read once already */
        if (strcmp(file, "-"))
            sl_dsl_read_file(file, &text, &len, &err);
        if (!text || sl_yaml_parse(text, len, file, &doc, &err) < 0) {
            fprintf(stderr, "sluice export: cannot read %s again%s%s\n", file,
                    err.msg ? ": " : "", err.msg ? err.msg : "");
            free(text);
            rc = EXIT_USAGE;
            goto done;
        }
        free(text);
        root = doc.root;
    } else {
        root = g.doc.root;
    }
    if (app_dir && set_app_dir(&g, app_dir, "sluice export")) {
        rc = EXIT_USAGE;
        goto done;
    }
    const sl_value *rt = json_object_get(json_object_get(root, "sluice"), "runtime");
    size_t ol = out ? strlen(out) : 0;
    bool zip = g.app_dir || (json_is_string(rt) && !strcmp(json_string_value(rt), "sandboxed")) ||
               (ol > 4 && !strcasecmp(out + ol - 4, ".zip"));
    sl_buf b;
    sl_buf_init(&b, 0);
    if (sl_dsl_export(root, secrets, &b, &err) < 0) {
        fprintf(stderr, "sluice export: %s\n", err.msg);
        rc = EXIT_FAILED;
    } else if (zip && !out) {
        fprintf(stderr, "sluice export: %s exports as a .zip bundle (a sandboxed app or one with "
                "files); give -o FILE.zip\n", file);
        rc = EXIT_USAGE;
    } else if (zip) {
        const char *name = json_string_value(json_object_get(json_object_get(root, "app"), "name"));
        if (sl_bundle_write(out, name ? name : "app", b.data ? b.data : "", b.len, g.app_dir,
                            g.manifest, &err)) {
            fprintf(stderr, "sluice export: %s\n", err.msg);
            rc = EXIT_FAILED;
        }
    } else {
        FILE *f = out ? fopen(out, "w") : stdout;
        if (!f || fwrite(b.data, 1, b.len, f) != b.len) {
            fprintf(stderr, "sluice export: cannot write %s: %s\n", out ? out : "stdout",
                    strerror(errno));
            rc = EXIT_FAILED;
        }
        if (f && f != stdout)
            fclose(f);
    }
    sl_buf_release(&b);
done:
    if (doc.root)
        sl_yaml_doc_release(&doc);
    sl_diag_release(&d);
    sl_err_clear(&err);
    sl_graph_release(&g);
    return rc;
}

static void print_line(const char *line, void *ud)
{
    (void)ud;
    printf("  %s\n", line);
}

static int limits_opt(void *ud, int id, const char *v)
{
    (void)ud, (void)id;
    fprintf(stderr, "sluice limits: unknown argument '%s' (it takes none; see sluice limits "
            "--help)\n", v);
    return -1;
}

static int cmd_limits(int argc, char **argv)
{
    int prc = sl_opt_parse(&limits_spec, argc, argv, 1, limits_opt, NULL, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? EXIT_OK : EXIT_USAGE;
    struct sl_limits l;
    sl_err err = {0};
    sl_limits_default(&l);
    if (sl_limits_from_env(&l, &err) < 0) {
        fprintf(stderr, "sluice: %s\n", err.msg);
        sl_err_clear(&err);
        return EXIT_USAGE;
    }
    printf("limits (override with --limit NAME=VALUE or SLUICE_<NAME>):\n");
    sl_limits_describe(&l, print_line, NULL);
    return EXIT_OK;
}

static char *read_all(FILE *f, size_t *len)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_add_file(&b, f);
    if (b.toobig) {
        sl_buf_release(&b);
        return NULL;
    }
    *len = b.len;
    return b.data ? sl_buf_detach(&b) : sl_xstrdup("");
}

static char *read_path(const char *path, size_t *len)
{
    if (!strcmp(path, "-"))
        return read_all(stdin, len);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = read_all(f, len);
    fclose(f);
    return s;
}

/* sluice render's deadline: max_time_s from the command's start */
static int render_interrupted(void *ud, sl_err *err)
{
    const double *deadline = ud;
    if (sl_clock_s() > deadline[0])
        return sl_err_set(err, SL_ETIMEOUT, "the render took longer than max_time_s (%g s); "
                          "raise it with --limit max_time_s=N", deadline[1]);
    return 0;
}

typedef struct {
    const char *file, *ctxarg;
    long repeat;
    sl_jinja_limits *lim;
    struct sl_limits *L;
} render_args;

static int render_opt(void *ud, int id, const char *v)
{
    render_args *a = ud;
    sl_err lerr = {0};
    if (id == SL_OPT_ARG) {
        if (a->file) {
            fprintf(stderr, "sluice render: one template only, not also '%s' (see sluice render "
                    "--help)\n", v);
            return -1;
        }
        a->file = v;
    } else if (id == O_CONTEXT) {
        a->ctxarg = v;
    } else if (id == O_LIMIT && (!strncmp(v, "template_max_bytes=", 19) ||
                                 !strncmp(v, "max_time_s=", 11))) {
        if (sl_limits_set(a->L, v, &lerr) < 0) {
            fprintf(stderr, "sluice render: %s\n", lerr.msg);
            sl_err_clear(&lerr);
            return -1;
        }
    } else if (id == O_LIMIT) {
        const char *eq = strchr(v, '=');
        char *end = NULL;
        long long n = eq ? strtoll(eq + 1, &end, 10) : 0;
        if (!eq || !*(eq + 1) || *end || n < 1 || n > 1000000000LL) {
            fprintf(stderr, "sluice render: --limit needs NAME=N with N from 1 to 1000000000, "
                    "not '%s'\n", v);
            return -1;
        }
        size_t nl = (size_t)(eq - v);
        if (nl == 16 && !strncmp(v, "max_output_chars", nl))
            a->lim->max_output_chars = (size_t)n;
        else if (nl == 19 && !strncmp(v, "max_loop_iterations", nl))
            a->lim->max_loop_iterations = (long)n;
        else if (nl == 9 && !strncmp(v, "max_depth", nl) && n <= 10000)
            a->lim->max_depth = (int)n;
        else {
            fprintf(stderr, "sluice render: unknown limit '%.*s' (or out of range): use "
                    "max_output_chars, max_loop_iterations, max_depth (at most 10000), "
                    "template_max_bytes or max_time_s\n",
                    (int)nl, v);
            return -1;
        }
    } else if (id == O_REPEAT) {
        char *end;
        a->repeat = strtol(v, &end, 10);
        if (*end || a->repeat < 1) {
            fprintf(stderr, "sluice render: --repeat needs a positive number\n");
            return -1;
        }
    }
    return 0;
}

static int cmd_render(int argc, char **argv)
{
    sl_jinja_limits lim;
    sl_jinja_limits_default(&lim);
    lim.limit_name = "max_output_chars (sluice render --limit max_output_chars=N)";
    lim.bytes_limit_name = "template_max_bytes (sluice render --limit template_max_bytes=N)";
    /* the two limits a run has too: their parsing, defaults and variables */
    struct sl_limits L;
    sl_limits_default(&L);
    sl_err lerr = {0};
    if (sl_limits_from_env(&L, &lerr) < 0) {
        fprintf(stderr, "sluice render: %s\n", lerr.msg);
        sl_err_clear(&lerr);
        return EXIT_USAGE;
    }
    render_args ra = {.repeat = 1, .lim = &lim, .L = &L};
    int prc = sl_opt_parse(&render_spec, argc, argv, 1, render_opt, &ra, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? EXIT_OK : EXIT_USAGE;
    const char *file = ra.file, *ctxarg = ra.ctxarg;
    long repeat = ra.repeat;
    if (!file) {
        sl_opt_usage(&render_spec, stderr);
        return EXIT_USAGE;
    }
    size_t len;
    char *text = read_path(file, &len);
    if (!text) {
        fprintf(stderr, "sluice render: cannot read %s: %s\n", file, strerror(errno));
        return EXIT_USAGE;
    }
    sl_value *ctx = NULL;
    if (ctxarg) {
        json_error_t je;
        if (ctxarg[0] == '@') {
            size_t cl;
            char *ct = read_path(ctxarg + 1, &cl);
            if (!ct) {
                fprintf(stderr, "sluice render: cannot read %s: %s\n", ctxarg + 1, strerror(errno));
                free(text);
                return EXIT_USAGE;
            }
            ctx = json_loadb(ct, cl, 0, &je);
            free(ct);
        } else {
            ctx = json_loads(ctxarg, 0, &je);
        }
        if (!json_is_object(ctx)) {
            fprintf(stderr, "sluice render: --context must be a JSON object%s%s\n",
                    ctx ? "" : ": ", ctx ? "" : je.text);
            json_decref(ctx);
            free(text);
            return EXIT_USAGE;
        }
    }
    lim.max_bytes = L.template_max_bytes ? L.template_max_bytes : SIZE_MAX;
    double deadline[2] = {sl_clock_s() + L.max_time_s, L.max_time_s};
    lim.interrupt = render_interrupted;
    lim.interrupt_ud = deadline;
    sl_err err = {0};
    sl_jinja *t;
    int rc = EXIT_OK;
    if (sl_jinja_compile(text, len, strcmp(file, "-") ? file : "<stdin>", &t, &err) < 0) {
        fprintf(stderr, "sluice render: %s\n", err.msg);
        rc = EXIT_FAILED;
    } else {
        sl_buf out;
        sl_buf_init(&out, 0);
        for (long i = 0; i < repeat && rc == EXIT_OK; i++) {
            sl_buf_reset(&out);
            if (sl_jinja_render(t, ctx, &lim, &out, &err) < 0) {
                fprintf(stderr, "sluice render: %s\n", err.msg);
                rc = EXIT_FAILED;
            }
        }
        if (rc == EXIT_OK)
            fwrite(out.data ? out.data : "", 1, out.len, stdout);
        sl_buf_release(&out);
        sl_jinja_free(t);
    }
    sl_err_clear(&err);
    json_decref(ctx);
    free(text);
    return rc;
}

/* ---- the commands ---- */

typedef struct {
    const char *name;
    const char *args; /* shown after the name in sluice --help */
    int (*fn)(int argc, char **argv);
    const char *help; /* one line */
} command;

static const command commands[] = {
    {"run", "FILE", cmd_run, "run a workflow (.yml, or a .zip app bundle) and print its outputs"},
    {"validate", "FILE…", cmd_validate, "check workflow files without running them"},
    {"export", "FILE", cmd_export,
     "write the workflow back: YAML, or a .zip bundle for apps with files"},
    {"limits", "", cmd_limits, "list every limit with its default"},
    {"render", "FILE|-", cmd_render, "render a Jinja2 template (--context JSON|@file)"},
    {"sandbox", "", sl_cli_sandbox, "run a command in a local sandbox (run, shell, check)"},
    {"serve", "", sl_cli_serve, "serve Dify's Service API for the apps in a data folder"},
    {"worker", "", sl_cli_worker, "run queued runs from a shared store (PostgreSQL), no HTTP"},
    {"app", "", sl_cli_app, "import (new versions too), list, export, delete apps; keys"},
    {"tools", "", sl_cli_tools, "list an app's tools and their bindings; call a bound tool"},
    {"kb", "", sl_cli_kb, "knowledge bases: create, add documents, search; dataset keys"},
    {"store", "", sl_cli_store, "the store itself: migrate, check, admin-token"},
    {"extract", "FILE", sl_cli_extract, "print a document's text as document-extractor reads it"},
};

/* Columns `s` takes on a terminal (UTF-8: continuation bytes take none). */
static int columns(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* sluice --help: the commands from the table, the node types from the
 * registry the engine is given, so neither list is kept by hand. */
static void usage_main(FILE *f)
{
    fputs(usage_head, f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const command *c = &commands[i];
        int w = fprintf(f, "  %s%s%s", c->name, *c->args ? " " : "", c->args) - 2 -
                (int)strlen(c->args) + columns(c->args);
        fprintf(f, "%*s%s\n", w < 16 ? 16 - w : 1, "", c->help);
    }
    fputs(usage_foot, f);
    fputs("\nnode types it runs:", f);
    int col = 19;
    for (size_t i = 0; sl_nodes_nth(i); i++) {
        const char *t = sl_nodes_nth(i)->type;
        int w = (int)strlen(t) + 2; /* ", " or ":" and a space before it */
        if (col + w > 80) {
            fputs(i ? ",\n" : "\n", f);
            col = 0;
        } else {
            fputs(i ? ", " : " ", f);
            col += i ? 2 : 1;
        }
        fputs(t, f);
        col += (int)strlen(t);
    }
    fputs(".\n", f);
    fputs(usage_types_notes, f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    /* documents are read by another sluice process (extract/isolate.h); it
     * ends with _exit: what runs at exit (a sanitizer's leak check, which
     * stops the world with ptrace) is more than its seccomp filter allows */
    if (!strcmp(cmd, "__extract"))
        _exit(sl_extract_helper_main(argc, argv));
    sl_extract_set_helper("/proc/self/exe");
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage_main(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("sluice %s\n", SLUICE_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "sluice: unknown command '%s'\n\n", cmd);
    usage_main(stderr);
    return EXIT_USAGE;
}
