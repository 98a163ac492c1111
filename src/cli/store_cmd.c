/*
 * store_cmd — `sluice store migrate | check | admin-token`: the store on
 * its own, for operators.  Opening a store applies its missing migrations
 * (store.h), so `migrate` is an open that says so and changes nothing
 * else; `check` also reads from it; `admin-token` prints the admin API's
 * token, which a folder store also keeps in DIR/admin-token but a
 * database store keeps only in the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/opt.h"
#include "engine/config.h"
#include "store/store.h"

enum { O_DATA = 1, O_CONFIG };

static const sl_opt store_opts[] = {
    {"--data", "--store", "DIR|URL",
     "the store: a folder, sqlite:FOLDER or postgres://… (default\n"
     "$SLUICE_STORE, else $SLUICE_DATA, else the settings' store:,\n"
     "else ./sluice-data)", O_DATA},
    {"--config", NULL, "FILE", "the settings (default $SLUICE_CONFIG, else ./sluice.yml)",
     O_CONFIG},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec store_spec = {
    "sluice store",
    "usage: sluice store migrate | check | admin-token [--store DIR|URL]\n"
    "\n"
    "  migrate       bring the store's tables to this sluice's version (servers and\n"
    "                commands also do it when they open it)\n"
    "  check         open the store and read from it: where it is, its apps and runs\n"
    "  admin-token   print the admin API's token (made on first use)\n"
    "\n",
    store_opts,
    "\nExit status: 0 when the store is usable, 1 when not (the reason on stderr).\n",
    false,
};

typedef struct {
    const char *verb, *data, *config;
} store_args;

static int store_opt(void *ud, int id, const char *v)
{
    store_args *a = ud;
    switch (id) {
    case SL_OPT_ARG:
        if (a->verb) {
            fprintf(stderr, "sluice store: unexpected argument '%s' (see sluice store --help)\n",
                    v);
            return -1;
        }
        a->verb = v;
        return 0;
    case O_DATA: return sl_cli_set_store("sluice store", &a->data, v);
    case O_CONFIG: a->config = v; return 0;
    }
    return -1;
}

/* The location as it may be shown: a URL's password is not. */
static char *shown(const char *where)
{
    const char *scheme = strstr(where, "://");
    const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
    const char *colon = at ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
    if (!colon)
        return sl_xstrdup(where);
    return sl_xasprintf("%.*s:***%s", (int)(colon - where), where, at);
}

int sl_cli_store(int argc, char **argv)
{
    store_args a = {0};
    int prc = sl_opt_parse(&store_spec, argc, argv, 1, store_opt, &a, NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? 0 : 2;
    if (!a.verb || (strcmp(a.verb, "migrate") && strcmp(a.verb, "check") &&
                    strcmp(a.verb, "admin-token"))) {
        fprintf(stderr, "sluice store: %s%s%s (migrate, check or admin-token; see sluice store "
                        "--help)\n", a.verb ? "unknown verb '" : "which verb?",
                a.verb ? a.verb : "", a.verb ? "'" : "");
        return 2;
    }
    sl_err err = {0};
    sl_config *cfg = NULL;
    if (sl_config_load(a.config, &cfg, &err)) {
        fprintf(stderr, "sluice store: %s\n", err.msg);
        sl_err_clear(&err);
        return 2;
    }
    const char *where = sl_cli_store_where(a.data, cfg);
    char *name = shown(where);
    sl_store *s = sl_cli_open_store(where, cfg);
    sl_config_free(cfg);
    if (!s) {
        free(name);
        return 1;
    }
    int rc = 0;
    if (!strcmp(a.verb, "migrate")) {
        printf("the store at %s is up to date\n", name);
    } else if (!strcmp(a.verb, "admin-token")) {
        char *token = NULL;
        bool created = false;
        if (sl_store_admin_token(s, &token, &created, &err)) {
            fprintf(stderr, "sluice store: %s\n", err.msg);
            rc = 1;
        } else {
            printf("%s\n", token);
            if (created)
                fprintf(stderr, "sluice store: made a new admin token (keep it secret)\n");
        }
        free(token);
    } else {
        sl_value *apps = NULL;
        sl_runs_filter f = {.limit = 1};
        sl_value *runs = NULL;
        if (sl_store_app_list(s, &apps, &err) || !(runs = sl_store_runs_list(s, &f))) {
            fprintf(stderr, "sluice store: the store at %s opens but cannot be read: %s\n", name,
                    err.msg ? err.msg : "its runs cannot be listed");
            rc = 1;
        } else {
            const sl_value *newest = json_array_get(json_object_get(runs, "data"), 0);
            printf("store: %s\napps: %zu\n", name, json_array_size(apps));
            if (newest)
                printf("newest run: %s (%s)\n",
                       json_string_value(json_object_get(newest, "id")),
                       json_string_value(json_object_get(newest, "status")));
            else
                printf("runs: none yet\n");
            printf("ok\n");
        }
        json_decref(apps);
        json_decref(runs);
    }
    sl_err_clear(&err);
    sl_store_close(s);
    free(name);
    return rc;
}
