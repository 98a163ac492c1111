/*
 * transfer — libcurl transfers that a stopped run ends at once.
 *
 * curl_easy_perform() sleeps up to a second at a time while the peer is
 * silent (a model thinking, a server that never answers, a connect that
 * hangs), and asks nothing in between: a run stopped from another thread
 * (the server's stop API, its drain) or a spent time budget waited for
 * that second.  sl_transfer_perform() drives the same transfer through a
 * multi handle of its own that wakes at least every SL_TRANSFER_POLL_MS and
 * asks the caller's `stop` each time.
 *
 * The easy handle is the caller's, set up as for curl_easy_perform(); it
 * may be reused afterwards.  The result is what curl_easy_perform() would
 * return, or CURLE_ABORTED_BY_CALLBACK once `stop` answered true (the
 * transfer is dropped; `stop` records why, for the caller's message).
 */
#ifndef SL_TRANSFER_H
#define SL_TRANSFER_H

#include <stdbool.h>

#include <curl/curl.h>

#define SL_TRANSFER_POLL_MS 50

CURLcode sl_transfer_perform(CURL *h, bool (*stop)(void *ud), void *ud);

#endif
