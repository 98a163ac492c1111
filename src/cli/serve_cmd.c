/*
 * serve_cmd — `sluice serve` and `sluice app …`: the server and app
 * management on the same store (usable while the server runs: SQLite
 * WAL lets both write).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/graph.h"
#include "engine/config.h"
#include "server/server.h"
#include "server/apps.h"
#include "store/store.h"
#include "cli/cli.h"

static const char usage_serve[] =
    "usage: sluice serve [--listen ADDR:PORT] [--data DIR] [--config FILE]\n"
    "\n"
    "Serves Dify's Service API (/v1: workflows/run, chat-messages, conversations,\n"
    "messages, parameters, info, logs, stop) and an admin API (/admin) for the apps in\n"
    "the data folder (default $SLUICE_DATA, else ./sluice-data).  Every run, its\n"
    "events, and every conversation are kept in DIR/sluice.db.\n"
    "\n"
    "  --listen ADDR:PORT    default 127.0.0.1:5001\n"
    "  --data DIR            the store: a folder (or sqlite:FOLDER)\n"
    "  --config FILE         model providers (see docs/llm.md)\n"
    "  --max-runs N          concurrent runs per app (default 100)\n"
    "  --rate-limit N        run requests per second per app (default: no limit)\n"
    "  --limit NAME=VALUE    a limit for every run (see sluice limits; also SLUICE_NAME)\n"
    "  --drain SECONDS       on SIGTERM or Ctrl-C, how long runs may go on before they\n"
    "                        are stopped (default 30)\n"
    "  --max-connections N   connections open at once, all clients (default 10000)\n"
    "  --max-connections-per-ip N\n"
    "                        connections open at once from one address (default 2048;\n"
    "                        raise it behind a proxy, where every client is one address)\n"
    "  --header-timeout S    seconds a connection may stay silent before a request's\n"
    "                        headers are in (default 10)\n"
    "  --idle-timeout S      seconds a request may stay silent once under way (default 60)\n"
    "  --max-event-bytes N   one run's stored event log, and its stream, in bytes (default\n"
    "                        64 MB); past it they end with an error event\n"
    "\n"
    "Add apps with `sluice app import FILE` and keys with `sluice app key create APP_ID`.\n"
    "SIGTERM or Ctrl-C stops accepting, lets runs finish (--drain, 30 s), then stops\n"
    "the rest; a second SIGTERM or Ctrl-C stops them at once.\n";

static const char usage_app[] =
    "usage: sluice app import FILE [--data DIR]    a .yml or .zip bundle; prints the new app's id\n"
    "       sluice app import FILE --app APP_ID [--data DIR]   a new version of that app\n"
    "       sluice app list [--data DIR]\n"
    "       sluice app versions APP_ID [--data DIR]\n"
    "       sluice app export APP_ID [--version N] [--data DIR]   prints the DSL (a .zip for apps\n"
    "                                               with files; --version N: that version's DSL)\n"
    "       sluice app delete APP_ID [--data DIR]\n"
    "       sluice app key create APP_ID [--data DIR]   prints a new key (app-…)\n"
    "       sluice app key list APP_ID [--data DIR]\n"
    "       sluice app key revoke KEY_ID [--data DIR]\n";

static const char *data_dir(int argc, char **argv)
{
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--data"))
            return argv[i + 1];
    const char *e = getenv("SLUICE_DATA");
    return e && *e ? e : "sluice-data";
}

/* The value of option `name` (--app, --version), or NULL. */
static const char *opt(int argc, char **argv, const char *name)
{
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return argv[i + 1];
    return NULL;
}

static sl_store *open_store(const char *dir)
{
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    if (sl_store_open(dir, &s, &interrupted, &err)) {
        fprintf(stderr, "sluice: %s\n", err.msg);
        sl_err_clear(&err);
        return NULL;
    }
    if (interrupted)
        fprintf(stderr, "sluice: %d run(s) were still running when the last server stopped; "
                        "they are marked failed\n",
                interrupted);
    return s;
}

