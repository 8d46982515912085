/* sk_vsin: every path this CPU has gives sk_fdlibm_sin's bits (V8's
 * Math.sin), on V8's golden arguments, on every high-word boundary where
 * fdlibm changes branch (and one ulp either side), on millions of random
 * arguments in the slerp's range and across all magnitudes, both signs,
 * NaN and infinities, every array length up to 40 (the scalar tail) and in
 * place. */
#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_error.h"
#include "sk_fdlibm.h"
#include "sk_testutil.h"
#include "sk_vsin.h"

static const char *const k_paths[] = {"avx512", "avx2", "scalar"};

/* splitmix64: reproducible without libc's rand. */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Compares every available path with sk_fdlibm_sin (or, with `acos`,
 * sk_fdlibm_acos) on x[0..n); returns the number of paths run. */
static int check_paths(bool acos, const double *x, size_t n) {
  double *want = malloc((n ? n : 1) * sizeof *want), *got = malloc((n ? n : 1) * sizeof *got);
  ck_assert(want != NULL && got != NULL);
  for (size_t i = 0; i < n; i++)
    want[i] = acos ? sk_fdlibm_acos(x[i]) : sk_fdlibm_sin(x[i]);
  int ran = 0;
  for (size_t p = 0; p < sizeof k_paths / sizeof k_paths[0]; p++) {
    memset(got, 0xa5, (n ? n : 1) * sizeof *got);
    int rc = (acos ? sk_vsin_acos_on : sk_vsin_on)(k_paths[p], x, got, n);
    if (rc == SK_EUNSUPPORTED)
      continue;
    ck_assert_int_eq(rc, 0);
    ran++;
    for (size_t i = 0; i < n; i++)
      ck_assert_msg(sk_test_bits(got[i]) == sk_test_bits(want[i]) || (isnan(got[i]) && isnan(want[i])),
                    "%s: %s(%a) = %a, fdlibm %a", k_paths[p], acos ? "acos" : "sin", x[i], got[i], want[i]);
  }
  free(want);
  free(got);
  return ran;
}

static int check_all_paths(const double *x, size_t n) { return check_paths(false, x, n); }

/* y[i] has V8's bits want[i] (any NaN for a NaN). */
static void assert_golden(const char *fn, const double *x, const double *y, const uint64_t *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(sk_test_bits(y[i]) == want[i] || (isnan(y[i]) && isnan(sk_test_from_bits(want[i]))),
                  "%s(%a): %a, V8 %a", fn, x[i], y[i], sk_test_from_bits(want[i]));
}

START_TEST(equals_v8_golden_arguments) {
  char path[1024];
  FILE *f = fopen(sk_test_path("data/v8_sincos.txt", path, sizeof path), "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  size_t cap = 8192, n = 0;
  double *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y);
  uint64_t a, s, c;
  uint64_t *want = malloc(cap * sizeof *want);
  while (n < cap && fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &a, &s, &c) == 3) {
    x[n] = sk_test_from_bits(a);
    want[n++] = s;
  }
  fclose(f);
  ck_assert_uint_ge(n, 4000);
  sk_vsin(x, y, n);
  assert_golden("sin", x, y, want, n);
  ck_assert_int_ge(check_all_paths(x, n), 1);
  printf("sk_vsin (%s) equals V8 on %zu golden arguments\n", sk_vsin_path(), n);
  free(x);
  free(y);
  free(want);
}
END_TEST

/* fdlibm picks its branch from the argument's high word (and, in
 * kernel_cos, the reduced argument's): each boundary, its neighbours in
 * the high word, and one ulp either side of each. */
