/* sk_banim_blend's contexts: Babylon-format layers blended over runs of
 * frames (sk_banim_blend.h), with the rules of sk_banim_blend.c. */
#include "sk_banim_blend.h"
#include "sk_anim_math.h"
#include "sk_banim_blend_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sk_banim_add.h"
#include "sk_sample.h"

/* A context blends runs of frames. At open it plans, once for the range,
 * what every frame repeats: per layer the channels that count (the last
 * of each bone and path, as the sampler's "later channel wins", less the
 * masked bones) and a slot of values for each; per bone and path the
 * layers that drive it and their clamped weights (blend_path's gathering).
 * A run then samples each slot over its frames (sk_anim__sample_babylon_run:
 * one cursor a channel, the slerp sines together; or a one-layer sk_sample
 * context when the sampler built the layer's clip), and blends each bone's
 * path over the frames: positions, scalings and matrices frame by frame
 * with blend_path's functions, rotations one slerp step at a time over
 * all the frames (sk_anim__slerp_n), in blend_quat's order of steps. */

/* One layer's part of a run. */
typedef struct run_layer {
  const sk_anim_clip *clip;
  const sk_anim_channel *ch; /* the clip's channels, or the additive layer's made ones */
  size_t nch, nslot;
  bool loop;
  double speed; /* sk_anim_layer's */
  int32_t *slot;       /* [nch]: the channel's slot, -1 when it does not count */
  int32_t *bp;         /* [nb * 4]: slot of bone b's path p, -1 for none */
  sk_anim_cursor *cur; /* [nch] */
  double *val;         /* [nslot][run][4]: a TRS slot's values, frame after frame */
  const float **mat;   /* [nslot][run]: a "_matrix" slot's held keys */
  double *frames;      /* [run] */
  /* A weighted layer whose clip the sampler built (sk_banim_blend_open_sampled):
   * its own one-layer context, sampling each run's frames into `aos`
   * ([run][nb][SK_ANIM_TRS], sk_sample's plain TRS arrays) at `times`. */
  sk_sample_ctx *sctx;
  double *aos, *times;
} run_layer;

/* One source of a bone's path: a layer's slot; a TRS slot's value at
 * frame f of a run is at base + f * fs (plan_bases). */
typedef struct run_src {
  uint32_t layer, slot;
  const double *base;
  size_t fs;
} run_src;

/* A bone's path and its sources: n weighted, then na additive, from
 * srcs[src] (weights from w[src], clamped). */
typedef struct run_item {
  uint32_t bone, path, src, n, na;
  double total, atotal;
} run_item;

struct sk_banim_blend_ctx {
  const sk_anim *a;
  const sk_skeleton *s;
  size_t count, nb, run;
  sk_banim_blend__once *once; /* non-NULL: frames blended one by one (an additive layer is made per frame) */
  run_layer *ly;
  run_item *items;
  size_t nitems;
  run_src *srcs;
  double *w;
  double *now;         /* each bone's current TRS (sk_banim_blend__current_trs) */
  size_t bytes;        /* what the context holds (held, held_zero) */
  float *morig;        /* [nb * 16] or NULL: the bones' local matrices, when a "_matrix" is blended */
  const void **vals;   /* [2 * count] */
  double *rq, *tq;     /* [run][4] */
  sk_sampler *sampler; /* owned, or NULL */
  sk_anim_layer *l1;   /* [count]: one frame's layers (the per-frame blend) */
  double *t1;          /* [count]: one frame's times */
};

/* The override bit of each channel path. */
static const unsigned k_path_bit[4] = {[SK_ANIM_TRANSLATION] = SK_OVERRIDE_POSITION,
                                       [SK_ANIM_ROTATION] = SK_OVERRIDE_ROTATION,
                                       [SK_ANIM_SCALE] = SK_OVERRIDE_SCALING,
                                       [SK_ANIM_MATRIX] = SK_OVERRIDE_MATRIX};

/* malloc and calloc, counting the bytes in c->bytes (sk_banim_blend_memory). */
static void *held(sk_banim_blend_ctx *c, size_t bytes) {
  c->bytes += bytes;
  return malloc(bytes);
}
static void *held_zero(sk_banim_blend_ctx *c, size_t n, size_t size) {
  c->bytes += n * size;
  return calloc(n, size);
}


