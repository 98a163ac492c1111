#include "engine/limits.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size.h"

typedef enum { T_INT, T_DOUBLE, T_SIZE, T_BOOL } ftype;

typedef struct {
    const char *name;
    ftype type;
    size_t off;
    const char *help;
} field;

#define F(n, t, h) {#n, t, offsetof(struct sl_limits, n), h}
static const field fields[] = {
    F(max_steps, T_INT, "node runs per graph engine (Dify: 500)"),
    F(max_time_s, T_DOUBLE, "wall-clock seconds per run (Dify: 1200)"),
    F(max_depth, T_INT, "nesting depth of containers (Dify: 5)"),
    F(max_variable_bytes, T_SIZE, "size of one env/conversation/loop variable (Dify: 200 KB)"),
    F(max_output_bytes, T_SIZE, "size of one node output"),
    F(workers, T_INT, "worker threads for parallel branches (Dify: 10)"),
    F(max_iterations, T_INT, "items one iteration node may process"),
    F(max_loop_count, T_INT, "largest loop_count a loop node may use (Dify: 100)"),
    F(parallel_iterations, T_INT, "cap on an iteration's parallel_nums"),
    F(max_string_bytes, T_SIZE, "strings produced by nodes (Dify: 400,000)"),
    F(template_max_bytes, T_SIZE, "memory a Jinja2 render's values may hold (0: no limit)"),
    F(history_messages, T_INT, "earlier messages a chat run is given (Dify: 500)"),
    F(input_file_bytes, T_SIZE, "size of an input read from a file (--input NAME=@FILE)"),
    F(http_connect_timeout_s, T_DOUBLE, "http-request connect timeout cap (Dify: 10)"),
    F(http_read_timeout_s, T_DOUBLE, "http-request read timeout cap (Dify: 600)"),
    F(http_write_timeout_s, T_DOUBLE, "http-request write timeout cap (Dify: 600)"),
    F(http_max_text_bytes, T_SIZE, "http-request text response cap (Dify: 1 MB)"),
    F(http_max_binary_bytes, T_SIZE, "http-request file response cap (Dify: 10 MB)"),
    F(http_allow_private, T_BOOL, "let http-request reach this host and private/special addresses"),
    F(http_ssl_verify, T_BOOL, "verify TLS certificates by default"),
    F(http_max_redirects, T_INT, "redirects http-request follows (httpx, so Dify: 20)"),
    F(sandbox_memory_bytes, T_SIZE, "RAM of everything in a run's sandbox, files in tmpfs too"),
    F(sandbox_max_procs, T_INT, "processes and threads in a sandbox"),
    F(sandbox_cpu_cores, T_DOUBLE, "CPU bandwidth of a sandbox in cores (0: no cap)"),
    F(sandbox_disk_bytes, T_SIZE, "workspace + /tmp + home of a sandbox, together"),
    F(sandbox_cpu_seconds, T_INT, "CPU seconds one sandboxed process may use"),
    F(sandbox_open_files, T_INT, "open files per sandboxed process"),
    F(sandbox_file_bytes, T_SIZE, "largest file a sandboxed process may write"),
    F(sandbox_output_bytes, T_SIZE, "stdout (and stderr) one sandboxed command may write"),
    F(install_timeout_s, T_DOUBLE, "wall seconds to install an app's packages (sandbox.packages)"),
    F(command_error_bytes, T_SIZE, "end of stderr a failed command or install quotes"),
    F(command_timeout_s, T_DOUBLE, "wall seconds of a command node (Dify: 60)"),
    F(code_timeout_s, T_DOUBLE, "wall seconds of a code node (Dify: 60)"),
    F(code_log_bytes, T_SIZE, "end of a code node's stdout/stderr kept in its process data"),
    F(code_error_bytes, T_SIZE, "end of stderr a failed code node quotes (its traceback)"),
    F(code_max_string_length, T_SIZE, "characters in a code node string output (Dify: 400,000)"),
    F(code_max_depth, T_INT, "nesting depth of code node outputs (Dify: 5)"),
    F(code_max_precision, T_INT, "decimal places of code node numbers (Dify: 20)"),
    F(code_max_string_array_length, T_INT, "items of an array[string] output (Dify: 30)"),
    F(code_max_object_array_length, T_INT, "items of an array[object] output (Dify: 30)"),
    F(code_max_number_array_length, T_INT, "items of an array[number] output (Dify: 1000)"),
    F(agent_max_turns, T_INT, "model calls of one agent node"),
    F(agent_max_tokens, T_SIZE, "tokens of one agent node (0: no limit)"),
    F(agent_timeout_s, T_DOUBLE, "wall seconds of one agent node"),
    F(agent_output_chars, T_SIZE, "tool output an agent sees whole (Dify: 8,000)"),
    F(agent_head_chars, T_SIZE, "of longer output, the first characters kept (Dify: 2,500)"),
    F(agent_tail_chars, T_SIZE, "and the last characters kept (Dify: 2,500)"),
    F(agent_max_files, T_INT, "files an agent hands back from output/ (Dify: 50)"),
    F(agent_max_file_bytes, T_SIZE, "size of each of them (Dify: 10 MB)"),
    F(tool_timeout_s, T_DOUBLE, "wall seconds of one tool call"),
    F(tool_max_output, T_SIZE, "text, json and files one tool call may return"),
    F(tool_allow_private, T_BOOL, "let bound tool servers be on this host or private addresses"),
    F(tool_workflow_depth, T_INT, "workflow tools nested in workflow tools (Dify: 5)"),
    F(extract_timeout_s, T_DOUBLE, "wall seconds to read one document (document-extractor)"),
    F(extract_max_input, T_SIZE, "size of one document a document-extractor reads"),
    F(extract_max_output, T_SIZE, "size of the text of one document"),
    F(extract_max_memory, T_SIZE, "memory of the process that reads one document"),
    F(extract_max_member, T_SIZE, "unpacked size of one member of a zip-based document"),
    F(extract_max_unpacked, T_SIZE, "unpacked size of all of one document's members"),
    F(extract_xml_depth, T_INT, "nesting of an XML part of a document"),
    F(extract_xml_nodes, T_SIZE, "elements and texts of one document's XML"),
    F(knowledge_max_input, T_SIZE, "text of one document added to a knowledge base"),
    F(knowledge_max_chunks, T_SIZE, "chunks of one such document, parents and children"),
    F(knowledge_embed_batch, T_INT, "texts per embedding request (at most 2048)"),
};

