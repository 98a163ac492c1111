/*
 * local — host side of the local sandbox (see local.h, proto.h, init.c).
 */
#include "sandbox/local/local.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/size.h"
#include "sandbox/proxy.h"
#include "sandbox/local/cgroup.h"
#include "sandbox/local/kept.h"
#include "sandbox/local/plan.h"
#include "sandbox/local/proto.h"
#include "sandbox/local/seccomp.h"

typedef struct {
    sl_sandbox base;
    pid_t init;
    int ctl;
    int netns;                /* the sandbox's network namespace, kept for reuse; -1 */
    int kept_lock;            /* holds a kept network namespace slot (kept.h); -1 */
    pthread_mutex_t lock;     /* sends on ctl; OPEN request/answer pairs */
    bool ended;               /* a command marked last was sent; s->lock */
    atomic_uint next_id;
    sl_cgroup *cg;
    sl_proxy *proxy;
    sl_sandbox_opts o;
    bool rlimit_procs;        /* no cgroup: RLIMIT_NPROC counts the processes */
    struct local_proc *procs; /* spawned and not yet freed; procs_mu */
    char notes[512];
} local_sb;

static const sl_sandbox_ops local_ops;

/* ---- control socket ---- */

static int send_on(int ctl, uint32_t op, uint32_t id, int32_t arg, const void *p, size_t len,
                   const int *fds, int nfds)
{
    sl_sb_hdr h = {op, id, arg, (uint32_t)len};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)p, len}};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
    if (nfds) {
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t r;
    do
        r = sendmsg(ctl, &m, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -1 : 0;
}

/* Under s->lock.  After a command marked last, init is on its way out: no
 * new command or file is asked for (EPIPE, as once it is gone); KILL for
 * that command still goes. */
static int send_msg(local_sb *s, uint32_t op, uint32_t id, int32_t arg, const void *p, size_t len,
                    const int *fds, int nfds)
{
    if (s->ended && (op == SL_OP_EXEC || op == SL_OP_OPEN)) {
        errno = EPIPE;
        return -1;
    }
    return send_on(s->ctl, op, id, arg, p, len, fds, nfds);
}

/* Receives one message; *fd gets a passed descriptor or -1. */
static ssize_t recv_msg(int ctl, sl_sb_hdr *h, char *payload, size_t cap, int *fd)
{
    char buf[sizeof *h + 1024];
    struct iovec iov = {buf, sizeof buf};
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                       .msg_controllen = sizeof u.b};
    ssize_t r;
    do
        r = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(fd, CMSG_DATA(c), sizeof(int));
    if (r < (ssize_t)sizeof *h) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -1;
    }
    memcpy(h, buf, sizeof *h);
    size_t n = (size_t)r - sizeof *h;
    if (n >= cap)
        n = cap - 1;
    memcpy(payload, buf + sizeof *h, n);
    payload[n] = 0;
    return (ssize_t)n;
}

/* ---- network namespaces for reuse ----
 *
 * A finished sandbox's network namespace is empty once its processes are
 * gone: sockets close with them, and no process inside ever had the
 * capabilities to change routes, filters or sysctls (the namespace stays
 * owned by the old sandbox's user namespace, where the new sandbox has
 * none).  So it is kept, with loopback up, for the next sandbox. */
static pthread_mutex_t netns_mu = PTHREAD_MUTEX_INITIALIZER;
static int netns_pool[8];
static int netns_n;

static int netns_take(void)
{
    int fd = -1;
    pthread_mutex_lock(&netns_mu);
    if (netns_n)
        fd = netns_pool[--netns_n];
    pthread_mutex_unlock(&netns_mu);
    return fd;
}

static void netns_give(int fd)
{
    if (fd < 0)
        return;
    pthread_mutex_lock(&netns_mu);
    if (netns_n < (int)(sizeof netns_pool / sizeof *netns_pool)) {
        netns_pool[netns_n++] = fd;
        fd = -1;
    }
    pthread_mutex_unlock(&netns_mu);
    if (fd >= 0)
        close(fd);
}

static void netns_drain(void)
{
    pthread_mutex_lock(&netns_mu);
    while (netns_n)
        close(netns_pool[--netns_n]);
    pthread_mutex_unlock(&netns_mu);
}

/* ---- create ---- */

static const char *userns_hint(void)
{
    return "sluice runs commands only inside namespaces and will not run them unisolated. "
           "Check that user namespaces are enabled (sysctl user.max_user_namespaces > 0, "
           "kernel.unprivileged_userns_clone=1 where it exists, "
           "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu) or run as root";
}

static int write_proc(pid_t pid, const char *file, const char *text, sl_err *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return sl_err_set(err, SL_EUNSUPPORTED, "cannot open %s: %s", path, strerror(errno));
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    if (n != (ssize_t)strlen(text))
        return sl_err_set(err, SL_EUNSUPPORTED, "cannot write %s: %s. %s", path, strerror(e),
                          userns_hint());
    return 0;
}

/* ---- init, a program of its own ---- */

/* The static init program (build/sluice-init, embedded at build time). */
extern const unsigned char sl_init_blob[];
extern const size_t sl_init_blob_len;

#ifdef MFD_EXEC
#define SL_MFD_EXEC MFD_EXEC
#else
#define SL_MFD_EXEC 0x0010U
#endif

static int init_fd = -1;
static bool init_installed; /* init_fd is the installed sluice-init, not a memfd */
static char init_err[200];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* The first page of init's ELF (its headers and the linker's build ID, a
 * hash of the whole file: the Makefile asks for one) if the build ID lies
 * in it, else 0. */
static size_t init_head_len(void)
{
    const size_t page = 4096;
    Elf64_Ehdr eh;
    if (sl_init_blob_len < page || sizeof eh > sl_init_blob_len)
        return 0;
    memcpy(&eh, sl_init_blob, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > page)
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, sl_init_blob + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_NOTE || ph.p_offset + ph.p_filesz > page)
            continue;
        for (uint64_t at = ph.p_offset; at + sizeof(Elf64_Nhdr) <= ph.p_offset + ph.p_filesz;) {
            Elf64_Nhdr nh;
            memcpy(&nh, sl_init_blob + at, sizeof nh);
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz >= 16)
                return page;
            at += sizeof nh + ((nh.n_namesz + 3u) & ~3u) + ((nh.n_descsz + 3u) & ~3u);
        }
    }
    return 0;
}

/* The installed copy of init beside our own executable (the Makefile puts
 * build/sluice-init beside build/sluice), or -1.  Exec'ing it spares each
 * process the 0.3-0.6 ms of copying init into a memfd.  It is used only
 * when nobody but root or we could have written it (owner root or our
 * user, not writable by group or others), it is exactly as long as ours,
 * its mount allows exec, and its first page (headers and build ID, a hash
 * of the whole program) is ours.  The fd we check is the one we exec. */
static int installed_init(void)
{
    size_t head = init_head_len();
    char path[4096];
    ssize_t n = head ? readlink("/proc/self/exe", path, sizeof path - 16) : -1;
    if (n <= 0)
        return -1;
    path[n] = 0;
    char *slash = strrchr(path, '/');
    if (!slash)
        return -1;
    strcpy(slash + 1, "sluice-init");
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    struct statvfs vfs;
    uid_t me = geteuid();
    unsigned char page[4096];
    bool ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid == me) &&
              !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
              (st.st_mode & (st.st_uid == me ? S_IXUSR : S_IXOTH)) &&
              (uint64_t)st.st_size == sl_init_blob_len && !fstatvfs(fd, &vfs) &&
              !(vfs.f_flag & ST_NOEXEC) && pread(fd, page, head, 0) == (ssize_t)head &&
              !memcmp(page, sl_init_blob, head);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

/* init's program, exec'd by every sandbox and changed by none: the
 * installed copy when it passes installed_init's checks, else a sealed
 * memfd holding the copy built into us. */
