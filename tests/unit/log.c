/*
 * log — levels, one line per call, per-site rate limiting with the count of
 * what was held back, the per-window cap, SLUICE_LOG.
 */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/log.h"
#include "tap.h"

static int fds[2];

static char *drain(void)
{
    static char buf[8192];
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    return buf;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void site_a(int i) { sl_log(SL_LOG_ERROR, "store write failed (%d)", i); }
static void site_b(void) { sl_log(SL_LOG_WARN, "another\nline"); }

int main(void)
{
    if (pipe(fds))
        return 1;
    /* non-blocking read: an empty pipe reads as "" */
    int fl = fcntl(fds[0], F_GETFL);
    fcntl(fds[0], F_SETFL, fl | O_NONBLOCK);
    sl_log_set_fd(fds[1]);
    setenv("SLUICE_LOG", "loud", 1);
    sl_log_init("serve");
    char *out = drain();
    CHECK(strstr(out, "sluice serve: warn: SLUICE_LOG=loud is not a level"), "a bad SLUICE_LOG is named");

    sl_log(SL_LOG_DEBUG, "hidden %d", 1);
    CHECK(!*drain(), "debug is below the default level");
    sl_log_set_level(SL_LOG_DEBUG);
    sl_log(SL_LOG_DEBUG, "shown %d", 2);
    CHECK(!strcmp(drain(), "sluice serve: debug: shown 2\n"), "a line names where and its level");

    sl_log_set_rate(0.3, 50);
    for (int i = 0; i < 5; i++)
        site_a(i);
    site_b();
    out = drain();
    CHECK(count(out, "store write failed") == 1 && strstr(out, "failed (0)"),
          "repeats from one site within the window are held back");
    CHECK(strstr(out, "warn: another\n") && !strstr(out, "line\n"), "another site still speaks, one line per call");
    usleep(350 * 1000);
    site_a(9);
    out = drain();
    CHECK(strstr(out, "store write failed (9) (and 4 more like it in the last 0.3 s)"),
          "the next line says how many were held back");

    usleep(350 * 1000);
    sl_log_set_rate(0.3, 3);
    char fmt[8][16];
    for (int i = 0; i < 8; i++) /* eight different sites: only three fit a window */
        snprintf(fmt[i], sizeof fmt[i], "site %d", i), sl_log(SL_LOG_INFO, fmt[i], 0);
    out = drain();
    CHECK(count(out, "info: site") == 3, "a window holds at most its cap of lines");
    usleep(350 * 1000);
    sl_log(SL_LOG_INFO, "later");
    out = drain();
    CHECK(strstr(out, "5 more lines in the last 0.3 s were not shown") && strstr(out, "later"),
          "lines over the cap are counted when the window turns");
    return tap_done();
}
