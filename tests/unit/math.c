/*
 * math — sluice's own floor, ceil, trunc and fmod give libm's answer for
 * every kind of double, and pow comes from libm loaded on first use.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/math.h"
#include "tap.h"

static bool same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return !memcmp(&a, &b, sizeof a);  /* -0.0 is not 0.0 here */
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double random_double(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    double d;
    memcpy(&d, &rng, sizeof d);
    return d;
}

int main(void)
{
    static const double edge[] = {0.0, -0.0, 0.5, -0.5, 0.49999999999999994, 1.0, -1.0, 1.5,
                                  -1.5, 2.5, -2.5, 3.0, 1e-320, -1e-320, 0x1p52, -0x1p52,
                                  0x1p52 + 1, 0x1p52 - 0.5, -(0x1p52 - 0.5), 0x1p53, 1e300,
                                  -1e300, 123456.789, -123456.789, 7.0, -7.0, 0.1, 10.0,
                                  INFINITY, -INFINITY, NAN, 1.7976931348623157e308, 5e-324};
    size_t n_edge = sizeof edge / sizeof *edge;
    int bad = 0;
    for (size_t i = 0; i < n_edge; i++) {
        double x = edge[i];
        bad += !same(sl_floor(x), floor(x)) + !same(sl_ceil(x), ceil(x)) +
               !same(sl_trunc(x), trunc(x));
    }
    CHECK(bad == 0, "floor, ceil and trunc of %zu edge values are libm's (%d differ)", n_edge, bad);
    bad = 0;
    for (size_t i = 0; i < n_edge; i++)
        for (size_t j = 0; j < n_edge; j++)
            bad += !same(sl_fmod(edge[i], edge[j]), fmod(edge[i], edge[j]));
    CHECK(bad == 0, "fmod of %zu edge pairs is libm's (%d differ)", n_edge * n_edge, bad);

    int n = 200000;
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = random_double();
        bad += !same(sl_floor(x), floor(x)) + !same(sl_ceil(x), ceil(x)) +
               !same(sl_trunc(x), trunc(x));
        double y = i % 4 ? (double)(i % 1000) / 7 - 50 : x * 0.001;
        x = i % 2 ? x : (double)i * 0.37 - 30000;
        bad += !same(sl_floor(y), floor(y));
        if (fabs(x) < 1e30 && fabs(y) > 1e-30)
            bad += !same(sl_fmod(x, y), fmod(x, y));
    }
    CHECK(bad == 0, "floor, ceil, trunc and fmod of %d random doubles are libm's (%d differ)", n,
          bad);
    bad = 0;
    for (int i = 0; i < 20000; i++) {
        double x = random_double(), y = random_double();
        bad += !same(sl_fmod(x, y), fmod(x, y));
    }
    CHECK(bad == 0, "fmod of 20000 random bit patterns is libm's (%d differ)", bad);

    double p = 0;
    sl_err err = {0};
    CHECK(sl_pow(2.5, 3.3, &p, &err) == 0 && same(p, pow(2.5, 3.3)), "pow(2.5, 3.3) is libm's");
    CHECK(sl_pow(-8, 1.0 / 3, &p, &err) == 0 && isnan(p), "pow of a negative to 1/3 is NaN");
    bad = 0;
    for (long long e = -400; e <= 400; e++)
        bad += sl_pow10(e, &p, &err) || !same(p, pow(10, (double)e));
    CHECK(bad == 0, "10^p from -400 to 400 is libm's pow (%d differ)", bad);
    sl_err_clear(&err);
    return tap_done();
}
