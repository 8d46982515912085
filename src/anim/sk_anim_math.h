/* Babylon's quaternion and Hermite arithmetic, operation for operation
 * (Math.acos and Math.sin as V8 rounds them: sk_fdlibm),
 * shared by the clip sampler of sk_anim.c, the sampling job of
 * sk_sample.c and the Babylon-format blends and additive keys
 * (sk_banim_blend.c, sk_banim_add.c), which must give the same bits.
 * Private to the animation modules. */
#ifndef SK_ANIM_MATH_H
#define SK_ANIM_MATH_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "sk_fdlibm.h"

/* Quaternion.multiplyToRef: r = a * b (r may alias either). */
static inline void sk_anim__quat_mul(const double a[4], const double b[4], double r[4]) {
  double x = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  double y = -a[0] * b[2] + a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[1] - a[1] * b[0] + a[2] * b[3] + a[3] * b[2];
  double w = -a[0] * b[0] - a[1] * b[1] - a[2] * b[2] + a[3] * b[3];
  r[0] = x, r[1] = y, r[2] = z, r[3] = w;
}

/* Quaternion.normalize(): no-op at length 0 or exactly 1. */
static inline void sk_anim__quat_normalize(double q[4]) {
  double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (len == 0 || len == 1.0)
    return;
  double inv = 1.0 / len;
  for (int i = 0; i < 4; i++)
    q[i] *= inv;
}

/* The part of Quaternion.SlerpToRef that depends on the two keys only:
 * p[0] the dot's magnitude, p[1] 1 when it was negative (shortest arc),
 * p[2] acos of it and p[3] 1 / sin of that (0 when the blend is linear). */
static inline void sk_anim__slerp_prep(const double l[4], const double q[4], double *p) {
  double num4 = l[0] * q[0] + l[1] * q[1] + l[2] * q[2] + l[3] * q[3];
  double flag = 0;
  if (num4 < 0) {
    flag = 1;
    num4 = -num4;
  }
  p[0] = num4;
  p[1] = flag;
  p[2] = p[3] = 0;
  if (!(num4 > 0.999999)) {
    double num5 = sk_fdlibm_acos(num4);
    p[2] = num5;
    p[3] = 1.0 / sk_fdlibm_sin(num5);
  }
}

/* The two sines' arguments of Quaternion.SlerpToRef, given
 * sk_anim__slerp_prep's values: (1 - amount) * acos and amount * acos. */
static inline void sk_anim__slerp_args(const double *p, double amount, double a[2]) {
  a[0] = (1.0 - amount) * p[2];
  a[1] = amount * p[2];
}

/* The rest of Quaternion.SlerpToRef, given sk_anim__slerp_prep's values and
 * the sines of sk_anim__slerp_args' arguments (unused when the blend is
 * linear). `r` may alias `l` or `q`. */
static inline void sk_anim__slerp_apply(const double *p, const double l[4], const double q[4], double amount,
                                        const double sines[2], double r[4]) {
  double num2, num3;
  bool flag = p[1] != 0;
  if (p[0] > 0.999999) {
    num3 = 1 - amount;
    num2 = flag ? -amount : amount;
  } else {
    double num6 = p[3];
    num3 = sines[0] * num6;
    num2 = flag ? -sines[1] * num6 : sines[1] * num6;
  }
  double out[4];
  for (int i = 0; i < 4; i++)
    out[i] = num3 * l[i] + num2 * q[i];
  memcpy(r, out, sizeof out);
}

/* The rest of Quaternion.SlerpToRef, given sk_anim__slerp_prep's values.
 * `r` may alias `l` or `q`. */
static inline void sk_anim__slerp_finish(const double *p, const double l[4], const double q[4], double amount,
                                         double r[4]) {
  double a[2] = {0, 0};
  if (!(p[0] > 0.999999)) {
    sk_anim__slerp_args(p, amount, a);
    a[0] = sk_fdlibm_sin(a[0]);
    a[1] = sk_fdlibm_sin(a[1]);
  }
  sk_anim__slerp_apply(p, l, q, amount, a, r);
}

/* Quaternion.SlerpToRef: shortest arc (sign flip on a negative dot), linear
 * blend above a dot of 0.999999. `r` may alias `l` or `q`. */
static inline void sk_anim__quat_slerp(const double l[4], const double q[4], double amount, double r[4]) {
  double p[4];
  sk_anim__slerp_prep(l, q, p);
  sk_anim__slerp_finish(p, l, q, amount, r);
}

/* Vector3/Quaternion.Hermite with Babylon's part1..part4 grouping. */
/* Its four weights, which depend on `amount` only (sk_sample computes them
 * once per frame for a group of channels). */
static inline void sk_anim__hermite_parts(double amount, double part[4]) {
  double squared = amount * amount;
  double cubed = amount * squared;
  part[0] = 2.0 * cubed - 3.0 * squared + 1.0;
  part[1] = -2.0 * cubed + 3.0 * squared;
  part[2] = cubed - 2.0 * squared + amount;
  part[3] = cubed - squared;
}

static inline void sk_anim__hermite(const double *v1, const double *t1, const double *v2, const double *t2,
                                    double amount, int width, double *out) {
  double part[4];
  sk_anim__hermite_parts(amount, part);
  for (int i = 0; i < width; i++)
    out[i] = v1[i] * part[0] + v2[i] * part[1] + t1[i] * part[2] + t2[i] * part[3];
}

#endif
