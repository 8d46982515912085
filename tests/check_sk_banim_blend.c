/* sk_banim_blend: Babylon-format clips as weighted layers. The conformance
 * test runs tests/conformance/banim_layers.jsonl (tests/oracle/
 * gen_banim_layers.py, answered by Babylon: beginWeightedAnimation per
 * layer, goToFrame, the late animation bindings) through `skinner eval`
 * and requires every number bit for bit; the unit tests pin each rule of
 * the blend on values whose results are exact. */
#include "sk_anim.h"
#include "sk_anim_math.h"
#include "sk_banim_add.h"
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

/* 160 frame times: forward in small steps, then anywhere, then one frame again. */
static double frame_time(int k, uint64_t *rng) {
  if (k >= 80 && k < 159) {
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*rng >> 11) / 9007199254740992.0 * 4 - 1;
  }
  return k < 80 ? k / 37.0 - 0.2 : k == 159 ? 0.5 : 0;
}

/* One context over 160 frames, frame by frame (sk_banim_blend_frame) or
 * in runs of 1, 7 and as many as it takes (sk_banim_blend_run), with a
 * sampler of every clip (`sampled`: the layers whose clips it builds go
 * through it) or without, each frame byte for byte as sk_banim_blend
 * alone. Returns the frames compared. */
static size_t context_agrees(const sk_anim *a, const sk_skeleton *s, sk_anim_layer *l, const sk_anim_layer_ext *x,
                             size_t nl, bool runs, bool sampled, const char *what) {
  const size_t nb = s->count;
  sk_banim_blend_ctx *c;
  sk_sampler *smp = NULL;
  if (sampled)
    ck_assert_int_eq(sk_sampler_create(a, &smp), 0);
  ck_assert_int_eq(sk_banim_blend_open_sampled(a, s, l, x, nl, smp, &c), 0);
  const size_t max = sk_banim_blend_run_max(c), sizes[3] = {1, 7, max};
  ck_assert(max >= 1 && max <= SK_ANIM_RUN_MAX);
  sk_override *got = malloc(SK_ANIM_RUN_MAX * nb * sizeof *got), *want = malloc(nb * sizeof *want);
  sk_override *frames[SK_ANIM_RUN_MAX];
  double times[SK_ANIM_RUN_MAX * 3];
  size_t driven[SK_ANIM_RUN_MAX], compared = 0;
  uint64_t rng = 99;
  for (int k = 0, r = 0; k < 160; r++) {
    size_t m = runs ? sizes[r % 3] : 1;
    m = m < max ? m : max;
    m = m < (size_t)(160 - k) ? m : (size_t)(160 - k);
    for (size_t f = 0; f < m; f++) {
      const double t = frame_time(k + (int)f, &rng);
      frames[f] = got + f * nb;
      for (size_t i = 0; i < nl; i++)
        times[f * nl + i] = t + 0.1 * (double)i;
    }
    if (runs) {
      ck_assert_int_eq(sk_banim_blend_run(c, l, times, m, frames, driven), 0);
    } else {
      for (size_t i = 0; i < nl; i++)
        l[i].time = times[i];
      ck_assert_int_eq(sk_banim_blend_frame(c, l, got, driven), 0);
    }
    for (size_t f = 0; f < m; f++) {
      size_t d;
      for (size_t i = 0; i < nl; i++)
        l[i].time = times[f * nl + i];
      ck_assert_int_eq(sk_banim_blend(a, s, l, x, nl, want, &d), 0);
      ck_assert_uint_eq(driven[f], d);
      ck_assert_msg(memcmp(frames[f], want, nb * sizeof *want) == 0,
                    "%s: frame %d (t=%.17g) in a run of %zu, sampler %d", what, k + (int)f, l[0].time, m, sampled);
      compared++;
    }
    k += (int)m;
  }
  sk_banim_blend_close(c);
  free(got);
  free(want);
  return compared;
}

/* A context blending frames, one at a time or in runs (its cursors moving
 * forward, back and anywhere), gives each frame's overrides byte for byte
 * as sk_banim_blend alone: on the skeletons of conformance/banim_layers.jsonl
 * and Fox's Walk in Babylon's format, two or three weighted layers of
 * their clips, with and without a mask, with weights adding up to more
 * and to less than 1, and with an additive layer made once (the run's
 * path) or per frame (the frame-by-frame path). */
