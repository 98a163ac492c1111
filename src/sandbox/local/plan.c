/*
 * plan — see plan.h.
 */
#include "sandbox/local/plan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void add_mount(sl_sb_mount **ms, int *n, const char *source, const char *target,
                      bool required, bool device)
{
    struct stat st;
    if (lstat(source, &st) && !required)
        return;
    *ms = sl_xrealloc(*ms, sizeof **ms * (size_t)(*n + 1));
    sl_sb_mount *m = &(*ms)[(*n)++];
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", source);
    snprintf(m->target, sizeof m->target, "%s", target);
    m->required = required;
    m->device = device;
    m->fd = -1;
    if (S_ISLNK(st.st_mode) && !required) {
        ssize_t l = readlink(source, m->link, sizeof m->link - 1);
        if (l > 0) {
            m->link[l] = 0;
            m->is_link = true;
        }
    }
    if (required) {
        if (stat(source, &st) == 0)
            m->is_file = !S_ISDIR(st.st_mode);
    } else {
        m->is_file = !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode);
    }
}

static const char *const root_dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                        "/libx32"};
/* What programs need from the host's /etc, and nothing secret (no passwd,
 * shadow, keys or the host's name).  Folders are bound read-only; small
 * files are copied into the sandbox's own /etc, which costs less than a
 * mount each.  Read once per process. */
static const char *const etc_dirs[] = {"ssl", "ca-certificates", "alternatives", "python3",
                                       "python3.11", "python3.12", "python3.13"};
static const char *const etc_copies[] = {"localtime", "timezone",
                                         "protocols", "services", "profile", "bash.bashrc",
                                         "inputrc", "environment"};
/* Files that can hold credentials (index tokens, git and wget passwords):
 * copied only when sluice.yml asks, `sandbox.local.host_etc: [pip.conf]`. */
static const char *const etc_optional[] = {"pip.conf", "npmrc", "gitconfig", "wgetrc", NULL};
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom"};

static void etc_record(sl_buf *b, const char *name, const char *data, size_t n)
{
    sl_buf_add(b, name, strlen(name) + 1);
    sl_buf_addf(b, "%zu", n);
    sl_buf_addc(b, 0);
    sl_buf_add(b, data, n);
}

static void etc_text(sl_buf *b, const char *name, const char *text)
{
    etc_record(b, name, text, strlen(text));
}

/* The part of the plan that is the same for every sandbox of this process.
 * The host's files are read only when a root is built here (a kept root
 * is found by their fingerprints: name, size, modification time, inode). */
static struct {
    pthread_once_t once, copies_once, mounts_once;
    sl_buf etc;            /* generated files */
    sl_buf copies;         /* the host's etc_copies, read on first need */
    sl_buf prints;         /* their fingerprints */
    sl_sb_mount *mounts;   /* root dirs, /etc folders, devices */
    int n_mounts;
} base_plan = {.once = PTHREAD_ONCE_INIT, .copies_once = PTHREAD_ONCE_INIT,
               .mounts_once = PTHREAD_ONCE_INIT};

/* Appends what identifies a folder's entries: its device, inode and
 * modification time, which any entry made, removed or renamed in it
 * changes (a symlink replaced, a folder added, ldconfig's new cache). */
static void dir_print(sl_buf *b, const char *path)
{
    struct stat st;
    sl_buf_add(b, path, strlen(path) + 1);
    if (stat(path, &st))
        sl_buf_adds(b, "-");
    else
        sl_buf_addf(b, "%lld.%09ld %llu %llu", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                    (unsigned long long)st.st_ino, (unsigned long long)st.st_dev);
    sl_buf_addc(b, 0);
}

/* Appends what identifies the host's /etc/NAME (or that it is missing). */
static void etc_print(sl_buf *b, const char *name)
{
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "/etc/%s", name);
    sl_buf_add(b, name, strlen(name) + 1);
    if (stat(path, &st))
        sl_buf_adds(b, "-");
    else
        sl_buf_addf(b, "%lld.%09ld %lld %llu %llu", (long long)st.st_mtim.tv_sec,
                    st.st_mtim.tv_nsec, (long long)st.st_size, (unsigned long long)st.st_ino,
                    (unsigned long long)st.st_dev);
    sl_buf_addc(b, 0);
}

