/*
 * net/url — URLs read with libcurl's URL API (CURLU), the parser the
 * transfers themselves use, so what is checked here is what is sent.
 * Each call makes libcurl ready first (net/http) and fails with err
 * naming it when it cannot be.
 */
#ifndef SL_NET_URL_H
#define SL_NET_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

/* 0 when libcurl accepts `url` as it stands; else -1 with err saying why
 * in libcurl's words (SL_EINVAL), or that libcurl is missing. */
int sl_url_check(const char *url, sl_err *err);

/* The parts of a URL as it is written, cut where libcurl's parser cuts
 * it: pointers into the URL and their lengths (netloc is everything
 * between "://" and the path: user, password, host and port as written).
 * path_n is 0 when the URL has no path (libcurl reads it as "/"); the
 * fragment is left out.  Parts are not decoded or normalised ("/a/../b"
 * stays), so a caller can escape them its own way. */
typedef struct {
    const char *scheme, *netloc, *path, *query;
    size_t scheme_n, netloc_n, path_n, query_n;
    bool has_query;           /* a "?", even with nothing after it */
} sl_url_parts;

/* 0, or -1 with err (SL_EINVAL and libcurl's words) when libcurl does not
 * parse `url`; control characters are refused there, as by libcurl. */
int sl_url_split(const char *url, sl_url_parts *p, sl_err *err);

/* "scheme://host:port" with the default port filled in (the same-origin
 * rule of redirects), and the scheme and host apart.  False when the URL
 * does not parse or a part does not fit. */
bool sl_url_origin(const char *url, char *out, size_t n, char *scheme, size_t sn, char *host,
                   size_t hn);

#endif
