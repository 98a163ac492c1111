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
 *
 * The program is written here as classic BPF, not compiled by libseccomp:
 * a deny list over the native ABI is a few dozen comparisons, and building
 * it costs nothing, where libseccomp cost every sandboxing process a
 * library load and a compilation through a memfd.  The shape is the one
 * libseccomp produced: check the architecture (a foreign ABI kills the
 * process), then each denied number in turn, then allow.  Arguments that
 * the kernel reads as an int (ioctl's request, mknod's mode, socket's
 * family) are compared on their low 32 bits only, as the kernel sees them.
 */
#include "sandbox/local/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/err.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "the sandbox's seccomp filter knows x86_64 and aarch64; add this architecture's AUDIT_ARCH"
#endif

/* Offsets into struct seccomp_data of an argument's two 32-bit halves. */
#define ARG_OFF(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) ARG_OFF(i)
#define ARG_HI(i) (ARG_OFF(i) + 4)
#else
#define ARG_LO(i) (ARG_OFF(i) + 4)
#define ARG_HI(i) ARG_OFF(i)
#endif

static const int denied[] = {
    __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_move_mount, __NR_open_tree,
    __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_mount_setattr,
    __NR_unshare, __NR_setns,
    __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_kcmp, __NR_pidfd_getfd,
    __NR_kexec_load, __NR_kexec_file_load, __NR_init_module, __NR_finit_module,
    __NR_delete_module, __NR_bpf, __NR_perf_event_open, __NR_userfaultfd,
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
    __NR_keyctl, __NR_add_key, __NR_request_key,
    __NR_reboot, __NR_swapon, __NR_swapoff, __NR_syslog, __NR_acct, __NR_quotactl,
    __NR_quotactl_fd, __NR_settimeofday, __NR_clock_settime, __NR_clock_adjtime,
    __NR_adjtimex, __NR_lookup_dcookie, __NR_nfsservctl, __NR_vhangup,
    __NR_open_by_handle_at, __NR_name_to_handle_at,
    __NR_fanotify_init, __NR_mbind, __NR_migrate_pages, __NR_move_pages, __NR_set_mempolicy,
#ifdef __x86_64__
    /* legacy calls only x86_64 still has (umount, stime and vm86 it never had) */
    __NR_iopl, __NR_ioperm, __NR_uselib, __NR_get_kernel_syms, __NR_query_module,
    __NR_create_module, __NR_sysfs, __NR__sysctl, __NR_ustat,
#endif
};

/* Room for the fixed part, two instructions per denied call and the
 * argument checks; sl_seccomp_program checks it is not overrun. */
#define MAX_INSNS 256

static struct sock_filter insns[MAX_INSNS];
static struct sock_fprog program;
static pthread_once_t program_once = PTHREAD_ONCE_INIT;

typedef struct {
    struct sock_filter *f;
    unsigned n;
} prog;

static void emit(prog *p, struct sock_filter s)
{
    if (p->n < MAX_INSNS)
        p->f[p->n] = s;
    p->n++;
}

#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

static void load_nr(prog *p)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                         offsetof(struct seccomp_data, nr)));
}

/* if nr == n: ret action */
static void deny_nr(prog *p, int nr, unsigned action)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
}

/* if nr == n && (low 32 bits of arg i & mask) == want: ret EPERM.
 * Leaves A holding the syscall number again. */
static void deny_arg_lo(prog *p, int nr, unsigned i, unsigned mask, unsigned want)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 5));
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(i)));
    emit(p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, mask));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, want, 0, 1));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)));
    load_nr(p);
}

static void build(prog *p)
{
    /* A foreign ABI (int 0x80 on x86_64, AArch32) would bypass a filter
     * written in native numbers: kill the process. */
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                         offsetof(struct seccomp_data, arch)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    load_nr(p);
#ifdef __x86_64__
    /* x32 shares x86_64's AUDIT_ARCH and marks its numbers with this bit. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    for (size_t i = 0; i < sizeof denied / sizeof *denied; i++)
        deny_nr(p, denied[i], ERRNO(EPERM));
    deny_nr(p, __NR_clone3, ERRNO(ENOSYS));
    /* clone asking for any new namespace (flags live in the low half) */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
                                         CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
                                             CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                                             CLONE_NEWCGROUP | CLONE_NEWTIME,
                                         0, 1));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)));
    load_nr(p);
    /* Terminal injection: the request number is an int. */
    deny_arg_lo(p, __NR_ioctl, 1, 0xffffffffu, TIOCSTI);
    deny_arg_lo(p, __NR_ioctl, 1, 0xffffffffu, TIOCLINUX);
    /* Device nodes: block and character devices only. */
#ifdef __NR_mknod
    deny_arg_lo(p, __NR_mknod, 1, S_IFMT, S_IFCHR);
    deny_arg_lo(p, __NR_mknod, 1, S_IFMT, S_IFBLK);
#endif
    deny_arg_lo(p, __NR_mknodat, 2, S_IFMT, S_IFCHR);
    deny_arg_lo(p, __NR_mknodat, 2, S_IFMT, S_IFBLK);
    /* Netlink sockets: the kernel queues answers up to a socket's receive
     * buffer (up to 2 x net.core.rmem_max) without charging any memory
     * cgroup, so a thousand sockets hold gigabytes past the sandbox's
     * memory limit.  Nothing in a sandbox needs them: glibc's getaddrinfo
     * then assumes IPv4 and IPv6, and the interfaces are in /proc/net/dev. */
    deny_arg_lo(p, __NR_socket, 0, 0xffffffffu, AF_NETLINK);
    /* vsock ignores network namespaces: a --net none sandbox could reach
     * services of this VM's host through it. */
    deny_arg_lo(p, __NR_socket, 0, 0xffffffffu, AF_VSOCK);
    /* personality: only the query (0xffffffff, all 64 bits as libc passes
     * it); setting any persona fails. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 0, 5));
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2));
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ERRNO(EPERM)));
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

static void build_once(void)
{
    prog p = {insns, 0};
    build(&p);
    if (p.n > MAX_INSNS)
        SL_BUG("seccomp: the filter outgrew MAX_INSNS");
    program.len = (unsigned short)p.n;
    program.filter = insns;
}

const struct sock_fprog *sl_seccomp_program(void)
{
    pthread_once(&program_once, build_once);
    return &program;
}
