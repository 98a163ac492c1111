/*
 * startup_bench — sluice as a user meets it: whole processes, started,
 * waited for and timed from outside, beside a yardstick run in the same
 * session (issue 14, section 6):
 *
 *   sluice --help, limits, render (a one-line template) and validate (a
 *   50-node workflow) against /bin/true: target <= 3x, as git and sqlite3
 *   start;
 *   sluice sandbox run -- true against
 *   bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true:
 *   target <= 0.5x (skipped, and counted, when bubblewrap is missing).
 *
 * Each pair alternates (sluice, peer, sluice, peer, ...) so that noise on a
 * shared machine hits both alike; the times are medians (and minimums) of
 * the wall time from posix_spawn to waitpid, output to /dev/null, and the
 * ratio is the median of the ratios of each pair's two runs, which a
 * machine whose speed drifts during the run moves least.
 * Prints one line per command and PASS/FAIL per target; exits 1 on a miss.
 *
 *   startup_bench SLUICE DSL TEMPLATE [-n ROUNDS]
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One whole process: its wall time in seconds, or -1 when it could not be
 * started or did not exit 0 (the figure would not be of the command). */
static double run_once(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int st;
    double t0 = now();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc || waitpid(pid, &st, 0) < 0)
        return -1;
    double t = now() - t0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

static void show(char *const argv[], char *out, size_t n)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; argv[i] && o < n; i++) {
        const char *a = argv[i];
        if (i == 0 && strrchr(a, '/') && strstr(a, "sluice"))
            a = "sluice";
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? " " : "", a);
    }
}

/* Runs ours and peer in turn, rounds times each, which one first
 * alternating (a process leaves work behind it, bubblewrap's network
 * namespace is torn down by a kernel worker after it exits, and that
 * slows whatever runs next: the same run following the peer every time
 * came out 1-5% slower than following itself); prints the line and
 * returns 0 (met), 1 (missed) or 2 (a command failed). */
static int pair(const char *what, char *const ours[], char *const peer[], int rounds,
                double target)
{
    double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
    double *r = calloc((size_t)rounds, sizeof *r);
    if (!a || !b || !r)
        return 2;
    run_once(ours); /* warm the page cache and the dynamic loader's */
    run_once(peer);
    for (int i = 0; i < rounds; i++) {
        if (i % 2 == 0) {
            a[i] = run_once(ours);
            b[i] = run_once(peer);
        } else {
            b[i] = run_once(peer);
            a[i] = run_once(ours);
        }
        if (a[i] < 0 || b[i] < 0) {
            char cmd[256];
            show(a[i] < 0 ? ours : peer, cmd, sizeof cmd);
            printf("%-22s FAIL: `%s` did not run or exit 0\n", what, cmd);
            free(a), free(b), free(r);
            return 2;
        }
        r[i] = a[i] / b[i];
    }
    double ma = median(a, rounds), mb = median(b, rounds);
    double ratio = median(r, rounds);
    char pn[96];
    show(peer, pn, sizeof pn);
    if (strlen(pn) > 14)
        snprintf(pn, sizeof pn, "%s", strncmp(peer[0], "/bin/true", 9) ? "bwrap" : "/bin/true");
    printf("%-22s %7.2f ms (min %6.2f)  %-9s %6.2f ms (min %6.2f)  %5.2fx (target <= %.1fx)  %s\n",
           what, ma * 1e3, a[0] * 1e3, pn, mb * 1e3, b[0] * 1e3, ratio, target,
           ratio <= target ? "PASS" : "FAIL");
    free(a), free(b), free(r);
    return ratio <= target ? 0 : 1;
}

static const char *find_bwrap(void)
{
    static const char *const paths[] = {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        if (!access(paths[i], X_OK))
            return paths[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 6 && !strcmp(argv[4], "-n"))) {
        fprintf(stderr, "usage: startup_bench SLUICE DSL TEMPLATE [-n ROUNDS]\n");
        return 2;
    }
    char *sl = argv[1], *dsl = argv[2], *tmpl = argv[3];
    int rounds = argc == 6 && atoi(argv[5]) > 2 ? atoi(argv[5]) : 41;
    char *truth[] = {"/bin/true", NULL};
    char *help[] = {sl, "--help", NULL};
    char *limits[] = {sl, "limits", NULL};
    char *render[] = {sl, "render", tmpl, "--context", "{\"name\": \"world\"}", NULL};
    char *validate[] = {sl, "validate", dsl, NULL};
    int missed = 0, rc;
    printf("# %d pairs of runs, each a whole process (posix_spawn to waitpid): median "
           "(min) times, median of the pairs' ratios\n",
           rounds);
    if ((rc = pair("sluice --help", help, truth, rounds, 3.0)))
        missed++;
    if ((rc = pair("sluice limits", limits, truth, rounds, 3.0)))
        missed++;
    if ((rc = pair("sluice render", render, truth, rounds, 3.0)))
        missed++;
    if ((rc = pair("sluice validate (50)", validate, truth, rounds, 3.0)))
        missed++;
    const char *bw = find_bwrap();
    int skipped = 0;
    if (bw) {
        char *sb[] = {sl, "sandbox", "run", "--", "true", NULL};
        char *bwrap[] = {(char *)bw, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
                         "--proc", "/proc", "true", NULL};
        if (pair("sandbox run -- true", sb, bwrap, rounds, 0.5))
            missed++;
    } else {
        skipped++;
        printf("sandbox run -- true    skipped: bubblewrap is not installed (Debian package "
               "bubblewrap)\n");
    }
    printf("# startup: %d target(s) missed, %d skipped\n", missed, skipped);
    return missed ? 1 : 0;
}