START_TEST(a_context_blends_frames_as_single_calls) {
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/banim_layers.jsonl");
  size_t len, frames = 0, additive = 0, built = 0;
  unsigned char *text = sk_test_read_asset("fox-walk-babylon.json", &len);
  json_t *fox = json_loadb((const char *)text, len, 0, NULL), *rec;
  free(text);
  ck_assert_ptr_nonnull(fox);
  static const double weights[2][3] = {{0.3, 0.9, 0.5}, {0.2, 0.3, 0.1}};
  while ((rec = sk_jsonl_next(&in)) != NULL || fox != NULL) {
    const json_t *j = rec != NULL ? json_object_get(json_object_get(rec, "case"), "skeleton") : fox;
    sk_skeleton *s;
    sk_anim *a;
    ck_assert_int_eq(sk_json_parse_skeleton_anim(j, "", 0, &s, &a, NULL), 0);
    const size_t nb = s->count, nl = a != NULL && a->clip_count > 1 ? 3 : 2;
    float *mask = malloc(nb * sizeof *mask);
    for (size_t b = 0; b < nb; b++)
      mask[b] = b % 3 == 1 ? 0.0f : 1.0f;
    sk_sampler *smp = NULL;
    ck_assert(a == NULL || sk_sampler_create(a, &smp) == 0);
    for (size_t k = 0; a != NULL && k < a->clip_count && k < 3;
         k++) { /* the clips a sampler builds: their layers take it */
      const sk_anim_layer one = {.clip = k, .weight = 1};
      sk_sample_ctx *probe = NULL;
      if (sk_sample_ctx_create(smp, &one, 1, &probe) == 0)
        built++;
      sk_sample_ctx_destroy(probe);
    }
    sk_sampler_destroy(smp);
    for (int v = 0; a != NULL && v < 6; v++) {
      const bool masked = v & 1, under = v & 2, add = v & 4;
      sk_anim_layer l[3];
      sk_anim_layer_ext x[3] = {{0}, {0}, {0}};
      for (size_t i = 0; i < nl; i++) {
        l[i] = (sk_anim_layer){.clip = i % a->clip_count, .weight = weights[under][i], .loop = i != 1};
        x[i].bone_weights = masked && i == 1 ? mask : NULL;
      }
      sk_banim_add_layer made = {0};
      if (add) { /* layer 1 additive against its clip's start, where Babylon can make it so */
        x[1].additive = true;
        if (sk_banim_add_check(a, l[1].clip, 0, s, "", NULL) != 0)
          continue;
        ck_assert_int_eq(sk_banim_add_layer_make(a, l[1].clip, 0, x[1].bone_weights, &made), 0);
        x[1].babylon_add = &made;
        additive++;
      }
      char what[64];
      snprintf(what, sizeof what, "masked %d, under 1 %d, additive %d", masked, under, add);
      frames += context_agrees(a, s, l, x, nl, false, false, what);
      frames += context_agrees(a, s, l, x, nl, true, false, what);
      frames += context_agrees(a, s, l, x, nl, true, true, what);
      if (add) { /* keys made per frame: the context blends frame by frame */
        x[1].babylon_add = NULL;
        frames += context_agrees(a, s, l, x, nl, true, true, what);
      }
      sk_banim_add_layer_close(&made);
    }
    free(mask);
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
    if (rec != NULL) {
      json_decref(rec);
    } else {
      json_decref(fox);
      fox = NULL;
    }
  }
  sk_jsonl_close(&in);
  ck_assert_uint_ge(frames, 60 * 10 * 160);
  ck_assert_uint_ge(additive, 10);
  ck_assert_uint_ge(built, 5); /* Fox's Walk and the conformance clips that only lerp and slerp */
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_banim_blend");
  TCase *c = tcase_create("blend");
  tcase_add_test(c, a_total_under_one_mixes_in_the_current_value);
  tcase_add_test(c, weights_are_clamped_then_normalised);
  tcase_add_test(c, a_masked_bone_is_left_out_of_its_layer);
  tcase_add_test(c, a_context_blends_frames_as_single_calls);
  suite_add_tcase(s, c);
  TCase *k = tcase_create("conformance");
  tcase_set_timeout(k, 120);
  tcase_add_test(k, every_weighted_babylon_layer_case_agrees_bit_for_bit);
  suite_add_tcase(s, k);
  return sk_test_run(s);
}
