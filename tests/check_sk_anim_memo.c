/* sk_anim_memo: an additive layer's keys made at first use and kept with
 * the clips are the keys the per-call path makes, byte for byte (so the
 * answers keep theirs: the animation conformance suites); the entry is
 * found again, counted in the budget and released with the clips, and
 * nothing is kept where the budget refuses, the slots are full or the memo
 * is off. */
#include "sk_anim.h"
#include "sk_anim_memo.h"
#include "sk_banim_add.h"
#include "sk_banim_blend.h"
#include "sk_budget.h"

#include "sk_testasset.h"
#include "sk_testutil.h"

static size_t clip_named(const sk_anim *a, const char *name) {
  size_t c;
  ck_assert_int_eq(sk_anim_find_clip(a, name, &c), 0);
  return c;
}

/* A Babylon-format skeleton and its clips from JSON text (new). */
static void parse_babylon(const char *text, sk_skeleton **s, sk_anim **a) {
  json_t *j = json_loads(text, 0, NULL);
  ck_assert_ptr_nonnull(j);
  sk_error e;
  sk_error_clear(&e);
  ck_assert_msg(sk_json_parse_skeleton_anim(j, "", 0, s, a, &e) == 0, "%s", e.text);
  json_decref(j);
}

START_TEST(gltf_keys_are_the_per_call_keys_and_are_kept_once) {
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  sk_budget b;
  sk_budget_init(&b, 0);
  sk_anim_memo_set_budget(a, &b);
  const size_t clip = clip_named(a, "Survey");
  const double *const *dv = sk_anim_memo_gltf(a, clip, 0.6);
  ck_assert_ptr_nonnull(dv);
  ck_assert_ptr_eq(sk_anim_memo_gltf(a, clip, 0.6), dv); /* found, not made again */
  ck_assert_uint_gt(sk_anim_memo_memory(a), 0);
  ck_assert_uint_eq(b.used, sk_anim_memo_memory(a));
  const sk_anim_clip *c = &a->clips[clip];
  size_t compared = 0;
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->path == SK_ANIM_MATRIX || ch->values == NULL) {
      ck_assert_ptr_null(dv[k]);
      continue;
    }
    double *own;
    ck_assert_int_eq(sk_anim__additive_values(ch, 0.6, &own), 0);
    const size_t n = ch->count * (ch->path == SK_ANIM_ROTATION ? 4u : 3u) * (ch->interp == SK_ANIM_CUBICSPLINE ? 3u : 1u);
    ck_assert_int_eq(memcmp(dv[k], own, n * sizeof *own), 0);
    free(own);
    compared++;
  }
  ck_assert_uint_gt(compared, 0);
  sk_anim_memo_set_off(a, true);
  ck_assert_ptr_null(sk_anim_memo_gltf(a, clip, 0.6));
  sk_anim_memo_set_off(a, false);
  sk_anim_destroy(a);
  ck_assert_uint_eq(b.used, 0); /* released with the clips */
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(nothing_is_kept_past_the_budget_or_the_slots) {
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  sk_budget tiny;
  sk_budget_init(&tiny, 64);
  sk_anim_memo_set_budget(a, &tiny);
  ck_assert_ptr_null(sk_anim_memo_gltf(a, 0, 0.6));
  ck_assert_uint_eq(tiny.used, 0);
  ck_assert_uint_eq(tiny.refused, 0); /* not an answer refused: nothing counted */
  ck_assert_uint_eq(sk_anim_memo_memory(a), 0);
  sk_anim_memo_set_budget(a, NULL);
  for (int k = 0; k < SK_ANIM_MEMO_SLOTS; k++)
    ck_assert_ptr_nonnull(sk_anim_memo_gltf(a, 0, 1 + k));
  ck_assert_ptr_null(sk_anim_memo_gltf(a, 0, 100)); /* full: the caller makes its own */
  ck_assert_ptr_nonnull(sk_anim_memo_gltf(a, 0, 3)); /* still found */
  ck_assert_ptr_null(sk_anim_memo_babylon(a, 0, 0.1)); /* not Babylon-format clips */
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* A Babylon-format layer kept at first use blends as one made per call. */
START_TEST(babylon_layer_blends_as_the_per_call_one) {
  /* two bones, b0's position keyed at 0 and 20, one range 5..20 */
  const char *text =
      "{\"bones\":[{\"name\":\"b0\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
      "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,"
      "\"loopBehavior\":1,\"keys\":[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},"
      "{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]}},"
      "{\"name\":\"b1\",\"parentBoneIndex\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1]}],"
      "\"ranges\":[{\"name\":\"Walk\",\"from\":5,\"to\":20}]}";
  sk_skeleton *s;
  sk_anim *a;
  parse_babylon(text, &s, &a);
  ck_assert_int_eq(sk_banim_add_check(a, 0, 0.2, s, "", NULL), 0);
  sk_anim_layer l[2] = {{.clip = 0, .time = 0.1, .weight = 0.7}, {.clip = 0, .time = 0.35, .weight = 0.5}};
  sk_anim_layer_ext x[2] = {{0}, {.additive = true, .reference = 0.2}};
  const size_t nb = s->count;
  sk_override *per_call = calloc(nb, sizeof *per_call), *kept = calloc(nb, sizeof *kept);
  size_t d1, d2;
  sk_anim_memo_set_off(a, true);
  ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, per_call, &d1), 0);
  sk_anim_memo_set_off(a, false);
  const sk_banim_add_layer *add = sk_anim_memo_babylon(a, 0, 0.2);
  ck_assert_ptr_nonnull(add);
  ck_assert_ptr_eq(sk_anim_memo_babylon(a, 0, 0.2), add);
  x[1].babylon_add = add;
  ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, kept, &d2), 0);
  ck_assert_uint_eq(d1, d2);
  ck_assert_int_eq(memcmp(per_call, kept, nb * sizeof *kept), 0);
  ck_assert(per_call[0].position[0] != 0); /* the additive layer did add something */
  x[1].babylon_add = NULL; /* the frame path finds it itself */
  ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, kept, &d2), 0);
  ck_assert_int_eq(memcmp(per_call, kept, nb * sizeof *kept), 0);
  free(per_call), free(kept);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* A masked additive layer plays the kept (every bone) layer with its mask
 * applied by the blend, frame by frame and over runs, with the bits of a
 * layer made per call with the mask: masked layers need no keys of their
 * own, so they keep the run path. */
