/*
 * sandbox/policy: the defaults per runtime, layers overlaying only what
 * they set, the caller's network override, the provider's settings with
 * the app's template, and an install with nothing to install.
 */
#include <string.h>

#include "sandbox/policy.h"
#include "tap.h"

static sl_value *json_obj(const char *json)
{
    json_error_t je;
    sl_value *v = json_loads(json, 0, &je);
    if (!v)
        fprintf(stderr, "bad test JSON: %s\n", je.text);
    return v;
}

static void test_defaults(void)
{
    sl_sandbox_policy p;
    sl_sandbox_policy_init(&p, false);
    CHECK(!strcmp(p.provider, "local") && p.net == SL_NET_ALLOW && p.net_allow &&
              !strcmp(p.net_allow, "*") && !p.packages && !p.settings,
          "a classic app: local, every public host through the proxy, no packages");
    sl_sandbox_policy_release(&p);
    sl_sandbox_policy_init(&p, true);
    CHECK(p.net == SL_NET_NONE && !p.net_allow, "a sandboxed app: no network");
    sl_sandbox_policy_release(&p);
}

static void test_layers(void)
{
    sl_sandbox_policy p;
    sl_sandbox_policy_init(&p, true);
    p.memory_bytes = 1 << 30;
    p.disk_bytes = 1 << 30;
    p.cpu_cores = 0;
    p.max_procs = 512;
    p.command_timeout_s = 60;
    sl_value *config = json_obj("{\"provider\": \"ssh\", \"memory\": \"2G\", \"max_procs\": 64,"
                                " \"ssh\": {\"host\": \"vm1\"}, \"e2b\": {\"api_key\": \"k\"}}");
    sl_value *app = json_obj("{\"network\": {\"allow\": [\"pypi.org\", \"*.example.org\"]},"
                             " \"disk\": 5000000, \"cpu_cores\": 1.5, \"command_timeout\": 30,"
                             " \"packages\": {\"pip\": [\"requests\"]}, \"template\": \"base\"}");
    sl_sandbox_policy_layer(&p, config);
    sl_sandbox_policy_layer(&p, app);
    sl_sandbox_policy_layer(&p, NULL); /* not an object: nothing */
    CHECK(!strcmp(p.provider, "ssh") && p.memory_bytes == (size_t)2 << 30 &&
              p.max_procs == 64 && p.disk_bytes == 5000000 && p.cpu_cores == 1.5 &&
              p.command_timeout_s == 30,
          "each layer replaces what it sets, the rest stays (memory %zu, disk %zu)",
          p.memory_bytes, p.disk_bytes);
    CHECK(p.net == SL_NET_ALLOW && p.net_allow && !strcmp(p.net_allow, "pypi.org,*.example.org"),
          "network {allow: [...]} is a host list (%s)", p.net_allow ? p.net_allow : "none");
    CHECK(p.packages == json_object_get(app, "packages"), "packages are the app's, borrowed");
    sl_sandbox_policy_settings(&p, config, app);
    CHECK(p.settings && !strcmp(json_string_value(json_object_get(p.settings, "host")), "vm1") &&
              !strcmp(json_string_value(json_object_get(p.settings, "template")), "base") &&
              !json_object_get(p.settings, "api_key"),
          "settings: the provider's own object plus the app's template");
    CHECK(!json_object_get(json_object_get(config, "ssh"), "template"),
          "the configuration's object is copied, not changed");
    sl_sandbox_policy_net(&p, SL_NET_OPEN, NULL);
    CHECK(p.net == SL_NET_OPEN && !p.net_allow, "the caller's --net replaces the network");
    sl_value *shut = json_obj("{\"network\": \"none\"}");
    sl_sandbox_policy_layer(&p, shut);
    CHECK(p.net == SL_NET_NONE, "network: none");
    sl_sandbox_policy_release(&p);
    json_decref(config);
    json_decref(app);
    json_decref(shut);
}

static void test_install_nothing(void)
{
    sl_sandbox_policy p;
    sl_sandbox_policy_init(&p, true);
    sl_err err = {0};
    const sl_sandbox_install_limits lim = {600, 1 << 20, 2000, 1200};
    /* No packages: the sandbox is never touched, so none is needed. */
    CHECK(sl_sandbox_policy_install(&p, NULL, NULL, NULL, &lim, &err) == 0 && !err.msg,
          "no packages: nothing to install");
    sl_value *empty = json_obj("{\"packages\": {\"pip\": [], \"npm\": []}}");
    sl_sandbox_policy_layer(&p, empty);
    CHECK(sl_sandbox_policy_install(&p, NULL, NULL, NULL, &lim, &err) == 0 && !err.msg,
          "empty package lists: nothing to install");
    sl_sandbox_policy_release(&p);
    json_decref(empty);
}

int main(void)
{
    test_defaults();
    test_layers();
    test_install_nothing();
    return tap_done();
}
