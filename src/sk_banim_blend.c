/* sk_banim_blend: Babylon-format clips played as weighted layers, as
 * Babylon's late animation bindings blend them (sk_banim_blend.h). */
#include "sk_banim_blend.h"
#include "sk_anim_math.h"

#include <stdlib.h>
#include <string.h>

#include "sk_banim_add.h"
#include "sk_mat.h"
#include "sk_sample.h"

static void blend_matrix_w(const float *const *m, const double *w, size_t n, size_t start, double normalizer,
                           double scale, double fs[3], double fq[4], double fp[3]);

/* One layer's value of one bone: the paths its clip drives and their values. */
typedef struct blend_src {
  unsigned mask;     /* SK_OVERRIDE_* */
  const double *trs; /* SK_ANIM_TRS doubles */
  const float *matrix;
} blend_src;

/* The vector branch of ProcessLateAnimationBindings (Vector3 position or
 * scaling): `v[i]` the value of layer i that drives it, weights raw. */
static void blend_vec3(const double *orig, const double *const *v, const double *w, size_t n, double total,
                       double out[3]) {
  size_t start = 0;
  double normalizer = 1.0;
  if (total < 1.0) {
    for (int k = 0; k < 3; k++)
      out[k] = orig[k] * (1.0 - total);
  } else {
    normalizer = total;
    double scale = w[0] / normalizer;
    for (int k = 0; k < 3; k++)
      out[k] = scale != 1 ? v[0][k] * scale : v[0][k];
    start = 1;
  }
  for (size_t i = start; i < n; i++) {
    double scale = w[i] / normalizer;
    if (!scale)
      continue;
    for (int k = 0; k < 3; k++)
      out[k] += v[i][k] * scale;
  }
}

/* The additive layers of one property (ProcessLateAnimationBindings adds
 * them after the weighted ones, raw weights): `v` their values, `w` their
 * weights, `n` of them. */
typedef struct blend_add {
  const void *const *v;
  const double *w;
  size_t n;
  double total;
} blend_add;

/* The vector branch: finalValue += value * weight. */
static void add_vec3(const blend_add *ad, double out[3]) {
  for (size_t i = 0; i < ad->n; i++) {
    if (!ad->w[i])
      continue;
    const double *v = ad->v[i];
    for (int k = 0; k < 3; k++)
      out[k] += v[k] * ad->w[i];
  }
}

/* ProcessLateAnimationBindingsForQuaternions: the weighted layers, then
 * the additive ones (q = slerp(q, q * dq, w)). */
static void blend_quat_w(const double *orig, const double *const *q, const double *w, size_t n, double total,
                         const blend_add *ad, double out[4]);
static void blend_quat(const double *orig, const double *const *q, const double *w, size_t n, double total,
                       const blend_add *ad, double out[4]) {
  blend_quat_w(orig, q, w, n, total, ad, out);
  for (size_t i = 0; i < ad->n; i++) {
    if (ad->w[i] == 0)
      continue;
    double t[4];
    sk_anim__quat_mul(out, ad->v[i], t);
    sk_anim__quat_slerp(out, t, ad->w[i], out);
  }
}

static void blend_quat_w(const double *orig, const double *const *q, const double *w, size_t n, double total,
                         const blend_add *ad, double out[4]) {
  if (total == 0) { /* Babylon keeps the current value */
    memcpy(out, orig, 4 * sizeof *out);
    return;
  }
  if (n == 1) {
    sk_anim__quat_slerp(orig, q[0], total < 1.0 ? total : 1.0, out);
    return;
  }
  if (total >= 1.0 && n == 2 && ad->total == 0) { /* with additive ones Babylon redoes it below */
    sk_anim__quat_slerp(q[0], q[1], w[1] / total, out);
    return;
  }
  /* the original first (with 1 - total) when the weights add up to less than 1 */
  const bool mix = total < 1.0;
  const double normalizer = mix ? 1.0 : total;
  const size_t m = n + (mix ? 1 : 0);
  double cumulative = 0;
  for (size_t index = 0; index < m;) {
    const double *qi = mix ? (index ? q[index - 1] : orig) : q[index];
    double wi = mix ? (index ? w[index - 1] / normalizer : 1.0 - total) : w[index] / normalizer;
    if (!index) {
      const double *qn = mix ? q[0] : q[1];
      double wn = (mix ? w[0] : w[1]) / normalizer;
      sk_anim__quat_slerp(qi, qn, wn / (wi + wn), out);
      cumulative = wi + wn;
      index += 2;
      continue;
    }
    cumulative += wi;
    sk_anim__quat_slerp(out, qi, wi / cumulative, out);
    index++;
  }
}

