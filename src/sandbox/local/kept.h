/*
 * kept — namespaces kept between processes, once per boot, for root.
 *
 * Making a sandbox's root (a dozen binds, the /etc files, /dev) and a
 * network namespace is most of what starting a sandbox costs, and a
 * process that runs one sandbox and exits (`sluice sandbox run`) pays it
 * every time.  Run as root, sluice keeps them instead, as namespaces
 * pinned by bind mounts in one root-owned folder (/run/sluice, a tmpfs:
 * gone at reboot):
 *
 *   root-HASH, uts-HASH   a finished read-only root (mount namespace) and
 *                         the "sandbox" host name, one pair per plan (HASH
 *                         covers the binds, the /etc files and init)
 *   net-N, net-N.lock     a network namespace with loopback up, used by
 *                         one sandbox at a time (flock on the .lock file)
 *
 * All are owned by the host's user namespace, so no sandbox, whose user
 * namespace is a child of it, can change them: each sandbox gets a private
 * copy of the root (its own tmpfs workspace on top) and a network
 * namespace that only its own processes use while it lives.  Before use
 * the folder is checked (a directory owned by root, no access for anyone
 * else, in a folder only root may change) and so is every pin (a
 * namespace file of the right type, owned by our user namespace).
 * Nothing else is trusted: no resident process, no file contents.
 *
 * SLUICE_SANDBOX_KEPT names another folder, or "off"; `sluice sandbox
 * clean` removes what is kept.
 */
#ifndef SL_SANDBOX_KEPT_H
#define SL_SANDBOX_KEPT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/buf.h"
#include "core/err.h"

/* Builds a root in a process of its own (a template init) and returns its
 * pid, alive until *done is called; -1 and err on failure. */
typedef pid_t (*sl_kept_build_fn)(void *arg, sl_err *err);

/* True when kept namespaces may be used here; the first call checks the
 * folder. */
bool sl_kept_usable(void);
/* Why they are not (for `sandbox check`), or how they are kept. */
const char *sl_kept_note(void);

/* The mount and uts namespaces kept for plan `hash` (fds[0], fds[1]);
 * builds and pins them with build() when they are missing.  Returns 0, or
 * -1 (err says why) and the caller makes its sandbox the usual way. */
int sl_kept_root(uint64_t hash, sl_kept_build_fn build, void *arg, void (*done)(void *arg),
                 int fds[2], sl_err *err);

/* Takes the first free slot of `kind` (of max): returns the lock that
 * holds it until closed, and the slot's number in *slot; -1 when kept
 * namespaces are not usable here or every slot is taken. */
int sl_kept_lock(const char *kind, int max, int *slot);

/* Eight hex digits naming the kept folder (its device and inode), for
 * what is kept outside it (cgroups) to be told apart from another
 * folder's; "" when kept namespaces are not usable. */
const char *sl_kept_id(void);

/* Takes the lock NAME.lock when it is free: the lock, or -1. */
int sl_kept_try(const char *name);

/* Takes a network namespace slot for one sandbox: returns its namespace
 * (>= 0), or -1 with *slot >= 0 when the slot is free to fill (the sandbox
 * makes a namespace and sl_kept_net_fill pins it), or -1 with *slot -1
 * when every slot is busy.  *lock holds the slot until closed (-1 when
 * none). */
int sl_kept_net_take(int *lock, int *slot);
/* Pins process pid's network namespace as slot `slot`. */
void sl_kept_net_fill(int slot, pid_t pid);

/* Unmounts and removes every kept namespace not in use; the count removed
 * goes to out as a line.  -1 and err when the folder is not usable. */
int sl_kept_clean(sl_buf *out, sl_err *err);

#endif
