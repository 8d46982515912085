#include "sk_eval.h"
#include "sk_frames.h"
#include "sk_json.h"
#include "sk_testutil.h"

/* Runs a case; returns the code; the result JSON or the error in out/e. */
static int run(const char *text, json_t **result, sk_error *e) {
  json_t *c;
  sk_error_clear(e);
  *result = NULL;
  int rc = sk_json_load(text, strlen(text), &c, e);
  if (rc)
    return rc;
  sk_strbuf b = {0};
  rc = sk_eval_case(c, &b, e);
  json_decref(c);
  if (rc == 0) {
    *result = json_loadb(b.data, b.len, 0, NULL);
    ck_assert_ptr_nonnull(*result);
  }
  sk_strbuf_free(&b);
  return rc;
}

static double at(const json_t *r, size_t result, const char *key, size_t i) {
  return json_number_value(json_array_get(json_object_get(json_array_get(json_object_get(r, "results"), result), key), i));
}

#define SKEL2 \
  "{\"skeleton\": {\"bones\": [{\"name\": \"tip\", \"parent\": \"root\", \"position\": [0,1,0]}, {\"name\": \"root\"}]},"

START_TEST(pose_does_not_keep_set_does) {
  json_t *r;
  sk_error e;
  ck_assert_int_eq(run(SKEL2 "\"ops\": ["
                             "{\"op\": \"pose\", \"bones\": {\"root\": {\"position\": [5,0,0]}}, \"output\": [\"final\", \"absolute\", \"local\"]},"
                             "{\"op\": \"evaluate\"},"
                             "{\"op\": \"set\", \"bones\": {\"root\": {\"position\": [5,0,0]}}},"
                             "{\"op\": \"evaluate\", \"output\": [\"absolute\"]}]}",
                       &r, &e),
                   0);
  /* order is parent-first; slots are input positions (tip 0, root 1). */
  ck_assert_str_eq(json_string_value(json_array_get(json_object_get(r, "order"), 0)), "root");
  ck_assert_uint_eq(json_array_size(json_object_get(r, "results")), 3);
  ck_assert_double_eq(at(r, 0, "final", 16 + 12), 5);  /* root slot 1 moved */
  ck_assert_double_eq(at(r, 0, "final", 12), 5);       /* tip follows */
  ck_assert_double_eq(at(r, 0, "absolute", 13), 1);    /* tip absolute y */
  ck_assert_double_eq(at(r, 0, "local", 16 + 12), 5);
  ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(json_object_get(r, "results"), 0), "final")), 48);
  ck_assert_double_eq(at(r, 1, "final", 16 + 12), 0);  /* pose was not kept */
  ck_assert_double_eq(at(r, 2, "absolute", 12), 5);    /* set was kept */
  ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(r, "results"), 2), "final"));
  json_decref(r);
}
END_TEST

START_TEST(set_bind_rest_and_return_to_rest) {
  json_t *r;
  sk_error e;
  ck_assert_int_eq(
      run(SKEL2 "\"ops\": ["
                "{\"op\": \"setRest\", \"bone\": \"tip\", \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,3,0,1]},"
                "{\"op\": \"returnToRest\", \"bone\": \"tip\"},"
                "{\"op\": \"evaluate\"},"
                "{\"op\": \"setBind\", \"bone\": \"tip\", \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1], \"keepLocal\": true},"
                "{\"op\": \"evaluate\"},"
                "{\"op\": \"setBind\", \"bone\": \"tip\", \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1]},"
                "{\"op\": \"evaluate\"},"
                "{\"op\": \"returnToRest\"}, {\"op\": \"evaluate\"}]}",
          &r, &e),
      0);
  ck_assert_double_eq(at(r, 0, "final", 13), 2); /* rest y 3, bind y 1 */
  ck_assert_double_eq(at(r, 1, "final", 13), 1); /* local 3, bind 2 */
  ck_assert_double_eq(at(r, 2, "final", 13), 0); /* setBind replaced local */
  ck_assert_double_eq(at(r, 3, "final", 13), 1); /* back to rest y 3 */
  json_decref(r);
}
END_TEST

