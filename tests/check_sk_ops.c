/* sk_ops through `skinner eval`'s case runner: every invalid op gets its
 * exact error and pointer, and the committed Bone-API cases
 * (tests/conformance/ops.jsonl, answers from real Babylon.js 9.34.0 Bone
 * methods, tests/oracle/gen_ops.mjs) agree BIT FOR BIT: matrices and
 * positions in float32, query vectors as doubles (Babylon's Vector3 and
 * Quaternion are JS numbers). SK_OPS_FILE=path runs another .jsonl file. */
#include <math.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

/* ---- validity ------------------------------------------------------------- */

static const char *k_skel = "{\"bones\":[{\"name\":\"a\",\"position\":[1,2,3]},{\"name\":\"b\",\"parent\":\"a\"}]}";

/* Runs a case made of k_skel, an optional case mesh and the given ops text;
 * returns the error code and fills `e`. */
static int run_case(const char *mesh, const char *ops, sk_error *e, sk_strbuf *out) {
  char text[4096];
  snprintf(text, sizeof text, "{\"skeleton\":%s%s%s,\"ops\":%s}", k_skel, mesh ? ",\"mesh\":" : "", mesh ? mesh : "",
           ops);
  json_t *c = json_loads(text, 0, NULL);
  ck_assert_msg(c != NULL, "bad test JSON %s", text);
  sk_error_clear(e);
  int rc = sk_eval_case(c, out, e);
  json_decref(c);
  return rc;
}

static void expect_error(const char *mesh, const char *ops, int code, const char *pointer) {
  sk_error e;
  sk_strbuf out = {0};
  int rc = run_case(mesh, ops, &e, &out);
  sk_strbuf_free(&out);
  ck_assert_msg(rc == code, "%s: got %s (%s at %s), want %s", ops, sk_errname(rc), e.text, e.pointer,
                sk_errname(code));
  ck_assert_str_eq(e.pointer, pointer);
}

START_TEST(unknown_bone_is_not_found_at_its_pointer) {
  expect_error(NULL, "[{\"op\":\"translate\",\"bone\":\"zz\",\"vector\":[1,0,0]}]", SK_ENOTFOUND, "/ops/0/bone");
  expect_error(NULL, "[{\"op\":\"query\",\"bone\":\"zz\",\"get\":\"position\"}]", SK_ENOTFOUND, "/ops/0/bone");
}
END_TEST

START_TEST(zero_length_axis_is_refused) {
  expect_error(NULL, "[{\"op\":\"rotate\",\"bone\":\"a\",\"axis\":[0,0,0],\"amount\":1}]", SK_ERANGE, "/ops/0/axis");
  expect_error(NULL, "[{\"op\":\"setAxisAngle\",\"bone\":\"a\",\"axis\":[0,-0,0],\"angle\":1}]", SK_ERANGE,
               "/ops/0/axis");
}
END_TEST

START_TEST(singular_and_nonfinite_meshes_are_refused) {
  expect_error("{\"scaling\":[1,0,1]}", "[]", SK_ESINGULAR, "/mesh");
  expect_error(NULL, "[{\"op\":\"rotate\",\"bone\":\"b\",\"axis\":[0,1,0],\"amount\":1,\"space\":\"world\","
                     "\"mesh\":{\"parent\":{\"scaling\":[0,0,0]}}}]",
               SK_ESINGULAR, "/ops/0/mesh");
  expect_error(NULL, "[{\"op\":\"evaluate\",\"mesh\":{\"scaling\":[1e30,1e30,1e30],\"parent\":{\"scaling\":[1e30,1,1]}},\"output\":[\"world\"]}]",
               SK_ESINGULAR, "/ops/0/mesh");
  expect_error("{\"position\":[1,2]}", "[]", SK_ELENGTH, "/mesh/position");
  expect_error("{\"postion\":[1,2,3]}", "[]", SK_EUNKNOWN, "/mesh/postion");
}
END_TEST

