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
 *     host and domain names (init sets them before it loads the filter),
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
#include <stdlib.h>
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
    /* init names the host before it loads the filter; nothing inside may
     * (the calls fail without privilege anyway; denied here they join
     * their neighbours' range, a shorter filter) */
    __NR_sethostname, __NR_setdomainname,
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

/* Room for the fixed part, the search over the checked calls' numbers
 * and the argument checks; sl_seccomp_program checks it is not overrun
 * (classic BPF jumps reach at most 255 instructions ahead, so a longer
 * program would need another layout anyway). */
#define MAX_INSNS 256

static struct sock_filter insns[MAX_INSNS];
static struct sock_fprog program;
static pthread_once_t program_once = PTHREAD_ONCE_INIT;

/* Jump targets are labels, resolved once the program is laid out:
 * NEXT is the following instruction. */
enum { NEXT = -1, L_ALLOW, L_EPERM, L_ENOSYS, L_CLONE, L_IOCTL, L_MKNOD, L_MKNODAT, L_SOCKET,
       L_PERSONALITY, L_FIXED };
#define MAX_LABELS 64

typedef struct {
    struct sock_filter *f;
    unsigned n;
    int at[MAX_LABELS];  /* label -> instruction; -1 while unplaced */
    int n_labels;
    struct fixup {
        unsigned insn;
        int jt, jf;
    } fix[MAX_INSNS];  /* jumps whose offsets wait for their labels */
    unsigned n_fix;
} prog;

static void emit(prog *p, struct sock_filter s)
{
    if (p->n < MAX_INSNS)
        p->f[p->n] = s;
    p->n++;
}

static void stmt(prog *p, unsigned short code, unsigned k)
{
    emit(p, (struct sock_filter)BPF_STMT(code, k));
}

/* A conditional jump to labels jt / jf (NEXT: fall through). */
static void jump(prog *p, unsigned short code, unsigned k, int jt, int jf)
{
    if (p->n < MAX_INSNS)
        p->fix[p->n_fix++] = (struct fixup){p->n, jt, jf};
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | code, k, 0, 0));
}

static void place(prog *p, int label)
{
    p->at[label] = (int)p->n;
}

static int new_label(prog *p)
{
    if (p->n_labels == MAX_LABELS)
        SL_BUG("seccomp: out of labels");
    p->at[p->n_labels] = -1;
    return p->n_labels++;
}

#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

typedef struct {
    unsigned lo, hi; /* the numbers lo..hi */
    int label;       /* where a call with one of them goes */
} checked;

static int by_nr(const void *a, const void *b)
{
    unsigned x = ((const checked *)a)->lo, y = ((const checked *)b)->lo;
    return x < y ? -1 : x > y;
}

/* A binary search over the sorted ranges c[lo..hi) with the number in the
 * accumulator: a call that is in none of them is allowed.  The kernel
 * runs the filter once per system-call number when it is loaded (to cache
 * the always-allowed ones) and compiles it on every sandbox's start, at
 * about half a microsecond an instruction here: a search of about 8 steps
 * instead of a list of about 90, over ranges of neighbouring denied calls
 * instead of each number, keeps both short. */
static void search(prog *p, const checked *c, int lo, int hi)
{
    if (hi - lo <= 3) {
        for (int i = lo; i < hi; i++) {
            int next = i + 1 < hi ? NEXT : L_ALLOW;
            if (c[i].lo == c[i].hi) {
                jump(p, BPF_JEQ | BPF_K, c[i].lo, c[i].label, next);
                continue;
            }
            /* lo <= nr <= hi, in two comparisons */
            int after = i + 1 < hi ? new_label(p) : L_ALLOW;
            jump(p, BPF_JGE | BPF_K, c[i].lo, NEXT, after);
            jump(p, BPF_JGE | BPF_K, c[i].hi + 1, after, c[i].label);
            if (i + 1 < hi)
                place(p, after);
        }
        if (lo == hi)
            stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        return;
    }
    int mid = lo + (hi - lo) / 2, upper = new_label(p);
    jump(p, BPF_JGE | BPF_K, c[mid].lo, upper, NEXT);
    search(p, c, lo, mid);
    place(p, upper);
    search(p, c, mid, hi);
}

/* Loads argument i's low half; fails to EPERM when it equals a or b
 * (after masking), else allows. */
static void deny_arg_lo(prog *p, unsigned i, unsigned mask, unsigned a, unsigned b)
{
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(i));
    if (mask != 0xffffffffu)
        stmt(p, BPF_ALU | BPF_AND | BPF_K, mask);
    jump(p, BPF_JEQ | BPF_K, a, L_EPERM, NEXT);
    jump(p, BPF_JEQ | BPF_K, b, L_EPERM, L_ALLOW);
}

