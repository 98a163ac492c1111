/*
 * server/datasets — see datasets.h.
 *
 * One handler per route, as server.c's Service API; a route's handler gets
 * the request, the dataset its path names (looked up once, 404 "Dataset not
 * found." before anything else) and the path's other ids.  Every value a
 * client sends is checked here for shape and size with Dify's messages
 * where Dify has them; the knowledge base checks what needs its state.
 */
#include "server/datasets.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/rand.h"

/* Bounds of what a client may send in one request. */
#define MAX_QUERY_CHARS 250     /* Dify: "Query cannot exceed 250 characters" */
#define MAX_LIMIT 100           /* page sizes */
#define MAX_SEGMENTS 1000       /* Dify: "Exceeded maximum segments limit of 1000." */
#define MAX_IDS 1000            /* document_ids, operation_data */
#define MAX_TOP_K 1000
#define ID_MAX 64

typedef struct {
    sl_kb *kb;
    const sl_datasets_req *r;
    char cap[3][ID_MAX];     /* the path's ":" segments, in order */
    sl_value *ds;            /* the dataset the path names (routes with one) */
    const char *id;          /* its id (in idbuf: ds may be replaced) */
    char idbuf[80];
    sl_value **body;         /* the answer */
} ctx;

sl_value *sl_datasets_error(unsigned status, const char *code, const char *message)
{
    /* a message may quote a client's path, which need not be UTF-8 */
    sl_buf m;
    sl_buf_init(&m, 0);
    sl_utf8_clean(message, strlen(message), &m);
    sl_value *e = json_pack("{s:s, s:s, s:i}", "code", code, "message", m.data ? m.data : "",
                            "status", (int)status);
    sl_buf_release(&m);
    return e;
}

static unsigned fail(ctx *x, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static unsigned fail(ctx *x, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    *x->body = sl_datasets_error(status, code, msg);
    return status;
}

/* Dify's codes the knowledge base may give as an error's type, and their
 * statuses. */
static const struct {
    const char *code;
    unsigned status;
} typed[] = {
    {"dataset_name_duplicate", 409},     {"dataset_in_use", 409},
    {"dataset_indexing_in_progress", 409}, {"archived_document_immutable", 403},
    {"document_indexing", 400},          {"invalid_action", 400},
    {"invalid_metadata", 400},           {"provider_not_initialize", 400},
    {"dataset_not_initialized", 400},    {"document_already_finished", 400},
    {"file_too_large", 413},             {"unsupported_file_type", 415},
    {"no_file_uploaded", 400},           {"too_many_files", 400},
};

/* A knowledge base's error as Dify's envelope: its type when it is one of
 * Dify's codes, else by kind. */
static unsigned fail_err(ctx *x, sl_err *err)
{
    const char *msg = err->msg ? err->msg : "the request failed";
    unsigned st;
    const char *code = NULL;
    for (size_t i = 0; err->type && i < sizeof typed / sizeof typed[0]; i++)
        if (!strcmp(err->type, typed[i].code)) {
            code = typed[i].code;
            st = typed[i].status;
        }
    if (!code) {
        switch (err->code) {
        case SL_ENOTFOUND: st = 404, code = "not_found"; break;
        case SL_EINVAL:
        case SL_EPARSE:
        case SL_EVALIDATE: st = 400, code = "invalid_param"; break;
        case SL_ELIMIT: st = 413, code = "request_entity_too_large"; break;
        case SL_EUNSUPPORTED: st = 400, code = "unsupported"; break;
        case SL_ETIMEOUT: st = 504, code = "timeout"; break;
        case SL_ECANCELED: st = 503, code = "server_stopping"; break;
        case SL_EIO:
        case SL_ENODE: st = 502, code = "completion_request_error"; break;
        default: st = 500, code = "internal_server_error"; break;
        }
    }
    unsigned ret = fail(x, st, code, "%s", msg);
    sl_err_clear(err);
    return ret;
}

static unsigned ok(ctx *x, unsigned status, sl_value *v)
{
    *x->body = v;
    return status;
}

static unsigned success(ctx *x)
{
    return ok(x, 200, json_pack("{s:s}", "result", "success"));
}

/* ---- request parts ---- */

static const char *arg(ctx *x, const char *name)
{
    const char *v = x->r->arg ? x->r->arg(x->r->ud, name) : NULL;
    return v && *v ? v : NULL;
}

/* An integer query argument in lo..hi (clamped there, as Dify's limit is),
 * def when absent; -1 with a 400 when it is not a number. */
static int arg_int(ctx *x, const char *name, int def, int lo, int hi, unsigned *st)
{
    const char *v = arg(x, name);
    if (!v)
        return def;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || end == v) {
        *st = fail(x, 400, "invalid_param", "%s must be an integer, not '%.40s'", name, v);
        return -1;
    }
    return n < lo ? lo : n > hi ? hi : (int)n;
}

/* The JSON body as an object (an empty body: {}); NULL with a 400. */
static sl_value *body_object(ctx *x, const char *text, size_t len, const char *what,
                             unsigned *st)
{
    if (!text || !len)
        return json_object();
    json_error_t je;
    sl_value *v = json_loadb(text, len, 0, &je);
    if (!json_is_object(v)) {
        json_decref(v);
        *st = fail(x, 400, "invalid_param",
                   "%s is not a JSON object (%s at line %d, column %d)", what,
                   v ? "not an object" : je.text, je.line, je.column);
        return NULL;
    }
    return v;
}

static sl_value *body(ctx *x, unsigned *st)
{
    return body_object(x, x->r->body, x->r->body_len, "the request body", st);
}

/* A field that must be a string when present (NULL when absent or null);
 * *bad set with a 400 when it is something else. */
static const char *opt_str(ctx *x, const sl_value *o, const char *k, bool *bad, unsigned *st)
{
    const sl_value *v = json_object_get(o, k);
    if (!v || json_is_null(v))
        return NULL;
    if (!json_is_string(v)) {
        *bad = true;
        *st = fail(x, 400, "invalid_param", "%s must be a string", k);
        return NULL;
    }
    return json_string_value(v);
}

/* A page of a list: Dify's {data, has_more, limit, total, page}. */
static sl_value *page_of(sl_value *data, int page, int limit, long long total)
{
    return json_pack("{s:o, s:b, s:i, s:I, s:i}", "data", data ? data : json_array(), "has_more",
                     (long long)page * limit < total, "limit", limit, "total", (json_int_t)total,
                     "page", page);
}

