/*
 * clock — the monotonic clock (CLOCK_MONOTONIC): for timeouts, deadlines and
 * elapsed times, which must not jump when the wall clock is set.  Never for
 * dates shown to users (those are time(2)).  The three readings are of the
 * same clock in different units; none can fail on Linux.
 */
#ifndef SL_CLOCK_H
#define SL_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary fixed point, with nanosecond resolution. */
double sl_clock_s(void);
/* The same reading in whole milliseconds (poll(2) timeouts). */
long long sl_clock_ms(void);
/* The same reading in nanoseconds. */
long long sl_clock_ns(void);

/* The wall clock (CLOCK_REALTIME) s seconds from now: the deadline
 * pthread_cond_timedwait takes for a condition variable made without
 * attributes, which waits on that clock.  s <= 0: now. */
struct timespec sl_clock_wall_in(double s);

#endif
