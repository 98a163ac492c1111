#include "core/secret.h"
#include "core/buf.h"
#include "core/err.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    char *text;  /* the raw text; encoded forms are matched as text is read */
    size_t len;
    int refs;
} entry;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static entry *tab;
static size_t ntab, cap;
static atomic_size_t live;  /* ntab, read without the lock as a fast path */

static entry *find(const char *s)
{
    for (size_t i = 0; i < ntab; i++)
        if (!strcmp(tab[i].text, s))
            return &tab[i];
    return NULL;
}

void sl_secret_add(const char *s)
{
    if (!s || strlen(s) < SL_SECRET_MIN)
        return;
    pthread_rwlock_wrlock(&lock);
    entry *e = find(s);
    if (e) {
        e->refs++;
    } else {
        if (ntab == cap) {
            cap = cap ? cap * 2 : 16;
            tab = sl_xrealloc(tab, cap * sizeof *tab);
        }
        e = &tab[ntab++];
        e->text = sl_xstrdup(s);
        e->len = strlen(s);
        e->refs = 1;
        atomic_store(&live, ntab);
    }
    pthread_rwlock_unlock(&lock);
}

void sl_secret_remove(const char *s)
{
    if (!s || strlen(s) < SL_SECRET_MIN)
        return;
    pthread_rwlock_wrlock(&lock);
    entry *e = find(s);
    if (e && --e->refs == 0) {
        explicit_bzero(e->text, e->len);
        free(e->text);
        *e = tab[--ntab];
        atomic_store(&live, ntab);
    }
    pthread_rwlock_unlock(&lock);
}

void sl_secret_free(char *s)
{
    if (!s)
        return;
    sl_secret_remove(s);
    explicit_bzero(s, strlen(s));
    free(s);
}

/* One character c of a secret encoded at p (before end), other than as
 * itself: %XX (URL-encoded, any case), + for a space (form encoding), or a
 * JSON escape (\" \\ \/ \n \t \r \b \f \u00XX).  The bytes it takes, or 0. */
static size_t escaped_at(const char *p, const char *end, unsigned char c)
{
    if (*p == '%' && end - p >= 3) {
        int h = sl_hex_digit(p[1]), l = sl_hex_digit(p[2]);
        return h >= 0 && l >= 0 && (unsigned char)(h * 16 + l) == c ? 3 : 0;
    }
    if (*p == '+')
        return c == ' ';
    if (*p == '\\' && end - p >= 2) {
        char e = p[1];
        if ((e == '"' && c == '"') || (e == '\\' && c == '\\') || (e == '/' && c == '/') ||
            (e == 'n' && c == '\n') || (e == 't' && c == '\t') || (e == 'r' && c == '\r') ||
            (e == 'b' && c == '\b') || (e == 'f' && c == '\f'))
            return 2;
        if (e == 'u' && end - p >= 6 && c < 0x80) {
            int v = 0;
            for (int i = 2; i < 6; i++) {
                int h = sl_hex_digit(p[i]);
                if (h < 0)
                    return 0;
                v = v * 16 + h;
            }
            return v == c ? 6 : 0;
        }
    }
    return 0;
}

/* Whether secret[i..] is at p in any of its forms (also mixed, as URL
 * builders escape some characters and not others); *q gets where it ends.
 * A '\' or '%' in the text can be the character itself or start an escape,
 * so both are tried; *budget bounds that search on pathological text. */
static bool match_from(const char *p, const char *end, const char *sec, size_t i, size_t n,
                       const char **q, int *budget)
{
    for (; i < n; i++) {
        if (p >= end || --*budget < 0)
            return false;
        unsigned char c = (unsigned char)sec[i];
        size_t k = escaped_at(p, end, c);
        bool lit = (unsigned char)*p == c;
        if (lit && k) {  /* the character itself first (the raw form), then the escape */
            if (match_from(p + 1, end, sec, i + 1, n, q, budget))
                return true;
            p += k;
        } else if (lit) {
            p++;
        } else if (k) {
            p += k;
        } else {
            return false;
        }
    }
    *q = p;
    return true;
}

/* The length of secret e's text at p in any of its forms, or 0. */
static size_t match_at(const char *p, const char *end, const entry *e)
{
    const char *q = p;
    int budget = 4096;
    return match_from(p, end, e->text, 0, e->len, &q, &budget) ? (size_t)(q - p) : 0;
}

