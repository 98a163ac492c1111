/*
 * builtin_tavily — Dify's `tavily` provider (langgenius/tavily/tavily):
 * tavily_search and tavily_extract, against Tavily's REST API
 * (POST {base}/search and {base}/extract, JSON, Authorization: Bearer
 * KEY; base https://api.tavily.com).
 *
 * The request body is what the plugin's parameter processing gives the
 * Tavily client: the plugin's defaults (search_depth basic, topic
 * general, max_results 5, chunks_per_source 3 for advanced and fast
 * searches only), include_answer and include_raw_content read as the
 * plugin reads them (true -> basic / markdown), domains split at commas
 * and spaces, "not_specified" and empty values left out.  The answer is
 * the plugin's: the API's JSON as a json message, and the plugin's
 * markdown text; no results is the plugin's text ("No results found for
 * 'Q' in Tavily.").  Where the plugin answers a failure with text (no
 * key, no query, the API's error), the call fails instead.  With
 * include_images and include_favicon the images and favicons are
 * downloaded as files, as the plugin does (through the SSRF guard, 10 s
 * each within the call's deadline, a failed one skipped).
 */
#include "tools/builtin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/math.h"

#define VENDOR "Tavily"

/* A string argument with a value ("" and "None" read as absent), or NULL. */
static const char *given(const sl_value *args, const char *name, char **tmp)
{
    const char *s = sl_builtin_arg_str(args, name, NULL, tmp);
    return s && *s && strcmp(s, "None") ? s : NULL;
}

/* An integer argument into body as key: 0, absent (1 when absent), or -1
 * with err. */
static int int_arg(const sl_value *args, const char *name, long lo, long hi, long *out,
                   sl_err *err)
{
    double d;
    int r = sl_builtin_arg_num(args, name, &d);
    if (r == 0)
        return 1;
    if (r < 0 || d != sl_floor(d) || d < (double)lo || d > (double)hi)
        return sl_err_set(err, SL_EINVAL, "tavily: %s is a whole number from %ld to %ld",
                          name, lo, hi);
    *out = (long)d;
    return 0;
}

/* Domains "a.com, b.com c.com" as a list (or a list given as one). */
static sl_value *domains(const sl_value *v)
{
    if (json_is_array(v))
        return json_deep_copy(v);
    if (!json_is_string(v))
        return NULL;
    sl_value *list = json_array();
    const char *s = json_string_value(v);
    while (*s) {
        s += strspn(s, ", \t\r\n");
        size_t n = strcspn(s, ", \t\r\n");
        if (n)
            json_array_append_new(list, json_stringn(s, n));
        s += n;
    }
    if (!json_array_size(list)) {
        json_decref(list);
        return NULL;
    }
    return list;
}

/* POSTs body to {base}{path}; *out the JSON answer. */
static int post(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const char *path,
                const sl_value *body, const char *project, sl_value **out, sl_err *err)
{
    char *url = sl_builtin_url(cfg->base_url, path);
    char *auth = sl_xasprintf("Authorization: Bearer %s", cfg->api_key);
    char *proj = project ? sl_xasprintf("X-Project-ID: %s", project) : NULL;
    const char *headers[] = {"Content-Type: application/json", "Accept: application/json",
                             "X-Client-Source: sluice", auth, proj, NULL};
    char *text = json_dumps(body, JSON_COMPACT);
    sl_builtin_req rq = {VENDOR, "POST", url, headers, text, strlen(text), 0};
    int rc = sl_builtin_fetch_json(ctx, cfg, &rq, out, err);
    if (!rc && !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        rc = sl_err_set(err, SL_EPARSE, "tavily: the API answered with JSON that is not an "
                        "object");
    }
    free(text);
    free(proj);
    explicit_bzero(auth, strlen(auth));
    free(auth);
    free(url);
    return rc;
}

/* Appends "s" for a field of a result (Python's str()). */
static void put(sl_buf *b, const sl_value *v)
{
    sl_builtin_pystr(v, b);
}

/* Python's truth of a JSON value. */
static bool truthy(const sl_value *v)
{
    if (!v || json_is_null(v) || json_is_false(v))
        return false;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    if (json_is_number(v))
        return json_number_value(v) != 0;
    if (json_is_array(v))
        return json_array_size(v) > 0;
    if (json_is_object(v))
        return json_object_size(v) > 0;
    return true;
}

