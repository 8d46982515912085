#include "sk_sample_int.h"

#include "sk_anim_math.h"
#include "sk_cpu.h"
#include "sk_vsin.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An active layer of a context (zero-weight layers are dropped, as
 * sk_anim_sample_layers skips them). */
typedef struct samp_layer {
  const samp_clip *clip;
  double offset; /* seconds, see sk_sample_layer_time */
  bool loop;
  double speed; /* sk_anim_layer's */
  double w;      /* normalised weight */
  double amount; /* w / cumulative weight: the slerp amount of this layer */
  size_t *cur;   /* key cursor per timeline */
  double *grad;  /* per timeline, this frame: the gradient between key cur and cur + 1 */
  double *trs;   /* B * SK_ANIM_TRS: rest TRS where no channel of the clip drives */
} samp_layer;

struct sk_sample_ctx {
  const sk_sampler *s;
  size_t bones;
  size_t count;
  samp_layer *layers;
  const samp_lanes *lanes;
  double *sines; /* 2 * SAMP_LANES per rotation group and frame of a block: the arguments, then their sines */
  size_t lines;  /* the most timelines of a layer's clip */
  size_t *bkey;  /* one layer into rows: per frame f of a block, every timeline's key at f * lines */
  double *bgrad; /* and its gradient */
  size_t bytes;  /* what the context holds (sk_sample_ctx_memory) */
  double *blend; /* B * SK_ANIM_TRS, with more than one layer */
  /* More than one layer into rows (run_rows_blend): a block of B bones'
   * rows (SAMP_BLOCK doubles each) for the blend and one per layer (its
   * rest rows written once, at creation), their offsets, and per bone and
   * lane the dots, their signs, acos and three sines; one allocation. */
  double *acc, *lblocks, *b_num4, *b_acos, *b_sines;
  size_t nblk; /* blocks in lblocks: one per layer, or one for all (many layers: bounded memory) */
  int64_t *b_neg;
  size_t *boff;
  void *blocks;
  samp_blend bl;          /* owned lists: what a block blends */
  samp_rest *brest;       /* owned: the components no layer drives, and */
  size_t nbrest;
  double *bvals;          /* owned: their blended values, B * SK_ANIM_TRS */
  /* Layers the plain blend would not give Babylon's bits (sk_anim__blend_plain
   * false): frame by frame, each layer's TRS, then sk_anim__late_blend
   * (rows: the driven components written from it); NULL otherwise. */
  uint8_t *drives;   /* owned: [count][B] */
  const double **lsrc; /* owned: [2 * count] */
  double *lw;        /* owned: [2 * count] */
  samp_rest *driven; /* owned: the components some layer drives */
  size_t ndriven;
  size_t bytes_late;
};

/* ---- the group paths ------------------------------------------------------ */

/* The vectors never cross a call boundary the ABI governs (the template's
 * functions are reached through samp_lanes pointers with scalar and
 * pointer arguments only), so GCC's note that passing one without AVX-512
 * differs from passing it with it does not apply (GCC emits it at the end
 * of the unit, so it is off for the whole file). */
#pragma GCC diagnostic ignored "-Wpsabi"
#define SKL(name) name##_generic
#define SKL_ATTR
#include "sk_sample_lanes.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SAMP_X86 1
#define SKL(name) name##_avx2
#define SKL_ATTR __attribute__((target("avx2")))
#include "sk_sample_lanes.h"
#define SKL(name) name##_avx512
#define SKL_ATTR __attribute__((target("avx512f,avx2")))
#define SKL_SQRT(v) ((samp_vd)_mm512_sqrt_pd((__m512d)(v)))
#include "sk_sample_lanes.h"
#endif

/* The path of ISA `isa` (-1: the best this CPU has); NULL when the CPU
 * lacks it or no path has that ISA. */
static const samp_lanes *lanes_path(int isa) {
#ifdef SAMP_X86
  if ((isa < 0 || isa == SK_ISA_AVX512) && sk_cpu_has(SK_CPU_AVX512F | SK_CPU_AVX2))
    return &lanes_avx512;
  if ((isa < 0 || isa == SK_ISA_AVX2) && sk_cpu_has(SK_CPU_AVX2))
    return &lanes_avx2;
#endif
  if (isa < 0 || isa == SK_ISA_SCALAR)
    return &lanes_generic;
  return NULL;
}

