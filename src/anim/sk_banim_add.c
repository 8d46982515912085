#include "sk_banim_add.h"
#include "sk_anim_math.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_mat.h"

/* Key tags: which keys share one value object with the animation's key 0. */
enum { TAG_NONE = 0, TAG_KEY0 = 1, TAG_SHARES_KEY0 = 2 };

double sk_banim_add_ref_frame(const sk_anim_clip *c, double reference) { return c->from_frame + reference * c->fps; }

int sk_banim_add_check(const sk_anim *a, size_t clip, double reference, const sk_skeleton *s, const char *ptr,
                       sk_error *err) {
  const sk_anim_clip *c = &a->clips[clip];
  const double ref = sk_banim_add_ref_frame(c, reference);
  char q[SK_ERROR_POINTER_MAX];
  snprintf(q, sizeof q, "%s", ptr);
  /* After the range (a reference of the clip's duration can round past it)
   * the value comes from the keys after it, which a clip keeps up to the
   * first one after the range: beyond that, refused. */
  for (size_t k = 0; !(ref <= c->to_frame) && k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (!(ref < ch->frames[ch->count - 1] || ch->frames[ch->count - 1] == c->to_frame)) {
      sk_pointer_push(q, sizeof q, "reference");
      return sk_error_set(err, SK_ERANGE, q, "the reference (frame %.17g) is after the clip's last frame %.17g", ref,
                          c->to_frame);
    }
  }
  sk_pointer_push(q, sizeof q, "additive");
  if (c->from_frame < 0)
    return sk_error_set(err, SK_EUNSUPPORTED, q,
                        "the range starts before frame 0: Babylon's MakeAnimationAdditive cannot insert a key there");
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    const char *name = s->bones[ch->bone].name;
    if (ch->pads & SK_ANIM_BPAD_EXTRA)
      return sk_error_set(err, SK_EUNSUPPORTED, q,
                          "bone \"%s\" has several animations; Babylon's ranges are on the first one only, so "
                          "MakeAnimationAdditive would change the others whole",
                          name);
    if (ch->frames[ch->count - 1] < c->to_frame)
      return sk_error_set(err, SK_EUNSUPPORTED, q,
                          "the animation of bone \"%s\" ends at frame %.17g, before the range's end %.17g: Babylon's "
                          "MakeAnimationAdditive fails there (createKeyForFrame after the last key)",
                          name, ch->frames[ch->count - 1], c->to_frame);
    if (ref <= 0 && ch->count > 1 && !(ch->pads & SK_ANIM_BPAD_FIRST))
      return sk_error_set(err, SK_EUNSUPPORTED, q,
                          "the animation of bone \"%s\" has several keys at frame 0; reference 0 would take the first "
                          "of them, which the clip does not keep",
                          name);
  }
  return 0;
}

/* The value Animation._interpolate gives at `f` with the CONSTANT state
 * MakeAnimationAdditive uses (no RELATIVE offset): `w` numbers into `v`. */
static void raw_value(const sk_anim_channel *ch, double f, double *v) {
  if (ch->path == SK_ANIM_MATRIX) {
    const float *m = sk_anim__sample_matrix(ch, f);
    for (int i = 0; i < 16; i++)
      v[i] = m[i];
    return;
  }
  sk_anim_channel raw = *ch;
  raw.relative = false;
  sk_anim__sample_babylon(&raw, f, v);
}

/* Animation.createKeyForFrame(f) on `ch` (capacity for one more key): the
 * index of the key at `f`, inserted (interpolated value, no tangents, no
 * interpolation) between the keys around it when there is none. `f` lies
 * within the keys (sk_banim_add_check). */
static size_t create_key(sk_anim_channel *ch, uint8_t *tag, double f) {
  const bool mat = ch->path == SK_ANIM_MATRIX;
  const size_t n = ch->count, w = mat ? 16 : ch->path == SK_ANIM_ROTATION ? 4 : 3, stride = mat ? 16 : 3 * w;
  size_t key = 0;
  while (key + 1 <= n - 1 && f >= ch->frames[key + 1])
    key++;
  if (ch->frames[key] == f || key + 1 > n - 1)
    return ch->frames[key] == f ? key : key + 1;
  double v[16];
  raw_value(ch, f, v);
  const size_t at = key + 1, move = n - at;
  memmove(ch->frames + at + 1, ch->frames + at, move * sizeof *ch->frames);
  memmove(ch->key_flags + at + 1, ch->key_flags + at, move);
  memmove(tag + at + 1, tag + at, move);
  ch->frames[at] = f;
  ch->key_flags[at] = 0;
  tag[at] = TAG_NONE;
  if (mat) {
    memmove(ch->values + (at + 1) * 16, ch->values + at * 16, move * 16 * sizeof *ch->values);
    for (int i = 0; i < 16; i++)
      ch->values[at * 16 + (size_t)i] = (float)v[i];
  } else {
    memmove(ch->values64 + (at + 1) * stride, ch->values64 + at * stride, move * stride * sizeof *ch->values64);
    memset(ch->values64 + at * stride, 0, stride * sizeof *ch->values64);
    memcpy(ch->values64 + at * stride, v, w * sizeof *v);
  }
  ch->count = n + 1;
  return at;
}

