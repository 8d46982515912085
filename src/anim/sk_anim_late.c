/* sk_anim's late animation bindings (sk_anim.h: sk_anim__late_blend and
 * friends): Babylon's ProcessLateAnimationBindings for the weighted glTF
 * layers, bone path by bone path, and the test of when the plain blend
 * the sampling contexts do at once gives the same bits. */
#include "sk_anim.h"
#include "sk_anim_math.h"

#include <stdlib.h>
#include <string.h>

/* A glTF channel drives its path, a _matrix channel all three; a bone of
 * mask weight 0 none (Babylon's masked-out targets register nothing). */
void sk_anim__layer_drives(const sk_anim *a, const sk_anim_layer *l, const float *mask, uint8_t *bits) {
  memset(bits, 0, a->bone_count);
  const sk_anim_clip *c = &a->clips[l->clip];
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->bone >= 0 && (size_t)ch->bone < a->bone_count)
      bits[ch->bone] |= ch->path == SK_ANIM_MATRIX ? 7 : (uint8_t)(1u << ch->path);
  }
  for (size_t b = 0; mask != NULL && b < a->bone_count; b++)
    if (mask[b] == 0)
      bits[b] = 0;
}

/* One vector of a target driven by the n layers v[k] of weights w[k]
 * (total T, summed in layer order): ProcessLateAnimationBindings' vector
 * branch. Under 1 the bone's own value is mixed in with 1 - T, else the
 * weights are normalised by T. */
static void late_vector(const double *orig, const double *const *v, const double *w, size_t n, double T,
                        double *out) {
  double r[3];
  size_t k0 = 0;
  double norm = 1.0;
  if (T < 1.0) {
    for (int j = 0; j < 3; j++)
      r[j] = orig[j] * (1.0 - T);
  } else {
    norm = T;
    const double s = w[0] / norm;
    for (int j = 0; j < 3; j++)
      r[j] = s != 1 ? v[0][j] * s : v[0][j];
    k0 = 1;
  }
  for (size_t k = k0; k < n; k++) {
    const double s = w[k] / norm;
    if (!s)
      continue;
    for (int j = 0; j < 3; j++)
      r[j] += v[k][j] * s;
  }
  memcpy(out, r, sizeof r);
}

/* ProcessLateAnimationBindingsForQuaternions: one animation slerps from
 * the bone's own rotation by min(1, T); two of T >= 1 slerp at once; else
 * a cumulative slerp over [own rotation (T < 1),] the layers' rotations. */
static void late_quat(const double *orig, const double *const *q, const double *w, size_t n, double T, double *out) {
  double r[4];
  if (n == 1) {
    sk_anim__quat_slerp(orig, q[0], T < 1.0 ? T : 1.0, r);
  } else if (T >= 1.0 && n == 2) {
    sk_anim__quat_slerp(q[0], q[1], w[1] / T, r);
  } else {
    /* The list [orig?, q0, q1, ...] with its weights, item i at i - lead. */
    const bool lead = T < 1.0;
    const double norm = lead ? 1.0 : T;
#define QI(i) (lead ? ((i) == 0 ? orig : q[(i) - 1]) : q[i])
#define WI(i) (lead ? ((i) == 0 ? 1.0 - T : w[(i) - 1] / norm) : w[i] / norm)
    const size_t m = n + (lead ? 1 : 0);
    const double w0 = WI(0), w1 = WI(1);
    sk_anim__quat_slerp(QI(0), QI(1), w1 / (w0 + w1), r);
    double cum = w0 + w1;
    for (size_t i = 2; i < m; i++) {
      const double wi = WI(i);
      cum += wi;
      sk_anim__quat_slerp(r, QI(i), wi / cum, r);
    }
#undef QI
#undef WI
  }
  memcpy(out, r, sizeof r);
}

/* Target by target: a bone's path blends only the layers that drive it,
 * with their total; one no layer drives keeps its rest value (Babylon
 * never registers it). */
void sk_anim__late_blend(const sk_anim *a, const double *const *src, const double *w, const uint8_t *drives, size_t nw,
                         const double **v, double *ws, double *trs) {
  sk_anim__late_blend_from(a, a->rest, src, w, drives, nw, v, ws, trs);
}

void sk_anim__late_blend_from(const sk_anim *a, const double *orig, const double *const *src, const double *w,
                              const uint8_t *drives, size_t nw, const double **v, double *ws, double *trs) {
  static const int at[3] = {0, 3, 7};
  for (size_t b = 0; b < a->bone_count; b++) {
    const double *rest = orig + b * SK_ANIM_TRS;
    double *t = trs + b * SK_ANIM_TRS;
    for (int p = 0; p < 3; p++) {
      size_t n = 0;
      double T = 0;
      for (size_t k = 0; k < nw; k++)
        if (drives[k * a->bone_count + b] & (1u << p)) {
          v[n] = src[k] + b * SK_ANIM_TRS + at[p];
          ws[n++] = w[k];
          T += w[k];
        }
      if (n == 0)
        memcpy(t + at[p], rest + at[p], (p == 1 ? 4 : 3) * sizeof *t);
      else if (p == 1)
        late_quat(rest + 3, v, ws, n, T, t + 3);
      else
        late_vector(rest + at[p], v, ws, n, T, t + at[p]);
    }
  }
}

bool sk_anim__blend_plain(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count) {
  double total = 0;
  size_t nw = 0;
  for (size_t i = 0; i < count; i++)
    if (ext == NULL || !ext[i].additive)
      total += layers[i].weight;
  const size_t nb = a->bone_count;
  uint8_t *first = malloc(nb ? nb : 1), *bits = malloc(nb ? nb : 1);
  const bool ok = first != NULL && bits != NULL;
  bool plain = true;
  double T = 0;
  for (size_t i = 0; ok && i < count; i++) {
    if ((ext != NULL && ext[i].additive) || total == 0 || layers[i].weight / total == 0)
      continue;
    T += sk_anim__late_weight(layers[i].weight, total);
    /* A clamped weight is not the plain blend's share of the total. */
    if (layers[i].weight > 1.0 || (ext != NULL && ext[i].bone_weights != NULL))
      plain = false;
    sk_anim__layer_drives(a, &layers[i], NULL, nw == 0 ? first : bits);
    if (nw++ > 0 && plain && memcmp(first, bits, nb) != 0)
      plain = false;
  }
  if (nw >= 2 && !(T == 1.0 || (T > 1.0 && nw >= 3))) /* two of T > 1: Babylon slerps by w1 / T at once */
    plain = false;
  free(first), free(bits);
  return ok && (plain || nw < 2);
}
