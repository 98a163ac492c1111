/* net/url — see url.h. */
#include "net/url.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* Whether url[0..*end) ends with s (n bytes); if so *end moves before it. */
static bool cut(const char *url, size_t *end, const char *s, size_t n)
{
    if (n > *end || memcmp(url + *end - n, s, n))
        return false;
    *end -= n;
    return true;
}

int sl_url_split(const char *url, sl_url_parts *p, sl_err *err)
{
    memset(p, 0, sizeof *p);
    if (sl_http_init(err))
        return -1;
    CURLU *u = curl_url();
    if (!u)
        return sl_err_set(err, SL_ENOMEM, "out of memory parsing a URL");
    char *scheme = NULL, *path = NULL, *query = NULL, *frag = NULL;
    int rc = 0;
    /* as written: spaces allowed (escaped later), "." and ".." kept */
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url,
                                CURLU_ALLOW_SPACE | CURLU_PATH_AS_IS | CURLU_NON_SUPPORT_SCHEME);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_PATH, &path, 0);
    if (uc != CURLUE_OK) {
        rc = sl_err_set(err, SL_EINVAL, "%s", curl_url_strerror(uc));
        goto done;
    }
    p->has_query = curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK;
    bool has_frag = curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK;
    /* The parts libcurl found, taken off the end of the text as written,
     * leave the netloc; the text must hold each part verbatim. */
    size_t end = strlen(url);
    bool ok = true;
    if (has_frag)
        ok = cut(url, &end, frag, strlen(frag)) && cut(url, &end, "#", 1);
    else
        cut(url, &end, "#", 1); /* an empty fragment */
    if (ok && p->has_query) {
        ok = cut(url, &end, query, strlen(query)) && cut(url, &end, "?", 1);
        p->query = url + end + 1;
        p->query_n = strlen(query);
    }
    size_t path_end = end;
    if (ok && !cut(url, &end, path, strlen(path)) && strcmp(path, "/"))
        ok = false; /* "/" is what libcurl makes of no path */
    p->path = url + end;
    p->path_n = path_end - end;
    p->scheme = url;
    p->scheme_n = strlen(scheme);
    if (ok && (p->scheme_n + 3 > end || strncasecmp(url, scheme, p->scheme_n) ||
               memcmp(url + p->scheme_n, "://", 3)))
        ok = false;
    if (!ok) {
        rc = sl_err_set(err, SL_EINVAL, "libcurl reads it differently from how it is written");
        goto done;
    }
    p->netloc = url + p->scheme_n + 3;
    p->netloc_n = end - p->scheme_n - 3;
done:
    curl_free(scheme);
    curl_free(path);
    curl_free(query);
    curl_free(frag);
    curl_url_cleanup(u);
    return rc;
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
