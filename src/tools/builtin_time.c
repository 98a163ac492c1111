/*
 * builtin_time — Dify's `time` provider: current_time, weekday,
 * timezone_conversion, localtime_to_timestamp, timestamp_to_localtime.
 *
 * Time zones come from the system's tz database (/usr/share/zoneinfo),
 * read here from the zone's TZif file: its transitions, and for times
 * past the last one the POSIX TZ rule in the file's footer.  sluice never
 * sets TZ or calls localtime(): the process is multithreaded, and
 * setenv() beside a getenv() or localtime() on another thread is a data
 * race in glibc.  Civil dates are computed here from day counts; strftime
 * only formats a struct tm whose zone fields are filled in (tm_zone,
 * tm_gmtoff), which it reads without consulting TZ.
 */
#include "tools/builtin.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/math.h"

#define TZ_DIR "/usr/share/zoneinfo"
#define TZ_FILE_MAX (1u << 20)
#define FMT_MAX 1024
#define OUT_MAX (64u << 10)
#define PY_FMT "%Y-%m-%d %H:%M:%S"

/* ---- civil dates (proleptic Gregorian, days since 1970-01-01) ---- */

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int64_t y, int m)
{
    static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : n[m - 1];
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* ---- zones ---- */

typedef struct {
    int32_t off;   /* seconds east of UTC */
    bool dst;
    char abbr[16];
} ttype;

typedef struct {
    char kind;     /* 'M' month.week.day, 'J' 1..365 without Feb 29, 'n' 0..365 */
    int month, week, wday, num;
    int32_t time;  /* seconds after local midnight */
} rule_date;

typedef struct {
    int64_t *at;
    unsigned char *idx;
    size_t n;
    ttype types[256];
    size_t ntypes;
    bool has_rule, rule_dst;
    ttype r_std, r_dst;
    rule_date r_start, r_end;
} tzone;

static void tz_free(tzone *z)
{
    free(z->at);
    free(z->idx);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* POSIX TZ pieces: a name, an offset ([+-]hh[:mm[:ss]]), a rule date. */
static const char *tzs_name(const char *s, char *out, size_t n)
{
    size_t k = 0;
    if (*s == '<') {
        s++;
        while (*s && *s != '>') {
            if (k + 1 < n)
                out[k++] = *s;
            s++;
        }
        if (*s != '>')
            return NULL;
        s++;
    } else {
        while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')) {
            if (k + 1 < n)
                out[k++] = *s;
            s++;
        }
        if (k < 3)
            return NULL;
    }
    out[k] = '\0';
    return s;
}

static const char *tzs_secs(const char *s, int32_t *out)
{
    int sign = 1;
    if (*s == '+' || *s == '-')
        sign = *s++ == '-' ? -1 : 1;
    if (*s < '0' || *s > '9')
        return NULL;
    long v[3] = {0, 0, 0};
    for (int part = 0; part < 3; part++) {
        if (part && *s != ':')
            break;
        if (part)
            s++;
        int digits = 0;
        while (*s >= '0' && *s <= '9' && digits < 3) {
            v[part] = v[part] * 10 + (*s++ - '0');
            digits++;
        }
        if (!digits)
            return NULL;
    }
    *out = (int32_t)(sign * (v[0] * 3600 + v[1] * 60 + v[2]));
    return s;
}

static const char *tzs_date(const char *s, rule_date *r)
{
    memset(r, 0, sizeof *r);
    r->time = 7200;
    if (*s == 'M') {
        r->kind = 'M';
        if (sscanf(s + 1, "%d.%d.%d", &r->month, &r->week, &r->wday) != 3 || r->month < 1 ||
            r->month > 12 || r->week < 1 || r->week > 5 || r->wday < 0 || r->wday > 6)
            return NULL;
        s++;
        while ((*s >= '0' && *s <= '9') || *s == '.')
            s++;
    } else {
        r->kind = *s == 'J' ? 'J' : 'n';
        if (*s == 'J')
            s++;
        if (*s < '0' || *s > '9')
            return NULL;
        r->num = (int)strtol(s, (char **)&s, 10);
        if (r->num > 365 || (r->kind == 'J' && r->num < 1))
            return NULL;
    }
    if (*s == '/')
        s = tzs_secs(s + 1, &r->time);
    return s;
}

static bool parse_rule(tzone *z, const char *s)
{
    int32_t v;
    if (!(s = tzs_name(s, z->r_std.abbr, sizeof z->r_std.abbr)) || !(s = tzs_secs(s, &v)))
        return false;
    z->r_std.off = -v;
    z->has_rule = true;
    if (!*s)
        return true;
    if (!(s = tzs_name(s, z->r_dst.abbr, sizeof z->r_dst.abbr)))
        return false;
    z->r_dst.dst = true;
    z->r_dst.off = z->r_std.off + 3600;
    if (*s && *s != ',') {
        if (!(s = tzs_secs(s, &v)))
            return false;
        z->r_dst.off = -v;
    }
    if (!*s) {  /* POSIX's default rule (the US's) */
        z->r_start = (rule_date){'M', 3, 2, 0, 0, 7200};
        z->r_end = (rule_date){'M', 11, 1, 0, 0, 7200};
    } else if (*s != ',' || !(s = tzs_date(s + 1, &z->r_start)) || *s != ',' ||
               !(s = tzs_date(s + 1, &z->r_end)) || *s) {
        return false;
    }
    z->rule_dst = true;
    return true;
}

static int64_t rule_day(const rule_date *r, int64_t y)
{
    if (r->kind == 'J')
        return days_from_civil(y, 1, 1) + r->num - 1 + (leap(y) && r->num >= 60);
    if (r->kind == 'n')
        return days_from_civil(y, 1, 1) + r->num;
    int64_t first = days_from_civil(y, r->month, 1);
    int wd_first = (int)(((first + 4) % 7 + 7) % 7);  /* 0 = Sunday */
    int64_t d = first + (r->wday - wd_first + 7) % 7 + (int64_t)(r->week - 1) * 7;
    while (d >= first + month_days(y, r->month))
        d -= 7;
    return d;
}

static const ttype *rule_at(const tzone *z, int64_t t)
{
    if (!z->rule_dst)
        return &z->r_std;
    int64_t y;
    int m, d;
    civil_from_days(floor_div(t + z->r_std.off, 86400), &y, &m, &d);
    int64_t s = rule_day(&z->r_start, y) * 86400 + z->r_start.time - z->r_std.off;
    int64_t e = rule_day(&z->r_end, y) * 86400 + z->r_end.time - z->r_dst.off;
    bool in = s < e ? (t >= s && t < e) : !(t >= e && t < s);
    return in ? &z->r_dst : &z->r_std;
}

static const ttype *tz_at(const tzone *z, int64_t t)
{
    if (z->n && t >= z->at[z->n - 1] && z->has_rule)
        return rule_at(z, t);
    if (!z->n || t < z->at[0]) {
        if (!z->n && z->has_rule)
            return rule_at(z, t);
        for (size_t i = 0; i < z->ntypes; i++)  /* RFC 8536: the first standard-time type */
            if (!z->types[i].dst)
                return &z->types[i];
        return &z->types[0];
    }
    size_t lo = 0, hi = z->n;  /* the last transition at or before t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->at[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return &z->types[z->idx[lo]];
}

static int tz_parse(tzone *z, const unsigned char *p, size_t len, const char *name, sl_err *err)
{
    memset(z, 0, sizeof *z);
    if (len < 44 || memcmp(p, "TZif", 4))
        goto bad;
    int version = p[4] ? p[4] - '0' : 1;
    size_t tsize = 4;
    for (int pass = 0; pass < 2; pass++) {
        if (len < 44 || memcmp(p, "TZif", 4))
            goto bad;
        size_t isut = be32(p + 20), isstd = be32(p + 24), leapc = be32(p + 28),
               timec = be32(p + 32), typec = be32(p + 36), charc = be32(p + 40);
        if (typec == 0 || typec > 256 || timec > 100000 || charc > 4096 || leapc > 10000)
            goto bad;
        size_t body = timec * tsize + timec + typec * 6 + charc + leapc * (tsize + 4) + isstd +
                      isut;
        if (len - 44 < body)
            goto bad;
        if (pass == 0 && version >= 2) {  /* skip the 32-bit data for the 64-bit */
            p += 44 + body;
            len -= 44 + body;
            tsize = 8;
            continue;
        }
        const unsigned char *q = p + 44;
        z->n = timec;
        z->at = sl_xcalloc(timec ? timec : 1, sizeof *z->at);
        z->idx = sl_xcalloc(timec ? timec : 1, 1);
        for (size_t i = 0; i < timec; i++, q += tsize)
            z->at[i] = tsize == 8 ? be64(q) : (int32_t)be32(q);
        for (size_t i = 0; i < timec; i++) {
            z->idx[i] = *q++;
            if (z->idx[i] >= typec)
                goto bad;
        }
        const unsigned char *chars = q + typec * 6;
        for (size_t i = 0; i < typec; i++, q += 6) {
            z->types[i].off = (int32_t)be32(q);
            z->types[i].dst = q[4] != 0;
            size_t a = q[5];
            if (a >= charc)
                goto bad;
            size_t k = 0;
            while (a + k < charc && chars[a + k] && k + 1 < sizeof z->types[i].abbr) {
                z->types[i].abbr[k] = (char)chars[a + k];
                k++;
            }
            z->types[i].abbr[k] = '\0';
        }
        z->ntypes = typec;
        if (version >= 2) {  /* the footer: "\nTZ\n" */
            const unsigned char *f = p + 44 + body, *end = p + len;
            if (f < end && *f == '\n') {
                const unsigned char *nl = memchr(f + 1, '\n', (size_t)(end - f - 1));
                if (nl && nl > f + 1) {
                    char rule[128];
                    size_t rl = (size_t)(nl - f - 1);
                    if (rl < sizeof rule) {
                        memcpy(rule, f + 1, rl);
                        rule[rl] = '\0';
                        if (!parse_rule(z, rule))
                            z->has_rule = false;  /* the transitions alone, then */
                    }
                }
            }
        }
        return 0;
    }