void sk_banim_blend_close(sk_banim_blend_ctx *c) {
  if (c == NULL)
    return;
  sk_banim_blend__once_close(c->once);
  for (size_t i = 0; c->ly != NULL && i < c->count; i++) {
    run_layer *L = &c->ly[i];
    free(L->slot), free(L->bp), free(L->cur), free(L->val), free(L->mat), free(L->frames);
    sk_sample_ctx_destroy(L->sctx);
    free(L->aos), free(L->times);
  }
  sk_sampler_destroy(c->sampler);
  free(c->ly), free(c->items), free(c->srcs), free(c->w), free(c->now), free(c->morig), free(c->vals), free(c->rq),
      free(c->tq);
  free(c->l1), free(c->t1);
  free(c);
}

/* Layer i's channels and slots (the run's buffers come later). */
static int plan_layer(sk_banim_blend_ctx *c, const sk_anim_layer *l, const sk_anim_layer_ext *x, run_layer *L) {
  const sk_anim_clip *clip = &c->a->clips[l->clip];
  const bool additive = x != NULL && x->additive;
  /* an additive layer's keys may be the clip's every bone (kept with the
   * clips): its mask applies here as a weighted layer's does */
  const float *mask = x != NULL ? x->bone_weights : NULL;
  L->clip = clip;
  L->loop = l->loop;
  L->speed = x != NULL ? x->speed : 0;
  L->ch = additive ? x->babylon_add->channels : clip->channels;
  L->nch = additive ? x->babylon_add->count : clip->channel_count;
  const size_t nch = L->nch ? L->nch : 1;
  L->slot = held(c, nch * sizeof *L->slot);
  L->bp = held(c, (c->nb ? c->nb : 1) * 4 * sizeof *L->bp);
  L->cur = held_zero(c, nch, sizeof *L->cur);
  if (L->slot == NULL || L->bp == NULL || L->cur == NULL)
    return SK_ENOMEM;
  for (size_t k = 0; k < c->nb * 4; k++)
    L->bp[k] = -1;
  for (size_t k = 0; k < L->nch; k++) {
    L->slot[k] = -1;
    if (mask == NULL || mask[L->ch[k].bone] != 0) /* targetMask: a masked bone's animation is not started */
      L->bp[(size_t)L->ch[k].bone * 4 + (size_t)L->ch[k].path] = (int32_t)k; /* the last channel wins */
  }
  for (size_t k = 0; k < c->nb * 4; k++)
    if (L->bp[k] >= 0) {
      L->slot[L->bp[k]] = (int32_t)L->nslot;
      L->bp[k] = (int32_t)L->nslot++;
    }
  return 0;
}

/* The bones' paths in blend_path's order, each with its sources in layer
 * order (weighted, then additive) and clamped weights. */
static int plan_items(sk_banim_blend_ctx *c, const sk_anim_layer *layers, const sk_anim_layer_ext *ext) {
  static const uint32_t order[4] = {SK_ANIM_MATRIX, SK_ANIM_TRANSLATION, SK_ANIM_ROTATION, SK_ANIM_SCALE};
  size_t ns = 0;
  for (size_t i = 0; i < c->count; i++)
    ns += c->ly[i].nslot;
  c->items = held(c, (ns ? ns : 1) * sizeof *c->items);
  c->srcs = held(c, (ns ? ns : 1) * sizeof *c->srcs);
  c->w = held(c, (ns ? ns : 1) * sizeof *c->w);
  if (c->items == NULL || c->srcs == NULL || c->w == NULL)
    return SK_ENOMEM;
  size_t at = 0;
  for (size_t b = 0; b < c->nb; b++)
    for (int p = 0; p < 4; p++) {
      run_item it = {.bone = (uint32_t)b, .path = order[p], .src = (uint32_t)at};
      for (int pass = 0; pass < 2; pass++) /* weighted, then additive */
        for (size_t i = 0; i < c->count; i++) {
          const int32_t slot = c->ly[i].bp[b * 4 + order[p]];
          if (slot < 0 || (ext != NULL && ext[i].additive) != (pass == 1))
            continue;
          /* Animatable.weight clamps to [0, 1] */
          const double wi = layers[i].weight < 0 ? 0 : layers[i].weight > 1.0 ? 1.0 : layers[i].weight;
          c->srcs[at] = (run_src){.layer = (uint32_t)i, .slot = (uint32_t)slot};
          c->w[at++] = wi;
          *(pass ? &it.atotal : &it.total) += wi;
          (*(pass ? &it.na : &it.n))++;
        }
      if (it.n + it.na > 0)
        c->items[c->nitems++] = it;
    }
  return 0;
}

