/* sk_ui: the embedded preview page and contract. Unit tests of the lookup
 * and the ETag comparison, then the real skinnerd serving /ui and
 * /openapi.yaml over HTTP. */
#include "sk_httpc.h"
#include "sk_testutil.h"
#include "sk_ui.h"

/* ---- lookup ------------------------------------------------------------------- */

START_TEST(the_empty_name_is_the_index_page) {
  const sk_ui_file *f = sk_ui_find("", 0);
  ck_assert_ptr_nonnull(f);
  ck_assert_str_eq(f->name, "index.html");
  ck_assert_str_eq(f->content_type, "text/html; charset=utf-8");
  ck_assert_ptr_nonnull(strstr((const char *)f->data, "<canvas"));
  ck_assert_uint_eq(strlen((const char *)f->data), f->len);
}
END_TEST

START_TEST(every_file_has_a_type_and_a_strong_etag) {
  ck_assert_uint_ge(sk_ui_file_count, 5);
  for (size_t i = 0; i < sk_ui_file_count; i++) {
    const sk_ui_file *f = &sk_ui_files[i];
    ck_assert_ptr_eq(sk_ui_find(f->name, strlen(f->name)), f);
    ck_assert_msg(f->len > 0, "%s is empty", f->name);
    ck_assert_uint_eq(strlen(f->etag), 18);
    ck_assert_int_eq(f->etag[0], '"');
    ck_assert_int_eq(f->etag[17], '"');
  }
  ck_assert_str_eq(sk_ui_find("app.js", 6)->content_type, "text/javascript; charset=utf-8");
  ck_assert_str_eq(sk_ui_find("style.css", 9)->content_type, "text/css; charset=utf-8");
}
END_TEST

START_TEST(unknown_and_traversing_names_are_not_found) {
  ck_assert_ptr_null(sk_ui_find("nope.js", 7));
  ck_assert_ptr_null(sk_ui_find("../skinnerd", 11));
  ck_assert_ptr_null(sk_ui_find("app.js/", 7));
  ck_assert_ptr_null(sk_ui_find("app.j", 5)); /* a prefix is not a match */
}
END_TEST

START_TEST(if_none_match_compares_weakly_and_accepts_lists_and_star) {
  const char *e = "\"0123456789abcdef\"";
  ck_assert(!sk_ui_etag_matches(NULL, e));
  ck_assert(!sk_ui_etag_matches("", e));
  ck_assert(sk_ui_etag_matches("\"0123456789abcdef\"", e));
  ck_assert(sk_ui_etag_matches("W/\"0123456789abcdef\"", e));
  ck_assert(sk_ui_etag_matches("\"x\", \"0123456789abcdef\" ", e));
  ck_assert(sk_ui_etag_matches("*", e));
  ck_assert(!sk_ui_etag_matches("\"0123456789abcde\"", e));
  ck_assert(!sk_ui_etag_matches("0123456789abcdef", e));
}
END_TEST

/* ---- over HTTP ------------------------------------------------------------------ */

static sk_daemon D;

static void get(const char *method, const char *path, const char *hdrs, sk_httpc_resp *r) {
  int rc = sk_httpc_request(D.host, D.port, method, path, hdrs, NULL, 0, r);
  ck_assert_msg(rc == 0, "%s %s: no answer (%s)", method, path, r->error);
}

