#include "sandbox/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/size.h"

void sl_sandbox_policy_init(sl_sandbox_policy *p, bool sandboxed)
{
    memset(p, 0, sizeof *p);
    snprintf(p->provider, sizeof p->provider, "local");
    if (sandboxed) {
        p->net = SL_NET_NONE;
    } else {
        p->net = SL_NET_ALLOW;
        p->net_allow = sl_xstrdup("*");
    }
}

void sl_sandbox_policy_layer(sl_sandbox_policy *p, const sl_value *layer)
{
    if (!json_is_object(layer))
        return;
    const sl_value *v;
    if (json_is_string(v = json_object_get(layer, "provider")))
        snprintf(p->provider, sizeof p->provider, "%s", json_string_value(v));
    if ((v = json_object_get(layer, "network"))) {
        const char *net = json_string_value(v);
        const sl_value *allow = json_object_get(v, "allow");
        if (net && !strcmp(net, "open")) {
            p->net = SL_NET_OPEN;
        } else if (net && !strcmp(net, "none")) {
            p->net = SL_NET_NONE;
        } else if (json_is_array(allow) || (net && !strncmp(net, "allow=", 6))) {
            sl_buf b;
            sl_buf_init(&b, 0);
            if (net)
                sl_buf_adds(&b, net + 6);
            for (size_t i = 0; i < json_array_size(allow); i++) {
                if (b.len)
                    sl_buf_addc(&b, ',');
                sl_buf_adds(&b, json_string_value(json_array_get(allow, i)));
            }
            free(p->net_allow);
            p->net_allow = sl_buf_detach(&b);
            p->net = SL_NET_ALLOW;
        }
    }
    uint64_t n;
    const char *sizes[] = {"memory", "disk"};
    size_t *slots[] = {&p->memory_bytes, &p->disk_bytes};
    for (int i = 0; i < 2; i++) {
        v = json_object_get(layer, sizes[i]);
        if (json_is_integer(v) && json_integer_value(v) > 0)
            *slots[i] = (size_t)json_integer_value(v);
        else if (json_is_string(v) && !sl_size_parse(json_string_value(v), &n) && n)
            *slots[i] = (size_t)n;
    }
    if (sl_value_is_number(v = json_object_get(layer, "cpu_cores")))
        p->cpu_cores = sl_value_number(v);
    if (json_is_integer(v = json_object_get(layer, "max_procs")))
        p->max_procs = (int)json_integer_value(v);
    if (sl_value_is_number(v = json_object_get(layer, "command_timeout")))
        p->command_timeout_s = sl_value_number(v);
    if (json_is_object(v = json_object_get(layer, "packages")))
        p->packages = v;
}

void sl_sandbox_policy_net(sl_sandbox_policy *p, sl_net_mode net, const char *allow)
{
    p->net = net;
    free(p->net_allow);
    p->net_allow = allow ? sl_xstrdup(allow) : NULL;
}

void sl_sandbox_policy_settings(sl_sandbox_policy *p, const sl_value *config,
                                const sl_value *app)
{
    json_decref(p->settings);
    const sl_value *ps = json_object_get(config, p->provider);
    p->settings = json_is_object(ps) ? json_deep_copy(ps) : NULL;
    const sl_value *tpl = json_object_get(app, "template");
    if (json_is_string(tpl)) {
        if (!p->settings)
            p->settings = json_object();
        json_object_set(p->settings, "template", (sl_value *)tpl);
    }
}

void sl_sandbox_policy_release(sl_sandbox_policy *p)
{
    free(p->net_allow);
    json_decref(p->settings);
    memset(p, 0, sizeof *p);
}

typedef struct {
    sl_sandbox_over_fn over;
    void *ud;
} over_check;

static bool cmd_over(void *ud)
{
    const over_check *o = ud;
    return o->over && o->over(o->ud) != SL_OK;
}

int sl_sandbox_policy_install(const sl_sandbox_policy *p, sl_sandbox *sb,
                              sl_sandbox_over_fn over, void *ud,
                              const sl_sandbox_install_limits *lim, sl_err *err)
{
    static const struct {
        const char *key;
        const char *argv0[10];
    } tools[] = {
        {"pip", {"python3", "-m", "pip", "install", "--user", "--quiet", "--retries", "1",
                 "--disable-pip-version-check", NULL}},
        {"npm", {"npm", "install", "--prefix", ".", "--no-audit", "--no-fund", "--silent", NULL}},
    };
    over_check oc = {over, ud};
    for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++) {
        const sl_value *list = json_object_get(p->packages, tools[t].key);
        size_t n = json_array_size(list);
        if (!n)
            continue;
        const char **argv = sl_xcalloc(n + 11, sizeof *argv);
        size_t k = 0;
        for (; tools[t].argv0[k]; k++)
            argv[k] = tools[t].argv0[k];
        for (size_t i = 0; i < n; i++)
            argv[k++] = json_string_value(json_array_get(list, i));
        static const char *const env[] = {"PIP_BREAK_SYSTEM_PACKAGES=1", NULL};
        sl_sandbox_cmd cmd = {.argv = argv, .env = env, .timeout_s = lim->timeout_s,
                              .max_output_bytes = lim->max_output_bytes, .cancelled = cmd_over, .ud = &oc};
        sl_sandbox_result res;
        sl_sandbox_result_init(&res);
        sl_err e = {0};
        int rc = 0;
        sl_errcode why = SL_OK;
        if (sl_sandbox_exec(sb, &cmd, &res, &e)) {
            rc = sl_err_set(err, SL_EIO, "installing the app's %s packages failed: %s",
                            tools[t].key, e.msg ? e.msg : "?");
        } else if (sl_sandbox_result_code(&res) != 0 && over && (why = over(ud)) != SL_OK) {
            rc = why == SL_ECANCELED
                     ? sl_err_set(err, SL_ECANCELED, "the run was stopped while the app's %s "
                                  "packages were installing", tools[t].key)
                     : sl_err_limit(err, SL_ETIMEOUT, "max_time_s", "the run took longer than "
                                    "max_time_s (%g s) while the app's %s packages were "
                                    "installing (sluice.sandbox.packages); raise it with "
                                    "--limit max_time_s=N", lim->max_time_s, tools[t].key);
        } else if (sl_sandbox_result_code(&res) != 0) {
            char how[256];
            sl_sandbox_result_describe(&res, how, sizeof how);
            if (res.kind == SL_EXIT_TIMEOUT) /* say which setting gives it more */
                snprintf(how + strlen(how), sizeof how - strlen(how),
                         " (install_timeout_s=%g; raise it with --limit install_timeout_s=N)",
                         lim->timeout_s);
            size_t el = res.err.len, off = el > lim->error_bytes ? el - lim->error_bytes : 0;
            rc = sl_err_set(err, SL_EIO, "installing the app's %s packages "
                            "(sluice.sandbox.packages) failed: %s %s: %.*s%s", tools[t].key,
                            argv[0], how, (int)(el - off), res.err.data ? res.err.data + off : "",
                            p->net == SL_NET_NONE
                                ? " (the sandbox has no network: set sluice.sandbox.network "
                                  "to allow the package index, e.g. {allow: [pypi.org, "
                                  "files.pythonhosted.org]})"
                                : "");
        }
        sl_err_clear(&e);
        sl_sandbox_result_release(&res);
        free(argv);
        if (rc)
            return rc;
    }
    return 0;
}