bad:
    tz_free(z);
    memset(z, 0, sizeof *z);
    return sl_err_set(err, SL_EINVAL, "Invalid timezone: '%s': its tz database file is not a "
                      "TZif file", name);
}

/* An IANA name as a path under TZ_DIR: no absolute paths, no "..". */
static bool tz_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n > 255 || name[0] == '/' || name[n - 1] == '/')
        return false;
    for (const char *s = name; *s; s++) {
        char c = *s;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+' || c == '.'))
            return false;
        if (c == '.' && (s == name || s[-1] == '/'))
            return false;  /* ".", "..", hidden files */
    }
    return true;
}

/* Loads zone `name` ("" = the host's zone, /etc/localtime, else UTC). */
static int tz_load(tzone *z, const char *name, sl_err *err)
{
    char path[300];
    if (!*name)
        snprintf(path, sizeof path, "/etc/localtime");
    else if (!tz_name_ok(name))
        return sl_err_set(err, SL_EINVAL, "Invalid timezone: '%s': not a time zone name; use "
                          "an IANA name such as UTC, Europe/Berlin or Asia/Shanghai", name);
    else
        snprintf(path, sizeof path, "%s/%s", TZ_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f && !*name) {
        memset(z, 0, sizeof *z);
        z->ntypes = 1;
        snprintf(z->types[0].abbr, sizeof z->types[0].abbr, "UTC");
        return 0;
    }
    if (!f)
        return sl_err_set(err, SL_EINVAL, "Invalid timezone: '%s': no such zone in the "
                          "system's tz database (%s); use an IANA name such as Europe/Berlin",
                          name, TZ_DIR);
    sl_buf b;
    sl_buf_init(&b, TZ_FILE_MAX);
    int rc = sl_buf_add_file(&b, f);
    fclose(f);
    if (rc || b.toobig) {
        sl_buf_release(&b);
        return sl_err_set(err, SL_EINVAL, "Invalid timezone: '%s': its tz database file "
                          "cannot be read", *name ? name : "localtime");
    }
    rc = tz_parse(z, (const unsigned char *)b.data, b.len, *name ? name : "localtime", err);
    sl_buf_release(&b);
    return rc;
}

