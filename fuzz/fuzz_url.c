/*
 * fuzz_url — libFuzzer target for net/url: sl_url_split, which cuts a URL
 * where libcurl's URL API cuts it and hands back the parts as written, and
 * sl_url_check and sl_url_origin on the same text.
 *
 * The input is the URL (up to the first NUL byte).  Besides memory errors
 * the target checks, for a URL that splits:
 *   - every part lies inside the input, in order: scheme, "://", netloc,
 *     path, then "?" and the query when there is one;
 *   - the scheme is what the input starts with, and the path is empty or
 *     starts with "/";
 * and that an http(s):// URL libcurl accepts as it stands (sl_url_check)
 * always splits: the split is no stricter than the check that came before
 * it (the http-request node takes only URLs that start so).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const char *u, size_t n, const char *p, size_t pn)
{
    return p >= u && p + pn <= u + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *u = malloc(size + 1);
    memcpy(u, data, size);
    u[size] = 0;
    size_t n = strlen(u);
    sl_url_parts p;
    sl_err e = {0};
    int split = sl_url_split(u, &p, &e);
    if (split == 0) {
        if (p.scheme != u || !inside(u, n, p.netloc, p.netloc_n) ||
            memcmp(u + p.scheme_n, "://", 3) || p.netloc != u + p.scheme_n + 3 ||
            p.path != p.netloc + p.netloc_n || !inside(u, n, p.path, p.path_n))
            abort();
        if (p.path_n && p.path[0] != '/')
            abort();
        if (p.has_query && (!inside(u, n, p.query, p.query_n) ||
                            p.query != p.path + p.path_n + 1 || p.query[-1] != '?'))
            abort();
    } else if (!e.msg) {
        abort(); /* a refusal always says why */
    }
    sl_err_clear(&e);
    int check = sl_url_check(u, &e);
    if (check && !e.msg)
        abort();
    bool web = !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8);
    if (web && check == 0 && split != 0)
        abort(); /* a URL libcurl takes that the split refuses */
    sl_err_clear(&e);
    char o[256], s[16], h[128];
    sl_url_origin(u, o, sizeof o, s, sizeof s, h, sizeof h);
    free(u);
    return 0;
}
