#include "sk_anim.h"
#include "sk_anim_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sk_anim_memo.h"
#include "sk_banim_add.h"
#include "sk_vsin.h"

sk_anim *sk_anim_ref(sk_anim *a) {
  if (a != NULL)
    __atomic_add_fetch(&a->extra_refs, 1, __ATOMIC_RELAXED);
  return a;
}

int sk_anim_create_babylon_empty(size_t bone_count, sk_anim **out) {
  *out = calloc(1, sizeof **out);
  if (*out == NULL)
    return SK_ENOMEM;
  (*out)->bone_count = bone_count;
  (*out)->babylon = true;
  return 0;
}

struct sk_anim_additive;
static void additive_free(struct sk_anim_additive *t);

void sk_anim_destroy(sk_anim *a) {
  if (a == NULL)
    return;
  /* acq_rel: the holder that frees must see every other holder done. */
  if (__atomic_fetch_sub(&a->extra_refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  if (a->derived != NULL)
    a->derived_free(a->derived);
  additive_free(a->additive);
  sk_banim_add__kept_free(a->babylon_additive);
  sk_anim__memo_free(a);
  for (size_t c = 0; c < a->clip_count; c++) {
    sk_anim_clip *clip = &a->clips[c];
    for (size_t k = 0; k < clip->channel_count; k++) {
      free(clip->channels[k].frames);
      free(clip->channels[k].values);
      free(clip->channels[k].values64);
      free(clip->channels[k].key_flags);
    }
    free(clip->channels);
    free(clip->name);
    sk_events_free(&clip->events);
  }
  free(a->clips);
  free(a->rest);
  free(a->source);
  free(a->nodes);
  free(a);
}

size_t sk_anim_memory(const sk_anim *a) {
  if (a == NULL)
    return 0;
  size_t n = sizeof *a + a->bone_count * SK_ANIM_TRS * sizeof(double) + a->clip_count * sizeof *a->clips +
             a->source_len + (a->nodes != NULL ? a->nodes->bytes : 0);
  for (size_t c = 0; c < a->clip_count; c++) {
    const sk_anim_clip *clip = &a->clips[c];
    n += strlen(clip->name) + 1 + clip->channel_count * sizeof *clip->channels + sk_events_memory(&clip->events);
    for (size_t k = 0; k < clip->channel_count; k++) {
      const sk_anim_channel *ch = &clip->channels[k];
      size_t w = ch->path == SK_ANIM_ROTATION ? 4 : 3, per = ch->interp == SK_ANIM_CUBICSPLINE ? 3 : 1;
      if (ch->path == SK_ANIM_MATRIX)
        n += ch->count * (sizeof(double) + 16 * sizeof(float));
      else if (ch->values64 != NULL)
        n += ch->count * (sizeof(double) + 3 * w * sizeof(double));
      else
        n += ch->count * (sizeof(double) + w * per * sizeof(float));
      if (ch->key_flags != NULL)
        n += ch->count;
    }
  }
  return n;
}

double sk_anim_clip_duration(const sk_anim *a, size_t clip) {
  const sk_anim_clip *c = &a->clips[clip];
  if (c->fps > 0)
    return (c->to_frame - c->from_frame) / c->fps;
  return c->end_frame / SK_ANIM_FPS;
}

int sk_anim_find_clip(const sk_anim *a, const char *name, size_t *clip) {
  for (size_t c = 0; c < a->clip_count; c++)
    if (strcmp(a->clips[c].name, name) == 0) {
      *clip = c;
      return 0;
    }
  /* "animation<k>" for an unnamed clip is already its stored name; what is
   * left is the bare index. */
  if (name[0] >= '0' && name[0] <= '9' && strlen(name) < 20) {
    char *end;
    unsigned long long k = strtoull(name, &end, 10);
    bool canonical = *end == '\0' && (name[0] != '0' || name[1] == '\0');
    if (canonical && k < a->clip_count) {
      *clip = (size_t)k;
      return 0;
    }
  }
  return SK_ENOTFOUND;
}

/* ---- Babylon's interpolation functions, operation for operation ---------- */
/* (quaternion normalize and slerp, Hermite: sk_anim_math.h, shared with sk_sample.c) */

static int path_width(int path) { return path == SK_ANIM_ROTATION ? 4 : 3; }

/* Key value i (float storage, or the doubles of an additive copy). */
static inline double kv(const float *fv, const double *dv, size_t i) { return dv != NULL ? dv[i] : (double)fv[i]; }

/* The value of one channel at `frame` (Animation._interpolate after
 * RuntimeAnimation.goToFrame's clamp), written to `out` (width doubles),
 * reading the key values from `dv` when non-NULL (same layout as
 * ch->values, as doubles) instead of ch->values. */
static void sample_channel_v(const sk_anim_channel *ch, const double *dv, double frame, double *out) {
  const int w = path_width(ch->path);
  const size_t n = ch->count;
  const float *fv = ch->values;
  const size_t stride = ch->interp == SK_ANIM_CUBICSPLINE ? 3 * (size_t)w : (size_t)w;
  const size_t vo = ch->interp == SK_ANIM_CUBICSPLINE ? (size_t)w : 0; /* value after the in-tangent */
  if (frame < ch->frames[0])
    frame = ch->frames[0];
  else if (frame > ch->frames[n - 1])
    frame = ch->frames[n - 1];
  /* Largest key at or before the frame (Babylon walks the same way). */
  size_t lo = 0, hi = n; /* invariant: frames[lo] <= frame, key in [lo, hi) */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (frame >= ch->frames[mid])
      lo = mid;
    else
      hi = mid;
  }
  size_t key = lo;
  const size_t sv = key * stride + vo;
  if (key + 1 > n - 1 || ch->interp == SK_ANIM_STEP) {
    for (int i = 0; i < w; i++)
      out[i] = kv(fv, dv, sv + (size_t)i);
    return;
  }
  const size_t ev = (key + 1) * stride + vo;
  double start[4], end[4];
  for (int i = 0; i < w; i++) {
    start[i] = kv(fv, dv, sv + (size_t)i);
    end[i] = kv(fv, dv, ev + (size_t)i);
  }
  double frame_delta = ch->frames[key + 1] - ch->frames[key];
  double gradient = (frame - ch->frames[key]) / frame_delta;
  if (ch->interp == SK_ANIM_CUBICSPLINE) {
    /* The loader stores tangents times 1/fps; _interpolate scales them by
     * the key interval in frames: tangent * (t[k+1] - t[k]) seconds. */
    const double invfps = 1 / SK_ANIM_FPS;
    const size_t out_t = key * stride + 2 * (size_t)w;
    const size_t in_t = (key + 1) * stride;
    double t1[4], t2[4];
    for (int i = 0; i < w; i++) {
      t1[i] = (kv(fv, dv, out_t + (size_t)i) * invfps) * frame_delta;
      t2[i] = (kv(fv, dv, in_t + (size_t)i) * invfps) * frame_delta;
    }
    sk_anim__hermite(start, t1, end, t2, gradient, w, out);
    if (w == 4)
      sk_anim__quat_normalize(out);
    return;
  }
  if (w == 4) {
    /* Not re-normalised, as in Babylon: unit keys give a unit result (to
     * 1e-7), and a file with sloppy keys (SimpleSkin's 3-digit quaternions)
     * scales its bones exactly as Babylon does. */
    sk_anim__quat_slerp(start, end, gradient, out);
    return;
  }
  for (int i = 0; i < w; i++)
    out[i] = start[i] + (end[i] - start[i]) * gradient;
}

static void sample_channel(const sk_anim_channel *ch, double frame, double *out) {
  sample_channel_v(ch, NULL, frame, out);
}

/* Largest key at or before `frame` (Babylon's key walk ends on the same
 * key: the last of equal frames). `frame` is already clamped to the keys. */
static size_t key_before(const double *frames, size_t n, double frame) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (frame >= frames[mid])
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* key_before's answer, tried first at the cursor's key and the next one
 * (the largest key at or before `frame` is k exactly when frames[k] <=
 * frame < frames[k + 1], or k is the last key). */
static size_t key_at(const double *frames, size_t n, double frame, sk_anim_cursor *cur) {
  if (cur == NULL)
    return key_before(frames, n, frame);
  for (size_t k = cur->key; cur->has_key && k < n && k <= cur->key + 1; k++)
    if (frames[k] <= frame && (k + 1 >= n || frames[k + 1] > frame)) {
      cur->key = k;
      return k;
    }
  cur->key = key_before(frames, n, frame);
  cur->has_key = true;
  return cur->key;
}

/* A Babylon-format TRS channel at `frame`: RuntimeAnimation.goToFrame's
 * clamp, then Animation._interpolate operation for operation (per-key STEP,
 * Hermite when the start key has an out-tangent and the end key an
 * in-tangent, both scaled by the frame interval; RELATIVE adds a zero
 * offset, which turns -0 into +0 as in Babylon). */
static void sample_babylon(const sk_anim_channel *ch, double frame, double *out, sk_anim_cursor *cur) {
  const int w = path_width(ch->path);
  const size_t n = ch->count, stride = 3 * (size_t)w;
  if (frame < ch->frames[0])
    frame = ch->frames[0];
  else if (frame > ch->frames[n - 1])
    frame = ch->frames[n - 1];
  size_t key = key_at(ch->frames, n, frame, cur);
  const double *sv = ch->values64 + key * stride;
  if (key + 1 > n - 1) {
    memcpy(out, sv, (size_t)w * sizeof *out);
    return;
  }
  const double *ev = sv + stride;
  uint8_t fs = ch->key_flags != NULL ? ch->key_flags[key] : 0, fe = ch->key_flags != NULL ? ch->key_flags[key + 1] : 0;
  if (fs & SK_ANIM_KEY_STEP) {
    memcpy(out, ch->frames[key + 1] > frame ? sv : ev, (size_t)w * sizeof *out);
    return;
  }
  double frame_delta = ch->frames[key + 1] - ch->frames[key];
  double gradient = (frame - ch->frames[key]) / frame_delta;
  if ((fs & SK_ANIM_KEY_OUT) && (fe & SK_ANIM_KEY_IN)) {
    double t1[4], t2[4];
    for (int i = 0; i < w; i++) {
      t1[i] = sv[2 * w + i] * frame_delta; /* start key's out-tangent */
      t2[i] = ev[w + i] * frame_delta;     /* end key's in-tangent */
    }
    sk_anim__hermite(sv, t1, ev, t2, gradient, w, out);
    if (w == 4)
      sk_anim__quat_normalize(out);
  } else if (w == 4 && cur != NULL) {
    if (!cur->has_prep || cur->prep_key != key) { /* sk_anim__quat_slerp in its two parts */
      sk_anim__slerp_prep(sv, ev, cur->prep);
      cur->prep_key = key;
      cur->has_prep = true;
    }
    sk_anim__slerp_finish(cur->prep, sv, ev, gradient, out);
  } else if (w == 4) {
    sk_anim__quat_slerp(sv, ev, gradient, out);
  } else {
    for (int i = 0; i < w; i++)
      out[i] = sv[i] + (ev[i] - sv[i]) * gradient;
  }
  if (ch->relative)
    for (int i = 0; i < w; i++)
      out[i] += 0.0;
}

/* A "_matrix" channel: Babylon returns the start key's matrix unchanged
 * (AllowMatricesInterpolation is false by default; STEP gives the same). */
static const float *sample_matrix(const sk_anim_channel *ch, double frame, sk_anim_cursor *cur) {
  const size_t n = ch->count;
  if (frame < ch->frames[0])
    frame = ch->frames[0];
  else if (frame > ch->frames[n - 1])
    frame = ch->frames[n - 1];
  return ch->values + key_at(ch->frames, n, frame, cur) * 16;
}

/* Whether a rotation channel's value at `frame` is a plain slerp (not
 * the last key, no STEP, no Hermite pair): then *key and *gradient are
 * sample_babylon's and cur->prep holds the key pair's constants. */
static bool babylon_slerp_at(const sk_anim_channel *ch, double frame, sk_anim_cursor *cur, size_t *key,
                             double *gradient) {
  const size_t n = ch->count;
  frame = frame < ch->frames[0] ? ch->frames[0] : frame > ch->frames[n - 1] ? ch->frames[n - 1] : frame;
  const size_t k = key_at(ch->frames, n, frame, cur);
  uint8_t fs = ch->key_flags != NULL && k + 1 < n ? ch->key_flags[k] : 0;
  uint8_t fe = ch->key_flags != NULL && k + 1 < n ? ch->key_flags[k + 1] : 0;
  if (k + 1 > n - 1 || (fs & SK_ANIM_KEY_STEP) || ((fs & SK_ANIM_KEY_OUT) && (fe & SK_ANIM_KEY_IN)))
    return false;
  const double *sv = ch->values64 + k * 12;
  if (!cur->has_prep || cur->prep_key != k) {
    sk_anim__slerp_prep(sv, sv + 12, cur->prep);
    cur->prep_key = k;
    cur->has_prep = true;
  }
  *key = k;
  *gradient = (frame - ch->frames[k]) / (ch->frames[k + 1] - ch->frames[k]);
  return true;
}

void sk_anim__sample_babylon_run(const sk_anim_channel *ch, const double *frames, size_t m, double *out,
                                 sk_anim_cursor *cur) {
  const size_t w = (size_t)path_width(ch->path);
  if (ch->path != SK_ANIM_ROTATION || m > SK_ANIM_RUN_MAX) {
    for (size_t i = 0; i < m; i++)
      sample_babylon(ch, frames[i], out + i * w, cur);
    return;
  }
  /* Three passes: the keys and the slerps' constants, every sine at once,
   * then the blends: the operations of sample_babylon's slerp branch. */
  double grad[SK_ANIM_RUN_MAX], prep[SK_ANIM_RUN_MAX][4], sines[2 * SK_ANIM_RUN_MAX] = {0};
  size_t key[SK_ANIM_RUN_MAX];
  bool slerp[SK_ANIM_RUN_MAX];
  for (size_t i = 0; i < m; i++) {
    slerp[i] = babylon_slerp_at(ch, frames[i], cur, &key[i], &grad[i]);
    if (!slerp[i]) {
      sample_babylon(ch, frames[i], out + 4 * i, cur);
      continue;
    }
    memcpy(prep[i], cur->prep, sizeof prep[i]);
    if (!(prep[i][0] > 0.999999))
      sk_anim__slerp_args(prep[i], grad[i], sines + 2 * i);
  }
  sk_vsin(sines, sines, 2 * m);
  for (size_t i = 0; i < m; i++) {
    if (!slerp[i])
      continue;
    const double *sv = ch->values64 + key[i] * 12;
    sk_anim__slerp_apply(prep[i], sv, sv + 12, grad[i], sines + 2 * i, out + 4 * i);
    if (ch->relative)
      for (size_t e = 0; e < 4; e++)
        out[4 * i + e] += 0.0;
  }
}

void sk_anim__slerp_n(const double *l, size_t ls, const double *q, size_t qs, double amount, double *r, size_t rs,
                      size_t n) {
  enum { CHUNK = SK_ANIM_RUN_MAX };
  double prep[4 * CHUNK], acos[CHUNK], sines[3 * CHUNK];
  for (size_t k0 = 0; k0 < n; k0 += CHUNK) {
    const size_t m = n - k0 < CHUNK ? n - k0 : CHUNK;
    for (size_t k = 0; k < m; k++) { /* sk_anim__slerp_prep's dot and flag */
      const double *a = l + (k0 + k) * ls, *b = q + (k0 + k) * qs;
      double num4 = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
      double flag = 0;
      if (num4 < 0) {
        flag = 1;
        num4 = -num4;
      }
      prep[4 * k] = num4;
      prep[4 * k + 1] = flag;
      acos[k] = num4;
    }
    sk_vsin_acos(acos, acos, m);
    for (size_t k = 0; k < m; k++) {
      const double num5 = prep[4 * k] > 0.999999 ? 0 : acos[k]; /* its p[2] */
      prep[4 * k + 2] = num5;
      sines[k] = num5;
      sines[m + k] = (1.0 - amount) * num5; /* sk_anim__slerp_args */
      sines[2 * m + k] = amount * num5;
    }
    sk_vsin(sines, sines, 3 * m);
    for (size_t k = 0; k < m; k++) {
      prep[4 * k + 3] = prep[4 * k] > 0.999999 ? 0 : 1.0 / sines[k];
      const double two[2] = {sines[m + k], sines[2 * m + k]};
      sk_anim__slerp_apply(prep + 4 * k, l + (k0 + k) * ls, q + (k0 + k) * qs, amount, two, r + (k0 + k) * rs);
    }
  }
}

void sk_anim__sample_babylon(const sk_anim_channel *ch, double frame, double *out) {
  sample_babylon(ch, frame, out, NULL);
}
const float *sk_anim__sample_matrix(const sk_anim_channel *ch, double frame) { return sample_matrix(ch, frame, NULL); }
const float *sk_anim__sample_matrix_at(const sk_anim_channel *ch, double frame, sk_anim_cursor *cur) {
  return sample_matrix(ch, frame, cur);
}

double sk_anim__clip_frame(const sk_anim_clip *clip, double time, bool loop) {
  if (clip->fps > 0) {
    /* A Babylon range: frames from_frame..to_frame at the clip's fps. */
    double span = clip->to_frame - clip->from_frame, rel = time * clip->fps;
    if (loop && span > 0 && isfinite(rel)) {
      rel = sk_fdlibm_fmod(rel, span);
      if (rel < 0)
        rel += span;
    }
    double f = clip->from_frame + rel;
    if (!(f >= clip->from_frame))
      f = clip->from_frame;
    else if (f > clip->to_frame)
      f = clip->to_frame;
    return f;
  }
  double frame = time * SK_ANIM_FPS;
  if (loop && clip->end_frame > 0 && isfinite(frame)) {
    frame = sk_fdlibm_fmod(frame, clip->end_frame);
    if (frame < 0)
      frame += clip->end_frame;
  }
  return frame;
}

double sk_anim__speed_frame(double fps, double from, double to, double time, bool loop, double speed) {
  const double range = to - from;
  /* the operations of RuntimeAnimation.animate, in its order */
  const double elapsed = time * 1000;
  const double abs = (elapsed * (fps * speed)) / 1000;
  if (!loop && abs >= range)
    return to; /* not looping: the animation ended there */
  if (!isfinite(abs))
    return from;
  if (abs < 0 && from < to)
    return range != 0 ? to + sk_fdlibm_fmod(abs, range) : from;
  return range != 0 ? from + sk_fdlibm_fmod(abs, range) : to;
}

double sk_anim__layer_frame(const sk_anim_clip *clip, double time, bool loop, double speed) {
  if (speed == 0)
    return sk_anim__clip_frame(clip, time, loop);
  if (clip->fps > 0)
    return sk_anim__speed_frame(clip->fps, clip->from_frame, clip->to_frame, time, loop, speed);
  return sk_anim__speed_frame(SK_ANIM_FPS, 0, clip->end_frame, time, loop, speed);
}

static void sample_clip_r(const sk_anim *a, size_t clip, double time, bool loop, double speed, double *trs,
                          sk_anim_cursor *cur) {
  const sk_anim_clip *c = &a->clips[clip];
  memcpy(trs, a->rest, a->bone_count * SK_ANIM_TRS * sizeof *trs);
  double frame = sk_anim__layer_frame(c, time, loop, speed);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    static const int offset[3] = {0, 3, 7};
    if (ch->path == SK_ANIM_MATRIX)
      continue; /* see sk_anim_sample_overrides */
    double *dst = trs + (size_t)ch->bone * SK_ANIM_TRS + offset[ch->path];
    if (ch->values64 != NULL)
      sample_babylon(ch, frame, dst, cur != NULL ? &cur[k] : NULL);
    else
      sample_channel(ch, frame, dst);
  }
}

