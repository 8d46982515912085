/* fdlibm 5.3's sin and cos (Sun Microsystems, 1993: "Permission to use,
 * copy, modify, and distribute this software is freely granted, provided
 * that this notice is preserved."), in the form V8 ships them
 * (src/base/ieee754.cc): __kernel_sin, __kernel_cos, and the argument
 * reduction __ieee754_rem_pio2 up to its medium range. Same constants,
 * same operation order: the point is identical rounding, not speed. */
#include "sk_fdlibm.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int32_t high_word(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return (int32_t)(u >> 32);
}

static double with_high_word(int32_t hi) {
  uint64_t u = (uint64_t)(uint32_t)hi << 32;
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* sin(x + y) for |x| <= pi/4, y the tail of x; iy == 0 means y is 0. */
static double kernel_sin(double x, double y, int iy) {
  static const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                      S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                      S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  int32_t ix = high_word(x) & 0x7fffffff;
  if (ix < 0x3e400000 && (int)x == 0) /* |x| < 2^-27 */
    return x;
  double z = x * x, v = z * x;
  double r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
  if (iy == 0)
    return x + v * (S1 + z * r);
  return x - ((z * (0.5 * y - v * r) - y) - v * S1);
}

/* cos(x + y) for |x| <= pi/4, y the tail of x. */
static double kernel_cos(double x, double y) {
  static const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                      C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                      C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  int32_t ix = high_word(x) & 0x7fffffff;
  if (ix < 0x3e400000 && (int)x == 0) /* |x| < 2^-27 */
    return 1.0;
  double z = x * x;
  double r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
  if (ix < 0x3fd33333) /* |x| < 0.3 */
    return 1.0 - (0.5 * z - (z * r - x * y));
  double qx = ix > 0x3fe90000 ? 0.28125 : with_high_word(ix - 0x00200000); /* x/4, low word 0 */
  double hz = 0.5 * z - qx, a = 1.0 - qx;
  return a - (hz - (z * r - x * y));
}

/* x - n*pi/2 as y[0] + y[1]; returns n, or INT32_MIN when |x| is past the
 * medium range (the caller then uses the C library). */
static int32_t rem_pio2(double x, double *y) {
  static const double invpio2 = 6.36619772367581382433e-01, pio2_1 = 1.57079632673412561417e+00,
                      pio2_1t = 6.07710050650619224932e-11, pio2_2 = 6.07710050630396597660e-11,
                      pio2_2t = 2.02226624879595063154e-21, pio2_3 = 2.02226624871116645580e-21,
                      pio2_3t = 8.47842766036889956997e-32;
  /* high words of k*pi/2, k = 1..32 */
  static const int32_t npio2_hw[] = {
      0x3ff921fb, 0x400921fb, 0x4012d97c, 0x401921fb, 0x401f6a7a, 0x4022d97c, 0x4025fdbb, 0x402921fb,
      0x402c463a, 0x402f6a7a, 0x4031475c, 0x4032d97c, 0x40346b9c, 0x4035fdbb, 0x40378fdb, 0x403921fb,
      0x403ab41b, 0x403c463a, 0x403dd85a, 0x403f6a7a, 0x40407e4c, 0x4041475c, 0x4042106c, 0x4042d97c,
      0x4043a28c, 0x40446b9c, 0x404534ac, 0x4045fdbb, 0x4046c6cb, 0x40478fdb, 0x404858eb, 0x404921fb};
  int32_t hx = high_word(x), ix = hx & 0x7fffffff;
  if (ix < 0x4002d97c) { /* |x| < 3pi/4: n = +-1 (|x| <= pi/4 never gets here) */
    double z;
    if (hx > 0) {
      z = x - pio2_1;
      if (ix != 0x3ff921fb) { /* 33+53 bits of pi are enough */
        y[0] = z - pio2_1t;
        y[1] = (z - y[0]) - pio2_1t;
      } else { /* near pi/2: 33+33+53 bits */
        z -= pio2_2;
        y[0] = z - pio2_2t;
        y[1] = (z - y[0]) - pio2_2t;
      }
      return 1;
    }
    z = x + pio2_1;
    if (ix != 0x3ff921fb) {
      y[0] = z + pio2_1t;
      y[1] = (z - y[0]) + pio2_1t;
    } else {
      z += pio2_2;
      y[0] = z + pio2_2t;
      y[1] = (z - y[0]) + pio2_2t;
    }
    return -1;
  }
  if (ix > 0x413921fb) /* past 2^19 * pi/2 */
    return INT32_MIN;
  double t = fabs(x);
  int32_t n = (int32_t)(t * invpio2 + 0.5);
  double fn = (double)n, r = t - fn * pio2_1, w = fn * pio2_1t; /* first round: 85 bits */
  if (n < 32 && ix != npio2_hw[n - 1]) {
    y[0] = r - w; /* quick check: no cancellation */
  } else {
    int32_t j = ix >> 20;
    y[0] = r - w;
    int32_t i = j - ((high_word(y[0]) >> 20) & 0x7ff);
    if (i > 16) { /* second round: 118 bits */
      t = r;
      w = fn * pio2_2;
      r = t - w;
      w = fn * pio2_2t - ((t - r) - w);
      y[0] = r - w;
      i = j - ((high_word(y[0]) >> 20) & 0x7ff);
      if (i > 49) { /* third round: 151 bits */
        t = r;
        w = fn * pio2_3;
        r = t - w;
        w = fn * pio2_3t - ((t - r) - w);
        y[0] = r - w;
      }
    }
  }
  y[1] = (r - y[0]) - w;
  if (hx < 0) {
    y[0] = -y[0];
    y[1] = -y[1];
    return -n;
  }
  return n;
}

double sk_fdlibm_sin(double x) {
  int32_t ix = high_word(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) /* |x| ~<= pi/4 */
    return kernel_sin(x, 0.0, 0);
  if (ix >= 0x7ff00000) /* NaN, inf */
    return x - x;
  double y[2];
  int32_t n = rem_pio2(x, y);
  if (n == INT32_MIN)
    return sin(x);
  switch (n & 3) {
  case 0:
    return kernel_sin(y[0], y[1], 1);
  case 1:
    return kernel_cos(y[0], y[1]);
  case 2:
    return -kernel_sin(y[0], y[1], 1);
  default:
    return -kernel_cos(y[0], y[1]);
  }
}

double sk_fdlibm_cos(double x) {
  int32_t ix = high_word(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb)
    return kernel_cos(x, 0.0);
  if (ix >= 0x7ff00000)
    return x - x;
  double y[2];
  int32_t n = rem_pio2(x, y);
  if (n == INT32_MIN)
    return cos(x);
  switch (n & 3) {
  case 0:
    return kernel_cos(y[0], y[1]);
  case 1:
    return -kernel_sin(y[0], y[1], 1);
  case 2:
    return -kernel_cos(y[0], y[1]);
  default:
    return kernel_sin(y[0], y[1], 1);
  }
}