static void make_init_exe(void)
{
    init_fd = installed_init();
    init_installed = init_fd >= 0;
    if (init_installed)
        return;
    /* MFD_EXEC: kernels with vm.memfd_noexec=1 make memfds unexecutable
     * unless asked; older kernels do not know the flag (EINVAL). */
    int fd = memfd_create("sluice-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | SL_MFD_EXEC);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("sluice-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    size_t off = 0;
    while (fd >= 0 && off < sl_init_blob_len) {
        ssize_t w = write(fd, sl_init_blob + off, sl_init_blob_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd < 0 || off != sl_init_blob_len ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
        snprintf(init_err, sizeof init_err, "cannot load the sandbox's init program: %s",
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    init_fd = fd;
}

/* init_fd is kept clear of SL_SB_CTL_FD, where spawn_init puts the
 * control socket before it execs init_fd. */
static void init_exe_once(void)
{
    make_init_exe();
    if (init_fd >= 0 && init_fd <= SL_SB_CTL_FD) {
        int fd = fcntl(init_fd, F_DUPFD_CLOEXEC, SL_SB_CTL_FD + 1);
        close(init_fd);
        init_fd = fd;
        if (fd < 0)
            snprintf(init_err, sizeof init_err, "cannot keep the sandbox's init program "
                     "open: %s", strerror(errno));
    }
}

static int init_exe(sl_err *err)
{
    pthread_once(&init_once, init_exe_once);
    if (init_fd < 0)
        sl_err_set(err, SL_EIO, "sandbox: %s", init_err);
    return init_fd;
}

typedef struct {
    int exe, ctl;
    bool ambient; /* FRESH: carry the new user namespace's capabilities over exec */
    bool early;   /* an early init (start_early): it is told so (init.c main) */
} spawn_arg;

#define SPAWN_STACK (64 * 1024)

/* A system call that leaves errno alone: an early init (start_early) runs
 * in our memory beside us, and errno is the thread's that cloned it. */
__attribute__((no_sanitize("address", "undefined")))
static long raw_call(long n, long a, long b, long c, long d, long e)
{
#if defined(__x86_64__)
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return r;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
#else
    return syscall(n, a, b, c, d, e);  /* elsewhere inits start with CLONE_VFORK only */
#endif
}

#if defined(__x86_64__) || defined(__aarch64__)
#define EARLY_INIT 1
#else
#define EARLY_INIT 0
#endif

/* The clone's child: still in our memory, so only system calls.  Puts the
 * control socket on fd 3 and becomes init. */
__attribute__((no_sanitize("address", "undefined")))
static int spawn_init(void *arg)
{
    const spawn_arg *a = arg;
    /* The clone gave us every capability in the new user namespace; exec
     * as a non-root user would drop them, so they ride along as ambient
     * capabilities (init drops them all itself once the root is built).
     * A kept or template init is root in the host's namespace already. */
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (a->ambient) {
        if (syscall(SYS_capget, &hdr, data))
            syscall(SYS_exit, 126);
        data[0].inheritable = data[0].permitted;
        data[1].inheritable = data[1].permitted;
        if (syscall(SYS_capset, &hdr, data))
            syscall(SYS_exit, 126);
        /* capabilities are numbered from 0 up to the kernel's last one, past
         * which the raise fails with EINVAL: stop there */
        for (int c = 0; c < 64; c++)
            if (syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) &&
                errno == EINVAL)
                break;
    }
    if (a->ctl == SL_SB_CTL_FD)
        raw_call(SYS_fcntl, a->ctl, F_SETFD, 0, 0, 0);
    else if (raw_call(SYS_dup3, a->ctl, SL_SB_CTL_FD, 0, 0, 0) < 0)
        raw_call(SYS_exit, 127, 0, 0, 0, 0);
    static const char *const argv[] = {"sluice-init", NULL};
    static const char *const early_argv[] = {"sluice-init", "early", NULL};
    static const char *const envp[] = {NULL};
    raw_call(SYS_execveat, a->exe, (long)"", (long)(a->early ? early_argv : argv), (long)envp,
             AT_EMPTY_PATH);
    raw_call(SYS_exit, 127, 0, 0, 0, 0);
    return 127;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* What a kept root is made of: the binds (by the fingerprints of the
 * folders that hold them), the /etc files (generated, and the copies'
 * fingerprints), and init (its first page holds the linker's build ID, a
 * hash of all of it).  No user binds: those sandboxes are built here. */
static uint64_t plan_hash(const sl_sandbox_opts *o, const sl_value *host_etc)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    sl_buf print;
    sl_buf_init(&print, 0);
    sl_plan_print(&print, o, host_etc);
    h = fnv(h, print.data ? print.data : "", print.len);
    sl_buf_release(&print);
    h = fnv(h, &sl_init_blob_len, sizeof sl_init_blob_len);
    return fnv(h, sl_init_blob, sl_init_blob_len < 4096 ? sl_init_blob_len : 4096);
}

/* A template init (SL_SB_TEMPLATE): root in new mount and uts namespaces,
 * it builds the shared root and waits for kept.c to pin them. */
typedef struct {
    sl_sb_plan plan;
    const sl_sandbox_opts *o;
    const sl_value *host_etc;
    int ctl;
    pid_t pid;
} template_arg;

static void template_done(void *arg)
{
    template_arg *t = arg;
    if (t->ctl >= 0)
        close(t->ctl);  /* init ends */
    t->ctl = -1;
    if (t->pid > 0)
        while (waitpid(t->pid, NULL, __WALL) < 0 && errno == EINTR) {
        }
    t->pid = -1;
}

static pid_t build_template(void *arg, sl_err *err)
{
    template_arg *t = arg;
    int exe = init_exe(err);
    if (exe < 0)
        return -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
        return sl_err_set(err, SL_EIO, "sandbox: socketpair: %s", strerror(errno));
    spawn_arg sa = {exe, sv[1], false, false};
    char *stack = sl_xmalloc(SPAWN_STACK);
    pid_t pid = clone(spawn_init, stack + SPAWN_STACK,
                      CLONE_NEWNS | CLONE_NEWUTS | CLONE_VM | CLONE_VFORK | SIGCHLD, &sa);
    int e = errno;
    free(stack);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return sl_err_set(err, SL_EUNSUPPORTED, "sandbox: cannot make a kept root: %s",
                          strerror(e));
    }
    t->ctl = sv[0];
    t->pid = pid;
    struct pollfd pf = {t->ctl, POLLIN, 0};
    sl_sb_hdr h;
    char text[1100];
    int fd = -1;
    sl_buf wire;
    size_t etc_len;
    char *etc = sl_plan_etc(t->host_etc, &etc_len);
    t->plan.etc_files = etc;
    t->plan.mounts = sl_plan_mounts(t->o, &t->plan.n_mounts);
    sl_plan_wire(&wire, &t->plan, etc_len);
    t->plan.etc_files = "";
    free(t->plan.mounts);
    t->plan.mounts = NULL;
    t->plan.n_mounts = 0;
    free(etc);
    int sent = send_on(t->ctl, SL_OP_GO, 0, 0, wire.data, wire.len, NULL, 0);
    sl_buf_release(&wire);
    if (sent || poll(&pf, 1, 10000) != 1 || recv_msg(t->ctl, &h, text, sizeof text, &fd) < 0) {
        template_done(t);
        return sl_err_set(err, SL_EIO, "sandbox: the kept root's init ended during set-up");
    }
    if (fd >= 0)
        close(fd);
    if (h.op != SL_OP_READY) {
        template_done(t);
        return sl_err_set(err, SL_EIO, "sandbox: making the kept root failed: %s",
                          h.op == SL_OP_ERROR ? text : "unexpected message");
    }
    return pid;
}

/* The refusal of a memory limit that no cgroup can hold.  rlimits cannot
 * stand in: RLIMIT_DATA and RLIMIT_AS count one process's private or mapped
 * memory, while memfd and tmpfs files, shared memory, pipe and socket
 * buffers add up over 512 processes to far more than the limit. */
static int memory_refused(uint64_t bytes, const char *why, sl_err *err)
{
    char size[32];
    sl_size_text(bytes, size, sizeof size);
    return sl_err_set(err, SL_EUNSUPPORTED,
                      "sandbox: the memory limit (%s) cannot be enforced here: %s. Only a "
                      "memory cgroup bounds all a sandbox can hold (shared memory, memfd and "
                      "tmpfs files, pipe and socket buffers, over all its processes), so sluice "
                      "refuses the limit rather than pretend. To have it, run sluice as root or "
                      "in a cgroup delegated to you (with systemd: systemd-run --user --scope -p "
                      "Delegate=yes sluice ...). To run without a memory limit, set "
                      "sandbox_memory_bytes=0 (--limit sandbox_memory_bytes=0, "
                      "SLUICE_SANDBOX_MEMORY_BYTES=0; sluice sandbox run --mem none)",
                      size, why);
}

int sl_local_memory_check(uint64_t bytes, sl_err *err)
{
    sl_cgroup_limits l = {bytes, 0, 0};
    sl_cgroup *cg = NULL;
    sl_err why = {0};
    if (sl_cgroup_create(&l, &cg, &why)) {
        memory_refused(bytes, why.msg, err);
        sl_err_clear(&why);
        return -1;
    }
    sl_cgroup_destroy(cg);
    return 0;
}

/* Limits: a cgroup when we may make one.  Without one, processes are
 * counted by RLIMIT_NPROC (per user namespace, so per sandbox) and a
 * memory limit is refused: nothing else can hold it. */
static int make_limits(local_sb *s, const sl_sandbox_opts *o, sl_err *err)
{
    sl_cgroup_limits cl = {o->memory_bytes, o->max_procs, o->cpu_cores};
    sl_err cgerr = {0};
    if (sl_cgroup_create(&cl, &s->cg, &cgerr) && o->memory_bytes) {
        memory_refused(o->memory_bytes, cgerr.msg, err);
        sl_err_clear(&cgerr);
        return -1;
    }
    sl_err_clear(&cgerr);
    s->rlimit_procs = !s->cg && o->max_procs > 0;
    return 0;
}

/* An init started before the plan is made (KEPT only; see sl_local_create).
 * Cloned without CLONE_VFORK, it runs in our memory beside us until its
 * exec, on a stack of its own: the stack is freed only once init is known
 * to be past it (it answered, or it was reaped). */
typedef struct {
    pid_t pid;
    int ctl;
    char *stack;
    spawn_arg sa;
} early_init;

static void start_early(early_init *e)
{
    e->pid = -1;
    e->ctl = -1;
    e->stack = NULL;
    sl_err ignore = {0};
    int exe = EARLY_INIT ? init_exe(&ignore) : -1;
    sl_err_clear(&ignore);
    int sv[2];
    if (exe < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
        return;
    e->sa = (spawn_arg){exe, sv[1], false, true};
    e->stack = sl_xmalloc(SPAWN_STACK);
    e->pid = clone(spawn_init, e->stack + SPAWN_STACK, CLONE_NEWPID | CLONE_VM | SIGCHLD, &e->sa);
    close(sv[1]);  /* the child has its own table of descriptors */
    if (e->pid < 0) {
        close(sv[0]);
        free(e->stack);
        e->stack = NULL;
        return;
    }
    e->ctl = sv[0];
}

/* Ends an early init that will not be used, or that failed. */
static void stop_early(early_init *e)
{
    if (e->pid > 0) {
        if (e->ctl >= 0)
            close(e->ctl);
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, __WALL) < 0 && errno == EINTR) {
        }
    }
    free(e->stack);
    e->pid = -1;
    e->ctl = -1;
    e->stack = NULL;
}

/* A FRESH sandbox: init cloned into new user, mount, pid, IPC, uts and
 * (unless an empty one is at hand) network namespaces, and its uid and
 * gid maps written.  Returns init's pid (also in s->init), or -1 and err;
 * s->ctl is the host's end of the control socket either way. */
static pid_t start_fresh(local_sb *s, sl_sb_plan *plan, sl_err *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
        sl_err_set(err, SL_EIO, "sandbox: socketpair: %s", strerror(errno));
        return -1;
    }
    s->ctl = sv[0];
    plan->ctl = sv[1];
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC |
                          CLONE_NEWUTS | SIGCHLD;
    int home = -1;
    if (plan->new_net) {
        /* An empty network namespace left by a finished sandbox costs
         * nothing to join; making one costs about a millisecond, and
         * tearing it down later holds locks every new one needs. */
        s->netns = netns_take();
        if (s->netns >= 0) {
            home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
            if (home < 0 || setns(s->netns, CLONE_NEWNET)) {
                if (home >= 0)
                    close(home);
                home = -1;
                close(s->netns);
                s->netns = -1;
            }
        }
        if (s->netns >= 0)
            plan->new_net = false, plan->shared_net = true;
        else
            flags |= CLONE_NEWNET;
    }
    /* The child shares our memory until it execs init (CLONE_VFORK keeps
     * us waiting until then): no copy of this process's ~200 mappings. */
    pid_t pid = -1;
    int exe = init_exe(err);
    if (exe >= 0) {
        spawn_arg sa = {exe, sv[1], true, false};
        char *stack = sl_xmalloc(SPAWN_STACK);
        pid = clone(spawn_init, stack + SPAWN_STACK, (int)flags | CLONE_VM | CLONE_VFORK, &sa);
        free(stack);
    }
    int clone_errno = errno;
    if (home >= 0) {
        if (setns(home, CLONE_NEWNET))
            SL_BUG("cannot return to the host's network namespace");
        close(home);
    }
    errno = clone_errno;
    close(sv[1]);
    if (pid > 0 && s->netns < 0 && (flags & CLONE_NEWNET)) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)pid);
        s->netns = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (pid < 0 && exe < 0)
        return -1;  /* err says why */
    if (pid < 0) {
        sl_err_set(err, SL_EUNSUPPORTED,
                   "the kernel refused to create the sandbox's namespaces (%s). %s",
                   strerror(errno), userns_hint());
        return -1;
    }
    s->init = pid;  /* from here on, the teardown ends it */
    char map[64];
    uid_t uid = geteuid() == 0 ? SL_SB_HOST_ID : geteuid();
    gid_t gid = getegid() == 0 ? SL_SB_HOST_ID : getegid();
    snprintf(map, sizeof map, "%d %ld 1\n", SL_SB_UID, (long)uid);
    if (write_proc(pid, "setgroups", "deny", err) || write_proc(pid, "uid_map", map, err))
        return -1;
    snprintf(map, sizeof map, "%d %ld 1\n", SL_SB_GID, (long)gid);
    if (write_proc(pid, "gid_map", map, err))
        return -1;
    return pid;
}

