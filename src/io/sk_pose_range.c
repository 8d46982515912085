/* sk_pose_range: the shared sampler context of a frame range's poses, and
 * the overrides of one of its frames built on demand (sk_pose_range.h). */
#include "sk_pose_range.h"

#include <stdlib.h>
#include <string.h>

#include "sk_banim_add.h"
#include "sk_banim_blend.h"
#include "sk_layers.h"
#include "sk_pose.h"
#include "sk_pose_int.h"

/* The layers' times of frames frame..frame + m - 1 into r->ltimes. */
static void layer_times(sk_pose_range *r, size_t frame, size_t m) {
  for (size_t f = 0; f < m; f++)
    for (size_t i = 0; i < r->nl; i++)
      r->ltimes[f * r->nl + i] = sk_sample_layer_time(r->layers[i].time, r->times[frame + f]);
}

int sk_pose_range_create(sk_sampler *sampler, sk_sample_ctx *ctx, double *times, size_t nf, size_t refs,
                         sk_pose_range **out) {
  const sk_anim *a = sk_sampler_anim(sampler);
  const size_t nb = a->bone_count;
  sk_pose_range *r = calloc(1, sizeof *r);
  double *trs = malloc((nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs);
  if (r == NULL || trs == NULL) {
    free(r);
    free(trs);
    sk_sample_ctx_destroy(ctx);
    sk_sampler_destroy(sampler);
    free(times);
    *out = NULL;
    return SK_ENOMEM;
  }
  *r = (sk_pose_range){.refs = refs, .sampler = sampler, .ctx = ctx, .times = times, .nf = nf, .bones = nb,
                       .trs = trs};
  /* A shared sampler is counted with its anim's cache entry. */
  r->bytes = sizeof *r + (sk_sampler_is_shared(sampler) ? 0 : sk_sampler_memory(sampler)) +
             sk_sample_ctx_memory(ctx) + nf * sizeof *times +
             (nb ? nb : 1) * SK_ANIM_TRS * sizeof *trs;
  *out = r;
  return 0;
}

int sk_pose_range_create_babylon(const sk_anim *a, size_t clip, bool loop, double *times, size_t nf, size_t refs,
                                 sk_pose_range **out) {
  const sk_anim_clip *c = &a->clips[clip];
  const size_t nb = a->bone_count ? a->bone_count : 1;
  sk_pose_range *r = calloc(1, sizeof *r);
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  sk_anim_cursor *cur = calloc(c->channel_count + 1, sizeof *cur);
  uint8_t *driven = calloc(nb, 1);
  *out = NULL;
  if (r == NULL || trs == NULL || cur == NULL || driven == NULL) {
    free(r);
    free(trs);
    free(cur);
    free(driven);
    free(times);
    return SK_ENOMEM;
  }
  static const unsigned bit[3] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING};
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    driven[ch->bone] |= (uint8_t)(ch->path == SK_ANIM_MATRIX ? SK_OVERRIDE_MATRIX : bit[ch->path]);
  }
  *r = (sk_pose_range){.refs = refs, .times = times, .nf = nf, .bones = a->bone_count, .trs = trs,
                       .anim = sk_anim_ref((sk_anim *)a), .clip = clip, .loop = loop, .cur = cur, .driven = driven};
  r->bytes = sizeof *r + nf * sizeof *times + nb * (SK_ANIM_TRS * sizeof *trs + 1) +
             (c->channel_count + 1) * sizeof *cur;
  *out = r;
  return 0;
}

