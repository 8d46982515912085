/* sk_layers: a context's runs of glTF layers with bone masks and additive
 * layers give, frame for frame, the bytes of sk_anim_sample_layers_ext
 * (which the animation conformance suites hold to Babylon's answers). */
#include "sk_anim.h"
#include "sk_anim_math.h"
#include "sk_layers.h"
#include "sk_sample.h"

#include "sk_testasset.h"
#include "sk_testutil.h"

/* 150 frame times: forward in small steps, then anywhere (before the
 * clips and far past them too), then one frame again. */
static double frame_time(int k, uint64_t *rng) {
  if (k >= 70 && k < 149) {
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*rng >> 11) / 9007199254740992.0 * 6 - 1;
  }
  return k < 70 ? k / 41.0 - 0.1 : 0.37;
}

/* One context over 150 frames in runs of 1, 5 and as many as it takes,
 * with a sampler of every clip or without, each frame byte for byte as
 * sk_anim_sample_layers_ext. Returns the frames compared. */
static size_t runs_agree(const sk_anim *a, sk_anim_layer *l, const sk_anim_layer_ext *x, size_t nl, bool sampled,
                         const char *what) {
  const size_t nb = a->bone_count, frame = nb * SK_ANIM_TRS;
  sk_sampler *smp = NULL;
  if (sampled)
    ck_assert_int_eq(sk_sampler_create(a, &smp), 0);
  sk_layers_ctx *c;
  ck_assert_int_eq(sk_layers_open(a, l, x, nl, smp, &c), 0);
  ck_assert_uint_gt(sk_layers_memory(c), 0);
  const size_t max = sk_layers_run_max(c), sizes[3] = {1, 5, max};
  ck_assert(max >= 1 && max <= SK_ANIM_RUN_MAX);
  double *got = malloc(max * frame * sizeof *got), *want = malloc(frame * sizeof *want);
  double *scratch = malloc(frame * sizeof *scratch), *times = malloc(max * nl * sizeof *times);
  uint64_t rng = 7;
  size_t compared = 0;
  for (int k = 0, r = 0; k < 150; r++) {
    size_t m = sizes[r % 3] < max ? sizes[r % 3] : max;
    m = m < (size_t)(150 - k) ? m : (size_t)(150 - k);
    for (size_t f = 0; f < m; f++) {
      const double t = frame_time(k + (int)f, &rng);
      for (size_t i = 0; i < nl; i++)
        times[f * nl + i] = t + 0.13 * (double)i;
    }
    sk_layers_run(c, times, m, got);
    for (size_t f = 0; f < m; f++) {
      for (size_t i = 0; i < nl; i++)
        l[i].time = times[f * nl + i];
      ck_assert_int_eq(sk_anim_sample_layers_ext(a, l, x, nl, want, scratch), 0);
      ck_assert_msg(memcmp(got + f * frame, want, frame * sizeof *want) == 0,
                    "%s: frame %d (t=%.17g) in a run of %zu, sampler %d", what, k + (int)f, l[0].time, m, sampled);
      compared++;
    }
    k += (int)m;
  }
  sk_layers_close(c);
  free(got), free(want), free(scratch), free(times);
  return compared;
}

/* Every glTF test asset with clips: two weighted layers, the second
 * masked (weights 0, 0.5 and 1 by bone); a weighted layer under an
 * additive one (fractional bone weights on it too); two additive layers
 * alone (on the rest pose); three weighted layers, one of weight 0 and
 * one looping; a weighted layer of weight 0 beside an additive one. */
