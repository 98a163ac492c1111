/*
 * seccomp — the local sandbox's filter, run over system calls in a small
 * BPF interpreter: denied calls answer EPERM (clone3 ENOSYS), foreign ABIs
 * kill, argument checks look at the bits the kernel reads, and everything
 * else is allowed.  (tests/cli/sandbox_escape.sh checks the same in a
 * real sandbox.)
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sandbox/local/seccomp.h"
#include "tap.h"

#define BAD 0xdeadbeefu

/* The verdict of f on d, or BAD for an instruction this interpreter does
 * not know, a load outside seccomp_data or running off the end. */
static unsigned steps;  /* instructions the last bpf_run executed */

static uint32_t bpf_run(const struct sock_fprog *f, const struct seccomp_data *d)
{
    uint32_t A = 0;
    steps = 0;
    for (unsigned pc = 0; pc < f->len; pc++) {
        const struct sock_filter *i = &f->filter[pc];
        steps++;
        switch (i->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            if (i->k % 4 || i->k + 4 > sizeof *d)
                return BAD;
            memcpy(&A, (const char *)d + i->k, 4);
            break;
        case BPF_ALU | BPF_AND | BPF_K: A &= i->k; break;
        case BPF_JMP | BPF_JEQ | BPF_K: pc += A == i->k ? i->jt : i->jf; break;
        case BPF_JMP | BPF_JGE | BPF_K: pc += A >= i->k ? i->jt : i->jf; break;
        case BPF_JMP | BPF_JSET | BPF_K: pc += (A & i->k) ? i->jt : i->jf; break;
        case BPF_RET | BPF_K: return i->k;
        default: return BAD;
        }
    }
    return BAD;
}

static const struct sock_fprog *prog;

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#else
#define ARCH AUDIT_ARCH_AARCH64
#endif

static uint32_t verdict(int nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
    struct seccomp_data d = {.nr = nr, .arch = ARCH, .args = {a0, a1, a2}};
    return bpf_run(prog, &d);
}

#define ALLOW SECCOMP_RET_ALLOW
#define EPERM_ (SECCOMP_RET_ERRNO | EPERM)

