#include "extract/isolate.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "extract/pdf.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "extract/isolate knows x86_64 and aarch64; add this architecture's AUDIT_ARCH"
#endif

#define HELPER_FAILED 3  /* the helper's exit status when it wrote why */
#define ERR_MAX 4096     /* bytes of the helper's stderr kept */

static const char *helper;

void sl_extract_set_helper(const char *exe)
{
    helper = exe;
}

void sl_extract_run_default(sl_extract_run *r)
{
    memset(r, 0, sizeof *r);
    sl_extract_limits_default(&r->lim);
    r->timeout_s = 60;
    r->memory_bytes = (size_t)1 << 30;
}

/* ---- the helper ---- */

/* What the helper may do once its reader is loaded: read the document and
 * write the text (descriptors it has), manage memory, and end.  Anything
 * else fails with EPERM; another ABI kills it. */
static const int allowed[] = {
    __NR_read, __NR_write, __NR_close, __NR_lseek, __NR_fstat, __NR_newfstatat,
    __NR_brk, __NR_mmap, __NR_munmap, __NR_mremap, __NR_madvise, __NR_mprotect,
    __NR_futex, __NR_rt_sigreturn, __NR_rt_sigprocmask, __NR_rt_sigaction,
    __NR_clock_gettime, __NR_gettimeofday, __NR_getrandom, __NR_sched_yield,
    __NR_getpid, __NR_gettid, __NR_sigaltstack,  /* its own; sanitizers ask at exit */
    __NR_exit, __NR_exit_group,
};

int sl_extract_confine(void)
{
    enum { N = sizeof allowed / sizeof *allowed };
    struct sock_filter f[N + 8];
    unsigned n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < N; i++)  /* a match jumps to the ALLOW at the end */
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i],
                                              (unsigned char)(N - i), 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {(unsigned short)n, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static void say(int code, const char *setting, const char *msg)
{
    char line[ERR_MAX];
    int n = snprintf(line, sizeof line, "%d\t%s\t%s", code, setting ? setting : "-",
                     msg ? msg : "");
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
        /* nothing more to say it with */
    }
}

static bool num(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s ? s : "", &end, 10);
    return s && *s && !*end && !errno;
}

int sl_extract_helper_main(int argc, char **argv)
{
    unsigned long long v[7];
    sl_doc_kind kind = argc == 10 ? sl_extract_kind_by_id(argv[2]) : SL_DOC_UNKNOWN;
    for (int i = 0; i < 7 && kind != SL_DOC_UNKNOWN; i++)
        if (!num(argv[3 + i], &v[i]))
            kind = SL_DOC_UNKNOWN;
    if (kind == SL_DOC_UNKNOWN) {
        say(SL_EINVAL, NULL, "usage: sluice __extract KIND OUTPUT MEMBER UNPACKED DEPTH NODES "
                             "MEMORY SECONDS (sluice runs this itself)");
        return HELPER_FAILED;
    }
    sl_extract_limits lim = {v[0], v[1], v[2], v[3], v[4]};
    struct stat st;
    if (fstat(3, &st) || !S_ISREG(st.st_mode)) {
        say(SL_EINVAL, NULL, "no document on descriptor 3");
        return HELPER_FAILED;
    }
    size_t len = (size_t)st.st_size;
    void *data = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, 3, 0) : NULL;
    if (len && data == MAP_FAILED) {
        say(SL_EIO, NULL, "cannot map the document");
        return HELPER_FAILED;
    }
    /* the readers of the zip and XML formats open their libraries on first
     * use (core/dl): open them now, while opening files is still allowed;
     * their own dlopen then finds them loaded */
    if (kind == SL_DOC_DOCX || kind == SL_DOC_EXCEL || kind == SL_DOC_PPTX ||
        kind == SL_DOC_EPUB || kind == SL_DOC_ODT) {
        dlopen("libarchive.so.13", RTLD_NOW);
        dlopen("libxml2.so.2", RTLD_NOW);
    }
    if (kind == SL_DOC_PDF)
        dlopen("libz.so.1", RTLD_NOW);
    struct rlimit as = {v[5], v[5]}, cpu = {v[6] + 1, v[6] + 2}, none = {0, 0};
    bool limit_as = true;  /* not under ASan: its shadow alone is terabytes of it */
#if defined(__SANITIZE_ADDRESS__)
    limit_as = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    limit_as = false;