/* Dify's batch: the time to the second and six random digits. */
static void batch_id(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(out, 32, "%Y%m%d%H%M%S", &tm);
    unsigned r = 0;
    if (sl_rand_bytes(&r, sizeof r, NULL))
        r = (unsigned)t;
    snprintf(out + n, 32 - n, "%06u", 100000 + r % 900000);
}

/* ---- process rules (Dify's DocumentService.process_rule_args_validate) ---- */

static int rule_check(const sl_value *pr, sl_err *err)
{
    if (!json_is_object(pr))
        return sl_err_set(err, SL_EINVAL, "Process rule is required");
    const sl_value *m = json_object_get(pr, "mode");
    const char *mode = json_string_value(m);
    if (!m || json_is_null(m) || (json_is_string(m) && !*mode))
        return sl_err_set(err, SL_EINVAL, "Process rule mode is required");
    if (!mode || (strcmp(mode, "automatic") && strcmp(mode, "custom") &&
                  strcmp(mode, "hierarchical")))
        return sl_err_set(err, SL_EINVAL, "Process rule mode is invalid");
    if (!strcmp(mode, "automatic"))
        return 0;
    const sl_value *rules = json_object_get(pr, "rules");
    if (!json_is_object(rules) || !json_object_size(rules))
        return sl_err_set(err, SL_EINVAL, "Process rule rules is required");
    const sl_value *pre = json_object_get(rules, "pre_processing_rules");
    if (!json_is_array(pre))
        return sl_err_set(err, SL_EINVAL, "Process rule pre_processing_rules is required");
    size_t i;
    const sl_value *p;
    json_array_foreach(pre, i, p) {
        const char *id = json_string_value(json_object_get(p, "id"));
        if (!id || !*id)
            return sl_err_set(err, SL_EINVAL, "Process rule pre_processing_rules id is required");
        if (!json_is_boolean(json_object_get(p, "enabled")))
            return sl_err_set(err, SL_EINVAL,
                              "Process rule pre_processing_rules enabled is invalid");
    }
    const sl_value *seg = json_object_get(rules, "segmentation");
    if (!json_is_object(seg))
        return sl_err_set(err, SL_EINVAL, "Process rule segmentation is required");
    const sl_value *sep = json_object_get(seg, "separator");
    if (!sep || json_is_null(sep) || (json_is_string(sep) && !*json_string_value(sep)))
        return sl_err_set(err, SL_EINVAL, "Process rule segmentation separator is required");
    if (!json_is_string(sep))
        return sl_err_set(err, SL_EINVAL, "Process rule segmentation separator is invalid");
    const char *pm = json_string_value(json_object_get(rules, "parent_mode"));
    if (!strcmp(mode, "hierarchical") && pm && !strcmp(pm, "full-doc"))
        return 0;
    const sl_value *mt = json_object_get(seg, "max_tokens");
    if (!mt || json_is_null(mt))
        return sl_err_set(err, SL_EINVAL, "Process rule segmentation max_tokens is required");
    if (!json_is_integer(mt))
        return sl_err_set(err, SL_EINVAL, "Process rule segmentation max_tokens is invalid");
    return 0;
}

/* ---- datasets ---- */

static unsigned ds_create(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    bool bad = false;
    const char *name = opt_str(x, b, "name", &bad, &st);
    if (!bad && (!name || !*name))
        st = fail(x, 400, "invalid_param", "name is required (1 to 40 characters)");
    else if (!bad) {
        /* Dify answers a taken name with 409 dataset_name_duplicate */
        sl_value *same = sl_kb_get(x->kb, name, NULL);
        const char *sn = json_string_value(json_object_get(same, "name"));
        if (sn && !strcmp(sn, name)) {
            st = fail(x, 409, "dataset_name_duplicate",
                      "The dataset name already exists. Please modify your dataset name.");
        } else {
            sl_err err = {0};
            sl_value *out = NULL;
            st = sl_kb_create(x->kb, b, &out, &err) ? fail_err(x, &err) : ok(x, 200, out);
        }
        json_decref(same);
    }
    json_decref(b);
    return st;
}

static unsigned ds_list(ctx *x)
{
    unsigned st = 0;
    int page = arg_int(x, "page", 1, 1, 1 << 20, &st);
    int limit = page < 0 ? 0 : arg_int(x, "limit", 20, 1, MAX_LIMIT, &st);
    if (page < 0 || limit < 0)
        return st;
    /* sluice keeps no tags: no knowledge base has the ones asked for */
    if (arg(x, "tag_ids"))
        return ok(x, 200, page_of(json_array(), page, limit, 0));
    long long total = 0;
    sl_value *data = sl_kb_list(x->kb, arg(x, "keyword"), page, limit, &total);
    if (!data)
        return fail(x, 500, "internal_server_error",
                    "the knowledge bases could not be listed (see the server's log)");
    return ok(x, 200, page_of(data, page, limit, total));
}

static unsigned ds_get(ctx *x)
{
    return ok(x, 200, json_incref(x->ds));
}

static unsigned ds_patch(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    sl_err err = {0};
    sl_value *out = NULL;
    const char *name = json_string_value(json_object_get(b, "name"));
    sl_value *same = name ? sl_kb_get(x->kb, name, NULL) : NULL;
    const char *sid = json_string_value(json_object_get(same, "id"));
    const char *sn = json_string_value(json_object_get(same, "name"));
    if (sid && sn && !strcmp(sn, name) && strcmp(sid, x->id))
        st = fail(x, 409, "dataset_name_duplicate",
                  "The dataset name already exists. Please modify your dataset name.");
    else
        st = sl_kb_update(x->kb, x->id, b, &out, &err) ? fail_err(x, &err) : ok(x, 200, out);
    json_decref(same);
    json_decref(b);
    return st;
}

static unsigned ds_delete(ctx *x)
{
    sl_err err = {0};
    return sl_kb_delete(x->kb, x->id, &err) ? fail_err(x, &err) : ok(x, 204, NULL);
}

/* ---- documents ---- */

/* The fields of a create or update request (create-by-text's body or the
 * `data` part of a file upload) checked, and the knowledge base given the
 * indexing technique of its first document.  0, or the status of the
 * answer already made. */
