/* sk_layers: glTF layers with masks and additive layers over runs of
 * frames (sk_layers.h). Each step is sk_anim.c's sk_anim_sample_layers_ext
 * (sk_anim__apply_bone_weights, the weighted blend, add_layer) applied to every
 * frame of a run before the next step: the frames are independent, so
 * the order of steps within each frame, and every operand, is the same. */
#include "sk_layers.h"
#include "sk_anim_math.h"
#include "sk_anim_memo.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A weighted layer of non-zero normalised weight, in layer order. */
typedef struct wlayer {
  size_t layer;
  double w;
  const float *mask; /* bone weights, or NULL */
  sk_sample_ctx *ctx; /* its clip through the sampler, or NULL: sk_anim_sample per frame */
  double speed;       /* sk_anim_layer_ext's */
} wlayer;

/* One channel of an additive layer that adds something (weight times bone
 * weight non-zero), in layer then channel order, with its keys made
 * additive once. */
typedef struct achan {
  size_t layer;
  const sk_anim_channel *ch;
  const double *dv; /* own, or the keys sk_anim_additive_share made at upload */
  double *own;      /* owned: keys made for this context, or NULL */
  double wt;
  sk_anim_cursor cur; /* its key from frame to frame */
} achan;

struct sk_layers_ctx {
  const sk_anim *a;
  const sk_anim_layer *layers;
  double *speed; /* owned; count: each layer's sk_anim_layer_ext speed (ext is read at open only) */
  size_t count, nb, run, bytes;
  sk_sampler *sampler; /* owned, or NULL */
  wlayer *wl;
  size_t nwl;
  achan *ac;
  size_t nac;
  double *scratch; /* [run][nb][SK_ANIM_TRS]: the weighted layers after the first */
  double *lt;      /* [run]: one layer's times */
  double *q;       /* [run][4]: an additive rotation's targets */
  double *d;       /* [run][4]: an additive channel's values */
  double *fr;      /* [run]: an additive layer's frames */
  /* Weighted layers that the plain blend would not give Babylon's bits
   * (sk_anim__blend_plain false): every layer's run kept, [nwl][run][nb][TRS],
   * then sk_anim__late_blend frame by frame; NULL otherwise. */
  double *late;
  uint8_t *drives;     /* [nwl][nb] */
  const double **src;  /* [2 * nwl] */
  double *lw;          /* [2 * nwl] */
  uint8_t *undriven;   /* [nb]: paths no weighted layer drives (plain blend of 2+), set to rest after it */
};


void sk_layers_close(sk_layers_ctx *c) {
  if (c == NULL)
    return;
  for (size_t k = 0; c->wl != NULL && k < c->nwl; k++)
    sk_sample_ctx_destroy(c->wl[k].ctx);
  for (size_t k = 0; c->ac != NULL && k < c->nac; k++)
    free(c->ac[k].own);
  sk_sampler_destroy(c->sampler);
  free(c->wl), free(c->ac), free(c->scratch), free(c->lt), free(c->q), free(c->d), free(c->fr);
  free(c->late), free(c->drives), free(c->src), free(c->lw), free(c->undriven), free(c->speed);
  free(c);
}

/* sk_anim_sample_layers_ext's checks and weights: the weighted layers it
 * blends (normalised weight non-zero), each with a sampler context where
 * the sampler built its clip. */
static int plan_weighted(sk_layers_ctx *c, const sk_anim_layer_ext *ext) {
  static const sk_anim_layer_ext plain = {0};
  double total = 0, all = 0;
  for (size_t i = 0; i < c->count; i++) {
    const sk_anim_layer *l = &c->layers[i];
    if (!(l->weight >= 0) || !isfinite(l->weight) || l->clip >= c->a->clip_count)
      return SK_ERANGE;
    all += l->weight;
    if (!(ext != NULL ? &ext[i] : &plain)->additive)
      total += l->weight;
  }
  if (!(all > 0) || !isfinite(all))
    return SK_ERANGE;
  if ((c->wl = calloc(c->count ? c->count : 1, sizeof *c->wl)) == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; i < c->count; i++) {
    const sk_anim_layer_ext *x = ext != NULL ? &ext[i] : &plain;
    const double w = c->layers[i].weight / total;
    if (x->additive || total == 0 || w == 0) /* as sk_anim_sample_layers_ext: weight 0 alone is no layer */
      continue;
    wlayer *L = &c->wl[c->nwl++];
    *L = (wlayer){.layer = i, .w = w, .mask = x->bone_weights, .speed = x->speed};
    const sk_anim_layer one = {.clip = c->layers[i].clip, .weight = 1, .loop = c->layers[i].loop};
    const sk_anim_layer_ext one_x = {.speed = x->speed};
    if (c->sampler != NULL && sk_sample_ctx_create_ext(c->sampler, &one, &one_x, 1, &L->ctx) != 0)
      L->ctx = NULL;
    c->bytes += L->ctx != NULL ? sk_sample_ctx_memory(L->ctx) : 0;
  }
  return 0;
}

