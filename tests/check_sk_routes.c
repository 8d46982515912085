/* sk_routes' pure pieces: content negotiation, content types, the mat3x4
 * layout and content-derived ids. The routes themselves are driven over
 * HTTP in check_skinnerd and check_skinnerd_poses. */
#include "sk_routes.h"

#include <stdio.h>
#include "sk_testutil.h"

static const char *const offers[] = {"application/json", "application/octet-stream", "application/x-skinner-mat3x4"};

START_TEST(accept_headers_pick_by_q_then_server_order) {
  ck_assert_int_eq(sk_routes_negotiate(NULL, offers, 3), 0);
  ck_assert_int_eq(sk_routes_negotiate("", offers, 3), 0);
  ck_assert_int_eq(sk_routes_negotiate("*/*", offers, 3), 0);
  ck_assert_int_eq(sk_routes_negotiate("application/octet-stream", offers, 3), 1);
  ck_assert_int_eq(sk_routes_negotiate("Application/X-Skinner-Mat3x4", offers, 3), 2);
  ck_assert_int_eq(sk_routes_negotiate("application/json;q=0.5, application/octet-stream", offers, 3), 1);
  ck_assert_int_eq(sk_routes_negotiate("application/*;q=0.2, application/x-skinner-mat3x4;q=0.9", offers, 3), 2);
  ck_assert_int_eq(sk_routes_negotiate("application/*", offers, 3), 0);
  ck_assert_int_eq(sk_routes_negotiate("text/html", offers, 3), -1);
  ck_assert_int_eq(sk_routes_negotiate("application/json;q=0", offers, 3), -1);
  /* the most specific range decides: json excluded although * / * allows it */
  ck_assert_int_eq(sk_routes_negotiate("*/*;q=0.1, application/json;q=0", offers, 3), 1);
  ck_assert_int_eq(sk_routes_negotiate("text/html, application/octet-stream ; q=0.3", offers, 3), 1);
  ck_assert_int_eq(sk_routes_negotiate("application/json; charset=utf-8", offers, 3), 0);
}
END_TEST

/* A lone media range takes a short path; the same range with an empty
 * parameter list (";") takes the general parse, which must agree. */
START_TEST(a_lone_media_range_picks_as_the_general_parse_does) {
  static const char *const ranges[] = {"", " ", "\t", "*/*", " */* ", "application/*", "application/json",
                                       "APPLICATION/OCTET-STREAM", "application/x-skinner-mat3x4", "text/*",
                                       "text/html", "application/json x", "application/jsonx", "application",
                                       "*", "application/octet-stream\t", "  application/x-skinner-mat3x4"};
  static const char *const one[] = {"application/octet-stream"};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
    char general[64];
    snprintf(general, sizeof general, "%s;", ranges[i]);
    ck_assert_msg(sk_routes_negotiate(ranges[i], offers, 3) == sk_routes_negotiate(general, offers, 3), "\"%s\"",
                  ranges[i]);
    ck_assert_msg(sk_routes_negotiate(ranges[i], one, 1) == sk_routes_negotiate(general, one, 1), "\"%s\" (one offer)",
                  ranges[i]);
  }
}
END_TEST

START_TEST(json_content_types) {
  ck_assert(sk_routes_is_json("application/json"));
  ck_assert(sk_routes_is_json("Application/JSON; charset=utf-8"));
  ck_assert(sk_routes_is_json(" application/json"));
  ck_assert(!sk_routes_is_json(NULL));
  ck_assert(!sk_routes_is_json("text/plain"));
  ck_assert(!sk_routes_is_json("application/jsonx"));
  ck_assert(!sk_routes_is_json("application/problem+json"));
}
END_TEST

START_TEST(mat3x4_is_the_first_three_columns_as_rows) {
  float m[16], d[12];
  for (int i = 0; i < 16; i++)
    m[i] = (float)i;
  sk_routes_mat3x4(m, d);
  const float want[12] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14};
  for (int i = 0; i < 12; i++)
    ck_assert(d[i] == want[i]);
  /* a shader's vec4(p, 1) * M34 equals the row-vector product p1 · m */
  const float p[4] = {0.5f, -2, 3, 1};
  for (int c = 0; c < 3; c++) {
    float shader = 0, ref = 0;
    for (int r = 0; r < 4; r++) {
      shader += p[r] * d[4 * c + r];
      ref += p[r] * m[4 * r + c];
    }
    ck_assert(shader == ref);
  }
}
END_TEST

START_TEST(content_ids_ignore_key_order_and_spacing) {
  json_t *a = json_loads("{\"bones\": [{\"name\": \"a\", \"position\": [1, 2, 3]}]}", 0, NULL);
  json_t *b = json_loads("{\"bones\":[{\"position\":[1,2,3],\"name\":\"a\"}]}", 0, NULL);
  json_t *c = json_loads("{\"bones\":[{\"position\":[1,2,4],\"name\":\"a\"}]}", 0, NULL);
  char ia[17], ib[17], ic[17];
  ck_assert_int_eq(sk_routes_content_id(a, ia), 0);
  ck_assert_int_eq(sk_routes_content_id(b, ib), 0);
  ck_assert_int_eq(sk_routes_content_id(c, ic), 0);
  ck_assert_str_eq(ia, ib);
  ck_assert_str_ne(ia, ic);
  ck_assert_uint_eq(strlen(ia), 16);
  json_decref(a);
  json_decref(b);
  json_decref(c);
}
END_TEST

START_TEST(content_ids_compare_numbers_by_value) {
  json_t *a = json_loads("{\"bones\":[{\"name\":\"a\",\"position\":[1.0,2,3e0],\"m\":{\"k\":[-0.0,1e2]}}]}", 0, NULL);
  json_t *b = json_loads("{\"bones\":[{\"name\":\"a\",\"position\":[1,2.00,3],\"m\":{\"k\":[0,100]}}]}", 0, NULL);
  json_t *c = json_loads("{\"bones\":[{\"name\":\"a\",\"position\":[1.5,2,3],\"m\":{\"k\":[0,100]}}]}", 0, NULL);
  ck_assert_ptr_nonnull(a);
  char ia[17], ib[17], ic[17];
  ck_assert_int_eq(sk_routes_content_id(a, ia), 0);
  ck_assert_int_eq(sk_routes_content_id(b, ib), 0);
  ck_assert_int_eq(sk_routes_content_id(c, ic), 0);
  ck_assert_str_eq(ia, ib);
  ck_assert_str_ne(ia, ic);
  /* the caller's tree is left as it was */
  ck_assert(json_is_real(json_array_get(json_object_get(json_array_get(json_object_get(a, "bones"), 0), "position"), 0)));
  json_decref(a);
  json_decref(b);
  json_decref(c);
}
END_TEST

static Suite *routes_suite(void) {
  Suite *s = suite_create("sk_routes");
  TCase *t = tcase_create("golden");
  tcase_add_test(t, accept_headers_pick_by_q_then_server_order);
  tcase_add_test(t, a_lone_media_range_picks_as_the_general_parse_does);
  tcase_add_test(t, json_content_types);
  tcase_add_test(t, mat3x4_is_the_first_three_columns_as_rows);
  tcase_add_test(t, content_ids_ignore_key_order_and_spacing);
  tcase_add_test(t, content_ids_compare_numbers_by_value);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sk_test_run(routes_suite()); }