START_TEST(bad_fields_name_the_field) {
  expect_error(NULL, "[{\"op\":\"rotate\",\"bone\":\"a\",\"axis\":[0,1,0]}]", SK_EMISSING, "/ops/0/amount");
  expect_error(NULL, "[{\"op\":\"translate\",\"bone\":\"a\",\"vector\":[1e39,0,0]}]", SK_ENOTFINITE,
               "/ops/0/vector/0");
  expect_error(NULL, "[{\"op\":\"lookAt\",\"bone\":\"a\",\"target\":[0,0,1],\"yawAxis\":[0,0,0]}]", SK_ERANGE,
               "/ops/0/yawAxis");
  expect_error(NULL, "[{\"op\":\"lookAt\",\"bone\":\"a\",\"target\":[0,0,1],\"upAxisSpace\":\"up\"}]",
               SK_ERANGE, "/ops/0/upAxisSpace");
  expect_error(NULL, "[{\"op\":\"rotate\",\"bone\":\"a\",\"axis\":[0,1,0],\"amount\":\"x\"}]", SK_ETYPE,
               "/ops/0/amount");
  expect_error(NULL, "[{\"op\":\"setPosition\",\"bone\":\"a\",\"position\":[0,1,0],\"space\":\"mesh\"}]", SK_ERANGE,
               "/ops/0/space");
  expect_error(NULL, "[{\"op\":\"setScale\",\"bone\":\"a\",\"scale\":[1,1,1],\"space\":\"world\"}]", SK_EUNKNOWN,
               "/ops/0/space");
  expect_error(NULL, "[{\"op\":\"query\",\"bone\":\"a\",\"get\":\"colour\"}]", SK_ERANGE, "/ops/0/get");
  expect_error(NULL, "[{\"op\":\"query\",\"bone\":\"a\",\"get\":\"direction\"}]", SK_EMISSING, "/ops/0/axis");
  expect_error(NULL, "[{\"op\":\"query\",\"bone\":\"a\",\"get\":\"scale\",\"point\":[1,2,3]}]", SK_EUNKNOWN,
               "/ops/0/point");
  expect_error(NULL, "[{\"op\":\"setRotationMatrix\",\"bone\":\"a\"}]", SK_EMISSING, "/ops/0/matrix");
  expect_error(NULL, "[{\"op\":\"evaluate\",\"output\":[\"world\",\"world\"]}]", SK_EDUPLICATE, "/ops/0/output/1");
  expect_error(NULL, "[{\"op\":\"evaluate\",\"output\":[\"final\",\"planet\"]}]", SK_ERANGE, "/ops/0/output/1");
  expect_error(NULL, "[{\"op\":\"pose\",\"ops\":[{\"op\":\"scale\",\"bone\":\"q\",\"scale\":[1,1,1]}]}]",
               SK_ENOTFOUND, "/ops/0/ops/0/bone");
}
END_TEST

START_TEST(ik_chains_without_what_babylon_needs_are_refused) {
  /* a is a root: no parent. */
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"a\",\"target\":[0,0,1]}]", SK_ERANGE, "/ops/0/bone");
  /* b has a parent but is a leaf without a length: Babylon's controller
   * has not enough information and update() does nothing, so the op is
   * taken and changes nothing (it was refused at /ops/0/bone until
   * Babylon's answer was checked, tests/conformance/ops_mirror.jsonl). */
  sk_error e;
  sk_strbuf with = {0}, without = {0};
  const char *eval = "{\"op\":\"evaluate\",\"output\":[\"final\",\"absolute\",\"local\"]}";
  char ops[512];
  snprintf(ops, sizeof ops, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"poleTarget\":[0,1,0]},%s]", eval);
  ck_assert_int_eq(run_case(NULL, ops, &e, &with), 0);
  snprintf(ops, sizeof ops, "[%s]", eval);
  ck_assert_int_eq(run_case(NULL, ops, &e, &without), 0);
  ck_assert_uint_eq(with.len, without.len);
  ck_assert(memcmp(with.data, without.data, with.len) == 0);
  sk_strbuf_free(&with);
  sk_strbuf_free(&without);
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"poleTargetBone\":\"nope\"}]",
               SK_ENOTFOUND, "/ops/0/poleTargetBone");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"bendAxis\":[0,0,0]}]", SK_ERANGE,
               "/ops/0/bendAxis");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"poleTarget\":[0,1,0],"
                     "\"poleTargetBone\":\"a\"}]",
               SK_ETYPE, "/ops/0/poleTargetBone");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\"}]", SK_EMISSING, "/ops/0/target");
  /* the target as doubles or as a mesh's world position, not both; a pole one way */
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"targetMesh\":{}}]", SK_ETYPE,
               "/ops/0/targetMesh");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"targetMesh\":null}]", SK_ETYPE, "/ops/0/targetMesh");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"targetMesh\":{\"scaling\":[0,1,1]}}]", SK_ESINGULAR,
               "/ops/0/targetMesh");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"poleTarget\":[0,1,0],"
                     "\"poleTargetMesh\":{}}]",
               SK_ETYPE, "/ops/0/poleTargetMesh");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"poleTargetMesh\":{\"postion\":[1,2,3]}}]",
               SK_EUNKNOWN, "/ops/0/poleTargetMesh/postion");
  expect_error(NULL, "[{\"op\":\"ik\",\"bone\":\"b\",\"target\":[0,0,1],\"space\":\"world\"}]", SK_EUNKNOWN,
               "/ops/0/space");
}
END_TEST