START_TEST(branch_boundaries) {
  static const uint32_t hw[] = {0x3e400000, 0x3fd33333, 0x3fe90000, 0x3fe921fb, 0x3ff921fb, 0x4002d97c,
                                0x3fe00000, 0x3ff00000, 0x00000000, 0x00100000, 0x7ff00000, 0x413921fb};
  double x[1024];
  size_t n = 0;
  for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
    for (int64_t d = -1; d <= 1; d++)
      for (int lo = 0; lo < 4; lo++) {
        static const uint32_t low[] = {0, 1, 0x54442d18, 0xffffffff};
        double v = sk_test_from_bits((uint64_t)(uint32_t)(hw[i] + d) << 32 | low[lo]);
        x[n++] = v;
        x[n++] = -v;
        x[n++] = nextafter(v, 0);
        x[n++] = nextafter(v, INFINITY);
      }
  const double special[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, M_PI_4, M_PI_2, 3 * M_PI_4, M_PI,
                            0x1p-1074, 0x1p-1022, 0x1p-27, 1e300};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    x[n++] = special[i];
  /* Arguments whose reduction lands near |y0| = 0.3 or 0.78125 (kernel_cos's branches). */
  for (int k = -40; k <= 40; k++) {
    x[n++] = M_PI_2 + 0.3 + k * 0x1p-50;
    x[n++] = M_PI_2 - 0.78125 + k * 0x1p-50;
  }
  ck_assert_uint_le(n, sizeof x / sizeof x[0]);
  ck_assert_int_ge(check_all_paths(x, n), 1);
  /* -0 keeps its sign */
  double z = -0.0, r;
  sk_vsin(&z, &r, 1);
  ck_assert(signbit(r));
}
END_TEST

START_TEST(random_arguments) {
  const size_t n = (1 << 20) / SK_TEST_RANDOM_DIVISOR;
  double *x = malloc(n * sizeof *x);
  ck_assert(x != NULL);
  uint64_t seed = 20261124;
  /* The slerp's arguments: amount in [0, 1] times an angle in [0, pi/2]. */
  for (size_t i = 0; i < n; i++)
    x[i] = ((double)(next(&seed) >> 11) * 0x1p-53) * (sk_fdlibm_acos((double)(next(&seed) >> 11) * 0x1p-53));
  ck_assert_int_ge(check_all_paths(x, n), 1);
  /* Every magnitude from 2^-30 to 2^22, both signs (reduction branches). */
  for (size_t i = 0; i < n; i++) {
    double m = ldexp((double)(next(&seed) >> 11) * 0x1p-53, (int)(next(&seed) % 52) - 30);
    x[i] = (next(&seed) & 1) ? -m : m;
  }
  ck_assert_int_ge(check_all_paths(x, n), 1);
  /* Raw bit patterns: every exponent, NaN payloads, subnormals. */
  for (size_t i = 0; i < n; i++)
    x[i] = sk_test_from_bits(next(&seed));
  ck_assert_int_ge(check_all_paths(x, n), 1);
  free(x);
}
END_TEST

START_TEST(every_length_and_in_place) {
  double x[40] = {0}, y[40] = {0}, want[40] = {0};
  for (size_t len = 0; len <= 40; len++) {
    for (size_t i = 0; i < len; i++) {
      x[i] = 0.05 * (double)(i + 1) * (i % 3 == 0 ? -1 : 1) + (i == 7 ? 10.0 : 0.0);
      want[i] = sk_fdlibm_sin(x[i]);
    }
    y[len < 40 ? len : 39] = 42; /* past the end: untouched */
    sk_vsin(x, y, len);
    for (size_t i = 0; i < len; i++)
      ck_assert_uint_eq(sk_test_bits(y[i]), sk_test_bits(want[i]));
    if (len < 40)
      ck_assert(y[len] == 42);
    sk_vsin(x, x, len);
    for (size_t i = 0; i < len; i++)
      ck_assert_uint_eq(sk_test_bits(x[i]), sk_test_bits(want[i]));
  }
  ck_assert_int_eq(sk_vsin_on("nope", x, y, 1), SK_EINVAL);
  ck_assert_int_eq(sk_vsin_on(NULL, x, y, 1), SK_EINVAL);
}
END_TEST

/* acos: V8's golden arguments (tests/data/v8_libm.txt), its branch
 * boundaries and one ulp around them, random dots of unit quaternions and
 * raw bit patterns. */
