/*
 * math — the libm functions sluice needs, without linking libm.
 *
 * Linking libm maps one more library, with its relocations and page
 * faults, into every process: 40-60 us of each start here, for a handful
 * of functions.  The exact ones are written here (floor, ceil, trunc,
 * fmod: each result is exact, so there is one right answer and these give
 * it); pow, which is not, comes from libm itself, opened (core/dl) the
 * first time a Jinja `**` of floats or a rounding to a negative number of
 * places needs it.
 */
#ifndef SL_MATH_H
#define SL_MATH_H

#include "core/err.h"

/* x to the power y, as libm's pow (and so Python's float **) gives it.
 * Returns 0 and *out, or -1 and err when libm cannot be loaded. */
int sl_pow(double x, double y, double *out, sl_err *err);

/* 10 to the power p, exactly as pow(10, p) for any p (a table for the
 * powers a double holds exactly, libm for the rest). */
int sl_pow10(long long p, double *out, sl_err *err);

/* As libm's, for every double (NaN, infinities and -0.0 included). */
double sl_floor(double x);
double sl_ceil(double x);
double sl_trunc(double x);
double sl_fmod(double x, double y);
/* Not exact, within an ulp or two of libm's (knowledge scores). */
double sl_sqrt(double x);
double sl_ln(double x);

#endif