START_TEST(world_and_positions_cover_every_bone_in_order) {
  sk_error e;
  sk_strbuf out = {0};
  int rc = run_case("{\"position\":[10,0,0]}",
                    "[{\"op\":\"evaluate\",\"output\":[\"positions\"]},"
                    "{\"op\":\"evaluate\",\"mesh\":null,\"output\":[\"positions\",\"world\"]},"
                    "{\"op\":\"query\",\"bone\":\"b\",\"get\":\"absolutePosition\"}]",
                    &e, &out);
  ck_assert_msg(rc == 0, "%s at %s", e.text, e.pointer);
  ck_assert_str_eq(out.data, "{\"order\":[\"a\",\"b\"],\"results\":[{\"positions\":[11,2,3,11,2,3]},"
                             "{\"world\":[1,0,0,0,0,1,0,0,0,0,1,0,1,2,3,1,1,0,0,0,0,1,0,0,0,0,1,0,1,2,3,1],"
                             "\"positions\":[1,2,3,1,2,3]},"
                             "{\"query\":\"absolutePosition\",\"bone\":\"b\",\"value\":[11,2,3]}]}");
  sk_strbuf_free(&out);
}
END_TEST

/* "targetMesh" is "target" rounded to float32 (a world matrix's
 * translation), whatever the mesh's other fields; "target" is used as
 * given. On a three-bone chain with a pole. */
START_TEST(a_target_mesh_is_the_target_rounded_to_float32) {
  static const char *skel = "{\"bones\":[{\"name\":\"a\",\"position\":[1,2,3]},{\"name\":\"b\",\"parent\":\"a\","
                            "\"position\":[0,1,0]},{\"name\":\"c\",\"parent\":\"b\",\"position\":[0,1,0]}]}";
  static const double t[3] = {0.1, 0.7, 2.3};
  char target[3][192], ops[3][1024];
  snprintf(target[0], sizeof target[0], "\"target\":[%.17g,%.17g,%.17g]", (double)(float)t[0], (double)(float)t[1],
           (double)(float)t[2]);
  snprintf(target[1], sizeof target[1], "\"targetMesh\":{\"position\":[%.17g,%.17g,%.17g]}", t[0], t[1], t[2]);
  snprintf(target[2], sizeof target[2], "\"targetMesh\":{\"position\":[%.17g,%.17g,%.17g],\"scaling\":[-1,2,1]}", t[0],
           t[1], t[2]);
  sk_strbuf out[3] = {{0}};
  for (int k = 0; k < 3; k++) {
    snprintf(ops[k], sizeof ops[k],
             "{\"skeleton\":%s,\"ops\":[{\"op\":\"ik\",\"bone\":\"b\",%s,\"poleTarget\":[0,0,3]},"
             "{\"op\":\"evaluate\",\"output\":[\"final\",\"local\"]}]}",
             skel, target[k]);
    json_t *c = json_loads(ops[k], 0, NULL);
    ck_assert_ptr_nonnull(c);
    sk_error e;
    sk_error_clear(&e);
    ck_assert_msg(sk_eval_case(c, &out[k], &e) == 0, "%s at %s", e.text, e.pointer);
    json_decref(c);
  }
  for (int k = 1; k < 3; k++) {
    ck_assert_uint_eq(out[k].len, out[0].len);
    ck_assert(memcmp(out[k].data, out[0].data, out[0].len) == 0);
  }
  for (int k = 0; k < 3; k++)
    sk_strbuf_free(&out[k]);
}
END_TEST

