/* sk_banim_blend: Babylon-format clips as weighted layers. The conformance
 * test runs tests/conformance/banim_layers.jsonl (tests/oracle/
 * gen_banim_layers.py, answered by Babylon: beginWeightedAnimation per
 * layer, goToFrame, the late animation bindings) through `skinner eval`
 * and requires every number bit for bit; the unit tests pin each rule of
 * the blend on values whose results are exact. */
#include "sk_anim.h"
#include "sk_anim_math.h"
#include "sk_banim_blend.h"
#include "sk_eval.h"
#include "sk_evalcases.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_testutil.h"

START_TEST(every_weighted_babylon_layer_case_agrees_bit_for_bit) {
  sk_evalcases_run("conformance/banim_layers.jsonl", 50, 60);
}
END_TEST

/* Two bones: b0 at (2, 0, 0), b1 under it at (0, 1, 0); range "A" (frames
 * 0-10) keys b0's position at (6, 0, 0) and b1's rotation at
 * (0, 0.6, 0, 0.8); range "B" (frames 20-30) keys b0's position at
 * (10, 0, 0) and leaves b1 alone. */
static void two_bones(sk_skeleton **s, sk_anim **a) {
  static const char *const text =
      "{\"bones\": ["
      "{\"name\": \"b0\", \"parentBoneIndex\": -1, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 2,0,0,1], \"animations\": ["
      " {\"name\": \"p\", \"property\": \"position\", \"framePerSecond\": 10, \"dataType\": 1, \"keys\": ["
      "  {\"frame\": 0, \"values\": [6, 0, 0]}, {\"frame\": 10, \"values\": [6, 0, 0]},"
      "  {\"frame\": 20, \"values\": [10, 0, 0]}, {\"frame\": 30, \"values\": [10, 0, 0]}]}]},"
      "{\"name\": \"b1\", \"parentBoneIndex\": 0, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1], \"animations\": ["
      " {\"name\": \"r\", \"property\": \"rotationQuaternion\", \"framePerSecond\": 10, \"dataType\": 2, \"keys\": ["
      "  {\"frame\": 0, \"values\": [0, 0.6, 0, 0.8]}, {\"frame\": 10, \"values\": [0, 0.6, 0, 0.8]}]}]}],"
      " \"ranges\": [{\"name\": \"A\", \"from\": 0, \"to\": 10}, {\"name\": \"B\", \"from\": 20, \"to\": 30}]}";
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_error e;
  sk_error_clear(&e);
  ck_assert_msg(sk_json_parse_skeleton_anim(j, "", 0, s, a, &e) == 0, "%s at %s", e.text, e.pointer);
  json_decref(j);
}

/* Under a total weight of 1, the bone's current value makes up the rest:
 * position current * (1 - w) + value * w, rotation slerp(current, value,
 * w); a bone the layers do not drive is not in the answer. */
START_TEST(a_total_under_one_mixes_in_the_current_value) {
  sk_skeleton *s;
  sk_anim *a;
  two_bones(&s, &a);
  size_t A;
  ck_assert_int_eq(sk_anim_find_clip(a, "A", &A), 0);
  sk_anim_layer l = {.clip = A, .time = 0.5, .weight = 0.25};
  sk_override o[2];
  size_t driven;
  ck_assert_int_eq(sk_banim_blend(a, s, &l, NULL, 1, o, &driven), 0);
  ck_assert_uint_eq(driven, 2);
  ck_assert_uint_eq(o[0].mask, SK_OVERRIDE_POSITION);
  ck_assert(o[0].position[0] == 3.0 && o[0].position[1] == 0 && o[0].position[2] == 0); /* 2 * 0.75 + 6 * 0.25 */
  ck_assert_uint_eq(o[1].mask, SK_OVERRIDE_ROTATION);
  const double id[4] = {0, 0, 0, 1}, key[4] = {0, 0.6, 0, 0.8};
  double want[4];
  sk_anim__quat_slerp(id, key, 0.25, want);
  ck_assert_int_eq(memcmp(o[1].rotation, want, sizeof want), 0);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* Weights are clamped to [0, 1] (Animatable.weight) and, adding up to 1
 * or more, normalised: 3 counts as 1, so A and B at 3 and 1 are half and
 * half; -2 counts as 0. */
START_TEST(weights_are_clamped_then_normalised) {
  sk_skeleton *s;
  sk_anim *a;
  two_bones(&s, &a);
  size_t A, B;
  ck_assert_int_eq(sk_anim_find_clip(a, "A", &A), 0);
  ck_assert_int_eq(sk_anim_find_clip(a, "B", &B), 0);
  sk_anim_layer l[2] = {{.clip = A, .time = 0.5, .weight = 3}, {.clip = B, .time = 0.5, .weight = 1}};
  sk_override o[2];
  size_t driven;
  ck_assert_int_eq(sk_banim_blend(a, s, l, NULL, 2, o, &driven), 0);
  ck_assert(o[0].position[0] == 8.0); /* 6 / 2 + 10 / 2 */
  ck_assert_uint_eq(o[1].mask, SK_OVERRIDE_ROTATION); /* B does not drive b1 */
  l[0].weight = -2; /* clamped to 0: B alone, at its full weight */
  ck_assert_int_eq(sk_banim_blend(a, s, l, NULL, 2, o, &driven), 0);
  ck_assert(o[0].position[0] == 10.0);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* A mask of weight 0 on a bone leaves that layer's animation of it
 * unstarted (beginAnimation's targetMask): the bone is not driven. */
START_TEST(a_masked_bone_is_left_out_of_its_layer) {
  sk_skeleton *s;
  sk_anim *a;
  two_bones(&s, &a);
  size_t A;
  ck_assert_int_eq(sk_anim_find_clip(a, "A", &A), 0);
  sk_anim_layer l = {.clip = A, .time = 0.5, .weight = 1};
  float w[2] = {1, 0};
  sk_anim_layer_ext x = {.bone_weights = w};
  sk_override o[2];
  size_t driven;
  ck_assert_int_eq(sk_banim_blend(a, s, &l, &x, 1, o, &driven), 0);
  ck_assert_uint_eq(driven, 1);
  ck_assert(o[0].position[0] == 6.0);
  ck_assert_uint_eq(o[1].mask, 0);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_banim_blend");
  TCase *c = tcase_create("blend");
  tcase_add_test(c, a_total_under_one_mixes_in_the_current_value);
  tcase_add_test(c, weights_are_clamped_then_normalised);
  tcase_add_test(c, a_masked_bone_is_left_out_of_its_layer);
  suite_add_tcase(s, c);
  TCase *k = tcase_create("conformance");
  tcase_set_timeout(k, 120);
  tcase_add_test(k, every_weighted_babylon_layer_case_agrees_bit_for_bit);
  suite_add_tcase(s, k);
  return sk_test_run(s);
}
