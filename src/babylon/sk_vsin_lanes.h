/* The body of one sk_vsin path, included once per vector width by
 * sk_vsin.c with SKV(name), SKV_ATTR, SKV_N (lanes), SKV_ANY(mask) and
 * SKV_SQRT(v) (IEEE's correctly rounded root, as sqrt) defined. Private to sk_vsin.c.
 *
 * Every expression is fdlibm's (src/sk_fdlibm.c) with the lane's value in
 * place of the scalar, in the same order; -ffp-contract=off (Makefile.am)
 * keeps each multiply and add separate, as V8's build does. */

typedef double SKV(vd) __attribute__((vector_size(SKV_N * 8)));
typedef int64_t SKV(vi) __attribute__((vector_size(SKV_N * 8)));
typedef uint64_t SKV(vu) __attribute__((vector_size(SKV_N * 8)));

/* m ? a : b, lane by lane (m all ones or all zeros). */
SKV_ATTR static inline SKV(vd) SKV(pick)(SKV(vi) m, SKV(vd) a, SKV(vd) b) {
  return (SKV(vd))((m & (SKV(vi))a) | (~m & (SKV(vi))b));
}

/* y with the lanes of `other` replaced by fn(px[lane]): the arguments
 * the lanes do not take (rare: never a slerp's). */
SKV_ATTR static SKV(vd) SKV(by_scalar)(SKV(vd) y, SKV(vi) other, const double *px, double (*fn)(double)) {
  double tmp[SKV_N];
  memcpy(tmp, &y, sizeof y);
  for (int k = 0; k < SKV_N; k++)
    if (other[k])
      tmp[k] = fn(px[k]);
  memcpy(&y, tmp, sizeof y);
  return y;
}

/* kernel_sin(x, 0, 0) for 2^-27 <= |x| <= pi/4 (the tiny case is picked by
 * the caller). */
SKV_ATTR static inline SKV(vd) SKV(ksin)(SKV(vd) x) {
  const SKV(vd) z = x * x, v = z * x;
  const SKV(vd) r = VS2 + z * (VS3 + z * (VS4 + z * (VS5 + z * VS6)));
  return x + v * (VS1 + z * r);
}

/* kernel_cos(x, y) for |x| <= pi/4, every branch. */
SKV_ATTR static inline SKV(vd) SKV(kcos)(SKV(vd) x, SKV(vd) y) {
  const SKV(vi) ix = ((SKV(vi))x >> 32) & 0x7fffffff;
  const SKV(vd) z = x * x;
  const SKV(vd) r = z * (VC1 + z * (VC2 + z * (VC3 + z * (VC4 + z * (VC5 + z * VC6)))));
  const SKV(vd) near0 = 1.0 - (0.5 * z - (z * r - x * y));
  /* x/4 with its low word 0, or 0.28125 above 0.78125 */
  const SKV(vd) qx = SKV(pick)(ix > 0x3fe90000, (SKV(vd)){0} + 0.28125, (SKV(vd))((SKV(vu))(ix - 0x00200000) << 32));
  const SKV(vd) hz = 0.5 * z - qx, a = 1.0 - qx;
  const SKV(vd) far = a - (hz - (z * r - x * y));
  const SKV(vd) c = SKV(pick)(ix < 0x3fd33333, near0, far);
  return SKV(pick)(ix < 0x3e400000, (SKV(vd)){0} + 1.0, c);
}

/* rem_pio2 for pi/4 < |x| < 3pi/4 (n = 1, x >= 0 here), then kernel_cos
 * (n & 3 == 1): 33 + 53 bits of pi/2, or 33 + 33 + 53 when x's high word
 * is pi/2's. */
SKV_ATTR static inline SKV(vd) SKV(reduced)(SKV(vd) ax, SKV(vi) ix) {
  const SKV(vi) at_pio2 = ix == 0x3ff921fb;
  const SKV(vd) z1 = ax - VPIO2_1;
  const SKV(vd) z = SKV(pick)(at_pio2, z1 - VPIO2_2, z1);
  const SKV(vd) tail = SKV(pick)(at_pio2, (SKV(vd)){0} + VPIO2_2T, (SKV(vd)){0} + VPIO2_1T);
  const SKV(vd) y0 = z - tail, y1 = (z - y0) - tail;
  return SKV(kcos)(y0, y1);
}

