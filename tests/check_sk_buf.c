/* sk_buf: the growable buffer (its failure with float arrays appended is
 * in check_sk_numfmt). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "sk_buf.h"
#include "sk_testutil.h"

START_TEST(test_strbuf_append_grows_and_terminates) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_strbuf_append(&b, "abc", 3), 0);
  ck_assert_uint_eq(b.len, 3);
  ck_assert_str_eq(b.data, "abc");
  ck_assert_int_eq(sk_strbuf_append(&b, "", 0), 0);
  ck_assert_str_eq(b.data, "abc");
  /* Many small appends across several reallocations keep every byte. */
  for (int i = 0; i < 10000; i++) {
    char piece[16];
    const int n = snprintf(piece, sizeof piece, ",%d", i);
    ck_assert_int_eq(sk_strbuf_append(&b, piece, (size_t)n), 0);
  }
  ck_assert_uint_lt(b.len, b.cap);
  ck_assert_uint_eq(strlen(b.data), b.len);
  ck_assert(strncmp(b.data, "abc,0,1,2,", 10) == 0);
  ck_assert(strcmp(b.data + b.len - 5, ",9999") == 0);
  sk_strbuf_free(&b);
  ck_assert_ptr_null(b.data);
  ck_assert_uint_eq(b.len, 0);
  ck_assert_uint_eq(b.cap, 0);
  sk_strbuf_free(&b); /* idempotent */
}
END_TEST

START_TEST(test_strbuf_reserve_keeps_len) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_strbuf_reserve(&b, 1000), 0);
  ck_assert_uint_eq(b.len, 0);
  ck_assert_uint_ge(b.cap, 1001);
  ck_assert_str_eq(b.data, "");
  sk_strbuf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_buf");
  TCase *tc = tcase_create("lifecycle");
  tcase_add_test(tc, test_strbuf_append_grows_and_terminates);
  tcase_add_test(tc, test_strbuf_reserve_keeps_len);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
