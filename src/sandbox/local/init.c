/*
 * init — the first process of a local sandbox, pid 1 of its namespaces.
 *
 * A small static program of its own (build/sluice-init, embedded in the
 * library as bytes and exec'd from a sealed memfd): the host clones with
 * CLONE_VM | CLONE_VFORK into the new namespaces, and the child execs this
 * at once, so making a sandbox never copies the host's address space and
 * init shares no memory with it.  It gets the plan the host made with the
 * GO message, builds the sandbox's file system, drops every privilege
 * (capabilities, bounding set, new-privs, dumpability) and loads the
 * seccomp filter on itself, so every command it starts inherits all of
 * that for free: a warm exec is one vfork + execve.  Then it serves the
 * control socket (proto.h).  Run as root, it may instead build a root to
 * keep (TEMPLATE) or join kept ones (KEPT): see proto.h and kept.h.
 *
 * Process trees: each command is its own session and process group; when a
 * command ends its group is killed, and whenever no command is running
 * init kills everything else in the namespace (kill(-1) from pid 1), so a
 * daemon a command left behind dies with it at the latest when the sandbox
 * is idle.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/local/proto.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
/* The new mount API's flags: glibc's <sys/mount.h> has them, musl's (which
 * init may be built with) does not. */
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#define FSMOUNT_CLOEXEC 0x00000001
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#define SL_MOUNT_ATTR_RDONLY 0x1
#define SL_MOUNT_ATTR_NOSUID 0x2
#define SL_MOUNT_ATTR_NODEV 0x4
#define SL_MOUNT_ATTR_NOEXEC 0x8

struct sl_mount_attr {
    unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

#define SL_STR2(x) #x
#define SL_STR(x) SL_STR2(x)

static int ctl = -1;
static char msgbuf[SL_SB_MSG_MAX + sizeof(sl_sb_hdr) + 64];

/* ---- messages ---- */

static int send_msg(uint32_t op, uint32_t id, int32_t arg, const void *payload, size_t len,
                    int fd)
{
    sl_sb_hdr h = {op, id, arg, (uint32_t)len};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)payload, len}};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
    if (fd >= 0) {
        m.msg_control = u.buf;
        m.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return sendmsg(ctl, &m, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Appends s to out at *at (bounded), the only formatting init does. */
static void put(char *out, size_t n, size_t *at, const char *s)
{
    while (*s && *at + 1 < n)
        out[(*at)++] = *s++;
    out[*at] = 0;
}

_Noreturn static void die(const char *step, const char *what)
{
    char text[512];
    size_t at = 0;
    int e = errno;
    put(text, sizeof text, &at, step);
    if (what) {
        put(text, sizeof text, &at, " ");
        put(text, sizeof text, &at, what);
    }
    put(text, sizeof text, &at, ": ");
    put(text, sizeof text, &at, strerror(e));
    send_msg(SL_OP_ERROR, 0, e, text, at + 1, -1);
    _exit(1);
}

/* ---- file system ---- */

static void mkdir_p(char *path, mode_t mode)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(path, mode);
        *p = '/';
    }
    mkdir(path, mode);
}

static void make_file(const char *path, const char *content, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("create", path);
    if (n && write(fd, content, n) != (ssize_t)n)
        die("write", path);
    close(fd);
}

static void clone_sources(sl_sb_plan *p)
{
    for (int i = 0; i < p->n_mounts; i++) {
        sl_sb_mount *m = &p->mounts[i];
        m->fd = -1;
        if (m->is_link)
            continue;
        m->fd = (int)syscall(SYS_open_tree, AT_FDCWD, m->source,
                             OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE);
        if (m->fd < 0) {
            if (!m->required && (errno == ENOENT || errno == EACCES))
                continue;
            die("open_tree", m->source);
        }
        /* System binds become read-only with the whole root in one call
         * (build_root); a user's binds may sit in the writable workspace, so
         * they are made read-only here.  Device nodes keep the host's flags. */
        if (!m->required || m->device)
            continue;
        struct sl_mount_attr a = {.attr_set = SL_MOUNT_ATTR_NOSUID | SL_MOUNT_ATTR_RDONLY |
                                              SL_MOUNT_ATTR_NODEV};
        if (syscall(SYS_mount_setattr, m->fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a))
            die("mount_setattr", m->source);
    }
}

/* The template (root, in the host's user namespace) makes the device
 * nodes themselves, the host's type and mode, on its /dev tmpfs (which
 * allows devices; it turns read-only below): each kept sandbox then copies
 * and tears down five mounts fewer.  fsuid and fsgid go back to root for
 * the call (CAP_MKNOD went with fsuid 0; the nodes are root's, as the
 * host's), then to the sandbox's owner again. */
