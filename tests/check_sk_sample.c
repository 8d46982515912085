/* sk_sample: the frame-range sampler gives, byte for byte (memcmp), what
 * sk_anim_sample and sk_anim_sample_layers give, on every real clip in
 * tests/data and the hand-made STEP/CUBICSPLINE file, at every frame of
 * ranges at 24, 30, 60 and 97 fps that start before the first key and end
 * after the last, looping and clamped, forwards and in shuffled order,
 * blended layers included; and every output layout puts each value where
 * sk_kernel expects it. */
#include <pthread.h>
#include <stdarg.h>

#include "sk_anim.h"
#include "sk_eval.h"
#include "sk_gltf.h"
#include "sk_json.h"
#include "sk_jsonl.h"
#include "sk_kernel.h"
#include "sk_sample.h"
#include "sk_testutil.h"

static const char *const k_assets[] = {"Fox.glb",
                                       "CesiumMan.glb",
                                       "RiggedFigure.glb",
                                       "RiggedSimple.glb",
                                       "RobotExpressive.glb",
                                       "mannequiny-0.3.0.glb",
                                       "SimpleSkin.gltf",
                                       "cubic_step.gltf",
                                       "rig65.gltf",
                                       NULL};

static void load(const char *asset, sk_skeleton **s, sk_anim **an) {
  size_t len;
  unsigned char *d = sk_test_read_asset(asset, &len);
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_gltf_import(d, len, NULL, 0, s, an, &err) == 0, "%s: %s at %s", asset, err.text, err.pointer);
  free(d);
  ck_assert_msg((*an)->clip_count > 0, "%s has no clips", asset);
}

/* Frames of a range covering the clip with a margin before and after. */
static double *range_times(double duration, double fps, size_t *n) {
  double from = -0.25, to = duration + 0.3;
  *n = (size_t)floor((to - from) * fps + 1e-9) + 1;
  double *t = malloc(*n * sizeof *t);
  ck_assert_ptr_nonnull(t);
  for (size_t i = 0; i < *n; i++)
    t[i] = from + (double)i / fps;
  return t;
}

/* Runs the layers over `times` (in chunks, so cursors carry across runs)
 * and compares every frame with sk_anim_sample_layers at the same times. */
/* Every frame of `times` sampled by a context on SIMD path `path` equals
 * sk_anim's; false when the CPU lacks the path. */
static bool compare_on_path(const char *asset, const sk_sampler *sp, const sk_anim_layer *layers, size_t nl,
                            const double *times, size_t n, const char *path) {
  const sk_anim *an = sk_sampler_anim(sp);
  const size_t nb = an->bone_count, per = nb * SK_ANIM_TRS;
  double *got = malloc((n ? n : 1) * per * sizeof *got), *want = malloc(per * sizeof *want),
         *scratch = malloc(per * sizeof *scratch);
  ck_assert(got != NULL && want != NULL && scratch != NULL);
  sk_sample_ctx *c;
  ck_assert_int_eq(sk_sample_ctx_create(sp, layers, nl, &c), 0);
  int rc = sk_sample_ctx_set_path(c, path);
  ck_assert(rc == 0 || rc == SK_EUNSUPPORTED);
  sk_sample_out o = {.f64 = got};
  for (size_t at = 0; rc == 0 && at < n; at += 7)
    sk_sample_run(c, times, at, at + 7 < n ? at + 7 : n, &o);
  sk_anim_layer l[8];
  ck_assert_uint_le(nl, 8);
  for (size_t p = 0; rc == 0 && p < n; p++) {
    memcpy(l, layers, nl * sizeof *l);
    for (size_t i = 0; i < nl; i++)
      l[i].time = sk_sample_layer_time(layers[i].time, times[p]);
    if (nl == 1)
      sk_anim_sample(an, l[0].clip, l[0].time, l[0].loop, want);
    else
      ck_assert_int_eq(sk_anim_sample_layers(an, l, nl, want, scratch), 0);
    if (memcmp(got + p * per, want, per * sizeof *want) != 0) {
      size_t i = 0;
      while (memcmp(got + p * per + i, want + i, sizeof *want) == 0)
        i++;
      ck_abort_msg("%s clip %zu (%zu layers, %s) t=%.17g bone %zu component %zu: got %.17g want %.17g", asset,
                   layers[0].clip, nl, path, times[p], i / SK_ANIM_TRS, i % SK_ANIM_TRS, got[p * per + i], want[i]);
    }
  }
  sk_sample_ctx_destroy(c);
  free(got);
  free(want);
  free(scratch);
  return rc == 0;
}

/* compare_on_path on every path (the generic one runs everywhere). */
static size_t compare_layers(const char *asset, const sk_sampler *sp, const sk_anim_layer *layers, size_t nl,
                             const double *times, size_t n) {
  static const char *const paths[] = {"avx512", "avx2", "generic"};
  int ran = 0;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    ran += compare_on_path(asset, sp, layers, nl, times, n, paths[i]);
  ck_assert_int_ge(ran, 1);
  return n;
}

