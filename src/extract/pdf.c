/*
 * pdf — a PDF's text from poppler's pdftotext, run in a fresh local
 * sandbox (pdf.h).
 */
#include "extract/pdf.h"

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "sandbox/sandbox.h"

#define FAIL "Failed to extract text from PDF: "

/* From this size on (bytes), the pages are shared out among several
 * pdftotext processes (sl_extract_pdf). */
#define SPLIT_BYTES (256u << 10)

/* $1 is pdftotext, $2 sluice's guess at the page count (count_pages; 0
 * when it has none, and pdfinfo counts them).  The PDF (stdin) goes to
 * /tmp; each of N readers (N = CPUs, at most 4, fewer for few pages)
 * writes its pages' text to a file of its own, and the files are printed
 * in order.  The last reader reads to the end, so a count that is too low
 * costs only balance; one that is too high leaves the last readers with
 * no pages, which pdftotext refuses ("Wrong page range"), and such a
 * reader's text is empty.  Any other failure of a reader is the script's
 * (its exit status, its stderr), so errors read as one pdftotext's. */
#define SPLIT_SCRIPT                                                                            \
    "cat >/tmp/in.pdf || exit 99\n"                                                            \
    "n=$2; case $n in ''|*[!0-9]*) n=0;; esac\n"                                               \
    "[ \"$n\" -gt 0 ] ||\n"                                                                   \
    "  n=$(pdfinfo /tmp/in.pdf 2>/dev/null | sed -n 's/^Pages:[[:space:]]*//p')\n"            \
    "c=$(nproc 2>/dev/null || echo 1); [ \"$c\" -gt 4 ] && c=4\n"                              \
    "case $n in ''|*[!0-9]*) n=0;; esac\n"                                                      \
    "[ $((n / 8)) -lt \"$c\" ] && c=$((n / 8))\n"                                               \
    "if [ \"$c\" -lt 2 ]; then exec \"$1\" -raw -enc UTF-8 -eol unix /tmp/in.pdf -; fi\n"      \
    "i=0; f=1\n"                                                                               \
    "while [ $i -lt $c ]; do\n"                                                                \
    "  l=$(( (i + 1) * n / c )); last=\"-l $l\"; [ $((i + 1)) -eq $c ] && last=\n"             \
    "  \"$1\" -raw -enc UTF-8 -eol unix -f $f $last /tmp/in.pdf /tmp/out.$i 2>/tmp/err.$i &\n" \
    "  eval p$i=$!; f=$((l + 1)); i=$((i + 1))\n"                                              \
    "done\n"                                                                                  \
    "s=0; i=0\n"                                                                               \
    "while [ $i -lt $c ]; do eval wait \\$p$i; r=$?\n"                                         \
    "  if [ $r -eq 99 ] && [ $i -gt 0 ] && grep -q 'Wrong page range' /tmp/err.$i; then\n"     \
    "    : >/tmp/out.$i; : >/tmp/err.$i; r=0; fi\n"                                             \
    "  [ $s -eq 0 ] && s=$r; cat /tmp/err.$i >&2; i=$((i + 1)); done\n"                        \
    "[ $s -eq 0 ] || exit $s\n"                                                                \
    "i=0; while [ $i -lt $c ]; do cat /tmp/out.$i || exit 98; i=$((i + 1)); done\n"

/* Is c a PDF white-space or delimiter character (ISO 32000-1, 7.2.2)? */
static bool pdf_delim(unsigned char c)
{
    return !c || strchr(" \t\n\f\r()<>[]{}/%", c);
}

/* A guess at the number of pages from the bytes alone: the page objects'
 * "/Type /Page" entries.  It reads no structure, so it can be wrong
 * (pages inside compressed object streams are not seen, an incremental
 * update repeats a page); the split script only balances work on it.
 * 0: none seen. */