static void make_node(const sl_sb_mount *m)
{
    struct stat st;
    if (fstat(m->fd, &st) || !S_ISCHR(st.st_mode))
        die("device", m->source);
    syscall(SYS_setfsuid, 0);
    syscall(SYS_setfsgid, 0);
    mode_t mask = umask(0);
    int rc = mknod(m->target, S_IFCHR | (st.st_mode & 0777), st.st_rdev);
    umask(mask);
    syscall(SYS_setfsgid, SL_SB_HOST_ID);
    syscall(SYS_setfsuid, SL_SB_HOST_ID);
    if (rc)
        die("mknod", m->target);
}

/* Places the system mounts (user == false) or the user's and the device
 * nodes (user == true); shared: the template, which makes the nodes. */
static void place_mounts(sl_sb_plan *p, bool user, bool shared)
{
    char path[260];
    for (int i = 0; i < p->n_mounts; i++) {
        sl_sb_mount *m = &p->mounts[i];
        if (!m->is_link && m->fd < 0)
            continue;
        if ((m->required || m->device) != user)
            continue;
        /* the parent directory, then the mount point itself */
        memcpy(path, m->target, sizeof m->target);
        char *slash = strrchr(path, '/');
        if (slash && slash != path) {
            *slash = 0;
            mkdir_p(path, 0755);
        }
        if (m->is_link) {
            if (symlink(m->link, m->target) && errno != EEXIST)
                die("symlink", m->target);
            continue;
        }
        if (shared && m->device) {
            make_node(m);
            close(m->fd);
            m->fd = -1;
            continue;
        }
        struct stat st;
        if (!stat(m->target, &st)) {
            /* the mount point is there already (a file in the /etc folder) */
        } else if (m->is_file) {
            int fd = open(m->target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                die("create mount point", m->target);
            close(fd);
        } else {
            memcpy(path, m->target, sizeof m->target);
            mkdir_p(path, 0755);
        }
        if (syscall(SYS_move_mount, m->fd, "", AT_FDCWD, m->target, MOVE_MOUNT_F_EMPTY_PATH))
            die("mount", m->target);
        close(m->fd);
        m->fd = -1;
    }
}

/* The mount points of the user's binds that lie outside the writable
 * folders must exist before the root turns read-only; those inside the
 * workspace, /tmp or home are made after those folders are mounted. */
static void prepare_user_points(sl_sb_plan *p)
{
    static const char *const writable[] = {"/workspace", "/tmp", "/home/sandbox", "/dev"};
    char path[260];
    for (int i = 0; i < p->n_mounts; i++) {
        sl_sb_mount *m = &p->mounts[i];
        if (!m->required || m->device || m->fd < 0)
            continue;
        bool later = false;
        for (size_t k = 0; k < sizeof writable / sizeof *writable; k++) {
            size_t n = strlen(writable[k]);
            if (!strncmp(m->target, writable[k], n) && (m->target[n] == '/' || !m->target[n]))
                later = true;
        }
        if (later)
            continue;
        memcpy(path, m->target, sizeof m->target);
        if (m->is_file) {
            char *slash = strrchr(path, '/');
            if (slash && slash != path) {
                *slash = 0;
                mkdir_p(path, 0755);
            }
            int fd = open(m->target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                die("create mount point", m->target);
            close(fd);
        } else {
            mkdir_p(path, 0755);
        }
    }
}

static void write_etc(const char *files)
{
    char path[300];
    mkdir("/etc", 0755);
    for (const char *f = files; *f;) {
        const char *size = f + strlen(f) + 1;
        const char *content = size + strlen(size) + 1;
        size_t n = (size_t)strtoul(size, NULL, 10), at = 0;
        put(path, sizeof path, &at, "/etc/");
        put(path, sizeof path, &at, f);
        make_file(path, content, n);
        f = content + n;
    }
}

static void loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq r;
    memset(&r, 0, sizeof r);
    memcpy(r.ifr_name, "lo", 3);
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &r))
        die("network", "lo");
    r.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &r))
        die("network", "lo up");
    close(s);
}

static int proxy_socket(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(SL_SB_PROXY_PORT),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 128))
        die("proxy", "listen on 127.0.0.1:3128");
    return s;
}

/* The data tmpfs is made detached (fsopen/fsmount) and its folders are
 * cloned onto /workspace, /tmp, home and /dev/shm from there: it never has
 * a place of its own in the tree, so nothing has to be unmounted, and an
 * unmount waits for an RCU grace period (milliseconds on a busy host).
 * init keeps the detached mount's descriptor for its life (closing it
 * would be that unmount); commands do not inherit it (close-on-exec). */
