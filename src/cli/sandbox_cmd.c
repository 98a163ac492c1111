/*
 * sandbox_cmd — `sluice sandbox run|shell|check`: the local sandbox for
 * people to try, with the same limits the code and command nodes get.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/opt.h"
#include "engine/limits.h"
#include "core/size.h"
#include "sandbox/local/local.h"
#include "sandbox/sandbox.h"
#include "cli/cli.h"

enum {
    O_NET = 1, O_MEM, O_TIMEOUT, O_PROCS, O_DISK, O_CPU_SECONDS, O_CPUS, O_FILES, O_FILE_SIZE,
    O_OUTPUT, O_BIND, O_CWD, O_ENV, O_QUIET,
};

static const sl_opt opts[] = {
    {"--net", NULL, "none|open|allow=HOST,...",
     "network: none (default); only HTTP(S) to the\n"
     "listed hosts, through sluice's proxy (*.example.org\n"
     "wildcards; private addresses only when listed as\n"
     "literals); or the host's network, unfiltered", O_NET},
    {"--mem", NULL, "SIZE|none",
     "memory of everything inside (default 1G); refused\n"
     "where no memory cgroup can hold it (see check)", O_MEM},
    {"--timeout", NULL, "SECONDS", "wall time (default: none for run and shell)", O_TIMEOUT},
    {"--procs", NULL, "N", "processes and threads (default 512)", O_PROCS},
    {"--disk", NULL, "SIZE", "workspace + /tmp + home together (default 1G)", O_DISK},
    {"--cpu-seconds", NULL, "N", "CPU time per process (default 600)", O_CPU_SECONDS},
    {"--cpus", NULL, "N", "CPU bandwidth in cores (default: no cap)", O_CPUS},
    {"--files", NULL, "N", "open files per process (default 1024)", O_FILES},
    {"--file-size", NULL, "SIZE", "largest file a process may write (default 1G)", O_FILE_SIZE},
    {"--output", NULL, "SIZE", "stdout and stderr bytes each (default: unlimited)", O_OUTPUT},
    {"--bind", NULL, "HOST:TARGET", "make a host folder visible read-only at TARGET", O_BIND},
    {"--cwd", NULL, "DIR", "working directory inside (default /workspace)", O_CWD},
    {"--env", "-e", "NAME=VALUE", "set an environment variable inside", O_ENV},
    {"--quiet", "-q", NULL, "no message on stderr when a limit ends the command", O_QUIET},
    {NULL, NULL, NULL, NULL, 0},
};

static const sl_optspec spec = {
    "sluice sandbox",
    "usage: sluice sandbox run [options] -- COMMAND [ARG...]\n"
    "       sluice sandbox shell [options]\n"
    "       sluice sandbox check\n"
    "       sluice sandbox clean\n"
    "\n"
    "Runs a command in a fresh local sandbox: its own user, mount, pid, network,\n"
    "ipc, uts and cgroup namespaces, a read-only view of /usr, /bin and /lib, an\n"
    "empty workspace (/workspace, the working directory), seccomp, and limits.\n"
    "\n"
    "options:\n",
    opts,
    "\n"
    "exit status: the command's own; 128+N when it died of signal N; 124 when it\n"
    "timed out; 137 when it was killed for a limit (stderr says which); 125 when\n"
    "the sandbox could not be made; 2 for bad options, or a memory limit that\n"
    "cannot be enforced here.\n"
    "\n"
    "Run as root, sluice keeps each sandbox root it builds and a few empty\n"
    "network namespaces in /run/sluice for the next sandbox, in this process or\n"
    "another (until reboot): `clean` removes them, SLUICE_SANDBOX_KEPT=off turns\n"
    "that off, SLUICE_SANDBOX_KEPT=DIR keeps them in DIR (root's, mode 0700).\n",
    true,
};

/* `sluice sandbox check` and `clean` take no options. */
static const sl_opt no_opts[] = {{NULL, NULL, NULL, NULL, 0}};
static const sl_optspec clean_spec = {
    "sluice sandbox clean",
    "usage: sluice sandbox clean\n"
    "\n"
    "Removes the sandbox roots and network namespaces kept for new sandboxes\n"
    "(see sluice sandbox --help); those in use stay.\n",
    no_opts, NULL, false,
};

/* `sluice sandbox check` takes no options. */
static const sl_optspec check_spec = {
    "sluice sandbox check",
    "usage: sluice sandbox check\n"
    "\n"
    "Says what this machine's local sandbox can do, then runs `true` in one.\n",
    no_opts, NULL, false,
};

static void to_fd1(const char *d, size_t n, void *ud)
{
    (void)ud;
    while (n) {
        ssize_t w = write(1, d, n);
        if (w <= 0)
            return;
        d += w;
        n -= (size_t)w;
    }
}

static void to_fd2(const char *d, size_t n, void *ud)
{
    (void)ud;
    while (n) {
        ssize_t w = write(2, d, n);
        if (w <= 0)
            return;
        d += w;
        n -= (size_t)w;
    }
}