START_TEST(a_masked_babylon_layer_plays_the_kept_keys_alike) {
  /* b0's position and b1's scaling keyed at 0 and 20, one range 5..20 */
  const char *text =
      "{\"bones\":[{\"name\":\"b0\",\"parentBoneIndex\":-1,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
      "\"animation\":{\"name\":\"p\",\"property\":\"position\",\"framePerSecond\":30,\"dataType\":1,"
      "\"loopBehavior\":1,\"keys\":[{\"frame\":0,\"values\":[0,0,0,null,[0,0,0]]},"
      "{\"frame\":20,\"values\":[3,0,0,[0,0,0]]}]}},"
      "{\"name\":\"b1\",\"parentBoneIndex\":0,\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,1,0,1],"
      "\"animation\":{\"name\":\"s\",\"property\":\"scaling\",\"framePerSecond\":30,\"dataType\":1,"
      "\"loopBehavior\":1,\"keys\":[{\"frame\":0,\"values\":[1,1,1]},{\"frame\":20,\"values\":[2,3,4]}]}}],"
      "\"ranges\":[{\"name\":\"Walk\",\"from\":5,\"to\":20}]}";
  sk_skeleton *s;
  sk_anim *a;
  parse_babylon(text, &s, &a);
  ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
  static const float masks[2][2] = {{0, 1}, {1, 0}};
  static const double refs[2] = {0, 0.2};
  for (int r = 0; r < 2; r++)
    for (int mk = 0; mk < 2; mk++) {
      sk_anim_layer l[2] = {{.clip = 0, .time = 0.1, .weight = 0.7}, {.clip = 0, .time = 0.35, .weight = 0.5}};
      sk_anim_layer_ext x[2] = {{0}, {.additive = true, .reference = refs[r], .bone_weights = masks[mk]}};
      sk_banim_add_layer made;
      ck_assert_int_eq(sk_banim_add_layer_make(a, 0, refs[r], masks[mk], &made), 0);
      ck_assert_uint_eq(made.count, 1); /* the mask left one bone's channel */
      x[1].babylon_add = &made;
      sk_override want[2], got[2];
      size_t d1, d2;
      ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, want, &d1), 0);
      const sk_banim_add_layer *kept = r == 0 ? sk_banim_add_kept_layer(a, 0) : sk_anim_memo_babylon(a, 0, refs[r]);
      ck_assert_ptr_nonnull(kept);
      ck_assert_uint_eq(kept->count, 2); /* every bone */
      x[1].babylon_add = kept;
      ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, got, &d2), 0);
      ck_assert_uint_eq(d1, d2);
      ck_assert_int_eq(memcmp(want, got, sizeof got), 0);
      x[1].babylon_add = NULL; /* the frame path finds the kept layer itself */
      ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, got, &d2), 0);
      ck_assert_int_eq(memcmp(want, got, sizeof got), 0);
      /* a run of 3 frames over the kept layer, each against a per-call frame */
      x[1].babylon_add = kept;
      sk_banim_blend_ctx *c;
      ck_assert_int_eq(sk_banim_blend_open(a, s, l, x, 2, &c), 0);
      ck_assert_uint_gt(sk_banim_blend_run_max(c), 1);
      const double times[6] = {0.1, 0.35, 0.2, 0.45, 0.3, 0.55};
      sk_override run[3][2], *outs[3] = {run[0], run[1], run[2]};
      size_t driven[3];
      ck_assert_int_eq(sk_banim_blend_run(c, l, times, 3, outs, driven), 0);
      x[1].babylon_add = &made;
      for (int f = 0; f < 3; f++) {
        l[0].time = times[2 * f], l[1].time = times[2 * f + 1];
        ck_assert_int_eq(sk_banim_blend(a, s, l, x, 2, want, &d1), 0);
        ck_assert_uint_eq(driven[f], d1);
        ck_assert_msg(memcmp(want, run[f], sizeof want) == 0, "reference %g, mask %d, frame %d", refs[r], mk, f);
      }
      sk_banim_blend_close(c);
      sk_banim_add_layer_close(&made);
    }
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_anim_memo");
  TCase *tc = tcase_create("memo");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, gltf_keys_are_the_per_call_keys_and_are_kept_once);
  tcase_add_test(tc, nothing_is_kept_past_the_budget_or_the_slots);
  tcase_add_test(tc, babylon_layer_blends_as_the_per_call_one);
  tcase_add_test(tc, a_masked_babylon_layer_plays_the_kept_keys_alike);
  suite_add_tcase(s, tc);
  return sk_test_run(s);
}