static void data_mounts(const char *opts)
{
    int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        die("fsopen", "workspace tmpfs");
    if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "source", "sluice-data", 0))
        die("fsconfig", "source");
    char opt[sizeof ((sl_sb_plan *)0)->data_opts];
    snprintf(opt, sizeof opt, "%s", opts);
    for (char *save = NULL, *kv = strtok_r(opt, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            die("fsconfig", kv);
        *eq = 0;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, kv, eq + 1, 0))
            die("fsconfig", kv);
    }
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
        die("mount", "workspace tmpfs");
    int data = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                            SL_MOUNT_ATTR_NOSUID | SL_MOUNT_ATTR_NODEV);
    if (data < 0)
        die("fsmount", "workspace tmpfs");
    close(fs);
    static const struct {
        const char *dir, *target;
        mode_t mode;
    } parts[] = {{"workspace", "/workspace", 0755},
                 {"tmp", "/tmp", 01777},
                 {"home", "/home/sandbox", 0755},
                 {"shm", "/dev/shm", 01777}};
    /* no umask meanwhile: each folder gets its mode (sticky ones too) as
     * it is made; the commands get the umask we were given */
    mode_t mask = umask(0);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (mkdirat(data, parts[i].dir, parts[i].mode))
            die("mkdir", parts[i].target);
        int t = (int)syscall(SYS_open_tree, data, parts[i].dir,
                             OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE);
        if (t < 0 || syscall(SYS_move_mount, t, "", AT_FDCWD, parts[i].target,
                             MOVE_MOUNT_F_EMPTY_PATH))
            die("bind", parts[i].target);
        close(t);
    }
    umask(mask);
}

/* The sandbox's root.  FRESH: the whole of it, as the sandbox's user in
 * its own user namespace.  TEMPLATE (shared): the part every sandbox of
 * one plan has in common, as root, owned by the id the sandbox's user
 * stands for (SL_SB_HOST_ID): no proc, no workspace, no user binds; a
 * KEPT sandbox adds those to its copy (enter_kept). */
