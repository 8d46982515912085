/* fdlibm 5.3's sin, cos, tan, acos, asin, atan and atan2 (Sun Microsystems, 1993: "Permission to use,
 * copy, modify, and distribute this software is freely granted, provided
 * that this notice is preserved."), in the form V8 ships them
 * (src/base/ieee754.cc of V8 11.3, node 20): __kernel_sin, __kernel_cos,
 * __kernel_tan, the argument reduction __ieee754_rem_pio2 up to its medium
 * range, acos, asin, atan, atan2. Newer V8 moved sin, cos and tan to
 * llvm-libc; node 20 is what the oracle runs. Same constants,
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

/* The rational approximation of (asin(x) - x) / x^3 in z = x^2 that asin
 * and acos share, p/q, evaluated in fdlibm's order. */
static double asin_ratio(double z, double *q_out) {
  static const double pS0 = 1.66666666666666657415e-01, pS1 = -3.25565818622400915405e-01,
                      pS2 = 2.01212532134862925881e-01, pS3 = -4.00555345006794114027e-02,
                      pS4 = 7.91534994289814532176e-04, pS5 = 3.47933107596021167570e-05,
                      qS1 = -2.40339491173441421878e+00, qS2 = 2.02094576023350569471e+00,
                      qS3 = -6.88283971605453293030e-01, qS4 = 7.70381505559019352791e-02;
  *q_out = 1.0 + z * (qS1 + z * (qS2 + z * (qS3 + z * qS4)));
  return z * (pS0 + z * (pS1 + z * (pS2 + z * (pS3 + z * (pS4 + z * pS5)))));
}

static uint32_t low_word(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return (uint32_t)u;
}

static double with_low_word_zero(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  u &= 0xffffffff00000000u;
  memcpy(&x, &u, sizeof x);
  return x;
}

static const double pio2_hi = 1.57079632679489655800e+00, pio2_lo = 6.12323399573676603587e-17;

double sk_fdlibm_acos(double x) {
  static const double pi = 3.14159265358979311600e+00;
  int32_t hx = high_word(x), ix = hx & 0x7fffffff;
  double p, q, s, z;
  if (ix >= 0x3ff00000) { /* |x| >= 1 */
    if (((ix - 0x3ff00000) | low_word(x)) == 0)
      return hx > 0 ? 0.0 : pi + 2.0 * pio2_lo;
    return NAN; /* |x| > 1, NaN */
  }
  if (ix < 0x3fe00000) { /* |x| < 0.5 */
    if (ix <= 0x3c600000) /* |x| < 2^-57 */
      return pio2_hi + pio2_lo;
    z = x * x;
    p = asin_ratio(z, &q);
    return pio2_hi - (x - (pio2_lo - x * (p / q)));
  }
  if (hx < 0) { /* x < -0.5: pi - 2 asin(sqrt((1 + x) / 2)) */
    z = (1.0 + x) * 0.5;
    p = asin_ratio(z, &q);
    s = sqrt(z);
    return pi - 2.0 * (s + ((p / q) * s - pio2_lo));
  }
  /* x > 0.5: 2 asin(sqrt((1 - x) / 2)), the root split in a 21-bit head
   * and a correction */
  z = (1.0 - x) * 0.5;
  s = sqrt(z);
  double df = with_low_word_zero(s), c = (z - df * df) / (s + df);
  p = asin_ratio(z, &q);
  return 2.0 * (df + ((p / q) * s + c));
}

double sk_fdlibm_asin(double x) {
  static const double pio4_hi = 7.85398163397448278999e-01;
  int32_t hx = high_word(x), ix = hx & 0x7fffffff;
  double p, q, t = 0;
  if (ix >= 0x3ff00000) { /* |x| >= 1 */
    if (((ix - 0x3ff00000) | low_word(x)) == 0)
      return x * pio2_hi + x * pio2_lo;
    return NAN;
  }
  if (ix < 0x3fe00000) { /* |x| < 0.5 */
    if (ix < 0x3e400000) /* |x| < 2^-27 */
      return x;
    t = x * x;
    p = asin_ratio(t, &q);
    return x + x * (p / q);
  }
  /* 0.5 <= |x| < 1: pi/2 - 2 asin(sqrt((1 - |x|) / 2)) */
  t = (1.0 - fabs(x)) * 0.5;
  p = asin_ratio(t, &q);
  double s = sqrt(t);
  if (ix >= 0x3fef3333) { /* |x| > 0.975 */
    t = pio2_hi - (2.0 * (s + s * (p / q)) - pio2_lo);
  } else {
    double w = with_low_word_zero(s), c = (t - w * w) / (s + w), r = p / q;
    p = 2.0 * s * r - (pio2_lo - 2.0 * c);
    q = pio4_hi - 2.0 * w;
    t = pio4_hi - (p - q);
  }
  return hx > 0 ? t : -t;
}