START_TEST(test_every_clip_every_frame_bit_identical) {
  const char *asset = k_assets[_i];
  sk_skeleton *s;
  sk_anim *an;
  load(asset, &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  static const double fps[] = {24, 30, 60, 97};
  size_t frames = 0;
  for (size_t clip = 0; clip < an->clip_count; clip++)
    for (int f = 0; f < 4; f++)
      for (int loop = 0; loop < 2; loop++) {
        size_t n;
        double *t = range_times(sk_anim_clip_duration(an, clip), fps[f], &n);
        sk_anim_layer l = {.clip = clip, .time = 0, .weight = 1, .loop = loop};
        frames += compare_layers(asset, sp, &l, 1, t, n);
        /* Shuffled order: cursors jump back and forth. */
        for (size_t i = n; i > 1; i--) {
          size_t j = (i * 7919u + 13u) % i;
          double x = t[i - 1];
          t[i - 1] = t[j];
          t[j] = x;
        }
        frames += compare_layers(asset, sp, &l, 1, t, n);
        free(t);
      }
  ck_assert_uint_gt(frames, 0);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an); /* the sampler held its own reference until here */
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(test_blended_layers_bit_identical) {
  const char *asset = k_assets[_i];
  sk_skeleton *s;
  sk_anim *an;
  load(asset, &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  size_t nc = an->clip_count;
  sk_anim_layer l[3] = {{.clip = 0, .time = 0, .weight = 0.3, .loop = true},
                        {.clip = 1 % nc, .time = 0.25, .weight = 0.7, .loop = false},
                        {.clip = 2 % nc, .time = -0.1, .weight = 0.45, .loop = true}};
  static const double fps[] = {24, 97};
  for (int f = 0; f < 2; f++) {
    size_t n;
    double *t = range_times(sk_anim_clip_duration(an, 0), fps[f], &n);
    compare_layers(asset, sp, l, 2, t, n);
    compare_layers(asset, sp, l, 3, t, n);
    /* A zero-weight layer is skipped, as sk_anim_sample_layers skips it. */
    sk_anim_layer z[2] = {l[0], l[1]};
    z[0].weight = 0;
    compare_layers(asset, sp, z, 2, t, n);
    free(t);
  }
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* The kernel layouts hold the same values as the plain TRS arrays, in the
 * places sk_kernel_blocked_layout and the row layout define. */
/* The blocked layout (doubles, and floats) holds the plain TRS arrays'
 * values where sk_kernel_blocked_layout puts them. */
static void assert_places(const double *aos, size_t nb, size_t n, const double *blk, const float *blk32,
                          const size_t *off, size_t ps, size_t bs) {
  for (size_t p = 0; p < n; p++)
    for (size_t b = 0; b < nb; b++)
      for (size_t k = 0; k < SK_ANIM_TRS; k++) {
        double v = aos[(p * nb + b) * SK_ANIM_TRS + k];
        size_t at = off[b] + (p / 16) * bs + k * ps + p % 16;
        ck_assert(memcmp(&blk[at], &v, sizeof v) == 0);
        ck_assert(blk32[at] == (float)v);
      }
}

/* rest_kept: a run leaves the rest rows (sk_sample_ctx_rest) as they are
 * and writes every other place as a full run does. */
static void assert_rest_kept(sk_sample_ctx *c, size_t nb, size_t n, const double *t, const double *blk,
                             const size_t *off, size_t ps, size_t bs, size_t need) {
  sk_sample_rest *rest = malloc(nb * SK_ANIM_TRS * sizeof *rest);
  size_t nr = sk_sample_ctx_rest(c, rest, nb * SK_ANIM_TRS);
  ck_assert_uint_gt(nr, 0); /* Fox's clips leave most translations and scales to the rest */
  ck_assert_uint_le(nr, nb * SK_ANIM_TRS);
  bool *is_rest = calloc(nb * SK_ANIM_TRS, sizeof *is_rest);
  for (size_t r = 0; r < nr; r++) {
    ck_assert(rest[r].bone < nb && rest[r].comp < SK_ANIM_TRS);
    is_rest[rest[r].bone * SK_ANIM_TRS + rest[r].comp] = true;
    /* the value every frame gets there */
    ck_assert(memcmp(&blk[off[rest[r].bone] + rest[r].comp * ps], &rest[r].value, sizeof(double)) == 0);
  }
  double *kept = malloc(need * sizeof *kept);
  memset(kept, 0xff, need * sizeof *kept);
  sk_sample_out ok = {.f64 = kept, .offset = off, .pose_stride = ps, .block_stride = bs, .rest_kept = true};
  sk_sample_run(c, t, 0, 11, &ok);
  sk_sample_run(c, t, 11, n, &ok);
  double untouched; /* the 0xff bytes set above */
  memset(&untouched, 0xff, sizeof untouched);
  for (size_t p = 0; p < n; p++)
    for (size_t b = 0; b < nb; b++)
      for (size_t k = 0; k < SK_ANIM_TRS; k++) {
        size_t at = off[b] + (p / 16) * bs + k * ps + p % 16;
        const double *want = is_rest[b * SK_ANIM_TRS + k] ? &untouched : &blk[at];
        ck_assert_msg(memcmp(&kept[at], want, sizeof *want) == 0, "frame %zu bone %zu component %zu", p, b, k);
      }
  free(kept);
  free(is_rest);
  free(rest);
}

/* A blend's frames in the places of the plain arrays, the blocked rows
 * (doubles, in runs cut at c1 and c2, and floats) of one layout. */
typedef struct blend_places {
  const sk_sampler *sp;
  const char *path;
  const double *t;
  size_t n, nb;
  double *aos, *blk;
  float *blk32;
  const size_t *off;
  size_t ps, bs;
} blend_places;

static void assert_blend_places(const blend_places *pl, const sk_anim_layer *layers, size_t nl, size_t c1, size_t c2) {
  sk_sample_ctx *c;
  ck_assert_int_eq(sk_sample_ctx_create(pl->sp, layers, nl, &c), 0);
  ck_assert_int_eq(sk_sample_ctx_set_path(c, pl->path), 0);
  const sk_sample_out o = {.f64 = pl->aos};
  const sk_sample_out ob = {.f64 = pl->blk, .offset = pl->off, .pose_stride = pl->ps, .block_stride = pl->bs};
  const sk_sample_out ob32 = {.f32 = pl->blk32, .offset = pl->off, .pose_stride = pl->ps, .block_stride = pl->bs};
  sk_sample_run(c, pl->t, 0, pl->n, &o);
  sk_sample_run(c, pl->t, 0, c1, &ob);
  sk_sample_run(c, pl->t, c1, c2, &ob);
  sk_sample_run(c, pl->t, c2, pl->n, &ob);
  sk_sample_run(c, pl->t, 0, pl->n, &ob32);
  assert_places(pl->aos, pl->nb, pl->n, pl->blk, pl->blk32, pl->off, pl->ps, pl->bs);
  sk_sample_ctx_destroy(c);
}

/* False when the CPU lacks `path`. */
static bool layouts_on_path(const char *path) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  const size_t nb = an->bone_count, n = 37;
  double t[37];
  for (size_t i = 0; i < n; i++)
    t[i] = 0.05 * (double)i;
  sk_anim_layer l = {.clip = 1, .weight = 1, .loop = true};
  sk_sample_ctx *c;
  ck_assert_int_eq(sk_sample_ctx_create(sp, &l, 1, &c), 0);
  int rc = sk_sample_ctx_set_path(c, path);
  ck_assert(rc == 0 || rc == SK_EUNSUPPORTED);
  if (rc != 0) {
    sk_sample_ctx_destroy(c);
    sk_sampler_destroy(sp);
    sk_anim_destroy(an);
    sk_skeleton_destroy(s);
    return false;
  }
  double *aos = malloc(n * nb * SK_ANIM_TRS * sizeof *aos);
  sk_sample_out o = {.f64 = aos};
  sk_sample_run(c, t, 0, n, &o);
  uint8_t *mode = malloc(nb);
  size_t *off = malloc(nb * sizeof *off), ps, bs;
  memset(mode, SK_KERNEL_TRS, nb);
  size_t need = sk_kernel_blocked_layout(mode, nb, n, off, &ps, &bs);
  ck_assert_uint_gt(need, 0);
  double *blk = calloc(need, sizeof *blk);
  float *blk32 = calloc(need, sizeof *blk32);
  sk_sample_out ob = {.f64 = blk, .offset = off, .pose_stride = ps, .block_stride = bs};
  sk_sample_out ob32 = {.f32 = blk32, .offset = off, .pose_stride = ps, .block_stride = bs};
  sk_sample_run(c, t, 0, n, &ob);
  sk_sample_run(c, t, 0, n, &ob32);
  /* Split runs, starting off a 16-pose boundary, fill the same places. */
  double *split = calloc(need, sizeof *split);
  sk_sample_out os = {.f64 = split, .offset = off, .pose_stride = ps, .block_stride = bs};
  sk_sample_run(c, t, 0, 5, &os);
  sk_sample_run(c, t, 5, 12, &os);
  sk_sample_run(c, t, 12, 33, &os);
  sk_sample_run(c, t, 33, n, &os);
  ck_assert(memcmp(split, blk, need * sizeof *blk) == 0);
  free(split);
  assert_rest_kept(c, nb, n, t, blk, off, ps, bs, need);
  size_t rs = sk_kernel_pose_stride(n);
  size_t *roff = malloc(nb * sizeof *roff);
  for (size_t b = 0; b < nb; b++)
    roff[b] = b * SK_ANIM_TRS * rs;
  double *rows = calloc(nb * SK_ANIM_TRS * rs, sizeof *rows);
  sk_sample_out orow = {.f64 = rows, .offset = roff, .pose_stride = rs};
  sk_sample_run(c, t, 0, n, &orow);
  assert_places(aos, nb, n, blk, blk32, off, ps, bs);
  for (size_t p = 0; p < n; p++)
    for (size_t b = 0; b < nb; b++)
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        ck_assert(memcmp(&rows[roff[b] + k * rs + p], &aos[(p * nb + b) * SK_ANIM_TRS + k], sizeof(double)) == 0);
  /* Blends go a block of 8 frames at a time (each layer sampled into its
   * block, then weighted and slerped in lanes): the same places, with runs
   * starting off those blocks; three layers, one with a time offset; five,
   * more than a context keeps a block each for. */
  const blend_places pl = {.sp = sp, .path = path, .t = t, .n = n, .nb = nb, .aos = aos, .blk = blk, .blk32 = blk32,
                           .off = off, .ps = ps, .bs = bs};
  const sk_anim_layer two[2] = {{.clip = 1, .weight = 0.6, .loop = true}, {.clip = 0, .weight = 0.4, .loop = true}};
  const sk_anim_layer three[3] = {{.clip = 1, .weight = 0.5, .loop = true},
                                  {.clip = 0, .weight = 0.3, .time = 0.21, .loop = true},
                                  {.clip = 2, .weight = 0.2}};
  const sk_anim_layer five[5] = {{.clip = 1, .weight = 0.4, .loop = true},
                                 {.clip = 0, .weight = 0.1, .time = 0.21, .loop = true},
                                 {.clip = 2, .weight = 0.2},
                                 {.clip = 1, .weight = 0.2, .time = 0.5, .loop = true},
                                 {.clip = 0, .weight = 0.1, .time = 1.1}};
  assert_blend_places(&pl, two, 2, 5, 5);
  assert_blend_places(&pl, three, 3, 3, 11);
  assert_blend_places(&pl, five, 5, 5, 5);
  free(rows);
  free(roff);
  free(blk);
  free(blk32);
  free(off);
  free(mode);
  free(aos);
  sk_sample_ctx_destroy(c);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
  return true;
}

/* sk_sample_rest_memo: equal rest rows are "the same" from the second
 * check on; another clip's, a blend's constant rows (the components no
 * layer drives, their blended value) and a changed rest value are not. */
START_TEST(test_rest_memo) {
  sk_skeleton *s;
  sk_anim *an;
  load("RobotExpressive.glb", &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  sk_anim_layer a = {.clip = 0, .weight = 1}, b = {.clip = 1, .weight = 1}, two[2] = {a, b};
  sk_sample_ctx *ca, *ca2, *cb, *c2;
  ck_assert_int_eq(sk_sample_ctx_create(sp, &a, 1, &ca), 0);
  ck_assert_int_eq(sk_sample_ctx_create(sp, &a, 1, &ca2), 0);
  ck_assert_int_eq(sk_sample_ctx_create(sp, &b, 1, &cb), 0);
  ck_assert_int_eq(sk_sample_ctx_create(sp, two, 2, &c2), 0);
  sk_sample_rest_memo m = {0};
  ck_assert(!sk_sample_rest_memo_holds(&m));
  ck_assert(!sk_sample_rest_memo_same(&m, ca, an->bone_count));
  ck_assert(sk_sample_rest_memo_holds(&m));
  ck_assert(sk_sample_rest_memo_same(&m, ca, an->bone_count));
  ck_assert(sk_sample_rest_memo_same(&m, ca2, an->bone_count)); /* another context, the same clip */
  ck_assert(!sk_sample_rest_memo_same(&m, cb, an->bone_count));
  ck_assert(sk_sample_rest_memo_same(&m, cb, an->bone_count));
  ck_assert(!sk_sample_rest_memo_same(&m, c2, an->bone_count));
  ck_assert(sk_sample_rest_memo_holds(&m));
  ck_assert(sk_sample_rest_memo_same(&m, c2, an->bone_count));
  ck_assert(!sk_sample_rest_memo_same(&m, ca, an->bone_count));
  /* the blend's constant rows are what it writes in every frame */
  const size_t nb = an->bone_count, nrow = nb * SK_ANIM_TRS;
  sk_sample_rest *rows = malloc(nrow * sizeof *rows);
  const size_t nk = sk_sample_ctx_rest(c2, rows, nrow);
  ck_assert_uint_gt(nk, 0);
  ck_assert_uint_le(nk, nrow);
  double *aos = malloc(24 * nrow * sizeof *aos), t[24];
  for (int i = 0; i < 24; i++)
    t[i] = 0.1 + i * 0.07;
  sk_sample_out o = {.f64 = aos};
  sk_sample_run(c2, t, 0, 24, &o);
  for (size_t k = 0; k < nk; k++)
    for (int i = 0; i < 24; i++)
      ck_assert_msg(memcmp(&aos[(size_t)i * nrow + rows[k].bone * SK_ANIM_TRS + rows[k].comp], &rows[k].value,
                           sizeof(double)) == 0, "constant row %zu, frame %d", k, i);
  free(aos);
  free(rows);
  sk_sample_rest r;
  ck_assert_uint_ge(sk_sample_ctx_rest(ca, &r, 1), 1);
  an->rest[r.bone * SK_ANIM_TRS + r.comp] += 1;
  ck_assert(!sk_sample_rest_memo_same(&m, ca, an->bone_count));
  ck_assert(sk_sample_rest_memo_same(&m, ca, an->bone_count));
  sk_sample_rest_memo_close(&m);
  ck_assert(!sk_sample_rest_memo_holds(&m));
  sk_sample_rest_memo_close(&m); /* twice is fine */
  sk_sample_ctx_destroy(ca);
  sk_sample_ctx_destroy(ca2);
  sk_sample_ctx_destroy(cb);
  sk_sample_ctx_destroy(c2);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

START_TEST(test_kernel_layouts) {
  static const char *const paths[] = {"avx512", "avx2", "generic"};
  int ran = 0;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    ran += layouts_on_path(paths[i]);
  ck_assert_int_ge(ran, 1);
}
END_TEST

START_TEST(test_errors) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_sampler *sp = NULL;
  sk_sample_ctx *c = NULL;
  ck_assert_int_eq(sk_sampler_create(NULL, &sp), SK_EINVAL);
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  ck_assert_uint_gt(sk_sampler_memory(sp), sk_anim_memory(an) / 4);
  ck_assert_uint_eq(sk_sampler_memory(NULL), 0);
  sk_anim_layer l[2] = {{.clip = 0, .weight = 1}, {.clip = 1, .weight = 1}};
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 0, &c), SK_EINVAL);
  l[1].weight = -1;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), SK_ERANGE);
  l[1].weight = INFINITY;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), SK_ERANGE);
  l[0].weight = l[1].weight = 0;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), SK_ERANGE);
  l[0].weight = 1;
  l[1].clip = an->clip_count;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), SK_ERANGE);
  ck_assert_ptr_null(c);
  l[1].clip = 1;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 1, &c), 0);
  ck_assert_int_eq(sk_sample_ctx_set_path(c, "sse2"), SK_EINVAL);
  ck_assert_int_eq(sk_sample_ctx_set_path(c, NULL), SK_EINVAL);
  ck_assert_int_eq(sk_sample_ctx_set_path(NULL, "generic"), SK_EINVAL);
  ck_assert_int_eq(sk_sample_ctx_set_path(c, "generic"), 0);
  /* a tile of 4 components x 8 frames x 8 lanes per group at least */
  ck_assert_uint_gt(sk_sample_ctx_memory(c), 4 * 64 * sizeof(double));
  ck_assert_uint_eq(sk_sample_ctx_memory(NULL), 0);
  sk_sample_ctx_destroy(c);
  sk_sample_ctx_destroy(NULL);
  sk_sampler_destroy(NULL);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST


