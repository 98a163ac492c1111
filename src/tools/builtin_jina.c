/*
 * builtin_jina — Dify's `jina` provider (langgenius/jina/jina):
 * jina_reader, jina_search and jina_tokenizer, against Jina's APIs:
 *
 *   reader     GET {base_url}/{url}            base_url https://r.jina.ai
 *   search     GET {search_url}/{query}        https://s.jina.ai
 *   tokenizer  POST {tokenize_url}/ (JSON)     https://tokenize.jina.ai
 *
 * with Accept: application/json and, when there is a key (it is optional,
 * as in the plugin: Jina serves fewer requests without one),
 * Authorization: Bearer KEY.  The reader's and search's options go as the
 * plugin sends them, as headers (X-Target-Selector, X-Wait-For-Selector,
 * X-Retain-Images: none, X-With-Generated-Alt, X-With-Links-Summary,
 * X-With-Images-Summary, X-Proxy-Url, X-No-Cache, DNT, X-Return-Format),
 * the reader's request_params (a JSON object) as the query string.  The
 * answer is the plugin's: the API's body as text (reader, search), its
 * JSON as a json message (tokenizer).  Where the plugin passes a vendor's
 * error body on as the answer, the call fails with the status; summary
 * (it needs the workspace's model) is refused, max_retries (the plugin
 * ignores it) is read and ignored.
 */
#include "tools/builtin.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

#define VENDOR "Jina"
#define MAX_HEADERS 16

typedef struct {
    char *v[MAX_HEADERS + 1];
    size_t n;
} headers;

__attribute__((format(printf, 2, 3))) static void hdr(headers *h, const char *fmt, ...)
{
    if (h->n >= MAX_HEADERS)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s)
        h->v[h->n++] = s;
}

static void hdr_free(headers *h)
{
    for (size_t i = 0; i < h->n; i++) {
        explicit_bzero(h->v[i], strlen(h->v[i]));  /* one is the key */
        free(h->v[i]);
    }
    h->n = 0;
}

/* The headers every Jina call sends. */
static void common(headers *h, const sl_builtin_cfg *cfg, const char *accept)
{
    if (accept)
        hdr(h, "Accept: %s", accept);
    if (cfg->api_key && *cfg->api_key)
        hdr(h, "Authorization: Bearer %s", cfg->api_key);
}

/* A text option as a header; -1 with err when it holds a line break. */
static int opt_header(headers *h, const sl_value *args, const char *name, const char *header,
                      sl_err *err)
{
    char *tmp;
    const char *v = sl_builtin_arg_str(args, name, NULL, &tmp);
    int rc = 0;
    if (v && *v) {
        if (strpbrk(v, "\r\n"))
            rc = sl_err_set(err, SL_EINVAL, "jina: %s may not hold a line break", name);
        else
            hdr(h, "%s: %s", header, v);
    }
    free(tmp);
    return rc;
}

/* The flags both the reader and search send. */
static int flags(headers *h, const sl_value *args, sl_err *err)
{
    if (sl_builtin_arg_bool(args, "image_caption", false))
        hdr(h, "X-With-Generated-Alt: true");
    if (sl_builtin_arg_bool(args, "gather_all_links_at_the_end", false))
        hdr(h, "X-With-Links-Summary: true");
    if (sl_builtin_arg_bool(args, "gather_all_images_at_the_end", false))
        hdr(h, "X-With-Images-Summary: true");
    if (opt_header(h, args, "proxy_server", "X-Proxy-Url", err))
        return -1;
    if (sl_builtin_arg_bool(args, "no_cache", false))
        hdr(h, "X-No-Cache: true");
    return 0;
}

/* A URL given by a user, as a URL: bytes a URL may not hold (spaces,
 * controls, quotes, <>, non-ASCII) percent-encoded, the rest as it is. */
static void loose_encode(const char *s, sl_buf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7F || strchr("\"<>\\^`{|}", *p)) {
            sl_buf_addc(out, '%');
            sl_buf_addc(out, hex[*p >> 4]);
            sl_buf_addc(out, hex[*p & 15]);
        } else {
            sl_buf_addc(out, (char)*p);
        }
    }
}