START_TEST(errors_point_into_the_case) {
  json_t *r;
  sk_error e;
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"evaluate\"}, {\"op\": \"jump\"}]}", &r, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/1/op");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"setBind\", \"bone\": \"nope\", \"matrix\": []}]}", &r, &e),
                   SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/ops/0/bone");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"setBind\", \"bone\": \"tip\", \"matrix\": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}", &r, &e),
                   SK_ESINGULAR);
  ck_assert_str_eq(e.pointer, "/ops/0/matrix");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"evaluate\", \"bones\": {}}]}", &r, &e), SK_EUNKNOWN);
  ck_assert_str_eq(e.pointer, "/ops/0/bones");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"pose\", \"initialSkinMatrix\": [1]}]}", &r, &e), SK_ELENGTH);
  ck_assert_str_eq(e.pointer, "/ops/0/initialSkinMatrix");
  ck_assert_int_eq(run("{\"ops\": []}", &r, &e), SK_EMISSING);
  ck_assert_str_eq(e.pointer, "/skeleton");
  /* finite inputs whose products overflow float32: refused, with Bone-API
   * ops too (they were printed as null), and said so */
  const char *over = "{\"root\": {\"scaling\": [3e38,3e38,3e38]}, \"tip\": {\"scaling\": [3e38,3e38,3e38]}}";
  char text[1024];
  snprintf(text, sizeof text, SKEL2 "\"ops\": [{\"op\": \"pose\", \"bones\": %s}]}", over);
  ck_assert_int_eq(run(text, &r, &e), SK_ENOTFINITE);
  ck_assert_str_eq(e.pointer, "/ops/0");
  ck_assert_ptr_nonnull(strstr(e.text, "not finite"));
  snprintf(text, sizeof text,
           SKEL2 "\"ops\": [{\"op\": \"pose\", \"bones\": %s, \"ops\": [{\"op\": \"rotate\", \"bone\": \"tip\", "
                 "\"axis\": [0,1,0], \"amount\": 0.5}]}]}",
           over);
  ck_assert_int_eq(run(text, &r, &e), SK_ENOTFINITE);
  ck_assert_str_eq(e.pointer, "/ops/0");
}
END_TEST

/* "output": [] asks for nothing: refused as skinnerd refuses it, naming
 * the field and every output; a pose whose queries are its answer may. */
START_TEST(an_empty_output_is_refused_at_its_pointer) {
  static const char k_text[] = "\"output\" is empty; ask for at least one of \"final\", \"absolute\", \"local\", "
                               "\"world\", \"positions\" (or leave it out for [\"final\"])";
  json_t *r;
  sk_error e;
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"evaluate\"}, {\"op\": \"pose\", \"output\": []}]}", &r, &e),
                   SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/1/output");
  ck_assert_str_eq(e.text, k_text);
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"evaluate\", \"output\": []}]}", &r, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/0/output");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"pose\", \"output\": [], \"ops\": [{\"op\": \"rotate\", "
                             "\"bone\": \"tip\", \"axis\": [0,0,1], \"amount\": 1}]}]}",
                       &r, &e),
                   SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/0/output");
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"pose\", \"output\": [], \"ops\": [{\"op\": \"query\", "
                             "\"bone\": \"tip\", \"get\": \"scale\"}]}]}",
                       &r, &e),
                   0);
  ck_assert_ptr_nonnull(json_object_get(json_array_get(json_object_get(r, "results"), 0), "queries"));
  ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(r, "results"), 0), "final"));
  json_decref(r);
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"pose\", \"output\": [\"final\", \"bogus\"]}]}", &r, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/ops/0/output/1");
  ck_assert_str_eq(e.text, "expected \"final\", \"absolute\", \"local\", \"world\" or \"positions\"");
}
END_TEST

START_TEST(initial_skin_matrix_enters_final_not_absolute) {
  json_t *r;
  sk_error e;
  ck_assert_int_eq(run(SKEL2 "\"ops\": [{\"op\": \"evaluate\", \"initialSkinMatrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, "
                             "7,0,0,1], \"output\": [\"final\", \"absolute\"]}]}",
                       &r, &e),
                   0);
  ck_assert_double_eq(at(r, 0, "final", 12), 7);
  ck_assert_double_eq(at(r, 0, "absolute", 12), 0);
  json_decref(r);
}
END_TEST

/* A case answered in `fmt`, everything left in *out (sk_eval_opts with no flush). */
static int run_fmt(const char *text, int fmt, sk_strbuf *out, sk_error *e) {
  json_t *c;
  sk_error_clear(e);
  int rc = sk_json_load(text, strlen(text), &c, e);
  if (rc)
    return rc;
  const sk_eval_opts o = {.fmt = fmt};
  rc = sk_eval_case_opts(c, &o, out, e);
  json_decref(c);
  return rc;
}

/* Binary output is each result's final matrices, those of the JSON answer
 * as float32 (f32), or their transposed top three rows (f32x12), results
 * one after another; state-only ops add nothing. */