static void build_root(sl_sb_plan *p, bool shared)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
        die("mount", "make / private");
    /* Bind sources are taken while init still has the host's view and its
     * original uid (a user's 0700 folders stay reachable), as detached
     * mounts placed later into the new root. */
    clone_sources(p);
    /* Raw system calls: glibc's setresuid() would try to change every
     * thread of the process this init was cloned from and wait forever
     * for threads that do not exist here.  The template keeps root's
     * capabilities and creates its files as the sandbox's user. */
    if (shared) {
        syscall(SYS_setfsgid, SL_SB_HOST_ID);
        syscall(SYS_setfsuid, SL_SB_HOST_ID);
    } else if (syscall(SYS_setresgid, SL_SB_GID, SL_SB_GID, SL_SB_GID) ||
               syscall(SYS_setresuid, SL_SB_UID, SL_SB_UID, SL_SB_UID)) {
        die("setresuid", "1000");
    }
    const char *owner = shared ? ",uid=" SL_STR(SL_SB_HOST_ID) ",gid=" SL_STR(SL_SB_HOST_ID) : "";
    char opts[96];
    size_t at = 0;
    put(opts, sizeof opts, &at, "size=8m,mode=0755");
    put(opts, sizeof opts, &at, owner);
    if (mount("sluice", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts))
        die("mount", "root tmpfs");
    if (chdir("/tmp") || mkdir("oldroot", 0700))
        die("prepare", "new root");
    if (syscall(SYS_pivot_root, ".", "oldroot") || chdir("/"))
        die("pivot_root", NULL);
    /* Every mount point first: the root turns read-only below. */
    static const char *const dirs[] = {"/proc", "/dev", "/workspace", "/tmp", "/home",
                                       "/home/sandbox", "/run", "/var"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdir(dirs[i], 0755);
    symlink("/tmp", "/var/tmp");
    write_etc(p->etc_files);
    /* A fresh proc needs a fully visible proc somewhere in the namespace,
     * so it is mounted before the old root goes. */
    if (!shared && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
        die("mount", "/proc");
    if (umount2("/oldroot", MNT_DETACH) || rmdir("/oldroot"))
        die("detach", "old root");
    place_mounts(p, false, shared);
    prepare_user_points(p);
    /* One call makes the root, every system bind and proc read-only. */
    struct sl_mount_attr ro = {.attr_set = SL_MOUNT_ATTR_RDONLY | SL_MOUNT_ATTR_NOSUID |
                                           SL_MOUNT_ATTR_NODEV};
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro))
        die("mount_setattr", "/ read-only");

    at = 0;
    put(opts, sizeof opts, &at, "size=64k,mode=0755");
    put(opts, sizeof opts, &at, owner);
    if (mount("sluice-dev", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, opts))
        die("mount", "/dev");
    symlink("/proc/self/fd", "/dev/fd");
    symlink("/proc/self/fd/0", "/dev/stdin");
    symlink("/proc/self/fd/1", "/dev/stdout");
    symlink("/proc/self/fd/2", "/dev/stderr");
    mkdir("/dev/shm", 01777);

    /* One tmpfs holds the workspace, /tmp, home and /dev/shm, so one size
     * limit covers everything a command can write. */
    if (!shared)
        data_mounts(p->data_opts);
    place_mounts(p, true, shared);
    if (mount(NULL, "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL))
        die("remount", "/dev read-only");
    if (!shared && chdir("/workspace"))
        die("chdir", "/workspace");
    if (sethostname("sandbox", 7))
        die("sethostname", NULL);
}

static int host_proc = -1; /* KEPT: the host's /proc until our maps are written */
static bool own_ipc;       /* an early init made its IPC namespace before GO */

/* KEPT, as root: the kept root (a private copy of it), host name and
 * network namespace, then this sandbox's own proc, IPC namespace and
 * workspace.  ns: the root's, the host name's and (shared_net) the
 * network namespace's descriptors. */
static void enter_kept(sl_sb_plan *p, const int *ns)
{
    host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (host_proc < 0)
        die("open", "/proc");
    if (setns(ns[0], CLONE_NEWNS))
        die("setns", "the kept root");
    if (setns(ns[1], CLONE_NEWUTS))
        die("setns", "the kept host name");
    if (p->shared_net && setns(ns[2], CLONE_NEWNET))
        die("setns", "the kept network namespace");
    for (int i = 0; i < p->n_ns; i++)
        close(ns[i]);
    if (p->new_net) {
        if (unshare(CLONE_NEWNET))
            die("unshare", "network namespace");
        loopback_up();
    }
    if (unshare(CLONE_NEWNS | (own_ipc ? 0 : CLONE_NEWIPC)))
        die("unshare", "mount and IPC namespaces");
    if (mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
        die("mount", "/proc");
    syscall(SYS_setfsgid, SL_SB_HOST_ID);
    syscall(SYS_setfsuid, SL_SB_HOST_ID);
    data_mounts(p->data_opts);
    if (chdir("/workspace"))
        die("chdir", "/workspace");
}

#define ID_MAP SL_STR(SL_SB_UID) " " SL_STR(SL_SB_HOST_ID) " 1\n"

static void write_self(const char *file, const char *text)
{
    int fd = openat(host_proc, file, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("write", file);
    close(fd);
}

/* KEPT, last step as root: become the sandbox's user (SL_SB_HOST_ID, no
 * capabilities left in the host's user namespace) in a user namespace of
 * its own where it is 1000.  The mount namespace stays the host's user
 * namespace's, where the sandbox has no capability: it can mount,
 * unmount or remount nothing.  Our maps are written through the host's
 * /proc (ours is read-only), held open since before the kept root. */
static void become_user(void)
{
    if (syscall(SYS_setgroups, 0, NULL) ||
        syscall(SYS_setresgid, SL_SB_HOST_ID, SL_SB_HOST_ID, SL_SB_HOST_ID) ||
        syscall(SYS_setresuid, SL_SB_HOST_ID, SL_SB_HOST_ID, SL_SB_HOST_ID))
        die("setresuid", "the sandbox's user");
    /* The change of user made us not dumpable, and so our own /proc files
     * root's: dumpable again until drop_privileges, to write our maps. */
    if (syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0))
        die("dumpable", NULL);
    if (unshare(CLONE_NEWUSER))
        die("unshare", "user namespace");
    write_self("self/setgroups", "deny");
    write_self("self/uid_map", ID_MAP);
    write_self("self/gid_map", ID_MAP);
    close(host_proc);
    host_proc = -1;
}

static void drop_privileges(sl_sb_plan *p)
{
    /* every capability this kernel has: the first number past its last
     * one fails with EINVAL (no need to read /proc/sys/kernel/cap_last_cap) */
    for (int cap = 0; cap < 64; cap++)
        if (syscall(SYS_prctl, PR_CAPBSET_DROP, cap, 0, 0, 0)) {
            if (errno != EINVAL || cap == 0)
                die("drop capability", NULL);
            break;
        }
    syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capset, &h, d))
        die("capset", NULL);
    if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        die("no_new_privs", NULL);
    /* Not dumpable: commands (same uid) cannot open /proc/1/mem or
     * /proc/1/exe, or ptrace init. */
    if (syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0))
        die("dumpable", NULL);
    if (syscall(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p->seccomp, 0, 0))
        die("seccomp", NULL);
}

/* ---- commands ---- */

#define MAX_CMDS 256

static struct {
    uint32_t id;
    pid_t pid;
    int status_fd;
    int error;
    bool last;
} cmds[MAX_CMDS];
static int n_running;