static json_t *js(const char *text) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  ck_assert_msg(j != NULL, "%s: %s", text, je.text);
  return j;
}

/* A one-frame range is still a range: the flag callers shape the answer
 * by is set whatever the count, and a single pose never has it. */
START_TEST(test_one_frame_range_is_a_range) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  static const char *const cases[] = {"{\"animation\": 1, \"times\": [0.5]}",
                                      "{\"animation\": 1, \"from\": 0.5, \"to\": 0.5, \"fps\": 30}",
                                      "{\"layers\": [{\"animation\": 1, \"time\": 0}], \"times\": [0.5]}"};
  for (int i = 0; i < 3; i++) {
    json_t *j = js(cases[i]);
    sk_pose *poses;
    size_t n;
    sk_error err;
    sk_error_clear(&err);
    ck_assert_msg(sk_pose_parse_anim(s, an, j, "", NULL, &poses, &n, &err) == 0, "%s: %s at %s", cases[i], err.text,
                  err.pointer);
    ck_assert_uint_eq(n, 1);
    ck_assert_msg(poses[0].frame_range, "%s", cases[i]);
    sk_pose_array_free(poses, n);
    json_decref(j);
  }
  json_t *j = js("{\"animation\": 1, \"time\": 0.5}");
  sk_pose *poses;
  size_t n;
  ck_assert_int_eq(sk_pose_parse_anim(s, an, j, "", NULL, &poses, &n, NULL), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert(!poses[0].frame_range);
  sk_pose_array_free(poses, n);
  json_decref(j);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* Blended ranges: "layers" with "times" or "from"/"to"/"fps" give one pose
 * per frame, each layer at its time offset plus the frame time, with the
 * same TRS the sampler computes. */
START_TEST(test_blended_ranges_parse) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  sk_sampler *sp;
  ck_assert_int_eq(sk_sampler_create(an, &sp), 0);
  json_t *j = js("{\"layers\": [{\"animation\": \"Walk\", \"time\": 0, \"weight\": 0.7, \"loop\": true},"
                 " {\"animation\": \"Run\", \"time\": 0.2, \"weight\": 0.3, \"loop\": true}],"
                 " \"from\": 0, \"to\": 1, \"fps\": 30}");
  sk_pose *poses;
  size_t n;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_pose_parse_anim(s, an, j, "", NULL, &poses, &n, &err) == 0, "%s at %s", err.text, err.pointer);
  ck_assert_uint_eq(n, 31);
  size_t walk, run;
  ck_assert_int_eq(sk_anim_find_clip(an, "Walk", &walk), 0);
  ck_assert_int_eq(sk_anim_find_clip(an, "Run", &run), 0);
  sk_anim_layer l[2] = {{.clip = walk, .time = 0, .weight = 0.7, .loop = true},
                        {.clip = run, .time = 0.2, .weight = 0.3, .loop = true}};
  double times[31];
  for (size_t i = 0; i < 31; i++)
    times[i] = 0 + (double)i / 30;
  const size_t nb = an->bone_count;
  double *trs = malloc(31 * nb * SK_ANIM_TRS * sizeof *trs);
  sk_sample_ctx *c;
  ck_assert_int_eq(sk_sample_ctx_create(sp, l, 2, &c), 0);
  sk_sample_out o = {.f64 = trs};
  sk_sample_run(c, times, 0, 31, &o);
  for (size_t f = 0; f < n; f++) {
    ck_assert(poses[f].frame_range);
    ck_assert_uint_eq(poses[f].count, nb);
    for (size_t b = 0; b < nb; b++) {
      const double *t = trs + (f * nb + b) * SK_ANIM_TRS;
      const sk_override *ov = &poses[f].overrides[b];
      ck_assert(memcmp(ov->position, t, 3 * sizeof *t) == 0);
      ck_assert(memcmp(ov->rotation, t + 3, 4 * sizeof *t) == 0);
      ck_assert(memcmp(ov->scaling, t + 7, 3 * sizeof *t) == 0);
    }
  }
  sk_pose_array_free(poses, n);
  json_decref(j);
  /* A pose-level "time" stays an error that says where it goes. */
  j = js("{\"layers\": [{\"animation\": 0, \"time\": 0}], \"time\": 1, \"times\": [0]}");
  ck_assert_int_eq(sk_pose_parse_anim(s, an, j, "/p", NULL, &poses, &n, &err), SK_ETYPE);
  ck_assert_str_eq(err.pointer, "/p/time");
  json_decref(j);
  j = js("{\"layers\": [{\"animation\": 0, \"time\": 0}], \"from\": 0, \"to\": 1}");
  sk_error_clear(&err);
  ck_assert_int_eq(sk_pose_parse_anim(s, an, j, "/p", NULL, &poses, &n, &err), SK_EMISSING);
  ck_assert_str_eq(err.pointer, "/p/fps");
  json_decref(j);
  sk_sample_ctx_destroy(c);
  free(trs);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* Appends printf output to `b` (test helper). */
