/* sk_vsin: V8's Math.sin (sk_fdlibm_sin), and its Math.acos, over an array, several arguments
 * per instruction, bit for bit.
 *
 * fdlibm's sin is a fixed sequence of IEEE double operations chosen by a
 * few comparisons of the argument's magnitude. Each SIMD lane here runs the
 * same operations in the same order (every branch computed, the lane's own
 * chosen by a mask), so each lane rounds exactly as the scalar code does:
 * the same bits, not a vector approximation. Lanes run fdlibm's two cheap
 * branches (|x| <= pi/4, and |x| < 3pi/4 with its one-step reduction), which
 * hold every slerp argument (0 <= x <= pi/2); any other argument (larger,
 * NaN, infinite) is handed to sk_fdlibm_sin. The sign is applied last:
 * both branches are odd functions operation for operation (round to
 * nearest is symmetric), so sin(-x) is -sin(x) in fdlibm's own bits.
 *
 * The path is picked from cpuid at each call (AVX-512: 8 lanes, AVX2: 4,
 * scalar elsewhere); every path gives the same bits
 * (tests/check_sk_vsin.c compares each with sk_fdlibm_sin). */
#ifndef SK_VSIN_H
#define SK_VSIN_H

#include <stddef.h>

/* y[i] = sk_fdlibm_sin(x[i]) for i < n; y may be x. */
void sk_vsin(const double *x, double *y, size_t n);

/* The same on a named path ("avx512", "avx2", "scalar"); SK_EUNSUPPORTED
 * when this CPU or build lacks it, SK_EINVAL for an unknown name. */
int sk_vsin_on(const char *path, const double *x, double *y, size_t n);

/* y[i] = sk_fdlibm_acos(x[i]) (V8's Math.acos) for i < n, the same way:
 * lanes run fdlibm's branches for |x| < 0.5 and 0.5 <= x < 1 (every
 * slerp dot's magnitude), other arguments go to sk_fdlibm_acos. y may be
 * x. */
void sk_vsin_acos(const double *x, double *y, size_t n);
int sk_vsin_acos_on(const char *path, const double *x, double *y, size_t n);

/* The path sk_vsin uses on this CPU. */
const char *sk_vsin_path(void);

#endif