void sk_banim_add_channel_close(sk_anim_channel *ch) {
  free(ch->frames);
  free(ch->values);
  free(ch->values64);
  free(ch->key_flags);
  memset(ch, 0, sizeof *ch);
}

/* One key made relative to the reference (rs, rq conjugated, rp for
 * matrices; ref for the others). */
static void make_relative(sk_anim_channel *ch, size_t k, const double *ref, const double rs[3], const double rq[4],
                          const double rp[3]) {
  if (ch->path == SK_ANIM_MATRIX) {
    float *m = ch->values + k * 16;
    double ks[3], kq[4], kp[3];
    sk_mat_decompose(m, ks, kq, kp);
    for (int i = 0; i < 3; i++) {
      kp[i] = kp[i] - rp[i];
      ks[i] = ks[i] / rs[i];
    }
    sk_anim__quat_mul(rq, kq, kq);
    sk_mat_compose(ks, kq, kp, m);
    return;
  }
  const int w = ch->path == SK_ANIM_ROTATION ? 4 : 3;
  double *x = ch->values64 + k * 3 * (size_t)w;
  if (w == 4)
    sk_anim__quat_mul(ref, x, x);
  else
    for (int i = 0; i < 3; i++)
      x[i] = x[i] - ref[i];
}

int sk_banim_add_channel(const sk_anim_clip *c, const sk_anim_channel *ch, double ref_frame, sk_anim_channel *out) {
  const bool mat = ch->path == SK_ANIM_MATRIX;
  const size_t n = ch->count, cap = n + 2, w = mat ? 16 : ch->path == SK_ANIM_ROTATION ? 4 : 3;
  const size_t stride = mat ? 16 : 3 * w;
  *out = *ch;
  out->values = NULL, out->values64 = NULL;
  out->frames = malloc(cap * sizeof *out->frames);
  out->key_flags = calloc(cap, 1);
  uint8_t *tag = calloc(cap, 1);
  if (mat)
    out->values = malloc(cap * 16 * sizeof *out->values);
  else
    out->values64 = malloc(cap * stride * sizeof *out->values64);
  if (out->frames == NULL || out->key_flags == NULL || tag == NULL || (out->values == NULL && out->values64 == NULL)) {
    free(tag);
    sk_banim_add_channel_close(out);
    return SK_ENOMEM;
  }
  memcpy(out->frames, ch->frames, n * sizeof *out->frames);
  if (ch->key_flags != NULL)
    memcpy(out->key_flags, ch->key_flags, n);
  if (mat)
    memcpy(out->values, ch->values, n * 16 * sizeof *out->values);
  else
    memcpy(out->values64, ch->values64, n * stride * sizeof *out->values64);
  if (ch->pads & SK_ANIM_BPAD_FIRST)
    tag[0] = TAG_KEY0;
  if ((ch->pads & SK_ANIM_BPAD_PAD0) && n > 1)
    tag[1] = TAG_SHARES_KEY0;
  if (ch->pads & SK_ANIM_BPAD_PAD1)
    tag[0] = TAG_SHARES_KEY0;
  /* The animation's key 0 is at frame 0 (RuntimeAnimation put one there).
   * When the range ends on the last key, Babylon's endIndex is the last
   * index from before the key inserted at `from`: the last key then keeps
   * its value (what Babylon does; tests/check_sk_banim_add.c). */
  const bool to_last = out->frames[n - 1] == c->to_frame;
  size_t start = c->from_frame == 0 ? 0 : create_key(out, tag, c->from_frame);
  size_t end = to_last ? n - 1 : create_key(out, tag, c->to_frame);
  double ref[16], rs[3] = {0}, rq[4] = {0}, rp[3] = {0};
  size_t last = out->count - 1;
  if (out->count == 1 || ref_frame <= 0)
    raw_value(out, out->frames[0], ref);
  else if (ref_frame >= out->frames[last])
    raw_value(out, out->frames[last], ref);
  else
    raw_value(out, ref_frame, ref);
  if (mat) {
    float rm[16];
    for (int i = 0; i < 16; i++)
      rm[i] = (float)ref[i];
    sk_mat_decompose(rm, rs, rq, rp);
    sk_anim__quat_normalize(rq);
    rq[0] = -rq[0], rq[1] = -rq[1], rq[2] = -rq[2];
  } else if (w == 4) {
    sk_anim__quat_normalize(ref);
    ref[0] = -ref[0], ref[1] = -ref[1], ref[2] = -ref[2];
  }
  for (size_t k = start; k <= end && k < out->count; k++)
    if (tag[k] != TAG_SHARES_KEY0) /* Babylon's loop skips the keys sharing key 0's value */
      make_relative(out, k, ref, rs, rq, rp);
  for (size_t k = 0; tag[0] == TAG_KEY0 && k < out->count; k++)
    if (tag[k] == TAG_SHARES_KEY0) /* one value object: what key 0 became */
      memcpy(mat ? (void *)(out->values + k * 16) : (void *)(out->values64 + k * stride),
             mat ? (const void *)out->values : (const void *)out->values64,
             mat ? 16 * sizeof *out->values : w * sizeof *out->values64);
  free(tag);
  return 0;
}