/* Appends the host's /etc/NAME as a record, when it is there. */
static void etc_host_copy(sl_buf *b, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/etc/%s", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    sl_buf data;
    sl_buf_init(&data, 1u << 20);
    sl_buf_add_file(&data, f);
    fclose(f);
    if (!data.toobig)
        etc_record(b, name, data.data ? data.data : "", data.len);
    sl_buf_release(&data);
}

static void build_base_plan(void)
{
    sl_buf *b = &base_plan.etc;
    sl_buf_init(b, 64u << 20);
    etc_text(b, "passwd", "root:x:0:0:root:/root:/bin/sh\n"
                          "sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh\n"
                          "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    etc_text(b, "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
    etc_text(b, "hostname", "sandbox\n");
    etc_text(b, "hosts", "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost\n");
    etc_text(b, "nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"
                                 "networks: files\nprotocols: files\nservices: files\n");
    etc_text(b, "resolv.conf", "# no DNS in this sandbox: use the proxy (HTTPS_PROXY)\n");
    /* What the binds and copies are made of, for finding a kept root:
     * the folders that hold the bound paths (and /usr, a mount point of
     * its own on some hosts), and each copied file. */
    static const char *const dirs[] = {"/", "/usr", "/etc", "/dev"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        dir_print(&base_plan.prints, dirs[i]);
    for (size_t i = 0; i < sizeof etc_copies / sizeof *etc_copies; i++)
        etc_print(&base_plan.prints, etc_copies[i]);
}

/* The binds every sandbox has, on first need (a kept root has them). */
static void build_base_mounts(void)
{
    for (size_t i = 0; i < sizeof root_dirs / sizeof *root_dirs; i++)
        add_mount(&base_plan.mounts, &base_plan.n_mounts, root_dirs[i], root_dirs[i], false,
                  false);
    /* init writes these into the sandbox's own root: a bind of a host
     * folder would show its host path in /proc/self/mountinfo */
    /* ld.so.cache can be larger than the plan message: bound, read-only */
    struct stat lst;
    if (!stat("/etc/ld.so.cache", &lst) && S_ISREG(lst.st_mode))
        add_mount(&base_plan.mounts, &base_plan.n_mounts, "/etc/ld.so.cache", "/etc/ld.so.cache",
                  false, false);
    for (size_t i = 0; i < sizeof etc_dirs / sizeof *etc_dirs; i++) {
        char src[128];
        snprintf(src, sizeof src, "/etc/%s", etc_dirs[i]);
        add_mount(&base_plan.mounts, &base_plan.n_mounts, src, src, false, false);
    }
    for (size_t i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++) {
        char src[64];
        snprintf(src, sizeof src, "/dev/%s", dev_nodes[i]);
        add_mount(&base_plan.mounts, &base_plan.n_mounts, src, src, true, true);
    }
}

/* A sandbox's binds: everyone's, resolv.conf for the open network, the
 * user's (--bind).  The caller frees. */
sl_sb_mount *sl_plan_mounts(const sl_sandbox_opts *o, int *n)
{
    pthread_once(&base_plan.mounts_once, build_base_mounts);
    int nm = base_plan.n_mounts;
    sl_sb_mount *ms = sl_xmalloc(sizeof *ms * (size_t)(nm + 1));
    memcpy(ms, base_plan.mounts, sizeof *ms * (size_t)nm);
    if (o->net == SL_NET_OPEN)
        add_mount(&ms, &nm, "/etc/resolv.conf", "/etc/resolv.conf", false, false);
    for (size_t i = 0; i < o->n_binds; i++) {
        char target[512];
        const char *t = o->binds[i].target;
        if (t[0] != '/') {  /* relative to the workspace */
            snprintf(target, sizeof target, "/workspace/%s", t);
            t = target;
        }
        add_mount(&ms, &nm, o->binds[i].host, t, true, false);
    }
    *n = nm;
    return ms;
}

static void read_copies(void)
{
    sl_buf_init(&base_plan.copies, 64u << 20);
    for (size_t i = 0; i < sizeof etc_copies / sizeof *etc_copies; i++)
        etc_host_copy(&base_plan.copies, etc_copies[i]);
}

/* The records of a sandbox's whole /etc (generated files, the host's
 * copies, sluice.yml's host_etc), NUL-terminated; *len counts the NUL. */
char *sl_plan_etc(const sl_value *host_etc, size_t *len)
{
    pthread_once(&base_plan.once, build_base_plan);  /* the generated files */
    pthread_once(&base_plan.copies_once, read_copies);
    sl_buf b;
    sl_buf_init(&b, 0);
    sl_buf_add(&b, base_plan.etc.data, base_plan.etc.len);
    sl_buf_add(&b, base_plan.copies.data, base_plan.copies.len);
    for (size_t i = 0; i < json_array_size(host_etc); i++)
        etc_host_copy(&b, json_string_value(json_array_get(host_etc, i)));
    sl_buf_addc(&b, 0);
    *len = b.len;  /* records hold NULs: never strlen() */
    return sl_buf_detach(&b);
}


void sl_plan_print(sl_buf *out, const sl_sandbox_opts *o, const sl_value *host_etc)
{
    pthread_once(&base_plan.once, build_base_plan);
    sl_buf_addc(out, o->net == SL_NET_OPEN);  /* binds the host's resolv.conf */
    sl_buf_add(out, base_plan.etc.data, base_plan.etc.len);
    sl_buf_add(out, base_plan.prints.data, base_plan.prints.len);
    for (size_t i = 0; i < json_array_size(host_etc); i++)
        etc_print(out, json_string_value(json_array_get(host_etc, i)));
}

/* sluice.yml `sandbox.local`: host_etc, a list of etc_optional names. */
int sl_plan_settings(const sl_value *set, const sl_value **host_etc, sl_err *err)
{
    *host_etc = NULL;
    const char *k;
    const sl_value *v;
    json_object_foreach((sl_value *)set, k, v) {
        if (!strcmp(k, "template"))
            continue;  /* an app's image, for providers that have images */
        if (strcmp(k, "host_etc"))
            return sl_err_set(err, SL_EINVAL, "sandbox.local.%s: unknown setting (the local "
                              "provider takes host_etc)", k);
        for (size_t i = 0; json_is_array(v) && i <= json_array_size(v); i++) {
            if (i == json_array_size(v)) {
                *host_etc = v;
                break;
            }
            const char *name = json_string_value(json_array_get(v, i));
            bool ok = false;
            for (const char *const *q = etc_optional; name && *q && !ok; q++)
                ok = !strcmp(*q, name);
            if (!ok)
                return sl_err_set(err, SL_EINVAL, "sandbox.local.host_etc: '%s' is not one "
                                  "of pip.conf, npmrc, gitconfig, wgetrc", name ? name : "?");
        }
        if (!json_is_array(v))
            return sl_err_set(err, SL_EINVAL, "sandbox.local.host_etc must be a list such as "
                              "[pip.conf, npmrc]");
    }
    return 0;
}

/* The GO message's payload (proto.h). */
void sl_plan_wire(sl_buf *out, const sl_sb_plan *plan, size_t etc_len)
{
    sl_sb_plan_wire w = {plan->new_net, plan->shared_net, plan->proxy,
                         plan->mode, plan->n_ns, plan->n_mounts, plan->seccomp->len,
                         (uint32_t)etc_len, {0}};
    memcpy(w.data_opts, plan->data_opts, sizeof w.data_opts);
    sl_buf_init(out, 0);
    sl_buf_add(out, &w, sizeof w);
    sl_buf_add(out, plan->mounts, sizeof *plan->mounts * (size_t)plan->n_mounts);
    sl_buf_add(out, plan->seccomp->filter, sizeof *plan->seccomp->filter * plan->seccomp->len);
    sl_buf_add(out, plan->etc_files, etc_len);
}
