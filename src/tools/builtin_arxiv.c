/*
 * builtin_arxiv — Dify's `arxiv` provider: arxiv_search, the papers arXiv's
 * API finds for a query.
 *
 * What sluice sends: GET {base}/api/query?search_query=Q&id_list=
 * &sortBy=relevance&sortOrder=descending&start=0&max_results=3, base being
 * https://export.arxiv.org unless the binding gives another (base_url), Q
 * the query cut to 300 characters.  These are the arxiv package's
 * parameters (Dify's plugin uses it), except that it asks for a page of
 * 100 and keeps 3: sluice asks for the 3 it keeps.
 *
 * The answer is an Atom feed, read by a small bounded reader below (no
 * DTD, no entity but XML's five and character references, CDATA kept):
 * the entries that are children of the <feed>, each with the text of its
 * first <id>, <updated>, <published>, <title> and <summary> and its
 * authors' <name>s; an entry without an id, updated or published date is
 * skipped, as the package skips it.  The text is the plugin's: for each
 * entry "Published: {updated's UTC date}\nTitle: {title, whitespace runs
 * as one space}\nAuthors: {names, ", "}\nSummary: {summary as sent}",
 * joined by a blank line and cut to 4000 characters; "No good Arxiv
 * Result was found" when there is none.  Dify passes that text through
 * the model's summary, which gives text this short back as it is.
 *
 * Where the plugin answers a failure with text ("Arxiv exception: …"), the
 * call fails (SL_EIO), naming arXiv, the status and arXiv's own message.
 */
#include "tools/builtin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http.h"

#define ARXIV_URL "https://export.arxiv.org"
#define QUERY_CHARS 300
#define TOP_K 3
#define TEXT_CHARS 4000
#define DEPTH_MAX 64
#define FIELD_MAX ((size_t)1 << 20)

/* ---- a bounded Atom reader ---- */

enum { F_ID, F_UPDATED, F_PUBLISHED, F_TITLE, F_SUMMARY, F_N };
static const char *const field_names[F_N] = {"id", "updated", "published", "title", "summary"};

typedef enum { R_NONE, R_FEED, R_ENTRY, R_FIELD, R_AUTHOR, R_NAME } role;

typedef struct {
    char name[32];   /* the first bytes of the name as written */
    size_t name_n;   /* its whole length */
    role role;
    bool had_child;  /* text after a child is not the element's .text */
} frame;

typedef struct {
    sl_buf field[F_N];
    bool seen[F_N];
    sl_buf authors;    /* names joined ", " */
    sl_buf name;       /* the author being read */
    bool name_seen;
    int n_authors;
} entry;

typedef struct {
    frame stack[DEPTH_MAX];
    int depth;          /* may pass DEPTH_MAX: deeper elements are counted only */
    bool root_seen, is_feed, cut;
    entry e;
    sl_buf *target;     /* where text goes now, or NULL */
    /* the results */
    sl_buf *out;
    int entries;        /* written to out */
    int max;
    bool first_error;   /* keep only the first entry's summary (error feeds) */
    sl_err *err;
    int rc;
} reader;

/* XML text with its references decoded, appended to b (an unknown
 * reference stays as written). */
static void xml_text(const char *s, size_t n, sl_buf *b)
{
    static const struct {
        const char *name;
        char c;
    } named[] = {{"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            sl_buf_addc(b, s[i]);
            continue;
        }
        const char *semi = memchr(s + i, ';', n - i < 12 ? n - i : 12);
        if (!semi) {
            sl_buf_addc(b, '&');
            continue;
        }
        const char *r = s + i + 1;
        size_t rl = (size_t)(semi - r);
        bool done = false;
        if (rl >= 2 && r[0] == '#') {
            bool hex = r[1] == 'x' || r[1] == 'X';
            uint32_t cp = 0;
            size_t k = hex ? 2 : 1;
            bool ok = k < rl;
            for (; k < rl && ok; k++) {
                int d = hex ? sl_hex_digit((unsigned char)r[k])
                            : (r[k] >= '0' && r[k] <= '9' ? r[k] - '0' : -1);
                ok = d >= 0 && cp <= 0x10FFFF;
                cp = cp * (hex ? 16 : 10) + (uint32_t)(d < 0 ? 0 : d);
            }
            if (ok) {
                sl_buf_add_utf8(b, cp);
                done = true;
            }
        } else {
            for (size_t k = 0; k < sizeof named / sizeof *named && !done; k++)
                if (strlen(named[k].name) == rl && !memcmp(named[k].name, r, rl)) {
                    sl_buf_addc(b, named[k].c);
                    done = true;
                }
        }
        if (!done) {
            sl_buf_addc(b, '&');
            continue;
        }
        i = (size_t)(semi - s);
    }
}

