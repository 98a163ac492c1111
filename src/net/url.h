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

/* "scheme://host:port" with the default port filled in (the same-origin
 * rule of redirects), and the scheme and host apart.  False when the URL
 * does not parse or a part does not fit. */
bool sl_url_origin(const char *url, char *out, size_t n, char *scheme, size_t sn, char *host,
                   size_t hn);

#endif
