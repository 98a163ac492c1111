/*
 * cgroup — see cgroup.h.
 */
#include "sandbox/local/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/local/kept.h"

enum { V1_MEMORY, V1_PIDS, V1_CPU, V1_N };
static const char *const v1_names[V1_N] = {"memory", "pids", "cpu"};

struct sl_cgroup {
    int version;           /* 1 or 2 */
    char *dirs[V1_N];      /* v1: one per controller (NULL when absent); v2: dirs[0] */
    sl_cgroup_limits limits;
    int kept_lock;         /* a group kept between processes: its slot's lock; else -1 */
    sl_cgroup *next;       /* in the pool of empty groups */
};

/* Empty groups of destroyed sandboxes, kept for the next sandbox with the
 * same limits: making a group and writing its limits costs more than
 * joining one. */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static sl_cgroup *pool;
static int pool_n;
#define POOL_MAX 8

static atomic_uint group_seq;

static int write_file(const char *dir, const char *file, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)n ? 0 : -1;
}

static int read_file(const char *dir, const char *file, char *out, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, out, n - 1);
    close(fd);
    if (r < 0)
        return -1;
    out[r] = 0;
    return 0;
}

/* The number after "key " in a flat keyed file such as memory.events. */
static unsigned long keyed(const char *dir, const char *file, const char *key)
{
    char text[1024];
    if (!dir || read_file(dir, file, text, sizeof text))
        return 0;
    size_t kl = strlen(key);
    for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, kl) && line[kl] == ' ')
            return strtoul(line + kl + 1, NULL, 10);
    return 0;
}

/* Removes groups whose sluice process is gone (crashed or killed). */
static void sweep_stale(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '-' || pid == getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        rmdir(path);
    }
    closedir(d);
}

