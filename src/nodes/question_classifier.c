/*
 * question-classifier — Dify's Question Classifier: a model puts a text in
 * one of the node's classes, and the run goes on along that class's edge.
 *
 * Fields: model, query_variable_selector (the text), classes [{id, name}]
 * (names may hold {{#node.var#}}), instruction (text with references),
 * memory, vision.
 *
 * - The model sees the classes as [{category_id, category_name}], the text
 *   and the instruction, after two worked examples (chat models) or in one
 *   prompt (completion models); it answers with a JSON object naming
 *   category_id and category_name.
 * - The answer is read as Dify reads it (<think> blocks dropped, the JSON
 *   in or around a ``` fence, a list of one object taken as that object).
 *   As in Dify, an answer without JSON fails the node (ValueError), and so
 *   does JSON that does not parse (OutputParserError); one that lacks
 *   either key, or names an id that is no class, picks the first class.
 * - The chosen class id is the source handle: only the edges of that class
 *   are taken, nodes behind the other classes are skipped.
 * - memory's histories are the run's earlier turns (sl_model_history_text);
 *   vision adds the image files to the text's message.
 * Outputs: class_name, class_id, usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/graph.h"
#include "engine/limits.h"
#include "nodes/model.h"
#include "engine/node.h"

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *d = n->data, *cls = json_object_get(d, "classes");
    int bad = sl_model_check(c, n) < 0;
    bad |= sl_check_selector(c, n, d, "query_variable_selector", "query_variable_selector",
                             false) < 0;
    bad |= sl_check_text_refs(c, n, d, "instruction", "instruction") < 0;
    const sl_value *vis = json_object_get(d, "vision");
    if (json_is_true(json_object_get(vis, "enabled")))
        bad |= sl_check_selector(c, n, json_object_get(vis, "configs"), "variable_selector",
                                 "vision.configs.variable_selector", false) < 0;
    if (!json_array_size(cls)) {
        sl_check_error(c, n, d, "classes", "classes", "missing or empty: the classifier needs a "
                       "list of classes {id, name}, one per outgoing branch");
        return -1;
    }
    char f[64];
    for (size_t i = 0; i < json_array_size(cls); i++) {
        const sl_value *k = json_array_get(cls, i);
        const char *id = json_string_value(json_object_get(k, "id"));
        snprintf(f, sizeof f, "classes[%zu]", i);
        if (!id || !*id || !json_is_string(json_object_get(k, "name"))) {
            sl_check_error(c, n, k, NULL, f, "each class needs an id (text: quote numeric ids), "
                           "which is the handle of its outgoing edge, and a name");
            bad = 1;
            continue;
        }
        bad |= sl_check_text_refs(c, n, k, "name", f) < 0;
        for (size_t j = 0; j < i; j++) {
            const char *other = json_string_value(json_object_get(json_array_get(cls, j), "id"));
            if (other && !strcmp(id, other))
                sl_check_warn(c, n, k, "id", f, "class id '%s' is also classes[%zu]'s; the "
                              "model cannot tell them apart: give each class its own id", id, j);
        }
    }
    /* edges whose handle no class can choose would never be taken */
    const sl_graph *g = sl_check_graph(c);
    for (int e = 0; e < n->nout; e++) {
        const sl_gedge *ed = &g->edges[n->out[e]];
        bool ok = !strcmp(ed->handle, "fail-branch");
        for (size_t i = 0; !ok && i < json_array_size(cls); i++) {
            const char *id = json_string_value(json_object_get(json_array_get(cls, i), "id"));
            ok = id && !strcmp(id, ed->handle);
        }
        if (!ok)
            sl_check_warn(c, n, NULL, NULL, NULL, "the edge to '%s' leaves through handle '%s', "
                          "which is no class id, so it is never taken: set its sourceHandle to "
                          "a class id", g->nodes[ed->dst].id, ed->handle);
    }
    return bad ? -1 : 0;
}

/* ---- the request ---- */

#define HISTORY                                                                            \
    "### Memory\nThe conversation so far between the human and the assistant, inside "     \
    "<histories></histories> tags:\n<histories>\n%s\n</histories>\n"
static const char JOB[] =
    "### Job\nYou are a text classifier: you read a text and assign it to exactly one of the "
    "given categories.\n### Task\nPick one category only, and list the words of the text that "
    "decided it.\n### Format\nThe text is in input_text. The categories are a list of objects "
    "with category_id and category_name. classification_instructions, when given, refine how "
    "to classify.\n### Constraint\nReply with the JSON object only, nothing else.\n";