/* The first secret found in s[0..n): its start, *len and *which.  Text
 * without '%', '+' or '\' can hold a secret only in its raw form, which
 * memmem finds fast; other text is walked. */
static const char *first_hit(const char *s, size_t n, size_t *len, const entry **which)
{
    bool escapes = memchr(s, '%', n) || memchr(s, '\\', n) || memchr(s, '+', n);
    if (!escapes) {
        const char *best = NULL;
        for (size_t i = 0; i < ntab; i++) {
            const char *h = memmem(s, n, tab[i].text, tab[i].len);
            if (h && (!best || h < best || (h == best && tab[i].len > *len))) {
                best = h;
                *len = tab[i].len;
                *which = &tab[i];
            }
        }
        return best;
    }
    const char *end = s + n;
    for (const char *p = s; p < end; p++) {
        size_t bestlen = 0;
        for (size_t i = 0; i < ntab; i++) {
            size_t m = match_at(p, end, &tab[i]);
            if (m > bestlen) {
                bestlen = m;
                *which = &tab[i];
            }
        }
        if (bestlen) {
            *len = bestlen;
            return p;
        }
    }
    return NULL;
}

static void shown(sl_buf *b, const entry *e)
{
    const char *sec = e->text;
    size_t n = e->len;
    if (n >= 24) {  /* Dify's form, where it gives away at most a third */
        sl_buf_add(b, sec, 6);
        sl_buf_adds(b, "************");
        sl_buf_add(b, sec + n - 2, 2);
    } else {
        sl_buf_adds(b, "******");
    }
}

/* Holding the read lock. */
static char *mask_locked(const char *s)
{
    size_t n = strlen(s), len = 0;
    const entry *e = NULL;
    const char *h = first_hit(s, n, &len, &e);
    if (!h)
        return NULL;
    sl_buf b;
    sl_buf_init(&b, 0);
    const char *p = s;
    while (h) {
        sl_buf_add(&b, p, (size_t)(h - p));
        shown(&b, e);
        p = h + len;
        len = 0;
        h = first_hit(p, n - (size_t)(p - s), &len, &e);
    }
    sl_buf_adds(&b, p);
    sl_buf_addc(&b, 0);
    return sl_buf_detach(&b);
}

char *sl_secret_mask(const char *s)
{
    if (!s || atomic_load(&live) == 0)
        return NULL;
    pthread_rwlock_rdlock(&lock);
    char *m = mask_locked(s);
    pthread_rwlock_unlock(&lock);
    return m;
}

void sl_secret_mask_inplace(char **s)
{
    char *m = s && *s ? sl_secret_mask(*s) : NULL;
    if (m) {
        free(*s);
        *s = m;
    }
}

static sl_value *mask_tree(sl_value *v)
{
    if (json_is_string(v)) {
        char *m = mask_locked(json_string_value(v));
        if (!m)
            return json_incref(v);
        sl_value *nv = json_string(m);
        free(m);
        return nv ? nv : json_string("******");
    }
    if (json_is_array(v)) {
        sl_value *a = NULL;
        for (size_t i = 0; i < json_array_size(v); i++) {
            sl_value *e = json_array_get(v, i), *m = mask_tree(e);
            if (m != e && !a) {  /* the first change: copy what came before */
                a = json_array();
                for (size_t j = 0; j < i; j++)
                    json_array_append(a, json_array_get(v, j));
            }
            if (a)
                json_array_append(a, m);
            json_decref(m);
        }
        return a ? a : json_incref(v);
    }
    if (json_is_object(v)) {
        sl_value *o = NULL;
        const char *k;
        sl_value *e;
        json_object_foreach(v, k, e) {
            sl_value *m = mask_tree(e);
            char *mk = mask_locked(k);
            if ((m != e || mk) && !o) {
                o = json_object();
                const char *k2;
                sl_value *e2;
                json_object_foreach(v, k2, e2) {
                    if (k2 == k)
                        break;
                    json_object_set(o, k2, e2);
                }
            }
            if (o)
                json_object_set(o, mk ? mk : k, m);
            free(mk);
            json_decref(m);
        }
        return o ? o : json_incref(v);
    }
    return json_incref(v);
}

sl_value *sl_secret_mask_value(sl_value *v)
{
    if (!v || atomic_load(&live) == 0)
        return json_incref(v);
    pthread_rwlock_rdlock(&lock);
    sl_value *m = mask_tree(v);
    pthread_rwlock_unlock(&lock);
    return m;
}