static void entry_reset(entry *e)
{
    for (int f = 0; f < F_N; f++) {
        sl_buf_reset(&e->field[f]);
        e->seen[f] = false;
    }
    sl_buf_reset(&e->authors);
    sl_buf_reset(&e->name);
    e->n_authors = 0;
}

static bool is_space(const char *s, size_t n, size_t *len)
{
    unsigned char c = (unsigned char)s[0];
    *len = 1;
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F))
        return true;
    if (c == 0xC2 && n >= 2 && ((unsigned char)s[1] == 0x85 || (unsigned char)s[1] == 0xA0)) {
        *len = 2;
        return true;
    }
    if (n >= 3 && c >= 0xE1 && c <= 0xE3) {
        unsigned char a = (unsigned char)s[1], b = (unsigned char)s[2];
        *len = 3;
        if (c == 0xE1 && a == 0x9A && b == 0x80)  /* U+1680 */
            return true;
        if (c == 0xE2 && a == 0x80 && (b <= 0x8A || b == 0xA8 || b == 0xA9 || b == 0xAF))
            return true;  /* U+2000-200A, 2028, 2029, 202F */
        if (c == 0xE2 && a == 0x81 && b == 0x9F)  /* U+205F */
            return true;
        if (c == 0xE3 && a == 0x80 && b == 0x80)  /* U+3000 */
            return true;
    }
    *len = 1;
    return false;
}

/* s with every run of whitespace (Python's \s) as one space. */
static void collapse_ws(const char *s, size_t n, sl_buf *out)
{
    bool in_run = false;
    for (size_t i = 0; i < n;) {
        size_t l;
        if (is_space(s + i, n - i, &l)) {
            if (!in_run)
                sl_buf_addc(out, ' ');
            in_run = true;
        } else {
            sl_buf_add(out, s + i, l);
            in_run = false;
        }
        i += l;
    }
}

