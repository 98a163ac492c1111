/*
 * memhog — tries to pin host memory by one route, for tests/cli/sandbox_mem.sh.
 *
 *   memhog ROUTE MIB [WORKERS] [SECONDS]
 *
 * WORKERS processes (forked at once; fewer when a fork fails) pin memory
 * by ROUTE, 1 MiB or one buffer at a time, until together they hold MIB
 * MiB, a limit stops them, or SECONDS pass.  Then everything is held for a
 * moment and the first process prints
 *
 *   memhog route=ROUTE workers=N peak=BYTES held=BYTES stop=WHY host_delta=BYTES
 *
 * peak is the most they held at the same time, counted as the bytes that
 * sat in memory or kernel buffers (data written and not read back), a
 * lower bound of what the host paid; host_delta is how far the host's
 * MemAvailable fell meanwhile (other processes make it noisy).  While
 * pinning, a line "at BYTES" goes out at every new 8 MiB, so a run that a
 * limit kills outright still tells how far it got.
 *
 * Routes: anon (private anonymous memory), shared (MAP_SHARED|MAP_ANONYMOUS),
 * memfd, shm (files in /dev/shm), tmpfs (files in /tmp), sysv (System V
 * shared memory), pipe (pipes filled and never read), tcp and unix
 * (connected loopback socket pairs with unread data both ways), udp
 * (datagrams queued on unread sockets), netlink (route dumps asked for and
 * never read), fork (fan-out: a process per 256 KiB of private memory, up
 * to WORKERS or until fork fails).
 *
 * Memory that dies with its process (everything but shm and tmpfs files)
 * is counted out when a worker is killed; the first kill or the first
 * allocation refused (ENOMEM, ENOSPC, ENOBUFS, EFBIG) stops the others.
 * Running out of descriptors only ends that worker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1L << 20)
#define MAXW 1024

static struct shared {
    atomic_long held, peak, reported;  /* peak: as the workers counted it */
    atomic_int stop, done;
    atomic_int why;        /* errno that stopped pinning */
    atomic_long mine[MAXW];
} *sh;

static const char *route;
static long target;
static char chunk[MIB];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

static void add(int w, long n)
{
    sh->mine[w] += n;
    long h = atomic_fetch_add(&sh->held, n) + n;
    long p = atomic_load(&sh->peak);
    while (h > p && !atomic_compare_exchange_weak(&sh->peak, &p, h)) {
    }
    long r = atomic_load(&sh->reported);
    if (h >= r + 8 * MIB && atomic_compare_exchange_strong(&sh->reported, &r, h)) {
        char line[64];
        int len = snprintf(line, sizeof line, "at %ld\n", h);
        if (write(1, line, (size_t)len) < 0) {
        }
    }
    if (h >= target)
        atomic_store(&sh->stop, 1);
}

/* A refusal that means a limit: stop everyone.  Descriptors running out
 * only ends this worker. */
static int refused(int e)
{
    if (e == EMFILE || e == ENFILE)
        return 1;
    int zero = 0;
    atomic_compare_exchange_strong(&sh->why, &zero, e);
    atomic_store(&sh->stop, 1);
    return 1;
}