static unsigned doc_fields(ctx *x, const sl_value *b, sl_kb_doc_in *in)
{
    unsigned st = 0;
    bool bad = false;
    const char *tech = opt_str(x, b, "indexing_technique", &bad, &st);
    const char *form = bad ? NULL : opt_str(x, b, "doc_form", &bad, &st);
    const char *orig = bad ? NULL : opt_str(x, b, "original_document_id", &bad, &st);
    if (bad)
        return st;
    if (tech && strcmp(tech, "high_quality") && strcmp(tech, "economy"))
        return fail(x, 400, "invalid_param",
                    "Invalid indexing technique: use \"high_quality\" or \"economy\"");
    if (form && strcmp(form, "text_model") && strcmp(form, "hierarchical_model") &&
        strcmp(form, "qa_model"))
        return fail(x, 400, "invalid_param", "Invalid doc_form.");
    if (form && !strcmp(form, "qa_model"))
        return fail(x, 400, "invalid_param",
                    "doc_form \"qa_model\" is not supported by sluice (it has a model write "
                    "questions and answers); use \"text_model\" or \"hierarchical_model\"");
    const sl_value *pr = json_object_get(b, "process_rule");
    if (pr && !json_is_null(pr)) {
        sl_err err = {0};
        if (rule_check(pr, &err))
            return fail_err(x, &err);
        in->process_rule = pr;
    }
    in->doc_form = form;
    if (orig)
        in->replace_id = orig;
    const char *have = json_string_value(json_object_get(x->ds, "indexing_technique"));
    if (!have && !tech)
        return fail(x, 400, "invalid_param", "indexing_technique is required.");
    /* The first document sets the knowledge base's technique, embedding
     * model and retrieval settings, as in Dify (where a knowledge base
     * made without them has none; sluice's starts as "economy"). */
    const char *model = json_string_value(json_object_get(b, "embedding_model"));
    const char *hm = json_string_value(json_object_get(x->ds, "embedding_model"));
    if (tech && json_integer_value(json_object_get(x->ds, "document_count")) == 0 &&
        (!have || strcmp(have, tech) || (model && (!hm || strcmp(hm, model))))) {
        sl_value *patch = json_pack("{s:s}", "indexing_technique", tech);
        const char *keys[] = {"embedding_model", "embedding_model_provider", "retrieval_model"};
        for (size_t i = 0; i < 3; i++) {
            const sl_value *v = json_object_get(b, keys[i]);
            if (v && !json_is_null(v))
                json_object_set(patch, keys[i], (sl_value *)v);
        }
        sl_err err = {0};
        sl_value *out = NULL;
        int rc = sl_kb_update(x->kb, x->id, patch, &out, &err);
        json_decref(patch);
        if (rc)
            return fail_err(x, &err);
        json_decref(x->ds);
        x->ds = out;
    }
    return 0;
}

static unsigned doc_add(ctx *x, sl_kb_doc_in *in)
{
    char batch[32];
    batch_id(batch);
    in->batch = batch;
    sl_value *doc = NULL;
    bool unchanged = false;
    sl_err err = {0};
    if (sl_kb_add(x->kb, x->id, in, &doc, &unchanged, &err)) {
        /* a file's kind or size in Dify's words */
        if (in->bytes && (err.code == SL_EUNSUPPORTED || err.code == SL_ELIMIT))
            sl_err_set_type(&err, err.code == SL_ELIMIT ? "file_too_large"
                                                        : "unsupported_file_type");
        return fail_err(x, &err);
    }
    const char *b = json_string_value(json_object_get(doc, "batch"));
    return ok(x, 200, json_pack("{s:o, s:s}", "document", doc, "batch", b ? b : batch));
}

static unsigned doc_create_text(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    bool bad = false;
    const char *name = opt_str(x, b, "name", &bad, &st);
    const char *text = bad ? NULL : opt_str(x, b, "text", &bad, &st);
    sl_kb_doc_in in = {0};
    if (bad)
        ;
    else if (!name || !*name)
        st = fail(x, 400, "invalid_param", "name is required (the document's name)");
    else if (!text)
        st = fail(x, 400, "invalid_param", "text is required (the document's content)");
    else if (!(st = doc_fields(x, b, &in))) {
        in.name = name;
        in.text = text;
        in.len = strlen(text);
        st = doc_add(x, &in);
    }
    json_decref(b);
    return st;
}

/* The `data` part of an upload as an object ({} when none came). */
static sl_value *upload_data(ctx *x, unsigned *st)
{
    const char *d = x->r->data;
    return body_object(x, d, d ? strlen(d) : 0, "the data field (a JSON object as a string)",
                       st);
}

static unsigned doc_create_file(ctx *x)
{
    if (!x->r->multipart || !x->r->file)
        return fail(x, 400, "no_file_uploaded", "Please upload your file.");
    if (!x->r->file_name || !*x->r->file_name)
        return fail(x, 400, "filename_not_exists_error", "The specified filename does not exist.");
    unsigned st = 0;
    sl_value *b = upload_data(x, &st);
    if (!b)
        return st;
    sl_kb_doc_in in = {0};
    if (!(st = doc_fields(x, b, &in))) {
        in.name = x->r->file_name;
        in.bytes = x->r->file;
        in.len = x->r->file_len;
        in.mime = x->r->file_mime;
        st = doc_add(x, &in);
    }
    json_decref(b);
    return st;
}

/* The document the path names, or NULL with a 404. */
static sl_value *doc_of(ctx *x, const char *doc_id, unsigned *st)
{
    sl_err err = {0};
    sl_value *d = sl_kb_doc(x->kb, x->id, doc_id, &err);
    if (!d)
        *st = err.code == SL_ENOTFOUND || !err.code
                  ? (sl_err_clear(&err), fail(x, 404, "not_found", "Document Not Exists."))
                  : fail_err(x, &err);
    return d;
}

/* The document the path names when it may be changed: an archived one may
 * not (403, as in Dify); NULL with the answer made. */
static sl_value *doc_editable(ctx *x, unsigned *st)
{
    sl_value *d = doc_of(x, x->cap[1], st);
    if (d && json_is_true(json_object_get(d, "archived"))) {
        json_decref(d);
        *st = fail(x, 403, "archived_document_immutable",
                   "The archived document is not editable.");
        return NULL;
    }
    return d;
}

