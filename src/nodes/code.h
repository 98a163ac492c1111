/*
 * code — the code node's runner, shared with the benchmark: runs `code`
 * (python3 or javascript, defining main) in a sandbox with `inputs`, the
 * result JSON on res->out, the program's own output and errors on
 * res->err.  Returns -1 only when the command could not be started.
 */
#ifndef SL_NODES_CODE_H
#define SL_NODES_CODE_H

#include <stdbool.h>

#include "../sandbox/sandbox.h"

int sl_code_exec(sl_sandbox *sb, bool python, const char *code, const sl_value *inputs,
                 double timeout_s, size_t max_output, bool (*cancelled)(void *), void *ud,
                 sl_sandbox_result *res, sl_err *err);

#endif
