/*
 * store_pg — the PostgreSQL backend (store/pg.c) against a real server:
 * every operation it keeps, as the SQLite backend keeps it (tests/unit/
 * store.c); two stores on one database seeing each other's writes;
 * migrations applied once when opens race; blobs in parts read back
 * byte for byte; a connection the server ended, and the server stopped
 * and started again; knowledge bases and apps' files refused with why;
 * no error showing the location's password.
 *
 * SLUICE_TEST_PG: a libpq URI of a database the test may make schemas in
 * (tests/cli/store_pg.sh starts a cluster of its own and sets it); without
 * it, the test skips.  SLUICE_TEST_PG_STOP and SLUICE_TEST_PG_START, when
 * set, are shell commands that stop and start that server (the restart
 * checks skip without them).  Each run works in a schema of its own,
 * dropped at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dl.h"
#include "server/apps.h"
#include "store/store.h"
#include "tap.h"
#include "util.h"

/* libpq for the test's own statements (schemas, ending connections) */
#define T_FNS(X)                                                                                  \
    X(PQconnectdb) X(PQexec) X(PQresultStatus) X(PQclear) X(PQfinish) X(PQstatus)                \
    X(PQerrorMessage) X(PQgetvalue) X(PQntuples) X(PQresultErrorMessage)
#define T_PTR(f) static __typeof__(&f) t_##f;
T_FNS(T_PTR)
#undef T_PTR
#define T_SYM(f) {#f, (void **)&t_##f},
static const sl_dl_sym t_syms[] = {T_FNS(T_SYM){NULL, NULL}};
#undef T_SYM
static const char *const t_names[] = {"libpq.so.5", NULL};
static sl_dl_lib t_lib = {.what = "libpq", .sonames = t_names, .package = "libpq5",
                          .syms = t_syms};

static const char *base_url;   /* SLUICE_TEST_PG */
static char *url;              /* it, in the test's schema */
static char schema[64];

/* A statement of the test's own; the first value of its first row (heap),
 * "" when none, NULL when it failed. */
static char *sql(const char *u, const char *q)
{
    PGconn *c = t_PQconnectdb(u);
    if (t_PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "test: cannot connect: %s", t_PQerrorMessage(c));
        t_PQfinish(c);
        return NULL;
    }
    PGresult *r = t_PQexec(c, q);
    char *v = NULL;
    ExecStatusType st = t_PQresultStatus(r);
    if (st == PGRES_TUPLES_OK)
        v = sl_xstrdup(t_PQntuples(r) ? t_PQgetvalue(r, 0, 0) : "");
    else if (st == PGRES_COMMAND_OK)
        v = sl_xstrdup("");
    else
        fprintf(stderr, "test: %s: %s", q, t_PQresultErrorMessage(r));
    t_PQclear(r);
    t_PQfinish(c);
    return v;
}

static bool sql_ok(const char *u, const char *q)
{
    char *v = sql(u, q);
    free(v);
    return v != NULL;
}

/* The base URL with search_path set to schema s (heap). */
static char *url_in(const char *s)
{
    return sl_xasprintf("%s%coptions=-csearch_path%%3D%s", base_url,
                        strchr(base_url, '?') ? '&' : '?', s);
}

static sl_store *open_ok(const char *where, const char *what)
{
    sl_store *s = NULL;
    int interrupted = -1;
    sl_err err = {0};
    int rc = sl_store_open(where, &s, &interrupted, &err);
    CHECK(rc == 0 && s && interrupted == 0, "%s opens: %s", what, err.msg ? err.msg : "");
    sl_err_clear(&err);
    return s;
}

/* ---- opening, migrations, schemes ---- */

typedef struct {
    const char *where;
    sl_store *s;
    int rc;
    char *msg;
} opener;

static void *open_main(void *arg)
{
    opener *o = arg;
    int interrupted;
    sl_err err = {0};
    o->rc = sl_store_open(o->where, &o->s, &interrupted, &err);
    o->msg = err.msg ? sl_xstrdup(err.msg) : NULL;
    sl_err_clear(&err);
    return NULL;
}

