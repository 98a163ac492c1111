/*
 * kb_cmd — `sluice kb`: knowledge bases in the store (knowledge/kb.h).
 *
 *   sluice kb create NAME [--embedding PROVIDER/MODEL] [--search METHOD] ...
 *   sluice kb add NAME FILE|DIR... [--meta K=V]... [--rule JSON]
 *   sluice kb list | show NAME | rm NAME
 *   sluice kb search NAME QUERY [--mode vector|keyword|hybrid] [--top-k N]
 *   sluice kb field add NAME FIELD string|number|time
 *   sluice kb key create | key list | key revoke KEY_ID
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/buf.h"
#include "core/opt.h"
#include "engine/config.h"
#include "engine/limits.h"
#include "knowledge/kb.h"
#include "llm/llm.h"
#include "store/store.h"

enum { O_DATA = 1, O_CONFIG, O_EMBED, O_SEARCH, O_FORM, O_RULE, O_DESC, O_META, O_MODE,
       O_TOPK, O_THRESHOLD, O_JSON, O_RECORD, O_REPLAY, O_EXACT, O_WEIGHTS, O_FILTER, O_LIMIT, O_RERANK };

static const sl_opt kb_opts[] = {
    {"--embedding", NULL, "PROVIDER/MODEL", "create: the embedding model (else keywords only,\n"
                                            "Dify's 'economy')", O_EMBED},
    {"--search", NULL, "METHOD", "create: semantic_search (default with an embedding),\n"
                                 "full_text_search or hybrid_search", O_SEARCH},
    {"--doc-form", NULL, "text|parent-child", "create: how documents are chunked", O_FORM},
    {"--description", NULL, "TEXT", "create: what the knowledge base holds (the model\n"
                                    "reads it when it picks one)", O_DESC},
    {"--rule", NULL, "JSON", "create, add: Dify's process_rule (default automatic)", O_RULE},
    {"--meta", NULL, "KEY=VALUE", "add: a metadata value of the documents; repeatable", O_META},
    {"--mode", NULL, "vector|keyword|hybrid", "search: the channel (default the knowledge\n"
                                              "base's)", O_MODE},
    {"--top-k", NULL, "N", "search: how many chunks (default the knowledge base's)", O_TOPK},
    {"--threshold", NULL, "SCORE", "search: the lowest score kept (0..1)", O_THRESHOLD},
    {"--weights", NULL, "V,K", "search, hybrid: vector and keyword weights (e.g. 0.7,0.3)",
     O_WEIGHTS},
    {"--filter", NULL, "JSON", "search: Dify's metadata_filtering_conditions\n"
                               "({\"logical_operator\": \"and\", \"conditions\": [{\"name\",\n"
                               "\"comparison_operator\", \"value\"}]})", O_FILTER},
    {"--rerank", NULL, "PROVIDER/MODEL", "search: rerank the chunks found with this model\n"
                                         "(Jina/Cohere /rerank)", O_RERANK},
    {"--exact", NULL, NULL, "search: scan every vector (no approximate index)", O_EXACT},
    {"--json", NULL, NULL, "print JSON (Dify's objects) instead of text", O_JSON},
    {"--record", NULL, "FILE", "append every model exchange to FILE", O_RECORD},
    {"--replay", NULL, "FILE", "answer model calls from FILE (no network)", O_REPLAY},
    {"--limit", NULL, "NAME=VALUE", "a limit (knowledge_max_input, knowledge_max_chunks,\n"
                                    "knowledge_embed_batch, extract_*; see `sluice limits`);\n"
                                    "SLUICE_<NAME> environment variables work too", O_LIMIT},
    {"--config", NULL, "FILE", "the settings (default $SLUICE_CONFIG, else ./sluice.yml)",
     O_CONFIG},
    {"--data", "--store", "DIR|URL", "the store: a folder, sqlite:FOLDER or postgres://…\n"
     "(default $SLUICE_STORE, else $SLUICE_DATA, else ./sluice-data)", O_DATA},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec kb_spec = {
    "sluice kb",
    "usage: sluice kb create NAME [--embedding PROVIDER/MODEL] [--search METHOD]\n"
    "       sluice kb add NAME FILE|DIR... [--meta KEY=VALUE]...\n"
    "       sluice kb list | show NAME | rm NAME\n"
    "       sluice kb search NAME QUERY [--mode vector|keyword|hybrid] [--top-k N]\n"
    "       sluice kb field add NAME FIELD string|number|time\n"
    "       sluice kb key create | key list | key revoke KEY_ID\n"
    "Knowledge bases for knowledge-retrieval nodes and Dify's Knowledge API.\n"
    "Adding a file again replaces its chunks when it changed, and skips it\n"
    "when it did not, so an interrupted `kb add` resumes where it stopped.\n\n",
    kb_opts,
    "\nSee docs/knowledge.md.\n",
    false,
};

typedef struct {
    const char *data, *config, *embed, *search, *form, *rule, *desc, *mode, *record, *replay,
        *weights, *filter, *rerank;
    int top_k;
    double threshold;
    bool has_threshold, json, exact;
    const char *args[8];
    int nargs;
    struct sl_limits limits;
    sl_value *meta;
} kb_args;

static int on_opt(void *ud, int id, const char *v)
{
    kb_args *a = ud;
    char *end;
    switch (id) {
    case SL_OPT_ARG:
        if (a->nargs == 8) {
            fprintf(stderr, "sluice kb: too many words (at '%s')\n", v);
            return -1;
        }
        a->args[a->nargs++] = v;
        return 0;
    case O_DATA: return sl_cli_set_store("sluice kb", &a->data, v);
    case O_CONFIG: a->config = v; return 0;
    case O_EMBED: a->embed = v; return 0;
    case O_SEARCH: a->search = v; return 0;
    case O_FORM: a->form = v; return 0;
    case O_RULE: a->rule = v; return 0;
    case O_DESC: a->desc = v; return 0;
    case O_MODE: a->mode = v; return 0;
    case O_RECORD: a->record = v; return 0;
    case O_REPLAY: a->replay = v; return 0;
    case O_WEIGHTS: a->weights = v; return 0;
    case O_FILTER: a->filter = v; return 0;
    case O_RERANK: a->rerank = v; return 0;
    case O_LIMIT: {
        sl_err e = {0};
        if (sl_limits_set(&a->limits, v, &e) < 0) {
            fprintf(stderr, "sluice kb: --limit: %s\n", e.msg);
            sl_err_clear(&e);
            return -1;
        }
        return 0;
    }
    case O_JSON: a->json = true; return 0;
    case O_EXACT: a->exact = true; return 0;
    case O_TOPK:
        a->top_k = (int)strtol(v, &end, 10);
        if (*end || a->top_k < 1 || a->top_k > 1000) {
            fprintf(stderr, "sluice kb: --top-k: a number from 1 to 1000, not '%s'\n", v);
            return -1;
        }
        return 0;
    case O_THRESHOLD:
        a->threshold = strtod(v, &end);
        if (*end || a->threshold < 0 || a->threshold > 1) {
            fprintf(stderr, "sluice kb: --threshold: a score from 0 to 1, not '%s'\n", v);
            return -1;
        }
        a->has_threshold = true;
        return 0;
    case O_META: {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v) {
            fprintf(stderr, "sluice kb: --meta: KEY=VALUE, not '%s'\n", v);
            return -1;
        }
        if (!a->meta)
            a->meta = json_object();
        char *key = sl_xstrndup(v, (size_t)(eq - v));
        char *end2;
        double num = strtod(eq + 1, &end2);
        json_object_set_new(a->meta, key,
                            eq[1] && !*end2 ? json_real(num) : json_string(eq + 1));
        free(key);
        return 0;
    }
    }
    return -1;
}

static void print_json(const sl_value *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    puts(s ? s : "null");
    free(s);
}

/* Says what went wrong; the exit status: 3 for a thing that is not
 * there, else 1.  The error is cleared. */