/* A whole number from 1 to 1,000,000 for option `name`; -1 after saying
 * what is wrong. */
static int positive(const char *name, const char *text, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v < 1 || v > 1000000) {
        fprintf(stderr, "sluice serve: %s '%s': give a whole number from 1 to 1000000\n", name,
                text);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int sl_cli_serve(int argc, char **argv)
{
    sl_server_opts o;
    sl_server_opts_init(&o);
    sl_err lerr = {0};
    if (sl_limits_from_env(&o.limits, &lerr) < 0) {  /* SLUICE_*; --limit overrides */
        fprintf(stderr, "sluice serve: %s\n", lerr.msg);
        sl_err_clear(&lerr);
        return 2;
    }
    const char *config = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage_serve, stdout);
            return 0;
        }
        static const char *const known[] = {
            "--listen", "--data", "--config", "--max-runs", "--rate-limit", "--drain",
            "--max-connections", "--max-connections-per-ip", "--header-timeout",
            "--idle-timeout", "--max-event-bytes", "--limit", NULL};
        int k = 0;
        while (known[k] && strcmp(a, known[k]))
            k++;
        if (!known[k]) {
            fprintf(stderr, "sluice serve: unknown option '%s' (see --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "sluice serve: %s needs a value (see --help)\n", a);
            return 2;
        }
        if (!strcmp(a, "--listen"))
            o.listen = argv[++i];
        else if (!strcmp(a, "--data"))
            i++;
        else if (!strcmp(a, "--config"))
            config = argv[++i];
        else if (!strcmp(a, "--max-runs"))
            o.max_runs_per_app = atoi(argv[++i]);
        else if (!strcmp(a, "--rate-limit"))
            o.rate_limit = atof(argv[++i]);
        else if (!strcmp(a, "--limit")) {
            sl_err le = {0};
            if (sl_limits_set(&o.limits, argv[++i], &le) < 0) {
                fprintf(stderr, "sluice serve: --limit: %s\n", le.msg);
                sl_err_clear(&le);
                return 2;
            }
        } else if (!strcmp(a, "--drain")) {
            char *end;
            o.drain_s = strtod(argv[++i], &end);
            if (*end || !(o.drain_s >= 0 && o.drain_s <= 86400)) {
                fprintf(stderr, "sluice serve: --drain '%s': give seconds from 0 to 86400\n",
                        argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--max-connections") || !strcmp(a, "--max-connections-per-ip") ||
                 !strcmp(a, "--header-timeout") || !strcmp(a, "--idle-timeout")) {
            unsigned v;
            if (positive(a, argv[++i], &v))
                return 2;
            *(!strcmp(a, "--max-connections")          ? &o.max_connections
              : !strcmp(a, "--max-connections-per-ip") ? &o.max_connections_per_ip
              : !strcmp(a, "--header-timeout")         ? &o.header_timeout_s
                                                       : &o.idle_timeout_s) = v;
        } else if (!strcmp(a, "--max-event-bytes")) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || argv[i][0] == '-' || v < 4096 ||
                v > (1ull << 30)) {
                fprintf(stderr, "sluice serve: --max-event-bytes '%s': give a number of bytes "
                                "from 4096 to 1073741824\n", argv[i]);
                return 2;
            }
            o.max_event_bytes = (size_t)v;
        } else {
            fprintf(stderr, "sluice serve: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    sl_err err = {0};
    sl_config *cfg;
    if (sl_config_load(config, &cfg, &err)) {
        fprintf(stderr, "sluice serve: %s\n", err.msg);
        sl_err_clear(&err);
        return 2;
    }
    o.config = cfg;
    const char *dir = data_dir(argc, argv);
    sl_store *s = open_store(dir);
    if (!s) {
        sl_config_free(cfg);
        return 1;
    }
    char *token = NULL;
    bool created = false;
    if (sl_store_admin_token(s, &token, &created, &err)) {
        fprintf(stderr, "sluice serve: %s\n", err.msg);
        sl_store_close(s);
        sl_config_free(cfg);
        return 1;
    }
    if (created)
        fprintf(stderr, "sluice serve: first start: the admin token is in %s/admin-token\n", dir);
    free(token);
    int rc = sl_server_run(s, &o, &err);
    if (rc)
        fprintf(stderr, "sluice serve: %s\n", err.msg);
    sl_err_clear(&err);
    sl_store_close(s);
    sl_config_free(cfg);
    return rc ? 1 : 0;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 50u << 20);  /* a bundle may be 50 MB; a DSL 10 MB (checked on load) */
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sl_buf_add(&b, chunk, n);
    if (f != stdin)
        fclose(f);
    if (b.toobig) {
        sl_buf_release(&b);
        return NULL;
    }
    *len = b.len;
    return sl_buf_detach(&b);
}

int sl_cli_app(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage_app, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    bool key = !strcmp(sub, "key");
    const char *verb = key ? (argc > 2 ? argv[2] : "") : sub;
    const char *arg = NULL;  /* the verb's one argument */
    bool needs = strcmp(verb, "list") || key;
    /* Every word after the verb: its one argument, --data DIR, and the
     * verb's own option; anything else is refused, never ignored. */
    int pos = 0;
    for (int i = key ? 3 : 2; i < argc; i++) {
        const char *a = argv[i];
        bool takes = !strcmp(a, "--data") || (!key && !strcmp(verb, "import") && !strcmp(a, "--app")) ||
                     (!key && !strcmp(verb, "export") && !strcmp(a, "--version"));
        if (takes && i + 1 < argc) {
            i++;
        } else if (takes || (a[0] == '-' && a[1])) {
            fprintf(stderr, "sluice app %s%s: %s '%s' (see sluice app --help)\n",
                    key ? "key " : "", verb, takes ? "no value for" : "unknown option", a);
            return 2;
        } else if (!arg && needs) {
            arg = a;
            pos++;
        } else if (++pos > (needs ? 1 : 0)) {
            fprintf(stderr, "sluice app %s%s: unexpected argument '%s' (see sluice app --help)\n",
                    key ? "key " : "", verb, a);
            return 2;
        }
    }
    if (needs && !arg) {
        fprintf(stderr, "sluice app: %s%s%s needs an argument\n%s", key ? "key " : "", verb,
                "", usage_app);
        return 2;
    }
    sl_store *s = open_store(data_dir(argc, argv));
    if (!s)
        return 1;
    sl_err err = {0};
    int rc = 0;
    if (!key && !strcmp(verb, "import")) {
        size_t len;
        char *text = read_all(arg, &len);
        sl_diag d;
        sl_diag_init(&d);
        char *id = NULL;
        const char *update = opt(argc, argv, "--app");
        sl_value *info = NULL;
        sl_config *cfg = sl_config_default();
        int irc = !text ? -1
                  : update ? sl_apps_update(s, update, text, len, arg, cfg, &info, &d, &err)
                           : sl_apps_import(s, text, len, arg, cfg, &id, &info, &d, &err);
        sl_config_free(cfg);
        if (!text) {
            fprintf(stderr, "sluice app import: cannot read %s (or it is over 50 MB)\n", arg);
            rc = 1;
        } else if (irc) {
            for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "%s: %s\n", d.v[i].warning ? "warning" : "error", d.v[i].msg);
            fprintf(stderr, "sluice app import: %s\n", err.msg);
            sl_err_clear(&err);
            rc = 1;
        } else {
            printf("%s\n", json_string_value(json_object_get(info, "id")));
            if (update)
                fprintf(stderr, "sluice app import: %s is now at version %lld\n", update,
                        (long long)json_integer_value(json_object_get(info, "version")));
        }
        json_decref(info);
        free(id);
        sl_diag_release(&d);
        free(text);
    } else if (!key && !strcmp(verb, "versions")) {
        sl_value *vs = NULL;
        if (!(rc = sl_store_app_versions(s, arg, &vs, &err) ? 1 : 0))
            for (size_t i = 0; i < json_array_size(vs); i++) {
                const sl_value *v = json_array_get(vs, i);
                time_t t = (time_t)json_integer_value(json_object_get(v, "created_at"));
                char when[32];
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime(&t));
                printf("%lld  %s UTC%s\n", (long long)json_integer_value(json_object_get(v, "version")),
                       when, i == 0 ? "  (current)" : "");
            }
        json_decref(vs);
    } else if (!key && !strcmp(verb, "list")) {
        sl_value *apps = NULL;
        if (!(rc = sl_store_app_list(s, &apps, &err) ? 1 : 0))
            for (size_t i = 0; i < json_array_size(apps); i++) {
                const sl_value *a = json_array_get(apps, i);
                printf("%s  %-14s %s  (version %lld)\n", json_string_value(json_object_get(a, "id")),
                       json_string_value(json_object_get(a, "mode")),
                       json_string_value(json_object_get(a, "name")),
                       (long long)json_integer_value(json_object_get(a, "version")));
            }
        json_decref(apps);
    } else if (!key && !strcmp(verb, "export") && opt(argc, argv, "--version")) {
        char *dsl = NULL;
        int v = atoi(opt(argc, argv, "--version"));
        if (!(rc = sl_store_app_get_version(s, arg, v, &dsl, &err) ? 1 : 0))
            fputs(dsl, stdout);
        free(dsl);
    } else if (!key && !strcmp(verb, "export")) {
        sl_buf out;
        sl_buf_init(&out, 0);
        bool zip;
        sl_config *cfg = sl_config_default();
        rc = sl_apps_export(s, arg, cfg, &out, &zip, &err) ? 1 : 0;
        sl_config_free(cfg);
        if (!rc) {
            if (zip && isatty(1)) {
                fprintf(stderr, "sluice app export: %s is a .zip bundle; redirect it to a file "
                        "(> app.zip)\n", arg);
                rc = 2;
            } else if (fwrite(out.data ? out.data : "", 1, out.len, stdout) != out.len) {
                rc = 1;
            }
        }
        sl_buf_release(&out);
    } else if (!key && !strcmp(verb, "delete")) {
        rc = sl_apps_delete(s, arg, &err) ? 1 : 0;
    } else if (key && !strcmp(verb, "create")) {
        char *k = NULL;
        if (!(rc = sl_store_key_create(s, arg, &k, &err) ? 1 : 0))
            printf("%s\n", k);
        free(k);
    } else if (key && !strcmp(verb, "list")) {
        sl_value *keys = NULL;
        if (!(rc = sl_store_key_list(s, arg, &keys, &err) ? 1 : 0))
            for (size_t i = 0; i < json_array_size(keys); i++) {
                const sl_value *k = json_array_get(keys, i);
                printf("%s  %s%s\n", json_string_value(json_object_get(k, "id")),
                       json_string_value(json_object_get(k, "hint")),
                       json_is_true(json_object_get(k, "revoked")) ? "  (revoked)" : "");
            }
        json_decref(keys);
    } else if (key && !strcmp(verb, "revoke")) {
        rc = sl_store_key_revoke(s, arg, &err) ? 1 : 0;
    } else {
        fprintf(stderr, "sluice app: unknown command '%s%s'\n%s", key ? "key " : "", verb,
                usage_app);
        rc = 2;
    }
    if (rc == 1 && err.msg)
        fprintf(stderr, "sluice app: %s\n", err.msg);
    sl_err_clear(&err);
    sl_store_close(s);
    return rc;
}