/* Frames a run holds: as many as SK_ANIM_RUN_BYTES of values allow, 1 to
 * SK_ANIM_RUN_MAX; then the buffers. */
static int plan_run(sk_banim_blend_ctx *c) {
  size_t per_frame = 8 * SK_ANIM_TRS;
  for (size_t i = 0; i < c->count; i++)
    per_frame += c->ly[i].sctx != NULL ? (c->nb * SK_ANIM_TRS + 2) * sizeof(double)
                                       : c->ly[i].nslot * (4 * sizeof(double) + sizeof(float *)) + sizeof(double);
  c->run = SK_ANIM_RUN_BYTES / per_frame;
  c->run = c->run < 1 ? 1 : c->run > SK_ANIM_RUN_MAX ? SK_ANIM_RUN_MAX : c->run;
  for (size_t i = 0; i < c->count; i++) {
    run_layer *L = &c->ly[i];
    if (L->sctx != NULL) {
      L->aos = held(c, (c->nb ? c->nb : 1) * SK_ANIM_TRS * c->run * sizeof *L->aos);
      L->times = held(c, c->run * sizeof *L->times);
      if (L->aos == NULL || L->times == NULL)
        return SK_ENOMEM;
      continue;
    }
    const size_t ns = L->nslot ? L->nslot : 1;
    L->val = held(c, ns * c->run * 4 * sizeof *L->val);
    L->mat = held(c, ns * c->run * sizeof *L->mat);
    L->frames = held(c, c->run * sizeof *L->frames);
    if (L->val == NULL || L->mat == NULL || L->frames == NULL)
      return SK_ENOMEM;
  }
  c->rq = held(c, c->run * 4 * sizeof *c->rq);
  c->tq = held(c, c->run * 4 * sizeof *c->tq);
  return c->rq != NULL && c->tq != NULL ? 0 : SK_ENOMEM;
}

/* The bones' local matrices, when some bone's "_matrix" is blended (its
 * current value; copied, so the context needs no skeleton once open). */
static int copy_matrices(sk_banim_blend_ctx *c) {
  bool any = false;
  for (size_t k = 0; k < c->nitems; k++)
    any |= c->items[k].path == SK_ANIM_MATRIX;
  if (!any)
    return 0;
  if ((c->morig = held(c, c->nb * 16 * sizeof *c->morig)) == NULL)
    return SK_ENOMEM;
  for (size_t b = 0; b < c->nb; b++)
    memcpy(c->morig + b * 16, c->s->bones[b].local.matrix, 16 * sizeof *c->morig);
  return 0;
}

/* Where each TRS source's frames are in the run's buffers. */
static void plan_bases(sk_banim_blend_ctx *c) {
  static const size_t at[3] = {[SK_ANIM_TRANSLATION] = 0, [SK_ANIM_ROTATION] = 3, [SK_ANIM_SCALE] = 7};
  for (size_t k = 0; k < c->nitems; k++) {
    const run_item *it = &c->items[k];
    for (size_t j = it->src; it->path != SK_ANIM_MATRIX && j < it->src + it->n + it->na; j++) {
      run_src *x = &c->srcs[j];
      const run_layer *L = &c->ly[x->layer];
      if (L->sctx != NULL) {
        x->base = L->aos + (size_t)it->bone * SK_ANIM_TRS + at[it->path];
        x->fs = c->nb * SK_ANIM_TRS;
      } else {
        x->base = L->val + (size_t)x->slot * c->run * 4;
        x->fs = it->path == SK_ANIM_ROTATION ? 4 : 3;
      }
    }
  }
}

/* The weighted layers whose clips `smp` built sample through contexts of
 * it (NULL, or a clip it did not build: channel by channel). */
