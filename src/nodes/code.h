/*
 * code — the code node's runner, shared with the benchmark: runs `code`
 * (python3 or javascript, defining main) in a sandbox with `inputs`.  Returns -1 only when the command could not be started.
 */
#ifndef SL_NODES_CODE_H
#define SL_NODES_CODE_H

#include <stdbool.h>

#include "sandbox/sandbox.h"

/* A fresh result marker: "\n<<sluice-result-" + 32 hex digits + ">>".
 * -1 and err when the kernel gives no randomness: the code must not run
 * then, since a guessable marker lets its output forge the result. */
#define SL_CODE_MARKER_SIZE 52
int sl_code_marker(char out[SL_CODE_MARKER_SIZE], sl_err *err);

/* The program writes what the code printed, then `marker`, then the result
 * JSON on stdout; errors on stderr. */
int sl_code_exec(sl_sandbox *sb, bool python, const char *code, const sl_value *inputs,
                 const char *marker, double timeout_s, size_t max_output,
                 bool (*cancelled)(void *), void *ud, sl_sandbox_result *res, sl_err *err);

#endif