/* ProcessLateAnimationBindingsForMatrices: decomposed, blended, the
 * additive layers added (scaling lerped to scaling * ds, rotation slerped
 * to q * dq, position += dp * w), composed into `out`. */
static void blend_matrix(const float *orig, const float *const *m, const double *w, size_t n, double total,
                         const blend_add *ad, float out[16]) {
  double fs[3], fq[4], fp[3], scale, normalizer = 1.0;
  size_t start = 0;
  bool skip = false;
  if (total == 0 && ad->total == 0) { /* the original value, as it was */
    memcpy(out, orig, 16 * sizeof *out);
    return;
  }
  if (total < 1.0) {
    scale = 1.0 - total;
    sk_mat_decompose(orig, fs, fq, fp);
  } else {
    start = 1;
    normalizer = total;
    scale = w[0] / normalizer;
    if (scale == 1 && ad->total == 0) {
      memcpy(out, m[0], 16 * sizeof *out);
      return;
    }
    skip = scale == 1; /* Babylon's skipOverride: the rotation is not normalised either */
    sk_mat_decompose(m[0], fs, fq, fp);
  }
  if (!skip)
    blend_matrix_w(m, w, n, start, normalizer, scale, fs, fq, fp);
  for (size_t i = 0; i < ad->n; i++) {
    if (ad->w[i] == 0)
      continue;
    double cs[3], cq[4], cp[3];
    sk_mat_decompose(ad->v[i], cs, cq, cp);
    for (int k = 0; k < 3; k++) {
      cs[k] = cs[k] * fs[k];
      fs[k] = fs[k] + (cs[k] - fs[k]) * ad->w[i];
    }
    sk_anim__quat_mul(fq, cq, cq);
    sk_anim__quat_slerp(fq, cq, ad->w[i], fq);
    for (int k = 0; k < 3; k++)
      fp[k] += cp[k] * ad->w[i];
  }
  sk_mat_compose(fs, fq, fp, out);
}

/* The weighted part of blend_matrix: scaled, summed, normalised. */
static void blend_matrix_w(const float *const *m, const double *w, size_t n, size_t start, double normalizer,
                           double scale, double fs[3], double fq[4], double fp[3]) {
  for (int k = 0; k < 3; k++) {
    fs[k] *= scale;
    fp[k] *= scale;
  }
  for (int k = 0; k < 4; k++)
    fq[k] *= scale;
  for (size_t i = start; i < n; i++) {
    if (w[i] == 0)
      continue;
    double cs[3], cq[4], cp[3];
    scale = w[i] / normalizer;
    sk_mat_decompose(m[i], cs, cq, cp);
    double dot = fq[0] * cq[0] + fq[1] * cq[1] + fq[2] * cq[2] + fq[3] * cq[3];
    double qs = dot > 0 ? scale : -scale;
    for (int k = 0; k < 3; k++) {
      fs[k] += cs[k] * scale;
      fp[k] += cp[k] * scale;
    }
    for (int k = 0; k < 4; k++)
      fq[k] += cq[k] * qs;
  }
  sk_anim__quat_normalize(fq);
}

/* An additive layer's values: its clip's channels made additive as
 * MakeAnimationAdditive makes them (sk_banim_add; made here unless the
 * caller made them once), sampled at the layer's frame into `t` (TRS, the
 * rest elsewhere) and `mats` (16 floats per bone). */