START_TEST(a_pose_with_ops_leaves_no_trace) {
  sk_error e;
  sk_strbuf out = {0};
  int rc = run_case(NULL,
                    "[{\"op\":\"pose\",\"ops\":[{\"op\":\"translate\",\"bone\":\"a\",\"vector\":[1,0,0]},"
                    "{\"op\":\"query\",\"bone\":\"a\",\"get\":\"position\"}],\"output\":[\"positions\"]},"
                    "{\"op\":\"query\",\"bone\":\"a\",\"get\":\"position\"}]",
                    &e, &out);
  ck_assert_msg(rc == 0, "%s at %s", e.text, e.pointer);
  ck_assert_str_eq(out.data, "{\"order\":[\"a\",\"b\"],\"results\":[{\"positions\":[2,2,3,2,2,3],\"queries\":"
                             "[{\"query\":\"position\",\"bone\":\"a\",\"value\":[2,2,3]}]},"
                             "{\"query\":\"position\",\"bone\":\"a\",\"value\":[1,2,3]}]}");
  sk_strbuf_free(&out);
}
END_TEST

/* ---- Babylon, bit for bit ------------------------------------------------------ */

/* Exact comparison: strings and structure equal; numbers equal as float32,
 * or as double inside a query's 3- or 4-number "value" (the Euler
 * "rotation" query included: Babylon's toEulerAnglesToRef calls Math.atan2
 * and Math.asin, which sk_bone computes as V8 does, sk_fdlibm). */
static bool same(const json_t *g, const json_t *w, int as_double, char *why, size_t cap, const char *at) {
  if (json_is_number(w)) {
    double a = json_number_value(g), b = json_number_value(w);
    bool eq = json_is_number(g) && (as_double ? a == b : (float)a == (float)b);
    if (!eq)
      snprintf(why, cap, "%s: got %.17g, want %.17g", at, a, b);
    return eq;
  }
  if (json_is_array(w)) {
    if (!json_is_array(g) || json_array_size(g) != json_array_size(w)) {
      snprintf(why, cap, "%s: array sizes differ", at);
      return false;
    }
    for (size_t i = 0; i < json_array_size(w); i++) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s/%zu", at, i);
      if (!same(json_array_get(g, i), json_array_get(w, i), as_double, why, cap, sub))
        return false;
    }
    return true;
  }
  if (json_is_object(w)) {
    if (!json_is_object(g) || json_object_size(g) != json_object_size(w)) {
      snprintf(why, cap, "%s: other members", at);
      return false;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)w, key, val) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s/%s", at, key);
      int dbl = strcmp(key, "value") == 0 && json_array_size(val) <= 4;
      if (!same(json_object_get(g, key), val, dbl, why, cap, sub))
        return false;
    }
    return true;
  }
  if (!json_equal((json_t *)g, (json_t *)w)) {
    snprintf(why, cap, "%s: differs", at);
    return false;
  }
  return true;
}

static int run_file(const char *path, int min_cases) {
  sk_jsonl in;
  sk_jsonl_open_at(&in, path);
  int cases = 0, failed = 0;
  json_t *rec;
  while ((rec = sk_jsonl_next(&in)) != NULL) {
    const char *name = json_string_value(json_object_get(rec, "name"));
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case(json_object_get(rec, "case"), &out, &e);
    cases++;
    char why[1024] = "";
    if (rc != 0) {
      snprintf(why, sizeof why, "eval failed: %s at %s: %s", sk_errname(rc), e.pointer, e.text);
    } else {
      json_t *got = json_loadb(out.data, out.len, 0, NULL);
      same(got, json_object_get(rec, "expected"), 0, why, sizeof why, "");
      json_decref(got);
    }
    if (why[0] && ++failed <= 10)
      fprintf(stderr, "FAIL %s: %s\n", name ? name : "?", why);
    sk_strbuf_free(&out);
    json_decref(rec);
  }
  sk_jsonl_close(&in);
  printf("%s: %d passed, %d failed (bit for bit, Euler read-backs included)\n", path, cases - failed, failed);
  ck_assert_int_ge(cases, min_cases);
  ck_assert_int_eq(failed, 0);
  return cases;
}