/* The plugin's lines, joined with "\n" (each line ends with its own). */
typedef struct {
    sl_buf b;
    bool any;
} lines;

static void line_start(lines *l)
{
    if (l->any)
        sl_buf_addc(&l->b, '\n');
    l->any = true;
}

static void line(lines *l, const char *s)
{
    line_start(l);
    sl_buf_adds(&l->b, s);
}

/* include_answer / include_raw_content as the plugin reads them: a
 * string false/"" leaves it out, true -> on, on -> on, other strings
 * false; a boolean true -> on. */
static void enum_flag(sl_value *body, const sl_value *args, const char *name, const char *on,
                      const char *alt)
{
    const sl_value *v = json_object_get(args, name);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!*s || !strcasecmp(s, "false") || !strcmp(s, "None"))
            return;
        if (!strcasecmp(s, "true") || !strcasecmp(s, on))
            json_object_set_new(body, name, json_string(on));
        else if (!strcasecmp(s, alt))
            json_object_set_new(body, name, json_string(alt));
        else
            json_object_set_new(body, name, json_false());
    } else if (truthy(v)) {
        json_object_set_new(body, name, json_string(on));
    }
}

/* Whether the raw parameter asks for a section (the plugin's `x and x
 * not in [False, "false"]`). */
static bool asked(const sl_value *args, const char *name)
{
    const sl_value *v = json_object_get(args, name);
    return truthy(v) && !(json_is_string(v) && !strcmp(json_string_value(v), "false"));
}

/* ---- the images and favicons, as files ---- */

/* The plugin's filename for url: its last path part without the query. */
static char *url_name(const char *url)
{
    const char *slash = url;
    for (const char *p = url; *p; p++)
        if (*p == '/')
            slash = p + 1;
    return sl_xstrndup(slash, strcspn(slash, "?"));
}

/* Downloads url as a file of res, as the plugin's process_images and
 * process_favicons: a failed download is skipped (the plugin prints it),
 * within 10 s and the call's deadline.  favicon >= 0: the result's index,
 * for the name of a favicon whose URL gives none.  -1 (err) only when the
 * run was stopped or the output cap is passed. */
static int download(const sl_tool_ctx *ctx, double deadline, const sl_value *u, long favicon,
                    sl_tool_result *res, sl_err *err)
{
    const char *url = json_string_value(u);
    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
        return 0;
    double left = deadline - sl_clock_s();
    if (left <= 0)
        return 0;
    sl_tool_ctx c = *ctx;
    c.timeout_s = left < 10 ? left : 10;
    size_t used = res->bytes, cap = sl_tool_max_output(ctx);
    sl_builtin_req rq = {VENDOR, "GET", url, NULL, NULL, 0, cap > used ? cap - used + 1 : 1};
    long status = 0;
    sl_buf body;
    sl_buf_init(&body, 0);
    char *ctype = NULL;
    sl_err e = {0};
    int rc = sl_builtin_fetch(&c, &rq, &status, &body, &ctype, &e);
    if (rc && e.code == SL_ECANCELED) {
        rc = sl_err_set(err, SL_ECANCELED, "tavily: the run was stopped");
    } else if (rc && e.code == SL_ELIMIT) {
        rc = sl_tool_result_charge(res, ctx, cap + 1, err);
    } else if (!rc && status >= 200 && status < 300) {
        const char *type = ctype && *ctype ? ctype : favicon >= 0 ? "image/png" : "image/jpeg";
        char *name = url_name(url);
        if (favicon >= 0 && (!*name || !strchr(name, '.'))) {
            const char *ext = strstr(type, "svg") ? "svg" : strstr(type, "png") ? "png"
                              : strstr(type, "jpeg") || strstr(type, "jpg") ? "jpg"
                              : strstr(type, "gif") ? "gif" : strstr(type, "webp") ? "webp"
                                                                                    : "ico";
            free(name);
            name = sl_xasprintf("favicon_%ld.%s", favicon, ext);
        }
        if (!(rc = sl_tool_result_charge(res, ctx, body.len, err)))
            sl_tool_result_file(res, name, type, body.data ? body.data : "", body.len);
        free(name);
    } else {
        rc = 0;
    }
    sl_err_clear(&e);
    free(ctype);
    sl_buf_release(&body);
    return rc;
}

