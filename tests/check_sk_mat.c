#include <stdint.h>
#include <string.h>

#include "sk_mat.h"
#include "sk_testutil.h"

START_TEST(multiply_applies_left_then_right) {
  /* Row vectors: translate by (1,0,0) then scale by 2 moves the origin to (2,0,0). */
  float t[16], s[16], r[16];
  sk_mat_identity(t);
  t[12] = 1;
  sk_mat_identity(s);
  s[0] = s[5] = s[10] = 2;
  sk_mat_mul(t, s, r);
  ck_assert_float_eq(r[12], 2.0f);
  sk_mat_mul(s, t, r);
  ck_assert_float_eq(r[12], 1.0f);
  /* Aliasing the output with an input is allowed. */
  sk_mat_mul(t, s, t);
  ck_assert_float_eq(t[12], 2.0f);
}
END_TEST

/* Babylon's multiplyToArray, written out: each entry summed left to right
 * in double, then stored as float. sk_mat_mul (vectorised, with an AVX2
 * clone on x86) must give these bits exactly, aliasing included. */
static void mul_reference(const float *a, const float *b, float *out) {
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) {
      double acc = (double)a[4 * r] * (double)b[c];
      acc = acc + (double)a[4 * r + 1] * (double)b[4 + c];
      acc = acc + (double)a[4 * r + 2] * (double)b[8 + c];
      acc = acc + (double)a[4 * r + 3] * (double)b[12 + c];
      out[4 * r + c] = (float)acc;
    }
}

START_TEST(multiply_is_bit_exact_with_babylon_order) {
  uint64_t x = 88172645463325252ull;
  for (int it = 0; it < 20000; it++) {
    float a[16], b[16], want[16], got[16];
    for (int i = 0; i < 16; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      /* Wide exponents and both signs: rounding differences would show. */
      const double m = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
      a[i] = (float)(m * ((it % 7) == 0 ? 1e6 : 3));
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b[i] = (float)(((double)(x >> 11) / 9007199254740992.0 * 2 - 1) * ((it % 5) == 0 ? 1e-4 : 2));
    }
    mul_reference(a, b, want);
    sk_mat_mul(a, b, got);
    ck_assert_msg(memcmp(want, got, sizeof got) == 0, "iteration %d", it);
    static const char *const isas[] = {"avx2", "generic"};
    for (int k = 0; k < 2; k++) {
      memset(got, 0, sizeof got);
      if (sk_mat_mul_on(isas[k], a, b, got) == 0)
        ck_assert_msg(memcmp(want, got, sizeof got) == 0, "%s, iteration %d", isas[k], it);
    }
    float alias[16];
    memcpy(alias, a, sizeof alias);
    sk_mat_mul(alias, b, alias);
    ck_assert(memcmp(want, alias, sizeof alias) == 0);
    memcpy(alias, b, sizeof alias);
    sk_mat_mul(a, alias, alias);
    ck_assert(memcmp(want, alias, sizeof alias) == 0);
  }
  /* Cancellation: random inputs almost never show a change of summation
   * order once rounded to float; these do. Each entry has a term +1e16 at
   * position p, -1e16 at q and a small one at s (the fourth is 0): summed
   * left to right the small term survives or is rounded away depending on
   * the positions, so any other order gives other bits for some (p, q, s). */
  for (int p = 0; p < 4; p++)
    for (int q = 0; q < 4; q++)
      for (int sm = 0; sm < 4; sm++) {
        if (p == q || p == sm || q == sm)
          continue;
        float a[16], b[16], want[16], got[16];
        for (int r = 0; r < 4; r++)
          for (int k = 0; k < 4; k++) {
            a[4 * r + k] = k == p || k == q ? 1e8f : k == sm ? 1.0f : 0.0f;
            b[4 * k + r] = k == p ? 1e8f : k == q ? -1e8f : k == sm ? 0.75f * (float)(1 + r) : 0.0f;
          }
        mul_reference(a, b, want);
        static const char *const all[] = {"avx2", "generic"};
        for (int i = 0; i < 2; i++)
          if (sk_mat_mul_on(all[i], a, b, got) == 0)
            ck_assert_msg(memcmp(want, got, sizeof got) == 0, "%s, p %d q %d s %d", all[i], p, q, sm);
        sk_mat_mul(a, b, got);
        ck_assert(memcmp(want, got, sizeof got) == 0);
      }
  float z[16] = {0};
  ck_assert_int_eq(sk_mat_mul_on("neon", z, z, z), -1);
  ck_assert_int_eq(sk_mat_mul_on("avx512", z, z, z), -1);
  ck_assert_int_eq(sk_mat_mul_on("generic", z, z, z), 0);
}
END_TEST

