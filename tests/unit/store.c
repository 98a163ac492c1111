/*
 * store — what the store guarantees whoever calls it: keys, tokens and ids
 * only from getrandom (a failure refuses, never falls back to a guessable
 * source); the data folder 0700 and the database 0600, also when they
 * existed with looser modes; conversations and messages only for the
 * (app, user) that started them, no user being Dify's default user; a
 * location names its backend ("sqlite:FOLDER" or a folder) and an unknown
 * one is refused by name, without echoing the rest of the location; file
 * bytes are blobs reached only by a key sluice issued, written once within
 * a cap, and a file opens only for its app and owner.
 */
#include <errno.h>
#include <fcntl.h>
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
    int rc = sl_store_open("mongodb://sluice:hunter2@db.example/sluice", &s, &interrupted, &err);
    CHECK(rc == -1 && !s && err.code == SL_EUNSUPPORTED, "an unknown backend is refused (rc %d)",
          rc);
    CHECK(err.msg && strstr(err.msg, "'mongodb'") && strstr(err.msg, "sqlite:FOLDER") &&
              strstr(err.msg, "postgres://"),
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
    char *app = NULL;
    CHECK(sl_store_app_add(s, "kept", "workflow", "app: {}", &app, &err) == 0, "an app is added");
    char *want = sl_xasprintf("%s/apps/%s", dir, app);
    char *adir = sl_store_app_dir(s, app, &err);
    CHECK(adir && !strcmp(adir, want), "its bundle files have a folder in FOLDER/apps: %s",
          adir ? adir : "(none)");
    free(adir);
    free(want);
    const char *bad[] = {"", ".", "..", "../x", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        adir = sl_store_app_dir(s, bad[i], &err);
        CHECK(!adir && err.code == SL_EINVAL, "app id '%s' names no folder", bad[i]);
        free(adir);
        sl_err_clear(&err);
    }
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

static const char K1[] = "0123abcd-0000-4000-8000-00000000aaaa";
static const char K2[] = "0123abcd-0000-4000-8000-00000000bbbb";
static const char K3[] = "0123abcd-0000-4000-8000-00000000cccc";

static void test_blobs(void)
{
    char *dir = tmpdir();
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    CHECK(sl_store_open(dir, &s, &interrupted, &err) == 0, "store opens");

    CHECK(sl_store_blob_put(s, K1, "hello", 5, 0, &err) == 0, "a blob is put: %s",
          err.msg ? err.msg : "");
    long long size = -1;
    int fd = sl_store_blob_open(s, K1, &size, &err);
    char got[16] = "";
    ssize_t n = fd >= 0 ? read(fd, got, sizeof got - 1) : -1;
    CHECK(fd >= 0 && size == 5 && n == 5 && !memcmp(got, "hello", 5),
          "… opens as a stream of its 5 bytes (size %lld, read %zd)", size, n);
    if (fd >= 0)
        CHECK(fcntl(fd, F_GETFL) >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
              "… read-only");
    if (fd >= 0)
        close(fd);
    sl_buf b;
    sl_buf_init(&b, 0);
    CHECK(sl_store_blob_get(s, K1, 0, &b, &err) == 0 && b.len == 5 && !memcmp(b.data, "hello", 5),
          "… and reads back whole");
    sl_buf_reset(&b);
    CHECK(sl_store_blob_get(s, K1, 4, &b, &err) == -1 && err.code == SL_ELIMIT,
          "… but not past a cap of 4 bytes: %s", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    sl_buf_release(&b);
    CHECK(sl_store_blob_put(s, K1, "other", 5, 0, &err) == -1,
          "a key that exists is refused (blobs are written once)");
    sl_err_clear(&err);
    fd = sl_store_blob_open(s, K1, NULL, &err);
    n = fd >= 0 ? read(fd, got, sizeof got - 1) : -1;
    CHECK(n == 5 && !memcmp(got, "hello", 5), "… and the blob keeps its bytes");
    if (fd >= 0)
        close(fd);

    /* in pieces, within a cap */
    sl_blob_writer *w = NULL;
    CHECK(sl_store_blob_create(s, K2, 8, &w, &err) == 0 && w, "a blob is started with a cap of 8");
    CHECK(sl_blob_write(w, "12345", 5, &err) == 0, "5 bytes go in");
    CHECK(sl_blob_write(w, "6789", 4, &err) == -1 && err.code == SL_ELIMIT,
          "4 more pass the cap: SL_ELIMIT (%s)", err.msg ? err.msg : "(none)");
    sl_err_clear(&err);
    CHECK(sl_blob_write(w, "678", 3, &err) == 0, "3 more fit");
    CHECK(sl_blob_commit(w, &err) == 0, "it is committed");
    sl_buf_init(&b, 0);
    CHECK(sl_store_blob_get(s, K2, 0, &b, &err) == 0 && b.len == 8 &&
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

    CHECK(sl_store_blob_delete(s, K2, &err) == 0, "a blob is deleted");
    CHECK(sl_store_blob_open(s, K2, NULL, &err) == -1 && err.code == SL_ENOTFOUND,
          "… and is gone");
    sl_err_clear(&err);
    CHECK(sl_store_blob_delete(s, K2, &err) == -1 && err.code == SL_ENOTFOUND,
          "deleting it again: SL_ENOTFOUND");
    sl_err_clear(&err);

    /* keys that could name a path are never taken */
    const char *bad[] = {"../sluice.db", "sluice.db", "/etc/passwd", "",
                         "0123ABCD-0000-4000-8000-00000000AAAA", K1 + 1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(sl_store_blob_open(s, bad[i], NULL, &err) == -1 && err.code == SL_EINVAL,
              "key '%s' is refused for reading: %s", bad[i], err.msg ? err.msg : "(none)");
        sl_err_clear(&err);
        CHECK(sl_store_blob_put(s, bad[i], "x", 1, 0, &err) == -1 && err.code == SL_EINVAL,
              "… and for writing");
        sl_err_clear(&err);
        CHECK(sl_store_blob_delete(s, bad[i], &err) == -1 && err.code == SL_EINVAL,
              "… and for deleting");
        sl_err_clear(&err);
    }
    CHECK(sl_store_blob_open(s, NULL, NULL, &err) == -1, "no key is refused");
    sl_err_clear(&err);
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

/* A file opens only for its app and, when it has an owner, that user. */
static void test_file_owner(void)
{
    char *dir = tmpdir();
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    sl_store_open(dir, &s, &interrupted, &err);
    sl_store_blob_put(s, K1, "dave's", 6, 0, &err);
    sl_store_file_add(s, K1, "app1", "d.txt", 6, "text/plain", "dave", &err);
    sl_store_blob_put(s, K2, "anyone's", 8, 0, &err);
    sl_store_file_add(s, K2, "app1", "a.txt", 8, "text/plain", "", &err);
    struct {
        const char *app, *user, *id;
        bool may;
    } cases[] = {
        {"app1", "dave", K1, true},   {"app1", "erin", K1, false}, {"app1", NULL, K1, false},
        {"app2", "dave", K1, false},  {"app1", "erin", K2, true},  {"app1", NULL, K2, true},
        {"app2", NULL, K2, false},    {"app1", "dave", K3, false}, {"app1", "dave", "x", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sl_value *m = sl_store_file_find(s, cases[i].app, cases[i].user, cases[i].id);
        int fd = sl_store_file_open(s, cases[i].app, cases[i].user, cases[i].id, &err);
        CHECK((m != NULL) == cases[i].may && (fd >= 0) == cases[i].may,
              "file %s for %s and user %s: %s", cases[i].id, cases[i].app,
              cases[i].user ? cases[i].user : "(none)", cases[i].may ? "opens" : "refused");
        if (fd < 0)
            CHECK(err.code == SL_ENOTFOUND, "… as not found");
        sl_err_clear(&err);
        if (fd >= 0)
            close(fd);
        json_decref(m);
    }
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

/* A conversation is named after its first query, cut to 48 bytes: never
 * inside a character (a cut one is no UTF-8, and the list dropped it). */
static void test_conversation_name(void)
{
    char *dir = tmpdir();
    sl_store *s;
    int interrupted;
    sl_err err = {0};
    sl_store_open(dir, &s, &interrupted, &err);
    char *app = NULL, *c1 = NULL, *c2 = NULL;
    sl_store_app_add(s, "a", "advanced-chat", "app: {}", &app, &err);
    char q[128] = "a";
    for (int i = 0; i < 36; i++)
        strcat(q, "\xc3\xa9");  /* é, two bytes: 48 would cut the 24th */
    sl_store_conversation(s, app, "u", NULL, q, &c1, &err);
    sl_store_conversation(s, app, "u", NULL, "plain", &c2, &err);
    sl_value *list = sl_store_conversations(s, app, "u", 20);
    const sl_value *data = json_object_get(list, "data");
    CHECK(json_array_size(data) == 2, "both conversations are listed (%zu)", json_array_size(data));
    const char *name = NULL;
    for (size_t i = 0; i < json_array_size(data); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(data, i), "id")) ?: "", c1))
            name = json_string_value(json_object_get(json_array_get(data, i), "name"));
    CHECK(name && strlen(name) == 47 && !strncmp(name, q, 47),
          "… the long one named by its first 47 bytes, whole characters: %s", name ? name : "(none)");
    json_decref(list);
    free(app);
    free(c1);
    free(c2);
    sl_err_clear(&err);
    sl_store_close(s);
    rm_rf(dir);
    free(dir);
}

int main(void)
{
    test_conversation_name();
    test_backends();
    test_blobs();
    test_file_owner();
    test_ownership();
    test_private_modes();
    test_random_fails_closed();
    return tap_done();
}
