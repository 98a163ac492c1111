/*
 * local — the local sandbox provider: Linux namespaces (user, mount, pid,
 * net, ipc, uts, cgroup), a read-only root of host binds, a tmpfs
 * workspace, seccomp, cgroups (where there are none, RLIMIT_NPROC counts
 * processes and a memory limit is refused) and an allow-list proxy for the
 * network.  docs/sandbox.md tells the design.
 */
#ifndef SL_SANDBOX_LOCAL_H
#define SL_SANDBOX_LOCAL_H

#include "sandbox/sandbox.h"

int sl_local_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err);
/* sl_sandbox_run for the local provider: the command goes to init with
 * the set-up, so it starts the moment the sandbox is ready. */
int sl_local_run(const sl_sandbox_opts *o, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                 sl_err *err);
/* 0 when a sandbox made here can hold a memory limit of `bytes` (a memory
 * cgroup charges all it can pin); else -1 and err says why and what to do.
 * sl_local_create refuses such a limit the same way. */
int sl_local_memory_check(uint64_t bytes, sl_err *err);
/* What isolation this process gets here, one fact per line, for
 * `sluice sandbox check`; also says what is missing and why. */
void sl_local_describe(sl_buf *out);
/* Notes about a live sandbox ("limits: cgroup v1" / "limits: no cgroup …"). */
const char *sl_local_notes(const sl_sandbox *sb);
/* Waits until every destroyed sandbox is fully reaped (its processes gone,
 * its cgroup removed).  Runs at exit by itself. */
void sl_local_reap_all(void);
/* For a process that exits once its sandboxes are destroyed (the CLI's
 * sandbox run): from now on sl_sandbox_destroy waits for the sandbox's
 * processes and removes its cgroup itself, with no reaper thread and no
 * pools kept for sandboxes that will not come. */
void sl_local_reap_in_place(void);
/* Removes the namespaces kept for new sandboxes (kept.h) that no sandbox
 * uses; says what went in out.  -1 and err when none can be kept here. */
int sl_local_clean(sl_buf *out, sl_err *err);

#endif