static void plan_sampled(sk_banim_blend_ctx *c, const sk_anim_layer *layers, const sk_anim_layer_ext *ext) {
  for (size_t i = 0; c->sampler != NULL && i < c->count; i++) {
    if (ext != NULL && ext[i].additive)
      continue;
    const sk_anim_layer one = {.clip = layers[i].clip, .time = 0, .weight = 1, .loop = layers[i].loop};
    const sk_anim_layer_ext one_x = {.speed = ext != NULL ? ext[i].speed : 0};
    if (sk_sample_ctx_create_ext(c->sampler, &one, &one_x, 1, &c->ly[i].sctx) != 0)
      c->ly[i].sctx = NULL;
    else
      c->bytes += sk_sample_ctx_memory(c->ly[i].sctx);
  }
}

int sk_banim_blend_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                        const sk_anim_layer_ext *ext, size_t count, sk_banim_blend_ctx **out) {
  return sk_banim_blend_open_sampled(a, s, layers, ext, count, NULL, out);
}

int sk_banim_blend_open_sampled(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                                const sk_anim_layer_ext *ext, size_t count, sk_sampler *smp, sk_banim_blend_ctx **out) {
  *out = NULL;
  sk_banim_blend_ctx *c = calloc(1, sizeof *c);
  if (c == NULL) {
    sk_sampler_destroy(smp);
    return SK_ENOMEM;
  }
  *c = (sk_banim_blend_ctx){.a = a, .s = s, .count = count, .nb = a->bone_count, .sampler = smp};
  bool per_frame = false;
  for (size_t i = 0; ext != NULL && i < count; i++)
    per_frame |= ext[i].additive && ext[i].babylon_add == NULL;
  c->l1 = held(c, (count ? count : 1) * sizeof *c->l1);
  c->t1 = held(c, (count ? count : 1) * sizeof *c->t1);
  int rc = c->l1 != NULL && c->t1 != NULL ? 0 : SK_ENOMEM;
  if (!rc && per_frame) {
    rc = sk_banim_blend__once_open(a, s, layers, ext, count, &c->once);
  } else if (!rc) {
    c->ly = held_zero(c, count ? count : 1, sizeof *c->ly);
    c->now = held(c, (c->nb ? c->nb : 1) * SK_ANIM_TRS * sizeof *c->now);
    c->vals = held(c, 2 * (count ? count : 1) * sizeof *c->vals);
    rc = c->ly != NULL && c->now != NULL && c->vals != NULL ? 0 : SK_ENOMEM;
    for (size_t i = 0; !rc && i < count; i++)
      rc = plan_layer(c, &layers[i], ext != NULL ? &ext[i] : NULL, &c->ly[i]);
    if (!rc)
      rc = plan_items(c, layers, ext);
    if (!rc)
      plan_sampled(c, layers, ext);
    if (!rc)
      rc = plan_run(c);
    if (!rc) {
      plan_bases(c);
      sk_banim_blend__current_trs(s, c->nb, c->now);
      rc = copy_matrices(c);
    }
  }
  if (rc) {
    sk_banim_blend_close(c);
    return rc;
  }
  *out = c;
  return 0;
}

size_t sk_banim_blend_memory(const sk_banim_blend_ctx *c) {
  return sizeof *c + c->bytes +
         (c->sampler != NULL && !sk_sampler_is_shared(c->sampler) ? sk_sampler_memory(c->sampler) : 0);
}

size_t sk_banim_blend_run_max(const sk_banim_blend_ctx *c) { return c->once != NULL ? 1 : c->run; }

/* Every slot of every layer over the run's m frames: layer i plays frame
 * f at times[f * count + i]. */
static void run_sample(sk_banim_blend_ctx *c, const double *times, size_t m) {
  for (size_t i = 0; i < c->count; i++) {
    run_layer *L = &c->ly[i];
    if (L->sctx != NULL) {
      for (size_t f = 0; f < m; f++)
        L->times[f] = times[f * c->count + i];
      sk_sample_run(L->sctx, L->times, 0, m, &(sk_sample_out){.f64 = L->aos});
      continue;
    }
    for (size_t f = 0; f < m; f++)
      L->frames[f] = sk_anim__layer_frame(L->clip, times[f * c->count + i], L->loop, L->speed);
    for (size_t k = 0; k < L->nch; k++) {
      const int32_t slot = L->slot[k];
      if (slot < 0)
        continue;
      const sk_anim_channel *ch = &L->ch[k];
      if (ch->path == SK_ANIM_MATRIX) {
        for (size_t f = 0; f < m; f++)
          L->mat[(size_t)slot * c->run + f] = sk_anim__sample_matrix_at(ch, L->frames[f], &L->cur[k]);
      } else {
        sk_anim__sample_babylon_run(ch, L->frames, m, L->val + (size_t)slot * c->run * 4, &L->cur[k]);
      }
    }
  }
}