static int sample_additive(const sk_anim *a, const sk_anim_layer *l, const sk_anim_layer_ext *x, double *t,
                           float *mats, blend_src *src) {
  static const unsigned bit[3] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING};
  static const int offset[3] = {0, 3, 7};
  sk_banim_add_layer own = {0};
  const sk_banim_add_layer *add = x->babylon_add;
  if (add == NULL && sk_banim_add_layer_make(a, l->clip, x->reference, x->bone_weights, &own) != 0)
    return SK_ENOMEM;
  if (add == NULL)
    add = &own;
  memcpy(t, a->rest, a->bone_count * SK_ANIM_TRS * sizeof *t);
  const double frame = sk_anim__clip_frame(&a->clips[l->clip], l->time, l->loop);
  for (size_t k = 0; k < add->count; k++) {
    const sk_anim_channel *ch = &add->channels[k];
    blend_src *b = &src[ch->bone];
    b->trs = t + (size_t)ch->bone * SK_ANIM_TRS;
    if (ch->path == SK_ANIM_MATRIX) {
      float *m = mats + (size_t)ch->bone * 16;
      memcpy(m, sk_anim__sample_matrix(ch, frame), 16 * sizeof *m);
      b->matrix = m;
      b->mask |= SK_OVERRIDE_MATRIX;
    } else {
      sk_anim__sample_babylon(ch, frame, t + (size_t)ch->bone * SK_ANIM_TRS + offset[ch->path]);
      b->mask |= bit[ch->path];
    }
  }
  sk_banim_add_layer_close(&own);
  return 0;
}

/* Blends one bone's property `path` over the layers' sources into `o`. */
static void blend_path(const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count, const blend_src *src,
                       size_t nb, size_t b, unsigned path, const sk_local *cur, const double cs[3],
                       const double cq[4], const double cp[3], const void **vals, double *w, sk_override *o) {
  size_t n = 0, na = 0;
  double total = 0, atotal = 0;
  const void **avals = vals + count;
  double *aw = w + count;
  for (size_t i = 0; i < count; i++) {
    const blend_src *x = &src[i * nb + b];
    if (!(x->mask & path))
      continue;
    /* Animatable.weight clamps to [0, 1] */
    double wi = layers[i].weight < 0 ? 0 : layers[i].weight > 1.0 ? 1.0 : layers[i].weight;
    const void *v = path == SK_OVERRIDE_MATRIX     ? (const void *)x->matrix
                    : path == SK_OVERRIDE_POSITION ? (const void *)x->trs
                    : path == SK_OVERRIDE_ROTATION ? (const void *)(x->trs + 3)
                                                   : (const void *)(x->trs + 7);
    if (ext != NULL && ext[i].additive) {
      aw[na] = wi, atotal += wi, avals[na++] = v;
    } else {
      w[n] = wi, total += wi, vals[n++] = v;
    }
  }
  if (n == 0 && na == 0)
    return;
  const blend_add ad = {avals, aw, na, atotal};
  o->mask |= path;
  if (path == SK_OVERRIDE_MATRIX) {
    blend_matrix(cur->matrix, (const float *const *)vals, w, n, total, &ad, o->matrix);
  } else if (path == SK_OVERRIDE_ROTATION) {
    blend_quat(cq, (const double *const *)vals, w, n, total, &ad, o->rotation);
  } else {
    double *out = path == SK_OVERRIDE_POSITION ? o->position : o->scaling;
    blend_vec3(path == SK_OVERRIDE_POSITION ? cp : cs, (const double *const *)vals, w, n, total, out);
    add_vec3(&ad, out);
  }
}

/* Each bone's current scaling, rotation and position (now[10 b ..]: 3, 4
 * and 3 doubles), decomposed if stale, as Babylon's getters do. */
static void current_trs(const sk_skeleton *s, size_t nb, double *now) {
  for (size_t b = 0; b < nb; b++) {
    const sk_local *l = &s->bones[b].local;
    double *t = now + b * SK_ANIM_TRS;
    if (l->need_decompose) {
      sk_mat_decompose(l->matrix, t, t + 3, t + 7);
    } else {
      memcpy(t, l->scaling, 3 * sizeof *t);
      memcpy(t + 3, l->rotation, 4 * sizeof *t);
      memcpy(t + 7, l->position, 3 * sizeof *t);
    }
  }
}

