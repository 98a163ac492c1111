/*
 * sys — attack probes for tests/cli/sandbox_escape.sh, run inside a sluice
 * sandbox.  Each argument names one attack; each runs in a forked child
 * (so a probe that works, or kills its process, cannot disturb the next)
 * and prints one line:
 *
 *   NAME OK            the call succeeded (the attack was NOT stopped)
 *   NAME EPERM         the call failed with that errno
 *   NAME SIGSYS        the probe's process was killed by that signal
 *   NAME VALUE=...     probes that report a value (fds, uid)
 *
 * Built by the test with `cc -O0 -o sys sys.c`; calls the kernel through
 * syscall() so that libc wrappers cannot hide what the filter answers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
    switch (e) {
#define E(x) case x: return #x;
    E(EPERM) E(ENOENT) E(ESRCH) E(EINTR) E(EIO) E(ENXIO) E(E2BIG) E(ENOEXEC) E(EBADF)
    E(ECHILD) E(EAGAIN) E(ENOMEM) E(EACCES) E(EFAULT) E(EBUSY) E(EEXIST) E(EXDEV)
    E(ENODEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(ENFILE) E(EMFILE) E(ENOTTY) E(ETXTBSY)
    E(EFBIG) E(ENOSPC) E(ESPIPE) E(EROFS) E(EMLINK) E(EPIPE) E(ENOSYS) E(EOPNOTSUPP)
    E(ENOKEY) E(EAFNOSUPPORT) E(ENETUNREACH) E(ECONNREFUSED) E(EHOSTUNREACH)
    E(ELOOP) E(ENAMETOOLONG)
#undef E
    default: {
        static char buf[32];
        snprintf(buf, sizeof buf, "errno%d", e);
        return buf;
    }
    }
}

/* r < 0 (or the libc -1) means errno holds the answer */
static int report(const char *name, long r)
{
    if (r < 0)
        printf("%s %s\n", name, errname(errno));
    else
        printf("%s OK\n", name);
    fflush(stdout);
    return 0;
}

/* A child that waits to be killed: a target for process attacks. */
static pid_t sleeper(void)
{
    pid_t p = fork();
    if (p == 0) {
        for (;;)
            pause();
    }
    return p;
}

static void end_sleeper(pid_t p)
{
    if (p > 0) {
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
    }
}

