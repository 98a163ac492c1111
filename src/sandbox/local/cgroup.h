/*
 * cgroup — resource limits for one local sandbox as a control group.
 *
 * cgroup v2 is used where this process may manage a subtree with the
 * memory and pids controllers (a delegated cgroup); cgroup v1 where the
 * machine mounts the v1 memory/pids/cpu hierarchies and we may write
 * them (root).  Where neither works, sl_cgroup_create() fails with a
 * message saying why.  A memory limit is set only where it bounds
 * everything the group's processes can pin, kernel memory and socket
 * buffers included; where it cannot (cgroup v1 without a socket buffer
 * limit, a kernel booted with cgroup.memory=nokmem or nosocket),
 * creating a group with one fails too.
 *
 * A group is named sluice/<pid>-<n>; groups left behind by a dead sluice
 * are removed when the next one is made.  Run as root, groups are kept
 * between processes instead: sluice/kept-ID-KEY-N, ID the kept folder's
 * (kept.h), KEY a hash of the limits the group was made with, N a slot one
 * sandbox at a time holds by a lock in that folder; a kept group is used
 * only when empty.
 */
#ifndef SL_SANDBOX_CGROUP_H
#define SL_SANDBOX_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

typedef struct sl_cgroup sl_cgroup;

typedef struct {
    uint64_t memory_bytes;  /* 0: no limit */
    int max_procs;          /* 0: no limit */
    double cpu_cores;       /* 0: no limit */
} sl_cgroup_limits;

typedef struct {
    unsigned long oom_kills;   /* processes the OOM killer took */
    unsigned long pids_max;    /* forks refused at the process limit */
} sl_cgroup_events;

int sl_cgroup_create(const sl_cgroup_limits *l, sl_cgroup **out, sl_err *err);
/* cgroup v1 limits socket buffers apart from the rest, to this much (a
 * quarter of the memory limit) on top of memory_bytes; v2 counts them in.
 * The kernel lets every TCP socket go one segment past that limit and
 * never OOM-kills for it, so the caller watches the usage
 * (sl_cgroup_v1_socket_usage, 0 for v2) and kills the sandbox's
 * processes when it passes half the memory limit. */
uint64_t sl_cgroup_v1_socket_bytes(uint64_t memory_bytes);
uint64_t sl_cgroup_v1_socket_usage(const sl_cgroup *cg);
/* Moves process pid into the group. */
int sl_cgroup_attach(sl_cgroup *cg, pid_t pid, sl_err *err);
/* cgroup v1: opens each controller's "tasks" file for writing, into
 * fds[0..max), for the sandbox's init to move itself with.  Moving
 * another process (sl_cgroup_attach) takes a global lock that waits for
 * an RCU grace period, milliseconds and up to tens of them on a busy
 * host; a thread that writes "0" moves only itself and takes no such
 * lock.  The kernel checks the opener's credentials (root), so the
 * receiver needs no rights of its own.  Returns how many were opened: 0
 * for cgroup v2 (moving a thread across domains is not allowed there;
 * use sl_cgroup_attach), -1 with err when one cannot be opened.  The
 * caller closes them. */
int sl_cgroup_join_fds(sl_cgroup *cg, int *fds, int max, sl_err *err);
void sl_cgroup_events_read(sl_cgroup *cg, sl_cgroup_events *ev);
/* "cgroup v1" / "cgroup v2" */
const char *sl_cgroup_kind(const sl_cgroup *cg);
/* Removes the group (its processes must be gone) and frees; NULL is fine. */
void sl_cgroup_destroy(sl_cgroup *cg);
/* Like destroy, but keeps an empty group for the next sandbox with the
 * same limits (a few at most). */
void sl_cgroup_release(sl_cgroup *cg);
/* Removes every kept group (at exit). */
void sl_cgroup_pool_drain(void);
/* Run as root, groups are also kept between processes (kept-ID-KEY-N, see
 * kept.h), emptied and used again rather than made and removed for each
 * sandbox; this removes those no sandbox holds, and says how many. */
int sl_cgroup_clean_kept(void);

#endif
