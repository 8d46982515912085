/* Fuzz target: the glTF reader (PUT/POST model/gltf-binary and
 * model/gltf+json bodies): GLB container, JSON, data: URIs, accessors,
 * skins and animations.
 *
 * sk_gltf_parse, then for the first skins: sk_gltf_load_skin (with a bone
 * bound, as the daemon passes --max-bones), the bind pose evaluated, every
 * clip sampled at its start, middle and end (looped and not), and the clip
 * list JSON read back. The first accessors are read on their own too, since
 * a skin only reaches the ones it names.
 *
 * Each skin is estimated first (sk_gltf_estimate, what the daemon's bounded
 * import asks before building): the estimate must not be below what
 * sk_gltf_load_skin then really holds at its peak (measured with the
 * sanitizer allocator's hooks in the libFuzzer build; the replay suite
 * checks the rest). The whole input then goes through
 * sk_gltf_import_bounded under a 1 MiB bound, which must refuse with
 * SK_ETOOBIG exactly the skins estimated over it. */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_gltf_mesh.h"
#include "sk_json.h"
#include "sk_ops.h"
#include "sk_fuzz.h"

#define GLTF_MAX_INPUT (1u << 20)
#define GLTF_MAX_BONES 1024
#define GLTF_MAX_SKINS 4
#define GLTF_MAX_ACCESSORS 8
#define GLTF_BOUND (1u << 20)
/* The estimate counts what grows with the file (nodes, accessors, keys),
 * not load_skin's fixed-size bookkeeping: a skin of a file without
 * "nodes" is estimated at 0 bytes and load_skin holds 172 before it
 * refuses the file (regressions/gltf/no-nodes-estimate-0.gltf). */
#define GLTF_EST_SLACK 4096

/* Peak bytes held during one measured call, counted by malloc/free hooks.
 * Only the libFuzzer build (clang, ASan) has the hooks; elsewhere
 * nothing is measured. */
#if defined(__has_feature) && !defined(SK_FUZZ_REPLAY)
#if __has_feature(address_sanitizer)
#define GLTF_MEASURE 1
#endif
#endif

#ifdef GLTF_MEASURE
#include <sanitizer/allocator_interface.h>

static struct {
  int on;
  long long held, peak;
} g_mem;

static void on_malloc(const volatile void *ptr, size_t size) {
  (void)ptr;
  if (g_mem.on) {
    g_mem.held += (long long)size;
    if (g_mem.held > g_mem.peak)
      g_mem.peak = g_mem.held;
  }
}

/* Runs before the chunk is released, so its size is still known. */
static void on_free(const volatile void *ptr) {
  if (g_mem.on && ptr != NULL)
    g_mem.held -= (long long)__sanitizer_get_allocated_size((const void *)ptr);
}

static void measure_start(void) {
  static int installed;
  if (!installed) {
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    installed = 1;
  }
  g_mem.held = g_mem.peak = 0;
  g_mem.on = 1;
}

/* Peak bytes held since measure_start, or -1 when not measured. */
static long long measure_stop(void) {
  g_mem.on = 0;
  return g_mem.peak;
}
#else
static void measure_start(void) {}
static long long measure_stop(void) { return -1; }
#endif

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
  sk_pose_buffers buf;
  if (sk_pose_buffers_init(&buf, s->count) != 0)
    return;
  sk_pose pose = {.output = SK_OUT_FINAL | SK_OUT_ABSOLUTE | SK_OUT_LOCAL};
  sk_pose_evaluate(s, &pose, &buf);
  sk_strbuf out = {0};
  if (sk_json_write_order(s, &out) == 0) {
    json_t *back = json_loadb(out.data, out.len, JSON_DECODE_INT_AS_REAL, NULL);
    SK_FUZZ_CHECK(back != NULL && json_array_size(back) == s->count);
    json_decref(back);
  }
  sk_strbuf_free(&out);
  sk_pose_buffers_close(&buf);
}

/* What an upload keeps besides the skeleton: the default mesh chain (JSON
 * that sk_ops_parse_mesh reads back, composing or singular) and the skins
 * list (an array of at most SK_GLTF_SKINS_LISTED). */
