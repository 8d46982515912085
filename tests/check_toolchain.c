/* The compiler as the build uses it (AM_CFLAGS, with configure's
 * SK_FP_CFLAGS, then CFLAGS) computes in IEEE double as written (no fused
 * multiply-add, no fast-math) and keeps every float32 rounding of a double. Babylon stores
 * matrices in Float32Array, so the exact core and the kernel round doubles
 * to float32 and compute on with the result, (double)(float)x, everywhere.
 * GCC 12.2's basic-block (SLP) vectorizer at -O2 dropped such roundings
 * when it packed two of them side by side; these are the shapes found
 * (configure probes the first three). Each function is out of line and
 * its inputs come from memory, so only the vectorizer can pair them. */
#include <string.h>

#include "sk_testutil.h"

typedef struct {
  double x, y, z;
} v3;

__attribute__((noinline)) static void in_place(double *a) {
  a[0] = (float)a[0];
  a[1] = (float)a[1];
}

__attribute__((noinline)) static void fields(v3 *p) {
  p->x = (float)p->x;
  p->y = (float)p->y;
  p->z = (float)p->z;
}

__attribute__((noinline)) static void locals(double *o, const double *a) {
  double t0 = a[0] + 1, t1 = a[1] + 1;
  t0 = (float)t0;
  t1 = (float)t1;
  o[0] = t0 * 3;
  o[1] = t1 * 3;
}

/* The shape that first showed it: a test's random translation made
 * float32 in a loop, right after it was computed. */
__attribute__((noinline)) static void loop_with_stores(double k, double *out) {
  double t[3], s[3];
  for (int i = 0; i < 3; i++)
    t[i] = k * (i + 1) - 0.05, s[i] = 2;
  for (int i = 0; i < 3; i++)
    t[i] = (float)t[i], s[i] = 1;
  for (int i = 0; i < 3; i++)
    out[i] = t[i] * s[i];
}

/* A float32 rounding the vectorizer cannot touch: through memory. */
static double f32(double v) {
  volatile float f = (float)v;
  return f;
}

static volatile double seed = 0.1; /* not a constant the compiler can fold */

START_TEST(roundings_in_place) {
  const double k = seed;
  double a[2] = {k, 2 * k};
  in_place(a);
  ck_assert(a[0] == f32(k) && a[1] == f32(2 * k));
  ck_assert(a[0] != k); /* 0.1 is not a float32 value: the test means something */
}
END_TEST

START_TEST(roundings_of_fields) {
  const double k = seed;
  v3 p = {k, 2 * k, 3 * k};
  fields(&p);
  ck_assert(p.x == f32(k) && p.y == f32(2 * k) && p.z == f32(3 * k));
}
END_TEST

START_TEST(roundings_of_locals) {
  const double k = seed;
  const double a[2] = {k, 2 * k};
  double o[2];
  locals(o, a);
  ck_assert(o[0] == f32(k + 1) * 3 && o[1] == f32(2 * k + 1) * 3);
}
END_TEST

START_TEST(roundings_in_a_loop) {
  const double k = seed;
  double t[3];
  loop_with_stores(k, t);
  for (int i = 0; i < 3; i++)
    ck_assert_msg(t[i] == f32(k * (i + 1) - 0.05), "t[%d] = %a", i, t[i]);
}
END_TEST

/* Babylon multiplies, then adds: two roundings. A `make CFLAGS=...` after
 * configure (its probe checks the same) could bring -ffp-contract=fast or
 * -ffast-math back, after the build's -ffp-contract=off. */
START_TEST(ieee_as_written) {
#ifdef __FAST_MATH__
  ck_abort_msg("built with -ffast-math (or -Ofast)");
#endif
  volatile double a = 1 + 0x1p-30, b = 1 - 0x1p-30, c = -1;
  const double r = a * b + c; /* 1 - 2^-60 rounds to 1 first: 0; fused: -2^-60 */
  ck_assert_msg(r == 0, "a * b + c = %a: fused", r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("toolchain");
  TCase *tc = tcase_create("float32 roundings");
  tcase_add_test(tc, ieee_as_written);
  tcase_add_test(tc, roundings_in_place);
  tcase_add_test(tc, roundings_of_fields);
  tcase_add_test(tc, roundings_of_locals);
  tcase_add_test(tc, roundings_in_a_loop);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
