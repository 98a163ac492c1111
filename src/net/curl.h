/*
 * net/curl — libcurl for src/net only, loaded on the first request (core/dl)
 * rather than linked: a command that makes no request does not map libcurl
 * and its TLS, HTTP/2, IDN, Kerberos and LDAP chain.  The curl_* names
 * below call through pointers that sl_net_curl_load() fills; nothing
 * outside src/net includes this header or <curl/curl.h>.
 */
#ifndef SL_NET_CURL_H
#define SL_NET_CURL_H

/* plain prototypes: the type-checking macros would hide the names */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "core/err.h"

#define NC_FNS(X)                                                                                \
    X(curl_global_init) X(curl_easy_strerror) X(curl_easy_init) X(curl_easy_cleanup)             \
    X(curl_easy_reset) X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_slist_append)             \
    X(curl_slist_free_all) X(curl_mime_init) X(curl_mime_free) X(curl_mime_addpart)              \
    X(curl_mime_name) X(curl_mime_filename) X(curl_mime_type) X(curl_mime_data)                  \
    X(curl_multi_init) X(curl_multi_add_handle) X(curl_multi_remove_handle)                      \
    X(curl_multi_perform) X(curl_multi_info_read) X(curl_multi_poll) X(curl_multi_cleanup)       \
    X(curl_getdate) X(curl_url) X(curl_url_set) X(curl_url_get) X(curl_url_cleanup)              \
    X(curl_url_strerror) X(curl_free)

/* the pointers (defined in net/http.c), declared before the names below
 * are mapped onto them */
#define NC_PTR(f) extern __typeof__(&f) nc_##f;
NC_FNS(NC_PTR)
#undef NC_PTR

/* Loads libcurl and resolves every name above, once per process; 0, or
 * -1 with err naming libcurl and the Debian package to install. */
int sl_net_curl_load(sl_err *err);

#define curl_global_init nc_curl_global_init
#define curl_easy_strerror nc_curl_easy_strerror
#define curl_easy_init nc_curl_easy_init
#define curl_easy_cleanup nc_curl_easy_cleanup
#define curl_easy_reset nc_curl_easy_reset
/* curl.h makes these two function-like macros that only count arguments */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_setopt nc_curl_easy_setopt
#define curl_easy_getinfo nc_curl_easy_getinfo
#define curl_slist_append nc_curl_slist_append
#define curl_slist_free_all nc_curl_slist_free_all
#define curl_mime_init nc_curl_mime_init
#define curl_mime_free nc_curl_mime_free
#define curl_mime_addpart nc_curl_mime_addpart
#define curl_mime_name nc_curl_mime_name
#define curl_mime_filename nc_curl_mime_filename
#define curl_mime_type nc_curl_mime_type
#define curl_mime_data nc_curl_mime_data
#define curl_multi_init nc_curl_multi_init
#define curl_multi_add_handle nc_curl_multi_add_handle
#define curl_multi_remove_handle nc_curl_multi_remove_handle
#define curl_multi_perform nc_curl_multi_perform
#define curl_multi_info_read nc_curl_multi_info_read
#define curl_multi_poll nc_curl_multi_poll
#define curl_multi_cleanup nc_curl_multi_cleanup
#define curl_getdate nc_curl_getdate
#define curl_url nc_curl_url
#define curl_url_set nc_curl_url_set
#define curl_url_get nc_curl_url_get
#define curl_url_cleanup nc_curl_url_cleanup
#define curl_url_strerror nc_curl_url_strerror
#define curl_free nc_curl_free

#endif