double sk_fdlibm_atan(double x) {
  static const double atanhi[] = {4.63647609000806093515e-01, 7.85398163397448278999e-01,
                                  9.82793723247329054082e-01, 1.57079632679489655800e+00};
  static const double atanlo[] = {2.26987774529616870924e-17, 3.06161699786838301793e-17,
                                  1.39033110312309984516e-17, 6.12323399573676603587e-17};
  static const double aT[] = {3.33333333333329318027e-01,  -1.99999999998764832476e-01, 1.42857142725034663711e-01,
                              -1.11111104054623557880e-01, 9.09088713343650656196e-02,  -7.69187620504482999495e-02,
                              6.66107313738753120669e-02,  -5.83357013379057348645e-02, 4.97687799461593236017e-02,
                              -3.65315727442169155270e-02, 1.62858201153657823623e-02};
  int32_t hx = high_word(x), ix = hx & 0x7fffffff, id;
  if (ix >= 0x44100000) { /* |x| >= 2^66, inf, NaN */
    if (isnan(x))
      return x + x;
    return hx > 0 ? atanhi[3] + atanlo[3] : -atanhi[3] - atanlo[3];
  }
  if (ix < 0x3fdc0000) { /* |x| < 0.4375 */
    if (ix < 0x3e400000) /* |x| < 2^-27 */
      return x;
    id = -1;
  } else { /* reduce by atan(a) + atan((x - a) / (1 + a x)), a = 1/2, 1, 3/2, inf */
    x = fabs(x);
    if (ix < 0x3ff30000) { /* |x| < 1.1875 */
      if (ix < 0x3fe60000) { /* 7/16 <= |x| < 11/16 */
        id = 0;
        x = (2.0 * x - 1.0) / (2.0 + x);
      } else {
        id = 1;
        x = (x - 1.0) / (x + 1.0);
      }
    } else if (ix < 0x40038000) { /* |x| < 2.4375 */
      id = 2;
      x = (x - 1.5) / (1.0 + 1.5 * x);
    } else {
      id = 3;
      x = -1.0 / x;
    }
  }
  double z = x * x, w = z * z;
  /* odd and even halves of the polynomial */
  double s1 = z * (aT[0] + w * (aT[2] + w * (aT[4] + w * (aT[6] + w * (aT[8] + w * aT[10])))));
  double s2 = w * (aT[1] + w * (aT[3] + w * (aT[5] + w * (aT[7] + w * aT[9]))));
  if (id < 0)
    return x - x * (s1 + s2);
  z = atanhi[id] - ((x * (s1 + s2) - atanlo[id]) - x);
  return hx < 0 ? -z : z;
}

double sk_fdlibm_atan2(double y, double x) {
  static const double pi_o_4 = 7.8539816339744827900e-01, pi_o_2 = 1.5707963267948965580e+00,
                      pi = 3.1415926535897931160e+00, pi_lo = 1.2246467991473531772e-16;
  if (isnan(x) || isnan(y))
    return x + y;
  int32_t hx = high_word(x), ix = hx & 0x7fffffff, hy = high_word(y), iy = hy & 0x7fffffff;
  uint32_t lx = low_word(x), ly = low_word(y);
  if (x == 1.0)
    return sk_fdlibm_atan(y);
  int m = ((hy >> 31) & 1) | ((hx >> 30) & 2); /* 2 * sign(x) + sign(y) */
  if ((iy | ly) == 0) /* y = +-0 */
    return m < 2 ? y : m == 2 ? pi : -pi;
  if ((ix | lx) == 0) /* x = +-0 */
    return hy < 0 ? -pi_o_2 : pi_o_2;
  if (ix == 0x7ff00000) { /* x = +-inf */
    static const double both_inf[] = {1.0, -1.0, 3.0, -3.0}, y_finite[] = {0.0, -0.0, pi, -pi};
    if (iy == 0x7ff00000)
      return both_inf[m] * pi_o_4;
    return y_finite[m];
  }
  if (iy == 0x7ff00000) /* y = +-inf */
    return hy < 0 ? -pi_o_2 : pi_o_2;
  int32_t k = (iy - ix) >> 20;
  double z;
  if (k > 60) { /* |y/x| > 2^60 */
    z = pi_o_2 + 0.5 * pi_lo;
    m &= 1;
  } else if (hx < 0 && k < -60) { /* 0 > |y|/x > -2^-60 */
    z = 0.0;
  } else {
    z = sk_fdlibm_atan(fabs(y / x));
  }
  switch (m) {
  case 0:
    return z;
  case 1:
    return -z;
  case 2:
    return pi - (z - pi_lo);
  default:
    return (z - pi_lo) - pi;
  }
}

