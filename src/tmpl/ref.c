#include "tmpl/ref.h"

#include <ctype.h>
#include <string.h>

#include "tmpl/jinja.h"

/* Tries to read one reference at p (which points at "{{#").  On success
 * fills parts (pointing into `store`) and returns the length consumed. */
static size_t parse_ref(const char *p, char *store, size_t storecap, const char **parts, int *n)
{
    const char *s = p + 3;
    size_t k = 0;
    int np = 0;
    size_t len = 0;
    /* node id */
    while ((isalnum((unsigned char)s[len]) || s[len] == '_') && len <= 50)
        len++;
    if (len == 0 || len > 50 || s[len] != '.')
        return 0;
    if (k + len + 1 > storecap)
        return 0;
    memcpy(store + k, s, len);
    store[k + len] = '\0';
    parts[np++] = store + k;
    k += len + 1;
    s += len;
    while (*s == '.') {
        s++;
        len = 0;
        if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
            return 0;
        while ((isalnum((unsigned char)s[len]) || s[len] == '_') && len <= 30)
            len++;
        if (len > 30 || np >= SL_REF_MAX_PARTS || k + len + 1 > storecap)
            return 0;
        memcpy(store + k, s, len);
        store[k + len] = '\0';
        parts[np++] = store + k;
        k += len + 1;
        s += len;
    }
    if (np < 2 || strncmp(s, "#}}", 3) != 0)
        return 0;
    *n = np;
    return (size_t)(s + 3 - p);
}

/* Calls fn for each reference in text with where it starts and how long it
 * is; stops when fn returns non-zero and returns that. */
typedef int (*each_fn)(void *ud, const char *at, size_t used, const char *const *parts, int n);

static int each_ref(const char *text, each_fn fn, void *ud)
{
    const char *p = text;
    char store[512];
    const char *parts[SL_REF_MAX_PARTS];
    while ((p = strstr(p, "{{#")) != NULL) {
        int n;
        size_t used = parse_ref(p, store, sizeof store, parts, &n);
        if (!used) {
            p++;
            continue;
        }
        int rc = fn(ud, p, used, parts, n);
        if (rc)
            return rc;
        p += used;
    }
    return 0;
}

typedef struct {
    sl_ref_resolve_fn fn;
    void *ud;
    sl_buf *out;
    const char *lit; /* start of the text not yet copied */
    bool md;         /* values as sl_ref_markdown shows them */
} render_state;

static int render_one(void *ud, const char *at, size_t used, const char *const *parts, int n)
{
    render_state *st = ud;
    sl_buf_add(st->out, st->lit, (size_t)(at - st->lit));
    st->lit = at + used;
    sl_value *v = st->fn(st->ud, parts, n);
    if (v) {
        if (st->md)
            sl_ref_markdown(v, st->out);
        else
            sl_value_text(v, st->out);
        json_decref(v);
        return 0;
    }
    /* Dify's convert_template keeps the reference's inner text when the
     * variable does not exist; workflows that print "{{#x.y#}}" for a value
     * that never came show "x.y". */
    for (int i = 0; i < n; i++) {
        if (i)
            sl_buf_addc(st->out, '.');
        sl_buf_adds(st->out, parts[i]);
    }
    return 0;
}

int sl_ref_render(const char *text, sl_ref_resolve_fn fn, void *ud, sl_buf *out)
{
    render_state st = {fn, ud, out, text, false};
    each_ref(text, render_one, &st);
    sl_buf_adds(out, st.lit);
    return out->toobig ? -1 : 0;
}

int sl_ref_render_markdown(const char *text, sl_ref_resolve_fn fn, void *ud, sl_buf *out)
{
    render_state st = {fn, ud, out, text, true};
    each_ref(text, render_one, &st);
    sl_buf_adds(out, st.lit);
    return out->toobig ? -1 : 0;
}

int sl_ref_markdown(const sl_value *v, sl_buf *out)
{
    bool files = json_is_array(v) && json_array_size(v) > 0;
    for (size_t i = 0; files && i < json_array_size(v); i++)
        files = sl_value_is_file(json_array_get(v, i));
    if (json_is_array(v) && !files) {
        for (size_t i = 0; i < json_array_size(v) && !out->toobig; i++) {
            sl_buf_adds(out, i ? "\n- " : "- ");
            sl_jinja_py_str(json_array_get(v, i), out);
        }
        return out->toobig ? -1 : 0;
    }
    if (json_is_object(v) && !sl_value_is_file(v))
        return sl_value_pyjson(v, out, true);
    return sl_value_text(v, out) < 0 || out->toobig ? -1 : 0;
}

typedef struct {
    sl_ref_visit_fn fn;
    void *ud;
} scan_state;

static int scan_one(void *ud, const char *at, size_t used, const char *const *parts, int n)
{
    scan_state *st = ud;
    (void)at;
    (void)used;
    return st->fn(st->ud, parts, n);
}

int sl_ref_scan(const char *text, sl_ref_visit_fn fn, void *ud)
{
    scan_state st = {fn, ud};
    return each_ref(text, scan_one, &st);
}

typedef struct {
    sl_ref_piece_fn fn;
    void *ud;
    const char *lit; /* start of the plain text not yet handed out */
} pieces_state;

static int piece_one(void *ud, const char *at, size_t used, const char *const *parts, int n)
{
    pieces_state *st = ud;
    int rc = 0;
    if (at > st->lit)
        rc = st->fn(st->ud, st->lit, (size_t)(at - st->lit), NULL, 0);
    st->lit = at + used;
    return rc ? rc : st->fn(st->ud, NULL, 0, parts, n);
}

int sl_ref_pieces(const char *text, sl_ref_piece_fn fn, void *ud)
{
    pieces_state st = {fn, ud, text};
    int rc = each_ref(text, piece_one, &st);
    if (!rc && *st.lit)
        rc = fn(ud, st.lit, strlen(st.lit), NULL, 0);
    return rc;
}
