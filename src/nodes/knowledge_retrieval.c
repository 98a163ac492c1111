/*
 * knowledge-retrieval — Dify's Knowledge Retrieval node: the chunks of the
 * bound knowledge bases that answer a query, as Dify's result objects, for
 * LLM nodes' context and citations (docs/knowledge.md).
 *
 * Fields: query_variable_selector, dataset_ids, retrieval_mode (multiple |
 * single), multiple_retrieval_config {top_k, score_threshold,
 * reranking_enable, reranking_mode, reranking_model {provider, model},
 * weights {vector_setting.vector_weight, keyword_setting.keyword_weight}},
 * single_retrieval_config {model}, metadata_filtering_mode (disabled |
 * manual | automatic), metadata_filtering_conditions, metadata_model_config.
 *
 * - A dataset id binds to a sluice knowledge base through sluice.yml
 *   (knowledge.datasets, engine/config.h) or by being a knowledge base's
 *   own id or name, or to an External Knowledge API service
 *   (knowledge/external.h).  Load reports each unbound id (a warning); a run
 *   skips it, as Dify skips unknown datasets, and lists it in
 *   process_data.skipped_datasets.
 * - Both selectors empty: succeeded with no outputs.  A query that is not
 *   text fails ("Query variable is not string type."); an empty one gives
 *   result [].
 * - multiple: each knowledge base is searched with its own retrieval
 *   settings; with reranking enabled and more than one knowledge base the
 *   candidates are reranked together with the node's mode, threshold and
 *   top_k (sl_kb_rerank), else those under score_threshold go and the rest,
 *   best first, are cut to top_k.
 * - single: one available knowledge base is searched without a model call;
 *   with several, single_retrieval_config's model picks one by function
 *   calling (one tool per knowledge base), and no tool call gives [].
 * - Metadata filters: manual conditions with their {{#…#}} references
 *   rendered, or conditions a model extracts from the query (automatic).
 * - Unlike Dify, which skips a knowledge base whose search fails, a failed
 *   search (an embedding endpoint down, an external service's error) fails
 *   the node with what failed.
 * Output: result, Dify's chunk objects ({metadata: {_source: "knowledge",
 * dataset_id, …, score, position}, title, files, content, summary}), best
 * first.  Model and embedding tokens count into the node's usage.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "engine/config.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/node.h"
#include "knowledge/external.h"
#include "knowledge/kb.h"
#include "nodes/model.h"

#define TYPE "KnowledgeRetrievalNodeError"
#define DATASETS_MAX 100     /* dataset ids of one node */
#define TOP_K_MAX 100        /* Dify's editor stops at 10 (TOP_K_MAX_VALUE); sluice at 100 */
#define CONDITIONS_MAX 64
#define ID_MAX 255

static const char *const OPERATORS[] = {
    "contains", "not contains", "start with", "end with", "is", "is not", "empty",
    "not empty", "in", "not in", "=", "\u2260", ">", "<", "\u2265", "\u2264", ">=", "<=",
    "before", "after", NULL};

static bool known_operator(const char *op)
{
    for (const char *const *p = OPERATORS; op && *p; p++)
        if (!strcmp(*p, op))
            return true;
    return false;
}

/* ---- binding ---- */

typedef enum { B_NONE, B_KB, B_EXTERNAL } bound;

/* What dataset id binds to: an external service (*ext), a knowledge base of
 * kb (*ds, a new reference), or nothing (why says what to do when the
 * binding names a knowledge base that does not exist). */
static bound resolve(const sl_config *cfg, sl_kb *kb, const char *id,
                     const sl_kb_binding **ext, sl_value **ds, char **why)
{
    *ext = NULL;
    *ds = NULL;
    *why = NULL;
    const sl_kb_binding *b = sl_config_kb_binding(cfg, id);
    if (b && !b->kb) {
        *ext = b;
        return B_EXTERNAL;
    }
    const char *target = b ? b->kb : id;
    if (!kb) {
        if (b)
            *why = sl_xasprintf("%s binds it to knowledge base '%s', but no knowledge base "
                                "store is open", b->where, b->kb);
        return B_NONE;
    }
    sl_err e = {0};
    *ds = sl_kb_get(kb, target, &e);
    if (!*ds && b)
        *why = sl_xasprintf("%s binds it to knowledge base '%s', which does not exist (%s); "
                            "`sluice kb list` shows the knowledge bases there are",
                            b->where, b->kb, e.msg ? e.msg : "not found");
    sl_err_clear(&e);
    return *ds ? B_KB : B_NONE;
}

/* ---- load ---- */

static bool is_int_in(const sl_value *v, long long lo, long long hi)
{
    if (json_is_integer(v))
        return json_integer_value(v) >= lo && json_integer_value(v) <= hi;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        return d == floor(d) && d >= (double)lo && d <= (double)hi;
    }
    return false;
}

