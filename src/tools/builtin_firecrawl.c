/*
 * builtin_firecrawl — Dify's `firecrawl` provider
 * (langgenius/firecrawl/firecrawl): scrape, crawl and crawl_job, against
 * Firecrawl's v2 API as the plugin calls it (base https://api.firecrawl.dev,
 * or a self-hosted server's; Authorization: Bearer KEY, JSON):
 *
 *   scrape     POST {base}/v2/scrape {url, formats, onlyMainContent, …}
 *   crawl      POST {base}/v2/crawl {url, limit, scrapeOptions, …}, then
 *              GET {base}/v2/crawl/{id} every poll_interval seconds (the
 *              plugin's 5 by default) until the job is completed or failed
 *   crawl_job  GET or DELETE {base}/v2/crawl/{id}
 *
 * The body is the plugin's, a form setting left out taking the default
 * of the plugin's yaml (as Dify fills it in): comma lists split into
 * arrays, `headers` and `schema` read as JSON (single quotes allowed), a json format with the
 * schema and the prompt (systemPrompt folded in) for structured
 * extraction, empty values left out.  The answers are the plugin's:
 * scrape's markdown as text and the API's JSON, crawl's and crawl_job's
 * JSON.  Where the plugin hands on whatever JSON the API answers, a
 * status other than 2xx or `success: false` fails the call with
 * Firecrawl's error.  A crawl waits within the call's deadline and
 * cancellation; past the deadline the call fails naming the job, whose
 * results crawl_job can fetch later.
 */
#include "tools/builtin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/math.h"
#include "net/http.h"

#define VENDOR "Firecrawl"

/* A comma list argument as an array of trimmed items (the plugin's
 * get_array_params), or NULL when it is absent or empty. */
static sl_value *array_param(const sl_value *args, const char *name)
{
    char *tmp;
    const char *s = sl_builtin_arg_str(args, name, NULL, &tmp);
    if (!s || !*s) {
        free(tmp);
        return NULL;
    }
    sl_value *list = json_array();
    for (;;) {
        size_t n = strcspn(s, ",");
        const char *a = s, *e = s + n;
        while (a < e && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r'))
            a++;
        while (e > a && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
            e--;
        json_array_append_new(list, json_stringn(a, (size_t)(e - a)));
        if (!s[n])
            break;
        s += n + 1;
    }
    free(tmp);
    return list;
}

/* A JSON argument (single quotes read as double, as the plugin does):
 * 0 with *out (NULL when absent or empty), or -1 with err. */
static int json_param(const sl_value *args, const char *name, sl_value **out, sl_err *err)
{
    *out = NULL;
    const sl_value *v = json_object_get(args, name);
    if (json_is_object(v) || json_is_array(v)) {
        *out = json_deep_copy(v);
        return 0;
    }
    char *tmp;
    const char *s = sl_builtin_arg_str(args, name, NULL, &tmp);
    if (!s || !*s) {
        free(tmp);
        return 0;
    }
    char *t = sl_xstrdup(s);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    *out = json_loads(t, JSON_DECODE_ANY, NULL);
    free(t);
    free(tmp);
    if (!*out)
        return sl_err_set(err, SL_EINVAL, "firecrawl: Invalid %s format.", name);
    return 0;
}

/* Sets key to v (stolen) unless v is NULL or "". */
static void set(sl_value *o, const char *key, sl_value *v)
{
    if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v))) {
        json_decref(v);
        return;
    }
    json_object_set_new(o, key, v);
}

/* A number argument as JSON (an integer when whole), def when absent;
 * -1 with err when it is not a number. */
static int num_param(const sl_value *args, const char *name, double def, sl_value **out,
                     sl_err *err)
{
    double d = def;
    int r = sl_builtin_arg_num(args, name, &d);
    if (r < 0)
        return sl_err_set(err, SL_EINVAL, "firecrawl: %s is a number", name);
    if (isnan(d)) {
        *out = NULL;
        return 0;
    }
    *out = d == sl_floor(d) && fabs(d) < 1e15 ? json_integer((json_int_t)d) : json_real(d);
    return 0;
}

/* A text argument as JSON, or NULL. */
static sl_value *str_param(const sl_value *args, const char *name)
{
    char *tmp;
    const char *s = sl_builtin_arg_str(args, name, NULL, &tmp);
    sl_value *v = s && *s ? json_string(s) : NULL;
    free(tmp);
    return v;
}

/* One request to {base}{path}; *out its JSON (an object with success not
 * false).  ctx's timeout is what the call has left. */
