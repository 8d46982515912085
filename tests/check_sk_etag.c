/* sk_etag: the tag's form and RFC 9110's If-Match (strong) and
 * If-None-Match (weak) comparisons, "*", lists and malformed values. */
#include "sk_etag.h"

#include <stdio.h>
#include "sk_testutil.h"

START_TEST(a_tag_is_the_epoch_and_the_version_quoted) {
  char t[SK_ETAG_MAX];
  sk_etag_format(0x1a2b3c4du, 7, t);
  ck_assert_str_eq(t, "\"1a2b3c4d-7\"");
  sk_etag_format(0, UINT64_MAX, t);
  ck_assert_str_eq(t, "\"00000000-18446744073709551615\"");
}
END_TEST

START_TEST(a_tag_is_printfs_bytes) {
  static const uint64_t versions[] = {0, 1, 9, 10, 99, 100, 12345, 4294967295u, 4294967296u, 10000000000000000000u};
  static const uint32_t epochs[] = {0, 1, 0xf, 0x10, 0xdeadbeefu, 0xffffffffu};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
    for (size_t k = 0; k < sizeof epochs / sizeof epochs[0]; k++) {
      char t[SK_ETAG_MAX], want[SK_ETAG_MAX];
      sk_etag_format(epochs[k], versions[i], t);
      snprintf(want, sizeof want, "\"%08x-%llu\"", (unsigned)epochs[k], (unsigned long long)versions[i]);
      ck_assert_str_eq(t, want);
    }
}
END_TEST

START_TEST(if_match_compares_strongly) {
  const char *cur = "\"1a2b3c4d-7\"";
  ck_assert_int_eq(sk_etag_match("\"1a2b3c4d-7\"", cur, false), 1);
  ck_assert_int_eq(sk_etag_match("\"1a2b3c4d-6\"", cur, false), 0);
  ck_assert_int_eq(sk_etag_match("W/\"1a2b3c4d-7\"", cur, false), 0); /* weak never matches strongly */
  ck_assert_int_eq(sk_etag_match("\"x\", \"1a2b3c4d-7\"", cur, false), 1);
  ck_assert_int_eq(sk_etag_match(" ,\"x\" ,, \"y\"", cur, false), 0); /* empty list elements are allowed */
  ck_assert_int_eq(sk_etag_match("\"1a2b3c4d-7\"", NULL, false), 0);  /* no current version */
}
END_TEST

START_TEST(if_none_match_compares_weakly) {
  const char *cur = "\"1a2b3c4d-7\"";
  ck_assert_int_eq(sk_etag_match("W/\"1a2b3c4d-7\"", cur, true), 1);
  ck_assert_int_eq(sk_etag_match("\"1a2b3c4d-7\"", cur, true), 1);
  ck_assert_int_eq(sk_etag_match("W/\"1a2b3c4d-8\", \"z\"", cur, true), 0);
}
END_TEST

START_TEST(star_matches_any_current_version) {
  ck_assert_int_eq(sk_etag_match("*", "\"a-1\"", false), 1);
  ck_assert_int_eq(sk_etag_match(" * ", "\"a-1\"", true), 1);
  ck_assert_int_eq(sk_etag_match("*", NULL, false), 0);
  ck_assert_int_eq(sk_etag_match("*", NULL, true), 0);
}
END_TEST

START_TEST(malformed_values_are_minus_one) {
  const char *cur = "\"a-1\"";
  ck_assert_int_eq(sk_etag_match("a-1", cur, false), -1);        /* unquoted */
  ck_assert_int_eq(sk_etag_match("\"a-1", cur, false), -1);      /* unterminated */
  ck_assert_int_eq(sk_etag_match("\"a-1\" x", cur, false), -1);  /* trailing junk */
  ck_assert_int_eq(sk_etag_match("*, \"a-1\"", cur, false), -1); /* "*" stands alone */
  ck_assert_int_eq(sk_etag_match("", cur, false), -1);
  ck_assert_int_eq(sk_etag_match(" , ", cur, true), -1);
  ck_assert_int_eq(sk_etag_match("\"a b\"", cur, true), -1);     /* no spaces inside */
  ck_assert_int_eq(sk_etag_match("w/\"a-1\"", cur, true), -1);   /* W/ is case-sensitive */
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_etag");
  TCase *t = tcase_create("validity");
  tcase_add_test(t, a_tag_is_the_epoch_and_the_version_quoted);
  tcase_add_test(t, a_tag_is_printfs_bytes);
  tcase_add_test(t, if_match_compares_strongly);
  tcase_add_test(t, if_none_match_compares_weakly);
  tcase_add_test(t, star_matches_any_current_version);
  tcase_add_test(t, malformed_values_are_minus_one);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