int sk_sample_ctx_set_path(sk_sample_ctx *c, const char *path) {
  /* "avx512", "avx2" or "generic" (the plain C lanes) */
  const int isa = sk_isa_parse(path);
  if (c == NULL || (isa != SK_ISA_AVX512 && isa != SK_ISA_AVX2 && isa != SK_ISA_SCALAR))
    return SK_EINVAL;
  const samp_lanes *v = lanes_path(isa);
  if (v == NULL)
    return SK_EUNSUPPORTED;
  c->lanes = v;
  return 0;
}

/* ---- contexts ----------------------------------------------------------- */

void sk_sample_ctx_destroy(sk_sample_ctx *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; c->layers != NULL && i < c->count; i++) {
    free(c->layers[i].cur);
    free(c->layers[i].grad);
    free(c->layers[i].trs);
  }
  free(c->layers);
  free(c->sines);
  free(c->bkey);
  free(c->bgrad);
  free(c->blend);
  free(c->blocks);
  free(c->boff);
  free(c->bl.rot);
  free(c->bl.ts);
  free(c->brest);
  free(c->bvals);
  free(c->drives), free(c->lsrc), free(c->lw), free(c->driven);
  free(c);
}

/* Layer i's block `src` into the blend's block c->acc (sk_anim_sample_layers'
 * arithmetic in each lane, in its order), over what `bl` lists: the first
 * layer weighted, each next one's translations and scalings weighted in
 * and its rotations slerped towards, the acos and sines as arrays. */
static void blend_step(sk_sample_ctx *c, const samp_blend *bl, size_t i, const double *src) {
  const samp_lanes *v = c->lanes;
  const samp_layer *l = &c->layers[i];
  v->blend_ts(c->acc, src, bl, l->w, i == 0);
  if (i == 0)
    return;
  v->blend_dots(c->acc, src, bl, c->b_num4, c->b_neg);
  sk_vsin_acos(c->b_num4, c->b_acos, SAMP_BW * bl->nrot);
  v->blend_args(c->b_num4, c->b_acos, SAMP_BW * bl->nrot, l->amount, c->b_sines);
  sk_vsin(c->b_sines, c->b_sines, 3 * SAMP_BW * bl->nrot);
  v->blend_apply(c->acc, src, bl, l->amount, c->b_num4, c->b_neg, c->b_sines);
}

/* A blend's lists (c->bl) and constant rows (c->brest, c->bvals). A component is
 * driven when some layer's clip has a channel on it; the others hold the
 * rest TRS in every layer's block in every frame, so the blend gives them
 * one value: computed here by blend_step itself, on blocks holding the rest
 * TRS everywhere, so each is the value every frame would get. Channels
 * drive whole translations, rotations or scalings, so the lists do too. */
