/*
 * extract_bench — documents' text with sluice against the Python libraries
 * Dify reads them with.  Each document goes the node's whole path,
 * sl_extract_isolated: a fresh confined `sluice __extract` (its start
 * included) running sluice's reader; for a PDF that reader declines,
 * pdftotext in a fresh local sandbox.  PDF against pypdf, Dify's fallback
 * reader and the one Debian has (PDFium, Dify's first choice, is not
 * packaged); the pdftotext path alone is shown too (informational).  docx
 * and xlsx against python-docx and pandas running Dify's algorithm.  And a 300-page PDF through `sluice run` (a
 * document-extractor workflow) against `python3 -c` with pypdf, both whole
 * processes: target >= 5x.
 *
 *   whole path: sl_extract_isolated against `/usr/bin/python3 -c` reading the
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
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "extract/isolate.h"
#include "extract/pdf.h"

extern char **environ;

#define PY "/usr/bin/python3"
#define OUT "bench/out/pdf"
#define OFFICE "bench/out/office"
#ifndef SLUICE
#define SLUICE "build/sluice"
#endif

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

/* Dify's docx and xlsx readers (graphon's algorithm) over python-docx and
 * pandas, the text discarded. */
static const char docx_src[] =
    "import io, sys, docx\n"
    "from docx.table import Table\n"
    "from docx.text.paragraph import Paragraph\n"
    "d = docx.Document(io.BytesIO(open(sys.argv[1], 'rb').read()))\n"
    "out = []\n"
    "for el in d.element.body.iterchildren():\n"
    "    if el.tag.endswith('}p'):\n"
    "        out.append(Paragraph(el, d).text)\n"
    "    elif el.tag.endswith('}tbl'):\n"
    "        t = Table(el, d); rows = t.rows\n"
    "        if not rows: continue\n"
    "        md = '| ' + ' | '.join(c.text.replace('\\n', '<br>') for c in rows[0].cells) + ' |\\n'\n"
    "        md += '| ' + ' | '.join('---' for _ in rows[0].cells) + ' |\\n'\n"
    "        for r in rows[1:]:\n"
    "            md += '| ' + ' | '.join(c.text.replace('\\n', '<br>') for c in r.cells) + ' |\\n'\n"
    "        out.append(md)\n"
    "sys.stdout.write(str(len('\\n'.join(out))))\n";
static const char xlsx_src[] =
    "import io, sys, pandas as pd\n"
    "x = pd.ExcelFile(io.BytesIO(open(sys.argv[1], 'rb').read()))\n"
    "out = ''\n"
    "for name in x.sheet_names:\n"
    "    df = x.parse(sheet_name=name).dropna(how='all')\n"
    "    df = df.applymap(lambda v: ' '.join(str(v).splitlines()) if isinstance(v, str) else v)\n"
    "    cols = [' '.join(str(c).splitlines()) for c in df.columns]\n"
    "    rows = ['| ' + ' | '.join(map(str, r)) + ' |' for _, r in df.iterrows()]\n"
    "    out += '\\n'.join(['| ' + ' | '.join(cols) + ' |', '| ' + ' | '.join('-' * len(c) for c in cols) + ' |'] + rows) + '\\n\\n'\n"
    "sys.stdout.write(str(len(out)))\n";

/* The documents the Office lines read: a report of paragraphs and tables,
 * a workbook of three sheets. */
static const char office_gen_src[] =
    "import sys, os, datetime, docx, openpyxl\n"
    "out = sys.argv[1]; os.makedirs(out, exist_ok=True)\n"
    "d = docx.Document()\n"
    "for s in range(40):\n"
    "    d.add_heading('Section %d' % s, level=2)\n"
    "    for p in range(6):\n"
    "        d.add_paragraph('Paragraph %d of section %d: the quick brown fox jumps over the lazy dog, ' % (p, s) * 3)\n"
    "    t = d.add_table(rows=8, cols=4)\n"
    "    for r in range(8):\n"
    "        for c in range(4):\n"
    "            t.cell(r, c).text = 'r%dc%d' % (r, c) if r else 'Head %d' % c\n"
    "d.save(os.path.join(out, 'report.docx'))\n"
    "wb = openpyxl.Workbook(); wb.remove(wb.active)\n"
    "for sh in range(3):\n"
    "    ws = wb.create_sheet('S%d' % sh)\n"
    "    ws.append(['id', 'name', 'amount', 'date', 'note', 'flag'])\n"
    "    for i in range(2000):\n"
    "        ws.append([i, 'item %d' % i, i * 1.25, datetime.datetime(2024, 1, 1) + datetime.timedelta(days=i), 'n' * (i % 7), i % 2 == 0])\n"
    "wb.save(os.path.join(out, 'book.xlsx'))\n";

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
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);  /* progress */
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

