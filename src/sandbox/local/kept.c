/*
 * kept — namespaces kept between processes (see kept.h).
 */
#include "sandbox/local/kept.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

#define KEPT_DEFAULT "/run/sluice"
#define NET_SLOTS 64
#define MAX_ROOTS 32 /* plans kept at once; past it the others are let go */

static struct {
    pthread_once_t once;
    int dir;          /* the checked folder, or -1 */
    char path[256];
    char note[400];
    char id[12];
    struct stat userns; /* our user namespace, the owner every pin must have */
} kept = {.once = PTHREAD_ONCE_INIT, .dir = -1};

/* The folder's flock is held by its open file description, which every
 * thread here shares: threads take this first. */
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;

static void refuse(const char *fmt, const char *a)
{
    snprintf(kept.note, sizeof kept.note, fmt, a, strerror(errno));
}

/* The folder: made if missing; used only when it is a directory owned by
 * root with no access for anyone else, inside a folder that is root's and
 * that nobody else may change (or sticky, like /tmp). */
static void open_kept(void)
{
    const char *path = getenv("SLUICE_SANDBOX_KEPT");
    if (!path || !*path)
        path = KEPT_DEFAULT;
    if (!strcmp(path, "off")) {
        snprintf(kept.note, sizeof kept.note, "off (SLUICE_SANDBOX_KEPT=off)");
        return;
    }
    if (geteuid() != 0) {
        snprintf(kept.note, sizeof kept.note, "not used: only root keeps namespaces");
        return;
    }
    if (path[0] != '/' || strlen(path) >= sizeof kept.path) {
        snprintf(kept.note, sizeof kept.note,
                 "not used: SLUICE_SANDBOX_KEPT must be an absolute path");
        return;
    }
    snprintf(kept.path, sizeof kept.path, "%s", path);
    char parent[256];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash == parent)
        slash[1] = 0;
    else
        *slash = 0;
    struct stat pst, st;
    if (stat(parent, &pst)) {
        refuse("not used: %s: %s", parent);
        return;
    }
    if (pst.st_uid != 0 || ((pst.st_mode & 022) && !(pst.st_mode & S_ISVTX))) {
        snprintf(kept.note, sizeof kept.note,
                 "not used: %s may be changed by users other than root", parent);
        return;
    }
    /* made only the first time: opening it is one path walk less */
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (mkdir(path, 0700) && errno != EEXIST) {
            refuse("not used: cannot make %s: %s", path);
            return;
        }
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        refuse("not used: %s: %s", path);
        return;
    }
    if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 077)) {
        close(fd);
        snprintf(kept.note, sizeof kept.note,
                 "not used: %s must be a folder owned by root with mode 0700", path);
        return;
    }
    if (stat("/proc/self/ns/user", &kept.userns)) {
        close(fd);
        refuse("not used: %s: %s", "/proc/self/ns/user");
        return;
    }
    kept.dir = fd;
    snprintf(kept.id, sizeof kept.id, "%08x",
             (unsigned)((st.st_dev * 0x9e3779b97f4a7c15ULL) ^ st.st_ino) & 0xffffffffu);
    snprintf(kept.note, sizeof kept.note, "kept in %s (sluice sandbox clean removes them)",
             path);
}

bool sl_kept_usable(void)
{
    pthread_once(&kept.once, open_kept);
    return kept.dir >= 0;
}

const char *sl_kept_note(void)
{
    pthread_once(&kept.once, open_kept);
    return kept.note;
}

/* A pin, opened and checked: a namespace file of type `type` owned by our
 * user namespace.  -1 when missing (errno ENOENT) or not one. */