/* The frame-at-a-time blend: its scratch, a cursor per channel of each
 * layer's clip (sk_anim_cursor) and each bone's current TRS, decomposed
 * once (the stored skeleton does not change under it). sk_banim_blend
 * runs it once; a context runs it per frame only when an additive layer
 * is made per frame (sk_banim_add's key budget). */
typedef struct once_ctx {
  const sk_anim *a;
  const sk_skeleton *s;
  const sk_anim_layer_ext *ext;
  size_t count, nb;
  double *trs;
  blend_src *src;
  const void **vals;
  double *w;
  float *mats;
  sk_anim_cursor **cur; /* count of them, NULL for an additive layer */
  double *now;          /* per bone: scaling 3, rotation 4, position 3 */
} once_ctx;

static void once_close(once_ctx *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; c->cur != NULL && i < c->count; i++)
    free(c->cur[i]);
  free(c->cur);
  free(c->trs), free(c->src), free(c->vals), free(c->w), free(c->mats), free(c->now);
  free(c);
}

static int once_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                     const sk_anim_layer_ext *ext, size_t count, once_ctx **out) {
  const size_t nb = a->bone_count, nc = count ? count : 1, nbb = nb ? nb : 1;
  bool any_add = false;
  for (size_t i = 0; ext != NULL && i < count; i++)
    any_add |= ext[i].additive;
  once_ctx *c = calloc(1, sizeof *c);
  *out = NULL;
  if (c == NULL)
    return SK_ENOMEM;
  *c = (once_ctx){.a = a, .s = s, .ext = ext, .count = count, .nb = nb};
  c->trs = malloc(nc * nbb * SK_ANIM_TRS * sizeof *c->trs);
  c->src = malloc(nc * nbb * sizeof *c->src);
  c->vals = malloc(2 * nc * sizeof *c->vals);
  c->w = malloc(2 * nc * sizeof *c->w);
  c->mats = any_add ? malloc(nc * nbb * 16 * sizeof *c->mats) : NULL;
  c->cur = calloc(nc, sizeof *c->cur);
  c->now = malloc(nbb * SK_ANIM_TRS * sizeof *c->now);
  bool ok = c->trs && c->src && c->vals && c->w && (!any_add || c->mats) && c->cur && c->now;
  for (size_t i = 0; ok && i < count; i++)
    if (ext == NULL || !ext[i].additive)
      ok = (c->cur[i] = calloc(a->clips[layers[i].clip].channel_count + 1, sizeof **c->cur)) != NULL;
  if (!ok) {
    once_close(c);
    return SK_ENOMEM;
  }
  current_trs(s, nb, c->now);
  *out = c;
  return 0;
}

static int once_frame(once_ctx *c, const sk_anim_layer *layers, sk_override *out, size_t *driven) {
  const sk_anim *a = c->a;
  const sk_anim_layer_ext *ext = c->ext;
  const size_t nb = c->nb, count = c->count;
  *driven = 0;
  memset(c->src, 0, (count ? count : 1) * (nb ? nb : 1) * sizeof *c->src);
  int rc = 0;
  static const unsigned bit[3] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING};
  for (size_t i = 0; !rc && i < count; i++) {
    const sk_anim_clip *cl = &a->clips[layers[i].clip];
    double *t = c->trs + i * nb * SK_ANIM_TRS;
    blend_src *src = c->src + i * nb;
    if (ext != NULL && ext[i].additive) {
      rc = sample_additive(a, &layers[i], &ext[i], t, c->mats + i * nb * 16, src);
      continue;
    }
    sk_anim_sample_at(a, layers[i].clip, layers[i].time, layers[i].loop, t, c->cur[i]);
    double frame = sk_anim__clip_frame(cl, layers[i].time, layers[i].loop);
    const float *mask = ext != NULL ? ext[i].bone_weights : NULL;
    for (size_t k = 0; k < cl->channel_count; k++) {
      const sk_anim_channel *ch = &cl->channels[k];
      if (mask != NULL && mask[ch->bone] == 0)
        continue; /* targetMask: this bone's animation is not started */
      blend_src *b = &src[ch->bone];
      b->trs = t + (size_t)ch->bone * SK_ANIM_TRS;
      if (ch->path == SK_ANIM_MATRIX) {
        b->matrix = sk_anim__sample_matrix_at(ch, frame, &c->cur[i][k]);
        b->mask |= SK_OVERRIDE_MATRIX;
      } else {
        b->mask |= bit[ch->path];
      }
    }
  }
  static const unsigned paths[4] = {SK_OVERRIDE_MATRIX, SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION,
                                    SK_OVERRIDE_SCALING};
  for (size_t b = 0; !rc && b < nb; b++) {
    sk_override *o = &out[b];
    memset(o, 0, sizeof *o);
    o->bone = (int32_t)b;
    const double *t = c->now + b * SK_ANIM_TRS;
    for (int p = 0; p < 4; p++)
      blend_path(layers, ext, count, c->src, nb, b, paths[p], &c->s->bones[b].local, t, t + 3, t + 7, c->vals, c->w,
                 o);
    *driven += o->mask != 0;
  }
  return rc;
}