static void bprintf(sk_strbuf *b, const char *fmt, ...) {
  char t[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t, sizeof t, fmt, ap);
  va_end(ap);
  ck_assert(n >= 0 && (size_t)n < sizeof t);
  ck_assert_int_eq(sk_strbuf_append(b, t, (size_t)n), 0);
}

static sk_pose *parse_text(const sk_skeleton *s, const sk_anim *an, const char *text, size_t *n) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  ck_assert_msg(j != NULL, "%.200s: %s", text, je.text);
  sk_pose *poses;
  sk_error err;
  sk_error_clear(&err);
  ck_assert_msg(sk_pose_parse_anim(s, an, j, "", NULL, &poses, n, &err) == 0, "%.200s: %s at %s", text, err.text,
                err.pointer);
  json_decref(j);
  return poses;
}

/* `layers` (JSON layer objects with "%s" where the layer's time goes, one
 * per entry of `offsets`; NULL: one "animation" member `clip`) over the
 * frame times `t[0..n)`: the range request's poses, byte for byte, are the
 * single-time requests' poses (sk_anim_sample_layers per frame). */
static void compare_range_with_singles(const sk_skeleton *s, const sk_anim *an, const char *const *layers,
                                       const double *offsets, size_t nl, size_t clip, bool loop, const char *extra,
                                       const double *t, size_t n) {
  sk_strbuf b = {0};
  if (layers == NULL)
    bprintf(&b, "{\"animation\": %zu, \"loop\": %s, %s\"times\": [", clip, loop ? "true" : "false", extra);
  else {
    bprintf(&b, "{%s\"layers\": [", extra);
    for (size_t i = 0; i < nl; i++) {
      char o[64];
      snprintf(o, sizeof o, "%.17g", offsets[i]);
      bprintf(&b, i ? "," : "");
      bprintf(&b, layers[i], o);
    }
    bprintf(&b, "], \"times\": [");
  }
  for (size_t i = 0; i < n; i++)
    bprintf(&b, "%s%.17g", i ? "," : "", t[i]);
  bprintf(&b, "]}");
  size_t nr;
  sk_pose *range = parse_text(s, an, b.data, &nr);
  ck_assert_uint_eq(nr, n);
  for (size_t f = 0; f < n; f++) {
    b.len = 0;
    if (layers == NULL)
      bprintf(&b, "{\"animation\": %zu, \"loop\": %s, %s\"time\": %.17g}", clip, loop ? "true" : "false", extra, t[f]);
    else {
      bprintf(&b, "{%s\"layers\": [", extra);
      for (size_t i = 0; i < nl; i++) {
        char o[64];
        snprintf(o, sizeof o, "%.17g", sk_sample_layer_time(offsets[i], t[f]));
        bprintf(&b, i ? "," : "");
        bprintf(&b, layers[i], o);
      }
      bprintf(&b, "]}");
    }
    size_t n1;
    sk_pose *one = parse_text(s, an, b.data, &n1);
    ck_assert_uint_eq(n1, 1);
    ck_assert(range[f].frame_range && !one[0].frame_range);
    ck_assert_uint_eq(range[f].count, one[0].count);
    ck_assert_uint_eq(range[f].output, one[0].output);
    ck_assert(range[f].has_initial_skin == one[0].has_initial_skin);
    ck_assert_msg(memcmp(range[f].overrides, one[0].overrides, one[0].count * sizeof *one[0].overrides) == 0,
                  "clip %zu frame %zu (t = %.17g): range and single poses differ", clip, f, t[f]);
    sk_pose_array_free(one, n1);
  }
  sk_pose_array_free(range, nr);
  sk_strbuf_free(&b);
}