static int probe(const char *n)
{
    long r;
    char buf[256];
    if (!strcmp(n, "mount"))
        return report(n, mount("none", "/tmp", "tmpfs", 0, NULL));
    if (!strcmp(n, "mount_bind"))
        return report(n, mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL));
    if (!strcmp(n, "remount_rw"))
        return report(n, mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
    if (!strcmp(n, "umount"))
        return report(n, umount2("/usr", MNT_DETACH));
    if (!strcmp(n, "pivot_root"))
        return report(n, syscall(SYS_pivot_root, "/tmp", "/tmp"));
    if (!strcmp(n, "chroot"))
        return report(n, chroot("/tmp"));
#ifdef SYS_open_tree
    if (!strcmp(n, "open_tree"))
        return report(n, syscall(SYS_open_tree, AT_FDCWD, "/usr", 1 /* OPEN_TREE_CLONE */));
#endif
#ifdef SYS_fsopen
    if (!strcmp(n, "fsopen"))
        return report(n, syscall(SYS_fsopen, "tmpfs", 0));
#endif
#ifdef SYS_move_mount
    if (!strcmp(n, "move_mount"))
        return report(n, syscall(SYS_move_mount, AT_FDCWD, "/tmp", AT_FDCWD, "/usr", 0));
#endif
#ifdef SYS_mount_setattr
    if (!strcmp(n, "mount_setattr")) {
        uint64_t attr[4] = {0, 0x1 /* clear MOUNT_ATTR_RDONLY */, 0, 0};
        return report(n, syscall(SYS_mount_setattr, AT_FDCWD, "/usr", 0, attr, sizeof attr));
    }
#endif
    if (!strcmp(n, "unshare_user"))
        return report(n, unshare(CLONE_NEWUSER));
    if (!strcmp(n, "unshare_mnt"))
        return report(n, unshare(CLONE_NEWNS));
    if (!strcmp(n, "unshare_net"))
        return report(n, unshare(CLONE_NEWNET));
    if (!strcmp(n, "setns")) {
        int fd = open("/proc/self/ns/user", O_RDONLY);
        if (fd < 0)
            return report("setns(open)", -1);
        return report(n, setns(fd, 0));
    }
    if (!strcmp(n, "clone_newuser") || !strcmp(n, "clone_newns") || !strcmp(n, "clone_newnet")) {
        unsigned long f = !strcmp(n, "clone_newuser") ? CLONE_NEWUSER
                          : !strcmp(n, "clone_newns") ? CLONE_NEWNS
                                                      : CLONE_NEWNET;
        r = syscall(SYS_clone, f | SIGCHLD, NULL, NULL, NULL, NULL);
        if (r == 0)
            _exit(0);
        if (r > 0)
            waitpid((pid_t)r, NULL, 0);
        return report(n, r);
    }
#ifdef SYS_clone3
    if (!strcmp(n, "clone3_newuser")) {
        uint64_t args[11];
        memset(args, 0, sizeof args);
        args[0] = CLONE_NEWUSER;   /* flags */
        args[4] = SIGCHLD;         /* exit_signal */
        r = syscall(SYS_clone3, args, 64);
        if (r == 0)
            _exit(0);
        if (r > 0)
            waitpid((pid_t)r, NULL, 0);
        return report(n, r);
    }
#endif
    if (!strcmp(n, "keyctl"))
        return report(n, syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, "sluice-x"));
    if (!strcmp(n, "add_key"))
        return report(n, syscall(SYS_add_key, "user", "sluice-k", "v", 1, -2 /* process */));
    if (!strcmp(n, "request_key"))
        return report(n, syscall(SYS_request_key, "user", "sluice-k", NULL, 0));
    if (!strcmp(n, "bpf")) {
        char attr[128];
        memset(attr, 0, sizeof attr);
        /* BPF_MAP_CREATE of an array map: allowed unprivileged where the
         * sysctl permits it */
        uint32_t *a = (uint32_t *)attr;
        a[0] = 2; /* BPF_MAP_TYPE_ARRAY */
        a[1] = 4;
        a[2] = 4;
        a[3] = 1;
        return report(n, syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, attr, sizeof attr));
    }
    if (!strcmp(n, "perf_event_open")) {
        struct perf_event_attr pa;
        memset(&pa, 0, sizeof pa);
        pa.type = PERF_TYPE_SOFTWARE;
        pa.size = sizeof pa;
        pa.config = PERF_COUNT_SW_TASK_CLOCK;
        pa.exclude_kernel = 1;
        pa.exclude_hv = 1;
        return report(n, syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0));
    }
#ifdef SYS_userfaultfd
    if (!strcmp(n, "userfaultfd"))
        return report(n, syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */));
#endif
#ifdef SYS_io_uring_setup
    if (!strcmp(n, "io_uring_setup")) {
        char params[120];
        memset(params, 0, sizeof params);
        return report(n, syscall(SYS_io_uring_setup, 4, params));
    }
#endif
    if (!strcmp(n, "name_to_handle_at")) {
        struct {
            unsigned int bytes;
            int type;
            unsigned char h[128];
        } fh = {128, 0, {0}};
        int mount_id;
        return report(n, syscall(SYS_name_to_handle_at, AT_FDCWD, "/usr", &fh, &mount_id, 0));
    }
    if (!strcmp(n, "open_by_handle_at")) {
        struct {
            unsigned int bytes;
            int type;
            unsigned char h[8];
        } fh = {8, 1, {2, 0, 0, 0, 0, 0, 0, 0}};  /* inode 2: a file system's root */
        return report(n, syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY));
    }
    if (!strcmp(n, "kexec_load"))
        return report(n, syscall(SYS_kexec_load, 0, 0, NULL, 0));
#ifdef SYS_kexec_file_load
    if (!strcmp(n, "kexec_file_load"))
        return report(n, syscall(SYS_kexec_file_load, -1, -1, 0, "", 2 /* NO_INITRAMFS */));