static int open_pin(const char *name, int type)
{
    int fd = openat(kept.dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct statfs sf;
    if (fstatfs(fd, &sf) || sf.f_type != NSFS_MAGIC || ioctl(fd, NS_GET_NSTYPE) != type) {
        close(fd);
        errno = EINVAL;  /* an empty file: a pin that failed, or not ours */
        return -1;
    }
    int owner = ioctl(fd, NS_GET_USERNS);
    struct stat st;
    bool ours = owner >= 0 && !fstat(owner, &st) && st.st_ino == kept.userns.st_ino &&
                st.st_dev == kept.userns.st_dev;
    if (owner >= 0)
        close(owner);
    if (!ours) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* Pins /proc/PID/ns/NS as `name` (an empty file first, the mount point). */
static int pin(const char *name, pid_t pid, const char *ns)
{
    int fd = openat(kept.dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* an earlier pin that failed left its empty file, or one that did
         * not check out is still mounted there */
        char path[96];
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", kept.dir, name);
        umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        if (unlinkat(kept.dir, name, 0))
            return -1;
        fd = openat(kept.dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return -1;
    close(fd);
    char src[64], dst[96];
    snprintf(src, sizeof src, "/proc/%ld/ns/%s", (long)pid, ns);
    snprintf(dst, sizeof dst, "/proc/self/fd/%d/%s", kept.dir, name);
    if (mount(src, dst, NULL, MS_BIND, NULL)) {
        int e = errno;
        unlinkat(kept.dir, name, 0);
        errno = e;
        return -1;
    }
    return 0;
}

/* Unpins every kept root but `keep` when MAX_ROOTS are kept (each new
 * sluice build, or a new host file, makes a new one): sandboxes using one
 * hold their own references, so only the next ones build it again. */
static void evict_roots(const char *keep)
{
    int fd = dup(kept.dir), n = 0;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d));)
        n += !strncmp(e->d_name, "root-", 5);
    rewinddir(d);
    for (struct dirent *e; n >= MAX_ROOTS && (e = readdir(d));) {
        const char *dash = strchr(e->d_name, '-');
        if ((strncmp(e->d_name, "root-", 5) && strncmp(e->d_name, "uts-", 4)) || !dash ||
            !strcmp(dash, keep))
            continue;
        char path[400];
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", kept.dir, e->d_name);
        umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        unlinkat(kept.dir, e->d_name, 0);
    }
    closedir(d);
}

int sl_kept_root(uint64_t hash, sl_kept_build_fn build, void *arg, void (*done)(void *arg),
                 int fds[2], sl_err *err)
{
    if (!sl_kept_usable())
        return sl_err_set(err, SL_EUNSUPPORTED, "kept namespaces: %s", kept.note);
    char root[40], uts[40];
    snprintf(root, sizeof root, "root-%016" PRIx64, hash);
    snprintf(uts, sizeof uts, "uts-%016" PRIx64, hash);
    fds[0] = open_pin(root, CLONE_NEWNS);
    fds[1] = fds[0] >= 0 ? open_pin(uts, CLONE_NEWUTS) : -1;
    if (fds[1] >= 0)
        return 0;
    if (fds[0] >= 0)
        close(fds[0]);
    fds[0] = -1;
    /* Missing: one process builds it (the folder's lock), the others wait
     * for it and use it. */
    pthread_mutex_lock(&build_mu);
    if (flock(kept.dir, LOCK_EX)) {
        pthread_mutex_unlock(&build_mu);
        return sl_err_set(err, SL_EIO, "kept namespaces: lock %s: %s", kept.path,
                          strerror(errno));
    }
    int rc = 0;
    fds[0] = open_pin(root, CLONE_NEWNS);
    fds[1] = fds[0] >= 0 ? open_pin(uts, CLONE_NEWUTS) : -1;
    if (fds[1] < 0) {
        if (fds[0] >= 0)
            close(fds[0]);
        fds[0] = -1;
        evict_roots(strchr(root, '-'));
        pid_t pid = build(arg, err);
        if (pid < 0) {
            rc = -1;
        } else {
            if (pin(root, pid, "mnt") || pin(uts, pid, "uts"))
                rc = sl_err_set(err, SL_EIO, "kept namespaces: pin %s in %s: %s", root,
                                kept.path, strerror(errno));
            done(arg);
            if (!rc) {
                fds[0] = open_pin(root, CLONE_NEWNS);
                fds[1] = fds[0] >= 0 ? open_pin(uts, CLONE_NEWUTS) : -1;
                if (fds[1] < 0)
                    rc = sl_err_set(err, SL_EIO, "kept namespaces: %s did not check out", root);
            }
        }
    }
    flock(kept.dir, LOCK_UN);
    pthread_mutex_unlock(&build_mu);
    if (rc) {
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        fds[0] = fds[1] = -1;
    }
    return rc;
}

int sl_kept_lock(const char *kind, int max, int *slot)
{
    *slot = -1;
    if (!sl_kept_usable())
        return -1;
    for (int i = 0; i < max; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s-%d.lock", kind, i);
        int l = openat(kept.dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (l < 0)
            return -1;
        if (!flock(l, LOCK_EX | LOCK_NB)) {
            *slot = i;
            return l;
        }
        close(l);  /* another sandbox's */
    }
    return -1;
}

const char *sl_kept_id(void)
{
    return sl_kept_usable() ? kept.id : "";
}

int sl_kept_try(const char *name)
{
    if (!sl_kept_usable())
        return -1;
    char file[96];
    snprintf(file, sizeof file, "%s.lock", name);
    int l = openat(kept.dir, file, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (l >= 0 && flock(l, LOCK_EX | LOCK_NB)) {
        close(l);
        l = -1;
    }
    return l;
}

int sl_kept_net_take(int *lock, int *slot)
{
    int i;
    *slot = -1;
    *lock = sl_kept_lock("net", NET_SLOTS, &i);
    if (*lock < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "net-%d", i);
    int ns = open_pin(name, CLONE_NEWNET);
    if (ns < 0)
        *slot = i;  /* free to fill */
    return ns;
}

void sl_kept_net_fill(int slot, pid_t pid)
{
    char name[32];
    snprintf(name, sizeof name, "net-%d", slot);
    if (pin(name, pid, "net")) {
        /* the sandbox runs all the same; the next one makes its own */
    }
}

int sl_kept_clean(sl_buf *out, sl_err *err)
{
    if (!sl_kept_usable())
        return sl_err_set(err, SL_EUNSUPPORTED, "kept namespaces: %s", kept.note);
    pthread_mutex_lock(&build_mu);
    if (flock(kept.dir, LOCK_EX)) {
        pthread_mutex_unlock(&build_mu);
        return sl_err_set(err, SL_EIO, "lock %s: %s", kept.path, strerror(errno));
    }
    int fd = dup(kept.dir);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        flock(kept.dir, LOCK_UN);
        pthread_mutex_unlock(&build_mu);
        return sl_err_set(err, SL_EIO, "read %s: %s", kept.path, strerror(errno));
    }
    rewinddir(d);
    int roots = 0, nets = 0, busy = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        bool is_root = !strncmp(n, "root-", 5) || !strncmp(n, "uts-", 4);
        bool is_net = !strncmp(n, "net-", 4) && !strstr(n, ".lock");
        if (!is_root && !is_net)
            continue;
        int lock = -1;
        if (is_net) {
            char ln[300];
            snprintf(ln, sizeof ln, "%s.lock", n);
            lock = openat(kept.dir, ln, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
            if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB)) {
                close(lock);
                busy++;
                continue;
            }
        }
        char path[400];
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", kept.dir, n);
        umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        if (!unlinkat(kept.dir, n, 0))
            roots += !strncmp(n, "root-", 5), nets += is_net;
        if (lock >= 0)
            close(lock);
    }
    closedir(d);
    flock(kept.dir, LOCK_UN);
    pthread_mutex_unlock(&build_mu);
    sl_buf_addf(out, "removed %d kept root namespaces and %d network namespaces from %s", roots,
                nets, kept.path);
    if (busy)
        sl_buf_addf(out, " (%d in use, left)", busy);
    sl_buf_addc(out, '\n');
    return 0;
}
