#include "sk_cost.h"

#include <stdio.h>
#include <string.h>

#include "sk_json.h"
#include "sk_numfmt.h"
#include "sk_pose_frames.h"
#include "sk_rootframes.h"
#include "sk_eventframes.h"

void sk_cost_limits_fill(sk_cost_limits *l) {
  if (l->max_frames == 0)
    l->max_frames = SK_COST_MAX_FRAMES;
  if (l->max_layers == 0)
    l->max_layers = SK_COST_MAX_LAYERS;
  if (l->max_poses == 0)
    l->max_poses = 1024;
  if (l->max_work == 0)
    l->max_work = SK_COST_MAX_WORK;
  if (l->max_answer == 0)
    l->max_answer = SK_COST_MAX_ANSWER;
  if (l->loop_work == 0)
    l->loop_work = SK_COST_LOOP_WORK;
}

/* a + b, saturating: counts come from hostile input. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* Saturating too: both parts may already be saturated, and a wrapped sum
 * would pass --max-work (found by tests/fuzz/fuzz_cost.c). */
uint64_t sk_cost_work(const sk_cost *c) { return sat_add(c->sample, c->eval); }

int sk_cost_inline(const sk_cost *c, const sk_cost_limits *l) { return c->sample <= l->loop_work; }

static uint64_t sat_mul(uint64_t a, uint64_t b) { return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b; }

static void join(char *dest, const char *ptr, const char *key) {
  snprintf(dest, SK_ERROR_POINTER_MAX, "%s", ptr);
  if (key != NULL)
    sk_pointer_push(dest, SK_ERROR_POINTER_MAX, key);
}

/* Bytes of one pose's answer. */
static uint64_t answer_bytes(size_t bones, unsigned outputs, int fmt) {
  uint64_t mats = (uint64_t)bones + 1;
  if (fmt == SK_FMT_F32)
    return mats * 16 * sizeof(float);
  if (fmt == SK_FMT_MAT3X4)
    return mats * 12 * sizeof(float);
  /* {"final":[..],"absolute":[..],"local":[..]} and the comma between poses */
  uint64_t floats = 16 * sk_answer_core_matrices(outputs, bones);
  return floats * (SK_NUMFMT_F32_MAX + 1) + 40;
}

static uint64_t json_matrices(size_t bones, unsigned outputs, int fmt) {
  if (fmt != SK_FMT_JSON)
    return 0;
  return sk_answer_core_matrices(outputs, bones);
}

/* The limits every addition checks; `ptr` names the pose that crossed one. */
static int check_totals(const sk_cost *c, const sk_cost_limits *l, const char *ptr, sk_error *err) {
  if (c->poses > l->max_poses)
    return sk_error_set(err, SK_ETOOBIG, ptr, "the request expands to %llu poses; the limit is %llu (--max-batch)",
                        (unsigned long long)c->poses, (unsigned long long)l->max_poses);
  if (sk_cost_work(c) > l->max_work)
    return sk_error_set(err, SK_ETOOBIG, ptr, "the request needs about %llu work units; the limit is %llu (--max-work)",
                        (unsigned long long)sk_cost_work(c), (unsigned long long)l->max_work);
  if (c->answer > l->max_answer)
    return sk_error_set(err, SK_ETOOBIG, ptr, "the answer would take up to %llu bytes; the limit is %llu (--max-answer-mb)",
                        (unsigned long long)c->answer, (unsigned long long)l->max_answer);
  return 0;
}

int sk_cost_add_poses(sk_cost *c, const sk_cost_limits *l, const sk_skeleton *s, uint64_t n, unsigned outputs, int fmt,
                      const char *ptr, sk_error *err) {
  if (fmt != SK_FMT_JSON)
    outputs = SK_OUT_FINAL;
  uint64_t per = (uint64_t)s->count + 1 + SK_COST_JSON_MATRIX * json_matrices(s->count, outputs, fmt);
  c->poses = sat_add(c->poses, n);
  c->eval = sat_add(c->eval, sat_mul(n, per));
  c->answer = sat_add(c->answer, sat_mul(n, answer_bytes(s->count, outputs, fmt)));
  return check_totals(c, l, ptr, err);
}

/* The clip named by `v` (name or index) into *k; false when it does not
 * resolve (the parser refuses it: it counts nothing). */
static bool clip_of(const sk_anim *anim, const json_t *v, size_t *k) {
  if (anim == NULL || v == NULL)
    return false;
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    *k = (size_t)i;
    return i >= 0 && (size_t)i < anim->clip_count;
  }
  return json_is_string(v) && sk_anim_find_clip(anim, json_string_value(v), k) == 0;
}

