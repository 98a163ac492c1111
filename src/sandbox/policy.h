/*
 * policy — which sandbox an app's run gets, and the packages it installs
 * there.
 *
 * A policy starts from what the app's runtime implies (sl_sandbox_policy_
 * init), then each layer overlays the fields it sets: sluice.yml's
 * `sandbox`, then the app's `sluice.sandbox`.  A layer may set
 *
 *   provider: local           network: none | open | {allow: [host, …]}
 *   memory: 1G   disk: 1G     cpu_cores: 1.5   max_procs: 512
 *   command_timeout: 60       packages: {pip: [requests], npm: [lodash]}
 *
 * and the provider's own settings come from sluice.yml's
 * `sandbox.<provider>`, with the app's `template` (an image) joined to them.
 * The engine keeps one policy per run and makes the run's sandbox from it
 * (engine/run.h); this module reads no process-wide state.
 *
 * The policy owns net_allow and settings (sl_sandbox_policy_release);
 * packages is borrowed from a layer, which must outlive the policy.
 */
#ifndef SL_SANDBOX_POLICY_H
#define SL_SANDBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "core/value.h"
#include "sandbox/sandbox.h"

typedef struct {
    char provider[16];
    sl_net_mode net;
    char *net_allow;            /* SL_NET_ALLOW: the host list (heap), or NULL */
    /* Sizes and times: the caller's values before the first layer, each
     * replaced by a layer that sets it. */
    size_t memory_bytes, disk_bytes;
    double cpu_cores;
    int max_procs;
    double command_timeout_s;
    const sl_value *packages;   /* {pip:[…], npm:[…]} (borrowed) or NULL */
    sl_value *settings;         /* the provider's settings (owned) or NULL */
} sl_sandbox_policy;

/* The local provider; a classic app's commands reach every public host
 * through the egress proxy, as in Dify's code sandbox, a sandboxed app's
 * (`sluice.runtime: sandboxed`) reach none.  Sizes and times are zero:
 * set them before the first layer. */
void sl_sandbox_policy_init(sl_sandbox_policy *p, bool sandboxed);
/* Overlays one layer (an object; anything else is ignored). */
void sl_sandbox_policy_layer(sl_sandbox_policy *p, const sl_value *layer);
/* Replaces the network policy (a caller's --net). */
void sl_sandbox_policy_net(sl_sandbox_policy *p, sl_net_mode net, const char *allow);
/* Settles the provider's settings, once the provider is final: `config`'s
 * object under the provider's name (sluice.yml `sandbox`), plus the app
 * layer's `template`.  Either may be NULL. */
void sl_sandbox_policy_settings(sl_sandbox_policy *p, const sl_value *config,
                                const sl_value *app);
void sl_sandbox_policy_release(sl_sandbox_policy *p);

/* Why an install should end early: SL_OK to go on, SL_ECANCELED when the
 * run was stopped, SL_ETIMEOUT when its time (max_time_s seconds) is up. */
typedef sl_errcode (*sl_sandbox_over_fn)(void *ud);

/* The bounds of an install, from the run's limits. */
typedef struct {
    double timeout_s;        /* each tool's wall time (install_timeout_s) */
    size_t max_output_bytes; /* its stdout and stderr each (sandbox_output_bytes) */
    size_t error_bytes;      /* end of stderr quoted on failure (command_error_bytes) */
    double max_time_s;       /* the run's budget, named when `over` says SL_ETIMEOUT */
} sl_sandbox_install_limits;

/* Installs p->packages (pip, then npm) in sb, through sb's network.  `over`
 * (may be NULL) is polled while they install.  0 when there was nothing to
 * do or all installed; -1 with err saying which tool failed and why (with
 * the tool's last words, and how to open the network when it is shut). */
int sl_sandbox_policy_install(const sl_sandbox_policy *p, sl_sandbox *sb,
                              sl_sandbox_over_fn over, void *ud,
                              const sl_sandbox_install_limits *lim, sl_err *err);

#endif