int sk_banim_blend(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers, const sk_anim_layer_ext *ext,
                   size_t count, sk_override *out, size_t *driven) {
  once_ctx *c;
  *driven = 0;
  int rc = once_open(a, s, layers, ext, count, &c);
  if (rc == 0)
    rc = once_frame(c, layers, out, driven);
  once_close(c);
  return rc;
}

/* A context blends runs of frames. At open it plans, once for the range,
 * what every frame repeats: per layer the channels that count (the last
 * of each bone and path, as the sampler's "later channel wins", less the
 * masked bones) and a slot of values for each; per bone and path the
 * layers that drive it and their clamped weights (blend_path's gathering).
 * A run then samples each slot over its frames (sk_anim__sample_babylon_run:
 * one cursor a channel, the slerp sines together), and blends each bone's
 * path over the frames: positions, scalings and matrices frame by frame
 * with blend_path's functions, rotations one slerp step at a time over
 * all the frames (sk_anim__slerp_n), in blend_quat's order of steps. */

/* One layer's part of a run. */
typedef struct run_layer {
  const sk_anim_clip *clip;
  const sk_anim_channel *ch; /* the clip's channels, or the additive layer's made ones */
  size_t nch, nslot;
  bool loop;
  int32_t *slot;        /* [nch]: the channel's slot, -1 when it does not count */
  int32_t *bp;          /* [nb * 4]: slot of bone b's path p, -1 for none */
  sk_anim_cursor *cur;  /* [nch] */
  double *val;          /* [nslot][run][4]: a TRS slot's values, frame after frame */
  const float **mat;    /* [nslot][run]: a "_matrix" slot's held keys */
  double *frames;       /* [run] */
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
  once_ctx *once; /* non-NULL: frames blended one by one (an additive layer is made per frame) */
  run_layer *ly;
  run_item *items;
  size_t nitems;
  run_src *srcs;
  double *w;
  double *now;      /* each bone's current TRS (current_trs) */
  const void **vals; /* [2 * count] */
  double *rq, *tq;  /* [run][4] */
  sk_sampler *sampler; /* owned, or NULL */
  sk_anim_layer *l1; /* [count]: one frame's layers (the per-frame blend) */
  double *t1;        /* [count]: one frame's times */
};

/* The values a run keeps, at most (or one frame's): 64 KiB. With 256 KiB
 * (two 120 KiB buffers for two layers of Fox) glibc gave the freed heap
 * back at every request and the next one faulted it in again: 18 % of a
 * range's time in page faults; 64 frames or 16 measured the same apart
 * from that. */
#define RUN_BYTES (64u * 1024u)

void sk_banim_blend_close(sk_banim_blend_ctx *c) {
  if (c == NULL)
    return;
  once_close(c->once);
  for (size_t i = 0; c->ly != NULL && i < c->count; i++) {
    run_layer *L = &c->ly[i];
    free(L->slot), free(L->bp), free(L->cur), free(L->val), free(L->mat), free(L->frames);
    sk_sample_ctx_destroy(L->sctx);
    free(L->aos), free(L->times);
  }
  sk_sampler_destroy(c->sampler);
  free(c->ly), free(c->items), free(c->srcs), free(c->w), free(c->now), free(c->vals), free(c->rq), free(c->tq);
  free(c->l1), free(c->t1);
  free(c);
}