static const char *const EXAMPLES[4] = {
    "{\"input_text\": [\"The parcel came a day early and the courier was very polite.\"], "
    "\"categories\": [{\"category_id\": \"c1\", \"category_name\": \"Delivery\"}, "
    "{\"category_id\": \"c2\", \"category_name\": \"Billing\"}, {\"category_id\": \"c3\", "
    "\"category_name\": \"Product quality\"}], \"classification_instructions\": [\"classify by "
    "what the customer's feedback is about\"]}",
    "```json\n{\"keywords\": [\"parcel\", \"a day early\", \"courier\", \"polite\"], "
    "\"category_id\": \"c1\", \"category_name\": \"Delivery\"}\n```",
    "{\"input_text\": [\"I was charged twice for one order\"], \"categories\": "
    "[{\"category_id\": \"k1\", \"category_name\": \"Shipping\"}, {\"category_id\": \"k2\", "
    "\"category_name\": \"Payments\"}, {\"category_id\": \"k3\", \"category_name\": "
    "\"Returns\"}], \"classification_instructions\": []}",
    "```json\n{\"keywords\": [\"charged twice\", \"order\"], \"category_id\": \"k2\", "
    "\"category_name\": \"Payments\"}\n```"};

static sl_value *msg(const char *role, const char *text)
{
    return json_pack("{s:s, s:s}", "role", role, "content", text);
}


static sl_value *build_messages(bool completion, const char *hist, const char *query,
                                const sl_value *cats, const char *ins)
{
    sl_value *input = json_pack("{s:[s], s:O, s:[s]}", "input_text", query, "categories", cats,
                                "classification_instructions", ins);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_value_pyjson(input, &b, false);
    json_decref(input);
    sl_value *msgs = json_array();
    char *t;
    if (completion) {
        t = sl_xasprintf("%s### Examples\nTwo exchanges between a user and the assistant, inside "
                         "<example></example> tags:\n<example>\nUser: %s\nAssistant: %s\nUser: "
                         "%s\nAssistant: %s\n</example>\n" HISTORY "### User Input\n%s\n### "
                         "Assistant Output\n", JOB, EXAMPLES[0], EXAMPLES[1], EXAMPLES[2],
                         EXAMPLES[3], hist, b.data);
        json_array_append_new(msgs, msg("user", t));
    } else {
        t = sl_xasprintf("%s" HISTORY, JOB, hist);
        json_array_append_new(msgs, msg("system", t));
        for (int i = 0; i < 4; i++)
            json_array_append_new(msgs, msg(i % 2 ? "assistant" : "user", EXAMPLES[i]));
        json_array_append_new(msgs, msg("user", b.data));
    }
    free(t);
    sl_buf_release(&b);
    return msgs;
}

/* ---- the answer ---- */

/* Drops <think …>…</think> blocks (any case), as Dify does before parsing. */
static void strip_think(char *s)
{
    char *open;
    if (!strstr(s, "<think>"))
        return;
    while ((open = strcasestr(s, "<think"))) {
        char *gt = strchr(open, '>');
        char *close = gt ? strcasestr(gt, "</think>") : NULL;
        if (!close)
            return;
        memmove(open, close + 8, strlen(close + 8) + 1);
        s = open;
    }
}

/* The last occurrence of pat at or after `from`, or NULL. */
static const char *rfind(const char *from, const char *end, const char *pat)
{
    size_t n = strlen(pat);
    for (const char *p = end - n; p >= from; p--)
        if (!memcmp(p, pat, n))
            return p;
    return NULL;
}

/* The JSON of a model's answer the way Dify's parse_json_markdown finds it:
 * the first marker of ```json ``` `` ` { [ that occurs opens it, the last
 * of ``` `` ` } ] closes it.  NULL with err (its type Dify's error class)
 * when there is none or it does not parse. */