/* tan(x + y) for |x| <= pi/4, y the tail of x; iy 1 gives tan, -1 gives
 * -1/tan, computed so that the quotient keeps its last bits. */
static double kernel_tan(double x, double y, int iy) {
  static const double T[] = {3.33333333333334091986e-01,  1.33333333333201242699e-01, 5.39682539762260521377e-02,
                             2.18694882948595424599e-02,  8.86323982359930005737e-03, 3.59207910759131235356e-03,
                             1.45620945432529025516e-03,  5.88041240820264096874e-04, 2.46463134818469906812e-04,
                             7.81794442939557092300e-05,  7.14072491382608190305e-05, -1.85586374855275456654e-05,
                             2.59073051863633712884e-05};
  static const double pio4 = 7.85398163397448278999e-01, pio4lo = 3.06161699786838301793e-17;
  int32_t hx = high_word(x), ix = hx & 0x7fffffff;
  double z, r, v, w, s;
  if (ix < 0x3e300000 && (int)x == 0) { /* |x| < 2^-28 */
    if (((ix | (int32_t)low_word(x)) | (iy + 1)) == 0)
      return 1.0 / fabs(x);
    if (iy == 1)
      return x;
    /* -1 / (x + y) with a split quotient */
    z = w = x + y;
    z = with_low_word_zero(z);
    v = y - (z - x);
    double a = -1.0 / w, t = with_low_word_zero(a);
    s = 1.0 + t * z;
    return t + a * (s + t * v);
  }
  if (ix >= 0x3fe59428) { /* |x| >= 0.6744: tan(pi/4 - x) */
    if (hx < 0) {
      x = -x;
      y = -y;
    }
    z = pio4 - x;
    w = pio4lo - y;
    x = z + w;
    y = 0.0;
  }
  z = x * x;
  w = z * z;
  /* odd and even halves of the polynomial */
  r = T[1] + w * (T[3] + w * (T[5] + w * (T[7] + w * (T[9] + w * T[11]))));
  v = z * (T[2] + w * (T[4] + w * (T[6] + w * (T[8] + w * (T[10] + w * T[12])))));
  s = z * x;
  r = y + z * (s * (r + v) + y);
  r += T[0] * s;
  w = x + r;
  if (ix >= 0x3fe59428) {
    v = (double)iy;
    return (double)(1 - ((hx >> 30) & 2)) * (v - 2.0 * (x - (w * w / (w + v) - r)));
  }
  if (iy == 1)
    return w;
  z = with_low_word_zero(w);
  v = r - (z - x);
  double a = -1.0 / w, t = with_low_word_zero(a);
  s = 1.0 + t * z;
  return t + a * (s + t * v);
}

double sk_fdlibm_tan(double x) {
  int32_t ix = high_word(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) /* |x| ~<= pi/4 */
    return kernel_tan(x, 0.0, 1);
  if (ix >= 0x7ff00000)
    return x - x;
  double y[2];
  int32_t n = rem_pio2(x, y);
  if (n == INT32_MIN)
    return tan(x);
  return kernel_tan(y[0], y[1], 1 - ((n & 1) << 1));
}

/* Why the short way is exact: d = x / y rounds to at least the true
 * quotient's floor (that integer is a double and rounding is monotone) and
 * to at most the next integer, so q is the floor or one more. Since x >= y,
 * x and q * y are multiples of ulp(y), and so is x - q * y, which lies in
 * [-y, y): a multiple of ulp(y) smaller than y in magnitude is a double, so
 * fma's one rounding leaves it exact, and adding y back to a negative one
 * is exact too (the sum is fmod's result, again a double). An exact zero
 * comes out +0, as fmod's for x >= 0. */
double sk_fdlibm_fmod(double x, double y) {
  if (!(x >= 0 && y > 0 && x < y * 0x1p52 && isfinite(y)))
    return fmod(x, y);
  if (x < y)
    return x;
  double r = fma(-floor(x / y), y, x);
  return r < 0 ? r + y : r;
}
