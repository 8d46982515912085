/* sk_fdlibm: sin and cos bit for bit as V8's Math.sin/Math.cos, on the
 * arguments of tests/data/v8_sincos.txt (tests/oracle/v8_sincos.mjs); tan,
 * acos, asin, atan, atan2 on those of tests/data/v8_libm.txt
 * (tests/oracle/v8_libm.mjs); x % y against the C library's fmod. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_math.h"
#include "sk_fdlibm.h"
#include "sk_testutil.h"

START_TEST(sin_and_cos_equal_v8_bit_for_bit) {
  char path[1024];
  FILE *f = fopen(sk_test_path("data/v8_sincos.txt", path, sizeof path), "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  uint64_t x, s, c;
  int n = 0, nan = 0, libc_differs = 0;
  while (fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &x, &s, &c) == 3) {
    double a = sk_test_from_bits(x), gs = sk_fdlibm_sin(a), gc = sk_fdlibm_cos(a);
    n++;
    if (isnan(sk_test_from_bits(s))) { /* NaN, +-inf: any NaN */
      ck_assert(isnan(gs) && isnan(gc));
      nan++;
      continue;
    }
    ck_assert_msg(sk_test_bits(gs) == s, "sin(%.17g): %.17g, V8 %.17g", a, gs, sk_test_from_bits(s));
    ck_assert_msg(sk_test_bits(gc) == c, "cos(%.17g): %.17g, V8 %.17g", a, gc, sk_test_from_bits(c));
    libc_differs += sk_test_bits(sin(a)) != s || sk_test_bits(cos(a)) != c;
  }
  fclose(f);
  printf("v8_sincos.txt: %d arguments equal V8 (%d NaN); the C library differs on %d\n", n, nan, libc_differs);
  ck_assert_int_ge(n, 4000);
  ck_assert_int_eq(nan, 3);
}
END_TEST

/* One call of tests/data/v8_libm.txt: 1 if the result equals V8's bits
 * (any NaN for a NaN); counts where the C library differs. */
static int libm_line_matches(const char *name, double y, double x, uint64_t want, int *libc_differs) {
  double got, libc;
  if (strcmp(name, "atan2") == 0) {
    got = sk_fdlibm_atan2(y, x);
    libc = atan2(y, x);
  } else if (strcmp(name, "tan") == 0) {
    got = sk_fdlibm_tan(y);
    libc = tan(y);
  } else if (strcmp(name, "acos") == 0) {
    got = sk_fdlibm_acos(y);
    libc = acos(y);
  } else if (strcmp(name, "asin") == 0) {
    got = sk_fdlibm_asin(y);
    libc = asin(y);
  } else if (strcmp(name, "atan") == 0) {
    got = sk_fdlibm_atan(y);
    libc = atan(y);
  } else {
    ck_abort_msg("unknown function %s", name);
    return 0;
  }
  if (isnan(sk_test_from_bits(want)))
    return isnan(got);
  *libc_differs += sk_test_bits(libc) != want;
  return sk_test_bits(got) == want;
}

/* SK_V8_LIBM names a bigger file made by the same script (millions of
 * calls; see tests/oracle/v8_libm.mjs), for a one-off run. */
START_TEST(tan_acos_asin_atan_atan2_equal_v8_bit_for_bit) {
  char path[1024], line[256];
  const char *big = getenv("SK_V8_LIBM");
  FILE *f = fopen(big ? big : sk_test_path("data/v8_libm.txt", path, sizeof path), "r");
  ck_assert_msg(f != NULL, "cannot open %s", big ? big : path);
  int n = 0, nan = 0, atan2_n = 0, libc_differs = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    char name[8];
    uint64_t a, b, c;
    int k = sscanf(line, "%7s %" SCNx64 " %" SCNx64 " %" SCNx64, name, &a, &b, &c);
    ck_assert_msg(k == 3 || (k == 4 && strcmp(name, "atan2") == 0), "bad line %d: %s", n + 1, line);
    uint64_t want = k == 4 ? c : b;
    double y = sk_test_from_bits(a), x = k == 4 ? sk_test_from_bits(b) : 0;
    n++;
    nan += isnan(sk_test_from_bits(want));
    atan2_n += k == 4;
    if (!libm_line_matches(name, y, x, want, &libc_differs) && bad++ < 10)
      printf("%s(%.17g%s%.17g): V8 %.17g\n", name, y, k == 4 ? ", " : "", x, sk_test_from_bits(want));
  }
  fclose(f);
  printf("%s: %d calls equal V8 (%d NaN, %d atan2); the C library differs on %d\n", big ? big : "v8_libm.txt",
         n - bad, nan, atan2_n, libc_differs);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_ge(n, big ? 5 : 5000);
  ck_assert_int_ge(atan2_n, big ? 1 : 1000);
}
END_TEST

/* The quaternion of setRotation's Euler angles in a generated case (seed
 * 20261124, case 15): glibc's sin(-0.7566) is one ulp off V8's. */