static volatile sig_atomic_t interrupted;
static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}
static bool was_interrupted(void *ud)
{
    (void)ud;
    return interrupted != 0;
}

/* The option that raises a limit, for the message about hitting it. */
static const char *limit_option(sl_sandbox_limit l)
{
    switch (l) {
    case SL_SBLIMIT_MEMORY: return " (--mem)";
    case SL_SBLIMIT_OUTPUT: return " (--output)";
    case SL_SBLIMIT_CPU:
    case SL_SBLIMIT_CPU_OR_FILE_SIZE: return " (--cpu-seconds)";
    case SL_SBLIMIT_FILE_SIZE: return " (--file-size)";
    case SL_SBLIMIT_PROCS: return " (--procs)";
    case SL_SBLIMIT_NONE: break;
    }
    return "";
}

static int bad(const char *fmt, const char *arg)
{
    fputs("sluice sandbox: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see sluice sandbox --help)\n", stderr);
    return 2;
}

static int check(void)
{
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_local_describe(&b);
    fputs(b.data ? b.data : "", stdout);
    sl_buf_release(&b);
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    sl_sandbox *sb;
    sl_err err = {0};
    /* Where no memory limit can be held, the trial runs without one (the
     * lines above said so) to show that the rest works. */
    if (sl_local_memory_check(o.memory_bytes, &err))
        o.memory_bytes = 0;
    sl_err_clear(&err);
    if (sl_sandbox_create(&o, &sb, &err)) {
        printf("sandbox: NOT available: %s\n", err.msg);
        sl_err_clear(&err);
        return 1;
    }
    const char *argv[] = {"true", NULL};
    sl_sandbox_cmd c = {.argv = argv, .timeout_s = 10};
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    int rc = sl_sandbox_exec(sb, &c, &r, &err);
    printf("sandbox: %s (%s)\n", !rc && sl_sandbox_result_code(&r) == 0 ? "works" : "broken",
           sl_local_notes(sb));
    sl_sandbox_result_release(&r);
    sl_sandbox_destroy(sb);
    sl_err_clear(&err);
    return rc ? 1 : 0;
}

static int no_args(void *ud, int id, const char *v)
{
    (void)ud, (void)id;
    fprintf(stderr, "sluice sandbox check: unexpected argument '%s' (see sluice sandbox "
            "check --help)\n", v);
    return -1;
}

/* What the options set: the sandbox, the command, and their lists. */
typedef struct {
    sl_sandbox_opts *o;
    sl_sandbox_cmd *c;
    const char **envs;
    size_t nenv;
    sl_sandbox_bind *binds;
    char **bind_text;
    size_t nbind;
    bool quiet;
} sandbox_args;

static int sandbox_opt(void *ud, int id, const char *v)
{
    sandbox_args *a = ud;
    sl_sandbox_opts *o = a->o;
    sl_err err = {0};
    uint64_t size;
    char *end;
    switch (id) {
    case O_QUIET:
        a->quiet = true;
        return 0;
    case O_NET:
        if (sl_net_parse(v, &o->net, &o->net_allow, &err)) {
            fprintf(stderr, "sluice sandbox: %s\n", err.msg);
            sl_err_clear(&err);
            return -1;
        }
        return 0;
    case O_MEM:
    case O_DISK:
    case O_FILE_SIZE:
    case O_OUTPUT:
        if (id == O_MEM && !strcmp(v, "none")) {
            o->memory_bytes = 0;
            return 0;
        }
        if (sl_size_parse(v, &size) || size == 0)
            return bad("'%s' is not a size (like 512M or 2G)", v) ? -1 : 0;
        *(id == O_MEM ? &o->memory_bytes : id == O_DISK ? &o->disk_bytes
          : id == O_FILE_SIZE ? &o->max_file_bytes : &a->c->max_output_bytes) = size;
        return 0;
    case O_TIMEOUT:
    case O_CPUS: {
        double d = strtod(v, &end);
        if (end == v || *end || d <= 0 || d > 1e7)
            return bad("'%s' is not a positive number", v) ? -1 : 0;
        *(id == O_TIMEOUT ? &a->c->timeout_s : &o->cpu_cores) = d;
        return 0;
    }
    case O_PROCS:
    case O_CPU_SECONDS:
    case O_FILES: {
        long n = strtol(v, &end, 10);
        if (end == v || *end || n <= 0 || n > 10000000)
            return bad("'%s' is not a positive whole number", v) ? -1 : 0;
        *(id == O_PROCS ? &o->max_procs : id == O_CPU_SECONDS ? &o->cpu_seconds
                                                              : &o->max_open_files) = (int)n;
        return 0;
    }
    case O_BIND: {
        const char *colon = strchr(v, ':');
        if (!colon || colon == v || colon[1] != '/' || a->nbind == 32)
            return bad("--bind wants HOST:TARGET with an absolute TARGET (got '%s')", v) ? -1 : 0;
        char *t = a->bind_text[a->nbind] = sl_xstrdup(v);
        t[colon - v] = 0;
        a->binds[a->nbind].host = t;
        a->binds[a->nbind].target = t + (colon - v) + 1;
        a->nbind++;
        return 0;
    }
    case O_CWD:
        a->c->cwd = v;
        return 0;
    case O_ENV:
        if (!strchr(v, '=') || a->nenv == 255)
            return bad("--env wants NAME=VALUE (got '%s')", v) ? -1 : 0;
        a->envs[a->nenv++] = v;
        return 0;
    default: /* SL_OPT_ARG: stop_at_arg hands none */
        return -1;
    }
}