/* The plugin's markdown for a search's answer. */
static void search_text(const sl_value *args, const sl_value *out, lines *lp)
{
    const sl_value *answer = json_object_get(out, "answer");
    if (asked(args, "include_answer") && truthy(answer)) {
        line_start(lp);
        sl_buf_adds(&lp->b, "**Answer:** ");
        put(&lp->b, answer);
        sl_buf_addc(&lp->b, '\n');
    }
    const char *topic = json_string_value(json_object_get(args, "topic"));
    bool news = topic && !strcmp(topic, "news");
    bool favicons = sl_builtin_arg_bool(args, "include_favicon", false);
    bool raw = asked(args, "include_raw_content");
    size_t i;
    const sl_value *x;
    const sl_value *results = json_object_get(out, "results");
    json_array_foreach(json_is_array(results) ? results : NULL, i, x) {
        const sl_value *title = json_object_get(x, "title"), *url = json_object_get(x, "url");
        sl_value *no_title = title ? NULL : json_string("No Title");
        sl_value *no_url = url ? NULL : json_string("");
        line_start(lp);
        sl_buf_addf(&lp->b, "# Result %zu: [", i + 1);
        put(&lp->b, title ? title : no_title);
        sl_buf_adds(&lp->b, "](");
        put(&lp->b, url ? url : no_url);
        sl_buf_adds(&lp->b, ")\n");
        const sl_value *pd = json_object_get(x, "published_date");
        if (news && truthy(pd)) {
            line_start(lp);
            sl_buf_adds(&lp->b, "**Published Date:** ");
            put(&lp->b, pd);
            sl_buf_addc(&lp->b, '\n');
        }
        line_start(lp);
        sl_buf_adds(&lp->b, "**URL:** ");
        put(&lp->b, url ? url : no_url);
        sl_buf_addc(&lp->b, '\n');
        const sl_value *score = json_object_get(x, "score");
        if (truthy(score)) {
            line_start(lp);
            sl_buf_adds(&lp->b, "**Relevance Score:** ");
            put(&lp->b, score);
            sl_buf_addc(&lp->b, '\n');
        }
        const sl_value *fav = json_object_get(x, "favicon");
        if (favicons && truthy(fav)) {
            line_start(lp);
            sl_buf_adds(&lp->b, "**Favicon:** ![Favicon for ");
            if (title)
                put(&lp->b, title);
            else
                sl_buf_adds(&lp->b, "website");
            sl_buf_adds(&lp->b, "](");
            put(&lp->b, fav);
            sl_buf_adds(&lp->b, ")\n");
        }
        const sl_value *content = json_object_get(x, "content");
        if (truthy(content)) {
            line_start(lp);
            sl_buf_adds(&lp->b, "**Content:**\n");
            put(&lp->b, content);
            sl_buf_addc(&lp->b, '\n');
        }
        const sl_value *rc_ = json_object_get(x, "raw_content");
        if (raw && truthy(rc_)) {
            line_start(lp);
            sl_buf_adds(&lp->b, "**Raw Content:**\n");
            put(&lp->b, rc_);
            sl_buf_addc(&lp->b, '\n');
        }
        line(lp, "---\n");
        json_decref(no_title);
        json_decref(no_url);
    }
    const sl_value *images = json_object_get(out, "images");
    if (sl_builtin_arg_bool(args, "include_images", false) && truthy(images)) {
        line(lp, "**Images:**\n");
        json_array_foreach(json_is_array(images) ? images : NULL, i, x) {
            const sl_value *u = json_is_object(x) ? json_object_get(x, "url") : x;
            const sl_value *d = json_is_object(x) ? json_object_get(x, "description") : NULL;
            if (!truthy(u))
                continue;
            line_start(lp);
            sl_buf_adds(&lp->b, "![");
            if (d)
                put(&lp->b, d);
            else
                sl_buf_adds(&lp->b, "Tavily search result image");
            sl_buf_adds(&lp->b, "](");
            put(&lp->b, u);
            sl_buf_adds(&lp->b, ")\n");
        }
        line(lp, "\n");
    }
}

