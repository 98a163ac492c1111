/*
 * variable-aggregator — the first variable that has a value.
 *
 * Branches that merge again (after an if-else or a question classifier)
 * each set a different variable; the aggregator outputs whichever of its
 * `variables` exists, trying them in order.  With
 * advanced_settings.group_enabled, each group does the same on its own
 * list and the output is {group_name: {output: value}} per group.
 *
 * As in Dify, a variable "has a value" when it exists in the pool, even
 * if that value is None; when none exists the output (or the group) is
 * simply absent and the node still succeeds.  `output_type` is a label
 * for the editor and is not enforced.  Inputs record the chosen value
 * under its selector without the node id ("text", "obj.key").
 *
 * "variable-assigner" is the legacy type name of this same node (the real
 * assigner is "assigner"); both run this code.
 */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "engine/graph.h"
#include "engine/node.h"

/* "var.path": the selector without its node id, as Dify names inputs. */
static void input_name(const sl_value *sel, sl_buf *out)
{
    for (size_t i = 1; i < json_array_size(sel); i++) {
        if (i > 1)
            sl_buf_addc(out, '.');
        const char *p = json_string_value(json_array_get(sel, i));
        sl_buf_adds(out, p ? p : "");
    }
}

/* The first selector of `list` whose variable exists: a new reference,
 * with its input recorded; NULL when none does. */
static sl_value *first_present(sl_node_exec *x, const sl_value *list)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const sl_value *sel = json_array_get(list, i);
        sl_value *v = json_is_array(sel) ? sl_exec_get(x, sel) : NULL;
        if (!v)
            continue;
        sl_buf name;
        sl_buf_init(&name, 4096);
        input_name(sel, &name);
        sl_exec_input(x, name.data ? name.data : "", json_incref(v));
        sl_buf_release(&name);
        return v;
    }
    return NULL;
}

static bool groups_on(const sl_value *data)
{
    const sl_value *adv = json_object_get(data, "advanced_settings");
    return json_is_object(adv) && json_is_true(json_object_get(adv, "group_enabled"));
}

static int run(sl_node_exec *x)
{
    const sl_value *data = sl_exec_data(x);
    if (!groups_on(data)) {
        sl_value *v = first_present(x, json_object_get(data, "variables"));
        if (v)
            sl_exec_output(x, "output", v);
        return 0;
    }
    const sl_value *groups = json_object_get(json_object_get(data, "advanced_settings"), "groups");
    for (size_t g = 0; g < json_array_size(groups); g++) {
        const sl_value *grp = json_array_get(groups, g);
        const char *name = json_string_value(json_object_get(grp, "group_name"));
        if (!name)
            continue;
        sl_value *v = first_present(x, json_object_get(grp, "variables"));
        if (!v)
            continue;
        sl_value *o = json_object();
        json_object_set_new(o, "output", v);
        sl_exec_output(x, name, o);
    }
    return 0;
}

static int check_list(sl_check *c, const sl_gnode *n, const sl_value *holder, const char *key,
                      const char *field, bool required)
{
    const sl_value *list = json_object_get(holder, key);
    if (!list || json_is_null(list)) {
        if (!required)
            return 0;
        sl_check_error(c, n, holder, NULL, field, "missing; list the variables to aggregate, "
                       "e.g. [[llm_a, text], [llm_b, text]]");
        return -1;
    }
    if (!json_is_array(list)) {
        sl_check_error(c, n, holder, key, field, "must be a list of variable selectors such as "
                       "[[llm_a, text], [llm_b, text]]");
        return -1;
    }
    int bad = 0;
    char f[160];
    for (size_t i = 0; i < json_array_size(list); i++) {
        snprintf(f, sizeof f, "%s[%zu]", field, i);
        bad |= sl_check_selector_or_skip(c, n, json_array_get(list, i), NULL, f) < 0;
    }
    return bad ? -1 : 0;
}

static int check(sl_check *c, const sl_gnode *n)
{
    const sl_value *data = n->data;
    const sl_value *adv = json_object_get(data, "advanced_settings");
    bool grouped = groups_on(data);
    int bad = check_list(c, n, data, "variables", "variables", !grouped) < 0;
    const sl_value *ot = json_object_get(data, "output_type");
    if (ot && !json_is_null(ot) && !json_is_string(ot)) {
        sl_check_error(c, n, data, "output_type", "output_type", "must be a type name such as "
                       "string or array[object]");
        bad = 1;
    }
    if (!adv || json_is_null(adv))
        return bad ? -1 : 0;
    if (!json_is_object(adv)) {
        sl_check_error(c, n, data, "advanced_settings", "advanced_settings",
                       "must be a mapping {group_enabled, groups}");
        return -1;
    }
    const sl_value *ge = json_object_get(adv, "group_enabled");
    if (ge && !json_is_boolean(ge) && !json_is_null(ge)) {
        sl_check_error(c, n, adv, "group_enabled", "advanced_settings.group_enabled",
                       "must be true or false");
        bad = 1;
    }
    const sl_value *groups = json_object_get(adv, "groups");
    if (!groups || json_is_null(groups)) {
        if (grouped) {
            sl_check_error(c, n, adv, NULL, "advanced_settings.groups", "missing while "
                           "group_enabled is true; add groups [{group_name, variables}] or "
                           "turn grouping off");
            bad = 1;
        }
        return bad ? -1 : 0;
    }
    if (!json_is_array(groups)) {
        sl_check_error(c, n, adv, "groups", "advanced_settings.groups", "must be a list of "
                       "{group_name, variables, output_type}");
        return -1;
    }
    char f[160];
    for (size_t g = 0; g < json_array_size(groups); g++) {
        const sl_value *grp = json_array_get(groups, g);
        snprintf(f, sizeof f, "advanced_settings.groups[%zu]", g);
        if (!json_is_object(grp)) {
            sl_check_error(c, n, grp, NULL, f, "must be a mapping {group_name, variables, "
                           "output_type}");
            bad = 1;
            continue;
        }
        const char *name = json_string_value(json_object_get(grp, "group_name"));
        snprintf(f, sizeof f, "advanced_settings.groups[%zu].group_name", g);
        if (!name || !*name) {
            sl_check_error(c, n, grp, json_object_get(grp, "group_name") ? "group_name" : NULL,
                           f, "missing or not text; the group name is the output variable "
                           "that later nodes read");
            bad = 1;
        } else {
            for (size_t k = 0; k < g; k++) {
                const char *other = json_string_value(
                    json_object_get(json_array_get(groups, k), "group_name"));
                if (other && strcmp(other, name) == 0) {
                    sl_check_warn(c, n, grp, "group_name", f, "group name '%s' is also used by "
                                  "groups[%zu]; the later group's output replaces the "
                                  "earlier one: rename one", name, k);
                    break;
                }
            }
        }
        snprintf(f, sizeof f, "advanced_settings.groups[%zu].variables", g);
        bad |= check_list(c, n, grp, "variables", f, grouped) < 0;
    }
    return bad ? -1 : 0;
}

const sl_node_kind sl_kind_variable_aggregator = {
    .type = "variable-aggregator",
    .check = check,
    .run = run,
};
const sl_node_kind sl_kind_variable_assigner_legacy = {
    .type = "variable-assigner",
    .check = check,
    .run = run,
};