int sl_cli_sandbox(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        sl_opt_usage(&spec, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "check")) {
        int prc = sl_opt_parse(&check_spec, argc, argv, 2, no_args, NULL, NULL);
        return prc == SL_OPT_OK ? check() : prc == SL_OPT_HELP ? 0 : 2;
    }
    if (!strcmp(sub, "clean")) {
        int prc = sl_opt_parse(&clean_spec, argc, argv, 2, no_args, NULL, NULL);
        if (prc != SL_OPT_OK)
            return prc == SL_OPT_HELP ? 0 : 2;
        sl_buf b;
        sl_buf_init(&b, 0);
        sl_err err = {0};
        int rc = sl_local_clean(&b, &err);
        if (rc)
            fprintf(stderr, "sluice sandbox clean: %s\n", err.msg);
        else
            fputs(b.data ? b.data : "", stdout);
        sl_buf_release(&b);
        sl_err_clear(&err);
        return rc ? 1 : 0;
    }
    bool shell = !strcmp(sub, "shell");
    if (!shell && strcmp(sub, "run"))
        return bad("unknown subcommand '%s' (run, shell, check, clean)", sub);

    struct sl_limits L;
    sl_limits_default(&L);
    sl_sandbox_opts o;
    sl_sandbox_opts_init(&o);
    o.memory_bytes = L.sandbox_memory_bytes;
    o.max_procs = L.sandbox_max_procs;
    o.disk_bytes = L.sandbox_disk_bytes;
    o.cpu_seconds = L.sandbox_cpu_seconds;
    o.max_open_files = L.sandbox_open_files;
    o.max_file_bytes = L.sandbox_file_bytes;
    sl_sandbox_cmd c = {0};
    const char *envs[256];
    sl_sandbox_bind binds[32];
    char *bind_text[32];
    sandbox_args args = {.o = &o, .c = &c, .envs = envs, .binds = binds, .bind_text = bind_text};
    int i = 2;
    sl_err err = {0};
    int prc = sl_opt_parse(&spec, argc, argv, 2, sandbox_opt, &args, &i);
    if (prc != SL_OPT_OK) {
        for (size_t k = 0; k < args.nbind; k++)
            free(bind_text[k]);
        return prc == SL_OPT_HELP ? 0 : 2;
    }
    size_t nenv = args.nenv, nbind = args.nbind;
    bool quiet = args.quiet;
    envs[nenv] = NULL;
    static const char *const shell_argv[] = {"/bin/bash", "-i", NULL};
    if (shell) {
        if (i < argc)
            return bad("shell takes no command (got '%s'); use sandbox run", argv[i]);
        c.argv = shell_argv;
        fprintf(stderr, "sluice sandbox: a shell in a fresh sandbox (no terminal inside); "
                        "exit or Ctrl-D ends it and deletes everything\n");
    } else {
        if (i >= argc)
            return bad("%s", "run needs a command after --");
        c.argv = (const char *const *)(argv + i);
    }
    o.binds = binds;
    o.n_binds = nbind;
    c.env = envs;
    c.inherit_stdin = true;
    c.on_stdout = to_fd1;
    c.on_stderr = to_fd2;
    c.cancelled = was_interrupted;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    int code;
    sl_local_reap_in_place();  /* we exit right after this one sandbox */
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    if (sl_sandbox_run(&o, &c, &r, &err)) {
        fprintf(stderr, "sluice sandbox: %s\n", err.msg);
        /* a memory limit this machine cannot hold is the options' fault */
        sl_err_clear(&err);
        code = o.memory_bytes && sl_local_memory_check(o.memory_bytes, &err) ? 2 : 125;
    } else {
        code = sl_sandbox_result_code(&r);
        if (!quiet && r.kind != SL_EXIT_EXITED && r.kind != SL_EXIT_SIGNALED) {
            char what[256];
            sl_sandbox_result_describe(&r, what, sizeof what);
            const char *hint = r.kind == SL_EXIT_TIMEOUT ? " (--timeout)"
                               : r.kind != SL_EXIT_LIMIT  ? ""
                               : limit_option(r.hit);
            fprintf(stderr, "sluice sandbox: the command %s%s\n", what, hint);
        }
        if (!quiet && r.note[0])
            fprintf(stderr, "sluice sandbox: note: %s%s\n", r.note, limit_option(r.touched));
    }
    sl_sandbox_result_release(&r);
    sl_err_clear(&err);
    for (size_t k = 0; k < nbind; k++)
        free(bind_text[k]);
    return code;
}
