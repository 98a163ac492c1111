/*
 * dsl — see dsl.h.
 */
#include "dsl/dsl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dsl/yaml.h"

int sl_dsl_read_file(const char *path, char **text, size_t *len, sl_err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return sl_err_set(err, SL_EIO, "%s: cannot open: %s", path, strerror(errno));
    sl_buf b;
    sl_buf_init(&b, SL_DSL_MAX_BYTES);
    /* Size the buffer once for regular files: growing it by doubling
     * costs as much as parsing a large file. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (size_t)st.st_size <= SL_DSL_MAX_BYTES) {
        b.data = sl_xmalloc((size_t)st.st_size + 1);
        b.alloc = (size_t)st.st_size + 1;
        b.data[0] = '\0';
    }
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
        if (sl_buf_add(&b, tmp, n) < 0) {
            if (f != stdin)
                fclose(f);
            sl_buf_release(&b);
            return sl_err_set(err, SL_ELIMIT, "%s: larger than 10 MB; Dify refuses such DSL "
                              "files too: split the workflow or remove embedded data", path);
        }
    }
    int rerr = ferror(f);
    if (f != stdin)
        fclose(f);
    if (rerr) {
        sl_buf_release(&b);
        return sl_err_set(err, SL_EIO, "%s: read error", path);
    }
    *len = b.len;
    *text = sl_buf_detach(&b);
    return 0;
}

int sl_dsl_export(const sl_value *doc, bool include_secrets, sl_buf *out, sl_err *err)
{
    sl_value *root = json_deep_copy(doc);
    json_object_del(root, "sluice_test");
    sl_value *wf = json_object_get(root, "workflow");
    sl_value *nodes = json_object_get(json_object_get(wf, "graph"), "nodes");
    for (size_t i = 0; i < json_array_size(nodes);) {
        const char *t = json_string_value(json_object_get(json_array_get(nodes, i), "type"));
        if (t && strcmp(t, "custom-note") == 0)
            json_array_remove(nodes, i);
        else
            i++;
    }
    if (!include_secrets) {
        sl_value *env = json_object_get(wf, "environment_variables");
        for (size_t i = 0; i < json_array_size(env); i++) {
            sl_value *e = json_array_get(env, i);
            const char *t = json_string_value(json_object_get(e, "value_type"));
            if (t && strcmp(t, "secret") == 0)
                json_object_set_new(e, "value", json_string(""));
        }
    }
    int rc = sl_yaml_emit(root, out, err);
    json_decref(root);
    return rc;
}
