/*
 * cases — runs the data-driven end-to-end cases (docs/testing.md).
 *
 * usage: cases [FILE|DIR]...   (default tests/cases)
 * Prints one TAP line per case entry.  Starts tests/tools/httpd.py once,
 * on a free loopback port, when any case mentions ${HTTPD_URL}, and stops
 * it at exit.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sha256.h"
#include "engine/run.h"
#include <fcntl.h>

#include "engine/config.h"
#include "extract/isolate.h"
#include "llm/llm.h"
#include "net/http.h"
#include "nodes/registry.h"
#include "tap.h"
#include "util.h"

static pid_t httpd_pid;
static FILE *httpd_in;

static void stop_httpd(void)
{
    if (httpd_pid > 0) {
        kill(httpd_pid, SIGTERM);
        waitpid(httpd_pid, NULL, 0);
        httpd_pid = 0;
    }
}

static int start_httpd(void)
{
    if (httpd_pid)
        return 0;
    int out[2], in[2];
    if (pipe(out) < 0 || pipe(in) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execlp("python3", "python3", "tests/tools/httpd.py", "0", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    httpd_in = fdopen(in[1], "w"); /* closing it tells the server to exit */
    FILE *f = fdopen(out[0], "r");
    char line[128];
    if (!f || !fgets(line, sizeof line, f)) {
        fprintf(stderr, "cases: tests/tools/httpd.py did not start\n");
        return -1;
    }
    int port = atoi(line);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    setenv("HTTPD_URL", url, 1);
    snprintf(url, sizeof url, "%d", port);
    setenv("HTTPD_PORT", url, 1);
    httpd_pid = pid;
    atexit(stop_httpd);
    return 0;
}

/* The settings case files load and run with, unless one brings its own
 * (sluice_config): the environment's, as `sluice run` would see them. */
static sl_config *env_config;

static const sl_config *base_config(void)
{
    if (!env_config)
        env_config = sl_config_default();
    return env_config;
}

/* The LLM stand-in (tests/tools/llmd.py), started once for the first case
 * file with a model node; every provider then points at it. */
static pid_t llmd_pid;

static void stop_llmd(void)
{
    if (llmd_pid > 0) {
        kill(llmd_pid, SIGTERM);
        waitpid(llmd_pid, NULL, 0);
        llmd_pid = 0;
    }
}

static int start_llmd_once(void)
{
    if (llmd_pid)
        return 0;
    int port;
    llmd_pid = start_llmd(&port);
    if (llmd_pid < 0) {
        llmd_pid = 0;
        fprintf(stderr, "cases: tests/tools/llmd.py did not start\n");
        return -1;
    }
    atexit(stop_llmd);
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    setenv("LLMD_URL", url, 1);
    setenv("ANTHROPIC_BASE_URL", url, 1);
    setenv("ANTHROPIC_API_KEY", "test-key", 1);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    setenv("SLUICE_LLM_BASE_URL", url, 1);
    setenv("SLUICE_LLM_API_KEY", "test-key", 1);
    unsetenv("OPENAI_API_KEY");
    unsetenv("SLUICE_LLM_MODEL");
    sl_err err = {0};
    sl_config_free(env_config);
    if (sl_config_load(NULL, &env_config, &err)) {
        fprintf(stderr, "cases: %s\n", err.msg);
        sl_err_clear(&err);
        return -1;
    }
    return 0;
}

/* Clears the stand-in's request log and rate-limit counters. */
static void reset_llmd(void)
{
    const char *u = getenv("LLMD_URL");
    if (!llmd_pid || !u)
        return;
    char *url = sl_xasprintf("%s/__reset", u);
    sl_err e = {0};
    sl_http *h = sl_http_new(&e);
    if (h) {
        sl_http_url(h, url);
        sl_http_method(h, "POST", "", 0, true);
        sl_http_perform(h);
        sl_http_free(h);
    }
    sl_err_clear(&e);
    free(url);
}