static unsigned count_pages(const unsigned char *d, size_t len)
{
    unsigned n = 0;
    const unsigned char *p = d, *end = d + len;
    while ((p = memmem(p, (size_t)(end - p), "/Type", 5)) != NULL) {
        p += 5;
        while (p < end && (!*p || strchr(" \t\n\f\r", *p)))
            p++;
        if (end - p >= 5 && !memcmp(p, "/Page", 5) && (end - p == 5 || pdf_delim(p[5]))) {
            if (n < UINT_MAX)
                n++;
            p += 5;
        }
    }
    return n;
}

/* pdftotext's complaints kept for the message: its first lines are the
 * ones that say why; a damaged PDF can make it write a warning per
 * operator, and those are counted, not kept. */
#define ERR_KEEP 4096

typedef struct {
    char text[ERR_KEEP + 1];
    size_t len;
    bool (*stop)(void *ud); /* the caller's, and its argument */
    void *ud;
} err_text;

static bool cancelled(void *ud)
{
    err_text *e = ud;
    return e->stop(e->ud);
}

static void keep_err(const char *data, size_t len, void *ud)
{
    err_text *e = ud;
    size_t room = ERR_KEEP - e->len;
    if (len > room)
        len = room;
    memcpy(e->text + e->len, data, len);
    e->len += len;
    e->text[e->len] = '\0';
}

/* PDFium (and poppler) look for the header in the first 1024 bytes;
 * without one the file is not a PDF, and no sandbox is needed to say so. */
static bool has_header(const unsigned char *p, size_t len)
{
    size_t n = len < 1024 ? len : 1024;
    for (size_t i = 0; i + 5 <= n; i++)
        if (p[i] == '%' && !memcmp(p + i, "%PDF-", 5))
            return true;
    return false;
}

/* pdftotext's errors, cleaned up for a message: the "Syntax Error: ",
 * "Syntax Error (123): " and "Command Line Error: " prefixes dropped,
 * warnings left out, repeats kept once, at most three, printable ASCII
 * only (they can quote bytes of the PDF), at most about 300 bytes. */
static void clean_errors(const char *s, char *out, size_t n)
{
    size_t o = 0, kept = 0;
    out[0] = '\0';
    while (*s && kept < 3) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        const char *l = s;
        s += len + (eol ? 1 : 0);
        if (!len || !strncmp(l, "Syntax Warning", 14) || !strncmp(l, "Internal Error", 14))
            continue;
        const char *colon = memchr(l, ':', len);
        if (colon && (colon - l) < 40 && strstr(l, "Error") && strstr(l, "Error") < colon) {
            len -= (size_t)(colon + 1 - l);
            l = colon + 1;
            while (len && *l == ' ')
                l++, len--;
        }
        if (!len)
            continue;
        char line[160];
        size_t m = len < sizeof line - 1 ? len : sizeof line - 1;
        for (size_t i = 0; i < m; i++)
            line[i] = l[i] >= 0x20 && l[i] < 0x7f ? l[i] : '?';
        line[m] = '\0';
        if (strstr(out, line))
            continue;
        int w = snprintf(out + o, n - o, "%s%s", kept ? "; " : "", line);
        if (w < 0 || (size_t)w >= n - o)
            break;
        o += (size_t)w;
        kept++;
    }
}

/* Dify's joining: each page's text as it is, minus the line breaks
 * pdftotext puts after a page's last line, the pages run together.  The
 * raw text has a "\f" after every page. */
static void join_pages(const char *raw, size_t len, sl_buf *text)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && raw[i] != '\f')
            continue;
        size_t end = i;
        while (end > start && (raw[end - 1] == '\n' || raw[end - 1] == '\r'))
            end--;
        sl_buf_add(text, raw + start, end - start);
        start = i + 1;
    }
}

