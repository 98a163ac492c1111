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

#include "core/opt.h"
#include "engine/graph.h"
#include "engine/config.h"
#include "server/server.h"
#include "server/apps.h"
#include "store/store.h"
#include "cli/cli.h"

enum {
    O_LISTEN = 1, O_DATA, O_CONFIG, O_MAX_RUNS, O_RATE_LIMIT, O_LIMIT, O_DRAIN, O_MAX_CONN,
    O_MAX_CONN_IP, O_HEADER_TIMEOUT, O_IDLE_TIMEOUT, O_MAX_EVENT_BYTES, O_APP, O_VERSION,
    O_NO_CONSOLE, O_CONSOLE_DIR, O_WORKERS,
};

static const sl_opt serve_opts[] = {
    {"--listen", NULL, "ADDR:PORT", "default 127.0.0.1:5001", O_LISTEN},
    {"--data", "--store", "DIR|URL",
     "the store: a folder, sqlite:FOLDER or postgres://… (default\n"
     "$SLUICE_STORE, else $SLUICE_DATA, else the settings' store:,\n"
     "else ./sluice-data)", O_DATA},
    {"--config", NULL, "FILE", "model providers (see docs/llm.md)", O_CONFIG},
    {"--max-runs", NULL, "N", "concurrent runs per app (default 100)", O_MAX_RUNS},
    {"--rate-limit", NULL, "N", "run requests per second per app (default: no limit)",
     O_RATE_LIMIT},
    {"--limit", NULL, "NAME=VALUE", "a limit for every run (see sluice limits; also SLUICE_NAME)",
     O_LIMIT},
    {"--drain", NULL, "SECONDS",
     "on SIGTERM or Ctrl-C, how long runs may go on before they\n"
     "are stopped (default 30)", O_DRAIN},
    {"--max-connections", NULL, "N", "connections open at once, all clients (default 10000)",
     O_MAX_CONN},
    {"--max-connections-per-ip", NULL, "N",
     "connections open at once from one address (default 2048;\n"
     "raise it behind a proxy, where every client is one address)", O_MAX_CONN_IP},
    {"--header-timeout", NULL, "S",
     "seconds a connection may stay silent before a request's\n"
     "headers are in (default 10)", O_HEADER_TIMEOUT},
    {"--idle-timeout", NULL, "S", "seconds a request may stay silent once under way (default 60)",
     O_IDLE_TIMEOUT},
    {"--max-event-bytes", NULL, "N",
     "one run's stored event log, and its stream, in bytes (default\n"
     "64 MB); past it they end with an error event", O_MAX_EVENT_BYTES},
    {"--no-console", NULL, NULL, "no web console at / (the API stays)", O_NO_CONSOLE},
    {"--console-dir", NULL, "DIR",
     "serve the web console from this folder, read at each request\n"
     "(for working on it), not the files built into sluice", O_CONSOLE_DIR},
    {"--workers", NULL, "N",
     "on a shared store (PostgreSQL): run at most N runs here at once\n"
     "and queue the rest for any process with room (sluice worker);\n"
     "0: run none here, queue every run (default: no cap)", O_WORKERS},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_opt worker_opts[] = {
    {"--data", "--store", "URL",
     "the shared store: postgres://… (default $SLUICE_STORE, else\n"
     "the settings' store:)", O_DATA},
    {"--config", NULL, "FILE", "model providers and settings (see docs/llm.md)", O_CONFIG},
    {"--workers", NULL, "N", "runs at once (default: one per core)", O_WORKERS},
    {"--limit", NULL, "NAME=VALUE", "a limit for every run (see sluice limits; also SLUICE_NAME)",
     O_LIMIT},
    {"--drain", NULL, "SECONDS",
     "on SIGTERM or Ctrl-C, how long runs may go on before they\n"
     "are stopped (default 30)", O_DRAIN},
    {"--max-event-bytes", NULL, "N", "one run's stored event log, in bytes (default 64 MB)",
     O_MAX_EVENT_BYTES},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec worker_spec = {
    "sluice worker",
    "usage: sluice worker --store postgres://… [--workers N] [--config FILE]\n"
    "\n"
    "Runs the runs that servers queue on a shared store (PostgreSQL): it claims them\n"
    "(FOR UPDATE SKIP LOCKED) while it has room, runs each to its end with its events\n"
    "carried to every server, and holds a lease on each that it renews; a run whose\n"
    "worker is lost is failed, or run again when its app opts in\n"
    "(retry_on_worker_loss in the settings).  It serves no HTTP: servers started with\n"
    "`sluice serve --workers 0` queue every run for workers (docs/deploy.md).\n"
    "\n",
    worker_opts,
    "\n"
    "SIGTERM or Ctrl-C drains: no more runs are claimed, running ones may finish\n"
    "(--drain, 30 s), then they are stopped; a second SIGTERM or Ctrl-C stops them at\n"
    "once.\n",
    false,
};

static const sl_optspec serve_spec = {
    "sluice serve",
    "usage: sluice serve [--listen ADDR:PORT] [--data DIR] [--config FILE]\n"
    "\n"
    "Serves Dify's Service API (/v1: workflows/run, chat-messages, conversations,\n"
    "messages, parameters, info, logs, stop) and an admin API (/admin) for the apps in\n"
    "the store (--data).  Every run, its events and every conversation are kept\n"
    "there.  The web console is at / (sign in with the admin token: the file\n"
    "admin-token in a folder store).\n"
    "\n",
    serve_opts,
    "\n"
    "Add apps with `sluice app import FILE` and keys with `sluice app key create APP_ID`.\n"
    "SIGTERM or Ctrl-C stops accepting, lets runs finish (--drain, 30 s), then stops\n"
    "the rest; a second SIGTERM or Ctrl-C stops them at once.\n",
    false,
};

/* sluice app's verbs: each takes --data and what its table adds. */
#define DATA_OPT {"--data", "--store", "DIR|URL", "the store: a folder, sqlite:FOLDER or postgres://…\n" \
                  "(default $SLUICE_STORE, else $SLUICE_DATA, else ./sluice-data)", O_DATA}
static const sl_opt app_data_opts[] = {DATA_OPT, {NULL, NULL, NULL, NULL, 0}};
static const sl_opt app_import_opts[] = {
    {"--app", NULL, "APP_ID", "import as a new version of that app", O_APP},
    DATA_OPT,
    {NULL, NULL, NULL, NULL, 0},
};
static const sl_opt app_export_opts[] = {
    {"--version", NULL, "N", "that version's DSL", O_VERSION},
    DATA_OPT,
    {NULL, NULL, NULL, NULL, 0},
};

typedef struct {
    const char *name; /* "import", "key create" */
    const char *arg;  /* its one argument, or NULL */
    const sl_opt *opts;
    const char *help; /* or NULL */
} app_verb;

static const app_verb app_verbs[] = {
    {"import", "FILE", app_import_opts,
     "a .yml or .zip bundle; prints the new app's id (with --app: a new\n"
     "version of that app)"},
    {"list", NULL, app_data_opts, NULL},
    {"versions", "APP_ID", app_data_opts, NULL},
    {"export", "APP_ID", app_export_opts,
     "prints the DSL (a .zip for apps with files; --version N: that\n"
     "version's DSL)"},
    {"delete", "APP_ID", app_data_opts, NULL},
    {"key create", "APP_ID", app_data_opts, "prints a new key (app-…)"},
    {"key list", "APP_ID", app_data_opts, NULL},
    {"key revoke", "KEY_ID", app_data_opts, NULL},
};
#define N_VERBS (sizeof app_verbs / sizeof app_verbs[0])

/* The synopsis of one verb, from its table: "sluice app import FILE [--app APP_ID] ...". */
static void verb_synopsis(const app_verb *v, FILE *f)
{
    fprintf(f, "sluice app %s%s%s", v->name, v->arg ? " " : "", v->arg ? v->arg : "");
    for (const sl_opt *o = v->opts; o->name; o++)
        fprintf(f, " [%s%s%s]", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fputc('\n', f);
    for (const char *h = v->help; h && *h; h = strchr(h, '\n') ? strchr(h, '\n') + 1 : "")
        fprintf(f, "           %.*s\n", (int)strcspn(h, "\n"), h);
}

static void usage_app(FILE *f)
{
    for (size_t i = 0; i < N_VERBS; i++) {
        fputs(i ? "       " : "usage: ", f);
        verb_synopsis(&app_verbs[i], f);
    }
}

static sl_store *open_store(const char *dir);

int sl_cli_set_store(const char *cmd, const char **slot, const char *value)
{
    if (*slot) {
        fprintf(stderr, "%s: the store is given twice ('--data' and '--store' are one option): "
                        "give it once\n", cmd);
        return -1;
    }
    *slot = value;
    return 0;
}

const char *sl_cli_store_where(const char *given, const sl_config *cfg)
{
    /* the settings' files_dir, for the store that opens next (an
     * environment variable given by the user comes first) */
    const char *fd = sl_config_files_dir(cfg), *fe = getenv("SLUICE_FILES_DIR");
    if (fd && !(fe && *fe))
        setenv("SLUICE_FILES_DIR", fd, 1);
    if (given)
        return given;
    const char *e = getenv("SLUICE_STORE");
    if (e && *e)
        return e;
    e = getenv("SLUICE_DATA");
    if (e && *e)
        return e;
    e = sl_config_store(cfg);
    return e ? e : "sluice-data";
}

sl_store *sl_cli_open_store(const char *given, const sl_config *cfg)
{
    return open_store(sl_cli_store_where(given, cfg));
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

/* What the options of sluice serve set. */
typedef struct {
    sl_server_opts *o;
    const char *config, *data;
} serve_args;

static int serve_opt(void *ud, int id, const char *v)
{
    serve_args *a = ud;
    sl_server_opts *o = a->o;
    char *end;
    switch (id) {
    case SL_OPT_ARG:
        fprintf(stderr, "sluice serve: unexpected argument '%s' (see sluice serve --help)\n", v);
        return -1;
    case O_LISTEN: o->listen = v; return 0;
    case O_DATA: return sl_cli_set_store("sluice serve", &a->data, v);
    case O_CONFIG: a->config = v; return 0;
    case O_MAX_RUNS: o->max_runs_per_app = atoi(v); return 0;
    case O_RATE_LIMIT: o->rate_limit = atof(v); return 0;
    case O_LIMIT: {
        sl_err le = {0};
        if (sl_limits_set(&o->limits, v, &le) < 0) {
            fprintf(stderr, "sluice serve: --limit: %s\n", le.msg);
            sl_err_clear(&le);
            return -1;
        }
        return 0;
    }
    case O_DRAIN:
        o->drain_s = strtod(v, &end);
        if (*end || !(o->drain_s >= 0 && o->drain_s <= 86400)) {
            fprintf(stderr, "sluice serve: --drain '%s': give seconds from 0 to 86400\n", v);
            return -1;
        }
        return 0;
    case O_NO_CONSOLE: o->no_console = true; return 0;
    case O_WORKERS: {
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || end == v || *end || n < 0 || n > 100000) {
            fprintf(stderr, "%s: --workers '%s': give a whole number from 0 to 100000\n",
                    o->worker_only ? "sluice worker" : "sluice serve", v);
            return -1;
        }
        if (n == 0 && o->worker_only) {
            fprintf(stderr, "sluice worker: --workers 0 would run nothing; give 1 or more\n");
            return -1;
        }
        o->workers = (int)n;
        return 0;
    }
    case O_CONSOLE_DIR:
        if (access(v, R_OK | X_OK)) {
            fprintf(stderr, "sluice serve: --console-dir '%s': %s (give a folder holding "
                            "index.html)\n", v, strerror(errno));
            return -1;
        }
        o->console_dir = v;
        return 0;
    case O_MAX_CONN:
        return positive("--max-connections", v, &o->max_connections);
    case O_MAX_CONN_IP:
        return positive("--max-connections-per-ip", v, &o->max_connections_per_ip);
    case O_HEADER_TIMEOUT:
        return positive("--header-timeout", v, &o->header_timeout_s);
    case O_IDLE_TIMEOUT:
        return positive("--idle-timeout", v, &o->idle_timeout_s);
    case O_MAX_EVENT_BYTES: {
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || end == v || *end || v[0] == '-' || n < 4096 || n > (1ull << 30)) {
            fprintf(stderr, "sluice serve: --max-event-bytes '%s': give a number of bytes "
                            "from 4096 to 1073741824\n", v);
            return -1;
        }
        o->max_event_bytes = (size_t)n;
        return 0;
    }
    }
    return -1;
}

/* sluice serve and sluice worker: one server, with or without HTTP. */
static int serve_main(int argc, char **argv, bool worker)
{
    sl_server_opts o;
    sl_server_opts_init(&o);
    sl_err lerr = {0};
    if (sl_limits_from_env(&o.limits, &lerr) < 0) {  /* SLUICE_*; --limit overrides */
        fprintf(stderr, "%s: %s\n", worker ? "sluice worker" : "sluice serve", lerr.msg);
        sl_err_clear(&lerr);
        return 2;
    }
    const char *me = worker ? "sluice worker" : "sluice serve";
    if (worker) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        o.worker_only = true;
        o.workers = cpus < 1 ? 1 : (int)cpus;
    }
    serve_args sa = {.o = &o};
    int prc = sl_opt_parse(worker ? &worker_spec : &serve_spec, argc, argv, 1, serve_opt, &sa,
                           NULL);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? 0 : 2;
    const char *config = sa.config;
    sl_err err = {0};
    sl_config *cfg;
    if (sl_config_load(config, &cfg, &err)) {
        fprintf(stderr, "%s: %s\n", me, err.msg);
        sl_err_clear(&err);
        return 2;
    }
    o.config = cfg;
    const char *dir = sl_cli_store_where(sa.data, cfg);
    /* runs are queued only on a store processes share: said before a
     * folder store would be made for nothing */
    if ((worker || o.workers >= 0) && strncmp(dir, "postgres://", 11) &&
        strncmp(dir, "postgresql://", 13)) {
        fprintf(stderr, "%s: %s%s is one process's store (SQLite): runs are queued only on a "
                        "store processes share; give --store postgres://…%s\n", me,
                worker ? "" : "--workers: ", dir, worker ? "" : ", or leave out --workers");
        sl_config_free(cfg);
        return 2;
    }
    sl_store *s = open_store(dir);
    if (!s) {
        sl_config_free(cfg);
        return 1;
    }
    char *token = NULL;
    bool created = false;
    if (sl_store_admin_token(s, &token, &created, &err)) {
        fprintf(stderr, "%s: %s\n", me, err.msg);
        sl_store_close(s);
        sl_config_free(cfg);
        return 1;
    }
    if (created && strstr(dir, "://"))
        fprintf(stderr, "sluice serve: first start: a new admin token, kept in the database "
                        "(`sluice store admin-token` prints it)\n");
    else if (created)
        fprintf(stderr, "sluice serve: first start: the admin token is in %s/admin-token\n", dir);
    free(token);
    int rc = sl_server_run(s, &o, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", me, err.msg);
    sl_err_clear(&err);
    sl_store_close(s);
    sl_config_free(cfg);
    return rc ? 1 : 0;
}

int sl_cli_serve(int argc, char **argv)
{
    return serve_main(argc, argv, false);
}

int sl_cli_worker(int argc, char **argv)
{
    return serve_main(argc, argv, true);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 50u << 20);  /* a bundle may be 50 MB; a DSL 10 MB (checked on load) */
    sl_buf_add_file(&b, f);
    if (f != stdin)
        fclose(f);
    if (b.toobig) {
        sl_buf_release(&b);
        return NULL;
    }
    *len = b.len;
    return sl_buf_detach(&b);
}