static int blend_plan(sk_sample_ctx *c) {
  const size_t nb = c->bones, nb1 = nb ? nb : 1;
  const double *rest = c->s->anim->rest;
  size_t *at_rest = calloc(nb1 * SK_ANIM_TRS, sizeof *at_rest); /* layers leaving the component at rest */
  size_t *all = malloc(3 * nb1 * sizeof *all);
  double *src = aligned_alloc(64, SAMP_BLOCK * nb1 * sizeof *src);
  c->bl.rot = malloc(nb1 * sizeof *c->bl.rot);
  c->bl.ts = malloc(2 * nb1 * sizeof *c->bl.ts);
  c->brest = malloc(3 * nb1 * sizeof *c->brest);
  c->bvals = malloc(SK_ANIM_TRS * nb1 * sizeof *c->bvals);
  int rc = at_rest && all && src && c->bl.rot && c->bl.ts && c->brest && c->bvals ? 0 : SK_ENOMEM;
  for (size_t i = 0; !rc && i < c->count; i++) {
    const samp_clip *cl = c->layers[i].clip;
    for (size_t r = 0; r < cl->rest_count; r++)
      for (int k = 0; k < cl->rest[r].width; k++)
        at_rest[cl->rest[r].bone * SK_ANIM_TRS + (size_t)(cl->rest[r].comp + k)]++;
  }
  if (!rc) {
    /* every component, on blocks of the rest TRS */
    samp_blend every = {.rot = all, .nrot = nb, .ts = all + nb, .nts = 2 * nb};
    for (size_t b = 0; b < nb; b++) {
      all[b] = b;
      all[nb + 2 * b] = b * SK_ANIM_TRS;
      all[nb + 2 * b + 1] = b * SK_ANIM_TRS + 7;
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        for (size_t q = 0; q < SAMP_BW; q++)
          src[b * SAMP_BLOCK + k * SAMP_BW + q] = rest[b * SK_ANIM_TRS + k];
    }
    for (size_t i = 0; i < c->count; i++)
      blend_step(c, &every, i, src);
    static const int kinds[3][2] = {{0, 3}, {3, 4}, {7, 3}}; /* first component, width */
    for (size_t b = 0; b < nb; b++) {
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        c->bvals[b * SK_ANIM_TRS + k] = c->acc[b * SAMP_BLOCK + k * SAMP_BW];
      for (int k = 0; k < 3; k++)
        if (at_rest[b * SK_ANIM_TRS + (size_t)kinds[k][0]] == c->count)
          c->brest[c->nbrest++] = (samp_rest){.bone = b, .comp = kinds[k][0], .width = kinds[k][1]};
      if (at_rest[b * SK_ANIM_TRS + 3] < c->count)
        c->bl.rot[c->bl.nrot++] = b;
      if (at_rest[b * SK_ANIM_TRS] < c->count)
        c->bl.ts[c->bl.nts++] = b * SK_ANIM_TRS;
      if (at_rest[b * SK_ANIM_TRS + 7] < c->count)
        c->bl.ts[c->bl.nts++] = b * SK_ANIM_TRS + 7;
      for (int k = 0; k < 3; k++)
        if (at_rest[b * SK_ANIM_TRS + (size_t)kinds[k][0]] == c->count) /* Babylon leaves it alone */
          memcpy(c->bvals + b * SK_ANIM_TRS + kinds[k][0], rest + b * SK_ANIM_TRS + kinds[k][0],
                 (size_t)kinds[k][1] * sizeof *c->bvals);
        else if (c->drives != NULL)
          c->driven[c->ndriven++] = (samp_rest){.bone = b, .comp = kinds[k][0], .width = kinds[k][1]};
    }
  }
  free(at_rest);
  free(all);
  free(src);
  return rc;
}

/* What each active layer drives (the late bindings' blend, frame by frame). */
static int late_plan(sk_sample_ctx *c, const sk_anim_layer *layers, size_t count, double total) {
  const size_t nb1 = c->bones ? c->bones : 1;
  c->drives = malloc(c->count * nb1);
  c->lsrc = malloc(2 * c->count * sizeof *c->lsrc);
  c->lw = malloc(2 * c->count * sizeof *c->lw);
  c->driven = malloc(3 * nb1 * sizeof *c->driven);
  if (c->drives == NULL || c->lsrc == NULL || c->lw == NULL || c->driven == NULL)
    return SK_ENOMEM;
  for (size_t i = 0, k = 0; i < count; i++) {
    if (layers[i].weight / total == 0)
      continue; /* dropped, as sk_sample_ctx_create drops it */
    sk_anim__layer_drives(c->s->anim, &layers[i], NULL, c->drives + k * nb1);
    c->lw[k] = sk_anim__late_weight(layers[i].weight, total);
    k++;
  }
  c->bytes_late = c->count * (nb1 + 4 * sizeof(double)) + 3 * nb1 * sizeof *c->driven;
  return 0;
}

int sk_sample_ctx_create(const sk_sampler *s, const sk_anim_layer *layers, size_t count, sk_sample_ctx **out) {
  return sk_sample_ctx_create_ext(s, layers, NULL, count, out);
}