static void sample_clip(const sk_anim *a, size_t clip, double time, bool loop, double *trs, sk_anim_cursor *cur) {
  sample_clip_r(a, clip, time, loop, 0, trs, cur);
}

/* A layer's clip at its time and speed ratio (`x`, NULL: none). */
static void sample_layer(const sk_anim *a, const sk_anim_layer *l, const sk_anim_layer_ext *x, double *trs) {
  sample_clip_r(a, l->clip, l->time, l->loop, x != NULL ? x->speed : 0, trs, NULL);
}

void sk_anim_sample(const sk_anim *a, size_t clip, double time, bool loop, double *trs) {
  sample_clip(a, clip, time, loop, trs, NULL);
}

void sk_anim__sample_layer_at(const sk_anim *a, const sk_anim_layer *l, double speed, double time, double *trs,
                              sk_anim_cursor *cur) {
  sample_clip_r(a, l->clip, time, l->loop, speed, trs, cur);
}

void sk_anim_sample_at(const sk_anim *a, size_t clip, double time, bool loop, double *trs, sk_anim_cursor *cur) {
  sample_clip(a, clip, time, loop, trs, cur);
}

size_t sk_anim_sample_overrides(const sk_anim *a, size_t clip, double time, bool loop, double *trs, sk_override *out) {
  return sk_anim_sample_overrides_at(a, clip, time, loop, trs, out, NULL);
}

