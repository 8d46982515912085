#include "sk_blendin.h"

#include <stdlib.h>
#include <string.h>

#include "sk_error.h"

#include "sk_anim_math.h"

void sk_blendin_init(sk_blendin *b, double speed) { *b = (sk_blendin){.speed = speed}; }

double sk_blendin_factor(sk_blendin *b, uint64_t k) {
  if (k < b->j)
    sk_blendin_init(b, b->speed);
  while (b->j < k && b->factor <= 1) {
    b->factor += b->speed;
    b->j++;
  }
  if (b->j < k) /* past 1 already: later writes do not blend */
    b->j = k;
  return b->factor;
}

bool sk_blendin_blending(sk_blendin *b, uint64_t k) { return sk_blendin_factor(b, k) <= 1; }

void sk_blendin_driven(const sk_anim *a, size_t clip, uint8_t *drv) {
  const sk_anim_clip *c = &a->clips[clip];
  memset(drv, 0, a->bone_count * 3);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->path >= SK_ANIM_TRANSLATION && ch->path <= SK_ANIM_SCALE)
      drv[(size_t)ch->bone * 3 + (size_t)(ch->path - SK_ANIM_TRANSLATION)] = 1;
  }
}

void sk_blendin_apply(const sk_anim *a, const uint8_t *drv, const double *snap, double factor, double *trs) {
  static const int offset[3] = {0, 3, 7}, width[3] = {3, 4, 3};
  for (size_t b = 0; b < a->bone_count; b++) {
    double *t = trs + b * SK_ANIM_TRS;
    const double *s = snap + b * SK_ANIM_TRS;
    for (int p = 0; p < 3; p++) {
      double *v = t + offset[p];
      const double *sv = s + offset[p];
      if (!drv[b * 3 + (size_t)p])
        memcpy(v, sv, (size_t)width[p] * sizeof *v);
      else if (!(factor <= 1))
        continue; /* blended in: the clip's own value */
      else if (p == 1)
        sk_anim__quat_slerp(sv, v, factor, v); /* Quaternion.Slerp(snapshot, value, factor) */
      else
        for (int i = 0; i < 3; i++) /* Vector3.Lerp */
          v[i] = sv[i] + (v[i] - sv[i]) * factor;
    }
  }
}

int sk_blendin_layers(const sk_anim *a, const sk_anim_layer *layers, size_t count, size_t blended, const uint8_t *drv,
                      const double *snap, double factor, double *trs) {
  const size_t nb = a->bone_count, fs = (nb ? nb : 1) * SK_ANIM_TRS;
  double *buf = malloc(fs * count * sizeof *buf), *w = malloc(count * 2 * sizeof *w);
  const double **src = malloc(count * 2 * sizeof *src);
  uint8_t *drives = malloc((nb ? nb : 1) * count);
  int rc = buf == NULL || w == NULL || src == NULL || drives == NULL ? SK_ENOMEM : 0;
  double total = 0;
  for (size_t i = 0; i < count; i++)
    total += layers[i].weight;
  for (size_t i = 0; !rc && i < count; i++) {
    double *dst = buf + i * fs;
    sk_anim__sample_layer_at(a, &layers[i], 0, layers[i].time, dst, NULL);
    if (i == blended) /* the value each of its writes hands the late bindings */
      sk_blendin_apply(a, drv, snap, factor, dst);
    sk_anim__layer_drives(a, &layers[i], NULL, drives + i * nb);
    src[i] = dst;
    w[i] = sk_anim__late_weight(layers[i].weight, total);
  }
  if (!rc)
    sk_anim__late_blend_from(a, snap, src, w, drives, count, src + count, w + count, trs);
  free(buf), free(w), free(src), free(drives);
  return rc;
}