static long long days_from_civil(long long y, int m, int d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(long long z, long long *y, int *m, int *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

/* An RFC 3339 / ISO 8601 time ("2024-03-05T17:59:46Z", "…-02:00", a date
 * alone) as its UTC date "YYYY-MM-DD" in out[11]; false when it is not one. */
static bool utc_date(const char *s0, size_t n, char out[11])
{
    while (n && (*s0 == ' ' || *s0 == '\t' || *s0 == '\n' || *s0 == '\r')) {
        s0++;
        n--;
    }
    while (n && (s0[n - 1] == ' ' || s0[n - 1] == '\t' || s0[n - 1] == '\n' ||
                 s0[n - 1] == '\r'))
        n--;
    char s[64];
    if (n < 10 || n >= sizeof s)
        return false;
    memcpy(s, s0, n);
    s[n] = '\0';
    int y, mo, d, h = 0, mi = 0, sec = 0;
    if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
        !digits(s + 8, 2, &d) || mo < 1 || mo > 12 || d < 1 || y < 1)
        return false;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
        return false;
    const char *p = s + 10;
    long off = 0;
    if (*p == 'T' || *p == ' ') {
        p++;
        if (!digits(p, 2, &h) || h > 23)
            return false;
        p += 2;
        if (*p == ':') {
            if (!digits(p + 1, 2, &mi) || mi > 59)
                return false;
            p += 3;
            if (*p == ':') {
                if (!digits(p + 1, 2, &sec) || sec > 59)
                    return false;
                p += 3;
                if (*p == '.' || *p == ',') {
                    p++;
                    const char *f = p;
                    while (*p >= '0' && *p <= '9')
                        p++;
                    if (p == f)
                        return false;
                }
            }
        }
        if (*p == 'Z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int oh, om = 0;
            int sign = *p == '-' ? -1 : 1;
            if (!digits(p + 1, 2, &oh) || oh > 23)
                return false;
            p += 3;
            if (*p == ':')
                p++;
            if (*p && (!digits(p, 2, &om) || om > 59))
                return false;
            if (*p)
                p += 2;
            off = sign * (oh * 3600L + om * 60L);
        }
    }
    if (*p)
        return false;
    long long t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
    long long days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    long long yy;
    int mm, dd;
    civil_from_days(days, &yy, &mm, &dd);
    if (yy < 1 || yy > 9999)
        return false;
    snprintf(out, 11, "%04lld-%02d-%02d", yy, mm, dd);
    return true;
}

/* An entry has ended: written to the text when it has what the package
 * needs, skipped when not, an error when its date does not read. */
static void entry_done(reader *r)
{
    entry *e = &r->e;
    if (r->rc || r->entries >= r->max)
        return;
    if (r->first_error) {  /* an error feed: its first entry's summary */
        if (e->seen[F_SUMMARY] && e->field[F_SUMMARY].len) {
            sl_buf_add(r->out, e->field[F_SUMMARY].data, e->field[F_SUMMARY].len);
            r->entries++;
        }
        return;
    }
    if (!e->field[F_ID].len || !e->field[F_UPDATED].len || !e->field[F_PUBLISHED].len)
        return;
    char date[11], pub[11];
    const char *bad = !utc_date(e->field[F_UPDATED].data, e->field[F_UPDATED].len, date)
                          ? e->field[F_UPDATED].data
                      : !utc_date(e->field[F_PUBLISHED].data, e->field[F_PUBLISHED].len, pub)
                          ? e->field[F_PUBLISHED].data
                          : NULL;
    if (bad) {
        char ex[80];
        sl_excerpt(bad, ex, sizeof ex);
        r->rc = sl_err_set(r->err, SL_EIO, "arxiv: arXiv sent an entry whose date '%s' is not "
                           "an ISO 8601 time", ex);
        return;
    }
    if (r->entries)
        sl_buf_adds(r->out, "\n\n");
    sl_buf_addf(r->out, "Published: %s\nTitle: ", date);
    collapse_ws(e->field[F_TITLE].data ? e->field[F_TITLE].data : "", e->field[F_TITLE].len,
                r->out);
    sl_buf_adds(r->out, "\nAuthors: ");
    sl_buf_add(r->out, e->authors.data ? e->authors.data : "", e->authors.len);
    sl_buf_adds(r->out, "\nSummary: ");
    sl_buf_add(r->out, e->field[F_SUMMARY].data ? e->field[F_SUMMARY].data : "",
               e->field[F_SUMMARY].len);
    r->entries++;
}

static void pop(reader *r)
{
    if (r->depth <= 0)
        return;
    r->depth--;
    if (r->depth >= DEPTH_MAX)
        return;
    frame *f = &r->stack[r->depth];
    if (f->role == R_ENTRY) {
        entry_done(r);
    } else if (f->role == R_AUTHOR) {
        if (r->e.n_authors++)
            sl_buf_adds(&r->e.authors, ", ");
        sl_buf_add(&r->e.authors, r->e.name.data ? r->e.name.data : "", r->e.name.len);
    }
    r->target = NULL;
}

static void push(reader *r, const char *name, size_t nl)
{
    /* the local name of an Atom element: no prefix, or "atom:" */
    const char *colon = memchr(name, ':', nl);
    bool atom = !colon || (colon - name == 4 && !memcmp(name, "atom", 4));
    const char *local = colon ? colon + 1 : name;
    size_t ll = nl - (size_t)(local - name);
    frame *parent = r->depth > 0 && r->depth <= DEPTH_MAX ? &r->stack[r->depth - 1] : NULL;
    if (parent)
        parent->had_child = true;
    r->target = NULL;
    if (r->depth >= DEPTH_MAX) {
        r->depth++;
        return;
    }
    frame *f = &r->stack[r->depth++];
    f->name_n = nl;
    snprintf(f->name, sizeof f->name, "%.*s", (int)(nl < sizeof f->name ? nl : sizeof f->name - 1),
             name);
    f->role = R_NONE;
    f->had_child = false;
#define IS(s) (atom && ll == strlen(s) && !memcmp(local, s, ll))
    if (!parent) {
        if (!r->root_seen) {
            r->root_seen = true;
            r->is_feed = IS("feed");
            if (r->is_feed)
                f->role = R_FEED;
        }
    } else if (parent->role == R_FEED && IS("entry")) {
        f->role = R_ENTRY;
        entry_reset(&r->e);
    } else if (parent->role == R_ENTRY) {
        for (int k = 0; k < F_N; k++)
            if (IS(field_names[k]) && !r->e.seen[k]) {
                r->e.seen[k] = true;
                f->role = R_FIELD;
                r->target = &r->e.field[k];
            }
        if (IS("author")) {
            f->role = R_AUTHOR;
            sl_buf_reset(&r->e.name);
            r->e.name_seen = false;
        }
    } else if (parent->role == R_AUTHOR && IS("name") && !r->e.name_seen) {
        r->e.name_seen = true;
        f->role = R_NAME;
        r->target = &r->e.name;
    }
#undef IS
}

/* The end tag `name`: closes up to the open element of that name; an end
 * tag nothing matches is ignored. */
static void end_tag(reader *r, const char *name, size_t nl)
{
    int top = r->depth < DEPTH_MAX ? r->depth : DEPTH_MAX;
    if (r->depth > DEPTH_MAX) {  /* inside elements too deep to name */
        pop(r);
        return;
    }
    for (int i = top - 1; i >= 0; i--) {
        const frame *f = &r->stack[i];
        if (f->name_n == nl && !memcmp(f->name, name, strlen(f->name))) {
            while (r->depth > i)
                pop(r);
            return;
        }
    }
}

static void text(reader *r, const char *s, size_t n, bool cdata)
{
    if (!r->target || r->depth > DEPTH_MAX || r->stack[r->depth - 1].had_child ||
        r->target->len + n > FIELD_MAX)
        return;
    if (cdata)
        sl_buf_add(r->target, s, n);
    else
        xml_text(s, n, r->target);
}

/* Runs the reader over xml (valid UTF-8). */
static void read_xml(reader *r, const char *xml, size_t n)
{
    const char *p = xml, *end = xml + n;
    while (p < end && !r->rc) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        const char *stop = lt ? lt : end;
        if (stop > p)
            text(r, p, (size_t)(stop - p), false);
        if (!lt)
            break;
        p = lt;
        size_t left = (size_t)(end - p);
        if (left >= 9 && !memcmp(p, "<![CDATA[", 9)) {
            const char *e = memmem(p + 9, left - 9, "]]>", 3);
            const char *te = e ? e : end;
            text(r, p + 9, (size_t)(te - p - 9), true);
            p = e ? e + 3 : end;
            continue;
        }
        if (left >= 4 && !memcmp(p, "<!--", 4)) {
            const char *e = memmem(p + 4, left - 4, "-->", 3);
            p = e ? e + 3 : end;
            continue;
        }
        if (left >= 2 && p[1] == '?') {
            const char *e = memmem(p + 2, left - 2, "?>", 2);
            p = e ? e + 2 : end;
            continue;
        }
        if (left >= 2 && p[1] == '!') {  /* a DOCTYPE, its internal subset skipped whole */
            const char *q = p + 2;
            int bracket = 0;
            while (q < end && (bracket || *q != '>')) {
                if (*q == '[')
                    bracket++;
                else if (*q == ']' && bracket)
                    bracket--;
                q++;
            }
            p = q < end ? q + 1 : end;
            continue;
        }
        bool closing = left >= 2 && p[1] == '/';
        const char *nm = p + 1 + closing, *ne = nm;
        while (ne < end && *ne != '>' && *ne != '/' && *ne != ' ' && *ne != '\t' &&
               *ne != '\n' && *ne != '\r')
            ne++;
        /* the tag's end, past quoted attribute values */
        const char *q = ne;
        char quote = 0;
        while (q < end && (quote || *q != '>')) {
            if (quote && *q == quote)
                quote = 0;
            else if (!quote && (*q == '"' || *q == '\''))
                quote = *q;
            q++;
        }
        p = q < end ? q + 1 : end;
        if (ne == nm) {  /* "<" that opens no tag: not XML, skipped */
            continue;
        }
        if (closing) {
            end_tag(r, nm, (size_t)(ne - nm));
        } else {
            push(r, nm, (size_t)(ne - nm));
            if (q < end && q > ne && q[-1] == '/')
                pop(r);
        }
    }
    r->cut = r->depth > 0;
    while (r->depth > 0 && !r->rc)  /* a cut document: what is open ends here */
        pop(r);
}