#endif
    if (!strcmp(n, "init_module"))
        return report(n, syscall(SYS_init_module, buf, 0, ""));
    if (!strcmp(n, "finit_module")) {
        int fd = open("/dev/null", O_RDONLY);
        return report(n, syscall(SYS_finit_module, fd, "", 0));
    }
    if (!strcmp(n, "delete_module"))
        return report(n, syscall(SYS_delete_module, "ext4", O_NONBLOCK));
    if (!strcmp(n, "ptrace_traceme"))
        return report(n, ptrace(PTRACE_TRACEME, 0, NULL, NULL));
    if (!strcmp(n, "ptrace_attach_init"))
        return report(n, ptrace(PTRACE_ATTACH, 1, NULL, NULL));
    if (!strcmp(n, "ptrace_attach_child") || !strcmp(n, "ptrace_seize_child")) {
        pid_t p = sleeper();
        r = ptrace(n[7] == 'a' ? PTRACE_ATTACH : PTRACE_SEIZE, p, NULL, NULL);
        int e = errno;
        end_sleeper(p);
        errno = e;
        return report(n, r);
    }
    if (!strcmp(n, "process_vm_readv")) {
        static char secret[16] = "secret";
        char into[16];
        pid_t p = sleeper();
        struct iovec l = {into, sizeof into}, rv = {secret, sizeof secret};
        r = syscall(SYS_process_vm_readv, p, &l, 1, &rv, 1, 0);
        int e = errno;
        end_sleeper(p);
        errno = e;
        return report(n, r);
    }
    if (!strcmp(n, "process_vm_writev")) {
        static char target[16];
        char from[16] = "x";
        pid_t p = sleeper();
        struct iovec l = {from, sizeof from}, rv = {target, sizeof target};
        r = syscall(SYS_process_vm_writev, p, &l, 1, &rv, 1, 0);
        int e = errno;
        end_sleeper(p);
        errno = e;
        return report(n, r);
    }
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    if (!strcmp(n, "pidfd_getfd")) {
        pid_t p = sleeper();
        int pfd = (int)syscall(SYS_pidfd_open, p, 0);
        if (pfd < 0) {
            int e = errno;
            end_sleeper(p);
            errno = e;
            return report("pidfd_getfd(pidfd_open)", -1);
        }
        r = syscall(SYS_pidfd_getfd, pfd, 1, 0);
        int e = errno;
        end_sleeper(p);
        errno = e;
        return report(n, r);
    }
#endif
    if (!strcmp(n, "kcmp"))
        return report(n, syscall(SYS_kcmp, getpid(), getppid(), 0 /* KCMP_FILE */, 0, 0));
    if (!strcmp(n, "tiocsti"))
        return report(n, ioctl(0, TIOCSTI, "x"));
    if (!strcmp(n, "tiocsti_hibits"))  /* the request is an int: high bits are ignored */
        return report(n, syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, "x"));
    if (!strcmp(n, "tioclinux")) {
        char sub = 2; /* TIOCL_SETSEL */
        return report(n, ioctl(0, TIOCLINUX, &sub));
    }
    if (!strcmp(n, "isatty0")) {
        printf("isatty0 %s\n", isatty(0) ? "yes" : "no");
        return 0;
    }
    if (!strcmp(n, "mknod_chr"))
        return report(n, mknod("/tmp/sluice-mem", S_IFCHR | 0666, makedev(1, 1)));
    if (!strcmp(n, "mknod_blk"))
        return report(n, mknodat(AT_FDCWD, "/tmp/sluice-blk", S_IFBLK | 0666, makedev(8, 0)));
    if (!strcmp(n, "mknod_fifo"))
        return report(n, mknod("/tmp/sluice-fifo", S_IFIFO | 0600, 0));
    if (!strcmp(n, "personality_linux32"))
        return report(n, personality(PER_LINUX32));
    if (!strcmp(n, "personality_rie"))
        return report(n, personality(READ_IMPLIES_EXEC));
    if (!strcmp(n, "personality_query"))
        return report(n, personality(0xffffffff));
    if (!strcmp(n, "reboot"))
        return report(n, syscall(SYS_reboot, 0xfee1dead, 672274793, 0 /* CAD_OFF */, NULL));
    if (!strcmp(n, "syslog"))
        return report(n, syscall(SYS_syslog, 3 /* READ_ALL */, buf, (int)sizeof buf));
#ifdef SYS_iopl
    if (!strcmp(n, "iopl"))
        return report(n, syscall(SYS_iopl, 3));
    if (!strcmp(n, "ioperm"))
        return report(n, syscall(SYS_ioperm, 0x60, 1, 1));