static void build(prog *p)
{
    for (int l = 0; l < L_FIXED; l++)
        p->at[l] = -1;
    p->n_labels = L_FIXED;
    /* A foreign ABI (int 0x80 on x86_64, AArch32) would bypass a filter
     * written in native numbers: kill the process. */
    stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
    /* x32 shares x86_64's AUDIT_ARCH and marks its numbers with this bit. */
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
    enum { N_DENIED = sizeof denied / sizeof *denied };
    checked c[N_DENIED + 8];
    int n = 0;
    for (int i = 0; i < N_DENIED; i++)
        c[n++] = (checked){(unsigned)denied[i], (unsigned)denied[i], L_EPERM};
    c[n++] = (checked){__NR_clone3, __NR_clone3, L_ENOSYS};
    c[n++] = (checked){__NR_clone, __NR_clone, L_CLONE};
    c[n++] = (checked){__NR_ioctl, __NR_ioctl, L_IOCTL};
#ifdef __NR_mknod
    c[n++] = (checked){__NR_mknod, __NR_mknod, L_MKNOD};
#endif
    c[n++] = (checked){__NR_mknodat, __NR_mknodat, L_MKNODAT};
    c[n++] = (checked){__NR_socket, __NR_socket, L_SOCKET};
    c[n++] = (checked){__NR_personality, __NR_personality, L_PERSONALITY};
    qsort(c, (size_t)n, sizeof *c, by_nr);
    for (int i = 1; i < n; i++)
        if (c[i].lo == c[i - 1].lo)
            SL_BUG("seccomp: a system call is listed twice");
    /* neighbouring numbers that go to the same verdict: one range */
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m && c[m - 1].label == c[i].label && c[m - 1].hi + 1 == c[i].lo)
            c[m - 1].hi = c[i].hi;
        else
            c[m++] = c[i];
    }
    search(p, c, 0, m);

    /* The argument checks, then the verdicts they and the search jump to
     * (classic BPF jumps only forward). */
    /* clone asking for any new namespace (flags live in the low half) */
    place(p, L_CLONE);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
    jump(p, BPF_JSET | BPF_K,
         CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
             CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_NEWTIME,
         L_EPERM, L_ALLOW);
    /* Terminal injection: the request number is an int. */
    place(p, L_IOCTL);
    deny_arg_lo(p, 1, 0xffffffffu, TIOCSTI, TIOCLINUX);
    /* Device nodes: block and character devices only. */
#ifdef __NR_mknod
    place(p, L_MKNOD);
    deny_arg_lo(p, 1, S_IFMT, S_IFCHR, S_IFBLK);
#endif
    place(p, L_MKNODAT);
    deny_arg_lo(p, 2, S_IFMT, S_IFCHR, S_IFBLK);
    /* Netlink sockets: the kernel queues answers up to a socket's receive
     * buffer (up to 2 x net.core.rmem_max) without charging any memory
     * cgroup, so a thousand sockets hold gigabytes past the sandbox's
     * memory limit.  Nothing in a sandbox needs them: glibc's getaddrinfo
     * then assumes IPv4 and IPv6, and the interfaces are in /proc/net/dev.
     * vsock ignores network namespaces: a --net none sandbox could reach
     * services of this VM's host through it. */
    place(p, L_SOCKET);
    deny_arg_lo(p, 0, 0xffffffffu, AF_NETLINK, AF_VSOCK);
    /* personality: only the query (0xffffffff, all 64 bits as libc passes
     * it); setting any persona fails. */
    place(p, L_PERSONALITY);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG_HI(0));
    jump(p, BPF_JEQ | BPF_K, 0, NEXT, L_EPERM);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
    jump(p, BPF_JEQ | BPF_K, 0xffffffffu, L_ALLOW, L_EPERM);
    place(p, L_ALLOW);
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    place(p, L_EPERM);
    stmt(p, BPF_RET | BPF_K, ERRNO(EPERM));
    place(p, L_ENOSYS);
    stmt(p, BPF_RET | BPF_K, ERRNO(ENOSYS));

    if (p->n > MAX_INSNS)
        return;  /* build_once reports it */
    for (unsigned i = 0; i < p->n_fix; i++) {
        unsigned at = p->fix[i].insn;
        int t[2] = {p->fix[i].jt, p->fix[i].jf};
        unsigned char off[2];
        for (int k = 0; k < 2; k++) {
            int to = t[k] == NEXT ? (int)at + 1 : p->at[t[k]];
            if (to <= (int)at || to - (int)at - 1 > 255)
                SL_BUG("seccomp: a jump the filter's layout cannot hold");
            off[k] = (unsigned char)(to - (int)at - 1);
        }
        p->f[at].jt = off[0];
        p->f[at].jf = off[1];
    }
}

static void build_once(void)
{
    static prog p;  /* large; built once */
    p.f = insns;
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
