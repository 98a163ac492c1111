/*
 * Kept namespaces and cgroups (src/sandbox/local/kept.h) in one long-lived
 * process, as `sluice serve` uses them: many sandboxes made and destroyed
 * in turn, a few at once, must share a few kept slots and give each back
 * (tests/cli/sandbox_kept.sh covers one sandbox per process).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"
#include "tap.h"

static char dir[64];

static int count(const char *prefix)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && !strstr(e->d_name, ".lock");
    if (d)
        closedir(d);
    return n;
}

static bool run_true(sl_sandbox *sb)
{
    const char *argv[] = {"true", NULL};
    sl_sandbox_cmd c = {.argv = argv};
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    sl_err err = {0};
    bool ok = !sl_sandbox_exec(sb, &c, &r, &err) && r.kind == SL_EXIT_EXITED && r.code == 0;
    sl_err_clear(&err);
    sl_sandbox_result_release(&r);
    return ok;
}

/* Threads making the first sandboxes at once: one builds the root, the
 * others wait for it and join it. */
static sl_sandbox_opts topts;
static void *make_one(void *arg)
{
    sl_sandbox **sb = arg;
    sl_err err = {0};
    if (sl_sandbox_create(&topts, sb, &err)) {
        printf("# thread: %s\n", err.msg);
        *sb = NULL;
    }
    sl_err_clear(&err);
    return NULL;
}

int main(void)
{
    if (geteuid() != 0) {
        printf("1..0 # SKIP kept namespaces are root's\n");
        return 0;
    }
    char tmpl[] = "/tmp/sluice-kept-XXXXXX";
    if (!mkdtemp(tmpl)) {
        printf("1..0 # SKIP no temp folder\n");
        return 0;
    }
    snprintf(dir, sizeof dir, "%s/kept", tmpl);
    setenv("SLUICE_SANDBOX_KEPT", dir, 1);
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.memory_bytes = 0;
    sl_err err = {0};

    topts = o;
    sl_sandbox *first[3] = {NULL, NULL, NULL};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, make_one, &first[i]);
    int kept_ok = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        if (first[i] && run_true(first[i]) && !strstr(sl_local_notes(first[i]), "built here"))
            kept_ok++;
        else if (first[i])
            printf("# notes: %s\n", sl_local_notes(first[i]));
    }
    CHECK(kept_ok == 3 && count("root-") == 1,
          "three threads' first sandboxes at once share one kept root (%d kept, %d roots)",
          kept_ok, count("root-"));
    for (int i = 0; i < 3; i++)
        if (first[i])
            sl_sandbox_destroy(first[i]);
    sl_local_reap_all();

    int made = 0, ran = 0, nets_before = count("net-");
    for (int i = 0; i < 80; i++) {
        sl_sandbox *sb;
        if (sl_sandbox_create(&o, &sb, &err)) {
            printf("# create %d: %s\n", i, err.msg);
            sl_err_clear(&err);
            continue;
        }
        made++;
        ran += run_true(sb);
        sl_sandbox_destroy(sb);
        sl_local_reap_all();  /* its slot is given back once its init is gone */
    }
    CHECK(made == 80 && ran == 80, "80 sandboxes in turn in one process (made %d, ran %d)", made,
          ran);
    sl_local_reap_all();
    int nets = count("net-");
    CHECK(nets == nets_before,
          "each gave its kept network namespace back to the next (%d slots, %d before, not 80)",
          nets, nets_before);
    CHECK(count("root-") == 1, "and one kept root");

    /* Three at once hold three slots; destroyed, the slots are free again. */
    sl_sandbox *three[3] = {NULL, NULL, NULL};
    int live = 0;
    for (int i = 0; i < 3; i++)
        if (!sl_sandbox_create(&o, &three[i], &err) && run_true(three[i]))
            live++;
        else
            sl_err_clear(&err);
    CHECK(live == 3, "three sandboxes at once (%d)", live);
    for (int i = 0; i < 3; i++)
        if (three[i])
            sl_sandbox_destroy(three[i]);
    sl_local_reap_all();
    sl_buf out;
    sl_buf_init(&out, 0);
    CHECK(sl_local_clean(&out, &err) == 0 && strstr(out.data, "kept root namespaces") &&
              count("net-") == 0 && count("root-") == 0,
          "every slot was given back: clean removes them all (%s)", out.data ? out.data : err.msg);
    sl_buf_release(&out);
    sl_err_clear(&err);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd)) {
        /* a leftover temp folder is not the test's subject */
    }
    return tap_done();
}