static unsigned doc_update_text(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = doc_editable(x, &st);
    if (!doc)
        return st;
    sl_value *b = body(x, &st);
    if (b) {
        bool bad = false;
        const char *name = opt_str(x, b, "name", &bad, &st);
        const char *text = bad ? NULL : opt_str(x, b, "text", &bad, &st);
        sl_kb_doc_in in = {0};
        if (bad)
            ;
        else if (text && (!name || !*name))
            st = fail(x, 400, "invalid_param", "name is required when text is provided");
        else if (!text)
            st = fail(x, 400, "invalid_param",
                      "text is required: sluice indexes a document again from its text (send "
                      "the text with the new name or process_rule)");
        else if (!(st = doc_fields(x, b, &in))) {
            in.name = name;
            in.text = text;
            in.len = strlen(text);
            in.replace_id = x->cap[1];
            st = doc_add(x, &in);
        }
        json_decref(b);
    }
    json_decref(doc);
    return st;
}

static unsigned doc_update_file(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = doc_editable(x, &st);
    if (!doc)
        return st;
    if (!x->r->multipart || !x->r->file)
        st = fail(x, 400, "no_file_uploaded",
                  "Please upload your file: sluice indexes a document again from its file (a "
                  "new process_rule alone is not applied)");
    else if (!x->r->file_name || !*x->r->file_name)
        st = fail(x, 400, "filename_not_exists_error", "The specified filename does not exist.");
    sl_value *b = st ? NULL : upload_data(x, &st);
    if (b) {
        sl_kb_doc_in in = {0};
        if (!(st = doc_fields(x, b, &in))) {
            in.name = x->r->file_name;
            in.bytes = x->r->file;
            in.len = x->r->file_len;
            in.mime = x->r->file_mime;
            in.replace_id = x->cap[1];
            st = doc_add(x, &in);
        }
        json_decref(b);
    }
    json_decref(doc);
    return st;
}

static unsigned doc_list(ctx *x)
{
    unsigned st = 0;
    int page = arg_int(x, "page", 1, 1, 1 << 20, &st);
    int limit = page < 0 ? 0 : arg_int(x, "limit", 20, 1, MAX_LIMIT, &st);
    if (page < 0 || limit < 0)
        return st;
    long long total = 0;
    sl_err err = {0};
    sl_value *data = sl_kb_docs(x->kb, x->id, arg(x, "keyword"), arg(x, "status"), page, limit,
                                &total, &err);
    if (!data)
        return fail_err(x, &err);
    /* Dify's documents list says has_more when the page is full */
    sl_value *p = page_of(data, page, limit, total);
    json_object_set_new(p, "has_more", json_boolean(json_array_size(data) == (size_t)limit));
    return ok(x, 200, p);
}

static unsigned doc_get(ctx *x)
{
    const char *m = arg(x, "metadata");
    if (m && strcmp(m, "all") && strcmp(m, "only") && strcmp(m, "without"))
        return fail(x, 400, "invalid_metadata", "Invalid metadata value: %.64s", m);
    unsigned st = 0;
    sl_value *doc = doc_of(x, x->cap[1], &st);
    if (!doc)
        return st;
    if (m && !strcmp(m, "only")) {
        sl_value *o = json_pack("{s:O?, s:O?, s:O?}", "id", json_object_get(doc, "id"),
                                "doc_type", json_object_get(doc, "doc_type"), "doc_metadata",
                                json_object_get(doc, "doc_metadata"));
        json_decref(doc);
        return ok(x, 200, o);
    }
    if (m && !strcmp(m, "without")) {
        json_object_del(doc, "doc_type");
        json_object_del(doc, "doc_metadata");
    }
    return ok(x, 200, doc);
}

static unsigned doc_delete(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = doc_editable(x, &st);
    if (!doc)
        return st;
    json_decref(doc);
    sl_err err = {0};
    return sl_kb_doc_delete(x->kb, x->id, x->cap[1], &err) ? fail_err(x, &err)
                                                            : ok(x, 204, NULL);
}

/* Dify's indexing-status entry of a document.  Indexing is synchronous in
 * sluice: every stage finished when the document was added. */
static sl_value *indexing_status(const sl_value *doc)
{
    const sl_value *t = json_object_get(doc, "completed_at");
    if (!json_is_integer(t))
        t = json_object_get(doc, "created_at");
    const sl_value *n = json_object_get(doc, "segment_count");
    const char *status = json_string_value(json_object_get(doc, "indexing_status"));
    bool done = status && !strcmp(status, "completed");
    return json_pack("{s:O?, s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:n, s:O?, s:n, s:O?, s:O?}", "id",
                     json_object_get(doc, "id"), "indexing_status", status ? status : "completed",
                     "processing_started_at", json_object_get(doc, "created_at"),
                     "parsing_completed_at", done ? t : NULL, "cleaning_completed_at",
                     done ? t : NULL, "splitting_completed_at", done ? t : NULL, "completed_at",
                     done ? t : NULL, "paused_at", "error", json_object_get(doc, "error"),
                     "stopped_at", "completed_segments", done ? n : NULL, "total_segments", n);
}

static unsigned doc_indexing(ctx *x)
{
    sl_err err = {0};
    sl_value *docs = sl_kb_batch(x->kb, x->id, x->cap[1], &err);
    if (!docs && err.code && err.code != SL_ENOTFOUND)
        return fail_err(x, &err);
    sl_err_clear(&err);
    if (!json_array_size(docs)) {
        json_decref(docs);
        return fail(x, 404, "not_found", "Documents not found.");
    }
    sl_value *data = json_array();
    size_t i;
    sl_value *d;
    json_array_foreach(docs, i, d) {
        /* the knowledge base's entries carry the counts, or are documents */
        sl_value *full = json_object_get(d, "total_segments") ? NULL
                         : sl_kb_doc(x->kb, x->id,
                                     json_string_value(json_object_get(d, "id")), NULL);
        json_array_append_new(data, json_object_get(d, "total_segments")
                                        ? json_incref(d)
                                        : indexing_status(full ? full : d));
        json_decref(full);
    }
    json_decref(docs);
    return ok(x, 200, json_pack("{s:o}", "data", data));
}

/* A list of strings of at most MAX_IDS; NULL with a 400. */
static const sl_value *ids_of(ctx *x, const sl_value *b, const char *k, unsigned *st)
{
    const sl_value *ids = json_object_get(b, k);
    if (!json_is_array(ids) || !json_array_size(ids)) {
        *st = fail(x, 400, "invalid_param", "%s is required: a list of document ids", k);
        return NULL;
    }
    if (json_array_size(ids) > MAX_IDS) {
        *st = fail(x, 400, "invalid_param", "%s has %zu ids; at most %d in one request", k,
                   json_array_size(ids), MAX_IDS);
        return NULL;
    }
    size_t i;
    const sl_value *v;
    json_array_foreach(ids, i, v) if (!json_is_string(v)) {
        *st = fail(x, 400, "invalid_param", "%s[%zu] must be a string (a document id)", k, i);
        return NULL;
    }
    return ids;
}