/* A request_params value as a query parameter's text, or -1. */
static int param_text(const sl_value *v, sl_buf *out)
{
    if (json_is_string(v))
        sl_buf_add(out, json_string_value(v), json_string_length(v));
    else if (json_is_number(v) || json_is_boolean(v))
        sl_builtin_pystr(v, out);
    else
        return -1;
    return 0;
}

/* A list repeats its key, None is left out. */
int sl_builtin_jina_query(const char *text, sl_buf *q, sl_err *err)
{
    json_error_t je;
    sl_value *p = json_loads(text, JSON_DECODE_ANY, &je);
    if (!p)
        return sl_err_set(err, SL_EINVAL, "jina: Invalid request_params: %s (line %d column %d)",
                          je.text, je.line, je.column);
    int rc = 0;
    if (!json_is_object(p)) {
        rc = sl_err_set(err, SL_EINVAL, "jina: Invalid request_params: request_params must be "
                        "a JSON object");
        goto done;
    }
    const char *k;
    const sl_value *v;
    json_object_foreach(p, k, v) {
        size_t n = json_is_array(v) ? json_array_size(v) : 1;
        for (size_t i = 0; i < n; i++) {
            const sl_value *x = json_is_array(v) ? json_array_get(v, i) : v;
            if (json_is_null(x))
                continue;
            sl_buf t;
            sl_buf_init(&t, 0);
            if (param_text(x, &t)) {
                sl_buf_release(&t);
                rc = sl_err_set(err, SL_EINVAL, "jina: Invalid request_params: the value of "
                                "'%s' is not text, a number or a list of them", k);
                goto done;
            }
            char *ek = sl_http_escape(k), *ev = sl_http_escape(t.data ? t.data : "");
            sl_buf_addf(q, "%c%s=%s", q->len ? '&' : '?', ek, ev);
            free(ek);
            free(ev);
            sl_buf_release(&t);
        }
    }
done:
    json_decref(p);
    return rc;
}

/* GETs url; its body as the answer's text. */
static int get_text(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const char *url,
                    headers *h, sl_tool_result *res, sl_err *err)
{
    sl_builtin_req rq = {VENDOR, "GET", url, (const char *const *)h->v, NULL, 0, 0};
    long status = 0;
    sl_buf body;
    sl_buf_init(&body, 0);
    int rc = sl_builtin_fetch(ctx, &rq, &status, &body, NULL, err);
    if (!rc && (status < 200 || status > 299))
        rc = sl_builtin_status_error(cfg, VENDOR, status, body.data, body.len, err);
    if (!rc) {
        sl_buf clean;
        sl_buf_init(&clean, 0);
        sl_utf8_clean(body.data ? body.data : "", body.len, &clean);
        rc = sl_builtin_text(res, ctx, clean.data ? clean.data : "", clean.len, err);
        sl_buf_release(&clean);
    }
    sl_buf_release(&body);
    return rc;
}

static int reader(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                  sl_tool_result *res, sl_err *err)
{
    char *t[2] = {0};
    headers h = {0};
    sl_buf url, q;
    sl_buf_init(&url, 0);
    sl_buf_init(&q, 0);
    int rc = 0;
    const char *target = sl_builtin_arg_str(args, "url", NULL, &t[0]);
    if (!target || !*target) {
        rc = sl_err_set(err, SL_EINVAL, "jina: jina_reader needs a url");
        goto done;
    }
    if (sl_builtin_arg_bool(args, "summary", false)) {
        rc = sl_err_set(err, SL_EUNSUPPORTED,
                        "jina: summary needs a model (Dify summarises the page with the "
                        "workspace's default model), which a built-in tool does not have; set "
                        "it to false and summarise the text with an LLM node");
        goto done;
    }
    const char *params = sl_builtin_arg_str(args, "request_params", NULL, &t[1]);
    if (params && *params && sl_builtin_jina_query(params, &q, err)) {
        rc = -1;
        goto done;
    }
    common(&h, cfg, "application/json");
    if (opt_header(&h, args, "target_selector", "X-Target-Selector", err) ||
        opt_header(&h, args, "wait_for_selector", "X-Wait-For-Selector", err)) {
        rc = -1;
        goto done;
    }
    if (sl_builtin_arg_bool(args, "remove_images", false))
        hdr(&h, "X-Retain-Images: none");
    if (flags(&h, args, err)) {
        rc = -1;
        goto done;
    }
    if (sl_builtin_arg_bool(args, "no_cache_track", false))
        hdr(&h, "DNT: 1");
    char *fmt_tmp;
    const char *fmt = sl_builtin_arg_str(args, "content_format", NULL, &fmt_tmp);
    if (fmt && *fmt && strcmp(fmt, "default")) {
        if (strpbrk(fmt, "\r\n"))
            rc = sl_err_set(err, SL_EINVAL, "jina: content_format may not hold a line break");
        else
            hdr(&h, "X-Return-Format: %s", fmt);
    }
    free(fmt_tmp);
    if (rc)
        goto done;
    char *base = sl_builtin_url(cfg->base_url, "/");
    sl_buf_adds(&url, base);
    free(base);
    loose_encode(target, &url);
    if (q.len) {  /* as requests adds params to a URL that has a query */
        if (strchr(target, '?'))
            q.data[0] = '&';
        sl_buf_adds(&url, q.data);
    }
    rc = get_text(ctx, cfg, url.data, &h, res, err);
done:
    hdr_free(&h);
    sl_buf_release(&url);
    sl_buf_release(&q);
    free(t[0]);
    free(t[1]);
    return rc;
}