START_TEST(runs_give_sk_anim_sample_layers_ext_bytes) {
  static const char *const assets[] = {"Fox.glb", "mannequiny-0.3.0.glb", "CesiumMan.glb", "RobotExpressive.glb",
                                       "gltf/rig65.gltf"};
  size_t frames = 0;
  for (size_t as = 0; as < sizeof assets / sizeof assets[0]; as++) {
    sk_skeleton *s;
    sk_anim *a;
    sk_test_import_asset(assets[as], NULL, &s, &a);
    ck_assert_ptr_nonnull(a);
    const size_t nb = a->bone_count, nc = a->clip_count;
    float *mask = malloc(nb * sizeof *mask);
    for (size_t b = 0; b < nb; b++)
      mask[b] = b % 3 == 0 ? 0.5f : b % 3 == 1 ? 0.0f : 1.0f;
    for (int v = 0; v < 5; v++) {
      sk_anim_layer l[3];
      sk_anim_layer_ext x[3] = {{0}, {0}, {0}};
      size_t nl = v == 3 ? 3 : 2;
      for (size_t i = 0; i < nl; i++)
        l[i] = (sk_anim_layer){.clip = (i + (size_t)v) % nc, .weight = 0.4 + 0.3 * (double)i, .loop = i == 1};
      if (v == 0)
        x[1].bone_weights = mask;
      if (v == 1)
        x[1] = (sk_anim_layer_ext){.additive = true, .reference = 0.2, .bone_weights = mask};
      if (v == 2)
        x[0].additive = x[1].additive = true, x[1].reference = 0.05;
      if (v == 3)
        l[1].weight = 0;
      if (v == 4) /* a weighted layer of weight 0 beside an additive one: no weighted layer */
        l[0].weight = 0, x[1].additive = true;
      for (int sampled = 0; sampled < 2; sampled++) {
        char what[96];
        snprintf(what, sizeof what, "%s, case %d", assets[as], v);
        frames += runs_agree(a, l, x, nl, sampled, what);
      }
    }
    free(mask);
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
  }
  ck_assert_uint_eq(frames, 5 * 5 * 2 * 150);
}
END_TEST

/* A layer's bone weights, computed here the plain way (the rest TRS lerped
 * and, by the scalar sk_anim__quat_slerp, slerped towards the sampled clip
 * by each bone's weight): what one frame of sk_anim_sample_layers_ext and
 * every frame of a context's run give, byte for byte. They share the mask
 * step (sk_anim__apply_bone_weights), so this holds it to its meaning. */