int sk_pose_range_create_babylon_layers(const sk_anim *a, sk_banim_blend_ctx *blend, const sk_anim_layer *layers,
                                        size_t nl, struct sk_banim_add_layer *adds, double *times, size_t nf,
                                        size_t refs, sk_pose_range **out) {
  const size_t nb = a->bone_count ? a->bone_count : 1, run = sk_banim_blend_run_max(blend);
  sk_pose_range *r = calloc(1, sizeof *r);
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  uint8_t *driven = malloc(nb);
  sk_anim_layer *l = malloc((nl ? nl : 1) * sizeof *l);
  double *lt = malloc(run * (nl ? nl : 1) * sizeof *lt);
  *out = NULL;
  if (r == NULL || trs == NULL || driven == NULL || l == NULL || lt == NULL || !sk_banim_blend_driven(blend, driven)) {
    free(r), free(trs), free(driven), free(l), free(lt), free(times);
    sk_banim_blend_close(blend);
    sk_banim_add_layers_free(adds, nl);
    return SK_ENOMEM;
  }
  memcpy(l, layers, nl * sizeof *l);
  *r = (sk_pose_range){.refs = refs, .times = times, .nf = nf, .bones = a->bone_count, .trs = trs, .driven = driven};
  r->anim = sk_anim_ref((sk_anim *)a);
  r->blend = blend, r->layers = l, r->nl = nl, r->adds = adds, r->ltimes = lt;
  size_t keys = 0; /* the additive layers' keys: about 100 bytes a key (sk_banim_add.h) */
  for (size_t i = 0; adds != NULL && i < nl; i++)
    for (size_t k = 0; k < adds[i].count; k++)
      keys += adds[i].channels[k].count;
  r->bytes = sizeof *r + nf * sizeof *times + nb * (SK_ANIM_TRS * sizeof *trs + 1) + nl * sizeof *l +
             run * nl * sizeof *lt + sk_banim_blend_memory(blend) + keys * 100;
  *out = r;
  return 0;
}

int sk_pose_range_create_layers(const sk_anim *a, sk_layers_ctx *lctx, sk_anim_layer *layers, float *masks, size_t nl,
                                double *times, size_t nf, size_t refs, sk_pose_range **out) {
  const size_t nb = a->bone_count ? a->bone_count : 1, run = sk_layers_run_max(lctx);
  sk_pose_range *r = calloc(1, sizeof *r);
  double *trs = malloc(nb * SK_ANIM_TRS * sizeof *trs);
  double *lrun = malloc(run * nb * SK_ANIM_TRS * sizeof *lrun);
  double *lt = malloc(run * (nl ? nl : 1) * sizeof *lt);
  *out = NULL;
  if (r == NULL || trs == NULL || lrun == NULL || lt == NULL) {
    free(r), free(trs), free(lrun), free(lt), free(times), free(layers), free(masks);
    sk_layers_close(lctx);
    return SK_ENOMEM;
  }
  *r = (sk_pose_range){.refs = refs, .times = times, .nf = nf, .bones = a->bone_count, .trs = trs, .layers = layers};
  r->nl = nl, r->ltimes = lt, r->lctx = lctx, r->masks = masks, r->lrun = lrun;
  r->held = sk_anim_ref((sk_anim *)a);
  r->bytes = sizeof *r + nf * sizeof *times + (1 + run) * nb * SK_ANIM_TRS * sizeof *trs + nl * sizeof *layers +
             run * nl * sizeof *lt + (masks != NULL ? nl * nb * sizeof *masks : 0) + sk_layers_memory(lctx);
  *out = r;
  return 0;
}

void sk_pose_range_layers_rows(sk_pose_range *r, size_t frame, double *rows64, const size_t *offset, size_t stride,
                               size_t block, size_t a, size_t q) {
  const size_t run = sk_layers_run_max(r->lctx), nb = r->bones;
  for (size_t i0 = a; i0 < q; i0 += run) {
    const size_t m = q - i0 < run ? q - i0 : run;
    layer_times(r, frame + (i0 - a), m);
    sk_layers_run(r->lctx, r->ltimes, m, r->lrun);
    for (size_t f = 0; f < m; f++) {
      const size_t lane = i0 + f;
      for (size_t b = 0; b < nb; b++) {
        const double *t = r->lrun + (f * nb + b) * SK_ANIM_TRS;
        double *d = rows64 + offset[b] + lane / 16 * block + lane % 16;
        for (size_t k = 0; k < SK_ANIM_TRS; k++)
          d[k * stride] = t[k];
      }
    }
  }
}

void sk_pose_range_babylon_top(sk_pose_range *r, sk_override *top, size_t n) {
  r->top = n > 0 ? top : NULL;
  r->ntop = n;
  r->bytes += n * sizeof *top;
  if (n == 0)
    free(top);
  for (size_t k = 0; k < n; k++)
    r->driven[top[k].bone] |= (uint8_t)top[k].mask;
}

void sk_pose_range_babylon_sampler(sk_pose_range *r, sk_sampler *s) {
  const sk_anim_layer one = {.clip = r->clip, .weight = 1, .loop = r->loop}; /* times hold any offset */
  sk_sample_ctx *ctx = NULL;
  if (s == NULL || sk_sample_ctx_create(s, &one, 1, &ctx) != 0) {
    sk_sampler_destroy(s);
    return;
  }
  r->sampler = s;
  r->ctx = ctx;
  r->bytes += (sk_sampler_is_shared(s) ? 0 : sk_sampler_memory(s)) + sk_sample_ctx_memory(ctx);
}