static void bigbuf(int fd)
{
    int size = 64 << 20;  /* the kernel caps it at wmem_max/rmem_max */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

/* Writes into fd until it would block; returns the bytes written or -1. */
static long fill(int w, int fd)
{
    long total = 0;
    for (;;) {
        ssize_t n = write(fd, chunk, 65536);
        if (n > 0) {
            total += n;
            add(w, n);
            if (atomic_load(&sh->stop))
                return total;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return total;
        refused(errno);
        return -1;
    }
}

/* One step of pinning; returns 0 to go on, 1 when this worker is done. */
static int step(int w)
{
    char name[64];
    if (!strcmp(route, "anon") || !strcmp(route, "fork") || !strcmp(route, "shared")) {
        int flags = strcmp(route, "shared") ? MAP_PRIVATE : MAP_SHARED;
        long n = strcmp(route, "fork") ? MIB : MIB / 4;
        char *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return refused(errno);
        memset(p, 1, (size_t)n);
        add(w, n);
        return 0;
    }
    if (!strcmp(route, "memfd") || !strcmp(route, "shm") || !strcmp(route, "tmpfs")) {
        static int fd = -1;
        if (fd < 0) {
            if (!strcmp(route, "memfd")) {
                fd = memfd_create("memhog", 0);
            } else {
                snprintf(name, sizeof name, "%s/memhog-%d-%d",
                         strcmp(route, "shm") ? "/tmp" : "/dev/shm", (int)getppid(), w);
                fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
            }
            if (fd < 0)
                return refused(errno);
        }
        ssize_t n = write(fd, chunk, MIB);
        if (n < 0)
            return refused(errno);
        add(w, n);
        return 0;
    }
    if (!strcmp(route, "sysv")) {
        int id = shmget(IPC_PRIVATE, MIB, IPC_CREAT | 0600);
        if (id < 0)
            return refused(errno);
        char *p = shmat(id, NULL, 0);
        shmctl(id, IPC_RMID, NULL);  /* freed when this process goes */
        if (p == (void *)-1)
            return refused(errno);
        memset(p, 1, MIB);
        add(w, MIB);
        return 0;
    }
    if (!strcmp(route, "pipe")) {
        int p[2];
        if (pipe2(p, O_NONBLOCK))
            return refused(errno);
        fcntl(p[1], F_SETPIPE_SZ, (int)MIB);
        return fill(w, p[1]) < 0;
    }
    if (!strcmp(route, "unix") || !strcmp(route, "tcp")) {
        int a, b;
        if (!strcmp(route, "unix")) {
            int sv[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
                return refused(errno);
            a = sv[0], b = sv[1];
        } else {
            static int lfd = -1;
            static struct sockaddr_in addr;
            socklen_t len = sizeof addr;
            if (lfd < 0) {
                addr.sin_family = AF_INET;
                addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                lfd = socket(AF_INET, SOCK_STREAM, 0);
                if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) ||
                    listen(lfd, 64) || getsockname(lfd, (struct sockaddr *)&addr, &len))
                    return refused(errno);
                bigbuf(lfd);
            }
            a = socket(AF_INET, SOCK_STREAM, 0);
            if (a < 0)
                return refused(errno);
            bigbuf(a);
            if (connect(a, (struct sockaddr *)&addr, sizeof addr))
                return refused(errno);
            b = accept(lfd, NULL, NULL);
            if (b < 0)
                return refused(errno);
            fcntl(a, F_SETFL, O_NONBLOCK);
            fcntl(b, F_SETFL, O_NONBLOCK);
        }
        bigbuf(a);
        bigbuf(b);
        if (fill(w, a) < 0 || atomic_load(&sh->stop))
            return 1;
        return fill(w, b) < 0;
    }
    if (!strcmp(route, "udp")) {
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof addr;
        int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
        if (r < 0 || s < 0)
            return refused(errno);
        bigbuf(r);
        if (bind(r, (struct sockaddr *)&addr, sizeof addr) ||
            getsockname(r, (struct sockaddr *)&addr, &len))
            return refused(errno);
        /* datagrams past a full receive queue are dropped, not refused, so
         * what is held is what the queue says it holds */
        long queued = 0;
        for (int i = 0; i < 4096 && !atomic_load(&sh->stop); i++) {
            if (sendto(s, chunk, 60000, MSG_DONTWAIT, (struct sockaddr *)&addr, sizeof addr) < 0 &&
                errno != EAGAIN && errno != ENOBUFS)
                return refused(errno);
            unsigned int mi[16] = {0};
            socklen_t ml = sizeof mi;
            if (getsockopt(r, SOL_SOCKET, SO_MEMINFO, mi, &ml) == 0) {
                if ((long)mi[0] <= queued)
                    break;  /* the queue is full */
                add(w, (long)mi[0] - queued);
                queued = mi[0];
            }
        }
        close(s);
        return 0;
    }
    if (!strcmp(route, "netlink")) {
        /* link dumps asked for and never read */
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK, NETLINK_ROUTE);
        if (fd < 0)
            return refused(errno);
        bigbuf(fd);
        struct {
            struct nlmsghdr h;
            struct ifinfomsg i;
        } req = {{sizeof req, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, 0}, {0}};
        long queued = 0;
        for (int i = 0; i < 100000 && !atomic_load(&sh->stop); i++) {
            if (send(fd, &req, sizeof req, 0) < 0 && errno != EBUSY && errno != EAGAIN)
                return refused(errno);
            unsigned int mi[16] = {0};
            socklen_t ml = sizeof mi;
            if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &ml))
                return refused(errno);
            if ((long)mi[0] <= queued && i > 8)
                break;
            if ((long)mi[0] > queued) {
                add(w, (long)mi[0] - queued);
                queued = mi[0];
            }
        }
        return 0;
    }
    fprintf(stderr, "memhog: unknown route '%s'\n", route);
    exit(2);
}