size_t sk_anim_sample_overrides_at(const sk_anim *a, size_t clip, double time, bool loop, double *trs,
                                   sk_override *out, sk_anim_cursor *cur) {
  const sk_anim_clip *c = &a->clips[clip];
  sample_clip(a, clip, time, loop, trs, cur);
  double frame = sk_anim__clip_frame(c, time, loop);
  for (size_t b = 0; b < a->bone_count; b++) {
    memset(&out[b], 0, sizeof out[b]);
    out[b].bone = (int32_t)b;
  }
  static const unsigned bit[3] = {SK_OVERRIDE_POSITION, SK_OVERRIDE_ROTATION, SK_OVERRIDE_SCALING};
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    sk_override *o = &out[ch->bone];
    if (ch->path == SK_ANIM_MATRIX) {
      memcpy(o->matrix, sample_matrix(ch, frame, cur != NULL ? &cur[k] : NULL), sizeof o->matrix);
      o->mask |= SK_OVERRIDE_MATRIX;
    } else {
      o->mask |= bit[ch->path];
    }
  }
  size_t n = 0;
  for (size_t b = 0; b < a->bone_count; b++) {
    if (out[b].mask == 0)
      continue;
    const double *t = trs + b * SK_ANIM_TRS;
    memcpy(out[b].position, t, 3 * sizeof *t);
    memcpy(out[b].rotation, t + 3, 4 * sizeof *t);
    memcpy(out[b].scaling, t + 7, 3 * sizeof *t);
    n++;
  }
  return n;
}