static unsigned doc_status(ctx *x)
{
    const char *a = x->cap[1];
    if (strcmp(a, "enable") && strcmp(a, "disable") && strcmp(a, "archive") &&
        strcmp(a, "un_archive"))
        return fail(x, 400, "invalid_action", "Invalid action.");
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    const sl_value *ids = ids_of(x, b, "document_ids", &st);
    sl_err err = {0};
    if (ids)
        st = sl_kb_doc_status(x->kb, x->id, ids, a, &err) ? fail_err(x, &err) : success(x);
    json_decref(b);
    return st;
}

static unsigned doc_metadata(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    const sl_value *ops = json_object_get(b, "operation_data");
    if (!json_is_array(ops))
        st = fail(x, 400, "invalid_param", "operation_data is required: a list of "
                  "{document_id, metadata_list: [{id, name, value}], partial_update}");
    else if (json_array_size(ops) > MAX_IDS)
        st = fail(x, 400, "invalid_param", "operation_data has %zu entries; at most %d",
                  json_array_size(ops), MAX_IDS);
    /* checked whole before any is applied */
    size_t i;
    const sl_value *op;
    if (!st)
        json_array_foreach(ops, i, op) {
            const sl_value *list = json_object_get(op, "metadata_list");
            if (!json_string_value(json_object_get(op, "document_id"))) {
                st = fail(x, 400, "invalid_param", "operation_data[%zu].document_id is required", i);
                break;
            }
            if (!json_is_array(list)) {
                st = fail(x, 400, "invalid_param", "operation_data[%zu].metadata_list is required "
                          "(a list of {id, name, value})", i);
                break;
            }
            size_t j;
            const sl_value *m;
            json_array_foreach(list, j, m) {
                const sl_value *v = json_object_get(m, "value");
                if (!json_string_value(json_object_get(m, "name")) ||
                    (v && !json_is_null(v) && !json_is_string(v) && !json_is_number(v))) {
                    st = fail(x, 400, "invalid_metadata",
                              "operation_data[%zu].metadata_list[%zu]: a name and a value "
                              "(string, number or null) are required", i, j);
                    break;
                }
            }
            if (st)
                break;
        }
    if (!st)
        json_array_foreach(ops, i, op) {
            sl_value *values = json_object();
            size_t j;
            const sl_value *m;
            json_array_foreach(json_object_get(op, "metadata_list"), j, m) {
                const sl_value *v = json_object_get(m, "value");
                json_object_set_new(values, json_string_value(json_object_get(m, "name")),
                                    v ? json_incref((sl_value *)v) : json_null());
            }
            sl_err err = {0};
            int rc = sl_kb_doc_meta(x->kb, x->id,
                                    json_string_value(json_object_get(op, "document_id")), values,
                                    json_is_true(json_object_get(op, "partial_update")), &err);
            json_decref(values);
            if (rc) {
                st = fail_err(x, &err);
                break;
            }
        }
    if (!st)
        st = success(x);
    json_decref(b);
    return st;
}

/* ---- segments ---- */

static const char *form_of(const sl_value *doc)
{
    const char *f = json_string_value(json_object_get(doc, "doc_form"));
    return f ? f : "text_model";
}

static unsigned seg_add(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = doc_editable(x, &st);
    if (!doc)
        return st;
    sl_value *b = body(x, &st);
    const sl_value *segs = b ? json_object_get(b, "segments") : NULL;
    const char *status = json_string_value(json_object_get(doc, "indexing_status"));
    if (!b)
        ;
    else if (status && strcmp(status, "completed"))
        st = fail(x, 404, "not_found", "Document is not completed.");
    else if (json_is_false(json_object_get(doc, "enabled")))
        st = fail(x, 404, "not_found", "Document is disabled.");
    else if (!json_is_array(segs) || !json_array_size(segs))
        st = fail(x, 400, "invalid_param", "segments is required: a list of {content, answer, "
                  "keywords}");
    else if (json_array_size(segs) > MAX_SEGMENTS)
        st = fail(x, 400, "invalid_param", "Exceeded maximum segments limit of %d.", MAX_SEGMENTS);
    size_t i;
    const sl_value *s;
    if (b && !st)
        json_array_foreach(segs, i, s) {
            const sl_value *c = json_object_get(s, "content");
            if (!json_is_object(s) || !json_is_string(c)) {
                st = fail(x, 400, "invalid_param", "segments[%zu].content is required (a string)",
                          i);
                break;
            }
            if (!*json_string_value(c)) {
                st = fail(x, 400, "invalid_param", "Content is empty");
                break;
            }
        }
    if (b && !st) {
        sl_err err = {0};
        sl_value *out = NULL;
        st = sl_kb_segments_add(x->kb, x->id, x->cap[1], segs, &out, &err)
                 ? fail_err(x, &err)
                 : ok(x, 200, json_pack("{s:o, s:s}", "data", out, "doc_form", form_of(doc)));
    }
    json_decref(b);
    json_decref(doc);
    return st;
}

static unsigned seg_list(ctx *x)
{
    unsigned st = 0;
    int page = arg_int(x, "page", 1, 1, 1 << 20, &st);
    int limit = page < 0 ? 0 : arg_int(x, "limit", 20, 1, MAX_LIMIT, &st);
    if (page < 0 || limit < 0)
        return st;
    sl_value *doc = doc_of(x, x->cap[1], &st);
    if (!doc)
        return st;
    long long total = 0;
    sl_err err = {0};
    sl_value *data = sl_kb_segments(x->kb, x->id, x->cap[1], arg(x, "keyword"), arg(x, "status"),
                                    page, limit, &total, &err);
    if (!data) {
        st = fail_err(x, &err);
    } else {
        sl_value *p = page_of(data, page, limit, total);
        json_object_set_new(p, "doc_form", json_string(form_of(doc)));
        st = ok(x, 200, p);
    }
    json_decref(doc);
    return st;
}

