/*
 * extract_bench — a PDF's text with sluice (sl_extract_pdf: a fresh local
 * sandbox running pdftotext, its start included) against pypdf, Dify's
 * fallback reader and the one Debian has (PDFium, Dify's first choice, is
 * not packaged):
 *
 *   whole path: sl_extract_pdf against `/usr/bin/python3 -c` reading the
 *   PDF and running extract_text over every page (a whole process, as a
 *   worker that is not warm pays it): target sluice >= 10x faster per
 *   document;
 *   warm pypdf: the same extraction timed inside one running interpreter,
 *   after a warm-up (parse and extract only): informational.
 *
 * Documents: tests/documents/gen_pdf.py --bench writes multi (5 pages) and
 * pages300 (300 pages) into bench/out/pdf/.  Each pair alternates which
 * runs first, so that drift on a shared machine hits both alike; times are
 * medians (and minimums), the ratio the median of the pairs' ratios, as
 * bench/startup_bench.c does.  Exits 1 on a missed target, 2 when it
 * cannot run.
 *
 *   extract_bench [-n ROUNDS]      (from the repository's root)
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

#include "extract/pdf.h"

extern char **environ;

#define PY "/usr/bin/python3"
#define OUT "bench/out/pdf"

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

/* pypdf over every page, as Dify's fallback reads (the text discarded). */
static const char pypdf_src[] =
    "import io, sys, pypdf\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "text = ''.join(p.extract_text() or '' for p in pypdf.PdfReader(io.BytesIO(data)).pages)\n"
    "sys.stdout.write(str(len(text)))\n";

/* The same in a warm interpreter: one warm-up, then ROUNDS timed runs;
 * prints the median and minimum in seconds. */
static const char pypdf_warm_src[] =
    "import io, sys, time, pypdf\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "def run():\n"
    "    return ''.join(p.extract_text() or '' for p in pypdf.PdfReader(io.BytesIO(data)).pages)\n"
    "run()\n"
    "ts = []\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)\n"
    "ts.sort()\n"
    "print('%.9f %.9f' % (ts[len(ts) // 2], ts[0]))\n";

/* A whole process; its wall time, or -1 when it failed.  out (may be NULL)
 * gets its stdout. */
static double run_proc(char *const argv[], char *out, size_t n)
{
    int pfd[2];
    if (pipe(pfd))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    pid_t pid;
    int st;
    double t0 = now();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    size_t got = 0;
    char sink[4096];
    ssize_t r;
    while ((r = read(pfd[0], out && got < n - 1 ? out + got : sink,
                     out && got < n - 1 ? n - 1 - got : sizeof sink)) > 0)
        if (out && got < n - 1)
            got += (size_t)r;
    close(pfd[0]);
    if (out)
        out[got] = '\0';
    if (rc || waitpid(pid, &st, 0) < 0)
        return -1;
    double t = now() - t0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 0);
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        sl_buf_add(&b, tmp, n);
    fclose(f);
    *len = b.len;
    return sl_buf_detach(&b);
}

/* One sl_extract_pdf; its wall time, or -1 (and the error shown). */
static double ours(const char *pdf, size_t len, size_t *text_len)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    double t0 = now();
    int rc = sl_extract_pdf(pdf, len, NULL, 60, &out, &err);
    double t = now() - t0;
    if (rc)
        fprintf(stderr, "extract_bench: %s\n", err.msg);
    *text_len = out.len;
    sl_buf_release(&out);
    sl_err_clear(&err);
    return rc ? -1 : t;
}