static int check_conditions(sl_check *c, const sl_gnode *n, const sl_value *mfc)
{
    if (!mfc || json_is_null(mfc))
        return 0;
    const sl_value *conds = json_object_get(mfc, "conditions");
    const sl_value *lo = json_object_get(mfc, "logical_operator");
    const char *los = json_string_value(lo);
    int bad = 0;
    if (!json_is_object(mfc) || (conds && !json_is_null(conds) && !json_is_array(conds))) {
        sl_check_error(c, n, n->data, "metadata_filtering_conditions",
                       "metadata_filtering_conditions", "must be a mapping {logical_operator, "
                       "conditions: [{name, comparison_operator, value}]}");
        return -1;
    }
    if (lo && !json_is_null(lo) && (!los || (strcmp(los, "and") && strcmp(los, "or")))) {
        sl_check_error(c, n, mfc, "logical_operator",
                       "metadata_filtering_conditions.logical_operator", "is and or or");
        bad = 1;
    }
    if (json_array_size(conds) > CONDITIONS_MAX) {
        sl_check_error(c, n, mfc, "conditions", "metadata_filtering_conditions.conditions",
                       "%zu conditions, more than the %d sluice takes",
                       json_array_size(conds), CONDITIONS_MAX);
        return -1;
    }
    char f[96];
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const sl_value *k = json_array_get(conds, i);
        const sl_value *v = json_object_get(k, "value");
        const char *op = json_string_value(json_object_get(k, "comparison_operator"));
        snprintf(f, sizeof f, "metadata_filtering_conditions.conditions[%zu]", i);
        if (!json_is_object(k) || !json_is_string(json_object_get(k, "name"))) {
            sl_check_error(c, n, k, NULL, f, "a condition is {name, comparison_operator, "
                           "value} with the name of a metadata field");
            bad = 1;
            continue;
        }
        if (!known_operator(op)) {
            sl_check_error(c, n, k, "comparison_operator", f, "comparison_operator '%s' is not "
                           "one of Dify's: contains, not contains, start with, end with, is, "
                           "is not, empty, not empty, in, not in, =, \u2260, >, <, \u2265, "
                           "\u2264, before, after", op ? op : "");
            bad = 1;
        }
        if (v && !json_is_null(v) && !json_is_string(v) && !sl_value_is_number(v) &&
            !json_is_array(v)) {
            sl_check_error(c, n, k, "value", f, "value is text, a number or a list of texts");
            bad = 1;
        }
        if (json_is_string(v))
            bad |= sl_check_text_refs(c, n, k, "value", f) < 0;
        for (size_t j = 0; json_is_array(v) && j < json_array_size(v); j++)
            if (!json_is_string(json_array_get(v, j))) {
                sl_check_error(c, n, k, "value", f, "a list value holds texts only");
                bad = 1;
                break;
            }
    }
    return bad ? -1 : 0;
}