static int search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                  sl_tool_result *res, sl_err *err)
{
    char *tmp;
    const char *query = sl_builtin_arg_str(args, "query", NULL, &tmp);
    headers h = {0};
    int rc = 0;
    if (!query || !*query) {
        rc = sl_err_set(err, SL_EINVAL, "jina: jina_search needs a query");
        goto done;
    }
    common(&h, cfg, "application/json");
    if (flags(&h, args, err)) {
        rc = -1;
        goto done;
    }
    const char *root = sl_builtin_setting(cfg, "search_url", "JINA_SEARCH_URL",
                                          "https://s.jina.ai");
    char *eq = sl_http_escape(query);
    char *base = sl_builtin_url(root, "/");
    char *url = sl_xasprintf("%s%s", base, eq);
    rc = get_text(ctx, cfg, url, &h, res, err);
    free(url);
    free(base);
    free(eq);
done:
    hdr_free(&h);
    free(tmp);
    return rc;
}

static int tokenizer(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                     sl_tool_result *res, sl_err *err)
{
    char *t[2] = {0};
    const char *content = sl_builtin_arg_str(args, "content", NULL, &t[0]);
    if (!content) {
        free(t[0]);
        return sl_err_set(err, SL_EINVAL, "jina: jina_tokenizer needs content");
    }
    sl_value *body = json_pack("{s:s}", "content", content);
    if (sl_builtin_arg_bool(args, "return_chunks", false))
        json_object_set_new(body, "return_chunks", json_true());
    if (sl_builtin_arg_bool(args, "return_tokens", false))
        json_object_set_new(body, "return_tokens", json_true());
    const char *tok = sl_builtin_arg_str(args, "tokenizer", NULL, &t[1]);
    if (tok && *tok)
        json_object_set_new(body, "tokenizer", json_string(tok));
    headers h = {0};
    hdr(&h, "Content-Type: application/json");
    common(&h, cfg, NULL);
    char *text = json_dumps(body, JSON_COMPACT);
    const char *root = sl_builtin_setting(cfg, "tokenize_url", "JINA_TOKENIZE_URL",
                                          "https://tokenize.jina.ai");
    char *url = sl_builtin_url(root, "/");
    sl_builtin_req rq = {VENDOR, "POST", url, (const char *const *)h.v, text, strlen(text), 0};
    sl_value *out = NULL;
    int rc = sl_builtin_fetch_json(ctx, cfg, &rq, &out, err);
    if (!rc)
        rc = sl_builtin_json_out(res, ctx, out, err);
    free(url);
    free(text);
    hdr_free(&h);
    json_decref(body);
    free(t[0]);
    free(t[1]);
    return rc;
}

