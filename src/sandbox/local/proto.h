/*
 * proto — what the local sandbox's host side and its init process share:
 * the set-up plan (built by the host, sent to init flattened with GO) and
 * the messages on the control socket.
 *
 * Set-up: the host sends GO (the plan) as soon as the uid/gid maps are
 * written.  On cgroup v1, GO carries the sandbox's cgroups' "tasks" files
 * (opened by the host) and init moves itself first thing by writing "0"
 * to each: a thread moving itself skips the global lock whose RCU grace
 * period makes moving another process take milliseconds.  Elsewhere the
 * host moves init while init builds the root.  Either way the host then
 * sends PLACED; init makes its own cgroup namespace only after PLACED
 * (its root is the cgroup init is in at that moment), then drops its
 * privileges and answers READY (or ERROR).  A KEPT init (below) gets the
 * kept namespaces with GO instead, and the tasks files with PLACED: the
 * host makes its cgroup while it joins them.
 *
 * The control socket is SOCK_SEQPACKET, one message per request.  The host
 * sends EXEC (with the command's stdin/stdout/stderr and a status pipe as
 * SCM_RIGHTS), KILL, and OPEN; only OPEN is answered on the socket (with a
 * file descriptor or an error), so replies never interleave.  A command's
 * end comes back on its own status pipe as an sl_exec_status.  When the
 * socket closes, init exits and the kernel kills everything in its pid
 * namespace: a sandbox cannot outlive its owner.
 */
#ifndef SL_SANDBOX_PROTO_H
#define SL_SANDBOX_PROTO_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

enum { SL_OP_GO = 1, SL_OP_READY, SL_OP_ERROR, SL_OP_EXEC, SL_OP_KILL, SL_OP_KILLALL,
       SL_OP_OPEN, SL_OP_FD, SL_OP_PLACED };

enum { SL_OPEN_READ = 1, SL_OPEN_WRITE, SL_OPEN_DIR };

#define SL_SB_UID 1000
#define SL_SB_GID 1000
/* The host user the sandbox's 1000 stands for when sluice runs as root. */
#define SL_SB_HOST_ID 65534

/* How init makes the sandbox (kept.h):
 *   FRESH     in the new user namespace the host cloned it into: builds
 *             the root, as for an unprivileged host;
 *   TEMPLATE  as root, in a new mount and uts namespace: builds the shared
 *             read-only root only, answers READY and waits for the host
 *             to pin it and close the socket;
 *   KEPT      as root, pid 1 of a new pid namespace: joins the kept root,
 *             host name and network namespace (GO's first n_ns
 *             descriptors), copies the root, mounts its own proc and
 *             workspace, and only then becomes the sandbox user in a user
 *             namespace of its own. */
enum { SL_SB_FRESH = 0, SL_SB_TEMPLATE, SL_SB_KEPT };
#define SL_SB_MSG_MAX (128 * 1024)
#define SL_SB_PROXY_PORT 3128

typedef struct {
    uint32_t op;
    uint32_t id;
    int32_t arg;        /* OPEN: mode; ERROR/FD: errno */
    uint32_t len;       /* bytes of payload after the header */
} sl_sb_hdr;

/* EXEC payload: this, then cwd, argv..., env... as NUL-terminated strings. */
typedef struct {
    uint32_t argc, envc;
    int32_t has_stdin;
    int32_t last;       /* the host ends the sandbox after this command: init
                         * exits once its status is written, so the kernel
                         * tears the namespaces down while the host reads
                         * the result (sl_sandbox_cmd.last) */
    int64_t rlim_cpu, rlim_nofile, rlim_fsize, rlim_nproc;  /* -1: leave */
} sl_sb_exec;

typedef struct {
    int32_t status;     /* wait status */
    int32_t error;      /* errno when the command could not be started */
    int64_t cpu_ms;     /* CPU time of the command's main process */
} sl_exec_status;

typedef struct {
    bool is_link;       /* host path is a symlink: recreate it */
    bool required;      /* a user's bind: missing source is an error */
    bool device;        /* a /dev node: no noexec/nodev on it */
    bool is_file;
    char source[256];
    char target[256];
    char link[256];
    int fd;             /* open_tree() result inside init */
} sl_sb_mount;

typedef struct {
    int ctl;                       /* init's end of the control socket */
    bool new_net;                  /* a new network namespace: bring loopback up */
    bool shared_net;               /* joined a finished sandbox's: loopback is up */
    bool proxy;                    /* listen on 127.0.0.1:3128 for the host's proxy */
    char data_opts[96];            /* tmpfs options for workspace+tmp+home */
    const struct sock_fprog *seccomp;
    sl_sb_mount *mounts;
    int n_mounts;
    const char *etc_files;         /* "name\0size\0content" records, ends with "\0" */
    int mode;                      /* SL_SB_FRESH, _TEMPLATE or _KEPT */
    int n_ns;                      /* KEPT: root, uts[, net] descriptors first in GO */
} sl_sb_plan;

/* The GO message's payload: the plan, flattened (init is its own small
 * static program, exec'd from a sealed memfd right after the clone, so it
 * shares no memory with the host).  Then n_mounts sl_sb_mount, n_filter
 * struct sock_filter, etc_len bytes of etc_files. */
typedef struct {
    int32_t new_net, shared_net, proxy;
    int32_t mode, n_ns;
    int32_t n_mounts;
    uint32_t n_filter;
    uint32_t etc_len;
    char data_opts[96];
} sl_sb_plan_wire;

/* The control socket's descriptor in init. */
#define SL_SB_CTL_FD 3

#endif