static void worker(int w)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Written here, not before the fork: a worker outweighs the first
     * process, so an OOM killer choosing by size takes a worker.  Not in a
     * fan-out, where the processes themselves are the point. */
    bool one = !strcmp(route, "fork");  /* fan-out: one step per process */
    if (!one)
        memset(chunk, 'x', sizeof chunk);
    while (!atomic_load(&sh->stop))
        if (step(w) || one)
            break;
    atomic_fetch_add(&sh->done, 1);
    for (;;)
        pause();  /* hold until the first process ends us */
}

static pid_t pids[MAXW];
static int killed;

static void sample(int n, bool persistent, long *peak, long *avail_min)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        for (int i = 0; i < n; i++)
            if (pids[i] == p) {
                if (!persistent)
                    atomic_fetch_sub(&sh->held, sh->mine[i]);
                pids[i] = 0;
                killed++;
                atomic_store(&sh->stop, 1);
            }
    long h = atomic_load(&sh->held), a = mem_available();
    if (h > *peak)
        *peak = h;
    if (a < *avail_min)
        *avail_min = a;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: memhog ROUTE MIB [WORKERS] [SECONDS]\n");
        return 2;
    }
    route = argv[1];
    target = atol(argv[2]) * MIB;
    int want = argc > 3 ? atoi(argv[3]) : 1;
    double secs = argc > 4 ? atof(argv[4]) : 3;
    if (want < 1 || want > MAXW)
        want = 1;
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    bool persistent = !strcmp(route, "shm") || !strcmp(route, "tmpfs");
    long avail0 = mem_available(), avail_min = avail0, peak = 0;
    double end = now() + secs;
    int n = 0, fork_errno = 0;
    for (; n < want && !atomic_load(&sh->stop); n++) {
        pid_t p = fork();
        if (p < 0) {
            fork_errno = errno;
            break;
        }
        if (p == 0)
            worker(n);
        pids[n] = p;
    }
    /* Sample what is held while reaping killed workers at once, so that
     * memory the kernel took back is not counted. */
    while (now() < end && atomic_load(&sh->done) + killed < n) {
        sample(n, persistent, &peak, &avail_min);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&sh->stop, 1);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);  /* everything held: the host's view settles */
    sample(n, persistent, &peak, &avail_min);
    int why = atomic_load(&sh->why);
    char stop[64];
    if (killed)
        snprintf(stop, sizeof stop, "killed");
    else if (why)
        snprintf(stop, sizeof stop, "%s", strerrorname_np(why) ? strerrorname_np(why) : "error");
    else if (atomic_load(&sh->held) >= target)
        snprintf(stop, sizeof stop, "target");
    else if (fork_errno)
        snprintf(stop, sizeof stop, "fork-%s", strerrorname_np(fork_errno));
    else
        snprintf(stop, sizeof stop, now() >= end ? "time" : "exhausted");
    printf("memhog route=%s workers=%d peak=%ld held=%ld stop=%s host_delta=%ld\n", route, n,
           peak, atomic_load(&sh->held), stop, avail0 - avail_min);
    fflush(stdout);
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGKILL);
    while (wait(NULL) > 0) {
    }
    return 0;
}