/* What one verb's words set. */
typedef struct {
    const app_verb *verb;
    const char *arg, *data, *app, *version;
} app_args;

static int app_opt(void *ud, int id, const char *v)
{
    app_args *a = ud;
    switch (id) {
    case O_DATA: return sl_cli_set_store("sluice app", &a->data, v);
    case O_APP: a->app = v; return 0;
    case O_VERSION: a->version = v; return 0;
    }
    if (a->verb->arg && !a->arg) {
        a->arg = v;
        return 0;
    }
    fprintf(stderr, "sluice app %s: unexpected argument '%s' (see sluice app %s --help)\n",
            a->verb->name, v, a->verb->name);
    return -1;
}

int sl_cli_app(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_app(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    bool key = !strcmp(sub, "key");
    const char *verb = key ? (argc > 2 ? argv[2] : "") : sub;
    app_args aa = {0};
    for (size_t i = 0; i < N_VERBS; i++)
        if (!strncmp(app_verbs[i].name, "key ", 4) == key &&
            !strcmp(app_verbs[i].name + (key ? 4 : 0), verb))
            aa.verb = &app_verbs[i];
    if (!aa.verb) {
        fprintf(stderr, "sluice app: unknown command '%s%s'\n", key ? "key " : "", verb);
        usage_app(stderr);
        return 2;
    }
    /* Every word after the verb: its one argument and the options of its
     * table; anything else is refused, never ignored. */
    char cmd[64], *head = NULL;
    size_t hl = 0;
    snprintf(cmd, sizeof cmd, "sluice app %s", aa.verb->name);
    FILE *hf = open_memstream(&head, &hl);
    if (hf) {
        fputs("usage: ", hf);
        verb_synopsis(aa.verb, hf);
        fputs("\noptions:\n", hf);
        fclose(hf);
    }
    sl_optspec spec = {cmd, head ? head : "", aa.verb->opts, NULL, false};
    int prc = sl_opt_parse(&spec, argc, argv, key ? 3 : 2, app_opt, &aa, NULL);
    free(head);
    if (prc != SL_OPT_OK)
        return prc == SL_OPT_HELP ? 0 : 2;
    const char *arg = aa.arg;
    if (aa.verb->arg && !arg) {
        fprintf(stderr, "sluice app: %s needs an argument\n", aa.verb->name);
        usage_app(stderr);
        return 2;
    }
    /* the settings (sluice.yml) may say where the store is */
    sl_config *settings = NULL;
    sl_err cerr = {0};
    if (sl_config_load(NULL, &settings, &cerr)) {
        fprintf(stderr, "sluice app: %s\n", cerr.msg);
        sl_err_clear(&cerr);
        return 2;
    }
    sl_store *s = open_store(sl_cli_store_where(aa.data, settings));
    sl_config_free(settings);
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
        const char *update = aa.app;
        sl_value *info = NULL;
        sl_config *cfg = sl_config_default();
        sl_apps_serve_workflows(s);
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
    } else if (!key && !strcmp(verb, "export") && aa.version) {
        char *dsl = NULL;
        int v = atoi(aa.version);
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
        fprintf(stderr, "sluice app: unknown command '%s%s'\n", key ? "key " : "", verb);
        usage_app(stderr);
        rc = 2;
    }
    if (rc == 1 && err.msg)
        fprintf(stderr, "sluice app: %s\n", err.msg);
    sl_err_clear(&err);
    sl_store_close(s);
    return rc;
}