START_TEST(a_mask_lerps_and_slerps_from_the_rest_pose) {
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  const size_t nb = a->bone_count, frame = nb * SK_ANIM_TRS;
  float *mask = malloc(nb * sizeof *mask);
  for (size_t b = 0; b < nb; b++)
    mask[b] = b % 4 == 0 ? 0.5f : b % 4 == 1 ? 0.0f : b % 4 == 2 ? 0.25f : 1.0f;
  sk_anim_layer l = {.clip = 1, .weight = 1, .loop = true};
  const sk_anim_layer_ext x = {.bone_weights = mask};
  double *want = malloc(frame * sizeof *want), *got = malloc(SK_ANIM_RUN_MAX * frame * sizeof *got);
  double *scratch = malloc(frame * sizeof *scratch), times[SK_ANIM_RUN_MAX];
  sk_layers_ctx *c;
  ck_assert_int_eq(sk_layers_open(a, &l, &x, 1, NULL, &c), 0);
  const size_t m = sk_layers_run_max(c) < 9 ? sk_layers_run_max(c) : 9;
  for (size_t f = 0; f < m; f++)
    times[f] = 0.07 * (double)f;
  sk_layers_run(c, times, m, got);
  for (size_t f = 0; f < m; f++) {
    sk_anim_sample(a, l.clip, times[f], l.loop, want);
    for (size_t b = 0; b < nb; b++) {
      const double w = mask[b], *r = a->rest + b * SK_ANIM_TRS;
      double *t = want + b * SK_ANIM_TRS;
      if (w == 0)
        memcpy(t, r, SK_ANIM_TRS * sizeof *t);
      else if (w != 1) {
        for (int j = 0; j < 3; j++) {
          t[j] = r[j] + (t[j] - r[j]) * w;
          t[7 + j] = r[7 + j] + (t[7 + j] - r[7 + j]) * w;
        }
        sk_anim__quat_slerp(r + 3, t + 3, w, t + 3);
      }
    }
    ck_assert_msg(memcmp(got + f * frame, want, frame * sizeof *want) == 0, "run, frame %zu", f);
    l.time = times[f];
    ck_assert_int_eq(sk_anim_sample_layers_ext(a, &l, &x, 1, got, scratch), 0);
    ck_assert_msg(memcmp(got, want, frame * sizeof *want) == 0, "one frame at %g", times[f]);
  }
  sk_layers_close(c);
  free(mask), free(want), free(got), free(scratch);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* What sk_anim_sample_layers_ext refuses, a context refuses at open:
 * weights negative, non-finite or all 0, a clip out of range; and
 * Babylon-format clips are not its to blend. */
START_TEST(refusals_match_the_per_frame_blend) {
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  const double bad[] = {-1, NAN, INFINITY, 0};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    sk_anim_layer l[2] = {{.clip = 0, .weight = bad[k]}, {.clip = 1, .weight = 0}};
    sk_layers_ctx *c = NULL;
    ck_assert_int_eq(sk_layers_open(a, l, NULL, 2, NULL, &c), SK_ERANGE);
    ck_assert_ptr_null(c);
    double trs[SK_ANIM_TRS * 64], scratch[SK_ANIM_TRS * 64];
    ck_assert_uint_le(a->bone_count, 64);
    ck_assert_int_eq(sk_anim_sample_layers_ext(a, l, NULL, 2, trs, scratch), SK_ERANGE);
  }
  sk_anim_layer one = {.clip = a->clip_count, .weight = 1};
  sk_layers_ctx *c = NULL;
  ck_assert_int_eq(sk_layers_open(a, &one, NULL, 1, NULL, &c), SK_ERANGE);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* Additive layers of clip 0 (reference 0), one more than the keys of
 * SK_LAYERS_KEEP_KEYS hold; *l and *x new (free). Returns how many. */
static size_t budget_layers(const sk_anim *a, sk_anim_layer **l, sk_anim_layer_ext **x) {
  size_t keys = 0;
  for (size_t k = 0; k < a->clips[0].channel_count; k++)
    keys += a->clips[0].channels[k].count;
  const size_t n = SK_LAYERS_KEEP_KEYS / keys + 1;
  *l = calloc(n, sizeof **l);
  *x = calloc(n, sizeof **x);
  for (size_t i = 0; i < n; i++) {
    (*l)[i] = (sk_anim_layer){.clip = 0, .weight = 0.01};
    (*x)[i].additive = true;
  }
  return n;
}

/* Additive layers whose keys would add up past SK_LAYERS_KEEP_KEYS are
 * declined (the pose parser then blends frame by frame); one fewer layer
 * is taken. */
START_TEST(additive_keys_past_the_budget_are_declined) {
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  sk_anim_layer *l;
  sk_anim_layer_ext *x;
  const size_t n = budget_layers(a, &l, &x);
  sk_layers_ctx *c = NULL;
  ck_assert_int_eq(sk_layers_open(a, l, x, n, NULL, &c), SK_ETOOBIG);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(sk_layers_open(a, l, x, n - 1, NULL, &c), 0);
  sk_layers_close(c);
  free(l);
  free(x);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

/* The keys made additive once (sk_anim_additive_share, as an upload does)
 * give, for reference 0 (and -0), the bytes of keys made per call: on the
 * frame path and in a context's runs, on every asset. A context over them
 * makes none of its own, so the key budget no longer declines those
 * layers; other references still make theirs. */
START_TEST(additive_keys_made_at_upload_give_the_same_bytes) {
  static const char *const assets[] = {"Fox.glb", "CesiumMan.glb", "RobotExpressive.glb", "gltf/rig65.gltf"};
  for (size_t as = 0; as < sizeof assets / sizeof assets[0]; as++) {
    sk_skeleton *s;
    sk_anim *a;
    sk_test_import_asset(assets[as], NULL, &s, &a);
    const size_t nb = a->bone_count, frame = nb * SK_ANIM_TRS, nc = a->clip_count;
    sk_anim_layer l[2] = {{.clip = 0, .weight = 1, .loop = true}, {.clip = (nc > 1 ? 1 : 0), .weight = 0.5}};
    sk_anim_layer_ext x[2] = {{0}, {.additive = true, .reference = 0}};
    double *before = malloc(150 * frame * sizeof *before), *after = malloc(frame * sizeof *after);
    double *scratch = malloc(frame * sizeof *scratch);
    uint64_t rng = 3;
    for (int ref = 0; ref < 2; ref++) {
      x[1].reference = ref == 0 ? 0.0 : -0.0;
      ck_assert_uint_eq(sk_anim_additive_memory(a), 0);
      for (int k = 0; k < 150; k++) {
        l[0].time = l[1].time = frame_time(k, &rng);
        ck_assert_int_eq(sk_anim_sample_layers_ext(a, l, x, 2, before + (size_t)k * frame, scratch), 0);
      }
      ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
      const size_t kept = sk_anim_additive_memory(a);
      ck_assert_uint_gt(kept, 0);
      ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0); /* once */
      ck_assert_uint_eq(sk_anim_additive_memory(a), kept);
      rng = 3;
      for (int k = 0; k < 150; k++) {
        l[0].time = l[1].time = frame_time(k, &rng);
        ck_assert_int_eq(sk_anim_sample_layers_ext(a, l, x, 2, after, scratch), 0);
        ck_assert_msg(memcmp(after, before + (size_t)k * frame, frame * sizeof *after) == 0, "%s: frame %d", assets[as],
                      k);
      }
      runs_agree(a, l, x, 2, true, assets[as]); /* the runs against the frame path, both on the kept keys */
      /* a fresh copy for the -0 round: the kept keys go with the clips */
      sk_anim_destroy(a);
      sk_skeleton_destroy(s);
      sk_test_import_asset(assets[as], NULL, &s, &a);
      rng = 3;
    }
    free(before), free(after), free(scratch);
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
  }
  /* past the budget: declined with keys made per context, taken with kept ones */
  sk_skeleton *s;
  sk_anim *a;
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  sk_anim_layer *l;
  sk_anim_layer_ext *x;
  const size_t n = budget_layers(a, &l, &x);
  sk_layers_ctx *c = NULL;
  ck_assert_int_eq(sk_layers_open(a, l, x, n, NULL, &c), SK_ETOOBIG);
  ck_assert_int_eq(sk_anim_additive_share(a, s, SK_ANIM_ADDITIVE_SHARE_MAX), 0);
  ck_assert_int_eq(sk_layers_open(a, l, x, n, NULL, &c), 0);
  sk_layers_close(c);
  x[0].reference = 0.1; /* one layer whose keys a context makes: under the budget again */
  ck_assert_int_eq(sk_layers_open(a, l, x, n, NULL, &c), 0);
  sk_layers_close(c);
  ck_assert_int_eq(sk_anim_additive_share(a, s, 1), 0); /* already kept: nothing to do */
  free(l);
  free(x);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  /* a cap too small keeps nothing */
  sk_test_import_asset("Fox.glb", NULL, &s, &a);
  ck_assert_int_eq(sk_anim_additive_share(a, s, 64), SK_ETOOBIG);
  ck_assert_uint_eq(sk_anim_additive_memory(a), 0);
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sk_layers");
  TCase *c = tcase_create("layers");
  tcase_set_timeout(c, 120);
  tcase_add_test(c, runs_give_sk_anim_sample_layers_ext_bytes);
  tcase_add_test(c, a_mask_lerps_and_slerps_from_the_rest_pose);
  tcase_add_test(c, refusals_match_the_per_frame_blend);
  tcase_add_test(c, additive_keys_past_the_budget_are_declined);
  tcase_add_test(c, additive_keys_made_at_upload_give_the_same_bytes);
  suite_add_tcase(s, c);
  return sk_test_run(s);
}
