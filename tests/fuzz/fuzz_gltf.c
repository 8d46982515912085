/* Fuzz target: the glTF reader (PUT/POST model/gltf-binary and
 * model/gltf+json bodies): GLB container, JSON, data: URIs, accessors,
 * skins and animations.
 *
 * sk_gltf_parse, then for the first skins: sk_gltf_load_skin (with a bone
 * bound, as the daemon passes --max-bones), the bind pose evaluated, every
 * clip sampled at its start, middle and end (looped and not), and the clip
 * list JSON read back. The first accessors are read on their own too, since
 * a skin only reaches the ones it names. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_fuzz.h"

#define GLTF_MAX_INPUT (1u << 20)
#define GLTF_MAX_BONES 1024
#define GLTF_MAX_SKINS 4
#define GLTF_MAX_ACCESSORS 8

static void use_anim(const sk_skeleton *s, const sk_anim *a) {
  SK_FUZZ_CHECK(a->bone_count == s->count);
  size_t nb = a->bone_count ? a->bone_count : 1;
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  double *scratch = malloc(nb * SK_ANIM_TRS * sizeof *scratch);
  sk_override *o = malloc(nb * sizeof *o);
  float *locals = malloc(16 * nb * sizeof *locals);
  if (trs != NULL && scratch != NULL && o != NULL && locals != NULL) {
    for (size_t c = 0; c < a->clip_count; c++) {
      const sk_anim_clip *clip = &a->clips[c];
      for (size_t k = 0; k < clip->channel_count; k++) {
        const sk_anim_channel *ch = &clip->channels[k];
        SK_FUZZ_CHECK(ch->bone >= 0 && (size_t)ch->bone < s->count);
        SK_FUZZ_CHECK(ch->count >= 1);
        for (size_t f = 1; f < ch->count; f++)
          SK_FUZZ_CHECK(ch->frames[f - 1] <= ch->frames[f]);
      }
      double d = sk_anim_clip_duration(a, c);
      double times[] = {0, d / 2, d, d * 1.5 + 0.25, -1};
      for (size_t t = 0; t < sizeof times / sizeof times[0]; t++) {
        sk_anim_sample(a, c, times[t], t % 2 == 1, trs);
        sk_anim_to_overrides(a, trs, o);
        sk_skeleton_pose_locals(s, o, a->bone_count, locals);
      }
      sk_anim_layer layers[2] = {{.clip = c, .time = d / 3, .weight = 1},
                                 {.clip = (c + 1) % a->clip_count, .time = d, .weight = 0.5, .loop = true}};
      SK_FUZZ_CHECK(sk_anim_sample_layers(a, layers, 2, trs, scratch) == 0);
    }
  }
  free(trs);
  free(scratch);
  free(o);
  free(locals);
  sk_strbuf out = {0};
  if (sk_anim_write_clips_json(a, &out) == 0) {
    json_t *back = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL);
    SK_FUZZ_CHECK(back != NULL && json_array_size(back) == a->clip_count);
    json_decref(back);
  }
  sk_strbuf_free(&out);
}

static void use_skeleton(const sk_skeleton *s) {
  SK_FUZZ_CHECK(s->count <= GLTF_MAX_BONES);
  for (size_t i = 0; i < s->count; i++) {
    SK_FUZZ_CHECK(s->bones[i].parent >= -1 && s->bones[i].parent < (int32_t)i);
    SK_FUZZ_CHECK(sk_skeleton_find(s, s->bones[i].name) == (int32_t)i);
  }
  sk_eval_buffers buf;
  if (sk_eval_buffers_init(&buf, s->count) != 0)
    return;
  sk_pose pose = {.output = SK_OUT_FINAL | SK_OUT_ABSOLUTE | SK_OUT_LOCAL};
  sk_pose_evaluate(s, &pose, &buf);
  sk_strbuf out = {0};
  if (sk_eval_write_order(s, &out) == 0) {
    json_t *back = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL);
    SK_FUZZ_CHECK(back != NULL && json_array_size(back) == s->count);
    json_decref(back);
  }
  sk_strbuf_free(&out);
  sk_eval_buffers_close(&buf);
}

int sk_fuzz_gltf(const uint8_t *data, size_t size) {
  if (size > GLTF_MAX_INPUT)
    return -1;
  sk_gltf *g = NULL;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_gltf_parse(data, size, &g, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(g == NULL);
    return 0;
  }
  SK_FUZZ_CHECK(g != NULL && sk_gltf_json(g) != NULL);
  size_t na = json_array_size(json_object_get(sk_gltf_json(g), "accessors"));
  for (size_t i = 0; i < na && i < GLTF_MAX_ACCESSORS; i++) {
    float *v = NULL;
    size_t count = 0, ncomp = 0;
    sk_error_clear(&err);
    rc = sk_gltf_read_accessor(g, i, &v, &count, &ncomp, &err);
    if (rc) {
      sk_fuzz_check_error(rc, &err);
      continue;
    }
    SK_FUZZ_CHECK(ncomp >= 1 && ncomp <= 16);
    SK_FUZZ_CHECK((double)count * (double)ncomp <= SK_GLTF_MAX_FLOATS);
    /* Touch every element so a short allocation shows up under ASan. */
    volatile float sum = 0;
    for (size_t k = 0; k < count * ncomp; k++)
      sum += v[k];
    (void)sum;
    free(v);
  }
  size_t skins = sk_gltf_skin_count(g);
  for (size_t k = 0; k < skins && k < GLTF_MAX_SKINS; k++) {
    sk_skeleton *s = NULL;
    sk_anim *a = NULL;
    sk_error_clear(&err);
    rc = sk_gltf_load_skin(g, k, GLTF_MAX_BONES, &s, &a, &err);
    if (rc) {
      sk_fuzz_check_error(rc, &err);
      continue;
    }
    SK_FUZZ_CHECK(s != NULL && a != NULL);
    use_skeleton(s);
    use_anim(s, a);
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
  }
  size_t skin;
  sk_error_clear(&err);
  rc = sk_gltf_find_skin(g, "0", &skin, &err);
  if (rc)
    sk_fuzz_check_error(rc, &err);
  else
    SK_FUZZ_CHECK(skin < skins);
  sk_gltf_destroy(g);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_gltf(data, size) < 0 ? -1 : 0; }
#endif
