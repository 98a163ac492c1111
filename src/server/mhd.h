/*
 * mhd — libmicrohttpd, loaded when the server starts (core/dl.h).
 *
 * Only `sluice serve` needs an HTTP server; linking libmicrohttpd would map
 * it (and its GnuTLS chain) into every sluice process.  server.c includes
 * this header instead of <microhttpd.h>: the MHD_* calls it makes go
 * through pointers that sl_mhd_load fills, and it calls sl_mhd_load before
 * its first MHD_* call.
 */
#ifndef SL_SERVER_MHD_H
#define SL_SERVER_MHD_H

#include <microhttpd.h>

#include "core/err.h"

/* Every libmicrohttpd function sluice calls. */
#define SL_MHD_FNS(X) \
    X(MHD_add_response_header) X(MHD_create_post_processor) X(MHD_create_response_from_buffer) \
    X(MHD_create_response_from_callback) X(MHD_create_response_from_fd) \
    X(MHD_destroy_post_processor) X(MHD_destroy_response) X(MHD_lookup_connection_value) \
    X(MHD_post_process) X(MHD_queue_response) X(MHD_quiesce_daemon) X(MHD_resume_connection) \
    X(MHD_set_connection_option) X(MHD_start_daemon) X(MHD_stop_daemon) \
    X(MHD_suspend_connection)

#define SL_MHD_PTR(f) extern __typeof__(&f) sl_mhd_##f;
SL_MHD_FNS(SL_MHD_PTR)
#undef SL_MHD_PTR

/* Loads libmicrohttpd and fills the pointers, once per process; -1 with
 * err naming the package to install when it is missing. */
int sl_mhd_load(sl_err *err);

#define MHD_add_response_header sl_mhd_MHD_add_response_header
#define MHD_create_post_processor sl_mhd_MHD_create_post_processor
#define MHD_create_response_from_buffer sl_mhd_MHD_create_response_from_buffer
#define MHD_create_response_from_callback sl_mhd_MHD_create_response_from_callback
#define MHD_create_response_from_fd sl_mhd_MHD_create_response_from_fd
#define MHD_destroy_post_processor sl_mhd_MHD_destroy_post_processor
#define MHD_destroy_response sl_mhd_MHD_destroy_response
#define MHD_lookup_connection_value sl_mhd_MHD_lookup_connection_value
#define MHD_post_process sl_mhd_MHD_post_process
#define MHD_queue_response sl_mhd_MHD_queue_response
#define MHD_quiesce_daemon sl_mhd_MHD_quiesce_daemon
#define MHD_resume_connection sl_mhd_MHD_resume_connection
#define MHD_set_connection_option sl_mhd_MHD_set_connection_option
#define MHD_start_daemon sl_mhd_MHD_start_daemon
#define MHD_stop_daemon sl_mhd_MHD_stop_daemon
#define MHD_suspend_connection sl_mhd_MHD_suspend_connection

#endif