static void finish(int slot, int status, int error, const struct rusage *ru)
{
    sl_exec_status s = {status, error, 0};
    if (ru)
        s.cpu_ms = (int64_t)ru->ru_utime.tv_sec * 1000 + ru->ru_utime.tv_usec / 1000 +
                   (int64_t)ru->ru_stime.tv_sec * 1000 + ru->ru_stime.tv_usec / 1000;
    if (write(cmds[slot].status_fd, &s, sizeof s) < 0) {
        /* the host gave up on this command; nothing to tell */
    }
    close(cmds[slot].status_fd);
    if (cmds[slot].pid > 0)
        kill(-cmds[slot].pid, SIGKILL);  /* whatever the command left in its group */
    cmds[slot].pid = 0;
    cmds[slot].status_fd = -1;
    n_running--;
    if (cmds[slot].last)
        _exit(0);  /* the sandbox ends with its last command (proto.h) */
}

static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);
    for (; *env; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* PATH search done by init, since the vforked child may not allocate. */
static const char *resolve(const char *file, char **env, char *out, size_t n)
{
    if (strchr(file, '/'))
        return file;
    const char *path = env_get(env, "PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t dl = end ? (size_t)(end - path) : strlen(path);
        if (dl + strlen(file) + 2 < n) {
            memcpy(out, path, dl);
            out[dl] = '/';
            strcpy(out + dl + 1, file);
            if (!access(out, X_OK))
                return out;
        }
        path += dl + (end ? 1 : 0);
    }
    return NULL;
}

static void child_fail(const char *what, const char *arg, int code)
{
    char text[600];
    size_t at = 0;
    int e = errno;
    put(text, sizeof text, &at, "sandbox: ");
    put(text, sizeof text, &at, what);
    put(text, sizeof text, &at, " '");
    put(text, sizeof text, &at, arg);
    put(text, sizeof text, &at, "': ");
    put(text, sizeof text, &at, strerror(e));
    put(text, sizeof text, &at, "\n");
    if (write(2, text, at) < 0) {
    }
    _exit(code);
}

static void set_limit(int res, int64_t v, int64_t hard_extra)
{
    if (v < 0)
        return;
    struct rlimit r = {(rlim_t)v, (rlim_t)(v + hard_extra)};
    setrlimit(res, &r);
}

/* The child of a command: runs on its own stack in init's memory until
 * execve (clone with CLONE_VM | CLONE_VFORK, as posix_spawn does), so it
 * only makes system calls. */
struct spawn_args {
    const sl_sb_exec *e;
    const char *path, *cwd;
    char **argv, **envp;
    int fd[3];
    const unsigned char *affinity; /* init's processors, restored before execve */
    long affinity_len;
};

static char child_stack[64 * 1024] __attribute__((aligned(16)));

static int spawn_child(void *arg)
{
    const struct spawn_args *a = arg;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    for (int i = 0; i < 3; i++)
        if (dup2(a->fd[i], i) < 0)
            _exit(126);
    set_limit(RLIMIT_CPU, a->e->rlim_cpu, 1);
    set_limit(RLIMIT_NOFILE, a->e->rlim_nofile, 0);
    set_limit(RLIMIT_FSIZE, a->e->rlim_fsize, 0);
    set_limit(RLIMIT_NPROC, a->e->rlim_nproc, 0);
    set_limit(RLIMIT_CORE, 0, 0);
    if (*a->cwd && chdir(a->cwd))
        child_fail("cannot change to directory", a->cwd, 126);
    if (!a->path) {
        errno = ENOENT;
        child_fail("command not found:", a->argv[0], 127);
    }
    /* the command may run anywhere init may (pin_to_this_cpu) */
    if (a->affinity && syscall(SYS_sched_setaffinity, 0, a->affinity_len, a->affinity))
        child_fail("cannot set the processors of", a->argv[0], 126);
    execve(a->path, a->argv, a->envp);
    child_fail("cannot run", a->argv[0], errno == ENOENT ? 127 : 126);
    return 127;
}

/* A new process is queued on the idlest processor, which on a small
 * machine is the other one, and waking an idle processor is the slowest
 * step of a command's start (tens of microseconds in a VM).  The vforked
 * child has nothing to do but exec while init waits for it, so init keeps
 * it on its own processor: pinned here (*all gets init's set of
 * processors; false when that cannot be done), and unpinned by the child
 * before execve and by init once the clone returns. */
static bool pin_to_this_cpu(unsigned char *all, size_t n, long *len)
{
    unsigned cpu;
    *len = syscall(SYS_sched_getaffinity, 0, n, all);
    if (*len <= 0 || syscall(SYS_getcpu, &cpu, NULL, NULL) || cpu / 8 >= (unsigned long)*len)
        return false;
    unsigned char one[128] = {0};
    one[cpu / 8] = (unsigned char)(1u << (cpu % 8));
    return syscall(SYS_sched_setaffinity, 0, *len, one) == 0;
}

static void do_exec(const sl_sb_hdr *h, char *payload, int *fds, int nfds)
{
    sl_sb_exec e;
    int slot = -1;
    if (h->len < sizeof e || nfds < 3)
        goto bad;
    memcpy(&e, payload, sizeof e);
    for (int i = 0; i < MAX_CMDS; i++)
        if (cmds[i].pid == 0 && cmds[i].status_fd < 0) {
            slot = i;
            break;
        }
    int stdin_fd = e.has_stdin && nfds > 3 ? fds[3] : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (slot < 0) {
        sl_exec_status s = {0, EAGAIN, 0};
        if (write(fds[2], &s, sizeof s) < 0) {
        }
        goto close_all;
    }
    /* strings: cwd, argv[argc], env[envc]; pointers go into a static array */
    static char *ptrs[4096];
    char *s = payload + sizeof e, *end = payload + h->len;
    if (e.argc < 1 || e.argc + e.envc + 3 > sizeof ptrs / sizeof *ptrs)
        goto bad;
    /* cwd, then argc argv strings, then envc env strings, each bounded */
    char *cwd = NULL, **argv = ptrs, **envp = ptrs + e.argc + 1;
    for (uint32_t i = 0; i < 1 + e.argc + e.envc; i++) {
        if (s > end)  /* payload[len] is NUL, so strings never run past end */
            goto bad;
        if (i == 0)
            cwd = s;
        else if (i <= e.argc)
            argv[i - 1] = s;
        else
            envp[i - 1 - e.argc] = s;
        s += strlen(s) + 1;
    }
    argv[e.argc] = NULL;
    envp[e.envc] = NULL;
    char pathbuf[4096];
    const char *path = resolve(argv[0], envp, pathbuf, sizeof pathbuf);

    cmds[slot].id = h->id;
    cmds[slot].status_fd = fds[2];
    cmds[slot].error = 0;
    cmds[slot].last = e.last != 0;
    static unsigned char all[128];
    long all_len;
    bool pinned = pin_to_this_cpu(all, sizeof all, &all_len);
    struct spawn_args sa = {&e,   path, cwd, argv, envp, {stdin_fd, fds[0], fds[1]},
                            pinned ? all : NULL, all_len};
    pid_t pid = clone(spawn_child, child_stack + sizeof child_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      &sa);
    if (pinned)
        syscall(SYS_sched_setaffinity, 0, all_len, all);
    if (pid < 0) {
        cmds[slot].pid = 0;
        sl_exec_status st = {0, errno, 0};
        if (write(fds[2], &st, sizeof st) < 0) {
        }
        cmds[slot].status_fd = -1;
        goto close_all;
    }
    cmds[slot].pid = pid;
    n_running++;
    close(fds[0]);
    close(fds[1]);
    close(stdin_fd);
    if (nfds > 3 && stdin_fd != fds[3])
        close(fds[3]);
    return;
bad:
    slot = -1;
    if (nfds >= 3) {
        sl_exec_status st = {0, EINVAL, 0};
        if (write(fds[2], &st, sizeof st) < 0) {
        }
    }
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    return;
close_all:
    for (int i = 0; i < nfds; i++)
        if (i != 2 || slot < 0)
            close(fds[i]);
    if (stdin_fd >= 0 && (nfds <= 3 || stdin_fd != fds[3]))
        close(stdin_fd);
}

static void reap(void)
{
    int status;
    pid_t pid;
    struct rusage ru;
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
        for (int i = 0; i < MAX_CMDS; i++)
            if (cmds[i].pid == pid) {
                finish(i, status, 0, &ru);
                break;
            }
    }
    if (n_running == 0)
        kill(-1, SIGKILL);  /* leftovers of finished commands; init itself is spared */
}