typedef struct exec_call exec_call;
static int exec_send(local_sb *s, const sl_sandbox_cmd *cmd, exec_call *x, sl_err *err);
static void exec_call_close(exec_call *x);

/* first (sl_local_run): a command sent to init before it is ready, so it
 * starts the moment init is; *fx is its call, open when this returns 0. */
static int create(const sl_sandbox_opts *o, const sl_sandbox_cmd *first, exec_call *fx,
                  sl_sandbox **out, sl_err *err)
{
    *out = NULL;
    const sl_value *host_etc;
    if (sl_plan_settings(o->settings, &host_etc, err))
        return -1;
    for (size_t i = 0; i < o->n_binds; i++) {
        const sl_sandbox_bind *b = &o->binds[i];
        if (!b->host || !b->target || !b->target[0] || strstr(b->target, ".."))
            return sl_err_set(err, SL_EINVAL,
                              "sandbox bind %zu: the target must be a path without '..' "
                              "(got '%s')",
                              i + 1, b->target ? b->target : "");
        if (access(b->host, R_OK))
            return sl_err_set(err, SL_EINVAL, "sandbox bind: cannot read %s: %s", b->host,
                              strerror(errno));
        if (strlen(b->host) >= 255 || strlen(b->target) >= 255)
            return sl_err_set(err, SL_EINVAL, "sandbox bind: path too long: %s", b->host);
    }
    /* Run as root with no binds of the user's, the sandbox will most
     * likely join kept namespaces (kept.h), and nothing of the plan is
     * needed to start its init: it is started first thing, ready to exec
     * while we make the plan and find what is kept, if a CPU takes it (the
     * kernel queues a new process on its parent's CPU; docs/sandbox.md),
     * and an init that turns out not to be needed is stopped. */
    early_init early = {.pid = -1, .ctl = -1};
    if (o->n_binds == 0 && geteuid() == 0)
        start_early(&early);
    const struct sock_fprog *prog = sl_seccomp_program();
    local_sb *s = sl_xcalloc(1, sizeof *s);
    s->base.ops = &local_ops;
    s->base.workspace = "/workspace";
    s->o = *o;
    s->o.binds = NULL;
    s->o.n_binds = 0;
    s->ctl = -1;
    s->netns = -1;
    s->kept_lock = -1;
    pthread_mutex_init(&s->lock, NULL);
    char kept_why[300] = "";
    bool sent_first = false;  /* *fx is open */

    /* The plan init follows (sent with GO). */
    sl_sb_plan plan = {0};
    int nm = 0;
    sl_sb_mount *ms = NULL;  /* sl_plan_mounts, when this sandbox's root is built here */
    size_t etc_len = 0;
    char *etc = NULL;  /* sl_plan_etc, when this sandbox's root is built here */
    plan.new_net = o->net != SL_NET_OPEN;
    plan.proxy = o->net == SL_NET_ALLOW;
    plan.seccomp = prog;
    plan.etc_files = "";
    snprintf(plan.data_opts, sizeof plan.data_opts, "size=%" PRIu64 ",mode=0755",
             o->disk_bytes ? o->disk_bytes : (uint64_t)1 << 30);

    /* Run as root, the root and the network namespace are kept between
     * sandboxes and processes (kept.h) and init only joins them. */
    int kept_ns[3] = {-1, -1, -1}, net_slot = -1;
    if (early.pid > 0 && sl_kept_usable()) {
        template_arg ta = {.plan = plan, .ctl = -1, .pid = -1};
        ta.plan.mode = SL_SB_TEMPLATE;
        ta.plan.new_net = ta.plan.shared_net = ta.plan.proxy = false;
        ta.host_etc = host_etc;
        ta.o = o;
        sl_err kerr = {0};
        if (sl_kept_root(plan_hash(o, host_etc), build_template, &ta, template_done, kept_ns,
                         &kerr) == 0) {
            plan.mode = SL_SB_KEPT;
            plan.n_ns = 2;
            snprintf(plan.data_opts + strlen(plan.data_opts),
                     sizeof plan.data_opts - strlen(plan.data_opts), ",uid=%d,gid=%d",
                     SL_SB_HOST_ID, SL_SB_HOST_ID);
        } else {
            snprintf(kept_why, sizeof kept_why, "; root built here: %s", kerr.msg);
            sl_err_clear(&kerr);
        }
    }
    if (plan.mode == SL_SB_KEPT && plan.new_net) {
        kept_ns[2] = sl_kept_net_take(&s->kept_lock, &net_slot);
        if (kept_ns[2] >= 0) {
            plan.new_net = false;
            plan.shared_net = true;
            plan.n_ns = 3;
        }
    }

    if (plan.mode != SL_SB_KEPT) {
        plan.etc_files = etc = sl_plan_etc(host_etc, &etc_len);
        plan.mounts = ms = sl_plan_mounts(o, &nm);
        plan.n_mounts = nm;
    }
    /* A KEPT init joins its namespaces while we make its cgroup (it gets
     * the group with PLACED); a FRESH one is placed first thing. */
    if (plan.mode != SL_SB_KEPT && make_limits(s, o, err))
        goto fail;
    pid_t pid;
    if (plan.mode == SL_SB_KEPT) {
        s->ctl = early.ctl;
        early.ctl = -1;
        pid = early.pid;
    } else {
        stop_early(&early);  /* not needed after all */
        pid = start_fresh(s, &plan, err);
        if (pid < 0)
            goto fail;
    }
    s->init = pid;
    /* GO carries the plan (proto.h); init builds the root while we move it
     * into its cgroup, then PLACED lets it make its cgroup namespace. */
    sl_buf wire;
    if (plan.mode == SL_SB_KEPT)
        plan.n_mounts = 0;  /* the kept root has them, and the /etc files */
    sl_plan_wire(&wire, &plan, etc_len);
    if (wire.len > SL_SB_MSG_MAX) {
        sl_buf_release(&wire);
        sl_err_set(err, SL_ELIMIT, "sandbox: too many binds (the plan is over %d bytes)",
                   SL_SB_MSG_MAX);
        goto fail;
    }
    /* On cgroup v1, init moves itself with the tasks files sent with GO
     * (see sl_cgroup_join_fds); elsewhere we move it.  A KEPT init gets
     * its namespaces first. */
    int fds[8], n_fds = plan.mode == SL_SB_KEPT ? plan.n_ns : 0;
    for (int i = 0; i < n_fds; i++)
        fds[i] = kept_ns[i];
    int n_join = s->cg && plan.mode != SL_SB_KEPT ? sl_cgroup_join_fds(s->cg, fds + n_fds, 4, err) : 0;
    if (n_join < 0) {
        sl_buf_release(&wire);
        goto fail;
    }
    int go = send_msg(s, SL_OP_GO, 0, 0, wire.data, wire.len, fds, n_fds + n_join);
    sl_buf_release(&wire);
    for (int i = 0; i < n_join; i++)
        close(fds[n_fds + i]);
    for (int i = 0; i < 3; i++)
        if (kept_ns[i] >= 0)
            close(kept_ns[i]), kept_ns[i] = -1;
    if (go) {
        sl_err_set(err, SL_EIO, "sandbox: cannot start init: %s", strerror(errno));
        goto fail;
    }
    if (plan.mode == SL_SB_KEPT) {
        if (make_limits(s, o, err))
            goto fail;
        n_join = s->cg ? sl_cgroup_join_fds(s->cg, fds, 4, err) : 0;
        if (n_join < 0)
            goto fail;
    }
    /* A failed move is reported after init's answer: when init died
     * during set-up, its own reason is the one to give. */
    sl_err cgerr2 = {0};
    bool placed = !s->cg || n_join > 0 || !sl_cgroup_attach(s->cg, pid, &cgerr2);
    if (placed)
        send_msg(s, SL_OP_PLACED, 0, 0, NULL, 0, fds, plan.mode == SL_SB_KEPT ? n_join : 0);
    else
        shutdown(s->ctl, SHUT_WR);  /* init ends; an ERROR it sent first still comes */
    if (plan.mode == SL_SB_KEPT)
        for (int i = 0; i < n_join; i++)
            close(fds[i]);
    /* init reads it once it is ready: the round trip after READY is saved */
    if (first && placed) {
        if (exec_send(s, first, fx, err))
            goto fail;
        sent_first = true;
    }
    struct pollfd pf = {s->ctl, POLLIN, 0};
    if (poll(&pf, 1, 10000) != 1) {
        sl_err_clear(&cgerr2);
        sl_err_set(err, SL_ETIMEOUT, "sandbox: init did not report within 10 s");
        goto fail;
    }
    sl_sb_hdr h;
    char text[1100];
    int fd;
    ssize_t got = recv_msg(s->ctl, &h, text, sizeof text, &fd);
    if (got < 0 && !placed) {
        sl_err_set(err, cgerr2.code, "%s", cgerr2.msg);
        sl_err_clear(&cgerr2);
        goto fail;
    }
    if (got < 0) {
        /* init died before it could say why: its exit code tells */
        int st = 0;
        pid_t dead;
        while ((dead = waitpid(s->init, &st, __WALL)) < 0 && errno == EINTR) {
        }
        if (dead == s->init)
            s->init = 0;  /* reaped here; the teardown must not wait for it */
        int code = dead > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (code == 127 && init_installed)
            sl_err_set(err, SL_EUNSUPPORTED,
                       "sandbox: the kernel refused to run the sandbox's init program (the "
                       "sluice-init installed beside sluice); check that its file system "
                       "allows exec, or remove it so the copy built into sluice is used");
        else if (code == 127)
            sl_err_set(err, SL_EUNSUPPORTED,
                       "sandbox: the kernel refused to run the sandbox's init program from "
                       "memory (memfd exec); set the sysctl vm.memfd_noexec to 0 or 1");
        else if (code == 126)
            sl_err_set(err, SL_EUNSUPPORTED,
                       "sandbox: could not hand init its capabilities in the new user "
                       "namespace (capset or ambient capabilities refused). %s", userns_hint());
        else
            sl_err_set(err, SL_EIO, "sandbox: init ended during set-up (exit status %d)", code);
        goto fail;
    }
    if (h.op == SL_OP_ERROR) {
        sl_err_clear(&cgerr2);
        sl_err_set(err, SL_EUNSUPPORTED, "sandbox set-up failed: %s. %s", text,
                   h.arg == EPERM ? userns_hint() : "");
        goto fail;
    }
    if (!placed) {
        if (fd >= 0)
            close(fd);
        sl_err_set(err, cgerr2.code, "%s", cgerr2.msg);
        sl_err_clear(&cgerr2);
        goto fail;
    }
    if (h.op != SL_OP_READY) {
        if (fd >= 0)
            close(fd);
        sl_err_set(err, SL_EIO, "sandbox: unexpected message %u from init", h.op);
        goto fail;
    }
    if (!s->cg)
        snprintf(s->notes, sizeof s->notes,
                 "limits: no cgroup: memory not limited (none was asked for), processes by "
                 "RLIMIT_NPROC, CPU bandwidth not capped%s", kept_why);
    else
        snprintf(s->notes, sizeof s->notes, "limits: %s%s", sl_cgroup_kind(s->cg), kept_why);
    if (net_slot >= 0 && plan.new_net)
        sl_kept_net_fill(net_slot, s->init);  /* the next sandbox joins it */
    if (plan.proxy) {
        if (fd < 0) {
            sl_err_set(err, SL_EIO, "sandbox: init did not hand over the proxy socket");
            goto fail;
        }
        if (sl_proxy_start(fd, o->net_allow ? o->net_allow : "", &s->proxy, err))
            goto fail;
    } else if (fd >= 0) {
        close(fd);
    }
    free(early.stack);  /* init answered: it runs its own program */
    free(ms);
    free(etc);
    *out = &s->base;
    return 0;
fail:
    if (sent_first)
        exec_call_close(fx);
    if (early.stack) {
        /* init may not be past its exec yet: gone first, then its stack */
        if (s->init == early.pid)
            s->init = 0;
        stop_early(&early);
    }
    free(ms);
    free(etc);
    for (int i = 0; i < 3; i++)
        if (kept_ns[i] >= 0)
            close(kept_ns[i]);
    sl_sandbox_destroy(&s->base);
    return -1;
}

