/*
 * seccomp — the system-call filter of the local sandbox.
 *
 * The filter is compiled once per process with libseccomp and exported as
 * raw BPF; sandboxes load that program with prctl() in their init process,
 * so no libseccomp code runs inside a sandbox and nothing is compiled on
 * the hot path.  The policy is a deny list (docs/sandbox.md): everything
 * ordinary programs need (python3, node, pip, npm, git, gcc, curl) stays,
 * everything an escape or a host attack needs fails with EPERM, and
 * foreign system-call ABIs (x32, i386) kill the process.
 */
#ifndef SL_SANDBOX_SECCOMP_H
#define SL_SANDBOX_SECCOMP_H

#include <linux/filter.h>

#include "core/err.h"

/* The compiled program (shared, never freed); NULL with err on failure. */
const struct sock_fprog *sl_seccomp_program(sl_err *err);

#endif