START_TEST(binary_output_is_the_final_matrices_of_every_result) {
  static const char k_case[] = SKEL2 "\"ops\": [{\"op\": \"pose\", \"bones\": {\"root\": {\"position\": [5,0,0]}}},"
                                     "{\"op\": \"set\", \"bones\": {\"tip\": {\"scaling\": [2,3,4]}}},"
                                     "{\"op\": \"rotate\", \"bone\": \"tip\", \"axis\": [0,0,1], \"amount\": 1},"
                                     "{\"op\": \"evaluate\", \"output\": [\"final\"]},"
                                     "{\"op\": \"pose\", \"ops\": [{\"op\": \"rotate\", \"bone\": \"root\", "
                                     "\"axis\": [1,0,0], \"amount\": 0.5}]}]}";
  json_t *r;
  sk_error e;
  ck_assert_int_eq(run(k_case, &r, &e), 0);
  const json_t *results = json_object_get(r, "results");
  ck_assert_uint_eq(json_array_size(results), 3);
  float want[3 * 48], want12[3 * 36];
  for (size_t i = 0; i < 3; i++)
    for (size_t k = 0; k < 48; k++)
      want[48 * i + k] = (float)at(r, i, "final", k);
  for (size_t m = 0; m < 9; m++) /* dest[4c + r] = m[4r + c] */
    for (size_t c = 0; c < 3; c++)
      for (size_t row = 0; row < 4; row++)
        want12[12 * m + 4 * c + row] = want[16 * m + 4 * row + c];
  json_decref(r);
  sk_strbuf b = {0};
  ck_assert_int_eq(run_fmt(k_case, SK_FMT_F32, &b, &e), 0);
  ck_assert_uint_eq(b.len, sizeof want);
  ck_assert(memcmp(b.data, want, sizeof want) == 0);
  b.len = 0;
  ck_assert_int_eq(run_fmt(k_case, SK_FMT_MAT3X4, &b, &e), 0);
  ck_assert_uint_eq(b.len, sizeof want12);
  ck_assert(memcmp(b.data, want12, sizeof want12) == 0);
  sk_strbuf_free(&b);
}
END_TEST

static int refuse_writes(void *arg, const char *data, size_t len) {
  (void)arg, (void)data, (void)len;
  return -1;
}

/* What a binary answer cannot carry is refused at its field, as skinnerd
 * refuses it; a failed write stops the case. */
START_TEST(binary_output_refuses_what_it_cannot_carry) {
  static const struct {
    const char *ops, *pointer;
  } k_bad[] = {
      {"{\"op\": \"pose\", \"output\": [\"final\", \"absolute\"]}", "/ops/0/output/1"},
      {"{\"op\": \"evaluate\"}, {\"op\": \"evaluate\", \"output\": [\"local\"]}", "/ops/1/output/0"},
      {"{\"op\": \"pose\", \"output\": [\"world\"]}", "/ops/0/output/0"},
      {"{\"op\": \"pose\", \"output\": [\"final\", \"positions\"]}", "/ops/0/output/1"},
      {"{\"op\": \"pose\", \"ops\": [{\"op\": \"rotate\", \"bone\": \"tip\", \"axis\": [0,0,1], \"amount\": 1}, "
       "{\"op\": \"query\", \"bone\": \"tip\", \"get\": \"scale\"}]}",
       "/ops/0/ops/1"},
      {"{\"op\": \"pose\"}, {\"op\": \"query\", \"bone\": \"tip\", \"get\": \"scale\"}", "/ops/1"},
  };
  for (size_t i = 0; i < sizeof k_bad / sizeof *k_bad; i++)
    for (int fmt = SK_FMT_F32; fmt <= SK_FMT_MAT3X4; fmt++) {
      char text[1024];
      snprintf(text, sizeof text, SKEL2 "\"ops\": [%s]}", k_bad[i].ops);
      sk_strbuf b = {0};
      sk_error e;
      ck_assert_int_eq(run_fmt(text, fmt, &b, &e), SK_ERANGE);
      ck_assert_str_eq(e.pointer, k_bad[i].pointer);
      sk_strbuf_free(&b);
    }
  json_t *c;
  sk_error e;
  const char *text = SKEL2 "\"ops\": [{\"op\": \"pose\"}]}";
  ck_assert_int_eq(sk_json_load(text, strlen(text), &c, &e), 0);
  sk_strbuf b = {0};
  const sk_eval_opts failing = {.fmt = SK_FMT_F32, .flush = refuse_writes};
  ck_assert_int_eq(sk_eval_case_opts(c, &failing, &b, &e), SK_EIO);
  const sk_eval_opts unknown = {.fmt = 3};
  ck_assert_int_eq(sk_eval_case_opts(c, &unknown, &b, &e), SK_EINVAL);
  json_decref(c);
  sk_strbuf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_eval");
  TCase *g = tcase_create("golden");
  tcase_add_test(g, pose_does_not_keep_set_does);
  tcase_add_test(g, set_bind_rest_and_return_to_rest);
  tcase_add_test(g, initial_skin_matrix_enters_final_not_absolute);
  tcase_add_test(g, binary_output_is_the_final_matrices_of_every_result);
  suite_add_tcase(s, g);
  TCase *v = tcase_create("validity");
  tcase_add_test(v, errors_point_into_the_case);
  tcase_add_test(v, an_empty_output_is_refused_at_its_pointer);
  tcase_add_test(v, binary_output_refuses_what_it_cannot_carry);
  suite_add_tcase(s, v);
  return sk_test_run(s);
}