/* What the daemon's frame ranges parse to: sk_pose_parse_anim samples a
 * range of plain layers with sk_sample (cursors, chunks of frames) and
 * every frame's overrides are, memcmp for memcmp, those of the same frame
 * asked alone (sk_anim_sample), for every clip of every test asset, looping
 * and clamped, with "bones" on top; blended ranges likewise, and additive
 * or masked layers (sk_anim's path) too. */
START_TEST(test_range_poses_are_single_poses) {
  const char *asset = k_assets[_i];
  sk_skeleton *s;
  sk_anim *an;
  load(asset, &s, &an);
  /* "bones" on top of the clip: the first bone moved. */
  json_t *name = json_string(s->bones[0].name);
  char *q = json_dumps(name, JSON_ENCODE_ANY);
  ck_assert_ptr_nonnull(q);
  char extra[512];
  snprintf(extra, sizeof extra, "\"bones\": {%s: {\"position\": [1, 2, 3]}}, ", q);
  free(q);
  json_decref(name);
  for (size_t clip = 0; clip < an->clip_count; clip++)
    for (int loop = 0; loop < 2; loop++) {
      size_t n;
      double *t = range_times(sk_anim_clip_duration(an, clip), 30, &n);
      compare_range_with_singles(s, an, NULL, NULL, 0, clip, loop, "", t, n);
      if (clip == 0)
        compare_range_with_singles(s, an, NULL, NULL, 0, clip, loop, extra, t, n);
      free(t);
    }
  size_t nc = an->clip_count, n;
  double *t = range_times(sk_anim_clip_duration(an, 0), 24, &n);
  char l0[128], l1[128], l2[160];
  snprintf(l0, sizeof l0, "{\"animation\": 0, \"time\": %%s, \"weight\": 0.3, \"loop\": true}");
  snprintf(l1, sizeof l1, "{\"animation\": %zu, \"time\": %%s, \"weight\": 0.7}", 1 % nc);
  snprintf(l2, sizeof l2, "{\"animation\": %zu, \"time\": %%s, \"weight\": 0.45, \"loop\": true, \"additive\": true}",
           2 % nc);
  const char *const plain[2] = {l0, l1}, *const mixed[3] = {l0, l1, l2};
  const double offsets[3] = {0, 0.25, -0.1};
  compare_range_with_singles(s, an, plain, offsets, 2, 0, false, "", t, n);
  compare_range_with_singles(s, an, mixed, offsets, 3, 0, false, "", t, n);
  free(t);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* A sampler of some clips only: the clips named are the full sampler's,
 * bit for bit; a context on another clip is refused. */
START_TEST(test_sampler_of_some_clips) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  ck_assert_uint_ge(an->clip_count, 2);
  sk_anim_layer l = {.clip = 1, .weight = 1, .loop = true};
  sk_sampler *sp, *all;
  ck_assert_int_eq(sk_sampler_create_clips(an, &l, 1, &sp), 0);
  ck_assert_int_eq(sk_sampler_create(an, &all), 0);
  ck_assert_uint_lt(sk_sampler_memory(sp), sk_sampler_memory(all));
  size_t n;
  double *t = range_times(sk_anim_clip_duration(an, 1), 60, &n);
  compare_layers("Fox.glb", sp, &l, 1, t, n);
  free(t);
  sk_sample_ctx *c = NULL;
  sk_anim_layer other = {.clip = 0, .weight = 1};
  ck_assert_int_eq(sk_sample_ctx_create(sp, &other, 1, &c), SK_ERANGE);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(sk_sampler_create_clips(an, NULL, 1, &sp), SK_EINVAL);
  sk_sampler_destroy(all);
  sk_sampler_destroy(sp);
  sk_anim_destroy(an);
  sk_skeleton_destroy(s);
}
END_TEST