static int call(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const char *method,
                const char *path, const sl_value *body, sl_value **out, sl_err *err)
{
    *out = NULL;
    if (sl_builtin_need_key(cfg, err))
        return -1;
    char *url = sl_builtin_url(cfg->base_url, path);
    char *auth = sl_xasprintf("Authorization: Bearer %s", cfg->api_key);
    const char *headers[] = {"Content-Type: application/json", "Accept: application/json", auth,
                             NULL};
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    sl_builtin_req rq = {VENDOR, method, url, headers, text, text ? strlen(text) : 0, 0};
    int rc = sl_builtin_fetch_json(ctx, cfg, &rq, out, err);
    if (!rc && !json_is_object(*out))
        rc = sl_err_set(err, SL_EPARSE, "firecrawl: the API answered with JSON that is not an "
                        "object");
    if (!rc && json_is_false(json_object_get(*out, "success"))) {
        sl_buf m;
        sl_buf_init(&m, 0);
        sl_builtin_pystr(json_object_get(*out, "error"), &m);
        rc = sl_err_set(err, SL_EIO, "Firecrawl: the API says the request failed: %.300s",
                        m.data ? m.data : "");
        sl_buf_release(&m);
    }
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    free(text);
    explicit_bzero(auth, strlen(auth));
    free(auth);
    free(url);
    return rc;
}

static int scrape(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                  sl_tool_result *res, sl_err *err)
{
    sl_value *body = json_object(), *out = NULL, *v = NULL;
    int rc = 0;
    sl_value *url = str_param(args, "url");
    if (!url) {
        rc = sl_err_set(err, SL_EINVAL, "firecrawl: scrape needs a url");
        goto done;
    }
    json_object_set_new(body, "url", url);
    json_object_set_new(body, "onlyMainContent",
                        json_boolean(sl_builtin_arg_bool(args, "onlyMainContent", false)));
    set(body, "includeTags", array_param(args, "includeTags"));
    set(body, "excludeTags", array_param(args, "excludeTags"));
    if ((rc = json_param(args, "headers", &v, err)))
        goto done;
    set(body, "headers", v);
    if ((rc = num_param(args, "waitFor", 0, &v, err)))
        goto done;
    set(body, "waitFor", v);
    if ((rc = num_param(args, "timeout", 30000, &v, err)))
        goto done;
    set(body, "timeout", v);
    sl_value *formats = array_param(args, "formats");
    if (!formats)
        formats = json_array();
    for (size_t i = json_array_size(formats); i-- > 0;)  /* v2 has no "extract" format */
        if (!strcmp(json_string_value(json_array_get(formats, i)), "extract"))
            json_array_remove(formats, i);
    sl_value *jf = json_pack("{s:s}", "type", "json");
    if ((rc = json_param(args, "schema", &v, err))) {
        json_decref(jf);
        json_decref(formats);
        goto done;
    }
    set(jf, "schema", v);
    sl_value *sys = str_param(args, "systemPrompt"), *prompt = str_param(args, "prompt");
    if (sys) {
        char *p = prompt ? sl_xasprintf("%s\n\n%s", json_string_value(sys),
                                        json_string_value(prompt))
                         : sl_xstrdup(json_string_value(sys));
        json_decref(prompt);
        prompt = json_string(p);
        free(p);
        json_decref(sys);
    }
    set(jf, "prompt", prompt);
    if (json_object_size(jf) > 1)
        json_array_append(formats, jf);
    json_decref(jf);
    if (json_array_size(formats))
        json_object_set_new(body, "formats", formats);
    else
        json_decref(formats);
    if ((rc = call(ctx, cfg, "POST", "/v2/scrape", body, &out, err)))
        goto done;
    const sl_value *md = json_object_get(json_object_get(out, "data"), "markdown");
    sl_buf t;
    sl_buf_init(&t, 0);
    if (md && !json_is_null(md))
        sl_builtin_pystr(md, &t);
    rc = sl_builtin_text(res, ctx, t.data ? t.data : "", t.len, err);
    sl_buf_release(&t);
    if (!rc)
        rc = sl_builtin_json_out(res, ctx, out, err);
    out = NULL;
done:
    json_decref(out);
    json_decref(body);
    return rc;
}

