/*
 * store — what the store guarantees whoever calls it: keys, tokens and ids
 * only from getrandom (a failure refuses, never falls back to a guessable
 * source); the data folder 0700 and the database 0600, also when they
 * existed with looser modes.
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

int main(void)
{
    test_private_modes();
    test_random_fails_closed();
    return tap_done();
}