/* The segment the path names: 404s in Dify's words. */
static sl_value *seg_of(ctx *x, sl_value **doc, bool edit, unsigned *st)
{
    *doc = edit ? doc_editable(x, st) : doc_of(x, x->cap[1], st);
    if (!*doc)
        return NULL;
    sl_err err = {0};
    sl_value *s = sl_kb_segment(x->kb, x->id, x->cap[1], x->cap[2], &err);
    if (!s)
        *st = err.code == SL_ENOTFOUND || !err.code
                  ? (sl_err_clear(&err), fail(x, 404, "not_found", "Segment not found."))
                  : fail_err(x, &err);
    return s;
}

static unsigned seg_get(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = NULL, *s = seg_of(x, &doc, false, &st);
    if (s)
        st = ok(x, 200, json_pack("{s:o, s:s}", "data", s, "doc_form", form_of(doc)));
    json_decref(doc);
    return st;
}

static unsigned seg_update(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = NULL, *s = seg_of(x, &doc, true, &st);
    sl_value *b = s ? body(x, &st) : NULL;
    const sl_value *patch = json_object_get(b, "segment");
    if (b && !json_is_object(patch)) {
        st = fail(x, 400, "invalid_param", "segment is required: {content, answer, keywords, "
                  "enabled}");
    } else if (b) {
        const sl_value *c = json_object_get(patch, "content");
        if (c && !json_is_null(c) && !json_is_string(c))
            st = fail(x, 400, "invalid_param", "segment.content must be a string");
        else if (json_is_string(c) && !*json_string_value(c))
            st = fail(x, 400, "invalid_param", "Content is empty");
        else if (json_is_false(json_object_get(s, "enabled")) &&
                 !json_is_true(json_object_get(patch, "enabled")))
            st = fail(x, 400, "invalid_param", "Can't update disabled segment");
        else {
            sl_err err = {0};
            sl_value *out = NULL;
            st = sl_kb_segment_update(x->kb, x->id, x->cap[1], x->cap[2], patch, &out, &err)
                     ? fail_err(x, &err)
                     : ok(x, 200, json_pack("{s:o, s:s}", "data", out, "doc_form",
                                            form_of(doc)));
        }
    }
    json_decref(b);
    json_decref(s);
    json_decref(doc);
    return st;
}

static unsigned seg_delete(ctx *x)
{
    unsigned st = 0;
    sl_value *doc = NULL, *s = seg_of(x, &doc, true, &st);
    if (s) {
        sl_err err = {0};
        st = sl_kb_segment_delete(x->kb, x->id, x->cap[1], x->cap[2], &err) ? fail_err(x, &err)
                                                                           : ok(x, 204, NULL);
    }
    json_decref(s);
    json_decref(doc);
    return st;
}

/* A segment's child chunks (parent-child documents), read-only: sluice
 * makes them when it splits, and changing one is not served yet. */
static unsigned child_list(ctx *x)
{
    unsigned st = 0;
    int page = arg_int(x, "page", 1, 1, 1 << 20, &st);
    int limit = page < 0 ? 0 : arg_int(x, "limit", 20, 1, MAX_LIMIT, &st);
    if (page < 0 || limit < 0)
        return st;
    const char *kw = arg(x, "keyword");
    sl_value *doc = NULL, *s = seg_of(x, &doc, false, &st);
    if (!s) {
        json_decref(doc);
        return st;
    }
    sl_value *data = json_array();
    long long total = 0;
    size_t i;
    const sl_value *c;
    json_array_foreach(json_object_get(s, "child_chunks"), i, c) {
        const char *t = json_string_value(json_object_get(c, "content"));
        if (kw && (!t || !strstr(t, kw)))
            continue;
        if (total >= (long long)(page - 1) * limit && total < (long long)page * limit)
            json_array_append(data, (sl_value *)c);
        total++;
    }
    json_decref(s);
    json_decref(doc);
    return ok(x, 200, json_pack("{s:o, s:I, s:I, s:i, s:i}", "data", data, "total",
                                (json_int_t)total, "total_pages",
                                (json_int_t)((total + limit - 1) / limit), "page", page, "limit",
                                limit));
}

/* ---- retrieval ---- */

/* A number field when present; false with a 400 when it is not one. */
static bool num_field(ctx *x, const sl_value *o, const char *k, double *out, unsigned *st)
{
    const sl_value *v = json_object_get(o, k);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v)) {
        *st = fail(x, 400, "invalid_param", "retrieval_model.%s must be a number", k);
        return false;
    }
    *out = json_number_value(v);
    return true;
}

/* Dify's RetrievalModel over the knowledge base's own settings. */
static unsigned retrieval_model(ctx *x, const sl_value *rm, sl_kb_query *q)
{
    unsigned st = 0;
    if (!rm || json_is_null(rm))
        return 0;
    if (!json_is_object(rm))
        return fail(x, 400, "invalid_param", "retrieval_model must be an object");
    bool bad = false;
    const char *m = opt_str(x, rm, "search_method", &bad, &st);
    if (bad)
        return st;
    if (m && strcmp(m, "semantic_search") && strcmp(m, "full_text_search") &&
        strcmp(m, "hybrid_search") && strcmp(m, "keyword_search"))
        return fail(x, 400, "invalid_param",
                    "retrieval_model.search_method '%.40s' is not one of semantic_search, "
                    "full_text_search, hybrid_search, keyword_search", m);
    if (m)
        q->method = m;
    const sl_value *tk = json_object_get(rm, "top_k");
    if (tk && !json_is_null(tk)) {
        if (!json_is_integer(tk) || json_integer_value(tk) < 1 ||
            json_integer_value(tk) > MAX_TOP_K)
            return fail(x, 400, "invalid_param",
                        "retrieval_model.top_k must be an integer from 1 to %d", MAX_TOP_K);
        q->top_k = (int)json_integer_value(tk);
    }
    const sl_value *te = json_object_get(rm, "score_threshold_enabled");
    if (te && !json_is_null(te))
        q->threshold_enabled = json_is_true(te);
    if (!num_field(x, rm, "score_threshold", &q->score_threshold, &st))
        return st;
    const sl_value *re = json_object_get(rm, "reranking_enable");
    const char *mode = opt_str(x, rm, "reranking_mode", &bad, &st);
    if (bad)
        return st;
    if (mode && strcmp(mode, "reranking_model") && strcmp(mode, "weighted_score"))
        return fail(x, 400, "invalid_param",
                    "retrieval_model.reranking_mode must be reranking_model or weighted_score");
    const sl_value *rmod = json_object_get(rm, "reranking_model");
    const sl_value *w = json_object_get(rm, "weights");
    if (json_is_true(re) || (mode && !strcmp(mode, "weighted_score") && json_is_object(w))) {
        q->reranking_mode = mode ? mode : "reranking_model";
        q->rerank_provider = json_string_value(json_object_get(rmod, "reranking_provider_name"));
        q->rerank_model = json_string_value(json_object_get(rmod, "reranking_model_name"));
        if (!strcmp(q->reranking_mode, "weighted_score")) {
            if (!json_is_object(w))
                return fail(x, 400, "invalid_param", "weights is required");
            if (!num_field(x, json_object_get(w, "vector_setting"), "vector_weight",
                           &q->vector_weight, &st) ||
                !num_field(x, json_object_get(w, "keyword_setting"), "keyword_weight",
                           &q->keyword_weight, &st))
                return st;
        }
    } else if (json_is_false(re)) {
        q->reranking_mode = NULL;
    }
    const sl_value *cond = json_object_get(rm, "metadata_filtering_conditions");
    if (cond && !json_is_null(cond)) {
        if (!json_is_object(cond) || !json_is_array(json_object_get(cond, "conditions")))
            return fail(x, 400, "invalid_param", "retrieval_model.metadata_filtering_conditions "
                        "must be {logical_operator, conditions: [{name, comparison_operator, "
                        "value}]}");
        q->conditions = cond;
    }
    return 0;
}