static int check_multiple(sl_check *c, const sl_gnode *n, const sl_value *m)
{
    if (!m || json_is_null(m)) {
        sl_check_warn(c, n, n->data, "multiple_retrieval_config", "multiple_retrieval_config",
                      "missing: a run fails with Dify's \"multiple_retrieval_config is "
                      "required\"; pick the retrieval settings again in Dify's editor");
        return 0;
    }
    if (!json_is_object(m)) {
        sl_check_error(c, n, n->data, "multiple_retrieval_config", "multiple_retrieval_config",
                       "must be a mapping {top_k, score_threshold, reranking_enable, …}");
        return -1;
    }
    int bad = 0;
    const sl_value *tk = json_object_get(m, "top_k");
    if (!is_int_in(tk, 1, TOP_K_MAX)) {
        sl_check_error(c, n, m, "top_k", "multiple_retrieval_config.top_k",
                       "is a whole number from 1 to %d (Dify's editor offers 1 to 10)",
                       TOP_K_MAX);
        bad = 1;
    }
    const sl_value *th = json_object_get(m, "score_threshold");
    if (th && !json_is_null(th) &&
        (!sl_value_is_number(th) || !(sl_value_number(th) >= 0) || sl_value_number(th) > 1)) {
        sl_check_error(c, n, m, "score_threshold", "multiple_retrieval_config.score_threshold",
                       "is a number from 0 to 1, or null for none");
        bad = 1;
    }
    const sl_value *en = json_object_get(m, "reranking_enable");
    if (en && !json_is_null(en) && !json_is_boolean(en)) {
        sl_check_error(c, n, m, "reranking_enable", "multiple_retrieval_config.reranking_enable",
                       "is true or false");
        bad = 1;
    }
    const sl_value *rmv = json_object_get(m, "reranking_mode");
    const char *mode = json_string_value(rmv);
    if (rmv && !json_is_null(rmv) &&
        (!mode || (strcmp(mode, "reranking_model") && strcmp(mode, "weighted_score")))) {
        sl_check_error(c, n, m, "reranking_mode", "multiple_retrieval_config.reranking_mode",
                       "is reranking_model or weighted_score");
        bad = 1;
    }
    const sl_value *rm = json_object_get(m, "reranking_model");
    if (rm && !json_is_null(rm) &&
        (!json_is_object(rm) ||
         (json_object_get(rm, "provider") && !json_is_string(json_object_get(rm, "provider"))) ||
         (json_object_get(rm, "model") && !json_is_string(json_object_get(rm, "model"))))) {
        sl_check_error(c, n, m, "reranking_model", "multiple_retrieval_config.reranking_model",
                       "is a mapping {provider, model} of texts");
        bad = 1;
    }
    const sl_value *w = json_object_get(m, "weights");
    if (w && !json_is_null(w)) {
        const sl_value *vw = json_object_get(json_object_get(w, "vector_setting"), "vector_weight");
        const sl_value *kw =
            json_object_get(json_object_get(w, "keyword_setting"), "keyword_weight");
        if (!sl_value_is_number(vw) || !sl_value_is_number(kw) || sl_value_number(vw) < 0 ||
            sl_value_number(kw) < 0 || sl_value_number(vw) > 1 || sl_value_number(kw) > 1) {
            sl_check_error(c, n, m, "weights", "multiple_retrieval_config.weights",
                           "needs vector_setting.vector_weight and keyword_setting."
                           "keyword_weight, numbers from 0 to 1");
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = sl_check_selector(c, n, d, "query_variable_selector", "query_variable_selector",
                                false) < 0;
    const sl_value *att = json_object_get(d, "query_attachment_selector");
    if (json_array_size(att)) {
        sl_check_error(c, n, d, "query_attachment_selector", "query_attachment_selector",
                       "retrieval by attached files (multimodal knowledge bases) is not run "
                       "by sluice; leave it empty and query with text");
        bad = 1;
    }
    const sl_value *ids = json_object_get(d, "dataset_ids");
    if (!json_is_array(ids)) {
        sl_check_error(c, n, d, "dataset_ids", "dataset_ids", "missing: the node needs the "
                       "list of its knowledge bases' ids");
        return -1;
    }
    if (json_array_size(ids) > DATASETS_MAX) {
        sl_check_error(c, n, d, "dataset_ids", "dataset_ids", "%zu knowledge bases, more than "
                       "the %d sluice searches from one node", json_array_size(ids),
                       DATASETS_MAX);
        return -1;
    }
    if (!json_array_size(ids))
        sl_check_warn(c, n, d, "dataset_ids", "dataset_ids", "the node names no knowledge "
                      "base, so its result is always empty; add one in Dify's editor");
    const sl_config *cfg = sl_check_config_get(c);
    sl_kb *kb = sl_config_kb(cfg);
    char f[48];
    for (size_t i = 0; i < json_array_size(ids); i++) {
        const sl_value *v = json_array_get(ids, i);
        const char *id = json_string_value(v);
        snprintf(f, sizeof f, "dataset_ids[%zu]", i);
        if (!id || !*id || strlen(id) > ID_MAX) {
            sl_check_error(c, n, d, "dataset_ids", f, "a dataset id is text of 1 to %d bytes",
                           ID_MAX);
            bad = 1;
            continue;
        }
        const sl_kb_binding *ext;
        sl_value *ds;
        char *why;
        bound b = resolve(cfg, kb, id, &ext, &ds, &why);
        json_decref(ds);
        if (b != B_NONE || (!kb && sl_config_kb_binding(cfg, id))) {
            free(why);
            continue;  /* bound (to a name only a run's store can check) */
        }
        if (why)
            sl_check_warn(c, n, d, "dataset_ids", f, "dataset '%s': %s; until it is bound a run skips "
                          "it, as Dify skips unknown datasets", id, why);
        else
            sl_check_warn(c, n, d, "dataset_ids", f, "dataset '%s' is bound to no knowledge base%s: add "
                          "the line `knowledge: datasets: {%s: KB_NAME}` to sluice.yml (KB_NAME "
                          "a knowledge base of `sluice kb list`, or made with `sluice kb create "
                          "KB_NAME`), or bind it to an External Knowledge API (docs/"
                          "knowledge.md); until then a run skips it, as Dify skips unknown "
                          "datasets", id, kb ? "" : " in sluice.yml", id);
        free(why);
    }
    const sl_value *rmv = json_object_get(d, "retrieval_mode");
    const char *rm = json_string_value(rmv);
    if (!rm || (strcmp(rm, "multiple") && strcmp(rm, "single"))) {
        sl_check_error(c, n, d, "retrieval_mode", "retrieval_mode", "is multiple or single");
        bad = 1;
    } else if (!strcmp(rm, "multiple")) {
        bad |= check_multiple(c, n, json_object_get(d, "multiple_retrieval_config")) < 0;
    } else {
        const sl_value *src = json_object_get(d, "single_retrieval_config");
        const sl_value *m = json_object_get(src, "model");
        if (!json_is_object(m))
            sl_check_warn(c, n, d, "single_retrieval_config", "single_retrieval_config",
                          "names no model: with more than one knowledge base a run fails "
                          "with Dify's \"single_retrieval_config is required\"");
        else if (json_array_size(ids) > 1)
            bad |= sl_model_check_value(c, n, m, "single_retrieval_config.model") < 0;
    }
    const sl_value *mfm = json_object_get(d, "metadata_filtering_mode");
    const char *mode = json_string_value(mfm);
    if (mfm && !json_is_null(mfm) &&
        (!mode || (strcmp(mode, "disabled") && strcmp(mode, "manual") &&
                   strcmp(mode, "automatic")))) {
        sl_check_error(c, n, d, "metadata_filtering_mode", "metadata_filtering_mode",
                       "is disabled, manual or automatic");
        bad = 1;
    } else if (mode && !strcmp(mode, "manual")) {
        bad |= check_conditions(c, n, json_object_get(d, "metadata_filtering_conditions")) < 0;
    } else if (mode && !strcmp(mode, "automatic")) {
        const sl_value *m = json_object_get(d, "metadata_model_config");
        if (!json_is_object(m)) {
            sl_check_error(c, n, d, "metadata_model_config", "metadata_model_config",
                           "automatic metadata filtering needs the model that reads the "
                           "conditions from the query {provider, name, mode}");
            bad = 1;
        } else {
            bad |= sl_model_check_value(c, n, m, "metadata_model_config") < 0;
        }
        const sl_value *mfc = json_object_get(d, "metadata_filtering_conditions");
        const char *lo = json_string_value(json_object_get(mfc, "logical_operator"));
        if (lo && strcmp(lo, "and") && strcmp(lo, "or")) {
            sl_check_error(c, n, mfc, "logical_operator",
                           "metadata_filtering_conditions.logical_operator", "is and or or");
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* ---- run ---- */

typedef struct {
    const char *dsl_id;
    const sl_kb_binding *ext;  /* external, or NULL */
    sl_value *ds;              /* the knowledge base (dataset object), or NULL */
    const char *id, *name, *description;
} avail;

typedef struct {
    sl_node_exec *x;
    sl_kb *kb;
    const char *query;
    avail *av;
    size_t nav;
    sl_value *usage;           /* model usage of the node's own calls, or NULL */
    sl_value *skipped;         /* [{dataset_id, reason}] */
    long long embed_tokens;
} kr;

static bool cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

static void add_usage(kr *k, const sl_value *u)
{
    if (!json_is_object(u))
        return;
    if (!k->usage) {
        k->usage = json_deep_copy(u);
        return;
    }
    static const char *const sums[] = {"prompt_tokens", "completion_tokens", "total_tokens",
                                       NULL};
    for (const char *const *s = sums; *s; s++)
        json_object_set_new(k->usage, *s,
                            json_integer(json_integer_value(json_object_get(k->usage, *s)) +
                                         json_integer_value(json_object_get(u, *s))));
    static const char *const prices[] = {"prompt_price", "completion_price", "total_price",
                                         "latency", NULL};
    for (const char *const *s = prices; *s; s++)
        json_object_set_new(k->usage, *s,
                            json_real(sl_value_number(json_object_get(k->usage, *s)) +
                                      sl_value_number(json_object_get(u, *s))));
}

static void skip(kr *k, const char *id, const char *reason)
{
    json_array_append_new(k->skipped, json_pack("{s:s, s:s}", "dataset_id", id, "reason",
                                                 reason));
}

/* The available knowledge bases of dataset_ids, in their order (Dify: those
 * that exist and have a document to search, and external ones). */
static void available(kr *k, const sl_value *ids)
{
    const sl_config *cfg = sl_exec_config(k->x);
    k->av = sl_xcalloc(json_array_size(ids) + 1, sizeof *k->av);
    for (size_t i = 0; i < json_array_size(ids); i++) {
        const char *id = json_string_value(json_array_get(ids, i));
        if (!id)
            continue;
        bool dup = false;
        for (size_t j = 0; j < k->nav && !dup; j++)
            dup = !strcmp(k->av[j].dsl_id, id);
        if (dup)
            continue;
        const sl_kb_binding *ext;
        sl_value *ds;
        char *why;
        bound b = resolve(cfg, k->kb, id, &ext, &ds, &why);
        if (b == B_NONE) {
            skip(k, id, why ? why : "bound to no knowledge base (sluice.yml knowledge.datasets)");
            free(why);
            continue;
        }
        if (b == B_KB) {
            const sl_value *n = json_object_get(ds, "total_available_documents");
            if (!n)
                n = json_object_get(ds, "document_count");
            if (json_is_integer(n) && json_integer_value(n) <= 0) {
                skip(k, id, "the knowledge base has no document to search");
                json_decref(ds);
                continue;
            }
        }
        /* one knowledge base named twice (by two ids, or by an id and a
         * name) is searched once, as Dify's query by id finds it once */
        const char *real = ds ? json_string_value(json_object_get(ds, "id")) : NULL;
        for (size_t j = 0; real && j < k->nav && !dup; j++)
            dup = k->av[j].ds && !strcmp(k->av[j].id, real);
        if (dup) {
            json_decref(ds);
            continue;
        }
        avail *a = &k->av[k->nav++];
        a->dsl_id = id;
        a->ext = ext;
        a->ds = ds;
        a->id = ds ? json_string_value(json_object_get(ds, "id")) : id;
        a->name = ds ? json_string_value(json_object_get(ds, "name")) : id;
        a->description = ds ? json_string_value(json_object_get(ds, "description")) : NULL;
        if (!a->id)
            a->id = id;
        if (!a->name)
            a->name = a->id;
    }
}

/* ---- metadata filters ---- */

/* Text with [\r\n\t]+ as one space, then stripped (Dify's manual values). */
static sl_value *squash(const char *s, size_t n)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\t') {
            while (i + 1 < n && (s[i + 1] == '\r' || s[i + 1] == '\n' || s[i + 1] == '\t'))
                i++;
            sl_buf_addc(&b, ' ');
        } else {
            sl_buf_addc(&b, s[i]);
        }
    }
    size_t a = 0, e = b.len;
    while (a < e && isspace((unsigned char)b.data[a]))
        a++;
    while (e > a && isspace((unsigned char)b.data[e - 1]))
        e--;
    sl_value *v = json_stringn(b.data ? b.data + a : "", e - a);
    sl_buf_release(&b);
    return v ? v : json_string("");
}

static sl_value *render_value(sl_node_exec *x, const char *text, int *rc)
{
    sl_buf b;
    sl_buf_init(&b, sl_exec_limits(x)->max_output_bytes);
    if (sl_exec_render(x, text, &b) < 0 || b.toobig) {
        sl_buf_release(&b);
        *rc = sl_exec_fail(x, TYPE, "a metadata condition's value does not render (larger "
                           "than max_output_bytes?); check the variables it shows");
        return NULL;
    }
    sl_value *v = squash(b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    return v;
}

/* Manual conditions with their values rendered; NULL (and *rc 0) for none. */
static sl_value *manual_conditions(kr *k, int *rc)
{
    const sl_value *mfc = json_object_get(sl_exec_data(k->x), "metadata_filtering_conditions");
    const sl_value *conds = json_object_get(mfc, "conditions");
    *rc = 0;
    if (!json_array_size(conds))
        return NULL;
    const char *lo = json_string_value(json_object_get(mfc, "logical_operator"));
    sl_value *list = json_array();
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const sl_value *c = json_array_get(conds, i);
        const sl_value *v = json_object_get(c, "value");
        sl_value *nv;
        if (json_is_string(v)) {
            nv = render_value(k->x, json_string_value(v), rc);
        } else if (json_is_array(v)) {
            nv = json_array();
            for (size_t j = 0; j < json_array_size(v) && !*rc; j++) {
                sl_value *e = render_value(k->x, json_string_value(json_array_get(v, j)), rc);
                if (e)
                    json_array_append_new(nv, e);
            }
        } else if (!v || json_is_null(v) || sl_value_is_number(v)) {
            nv = v ? json_incref((sl_value *)v) : json_null();
        } else {
            *rc = sl_exec_fail(k->x, "ValueError", "Invalid expected metadata value type");
            nv = NULL;
        }
        if (*rc) {
            json_decref(nv);
            json_decref(list);
            return NULL;
        }
        json_array_append_new(list, json_pack("{s:O, s:O, s:o}", "name",
                                              json_object_get(c, "name"), "comparison_operator",
                                              json_object_get(c, "comparison_operator"),
                                              "value", nv));
    }
    return json_pack("{s:s, s:o}", "logical_operator", lo ? lo : "and", "conditions", list);
}

/* The JSON object in a model's answer: from its first '{' to its last '}'. */
static sl_value *answer_json(const char *text)
{
    const char *a = text ? strchr(text, '{') : NULL;
    const char *b = text ? strrchr(text, '}') : NULL;
    if (!a || !b || b < a)
        return NULL;
    return json_loadb(a, (size_t)(b - a + 1), 0, NULL);
}

static const char METADATA_SYSTEM[] =
    "### Job\nYou read a user's query and extract the conditions it states on document "
    "metadata, for a search of a knowledge base.\n### Task\nUse only fields of the list "
    "metadata_fields (each with its name and type) and only these comparison operators: "
    "contains, not contains, start with, end with, is, is not, empty, not empty, =, \u2260, >, "
    "<, \u2265, \u2264, before, after. Values of time fields are Unix timestamps in "
    "seconds.\n### Format\nThe query is input_text. Answer with one JSON object "
    "{\"metadata_map\": [{\"metadata_field_name\": NAME, \"metadata_field_value\": VALUE, "
    "\"comparison_operator\": OPERATOR}]}, and an empty list when the query states no "
    "condition.\n### Constraint\nReply with the JSON object only, nothing else.\n";

/* Conditions a model reads from the query (Dify's automatic mode): fields
 * that no available knowledge base has, and unknown operators, are left
 * out.  NULL (and *rc 0) when there are none or the answer is no JSON, as
 * in Dify. */
static sl_value *automatic_conditions(kr *k, int *rc)
{
    *rc = 0;
    const sl_value *d = sl_exec_data(k->x);
    sl_value *fields = json_array(), *names = json_object();
    for (size_t i = 0; i < k->nav; i++) {
        if (!k->av[i].ds)
            continue;
        sl_err e = {0};
        sl_value *f = sl_kb_fields(k->kb, k->av[i].id, &e);
        sl_err_clear(&e);
        const sl_value *list = json_object_get(f, "doc_metadata");
        for (size_t j = 0; j < json_array_size(list); j++) {
            const sl_value *fd = json_array_get(list, j);
            const char *name = json_string_value(json_object_get(fd, "name"));
            if (!name || json_object_get(names, name))
                continue;
            json_object_set_new(names, name, json_true());
            json_array_append_new(fields, json_pack("{s:s, s:O}", "name", name, "type",
                                                    json_object_get(fd, "type")));
        }
        json_decref(f);
    }
    if (!json_array_size(fields)) {
        json_decref(fields);
        json_decref(names);
        return NULL;
    }
    sl_value *input = json_pack("{s:s, s:o}", "input_text", k->query, "metadata_fields", fields);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_value_pyjson(input, &b, false);
    json_decref(input);
    const sl_value *m = json_object_get(d, "metadata_model_config");
    sl_value *req = json_pack("{s:[{s:s, s:s}, {s:s, s:s%}]}", "messages", "role", "system",
                              "content", METADATA_SYSTEM, "role", "user", "content",
                              b.data ? b.data : "", b.len);
    sl_buf_release(&b);
    sl_value *resp = NULL;
    sl_llm_stream stream = {.cancelled = cancelled, .ud = k->x};
    if (sl_model_call_with(k->x, m, req, &stream, &resp)) {
        json_decref(req);
        json_decref(names);
        *rc = -1;
        return NULL;
    }
    json_decref(req);
    add_usage(k, json_object_get(resp, "usage"));
    sl_value *ans = answer_json(json_string_value(json_object_get(resp, "text")));
    json_decref(resp);
    const sl_value *map = json_object_get(ans, "metadata_map");
    sl_value *list = json_array();
    for (size_t i = 0; i < json_array_size(map) && i < CONDITIONS_MAX; i++) {
        const sl_value *e = json_array_get(map, i);
        const char *name = json_string_value(json_object_get(e, "metadata_field_name"));
        const char *op = json_string_value(json_object_get(e, "comparison_operator"));
        const sl_value *v = json_object_get(e, "metadata_field_value");
        if (!name || !json_object_get(names, name) || !known_operator(op))
            continue;
        if (v && !json_is_null(v) && !json_is_string(v) && !sl_value_is_number(v) &&
            !json_is_array(v))
            continue;
        json_array_append_new(list, json_pack("{s:s, s:s, s:O}", "name", name,
                                              "comparison_operator", op, "value",
                                              v ? v : json_null()));
    }
    json_decref(ans);
    json_decref(names);
    if (!json_array_size(list)) {
        json_decref(list);
        return NULL;
    }
    const char *lo = json_string_value(
        json_object_get(json_object_get(d, "metadata_filtering_conditions"), "logical_operator"));
    return json_pack("{s:s, s:o}", "logical_operator", lo ? lo : "or", "conditions", list);
}

/* ---- results ---- */

static double score_of(const sl_value *v)
{
    return sl_value_is_number(v) ? sl_value_number(v) : 0;
}

/* Sorts an array of results (by metadata.score, or, with child, chunks by
 * score) best first, ties in their order: up to 100 knowledge bases of up
 * to 1,000 chunks each, so n log n. */
typedef struct {
    sl_value *v;
    double score;
    size_t at;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void sort_items(sl_value *items, bool child)
{
    size_t n = json_array_size(items);
    if (n < 2)
        return;
    ranked *v = sl_xcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        sl_value *it = json_array_get(items, i);
        const sl_value *sc = child ? json_object_get(it, "score")
                                   : json_object_get(json_object_get(it, "metadata"), "score");
        v[i] = (ranked){json_incref(it), score_of(sc), i};
        if (isnan(v[i].score))
            v[i].score = 0;
    }
    qsort(v, n, sizeof *v, ranked_cmp);
    json_array_clear(items);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(items, v[i].v);
    free(v);
}

static sl_value *opt(const sl_value *v)
{
    return v ? json_incref((sl_value *)v) : json_null();
}

/* A knowledge base's record (kb.h) as Dify's result item. */
static sl_value *item_of_record(const avail *a, const sl_value *r)
{
    const sl_value *seg = json_object_get(r, "segment");
    const sl_value *doc = json_object_get(seg, "document");
    const char *content = json_string_value(json_object_get(seg, "content"));
    const char *answer = json_string_value(json_object_get(seg, "answer"));
    sl_value *text;
    if (!answer || !*answer) {
        text = json_string(content ? content : "");
    } else {  /* a Q&A segment, as Dify shows one */
        char *qa = sl_xasprintf("question:%s \nanswer:%s", content ? content : "", answer);
        text = json_string(qa);
        free(qa);
    }
    sl_value *children = json_is_array(json_object_get(r, "child_chunks"))
                             ? json_deep_copy(json_object_get(r, "child_chunks"))
                             : json_array();
    sort_items(children, true);
    sl_value *meta = json_object();
    json_object_set_new(meta, "_source", json_string("knowledge"));
    json_object_set_new(meta, "dataset_id", json_string(a->id));
    json_object_set_new(meta, "dataset_name", json_string(a->name));
    json_object_set_new(meta, "document_id", opt(json_object_get(doc, "id")));
    json_object_set_new(meta, "document_name", opt(json_object_get(doc, "name")));
    json_object_set_new(meta, "data_source_type", opt(json_object_get(doc, "data_source_type")));
    json_object_set_new(meta, "segment_id", opt(json_object_get(seg, "id")));
    json_object_set_new(meta, "retriever_from", json_string("workflow"));
    json_object_set_new(meta, "score", json_real(score_of(json_object_get(r, "score"))));
    json_object_set_new(meta, "child_chunks", children);
    json_object_set_new(meta, "segment_hit_count", opt(json_object_get(seg, "hit_count")));
    json_object_set_new(meta, "segment_word_count", opt(json_object_get(seg, "word_count")));
    json_object_set_new(meta, "segment_position", opt(json_object_get(seg, "position")));
    json_object_set_new(meta, "segment_index_node_hash",
                        opt(json_object_get(seg, "index_node_hash")));
    json_object_set_new(meta, "doc_metadata", opt(json_object_get(doc, "doc_metadata")));
    sl_value *it = json_object();
    json_object_set_new(it, "metadata", meta);
    json_object_set_new(it, "title", opt(json_object_get(doc, "name")));
    json_object_set_new(it, "files", json_null());
    json_object_set_new(it, "content", text ? text : json_string(""));
    json_object_set_new(it, "summary", json_null());
    return it;
}

/* An external record {content, score, title, metadata} as Dify's item. */
static sl_value *item_of_external(const avail *a, const sl_value *r)
{
    const sl_value *md = json_object_get(r, "metadata");
    const sl_value *title = json_object_get(r, "title");
    const sl_value *doc_id = json_object_get(md, "document_id");
    sl_value *meta = json_object();
    json_object_set_new(meta, "_source", json_string("knowledge"));
    json_object_set_new(meta, "dataset_id", json_string(a->id));
    json_object_set_new(meta, "dataset_name", json_string(a->name));
    json_object_set_new(meta, "document_id", opt(doc_id && !json_is_null(doc_id) ? doc_id : title));
    json_object_set_new(meta, "document_name", opt(title));
    json_object_set_new(meta, "data_source_type", json_string("external"));
    json_object_set_new(meta, "retriever_from", json_string("workflow"));
    json_object_set_new(meta, "score", json_real(score_of(json_object_get(r, "score"))));
    json_object_set_new(meta, "doc_metadata", opt(md));
    sl_value *it = json_object();
    json_object_set_new(it, "metadata", meta);
    json_object_set_new(it, "title", opt(title));
    json_object_set_new(it, "files", json_null());
    json_object_set_new(it, "content", opt(json_object_get(r, "content")));
    json_object_set_new(it, "summary", json_null());
    return it;
}

/* A knowledge base searched with its own settings (or an external
 * service): items appended to `items`, and, for a rerank, records in kb.h's
 * shape appended to `records` (NULL: none wanted), external ones with a
 * segment id "external-N" that names their item. */
static int search_one(kr *k, const avail *a, const sl_value *conds, sl_value *items,
                      sl_value *records)
{
    sl_err err = {0};
    sl_value *got = NULL;
    if (a->ext) {
        const sl_kb_binding *b = a->ext;
        sl_kb_external_req rq = {
            .endpoint = b->endpoint, .api_key = b->api_key, .knowledge_id = b->knowledge_id,
            .query = k->query, .top_k = b->top_k,
            .score_threshold = b->threshold_enabled ? b->score_threshold : 0.0,
            .metadata_condition = conds, .timeout_s = b->timeout_s,
            .max_body = sl_exec_limits(k->x)->max_output_bytes,
            .allow_private = b->allow_private, .cancelled = cancelled, .ud = k->x};
        if (sl_kb_external_retrieve(&rq, &got, &err)) {
            int rc = sl_exec_fail(k->x, sl_err_type(&err, TYPE), "knowledge base '%s': %s",
                                  a->dsl_id, err.msg);
            sl_err_clear(&err);
            return rc;
        }
        for (size_t i = 0; i < json_array_size(got); i++) {
            const sl_value *r = json_array_get(got, i);
            json_array_append_new(items, item_of_external(a, r));
            if (!records)
                continue;
            char sid[40];
            snprintf(sid, sizeof sid, "external-%zu", json_array_size(items) - 1);
            json_array_append_new(records, json_pack(
                "{s:{s:s, s:O, s:{s:s, s:O}}, s:[], s:O}", "segment", "id", sid, "content",
                json_object_get(r, "content"), "document", "id", sid, "name",
                json_object_get(r, "title"), "child_chunks", "score", json_object_get(r, "score")));
        }
        json_decref(got);
        return 0;
    }
    sl_kb_query q = {0};
    if (sl_kb_query_defaults(k->kb, a->id, &q, &err) < 0) {
        int rc = sl_exec_fail(k->x, sl_err_type(&err, TYPE), "knowledge base '%s': %s", a->name,
                              err.msg);
        sl_err_clear(&err);
        return rc;
    }
    q.query = k->query;
    q.conditions = conds;
    q.cancelled = cancelled;
    q.ud = k->x;
    long long tokens = 0;
    if (sl_kb_search(k->kb, a->id, &q, &got, &tokens, &err) < 0) {
        int rc = sl_exec_fail(k->x, sl_err_type(&err, TYPE), "knowledge base '%s': %s", a->name,
                              err.msg);
        sl_err_clear(&err);
        return rc;
    }
    k->embed_tokens += tokens;
    for (size_t i = 0; i < json_array_size(got); i++) {
        const sl_value *r = json_array_get(got, i);
        json_array_append_new(items, item_of_record(a, r));
        if (records)
            json_array_append(records, (sl_value *)r);
    }
    json_decref(got);
    return 0;
}

/* The items reranked records stand for, by segment id ("external-N" for
 * the Nth item, an external record). */
static void index_items(const sl_value *items, sl_map *m)
{
    sl_map_init(m);
    sl_map_reserve(m, json_array_size(items));
    for (size_t i = 0; i < json_array_size(items); i++) {
        sl_value *it = json_array_get(items, i);
        const sl_value *md = json_object_get(it, "metadata");
        const char *ds = json_string_value(json_object_get(md, "data_source_type"));
        const char *sid = json_string_value(json_object_get(md, "segment_id"));
        char key[40];
        if (ds && !strcmp(ds, "external")) {
            snprintf(key, sizeof key, "external-%zu", i);
            sid = key;
        }
        if (sid && !sl_map_get(m, sid))
            sl_map_put(m, sid, it);
    }
}

static sl_value *item_for(const sl_map *m, const sl_value *rec)
{
    const char *sid = json_string_value(json_object_get(json_object_get(rec, "segment"), "id"));
    return sid ? sl_map_get(m, sid) : NULL;
}

static int multiple(kr *k, const sl_value *conds, sl_value **out)
{
    const sl_value *m = json_object_get(sl_exec_data(k->x), "multiple_retrieval_config");
    if (!json_is_object(m))
        return sl_exec_fail(k->x, "ValueError", "multiple_retrieval_config is required");
    const sl_value *en = json_object_get(m, "reranking_enable");
    bool rerank_on = !en || json_is_null(en) || json_is_true(en);
    const char *mode = json_string_value(json_object_get(m, "reranking_mode"));
    if (!mode)
        mode = "reranking_model";
    const sl_value *w = json_object_get(m, "weights");
    if (!strcmp(mode, "weighted_score") && !json_is_object(w))
        return sl_exec_fail(k->x, "ValueError", "weights is required");
    int top_k = (int)sl_value_number(json_object_get(m, "top_k"));
    const sl_value *th = json_object_get(m, "score_threshold");
    bool th_on = sl_value_is_number(th);
    double threshold = th_on ? sl_value_number(th) : 0.0;
    if (top_k < 1 || top_k > TOP_K_MAX)
        return sl_exec_fail(k->x, TYPE, "multiple_retrieval_config.top_k must be a whole number "
                            "from 1 to %d", TOP_K_MAX);
    /* Dify's checks of the knowledge bases that take part together */
    const avail *first = NULL;
    for (size_t i = 0; i < k->nav && !first; i++)
        if (k->av[i].ds)
            first = &k->av[i];
    for (size_t i = 0; first && k->nav > 1 && i < k->nav; i++) {
        const sl_value *ds = k->av[i].ds;
        if (!ds)
            continue;
        if (!json_equal(json_object_get(ds, "indexing_technique"),
                        json_object_get(first->ds, "indexing_technique")) &&
            (!rerank_on || strcmp(mode, "reranking_model")))
            return sl_exec_fail(k->x, "ValueError", "The configured knowledge base list have "
                                "different indexing technique, please set reranking model.");
        const char *it = json_string_value(json_object_get(first->ds, "indexing_technique"));
        if (it && !strcmp(it, "high_quality") && rerank_on && !strcmp(mode, "weighted_score") &&
            (!json_equal(json_object_get(ds, "embedding_model"),
                         json_object_get(first->ds, "embedding_model")) ||
             !json_equal(json_object_get(ds, "embedding_model_provider"),
                         json_object_get(first->ds, "embedding_model_provider"))))
            return sl_exec_fail(k->x, "ValueError", "The configured knowledge base list have "
                                "different embedding model, please set reranking model.");
    }
    bool rerank = rerank_on && k->nav > 1;
    sl_value *items = json_array(), *records = rerank ? json_array() : NULL;
    for (size_t i = 0; i < k->nav; i++)
        if (search_one(k, &k->av[i], conds, items, records)) {
            json_decref(items);
            json_decref(records);
            return -1;
        }
    const sl_value *rm = json_object_get(m, "reranking_model");
    const char *rprov = json_string_value(json_object_get(rm, "provider"));
    const char *rmodel = json_string_value(json_object_get(rm, "model"));
    if (rerank && !strcmp(mode, "reranking_model") && (!rprov || !*rprov || !rmodel || !*rmodel)) {
        /* Dify: no reranking model, no rerank runner: every candidate is
         * kept as it is, best first */
        json_decref(records);
        sort_items(items, false);
        *out = items;
        return 0;
    }
    if (rerank) {
        sl_kb_query q = {
            .query = k->query, .top_k = top_k, .threshold_enabled = th_on,
            .score_threshold = threshold, .reranking_mode = mode,
            .rerank_provider = rprov, .rerank_model = rmodel,
            .vector_weight = sl_value_number(
                json_object_get(json_object_get(w, "vector_setting"), "vector_weight")),
            .keyword_weight = sl_value_number(
                json_object_get(json_object_get(w, "keyword_setting"), "keyword_weight")),
            .cancelled = cancelled, .ud = k->x};
        sl_value *kept = NULL;
        sl_err err = {0};
        if (!k->kb) {
            json_decref(items);
            json_decref(records);
            return sl_exec_fail(k->x, TYPE, "reranking the results of %zu knowledge bases needs "
                                "sluice's knowledge base service, and this run has none open "
                                "(`sluice run --data DIR`), or turn reranking off in the node",
                                k->nav);
        }
        /* kb.c reads the candidates and leaves them to the caller (its
         * header's "takes" is not what it does) */
        int rrc = sl_kb_rerank(k->kb, &q, records, &kept, &err);
        json_decref(records);
        if (rrc < 0) {
            json_decref(items);
            int rc = sl_exec_fail(k->x, sl_err_type(&err, TYPE), "reranking: %s", err.msg);
            sl_err_clear(&err);
            return rc;
        }
        sl_map byid;
        index_items(items, &byid);
        sl_value *res = json_array();
        for (size_t i = 0; i < json_array_size(kept); i++) {
            const sl_value *r = json_array_get(kept, i);
            sl_value *it = item_for(&byid, r);
            if (!it)
                continue;
            it = json_deep_copy(it);
            json_object_set_new(json_object_get(it, "metadata"), "score",
                                json_real(score_of(json_object_get(r, "score"))));
            json_array_append_new(res, it);
        }
        sl_map_release(&byid);
        json_decref(kept);
        json_decref(items);
        *out = res;
        return 0;
    }
    /* one knowledge base, or no reranking: the threshold, best first, top_k */
    sl_value *res = json_array();
    for (size_t i = 0; i < json_array_size(items); i++) {
        sl_value *it = json_array_get(items, i);
        if (!th_on || score_of(json_object_get(json_object_get(it, "metadata"), "score")) >=
                          threshold)
            json_array_append(res, it);
    }
    json_decref(items);
    sort_items(res, false);
    while (json_array_size(res) > (size_t)top_k)
        json_array_remove(res, json_array_size(res) - 1);
    *out = res;
    return 0;
}

/* A tool name the model APIs take (^[A-Za-z0-9_-]{1,64}$): the dataset id
 * when it is one, as Dify names the tools, else "dataset_N". */
static char *tool_name(const char *id, size_t i)
{
    size_t n = strlen(id);
    bool ok = n >= 1 && n <= 64;
    for (size_t j = 0; ok && j < n; j++)
        ok = isalnum((unsigned char)id[j]) || id[j] == '_' || id[j] == '-';
    return ok ? sl_xstrdup(id) : sl_xasprintf("dataset_%zu", i);
}

static int single(kr *k, const sl_value *conds, sl_value **out)
{
    const sl_value *src = json_object_get(sl_exec_data(k->x), "single_retrieval_config");
    const sl_value *m = json_object_get(src, "model");
    if (!json_is_object(m) && k->nav > 1)
        return sl_exec_fail(k->x, "ValueError", "single_retrieval_config is required");
    *out = json_array();
    if (!k->nav)
        return 0;
    const avail *pick = k->nav == 1 ? &k->av[0] : NULL;
    if (!pick) {
        sl_value *tools = json_array();
        char **names = sl_xcalloc(k->nav, sizeof *names);
        for (size_t i = 0; i < k->nav; i++) {
            const avail *a = &k->av[i];
            names[i] = tool_name(a->dsl_id, i);
            char *desc = a->description && *a->description
                             ? sl_xstrdup(a->description)
                             : sl_xasprintf("useful for when you want to answer queries about "
                                            "the %s", a->name);
            char *w = desc;
            for (char *r = desc; *r; r++)  /* Dify drops line breaks */
                if (*r != '\n' && *r != '\r')
                    *w++ = *r;
            *w = 0;
            json_array_append_new(tools, json_pack("{s:s, s:s, s:{s:s, s:{}, s:[]}}", "name",
                                                   names[i], "description", desc, "parameters",
                                                   "type", "object", "properties", "required"));
            free(desc);
        }
        sl_value *req = json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:o, s:{s:f, s:f, s:i}}",
                                  "messages", "role", "system", "content",
                                  "You are a helpful AI assistant.", "role", "user", "content",
                                  k->query, "tools", tools, "params", "temperature", 0.2,
                                  "top_p", 0.3, "max_tokens", 1500);
        sl_value *resp = NULL;
        sl_llm_stream stream = {.cancelled = cancelled, .ud = k->x};
        int rc = sl_model_call_with(k->x, m, req, &stream, &resp);
        json_decref(req);
        if (rc) {
            for (size_t i = 0; i < k->nav; i++)
                free(names[i]);
            free(names);
            return -1;
        }
        add_usage(k, json_object_get(resp, "usage"));
        const char *chosen = json_string_value(
            json_object_get(json_array_get(json_object_get(resp, "tool_calls"), 0), "name"));
        for (size_t i = 0; chosen && i < k->nav && !pick; i++)
            if (!strcmp(names[i], chosen))
                pick = &k->av[i];
        for (size_t i = 0; i < k->nav; i++)
            free(names[i]);
        free(names);
        json_decref(resp);
        if (!pick)
            return 0;  /* no tool call: no knowledge base, as in Dify */
    }
    sl_exec_process(k->x, "dataset_chosen", json_string(pick->dsl_id));
    if (search_one(k, pick, conds, *out, NULL)) {
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    sort_items(*out, false);
    return 0;
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    const sl_value *sel = json_object_get(d, "query_variable_selector");
    if (!json_array_size(sel) && !json_array_size(json_object_get(d, "query_attachment_selector")))
        return 0;  /* Dify: succeeded, no outputs */
    sl_value *qv = json_array_size(sel) ? sl_exec_get(x, sel) : NULL;
    if (!json_is_string(qv)) {
        json_decref(qv);
        return sl_exec_fail(x, TYPE, "Query variable is not string type.");
    }
    sl_exec_input(x, "query", json_incref(qv));
    kr k = {.x = x, .kb = sl_exec_kb(x), .query = json_string_value(qv),
            .skipped = json_array()};
    int rc = 0;
    sl_value *result = NULL, *conds = NULL;
    if (!*k.query) {
        result = json_array();
        goto done;
    }
    available(&k, json_object_get(d, "dataset_ids"));
    const char *fm = json_string_value(json_object_get(d, "metadata_filtering_mode"));
    if (!fm || !strcmp(fm, "disabled"))
        conds = NULL;
    else if (!strcmp(fm, "manual"))
        conds = manual_conditions(&k, &rc);
    else if (!strcmp(fm, "automatic"))
        conds = k.nav ? automatic_conditions(&k, &rc) : NULL;
    else
        rc = sl_exec_fail(x, "ValueError", "Invalid metadata filtering mode");
    if (rc)
        goto done;
    if (conds)
        sl_exec_process(x, "metadata_filter", json_incref(conds));
    const char *mode = json_string_value(json_object_get(d, "retrieval_mode"));
    if (!k.nav)
        result = json_array();
    else if (mode && !strcmp(mode, "single"))
        rc = single(&k, conds, &result);
    else
        rc = multiple(&k, conds, &result);
    if (rc)
        goto done;
    for (size_t i = 0; i < json_array_size(result); i++)
        json_object_set_new(json_object_get(json_array_get(result, i), "metadata"), "position",
                            json_integer((json_int_t)i + 1));
done:
    if (k.embed_tokens)
        sl_exec_usage(x, k.embed_tokens, 0, "USD");
    if (k.usage)
        sl_exec_process(x, "usage", json_incref(k.usage));
    if (json_array_size(k.skipped))
        sl_exec_process(x, "skipped_datasets", json_incref(k.skipped));
    if (!rc)
        sl_exec_output(x, "result", result);
    else
        json_decref(result);
    for (size_t i = 0; i < k.nav; i++)
        json_decref(k.av[i].ds);
    free(k.av);
    json_decref(k.usage);
    json_decref(k.skipped);
    json_decref(conds);
    json_decref(qv);
    return rc;
}

const sl_node_kind sl_kind_knowledge_retrieval = {
    .type = "knowledge-retrieval",
    .check = check,
    .run = run,
};
