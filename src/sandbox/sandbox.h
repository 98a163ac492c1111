/*
 * sandbox — the provider interface behind which sluice runs untrusted
 * commands: the local provider (Linux namespaces + seccomp + cgroups, the
 * embedded default), SSH VMs (ssh.c) and E2B (e2b.c).
 *
 * A sandbox is made once per workflow run and destroyed at its end (also
 * when the run fails or is cancelled); files written by one command are
 * there for the next.  Commands run through sl_sandbox_exec(), which
 * streams stdout/stderr to callbacks (or collects them), enforces the wall
 * time, output caps and the sandbox's resource limits, and reports how the
 * command ended.  Files move in and out with upload/download/list; paths
 * are sandbox paths, relative ones are relative to the workspace.  A
 * process that must keep running with pipes to it (an MCP stdio server) is
 * started with sl_sandbox_spawn() instead (the local provider only).
 *
 * Several threads may exec in one sandbox at once.  Errors come back the
 * sluice way: -1 and a filled sl_err that says what failed and what to do.
 */
#ifndef SL_SANDBOX_H
#define SL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/value.h"

typedef struct sl_sandbox sl_sandbox;

typedef enum {
    SL_NET_NONE,    /* no network at all: an empty network namespace */
    SL_NET_ALLOW,   /* HTTP(S) through sluice's proxy, to listed hosts only */
    SL_NET_OPEN,    /* the host's network, unfiltered (explicit opt-in) */
} sl_net_mode;

typedef struct {
    const char *host;     /* path on the host */
    const char *target;   /* absolute path inside the sandbox */
} sl_sandbox_bind;

typedef struct {
    const char *provider;     /* "local" (NULL means local) */
    sl_net_mode net;
    const char *net_allow;    /* SL_NET_ALLOW: "pypi.org,*.example.org,10.0.0.5" */
    /* Limits for the whole sandbox (0 = none for the byte/count ones). */
    uint64_t memory_bytes;    /* RAM of all processes, tmpfs included */
    int max_procs;            /* processes + threads */
    double cpu_cores;         /* CPU bandwidth (1.5 = one and a half cores) */
    uint64_t disk_bytes;      /* workspace + /tmp + home, together */
    /* Limits for each process of each command. */
    int cpu_seconds;          /* CPU time */
    int max_open_files;
    uint64_t max_file_bytes;  /* largest file a process may write */
    /* Extra read-only trees.  The local provider bind-mounts them; remote
     * providers (ssh, e2b) copy the host tree to the target when the
     * sandbox is made and make it read-only as far as they can.  A
     * relative target is relative to the workspace. */
    const sl_sandbox_bind *binds;
    size_t n_binds;
    /* The provider's own settings (sluice.yml `sandbox.<provider>`: host,
     * keys, URLs …); NULL when there are none.  Borrowed for create only. */
    const sl_value *settings;
} sl_sandbox_opts;

/* Dify-like defaults; see sl_limits for the values a run uses. */
void sl_sandbox_opts_init(sl_sandbox_opts *o);

typedef void (*sl_sandbox_out_fn)(const char *data, size_t len, void *ud);

typedef struct {
    const char *const *argv;     /* argv[0] is looked up on PATH inside */
    const char *const *env;      /* "K=V" added to the sandbox's base env; may be NULL */
    const char *cwd;             /* NULL: the workspace */
    const char *stdin_data;      /* NULL: /dev/null */
    size_t stdin_len;
    bool inherit_stdin;          /* the caller's own fd 0 becomes the command's stdin */
    double timeout_s;            /* wall time; 0 = none */
    size_t max_output_bytes;     /* per stream; 0 = unlimited */
    /* Streaming; when NULL the stream is collected into the result. */
    sl_sandbox_out_fn on_stdout, on_stderr;
    void *ud;
    /* Polled about every 50 ms; true stops the command (status CANCELED). */
    bool (*cancelled)(void *ud);
    /* The caller destroys the sandbox right after this command: a provider
     * may end the sandbox as the command ends (the local one's init exits
     * then, so its teardown overlaps the caller's handling of the result).
     * Nothing else can be run in it afterwards. */
    bool last;
} sl_sandbox_cmd;