/* A job id as one path segment (new), or NULL with err. */
static char *job_path(const char *id, sl_err *err)
{
    if (!id || !*id || strlen(id) > 200) {
        sl_err_set(err, SL_EINVAL, "firecrawl: a crawl job id is 1 to 200 characters");
        return NULL;
    }
    char *e = sl_http_escape(id);
    char *p = sl_xasprintf("/v2/crawl/%s", e);
    free(e);
    return p;
}

static int crawl(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                 sl_tool_result *res, sl_err *err)
{
    double start = sl_clock_s(), limit = sl_tool_timeout(ctx);
    sl_value *body = json_object(), *out = NULL, *v = NULL, *so = json_object();
    int rc = 0;
    char *path = NULL;
    sl_value *url = str_param(args, "url");
    if (!url) {
        rc = sl_err_set(err, SL_EINVAL, "firecrawl: crawl needs a url");
        goto done;
    }
    json_object_set_new(body, "url", url);
    double poll = 5;
    const sl_value *pv = json_object_get(cfg->settings, "poll_interval");
    if (pv) {
        poll = json_is_number(pv) ? json_number_value(pv)
               : json_is_string(pv) ? strtod(json_string_value(pv), NULL) : -1;
        if (!(poll >= 0.05 && poll <= 600)) {
            rc = sl_err_set(err, SL_EINVAL, "firecrawl: the binding's poll_interval is seconds, "
                            "from 0.05 to 600");
            goto done;
        }
    }
    set(body, "excludePaths", array_param(args, "excludePaths"));
    set(body, "includePaths", array_param(args, "includePaths"));
    if ((rc = num_param(args, "maxDepth", 2, &v, err)))
        goto done;
    set(body, "maxDiscoveryDepth", v);
    if (sl_builtin_arg_bool(args, "ignoreSitemap", true))
        json_object_set_new(body, "sitemap", json_string("skip"));
    if ((rc = num_param(args, "limit", 5, &v, err)))
        goto done;
    set(body, "limit", v);
    json_object_set_new(body, "crawlEntireDomain",
                        json_boolean(sl_builtin_arg_bool(args, "allowBackwardLinks", false)));
    json_object_set_new(body, "allowExternalLinks",
                        json_boolean(sl_builtin_arg_bool(args, "allowExternalLinks", false)));
    set(body, "webhook", str_param(args, "webhook"));
    set(so, "formats", array_param(args, "formats"));
    if ((rc = json_param(args, "headers", &v, err)))
        goto done;
    set(so, "headers", v);
    set(so, "includeTags", array_param(args, "includeTags"));
    set(so, "excludeTags", array_param(args, "excludeTags"));
    json_object_set_new(so, "onlyMainContent",
                        json_boolean(sl_builtin_arg_bool(args, "onlyMainContent", false)));
    if ((rc = num_param(args, "waitFor", 0, &v, err)))
        goto done;
    set(so, "waitFor", v);
    json_object_set(body, "scrapeOptions", so);
    if ((rc = call(ctx, cfg, "POST", "/v2/crawl", body, &out, err)))
        goto done;
    if (!sl_builtin_arg_bool(args, "wait_for_results", true)) {
        rc = sl_builtin_json_out(res, ctx, out, err);
        out = NULL;
        goto done;
    }
    const char *id = json_string_value(json_object_get(out, "id"));
    if (!(path = job_path(id, err))) {
        rc = sl_err_prefix(err, "Firecrawl: the crawl started with no usable job id");
        goto done;
    }
    char *job = sl_xstrdup(id);
    json_decref(out);
    out = NULL;
    for (;;) {
        double left = limit - (sl_clock_s() - start);
        if (left <= 0) {
            rc = sl_err_limit(err, SL_ETIMEOUT, "tool_timeout_s",
                              "Firecrawl: the crawl job %s did not complete within %g s "
                              "(tool_timeout_s); get its results later with crawl_job",
                              job, limit);
            break;
        }
        sl_tool_ctx left_ctx = *ctx;
        left_ctx.timeout_s = left;
        if ((rc = call(&left_ctx, cfg, "GET", path, NULL, &out, err)))
            break;
        const char *st = json_string_value(json_object_get(out, "status"));
        if (st && !strcmp(st, "completed")) {
            rc = sl_builtin_json_out(res, ctx, out, err);
            out = NULL;
            break;
        }
        if (st && !strcmp(st, "failed")) {
            sl_buf m;
            sl_buf_init(&m, 0);
            sl_builtin_pystr(json_object_get(out, "error"), &m);
            rc = sl_err_set(err, SL_EIO, "Firecrawl: Job %s failed: %.300s", job,
                            m.data ? m.data : "");
            sl_buf_release(&m);
            break;
        }
        json_decref(out);
        out = NULL;
        /* wait, asking for cancellation as the HTTP client does */
        double until = sl_clock_s() + poll;
        if (until > start + limit)
            until = start + limit;
        while (sl_clock_s() < until && !sl_tool_cancelled(ctx)) {
            struct timespec ts = {0, SL_HTTP_POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (sl_tool_cancelled(ctx)) {
            rc = sl_err_set(err, SL_ECANCELED, "firecrawl: the run was stopped");
            break;
        }
    }
    free(job);
done:
    free(path);
    json_decref(out);
    json_decref(so);
    json_decref(body);
    return rc;
}

static int crawl_job(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                     sl_tool_result *res, sl_err *err)
{
    char *t[2] = {0};
    const char *id = sl_builtin_arg_str(args, "job_id", NULL, &t[0]);
    const char *op = sl_builtin_arg_str(args, "operation", "get", &t[1]);
    int rc = 0;
    char *path = NULL;
    sl_value *out = NULL;
    if (strcmp(op, "get") && strcmp(op, "cancel")) {
        rc = sl_err_set(err, SL_EINVAL, "firecrawl: Invalid operation: %s (get or cancel)", op);
        goto done;
    }
    if (!(path = job_path(id, err))) {
        rc = -1;
        goto done;
    }
    if (!(rc = call(ctx, cfg, strcmp(op, "get") ? "DELETE" : "GET", path, NULL, &out, err))) {
        rc = sl_builtin_json_out(res, ctx, out, err);
        out = NULL;
    }
done:
    json_decref(out);
    free(path);
    free(t[0]);
    free(t[1]);
    return rc;
}

const sl_builtin_tool sl_builtin_firecrawl_tools[] = {
    {"scrape", "This tool is designed to scrape URL and output the content in Markdown "
     "format.",
     "{\"type\": \"object\", \"properties\": {\"url\": {\"type\": \"string\", "
     "\"description\": \"The URL of the website that needs to be crawled. This is a required "
     "parameter.\"}, \"formats\": {\"type\": \"string\", \"description\": \"Formats to "
     "include in the output. Available options: markdown, html, rawHtml, links, screenshot, "
     "extract, screenshot@fullPage\"}, \"onlyMainContent\": {\"type\": \"boolean\", "
     "\"description\": \"Only return the main content of the page excluding headers, navs, "
     "footers, etc.\", \"default\": false}, \"includeTags\": {\"type\": \"string\", "
     "\"description\": \"Only include tags, classes and ids from the page in the final "
     "output. Use comma separated values. Example: script, .ad, #footer\"}, \"excludeTags\": "
     "{\"type\": \"string\", \"description\": \"Tags, classes and ids to remove from the "
     "page. Use comma separated values. Example: script, .ad, #footer\"}, \"headers\": "
     "{\"type\": \"string\", \"description\": \"Headers to send with the request. Can be used "
     "to send cookies, user-agent, etc. Example: {\\\"cookies\\\": \\\"testcookies\\\"}\"}, "
     "\"waitFor\": {\"type\": \"number\", \"description\": \"Wait x amount of milliseconds "
     "for the page to load to fetch content.\", \"default\": 0, \"minimum\": 0}, \"timeout\": "
     "{\"type\": \"number\", \"description\": \"Timeout in milliseconds for the request.\", "
     "\"default\": 30000, \"minimum\": 0}, \"schema\": {\"type\": \"string\", "
     "\"description\": \"The schema for the data to be extracted. Example: {\\n    "
     "\\\"type\\\": \\\"object\\\",\\n    \\\"properties\\\": {\\\"company_mission\\\": "
     "{\\\"type\\\": \\\"string\\\"}},\\n    \\\"required\\\": "
     "[\\\"company_mission\\\"]\\n}\"}, \"systemPrompt\": {\"type\": \"string\", "
     "\"description\": \"The system prompt to use for the extraction.\"}, \"prompt\": "
     "{\"type\": \"string\", \"description\": \"The prompt to use for the extraction without "
     "a schema.\"}}, \"required\": [\"url\"]}",
     scrape},
    {"crawl", "This tool initiates a web crawl to extract data from a specified URL. It allows "
     "configuring crawler options such as including or excluding URL patterns, generating alt "
     "text for images using LLMs (paid plan required), limiting the maximum number of pages to "
     "crawl, and returning only the main content of the page. The tool can return either a "
     "list of crawled documents or a list of URLs based on the provided options.",
     "{\"type\": \"object\", \"properties\": {\"url\": {\"type\": \"string\", "
     "\"description\": \"The URL of the website that needs to be crawled. This is a required "
     "parameter.\"}, \"wait_for_results\": {\"type\": \"boolean\", \"description\": \"If you "
     "choose not to wait, it will directly return a job ID. You can use this job ID to check "
     "the crawling results or cancel the crawling task, which is usually very useful for a "
     "large-scale crawling task.\", \"default\": true}, \"excludePaths\": {\"type\": "
     "\"string\", \"description\": \"Pages matching these patterns will be skipped. Example: "
     "blog/*, about/*\"}, \"includePaths\": {\"type\": \"string\", \"description\": \"Only "
     "pages matching these patterns will be crawled. Example: blog/*, about/*\"}, "
     "\"maxDepth\": {\"type\": \"number\", \"description\": \"Maximum depth to crawl relative "
     "to the entered URL. A maxDepth of 0 scrapes only the entered URL. A maxDepth of 1 "
     "scrapes the entered URL and all pages one level deep. A maxDepth of 2 scrapes the "
     "entered URL and all pages up to two levels deep. Higher values follow the same "
     "pattern.\", \"default\": 2, \"minimum\": 0}, \"ignoreSitemap\": {\"type\": \"boolean\", "
     "\"description\": \"Ignore the website sitemap when crawling.\", \"default\": true}, "
     "\"limit\": {\"type\": \"number\", \"description\": \"Specify the maximum number of "
     "pages to crawl. The crawler will stop after reaching this limit.\", \"default\": 5, "
     "\"minimum\": 1}, \"allowBackwardLinks\": {\"type\": \"boolean\", \"description\": "
     "\"Enables the crawler to navigate from a specific URL to previously linked pages. For "
     "instance, from 'example.com/product/123' back to 'example.com/product'\", \"default\": "
     "false}, \"allowExternalLinks\": {\"type\": \"boolean\", \"description\": \"Allows the "
     "crawler to follow links to external websites.\", \"default\": false}, \"webhook\": "
     "{\"type\": \"string\", \"description\": \"The URL to send the webhook to. This will "
     "trigger for crawl started (crawl.started) ,every page crawled (crawl.page) and when the "
     "crawl is completed (crawl.completed or crawl.failed). The response will be the same as "
     "the /scrape endpoint.\"}, \"formats\": {\"type\": \"string\", \"description\": "
     "\"Formats to include in the output. Available options: markdown, html, rawHtml, links, "
     "screenshot\"}, \"headers\": {\"type\": \"string\", \"description\": \"Headers to send "
     "with the request. Can be used to send cookies, user-agent, etc. Example: "
     "{\\\"cookies\\\": \\\"testcookies\\\"}\"}, \"includeTags\": {\"type\": \"string\", "
     "\"description\": \"Only include tags, classes and ids from the page in the final "
     "output. Use comma separated values. Example: script, .ad, #footer\"}, \"excludeTags\": "
     "{\"type\": \"string\", \"description\": \"Tags, classes and ids to remove from the "
     "page. Use comma separated values. Example: script, .ad, #footer\"}, "
     "\"onlyMainContent\": {\"type\": \"boolean\", \"description\": \"Only return the main "
     "content of the page excluding headers, navs, footers, etc.\", \"default\": false}, "
     "\"waitFor\": {\"type\": \"number\", \"description\": \"Wait x amount of milliseconds "
     "for the page to load to fetch content.\", \"minimum\": 0}}, \"required\": [\"url\"]}",
     crawl},
    {"crawl_job", "Retrieve the scraping results based on the job ID, or cancel the scraping "
     "task.",
     "{\"type\": \"object\", \"properties\": {\"job_id\": {\"type\": \"string\", "
     "\"description\": \"Set wait_for_results to false in the Crawl tool can get the job "
     "ID.\"}, \"operation\": {\"type\": \"string\", \"description\": \"choose the operation "
     "to perform. `get` is for getting the crawl status, `cancel` is for cancelling the crawl "
     "job.\", \"enum\": [\"get\", \"cancel\"]}}, \"required\": [\"job_id\", \"operation\"]}",
     crawl_job},
};
const size_t sl_builtin_firecrawl_n =
    sizeof sl_builtin_firecrawl_tools / sizeof sl_builtin_firecrawl_tools[0];

const char *const sl_builtin_firecrawl_settings[] = {"poll_interval", NULL};