int sk_sample_ctx_create_ext(const sk_sampler *s, const sk_anim_layer *layers, const sk_anim_layer_ext *ext,
                             size_t count, sk_sample_ctx **out) {
  if (s == NULL || layers == NULL || count == 0 || out == NULL)
    return SK_EINVAL;
  *out = NULL;
  /* The checks and the weight arithmetic of sk_anim_sample_layers, in its
   * order, so `w` and `amount` carry its bits. */
  double total = 0;
  for (size_t i = 0; i < count; i++) {
    if (!(layers[i].weight >= 0) || !isfinite(layers[i].weight) || layers[i].clip >= s->clip_count ||
        !s->clips[layers[i].clip].built || (count > 1 && s->clips[layers[i].clip].babylon != NULL))
      return SK_ERANGE;
    total += layers[i].weight;
  }
  if (!(total > 0) || !isfinite(total))
    return SK_ERANGE;
  const size_t nb = s->anim->bone_count, trs_bytes = (nb ? nb : 1) * SK_ANIM_TRS * sizeof(double);
  sk_sample_ctx *c = calloc(1, sizeof *c);
  if (c == NULL || (c->layers = calloc(count, sizeof *c->layers)) == NULL) {
    free(c);
    return SK_ENOMEM;
  }
  c->s = s;
  c->bones = nb;
  c->lanes = lanes_path(-1);
  size_t rot = 1;
  c->lines = 1;
  for (size_t i = 0; i < count; i++) {
    const samp_clip *cl = &s->clips[layers[i].clip];
    rot = cl->rot_groups > rot ? cl->rot_groups : rot;
    c->lines = cl->line_count > c->lines ? cl->line_count : c->lines;
  }
  if ((c->sines = malloc(2 * SAMP_LANES * SAMP_LANES * rot * sizeof *c->sines)) == NULL ||
      (c->bkey = malloc(SAMP_LANES * c->lines * sizeof *c->bkey)) == NULL ||
      (c->bgrad = malloc(SAMP_LANES * c->lines * sizeof *c->bgrad)) == NULL) {
    sk_sample_ctx_destroy(c);
    return SK_ENOMEM;
  }
  double cum = 0;
  for (size_t i = 0; i < count; i++) {
    double w = layers[i].weight / total;
    if (w == 0)
      continue;
    samp_layer *l = &c->layers[c->count++];
    l->clip = &s->clips[layers[i].clip];
    l->offset = layers[i].time;
    l->loop = layers[i].loop;
    l->speed = ext != NULL ? ext[i].speed : 0;
    l->w = w;
    cum = c->count == 1 ? w : cum + w;
    l->amount = w / cum;
    l->cur = calloc(l->clip->line_count ? l->clip->line_count : 1, sizeof *l->cur);
    l->grad = calloc(l->clip->line_count ? l->clip->line_count : 1, sizeof *l->grad);
    l->trs = malloc(trs_bytes);
    if (l->cur == NULL || l->grad == NULL || l->trs == NULL) {
      sk_sample_ctx_destroy(c);
      return SK_ENOMEM;
    }
    memcpy(l->trs, s->anim->rest, nb * SK_ANIM_TRS * sizeof(double));
  }
  /* More than one layer: a frame of plain TRS arrays is blended into
   * c->blend (blend_layers); rows go a block at a time (run_rows_blend). */
  const size_t nb1 = nb ? nb : 1;
  /* acc, a block per layer (up to SAMP_KEEP_LAYERS; past that one for
   * all, its rest rows written again each block); num4, neg, acos, 3 sines */
  c->nblk = c->count <= SAMP_KEEP_LAYERS ? c->count : 1;
  const size_t blk_bytes = ((1 + c->nblk) * SAMP_BLOCK + 6 * SAMP_BW) * nb1 * sizeof(double);
  if (c->count > 1 && ((c->blend = malloc(trs_bytes)) == NULL || (c->blocks = aligned_alloc(64, blk_bytes)) == NULL ||
                       (c->boff = malloc(nb1 * sizeof *c->boff)) == NULL)) {
    sk_sample_ctx_destroy(c);
    return SK_ENOMEM;
  }
  if (c->count > 1) {
    /* 64-byte lines: each vector store of a row is one line, not two;
     * zeros: the lanes a partial block never samples are still computed */
    memset(c->blocks, 0, blk_bytes);
    c->acc = c->blocks;
    c->lblocks = c->acc + SAMP_BLOCK * nb1;
    c->b_num4 = c->lblocks + c->nblk * SAMP_BLOCK * nb1;
    c->b_neg = (int64_t *)(void *)(c->b_num4 + SAMP_BW * nb1);
    c->b_acos = c->b_num4 + 2 * SAMP_BW * nb1;
    c->b_sines = c->b_num4 + 3 * SAMP_BW * nb1;
    for (size_t b = 0; b < nb; b++)
      c->boff[b] = b * SAMP_BLOCK;
    for (size_t i = 0; c->nblk == c->count && i < c->count; i++) {
      const sk_sample_out lo = {.f64 = c->lblocks + i * SAMP_BLOCK * nb1, .offset = c->boff, .pose_stride = SAMP_BW};
      c->lanes->rest_fill(c->layers[i].clip->rest, c->layers[i].clip->rest_count, s->anim->rest, 0, SAMP_BW, &lo);
    }
    if ((!sk_anim__blend_plain(s->anim, layers, NULL, count) && late_plan(c, layers, count, total) != 0) ||
        blend_plan(c) != 0) {
      sk_sample_ctx_destroy(c);
      return SK_ENOMEM;
    }
  }
  c->bytes = sizeof *c + count * sizeof *c->layers + 2 * SAMP_LANES * SAMP_LANES * rot * sizeof *c->sines +
             SAMP_LANES * c->lines * (sizeof *c->bkey + sizeof *c->bgrad) +
             (c->count > 1 ? trs_bytes + blk_bytes + nb1 * sizeof *c->boff +
                                 3 * nb1 * (sizeof(size_t) + sizeof *c->brest) + SK_ANIM_TRS * nb1 * sizeof *c->bvals
                           : 0);
  for (size_t i = 0; i < c->count; i++)
    c->bytes += trs_bytes + (c->layers[i].clip->line_count + 1) * (sizeof(size_t) + sizeof(double));
  c->bytes += c->bytes_late;
  *out = c;
  return 0;
}