static int rmdir_retry(const char *path)
{
    /* A group's last processes may still be leaving when we get here. */
    for (int i = 0; i < 200; i++) {
        if (!rmdir(path) || errno == ENOENT)
            return 0;
        if (errno != EBUSY)
            return -1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* ---- cgroup v2 ---- */

static bool is_cgroup2(const char *path)
{
    struct statfs s;
    return !statfs(path, &s) && s.f_type == CGROUP2_SUPER_MAGIC;
}

static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; (p = strstr(p, word)); p += n)
        if ((p == text || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
            return true;
    return false;
}

/* The directory under which this process may make v2 groups with the
 * memory and pids controllers, or NULL with *why. */
static char *v2_parent(const char **why)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *cached;
    static const char *cached_why;
    static bool done;
    pthread_mutex_lock(&lock);
    if (done)
        goto out;
    done = true;
    const char *root = is_cgroup2("/sys/fs/cgroup")           ? "/sys/fs/cgroup"
                       : is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified"
                                                              : NULL;
    if (!root) {
        cached_why = "no cgroup2 file system is mounted";
        goto out;
    }
    char text[4096], own[1024] = "";
    if (read_file("/proc/self", "cgroup", text, sizeof text)) {
        cached_why = "/proc/self/cgroup cannot be read";
        goto out;
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (!strncmp(line, "0::", 3))
            snprintf(own, sizeof own, "%s", line + 3);
    char base[1536];
    snprintf(base, sizeof base, "%s%s", root, strcmp(own, "/") ? own : "");
    char ctl[256];
    if (read_file(base, "cgroup.controllers", ctl, sizeof ctl) || !has_word(ctl, "memory") ||
        !has_word(ctl, "pids")) {
        cached_why = "the cgroup2 hierarchy does not offer the memory and pids controllers";
        goto out;
    }
    if (access(base, W_OK)) {
        cached_why = "this user's cgroup is not delegated (not writable)";
        goto out;
    }
    char parent[1600];
    if (!strcmp(own, "/") || !own[0]) {
        snprintf(parent, sizeof parent, "%s/sluice", root);
        if (mkdir(parent, 0755) && errno != EEXIST) {
            cached_why = "cannot create /sys/fs/cgroup/sluice";
            goto out;
        }
        write_file(root, "cgroup.subtree_control", "+memory +pids +cpu");
    } else {
        /* A delegated cgroup may hand controllers to children only when no
         * process lives in it, so sluice moves itself into a leaf first. */
        char leaf[1600];
        snprintf(leaf, sizeof leaf, "%s/supervisor", base);
        if ((mkdir(leaf, 0755) && errno != EEXIST) || write_file(leaf, "cgroup.procs", "0")) {
            cached_why = "cannot move sluice into a leaf of its delegated cgroup";
            goto out;
        }
        snprintf(parent, sizeof parent, "%s", base);
    }
    write_file(parent, "cgroup.subtree_control", "+memory +pids +cpu");
    char sub[256];
    if (read_file(parent, "cgroup.subtree_control", sub, sizeof sub) || !has_word(sub, "memory") ||
        !has_word(sub, "pids")) {
        cached_why = "the memory and pids controllers cannot be enabled for sluice's groups";
        goto out;
    }
    cached = sl_xstrdup(parent);
    sweep_stale(cached);
out:
    *why = cached_why;
    pthread_mutex_unlock(&lock);
    return cached;
}

/* A group's name: <pid>-<n>, or the kept group's (kept != NULL). */
static char *group_path(const char *parent, const char *kept, unsigned seq)
{
    return kept ? sl_xasprintf("%s/%s", parent, kept)
                : sl_xasprintf("%s/%ld-%u", parent, (long)getpid(), seq);
}

/* A kept group is used as it is when it is there (its name says its
 * limits, which it got when made) and empty. */
static bool group_empty(const sl_cgroup *cg);

static int v2_create(const sl_cgroup_limits *l, sl_cgroup **out, const char **why, const char *kept)
{
    char *parent = v2_parent(why);
    if (!parent)
        return -1;
    sl_cgroup *cg = sl_xcalloc(1, sizeof *cg);
    cg->version = 2;
    cg->kept_lock = -1;
    cg->dirs[0] = group_path(parent, kept, atomic_fetch_add(&group_seq, 1));
    if (kept && !access(cg->dirs[0], F_OK)) {
        if (group_empty(cg)) {
            *out = cg;
            return 0;
        }
        *why = "a kept cgroup2 group is not empty";
        free(cg->dirs[0]);
        free(cg);
        return -1;
    }
    if (mkdir(cg->dirs[0], 0755)) {
        *why = "cannot create a cgroup2 group";
        free(cg->dirs[0]);
        free(cg);
        return -1;
    }
    /* memory.max covers everything a sandbox can pin: its processes'
     * memory, shared memory and tmpfs files, and the kernel's memory on its
     * behalf, pipe and socket buffers included. */
    char v[64];
    if (l->memory_bytes) {
        snprintf(v, sizeof v, "%" PRIu64, l->memory_bytes);
        if (write_file(cg->dirs[0], "memory.max", v)) {
            *why = "cannot set memory.max of a cgroup2 group";
            goto fail;
        }
        write_file(cg->dirs[0], "memory.swap.max", "0");  /* where swap is accounted */
    }
    if (l->max_procs) {
        snprintf(v, sizeof v, "%d", l->max_procs);
        if (write_file(cg->dirs[0], "pids.max", v)) {
            *why = "cannot set pids.max of a cgroup2 group";
            goto fail;
        }
    }
    if (l->cpu_cores > 0) {
        snprintf(v, sizeof v, "%ld 100000", (long)(l->cpu_cores * 100000));
        write_file(cg->dirs[0], "cpu.max", v);
    }
    *out = cg;
    return 0;
fail:
    rmdir(cg->dirs[0]);
    free(cg->dirs[0]);
    free(cg);
    return -1;
}

/* ---- cgroup v1 ---- */

static const char *v1_probe(void)
{
    /* the root group of the pids hierarchy has no pids.max of its own */
    static const char *const probe[V1_N] = {"memory.limit_in_bytes", "cgroup.procs",
                                            "cpu.cfs_quota_us"};
    for (int i = 0; i < 2; i++) {  /* memory and pids are required; cpu is optional */
        char path[256];
        snprintf(path, sizeof path, "/sys/fs/cgroup/%s/%s", v1_names[i], probe[i]);
        if (access(path, F_OK))
            return i == V1_MEMORY ? "the cgroup v1 memory controller is not mounted"
                                  : "the cgroup v1 pids controller is not mounted";
        snprintf(path, sizeof path, "/sys/fs/cgroup/%s", v1_names[i]);
        if (access(path, W_OK))
            return "the cgroup v1 hierarchies are not writable by this user (they need root)";
    }
    return NULL;
}

static int v1_create(const sl_cgroup_limits *l, sl_cgroup **out, const char **why, const char *kept)
{
    if ((*why = v1_probe()))
        return -1;
    sl_cgroup *cg = sl_xcalloc(1, sizeof *cg);
    cg->version = 1;
    cg->kept_lock = -1;
    unsigned seq = atomic_fetch_add(&group_seq, 1);
    bool there = true;
    for (int i = 0; i < V1_N; i++) {
        /* no CPU cap asked for: no cpu group to make, join and remove */
        if (i == V1_CPU && (l->cpu_cores <= 0 || access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK)))
            continue;
        char parent[256];
        snprintf(parent, sizeof parent, "/sys/fs/cgroup/%s/sluice", v1_names[i]);
        cg->dirs[i] = group_path(parent, kept, seq);
        there = there && kept && !access(cg->dirs[i], F_OK);
    }
    if (there) {
        if (group_empty(cg)) {
            *out = cg;
            return 0;
        }
        *why = "a kept cgroup v1 group is not empty";
        for (int i = 0; i < V1_N; i++)
            free(cg->dirs[i]);
        free(cg);
        return -1;
    }
    for (int i = 0; i < V1_N; i++) {
        if (!cg->dirs[i])
            continue;
        char parent[256];
        snprintf(parent, sizeof parent, "/sys/fs/cgroup/%s/sluice", v1_names[i]);
        if (mkdir(parent, 0755) && errno != EEXIST)
            goto fail;
        if (mkdir(cg->dirs[i], 0755) && !(kept && errno == EEXIST)) {
            free(cg->dirs[i]);
            cg->dirs[i] = NULL;
            goto fail;
        }
    }
    char v[64];
    if (l->memory_bytes) {
        /* memory.limit_in_bytes covers the processes' memory, shared memory
         * and tmpfs files, and kernel memory (pipe buffers, page tables,
         * ...), which v1 charges there too on every kernel sluice runs on
         * (memory.kmem.limit_in_bytes is deprecated and does nothing). */
        snprintf(v, sizeof v, "%" PRIu64, l->memory_bytes);
        if (write_file(cg->dirs[V1_MEMORY], "memory.limit_in_bytes", v))
            goto fail;
        write_file(cg->dirs[V1_MEMORY], "memory.memsw.limit_in_bytes", v); /* when swap is accounted */
        write_file(cg->dirs[V1_MEMORY], "memory.swappiness", "0");
        /* Socket buffers are the exception: v1 charges them to a counter of
         * their own, and only once that counter has a limit.  Without one,
         * unread loopback TCP and UDP data pinned gigabytes under a 64 MiB
         * limit.  They get a quarter of the limit, on top of it; past it the
         * kernel still grants each TCP socket a segment, which local.c
         * watches for (see cgroup.h). */
        snprintf(v, sizeof v, "%" PRIu64, sl_cgroup_v1_socket_bytes(l->memory_bytes));
        if (write_file(cg->dirs[V1_MEMORY], "memory.kmem.tcp.limit_in_bytes", v)) {
            sl_cgroup_destroy(cg);
            *why = "this kernel's cgroup v1 cannot limit socket buffers "
                   "(memory.kmem.tcp.limit_in_bytes is missing or refused)";
            return -1;
        }
    }
    if (l->max_procs) {
        snprintf(v, sizeof v, "%d", l->max_procs);
        if (write_file(cg->dirs[V1_PIDS], "pids.max", v))
            goto fail;
    }
    if (l->cpu_cores > 0 && cg->dirs[V1_CPU]) {
        write_file(cg->dirs[V1_CPU], "cpu.cfs_period_us", "100000");
        snprintf(v, sizeof v, "%ld", (long)(l->cpu_cores * 100000));
        write_file(cg->dirs[V1_CPU], "cpu.cfs_quota_us", v);
    }
    *out = cg;
    return 0;
fail:
    *why = "cannot create or configure a cgroup v1 group";
    sl_cgroup_destroy(cg);
    return -1;
}

static void sweep_v1(void)
{
    for (int i = 0; i < V1_N; i++) {
        char parent[256];
        snprintf(parent, sizeof parent, "/sys/fs/cgroup/%s/sluice", v1_names[i]);
        sweep_stale(parent);
    }
}

static bool same_limits(const sl_cgroup_limits *a, const sl_cgroup_limits *b)
{
    return a->memory_bytes == b->memory_bytes && a->max_procs == b->max_procs &&
           a->cpu_cores == b->cpu_cores;
}

uint64_t sl_cgroup_v1_socket_bytes(uint64_t memory_bytes)
{
    return memory_bytes / 4;
}

/* Booting with cgroup.memory=nokmem or =nosocket stops the charging of
 * kernel memory or socket buffers to memory cgroups (v1 and v2), which
 * would leave pipe and socket buffers unbounded under a memory limit. */
static const char *memcg_gaps(void)
{
    char line[4096];
    if (read_file("/proc", "cmdline", line, sizeof line))
        return NULL;
    for (char *p = line; (p = strstr(p, "cgroup.memory=")); p++) {
        size_t n = strcspn(p, " \n");
        char opt[256];
        snprintf(opt, sizeof opt, "%.*s", (int)(n < sizeof opt ? n : sizeof opt - 1), p);
        if (strstr(opt, "nokmem"))
            return "the kernel was booted with cgroup.memory=nokmem, so kernel memory (pipe "
                   "buffers, page tables) is not charged to memory cgroups";
        if (strstr(opt, "nosocket"))
            return "the kernel was booted with cgroup.memory=nosocket, so socket buffers are "
                   "not charged to memory cgroups";
    }
    return NULL;
}

/* The limits, as part of a kept group's name. */
static unsigned limits_key(const sl_cgroup_limits *l)
{
    char text[96];
    snprintf(text, sizeof text, "%" PRIu64 " %d %.3f", l->memory_bytes, l->max_procs, l->cpu_cores);
    unsigned h = 2166136261u;
    for (const char *p = text; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

int sl_cgroup_create(const sl_cgroup_limits *l, sl_cgroup **out, sl_err *err)
{
    static pthread_once_t swept = PTHREAD_ONCE_INIT;
    const char *why2 = NULL, *why1 = NULL;
    *out = NULL;
    pthread_mutex_lock(&pool_mu);
    for (sl_cgroup **p = &pool; *p; p = &(*p)->next)
        if (same_limits(&(*p)->limits, l)) {
            *out = *p;
            *p = (*p)->next;
            pool_n--;
            break;
        }
    pthread_mutex_unlock(&pool_mu);
    if (*out)
        return 0;
    const char *gap = l->memory_bytes ? memcg_gaps() : NULL;
    if (gap)
        return sl_err_set(err, SL_EUNSUPPORTED, "%s", gap);
    /* Root keeps groups between processes (kept.h): kept-ID-KEY-N, where
     * ID names the kept folder and KEY says the limits, held by the lock
     * of slot cg-KEY-N in that folder. */
    char kind[40], kept[64];
    snprintf(kind, sizeof kind, "cg-%08x", limits_key(l));
    int slot, lock = sl_kept_lock(kind, 64, &slot);
    snprintf(kept, sizeof kept, "kept-%s-%s-%d", sl_kept_id(), kind + 3, slot);
    for (int k = lock >= 0 ? 0 : 1; k < 2; k++) {
        const char *name = k == 0 ? kept : NULL;
        if (!v2_create(l, out, &why2, name)) {
            (*out)->limits = *l;
            (*out)->kept_lock = name ? lock : -1;
            return 0;
        }
        if (!name)  /* groups of dead processes are <pid>-<n>, never kept ones */
            pthread_once(&swept, sweep_v1);
        if (!v1_create(l, out, &why1, name)) {
            (*out)->limits = *l;
            (*out)->kept_lock = name ? lock : -1;
            return 0;
        }
        if (lock >= 0)
            close(lock);  /* not usable: a group of our own */
        lock = -1;
    }
    return sl_err_set(err, SL_EUNSUPPORTED, "no usable cgroup: v2: %s; v1: %s",
                      why2 ? why2 : "unusable", why1 ? why1 : "unusable");
}

int sl_cgroup_attach(sl_cgroup *cg, pid_t pid, sl_err *err)
{
    char v[32];
    snprintf(v, sizeof v, "%ld", (long)pid);
    for (int i = 0; i < V1_N; i++) {
        if (!cg->dirs[i])
            continue;
        if (write_file(cg->dirs[i], "cgroup.procs", v))
            return sl_err_set(err, SL_EIO, "cannot move the sandbox into %s: %s", cg->dirs[i],
                              strerror(errno));
    }
    return 0;
}

int sl_cgroup_join_fds(sl_cgroup *cg, int *fds, int max, sl_err *err)
{
    int n = 0;
    if (cg->version != 1)
        return 0;
    for (int i = 0; i < V1_N; i++) {
        if (!cg->dirs[i])
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/tasks", cg->dirs[i]);
        int fd = n < max ? open(path, O_WRONLY | O_CLOEXEC) : -1;
        if (fd < 0) {
            int e = n < max ? errno : EMFILE;
            while (n)
                close(fds[--n]);
            return sl_err_set(err, SL_EIO, "cannot open %s: %s", path, strerror(e));
        }
        fds[n++] = fd;
    }
    return n;
}

void sl_cgroup_events_read(sl_cgroup *cg, sl_cgroup_events *ev)
{
    memset(ev, 0, sizeof *ev);
    if (!cg)
        return;
    if (cg->version == 2) {
        ev->oom_kills = keyed(cg->dirs[0], "memory.events", "oom_kill");
        ev->pids_max = keyed(cg->dirs[0], "pids.events", "max");
    } else {
        ev->oom_kills = keyed(cg->dirs[V1_MEMORY], "memory.oom_control", "oom_kill");
        ev->pids_max = keyed(cg->dirs[V1_PIDS], "pids.events", "max");
    }
}

uint64_t sl_cgroup_v1_socket_usage(const sl_cgroup *cg)
{
    char text[64];
    if (!cg || cg->version != 1 || !cg->dirs[V1_MEMORY] ||
        read_file(cg->dirs[V1_MEMORY], "memory.kmem.tcp.usage_in_bytes", text, sizeof text))
        return 0;
    return strtoull(text, NULL, 10);
}

const char *sl_cgroup_kind(const sl_cgroup *cg)
{
    return cg->version == 2 ? "cgroup v2" : "cgroup v1";
}

/* True when no process is left in the group. */
static bool group_empty(const sl_cgroup *cg)
{
    for (int i = 0; i < V1_N; i++) {
        char text[64];
        if (cg->dirs[i] && (read_file(cg->dirs[i], "cgroup.procs", text, sizeof text) || text[0]))
            return false;
    }
    return true;
}


void sl_cgroup_release(sl_cgroup *cg)
{
    if (!cg)
        return;
    pthread_mutex_lock(&pool_mu);
    if (pool_n < POOL_MAX && group_empty(cg)) {
        cg->next = pool;
        pool = cg;
        pool_n++;
        cg = NULL;
    }
    pthread_mutex_unlock(&pool_mu);
    sl_cgroup_destroy(cg);
}

void sl_cgroup_pool_drain(void)
{
    pthread_mutex_lock(&pool_mu);
    sl_cgroup *p = pool;
    pool = NULL;
    pool_n = 0;
    pthread_mutex_unlock(&pool_mu);
    while (p) {
        sl_cgroup *next = p->next;
        sl_cgroup_destroy(p);
        p = next;
    }
}

void sl_cgroup_destroy(sl_cgroup *cg)
{
    if (!cg)
        return;
    for (int i = 0; i < V1_N; i++) {
        if (!cg->dirs[i])
            continue;
        if (cg->kept_lock < 0)
            rmdir_retry(cg->dirs[i]);
        free(cg->dirs[i]);
    }
    if (cg->kept_lock >= 0)
        close(cg->kept_lock);  /* the next sandbox, here or elsewhere, takes it */
    free(cg);
}

/* Removes one kept-* group of parent when its slot is free. */
static int clean_kept_in(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char id[16], key[16];
        int slot;
        if (sscanf(e->d_name, "kept-%15[0-9a-f]-%15[0-9a-f]-%d", id, key, &slot) != 3 ||
            strcmp(id, sl_kept_id()))
            continue;  /* another kept folder's */
        char lock[64];
        snprintf(lock, sizeof lock, "cg-%s-%d", key, slot);
        int l = sl_kept_try(lock);
        if (l < 0)
            continue;  /* in use */
        char path[512];
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        n += !rmdir(path);
        close(l);
    }
    closedir(d);
    return n;
}

int sl_cgroup_clean_kept(void)
{
    int n = 0;
    for (int i = 0; i < V1_N; i++) {
        char parent[256];
        snprintf(parent, sizeof parent, "/sys/fs/cgroup/%s/sluice", v1_names[i]);
        n += clean_kept_in(parent);
    }
    const char *why;
    char *v2 = v2_parent(&why);
    if (v2)
        n += clean_kept_in(v2);
    return n;
}