static void do_kill(uint32_t id)
{
    for (int i = 0; i < MAX_CMDS; i++)
        if (cmds[i].pid > 0 && cmds[i].id == id) {
            kill(-cmds[i].pid, SIGKILL);
            kill(cmds[i].pid, SIGKILL);
        }
}

static void do_open(const sl_sb_hdr *h, const char *path)
{
    int fd = -1;
    struct stat st;
    char dir[4096];
    switch (h->arg) {
    case SL_OPEN_READ:
        fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
            close(fd);
            fd = -1;
            errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        }
        if (fd >= 0)
            fcntl(fd, F_SETFL, 0);
        break;
    case SL_OPEN_WRITE: {
        size_t n = strlen(path);
        if (n < sizeof dir) {
            memcpy(dir, path, n + 1);
            char *slash = strrchr(dir, '/');
            if (slash && slash != dir) {
                *slash = 0;
                mkdir_p(dir, 0755);
            }
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
        break;
    }
    case SL_OPEN_DIR:
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        break;
    default:
        errno = EINVAL;
    }
    send_msg(SL_OP_FD, h->id, fd < 0 ? errno : 0, NULL, 0, fd);
    if (fd >= 0)
        close(fd);
}

/* One message from the host into msgbuf, and the descriptors passed with
 * it (close-on-exec) into fds[0..max), those past max closed; returns what
 * recvmsg returned. */
