/*
 * sheet — pandas' view of a worksheet and Dify's table of it (sheet.h).
 */
#include "extract/sheet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/map.h"
#include "core/math.h"

void sl_sheet_strs_add(sl_sheet_strs *t, char *s)
{
    if ((t->n & (t->n - 1)) == 0 || !t->v)
        t->v = sl_xrealloc(t->v, (t->n ? t->n * 2 : 1) * sizeof *t->v);
    t->v[t->n++] = s;
}

void sl_sheet_strs_free(sl_sheet_strs *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    t->v = NULL;
    t->n = 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), and back. */
int64_t sl_sheet_days(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void add_hms(sl_buf *b, int64_t us)
{
    int64_t s = us / 1000000, f = us % 1000000;
    sl_buf_addf(b, "%02d:%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60));
    if (f)
        sl_buf_addf(b, ".%06d", (int)f);
}

static void add_date(sl_buf *b, int64_t us)
{
    int64_t days =
        us >= 0 ? us / SL_SHEET_US_DAY : -((-us + SL_SHEET_US_DAY - 1) / SL_SHEET_US_DAY);
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    sl_buf_addf(b, "%04d-%02u-%02u ", (int)y, m, d);
    add_hms(b, us - days * SL_SHEET_US_DAY);
}

/* Python's repr of a float: the shortest digits that read back, in fixed
 * notation for exponents -4 to 15 and scientific beyond. */
static void add_pyfloat(sl_buf *b, double v)
{
    if (v != v) {
        sl_buf_adds(b, "nan");
        return;
    }
    if (v == __builtin_inf() || v == -__builtin_inf()) {
        sl_buf_adds(b, v > 0 ? "inf" : "-inf");
        return;
    }
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    /* e is [-]d[.ddd]e[+-]xx */
    const char *p = e;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    if (neg)
        sl_buf_addc(b, '-');
    if (exp >= 16 || exp < -4) {
        sl_buf_addc(b, digits[0]);
        if (nd > 1) {
            sl_buf_addc(b, '.');
            sl_buf_adds(b, digits + 1);
        }
        sl_buf_addf(b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        sl_buf_adds(b, "0.");
        for (int i = -1; i > exp; i--)
            sl_buf_addc(b, '0');
        sl_buf_adds(b, digits);
    } else {
        for (int i = 0; i <= exp; i++)
            sl_buf_addc(b, (size_t)i < nd ? digits[i] : '0');
        sl_buf_addc(b, '.');
        sl_buf_adds(b, (size_t)exp + 1 < nd ? digits + exp + 1 : "0");
    }
}

/* A number pandas holds as an int64. */
bool sl_sheet_as_int(double v)
{
    return v == sl_floor(v) && v > -9.2e18 && v < 9.2e18;
}

/* Python's str.splitlines joined by spaces: each line break (\r\n as
 * one) a space, none for a break that ends the text. */
static void add_joined(sl_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        if (p[i] == '\r')
            k = i + 1 < n && p[i + 1] == '\n' ? 2 : 1;
        else if (p[i] == '\n' || p[i] == 0x0b || p[i] == 0x0c || (p[i] >= 0x1c && p[i] <= 0x1e))
            k = 1;
        else if (p[i] == 0xc2 && i + 1 < n && p[i + 1] == 0x85)
            k = 2;
        else if (p[i] == 0xe2 && i + 2 < n && p[i + 1] == 0x80 &&
                 (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
            k = 3;
        if (k) {
            if (i + k < n)
                sl_buf_addc(b, ' ');
            i += k;
        } else
            sl_buf_addc(b, (char)p[i++]);
    }
}

/* pandas' default missing-value strings (read_excel's na_values; "None"
 * since pandas 2.0, which Dify runs). */
static bool na_string(const char *s)
{
    static const char *const na[] = {"",     "#N/A", "#N/A N/A", "#NA",  "-1.#IND", "-1.#QNAN",
                                     "-NaN", "-nan", "1.#IND",   "1.#QNAN", "<NA>", "N/A",
                                     "NA",   "NULL", "NaN",      "None", "n/a",  "nan",
                                     "null"};
    for (size_t i = 0; i < sizeof na / sizeof *na; i++)
        if (!strcmp(s, na[i]))
            return true;
    return false;
}

/* A string pandas' numeric inference turns into a number. */
static bool numeric_string(const char *s, double *v, bool *integral)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    bool digits = false, dot = false, expo = false;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits = true;
        else if (*p == '.' && !dot && !expo)
            dot = true;
        else if ((*p == 'e' || *p == 'E') && digits && !expo) {
            expo = true;
            if (p[1] == '+' || p[1] == '-')
                p++;
            if (!(p[1] >= '0' && p[1] <= '9'))
                return false;
        } else
            return false;
    }
    if (!digits)
        return false;
    *v = strtod(s, NULL);
    *integral = !dot && !expo && sl_sheet_as_int(*v);
    return true;
}

/* A column's dtype after pandas' inference. */
typedef enum { C_INT, C_FLOAT, C_BOOL, C_DATE, C_OBJECT } ctype;

typedef struct {
    ctype type;
    bool bool_as_int; /* bools among numbers count as 1 and 0 */
} column;

static bool is_na(const sl_sheet_cell *x)
{
    return !x || x->kind == SL_CELL_ERR || (x->kind == SL_CELL_STR && na_string(x->s));
}

/* str() of one value of a column of type col. */
static void add_value(sl_buf *b, const sl_sheet_cell *x, const column *col, bool row_float,
                      bool row_dates)
{
    if (is_na(x)) {
        sl_buf_adds(b, col->type == C_DATE || row_dates ? "NaT" : "nan");
        return;
    }
    double num;
    bool integral;
    switch (x->kind) {
    case SL_CELL_NUM:
        if (row_float || col->type == C_FLOAT || !x->integral)
            add_pyfloat(b, x->num);
        else
            sl_buf_addf(b, "%lld", (long long)x->num);
        break;
    case SL_CELL_BOOL:
        if (col->bool_as_int) {
            if (row_float || col->type == C_FLOAT)
                sl_buf_adds(b, x->num ? "1.0" : "0.0");
            else
                sl_buf_adds(b, x->num ? "1" : "0");
        } else
            sl_buf_adds(b, x->num ? "True" : "False");
        break;
    case SL_CELL_STR:
        if (col->type == C_INT || col->type == C_FLOAT) {
            numeric_string(x->s, &num, &integral);
            if (row_float || col->type == C_FLOAT)
                add_pyfloat(b, num);
            else
                sl_buf_addf(b, "%lld", (long long)num);
        } else
            add_joined(b, x->s);
        break;
    case SL_CELL_DATE:
        add_date(b, x->us);
        break;
    case SL_CELL_TIME:
        add_hms(b, x->us);
        break;
    default:
        sl_buf_adds(b, "nan");
    }
}

/* pandas' type for column j (1-based) over the data cells (rows 2 to
 * nrows): numbers, numeric strings and bools among numbers are numeric
 * (int64 unless a value is fractional or missing), bools alone bool
 * (float, 1.0 and 0.0, when one is missing), datetimes alone datetime64
 * (a gap is NaT), anything else object. */
static void infer(const sl_sheet *sh, uint32_t width, uint32_t nrows, column *cols)
{
    typedef struct {
        size_t num, frac, bools, dates, other, na, vals;
    } tally;
    tally *t = sl_xcalloc(width ? width : 1, sizeof *t);
    for (size_t i = 0; i < sh->n; i++) {
        const sl_sheet_cell *x = &sh->v[i];
        if (x->row == 1)
            continue;
        tally *c = &t[x->col - 1];
        c->vals++;
        double num;
        bool integral;
        if (is_na(x))
            c->na++;
        else if (x->kind == SL_CELL_NUM) {
            c->num++;
            c->frac += !x->integral;
        } else if (x->kind == SL_CELL_BOOL)
            c->bools++;
        else if (x->kind == SL_CELL_DATE)
            c->dates++;
        else if (x->kind == SL_CELL_STR && numeric_string(x->s, &num, &integral)) {
            c->num++;
            c->frac += !integral;
        } else
            c->other++;
    }
    for (uint32_t j = 0; j < width; j++) {
        const tally *c = &t[j];
        bool missing = c->na + (nrows - 1 - c->vals) > 0;
        cols[j] = (column){.type = C_OBJECT, .bool_as_int = c->num > 0 && c->bools > 0};
        if (!c->other && !c->dates && (c->num || !c->bools))
            cols[j].type = c->frac || missing ? C_FLOAT : C_INT;
        else if (!c->other && !c->dates && !c->num && c->bools && !missing)
            cols[j].type = C_BOOL;
        else if (!c->other && !c->dates && !c->num && c->bools) {
            /* maybe_convert_numeric: a gap is a float NaN, and the bools
             * become 1.0 and 0.0 beside it */
            cols[j].type = C_FLOAT;
            cols[j].bool_as_int = true;
        }
        else if (!c->other && !c->num && !c->bools && c->dates)
            cols[j].type = C_DATE;
    }
    free(t);
}

/* The header's names: str() of each first-row value, "Unnamed: i" for
 * blanks, duplicates as "a.1", "a.2" (pandas' dedup), then
 * splitlines-joined. */
static char **header(const sl_sheet *sh, uint32_t width)
{
    char **names = sl_xcalloc(width ? width : 1, sizeof *names);
    char **keys = sl_xcalloc(width ? width : 1, sizeof *keys);
    size_t k = 0;
    column plain = {.type = C_OBJECT};
    for (uint32_t j = 1; j <= width; j++) {
        const sl_sheet_cell *x = NULL;
        while (k < sh->n && sh->v[k].row == 1 && sh->v[k].col < j)
            k++;
        if (k < sh->n && sh->v[k].row == 1 && sh->v[k].col == j)
            x = &sh->v[k];
        sl_buf b;
        sl_buf_init(&b, SIZE_MAX);
        if (!x)
            sl_buf_addf(&b, "s:Unnamed: %u", j - 1);
        else if (x->kind == SL_CELL_ERR)
            sl_buf_adds(&b, "f:nan");
        else if (x->kind == SL_CELL_STR) {
            sl_buf_adds(&b, "s:");
            sl_buf_adds(&b, x->s);
        } else if (x->kind == SL_CELL_BOOL)
            sl_buf_adds(&b, x->num ? "n:1:True" : "n:0:False");
        else {
            sl_buf_adds(&b, x->kind == SL_CELL_NUM ? "n:" : "d:");
            add_value(&b, x, &plain, false, false);
        }
        keys[j - 1] = sl_buf_detach(&b);
    }
    /* dedup: counts of each name seen, as pandas keeps them */
    sl_map counts;
    sl_map_init(&counts);
    for (uint32_t j = 0; j < width; j++) {
        char *col = sl_xstrdup(keys[j]);
        uintptr_t cur = (uintptr_t)sl_map_get(&counts, col);
        while (cur > 0) {
            sl_map_put(&counts, col, (void *)(cur + 1));
            /* the new name is a string: "<str(col)>.<cur>" */
            const char *shown = strchr(col + 2, ':') && col[0] == 'n' ? strchr(col + 2, ':') + 1
                                                                       : col + 2;
            sl_buf b;
            sl_buf_init(&b, SIZE_MAX);
            sl_buf_addf(&b, "s:%s.%zu", shown, (size_t)cur);
            free(col);
            col = sl_buf_detach(&b);
            cur = (uintptr_t)sl_map_get(&counts, col);
        }
        sl_map_put(&counts, col, (void *)(cur + 1));
        const char *shown =
            col[0] == 'n' && strchr(col + 2, ':') ? strchr(col + 2, ':') + 1 : col + 2;
        sl_buf b;
        sl_buf_init(&b, SIZE_MAX);
        add_joined(&b, shown);
        names[j] = b.data ? sl_buf_detach(&b) : sl_xstrdup("");
        free(col);
    }
    sl_map_release(&counts);
    for (uint32_t j = 0; j < width; j++)
        free(keys[j]);
    free(keys);
    return names;
}

static size_t utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The Timestamps pandas can hold (nanoseconds in an int64), in µs. */
#define TS_MIN INT64_C(-9223372036854775)
#define TS_MAX INT64_C(9223372036854775)

/* iterrows makes each row a Series of the frame's values; an object row
 * whose values are all datetimes (Timestamps) or missing becomes a
 * datetime64 Series, whose missing values print as NaT. */
void sl_sheet_render(const sl_sheet *sh, sl_buf *out)
{
    uint32_t width = 0, height = 0;
    for (size_t i = 0; i < sh->n; i++) {
        if (sh->v[i].col > width)
            width = sh->v[i].col;
        if (sh->v[i].row > height)
            height = sh->v[i].row;
    }
    if (sh->ncols > width)
        width = sh->ncols;
    if (sh->nrows > height)
        height = sh->nrows;
    char **names = header(sh, width);
    /* "| " + " | ".join(names) + " |", and the dashes likewise */
    sl_buf_adds(out, "| ");
    for (uint32_t j = 0; j < width; j++) {
        sl_buf_adds(out, j ? " | " : "");
        sl_buf_adds(out, names[j]);
    }
    sl_buf_adds(out, " |\n| ");
    for (uint32_t j = 0; j < width && !out->toobig; j++) {
        sl_buf_adds(out, j ? " | " : "");
        for (size_t k = utf8_len(names[j]); k--;)
            sl_buf_addc(out, '-');
    }
    sl_buf_adds(out, " |");
    column *cols = sl_xcalloc(width ? width : 1, sizeof *cols);
    bool all_int = width > 0, all_num = width > 0;
    infer(sh, width, height ? height : 1, cols);
    for (uint32_t j = 0; j < width; j++) {
        all_int &= cols[j].type == C_INT;
        all_num &= cols[j].type == C_INT || cols[j].type == C_FLOAT;
    }
    /* iterrows: the row is one Series of the columns' common type, float
     * when they are all numeric but not all int; with any other column
     * it is object and each value keeps its column's type. */
    bool row_float = all_num && !all_int;
    size_t i = 0;
    while (i < sh->n && sh->v[i].row == 1)
        i++;
    while (i < sh->n && !out->toobig) {
        uint32_t r = sh->v[i].row;
        size_t end = i;
        bool any = false, dates = !row_float;
        for (; end < sh->n && sh->v[end].row == r; end++) {
            const sl_sheet_cell *x = &sh->v[end];
            if (!is_na(x)) {
                any = true;
                dates &= x->kind == SL_CELL_DATE && x->us >= TS_MIN && x->us <= TS_MAX;
            }
        }
        if (any) { /* dropna(how="all") */
            sl_buf_adds(out, "\n| ");
            size_t k = i;
            for (uint32_t j = 1; j <= width; j++) {
                const sl_sheet_cell *x = k < end && sh->v[k].col == j ? &sh->v[k++] : NULL;
                sl_buf_adds(out, j > 1 ? " | " : "");
                add_value(out, x, &cols[j - 1], row_float, dates);
            }
            sl_buf_adds(out, " |");
        }
        i = end;
    }
    sl_buf_adds(out, "\n\n");
    for (uint32_t j = 0; j < width; j++)
        free(names[j]);
    free(names);
    free(cols);
}

void sl_sheet_add(sl_sheet *sh, const sl_sheet_cell *c)
{
    if (sh->n == sh->alloc) {
        sh->alloc = sh->alloc ? sh->alloc * 2 : 64;
        sh->v = sl_xrealloc(sh->v, sh->alloc * sizeof *sh->v);
    }
    sh->v[sh->n] = *c;
    sh->v[sh->n].seq = (uint32_t)sh->n;
    sh->n++;
}

static int cmp_cell(const void *a, const void *b)
{
    const sl_sheet_cell *x = a, *y = b;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sl_sheet_sort(sl_sheet *sh)
{
    if (sh->n)
        qsort(sh->v, sh->n, sizeof *sh->v, cmp_cell);
    /* a cell given twice: the later wins */
    size_t w = 0;
    for (size_t i = 0; i < sh->n; i++) {
        if (w && sh->v[w - 1].row == sh->v[i].row && sh->v[w - 1].col == sh->v[i].col)
            w--;
        sh->v[w++] = sh->v[i];
    }
    sh->n = w;
}

void sl_sheet_release(sl_sheet *sh)
{
    free(sh->v);
    sh->v = NULL;
    sh->n = sh->alloc = 0;
    sl_sheet_strs_free(&sh->pool);
}