void sl_limits_default(struct sl_limits *l)
{
    memset(l, 0, sizeof *l);
    l->max_steps = 500;
    l->max_time_s = 1200;
    l->max_depth = 5;
    l->max_variable_bytes = 200 * 1024;
    l->max_output_bytes = 16 * 1024 * 1024;
    l->workers = 10;
    l->max_iterations = 10000;
    l->max_loop_count = 100;
    l->parallel_iterations = 10;
    l->max_string_bytes = 400000;
    l->template_max_bytes = (size_t)64 << 20;
    l->history_messages = 500;
    l->input_file_bytes = (size_t)10 << 20;
    l->http_connect_timeout_s = 10;
    l->http_read_timeout_s = 600;
    l->http_write_timeout_s = 600;
    l->http_max_text_bytes = 1024 * 1024;
    l->http_max_binary_bytes = 10 * 1024 * 1024;
    l->http_allow_private = false;
    l->http_ssl_verify = true;
    l->http_max_redirects = 20;
    l->sandbox_memory_bytes = (size_t)1 << 30;
    l->sandbox_max_procs = 512;
    l->sandbox_cpu_cores = 0;
    l->sandbox_disk_bytes = (size_t)1 << 30;
    l->sandbox_cpu_seconds = 600;
    l->sandbox_open_files = 1024;
    l->sandbox_file_bytes = (size_t)1 << 30;
    /* the node output cap: a code node's result comes through stdout */
    l->sandbox_output_bytes = (size_t)16 << 20;
    l->install_timeout_s = 600;
    l->command_error_bytes = 2000;
    l->command_timeout_s = 60;
    l->code_timeout_s = 60;
    l->code_log_bytes = 16384;
    l->code_error_bytes = 8192;
    l->code_max_string_length = 400000;
    l->code_max_depth = 5;
    l->code_max_precision = 20;
    l->code_max_string_array_length = 30;
    l->code_max_object_array_length = 30;
    l->code_max_number_array_length = 1000;
    l->agent_max_turns = 30;
    l->agent_max_tokens = 0;
    l->agent_timeout_s = 600;
    l->agent_output_chars = 8000;
    l->agent_head_chars = 2500;
    l->agent_tail_chars = 2500;
    l->agent_max_files = 50;
    l->agent_max_file_bytes = (size_t)10 << 20;
    l->tool_timeout_s = 60;
    l->tool_max_output = (size_t)8 << 20;
    l->tool_allow_private = false;
    l->tool_workflow_depth = 5;
    l->extract_timeout_s = 60;
    l->extract_max_input = (size_t)100 << 20;
    l->extract_max_output = (size_t)64 << 20;
    l->extract_max_memory = (size_t)1 << 30;
    l->extract_max_member = (size_t)256 << 20;
    l->extract_max_unpacked = (size_t)512 << 20;
    l->extract_xml_depth = 256;
    l->extract_xml_nodes = 20u * 1000 * 1000;
    l->knowledge_max_input = (size_t)64 << 20;
    l->knowledge_max_chunks = 200000;
    l->knowledge_embed_batch = 32;
}