static void test_open(void)
{
    /* migrations: four processes' worth of opens at once on an empty schema */
    enum { N = 4 };
    opener o[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        o[i] = (opener){.where = url};
        pthread_create(&th[i], NULL, open_main, &o[i]);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += o[i].rc == 0;
        if (o[i].rc)
            fprintf(stderr, "open %d: %s\n", i, o[i].msg ? o[i].msg : "");
        free(o[i].msg);
        sl_store_close(o[i].s);
    }
    CHECK(ok == N, "%d stores opened at once on an empty database all open (%d did)", N, ok);
    char *q = sl_xasprintf("SELECT count(*) || ':' || max(version) FROM %s.sluice_migrations",
                           schema);
    char *v = sql(base_url, q);
    CHECK(v && !strcmp(v, "5:16"),
          "… and each migration was applied once, the baseline (12), 13 to 16: %s", v ? v : "(none)");
    free(v);
    sl_store *s = open_ok(url, "the migrated database");
    sl_store_close(s);
    v = sql(base_url, q);
    CHECK(v && !strcmp(v, "5:16"), "opening again applies nothing: %s", v ? v : "(none)");
    free(v);
    free(q);
    char *tq = sl_xasprintf("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM"
                            " information_schema.tables WHERE table_schema='%s'",
                            schema);
    v = sql(base_url, tq);
    const char *want[] = {"app_keys", "app_versions", "apps", "blobs", "conversations", "files",
                          "kb", "kb_chunks", "kb_dead", "kb_docs", "kb_pages", "kb_segs", "messages",
                          "meta", "node_executions", "run_log", "runs", "tool_bindings"};
    bool all = v != NULL;
    for (size_t i = 0; all && i < sizeof want / sizeof *want; i++)
        all = strstr(v, want[i]) != NULL;
    CHECK(all, "SQLite's tables (and the node_executions view) are there: %s", v ? v : "(none)");
    free(v);
    free(tq);

    /* both schemes reach it, in any case */
    const char *rest = strchr(url, ':');
    char *as_postgres = sl_xasprintf("POSTGRES%s", rest);
    s = open_ok(as_postgres, "the same database as POSTGRES://…");
    sl_store_close(s);
    free(as_postgres);

    /* a schema newer than this sluice */
    char *q2 = sl_xasprintf("INSERT INTO %s.sluice_migrations VALUES(999, 0)", schema);
    sql_ok(base_url, q2);
    sl_err err = {0};
    int interrupted;
    s = NULL;
    CHECK(sl_store_open(url, &s, &interrupted, &err) == -1 && !s &&
              err.code == SL_EUNSUPPORTED && err.msg && strstr(err.msg, "newer"),
          "a database at a newer schema is refused: %s", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    free(q2);
    q2 = sl_xasprintf("DELETE FROM %s.sluice_migrations WHERE version=999", schema);
    sql_ok(base_url, q2);
    free(q2);

    CHECK(sl_store_open("postgres:", &s, &interrupted, &err) == -1 && err.code == SL_EINVAL &&
              err.msg && strstr(err.msg, "postgres://"),
          "postgres: alone names no location: %s", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
}

/* No message shows the password, whatever failed. */
static void test_password_hidden(void)
{
    static const struct {
        const char *where, *secret;
        sl_errcode code;
    } cases[] = {
        {"postgres://sluice:hunter2secret@127.0.0.1:1/db", "hunter2secret", SL_EIO},
        {"postgresql://sluice@127.0.0.1:1/db?password=hunter2secret", "hunter2secret", SL_EIO},
        {"postgres://sluice:hunter%zz2secret@127.0.0.1:1/db", "hunter", SL_EINVAL},
        {"postgres://sluice:hunter2secret@127.0.0.1:1/db?port=x1", "hunter2secret", SL_EIO},
        {"postgres:host=127.0.0.1 password=hunter2secret", "hunter2secret", SL_EINVAL},
        {"postgres://sluice:%68unter2secret@127.0.0.1:1/db?bogus=1", "unter2secret", SL_EINVAL},
        {"postgres://u:first1secret@127.0.0.1:1/db?password=second2&password=third3", "first1",
         SL_EIO},
        {"postgres://u:first1secret@127.0.0.1:1/db?password=second2&password=third3", "second2",
         SL_EIO},
        {"postgres://u@127.0.0.1:1/db?password=second2&password=third3&x=1", "third3", SL_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_store *s = NULL;
        int interrupted;
        sl_err err = {0};
        int rc = sl_store_open(cases[i].where, &s, &interrupted, &err);
        CHECK(rc == -1 && !s && err.msg && !strstr(err.msg, cases[i].secret),
              "a failed open of location %zu does not show its password: %s", i,
              err.msg ? err.msg : "(none)");
        CHECK(err.code == cases[i].code, "… and fails as %s (is %s)",
              sl_errcode_name(cases[i].code), sl_errcode_name(err.code));
        sl_err_clear(&err);
    }
}

/* ---- apps, keys, tool bindings, the admin token ---- */

static void test_apps(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    char *app = NULL, *dsl = NULL;
    sl_value *info = NULL, *list = NULL;
    int ver = 0;
    CHECK(sl_store_app_add(s, "first", "workflow", "app: {v: 1}", &app, &err) == 0 && app &&
              sl_file_id_ok(app),
          "an app is added: %s", err.msg ? err.msg : app);
    CHECK(sl_store_app_get(s2, app, &dsl, &info, &err) == 0 && dsl &&
              !strcmp(dsl, "app: {v: 1}"),
          "another store on the database reads it");
    char *shown = show(info);
    CHECK(info && !strcmp(json_string_value(json_object_get(info, "name")), "first") &&
              json_integer_value(json_object_get(info, "version")) == 1 &&
              json_integer_value(json_object_get(info, "created_at")) > 0,
          "… with its name, version 1 and time: %s", shown);
    free(shown);
    json_decref(info);
    free(dsl);
    long long kv = sl_store_keys_version(s2);
    CHECK(sl_store_app_update(s, app, "second", "advanced-chat", "app: {v: 2}", &ver, &err) == 0 &&
              ver == 2,
          "an update makes version %d", ver);
    CHECK(sl_store_keys_version(s2) != kv, "… and the other store sees keys_version change");
    CHECK(sl_store_app_get(s2, app, &dsl, &info, &err) == 0 && !strcmp(dsl, "app: {v: 2}") &&
              !strcmp(json_string_value(json_object_get(info, "mode")), "advanced-chat"),
          "… and reads the new DSL and mode");
    free(dsl);
    json_decref(info);
    sl_value *vs = NULL;
    CHECK(sl_store_app_versions(s, app, &vs, &err) == 0 && json_array_size(vs) == 2 &&
              json_integer_value(json_object_get(json_array_get(vs, 0), "version")) == 2,
          "versions are listed newest first");
    json_decref(vs);
    CHECK(sl_store_app_get_version(s, app, 1, &dsl, &err) == 0 && !strcmp(dsl, "app: {v: 1}"),
          "version 1 keeps its DSL");
    free(dsl);
    char *app2 = NULL;
    sl_store_app_add(s, "other", "workflow", "app: {}", &app2, &err);
    CHECK(sl_store_app_list(s2, &list, &err) == 0 && json_array_size(list) >= 2,
          "apps are listed (%zu)", json_array_size(list));
    json_decref(list);

    /* what does not exist is SL_ENOTFOUND */
    CHECK(sl_store_app_get(s, "nope", &dsl, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "get of a missing app: not-found (%s)", err.msg ? err.msg : "");
    CHECK(sl_store_app_update(s, "nope", "a", "workflow", "x", &ver, &err) == -1 &&
              err.code == SL_ENOTFOUND,
          "update of a missing app: not-found");
    CHECK(sl_store_app_versions(s, "nope", &vs, &err) == -1 && err.code == SL_ENOTFOUND,
          "versions of a missing app: not-found");
    CHECK(sl_store_app_get_version(s, app, 99, &dsl, &err) == -1 && err.code == SL_ENOTFOUND,
          "a missing version: not-found");
    CHECK(sl_store_app_delete(s, "nope", &err) == -1 && err.code == SL_ENOTFOUND,
          "delete of a missing app: not-found");
    sl_err_clear(&err);

    /* keys */
    char *key = NULL, *got = NULL;
    CHECK(sl_store_key_create(s, app, &key, &err) == 0 && key && strlen(key) == 52 &&
              !strncmp(key, "app-", 4),
          "a key is made: %s", key ? key : err.msg);
    CHECK(sl_store_key_create(s, "nope", &got, &err) == -1 && !got && err.code == SL_ENOTFOUND,
          "no key for a missing app");
    sl_err_clear(&err);
    got = sl_store_key_app(s2, key);
    CHECK(got && !strcmp(got, app), "the other store finds the key's app");
    free(got);
    got = sl_store_key_app(s2, "app-nope");
    CHECK(!got, "an unknown key opens nothing");
    sl_value *keys = NULL;
    CHECK(sl_store_key_list(s, app, &keys, &err) == 0 && json_array_size(keys) == 1,
          "the key is listed");
    const char *kid = json_string_value(json_object_get(json_array_get(keys, 0), "id"));
    const char *hint = json_string_value(json_object_get(json_array_get(keys, 0), "hint"));
    CHECK(hint && strlen(hint) == 11 && !strcmp(key + strlen(key) - 4, hint + 7),
          "… by a hint, not the key: %s", hint ? hint : "(none)");
    kv = sl_store_keys_version(s);
    CHECK(kid && sl_store_key_revoke(s2, kid, &err) == 0, "the other store revokes it");
    CHECK(sl_store_keys_version(s) != kv, "… keys_version changes for this one");
    got = sl_store_key_app(s, key);
    CHECK(!got, "… and the key opens nothing");
    free(got);
    CHECK(kid && sl_store_key_revoke(s, kid, &err) == -1 && err.code == SL_ENOTFOUND,
          "revoking it again: not-found");
    sl_err_clear(&err);
    json_decref(keys);
    keys = NULL;
    CHECK(sl_store_key_list(s, app, &keys, &err) == 0 &&
              json_is_true(json_object_get(json_array_get(keys, 0), "revoked")),
          "… and it is listed as revoked");
    json_decref(keys);
    free(key);

    /* dataset keys: no app's, their scope's own */
    char *dk = NULL;
    CHECK(sl_store_dataset_key_create(s, &dk, &err) == 0 && dk && !strncmp(dk, "dataset-", 8),
          "a dataset key is made");
    CHECK(sl_store_dataset_key_ok(s2, dk), "… it opens the Knowledge API");
    got = sl_store_key_app(s2, dk);
    CHECK(!got, "… and no app");
    free(got);
    free(dk);

    /* deleting an app revokes its keys */
    char *k2 = NULL;
    sl_store_key_create(s, app2, &k2, &err);
    kv = sl_store_keys_version(s2);
    CHECK(sl_store_app_delete(s, app2, &err) == 0, "an app is deleted");
    CHECK(sl_store_keys_version(s2) != kv, "… keys_version changes");
    got = sl_store_key_app(s2, k2);
    CHECK(!got && sl_store_app_get(s2, app2, NULL, NULL, &err) == -1,
          "… its key opens nothing and it is gone");
    sl_err_clear(&err);
    free(got);
    free(k2);

    /* tool bindings */
    char *spec = NULL;
    CHECK(sl_store_tools_get(s, "", &spec, &err) == 0 && !spec, "no tool bindings at first");
    kv = sl_store_keys_version(s2);
    CHECK(sl_store_tools_set(s, app, "{\"web\": {}}", &err) == 0, "an app's bindings are set");
    CHECK(sl_store_keys_version(s2) != kv, "… and servers reload (keys_version)");
    CHECK(sl_store_tools_get(s2, app, &spec, &err) == 0 && spec &&
              !strcmp(spec, "{\"web\": {}}"),
          "… the other store reads them");
    free(spec);
    spec = NULL;
    sl_store_tools_set(s, app, "{\"x\": 1}", &err);
    CHECK(sl_store_tools_get(s, app, &spec, &err) == 0 && spec && !strcmp(spec, "{\"x\": 1}"),
          "setting them again replaces them");
    free(spec);
    spec = NULL;
    CHECK(sl_store_tools_set(s, app, NULL, &err) == 0 &&
              sl_store_tools_get(s, app, &spec, &err) == 0 && !spec,
          "… and NULL removes them");

    /* the admin token: made once, the same for every store */
    char *t1 = NULL, *t2 = NULL;
    bool c1 = false, c2 = true;
    CHECK(sl_store_admin_token(s, &t1, &c1, &err) == 0 && t1 && c1 && strlen(t1) == 68 &&
              !strncmp(t1, "adm-", 4),
          "the admin token is made (adm- and 64 hex digits)");
    CHECK(sl_store_admin_token(s2, &t2, &c2, &err) == 0 && t2 && !c2 && !strcmp(t1, t2),
          "… the other store gets the same one, not made now");
    CHECK(t1 && sl_store_admin_ok(s2, t1) && !sl_store_admin_ok(s2, "adm-nope"),
          "… and it (alone) is the admin's");
    free(t1);
    free(t2);

    /* apps' bundle files are in the folder every machine mounts */
    unsetenv("SLUICE_FILES_DIR");
    char *dir = sl_store_app_dir(s, app, &err);
    CHECK(!dir && err.code == SL_EUNSUPPORTED && err.msg && strstr(err.msg, "files_dir"),
          "without files_dir, an app's files folder is refused, naming it: %s",
          err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    char fdir[] = "/tmp/sluice-files-XXXXXX";
    CHECK(mkdtemp(fdir) != NULL, "a folder for files_dir");
    setenv("SLUICE_FILES_DIR", fdir, 1);
    dir = sl_store_app_dir(s, app, &err);
    char *want = sl_xasprintf("%s/apps/%s", fdir, app);
    CHECK(dir && !strcmp(dir, want), "with files_dir, an app's files are FOLDER/apps/ID: %s",
          dir ? dir : err.msg);
    free(dir);
    free(want);
    char *apps = sl_xasprintf("%s/apps", fdir);
    rmdir(apps);
    rmdir(fdir);
    free(apps);
    unsetenv("SLUICE_FILES_DIR");
    dir = sl_store_app_dir(s, "..", &err);
    CHECK(!dir && err.code == SL_EINVAL, "… and '..' is still no app id");
    sl_err_clear(&err);
    free(app);
    free(app2);
}

/* A plain DSL app goes through apps.c's import, update, load, export and
 * delete without the files folder the store does not have. */
static void test_apps_dsl(sl_store *s)
{
    static const char dsl[] =
        "app: {mode: workflow, name: plain}\n"
        "kind: app\n"
        "version: 0.1.3\n"
        "workflow:\n"
        "  graph:\n"
        "    nodes:\n"
        "    - {id: start, data: {type: start, title: Start, variables: []}}\n"
        "    - {id: end, data: {type: end, title: End, outputs: []}}\n"
        "    edges:\n"
        "    - {source: start, target: end}\n";
    sl_err err = {0};
    sl_diag diag;
    sl_diag_init(&diag);
    char *id = NULL;
    sl_value *info = NULL;
    int rc = sl_apps_import(s, dsl, strlen(dsl), "plain.yml", NULL, &id, &info, &diag, &err);
    CHECK(rc == 0 && id, "a plain .yml app is imported: %s", err.msg ? err.msg : "");
    json_decref(info);
    info = NULL;
    sl_err_clear(&err);
    rc = id ? sl_apps_update(s, id, dsl, strlen(dsl), "plain.yml", NULL, &info, &diag, &err) : -1;
    CHECK(rc == 0 && json_integer_value(json_object_get(info, "version")) == 2,
          "… updated to version 2: %s", err.msg ? err.msg : "");
    json_decref(info);
    sl_err_clear(&err);
    sl_graph g;
    rc = id ? sl_apps_load(s, id, NULL, &g, NULL, &err) : -1;
    CHECK(rc == 0 && !g.app_dir, "… loaded (without a files folder): %s", err.msg ? err.msg : "");
    if (!rc)
        sl_graph_release(&g);
    sl_err_clear(&err);
    sl_buf out;
    sl_buf_init(&out, 0);
    bool zip = true;
    rc = id ? sl_apps_export(s, id, NULL, &out, &zip, &err) : -1;
    CHECK(rc == 0 && !zip && out.len == strlen(dsl), "… exported as its YAML: %s",
          err.msg ? err.msg : "");
    sl_buf_release(&out);
    sl_err_clear(&err);
    CHECK(id && sl_apps_delete(s, id, &err) == 0, "… and deleted");
    sl_err_clear(&err);
    sl_diag_release(&diag);
    free(id);
}

/* ---- runs ---- */

static void test_runs(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    char *app = NULL, *other = NULL, *conv = NULL;
    sl_store_app_add(s, "runs", "advanced-chat", "app: {}", &app, &err);
    sl_store_app_add(s, "runs2", "workflow", "app: {}", &other, &err);
    sl_store_conversation(s, app, "dave", NULL, "hello", &conv, &err);
    sl_store_message_add(s, "msg-1", conv, app, "what is up?", "run-0", &err);
    sl_value *inputs = J("{\"q\": \"x\", \"n\": 2}");
    sl_run_row r = {.id = "run-0", .app_id = app, .task_id = "task-0", .user = "dave",
                    .conversation_id = conv, .message_id = "msg-1", .inputs = inputs,
                    .app_version = 3};
    CHECK(sl_store_start_run(s, &r, &err) == 0, "a run starts: %s", err.msg ? err.msg : "");
    sl_value *v = sl_store_run_get(s2, app, "run-0");
    CHECK(v && !strcmp(json_string_value(json_object_get(v, "status")), "running") &&
              json_is_null(json_object_get(v, "finished_at")) &&
              json_integer_value(json_object_get(json_object_get(v, "inputs"), "n")) == 2,
          "the other store reads it running, with its inputs");
    CHECK(v && !json_object_get(v, "user"), "… without the admin's fields for an app");
    json_decref(v);
    CHECK(!sl_store_run_events(s2, app, "run-0"), "… no events while it runs");
    v = sl_store_run_get(s2, other, "run-0");
    CHECK(!v, "… and another app does not see it");
    json_decref(v);
    char *events = sl_xstrdup("[{\"event\":\"node_finished\",\"data\":{\"id\":\"e1\",\"node_id\":"
                              "\"n1\",\"index\":1,\"elapsed_time\":0.5,\"outputs\":{\"a\":1}}},"
                              "{\"event\":\"workflow_finished\",\"data\":{}}]");
    sl_value *outputs = J("{\"answer\": \"fine\"}");
    CHECK(sl_store_finish_run(s, "run-0", "succeeded", outputs, NULL, 1.25, 42, 3, 1700000000,
                              "all fine", NULL, events, &err) == 0,
          "it finishes with its events and answer: %s", err.msg ? err.msg : "");
    json_decref(outputs);
    v = sl_store_run_get(s2, NULL, "run-0");
    char *shown = show(v);
    CHECK(v && !strcmp(json_string_value(json_object_get(v, "status")), "succeeded") &&
              json_real_value(json_object_get(v, "elapsed_time")) == 1.25 &&
              json_integer_value(json_object_get(v, "total_tokens")) == 42 &&
              json_integer_value(json_object_get(v, "total_steps")) == 3 &&
              json_integer_value(json_object_get(v, "finished_at")) == 1700000000 &&
              !strcmp(json_string_value(json_object_get(json_object_get(v, "outputs"), "answer")),
                      "fine"),
          "… the other store reads its end: %s", shown);
    free(shown);
    CHECK(v && !strcmp(json_string_value(json_object_get(v, "user")), "dave") &&
              json_integer_value(json_object_get(v, "app_version")) == 3 &&
              !strcmp(json_string_value(json_object_get(v, "conversation_id")), conv) &&
              !strcmp(json_string_value(json_object_get(v, "message_id")), "msg-1") &&
              !strcmp(json_string_value(json_object_get(v, "query")), "what is up?"),
          "… and, for the admin, who ran it, its version, conversation, message and query");
    json_decref(v);
    sl_value *ev = sl_store_run_events(s2, app, "run-0");
    CHECK(json_array_size(ev) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(ev, 0), "event")),
                      "node_finished"),
          "its events are kept, in order");
    json_decref(ev);
    sl_value *h = sl_store_history(s2, conv, 10);
    CHECK(json_array_size(h) == 1 &&
              !strcmp(json_string_value(json_object_get(json_array_get(h, 0), "answer")),
                      "all fine"),
          "the answer is the message's: the conversation's history has it");
    json_decref(h);
    char *q = sl_xasprintf("SELECT node_id || ':' || step || ':' || elapsed FROM"
                           " %s.node_executions WHERE run_id='run-0'",
                           schema);
    char *ne = sql(base_url, q);
    CHECK(ne && !strcmp(ne, "n1:1:0.5"), "node_executions reads the node from the events: %s",
          ne ? ne : "(none)");
    free(ne);
    free(q);

    /* the admin's list: filters and a cursor, newest first */
    enum { N = 7 };
    for (int i = 1; i <= N; i++) {
        char id[16];
        snprintf(id, sizeof id, "run-%d", i);
        sl_run_row ri = {.id = id, .app_id = i % 2 ? other : app, .task_id = id,
                         .user = i <= 3 ? "erin" : "frank", .inputs = inputs};
        sl_store_start_run(s, &ri, &err);
        if (i % 3 == 0)
            sl_store_finish_run(s, id, "failed", NULL, "broke", 0.1, 0, 1, 1700000001, NULL, NULL,
                                NULL, &err);
    }
    sl_runs_filter f = {.limit = 3};
    size_t seen = 0, pages = 0;
    bool sorted = true, dup = false;
    char last[64] = "";
    long long last_at = 0;
    char *ids[16] = {0};
    for (;;) {
        sl_value *page = sl_store_runs_list(s2, &f);
        if (!page)
            break;
        pages++;
        sl_value *data = json_object_get(page, "data"), *row;
        size_t i;
        json_array_foreach(data, i, row) {
            const char *id = json_string_value(json_object_get(row, "id"));
            long long at = json_integer_value(json_object_get(row, "created_at"));
            if (last[0] && (at > last_at || (at == last_at && strcmp(id, last) >= 0)))
                sorted = false;
            for (size_t k = 0; k < seen && k < 16; k++)
                if (!strcmp(ids[k], id))
                    dup = true;
            if (seen < 16)
                ids[seen] = sl_xstrdup(id);
            seen++;
            snprintf(last, sizeof last, "%s", id);
            last_at = at;
        }
        const char *next = json_string_value(json_object_get(page, "next"));
        bool more = json_is_true(json_object_get(page, "has_more"));
        if (!more || !next || pages > 10) {
            CHECK(!more && json_is_null(json_object_get(page, "next")),
                  "the last page says there is no more");
            json_decref(page);
            break;
        }
        /* the cursor: "created_at:id" */
        static char cur_id[64];
        f.before_at = strtoll(next, NULL, 10);
        snprintf(cur_id, sizeof cur_id, "%s", strchr(next, ':') + 1);
        f.before_id = cur_id;
        json_decref(page);
    }
    CHECK(seen == N + 1 && pages == 3 && sorted && !dup,
          "runs_list pages through all %d runs 3 at a time, newest first, each once (%zu runs, "
          "%zu pages)",
          N + 1, seen, pages);
    for (size_t k = 0; k < 16; k++)
        free(ids[k]);
    f = (sl_runs_filter){.app_id = other, .status = "failed", .limit = 50};
    sl_value *page = sl_store_runs_list(s2, &f);
    sl_value *row0 = json_array_get(json_object_get(page, "data"), 0);
    CHECK(json_array_size(json_object_get(page, "data")) == 1 &&
              !strcmp(json_string_value(json_object_get(row0, "id")), "run-3") &&
              !strcmp(json_string_value(json_object_get(row0, "error")), "broke"),
          "filtered by app and status: the one failed run of the other app");
    json_decref(page);
    f = (sl_runs_filter){.user = "erin", .since = 1, .until = INT32_MAX};
    page = sl_store_runs_list(s2, &f);
    CHECK(json_array_size(json_object_get(page, "data")) == 3, "filtered by user: erin's 3");
    json_decref(page);
    f = (sl_runs_filter){.until = 1};
    page = sl_store_runs_list(s2, &f);
    CHECK(page && json_array_size(json_object_get(page, "data")) == 0,
          "… and by time: none made before 1970");
    json_decref(page);

    /* Dify's logs page of one app */
    sl_value *logs = sl_store_run_logs(s2, app, NULL, 1, 2);
    CHECK(json_integer_value(json_object_get(logs, "total")) == 4 &&
              json_array_size(json_object_get(logs, "data")) == 2 &&
              json_is_true(json_object_get(logs, "has_more")),
          "run_logs: a page of 2 of the app's 4 runs");
    json_decref(logs);
    logs = sl_store_run_logs(s2, app, "running", 1, 20);
    CHECK(json_integer_value(json_object_get(logs, "total")) == 2 &&
              json_is_false(json_object_get(logs, "has_more")),
          "… filtered by status");
    sl_value *first = json_array_get(json_object_get(logs, "data"), 0);
    CHECK(json_object_get(first, "workflow_run") &&
              json_object_get(json_object_get(first, "created_by_end_user"), "session_id"),
          "… each as Dify shows it");
    json_decref(logs);
    logs = sl_store_run_logs(s2, app, NULL, 9, 2);
    CHECK(json_integer_value(json_object_get(logs, "total")) == 4 &&
              json_array_size(json_object_get(logs, "data")) == 0,
          "… and a page past the end still counts them");
    json_decref(logs);

    /* opening does not fail another server's running runs */
    sl_store *s3 = open_ok(url, "a third store");
    v = sl_store_run_get(s3, NULL, "run-1");
    CHECK(v && !strcmp(json_string_value(json_object_get(v, "status")), "running"),
          "… and a run another server runs stays running");
    json_decref(v);
    sl_store_close(s3);
    json_decref(inputs);
    free(app);
    free(other);
    free(conv);
}

/* ---- conversations ---- */

static void test_conversations(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    char *app = NULL, *other = NULL, *conv = NULL, *anon = NULL, *out = NULL;
    sl_store_app_add(s, "a", "advanced-chat", "app: {}", &app, &err);
    sl_store_app_add(s, "b", "advanced-chat", "app: {}", &other, &err);
    CHECK(sl_store_conversation(s, app, "dave", NULL, "hi", &conv, &err) == 0 && conv,
          "dave starts a conversation");
    sl_store_message_add(s, "m1", conv, app, "hi", "r1", &err);
    const char *who[] = {"dave", "erin", NULL, ""};
    const bool may[] = {true, false, false, false};
    for (size_t i = 0; i < 4; i++) {
        const char *u = who[i] ? who[i] : "(none)";
        int rc = sl_store_conversation(s2, app, who[i], conv, "again", &out, &err);
        CHECK((rc == 0) == may[i], "user '%s' %s continue it (rc %d)", u,
              may[i] ? "may" : "may not", rc);
        if (rc)
            CHECK(err.code == SL_ENOTFOUND && err.msg &&
                      !strcmp(err.msg, "Conversation Not Exists."),
                  "… refused as Dify does: %s", err.msg ? err.msg : "(none)");
        sl_err_clear(&err);
        free(out);
        out = NULL;
        sl_value *m = sl_store_messages(s2, app, conv, who[i], 20);
        CHECK((m != NULL) == may[i], "user '%s' %s read its messages", u,
              may[i] ? "may" : "may not");
        json_decref(m);
        sl_value *list = sl_store_conversations(s2, app, who[i], 20);
        CHECK((json_array_size(json_object_get(list, "data")) == 1) == may[i],
              "user '%s' %s it listed", u, may[i] ? "has" : "does not have");
        json_decref(list);
        if (!may[i]) {
            CHECK(sl_store_feedback(s2, app, "m1", who[i], "like") == -1,
                  "user '%s' cannot rate its message", u);
            sl_value *r = sl_store_conversation_rename(s2, app, conv, who[i], "taken");
            CHECK(!r, "user '%s' cannot rename it", u);
            json_decref(r);
            CHECK(sl_store_conversation_delete(s2, app, conv, who[i], &err) == -1,
                  "user '%s' cannot delete it", u);
            sl_err_clear(&err);
        }
    }
    CHECK(sl_store_conversation(s, other, "dave", conv, "x", &out, &err) == -1,
          "the same user of another app cannot continue it");
    sl_err_clear(&err);
    CHECK(sl_store_feedback(s, app, "m1", "dave", "like") == 0, "dave rates his message");

    /* messages: oldest first, the newest `limit`, with their runs */
    for (int i = 2; i <= 5; i++) {
        char id[8], q[16], run[8];
        snprintf(id, sizeof id, "m%d", i);
        snprintf(q, sizeof q, "question %d", i);
        snprintf(run, sizeof run, "r%d", i);
        sl_store_message_add(s, id, conv, app, q, run, &err);
    }
    sl_value *m = sl_store_messages(s2, app, conv, "dave", 3);
    sl_value *data = json_object_get(m, "data");
    char *shown = show(json_array_get(data, 0));
    CHECK(json_array_size(data) == 3 && json_is_true(json_object_get(m, "has_more")) &&
              !strcmp(json_string_value(json_object_get(json_array_get(data, 0), "id")), "m3") &&
              !strcmp(json_string_value(json_object_get(json_array_get(data, 2), "id")), "m5") &&
              !strcmp(json_string_value(
                          json_object_get(json_array_get(data, 0), "workflow_run_id")),
                      "r3") &&
              json_is_null(json_object_get(json_array_get(data, 0), "feedback")),
          "messages: the newest 3 of 5, oldest first, each with its run: %s", shown);
    free(shown);
    json_decref(m);

    sl_value *r = sl_store_conversation_rename(s2, app, conv, "dave", "renamed");
    CHECK(r && !strcmp(json_string_value(json_object_get(r, "name")), "renamed") &&
              !strcmp(json_string_value(json_object_get(r, "status")), "normal"),
          "dave renames it");
    json_decref(r);

    /* no user: the default user's own conversation */
    CHECK(sl_store_conversation(s, app, NULL, NULL, "anon", &anon, &err) == 0,
          "a conversation without a user");
    CHECK(sl_store_conversation(s2, app, "", anon, "anon", &out, &err) == 0,
          "… continues with an empty user (the same default user)");
    free(out);
    out = NULL;
    CHECK(sl_store_conversation(s2, app, SL_STORE_DEFAULT_USER, anon, "x", &out, &err) == 0,
          "… and with the default user named");
    free(out);
    out = NULL;
    CHECK(sl_store_conversation(s2, app, "dave", anon, "x", &out, &err) == -1,
          "… but not as dave");
    sl_err_clear(&err);

    /* a long first query names it, cut where a character starts */
    char *u8 = NULL;
    const char *query = "ééééééééééééééééééééééééééééééééééééé (37 é: 74 bytes)";
    CHECK(sl_store_conversation(s, app, "zoe", NULL, query, &u8, &err) == 0,
          "a conversation whose first query is long and not ASCII: %s", err.msg ? err.msg : "");
    sl_value *list = sl_store_conversations(s2, app, "zoe", 20);
    const char *name = json_string_value(
        json_object_get(json_array_get(json_object_get(list, "data"), 0), "name"));
    CHECK(name && strlen(name) == 48 && !strncmp(name, query, 48),
          "… is named by its first 48 bytes (24 é): %s", name ? name : "(none)");
    json_decref(list);
    free(u8);

    list = sl_store_conversations(s2, app, "dave", 1);
    CHECK(json_array_size(json_object_get(list, "data")) == 1 &&
              json_is_false(json_object_get(list, "has_more")),
          "conversations: dave has one");
    json_decref(list);
    CHECK(sl_store_conversation_delete(s2, app, conv, "dave", &err) == 0, "dave deletes his");
    m = sl_store_messages(s, app, conv, "dave", 20);
    CHECK(!m, "… and it is gone");
    json_decref(m);
    CHECK(sl_store_conversation_delete(s2, app, conv, "dave", &err) == -1 &&
              err.code == SL_ENOTFOUND,
          "… deleting it again: not-found");
    sl_err_clear(&err);
    free(anon);
    free(conv);
    free(app);
    free(other);
}

/* ---- files and blobs ---- */

static const char K1[] = "0123abcd-0000-4000-8000-00000000aaaa";
static const char K2[] = "0123abcd-0000-4000-8000-00000000bbbb";
static const char K3[] = "0123abcd-0000-4000-8000-00000000cccc";
static const char K4[] = "0123abcd-0000-4000-8000-00000000dddd";

static void test_blobs(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    CHECK(sl_store_blob_put(s, K1, "hello", 5, 0, &err) == 0, "a blob is put: %s",
          err.msg ? err.msg : "");
    long long size = -1;
    int fd = sl_store_blob_open(s2, K1, &size, &err);
    char got[16] = "";
    ssize_t n = fd >= 0 ? read(fd, got, sizeof got - 1) : -1;
    CHECK(fd >= 0 && size == 5 && n == 5 && !memcmp(got, "hello", 5),
          "… the other store opens it as a stream of its 5 bytes (size %lld, read %zd)", size, n);
    if (fd >= 0) {
        CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "… read-only");
        CHECK(write(fd, "x", 1) == -1, "… and it takes no writes");
        struct stat sb;
        CHECK(!fstat(fd, &sb) && sb.st_size == 5 && pread(fd, got, 3, 2) == 3 &&
                  !memcmp(got, "llo", 3),
              "… a file of 5 bytes that reads at any offset");
        close(fd);
    }
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_store_blob_get(s, K1, 4, &b, &err) == -1 && err.code == SL_ELIMIT,
          "… not past a cap of 4 bytes");
    sl_err_clear(&err);
    sl_buf_release(&b);
    CHECK(sl_store_blob_put(s2, K1, "other", 5, 0, &err) == -1,
          "a key that exists is refused (blobs are written once): %s",
          err.msg ? err.msg : "(none)");
    sl_err_clear(&err);

    /* in pieces, within a cap */
    sl_blob_writer *w = NULL;
    CHECK(sl_store_blob_create(s, K2, 8, &w, &err) == 0 && w, "a blob is started with a cap of 8");
    CHECK(sl_blob_write(w, "12345", 5, &err) == 0, "5 bytes go in");
    CHECK(sl_blob_write(w, "6789", 4, &err) == -1 && err.code == SL_ELIMIT,
          "4 more pass the cap: SL_ELIMIT");
    sl_err_clear(&err);
    CHECK(sl_blob_write(w, "678", 3, &err) == 0, "3 more fit");
    CHECK(sl_store_blob_open(s2, K2, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "… before the commit no store sees it");
    sl_err_clear(&err);
    CHECK(sl_blob_commit(w, &err) == 0, "it is committed");
    sl_buf_init(&b, 0);
    CHECK(sl_store_blob_get(s2, K2, 0, &b, &err) == 0 && b.len == 8 &&
              !memcmp(b.data, "12345678", 8),
          "… holding the 8 bytes that fit");
    sl_buf_release(&b);

    w = NULL;
    sl_store_blob_create(s, K3, 0, &w, &err);
    sl_blob_write(w, "gone", 4, &err);
    sl_blob_abort(w);
    CHECK(sl_store_blob_open(s, K3, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "an aborted blob does not exist (SL_ENOTFOUND)");
    sl_err_clear(&err);
    CHECK(sl_store_blob_put(s, K3, "again", 5, 0, &err) == 0, "… and its key can be used again");
    CHECK(sl_store_blob_put(s, K4, "", 0, 0, &err) == 0, "an empty blob is put");
    fd = sl_store_blob_open(s2, K4, &size, &err);
    CHECK(fd >= 0 && size == 0 && read(fd, got, 1) == 0, "… and opens empty");
    if (fd >= 0)
        close(fd);
    sl_store_blob_delete(s, K4, &err);

    CHECK(sl_store_blob_delete(s2, K2, &err) == 0, "a blob is deleted");
    CHECK(sl_store_blob_open(s, K2, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "… and is gone");
    sl_err_clear(&err);
    CHECK(sl_store_blob_delete(s, K2, &err) == -1 && err.code == SL_ENOTFOUND,
          "deleting it again: SL_ENOTFOUND");
    sl_err_clear(&err);
    CHECK(sl_store_blob_open(s, "../sluice.db", NULL, &err) == -1 && err.code == SL_EINVAL,
          "a key sluice did not issue is refused");
    sl_err_clear(&err);

    /* a big one, in writes that do not line up with the parts */
    size_t big = (3u << 20) + 12345;
    unsigned char *data = sl_xmalloc(big);
    unsigned x = 2463534242u;
    for (size_t i = 0; i < big; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        data[i] = (unsigned char)x;
    }
    static const char KB[] = "0123abcd-0000-4000-8000-0000000000b1";
    w = NULL;
    int rc = sl_store_blob_create(s, KB, 0, &w, &err);
    for (size_t off = 0; !rc && off < big; off += 100003)
        rc = sl_blob_write(w, data + off, big - off < 100003 ? big - off : 100003, &err);
    CHECK(!rc && sl_blob_commit(w, &err) == 0, "a blob of %zu bytes is written in parts: %s",
          big, err.msg ? err.msg : "");
    sl_buf_init(&b, 16u << 20);
    size = 0;
    fd = sl_store_blob_open(s2, KB, &size, &err);
    for (ssize_t k; fd >= 0 && (k = read(fd, got, sizeof got)) > 0;)
        sl_buf_add(&b, got, (size_t)k);
    CHECK(size == (long long)big && b.len == big && !memcmp(b.data, data, big),
          "… and reads back byte for byte from the other store (%zu bytes)", b.len);
    if (fd >= 0)
        close(fd);
    sl_buf_release(&b);
    sl_store_blob_delete(s, KB, &err);
    char *q = sl_xasprintf("SELECT (SELECT count(*) FROM %s.blob_parts) || ':' ||"
                           " (SELECT count(*) FROM %s.blob_writes)",
                           schema, schema);
    char *left = sql(base_url, q);
    CHECK(left && !strcmp(left, "2:0"), /* K1's and K3's */
          "… deleted, its parts go; aborted writes left nothing (parts:writes %s)",
          left ? left : "(none)");
    free(left);
    free(q);
    free(data);

    /* files: metadata and bytes, for their app and owner */
    sl_store_blob_put(s, K2, "dave's", 6, 0, &err);
    sl_store_file_add(s, K2, "app1", "d.txt", 6, "text/plain", "dave", &err);
    sl_store_file_add(s, K3, "app1", "a.txt", 5, "text/plain", "", &err);
    sl_value *meta = sl_store_file_get(s2, "app1", K2);
    char *shown = show(meta);
    CHECK(meta && !strcmp(json_string_value(json_object_get(meta, "name")), "d.txt") &&
              json_integer_value(json_object_get(meta, "size")) == 6 &&
              !strcmp(json_string_value(json_object_get(meta, "mime_type")), "text/plain") &&
              !strcmp(json_string_value(json_object_get(meta, "created_by")), "dave"),
          "a file's metadata: %s", shown);
    free(shown);
    json_decref(meta);
    struct {
        const char *app, *user, *id;
        bool may;
    } cases[] = {
        {"app1", "dave", K2, true},  {"app1", "erin", K2, false}, {"app1", NULL, K2, false},
        {"app2", "dave", K2, false}, {"app1", "erin", K3, true},  {"app2", NULL, K3, false},
        {"app1", "dave", K1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fd = sl_store_file_open(s2, cases[i].app, cases[i].user, cases[i].id, &err);
        CHECK((fd >= 0) == cases[i].may, "file %zu for %s and user %s: %s", i, cases[i].app,
              cases[i].user ? cases[i].user : "(none)", cases[i].may ? "opens" : "refused");
        sl_err_clear(&err);
        if (fd >= 0)
            close(fd);
    }
}

/* Knowledge bases are not kept here: every call says so, and the
 * knowledge module does not open. */
/* Run leases: a run whose process stopped renewing its lease is failed
 * by the next store that looks (at open, or its leaser), and its old
 * owner's end is not saved over that. */
static void test_leases(sl_store *s)
{
    sl_err err = {0};
    char *app = NULL;
    sl_store_app_add(s, "leased", "workflow", "app: {}", &app, &err);
    sl_run_row r = {.id = "run-lease", .app_id = app, .task_id = "task-lease"};
    sl_run_row r2 = {.id = "run-kept", .app_id = app, .task_id = "task-kept"};
    CHECK(sl_store_start_run(s, &r, &err) == 0 && sl_store_start_run(s, &r2, &err) == 0,
          "two runs start, leased to their store");
    char *q = sl_xasprintf("SELECT count(*) FROM %s.runs WHERE owner IS NOT NULL AND"
                           " lease_until > extract(epoch FROM now())::bigint AND"
                           " id IN ('run-lease', 'run-kept')", schema);
    char *v = sql(base_url, q);
    CHECK(v && !strcmp(v, "2"), "… each with an owner and a lease in the future (%s)", v ? v : "");
    free(v);
    free(q);
    /* the first one's process is gone: its lease ran out */
    q = sl_xasprintf("UPDATE %s.runs SET lease_until = 1 WHERE id = 'run-lease'", schema);
    sql_ok(base_url, q);
    free(q);
    sl_store *b = NULL;
    int interrupted = -1;
    CHECK(sl_store_open(url, &b, &interrupted, &err) == 0 && interrupted == 1,
          "a store opening fails the run whose lease ran out, and says so (%d)", interrupted);
    sl_value *run = sl_store_run_get(s, NULL, "run-lease");
    CHECK(run && !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "failed") &&
              strstr(json_string_value(json_object_get(run, "error")) ?: "", "interrupted") &&
              json_is_integer(json_object_get(run, "finished_at")),
          "… failed, interrupted, with a finished_at");
    json_decref(run);
    run = sl_store_run_get(s, NULL, "run-kept");
    CHECK(run && !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "running"),
          "… the run whose lease holds runs on");
    json_decref(run);
    CHECK(sl_store_finish_run(s, "run-lease", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[]"), &err) == 0,
          "its old owner's end comes: no error");
    run = sl_store_run_get(s, NULL, "run-lease");
    CHECK(run && !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "failed"),
          "… and it is not saved: the run stays failed");
    json_decref(run);
    CHECK(sl_store_finish_run(b, "run-kept", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[]"), &err) == 0,
          "another store's end of a run it does not own: no error");
    run = sl_store_run_get(s, NULL, "run-kept");
    CHECK(run && !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "running"),
          "… and not saved either");
    json_decref(run);
    CHECK(sl_store_finish_run(s, "run-kept", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[]"), &err) == 0,
          "its owner ends it");
    run = sl_store_run_get(s, NULL, "run-kept");
    CHECK(run && !strcmp(json_string_value(json_object_get(run, "status")) ?: "", "succeeded"),
          "… saved");
    json_decref(run);
    sl_store_close(b);
    free(app);
    sl_err_clear(&err);
}

/* What a listener was told, for test_carry. */
static pthread_mutex_t told_mu = PTHREAD_MUTEX_INITIALIZER;
static char told[4096];

static void on_told(const char *what, const char *run_id, void *ud)
{
    (void)ud;
    pthread_mutex_lock(&told_mu);
    size_t n = strlen(told);
    snprintf(told + n, sizeof told - n, "%s:%s;", what, run_id ? run_id : "-");
    pthread_mutex_unlock(&told_mu);
}

static bool told_has(const char *s, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        pthread_mutex_lock(&told_mu);
        bool yes = strstr(told, s) != NULL;
        pthread_mutex_unlock(&told_mu);
        if (yes)
            return true;
        usleep(10000);
    }
    return false;
}

/* A running run's events travel to the other processes: published by
 * one store, announced to the other's listener, read there in order;
 * the run's end keeps them in its log and clears the carried copies; a
 * stop asked through one store reaches the other's listener. */
static void test_carry(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    CHECK(sl_store_shared(s), "a PostgreSQL store is shared by processes");
    CHECK(sl_store_listen(s2, on_told, NULL, &err) == 0, "the second store listens: %s",
          err.msg ? err.msg : "");
    sl_err_clear(&err);
    usleep(200000);  /* its LISTEN is in place */
    char *app = NULL;
    sl_store_app_add(s, "carried", "workflow", "app: {}", &app, &err);
    sl_run_row r = {.id = "run-carry", .app_id = app, .task_id = "task-carry"};
    sl_store_start_run(s, &r, &err);
    for (int i = 1; i <= 50; i++) {
        char text[96];
        snprintf(text, sizeof text, "{\"event\":\"node_started\",\"data\":{\"i\":%d}}", i);
        sl_store_event_publish(s, "run-carry", i, text, strlen(text));
    }
    CHECK(told_has("events:run-carry;", 3000), "the other store is told the run has events");
    sl_value *ev = NULL;
    for (int i = 0; i < 100; i++) {  /* the last batch may land a moment later */
        json_decref(ev);
        ev = sl_store_events_since(s2, "run-carry", 0);
        if (json_array_size(ev) == 50)
            break;
        usleep(10000);
    }
    bool ordered = json_array_size(ev) == 50;
    for (size_t i = 0; ordered && i < 50; i++)
        ordered = json_integer_value(json_object_get(json_array_get(ev, i), "seq")) == (json_int_t)i + 1;
    CHECK(ordered, "… and reads all 50 of them, in order (%zu)", json_array_size(ev));
    json_decref(ev);
    ev = sl_store_events_since(s2, "run-carry", 45);
    CHECK(json_array_size(ev) == 5 &&
              json_integer_value(json_object_get(json_array_get(ev, 0), "seq")) == 46 &&
              strstr(json_string_value(json_object_get(json_array_get(ev, 0), "text")) ?: "",
                     "\"i\":46"),
          "… or those after the 45th, as a client resuming would");
    json_decref(ev);
    CHECK(sl_store_finish_run(s, "run-carry", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[{\"event\":\"workflow_finished\",\"data\":{}}]"),
                              &err) == 0,
          "the run ends");
    ev = sl_store_events_since(s2, "run-carry", 0);
    CHECK(ev && json_array_size(ev) == 0, "… its carried events are cleared (%zu left)",
          json_array_size(ev));
    json_decref(ev);
    ev = sl_store_run_events(s2, app, "run-carry");
    CHECK(json_array_size(ev) == 1, "… and its log is kept");
    json_decref(ev);
    CHECK(sl_store_stop_request(s, "run-elsewhere", &err) == 0, "a stop is asked for: %s",
          err.msg ? err.msg : "");
    CHECK(told_has("stop:run-elsewhere;", 3000), "… and the other store is told");
    free(app);
    sl_err_clear(&err);
}

/* ---- many threads, lost connections, a restart ---- */

typedef struct {
    sl_store *s;
    const char *app;
    int round, i, ok;
} worker;

static void *work_main(void *arg)
{
    worker *w = arg;
    for (int k = 0; k < 20; k++) {
        char id[48];
        snprintf(id, sizeof id, "w%d-%d-%d", w->round, w->i, k);
        sl_err err = {0};
        sl_run_row r = {.id = id, .app_id = w->app, .task_id = id};
        char *dsl = NULL;
        if (!sl_store_start_run(w->s, &r, &err) &&
            !sl_store_finish_run(w->s, id, "succeeded", NULL, NULL, 0, 0, 0, 1, NULL, NULL, NULL,
                                 &err) &&
            !sl_store_app_get(w->s, w->app, &dsl, NULL, &err))
            w->ok++;
        else
            fprintf(stderr, "worker %d: %s\n", w->i, err.msg ? err.msg : "");
        free(dsl);
        sl_err_clear(&err);
    }
    return NULL;
}

static int threads_ok(sl_store *s, const char *app, int n)
{
    static int round;
    worker w[32];
    pthread_t th[32];
    round++;
    for (int i = 0; i < n; i++) {
        w[i] = (worker){.s = s, .app = app, .round = round, .i = i};
        pthread_create(&th[i], NULL, work_main, &w[i]);
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    return ok;
}

static int sluice_backends(void)
{
    char *v = sql(base_url, "SELECT count(*) FROM pg_stat_activity WHERE application_name="
                            "'sluice' AND datname=current_database()");
    int n = v ? atoi(v) : -1;
    free(v);
    return n;
}

static void test_connections(sl_store *s)
{
    sl_err err = {0};
    char *app = NULL;
    sl_store_app_add(s, "busy", "workflow", "app: {}", &app, &err);
    int ok = threads_ok(s, app, 16);
    CHECK(ok == 16 * 20, "16 threads, 20 runs each, on a pool of 8 connections: all kept (%d)",
          ok);
    int before = sluice_backends();
    CHECK(before >= 2 && before <= 8 * 2 + 1,
          "… on at most 8 connections a store (%d for the test's stores)", before);
    /* the server ends every connection of ours */
    char *killed = sql(base_url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                 " WHERE pid <> pg_backend_pid() AND application_name='sluice'"
                                 " AND datname=current_database()");
    CHECK(killed && atoi(killed) >= 2, "the server ends the store's %s connections",
          killed ? killed : "(none)");
    free(killed);
    char *dsl = NULL;
    int fine = 0;
    for (int i = 0; i < 12; i++) {
        if (!sl_store_app_get(s, app, &dsl, NULL, &err))
            fine++;
        else
            fprintf(stderr, "after the kill: %s\n", err.msg);
        sl_err_clear(&err);
        free(dsl);
        dsl = NULL;
    }
    CHECK(fine == 12, "every operation after goes on, on new connections (%d of 12)", fine);
    ok = threads_ok(s, app, 8);
    CHECK(ok == 8 * 20, "… also from many threads at once (%d)", ok);
    free(app);
}

static void test_restart(sl_store *s, const char *with_pw)
{
    const char *stop = getenv("SLUICE_TEST_PG_STOP"), *start = getenv("SLUICE_TEST_PG_START");
    if (!stop || !start) {
        SKIP("the server stopped and started again", "SLUICE_TEST_PG_STOP/START not set");
        return;
    }
    sl_err err = {0};
    char *app = NULL, *dsl = NULL;
    CHECK(sl_store_app_add(s, "kept", "workflow", "app: {}", &app, &err) == 0,
          "an app is added before the restart");
    CHECK(system(stop) == 0, "the server stops");
    int rc = sl_store_app_get(s, app ? app : "x", &dsl, NULL, &err);
    CHECK(rc == -1 && err.code == SL_EIO && err.msg && strstr(err.msg, "PostgreSQL") &&
              !strstr(err.msg, "hunter2secret"),
          "while it is down an operation fails with SL_EIO, saying why: %s",
          err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    rc = sl_store_app_get(s, app ? app : "x", &dsl, NULL, &err);
    CHECK(rc == -1 && err.code == SL_EIO && err.msg && strstr(err.msg, "cannot connect") &&
              !strstr(err.msg, "hunter2secret") && strstr(err.msg, "***"),
          "… the next too, naming the location without its password: %s",
          err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    sl_store *s2 = NULL;
    int interrupted;
    CHECK(sl_store_open(with_pw, &s2, &interrupted, &err) == -1 && err.code == SL_EIO &&
              err.msg && !strstr(err.msg, "hunter2secret"),
          "… and a store does not open: %s", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    CHECK(system(start) == 0, "the server starts again");
    /* a failed connect holds new ones off for a second (DOWN_MS): within
     * two, the store is back */
    rc = -1;
    for (int i = 0; i < 40 && rc; i++) {
        if (i)
            usleep(50000);
        rc = sl_store_app_get(s, app ? app : "x", &dsl, NULL, &err);
        if (rc)
            sl_err_clear(&err);
    }
    CHECK(rc == 0 && dsl && !strcmp(dsl, "app: {}"), "the store works again, its data there: %s",
          err.msg ? err.msg : "");
    free(dsl);
    sl_err_clear(&err);
    int ok = threads_ok(s, app, 8);
    CHECK(ok == 8 * 20, "… from many threads too (%d)", ok);
    free(app);
}

static const char *status_of(sl_store *s, const char *id, char **keep)
{
    char *st = NULL, *reply = NULL;
    sl_err err = {0};
    sl_store_run_state(s, id, &st, &reply, &err);
    sl_err_clear(&err);
    free(reply);
    free(*keep);
    *keep = st;
    return st ? st : "(none)";
}

typedef struct {
    sl_store *s;
    sl_value *got;
} claimer;

static void *claim_main(void *arg)
{
    claimer *c = arg;
    c->got = json_array();
    sl_err err = {0};
    for (int i = 0; i < 40; i++) {
        sl_value *rows = NULL;
        if (sl_store_claim_runs(c->s, 3, &rows, &err) == 0)
            json_array_extend(c->got, rows);
        json_decref(rows);
        sl_err_clear(&err);
    }
    return NULL;
}

/* Runs as jobs: queued by one store, claimed by others with SKIP LOCKED,
 * in line order, each once; only the attempt holding a run writes; a
 * lost attempt fails the run, or queues it again when it may retry; a
 * queued run is stopped in place; rate limits are shared. */
static void test_queue(sl_store *s, sl_store *s2)
{
    sl_err err = {0};
    char *app = NULL, *st = NULL;
    sl_store_app_add(s, "queued", "workflow", "app: {}", &app, &err);
    sl_value *in = json_pack("{s:s}", "q", "hello");
    const char *ids[] = {"q-1", "q-2", "q-3"};
    int ok = 0;
    for (int i = 0; i < 3; i++) {
        sl_run_row r = {.id = ids[i], .app_id = app, .task_id = ids[i], .user = "u",
                        .inputs = in, .app_version = 1};
        ok += sl_store_enqueue_run(s, &r, i == 2 ? "{\"retry\":true}" : "{\"query\":\"hi\"}",
                                   &err) == 0;
    }
    CHECK(ok == 3, "three runs are queued: %s", err.msg ? err.msg : "");
    CHECK(told_has("queue:-;", 3000), "… and the other store is told runs wait");
    CHECK(!strcmp(status_of(s2, "q-1", &st), "queued"), "… each is queued (%s)", st);
    CHECK(sl_store_running(s, app) == 3, "… and counts as going for --max-runs");
    sl_value *rows = NULL;
    CHECK(sl_store_claim_runs(s2, 2, &rows, &err) == 0 && json_array_size(rows) == 2 &&
              !strcmp(json_string_value(json_object_get(json_array_get(rows, 0), "id")), "q-1") &&
              !strcmp(json_string_value(json_object_get(json_array_get(rows, 1), "id")), "q-2"),
          "the second store claims two, the oldest first (%zu)", json_array_size(rows));
    sl_value *r0 = json_array_get(rows, 0);
    CHECK(json_integer_value(json_object_get(r0, "attempts")) == 1 &&
              !strcmp(json_string_value(json_object_get(json_object_get(r0, "request"), "query")) ?: "", "hi") &&
              !strcmp(json_string_value(json_object_get(json_object_get(r0, "inputs"), "q")) ?: "", "hello") &&
              !strcmp(json_string_value(json_object_get(r0, "user")) ?: "", "u") &&
              json_integer_value(json_object_get(r0, "app_version")) == 1,
          "… each with its request, inputs, user, version and first attempt");
    json_decref(rows);
    CHECK(!strcmp(status_of(s, "q-1", &st), "running"), "… now running (%s)", st);
    CHECK(sl_store_claim_runs(s, 5, &rows, &err) == 0 && json_array_size(rows) == 1,
          "the first store claims what is left: one (%zu)", json_array_size(rows));
    json_decref(rows);
    CHECK(sl_store_claim_runs(s, 5, &rows, &err) == 0 && json_array_size(rows) == 0,
          "… then nothing");
    json_decref(rows);

    /* only the attempt that holds a run writes */
    CHECK(sl_store_finish_run(s, "q-1", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL,
                              "{\"by\":\"not its owner\"}", sl_xstrdup("[]"), &err) == 0 &&
              !strcmp(status_of(s, "q-1", &st), "running"),
          "a store that did not claim a run cannot end it (%s)", st);
    CHECK(sl_store_finish_run(s2, "q-1", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL,
                              "{\"answer\":42}", sl_xstrdup("[]"), &err) == 0,
          "the store that claimed it ends it");
    char *status = NULL, *reply = NULL;
    CHECK(sl_store_run_state(s, "q-1", &status, &reply, &err) == 0 && status && reply &&
              !strcmp(status, "succeeded") && strstr(reply, "42"),
          "… and any store reads its end and the answer it left (%s %s)", status ?: "",
          reply ?: "");
    free(status);
    free(reply);
    CHECK(sl_store_run_state(s, "q-none", &status, &reply, &err) == -1 &&
              err.code == SL_ENOTFOUND, "no such run: SL_ENOTFOUND");
    sl_err_clear(&err);

    /* q-2 (s2's) and q-3 (s's, retry) lose their leases */
    sl_store_event_publish(s, "q-3", 1, "{\"event\":\"workflow_started\",\"data\":{}}", 38);
    usleep(100000);
    char *q = sl_xasprintf("UPDATE %s.runs SET lease_until = 1 WHERE id IN ('q-2', 'q-3')", schema);
    sql_ok(base_url, q);
    free(q);
    sl_store *b = NULL;
    int interrupted = -1;
    CHECK(sl_store_open(url, &b, &interrupted, &err) == 0 && interrupted == 2,
          "a store opening sees two runs whose lease ran out (%d)", interrupted);
    CHECK(!strcmp(status_of(s, "q-2", &st), "failed"), "… the one that may not retry is failed (%s)", st);
    CHECK(!strcmp(status_of(s, "q-3", &st), "queued"), "… the one that may is queued again (%s)", st);
    sl_value *ev = sl_store_events_since(s2, "q-3", 0);
    CHECK(ev && json_array_size(ev) == 0, "… its carried events gone (%zu)", json_array_size(ev));
    json_decref(ev);
    CHECK(sl_store_finish_run(s, "q-3", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[]"), &err) == 0 &&
              !strcmp(status_of(s, "q-3", &st), "queued"),
          "the lost attempt's end comes late: nothing is written (%s)", st);
    CHECK(sl_store_claim_runs(b, 5, &rows, &err) == 0 && json_array_size(rows) == 1 &&
              json_integer_value(json_object_get(json_array_get(rows, 0), "attempts")) == 2,
          "another store claims it again: attempt 2");
    json_decref(rows);
    sl_store_event_publish(s, "q-3", 1, "{\"event\":\"stale\",\"data\":{}}", 27);
    sl_store_event_publish(b, "q-3", 1, "{\"event\":\"workflow_started\",\"data\":{}}", 38);
    usleep(200000);
    ev = sl_store_events_since(s2, "q-3", 0);
    CHECK(json_array_size(ev) == 1 &&
              strstr(json_string_value(json_object_get(json_array_get(ev, 0), "text")) ?: "",
                     "workflow_started"),
          "… its events are carried; the lost attempt's are not (%zu)", json_array_size(ev));
    json_decref(ev);
    CHECK(sl_store_finish_run(b, "q-3", "succeeded", NULL, NULL, 1, 0, 1, 5, NULL, NULL,
                              sl_xstrdup("[]"), &err) == 0 &&
              !strcmp(status_of(s, "q-3", &st), "succeeded"),
          "… and its end is saved (%s)", st);

    /* a queued run is stopped in place, by id or by task and user */
    sl_run_row r4 = {.id = "q-4", .app_id = app, .task_id = "t-4", .user = "u"};
    sl_run_row r5 = {.id = "q-5", .app_id = app, .task_id = "t-5", .user = "u"};
    sl_store_enqueue_run(s, &r4, "{}", &err);
    sl_store_enqueue_run(s, &r5, "{}", &err);
    CHECK(sl_store_stop_request(s2, "q-4", &err) == 0 && !strcmp(status_of(s, "q-4", &st), "stopped"),
          "a queued run stopped by id is stopped at once (%s)", st);
    char *other = sl_xasprintf("task\t%s\tt-5\tsomeone", app), *own = sl_xasprintf("task\t%s\tt-5\tu", app);
    sl_store_stop_request(s2, other, &err);
    CHECK(!strcmp(status_of(s, "q-5", &st), "queued"), "… by task, another user's stop changes nothing (%s)", st);
    sl_store_stop_request(s2, own, &err);
    CHECK(!strcmp(status_of(s, "q-5", &st), "stopped"), "… its user's stops it (%s)", st);
    free(other);
    free(own);
    CHECK(sl_store_claim_runs(s, 5, &rows, &err) == 0 && json_array_size(rows) == 0,
          "… and no one claims them");
    json_decref(rows);

    /* two stores claiming at once share the line: each run once */
    for (int i = 0; i < 60; i++) {
        char id[16];
        snprintf(id, sizeof id, "qq-%02d", i);
        sl_run_row r = {.id = id, .app_id = app, .task_id = id};
        sl_store_enqueue_run(s, &r, "{}", &err);
    }
    claimer c1 = {.s = s}, c2 = {.s = b};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, claim_main, &c1);
    pthread_create(&t2, NULL, claim_main, &c2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    char seen[60] = {0};
    size_t i;
    sl_value *row;
    int twice = 0, n = 0;
    for (int k = 0; k < 2; k++)
        json_array_foreach(k ? c2.got : c1.got, i, row) {
            int x = atoi(json_string_value(json_object_get(row, "id")) + 3);
            twice += seen[x]++ > 0;
            n++;
        }
    CHECK(n == 60 && twice == 0, "two stores claiming at once take all 60 runs, each once "
          "(%d taken, %d twice; %zu and %zu)", n, twice, json_array_size(c1.got), json_array_size(c2.got));
    json_decref(c1.got);
    json_decref(c2.got);

    /* --rate-limit: one bucket for every store */
    int taken = 0;
    for (int k = 0; k < 8; k++)
        taken += sl_store_rate_take(k % 2 ? s : s2, app, 3, &err) == 1;
    CHECK(taken == 3, "a rate of 3/s shared by two stores takes 3 of 8 quick requests (%d)", taken);
    sl_store_close(b);
    json_decref(in);
    free(st);
    free(app);
    sl_err_clear(&err);
}

int main(void)
{
    base_url = getenv("SLUICE_TEST_PG");
    if (!base_url || !*base_url) {
        printf("1..0 # SKIP SLUICE_TEST_PG not set\n");
        return 0;
    }
    sl_err err = {0};
    if (sl_dl_load(&t_lib, &err)) {
        printf("1..0 # SKIP %s\n", err.msg);
        sl_err_clear(&err);
        return 0;
    }
    snprintf(schema, sizeof schema, "sluice_test_%d", (int)getpid());
    char *q = sl_xasprintf("CREATE SCHEMA %s", schema);
    CHECK(sql_ok(base_url, q), "a schema of the test's own: %s", schema);
    free(q);
    url = url_in(schema);

    test_password_hidden();
    test_open();
    sl_store *s = open_ok(url, "a store");
    /* the other server: the same database, and a password in its location
     * (trust: never sent) that no message may show */
    char *with_pw = sl_xasprintf("%s&password=hunter2secret", url);
    sl_store *s2 = open_ok(with_pw, "a second store on the same database");
    if (s && s2) {
        test_apps(s, s2);
        test_apps_dsl(s);
        test_runs(s, s2);
        test_conversations(s, s2);
        test_blobs(s, s2);
        test_leases(s);
        test_carry(s, s2);
        test_queue(s, s2);
        test_connections(s);
        test_restart(s2, with_pw);
    }
    sl_store_close(s);
    sl_store_close(s2);
    free(with_pw);
    q = sl_xasprintf("SET client_min_messages=warning; DROP SCHEMA %s CASCADE", schema);
    CHECK(sql_ok(base_url, q), "the test's schema is dropped");
    free(q);
    free(url);
    return tap_done();
}
