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

#include "core/err.h"

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
    int history_messages;       /* conversation messages a chat run is given (Dify: 500) */
    size_t input_file_bytes;    /* an input read from a file, --input NAME=@FILE: 10 MiB */
    size_t template_max_bytes;  /* memory one Jinja2 render's values hold (64 MiB; 0: no limit) */
    /* http-request node (Dify's HTTP_REQUEST_* settings) */
    double http_connect_timeout_s;   /* 10 */
    double http_read_timeout_s;      /* 600 */
    double http_write_timeout_s;     /* 600 */
    size_t http_max_text_bytes;      /* 1 MB */
    size_t http_max_binary_bytes;    /* 10 MB */
    bool http_allow_private;         /* loopback/private targets (SSRF guard) */
    bool http_ssl_verify;            /* default for nodes without ssl_verify */
    int http_max_redirects;          /* 20 (httpx's default, which Dify uses) */
    /* the sandbox of a run (code and command nodes) */
    size_t sandbox_memory_bytes;     /* 1 GiB, RAM of everything inside, tmpfs included */
    int sandbox_max_procs;           /* 512 processes + threads */
    double sandbox_cpu_cores;        /* 0 = no CPU bandwidth cap */
    size_t sandbox_disk_bytes;       /* 1 GiB: workspace + /tmp + home */
    int sandbox_cpu_seconds;         /* 600 s of CPU per process */
    int sandbox_open_files;          /* 1024 */
    size_t sandbox_file_bytes;       /* 1 GiB, largest file one process writes */
    size_t sandbox_output_bytes;     /* 16 MiB of stdout (and of stderr) per command:
                                        code, command and package installs alike */
    double install_timeout_s;        /* installing an app's packages: 600 s */
    size_t command_error_bytes;      /* stderr a failed command/install quotes: 2000 */
    double command_timeout_s;        /* command node (Dify: 60 s) */
    /* code node (Dify's CODE_* settings) */
    double code_timeout_s;           /* CODE_EXECUTION_READ_TIMEOUT: 60 s */
    size_t code_log_bytes;           /* end of stdout/stderr kept in process data: 16384 */
    size_t code_error_bytes;         /* end of stderr a failed code node quotes: 8192 */
    size_t code_max_string_length;   /* CODE_MAX_STRING_LENGTH: 400,000 */
    int code_max_depth;              /* CODE_MAX_DEPTH: 5 */
    int code_max_precision;          /* CODE_MAX_PRECISION: 20 */
    int code_max_string_array_length;/* CODE_MAX_STRING_ARRAY_LENGTH: 30 */
    int code_max_object_array_length;/* CODE_MAX_OBJECT_ARRAY_LENGTH: 30 */
    int code_max_number_array_length;/* CODE_MAX_NUMBER_ARRAY_LENGTH: 1000 */
    /* agent nodes in the sandboxed runtime (a node's data.sluice overrides) */
    int agent_max_turns;             /* model calls per agent node: 30 */
    size_t agent_max_tokens;         /* tokens per agent node; 0 = no limit */
    double agent_timeout_s;          /* wall seconds per agent node: 600 */
    size_t agent_output_chars;       /* tool output shown whole: 8,000 (Dify) */
    size_t agent_head_chars;         /* else head 2,500 + tail 2,500 (Dify) */
    size_t agent_tail_chars;
    int agent_max_files;             /* artifacts from output/: 50 (Dify) */
    size_t agent_max_file_bytes;     /* each artifact: 10 MB (Dify) */
    double tool_timeout_s;           /* wall seconds of one tool call: 60 */
    size_t tool_max_output;          /* text, json and files of one call: 8 MiB */
    bool tool_allow_private;         /* tool servers on this host / private addresses */
    int tool_workflow_depth;         /* workflow tools calling workflow tools: 5 (Dify) */
    /* document-extractor: each document is parsed in a process of its own */
    double extract_timeout_s;        /* wall seconds per document: 60 */
    size_t extract_max_input;        /* bytes of one document: 100 MiB */
    size_t extract_max_output;       /* bytes of one document's text: 64 MiB */
    size_t extract_max_memory;       /* the parser's memory: 1 GiB */
    size_t extract_max_member;       /* unpacked bytes of one zip member: 256 MiB */
    size_t extract_max_unpacked;     /* unpacked bytes of all of one document's: 512 MiB */
    int extract_xml_depth;           /* nesting of an XML part: 256 */
    size_t extract_xml_nodes;        /* elements and texts of one document's XML: 20 million */
    /* knowledge bases (knowledge/kb.h) */
    size_t knowledge_max_input;      /* bytes of one document's text: 64 MiB */
    size_t knowledge_max_chunks;     /* chunks of one document, parents and children: 200,000 */
    int knowledge_embed_batch;       /* texts per embedding request: 32 */
};

void sl_limits_default(struct sl_limits *l);
/* "name=value"; returns -1 with a message naming the field on bad input. */
int sl_limits_set(struct sl_limits *l, const char *assignment, sl_err *err);
/* Reads SLUICE_<NAME> environment variables (e.g. SLUICE_MAX_STEPS). */
int sl_limits_from_env(struct sl_limits *l, sl_err *err);
/* Writes "name=value (meaning)" lines for --help. */
void sl_limits_describe(const struct sl_limits *l, void (*line)(const char *, void *), void *ud);

#endif