static int set_field(struct sl_limits *l, const field *f, const char *v, sl_err *err)
{
    char *p = (char *)l + f->off;
    char *end;
    errno = 0;
    switch (f->type) {
    case T_INT: {
        long n = strtol(v, &end, 10);
        if (end == v || *end || errno || n < 0 || n > 1000000000)
            return sl_err_set(err, SL_EINVAL,
                              "limit '%s': '%s' is not a whole number from 0 to 1000000000",
                              f->name, v);
        *(int *)p = (int)n;
        return 0;
    }
    case T_DOUBLE: {
        double d = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(d) || d < 0 || d > 1e9)
            return sl_err_set(err, SL_EINVAL, "limit '%s': '%s' is not a number of seconds >= 0",
                              f->name, v);
        *(double *)p = d;
        return 0;
    }
    case T_SIZE: {
        /* at most 10^18: limits are added and multiplied without overflow */
        uint64_t n;
        if (sl_size_parse(v, &n) < 0 || n > 1000000000000000000ull)
            return sl_err_set(err, SL_EINVAL,
                              "limit '%s': '%s' is not a size (bytes, or with k/m/g)", f->name, v);
        *(size_t *)p = (size_t)n;
        return 0;
    }
    case T_BOOL:
        if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
            !strcasecmp(v, "on"))
            *(bool *)p = true;
        else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") ||
                 !strcasecmp(v, "off"))
            *(bool *)p = false;
        else
            return sl_err_set(err, SL_EINVAL, "limit '%s': '%s' is not true or false", f->name, v);
        return 0;
    }
    return -1;
}

int sl_limits_set(struct sl_limits *l, const char *assignment, sl_err *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return sl_err_set(err, SL_EINVAL, "limit '%s' needs the form name=value", assignment);
    size_t n = (size_t)(eq - assignment);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strlen(fields[i].name) == n && strncmp(fields[i].name, assignment, n) == 0)
            return set_field(l, &fields[i], eq + 1, err);
    return sl_err_set(err, SL_EINVAL, "unknown limit '%.*s'; `sluice limits` lists them",
                      (int)n, assignment);
}

int sl_limits_from_env(struct sl_limits *l, sl_err *err)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char name[64] = "SLUICE_";
        size_t k = strlen(name);
        for (const char *s = fields[i].name; *s && k < sizeof name - 1; s++)
            name[k++] = (char)toupper((unsigned char)*s);
        name[k] = '\0';
        const char *v = getenv(name);
        if (v && set_field(l, &fields[i], v, err) < 0)
            return sl_err_prefix(err, "environment variable %s", name);
    }
    return 0;
}

void sl_limits_describe(const struct sl_limits *l, void (*line)(const char *, void *), void *ud)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const field *f = &fields[i];
        const char *p = (const char *)l + f->off;
        char buf[256];
        switch (f->type) {
        case T_INT: snprintf(buf, sizeof buf, "%-28s %-10d %s", f->name, *(const int *)p, f->help); break;
        case T_DOUBLE: snprintf(buf, sizeof buf, "%-28s %-10g %s", f->name, *(const double *)p, f->help); break;
        case T_SIZE: snprintf(buf, sizeof buf, "%-28s %-10zu %s", f->name, *(const size_t *)p, f->help); break;
        case T_BOOL: snprintf(buf, sizeof buf, "%-28s %-10s %s", f->name, *(const bool *)p ? "true" : "false", f->help); break;
        }
        line(buf, ud);
    }
}
