/*
 * clock — the three readings are one monotonic clock in three units.
 */
#include <time.h>

#include "core/clock.h"
#include "tap.h"

int main(void)
{
    long long ns0 = sl_clock_ns();
    double s0 = sl_clock_s();
    long long ms0 = sl_clock_ms();
    CHECK(ns0 > 0 && s0 > 0 && ms0 > 0, "the clock reads a positive time");
    /* Read in order ns, s, ms: each later reading is not before the last. */
    CHECK(s0 * 1e9 >= (double)ns0 - 1e3, "seconds and nanoseconds agree (%f s, %lld ns)", s0,
          ns0);
    CHECK(ms0 >= ns0 / 1000000, "milliseconds and nanoseconds agree (%lld ms, %lld ns)", ms0,
          ns0);
    CHECK(ms0 <= ns0 / 1000000 + 1000, "milliseconds are not seconds ahead (%lld ms)", ms0);

    struct timespec nap = {0, 20 * 1000000};
    nanosleep(&nap, NULL);
    double s1 = sl_clock_s();
    long long ms1 = sl_clock_ms(), ns1 = sl_clock_ns();
    CHECK(s1 - s0 >= 0.019 && s1 - s0 < 5, "a 20 ms sleep reads as 20 ms or more (%f s)",
          s1 - s0);
    CHECK(ms1 - ms0 >= 19, "in milliseconds too (%lld ms)", ms1 - ms0);
    CHECK(ns1 - ns0 >= 19000000, "and in nanoseconds (%lld ns)", ns1 - ns0);

    long long prev = sl_clock_ns();
    int back = 0;
    for (int i = 0; i < 100000; i++) {
        long long t = sl_clock_ns();
        back += t < prev;
        prev = t;
    }
    CHECK(back == 0, "100000 readings in a row never go back (%d did)", back);
    return tap_done();
}