/* A TRS source's value at frame f of the run. */
static const double *src_val(const run_src *x, size_t f) { return x->base + f * x->fs; }

/* blend_quat over the run's m frames, one slerp step at a time across the
 * frames, into c->rq: the same steps with the same operands. */
static void run_rotation(sk_banim_blend_ctx *c, const run_item *it, size_t m) {
  const run_src *x = c->srcs + it->src;
  const double *w = c->w + it->src, *orig = c->now + (size_t)it->bone * SK_ANIM_TRS + 3, total = it->total;
  const size_t n = it->n;
  double *r = c->rq;
  if (total == 0) { /* Babylon keeps the current value */
    for (size_t f = 0; f < m; f++)
      memcpy(r + 4 * f, orig, 4 * sizeof *r);
  } else if (n == 1) {
    sk_anim__slerp_n(orig, 0, x[0].base, x[0].fs, total < 1.0 ? total : 1.0, r, 4, m);
  } else if (total >= 1.0 && n == 2 && it->atotal == 0) {
    sk_anim__slerp_n(x[0].base, x[0].fs, x[1].base, x[1].fs, w[1] / total, r, 4, m);
  } else { /* blend_quat_w's cumulative slerp, the current value first when the weights add up to less than 1 */
    const bool mix = total < 1.0;
    const double normalizer = mix ? 1.0 : total;
    const size_t steps = n + (mix ? 1 : 0);
    double cumulative = 0;
    for (size_t index = 0; index < steps;) {
      const run_src *xi = mix ? (index ? &x[index - 1] : NULL) : &x[index];
      const double *qi = xi != NULL ? xi->base : orig;
      const size_t qs = xi != NULL ? xi->fs : 0;
      double wi = mix ? (index ? w[index - 1] / normalizer : 1.0 - total) : w[index] / normalizer;
      if (!index) {
        const run_src *xn = &x[mix ? 0 : 1];
        double wn = (mix ? w[0] : w[1]) / normalizer;
        sk_anim__slerp_n(qi, qs, xn->base, xn->fs, wn / (wi + wn), r, 4, m);
        cumulative = wi + wn;
        index += 2;
        continue;
      }
      cumulative += wi;
      sk_anim__slerp_n(r, 4, qi, qs, wi / cumulative, r, 4, m);
      index++;
    }
  }
  for (size_t j = n; j < n + it->na; j++) { /* the additive ones: q = slerp(q, q * dq, w) */
    if (w[j] == 0)
      continue;
    for (size_t f = 0; f < m; f++)
      sk_anim__quat_mul(r + 4 * f, src_val(&x[j], f), c->tq + 4 * f);
    sk_anim__slerp_n(r, 4, c->tq, 4, w[j], r, 4, m);
  }
}