/* ${VAR} from the environment. */
static char *expand(const char *s)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    while (*s) {
        const char *p = strstr(s, "${");
        const char *q = p ? strchr(p, '}') : NULL;
        if (!p || !q) {
            sl_buf_adds(&b, s);
            break;
        }
        sl_buf_add(&b, s, (size_t)(p - s));
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(q - p - 2), p + 2);
        if (!strcmp(name, "HTTPD_URL") || !strcmp(name, "HTTPD_PORT"))
            start_httpd();
        const char *v = getenv(name);
        sl_buf_adds(&b, v ? v : "");
        s = q + 1;
    }
    return sl_buf_detach(&b);
}

static sl_value *expand_value(const sl_value *v)
{
    if (json_is_string(v)) {
        char *s = expand(json_string_value(v));
        sl_value *r = json_string(s);
        free(s);
        return r;
    }
    if (json_is_object(v)) {
        sl_value *o = json_object();
        const char *k;
        sl_value *e;
        json_object_foreach((sl_value *)v, k, e) json_object_set_new(o, k, expand_value(e));
        return o;
    }
    if (json_is_array(v)) {
        sl_value *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, expand_value(json_array_get(v, i)));
        return a;
    }
    return json_incref((sl_value *)v);
}

typedef struct {
    sl_value *status;   /* node id -> last status */
    sl_value *finished; /* node id -> last node_finished data */
    sl_buf streamed;    /* text_chunk texts, in order */
    int chunks;
    sl_value *counts;   /* event name -> how many */
    sl_value *logs;     /* agent_log events, in order */
    sl_value *trace;    /* node_started "> id", node_finished "< id" and text_chunk
                           "node.var: text" lines, in order */
    sl_value *chunk_lines; /* the text_chunk lines alone */
} collect;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    collect *c = ud;
    json_object_set_new(c->counts, event,
                        json_integer(json_integer_value(json_object_get(c->counts, event)) + 1));
    if (!strcmp(event, "agent_log"))
        json_array_append_new(c->logs, json_deep_copy(data));
    const char *node = json_string_value(json_object_get(data, "node_id"));
    if (!strcmp(event, "node_started") || !strcmp(event, "node_finished")) {
        char *line = sl_xasprintf("%c %s", event[5] == 's' ? '>' : '<', node ? node : "?");
        json_array_append_new(c->trace, json_string(line));
        free(line);
    } else if (!strcmp(event, "text_chunk")) {
        sl_buf line;
        sl_buf_init(&line, 0);
        const sl_value *sel = json_object_get(data, "from_variable_selector");
        for (size_t i = 0; i < json_array_size(sel); i++)
            sl_buf_addf(&line, "%s%s", i ? "." : "", json_string_value(json_array_get(sel, i)));
        sl_buf_addf(&line, ": %s", json_string_value(json_object_get(data, "text")));
        json_array_append_new(c->trace, json_string(line.data));
        json_array_append_new(c->chunk_lines, json_string(line.data));
        sl_buf_release(&line);
    }
    if (!strcmp(event, "node_finished")) {
        json_object_set(c->status, json_string_value(json_object_get(data, "node_id")),
                        json_object_get(data, "status"));
        json_object_set_new(c->finished, json_string_value(json_object_get(data, "node_id")),
                            json_deep_copy(data));
    } else if (!strcmp(event, "text_chunk")) {
        const sl_value *t = json_object_get(data, "text");
        sl_buf_add(&c->streamed, json_string_value(t), json_string_length(t));
        c->chunks++;
    }
}

typedef struct {
    sl_run *r;
    int ms;
} canceller;

