/*
 * store — what the store guarantees whoever calls it: keys, tokens and ids
 * only from getrandom (a failure refuses, never falls back to a guessable
 * source); the data folder 0700 and the database 0600, also when they
 * existed with looser modes; conversations and messages only for the
 * (app, user) that started them, no user being Dify's default user; a
 * location names its backend ("sqlite:FOLDER" or a folder) and an unknown
 * one is refused by name, without echoing the rest of the location.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"

/* The test's getrandom takes the place of libc's for the whole program,
 * so the store's calls can be made to fail as an old kernel or a seccomp
 * filter would. */
static int fail_random;

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
    if (fail_random) {
        errno = ENOSYS;
        return -1;
    }
    return syscall(SYS_getrandom, buf, n, flags);
}

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/sluice-store-XXXXXX";
    return sl_xstrdup(mkdtemp(tmpl));
}

static void rm_rf(const char *dir)
{
    char *cmd = sl_xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
}

static void test_random_fails_closed(void)
{
    char *dir = tmpdir();
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens: %s",
          err.msg ? err.msg : "");
    char *app = NULL;
    CHECK(sl_store_app_add(s, "a", "workflow", "app: {}", &app, &err) == 0, "an app is added");

    fail_random = 1;
    char *key = NULL;
    int rc = sl_store_key_create(s, app, &key, &err);
    CHECK(rc == -1 && !key, "without getrandom no key is made (rc %d)", rc);
    CHECK(err.msg && strstr(err.msg, "getrandom"), "… and the error names getrandom: %s",
          err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    char *token = NULL;
    bool created = false;
    rc = sl_store_admin_token(s, &token, &created, &err);
    char *path = sl_xasprintf("%s/admin-token", dir);
    CHECK(rc == -1 && !token && access(path, F_OK) != 0,
          "without getrandom no admin token is made or written (rc %d)", rc);
    sl_err_clear(&err);
    char *app2 = NULL;
    rc = sl_store_app_add(s, "b", "workflow", "app: {}", &app2, &err);
    CHECK(rc == -1 && !app2, "without getrandom no app id is made (rc %d)", rc);
    sl_err_clear(&err);
    char *conv = NULL;
    rc = sl_store_conversation(s, app, "u", NULL, "hi", &conv, &err);
    CHECK(rc == -1 && !conv, "without getrandom no conversation id is made (rc %d)", rc);
    sl_err_clear(&err);
    fail_random = 0;

    sl_value *keys = NULL;
    CHECK(sl_store_key_list(s, app, &keys, &err) == 0 && json_array_size(keys) == 0,
          "no key was stored");
    json_decref(keys);
    rc = sl_store_key_create(s, app, &key, &err);
    CHECK(rc == 0 && key && strlen(key) == 52, "with getrandom back a key is made: %s",
          key ? key : "(none)");
    free(key);

    /* what does not exist is SL_ENOTFOUND, which the server answers with 404 */
    char *dsl = NULL;
    sl_value *vs = NULL;
    int ver = 0;
    CHECK(sl_store_app_get(s, "nope", &dsl, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "get of a missing app: not-found (%s)", sl_errcode_name(err.code));
    CHECK(sl_store_app_update(s, "nope", "a", "workflow", "app: {}", &ver, &err) == -1 &&
              err.code == SL_ENOTFOUND,
          "update of a missing app: not-found (%s)", sl_errcode_name(err.code));
    CHECK(sl_store_app_versions(s, "nope", &vs, &err) == -1 && err.code == SL_ENOTFOUND,
          "versions of a missing app: not-found (%s)", sl_errcode_name(err.code));
    CHECK(sl_store_app_get_version(s, app, 99, &dsl, &err) == -1 && err.code == SL_ENOTFOUND,
          "a missing version: not-found (%s)", sl_errcode_name(err.code));
    CHECK(sl_store_app_delete(s, "nope", &err) == -1 && err.code == SL_ENOTFOUND,
          "delete of a missing app: not-found (%s)", sl_errcode_name(err.code));
    CHECK(sl_store_key_revoke(s, "nope", &err) == -1 && err.code == SL_ENOTFOUND,
          "revoke of a missing key: not-found (%s)", sl_errcode_name(err.code));
    sl_err_clear(&err);
    free(path);
    free(app);
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

static unsigned mode_of(const char *dir, const char *leaf)
{
    char *p = leaf ? sl_xasprintf("%s/%s", dir, leaf) : sl_xstrdup(dir);
    struct stat sb;
    unsigned m = stat(p, &sb) ? 0 : (unsigned)(sb.st_mode & 07777);
    free(p);
    return m;
}

static void chmod_in(const char *dir, const char *leaf, mode_t m)
{
    char *p = sl_xasprintf("%s/%s", dir, leaf);
    if (chmod(p, m))
        fprintf(stderr, "chmod %s: %s\n", p, strerror(errno));
    free(p);
}

static void test_private_modes(void)
{
    char *dir = tmpdir();
    /* a folder made by hand (or by a mkdir -p with umask 022) */
    chmod(dir, 0755);
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens in a 0755 folder");
    CHECK(mode_of(dir, NULL) == 0700, "the data folder is made 0700 (is %o)", mode_of(dir, NULL));
    CHECK(mode_of(dir, "files") == 0700, "DATA/files is 0700 (is %o)", mode_of(dir, "files"));
    CHECK(mode_of(dir, "sluice.db") == 0600, "sluice.db is 0600 (is %o)",
          mode_of(dir, "sluice.db"));
    char *app = NULL;
    sl_store_app_add(s, "a", "workflow", "app: {}", &app, &err);
    free(app);
    CHECK(mode_of(dir, "sluice.db-wal") == 0600, "sluice.db-wal is 0600 (is %o)",
          mode_of(dir, "sluice.db-wal"));
    sl_store_close(s);

    /* an older sluice left it readable by all */
    chmod(dir, 0755);
    chmod_in(dir, "files", 0777);
    chmod_in(dir, "sluice.db", 0644);
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens again");
    CHECK(mode_of(dir, NULL) == 0700 && mode_of(dir, "files") == 0700 &&
              mode_of(dir, "sluice.db") == 0600,
          "an existing 0755 folder, 0777 files and 0644 database are tightened (%o %o %o)",
          mode_of(dir, NULL), mode_of(dir, "files"), mode_of(dir, "sluice.db"));
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

static void test_ownership(void)
{
    char *dir = tmpdir();
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    sl_store_open(dir, &s, &interrupted, &err);
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
        int rc = sl_store_conversation(s, app, who[i], conv, "again", &out, &err);
        CHECK((rc == 0) == may[i], "user '%s' %s continue it (rc %d)", u,
              may[i] ? "may" : "may not", rc);
        if (rc)
            CHECK(err.code == SL_ENOTFOUND && err.msg && !strcmp(err.msg, "Conversation Not Exists."),
                  "… refused as Dify does: %s", err.msg ? err.msg : "(none)");
        sl_err_clear(&err);
        free(out);
        out = NULL;
        sl_value *m = sl_store_messages(s, app, conv, who[i], 20);
        CHECK((m != NULL) == may[i], "user '%s' %s read its messages", u,
              may[i] ? "may" : "may not");
        json_decref(m);
        sl_value *list = sl_store_conversations(s, app, who[i], 20);
        CHECK((json_array_size(json_object_get(list, "data")) == 1) == may[i],
              "user '%s' %s it listed", u, may[i] ? "has" : "does not have");
        json_decref(list);
        if (!may[i]) {
            CHECK(sl_store_feedback(s, app, "m1", who[i], "like") == -1,
                  "user '%s' cannot rate its message", u);
            sl_value *r = sl_store_conversation_rename(s, app, conv, who[i], "taken");
            CHECK(!r, "user '%s' cannot rename it", u);
            json_decref(r);
            CHECK(sl_store_conversation_delete(s, app, conv, who[i], &err) == -1,
                  "user '%s' cannot delete it", u);
            sl_err_clear(&err);
        }
    }
    CHECK(sl_store_conversation(s, other, "dave", conv, "x", &out, &err) == -1,
          "the same user of another app cannot continue it");
    sl_err_clear(&err);
    CHECK(sl_store_feedback(s, app, "m1", "dave", "like") == 0, "dave rates his message");

    /* no user: the default user's own conversation */
    CHECK(sl_store_conversation(s, app, NULL, NULL, "anon", &anon, &err) == 0,
          "a conversation without a user");
    CHECK(sl_store_conversation(s, app, "", anon, "anon", &out, &err) == 0,
          "… continues with an empty user (the same default user)");
    free(out);
    out = NULL;
    CHECK(sl_store_conversation(s, app, SL_STORE_DEFAULT_USER, anon, "x", &out, &err) == 0,
          "… and with the default user named");
    free(out);
    out = NULL;
    CHECK(sl_store_conversation(s, app, "dave", anon, "x", &out, &err) == -1,
          "… but not as dave");
    sl_err_clear(&err);
    CHECK(sl_store_conversation_delete(s, app, conv, "dave", &err) == 0, "dave deletes his");
    free(anon);
    free(conv);
    free(app);
    free(other);
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

static void test_backends(void)
{
    char *dir = tmpdir();
    sl_store *s = NULL;
    int interrupted = -1;
    sl_err err = {0};
    int rc = sl_store_open("postgres://sluice:hunter2@db.example/sluice", &s, &interrupted, &err);
    CHECK(rc == -1 && !s && err.code == SL_EUNSUPPORTED, "an unknown backend is refused (rc %d)",
          rc);
    CHECK(err.msg && strstr(err.msg, "'postgres'") && strstr(err.msg, "sqlite:FOLDER"),
          "… naming it and the backends there are: %s", err.msg ? err.msg : "(none)");
    CHECK(err.msg && !strstr(err.msg, "hunter2") && !strstr(err.msg, "db.example"),
          "… without the rest of the location (it may hold a password)");
    sl_err_clear(&err);
    CHECK(sl_store_open("sqlite:", &s, &interrupted, &err) == -1 && !s && err.code == SL_EINVAL,
          "sqlite: without a folder is refused: %s", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);

    char *where = sl_xasprintf("sqlite:%s", dir);
    CHECK(sl_store_open(where, &s, &interrupted, &err) == 0 && s, "sqlite:FOLDER opens: %s",
          err.msg ? err.msg : "");
    CHECK(s && !strcmp(sl_store_dir(s), dir), "… the store keeps its folder: %s",
          s ? sl_store_dir(s) : "(none)");
    char *app = NULL;
    CHECK(sl_store_app_add(s, "kept", "workflow", "app: {}", &app, &err) == 0, "an app is added");
    sl_store_close(s);
    s = NULL;
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "the same folder opens without scheme");
    char *dsl = NULL;
    CHECK(s && sl_store_app_get(s, app, &dsl, NULL, &err) == 0 && dsl && !strcmp(dsl, "app: {}"),
          "… and holds the app that sqlite:FOLDER stored");
    free(dsl);
    sl_store_close(s);
    free(app);
    free(where);
    rm_rf(dir);
    free(dir);
}

int main(void)
{
    test_backends();
    test_ownership();
    test_private_modes();
    test_random_fails_closed();
    return tap_done();
}