const sl_builtin_tool sl_builtin_jina_tools[] = {
    {"jina_reader", "A tool for scraping webpages. Input should be a URL.",
     "{\"type\": \"object\", \"properties\": {\"url\": {\"type\": \"string\", "
     "\"description\": \"url para scraping\"}, \"request_params\": {\"type\": \"string\", "
     "\"description\": \"request parameters\"}, \"target_selector\": {\"type\": \"string\", "
     "\"description\": \"css selector of the target element to scrape\"}, "
     "\"wait_for_selector\": {\"type\": \"string\", \"description\": \"css selector of the "
     "target element to wait for\"}, \"remove_images\": {\"type\": \"boolean\", "
     "\"description\": \"Remove all images from the response\"}, \"image_caption\": "
     "{\"type\": \"boolean\", \"description\": \"Captions all images at the specified URL\", "
     "\"default\": false}, \"gather_all_links_at_the_end\": {\"type\": \"boolean\", "
     "\"description\": \"Gather all links at the end\", \"default\": false}, "
     "\"gather_all_images_at_the_end\": {\"type\": \"boolean\", \"description\": \"Gather all "
     "images at the end\", \"default\": false}, \"proxy_server\": {\"type\": \"string\", "
     "\"description\": \"Use proxy to access URLs\"}, \"no_cache\": {\"type\": \"boolean\", "
     "\"description\": \"bypass the cache\", \"default\": false}, \"no_cache_track\": "
     "{\"type\": \"boolean\", \"description\": \"Do Not Cache/Track\", \"default\": false}, "
     "\"summary\": {\"type\": \"boolean\", \"description\": \"enable summary\", \"default\": "
     "false}, \"max_retries\": {\"type\": \"number\", \"description\": \"Number of times to "
     "retry the request if it fails\", \"default\": 3}, \"content_format\": {\"type\": "
     "\"string\", \"description\": \"Control the level of detail in the response to prevent "
     "over-filtering\", \"default\": \"default\", \"enum\": [\"default\", \"markdown\", "
     "\"html\", \"text\", \"screenshot\", \"pageshot\"]}}, \"required\": [\"url\"]}",
     reader},
    {"jina_search", "A tool for searching results on the web for grounding. Input should be a "
     "simple question.",
     "{\"type\": \"object\", \"properties\": {\"query\": {\"type\": \"string\", "
     "\"description\": \"Pergunta simples para fazer na web\"}, \"image_caption\": {\"type\": "
     "\"boolean\", \"description\": \"Captions all images at the specified URL\", "
     "\"default\": false}, \"gather_all_links_at_the_end\": {\"type\": \"boolean\", "
     "\"description\": \"Gather all links at the end\", \"default\": false}, "
     "\"gather_all_images_at_the_end\": {\"type\": \"boolean\", \"description\": \"Gather all "
     "images at the end\", \"default\": false}, \"proxy_server\": {\"type\": \"string\", "
     "\"description\": \"Use proxy to access URLs\"}, \"no_cache\": {\"type\": \"boolean\", "
     "\"description\": \"bypass the cache\", \"default\": false}, \"max_retries\": {\"type\": "
     "\"number\", \"description\": \"Number of times to retry the request if it fails\", "
     "\"default\": 3}}, \"required\": [\"query\"]}",
     search},
    {"jina_tokenizer", "Free API to tokenize text and segment long text into chunks.",
     "{\"type\": \"object\", \"properties\": {\"content\": {\"type\": \"string\", "
     "\"description\": \"the content which need to tokenize or segment\"}, \"return_tokens\": "
     "{\"type\": \"boolean\", \"description\": \"Return the tokens and their corresponding "
     "ids in the response.\"}, \"return_chunks\": {\"type\": \"boolean\", \"description\": "
     "\"Chunking the input into semantically meaningful segments while handling a wide "
     "variety of text types and edge cases based on common structural cues.\"}, "
     "\"tokenizer\": {\"type\": \"string\", \"description\": \"· cl100k_base --- gpt-4, "
     "gpt-3.5-turbo, gpt-3.5\\n· o200k_base  --- gpt-4o, gpt-4o-mini\\n· p50k_base   --- "
     "text-davinci-003, text-davinci-002\\n· r50k_base   --- text-davinci-001, "
     "text-curie-001\\n· p50k_edit   --- text-davinci-edit-001, code-davinci-edit-001\\n· "
     "gpt2        --- gpt-2\", \"enum\": [\"cl100k_base\", \"o200k_base\", \"p50k_base\", "
     "\"r50k_base\", \"p50k_edit\", \"gpt2\"]}}, \"required\": [\"content\"]}",
     tokenizer},
};
const size_t sl_builtin_jina_n = sizeof sl_builtin_jina_tools / sizeof sl_builtin_jina_tools[0];

const char *const sl_builtin_jina_settings[] = {"search_url", "tokenize_url", NULL};
