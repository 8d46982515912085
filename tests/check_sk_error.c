#include "sk_error.h"
#include "sk_testutil.h"

START_TEST(first_error_wins) {
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_error_set(&e, SK_ECYCLE, "/bones/3/parent", "bone %s", "a"), SK_ECYCLE);
  ck_assert_int_eq(sk_error_set(&e, SK_ETYPE, "/x", "later"), SK_ETYPE);
  ck_assert_int_eq(e.code, SK_ECYCLE);
  ck_assert_str_eq(e.pointer, "/bones/3/parent");
  ck_assert_str_eq(e.text, "bone a");
  ck_assert_int_eq(sk_error_set(NULL, SK_EINVAL, NULL, "x"), SK_EINVAL);
}
END_TEST

START_TEST(codes_map_to_names_and_status) {
  ck_assert_str_eq(sk_errname(SK_ECYCLE), "ECYCLE");
  ck_assert_str_eq(sk_strerror(SK_ESINGULAR), "Non-invertible matrix");
  ck_assert_int_eq(sk_error_http_status(SK_ESYNTAX), 400);
  ck_assert_int_eq(sk_error_http_status(SK_ENOTFOUND), 404);
  ck_assert_int_eq(sk_error_http_status(SK_ETOOBIG), 413);
  ck_assert_int_eq(sk_error_http_status(SK_ECYCLE), 422);
  ck_assert_str_eq(sk_strerror(12345), "Unknown error");
}
END_TEST

START_TEST(pointer_escapes_rfc6901) {
  char buf[64] = "/bones";
  size_t at = sk_pointer_push(buf, sizeof buf, "a/b~c");
  ck_assert_str_eq(buf, "/bones/a~1b~0c");
  buf[at] = '\0';
  sk_pointer_push_index(buf, sizeof buf, 42);
  ck_assert_str_eq(buf, "/bones/42");
  char tiny[8] = "";
  sk_pointer_push(tiny, sizeof tiny, "abcdefghijkl");
  ck_assert_uint_lt(strlen(tiny), sizeof tiny);
  sk_pointer_child(buf, sizeof buf, "/poses/3", "a~b");
  ck_assert_str_eq(buf, "/poses/3/a~0b");
  sk_pointer_child(buf, sizeof buf, NULL, "x");
  ck_assert_str_eq(buf, "/x");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_error");
  TCase *tc = tcase_create("errors");
  tcase_add_test(tc, first_error_wins);
  tcase_add_test(tc, codes_map_to_names_and_status);
  tcase_add_test(tc, pointer_escapes_rfc6901);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