static unsigned retrieve(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    bool bad = false;
    const char *query = opt_str(x, b, "query", &bad, &st);
    const sl_value *att = json_object_get(b, "attachment_ids");
    sl_kb_query q;
    memset(&q, 0, sizeof q);
    sl_err err = {0};
    if (bad)
        ;
    else if (att && !json_is_null(att) && !json_is_array(att))
        st = fail(x, 400, "invalid_param", "Attachment_ids must be a list");
    else if (json_array_size(att))
        st = fail(x, 400, "invalid_param", "attachment_ids: sluice searches by text only; send "
                  "a query");
    else if (!query || !*query)
        st = fail(x, 400, "invalid_param", "Query or attachment_ids is required");
    else if (sl_utf8_chars(query, strlen(query)) > MAX_QUERY_CHARS)
        st = fail(x, 400, "invalid_param", "Query cannot exceed %d characters", MAX_QUERY_CHARS);
    else if (sl_kb_query_defaults(x->kb, x->id, &q, &err))
        st = fail_err(x, &err);
    else if (!(st = retrieval_model(x, json_object_get(b, "retrieval_model"), &q))) {
        q.query = query;
        sl_value *records = NULL;
        long long tokens = 0;
        st = sl_kb_search(x->kb, x->id, &q, &records, &tokens, &err)
                 ? fail_err(x, &err)
                 : ok(x, 200, json_pack("{s:{s:s}, s:o}", "query", "content", query, "records",
                                        records ? records : json_array()));
    }
    json_decref(b);
    return st;
}

/* ---- metadata fields ---- */

static unsigned md_add(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    bool bad = false;
    const char *type = opt_str(x, b, "type", &bad, &st);
    const char *name = bad ? NULL : opt_str(x, b, "name", &bad, &st);
    if (bad)
        ;
    else if (!type || (strcmp(type, "string") && strcmp(type, "number") && strcmp(type, "time")))
        st = fail(x, 400, "invalid_param", "type is required: \"string\", \"number\" or \"time\"");
    else if (!name || !*name)
        st = fail(x, 400, "invalid_param", "name is required");
    else {
        sl_err err = {0};
        sl_value *out = NULL;
        st = sl_kb_field_add(x->kb, x->id, name, type, &out, &err) ? fail_err(x, &err)
                                                                    : ok(x, 201, out);
    }
    json_decref(b);
    return st;
}

static unsigned md_list(ctx *x)
{
    sl_err err = {0};
    sl_value *f = sl_kb_fields(x->kb, x->id, &err);
    return f ? ok(x, 200, f) : fail_err(x, &err);
}

static unsigned md_rename(ctx *x)
{
    unsigned st = 0;
    sl_value *b = body(x, &st);
    if (!b)
        return st;
    bool bad = false;
    const char *name = opt_str(x, b, "name", &bad, &st);
    if (bad)
        ;
    else if (!name || !*name)
        st = fail(x, 400, "invalid_param", "name is required");
    else {
        sl_err err = {0};
        sl_value *out = NULL;
        st = sl_kb_field_rename(x->kb, x->id, x->cap[1], name, &out, &err) ? fail_err(x, &err)
                                                                            : ok(x, 200, out);
    }
    json_decref(b);
    return st;
}

static unsigned md_delete(ctx *x)
{
    sl_err err = {0};
    return sl_kb_field_delete(x->kb, x->id, x->cap[1], &err) ? fail_err(x, &err)
                                                              : ok(x, 204, NULL);
}

/* Dify's built-in fields: the same for every knowledge base. */
static unsigned md_builtin(ctx *x)
{
    return ok(x, 200,
              json_pack("{s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}",
                        "fields", "name", "document_name", "type", "string", "name", "uploader",
                        "type", "string", "name", "upload_date", "type", "time", "name",
                        "last_update_date", "type", "time", "name", "source", "type", "string"));
}

static unsigned md_builtin_action(ctx *x)
{
    const char *a = x->cap[1];
    if (strcmp(a, "enable") && strcmp(a, "disable"))
        return fail(x, 400, "invalid_action", "Invalid action.");
    sl_err err = {0};
    return sl_kb_builtin_fields(x->kb, x->id, !strcmp(a, "enable"), &err) ? fail_err(x, &err)
                                                                           : success(x);
}

/* ---- routes ---- */

/* What sluice does not do yet, refused by name. */
static unsigned unsupported(ctx *x)
{
    return fail(x, 501, "not_supported",
                "%s /v1%s: sluice does not support this route of the Knowledge API yet (changes "
                "to child chunks, tags, the model list, downloads and pipelines are not "
                "served; docs/knowledge.md)",
                x->r->method, x->r->path);
}

typedef unsigned (*ds_fn)(ctx *x);

/* In a pattern ":" stands for one path segment (an id), captured in order;
 * a pattern ending in "*" matches any rest.  needs_ds: the first capture
 * is a dataset id, looked up before the handler runs. */
