/*
 * ssh — the sandbox provider that runs commands on a VM over SSH (libssh):
 * exec channels for commands, SFTP for files.
 *
 * Each sandbox is one folder on the VM, base_path/<random id>, which is
 * the workspace; a sibling base_path/<id>.ctl holds the per-command pid
 * files sluice uses to kill a command's process group.  Commands run as
 * `sh -lc` of a single-quoted command line in their own process group,
 * tagged with SLUICE_SANDBOX=<id>.<n> in their environment so that kill()
 * and destroy() also find children that left the group.
 *
 * The sandbox keeps its authenticated SSH connections open (a small pool:
 * up to 8 commands share one connection; more connections are made on
 * demand) and serialises libssh calls per connection with a mutex, so
 * several threads may exec at once.  What the VM's own user cannot be made
 * to obey (memory, disk, CPU share, network policy) is documented in
 * docs/sandbox-ssh.md; errors come back as -1 and a filled sl_err.
 *
 * Settings (sluice.yml `sandbox.ssh`, a JSON object in o->settings): host,
 * port, user, password, private_key_file | private_key,
 * private_key_passphrase, base_path, host_key_sha256 | known_hosts |
 * insecure_skip_host_key_check, connect_timeout_s, vm_enforces_network.
 */
#ifndef SL_SANDBOX_SSH_H
#define SL_SANDBOX_SSH_H

#include "sandbox/sandbox.h"

int sl_ssh_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err);

/* The SHA256 fingerprint of the server's host key as ssh-keygen -lf prints
 * it ("SHA256:..."), for messages; NULL for a sandbox of another provider. */
const char *sl_ssh_host_fingerprint(const sl_sandbox *sb);

#endif