static int fail(const char *what, sl_err *err)
{
    fprintf(stderr, "sluice kb %s: %s\n", what, err->msg ? err->msg : "failed");
    int rc = err->code == SL_ENOTFOUND ? 3 : 1;
    sl_err_clear(err);
    return rc;
}

/* ---- kb add: files and folders, with progress ---- */

static volatile sig_atomic_t interrupted;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static bool cancelled(void *ud)
{
    (void)ud;
    return interrupted != 0;
}

typedef struct {
    const kb_args *a;
    const sl_value *rule;
    char **files;
    size_t count;
    bool tty;
    size_t added, same, failed;
    sl_buf *bytes;        /* per file, while it is loaded */
    char **real;
    struct doc_ctx {
        const char *name;
        size_t index, count;
        bool tty;
    } *ctx;
} add_run;

/* Progress of one document, from whichever thread works on it. */
static void progress(const char *stage, size_t done, size_t total, void *ud)
{
    struct doc_ctx *p = ud;
    if (!p->tty)
        return;
    int width = 24, filled = total ? (int)((double)done / (double)total * width) : 0;
    pthread_mutex_lock(&print_mu);
    fprintf(stderr, "\r[%zu/%zu] %-10s [", p->index, p->count, stage);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : '.', stderr);
    fprintf(stderr, "] %zu/%zu %.30s\033[K", done, total, p->name);
    fflush(stderr);
    pthread_mutex_unlock(&print_mu);
}

