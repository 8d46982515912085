#include <malloc.h>
#include "sk_json.h"
#include "sk_testutil.h"

/* Parses `text` as a skeleton; returns the error code, fills `e`. */
static int parse(const char *text, sk_error *e, sk_skeleton **out) {
  json_t *j;
  sk_error_clear(e);
  int rc = sk_json_load(text, strlen(text), &j, e);
  if (rc)
    return rc;
  sk_skeleton *s = NULL;
  rc = sk_json_parse_skeleton(j, "/skeleton", 0, &s, e);
  json_decref(j);
  if (out != NULL)
    *out = s;
  else
    sk_skeleton_destroy(s);
  return rc;
}

#define EXPECT(text, code, ptr)                     \
  do {                                              \
    sk_error e_;                                    \
    ck_assert_int_eq(parse((text), &e_, NULL), (code)); \
    ck_assert_str_eq(e_.pointer, (ptr));            \
  } while (0)

START_TEST(syntax_errors_carry_line_and_column) {
  sk_error e;
  ck_assert_int_eq(parse("{\"bones\": [\n  {\"name\": }]}", &e, NULL), SK_ESYNTAX);
  ck_assert_int_eq(e.line, 2);
  ck_assert_int_gt(e.column, 0);
  ck_assert_int_eq(parse("{\"bones\": [], \"bones\": []}", &e, NULL), SK_ESYNTAX); /* duplicate key */
}
END_TEST

START_TEST(each_bad_field_is_named) {
  EXPECT("[]", SK_ETYPE, "/skeleton");
  EXPECT("{}", SK_EMISSING, "/skeleton/bones");
  EXPECT("{\"bones\": 3}", SK_ETYPE, "/skeleton/bones");
  EXPECT("{\"bones\": [{\"parent\": null}]}", SK_EMISSING, "/skeleton/bones/0/name");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"postion\": [1,2,3]}]}", SK_EUNKNOWN, "/skeleton/bones/0/postion");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"position\": [1,2]}]}", SK_ELENGTH, "/skeleton/bones/0/position");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"position\": [1,\"x\",2]}]}", SK_ETYPE, "/skeleton/bones/0/position/1");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"scaling\": [1,1e39,1]}]}", SK_ENOTFINITE, "/skeleton/bones/0/scaling/1");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"rotation\": [0,0,0], \"rotationQuaternion\": [0,0,0,1]}]}", SK_ETYPE,
         "/skeleton/bones/0/rotation");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1], \"position\": [0,0,0]}]}",
         SK_ETYPE, "/skeleton/bones/0/matrix");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"bind\": [0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0]}]}", SK_ESINGULAR,
         "/skeleton/bones/0/bind");
  EXPECT("{\"bones\": [{\"name\": \"a\"}, {\"name\": \"b\", \"parent\": \"c\"}]}", SK_EUNKNOWN,
         "/skeleton/bones/1/parent");
  EXPECT("{\"bones\": [{\"name\": \"a\", \"index\": 1.5}]}", SK_ETYPE, "/skeleton/bones/0/index");
  EXPECT("{\"bones\": [{\"name\": \"a/b\", \"parent\": \"a/b\"}]}", SK_ECYCLE, "/skeleton/bones/0/parent");
}
END_TEST

