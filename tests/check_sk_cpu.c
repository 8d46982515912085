/* sk_cpu: path names to ISAs, and the feature test against the builtins. */
#include <check.h>

#include "sk_cpu.h"
#include "sk_testutil.h"

START_TEST(names_parse_to_their_isa) {
  ck_assert_int_eq(sk_isa_parse("scalar"), SK_ISA_SCALAR);
  ck_assert_int_eq(sk_isa_parse("generic"), SK_ISA_SCALAR);
  ck_assert_int_eq(sk_isa_parse("sse2"), SK_ISA_SSE2);
  ck_assert_int_eq(sk_isa_parse("avx2"), SK_ISA_AVX2);
  ck_assert_int_eq(sk_isa_parse("avx512"), SK_ISA_AVX512);
  ck_assert_int_eq(sk_isa_parse("neon"), -1);
  ck_assert_int_eq(sk_isa_parse("AVX2"), -1);
  ck_assert_int_eq(sk_isa_parse(""), -1);
  ck_assert_int_eq(sk_isa_parse(NULL), -1);
}
END_TEST

START_TEST(features_are_the_builtins) {
  ck_assert(sk_cpu_has(0));
#if defined(__x86_64__) || defined(__i386__)
  ck_assert_int_eq(sk_cpu_has(SK_CPU_SSE2), __builtin_cpu_supports("sse2") != 0);
  ck_assert_int_eq(sk_cpu_has(SK_CPU_AVX2), __builtin_cpu_supports("avx2") != 0);
  ck_assert_int_eq(sk_cpu_has(SK_CPU_AVX2 | SK_CPU_FMA),
                   __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  ck_assert_int_eq(sk_cpu_has(SK_CPU_AVX512F | SK_CPU_AVX512BW | SK_CPU_AVX512DQ | SK_CPU_AVX512CD),
                   __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"));
#else
  ck_assert(!sk_cpu_has(SK_CPU_SSE2));
#endif
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_cpu");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, names_parse_to_their_isa);
  tcase_add_test(tc, features_are_the_builtins);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
