/*
 * inputs — checking and converting a run's start inputs, as Dify's
 * workflow entry does before anything runs.
 */
#include "engine/run.h"

#include <string.h>

static bool is_empty(const sl_value *v)
{
    return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
}

int sl_run_prepare_inputs(const sl_graph *g, const sl_value *given, sl_value **out, sl_diag *diag)
{
    size_t errors0 = diag->errors;
    sl_value *res = json_is_object(given) ? json_deep_copy(given) : json_object();
    if (given && !json_is_object(given) && !json_is_null(given))
        sl_diag_add(diag, false, "inputs must be a JSON object of {variable: value}");
    /* Dify passes undeclared inputs through; say so, since it is usually a
     * misspelt name. */
    const char *given_name;
    sl_value *given_value;
    json_object_foreach(res, given_name, given_value) {
        bool declared = false;
        for (size_t i = 0; !declared && i < json_array_size(g->inputs); i++) {
            const char *v = json_string_value(json_object_get(json_array_get(g->inputs, i),
                                                              "variable"));
            declared = v && !strcmp(v, given_name);
        }
        if (!declared)
            sl_diag_input(diag, true, SL_DIAG_UNDECLARED, given_name, NULL,
                          "input '%s' is not declared by the start node; it is passed "
                          "through unused (check the name)", given_name);
    }
    for (size_t i = 0; i < json_array_size(g->inputs); i++) {
        const sl_value *d = json_array_get(g->inputs, i);
        const char *name = json_string_value(json_object_get(d, "variable"));
        if (!name)
            continue;
        const char *label = json_string_value(json_object_get(d, "label"));
        const char *type = json_string_value(json_object_get(d, "type"));
        if (!type)
            type = "text-input";
        bool required = json_is_true(json_object_get(d, "required"));
        sl_value *v = json_object_get(res, name);
        char who[256];
        snprintf(who, sizeof who, "input '%s'%s%s%s", name, label ? " (" : "", label ? label : "",
                 label ? ")" : "");
        /* An empty string is a value for text inputs, as in Dify: only a
         * missing (or null) input is refused or defaulted. */
        bool text = !strcmp(type, "text-input") || !strcmp(type, "paragraph");
        if (text ? (!v || json_is_null(v)) : is_empty(v)) {
            const sl_value *def = json_object_get(d, "default");
            if (!is_empty(def)) {
                json_object_set(res, name, (sl_value *)def);
                v = json_object_get(res, name);
            } else if (required) {
                char fix[320];
                snprintf(fix, sizeof fix, "give it a value (inputs.%s)", name);
                sl_diag_input(diag, false, SL_DIAG_MISSING, name, fix, "%s is required", who);
                continue;
            } else {
                if (!v)
                    json_object_set_new(res, name, json_null());
                continue;
            }
        }
        if (!strcmp(type, "text-input") || !strcmp(type, "paragraph") || !strcmp(type, "select")) {
            if (json_is_integer(v) || json_is_real(v)) {
                /* Tolerate numbers given for text, as they arrive from JSON. */
                sl_buf b;
                sl_buf_init(&b, 64);
                sl_value_text(v, &b);
                json_object_set_new(res, name, json_string(b.data));
                sl_buf_release(&b);
                v = json_object_get(res, name);
            }
            if (!json_is_string(v)) {
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s must be text, not %s", who, sl_value_type_name(v));
                continue;
            }
            const sl_value *ml = json_object_get(d, "max_length");
            if (json_is_integer(ml) && json_integer_value(ml) > 0 &&
                sl_utf8_chars(json_string_value(v), json_string_length(v)) > (size_t)json_integer_value(ml))
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s is %zu characters; at most %lld are allowed", who,
                              sl_utf8_chars(json_string_value(v), json_string_length(v)), (long long)json_integer_value(ml));
            if (!strcmp(type, "select")) {
                const sl_value *opts = json_object_get(d, "options");
                bool found = false;
                for (size_t k = 0; k < json_array_size(opts); k++)
                    if (sl_value_equal(json_array_get(opts, k), v))
                        found = true;
                if (json_array_size(opts) && !found) {
                    sl_buf b;
                    sl_buf_init(&b, 4096);
                    sl_value_pyjson(opts, &b, false);
                    sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                                  "%s must be one of %s, not '%s'", who,
                                  b.data ? b.data : "[]", json_string_value(v));
                    sl_buf_release(&b);
                }
            }
        } else if (!strcmp(type, "number")) {
            if (json_is_string(v)) {
                sl_value *num = sl_value_number_from_text(json_string_value(v));
                if (!num) {
                    sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                                  "%s must be a number, not '%s'", who,
                                  json_string_value(v));
                    continue;
                }
                json_object_set_new(res, name, num);
            } else if (!sl_value_is_number(v)) {
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s must be a number, not %s", who, sl_value_type_name(v));
            }
        } else if (!strcmp(type, "checkbox")) {
            if (json_is_string(v)) {
                const char *s = json_string_value(v);
                if (!strcasecmp(s, "true") || !strcmp(s, "1"))
                    json_object_set_new(res, name, json_true());
                else if (!strcasecmp(s, "false") || !strcmp(s, "0"))
                    json_object_set_new(res, name, json_false());
                else
                    sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                                  "%s must be true or false, not '%s'", who, s);
            } else if (!json_is_boolean(v)) {
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s must be true or false", who);
            }
        } else if (!strcmp(type, "json_object")) {
            if (json_is_string(v)) {
                json_error_t je;
                sl_value *pv = json_loads(json_string_value(v), 0, &je);
                if (!json_is_object(pv)) {
                    sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                                  "%s must be a JSON object: %s", who,
                                  pv ? "got another JSON value" : je.text);
                    json_decref(pv);
                    continue;
                }
                json_object_set_new(res, name, pv);
            } else if (!json_is_object(v)) {
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s must be a JSON object", who);
            }
        } else if (!strcmp(type, "file")) {
            if (!sl_value_is_file(v))
                sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                              "%s must be a file (pass --input %s=@PATH)", who, name);
        } else if (!strcmp(type, "file-list")) {
            if (sl_value_is_file(v)) {
                sl_value *a = json_array();
                json_array_append(a, v);
                json_object_set_new(res, name, a);
            } else {
                bool ok = json_is_array(v);
                for (size_t k = 0; ok && k < json_array_size(v); k++)
                    ok = sl_value_is_file(json_array_get(v, k));
                if (!ok)
                    sl_diag_input(diag, false, SL_DIAG_INVALID, name, NULL,
                                  "%s must be a list of files (repeat --input %s=@PATH)",
                                  who, name);
            }
        }
    }
    if (diag->errors > errors0) {
        json_decref(res);
        *out = NULL;
        return -1;
    }
    *out = res;
    return 0;
}
