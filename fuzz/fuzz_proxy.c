/*
 * fuzz_proxy — libFuzzer target for the sandbox's egress proxy
 * (sandbox/proxy): its request-head parser and its allow-list parser.
 *
 * Inputs whose first byte is odd are "allow-list\nhost": the list goes to
 * sl_proxy_start and the host to sl_proxy_check_host.  Other inputs are
 * sent, after the first byte, to a proxy over a unix socket;
 * the target reads the answer to the end.  That proxy allows only IP
 * literals on loopback's discard port, so no input makes it resolve a name
 * (a resolver with no network answers only after its timeouts) or reach
 * beyond this machine: listed literals are refused by the kernel (nothing
 * listens on port 9), names are refused by the list.  Checks besides memory errors: the proxy answers
 * every request with an HTTP status line or closes, and check_host either
 * allows or gives a reason.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/err.h"
#include "sandbox/proxy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sl_proxy *proxy;
static struct sockaddr_un addr;
static socklen_t addr_len;

/* A listening unix socket on an autobound abstract address. */
static int listener(struct sockaddr_un *a, socklen_t *len)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un any = {.sun_family = AF_UNIX};
    if (fd < 0 || bind(fd, (struct sockaddr *)&any, sizeof(sa_family_t)) || listen(fd, 16))
        abort();
    *len = sizeof *a;
    if (getsockname(fd, (struct sockaddr *)a, len))
        abort();
    return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void check_allow_list(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    char *nl = memchr(text, '\n', size);
    const char *host = "pypi.org";
    if (nl) {
        *nl = 0;
        host = nl + 1;
    }
    struct sockaddr_un a;
    socklen_t len;
    int fd = listener(&a, &len);
    sl_proxy *p = NULL;
    sl_err err = {0};
    if (sl_proxy_start(fd, text, &p, &err) == 0) {
        char why[256];
        const char *r = sl_proxy_check_host(p, host, 443, why, sizeof why);
        if (r && !*r)
            abort(); /* a refusal always says why */
        sl_proxy_stop(p);
    } else if (!err.msg) {
        abort(); /* a refused list always says why */
    }
    sl_err_clear(&err);
    free(text);
}

static void send_request(const uint8_t *data, size_t size)
{
    /* A proxy per input: stopping it joins its threads, so every input
     * ends with nothing running and leak checks see the whole story. */
    sl_err err = {0};
    int lfd = listener(&addr, &addr_len);
    if (sl_proxy_start(lfd, "127.0.0.1:9,[::1]:9", &proxy, &err))
        abort();
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, addr_len))
        abort();
    size_t off = 0;
    while (off < size) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the proxy may answer and close before reading it all */
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    char buf[4096], first[16] = {0};
    size_t got = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, 35000);
        if (r < 0 && errno == EINTR)
            continue; /* libFuzzer's timer signal */
        if (r != 1)
            abort(); /* the proxy must answer or close within its own timeouts */
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (got < sizeof first - 1) {
            size_t k = (size_t)n < sizeof first - 1 - got ? (size_t)n : sizeof first - 1 - got;
            memcpy(first + got, buf, k);
        }
        got += (size_t)n;
    }
    if (got && strncmp(first, "HTTP/1.1 ", 9) && strncmp(first, "HTTP/1.0 ", 9))
        abort(); /* anything it says starts with a status line */
    close(fd);
    sl_proxy_stop(proxy);
    proxy = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 20000)
        return 0;
    if (data[0] & 1)
        check_allow_list(data + 1, size - 1);
    else
        send_request(data + 1, size - 1);
    return 0;
}