/* ---- exec ---- */

static void add_str(sl_buf *b, const char *s)
{
    sl_buf_add(b, s, strlen(s) + 1);
}

static bool env_has(const char *const *env, const char *kv)
{
    size_t n = strcspn(kv, "=");
    for (; env && *env; env++)
        if (!strncmp(*env, kv, n) && (*env)[n] == '=')
            return true;
    return false;
}

static const char *const base_env[] = {
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME=/home/sandbox", "USER=sandbox", "LOGNAME=sandbox", "SHELL=/bin/sh",
    "LANG=C.UTF-8", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1", NULL};
static const char *const proxy_env[] = {
    "http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
    "HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
    "npm_config_proxy=http://127.0.0.1:3128", "npm_config_https_proxy=http://127.0.0.1:3128",
    "no_proxy=localhost,127.0.0.1,::1", "NO_PROXY=localhost,127.0.0.1,::1", NULL};

typedef struct {
    int fd;
    bool eof;
    sl_buf *into;
    sl_sandbox_out_fn fn;
    size_t bytes;
    bool *truncated;
} stream;

static void set_nonblock(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* The EXEC message for cmd (proto.h) into msg (capped at SL_SB_MSG_MAX):
 * its argv, cwd and env over the sandbox's base env, and the per-process
 * limits.  `what` names the caller in the error. */
static int exec_msg(local_sb *s, const sl_sandbox_cmd *cmd, bool has_stdin, const char *what,
                    sl_buf *msg, sl_err *err)
{
    sl_buf_init(msg, SL_SB_MSG_MAX);
    sl_sb_exec e = {0};
    e.rlim_cpu = s->o.cpu_seconds > 0 ? s->o.cpu_seconds : -1;
    e.rlim_nofile = s->o.max_open_files > 0 ? s->o.max_open_files : -1;
    e.rlim_fsize = s->o.max_file_bytes ? (int64_t)s->o.max_file_bytes : -1;
    e.rlim_nproc = s->rlimit_procs ? s->o.max_procs : -1;
    e.has_stdin = has_stdin;
    e.last = cmd->last;
    const char *const *base[2] = {base_env, s->o.net == SL_NET_ALLOW ? proxy_env : NULL};
    for (const char *const *a = cmd->argv; *a; a++)
        e.argc++;
    for (const char *const *v = cmd->env; v && *v; v++)
        e.envc++;
    for (int k = 0; k < 2; k++)
        for (const char *const *v = base[k]; v && *v; v++)
            if (!env_has(cmd->env, *v))
                e.envc++;
    sl_buf_add(msg, &e, sizeof e);
    add_str(msg, cmd->cwd ? cmd->cwd : "");
    for (const char *const *a = cmd->argv; *a; a++)
        add_str(msg, *a);
    for (const char *const *v = cmd->env; v && *v; v++)
        add_str(msg, *v);
    for (int k = 0; k < 2; k++)
        for (const char *const *v = base[k]; v && *v; v++)
            if (!env_has(cmd->env, *v))
                add_str(msg, *v);
    if (msg->toobig) {
        sl_buf_release(msg);
        return sl_err_set(err, SL_ELIMIT,
                          "sandbox %s: the command line and environment exceed %d KiB; pass "
                          "large data on stdin or in a file",
                          what, SL_SB_MSG_MAX / 1024);
    }
    return 0;
}

/* How a command was stopped by sluice rather than by itself. */
enum { K_NONE, K_TIMEOUT, K_OUTPUT, K_CANCEL, K_SOCKETS };

/* Fills res from a command's end: init's status, what sluice did to it
 * (K_*), and the cgroup's events before and after (an OOM kill, the
 * process limit reached).  o holds the sandbox's limits, for the words. */
static void exec_end(const sl_sandbox_opts *o, const sl_exec_status *status, int killed,
                     const sl_cgroup_events *ev0, const sl_cgroup_events *ev1,
                     sl_sandbox_result *res)
{
    int w = status->status;
    if (killed == K_TIMEOUT) {
        res->kind = SL_EXIT_TIMEOUT;
    } else if (killed == K_CANCEL) {
        res->kind = SL_EXIT_CANCELED;
    } else if (killed == K_OUTPUT) {
        res->kind = SL_EXIT_LIMIT;
        res->sig = SIGKILL;
    } else if (killed == K_SOCKETS) {
        char size[32];
        sl_size_text(o->memory_bytes, size, sizeof size);
        res->kind = SL_EXIT_LIMIT;
        res->sig = SIGKILL;
        res->hit = SL_SBLIMIT_MEMORY;
        snprintf(res->limit, sizeof res->limit, "memory (%s; socket buffers)", size);
    } else if (WIFSIGNALED(w)) {
        res->sig = WTERMSIG(w);
        char size[32];
        if (res->sig == SIGKILL && ev1->oom_kills > ev0->oom_kills) {
            sl_size_text(o->memory_bytes, size, sizeof size);
            res->kind = SL_EXIT_LIMIT;
            res->hit = SL_SBLIMIT_MEMORY;
            snprintf(res->limit, sizeof res->limit, "memory (%s)", size);
        } else if (res->sig == SIGXCPU ||
                   (res->sig == SIGKILL && o->cpu_seconds > 0 &&
                    status->cpu_ms >= (int64_t)o->cpu_seconds * 1000)) {
            /* SIGXCPU at the soft limit, SIGKILL at the hard one (a
             * program that ignored SIGXCPU) */
            res->kind = SL_EXIT_LIMIT;
            res->hit = SL_SBLIMIT_CPU;
            snprintf(res->limit, sizeof res->limit, "CPU time (%d s)", o->cpu_seconds);
        } else if (res->sig == SIGXFSZ) {
            sl_size_text(o->max_file_bytes, size, sizeof size);
            res->kind = SL_EXIT_LIMIT;
            res->hit = SL_SBLIMIT_FILE_SIZE;
            snprintf(res->limit, sizeof res->limit, "file size (%s)", size);
        } else {
            res->kind = SL_EXIT_SIGNALED;
        }
    } else {
        res->kind = SL_EXIT_EXITED;
        res->code = WEXITSTATUS(w);
    }
    if (ev1->pids_max > ev0->pids_max) {
        res->touched = SL_SBLIMIT_PROCS;
        snprintf(res->note, sizeof res->note, "the process limit (%d) was reached",
                 o->max_procs);
    }
}

/* One exec'd command between its EXEC and its end: our ends of its pipes. */
struct exec_call {
    int out, err, st, in;  /* -1 when closed */
    uint32_t id;
    double t0;
    sl_cgroup_events ev0;  /* the sandbox's events before the command */
};

static void exec_call_close(exec_call *x)
{
    int *fds[] = {&x->out, &x->err, &x->st, &x->in};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (*fds[i] >= 0)
            close(*fds[i]), *fds[i] = -1;
}

/* Sends cmd to init (EXEC) with the pipes of its streams; init may still
 * be setting up (sl_local_run), it starts the command once it is ready. */
static int exec_send(local_sb *s, const sl_sandbox_cmd *cmd, exec_call *x, sl_err *err)
{
    *x = (exec_call){.out = -1, .err = -1, .st = -1, .in = -1};
    if (!cmd->argv || !cmd->argv[0])
        return sl_err_set(err, SL_EINVAL, "sandbox exec: no command given");
    sl_buf msg;
    bool has_stdin = cmd->stdin_data != NULL || cmd->inherit_stdin;
    if (exec_msg(s, cmd, has_stdin, "exec", &msg, err))
        return -1;
    int out[2] = {-1, -1}, errp[2] = {-1, -1}, st[2] = {-1, -1}, in[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) || pipe2(errp, O_CLOEXEC) || pipe2(st, O_CLOEXEC) ||
        (cmd->stdin_data && !cmd->inherit_stdin && pipe2(in, O_CLOEXEC))) {
        sl_err_set(err, SL_EIO, "sandbox exec: pipe: %s", strerror(errno));
        sl_buf_release(&msg);
        int all[] = {out[0], out[1], errp[0], errp[1], st[0], st[1], in[0], in[1]};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            if (all[i] >= 0)
                close(all[i]);
        return -1;
    }
    x->id = atomic_fetch_add(&s->next_id, 1) + 1;
    sl_cgroup_events_read(s->cg, &x->ev0);
    int fds[4] = {out[1], errp[1], st[1], cmd->inherit_stdin ? 0 : in[0]};
    x->t0 = sl_clock_s();
    pthread_mutex_lock(&s->lock);
    int sent = send_msg(s, SL_OP_EXEC, x->id, 0, msg.data, msg.len, fds, has_stdin ? 4 : 3);
    int e = errno;
    if (!sent && cmd->last)
        s->ended = true;
    pthread_mutex_unlock(&s->lock);
    sl_buf_release(&msg);
    close(out[1]);
    close(errp[1]);
    close(st[1]);
    if (in[0] >= 0)
        close(in[0]);
    x->out = out[0], x->err = errp[0], x->st = st[0], x->in = in[1];
    if (sent) {
        exec_call_close(x);
        return sl_err_set(err, SL_EIO, "sandbox exec: the sandbox is gone (%s)", strerror(e));
    }
    return 0;
}

/* The command of x to its end (x's pipes are closed after). */
static int exec_collect(local_sb *s, const sl_sandbox_cmd *cmd, exec_call *call,
                        sl_sandbox_result *res, sl_err *err)
{
    int out[2] = {call->out, -1}, errp[2] = {call->err, -1}, st[2] = {call->st, -1}, in[2] = {-1, call->in};
    uint32_t id = call->id;
    double t0 = call->t0;
    sl_cgroup_events ev0 = call->ev0;
    *call = (exec_call){.out = -1, .err = -1, .st = -1, .in = -1};

    stream ss[2] = {{out[0], false, &res->out, cmd->on_stdout, 0, &res->out_truncated},
                    {errp[0], false, &res->err, cmd->on_stderr, 0, &res->err_truncated}};
    size_t in_off = 0;
    if (in[1] >= 0) {
        set_nonblock(in[1]);
        if (!cmd->stdin_len) {
            close(in[1]);
            in[1] = -1;
        }
    }
    int killed = K_NONE;
    /* cgroup v1 keeps socket buffers on a counter of their own, lets each
     * socket pass its limit by a segment and never OOM-kills for them:
     * thousands of sockets could hold several times the memory limit.
     * So sluice watches that counter and ends everything in the sandbox
     * once it passes half the memory limit (cgroup.h). */
    bool watch_sockets = s->cg && s->o.memory_bytes && !strcmp(sl_cgroup_kind(s->cg), "cgroup v1");
    double next_watch = 0;
    bool have_status = false;
    sl_exec_status status = {0, 0, 0};
    double drain_until = 0;
    char chunk[65536];
    for (;;) {
        struct pollfd p[4];
        int np = 0, ix[4];
        for (int k = 0; k < 2; k++)
            if (!ss[k].eof) {
                p[np] = (struct pollfd){ss[k].fd, POLLIN, 0};
                ix[np++] = k;
            }
        if (!have_status) {
            p[np] = (struct pollfd){st[0], POLLIN, 0};
            ix[np++] = 2;
        }
        if (in[1] >= 0) {
            p[np] = (struct pollfd){in[1], POLLOUT, 0};
            ix[np++] = 3;
        }
        if (have_status && (np == 0 || sl_clock_s() >= drain_until))
            break;
        int wait_ms = watch_sockets ? 10 : 50;
        if (cmd->timeout_s > 0 && !killed) {
            double left = t0 + cmd->timeout_s - sl_clock_s();
            if (left * 1000 < wait_ms)
                wait_ms = left > 0 ? (int)(left * 1000) + 1 : 0;
        }
        int r = poll(p, (nfds_t)np, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        for (int i = 0; r > 0 && i < np; i++) {
            if (!p[i].revents)
                continue;
            if (ix[i] < 2) {
                stream *xs = &ss[ix[i]];
                ssize_t n = read(xs->fd, chunk, sizeof chunk);
                if (n <= 0) {
                    if (n == 0 || (errno != EINTR && errno != EAGAIN))
                        xs->eof = true;
                    continue;
                }
                size_t keep = (size_t)n;
                if (cmd->max_output_bytes && xs->bytes + keep > cmd->max_output_bytes) {
                    keep = cmd->max_output_bytes - xs->bytes;
                    *xs->truncated = true;
                    if (!killed) {
                        killed = K_OUTPUT;
                        pthread_mutex_lock(&s->lock);
                        send_msg(s, SL_OP_KILL, id, 0, NULL, 0, NULL, 0);
                        pthread_mutex_unlock(&s->lock);
                        res->hit = SL_SBLIMIT_OUTPUT;
                        snprintf(res->limit, sizeof res->limit, "%s output (%zu bytes)",
                                 ix[i] == 0 ? "stdout" : "stderr", cmd->max_output_bytes);
                    }
                }
                xs->bytes += keep;
                if (keep) {
                    if (xs->fn)
                        xs->fn(chunk, keep, cmd->ud);
                    else
                        sl_buf_add(xs->into, chunk, keep);
                }
            } else if (ix[i] == 2) {
                ssize_t n = read(st[0], &status, sizeof status);
                if (n == (ssize_t)sizeof status || n == 0) {
                    if (n == 0)
                        status.status = SIGKILL, status.error = EPIPE, status.cpu_ms = 0;
                    have_status = true;
                    res->seconds = sl_clock_s() - t0;
                    /* background writers were killed with the command's
                     * group; give the pipes a moment to report EOF */
                    drain_until = sl_clock_s() + 0.25;
                }
            } else {
                ssize_t n = write(in[1], cmd->stdin_data + in_off, cmd->stdin_len - in_off);
                if (n > 0)
                    in_off += (size_t)n;
                if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off >= cmd->stdin_len) {
                    close(in[1]);
                    in[1] = -1;
                }
            }
        }
        if (watch_sockets && !killed && !have_status && sl_clock_s() >= next_watch) {
            next_watch = sl_clock_s() + 0.01;  /* busy output does not read it more often */
            if (sl_cgroup_v1_socket_usage(s->cg) > s->o.memory_bytes / 2) {
                killed = K_SOCKETS;
                pthread_mutex_lock(&s->lock);
                send_msg(s, SL_OP_KILLALL, 0, 0, NULL, 0, NULL, 0);
                pthread_mutex_unlock(&s->lock);
            }
        }
        if (!killed && !have_status) {
            bool timeout = cmd->timeout_s > 0 && sl_clock_s() - t0 >= cmd->timeout_s;
            bool cancel = cmd->cancelled && cmd->cancelled(cmd->ud);
            if (timeout || cancel) {
                killed = timeout ? K_TIMEOUT : K_CANCEL;
                pthread_mutex_lock(&s->lock);
                send_msg(s, SL_OP_KILL, id, 0, NULL, 0, NULL, 0);
                pthread_mutex_unlock(&s->lock);
            }
        }
    }
    close(out[0]);
    close(errp[0]);
    close(st[0]);
    if (in[1] >= 0)
        close(in[1]);
    if (!have_status)
        return sl_err_set(err, SL_EIO, "sandbox exec: lost contact with the sandbox (its init process ended); the run's sandbox cannot be used any more");
    if (status.error && !WIFEXITED(status.status) && !WIFSIGNALED(status.status))
        return sl_err_set(err, SL_EIO, "sandbox exec: could not start the command: %s",
                          strerror(status.error));
    if (status.error == EAGAIN && status.status == 0)
        return sl_err_set(err, SL_ELIMIT, "sandbox exec: too many commands running at once");
    sl_cgroup_events ev1;
    sl_cgroup_events_read(s->cg, &ev1);
    exec_end(&s->o, &status, killed, &ev0, &ev1, res);
    return 0;
}

static int local_exec(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                      sl_err *err)
{
    local_sb *s = (local_sb *)sb;
    exec_call x;
    if (exec_send(s, cmd, &x, err))
        return -1;
    return exec_collect(s, cmd, &x, res, err);
}

int sl_local_create(const sl_sandbox_opts *o, sl_sandbox **out, sl_err *err)
{
    return create(o, NULL, NULL, out, err);
}

int sl_local_run(const sl_sandbox_opts *o, const sl_sandbox_cmd *cmd, sl_sandbox_result *res,
                 sl_err *err)
{
    sl_sandbox *sb;
    exec_call x;
    sl_sandbox_cmd last = *cmd;
    last.last = true;
    if (create(o, &last, &x, &sb, err))
        return -1;
    int rc = exec_collect((local_sb *)sb, &last, &x, res, err);
    sl_sandbox_destroy(sb);
    return rc;
}

static void local_kill(sl_sandbox *sb)
{
    local_sb *s = (local_sb *)sb;
    pthread_mutex_lock(&s->lock);
    send_msg(s, SL_OP_KILLALL, 0, 0, NULL, 0, NULL, 0);
    pthread_mutex_unlock(&s->lock);
}

/* ---- files ---- */

/* Asks init to open a sandbox path; init is confined to the sandbox's
 * view, so symlinks a command planted cannot reach host files. */
static int open_remote(local_sb *s, const char *path, int mode, sl_err *err)
{
    size_t n = strlen(path);
    if (!n || n >= 4096)
        return sl_err_set(err, SL_EINVAL, "sandbox: bad path '%s'", path);
    pthread_mutex_lock(&s->lock);
    uint32_t id = atomic_fetch_add(&s->next_id, 1) + 1;
    int fd = -1;
    sl_sb_hdr h = {0};
    char text[64];
    int rc = send_msg(s, SL_OP_OPEN, id, mode, path, n + 1, NULL, 0);
    if (!rc)
        rc = recv_msg(s->ctl, &h, text, sizeof text, &fd) < 0 ? -1 : 0;
    pthread_mutex_unlock(&s->lock);
    if (rc)
        return sl_err_set(err, SL_EIO, "sandbox: the sandbox is gone (its init process ended); the run's sandbox cannot be used any more");
    if (h.arg || fd < 0) {
        if (fd >= 0)
            close(fd);
        return sl_err_set(err, SL_EIO, "sandbox: %s: %s", path, strerror(h.arg ? h.arg : EIO));
    }
    return fd;
}

static int local_upload(sl_sandbox *sb, const char *path, const void *data, size_t len,
                        sl_err *err)
{
    local_sb *s = (local_sb *)sb;
    int fd = open_remote(s, path, SL_OPEN_WRITE, err);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            close(fd);
            if (e == ENOSPC) {
                char size[32];
                sl_size_text(s->o.disk_bytes, size, sizeof size);
                return sl_err_set(err, SL_ELIMIT,
                                  "sandbox: writing %s: the sandbox's disk is full (limit %s)",
                                  path, size);
            }
            return sl_err_set(err, SL_EIO, "sandbox: writing %s: %s", path, strerror(e));
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}

static int local_download(sl_sandbox *sb, const char *path, size_t max, sl_buf *out, sl_err *err)
{
    local_sb *s = (local_sb *)sb;
    int fd = open_remote(s, path, SL_OPEN_READ, err);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) || (max && (uint64_t)st.st_size > max)) {
        close(fd);
        return sl_err_set(err, SL_ELIMIT, "sandbox: %s is %lld bytes, over the limit of %zu",
                          path, (long long)st.st_size, max);
    }
    char buf[65536];
    size_t total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return sl_err_set(err, SL_EIO, "sandbox: reading %s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        total += (size_t)n;
        if (max && total > max) {
            close(fd);
            return sl_err_set(err, SL_ELIMIT, "sandbox: %s grew past the limit of %zu bytes",
                              path, max);
        }
        sl_buf_add(out, buf, (size_t)n);
    }
    close(fd);
    return 0;
}