/* ---- formatting and parsing ---- */

static int check_year(int64_t t, sl_err *err)
{
    /* Python's datetime: years 1..9999 */
    if (t < -62135596800LL || t > 253402300799LL)
        return sl_err_set(err, SL_EINVAL, "year is out of range (timestamp %lld)", (long long)t);
    return 0;
}

static void fill_tm(int64_t local, const ttype *ty, struct tm *tm)
{
    memset(tm, 0, sizeof *tm);
    int64_t days = floor_div(local, 86400), secs = local - days * 86400;
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    tm->tm_year = (int)(y - 1900);
    tm->tm_mon = m - 1;
    tm->tm_mday = d;
    tm->tm_hour = (int)(secs / 3600);
    tm->tm_min = (int)(secs / 60 % 60);
    tm->tm_sec = (int)(secs % 60);
    tm->tm_wday = (int)(((days + 4) % 7 + 7) % 7);
    tm->tm_yday = (int)(days - days_from_civil(y, 1, 1));
    tm->tm_isdst = ty->dst;
    tm->tm_gmtoff = ty->off;
    tm->tm_zone = ty->abbr;
}

static void add_offset(sl_buf *out, int32_t off, bool colon)
{
    char sign = off < 0 ? '-' : '+';
    int32_t a = off < 0 ? -off : off;
    sl_buf_addf(out, "%c%02d%s%02d", sign, a / 3600, colon ? ":" : "", a / 60 % 60);
    if (a % 60)
        sl_buf_addf(out, "%s%02d", colon ? ":" : "", a % 60);
}