#endif
    if (!strcmp(n, "acct"))
        return report(n, syscall(SYS_acct, "/tmp/acct"));
    if (!strcmp(n, "swapon"))
        return report(n, syscall(SYS_swapon, "/tmp/swap", 0));
    if (!strcmp(n, "settimeofday")) {
        struct timespec ts = {0, 0};
        return report(n, syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
    }
    if (!strcmp(n, "fanotify_init"))
        return report(n, syscall(SYS_fanotify_init, 0, 0));
    if (!strcmp(n, "setuid0"))
        return report(n, setuid(0));
    if (!strcmp(n, "nnp_clear"))
        return report(n, prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0));
    if (!strcmp(n, "seccomp_disable"))
        return report(n, prctl(PR_SET_SECCOMP, 0 /* SECCOMP_MODE_DISABLED */, 0, 0, 0));
    if (!strcmp(n, "capset")) {
        uint32_t h[2] = {0x20080522 /* v3 */, 0};
        uint32_t d[6] = {~0u, ~0u, 0, ~0u, ~0u, 0};
        return report(n, syscall(SYS_capset, h, d));
    }
    if (!strcmp(n, "uid")) {
        printf("uid %d %d\n", (int)getuid(), (int)geteuid());
        return 0;
    }
#ifdef __x86_64__
    if (!strcmp(n, "int80")) {
        /* i386 getpid (20) through the 32-bit entry */
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
        errno = ret < 0 ? (int)-ret : 0;
        return report(n, ret < 0 ? -1 : ret);
    }
    if (!strcmp(n, "x32")) {
        /* x32 getpid: the native number with bit 30 */
        long ret;
        __asm__ volatile("syscall" : "=a"(ret) : "a"(0x40000000L | 39L) : "rcx", "r11", "memory");
        errno = ret < 0 ? (int)-ret : 0;
        return report(n, ret < 0 ? -1 : ret);
    }
#endif
    /* /proc attacks on init (pid 1, a clone of the host's sluice) */
    if (!strcmp(n, "proc1_exe_read"))
        return report(n, open("/proc/1/exe", O_RDONLY));
    if (!strcmp(n, "proc1_exe_write"))
        return report(n, open("/proc/1/exe", O_WRONLY));
    if (!strcmp(n, "proc1_exe_readlink"))
        return report(n, readlink("/proc/1/exe", buf, sizeof buf));
    if (!strcmp(n, "proc1_mem"))
        return report(n, open("/proc/1/mem", O_RDWR));
    if (!strcmp(n, "proc1_root"))
        return report(n, open("/proc/1/root/", O_RDONLY | O_DIRECTORY));
    if (!strcmp(n, "proc1_cwd"))
        return report(n, open("/proc/1/cwd/", O_RDONLY | O_DIRECTORY));
    if (!strcmp(n, "proc1_fd"))
        return report(n, open("/proc/1/fd/", O_RDONLY | O_DIRECTORY));
    if (!strcmp(n, "proc1_fd3"))
        return report(n, open("/proc/1/fd/3", O_RDWR));
    if (!strcmp(n, "proc1_environ"))
        return report(n, open("/proc/1/environ", O_RDONLY));
    if (!strcmp(n, "self_exe_write"))
        return report(n, open("/proc/self/exe", O_WRONLY));
    if (!strcmp(n, "self_exe_rdwr"))
        return report(n, open("/proc/self/exe", O_RDWR));
    if (!strcmp(n, "fds")) {
        /* descriptors this process got from sluice */
        DIR *d = opendir("/proc/self/fd");
        if (!d)
            return report(n, -1);
        int self = dirfd(d);
        struct dirent *e;
        int fds[64], k = 0;
        while ((e = readdir(d)) && k < 64)
            if (e->d_name[0] != '.' && atoi(e->d_name) != self)
                fds[k++] = atoi(e->d_name);
        closedir(d);
        for (int i = 1; i < k; i++)  /* sort */
            for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
                int t = fds[j];
                fds[j] = fds[j - 1];
                fds[j - 1] = t;
            }
        printf("fds ");
        for (int i = 0; i < k; i++)
            printf("%s%d", i ? "," : "", fds[i]);
        printf("\n");
        return 0;
    }
    printf("%s UNKNOWN\n", n);
    return 0;
}

static const char *signame(int s)
{
    switch (s) {
    case SIGSYS: return "SIGSYS";
    case SIGSEGV: return "SIGSEGV";
    case SIGKILL: return "SIGKILL";
    case SIGILL: return "SIGILL";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    default: {
        static char b[16];
        snprintf(b, sizeof b, "SIG%d", s);
        return b;
    }
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        fflush(stdout);
        pid_t p = fork();
        if (p < 0) {
            printf("%s fork-failed %s\n", argv[i], errname(errno));
            continue;
        }
        if (p == 0) {
            probe(argv[i]);
            fflush(stdout);
            _exit(0);
        }
        int st;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR) {
        }
        if (WIFSIGNALED(st))
            printf("%s %s\n", argv[i], signame(WTERMSIG(st)));
    }
    return 0;
}