/* Prints the document's lines; returns 0 (met), 1 (missed), 2 (failed). */
static int document(const char *name, int rounds, double target)
{
    char path[256];
    snprintf(path, sizeof path, OUT "/%s.pdf", name);
    size_t len, text_len = 0;
    char *pdf = slurp(path, &len);
    if (!pdf) {
        printf("%-10s FAIL: %s is missing\n", name, path);
        return 2;
    }
    char *py[] = {PY, "-c", (char *)pypdf_src, path, NULL};
    double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
    double *r = calloc((size_t)rounds, sizeof *r);
    char pychars[64];
    int rc = 2;
    if (!a || !b || !r)
        goto out;
    /* warm the page cache, the loader's and the sandbox's kept roots */
    if (ours(pdf, len, &text_len) < 0 || run_proc(py, pychars, sizeof pychars) < 0) {
        printf("%-10s FAIL: a warm-up run failed (is pypdf there: python3-pypdf?)\n", name);
        goto out;
    }
    for (int i = 0; i < rounds; i++) {
        size_t tl;
        if (i % 2 == 0) {
            a[i] = ours(pdf, len, &tl);
            b[i] = run_proc(py, NULL, 0);
        } else {
            b[i] = run_proc(py, NULL, 0);
            a[i] = ours(pdf, len, &tl);
        }
        if (a[i] < 0 || b[i] < 0) {
            printf("%-10s FAIL: %s did not run\n", name, a[i] < 0 ? "sl_extract_pdf" : "pypdf");
            goto out;
        }
        r[i] = b[i] / a[i];
    }
    double ma = median(a, rounds), mb = median(b, rounds), ratio = median(r, rounds);
    double amin = a[0], bmin = b[0];  /* median() sorted them */
    printf("%-10s %7zu B pdf, %7zu B text  sluice %8.2f ms (min %7.2f)  pypdf process %8.2f ms "
           "(min %7.2f)  %6.1fx faster (target >= %.0fx)  %s\n",
           name, len, text_len, ma * 1e3, amin * 1e3, mb * 1e3, bmin * 1e3, ratio, target,
           ratio >= target ? "PASS" : "FAIL");
    rc = ratio >= target ? 0 : 1;

    /* pypdf warm, in one interpreter: informational. */
    char nr[16], warm[128];
    snprintf(nr, sizeof nr, "%d", rounds);
    char *pw[] = {PY, "-c", (char *)pypdf_warm_src, path, nr, NULL};
    double wm, wmin;
    if (run_proc(pw, warm, sizeof warm) < 0 || sscanf(warm, "%lf %lf", &wm, &wmin) != 2)
        printf("%-10s warm pypdf: FAIL, the timing script did not run\n", name);
    else
        printf("%-10s %-68s pypdf warm    %8.2f ms (min %7.2f)  %6.1fx faster (medians; "
               "informational)\n",
               name, "", wm * 1e3, wmin * 1e3, wm / ma);
out:
    free(a), free(b), free(r);
    free(pdf);
    return rc;
}

int main(int argc, char **argv)
{
    int rounds = 21;
    if (argc == 3 && !strcmp(argv[1], "-n") && atoi(argv[2]) > 2)
        rounds = atoi(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: extract_bench [-n ROUNDS]  (from the repository's root)\n");
        return 2;
    }
    if (access(PY, X_OK)) {
        printf("# extract: skipped: %s is missing\n", PY);
        return 2;
    }
    char *gen[] = {PY, "tests/documents/gen_pdf.py", OUT, "--bench", NULL};
    if (run_proc(gen, NULL, 0) < 0) {
        printf("# extract: FAIL: tests/documents/gen_pdf.py " OUT " --bench did not run (it "
               "needs python3-reportlab and python3-pypdf)\n");
        return 2;
    }
    char ver[128] = "";
    char *pv[] = {PY, "-c", "import sys, pypdf; print('Python', sys.version.split()[0], "
                  "'pypdf', pypdf.__version__)", NULL};
    run_proc(pv, ver, sizeof ver);
    ver[strcspn(ver, "\n")] = '\0';
    printf("# %d pairs per document, alternating; sluice = sl_extract_pdf (a fresh sandbox "
           "running pdftotext, its start included), pypdf = %s -c over all pages (%s)\n",
           rounds, PY, ver);
    int missed = 0, failed = 0;
    static const char *const docs[] = {"multi", "pages300"};
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        int rc = document(docs[i], rounds, 10.0);
        missed += rc == 1;
        failed += rc == 2;
    }
    printf("# extract: %d target(s) missed, %d failed\n", missed, failed);
    return failed ? 2 : missed ? 1 : 0;
}
