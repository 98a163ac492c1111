/*
 * llm — Dify's LLM node.
 *
 * Fields: model{provider, name, mode chat|completion, completion_params},
 * prompt_template (chat: a list of {role, text, edition_type}; completion:
 * {text}), context{enabled, variable_selector}, memory, vision{enabled,
 * configs{variable_selector, detail}}, structured_output_enabled +
 * structured_output{schema}, reasoning_format (tagged | separated).
 *
 * - Texts render their {{#node.var#}} references; {{#context#}} becomes
 *   the context: a text as it is, knowledge-retrieval results (objects with
 *   "content") joined by newlines, anything else as JSON.
 * - In chatflows with memory, the conversation's earlier turns (the run's
 *   history: `sluice run --history`, later the server's store), the last
 *   window.size of them, follow the template, and then the user's query
 *   (memory.query_prompt_template, default {{#sys.query#}}).
 * - Vision: image files of the selected variable (default sys.files) join
 *   the last user message, by URL or as data: URLs from their bytes.
 * - Structured output: the JSON schema goes to the model (response_format
 *   for OpenAI-style endpoints, and as an instruction either way); the
 *   answer's JSON is checked against the schema, with one repair round
 *   when it does not fit.
 * - reasoning_format separated moves <think>…</think> out of the text into
 *   reasoning_content; tagged keeps it in the text and puts a reasoning
 *   stream the provider sent separately (DeepSeek) back into <think> tags.
 * - The text streams, piece by piece, when an answer or end node shows it
 *   (the engine's response coordinator decides when the pieces go out).
 * - Prompts with edition_type jinja2 render their jinja2_text with the
 *   Jinja2 engine (tmpl/jinja.h), the context being the node's
 *   prompt_config.jinja2_variables [{variable, value_selector}].  They are
 *   compiled once, at load (prepare; syntax errors are load errors), and
 *   runs only render them.
 * Outputs: text, reasoning_content, usage, finish_reason, structured_output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/node.h"
#include "llm/schema.h"
#include "nodes/model.h"
#include "tmpl/jinja.h"

static int check_prompt(sl_check *c, const sl_gnode *n, const sl_value *p, const char *field)
{
    const char *ed = json_string_value(json_object_get(p, "edition_type"));
    if (ed && !strcmp(ed, "jinja2")) {
        const char *jt = json_string_value(json_object_get(p, "jinja2_text"));
        if (!jt) {
            sl_check_error(c, n, p, "jinja2_text", field,
                           "this prompt is a jinja2 template but has no jinja2_text");
            return -1;
        }
        return 0; /* prepare compiles it */
    }
    if (!json_is_string(json_object_get(p, "text"))) {
        sl_check_error(c, n, p, "text", field, "the prompt has no text");
        return -1;
    }
    return sl_check_text_refs(c, n, p, "text", field);
}