/* sk_sampler_share from four threads at once: one sampler is published,
 * every hold gets it, the losers' samplers are freed (ASan and valgrind
 * see any leak); a hold keeps the anim after its last other reference and
 * samples sk_anim's bits; Babylon-format clips get none. */
static void *share_and_hold(void *arg) {
  if (sk_sampler_share(arg, SK_SAMPLER_SHARE_MAX) != 0)
    return NULL;
  return sk_sampler_hold_shared(arg);
}

START_TEST(test_shared_sampler) {
  sk_skeleton *s;
  sk_anim *an;
  load("Fox.glb", &s, &an);
  ck_assert_ptr_null(sk_sampler_hold_shared(an));
  /* over the cap: not kept */
  ck_assert_int_eq(sk_sampler_share(an, 1000), SK_ETOOBIG);
  ck_assert_ptr_null(sk_sampler_hold_shared(an));
  pthread_t th[4];
  void *held[4];
  for (int k = 0; k < 4; k++)
    ck_assert_int_eq(pthread_create(&th[k], NULL, share_and_hold, an), 0);
  for (int k = 0; k < 4; k++)
    ck_assert_int_eq(pthread_join(th[k], &held[k]), 0);
  for (int k = 0; k < 4; k++) {
    ck_assert_ptr_nonnull(held[k]);
    ck_assert_ptr_eq(held[k], held[0]);
  }
  sk_sampler *sp = held[0];
  ck_assert(sk_sampler_is_shared(sp));
  ck_assert_ptr_eq(sk_sampler_anim(sp), an);
  ck_assert_int_eq(sk_sampler_share(an, 1000), 0); /* already there: kept */
  sk_sampler *again = sk_sampler_hold_shared(an);
  ck_assert_ptr_eq(again, sp);
  sk_sampler_destroy(again);
  sk_anim_destroy(an); /* the import's reference: the holds keep it */
  for (size_t c = 0; c < sk_sampler_anim(sp)->clip_count; c++) {
    sk_anim_layer l = {.clip = c, .weight = 1, .loop = true};
    size_t n;
    double *t = range_times(sk_anim_clip_duration(sk_sampler_anim(sp), c), 30, &n);
    compare_layers("Fox.glb", sp, &l, 1, t, n);
    free(t);
  }
  for (int k = 0; k < 4; k++)
    sk_sampler_destroy(held[k]); /* the last frees the anim and its sampler */
  sk_skeleton_destroy(s);
  sk_anim *b; /* no clip: nothing to share */
  ck_assert_int_eq(sk_anim_create_babylon_empty(3, &b), 0);
  ck_assert_int_eq(sk_sampler_share(b, SK_SAMPLER_SHARE_MAX), 0);
  ck_assert_ptr_null(sk_sampler_hold_shared(b));
  sk_anim_destroy(b);
  ck_assert(!sk_sampler_is_shared(NULL));
}
END_TEST