/* A file's bytes (at most cap). */
static int read_file(const char *path, sl_buf *out, size_t cap, sl_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_err_set(err, SL_EIO, "cannot open: %s", strerror(errno));
    char buf[1 << 16];
    ssize_t n;
    int rc = 0;
    while (!rc && (n = read(fd, buf, sizeof buf)) > 0) {
        if (out->len + (size_t)n > cap)
            rc = sl_err_set(err, SL_ELIMIT, "larger than %zu MiB; split it first", cap >> 20);
        else if (sl_buf_add(out, buf, (size_t)n))
            rc = sl_err_set(err, SL_ENOMEM, "out of memory");
    }
    if (!rc && n < 0)
        rc = sl_err_set(err, SL_EIO, "cannot read: %s", strerror(errno));
    close(fd);
    return rc;
}

static int load(size_t i, sl_kb_doc_in *in, void *ud, sl_err *err)
{
    add_run *r = ud;
    const char *base = strrchr(r->files[i], '/');
    base = base ? base + 1 : r->files[i];
    r->ctx[i] = (struct doc_ctx){.name = base, .index = i + 1, .count = r->count, .tty = r->tty};
    sl_buf_init(&r->bytes[i], 0);
    if (read_file(r->files[i], &r->bytes[i], (size_t)512 << 20, err)) {
        sl_buf_release(&r->bytes[i]);
        return -1;
    }
    r->real[i] = realpath(r->files[i], NULL);
    *in = (sl_kb_doc_in){.name = base, .bytes = r->bytes[i].data ? r->bytes[i].data : "",
                         .len = r->bytes[i].len, .metadata = r->a->meta,
                         .process_rule = r->rule, .doc_form = r->a->form,
                         .source = r->real[i] ? r->real[i] : r->files[i],
                         .progress = progress, .cancelled = cancelled, .ud = &r->ctx[i]};
    return 0;
}

static void unload(size_t i, sl_kb_doc_in *in, void *ud)
{
    add_run *r = ud;
    (void)in;
    sl_buf_release(&r->bytes[i]);
    free(r->real[i]);
    r->real[i] = NULL;
}

static bool done(size_t i, int rc, const sl_value *doc, bool unchanged, const sl_err *err,
                 void *ud)
{
    add_run *r = ud;
    if (rc) {
        pthread_mutex_lock(&print_mu);
        fprintf(stderr, "%ssluice kb add: %s: %s\n", r->tty ? "\r\033[K" : "", r->files[i],
                err->msg);
        pthread_mutex_unlock(&print_mu);
        r->failed++;
        /* a knowledge base that is not there fails every file the same way */
        return interrupted || err->code == SL_ECANCELED ||
               !strcmp(err->msg, "Dataset not found.");
    }
    if (unchanged) {
        r->same++;
    } else {
        r->added++;
        if (r->a->json)
            print_json(doc);
    }
    return interrupted != 0;
}

static void collect(const char *path, char ***files, size_t *n, int depth)
{
    struct stat sb;
    if (stat(path, &sb))
        return;
    if (S_ISREG(sb.st_mode)) {
        *files = sl_xrealloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = sl_xstrdup(path);
        return;
    }
    if (!S_ISDIR(sb.st_mode) || depth > 32)
        return;
    struct dirent **ents;
    int k = scandir(path, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        if (ents[i]->d_name[0] != '.') {
            char *sub = sl_xasprintf("%s/%s", path, ents[i]->d_name);
            collect(sub, files, n, depth + 1);
            free(sub);
        }
        free(ents[i]);
    }
    if (k >= 0)
        free(ents);
}