void sk_pose_range_unref(sk_pose_range *r) {
  if (r == NULL || --r->refs > 0)
    return;
  sk_sample_ctx_destroy(r->ctx);
  sk_sampler_destroy(r->sampler);
  sk_banim_blend_close(r->blend);
  sk_banim_add_layers_free(r->adds, r->nl);
  sk_layers_close(r->lctx);
  sk_anim_destroy(r->held);
  free(r->masks);
  free(r->lrun);
  free(r->layers);
  free(r->ltimes);
  sk_anim_destroy(r->anim);
  free(r->cur);
  free(r->driven);
  free(r->times);
  free(r->trs);
  free(r->top);
  free(r);
}

size_t sk_pose_range_materialize(sk_pose_range *r, size_t frame, sk_override *dst) {
  if (r->anim != NULL) { /* sk_pose_parse_anim's sample_frame and merge_babylon: only the driven bones */
    if (r->blend != NULL) {
      size_t driven;
      layer_times(r, frame, 1);
      sk_banim_blend_run(r->blend, r->layers, r->ltimes, 1, &dst, &driven); /* its run path: no allocation */
    } else {
      sk_anim_sample_overrides_at(r->anim, r->clip, r->times[frame], r->loop, r->trs, dst, r->cur);
    }
    for (size_t k = 0; k < r->ntop; k++) { /* as merge_babylon */
      const sk_override *u = &r->top[k];
      sk_override *m = &dst[u->bone];
      if (u->mask & SK_OVERRIDE_MATRIX) {
        *m = *u;
        continue;
      }
      sk_override_fields(u, m->position, m->rotation, m->scaling);
      m->mask |= u->mask;
    }
    size_t n = 0;
    for (size_t b = 0; b < r->bones; b++)
      if (dst[b].mask != 0)
        dst[n++] = dst[b];
    return n;
  }
  const sk_pose top = {.overrides = r->top, .count = r->ntop};
  if (r->lctx != NULL) { /* sk_pose_parse_anim's sample_frame for such layers */
    layer_times(r, frame, 1);
    sk_layers_run(r->lctx, r->ltimes, 1, r->trs);
    sk_pose__merge_overrides(r->held, r->trs, &top, dst);
    return r->bones;
  }
  const sk_sample_out o = {.f64 = r->trs};
  sk_sample_run(r->ctx, r->times + frame, 0, 1, &o);
  sk_pose__merge_overrides(sk_sampler_anim(r->sampler), r->trs, &top, dst);
  return r->bones;
}

void sk_pose_materialize(const sk_pose *pose, sk_override *scratch, sk_pose *view) {
  *view = *pose;
  if (pose->range == NULL)
    return;
  view->count = sk_pose_range_materialize(pose->range, pose->frame, scratch);
  view->overrides = scratch;
  view->overrides_shared = true;
  view->range = NULL;
}

/* Each field's doubles where the frame's sampled ones were, as
 * sk_pose__merge_overrides puts them in the frame's override; a matrix,
 * which is its bone's whole override (merge_babylon too), into the bone's
 * MATRIX lanes: its local is that matrix (sk_local_set_matrix copies it). */
void sk_pose_range_top_rows(const sk_pose_range *r, double *rows64, float *rows, const size_t *offset, size_t stride,
                            size_t block, size_t a, size_t q) {
  for (size_t t = 0; t < r->ntop; t++) {
    const sk_override *o = &r->top[t];
    for (size_t i = a; i < q; i++) {
      const size_t at = offset[o->bone] + i / 16 * block + i % 16;
      if (o->mask & SK_OVERRIDE_MATRIX) {
        for (size_t e = 0; e < 16; e++)
          rows[at + e * stride] = o->matrix[e];
        continue;
      }
      double *d = rows64 + at, v[SK_ANIM_TRS];
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        v[k] = d[k * stride];
      sk_override_fields(o, v, v + 3, v + 7);
      for (size_t k = 0; k < SK_ANIM_TRS; k++)
        d[k * stride] = v[k];
    }
  }
}

const sk_override *sk_pose_range_matrix_top(const sk_pose_range *r, int32_t bone) {
  size_t lo = 0, hi = r->ntop; /* r->top is sorted by bone (sk_pose_parse_range) */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (r->top[mid].bone < bone)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->ntop && r->top[lo].bone == bone && (r->top[lo].mask & SK_OVERRIDE_MATRIX) ? &r->top[lo] : NULL;
}