/* Whether sk_sample should build a Babylon-format clip (sk_sample.h): no
 * "_matrix" or RELATIVE channel, and in each channel every interval steps
 * (its start key STEP), every one is Hermite (the start key's out-tangent,
 * the end key's in-tangent) or every one lerps or slerps. `kinds` counts
 * the built clips' channels of each: [0] lerp/slerp, [1] STEP, [2] Hermite. */
static bool babylon_uniform(const sk_anim_clip *c, size_t kinds[3]) {
  size_t k3[3] = {0, 0, 0};
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->path == SK_ANIM_MATRIX || ch->relative)
      return false;
    int kind = 0;
    for (size_t i = 0; ch->key_flags != NULL && i + 1 < ch->count; i++) {
      const int ik = (ch->key_flags[i] & SK_ANIM_KEY_STEP)                                             ? 1
                     : (ch->key_flags[i] & SK_ANIM_KEY_OUT) && (ch->key_flags[i + 1] & SK_ANIM_KEY_IN) ? 2
                                                                                                       : 0;
      if (i > 0 && ik != kind)
        return false;
      kind = ik;
    }
    k3[kind]++;
  }
  for (int i = 0; i < 3; i++)
    kinds[i] += k3[i];
  return true;
}

/* tests/data/fox-walk-babylon.json with its keys rewritten (`kind`): 0 as
 * they are (lerps and slerps), 1 Hermite (both tangents on every key), 2
 * STEP (every key's interpolation), 3 Hermite but for one key without
 * tangents in each channel (its intervals differ: not built). Tangents
 * vary with the key and component; a zero quaternion tangent would count
 * as none. */
static json_t *fox_variant(const json_t *fox, int kind) {
  json_t *v = json_deep_copy(fox);
  const json_t *bones = json_object_get(v, "bones");
  for (size_t b = 0; b < json_array_size(bones); b++) {
    const json_t *anims = json_object_get(json_array_get(bones, b), "animations");
    for (size_t a = 0; a < json_array_size(anims); a++) {
      const json_t *keys = json_object_get(json_array_get(anims, a), "keys");
      for (size_t k = 0; kind > 0 && k < json_array_size(keys); k++) {
        json_t *vals = json_object_get(json_array_get(keys, k), "values");
        const size_t w = json_array_size(vals); /* 3 (Vector3) or 4 (Quaternion) */
        const bool tangents = kind == 1 || (kind == 3 && k != 2);
        json_t *in = json_array(), *out = json_array();
        for (size_t i = 0; i < w; i++) {
          json_array_append_new(in, json_real(0.01 * (double)(1 + (k + i) % 5) - 0.02));
          json_array_append_new(out, json_real(-0.015 * (double)(1 + (k * 3 + i) % 7) + 0.05));
        }
        if (w == 3) {
          json_array_append_new(vals, kind == 2 || !tangents ? json_null() : json_incref(in));
          json_array_append_new(vals, kind == 2 || !tangents ? json_null() : json_incref(out));
          if (kind == 2)
            json_array_append_new(vals, json_integer(1));
        } else if (kind == 2) {
          for (size_t i = 0; i < 8; i++)
            json_array_append_new(vals, json_integer(0));
          json_array_append_new(vals, json_integer(1));
        } else if (tangents) {
          json_array_extend(vals, in);
          json_array_extend(vals, out);
        }
        json_decref(in);
        json_decref(out);
      }
    }
  }
  return v;
}