/* One read by sluice (the isolated path; pdftotext: sl_extract_pdf
 * alone); its wall time, or -1 (and the error shown). */
static double ours_via(sl_doc_kind kind, bool pdftotext, const char *doc, size_t len,
                       size_t *text_len)
{
    sl_buf out;
    sl_buf_init(&out, 0);
    sl_err err = {0};
    sl_extract_run r;
    sl_extract_run_default(&r);
    double t0 = now();
    int rc = pdftotext ? sl_extract_pdf(doc, len, NULL, 60, &out, &err)
                       : sl_extract_isolated(kind, doc, len, &r, &out, &err);
    double t = now() - t0;
    if (rc)
        fprintf(stderr, "extract_bench: %s\n", err.msg);
    *text_len = out.len;
    sl_buf_release(&out);
    sl_err_clear(&err);
    return rc ? -1 : t;
}

static double ours(sl_doc_kind kind, const char *doc, size_t len, size_t *text_len)
{
    return ours_via(kind, false, doc, len, text_len);
}

/* Prints the document's lines; returns 0 (met), 1 (missed), 2 (failed). */
static int document(const char *name, const char *path, sl_doc_kind kind, const char *py_src,
                    const char *lib, int rounds, double target)
{
    size_t len, text_len = 0;
    char *pdf = slurp(path, &len);
    if (!pdf) {
        printf("%-10s FAIL: %s is missing\n", name, path);
        return 2;
    }
    char *py[] = {PY, "-c", (char *)py_src, (char *)path, NULL};
    double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
    double *r = calloc((size_t)rounds, sizeof *r);
    char pychars[64];
    int rc = 2;
    if (!a || !b || !r)
        goto out;
    /* warm the page cache, the loader's and the sandbox's kept roots */
    if (ours(kind, pdf, len, &text_len) < 0 || run_proc(py, pychars, sizeof pychars) < 0) {
        printf("%-10s FAIL: a warm-up run failed (is %s there?)\n", name, lib);
        goto out;
    }
    for (int i = 0; i < rounds; i++) {
        size_t tl;
        if (i % 2 == 0) {
            a[i] = ours(kind, pdf, len, &tl);
            b[i] = run_proc(py, NULL, 0);
        } else {
            b[i] = run_proc(py, NULL, 0);
            a[i] = ours(kind, pdf, len, &tl);
        }
        if (a[i] < 0 || b[i] < 0) {
            printf("%-10s FAIL: %s did not run\n", name, a[i] < 0 ? "sluice" : lib);
            goto out;
        }
        r[i] = b[i] / a[i];
    }
    double ma = median(a, rounds), mb = median(b, rounds), ratio = median(r, rounds);
    double amin = a[0], bmin = b[0];  /* median() sorted them */
    printf("%-10s %7zu B in, %7zu B text  sluice %8.2f ms (min %7.2f)  %s process %8.2f ms "
           "(min %7.2f)  %6.1fx faster (target >= %.0fx)  %s\n",
           name, len, text_len, ma * 1e3, amin * 1e3, lib, mb * 1e3, bmin * 1e3, ratio, target,
           ratio >= target ? "PASS" : "FAIL");
    rc = ratio >= target ? 0 : 1;
    if (kind != SL_DOC_PDF)
        goto out;

    /* pypdf warm, in one interpreter: informational. */
    char nr[16], warm[128];
    snprintf(nr, sizeof nr, "%d", rounds);
    char *pw[] = {PY, "-c", (char *)pypdf_warm_src, (char *)path, nr, NULL};
    double wm, wmin;
    if (run_proc(pw, warm, sizeof warm) < 0 || sscanf(warm, "%lf %lf", &wm, &wmin) != 2)
        printf("%-10s warm pypdf: FAIL, the timing script did not run\n", name);
    else
        printf("%-10s %-68s pypdf warm    %8.2f ms (min %7.2f)  %6.1fx faster (medians; "
               "informational)\n",
               name, "", wm * 1e3, wmin * 1e3, wm / ma);

    /* the pdftotext path alone (what sluice's reader declines takes it) */
    for (int i = 0; i < rounds; i++) {
        size_t tl;
        a[i] = ours_via(kind, true, pdf, len, &tl);
        if (a[i] < 0) {
            printf("%-10s pdftotext path: FAIL, it did not run\n", name);
            goto out;
        }
    }
    double pm = median(a, rounds);
    printf("%-10s %-68s pdftotext     %8.2f ms (min %7.2f)  %6.1fx faster than pypdf "
           "(medians; informational)\n",
           name, "", pm * 1e3, a[0] * 1e3, mb / pm);
out:
    free(a), free(b), free(r);
    free(pdf);
    return rc;
}

