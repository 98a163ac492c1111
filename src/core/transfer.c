#include "core/transfer.h"

CURLcode sl_transfer_perform(CURL *h, bool (*stop)(void *ud), void *ud)
{
    CURLM *m = curl_multi_init();
    if (!m)
        return CURLE_OUT_OF_MEMORY;
    if (curl_multi_add_handle(m, h) != CURLM_OK) {
        curl_multi_cleanup(m);
        return CURLE_FAILED_INIT;
    }
    CURLcode rc = CURLE_OK;
    for (;;) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(m, &running);
        bool done = false;
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) {
                rc = msg->data.result;
                done = true;
            }
        if (done)
            break;
        if (mc != CURLM_OK || !running) {
            rc = mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
            break;
        }
        if (stop && stop(ud)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        /* sleeps until a socket is ready, curl's own next timer, or the
         * next look at `stop` */
        if (curl_multi_poll(m, NULL, 0, SL_TRANSFER_POLL_MS, NULL) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
    }
    curl_multi_remove_handle(m, h);
    curl_multi_cleanup(m);
    return rc;
}