static ssize_t recv_fds(int *fds, int max, int *nfds)
{
    struct iovec iov = {msgbuf, sizeof msgbuf - 1};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    ssize_t r = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC);
    *nfds = 0;
    for (struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*nfds < max)
                fds[(*nfds)++] = fd;
            else
                close(fd);
        }
    }
    return r;
}

static void serve(int sfd)
{
    for (;;) {
        fd_set rd;
        FD_ZERO(&rd);
        FD_SET(ctl, &rd);
        FD_SET(sfd, &rd);
        int maxfd = ctl > sfd ? ctl : sfd;
        if (select(maxfd + 1, &rd, NULL, NULL, NULL) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (FD_ISSET(sfd, &rd)) {
            struct signalfd_siginfo si[8];
            if (read(sfd, si, sizeof si) < 0 && errno != EAGAIN) {
            }
            reap();
        }
        if (!FD_ISSET(ctl, &rd))
            continue;
        int fds[8], nfds;
        ssize_t r = recv_fds(fds, 8, &nfds);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            _exit(0);  /* the host closed the socket: the sandbox ends */
        }
        sl_sb_hdr h;
        if ((size_t)r < sizeof h) {
            for (int i = 0; i < nfds; i++)
                close(fds[i]);
            continue;
        }
        memcpy(&h, msgbuf, sizeof h);
        char *payload = msgbuf + sizeof h;
        if (h.len > (size_t)r - sizeof h)
            h.len = (uint32_t)((size_t)r - sizeof h);
        payload[h.len] = 0;
        switch (h.op) {
        case SL_OP_EXEC:
            do_exec(&h, payload, fds, nfds);
            nfds = 0;
            break;
        case SL_OP_KILL:
            do_kill(h.id);
            break;
        case SL_OP_KILLALL:
            kill(-1, SIGKILL);
            break;
        case SL_OP_OPEN:
            do_open(&h, payload);
            break;
        default:
            break;
        }
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
    }
}

/* The plan from the GO message (proto.h), copied out of msgbuf. */
static void read_plan(const char *payload, size_t len, sl_sb_plan *p)
{
    sl_sb_plan_wire w;
    if (len < sizeof w)
        _exit(1);
    memcpy(&w, payload, sizeof w);
    size_t need = sizeof w;
    if (w.n_mounts < 0 || w.n_mounts > 4096 || w.n_filter > 4096 || w.etc_len > len)
        _exit(1);
    need += (size_t)w.n_mounts * sizeof(sl_sb_mount) + w.n_filter * sizeof(struct sock_filter) +
            w.etc_len;
    if (need != len)
        _exit(1);
    const char *at = payload + sizeof w;
    static struct sock_fprog prog;
    sl_sb_mount *mounts = malloc(sizeof *mounts * (size_t)(w.n_mounts + 1));
    struct sock_filter *filter = malloc(sizeof *filter * (w.n_filter + 1));
    char *etc = malloc(w.etc_len + 1);
    if (!mounts || !filter || !etc)
        _exit(1);
    memcpy(mounts, at, sizeof *mounts * (size_t)w.n_mounts);
    at += sizeof *mounts * (size_t)w.n_mounts;
    memcpy(filter, at, sizeof *filter * w.n_filter);
    at += sizeof *filter * w.n_filter;
    memcpy(etc, at, w.etc_len);
    etc[w.etc_len] = 0;
    for (int i = 0; i < w.n_mounts; i++) {  /* strings end inside their fields */
        mounts[i].source[sizeof mounts[i].source - 1] = 0;
        mounts[i].target[sizeof mounts[i].target - 1] = 0;
        mounts[i].link[sizeof mounts[i].link - 1] = 0;
    }
    prog.len = (unsigned short)w.n_filter;
    prog.filter = filter;
    memset(p, 0, sizeof *p);
    p->ctl = SL_SB_CTL_FD;
    p->new_net = w.new_net;
    p->shared_net = w.shared_net;
    p->proxy = w.proxy;
    p->mode = w.mode;
    p->n_ns = w.n_ns;
    if (p->mode < SL_SB_FRESH || p->mode > SL_SB_KEPT || p->n_ns < 0 || p->n_ns > 3)
        _exit(1);
    memcpy(p->data_opts, w.data_opts, sizeof p->data_opts);
    p->data_opts[sizeof p->data_opts - 1] = 0;
    p->seccomp = &prog;
    p->mounts = mounts;
    p->n_mounts = w.n_mounts;
    p->etc_files = etc;
}