#endif
#endif
    if ((limit_as && setrlimit(RLIMIT_AS, &as)) || setrlimit(RLIMIT_CPU, &cpu) ||
        setrlimit(RLIMIT_FSIZE, &none) || setrlimit(RLIMIT_CORE, &none) ||
        setrlimit(RLIMIT_NPROC, &none) || sl_extract_confine()) {
        say(SL_EIO, NULL, "cannot confine the document's reader");
        return HELPER_FAILED;
    }
    sl_buf out;
    sl_buf_init(&out, lim.max_output + 1);
    sl_err err = {0};
    if (sl_extract_text(kind, data, len, &lim, &out, &err)) {
        say(err.code, err.setting, err.msg);
        return HELPER_FAILED;
    }
    for (size_t at = 0; at < out.len;) {
        ssize_t w = write(1, out.data + at, out.len - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return HELPER_FAILED;
        at += (size_t)w;
    }
    return 0;
}

/* ---- the host ---- */

static int doc_fd(const void *data, size_t len, sl_err *err)
{
    int fd = memfd_create("sluice-document", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return sl_err_set(err, SL_EIO, "document-extractor: memfd_create: %s", strerror(errno));
    const char *p = data;
    for (size_t at = 0; at < len;) {
        ssize_t w = write(fd, p + at, len - at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            return sl_err_set(err, SL_EIO, "document-extractor: cannot hold the document: %s",
                              strerror(e));
        }
        at += (size_t)w;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
        int e = errno;
        close(fd);
        return sl_err_set(err, SL_EIO, "document-extractor: cannot seal the document: %s",
                          strerror(e));
    }
    return fd;
}

static pid_t spawn(const char *exe, char *const argv[], int doc, int out, int errfd, sl_err *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, errfd, 2);
    posix_spawn_file_actions_adddup2(&fa, doc, 3);
    posix_spawn_file_actions_addclosefrom_np(&fa, 4);
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGINT);
    sigaddset(&dflt, SIGTERM);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    /* No environment but glibc's malloc settings: readers build and free
     * trees of many small nodes (libxml2's DOM, a PDF's objects), and
     * with a larger per-thread cache and no trimming of the heap between
     * them an xlsx is read ~11% faster. */
    static char *const envp[] = {
        "GLIBC_TUNABLES=glibc.malloc.tcache_count=65000:glibc.malloc.tcache_max=4096:"
        "glibc.malloc.top_pad=16777216:glibc.malloc.trim_threshold=1073741824",
        NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, &at, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc)
        return sl_err_set(err, SL_EIO, "document-extractor: cannot start the reader (%s): %s",
                          exe, strerror(rc));
    return pid;
}

