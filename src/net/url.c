/* net/url — see url.h. */
#include "net/url.h"

#include <stdio.h>

#include "net/curl.h"
#include "net/http.h"

int sl_url_check(const char *url, sl_err *err)
{
    if (sl_http_init(err))
        return -1;
    CURLU *u = curl_url();
    CURLUcode uc = u ? curl_url_set(u, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    curl_url_cleanup(u);
    if (uc == CURLUE_OK)
        return 0;
    return sl_err_set(err, SL_EINVAL, "%s", curl_url_strerror(uc));
}

bool sl_url_origin(const char *url, char *out, size_t n, char *scheme, size_t sn, char *host,
                   size_t hn)
{
    sl_err e = {0};
    if (sl_http_init(&e)) {
        sl_err_clear(&e);
        return false;
    }
    CURLU *u = curl_url();
    char *s = NULL, *h = NULL, *p = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OK;
    if (ok) {
        snprintf(out, n, "%s://%s:%s", s, h, p);
        snprintf(scheme, sn, "%s", s);
        snprintf(host, hn, "%s", h);
    }
    curl_free(s);
    curl_free(h);
    curl_free(p);
    curl_url_cleanup(u);
    return ok;
}
