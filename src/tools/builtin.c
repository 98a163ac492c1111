/*
 * builtin — see builtin.h.
 */
#include "tools/builtin.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    sl_toolset base;
    const char *where;
    const sl_builtin_tool *tools;
    size_t n;
} builtin_ts;

static int bt_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    (void)ctx;
    builtin_ts *b = (builtin_ts *)t;
    sl_value *list = json_array();
    for (size_t i = 0; i < b->n; i++) {
        json_error_t je;
        sl_value *schema = json_loads(b->tools[i].schema, 0, &je);
        if (!schema) {
            json_decref(list);
            return sl_err_set(err, SL_EPARSE, "built-in tool %s: its schema does not parse: %s",
                              b->tools[i].name, je.text);
        }
        json_array_append_new(list, json_pack("{s:s, s:s, s:o}", "name", b->tools[i].name,
                                              "description", b->tools[i].description,
                                              "inputSchema", schema));
    }
    *out = list;
    return 0;
}

static int bt_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name, const sl_value *args,
                   sl_tool_result *res, sl_err *err)
{
    builtin_ts *b = (builtin_ts *)t;
    sl_value *empty = NULL;
    if (!json_is_object(args))
        args = empty = json_object();
    int rc = 1;
    for (size_t i = 0; i < b->n && rc == 1; i++)
        if (name && !strcmp(name, b->tools[i].name))
            rc = b->tools[i].call(ctx, args, res, err);
    if (rc == 1) {
        sl_buf names;
        sl_buf_init(&names, 0);
        for (size_t i = 0; i < b->n; i++)
            sl_buf_addf(&names, "%s%s", i ? ", " : "", b->tools[i].name);
        rc = sl_err_set(err, SL_ENOTFOUND, "this built-in provider has no tool named '%s'; it "
                        "has %s", name ? name : "", names.data ? names.data : "none");
        sl_buf_release(&names);
    }
    json_decref(empty);
    return rc;
}

static const char *bt_where(sl_toolset *t)
{
    return ((builtin_ts *)t)->where;
}

static void bt_free(sl_toolset *t)
{
    free(t);
}

static const sl_toolset_ops builtin_ops = {
    .kind = "builtin", .list = bt_list, .call = bt_call, .where = bt_where, .free = bt_free};

sl_toolset *sl_builtin_toolset(const char *where, const sl_builtin_tool *tools, size_t n)
{
    builtin_ts *b = sl_xcalloc(1, sizeof *b);
    b->base.ops = &builtin_ops;
    b->where = where;
    b->tools = tools;
    b->n = n;
    return &b->base;
}

/* ---- the registry ---- */

static sl_bindings *registry;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void add_provider(const char *id, const char *plugin_id, const char *where,
                         const sl_builtin_tool *tools, size_t n)
{
    /* one toolset per id: a binding owns its toolset */
    sl_bindings_add_toolset(registry, id, sl_builtin_toolset(where, tools, n), where);
    sl_bindings_add_toolset(registry, plugin_id, sl_builtin_toolset(where, tools, n), where);
}

static void make_registry(void)
{
    registry = sl_bindings_new();
    add_provider("time", "langgenius/time/time", "in sluice", sl_builtin_time_tools,
                 sl_builtin_time_n);
    add_provider("json_process", "langgenius/json_process/json_process", "in sluice",
                 sl_builtin_json_tools, sl_builtin_json_n);
    add_provider("webscraper", "langgenius/webscraper/webscraper", "in sluice",
                 sl_builtin_web_tools, sl_builtin_web_n);
}

const sl_bindings *sl_builtins(void)
{
    pthread_once(&registry_once, make_registry);
    return registry;
}

/* ---- arguments ---- */

const char *sl_builtin_arg_str(const sl_value *args, const char *name, const char *def,
                               char **tmp)
{
    *tmp = NULL;
    const sl_value *v = json_object_get(args, name);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        return *tmp = sl_xasprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 1e15)
            return *tmp = sl_xasprintf("%.1f", d);
        return *tmp = sl_xasprintf("%.17g", d);
    }
    if (json_is_boolean(v))
        return json_is_true(v) ? "True" : "False";
    return def;
}

bool sl_builtin_arg_bool(const sl_value *args, const char *name, bool def)
{
    const sl_value *v = json_object_get(args, name);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes"))
            return true;
        if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no") || !*s)
            return false;
    }
    return def;
}

int sl_builtin_arg_num(const sl_value *args, const char *name, double *out)
{
    const sl_value *v = json_object_get(args, name);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        while (*s == ' ')
            s++;
        if (!*s)
            return 0;
        double d = strtod(s, &end);
        while (*end == ' ')
            end++;
        if (end != s && !*end && isfinite(d)) {
            *out = d;
            return 1;
        }
    }
    return -1;
}

int sl_builtin_text(sl_tool_result *res, const sl_tool_ctx *ctx, const char *s, size_t n,
                    sl_err *err)
{
    if (sl_tool_result_charge(res, ctx, n, err))
        return -1;
    sl_buf_add(&res->text, s, n);
    return 0;
}