/* The reader process: kind's reader over the document, confined. */
static int run_helper(sl_doc_kind kind, const void *data, size_t len, const sl_extract_run *r,
                      double timeout_s, sl_buf *out, sl_err *err)
{
    const char *name = sl_extract_kind_name(kind);
    char a[7][32];
    unsigned long long v[7] = {r->lim.max_output, r->lim.max_member, r->lim.max_unpacked,
                               r->lim.max_xml_depth, r->lim.max_xml_nodes, r->memory_bytes,
                               (unsigned long long)(timeout_s + 1)};
    for (int i = 0; i < 7; i++)
        snprintf(a[i], sizeof a[i], "%llu", v[i]);
    char *argv[] = {"sluice", "__extract", (char *)sl_extract_kind_id(kind), a[0], a[1], a[2],
                    a[3], a[4], a[5], a[6], NULL};
    double deadline = sl_clock_s() + timeout_s;  /* the helper's start counts */
    int doc = doc_fd(data, len, err);
    if (doc < 0)
        return -1;
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        close(doc);
        return sl_err_set(err, SL_EIO, "document-extractor: pipe: %s", strerror(errno));
    }
    pid_t pid = spawn(helper, argv, doc, po[1], pe[1], err);
    close(doc);
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        return -1;
    }
    size_t start = out->len;
    char msg[ERR_MAX + 1];
    size_t nmsg = 0;
    enum { RUNNING, OVER, LATE, STOPPED } why = RUNNING;
    bool out_open = true, err_open = true;
    char chunk[16384];
    while ((out_open || err_open) && why == RUNNING) {
        struct pollfd pf[2] = {{out_open ? po[0] : -1, POLLIN, 0},
                               {err_open ? pe[0] : -1, POLLIN, 0}};
        double left = deadline - sl_clock_s();
        if (left <= 0) {
            why = LATE;
            break;
        }
        if (r->stop && r->stop(r->ud)) {
            why = STOPPED;
            break;
        }
        int n = poll(pf, 2, left > 0.05 ? 50 : (int)(left * 1000) + 1);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        if (pf[0].revents) {
            ssize_t got = read(po[0], chunk, sizeof chunk);
            if (got > 0) {
                if (out->len - start + (size_t)got > r->lim.max_output)
                    why = OVER;
                else
                    sl_buf_add(out, chunk, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                out_open = false;
            }
        }
        if (pf[1].revents) {
            ssize_t got = read(pe[0], chunk, sizeof chunk);
            if (got > 0) {
                size_t keep = (size_t)got < ERR_MAX - nmsg ? (size_t)got : ERR_MAX - nmsg;
                memcpy(msg + nmsg, chunk, keep);
                nmsg += keep;
            } else if (got == 0 || errno != EINTR) {
                err_open = false;
            }
        }
    }
    if (why != RUNNING)
        kill(pid, SIGKILL);
    close(po[0]);
    close(pe[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    msg[nmsg] = 0;
    int rc = -1;
    if (why == OVER)
        sl_err_limit(err, SL_ELIMIT, "extract_max_output",
                     "the %s file's text is over extract_max_output=%zu bytes; raise it "
                     "(--limit extract_max_output=N)", name, r->lim.max_output);
    else if (why == LATE)
        sl_err_limit(err, SL_ETIMEOUT, "extract_timeout_s",
                     "reading the %s file took over extract_timeout_s=%g s; raise it "
                     "(--limit extract_timeout_s=N)", name, timeout_s);
    else if (why == STOPPED)
        sl_err_set(err, SL_ECANCELED, "the run was stopped while a %s file was read", name);
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        rc = 0;
    else if (WIFEXITED(st) && WEXITSTATUS(st) == HELPER_FAILED && nmsg) {
        /* "code\tsetting\tmessage" */
        char *t1 = strchr(msg, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        int code = atoi(msg);
        if (!t2 || code <= SL_OK || code > SL_ENOTFOUND)
            sl_err_set(err, SL_EPARSE, "Failed to extract text from %s: %s", name, msg);
        else if (code == SL_ELIMIT || code == SL_ETIMEOUT) {
            *t2 = 0;
            /* the setting names one of ours: map it back to a static string */
            static const char *const settings[] = {
                "extract_max_output",   "extract_max_member", "extract_max_unpacked",
                "extract_xml_depth",    "extract_xml_nodes",  "extract_max_memory",
                "extract_timeout_s"};
            const char *setting = NULL;
            for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
                if (!strcmp(t1 + 1, settings[i]))
                    setting = settings[i];
            sl_err_limit(err, (sl_errcode)code, setting, "%s", t2 + 1);
        } else
            sl_err_set(err, (sl_errcode)code, "%s", t2 + 1);
    } else if (WIFSIGNALED(st) && (WTERMSIG(st) == SIGXCPU || WTERMSIG(st) == SIGKILL))
        sl_err_limit(err, SL_ETIMEOUT, "extract_timeout_s",
                     "reading the %s file used over %g s of CPU (extract_timeout_s); raise it "
                     "(--limit extract_timeout_s=N)", name, timeout_s);
    else if (WIFSIGNALED(st) || WIFEXITED(st))
        sl_err_set(err, SL_EPARSE,
                   "Failed to extract text from %s: the reader stopped (%s %d); the document is "
                   "damaged or needs more memory than extract_max_memory=%zu bytes",
                   name, WIFSIGNALED(st) ? "signal" : "exit status",
                   WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), r->memory_bytes);
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = 0;
    }
    return rc;
}

int sl_extract_isolated(sl_doc_kind kind, const void *data, size_t len, const sl_extract_run *r,
                        sl_buf *out, sl_err *err)
{
    /* a format no reader reads (.doc, .ppt) needs no process to say so */
    if (sl_extract_refusal(kind))
        return sl_err_set(err, SL_EUNSUPPORTED, "%s", sl_extract_refusal(kind));
    if (!helper && kind != SL_DOC_PDF)
        return sl_err_set(err, SL_EUNSUPPORTED,
                          "document-extractor: no reader program is set (sluice reads documents "
                          "in a process of its own: sl_extract_set_helper)");
    if (kind != SL_DOC_PDF)
        return run_helper(kind, data, len, r, r->timeout_s, out, err);
    /* PDF: sluice's own reader (extract/pdftext.h) in the reader process;
     * what it declines, or where it fails short of a limit, pdftotext in a
     * sandbox (extract/pdf.h) reads, in the time left. */
    double t0 = sl_clock_s();
    if (helper && len) {
        sl_err mine = {0};
        if (!run_helper(kind, data, len, r, r->timeout_s, out, &mine))
            return 0;
        bool final = mine.code == SL_ETIMEOUT || mine.code == SL_ECANCELED ||
                     (mine.code == SL_ELIMIT && mine.setting &&
                      !strcmp(mine.setting, "extract_max_output"));
        if (final) {
            *err = mine;
            return -1;
        }
        sl_err_clear(&mine);
    }
    double left = r->timeout_s - (sl_clock_s() - t0);
    if (left <= 0)
        return sl_err_limit(err, SL_ETIMEOUT, "extract_timeout_s",
                            "reading the PDF file took over extract_timeout_s=%g s; raise it "
                            "(--limit extract_timeout_s=N)", r->timeout_s);
    return sl_extract_pdf_until(data, len, &r->lim, left, r->stop, r->ud, out, err);
}
