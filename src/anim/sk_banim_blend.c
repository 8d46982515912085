/* sk_banim_blend: Babylon-format clips played as weighted layers, as
 * Babylon's late animation bindings blend them (sk_banim_blend.h). */
#include "sk_banim_blend.h"
#include "sk_anim_math.h"

#include <stdlib.h>
#include <string.h>

#include "sk_anim_memo.h"
#include "sk_banim_add.h"
#include "sk_mat.h"
#include "sk_banim_blend_int.h"

static void blend_matrix_w(const float *const *m, const double *w, size_t n, size_t start, double normalizer,
                           double scale, double fs[3], double fq[4], double fp[3]);

/* The vector branch of ProcessLateAnimationBindings (Vector3 position or
 * scaling): `v[i]` the value of layer i that drives it, weights raw. */
void sk_banim_blend__vec3(const double *orig, const double *const *v, const double *w, size_t n, double total,
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

/* The vector branch: finalValue += value * weight. */
void sk_banim_blend__add_vec3(const sk_banim_blend__add *ad, double out[3]) {
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
                         const sk_banim_blend__add *ad, double out[4]);
static void blend_quat(const double *orig, const double *const *q, const double *w, size_t n, double total,
                       const sk_banim_blend__add *ad, double out[4]) {
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
                         const sk_banim_blend__add *ad, double out[4]) {
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
void sk_banim_blend__matrix(const float *orig, const float *const *m, const double *w, size_t n, double total,
                            const sk_banim_blend__add *ad, float out[16]) {
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

/* The weighted part of sk_banim_blend__matrix: scaled, summed, normalised. */
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
  if (add == NULL) /* made at upload (reference 0) or at first use, every bone: the mask applies below */
    add = x->reference == 0 ? sk_banim_add_kept_layer(a, l->clip) : sk_anim_memo_babylon(a, l->clip, x->reference);
  if (add == NULL && sk_banim_add_layer_make(a, l->clip, x->reference, x->bone_weights, &own) != 0)
    return SK_ENOMEM;
  if (add == NULL)
    add = &own;
  memcpy(t, a->rest, a->bone_count * SK_ANIM_TRS * sizeof *t);
  const double frame = sk_anim__layer_frame(&a->clips[l->clip], l->time, l->loop, x->speed);
  for (size_t k = 0; k < add->count; k++) {
    const sk_anim_channel *ch = &add->channels[k];
    if (x->bone_weights != NULL && x->bone_weights[ch->bone] == 0)
      continue; /* targetMask: this bone's animation is not started */
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
  const sk_banim_blend__add ad = {avals, aw, na, atotal};
  o->mask |= path;
  if (path == SK_OVERRIDE_MATRIX) {
    sk_banim_blend__matrix(cur->matrix, (const float *const *)vals, w, n, total, &ad, o->matrix);
  } else if (path == SK_OVERRIDE_ROTATION) {
    blend_quat(cq, (const double *const *)vals, w, n, total, &ad, o->rotation);
  } else {
    double *out = path == SK_OVERRIDE_POSITION ? o->position : o->scaling;
    sk_banim_blend__vec3(path == SK_OVERRIDE_POSITION ? cp : cs, (const double *const *)vals, w, n, total, out);
    sk_banim_blend__add_vec3(&ad, out);
  }
}

/* Each bone's current scaling, rotation and position (now[10 b ..]: 3, 4
 * and 3 doubles), decomposed if stale, as Babylon's getters do. */
void sk_banim_blend__current_trs(const sk_skeleton *s, size_t nb, double *now) {
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

void sk_banim_blend__once_close(sk_banim_blend__once *c) {
  if (c == NULL)
    return;
  for (size_t i = 0; c->cur != NULL && i < c->count; i++)
    free(c->cur[i]);
  free(c->cur);
  free(c->trs), free(c->src), free(c->vals), free(c->w), free(c->mats), free(c->now), free(c->bmats);
  free(c);
}

int sk_banim_blend__once_open(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers,
                              const sk_anim_layer_ext *ext, size_t count, sk_banim_blend__once **out) {
  const size_t nb = a->bone_count, nc = count ? count : 1, nbb = nb ? nb : 1;
  bool any_add = false;
  for (size_t i = 0; ext != NULL && i < count; i++)
    any_add |= ext[i].additive;
  sk_banim_blend__once *c = calloc(1, sizeof *c);
  *out = NULL;
  if (c == NULL)
    return SK_ENOMEM;
  *c = (sk_banim_blend__once){.a = a, .s = s, .ext = ext, .count = count, .nb = nb, .blended = count};
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
    sk_banim_blend__once_close(c);
    return SK_ENOMEM;
  }
  sk_banim_blend__current_trs(s, nb, c->now);
  *out = c;
  return 0;
}

/* Matrix.DecomposeLerpToRef: both decomposed, scalings and translations
 * lerped, rotations slerped, composed into `dest`. */
static void decompose_lerp(const float *from, const float *to, double t, float dest[16]) {
  double s0[3], q0[4], p0[3], s1[3], q1[4], p1[3];
  sk_mat_decompose(from, s0, q0, p0);
  sk_mat_decompose(to, s1, q1, p1);
  for (int k = 0; k < 3; k++) {
    s0[k] = s0[k] + (s1[k] - s0[k]) * t;
    p0[k] = p0[k] + (p1[k] - p0[k]) * t;
  }
  sk_anim__quat_slerp(q0, q1, t, q0);
  sk_mat_compose(s0, q0, p0, dest);
}

/* One value of the crossfaded layer's channel `ch` (its bone's TRS `t`,
 * its source `b`) blended from the snapshot: the bone's value in c->s as
 * Babylon's getters give it (the matrix; position, rotation and scaling
 * decomposed, c->now), with c->factor. */
static void blend_in_value(sk_banim_blend__once *c, const sk_anim_channel *ch, double *t, blend_src *b) {
  const size_t bone = (size_t)ch->bone;
  const double *now = c->now + bone * SK_ANIM_TRS; /* scaling, rotation, position */
  const double f = c->factor;
  if (ch->path == SK_ANIM_MATRIX) {
    float *m = c->bmats + bone * 16;
    decompose_lerp(c->s->bones[bone].local.matrix, b->matrix, f, m);
    b->matrix = m;
  } else if (ch->path == SK_ANIM_ROTATION) {
    sk_anim__quat_slerp(now + 3, t + 3, f, t + 3);
  } else {
    double *v = t + (ch->path == SK_ANIM_TRANSLATION ? 0 : 7);
    const double *o = ch->path == SK_ANIM_TRANSLATION ? now + 7 : now;
    for (int k = 0; k < 3; k++) /* Vector3.LerpToRef */
      v[k] = o[k] + (v[k] - o[k]) * f;
  }
}

int sk_banim_blend__once_frame(sk_banim_blend__once *c, const sk_anim_layer *layers, sk_override *out, size_t *driven) {
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
    const double speed = ext != NULL ? ext[i].speed : 0;
    sk_anim__sample_layer_at(a, &layers[i], speed, layers[i].time, t, c->cur[i]);
    double frame = sk_anim__layer_frame(cl, layers[i].time, layers[i].loop, speed);
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
      if (i == c->blended && c->factor <= 1)
        blend_in_value(c, ch, t + (size_t)ch->bone * SK_ANIM_TRS, b);
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

int sk_banim_blend_in(const sk_anim *a, const sk_skeleton *snap, const sk_anim_layer *layers,
                      const sk_anim_layer_ext *ext, size_t count, size_t blended, double factor, sk_override *out,
                      size_t *driven) {
  sk_banim_blend__once *c;
  *driven = 0;
  int rc = sk_banim_blend__once_open(a, snap, layers, ext, count, &c);
  if (rc == 0) {
    c->blended = blended, c->factor = factor;
    if ((c->bmats = malloc((a->bone_count ? a->bone_count : 1) * 16 * sizeof *c->bmats)) == NULL)
      rc = SK_ENOMEM;
  }
  if (rc == 0)
    rc = sk_banim_blend__once_frame(c, layers, out, driven);
  sk_banim_blend__once_close(c);
  return rc;
}

int sk_banim_blend(const sk_anim *a, const sk_skeleton *s, const sk_anim_layer *layers, const sk_anim_layer_ext *ext,
                   size_t count, sk_override *out, size_t *driven) {
  sk_banim_blend__once *c;
  *driven = 0;
  int rc = sk_banim_blend__once_open(a, s, layers, ext, count, &c);
  if (rc == 0)
    rc = sk_banim_blend__once_frame(c, layers, out, driven);
  sk_banim_blend__once_close(c);
  return rc;
}