/* The keys of channel k of layer i's clip made additive once, kept with
 * the clips: for reference 0 at upload (sk_anim_additive_share), for
 * others at first use (sk_anim_memo); NULL where they are not kept. */
static const double *kept_keys(const sk_layers_ctx *c, const sk_anim_layer_ext *x, size_t i, size_t k) {
  const double ref = sk_anim__reference_frame(x);
  if (ref == 0)
    return sk_anim__additive_ref0(c->a, c->layers[i].clip, k);
  const double *const *dv = sk_anim_memo_gltf(c->a, c->layers[i].clip, ref);
  return dv != NULL ? dv[k] : NULL;
}

/* add_layer's channels: those that add something, their keys made
 * additive against the layer's reference frame (kept_keys where the clips
 * keep them). */
static int plan_additive(sk_layers_ctx *c, const sk_anim_layer_ext *ext) {
  size_t n = 0, keys = 0; /* the channels, and the keys it would make additive itself */
  for (size_t i = 0; ext != NULL && i < c->count; i++) {
    const sk_anim_clip *clip = &c->a->clips[c->layers[i].clip];
    for (size_t k = 0; ext[i].additive && c->layers[i].weight > 0 && k < clip->channel_count; k++, n++)
      if (kept_keys(c, &ext[i], i, k) == NULL)
        keys += clip->channels[k].count;
  }
  if (keys > SK_LAYERS_KEEP_KEYS)
    return SK_ETOOBIG;
  if ((c->ac = calloc(n ? n : 1, sizeof *c->ac)) == NULL)
    return SK_ENOMEM;
  for (size_t i = 0; ext != NULL && i < c->count; i++) {
    const sk_anim_layer *l = &c->layers[i];
    if (!ext[i].additive || !(l->weight > 0))
      continue;
    const sk_anim_clip *clip = &c->a->clips[l->clip];
    const double ref = sk_anim__reference_frame(&ext[i]);
    for (size_t k = 0; k < clip->channel_count; k++) {
      const sk_anim_channel *ch = &clip->channels[k];
      if (ch->path == SK_ANIM_MATRIX || ch->values == NULL)
        continue; /* glTF channels only */
      const double wt = sk_anim__additive_weight(l, &ext[i], ch->bone);
      if (wt == 0)
        continue;
      achan *x = &c->ac[c->nac];
      *x = (achan){.layer = i, .ch = ch, .wt = wt};
      if ((x->dv = kept_keys(c, &ext[i], i, k)) != NULL) {
        c->nac++;
        continue;
      }
      if (sk_anim__additive_values(ch, ref, &x->own) != 0)
        return SK_ENOMEM;
      x->dv = x->own;
      c->nac++;
      const size_t width = ch->path == SK_ANIM_ROTATION ? 4 : 3;
      c->bytes += ch->count * width * (ch->interp == SK_ANIM_CUBICSPLINE ? 3 : 1) * sizeof *x->own;
    }
  }
  return 0;
}

/* The late bindings' plan: what each weighted layer drives; its runs'
 * memory once the run length is known (sk_layers_open). */
static int plan_late(sk_layers_ctx *c, const sk_anim_layer_ext *ext) {
  const size_t nb = c->nb ? c->nb : 1;
  double total = 0; /* as plan_weighted sums it */
  for (size_t i = 0; i < c->count; i++)
    if (ext == NULL || !ext[i].additive)
      total += c->layers[i].weight;
  c->drives = malloc(c->nwl * nb);
  c->src = malloc(2 * c->nwl * sizeof *c->src);
  c->lw = malloc(2 * c->nwl * sizeof *c->lw);
  if (c->drives == NULL || c->src == NULL || c->lw == NULL)
    return SK_ENOMEM;
  for (size_t k = 0; k < c->nwl; k++) {
    sk_anim__layer_drives(c->a, &c->layers[c->wl[k].layer], c->wl[k].mask, c->drives + k * nb);
    c->lw[k] = sk_anim__late_weight(c->layers[c->wl[k].layer].weight, total);
  }
  c->bytes += c->nwl * (nb + 4 * sizeof(double));
  return 0;
}

