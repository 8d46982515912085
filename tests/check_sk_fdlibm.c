/* sk_fdlibm: sin and cos bit for bit as V8's Math.sin/Math.cos, on the
 * arguments of tests/data/v8_sincos.txt (tests/oracle/v8_sincos.mjs). */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sk_fdlibm.h"
#include "sk_testutil.h"

static double from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

static uint64_t to_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

START_TEST(sin_and_cos_equal_v8_bit_for_bit) {
  char path[1024];
  FILE *f = fopen(sk_test_path("data/v8_sincos.txt", path, sizeof path), "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  uint64_t x, s, c;
  int n = 0, nan = 0, libc_differs = 0;
  while (fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &x, &s, &c) == 3) {
    double a = from_bits(x), gs = sk_fdlibm_sin(a), gc = sk_fdlibm_cos(a);
    n++;
    if (isnan(from_bits(s))) { /* NaN, +-inf: any NaN */
      ck_assert(isnan(gs) && isnan(gc));
      nan++;
      continue;
    }
    ck_assert_msg(to_bits(gs) == s, "sin(%.17g): %.17g, V8 %.17g", a, gs, from_bits(s));
    ck_assert_msg(to_bits(gc) == c, "cos(%.17g): %.17g, V8 %.17g", a, gc, from_bits(c));
    libc_differs += to_bits(sin(a)) != s || to_bits(cos(a)) != c;
  }
  fclose(f);
  printf("v8_sincos.txt: %d arguments equal V8 (%d NaN); the C library differs on %d\n", n, nan, libc_differs);
  ck_assert_int_ge(n, 4000);
  ck_assert_int_eq(nan, 3);
}
END_TEST

/* The quaternion of setRotation's Euler angles in a generated case (seed
 * 20261124, case 15): glibc's sin(-0.7566) is one ulp off V8's. */
START_TEST(the_half_angle_that_broke_a_generated_case) {
  ck_assert(sk_fdlibm_sin(-0.7566) == -0.68645302546007181);
  ck_assert(sk_fdlibm_cos(-0.7566) == 0.72717414959328275);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_fdlibm");
  TCase *g = tcase_create("golden");
  tcase_add_test(g, sin_and_cos_equal_v8_bit_for_bit);
  tcase_add_test(g, the_half_angle_that_broke_a_generated_case);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