static void reader_init(reader *r, sl_buf *out, int max, sl_err *err)
{
    memset(r, 0, sizeof *r);
    for (int f = 0; f < F_N; f++)
        sl_buf_init(&r->e.field[f], 0);
    sl_buf_init(&r->e.authors, 0);
    sl_buf_init(&r->e.name, 0);
    r->out = out;
    r->max = max;
    r->err = err;
}

static void reader_release(reader *r)
{
    for (int f = 0; f < F_N; f++)
        sl_buf_release(&r->e.field[f]);
    sl_buf_release(&r->e.authors);
    sl_buf_release(&r->e.name);
}

int sl_builtin_arxiv_text(const char *xml, size_t n, sl_buf *out, sl_err *err)
{
    sl_buf_init(out, 0);
    sl_buf clean;
    sl_buf_init(&clean, 0);
    sl_utf8_clean(xml, n, &clean);
    reader r;
    reader_init(&r, out, TOP_K, err);
    read_xml(&r, clean.data ? clean.data : "", clean.len);
    int rc = r.rc;
    if (!rc && !r.is_feed)
        rc = sl_err_set(err, SL_EIO, "arxiv: arXiv's answer is not an Atom feed (no <feed> "
                        "element); is base_url arXiv's API root?");
    else if (!rc && r.cut)
        rc = sl_err_set(err, SL_EIO, "arxiv: arXiv's answer was cut short: the feed does not "
                        "end (%zu bytes)", n);
    reader_release(&r);
    sl_buf_release(&clean);
    if (rc) {
        sl_buf_release(out);
        return -1;
    }
    if (!r.entries)
        sl_buf_adds(out, "No good Arxiv Result was found");
    sl_builtin_cut_chars(out, TEXT_CHARS);
    return 0;
}