/* Layer i's channels and slots (the run's buffers come later). */
static int plan_layer(sk_banim_blend_ctx *c, const sk_anim_layer *l, const sk_anim_layer_ext *x, run_layer *L) {
  const sk_anim_clip *clip = &c->a->clips[l->clip];
  const bool additive = x != NULL && x->additive;
  const float *mask = x != NULL && !additive ? x->bone_weights : NULL; /* an additive layer's is in its keys */
  L->clip = clip;
  L->loop = l->loop;
  L->ch = additive ? x->babylon_add->channels : clip->channels;
  L->nch = additive ? x->babylon_add->count : clip->channel_count;
  const size_t nch = L->nch ? L->nch : 1;
  L->slot = malloc(nch * sizeof *L->slot);
  L->bp = malloc((c->nb ? c->nb : 1) * 4 * sizeof *L->bp);
  L->cur = calloc(nch, sizeof *L->cur);
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
  c->items = malloc((ns ? ns : 1) * sizeof *c->items);
  c->srcs = malloc((ns ? ns : 1) * sizeof *c->srcs);
  c->w = malloc((ns ? ns : 1) * sizeof *c->w);
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

/* Frames a run holds: as many as RUN_BYTES of values allow, 1 to
 * SK_ANIM_RUN_MAX; then the buffers. */
static int plan_run(sk_banim_blend_ctx *c) {
  size_t per_frame = 8 * SK_ANIM_TRS;
  for (size_t i = 0; i < c->count; i++)
    per_frame += c->ly[i].sctx != NULL ? (c->nb * SK_ANIM_TRS + 2) * sizeof(double)
                                       : c->ly[i].nslot * (4 * sizeof(double) + sizeof(float *)) + sizeof(double);
  c->run = RUN_BYTES / per_frame;
  c->run = c->run < 1 ? 1 : c->run > SK_ANIM_RUN_MAX ? SK_ANIM_RUN_MAX : c->run;
  for (size_t i = 0; i < c->count; i++) {
    run_layer *L = &c->ly[i];
    if (L->sctx != NULL) {
      L->aos = malloc((c->nb ? c->nb : 1) * SK_ANIM_TRS * c->run * sizeof *L->aos);
      L->times = malloc(c->run * sizeof *L->times);
      if (L->aos == NULL || L->times == NULL)
        return SK_ENOMEM;
      continue;
    }
    const size_t ns = L->nslot ? L->nslot : 1;
    L->val = malloc(ns * c->run * 4 * sizeof *L->val);
    L->mat = malloc(ns * c->run * sizeof *L->mat);
    L->frames = malloc(c->run * sizeof *L->frames);
    if (L->val == NULL || L->mat == NULL || L->frames == NULL)
      return SK_ENOMEM;
  }
  c->rq = malloc(c->run * 4 * sizeof *c->rq);
  c->tq = malloc(c->run * 4 * sizeof *c->tq);
  return c->rq != NULL && c->tq != NULL ? 0 : SK_ENOMEM;
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
    if (sk_sample_ctx_create(c->sampler, &one, 1, &c->ly[i].sctx) != 0)
      c->ly[i].sctx = NULL;
  }
}

int sk_banim_blend_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                        const sk_anim_layer_ext *ext, size_t count, sk_banim_blend_ctx **out) {
  return sk_banim_blend_open_sampled(a, s, layers, ext, count, NULL, out);
}