static int format_tm(const struct tm *tm, const ttype *ty, int usec, const char *fmt, sl_buf *out,
                     sl_err *err)
{
    if (strlen(fmt) > FMT_MAX)
        return sl_err_set(err, SL_EINVAL, "the format is longer than %d characters", FMT_MAX);
    /* Python's datetime.strftime does %z, %:z, %Z and %f itself */
    sl_buf f;
    sl_buf_init(&f, 0);
    for (const char *s = fmt; *s; s++) {
        if (*s != '%' || !s[1]) {
            sl_buf_addc(&f, *s);
            continue;
        }
        char c = *++s;
        if (c == 'z') {
            add_offset(&f, ty->off, false);
        } else if (c == ':' && s[1] == 'z') {
            add_offset(&f, ty->off, true);
            s++;
        } else if (c == 'Z') {
            for (const char *a = ty->abbr; *a; a++)
                sl_buf_adds(&f, *a == '%' ? "%%" : (char[]){*a, 0});
        } else if (c == 'f') {
            sl_buf_addf(&f, "%06d", usec);
        } else {
            sl_buf_addc(&f, '%');
            sl_buf_addc(&f, c);
        }
    }
    int rc = 0;
    if (f.len) {
        size_t cap = 256;
        for (;;) {
            char *o = sl_xmalloc(cap);
            size_t n = strftime(o, cap, f.data, tm);
            if (n || cap >= OUT_MAX) {
                sl_buf_add(out, o, n);
                free(o);
                break;
            }
            free(o);
            cap *= 4;
        }
    }
    sl_buf_release(&f);
    return rc;
}

int sl_builtin_time_format(long long t, int usec, const char *tz, const char *fmt, sl_buf *out,
                           sl_err *err)
{
    if (check_year(t, err))
        return -1;
    tzone z;
    if (tz_load(&z, tz, err))
        return -1;
    const ttype *ty = tz_at(&z, t);
    int64_t local = t + ty->off;
    int rc = check_year(local, err);
    if (!rc) {
        struct tm tm;
        fill_tm(local, ty, &tm);
        rc = format_tm(&tm, ty, usec, fmt, out, err);
    }
    tz_free(&z);
    return rc;
}

