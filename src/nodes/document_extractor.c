/*
 * document_extractor — Dify's document-extractor node.
 *
 * Field: variable_selector, naming a file or a list of files
 * (is_array_file is the editor's; the value decides, as in Dify).  Output
 * `text`: a file's text, or for a list the list of texts (empty entries
 * dropped first; one file that fails fails the node); an empty value
 * gives [].  Each document is read in a process of its own, limited and
 * confined (extract/isolate.h), bounded by the extract_* limits; its
 * format is chosen and read as Dify does (extract/extract.h,
 * docs/documents.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mime.h"
#include "engine/graph.h"
#include "engine/limits.h"
#include "engine/node.h"
#include "engine/pool.h"
#include "extract/isolate.h"
#include "nodes/http_request.h"

static int check(sl_check *c, const sl_gnode *n)
{
    return sl_check_selector(c, n, n->data, "variable_selector", "variable_selector", true);
}

static bool truthy(const sl_value *v)
{
    if (!v || json_is_null(v) || json_is_false(v))
        return false;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    if (json_is_array(v))
        return json_array_size(v) > 0;
    if (json_is_object(v))
        return json_object_size(v) > 0;
    if (json_is_integer(v))
        return json_integer_value(v) != 0;
    if (json_is_real(v))
        return json_real_value(v) != 0;
    return true;
}

static bool stopped(void *ud)
{
    return sl_exec_cancelled(ud);
}

/* The bytes of a file value: sluice's own, or its http(s) remote_url
 * fetched through the guarded client (*url then names it and ctype holds
 * the answer's Content-Type).  0, or -1 after sl_exec_fail. */
static int file_bytes(sl_node_exec *x, const sl_value *f, sl_buf *out, const char **url,
                      char *ctype, size_t ctype_n)
{
    const sl_limits *lim = sl_exec_limits(x);
    const char *name = json_string_value(json_object_get(f, "filename"));
    sl_err e = {0};
    int got = sl_exec_file_bytes(x, f, lim->extract_max_input, out, &e);
    if (got < 0) {
        sl_exec_fail(x, "FileDownloadError", "Error downloading file: '%s': %s (limit "
                     "extract_max_input=%zu)", name ? name : "?", e.msg, lim->extract_max_input);
        sl_err_clear(&e);
        return -1;
    }
    if (got == 0)
        return 0;
    const char *remote = json_string_value(json_object_get(f, "remote_url"));
    if (!remote || !*remote)
        remote = json_string_value(json_object_get(f, "url"));
    if (!remote || (strncmp(remote, "http://", 7) && strncmp(remote, "https://", 8)))
        return sl_exec_fail(x, "FileDownloadError", "Missing URL for remote file ('%s')",
                            name ? name : "?");
    sl_hr_fetch fetch = {x, "FileDownloadError", "extract_max_input", "Error downloading file: ",
                         lim->extract_max_input,
                         lim->http_connect_timeout_s, lim->http_read_timeout_s,
                         lim->http_write_timeout_s, lim->http_ssl_verify, ctype, ctype_n};
    *url = remote;
    return sl_hr_fetch_file(&fetch, remote, name, out);
}

