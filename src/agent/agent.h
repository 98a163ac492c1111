/*
 * agent — a model working in a sandbox: the tool-calling loop of the Agent
 * node in the sandboxed runtime, and the tools it hands the model.
 *
 * Tools (sl_agent_tools() gives their JSON schemas):
 *   bash        run a command line; the working directory persists between
 *               calls (`cd` sticks); per-call timeout, capped by the limits
 *   read_file   a text file's lines, numbered, from offset for limit lines
 *   write_file  create or replace a file (parent folders are made)
 *   edit_file   replace old_string by new_string; old_string must occur
 *               exactly once unless replace_all
 *   list_files  a folder's entries, or the paths matching a glob (`**`)
 *   grep        lines matching a regular expression, with file:line
 * Relative paths are relative to the sandbox's workspace.  What a tool
 * shows the model is capped: past `output_chars` characters only the first
 * `head_chars` and the last `tail_chars` are kept, with a note of how much
 * was cut between them (Dify: 8,000 → 2,500 + 2,500).
 *
 * Configured tools (the workflow's, sl_agent_io.tools) are offered beside
 * these; in the classic runtime (no sandbox) they are the only ones.
 *
 * sl_agent_run() loops: call the model with the tools; run every tool call
 * it makes and send the results back; stop at a reply without tool calls
 * (its text is the answer).  It stops with an error at the first limit it
 * reaches (turns, tokens, wall time) or when cancelled.  The model call and
 * the step log are the caller's (callbacks), so this module knows nothing
 * of nodes, providers or events.
 */
#ifndef SL_AGENT_H
#define SL_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"
#include "sandbox/sandbox.h"

typedef struct {
    int max_turns;             /* model calls (default 30) */
    long long max_tokens;      /* total tokens of all calls; 0 = no limit */
    double timeout_s;          /* wall time of the whole loop; 0 = no limit */
    double command_timeout_s;  /* default and ceiling of one bash call (60) */
    size_t output_chars;       /* tool output shown whole up to this (8000) */
    size_t head_chars;         /* else this much of its start (2500) */
    size_t tail_chars;         /* and of its end (2500) */
    size_t max_file_bytes;     /* read_file / edit_file file size (10 MiB) */
    size_t max_command_output; /* bytes collected per stream of a command (1 MiB) */
} sl_agent_limits;

void sl_agent_limits_init(sl_agent_limits *L);

typedef struct {
    /* Calls the model: req has system, messages, tools; *resp (new ref) is
     * the neutral response (llm.h).  -1 when the call failed: the caller
     * has recorded why, and the loop stops. */
    int (*call)(void *ud, sl_value *req, sl_value **resp);
    /* One step for the log (borrowed): a model turn or a tool call. */
    void (*log)(void *ud, const sl_value *step);
    bool (*cancelled)(void *ud);
    /* The workflow's configured tools (may be NULL): their definitions
     * ([{name, description, parameters}], borrowed), offered beside the
     * sandbox's, and the call of one: the text for the model appended to
     * out (capped here), true when the call failed. */
    const sl_value *tools;
    bool (*tool)(void *ud, const char *name, const sl_value *args, sl_buf *out);
    void *ud;
} sl_agent_io;

/* The state of one agent in one sandbox: the bash tool's directory. */
typedef struct {
    sl_sandbox *sb;
    const sl_agent_limits *L;
    const sl_agent_io *io;
    char *cwd;                 /* absolute, inside the sandbox */
    char mark[40];             /* ends bash output with the new cwd */
    double deadline;           /* monotonic seconds; 0 = none */
    /* Seconds spent waiting on the sandbox (commands, file transfers) and
     * on the model: what the loop itself costs is the rest. */
    double sandbox_s, model_s;
} sl_agent_session;

/* -1 and err (nothing to release) when the kernel gives no randomness for
 * the session's cwd marker: a guessable one could be forged by a command's
 * output.  sb NULL: no sandbox (the classic runtime), configured tools only. */
int sl_agent_session_init(sl_agent_session *s, sl_sandbox *sb, const sl_agent_limits *L,
                          const sl_agent_io *io, sl_err *err);
void sl_agent_session_release(sl_agent_session *s);

/* The tools' definitions for a model request (new array). */
sl_value *sl_agent_tools(void);

/* Runs one tool call.  `args` is the call's arguments (an object; NULL
 * reads as {}).  The text for the model is appended to out, already
 * capped; returns true when the call failed (the model sees the error). */
bool sl_agent_tool(sl_agent_session *s, const char *name, const sl_value *args, sl_buf *out);

/* Whether the definitions `tools` hold one named name. */
bool sl_agent_has_tool(const sl_value *tools, const char *name);
/* Caps text for the model (head + note + tail), UTF-8 safe; appends. */
void sl_agent_cap(const sl_agent_limits *L, const char *text, size_t len, sl_buf *out);

typedef struct {
    char *text;            /* the final answer (heap) */
    int turns;             /* model calls made */
    int tool_calls;
    long long tokens;      /* total tokens reported by the model */
    sl_value *messages;    /* the whole conversation (new ref) */
} sl_agent_result;

void sl_agent_result_release(sl_agent_result *r);

/* Runs the loop from a system prompt and the user's message content (a
 * string or content parts; borrowed).  0 with res filled, or -1 with err:
 * SL_ELIMIT (err->setting: agent_max_turns or agent_max_tokens), SL_ETIMEOUT
 * (agent_timeout_s), SL_ECANCELED, SL_ENODE (the model
 * call failed; the caller knows why).  res is filled as far as it got
 * either way. */
int sl_agent_run(sl_agent_session *s, const char *system, const sl_value *user,
                 sl_agent_result *res, sl_err *err);

#endif