static sl_value *json_in_answer(const char *text, sl_err *err)
{
    static const char *const starts[] = {"```json", "```", "``", "`", "{", "["};
    static const char *const ends[] = {"```", "``", "`", "}", "]"};
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
        text++;
    const char *end = text + strlen(text), *a = NULL, *b = NULL;
    while (end > text && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    for (int i = 0; i < 6 && !a; i++)
        if ((a = memmem(text, (size_t)(end - text), starts[i], strlen(starts[i]))) && i < 4)
            a += strlen(starts[i]);
    for (int i = 0; a && i < 5 && !b; i++)
        if ((b = rfind(a, end, ends[i])) && i >= 3)
            b++;
    if (!a || !b || a >= b) {
        sl_err_typed(err, SL_EINVAL, "ValueError", "could not find json block in the output.");
        return NULL;
    }
    json_error_t je;
    sl_value *v = json_loadb(a, (size_t)(b - a), JSON_DECODE_ANY, &je);
    if (json_is_array(v) && json_array_size(v) == 1 && json_is_object(json_array_get(v, 0))) {
        sl_value *o = json_incref(json_array_get(v, 0));
        json_decref(v);
        v = o;
    }
    if (!v)
        sl_err_typed(err, SL_EINVAL, "OutputParserError", "got invalid json object. error: %s",
                     je.text);
    if (json_is_array(v)) {
        sl_err_typed(err, SL_EINVAL, "OutputParserError",
                     "got invalid return object: a list that is not one object");
        json_decref(v);
        v = NULL;
    }
    return v;
}

static bool cancelled(void *ud)
{
    return sl_exec_cancelled(ud);
}

static int run(sl_node_exec *x)
{
    const sl_value *d = sl_exec_data(x), *m = json_object_get(d, "model");
    const sl_value *cls = json_object_get(d, "classes");
    size_t cap = sl_exec_limits(x)->max_output_bytes;
    const sl_value *sel = json_object_get(d, "query_variable_selector");
    sl_value *qv = json_array_size(sel) ? sl_exec_get(x, sel) : NULL;
    sl_buf query, ins;
    sl_buf_init(&query, cap);
    sl_buf_init(&ins, cap);
    if (qv)
        sl_value_text(qv, &query);
    sl_exec_input(x, "query", qv ? qv : json_null());
    const char *instruction = json_string_value(json_object_get(d, "instruction"));
    int rc = sl_exec_render(x, instruction ? instruction : "", &ins);
    /* the classes with their names rendered, as the model sees them */
    sl_value *cats = json_array();
    for (size_t i = 0; !rc && i < json_array_size(cls); i++) {
        const sl_value *k = json_array_get(cls, i);
        sl_buf name;
        sl_buf_init(&name, cap);
        rc = sl_exec_render(x, json_string_value(json_object_get(k, "name")), &name);
        json_array_append_new(cats, json_pack("{s:O, s:s%}", "category_id",
                                              json_object_get(k, "id"), "category_name",
                                              name.data ? name.data : "", name.len));
        sl_buf_release(&name);
    }
    if (rc || query.toobig || ins.toobig) {
        sl_buf_release(&query);
        sl_buf_release(&ins);
        json_decref(cats);
        return sl_exec_fail(x, "QuestionClassifierNodeError", "the query, the instruction or a "
                            "class name is larger than max_output_bytes; shorten the variables "
                            "they show");
    }
    const char *mode = json_string_value(json_object_get(m, "mode"));
    bool completion = mode && !strcmp(mode, "completion");
    char *hist = sl_model_history_text(x);
    sl_value *msgs = build_messages(completion, hist, query.data ? query.data : "", cats,
                                    ins.data ? ins.data : "");
    free(hist);
    sl_buf_release(&query);
    sl_buf_release(&ins);
    if (sl_model_add_images(x, msgs, NULL) < 0) {
        json_decref(msgs);
        json_decref(cats);
        return -1;
    }
    sl_exec_process(x, "model_mode", json_string(completion ? "completion" : "chat"));
    sl_exec_process(x, "prompts", json_deep_copy(msgs));
    sl_exec_process(x, "model_provider", json_incref(json_object_get(m, "provider")));
    sl_exec_process(x, "model_name", json_incref(json_object_get(m, "name")));
    sl_value *req = json_pack("{s:o}", "messages", msgs), *resp = NULL;
    sl_llm_stream stream = {.cancelled = cancelled, .ud = x};
    rc = sl_model_call(x, req, &stream, &resp);
    json_decref(req);
    if (rc) {
        json_decref(cats);
        return rc;
    }
    const sl_value *usage = json_object_get(resp, "usage");
    sl_exec_process(x, "usage", json_incref((sl_value *)usage));
    sl_exec_process(x, "finish_reason", json_incref(json_object_get(resp, "finish_reason")));
    const char *answer = json_string_value(json_object_get(resp, "text"));
    char *text = sl_xstrdup(answer ? answer : "");
    strip_think(text);
    sl_err why = {0};
    sl_value *ans = json_in_answer(text, &why);
    free(text);
    if (!ans) {
        json_decref(cats);
        json_decref(resp);
        rc = sl_exec_fail(x, sl_err_type(&why, NULL), "%s (the model must answer with a JSON "
                          "object naming category_id and category_name: use a model that "
                          "follows instructions better, or ask for it in the instruction)",
                          why.msg);
        sl_err_clear(&why);
        return rc;
    }
    /* the first class unless the answer names another one by id */
    const sl_value *pick = NULL, *cid = json_object_get(ans, "category_id");
    for (size_t i = 0; json_object_get(ans, "category_name") && !pick && i < json_array_size(cats);
         i++)
        if (json_equal((sl_value *)cid, json_object_get(json_array_get(cats, i), "category_id")))
            pick = json_array_get(cats, i);
    if (!pick)
        pick = json_array_get(cats, 0);
    const char *id = json_string_value(json_object_get(pick, "category_id"));
    sl_exec_output(x, "class_name", json_incref(json_object_get(pick, "category_name")));
    sl_exec_output(x, "class_id", json_string(id));
    sl_exec_output(x, "usage", json_incref((sl_value *)usage));
    sl_exec_handle(x, id);
    json_decref(ans);
    json_decref(cats);
    json_decref(resp);
    return 0;
}

const sl_node_kind sl_kind_question_classifier = {
    .type = "question-classifier",
    .flags = SL_KIND_BRANCH,
    .check = check,
    .run = run,
};
