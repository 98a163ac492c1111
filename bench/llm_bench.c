/*
 * llm_bench — the streaming path of model calls, against issue 4's targets:
 *
 *   relay: from a chunk leaving the server's socket to its text_chunk event
 *          (a chatflow whose llm node streams into an answer node), median
 *          <= 50 us;
 *   concurrency: 200 streaming calls at once from one process, <= 100 KB
 *          of memory (RSS growth) per call.
 *
 * The model server is a child process (so its memory is not counted): a
 * single-threaded loop that answers each request with an OpenAI-style
 * event stream whose chunks carry the CLOCK_MONOTONIC time they were
 * written.
 *
 *   llm_bench [-n CHUNKS]
 *   llm_bench --serve        only the server, printing its URL
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "engine/graph.h"
#include "engine/run.h"
#include "engine/config.h"
#include "llm/llm.h"
#include "nodes/registry.h"

/* ---- the server (child process) ---- */

typedef struct {
    int fd;
    int sent;          /* chunks sent; -1 while reading the request */
    long long next;    /* when the next chunk is due */
    char req[8192];
    size_t got;
} conn;

static void serve(int lfd, int chunks, int interval_ms)
{
    enum { MAXC = 512 };
    static conn cs[MAXC];
    int n = 0;
    for (;;) {
        struct pollfd p[MAXC + 1];
        p[0] = (struct pollfd){lfd, POLLIN, 0};
        long long now = sl_clock_ns(), wait = 1000000000LL;
        for (int i = 0; i < n; i++) {
            p[i + 1] = (struct pollfd){cs[i].fd, cs[i].sent < 0 ? POLLIN : 0, 0};
            if (cs[i].sent >= 0 && cs[i].next - now < wait)
                wait = cs[i].next - now;
        }
        poll(p, (nfds_t)n + 1, wait > 0 ? (int)(wait / 1000000) : 0);
        if ((p[0].revents & POLLIN) && n < MAXC) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                cs[n] = (conn){.fd = fd, .sent = -1};
                n++;
            }
        }
        now = sl_clock_ns();
        for (int i = 0; i < n; i++) {
            conn *c = &cs[i];
            if (c->sent < 0 && (p[i + 1].revents & (POLLIN | POLLHUP))) {
                ssize_t r = read(c->fd, c->req + c->got, sizeof c->req - 1 - c->got);
                if (r <= 0) {
                    close(c->fd);
                    cs[i--] = cs[--n];
                    continue;
                }
                c->got += (size_t)r;
                c->req[c->got] = 0;
                char *end = strstr(c->req, "\r\n\r\n");
                char *cl = strcasestr(c->req, "content-length:");
                if (end && cl && c->got >= (size_t)(end + 4 - c->req) + (size_t)atoi(cl + 15)) {
                    const char *h = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                    "Connection: close\r\n\r\n";
                    if (write(c->fd, h, strlen(h)) < 0) {
                    }
                    c->sent = 0;
                    c->next = now;
                }
            }
            if (c->sent >= 0 && now >= c->next) {
                char buf[256];
                int len;
                if (c->sent < chunks)
                    len = snprintf(buf, sizeof buf,
                                   "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
                                   "\"%lld \"}}]}\n\n",
                                   sl_clock_ns());
                else
                    len = snprintf(buf, sizeof buf,
                                   "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
                                   "\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}"
                                   "\n\ndata: [DONE]\n\n",
                                   chunks);
                if (write(c->fd, buf, (size_t)len) < 0 || c->sent >= chunks) {
                    close(c->fd);
                    cs[i--] = cs[--n];
                    continue;
                }
                c->sent++;
                c->next = now + interval_ms * 1000000LL;
            }
        }
    }
}

static pid_t start_server(int chunks, int interval_ms, int *port)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1024) ||
        getsockname(lfd, (struct sockaddr *)&a, &l))
        return -1;
    *port = ntohs(a.sin_port);
    pid_t pid = fork();
    if (pid == 0) {
        serve(lfd, chunks, interval_ms);
        _exit(0);
    }
    close(lfd);
    return pid;
}

/* ---- relay latency through the engine ---- */