typedef enum {
    SL_EXIT_EXITED,     /* exit code in `code` */
    SL_EXIT_SIGNALED,   /* killed by signal `sig` (not by sluice) */
    SL_EXIT_TIMEOUT,    /* wall time ran out; sluice killed it */
    SL_EXIT_LIMIT,      /* killed for a limit, named in `limit` */
    SL_EXIT_CANCELED,   /* the caller cancelled it */
} sl_exit_kind;

/* Which of the sandbox's limits a command hit; callers decide on this (the
 * option or setting to name), `limit` and `note` are the words for people. */
typedef enum {
    SL_SBLIMIT_NONE = 0,
    SL_SBLIMIT_MEMORY,          /* memory of everything inside (socket buffers too) */
    SL_SBLIMIT_CPU,             /* CPU seconds of one process */
    SL_SBLIMIT_FILE_SIZE,       /* the largest file one process writes */
    SL_SBLIMIT_CPU_OR_FILE_SIZE,/* one of those two (ssh cannot say which) */
    SL_SBLIMIT_OUTPUT,          /* bytes of stdout or stderr */
    SL_SBLIMIT_PROCS,           /* processes + threads */
} sl_sandbox_limit;

typedef struct {
    sl_exit_kind kind;
    int code;            /* EXITED: exit code */
    int sig;             /* SIGNALED/LIMIT: the signal */
    sl_sandbox_limit hit;/* LIMIT: which one */
    char limit[128];     /* LIMIT: which one, for people ("memory (256 MiB)") */
    sl_sandbox_limit touched; /* the limit `note` is about */
    char note[128];      /* a limit touched without a kill ("process limit reached") */
    double seconds;      /* wall time */
    sl_buf out, err;     /* collected streams (when no callback) */
    bool out_truncated, err_truncated;
} sl_sandbox_result;

void sl_sandbox_result_init(sl_sandbox_result *r);
void sl_sandbox_result_release(sl_sandbox_result *r);
/* The shell-style exit code: own code, 128+sig, 124 timeout, 137 limit. */
int sl_sandbox_result_code(const sl_sandbox_result *r);
/* One line for people: "exited with 3", "killed: memory limit (256 MiB)". */
void sl_sandbox_result_describe(const sl_sandbox_result *r, char *out, size_t n);

int sl_sandbox_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err);
/* Runs one command to its end.  Returns 0 when the command ran (whatever
 * its exit), -1 when it could not be started or the sandbox is broken. */
int sl_sandbox_exec(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                    sl_err *err);
/* A sandbox for one command: sl_sandbox_create, sl_sandbox_exec (the
 * command's `last` set) and sl_sandbox_destroy in one, which a provider
 * may overlap (the local one sends the command with the set-up).  Returns
 * 0 when the command ran (whatever its exit), -1 when the sandbox could
 * not be made or the command not started. */
int sl_sandbox_run(const sl_sandbox_opts *o, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                   sl_err *err);
/* Kills every running command (the sandbox stays usable). */
void sl_sandbox_kill(sl_sandbox *sb);
int sl_sandbox_upload(sl_sandbox *sb, const char *path, const void *data, size_t len,
                      sl_err *err);
/* Appends the file to out; fails when it is larger than max_bytes. */
int sl_sandbox_download(sl_sandbox *sb, const char *path, size_t max_bytes, sl_buf *out,
                        sl_err *err);
/* *out: array of {name, type ("file"/"dir"/"link"/"other"), size}, at most
 * `limit` entries, sorted by name. */
int sl_sandbox_list(sl_sandbox *sb, const char *dir, size_t limit, sl_value **out, sl_err *err);
/* A number no other sandbox of this process has had (a pointer may be
 * reused once a sandbox is gone); 0 for NULL. */
unsigned long long sl_sandbox_serial(const sl_sandbox *sb);
/* Kills everything, frees everything; NULL is fine. */
void sl_sandbox_destroy(sl_sandbox *sb);
/* The provider's name ("local", "ssh", "e2b") and the absolute path of
 * the workspace inside the sandbox (commands start there). */
const char *sl_sandbox_provider(const sl_sandbox *sb);
const char *sl_sandbox_workspace(const sl_sandbox *sb);

/* A process kept running inside the sandbox with pipes to it (an MCP stdio
 * server: JSON lines in on stdin, out on stdout, across many calls).  Only
 * the local provider has them; the others refuse with SL_EUNSUPPORTED. */
typedef struct sl_sandbox_proc sl_sandbox_proc;