START_TEST(acos_equals_fdlibm) {
  char path[1024];
  FILE *f = fopen(sk_test_path("data/v8_libm.txt", path, sizeof path), "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  const size_t n = 1 << 18; /* golden lines read (at most), and random arguments per kind */
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  uint64_t *want = malloc(n * sizeof *want);
  ck_assert(x != NULL && y != NULL && want != NULL);
  size_t k = 0;
  char line[256];
  uint64_t a, b;
  while (k < n && fgets(line, sizeof line, f) != NULL) /* "fn x y" (atan2: "fn x y z") */
    if (sscanf(line, "acos %" SCNx64 " %" SCNx64, &a, &b) == 2) {
      x[k] = sk_test_from_bits(a);
      want[k++] = b;
    }
  fclose(f);
  ck_assert_uint_ge(k, 1000);
  sk_vsin_acos(x, y, k);
  assert_golden("acos", x, y, want, k);
  ck_assert_int_ge(check_paths(true, x, k), 1);
  /* the high words where fdlibm's acos changes branch, and their neighbours */
  static const uint32_t hw[] = {0x3c600000, 0x3fe00000, 0x3ff00000, 0x00000000, 0x7ff00000, 0x3fefffff};
  static const uint32_t low[] = {0, 1, 0x54442d18, 0xffffffff};
  k = 0;
  for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++)
    for (int64_t d = -1; d <= 1; d++)
      for (int lo = 0; lo < 4; lo++) {
        double v = sk_test_from_bits((uint64_t)(uint32_t)(hw[i] + d) << 32 | low[lo]);
        x[k++] = v;
        x[k++] = -v;
        x[k++] = nextafter(v, 0);
        x[k++] = nextafter(v, INFINITY);
      }
  const double special[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 0.5, -0.5, 1.0, -1.0, 0.999999, 0x1p-1074};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    x[k++] = special[i];
  ck_assert_int_ge(check_paths(true, x, k), 1);
  /* |dot| of two random unit quaternions (the slerp's arguments) */
  uint64_t seed = 20261125;
  const size_t nr = n / SK_TEST_RANDOM_DIVISOR; /* the golden lines above were read whole */
  for (size_t i = 0; i < nr; i++) {
    double q[2][4], len[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
      for (int c = 0; c < 4; c++) {
        q[j][c] = (double)(next(&seed) >> 11) * 0x1p-52 - 1.0;
        len[j] += q[j][c] * q[j][c];
      }
      len[j] = sqrt(len[j]);
    }
    double dot = 0;
    for (int c = 0; c < 4; c++)
      dot += q[0][c] / len[0] * (q[1][c] / len[1]);
    x[i] = fabs(dot);
  }
  ck_assert_int_ge(check_paths(true, x, nr), 1);
  /* near 1 (frames a key apart) and everything in [-1.5, 1.5] */
  for (size_t i = 0; i < nr; i++)
    x[i] = i % 2 ? 1.0 - ldexp((double)(next(&seed) >> 11) * 0x1p-53, -(int)(next(&seed) % 40))
                 : 3.0 * ((double)(next(&seed) >> 11) * 0x1p-53) - 1.5;
  ck_assert_int_ge(check_paths(true, x, nr), 1);
  for (size_t i = 0; i < nr; i++)
    x[i] = sk_test_from_bits(next(&seed));
  ck_assert_int_ge(check_paths(true, x, nr), 1);
  /* every length (the scalar tail) and in place */
  for (size_t len = 0; len <= 20; len++) {
    for (size_t i = 0; i < len; i++)
      x[i] = 0.09 * (double)i - 0.3;
    sk_vsin_acos(x, x, len);
    for (size_t i = 0; i < len; i++)
      ck_assert_uint_eq(sk_test_bits(x[i]), sk_test_bits(sk_fdlibm_acos(0.09 * (double)i - 0.3)));
  }
  ck_assert_int_eq(sk_vsin_acos_on("nope", x, y, 1), SK_EINVAL);
  free(x);
  free(y);
  free(want);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_vsin");
  TCase *t = tcase_create("bits");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, equals_v8_golden_arguments);
  tcase_add_test(t, branch_boundaries);
  tcase_add_test(t, random_arguments);
  tcase_add_test(t, every_length_and_in_place);
  tcase_add_test(t, acos_equals_fdlibm);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