/* Python's strptime(s, "%Y-%m-%d %H:%M:%S") as wall seconds. */
static int parse_local(const char *s, int64_t *wall, sl_err *err)
{
    const char *p = s;
    long v[6];
    static const int maxd[6] = {4, 2, 2, 2, 2, 2};
    static const char sep[6] = {'-', '-', ' ', ':', ':', 0};
    for (int i = 0; i < 6; i++) {
        int digits = 0;
        v[i] = 0;
        while (*p >= '0' && *p <= '9' && digits < maxd[i]) {
            v[i] = v[i] * 10 + (*p++ - '0');
            digits++;
        }
        if (!digits || (i == 0 && digits != 4))
            goto bad;
        if (sep[i] == ' ') {
            if (*p != ' ' && *p != '\t')
                goto bad;
            while (*p == ' ' || *p == '\t')
                p++;
        } else if (sep[i]) {
            if (*p++ != sep[i])
                goto bad;
        }
    }
    if (*p)
        return sl_err_set(err, SL_EINVAL, "unconverted data remains: %.40s", p);
    if (v[1] < 1 || v[1] > 12 || v[3] > 23 || v[4] > 59 || v[5] > 61)
        goto bad;
    if (v[0] < 1 || v[2] < 1 || v[2] > month_days(v[0], (int)v[1]))
        return sl_err_set(err, SL_EINVAL, "day is out of range for month ('%s')", s);
    if (v[5] > 59)
        return sl_err_set(err, SL_EINVAL, "second must be in 0..59 ('%s')", s);
    *wall = days_from_civil(v[0], (int)v[1], (int)v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
    return 0;
bad:
    return sl_err_set(err, SL_EINVAL, "time data '%s' does not match format '%s'", s, PY_FMT);
}

/* Wall seconds in z to Unix seconds, as Dify's localize_datetime. */
static int64_t localize(const tzone *z, int64_t wall)
{
    int32_t offs[2] = {tz_at(z, wall - 2 * 86400)->off, tz_at(z, wall + 2 * 86400)->off};
    bool found = false;
    int64_t best = 0;
    for (int i = 0; i < 2; i++) {
        int64_t t = wall - offs[i];
        if (tz_at(z, t)->off == offs[i] && (!found || t > best)) {
            best = t;
            found = true;
        }
    }
    if (found)
        return best;
    /* in a gap: the offset before it, which moves the time forward */
    return wall - (offs[0] < offs[1] ? offs[0] : offs[1]);
}

int sl_builtin_time_local(const char *local, const char *tz, long long *t, sl_err *err)
{
    int64_t wall = 0;
    tzone z;
    if (tz_load(&z, tz, err))
        return -1;
    int rc = parse_local(local, &wall, err);
    if (!rc)
        *t = localize(&z, wall);
    tz_free(&z);
    return rc;
}

/* ---- the tools ---- */

static int out_text(sl_tool_result *res, const sl_tool_ctx *ctx, const sl_buf *b, sl_err *err)
{
    return sl_builtin_text(res, ctx, b->data ? b->data : "", b->len, err);
}

static int current_time(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                        const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    char *t1, *t2;
    const char *tz = sl_builtin_arg_str(args, "timezone", "UTC", &t1);
    const char *fmt = sl_builtin_arg_str(args, "format", PY_FMT, &t2);
    if (!*fmt)
        fmt = PY_FMT " %Z";  /* the tool's own default when the form's is blanked */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = sl_builtin_time_format((long long)now.tv_sec, (int)(now.tv_nsec / 1000),
                                    *tz ? tz : "UTC", fmt, &b, err);
    if (!rc)
        rc = out_text(res, ctx, &b, err);
    sl_buf_release(&b);
    free(t1);
    free(t2);
    return rc;
}

static void num_text(double d, char *out, size_t n)
{
    if (d == sl_floor(d) && fabs(d) < 1e15)
        snprintf(out, n, "%lld", (long long)d);
    else
        snprintf(out, n, "%g", d);
}

static int weekday(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                   const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    static const char *months[] = {"January", "February", "March",     "April",
                                   "May",     "June",     "July",      "August",
                                   "September", "October", "November", "December"};
    static const char *days[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                 "Thursday", "Friday", "Saturday"};
    const char *names[3] = {"year", "month", "day"};
    double v[3];
    for (int i = 0; i < 3; i++) {
        int r = sl_builtin_arg_num(args, names[i], &v[i]);
        if (r <= 0)
            return sl_err_set(err, SL_EINVAL, "weekday: %s is %s; give a number", names[i],
                              r ? "not a number" : "missing");
    }
    char ys[32], ms[32], ds[32];
    num_text(v[0], ys, sizeof ys);
    num_text(v[1], ms, sizeof ms);
    num_text(v[2], ds, sizeof ds);
    bool ok = v[0] >= 1 && v[0] <= 9999 && v[1] >= 1 && v[1] <= 12 && v[2] >= 1 && v[2] <= 31 &&
              v[0] == sl_floor(v[0]) && v[1] == sl_floor(v[1]) && v[2] == sl_floor(v[2]) &&
              v[2] <= month_days((int64_t)v[0], (int)v[1]);
    if (!ok)
        return sl_err_set(err, SL_EINVAL, "Invalid date: Year %s, Month %s, Day %s.", ys, ms,
                          ds);
    int64_t d = days_from_civil((int64_t)v[0], (int)v[1], (int)v[2]);
    char text[128];
    int n = snprintf(text, sizeof text, "%s %d, %lld is %s.", months[(int)v[1] - 1], (int)v[2],
                     (long long)v[0], days[((d + 4) % 7 + 7) % 7]);
    return sl_builtin_text(res, ctx, text, (size_t)n, err);
}

static int timezone_conversion(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                               const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    char *t1, *t2, *t3;
    const char *cur = sl_builtin_arg_str(args, "current_time", "", &t1);
    const char *from = sl_builtin_arg_str(args, "current_timezone", "Asia/Shanghai", &t2);
    const char *to = sl_builtin_arg_str(args, "target_timezone", "Asia/Tokyo", &t3);
    long long t = 0;
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = !*from || !*to
                 ? sl_err_set(err, SL_EINVAL, "Invalid timezone: ''; give an IANA name")
                 : sl_builtin_time_local(cur, from, &t, err);
    if (!rc)
        rc = sl_builtin_time_format(t, 0, to, PY_FMT, &b, err);
    if (!rc)
        rc = out_text(res, ctx, &b, err);
    sl_buf_release(&b);
    free(t1);
    free(t2);
    free(t3);
    return rc;
}

static int localtime_to_timestamp(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                                  const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    char *t1, *t2;
    const char *local = sl_builtin_arg_str(args, "localtime", "", &t1);
    const char *tz = sl_builtin_arg_str(args, "timezone", "Asia/Shanghai", &t2);
    long long t = 0;
    int rc = sl_builtin_time_local(local, tz, &t, err);
    if (!rc) {
        char text[32];
        int n = snprintf(text, sizeof text, "%lld", t);
        rc = sl_builtin_text(res, ctx, text, (size_t)n, err);
    }
    free(t1);
    free(t2);
    return rc;
}

static int timestamp_to_localtime(const sl_tool_ctx *ctx, const sl_builtin_cfg *cfg,
                                  const sl_value *args, sl_tool_result *res, sl_err *err)
{
    (void)cfg;
    char *t1;
    double ts = 0;
    if (sl_builtin_arg_num(args, "timestamp", &ts) < 0)
        return sl_err_set(err, SL_EINVAL, "timestamp_to_localtime: timestamp is not a number");
    if (!(ts > -1e14 && ts < 1e14))
        return sl_err_set(err, SL_EINVAL, "year is out of range (timestamp %g)", ts);
    const char *tz = sl_builtin_arg_str(args, "timezone", "Asia/Shanghai", &t1);
    sl_buf b;
    sl_buf_init(&b, 0);
    int rc = sl_builtin_time_format((long long)sl_floor(ts), 0, tz, PY_FMT, &b, err);
    if (!rc)
        rc = out_text(res, ctx, &b, err);
    sl_buf_release(&b);
    free(t1);
    return rc;
}

#define TZ_ENUM                                                                               \
    "[\"UTC\", \"America/New_York\", \"America/Los_Angeles\", \"America/Chicago\", "          \
    "\"America/Sao_Paulo\", \"Asia/Shanghai\", \"Asia/Ho_Chi_Minh\", \"Asia/Tokyo\", "        \
    "\"Asia/Dubai\", \"Asia/Kolkata\", \"Asia/Seoul\", \"Asia/Singapore\", \"Europe/London\", " \
    "\"Europe/Berlin\", \"Europe/Moscow\", \"Australia/Sydney\", \"Pacific/Auckland\", "      \
    "\"Africa/Cairo\"]"

const sl_builtin_tool sl_builtin_time_tools[] = {
    {"current_time", "A tool for getting the current time.",
     "{\"type\": \"object\", \"properties\": {"
     "\"format\": {\"type\": \"string\", \"description\": \"Time format in strftime standard.\", "
     "\"default\": \"%Y-%m-%d %H:%M:%S\"}, "
     "\"timezone\": {\"type\": \"string\", \"description\": \"Timezone\", \"enum\": " TZ_ENUM
     ", \"default\": \"UTC\"}}, \"required\": []}",
     current_time},
    {"weekday", "A tool for calculating the weekday of a given date by year, month and day.",
     "{\"type\": \"object\", \"properties\": {"
     "\"year\": {\"type\": \"number\", \"description\": \"Year\"}, "
     "\"month\": {\"type\": \"number\", \"description\": \"Month\"}, "
     "\"day\": {\"type\": \"number\", \"description\": \"day\"}}, "
     "\"required\": [\"year\", \"month\", \"day\"]}",
     weekday},
    {"timezone_conversion", "A tool to convert time to equivalent time zone",
     "{\"type\": \"object\", \"properties\": {"
     "\"current_time\": {\"type\": \"string\", \"description\": \"current time, such as "
     "2024-1-1 0:0:0\"}, "
     "\"current_timezone\": {\"type\": \"string\", \"description\": \"Current Timezone, such as "
     "Asia/Shanghai\", \"default\": \"Asia/Shanghai\"}, "
     "\"target_timezone\": {\"type\": \"string\", \"description\": \"Target Timezone, such as "
     "Asia/Tokyo\", \"default\": \"Asia/Tokyo\"}}, "
     "\"required\": [\"current_time\", \"current_timezone\", \"target_timezone\"]}",
     timezone_conversion},
    {"localtime_to_timestamp", "A tool for localtime convert to timestamp",
     "{\"type\": \"object\", \"properties\": {"
     "\"localtime\": {\"type\": \"string\", \"description\": \"localtime, such as 2024-1-1 "
     "0:0:0\"}, "
     "\"timezone\": {\"type\": \"string\", \"description\": \"Timezone, such as Asia/Shanghai\", "
     "\"default\": \"Asia/Shanghai\"}}, \"required\": [\"localtime\"]}",
     localtime_to_timestamp},
    {"timestamp_to_localtime", "A tool for timestamp convert to localtime",
     "{\"type\": \"object\", \"properties\": {"
     "\"timestamp\": {\"type\": \"number\", \"description\": \"Timestamp\"}, "
     "\"timezone\": {\"type\": \"string\", \"description\": \"Timezone, such as Asia/Shanghai\", "
     "\"default\": \"Asia/Shanghai\"}}, \"required\": [\"timestamp\"]}",
     timestamp_to_localtime},
};
const size_t sl_builtin_time_n = sizeof sl_builtin_time_tools / sizeof sl_builtin_time_tools[0];