/* AnimationMakeAnimationAdditive on one channel: its key values (as
 * doubles, ch->values' layout) made relative to the value at `ref_frame`.
 * Keys that AnimationGroup.normalize padded share their neighbour's value
 * object: the start pad's is changed once (the loop skips keys sharing the
 * first key's value), the end pad's twice (once per key). *out is new. */
static int additive_values(const sk_anim_channel *ch, double ref_frame, double **out) {
  const int w = path_width(ch->path);
  const size_t n = ch->count, stride = ch->interp == SK_ANIM_CUBICSPLINE ? 3 * (size_t)w : (size_t)w;
  const size_t vo = ch->interp == SK_ANIM_CUBICSPLINE ? (size_t)w : 0;
  double *v = malloc(n * stride * sizeof *v);
  size_t *id = malloc(n * sizeof *id);
  if (v == NULL || id == NULL) {
    free(v);
    free(id);
    return SK_ENOMEM;
  }
  for (size_t i = 0; i < n * stride; i++)
    v[i] = ch->values[i];
  double ref[4];
  if (n == 1 || ref_frame <= ch->frames[0])
    memcpy(ref, v + vo, (size_t)w * sizeof *ref);
  else if (ref_frame >= ch->frames[n - 1])
    memcpy(ref, v + (n - 1) * stride + vo, (size_t)w * sizeof *ref);
  else
    sample_channel(ch, ref_frame, ref);
  if (w == 4) {
    sk_anim__quat_normalize(ref);
    ref[0] = -ref[0], ref[1] = -ref[1], ref[2] = -ref[2];
  }
  for (size_t k = 0; k < n; k++)
    id[k] = k;
  if ((ch->pads & SK_ANIM_PAD_START) && n > 1)
    id[1] = id[0];
  if ((ch->pads & SK_ANIM_PAD_END) && n > 1)
    id[n - 1] = id[n - 2];
  for (size_t k = 0; k < n; k++) {
    if (k > 0 && id[k] == id[0])
      continue;
    double *x = v + id[k] * stride + vo;
    if (w == 4)
      sk_anim__quat_mul(ref, x, x);
    else
      for (int i = 0; i < w; i++)
        x[i] = x[i] - ref[i];
  }
  for (size_t k = 0; k < n; k++)
    if (id[k] != k)
      memcpy(v + k * stride + vo, v + id[k] * stride + vo, (size_t)w * sizeof *v);
  free(id);
  *out = v;
  return 0;
}

