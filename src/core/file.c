/*
 * file — see file.h.
 */
#include "core/file.h"

/* Sets key to s (JSON null for NULL); false when s is not UTF-8. */
static bool put(sl_value *v, const char *key, const char *s)
{
    return json_object_set_new(v, key, s ? json_string(s) : json_null()) == 0;
}

sl_value *sl_file_new(const sl_file *f)
{
    sl_value *v = json_object();
    bool ok = put(v, "dify_model_identity", "__dify__file__") && put(v, "id", f->id) &&
              put(v, "type", f->type) && put(v, "transfer_method", f->transfer_method) &&
              put(v, "remote_url", f->remote_url) && put(v, "related_id", f->related_id) &&
              put(v, "filename", f->filename) && put(v, "extension", f->extension) &&
              put(v, "mime_type", f->mime_type) &&
              json_object_set_new(v, "size", json_integer((json_int_t)f->size)) == 0 &&
              (!f->sha256 || put(v, "sha256", f->sha256)) && (!f->url || put(v, "url", f->url));
    if (!ok) {
        json_decref(v);
        return NULL;
    }
    return v;
}