/* The plugin's markdown for an extract's answer. */
static void extract_text(const sl_value *out, lines *lp)
{
    size_t i, j;
    const sl_value *x, *y;
    const sl_value *results = json_object_get(out, "results");
    json_array_foreach(json_is_array(results) ? results : NULL, i, x) {
        const sl_value *url = json_object_get(x, "url");
        sl_buf u;
        sl_buf_init(&u, 0);
        if (url)
            put(&u, url);
        line_start(lp);
        sl_buf_addf(&lp->b, "# Extracted Content %zu: %s\n", i + 1, u.data ? u.data : "");
        const sl_value *fav = json_object_get(x, "favicon");
        if (truthy(fav)) {
            line_start(lp);
            sl_buf_addf(&lp->b, "**Favicon:** ![Favicon for %s](", u.data ? u.data : "");
            put(&lp->b, fav);
            sl_buf_adds(&lp->b, ")\n");
        }
        const sl_value *raw = json_object_get(x, "raw_content");
        line_start(lp);
        sl_buf_adds(&lp->b, "**Raw Content:**\n");
        if (raw)
            put(&lp->b, raw);
        sl_buf_addc(&lp->b, '\n');
        const sl_value *imgs = json_object_get(x, "images");
        if (truthy(imgs)) {
            line(lp, "**Images:**\n");
            json_array_foreach(json_is_array(imgs) ? imgs : NULL, j, y) {
                line_start(lp);
                sl_buf_addf(&lp->b, "![Image from %s](", u.data ? u.data : "");
                put(&lp->b, y);
                sl_buf_adds(&lp->b, ")\n");
            }
        }
        line(lp, "---\n");
        sl_buf_release(&u);
    }
    const sl_value *failed = json_object_get(out, "failed_results");
    if (truthy(failed)) {
        line(lp, "# Failed URLs:\n");
        json_array_foreach(json_is_array(failed) ? failed : NULL, i, x) {
            const sl_value *u = json_object_get(x, "url"), *e = json_object_get(x, "error");
            line_start(lp);
            sl_buf_adds(&lp->b, "- ");
            if (u)
                put(&lp->b, u);
            sl_buf_adds(&lp->b, ": ");
            if (e)
                put(&lp->b, e);
            else
                sl_buf_adds(&lp->b, "Unknown error");
            sl_buf_addc(&lp->b, '\n');
        }
    }
}

void sl_builtin_tavily_text(bool extract, const sl_value *args, const sl_value *answer,
                            sl_buf *out)
{
    lines l = {*out, out->len > 0};
    if (extract)
        extract_text(answer, &l);
    else
        search_text(args, answer, &l);
    *out = l.b;
}