static int local_list(sl_sandbox *sb, const char *dir, size_t limit, sl_value **out, sl_err *err)
{
    local_sb *s = (local_sb *)sb;
    int fd = open_remote(s, dir, SL_OPEN_DIR, err);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return sl_err_set(err, SL_EIO, "sandbox: listing %s: %s", dir, strerror(errno));
    }
    size_t n = 0, cap = 16;
    sl_value **items = sl_xmalloc(sizeof *items * cap);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        /* never follow: a link is reported as a link */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
            continue;
        const char *type = S_ISREG(st.st_mode)   ? "file"
                           : S_ISDIR(st.st_mode) ? "dir"
                           : S_ISLNK(st.st_mode) ? "link"
                                                 : "other";
        if (n == cap)
            items = sl_xrealloc(items, sizeof *items * (cap *= 2));
        items[n++] = json_pack("{s:s, s:s, s:I}", "name", e->d_name, "type", type, "size",
                               (json_int_t)st.st_size);
    }
    closedir(d);
    *out = sl_sandbox_list_done(items, n, limit);
    return 0;
}

/* ---- spawned processes ----
 *
 * A spawned process is an EXEC like any other (init neither knows nor
 * cares): the host keeps its stdin's write end and its stdout's read end
 * for the caller instead of pumping them.  One thread per process reads
 * its stderr into a ring (so a chatty server never stalls on a full pipe)
 * and waits for its status; on cgroup v1 it also watches the socket
 * buffers every 10 ms as exec does, else it sleeps in poll until something
 * happens.  A process may outlive its sandbox: destroy detaches it (sets
 * p->sb to NULL under procs_mu, which also guards every use of p->sb), init
 * ends, its status pipe reports EOF, and the process counts as killed.
 */