static void use_extra(const sk_gltf *g, size_t skin) {
  sk_gltf_extra x;
  if (sk_gltf_extra_fill(g, skin, true, &x) != 0)
    return; /* out of memory only */
  SK_FUZZ_CHECK(x.skin == skin && x.skins_json != NULL);
  if (x.mesh_json != NULL) {
    json_t *m = json_loads(x.mesh_json, 0, NULL);
    bool has = false;
    sk_mesh mesh;
    SK_FUZZ_CHECK(m != NULL);
    int rc = sk_ops_parse_mesh(m, "/mesh", &has, &mesh, NULL);
    SK_FUZZ_CHECK(rc == 0 || rc == SK_ESINGULAR);
    json_decref(m);
  }
  json_t *l = json_loads(x.skins_json, 0, NULL);
  SK_FUZZ_CHECK(json_is_array(l) && json_array_size(l) <= SK_GLTF_SKINS_LISTED);
  json_decref(l);
  sk_gltf_extra_clear(&x);
}

/* The daemon's import: a skin estimated over the bound is refused before
 * anything is built, with SK_ETOOBIG and a pointer to the field that took
 * it over; any other skin imports as sk_gltf_import does. */
static void import_bounded(const uint8_t *data, size_t size) {
  sk_skeleton *s = NULL, *s2 = NULL;
  sk_anim *a = NULL, *a2 = NULL;
  size_t est = 0;
  sk_error err;
  sk_error_clear(&err);
  int rc = sk_gltf_import_bounded(data, size, NULL, GLTF_MAX_BONES, GLTF_BOUND, &est, &s, &a, &err);
  if (rc) {
    sk_fuzz_check_error(rc, &err);
    SK_FUZZ_CHECK(s == NULL && a == NULL);
    if (rc == SK_ETOOBIG && est > GLTF_BOUND)
      SK_FUZZ_CHECK(err.pointer[0] == '/');
  } else {
    SK_FUZZ_CHECK(s != NULL && a != NULL && est <= GLTF_BOUND);
  }
  sk_error_clear(&err);
  int rc2 = sk_gltf_import(data, size, NULL, GLTF_MAX_BONES, &s2, &a2, &err);
  /* Under the bound the two agree; over it only the bounded one refuses. */
  if (rc == 0 || rc != SK_ETOOBIG || est <= GLTF_BOUND)
    SK_FUZZ_CHECK(rc2 == rc);
  if (rc == 0)
    SK_FUZZ_CHECK(s2->count == s->count && a2->clip_count == a->clip_count);
  sk_anim_destroy(a);
  sk_anim_destroy(a2);
  sk_skeleton_destroy(s);
  sk_skeleton_destroy(s2);
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
    size_t est = 0;
    sk_error_clear(&err);
    int erc = sk_gltf_estimate(g, k, 0, &est, &err);
    if (erc)
      sk_fuzz_check_error(erc, &err);
    SK_FUZZ_CHECK(sk_gltf_estimate_bytes(g, k) == (erc ? SIZE_MAX : est));
    sk_error_clear(&err);
    measure_start();
    rc = sk_gltf_load_skin(g, k, GLTF_MAX_BONES, &s, &a, &err);
    long long peak = measure_stop();
    if (erc == 0 && est < SIZE_MAX - GLTF_EST_SLACK && peak > (long long)(est + GLTF_EST_SLACK)) {
      fprintf(stderr, "skin %zu: estimate %zu bytes, load_skin held %lld (rc %d)\n", k, est, peak, rc);
      SK_FUZZ_CHECK(peak <= (long long)(est + GLTF_EST_SLACK));
    }
    if (rc) {
      sk_fuzz_check_error(rc, &err);
      continue;
    }
    SK_FUZZ_CHECK(s != NULL && a != NULL);
    use_skeleton(s);
    use_anim(s, a);
    use_extra(g, k);
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
  import_bounded(data, size);
  return 0;
}

#ifndef SK_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sk_fuzz_gltf(data, size) < 0 ? -1 : 0; }
#endif