static int search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                  sl_tool_result *res, sl_err *err)
{
    double deadline = sl_clock_s() + sl_tool_timeout(ctx);
    if (sl_builtin_need_key(cfg, err))
        return -1;
    char *t[8] = {0};
    const char *query = given(args, "query", &t[0]);
    if (!query) {
        free(t[0]);
        return sl_err_set(err, SL_EINVAL, "tavily: Please input a query.");
    }
    sl_value *body = json_pack("{s:s}", "query", query);
    int rc = 0;
    static const char *const strs[] = {"search_depth", "topic", "time_range", "start_date",
                                       "end_date", "country"};
    for (int i = 0; i < 6; i++) {
        const char *v = given(args, strs[i], &t[1]);
        if (v && strcmp(v, "not_specified"))
            json_object_set_new(body, strs[i], json_string(v));
        free(t[1]);
        t[1] = NULL;
    }
    static const char *const doms[] = {"include_domains", "exclude_domains"};
    for (int i = 0; i < 2; i++) {
        sl_value *d = domains(json_object_get(args, doms[i]));
        if (d)
            json_object_set_new(body, doms[i], d);
    }
    static const char *const flags[] = {"include_images", "include_image_descriptions",
                                        "auto_parameters", "include_favicon", "include_usage"};
    for (int i = 0; i < 5; i++) {
        const sl_value *v = json_object_get(args, flags[i]);
        if (v && !json_is_null(v))
            json_object_set_new(body, flags[i],
                                json_boolean(sl_builtin_arg_bool(args, flags[i], false)));
    }
    enum_flag(body, args, "include_answer", "basic", "advanced");
    enum_flag(body, args, "include_raw_content", "markdown", "text");
    long n;
    int r = int_arg(args, "max_results", 0, 1000, &n, err);
    if (r < 0) {
        rc = -1;
        goto done;
    }
    json_object_set_new(body, "max_results", json_integer(r ? 5 : n));
    const char *depth = json_string_value(json_object_get(body, "search_depth"));
    if (!depth)
        json_object_set_new(body, "search_depth", json_string(depth = "basic"));
    if (!json_object_get(body, "topic"))
        json_object_set_new(body, "topic", json_string("general"));
    r = int_arg(args, "chunks_per_source", 0, 1000, &n, err);
    if (r < 0) {
        rc = -1;
        goto done;
    }
    if (!strcmp(depth, "advanced") || !strcmp(depth, "fast"))
        json_object_set_new(body, "chunks_per_source", json_integer(r ? 3 : n));
    sl_value *out = NULL;
    if ((rc = post(ctx, cfg, "/search", body, given(args, "project_id", &t[2]), &out, err)))
        goto done;
    const sl_value *results = json_object_get(out, "results");
    if (!truthy(results)) {
        sl_buf m;
        sl_buf_init(&m, 0);
        sl_buf_addf(&m, "No results found for '%s' in Tavily.", query);
        rc = sl_builtin_text(res, ctx, m.data, m.len, err);
        sl_buf_release(&m);
        json_decref(out);
        goto done;
    }
    sl_buf text;
    sl_buf_init(&text, 0);
    sl_builtin_tavily_text(false, args, out, &text);
    rc = sl_builtin_json_out(res, ctx, json_incref(out), err);
    if (!rc)
        rc = sl_builtin_text(res, ctx, text.data ? text.data : "", text.len, err);
    sl_buf_release(&text);
    size_t i;
    const sl_value *x;
    if (sl_builtin_arg_bool(args, "include_images", false))
        json_array_foreach(json_object_get(out, "images"), i, x)
            if (!rc)
                rc = download(ctx, deadline, json_is_object(x) ? json_object_get(x, "url") : x,
                              -1, res, err);
    if (sl_builtin_arg_bool(args, "include_favicon", false))
        json_array_foreach(json_object_get(out, "results"), i, x)
            if (!rc)
                rc = download(ctx, deadline, json_object_get(x, "favicon"), (long)i, res, err);
    json_decref(out);
done:
    json_decref(body);
    for (int k = 0; k < 8; k++)
        free(t[k]);
    return rc;
}