static int kb_add_files(sl_kb *k, const char *kb, const kb_args *a, sl_value *rule)
{
    char **files = NULL;
    size_t n = 0;
    for (int i = 2; i < a->nargs; i++) {
        struct stat sb;
        if (stat(a->args[i], &sb)) {
            fprintf(stderr, "sluice kb add: %s: no such file or folder\n", a->args[i]);
            for (size_t j = 0; j < n; j++)
                free(files[j]);
            free(files);
            return 2;
        }
        collect(a->args[i], &files, &n, 0);
    }
    if (!n) {
        fprintf(stderr, "sluice kb add: no files to add (hidden files are skipped)\n");
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    add_run r = {.a = a, .rule = rule, .files = files, .count = n, .tty = isatty(2) != 0,
                 .bytes = sl_xcalloc(n, sizeof(sl_buf)), .real = sl_xcalloc(n, sizeof(char *)),
                 .ctx = sl_xcalloc(n, sizeof *r.ctx)};
    sl_kb_feed feed = {.load = load, .unload = unload, .done = done, .ud = &r};
    sl_kb_add_all(k, kb, n, &feed);
    if (r.tty)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "%zu added, %zu unchanged, %zu failed%s\n", r.added, r.same, r.failed,
            interrupted ? " (interrupted: run the same command again to resume)" : "");
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(r.bytes);
    free(r.real);
    free(r.ctx);
    return interrupted ? 130 : r.failed ? 1 : 0;
}

/* ---- kb search ---- */

static void print_records(const sl_value *recs)
{
    size_t i;
    sl_value *r;
    json_array_foreach((sl_value *)recs, i, r) {
        const sl_value *s = json_object_get(r, "segment");
        const sl_value *d = json_object_get(s, "document");
        printf("%zu. %.4f  %s #%lld\n", i + 1, json_number_value(json_object_get(r, "score")),
               json_string_value(json_object_get(d, "name")),
               (long long)json_integer_value(json_object_get(s, "position")));
        const char *c = json_string_value(json_object_get(s, "content"));
        printf("   %.300s%s\n", c ? c : "", c && strlen(c) > 300 ? "…" : "");
    }
    if (!json_array_size(recs))
        printf("no chunk matched\n");
}

static int kb_search(sl_kb *k, const kb_args *a)
{
    sl_err err = {0};
    sl_kb_query q = {0};
    if (sl_kb_query_defaults(k, a->args[1], &q, &err))
        return fail("search", &err);
    q.query = a->args[2];
    if (a->mode) {
        q.method = !strcmp(a->mode, "vector")    ? "semantic_search"
                   : !strcmp(a->mode, "keyword") ? "full_text_search"
                   : !strcmp(a->mode, "hybrid")  ? "hybrid_search"
                                                 : NULL;
        if (!q.method) {
            fprintf(stderr, "sluice kb search: --mode: vector, keyword or hybrid, not '%s'\n",
                    a->mode);
            return 2;
        }
    }
    if (a->top_k)
        q.top_k = a->top_k;
    if (a->has_threshold) {
        q.threshold_enabled = true;
        q.score_threshold = a->threshold;
    }
    if (a->weights) {
        char *end;
        q.vector_weight = strtod(a->weights, &end);
        q.keyword_weight = *end == ',' ? strtod(end + 1, &end) : -1;
        if (*end || q.vector_weight < 0 || q.keyword_weight < 0) {
            fprintf(stderr, "sluice kb search: --weights: V,K (e.g. 0.7,0.3), not '%s'\n",
                    a->weights);
            return 2;
        }
        q.reranking_mode = "weighted_score";
    }
    q.exact = a->exact;
    char *rprov = NULL;
    if (a->rerank) {
        const char *slash = strrchr(a->rerank, '/');
        if (!slash || slash == a->rerank || !slash[1]) {
            fprintf(stderr, "sluice kb search: --rerank: PROVIDER/MODEL, not '%s'\n", a->rerank);
            return 2;
        }
        rprov = sl_xstrndup(a->rerank, (size_t)(slash - a->rerank));
        q.reranking_mode = "reranking_model";
        q.rerank_provider = rprov;
        q.rerank_model = slash + 1;
    }
    sl_value *filter = NULL;
    if (a->filter) {
        json_error_t je;
        filter = json_loads(a->filter, 0, &je);
        if (!json_is_object(filter) || !json_is_array(json_object_get(filter, "conditions"))) {
            fprintf(stderr, "sluice kb search: --filter: {\"logical_operator\": \"and\","
                            " \"conditions\": [...]}%s%s\n", filter ? "" : ": ",
                    filter ? "" : je.text);
            json_decref(filter);
            free(rprov);
            return 2;
        }
        q.conditions = filter;
    }
    sl_value *recs;
    long long tokens;
    int rc = sl_kb_search(k, a->args[1], &q, &recs, &tokens, &err);
    json_decref(filter);
    free(rprov);
    if (rc)
        return fail("search", &err);
    if (a->json)
        print_json(recs);
    else
        print_records(recs);
    json_decref(recs);
    return 0;
}

