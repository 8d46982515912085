/* sk_problem: the problem+json document, the kind column of SK_ERRNO_MAP
 * and the status rule. Sending is exercised end to end (check_skinnerd,
 * check_hostile). */
#include "sk_problem.h"
#include "sk_testutil.h"

START_TEST(every_code_has_its_kind) {
  ck_assert_str_eq(sk_error_kind(SK_EINVAL), "invalid-request");
  ck_assert_str_eq(sk_error_kind(SK_ENOMEM), "out-of-memory");
  ck_assert_str_eq(sk_error_kind(SK_ESYNTAX), "malformed-json");
  ck_assert_str_eq(sk_error_kind(SK_ETYPE), "wrong-type");
  ck_assert_str_eq(sk_error_kind(SK_EMISSING), "missing-field");
  ck_assert_str_eq(sk_error_kind(SK_ERANGE), "out-of-range");
  ck_assert_str_eq(sk_error_kind(SK_ENOTFINITE), "non-finite-number");
  ck_assert_str_eq(sk_error_kind(SK_EDUPLICATE), "duplicate");
  ck_assert_str_eq(sk_error_kind(SK_ECYCLE), "cycle");
  ck_assert_str_eq(sk_error_kind(SK_EUNKNOWN), "unknown-reference");
  ck_assert_str_eq(sk_error_kind(SK_ESINGULAR), "non-invertible-matrix");
  ck_assert_str_eq(sk_error_kind(SK_ELENGTH), "wrong-array-length");
  ck_assert_str_eq(sk_error_kind(SK_ENOTFOUND), "not-found");
  ck_assert_str_eq(sk_error_kind(SK_ETOOBIG), "too-large");
  ck_assert_str_eq(sk_error_kind(SK_EIO), "internal");
  ck_assert_str_eq(sk_error_kind(SK_EUNSUPPORTED), "unsupported-media-type");
  ck_assert_str_eq(sk_error_kind(SK_EBUSY), "overloaded");
  ck_assert_str_eq(sk_error_kind(SK_EFORMAT), "invalid-format");
  ck_assert_str_eq(sk_error_kind(SK_ENOSPACE), "insufficient-storage");
  ck_assert_str_eq(sk_error_kind(SK_ELOCKED), "internal");
  ck_assert_str_eq(sk_error_kind(0), "internal");
  ck_assert_str_eq(sk_error_kind(-999), "internal");
}
END_TEST

START_TEST(server_faults_are_500_but_memory_busy_and_storage_keep_theirs) {
  ck_assert_int_eq(sk_problem_status(SK_EMISSING), 422);
  ck_assert_int_eq(sk_problem_status(SK_ENOTFOUND), 404);
  ck_assert_int_eq(sk_problem_status(SK_ENOMEM), 503);
  ck_assert_int_eq(sk_problem_status(SK_EBUSY), 503);
  ck_assert_int_eq(sk_problem_status(SK_ENOSPACE), 507);
  ck_assert_int_eq(sk_problem_status(SK_EIO), 500);
  ck_assert_int_eq(sk_problem_status(-999), 500);
}
END_TEST

START_TEST(the_document_names_kind_field_and_position) {
  sk_strbuf b = {0};
  ck_assert_int_eq(sk_problem_write(&b, 422, "missing-field", "Missing field", "needs \"bones\"", "/bones", 0, 0), 0);
  ck_assert_str_eq(b.data, "{\"type\":\"https://skinnerd.dev/problems/missing-field\",\"title\":\"Missing field\","
                           "\"status\":422,\"detail\":\"needs \\\"bones\\\"\",\"pointer\":\"/bones\"}");
  b.len = 0;
  ck_assert_int_eq(sk_problem_write(&b, 400, "malformed-json", "Malformed JSON", NULL, NULL, 3, 7), 0);
  ck_assert_str_eq(b.data, "{\"type\":\"https://skinnerd.dev/problems/malformed-json\",\"title\":\"Malformed JSON\","
                           "\"status\":400,\"detail\":\"Malformed JSON\",\"pointer\":\"\",\"line\":3,\"column\":7}");
  sk_strbuf_free(&b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sk_problem");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, every_code_has_its_kind);
  tcase_add_test(t, server_faults_are_500_but_memory_busy_and_storage_keep_theirs);
  tcase_add_test(t, the_document_names_kind_field_and_position);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(suite()); }