/* One vector of arguments. Slerp arguments between keys a frame apart are
 * small angles: the second branch is computed only when a lane needs it;
 * lanes past both (large, NaN, infinite) get sk_fdlibm_sin. */
SKV_ATTR static void SKV(sin_vec)(const double *px, double *py) {
  SKV(vd) x;
  memcpy(&x, px, sizeof x);
  const SKV(vi) bits = (SKV(vi))x, sign = bits & (int64_t)INT64_MIN;
  const SKV(vd) ax = (SKV(vd))(bits ^ sign);
  const SKV(vi) ix = bits >> 32 & 0x7fffffff;
  /* |x| <= pi/4 (high word): kernel_sin, or x itself below 2^-27 */
  SKV(vd) r = SKV(pick)(ix < 0x3e400000, ax, SKV(ksin)(ax));
  const SKV(vi) past = ix > 0x3fe921fb;
  if (SKV_ANY(past))
    r = SKV(pick)(past, SKV(reduced)(ax, ix), r);
  SKV(vd) y = (SKV(vd))((SKV(vi))r ^ sign);
  const SKV(vi) other = ix >= 0x4002d97c;
  if (SKV_ANY(other))
    y = SKV(by_scalar)(y, other, px, sk_fdlibm_sin);
  memcpy(py, &y, sizeof y);
}


/* asin_ratio's p / q (src/sk_fdlibm.c), in its order. */
SKV_ATTR static inline SKV(vd) SKV(ratio)(SKV(vd) z) {
  const SKV(vd) q = 1.0 + z * (VQS1 + z * (VQS2 + z * (VQS3 + z * VQS4)));
  const SKV(vd) p = z * (VPS0 + z * (VPS1 + z * (VPS2 + z * (VPS3 + z * (VPS4 + z * VPS5)))));
  return p / q;
}

/* sk_fdlibm_acos on one vector. Lanes run its branches for 0 <= |x| < 0.5
 * and 0.5 <= x < 1, which hold every slerp dot (a magnitude): each branch
 * applies asin_ratio to its own z, so z is picked first and the ratio
 * computed once. Lanes past them (x <= -0.5, |x| >= 1, NaN) get
 * sk_fdlibm_acos. */
SKV_ATTR static void SKV(acos_vec)(const double *px, double *py) {
  SKV(vd) x;
  memcpy(&x, px, sizeof x);
  const SKV(vi) hx = (SKV(vi))x >> 32, ix = hx & 0x7fffffff;
  const SKV(vi) small = ix < 0x3fe00000;
  const SKV(vd) z = SKV(pick)(small, x * x, (1.0 - x) * 0.5);
  const SKV(vd) r = SKV(ratio)(z);
  const SKV(vd) near0 = VPIO2_HI - (x - (VPIO2_LO - x * r));
  const SKV(vd) s = SKV_SQRT(z);
  const SKV(vd) df = (SKV(vd))((SKV(vu))s & 0xffffffff00000000u);
  const SKV(vd) c = (z - df * df) / (s + df);
  const SKV(vd) near1 = 2.0 * (df + (r * s + c));
  SKV(vd) y = SKV(pick)(small, SKV(pick)(ix <= 0x3c600000, (SKV(vd)){0} + (VPIO2_HI + VPIO2_LO), near0), near1);
  const SKV(vi) other = (ix >= 0x3ff00000) | (~small & (hx < 0));
  if (SKV_ANY(other))
    y = SKV(by_scalar)(y, other, px, sk_fdlibm_acos);
  memcpy(py, &y, sizeof y);
}

/* Whole vectors by `vec`, the tail by `one`. */
SKV_ATTR static inline void SKV(over)(void (*vec)(const double *, double *), double (*one)(double), const double *x,
                                      double *y, size_t n) {
  size_t i = 0;
  for (; i + SKV_N <= n; i += SKV_N)
    vec(x + i, y + i);
  for (; i < n; i++)
    y[i] = one(x[i]);
}

SKV_ATTR static void SKV(run)(const double *x, double *y, size_t n) { SKV(over)(SKV(sin_vec), sk_fdlibm_sin, x, y, n); }

SKV_ATTR static void SKV(run_acos)(const double *x, double *y, size_t n) {
  SKV(over)(SKV(acos_vec), sk_fdlibm_acos, x, y, n);
}

#undef SKV
#undef SKV_ATTR
#undef SKV_N
#undef SKV_ANY
#undef SKV_SQRT