#define PROC_ERR_CAP 65536

typedef struct local_proc {
    sl_sandbox_proc base;
    struct local_proc *next;      /* in sb->procs; procs_mu */
    local_sb *sb;                 /* NULL once detached; procs_mu */
    uint32_t id;
    int err_fd, st_fd, wake_fd;   /* stderr, status, proc_free's eventfd */
    pthread_t thread;
    sl_sandbox_opts o;            /* the sandbox's limits, for the words of res */
    sl_cgroup_events ev0;
    double t0;
    bool watch_sockets;
    pthread_mutex_t mu;           /* guards what follows */
    pthread_cond_t cv;            /* ended */
    bool ended;
    sl_sandbox_result res;        /* once ended; its streams stay empty */
    char ring[PROC_ERR_CAP];      /* stderr, the newest PROC_ERR_CAP bytes */
    size_t ring_len, ring_at;     /* bytes held; where the next one goes */
    char text[PROC_ERR_CAP + 1];  /* proc_stderr's answer */
} local_proc;

static pthread_mutex_t procs_mu = PTHREAD_MUTEX_INITIALIZER;
static const sl_sandbox_proc_ops local_proc_ops;

static void ring_add(local_proc *p, const char *d, size_t n)
{
    if (n > PROC_ERR_CAP) {
        d += n - PROC_ERR_CAP;
        n = PROC_ERR_CAP;
    }
    while (n) {
        size_t k = PROC_ERR_CAP - p->ring_at;
        if (k > n)
            k = n;
        memcpy(p->ring + p->ring_at, d, k);
        p->ring_at = (p->ring_at + k) % PROC_ERR_CAP;
        p->ring_len = p->ring_len + k > PROC_ERR_CAP ? PROC_ERR_CAP : p->ring_len + k;
        d += k;
        n -= k;
    }
}

