/* sk_animops: a layer's "additive"/"reference"/"mask" (each refusal with
 * its code and pointer; a masked-out additive layer changes nothing) and the
 * copyAnimationRange op's own checks. The Babylon agreement of both is in
 * tests/check_sk_banim (conformance/layers.jsonl, conformance/anim.jsonl). */
#include "sk_animops.h"
#include "sk_eval.h"
#include "sk_json.h"
#include "sk_testutil.h"

/* ---- layers: refusals ------------------------------------------------------ */

static void expect_layer_error(const char *layer, int code, const char *pointer) {
  char text[2048], base[1024];
  snprintf(text, sizeof text,
           "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":["
           "{\"animation\":\"Walk\",\"time\":0.1},%s]}]}",
           layer);
  json_t *c = json_loads(text, 0, NULL);
  ck_assert_msg(c != NULL, "bad test JSON %s", text);
  sk_strbuf out = {0};
  sk_error e;
  sk_error_clear(&e);
  int rc = sk_eval_case_at(c, sk_test_path("", base, sizeof base), &out, &e);
  ck_assert_msg(rc == code, "%s: want %s, got %s (%s at %s)", layer, sk_errname(code), sk_errname(rc), e.text, e.pointer);
  ck_assert_str_eq(e.pointer, pointer);
  sk_strbuf_free(&out);
  json_decref(c);
}

START_TEST(bad_additive_layers_and_masks_are_refused_with_a_pointer) {
  expect_layer_error("{\"animation\":\"Run\",\"reference\":0.1}", SK_ETYPE, "/ops/0/layers/1/reference");
  expect_layer_error("{\"animation\":\"Run\",\"additive\":true,\"reference\":-1}", SK_ERANGE,
                     "/ops/0/layers/1/reference");
  expect_layer_error("{\"animation\":\"Run\",\"additive\":1}", SK_ETYPE, "/ops/0/layers/1/additive");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":{\"bone\":\"head\"}}", SK_ENOTFOUND,
                     "/ops/0/layers/1/mask/bone");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":{\"include\":[\"b_Hip_01\",\"tail\"]}}", SK_ENOTFOUND,
                     "/ops/0/layers/1/mask/include/1");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":{\"weights\":{\"b_Hip_01\":1.5}}}", SK_ERANGE,
                     "/ops/0/layers/1/mask/weights/b_Hip_01");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":{\"bone\":\"b_Hip_01\",\"subtree\":\"yes\"}}", SK_ETYPE,
                     "/ops/0/layers/1/mask/subtree");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":{\"bones\":[]}}", SK_EUNKNOWN, "/ops/0/layers/1/mask/bones");
  expect_layer_error("{\"animation\":\"Run\",\"mask\":[]}", SK_ETYPE, "/ops/0/layers/1/mask");
}
END_TEST

/* A mask that keeps no bone of the additive layer, or weight 0 everywhere,
 * leaves the weighted pose exactly as it is. */