int sk_layers_open(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count,
                   sk_sampler *smp, sk_layers_ctx **out) {
  *out = NULL;
  sk_layers_ctx *c = calloc(1, sizeof *c);
  if (c == NULL || a->babylon) {
    sk_sampler_destroy(smp);
    free(c);
    return c == NULL ? SK_ENOMEM : SK_EINVAL;
  }
  *c = (sk_layers_ctx){.a = a, .layers = layers, .count = count, .nb = a->bone_count, .sampler = smp};
  if ((c->speed = calloc(count ? count : 1, sizeof *c->speed)) == NULL) {
    sk_layers_close(c);
    return SK_ENOMEM;
  }
  for (size_t i = 0; ext != NULL && i < count; i++)
    c->speed[i] = ext[i].speed;
  int rc = plan_weighted(c, ext);
  if (!rc && c->nwl > 1 && !sk_anim__blend_plain(a, layers, ext, count))
    rc = plan_late(c, ext);
  else if (!rc && c->nwl > 1 && (c->undriven = malloc(c->nb ? c->nb : 1)) == NULL)
    rc = SK_ENOMEM;
  else if (!rc && c->nwl > 1) { /* every weighted layer drives the same paths */
    sk_anim__layer_drives(a, &layers[c->wl[0].layer], NULL, c->undriven);
    for (size_t b = 0; b < c->nb; b++)
      c->undriven[b] = (uint8_t)(~c->undriven[b] & 7u);
    c->bytes += c->nb;
  }
  if (!rc)
    rc = plan_additive(c, ext);
  if (!rc) {
    const size_t frame = (c->nb ? c->nb : 1) * SK_ANIM_TRS * sizeof(double);
    c->run = SK_ANIM_RUN_BYTES / frame;
    c->run = c->run < 1 ? 1 : c->run > SK_ANIM_RUN_MAX ? SK_ANIM_RUN_MAX : c->run;
    c->scratch = c->nwl > 1 ? malloc(c->run * frame) : NULL;
    c->lt = malloc(c->run * sizeof *c->lt);
    c->q = malloc(c->run * 4 * sizeof *c->q);
    c->d = malloc(c->run * 4 * sizeof *c->d);
    c->fr = malloc(c->run * sizeof *c->fr);
    if (c->drives != NULL) {
      c->late = malloc(c->nwl * c->run * frame);
      c->bytes += c->nwl * c->run * frame;
    }
    c->bytes += sizeof *c + (c->nwl > 1 ? c->run * frame : 0) + c->run * 10 * sizeof(double) +
                c->count * (sizeof *c->wl + sizeof *c->ac);
    rc = (c->nwl > 1 && c->scratch == NULL) || (c->drives != NULL && c->late == NULL) || c->lt == NULL || c->q == NULL || c->d == NULL || c->fr == NULL
             ? SK_ENOMEM
             : 0;
  }
  if (rc) {
    sk_layers_close(c);
    return rc;
  }
  *out = c;
  return 0;
}

size_t sk_layers_run_max(const sk_layers_ctx *c) { return c->run; }

size_t sk_layers_memory(const sk_layers_ctx *c) {
  return c->bytes + (c->sampler != NULL && !sk_sampler_is_shared(c->sampler) ? sk_sampler_memory(c->sampler) : 0);
}

/* Weighted layer L at the run's m frames into dst ([m][nb][TRS]). */
static void sample_layer(sk_layers_ctx *c, const wlayer *L, const double *times, size_t m, double *dst) {
  const sk_anim_layer *l = &c->layers[L->layer];
  for (size_t f = 0; f < m; f++)
    c->lt[f] = times[f * c->count + L->layer];
  if (L->ctx != NULL) {
    sk_sample_run(L->ctx, c->lt, 0, m, &(sk_sample_out){.f64 = dst});
    return;
  }
  for (size_t f = 0; f < m; f++)
    sk_anim__sample_layer_at(c->a, l, L->speed, c->lt[f], dst + f * c->nb * SK_ANIM_TRS, NULL);
}

/* Babylon's late bindings over m frames into trs: every weighted layer's
 * frames, then sk_anim__late_blend frame by frame. */
