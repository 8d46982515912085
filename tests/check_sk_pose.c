/* sk_pose: one pose request parsed (each invalid input names its field),
 * evaluated by the exact core (golden matrices of a two-bone skeleton) and
 * written as one result object. */
#include "sk_json.h"
#include "sk_pose.h"
#include "sk_testutil.h"

/* tip (slot 0) under root (slot 1), tip one unit up. */
static sk_skeleton *skel2(void) {
  static const char *text =
      "{\"bones\": [{\"name\": \"tip\", \"parent\": \"root\", \"position\": [0,1,0]}, {\"name\": \"root\"}]}";
  json_t *j;
  sk_error e;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, &e), 0);
  sk_skeleton *s;
  ck_assert_int_eq(sk_json_parse_skeleton(j, "", 0, &s, &e), 0);
  json_decref(j);
  return s;
}

/* Parses `text` as a pose of `s` at "/p"; the code, the error in *e. */
static int parse(const sk_skeleton *s, const char *text, const char *const *extra, sk_pose *pose, sk_error *e) {
  json_t *j;
  sk_error_clear(e);
  ck_assert_int_eq(sk_json_load(text, strlen(text), &j, e), 0);
  int rc = sk_pose_parse(s, j, "/p", extra, pose, e);
  json_decref(j);
  return rc;
}

