#include "core/math.h"

#include "core/dl.h"

#include <math.h>

static double (*p_pow)(double, double);
static const char *const libm_names[] = {"libm.so.6", "libm.so", NULL};
static const sl_dl_sym libm_syms[] = {{"pow", (void **)&p_pow}, {NULL, NULL}};
static sl_dl_lib libm_lib = {.what = "libm", .sonames = libm_names, .package = "libc6",
                             .syms = libm_syms};

int sl_pow(double x, double y, double *out, sl_err *err)
{
    if (sl_dl_load(&libm_lib, err))
        return -1;
    *out = p_pow(x, y);
    return 0;
}

int sl_pow10(long long p, double *out, sl_err *err)
{
    /* 10^0 .. 10^22 are exact doubles, and so is what pow returns for them */
    static const double exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (p >= 0 && p < (long long)(sizeof exact / sizeof exact[0])) {
        *out = exact[p];
        return 0;
    }
    return sl_pow(10, (double)p, out, err);
}

/* Past 2^52 every double is a whole number (and so are NaN and the
 * infinities' own values): they are their own floor, ceil and trunc. */
double sl_trunc(double x)
{
    if (!(fabs(x) < 0x1p52) || x == 0)
        return x;
    return copysign((double)(long long)x, x);  /* -0.5 truncates to -0.0 */
}

double sl_floor(double x)
{
    double t = sl_trunc(x);
    return t > x ? t - 1 : t;
}

double sl_ceil(double x)
{
    double t = sl_trunc(x);
    return t < x ? t + 1 : t;
}

/* The remainder is exact: subtract the largest |y| * 2^k that fits, each
 * subtraction exact (Sterbenz: t <= r < 2t), until less than |y| is left. */
double sl_fmod(double x, double y)
{
    if (isnan(x) || isnan(y) || isinf(x) || y == 0)
        return NAN;
    double r = fabs(x), ay = fabs(y);
    if (isinf(y) || r < ay)
        return x;
    int ey;
    frexp(ay, &ey);
    while (r >= ay) {
        int er;
        frexp(r, &er);
        double t = ldexp(ay, er - ey);
        if (t > r)
            t = ldexp(t, -1);
        r -= t;
    }
    return copysign(r, x);
}

/* The square root: one SSE2/hardware instruction through the builtin
 * where the compiler inlines it; for x < 0, NaN, as libm's. */
double sl_sqrt(double x)
{
    if (x < 0 || isnan(x))
        return NAN;
    if (x == 0 || isinf(x))
        return x;
    /* Newton's iteration from a power-of-two guess: quadratic, so a
     * handful of steps reach the double nearest the root. */
    int e;
    frexp(x, &e);
    double r = ldexp(1.0, e / 2);
    for (int i = 0; i < 60; i++) {
        double n = 0.5 * (r + x / r);
        if (n == r)
            break;
        r = n;
    }
    return r;
}

/* The natural logarithm to within an ulp or two: x = m * 2^e with m in
 * [sqrt(1/2), sqrt(2)), ln m = 2 atanh((m-1)/(m+1)) by its series. */
double sl_ln(double x)
{
    if (x < 0 || isnan(x))
        return NAN;
    if (x == 0)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    double s = (m - 1) / (m + 1), s2 = s * s, term = s, sum = 0;
    for (int k = 1; k < 80; k += 2) {
        double add = term / k;
        if (sum + add == sum)
            break;
        sum += add;
        term *= s2;
    }
    return 2 * sum + e * 0.69314718055994530942;
}