int sk_anim__additive_values(const sk_anim_channel *ch, double ref_frame, double **out) {
  return additive_values(ch, ref_frame, out);
}

/* The keys additive layers play made additive once (sk_anim_additive_share):
 * dv[first[clip] + k] for channel k of a clip, NULL where it has none. */
struct sk_anim_additive {
  size_t bytes, n; /* n: entries of dv */
  size_t *first;
  double **dv;
};

static bool additive_channel(const sk_anim_channel *ch) { return ch->path != SK_ANIM_MATRIX && ch->values != NULL; }

static size_t additive_bytes(const sk_anim_channel *ch) {
  return ch->count * (size_t)path_width(ch->path) * (ch->interp == SK_ANIM_CUBICSPLINE ? 3 : 1) * sizeof(double);
}

static void additive_free(struct sk_anim_additive *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; t->dv != NULL && i < t->n; i++)
    free(t->dv[i]);
  free(t->dv);
  free(t->first);
  free(t);
}

int sk_anim_additive_share(sk_anim *a, const sk_skeleton *s, size_t max_bytes) {
  if (a != NULL && a->babylon)
    return sk_banim_add__share(a, s, max_bytes);
  if (a == NULL || a->clip_count == 0 || __atomic_load_n(&a->additive, __ATOMIC_ACQUIRE) != NULL)
    return 0;
  size_t n = 0, bytes = 0;
  for (size_t c = 0; c < a->clip_count; c++)
    for (size_t k = 0; k < a->clips[c].channel_count; k++, n++)
      bytes += additive_channel(&a->clips[c].channels[k]) ? additive_bytes(&a->clips[c].channels[k]) : 0;
  bytes += sizeof(struct sk_anim_additive) + a->clip_count * sizeof(size_t) + n * sizeof(double *);
  if (bytes > max_bytes)
    return SK_ETOOBIG;
  struct sk_anim_additive *t = calloc(1, sizeof *t);
  if (t == NULL || (t->first = malloc(a->clip_count * sizeof *t->first)) == NULL ||
      (t->dv = calloc(n ? n : 1, sizeof *t->dv)) == NULL) {
    additive_free(t);
    return SK_ENOMEM;
  }
  t->bytes = bytes;
  t->n = n;
  for (size_t c = 0, i = 0; c < a->clip_count; c++) {
    t->first[c] = i;
    for (size_t k = 0; k < a->clips[c].channel_count; k++, i++) {
      const sk_anim_channel *ch = &a->clips[c].channels[k];
      if (additive_channel(ch) && additive_values(ch, 0, &t->dv[i]) != 0) {
        additive_free(t);
        return SK_ENOMEM;
      }
    }
  }
  struct sk_anim_additive *none = NULL;
  if (!__atomic_compare_exchange_n(&a->additive, &none, t, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    additive_free(t); /* another thread published first */
  return 0;
}

size_t sk_anim_additive_memory(const sk_anim *a) {
  if (a == NULL)
    return 0;
  const struct sk_anim_additive *t = __atomic_load_n(&a->additive, __ATOMIC_ACQUIRE);
  const sk_banim_add_kept *k = __atomic_load_n(&a->babylon_additive, __ATOMIC_ACQUIRE);
  return (t != NULL ? t->bytes : 0) + (k != NULL ? k->bytes : 0);
}

const double *sk_anim__additive_ref0(const sk_anim *a, size_t clip, size_t k) {
  const struct sk_anim_additive *t = __atomic_load_n(&a->additive, __ATOMIC_ACQUIRE);
  return t != NULL ? t->dv[t->first[clip] + k] : NULL;
}

void sk_anim__sample_values(const sk_anim_channel *ch, const double *dv, double frame, double *out) {
  sample_channel_v(ch, dv, frame, out);
}

void sk_anim__sample_values_run(const sk_anim_channel *ch, const double *dv, const double *frames, size_t m,
                                double *out, sk_anim_cursor *cur) {
  const size_t w = (size_t)path_width(ch->path), n = ch->count;
  if (ch->path != SK_ANIM_ROTATION || ch->interp != SK_ANIM_LINEAR || dv == NULL || m > SK_ANIM_RUN_MAX) {
    for (size_t i = 0; i < m; i++)
      sample_channel_v(ch, dv, frames[i], out + i * w);
    return;
  }
  /* sample_channel_v's LINEAR rotation in three passes, as
   * sk_anim__sample_babylon_run: the keys (the cursor's) and the slerps'
   * constants (once per key pair), every sine at once, then the blends */
  double grad[SK_ANIM_RUN_MAX], prep[SK_ANIM_RUN_MAX][4], sines[2 * SK_ANIM_RUN_MAX] = {0};
  size_t key[SK_ANIM_RUN_MAX];
  for (size_t i = 0; i < m; i++) {
    double frame = frames[i];
    if (frame < ch->frames[0])
      frame = ch->frames[0];
    else if (frame > ch->frames[n - 1])
      frame = ch->frames[n - 1];
    const size_t k = key[i] = key_at(ch->frames, n, frame, cur);
    if (k + 1 > n - 1)
      continue;
    if (!cur->has_prep || cur->prep_key != k) {
      sk_anim__slerp_prep(dv + k * 4, dv + k * 4 + 4, cur->prep);
      cur->prep_key = k;
      cur->has_prep = true;
    }
    memcpy(prep[i], cur->prep, sizeof prep[i]);
    grad[i] = (frame - ch->frames[k]) / (ch->frames[k + 1] - ch->frames[k]);
    if (!(prep[i][0] > 0.999999))
      sk_anim__slerp_args(prep[i], grad[i], sines + 2 * i);
  }
  sk_vsin(sines, sines, 2 * m);
  for (size_t i = 0; i < m; i++) {
    const double *sv = dv + key[i] * 4;
    if (key[i] + 1 > n - 1)
      memcpy(out + 4 * i, sv, 4 * sizeof *out);
    else
      sk_anim__slerp_apply(prep[i], sv, sv + 4, grad[i], sines + 2 * i, out + 4 * i);
  }
}

void sk_anim__apply_bone_weights(const sk_anim *a, const float *bw, double *trs, size_t m) {
  const size_t fs = a->bone_count * SK_ANIM_TRS;
  for (size_t b = 0; b < a->bone_count; b++) {
    const double f = bw[b];
    if (f == 1)
      continue;
    const double *r = a->rest + b * SK_ANIM_TRS;
    for (size_t k = 0; k < m; k++) {
      double *t = trs + k * fs + b * SK_ANIM_TRS;
      if (f == 0) {
        memcpy(t, r, SK_ANIM_TRS * sizeof *t);
        continue;
      }
      for (int j = 0; j < 3; j++) {
        t[j] = r[j] + (t[j] - r[j]) * f;
        t[7 + j] = r[7 + j] + (t[7 + j] - r[7 + j]) * f;
      }
    }
    if (f != 0) /* sk_anim__quat_slerp's bits, the frames' slerps at once */
      sk_anim__slerp_n(r + 3, 0, trs + b * SK_ANIM_TRS + 3, fs, f, trs + b * SK_ANIM_TRS + 3, fs, m);
  }
}

/* Adds one additive layer onto `trs` (see sk_anim_sample_layers). */
static int add_layer(const sk_anim *a, const sk_anim_layer *l, const sk_anim_layer_ext *x, double *trs) {
  const sk_anim_clip *c = &a->clips[l->clip];
  double frame = sk_anim__layer_frame(c, l->time, l->loop, x->speed);
  const double ref = sk_anim__reference_frame(x);
  /* reference 0: the keys made once, at upload; others at first use */
  const double *const *kept = ref == 0 ? NULL : sk_anim_memo_gltf(a, l->clip, ref);
  for (size_t k = 0; k < c->channel_count; k++) {
    const sk_anim_channel *ch = &c->channels[k];
    if (ch->path == SK_ANIM_MATRIX || ch->values == NULL)
      continue; /* glTF channels only */
    double wt = sk_anim__additive_weight(l, x, ch->bone);
    if (wt == 0)
      continue;
    const double *dv = ref == 0 ? sk_anim__additive_ref0(a, l->clip, k) : kept != NULL ? kept[k] : NULL;
    double *own = NULL, d[4];
    if (dv == NULL && additive_values(ch, ref, &own))
      return SK_ENOMEM;
    sample_channel_v(ch, dv != NULL ? dv : own, frame, d);
    free(own);
    double *t = trs + (size_t)ch->bone * SK_ANIM_TRS;
    if (ch->path == SK_ANIM_ROTATION) {
      double q[4];
      sk_anim__quat_mul(t + 3, d, q);
      sk_anim__quat_slerp(t + 3, q, wt, t + 3);
    } else {
      double *v = t + (ch->path == SK_ANIM_TRANSLATION ? 0 : 7);
      for (int j = 0; j < 3; j++)
        v[j] += d[j] * wt;
    }
  }
  return 0;
}

void sk_anim__scale_vectors(double *trs, size_t n, double w) {
  for (size_t b = 0; b < n; b++) {
    double *t = trs + b * SK_ANIM_TRS;
    for (int j = 0; j < 3; j++) {
      t[j] *= w;
      t[7 + j] *= w;
    }
  }
}

void sk_anim__add_vectors(double *trs, const double *s, size_t n, double w) {
  for (size_t b = 0; b < n; b++) {
    double *t = trs + b * SK_ANIM_TRS;
    const double *v = s + b * SK_ANIM_TRS;
    for (int j = 0; j < 3; j++) {
      t[j] += v[j] * w;
      t[7 + j] += v[7 + j] * w;
    }
  }
}

/* The nw >= 2 weighted layers of sk_anim_sample_layers_ext, each sampled
 * whole, then late_blend. */
static int late_layers(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count,
                       double total, size_t nw, double *trs) {
  const size_t nb = a->bone_count, fs = nb * SK_ANIM_TRS;
  double *buf = malloc((fs ? fs : 1) * nw * sizeof *buf), *w = malloc(nw * 2 * sizeof *w);
  const double **src = malloc(nw * 2 * sizeof *src);
  uint8_t *drives = malloc((nb ? nb : 1) * nw);
  int rc = buf == NULL || w == NULL || src == NULL || drives == NULL ? SK_ENOMEM : 0;
  size_t k = 0;
  for (size_t i = 0; !rc && i < count; i++) {
    const float *mask = ext != NULL ? ext[i].bone_weights : NULL;
    if ((ext != NULL && ext[i].additive) || layers[i].weight / total == 0)
      continue;
    double *dst = buf + k * fs;
    sample_layer(a, &layers[i], ext != NULL ? &ext[i] : NULL, dst);
    if (mask != NULL)
      sk_anim__apply_bone_weights(a, mask, dst, 1);
    sk_anim__layer_drives(a, &layers[i], mask, drives + k * nb);
    src[k] = dst;
    w[k++] = sk_anim__late_weight(layers[i].weight, total);
  }
  if (!rc)
    sk_anim__late_blend(a, src, w, drives, nw, src + nw, w + nw, trs);
  free(buf), free(w), free(src), free(drives);
  return rc;
}

int sk_anim_sample_layers(const sk_anim *a, const sk_anim_layer *layers, size_t count, double *trs, double *scratch) {
  return sk_anim_sample_layers_ext(a, layers, NULL, count, trs, scratch);
}

int sk_anim_sample_layers_ext(const sk_anim *a, const sk_anim_layer *layers, const sk_anim_layer_ext *ext, size_t count,
                              double *trs, double *scratch) {
  static const sk_anim_layer_ext plain = {0};
#define EXT(i) (ext != NULL ? &ext[i] : &plain)
  double total = 0, all = 0;
  for (size_t i = 0; i < count; i++) {
    if (!(layers[i].weight >= 0) || !isfinite(layers[i].weight) || layers[i].clip >= a->clip_count)
      return SK_ERANGE;
    all += layers[i].weight;
    if (!EXT(i)->additive)
      total += layers[i].weight;
  }
  if (!(all > 0) || !isfinite(all))
    return SK_ERANGE;
  const size_t n = a->bone_count;
  size_t nw = 0;
  for (size_t i = 0; total != 0 && i < count; i++)
    nw += !EXT(i)->additive && layers[i].weight / total != 0;
  if (nw >= 2) { /* Babylon's late bindings, target by target */
    int rc = late_layers(a, layers, ext, count, total, nw, trs);
    if (rc)
      return rc;
  }
  /* One weighted layer: it plays as it is (a group alone, unweighted).
   * Cumulative weight of the layers blended so far; zero-weight layers are
   * skipped so they never divide by zero. */
  double cum = 0;
  bool first = true;
  for (size_t i = 0; nw < 2 && i < count; i++) {
    if (EXT(i)->additive)
      continue;
    double w = layers[i].weight / total;
    if (total == 0 || w == 0) /* weighted layers of weight 0 alone: none (0 / 0 is not a weight) */
      continue;
    double *dst = first ? trs : scratch;
    sample_layer(a, &layers[i], EXT(i), dst);
    if (EXT(i)->bone_weights != NULL)
      sk_anim__apply_bone_weights(a, EXT(i)->bone_weights, dst, 1);
    if (first) {
      sk_anim__scale_vectors(trs, n, w);
      cum = w;
      first = false;
      continue;
    }
    cum += w;
    double amount = w / cum;
    sk_anim__add_vectors(trs, scratch, n, w);
    for (size_t b = 0; b < n; b++)
      sk_anim__quat_slerp(trs + b * SK_ANIM_TRS + 3, scratch + b * SK_ANIM_TRS + 3, amount, trs + b * SK_ANIM_TRS + 3);
  }
  if (first && nw < 2) /* additive layers only: on top of the rest pose */
    memcpy(trs, a->rest, n * SK_ANIM_TRS * sizeof *trs);
  for (size_t i = 0; i < count; i++)
    if (EXT(i)->additive && layers[i].weight > 0 && add_layer(a, &layers[i], EXT(i), trs))
      return SK_ENOMEM;
  return 0;
#undef EXT
}

void sk_anim_to_overrides(const sk_anim *a, const double *trs, sk_override *out) {
  for (size_t b = 0; b < a->bone_count; b++) {
    const double *t = trs + b * SK_ANIM_TRS;
    sk_override *o = &out[b];
    memset(o, 0, sizeof *o);
    o->bone = (int32_t)b;
    o->mask = SK_OVERRIDE_POSITION | SK_OVERRIDE_ROTATION | SK_OVERRIDE_SCALING;
    memcpy(o->position, t, 3 * sizeof *t);
    memcpy(o->rotation, t + 3, 4 * sizeof *t);
    memcpy(o->scaling, t + 7, 3 * sizeof *t);
  }
}
