/*
 * tool — see tool.h.
 */
#include "tools/tool.h"

#include <stdlib.h>
#include <string.h>

void sl_tool_result_init(sl_tool_result *r)
{
    memset(r, 0, sizeof *r);
    sl_buf_init(&r->text, 0);
    r->json = json_array();
    r->variables = json_object();
}

void sl_tool_result_release(sl_tool_result *r)
{
    sl_buf_release(&r->text);
    json_decref(r->json);
    json_decref(r->variables);
    for (size_t i = 0; i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].mime_type);
        sl_buf_release(&r->files[i].data);
    }
    free(r->files);
    memset(r, 0, sizeof *r);
}

void sl_tool_result_file(sl_tool_result *r, const char *name, const char *mime_type,
                         const void *data, size_t len)
{
    r->files = sl_xrealloc(r->files, (r->n_files + 1) * sizeof *r->files);
    sl_tool_file *f = &r->files[r->n_files++];
    f->name = sl_xstrdup(name ? name : "");
    f->mime_type = sl_xstrdup(mime_type && *mime_type ? mime_type : "application/octet-stream");
    sl_buf_init(&f->data, 0);
    sl_buf_add(&f->data, data, len);
}

double sl_tool_timeout(const sl_tool_ctx *ctx)
{
    return ctx && ctx->timeout_s > 0 ? ctx->timeout_s : SL_TOOL_TIMEOUT_S;
}

size_t sl_tool_max_output(const sl_tool_ctx *ctx)
{
    return ctx && ctx->max_output ? ctx->max_output : SL_TOOL_MAX_OUTPUT;
}

bool sl_tool_cancelled(const sl_tool_ctx *ctx)
{
    return ctx && ctx->cancelled && ctx->cancelled(ctx->ud);
}

int sl_tool_result_charge(sl_tool_result *r, const sl_tool_ctx *ctx, size_t n, sl_err *err)
{
    size_t cap = sl_tool_max_output(ctx);
    r->bytes += n;
    if (r->bytes > cap)
        return sl_err_limit(err, SL_ELIMIT, "tool_max_output",
                            "the tool's output passed %zu bytes (tool_max_output); raise the "
                            "limit or ask the tool for less",
                            cap);
    return 0;
}

int sl_toolset_list(sl_toolset *t, const sl_tool_ctx *ctx, sl_value **out, sl_err *err)
{
    *out = NULL;
    return t->ops->list(t, ctx, out, err);
}

int sl_toolset_call(sl_toolset *t, const sl_tool_ctx *ctx, const char *name,
                    const sl_value *args, sl_tool_result *res, sl_err *err)
{
    return t->ops->call(t, ctx, name, args, res, err);
}

const char *sl_toolset_where(sl_toolset *t)
{
    return t->ops->where ? t->ops->where(t) : "";
}

void sl_toolset_free(sl_toolset *t)
{
    if (t)
        t->ops->free(t);
}
