/* Fuzz target: Babylon's animation format (PUT/POST skeleton bodies in
 * Skeleton.serialize() form with bone "animation"/"animations" and
 * "ranges", and the copyAnimationRange op).
 *
 * sk_json_parse_skeleton_anim with a 256-bone bound; every clip (the first
 * 8) sampled as goToFrame does (sk_anim_sample_overrides) at its start,
 * middle, end, past the end, before the start and at a non-finite time,
 * looped and not, and posed; its introspection JSON read back. Then each
 * of the first two ranges is copied (sk_banim_copy_range, with and without
 * rescale) from the input onto the input without its ranges, and the copy
 * must parse again with a clip of that name. sk_banim_estimate must bound
 * the clips built; the first clips are blended as weighted layers, and
 * their blend context's runs must give the single blends' bytes. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "sk_banim.h"
#include "sk_banim_blend.h"
#include "sk_eval.h"
#include "sk_json.h"
#include "sk_fuzz.h"

#define BANIM_MAX_BONES 256
#define BANIM_MAX_CLIPS 8
#define BANIM_MAX_RANGES 2

static void sample_clips(const sk_skeleton *s, const sk_anim *a) {
  SK_FUZZ_CHECK(a->bone_count == s->count);
  SK_FUZZ_CHECK(a->clip_count >= 1);
  size_t nb = s->count ? s->count : 1;
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  sk_override *o = malloc(nb * sizeof *o);
  float *locals = malloc(16 * nb * sizeof *locals);
  if (trs == NULL || o == NULL || locals == NULL)
    goto out;
  for (size_t c = 0; c < a->clip_count && c < BANIM_MAX_CLIPS; c++) {
    const sk_anim_clip *clip = &a->clips[c];
    for (size_t k = 0; k < clip->channel_count; k++) {
      const sk_anim_channel *ch = &clip->channels[k];
      SK_FUZZ_CHECK(ch->bone >= 0 && (size_t)ch->bone < s->count);
      SK_FUZZ_CHECK(ch->count >= 1);
      for (size_t f = 1; f < ch->count; f++)
        SK_FUZZ_CHECK(ch->frames[f - 1] <= ch->frames[f]);
    }
    double d = sk_anim_clip_duration(a, c);
    double times[] = {0, d / 2, d, d * 1.5 + 0.25, -1, NAN, INFINITY, 1e300};
    for (size_t t = 0; t < sizeof times / sizeof times[0]; t++) {
      size_t driven = sk_anim_sample_overrides(a, c, times[t], t % 2 == 1, trs, o);
      SK_FUZZ_CHECK(driven <= s->count);
      size_t seen = 0;
      for (size_t b = 0; b < s->count; b++) {
        SK_FUZZ_CHECK(o[b].bone == (int32_t)b || o[b].mask == 0);
        seen += o[b].mask != 0;
      }
      SK_FUZZ_CHECK(seen <= driven);
      sk_skeleton_pose_locals(s, o, s->count, locals);
    }
    sk_strbuf out = {0};
    if (sk_anim_write_clip_json(a, s, c, &out) == 0) {
      json_t *back = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL);
      SK_FUZZ_CHECK(json_is_object(back));
      json_decref(back);
    }
    sk_strbuf_free(&out);
  }
out:
  free(trs);
  free(o);
  free(locals);
}

/* A blend context (with a sampler of every clip, or without) over a run
 * of frames, forward, far off and back, gives each frame's overrides byte
 * for byte as a single sk_banim_blend call. */
static void context_agrees(const sk_skeleton *s, const sk_anim *a, const sk_anim_layer *l, const sk_anim_layer_ext *x,
                           size_t n, bool sampled) {
  static const double at[] = {0.1, 0.3, 0.31, 1e9, -2, 0.1, NAN};
  enum { F = sizeof at / sizeof at[0] };
  const size_t nb = s->count ? s->count : 1;
  sk_sampler *smp = NULL;
  if (sampled && sk_sampler_create(a, &smp) != 0)
    smp = NULL;
  sk_banim_blend_ctx *c = NULL;
  sk_override *got = malloc(F * nb * sizeof *got), *want = malloc(nb * sizeof *want), *frames[F];
  double times[F * 2];
  size_t driven[F];
  if (got == NULL || want == NULL) {
    sk_sampler_destroy(smp);
    goto out;
  }
  if (sk_banim_blend_open_sampled(a, s, l, x, n, smp, &c) != 0) /* it took smp */
    goto out;
  const size_t run = sk_banim_blend_run_max(c);
  for (size_t f0 = 0; f0 < F; f0 += run) {
    const size_t m = F - f0 < run ? F - f0 : run;
    for (size_t f = 0; f < m; f++) {
      frames[f] = got + f * nb;
      for (size_t i = 0; i < n; i++)
        times[f * n + i] = at[f0 + f] + l[i].time;
    }
    SK_FUZZ_CHECK(sk_banim_blend_run(c, l, times, m, frames, driven) == 0);
    for (size_t f = 0; f < m; f++) {
      sk_anim_layer lf[2];
      size_t d = 0;
      for (size_t i = 0; i < n; i++)
        lf[i] = l[i], lf[i].time = times[f * n + i];
      SK_FUZZ_CHECK(sk_banim_blend(a, s, lf, x, n, want, &d) == 0);
      SK_FUZZ_CHECK(d == driven[f]);
      SK_FUZZ_CHECK(memcmp(frames[f], want, s->count * sizeof *want) == 0);
    }
  }
out:
  sk_banim_blend_close(c);
  free(got);
  free(want);
}