START_TEST(the_half_angle_that_broke_a_generated_case) {
  ck_assert(sk_fdlibm_sin(-0.7566) == -0.68645302546007181);
  ck_assert(sk_fdlibm_cos(-0.7566) == 0.72717414959328275);
}
END_TEST

/* Babylon's Quaternion.SlerpToRef on 4-decimal keys (node 20, Babylon's
 * package in tests/oracle): three pairs where the glibc acos and sin put
 * one component an ulp or more off; sk_anim_math.h's slerp, which clip
 * sampling uses, gives Babylon's bits. */
START_TEST(clip_slerp_equals_babylon_where_glibc_did_not) {
  static const struct {
    double l[4], q[4], t, want[4];
  } c[] = {
      {{-0.9185, -0.6511, -0.8824, -0.7321},
       {-0.1121, -0.267, 0.1249, 0.7574},
       0.57,
       {-0.40602360287161177, -0.16174167726675739, -0.54643556964319839, -0.89288468826652378}},
      {{0.0426, 0.7376, 0.5365, -0.6729},
       {-0.5862, 0.5409, -0.8125, -0.5756},
       0.38,
       {-0.24997932651731147, 0.80167881695509058, 0.0044400217852880175, -0.77077605627858381}},
      {{0.2063, -0.4698, -0.8171, -0.9193},
       {0.1404, -0.6568, -0.056, 0.7239},
       0.24,
       {0.13374353399004901, -0.19794509367978430, -0.68791350602039825, -1.0228734541272320}},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    double r[4];
    sk_anim__quat_slerp(c[k].l, c[k].q, c[k].t, r);
    for (int i = 0; i < 4; i++)
      ck_assert_msg(r[i] == c[k].want[i], "pair %zu [%d]: %.17g, Babylon %.17g", k, i, r[i], c[k].want[i]);
  }
}
END_TEST

static void check_fmod(double x, double y) {
  double got = sk_fdlibm_fmod(x, y), want = fmod(x, y);
  ck_assert_msg(sk_test_bits(got) == sk_test_bits(want) || (isnan(got) && isnan(want)), "fmod(%a, %a): %a, libm %a", x, y,
                got, want);
}

/* sk_fdlibm_fmod's short way against the C library's fmod, bit for bit:
 * a looping clip's frames (seconds times 60 against real end frames, far
 * past the end), exact multiples and their neighbours (where the rounded
 * quotient is one too many), random doubles of every exponent, subnormal
 * divisors, and what takes the library's way (negatives, huge quotients,
 * NaN, infinities, zeros). */
START_TEST(fmod_equals_the_c_library_bit_for_bit) {
  static const double ends[] = {80, 83.33333333333333, 1.0 / 3, 0.1, 60, 12.5, 3.0000000000000004, 1e-3};
  for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
    for (int i = 0; i < 200000; i += (i < 5000 ? 1 : 97)) {
      const double frame = (double)i / 60.0 * 60.0;
      check_fmod(frame, ends[e]);
      check_fmod((double)i * ends[e], ends[e]);
      check_fmod(nextafter((double)i * ends[e], 0), ends[e]);
      check_fmod(nextafter((double)i * ends[e], INFINITY), ends[e]);
    }
  uint64_t z = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 2000000; i++) {
    z = z * 6364136223846793005u + 1442695040888963407u;
    const uint64_t a = z;
    z = z * 6364136223846793005u + 1442695040888963407u;
    const uint64_t b = z;
    /* Exponents near each other (small quotients, the common case) half the time. */
    const double y = sk_test_from_bits(b >> 1);
    const double x = (i & 1) ? sk_test_from_bits(a >> 1) : y * (double)(a % 100000) + sk_test_from_bits((a >> 12) % 0x10000000000000u | 0x3ff0000000000000u) - 1;
    check_fmod(x, y);
    check_fmod(x, sk_test_from_bits((b >> 12) & 0xfffffffffffffu)); /* subnormal or zero */
  }
  const double odd[] = {-0.0, 0.0, -5.5, 5.5, 0x1p52, 0x1p53 + 2, 1e300, INFINITY, -INFINITY, NAN, 0x1p-1074};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    for (size_t j = 0; j < sizeof odd / sizeof odd[0]; j++)
      check_fmod(odd[i], odd[j]);
  check_fmod(0x1p52 - 1, 1);
  check_fmod(0x1p52, 1);
  check_fmod(0x1p53 - 1, 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_fdlibm");
  TCase *g = tcase_create("golden");
  tcase_add_test(g, sin_and_cos_equal_v8_bit_for_bit);
  tcase_add_test(g, the_half_angle_that_broke_a_generated_case);
  tcase_add_test(g, tan_acos_asin_atan_atan2_equal_v8_bit_for_bit);
  tcase_add_test(g, clip_slerp_equals_babylon_where_glibc_did_not);
  tcase_add_test(g, fmod_equals_the_c_library_bit_for_bit);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
