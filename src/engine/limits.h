/*
 * limits — every bound a run obeys, in one struct, with Dify's defaults
 * where Dify has one.  Zero-initialised fields are not meaningful: start
 * from sl_limits_default() and override.  sl_limits_set() takes
 * "name=value" pairs from the CLI, config files or the environment.
 */
#ifndef SL_LIMITS_H
#define SL_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"

struct sl_limits {
    int max_steps;              /* node runs per graph engine (Dify: 500) */
    double max_time_s;          /* wall time per run (Dify: 1200 s) */
    int max_depth;              /* nested workflow/containers depth (Dify: 5) */
    size_t max_variable_bytes;  /* one env/conversation/loop variable (Dify: 200 KB) */
    size_t max_output_bytes;    /* one node output (16 MB; Dify has no single cap) */
    int workers;                /* parallel branch workers (Dify: 10) */
    int max_iterations;         /* items of one iteration node */
    int max_loop_count;         /* loop_count cap (Dify: 100) */
    int parallel_iterations;    /* cap on iteration parallel_nums (Dify: 10) */
    size_t max_string_bytes;    /* strings produced by nodes (Dify: 400,000 chars) */
    /* http-request node (Dify's HTTP_REQUEST_* settings) */
    double http_connect_timeout_s;   /* 10 */
    double http_read_timeout_s;      /* 600 */
    double http_write_timeout_s;     /* 600 */
    size_t http_max_text_bytes;      /* 1 MB */
    size_t http_max_binary_bytes;    /* 10 MB */
    bool http_allow_private;         /* loopback/private targets (SSRF guard) */
    bool http_ssl_verify;            /* default for nodes without ssl_verify */
    int http_max_redirects;          /* 20 (httpx's default, which Dify uses) */
};

void sl_limits_default(struct sl_limits *l);
/* "name=value"; returns -1 with a message naming the field on bad input. */
int sl_limits_set(struct sl_limits *l, const char *assignment, sl_err *err);
/* Reads SLUICE_<NAME> environment variables (e.g. SLUICE_MAX_STEPS). */
int sl_limits_from_env(struct sl_limits *l, sl_err *err);
/* Writes "name=value (meaning)" lines for --help. */
void sl_limits_describe(const struct sl_limits *l, void (*line)(const char *, void *), void *ud);

#endif