START_TEST(an_empty_pose_asks_final_matrices_of_the_stored_locals) {
  sk_skeleton *s = skel2();
  sk_pose p;
  sk_error e;
  ck_assert_int_eq(parse(s, "{}", NULL, &p, &e), 0);
  ck_assert_uint_eq(p.count, 0);
  ck_assert_uint_eq(p.output, SK_OUT_FINAL);
  ck_assert(!p.has_initial_skin);
  ck_assert(!p.frame_range);
  sk_pose_close(&p);
  ck_assert_ptr_null(p.overrides);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(overrides_outputs_and_initial_skin_are_parsed) {
  sk_skeleton *s = skel2();
  sk_pose p;
  sk_error e;
  ck_assert_int_eq(parse(s,
                         "{\"bones\": {\"root\": {\"position\": [5,0,0]}}, \"output\": [\"absolute\", \"local\"],"
                         " \"initialSkinMatrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 7,0,0,1]}",
                         NULL, &p, &e),
                   0);
  ck_assert_uint_eq(p.count, 1);
  ck_assert_str_eq(s->bones[p.overrides[0].bone].name, "root");
  ck_assert(p.overrides[0].mask & SK_OVERRIDE_POSITION);
  ck_assert_double_eq(p.overrides[0].position[0], 5);
  ck_assert_uint_eq(p.output, SK_OUT_ABSOLUTE | SK_OUT_LOCAL);
  ck_assert(p.has_initial_skin);
  ck_assert_float_eq(p.initial_skin[12], 7);
  sk_pose_close(&p);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(each_invalid_input_names_its_field) {
  sk_skeleton *s = skel2();
  sk_pose p;
  sk_error e;
  static const char *const extra[] = {"op", NULL};
  ck_assert_int_eq(parse(s, "[]", NULL, &p, &e), SK_ETYPE);
  ck_assert_str_eq(e.pointer, "/p");
  ck_assert_int_eq(parse(s, "{\"op\": \"pose\"}", NULL, &p, &e), SK_EUNKNOWN);
  ck_assert_str_eq(e.pointer, "/p/op");
  ck_assert_int_eq(parse(s, "{\"op\": \"pose\"}", extra, &p, &e), 0); /* allowed and ignored */
  sk_pose_close(&p);
  ck_assert_int_eq(parse(s, "{\"bones\": {\"nope\": {}}}", NULL, &p, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/p/bones/nope");
  ck_assert_int_eq(parse(s, "{\"initialSkinMatrix\": [1, 2]}", NULL, &p, &e), SK_ELENGTH);
  ck_assert_str_eq(e.pointer, "/p/initialSkinMatrix");
  ck_assert_int_eq(parse(s, "{\"output\": [\"world\"]}", NULL, &p, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/p/output/0");
  sk_skeleton_destroy(s);
}
END_TEST

/* Final = absolute x inverse bind; the bind pose is the stored one, so the
 * stored locals give identities and moving root by x = 5 moves both. */
START_TEST(evaluate_gives_the_cores_matrices_and_leaves_the_skeleton) {
  sk_skeleton *s = skel2();
  sk_pose_buffers b;
  ck_assert_int_eq(sk_pose_buffers_init(&b, s->count), 0);
  sk_pose p;
  sk_error e;
  ck_assert_int_eq(parse(s, "{\"bones\": {\"root\": {\"position\": [5,0,0]}}, \"output\": [\"final\", \"absolute\"]}",
                         NULL, &p, &e),
                   0);
  sk_pose_evaluate(s, &p, &b);
  ck_assert_float_eq(b.final[16 + 12], 5); /* root, slot 1 */
  ck_assert_float_eq(b.final[12], 5);      /* tip follows */
  ck_assert_float_eq(b.final[13], 0);
  ck_assert_float_eq(b.absolute[13], 1);   /* tip's absolute y */
  ck_assert_float_eq(b.final[2 * 16 + 15], 1); /* the trailing identity */
  sk_pose q;
  ck_assert_int_eq(parse(s, "{}", NULL, &q, &e), 0);
  sk_pose_evaluate(s, &q, &b);
  ck_assert_float_eq(b.final[16 + 12], 0); /* the pose did not stay */
  sk_pose_close(&q);
  sk_pose_close(&p);
  sk_pose_buffers_close(&b);
  ck_assert_ptr_null(b.final);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(write_json_writes_the_outputs_asked_and_the_reference_changes_no_byte) {
  sk_skeleton *s = skel2();
  sk_pose_buffers b;
  ck_assert_int_eq(sk_pose_buffers_init(&b, s->count), 0);
  sk_pose p;
  sk_error e;
  ck_assert_int_eq(parse(s, "{\"bones\": {\"root\": {\"position\": [5,0,0]}}, \"output\": [\"final\", \"local\"]}",
                         NULL, &p, &e),
                   0);
  sk_pose_evaluate(s, &p, &b);
  sk_strbuf plain = {0}, ref = {0};
  ck_assert_int_eq(sk_pose_write_json(s, &p, &b, NULL, &plain), 0);
  json_t *j = json_loadb(plain.data, plain.len, 0, NULL);
  ck_assert_ptr_nonnull(j);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "final")), 48);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "local")), 32);
  ck_assert_ptr_null(json_object_get(j, "absolute"));
  json_decref(j);
  /* A reference text equal in some matrices (the stored pose's) is copied
   * where it matches: the same bytes. */
  float base[48];
  sk_pose none = {.output = SK_OUT_FINAL};
  sk_pose_evaluate(s, &none, &b);
  memcpy(base, b.final, sizeof base);
  sk_f32_text t = {0};
  ck_assert_int_eq(sk_f32_text_build(&t, base, 48, 16), 0);
  sk_pose_evaluate(s, &p, &b);
  ck_assert_int_eq(sk_pose_write_json(s, &p, &b, &t, &ref), 0);
  ck_assert_uint_eq(ref.len, plain.len);
  ck_assert(memcmp(ref.data, plain.data, plain.len) == 0);
  sk_f32_text_free(&t);
  sk_strbuf_free(&plain);
  sk_strbuf_free(&ref);
  sk_pose_close(&p);
  sk_pose_buffers_close(&b);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_pose");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, an_empty_pose_asks_final_matrices_of_the_stored_locals);
  tcase_add_test(v, overrides_outputs_and_initial_skin_are_parsed);
  tcase_add_test(v, each_invalid_input_names_its_field);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, evaluate_gives_the_cores_matrices_and_leaves_the_skeleton);
  tcase_add_test(g, write_json_writes_the_outputs_asked_and_the_reference_changes_no_byte);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