/* The process ended (status) or init did (!status: the sandbox was
 * destroyed or broke); says how, for proc_wait.  (A command init could
 * not start never gets here: local_spawn sees that and fails.) */
static void proc_ended(local_proc *p, const sl_exec_status *status, int killed)
{
    sl_exec_status st = {SIGKILL, EPIPE, 0};  /* init gone: killed with its namespace */
    if (status)
        st = *status;
    sl_cgroup_events ev1 = p->ev0;
    pthread_mutex_lock(&procs_mu);
    if (p->sb)
        sl_cgroup_events_read(p->sb->cg, &ev1);
    pthread_mutex_unlock(&procs_mu);
    sl_sandbox_result r;
    sl_sandbox_result_init(&r);
    r.seconds = sl_clock_s() - p->t0;
    exec_end(&p->o, &st, killed, &p->ev0, &ev1, &r);
    pthread_mutex_lock(&p->mu);
    p->res = r;
    p->ended = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Once the socket buffers pass half the memory limit, everything in the
 * sandbox is killed, as exec does (cgroup.h); true when it was. */
static bool proc_watch(local_proc *p)
{
    bool over = false;
    pthread_mutex_lock(&procs_mu);
    local_sb *s = p->sb;
    if (s && sl_cgroup_v1_socket_usage(s->cg) > s->o.memory_bytes / 2) {
        over = true;
        pthread_mutex_lock(&s->lock);
        send_msg(s, SL_OP_KILLALL, 0, 0, NULL, 0, NULL, 0);
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&procs_mu);
    return over;
}

static void *proc_main(void *arg)
{
    local_proc *p = arg;
    bool err_eof = false, have_status = p->ended;  /* local_spawn may have seen it end */
    int killed = K_NONE;
    double next_watch = 0;
    char chunk[16384];
    while (!(have_status && err_eof)) {
        struct pollfd pf[3] = {{p->wake_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0},
                               {p->st_fd, POLLIN, 0}};
        if (err_eof)
            pf[1].fd = -1;
        if (have_status)
            pf[2].fd = -1;
        bool watch = p->watch_sockets && !have_status && !killed;
        int r = poll(pf, 3, watch ? 10 : -1);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && pf[0].revents)
            break;  /* proc_free: the process is gone or given up on */
        if (r > 0 && pf[1].revents) {
            ssize_t n = read(p->err_fd, chunk, sizeof chunk);
            if (n > 0) {
                pthread_mutex_lock(&p->mu);
                ring_add(p, chunk, (size_t)n);
                pthread_mutex_unlock(&p->mu);
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                err_eof = true;
            }
        }
        if (r > 0 && pf[2].revents) {
            sl_exec_status st;
            ssize_t n = read(p->st_fd, &st, sizeof st);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            have_status = true;
            proc_ended(p, n == (ssize_t)sizeof st ? &st : NULL, killed);
        }
        if (watch && sl_clock_s() >= next_watch) {
            next_watch = sl_clock_s() + 0.01;
            if (proc_watch(p))
                killed = K_SOCKETS;
        }
    }
    if (!have_status)
        proc_ended(p, NULL, killed);
    return NULL;
}

static bool proc_wait(sl_sandbox_proc *bp, double timeout_s, sl_sandbox_result *res)
{
    local_proc *p = (local_proc *)bp;
    pthread_mutex_lock(&p->mu);
    if (!p->ended && timeout_s != 0) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        if (timeout_s > 0) {
            double whole = (double)(time_t)timeout_s;
            until.tv_sec += (time_t)timeout_s;
            until.tv_nsec += (long)((timeout_s - whole) * 1e9);
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
        }
        while (!p->ended) {
            if (timeout_s < 0)
                pthread_cond_wait(&p->cv, &p->mu);
            else if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT)
                break;
        }
    }
    bool ended = p->ended;
    if (ended && res) {
        res->kind = p->res.kind;
        res->code = p->res.code;
        res->sig = p->res.sig;
        res->hit = p->res.hit;
        memcpy(res->limit, p->res.limit, sizeof res->limit);
        res->touched = p->res.touched;
        memcpy(res->note, p->res.note, sizeof res->note);
        res->seconds = p->res.seconds;
    }
    pthread_mutex_unlock(&p->mu);
    return ended;
}

static const char *proc_stderr(sl_sandbox_proc *bp)
{
    local_proc *p = (local_proc *)bp;
    pthread_mutex_lock(&p->mu);
    size_t start = (p->ring_at + PROC_ERR_CAP - p->ring_len) % PROC_ERR_CAP;
    size_t first = PROC_ERR_CAP - start < p->ring_len ? PROC_ERR_CAP - start : p->ring_len;
    memcpy(p->text, p->ring + start, first);
    memcpy(p->text + first, p->ring, p->ring_len - first);
    p->text[p->ring_len] = 0;
    pthread_mutex_unlock(&p->mu);
    return p->text;
}

/* Takes p out of its sandbox's list; procs_mu held. */
static void proc_detach(local_proc *p)
{
    if (!p->sb)
        return;
    for (local_proc **at = &p->sb->procs; *at; at = &(*at)->next)
        if (*at == p) {
            *at = p->next;
            break;
        }
    p->sb = NULL;
    p->next = NULL;
}