const sk_anim *sk_sample_ctx_anim(const sk_sample_ctx *c) { return c->s->anim; }

size_t sk_sample_ctx_memory(const sk_sample_ctx *c) { return c != NULL ? c->bytes : 0; }

/* A clip's rest rows with the rest TRS, or a blend's constant rows with
 * their blended values: what rest_fill writes for the context. */
size_t sk_sample_ctx_rest(const sk_sample_ctx *c, sk_sample_rest *rows, size_t cap) {
  const bool one = c->count == 1;
  const samp_rest *rest = one ? c->layers[0].clip->rest : c->brest;
  const size_t nr = one ? c->layers[0].clip->rest_count : c->nbrest;
  const double *values = one ? c->s->anim->rest : c->bvals;
  size_t n = 0;
  for (size_t r = 0; r < nr; r++) {
    const samp_rest *rs = &rest[r];
    for (int i = 0; i < rs->width; i++, n++) {
      const size_t comp = (size_t)(rs->comp + i);
      if (n < cap)
        rows[n] = (sk_sample_rest){.bone = rs->bone, .comp = comp, .value = values[rs->bone * SK_ANIM_TRS + comp]};
    }
  }
  return n;
}

bool sk_sample_rest_memo_same(sk_sample_rest_memo *m, const sk_sample_ctx *c, size_t bones) {
  const size_t cap = (bones ? bones : 1) * SK_ANIM_TRS;
  if (cap > m->cap) {
    sk_sample_rest_memo_close(m);
    m->rows = malloc(cap * sizeof *m->rows);
    m->next = malloc(cap * sizeof *m->next);
    if (m->rows == NULL || m->next == NULL) {
      sk_sample_rest_memo_close(m);
      return false;
    }
    m->cap = cap;
    m->count = SIZE_MAX;
  }
  size_t k = sk_sample_ctx_rest(c, m->next, cap);
  k = k > cap ? SIZE_MAX : k; /* not a context of such a skeleton */
  if (k != SIZE_MAX && k == m->count && memcmp(m->rows, m->next, k * sizeof *m->rows) == 0)
    return true;
  sk_sample_rest *t = m->rows;
  m->rows = m->next;
  m->next = t;
  m->count = k;
  return false;
}

void sk_sample_rest_memo_close(sk_sample_rest_memo *m) {
  free(m->rows);
  free(m->next);
  *m = (sk_sample_rest_memo){.count = SIZE_MAX};
}

/* ---- sampling: sk_anim.c's arithmetic, operation for operation ---------- */

