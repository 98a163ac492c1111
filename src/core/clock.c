/*
 * clock — see clock.h.
 */
#include "core/clock.h"

#include <time.h>

static struct timespec now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts;
}

double sl_clock_s(void)
{
    struct timespec ts = now();
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long sl_clock_ms(void)
{
    struct timespec ts = now();
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec sl_clock_wall_in(double s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = s > 0 ? (long long)(s * 1e9) : 0;
    ns += ts.tv_nsec;
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    return ts;
}

long long sl_clock_ns(void)
{
    struct timespec ts = now();
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