/* The message of an error feed (its first entry's summary), or NULL (new). */
static char *error_message(const char *xml, size_t n)
{
    sl_buf clean, out;
    sl_buf_init(&clean, 0);
    sl_buf_init(&out, 0);
    sl_utf8_clean(xml, n, &clean);
    sl_err err = {0};
    reader r;
    reader_init(&r, &out, 1, &err);
    r.first_error = true;
    read_xml(&r, clean.data ? clean.data : "", clean.len);
    reader_release(&r);
    sl_buf_release(&clean);
    sl_err_clear(&err);
    if (!out.len) {
        sl_buf_release(&out);
        return NULL;
    }
    sl_builtin_cut_chars(&out, 300);
    return sl_buf_detach(&out);
}

/* ---- the tool ---- */

static int arxiv_search(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg, const sl_value *args,
                        sl_tool_result *res, sl_err *err)
{
    char *tq;
    const char *q0 = sl_builtin_arg_str(args, "query", "", &tq);
    if (!*q0) {
        free(tq);
        return sl_err_set(err, SL_EINVAL, "arxiv: Please input query");
    }
    sl_buf q;
    sl_buf_init(&q, 0);
    sl_buf_adds(&q, q0);
    free(tq);
    sl_builtin_cut_chars(&q, QUERY_CHARS);
    char *eq = sl_http_escape(q.data);
    sl_buf_release(&q);
    char *path = sl_xasprintf("/api/query?search_query=%s&id_list=&sortBy=relevance"
                              "&sortOrder=descending&start=0&max_results=%d", eq, TOP_K);
    char *url = sl_builtin_url(cfg && cfg->base_url && *cfg->base_url ? cfg->base_url
                                                                      : ARXIV_URL, path);
    free(path);
    free(eq);
    static const char *const headers[] = {"Accept: application/atom+xml", NULL};
    sl_builtin_req rq = {.vendor = "arxiv", .method = "GET", .url = url, .headers = headers};
    long status = 0;
    sl_buf body;
    sl_buf_init(&body, 0);
    int rc = sl_builtin_fetch(ctx, &rq, &status, &body, NULL, err);
    if (!rc && status != 200) {
        char *msg = error_message(body.data ? body.data : "", body.len);
        if (msg) {
            rc = sl_err_set(err, SL_EIO, "arxiv: arXiv answered HTTP %ld: %s", status, msg);
            free(msg);
        } else {
            rc = sl_builtin_status_error(cfg, "arxiv", status, body.data ? body.data : "",
                                         body.len, err);
        }
    }
    if (!rc) {
        sl_buf text;
        rc = sl_builtin_arxiv_text(body.data ? body.data : "", body.len, &text, err);
        if (!rc) {
            rc = sl_builtin_text(res, ctx, text.data ? text.data : "", text.len, err);
            sl_buf_release(&text);
        }
    }
    sl_buf_release(&body);
    free(url);
    return rc;
}

const sl_builtin_tool sl_builtin_arxiv_tools[] = {
    {"arxiv_search",
     "A tool for searching scientific papers and articles from the Arxiv repository. Input "
     "can be an Arxiv ID or an author's name.",
     "{\"type\": \"object\", \"properties\": {"
     "\"query\": {\"type\": \"string\", \"description\": \"The Arxiv ID or author's name used "
     "for searching.\"}}, \"required\": [\"query\"]}",
     arxiv_search},
};
const size_t sl_builtin_arxiv_n = sizeof sl_builtin_arxiv_tools / sizeof sl_builtin_arxiv_tools[0];