/* Weighted layers of the first clips (sk_banim_blend), with and
 * without a mask that leaves bone 0 out: only driven properties are set. */
static void blend_clips(const sk_skeleton *s, const sk_anim *a) {
  size_t nb = s->count ? s->count : 1;
  sk_override *o = malloc(nb * sizeof *o);
  float *mask = malloc(nb * sizeof *mask), *locals = malloc(16 * nb * sizeof *locals);
  if (o == NULL || mask == NULL || locals == NULL)
    goto out;
  for (size_t b = 0; b < nb; b++)
    mask[b] = b == 0 ? 0.0f : 1.0f;
  sk_anim_layer l[2] = {{0, 0.1, 0.5, false}, {a->clip_count > 1 ? 1 : 0, 1e9, 0.7, true}};
  sk_anim_layer_ext x[2] = {{.bone_weights = NULL}, {.bone_weights = mask}};
  for (size_t n = 1; n <= 2; n++)
    for (int m = 0; m < 2; m++) {
      size_t driven = 0;
      if (sk_banim_blend(a, s, l, m ? x : NULL, n, o, &driven) != 0)
        continue;
      context_agrees(s, a, l, m ? x : NULL, n, m == 1);
      SK_FUZZ_CHECK(driven <= s->count);
      size_t seen = 0;
      for (size_t b = 0; b < s->count; b++)
        seen += o[b].bone == (int32_t)b && o[b].mask != 0;
      SK_FUZZ_CHECK(seen == driven);
      sk_skeleton_pose_locals(s, o, s->count, locals);
    }
out:
  free(o);
  free(mask);
  free(locals);
}

/* Copies range `name` of `j` onto `j` without ranges; a copy made must be
 * a Babylon skeleton whose clips include the range. */
static void copy_range(const json_t *j, const char *name, bool rescale) {
  json_t *dst = json_deep_copy(j);
  if (dst == NULL)
    return;
  json_object_del(dst, "ranges");
  json_t *out = NULL;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_banim_copy_range(dst, j, "/from", name, "/name", rescale, &out, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(out == NULL);
  } else {
    SK_FUZZ_CHECK(out != NULL);
    const json_t *rs = json_object_get(out, "ranges");
    SK_FUZZ_CHECK(json_array_size(rs) >= 1);
    const char *last = json_string_value(json_object_get(json_array_get(rs, json_array_size(rs) - 1), "name"));
    SK_FUZZ_CHECK(last != NULL && strcmp(last, name) == 0);
    sk_skeleton *s = NULL;
    sk_anim *a = NULL;
    sk_error_clear(&err);
    rc = sk_json_parse_skeleton_anim(out, "", 0, &s, &a, &err);
    if (rc) {
      /* Copying doubles the keys a range reaches: only the key bound may refuse. */
      if (rc != SK_ETOOBIG)
        fprintf(stderr, "copy of range \"%s\" does not parse: %s at %s\n", name, err.text, err.pointer);
      SK_FUZZ_CHECK(rc == SK_ETOOBIG);
    } else {
      size_t k;
      SK_FUZZ_CHECK(a != NULL && sk_anim_find_clip(a, name, &k) == 0);
    }
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
  }
  json_decref(out);
  json_decref(dst);
}

int sk_fuzz_banim(const uint8_t *data, size_t size) {
  if (size > SK_FUZZ_MAX_INPUT)
    return -1;
  json_t *j;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_json_load((const char *)data, size, &j, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    return 0;
  }
  sk_skeleton *s = NULL;
  sk_anim *a = NULL;
  sk_error_clear(&err);
  rc = sk_json_parse_skeleton_anim(j, "", BANIM_MAX_BONES, &s, &a, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(s == NULL && a == NULL);
    json_decref(j);
    return 0;
  }
  SK_FUZZ_CHECK(s != NULL && s->count <= BANIM_MAX_BONES);
  /* the daemon refuses and reserves by the estimate: it must bound what was built */
  size_t estimate = 0;
  sk_error_clear(&err);
  SK_FUZZ_CHECK(sk_banim_estimate(j, "", s, &estimate, &err) == 0);
  SK_FUZZ_CHECK(a != NULL ? estimate >= sk_anim_memory(a) : estimate == 0);
  if (a != NULL) {
    SK_FUZZ_CHECK(a->babylon);
    sample_clips(s, a);
    blend_clips(s, a);
  }
  sk_anim_destroy(a);
  sk_skeleton_destroy(s);
  const json_t *rs = json_object_get(j, "ranges");
  for (size_t i = 0; i < json_array_size(rs) && i < BANIM_MAX_RANGES; i++) {
    const char *name = json_string_value(json_object_get(json_array_get(rs, i), "name"));
    if (name != NULL)
      copy_range(j, name, i % 2 == 1);
  }
  json_decref(j);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_banim(data, size) < 0 ? -1 : 0; }
#endif