static sl_value *read_rule(const char *text, int *rc)
{
    if (!text)
        return NULL;
    json_error_t je;
    sl_value *v = json_loads(text, JSON_DECODE_ANY, &je);
    if (!json_is_object(v)) {
        fprintf(stderr, "sluice kb: --rule: a JSON object (Dify's process_rule): %s\n",
                v ? "not an object" : je.text);
        json_decref(v);
        *rc = 2;
    }
    return v;
}

static int need(const kb_args *a, int n, const char *usage)
{
    if (a->nargs == n)
        return 0;
    fprintf(stderr, "usage: sluice kb %s\n", usage);
    return 2;
}

static int kb_key(sl_store *s, const kb_args *a)
{
    sl_err err = {0};
    const char *verb = a->nargs > 1 ? a->args[1] : "";
    if (!strcmp(verb, "create") && a->nargs == 2) {
        char *key;
        if (sl_store_dataset_key_create(s, &key, &err))
            return fail("key create", &err);
        puts(key);
        free(key);
        return 0;
    }
    if (!strcmp(verb, "list") && a->nargs == 2) {
        sl_value *keys;
        if (sl_store_key_list(s, SL_STORE_DATASETS, &keys, &err))
            return fail("key list", &err);
        print_json(keys);
        json_decref(keys);
        return 0;
    }
    if (!strcmp(verb, "revoke") && a->nargs == 3)
        return sl_store_key_revoke(s, a->args[2], &err) ? fail("key revoke", &err) : 0;
    fprintf(stderr, "usage: sluice kb key create | key list | key revoke KEY_ID\n");
    return 2;
}