/* A 300-page PDF through `sluice run` of a document-extractor workflow
 * against `python3 -c` with pypdf: whole processes, as a user meets them. */
static int whole_run(int rounds, double target)
{
    FILE *f = fopen(OUT "/read.yml", "w");
    if (!f)
        return 2;
    fputs("app: {mode: workflow, name: read}\nkind: app\nversion: 0.1.5\nworkflow:\n  graph:\n"
          "    nodes:\n"
          "    - {id: start, data: {type: start, title: Start, variables: [{variable: doc, label: "
          "Doc, type: file, required: true}]}}\n"
          "    - {id: one, data: {type: document-extractor, title: One, variable_selector: "
          "[start, doc]}}\n"
          "    - {id: end, data: {type: end, title: End, outputs: [{variable: n, "
          "value_selector: [one, text]}]}}\n"
          "    edges:\n    - {source: start, target: one}\n    - {source: one, target: end}\n",
          f);
    fclose(f);
    char *sl[] = {SLUICE, "run", OUT "/read.yml", "--input", "doc=@" OUT "/pages300.pdf", NULL};
    char *py[] = {PY, "-c", (char *)pypdf_src, OUT "/pages300.pdf", NULL};
    double *a = calloc((size_t)rounds, sizeof *a), *b = calloc((size_t)rounds, sizeof *b);
    double *r = calloc((size_t)rounds, sizeof *r);
    int rc = 2;
    if (!a || !b || !r || run_proc(sl, NULL, 0) < 0) {
        printf("sluice run FAIL: `%s run` of the 300-page PDF did not run\n", SLUICE);
        goto out;
    }
    for (int i = 0; i < rounds; i++) {
        if (i % 2 == 0) {
            a[i] = run_proc(sl, NULL, 0);
            b[i] = run_proc(py, NULL, 0);
        } else {
            b[i] = run_proc(py, NULL, 0);
            a[i] = run_proc(sl, NULL, 0);
        }
        if (a[i] < 0 || b[i] < 0)
            goto out;
        r[i] = b[i] / a[i];
    }
    double ma = median(a, rounds), mb = median(b, rounds), ratio = median(r, rounds);
    printf("sluice run (300 pages)  %8.2f ms (min %7.2f)  python3 -c pypdf %8.2f ms (min %7.2f)  "
           "%6.1fx faster (target >= %.0fx)  %s\n",
           ma * 1e3, a[0] * 1e3, mb * 1e3, b[0] * 1e3, ratio, target,
           ratio >= target ? "PASS" : "FAIL");
    rc = ratio >= target ? 0 : 1;
out:
    free(a), free(b), free(r);
    return rc;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);  /* as sluice: a reader may stop reading early */
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
    printf("# %d pairs per document, alternating; sluice = the node's path (a fresh confined "
           "reader, its start included; pdftotext in a sandbox for what it declines), pypdf = "
           "%s -c over all pages (%s)\n",
           rounds, PY, ver);
    if (access(SLUICE, X_OK)) {
        printf("# extract: FAIL: %s is not built\n", SLUICE);
        return 2;
    }
    sl_extract_set_helper(SLUICE);
    int missed = 0, failed = 0;
    static const char *const docs[] = {"multi", "pages300"};
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        char path[256];
        snprintf(path, sizeof path, OUT "/%s.pdf", docs[i]);
        int rc = document(docs[i], path, SL_DOC_PDF, pypdf_src, "pypdf", rounds, 10.0);
        missed += rc == 1;
        failed += rc == 2;
    }
    /* docx and xlsx, read by the built sluice's confined helper */
    char *og[] = {PY, "-c", (char *)office_gen_src, OFFICE, NULL};
    if (access(SLUICE, X_OK) || run_proc(og, NULL, 0) < 0) {
        printf("# extract: FAIL: the Office documents could not be made (python3-docx, "
               "python3-openpyxl) or %s is not built\n", SLUICE);
        failed++;
    } else {
        sl_extract_set_helper(SLUICE);
        int rc = document("report", OFFICE "/report.docx", SL_DOC_DOCX, docx_src, "python-docx",
                          rounds, 10.0);
        missed += rc == 1;
        failed += rc == 2;
        rc = document("book", OFFICE "/book.xlsx", SL_DOC_EXCEL, xlsx_src, "pandas", rounds, 10.0);
        missed += rc == 1;
        failed += rc == 2;
    }
    int rc = whole_run(rounds, 5.0);
    missed += rc == 1;
    failed += rc == 2;
    printf("# extract: %d target(s) missed, %d failed\n", missed, failed);
    return failed ? 2 : missed ? 1 : 0;
}
