#include "core/log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"

/* Call sites remembered for the per-site limit; a new site takes the place
 * of the one seen longest ago. */
#define SITES 32

static struct {
    pthread_mutex_t mu;
    sl_log_level level;
    int fd;
    char where[48];
    double window_s;
    int max_lines;
    struct {
        const void *key;
        double last;
        long dropped;
    } site[SITES];
    double window;  /* start of the current window */
    int lines;      /* lines written in it */
    long dropped;   /* lines dropped over the window's cap */
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .level = SL_LOG_INFO, .fd = 2,
       .window_s = 10, .max_lines = 50};

static const char *const names[] = {"error", "warn", "info", "debug"};

void sl_log_set_level(sl_log_level level)
{
    pthread_mutex_lock(&L.mu);
    L.level = level;
    pthread_mutex_unlock(&L.mu);
}

void sl_log_set_rate(double window_s, int max_lines)
{
    pthread_mutex_lock(&L.mu);
    L.window_s = window_s;
    L.max_lines = max_lines;
    pthread_mutex_unlock(&L.mu);
}

void sl_log_set_fd(int fd)
{
    pthread_mutex_lock(&L.mu);
    L.fd = fd;
    pthread_mutex_unlock(&L.mu);
}

static void put_line(const char *text)
{
    size_t n = strlen(text);
    while (n) {
        ssize_t w = write(L.fd, text, n);
        if (w <= 0)
            return; /* nowhere to say it */
        text += w;
        n -= (size_t)w;
    }
}

void sl_log_init(const char *where)
{
    pthread_mutex_lock(&L.mu);
    snprintf(L.where, sizeof L.where, "%s%s", where && *where ? " " : "", where ? where : "");
    pthread_mutex_unlock(&L.mu);
    const char *v = getenv("SLUICE_LOG");
    if (!v || !*v)
        return;
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, names[i])) {
            sl_log_set_level((sl_log_level)i);
            return;
        }
    sl_log(SL_LOG_WARN, "SLUICE_LOG=%.40s is not a level (error, warn, info or debug); "
                        "logging at info", v);
}

static void logv_site(sl_log_level level, const void *site, const char *fmt, va_list ap)
{
    char line[1024];
    double now = sl_clock_s();
    pthread_mutex_lock(&L.mu);
    if (level > L.level) {
        pthread_mutex_unlock(&L.mu);
        return;
    }
    if (now - L.window >= L.window_s) {
        if (L.dropped) {
            snprintf(line, sizeof line, "sluice%s: warn: %ld more lines in the last %g s were "
                     "not shown\n", L.where, L.dropped, L.window_s);
            put_line(line);
        }
        L.window = now;
        L.lines = 0;
        L.dropped = 0;
    }
    int k = 0;
    for (int i = 0; i < SITES; i++) {
        if (L.site[i].key == site) {
            k = i;
            break;
        }
        if (L.site[i].last < L.site[k].last)
            k = i;
    }
    bool same = L.site[k].key == site;
    if (same && now - L.site[k].last < L.window_s) {
        L.site[k].dropped++;
        pthread_mutex_unlock(&L.mu);
        return;
    }
    if (L.lines >= L.max_lines) {
        L.dropped++;
        pthread_mutex_unlock(&L.mu);
        return;
    }
    long before = same ? L.site[k].dropped : 0;
    L.site[k].key = site;
    L.site[k].last = now;
    L.site[k].dropped = 0;
    L.lines++;
    int n = snprintf(line, sizeof line, "sluice%s: %s: ", L.where, names[level]);
    size_t used = n > 0 && (size_t)n < sizeof line ? (size_t)n : 0;
    vsnprintf(line + used, sizeof line - used, fmt, ap);
    line[used + strcspn(line + used, "\n")] = 0; /* one line per call */
    used = strlen(line);
    if (before)
        snprintf(line + used, sizeof line - used, " (and %ld more like it in the last %g s)",
                 before, L.window_s);
    used = strlen(line);
    if (used > sizeof line - 2)
        used = sizeof line - 2;
    line[used] = '\n';
    line[used + 1] = 0;
    put_line(line);
    pthread_mutex_unlock(&L.mu);
}

void sl_logv(sl_log_level level, const char *fmt, va_list ap)
{
    logv_site(level, fmt, fmt, ap);
}

void sl_log(sl_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl_logv(level, fmt, ap);
    va_end(ap);
}

void sl_log_site(sl_log_level level, const void *site, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    logv_site(level, site, fmt, ap);
    va_end(ap);
}