typedef struct {
    long long *lat;
    int n, cap;
} lat_log;

static void on_event(const char *event, const sl_value *data, void *ud)
{
    if (strcmp(event, "text_chunk"))
        return;
    long long t = sl_clock_ns();
    lat_log *l = ud;
    long long sent = atoll(json_string_value(json_object_get(data, "text")));
    if (sent > 0 && l->n < l->cap)
        l->lat[l->n++] = t - sent;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static const char chatflow[] =
    "app: {mode: advanced-chat, name: relay}\n"
    "kind: app\n"
    "version: 0.1.5\n"
    "workflow:\n"
    "  graph:\n"
    "    edges:\n"
    "    - {source: start, target: llm, sourceHandle: source, targetHandle: target}\n"
    "    - {source: llm, target: answer, sourceHandle: source, targetHandle: target}\n"
    "    nodes:\n"
    "    - {id: start, data: {type: start, title: Start, variables: []}}\n"
    "    - id: llm\n"
    "      data:\n"
    "        type: llm\n"
    "        title: LLM\n"
    "        model: {provider: openai, name: bench, mode: chat, completion_params: {}}\n"
    "        prompt_template: [{role: user, text: '{{#sys.query#}}'}]\n"
    "    - {id: answer, data: {type: answer, title: Answer, answer: '{{#llm.text#}}'}}\n";

/* The floor: the same stream read with plain blocking reads and no HTTP
 * client at all.  What the kernel and the scheduler cost between the
 * server's write and a reader waking up; sluice's relay overhead is what
 * it adds on top. */
static double floor_us(int port, int chunks)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof a))
        return -1;
    const char *req = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
    if (write(fd, req, strlen(req)) < 0)
        return -1;
    long long *lat = calloc((size_t)chunks + 8, sizeof *lat);
    int n = 0;
    char buf[65536];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf - 1)) > 0) {
        long long t = sl_clock_ns();
        buf[r] = 0;
        for (char *p = buf; (p = strstr(p, "\"content\":\"")) && n < chunks; p += 11) {
            long long sent = atoll(p + 11);
            if (sent > 0)
                lat[n++] = t - sent;
        }
    }
    close(fd);
    qsort(lat, (size_t)n, sizeof *lat, cmp_ll);
    double med = n ? (double)lat[n / 2] / 1000 : -1;
    free(lat);
    return med;
}

static int relay(int chunks)
{
    int port;
    pid_t srv = start_server(chunks, 2, &port);
    double floor1 = floor_us(port, chunks);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    setenv("SLUICE_LLM_BASE_URL", url, 1);
    sl_err err = {0};
    sl_config *cfg = NULL;
    sl_config_load(NULL, &cfg, &err);
    sl_graph g;
    sl_diag d;
    sl_diag_init(&d);
    if (sl_graph_load_text(&g, &sl_nodes, cfg, chatflow, strlen(chatflow), "relay.yml", &d, &err)) {
        fprintf(stderr, "llm_bench: %s\n", d.n ? d.v[0].msg : err.msg);
        return 2;
    }
    lat_log l = {calloc((size_t)chunks, sizeof(long long)), 0, chunks};
    sl_run_opts o;
    sl_run_opts_init(&o);
    o.config = cfg;
    sl_value *inputs = json_object();
    o.inputs = inputs;
    o.query = "go";
    o.on_event = on_event;
    o.event_ud = &l;
    sl_run *r = sl_run_new(&g, &o);
    sl_run_exec(r, &err);
    int ok = sl_run_status_of(r) == SL_RUN_SUCCEEDED;
    if (!ok)
        fprintf(stderr, "llm_bench: the relay run failed: %s\n", sl_run_error(r));
    sl_run_free(r);
    json_decref(inputs);
    sl_graph_release(&g);
    sl_diag_release(&d);
    sl_config_free(cfg);
    double floor2 = floor_us(port, chunks);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    if (!ok || l.n < chunks / 2)
        return 2;
    qsort(l.lat, (size_t)l.n, sizeof *l.lat, cmp_ll);
    double med = (double)l.lat[l.n / 2] / 1000, p90 = (double)l.lat[l.n * 9 / 10] / 1000;
    double floor = (floor1 + floor2) / 2, over = med - floor;
    bool pass = over <= 50;
    printf("relay  server write -> text_chunk event: median %.1f us (p90 %.1f) over %d chunks; the "
           "same stream read bare: %.1f us; sluice's relay overhead from arrival: %.1f us (target "
           "<= 50 us)  %s\n",
           med, p90, l.n, floor, over, pass ? "PASS" : "FAIL");
    free(l.lat);
    return pass ? 0 : 1;
}

