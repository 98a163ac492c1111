/*
 * plan — what a local sandbox's init is told to build (proto.h): the
 * host's folders it binds, the /etc files it writes into its root, and
 * what identifies them, to find a root kept for them (kept.h).  What every
 * sandbox of this process shares is gathered once; the host's files are
 * read only when a root is built.
 */
#ifndef SL_SANDBOX_PLAN_H
#define SL_SANDBOX_PLAN_H

#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"
#include "sandbox/local/proto.h"
#include "sandbox/sandbox.h"

/* sluice.yml's `sandbox.local`: host_etc, a list of the /etc files that
 * may hold credentials and are copied only when named (pip.conf, npmrc,
 * gitconfig, wgetrc).  *host_etc points into set, or is NULL. */
int sl_plan_settings(const sl_value *set, const sl_value **host_etc, sl_err *err);
/* A sandbox's binds: everyone's, resolv.conf for the open network, the
 * user's (--bind).  The caller frees. */
sl_sb_mount *sl_plan_mounts(const sl_sandbox_opts *o, int *n);
/* The records of a sandbox's whole /etc (generated files, the host's
 * copies, host_etc's), NUL-terminated; *len counts the NUL.  The caller
 * frees. */
char *sl_plan_etc(const sl_value *host_etc, size_t *len);
/* Appends what identifies a root built for o (no user binds) and
 * host_etc: the generated files, and the fingerprints of the host's
 * copied files and of the folders that hold the binds. */
void sl_plan_print(sl_buf *out, const sl_sandbox_opts *o, const sl_value *host_etc);
/* The GO message's payload (proto.h's sl_sb_plan_wire and what follows). */
void sl_plan_wire(sl_buf *out, const sl_sb_plan *plan, size_t etc_len);

#endif