static int extract(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                   sl_tool_result *res, sl_err *err)
{
    double deadline = sl_clock_s() + sl_tool_timeout(ctx);
    if (sl_builtin_need_key(cfg, err))
        return -1;
    char *t[4] = {0};
    int rc = 0;
    sl_value *body = json_object(), *out = NULL;
    const sl_value *uv = json_object_get(args, "urls");
    sl_value *urls = json_array();
    if (json_is_string(uv)) {
        const char *s = json_string_value(uv);
        while (*s) {
            size_t n = strcspn(s, ",");
            const char *a = s, *e = s + n;
            while (a < e && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r'))
                a++;
            while (e > a && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                e--;
            if (e > a)
                json_array_append_new(urls, json_stringn(a, (size_t)(e - a)));
            s += n + (s[n] == ',');
        }
    } else if (json_is_array(uv)) {
        json_array_extend(urls, (sl_value *)uv);
    }
    if (!json_array_size(urls)) {
        rc = sl_err_set(err, SL_EINVAL, "tavily: Please input at least one URL to extract.");
        json_decref(urls);
        goto done;
    }
    json_object_set_new(body, "urls", urls);
    static const char *const flags[] = {"include_images", "include_favicon", "include_usage"};
    for (int i = 0; i < 3; i++) {
        const sl_value *v = json_object_get(args, flags[i]);
        if (v && !json_is_null(v))
            json_object_set_new(body, flags[i],
                                json_boolean(sl_builtin_arg_bool(args, flags[i], false)));
    }
    const char *depth = given(args, "extract_depth", &t[0]);
    if (depth && strcmp(depth, "basic") && strcmp(depth, "advanced")) {
        rc = sl_err_set(err, SL_EINVAL, "tavily: extract_depth must be either 'basic' or "
                        "'advanced'");
        goto done;
    }
    if (depth)
        json_object_set_new(body, "extract_depth", json_string(depth));
    const char *format = given(args, "format", &t[1]);
    if (format && strcmp(format, "markdown") && strcmp(format, "text")) {
        rc = sl_err_set(err, SL_EINVAL, "tavily: format must be either 'markdown' or 'text'");
        goto done;
    }
    if (format)
        json_object_set_new(body, "format", json_string(format));
    const char *query = given(args, "query", &t[2]);
    if (query)
        json_object_set_new(body, "query", json_string(query));
    long n;
    int r = int_arg(args, "chunks_per_source", 1, 5, &n, err);
    if (r < 0) {
        sl_err_set(err, SL_EINVAL, "tavily: chunks_per_source must be between 1 and 5");
        rc = -1;
        goto done;
    }
    if (r == 0)
        json_object_set_new(body, "chunks_per_source", json_integer(n));
    double to;
    r = sl_builtin_arg_num(args, "timeout", &to);
    if (r < 0 || (r == 1 && to != 0 && (to < 1 || to > 60))) {
        rc = sl_err_set(err, SL_EINVAL, "tavily: timeout must be between 1.0 and 60.0 seconds");
        goto done;
    }
    if (r == 1 && to != 0)
        json_object_set_new(body, "timeout", json_real(to));
    if ((rc = post(ctx, cfg, "/extract", body, given(args, "project_id", &t[3]), &out, err)))
        goto done;
    const sl_value *results = json_object_get(out, "results");
    if (!truthy(results)) {
        static const char none[] = "No content could be extracted from the provided URLs.";
        rc = sl_builtin_text(res, ctx, none, sizeof none - 1, err);
        goto done;
    }
    sl_buf text;
    sl_buf_init(&text, 0);
    sl_builtin_tavily_text(true, args, out, &text);
    rc = sl_builtin_json_out(res, ctx, json_incref(out), err);
    if (!rc)
        rc = sl_builtin_text(res, ctx, text.data ? text.data : "", text.len, err);
    sl_buf_release(&text);
    size_t i, j;
    const sl_value *x, *y;
    if (sl_builtin_arg_bool(args, "include_images", false))
        json_array_foreach(results, i, x)
            json_array_foreach(json_object_get(x, "images"), j, y)
                if (!rc)
                    rc = download(ctx, deadline, y, -1, res, err);
    if (sl_builtin_arg_bool(args, "include_favicon", false))
        json_array_foreach(results, i, x)
            if (!rc)
                rc = download(ctx, deadline, json_object_get(x, "favicon"), (long)i, res, err);
done:
    json_decref(out);
    json_decref(body);
    for (int k = 0; k < 4; k++)
        free(t[k]);
    return rc;
}

const sl_builtin_tool sl_builtin_tavily_tools[] = {
    {"tavily_search", "A search engine tool built specifically for AI agents (LLMs), delivering "
     "real-time, accurate, and factual results at speed.",
     "{\"type\": \"object\", \"properties\": {\"query\": {\"type\": \"string\", "
     "\"description\": \"The search query.\"}, \"search_depth\": {\"type\": \"string\", "
     "\"description\": \"The depth of the search. 'basic' for standard search, 'advanced' for "
     "comprehensive results, 'fast' for quick results, 'ultra-fast' for fastest results with "
     "minimal processing.\", \"default\": \"basic\", \"enum\": [\"basic\", \"advanced\", "
     "\"fast\", \"ultra-fast\"]}, \"topic\": {\"type\": \"string\", \"description\": \"The "
     "category of the search. Valid options are 'general', 'news', and 'finance'.\", "
     "\"default\": \"general\", \"enum\": [\"general\", \"news\", \"finance\"]}, "
     "\"time_range\": {\"type\": \"string\", \"description\": \"The time range back from the "
     "current date to filter results. Valid options are 'not_specified', 'day', 'week', "
     "'month', and 'year'. When time_range is set, do not set start_date or end_date.\", "
     "\"default\": \"not_specified\", \"enum\": [\"not_specified\", \"day\", \"week\", "
     "\"month\", \"year\"]}, \"start_date\": {\"type\": \"string\", \"description\": \"The "
     "start date for filtering results. Required to be written in the format YYYY-MM-DD. "
     "Results will be filtered to include content from this date onwards. When time_range is "
     "set, do not set start_date or end_date.\"}, \"end_date\": {\"type\": \"string\", "
     "\"description\": \"The end date for filtering results. Required to be written in the "
     "format YYYY-MM-DD. Results will be filtered to include content up to this date. When "
     "time_range is set, do not set start_date or end_date.\"}, \"auto_parameters\": "
     "{\"type\": \"boolean\", \"description\": \"When set to true, Tavily automatically "
     "configures search parameters based on your query.\", \"default\": false}, "
     "\"include_images\": {\"type\": \"boolean\", \"description\": \"When set to true, "
     "includes a list of query-related images in the response.\", \"default\": false}, "
     "\"include_image_descriptions\": {\"type\": \"boolean\", \"description\": \"When "
     "include_images is True and this is set to true, adds descriptive text for each "
     "image.\", \"default\": false}, \"include_favicon\": {\"type\": \"boolean\", "
     "\"description\": \"When set to true, includes the favicon URL for each result.\", "
     "\"default\": false}, \"include_answer\": {\"type\": \"string\", \"description\": \"When "
     "set to true or 'basic', includes a short answer to the original query in the response. "
     "Use 'advanced' for a more detailed, comprehensive answer.\", \"default\": \"false\", "
     "\"enum\": [\"false\", \"true\", \"basic\", \"advanced\"]}, \"include_raw_content\": "
     "{\"type\": \"string\", \"description\": \"Include the cleaned and parsed content of "
     "each search result. 'false' to disable, 'true' or 'markdown' for markdown format, "
     "'text' for plain text format.\", \"default\": \"false\", \"enum\": [\"false\", "
     "\"true\", \"markdown\", \"text\"]}, \"include_usage\": {\"type\": \"boolean\", "
     "\"description\": \"When set to true, includes API usage information such as token "
     "counts and credits used in the response.\", \"default\": false}, \"max_results\": "
     "{\"type\": \"number\", \"description\": \"The maximum number of search results to "
     "return. Range is 1-20.\", \"default\": 5, \"minimum\": 1, \"maximum\": 20}, "
     "\"chunks_per_source\": {\"type\": \"number\", \"description\": \"Maximum number of "
     "relevant content chunks (1-3) returned per source. Valid when search_depth is "
     "'advanced' or 'fast'.\", \"default\": 3, \"minimum\": 1, \"maximum\": 3}, \"country\": "
     "{\"type\": \"string\", \"description\": \"Select a country to boost results only when "
     "topic is general. Use one of the exact option values.\", \"enum\": [\"afghanistan\", "
     "\"albania\", \"algeria\", \"andorra\", \"angola\", \"argentina\", \"armenia\", "
     "\"australia\", \"austria\", \"azerbaijan\", \"bahamas\", \"bahrain\", \"bangladesh\", "
     "\"barbados\", \"belarus\", \"belgium\", \"belize\", \"benin\", \"bhutan\", \"bolivia\", "
     "\"bosnia and herzegovina\", \"botswana\", \"brazil\", \"brunei\", \"bulgaria\", "
     "\"burkina faso\", \"burundi\", \"cambodia\", \"cameroon\", \"canada\", \"cape verde\", "
     "\"central african republic\", \"chad\", \"chile\", \"china\", \"colombia\", "
     "\"comoros\", \"congo\", \"costa rica\", \"croatia\", \"cuba\", \"cyprus\", \"czech "
     "republic\", \"denmark\", \"djibouti\", \"dominican republic\", \"ecuador\", \"egypt\", "
     "\"el salvador\", \"equatorial guinea\", \"eritrea\", \"estonia\", \"ethiopia\", "
     "\"fiji\", \"finland\", \"france\", \"gabon\", \"gambia\", \"georgia\", \"germany\", "
     "\"ghana\", \"greece\", \"guatemala\", \"guinea\", \"haiti\", \"honduras\", \"hungary\", "
     "\"iceland\", \"india\", \"indonesia\", \"iran\", \"iraq\", \"ireland\", \"israel\", "
     "\"italy\", \"jamaica\", \"japan\", \"jordan\", \"kazakhstan\", \"kenya\", \"kuwait\", "
     "\"kyrgyzstan\", \"latvia\", \"lebanon\", \"lesotho\", \"liberia\", \"libya\", "
     "\"liechtenstein\", \"lithuania\", \"luxembourg\", \"madagascar\", \"malawi\", "
     "\"malaysia\", \"maldives\", \"mali\", \"malta\", \"mauritania\", \"mauritius\", "
     "\"mexico\", \"moldova\", \"monaco\", \"mongolia\", \"montenegro\", \"morocco\", "
     "\"mozambique\", \"myanmar\", \"namibia\", \"nepal\", \"netherlands\", \"new zealand\", "
     "\"nicaragua\", \"niger\", \"nigeria\", \"north korea\", \"north macedonia\", "
     "\"norway\", \"oman\", \"pakistan\", \"panama\", \"papua new guinea\", \"paraguay\", "
     "\"peru\", \"philippines\", \"poland\", \"portugal\", \"qatar\", \"romania\", "
     "\"russia\", \"rwanda\", \"saudi arabia\", \"senegal\", \"serbia\", \"singapore\", "
     "\"slovakia\", \"slovenia\", \"somalia\", \"south africa\", \"south korea\", \"south "
     "sudan\", \"spain\", \"sri lanka\", \"sudan\", \"sweden\", \"switzerland\", \"syria\", "
     "\"taiwan\", \"tajikistan\", \"tanzania\", \"thailand\", \"togo\", \"trinidad and "
     "tobago\", \"tunisia\", \"turkey\", \"turkmenistan\", \"uganda\", \"ukraine\", \"united "
     "arab emirates\", \"united kingdom\", \"united states\", \"uruguay\", \"uzbekistan\", "
     "\"venezuela\", \"vietnam\", \"yemen\", \"zambia\", \"zimbabwe\"]}, \"include_domains\": "
     "{\"type\": \"string\", \"description\": \"A comma-separated list of domains to "
     "specifically include in the search results.\"}, \"exclude_domains\": {\"type\": "
     "\"string\", \"description\": \"A comma-separated list of domains to specifically "
     "exclude from the search results.\"}, \"project_id\": {\"type\": \"string\", "
     "\"description\": \"Optional project ID for usage tracking and analytics.\"}}, "
     "\"required\": [\"query\"]}",
     search},
    {"tavily_extract", "Extract raw content from web pages with basic or advanced extraction "
     "modes.",
     "{\"type\": \"object\", \"properties\": {\"urls\": {\"type\": \"string\", "
     "\"description\": \"One or more URLs to extract content from (comma-separated if "
     "multiple).\"}, \"query\": {\"type\": \"string\", \"description\": \"Optional query "
     "string to rerank extracted content chunks based on relevance to user intent.\"}, "
     "\"include_images\": {\"type\": \"boolean\", \"description\": \"Include images from the "
     "URLs in the response. Default is false.\", \"default\": false}, \"include_favicon\": "
     "{\"type\": \"boolean\", \"description\": \"When set to true, includes the favicon URL "
     "for each result.\", \"default\": false}, \"extract_depth\": {\"type\": \"string\", "
     "\"description\": \"Extraction depth - 'basic' (default, faster) or 'advanced' (more "
     "data, higher cost).\", \"default\": \"basic\", \"enum\": [\"basic\", \"advanced\"]}, "
     "\"format\": {\"type\": \"string\", \"description\": \"Format of extracted content - "
     "'markdown' (default) or 'text' (plain text).\", \"default\": \"markdown\", \"enum\": "
     "[\"markdown\", \"text\"]}, \"chunks_per_source\": {\"type\": \"number\", "
     "\"description\": \"Maximum number of relevant content chunks (1-5) returned per source. "
     "Default is 3.\", \"default\": 3, \"minimum\": 1, \"maximum\": 5}, \"timeout\": "
     "{\"type\": \"number\", \"description\": \"Request timeout in seconds (1.0-60.0). "
     "Default is 10s for basic, 30s for advanced extraction.\", \"minimum\": 1, \"maximum\": "
     "60}, \"include_usage\": {\"type\": \"boolean\", \"description\": \"When set to true, "
     "includes API credit usage information in the response.\", \"default\": false}, "
     "\"project_id\": {\"type\": \"string\", \"description\": \"Optional project ID for usage "
     "tracking and analytics.\"}}, \"required\": [\"urls\"]}",
     extract},
};
const size_t sl_builtin_tavily_n =
    sizeof sl_builtin_tavily_tools / sizeof sl_builtin_tavily_tools[0];