static int failed(const sl_sandbox_result *r, const err_text *et, size_t max_raw,
                  const sl_extract_limits *lim, uint64_t mem, double timeout_s, sl_err *err)
{
    char why[400];
    switch (r->kind) {
    case SL_EXIT_TIMEOUT:
        return sl_err_limit(err, SL_ETIMEOUT, NULL,
                            FAIL "pdftotext did not finish within %g s; the PDF is very large "
                            "or built to be slow to read (a decompression bomb)",
                            timeout_s);
    case SL_EXIT_CANCELED:
        return sl_err_set(err, SL_ECANCELED, FAIL "the run was stopped while pdftotext read it");
    case SL_EXIT_SIGNALED:
        return sl_err_set(err, SL_EPARSE,
                          FAIL "pdftotext crashed on this PDF (signal %d, %s); the file is "
                          "probably damaged",
                          r->sig, strsignal(r->sig));
    case SL_EXIT_LIMIT:
        switch (r->hit) {
        case SL_SBLIMIT_OUTPUT:
            if (r->out_truncated)
                return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                                    FAIL "its text is larger than extract_max_output "
                                    "(%zu bytes); raise extract_max_output to read it",
                                    lim->max_output);
            return sl_err_set(err, SL_EPARSE,
                              FAIL "pdftotext wrote more than %zu bytes of complaints about "
                              "it; the file is badly damaged",
                              max_raw);
        case SL_SBLIMIT_MEMORY:
            return sl_err_limit(err, SL_ELIMIT, NULL,
                                FAIL "pdftotext went over its memory limit (%llu MiB); the "
                                "PDF is too large or built to expand without end (a "
                                "decompression bomb)",
                                (unsigned long long)(mem >> 20));
        case SL_SBLIMIT_CPU:
        case SL_SBLIMIT_CPU_OR_FILE_SIZE:
            return sl_err_limit(err, SL_ETIMEOUT, NULL,
                                FAIL "pdftotext ran out of CPU time (%g s); the PDF is very "
                                "large or built to be slow to read",
                                timeout_s);
        default:
            return sl_err_set(err, SL_ELIMIT, FAIL "pdftotext was stopped: it went over the "
                              "sandbox's %s limit", r->limit);
        }
    case SL_EXIT_EXITED:
        break;
    }
    clean_errors(et->text, why, sizeof why);
    if (r->code == 127)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          FAIL "pdftotext is not installed; install the Debian package "
                          "poppler-utils (%s)",
                          why[0] ? why : "command not found");
    if (strstr(et->text, "Incorrect password"))
        return sl_err_set(err, SL_EPARSE,
                          FAIL "the PDF is encrypted and needs a password to open; remove "
                          "the password and upload it again");
    if (r->code == 3)
        return sl_err_set(err, SL_EPARSE, FAIL "the PDF's permissions forbid copying its text");
    return sl_err_set(err, SL_EPARSE,
                      FAIL "the file is damaged, truncated or not a PDF (pdftotext exited with "
                      "%d: %s)",
                      r->code, why[0] ? why : "no reason given");
}

int sl_extract_pdf(const void *data, size_t len, const sl_extract_limits *lim, double timeout_s,
                   sl_buf *out, sl_err *err)
{
    return sl_extract_pdf_until(data, len, lim, timeout_s, NULL, NULL, out, err);
}

