/*
 * schema — see schema.h.
 */
#include "llm/schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/math.h"

static bool is_type(const sl_value *v, const char *t)
{
    if (!strcmp(t, "string"))
        return json_is_string(v);
    if (!strcmp(t, "number"))
        return json_is_number(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == sl_floor(json_real_value(v)));
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v);
    if (!strcmp(t, "object"))
        return json_is_object(v);
    if (!strcmp(t, "array"))
        return json_is_array(v);
    if (!strcmp(t, "null"))
        return json_is_null(v);
    return true; /* unknown type names do not fail */
}

static int check(const sl_value *s, const sl_value *v, char *path, size_t plen, sl_err *err,
                 int depth)
{
    if (!json_is_object(s) || depth > 64)
        return 0;
    const sl_value *t = json_object_get(s, "type");
    if (json_is_string(t) && !is_type(v, json_string_value(t))) {
        sl_err_set(err, SL_EINVAL, "%s should be %s, not %s", path, json_string_value(t),
                 sl_value_type_name(v));
        return -1;
    }
    if (json_is_array(t)) {
        bool any = false;
        for (size_t i = 0; i < json_array_size(t) && !any; i++)
            any = json_is_string(json_array_get(t, i)) &&
                  is_type(v, json_string_value(json_array_get(t, i)));
        if (!any) {
            sl_err_set(err, SL_EINVAL, "%s has a type the schema does not allow (%s)", path,
                     sl_value_type_name(v));
            return -1;
        }
    }
    const sl_value *en = json_object_get(s, "enum");
    if (json_is_array(en)) {
        bool found = false;
        for (size_t i = 0; i < json_array_size(en) && !found; i++)
            found = sl_value_equal(json_array_get(en, i), v);
        if (!found) {
            sl_err_set(err, SL_EINVAL, "%s is not one of the values the schema lists", path);
            return -1;
        }
    }
    const sl_value *cn = json_object_get(s, "const");
    if (cn && !sl_value_equal(cn, v)) {
        sl_err_set(err, SL_EINVAL, "%s is not the constant the schema asks for", path);
        return -1;
    }
    if (json_is_string(v)) {
        size_t c = sl_utf8_chars(json_string_value(v), json_string_length(v));
        const sl_value *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
        if ((json_is_integer(mn) && (json_int_t)c < json_integer_value(mn)) ||
            (json_is_integer(mx) && (json_int_t)c > json_integer_value(mx))) {
            sl_err_set(err, SL_EINVAL, "%s has a length the schema does not allow (%zu)", path, c);
            return -1;
        }
    }
    if (json_is_number(v)) {
        double d = sl_value_number(v);
        const sl_value *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
        if ((sl_value_is_number(mn) && d < sl_value_number(mn)) ||
            (sl_value_is_number(mx) && d > sl_value_number(mx))) {
            sl_err_set(err, SL_EINVAL, "%s is out of the schema's range", path);
            return -1;
        }
    }
    if (json_is_object(v)) {
        const sl_value *props = json_object_get(s, "properties");
        const sl_value *req = json_object_get(s, "required");
        for (size_t i = 0; i < json_array_size(req); i++) {
            const char *k = json_string_value(json_array_get(req, i));
            if (k && !json_object_get(v, k)) {
                sl_err_set(err, SL_EINVAL, "%s.%s is required but missing", path, k);
                return -1;
            }
        }
        const sl_value *ap = json_object_get(s, "additionalProperties");
        const char *k;
        const sl_value *x;
        json_object_foreach((sl_value *)v, k, x) {
            const sl_value *ps = json_object_get(props, k);
            if (!ps && json_is_false(ap)) {
                sl_err_set(err, SL_EINVAL, "%s.%s is not a property the schema allows", path, k);
                return -1;
            }
            if (!ps && json_is_object(ap))
                ps = ap;
            if (ps) {
                size_t old = strlen(path);
                snprintf(path + old, plen - old, ".%s", k);
                int rc = check(ps, x, path, plen, err, depth + 1);
                path[old] = 0;
                if (rc)
                    return rc;
            }
        }
    }
    if (json_is_array(v)) {
        const sl_value *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
        json_int_t sz = (json_int_t)json_array_size(v);
        if ((json_is_integer(mn) && sz < json_integer_value(mn)) ||
            (json_is_integer(mx) && sz > json_integer_value(mx))) {
            sl_err_set(err, SL_EINVAL, "%s has %lld items, which the schema does not allow", path,
                     (long long)sz);
            return -1;
        }
        const sl_value *items = json_object_get(s, "items");
        for (size_t i = 0; json_is_object(items) && i < json_array_size(v); i++) {
            size_t old = strlen(path);
            snprintf(path + old, plen - old, "[%zu]", i);
            int rc = check(items, json_array_get(v, i), path, plen, err, depth + 1);
            path[old] = 0;
            if (rc)
                return rc;
        }
    }
    return 0;
}

int sl_schema_check(const sl_value *schema, const sl_value *v, sl_err *err)
{
    char path[512] = "$";
    return check(schema, v, path, sizeof path, err, 0);
}

sl_value *sl_json_in_text(const char *text, size_t len)
{
    sl_value *v = json_loadb(text, len, JSON_DECODE_ANY, NULL);
    if (json_is_object(v) || json_is_array(v))
        return v;
    json_decref(v);
    const char *fence = memmem(text, len, "```", 3);
    if (fence) {
        const char *start = fence + 3;
        const char *nl = memchr(start, '\n', len - (size_t)(start - text));
        if (nl) {
            const char *end = memmem(nl, len - (size_t)(nl - text), "```", 3);
            if (end && (v = json_loadb(nl + 1, (size_t)(end - nl - 1), 0, NULL)))
                return v;
        }
    }
    const char *a = memchr(text, '{', len);
    const char *b = NULL;
    for (const char *p = text + len; p > text; p--)
        if (p[-1] == '}') {
            b = p;
            break;
        }
    if (a && b && b > a)
        return json_loadb(a, (size_t)(b - a), 0, NULL);
    return NULL;
}