static void proc_free(sl_sandbox_proc *bp)
{
    local_proc *p = (local_proc *)bp;
    pthread_mutex_lock(&procs_mu);
    local_sb *s = p->sb;
    if (s) {
        /* init kills its process group too, and reaps it */
        pthread_mutex_lock(&s->lock);
        send_msg(s, SL_OP_KILL, p->id, 0, NULL, 0, NULL, 0);
        pthread_mutex_unlock(&s->lock);
        proc_detach(p);
    }
    pthread_mutex_unlock(&procs_mu);
    /* init reaps it at once; 10 s is for an init that is wedged, after
     * which the thread is told to stop waiting for it */
    proc_wait(bp, 10, NULL);
    uint64_t one = 1;
    if (write(p->wake_fd, &one, sizeof one) < 0) {
        /* an eventfd's counter cannot overflow here */
    }
    pthread_join(p->thread, NULL);
    close(p->err_fd);
    close(p->st_fd);
    close(p->wake_fd);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static int local_spawn(sl_sandbox *sb, const sl_sandbox_cmd *cmd, sl_sandbox_proc **out,
                       int *in_fd, int *out_fd, sl_err *err)
{
    local_sb *s = (local_sb *)sb;
    sl_buf msg;
    if (exec_msg(s, cmd, true, "spawn", &msg, err))
        return -1;
    int in[2] = {-1, -1}, op[2] = {-1, -1}, ep[2] = {-1, -1}, st[2] = {-1, -1};
    int wake = -1;
    if (pipe2(in, O_CLOEXEC) || pipe2(op, O_CLOEXEC) || pipe2(ep, O_CLOEXEC) ||
        pipe2(st, O_CLOEXEC) || (wake = eventfd(0, EFD_CLOEXEC)) < 0) {
        sl_err_set(err, SL_EIO, "sandbox spawn: pipe: %s", strerror(errno));
        sl_buf_release(&msg);
        int all[] = {in[0], in[1], op[0], op[1], ep[0], ep[1], st[0], st[1]};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            if (all[i] >= 0)
                close(all[i]);
        return -1;
    }
    local_proc *p = sl_xcalloc(1, sizeof *p);
    p->base.ops = &local_proc_ops;
    p->id = atomic_fetch_add(&s->next_id, 1) + 1;
    p->err_fd = ep[0];
    p->st_fd = st[0];
    p->wake_fd = wake;
    p->o = s->o;
    p->watch_sockets = s->cg && s->o.memory_bytes && !strcmp(sl_cgroup_kind(s->cg), "cgroup v1");
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    sl_cgroup_events_read(s->cg, &p->ev0);
    pthread_mutex_lock(&procs_mu);
    p->sb = s;
    p->next = s->procs;
    s->procs = p;
    pthread_mutex_unlock(&procs_mu);

    p->t0 = sl_clock_s();
    int fds[4] = {op[1], ep[1], st[1], in[0]};
    pthread_mutex_lock(&s->lock);
    int sent = send_msg(s, SL_OP_EXEC, p->id, 0, msg.data, msg.len, fds, 4);
    int e = errno;
    pthread_mutex_unlock(&s->lock);
    sl_buf_release(&msg);
    close(op[1]);  /* the process holds these now */
    close(ep[1]);
    close(st[1]);
    close(in[0]);
    /* init handles messages in order: once it has answered an OPEN, it has
     * started the command, or written on the status pipe why it could not. */
    int fd = -1;
    if (sent)
        sl_err_set(err, SL_EIO, "sandbox spawn: the sandbox is gone (%s)", strerror(e));
    else
        fd = open_remote(s, "/", SL_OPEN_DIR, err);
    if (fd >= 0)
        close(fd);
    sl_exec_status status;
    struct pollfd pf = {st[0], POLLIN, 0};
    bool have_status = fd >= 0 && poll(&pf, 1, 0) == 1 &&
                       read(st[0], &status, sizeof status) == (ssize_t)sizeof status;
    bool ok = fd >= 0;
    if (have_status && status.error && status.status == 0) {
        if (status.error == EAGAIN)
            sl_err_set(err, SL_ELIMIT,
                       "sandbox spawn: too many processes or commands in the sandbox to start "
                       "another");
        else
            sl_err_set(err, SL_EIO, "sandbox spawn: could not start the command: %s",
                       strerror(status.error));
        ok = false;
    } else if (have_status) {
        proc_ended(p, &status, K_NONE);  /* it has already exited; proc_main knows */
    }
    int rc = ok ? pthread_create(&p->thread, NULL, proc_main, p) : 0;
    if (rc) {
        /* nothing would watch it: kill it and wait until init has reaped it */
        pthread_mutex_lock(&s->lock);
        send_msg(s, SL_OP_KILL, p->id, 0, NULL, 0, NULL, 0);
        pthread_mutex_unlock(&s->lock);
        while (!have_status && read(st[0], &status, sizeof status) < 0 && errno == EINTR) {
        }
        sl_err_set(err, SL_EIO, "sandbox spawn: cannot start a thread: %s", strerror(rc));
        ok = false;
    }
    if (!ok) {
        pthread_mutex_lock(&procs_mu);
        proc_detach(p);
        pthread_mutex_unlock(&procs_mu);
        int all[] = {in[1], op[0], ep[0], st[0], wake};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            close(all[i]);
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return -1;
    }
    *out = &p->base;
    *in_fd = in[1];
    *out_fd = op[0];
    return 0;
}

static const sl_sandbox_proc_ops local_proc_ops = {
    .wait = proc_wait,
    .stderr_text = proc_stderr,
    .free = proc_free,
};

/* ---- teardown ----
 *
 * Killing a sandbox is immediate: closing the control socket ends init,
 * SIGKILL makes sure, and the kernel then kills everything in its pid
 * namespace.  Waiting for the pid namespace to empty and removing the
 * cgroup take about a millisecond more, which no caller needs to wait
 * for, so a reaper thread does it.  sl_local_reap_all() (registered with
 * atexit) waits for it, so a process never exits with groups left over.
 */
typedef struct reap {
    struct reap *next;
    int netns;
    int kept_lock;   /* the kept network namespace's slot: free once init is gone */
    pid_t init;
    sl_cgroup *cg;
    sl_proxy *proxy;
} reap;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv, idle;
    reap *head;
    bool started, busy;
} reaper = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
            NULL, false, false};

static atomic_bool reap_in_place;

/* keep: pool the empty cgroup and network namespace for the next sandbox
 * (their drain at exit comes with the reaper thread's atexit). */
static void reap_one(reap *r, bool keep)
{
    if (r->init > 0)
        while (waitpid(r->init, NULL, __WALL) < 0 && errno == EINTR) {
        }
    if (r->proxy)
        sl_proxy_stop(r->proxy);  /* its listening socket lived in r->netns */
    if (r->kept_lock >= 0)
        close(r->kept_lock);
    if (keep) {
        sl_cgroup_release(r->cg);
        netns_give(r->netns);
    } else {
        sl_cgroup_destroy(r->cg);  /* init reaped: its pid namespace is empty */
        if (r->netns >= 0)
            close(r->netns);
    }
    free(r);
}

static void *reaper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&reaper.mu);
    for (;;) {
        while (!reaper.head)
            pthread_cond_wait(&reaper.cv, &reaper.mu);
        reap *r = reaper.head;
        reaper.head = r->next;
        reaper.busy = true;
        pthread_mutex_unlock(&reaper.mu);
        reap_one(r, true);
        pthread_mutex_lock(&reaper.mu);
        reaper.busy = false;
        if (!reaper.head)
            pthread_cond_broadcast(&reaper.idle);
    }
    return NULL;
}

void sl_local_reap_all(void)
{
    pthread_mutex_lock(&reaper.mu);
    while (reaper.head || reaper.busy)
        pthread_cond_wait(&reaper.idle, &reaper.mu);
    pthread_mutex_unlock(&reaper.mu);
    sl_cgroup_pool_drain();
    netns_drain();
}

void sl_local_reap_in_place(void)
{
    atomic_store(&reap_in_place, true);
}

static void local_destroy(sl_sandbox *sb)
{
    local_sb *s = (local_sb *)sb;
    /* live spawned processes die with init below; their threads see the
     * status pipe close and must not touch s from now on */
    pthread_mutex_lock(&procs_mu);
    while (s->procs)
        proc_detach(s->procs);
    pthread_mutex_unlock(&procs_mu);
    if (s->ctl >= 0)
        close(s->ctl);  /* init exits; the kernel kills its whole pid namespace */
    if (s->init > 0)
        kill(s->init, SIGKILL);
    reap *r = sl_xcalloc(1, sizeof *r);
    r->init = s->init;
    r->netns = s->netns;
    r->kept_lock = s->kept_lock;
    r->cg = s->cg;
    r->proxy = s->proxy;
    pthread_mutex_destroy(&s->lock);
    free(s);
    if (atomic_load(&reap_in_place)) {
        reap_one(r, false);
        return;
    }
    pthread_mutex_lock(&reaper.mu);
    if (!reaper.started) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &a, reaper_main, NULL) == 0) {
            reaper.started = true;
            atexit(sl_local_reap_all);
        }
        pthread_attr_destroy(&a);
    }
    if (!reaper.started) {  /* no thread: do it here (no atexit drains a pool) */
        pthread_mutex_unlock(&reaper.mu);
        reap_one(r, false);
        return;
    }
    r->next = reaper.head;
    reaper.head = r;
    pthread_cond_signal(&reaper.cv);
    pthread_mutex_unlock(&reaper.mu);
}

int sl_local_clean(sl_buf *out, sl_err *err)
{
    if (sl_kept_clean(out, err))
        return -1;
    int groups = sl_cgroup_clean_kept();
    sl_buf_addf(out, "removed %d kept cgroups\n", groups);
    return 0;
}

const char *sl_local_notes(const sl_sandbox *sb)
{
    return ((const local_sb *)sb)->notes;
}

void sl_local_describe(sl_buf *out)
{
    sl_err err = {0};
    sl_buf_addf(out, "user: %s (uid %ld)\n", geteuid() == 0 ? "root" : "unprivileged",
                (long)geteuid());
    sl_buf_addf(out, "seccomp: filter built in (%u instructions)\n", sl_seccomp_program()->len);
    sl_buf_addf(out, "kept roots and network namespaces: %s\n", sl_kept_note());
    sl_cgroup *cg = NULL;
    sl_cgroup_limits l = {64 << 20, 64, 0};
    if (sl_cgroup_create(&l, &cg, &err)) {
        sl_buf_addf(out, "cgroups: unavailable (%s)\n", err.msg);
        sl_buf_addf(out, "memory limit: CANNOT be enforced here, so sandboxes that ask for "
                         "one are refused (the default 1 GiB included). Run sluice as root or "
                         "in a delegated cgroup (systemd-run --user --scope -p Delegate=yes "
                         "sluice ...), or set sandbox_memory_bytes=0 (--mem none) to run "
                         "without one\n");
        sl_buf_adds(out, "processes: RLIMIT_NPROC, counted per sandbox; CPU bandwidth: not "
                         "capped\n");
        sl_err_clear(&err);
    } else {
        if (!strcmp(sl_cgroup_kind(cg), "cgroup v1"))
            sl_buf_adds(out, "memory limit: cgroup v1 memory.limit_in_bytes (kernel memory "
                             "included); socket buffers apart, a quarter of the limit more "
                             "(memory.kmem.tcp.limit_in_bytes), and sluice ends the "
                             "sandbox's processes when they pass half\n");
        else
            sl_buf_adds(out, "memory limit: cgroup v2 memory.max (kernel memory and socket "
                             "buffers included)\n");
        sl_buf_addf(out, "cgroups: %s (memory, pids, cpu)\n", sl_cgroup_kind(cg));
        sl_cgroup_destroy(cg);
    }
}

static const sl_sandbox_ops local_ops = {
    .name = "local",
    .exec = local_exec,
    .kill = local_kill,
    .upload = local_upload,
    .download = local_download,
    .list = local_list,
    .destroy = local_destroy,
    .spawn = local_spawn,
};