START_TEST(invert_roundtrip_and_singular_copy) {
  const double sc[3] = {2, -3, 0.5}, q[4] = {0.1, 0.2, 0.3, 0.9}, tr[3] = {1, 2, 3};
  float m[16], inv[16], prod[16], id[16];
  sk_mat_compose(sc, q, tr, m);
  ck_assert(sk_mat_invert(m, inv));
  sk_mat_mul(m, inv, prod);
  sk_mat_identity(id);
  SK_ASSERT_MAT_CLOSE(prod, id, 1e-5);
  float z[16] = {0};
  z[0] = 1;
  float out[16];
  ck_assert(!sk_mat_invert(z, out));
  ck_assert_mem_eq(z, out, sizeof z);
  ck_assert(sk_mat_det(z) == 0);
}
END_TEST

START_TEST(compose_never_normalises) {
  const double one[3] = {1, 1, 1}, zero[3] = {0, 0, 0}, q[4] = {0, 0, 1, 1};
  float m[16];
  sk_mat_compose(one, q, zero, m);
  /* q = (0,0,1,1): a 90 degree Z rotation scaled by |q|^2 = 2. */
  ck_assert_float_eq(m[0], -1.0f);
  ck_assert_float_eq(m[1], 2.0f);
  ck_assert_float_eq(m[4], -2.0f);
  ck_assert_float_eq(m[5], -1.0f);
  ck_assert_float_eq(m[10], 1.0f);
}
END_TEST

START_TEST(decompose_puts_negative_determinant_on_y) {
  float m[16];
  sk_mat_identity(m);
  m[0] = -2;
  double s[3], q[4], t[3];
  sk_mat_decompose(m, s, q, t);
  ck_assert_double_eq(s[0], 2);
  ck_assert_double_eq(s[1], -1);
  ck_assert_double_eq(s[2], 1);
  ck_assert_double_eq_tol(fabs(q[2]), 1, 1e-12);
  float back[16];
  sk_mat_compose(s, q, t, back);
  SK_ASSERT_MAT_CLOSE(back, m, 1e-6);
}
END_TEST

START_TEST(decompose_zero_scale_drops_rotation) {
  const double sc[3] = {0, 1, 1}, zero[3] = {0, 0, 0};
  double q[4];
  sk_quat_from_yaw_pitch_roll(1, 0, 0, q);
  float m[16];
  sk_mat_compose(sc, q, zero, m);
  double s[3], r[4], t[3];
  sk_mat_decompose(m, s, r, t);
  ck_assert_double_eq(r[3], 1);
  ck_assert_double_eq(s[1], -1); /* det 0 <= 0 flips Y too */
}
END_TEST

START_TEST(yaw_pitch_roll_matches_rotation_z) {
  /* bone.rotation = (0, 0, a) is a roll: Matrix.RotationZ(a). */
  double q[4];
  const double a = 0.7;
  sk_quat_from_yaw_pitch_roll(0, 0, a, q);
  const double one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
  float m[16];
  sk_mat_compose(one, q, zero, m);
  ck_assert_float_eq_tol(m[0], (float)cos(a), 1e-6);
  ck_assert_float_eq_tol(m[1], (float)sin(a), 1e-6);
  ck_assert_float_eq_tol(m[4], (float)-sin(a), 1e-6);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_mat");
  TCase *g = tcase_create("golden");
  tcase_add_test(g, multiply_applies_left_then_right);
  tcase_add_test(g, multiply_is_bit_exact_with_babylon_order);
  tcase_add_test(g, invert_roundtrip_and_singular_copy);
  tcase_add_test(g, compose_never_normalises);
  tcase_add_test(g, decompose_puts_negative_determinant_on_y);
  tcase_add_test(g, decompose_zero_scale_drops_rotation);
  tcase_add_test(g, yaw_pitch_roll_matches_rotation_z);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