START_TEST(every_generated_bone_api_case_is_bit_exact_with_babylon) {
  const char *alt = getenv("SK_OPS_FILE");
  char path[1024];
  if (alt != NULL && alt[0] != '\0')
    run_file(alt, 1);
  else {
    run_file(sk_test_path("conformance/ops.jsonl", path, sizeof path), 300);
    /* gen_ops.mjs --mirror 1: mirrored and non-uniform mesh chains, world
     * rotations, ik (leaves of length 0 included) */
    run_file(sk_test_path("conformance/ops_mirror.jsonl", path, sizeof path), 300);
  }
}
END_TEST

/* Real assets through the glTF import, a clip sample per frame and one
 * controller update, against Babylon's loader and controllers
 * (tests/oracle/babylon_gltf_ctrl.mjs): every bone's world position at every
 * frame bit for bit as float32, the sign of zero included. */
static void real_asset(const char *rel) {
  char path[1024], dir[1024];
  sk_test_path(rel, path, sizeof path);
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  ck_assert_ptr_nonnull(slash);
  *slash = '\0';
  json_error_t je;
  json_t *rec = json_load_file(path, 0, &je);
  ck_assert_msg(rec != NULL, "%s: %s", path, je.text);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case_at(json_object_get(rec, "case"), dir, &out, &e);
  ck_assert_msg(rc == 0, "%s: %s at %s", rel, e.text, e.pointer);
  json_t *got = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL); /* "-0" keeps its sign */
  const json_t *order = json_object_get(got, "order"), *results = json_object_get(got, "results");
  const json_t *want = json_object_get(rec, "expected");
  ck_assert_int_eq(json_array_size(results), json_array_size(want));
  ck_assert_int_gt(json_array_size(want), 20);
  size_t numbers = 0;
  for (size_t f = 0; f < json_array_size(want); f++) {
    const json_t *pos = json_object_get(json_array_get(results, f), "positions");
    const json_t *w = json_array_get(want, f);
    ck_assert_int_eq(json_object_size(w), json_array_size(order));
    for (size_t k = 0; k < json_array_size(order); k++) {
      const json_t *wp = json_object_get(w, json_string_value(json_array_get(order, k)));
      ck_assert_ptr_nonnull(wp);
      for (size_t a = 0; a < 3; a++) {
        const float g = (float)json_number_value(json_array_get(pos, 3 * k + a));
        const float x = (float)json_number_value(json_array_get(wp, a));
        ck_assert_msg(memcmp(&g, &x, sizeof g) == 0, "%s frame %zu bone %s axis %zu: got %.9g, want %.9g", rel, f,
                      json_string_value(json_array_get(order, k)), a, (double)g, (double)x);
        numbers++;
      }
    }
  }
  printf("%s: %zu frames, %zu numbers bit for bit\n", rel, json_array_size(want), numbers);
  json_decref(got);
  json_decref(rec);
  sk_strbuf_free(&out);
}

START_TEST(foot_ik_on_fox_walk_matches_babylons_loader_and_controller) {
  real_asset("gltf/ctrl/fox-walk-foot-ik.json");
}
END_TEST

START_TEST(head_look_at_on_cesium_man_matches_babylons_loader_and_controller) {
  real_asset("gltf/ctrl/cesiumman-head-look-at.json");
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_ops");
  TCase *tc = tcase_create("validity");
  tcase_add_test(tc, unknown_bone_is_not_found_at_its_pointer);
  tcase_add_test(tc, zero_length_axis_is_refused);
  tcase_add_test(tc, singular_and_nonfinite_meshes_are_refused);
  tcase_add_test(tc, bad_fields_name_the_field);
  tcase_add_test(tc, ik_chains_without_what_babylon_needs_are_refused);
  suite_add_tcase(s, tc);
  tc = tcase_create("golden");
  tcase_add_test(tc, world_and_positions_cover_every_bone_in_order);
  tcase_add_test(tc, a_pose_with_ops_leaves_no_trace);
  tcase_add_test(tc, a_target_mesh_is_the_target_rounded_to_float32);
  suite_add_tcase(s, tc);
  tc = tcase_create("babylon");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_generated_bone_api_case_is_bit_exact_with_babylon);
  tcase_add_test(tc, foot_ik_on_fox_walk_matches_babylons_loader_and_controller);
  tcase_add_test(tc, head_look_at_on_cesium_man_matches_babylons_loader_and_controller);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
