#include "core/value.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sl_value_is_file(const sl_value *v)
{
    if (!json_is_object(v))
        return false;
    const char *id = json_string_value(json_object_get(v, "dify_model_identity"));
    return id && strcmp(id, "__dify__file__") == 0;
}

bool sl_file_id_ok(const char *id)
{
    size_t n = 0;
    for (; id && id[n]; n++) {
        bool dash = n == 8 || n == 13 || n == 18 || n == 23;
        char c = id[n];
        if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return n == 36;
}

bool sl_value_is_number(const sl_value *v)
{
    return json_is_integer(v) || json_is_real(v);
}

double sl_value_number(const sl_value *v)
{
    if (json_is_integer(v))
        return (double)json_integer_value(v);
    return json_real_value(v);
}

static const char *elem_kind(const sl_value *arr)
{
    size_t n = json_array_size(arr);
    if (n == 0)
        return "any";
    const char *k = NULL;
    for (size_t i = 0; i < n; i++) {
        const sl_value *e = json_array_get(arr, i);
        const char *ek;
        if (json_is_string(e))
            ek = "string";
        else if (sl_value_is_number(e))
            ek = "number";
        else if (json_is_boolean(e))
            ek = "boolean";
        else if (sl_value_is_file(e))
            ek = "file";
        else if (json_is_object(e))
            ek = "object";
        else
            return "any";
        if (k && strcmp(k, ek) != 0)
            return "any";
        k = ek;
    }
    return k;
}

const char *sl_value_type_name(const sl_value *v)
{
    if (!v || json_is_null(v))
        return "none";
    if (json_is_string(v))
        return "string";
    if (json_is_integer(v))
        return "integer";
    if (json_is_real(v))
        return "number";
    if (json_is_boolean(v))
        return "boolean";
    if (sl_value_is_file(v))
        return "file";
    if (json_is_object(v))
        return "object";
    const char *k = elem_kind(v);
    if (strcmp(k, "string") == 0) return "array[string]";
    if (strcmp(k, "number") == 0) return "array[number]";
    if (strcmp(k, "boolean") == 0) return "array[boolean]";
    if (strcmp(k, "file") == 0) return "array[file]";
    if (strcmp(k, "object") == 0) return "array[object]";
    return "array[any]";
}

bool sl_value_truthy(const sl_value *v)
{
    if (!v)
        return false;
    switch (json_typeof(v)) {
    case JSON_NULL: return false;
    case JSON_TRUE: return true;
    case JSON_FALSE: return false;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0.0;
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    }
    return false;
}

bool sl_value_equal(const sl_value *a, const sl_value *b)
{
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    if (sl_value_is_number(a) && sl_value_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return sl_value_number(a) == sl_value_number(b);
    }
    /* Python: True == 1; keep booleans apart from numbers for clarity of
     * workflow conditions (Dify compares them as typed segments). */
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!sl_value_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *va;
        json_object_foreach((json_t *)a, k, va) {
            if (!sl_value_equal(va, json_object_get(b, k)))
                return false;
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

void sl_fmt_double(double d, char out[32])
{
    if (isnan(d)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(d)) {
        strcpy(out, d < 0 ? "-inf" : "inf");
        return;
    }
    if (d == 0) {
        strcpy(out, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    /* Shortest digits that round-trip, as Python's repr. */
    char e[40];
    int prec;
    /* For a normal double, 15 significant digits that round-trip are the
     * shortest (any shorter string that round-trips lies on the 15-digit
     * grid within half an ulp of d, so rounding d gives it back, and the
     * zeros are stripped below).  Subnormals have fewer digits of
     * precision: search those from 1. */
    for (prec = fabs(d) >= DBL_MIN ? 15 : 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    /* e = [-]D.DDDDe[+-]XX */
    char digits[24] = {0};
    int nd = 0;
    const char *p = e;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp < -4 || exp >= 16) {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        sprintf(o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    if (exp < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -exp - 1; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o += nd;
    } else {
        for (int i = 0; i <= exp; i++)
            *o++ = i < nd ? digits[i] : '0';
        *o++ = '.';
        if (nd > exp + 1) {
            memcpy(o, digits + exp + 1, (size_t)(nd - exp - 1));
            o += nd - exp - 1;
        } else {
            *o++ = '0';
        }
    }
    *o = '\0';
}

static int add_json_string(sl_buf *out, const char *s, size_t n)
{
    sl_buf_addc(out, '"');
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[8];
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                esc = u;
            }
        }
        if (esc) {
            sl_buf_add(out, s + start, i - start);
            sl_buf_adds(out, esc);
            start = i + 1;
        }
    }
    sl_buf_add(out, s + start, n - start);
    return sl_buf_addc(out, '"');
}

static int dump(const sl_value *v, sl_buf *out, int style, int depth)
{
    /* style 0: compact JSON; 1: Python separators; 2: Python, indented */
    const char *comma = style ? ", " : ",";
    const char *colon = style ? ": " : ":";
    char num[32];
    if (depth > 512)
        return sl_buf_adds(out, "null");
    switch (json_typeof(v)) {
    case JSON_NULL: return sl_buf_adds(out, "null");
    case JSON_TRUE: return sl_buf_adds(out, "true");
    case JSON_FALSE: return sl_buf_adds(out, "false");
    case JSON_INTEGER: return sl_buf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL: {
        double d = json_real_value(v);
        if (isnan(d) || isinf(d))
            return sl_buf_adds(out, isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity");
        sl_fmt_double(d, num);
        return sl_buf_adds(out, num);
    }
    case JSON_STRING: return add_json_string(out, json_string_value(v), json_string_length(v));
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (n == 0)
            return sl_buf_adds(out, "[]");
        sl_buf_addc(out, '[');
        for (size_t i = 0; i < n; i++) {
            if (style == 2) {
                sl_buf_adds(out, i ? ",\n" : "\n");
                for (int k = 0; k <= depth; k++)
                    sl_buf_adds(out, "  ");
            } else if (i) {
                sl_buf_adds(out, comma);
            }
            dump(json_array_get(v, i), out, style, depth + 1);
        }
        if (style == 2) {
            sl_buf_addc(out, '\n');
            for (int k = 0; k < depth; k++)
                sl_buf_adds(out, "  ");
        }
        return sl_buf_addc(out, ']');
    }
    case JSON_OBJECT: {
        if (json_object_size(v) == 0)
            return sl_buf_adds(out, "{}");
        sl_buf_addc(out, '{');
        const char *k;
        json_t *e;
        bool first = true;
        json_object_foreach((json_t *)v, k, e) {
            if (style == 2) {
                sl_buf_adds(out, first ? "\n" : ",\n");
                for (int i = 0; i <= depth; i++)
                    sl_buf_adds(out, "  ");
            } else if (!first) {
                sl_buf_adds(out, comma);
            }
            first = false;
            add_json_string(out, k, strlen(k));
            sl_buf_adds(out, style == 2 ? ": " : colon);
            dump(e, out, style, depth + 1);
        }
        if (style == 2) {
            sl_buf_addc(out, '\n');
            for (int i = 0; i < depth; i++)
                sl_buf_adds(out, "  ");
        }
        return sl_buf_addc(out, '}');
    }
    }
    return -1;
}

int sl_value_json(const sl_value *v, sl_buf *out)
{
    if (!v)
        return sl_buf_adds(out, "null");
    return dump(v, out, 0, 0) < 0 || out->toobig ? -1 : 0;
}

int sl_value_pyjson(const sl_value *v, sl_buf *out, bool pretty)
{
    if (!v)
        return sl_buf_adds(out, "null");
    return dump(v, out, pretty ? 2 : 1, 0) < 0 || out->toobig ? -1 : 0;
}

int sl_value_text(const sl_value *v, sl_buf *out)
{
    char num[32];
    if (!v)
        return 0;
    switch (json_typeof(v)) {
    case JSON_NULL: return 0;
    case JSON_TRUE: return sl_buf_adds(out, "true");
    case JSON_FALSE: return sl_buf_adds(out, "false");
    case JSON_INTEGER: return sl_buf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        sl_fmt_double(json_real_value(v), num);
        return sl_buf_adds(out, num);
    case JSON_STRING: return sl_buf_add(out, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        if (json_array_size(v) == 0)
            return 0;
        return sl_value_pyjson(v, out, false);
    case JSON_OBJECT:
        return sl_value_pyjson(v, out, false);
    }
    return 0;
}

size_t sl_value_size(const sl_value *v, size_t limit)
{
    if (!v)
        return 4;
    switch (json_typeof(v)) {
    case JSON_STRING: return json_string_length(v) + 2;
    case JSON_ARRAY: {
        size_t n = 2;
        for (size_t i = 0; i < json_array_size(v) && n <= limit; i++)
            n += sl_value_size(json_array_get(v, i), limit) + 1;
        return n;
    }
    case JSON_OBJECT: {
        size_t n = 2;
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e) {
            n += strlen(k) + 4 + sl_value_size(e, limit);
            if (n > limit)
                break;
        }
        return n;
    }
    default: return 8;
    }
}

sl_value *sl_value_deep_copy(const sl_value *v)
{
    return json_deep_copy(v);
}

/* Python's int(): optional sign, digits with single underscores between
 * them; float(): the same plus a fraction and exponent, or inf/nan words.
 * C's strtod would also take hex floats, which Python refuses. */
sl_value *sl_value_number_from_text(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
        s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
                   s[len - 1] == '\r' || s[len - 1] == '\f' || s[len - 1] == '\v'))
        len--;
    if (!len || len > 400)
        return NULL;
    char clean[512];
    size_t n = 0;
    bool is_float = false, digit_before = false;
    const char *p = s, *end = s + len;
    if (*p == '+' || *p == '-')
        clean[n++] = *p++;
    {
        const char *w = p;
        size_t wl = (size_t)(end - w);
        /* Python reads inf and nan, but JSON values cannot hold them:
         * such text stays text. */
        if ((wl == 3 && !strncasecmp(w, "inf", 3)) || (wl == 8 && !strncasecmp(w, "infinity", 8)) ||
            (wl == 3 && !strncasecmp(w, "nan", 3)))
            return NULL;
    }
    for (; p < end; p++) {
        char c = *p;
        if (c >= '0' && c <= '9') {
            clean[n++] = c;
            digit_before = true;
        } else if (c == '_') {
            if (!digit_before || p + 1 >= end || !(p[1] >= '0' && p[1] <= '9'))
                return NULL;
        } else if (c == '.' || c == 'e' || c == 'E') {
            is_float = true;
            clean[n++] = c;
            digit_before = false;
            if ((c == 'e' || c == 'E') && p + 1 < end && (p[1] == '+' || p[1] == '-'))
                clean[n++] = *++p;
        } else {
            return NULL;
        }
    }
    clean[n] = '\0';
    char *stop;
    errno = 0;
    if (!is_float) {
        long long ll = strtoll(clean, &stop, 10);
        if (*stop || stop == clean || errno)
            return NULL;
        return json_integer(ll);
    }
    double d = strtod(clean, &stop);
    if (*stop || stop == clean || isinf(d) || isnan(d))
        return NULL;
    return json_real(d);
}

/* ---- UTF-8 ---- */

/* Length of the UTF-8 sequence at p when *ok, else of the maximal invalid
 * prefix that Python's decoder replaces with one U+FFFD (at least 1). */
size_t sl_utf8_step(const unsigned char *p, size_t n, bool *ok)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xbf;
    size_t len;
    *ok = true;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c == 0xe0)
        len = 3, lo = 0xa0;
    else if (c == 0xed)
        len = 3, hi = 0x9f;
    else if (c >= 0xe1 && c <= 0xef)
        len = 3;
    else if (c == 0xf0)
        len = 4, lo = 0x90;
    else if (c == 0xf4)
        len = 4, hi = 0x8f;
    else if (c >= 0xf1 && c <= 0xf3)
        len = 4;
    else {
        *ok = false;
        return 1;
    }
    size_t i = 1;
    for (; i < len && i < n; i++) {
        unsigned char b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf))
            break;
    }
    if (i < len)
        *ok = false;
    return i;
}