static size_t find_key(const double *f, size_t n, size_t key, double frame) {
  if (isnan(frame))
    return 0; /* sk_anim's search ends at 0 for NaN */
  if (key >= n || f[key] > frame)
    key = 0;
  for (int step = 0; step < 4; step++) {
    if (key + 1 >= n || f[key + 1] > frame)
      return key;
    key++;
  }
  size_t lo = key, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (frame >= f[mid])
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Clamps `frame` to the timeline as RuntimeAnimation.goToFrame does, moves
 * the cursor to the key at or before it and sets the gradient toward the
 * next key (sample_channel's, for every channel on the timeline). */
static void line_seek(const samp_line *ln, size_t *cur, double *grad, double frame) {
  const double *f = ln->frames;
  const size_t n = ln->count;
  if (frame < f[0])
    frame = f[0];
  else if (frame > f[n - 1])
    frame = f[n - 1];
  size_t key = *cur = find_key(f, n, *cur, frame);
  if (key + 1 <= n - 1) {
    double frame_delta = f[key + 1] - f[key];
    *grad = (frame - f[key]) / frame_delta;
  }
}

static double clip_frame(double end_frame, double time, bool loop) {
  double frame = time * SK_ANIM_FPS;
  if (loop && end_frame > 0 && isfinite(frame)) {
    frame = sk_fdlibm_fmod(frame, end_frame);
    if (frame < 0)
      frame += end_frame;
  }
  return frame;
}

/* Samples layer `l` at frame time `t` into `trs` (B * SK_ANIM_TRS), which
 * holds the rest TRS wherever no channel of the clip writes: each channel
 * writes the same components every frame, so those stay as they are. The
 * rotation groups' sines are computed together (sk_vsin: the same bits as
 * sk_fdlibm_sin one by one). */
/* Moves the layer's cursors to frame time `t` and sets its gradients. */
static void layer_seek(samp_layer *l, double t) {
  const samp_clip *c = l->clip;
  const double time = sk_sample_layer_time(l->offset, t);
  double frame = c->babylon != NULL ? sk_anim__layer_frame(c->babylon, time, l->loop, l->speed)
                 : l->speed != 0    ? sk_anim__speed_frame(SK_ANIM_FPS, 0, c->end_frame, time, l->loop, l->speed)
                                    : clip_frame(c->end_frame, time, l->loop);
  for (size_t k = 0; k < c->line_count; k++)
    line_seek(&c->lines[k], &l->cur[k], &l->grad[k], frame);
}

/* The rotation groups' sines at the layer's cursors, in ctx->sines. */
static void layer_sines(sk_sample_ctx *ctx, const samp_layer *l) {
  const samp_clip *c = l->clip;
  for (size_t k = 0; k < c->rot_groups; k++) {
    const samp_group *g = &c->groups[k];
    ctx->lanes->rot_args(g, l->cur[g->line], l->grad[g->line], ctx->sines + 2 * SAMP_LANES * k);
  }
  sk_vsin(ctx->sines, ctx->sines, 2 * SAMP_LANES * c->rot_groups);
}

static void layer_sample(sk_sample_ctx *ctx, samp_layer *l, double t, double *trs) {
  const samp_clip *c = l->clip;
  const samp_lanes *v = ctx->lanes;
  layer_seek(l, t);
  layer_sines(ctx, l);
  for (size_t k = 0; k < c->rot_groups; k++) {
    const samp_group *g = &c->groups[k];
    v->rot_finish(g, l->cur[g->line], l->grad[g->line], ctx->sines + 2 * SAMP_LANES * k, trs);
  }
  for (size_t k = c->rot_groups; k < c->group_count; k++) {
    const samp_group *g = &c->groups[k];
    (g->kind == GROUP_VEC3 ? v->vec3 : v->other)(g, l->cur[g->line], l->grad[g->line], trs);
  }
}

/* Frame f of a block of one layer: its cursors moved, their keys and
 * gradients kept as frame f of the block. */
static void layer_frame(sk_sample_ctx *ctx, samp_layer *l, double t, size_t f) {
  const samp_clip *c = l->clip;
  layer_seek(l, t);
  memcpy(ctx->bkey + f * ctx->lines, l->cur, c->line_count * sizeof *l->cur);
  memcpy(ctx->bgrad + f * ctx->lines, l->grad, c->line_count * sizeof *l->grad);
}

/* The block's groups, frames p0 .. p0 + m - 1, to the rows. Frames past m
 * repeat frame 0's keys: computed, never stored. The sines of every
 * rotation group and frame go through sk_vsin together. */
static void layer_groups(sk_sample_ctx *ctx, const samp_layer *l, size_t p0, size_t m, const sk_sample_out *o) {
  const samp_clip *c = l->clip;
  const samp_lanes *v = ctx->lanes;
  const size_t lines = ctx->lines, stride = 2 * SAMP_LANES * c->rot_groups;
  for (size_t f = m; f < SAMP_LANES; f++) {
    memcpy(ctx->bkey + f * lines, ctx->bkey, c->line_count * sizeof *ctx->bkey);
    memcpy(ctx->bgrad + f * lines, ctx->bgrad, c->line_count * sizeof *ctx->bgrad);
  }
  for (size_t k = 0; k < c->rot_groups; k++)
    v->rot_args_block(&c->groups[k], ctx->bkey, ctx->bgrad, lines, ctx->sines + 2 * SAMP_LANES * k, stride);
  sk_vsin(ctx->sines, ctx->sines, SAMP_LANES * stride);
  for (size_t k = 0; k < c->rot_groups; k++)
    v->rot_rows(&c->groups[k], ctx->bkey, ctx->bgrad, lines, ctx->sines + 2 * SAMP_LANES * k, stride, p0, m, o);
  for (size_t k = c->rot_groups; k < c->group_count; k++)
    (c->groups[k].kind == GROUP_VEC3 ? v->vec3_rows : v->other_rows)(&c->groups[k], ctx->bkey, ctx->bgrad, lines, p0,
                                                                      m, o);
}

/* Layer `l` into the kernel's rows: SAMP_LANES frames at a time (blocks
 * end on multiples of SAMP_LANES, so none crosses a 16-pose block), each
 * group's frames computed together and stored as whole rows. */
static void run_rows_layer(sk_sample_ctx *c, samp_layer *l, const double *times, size_t begin, size_t end,
                           const sk_sample_out *o) {
  const samp_clip *cl = l->clip;
  for (size_t p0 = begin; p0 < end;) {
    size_t stop = (p0 / SAMP_LANES + 1) * SAMP_LANES;
    stop = stop < end ? stop : end;
    for (size_t p = p0; p < stop; p++)
      layer_frame(c, l, times[p], p - p0);
    layer_groups(c, l, p0, stop - p0, o);
    if (!o->rest_kept && !o->driven_only)
      c->lanes->rest_fill(cl->rest, cl->rest_count, c->s->anim->rest, p0, stop - p0, o);
    p0 = stop;
  }
}

/* Quaternion.SlerpToRef of every bone's blended rotation t (r + b * 10 +
 * 3) towards layer rotation s (l + b * 10 + 3) by `amount`, in place
 * (sk_anim__slerp_n: sk_anim__quat_slerp's bits, the acos and sines as
 * arrays). */
static void blend_rotations(sk_sample_ctx *c, double *r, const double *l, double amount) {
  sk_anim__slerp_n(r + 3, SK_ANIM_TRS, l + 3, SK_ANIM_TRS, amount, r + 3, SK_ANIM_TRS, c->bones);
}

/* sk_anim_sample_layers' blend of the sampled layers into `r` (B *
 * SK_ANIM_TRS). The weights are read once: `r` could alias a layer's
 * TRS as far as the compiler knows. */
static const double *blend_layers(sk_sample_ctx *c, double *r) {
  if (c->drives != NULL) {
    for (size_t i = 0; i < c->count; i++)
      c->lsrc[i] = c->layers[i].trs;
    sk_anim__late_blend(c->s->anim, c->lsrc, c->lw, c->drives, c->count, c->lsrc + c->count, c->lw + c->count, r);
    return r;
  }
  const size_t n = c->bones;
  const samp_layer *l0 = &c->layers[0];
  const double w0 = l0->w;
  for (size_t b = 0; b < n; b++) {
    const double *s = l0->trs + b * SK_ANIM_TRS;
    double *t = r + b * SK_ANIM_TRS;
    for (int j = 0; j < 3; j++) {
      t[j] = s[j] * w0;
      t[7 + j] = s[7 + j] * w0;
    }
    memcpy(t + 3, s + 3, 4 * sizeof *t);
  }
  for (size_t i = 1; i < c->count; i++) {
    const samp_layer *l = &c->layers[i];
    const double w = l->w;
    for (size_t b = 0; b < n; b++) {
      double *t = r + b * SK_ANIM_TRS;
      const double *s = l->trs + b * SK_ANIM_TRS;
      for (int j = 0; j < 3; j++) {
        t[j] += s[j] * w;
        t[7 + j] += s[7 + j] * w;
      }
    }
    blend_rotations(c, r, l->trs, l->amount);
  }
  for (size_t k = 0; k < c->nbrest; k++) { /* what no layer drives: its rest value, as Babylon leaves it */
    const samp_rest *rs = &c->brest[k];
    memcpy(r + rs->bone * SK_ANIM_TRS + rs->comp, c->bvals + rs->bone * SK_ANIM_TRS + rs->comp,
           (size_t)rs->width * sizeof *r);
  }
  return r;
}

static void put_aos(const double *trs, size_t bones, size_t p, const sk_sample_out *o) {
  size_t at = p * bones * SK_ANIM_TRS;
  if (o->f64 != NULL)
    memcpy(o->f64 + at, trs, bones * SK_ANIM_TRS * sizeof *trs);
  else
    for (size_t i = 0; i < bones * SK_ANIM_TRS; i++)
      o->f32[at + i] = (float)trs[i];
}

/* More than one layer into the kernel's rows, SAMP_BW frames at a time
 * (never across the kernel's 16-pose blocks): each layer sampled into its
 * block (its rest rows there from creation, up to SAMP_KEEP_LAYERS layers;
 * past that one block for all, rest rows and all), the first weighted into
 * c->acc, each next blended in (blend_step: only what some layer drives),
 * then the block's frames to the rows, and the constant rows unless the
 * caller's rows hold them. Lanes of a partial block past its frames hold
 * older values: computed, never stored. */
static void run_rows_blend(sk_sample_ctx *c, const double *times, size_t begin, size_t end, const sk_sample_out *out) {
  if (c->drives != NULL) { /* the late bindings: a frame's TRS, its driven rows */
    for (size_t p = begin; p < end; p++) {
      for (size_t i = 0; i < c->count; i++)
        layer_sample(c, &c->layers[i], times[p], c->layers[i].trs);
      c->lanes->rest_fill(c->driven, c->ndriven, blend_layers(c, c->blend), p, 1, out);
      if (!out->rest_kept)
        c->lanes->rest_fill(c->brest, c->nbrest, c->bvals, p, 1, out);
    }
    return;
  }
  const size_t n = c->bones, per = SAMP_BLOCK * (n ? n : 1);
  for (size_t p0 = begin; p0 < end;) {
    size_t p1 = (p0 / SAMP_BW + 1) * SAMP_BW;
    p1 = p1 < end ? p1 : end;
    const size_t q0 = p0 % SAMP_BW, q1 = q0 + (p1 - p0);
    const double *t = times + (p0 - q0); /* lane q is frame p0 - q0 + q */
    for (size_t i = 0; i < c->count; i++) {
      const bool own = c->nblk == c->count; /* the layer's own block, its rest rows in place */
      double *src = c->lblocks + (own ? i : 0) * per;
      const sk_sample_out lo = {.f64 = src, .offset = c->boff, .pose_stride = SAMP_BW, .rest_kept = own};
      run_rows_layer(c, &c->layers[i], t, q0, q1, &lo);
      blend_step(c, &c->bl, i, src);
    }
    c->lanes->block_flush(c->acc, &c->bl, p0, q0, q1, out);
    if (!out->rest_kept)
      c->lanes->rest_fill(c->brest, c->nbrest, c->bvals, p0, p1 - p0, out);
    p0 = p1;
  }
}

void sk_sample_run(sk_sample_ctx *c, const double *times, size_t begin, size_t end, const sk_sample_out *out) {
  if (out->offset != NULL) {
    if (c->count == 1)
      run_rows_layer(c, &c->layers[0], times, begin, end, out);
    else
      run_rows_blend(c, times, begin, end, out);
    return;
  }
  for (size_t p = begin; p < end; p++) {
    for (size_t i = 0; i < c->count; i++)
      layer_sample(c, &c->layers[i], times[p], c->layers[i].trs);
    /* One layer: its weight normalises to exactly 1, and sk_anim's
     * multiplications by 1 change no bit, so the layer's TRS is the answer. */
    put_aos(c->count == 1 ? c->layers[0].trs : blend_layers(c, c->blend), c->bones, p, out);
  }
}