size_t sk_pose_held_bytes(const sk_pose *pose) {
  if (pose->range != NULL) /* each frame's share of the range, rounded up: the shares cover it */
    return (pose->range->bytes + pose->range->nf - 1) / pose->range->nf;
  /* The parsers grow override arrays by doubling from 16: count what they
   * may have allocated, not only what they filled. */
  size_t cap = 16;
  while (cap < pose->count)
    cap *= 2;
  return cap * sizeof *pose->overrides;
}

/* Channel by channel over a chunk of frames, so a channel's keys and
 * cursor stay at hand; each channel's cursor still sees its frames in
 * order, and every value lands where no other channel's does unless a
 * later channel of the same bone and field overwrites it, as in
 * sk_anim_sample_overrides. */
void sk_pose_range_babylon_rows(sk_pose_range *r, size_t frame, double *rows64, float *rows, const size_t *offset,
                                size_t stride, size_t block, size_t a, size_t q) {
  enum { CHUNK = SK_ANIM_RUN_MAX };
  static const size_t row[3] = {0, 3, 7};
  const sk_anim_clip *c = &r->anim->clips[r->clip];
  double f[CHUNK], v[4 * CHUNK];
  for (size_t i0 = a; i0 < q; i0 += CHUNK) {
    const size_t m = q - i0 < CHUNK ? q - i0 : CHUNK;
    for (size_t i = 0; i < m; i++)
      f[i] = sk_anim__clip_frame(c, r->times[frame + (i0 - a) + i], r->loop);
    for (size_t k = 0; k < c->channel_count; k++) {
      const sk_anim_channel *ch = &c->channels[k];
      const size_t w = ch->path == SK_ANIM_ROTATION ? 4 : 3;
      if (ch->path != SK_ANIM_MATRIX)
        sk_anim__sample_babylon_run(ch, f, m, v, &r->cur[k]);
      for (size_t i = 0; i < m; i++) {
        const size_t lane = i0 + i, at = offset[ch->bone] + lane / 16 * block + lane % 16;
        if (ch->path == SK_ANIM_MATRIX) {
          const float *mat = sk_anim__sample_matrix_at(ch, f[i], &r->cur[k]);
          for (size_t e = 0; e < 16; e++)
            rows[at + e * stride] = mat[e];
          continue;
        }
        double *d = rows64 + at + row[ch->path] * stride;
        for (size_t e = 0; e < w; e++)
          d[e * stride] = v[i * w + e];
      }
    }
  }
}

/* A range of layers' frames `frame`.. into lanes [a, q): runs of frames
 * blended straight into the rows (sk_banim_blend_run_rows). */
static void layers_rows(sk_pose_range *r, size_t frame, double *rows64, float *rows, const size_t *offset,
                        size_t stride, size_t block, size_t a, size_t q) {
  const size_t run = sk_banim_blend_run_max(r->blend);
  for (size_t i0 = a; i0 < q; i0 += run) {
    const size_t m = q - i0 < run ? q - i0 : run;
    layer_times(r, frame + (i0 - a), m);
    const sk_banim_blend_rows o = {
        .rows64 = rows64, .rows = rows, .offset = offset, .stride = stride, .block = block, .lane = i0};
    sk_banim_blend_run_rows(r->blend, r->ltimes, m, &o);
  }
}

void sk_pose_range_babylon_fill(sk_pose_range *r, size_t frame, double *rows64, float *rows, const size_t *offset,
                                size_t stride, size_t block, size_t a, size_t q) {
  if (r->blend != NULL) {
    layers_rows(r, frame, rows64, rows, offset, stride, block, a, q);
    sk_pose_range_top_rows(r, rows64, rows, offset, stride, block, a, q);
    return;
  }
  size_t h = r->ctx != NULL ? (a + 15) / 16 * 16 : q;
  h = h < q ? h : q;
  sk_pose_range_babylon_rows(r, frame, rows64, rows, offset, stride, block, a, h);
  if (h < q) {
    const sk_sample_out o = {.f64 = rows64 + h / 16 * block, .offset = offset, .pose_stride = stride,
                             .block_stride = block, .driven_only = true};
    sk_sample_run(r->ctx, r->times + frame + (h - a), 0, q - h, &o);
  }
  sk_pose_range_top_rows(r, rows64, rows, offset, stride, block, a, q);
}