static void run_late(sk_layers_ctx *c, const double *times, size_t m, double *trs) {
  const size_t fs = c->nb * SK_ANIM_TRS, lay = c->run * fs;
  for (size_t k = 0; k < c->nwl; k++) {
    double *dst = c->late + k * lay;
    sample_layer(c, &c->wl[k], times, m, dst);
    if (c->wl[k].mask != NULL)
      sk_anim__apply_bone_weights(c->a, c->wl[k].mask, dst, m);
  }
  for (size_t f = 0; f < m; f++) {
    for (size_t k = 0; k < c->nwl; k++)
      c->src[k] = c->late + k * lay + f * fs;
    sk_anim__late_blend(c->a, c->src, c->lw, c->drives, c->nwl, c->src + c->nwl, c->lw + c->nwl, trs + f * fs);
  }
}

/* The weighted blend of sk_anim_sample_layers_ext over m frames into trs. */
static void run_weighted(sk_layers_ctx *c, const double *times, size_t m, double *trs) {
  if (c->late != NULL) {
    run_late(c, times, m, trs);
    return;
  }
  const size_t n = m * c->nb;
  double cum = 0;
  for (size_t k = 0; k < c->nwl; k++) {
    const wlayer *L = &c->wl[k];
    const double w = L->w;
    double *dst = k == 0 ? trs : c->scratch;
    sample_layer(c, L, times, m, dst);
    if (L->mask != NULL)
      sk_anim__apply_bone_weights(c->a, L->mask, dst, m);
    if (k == 0) {
      sk_anim__scale_vectors(trs, n, w);
      cum = w;
      continue;
    }
    cum += w;
    const double amount = w / cum;
    sk_anim__add_vectors(trs, c->scratch, n, w);
    sk_anim__slerp_n(trs + 3, SK_ANIM_TRS, c->scratch + 3, SK_ANIM_TRS, amount, trs + 3, SK_ANIM_TRS, n);
  }
  static const int at[3] = {0, 3, 7}, width[3] = {3, 4, 3};
  for (size_t b = 0; c->undriven != NULL && b < c->nb; b++) /* as Babylon leaves them */
    for (int p = 0; c->undriven[b] && p < 3; p++)
      for (size_t f = 0; (c->undriven[b] & (1u << p)) && f < m; f++)
        memcpy(trs + (f * c->nb + b) * SK_ANIM_TRS + at[p], c->a->rest + b * SK_ANIM_TRS + at[p],
               (size_t)width[p] * sizeof *trs);
  if (c->nwl == 0) /* additive layers only: on top of the rest pose */
    for (size_t f = 0; f < m; f++)
      memcpy(trs + f * c->nb * SK_ANIM_TRS, c->a->rest, c->nb * SK_ANIM_TRS * sizeof *trs);
}

/* add_layer's channels over m frames, in order: a channel's frames
 * sampled together (its cursor, a rotation's sines at once), a rotation's
 * slerps of all frames at once. */
static void run_additive(sk_layers_ctx *c, const double *times, size_t m, double *trs) {
  const size_t fs = c->nb * SK_ANIM_TRS;
  for (size_t k = 0; k < c->nac; k++) {
    achan *x = &c->ac[k];
    const sk_anim_layer *l = &c->layers[x->layer];
    if (k == 0 || c->ac[k - 1].layer != x->layer) /* the layer's frames (its channels are together) */
      for (size_t f = 0; f < m; f++)
        c->fr[f] = sk_anim__layer_frame(&c->a->clips[l->clip], times[f * c->count + x->layer], l->loop,
                                         c->speed[x->layer]);
    sk_anim__sample_values_run(x->ch, x->dv, c->fr, m, c->d, &x->cur);
    const size_t width = x->ch->path == SK_ANIM_ROTATION ? 4 : 3;
    double *t = trs + (size_t)x->ch->bone * SK_ANIM_TRS;
    for (size_t f = 0; f < m; f++) {
      const double *d = c->d + f * width;
      if (x->ch->path == SK_ANIM_ROTATION) {
        sk_anim__quat_mul(t + f * fs + 3, d, c->q + 4 * f);
      } else {
        double *v = t + f * fs + (x->ch->path == SK_ANIM_TRANSLATION ? 0 : 7);
        for (int j = 0; j < 3; j++)
          v[j] += d[j] * x->wt;
      }
    }
    if (x->ch->path == SK_ANIM_ROTATION)
      sk_anim__slerp_n(t + 3, fs, c->q, 4, x->wt, t + 3, fs, m);
  }
}

void sk_layers_run(sk_layers_ctx *c, const double *times, size_t m, double *trs) {
  run_weighted(c, times, m, trs);
  run_additive(c, times, m, trs);
}