START_TEST(skinnerd_serves_the_page_with_etags_and_redirects_bare_ui) {
  ck_assert_msg(sk_daemon_start(&D, NULL) == 0, "skinnerd did not start");
  sk_httpc_resp r;
  char h[256], etag[64];

  get("GET", "/ui", NULL, &r);
  ck_assert_int_eq(r.status, 301);
  ck_assert_str_eq(sk_httpc_header(&r, "Location", h, sizeof h), "/ui/");
  sk_httpc_free(&r);
  get("GET", "/ui?id=fox", NULL, &r);
  ck_assert_int_eq(r.status, 301);
  ck_assert_str_eq(sk_httpc_header(&r, "Location", h, sizeof h), "/ui/?id=fox");
  sk_httpc_free(&r);
  get("GET", "/ui?id=%22%3E", NULL, &r); /* not an id: not carried over */
  ck_assert_str_eq(sk_httpc_header(&r, "Location", h, sizeof h), "/ui/");
  sk_httpc_free(&r);

  get("GET", "/ui/", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "text/html; charset=utf-8");
  ck_assert_str_eq(sk_httpc_header(&r, "Cache-Control", h, sizeof h), "no-cache");
  ck_assert_ptr_nonnull(sk_httpc_header(&r, "ETag", etag, sizeof etag));
  ck_assert_str_eq(etag, sk_ui_find("", 0)->etag);
  ck_assert_uint_eq(r.len, sk_ui_find("", 0)->len);
  ck_assert_mem_eq(r.body, sk_ui_find("", 0)->data, r.len);
  sk_httpc_free(&r);

  char inm[128];
  snprintf(inm, sizeof inm, "If-None-Match: %s\r\n", etag);
  get("GET", "/ui/index.html", inm, &r);
  ck_assert_int_eq(r.status, 304);
  ck_assert_uint_eq(r.len, 0);
  sk_httpc_free(&r);
  get("GET", "/ui/app.js", inm, &r); /* another file's tag: the file comes */
  ck_assert_int_eq(r.status, 200);
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "text/javascript; charset=utf-8");
  sk_httpc_free(&r);

  get("HEAD", "/ui/style.css", NULL, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_uint_eq(r.len, 0);
  sk_httpc_free(&r);

  int st = sk_daemon_stop(&D, SIGTERM);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

START_TEST(unknown_files_and_other_methods_get_problem_json) {
  ck_assert_msg(sk_daemon_start(&D, NULL) == 0, "skinnerd did not start");
  sk_httpc_resp r;
  char h[256];
  get("GET", "/ui/../skinnerd", NULL, &r);
  ck_assert_int_ne(r.status, 200);
  sk_httpc_free(&r);
  get("GET", "/ui/nope.js", NULL, &r);
  ck_assert_int_eq(r.status, 404);
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "application/problem+json");
  ck_assert_ptr_nonnull(strstr(r.body, "\"detail\":\"the preview page has no file \\\"nope.js\\\"\""));
  sk_httpc_free(&r);
  int rc = sk_httpc_request(D.host, D.port, "POST", "/ui/", "Content-Type: text/plain\r\n", "x", 1, &r);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(r.status, 405);
  ck_assert_str_eq(sk_httpc_header(&r, "Allow", h, sizeof h), "GET, HEAD");
  sk_httpc_free(&r);
  get("GET", "/uix", NULL, &r); /* not the page's prefix: the API's 404 */
  ck_assert_int_eq(r.status, 404);
  ck_assert_ptr_nonnull(strstr(r.body, "no route for /uix"));
  sk_httpc_free(&r);
  get("GET", "/healthz", NULL, &r); /* the API is untouched */
  ck_assert_int_eq(r.status, 200);
  sk_httpc_free(&r);
  int st = sk_daemon_stop(&D, SIGTERM);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

/* The contract is the bytes of proto/ (read through tests/.., as
 * SK_TEST_DATA names tests/), so a tool given http://host/openapi.yaml
 * reads what the repository holds and resolves its schemas/ references. */
START_TEST(skinnerd_serves_the_contract_as_the_files_of_proto) {
  ck_assert_msg(sk_daemon_start(&D, NULL) == 0, "skinnerd did not start");
  static const char *const files[][3] = {
      {"/openapi.yaml", "../proto/openapi.yaml", "application/yaml"},
      {"/schemas/pose.json", "../proto/schemas/pose.json", "application/json"},
      {"/schemas/common.json", "../proto/schemas/common.json", "application/json"},
  };
  sk_httpc_resp r;
  char h[256];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    size_t len;
    unsigned char *want = sk_test_read_file(files[i][1], &len);
    ck_assert_ptr_nonnull(want);
    get("GET", files[i][0], NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), files[i][2]);
    ck_assert_uint_eq(r.len, len);
    ck_assert_mem_eq(r.body, want, len);
    char etag[64], inm[128];
    ck_assert_ptr_nonnull(sk_httpc_header(&r, "ETag", etag, sizeof etag));
    sk_httpc_free(&r);
    snprintf(inm, sizeof inm, "If-None-Match: %s\r\n", etag);
    get("GET", files[i][0], inm, &r);
    ck_assert_int_eq(r.status, 304);
    sk_httpc_free(&r);
    free(want);
  }
  ck_assert_uint_eq(sk_ui_spec_file_count, 19); /* openapi.yaml and the 18 schemas */
  get("GET", "/schemas/nope.json", NULL, &r);
  ck_assert_int_eq(r.status, 404);
  ck_assert_str_eq(sk_httpc_header(&r, "Content-Type", h, sizeof h), "application/problem+json");
  sk_httpc_free(&r);
  get("GET", "/ui/openapi.yaml", NULL, &r); /* the page's files and the contract stay apart */
  ck_assert_int_eq(r.status, 404);
  sk_httpc_free(&r);
  int rc = sk_httpc_request(D.host, D.port, "POST", "/openapi.yaml", "Content-Type: text/plain\r\n", "x", 1, &r);
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(r.status, 405);
  ck_assert_str_eq(sk_httpc_header(&r, "Allow", h, sizeof h), "GET, HEAD");
  sk_httpc_free(&r);
  int st = sk_daemon_stop(&D, SIGTERM);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

static Suite *ui_suite(void) {
  Suite *s = suite_create("sk_ui");
  TCase *tc = tcase_create("lookup");
  tcase_add_test(tc, the_empty_name_is_the_index_page);
  tcase_add_test(tc, every_file_has_a_type_and_a_strong_etag);
  tcase_add_test(tc, unknown_and_traversing_names_are_not_found);
  tcase_add_test(tc, if_none_match_compares_weakly_and_accepts_lists_and_star);
  suite_add_tcase(s, tc);
  tc = tcase_create("http");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, skinnerd_serves_the_page_with_etags_and_redirects_bare_ui);
  tcase_add_test(tc, unknown_files_and_other_methods_get_problem_json);
  tcase_add_test(tc, skinnerd_serves_the_contract_as_the_files_of_proto);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sk_test_run(ui_suite()); }