static void *cancel_main(void *arg)
{
    canceller *c = arg;
    struct timespec ts = {c->ms / 1000, (long)(c->ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    sl_run_cancel(c->r);
    return NULL;
}

/* Appends a failure reason. */
static void why(sl_buf *b, const char *fmt, const sl_value *want, const sl_value *got)
{
    char *w = show(want), *g = show(got);
    sl_buf_addf(b, fmt, w, g);
    sl_buf_adds(b, "; ");
    free(w);
    free(g);
}

static bool subset_equal(const sl_value *want, const sl_value *got)
{
    const char *k;
    sl_value *v;
    json_object_foreach((sl_value *)want, k, v) {
        if (!sl_value_equal(v, json_object_get(got, k)))
            return false;
    }
    return true;
}

/* node_files: {node: [{filename, mime_type, type, …, magic: "89504e47"}]}:
 * the node's `files` output, each file stored in the run's folder with the
 * size and sha256 its value says, starting with the magic bytes (hex). */
static void check_files(sl_buf *fail, sl_run *r, const sl_value *want, const sl_value *finished)
{
    const char *node;
    const sl_value *list;
    json_object_foreach((sl_value *)want, node, list) {
        const sl_value *got = json_object_get(
            json_object_get(json_object_get(finished, node), "outputs"), "files");
        if (json_array_size(got) != json_array_size(list) || !json_is_array(got)) {
            why(fail, "files: want %s, got %s", list, got);
            continue;
        }
        for (size_t i = 0; i < json_array_size(list); i++) {
            const sl_value *w = json_array_get(list, i), *f = json_array_get(got, i);
            const char *k;
            const sl_value *v;
            json_object_foreach((sl_value *)w, k, v) {
                if (!strcmp(k, "magic"))
                    continue;
                if (!sl_value_equal(v, json_object_get(f, k)))
                    why(fail, "file: want %s, got %s", w, f);
            }
            sl_err fe = {0};
            int fd = sl_run_file_open(r, f, &fe);
            sl_err_clear(&fe);
            sl_buf fb;
            sl_buf_init(&fb, 0);
            char chunk[65536];
            ssize_t got_n;
            while (fd >= 0 && (got_n = read(fd, chunk, sizeof chunk)) > 0)
                sl_buf_add(&fb, chunk, (size_t)got_n);
            if (fd >= 0)
                close(fd);
            if (fd < 0) {
                sl_buf_release(&fb);
                sl_buf_addf(fail, "file %zu of %s is not in the run's file table; ", i, node);
                continue;
            }
            size_t n = fb.len;
            char *bytes = fb.data ? sl_buf_detach(&fb) : sl_xstrdup("");
            char sha[65];
            sl_sha256_hex(bytes, n, sha);
            const char *vs = json_string_value(json_object_get(f, "sha256"));
            if (!vs || strcmp(vs, sha) ||
                (size_t)json_integer_value(json_object_get(f, "size")) != n)
                sl_buf_addf(fail, "file %zu of %s: stored bytes do not match its size/sha256; ",
                            i, node);
            const char *magic = json_string_value(json_object_get(w, "magic"));
            for (size_t j = 0; magic && magic[2 * j] && magic[2 * j + 1]; j++) {
                unsigned byte;
                if (sscanf(magic + 2 * j, "%2x", &byte) != 1 || j >= n ||
                    (unsigned char)bytes[j] != byte) {
                    sl_buf_addf(fail, "file %zu of %s does not start with %s; ", i, node, magic);
                    break;
                }
            }
            free(bytes);
        }
    }
}

static void run_entry(const char *file, const sl_graph *g, const sl_config *cfg,
                      const sl_value *t)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    const sl_value *ex = json_object_get(t, "expect");
    sl_buf fail;
    sl_buf_init(&fail, 1 << 20);
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.limits.workers = 4;
    o.config = cfg;
    sl_err err = {0};
    const sl_value *lim = json_object_get(t, "limits");
    const char *k;
    sl_value *v;
    json_object_foreach((sl_value *)lim, k, v) {
        sl_buf a;
        sl_buf_init(&a, 0);
        sl_buf_addf(&a, "%s=", k);
        sl_value_text(v, &a);
        if (sl_limits_set(&o.limits, a.data, &err) < 0) {
            sl_buf_addf(&fail, "bad limits: %s; ", err.msg);
            sl_err_clear(&err);
        }
        sl_buf_release(&a);
    }
    sl_value *given = expand_value(json_object_get(t, "inputs"));
    sl_value *env = expand_value(json_object_get(t, "env"));
    sl_value *conv = expand_value(json_object_get(t, "conversation"));
    const char *query = json_string_value(json_object_get(t, "query"));
    o.history = json_object_get(t, "history");
    sl_diag d;
    sl_diag_init(&d);
    sl_value *inputs = NULL;
    collect col = {json_object(), json_object(), {0}, 0, json_object(), json_array(),
                   json_array(), json_array()};
    sl_buf_init(&col.streamed, 0);
    sl_llm_tape *tape = NULL;
    reset_llmd();
    if (sl_run_prepare_inputs(g, given, &inputs, &d) < 0) {
        const sl_value *ie = json_object_get(ex, "input_errors");
        if (!ie)
            sl_buf_addf(&fail, "inputs refused: %s; ", d.n ? d.v[0].msg : "?");
        for (size_t i = 0; i < json_array_size(ie); i++) {
            bool found = false;
            for (size_t j = 0; j < d.n; j++)
                found |= strstr(d.v[j].msg, json_string_value(json_array_get(ie, i))) != NULL;
            if (!found)
                sl_buf_addf(&fail, "no input error contains '%s'; ",
                            json_string_value(json_array_get(ie, i)));
        }
        goto report;
    }
    if (json_object_get(ex, "input_errors"))
        sl_buf_adds(&fail, "inputs were accepted but errors were expected; ");
    o.inputs = inputs;
    o.env_override = env;
    o.conversation = conv;
    o.query = query;
    o.user_id = json_string_value(json_object_get(t, "user"));  /* sys.user_id */
    o.on_event = on_event;
    o.event_ud = &col;
    const sl_value *tp = json_object_get(t, "tape");
    const char *tpath = json_string_value(json_object_get(tp, "replay"));
    bool replay = tpath != NULL;
    if (!tpath)
        tpath = json_string_value(json_object_get(tp, "record"));
    if (tpath && sl_llm_tape_open(tpath, replay, &tape, &err)) {
        sl_buf_addf(&fail, "tape: %s; ", err.msg);
        sl_err_clear(&err);
    }
    o.llm_tape = tape;
    sl_run *r = sl_run_new(g, &o);
    pthread_t ct;
    canceller cc = {r, (int)json_integer_value(json_object_get(t, "cancel_after_ms"))};
    bool cancel = cc.ms > 0 && pthread_create(&ct, NULL, cancel_main, &cc) == 0;
    sl_run_exec(r, &err);
    if (cancel)
        pthread_join(ct, NULL);
    const char *st = sl_run_status_name(sl_run_status_of(r));
    const char *want_st = json_string_value(json_object_get(ex, "status"));
    if (want_st && strcmp(want_st, st))
        sl_buf_addf(&fail, "status: want %s, got %s (error: %s); ", want_st, st,
                    sl_run_error(r) ? sl_run_error(r) : "none");
    /* max_elapsed_s: the run ended within this (a stop or deadline that works) */
    const sl_value *me = json_object_get(ex, "max_elapsed_s");
    if (me && sl_run_elapsed(r) > sl_value_number(me))
        sl_buf_addf(&fail, "elapsed: want at most %g s, took %.2f s; ", sl_value_number(me),
                    sl_run_elapsed(r));
    const sl_value *wo = json_object_get(ex, "outputs");
    sl_value *wox = wo ? expand_value(wo) : NULL;
    if (wox && !sl_value_equal(wox, sl_run_outputs(r)))
        why(&fail, "outputs: want %s, got %s", wox, sl_run_outputs(r));
    json_decref(wox);
    const sl_value *ws = json_object_get(ex, "outputs_subset");
    sl_value *wsx = ws ? expand_value(ws) : NULL;
    if (wsx && !subset_equal(wsx, sl_run_outputs(r)))
        why(&fail, "outputs_subset: want %s, got %s", wsx, sl_run_outputs(r));
    json_decref(wsx);
    const char *ec = json_string_value(json_object_get(ex, "error_contains"));
    if (ec && (!sl_run_error(r) || !strstr(sl_run_error(r), ec)))
        sl_buf_addf(&fail, "error: want text '%s', got '%s'; ", ec,
                    sl_run_error(r) ? sl_run_error(r) : "(none)");
    const sl_value *wn = json_object_get(ex, "nodes");
    json_object_foreach((sl_value *)wn, k, v) {
        const char *got = json_string_value(json_object_get(col.status, k));
        if (!got)
            got = "skipped";
        if (strcmp(got, json_string_value(v) ? json_string_value(v) : ""))
            sl_buf_addf(&fail, "node %s: want %s, got %s; ", k, json_string_value(v), got);
    }
    const char *wa = json_string_value(json_object_get(ex, "answer"));
    if (wa) {
        const char *ga = json_string_value(json_object_get(sl_run_outputs(r), "answer"));
        if (!ga || strcmp(wa, ga))
            sl_buf_addf(&fail, "answer: want '%s', got '%s'; ", wa, ga ? ga : "(none)");
    }
    const sl_value *wc = json_object_get(ex, "conversation");
    if (wc && !subset_equal(wc, sl_run_conversation(r)))
        why(&fail, "conversation: want %s, got %s", wc, sl_run_conversation(r));
    /* node outputs / process data / metadata, each a subset */
    const sl_value *wno = json_object_get(ex, "node_outputs");
    json_object_foreach((sl_value *)wno, k, v) {
        const sl_value *got = json_object_get(json_object_get(col.finished, k), "outputs");
        if (!subset_equal(v, got))
            why(&fail, "node outputs: want %s, got %s", v, got);
    }
    const sl_value *wnp = json_object_get(ex, "node_process");
    json_object_foreach((sl_value *)wnp, k, v) {
        const sl_value *got = json_object_get(json_object_get(col.finished, k), "process_data");
        if (!subset_equal(v, got))
            why(&fail, "node process_data: want %s, got %s", v, got);
    }
    const sl_value *wnm = json_object_get(ex, "node_metadata");
    json_object_foreach((sl_value *)wnm, k, v) {
        const sl_value *got = json_object_get(json_object_get(col.finished, k), "execution_metadata");
        if (!subset_equal(v, got))
            why(&fail, "node metadata: want %s, got %s", v, got);
    }
    const char *wsd = json_string_value(json_object_get(ex, "streamed"));
    if (wsd && (col.streamed.len != strlen(wsd) || memcmp(col.streamed.data, wsd, col.streamed.len)))
        sl_buf_addf(&fail, "streamed: want '%s', got '%.*s'; ", wsd, (int)col.streamed.len,
                    col.streamed.data ? col.streamed.data : "");
    /* trace / chunks: the exact sequence of node and text_chunk events, or
     * of text_chunk events alone */
    const sl_value *wt = json_object_get(ex, "trace");
    if (wt && !sl_value_equal(wt, col.trace))
        why(&fail, "trace: want %s, got %s", wt, col.trace);
    const sl_value *wch = json_object_get(ex, "chunks");
    if (wch && !sl_value_equal(wch, col.chunk_lines))
        why(&fail, "chunks: want %s, got %s", wch, col.chunk_lines);
    const sl_value *wcm = json_object_get(ex, "chunks_min");
    if (json_is_integer(wcm) && col.chunks < json_integer_value(wcm))
        sl_buf_addf(&fail, "text_chunk events: want at least %lld, got %d; ",
                    (long long)json_integer_value(wcm), col.chunks);
    /* events_min: {event: n} */
    json_object_foreach((sl_value *)json_object_get(ex, "events_min"), k, v) {
        long long got = json_integer_value(json_object_get(col.counts, k));
        if (got < json_integer_value(v))
            sl_buf_addf(&fail, "%s events: want at least %lld, got %lld; ", k,
                        (long long)json_integer_value(v), got);
    }
    /* agent_log_contains: [text, …] each in some agent_log event's JSON */
    const sl_value *alc = json_object_get(ex, "agent_log_contains");
    char *logs = json_dumps(col.logs, JSON_COMPACT);
    for (size_t i = 0; i < json_array_size(alc); i++) {
        const char *want = json_string_value(json_array_get(alc, i));
        if (want && (!logs || !strstr(logs, want)))
            sl_buf_addf(&fail, "no agent_log event contains '%s'; ", want);
    }
    free(logs);
    check_files(&fail, r, json_object_get(ex, "node_files"), col.finished);
    /* seen_contains: [text, …] each in the output `seen` (a downstream
     * node's view of what came before, e.g. an LLM echoing its prompt) */
    const sl_value *sc = json_object_get(ex, "seen_contains");
    const char *seen = json_string_value(json_object_get(sl_run_outputs(r), "seen"));
    for (size_t i = 0; i < json_array_size(sc); i++) {
        const char *want = json_string_value(json_array_get(sc, i));
        if (want && (!seen || !strstr(seen, want)))
            sl_buf_addf(&fail, "output seen does not contain '%s' (seen: %.300s); ", want,
                        seen ? seen : "(none)");
    }
    sl_run_free(r);
report:
    CHECK(fail.len == 0, "%s: %s%s%s", file, name ? name : "(unnamed)", fail.len ? " # " : "",
          fail.len ? fail.data : "");
    sl_buf_release(&fail);
    json_decref(col.status);
    json_decref(col.finished);
    json_decref(col.counts);
    json_decref(col.logs);
    json_decref(col.trace);
    json_decref(col.chunk_lines);
    sl_buf_release(&col.streamed);
    sl_llm_tape_close(tape);
    json_decref(inputs);
    json_decref(given);
    json_decref(env);
    json_decref(conv);
    sl_diag_release(&d);
    sl_err_clear(&err);
}

static void run_file(const char *file)
{
    size_t len = 0;
    char *text = slurp(file, &len);
    if (!text) {
        CHECK(0, "%s: cannot open", file);
        return;
    }
    sl_yaml_doc doc;
    sl_err err = {0};
    if (sl_yaml_parse(text, len, file, &doc, &err) < 0) {
        CHECK(0, "%s: %s", file, err.msg);
        sl_err_clear(&err);
        free(text);
        return;
    }
    if (strstr(text, "type: llm") || strstr(text, "type: parameter-extractor") ||
        strstr(text, "type: agent") ||
        strstr(text, "type: question-classifier") || strstr(text, "LLMD_URL"))
        start_llmd_once();
    /* sluice_config: the config file this case file runs with */
    const sl_value *sc = json_object_get(doc.root, "sluice_config");
    char cfgpath[] = "/tmp/sluice-case-config-XXXXXX";
    bool own_config = false;
    sl_config *own = NULL;
    if (sc) {
        int fd = mkstemp(cfgpath);
        sl_value *x = expand_value(sc);
        char *json = json_dumps(x, JSON_COMPACT); /* JSON is YAML */
        json_decref(x);
        if (fd >= 0 && json && write(fd, json, strlen(json)) == (ssize_t)strlen(json)) {
            own_config = true;
            if (sl_config_load(cfgpath, &own, &err)) {
                CHECK(0, "%s: sluice_config: %s", file, err.msg);
                sl_err_clear(&err);
            }
        }
        if (fd >= 0)
            close(fd);
        free(json);
    }
    const sl_value *tests = json_object_get(doc.root, "sluice_test");
    if (!json_is_array(tests) || json_array_size(tests) == 0) {
        CHECK(0, "%s: no sluice_test entries", file);
        goto out;
    }
    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    const sl_config *cfg = own ? own : base_config();
    int rc = sl_graph_load_text(&g, &sl_nodes, cfg, text, len, file, &d, &err);
    /* sluice_app_dir: the app's files (skills/ …), relative to the repo */
    const char *ad = json_string_value(json_object_get(doc.root, "sluice_app_dir"));
    if (rc == 0 && ad)
        g.app_dir = realpath(ad, NULL);
    for (size_t i = 0; i < json_array_size(tests); i++) {
        const sl_value *t = json_array_get(tests, i);
        const sl_value *le = json_object_get(json_object_get(t, "expect"), "load_errors");
        const char *name = json_string_value(json_object_get(t, "name"));
        if (le) {
            sl_buf why_b;
            sl_buf_init(&why_b, 0);
            if (rc == 0)
                sl_buf_adds(&why_b, "the workflow loaded but errors were expected");
            for (size_t j = 0; j < json_array_size(le); j++) {
                const char *want = json_string_value(json_array_get(le, j));
                bool found = false;
                for (size_t e = 0; want && e < d.n; e++)
                    found |= !d.v[e].warning && strstr(d.v[e].msg, want) != NULL;
                if (!found)
                    sl_buf_addf(&why_b, "no load error contains '%s' (errors: %s) ",
                                want ? want : "?", d.n ? d.v[0].msg : "none");
            }
            CHECK(why_b.len == 0, "%s: %s%s%s", file, name ? name : "(unnamed)",
                  why_b.len ? " # " : "", why_b.len ? why_b.data : "");
            sl_buf_release(&why_b);
        } else if (rc < 0) {
            CHECK(0, "%s: %s # load failed: %s", file, name ? name : "(unnamed)",
                  d.n ? d.v[0].msg : err.msg);
        } else {
            /* load_warnings: [text, …] each in some load warning */
            const sl_value *lw = json_object_get(json_object_get(t, "expect"), "load_warnings");
            for (size_t j = 0; j < json_array_size(lw); j++) {
                const char *want = json_string_value(json_array_get(lw, j));
                bool found = false;
                for (size_t e = 0; want && e < d.n; e++)
                    found |= d.v[e].warning && strstr(d.v[e].msg, want) != NULL;
                CHECK(found, "%s: %s: a load warning says '%s'", file, name ? name : "(unnamed)",
                      want ? want : "?");
            }
            run_entry(file, &g, cfg, t);
        }
    }
    sl_diag_release(&d);
    sl_graph_release(&g);
out:
    if (own_config)
        unlink(cfgpath);
    sl_config_free(own);
    sl_err_clear(&err);
    sl_yaml_doc_release(&doc);
    free(text);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        CHECK(0, "%s: not found", path);
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *dir = opendir(path);
    if (!dir)
        return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        names = sl_xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = sl_xasprintf("%s/%s", path, de->d_name);
    }
    closedir(dir);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        struct stat s2;
        size_t len = strlen(names[i]);
        /* an apps/ folder holds apps cases call (workflow tools), not cases */
        bool apps = len >= 5 && !strcmp(names[i] + len - 5, "/apps");
        if (stat(names[i], &s2) == 0 && !(S_ISDIR(s2.st_mode) && apps) &&
            (S_ISDIR(s2.st_mode) || (len > 4 && !strcmp(names[i] + len - 4, ".yml"))))
            walk(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    /* document-extractor nodes read documents with the built sluice */
    if (built_sluice())
        sl_extract_set_helper(built_sluice());
    /* ${CASES_DIR}: the cases folder as an absolute path, for settings that
     * name files (sluice_config is written to /tmp, so a relative path
     * there would be read from /tmp) */
    char *cases_dir = realpath("tests/cases", NULL);
    if (cases_dir && !getenv("CASES_DIR"))
        setenv("CASES_DIR", cases_dir, 1);
    free(cases_dir);
    if (argc < 2)
        walk("tests/cases");
    for (int i = 1; i < argc; i++)
        walk(argv[i]);
    if (httpd_in)
        fclose(httpd_in);
    stop_httpd();
    sl_config_free(env_config);
    return tap_done();
}
