/*
 * seccomp — the system-call filter of the local sandbox.
 *
 * The filter is a classic BPF program built in this file (no library) and
 * loaded with prctl() by sandboxes' init process, so no filter code runs
 * inside a sandbox and nothing is compiled on the hot path.  The policy is
 * a deny list (docs/sandbox.md): everything ordinary programs need
 * (python3, node, pip, npm, git, gcc, curl) stays, everything an escape or
 * a host attack needs fails with EPERM, and foreign system-call ABIs (x32,
 * i386) kill the process.
 */
#ifndef SL_SANDBOX_SECCOMP_H
#define SL_SANDBOX_SECCOMP_H

#include <linux/filter.h>

/* The program (static, shared, never freed); built on the first call. */
const struct sock_fprog *sl_seccomp_program(void);

#endif