START_TEST(an_additive_layer_masked_out_changes_nothing) {
  char base[1024];
  sk_test_path("", base, sizeof base);
  const char *texts[2] = {
      "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":["
      "{\"animation\":\"Walk\",\"time\":0.1}]}]}",
      "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":["
      "{\"animation\":\"Walk\",\"time\":0.1},{\"animation\":\"Run\",\"time\":0.3,\"additive\":true,"
      "\"reference\":0.2,\"mask\":{\"default\":0}}]}]}"};
  sk_strbuf out[2] = {{0}, {0}};
  for (int i = 0; i < 2; i++) {
    json_t *c = json_loads(texts[i], 0, NULL);
    sk_error e;
    sk_error_clear(&e);
    ck_assert_int_eq(sk_eval_case_at(c, base, &out[i], &e), 0);
    json_decref(c);
  }
  ck_assert_str_eq(out[0].data, out[1].data);
  sk_strbuf_free(&out[0]);
  sk_strbuf_free(&out[1]);
}
END_TEST

/* Weighted layers whose weights are all 0, beside an additive layer, are
 * no weighted layer: the additive one goes on the rest pose, as alone
 * (and as Babylon mixes the current value in for a total weight of 0).
 * The blend once divided 0 by 0 there, and the answer was a 422 "not
 * finite"; one pose and a frame range (sk_layers' runs) alike. */
START_TEST(weighted_layers_of_weight_0_beside_an_additive_one_are_none) {
  char base[1024];
  sk_test_path("", base, sizeof base);
  static const char *const head = "{\"skeleton\":{\"gltf\":\"data/Fox.glb\"},\"ops\":[{\"op\":\"pose\",\"layers\":[";
  static const char *const add = "{\"animation\":\"Survey\",\"additive\":true,\"weight\":0.5,\"time\":0.3}]";
  static const char *const tail[2] = {"}]}", ",\"from\":0,\"to\":0.5,\"fps\":30}]}"};
  for (int range = 0; range < 2; range++) {
    char texts[2][512];
    snprintf(texts[0], sizeof texts[0], "%s{\"animation\":\"Walk\",\"weight\":0,\"time\":0.1},%s%s", head, add,
             tail[range]);
    snprintf(texts[1], sizeof texts[1], "%s%s%s", head, add, tail[range]);
    sk_strbuf out[2] = {{0}, {0}};
    for (int i = 0; i < 2; i++) {
      json_t *c = json_loads(texts[i], 0, NULL);
      ck_assert_msg(c != NULL, "bad test JSON %s", texts[i]);
      sk_error e;
      sk_error_clear(&e);
      ck_assert_msg(sk_eval_case_at(c, base, &out[i], &e) == 0, "%s: %s at %s", texts[i], e.text, e.pointer);
      json_decref(c);
    }
    ck_assert_str_eq(out[0].data, out[1].data);
    sk_strbuf_free(&out[0]);
    sk_strbuf_free(&out[1]);
  }
}
END_TEST

START_TEST(copy_op_fields_are_checked) {
  const char *texts[4] = {
      "{\"skeleton\":{\"bones\":[{\"name\":\"a\"}]},\"ops\":[{\"op\":\"copyAnimationRange\",\"from\":{},\"name\":\"W\"}]}",
      "{\"skeleton\":{\"bones\":[{\"name\":\"a\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]},"
      "\"ops\":[{\"op\":\"copyAnimationRange\",\"name\":\"W\"}]}",
      "{\"skeleton\":{\"bones\":[{\"name\":\"a\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]},"
      "\"ops\":[{\"op\":\"copyAnimationRange\",\"from\":{},\"name\":\"W\",\"rescale\":1}]}",
      "{\"skeleton\":{\"bones\":[{\"name\":\"a\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}]},"
      "\"ops\":[{\"op\":\"copyAnimationRange\",\"from\":{\"bones\":[]},\"name\":\"W\",\"extra\":1}]}"};
  const int codes[4] = {SK_EUNSUPPORTED, SK_EMISSING, SK_ETYPE, SK_EUNKNOWN};
  const char *ptrs[4] = {"/ops/0", "/ops/0/from", "/ops/0/rescale", "/ops/0/extra"};
  for (int i = 0; i < 4; i++) {
    json_t *c = json_loads(texts[i], 0, NULL);
    ck_assert_ptr_nonnull(c);
    sk_strbuf out = {0};
    sk_error e;
    sk_error_clear(&e);
    int rc = sk_eval_case(c, &out, &e);
    ck_assert_msg(rc == codes[i], "case %d: want %s, got %s (%s at %s)", i, sk_errname(codes[i]), sk_errname(rc), e.text,
                  e.pointer);
    ck_assert_str_eq(e.pointer, ptrs[i]);
    sk_strbuf_free(&out);
    json_decref(c);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_animops");
  TCase *v = tcase_create("validity");
  tcase_add_test(v, bad_additive_layers_and_masks_are_refused_with_a_pointer);
  tcase_add_test(v, copy_op_fields_are_checked);
  suite_add_tcase(s, v);
  TCase *g = tcase_create("golden");
  tcase_add_test(g, an_additive_layer_masked_out_changes_nothing);
  tcase_add_test(g, weighted_layers_of_weight_0_beside_an_additive_one_are_none);
  suite_add_tcase(s, g);
  return sk_test_run(s);
}