size_t sl_utf8_cp(const unsigned char *p, size_t n, uint32_t *cp, bool *ok)
{
    bool good;
    size_t k = sl_utf8_step(p, n, &good);
    if (ok)
        *ok = good;
    if (!good) {
        *cp = 0xFFFD;
        return k;
    }
    uint32_t c = p[0];
    if (k > 1)
        c &= k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07;
    for (size_t i = 1; i < k; i++)
        c = c << 6 | (p[i] & 0x3F);
    *cp = c;
    return k;
}

size_t sl_utf8_put(uint32_t cp, char out[4])
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool sl_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        /* ASCII, eight bytes at a time */
        uint64_t w;
        while (i + 8 <= n && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080u)))
            i += 8;
        if (i >= n)
            break;
        bool ok;
        i += sl_utf8_step(p + i, n - i, &ok);
        if (!ok)
            return false;
    }
    return true;
}

size_t sl_utf8_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

void sl_utf8_clean(const char *s, size_t n, sl_buf *out)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        bool ok;
        size_t k = sl_utf8_step(p + i, n - i, &ok);
        if (ok)
            sl_buf_add(out, p + i, k);
        else
            sl_buf_add(out, "\xef\xbf\xbd", 3);
        i += k;
    }
}


/* ---- base64 ---- */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void sl_base64_encode(const unsigned char *p, size_t n, sl_buf *out)
{
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        char q[4] = {b64chars[(v >> 18) & 63], b64chars[(v >> 12) & 63],
                     i + 1 < n ? b64chars[(v >> 6) & 63] : '=', i + 2 < n ? b64chars[v & 63] : '='};
        sl_buf_add(out, q, 4);
    }
}

/* Decodes standard or URL-safe base64, ignoring whitespace; -1 on a bad
 * character or when out hits its cap. */
int sl_base64_decode(const char *s, size_t n, sl_buf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+' || c == '-')
            v = 62;
        else if (c == '/' || c == '_')
            v = 63;
        else if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        else
            return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (sl_buf_addc(out, (char)((acc >> bits) & 0xff)) < 0)
                return -1;
        }
    }
    return 0;
}

