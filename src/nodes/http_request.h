/*
 * http_request.h — what the files of the http-request node share (not a
 * public interface): the request as built from the node's data, the
 * response as read back, and the helpers each part uses.
 *
 *   http_request.c   the node: run, load-time checks
 *   http_build.c     the request from the node's data, and its log
 *   http_response.c  the transfer (net/http), redirects, the outputs
 *   http_text.c      key/value lists, Python's text rules, URL pieces,
 *                    header parameters
 */
#ifndef SL_NODES_HTTP_REQUEST_H
#define SL_NODES_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/value.h"
#include "engine/limits.h"
#include "engine/node.h"

/* Response header bytes kept per response: far above any real server, low
 * enough that a hostile one cannot grow our memory with headers. */
#define HEADER_CAP ((size_t)256 << 10)
/* Dify sniffs this many leading bytes to tell text from binary. */
#define SNIFF_BYTES 1024
/* Longest body text quoted back in an error message. */
#define QUOTE_MAX 300

enum { B_NONE, B_FORM_DATA, B_URLENCODED, B_RAW, B_JSON, B_BINARY };

/* body.type, and the methods, as Dify names them (NULL-terminated) */
extern const char *const sl_hr_body_types[];
extern const char *const sl_hr_methods[];

/* Key/value lists.  kv_put has Python dict semantics (an equal key keeps
 * its place and takes the new value), which is what Dify builds headers
 * and form fields with. */
typedef struct {
    char *k, *v;
} kv;

typedef struct {
    kv *a;
    size_t n, alloc;
} kvlist;

typedef struct {
    char *key, *filename, *mime;
    sl_buf data;
} part;

typedef struct {
    sl_node_exec *x;
    const sl_limits *lim;
    const char *etype;        /* error type for transfer failures */
    char method[8];           /* upper-case */
    sl_buf url;               /* rendered */
    char *wire_url;           /* with params merged and bad characters escaped */
    kvlist params, headers;
    int btype;                /* B_*, or -1 when the node has no body */
    bool send;                /* a payload goes on the wire */
    sl_buf payload;           /* raw-text, json, binary, urlencoded bytes */
    const char *raw_template; /* raw-text value before rendering (for the log) */
    kvlist form;              /* form-data text fields */
    part *parts;
    size_t nparts;
    char *auth_header;        /* header to mask in the log, when api-key */
    double connect_s, read_s, write_s;
    bool ssl_verify;
} request;

typedef struct {
    long status;
    sl_value *headers;        /* lower-case names; repeats joined by ", " */
    sl_buf body;
    bool over;                /* body passed the larger size cap */
} response;

/* http_text.c: small helpers, key/value lists (Python dict rules), text
 * encodings, URL pieces and header parameters, as each definition says */
int sl_hr_index_of(const char *s, const char *const *set, bool nocase);
bool sl_hr_is_space(unsigned char c);
void sl_hr_strip(const char **s, size_t *n);
bool sl_hr_next_line(const char **pos, const char *end, const char **line, size_t *len);
void sl_hr_kv_add(kvlist *l, const char *k, size_t kn, const char *v, size_t vn);
void sl_hr_kv_put(kvlist *l, const char *k, size_t kn, const char *v, size_t vn);
void sl_hr_kv_puts(kvlist *l, const char *k, const char *v);
const kv *sl_hr_kv_find_ci(const kvlist *l, const char *k);
void sl_hr_kv_drop_ci(kvlist *l, const char *k);
void sl_hr_kv_copy(kvlist *dst, const kvlist *src);
void sl_hr_kv_release(kvlist *l);
sl_value *sl_hr_header_text(const char *s, size_t n);
size_t sl_hr_utf8_cut(const char *s, size_t n);
void sl_hr_ascii_escape(const char *s, size_t n, sl_buf *out);
sl_value *sl_hr_decode_body(const char *charset, const char *s, size_t n);
void sl_hr_urlencode(sl_buf *out, const kvlist *l);
char *sl_hr_unquote(const char *s, size_t n, bool plus);
void sl_hr_url_fix(sl_buf *out, const char *s, size_t n);
/* the URL with control characters percent-encoded (libcurl refuses them;
 * sluice has always sent them escaped); a new string */
char *sl_hr_url_controls(const char *u);
void sl_hr_merge_query(sl_buf *out, const char *q, size_t qn, const kvlist *params);
void sl_hr_url_for_msg(const char *u, char *out, size_t n);
void sl_hr_header_main(const char *h, char *out, size_t n);
bool sl_hr_header_param(const char *h, const char *name, sl_buf *out);
char *sl_hr_disposition_filename(const char *cd);

/* http_build.c: the request from the node's data (0, or -1 after
 * sl_exec_fail), and Dify's process_data.request for it (new reference) */
int sl_hr_build_request(request *r);
sl_value *sl_hr_request_log(const request *r, sl_err *err);

/* A GET of a file's http(s) URL through the guarded client, for nodes
 * that read files (http-request's bodies, document-extractor): at most cap
 * bytes, appended to out.  0, or -1 after sl_exec_fail(etype) naming the
 * file, the URL, and cap_name, the limit to raise, when it is larger. */
typedef struct {
    sl_node_exec *x;
    const char *etype, *cap_name;
    const char *prefix;  /* before each message ("Error downloading file: "), or "" */
    size_t cap;
    double connect_s, read_s, write_s;
    bool ssl_verify;
    char *ctype;         /* if not NULL: the response's Content-Type, its main part */
    size_t ctype_n;
} sl_hr_fetch;
int sl_hr_fetch_file(const sl_hr_fetch *f, const char *url, const char *name, sl_buf *out);

/* http_response.c: sends the request, following redirects (0, or -1
 * after sl_exec_fail; a body over the cap sets o->over), and publishes
 * the outputs */
int sl_hr_perform(request *r, response *o);
int sl_hr_publish(request *r, response *o);

/* http_request.c: a request and a response, empty; their release */
void sl_hr_request_init(request *r, sl_node_exec *x);
void sl_hr_request_release(request *r);
void sl_hr_response_init(response *o, size_t cap);
void sl_hr_response_release(response *o);

#endif