/* Starts cmd and returns at once.  argv, env and cwd are as for exec; the
 * rest of cmd is not used (no wall time: it runs until it exits or is
 * killed; no output caps or callbacks).  *in_fd is the write end of its
 * stdin, *out_fd the read end of its stdout: both blocking, O_CLOEXEC and
 * the caller's, who closes them (closing in_fd is the process's EOF).  A
 * write after the process ended raises SIGPIPE unless the caller ignores
 * it.  Its stderr is collected, the newest 64 KiB kept, for
 * sl_sandbox_proc_stderr; nobody needs to read it for the process to go on.
 * The sandbox's limits (memory, processes, CPU, network policy, seccomp)
 * apply as to exec'd commands, and sl_sandbox_kill ends it too.  While it
 * runs, what finished commands left running in other sessions is not killed
 * (the local sandbox kills those only when nothing runs).  The sandbox may
 * be destroyed before the process is freed: that kills it, and the process
 * then reports SL_EXIT_SIGNALED (SIGKILL).  -1 and err when it could not be
 * started; a program that is not found exits 127 as with exec. */
int sl_sandbox_spawn(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_proc **out,
                     int *in_fd, int *out_fd, sl_err *err);
/* Whether it still runs (never blocks).  Once it has ended, *res (may be
 * NULL) says how, as exec's would, limits included; res's streams are left
 * alone (stderr is sl_sandbox_proc_stderr's, stdout was the caller's). */
bool sl_sandbox_proc_running(sl_sandbox_proc *p, sl_sandbox_result *res);
/* Waits up to timeout_s (< 0: for ever) for it to end; then as
 * sl_sandbox_proc_running, but true means it has ended.  For after EOF on
 * out_fd, which can come a moment before the exit is known. */
bool sl_sandbox_proc_wait(sl_sandbox_proc *p, double timeout_s, sl_sandbox_result *res);
/* Its stderr so far, the newest 64 KiB (borrowed, NUL-terminated, valid
 * until the next call on p). */
const char *sl_sandbox_proc_stderr(sl_sandbox_proc *p);
/* Kills it with SIGKILL (and its process group), waits until it is gone,
 * frees everything but in_fd and out_fd; NULL is fine.  For a gentle end,
 * close in_fd and sl_sandbox_proc_wait first. */
void sl_sandbox_proc_free(sl_sandbox_proc *p);

/* Provider internals: a provider fills in the vtable. */
typedef struct sl_sandbox_ops {
    const char *name;
    int (*exec)(sl_sandbox *, const sl_sandbox_cmd *, sl_sandbox_result *, sl_err *);
    void (*kill)(sl_sandbox *);
    int (*upload)(sl_sandbox *, const char *, const void *, size_t, sl_err *);
    int (*download)(sl_sandbox *, const char *, size_t, sl_buf *, sl_err *);
    int (*list)(sl_sandbox *, const char *, size_t, sl_value **, sl_err *);
    void (*destroy)(sl_sandbox *);
    /* Optional (NULL: sl_sandbox_spawn refuses, naming the provider). */
    int (*spawn)(sl_sandbox *, const sl_sandbox_cmd *, sl_sandbox_proc **, int *, int *,
                 sl_err *);
} sl_sandbox_ops;

struct sl_sandbox {
    const sl_sandbox_ops *ops;
    const char *workspace;   /* absolute path inside; set by the provider */
    unsigned long long serial;  /* set by sl_sandbox_create */
};

/* A provider's spawned process starts with this; its functions may be
 * called after the sandbox is destroyed. */
typedef struct sl_sandbox_proc_ops {
    bool (*wait)(sl_sandbox_proc *, double timeout_s, sl_sandbox_result *);
    const char *(*stderr_text)(sl_sandbox_proc *);
    void (*free)(sl_sandbox_proc *);
} sl_sandbox_proc_ops;

struct sl_sandbox_proc {
    const sl_sandbox_proc_ops *ops;
};

/* Parses "none", "open", "allow=a,b" (the CLI's --net). */
int sl_net_parse(const char *text, sl_net_mode *mode, const char **allow, sl_err *err);
/* For providers' list(): sorts the n entries ({name, type, size}) by name
 * and returns them as an array of at most `limit` (0: all); takes the
 * entries and frees the items array. */
sl_value *sl_sandbox_list_done(sl_value **items, size_t n, size_t limit);

#endif
