/*
 * seccomp — see seccomp.h.  The denied calls, grouped by why:
 *
 *   - mount table and root changes: mount, umount2, pivot_root, chroot,
 *     move_mount, open_tree, fsopen/fsconfig/fsmount/fspick, mount_setattr;
 *   - namespaces: unshare, setns, and clone/clone3 asking for new
 *     namespaces (clone3 passes its flags in memory a filter cannot read,
 *     so clone3 answers ENOSYS and libc falls back to clone);
 *   - other processes: ptrace, process_vm_readv/writev, kcmp, pidfd_getfd;
 *   - the kernel itself: kexec_*, init/finit/delete_module, bpf,
 *     perf_event_open, userfaultfd, io_uring_*, keyctl/add_key/request_key,
 *     reboot, swapon/off, syslog, acct, quotactl, clock and time setters,
 *     iopl/ioperm, lookup_dcookie, nfsservctl, uselib, personality changes;
 *   - file handles (the shocker escape): open_by_handle_at,
 *     name_to_handle_at;
 *   - terminals: ioctl TIOCSTI (typing into the parent's terminal) and
 *     TIOCLINUX;
 *   - device nodes: mknod/mknodat for anything but FIFOs and sockets;
 *   - netlink sockets, whose queues no memory cgroup is charged for.
 */
#include "sandbox/local/seccomp.h"

/* libseccomp's SCMP_A* macros leave struct fields to default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"

static struct sock_fprog program;
static char program_error[256];
static pthread_once_t program_once = PTHREAD_ONCE_INIT;

static const char *const denied[] = {
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key",
    "reboot", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
    "iopl", "ioperm", "lookup_dcookie", "nfsservctl", "uselib", "vhangup",
    "open_by_handle_at", "name_to_handle_at",
    "fanotify_init", "mbind", "migrate_pages", "move_pages", "set_mempolicy",
    "get_kernel_syms", "query_module", "create_module", "vm86", "vm86old",
    "sysfs", "_sysctl", "ustat",
};


/* Each namespace flag gets its own rule "flag set -> EPERM". */
static int clone_rules(scmp_filter_ctx ctx)
{
    static const unsigned long flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,
                                          CLONE_NEWNET,  CLONE_NEWIPC, CLONE_NEWUTS,
                                          CLONE_NEWCGROUP, CLONE_NEWTIME};
    int rc;
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                   SCMP_A0(SCMP_CMP_MASKED_EQ, flags[i], flags[i]))) < 0)
            return rc;
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
        return rc;
    /* Terminal injection: the request number is an int, so only the low
     * 32 bits count. */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI))) < 0)
        return rc;
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX))) < 0)
        return rc;
    /* Device nodes: block and character devices only. */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknod), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFCHR))) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknod), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFBLK))) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknodat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFCHR))) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknodat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFBLK))) < 0)
        return rc;
    /* Netlink sockets: the kernel queues answers up to a socket's receive
     * buffer (up to 2 x net.core.rmem_max) without charging any memory
     * cgroup, so a thousand sockets hold gigabytes past the sandbox's
     * memory limit.  Nothing in a sandbox needs them: glibc's getaddrinfo
     * then assumes IPv4 and IPv6, and the interfaces are in /proc/net/dev. */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                               SCMP_A0(SCMP_CMP_EQ, AF_NETLINK))) < 0)
        return rc;
    /* vsock ignores network namespaces: a --net none sandbox could reach
     * services of this VM's host through it. */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                               SCMP_A0(SCMP_CMP_EQ, AF_VSOCK))) < 0)
        return rc;
    /* personality: only the plain Linux personality (and the query). */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
                               SCMP_A0(SCMP_CMP_NE, 0xffffffffu))) < 0)
        return rc;
    return 0;
}

static void compile_once(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc, fd = -1;
    if (!ctx) {
        snprintf(program_error, sizeof program_error, "libseccomp could not start a filter");
        return;
    }
    /* Foreign ABIs (int 0x80, x32) would bypass a native-only filter. */
    if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
        (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
        goto fail;
    for (size_t i = 0; i < sizeof denied / sizeof *denied; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr == __NR_SCMP_ERROR || nr < 0)
            continue;
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0)
            goto fail;
    }
    if ((rc = clone_rules(ctx)) < 0)
        goto fail;
    /* libseccomp 2.5 exports only to a file descriptor. */
    fd = memfd_create("sluice-seccomp", MFD_CLOEXEC);
    if (fd < 0 || (rc = seccomp_export_bpf(ctx, fd)) < 0)
        goto fail;
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0 || size % (off_t)sizeof(struct sock_filter))
        goto fail;
    struct sock_filter *f = sl_xmalloc((size_t)size);
    if (pread(fd, f, (size_t)size, 0) != size) {
        free(f);
        goto fail;
    }
    program.len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    program.filter = f;
    close(fd);
    seccomp_release(ctx);
    return;
fail:
    snprintf(program_error, sizeof program_error, "could not compile the seccomp filter: %s",
             strerror(rc < 0 ? -rc : errno));
    if (fd >= 0)
        close(fd);
    seccomp_release(ctx);
}

const struct sock_fprog *sl_seccomp_program(sl_err *err)
{
    pthread_once(&program_once, compile_once);
    if (!program.filter) {
        sl_err_set(err, SL_EUNSUPPORTED, "%s", program_error);
        return NULL;
    }
    return &program;
}