/* ---- 200 concurrent streaming calls ---- */

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

typedef struct {
    sl_llm_endpoint *ep;
    int ok;
    size_t bytes;
} job;

static void count(const char *s, size_t n, void *ud)
{
    (void)s;
    ((job *)ud)->bytes += n;
}

static void *one_call(void *arg)
{
    job *j = arg;
    sl_value *req = json_pack("{s:s, s:[{s:s, s:s}]}", "model", "bench", "messages", "role",
                              "user", "content", "go");
    sl_llm_stream st = {.on_text = count, .ud = j};
    sl_value *resp = NULL;
    sl_err err = {0};
    j->ok = sl_llm_call(j->ep, req, &st, NULL, &resp, &err) == 0;
    if (!j->ok)
        fprintf(stderr, "llm_bench: %s\n", err.msg);
    sl_err_clear(&err);
    json_decref(resp);
    json_decref(req);
    return NULL;
}

static volatile long peak_kb;
static volatile int sampling;

static void *sampler(void *arg)
{
    (void)arg;
    while (sampling) {
        long kb = rss_kb();
        if (kb > peak_kb)
            peak_kb = kb;
        usleep(2000);
    }
    return NULL;
}

static int concurrency(int calls)
{
    int port;
    pid_t srv = start_server(40, 25, &port); /* each stream lasts about a second */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    sl_llm_endpoint ep = {.name = "bench", .style = SL_LLM_OPENAI, .base_url = url,
                          .connect_timeout_s = 10, .read_timeout_s = 30, .max_retries = 0};
    /* warm up libcurl and the allocator once */
    job warm = {&ep, 0, 0};
    one_call(&warm);
    job *jobs = calloc((size_t)calls, sizeof *jobs);
    pthread_t *t = calloc((size_t)calls, sizeof *t);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    long base = rss_kb();
    peak_kb = base;
    sampling = 1;
    pthread_t s;
    pthread_create(&s, NULL, sampler, NULL);
    long long t0 = sl_clock_ns();
    for (int i = 0; i < calls; i++) {
        jobs[i] = (job){&ep, 0, 0};
        pthread_create(&t[i], &at, one_call, &jobs[i]);
    }
    int ok = 0;
    for (int i = 0; i < calls; i++) {
        pthread_join(t[i], NULL);
        ok += jobs[i].ok;
    }
    double secs = (double)(sl_clock_ns() - t0) / 1e9;
    sampling = 0;
    pthread_join(s, NULL);
    kill(srv, SIGKILL);
    waitpid(srv, NULL, 0);
    double per = (double)(peak_kb - base) / calls;
    bool pass = ok == calls && per <= 100;
    printf("concurrency  %d streaming calls at once: %d succeeded in %.2f s, RSS %ld -> %ld KB, "
           "%.1f KB per call (target <= 100 KB)  %s\n",
           calls, ok, secs, base, (long)peak_kb, per, pass ? "PASS" : "FAIL");
    free(jobs);
    free(t);
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    int chunks = 400;
    if (argc == 3 && !strcmp(argv[1], "-n"))
        chunks = atoi(argv[2]) > 10 ? atoi(argv[2]) : 10;
    signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && !strcmp(argv[1], "--serve")) { /* the server alone, for trying things */
        int port;
        pid_t p = start_server(400, 2, &port);
        printf("http://127.0.0.1:%d/v1\n", port);
        fflush(stdout);
        waitpid(p, NULL, 0);
        return 0;
    }
    unsetenv("SLUICE_LLM_MODEL");
    int rc = relay(chunks);
    rc |= concurrency(200);
    return rc;
}