static const struct {
    const char *method;
    const char *pattern;
    ds_fn fn;
    bool needs_ds;
} routes[] = {
    {"POST", "/datasets", ds_create, false},
    {"GET", "/datasets", ds_list, false},
    {"GET", "/datasets/metadata/built-in", md_builtin, false},
    {"*", "/datasets/tags*", unsupported, false},
    {"*", "/datasets/pipeline*", unsupported, false},
    {"*", "/datasets/:/tags*", unsupported, false},
    {"*", "/datasets/:/pipeline*", unsupported, false},
    {"GET", "/datasets/:", ds_get, true},
    {"PATCH", "/datasets/:", ds_patch, true},
    {"DELETE", "/datasets/:", ds_delete, true},
    {"POST", "/datasets/:/document/create-by-text", doc_create_text, true},
    {"POST", "/datasets/:/document/create_by_text", doc_create_text, true},
    {"POST", "/datasets/:/document/create-by-file", doc_create_file, true},
    {"POST", "/datasets/:/document/create_by_file", doc_create_file, true},
    {"PATCH", "/datasets/:/documents/status/:", doc_status, true},
    {"POST", "/datasets/:/documents/metadata", doc_metadata, true},
    {"*", "/datasets/:/documents/download-zip", unsupported, false},
    {"GET", "/datasets/:/documents", doc_list, true},
    {"POST", "/datasets/:/documents/:/update-by-text", doc_update_text, true},
    {"POST", "/datasets/:/documents/:/update_by_text", doc_update_text, true},
    {"POST", "/datasets/:/documents/:/update-by-file", doc_update_file, true},
    {"POST", "/datasets/:/documents/:/update_by_file", doc_update_file, true},
    {"GET", "/datasets/:/documents/:/indexing-status", doc_indexing, true},
    {"*", "/datasets/:/documents/:/download", unsupported, false},
    {"GET", "/datasets/:/documents/:", doc_get, true},
    {"PATCH", "/datasets/:/documents/:", doc_update_file, true},
    {"DELETE", "/datasets/:/documents/:", doc_delete, true},
    {"POST", "/datasets/:/documents/:/segments", seg_add, true},
    {"GET", "/datasets/:/documents/:/segments", seg_list, true},
    {"GET", "/datasets/:/documents/:/segments/:/child_chunks", child_list, true},
    {"*", "/datasets/:/documents/:/segments/:/child_chunks*", unsupported, false},
    {"GET", "/datasets/:/documents/:/segments/:", seg_get, true},
    {"POST", "/datasets/:/documents/:/segments/:", seg_update, true},
    {"DELETE", "/datasets/:/documents/:/segments/:", seg_delete, true},
    {"POST", "/datasets/:/retrieve", retrieve, true},
    {"POST", "/datasets/:/hit-testing", retrieve, true},
    {"POST", "/datasets/:/metadata", md_add, true},
    {"GET", "/datasets/:/metadata", md_list, true},
    {"GET", "/datasets/:/metadata/built-in", md_builtin, true},
    {"POST", "/datasets/:/metadata/built-in/:", md_builtin_action, true},
    {"PATCH", "/datasets/:/metadata/:", md_rename, true},
    {"DELETE", "/datasets/:/metadata/:", md_delete, true},
    {"*", "/workspaces/current/models/model-types/*", unsupported, false},
};

/* Whether path matches pattern, filling cap (may be NULL) with the ":"
 * segments. */
static bool match(const char *pattern, const char *path, char (*cap)[ID_MAX])
{
    int k = 0;
    while (*pattern) {
        if (*pattern == '*')
            return true;
        if (*pattern == ':') {
            size_t n = strcspn(path, "/");
            if (!n || n >= ID_MAX || k == 3)
                return false;
            if (cap) {
                memcpy(cap[k], path, n);
                cap[k][n] = 0;
            }
            k++;
            path += n;
            pattern++;
        } else if (*pattern++ != *path++) {
            return false;
        }
    }
    return !*path;
}

bool sl_datasets_path(const char *path)
{
    static const char models[] = "/workspaces/current/models/model-types/";
    return (!strncmp(path, "/datasets", 9) && (!path[9] || path[9] == '/')) ||
           !strncmp(path, models, sizeof models - 1);
}

bool sl_datasets_upload(const char *method, const char *path)
{
    static const char *const up[] = {
        "/datasets/:/document/create-by-file",    "/datasets/:/document/create_by_file",
        "/datasets/:/documents/:/update-by-file", "/datasets/:/documents/:/update_by_file",
    };
    if (!strcmp(method, "PATCH"))
        return match("/datasets/:/documents/:", path, NULL) &&
               !match("/datasets/:/documents/status/:", path, NULL);
    if (strcmp(method, "POST"))
        return false;
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++)
        if (match(up[i], path, NULL))
            return true;
    return false;
}

unsigned sl_datasets_serve(sl_kb *kb, const sl_datasets_req *r, sl_value **body_out)
{
    ctx x = {.kb = kb, .r = r, .body = body_out};
    *body_out = NULL;
    bool path_known = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!match(routes[i].pattern, r->path, x.cap))
            continue;
        path_known = true;
        if (strcmp(routes[i].method, "*") && strcmp(routes[i].method, r->method))
            continue;
        if (routes[i].needs_ds) {
            sl_err err = {0};
            x.ds = sl_kb_get(kb, x.cap[0], &err);
            if (!x.ds) {
                if (err.code && err.code != SL_ENOTFOUND)
                    return fail_err(&x, &err);
                sl_err_clear(&err);
                return fail(&x, 404, "not_found", "Dataset not found.");
            }
            const char *id = json_string_value(json_object_get(x.ds, "id"));
            if (!id || strlen(id) >= sizeof x.idbuf) {
                json_decref(x.ds);
                return fail(&x, 500, "internal_server_error",
                            "the knowledge base '%s' has no id", x.cap[0]);
            }
            memcpy(x.idbuf, id, strlen(id) + 1);
            x.id = x.idbuf;
        }
        unsigned st = routes[i].fn(&x);
        json_decref(x.ds);
        return st;
    }
    if (path_known)
        return fail(&x, 405, "method_not_allowed",
                    "The method is not allowed for the requested URL (%s /v1%s).", r->method,
                    r->path);
    return fail(&x, 404, "not_found", "%s /v1%s is not an endpoint of the Knowledge API",
                r->method, r->path);
}