START_TEST(trs_fields_compose_like_babylon) {
  sk_error e;
  sk_skeleton *s;
  ck_assert_int_eq(parse("{\"bones\": [{\"name\": \"a\", \"position\": [1,2,3], \"rotationQuaternion\": [0,0,1,1],"
                         " \"length\": 2.5, \"index\": 0}]}",
                         &e, &s),
                   0);
  const float *m = s->bones[0].local.matrix;
  ck_assert_float_eq(m[1], 2.0f); /* non-unit quaternion scales */
  ck_assert_float_eq(m[12], 1.0f);
  ck_assert_float_eq(m[14], 3.0f);
  ck_assert(s->bones[0].has_length);
  ck_assert_double_eq(s->bones[0].length, 2.5);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(babylon_serialize_format_is_accepted) {
  sk_error e;
  sk_skeleton *s;
  const char *t = "{\"name\": \"sk\", \"id\": \"sk\", \"needInitialSkinMatrix\": false, \"ranges\": [], \"bones\": ["
                  "{\"parentBoneIndex\": -1, \"index\": 1, \"name\": \"root\", \"id\": \"root\", \"uniqueId\": 3,"
                  " \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1], \"rest\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1],"
                  " \"linkedTransformNodeId\": null},"
                  "{\"parentBoneIndex\": 0, \"index\": 0, \"name\": \"tip\", \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, "
                  "0,1,0,1], \"length\": 0}]}";
  ck_assert_int_eq(parse(t, &e, &s), 0);
  ck_assert_int_eq(s->bones[0].index, 1);
  ck_assert_int_eq(s->bones[1].parent, 0);
  ck_assert_float_eq(s->bones[0].bind[13], 1.0f);
  ck_assert_float_eq(s->bones[0].rest[13], 2.0f);
  ck_assert(!s->bones[1].has_length);
  sk_skeleton_destroy(s);
  EXPECT("{\"bones\": [{\"parentBoneIndex\": 5, \"name\": \"a\", \"matrix\": [1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]}",
         SK_ERANGE, "/skeleton/bones/0/parentBoneIndex");
  EXPECT("{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"a\"}]}", SK_EMISSING, "/skeleton/bones/0/matrix");
}
END_TEST

/* JSON.stringify(skeleton.serialize()) in Babylon 9.x writes each matrix's
 * Float32Array as {"0": .., "15": ..}; Skeleton.Parse reads it, so must we. */
START_TEST(babylon_matrices_as_index_keyed_objects) {
  static const char *arr = "{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"r\","
                           " \"matrix\": [1,0,0,0, 0,2,0,0, 0,0,1,0, 0.5,1,0,1],"
                           " \"rest\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,2,0,1]}]}";
  static const char *obj = "{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"r\","
                           " \"matrix\": {\"15\":1,\"0\":1,\"1\":0,\"2\":0,\"3\":0,\"4\":0,\"5\":2,\"6\":0,"
                           "\"7\":0,\"8\":0,\"9\":0,\"10\":1,\"11\":0,\"12\":0.5,\"13\":1,\"14\":0},"
                           " \"rest\": {\"0\":1,\"1\":0,\"2\":0,\"3\":0,\"4\":0,\"5\":1,\"6\":0,\"7\":0,"
                           "\"8\":0,\"9\":0,\"10\":1,\"11\":0,\"12\":0,\"13\":2,\"14\":0,\"15\":1}}]}";
  sk_error e;
  sk_skeleton *a, *o;
  ck_assert_int_eq(parse(arr, &e, &a), 0);
  ck_assert_int_eq(parse(obj, &e, &o), 0);
  ck_assert_mem_eq(&a->bones[0].local, &o->bones[0].local, sizeof a->bones[0].local);
  ck_assert_mem_eq(a->bones[0].bind, o->bones[0].bind, sizeof a->bones[0].bind);
  ck_assert_mem_eq(a->bones[0].rest, o->bones[0].rest, sizeof a->bones[0].rest);
  ck_assert_float_eq(o->bones[0].rest[13], 2.0f);
  sk_skeleton_destroy(a);
  sk_skeleton_destroy(o);
  /* 15 keys, a key out of range, a value that is not a number. */
  EXPECT("{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"r\", \"matrix\": {\"0\":1,\"1\":0,\"2\":0,"
         "\"3\":0,\"4\":0,\"5\":1,\"6\":0,\"7\":0,\"8\":0,\"9\":0,\"10\":1,\"11\":0,\"12\":0,\"13\":0,\"14\":0}}]}",
         SK_ELENGTH, "/skeleton/bones/0/matrix");
  EXPECT("{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"r\", \"matrix\": {\"0\":1,\"1\":0,\"2\":0,"
         "\"3\":0,\"4\":0,\"5\":1,\"6\":0,\"7\":0,\"8\":0,\"9\":0,\"10\":1,\"11\":0,\"12\":0,\"13\":0,\"14\":0,"
         "\"16\":1}}]}",
         SK_EMISSING, "/skeleton/bones/0/matrix");
  EXPECT("{\"bones\": [{\"parentBoneIndex\": -1, \"name\": \"r\", \"matrix\": {\"0\":1,\"1\":0,\"2\":0,"
         "\"3\":0,\"4\":0,\"5\":1,\"6\":0,\"7\":\"x\",\"8\":0,\"9\":0,\"10\":1,\"11\":0,\"12\":0,\"13\":0,\"14\":0,"
         "\"15\":1}}]}",
         SK_ETYPE, "/skeleton/bones/0/matrix/7");
  /* Our own format keeps arrays only. */
  EXPECT("{\"bones\": [{\"name\": \"r\", \"matrix\": {\"0\":1}}]}", SK_ETYPE, "/skeleton/bones/0/matrix");
}
END_TEST

/* The tree's real size (a malloc count) stays under sk_json_tree_bound for
 * the shapes that cost the most per byte. */
static void tree_within_bound(const char *unit, size_t n) {
  size_t ul = strlen(unit), k = 0;
  char *b = malloc(n * (ul + 1) + 2);
  b[k++] = '[';
  for (size_t i = 0; i < n; i++) {
    if (i)
      b[k++] = ',';
    memcpy(b + k, unit, ul);
    k += ul;
  }
  b[k++] = ']';
  struct mallinfo2 before = mallinfo2();
  json_t *j;
  ck_assert_int_eq(sk_json_load(b, k, &j, NULL), 0);
  struct mallinfo2 after = mallinfo2();
  size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
  size_t bound = sk_json_tree_bound(b, k);
  /* Under ASan, malloc goes around glibc's counters: used is then ~0 and
   * says nothing; the bound must still not be absurd for plain numbers. */
  ck_assert_msg(used <= bound, "%s x %zu: %zu bytes used, bound %zu", unit, n, used, bound);
  json_decref(j);
  free(b);
}

START_TEST(json_tree_bound_holds_for_the_costliest_shapes) {
  static const char *const units[] = {"{}", "[]", "1", "1.5", "\"a\"", "{\"a\":1}", "[1]", "{\"abc\":[1,2,{}]}"};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    tree_within_bound(units[i], 200000);
  /* numbers, the common case, are not overcounted past 2x of a plain cost */
  ck_assert_uint_lt(sk_json_tree_bound("[1,2,3]", 7), 7 + 64 * 3 + 160 + 1);
}
END_TEST

START_TEST(overrides_name_unknown_bones) {
  sk_error e;
  sk_skeleton *s;
  ck_assert_int_eq(parse("{\"bones\": [{\"name\": \"a\"}]}", &e, &s), 0);
  json_t *j = json_loads("{\"a\": {\"position\": [1,2,3]}, \"zz\": {}}", 0, NULL);
  sk_override *o;
  size_t n;
  sk_error_clear(&e);
  ck_assert_int_eq(sk_json_parse_overrides(s, j, "/ops/0/bones", &o, &n, &e), SK_ENOTFOUND);
  ck_assert_str_eq(e.pointer, "/ops/0/bones/zz");
  json_decref(j);
  j = json_loads("{\"a\": {\"scaling\": [2,2,2]}}", 0, NULL);
  ck_assert_int_eq(sk_json_parse_overrides(s, j, "", &o, &n, NULL), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(o[0].mask, SK_OVERRIDE_SCALING);
  free(o);
  json_decref(j);
  sk_skeleton_destroy(s);
}
END_TEST

/* The one strict-key check: the member's pointer (RFC 6901 escaped under
 * the object's), the exact text, and both lists taken. */
START_TEST(unknown_keys_are_named_at_their_pointer) {
  static const char *const own[] = {"a", "b", NULL};
  static const char *const also[] = {"c", NULL};
  json_t *ok = json_pack("{s:i, s:i, s:i}", "a", 1, "b", 2, "c", 3);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_check_keys(ok, "/x", own, also, &err), 0);
  ck_assert_int_eq(sk_json_check_keys(ok, "/x", own, NULL, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/x/c");
  ck_assert_str_eq(err.text, "unknown field \"c\"");
  json_t *odd = json_pack("{s:i}", "d/e~f", 1);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_check_keys(odd, "", own, also, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.pointer, "/d~1e~0f");
  json_decref(ok);
  json_decref(odd);
}
END_TEST

/* "Did you mean": the nearest allowed name (sk_near) when one is close,
 * the bare text when none is. */
START_TEST(unknown_keys_and_bones_name_the_nearest_valid_name) {
  static const char *const own[] = {"matrix", "position", "rotation", NULL};
  static const char *const also[] = {"rotationQuaternion", NULL};
  json_t *typo = json_pack("{s:i}", "rotaton", 1), *far = json_pack("{s:i}", "frames", 1);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_check_keys(typo, "/bones/b", own, also, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.text, "unknown field \"rotaton\"; did you mean \"rotation\"?");
  ck_assert_str_eq(err.pointer, "/bones/b/rotaton");
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_check_keys(far, "", own, also, &err), SK_EUNKNOWN);
  ck_assert_str_eq(err.text, "unknown field \"frames\"");
  json_decref(typo);
  json_decref(far);
  json_t *sj = json_loads("{\"bones\":[{\"name\":\"hips\"},{\"name\":\"upperArm\",\"parent\":\"hips\"}]}", 0, NULL);
  sk_skeleton *s = NULL;
  ck_assert_int_eq(sk_json_parse_skeleton(sj, "", 16, &s, &err), 0);
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_no_bone(s, "upperarm_", "/bones/upperarm_", &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.text, "no bone named \"upperarm_\"; did you mean \"upperArm\"?");
  sk_error_clear(&err);
  ck_assert_int_eq(sk_json_no_bone(s, "tail", "/bones/tail", &err), SK_ENOTFOUND);
  ck_assert_str_eq(err.text, "no bone named \"tail\"");
  ck_assert_str_eq(err.pointer, "/bones/tail");
  sk_skeleton_destroy(s);
  json_decref(sj);
}
END_TEST

START_TEST(output_list_is_checked) {
  unsigned mask;
  sk_error e;
  sk_error_clear(&e);
  json_t *j = json_loads("[\"local\", \"final\"]", 0, NULL);
  ck_assert_int_eq(sk_json_parse_output(j, "/output", &mask, &e), 0);
  ck_assert_uint_eq(mask, SK_OUT_LOCAL | SK_OUT_FINAL);
  json_decref(j);
  j = json_loads("[\"final\", \"world\"]", 0, NULL);
  ck_assert_int_eq(sk_json_parse_output(j, "/output", &mask, &e), SK_ERANGE);
  ck_assert_str_eq(e.pointer, "/output/1");
  /* the text names every output a pose can ask for, not only this parser's */
  ck_assert_str_eq(e.text, "expected \"final\", \"absolute\", \"local\", \"world\" or \"positions\"");
  json_decref(j);
  sk_error_clear(&e);
  j = json_loads("\"final\"", JSON_DECODE_ANY, NULL);
  ck_assert_int_eq(sk_json_parse_output(j, "/output", &mask, &e), SK_ETYPE);
  ck_assert_str_eq(e.text, "expected an array of \"final\", \"absolute\", \"local\", \"world\", \"positions\"");
  json_decref(j);
}
END_TEST

START_TEST(results_print_shortest_floats) {
  sk_strbuf b = {0};
  float fin[32] = {0.1f, -0.0f, 1e-7f, 3};
  ck_assert_int_eq(sk_json_write_result(&b, 1, fin, NULL, NULL), 0);
  ck_assert_str_eq(b.data, "{\"final\":[0.1,-0,1e-7,3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}");
  b.len = 0;
  ck_assert_int_eq(sk_json_write_string(&b, "a\"b\\c\n"), 0);
  ck_assert_str_eq(b.data, "\"a\\\"b\\\\c\\u000a\"");
  sk_strbuf_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_json");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, syntax_errors_carry_line_and_column);
  tcase_add_test(v, each_bad_field_is_named);
  tcase_add_test(v, overrides_name_unknown_bones);
  tcase_add_test(v, output_list_is_checked);
  tcase_add_test(v, unknown_keys_are_named_at_their_pointer);
  tcase_add_test(v, unknown_keys_and_bones_name_the_nearest_valid_name);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, trs_fields_compose_like_babylon);
  tcase_add_test(g, babylon_serialize_format_is_accepted);
  tcase_add_test(g, babylon_matrices_as_index_keyed_objects);
  tcase_add_test(g, json_tree_bound_holds_for_the_costliest_shapes);
  tcase_add_test(g, results_print_shortest_floats);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