/* One file's text (new string), or NULL after sl_exec_fail. */
static sl_value *one(sl_node_exec *x, const sl_value *f)
{
    const sl_limits *lim = sl_exec_limits(x);
    const char *ext = json_string_value(json_object_get(f, "extension"));
    const char *mime = json_string_value(json_object_get(f, "mime_type"));
    char dotted[64];
    if (ext && *ext && *ext != '.') {  /* Dify keeps ".pdf"; some clients send "pdf" */
        snprintf(dotted, sizeof dotted, ".%s", ext);
        ext = dotted;
    }
    sl_buf bytes;
    sl_buf_init(&bytes, lim->extract_max_input + 1);
    const char *url = NULL;
    char ctype[128] = "";
    if (file_bytes(x, f, &bytes, &url, ctype, sizeof ctype)) {
        sl_buf_release(&bytes);
        return NULL;
    }
    /* a remote file named by its URL alone is typed as Dify types it: the
     * extension of the answer's type, else of the URL's path, else .bin */
    char url_ext[32] = "";
    if (url && !(ext && *ext) && !(mime && *mime)) {
        mime = *ctype ? ctype : NULL;
        ext = mime ? sl_mime_ext_for(mime) : NULL;
        if (!ext) {
            /* the last dot of the path's last part: "/a/report.v2.csv?x" is .csv */
            const char *end = url + strcspn(url, "?#"), *dot = NULL;
            for (const char *p = end; p > url && p[-1] != '/' && !dot; p--)
                if (p[-1] == '.')
                    dot = p - 1;
            if (dot && end - dot < (long)sizeof url_ext)
                snprintf(url_ext, sizeof url_ext, "%.*s", (int)(end - dot), dot);
            ext = *url_ext ? url_ext : ".bin";
        }
    }
    sl_err err = {0};
    sl_doc_kind kind = sl_extract_kind(ext, mime, &err);
    if (kind == SL_DOC_UNKNOWN) {
        sl_exec_fail(x, "UnsupportedFileTypeError", "%s", err.msg);
        sl_err_clear(&err);
        sl_buf_release(&bytes);
        return NULL;
    }
    sl_extract_run r;
    sl_extract_run_default(&r);
    r.timeout_s = lim->extract_timeout_s;
    if (r.timeout_s > sl_exec_time_left(x))
        r.timeout_s = sl_exec_time_left(x);
    r.memory_bytes = lim->extract_max_memory;
    r.lim.max_output = lim->extract_max_output;
    r.lim.max_member = lim->extract_max_member;
    r.lim.max_unpacked = lim->extract_max_unpacked;
    r.lim.max_xml_depth = (size_t)lim->extract_xml_depth;
    r.lim.max_xml_nodes = lim->extract_xml_nodes;
    r.stop = stopped;
    r.ud = x;
    sl_buf text;
    sl_buf_init(&text, lim->extract_max_output + 1);
    int rc = sl_extract_isolated(kind, bytes.data, bytes.len, &r, &text, &err);
    sl_buf_release(&bytes);
    sl_value *s = NULL;
    if (rc == 0) {
        s = json_stringn(text.data ? text.data : "", text.len);
        if (!s)
            rc = sl_err_set(&err, SL_EPARSE, "Failed to extract text from %s: the text is not "
                            "valid UTF-8", sl_extract_kind_name(kind));
    }
    sl_buf_release(&text);
    if (rc) {
        if (err.setting)
            sl_exec_fail(x, "TextExtractionError", "%s", err.msg);
        else
            sl_exec_fail(x, err.code == SL_EUNSUPPORTED ? "UnsupportedFileTypeError"
                                                        : "TextExtractionError", "%s", err.msg);
        sl_err_clear(&err);
        return NULL;
    }
    return s;
}

static int run(sl_node_exec *x)
{
    const sl_value *sel = json_object_get(sl_exec_data(x), "variable_selector");
    sl_exec_input(x, "variable_selector", json_deep_copy(sel));
    char st[256];
    sl_pool_selector_text(sel, st, sizeof st);
    sl_value *v = sl_exec_get(x, sel);
    if (!v)
        return sl_exec_fail(x, "DocumentExtractorError",
                            "File variable not found for selector: %s", st);
    bool list = json_is_array(v);
    if (truthy(v) && !(list || sl_value_is_file(v))) {
        json_decref(v);
        return sl_exec_fail(x, "DocumentExtractorError",
                            "Variable %s is not an ArrayFileSegment", st);
    }
    sl_value *files = json_array();
    if (list) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            sl_value *f = json_array_get(v, i);
            if (!truthy(f))
                continue;  /* empty entries are dropped, as Dify's filter */
            if (!sl_value_is_file(f)) {
                json_decref(files);
                json_decref(v);
                return sl_exec_fail(x, "DocumentExtractorError",
                                    "Variable %s is not an ArrayFileSegment", st);
            }
            json_array_append(files, f);
        }
    } else if (truthy(v)) {
        json_array_append(files, v);
    }
    sl_exec_process(x, "documents", json_incref(files));
    sl_value *texts = json_array();
    for (size_t i = 0; i < json_array_size(files); i++) {
        sl_value *t = one(x, json_array_get(files, i));
        if (!t) {
            json_decref(texts);
            json_decref(files);
            json_decref(v);
            return -1;
        }
        json_array_append_new(texts, t);
    }
    if (list || !truthy(v)) {
        sl_exec_output(x, "text", texts);
    } else {
        sl_exec_output(x, "text", json_incref(json_array_get(texts, 0)));
        json_decref(texts);
    }
    json_decref(files);
    json_decref(v);
    return 0;
}

const sl_node_kind sl_kind_document_extractor = {
    .type = "document-extractor",
    .check = check,
    .run = run,
};