/* init is a small static program of its own: the host clones with
 * CLONE_VM | CLONE_VFORK (no copy of its address space) and the child
 * execs this from a sealed memfd, the control socket on fd 3. */
int main(int argc, char **argv)
{
    ctl = SL_SB_CTL_FD;
    for (int i = 0; i < MAX_CMDS; i++)
        cmds[i].status_fd = -1;
    /* Keep nothing the host process had open but the control socket: not
     * for commands to reach, and not to hold other sandboxes' control
     * sockets or the server's listening socket open.  When the host dies
     * its end of our socket closes and init ends, taking the namespace
     * with it.  (No PR_SET_PDEATHSIG: it follows the thread that made the
     * sandbox, which may end long before the run does.) */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    syscall(SYS_close_range, (unsigned)ctl + 1, ~0U, 0);
    syscall(SYS_close_range, 0, ~0U, CLOSE_RANGE_CLOEXEC);
    prctl(PR_SET_NAME, "sluice-init", 0, 0, 0);
    /* An early init (the host started it before its plan: KEPT, as root)
     * makes its IPC namespace while it waits for GO, the one step of
     * enter_kept that needs nothing from the plan; if that fails,
     * enter_kept makes it as before. */
    if (argc > 1 && !strcmp(argv[1], "early"))
        own_ipc = unshare(CLONE_NEWIPC) == 0;
    /* wait for the host to write our uid/gid maps (FRESH); the plan comes
     * with GO, and the kept namespaces (KEPT) and, on cgroup v1, the
     * sandbox's cgroups' tasks files to join */
    int fds[8], n_fds;
    ssize_t r;
    do
        r = recv_fds(fds, 8, &n_fds);
    while (r < 0 && errno == EINTR);
    sl_sb_hdr h;
    if (r < (ssize_t)sizeof h)
        _exit(1);
    memcpy(&h, msgbuf, sizeof h);
    if (h.op != SL_OP_GO || h.len != (size_t)r - sizeof h)
        _exit(1);
    sl_sb_plan plan;
    read_plan(msgbuf + sizeof h, h.len, &plan);
    sl_sb_plan *p = &plan;
    int n_ns = p->mode == SL_SB_KEPT ? p->n_ns : 0;
    if (n_ns > n_fds || (p->mode == SL_SB_KEPT && n_ns < 2 + p->shared_net))
        _exit(1);
    /* "0" moves the writing thread, which is all of init (proto.h); this
     * comes first, so all init does is counted in the sandbox's limits */
    for (int i = n_ns; i < n_fds; i++) {
        if (write(fds[i], "0", 1) != 1)
            die("join", "the sandbox's cgroup");
        close(fds[i]);
    }
    if (p->mode == SL_SB_TEMPLATE) {
        /* the host pins our namespaces, then closes the socket */
        build_root(p, true);
        send_msg(SL_OP_READY, 0, 0, NULL, 0, -1);
        for (;;) {
            ssize_t n = recv(ctl, msgbuf, sizeof msgbuf, 0);
            if (n == 0 || (n < 0 && errno != EINTR))
                _exit(0);
        }
    }
    if (p->mode == SL_SB_KEPT) {
        enter_kept(p, fds);
    } else {
        build_root(p, false);
        if (p->new_net)
            loopback_up();
    }
    int proxy = p->proxy ? proxy_socket() : -1;
    /* The host moved us into the sandbox's cgroup meanwhile (proto.h), or
     * (KEPT, cgroup v1) sends its tasks files with PLACED; our cgroup
     * namespace is rooted where we are now. */
    do
        r = recv_fds(fds, 4, &n_fds);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof h)
        _exit(1);
    memcpy(&h, msgbuf, sizeof h);
    if (h.op != SL_OP_PLACED)
        _exit(1);
    for (int i = 0; i < n_fds; i++) {
        if (write(fds[i], "0", 1) != 1)
            die("join", "the sandbox's cgroup");
        close(fds[i]);
    }
    if (unshare(CLONE_NEWCGROUP))
        die("unshare", "cgroup namespace");
    if (p->mode == SL_SB_KEPT)
        become_user();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        die("signalfd", NULL);
    drop_privileges(p);
    send_msg(SL_OP_READY, 0, 0, NULL, 0, proxy);
    if (proxy >= 0)
        close(proxy);
    serve(sfd);
    _exit(0);
}