int sk_banim_blend_open_sampled(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                                const sk_anim_layer_ext *ext, size_t count, sk_sampler *smp,
                                sk_banim_blend_ctx **out) {
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
  c->l1 = malloc((count ? count : 1) * sizeof *c->l1);
  c->t1 = malloc((count ? count : 1) * sizeof *c->t1);
  int rc = c->l1 != NULL && c->t1 != NULL ? 0 : SK_ENOMEM;
  if (!rc && per_frame) {
    rc = once_open(a, s, layers, ext, count, &c->once);
  } else if (!rc) {
    c->ly = calloc(count ? count : 1, sizeof *c->ly);
    c->now = malloc((c->nb ? c->nb : 1) * SK_ANIM_TRS * sizeof *c->now);
    c->vals = malloc(2 * (count ? count : 1) * sizeof *c->vals);
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
      current_trs(s, c->nb, c->now);
    }
  }
  if (rc) {
    sk_banim_blend_close(c);
    return rc;
  }
  *out = c;
  return 0;
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
      L->frames[f] = sk_anim__clip_frame(L->clip, times[f * c->count + i], L->loop);
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
static void run_item_blend(sk_banim_blend_ctx *c, const run_item *it, size_t m, sk_override *const *out) {
  const run_src *x = c->srcs + it->src;
  const double *w = c->w + it->src, *now = c->now + (size_t)it->bone * SK_ANIM_TRS;
  const unsigned bit = it->path == SK_ANIM_MATRIX        ? SK_OVERRIDE_MATRIX
                       : it->path == SK_ANIM_TRANSLATION ? SK_OVERRIDE_POSITION
                       : it->path == SK_ANIM_ROTATION    ? SK_OVERRIDE_ROTATION
                                                         : SK_OVERRIDE_SCALING;
  if (it->path == SK_ANIM_ROTATION)
    run_rotation(c, it, m);
  const void **vals = c->vals, **avals = c->vals + it->n;
  for (size_t f = 0; f < m; f++) {
    sk_override *o = &out[f][it->bone];
    o->mask |= bit;
    if (it->path == SK_ANIM_ROTATION) {
      memcpy(o->rotation, c->rq + 4 * f, sizeof o->rotation);
      continue;
    }
    for (size_t j = 0; j < it->n + it->na; j++)
      vals[j] = it->path == SK_ANIM_MATRIX ? (const void *)c->ly[x[j].layer].mat[(size_t)x[j].slot * c->run + f]
                                           : (const void *)src_val(&x[j], f);
    const blend_add ad = {avals, w + it->n, it->na, it->atotal};
    if (it->path == SK_ANIM_MATRIX) {
      blend_matrix(c->s->bones[it->bone].local.matrix, (const float *const *)vals, w, it->n, it->total, &ad,
                   o->matrix);
    } else {
      double *v = it->path == SK_ANIM_TRANSLATION ? o->position : o->scaling;
      blend_vec3(it->path == SK_ANIM_TRANSLATION ? now + 7 : now, (const double *const *)vals, w, it->n, it->total,
                 v);
      add_vec3(&ad, v);
    }
  }
}

int sk_banim_blend_run(sk_banim_blend_ctx *c, const sk_anim_layer *layers, const double *times, size_t m,
                       sk_override *const *out, size_t *driven) {
  if (c->once != NULL) { /* m is 1 (sk_banim_blend_run_max) */
    for (size_t i = 0; i < c->count; i++)
      c->l1[i] = layers[i], c->l1[i].time = times[i];
    return once_frame(c->once, c->l1, out[0], &driven[0]);
  }
  (void)layers;
  run_sample(c, times, m);
  for (size_t f = 0; f < m; f++) {
    memset(out[f], 0, c->nb * sizeof *out[f]); /* one call a frame: per override, rep stos was most of a run */
    for (size_t b = 0; b < c->nb; b++)
      out[f][b].bone = (int32_t)b;
  }
  for (size_t k = 0; k < c->nitems; k++)
    run_item_blend(c, &c->items[k], m, out);
  for (size_t f = 0; f < m; f++) {
    driven[f] = 0;
    for (size_t b = 0; b < c->nb; b++)
      driven[f] += out[f][b].mask != 0;
  }
  return 0;
}

int sk_banim_blend_frame(sk_banim_blend_ctx *c, const sk_anim_layer *layers, sk_override *out, size_t *driven) {
  if (c->once != NULL)
    return once_frame(c->once, layers, out, driven);
  for (size_t i = 0; i < c->count; i++)
    c->t1[i] = layers[i].time;
  return sk_banim_blend_run(c, layers, c->t1, 1, &out, driven);
}