int main(void)
{
    prog = sl_seccomp_program();
    CHECK(prog && prog->len > 0 && prog == sl_seccomp_program(), "one program, built once");
    CHECK(verdict(__NR_read, 0, 0, 0) == ALLOW && verdict(__NR_openat, 0, 0, 0) == ALLOW &&
              verdict(__NR_execve, 0, 0, 0) == ALLOW,
          "ordinary calls are allowed");
    /* The kernel runs the filter over every call number when a sandbox's
     * init loads it: a search, not a list of ~90 comparisons, keeps that
     * (and every checked call) short. */
    unsigned most = 0;
    for (int nr = 0; nr < 512; nr++) {
        verdict(nr, 0, 0, 0);
        most = steps > most ? steps : most;
    }
    CHECK(most <= 20, "every call number is decided within 20 instructions (took %u)", most);
    static const int deny[] = {
        __NR_mount,       __NR_umount2,           __NR_pivot_root,  __NR_chroot,
        __NR_unshare,     __NR_setns,             __NR_ptrace,      __NR_bpf,
        __NR_init_module, __NR_kexec_load,        __NR_keyctl,      __NR_io_uring_setup,
        __NR_reboot,      __NR_open_by_handle_at, __NR_userfaultfd, __NR_perf_event_open,
        __NR_fsopen,      __NR_mount_setattr};
    int denied = 0;
    for (size_t i = 0; i < sizeof deny / sizeof *deny; i++)
        denied += verdict(deny[i], 0, 0, 0) == EPERM_;
    CHECK(denied == (int)(sizeof deny / sizeof *deny),
          "escape and kernel calls answer EPERM (%d of %zu)", denied, sizeof deny / sizeof *deny);
    CHECK(verdict(__NR_clone3, 0, 0, 0) == (SECCOMP_RET_ERRNO | ENOSYS), "clone3 answers ENOSYS");
    CHECK(verdict(__NR_clone, SIGCHLD, 0, 0) == ALLOW &&
              verdict(__NR_clone, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0) == ALLOW,
          "clone without namespace flags is allowed");
    CHECK(verdict(__NR_clone, CLONE_NEWUSER, 0, 0) == EPERM_ &&
              verdict(__NR_clone, CLONE_NEWNET | SIGCHLD, 0, 0) == EPERM_ &&
              verdict(__NR_clone, CLONE_NEWTIME, 0, 0) == EPERM_ &&
              verdict(__NR_clone, 0xffffffff00000000ull | CLONE_NEWNS, 0, 0) == EPERM_,
          "clone asking for any namespace answers EPERM");
    CHECK(verdict(__NR_ioctl, 0, TIOCSTI, 0) == EPERM_ &&
              verdict(__NR_ioctl, 0, TIOCLINUX, 0) == EPERM_,
          "TIOCSTI and TIOCLINUX answer EPERM");
    CHECK(verdict(__NR_ioctl, 0, 0x100000000ull | TIOCSTI, 0) == EPERM_,
          "TIOCSTI with high bits set (the kernel reads an int) answers EPERM");
    CHECK(verdict(__NR_ioctl, 0, TCGETS, 0) == ALLOW, "other ioctls are allowed");
    CHECK(verdict(__NR_mknodat, 0, 0, S_IFCHR | 0600) == EPERM_ &&
              verdict(__NR_mknodat, 0, 0, S_IFBLK | 0600) == EPERM_,
          "mknodat of a device answers EPERM");
    CHECK(verdict(__NR_mknodat, 0, 0, S_IFIFO | 0600) == ALLOW &&
              verdict(__NR_mknodat, 0, 0, S_IFSOCK | 0600) == ALLOW,
          "mknodat of a FIFO or socket is allowed");
#ifdef __NR_mknod
    CHECK(verdict(__NR_mknod, 0, S_IFCHR, 0) == EPERM_ &&
              verdict(__NR_mknod, 0, S_IFIFO, 0) == ALLOW,
          "mknod: devices denied, FIFOs allowed");
#endif
    CHECK(verdict(__NR_socket, AF_NETLINK, SOCK_RAW, 0) == EPERM_ &&
              verdict(__NR_socket, AF_VSOCK, SOCK_STREAM, 0) == EPERM_,
          "netlink and vsock sockets answer EPERM");
    CHECK(verdict(__NR_socket, 0x1000000000ull | AF_NETLINK, SOCK_RAW, 0) == EPERM_,
          "a netlink family with high bits set (the kernel reads an int) answers EPERM");
    CHECK(verdict(__NR_socket, AF_INET, SOCK_STREAM, 0) == ALLOW &&
              verdict(__NR_socket, AF_UNIX, SOCK_STREAM, 0) == ALLOW,
          "inet and unix sockets are allowed");
    CHECK(verdict(__NR_personality, 0xffffffffu, 0, 0) == ALLOW, "personality query is allowed");
    CHECK(verdict(__NR_personality, 0, 0, 0) == EPERM_ &&
              verdict(__NR_personality, 0x0040000, 0, 0) == EPERM_ &&
              verdict(__NR_personality, 0x1ffffffffull, 0, 0) == EPERM_,
          "setting a personality answers EPERM");

    /* Every number, against this test's own copy of the policy: the
     * filter merges neighbouring denied numbers into ranges, and a range
     * one too wide or too narrow would show here. */
    static const int policy[] = {
        __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_move_mount,
        __NR_open_tree, __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick,
        __NR_mount_setattr, __NR_unshare, __NR_setns, __NR_ptrace, __NR_process_vm_readv,
        __NR_process_vm_writev, __NR_kcmp, __NR_pidfd_getfd, __NR_kexec_load,
        __NR_kexec_file_load, __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_bpf,
        __NR_perf_event_open, __NR_userfaultfd, __NR_io_uring_setup, __NR_io_uring_enter,
        __NR_io_uring_register, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_reboot,
        __NR_swapon, __NR_swapoff, __NR_syslog, __NR_acct, __NR_quotactl, __NR_sethostname,
        __NR_setdomainname, __NR_quotactl_fd, __NR_settimeofday, __NR_clock_settime,
        __NR_clock_adjtime, __NR_adjtimex, __NR_lookup_dcookie, __NR_nfsservctl, __NR_vhangup,
        __NR_open_by_handle_at, __NR_name_to_handle_at, __NR_fanotify_init, __NR_mbind,
        __NR_migrate_pages, __NR_move_pages, __NR_set_mempolicy,
#ifdef __x86_64__
        __NR_iopl, __NR_ioperm, __NR_uselib, __NR_get_kernel_syms, __NR_query_module,
        __NR_create_module, __NR_sysfs, __NR__sysctl, __NR_ustat,
#endif
    };
    int wrong = 0, first_wrong = -1;
    for (int nr = 0; nr < 1024; nr++) {
        if (nr == __NR_clone || nr == __NR_clone3 || nr == __NR_ioctl || nr == __NR_mknodat ||
            nr == __NR_socket || nr == __NR_personality)
            continue;
#ifdef __NR_mknod
        if (nr == __NR_mknod)
            continue;
#endif
        bool in_policy = false;
        for (size_t i = 0; i < sizeof policy / sizeof *policy; i++)
            in_policy = in_policy || policy[i] == nr;
        if (verdict(nr, 0, 0, 0) != (in_policy ? EPERM_ : ALLOW) && wrong++ == 0)
            first_wrong = nr;
    }
    CHECK(wrong == 0, "each of 1024 call numbers gets the policy's verdict (%d do not, first %d)",
          wrong, first_wrong);

    struct seccomp_data d = {.nr = __NR_read, .arch = AUDIT_ARCH_I386};
    CHECK(bpf_run(prog, &d) == SECCOMP_RET_KILL_PROCESS, "a foreign ABI kills the process");
#ifdef __x86_64__
    d.arch = AUDIT_ARCH_X86_64;
    d.nr = 0x40000000 | __NR_read;
    CHECK(bpf_run(prog, &d) == SECCOMP_RET_KILL_PROCESS, "x32 calls kill the process");
#endif
    int bad = 0;
    for (int nr = 0; nr < 1024; nr++)
        for (uint64_t a = 0; a < 4; a++)
            bad += verdict(nr, a << 31, a << 31, a << 31) == BAD;
    CHECK(bad == 0, "every path ends in a verdict (%d did not)", bad);
    return tap_done();
}