void sk_banim_add_layer_close(sk_banim_add_layer *l) {
  for (size_t k = 0; k < l->count; k++)
    sk_banim_add_channel_close(&l->channels[k]);
  free(l->channels);
  memset(l, 0, sizeof *l);
}

int sk_banim_add_layer_make(const sk_anim *a, size_t clip, double reference, const float *bone_weights,
                            sk_banim_add_layer *out) {
  const sk_anim_clip *c = &a->clips[clip];
  memset(out, 0, sizeof *out);
  out->channels = calloc(c->channel_count ? c->channel_count : 1, sizeof *out->channels);
  if (out->channels == NULL)
    return SK_ENOMEM;
  const double ref = sk_banim_add_ref_frame(c, reference);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (bone_weights != NULL && bone_weights[ch->bone] == 0)
      continue; /* targetMask: not started */
    if (sk_banim_add_channel(c, ch, ref, &out->channels[out->count]) != 0) {
      sk_banim_add_layer_close(out);
      return SK_ENOMEM;
    }
    out->count++;
  }
  return 0;
}

void sk_banim_add_layers_free(sk_banim_add_layer *layers, size_t n) {
  for (size_t i = 0; layers != NULL && i < n; i++)
    sk_banim_add_layer_close(&layers[i]);
  free(layers);
}

void sk_banim_add__kept_free(sk_banim_add_kept *k) {
  if (k == NULL)
    return;
  sk_banim_add_layers_free(k->layers, k->count);
  free(k->kept);
  free(k);
}

/* What one made-additive channel holds (sk_anim_memory's measure). */
static size_t channel_bytes(const sk_anim_channel *ch) {
  const size_t w = ch->path == SK_ANIM_ROTATION ? 4 : 3;
  size_t n = sizeof *ch + ch->count * sizeof(double) + (ch->key_flags != NULL ? ch->count : 0);
  if (ch->path == SK_ANIM_MATRIX)
    return n + ch->count * 16 * sizeof(float);
  return n + (ch->values64 != NULL ? ch->count * 3 * w * sizeof(double) : ch->count * w * 3 * sizeof(float));
}

int sk_banim_add__share(sk_anim *a, const sk_skeleton *s, size_t max_bytes) {
  if (a == NULL || !a->babylon || s == NULL || a->clip_count == 0 ||
      __atomic_load_n(&a->babylon_additive, __ATOMIC_ACQUIRE) != NULL)
    return 0;
  sk_banim_add_kept *k = calloc(1, sizeof *k);
  if (k == NULL || (k->layers = calloc(a->clip_count, sizeof *k->layers)) == NULL ||
      (k->kept = calloc(a->clip_count, sizeof *k->kept)) == NULL) {
    sk_banim_add__kept_free(k);
    return SK_ENOMEM;
  }
  k->count = a->clip_count;
  k->bytes = sizeof *k + a->clip_count * (sizeof *k->layers + sizeof *k->kept);
  for (size_t c = 0; c < a->clip_count; c++) {
    if (sk_banim_add_check(a, c, 0, s, "", NULL) != 0)
      continue; /* refused at every request: nothing to keep */
    if (sk_banim_add_layer_make(a, c, 0, NULL, &k->layers[c]) != 0) {
      sk_banim_add__kept_free(k);
      return SK_ENOMEM;
    }
    k->kept[c] = true;
    for (size_t i = 0; i < k->layers[c].count; i++)
      k->bytes += channel_bytes(&k->layers[c].channels[i]);
    if (k->bytes > max_bytes) {
      sk_banim_add__kept_free(k);
      return SK_ETOOBIG;
    }
  }
  sk_banim_add_kept *none = NULL;
  if (!__atomic_compare_exchange_n(&a->babylon_additive, &none, k, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    sk_banim_add__kept_free(k); /* another thread published first */
  return 0;
}

size_t sk_banim_add_layer_bound(const sk_anim *a, size_t clip) {
  const sk_anim_clip *c = &a->clips[clip];
  size_t n = (c->channel_count ? c->channel_count : 1) * sizeof(sk_anim_channel);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    const size_t cap = ch->count + 2, w = ch->path == SK_ANIM_ROTATION ? 4 : 3; /* sk_banim_add_channel's */
    n += cap * (sizeof(double) + 1 + 1 + (ch->path == SK_ANIM_MATRIX ? 16 * sizeof(float) : 3 * w * sizeof(double)));
  }
  return n;
}

const sk_banim_add_layer *sk_banim_add_kept_layer(const sk_anim *a, size_t clip) {
  const sk_banim_add_kept *k = __atomic_load_n(&a->babylon_additive, __ATOMIC_ACQUIRE);
  return k != NULL && clip < k->count && k->kept[clip] ? &k->layers[clip] : NULL;
}
