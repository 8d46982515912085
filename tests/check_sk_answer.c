/* sk_answer: the one table of output kinds and the answer formats. */
#include <check.h>
#include <string.h>

#include "sk_answer.h"
#include "sk_testutil.h"

START_TEST(table_rows_give_bits_names_and_families) {
  ck_assert_uint_eq(SK_OUT_KINDS, 11);
  ck_assert_uint_eq(SK_OUT_FINAL, 1u);
  ck_assert_uint_eq(SK_OUT_ABSOLUTE, 2u);
  ck_assert_uint_eq(SK_OUT_LOCAL, 4u);
  ck_assert_uint_eq(SK_OUT_WORLD, 8u);
  ck_assert_uint_eq(SK_OUT_POSITIONS, 16u);
  ck_assert_uint_eq(sk_answer_family_mask(SK_OUTPUT_CORE), SK_OUT_FINAL | SK_OUT_ABSOLUTE | SK_OUT_LOCAL);
  ck_assert_uint_eq(sk_answer_family_mask(SK_OUTPUT_BONES), SK_OUT_WORLD | SK_OUT_POSITIONS);
  ck_assert_uint_eq(SK_OUT_VERTICES, 32u);
  ck_assert_uint_eq(SK_OUT_NORMALS, 64u);
  ck_assert_uint_eq(SK_OUT_BOUNDS, 128u);
  ck_assert_uint_eq(SK_OUT_MORPH_WEIGHTS, 256u);
  ck_assert_uint_eq(SK_OUT_BOUNDS_CONSERVATIVE, 512u);
  ck_assert_uint_eq(SK_OUT_HITS, 1024u);
  ck_assert_uint_eq(sk_answer_family_mask(SK_OUTPUT_MESH), SK_OUT_VERTICES | SK_OUT_NORMALS | SK_OUT_BOUNDS |
                                                               SK_OUT_MORPH_WEIGHTS | SK_OUT_BOUNDS_CONSERVATIVE |
                                                               SK_OUT_HITS);
  for (size_t k = 0; k < SK_OUT_KINDS; k++) {
    const char *n = sk_answer_outputs[k].name;
    ck_assert_uint_eq(sk_answer_output_bit(n, strlen(n)), sk_answer_outputs[k].bit);
  }
}
END_TEST

START_TEST(lookup_takes_the_whole_name_only) {
  ck_assert_uint_eq(sk_answer_output_bit("final", 5), SK_OUT_FINAL);
  ck_assert_uint_eq(sk_answer_output_bit("finalx", 5), SK_OUT_FINAL); /* len bounds the name */
  ck_assert_uint_eq(sk_answer_output_bit("final", 4), 0);
  ck_assert_uint_eq(sk_answer_output_bit("Final", 5), 0);
  ck_assert_uint_eq(sk_answer_output_bit("", 0), 0);
  ck_assert_uint_eq(sk_answer_output_bit("positionsx", 10), 0);
}
END_TEST

START_TEST(core_matrices_count_the_identity_slot_once) {
  ck_assert_uint_eq(sk_answer_core_matrices(SK_OUT_FINAL, 65), 66);
  ck_assert_uint_eq(sk_answer_core_matrices(SK_OUT_ABSOLUTE | SK_OUT_LOCAL, 65), 130);
  ck_assert_uint_eq(sk_answer_core_matrices(SK_OUT_FINAL | SK_OUT_ABSOLUTE | SK_OUT_LOCAL, 3), 10);
  ck_assert_uint_eq(sk_answer_core_matrices(SK_OUT_WORLD | SK_OUT_POSITIONS, 65), 0);
  ck_assert_uint_eq(sk_answer_core_matrices(SK_OUT_VERTICES | SK_OUT_BOUNDS, 65), 0);
  ck_assert_uint_eq(sk_answer_core_matrices(0, 65), 0);
}
END_TEST

/* The refusals' text, as it read before the table made it. */
START_TEST(names_join_as_the_refusals_list_them) {
  char b[SK_ANSWER_NAMES_MAX];
  size_t n = sk_answer_output_names(b, sizeof b, " or ");
  ck_assert_str_eq(b, "\"final\", \"absolute\", \"local\", \"world\" or \"positions\"");
  ck_assert_uint_eq(n, strlen(b));
  sk_answer_output_names(b, sizeof b, ", ");
  ck_assert_str_eq(b, "\"final\", \"absolute\", \"local\", \"world\", \"positions\"");
  char tiny[8];
  ck_assert_uint_eq(sk_answer_output_names(tiny, sizeof tiny, ", "), strlen(b));
  ck_assert_uint_lt(strlen(tiny), sizeof tiny);
  ck_assert_uint_eq(sk_answer_output_names(NULL, 0, ", "), strlen(b));
}
END_TEST

START_TEST(formats_are_the_wire_values) {
  ck_assert_int_eq(SK_FMT_JSON, 0);
  ck_assert_int_eq(SK_FMT_F32, 1);
  ck_assert_int_eq(SK_FMT_MAT3X4, 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_answer");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, table_rows_give_bits_names_and_families);
  tcase_add_test(tc, lookup_takes_the_whole_name_only);
  tcase_add_test(tc, core_matrices_count_the_identity_slot_once);
  tcase_add_test(tc, names_join_as_the_refusals_list_them);
  tcase_add_test(tc, formats_are_the_wire_values);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