int sl_extract_pdf_until(const void *data, size_t len, const sl_extract_limits *lim,
                         double timeout_s, bool (*stop)(void *ud), void *ud, sl_buf *out,
                         sl_err *err)
{
    sl_extract_limits dflt;
    if (!lim) {
        sl_extract_limits_default(&dflt);
        lim = &dflt;
    }
    if (timeout_s <= 0)
        timeout_s = SL_EXTRACT_PDF_TIMEOUT;
    if (!len)
        return sl_err_set(err, SL_EPARSE, FAIL "the file is empty");
    if (!has_header(data, len))
        return sl_err_set(err, SL_EPARSE,
                          FAIL "the file is not a PDF (no %%PDF- header in its first 1024 "
                          "bytes)");

    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.provider = "local";
    o.net = SL_NET_NONE;
    o.memory_bytes = SL_EXTRACT_PDF_MEMORY;
    o.max_procs = 16;
    o.disk_bytes = 16u << 20;   /* pdftotext writes nothing; tmpfs is memory */
    o.cpu_seconds = timeout_s < 1e6 ? (int)timeout_s + 2 : 1000000;
    o.max_open_files = 64;
    o.max_file_bytes = 1u << 20;

    /* pdftotext's text keeps its page breaks ("\f" after each page) and the
     * line breaks after a page's last line, which join_pages drops: a
     * little more than max_output may come before the text is known to be
     * too long. */
    size_t max_raw = lim->max_output + lim->max_output / 8 + 65536;
    const char *prog = getenv("SLUICE_PDFTOTEXT");
    /* -raw: the text in the order the page draws it, as PDFium and pypdf
     * give it, not poppler's reading-order guess (which also costs time). */
    const char *argv[] = {prog && prog[0] ? prog : "pdftotext", "-raw", "-enc", "UTF-8",
                          "-eol", "unix", "-", "-", NULL};
    /* A large PDF is read by one pdftotext per CPU (up to four), each on
     * its share of the pages (count_pages or pdfinfo counts them), their
     * texts put back in page order: pdftotext is single-threaded, and most of a long
     * document's time is its own.  A small one, or one pdfinfo cannot
     * count, is read by one pdftotext from stdin as above. */
    char pages[16];
    snprintf(pages, sizeof pages, "%u", count_pages(data, len));
    const char *split[] = {"/bin/sh", "-c", SPLIT_SCRIPT, "sh",
                           prog && prog[0] ? prog : "pdftotext", pages, NULL};
    bool parallel = len >= SPLIT_BYTES;
    if (parallel) {
        /* the copy of the PDF and the readers' texts are files in /tmp */
        o.max_file_bytes = (len > max_raw ? (uint64_t)len : (uint64_t)max_raw) + (1u << 20);
        o.disk_bytes = (uint64_t)len + 2 * (uint64_t)max_raw + (1u << 20);
        if (o.disk_bytes > o.memory_bytes / 2)
            parallel = false;  /* the copy would take the memory the readers need */
    }
    /* pdftotext allocates a small object per glyph and frees a page's
     * worth at once; glibc's default per-thread cache (7 chunks a size)
     * sends most of those frees through its bins, and a large cache makes
     * the same work about 15% cheaper. */
    static const char *const env[] = {
        "GLIBC_TUNABLES=glibc.malloc.tcache_count=65000:glibc.malloc.tcache_max=4096", NULL};
    err_text et = {.len = 0, .stop = stop, .ud = ud};
    et.text[0] = '\0';
    sl_sandbox_cmd c = {
        .argv = parallel ? split : argv,
        .stdin_data = data,
        .stdin_len = len,
        .env = env,
        .timeout_s = timeout_s,
        .max_output_bytes = max_raw,
        .on_stderr = keep_err,
        .ud = &et,
        .cancelled = stop ? cancelled : NULL,
        .last = true,
    };
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    if (sl_sandbox_run(&o, &c, &r, err)) {
        sl_sandbox_result_release(&r);
        return sl_err_prefix(err, FAIL "no sandbox to run pdftotext in");
    }
    if (r.kind != SL_EXIT_EXITED || r.code != 0) {
        int rc = failed(&r, &et, max_raw, lim, o.memory_bytes, timeout_s, err);
        sl_sandbox_result_release(&r);
        return rc;
    }
    sl_buf text;
    sl_buf_init(&text, 0);
    join_pages(r.out.data ? r.out.data : "", r.out.len, &text);
    sl_sandbox_result_release(&r);
    if (text.len > lim->max_output) {
        sl_buf_release(&text);
        return sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                            FAIL "its text is larger than extract_max_output (%zu bytes); "
                            "raise extract_max_output to read it",
                            lim->max_output);
    }
    /* pdftotext writes what a font's ToUnicode map says, which need not be
     * valid UTF-8 (lone surrogates); text values must be. */
    if (sl_utf8_valid(text.data ? text.data : "", text.len))
        sl_buf_add(out, text.data ? text.data : "", text.len);
    else
        sl_utf8_clean(text.data, text.len, out);
    sl_buf_release(&text);
    return 0;
}