/* One bone's path over the run's frames into out[f][bone]. */
static void run_item_blend(sk_banim_blend_ctx *c, const run_item *it, size_t m, sk_override *const *out,
                           const sk_banim_blend_rows *rows) {
  const run_src *x = c->srcs + it->src;
  const double *w = c->w + it->src, *now = c->now + (size_t)it->bone * SK_ANIM_TRS;
  static const size_t row[3] = {[SK_ANIM_TRANSLATION] = 0, [SK_ANIM_ROTATION] = 3, [SK_ANIM_SCALE] = 7};
  if (it->path == SK_ANIM_ROTATION)
    run_rotation(c, it, m);
  const void **vals = c->vals, **avals = c->vals + it->n;
  for (size_t f = 0; f < m; f++) {
    double v3[3];
    float mat[16];
    const double *v = v3;
    if (it->path == SK_ANIM_ROTATION) {
      v = c->rq + 4 * f;
    } else {
      for (size_t j = 0; j < it->n + it->na; j++)
        vals[j] = it->path == SK_ANIM_MATRIX ? (const void *)c->ly[x[j].layer].mat[(size_t)x[j].slot * c->run + f]
                                             : (const void *)src_val(&x[j], f);
      const sk_banim_blend__add ad = {avals, w + it->n, it->na, it->atotal};
      if (it->path == SK_ANIM_MATRIX) {
        sk_banim_blend__matrix(c->morig + (size_t)it->bone * 16, (const float *const *)vals, w, it->n, it->total, &ad,
                               mat);
      } else {
        sk_banim_blend__vec3(it->path == SK_ANIM_TRANSLATION ? now + 7 : now, (const double *const *)vals, w, it->n,
                             it->total, v3);
        sk_banim_blend__add_vec3(&ad, v3);
      }
    }
    if (out != NULL) { /* the frame's override */
      sk_override *o = &out[f][it->bone];
      o->mask |= k_path_bit[it->path];
      if (it->path == SK_ANIM_MATRIX)
        memcpy(o->matrix, mat, sizeof mat);
      else
        memcpy(it->path == SK_ANIM_TRANSLATION ? o->position
               : it->path == SK_ANIM_ROTATION  ? o->rotation
                                               : o->scaling,
               v, (it->path == SK_ANIM_ROTATION ? 4 : 3) * sizeof *v);
      continue;
    }
    /* the lane's rows: what fill_override copies from that override */
    const size_t lane = rows->lane + f, at = rows->offset[it->bone] + lane / 16 * rows->block + lane % 16;
    if (it->path == SK_ANIM_MATRIX) {
      for (size_t e = 0; e < 16; e++)
        rows->rows[at + e * rows->stride] = mat[e];
    } else {
      double *d = rows->rows64 + at + row[it->path] * rows->stride;
      for (size_t e = 0; e < (it->path == SK_ANIM_ROTATION ? 4u : 3u); e++)
        d[e * rows->stride] = v[e];
    }
  }
}

int sk_banim_blend_run(sk_banim_blend_ctx *c, const sk_anim_layer *layers, const double *times, size_t m,
                       sk_override *const *out, size_t *driven) {
  if (c->once != NULL) { /* m is 1 (sk_banim_blend_run_max) */
    for (size_t i = 0; i < c->count; i++)
      c->l1[i] = layers[i], c->l1[i].time = times[i];
    return sk_banim_blend__once_frame(c->once, c->l1, out[0], &driven[0]);
  }
  (void)layers;
  run_sample(c, times, m);
  for (size_t f = 0; f < m; f++) {
    memset(out[f], 0, c->nb * sizeof *out[f]); /* one call a frame: per override, rep stos was most of a run */
    for (size_t b = 0; b < c->nb; b++)
      out[f][b].bone = (int32_t)b;
  }
  for (size_t k = 0; k < c->nitems; k++)
    run_item_blend(c, &c->items[k], m, out, NULL);
  for (size_t f = 0; f < m; f++) {
    driven[f] = 0;
    for (size_t b = 0; b < c->nb; b++)
      driven[f] += out[f][b].mask != 0;
  }
  return 0;
}

void sk_banim_blend_run_rows(sk_banim_blend_ctx *c, const double *times, size_t m, const sk_banim_blend_rows *rows) {
  run_sample(c, times, m);
  for (size_t k = 0; k < c->nitems; k++)
    run_item_blend(c, &c->items[k], m, NULL, rows);
}

bool sk_banim_blend_driven(const sk_banim_blend_ctx *c, uint8_t *driven) {
  if (c->once != NULL)
    return false;
  memset(driven, 0, c->nb);
  for (size_t k = 0; k < c->nitems; k++)
    driven[c->items[k].bone] |= (uint8_t)k_path_bit[c->items[k].path];
  return true;
}

int sk_banim_blend_frame(sk_banim_blend_ctx *c, const sk_anim_layer *layers, sk_override *out, size_t *driven) {
  if (c->once != NULL)
    return sk_banim_blend__once_frame(c->once, layers, out, driven);
  for (size_t i = 0; i < c->count; i++)
    c->t1[i] = layers[i].time;
  return sk_banim_blend_run(c, layers, c->t1, 1, &out, driven);
}
