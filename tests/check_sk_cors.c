/* sk_cors: parsing --cors-origin (each invalid origin gets its exact
 * error), matching Origin headers, "*" only with tokens, and the
 * preflight's header list. The answers themselves: tests/check_cors.c. */
#include "sk_cors.h"
#include "sk_testutil.h"

static const char *create_error(const char *list, bool tokens) {
  static sk_error err;
  sk_error_clear(&err);
  sk_cors *c = NULL;
  ck_assert_int_eq(sk_cors_create(list, tokens, &c, &err), SK_EINVAL);
  ck_assert_ptr_null(c);
  return err.text;
}

START_TEST(no_list_is_no_cors) {
  sk_cors *c = (sk_cors *)1;
  ck_assert_int_eq(sk_cors_create("", false, &c, NULL), 0);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(sk_cors_create(" , ", false, &c, NULL), 0);
  ck_assert_ptr_null(c);
  ck_assert_ptr_null(sk_cors_allow(NULL, "http://a"));
  sk_cors_destroy(NULL);
}
END_TEST

START_TEST(origins_match_as_browsers_send_them) {
  sk_cors *c = NULL;
  ck_assert_int_eq(sk_cors_create("http://Tool.Example:5173, https://b.example:443,http://c.example:80,"
                                  "http://[::1]:8000",
                                  false, &c, NULL),
                   0);
  ck_assert_str_eq(sk_cors_allow(c, "http://tool.example:5173"), "http://tool.example:5173");
  ck_assert_str_eq(sk_cors_allow(c, "https://b.example"), "https://b.example"); /* default port dropped */
  ck_assert_str_eq(sk_cors_allow(c, "http://c.example"), "http://c.example");
  ck_assert_str_eq(sk_cors_allow(c, "http://[::1]:8000"), "http://[::1]:8000");
  ck_assert_ptr_null(sk_cors_allow(c, "http://tool.example"));        /* another port */
  ck_assert_ptr_null(sk_cors_allow(c, "https://tool.example:5173"));  /* another scheme */
  ck_assert_ptr_null(sk_cors_allow(c, "http://tool.example:5173.evil")); /* no prefix match */
  ck_assert_ptr_null(sk_cors_allow(c, "null"));
  ck_assert_ptr_null(sk_cors_allow(c, NULL));
  ck_assert_ptr_null(sk_cors_allow(c, ""));
  sk_cors_destroy(c);
}
END_TEST

START_TEST(star_needs_tokens) {
  ck_assert_str_eq(create_error("*", false), "--cors-origin \"*\" needs --tokens: without tokens any web page could "
                                             "read and change the skeletons; list the origins instead");
  sk_cors *c = NULL;
  ck_assert_int_eq(sk_cors_create("http://a.example, *", true, &c, NULL), 0);
  ck_assert_str_eq(sk_cors_allow(c, "http://a.example"), "http://a.example");
  ck_assert_str_eq(sk_cors_allow(c, "https://anything.example"), "*");
  ck_assert_str_eq(sk_cors_allow(c, "null"), "*");
  sk_cors_destroy(c);
}
END_TEST

START_TEST(bad_origins_say_why) {
  ck_assert_str_eq(create_error("tool.example", false),
                   "--cors-origin \"tool.example\": expected scheme://host[:port], e.g. http://localhost:5173");
  ck_assert_str_eq(create_error("http://", false), "--cors-origin \"http://\": the host is missing");
  ck_assert_str_eq(create_error("http://a.example/", false),
                   "--cors-origin \"http://a.example/\": an origin has no path, query or user: scheme://host[:port] "
                   "only (browsers send no trailing /)");
  ck_assert_str_eq(create_error("http://a.example:99999", false), "--cors-origin \"http://a.example:99999\": bad port");
  ck_assert_str_eq(create_error("http://a.example:", false), "--cors-origin \"http://a.example:\": bad port");
  ck_assert_str_eq(create_error("1http://a", false),
                   "--cors-origin \"1http://a\": expected scheme://host[:port], e.g. http://localhost:5173");
  char many[SK_CORS_MAX_ORIGINS * 24] = "";
  for (int i = 0; i <= SK_CORS_MAX_ORIGINS; i++)
    snprintf(many + strlen(many), sizeof many - strlen(many), "http://h%d,", i);
  ck_assert_str_eq(create_error(many, false), "--cors-origin: at most 32 origins");
}
END_TEST

START_TEST(preflight_headers_are_checked_by_name) {
  char bad[16];
  ck_assert(sk_cors_headers_ok(NULL, bad, sizeof bad));
  ck_assert(sk_cors_headers_ok("", bad, sizeof bad));
  ck_assert(sk_cors_headers_ok("content-type,authorization, if-match,IF-NONE-MATCH , accept", bad, sizeof bad));
  ck_assert(!sk_cors_headers_ok("content-type, x-custom-header-that-is-long", bad, sizeof bad));
  ck_assert_str_eq(bad, "x-custom-header"); /* cut to the buffer */
  ck_assert(!sk_cors_headers_ok("if-matchx", bad, sizeof bad));
  ck_assert_str_eq(bad, "if-matchx");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_cors");
  TCase *t = tcase_create("validity");
  tcase_add_test(t, no_list_is_no_cors);
  tcase_add_test(t, origins_match_as_browsers_send_them);
  tcase_add_test(t, star_needs_tokens);
  tcase_add_test(t, bad_origins_say_why);
  tcase_add_test(t, preflight_headers_are_checked_by_name);
  suite_add_tcase(s, t);
  return sk_test_run(s);
}
