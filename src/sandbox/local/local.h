/*
 * local — the local sandbox provider: Linux namespaces (user, mount, pid,
 * net, ipc, uts, cgroup), a read-only root of host binds, a tmpfs
 * workspace, seccomp, cgroups (or rlimits where cgroups are not ours) and
 * an allow-list proxy for the network.  docs/sandbox.md tells the design.
 */
#ifndef SL_SANDBOX_LOCAL_H
#define SL_SANDBOX_LOCAL_H

#include "../sandbox.h"

int sl_local_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err);
/* What isolation this process gets here, one fact per line, for
 * `sluice sandbox check`; also says what is missing and why. */
void sl_local_describe(sl_buf *out);
/* Notes about a live sandbox ("limits: cgroup v1" / "rlimits only: …"). */
const char *sl_local_notes(const sl_sandbox *sb);
/* Waits until every destroyed sandbox is fully reaped (its processes gone,
 * its cgroup removed).  Runs at exit by itself. */
void sl_local_reap_all(void);

#endif
