/* sk_bench_mix: the instruction-mix bound runs the count it is given (0
 * included: its loop tests after the body) and only where AVX-512 is. Its
 * figures are `skinner bench`'s business (check_sk_bench). */
#include <stdbool.h>

#include "sk_bench_mix.h"
#include "sk_testutil.h"

START_TEST(zero_iterations_return_at_once) {
  const double t0 = sk_test_now();
  sk_bench_mix_run(0);
  ck_assert(sk_test_now() - t0 < 1.0);
}
END_TEST

START_TEST(time_grows_with_iterations) {
  if (!sk_bench_mix_supported())
    return; /* nothing runs: the bench prints no bound rows */
  /* Not a speed claim: that a run does the work it is asked for. 2^20
   * iterations of about 270 instructions take well over a millisecond on
   * any CPU with AVX-512; a loop that exited early would not. */
  const double t0 = sk_test_now();
  sk_bench_mix_run((size_t)1 << 20);
  ck_assert(sk_test_now() - t0 > 1e-3);
}
END_TEST

START_TEST(supported_only_with_avx512) {
#if defined(__x86_64__)
  ck_assert(sk_bench_mix_supported() == (bool)__builtin_cpu_supports("avx512f"));
#else
  ck_assert(!sk_bench_mix_supported());
#endif
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_bench_mix");
  TCase *tc = tcase_create("run");
  tcase_add_test(tc, zero_iterations_return_at_once);
  tcase_add_test(tc, time_grows_with_iterations);
  tcase_add_test(tc, supported_only_with_avx512);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
