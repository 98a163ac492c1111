/*
 * clock — the monotonic clock (CLOCK_MONOTONIC): for timeouts, deadlines and
 * elapsed times, which must not jump when the wall clock is set.  Never for
 * dates shown to users (those are time(2)).  The three readings are of the
 * same clock in different units; none can fail on Linux.
 */
#ifndef SL_CLOCK_H
#define SL_CLOCK_H

/* Seconds since an arbitrary fixed point, with nanosecond resolution. */
double sl_clock_s(void);
/* The same reading in whole milliseconds (poll(2) timeouts). */
long long sl_clock_ms(void);
/* The same reading in nanoseconds. */
long long sl_clock_ns(void);

#endif