/* Channels a clip named by `v` drives. */
static uint64_t clip_channels(const sk_anim *anim, const json_t *v) {
  size_t k;
  return clip_of(anim, v, &k) ? anim->clips[k].channel_count : 0;
}

/* Keys additive layer `li` makes relative to its reference in this pose
 * (Babylon clips; glTF clips make them per frame, counted once here as
 * before): its clip's keys, but none where the clips keep them already or
 * where an earlier pose of this request leaves them kept, and those once,
 * at the first pose, where the first use will keep them. */
static uint64_t additive_keys(sk_cost *c, const sk_anim *anim, const json_t *li) {
  size_t k;
  if (!clip_of(anim, json_object_get(li, "animation"), &k))
    return 0;
  const json_t *rv = json_object_get(li, "reference");
  const double reference = json_is_number(rv) ? json_number_value(rv) : 0;
  for (size_t i = 0; i < c->memo_n; i++)
    if (c->memo[i].clip == k && c->memo[i].reference == reference)
      return 0;
  const sk_anim_keys_source src =
      c->memo_n < SK_ANIM_MEMO_SLOTS ? sk_anim_memo_source(anim, k, reference, &c->memo_room) : SK_ANIM_KEYS_MADE;
  if (src == SK_ANIM_KEYS_KEPT)
    return 0;
  if (src == SK_ANIM_KEYS_ROOM) {
    c->memo[c->memo_n].clip = k;
    c->memo[c->memo_n].reference = reference;
    c->memo_n++;
  }
  uint64_t n = 0;
  for (size_t ch = 0; ch < anim->clips[k].channel_count; ch++)
    n += anim->clips[k].channels[ch].count;
  return n;
}

int sk_cost_add_pose_json(sk_cost *c, const sk_cost_limits *l, const sk_skeleton *s, const sk_anim *anim,
                          const json_t *j, const char *ptr, int fmt, sk_error *err) {
  char p[SK_ERROR_POINTER_MAX];
  unsigned outputs = SK_OUT_FINAL;
  if (!json_is_object(j))
    return sk_cost_add_poses(c, l, s, 1, outputs, fmt, ptr, err);
  if (sk_json_parse_output(json_object_get(j, "output"), ptr, &outputs, NULL) != 0 || outputs == 0)
    outputs = SK_OUT_FINAL;
  const json_t *a = json_object_get(j, "animation"), *layers = json_object_get(j, "layers");
  if (a == NULL && layers == NULL) /* no clip: the parser refuses any frame key */
    return sk_cost_add_poses(c, l, s, 1, outputs, fmt, ptr, err);
  uint64_t nl = 1, per_frame = 0;
  const uint64_t bones = s->count;
  /* A layered pose takes "times" or a range as a single clip does (the
   * parser's anim_frames for both): counted before anything else. */
  const char *key;
  const uint64_t frames = sk_pose_frames_count(j, &key);
  if (frames > l->max_frames) {
    join(p, ptr, key);
    return sk_error_set(err, SK_ETOOBIG, p, "%llu frames; the limit is %llu (--max-frames)",
                        (unsigned long long)frames, (unsigned long long)l->max_frames);
  }
  if (layers != NULL) {
    nl = json_is_array(layers) ? json_array_size(layers) : 0;
    if (nl > l->max_layers) {
      join(p, ptr, "layers");
      return sk_error_set(err, SK_ETOOBIG, p, "%llu layers; the limit is %llu (--max-layers)", (unsigned long long)nl,
                          (unsigned long long)l->max_layers);
    }
    for (size_t i = 0; i < nl; i++) {
      const json_t *li = json_array_get(layers, i);
      per_frame += clip_channels(anim, json_object_get(li, "animation")) + bones;
      if (json_is_true(json_object_get(li, "additive"))) /* its keys made additive */
        c->sample = sat_add(c->sample, additive_keys(c, anim, li));
    }
  } else {
    per_frame = clip_channels(anim, a) + bones;
  }
  c->sample = sat_add(c->sample, sat_mul(frames, per_frame));
  /* "rootMotion": the clip's analysis, made before the frames (sampling: a big one goes to the pool) */
  c->sample = sat_add(c->sample, sk_rootframes_cost(s, anim, j));
  /* "events": the playback's steps, those before a chunk of "frames" too */
  c->sample = sat_add(c->sample, sk_eventframes_cost(anim, j));
  return sk_cost_add_poses(c, l, s, frames, outputs, fmt, ptr, err);
}