/* Babylon-format clips (tests/conformance/anim.jsonl's skeletons and
 * tests/data/fox-walk-babylon.json with its keys as they are, Hermite and
 * STEP): those whose channels each lerp or slerp, step or Hermite-
 * interpolate every interval are built, and every frame (times before, in
 * and after the range, looping or not, shuffled) equals sk_anim_sample on
 * every SIMD path; the others are not built (a context naming one is
 * SK_ERANGE); two Babylon layers are SK_ERANGE (Babylon blends them its own
 * way). */
START_TEST(test_babylon_clips_bit_identical) {
  sk_jsonl in;
  sk_jsonl_open(&in, "conformance/anim.jsonl");
  size_t built = 0, unbuilt = 0, frames = 0, kinds[3] = {0, 0, 0}, fox_built = 0;
  json_t *rec;
  size_t len;
  unsigned char *text = sk_test_read_asset("fox-walk-babylon.json", &len);
  json_t *fox = json_loadb((const char *)text, len, 0, NULL);
  free(text);
  ck_assert_ptr_nonnull(fox);
  int variant = 0;
  while ((rec = sk_jsonl_next(&in)) != NULL || variant < 4) {
    json_t *fv = rec == NULL ? fox_variant(fox, variant) : NULL;
    const json_t *j = rec != NULL ? json_object_get(json_object_get(rec, "case"), "skeleton") : fv;
    sk_skeleton *s;
    sk_anim *a;
    ck_assert_int_eq(sk_json_parse_skeleton_anim(j, "", 0, &s, &a, NULL), 0);
    sk_sampler *sp = NULL;
    if (a != NULL) /* (a skeleton without animations has none) */
      ck_assert_int_eq(sk_sampler_create(a, &sp), 0);
    for (size_t c = 0; a != NULL && c < a->clip_count; c++) {
      sk_anim_layer l = {.clip = c, .weight = 1, .loop = c % 2 == 1};
      sk_sample_ctx *ctx = NULL;
      const int rc = sk_sample_ctx_create(sp, &l, 1, &ctx);
      sk_sample_ctx_destroy(ctx);
      ck_assert_int_eq(rc, babylon_uniform(&a->clips[c], kinds) ? 0 : SK_ERANGE);
      if (rec == NULL)
        ck_assert_int_eq(rc, variant == 3 ? SK_ERANGE : 0);
      if (rc != 0) {
        unbuilt++;
        continue;
      }
      built++;
      fox_built += rec == NULL;
      sk_anim_layer two[2] = {l, l};
      ck_assert_int_eq(sk_sample_ctx_create(sp, two, 2, &ctx), SK_ERANGE);
      size_t n;
      double *t = range_times(sk_anim_clip_duration(a, c), 47, &n);
      frames += compare_layers("a Babylon-format skeleton", sp, &l, 1, t, n);
      for (size_t i = n; i > 1; i--) { /* shuffled: cursors jump back and forth */
        size_t k = (i * 7919u + 13u) % i;
        double x = t[i - 1];
        t[i - 1] = t[k];
        t[k] = x;
      }
      frames += compare_layers("a Babylon-format skeleton", sp, &l, 1, t, n);
      free(t);
    }
    sk_sampler_destroy(sp);
    sk_anim_destroy(a);
    sk_skeleton_destroy(s);
    if (rec != NULL)
      json_decref(rec);
    else
      json_decref(fv), variant++;
  }
  json_decref(fox);
  sk_jsonl_close(&in);
  printf("Babylon-format clips: %zu built (channels: %zu lerp/slerp, %zu STEP, %zu Hermite), %zu not (sampled "
         "channel by channel), %zu frames compared\n",
         built, kinds[0], kinds[1], kinds[2], unbuilt, frames);
  ck_assert_uint_eq(fox_built, 3);
  ck_assert_uint_ge(built, 10);
  ck_assert_uint_ge(unbuilt, 10);
  ck_assert_uint_ge(kinds[1], 20);
  ck_assert_uint_ge(kinds[2], 20);
  ck_assert_uint_gt(frames, 1000);
}
END_TEST

static Suite *sample_suite(void) {
  Suite *su = suite_create("sk_sample");
  TCase *tc = tcase_create("golden");
  tcase_set_timeout(tc, 120);
  size_t na = 0;
  while (k_assets[na] != NULL)
    na++;
  tcase_add_loop_test(tc, test_every_clip_every_frame_bit_identical, 0, (int)na);
  tcase_add_loop_test(tc, test_blended_layers_bit_identical, 0, (int)na);
  tcase_add_test(tc, test_kernel_layouts);
  tcase_add_test(tc, test_rest_memo);
  tcase_add_test(tc, test_babylon_clips_bit_identical);
  suite_add_tcase(su, tc);
  TCase *tp = tcase_create("pose_parser");
  tcase_add_test(tp, test_one_frame_range_is_a_range);
  tcase_add_test(tp, test_blended_ranges_parse);
  tcase_add_loop_test(tp, test_range_poses_are_single_poses, 0, (int)na);
  tcase_add_test(tp, test_sampler_of_some_clips);
  tcase_add_test(tp, test_shared_sampler);
  tcase_set_timeout(tp, 120);
  suite_add_tcase(su, tp);
  TCase *te = tcase_create("errors");
  tcase_add_test(te, test_errors);
  suite_add_tcase(su, te);
  return su;
}

int main(void) {
  SRunner *sr = srunner_create(sample_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