/* A chat message with a role sluice sends. */
static bool has_role(const sl_value *p)
{
    const char *role = json_string_value(json_object_get(p, "role"));
    return json_is_object(p) && role &&
           (!strcmp(role, "system") || !strcmp(role, "user") || !strcmp(role, "assistant"));
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data;
    int bad = sl_model_check(c, n) < 0;
    const sl_value *pt = json_object_get(d, "prompt_template");
    char f[64];
    if (json_is_array(pt)) {
        for (size_t i = 0; i < json_array_size(pt); i++) {
            const sl_value *p = json_array_get(pt, i);
            snprintf(f, sizeof f, "prompt_template[%zu]", i);
            if (!has_role(p)) {
                sl_check_error(c, n, p, NULL, f,
                               "each message needs a role (system, user or assistant) and a text");
                bad = 1;
                continue;
            }
            bad |= check_prompt(c, n, p, f) < 0;
        }
    } else if (json_is_object(pt)) {
        bad |= check_prompt(c, n, pt, "prompt_template") < 0;
    } else {
        sl_check_error(c, n, d, "prompt_template", "prompt_template",
                       "missing: a list of messages (chat models) or {text} (completion models)");
        bad = 1;
    }
    const sl_value *ctx = json_object_get(d, "context");
    const sl_value *csel = json_object_get(ctx, "variable_selector");
    if (json_is_true(json_object_get(ctx, "enabled")) && json_array_size(csel) == 0 &&
        (!csel || json_is_null(csel) || json_is_array(csel)))
        sl_check_warn(c, n, ctx, "variable_selector", "context.variable_selector",
                      "context is enabled but picks no variable; {{#context#}} is left empty, "
                      "as in Dify");
    else if (json_is_true(json_object_get(ctx, "enabled")))
        bad |= sl_check_selector(c, n, ctx, "variable_selector", "context.variable_selector",
                                 true) < 0;
    const sl_value *jvars = json_object_get(json_object_get(d, "prompt_config"), "jinja2_variables");
    for (size_t i = 0; i < json_array_size(jvars); i++) {
        char jf[96];
        snprintf(jf, sizeof jf, "prompt_config.jinja2_variables[%zu].value_selector", i);
        bad |= sl_check_selector(c, n, json_array_get(jvars, i), "value_selector", jf, false) < 0;
    }
    const sl_value *vis = json_object_get(d, "vision");
    if (json_is_true(json_object_get(vis, "enabled")))
        bad |= sl_check_selector(c, n, json_object_get(vis, "configs"), "variable_selector",
                                 "vision.configs.variable_selector", false) < 0;
    const char *rf = json_string_value(json_object_get(d, "reasoning_format"));
    if (rf && strcmp(rf, "tagged") && strcmp(rf, "separated")) {
        sl_check_error(c, n, d, "reasoning_format", "reasoning_format",
                       "'%s' is not a reasoning format; use tagged or separated", rf);
        bad = 1;
    }
    if (json_is_true(json_object_get(d, "structured_output_enabled"))) {
        const sl_value *so = json_object_get(json_object_get(d, "structured_output"), "schema");
        if (!json_is_object(so)) {
            sl_check_error(c, n, d, "structured_output", "structured_output.schema",
                           "structured output is enabled but there is no JSON schema");
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* ---- compiling jinja2 prompts ---- */

static bool is_jinja(const sl_value *p)
{
    const char *ed = json_string_value(json_object_get(p, "edition_type"));
    return ed && !strcmp(ed, "jinja2");
}

/* The compiled jinja2 prompts of a node: t[i] for prompt_template[i] (a
 * completion model's single {text}: t[0]), NULL for plain texts. */
typedef struct {
    size_t n;
    sl_jinja *t[];
} prompts;

static void release(void *state)
{
    prompts *ps = state;
    for (size_t i = 0; i < ps->n; i++)
        sl_jinja_free(ps->t[i]);
    free(ps);
}

/* Compiles the jinja2 prompts; check has said what is wrong with the rest.
 * A node without jinja2 prompts gets no state. */
static int prepare(sl_check *c, const sl_gnode *n, void **state)
{
    const sl_value *pt = json_object_get(n->data, "prompt_template");
    size_t np = json_is_array(pt) ? json_array_size(pt) : json_is_object(pt) ? 1 : 0;
    prompts *ps = NULL;
    int bad = 0;
    for (size_t i = 0; i < np; i++) {
        const sl_value *p = json_is_array(pt) ? json_array_get(pt, i) : pt;
        const char *jt = json_string_value(json_object_get(p, "jinja2_text"));
        if (!is_jinja(p) || !jt || (json_is_array(pt) && !has_role(p)))
            continue; /* check has reported it */
        char field[64];
        if (json_is_array(pt))
            snprintf(field, sizeof field, "prompt_template[%zu]", i);
        else
            snprintf(field, sizeof field, "prompt_template");
        sl_err err = {0};
        sl_jinja *t;
        if (sl_jinja_compile(jt, strlen(jt), "jinja2_text", &t, &err) < 0) {
            sl_check_error(c, n, p, "jinja2_text", field, "%s; fix the template's syntax", err.msg);
            sl_err_clear(&err);
            bad = 1;
            continue;
        }
        if (!ps) {
            ps = sl_xcalloc(1, sizeof *ps + np * sizeof ps->t[0]);
            ps->n = np;
        }
        ps->t[i] = t;
    }
    *state = ps;
    return bad ? -1 : 0;
}

/* ---- building the request ---- */

/* Dify's retriever resource for a knowledge-retrieval result item (its
 * metadata._source is "knowledge"), or NULL for anything else. */
static sl_value *retriever_resource(const sl_value *e)
{
    const sl_value *m = json_object_get(e, "metadata");
    if (!json_is_object(m) || !json_is_string(json_object_get(m, "_source")) ||
        strcmp(json_string_value(json_object_get(m, "_source")), "knowledge"))
        return NULL;
    static const char *const same[] = {"position", "dataset_id", "dataset_name",
                                       "document_id", "document_name", "data_source_type",
                                       "segment_id", "retriever_from", "score",
                                       "segment_position", "doc_metadata", "page"};
    static const char *const renamed[][2] = {{"hit_count", "segment_hit_count"},
                                             {"word_count", "segment_word_count"},
                                             {"index_node_hash", "segment_index_node_hash"}};
    sl_value *r = json_object();
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        const sl_value *v = json_object_get(m, same[i]);
        json_object_set(r, same[i], v ? (sl_value *)v : json_null());
    }
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++) {
        const sl_value *v = json_object_get(m, renamed[i][1]);
        json_object_set(r, renamed[i][0], v ? (sl_value *)v : json_null());
    }
    const sl_value *c = json_object_get(e, "content");
    json_object_set(r, "content", c ? (sl_value *)c : json_null());
    return r;
}

static void context_text(sl_node_exec *x, sl_buf *out)
{
    const sl_value *ctx = json_object_get(sl_exec_data(x), "context");
    if (!json_is_true(json_object_get(ctx, "enabled")))
        return;
    sl_value *v = sl_exec_get(x, json_object_get(ctx, "variable_selector"));
    if (json_is_array(v)) {
        sl_value *res = json_array();
        for (size_t i = 0; i < json_array_size(v); i++) {
            const sl_value *e = json_array_get(v, i);
            const sl_value *content = json_object_get(e, "content");
            if (out->len)
                sl_buf_addc(out, '\n');
            sl_model_text(content ? content : e, out);
            sl_value *r = retriever_resource(e);
            if (r)
                json_array_append_new(res, r);
        }
        /* knowledge chunks become the answer's citations, as in Dify */
        if (json_array_size(res))
            sl_exec_retriever_resources(x, res);
        else
            json_decref(res);
    } else {
        sl_model_text(json_object_get(v, "content") ? json_object_get(v, "content") : v, out);
    }
    json_decref(v);
}

/* Jinja2 prompt `at` (compiled by prepare) with prompt_config.jinja2_variables;
 * the render obeys the run's deadline and stop, and template_max_bytes.
 * -1 with err (its type the node's error_type) when it fails. */
static int render_jinja(sl_node_exec *x, size_t at, sl_buf *out, sl_err *err)
{
    const prompts *ps = sl_exec_state(x);
    const sl_jinja *t = ps && at < ps->n ? ps->t[at] : NULL;
    if (!t) /* a graph that loaded has every jinja2 prompt compiled */
        return sl_err_typed(err, SL_ENODE, "LLMNodeError",
                            "jinja2 prompt %zu was not compiled at load", at);
    sl_value *ctx = json_object();
    const sl_value *vars =
        json_object_get(json_object_get(sl_exec_data(x), "prompt_config"), "jinja2_variables");
    for (size_t i = 0; i < json_array_size(vars); i++) {
        const sl_value *v = json_array_get(vars, i);
        const char *name = json_string_value(json_object_get(v, "variable"));
        const sl_value *sel = json_object_get(v, "value_selector");
        if (!name)
            continue;
        sl_value *val = json_array_size(sel) ? sl_exec_get(x, sel) : NULL;
        json_object_set_new(ctx, name, val ? val : json_null());
    }
    sl_jinja_limits lim;
    sl_exec_jinja_limits(x, &lim);
    int rc = sl_jinja_render(t, ctx, &lim, out, err);
    if (rc < 0)  /* the template's own message */
        sl_err_set_type(err, err->code == SL_ETIMEOUT    ? "WorkflowTimeout"
                             : err->code == SL_ECANCELED ? "Stopped"
                                                         : "LLMNodeError");
    json_decref(ctx);
    return rc;
}

static int prompt_too_big(sl_err *err)
{
    sl_err_limit(err, SL_ELIMIT, "max_output_bytes",
                 "the prompt is larger than max_output_bytes; shorten the variables it shows");
    sl_err_set_type(err, "LLMNodeError");
    return -1;
}

/* Renders a prompt text, then puts the context where {{#context#}} stands;
 * -1 with err when it grows past its cap. */
static int render(sl_node_exec *x, const char *text, const sl_buf *context, sl_buf *out,
                  sl_err *err)
{
    sl_buf r;
    sl_buf_init(&r, out->cap);
    if (sl_exec_render(x, text ? text : "", &r) < 0) {
        sl_buf_release(&r);
        return prompt_too_big(err);
    }
    const char *p = r.data ? r.data : "";
    const char *hit;
    while ((hit = strstr(p, "{{#context#}}"))) {
        sl_buf_add(out, p, (size_t)(hit - p));
        sl_buf_add(out, context->data ? context->data : "", context->len);
        p = hit + 13;
    }
    sl_buf_adds(out, p);
    sl_buf_release(&r);
    return out->toobig ? prompt_too_big(err) : 0;
}

static int build_messages(sl_node_exec *x, sl_value **out)
{
    const sl_value *d = sl_exec_data(x);
    size_t cap = sl_exec_limits(x)->max_output_bytes;
    sl_buf context;
    sl_buf_init(&context, cap);
    context_text(x, &context);
    sl_value *msgs = json_array();
    const sl_value *pt = json_object_get(d, "prompt_template");
    sl_err err = {0};
    int rc = 0;
    if (json_is_array(pt)) {
        for (size_t i = 0; i < json_array_size(pt) && !rc; i++) {
            const sl_value *p = json_array_get(pt, i);
            sl_buf t;
            sl_buf_init(&t, cap);
            rc = is_jinja(p) ? render_jinja(x, i, &t, &err)
                             : render(x, json_string_value(json_object_get(p, "text")), &context, &t,
                                      &err);
            /* Dify drops messages that render empty */
            if (!rc && t.len)
                json_array_append_new(msgs, json_pack("{s:O, s:s%}", "role",
                                                      json_object_get(p, "role"), "content",
                                                      t.data, t.len));
            sl_buf_release(&t);
        }
    } else {
        sl_buf t;
        sl_buf_init(&t, cap);
        rc = is_jinja(pt) ? render_jinja(x, 0, &t, &err)
                          : render(x, json_string_value(json_object_get(pt, "text")), &context, &t,
                                   &err);
        if (!rc)
            json_array_append_new(msgs, json_pack("{s:s, s:s%}", "role", "user", "content",
                                                  t.data ? t.data : "", t.len));
        sl_buf_release(&t);
    }
    const sl_value *mem = json_object_get(d, "memory");
    if (!rc && json_is_object(mem) && !strcmp(sl_exec_mode(x), "advanced-chat")) {
        /* earlier turns of the conversation, the window's last `size`
         * (all when the window is off), after the template as in Dify */
        const sl_value *hist = sl_exec_history(x);
        size_t n = json_array_size(hist), from = sl_model_history_from(mem, n);
        for (size_t i = from; i < n; i++) {
            const sl_value *turn = json_array_get(hist, i);
            const sl_value *q = json_object_get(turn, "query"), *a = json_object_get(turn, "answer");
            if (json_is_string(q))
                json_array_append_new(msgs, json_pack("{s:s, s:O}", "role", "user", "content", q));
            if (json_is_string(a))
                json_array_append_new(msgs,
                                      json_pack("{s:s, s:O}", "role", "assistant", "content", a));
        }
        const char *qt = json_string_value(json_object_get(mem, "query_prompt_template"));
        sl_buf t;
        sl_buf_init(&t, cap);
        rc = render(x, qt && *qt ? qt : "{{#sys.query#}}", &context, &t, &err);
        if (!rc && t.len)
            json_array_append_new(msgs, json_pack("{s:s, s:s%}", "role", "user", "content",
                                                  t.data, t.len));
        sl_buf_release(&t);
    }
    sl_buf_release(&context);
    if (rc) {
        json_decref(msgs);
        rc = sl_exec_fail(x, sl_err_type(&err, "LLMNodeError"), "%s", err.msg);
        sl_err_clear(&err);
        return rc;
    }
    if (sl_model_add_images(x, msgs, NULL) < 0) {
        json_decref(msgs);
        return -1;
    }
    *out = msgs;
    return 0;
}

/* ---- streaming to an answer node ---- */

typedef struct {
    sl_node_exec *x;
    bool relay;
    bool separated;
    int think;      /* separated: 0 before/outside <think>, 1 inside */
    sl_buf pending; /* a possible partial tag held back */
    bool in_reasoning; /* tagged: a <think> block is open on the stream */
    bool started;   /* separated: text other than whitespace went out */
    sl_buf ws;      /* separated: whitespace held back (the text is trimmed) */
} relay_state;

static void relay_out(relay_state *r, const char *s, size_t n)
{
    if (n)
        sl_exec_stream_chunk(r->x, "text", s, n);
}

/* tagged: a reasoning stream the provider sends apart shows as <think>…</think> */
static void relay_reasoning(const char *s, size_t n, void *ud)
{
    relay_state *r = ud;
    if (!r->relay || r->separated || !n)
        return;
    if (!r->in_reasoning) {
        relay_out(r, "<think>\n", 8);
        r->in_reasoning = true;
    }
    relay_out(r, s, n);
}

static void relay_text(const char *s, size_t n, void *ud)
{
    relay_state *r = ud;
    if (!r->relay)
        return;
    if (!r->separated) {
        if (r->in_reasoning) {
            relay_out(r, "\n</think>", 9);
            r->in_reasoning = false;
        }
        relay_out(r, s, n);
        return;
    }
    /* separated: keep <think>…</think> out of what the user sees */
    sl_buf_add(&r->pending, s, n);
    sl_buf out;
    sl_buf_init(&out, 0);
    const char *p = r->pending.data;
    size_t len = r->pending.len, i = 0;
    while (i < len) {
        const char *tag = r->think ? "</think>" : "<think>";
        size_t tl = strlen(tag);
        const char *hit = memmem(p + i, len - i, tag, tl);
        if (hit) {
            if (!r->think)
                sl_buf_add(&out, p + i, (size_t)(hit - p - i));
            i = (size_t)(hit - p) + tl;
            r->think = !r->think;
            continue;
        }
        /* hold back a tail that may be the start of a tag */
        size_t keep = 0;
        for (size_t k = tl - 1; k > 0; k--)
            if (len - i >= k && !memcmp(p + len - k, tag, k)) {
                keep = k;
                break;
            }
        if (!r->think)
            sl_buf_add(&out, p + i, len - i - keep);
        memmove(r->pending.data, p + len - keep, keep);
        r->pending.len = keep;
        i = len;
        len = 0;
    }
    if (len)
        r->pending.len = 0;
    /* the text is trimmed, as the final output is: no leading whitespace,
     * and whitespace is held back until text follows it */
    size_t a = 0, e = out.len;
    while (!r->started && a < e && strchr(" \n\t\r", out.data[a]))
        a++;
    size_t k = e;
    while (k > a && strchr(" \n\t\r", out.data[k - 1]))
        k--;
    if (k > a) {
        if (r->ws.len)
            relay_out(r, r->ws.data, r->ws.len);
        sl_buf_reset(&r->ws);
        relay_out(r, out.data + a, k - a);
        r->started = true;
    }
    if (r->started)
        sl_buf_add(&r->ws, out.data + k, e - k);
    sl_buf_release(&out);
}

static bool relay_cancelled(void *ud)
{
    return sl_exec_cancelled(((relay_state *)ud)->x);
}

/* ---- the answer ---- */

static void trim(sl_buf *b)
{
    size_t s = 0, e = b->len;
    while (s < e && (b->data[s] == ' ' || b->data[s] == '\n' || b->data[s] == '\t' ||
                     b->data[s] == '\r'))
        s++;
    while (e > s && (b->data[e - 1] == ' ' || b->data[e - 1] == '\n' || b->data[e - 1] == '\t' ||
                     b->data[e - 1] == '\r'))
        e--;
    if (s)
        memmove(b->data, b->data + s, e - s);
    b->len = e - s;
    if (b->data)
        b->data[b->len] = 0;
}

/* Splits <think>…</think> out of text (separated, both trimmed as Dify
 * does) or wraps a separate
 * reasoning stream into it (tagged). */
static void shape_reasoning(bool separated, const char *text, const char *reasoning,
                            sl_value **out_text, sl_value **out_reasoning)
{
    sl_buf t, r;
    sl_buf_init(&t, 0);
    sl_buf_init(&r, 0);
    if (separated) {
        sl_buf_adds(&r, reasoning);
        const char *p = text;
        const char *open;
        while ((open = strstr(p, "<think>"))) {
            sl_buf_add(&t, p, (size_t)(open - p));
            const char *close = strstr(open + 7, "</think>");
            const char *end = close ? close : open + strlen(open);
            if (r.len)
                sl_buf_addc(&r, '\n');
            const char *body = open + 7;
            while (*body == '\n')
                body++;
            size_t bl = end > body ? (size_t)(end - body) : 0;
            while (bl && body[bl - 1] == '\n')
                bl--;
            sl_buf_add(&r, body, bl);
            p = close ? close + 8 : end;
            while (close && *p == '\n')
                p++;
        }
        sl_buf_adds(&t, p);
        trim(&t);
        trim(&r);
    } else {
        if (*reasoning)
            sl_buf_addf(&t, "<think>\n%s\n</think>", reasoning);
        sl_buf_adds(&t, text);
    }
    *out_text = json_stringn(t.data ? t.data : "", t.len);
    *out_reasoning = json_stringn(r.data ? r.data : "", r.len);
    sl_buf_release(&t);
    sl_buf_release(&r);
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x);
    sl_value *msgs = NULL;
    if (build_messages(x, &msgs))
        return -1;
    bool so = json_is_true(json_object_get(d, "structured_output_enabled"));
    const sl_value *schema = json_object_get(json_object_get(d, "structured_output"), "schema");
    sl_value *req = json_pack("{s:o}", "messages", msgs);
    if (so) {
        /* the schema as response_format too (endpoints that do not know it
         * ignore it; the Anthropic style leaves it out) */
        sl_value *params = sl_model_params(json_object_get(d, "model"));
        if (!json_object_get(params, "response_format"))
            json_object_set_new(params, "response_format",
                                json_pack("{s:s, s:{s:s, s:O}}", "type", "json_schema",
                                          "json_schema", "name", "structured_output", "schema",
                                          schema));
        json_object_set_new(req, "params", params);
        char *s = json_dumps(schema, JSON_COMPACT | JSON_SORT_KEYS);
        char *ins = sl_xasprintf("Reply with one JSON object that follows this JSON Schema, and "
                                 "nothing else:\n%s",
                                 s);
        json_object_set_new(req, "system", json_string(ins));
        free(ins);
        free(s);
    }
    sl_exec_input(x, "prompts", json_deep_copy(json_object_get(req, "messages")));
    const char *rf = json_string_value(json_object_get(d, "reasoning_format"));
    relay_state rs = {.x = x, .separated = rf && !strcmp(rf, "separated")};
    sl_buf_init(&rs.pending, 0);
    sl_buf_init(&rs.ws, 0);
    rs.relay = sl_exec_streams(x, "text");
    sl_llm_stream st = {.on_text = relay_text, .on_reasoning = relay_reasoning,
                        .cancelled = relay_cancelled, .ud = &rs};
    sl_value *resp = NULL;
    int rc = sl_model_call(x, req, &st, &resp);
    sl_value *structured = NULL;
    if (!rc && so) {
        /* the answer's JSON against the schema, with one repair round */
        for (int round = 0; round < 2 && !rc; round++) {
            const char *text = json_string_value(json_object_get(resp, "text"));
            sl_err bad = {0};
            structured = sl_json_in_text(text, strlen(text));
            if (json_is_object(structured) && !sl_schema_check(schema, structured, &bad))
                break;
            const char *why = bad.msg ? bad.msg : "the answer holds no JSON object";
            json_decref(structured);
            structured = NULL;
            if (round == 1) {
                rc = sl_exec_fail(x, "StructuredOutputError",
                                  "the model's answer does not follow the output schema, also "
                                  "after one repair: %s",
                                  why);
                sl_err_clear(&bad);
                break;
            }
            sl_value *m2 = json_object_get(req, "messages");
            json_array_append_new(m2, json_pack("{s:s, s:s}", "role", "assistant", "content", text));
            char *fix = sl_xasprintf("That reply does not follow the schema: %s. Reply with the "
                                     "corrected JSON object only.",
                                     why);
            json_array_append_new(m2, json_pack("{s:s, s:s}", "role", "user", "content", fix));
            free(fix);
            sl_err_clear(&bad);
            json_decref(resp);
            resp = NULL;
            rs.relay = false;
            rc = sl_model_call(x, req, &st, &resp);
        }
    }
    if (!rc) {
        sl_value *text, *reasoning;
        shape_reasoning(rs.separated, json_string_value(json_object_get(resp, "text")),
                        json_string_value(json_object_get(resp, "reasoning_content")), &text,
                        &reasoning);
        sl_exec_output(x, "text", text);
        sl_exec_output(x, "reasoning_content", reasoning);
        sl_exec_output(x, "usage", json_incref(json_object_get(resp, "usage")));
        sl_exec_output(x, "finish_reason", json_incref(json_object_get(resp, "finish_reason")));
        if (so)
            sl_exec_output(x, "structured_output", structured ? structured : json_object());
        if (json_array_size(json_object_get(resp, "tool_calls")))
            sl_exec_process(x, "tool_calls", json_incref(json_object_get(resp, "tool_calls")));
    }
    if (!rc && rs.relay && rs.in_reasoning) /* reasoning with no text after it */
        relay_out(&rs, "\n</think>", 9);
    json_decref(resp);
    json_decref(req);
    sl_buf_release(&rs.pending);
    sl_buf_release(&rs.ws);
    return rc;
}

const sl_node_kind sl_kind_llm = {
    .type = "llm",
    .check = check,
    .run = run,
    .prepare = prepare,
    .release = release,
};