int sl_cli_kb(int argc, char **argv)
{
    kb_args a = {0};
    sl_limits_default(&a.limits);
    sl_err lerr = {0};
    if (sl_limits_from_env(&a.limits, &lerr)) {
        fprintf(stderr, "sluice kb: %s\n", lerr.msg);
        sl_err_clear(&lerr);
        return 2;
    }
    int prc = sl_opt_parse(&kb_spec, argc, argv, 1, on_opt, &a, NULL);
    if (prc == SL_OPT_HELP)
        return 0;
    if (prc != SL_OPT_OK || !a.nargs) {
        if (prc == SL_OPT_OK)
            sl_opt_usage(&kb_spec, stderr);
        json_decref(a.meta);
        return 2;
    }
    const char *verb = a.args[0];
    static const char *const verbs[] = {"create", "add", "list", "show", "rm", "search", "field",
                                        "key"};
    bool known = false;
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        known = known || !strcmp(verb, verbs[i]);
    if (!known) {
        fprintf(stderr, "sluice kb: unknown command '%s' (create, add, list, show, rm, search,"
                        " field, key)\n", verb);
        json_decref(a.meta);
        return 2;
    }
    int rc = 0;
    sl_value *rule = read_rule(a.rule, &rc);
    sl_config *cfg = NULL;
    sl_llm_tape *tape = NULL;
    sl_store *s = NULL;
    sl_kb *k = NULL;
    sl_err err = {0};
    if (!rc && sl_config_load(a.config, &cfg, &err)) {
        fprintf(stderr, "sluice kb: %s\n", err.msg);
        rc = 2;
    }
    if (!rc && (a.record || a.replay) &&
        sl_llm_tape_open(a.replay ? a.replay : a.record, a.replay != NULL, &tape, &err)) {
        fprintf(stderr, "sluice kb: %s\n", err.msg);
        rc = 2;
    }
    if (!rc && a.replay)
        sl_config_set_offline(cfg, true);
    if (!rc && !(s = sl_cli_open_store(a.data, cfg)))
        rc = 1;
    if (!rc) {
        sl_kb_env env = {.store = s, .config = cfg, .tape = tape};
        sl_kb_limits_from(&env.limits, &a.limits);
        if (!(k = sl_kb_open(&env, &err)))
            rc = fail(verb, &err);
    }
    if (rc)
        goto out;
    if (!strcmp(verb, "key")) {
        rc = kb_key(s, &a);
    } else if (!strcmp(verb, "create")) {
        if ((rc = need(&a, 2, "create NAME [--embedding PROVIDER/MODEL]")))
            goto out;
        sl_value *spec = json_pack("{s:s}", "name", a.args[1]);
        if (a.embed) {
            const char *slash = strrchr(a.embed, '/');
            if (!slash || slash == a.embed || !slash[1]) {
                fprintf(stderr, "sluice kb create: --embedding: PROVIDER/MODEL (e.g."
                                " openai/text-embedding-3-small), not '%s'\n", a.embed);
                json_decref(spec);
                rc = 2;
                goto out;
            }
            char *prov = sl_xstrndup(a.embed, (size_t)(slash - a.embed));
            json_object_set_new(spec, "embedding_model_provider", json_string(prov));
            json_object_set_new(spec, "embedding_model", json_string(slash + 1));
            json_object_set_new(spec, "indexing_technique", json_string("high_quality"));
            free(prov);
        }
        if (a.search)
            json_object_set_new(spec, "retrieval_model",
                                json_pack("{s:s, s:b, s:i, s:b}", "search_method", a.search,
                                          "reranking_enable", false, "top_k", 4,
                                          "score_threshold_enabled", false));
        if (a.form)
            json_object_set_new(spec, "doc_form",
                                json_string(!strcmp(a.form, "parent-child") ? "hierarchical_model"
                                            : !strcmp(a.form, "text")       ? "text_model"
                                                                            : a.form));
        if (a.desc)
            json_object_set_new(spec, "description", json_string(a.desc));
        if (rule)
            json_object_set(spec, "process_rule", rule);
        sl_value *ds;
        if (sl_kb_create(k, spec, &ds, &err)) {
            rc = fail("create", &err);
        } else if (a.json) {
            print_json(ds);
        } else {
            printf("%s\t%s\n", json_string_value(json_object_get(ds, "id")), a.args[1]);
        }
        json_decref(ds);
        json_decref(spec);
    } else if (!strcmp(verb, "add")) {
        if (a.nargs < 3) {
            rc = need(&a, 3, "add NAME FILE|DIR... [--meta KEY=VALUE]...");
            goto out;
        }
        if (a.form)
            a.form = !strcmp(a.form, "parent-child") ? "hierarchical_model"
                     : !strcmp(a.form, "text")       ? "text_model"
                                                     : a.form;
        rc = kb_add_files(k, a.args[1], &a, rule);
    } else if (!strcmp(verb, "list")) {
        long long total;
        sl_value *all = sl_kb_list(k, NULL, 1, 1 << 30, &total);
        size_t i;
        sl_value *d;
        if (a.json)
            print_json(all);
        else
            json_array_foreach(all, i, d)
                printf("%s\t%s\t%lld documents\t%s\n", json_string_value(json_object_get(d, "id")),
                       json_string_value(json_object_get(d, "name")),
                       (long long)json_integer_value(json_object_get(d, "document_count")),
                       json_string_value(json_object_get(d, "indexing_technique")));
        json_decref(all);
    } else if (!strcmp(verb, "show")) {
        if ((rc = need(&a, 2, "show NAME")))
            goto out;
        sl_value *ds = sl_kb_get(k, a.args[1], &err);
        long long total = 0;
        sl_value *docs = ds ? sl_kb_docs(k, a.args[1], NULL, NULL, 1, 1 << 30, &total, &err) : NULL;
        if (!ds || !docs) {
            rc = fail("show", &err);
        } else {
            json_object_set(ds, "documents", docs);
            print_json(ds);
        }
        json_decref(docs);
        json_decref(ds);
    } else if (!strcmp(verb, "rm")) {
        if ((rc = need(&a, 2, "rm NAME")))
            goto out;
        if (sl_kb_delete(k, a.args[1], &err))
            rc = fail("rm", &err);
    } else if (!strcmp(verb, "search")) {
        if ((rc = need(&a, 3, "search NAME QUERY [--mode vector|keyword|hybrid] [--top-k N]")))
            goto out;
        rc = kb_search(k, &a);
    } else if (!strcmp(verb, "field")) {
        if (a.nargs != 5 || strcmp(a.args[1], "add")) {
            rc = need(&a, -1, "field add NAME FIELD string|number|time");
            goto out;
        }
        sl_value *f;
        if (sl_kb_field_add(k, a.args[2], a.args[3], a.args[4], &f, &err))
            rc = fail("field add", &err);
        json_decref(f);
    }
out:
    sl_err_clear(&err);
    sl_kb_close(k);
    if (s)
        sl_store_close(s);
    sl_llm_tape_close(tape);
    sl_config_free(cfg);
    json_decref(rule);
    json_decref(a.meta);
    return rc;
}
